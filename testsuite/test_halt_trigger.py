"""The halt trigger (dti_ctl_halt_after(), dti_halt_after() in
dti_control.stp) across re-arming, in a real guest kernel (issue 40,
items 1 and 2).

* the pattern of docs/driver-api.md (dti_ctl_halt_after): a dti.record handler arms the trigger again
  while the record that called it is still being stored.  That record
  counts toward neither arming: the new one lets exactly its own records
  through and reports their sequence numbers.
* A flood on every CPU, in every context, with the trigger armed again
  from the dti.record handlers of records stored after each firing's
  report: each of 60 firings stored exactly N records, the per-CPU ranges
  it reports hold exactly those, and never the record that armed it.
* Arming leaves the event types' framing alone: an event logged after
  arming does not start a new sub-buffer (which, in overwrite mode,
  throws the oldest records away).
* A trigger armed and fired inside a level change, before the change
  stores its level, is ended by it: the channel is at the new level and
  stores, not "halted" with an armed, exhausted trigger (issue 52 item 7).
* Firing on a destroyed channel leaves it destroyed, by the level file
  and by name.
"""

from __future__ import annotations

import re

import pytest

from dtirec import LOSS_COUNTERS, accounting_errors, parse_kv, parse_merged_ts, parse_stats
from guestlib import PRELUDE, WARM, start_stap
from test_tapset_guest import wait_exit


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


REARM_STP = r"""
global n
probe begin { dti_halt_after("ht", 5); printf("READY\n") }
probe dti.record {
    if (channel != "ht") next
    n++
    printf("REC %d %d %s\n", buf_cpu, seq, msg)
    if (n == 3) {
        dti_resume("ht", 7)
        dti_halt_after("ht", 1)
        printf("REARMED\n")
    }
}
probe end {
    printf("TRIGGER records=%d first=%d last=%d left=%d\n",
           dti_trigger_records("ht", 0), dti_trigger_first_seq("ht", 0),
           dti_trigger_last_seq("ht", 0), dti_trigger_left("ht"))
}
"""


@pytest.mark.tapset
def test_rearm_from_the_record_handler(tapset_guest, stap):
    """Armed for 5; the third record's handler sets level 7 and arms for
    1: the fourth record is the one stored, then the channel is off."""
    mod = stap.compile(REARM_STP, name="halt_rearm", opts=["-E", WARM])
    script = PRELUDE + "ctl register ht 262144 7\n" + start_stap(mod, "/out/stap.txt") + """
        ctl printk ht 3 10 0 process rec
        kill -INT $SP
        wait $SP || true
        cat $D/ht/merged > /out/merged
        cat $D/ht/level > /out/level
        cat $D/ht/stats > /out/stats
    """
    res = tapset_guest.run(script, smp=2, timeout=300, extra_files=stap.guest_files(mod)).check()
    text = out(res, "stap.txt")
    assert "REARMED" in text, text
    assert out(res, "merged").split("\n")[:-1] == [f"rec {i}" for i in range(4)], out(res, "merged")
    assert out(res, "level") == "-1\n"
    seqs = {m[1]: int(m[0]) for m in re.findall(r"^REC 0 (\d+) (rec \d+)$", text, re.M)}
    assert sorted(seqs) == [f"rec {i}" for i in range(4)], text
    m = re.search(r"^TRIGGER records=(\d+) first=(\d+) last=(\d+) left=(-?\d+)$", text, re.M)
    assert m, text
    assert (int(m[1]), int(m[2]), int(m[3]), int(m[4])) == \
        (1, seqs["rec 3"], seqs["rec 3"], 0), text
    st = parse_stats(out(res, "stats"))
    assert st["total"]["written"] == 4 and st["total"]["halted"] == 0, st
    assert not accounting_errors(st)


