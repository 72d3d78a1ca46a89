"""Independent Python reader of DTI's record format, used as a test oracle.

It follows kmod/include/uapi/linux/dti_record.h and is kept deliberately
separate from runtime/libdti so that each checks the other.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass

MAGIC = 0xD71A
VERSION = 2                                # sub-buffers of compact records
VERSION_1 = 1                              # whole headers everywhere
ALIGN = 8
CREC_ALIGN = 4
REC_TEXT = 0x01
REC_TRUNCATED = 0x02
REC_RESERVED = 0x04
REC_REPLAYED = 0x08
REC_FORMAT = 0x20
REC_SUBBUF = 0x80
# dti_subbuf_info.state
SUBBUF_OPEN, SUBBUF_CLOSED, SUBBUF_CONTINUED = 0, 1, 2

HDR = struct.Struct("<HBBbBHIIQQQ")        # struct dti_record, 40 bytes
SUBBUF_V1 = struct.Struct("<IIIIII32s")    # struct dti_subbuf_info of version 1
SUBBUF = struct.Struct("<IIIIII32sQQQ")    # ... of version 2: seq_base, ts_base, caller_prev
CREC = struct.Struct("<HBBi")              # struct dti_crec, 8 bytes
assert HDR.size == 40 and SUBBUF_V1.size == 56 and SUBBUF.size == 80 and CREC.size == 8
# dti_crec.info
CREC_LEVEL, CREC_TS64, CREC_SKIP = 0x07, 0x08, 0x10
CREC_CALLER32, CREC_CALLER64, CREC_LEN32 = 0x20, 0x40, 0x80
CREC_CALLER = CREC_CALLER32 | CREC_CALLER64    # both: the caller of the record before
# Longest compact header: struct dti_crec and every extension
CREC_HDR_MAX = CREC.size + 4 + 8 + 8 + 8 + 4


def json_record(line: str) -> dict:
    """One record of `dti ... -F json`.  Its 64-bit numbers (ts_ns, seq
    and the 64-bit fields of typed events) are JSON strings there, exact
    in jq and JavaScript; ts_ns and seq are Python ints here."""
    obj = json.loads(line)
    for key in ("ts_ns", "seq"):
        if isinstance(obj.get(key), str):
            obj[key] = int(obj[key])
    return obj


def record_size(payload_len: int) -> int:
    """Bytes of a whole-header (version 1) record: a sub-buffer header's,
    a pending store's, or one of a records-alone stream."""
    return (HDR.size + payload_len + ALIGN - 1) & ~(ALIGN - 1)


# A sub-buffer's header record (version 2)
SUBBUF_HEADER_SIZE = record_size(SUBBUF.size)


def crec_size(payload_len: int, *, caller: bool = True) -> int:
    """Bytes of a compact record with the plain header: the number after
    the record before's, a time within 2 s of it, and a 32-bit caller
    (none with caller=False: the caller of the record before)."""
    return (CREC.size + 4 * caller + payload_len + CREC_ALIGN - 1) & ~(CREC_ALIGN - 1)


@dataclass
class Record:
    flags: int
    level: int
    cpu: int            # buffer holding the record; seq counts per it
    log_cpu: int        # CPU that logged it (differs for replayed records)
    seq: int
    ts_ns: int
    caller: int
    payload: bytes

    @property
    def is_text(self) -> bool:
        return bool(self.flags & REC_TEXT)

    @property
    def text(self) -> str:
        return self.payload.decode(errors="replace")


class FormatError(ValueError):
    pass


def crec_layout(payload_lens: list[int], subbuf_size: int) -> list[list[int]]:
    """Where records of one call site and these payload lengths land in
    a fresh channel CPU's ring of `subbuf_size`-byte sub-buffers: per
    sub-buffer (by number), the offset of each record in it.  The CPU's
    first record carries its caller; the rest, the same, none."""
    subs: list[list[int]] = [[]]
    used = SUBBUF_HEADER_SIZE
    for i, n in enumerate(payload_lens):
        size = crec_size(n, caller=i == 0)
        if used + size > subbuf_size:
            subs.append([])
            used = SUBBUF_HEADER_SIZE
        subs[-1].append(used)
        used += size
    return subs


