"""SystemTap tapset and scripts in a real guest kernel.

Scripts are compiled on the host for the guest kernel (harness/stap.py,
through scripts/dti-stap) and run in the guest with staprun while the
dti_test client module drives DTI.  What the probes report is compared with
what the kernel itself shows: the merged view, the raw per-CPU trace files
(parsed by dtirec.py) and the stats file.

dti.ko is loaded before staprun starts, but where a test says otherwise
(test_dti_watch_follows_dti_ko_loaded_after_it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dtirec import accounting_errors, parse_kv, parse_merged_ts, parse_stats, parse_stream
from guestlib import PRELUDE, PRELUDE_FUNCS, STOP, WARM, start_stap
from harness.stap import staprun_cmd

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent / "scripts"
RECORDS_STP = HERE / "stap" / "records.stp"
BIG = ["-DMAXSTRINGLEN=4200"]       # room for 2 KiB of payload as hex


def compile_for_test(stap, script, name, opts=(), args=()):
    return stap.compile(script, name=name, opts=[*opts, "-E", WARM], args=args)


def wait_exit(tenths: int) -> str:
    """Guest shell: wait up to `tenths` tenths of a second for the script
    started by start_stap() to exit by itself, else interrupt it."""
    return f"""
n=0
while kill -0 $SP 2>/dev/null; do
    n=$((n + 1)); [ $n -lt {tenths} ] || {{ echo "stap script did not exit"; kill -INT $SP; }}
    sleep 0.1
done
wait $SP || true
"""


def lines_of(res, name: str, kind: str) -> list[list[str]]:
    """The '|'-separated fields of the `kind` lines, warm-up channel left out."""
    text = (res.outdir / name).read_text()
    return [line.split("|")[1:] for line in text.splitlines()
            if line.startswith(kind + "|") and not line.startswith(kind + "|stapwarm|")]


def unescape(s: str) -> str:
    """Undo stap's text_str() for the characters our records contain."""
    return s.encode().decode("unicode_escape")


