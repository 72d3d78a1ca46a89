"""dump_on_panic: the newest records on the console at a real panic (issue 20).

Each test boots a guest, has dti_test write known records, and makes the
kernel panic for real (sysrq-c) or oops; the host reads the serial
console QEMU captured:

* selection: two channels opted in (text and binary records), one not:
  the console holds exactly the newest N records per CPU of each
  opted-in channel, merged by time, and nothing of the other; `dti
  console-log` of the log gives the records `dti read` printed in the
  guest just before, field for field;
* panic during writes: every CPU floods an opted-in channel from a
  kthread, a timer and an hrtimer when the panic comes: the section is
  complete and every record in it is whole;
* panic inside a write: a kprobe in the write path panics the kernel
  while the panicking CPU is in the middle of a write: its ring is read
  up to the last whole record;
* cap: a channel of 64 MiB per CPU asks for more than it holds: what is
  printed stays within panic_max_lines and panic_max_bytes, is the
  newest of the selection, and the end line says it was capped;
* oops: an oops without panic_on_oops prints only once dump_on_oops is
  set; the dump_on_panic module parameter is what channels registered
  later start with.

Timings on the reference host: ~25 s per boot.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from dtirec import accounting_errors, crec_layout, json_record, parse_stats
from guestlib import PRELUDE
from harness import vm
from harness.initramfs import DRAIN_OUTPUT

REPO = Path(__file__).resolve().parent.parent
DTI = REPO / "runtime" / "build" / "dti"
TAG = "dti: panic: "
BEGIN = re.compile(r"dti: panic: ---- begin (\S+): newest (\d+) per CPU, (\d+) records "
                   r"from CPUs (\S*) ----")
END = re.compile(r"dti: panic: ---- end (\S+): (\d+) records(?:, capped: (\d+) older)?")


def panic_boot(script: str, modules, kernel, build_dir, dti_tool, *, smp: int = 2,
               mem: int = vm.DEFAULT_MEM) -> vm.VMPanic:
    """Run `script`, which must end in a panic; the VMPanic with the console."""
    with pytest.raises(vm.VMPanic) as e:
        vm.run(script, modules=modules, extra_files={str(dti_tool): "/bin/dti"},
               kernel=kernel, build_dir=build_dir, smp=smp, mem=mem)
    return e.value


def views(stdout: str) -> dict[str, list[str]]:
    """The "@@JSON NAME" ... "@@END NAME" blocks the guest printed."""
    return {m.group(1): [x for x in m.group(2).splitlines() if x.startswith("{")]
            for m in re.finditer(r"^@@JSON (\S+)\n(.*?)^@@END \1$", stdout, re.M | re.S)}


def newest(lines: list[str], n: int) -> list[str]:
    """The newest `n` records of each CPU of a `dti read -F json` output,
    merged by time as the panic output merges them (ties: lower CPU)."""
    recs = [json_record(x) | {"_line": x} for x in lines]
    keep = []
    for cpu in sorted({r["cpu"] for r in recs}):
        keep += sorted((r for r in recs if r["cpu"] == cpu), key=lambda r: r["seq"])[-n:]
    keep.sort(key=lambda r: (r["ts_ns"], r["cpu"]))
    return [r["_line"] for r in keep]


def section(console: str, name: str) -> list[str]:
    """The record lines of channel `name` between its begin and end lines."""
    lines = console.splitlines()
    start = next(i for i, x in enumerate(lines) if BEGIN.search(x) and
                 BEGIN.search(x).group(1) == name)
    end = next(i for i in range(start, len(lines)) if END.search(lines[i]) and
               END.search(lines[i]).group(1) == name)
    return [x[x.index(TAG) + len(TAG):] for x in lines[start + 1:end]
            if f"{TAG}{name}: [" in x]


def console_log(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DTI), "console-log", *args, str(path)], capture_output=True,
                          text=True, timeout=60)


@pytest.fixture(scope="module")
def host_dti(dti_tool) -> Path:
    return DTI


SELECT_N = {"pa": 25, "pb": 40}
SELECT_SCRIPT = PRELUDE + r"""
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub pa 8192 4 7 0
ctl register_sub pb 65536 2 7 0
ctl register_sub pc 8192 4 7 0
c=0
while [ $c -lt $NCPU ]; do
    ctl printk pa 6 400 $c process a$c
    ctl event pb 5 300 $c softirq 24
    ctl printk pc 6 100 $c process c$c
    c=$((c + 1))
