# SPDX-License-Identifier: GPL-2.0
"""The dti commands run on the version-1 data kept here (README.md says
what each input is): expected/NAME.out, NAME.err and NAME.rc are what
dti of commit 56b1178, the last that knew record version 1 alone,
printed for CASES[NAME] run in this directory (make-expected.py wrote
them); test_v1.py holds today's dti to them."""
CASES = {
    # `dti snapshot` directory: every output format, the report, symbols
    "snap-text": ["decode", "snap"],
    "snap-json": ["decode", "-F", "json", "snap"],
    "snap-ts": ["decode", "-F", "ts", "snap"],
    "snap-report": ["decode", "--report", "snap"],
    "snap-raw": ["decode", "-F", "raw", "snap"],
    "snap-kallsyms": ["report", "--kallsyms", "kallsyms", "snap"],
    # one per-CPU trace file alone
    "trace0-text": ["decode", "snap/trace0"],
    "trace0-json": ["decode", "-F", "json", "snap/trace0"],
    # the records-alone stream of -F raw
    "alone-text": ["decode", "records-alone.raw"],
    "alone-json": ["decode", "-F", "json", "records-alone.raw"],
    # the panic print on a console
    "console-text": ["console-log", "console.log"],
    "console-json": ["console-log", "-F", "json", "console.log"],
    # excerpts of QEMU dumps
    "wrap8k-text": ["dump", "wrap8k.elf"],
    "wrap8k-ts": ["dump", "-F", "ts", "wrap8k.elf"],
    "h_early-text": ["dump", "h_early.elf"],
    "h_early-json": ["dump", "-F", "json", "h_early.elf"],
    "h_early-list": ["dump", "--list", "h_early.elf"],
    "h_raw-text": ["dump", "h_raw.elf"],
    "h_raw-json": ["dump", "-F", "json", "h_raw.elf"],
    "gone-text": ["dump", "gone.elf"],
    "gone-json": ["dump", "-F", "json", "gone.elf"],
    # a previous boot: as dti save-previous saved it, and in a dump's
    # persistent region
    "prev-text": ["decode", "prev/pp", "prev/pq"],
    "prev-json": ["decode", "-F", "json", "prev/pp", "prev/pq"],
    "prev-ts": ["decode", "-F", "ts", "prev/pp"],
    "prev-report": ["report", "prev/pp", "prev/pq"],
    "persist-list": ["dump", "--list", "persist.elf"],
    "persist-text": ["dump", "persist.elf"],
    "persist-json": ["dump", "-F", "json", "persist.elf"],
    "persist-boot1": ["dump", "--channel", "pq@boot1,pp@boot1", "-F", "ts", "persist.elf"],
}