def test_record_sees_exactly_what_the_buffers_hold(tapset_guest, stap):
    """dti.record sees every stored record, and only those: same count,
    header fields, text and bytes as the raw trace files, in every context;
    records filtered by level and oversize ones are not reported."""
    mod = compile_for_test(stap, RECORDS_STP, "records", opts=BIG)
    script = PRELUDE + start_stap(mod, "/out/stap.txt", "READY") + """
        ctl register rc 262144 5
        for cpu in 0 1; do
            ctl printk rc 4 5 $cpu process proc$cpu
            ctl printk rc 3 4 $cpu softirq soft$cpu
            ctl printk rc 5 3 $cpu hardirq hard$cpu
            ctl printk rc 6 7 $cpu process filtered$cpu
            ctl event rc 2 4 $cpu process 33
            ctl event rc 5 2 $cpu hardirq 2000
            ctl event rc 7 3 $cpu process 16
        done
        ctl event rc 1 1 0 process 0
        try event rc 1 1 1 process 60000 > /out/oversize
        ctl register_sub tev 8192 4 7 0
        ctl register_sub ttx 65536 4 7 0
        ctl evreg tev ints
        ctl evreg tev mixed
        ctl evlog tev 6 6 0 process ttx
        snap rc s
        rawsnap rc raw
        echo 1 > $D/rc/reset_consumed
        dti read rc > /out/read
    """ + STOP
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()

    stored = {}
    for cpu in (0, 1):
        recs, _ = parse_stream((res.outdir / "raw" / f"trace{cpu}").read_bytes())
        for r in recs:
            stored[(r.cpu, r.seq)] = r
    seen = {}
    for f in lines_of(res, "stap.txt", "REC"):
        if f[0] != "rc":        # the event channels' texts may hold a '|'
            continue
        (ch, cpu, level, seq, ts, length, is_text, flags, reserved, data, msg) = f
        key = (int(cpu), int(seq))
        assert key not in seen, f"record {key} reported twice"
        seen[key] = dict(level=int(level), ts=int(ts), len=int(length),
                         is_text=int(is_text), flags=int(flags), data=bytes.fromhex(data),
                         msg=unescape(msg))
    assert len(stored) == 2 * (5 + 4 + 3 + 4 + 2) + 1
    assert set(seen) == set(stored)
    for key, r in stored.items():
        s = seen[key]
        assert (s["level"], s["ts"], s["len"], s["flags"]) == \
            (r.level, r.ts_ns, len(r.payload), r.flags), key
        assert s["data"] == r.payload, key
        assert s["is_text"] == r.is_text
        assert s["msg"] == (r.text if r.is_text else "")

    # The merged view and `dti read` show the same records, in time order.
    merged = (res.outdir / "s" / "merged").read_text().splitlines()
    assert (res.outdir / "read").read_text().splitlines() == merged
    want = [s["msg"].rstrip("\n") if s["is_text"] else " ".join(f"{b:02x}" for b in s["data"])
            for _, s in sorted(seen.items(), key=lambda kv: (kv[1]["ts"], kv[0]))]
    assert merged == want
    # Narrower aliases: dti.printk for text records, dti.event for binary.
    printk = {(int(c), int(q)) for ch, c, q in lines_of(res, "stap.txt", "PRINTK")
              if ch == "rc"}
    events = lines_of(res, "stap.txt", "EVENT")
    event = {(int(c), int(q)) for ch, c, q, _, _ in events if ch == "rc"}
    assert all((i, t) == ("-1", "") for ch, _, _, i, t in events if ch == "rc")
    # Events of registered types carry their type's id and name.
    typed = sorted((int(q), int(i), t) for ch, _, q, i, t in events if ch == "tev")
    assert [(i, t) for _, i, t in typed] == [(1, "ints"), (2, "mixed")] * 3, typed
    assert printk == {k for k, r in stored.items() if r.is_text}
    assert event == {k for k, r in stored.items() if not r.is_text}
    # Filtered (level 6 and 7 at channel level 5) never reach a probe; the
    # oversize record is reported by dti.lost, not dti.record.
    st = parse_stats((res.outdir / "s" / "stats").read_text())
    assert st["total"]["written"] == len(stored)
    assert st["total"]["filtered"] == 2 * (7 + 3)
    lost = lines_of(res, "stap.txt", "LOST")
    assert [(x[0], x[1], x[3], x[4], x[5]) for x in lost] == \
        [("rc", "1", "60000", "-90", "too big")]


PROBE_STORED = "/sys/module/dti/parameters/probe_stored"
RAW_STORED_STP = """
probe begin { printf("READY\\n") }
probe module("dti").function("dti_probe_stored")
{
	printf("HIT %s", kernel_string_n($payload, $rec->len))
}
"""


