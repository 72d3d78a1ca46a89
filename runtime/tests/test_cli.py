# SPDX-License-Identifier: GPL-2.0
"""The dti command on the host: options, messages, exit status, output
files, standard input, snapshot on a fake debugfs tree, dump of synthetic
memory dumps (ELF cores, flattened), and the man page's EXAMPLE built
against the installed libdti.

Run after `make -C runtime` (`make -C runtime check` does):
    python3 -m pytest -q runtime/tests/test_cli.py
DTI_BUILD names the build directory (default runtime/build).

Every exit code a case in CASES expects must be documented in the EXIT
STATUS section of dti.1, and every documented code expected by a case.
"""
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("DTI_BUILD", RUNTIME / "build")).resolve()
DTI = BUILD / "dti"

# struct dti_record and struct dti_subbuf_info of <linux/dti_record.h>
HDR = struct.Struct("<HBBbBHIIQQQ")
SUBINFO = struct.Struct("<6I32s")
MAGIC, TEXT, SUBBUF = 0xD71A, 0x01, 0x80
CALLER = 0xffffffffc0001234
BOOT_ID = "/proc/sys/kernel/random/boot_id"


def rec(cpu, seq, ts, payload, flags=TEXT, level=3, log_cpu=None):
    """A record of CPU `cpu`'s buffer, logged by `log_cpu` (default: `cpu`)."""
    if isinstance(payload, str):
        payload = payload.encode()
    raw = HDR.pack(MAGIC, 1, flags, level, HDR.size, cpu, len(payload),
                   cpu if log_cpu is None else log_cpu, seq, ts, CALLER) + payload
    return raw + bytes(-len(raw) % 8)


def stream(cpu, texts, name=b"test", base=1000000000):
    """What read() of a trace file of channel `name` returns: a sub-buffer
    header, texts (logged every 10 ns from `base` + cpu)."""
    info = SUBINFO.pack(4096, 4, 0, len(texts), 0, 0, name)
    data = rec(cpu, 0, 1, info, flags=SUBBUF, level=0)
    for i, text in enumerate(texts):
        data += rec(cpu, i, base + 10 * i + cpu, text)
    return data


# struct dti_dump_desc, dti_dump_cpu, dti_dump_pending of <linux/dti_record.h>
DESC = struct.Struct("<40sIHHIIIIIIIIQQII")
DCPU = struct.Struct("<QII")
DPEND = struct.Struct("<40sIHHIIQQII")
DUMP_MAGIC, DUMP_CHANNEL, DUMP_PENDING, F_BUFFERS, PENDING = 0xD7D0B1E5, 1, 2, 1, 0x10
PAGE = 4096
GEN = 0x600D


def marker(name):
    return (b"__DTI__" + name.encode()).ljust(40, b"\0")


def put(mem, addr, data):
    mem[addr:addr + len(data)] = data


def channel(mem, name, at, ring_page, texts, level=3, base=2000000000):
    """A channel descriptor at `at` (its CPU table, page list and level
    after it) of one CPU with a ring of 2 x 2048 bytes in page
    `ring_page`, sub-buffer 0 holding `texts` (logged every 10 ns from
    `base`)."""
    table, pfns, level_at = at + 0x200, at + 0x300, at + 0x380
    info = SUBINFO.pack(2048, 2, 0, len(texts), 0, GEN, name.encode())
    sub = rec(0, 0, 1, info, flags=SUBBUF, level=0)
    for i, text in enumerate(texts):
        sub += rec(0, i, base + 10 * i, text)
    put(mem, ring_page * PAGE, sub)
    page_list = struct.pack("<Q", ring_page)
    put(mem, pfns, page_list)
    cpus = DCPU.pack(pfns, 1, zlib.crc32(page_list))
    put(mem, table, cpus)
    put(mem, level_at, struct.pack("<i", level))
    desc = DESC.pack(marker(name), DUMP_MAGIC, 1, DUMP_CHANNEL, DESC.size, F_BUFFERS,
                     GEN, 2048, 2, 1, PAGE, zlib.crc32(cpus), level_at, table, 0, 0)
    put(mem, at, desc[:-8] + struct.pack("<II", zlib.crc32(desc), 0))


def elf_core(mem):
    """An ELF core of x86_64 with `mem` as physical memory from 0."""
    ehdr = struct.pack("<4sBBBBB7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,
                       4, 62, 1, 0, 64, 0, 0, 64, 56, 1, 64, 0, 0)
    phdr = struct.pack("<IIQQQQQQ", 1, 7, PAGE, 0, 0, len(mem), len(mem), PAGE)
    return (ehdr + phdr).ljust(PAGE, b"\0") + bytes(mem)


def flattened(data):
    """`data` in makedumpfile's flattened format, in two pieces."""
    half = len(data) // 2
    return (b"makedumpfile".ljust(16, b"\0") + struct.pack(">qq", 1, 1)).ljust(PAGE, b"\0") + \
        struct.pack(">qq", half, len(data) - half) + data[half:] + \
        struct.pack(">qq", 0, half) + data[:half] + struct.pack(">qq", -1, -1)


def make_vmcore(d):
    """Channels "cli" (its CRC right) and "bad" (its CRC wrong), and an
    early handle's pending store "early", which no read_virt() reaches
    (an ELF core of no kernel: no address translation)."""
    mem = bytearray(8 * PAGE)
    channel(mem, "cli", PAGE, 3, ["dump-a", "dump-b", "dump-c"])
    channel(mem, "bad", 2 * PAGE, 4, ["never"])
    mem[2 * PAGE + 60] ^= 1
    pend = DPEND.pack(marker("early"), DUMP_MAGIC, 1, DUMP_PENDING, DPEND.size, 128,
                      0xffff888000006000, 4096, 0, 0)
    put(mem, 5 * PAGE, pend[:-8] + struct.pack("<II", zlib.crc32(pend), 0))
    put(mem, 5 * PAGE + 128, struct.pack("<Q", 48))
    core = elf_core(mem)
    (d / "vmcore").write_bytes(core)
    (d / "vmcore.flat").write_bytes(flattened(core))
    (d / "vmcore.cut").write_bytes(core[:PAGE + 4 * PAGE + 100])    # in "bad"'s ring


TEXTS = {0: ["zero-a", "zero-b", "zero-c"], 1: ["one-a", "one-b", "one-c"]}
LEVELS = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]
MERGED = "zero-a\none-a\nzero-b\none-b\nzero-c\none-c\n"


def make_snap(d, streams=None):
    d.mkdir(parents=True, exist_ok=True)
    for cpu, data in (streams or {c: stream(c, t) for c, t in TEXTS.items()}).items():
        (d / f"trace{cpu}").write_bytes(data)
    return d


def make_debugfs(root, level="3"):
    """<root>/dti/ch with the files dti reads and writes."""
    ch = root / "dti" / "ch"
    make_snap(ch)
    (ch / "level").write_text(level + "\n")
    (ch / "info").write_text("subbuf_size: 4096\nn_subbufs: 4\n")
    (ch / "stats").write_text("cpu written\n0 3\n1 3\ntotal 6\n")
    (ch / "reset_consumed").write_text("")
    return ch


def make_levels(d):
    """A snapshot of one CPU whose records "L0".."L7" have levels 0..7."""
    info = SUBINFO.pack(4096, 4, 0, 8, 0, 0, b"test")
    data = rec(0, 0, 1, info, flags=SUBBUF, level=0)
    for level in range(8):
        data += rec(0, level, 1000000000 + level, f"L{level}", level=level)
    return make_snap(d, {0: data})


@pytest.fixture
def work(tmp_path):
    """Files the cases name: {snap}, {damaged}, {fs}, {ksyms}, {tmp}."""
    make_snap(tmp_path / "snap")
    # trace0 with 40 bytes of garbage between its records: trace1 is whole
    t0 = stream(0, TEXTS[0])
    cut = len(t0) - 2 * len(rec(0, 0, 0, "zero-c"))
    make_snap(tmp_path / "damaged",
              {0: t0[:cut] + b"\xff" * 40 + t0[cut:], 1: stream(1, TEXTS[1])})
    make_debugfs(tmp_path / "fs")
    (tmp_path / "ksyms").write_text("ffffffffc0001000 t mod_a\t[dti_test]\n"
                                    "ffffffffc0002000 t mod_b\t[dti_test]\n")
    (tmp_path / "notempty").mkdir()
    (tmp_path / "notempty" / "trace7").write_text("old")
    (tmp_path / "badmods").write_text("x 0x10 0x20 - live 1 0\nnot a line\n")
    make_snap(tmp_path / "badrel")
    (tmp_path / "badrel" / "release").write_text("a/b\n")
    make_levels(tmp_path / "levels")
    make_vmcore(tmp_path)
    return tmp_path


def run(args, work=None, stdin=None, stdout=subprocess.PIPE, timeout=20):
    names = {"snap": "snap", "damaged": "damaged", "fs": "fs",
             "ksyms": "ksyms", "tmp": ".", "vmcore": "vmcore", "levels": "levels"}
    args = [a.format(**names) for a in args]
    return subprocess.run([str(DTI)] + args, cwd=work, input=stdin,
                          stdout=stdout, stderr=subprocess.PIPE,
                          timeout=timeout)


