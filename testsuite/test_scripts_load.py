"""The three ready scripts and the tapsets under load, as users run them
(issue 16).

dti_watch.stp while every CPU floods a channel from process, softirq and
hardirq context; dti_freeze.stp's exact freeze while every CPU floods;
dti_inject.stp on every probe kind and on two runs in a row; one test per
error message of the control tapset; dti.register and
dti.register_failed; and what a script started before dti.ko does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from dtirec import accounting_errors, parse_kv, parse_merged_ts, parse_stats
from guestlib import PRELUDE, STOP, plain_setup, start_stap
from harness.stap import NO_SKIP_LIMIT, staprun_cmd
from test_tapset_guest import compile_for_test, wait_exit

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent / "scripts"
PLAIN_SRC = HERE / "modules" / "dti_plain.c"


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


# On the debug kernel SystemTap 4.8 skips some probes as "low stack"
# (`stap -t`: "Skipped due to low stack", every skip of the run), though
# the stack is far from full.  Its guard, which the translator writes
# into every probe, takes the stack pointer modulo THREAD_SIZE as the
# room left: right on a task stack, which is THREAD_SIZE-aligned, wrong
# on the IRQ stacks, which x86 maps with vmap() and so aligns to a page
# only.  Measured on the debug kernel (THREAD_SIZE and IRQ stacks 32 KiB
# under KASAN; a probe reading hardirq_stack_ptr): CPU 0's IRQ stack
# top was on a 32 KiB boundary, CPUs 1-3's 4 KiB past one, so there a
# dti.record probe 3 to 4 KiB deep on the IRQ stack is taken to have
# less than 1 KiB left.  In a 10 s flood, dti.record ran up to 3.6 KiB
# deep on CPU 0 and never past 3.1 KiB on CPUs 1-3, and stap counted 157
# low-stack skips.  KASAN's larger frames are what reach that depth: a
# 30 s flood had 116 to 279 such skips in 2.4 million records, none on
# Debian's kernel.  (Without -t two runs said 966 and 796 skipped and
# missed exactly half as many records, 483 and 398: SystemTap counts
# each such skip twice in its total.)  The guard is the translator's
# code, not the runtime's, so dti-stap cannot patch it.
# The script is let run with them there (watch_flood()), and the records
# it missed must be no more than it says it skipped.


def guard_skips(kernel, err: str) -> int:
    """The probes SystemTap says a script skipped ("skipped probes: N" on
    its stderr, `err`) where they may be its stack guard's (above): on the
    debug kernel.  0 on Debian's kernel, where a test wants none."""
    m = re.search(r"skipped probes: (\d+)", err)
    return int(m[1]) if m and kernel.flavour == "debug" else 0


def guard_opts(kernel) -> list[str]:
    """stap options for a script whose skips guard_skips() lets be: on the
    debug kernel, no limit to them."""
    return [NO_SKIP_LIMIT] if kernel.flavour == "debug" else []


def watch_flood(stap, kernel, modules):
    """dti_watch for the flood tests: -DSTP_NO_OVERLOAD (see the next
    test), dti_test.ko's symbols, and on the debug kernel no limit to its
    skipped probes (above)."""
    dti_test = next(m for m in modules if m.name == "dti_test.ko")
    return compile_for_test(stap, SCRIPTS / "dti_watch.stp", "dti_watch_flood",
                            opts=["-DSTP_NO_OVERLOAD", "-d", str(dti_test),
                                  *guard_opts(kernel)])