ARMINGS = 60
N = 10
# After the first arming (in the begin probe), the trigger is armed from
# the dti.record handler of a record stored while no arming is under
# way, the pattern of docs/driver-api.md: one record in fifty (those whose number
# ends in 03 or 53, from any CPU and context) tries, and the first to
# try after a firing arms it, while its own record and those other CPUs
# began to store are in flight.  A firing's dti.level_change handler
# reports the arming's records and only then ends it (the level change):
# until then every arming attempt finds it armed, so no other arming
# can come between the firing and its report (dti_trigger_records()
# and friends report the last arming, and -ENODATA once a level change
# ended it).  The record handler touches no global, so the flood takes
# no lock of the script's.
LOOP_STP = rf"""
global fired
probe begin {{ dti_halt_after("ht", {N}); printf("READY\n") }}
probe dti.record {{
    if (channel != "ht" || !(msg =~ "^flood [PSH][0-9]+ [0-9]*[05]3\n?$")) next
    try {{
        dti_halt_after("ht", {N})
        printf("ARMED by cpu=%d seq=%d\n", buf_cpu, seq)
    }} catch (e) {{
        if (!isinstr(e, "armed already")) error(e)
    }}
}}
probe dti.level_change {{
    if (channel != "ht" || source != "trigger") next
    fired++
    total = 0
    for (c = 0; c < 4; c++) {{
        r = dti_trigger_records("ht", c)
        total += r
        printf("FIRED %d cpu=%d records=%d first=%d last=%d\n", fired, c, r,
               dti_trigger_first_seq("ht", c), dti_trigger_last_seq("ht", c))
    }}
    printf("TOTAL %d %d\n", fired, total)
    if (fired == {ARMINGS}) {{ printf("DONE\n"); exit(); next }}
    dti_resume("ht", 7)
}}
"""


@pytest.mark.tapset
def test_rearming_in_a_flood_keeps_every_count(tapset_guest, stap, dti_tool):
    """Every CPU floods from a kthread, a timer and an hrtimer while
    record handlers on every CPU arm the trigger again after each firing:
    each of 60 firings stored exactly N records, on the CPUs and in the
    sequence ranges it reports, and the record whose handler armed the
    trigger is never one of them."""
    mod = stap.compile(LOOP_STP, name="halt_loop", opts=["-E", WARM])
    script = PRELUDE + "ctl register ht 1048576 7\n" + start_stap(mod, "/out/stap.txt", err_file="/out/stap.err") + """
        echo "floodctx ht 8000" > $T &
        FP=$!
    """ + wait_exit(900) + """
        wait $FP
        dti read -F ts ht > /out/read
        cat $D/ht/stats > /out/stats
    """
    res = tapset_guest.run(script, smp=4, timeout=900, extra_files=stap.guest_files(mod)).check()
    text = out(res, "stap.txt")
    assert "DONE" in text, (text[-3000:], out(res, "stap.err"))
    totals = [int(t) for _, t in re.findall(r"^TOTAL (\d+) (\d+)$", text, re.M)]
    assert totals == [N] * ARMINGS, totals
    armers = {(int(c), int(q)) for c, q in re.findall(r"^ARMED by cpu=(\d+) seq=(\d+)$",
                                                      text, re.M)}
    # each firing but the last is followed by one arming from a record handler
    assert len(armers) == ARMINGS - 1, ("armings from a record handler", armers)
    fired = re.findall(r"^FIRED (\d+) cpu=(\d+) records=(\d+) first=(\d+) last=(\d+)$",
                       text, re.M)
    lines = parse_merged_ts(out(res, "read"))
    by_cpu: dict[int, set[int]] = {}
    for x in lines:
        by_cpu.setdefault(x.cpu, set()).add(x.seq)
    taken: dict[int, list[tuple[int, int]]] = {}
    for k, cpu, n, first, last in ((int(a), int(b), int(c), int(d), int(e))
                                   for a, b, c, d, e in fired):
        if not n:
            continue
        # the records the arming reports are in the buffer, and only they
        # fill its range (a gap would be a lost record, which stats count)
        inside = [s for s in by_cpu.get(cpu, ()) if first <= s <= last]
        assert len(inside) == n == last - first + 1, (k, cpu, n, first, last)
        for a, b in taken.get(cpu, []):
            assert last < a or first > b, ("ranges overlap", k, cpu, (first, last), (a, b))
        taken.setdefault(cpu, []).append((first, last))
        # a record that armed the trigger was stored before that arming
        bad = [s for c, s in armers if c == cpu and first <= s <= last]
        assert not bad, ("an arming counted the record that armed it", k, cpu, bad)
    assert not accounting_errors(parse_stats(out(res, "stats")))


