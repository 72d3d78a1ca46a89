"""dti.ko low-level API and debugfs files, exercised in a real guest kernel.

Each test boots the guest, loads dti.ko and the dti_test client module,
drives the API through dti_test and checks the debugfs files.  Any kernel
splat in the guest console fails the test (conftest.py).
"""

from __future__ import annotations

import pytest

from dtirec import (CREC_HDR_MAX, SUBBUF_HEADER_SIZE, accounting_errors,
                    parse_kv, parse_merged_ts, parse_stats, parse_stream, payload_for, readable)
from guestlib import CONTROL_FILES, PRELUDE, VIEW_FILES, flood_reading

EINVAL, EEXIST, EMSGSIZE, ENXIO, ENODEV = 22, 17, 90, 6, 19
# Channels dti_test always has (its handles, see test_handles.py).
HANDLE_DIRS = {"h_demand", "h_early"}


def out(res, *parts) -> str:
    return (res.outdir.joinpath(*parts)).read_text()


def raw(res, *parts) -> bytes:
    return (res.outdir.joinpath(*parts)).read_bytes()


def texts(res, *parts) -> list[str]:
    return out(res, *parts).splitlines()


def test_register_creates_control_and_data_files(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register chan1 65536 3
        snap chan1 reg
        ctl unregister chan1
        ls $D > /out/after
    """, smp=2).check()
    files = set(texts(res, "reg", "ls"))
    assert files == CONTROL_FILES | VIEW_FILES | {"trace0", "trace1"}
    assert out(res, "reg", "level") == "3\n"
    info = parse_kv(out(res, "reg", "info"))
    assert info["name"] == "chan1"
    assert info["subbuf_size"] == str(65536 // 8)
    assert info["n_subbufs"] == "8"
    assert info["mode"] == "overwrite"
    assert info["buffers"] == "allocated"
    assert set(texts(res, "after")) == HANDLE_DIRS


def test_level_filtering(dti_guest):
    script = PRELUDE + "ctl register lv 65536 3\n"
    for lvl in range(8):
        script += f"ctl printk lv {lvl} 1 0 process L{lvl}\n"
    script += """
        snap lv at3
        echo 7 > $D/lv/level
        ctl printk lv 7 1 0 process late7
        snap lv at7
        echo 0 > $D/lv/level
        ctl printk lv 1 1 0 process one-at-0
        ctl printk lv 0 1 0 process zero-at-0
        snap lv at0
    """
    res = dti_guest.run(script, smp=2).check()
    assert texts(res, "at3", "merged") == ["L0 0", "L1 0", "L2 0", "L3 0"]
    st = parse_stats(out(res, "at3", "stats"))
    assert st["total"]["written"] == 4
    assert st["total"]["filtered"] == 4
    assert [r.level for r in parse_merged_ts(out(res, "at3", "merged-ts"))] == [0, 1, 2, 3]
    assert texts(res, "at7", "merged")[-1] == "late7 0"
    assert out(res, "at7", "level") == "7\n"
    assert texts(res, "at0", "merged")[-1] == "zero-at-0 0"
    assert "one-at-0 0" not in texts(res, "at0", "merged")


@pytest.mark.parametrize("ctx", ["process", "softirq", "hardirq"])
def test_per_cpu_placement_in_every_context(dti_guest, ctx):
    res = dti_guest.run(PRELUDE + f"""
        ctl register pc 65536 7
        for cpu in 0 1; do
            ctl printk pc 5 20 $cpu {ctx} cpu$cpu
            cat $T > /out/result$cpu
        done
        snap pc s
        rawsnap pc raw
    """, smp=2).check()
    for cpu in (0, 1):
        r = parse_kv(out(res, f"result{cpu}"))
        assert r["ctx"] == ctx and r["ctx_ok"] == "1", r
        assert r["cpu"] == str(cpu) and r["stored"] == "20", r
        recs, subbufs = parse_stream(raw(res, "raw", f"trace{cpu}"), name=f"trace{cpu}")
        assert [x.text for x in recs] == [f"cpu{cpu} {i}\n" for i in range(20)]
        assert {x.cpu for x in recs} == {cpu}
        assert [x.seq for x in recs] == list(range(20))
        assert subbufs and subbufs[0]["name"] == "pc" and subbufs[0]["cpu"] == cpu
    lines = parse_merged_ts(out(res, "s", "merged-ts"))
    assert len(lines) == 40
    for line in lines:
        assert line.text.startswith(f"cpu{line.cpu} ")
        assert line.caller.startswith("dtt_"), line.caller


def test_merged_is_in_timestamp_order_across_four_cpus(dti_guest):
    script = PRELUDE + "ctl register mo 262144 7\n"
    expected = []
    ctxs = ["process", "softirq", "hardirq"]
    for rnd in range(6):
        for cpu in range(4):
            ctx = ctxs[(rnd + cpu) % 3]
            script += f"ctl printk mo 4 2 {cpu} {ctx} r{rnd}c{cpu}\n"
            expected += [f"r{rnd}c{cpu} 0", f"r{rnd}c{cpu} 1"]
    script += "snap mo s\n"
    res = dti_guest.run(script, smp=4).check()
    assert texts(res, "s", "merged") == expected
    lines = parse_merged_ts(out(res, "s", "merged-ts"))
    ts = [x.ts_ns for x in lines]
    assert ts == sorted(ts)
    assert {x.cpu for x in lines} == {0, 1, 2, 3}
    assert [x.text for x in lines] == expected


def test_binary_and_reserved_records(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register bin 65536 7
        ctl event bin 2 3 0 process 20
        ctl reserve bin 2 2 0 hardirq 9
        ctl event bin 2 1 0 process 0
        snap bin s
        rawsnap bin raw
    """, smp=2).check()
    recs, _ = parse_stream(raw(res, "raw", "trace0"))
    assert [r.payload for r in recs] == [payload_for(i, 20) for i in range(3)] + \
        [payload_for(i, 9) for i in range(2)] + [b""]
    assert [r.flags for r in recs] == [0, 0, 0, 4, 4, 0]
    hexlines = texts(res, "s", "merged")
    assert hexlines[0] == " ".join(f"{b:02x}" for b in payload_for(0, 20))
    assert hexlines[-1] == ""