def is_subbuf_header(data: bytes, pos: int) -> bool:
    """Whether a sub-buffer header starts at `pos` (where a compact
    record could: its flags are a compact record's info with LEN32)."""
    return len(data) - pos >= HDR.size and \
        struct.unpack_from("<H", data, pos)[0] == MAGIC and bool(data[pos + 3] & REC_SUBBUF)


def _compact(data: bytes, pos: int, end: int, count: int | None, hdr: tuple, info: tuple,
             name: str) -> tuple[list[Record], int]:
    """The `count` compact records of a version-2 sub-buffer from `pos`
    (all up to `end` for None)."""
    recs = []
    cpu, caller_base = hdr[5], hdr[10]
    seq, ts, caller = info[7], info[8], info[9]
    while pos < end if count is None else count > 0:
        if is_subbuf_header(data, pos):
            break               # the next read() began with a continuation
        if count is not None:
            count -= 1
        if end - pos < CREC.size:
            raise FormatError(f"{name}: truncated compact header at offset {pos}")
        length, flags, cinfo, delta = CREC.unpack_from(data, pos)
        if not (length or flags or cinfo or delta):
            raise FormatError(f"{name}: zero bytes where a compact record belongs at {pos}")
        x = pos + CREC.size

        def take(fmt: str) -> int:
            nonlocal x
            v = struct.unpack_from(fmt, data, x)[0]
            x += struct.calcsize(fmt)
            return v
        if cinfo & CREC_LEN32:
            length = take("<I")
        rts = take("<Q") if cinfo & CREC_TS64 else ts + delta
        skip = take("<Q") if cinfo & CREC_SKIP else 0
        kind = cinfo & CREC_CALLER
        rcaller = (caller_base + take("<i")) & (2**64 - 1) if kind == CREC_CALLER32 else \
            take("<Q") if kind == CREC_CALLER64 else caller if kind == CREC_CALLER else 0
        log_cpu = take("<I") if flags & REC_REPLAYED else cpu
        if flags & REC_SUBBUF or x + length > end:
            raise FormatError(f"{name}: bad compact record at offset {pos}")
        payload = data[x:x + length]
        pos = (x + length + CREC_ALIGN - 1) & ~(CREC_ALIGN - 1)
        if flags & REC_FORMAT:
            continue            # outside the chains, not a trace record
        ts, caller, seq = rts, rcaller, seq + skip
        recs.append(Record(flags, cinfo & CREC_LEVEL, cpu, log_cpu, seq, ts, caller, payload))
        seq += 1
    return recs, pos


def parse_stream(data: bytes, *, name: str = "<data>") -> tuple[list[Record], list[dict]]:
    """Parse what a read() of a trace file returns: sub-buffers back to
    back (relay strips the padding), each a header and its records (whole
    headers in version 1, compact ones in version 2).  Returns the trace
    records and the sub-buffer headers, each with the records read under it
    ("parsed"); raises FormatError on garbage."""
    recs: list[Record] = []
    subbufs: list[dict] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < HDR.size:
            raise FormatError(f"{name}: truncated header at offset {pos}")
        hdr = HDR.unpack_from(data, pos)
        (magic, version, flags, level, hdr_len, cpu, length, log_cpu, seq, ts, caller) = hdr
        if magic != MAGIC or version not in (VERSION, VERSION_1) or hdr_len != HDR.size:
            raise FormatError(f"{name}: bad header at offset {pos}: magic "
                              f"{magic:#x} version {version} hdr_len {hdr_len}")
        size = record_size(length)
        if pos + size > len(data):
            raise FormatError(f"{name}: record at offset {pos} runs past the end")
        payload = data[pos + HDR.size:pos + HDR.size + length]
        if flags & REC_SUBBUF:
            f = (SUBBUF if version == VERSION else SUBBUF_V1).unpack_from(payload)
            subbufs.append(dict(number=seq, cpu=cpu, subbuf_size=f[0],
                                n_subbufs=f[1], padding=f[2], records=f[3],
                                state=f[4], generation=f[5], name=f[6].rstrip(b"\0").decode()))
            if version == VERSION:
                # relay returns a closed sub-buffer without its padding
                closed = f[4] == SUBBUF_CLOSED
                end = min(len(data), pos + f[0] - (f[2] if closed else 0))
                # the sub-buffer being written is the last one read, and
                # may hold records its count did not have yet; a
                # continuation header's records run to the next header
                more, pos = _compact(data, pos + size, end, f[3] if closed else None,
                                     hdr, f, name)
                goes_on = is_subbuf_header(data, pos) and \
                    SUBBUF.unpack_from(data, pos + HDR.size)[4] == SUBBUF_CONTINUED and \
                    HDR.unpack_from(data, pos)[8] == seq
                if closed and pos != end and not goes_on:
                    raise FormatError(f"{name}: the records of sub-buffer {seq} end at "
                                      f"{pos}, its data at {end}")
                recs += more
                subbufs[-1]["parsed"] = len(more)
                continue
            subbufs[-1]["parsed"] = 0
        else:
            recs.append(Record(flags, level, cpu, log_cpu, seq, ts, caller, payload))
            if subbufs:
                subbufs[-1]["parsed"] += 1
        pos += size
    return recs, subbufs


