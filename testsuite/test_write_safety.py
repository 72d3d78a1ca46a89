"""dti.ko's write path in the contexts a probe can fire in (issue 15).

Each test puts a writer where users put them: kprobes inside DTI's own
write path while every CPU floods a wrapping channel, NMIs that do and do
not interrupt a writer, lengths no record can have in every state of a
channel, a name registered again while it is being removed, and CPUs
going offline and online under load, and probes that cross two
channels' store locks from two CPUs.  The SystemTap side (probe handlers
that log from inside DTI, from scheduler paths and from int3 probes) is
in test_probe_contexts.py.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from dtirec import (accounting_errors, parse_kv, parse_merged_ts, parse_stats,
                    parse_stream, readable)
from guestlib import (CONTROL_FILES, PRELUDE, VIEW_FILES, flood_reading,
                      self_nmi_unsupported)
from harness import kernels

EINVAL, ENOENT, ENOSPC, EMSGSIZE = 22, 2, 28, 90
# The probed functions inside a write, by the kind of channel written: a
# relay channel switches sub-buffers with relay, a persistent one with
# DTI's own ring writer.
NEST_SYMS = {
    "relay": ("relay_switch_subbuf", "dti_subbuf_start", "strscpy", "dti_probe_stored"),
    "persist": ("dti_ring_switch", "dti_subbuf_start", "strscpy", "dti_probe_stored"),
    # dti:dti_record on: inside the tracepoint's call and ftrace's event
    # write (which also runs for every other event of the kernel).
    "tracepoint": ("relay_switch_subbuf", "dti_subbuf_start", "strscpy", "dti_probe_stored",
                   "dti_trace_record", "trace_event_buffer_reserve"),
}
TP_ENABLE = "/sys/kernel/tracing/events/dti/dti_record/enable"
# A persistent channel needs dti.ko's region, reserved on the command line.
PERSIST_PRELUDE = PRELUDE.replace("insmod $DTI_MODDIR/dti.ko\n",
                                  "insmod $DTI_MODDIR/dti.ko persist=16M@0x30000000\n")
PERSIST_BOOT = dict(mem=1024, append="memmap=16M$0x30000000")
# Elsewhere memmap= does not exist (x86's e820 reads it): the region is
# set aside with reserve_mem= and given by name (6.11 and later).
PERSIST_NAMED_PRELUDE = PRELUDE.replace("insmod $DTI_MODDIR/dti.ko\n",
                                        "insmod $DTI_MODDIR/dti.ko persist=dtiws\n")
PERSIST_NAMED_BOOT = dict(mem=1024, append="reserve_mem=16M:4096:dtiws")


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def check_flood_snapshot(path, lines, *, migrated=False):
    """Per CPU, the flood's records are one unbroken run in the racer's own
    numbering, with rising sequence numbers (gaps are refused records).
    With `migrated` (racers moved off a CPU that went offline), each
    racer's numbers only rise in time order, and per buffer the sequence
    numbers rise."""
    by_racer: dict[str, list] = defaultdict(list)
    by_cpu: dict[int, list] = defaultdict(list)
    for x in lines:
        if x.text.startswith("flood "):
            by_racer[x.text.split()[1]].append(x)
            by_cpu[x.cpu].append(x)
    for cpu, recs in by_cpu.items():
        seqs = [x.seq for x in recs]
        assert seqs == sorted(set(seqs)), (path, cpu)
    for racer, recs in by_racer.items():
        nums = [int(x.text.split()[2]) for x in recs]
        if migrated:
            assert nums == sorted(set(nums)), (path, racer)
        else:
            assert nums == list(range(nums[0], nums[0] + len(nums))), (path, racer)
            assert {x.cpu for x in recs} == {int(racer)}, (path, racer)
    return by_cpu


def check_raw_buffers(res, d, name, ncpus):
    """Every sub-buffer of every trace file is framed by a valid header
    that counts exactly the records that follow it."""
    for cpu in range(ncpus):
        data = res.outdir.joinpath(d, f"trace{cpu}").read_bytes()
        recs, subbufs = parse_stream(data, name=f"trace{cpu}")
        assert subbufs, cpu
        assert {s["name"] for s in subbufs} == {name}
        assert {s["cpu"] for s in subbufs} == {cpu}
        # The records read under each header (parse_stream() also checks
        # that a closed one's end where its data does).
        counts = [s["parsed"] for s in subbufs]
        assert counts == [s["records"] for s in subbufs], (cpu, counts)


@pytest.mark.parametrize("kind", ["relay", "persist", "tracepoint"])
def test_kprobes_inside_the_write_path_log_to_the_same_channel(dti_guest, kind):
    """kprobes on the sub-buffer switch (relay's, or DTI's ring writer for a
    persistent channel), DTI's sub-buffer callback, the strscpy() of the
    sub-buffer header and the stored-record probe point log to the channel
    being written, while every CPU floods it and it wraps.  With the
    dti:dti_record event on in ftrace, also kprobes on DTI's call of the
    tracepoint and on ftrace's event write."""
    persist = kind == "persist"
    prelude, boot = PERSIST_PRELUDE, PERSIST_BOOT
    if persist and dti_guest.kernel.arch != "x86_64":
        conf = Path(__file__).resolve().parent.parent / "kmod" / "dti_conf.h"
        if not kernels.conf_features(conf).get("DTI_HAVE_RESERVE_MEM_FIND_BY_NAME"):
            pytest.skip(f"memmap= is x86-only and {dti_guest.kernel.release} finds no "
                        "reserve_mem= region by name (6.11 and later)")
        prelude, boot = PERSIST_NAMED_PRELUDE, PERSIST_NAMED_BOOT
    tracepoint = kind == "tracepoint"
    # dti_probe_stored() is called only while someone listens.
    res = dti_guest.run((prelude if persist else PRELUDE) +
                        "echo 1 > /sys/module/dti/parameters/probe_stored\n" +
                        (f"echo 1 > {TP_ENABLE}\n" if tracepoint else "") +
                        f"ctl register_sub ns 4096 4 7 {2 if persist else 0}\n" +
                        flood_reading("ns", "nest ns 1500", 20) +
                        "snap ns final\nrawsnap ns raw\n", smp=2, timeout=900,
                        # kprobes put in while every CPU runs the code:
                        # QEMU's multi-threaded TCG ran stale code (both
                        # CPUs jumped to 0, tracepoint kind, debug kernel)
                        tcg_single=True,
                        **(boot if persist else {})).check()
    r = parse_kv(out(res, "result"))
    assert r["ret"] == "0", r
    busy = 0
    for sym in NEST_SYMS[kind]:
        hits, stored, refused, other = map(int, r[sym].split("/"))
        assert hits > 0 and other == 0, (sym, r[sym])
        assert hits == stored + refused, (sym, r[sym])
        busy += refused
    # Called only from inside a write: every record they log is refused.
    inside = ("dti_trace_record",) if tracepoint else ()
    for sym in (NEST_SYMS[kind][0], "dti_subbuf_start", "dti_probe_stored", *inside):
        hits, stored, refused, _ = map(int, r[sym].split("/"))
        assert refused == hits, (sym, r[sym])
    st = parse_stats(out(res, "final", "stats"))
    assert st["total"]["nested"] + st["total"]["nmi"] == busy, st["total"]
    assert not accounting_errors(st)
    assert int(r["calls"]) == int(r["stored"])

    wrapped = 0
    for path in sorted(res.outdir.glob("snap*")) + [res.outdir / "final" / "merged-ts"]:
        lines = parse_merged_ts(path.read_text())
        assert [x.ts_ns for x in lines] == sorted(x.ts_ns for x in lines), path
        by_cpu = check_flood_snapshot(path, lines)
        wrapped += any(recs[0].seq > 0 for recs in by_cpu.values())
        for x in lines:
            # Only probes that also fire outside DTI's writes store records.
            assert x.text.startswith(("flood ", "nest strscpy ",
                                      "nest trace_event_buffer_reserve ")), (path, x)
    assert wrapped
    final = parse_merged_ts(out(res, "final", "merged-ts"))
    for cpu in range(2):
        assert readable(st[str(cpu)]) == sum(x.cpu == cpu for x in final), st[str(cpu)]
    check_raw_buffers(res, "raw", "ns", 2)


