# SPDX-License-Identifier: GPL-2.0
"""Version-1 data kept from 2026-11-28, and what dti printed for it then.

Every input here was written by dti.ko with record version 1 (whole
40-byte headers), before version 2 made records compact; readers must
go on reading it exactly as they did:

  snap/             `dti snapshot` of channel sev on a 2-CPU guest of
                    Debian 12's kernel 6.1 (2026-11-27, capture-guest-output.py):
                    text records and events of the types "ints" and "mixed"
  formats           sev's formats file
  records-alone.raw `dti decode -F raw snap`: the records-alone stream
  console.log       the console of a guest that panicked with two channels'
                    dump_on_panic set (pa: text, pb: binary)
  wrap8k.elf, h_early.elf, gone.elf
                    excerpts (`dti dump --excerpt`) of QEMU dumps of 6.1
                    guests: a wrapped ring, an early handle's pending
                    store replayed, a channel that was destroyed

expected/NAME.out and NAME.err are what dti (commit 56b1178, the last
that knew version 1 alone) printed for CASES[NAME], and NAME.rc its exit
status; make-expected.py wrote them.  test_v1.py holds today's dti to them.
"""
CASES = {
    "snap-text": ["decode", "snap"],
    "snap-json": ["decode", "-F", "json", "snap"],
    "snap-ts": ["decode", "-F", "ts", "snap"],
    "snap-report": ["decode", "--report", "snap"],
    "snap-raw": ["decode", "-F", "raw", "snap"],
    "alone-json": ["decode", "-F", "json", "records-alone.raw"],
    "console-text": ["console-log", "console.log"],
    "console-json": ["console-log", "-F", "json", "console.log"],
    "wrap8k-ts": ["dump", "-F", "ts", "wrap8k.elf"],
    "h_early-json": ["dump", "-F", "json", "h_early.elf"],
    "gone-text": ["dump", "gone.elf"],
    "h_early-list": ["dump", "--list", "h_early.elf"],
}