# What a synthetic ring takes for the caller base (dti.ko's: DTI_CALLER_BASE)
CALLER_BASE = 0xffffffffc0000000


def _crec(flags: int, level: int, ts: int, prev_ts: int, caller: int, prev_caller: int,
          payload: bytes, *, skip: int = 0, log_cpu: int | None = None,
          caller_base: int = CALLER_BASE) -> bytes:
    """One compact record as dti.ko writes it after a record of time
    `prev_ts` and caller `prev_caller` (a format: caller 0, no chains)."""
    info, ext = level & CREC_LEVEL, b""
    length = len(payload)
    if length > 0xffff:
        info |= CREC_LEN32
        ext += struct.pack("<I", length)
        length = 0
    delta = ts - prev_ts
    if not -2**31 <= delta < 2**31:
        info |= CREC_TS64
        ext += struct.pack("<Q", ts)
        delta = 0
    if skip:
        info |= CREC_SKIP
        ext += struct.pack("<Q", skip)
    if not flags & REC_FORMAT:
        if caller == prev_caller:
            info |= CREC_CALLER
        elif -2**31 <= caller - caller_base < 2**31:
            info |= CREC_CALLER32
            ext += struct.pack("<i", caller - caller_base)
        else:
            info |= CREC_CALLER64
            ext += struct.pack("<Q", caller)
    if log_cpu is not None:
        flags |= REC_REPLAYED
        ext += struct.pack("<I", log_cpu)
    raw = CREC.pack(length, flags, info, delta) + ext + payload
    return raw + bytes(-len(raw) % CREC_ALIGN)


def compact_subbufs(records, *, subbuf_size: int, name: bytes = b"bench", cpu: int = 0,
                    n_subbufs: int | None = 4, generation: int = 0, formats: tuple = (),
                    last_open: bool = True) -> list[bytes]:
    """Sub-buffers of record version 2 as dti.ko writes them, each its
    header (the chains' bases), the event formats `formats` (payloads,
    outside the chains, counted in its records) and the compact records
    that fit.  `records`: (flags, level, ts, caller, payload) each,
    numbered from 0.  Returns each sub-buffer's bytes without padding (as
    read() gives them; its header says how much), the last one open
    unless `last_open` is false; `n_subbufs` None: as many as they are."""
    out: list[bytes] = []
    room = subbuf_size - SUBBUF_HEADER_SIZE
    seq = ts = caller = 0
    body, count, bases = bytearray(), 0, (0, 0, 0)

    def start():
        nonlocal body, count, bases
        body, count, bases = bytearray(), 0, (seq, ts, caller)
        for f in formats:
            body += _crec(REC_FORMAT, 0, ts, ts, 0, caller, f)
            count += 1

    def close(state: int):
        info = SUBBUF.pack(subbuf_size, n_subbufs or 0, room - len(body) if state else 0,
                           count, state, generation, name, *bases)
        head = HDR.pack(MAGIC, VERSION, REC_SUBBUF, 0, HDR.size, cpu, SUBBUF.size, cpu,
                        len(out), bases[1], CALLER_BASE) + info
        out.append(head + bytes(body))

    start()
    for flags, level, rts, rcaller, payload in records:
        rec = _crec(flags, level, rts, ts, rcaller, caller, payload)
        if len(body) + len(rec) > room:
            close(SUBBUF_CLOSED)
            start()
            rec = _crec(flags, level, rts, ts, rcaller, caller, payload)
        body += rec
        count += 1
        seq, ts, caller = seq + 1, rts, rcaller
    close(SUBBUF_OPEN if last_open else SUBBUF_CLOSED)
    if n_subbufs is None:
        at = HDR.size + 4       # struct dti_subbuf_info.n_subbufs
        out = [b[:at] + struct.pack("<I", len(out)) + b[at + 4:] for b in out]
    return out


