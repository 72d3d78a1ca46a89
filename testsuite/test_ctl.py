"""Control by name (dti_ctl_*), the kernel side of tapset/dti_control.stp,
driven from process, softirq and hardirq context in a guest kernel."""

from __future__ import annotations

import pytest

from dtirec import parse_kv, parse_merged_ts, parse_stats
from guestlib import CONTROL_FILES, PRELUDE

ENOENT, EINVAL, EEXIST = 2, 22, 17


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def texts(res, *parts) -> list[str]:
    return out(res, *parts).splitlines()


@pytest.mark.parametrize("ctx", ["process", "softirq", "hardirq"])
def test_create_log_level_release_from_any_context(dti_guest, ctx):
    res = dti_guest.run(PRELUDE + f"""
        ctl ctl_create sc 6 1 {ctx} 32768
        cat $T > /out/create
        ctl ctl_log sc 3 4 1 {ctx} early
        n=0; while [ ! -e $D/sc/merged ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
        ctl ctl_log sc 3 2 0 {ctx} live
        ctl ctl_log sc 7 2 0 {ctx} filtered
        cat $T > /out/filtered
        snap sc s1
        ctl ctl_set sc -1 0 {ctx}
        ctl ctl_get sc
        cat $T > /out/get-off
        ctl ctl_log sc 3 1 0 {ctx} halted
        ctl ctl_set sc 5 1 {ctx}
        ctl ctl_log sc 3 1 0 {ctx} resumed
        snap sc s2
        ctl ctl_set sc -2 0 {ctx}
        sleep 0.3
        ls $D/sc > /out/destroyed
        ctl ctl_set sc 4 0 {ctx}
        ctl ctl_log sc 3 1 1 {ctx} reborn
        sleep 0.3
        snap sc s3
        exec 3< $D/sc/merged
        ctl ctl_release
        cat $T > /out/release
        ls $D > /out/dirs
        if cat <&3 >/dev/null 2>&1; then echo ok; else echo fail; fi > /out/reader
        exec 3<&-
        ctl ctl_log sc 3 1 0 {ctx} after-release
        cat $T > /out/after-release
        snap sc released
        ctl ctl_create sc 7 0 {ctx} 32768
        ctl ctl_log sc 3 1 0 {ctx} adopted
        snap sc adopted
        rmmod dti_test
        rmmod dti
        ls /sys/kernel/debug > /out/debugfs
    """, smp=2).check()
    assert parse_kv(out(res, "create"))["ctx_ok"] == "1"
    assert texts(res, "s1", "merged") == ["early 0", "early 1", "early 2", "early 3",
                                          "live 0", "live 1"]
    assert parse_kv(out(res, "filtered"))["filtered"] == "2"
    lines = parse_merged_ts(out(res, "s1", "merged-ts"))
    assert all(x.caller.startswith("dtt_") and "[dti_test]" in x.caller for x in lines)
    assert parse_kv(out(res, "get-off"))["level"] == "-1"
    assert texts(res, "s2", "merged")[-1] == "resumed 0"
    assert "halted 0" not in texts(res, "s2", "merged")
    assert out(res, "s2", "level") == "5\n"
    assert set(texts(res, "destroyed")) == CONTROL_FILES
    assert texts(res, "s3", "merged") == ["reborn 0"]
    # Released channels stay, switched off, readable; a new create takes
    # them over with their records.
    assert parse_kv(out(res, "release"))["released"] == "1"
    assert "sc" in texts(res, "dirs")
    assert out(res, "reader") == "ok\n"
    assert parse_kv(out(res, "after-release"))["filtered"] == "1"
    assert out(res, "released", "level") == "-1\n"
    assert texts(res, "released", "merged") == ["reborn 0"]
    assert texts(res, "adopted", "merged") == ["reborn 0", "adopted 0"]
    assert out(res, "adopted", "level") == "7\n"
    assert "dti" not in texts(res, "debugfs")


def test_control_errors(dti_guest):
    res = dti_guest.run(PRELUDE + """
        for c in "ctl_get nosuch" "ctl_set nosuch 3 0 hardirq" "ctl_log nosuch 3 1 0 softirq x" \\
                 "ctl_set @null 3 0 process" "ctl_get @null" "ctl_log @null 3 1 0 process x" \\
                 "ctl_create bad/name 3 0 hardirq 32768" "ctl_create @empty 3 0 process 32768" \\
                 "ctl_create tiny 3 0 process 8" "ctl_create lvl 9 0 process 32768" \\
                 "ctl_create dupe 3 0 process 32768" "ctl_create dupe 3 0 hardirq 32768"; do
            echo "$(try $c)" >> /out/results
        done
        ctl register plain 65536 3
        echo "$(try ctl_set plain 8 0 hardirq)" >> /out/results
        echo "$(try ctl_create plain 3 0 softirq 32768)" >> /out/results
        ctl ctl_set plain 6 1 hardirq
        cat $D/plain/level > /out/plain-level
        ctl ctl_log plain 6 3 1 softirq plainrec
        snap plain s
        ctl ctl_release
        cat $T > /out/release
        rmmod dti_test
        rmmod dti
    """, smp=2).check()
    r = texts(res, "results")
    # ctl_log and ctl_set run as jobs: their errors are in first_err.
    assert r[0] == f"ret=-{ENOENT}"
    assert parse_kv(r[1])["first_err"] == f"-{ENOENT}"
    assert parse_kv(r[2])["first_err"] == f"-{ENOENT}"
    assert parse_kv(r[3])["first_err"] == f"-{EINVAL}"
    assert r[4] == f"ret=-{EINVAL}"
    assert parse_kv(r[5])["first_err"] == f"-{EINVAL}"
    for line in r[6:10]:
        assert parse_kv(line)["first_err"] == f"-{EINVAL}", line
    assert parse_kv(r[10])["errors"] == "0"
    assert parse_kv(r[11])["first_err"] == f"-{EEXIST}"
    assert parse_kv(r[12])["first_err"] == f"-{EINVAL}"
    assert parse_kv(r[13])["first_err"] == f"-{EEXIST}"
    assert out(res, "plain-level") == "6\n"
    assert texts(res, "s", "merged") == ["plainrec 0", "plainrec 1", "plainrec 2"]
    assert parse_stats(out(res, "s", "stats"))["total"]["written"] == 3
    assert parse_kv(out(res, "release"))["released"] == "1"