def test_watch_survives_every_cpu_flooding(tapset_guest, stap, modules):
    """dti_watch ends normally after 30 s of every CPU flooding a channel
    from every context, with its summary, and its totals equal the
    channel's written column, per CPU, exactly, with nothing skipped.
    Compiled -DSTP_NO_OVERLOAD, as the script's header says for floods:
    with CPUs that do nothing but log, any per-record handler takes more
    than the half of their cycles that SystemTap's overload guard allows.
    Exactness needs dti-stap's runtime fix for the control timer (see
    scripts/dti-stap): without it about one record in a million logged from
    a hardirq is dropped by SystemTap uncounted."""
    mod = watch_flood(stap, tapset_guest.kernel, modules)
    script = PRELUDE + start_stap(mod, "/out/watch.txt", ready="dti_watch: watching",
                                  params="quiet=1", err_file="/out/watch.err") + """
        ctl register wl 262144 7
        ctl floodctx wl 30000
        cat $T > /out/flood
        snap wl s
    """ + STOP
    # Single-threaded TCG, as test_watch_stops_while_every_cpu_floods
    # explains: on the debug kernel the multi-threaded kind ran stale code
    # once the script's probes were in (a flooding CPU jumped to 0).
    res = tapset_guest.run(script, smp=4, timeout=900, tcg_single=True,
                           extra_files=stap.guest_files(mod)).check()
    text = out(res, "watch.txt")
    r = parse_kv(out(res, "flood"))
    st = parse_stats(out(res, "s", "stats"))
    totals: dict[int, int] = {}
    for m in re.finditer(r"^total channel=wl cpu=(\d+) level=\d+ records=(\d+) ", text, re.M):
        totals[int(m[1])] = totals.get(int(m[1]), 0) + int(m[2])
    assert "=== dti_watch summary" in text, text[-2000:]
    assert all(int(r[k]) > 0 for k in ("process", "softirq", "hardirq")), r
    assert st["total"]["written"] == int(r["stored"]) == int(r["calls"])
    assert not accounting_errors(st)
    assert set(totals) == {0, 1, 2, 3}
    # One message per logging call, counted whole: here the one
    # __dti_printk() in dti_test's dtt_flood_one().
    top = re.findall(r"^\s+(\d+)\s+wl\s+text\s+(\S+)", text, re.M)
    assert [site.split("+")[0] for _, site in top] == ["dtt_flood_one"], top
    assert int(top[0][0]) == sum(totals.values())
    # Equal to written, per CPU, exactly, nothing skipped.
    exact = {c: st[str(c)]["written"] for c in range(4)}
    err = out(res, "watch.err")
    skipped = guard_skips(tapset_guest.kernel, err)
    if skipped:
        # SystemTap's own stack guard (see guard_skips()): no record
        # counted that was not written, and no more missing than SystemTap
        # says it skipped.
        assert all(totals[c] <= exact[c] for c in exact), (totals, exact)
        assert sum(exact.values()) - sum(totals.values()) <= skipped, \
            (totals, exact, err)
        return
    assert "skipped probes" not in text + err, (text[-3000:], err)
    assert totals == exact, (totals, exact, err)


def test_watch_stops_while_every_cpu_floods(tapset_guest, stap, modules):
    """Stopping dti_watch (Ctrl-C) while every CPU floods from every
    context: SystemTap removes its probes under load and the tapset drops
    its listener; the kernel stays up, the script prints its summary, and
    the flood's records are all stored.

    Single-threaded TCG: the exit patches code that every vCPU is running
    (the ftrace-based kprobe on dti_probe_stored() goes, and the static key
    in front of its calls is switched off), and QEMU 7.2's multi-threaded
    TCG then kept running stale translations: every vCPU trapping again
    and again on an int3 at the static-key site that the kernel's int3
    handlers no longer found there (gdb on the hung guest; no oops), or a
    jump to 0 through the kprobe's ftrace trampoline.
    In one host thread the same test passed every time."""
    mod = watch_flood(stap, tapset_guest.kernel, modules)
    script = PRELUDE + "ctl register ws 262144 7\n"
    for i in range(3):
        script += start_stap(mod, f"/out/watch{i}.txt", ready="dti_watch: watching",
                             params="quiet=1") + f"""
        echo "floodctx ws 4000" > $T &
        FP=$!
        sleep 2
        kill -INT $SP
        wait $SP || true
        wait $FP
        cat $T > /out/flood{i}
        # The listener is dropped by a work item, shortly after the end probe.
        n=0; until grep -q N /sys/module/dti/parameters/probe_stored || [ $n -ge 50 ]; do
            sleep 0.1; n=$((n + 1)); done
        cat /sys/module/dti/parameters/probe_stored > /out/listen{i}
    """
    script += "snap ws s\n"
    res = tapset_guest.run(script, smp=4, timeout=300, tcg_single=True,
                           extra_files=stap.guest_files(mod)).check()
    for i in range(3):
        assert "=== dti_watch summary" in out(res, f"watch{i}.txt")
        r = parse_kv(out(res, f"flood{i}"))
        assert int(r["stored"]) == int(r["calls"]) > 0, r
        assert out(res, f"listen{i}") == "N\n"
    assert not accounting_errors(parse_stats(out(res, "s", "stats")))


