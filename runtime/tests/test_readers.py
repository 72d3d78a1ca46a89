# SPDX-License-Identifier: GPL-2.0
"""The file readers' bad inputs: each reader of the dti command is given
real guest output (tests/guest-output, tests/dump-excerpts) damaged in
named ways, and must give the exit status, the message and the number
of records each case says: damage is reported and skipped (exit status
2), what cannot be read at all fails (1), and no good record is lost
that a reader could have framed.

The surfaces (docs/bad-input.md has the table, generated
from READER_CASES and checked against it here):
  trace file       dti decode FILE...: the per-CPU files of a snapshot
  snapshot         dti decode DIR: trace files with the snapshot's info
                   and stats, which must agree with them
  previous boot    dti read --previous: a persistent channel's rings as
                   dti.ko kept them from the boot before (debugfs
                   .previous/NAME, here a fake debugfs tree)
  event formats    the DTI_REC_FORMAT records in a trace file, through
                   which events print
  dump             dti dump: an excerpt of a real guest crash (ELF)
  persistent region   dti dump of a memory image holding dti.ko's
                   persistent region (test_dump --seeds)
  console log      dti console-log: the console of a real panic
  kallsyms         dti decode --kallsyms FILE

Run after `make -C runtime` (`make -C runtime check` does):
    python3 -m pytest -q runtime/tests/test_readers.py
    python3 runtime/tests/test_readers.py --table     # docs/bad-input.md's table
"""
from __future__ import annotations

import re
import struct
import sys
from pathlib import Path
from typing import Callable

import pytest

from test_cli import HDR, RUNTIME, SUBBUF, elf_core, readme_section, run

TESTS = RUNTIME / "tests"
GUEST = TESTS / "guest-output"
SNAP = GUEST / "snap"
WRAP8K = TESTS / "dump-excerpts" / "wrap8k.elf"
PERSIST_IMAGE = TESTS / "fuzz-seeds-dump" / "dump-persist"
FORMAT, TYPED = 0x20, 0x40


# ---- the real trace files and their records ----

def layout(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, flags, payload length) of each record of a trace file."""
    out, at = [], 0
    while at + HDR.size <= len(data):
        magic, _, flags, _, _, _, length = HDR.unpack_from(data, at)[:7]
        if magic != 0xD71A:
            at += 8
            continue
        out.append((at, flags, length))
        at += (HDR.size + length + 7) & ~7
    return out


def trace(cpu: int) -> bytes:
    return (SNAP / f"trace{cpu}").read_bytes()


def nth(data: bytes, i: int, flags: int | None = None) -> int:
    """Offset of the i-th record (of those with all of `flags`)."""
    recs = [r for r in layout(data) if flags is None or r[1] & flags == flags]
    return recs[i][0]


def flip(data: bytes, at: int, bit: int = 0) -> bytes:
    b = bytearray(data)
    b[at] ^= 1 << bit
    return bytes(b)


def put32(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + struct.pack("<I", value) + data[at + 4:]


def swapped(data: bytes) -> bytes:
    """The trace file as a big-endian machine writes it: every header,
    sub-buffer header and event id in the other byte order (an event's
    values are left as they are: the reader prints them as stored)."""
    b = bytearray(data)
    for at, flags, length in layout(data):
        f = HDR.unpack_from(data, at)
        b[at:at + HDR.size] = struct.pack(">HBBbBHIIQQQ", *f)
        p = at + HDR.size
        if flags & SUBBUF:
            b[p:p + 24] = struct.pack(">6I", *struct.unpack_from("<6I", data, p))
        elif flags & FORMAT:
            b[p:p + 8] = struct.pack(">HBBHH", *struct.unpack_from("<HBBHH", data, p))
        elif flags & TYPED:
            b[p:p + 2] = data[p:p + 2][::-1]
    return bytes(b)


# ---- the cases ----

class Case:
    """One bad input of one surface: `make(dir)` writes the files into
    `dir` and returns the dti command line (after "dti")."""

    def __init__(self, surface: str, name: str, make: Callable[[Path], list[str]],
                 code: int, records: int, message: str):
        self.surface, self.name, self.make = surface, name, make
        self.code, self.records, self.message = code, records, message


def snap_dir(d: Path, **files: bytes | str | None) -> Path:
    """A copy of the real snapshot in d/snap, with `files` replaced
    (None: removed)."""
    s = d / "snap"
    s.mkdir()
    for p in SNAP.iterdir():
        (s / p.name).write_bytes(p.read_bytes())
    for name, data in files.items():
        if data is None:
            (s / name).unlink()
        else:
            (s / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return s


def decode(d: Path, **files) -> list[str]:
    """dti decode of the snapshot's trace files given one by one."""
    s = snap_dir(d, **files)
    return ["decode", *sorted(str(p) for p in s.glob("trace*"))]


