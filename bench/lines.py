#!/usr/bin/env python3
"""What `--lines` costs: `dti decode` of 1 million records with and
without resolving their callers to source lines (issue 25's goal: at
most 2 x the same read without --lines).

    make -C bench lines          (or: bench/lines.py [--records N] [--reps N])

The records are a snapshot directory written here, on the host: text
records whose callers are the return addresses of the real logging calls
of testsuite/modules/dti_lines.ko (found in its relocations, as the
kernel would have loaded it at TEXT), spread over those calls in turn,
and the `modules` file a snapshot of that kernel would hold.  Both reads
run the same `dti decode` on the same files, page cache warm, best of
--reps; the callers are resolved through the module's own DWARF.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DTI = ROOT / "runtime" / "build" / "dti"
sys.path.insert(0, str(ROOT / "testsuite"))
from dtirec import compact_subbufs  # noqa: E402  (record version 2, as dti.ko writes it)
KO = ROOT / "testsuite" / "modules" / "dti_lines.ko"
GOAL = 2.0
# Where the module's core code is taken to be loaded
TEXT = 0xffffffffc0a00000
TEXT_REC = 0x01
SUBBUF_SIZE = 1 << 20
GENERATION = 7


def call_sites(ko: Path) -> list[int]:
    """Return addresses (offsets in .text) of the module's calls of dti_printk_raw."""
    r = subprocess.run(["objdump", "-dr", "--section=.text", str(ko)], capture_output=True,
                       text=True, check=True)
    sites = [int(m[1], 16) + 4 for m in
             re.finditer(r"^\s+([0-9a-f]+): R_X86_64_PLT32\s+dti_printk_raw-0x4$", r.stdout,
                         re.M)]
    if not sites:
        raise SystemExit(f"{ko}: no call of dti_printk_raw found")
    return sites


def build_id(ko: Path) -> str:
    r = subprocess.run(["readelf", "-n", str(ko)], capture_output=True, text=True, check=True)
    return re.search(r"Build ID: ([0-9a-f]+)", r.stdout)[1]


def write_snapshot(d: Path, n: int, sites: list[int]) -> int:
    """n records on cpu0 in closed 1 MiB sub-buffers as dti.ko writes them
    (record version 2), every sub-buffer of the ring written once, as a
    copy of the ring has them (with their padding); returns the bytes
    written."""
    records = ((TEXT_REC, 6, 1_000_000_000 + i, TEXT + sites[i % len(sites)],
                b"dti_lines.c:%d call %d\n" % (sites[i % len(sites)], i)) for i in range(n))
    subs = compact_subbufs(records, subbuf_size=SUBBUF_SIZE, n_subbufs=None,
                           generation=GENERATION, last_open=False)
    with open(d / "trace0", "wb") as f:
        for sub in subs:
            f.write(sub + bytes(SUBBUF_SIZE - len(sub)))
    (d / "info").write_text(f"name: bench\nsubbuf_size: {SUBBUF_SIZE}\n"
                            f"n_subbufs: {len(subs)}\n")
    return len(subs) * SUBBUF_SIZE


def best(cmd: list[str], reps: int) -> float:
    times = []
    with open(os.devnull, "wb") as null:
        for _ in range(reps):
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=null, check=True)
            times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", type=Path, help="write the figures here too")
    args = ap.parse_args(argv)
    for p, how in ((DTI, "make -C runtime"), (KO, "make modules")):
        if not p.is_file():
            raise SystemExit(f"{p}: missing ({how})")
    sites = call_sites(KO)
    with tempfile.TemporaryDirectory(prefix="dti-lines-bench-") as tmp:
        snap = Path(tmp) / "snap"
        snap.mkdir()
        size = write_snapshot(snap, args.records, sites)
        (snap / "modules").write_text(f"dti_lines {TEXT:#x} 0x10000 {build_id(KO)} live 1 0\n")
        # the records resolve: every one of them to a line
        check = subprocess.run([str(DTI), "decode", "-F", "json", "--lines", "-d", str(KO),
                                str(snap)], capture_output=True, text=True, check=True)
        lines = [json.loads(ln) for ln in check.stdout.splitlines()]
        unresolved = sum(1 for x in lines if not x.get("line"))
        if len(lines) != args.records or unresolved:
            raise SystemExit(f"{len(lines)} records read, {unresolved} without a line")
        out = {"records": args.records, "bytes": size, "call_sites": len(sites),
               "reps": args.reps, "formats": {}}
        for fmt in ("ts", "json"):  # the formats that print the caller
            plain = best([str(DTI), "decode", "-q", "-F", fmt, str(snap)], args.reps)
            with_lines = best([str(DTI), "decode", "-q", "-F", fmt, "--lines", "-d", str(KO),
                               str(snap)], args.reps)
            out["formats"][fmt] = {"plain_ms": plain * 1e3, "lines_ms": with_lines * 1e3,
                                   "ratio": with_lines / plain,
                                   "holds": with_lines / plain <= GOAL}
    print(f"dti decode of {args.records} records ({size >> 20} MiB, {len(sites)} call sites "
          f"of dti_lines.ko), best of {args.reps}; goal: --lines <= {GOAL} x without")
    print("| format | without --lines | with --lines | ratio | holds |")
    print("|---|---|---|---|---|")
    for fmt, f in out["formats"].items():
        print(f"| {fmt} | {f['plain_ms']:.0f} ms | {f['lines_ms']:.0f} ms | "
              f"{f['ratio']:.2f} | {'yes' if f['holds'] else 'no'} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
