#!/usr/bin/python3
"""dti decode's rate on typed events beside text records (issue 42).

Writes two snapshots of one CPU each, N records in 64 KiB sub-buffers:
text records of what a driver logs ("dev 3 irq 17 status 0x0 len 4096",
about 40 bytes), and the same values as typed events of one type
("dev %u irq %u status %#x len %u", four u32), whose format record opens
every sub-buffer as dti.ko writes it.  Then times `dti decode -q -F FMT`
of each (page cache warm, output to /dev/null) and prints records per
second:

    text records, -F text / -F json / -F perfetto
    typed events, -F text / -F json / -F perfetto

then issue 42's goal, typed events as JSON >= 0.5 x text records as JSON
(the same output format, each record a JSON object), and beside it, for
information, typed JSON over text records as text.  The runs take
turns in rounds, each the best of --reps, and each figure is the median
of --rounds rounds: on a busy host a slow spell falls on all alike.
Usage:
    bench/decode_events.py [--records N] [--reps R] [--rounds K] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DTI = REPO / "runtime" / "build" / "dti"
sys.path.insert(0, str(REPO / "testsuite"))
from dtirec import compact_subbufs  # noqa: E402  (record version 2, as dti.ko writes it)

TEXT, TYPED = 0x01, 0x40
SUBBUF_SIZE = 65536
CALLER = 0xffffffffc0001234
EV_ID = 1
EV_NAME = b"xfer"
EV_LAYOUT = b"IIII"                     # four u32
EV_FIELDS = b"dev,irq,status,len"
EV_FMT = b"dev %u irq %u status %#x len %u"
EVFMT = struct.Struct("<HBBHH")         # struct dti_event_format


def snapshot(path: Path, n: int, typed: bool) -> None:
    """trace0 of @n records in sub-buffers of SUBBUF_SIZE as dti.ko writes
    them (record version 2), each opened by its header (and, for events,
    the type's format, which its count includes)."""
    fmt = EVFMT.pack(EV_ID, len(EV_LAYOUT), len(EV_NAME), len(EV_FIELDS), len(EV_FMT)) + \
        EV_NAME + EV_LAYOUT + EV_FIELDS + EV_FMT

    def records():
        for i in range(n):
            vals = (i % 8, 17 + i % 3, 0 if i % 10 else 0x40, 512 << (i % 4))
            if typed:
                yield TYPED, 6, 1_000_000_000 + 100 * i, CALLER, \
                    struct.pack("<HIIII", EV_ID, *vals)
            else:
                text = (EV_FMT.decode().replace("%#x", "%s") %
                        (vals[0], vals[1], hex(vals[2]), vals[3])).encode()
                yield TEXT, 6, 1_000_000_000 + 100 * i, CALLER, text

    subs = compact_subbufs(records(), subbuf_size=SUBBUF_SIZE, formats=(fmt,) if typed else (),
                           last_open=False)
    path.mkdir(parents=True, exist_ok=True)
    (path / "trace0").write_bytes(b"".join(subs))


def perfetto_events(trace: bytes) -> int:
    """The events of a Perfetto trace dti wrote: its packets that start
    with a timestamp (TracePacket field 8; clock and tracks have none)."""
    def varint(i: int) -> tuple[int, int]:
        v = shift = 0
        while True:
            b = trace[i]
            v |= (b & 0x7f) << shift
            i, shift = i + 1, shift + 7
            if b < 0x80:
                return v, i
    n = i = 0
    while i < len(trace):
        assert trace[i] == 0x0a, "not a Trace.packet"
        size, i = varint(i + 1)
        n += trace[i] == 8 << 3
        i += size
    return n


def best(cmd: list[str], reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return min(times)


CASES = [(kind, fmt) for kind in ("text", "typed") for fmt in ("text", "json", "perfetto")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3, help="runs a round takes the best of")
    ap.add_argument("--rounds", type=int, default=5, help="rounds whose median is reported")
    ap.add_argument("--json", type=Path, help="write the figures here too")
    args = ap.parse_args()
    res = {"records": args.records, "reps": args.reps, "rounds": args.rounds, "rates": {}}
    rates: dict[str, list[float]] = {f"{kind}/{fmt}": [] for kind, fmt in CASES}
    with tempfile.TemporaryDirectory() as tmp:
        cmds = {}
        for kind in ("text", "typed"):
            snapshot(Path(tmp) / kind, args.records, kind == "typed")
        for kind, fmt in CASES:
            cmd = [str(DTI), "decode", "-q", "-F", fmt, str(Path(tmp) / kind)]
            # every record comes out (a line, an event each), or the figure means nothing
            out = subprocess.run(cmd, capture_output=True, check=True).stdout
            lines = perfetto_events(out) if fmt == "perfetto" else out.count(b"\n")
            if lines != args.records:
                raise SystemExit(f"{kind} -F {fmt}: {lines} lines, {args.records} records")
            cmds[f"{kind}/{fmt}"] = cmd
        for _ in range(args.rounds):
            for case, cmd in cmds.items():
                rates[case].append(args.records / best(cmd, args.reps))
    for kind, fmt in CASES:
        rate = statistics.median(rates[f"{kind}/{fmt}"])
        res["rates"][f"{kind}/{fmt}"] = rate
        print(f"{kind:5} records, -F {fmt:8}: {rate / 1e6:6.2f} M records/s "
              f"({1e9 / rate:5.0f} ns per record)")
    goal = res["rates"]["typed/json"] / res["rates"]["text/json"]
    plain = res["rates"]["typed/json"] / res["rates"]["text/text"]
    res["typed_json_over_text_json"] = goal
    res["typed_json_over_text_text"] = plain
    res["goal_holds"] = goal >= 0.5
    print(f"goal (issue 42): typed events as JSON / text records as JSON = {goal:.2f} "
          f"(>= 0.5: {'holds' if goal >= 0.5 else 'does not hold'})")
    print(f"for information: typed events as JSON / text records as text = {plain:.2f}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