def test_probe_point_is_called_only_while_someone_listens(tapset_guest, stap):
    """With no listener, the write path makes no call to dti_probe_stored():
    a raw probe on it (a script that does not use the tapset) sees records
    only while dti.ko's probe_stored parameter is set.  A script that uses
    the tapset holds a listener from before its begin probes to after its
    end probes."""
    raw = stap.compile(RAW_STORED_STP, name="raw_stored")
    mod = compile_for_test(stap, RECORDS_STP, "records", opts=BIG)
    script = PRELUDE + f"""
        cat {PROBE_STORED} > /out/before
        ctl register ls 65536 7
    """ + start_stap(raw, "/out/raw.txt", "READY", warm=False) + f"""
        echo 1 > {PROBE_STORED}
        n=0
        until grep -q '^HIT on' /out/raw.txt; do
            n=$((n + 1)); [ $n -lt 600 ] || {{ echo "raw probe never fired" >&2; exit 9; }}
            ctl printk ls 3 1 0 process on
            sleep 0.1
        done
        echo 0 > {PROBE_STORED}
        for cpu in 0 1; do
            ctl printk ls 3 5 $cpu process off$cpu
            ctl printk ls 3 5 $cpu hardirq off$cpu
        done
        sleep 0.5
    """ + STOP + start_stap(mod, "/out/stap.txt", "READY") + f"""
        cat {PROBE_STORED} > /out/during
    """ + STOP + f"""
        n=0; until grep -q N {PROBE_STORED} || [ $n -ge 50 ]; do sleep 0.1; n=$((n + 1)); done
        cat {PROBE_STORED} > /out/after
        snap ls s
    """
    res = tapset_guest.run(script, smp=2,
                           extra_files=stap.guest_files(raw, mod)).check()
    hits = [x for x in (res.outdir / "raw.txt").read_text().splitlines() if x.startswith("HIT ")]
    assert hits and all(x == "HIT on 0" for x in hits), hits
    merged = (res.outdir / "s" / "merged").read_text().splitlines()
    assert merged.count("off0 0") == 2 and merged.count("off1 4") == 2, merged
    assert [(res.outdir / f).read_text() for f in ("before", "during", "after")] == \
        ["N\n", "Y\n", "N\n"]


def test_level_change_sources(tapset_guest, stap):
    """dti.register, dti.level_change and dti.unregister, and who changed
    the level: registration, a kernel call or the level file.  A failed
    registration (duplicate name) is not reported."""
    mod = compile_for_test(stap, RECORDS_STP, "records", opts=BIG)
    script = PRELUDE + start_stap(mod, "/out/stap.txt", "READY") + """
        ctl register lc 65536 3
        echo 7 > $D/lc/level
        ctl set_level lc 4
        echo off > $D/lc/level
        echo destroy > $D/lc/level
        ctl set_level lc 2
        try register lc 65536 3 > /out/dup
        ctl register_sub nolap 4096 4 5 1
        ctl unregister lc
        ctl unregister nolap
    """ + STOP
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    levels = [tuple(x) for x in lines_of(res, "stap.txt", "LEVEL") if x[0] == "lc"]
    assert levels == [
        ("lc", "-2", "3", "destroy", "err", "register"),
        ("lc", "3", "7", "err", "debug", "file"),
        ("lc", "7", "4", "debug", "warning", "kernel"),
        ("lc", "4", "-1", "warning", "off", "file"),
        ("lc", "-1", "-2", "off", "destroy", "file"),
        ("lc", "-2", "2", "destroy", "crit", "kernel"),
        ("lc", "2", "-2", "crit", "destroy", "kernel"),     # dti_unregister()
    ], levels
    regs = lines_of(res, "stap.txt", "REGISTER")
    assert regs == [["lc", "8192", "8", "65536", "3", "0", "0", "0"],
                    ["nolap", "4096", "4", "16384", "5", "1", "1", "0"]]
    assert (res.outdir / "dup").read_text().startswith("ret=-17")
    assert lines_of(res, "stap.txt", "UNREGISTER") == [["lc", "8192", "8"],
                                                       ["nolap", "4096", "4"]]


def test_lost_records(tapset_guest, stap):
    """dti.lost: oversize records ("too big") and records a full
    no-overwrite channel drops ("full"), as many as stats counts."""
    mod = compile_for_test(stap, RECORDS_STP, "records", opts=BIG)
    script = PRELUDE + start_stap(mod, "/out/stap.txt", "READY") + """
        ctl register_sub full 512 2 7 1
        try printk full 5 100 0 process filler > /out/fill
        try event full 3 2 0 process 600 > /out/big
        snap full s
    """ + STOP
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    st = parse_stats((res.outdir / "s" / "stats").read_text())
    lost = lines_of(res, "stap.txt", "LOST")
    full = [x for x in lost if x[5] == "full"]
    big = [x for x in lost if x[5] == "too big"]
    assert len(full) == st["total"]["dropped"] > 0
    assert all(x[4] == "-28" and x[2] == "5" for x in full)
    assert len(big) == 2 and all(x[3] == "600" and x[4] == "-90" for x in big)
    recs = lines_of(res, "stap.txt", "REC")
    assert len(recs) == st["total"]["written"] == 100 - len(full)


