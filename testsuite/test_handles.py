"""Handle API: on-demand buffers, pending records, early handles, cleanup
while logging, and the s390dbf compatibility header, in a guest kernel.

dti_test defines h_demand (DEFINE_DTI_HANDLE, level 7, 1 KiB pending
store) and h_early (DEFINE_DTI_EARLY_HANDLE, 4 KiB static buffer) and logs
"early <i>" to h_early before initialising it at module load.
"""

from __future__ import annotations

import pytest

from dtirec import (REC_REPLAYED, accounting_errors, parse_kv, parse_merged_ts,
                    parse_stats, parse_stream, record_size)
from guestlib import CONTROL_FILES, PRELUDE, PRELUDE_FUNCS, VIEW_FILES

def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def raw(res, *parts) -> bytes:
    return res.outdir.joinpath(*parts).read_bytes()


def texts(res, *parts) -> list[str]:
    return out(res, *parts).splitlines()


def fits(prefix: str, count: int, store: int) -> int:
    """How many "<prefix> <i>\\n" records fit a pending store of `store` bytes."""
    used = n = 0
    while n < count:
        size = record_size(len(f"{prefix} {n}\n"))
        if used + size > store:
            break
        used += size
        n += 1
    return n


def test_buffers_are_created_on_first_event_from_hardirq(dti_guest):
    res = dti_guest.run(PRELUDE + """
        snap h_demand before
        echo 4 > $D/h_demand/level
        ctl printk h_demand 6 3 0 process filtered
        snap h_demand filtered
        ctl printk h_demand 4 50 1 hardirq burst
        cat $T > /out/result
        n=0
        while [ ! -e $D/h_demand/merged ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
        ctl printk h_demand 4 2 0 process after
        snap h_demand after
        rawsnap h_demand raw
    """, smp=2).check()
    assert set(texts(res, "before", "ls")) == CONTROL_FILES
    assert set(texts(res, "filtered", "ls")) == CONTROL_FILES
    assert parse_stats(out(res, "filtered", "stats"))["total"]["filtered"] == 3
    r = parse_kv(out(res, "result"))
    assert r["ctx"] == "hardirq" and r["ctx_ok"] == "1", r
    assert set(texts(res, "after", "ls")) == CONTROL_FILES | VIEW_FILES | {"trace0", "trace1"}

    kept = fits("burst", 50, 1024)
    assert 0 < kept < 50
    info = parse_kv(out(res, "after", "info"))
    assert int(info["pending_replayed"]) == kept
    assert int(info["pending_lost"]) == 50 - kept
    assert int(info["pending_used"]) == 0
    # Every call that was not counted lost reported success.
    assert int(r["stored"]) == kept and int(r["errors"]) == 50 - kept
    assert texts(res, "after", "merged") == \
        [f"burst {i}" for i in range(kept)] + ["after 0", "after 1"]
    lines = parse_merged_ts(out(res, "after", "merged-ts"))
    assert [x.cpu for x in lines[:kept]] == [1] * kept
    ts = [x.ts_ns for x in lines]
    assert ts == sorted(ts)

    replayed = [rec for cpu in (0, 1)
                for rec in parse_stream(raw(res, "raw", f"trace{cpu}"))[0]
                if rec.flags & REC_REPLAYED]
    assert [rec.text for rec in replayed] == [f"burst {i}\n" for i in range(kept)]
    # Logged on CPU 1, stored by whichever CPU ran the creating work item,
    # in that buffer's sequence.
    assert {rec.log_cpu for rec in replayed} == {1}
    st = parse_stats(out(res, "after", "stats"))
    assert not accounting_errors(st)
    assert st["1"]["lost"] == st["total"]["lost"] == 50 - kept
    for cpu in (0, 1):
        recs = parse_stream(raw(res, "raw", f"trace{cpu}"))[0]
        # The records lost before the buffers existed took the first
        # sequence numbers of the CPU that logged them: a reader sees them
        # missing.
        first = st[str(cpu)]["lost"]
        assert [r.seq for r in recs] == list(range(first, first + len(recs)))
        assert all(r.cpu == cpu for r in recs)
    # Original timestamps: all taken inside the one hrtimer callback,
    # before the buffers existed and so before the "after" records.
    assert max(x.ts_ns for x in replayed) < lines[kept].ts_ns