# ev's 4 sub-buffers of 4096 bytes hold about 20 of dti_test's events
# (their strings are long); 500 of them leave its ring wrapped, the
# newest sub-buffer part-used.  One more
# event after arming goes into that sub-buffer: the records before stay.
EVENTS_SCRIPT = PRELUDE + """
ctl register_sub ev 4096 4 7 0
ctl register_sub ttx 65536 4 7 0
ctl evreg ev ints
ctl evreg ev mixed
ctl evlog ev 6 500 0 process ttx
cat $D/ev/merged-ts > /out/before
ctl ctl_halt ev 100000
ctl evlog ev 6 1 0 process ttx
cat $D/ev/merged-ts > /out/after
cat $D/ev/stats > /out/stats
"""


def test_arming_keeps_the_event_framing(dti_guest):
    """Arming the trigger does not make the next event start a new
    sub-buffer: every record shown before is still there after, and the
    one new event follows them."""
    res = dti_guest.run(EVENTS_SCRIPT, smp=2, timeout=300).check()
    before = parse_merged_ts(out(res, "before"))
    after = parse_merged_ts(out(res, "after"))
    st = parse_stats(out(res, "stats"))
    # the ring wrapped: a new sub-buffer now would throw the oldest away
    assert len(before) > 10 and st["total"]["overwritten"] > 0, (len(before), st)
    assert [(x.cpu, x.seq) for x in after] == \
        [(x.cpu, x.seq) for x in before] + [(0, before[-1].seq + 1)], (len(before), len(after))
    assert not accounting_errors(st)


ENODATA = 61


def test_arming_inside_a_level_change_is_ended_by_it(dti_guest):
    """dti_set_level(hl, 5) from level 7, with the trigger armed for 0
    records, and so fired, from a kprobe inside the level change, before
    it stores 5 (dti_test's haltin): the change ends that arming.  The
    channel is at 5 with no trigger armed, and the record logged next is
    stored, as are those after it; none is halted."""
    res = dti_guest.run(PRELUDE + """
        ctl register hl 262144 7
        ctl haltin hl 5
        cat $T > /out/haltin
        ctl printk hl 3 4 0 process after
        snap hl s
    """, smp=2, timeout=300).check()
    kv = parse_kv(out(res, "haltin"))
    assert kv["hits"] == "1" and kv["armed"] == "0", kv
    assert kv["level"] == "5", kv
    assert kv["left"] == str(-ENODATA), ("an arming the level change ended is armed", kv)
    assert kv["logged"] == "0", ("the record after the level change was refused", kv)
    assert out(res, "s", "level") == "5\n"
    assert out(res, "s", "merged").splitlines() == \
        ["haltin", *(f"after {i}" for i in range(4))], out(res, "s", "merged")
    st = parse_stats(out(res, "s", "stats"))
    assert st["total"]["halted"] == 0 and st["total"]["written"] == 5, st
    assert not accounting_errors(st)


def test_firing_on_a_destroyed_channel_leaves_it_destroyed(dti_guest):
    """A trigger armed for 0 records fires at once; on a channel destroyed
    through its level file (hd) or by name (hn, whose buffers a work item
    frees) it changes nothing: the level stays -2 and the buffers stay
    gone.  The next level change ends the trigger, and the channel stores
    again."""
    res = dti_guest.run(PRELUDE + """
        ctl register hd 262144 7
        ctl register hn 262144 7
        ctl printk hn 3 2 0 process old
        echo destroy > $D/hd/level
        ctl ctl_halt hd 0
        cat $D/hd/level > /out/hd_level
        ctl ctl_get hd
        cat $T > /out/hd_get
        ls $D/hd > /out/hd_ls
        ctl ctl_set hn -2 -1 process
        ctl ctl_halt hn 0
        for i in $(seq 100); do [ -e $D/hn/trace0 ] || break; sleep 0.1; done
        cat $D/hn/level > /out/hn_level
        ls $D/hn > /out/hn_ls
        echo 7 > $D/hd/level
        ctl printk hd 3 3 0 process again
        snap hd s
    """, smp=2, timeout=300).check()
    assert out(res, "hd_level") == "-2\n", "halting a destroyed channel switched it off"
    assert parse_kv(out(res, "hd_get"))["level"] == "-2"
    assert "trace0" not in out(res, "hd_ls").split()
    assert out(res, "hn_level") == "-2\n", "halting a destroyed channel switched it off"
    assert "trace0" not in out(res, "hn_ls").split(), "a destroy by name kept its buffers"
    assert out(res, "s", "level") == "7\n"
    assert out(res, "s", "merged").splitlines() == [f"again {i}" for i in range(3)]
    st = parse_stats(out(res, "s", "stats"))
    assert st["total"]["halted"] == 0, st