def test_nmi_records_are_stored_unless_they_interrupt_a_writer(dti_guest):
    """Self-NMIs: a record logged from an NMI that interrupted nothing is
    stored; one from an NMI sent from inside a write of the same channel
    is refused and counted as nmi, and the outer record is intact."""
    why = self_nmi_unsupported(dti_guest.kernel)
    if why:
        pytest.skip(why)
    res = dti_guest.run(PRELUDE + """
        echo 1 > /sys/module/dti/parameters/probe_stored
        ctl register nm 65536 7
        ctl nmi nm 40
        cat $T > /out/result
        snap nm s
    """, smp=2, timeout=600).check()
    r = parse_kv(out(res, "result"))
    assert r["timeouts"] == "0", r
    assert r["in_nmi"] == "80", r
    assert r["free_stored"] == "40" and r["free_err"] == "0", r
    assert r["inside_busy"] == "40" and r["inside_err"] == "0", r
    st = parse_stats(out(res, "s", "stats"))
    assert st["total"]["nmi"] == 40 and st["total"]["nested"] == 0
    assert st["total"]["written"] == 80
    assert not accounting_errors(st)
    texts = out(res, "s", "merged").splitlines()
    assert [t for t in texts if t.startswith("nmi free")] == [f"nmi free {i}" for i in range(40)]
    assert [t for t in texts if t.startswith("outer")] == [f"outer {i}" for i in range(40)]
    assert not [t for t in texts if t.startswith("nmi inside")]
    # Each refused NMI record left a gap in its CPU's sequence numbers,
    # right after the outer record it interrupted.
    lines = parse_merged_ts(out(res, "s", "merged-ts"))
    seen = {(x.cpu, x.seq) for x in lines}
    for x in lines:
        if x.text.startswith("outer"):
            assert (x.cpu, x.seq + 1) not in seen, x