done
# the newest of cpu0: a text with a leading '<', a backslash, UTF-8
printf 'printk pa 6 1 0 process <q\\z\303\251\n' > $T
echo 25 > $D/pa/dump_on_panic
echo 40 > $D/pb/dump_on_panic
for ch in pa pb; do
    echo "@@JSON $ch"
    dti read -F json $ch
    echo "@@END $ch"
done
""" + DRAIN_OUTPUT + r"""
echo c > /proc/sysrq-trigger
"""


def test_panic_prints_the_newest_of_opted_in_channels(modules, kernel, build_dir, dti_tool,
                                                       host_dti, tmp_path):
    e = panic_boot(SELECT_SCRIPT, modules, kernel, build_dir, dti_tool)
    v = views(e.stdout)
    log = tmp_path / "console.log"
    log.write_text(e.console)
    assert f"{TAG}---- begin pc" not in e.console and f"{TAG}pc:" not in e.console
    assert "cpu0 L6 #400 " in e.console and ": \\x3cq\\\\z\\xc3\\xa9 0\n" in e.console
    for ch, n in SELECT_N.items():
        want = newest(v[ch], n)
        assert len(want) == n * 2, f"{ch}: the guest holds fewer records than asked"
        got = section(e.console, ch)
        assert len(got) == len(want), f"{ch}: {len(got)} lines, want {len(want)}"
        m = [END.search(x) for x in e.console.splitlines() if END.search(x)]
        assert any(x.group(1) == ch and int(x.group(2)) == len(want) and not x.group(3)
                   for x in m), ch
        r = console_log(log, "--channel", ch, "-F", "json")
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines() == want, f"{ch}: console-log differs from dti read"
    r = console_log(log, "-F", "ts")
    assert r.returncode == 0, r.stderr
    assert re.findall(r"^==> (\S+) <==$", r.stdout, re.M) == ["pa", "pb"]


FLOOD_N = 200
FLOOD_SCRIPT = PRELUDE + rf"""
ctl register_sub fl 8192 8 7 0
echo {FLOOD_N} > $D/fl/dump_on_panic
echo "floodctx fl 4000" > $T &
sleep 1
echo c > /proc/sysrq-trigger
"""


def test_panic_while_every_cpu_writes(modules, kernel, build_dir, dti_tool, host_dti,
                                      tmp_path):
    """The panicking CPU stops the others wherever they are in a write:
    only whole records come out, each CPU's in sequence."""
    e = panic_boot(FLOOD_SCRIPT, modules, kernel, build_dir, dti_tool, smp=4)
    log = tmp_path / "console.log"
    log.write_text(e.console)
    ends = [m for m in map(END.search, e.console.splitlines()) if m]
    assert [m.group(1) for m in ends] == ["fl"], "the section did not complete"
    r = console_log(log, "-F", "json", "--channel", "fl")
    assert r.returncode == 0, r.stderr
    recs = [json_record(x) for x in r.stdout.splitlines()]
    assert len(recs) == int(ends[0].group(2)) > 0
    by_cpu: dict[int, list[dict]] = {}
    for x in recs:
        assert re.fullmatch(r"flood [PSH]\d+ \d+\n", x["text"]), x
        by_cpu.setdefault(x["cpu"], []).append(x)
    for cpu, xs in by_cpu.items():
        assert len(xs) <= FLOOD_N
        seqs = [x["seq"] for x in xs]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), cpu
    assert len(by_cpu) >= 2, "records of one CPU only"


PANICIN_N = 30
PANICIN_SUBBUF = 8192
# The "pw <i>" records that fit the first sub-buffer
PW_FIT = len(crec_layout([len(f"pw {i}\n") for i in range(100000)], PANICIN_SUBBUF)[0])
PANICIN_SCRIPT = PRELUDE + rf"""
ctl register_sub pw {PANICIN_SUBBUF} 4 7 0
echo {PANICIN_N} > $D/pw/dump_on_panic
echo "panicin pw 100000" > $T
"""