def decode_dir(d: Path, **files) -> list[str]:
    return ["decode", str(snap_dir(d, **files))]


def file_of(d: Path, name: str, data: bytes) -> str:
    (d / name).write_bytes(data)
    return str(d / name)


def previous(d: Path, **files) -> list[str]:
    """A fake debugfs whose dti/.previous/sev holds the snapshot's trace files."""
    prev = d / "fs" / "dti" / ".previous"
    prev.mkdir(parents=True)
    snap_dir(d, **files).rename(prev / "sev")
    for name in ("info", "stats"):
        (prev / "sev" / name).unlink(missing_ok=True)
    return ["--debugfs", str(d / "fs"), "read", "--previous", "sev"]


def stats(next_seq: dict[int, int]) -> str:
    """The snapshot's stats with other CPUs or next numbers."""
    lines = (SNAP / "stats").read_text().splitlines()
    out = [lines[0]]
    for cpu, seq in next_seq.items():
        out.append(re.sub(r"\d+$", str(seq), re.sub(r"^\d+", str(cpu), lines[1])))
    return "\n".join(out) + "\n"


def dump(d: Path, data: bytes) -> list[str]:
    return ["dump", file_of(d, "vmcore", data)]


def console(d: Path, text: str) -> list[str]:
    return ["console-log", file_of(d, "console.log", text.encode("latin-1"))]


def con_lines(change: Callable[[list[str]], list[str]]) -> str:
    log = (GUEST / "console.log").read_text("latin-1")
    return "\n".join(change(log.splitlines())) + "\n"


def replace_line(pattern: str, new: Callable[[str], str]):
    def change(lines: list[str]) -> list[str]:
        return [new(x) if pattern in x else x for x in lines]
    return change


def con_sub(d: Path, pattern: str, old: str, new: str) -> list[str]:
    """The console log with `old` replaced by `new` in the lines holding `pattern`."""
    return console(d, con_lines(replace_line(pattern, lambda x: x.replace(old, new))))


def ksyms(d: Path, data: bytes) -> list[str]:
    return ["decode", "--kallsyms", file_of(d, "kallsyms", data), str(SNAP)]


def persist_image() -> bytes:
    """The persistent region image of test_dump (its flags byte off) as an ELF dump."""
    return elf_core(PERSIST_IMAGE.read_bytes()[1:])


T0, T1 = trace(0), trace(1)
KSYMS = (GUEST / "kallsyms").read_bytes()
WRAP = WRAP8K.read_bytes()


def desc_at(data: bytes) -> int:
    return data.index(b"__DTI__")