# 20 by default (issue 40's "at least 20 runs"); DTI_FREEZE_RUNS=N for
# another count (CI's make check runs 8).
FREEZE_RUNS = int(os.environ.get("DTI_FREEZE_RUNS", "20"))


# The records dti_freeze may match: any writer's 40th (the first of them
# wins, the others find the trigger armed).  Every CPU floods by then, on
# x86-64 and on arm64, whose emulated CPUs under TCG log far more slowly
# and unevenly (an arm64-6.1 run's kthreads reached 442, 46, 88 and 68
# records in 6 s: "P2 400", the match before, never came).
FREEZE_MATCH = r"flood [PSH][0-9] 40"


def test_freeze_is_exact_while_every_cpu_floods(tapset_guest, stap, dti_tool):
    """dti_freeze CH REGEX 50 while 4 CPUs flood, FREEZE_RUNS times: each time
    exactly 50 records have a later timestamp than the match, nothing is
    stored after the halt, and the per-CPU report names exactly the
    records `dti read` shows after the match."""
    after = 50
    mod = compile_for_test(stap, SCRIPTS / "dti_freeze.stp", "dti_freeze",
                           args=["fx", f"^{FREEZE_MATCH}$", str(after)])
    script = PRELUDE
    for i in range(FREEZE_RUNS):
        script += "ctl register fx 262144 7\n" + start_stap(
            mod, f"/out/freeze{i}.txt", ready="dti_freeze: channel") + """
        echo "floodctx fx 6000" > $T &
        FP=$!
    """ + wait_exit(600) + f"""
        cat $D/fx/stats > /out/stats{i}.1
        sleep 1
        cat $D/fx/stats > /out/stats{i}.2
        wait $FP
        cat $T > /out/flood{i}
        cat $D/fx/level > /out/level{i}
        dti read -F ts fx > /out/read{i}
        ctl unregister fx
    """
    res = tapset_guest.run(script, smp=4, timeout=900 + 300 * FREEZE_RUNS,
                           extra_files=stap.guest_files(mod)).check()
    for i in range(FREEZE_RUNS):
        check_freeze(res, i, after)


