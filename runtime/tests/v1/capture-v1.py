#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Capture a previous boot's records as dti.ko wrote them with record
version 1, into runtime/tests/v1/ (see README.md there):

    capture-v1.py OLD_TREE

OLD_TREE is a checkout of the last commit whose dti.ko and dti wrote and
read version 1 alone (56b1178), with `make -C runtime` done: its
testsuite harness boots Debian's kernel with its dti.ko, dti_test.ko and
dti.  Two runs of the same first boot, each reset by sysrq-b with the
records in a persistent region (memmap=), then booted again in the same
QEMU process:

  prev/        run 1, second boot: `dti save-previous` of the channels
               the first boot left (what dti-save-previous.service keeps
               in /var/lib/dti), one directory per channel
  persist.elf  run 2, second boot: pp registered again and logged into,
               then a panic; `dti dump --channel pp@boot1 --excerpt` of
               QEMU's ELF dump: the region alone (its header, slots,
               module tables and rings), in which dti dump finds
               pp@boot1, pq@boot1 (the first boot's rings) and pp@boot2
               (the second's, whose descriptor the excerpt leaves out)

About three minutes under TCG (2026-11-28: 2.6 with the modules to
build, 1.2 after).  Run again only to refresh them; then run
make-expected.py with the same tree's dti.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OLD = Path(sys.argv[1]).resolve() if len(sys.argv) == 2 else sys.exit(__doc__)
DTI = OLD / "runtime" / "build" / "dti"
sys.path.insert(0, str(OLD / "testsuite"))

from conftest import MODULE_DIRS, build_module_dir  # noqa: E402
from guestlib import persist_prelude  # noqa: E402
from harness import dump, initramfs, vm  # noqa: E402
from harness.kernel import find_kernel  # noqa: E402

# In the RAM of a guest of dump.QEMU_DUMP_MEM MiB, as test_persist.py's dump test.
REGION, MEMMAP = "8M@0x18000000", "memmap=8M$0x18000000"
PERSIST = "/sys/kernel/debug/dti/.persist"

# The first boot: pp (persistent, text and events of the types ints and
# mixed, their formats in every sub-buffer) and pq (persistent, binary)
# on both CPUs, plain (not persistent: not kept); then a reset.
FIRST = r"""
if [ "$BOOTNO" = 1 ]; then
    ctl register_sub pp 2048 2 7 2
    ctl register_sub pq 4096 2 7 2
    ctl register plain 8192 7
    ctl evreg pp ints
    ctl evreg pp mixed
    for c in 0 1; do
        ctl printk pp 6 8 $c process first$c
        ctl evlog pp 6 4 $c process plain
        ctl printk pp 3 2 $c softirq err$c
        ctl event pq 5 6 $c process 24
        ctl printk plain 6 4 $c process plain$c
    done
    sync
    DRAIN
    echo b > /proc/sysrq-trigger
    sleep 30
fi
"""

SAVE = r"""
dti save-previous --dir /tmp/saved > /out/save.txt 2>&1
mv /tmp/saved/* /out/prev
"""

AGAIN = r"""
ctl register_sub pp 2048 2 7 2
for c in 0 1; do ctl printk pp 6 3 $c process again$c; done
"""


def main() -> None:
    kernel = find_kernel()
    modules = [ko for d in MODULE_DIRS if (OLD / d / "Makefile").is_file()
               for ko in build_module_dir(OLD / d, kernel)]
    first = persist_prelude(REGION, PERSIST) + FIRST.replace("DRAIN", initramfs.DRAIN_OUTPUT)
    res = vm.run(first + SAVE, modules=modules, kernel=kernel, extra_files={str(DTI): "/bin/dti"},
                 mem=dump.QEMU_DUMP_MEM, append=MEMMAP, reboot=True, timeout=600).check()
    print((res.outdir / "save.txt").read_text(), end="")
    shutil.rmtree(HERE / "prev", ignore_errors=True)
    shutil.copytree(res.outdir / "prev", HERE / "prev")
    res = dump.qemu_dump(first + AGAIN, modules=modules, kernel=kernel, append=MEMMAP,
                         formats=("elf",), reboot=True)
    with tempfile.TemporaryDirectory() as tmp:
        excerpt = Path(tmp) / "persist.elf"
        subprocess.run([DTI, "dump", "--channel", "pp@boot1", "--excerpt", excerpt,
                        res.files["elf"]], check=True)
        shutil.copy(excerpt, HERE / "persist.elf")
    res.files["elf"].unlink()
    for p in [HERE / "persist.elf", *sorted((HERE / "prev").rglob("*"))]:
        if p.is_file():
            print(f"{p.relative_to(HERE)}: {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