def test_dti_watch_totals_match_stats(tapset_guest, stap):
    mod = compile_for_test(stap, SCRIPTS / "dti_watch.stp", "dti_watch")
    script = PRELUDE + start_stap(mod, "/out/watch.txt", ready="dti_watch: watching",
                             params="quiet=1") + """
        ctl register w1 65536 6
        ctl register w2 65536 7
        for cpu in 0 1; do
            ctl printk w1 6 12 $cpu process same
            ctl printk w1 7 5 $cpu process filtered
            ctl event w2 3 4 $cpu softirq 24
        done
        ctl printk w2 0 3 1 hardirq alarm
        try event w1 2 1 0 process 60000 > /dev/null
        snap w1 s1
        snap w2 s2
    """ + STOP
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    text = (res.outdir / "watch.txt").read_text()
    totals = {}
    for m in re.finditer(r"^total channel=(\S+) cpu=(\d+) level=(\d+) records=(\d+) "
                         r"bytes=(\d+)$", text, re.M):
        totals[(m[1], int(m[2]), int(m[3]))] = int(m[4])
    for ch in ("w1", "w2"):
        st = parse_stats((res.outdir / ("s" + ch[1]) / "stats").read_text())
        for cpu in (0, 1):
            got = sum(n for (c, k, _), n in totals.items() if c == ch and k == cpu)
            assert got == st[str(cpu)]["written"], (ch, cpu, totals)
    assert totals[("w1", 0, 6)] == 12 and totals[("w2", 1, 0)] == 3
    assert re.search(r"^lost channel=w1 reason=too big records=1$", text, re.M)
    assert "event: register w1 (65536 bytes per CPU, level info)\n" in text
    assert "event: w1 level destroy -> info (register)\n" in text
    assert "record sizes" in text and "most frequent messages" in text


# A line a timer prints once the script's probes are armed.
ARMED = 'global armed; probe timer.ms(100) { if (!armed) { armed = 1; println("ARMED") } }'

LOAD_AND_LOG = """
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_test.ko
ctl register {ch} 262144 7
for ctx in process softirq hardirq; do
    for cpu in 0 1; do ctl printk {ch} 6 200 $cpu $ctx {ch}; done
done
mkdir -p /out/{ch}
for c in $D/*/stats; do n=${{c%/stats}}; cat $c > /out/{ch}/${{n##*/}}; done
"""