def test_panic_inside_a_write(modules, kernel, build_dir, dti_tool, host_dti, tmp_path):
    """dti_test's panicin: a kprobe in the write path (dti_subbuf_start)
    panics the kernel in the middle of the write that fills the first
    sub-buffer, with the channel's write guard held on the panicking
    CPU: its ring is read up to the last whole record, the one before."""
    e = panic_boot(PANICIN_SCRIPT, modules, kernel, build_dir, dti_tool)
    assert "panic inside a write" in e.console
    log = tmp_path / "console.log"
    log.write_text(e.console)
    r = console_log(log, "-F", "json", "--channel", "pw")
    assert r.returncode == 0, r.stderr
    fit = PW_FIT
    assert [json_record(x)["text"] for x in r.stdout.splitlines()] == \
        [f"pw {i}\n" for i in range(fit - PANICIN_N, fit)]


CAP_LINES, CAP_BYTES = 1500, 65536
CAP_SCRIPT = PRELUDE + rf"""
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub big 1048576 64 7 0
c=0
while [ $c -lt $NCPU ]; do
    ctl printk big 6 3000 $c process big$c
    c=$((c + 1))
done
echo 1000000 > $D/big/dump_on_panic
echo {CAP_LINES} > /sys/module/dti/parameters/panic_max_lines
echo {CAP_BYTES} > /sys/module/dti/parameters/panic_max_bytes
echo "@@JSON big"
dti read -F json big
echo "@@END big"
{DRAIN_OUTPUT}
echo c > /proc/sysrq-trigger
"""


def test_panic_output_is_capped(modules, kernel, build_dir, dti_tool, host_dti, tmp_path):
    e = panic_boot(CAP_SCRIPT, modules, kernel, build_dir, dti_tool, mem=768)
    want = newest(views(e.stdout)["big"], 10 ** 6)
    got = section(e.console, "big")
    lines = [x for x in e.console.splitlines() if f"{TAG}big: [" in x]
    assert 0 < len(got) <= CAP_LINES
    assert sum(len(x[x.index(TAG):]) + 1 for x in lines) <= CAP_BYTES
    end = next(m for m in map(END.search, e.console.splitlines()) if m)
    assert end.group(3) and int(end.group(2)) == len(got)
    assert int(end.group(2)) + int(end.group(3)) == len(want)
    log = tmp_path / "console.log"
    log.write_text(e.console)
    r = console_log(log, "-F", "json", "--channel", "big")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == want[-len(got):], "not the newest of the selection"


OOPS_SCRIPT = PRELUDE + r"""
echo 0 > /proc/sys/kernel/panic_on_oops
ctl register_sub po 8192 4 7 0
ctl printk po 6 50 -1 process po
echo 10 > $D/po/dump_on_panic
echo "dti-test: oops without dump_on_oops" > /dev/kmsg
sh -c "echo oops > $T" || true
echo 1 > /sys/module/dti/parameters/dump_on_oops
echo "dti-test: oops with dump_on_oops" > /dev/kmsg
sh -c "echo oops > $T" || true
echo "dti-test: done" > /dev/kmsg
echo 7 > /sys/module/dti/parameters/dump_on_panic
ctl register_sub pd 8192 4 7 0
echo "@@DEFAULT po=$(cat $D/po/dump_on_panic) pd=$(cat $D/pd/dump_on_panic)"
"""


def test_oops_prints_only_with_dump_on_oops(modules, kernel, build_dir, dti_tool, host_dti):
    res = vm.run(OOPS_SCRIPT, modules=modules, extra_files={str(dti_tool): "/bin/dti"},
                 kernel=kernel, build_dir=build_dir)
    res.check()
    c = res.console
    first = c[c.index("oops without dump_on_oops"):c.index("oops with dump_on_oops")]
    second = c[c.index("oops with dump_on_oops"):c.index("dti-test: done")]
    # An oops's first line: "Oops: ..." on Debian's kernel; the debug
    # kernel's KASAN sees the NULL pointer first and says "general
    # protection fault ... KASAN".  Either ends in its count, [#N].
    oops = re.compile(r"(Oops|general protection fault).*\[#\d+\]")
    assert oops.search(first) and oops.search(second), c
    assert TAG not in first
    assert f"{TAG}oops: the newest records of 1 channel" in second
    assert len(section(second, "po")) == 10
    # the module parameter is what channels registered later start with
    assert "@@DEFAULT po=10 pd=7" in res.stdout


