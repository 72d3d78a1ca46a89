"""dti.ko's persistent region (issue 21, first part): persist=SIZE@ADDR.

* A range that is not reserved RAM is refused at load, with a message
  that says why and how to reserve it: ordinary RAM, a range the memory
  map does not call reserved, a misaligned one, a value that does not
  parse.
* A region reserved with memmap= keeps dti.ko's header across a guest
  reset (sysrq-b, and a panic with panic=1) in the same QEMU process:
  the first boot finds it new, the second kept, with the boot counted.

Timings on the reference host: ~10 s for the refusals, ~20 s per reset.
"""

from __future__ import annotations

import re

from harness import vm

GUEST_MEM = 1024                        # MiB: the region lies below its end
REGION = "16M@0x30000000"
MEMMAP = "memmap=16M$0x30000000"
PERSIST = "/sys/kernel/debug/dti/.persist"

REFUSE_SCRIPT = r"""
try_load() {
    if insmod $DTI_MODDIR/dti.ko persist=$1 2>/dev/null; then
        echo "@@LOADED $1"; rmmod dti
    else
        echo "@@REFUSED $1"
    fi
}
try_load 16M@0x10000000
try_load 16M@0x7f000000
try_load 16M@0x30000800
try_load sixteen
dmesg | grep "dti: persist=" | sed 's/^\[[^]]*\] /@@MSG /'
"""


def test_wrong_range_is_refused(modules, kernel, build_dir):
    """Without memmap=, no range is reserved: RAM the kernel uses, a
    range beyond it, a misaligned one and garbage are all refused."""
    res = vm.run(REFUSE_SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir,
                 mem=GUEST_MEM).check()
    out = res.stdout
    for arg in ("16M@0x10000000", "16M@0x7f000000", "16M@0x30000800", "sixteen"):
        assert f"@@REFUSED {arg}" in out, out
    msgs = re.findall(r"^@@MSG (.*)$", out, re.M)
    assert any("16M@0x10000000: the range is RAM the kernel uses; reserve it first: "
               "memmap=0x1000000$0x10000000" in m for m in msgs), msgs
    assert any("16M@0x7f000000: the memory map does not say the range is reserved" in m
               for m in msgs), msgs
    assert any("16M@0x30000800: the address and the size must be multiples of the page size"
               in m for m in msgs), msgs
    assert any("persist=sixteen: not SIZE@ADDR" in m for m in msgs), msgs


RESET_SCRIPT = rf"""
insmod $DTI_MODDIR/dti.ko persist={REGION}
echo "@@PERSIST $(tr '\n' ' ' < {PERSIST})"
if grep -q "^boots 1$" {PERSIST}; then
    RESET
fi
"""


def reset_boots(kernel, build_dir, modules, reset: str, append: str = "") -> list[str]:
    res = vm.run(RESET_SCRIPT.replace("RESET", reset), modules=modules, kernel=kernel,
                 build_dir=build_dir, mem=GUEST_MEM, append=f"{MEMMAP} {append}".strip(),
                 reboot=True)
    res.check()
    return re.findall(r"^@@PERSIST (.*?)\s*$", res.console + "\n" + res.stdout, re.M)


def test_region_kept_across_sysrq_reset(modules, kernel, build_dir):
    """sysrq-b resets at once, no notifier: the header is still there."""
    boots = reset_boots(kernel, build_dir, modules, "echo b > /proc/sysrq-trigger")
    assert boots[-1] == "region 0x0000000030000000 16777216 boots 2 found kept", boots


def test_region_kept_across_panic_reboot(modules, kernel, build_dir):
    """A panic with panic=1 reboots after a second."""
    boots = reset_boots(kernel, build_dir, modules, "echo c > /proc/sysrq-trigger",
                        "panic=1")
    assert boots[-1] == "region 0x0000000030000000 16777216 boots 2 found kept", boots