# (id, arguments, exit code, regex stdout must match, regex stderr must match)
CASES = [
    ("decode", ["decode", "{snap}"], 0, "^" + MERGED + "$", "^$"),
    ("decode files", ["decode", "{snap}/trace1", "{snap}/trace0"], 0, "^" + MERGED + "$", "^$"),
    ("decode -- file", ["decode", "--", "{snap}/trace0"], 0, "^zero-a\n", "^$"),
    ("cpu filter", ["decode", "-c", "1", "{snap}"], 0, "^one-a\none-b\none-c\n$", "^$"),
    ("cpu list", ["decode", "-c", "0,1", "{snap}"], 0, "^" + MERGED + "$", "^$"),
    ("cpu range", ["decode", "--cpu", "0-1", "{snap}"], 0, "^" + MERGED + "$", "^$"),
    ("cpu repeated adds up", ["decode", "-c", "1", "-c", "0", "{snap}"], 0, "^" + MERGED + "$",
     "^$"),
    ("cpu list backwards", ["decode", "-c", "1-0", "{snap}"], 129, "^$",
     r'^dti decode: -c/--cpu: CPU list "1-0": range 1-0 runs backwards\n'),
    ("cpu list not a number", ["decode", "-c", "0,x", "{snap}"], 129, "^$",
     r'^dti decode: -c/--cpu: CPU list "0,x": a CPU number was expected at "x"\n'),
    ("since after the first record", ["decode", "-S", "+10ns", "{snap}"], 0,
     "^zero-b\none-b\nzero-c\none-c\n$", "^$"),
    ("until before the last record", ["decode", "--until", "-5ns", "{snap}"], 0,
     "^zero-a\none-a\nzero-b\none-b\n$", "^$"),
    ("since and until from boot", ["decode", "-S", "1.00000001", "-U", "1.000000011", "{snap}"],
     0, "^zero-b\none-b\n$", "^$"),
    ("since after until", ["decode", "-S", "2", "-U", "1", "{snap}"], 129, "^$",
     r"^dti decode: --until: since is after until: no record can be in that time range\n"),
    ("since not a time", ["decode", "--since", "10d", "{snap}"], 129, "^$",
     r'^dti decode: --since: time "10d": expected SECONDS since boot \(12\.5\), \+TIME after '),
    ("until before the last needs a second read", ["decode", "-U", "-1s", "-"], 1, "^$",
     r"^dti: /dev/stdin: a pipe or live file cannot be read twice\n"),
    ("grep ignores case without a capital", ["decode", "-g", "b$", "{snap}"], 0,
     "^zero-b\none-b\n$", "^$"),
    ("grep exact with a capital", ["decode", "--grep", "B", "{snap}"], 0, "^$", "^$"),
    ("grep case-sensitive", ["decode", "-g", "one", "--case-sensitive", "{snap}"], 0,
     "^one-a\none-b\none-c\n$", "^$"),
    ("grep not a regex", ["decode", "-g", "(", "{snap}"], 129, "^$",
     r'^dti decode: -g/--grep: "\(" is no regular expression: '),
    ("case-sensitive alone", ["decode", "--case-sensitive", "{snap}"], 129, "^$",
     "^dti decode: --case-sensitive is for -g/--grep\n"),
    ("filter on record fields", ["decode", "--filter", "cpu == 1 && seq > 0", "{snap}"], 0,
     "^one-b\none-c\n$", "^$"),
    ("filter on a level name", ["decode", "--filter", "level <= warning && level >= err",
                                "{levels}"], 0, "^L3\nL4\n$", "^$"),
    ("filter not an expression", ["decode", "--filter", "status !=", "{snap}"], 129, "^$",
     r'^dti decode: --filter: expression "status !=": a value was expected at column 10 '
     r"\(the end\)\n"),
    ("filter on a field nothing has", ["decode", "--filter", "nosuch == 1", "{snap}"], 1, "^$",
     r'^dti: filter: expression "nosuch == 1": no field nosuch: not one of every record\'s '
     r"\(event, level, cpu, seq\), nor of an event type read \(none was read\)\n$"),
    ("priority err and more severe", ["decode", "-p", "err", "{levels}"], 0,
     "^L0\nL1\nL2\nL3\n$", "^$"),
    ("priority range", ["decode", "--priority", "warning..err", "{levels}"], 0, "^L3\nL4\n$", "^$"),
    ("priority range either way", ["decode", "-p", "err..warning", "{levels}"], 0,
     "^L3\nL4\n$", "^$"),
    ("priority any case, syslog's names", ["decode", "-p", "ERROR..Panic", "{levels}"], 0,
     "^L0\nL1\nL2\nL3\n$", "^$"),
    ("priority number", ["decode", "-p", "6", "{levels}"], 0, "^L0\n(.|\n)*L6\n$", "^$"),
    ("priority not a level", ["decode", "-p", "loud", "{levels}"], 129, "^$",
     r"^dti decode: -p/--priority takes LEVEL or LEVEL\.\.LEVEL, not 'loud' \(0\.\.7 or emerg, "),
    ("priority off is no record level", ["decode", "-p", "off", "{levels}"], 129, "^$",
     r"^dti decode: -p/--priority takes LEVEL or LEVEL\.\.LEVEL, not 'off' "),
    ("priority twice", ["decode", "-p", "err", "-p", "debug", "{levels}"], 129, "^$",
     "^dti decode: -p/--priority given twice\n"),
    ("min-level gone", ["decode", "--min-level", "3", "{levels}"], 129, "^$",
     r"^dti decode: --min-level and --max-level are gone: -p/--priority LEVEL keeps LEVEL "
     r"and more severe"),
    ("previous has no -p", ["--debugfs", "{fs}", "read", "-p", "ch"], 129, "^$",
     r"^dti read: -p/--priority takes LEVEL or LEVEL\.\.LEVEL, not 'ch' "),
    ("callers asked for: ts by default", ["decode", "--kallsyms", "{ksyms}", "{snap}"], 0,
     r"^\[    1.000000000\] cpu0 L3 #0 mod_a\+0x234/0x1000 \[dti_test\]: zero-a\n", "^$"),
    ("text prints no callers", ["decode", "-F", "text", "--lines", "{snap}"], 129, "^$",
     r"^dti decode: -F text prints no callers: --symbols, --kallsyms, --lines, -d and "
     r"--modules are for -F ts \(their default\), hex or json\n"),
    ("json caller: the address and its symbol", ["decode", "-F", "json", "--kallsyms", "{ksyms}",
                                                 "{snap}/trace0"], 0,
     r'^\{"ts_ns":"1000000000","channel":"test","cpu":0,"level":3,"seq":"0","flags":1,'
     r'"caller":"0xffffffffc0001234","symbol":"mod_a\+0x234/0x1000 \[dti_test\]",'
     r'"text":"zero-a"\}\n', "^$"),
    ("ts format with kallsyms", ["decode", "-F", "ts", "--kallsyms", "{ksyms}", "{snap}"], 0,
     r"^\[    1.000000000\] cpu0 L3 #0 mod_a\+0x234/0x1000 \[dti_test\]: zero-a\n", "^$"),
    ("version", ["-V"], 0, r"^dti version [0-9.]+ \(record formats 1 to 2; --journal: (libsystemd|none)\)\n$", "^$"),
    ("version long", ["--version"], 0, "^dti version ", "^$"),
    ("help command", ["help", "decode"], 0, "^usage: dti decode ", "^$"),
    ("help", ["--help"], 0, "^usage: dti ", "^$"),
    ("level", ["--debugfs", "{fs}", "level", "ch"], 0, r"^3 \(err\)\n$", "^$"),
    ("level -1", ["--debugfs", "{fs}", "level", "ch", "-1"], 0, "^$", "^$"),
    ("level -- ch -2", ["--debugfs", "{fs}", "level", "--", "ch", "-2"], 0, "^$", "^$"),
    ("read fake debugfs", ["--debugfs={fs}", "read", "ch"], 0, "^" + MERGED + "$", "^$"),
    ("stats", ["--debugfs", "{fs}", "stats", "ch"], 0, "^cpu written\n", "^$"),
    ("list", ["--debugfs", "{fs}", "list"], 0, r"\nch +3 \(err\) +16384 +6 ", "^$"),
    ("damage skipped", ["decode", "{damaged}"], 2, "one-c\n",
     r"^dti: .*damaged/trace0.*offset"),
    ("damage quiet", ["decode", "-q", "{damaged}"], 2, "one-c\n", "^$"),
    ("damage strict", ["decode", "--strict", "{damaged}"], 1, "^zero-a\n",
     r"dti: .*damaged/trace0.*offset"),
    ("missing file", ["decode", "{snap}/trace9"], 1, "^$",
     "^dti: snap/trace9: No such file or directory\n$"),
    ("missing kallsyms", ["decode", "--kallsyms", "nokallsyms", "{snap}"], 1, "^$",
     "^dti: nokallsyms: No such file or directory\n$"),
    ("help unknown", ["help", "nope"], 1, "^$", "'nope' is not a dti command"),
    ("output to a full disk", ["decode", "-F", "raw", "-o", "/dev/full", "{snap}"], 1, "^$",
     "^dti: writing /dev/full: No space left on device\n$"),
    ("output not writable", ["decode", "-o", "nodir/out", "{snap}"], 1, "^$",
     "^dti: nodir/out: No such file or directory\n$"),
    ("not debugfs", ["--debugfs", "{snap}", "list"], 1, "^$", "DTI is not loaded"),
    ("snapshot not empty", ["--debugfs", "{fs}", "snapshot", "ch", "notempty"], 1, "^$",
     r"^dti: notempty: directory is not empty .*--force"),
    ("unknown option", ["decode", "--bogus", "{snap}"], 129, "^$",
     r"^dti decode: unrecognized option '--bogus'\nusage: dti decode .*\n\(see 'dti decode --help'\)\n$"),
    ("unknown short option", ["decode", "-z", "{snap}"], 129, "^$", "invalid option -- 'z'"),
    ("missing argument", ["decode", "{snap}", "--format"], 129, "^$",
     "option '--format' requires an argument"),
    ("follow is for read", ["decode", "--follow", "{snap}"], 129, "^$",
     "unrecognized option '--follow'"),
    ("no-reset is for read", ["decode", "--no-reset", "{snap}"], 129, "^$",
     "unrecognized option '--no-reset'"),
    ("bad format", ["decode", "-F", "xml", "{snap}"], 129, "^$", "unknown format 'xml'"),
    ("ctf needs a directory", ["decode", "-F", "ctf", "{snap}"], 129, "^$",
     r"^dti decode: -F ctf writes a directory: -o DIR\n"),
    ("ctf is no follow", ["--debugfs", "{fs}", "read", "-f", "-F", "ctf", "-o", "ctf", "ch"],
     129, "^$", r"^dti read: a CTF trace is written of the records there are: no --report, "
     r"--follow, --list, --out or --excerpt\n"),
    ("ctf callers are addresses", ["decode", "-F", "ctf", "-o", "ctf", "--lines", "{snap}"], 129,
     "^$", r"^dti decode: CTF events carry callers as addresses: no --symbols, "),
    ("export writes ctf", ["export", "-F", "json", "ctf", "{snap}"], 129, "^$",
     r"^dti export: -F/--format: dti export writes ctf \(CTF 1\.8\) or perfetto\n"),
    ("export DIR is an operand", ["export", "-o", "ctf", "{snap}"], 129, "^$",
     r"^dti export: -o: the trace's directory is the first operand, DIR\n"),
    ("export no input", ["export", "ctf"], 129, "^$", r"^dti export: missing DIR or input\n"),
    ("export into a file", ["export", "{snap}/trace0", "{snap}"], 1, "^$",
     r"^dti: snap/trace0: Not a directory\n$"),
    ("export not empty", ["export", "notempty", "{snap}"], 1, "^$",
     r"^dti: notempty: directory is not empty: a CTF trace is written into a new or empty one\n$"),
    ("perfetto is no follow", ["--debugfs", "{fs}", "read", "-f", "-F", "perfetto", "ch"], 129,
     "^$", r"^dti read: a Perfetto trace is written of the records there are: no --report, "
     r"--follow, --list, --out or --excerpt\n"),
    ("export perfetto no input", ["export", "-F", "perfetto", "t.pftrace"], 129, "^$",
     r"^dti export: missing FILE or input\n"),
    ("export perfetto FILE is an operand", ["export", "-F", "perfetto", "-o", "x", "{snap}"],
     129, "^$", r"^dti export: -o: the trace's file is the first operand, FILE\n"),
    ("export perfetto unwritable", ["export", "-F", "perfetto", "no/dir/t.pftrace", "{snap}"], 1,
     "^$", r"^dti: no/dir/t.pftrace: No such file or directory\n$"),
    ("export perfetto a memory dump", ["export", "-F", "perfetto", "t.pftrace", "{vmcore}"], 1,
     "^$", r"^dti: vmcore: an ELF file \(as memory dumps are\), not DTI records: 'dti dump "
     r"vmcore' reads the channels of a memory dump\n$"),
    ("bad level", ["--debugfs", "{fs}", "level", "ch", "-3"], 129, "^$", "invalid level '-3'"),
    ("two stdin", ["decode", "-", "-"], 129, "^$", "standard input"),
    ("no command", [], 129, "^$", "^usage: dti "),
    ("unknown command", ["nope"], 129, "^$", "'nope' is not a dti command"),
    ("unknown global option", ["--bogus", "list"], 129, "^$", "^dti: unrecognized option '--bogus'"),
    ("snapshot one argument", ["snapshot", "ch"], 129, "^$", "expected CHANNEL and DIR"),
    ("write no channel", ["--debugfs", "{fs}", "write", "nope", "x"], 1, "^$",
     r"^dti: no such channel: nope \(see 'dti list'\)\n$"),
    ("write no marker", ["--debugfs", "{fs}", "write", "ch", "x"], 1, "^$",
     r"^dti: channel ch has no marker file: fs/dti/ch/marker does not exist "
     r"\(a dti.ko older than user-space markers\?\)\n$"),
    ("write not loaded", ["--debugfs", "{snap}", "write", "ch", "x"], 1, "^$", "DTI is not loaded"),
    ("write no operand", ["write"], 129, "^$", "^dti write: missing CHANNEL\nusage: dti write "),
    ("write bad level", ["--debugfs", "{fs}", "write", "ch", "--level", "off", "x"], 129, "^$",
     "^dti write: --level takes 0..7 or emerg..debug\n"),
    ("write level missing", ["write", "--level"], 129, "^$", "option '--level' requires an argument"),
    ("dump a channel", ["dump", "--channel", "cli", "{vmcore}"], 0, "^dump-a\ndump-b\ndump-c\n$",
     "^$"),
    ("dump ts", ["dump", "--channel", "cli", "-F", "ts", "{vmcore}"], 0,
     r"^\[    2.000000000\] cpu0 L3 #0 0xffffffffc0001234: dump-a\n", "^$"),
    ("dump all", ["dump", "{vmcore}"], 2, "^==> cli <==\ndump-a\ndump-b\ndump-c\n\n==> early <==\n$",
     r"^dti: channel bad skipped: channel descriptor at physical 0x2000: CRC mismatch"),
    ("dump flattened", ["dump", "--channel", "cli", "vmcore.flat"], 0, "^dump-a\ndump-b\ndump-c\n$",
     "^dti: warning: vmcore.flat: makedumpfile's flattened format"),
    ("dump truncated", ["dump", "--channel", "cli", "vmcore.cut"], 2, "^dump-a\ndump-b\ndump-c\n$",
     "^dti: warning: vmcore.cut: truncated: the segment of physical 0x0 has 16484 of its 32768 bytes "
     "in the file\ndti: warning: vmcore.cut: 15 KiB of memory the dump should hold could not be read, "
     "in 1 place; what they held is missing\n$"),
    ("dump flattened quiet", ["dump", "-q", "--channel", "cli", "vmcore.flat"], 0,
     "^dump-a\ndump-b\ndump-c\n$", "^$"),
    ("dump list", ["dump", "--list", "{vmcore}"], 2,
     r"\nbad +\? +- +- +- +- +- +0\n  error: channel descriptor at physical 0x2000: CRC mismatch"
     r"(.|\n)*\ncli +3 \(err\) +buffers +0x600d +2 x 2048 +1/1 +3 +0\n", "^$"),
    ("dump early unreadable", ["dump", "--channel", "early", "{vmcore}"], 2, "^$",
     "^dti: channel early: pending store \\(descriptor at physical 0x5000\\): its 48 bytes at "
     "virtual 0xffff888000006000 cannot be read: not in the dump"),
    ("dump no such channel", ["dump", "--channel", "nope", "{vmcore}"], 1, "^$",
     "^dti: no channel nope in the dump; it has: bad cli early\n$"),
    ("dump raw needs a channel", ["dump", "-F", "raw", "{vmcore}"], 1, "^$", "--format raw needs --channel"),
    ("dump not a dump", ["dump", "{snap}/trace0"], 1, "^$",
     "^dti: snap/trace0: not a memory dump libkdumpfile can read: "),
    ("dump missing", ["dump", "nofile"], 1, "^$", "^dti: nofile: No such file or directory\n$"),
    ("dump a directory", ["dump", "{snap}"], 1, "^$",
     r"^dti: snap: a directory, not a memory dump \(a vmcore, an ELF core, a kdump-compressed "
     r"file\); 'dti decode snap' reads a snapshot directory\n$"),
    ("decode a memory dump", ["decode", "{vmcore}"], 1, "^$",
     r"^dti: vmcore: an ELF file \(as memory dumps are\), not DTI records: 'dti dump vmcore' "
     r"reads the channels of a memory dump\n$"),
    ("decode a flattened dump", ["decode", "{snap}/trace0", "vmcore.flat"], 1, "^$",
     r"^dti: vmcore.flat: a memory dump in makedumpfile's flattened format, not DTI records: "),
    ("decode a directory among files", ["decode", "{snap}", "{damaged}/trace0"], 1, "^$",
     r"^dti: snap: a directory among files: dti decode reads snapshot directories, "
     r"or one channel's files\n$"),
    ("decode directories raw", ["decode", "-F", "raw", "{snap}", "{levels}"], 129, "^$",
     r"^dti decode: -F raw writes a channel's records as stored: one channel at a time\n"),
    ("read channels raw", ["--debugfs", "{fs}", "read", "-F", "raw", "ch", "ch"], 129, "^$",
     r"^dti read: -F raw writes a channel's records as stored: one channel at a time\n"),
    ("read a missing channel among others", ["--debugfs", "{fs}", "read", "ch", "nope"], 1,
     "^$", r"^dti: no such channel: nope \(see 'dti list'\)\n$"),
    ("dump channels, one missing", ["dump", "--channel", "cli,nope", "{vmcore}"], 1, "^$",
     "^dti: no channel nope in the dump; it has: bad cli early\n$"),
    ("dump list of channels", ["dump", "--list", "--channel", "cli,early", "{vmcore}"], 129,
     "^$", "^dti dump: --list: one --channel, or none for all\n"),
    ("dump channels raw", ["dump", "-F", "raw", "--channel", "cli", "--channel", "early",
                           "{vmcore}"], 1, "^$",
     "^dti: vmcore: 2 channels: --format raw needs --channel NAME, one channel"),
    ("dump no operand", ["dump"], 129, "^$", "missing VMCORE"),
    ("dump excerpt and list", ["dump", "--list", "--excerpt", "x.elf", "{vmcore}"], 129, "^$",
     "--list, --out and --excerpt exclude each other"),
    ("dump symbols", ["dump", "-s", "{vmcore}"], 129, "^$", "invalid option -- 's'"),
    ("decode symbols of no known boot", ["decode", "-s", "{snap}"], 129, "^$",
     r"^dti decode: snap: records of no known boot \(snap/boot_id: No such file or directory; "),
    ("previous symbols", ["--debugfs", "{fs}", "read", "--previous", "-s", "ch"], 129, "^$",
     r"^dti read: --previous: the previous boot's records: -s/--symbols resolves callers "
     r"through this boot's /proc/kallsyms; give the kallsyms of the boot that logged with "
     r"--kallsyms FILE\n"),
    ("lines without a table", ["decode", "--lines", "{snap}/trace0"], 0,
     r"^\[    1\.000000000\] cpu0 L3 #0 0xffffffffc0001234: zero-a\n",
     r"^dti: warning: callers not resolved to source lines: no module table among the files "
     r"\(a snapshot's DIR/modules, or --modules FILE\)\n$"),
    ("debuginfo file missing", ["decode", "--lines", "-d", "nofile.ko", "{snap}"], 1, "^$",
     "^dti: nofile.ko: No such file or directory\n$"),
    ("debuginfo dir missing", ["decode", "--debuginfo", "nodir", "{snap}"], 1, "^$",
     "^dti: nodir: No such file or directory\n$"),
    ("debuginfo not a file", ["decode", "-d", "/dev/null", "{snap}"], 1, "^$",
     "^dti: /dev/null: neither a module's file nor a directory\n$"),
    ("bad kernel release", ["decode", "--lines", "--kernel-release", "a/b", "{snap}"], 1, "^$",
     "^dti: --kernel-release: a/b: not a kernel release\n$"),
    ("snapshot release not a release", ["decode", "--lines", "-F", "json", "badrel"], 0,
     r'^\{"ts_ns":"1000000000","channel":"test","cpu":0,(.|\n)*"text":"one-c"\}\n$',
     r"^dti: warning: badrel/release: not used \(the running kernel's release is\): a/b: "
     r"not a kernel release\ndti: warning: callers not resolved to source lines: "
     r"badrel/modules: No such file or directory\n$"),
    ("modules file missing", ["decode", "--modules", "nomods", "{snap}"], 1, "^$",
     "^dti: --modules: nomods: No such file or directory\n$"),
    ("modules file bad line", ["decode", "--modules", "badmods", "{snap}"], 1, "^$",
     r'^dti: --modules: badmods:2: too few fields \(NAME 0xTEXT 0xTEXT_SIZE BUILD_ID STATE '
     r'LOADED_NS UNLOADED_NS\): "not a line"\n$'),
    ("debuginfo argument missing", ["decode", "{snap}", "-d"], 129, "^$",
     "option requires an argument -- 'd'"),
]


