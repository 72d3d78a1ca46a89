#!/usr/bin/env python3
"""`make demo`: boot the guest kernel, load DTI, log records, show them.

Builds the modules if needed, boots Debian's kernel in QEMU (TCG, 2 CPUs)
and runs a short session a driver developer would: create a channel,
log from process, softirq and hardirq context on both CPUs, change the
level from userspace, and read the merged views and the counters.
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
T=/sys/kernel/debug/dti_test/ctl
ctl() { echo "$*" > $T; case "$(cat $T)" in ret=0*) ;; *) echo "failed: $*: $(cat $T)"; exit 1;; esac; }
D=/sys/kernel/debug/dti

say "insmod dti.ko; a client registers channel 'demo' (64 KiB per CPU, level 3)"
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_test.ko
ctl register demo 65536 3
ls $D/demo

say "log 3 records each from process, softirq and hardirq context on CPU 0 and 1"
for cpu in 0 1; do
    ctl printk demo 3 3 $cpu process process-ctx/cpu$cpu
    ctl printk demo 2 3 $cpu softirq timer-softirq/cpu$cpu
    ctl printk demo 1 3 $cpu hardirq hrtimer-hardirq/cpu$cpu
done
ctl printk demo 6 3 0 process filtered-at-level-3

say "cat $D/demo/merged-ts  (time-ordered across CPUs)"
cat $D/demo/merged-ts

say "echo 7 > level; a binary event; cat merged"
echo 7 > $D/demo/level
ctl printk demo 6 1 1 process stored-at-level-7
ctl event demo 5 1 0 process 16
cat $D/demo/merged | tail -n 3

say "cat $D/demo/stats"
cat $D/demo/stats

say "echo destroy > level: buffers freed, control files stay"
echo destroy > $D/demo/level
ls $D/demo
"""


def main() -> int:
    kernel = find_kernel()
    mods = []
    for d in ("kmod", "testsuite/modules"):
        subprocess.run(["make", "-s", "-C", str(REPO / d), f"KVER={kernel.release}"],
                       check=True, stdout=subprocess.DEVNULL)
        mods += sorted((REPO / d).glob("*.ko"))
    print(f"booting {kernel.release} in QEMU (TCG, 2 CPUs) ...", flush=True)
    res = run(SCRIPT, smp=2, modules=mods, kernel=kernel)
    sys.stdout.write(res.stdout)
    splats = res.splats()
    if splats:
        print("\nkernel splats in the guest console:\n" + "\n".join(splats))
        return 1
    return res.rc


if __name__ == "__main__":
    sys.exit(main())