READER_CASES = [
    # trace file
    Case("trace file", "the real snapshot's trace0 and trace1", lambda d: decode(d), 0, 76, ""),
    Case("trace file", "trace0 empty", lambda d: decode(d, trace0=b""), 0, 38,
         "TMP/snap/trace0: no DTI data (empty)"),
    Case("trace file", "trace0 cut inside its sub-buffer header",
         lambda d: decode(d, trace0=T0[:60]), 2, 38,
         "TMP/snap/trace0: truncated record at offset 0: 96 bytes, 60 left in the file"),
    Case("trace file", "trace0 cut inside a record",
         lambda d: decode(d, trace0=T0[:nth(T0, 10) + 20]), 2, 47,
         "TMP/snap/trace0: truncated record header at offset 528 (20 of 40 bytes)"),
    Case("trace file", "trace0 cut inside its second sub-buffer",
         lambda d: decode(d, trace0=T0[:len(T0) - 100]), 2, 73,
         "TMP/snap/trace0: truncated record at offset 2664"),
    Case("trace file", "a bit flipped in a record's magic",
         lambda d: decode(d, trace0=flip(T0, nth(T0, 5))), 2, 50,
         "TMP/snap/trace0: corrupt data at offset 288: bad magic (not DTI data); 1408 bytes "
         "skipped"),
    Case("trace file", "a bit flipped in a record's length",
         lambda d: decode(d, trace0=flip(T0, nth(T0, 5) + 8, 3)), 2, 51,
         "TMP/snap/trace0: corrupt data at offset 328: bad magic (not DTI data); 1368 bytes "
         "skipped"),
    Case("trace file", "a bit flipped in a text payload",
         lambda d: decode(d, trace0=flip(T0, nth(T0, 5) + 41)), 0, 76, ""),
    Case("trace file", "a bit flipped in the sub-buffer header's record count",
         lambda d: decode(d, trace0=flip(T0, 40 + 12, 4)), 2, 60,
         "TMP/snap/trace0: corrupt data at offset 800: not a sub-buffer header, after the end "
         "of a sub-buffer"),
    Case("trace file", "sub-buffer header of another channel name",
         lambda d: decode(d, trace0=T0[:64] + b"x" + T0[65:]), 0, 76,
         "but TMP/snap/trace0 has channel xev (2 x 2048 bytes): files of different channels"),
    Case("trace file", "wrong version in every header",
         lambda d: decode(d, trace0=b"".join(
             T0[i:i + 1] if i - 2 not in {o for o, _, _ in layout(T0)} else b"\x03"
             for i in range(len(T0)))), 2, 38,
         "TMP/snap/trace0: record version 3 at offset 0 is not supported (this reader knows "
         "versions 1 and 2)"),
    Case("trace file", "wrong magic: a file of no DTI data",
         lambda d: decode(d, trace0=bytes(range(256)) * 8), 2, 38,
         "TMP/snap/trace0: corrupt data at offset 0: bad magic (not DTI data)"),
    Case("trace file", "huge length (0xffffffff) in a record",
         lambda d: decode(d, trace0=put32(T0, nth(T0, 5) + 8, 0xffffffff)), 2, 50,
         "TMP/snap/trace0: corrupt data at offset 288: impossible header or payload length"),
    Case("trace file", "the other byte order", lambda d: decode(
        d, trace0=swapped(T0), trace1=swapped(T1)), 0, 76, ""),
    Case("trace file", "trace0 twice (trace0, trace00)",
         lambda d: decode(d, trace00=T0), 0, 76,
         "TMP/snap/trace00: records of cpu0, which TMP/snap/trace0 holds too, skipped"),
    Case("trace file", "trace1 given as trace0's CPU (trace0 = trace1)",
         lambda d: decode(d, trace0=T1), 0, 38,
         "TMP/snap/trace1: records of cpu1, which TMP/snap/trace0 holds too, skipped"),
    # snapshot directory
    Case("snapshot", "the real snapshot directory", lambda d: decode_dir(d), 0, 76, ""),
    Case("snapshot", "stats lists cpu0 only",
         lambda d: decode_dir(d, stats=stats({0: 38})), 0, 38,
         "TMP/snap/trace1: not merged: the snapshot's stats list only cpu0..cpu0"),
    Case("snapshot", "stats older than the records (a reused directory)",
         lambda d: decode_dir(d, stats=stats({0: 20, 1: 38})), 0, 76,
         "is not older than the snapshot's stats (next_seq 20)"),
    Case("snapshot", "info of another channel",
         lambda d: decode_dir(d, info=(SNAP / "info").read_text().replace("sev", "other")),
         0, 76, "but the snapshot's info file has channel other (2 x 2048 bytes)"),
    Case("snapshot", "info and stats empty", lambda d: decode_dir(d, info=b"", stats=b""),
         0, 76, "TMP/snap/info: not read: no name, subbuf_size or n_subbufs line in it"),
    Case("snapshot", "info and stats of garbage",
         lambda d: decode_dir(d, info=bytes(range(256)), stats=b"\xff" * 300), 0, 76,
         'TMP/snap/stats: not read: no "cpu ..." header line in it'),
    Case("snapshot", "info says huge sub-buffers",
         lambda d: decode_dir(d, info=(SNAP / "info").read_text().replace(
             "subbuf_size: 2048", "subbuf_size: 4294971392")), 0, 76, ""),
    Case("snapshot", "no trace files", lambda d: decode_dir(d, trace0=None, trace1=None),
         1, 0, "TMP/snap: no per-CPU files trace0..N"),
    Case("snapshot", "pending of garbage", lambda d: decode_dir(d, pending=b"\x01" * 100),
         2, 76, "TMP/snap/pending: corrupt data at offset 0: bad magic (not DTI data)"),
    # previous boot
    Case("previous boot", "the real snapshot as .previous/sev", lambda d: previous(d), 0, 76, ""),
    Case("previous boot", "trace0 cut inside a record",
         lambda d: previous(d, trace0=T0[:nth(T0, 10) + 20]), 2, 47,
         "TMP/fs/dti/.previous/sev/trace0: truncated record header at offset 528"),
    Case("previous boot", "no trace files", lambda d: previous(d, trace0=None, trace1=None),
         1, 0, "TMP/fs/dti/.previous/sev: no per-CPU files trace0..N"),
    # event formats
    Case("event formats", "a format's template changed (layout no longer matches)",
         lambda d: decode(d, trace0=T0.replace(b"%hhd", b"%hhs", 1)), 0, 76,
         "event format at offset 1792 does not hold together"),
    Case("event formats", "a format's template length one less",
         lambda d: decode(d, trace0=flip(T0, nth(T0, 0, FORMAT) + 40 + 6)), 0, 76,
         "event format at offset 1792 does not hold together"),
    Case("event formats", "a format's field name not an identifier",
         lambda d: decode(d, trace0=T0.replace(b"s8,u8", b"s8,8u", 1)), 0, 76,
         "event format at offset 1792 does not hold together"),
    Case("event formats", "an event's id unknown",
         lambda d: decode(d, trace0=flip(T0, nth(T0, 0, TYPED) + 40, 5)), 0, 76, ""),
    Case("event formats", "an event's length 4 more (its padding read as values)",
         lambda d: decode(d, trace0=flip(T0, nth(T0, 0, TYPED) + 8, 2)), 0, 76, ""),
    # dump
    Case("dump", "a real crash's excerpt (channel wrap8k)", lambda d: dump(d, WRAP), 0, 1325, ""),
    Case("dump", "empty file", lambda d: dump(d, b""), 1, 0,
         "TMP/vmcore: not a memory dump libkdumpfile can read"),
    Case("dump", "cut in half", lambda d: dump(d, WRAP[:len(WRAP) // 2]), 2, 492,
         "TMP/vmcore: truncated: the segment of physical 0x1fbd0000 has 0 of its 16384 bytes"),
    Case("dump", "no descriptor (its marker zeroed)",
         lambda d: dump(d, WRAP.replace(b"__DTI__", b"\0" * 7)), 1, 0,
         "TMP/vmcore: no DTI channels in this elf dump"),
    Case("dump", "a bit flipped in the descriptor",
         lambda d: dump(d, flip(WRAP, desc_at(WRAP) + 48)), 2, 0,
         "channel wrap8k skipped: channel descriptor at physical 0x1a1d028: descriptor size "
         "105, not 104"),
    Case("dump", "a bit flipped in a sub-buffer header's magic",
         lambda d: dump(d, flip(WRAP, WRAP.index(b"wrap8k\0", desc_at(WRAP) + 8) - 64)),
         0, 1157, "168 records lost on cpu0 between seq 1176 and 1344"),
    Case("dump", "ELF program headers beyond the file",
         lambda d: dump(d, WRAP[:32] + struct.pack("<Q", 1 << 40) + WRAP[40:]), 1, 0,
         "TMP/vmcore: not a memory dump libkdumpfile can read"),
    # persistent region
    Case("persistent region", "test_dump's region: two boots' rings",
         lambda d: dump(d, persist_image()), 0, 12, ""),
    Case("persistent region", "a bit flipped in slot 1",
         lambda d: dump(d, flip(persist_image(), 4096 + 0x100b8 + 1)), 2, 10,
         "slot 1 (physical 0x100b8): CRC mismatch"),
    Case("persistent region", "a bit flipped in the region's header",
         lambda d: dump(d, flip(persist_image(), 4096 + 0x10000 + 20)), 2, 3,
         "its header fails: region version 5 (this reader knows version 4); nothing of it is "
         "read"),
    # console log
    Case("console log", "a real panic's console", lambda d: console(
        d, con_lines(lambda x: x)), 0, 18, ""),
    Case("console log", "empty file", lambda d: console(d, ""), 1, 0,
         "TMP/console.log: no DTI records printed at a panic in this log"),
    Case("console log", "cut inside channel pb",
         lambda d: console(d, con_lines(lambda x: x[:-3])), 2, 16,
         "TMP/console.log:26: the log ends inside channel pb's records"),
    Case("console log", "a record line cut inside its payload",
         lambda d: console(d, con_lines(replace_line("cpu0 L6 #3", lambda x: x[:-2]))), 0, 18, ""),
    Case("console log", "a record line cut before its payload",
         lambda d: console(d, con_lines(replace_line("cpu0 L6 #3", lambda x: x[:-12]))),
         2, 17, "TMP/console.log:10: a record line of channel pa does not parse"),
    Case("console log", "a record line garbled (cpuX)",
         lambda d: con_sub(d, "cpu0 L6 #3", "cpu0", "cpuX"), 2, 17,
         "TMP/console.log:10: a record line of channel pa does not parse"),
    Case("console log", "another message inside a record line",
         lambda d: console(d, con_lines(replace_line("cpu1 L6 #2", lambda x: x[:70] +
                                                     "[ 3.2] usb 1-1: new device\n" + x[70:]))),
         2, 17, "TMP/console.log:14: a record line of channel pa does not parse"),
    Case("console log", "a bad escape in a payload",
         lambda d: con_sub(d, "\\x3cq", "\\x3c", "\\xZZ"), 2, 17,
         "TMP/console.log:18: a record of channel pa has a payload that does not parse"),
    Case("console log", "an end line with another count",
         lambda d: con_sub(d, "end pa:", "10 records", "11 records"), 2, 18,
         "TMP/console.log:19: channel pa ends with another count of records than were read"),
    Case("console log", "CRLF line ends", lambda d: console(
        d, con_lines(lambda x: [y + "\r" for y in x])), 0, 18, ""),
    Case("console log", "pa printed again (oops, then panic)",
         lambda d: console(d, con_lines(lambda x: x + [y for y in x if " pa" in y])), 0, 18,
         "TMP/console.log:31: channel pa is printed again; its records from line 8 are replaced"),
    Case("console log", "a payload of 5 MB", lambda d: console(d, con_lines(
        replace_line("cpu1 L6 #2", lambda x: x + "y" * (5 << 20)))), 2, 17,
        "TMP/console.log:14: a record of channel pa is longer than any record can be"),
    # kallsyms
    Case("kallsyms", "a real guest's kallsyms", lambda d: ksyms(d, KSYMS), 0, 76, ""),
    Case("kallsyms", "empty file", lambda d: ksyms(d, b""), 1, 0,
         "TMP/kallsyms: no symbols in it (not a copy of /proc/kallsyms?)"),
    Case("kallsyms", "addresses hidden (all zero)",
         lambda d: ksyms(d, b"\n".join(b"0" * 16 + x[16:] for x in KSYMS.splitlines())),
         1, 0, "TMP/kallsyms: symbol addresses are hidden (kptr_restrict)"),
    Case("kallsyms", "lines of garbage between", lambda d: ksyms(
        d, b"\n".join(x + b"\nxyz \xff\n\n" for x in KSYMS.splitlines())), 0, 76, ""),
    Case("kallsyms", "a line of 5000 bytes", lambda d: ksyms(
        d, KSYMS + b"ffffffffc0000000 t " + b"x" * 5000 + b" [dti]\n"), 0, 76, ""),
    Case("kallsyms", "not a kallsyms file (a trace file)", lambda d: ksyms(d, T0), 1, 0,
         "TMP/kallsyms: no symbols in it (not a copy of /proc/kallsyms?)"),
]


def outcome(case: Case, tmp: Path) -> tuple[int, int, str]:
    """(exit status, records printed as JSON, stderr with `tmp` as TMP)."""
    args = case.make(tmp)
    cmd = 2 if args[0] == "--debugfs" else 0
    p = run([*args[:cmd + 1], "-F", "json", *args[cmd + 1:]], tmp)
    records = sum(1 for x in p.stdout.splitlines() if not x.startswith(b'{"channel"'))
    return p.returncode, records, p.stderr.decode("utf-8", "replace").replace(str(tmp), "TMP")


def probe() -> None:
    """Each case's outcome, to write its expectations from."""
    import tempfile
    for c in READER_CASES:
        with tempfile.TemporaryDirectory() as t:
            code, n, err = outcome(c, Path(t))
        first = err.splitlines()[0] if err else ""
        print(f"{c.surface} | {c.name} | {code} | {n} | {first}")


@pytest.mark.parametrize("case", READER_CASES, ids=lambda c: f"{c.surface}: {c.name}")
def test_reader_case(case, tmp_path):
    """The exit status, the message (on stderr, TMP for the scratch
    directory; none at all if the case gives none) and the records read."""
    code, records, err = outcome(case, tmp_path)
    assert code == case.code, err
    assert records == case.records, err
    if case.message:
        assert case.message in err, err
    else:
        assert err == "", err


TABLE_START = "<!-- bad-input reader table: generated by runtime/tests/test_readers.py --table -->"
TABLE_END = "<!-- end of bad-input reader table -->"
EXIT = {0: "0", 1: "1 (fails)", 2: "2 (damage skipped)"}


def reader_table() -> str:
    """docs/bad-input.md's table: every case with its exit status, the records still
    read against those of the whole input, and the message."""
    rows = ["| surface | input | exit | records read | message (TMP: the input's directory) |",
            "|---|---|---|---|---|"]
    whole = {}
    for c in READER_CASES:
        whole.setdefault(c.surface, c.records)
        msg = (c.message or "(none)").replace("|", "\\|")
        rows.append(f"| {c.surface} | {c.name} | {EXIT[c.code]} | "
                    f"{c.records} of {whole[c.surface]} | {msg} |")
    return "\n".join(rows)


def test_readme_reader_table():
    assert readme_section(TABLE_START, TABLE_END) == reader_table(), (
        "docs/bad-input.md's bad-input reader table is stale: run "
        "`python3 runtime/tests/test_readers.py --table`")


if __name__ == "__main__":
    if sys.argv[1:] == ["--table"]:
        print(reader_table())
    elif sys.argv[1:] == ["--probe"]:
        probe()
    else:
        sys.exit("usage: test_readers.py --table | --probe")