def test_dti_watch_follows_dti_ko_loaded_after_it(tapset_guest, stap):
    """dti_watch started before dti.ko counts every record of the dti.ko
    loaded then, from dti_test's records logged as it loads on, and after
    dti.ko is unloaded and loaded again, every record of the second load:
    per channel, its totals equal the written columns of both loads' stats.
    It takes dti.ko handing the tapset a listener as it loads
    (dti_probe_loaded()), and SystemTap arming module("dti") probes for a
    dti.ko loaded after the script started: SystemTap 4.8 does not on 5.12
    and later, nor 5.1 on 6.4 and later, without dti-stap's fix
    (scripts/dti-stap, "modsym").  The second load also needs that fix to
    resolve the names again when dti_watch's one-second settle timer ends
    as dti.ko unloads (half the runs on a loaded host; see the test after
    this one)."""
    # A user waits a moment after staprun starts: SystemTap arms the probes
    # after the begin probe printed (a timer fires once they are in), and
    # SystemTap 5.1 on 6.12 took long enough for dti.ko's load to come
    # before they were: its first load then went unseen.
    mod = compile_for_test(stap, SCRIPTS / "dti_watch.stp", "dti_watch_late",
                           opts=["-E", ARMED])
    script = (start_stap(mod, "/out/watch.txt", ready="^ARMED", params="quiet=1",
                         warm=False)
              + PRELUDE_FUNCS
              + LOAD_AND_LOG.format(ch="lt1") + """
        ctl unregister lt1
        rmmod dti_test
        rmmod dti
    """ + LOAD_AND_LOG.format(ch="lt2") + STOP)
    res = tapset_guest.run(script, smp=2, timeout=600,
                           extra_files=stap.guest_files(mod)).check()
    text = (res.outdir / "watch.txt").read_text()
    counted: dict[str, int] = {}
    for m in re.finditer(r"^total channel=(\S+) cpu=\d+ level=\d+ records=(\d+) ",
                         text, re.M):
        counted[m[1]] = counted.get(m[1], 0) + int(m[2])
    written: dict[str, int] = {}
    for load in ("lt1", "lt2"):
        for f in (res.outdir / load).iterdir():
            st = parse_stats(f.read_text())
            assert not accounting_errors(st), (load, f.name, st)
            written[f.name] = written.get(f.name, 0) + st["total"]["written"]
    assert written["lt1"] == written["lt2"] == 6 * 200
    assert len(written) > 2, written        # dti_test's own, logged as it loads
    assert counted.get("lt1") == written["lt1"], (counted, written)
    assert "event: register lt1 (262144 bytes per CPU, level debug)\n" in text, text
    assert "event: register lt2 (262144 bytes per CPU, level debug)\n" in text, text
    assert counted == {ch: n for ch, n in written.items() if n}, (counted, written)


# A probe condition that changes every 50 ms: SystemTap re-examines the
# script's kprobes about every 100 ms (its "on-the-fly" refresh).
RELOAD_STP = ARMED + r"""
global flip, records
probe timer.ms(50) { flip = !flip }
probe timer.ms(1000) if (flip) { }
probe dti.register { printf("register %s\n", channel) }
probe dti.record { records[channel] <<< 1 }
probe end { foreach (ch in records) printf("records %s %d\n", ch, @count(records[ch])) }
"""


def test_probes_follow_a_dti_ko_reloaded_while_probe_conditions_change(tapset_guest, stap):
    """dti.ko unloaded while SystemTap re-examines a script's kprobes (a
    probe condition changed) and loaded again: its probes fire on both
    loads.  dti_linger holds dti.ko's unload notification 1.5 s between
    kprobes' (which marks the kprobes gone) and SystemTap's (which
    unregisters them), long enough for a refresh to come between.  The
    refresh unregisters the gone kprobes; SystemTap's own notifier then
    takes the unload for a load and tries to register them, which fails
    with the module going, and leaves each kprobe with its name and its
    old address, which register_kprobe() refuses on the next load unless
    dti-stap's modsym fix resolves the name again."""
    mod = stap.compile(RELOAD_STP, name="reload_refresh")
    script = ("insmod $DTI_MODDIR/dti_linger.ko target=dti delay_ms=1500\n"
              + start_stap(mod, "/out/reload.txt", ready="^ARMED", warm=False)
              + PRELUDE_FUNCS
              + LOAD_AND_LOG.format(ch="lt1") + """
        ctl unregister lt1
        rmmod dti_test
        rmmod dti
        cat /sys/module/dti_linger/parameters/lingered > /out/lingered
    """ + LOAD_AND_LOG.format(ch="lt2") + STOP)
    res = tapset_guest.run(script, smp=2, timeout=600,
                           extra_files=stap.guest_files(mod)).check()
    lingered = (res.outdir / "lingered").read_text().strip()
    assert lingered == "1", "dti_linger did not hold dti.ko's unload up"
    text = (res.outdir / "reload.txt").read_text()
    assert "register lt1\n" in text, text
    assert "register lt2\n" in text, ("no dti.* probe fired on the reloaded dti.ko", text)
    counted = {m[1]: int(m[2]) for m in re.finditer(r"^records (\S+) (\d+)$", text, re.M)}
    assert counted.get("lt1") == counted.get("lt2") == 6 * 200, counted


