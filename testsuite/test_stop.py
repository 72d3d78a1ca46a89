"""stop_on, dti_stop_all(), the exception calls and the sysrq key (issue 55).

Each test boots a guest, marks channels, and raises the event for real:

* warn under a flood: every vCPU floods a channel of 4 x 4 KiB per CPU
  from a kthread, a timer and an hrtimer; dti_test logs "before warn"
  and raises a WARN() on one CPU, and the flood goes on for 2 s, which
  writes over such a ring many times.  The channel, marked stop_on warn,
  keeps "before warn"; on each CPU at most one record is newer than the
  stop's time (a writer that read the flag just before it); what the
  flood logged after is counted as stopped and the accounting holds.  A
  channel not marked stores on.  Writing the level starts it again.
* warn inside DTI's own write path: the WARN() comes while a
  reservation of the channel is open on its CPU (write guard held,
  interrupts off): no deadlock, no recursion, the reservation is
  committed whole and is the channel's last record.
* oops under a flood: the same with an oops (panic_on_oops=0) in the
  command that logged "before oops", stop_on oops.
* the sysrq key: 'a' stops every channel and prints the newest records
  of each on the console (dump_on_panic per CPU where set, sysrq_records
  elsewhere), which `dti console-log` reads back.
* the stop_on file and parameter, registration flags, dti_stop(),
  dti_stop_all() and the exception calls, in one boot.

Timings on the reference host: ~30 s per boot.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from dtirec import accounting_errors, json_record, parse_stats
from guestlib import PRELUDE, PRELUDE_FUNCS
from harness import vm

REPO = Path(__file__).resolve().parent.parent
DTI = REPO / "runtime" / "build" / "dti"
ECANCELED = 125
TAG = "dti: panic: "


def boot(script: str, modules, kernel, build_dir, dti_tool, *, smp: int = 2,
         timeout: float = 600) -> vm.Result:
    return vm.run(script, modules=modules, extra_files={str(dti_tool): "/bin/dti"},
                  kernel=kernel, build_dir=build_dir, smp=smp, timeout=timeout).check()


def out(res: vm.Result, name: str) -> str:
    return res.outdir.joinpath(name).read_text()


def info(text: str) -> dict[str, str]:
    return dict(x.split(": ", 1) for x in text.splitlines() if ": " in x)


def records(text: str) -> list[dict]:
    return [json_record(x) for x in text.splitlines() if x.startswith("{")]


def result(text: str) -> dict[str, str]:
    return dict(x.split("=", 1) for x in text.split())


def check_lead_up(res: vm.Result, ch: str, marker: str, reason: str,
                  cpu: int | None = None) -> None:
    """What a stop under a flood must leave in channel `ch` (snapshot
    `ch` in /out): the marker, at most one record per CPU after the
    stop, the rest counted as stopped."""
    inf = info(out(res, f"{ch}.info"))
    assert inf["stopped"] == reason, inf
    stop_ns = int(inf["stopped_ns"])
    recs = records(out(res, f"{ch}.read"))
    st = parse_stats(out(res, f"{ch}.stats"))
    assert not accounting_errors(st), st
    assert st["total"]["stopped"] > 0, "the flood logged nothing after the stop"
    mark = [r for r in recs if r.get("text") == marker]
    assert len(mark) == 1, f"{marker!r} was written over: {len(recs)} records held"
    if cpu is not None:
        assert mark[0]["cpu"] == cpu, mark
    assert mark[0]["ts_ns"] <= stop_ns
    cpus = {r["cpu"] for r in recs}
    assert len(cpus) >= 2, "records of one CPU only"
    for c in cpus:
        late = [r for r in recs if r["cpu"] == c and r["ts_ns"] > stop_ns]
        assert len(late) <= 1, (c, late)
    # what the flood stored is all before the stop, whole and in order
    for c in cpus:
        seqs = [r["seq"] for r in recs if r["cpu"] == c]
        assert seqs == sorted(seqs), c
    assert not any(r.get("text", "").startswith("after") for r in recs)


SNAP = r"""
snapshot() {
    cat $D/$1/info > /out/$1.info
    cat $D/$1/stats > /out/$1.stats
    dti read -F json $1 > /out/$1.read
}
"""

WARN_SCRIPT = PRELUDE + SNAP + r"""
ctl register_sub sw 4096 4 7 0
ctl register_sub sn 4096 4 7 0
echo warn > $D/sw/stop_on
cat $D/sw/stop_on > /out/stop_on
echo "bgflood sw" > $T
sleep 1
try warn sw > /out/warn
ctl printk sn 3 1 -1 process free
sleep 2
echo bgstop > $T
snapshot sw
snapshot sn
# the level file starts it again
echo 7 > $D/sw/level
ctl printk sw 3 1 -1 process restarted
cat $D/sw/info > /out/sw.info2
dti read sw > /out/sw.read2
"""


def test_warn_under_a_flood_keeps_the_lead_up(modules, kernel, build_dir, dti_tool):
    res = boot(WARN_SCRIPT, modules, kernel, build_dir, dti_tool, smp=4)
    assert out(res, "stop_on") == "warn\n"
    r = result(out(res, "warn"))
    assert r["ret"] == "0" and int(r["after"]) == -ECANCELED, r
    assert "dti-test: warn" in res.console
    check_lead_up(res, "sw", "before warn\n", "warn", int(r["cpu"]))
    # a channel without stop_on stores on
    assert info(out(res, "sn.info"))["stopped"] == "none"
    assert [x.get("text") for x in records(out(res, "sn.read"))] == ["free 0\n"]
    inf2 = info(out(res, "sw.info2"))
    assert inf2["stopped"] == "none" and "stopped_ns" not in inf2, inf2
    assert out(res, "sw.read2").rstrip("\n").endswith("restarted 0")


INRES_SCRIPT = PRELUDE + SNAP + r"""
ctl register_sub sr 4096 4 7 0
echo oops,warn > $D/sr/stop_on
try warn sr inres > /out/warn
snapshot sr
"""


def test_warn_inside_a_reservation(modules, kernel, build_dir, dti_tool):
    """The WARN() while the channel's write path is open on its CPU: the
    stop takes no lock and writes nothing, so the reservation is
    committed whole after it and nothing else is stored."""
    res = boot(INRES_SCRIPT, modules, kernel, build_dir, dti_tool)
    r = result(out(res, "warn"))
    assert r["res"] == "1" and int(r["after"]) == -ECANCELED, r
    assert "dti-test: warn inside a reservation" in res.console
    recs = records(out(res, "sr.read"))
    assert recs[0]["text"] == "before warn\n", recs
    assert recs[1]["data"] == "a5" * 32 and len(recs) == 2, recs
    st = parse_stats(out(res, "sr.stats"))
    assert st["total"]["written"] == 2 and st["total"]["stopped"] == 1, st
    assert not accounting_errors(st), st
    assert info(out(res, "sr.info"))["stopped"] == "warn"


OOPS_SCRIPT = PRELUDE + SNAP + r"""
echo 0 > /proc/sys/kernel/panic_on_oops
ctl register_sub so 4096 4 7 0
echo oops > $D/so/stop_on
echo "bgflood so" > $T
sleep 1
sh -c "echo oops so > $T" || true
sleep 2
echo bgstop > $T
snapshot so
"""


def test_oops_under_a_flood_keeps_the_lead_up(modules, kernel, build_dir, dti_tool):
    res = boot(OOPS_SCRIPT, modules, kernel, build_dir, dti_tool, smp=4)
    assert re.search(r"(Oops|general protection fault).*\[#\d+\]", res.console)
    check_lead_up(res, "so", "before oops\n", "oops")


SYSRQ_SCRIPT = PRELUDE + SNAP + r"""
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub qa 8192 4 7 0
ctl register_sub qb 8192 4 7 0
c=0
while [ $c -lt $NCPU ]; do
    ctl printk qa 6 30 $c process a$c
    ctl printk qb 6 30 $c process b$c
    c=$((c + 1))