def test_wraparound_keeps_exactly_the_newest_records(dti_guest):
    # 4 sub-buffers of 1 KiB; "wrap N\n" records take 48 bytes each.
    res = dti_guest.run(PRELUDE + """
        ctl register_sub wr 1024 4 7 0
        ctl printk wr 3 500 0 process wrap
        snap wr s
        rawsnap wr raw
    """, smp=2).check()
    st = parse_stats(out(res, "s", "stats"))["0"]
    assert st["written"] == 500 and st["dropped"] == 0 and st["next_seq"] == 500
    kept = texts(res, "s", "merged")
    first = int(kept[0].split()[1])
    assert kept == [f"wrap {i}" for i in range(first, 500)]
    assert first == st["overwritten"] > 0
    # relay's read starts at the oldest whole sub-buffer: what merged shows.
    recs, subbufs = parse_stream(raw(res, "raw", "trace0"))
    assert [r.text for r in recs] == [t + "\n" for t in kept]
    assert [r.seq for r in recs] == list(range(first, 500))
    assert len(subbufs) == 4 and sum(s["records"] for s in subbufs) == len(recs)
    assert all(s["state"] == 1 for s in subbufs[:-1]) and subbufs[-1]["state"] == 0


def test_no_overwrite_mode_keeps_oldest_and_counts_drops(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register_sub no 1024 4 7 1
        ctl printk no 3 500 0 process keep
        cat $T > /out/result
        snap no s
        rawsnap no raw
        ctl printk no 3 5 0 process after-read
        snap no s2
    """, smp=2).check()
    st = parse_stats(out(res, "s", "stats"))["0"]
    kept = texts(res, "s", "merged")
    assert kept == [f"keep {i}" for i in range(len(kept))]
    assert st["written"] == len(kept) and st["dropped"] == 500 - len(kept) > 0
    assert st["next_seq"] == 500 and st["overwritten"] == 0
    r = parse_kv(out(res, "result"))
    assert int(r["errors"]) == st["dropped"] and r["first_err"] == "-28"
    info = parse_kv(out(res, "s", "info"))
    assert info["mode"] == "no-overwrite"
    # Reading the trace file consumed it, so new records fit again.
    recs, _ = parse_stream(raw(res, "raw", "trace0"))
    assert [r.seq for r in recs] == list(range(len(kept)))
    after = texts(res, "s2", "merged")
    assert after[-5:] == [f"after-read {i}" for i in range(5)]
    tail = parse_merged_ts(out(res, "s2", "merged-ts"))[-5:]
    assert [x.seq for x in tail] == list(range(500, 505))


def test_reset_consumed(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register rc 65536 7
        ctl printk rc 3 10 0 process rec
        rawsnap rc first
        rawsnap rc second
        echo 1 > $D/rc/reset_consumed
        rawsnap rc third
        snap rc s
    """, smp=2).check()
    assert len(parse_stream(raw(res, "first", "trace0"))[0]) == 10
    assert parse_stream(raw(res, "second", "trace0"))[0] == []
    assert [r.text for r in parse_stream(raw(res, "third", "trace0"))[0]] == \
        [f"rec {i}\n" for i in range(10)]
    assert len(texts(res, "s", "merged")) == 10