def test_probes_crossing_two_store_locks_do_not_deadlock(dti_guest):
    """A probe that is not an NMI (an ftrace-based kprobe on
    dti_probe_stored()), inside one ordered channel's store lock, logs to
    a second ordered channel, while another CPU does the reverse (issue
    40 item 9).  Were each CPU, holding one lock, to spin for the other's,
    both would hang.  Instead the inner record only tries its lock: it is
    stored when the lock is free, refused and counted as nested when it
    is not; every outer record is stored."""
    res = dti_guest.run(PRELUDE + """
        ctl register xa 4194304 7
        ctl register xb 4194304 7
        ctl cross xa xb 3000
        cat $T > /out/result
        snap xa a
        snap xb b
    """, smp=2, timeout=600).check()
    r = {k: int(v) for k, v in parse_kv(out(res, "result")).items()}
    assert r["ret"] == 0 and r["other"] == 0, r
    # an int3 kprobe runs as an NMI, which never spins anyway; arm64's
    # kprobes (a BRK, a debug exception: no NMI) are not ftrace-based on
    # every kernel, and none runs as an NMI
    if dti_guest.kernel.arch == "x86_64":
        assert r["ftrace"] == 1, ("the probe was an int3 one, an NMI", r)
    assert r["nmi"] == 0, ("the probe ran as an NMI", r)
    # the inner records met the other lock both free and taken
    assert r["stored"] > 0 and r["nested"] > 0, r
    sa, sb = (parse_stats(out(res, d, "stats")) for d in ("a", "b"))
    for st in (sa, sb):
        assert not accounting_errors(st), st
    assert sa["total"]["written"] + sb["total"]["written"] == r["outer"] + r["stored"], (r, sa, sb)
    assert sa["total"]["nested"] + sb["total"]["nested"] == r["nested"], (r, sa, sb)
    texts = out(res, "a", "merged").splitlines() + out(res, "b", "merged").splitlines()
    assert sum(t.startswith("cross in ") for t in texts) > 0
    assert sum(t.startswith("cross out ") for t in texts) > 0


def badlen(res, name):
    r = parse_kv(out(res, name))
    assert r["ret"] == "0", r
    assert r["guard"] == "ok", r
    return ([int(v) for v in r["event"].split(",")], int(r["reserve"]),
            [int(v) for v in r["ctl"].split(",")])


