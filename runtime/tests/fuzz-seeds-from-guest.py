#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Seeds of the file readers' fuzz targets, made from the real guest
output in tests/guest-output/ (capture-guest-output.py wrote it):

    fuzz-seeds-from-guest.py OUTDIR

writes OUTDIR/<target>/<seed> for the targets events, snapshot, ksyms
and console, each input as its target reads it (a byte of flags, then
the file, or files as "@@F:NAME\\n" parts: tests/fuzz_file.h).  Besides
each capture as it is, a few variants start the fuzzer nearer what the
bad-input suite tries: cut inside a record, a snapshot whose stats and
info disagree with its trace files, hidden kallsyms addresses.
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path

GUEST = Path(__file__).resolve().parent / "guest-output"
HDR = struct.Struct("<HBBbBHIIQQQ")     # struct dti_record
MAGIC, TEXT, FORMAT, TYPED, SUBBUF = 0xD71A, 0x01, 0x20, 0x40, 0x80


def parts(files: list[tuple[str, bytes]]) -> bytes:
    return b"".join(b"@@F:" + name.encode() + b"\n" + data for name, data in files)


def records(data: bytes):
    """(flags, payload) of each record of a trace file, padding skipped."""
    at = 0
    while at + HDR.size <= len(data):
        magic, _, flags, _, _, _, length = HDR.unpack_from(data, at)[:7]
        if magic != MAGIC:
            at += 8
            continue
        yield flags, data[at + HDR.size:at + HDR.size + length]
        at += (HDR.size + length + 7) & ~7


def snapshot_files() -> list[tuple[str, bytes]]:
    snap = GUEST / "snap"
    return [(p.name, p.read_bytes()) for p in sorted(snap.iterdir())]


def seeds() -> dict[str, dict[str, bytes]]:
    out: dict[str, dict[str, bytes]] = {}
    snap = dict(snapshot_files())
    info, stats = snap["info"].decode(), snap["stats"].decode()
    out["snapshot"] = {
        "guest-dir": b"\x00" + parts(list(snap.items())),
        "guest-files": b"\x01" + parts(list(snap.items())),
        "guest-modules": b"\x00" + parts(list(snap.items()) + [
            ("modules", b"dti_test 0xffffffffc0000000 0x10000000 - live 1 0\n"
                        b"gone_mod 0xffffffffd0000000 0x1000 0011 gone 1 2\n")]),
        "guest-strict-cut": b"\x02" + parts([("info", snap["info"]),
                                             ("trace0", snap["trace0"][:700])]),
        "guest-stats-one-cpu": b"\x00" + parts(
            list(snap.items())[:-1] + [("stats", "\n".join(stats.splitlines()[:2]).encode())]),
        "guest-info-other": b"\x00" + parts(
            [("info", info.replace("name: sev", "name: other").encode())] +
            [(k, v) for k, v in snap.items() if k != "info"]),
    }
    events = []
    for name in ("trace0", "trace1"):
        recs = [(f, p) for f, p in records(snap[name]) if not f & SUBBUF]
        kinds = {FORMAT: "format", TYPED: "event", TEXT: "text"}
        events.append([(kinds.get(f & (FORMAT | TYPED | TEXT), "binary"), p) for f, p in recs])
    out["events"] = {
        "guest-cpu0": b"\x00" + parts(events[0]),
        "guest-cpu1-swapped": b"\x01" + parts(events[1]),
    }
    ksyms = (GUEST / "kallsyms").read_bytes()
    hidden = b"\n".join(b"0" * 16 + x[16:] for x in ksyms.splitlines())
    out["ksyms"] = {
        "guest": ksyms,
        "guest-modules": b"\n".join(x for x in ksyms.splitlines() if b"[" in x),
        "guest-hidden": hidden,
    }
    log = (GUEST / "console.log").read_bytes()
    lines = log.splitlines(keepends=True)
    damaged = [x.replace(b" cpu0 ", b" cpuX ", 1) if b"#3 " in x else x for x in lines]
    out["console"] = {
        "guest": b"\x00" + log,
        "guest-json-pa": b"\x06" + log,
        "guest-cut": b"\x01" + log[:len(log) * 2 // 3],
        "guest-damaged": b"\x09" + b"".join(damaged),
        "guest-modules": b"\x19" + b"".join(
            lines[:1] + [b"[    9.000000] dti: panic: module dti_test 0xffffffffc0000000 "
                         b"0x10000000 - live 1 0\n",
                         b"[    9.000000] dti: panic: module gone 0xffffffffd0000000 0x1000 "
                         b"0011 gone 1 2\n"] + lines[1:]),
    }
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: fuzz-seeds-from-guest.py OUTDIR")
    for target, files in seeds().items():
        d = Path(sys.argv[1]) / target
        d.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (d / name).write_bytes(data)


if __name__ == "__main__":
    main()