# A record reserved and not yet filled in when an oops prints its channel
# (issue 40, item 8): a kthread on CPU 1 reserves 48 bytes and keeps
# interrupts off for 4 s before it writes them (0xa5) and commits.  The
# oops on CPU 0 meanwhile (in the command that started the kthread, as
# soon as the record is reserved: a new process would wait for CPU 1)
# prints CPU 1's five text records and not the reservation; after the
# commit the record is there, whole.
HOLD_SCRIPT = PRELUDE + r"""
echo 0 > /proc/sys/kernel/panic_on_oops
echo 1 > /sys/module/dti/parameters/dump_on_oops
ctl register_sub hr 4096 4 7 0
echo 50 > $D/hr/dump_on_panic
ctl printk hr 6 5 1 process before
echo "dti-test: oops while reserved" > /dev/kmsg
taskset -c 0 sh -c "echo holdres hr 1 4000 48 oops > $T" || true
echo "dti-test: done" > /dev/kmsg
# the commit comes 4 s of the guest's time after the reservation: wait for
# it (at most 120 s: a loaded host's TCG guest takes longer than 4 s)
i=0
while [ "$(awk '$1 == "total" { print $2 }' $D/hr/stats)" != 6 ] && [ $i -lt 1200 ]; do
    sleep 0.1
    i=$((i + 1))
done
cat $D/hr/stats > /out/stats
dti read -F json hr > /out/read
"""


HOLD_LINE = re.compile(r"^\[ *\d+\.\d{9}\] cpu1 L6 #\d+ 0x[0-9a-f]+: (.*)$")


def test_oops_does_not_print_a_reservation_being_filled(modules, kernel, build_dir,
                                                        dti_tool):
    res = vm.run(HOLD_SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir,
                 extra_files={str(dti_tool): "/bin/dti"}, smp=2, timeout=300)
    res.check()
    c = res.console
    part = c[c.index("dti-test: oops while reserved"):c.index("dti-test: done")]
    lines = section(part, "hr")
    texts = [m.group(1) if (m := HOLD_LINE.match(x[len("hr: "):])) else x for x in lines]
    assert texts == [f"before {i}" for i in range(5)], lines
    st = parse_stats(res.outdir.joinpath("stats").read_text())
    assert st["total"]["written"] == 6 and not accounting_errors(st), st
    recs = [json_record(x) for x in res.outdir.joinpath("read").read_text().splitlines()]
    assert [r.get("text") for r in recs[:5]] == [f"before {i}\n" for i in range(5)], recs
    assert recs[5]["cpu"] == 1 and recs[5]["data"] == "a5" * 48, recs[5]


# An oops while every other CPU keeps writing (issue 40, item 6): the
# oops prints the newest 200 records of each CPU of pw, whose 4 x 4 KiB
# rings the flood writes over many times while the serial console takes
# seconds to print them.  Every line printed must be one whole record as
# it was stored: its text names the CPU the line says logged it, and each
# CPU's sequence numbers rise; records written over while they were read
# are left out and counted in the end line.
OOPS_FLOOD_SCRIPT = PRELUDE + r"""
echo 0 > /proc/sys/kernel/panic_on_oops
echo 1 > /sys/module/dti/parameters/dump_on_oops
ctl register_sub pw 4096 4 7 0
echo 200 > $D/pw/dump_on_panic
echo "bgflood pw" > $T
sleep 1
echo "dti-test: oops while writing" > /dev/kmsg
sh -c "echo oops > $T" || true
echo "dti-test: done" > /dev/kmsg
echo bgstop > $T
"""
RECORD_LINE = re.compile(r"^\[ *\d+\.\d{9}\] cpu(\d+) L\d #(\d+) 0x[0-9a-f]+: "
                         r"flood [PSH](\d+) \d+$")


def test_oops_while_other_cpus_write(modules, kernel, build_dir):
    res = vm.run(OOPS_FLOOD_SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir,
                 smp=4, timeout=600)
    res.check()
    c = res.console
    part = c[c.index("dti-test: oops while writing"):c.index("dti-test: done")]
    lines = section(part, "pw")
    end = END.search(part)
    assert end and int(end.group(2)) == len(lines), (end and end.group(0), len(lines))
    assert lines, part[-3000:]
    bad = [x for x in lines if not (m := RECORD_LINE.match(x[len("pw: "):]))
           or m.group(1) != m.group(3)]
    assert not bad, bad[:5]
    last: dict[str, int] = {}
    for x in lines:
        cpu, seq = RECORD_LINE.match(x[len("pw: "):]).group(1, 2)
        assert int(seq) > last.get(cpu, -1), (cpu, seq, last)
        last[cpu] = int(seq)