def test_early_handle_replays_exactly_once_in_order(dti_guest):
    res = dti_guest.run(PRELUDE + """
        snap h_early loaded
        rawsnap h_early raw
        ctl printk h_early 3 1 0 process live
        snap h_early live
        echo destroy > $D/h_early/level
        echo 7 > $D/h_early/level
        ctl printk h_early 3 1 1 softirq recreated
        sleep 0.3
        snap h_early recreated
    """, smp=2).check()
    early = [f"early {i}" for i in range(20)]
    assert texts(res, "loaded", "merged") == early
    assert "trace0" in texts(res, "loaded", "ls")
    info = parse_kv(out(res, "loaded", "info"))
    assert info["pending_replayed"] == "20" and info["pending_lost"] == "0"
    recs = [r for cpu in (0, 1) for r in parse_stream(raw(res, "raw", f"trace{cpu}"))[0]]
    assert [r.text for r in recs] == [e + "\n" for e in early]
    assert all(r.flags & REC_REPLAYED for r in recs)
    assert [r.ts_ns for r in recs] == sorted(r.ts_ns for r in recs)
    lines = parse_merged_ts(out(res, "live", "merged-ts"))
    assert all(x.caller.startswith("dtt_log_early+") for x in lines[:20])
    assert lines[-1].text == "live 0" and lines[-1].ts_ns > lines[19].ts_ns
    # Recreated buffers start empty: nothing is replayed a second time.  The
    # one new record waited in the pending store while they were created.
    assert texts(res, "recreated", "merged") == ["recreated 0"]
    assert parse_kv(out(res, "recreated", "info"))["pending_replayed"] == "21"


def test_early_handle_overflow_is_counted_after_replay(dti_guest):
    """400 records logged to h_early before its INIT_DTI_HANDLE() overflow
    its 4 KiB static store: those that fit are replayed, in order; the
    others are counted lost, in the channel's stats (on the CPUs that
    logged them, whose sequence numbers they took before the first
    replayed record's) and as the store's pending_lost."""
    n = 400
    res = dti_guest.run(PRELUDE_FUNCS + f"""
        insmod $DTI_MODDIR/dti.ko
        insmod $DTI_MODDIR/dti_test.ko early={n}
        snap h_early loaded
        rawsnap h_early raw
    """, smp=2).check()
    kept = fits("early", n, 4096)
    assert 0 < kept < n
    assert texts(res, "loaded", "merged") == [f"early {i}" for i in range(kept)]
    info = parse_kv(out(res, "loaded", "info"))
    assert int(info["pending_replayed"]) == kept and int(info["pending_lost"]) == n - kept, info
    st = parse_stats(out(res, "loaded", "stats"))
    assert not accounting_errors(st)
    assert st["total"]["lost"] == n - kept and st["total"]["written"] == kept, st["total"]
    recs = [r for cpu in (0, 1) for r in parse_stream(raw(res, "raw", f"trace{cpu}"))[0]
            if r.flags & REC_REPLAYED]
    assert len(recs) == kept
    for cpu in (0, 1):
        mine = [r for r in parse_stream(raw(res, "raw", f"trace{cpu}"))[0]]
        if mine:
            assert mine[0].seq == st[str(cpu)]["lost"], (cpu, mine[0].seq, st[str(cpu)])


@pytest.mark.parametrize("smp", [2, 4])
def test_cleanup_while_other_cpus_log(dti_guest, smp):
    res = dti_guest.run(PRELUDE + """
        ctl printk h_demand 3 1 0 process warmup
        sleep 0.2
        ctl race h_demand 200
        cat $T > /out/result
        ls $D > /out/dirs
        ctl handle_init h_demand
        echo 5 > $D/h_demand/level
        ctl printk h_demand 3 2 0 hardirq reborn
        sleep 0.3
        snap h_demand reborn
    """, smp=smp).check()
    r = parse_kv(out(res, "result"))
    assert int(r["calls"]) > 0 and int(r["stored"]) > 0, r
    assert "h_demand" not in texts(res, "dirs")
    assert texts(res, "reborn", "merged")[-2:] == ["reborn 0", "reborn 1"]


def test_s390dbf_calls_map_onto_dti(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl s390_register s390 1 4
        cat $D/s390/info > /out/info
        cat $D/s390/level > /out/level
        ctl s390 s390 2 3 txt
        cat $T > /out/result
        ctl s390 s390 5 2 hidden
        ctl s390_level s390 6
        ctl s390 s390 5 1 shown
        snap s390 s
        ctl unregister s390
        ls $D > /out/dirs
    """, smp=2).check()
    info = parse_kv(out(res, "info"))
    assert int(info["subbuf_size"]) * int(info["n_subbufs"]) == 4 * 4096
    assert out(res, "level") == "3\n"
    assert parse_kv(out(res, "result"))["ok"] == "6"
    merged = texts(res, "s", "merged")
    assert merged == ["txt 0", "00 00 00 00 04 05 06 07",
                      "txt 1", "01 00 00 00 05 06 07 08",
                      "txt 2", "02 00 00 00 06 07 08 09",
                      "shown 0", "00 00 00 00 04 05 06 07"]
    assert out(res, "s", "level") == "6\n"
    assert "s390" not in texts(res, "dirs")