def test_bad_lengths_at_every_entry_point_in_every_state(dti_guest):
    """SIZE_MAX, a negative errno cast to size_t and DTI_PAYLOAD_MAX + 1 go
    to dti_event_raw(), dti_reserve_raw() and dti_ctl_log() on a handle
    before INIT_DTI_HANDLE(), with no buffers yet, with buffers, after
    destroy and after cleanup, and to a registered channel.  Each is
    refused and counted; the guard words after h_raw's 1 KiB pending
    store stay intact."""
    res = dti_guest.run(PRELUDE + """
        echo "badlen h_raw 985" > $T; cat $T > /out/before_init
        ctl handle_init h_raw
        echo "badlen h_raw 985" > $T; cat $T > /out/no_buffers
        cat $D/h_raw/info > /out/info_nobuf
        ctl printk h_raw 3 1 0 process hello
        n=0; until [ -e $D/h_raw/merged ] || [ $n -gt 100 ]; do sleep 0.1; n=$((n+1)); done
        MAX=$(awk '$1=="max_payload:"{print $2}' $D/h_raw/info)
        echo "badlen h_raw $((MAX + 1))" > $T; cat $T > /out/buffers
        echo destroy > $D/h_raw/level
        echo "badlen h_raw $((MAX + 1))" > $T; cat $T > /out/destroyed
        cat $D/h_raw/stats > /out/stats
        snap h_raw s
        ctl unregister h_raw
        echo "badlen h_raw 985" > $T; cat $T > /out/cleaned_up
        ctl register rl 65536 7
        RMAX=$(awk '$1=="max_payload:"{print $2}' $D/rl/info)
        echo "badlen rl $((RMAX + 1))" > $T; cat $T > /out/registered
        echo destroy > $D/rl/level
        echo "badlen rl $((RMAX + 1))" > $T; cat $T > /out/registered_destroyed
        cat $D/rl/stats > /out/rl_stats
    """, smp=2).check()
    too_big = [-EMSGSIZE] * 3
    # No channel yet: nothing to find by name; the fourth length does not
    # fit the 1 KiB pending store.
    assert badlen(res, "before_init") == (too_big + [-ENOSPC], 0, [-ENOENT] * 4)
    assert parse_kv(out(res, "info_nobuf"))["buffers"] == "none"
    assert badlen(res, "no_buffers") == (too_big + [-ENOSPC], 0, too_big + [-ENOSPC])
    assert badlen(res, "buffers") == ([-EMSGSIZE] * 4, 0, [-EMSGSIZE] * 4)
    # At "destroy" the level filters dti_ctl_log() (1) before any length.
    assert badlen(res, "destroyed") == ([-EMSGSIZE] * 4, 0, [1] * 4)
    assert badlen(res, "cleaned_up") == (too_big + [-ENOSPC], 0, [-ENOENT] * 4)
    assert badlen(res, "registered") == ([-EMSGSIZE] * 4, 0, [-EMSGSIZE] * 4)
    assert badlen(res, "registered_destroyed") == ([-EMSGSIZE] * 4, 0, [1] * 4)

    st = parse_stats(out(res, "stats"))
    assert not accounting_errors(st)
    # before init: 3 events and 3 reservations too big, one event and one
    # reservation lost; no buffers: 3 + 3 + 3 too big, 3 lost; buffers:
    # 12 too big; destroyed: 8 too big.
    assert st["total"]["rejected"] == 6 + 9 + 12 + 8, st["total"]
    assert st["total"]["lost"] == 2 + 3, st["total"]
    assert st["total"]["written"] == 1 and st["total"]["discarded"] == 1
    assert "merged" not in out(res, "s", "ls").split()
    rl = parse_stats(out(res, "rl_stats"))
    assert not accounting_errors(rl)
    assert rl["total"]["rejected"] == 12 + 8 and rl["total"]["written"] == 0


def test_a_name_registered_again_while_it_is_being_removed(dti_guest):
    """dti_register() of a name whose channel another thread is removing
    waits for the removal and gets a complete channel: control files,
    trace files, merged views, working buffers."""
    script = PRELUDE + "ctl register rr 65536 7\n"
    for k in range(5):
        script += f"""
            ctl printk rr 3 3 0 process old{k}
            ctl rereg rr
            cat $T > /out/result{k}
            ls $D/rr > /out/ls{k}
            ctl printk rr 3 2 1 process new{k}
            cat $D/rr/merged > /out/merged{k}
        """
    res = dti_guest.run(script, smp=2).check()
    for k in range(5):
        assert parse_kv(out(res, f"result{k}"))["ret"] == "0"
        assert set(out(res, f"ls{k}").split()) == \
            CONTROL_FILES | VIEW_FILES | {"trace0", "trace1"}, k
        assert out(res, f"merged{k}").splitlines() == [f"new{k} 0", f"new{k} 1"]