def check_freeze(res, i: int, after: int) -> None:
    text = out(res, f"freeze{i}.txt")
    assert "dti_ordered" not in text, text       # this dti.ko orders the stores
    m = re.search(r"MATCH channel=fx cpu=(\d+) level=err seq=(\d+) ", text)
    assert m, (i, text)
    mcpu, mseq = int(m[1]), int(m[2])
    ranges = {int(c): (int(n), int(f), int(la)) for c, n, f, la in re.findall(
        r"^dti_freeze: after cpu=(\d+) records=(\d+) first_seq=(\d+) last_seq=(\d+)$",
        text, re.M)}
    assert sum(n for n, _, _ in ranges.values()) == after, (i, ranges)
    assert re.search(rf"FROZEN channel=fx after={after} records={after}$", text, re.M), text
    assert out(res, f"level{i}") == "-1\n"
    # No record is stored after the halt, although the flood goes on:
    # its calls after the halt were filtered (the level is debug until
    # then, so nothing else is), and the written count stays.  (On the
    # debug kernel the flood may be over before stats1 is read.)
    st1, st2 = (parse_stats(out(res, f"stats{i}.{n}")) for n in (1, 2))
    assert st1["total"]["written"] == st2["total"]["written"]
    assert st2["total"]["filtered"] > 0
    assert not accounting_errors(st2)
    lines = parse_merged_ts(out(res, f"read{i}"))
    match = [x for x in lines if (x.cpu, x.seq) == (mcpu, mseq)]
    assert len(match) == 1 and re.fullmatch(FREEZE_MATCH, match[0].text), (mcpu, mseq, match)
    for cpu in range(4):
        mine = [x for x in lines if x.cpu == cpu]
        n, first, last = ranges.get(cpu, (0, 0, 0))
        inside = [x for x in mine if first <= x.seq <= last] if n else []
        assert len(inside) == n, (i, cpu, ranges)
        # Nothing on any CPU after what the trigger let through.
        if n:
            assert mine[-1].seq == last, (i, cpu, mine[-1], ranges)
        if cpu == mcpu and n:
            assert first > mseq
    # Exactly AFTER records have a later timestamp than the match, and
    # they are the ones the trigger let through.
    after_match = [x for x in lines if x.ts_ns > match[0].ts_ns]
    assert len(after_match) == after, (i, len(after_match))
    assert all(ranges[x.cpu][1] <= x.seq <= ranges[x.cpu][2] for x in after_match), i


INJECT = SCRIPTS / "dti_inject.stp"


def kernel_debuginfo(kernel) -> bool:
    """Is the guest kernel's DWARF installed (Debian's -dbg package; the
    debug kernel's build tree has its own vmlinux)?"""
    if kernel.vmlinux is not None:
        return kernel.vmlinux.is_file()
    return Path(f"/usr/lib/debug/lib/modules/{kernel.release}/vmlinux").is_file() or \
        Path(f"/usr/lib/debug/boot/vmlinux-{kernel.release}").is_file()


def plain_line(pattern: str) -> int:
    for i, line in enumerate(PLAIN_SRC.read_text().splitlines(), 1):
        if re.search(pattern, line):
            return i
    raise AssertionError(pattern)


# (probe point, how to make it fire in the guest, what the records say)
PROBE_KINDS = {
    "module_function": ('module("{plain}").function("plain_compute")',
                        "echo '6 7' > $P", r"^plain_compute a=0x6 b=0x7$"),
    "module_return": ('module("{plain}").function("plain_compute").return',
                      "echo '6 7' > $P", r"^plain_compute return=0x2b$"),
    "module_statement": ('module("{plain}").statement("plain_compute@*dti_plain.c:{line}")',
                         "echo '6 7' > $P", r"^plain_compute a=0x6 b=0x7$"),
    # Needs the kernel's DWARF: linux-image-KVER-dbg.
    "kernel_function": ('kernel.function("ksys_sync")', "sync", r"^ksys_sync$"),
    "kprobe_function": ('kprobe.function("ksys_sync")', "sync",
                        r'^kprobe\.function\("ksys_sync"\) at 0x[0-9a-f]+$'),
    "timer": ("timer.ms(100)", ":", r"^timer\.ms\(100\) at 0x[0-9a-f]+$"),
}