@pytest.mark.parametrize("after", [0, 3])
def test_dti_freeze(tapset_guest, stap, after):
    """dti_freeze leaves the channel off with the match plus `after` records
    as the last ones; a matching text outside the level range is ignored."""
    mod = compile_for_test(stap, SCRIPTS / "dti_freeze.stp", "dti_freeze",
                           args=["fz", "FAULT [0-9]", str(after), "3-5"])
    script = PRELUDE + """
        ctl register fz 65536 7
        ctl printk fz 5 10 0 process pre
    """ + start_stap(mod, "/out/freeze.txt", ready="dti_freeze: channel") + """
        ctl printk fz 6 1 0 process FAULT
        ctl printk fz 5 2 0 process mid
        ctl printk fz 4 1 0 process FAULT
        ctl printk fz 5 10 0 process post
    """ + wait_exit(100) + """
        snap fz s
        dti read fz > /out/read
    """
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    out = (res.outdir / "freeze.txt").read_text()
    merged = (res.outdir / "s" / "merged").read_text().splitlines()
    assert (res.outdir / "read").read_text().splitlines() == merged
    assert (res.outdir / "s" / "level").read_text() == "-1\n"
    want_tail = ["FAULT 0"] + [f"post {i}" for i in range(after)]
    assert merged[-len(want_tail):] == want_tail, merged
    before = [f"pre {i}" for i in range(10)] + ["FAULT 0", "mid 0", "mid 1", "FAULT 0"]
    assert merged == before + [f"post {i}" for i in range(after)]
    st = parse_stats((res.outdir / "s" / "stats").read_text())
    assert st["total"]["filtered"] == 10 - after
    assert "dti_freeze: MATCH channel=fz cpu=0 level=warning" in out, out
    assert re.search(r"context: pid=\d+ tid=\d+ command=\S+ cpu=0", out), out
    assert "backtrace:" in out
    assert re.search(rf"FROZEN channel=fz after={after} ", out), out


def test_dti_freeze_by_time(tapset_guest, stap):
    """dti_freeze fz FAULT 2000ms: the channel keeps what was logged within
    2 s of the match and refuses what came after (counted as halted),
    every record stored has a timestamp at or before the deadline the
    info file shows, which is 2 s after the match's at least, the channel
    is off, and the summary says after=2000ms."""
    mod = compile_for_test(stap, SCRIPTS / "dti_freeze.stp", "dti_freeze_time",
                           args=["fz", "FAULT", "2000ms"])
    script = PRELUDE + """
        ctl register fz 65536 7
        ctl printk fz 5 10 0 process pre
    """ + start_stap(mod, "/out/freeze.txt", ready="dti_freeze: channel") + """
        ctl printk fz 6 1 0 process FAULT
        ctl printk fz 5 20 0 process in
        sleep 4
        ctl printk fz 5 5 0 process late
    """ + wait_exit(100) + """
        snap fz s
        dti read -F ts fz > /out/read
    """
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    out = (res.outdir / "freeze.txt").read_text()
    assert "keeping 2000 ms more" in out, out
    assert re.search(r"FROZEN channel=fz after=2000ms records=20$", out, re.M), out
    merged = (res.outdir / "s" / "merged").read_text().splitlines()
    assert merged == [f"pre {i}" for i in range(10)] + ["FAULT 0"] + \
        [f"in {i}" for i in range(20)], merged
    assert (res.outdir / "s" / "level").read_text() == "-1\n"
    info = parse_kv((res.outdir / "s" / "info").read_text())
    deadline = int(info["halt_deadline_ns"])
    recs = parse_merged_ts((res.outdir / "s" / "merged-ts").read_text())
    match = next(r for r in recs if r.text == "FAULT 0")
    assert deadline - match.ts_ns >= 2_000_000_000, (deadline, match)
    assert max(r.ts_ns for r in recs) <= deadline
    st = parse_stats((res.outdir / "s" / "stats").read_text())
    assert st["total"]["halted"] == 1 and st["total"]["filtered"] == 4, st
    assert not accounting_errors(st)