MERGED_TS = re.compile(
    r"^\[\s*(\d+)\.(\d{9})\] cpu(\d+) L(-?\d+) #(\d+) (\S+(?: \[\S+\])?): (.*)$")


@dataclass
class TsLine:
    ts_ns: int
    cpu: int
    level: int
    seq: int
    caller: str
    text: str


def parse_merged_ts(text: str) -> list[TsLine]:
    out = []
    for line in text.splitlines():
        m = MERGED_TS.match(line)
        if not m:
            raise FormatError(f"bad merged-ts line: {line!r}")
        out.append(TsLine(int(m[1]) * 10**9 + int(m[2]), int(m[3]), int(m[4]),
                          int(m[5]), m[6], m[7]))
    return out


def parse_stats(text: str) -> dict[str, dict[str, int]]:
    """stats file -> {"0": {...}, "1": {...}, "total": {...}}"""
    lines = text.split("\n")
    cols = lines[0].split()[1:]
    out = {}
    for line in lines[1:]:
        if line.strip():
            f = line.split()
            out[f[0]] = dict(zip(cols, map(int, f[1:])))
    return out


# Counters of records that passed the level check and were not stored
# (struct dti_cpu_stats); each of them took a sequence number.
LOSS_COUNTERS = ("dropped", "nested", "nmi", "lost", "unavailable", "rejected",
                 "halted", "stopped")


def accounting_errors(stats: dict[str, dict[str, int]]) -> list[str]:
    """Where a parsed stats file breaks DTI's accounting identity: for every
    CPU, next_seq == written + the loss counters, and no more records were
    overwritten or discarded than written."""
    errs = []
    for cpu, s in stats.items():
        used = s["written"] + sum(s[k] for k in LOSS_COUNTERS)
        if s["next_seq"] != used:
            errs.append(f"cpu {cpu}: next_seq {s['next_seq']} != written + losses {used}: {s}")
        if s["overwritten"] + s["discarded"] > s["written"]:
            errs.append(f"cpu {cpu}: more overwritten + discarded than written: {s}")
    return errs


def readable(stats_cpu: dict[str, int]) -> int:
    """Records a CPU's buffer holds, by its counters."""
    return stats_cpu["written"] - stats_cpu["overwritten"] - stats_cpu["discarded"]


def parse_kv(text: str) -> dict[str, str]:
    """"key=value key=value" or "key: value" lines -> dict"""
    out = {}
    for line in text.splitlines():
        if ": " in line and "=" not in line:
            k, v = line.split(": ", 1)
            out[k.strip()] = v.strip()
            continue
        for tok in line.split():
            if "=" in tok:
                k, v = tok.split("=", 1)
                out[k] = v
    return out


def payload_for(i: int, length: int) -> bytes:
    """The binary payload dti_test writes for record i."""
    b = bytearray((i + j) & 0xFF for j in range(length))
    if length >= 4:
        b[0:4] = struct.pack("<I", i)
    return bytes(b)