done
echo 5 > $D/qa/dump_on_panic
echo 4 > /sys/module/dti/parameters/sysrq_records
echo "dti-test: sysrq" > /dev/kmsg
echo a > /proc/sysrq-trigger
echo "dti-test: done" > /dev/kmsg
ctl printk qa 6 1 -1 process late
snapshot qa
snapshot qb
"""


def test_sysrq_key_stops_and_prints(modules, kernel, build_dir, dti_tool, tmp_path):
    res = boot(SYSRQ_SCRIPT, modules, kernel, build_dir, dti_tool)
    c = res.console
    part = c[c.index("dti-test: sysrq"):c.index("dti-test: done")]
    # qa, qb and dti_test's handles h_early and h_demand
    assert f"{TAG}sysrq: the newest records of 4 channels" in part, part[-2000:]
    assert f"{TAG}---- h_demand: no buffers ----" in part
    for ch, n in (("qa", 5), ("qb", 4)):
        assert info(out(res, f"{ch}.info"))["stopped"] == "sysrq"
        lines = [x for x in part.splitlines() if f"{TAG}{ch}: [" in x]
        assert len(lines) == 2 * n, (ch, lines)
        recs = records(out(res, f"{ch}.read"))
        want = []
        for cpu in (0, 1):
            want += [r["text"] for r in recs if r["cpu"] == cpu][-n:]
        log = tmp_path / "console.log"
        log.write_text(part)
        r = subprocess.run([str(DTI), "console-log", "--channel", ch, "-F", "json",
                            str(log)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert sorted(json_record(x)["text"] for x in r.stdout.splitlines()) == sorted(want)
    st = parse_stats(out(res, "qa.stats"))
    assert st["total"]["stopped"] == 1 and not accounting_errors(st), st


API_SCRIPT = r"""
insmod $DTI_MODDIR/dti.ko stop_on=oops,panic
insmod $DTI_MODDIR/dti_test.ko
""" + PRELUDE_FUNCS + SNAP + r"""
param() { cat /sys/module/dti/parameters/stop_on; }
echo "param $(param)" > /out/api
ctl register_sub pa 4096 4 7 0
ctl register_sub pf 4096 4 7 8
echo "pa $(cat $D/pa/stop_on) pf $(cat $D/pf/stop_on)" >> /out/api
grep '^stop_on: \|^stopped: ' $D/pa/info | tr '\n' ' ' >> /out/api
echo >> /out/api
for v in 'x' 'oops,' ',oops' 'oops,,warn' 'none,oops' 'oops warn' 'OOPS'; do
    if printf '%s' "$v" > $D/pa/stop_on 2>/dev/null; then echo "accepted [$v]"; else echo "refused [$v]"; fi