def test_level_changes_by_name_race_destroy_and_recreate(dti_guest):
    """dti_ctl_set_level() from hard interrupts on one CPU while the level
    file destroys and recreates the buffers on the other: once quiet, a
    level of 0 or more always has buffers, and nothing splats."""
    res = dti_guest.run(PRELUDE + """
        ctl register rr 32768 3
        (
            i=0
            while [ $i -lt 600 ]; do
                echo "ctl_set rr $((i % 8)) 1 hardirq" > $T
                i=$((i + 1))
            done
        ) &
        BG=$!
        i=0
        while kill -0 $BG 2>/dev/null; do
            echo destroy > $D/rr/level
            echo $((i % 8)) > $D/rr/level
            i=$((i + 1))
        done
        wait $BG
        sleep 0.5
        cat $D/rr/level > /out/level
        ls $D/rr > /out/ls
        echo $i > /out/rounds
        ctl printk rr 0 1 0 process final
        snap rr s
    """, smp=2).check()
    level = int(out(res, "level"))
    files = set(texts(res, "ls"))
    assert int(out(res, "rounds")) >= 3
    if level >= 0:
        assert {"trace0", "trace1", "merged"} <= files, (level, files)
        assert texts(res, "s", "merged")[-1] == "final 0"
    else:
        assert "trace0" not in files or level == -1


def test_release_ends_a_halt_trigger(dti_guest):
    """dti_ctl_release() is a level change: it ends an armed halt trigger,
    so the trigger can be armed again at once, and a script that takes
    the channel over logs without limit."""
    res = dti_guest.run(PRELUDE + """
        ctl ctl_create hr 7 0 process 32768
        ctl ctl_halt hr 3
        try ctl_halt hr 3 > /out/busy
        ctl ctl_log hr 3 2 0 process before
        ctl ctl_release
        try ctl_halt hr 3 > /out/rearm
        ctl ctl_create hr 7 0 process 32768
        ctl ctl_log hr 3 5 0 process after
        cat $T > /out/after
        snap hr s
    """, smp=2).check()
    assert parse_kv(out(res, "busy"))["ret"] == "-16"          # -EBUSY: armed
    assert parse_kv(out(res, "rearm"))["ret"] == "0"
    assert parse_kv(out(res, "after"))["stored"] == "5"
    assert texts(res, "s", "merged") == [
        "before 0", "before 1", *(f"after {i}" for i in range(5))]
    st = parse_stats(out(res, "s", "stats"))
    assert st["total"]["halted"] == 0 and st["total"]["written"] == 7
    assert out(res, "s", "level") == "7\n"


def test_create_from_hardirq_takes_the_pool_and_it_refills(dti_guest):
    """dti_ctl_create() never allocates where it runs (PREEMPT_RT's
    allocator sleeps): channels created in one hard interrupt take the
    pool's entries, the ones past it are refused with ENOMEM and counted
    as refused_empty, and the pool refills from process context, so that
    as many again succeed in the next hard interrupt."""
    res = dti_guest.run(PRELUDE + """
        cat $D/.ctl_pool > /out/pool0
        size=$(sed -n 's/^size: //p' $D/.ctl_pool)
        ctl ctl_create burst 6 1 hardirq 4096 $((size + 4))
        cat $T > /out/burst
        cat $D/.ctl_pool > /out/pool1
        n=0
        while ! grep -qx "free: $size" $D/.ctl_pool && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
        cat $D/.ctl_pool > /out/pool2
        ctl ctl_create again 6 1 hardirq 4096 $size
        cat $T > /out/again
        ctl ctl_log burst0 3 1 0 hardirq logged
        sleep 0.5
        snap burst0 s
        ls $D > /out/dirs
        ctl ctl_release
        rmmod dti_test
        rmmod dti
    """, smp=2).check()
    pool0 = parse_kv(out(res, "pool0"))
    size = int(pool0["size"])
    assert int(pool0["free"]) == size and pool0["refused_empty"] == "0"
    burst = parse_kv(out(res, "burst"))
    assert burst["ctx_ok"] == "1"
    assert (burst["stored"], burst["errors"], burst["first_err"]) == (str(size), "4", "-12")
    assert parse_kv(out(res, "pool1"))["refused_empty"] == "4"
    assert parse_kv(out(res, "pool2"))["free"] == str(size)
    again = parse_kv(out(res, "again"))
    assert (again["stored"], again["errors"]) == (str(size), "0")
    dirs = set(texts(res, "dirs"))
    assert {f"burst{i}" for i in range(size)} <= dirs
    assert {f"again{i}" for i in range(size)} <= dirs
    assert not {f"burst{i}" for i in range(size, size + 4)} & dirs
    assert texts(res, "s", "merged") == ["logged 0"]
