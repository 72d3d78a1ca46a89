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
VERSION = 1
ALIGN = 8
REC_TEXT = 0x01
REC_TRUNCATED = 0x02
REC_RESERVED = 0x04
REC_REPLAYED = 0x08
REC_SUBBUF = 0x80

HDR = struct.Struct("<HBBbBHIIQQQ")        # struct dti_record, 40 bytes
SUBBUF = struct.Struct("<IIIIII32s")       # struct dti_subbuf_info, 56 bytes
assert HDR.size == 40 and SUBBUF.size == 56


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
    return (HDR.size + payload_len + ALIGN - 1) & ~(ALIGN - 1)


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


def parse_stream(data: bytes, *, name: str = "<data>") -> tuple[list[Record], list[dict]]:
    """Parse what a read() of a trace file returns: records and sub-buffer
    headers back to back (relay strips the padding).  Returns the trace
    records and the sub-buffer headers; raises FormatError on garbage."""
    recs: list[Record] = []
    subbufs: list[dict] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < HDR.size:
            raise FormatError(f"{name}: truncated header at offset {pos}")
        (magic, version, flags, level, hdr_len, cpu, length, log_cpu, seq, ts,
         caller) = HDR.unpack_from(data, pos)
        if magic != MAGIC or version != VERSION or hdr_len != HDR.size:
            raise FormatError(f"{name}: bad header at offset {pos}: magic "
                              f"{magic:#x} version {version} hdr_len {hdr_len}")
        size = record_size(length)
        if pos + size > len(data):
            raise FormatError(f"{name}: record at offset {pos} runs past the end")
        payload = data[pos + HDR.size:pos + HDR.size + length]
        if flags & REC_SUBBUF:
            f = SUBBUF.unpack_from(payload)
            subbufs.append(dict(number=seq, cpu=cpu, subbuf_size=f[0],
                                n_subbufs=f[1], padding=f[2], records=f[3],
                                state=f[4], generation=f[5], name=f[6].rstrip(b"\0").decode()))
        else:
            recs.append(Record(flags, level, cpu, log_cpu, seq, ts, caller, payload))
        pos += size
    return recs, subbufs


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
                 "halted")


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