@pytest.mark.parametrize("kind", sorted(PROBE_KINDS))
def test_inject_every_probe_kind(dti_guest, stap, modules, kernel_symbols, kernel, kind):
    plain = next(m for m in modules if m.name == "dti_plain.ko")
    point, poke, want = PROBE_KINDS[kind]
    point = point.format(plain=plain, line=plain_line(r"return a \* b \+ 1;"))
    if kind == "kernel_function" and not kernel_debuginfo(kernel):
        pytest.skip(f"kernel.function() needs the kernel's DWARF: "
                    f"apt-get install linux-image-{kernel.release}-dbg")
    mod = stap.compile(INJECT, name=f"inject_{kind}", args=[point, "ik", "5", "64"])
    script = plain_setup("ik") + f"""
        {staprun_cmd(mod, opts='-o /out/stap.txt')} &
        SP=$!
        n=0
        until [ -e $C/merged ] && grep -q . $C/merged; do
            n=$((n + 1)); [ $n -lt 600 ] || {{ echo "no record" >&2; exit 9; }}
            {poke}
            sleep 0.1
        done
        kill -INT $SP
        wait $SP || true
        cat $C/merged > /out/merged
    """
    res = dti_guest.run(script, smp=2, timeout=600,
                        extra_files=stap.guest_files(mod)).check()
    recs = out(res, "merged").splitlines()
    assert recs and all(re.match(want, r) for r in recs), recs
    m = re.search(r"dti_inject: (\d+) logged, 0 filtered by level, 0 failed", out(res, "stap.txt"))
    assert m and int(m[1]) == len(recs), out(res, "stap.txt")


def test_inject_logs_on_every_run(dti_guest, stap, kernel_symbols):
    """dti_inject with CREATE_KB, twice in a row: the second run takes the
    channel the first left switched off, and logs as the first did."""
    mod = stap.compile(INJECT, name="inject_twice",
                       args=['kprobe.function("ksys_sync")', "twice", "4", "64"])
    script = r"""
        insmod $DTI_MODDIR/dti.ko
        C=/sys/kernel/debug/dti/twice
        syncs() { n=$(grep -c "ksys_sync" $C/merged 2>/dev/null || true); echo "${n:-0}"; }
    """
    for k in (1, 2):
        script += f"""
        {staprun_cmd(mod, opts=f'-o /out/run{k}.txt')} &
        SP=$!
        n=0
        until [ "$(syncs)" -ge {3 * k} ]; do
            n=$((n + 1)); [ $n -lt 600 ] || {{ echo "run {k} logged nothing" >&2; exit 9; }}
            sync
            sleep 0.1
        done
        kill -INT $SP
        wait $SP || true
        cat $C/level > /out/level{k}
        syncs > /out/count{k}
        """
    res = dti_guest.run(script, smp=2, timeout=600,
                        extra_files=stap.guest_files(mod)).check()
    logged = []
    for k in (1, 2):
        m = re.search(r"dti_inject: (\d+) logged, 0 filtered by level, 0 failed",
                      out(res, f"run{k}.txt"))
        assert m and int(m[1]) > 0, out(res, f"run{k}.txt")
        logged.append(int(m[1]))
        assert out(res, f"level{k}") == "-1\n"
    assert int(out(res, "count2")) == sum(logged)


# (guest setup, the call, the error it must give)
CONTROL_ERRORS = {
    "not_loaded": ("", 'dti_log("cc", 3, "x")', 'dti_log("cc"): dti.ko is not loaded'),
    "no_channel": ("insmod $DTI_MODDIR/dti.ko", 'dti_log("cc", 3, "x")',
                   'dti_log("cc"): no such channel (-2)'),
    "no_buffers": ("ctl register cc 65536 -2",
                   'dti_set_level("cc", 5); dti_log("cc", 3, "x")',
                   'dti_log("cc"): no buffers yet (being created or destroyed) (-19)'),
    "bad_level": ("ctl register cc 65536 5", 'dti_log("cc", 9, "x")',
                  'dti_log("cc"): level 9 is not 0..7'),
    "bad_name": ("insmod $DTI_MODDIR/dti.ko", 'dti_create("bad/name", 64, 3)',
                 'dti_create("bad/name"): bad channel name'),
    "bad_address": ("ctl register cc 65536 5", 'dti_log_mem("cc", 3, 8, 16)', "read fault"),
}

# One module for every case: -G which=CASE picks the call.
CONTROL_ERROR_STP = "global which = \"\"\nprobe begin\n{\n\ttry {\n" + "".join(
    f'\t\tif (which == "{case}") {{ {call}; }}\n'
    for case, (_, call, _) in sorted(CONTROL_ERRORS.items())) + """\
\t\tprintln("NO ERROR")
\t} catch (e) {
\t\tprintf("ERROR %s\\n", e)
\t}
\texit()
}
"""


