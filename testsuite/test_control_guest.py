"""tapset/dti_control.stp and scripts/dti_inject.stp in a guest kernel.

Scripts are compiled on the host (harness/stap.py) and run with staprun in
the guest.  Injected records are checked in the kernel's own merged views,
among the records of the driver they were injected into.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dtirec import parse_merged_ts, parse_stats
from guestlib import SAMPLE, plain_setup
from harness.stap import staprun_cmd

REPO = Path(__file__).resolve().parent.parent
INJECT = REPO / "scripts" / "dti_inject.stp"


def ko(modules, name):
    return next(m for m in modules if m.name == name)


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def start_inject(mod, out_file: str, poke: str, seen: str) -> str:
    """Run the injection in the background and wait until its probe fires:
    SystemTap arms module probes a moment after the begin probe.  `poke`
    is a shell command that makes the probed code run, `seen` a shell test
    that holds once an injected record arrived."""
    return f"""
{staprun_cmd(mod, opts=f'-o {out_file}')} &
SP=$!
n=0
until grep -q '^dti_inject:' {out_file} 2>/dev/null; do
    n=$((n + 1)); [ $n -lt 600 ] || {{ echo "stap did not start" >&2; exit 9; }}
    kill -0 $SP 2>/dev/null || {{ echo "staprun died" >&2; cat {out_file} >&2; exit 9; }}
    sleep 0.1
done
until {seen}; do
    n=$((n + 1)); [ $n -lt 600 ] || {{ echo "probe never fired" >&2; exit 9; }}
    {poke}
    sleep 0.2