done >> /out/api
for v in 'warn,oops' 'none' 'panic' 'oops,warn,panic'; do
    printf '%s\n' "$v" > $D/pa/stop_on; echo "[$v] -> $(cat $D/pa/stop_on)"
done >> /out/api
if echo bogus > /sys/module/dti/parameters/stop_on 2>/dev/null; then echo "param accepted"; else echo "param refused $(param)"; fi >> /out/api
echo none > /sys/module/dti/parameters/stop_on
ctl register_sub pn 4096 4 7 0
echo "pn $(cat $D/pn/stop_on)" >> /out/api
# dti_stop() of one channel
ctl stop pa
ctl printk pa 3 2 -1 process lost
ctl printk pn 3 1 -1 process kept
# an exception call: its record, then the channel stops
ctl exception pn 3 boom
ctl printk pn 3 1 -1 process lost
# dti_stop_all() stops channels whatever their stop_on
ctl stop @all
ctl printk pf 3 1 -1 process lost
# the exception call on a handle, stopping every channel
echo 7 > $D/pa/level
echo 7 > $D/h_demand/level
ctl exception h_demand 3 hboom all
ctl printk pa 3 1 -1 process lost
# the handle's first record has its buffers created by a work item
n=0
until [ -e $D/h_demand/merged ] || [ $n -gt 100 ]; do sleep 0.1; n=$((n+1)); done
for ch in pa pf pn h_demand; do snapshot $ch; done
"""


def test_stop_on_file_parameter_and_calls(modules, kernel, build_dir, dti_tool):
    res = boot(API_SCRIPT, modules, kernel, build_dir, dti_tool)
    api = out(res, "api").splitlines()
    assert api[0] == "param oops,panic"
    # the parameter for every new channel, a registration flag adds to it
    assert api[1] == "pa oops,panic pf oops,warn,panic"
    assert api[2] == "stop_on: oops,panic stopped: none "
    bad = [x for x in api if x.startswith(("accepted", "refused"))]
    assert bad == [f"refused [{v}]" for v in
                   ('x', 'oops,', ',oops', 'oops,,warn', 'none,oops', 'oops warn',
                    'OOPS')], bad
    assert "[warn,oops] -> oops,warn" in api and "[none] -> none" in api
    assert "[panic] -> panic" in api and "[oops,warn,panic] -> oops,warn,panic" in api
    assert "param refused oops,panic" in api
    assert "pn none" in api
    for ch, reason, texts in (("pa", "call", []), ("pn", "call", ["kept 0\n", "boom\n"]),
                              ("pf", "call", []), ("h_demand", "call", ["hboom\n"])):
        inf = info(out(res, f"{ch}.info"))
        assert inf["stopped"] == reason, (ch, inf)
        assert [r.get("text") for r in records(out(res, f"{ch}.read"))] == texts, ch
        st = parse_stats(out(res, f"{ch}.stats"))
        assert not accounting_errors(st), (ch, st)
    assert parse_stats(out(res, "pa.stats"))["total"]["stopped"] == 3
    assert parse_stats(out(res, "pn.stats"))["total"]["stopped"] == 1
    assert parse_stats(out(res, "pf.stats"))["total"]["stopped"] == 1


STAP_STOP = r"""
probe begin
{
	try { dti_stop("nope") } catch (e) { printf("E %s\n", e) }
	dti_stop(@1)
	try { printf("log %d\n", dti_log(@1, 3, "lost")) } catch (e) { printf("E %s\n", e) }
	dti_resume(@1, 6)
	printf("log %d\n", dti_log(@1, 3, "resumed"))
	dti_stop_all()
	try { printf("log %d\n", dti_log(@1, 3, "lost")) } catch (e) { printf("E %s\n", e) }
	println("END")
	exit()
}
"""


def test_tapset_stops(dti_guest, stap):
    """tapset/dti_control.stp's dti_stop() and dti_stop_all()."""
    from harness.stap import staprun_cmd
    mod = stap.compile(STAP_STOP, name="stop_fns", args=["ts"])
    script = PRELUDE + f"""
        ctl register ts 65536 5
        {staprun_cmd(mod)} > /out/stap.txt 2>&1
        cat $D/ts/info > /out/info
        cat $D/ts/stats > /out/stats
        cat $D/ts/merged > /out/merged
    """
    res = dti_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    lines = out(res, "stap.txt").splitlines()
    assert lines[0].startswith('E dti_stop("nope"): no such channel'), lines
    assert lines[1].startswith('E dti_log("ts"): the channel was halted by its trigger '
                               'or stopped'), lines
    assert lines[2:] == ["log 1", lines[3], "END"], lines
    assert lines[3].startswith('E dti_log("ts"): the channel was halted'), lines
    assert info(out(res, "info"))["stopped"] == "call"
    assert out(res, "merged") == "resumed\n"
    st = parse_stats(out(res, "stats"))
    assert st["total"]["stopped"] == 2 and not accounting_errors(st), st