@pytest.mark.parametrize("args,code,out,err", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_case(work, args, code, out, err):
    p = run(args, work)
    stdout, stderr = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == code, stderr
    assert re.search(out, stdout), stdout
    assert re.search(err, stderr), stderr


BAD_INPUT_DOC = RUNTIME.parent / "docs" / "bad-input.md"
CLI_TABLE_START = "<!-- bad-input CLI table: generated by runtime/tests/test_cli.py --table -->"
CLI_TABLE_END = "<!-- end of bad-input CLI table -->"


def bad_input_table() -> str:
    """docs/bad-input.md's table of the command line's bad inputs: every case of
    CASES that fails, with its exit status and the message it must give
    (the case's pattern, with its anchors and escapes taken out)."""
    rows = ["| case | command line | exit | message |", "|---|---|---|---|"]
    for name, args, code, _, err in CASES:
        if code == 0:
            continue
        msg = err.strip("^$").replace("(.|\\n)*", " … ").replace(".*", "…")
        msg = re.sub(r"\\(.)", r"\1", msg.replace("\\n", " ")).replace("\n", " ")
        msg = msg.replace("|", "\\|").strip() or "(nothing on stderr)"
        line = " ".join(["dti", *args]).replace("{", "").replace("}", "")
        msg = msg if len(msg) <= 100 else msg[:99].rstrip() + "…"
        rows.append(f"| {name} | `{line}` | {code} | {msg} |")
    return "\n".join(rows)


def readme_section(start: str, end: str) -> str:
    """What docs/bad-input.md holds between the lines `start` and `end`."""
    text = BAD_INPUT_DOC.read_text()
    assert start in text and end in text, f"docs/bad-input.md has no {start}"
    return text.split(start, 1)[1].split(end, 1)[0].strip()


def test_readme_bad_input_table():
    assert readme_section(CLI_TABLE_START, CLI_TABLE_END) == bad_input_table(), (
        "docs/bad-input.md's bad-input CLI table is stale: run `python3 runtime/tests/test_cli.py --table`")


def test_exit_status_documented():
    """EXIT STATUS of dti.1 lists exactly the codes the cases expect."""
    page = (RUNTIME / "dti.1").read_text()
    section = re.search(r"^\.SH EXIT STATUS\n(.*?)^\.SH ", page, re.M | re.S).group(1)
    documented = {int(c) for c in re.findall(r"^\.TP\n\.B (\d+)$", section, re.M)}
    assert documented == {c[2] for c in CASES}


@pytest.mark.parametrize("cmd", ["list", "level", "read", "write", "snapshot", "decode",
                                 "reset", "stats", "dump", "console-log", "export"])
def test_help(cmd):
    for args in ([cmd, "--help"], [cmd, "-h"], ["help", cmd]):
        p = run(args)
        assert p.returncode == 0 and p.stdout.startswith(f"usage: dti {cmd}".encode())


def test_help_options_in_man_page():
    """Every long option a command's --help shows is in dti.1."""
    page = (RUNTIME / "dti.1").read_text().replace("\\-", "-")
    for cmd in ["read", "write", "snapshot", "decode", "dump", "console-log", "export"]:
        helptext = run([cmd, "--help"]).stdout.decode()
        for opt in set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", helptext)):
            assert opt in page, f"dti {cmd} --help shows {opt}, which dti.1 does not"


def test_debugfs_from_proc_mounts(tmp_path):
    """debugfs mounted where dti cannot guess it, in a mount namespace."""
    mnt = tmp_path / "dbg"
    mnt.mkdir()
    p = subprocess.run(["unshare", "-m", "sh", "-c",
                        'mount -t debugfs none "$1" || exit 77; exec "$2" list',
                        "sh", str(mnt), str(DTI)], capture_output=True, text=True)
    if p.returncode == 77 or p.stderr.startswith("unshare:"):
        pytest.skip("mounting debugfs in a mount namespace needs root")
    assert p.returncode == 1
    assert f"DTI is not loaded: {mnt}/dti does not exist" in p.stderr


def test_terminal_gets_time_and_cpu(work):
    """On a terminal the default is -F ts (time, CPU, level, caller), as
    trace-cmd report and perf script show; into a pipe or file it stays
    text, what the kernel's merged file holds."""
    import pty
    leader, follower = pty.openpty()
    try:
        p = subprocess.run([str(DTI), "decode", "snap"], cwd=work, stdout=follower,
                           stderr=subprocess.PIPE, timeout=20)
        os.close(follower)
        follower = -1
        out = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:     # EIO: the follower side is closed
                break
            if not chunk:
                break
            out += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    lines = out.decode().replace("\r\n", "\n").splitlines()
    assert lines == [f"[    1.0000000{t:02d}] cpu{c} L3 #{s} 0xffffffffc0001234: {w}"
                     for t, c, s, w in [(0, 0, 0, "zero-a"), (1, 1, 0, "one-a"),
                                        (10, 0, 1, "zero-b"), (11, 1, 1, "one-b"),
                                        (20, 0, 2, "zero-c"), (21, 1, 2, "one-c")]], lines
    piped = run(["decode", "snap"], work)
    assert piped.stdout.decode() == MERGED


def test_report_counts(tmp_path):
    """dti report: the counts per level, CPU and kind, the interval of
    lost records with the times around it, and the snapshot's accounting,
    each equal to what is counted from the records (dti decode -F json)."""
    info = SUBINFO.pack(4096, 4, 0, 5, 0, 0, b"test")
    cpu0 = rec(0, 0, 1, info, flags=SUBBUF, level=0)
    for i, level in enumerate([3, 3, 4, 6, 7]):
        cpu0 += rec(0, i, 2_000_000_000 + 100 * i, f"c0 {i}", level=level)
    info = SUBINFO.pack(4096, 4, 0, 3, 0, 0, b"test")
    cpu1 = rec(1, 0, 1, info, flags=SUBBUF, level=0)
    # seq 2..4 lost on cpu1, between the records at 2.000000050 and 2.000000250
    for seq, ts in [(0, 10), (1, 50), (5, 250)]:
        cpu1 += rec(1, seq, 2_000_000_000 + ts, bytes([seq, 1, 2]), flags=0, level=6)
    snap = make_snap(tmp_path / "snap", {0: cpu0, 1: cpu1})
    (snap / "stats").write_text("cpu written overwritten discarded\n0 5 0 0\n1 6 0 3\n"
                                "total 11 0 3\n")
    p = run(["report", "snap"], tmp_path)
    out = p.stdout.decode()
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    recs = [json.loads(x) for x in run(["decode", "-F", "json", "snap"], tmp_path)
            .stdout.decode().splitlines()]
    assert len(recs) == 8
    assert out.startswith("records: 8 from 2.000000000 to 2.000000400 s (0.000 s), ")
    assert "\nlost: 3 records in 1 intervals (sequence gaps)\n" in out
    for level, n in [("err", 2), ("warning", 1), ("info", 4), ("debug", 1)]:
        assert n == sum(1 for r in recs if r["level"] == LEVELS.index(level))
        assert re.search(rf"\n{level} +{n}\n", out), out
    assert re.search(r"\n0 +5 +\S+ 2\.000000000 2\.000000400 +0\n", out), out
    assert re.search(r"\n1 +3 +\S+ 2\.000000010 2\.000000250 +3\n", out), out
    assert re.search(r"\ntext +5\nbinary +3\n", out), out
    assert "\ncpu1   2..4 (3)  2.000000050 .. 2.000000250\n" in out, out
    assert out.endswith("accounting (snap/stats):\ncpu written overwritten discarded\n"
                        "0 5 0 0\n1 6 0 3\ntotal 11 0 3\n"), out
    # the filters hold; read, dump and console-log take --report
    p = run(["decode", "--report", "-p", "warning", "snap"], tmp_path)
    assert p.stdout.decode().startswith("records: 3 from"), p.stdout
    p = run(["report", "-F", "json", "snap"], tmp_path)
    assert p.returncode == 129 and b"a report is text" in p.stderr


def test_damage_notices_capped(tmp_path):
    """A ring copy with 32 bad slots: the first 20 damage notices are
    printed, the rest counted in one line; exit status 2."""
    data = b""
    for slot in range(64):
        if slot % 2:
            data += b"\xa5" * 4096
            continue
        info = SUBINFO.pack(4096, 64, slot, 1, 0, 0, b"test")
        sub = rec(0, slot, 1, info, flags=SUBBUF, level=0) + rec(0, slot, 1000 + slot, "t")
        data += sub.ljust(4096, b"\0")
    (tmp_path / "ring").write_bytes(data)
    p = run(["decode", "ring"], tmp_path)
    lines = p.stderr.decode().splitlines()
    assert p.returncode == 2, p.stderr
    assert len(lines) == 21 and all(x.startswith("dti: ring: ") for x in lines[:20]), lines
    assert re.fullmatch(r"dti: (\d+) more damaged places not shown \(the first 20 are; "
                        r"--strict stops at the first\)", lines[20]), lines
    assert int(re.search(r"\d+", lines[20])[0]) >= 32 - 20


def test_read_follow_until_interrupted(work):
    p = subprocess.Popen([str(DTI), "--debugfs", "fs", "read", "-f", "ch"], cwd=work,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = [p.stdout.readline() for _ in TEXTS[0] + TEXTS[1]]
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    assert (p.returncode, b"".join(lines) + out, err) == (0, MERGED.encode(), b"")


def test_level_negative_written(work):
    assert run(["--debugfs", "{fs}", "level", "ch", "off"], work).returncode == 0
    assert (work / "fs/dti/ch/level").read_text().startswith("-1")


def test_stdin(work):
    data = (work / "snap/trace0").read_bytes()
    p = run(["decode", "-"], work, stdin=data)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"zero-a\nzero-b\nzero-c\n", b"")
    with open(work / "snap/trace0", "rb") as f:    # a file, not a pipe
        p = subprocess.run([str(DTI), "decode", "-", "snap/trace1"], cwd=work,
                           stdin=f, capture_output=True)
    assert (p.returncode, p.stdout.decode()) == (0, MERGED)


def test_output_file(work):
    p = run(["decode", "-F", "raw", "-o", "out", "{snap}"], work)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")
    p = run(["decode", "out"], work)
    assert p.stdout.decode() == MERGED


def test_write_error_stdout(work):
    with open("/dev/full", "wb") as full:
        p = run(["decode", "-F", "raw", "{snap}"], work, stdout=full)
    assert p.returncode == 1
    assert p.stderr == b"dti: writing standard output: No space left on device\n"


def start_write(work, args, stdin=subprocess.DEVNULL):
    """dti write on the fake debugfs, whose marker is a FIFO the test
    reads: returns the process and the FIFO's read end."""
    marker = work / "fs/dti/ch/marker"
    os.mkfifo(marker)
    fd = os.open(marker, os.O_RDONLY | os.O_NONBLOCK)
    p = subprocess.Popen([str(DTI), "--debugfs", "fs", "write", *args], cwd=work,
                         stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p, fd


def finish(p):
    """Exit status, standard output and error of a process whose
    standard input the test closed itself."""
    out, err = p.stdout.read(), p.stderr.read()
    return p.wait(timeout=10), out, err


def read_marker(fd):
    """The bytes waiting in the marker FIFO (b"" once dti closed it)."""
    assert select.select([fd], [], [], 10)[0], "nothing written to marker"
    return os.read(fd, 1 << 16)


@pytest.mark.parametrize("args,record", [
    (["ch", "two", "words"], b"two words"),
    (["--level", "err", "ch", "a  b", "c"], b"<3>a  b c"),
    (["ch", "--level", "7", "--", "-x", "--level"], b"<7>-x --level"),
    (["--", "ch", "--level", "7"], b"--level 7"),
    (["ch", "link", "-1", "down"], b"link -1 down"),
    (["ch", "<5>its own level"], b"<5>its own level"),
    (["--level", "warn", "ch", "<5>text"], b"<4><5>text"),
    (["--level", "debug", "ch", ""], b"<7>"),
])
def test_write_words(work, args, record):
    """TEXT, its words joined by single spaces, is one write(2) to marker,
    with the level prefix when --level is given; options stop at the first
    word after CHANNEL."""
    p, fd = start_write(work, args)
    got = []
    while chunk := read_marker(fd):
        got.append(chunk)
    os.close(fd)
    out, err = p.communicate(timeout=10)
    assert (p.returncode, out, err) == (0, b"", b"")
    assert got == [record]


@pytest.mark.parametrize("level,prefix", [([], b""), (["--level", "info"], b"<6>")])
def test_write_lines(work, level, prefix):
    """Each line of standard input is one write(2), without its newline,
    made as soon as the line is read: the test sends a line and reads
    that record alone from the marker FIFO before it sends the next.  An
    empty line writes no bytes; a last line without newline counts."""
    p, fd = start_write(work, level + ["ch"], stdin=subprocess.PIPE)
    for line in (b"line one", b"", b"<5>own level", b"tab\tand  spaces ", b"x" * 3000):
        p.stdin.write(line + b"\n")
        p.stdin.flush()
        if prefix + line:
            assert read_marker(fd) == prefix + line
    p.stdin.write(b"last without newline")
    p.stdin.close()
    assert read_marker(fd) == prefix + b"last without newline"
    assert read_marker(fd) == b""
    os.close(fd)
    assert finish(p) == (0, b"", b"")


def test_write_error_names_line(work):
    """A write that fails ends dti write with the line and the reason:
    here the marker FIFO's reader goes away after two records."""
    p, fd = start_write(work, ["ch"], stdin=subprocess.PIPE)
    for line in (b"one", b"two"):
        p.stdin.write(line + b"\n")
        p.stdin.flush()
        assert read_marker(fd) == line
    os.close(fd)
    p.stdin.write(b"three\nfour\n")
    p.stdin.close()
    assert finish(p) == (1, b"", b"dti: fs/dti/ch/marker: line 3 of standard input not stored: "
                         b"Broken pipe\n")


def test_write_lost_record(work):
    """A record dti.ko loses fails its write(2) (ENOSPC when full): said
    with the errno's text, exit status 1."""
    os.symlink("/dev/full", work / "fs/dti/ch/marker")
    p = run(["--debugfs", "{fs}", "write", "ch", "a", "b"], work)
    assert (p.returncode, p.stdout) == (1, b"")
    assert p.stderr == b"dti: fs/dti/ch/marker: the record not stored: No space left on device\n"
    p = run(["--debugfs", "{fs}", "write", "ch"], work, stdin=b"a\nb\n")
    assert p.returncode == 1
    assert p.stderr == b"dti: fs/dti/ch/marker: line 1 of standard input not stored: " \
                       b"No space left on device\n"


def test_write_permission():
    """marker is root's only (0200): anyone else is told so."""
    root = Path(tempfile.mkdtemp())
    try:
        os.chmod(root, 0o755)
        marker = make_debugfs(root / "fs") / "marker"
        marker.write_text("")
        marker.chmod(0o200 if os.geteuid() == 0 else 0)
        # A copy where the other user can run it: the tree may be in a
        # directory only its owner enters (a clone in mktemp -d's).
        dti = root / "dti"
        shutil.copy(DTI, dti)
        dti.chmod(0o755)
        p = subprocess.run([str(dti), "--debugfs", str(root / "fs"), "write", "ch", "x"],
                           capture_output=True, user=65534 if os.geteuid() == 0 else None)
        assert (p.returncode, p.stdout) == (1, b"")
        assert p.stderr.decode() == \
            f"dti: permission denied: {marker} (DTI's debugfs files are root's only)\n"
    finally:
        shutil.rmtree(root)


@pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed")
def test_write_syscalls(work, tmp_path):
    """strace shows one write(2) to marker per record, of exactly its
    bytes, the empty line's of none."""
    marker = work / "fs/dti/ch/marker"
    marker.write_bytes(b"")
    log = tmp_path / "strace.log"
    for args, want in ((["ch"], [b"one", b"", b"<4>x", b"last"]),
                       (["--level", "6", "ch"], [b"<6>one", b"<6>", b"<6><4>x", b"<6>last"]),
                       (["ch", "a", "b"], [b"a b"])):
        p = subprocess.run(["strace", "-e", "trace=write", "-e", "signal=none", "-xx", "-y",
                            "-o", str(log), str(DTI), "--debugfs", "fs", "write", *args],
                           cwd=work, input=b"one\n\n<4>x\nlast", capture_output=True)
        if p.returncode != 0 and b"PTRACE" in p.stderr.upper():
            pytest.skip("strace cannot trace here: " + p.stderr.decode())
        assert (p.returncode, p.stdout, p.stderr) == (0, b"", b""), args
        writes = re.findall(r'^write\(\d+<((?:\\x[0-9a-f]{2})*)>, "((?:\\x[0-9a-f]{2})*)", '
                            r'(\d+)\) = (\d+)$', log.read_text(), re.M)
        hexes = [(bytes.fromhex(p.replace("\\x", "")), bytes.fromhex(d.replace("\\x", "")),
                  int(n), int(r)) for p, d, n, r in writes]
        assert [(d, n, r) for path, d, n, r in hexes if path == bytes(marker)] == \
            [(w, len(w), len(w)) for w in want], args


def test_snapshot(work):
    p = run(["--debugfs", "{fs}", "snapshot", "ch", "new"], work)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(b"ch: 2 per-CPU files, ")
    assert sorted(os.listdir(work / "new")) == ["boot_id", "info", "release", "stats", "trace0",
                                                "trace1"]
    assert (work / "new/release").read_text() == os.uname().release + "\n"
    assert (work / "new/boot_id").read_text() == Path(BOOT_ID).read_text()
    # a regular file keeps what is not overwritten: "-1" then "3" is "31"
    assert (work / "fs/dti/ch/level").read_text().startswith("3")
    assert run(["decode", "new"], work).stdout.decode() == MERGED


def snapshot_files(work, d):
    """Every file of snapshot directory `d`, as `d/*` names them, in
    the shell's order, reversed, and with the side files between."""
    files = sorted(f"{d}/{f}" for f in os.listdir(work / d))
    side = [f for f in files if os.path.basename(f) in ("info", "stats")]
    rest = [f for f in files if f not in side]
    return [files, files[::-1], rest[:1] + side[::-1] + rest[1:]]


def test_decode_snapshot_files(work):
    """decode DIR/* is decode DIR: the snapshot's info and stats given as
    files are not decoded but read as the directory's (a stats that lists
    cpu0 only leaves trace1 unmerged both ways), in any order; a file of
    records that is damaged is still reported, and an info outside a
    snapshot is decoded and is damage."""
    assert run(["--debugfs", "{fs}", "snapshot", "ch", "new"], work).returncode == 0
    for f in ("info", "stats"):
        (work / "damaged" / f).write_bytes((work / "new" / f).read_bytes())
    make_snap(work / "reused")
    (work / "reused" / "info").write_text("name: test\nsubbuf_size: 4096\nn_subbufs: 4\n")
    (work / "reused" / "stats").write_text("cpu written next_seq\n0 3 3\ntotal 3 3\n")
    assert run(["dump", "-q", "--out", "saved", "{vmcore}"], work).returncode == 2
    cases = {"new": (0, MERGED, ""), "damaged": (2, None, "damaged/trace0"),
             "reused": (0, "zero-a\nzero-b\nzero-c\n", "reused/trace1: not merged"),
             "saved/cli": (0, "dump-a\ndump-b\ndump-c\n", "")}
    for d, (code, out, err) in cases.items():
        for fmt in ("text", "json"):
            whole = run(["decode", "-F", fmt, d], work)
            assert whole.returncode == code, (d, whole.stderr)
            assert out is None or fmt != "text" or whole.stdout.decode() == out, d
            assert err in whole.stderr.decode(), (d, whole.stderr)
            for files in snapshot_files(work, d):
                p = run(["decode", "-F", fmt, *files], work)
                assert (p.returncode, p.stdout, p.stderr) == \
                    (whole.returncode, whole.stdout, whole.stderr), files
    p = run(["decode", "new/info", "new/stats"], work)
    assert (p.returncode, p.stdout) == (1, b"")
    assert p.stderr == b"dti: new/info: a snapshot's info, not records: no per-CPU file given\n"
    p = run(["decode", "new/trace0", "new/info", "reused/info"], work)
    assert p.returncode == 0 and p.stdout == b"zero-a\nzero-b\nzero-c\n"
    assert p.stderr == b"dti: warning: reused/info: not read: the snapshot's info is new/info " \
                       b"(files of several snapshots?)\n"
    (work / "info").write_bytes((work / "reused/info").read_bytes())
    p = run(["decode", "info"], work)
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.startswith(b"dti: info: corrupt data at offset 0: bad magic (not DTI data)")


def test_snapshot_force(work):
    (work / "notempty" / "notes").write_text("mine")
    p = run(["--debugfs", "{fs}", "snapshot", "--force", "ch", "notempty"], work)
    assert p.returncode == 0, p.stderr
    assert b"notempty: removed 1 file of an earlier snapshot" in p.stderr
    assert sorted(os.listdir(work / "notempty")) == ["boot_id", "info", "notes", "release",
                                                       "stats", "trace0", "trace1"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_snapshot_signal_restores_level(work, sig):
    """A FIFO as trace file blocks the copy with the channel off."""
    ch = work / "fs/dti/ch"
    (ch / "trace1").unlink()
    os.mkfifo(ch / "trace1")
    # The signal's default action, as a terminal gives it: a test run in
    # the background of a shell inherits SIGINT ignored, which dti keeps.
    p = subprocess.Popen([str(DTI), "--debugfs", "fs", "snapshot", "ch", "snap2"],
                         cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    deadline = time.time() + 10
    while not (ch / "level").read_text().startswith("-1"):
        assert time.time() < deadline and p.poll() is None
        time.sleep(0.01)
    time.sleep(0.1)
    p.send_signal(sig)
    _, err = p.communicate(timeout=10)
    assert p.returncode == -sig
    assert err.endswith(b"dti: interrupted: restoring level 3 of ch\n")
    assert (ch / "level").read_text().startswith("3")


def test_dump_out(work):
    """--out writes snapshot directories that decode prints as dump does."""
    p = run(["dump", "-q", "--out", "saved", "{vmcore}"], work)
    assert p.returncode == 2, p.stderr
    assert p.stdout.decode() == ("cli: 1 per-CPU files, 3 records, 0 pending records in saved/cli\n"
                                 "early: 0 per-CPU files, 0 records, 0 pending records in saved/early\n")
    assert sorted(os.listdir(work / "saved" / "cli")) == ["info", "trace0"]
    for fmt in ("text", "ts", "json", "raw"):
        dumped = run(["dump", "--channel", "cli", "-F", fmt, "{vmcore}"], work).stdout
        assert run(["decode", "-F", fmt, "saved/cli"], work).stdout == dumped
    p = run(["dump", "-q", "--out", "saved", "--channel", "cli", "{vmcore}"], work)
    assert p.returncode == 1 and b"saved/cli: directory is not empty" in p.stderr


def test_dump_excerpt(work):
    """--excerpt writes an ELF dump of what the channels are read from,
    which dump reads as it read the original; the channel with an error
    has nothing to be read from and is left out."""
    p = run(["dump", "-q", "--excerpt", "x.elf", "{vmcore}"], work)
    assert p.returncode == 2, p.stderr     # the vmcore's bad channel
    assert re.match(rb"^x\.elf: 2 channels in [0-9]+ pages \([0-9]+ KiB\) of vmcore\n$",
                    p.stdout), p.stdout
    for ch in ("cli", "early"):
        want = run(["dump", "-q", "-F", "json", "--channel", ch, "{vmcore}"], work)
        got = run(["dump", "-q", "-F", "json", "--channel", ch, "x.elf"], work)
        assert (got.returncode, got.stdout) == (want.returncode, want.stdout), ch
    p = run(["dump", "--channel", "bad", "x.elf"], work)
    assert p.returncode == 1 and b"no channel bad" in p.stderr
    p = run(["dump", "--channel", "cli", "--excerpt", "nodir/x.elf", "{vmcore}"], work)
    assert p.returncode == 1
    assert p.stderr == b"dti: nodir/x.elf: No such file or directory\n"
    p = run(["dump", "--channel", "cli", "--excerpt", "/dev/full", "{vmcore}"], work)
    assert p.returncode == 1
    assert p.stderr == b"dti: /dev/full: No space left on device\n"
    assert Path("/dev/full").exists()


EXCERPTS = sorted((RUNTIME / "tests" / "dump-excerpts").glob("*.elf"))


@pytest.mark.parametrize("path", EXCERPTS, ids=lambda p: p.stem)
def test_real_excerpt(path, tmp_path):
    """The excerpts of a real guest crash (testsuite/test_dump.py wrote
    them): one channel each, read with no damage (exit status 0), and an
    excerpt of an excerpt is the same file."""
    p = run(["dump", "-q", "--list", str(path)])
    assert p.returncode == 0, p.stderr
    assert re.findall(rb"^(\S+) ", p.stdout, re.M)[1:] == [path.stem.encode()]
    p = run(["dump", "--excerpt", str(tmp_path / "again.elf"), str(path)])
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "again.elf").read_bytes() == path.read_bytes()


def json_records(out: bytes) -> list[bytes]:
    return [x for x in out.splitlines() if not x.startswith(b'{"channel"')]


@pytest.mark.parametrize("path", EXCERPTS, ids=lambda p: p.stem)
def test_damaged_real_excerpts(path, tmp_path):
    """Truncated and bit-flipped copies of each real excerpt (the fuzz
    corpus's, tests/dump-seed-variants.py): dump exits 0, 1 or 2, never
    by a signal; with an error message when not 0; and prints no more
    records than the whole excerpt holds."""
    subprocess.run([os.environ.get("PYTHON", "/usr/bin/python3"),
                    str(RUNTIME / "tests" / "dump-seed-variants.py"), str(tmp_path),
                    str(path)], check=True)
    whole = run(["dump", "-F", "json", str(path)])
    assert whole.returncode == 0, whole.stderr
    most = len(json_records(whole.stdout))
    for v in sorted((tmp_path / "elf").glob("*.elf")):
        p = run(["dump", "-F", "json", str(v)])
        assert p.returncode in (0, 1, 2), (v.name, p.returncode, p.stderr)
        assert p.returncode == 0 or p.stderr.startswith(b"dti: "), (v.name, p.stderr)
        assert len(json_records(p.stdout)) <= most, v.name
        if ".cut-" in v.name:
            assert p.returncode != 0 and str(v).encode() in p.stderr, (v.name, p.stderr)


# A console log as a panic leaves it (kmod/dti_panic.c): kernel, syslog and
# journal prefixes, other messages between, escapes, a binary payload;
# channel cb is cut off by the end of the log.
CONSOLE_LOG = "\n".join([
    "[    4.100000] Kernel panic - not syncing: sysrq triggered crash",
    "[    4.100001] dti: panic: kernel panic: the newest records of 2 channels",
    "[    4.100001] dti: panic: ---- begin ca: newest 2 per CPU, 3 records from CPUs 0-1 ----",
    "[    4.100001] dti: panic: ca: [    2.000000000] cpu0 L3 #5 0xffffffffc0001234: one",
    "[    4.100002] other: a message between",
    "Nov 22 10:00:00 host kernel: [    4.100003] dti: panic: ca: [    2.000000010] cpu1 L4 "
    r"#7 0xffffffffc0001234: tab\there\\ \x3cb\c",
    "Nov 22 10:00:00 host kernel: dti: panic: ca: [    2.000000020] cpu0 L3 #6 "
    "0xffffffffc0001234: <bin> 01 02 0a\r",
    "[    4.100004] dti: panic: ---- end ca: 3 records ----",
    "[    4.100005] dti: panic: ---- begin cb: newest 5 per CPU, 2 records from CPUs 0 ----",
    "[    4.100005] dti: panic: cb: [    3.000000000] cpu0 L6 #1 0xffffffffc0001234: b one",
    "[    4.100005] dti: panic: cb: [    3.000000001] cpu0 L6 #2 0xffffffffc0001234: b tw",
])


@pytest.mark.parametrize("args,code,out,err", [
    (["--channel", "ca", "-F", "ts"], 0,
     "[    2.000000000] cpu0 L3 #5 0xffffffffc0001234: one\n"
     "[    2.000000010] cpu1 L4 #7 0xffffffffc0001234: tab\there\\ <b\n"
     "[    2.000000020] cpu0 L3 #6 0xffffffffc0001234: 01 02 0a\n", "^$"),
    (["--channel", "cb"], 2, "b one\nb tw\n",
     r"^dti: log:11: the log ends inside channel cb's records: it was cut"),
    ([], 2, "==> ca <==\none\ntab\there\\ <b\n01 02 0a\n\n==> cb <==\nb one\nb tw\n", "cut"),
    (["-q", "--channel", "cb"], 2, "b one\nb tw\n", "^$"),
    (["--channel", "cc"], 1, "", "^dti: log: no channel cc in the log\n$"),
])
def test_console_log(tmp_path, args, code, out, err):
    """dti console-log finds the panic sections under any prefix, skips
    other lines, decodes escapes and binary payloads, and reports a log
    cut off inside a section."""
    (tmp_path / "log").write_text(CONSOLE_LOG)
    p = run(["console-log", *args, "log"], tmp_path)
    assert (p.returncode, p.stdout.decode()) == (code, out), p.stderr
    assert re.search(err, p.stderr.decode()), p.stderr


def test_console_log_json_flags(tmp_path):
    """Text and binary records come back with their flags and fields."""
    (tmp_path / "log").write_text(CONSOLE_LOG)
    p = run(["console-log", "-F", "json", "--channel", "ca", "log"], tmp_path)
    recs = [__import__("json").loads(x) for x in p.stdout.splitlines()]
    assert [(r["cpu"], r["seq"], r["level"], r["flags"], r["ts_ns"]) for r in recs] == \
        [(0, "5", 3, TEXT, "2000000000"), (1, "7", 4, TEXT, "2000000010"),
         (0, "6", 3, 0, "2000000020")]
    assert {r["channel"] for r in recs} == {"ca"}
    assert recs[1]["text"] == "tab\there\\ <b" and recs[0]["text"] == "one\n"


def test_console_log_damaged_lines(tmp_path):
    """A record line that does not parse and an end line whose count
    differs are damage (exit 2) that names the line; the rest is read."""
    lines = CONSOLE_LOG.splitlines()[:8]
    lines[3] = lines[3].replace("cpu0 L3", "cpuX L3")
    (tmp_path / "log").write_text("\n".join(lines) + "\n")
    p = run(["console-log", "--channel", "ca", "log"], tmp_path)
    assert p.returncode == 2
    assert p.stdout == b"tab\there\\ <b\n01 02 0a\n"
    assert re.search(rb"log:4: a record line of channel ca does not parse", p.stderr)
    assert re.search(rb"log:8: channel ca ends with another count", p.stderr)


def test_console_log_printed_twice(tmp_path):
    """A channel printed at an oops and again at the panic that follows:
    the later section is what comes out, with a warning."""
    lines = CONSOLE_LOG.splitlines()[:8]
    again = [lines[2], lines[5].replace("#7", "#8").replace("2.000000010", "5.0"),
             lines[7].replace("3 records", "1 records")]
    (tmp_path / "log").write_text("\n".join(lines + again) + "\n")
    p = run(["console-log", "--channel", "ca", "-F", "ts", "log"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"[    5.000000000] cpu1 L4 #8 0xffffffffc0001234: tab\there\\ <b\n"
    assert b"log:9: channel ca is printed again; its records from line 3 are replaced" \
        in p.stderr


def test_console_log_no_panic(tmp_path):
    (tmp_path / "log").write_text("[    1.0] nothing here\n")
    p = run(["console-log", "log"], tmp_path)
    assert p.returncode == 1 and b"no DTI records printed at a panic" in p.stderr


def test_man_example_installed(work):
    """The EXAMPLE of libdti.3, built by check-man-example.sh against the
    copy `make check-lib` installed, runs with that shared library."""
    exe = BUILD / "man-example"
    libdir = BUILD / "destdir/usr/lib"
    assert exe.exists(), "run make -C runtime check-lib first"
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir))
    ldd = subprocess.run(["ldd", str(exe)], env=env, capture_output=True, text=True)
    assert f"=> {libdir}/libdti.so.0 " in ldd.stdout
    p = subprocess.run([str(exe), "snap"], cwd=work, capture_output=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == run(["decode", "-F", "ts", "{snap}"], work).stdout


# ---- --lines: callers through the module table ----

SAMPLE = BUILD / "lines" / "lines_sample.ko"
SAMPLE_OTHER = BUILD / "lines" / "other" / "lines_sample.ko"
# struct dti_module and the head of struct dti_dump_modules
DMOD = struct.Struct("<56sQIIQQ20sI")
DMODS_HEAD = struct.Struct("<40sIHHIIIII4x")
DUMP_MODULES, MODULES_MAX = 3, 64


def sample_facts():
    """The sample's build-id, the return address of lines_first's call
    (in .text) and that call's line in the source."""
    notes = subprocess.run(["readelf", "-n", str(SAMPLE)], capture_output=True, text=True)
    build_id = re.search(r"Build ID: ([0-9a-f]+)", notes.stdout).group(1)
    relocs = subprocess.run(["readelf", "-rW", str(SAMPLE)], capture_output=True,
                            text=True).stdout.split("Relocation section")
    rela = next(r for r in relocs if r.startswith(" '.rela.text'"))
    first = int(re.search(r"^([0-9a-f]+) .*R_X86_64_PLT32", rela, re.M).group(1), 16) + 4
    src = (RUNTIME / "tests" / "lines_sample.c").read_text().splitlines()
    line = next(i + 1 for i, x in enumerate(src) if "LINE:first_call " in x)
    return build_id, first, line


def modules_text(build_id, first):
    """A module table placing the sample so that CALLER is lines_first's call."""
    return (f"dti 0xffffffffc1000000 0x8000 - live 1 0\n"
            f"lines_sample 0x{CALLER - first:x} 0x1000 {build_id} live 2 0\n")


def test_snapshot_copies_modules(work):
    """dti snapshot copies <debugfs>/dti/.modules as DIR/modules, which
    decode --lines reads (and decode DIR/* too)."""
    build_id, first, line = sample_facts()
    (work / "fs/dti/.modules").write_text(modules_text(build_id, first))
    p = run(["--debugfs", "{fs}", "snapshot", "ch", "new"], work)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(work / "new")) == ["boot_id", "info", "modules", "release",
                                                "stats", "trace0", "trace1"]
    assert (work / "new/modules").read_text() == modules_text(build_id, first)
    want = f"lines_first+0x{first:x}/0x"
    for args in (["new"], sorted(str(f.relative_to(work)) for f in (work / "new").iterdir())):
        p = run(["decode", "-F", "ts", "-d", str(SAMPLE), *args], work)
        assert p.returncode == 0 and p.stderr == b"", p.stderr
        out = p.stdout.decode()
        assert out.count(want) == 6 and f"lines_sample.c:{line}: zero-a\n" in out, out
    # without --lines nothing changes; --force removes modules too
    assert run(["decode", "new"], work).stdout.decode() == MERGED
    (work / "fs/dti/ch/level").write_text("3\n")
    p = run(["--debugfs", "{fs}", "snapshot", "--force", "ch", "new"], work)
    assert p.returncode == 0 and b"removed 7 files" in p.stderr


def test_decode_snapshot_release(work):
    """decode --lines looks for the modules' files under the release the
    snapshot names (DIR/release, or a file called release among the
    files), which --kernel-release overrides; a release file that names
    none is said and the running kernel's is taken."""
    build_id, first, _ = sample_facts()
    (work / "fs/dti/.modules").write_text(modules_text(build_id, first))
    assert run(["--debugfs", "{fs}", "snapshot", "ch", "new"], work).returncode == 0
    searched = "searched the files and directories given, /usr/lib/debug and /lib/modules/{})"
    (work / "new/release").write_text("9.9.9-dti-test\n")
    files = sorted(str(f.relative_to(work)) for f in (work / "new").iterdir())
    for args in (["new"], files, ["--kernel-release", "8.8.8", "new"]):
        p = run(["decode", "-F", "ts", "--lines", *args], work)
        want = "8.8.8" if "8.8.8" in args else "9.9.9-dti-test"
        assert p.returncode == 0 and p.stdout.count(b"#0 0xffffffffc0001234: ") == 2, p.stderr
        assert f"no file found for module lines_sample, build-id {build_id} (" \
            f"{searched.format(want)}" in p.stderr.decode(), p.stderr
    (work / "new/release").write_text("a/b\n")
    p = run(["decode", "-F", "ts", "--lines", "new"], work)
    assert p.returncode == 0
    assert p.stderr.decode().startswith("dti: warning: new/release: not used (the running "
                                        "kernel's release is): a/b: not a kernel release\n")
    assert searched.format(os.uname().release) in p.stderr.decode(), p.stderr
    # the file alone is no records
    p = run(["decode", "new/release"], work)
    assert (p.returncode, p.stdout) == (1, b"")
    assert p.stderr == b"dti: new/release: a snapshot's kernel release, not records: " \
                       b"no per-CPU file given\n"


def test_read_lines(work):
    """read --lines takes the live table; read --previous --lines the
    previous boot's, and says once when there is none."""
    build_id, first, line = sample_facts()
    (work / "fs/dti/.modules").write_text(modules_text(build_id, first))
    p = run(["--debugfs", "{fs}", "read", "--lines", "-d", str(SAMPLE.parent), "-F", "ts",
             "ch"], work)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    assert f"#0 lines_first+0x{first:x}/0x".encode() in p.stdout
    assert f"lines_sample.c:{line}: zero-a\n".encode() in p.stdout
    # another build: refused, said with both build-ids, exit status 1
    p = run(["--debugfs", "{fs}", "read", "-d", str(SAMPLE_OTHER), "-F", "ts", "ch"], work)
    assert p.returncode == 1
    assert re.fullmatch(rf"dti: {SAMPLE_OTHER}: build-id [0-9a-f]{{40}} is not that of module "
                        rf"lines_sample as loaded \({build_id}\): another build, not used\n",
                        p.stderr.decode()), p.stderr
    assert b"#0 0xffffffffc0001234: zero-a" in p.stdout
    # the previous boot's records, no table of it
    make_snap(work / "fs/dti/.previous/ch")
    p = run(["--debugfs", "{fs}", "read", "--previous", "--lines", "-F", "ts", "ch"], work)
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(r"dti: warning: callers not resolved to source lines: (\S+/)?fs/dti/"
                        r"\.previous/ch/modules does not exist \(the persistent region holds "
                        r"no sound module table[^\n]*\n", p.stderr.decode()), p.stderr
    assert b"#0 0xffffffffc0001234: zero-a" in p.stdout
    # the table of the boot that wrote them, not this boot's
    (work / "fs/dti/.modules").write_text("")
    (work / "fs/dti/.previous/ch/modules").write_text(modules_text(build_id, first))
    p = run(["--debugfs", "{fs}", "read", "--previous", "-d", str(SAMPLE), "-F", "ts", "ch"], work)
    assert p.returncode == 0 and f"lines_sample.c:{line}: zero-a".encode() in p.stdout


def modules_table(build_id, first, crc_ok=True):
    """struct dti_dump_modules placing the sample as modules_text() does."""
    ents = [DMOD.pack(b"dti", 0xffffffffc1000000, 0x8000, 1, 1, 0, b"", 0),
            DMOD.pack(b"lines_sample", CALLER - first, 0x1000, 1, 2, 0,
                      bytes.fromhex(build_id), len(build_id) // 2)]
    ents += [bytes(DMOD.size)] * (MODULES_MAX - len(ents))
    size = DMODS_HEAD.size + DMOD.size * MODULES_MAX
    head = DMODS_HEAD.pack(marker(".modules"), DUMP_MAGIC, 1, DUMP_MODULES, size,
                           DMOD.size, MODULES_MAX, 0, 0)
    crc = zlib.crc32(head + b"".join(ents)) ^ (0 if crc_ok else 1)
    return DMODS_HEAD.pack(marker(".modules"), DUMP_MAGIC, 1, DUMP_MODULES, size,
                           DMOD.size, MODULES_MAX, crc, 0) + b"".join(ents)


def test_dump_lines(tmp_path):
    """dump --lines resolves through the dump's table, which is no
    channel; a damaged table is said, and the records still print."""
    build_id, first, line = sample_facts()
    for crc_ok in (True, False):
        mem = bytearray(8 * PAGE)
        channel(mem, "cli", PAGE, 3, ["dump-a", "dump-b"])
        put(mem, 5 * PAGE, modules_table(build_id, first, crc_ok))
        (tmp_path / "vmcore").write_bytes(elf_core(mem))
        p = run(["dump", "--channel", "cli", "-F", "ts", "-d", str(SAMPLE), "vmcore"], tmp_path)
        out, err = p.stdout.decode(), p.stderr.decode()
        if crc_ok:
            assert p.returncode == 0 and err == "", err
            assert out.startswith("[    2.000000000] cpu0 L3 #0 lines_first+0x") and \
                f"lines_sample.c:{line}: dump-a\n" in out, out
        else:
            assert p.returncode == 0
            assert err == ("dti: warning: callers not resolved to source lines: module table at "
                           "physical 0x5000: CRC mismatch (damaged, or caught in the middle of "
                           "an update)\n"), err
            assert out == ("[    2.000000000] cpu0 L3 #0 0xffffffffc0001234: dump-a\n"
                           "[    2.000000010] cpu0 L3 #1 0xffffffffc0001234: dump-b\n")
        p = run(["dump", "--list", "vmcore"], tmp_path)
        assert p.returncode == 0 and b"\n.modules" not in p.stdout
        assert (b"  modules: module table at physical 0x5000: 2 entries, 2 of them live\n"
                if crc_ok else b"CRC mismatch") in p.stdout, p.stdout
    # an excerpt keeps the table
    put(mem, 5 * PAGE, modules_table(build_id, first))
    (tmp_path / "vmcore").write_bytes(elf_core(mem))
    assert run(["dump", "--excerpt", "x.elf", "vmcore"], tmp_path).returncode == 0
    p = run(["dump", "--channel", "cli", "-F", "ts", "-d", str(SAMPLE), "x.elf"], tmp_path)
    assert p.returncode == 0 and f"lines_sample.c:{line}: dump-a".encode() in p.stdout
    # --out saves it with the channel, for decode --lines
    assert run(["dump", "--out", "o", "vmcore"], tmp_path).returncode == 0
    assert (tmp_path / "o/cli/modules").read_text() == modules_text(build_id, first)


def test_dump_lines_previous_boot(tmp_path):
    """An earlier boot's rings in a persistent region (NAME@bootN) print
    with that boot's module table, which the region keeps after its slot
    table; the dumped boot's channel with the dump's (none here: said)."""
    build_id, first, line = sample_facts()
    mem = bytearray((RUNTIME / "tests/fuzz-seeds-dump/dump-persist").read_bytes()[1:])
    region, slots, slot_size, table_size = 16 * PAGE, 32, 112, 16 + MODULES_MAX * DMOD.size
    ents = [DMOD.pack(b"lines_sample", CALLER - first, 0x1000, 1, 0, 0,
                      bytes.fromhex(build_id), len(build_id) // 2)]
    ents = b"".join(ents + [bytes(DMOD.size)] * (MODULES_MAX - 1))
    crc = zlib.crc32(struct.pack("<IIII", 1, MODULES_MAX, DMOD.size, 0) + ents)
    # boot 1 keeps table 1 % 2
    put(mem, region + 72 + slots * slot_size + table_size,
        struct.pack("<IIII", 1, MODULES_MAX, DMOD.size, crc) + ents)
    (tmp_path / "vmcore").write_bytes(elf_core(mem))
    p = run(["dump", "--channel", "pa@boot1", "-F", "ts", "-d", str(SAMPLE), "vmcore"], tmp_path)
    out = p.stdout.decode().splitlines()
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    assert len(out) == 7 and all(f"lines_sample.c:{line}: " in x for x in out), out
    p = run(["dump", "--channel", "pa", "-F", "ts", "-d", str(SAMPLE), "vmcore"], tmp_path)
    assert p.returncode == 0 and b"lines_sample.c" not in p.stdout
    assert p.stderr == (b"dti: warning: callers not resolved to source lines: no module table "
                        b"in the dump (a dti.ko without one?)\n"), p.stderr
    p = run(["dump", "--list", "vmcore"], tmp_path)
    assert b"  modules: module table of boot 1 in the persistent region, at physical 0x" \
        in p.stdout, p.stdout
    # dump --out: each directory with its records' table
    assert run(["dump", "--out", "o", "vmcore"], tmp_path).returncode == 0
    assert (tmp_path / "o/pa@boot1/modules").read_text().startswith("lines_sample 0x")
    assert not (tmp_path / "o/pa/modules").exists()


def test_console_log_lines(tmp_path):
    """console-log --lines takes the module lines printed before the
    channels; other lines and channels are read as without."""
    build_id, first, line = sample_facts()
    mods = [f"[    4.100000] dti: panic: module {x}" for x in
            modules_text(build_id, first).splitlines()]
    log = CONSOLE_LOG.splitlines()
    (tmp_path / "log").write_text("\n".join(log[:2] + mods + log[2:]) + "\n")
    p = run(["console-log", "--channel", "ca", "-F", "ts", "-d", str(SAMPLE), "log"], tmp_path)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    out = p.stdout.decode().splitlines()
    assert len(out) == 3 and all(f"lines_first+0x{first:x}/0x" in x and
                                 f"lines_sample.c:{line}: " in x for x in out), out
    # without them: said once
    (tmp_path / "log").write_text(CONSOLE_LOG)
    p = run(["console-log", "--channel", "ca", "--lines", "log"], tmp_path)
    assert p.returncode == 0 and p.stderr.decode().count("no module table in the log") == 1
    # a module line that does not parse: said, left out
    bad = mods[:1] + [mods[1].replace(" live ", " dead ")]
    (tmp_path / "log").write_text("\n".join(log[:2] + bad + log[2:8]) + "\n")
    p = run(["console-log", "--channel", "ca", "-F", "ts", "-d", str(SAMPLE), "log"], tmp_path)
    assert p.returncode == 0 and b"lines_sample.c" not in p.stdout
    assert re.search(rb"log:4: a module line that does not parse \(left out\): the state is "
                     rb"neither", p.stderr), p.stderr


if __name__ == "__main__":
    if sys.argv[1:] == ["--table"]:
        print(bad_input_table())
    else:
        sys.exit("usage: test_cli.py --table")


# ---- several channels in one timeline ----

def json_lines(p) -> list[dict]:
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.decode().splitlines()]


def make_other(d):
    """Snapshot of channel "other", its records between those of make_snap()'s
    "test" (1.000000000 + 10 ns * i + cpu): from 1.000000005, one at the
    same time as one of "test" (1.000000010)."""
    return make_snap(d, {0: stream(0, ["o0-a", "o0-b", "o0-c"], b"other", 1000000000 + 5),
                         1: stream(1, ["o1-a", "o1-b"], b"other", 1000000000 + 9)})


def union(*outs) -> list[dict]:
    """Records of several channels as one timeline: by time, ties to the
    channel given first (sorted() is stable)"""
    return sorted((r for recs in outs for r in recs), key=lambda r: int(r["ts_ns"]))


@pytest.mark.parametrize("opts", [[], ["-c", "1"], ["-S", "+6ns"], ["-U", "-15ns"],
                                  ["-g", "-b$"], ["--filter", "seq >= 1"]])
def test_decode_directories_merged(work, opts):
    """decode DIR1 DIR2 is the union of decode DIR1 and decode DIR2 in
    time order; the filters hold for the merged records (times from the
    first and last of all of them)"""
    make_other(work / "other")
    both = json_lines(run(["decode", "-F", "json", *opts, "snap", "other"], work))
    alone = union(json_lines(run(["decode", "-F", "json", "snap"], work)),
                  json_lines(run(["decode", "-F", "json", "other"], work)))
    first, last = int(alone[0]["ts_ns"]), int(alone[-1]["ts_ns"])
    keep = {"-c": lambda r: r["cpu"] == 1, "-S": lambda r: int(r["ts_ns"]) >= first + 6,
            "-U": lambda r: int(r["ts_ns"]) <= last - 15,
            "-g": lambda r: r["text"].endswith("-b"), "--filter": lambda r: int(r["seq"]) >= 1}
    want = [r for r in alone if not opts or keep[opts[0]](r)]
    assert both == want and len(both) > 1
    assert {r["channel"] for r in union(*[json_lines(run(["decode", "-F", "json", d], work))
                                          for d in ("snap", "other")])} == {"test", "other"}


def test_decode_directories_channel_column(work):
    """Text lines begin with their channel, padded to the longest name;
    each channel's lines are those decode prints of it alone"""
    make_other(work / "other")
    lines = run(["decode", "snap", "other"], work).stdout.decode().splitlines()
    alone = {name: run(["decode", d], work).stdout.decode().splitlines()
             for name, d in (("test", "snap"), ("other", "other"))}
    # zero-b and o1-a at the same time: the channel given first goes first
    assert lines[:5] == ["test  zero-a", "test  one-a", "other o0-a", "test  zero-b",
                         "other o1-a"], lines
    for name, want in alone.items():
        assert [x[6:] for x in lines if x.startswith(name + " ")] == want
    assert len(lines) == sum(map(len, alone.values()))
    ts = run(["decode", "-F", "ts", "other", "snap"], work).stdout.decode().splitlines()
    assert ts[0] == "test  [    1.000000000] cpu0 L3 #0 0xffffffffc0001234: zero-a", ts
    assert [x.split()[0] for x in ts if "1.000000010]" in x] == ["other", "test"], ts
    # one directory: no column, as before
    assert run(["decode", "snap"], work).stdout.decode() == MERGED


def test_decode_directories_report(work):
    """--report of several snapshots: records per channel, each one's stats"""
    make_other(work / "other")
    (work / "other" / "stats").write_text("cpu written\n0 3\n1 2\n")
    p = run(["report", "snap", "other"], work)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr
    assert out.startswith("records: 11 from 1.000000000 to 1.000000025 s"), out
    assert "\nchannel                       records\ntest                                6\n" \
           "other                               5\n" in out, out
    assert "\naccounting (other/stats):\ncpu written\n0 3\n1 2\n" in out, out


def test_report_gap_of_merged_channels(tmp_path):
    """--report of several channels: a lost interval ends at the next
    record of its own channel's CPU, not at a record another channel's
    same CPU logged in between, and is listed under its channel"""
    snaps = {}
    for name, recs in (("test", [(0, 10), (1, 50), (5, 250)]), ("other", [(0, 100)])):
        info = SUBINFO.pack(4096, 4, 0, len(recs), 0, 0, name.encode())
        cpu1 = rec(1, 0, 1, info, flags=SUBBUF, level=0)
        for seq, ts in recs:
            cpu1 += rec(1, seq, 2_000_000_000 + ts, f"{name} {seq}", level=6)
        snaps[name] = make_snap(tmp_path / name, {1: cpu1})
    p = run(["report", "test", "other"], tmp_path)
    out = p.stdout.decode()
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    assert "\ntest cpu1   2..4 (3)  2.000000050 .. 2.000000250\n" in out, out


def test_read_channels_merged(work):
    """read CH1 CH2 (a fake debugfs): one timeline with the column; -f
    polls both until interrupted"""
    make_debugfs(work / "fs")
    other = work / "fs" / "dti" / "other"
    make_other(other)
    for f in ("level", "info", "stats", "reset_consumed"):
        (other / f).write_bytes((work / "fs" / "dti" / "ch" / f).read_bytes())
    p = run(["--debugfs", "fs", "read", "-F", "json", "ch", "other"], work)
    want = union(json_lines(run(["--debugfs", "fs", "read", "-F", "json", "ch"], work)),
                 json_lines(run(["--debugfs", "fs", "read", "-F", "json", "other"], work)))
    assert json_lines(p) == want and {r["channel"] for r in want} == {"ch", "other"}
    p = subprocess.Popen([str(DTI), "--debugfs", "fs", "read", "-f", "other", "ch"], cwd=work,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = [p.stdout.readline().decode() for _ in want]
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    assert (p.returncode, out, err) == (0, b"", b"")
    assert lines[:3] == ["ch    zero-a\n", "ch    one-a\n", "other o0-a\n"], lines
    # the tie goes the other way: "other" was given first
    assert [x.split()[1] for x in lines] == \
        [r["text"] for r in sorted(want, key=lambda r: (int(r["ts_ns"]), r["channel"] == "ch"))]


def test_dump_channels_merged(tmp_path):
    """dump --channel A,B (and --channel A --channel B): the channels'
    records in one timeline, each as dump --channel prints it alone"""
    mem = bytearray(8 * PAGE)
    channel(mem, "cli", PAGE, 3, ["c-a", "c-b", "c-c"])
    channel(mem, "dev", 2 * PAGE, 4, ["d-a", "d-b"], base=2000000005)
    (tmp_path / "vmcore").write_bytes(elf_core(mem))
    alone = union(*[json_lines(run(["dump", "-F", "json", "--channel", c, "vmcore"], tmp_path))
                    for c in ("cli", "dev")])
    for args in (["--channel", "dev,cli"], ["--channel", "cli", "--channel", "dev"]):
        assert json_lines(run(["dump", "-F", "json", *args, "vmcore"], tmp_path)) == alone
    p = run(["dump", "--channel", "cli,dev", "-S", "+10ns", "vmcore"], tmp_path)
    assert (p.returncode, p.stdout.decode(), p.stderr) == \
        (0, "cli c-b\ndev d-b\ncli c-c\n", b"")


def test_filter_field_no_event_type_has(tmp_path):
    """--filter naming a field no record and no event type read has is an
    error naming the field and the event types' fields, where the records
    end (the formats are learnt from the data): in decode, in report and
    in a merge of snapshots; a field one type has is none."""
    sys.path.insert(0, str(RUNTIME.parent / "bench"))
    import decode_events
    decode_events.snapshot(tmp_path / "ev", 300, typed=True)
    make_snap(tmp_path / "snap")
    fields = (r"not one of every record's \(event, level, cpu, seq\), nor of an event type read "
              r"\(dev, irq, status, len\)\n$")
    for args in (["decode", "--filter", "stauts != 0", "ev"],
                 ["report", "--filter", "stauts != 0", "ev"],
                 ["decode", "--filter", "stauts != 0", "ev", "snap"]):
        r = subprocess.run([str(DTI), *args], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 1, (args, r.stderr)
        assert re.search(r'^dti: filter: expression "stauts != 0": no field stauts: ' + fields,
                         r.stderr, re.M), (args, r.stderr)
    # a field of a type: no error, whatever it matches
    r = subprocess.run([str(DTI), "decode", "--filter", "status == 12345", "ev", "snap"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_symbols_of_this_boot_only(work):
    """-s resolves callers through this boot's /proc/kallsyms: decode,
    report and export take it for a snapshot of this boot (its boot_id,
    which dti snapshot writes), and refuse, as dump does, a snapshot of
    another boot, one naming none (dump --out writes none) and files
    without a boot_id among them, saying what to do instead; --kallsyms
    FILE is taken for any."""
    this = Path(BOOT_ID).read_text().strip()
    assert run(["--debugfs", "{fs}", "snapshot", "ch", "new"], work).returncode == 0
    shutil.copytree(work / "new", work / "other")
    (work / "other/boot_id").write_text("0123abcd-0000-4000-8000-000000000000\n")
    assert run(["dump", "-q", "--out", "saved", "{vmcore}"], work).returncode == 2
    ok = [["decode", "-s", "new"], ["report", "-s", "new"], ["decode", "-s", "new", "new"],
          ["decode", "-s", *sorted(f"new/{f}" for f in os.listdir(work / "new"))],
          ["export", "-F", "perfetto", "-s", "t.pftrace", "new"],
          ["decode", "--kallsyms", "{ksyms}", "other"], ["decode", "--kallsyms", "{ksyms}", "-"]]
    for args in ok:
        p = run(args, work, stdin=b"")
        assert p.returncode == 0 and b"boot" not in p.stderr, (args, p.stderr)
    todo = (b": -s/--symbols resolves callers through this boot's /proc/kallsyms; give the "
            b"kallsyms of the boot that logged with --kallsyms FILE\n")
    other = (b"other: records of boot 0123abcd-0000-4000-8000-000000000000 (other/boot_id), not of "
             b"this one, " + this.encode() + todo)
    refused = {("decode", "-s", "other"): b"dti decode: " + other,
               ("report", "-s", "other"): b"dti report: " + other,
               ("decode", "-s", "new", "other"): b"dti decode: " + other,
               ("export", "-F", "perfetto", "-s", "t2.pftrace", "other"): b"dti export: " + other,
               ("decode", "-s", "other/trace0", "other/boot_id"):
               b"dti decode: the files: records of boot 0123abcd-0000-4000-8000-000000000000 "
               b"(other/boot_id), not of this one, " + this.encode() + todo,
               ("decode", "-s", "new/trace0"):
               b"dti decode: the files: records of no known boot (no file boot_id among them)" + todo,
               ("decode", "-s", "-"):
               b"dti decode: the files: records of no known boot (no file boot_id among them)" + todo,
               ("decode", "-s", "saved/cli"):
               b"dti decode: saved/cli: records of no known boot (saved/cli/boot_id: No such file or "
               b"directory; 'dti snapshot' writes it, not an older dti, 'dti dump --out' or "
               b"save-previous)" + todo}
    for args, err in refused.items():
        p = run(list(args), work, stdin=b"")
        assert (p.returncode, p.stdout) == (129, b""), (args, p.stderr)
        assert p.stderr.startswith(err), (args, p.stderr)


# ---- a built-in DTI's dump index, named in VMCOREINFO ----

# struct dti_dump_index of <linux/dti_record.h>: the header, then the slots
INDEX_HEAD = struct.Struct("<IHHIIIIII")
INDEX_MAGIC, INDEX_SLOTS, PAGE_SIZE = 0xD7D01DE5, 508, 4096
EHDR, PHDR, NHDR = struct.Struct("<16sHHIQQQIHHHHHH"), struct.Struct("<IIQQQQQQ"), struct.Struct("<III")
PT_LOAD, PT_NOTE = 1, 4


def elf_read(data):
    """An ELF core's header, VMCOREINFO text and PT_LOADs as
    [paddr, vaddr, bytes]."""
    eh = EHDR.unpack_from(data)
    info, loads = None, []
    for i in range(eh[10]):
        ph = PHDR.unpack_from(data, eh[5] + i * PHDR.size)
        body = data[ph[2]:ph[2] + ph[5]]
        if ph[0] == PT_LOAD:
            loads.append([ph[4], ph[3], body])
        elif ph[0] == PT_NOTE:
            namesz, descsz, _ = NHDR.unpack_from(body)
            at = NHDR.size + (namesz + 3) // 4 * 4
            assert body[NHDR.size:NHDR.size + namesz] == b"VMCOREINFO\0"
            info = body[at:at + descsz]
    return eh, info, loads


def elf_write(eh, info, loads):
    """An ELF core as elf_read() gives one, every PT_LOAD page-aligned."""
    note = NHDR.pack(11, len(info), 0) + b"VMCOREINFO\0\0" + info + bytes(-len(info) % 4)
    n = 1 + len(loads)
    off = EHDR.size + n * PHDR.size
    data_at = -(-(off + len(note)) // PAGE_SIZE) * PAGE_SIZE
    out = bytearray(EHDR.pack(eh[0], eh[1], eh[2], eh[3], 0, EHDR.size, 0, 0,
                              EHDR.size, PHDR.size, n, 0, 0, 0))
    out += PHDR.pack(PT_NOTE, 0, off, 0, 0, len(note), 0, 0)
    body = b""
    for paddr, vaddr, data in loads:
        out += PHDR.pack(PT_LOAD, 7, data_at + len(body), vaddr, paddr, len(data), len(data), 0)
        body += data + bytes(-len(data) % PAGE_SIZE)
    out += note
    return bytes(out) + bytes(data_at - len(out)) + body


def index_page(slots, overflowed=0, crc_ok=True):
    """struct dti_dump_index listing `slots`, sealed (or its CRC off by one)."""
    slots = list(slots) + [0] * (INDEX_SLOTS - len(slots))
    raw = INDEX_HEAD.pack(INDEX_MAGIC, 1, 0, PAGE_SIZE, INDEX_SLOTS, 3, overflowed, 0, 0)
    raw += struct.pack(f"<{INDEX_SLOTS}Q", *slots)
    crc = zlib.crc32(raw) + (0 if crc_ok else 1)
    return raw[:24] + struct.pack("<I", crc & 0xffffffff) + raw[28:]


def descriptors(loads):
    """Physical addresses of every "__DTI_" at an 8-byte boundary."""
    return [p + i for p, _, data in loads for i in range(0, len(data), 8)
            if data.startswith(b"__DTI_", i)]


def indexed(path, tmp_path, slots=None, at=None, **kw):
    """`path` (an excerpt of a real guest dump) as a built-in DTI's dump
    would be: its dump index on a page of its own, VMCOREINFO's DTI= line
    naming it (or `at`).  The file's path and the index's address."""
    eh, info, loads = elf_read(path.read_bytes())
    page = max(p + len(d) for p, _, d in loads) + PAGE_SIZE
    found = descriptors(loads)
    loads.append([page, 0, index_page(found if slots is None else slots, **kw)])
    loads.append([page + 2 * PAGE_SIZE, 0, bytes(PAGE_SIZE)])      # a page of zeros
    fake = b"__DTI__fake".ljust(PAGE_SIZE, b"\0")                  # a marker, no descriptor
    loads.append([page + 4 * PAGE_SIZE, 0, fake])
    line = b"DTI=0x%x\n" % (page if at is None else at)
    out = tmp_path / "indexed.elf"
    out.write_bytes(elf_write(eh, info + line, loads))
    return out, page, len(found)


@pytest.mark.parametrize("path", EXCERPTS, ids=lambda p: p.stem)
def test_real_excerpt_indexed(path, tmp_path):
    """A real dump whose VMCOREINFO names a dump index (as a kernel with
    DTI built in writes it) is read from the index, not scanned (-v says
    which way), with the records of the scan; an excerpt of it leaves
    the DTI= line out (it does not hold all the index lists) and is the
    excerpt of the dump without the index."""
    want = run(["dump", "-F", "json", str(path)])
    assert want.returncode == 0, want.stderr
    p = run(["dump", "-v", "-F", "json", str(path)])
    assert p.stdout == want.stdout
    assert b"channels located by scanning (VMCOREINFO names no dump index" in p.stderr
    vmcore, at, n = indexed(path, tmp_path)
    assert n >= 1
    p = run(["dump", "-v", "-F", "json", str(vmcore)])
    assert p.returncode == 0, p.stderr
    assert p.stdout == want.stdout
    assert p.stderr.startswith(
        b"dti: %s: channels located by VMCOREINFO (DTI=0x%x): %d descriptors in its dump index\n"
        % (bytes(vmcore), at, n))
    assert p.stderr.count(b"\n") == want.stderr.count(b"\n") + 1
    p = run(["dump", "--list", str(vmcore)])
    assert p.returncode == 0, p.stderr
    assert b"located by VMCOREINFO (DTI=0x%x): its dump index lists %d descriptors" % (at, n) in p.stdout
    p = run(["dump", "--excerpt", str(tmp_path / "x.elf"), str(vmcore)])
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "x.elf").read_bytes() == path.read_bytes()


def test_real_excerpt_bad_index(tmp_path):
    """A DTI= line that points outside the dump, at a page of zeros, at a
    table whose CRC fails or that overflowed, or an index listing what is
    no descriptor (no marker; a marker with no descriptor behind it): a
    warning naming the address, and the dump is scanned, nothing lost."""
    path = RUNTIME / "tests" / "dump-excerpts" / "h_early.elf"
    want = run(["dump", "-F", "json", str(path)]).stdout
    assert want
    _, page, _ = indexed(path, tmp_path)
    cases = [
        (dict(at=0x7f0000000000), rb"VMCOREINFO's DTI=0x7f0000000000: not in the dump"),
        (dict(at=page + 2 * PAGE_SIZE),
         rb"VMCOREINFO's DTI=0x%x: no dump index there \(its magic is not DTI's\)" % (page + 2 * PAGE_SIZE)),
        (dict(crc_ok=False), rb"VMCOREINFO's DTI=0x%x: its CRC does not match" % page),
        (dict(overflowed=1), rb"VMCOREINFO's DTI=0x%x: it overflowed" % page),
        (dict(slots=[page + 2 * PAGE_SIZE]),
         rb"the dump index at physical 0x%x lists 0x%x \(slot 0\), which holds no DTI descriptor"
         % (page, page + 2 * PAGE_SIZE)),
        (dict(slots=descriptors(elf_read(path.read_bytes())[2]) + [page + 4 * PAGE_SIZE]),
         rb"the dump index at physical 0x%x \(VMCOREINFO's DTI\) lists 1 entries that are no descriptor"
         % page),
    ]
    for kw, msg in cases:
        vmcore, _, _ = indexed(path, tmp_path, **kw)
        p = run(["dump", "-v", "-F", "json", str(vmcore)])
        assert p.returncode == 0, (kw, p.stderr)
        assert p.stdout == want, kw
        assert re.search(b"dti: warning: .*" + msg + b".*: scanning the dump instead\n", p.stderr), (kw, p.stderr)
        assert b"channels located by scanning (VMCOREINFO's dump index could not be used)" in p.stderr, kw