@pytest.mark.parametrize("case", sorted(CONTROL_ERRORS))
def test_control_tapset_error(dti_guest, stap, case):
    setup, _, want = CONTROL_ERRORS[case]
    mod = stap.compile(CONTROL_ERROR_STP, name="control_error")
    if setup.startswith("ctl "):
        setup = PRELUDE + setup
    res = dti_guest.run(setup + f"\n{staprun_cmd(mod, f'which={case}')} > /out/stap.txt 2>&1\n",
                        smp=2, extra_files=stap.guest_files(mod)).check()
    text = out(res, "stap.txt")
    assert re.search(r"^ERROR .*" + re.escape(want), text, re.M), text


REGISTER_STP = r"""
probe begin { printf("READY\n") }
probe dti.register
{
	printf("REGISTER %s %d %d exists=%d\n", channel, buf_size, level, dti_exists(channel))
}
probe dti.register_failed { printf("FAILED %s %d %s\n", channel, err, errstr) }
probe dti.unregister { printf("UNREGISTER %s exists=%d\n", channel, dti_exists(channel)) }
"""


def test_register_and_failed_registrations(tapset_guest, stap):
    """dti.register fires once the channel can be found by name, a failed
    registration fires dti.register_failed with its error, and
    dti.unregister fires when the name is no longer found."""
    mod = compile_for_test(stap, REGISTER_STP, "register")
    script = PRELUDE + start_stap(mod, "/out/reg.txt", ready="READY") + """
        ctl register rg 65536 5
        echo "$(try register rg 65536 5)" > /out/dup
        echo "$(try register bad*name 65536 5)" > /out/bad
        ctl unregister rg
    """ + STOP
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    text = out(res, "reg.txt")
    assert "REGISTER rg 65536 5 exists=1\n" in text, text
    assert "FAILED rg -17 EEXIST\n" in text, text
    assert "FAILED bad*name -22 EINVAL\n" in text, text
    assert "UNREGISTER rg exists=0\n" in text, text


LATE_STP = r"""
probe begin { printf("READY\n") }
probe dti.record { printf("RECORD %s\n", channel) }
probe timer.ms(100)
{
	try { if (dti_log("late", 3, "from stap")) println("LOGGED") }
	catch (e) { printf("ERROR %s\n", e) }
}
"""


def test_script_started_before_dti_ko(dti_guest, stap):
    """A script started before dti.ko is loaded runs; its control calls
    fail with "dti.ko is not loaded" until dti.ko is loaded and work after,
    and its dti.record sees the driver's records (not the script's own,
    logged from a probe handler: see dti.stp)."""
    mod = stap.compile(LATE_STP, name="late")
    script = f"""
        {staprun_cmd(mod, opts='-o /out/late.txt')} &
        SP=$!
        n=0
        until grep -q "not loaded" /out/late.txt 2>/dev/null; do
            n=$((n + 1)); [ $n -lt 600 ] || {{ echo "stap did not start" >&2; exit 9; }}
            sleep 0.1
        done
    """ + PRELUDE + """
        ctl register late 65536 5
        n=0
        until grep -q "^LOGGED" /out/late.txt; do
            n=$((n + 1)); [ $n -lt 100 ] || { echo "never logged" >&2; break; }
            sleep 0.1
        done
        ctl printk late 3 5 0 process driver
        sleep 1
        kill -INT $SP
        wait $SP || true
        cat $D/late/merged > /out/merged
    """
    res = dti_guest.run(script, smp=2, timeout=600,
                        extra_files=stap.guest_files(mod)).check()
    text = out(res, "late.txt")
    assert "ERROR dti_log(\"late\"): dti.ko is not loaded" in text
    assert "LOGGED" in text
    merged = out(res, "merged").splitlines()
    assert "from stap" in merged and "driver 0" in merged
    assert text.count("RECORD late\n") >= 5, text