# A freeze by time (dti_ctl_halt_after_ns()): dti_test's bgflood writers
# (a kthread, a timer and an hrtimer on every CPU) log into an 8 MiB
# channel, which holds the whole window; FREEZE_NS after the arming the
# channel stores nothing more.
FREEZE_NS = 200_000_000


def test_freeze_by_time_keeps_exactly_the_window(dti_guest):
    """Every CPU floods from three contexts; 0.2 s after dti_ctl_halt_after_ns()
    armed it, the channel stops: the deadline in its info file is the
    arming's time plus 0.2 s; no record stored has a timestamp after it;
    every CPU stored records in the window's last tenth; on every CPU
    the records from the window's start on are gap-free, and every
    sequence number after that CPU's last record belongs to a record
    refused as halted (the stats count nothing else; records that came
    after another CPU's had switched the channel off are filtered, which
    takes no number), so no record within the window was refused, on any
    CPU; at least one was halted; the channel is off, and a level
    change starts it again."""
    res = dti_guest.run(PRELUDE + f"""
        ctl register ft 8388608 7
        ctl bgflood ft
        sleep 1
        ctl ctl_halt_ns ft {FREEZE_NS}
        cat $T > /out/arm
        cat $D/ft/info > /out/info_armed
        sleep 1
        ctl bgstop
        cat $D/ft/merged-ts > /out/merged
        cat $D/ft/stats > /out/stats
        cat $D/ft/level > /out/level
        echo 7 > $D/ft/level
        ctl printk ft 3 1 0 process again
        cat $D/ft/info > /out/info_after
        tail -n 1 $D/ft/merged > /out/last
    """, smp=2, timeout=300).check()
    arm = parse_kv(out(res, "arm"))
    assert arm["ret"] == "0", arm
    deadline = int(parse_kv(out(res, "info_armed"))["halt_deadline_ns"])
    start = deadline - FREEZE_NS
    assert int(arm["before"]) <= start, (arm, deadline)
    recs = parse_merged_ts(out(res, "merged"))
    st = parse_stats(out(res, "stats"))
    assert not accounting_errors(st)
    late = [r for r in recs if r.ts_ns > deadline]
    assert not late, ("records stored after the deadline", deadline, late[:5])
    assert out(res, "level") == "-1\n", "the channel was not switched off"
    for cpu in range(2):
        mine = sorted(r.seq for r in recs if r.cpu == cpu and r.ts_ns > start)
        assert mine, (cpu, "no record in the window")
        tail = [r for r in recs if r.cpu == cpu and r.ts_ns > deadline - FREEZE_NS // 10]
        assert tail, (cpu, "no record in the window's last tenth")
        assert mine == list(range(mine[0], mine[-1] + 1)), (cpu, "a gap in the window")
        s = st[str(cpu)]
        other = {k: s[k] for k in LOSS_COUNTERS if k != "halted" and s[k]}
        assert not other, (cpu, other)
        assert s["next_seq"] == mine[-1] + 1 + s["halted"], (cpu, mine[-1], s)
    # the first record after the deadline, on whichever CPU, switched the
    # channel off: the others' later records were filtered by the level
    assert st["total"]["halted"] >= 1, st["total"]
    assert "halt_deadline_ns" not in out(res, "info_after"), "a level change left the trigger armed"
    assert out(res, "last").strip() == "again 0"