done
"""


STOP = """
kill -INT $SP
wait $SP || true
"""



def test_inject_into_sample_driver(dti_guest, stap, modules):
    sample = ko(modules, "dti_sample.ko")
    mod = stap.compile(INJECT, name="inject_sample",
                       args=[f'module("{sample}").function("ds_finish")', "dti_sample", "6"])
    script = "insmod $DTI_MODDIR/dti.ko\n" + SAMPLE + start_inject(
        mod, "/out/stap.txt", "echo 1 > $S/submit",
        "grep -q '^ds_finish ' $C/merged") + """
        wait_idle
        echo 2000 > $S/rate_hz
        echo 10 > $S/submit
        wait_idle
        echo timeout > $S/fault
        echo 5 > $S/submit
        wait_idle
        cat $C/merged-ts > /out/merged-ts
        cat $S/counters > /out/counters
    """ + STOP
    res = dti_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    assert re.search(r"dti_inject: \d+ logged, 0 filtered by level, 0 failed",
                     out(res, "stap.txt")), out(res, "stap.txt")
    lines = parse_merged_ts(out(res, "merged-ts"))
    assert [x.ts_ns for x in lines] == sorted(x.ts_ns for x in lines)
    injected = [i for i, x in enumerate(lines) if x.text.startswith("ds_finish ")]
    # One injected record per finished request, each just before the
    # transition ds_finish() itself logs, with the arguments it got.
    # (Requests finished while the probe was being armed have none.)
    finishes = [i for i, x in enumerate(lines) if i > injected[0] and
                re.match(r"req \d+: ACTIVE -> (DONE|TIMEOUT)", x.text)]
    assert len(injected) == len(finishes) >= 16
    for i, j in zip(injected, finishes):
        x, y = lines[i], lines[j]
        assert i < j and x.cpu == y.cpu
        assert x.caller.startswith("ds_finish+0x0/") and "[dti_sample]" in x.caller
        assert x.level == 6
        state, result, level = (int(v, 16) for v in re.findall(r"=(0x[0-9a-f]+)", x.text))
        if y.text.endswith("DONE"):
            assert (state, result, level) == (3, 0, 5), x.text
        else:
            assert (state, level) == (4, 3) and result & 0xffffffff == (-110) & 0xffffffff, x.text


@pytest.mark.parametrize("point,want", [
    ("function", ["plain_compute a=0x6 b=0x7", "plain_compute a=0xfffffffffffffffd b=0x5"]),
    ("return", ["plain_compute return=0x2b", "plain_compute return=0xfffffffffffffff2"]),
])
def test_inject_into_a_module_without_dti(dti_guest, stap, modules, point, want):
    plain = ko(modules, "dti_plain.ko")
    probe = f'module("{plain}").function("plain_compute")'
    if point == "return":
        probe += ".return"
    mod = stap.compile(INJECT, name=f"inject_plain_{point}", args=[probe, "inj", "5", "32"])
    script = plain_setup("inj") + start_inject(mod, "/out/stap.txt", "echo '1 1' > $P",
                       "[ -e $C/merged ] && grep -q plain_compute $C/merged") + """
        echo '6 7' > $P
        echo '-3 5' > $P
        cat $C/merged > /out/live
        cat $C/level > /out/level-live
    """ + STOP + """
        cat $C/level > /out/level-after
        cat $C/merged > /out/after
        rmmod dti_plain
        rmmod dti
        ls /sys/kernel/debug > /out/debugfs
    """
    res = dti_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    live = out(res, "live").splitlines()
    assert live[-2:] == want, live
    assert out(res, "level-live") == "5\n"
    # The script's channel outlives it, switched off, records kept.
    assert out(res, "level-after") == "-1\n"
    assert out(res, "after").splitlines()[-2:] == live[-2:]
    # ... until dti.ko is unloaded.
    assert "dti" not in out(res, "debugfs").split()


CONTROL_ERRORS = r"""
probe begin
{
	printf("exists %d\n", dti_exists(@1))
	try { printf("level %d\n", dti_get_level(@1)) } catch (e) { printf("E %s\n", e) }
	try { dti_set_level(@1, 3); println("set ok") } catch (e) { printf("E %s\n", e) }
	try { dti_set_level(@1, 9); println("set9 ok") } catch (e) { printf("E %s\n", e) }
	try { dti_halt(@1); printf("halted %d\n", dti_get_level(@1)) } catch (e) { printf("E %s\n", e) }
	try { dti_resume(@1, 6); printf("resumed %d\n", dti_get_level(@1)) } catch (e) { printf("E %s\n", e) }
	try { dti_resume(@1, -1) } catch (e) { printf("E %s\n", e) }
	try { printf("log %d\n", dti_log(@1, 3, "from begin")) } catch (e) { printf("E %s\n", e) }
	try { printf("log7 %d\n", dti_log(@1, 7, "filtered")) } catch (e) { printf("E %s\n", e) }
	try { dti_log(@1, 8, "bad level") } catch (e) { printf("E %s\n", e) }
	try { dti_log_mem(@1, 3, 0, 8) } catch (e) { printf("E %s\n", e) }
	try { dti_log_mem(@1, 3, 1, 1000) } catch (e) { printf("E %s\n", e) }
	try { dti_create("bad/name", 64, 3) } catch (e) { printf("E %s\n", e) }
	try { dti_create("sized", 0, 3) } catch (e) { printf("E %s\n", e) }
	println("END")
	exit()
}
"""


def test_control_functions_report_errors(dti_guest, stap):
    mod = stap.compile(CONTROL_ERRORS, name="control_errors", args=["cc"])
    run = staprun_cmd(mod)
    script = f"""
        {run} > /out/absent.txt 2>&1
        insmod $DTI_MODDIR/dti.ko
        {run} > /out/nochan.txt 2>&1
        insmod $DTI_MODDIR/dti_test.ko
        echo "register cc 65536 5" > /sys/kernel/debug/dti_test/ctl
        {run} > /out/chan.txt 2>&1
        cat /sys/kernel/debug/dti/cc/level > /out/level
        cat /sys/kernel/debug/dti/cc/merged > /out/merged
    """
    res = dti_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    absent = out(res, "absent.txt").splitlines()
    assert absent[0] == "exists 0" and absent[-1] == "END"
    assert sum("dti.ko is not loaded" in x for x in absent) == 7, absent
    nochan = out(res, "nochan.txt").splitlines()
    assert sum("no such channel" in x for x in nochan) == 6, nochan
    assert any(x.startswith('E dti_create("bad/name"): bad channel name') for x in nochan), nochan
    chan = out(res, "chan.txt").splitlines()
    assert chan[:3] == ["exists 1", "level 5", "set ok"], chan
    assert chan[4:6] == ["halted -1", "resumed 6"], chan
    assert "log 1" in chan and "log7 0" in chan
    errors = [x for x in chan if x.startswith("E ")]
    assert len(errors) == 7, chan
    assert "read fault" in "".join(errors)
    assert 'E dti_log_mem("cc"): length 1000 is not 0..256' in errors, errors
    assert out(res, "level") == "6\n"
    assert out(res, "merged") == "from begin\n"


VERSION_STP = r"""
probe begin
{
	dti_log(@1, 3, "from a tapset of another version")
	println("LOGGED")
	exit()
}
"""
# What dti.ko's version is made to be for the test: not the tapset's.
OTHER_VERSION = 2


def test_tapset_refuses_a_dti_ko_of_another_version(dti_guest, stap, kernel, build_dir):
    """dti.ko built to claim another version of the control interface
    (DTI_CTL_VERSION_BUILT): a script using dti_control.stp stops at its
    start, naming both versions, and writes nothing."""
    from harness import kernels
    src = build_dir / "kmod-other-version"
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(REPO / "kmod", src, ignore=shutil.ignore_patterns(
        "*.o", "*.ko", "*.mod*", ".*.cmd", "Module.symvers", "modules.order", "dti_conf.h",
        ".dti_conf", ".lint*"))
    cmd = kernels.make_command(kernel, src, "-j2", f"KCFLAGS=-DDTI_CTL_VERSION_BUILT={OTHER_VERSION}")
    with kernels.build_context(kernel):
        r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    mod = stap.compile(VERSION_STP, name="control_version", args=["cv"])
    dti_guest.extra_files[str(src / "dti.ko")] = "/lib/dti-other.ko"
    script = f"""
        insmod /lib/dti-other.ko
        insmod $DTI_MODDIR/dti_test.ko
        echo "register cv 65536 5" > /sys/kernel/debug/dti_test/ctl
        {staprun_cmd(mod)} > /out/run.txt 2>&1 && echo 0 > /out/rc || echo $? > /out/rc
        cat /sys/kernel/debug/dti/cv/stats > /out/stats
        cat /sys/kernel/debug/dti/cv/merged > /out/merged
    """
    res = dti_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    text = out(res, "run.txt")
    assert out(res, "rc").strip() != "0", text
    assert f"dti.ko speaks version {OTHER_VERSION} of DTI's control interface, " \
        "this tapset version 1" in text, text
    assert "LOGGED" not in text, text
    assert out(res, "merged") == ""
    st = parse_stats(out(res, "stats"))["total"]
    assert st["written"] == 0 and st["next_seq"] == 0, st