def test_dti_freeze_usage_and_interrupt(tapset_guest, stap):
    """Run without its arguments, or with an AFTER that is not a number,
    dti_freeze stops with its usage.  Interrupted after a match and before
    the channel froze, it ends the trigger and puts the channel's level
    back: the channel logs on, nothing halted.  LEVELS by name."""
    usage = compile_for_test(stap, SCRIPTS / "dti_freeze.stp", "dti_freeze_noargs", args=[])
    bad = compile_for_test(stap, SCRIPTS / "dti_freeze.stp", "dti_freeze_bad",
                           args=["fz", "FAULT", "ten"])
    mod = compile_for_test(stap, SCRIPTS / "dti_freeze.stp", "dti_freeze_int",
                           args=["fz", "FAULT", "1000", "warn-notice"])
    files = {**stap.guest_files(usage), **stap.guest_files(bad), **stap.guest_files(mod)}
    script = PRELUDE + f"""
        {staprun_cmd(usage)} > /out/usage.out 2> /out/usage.err && echo 0 > /out/usage.rc || echo $? > /out/usage.rc
        {staprun_cmd(bad)} > /out/bad.out 2> /out/bad.err && echo 0 > /out/bad.rc || echo $? > /out/bad.rc
        ctl register fz 65536 6
        ctl printk fz 5 3 0 process pre
    """ + start_stap(mod, "/out/freeze.txt", ready="dti_freeze: channel") + """
        ctl printk fz 6 1 0 process FAULT
        ctl printk fz 4 1 0 process FAULT
        ctl printk fz 5 5 0 process post
        kill -INT $SP
        wait $SP || true
        cat $D/fz/level > /out/level
        ctl printk fz 5 20 0 process more
        snap fz s
    """
    res = tapset_guest.run(script, smp=2, extra_files=files).check()
    for name, why in (("usage", "CHANNEL and REGEX are needed"),
                      ("bad", 'AFTER is a number of records or of milliseconds ("250ms"), not "ten"')):
        err = (res.outdir / f"{name}.err").read_text()
        assert (res.outdir / f"{name}.rc").read_text().strip() != "0", err
        assert f"dti_freeze: {why}" in err and \
            "usage: dti-stap dti_freeze.stp CHANNEL REGEX [AFTER [LEVELS]]" in err, err
    out = (res.outdir / "freeze.txt").read_text()
    assert "levels 4-5, keeping 1000 more" in out, out
    # the level-6 FAULT was outside warn-notice; the level-4 one matched
    assert "dti_freeze: MATCH channel=fz cpu=0 level=warning" in out, out
    assert "dti_freeze: stopped before the channel froze: 995 of 1000 records still to come" \
        in out, out
    assert "dti_freeze: trigger ended, channel fz back at level info" in out, out
    assert (res.outdir / "level").read_text() == "6\n"
    st = parse_stats((res.outdir / "s" / "stats").read_text())
    assert st["total"]["halted"] == 0 and not accounting_errors(st), st
    merged = (res.outdir / "s" / "merged").read_text().splitlines()
    assert merged[-1] == "more 19" and len(merged) == 3 + 2 + 5 + 20, merged[:8]