def test_off_destroy_and_recreate(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register od 65536 7
        ctl printk od 3 5 0 process before
        echo off > $D/od/level
        ctl printk od 0 5 0 process while-off
        snap od off
        echo destroy > $D/od/level
        ctl printk od 0 5 1 process while-destroyed
        snap od destroyed
        echo -1 > $D/od/level
        snap od off-again
        echo 4 > $D/od/level
        snap od recreated
        ctl printk od 4 2 1 hardirq fresh
        snap od fresh
        ctl set_level od -2
        ctl set_level od 7
        snap od api
    """, smp=2).check()
    assert texts(res, "off", "merged") == [f"before {i}" for i in range(5)]
    assert out(res, "off", "level") == "-1\n"
    st = parse_stats(out(res, "off", "stats"))["total"]
    assert st["filtered"] == 5 and st["written"] == 5
    assert set(texts(res, "destroyed", "ls")) == CONTROL_FILES
    assert out(res, "destroyed", "level") == "-2\n"
    assert parse_kv(out(res, "destroyed", "info"))["buffers"] == "none"
    assert parse_stats(out(res, "destroyed", "stats"))["total"]["filtered"] == 10
    assert set(texts(res, "off-again", "ls")) == CONTROL_FILES
    assert "trace0" in texts(res, "recreated", "ls")
    assert out(res, "recreated", "merged") == ""
    assert texts(res, "fresh", "merged") == ["fresh 0", "fresh 1"]
    assert out(res, "api", "merged") == "" and out(res, "api", "level") == "7\n"


LEVEL_BAD = ["8", "-3", "abc", "3x", " 3", "3 4", "offf", "of", "destroyy",
             "\\n", "99999999999999999999", "0x3", "3\\n\\n", "off\\n3"]
RESET_BAD = ["0", "2", "yes", "11", "\\n", " 1"]


def test_malformed_control_writes_change_nothing(dti_guest):
    script = PRELUDE + """
        ctl register mf 65536 5
        ctl printk mf 3 4 0 process rec
        snap mf before
    """
    for i, v in enumerate(LEVEL_BAD):
        script += f"echo \"level {i} $(badwrite $D/mf/level '{v}')\" >> /out/verdicts\n"
    for i, v in enumerate(RESET_BAD):
        script += f"echo \"reset {i} $(badwrite $D/mf/reset_consumed '{v}')\" >> /out/verdicts\n"
    script += """
        echo "stats 0 $(badwrite $D/mf/stats 1)" >> /out/verdicts
        echo "info 0 $(badwrite $D/mf/info 1)" >> /out/verdicts
        echo "merged 0 $(badwrite $D/mf/merged 1)" >> /out/verdicts
        # A valid write through the same path still works afterwards.
        echo "good 0 $(badwrite $D/mf/level 'off\\n')" >> /out/verdicts
        echo 5 > $D/mf/level
        snap mf after
    """
    res = dti_guest.run(script, smp=2).check()
    verdicts = texts(res, "verdicts")
    assert len(verdicts) == len(LEVEL_BAD) + len(RESET_BAD) + 4
    for v in verdicts[:-1]:
        assert v.endswith("REFUSED"), v
    assert verdicts[-1] == "good 0 ACCEPTED"
    for f in ("merged", "merged-ts", "level", "info"):
        assert out(res, "before", f) == out(res, "after", f), f
    st0, st1 = (parse_stats(out(res, d, "stats")) for d in ("before", "after"))
    assert st0 == st1


BAD_REGISTER = [
    ("register @empty 65536 3", EINVAL),
    ("register @null 65536 3", EINVAL),
    ("register a/b 65536 3", EINVAL),
    ("register .. 65536 3", EINVAL),
    ("register . 65536 3", EINVAL),
    ("register .hidden 65536 3", EINVAL),
    ("register bad*name 65536 3", EINVAL),
    ("register " + "n" * 32 + " 65536 3", EINVAL),
    ("register dup 65536 3", EEXIST),
    ("register zero 0 3", EINVAL),
    ("register tiny 1024 3", EINVAL),
    ("register huge 1099511627776 3", EINVAL),
    ("register lvlhi 65536 8", EINVAL),
    ("register lvllo 65536 -3", EINVAL),
    ("register_sub odd 1001 4 3 0", EINVAL),
    ("register_sub onesub 4096 1 3 0", EINVAL),
    ("register_sub manysub 4096 5000 3 0", EINVAL),
    ("register_sub bigsub 8388608 2 3 0", EINVAL),
    # the first flag dti_register_flags() does not know (4..16: DTI_F_STOP_ON_*)
    ("register_sub flags 4096 4 3 32", EINVAL),
    # DTI_F_PERSIST, but dti.ko was loaded without a persistent region
    ("register_sub persist 4096 4 3 2", ENODEV),
]


# The largest payload of a channel of 1024-byte sub-buffers: its size less
# the sub-buffer header and the longest compact record header.
SMALL_MAX = 1024 - SUBBUF_HEADER_SIZE - CREC_HDR_MAX


def test_bad_api_arguments_are_refused_and_leave_nothing(dti_guest):
    script = PRELUDE + "ctl register dup 65536 3\nctl register " + "n" * 31 + " 65536 3\n"
    for cmd, _ in BAD_REGISTER:
        script += f"echo \"$(try {cmd})\" >> /out/results\n"
    script += f"""
        ls $D > /out/dirs
        ctl register_sub small 1024 4 7 0
        echo "$(try event small 1 1 0 process {SMALL_MAX + 1})" > /out/toobig
        echo "$(try event small 1 1 0 process {SMALL_MAX})" > /out/fits
        echo "$(try printk small -1 1 0 process neg)" > /out/neglevel
        echo "$(try set_level small 8)" > /out/setlevel8
        echo "$(try set_level small -3)" > /out/setlevelm3
        cat $D/small/info > /out/info
        snap small s
    """
    res = dti_guest.run(script, smp=2).check()
    results = texts(res, "results")
    for (cmd, err), line in zip(BAD_REGISTER, results, strict=True):
        assert line == f"ret=-{err}", (cmd, line)
    assert set(texts(res, "dirs")) == {"dup", "n" * 31} | HANDLE_DIRS
    assert parse_kv(out(res, "info"))["max_payload"] == str(SMALL_MAX)
    assert parse_kv(out(res, "toobig"))["first_err"] == f"-{EMSGSIZE}"
    assert parse_kv(out(res, "fits"))["stored"] == "1"
    assert parse_kv(out(res, "neglevel"))["first_err"] == f"-{EINVAL}"
    assert out(res, "setlevel8") == f"ret=-{EINVAL}\n"
    assert out(res, "setlevelm3") == f"ret=-{EINVAL}\n"
    st = parse_stats(out(res, "s", "stats"))["total"]
    assert st["rejected"] == 2 and st["written"] == 1
    assert out(res, "s", "level") == "7\n"
    # the largest payload fits whatever extensions its header needs
    assert SUBBUF_HEADER_SIZE + SMALL_MAX + CREC_HDR_MAX <= 1024


def test_unregister_while_reader_holds_files_open(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register ur 65536 7
        ctl printk ur 3 50 0 process held
        exec 3< $D/ur/trace0
        exec 4< $D/ur/merged
        exec 5< $D/ur/level
        dd bs=200 count=1 <&3 > /out/part 2>/dev/null
        ctl unregister ur
        if cat <&3 > /out/rest 2>/out/err3; then echo ok > /out/r3; else echo fail > /out/r3; fi
        if cat <&4 > /dev/null 2>/out/err4; then echo ok > /out/r4; else echo fail > /out/r4; fi
        if cat <&5 > /dev/null 2>/out/err5; then echo ok > /out/r5; else echo fail > /out/r5; fi
        exec 3<&- 4<&- 5<&-
        ls $D > /out/dirs
        ctl register ur 65536 7
        ctl printk ur 3 1 0 process again
        snap ur s
        rmmod dti_test
        rmmod dti
        echo unloaded > /out/unloaded
    """, smp=2).check()
    # The sub-buffer's header and the whole records that fit after it
    assert SUBBUF_HEADER_SIZE < len(raw(res, "part")) <= 200
    for fd in (3, 4, 5):
        assert out(res, f"r{fd}") == "fail\n"
        assert "Input/output error" in out(res, f"err{fd}"), out(res, f"err{fd}")
    assert set(texts(res, "dirs")) == HANDLE_DIRS
    assert texts(res, "s", "merged") == ["again 0"]
    assert out(res, "unloaded") == "unloaded\n"


