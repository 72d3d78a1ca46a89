"""Find kernel splats (WARN, BUG, Oops, lockdep, hung task, RCU stall...) in a console log.

`find_splats(console_text, allow=())` returns the offending lines (with the
printk timestamp stripped), in order.  Boot noise is not flagged: in
particular the taint lines printed whenever an unsigned out-of-tree module
is loaded, and CPU-bug notices such as "RETBleed: WARNING: ..." where
"WARNING:" does not start the message.  `allow` is a list of regexes; a
splat is not reported when one of them matches (re.search) its line, or
its line and the ALLOW_CONTEXT lines after it joined by newlines (so that
a splat can be allowed by who caused it: "caller is ...", "Preemption
disabled at: ...").  FOREIGN_SPLATS are always allowed.

`panic_text(console_text)` returns the "Kernel panic - not syncing" line and
the lines leading up to it, or None.
"""

from __future__ import annotations

import re
from typing import Iterable

# "[    1.234567] " and optional caller id "[    T1] " / "[  C0] ".
_PREFIX = re.compile(r"^(?:<\d+>)?(?:\[\s*\d+\.\d+\]\s?)?(?:\[\s*[TC]\d+\]\s?)?")

# Matched against the message with the timestamp prefix removed.
SPLAT_PATTERNS: list[str] = [
    r"^WARNING:",                       # WARN(), lockdep, RCU-lockdep ...
    r"\bWARNING: CPU: \d+ PID: \d+",    # WARN() even if something precedes it
    r"\bBUG: ",                         # BUG: kernel NULL pointer ..., soft lockup, KASAN ...
    r"\bBUG:$",
    r"\bkernel BUG at ",
    r"^Oops\b",
    r"\bOops: [0-9a-f]{4} \[#\d+\]",
    r"\binvalid opcode: [0-9a-f]{4} \[#\d+\]",
    r"general protection fault",
    r"Kernel panic",
    r"possible circular locking",
    r"possible recursive locking",
    r"inconsistent lock state",
    r"INFO: task .* blocked for more than",
    r"INFO: task .* blocked",
    r"UBSAN:",
    r"KASAN:",
    r"KFENCE:",
    r"rcu_\w+ (self-)?detected (expedited )?stalls?",
    r"RCU stall",
    r"sleeping function called from invalid context",
    r"scheduling while atomic",
    r"list_(add|del) corruption",
    r"refcount_t: ",
    r"NMI watchdog: .*(hard|soft) LOCKUP",
    r"\bhard LOCKUP\b",
    r"Unable to handle kernel",
    r"unchecked MSR access error",
    r"stack-protector: Kernel stack is corrupted",
    # SLUB's own checks (slub_debug=FZ): "BUG kmalloc-64 (Tainted: ...): Right Redzone overwritten"
    r"^BUG [\w.:-]+ \(.*\): ",
    # The debug kernel's checkers (make debug-kernel).  KASAN ("BUG: KASAN:"),
    # lockdep ("WARNING: possible circular locking ...") and UBSAN are above.
    r"kmemleak: \d+ new suspected memory leaks?",
    r"kmemleak: unreferenced object 0x",     # /init's report, see initramfs.py
    r"kmemleak: .*unknown object",           # kmemleak_warn(): API misuse
    r"kmemleak: (Kernel memory leak detector disabled|Memory pool empty|Cannot )",
    r"\bODEBUG: .* object type: ",           # debugobjects: free active, ...
    r"\bODEBUG: Out of memory",
    r"lockdep: turned off during the test",  # /init's check, see initramfs.py
]

_SPLAT_RE = re.compile("|".join(f"(?:{p})" for p in SPLAT_PATTERNS))
# Lines after a splat's own that an allow pattern may look at
ALLOW_CONTEXT = 12

# Splats of others' code that the debug kernel's checkers show and that
# DTI cannot fix, always allowed, each only where the lines after it name
# the code at fault.  SystemTap 4.8's runtime (seen on 6.1.192-dti-debug,
# 2026-11-25): _stp_ctl_write_cmd() calls kallsyms_on_each_symbol(), which
# may sleep, with preemption off; _stp_runtime_context_trylock() calls
# smp_processor_id() from preemptible code.
FOREIGN_SPLATS = [
    r"sleeping function called from invalid context at kernel/kallsyms\.c:\d+\n"
    r"(?:(?!BUG:).*\n){0,8}Preemption disabled at:\n\[<\w+>\] _stp_ctl_write_cmd[.+]",
    r"smp_processor_id\(\) in preemptible .*\ncaller is _stp_runtime_context_trylock\+",
]
_PANIC_RE = re.compile(r"Kernel panic - not syncing")


def strip_prefix(line: str) -> str:
    """The printk message without its "[  12.345678] " timestamp prefix."""
    return _PREFIX.sub("", line.rstrip("\r\n"), count=1)


def find_splats(console_text: str, allow: Iterable[str] = ()) -> list[str]:
    """Lines of `console_text` that show a kernel splat, minus allowed ones."""
    allow_re = [re.compile(a) for a in (*FOREIGN_SPLATS, *allow)]
    lines = console_text.splitlines()
    found = []
    for i, raw in enumerate(lines):
        msg = strip_prefix(raw).strip()
        if not msg or not _SPLAT_RE.search(msg):
            continue
        ctx = "\n".join([msg] + [strip_prefix(x).strip()
                                 for x in lines[i + 1: i + 1 + ALLOW_CONTEXT]])
        if any(a.search(msg) or a.search(ctx) for a in allow_re):
            continue
        found.append(msg)
    return found


def splat_context(console_text: str, splat: str, after: int = 25) -> str:
    """The console lines around the first line containing `splat`, for reports.

    Starts at a "[ cut here ]" line just above (so a WARN()'s message shows).
    """
    lines = console_text.splitlines()
    for i, raw in enumerate(lines):
        if splat in raw:
            start = i
            for j in range(i - 1, max(-1, i - 4), -1):   # WARN(): "cut here" + message
                if "[ cut here ]" in lines[j]:
                    start = j
                    break
            return "\n".join(lines[start: i + after + 1])
    return splat


def panic_text(console_text: str, after: int = 40) -> str | None:
    """The kernel panic with the splat that led to it, or None if no panic.

    Starts at the first splat line in the 150 lines before the panic line
    (e.g. the BUG:/Oops that became a panic through oops=panic), else 5
    lines before it, and runs `after` lines past it.
    """
    lines = console_text.splitlines()
    for i, raw in enumerate(lines):
        if _PANIC_RE.search(raw):
            start = max(0, i - 5)
            for j in range(max(0, i - 150), i):
                if _SPLAT_RE.search(strip_prefix(lines[j])):
                    start = min(start, j)
                    break
            return "\n".join(lines[start: i + after + 1])
    return None


def tail(text: str, n: int = 40) -> str:
    """Last `n` lines of `text`."""
    return "\n".join(text.splitlines()[-n:])
