#!/usr/bin/python3
"""Small reads of a trace file: time against the sub-buffer's size.

    bench/read_small.py [--sizes 262144,1048576,4194304] [--bs 200]
                        [--kmod DIR] [--kernel NAME] [--timeout S]

One guest boot per sub-buffer size: a no-overwrite channel of that size
(two sub-buffers) whose first sub-buffer is filled with small text
records and closed, then its trace file read by `dd bs=BS` and by `dd`
with the sub-buffer's size, each timed in the guest.  A read() path that
walks the sub-buffer from its start on every read() takes time that
grows as the square of the size; one that keeps its place, linear time.
Prints a table: size, records, ns per record for each read size, and
their ratio.  --kmod takes dti.ko and dti_test.ko from another build (to
measure an older tree); a dd still running after --timeout seconds is
reported as such, not waited for.  Figures under TCG are for comparing
sizes and trees on one host, not absolute.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "testsuite"))

from guestlib import PRELUDE_FUNCS          # noqa: E402
from harness import initramfs, vm           # noqa: E402
from harness.kernel import find_kernel      # noqa: E402

# Bytes a record "x NNNNNN\n" takes: an 8-byte compact header, 9 of text
RECORD_BYTES = 20

SCRIPT = r"""
insmod {dti}
insmod {test}
ctl register_sub rs {size} 2 7 1
ctl printk rs 3 {count} 0 process x
ctl printk rs 3 1 0 process closer
# nanoseconds, to /proc/uptime's hundredths of a second (busybox's date has no %N)
t() {{ read up idle < /proc/uptime; echo $(( ${{up%.*}}${{up#*.}} * 10000000 )); }}
a=$(t)
timeout {timeout} dd if=$D/rs/trace0 of=/out/small bs={bs} 2> /dev/null && \
    echo "small $(( $(t) - a ))" >> /out/times || echo "small timeout" >> /out/times
echo 1 > $D/rs/reset_consumed
a=$(t)
dd if=$D/rs/trace0 of=/out/whole bs={size} 2> /dev/null
echo "whole $(( $(t) - a ))" >> /out/times
"""


def measure(size: int, args) -> dict:
    kmod = Path(args.kmod) if args.kmod else None
    dti = kmod / "kmod" / "dti.ko" if kmod else REPO / "kmod" / "dti.ko"
    test = (kmod if kmod else REPO) / "testsuite" / "modules" / "dti_test.ko"
    count = (size - 200) // RECORD_BYTES
    script = PRELUDE_FUNCS + SCRIPT.format(dti="/lib/modules/dti/dti.ko", test="/lib/modules/dti/dti_test.ko",
                           size=size, count=count, bs=args.bs, timeout=args.timeout)
    res = vm.run(script, smp=2, mem=512, timeout=args.timeout * 2 + 300,
                 modules=[dti, test], kernel=find_kernel(args.kernel),
                 build_dir=initramfs.default_build_dir())
    res.check()
    times = dict(line.split() for line in (res.outdir / "times").read_text().splitlines())
    small = (res.outdir / "small").stat().st_size if times["small"] != "timeout" else 0
    return {"size": size, "records": count, "small_ns": times["small"],
            "whole_ns": int(times["whole"]), "small_bytes": small}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="262144,1048576,4194304")
    ap.add_argument("--bs", type=int, default=200)
    ap.add_argument("--kmod", help="a tree whose kmod/dti.ko and test module to boot")
    ap.add_argument("--kernel", default=None)
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    print(f"{'sub-buffer':>10} {'records':>8} {'bs=' + str(args.bs) + ' ns/rec':>14} "
          f"{'whole ns/rec':>12} {'ratio':>6}")
    for size in map(int, args.sizes.split(",")):
        r = measure(size, args)
        whole = r["whole_ns"] / r["records"]
        if r["small_ns"] == "timeout":
            print(f"{size:>10} {r['records']:>8} {'> ' + str(args.timeout) + ' s':>14} "
                  f"{whole:>12.0f} {'-':>6}")
            continue
        small = int(r["small_ns"]) / r["records"]
        print(f"{size:>10} {r['records']:>8} {small:>14.0f} {whole:>12.0f} "
              f"{small / whole:>6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
