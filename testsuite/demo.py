#!/usr/bin/env python3
"""`make demo`: boot the guest kernel, load DTI, log records, show them.

Builds the modules if needed, boots Debian's kernel in QEMU (TCG, 2 CPUs)
and runs a short session with the sample driver (examples/dti_sample): its
requests are traced from process, softirq and hardirq context; a fault
makes the watchdog time one out; the level is changed from userspace and
the merged view, the counters and the driver's own counters are shown.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.kernel import find_kernel
from harness.vm import run

REPO = Path(__file__).resolve().parent.parent

SCRIPT = r"""
say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
D=/sys/kernel/debug/dti
S=/sys/kernel/debug/dti_sample
wait_for() { n=0; while ! eval "$1"; do sleep 0.1; n=$((n+1)); [ $n -lt 300 ] || return 1; done; }

say "insmod dti.ko dti_sample.ko   (a simulated device that traces itself with a DTI handle)"
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_sample.ko
wait_for "[ -e $D/dti_sample/merged ]"
echo "channel created on the driver's first record:"
ls $D/dti_sample

say "submit 6 requests, make the next one hang (watchdog timeout + reset), submit 3 more"
echo 500 > $S/rate_hz
echo 6 > $S/submit
wait_for "grep -q 'completed 6' $S/counters"
echo timeout > $S/fault
echo 3 > $S/submit
wait_for "grep -q 'completed 8' $S/counters"

say "cat $D/dti_sample/merged-ts   (all CPUs, time order; the requests are events of a registered type)"
cat $D/dti_sample/merged-ts

say "echo 3 > level: keep only errors; 5 more requests"
echo 3 > $D/dti_sample/level
echo 5 > $S/submit
wait_for "grep -q 'completed 13' $S/counters"
cat $D/dti_sample/stats

say "the driver's own counters"
cat $S/counters

say "dti read -F ts --symbols dti_sample | tail -n 4   (the dti command reads the per-CPU files)"
dti read -F ts --symbols dti_sample | tail -n 4

say "echo destroy > level: buffers freed, control files stay"
echo destroy > $D/dti_sample/level
ls $D/dti_sample
"""


def main() -> int:
    kernel = find_kernel()
    mods = []
    for d in ("kmod", "examples"):
        subprocess.run(["make", "-s", "-C", str(REPO / d), f"KVER={kernel.release}"],
                       check=True, stdout=subprocess.DEVNULL)
        mods += sorted((REPO / d).rglob("*.ko"))
    subprocess.run(["make", "-s", "-C", str(REPO / "runtime")], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"booting {kernel.release} in QEMU (TCG, 2 CPUs) ...", flush=True)
    res = run(SCRIPT, smp=2, modules=mods, kernel=kernel,
              extra_files={str(REPO / "runtime" / "build" / "dti"): "/bin/dti"})
    sys.stdout.write(res.stdout)
    splats = res.splats()
    if splats:
        print("\nkernel splats in the guest console:\n" + "\n".join(splats))
        return 1
    return res.rc


if __name__ == "__main__":
    sys.exit(main())
