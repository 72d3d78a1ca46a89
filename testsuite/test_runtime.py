"""The userspace runtime (runtime/: libdti and the `dti` command) in a guest.

Each test boots the guest with dti.ko, dti_test.ko and the statically
linked `dti` binary as /bin/dti, writes records through dti_test and
compares what `dti` prints with the kernel's own merged views.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from dtirec import json_record, parse_merged_ts, parse_stats
from guestlib import PRELUDE, SAMPLE


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def strip_caller(text: str) -> list[tuple]:
    """merged-ts lines without the caller column."""
    return [(x.ts_ns, x.cpu, x.level, x.seq, x.text) for x in parse_merged_ts(text)]


@pytest.fixture
def rt_guest(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    return dti_guest


# Records on both CPUs in every context, text and binary, so that the
# merge, the hex formatting and empty payloads are all exercised.
WRITE_MIXED = """
ctl register mix 65536 7
ctl printk mix 3 5 0 process a
ctl printk mix 4 3 1 softirq b
ctl event mix 6 2 1 hardirq 20
ctl printk mix 7 4 0 hardirq c
ctl event mix 2 1 0 process 0
ctl reserve mix 5 2 1 process 70
ctl printk mix 1 3 1 process d
"""


def test_read_equals_merged(rt_guest):
    res = rt_guest.run(PRELUDE + WRITE_MIXED + """
        ctl printk mix 4 3 2 hardirq e
        ctl event mix 5 2 3 softirq 33
        cat $D/mix/merged > /out/merged
        cat $D/mix/merged-ts > /out/merged-ts
        dti read mix > /out/read
        dti read mix --format ts > /out/read-ts
        dti read mix --format ts --symbols > /out/read-sym
        dti read mix --format json > /out/read-json
        dti read mix --cpu 1 --format ts > /out/read-cpu1
        dti read mix -p crit..warning --format ts > /out/read-lvl
        dti read mix --format raw > /out/read-raw
        # wrap-around: only the newest records remain
        ctl register_sub wr 1024 4 7 0
        ctl printk wr 3 300 0 process wrap
        ctl printk wr 3 100 1 softirq wrap1
        cat $D/wr/merged > /out/wr-merged
        dti read wr > /out/wr-read
        # no-overwrite: records dropped when full, a gap once space is free
        ctl register_sub no 1024 4 7 1
        ctl printk no 3 600 0 process keep
        dti read no > /dev/null
        ctl printk no 3 3 0 process after
        cat $D/no/merged > /out/no-merged
        dti read no > /out/no-read 2> /out/no-err
    """, smp=4).check()
    merged = out(res, "merged")
    assert merged.count("\n") == 25
    assert {x.cpu for x in parse_merged_ts(out(res, "merged-ts"))} == {0, 1, 2, 3}
    assert out(res, "read") == merged
    assert strip_caller(out(res, "read-ts")) == strip_caller(out(res, "merged-ts"))
    assert all(re.match(r"0x[0-9a-f]+$", x.caller)
               for x in parse_merged_ts(out(res, "read-ts")))
    # --symbols resolves callers as the kernel's %pS does
    assert out(res, "read-sym") == out(res, "merged-ts")
    recs = [json_record(line) for line in out(res, "read-json").splitlines()]
    kts = parse_merged_ts(out(res, "merged-ts"))
    assert [(r["ts_ns"], r["cpu"], r["seq"]) for r in recs] == \
        [(x.ts_ns, x.cpu, x.seq) for x in kts]
    assert [r.get("text", "").rstrip("\n") or r.get("data", "") for r in recs][:1] == ["a 0"]
    assert strip_caller(out(res, "read-cpu1")) == \
        [x for x in strip_caller(out(res, "merged-ts")) if x[1] == 1]
    assert {x.level for x in parse_merged_ts(out(res, "read-lvl"))} <= {2, 3, 4}
    assert len(parse_merged_ts(out(res, "read-lvl"))) == 5 + 3 + 1 + 3
    assert len(res.outdir.joinpath("read-raw").read_bytes()) > 25 * 40
    assert out(res, "wr-read") == out(res, "wr-merged")
    assert out(res, "wr-read").startswith("wrap ") and "wrap1 99\n" in out(res, "wr-read")
    assert out(res, "no-read") == out(res, "no-merged")
    assert out(res, "no-read").endswith("after 2\n")
    assert re.search(r"records lost on cpu0 between seq \d+ and 600", out(res, "no-err"))


def test_snapshot_restores_level_and_decode_equals_read(rt_guest, dti_tool, tmp_path):
    res = rt_guest.run(PRELUDE + WRITE_MIXED + """
        echo 5 > $D/mix/level
        dti snapshot mix /out/snap > /out/snap-msg
        cat /proc/sys/kernel/random/boot_id > /out/boot-id
        cat $D/mix/level > /out/level-after
        dti decode /out/snap > /out/decode
        dti decode --format ts /out/snap/trace1 /out/snap/trace0 > /out/decode-ts
        dti read mix > /out/read
        dti read mix --format ts > /out/read-ts
        cat $D/mix/merged > /out/merged
        echo off > $D/mix/level
        dti snapshot mix /out/snap-off > /dev/null
        cat $D/mix/level > /out/level-off
        # snapshot stopped the channel while copying: nothing was filtered
        # before it, everything written after the snapshot is kept
        ctl printk mix 3 1 0 process late
        cat $D/mix/merged > /out/merged-late
    """, smp=2).check()
    assert out(res, "level-after") == "5\n"
    assert out(res, "level-off") == "-1\n"
    assert "mix: 2 per-CPU files" in out(res, "snap-msg")
    assert out(res, "decode") == out(res, "read") == out(res, "merged")
    assert out(res, "decode-ts") == out(res, "read-ts")
    assert sorted(p.name for p in (res.outdir / "snap").iterdir()) == \
        ["boot_id", "info", "modules", "release", "stats", "trace0", "trace1"]
    assert (res.outdir / "snap" / "release").read_text() == rt_guest.kver + "\n"
    # the boot the copy was made in, for dti read -s to refuse another's
    assert (res.outdir / "snap" / "boot_id").read_text() == out(res, "boot-id")
    # offline: the host's dti decodes the copy made in the guest
    host = subprocess.run([str(dti_tool), "decode", str(res.outdir / "snap")],
                          capture_output=True, text=True)
    assert host.returncode == 0, host.stderr
    assert host.stdout == out(res, "merged")


def test_follow_shows_new_records(rt_guest):
    res = rt_guest.run(PRELUDE + """
        ctl register fo 65536 7
        ctl printk fo 3 3 0 process before
        dti read --follow fo > /out/follow 2> /out/follow-err &
        pid=$!
        sleep 1
        ctl printk fo 3 5 0 process after0
        ctl printk fo 3 5 1 softirq after1
        ctl event fo 3 2 1 hardirq 8
        sleep 1
        ctl printk fo 3 2 0 hardirq late
        sleep 1
        kill -INT $pid
        wait $pid && echo $? > /out/follow-rc || echo $? > /out/follow-rc
        cat $D/fo/merged > /out/merged
    """, smp=2).check()
    lines = out(res, "follow").splitlines()
    assert lines[:3] == ["before 0", "before 1", "before 2"]
    for tag in ("after0", "after1"):
        assert [x for x in lines if x.startswith(tag)] == [f"{tag} {i}" for i in range(5)]
    assert lines[-2:] == ["late 0", "late 1"]
    assert sorted(lines) == sorted(out(res, "merged").splitlines())
    assert out(res, "follow-rc").strip() == "0"
    assert out(res, "follow-err") == ""


def test_control_commands_and_errors(rt_guest):
    res = rt_guest.run(r"""
        e() { rc=0; "$@" > /out/$n.out 2> /out/$n.err || rc=$?; echo $rc > /out/$n.rc; }
        n=notloaded e dti list
        n=notloaded-read e dti read x
    """ + PRELUDE + r"""
        ctl register one 65536 3
        ctl register_sub two 2048 4 7 1
        ctl printk two 5 7 1 process t
        n=list e dti list
        n=level e dti level one
        n=setlevel e dti level one debug
        cat $D/one/level > /out/level-after
        n=setoff e dti level one off
        cat $D/one/level > /out/level-off
        n=badlevel e dti level one loud
        n=stats e dti stats two
        cat $D/two/stats > /out/stats-kernel
        n=read1 e dti read --no-reset two
        n=read2 e dti read --no-reset two
        n=reset e dti reset two
        n=read3 e dti read --no-reset two
        n=nochan e dti read nosuch
        n=nochan-level e dti level nosuch
        n=badopt e dti read --bogus two
        n=badcmd e dti frobnicate
        n=help e dti read --help
        n=helpcmd e dti help snapshot
        n=destroy e dti level two destroy
        n=destroyed-read e dti read two
        n=destroyed-snap e dti snapshot two /tmp/s
        n=decode-missing e dti decode /tmp/nothing-here
        printf 'garbage-garbage-garbage-garbage-garbage-garbage\n' > /tmp/trace0
        n=decode-garbage e dti decode /tmp/trace0
        umount /sys/kernel/debug
        n=nodebugfs e dti list
    """, smp=2).check()

    def rc(n):
        return int(out(res, f"{n}.rc"))

    def err(n):
        return out(res, f"{n}.err")

    assert rc("notloaded") == 1 and "DTI is not loaded" in err("notloaded")
    assert rc("notloaded-read") == 1 and "DTI is not loaded" in err("notloaded-read")
    lst = out(res, "list.out").splitlines()
    assert lst[0].split()[:2] == ["CHANNEL", "LEVEL"]
    rows = {f[0]: f for f in (line.split() for line in lst[1:])}
    assert rows["one"][1:3] == ["3", "(err)"] and rows["one"][3] == "65536"
    assert rows["two"][3] == str(2048 * 4) and rows["two"][4] == "7"
    assert out(res, "level.out") == "3 (err)\n"
    assert rc("setlevel") == 0 and out(res, "level-after") == "7\n"
    assert out(res, "level-off") == "-1\n"
    assert rc("badlevel") == 129 and "invalid level 'loud'" in err("badlevel")
    assert out(res, "stats.out") == out(res, "stats-kernel")
    assert parse_stats(out(res, "stats.out"))["1"]["written"] == 7
    assert out(res, "read1.out") == "".join(f"t {i}\n" for i in range(7))
    assert out(res, "read2.out") == ""          # consumed
    assert rc("reset") == 0 and out(res, "read3.out") == out(res, "read1.out")
    assert rc("nochan") == 1 and "no such channel: nosuch" in err("nochan")
    assert rc("nochan-level") == 1 and "no such channel" in err("nochan-level")
    assert rc("badopt") == 129 and "usage: dti read" in err("badopt")
    assert rc("badcmd") == 129 and "not a dti command" in err("badcmd")
    assert rc("help") == 0 and out(res, "help.out").startswith("usage: dti read")
    assert rc("helpcmd") == 0 and out(res, "helpcmd.out").startswith("usage: dti snapshot")
    assert rc("destroy") == 0
    assert rc("destroyed-read") == 1 and "has no buffers" in err("destroyed-read")
    assert rc("destroyed-snap") == 1 and "has no buffers" in err("destroyed-snap")
    assert rc("decode-missing") == 1 and "/tmp/nothing-here" in err("decode-missing")
    # Damage is reported and skipped, and the exit status says so (dti.1).
    assert rc("decode-garbage") == 2
    assert "/tmp/trace0: corrupt data at offset 0" in err("decode-garbage")
    assert rc("nodebugfs") == 1 and "debugfs is not mounted" in err("nodebugfs")


def test_snapshot_interrupted_restores_level(rt_guest):
    """SIGTERM or SIGHUP while `dti snapshot` has the channel off: the
    level comes back, the command dies of the signal and says what it did.
    The channel is large enough that copying it takes a while; the signal
    is sent once the level file shows the channel off.  (SIGINT is the
    same code path, tested on the host by runtime/tests/test_cli.py: a
    shell script's background job ignores SIGINT.)"""
    res = rt_guest.run(PRELUDE + r"""
        ctl register big 8388608 6
        ctl event big 6 40000 0 process 240
        ctl event big 6 40000 1 process 240
        for sig in TERM HUP; do
            dti snapshot big /tmp/s-$sig > /dev/null 2> /out/err-$sig &
            P=$!
            n=0; until [ "$(cat $D/big/level)" = "-1" ] || [ $n -ge 2000 ]; do n=$((n + 1)); done
            kill -$sig $P
            rc=0; wait $P || rc=$?
            echo $rc > /out/rc-$sig
            cat $D/big/level > /out/level-$sig
        done
    """, smp=2).check()
    for sig, num in (("TERM", 15), ("HUP", 1)):
        assert out(res, f"rc-{sig}").strip() == str(128 + num), out(res, f"err-{sig}")
        assert "interrupted: restoring level 6 of big" in out(res, f"err-{sig}")
        assert out(res, f"level-{sig}").strip() == "6"


def test_snapshot_refuses_an_old_snapshot_directory(rt_guest, dti_tool, tmp_path):
    """A second snapshot into the same directory is refused; --force
    replaces the old files, including a traceN the new one does not
    have, so that decoding the directory shows only the new records."""
    res = rt_guest.run(PRELUDE + r"""
        ctl register re 65536 7
        ctl printk re 3 1 -1 process first
        dti snapshot re /out/s > /dev/null
        echo stale > /out/s/trace7
        rc=0; dti snapshot re /out/s > /dev/null 2> /out/err-again || rc=$?
        echo $rc > /out/rc-again
        ctl printk re 3 1 -1 process second
        dti snapshot --force re /out/s > /dev/null 2> /out/err-force
        dti decode /out/s > /out/decoded
    """, smp=2).check()
    assert out(res, "rc-again").strip() == "1"
    assert "directory is not empty" in out(res, "err-again")
    assert "removed" in out(res, "err-force") and "(--force)" in out(res, "err-force")
    assert not (res.outdir / "s" / "trace7").exists()
    assert out(res, "decoded").splitlines() == ["first 0", "second 0"]


def test_debugfs_found_where_it_is_mounted(rt_guest):
    """dti finds debugfs from /proc/mounts, not at a fixed path."""
    res = rt_guest.run(PRELUDE + r"""
        ctl register elsewhere 65536 3
        umount /sys/kernel/debug
        mkdir -p /mnt/dbg
        mount -t debugfs none /mnt/dbg
        dti list > /out/list
        dti level elsewhere > /out/level
    """, smp=2).check()
    assert "elsewhere" in out(res, "list")
    assert out(res, "level").split()[0] in ("3", "err")


def test_sample_driver_events_print_everywhere(rt_guest, dti_tool):
    """The sample driver's requests are events of a registered type: the
    kernel's view, a snapshot decoded with `dti decode`, and `dti read` of
    the live channel print them through their template, JSON with named
    fields; no formatter of the driver's is needed."""
    res = rt_guest.run("insmod $DTI_MODDIR/dti.ko\n" + SAMPLE + r"""
        D=/sys/kernel/debug/dti
        echo 500 > $S/rate_hz
        echo 6 > $S/submit
        wait_idle
        echo timeout > $S/fault
        echo 3 > $S/submit
        wait_idle
        cat $S/counters > /out/counters
        dti snapshot dti_sample /out/ds > /dev/null
        cat $D/dti_sample/merged > /out/merged
        cat $D/dti_sample/formats > /out/formats
        dti decode /out/ds > /out/decode
        dti read dti_sample > /out/live
        dti decode -F json /out/ds > /out/json
    """, smp=2).check()
    counters = dict(line.split() for line in out(res, "counters").splitlines())
    assert out(res, "decode") == out(res, "merged") == out(res, "live")
    reqs = [line for line in out(res, "decode").splitlines() if line.startswith("req id=")]
    assert len(reqs) == int(counters["event_records"]) == 9
    assert sum("state=TIMEOUT" in r and "result=-110" in r and r.endswith("(fault)")
               for r in reqs) == 1
    assert sum("state=DONE" in r and "result=0 " in r for r in reqs) == 8
    assert out(res, "formats").startswith("1 req IsQQiIs id,state,submit,latency,result,flags,arg6 ")
    events = [json_record(x) for x in out(res, "json").splitlines() if '"event"' in x]
    assert [e["fields"]["id"] for e in events] == list(range(9))
    assert {e["fields"]["state"] for e in events} == {"DONE", "TIMEOUT"}
