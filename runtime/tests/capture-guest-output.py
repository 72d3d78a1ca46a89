#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Capture the real guest output that the file readers' fuzz seeds and
bad-input suite start from, into runtime/tests/guest-output/:

  snap/            `dti snapshot` of channel sev (2 CPUs, 2 x 2048-byte
                   sub-buffers, both in use), which holds events of dti_test's
                   types "ints" and "mixed" and text: trace0, trace1, info, stats
  formats          sev's formats file
  kallsyms         an excerpt of the guest's /proc/kallsyms: its first
                   lines, and those of dti.ko and dti_test.ko
  console.log      the console of a guest that panicked with two channels'
                   dump_on_panic set (pa: text, pb: binary), from a little
                   before the panic to its end

Two boots of Debian's kernel through the test harness (about a minute).
Run again only to refresh them:
    /usr/bin/python3 runtime/tests/capture-guest-output.py
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent.parent
sys.path.insert(0, str(REPO / "testsuite"))

from conftest import MODULE_DIRS, build_module_dir  # noqa: E402
from guestlib import PRELUDE  # noqa: E402
from harness import vm  # noqa: E402
from harness.kernel import find_kernel  # noqa: E402

OUT = TESTS / "guest-output"
DTI_BIN = REPO / "runtime" / "build" / "dti"

SNAP_SCRIPT = PRELUDE + r"""
ctl register_sub sev 2048 2 7 0
ctl register_sub stxt 65536 4 7 0
ctl evreg sev ints
ctl evreg sev mixed
for c in 0 1; do
    ctl printk sev 6 30 $c process text$c
    ctl evlog sev 6 6 $c process stxt
    ctl printk sev 4 2 $c hardirq tail$c
done
dti snapshot sev /out/snap
cat $D/sev/formats > /out/formats
{ head -n 24 /proc/kallsyms; grep '\[dti\]$' /proc/kallsyms | head -n 48
  grep '\[dti_test\]$' /proc/kallsyms | head -n 16; } > /out/kallsyms
"""

PANIC_SCRIPT = PRELUDE + r"""
ctl register_sub pa 4096 4 7 0
ctl register_sub pb 4096 4 7 0
for c in 0 1; do
    ctl printk pa 6 6 $c process a$c
    ctl event pb 5 4 $c softirq 20
done
printf 'printk pa 6 1 0 process <q\\z\303\251\n' > $T
echo 5 > $D/pa/dump_on_panic
echo 4 > $D/pb/dump_on_panic
echo c > /proc/sysrq-trigger
"""


def console_excerpt(console: str) -> str:
    """The panic's part of a console log: from a few lines before the
    first "dti: panic: " line to the end of the last channel."""
    lines = console.splitlines()
    first = next(i for i, x in enumerate(lines) if "dti: panic: " in x)
    last = max(i for i, x in enumerate(lines) if "dti: panic: ---- end" in x)
    return "\n".join(lines[max(0, first - 6):last + 3]) + "\n"


def main() -> None:
    kernel = find_kernel()
    modules = [ko for d in MODULE_DIRS if (REPO / d / "Makefile").is_file()
               for ko in build_module_dir(REPO / d, kernel)]
    extra = {str(DTI_BIN): "/bin/dti"}
    res = vm.run(SNAP_SCRIPT, modules=modules, extra_files=extra, kernel=kernel).check()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()
    shutil.copytree(res.outdir / "snap", OUT / "snap")
    for name in ("formats", "kallsyms"):
        shutil.copy(res.outdir / name, OUT / name)
    try:
        vm.run(PANIC_SCRIPT, modules=modules, extra_files=extra, kernel=kernel)
        sys.exit("the guest did not panic")
    except vm.VMPanic as e:
        (OUT / "console.log").write_text(console_excerpt(e.console))
    for p in sorted(OUT.rglob("*")):
        if p.is_file():
            print(f"{p.relative_to(TESTS)}: {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