def test_cpu_hotplug_while_every_cpu_logs(dti_guest):
    """In a 4-CPU guest, CPU 3 goes offline and online over and over while
    a kthread per CPU floods a wrapping channel and merged-ts is read;
    meanwhile channels are registered, destroyed, recreated and removed
    while CPU 2 goes on- and offline.  No splat, every snapshot is
    consistent, the returning CPUs' records appear, the accounting holds,
    and channels made while a CPU was away get its buffer when it returns."""
    res = dti_guest.run(PRELUDE + """
        ON3=/sys/devices/system/cpu/cpu3/online
        ON2=/sys/devices/system/cpu/cpu2/online
        ctl register hp 16384 7
        echo "flood hp 2000" > $T &
        FP=$!
        i=0
        while kill -0 $FP 2>/dev/null && [ $i -lt 30 ]; do
            echo 0 > $ON3
            cat $D/hp/merged-ts > /out/snap$i
            echo 1 > $ON3
            i=$((i+1))
        done
        wait $FP
        cat $T > /out/flood
        echo $i > /out/toggles
        ctl printk hp 3 20 3 process back
        snap hp final

        ( for k in $(seq 1 25); do echo 0 > $ON2; echo 1 > $ON2; done ) &
        HP=$!
        k=0
        while kill -0 $HP 2>/dev/null && [ $k -lt 40 ]; do
            ctl register hq$k 16384 7
            ctl printk hq$k 3 2 -1 process x
            echo destroy > $D/hq$k/level
            echo 7 > $D/hq$k/level
            cat $D/hq$k/merged > /dev/null
            # dti_test holds 16 channels: keep one in four.
            [ $((k % 4)) = 1 ] || ctl unregister hq$k
            k=$((k+1))
        done
        wait $HP
        echo $k > /out/registrations
        for c in 0 1 2 3; do
            for j in $(seq 1 4 $k); do
                [ -d $D/hq$j ] && ctl printk hq$j 3 1 $c process on$c
            done
        done
        for j in $(seq 1 4 $k); do
            [ -d $D/hq$j ] || continue
            mkdir -p /out/hq$j
            ls $D/hq$j > /out/hq$j/ls
            cat $D/hq$j/merged-ts > /out/hq$j/merged-ts
            cat $D/hq$j/stats > /out/hq$j/stats
        done
    """, smp=4, timeout=1200).check()
    assert int(out(res, "toggles")) >= 3
    assert int(out(res, "registrations")) >= 3
    r = parse_kv(out(res, "flood"))
    assert int(r["calls"]) == int(r["stored"]) > 0
    for path in sorted(res.outdir.glob("snap*")):
        lines = parse_merged_ts(path.read_text())
        assert [x.ts_ns for x in lines] == sorted(x.ts_ns for x in lines), path
        check_flood_snapshot(path, lines, migrated=True)
    st = parse_stats(out(res, "final", "stats"))
    assert not accounting_errors(st)
    final = parse_merged_ts(out(res, "final", "merged-ts"))
    assert [x.text for x in final if x.cpu == 3][-20:] == [f"back {i}" for i in range(20)]
    for cpu in range(4):
        assert readable(st[str(cpu)]) == sum(x.cpu == cpu for x in final), (cpu, st[str(cpu)])
    assert st["total"]["written"] == int(r["stored"]) + 20
    checked = 0
    for d in sorted(res.outdir.glob("hq*")):
        files = set(d.joinpath("ls").read_text().split())
        assert {f"trace{c}" for c in range(4)} <= files, d
        lines = parse_merged_ts(d.joinpath("merged-ts").read_text())
        assert {x.cpu for x in lines if x.text.startswith("on")} == {0, 1, 2, 3}, d
        assert not accounting_errors(parse_stats(d.joinpath("stats").read_text()))
        checked += 1
    assert checked >= 1


def test_registration_while_a_cpu_comes_up(dti_guest):
    """A channel registered while a CPU is between relay's hotplug prepare
    step and being online (held there by a hotplug callback of dti_test)
    still gets a buffer and a trace file for that CPU, and records logged
    there are stored."""
    res = dti_guest.run(PRELUDE + """
        echo 0 > /sys/devices/system/cpu/cpu1/online
        ctl hotreg hr 1
        cat $T > /out/result
        cat /sys/devices/system/cpu/cpu1/online > /out/online
        ls $D/hr > /out/ls
        ctl printk hr 3 5 1 process on1
        ctl printk hr 3 5 0 process on0
        snap hr s
    """, smp=2, timeout=300).check()
    r = parse_kv(out(res, "result"))
    assert r["ret"] == "0" and r["up"] == "0", r
    assert out(res, "online") == "1\n"
    assert {"trace0", "trace1"} <= set(out(res, "ls").split())
    lines = parse_merged_ts(out(res, "s", "merged-ts"))
    assert [(x.cpu, x.text) for x in lines] == \
        [(1, f"on1 {i}") for i in range(5)] + [(0, f"on0 {i}") for i in range(5)]
    assert not accounting_errors(parse_stats(out(res, "s", "stats")))