def test_probe_filtered_switch(dti_guest):
    res = dti_guest.run(PRELUDE + """
        P=/sys/module/dti/parameters/probe_filtered
        cat $P > /out/p0
        echo 1 > $P
        cat $P > /out/p1
        ctl register pf 65536 2
        ctl printk pf 5 10 1 hardirq refused
        ctl printk pf 1 2 0 process kept
        echo 0 > $P
        cat $P > /out/p2
        if echo bogus > $P 2>/dev/null; then echo ACCEPTED; else echo REFUSED; fi > /out/bad
        snap pf s
    """, smp=2).check()
    assert [out(res, f"p{i}") for i in range(3)] == ["N\n", "Y\n", "N\n"]
    assert out(res, "bad") == "REFUSED\n"
    st = parse_stats(out(res, "s", "stats"))["total"]
    assert st["filtered"] == 10 and st["written"] == 2
    assert texts(res, "s", "merged") == ["kept 0", "kept 1"]


@pytest.mark.parametrize("smp", [2, 4])
def test_merged_snapshots_stay_consistent_while_every_cpu_floods(dti_guest, smp):
    """Read merged-ts over and over while a kthread on every CPU logs into a
    small wrapping channel: each snapshot holds, per CPU, one unbroken run
    of records, and at rest written - overwritten is exactly what it shows."""
    res = dti_guest.run(PRELUDE + "ctl register fl 16384 7\n" +
                        flood_reading("fl", "flood fl 1500", 40) +
                        "snap fl final\n", smp=smp, timeout=600).check()
    snaps = sorted(res.outdir.glob("snap*"))
    assert len(snaps) >= 3
    wrapped = 0
    for path in snaps + [res.outdir / "final" / "merged-ts"]:
        lines = parse_merged_ts(path.read_text())
        ts = [x.ts_ns for x in lines]
        assert ts == sorted(ts), path
        by_cpu: dict[int, list] = {}
        for x in lines:
            by_cpu.setdefault(x.cpu, []).append(x)
        for cpu, recs in by_cpu.items():
            tag, rcpu, first = recs[0].text.split()
            offset = int(first) - recs[0].seq
            for k, x in enumerate(recs):
                assert x.seq == recs[0].seq + k, (path, cpu, k)
                assert x.text == f"flood {cpu} {x.seq + offset}", (path, x)
            wrapped += recs[0].seq > 0
    assert wrapped > 0
    r = parse_kv(out(res, "result"))
    st = parse_stats(out(res, "final", "stats"))
    assert int(r["calls"]) == int(r["stored"]) == st["total"]["written"]
    final = parse_merged_ts(out(res, "final", "merged-ts"))
    assert not accounting_errors(st)
    for cpu in range(smp):
        s = st[str(cpu)]
        assert readable(s) == sum(x.cpu == cpu for x in final), (cpu, s)
        assert s["next_seq"] == s["written"] and s["dropped"] == 0