def test_dti_inject_and_dti_watch_usage_and_level_names(tapset_guest, stap):
    """dti_inject without its arguments, or with a LEVEL that is neither a
    number nor a level name, and dti_watch given an argument, stop with
    their usage; dti_inject takes a level by name ("warning") and logs at
    it."""
    cases = {
        "inject_noargs": ("dti_inject.stp", [], "PROBE and CHANNEL are needed",
                          "usage: dti-stap dti_inject.stp PROBE CHANNEL [LEVEL [CREATE_KB]]"),
        "inject_level": ("dti_inject.stp", ["timer.ms(50)", "ij", "loud"],
                         'LEVEL: level "loud" is not 0..7',
                         "usage: dti-stap dti_inject.stp PROBE CHANNEL [LEVEL [CREATE_KB]]"),
        "watch_arg": ("dti_watch.stp", ["ij"], "takes no arguments (1 given)",
                      "usage: dti-stap dti_watch.stp [-G only=CHANNEL]"),
    }
    mods = {name: compile_for_test(stap, SCRIPTS / f, f"dti_{name}", args=a)
            for name, (f, a, _, _) in cases.items()}
    inject = compile_for_test(stap, SCRIPTS / "dti_inject.stp", "dti_inject_named",
                              args=["timer.ms(20)", "ij", "warning", "64"])
    files = {k: v for m in (*mods.values(), inject) for k, v in stap.guest_files(m).items()}
    script = PRELUDE + "".join(
        f"{staprun_cmd(m)} > /out/{n}.out 2> /out/{n}.err && echo 0 > /out/{n}.rc"
        f" || echo $? > /out/{n}.rc\n" for n, m in mods.items()) + start_stap(
            inject, "/out/inject.txt", ready="dti_inject: ", warm=False) + """
        sleep 1
    """ + STOP + """
        snap ij s
    """
    res = tapset_guest.run(script, smp=2, extra_files=files).check()
    for name, (_, _, why, usage) in cases.items():
        err = (res.outdir / f"{name}.err").read_text()
        assert (res.outdir / f"{name}.rc").read_text().strip() != "0", err
        assert why in err and usage in err, (name, err)
    text = (res.outdir / "inject.txt").read_text()
    assert "dti_inject: timer.ms(20) -> ij at level warning\n" in text, text
    m = re.search(r"^dti_inject: (\d+) logged, 0 filtered by level, 0 failed$", text, re.M)
    assert m and int(m[1]) > 0, text
    assert (res.outdir / "s" / "level").read_text() == "-1\n"     # switched off at the end
    merged = (res.outdir / "s" / "merged").read_text().splitlines()
    assert len(merged) == int(m[1]) and merged[0].startswith("timer.ms(20) at 0x"), merged[:3]


FILTERED_STP = """
probe begin { dti_filtered_probes(1); printf("READY\\n") }
probe dti.filtered
{
	printf("FILTERED|%s|%d|%d|%d|%s\\n", channel, level, channel_level, cpu(), level_str)
}
"""


def test_filtered_records(tapset_guest, stap):
    """dti.filtered, once dti_filtered_probes(1) set probe_filtered: every
    record the level refused, with the channel's level that refused it."""
    mod = compile_for_test(stap, FILTERED_STP, "filtered")
    script = PRELUDE + start_stap(mod, "/out/stap.txt", "READY") + """
        P=/sys/module/dti/parameters/probe_filtered
        n=0
        until [ "$(cat $P)" = Y ]; do n=$((n + 1)); [ $n -lt 100 ] || exit 8; sleep 0.1; done
        ctl register ft 65536 3
        ctl printk ft 5 4 0 process low
        ctl printk ft 7 2 1 hardirq lower
        ctl printk ft 2 3 0 process kept
        ctl event ft 6 1 1 softirq 8
        snap ft s
    """ + STOP
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    got = [tuple(x) for x in lines_of(res, "stap.txt", "FILTERED")]
    assert got == [("ft", "5", "3", "0", "notice")] * 4 + \
        [("ft", "7", "3", "1", "debug")] * 2 + [("ft", "6", "3", "1", "info")]
    st = parse_stats((res.outdir / "s" / "stats").read_text())
    assert st["total"]["filtered"] == len(got)
    assert st["total"]["written"] == 3
