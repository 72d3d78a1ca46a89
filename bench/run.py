#!/usr/bin/python3
"""`make bench`: DTI's cost per call beside raw relay, ftrace and printk.

Boots the guest kernel (testsuite/harness) --repeat times; each boot loads
dti.ko and the benchmark module (bench/kmod/dti_bench.c) and runs every
case on every CPU once, then the throughput runs.  QEMU's TCG makes
absolute nanoseconds meaningless from one machine to the next, so the
figures that matter are ratios between cases measured in the same boot;
each ratio is reported as its minimum, median and maximum over the boots.

Further boots, each once:
  probe   dti_event 64 B with a SystemTap dti.record probe attached
          (skipped with --no-stap, or if stap is not installed)
  icount  every case under QEMU -icount shift=0, where the guest TSC
          advances one tick per guest instruction: instructions per call
  tracepoint  dti.ko without the dti:dti_record tracepoint (built with
          DTI_NO_TRACEPOINT=y) and the usual one, alternately, running
          the same cases; in the usual one's boots, again with the event
          enabled in ftrace: what the tracepoint costs off and on
  files   a DTI channel flooded in the guest; its per-CPU files are
          decoded on the host with `dti decode` and read with `cat`

With LTTng available (bench/lttngbench.py: lttng-modules built for the
guest kernel), the latency and icount boots also load it and run case
lttng_event64; without it they run without it, and the report says why.

Also a static count, from objdump, of the instructions of the functions on
dti_event's path in dti.ko.

Writes bench/results/bench-<date>.json (every figure and the machine),
bench-<date>.png (gnuplot) and prints a Markdown table; latest.json,
latest.png and latest.md are copies of the newest.

Python 3 standard library only; run with /usr/bin/python3.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "testsuite"))
sys.path.insert(0, str(HERE))

from harness import dump, initramfs, kernels, vm      # noqa: E402
from harness.kernel import find_kernel                # noqa: E402

import lttngbench                                     # noqa: E402
import report                                         # noqa: E402

# Every case of dti_bench.c, in the order they run, with what it measures.
CASES = {
    "dti_event16": "dti_event, 16 B payload",
    "dti_event64": "dti_event, 64 B payload",
    "dti_event256": "dti_event, 256 B payload",
    "dti_persist64": "dti_event, 64 B, persistent channel (DTI's ring writer)",
    "dti_printk": "dti_printk, 3 integers and a short string",
    "dti_typed": "__dti_log_event: the same values packed by an event type of the same template",
    "dti_reserve64": "dti_reserve + fill of 64 B (irqs off around it)",
    "dti_filtered": "dti_event refused by the channel's level",
    "relay16": "raw relay_reserve + memcpy 16 B, irqs off",
    "relay64": "raw relay_reserve + memcpy 64 B, irqs off",
    "relay256": "raw relay_reserve + memcpy 256 B, irqs off",
    "relay64_var": "relay64 with the length a run-time value: memcpy() called",
    "relay64_ts": "relay64 with a CLOCK_MONOTONIC stamp before the payload",
    "trace_array_printk": "ftrace instance, trace_array_printk, same format",
    "trace_event16": "TRACE_EVENT with u8[16] into an ftrace instance",
    "trace_event64": "TRACE_EVENT with u8[64] into an ftrace instance",
    "trace_event256": "TRACE_EVENT with u8[256] into an ftrace instance",
    "printk": "printk (pr_info), console quiet",
    "empty_call": "empty noinline function call",
    "clock_mono": "DTI's timestamp: ktime_get_mono_fast_ns()",
    "clock_local": "ftrace's default clock: trace_clock_local()",
}
# Cases run only where LTTng could be built and loaded (issue 44).
LTTNG_CASES = {
    "lttng_event64": "trace_event64's tracepoint into an LTTng kernel channel "
                     "(overwrite mode), ftrace's event off",
}
# Guest kernel command line additions.  QEMU's TCG runs each vCPU in its
# own host thread, so the kernel's TSC synchronisation check fails and
# timekeeping falls back to the HPET, where every CLOCK_MONOTONIC read is
# an emulated MMIO access costing ~4x a whole raw relay write (the
# clock_mono case shows it).  Production x86 machines keep time with the
# TSC, as ftrace's clock does here in either case; tsc=reliable gives the
# guest the same.  --append "" measures the HPET guest.
DEFAULT_APPEND = "tsc=reliable"
# The persistent region of the dti_persist64 case (issue 21): reserved with
# memmap= in every boot but the dump's, below the end of guest RAM.
PERSIST_REGION = "16M@0x30000000"
PERSIST_MEMMAP = "memmap=16M$0x30000000"

TPUT_CASE = "dti_event64"
# Issue 23: the tracepoint's cost; relay64 does not involve DTI at all.
TP_CASES = ["dti_event64", "dti_printk", "relay64"]
TP_BASE = "relay64"
TP_EVENT = "/sys/kernel/tracing/events/dti/dti_record/enable"
PROBE_CASE = "dti_event64"
FTRACE_INSTANCE = "/sys/kernel/tracing/instances/dti_bench"
FTRACE_BUF_KB = 1024            # the DTI channel's 8 x 128 KiB per CPU
DECODE_FORMATS = ["text", "ts", "hex", "json", "raw"]
# Issue 18's goals: dti decode's throughput as a fraction of cat's.
DECODE_GOALS = {"raw": 0.7, "text": 0.5, "ts": 0.2, "json": 0.2, "hex": 0.1}
DUMP_GOAL = 0.5                 # dti dump of an ELF vmcore, of cat's throughput (issue 19)
DUMP_MEM = 1024                 # MiB of guest RAM: a 1 GiB ELF dump
DUMP_REPS = 5                   # runs of cat and dti dump, best taken

# Counts: (batches, calls per batch).  --tiny is for the test suite.
DEFAULTS = dict(batches=1000, calls=1000, repeat=5, fill_kb=16384,
                icount_batches=11, icount_calls=1000, host_reps=15, tp_pairs=3)
TINY = dict(batches=5, calls=100, repeat=1, fill_kb=512,
            icount_batches=3, icount_calls=100, host_reps=1, tp_pairs=1)


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- build

def make(path: Path, *targets: str, kernel=None, root: Path | None = None) -> None:
    """make in `path`; for a kernel's modules through the harness, which
    builds in the kernel's chroot where it has one (harness/kernels.py),
    with `root`, the tree around `path`, mounted there."""
    jobs = f"-j{os.cpu_count() or 1}"
    if kernel is None:
        cmd = ["make", "-C", str(path), jobs, *targets]
        ctx = contextlib.nullcontext()
    else:
        cmd = kernels.make_command(kernel, path, jobs, *targets)
        ctx = kernels.build_context(kernel, root or path)
    with ctx:
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n"
                 + "\n".join((r.stdout + r.stderr).splitlines()[-40:]))


# Build products and their output that a snapshot of the sources leaves out.
SNAPSHOT_IGNORE = shutil.ignore_patterns(
    "*.o", "*.ko", "*.mod", "*.mod.c", "*.cmd", ".*.cmd", "*.a", "Module.symvers",
    "modules.order", ".*.d", "build", "results", "__pycache__", ".lint.log")


def build(kernel, work: Path) -> dict[str, Path]:
    """Build dti.ko, dti_bench.ko and the dti command from a copy of the
    sources in the run's directory (same layout, so the relative paths of
    the Makefiles hold): the sources may change while the boots run, and
    the stap module must match the dti.ko the guest loads.  The work
    tree's own build products are left alone."""
    src = work / "src"
    for d in ("kmod", "runtime", "bench/kmod", "bench/lttng"):
        shutil.copytree(REPO / d, src / d, ignore=SNAPSHOT_IGNORE)
    # The same dti.ko without dti:dti_record, under the same name.
    shutil.copytree(REPO / "kmod", src / "kmod-notp", ignore=SNAPSHOT_IGNORE)
    make(src / "kmod", kernel=kernel, root=src)
    make(src / "kmod-notp", "DTI_NO_TRACEPOINT=y", kernel=kernel, root=src)
    make(src / "bench" / "kmod", kernel=kernel, root=src)
    make(src / "runtime", "build/dti")
    files = {"dti.ko": src / "kmod" / "dti.ko",
             "dti-notp.ko": src / "kmod-notp" / "dti.ko",
             "dti_bench.ko": src / "bench" / "kmod" / "dti_bench.ko",
             "dti": src / "runtime" / "build" / "dti"}
    try:
        files["lttng"] = lttngbench.build(kernel, src, work)
    except lttngbench.Unavailable as e:
        files["lttng_skipped"] = str(e)
    return files


# ---------------------------------------------------------------- guest side

GUEST_SETUP = f"""
insmod $DTI_MODDIR/dti.ko ${{PERSIST:-}}
insmod $DTI_MODDIR/dti_bench.ko
# Console quiet: only messages more urgent than level 1 reach the serial
# console; printk still stores every record in the log buffer.
echo "1 4 1 7" > /proc/sys/kernel/printk
I={FTRACE_INSTANCE}
echo {FTRACE_BUF_KB} > $I/buffer_size_kb
C=/sys/kernel/debug/dti_bench/ctl
# bench CMD...: run a dti_bench command, print its result as a BENCH line
bench() {{
    echo "$*" > $C || {{ echo "BENCH error cmd=$1_$2 $(cat $C)"; return 0; }}
    echo "BENCH $(cat $C)"
}}
# ftstored CPU: events the ftrace instance took on CPU (kept + overwritten)
ftstored() {{
    awk '/^entries:/ {{ e = $2 }} /^overrun:/ {{ o = $2 }} END {{ print e + o }}' \\
        $I/per_cpu/cpu$1/stats
}}
"""


def case_commands(cases, cpus: int, batches: int, calls: int) -> str:
    """Guest shell: every case on every CPU.  TRACE_EVENT cases are checked
    through the instance's counters, which the module cannot read; LTTng
    cases through the session's buffers (lttngbench.stored()), and the
    instance must then have recorded nothing."""
    sh = []
    for case in cases:
        for cpu in range(cpus):
            cmd = f"bench run {case} {cpu} {batches} {calls}"
            if case in LTTNG_CASES:
                sh.append(f"b=$(ftstored {cpu}); lt {case} {cpu} {batches} {calls}; "
                          f'a=$(ftstored {cpu}); echo "FTRACE_OFF case={case} cpu={cpu} '
                          f'stored=$((a - b))"')
            elif case.startswith("trace_event"):
                sh.append(f"b=$(ftstored {cpu}); {cmd}; a=$(ftstored {cpu}); "
                          f'echo "FTRACE case={case} cpu={cpu} stored=$((a - b))"')
            else:
                sh.append(cmd)
    return "\n".join(sh) + "\n"


def parse_lines(stdout: str, tag: str) -> list[dict]:
    """`TAG key=value ...` lines of the guest's output as dicts."""
    out = []
    for line in stdout.splitlines():
        if not line.startswith(tag + " "):
            continue
        d = {}
        for k, v in re.findall(r"(\w+)=(\S+)", line):
            d[k] = int(v) if re.fullmatch(r"-?\d+", v) else v
        out.append(d)
    return out


def case_results(stdout: str) -> dict[str, dict[int, dict]]:
    """{case: {cpu: figures}} from a boot's BENCH and FTRACE lines, with
    the stored count checked: a case that did not store every record
    measured an error path, and the run fails."""
    res: dict[str, dict[int, dict]] = {}
    errors = [d for d in parse_lines(stdout, "BENCH") if "error" in d]
    if errors:
        raise RuntimeError(f"dti_bench commands failed: {errors}")
    for d in parse_lines(stdout, "BENCH"):
        if "cpu" in d:
            res.setdefault(d["case"], {})[d["cpu"]] = d
    for d in parse_lines(stdout, "FTRACE"):
        # The instance also counted the module's untimed warm-up batch.
        run = res[d["case"]][d["cpu"]]
        run["stored"] = d["stored"] - run["calls"]
    for d in parse_lines(stdout, "FTRACE_OFF"):
        if d["stored"]:
            raise RuntimeError(f"{d['case']} on cpu{d['cpu']}: the ftrace instance "
                               f"recorded {d['stored']} events; only LTTng should have")
    lttng = parse_lines(stdout, "LTTNG")
    for case in set(res) & set(LTTNG_CASES):
        for cpu, run in res[case].items():
            # The session also recorded the warm-up batch.
            st, fig = lttngbench.stored(lttng, case, cpu,
                                        (run["batches"] + 1) * run["calls"])
            run.update(fig, stored=st - run["calls"])
    for case, cpus in res.items():
        for cpu, d in cpus.items():
            if d["stored"] != d["expected"]:
                raise RuntimeError(f"{case} on cpu{cpu}: {d['stored']} of "
                                   f"{d['expected']} records stored")
            d["median_ns"] = d["median_milli"] / 1000
            d["p99_ns"] = d["p99_milli"] / 1000
    return res


def phase_results(stdout: str, what: str) -> dict[str, list[dict]]:
    """{phase: [BENCH figures]} of a boot whose script echoes "PHASE name"
    before each phase's runs; raises if a run did not store every record."""
    phases: dict[str, list[dict]] = {}
    phase = None
    for line in stdout.splitlines():
        if line.startswith("PHASE "):
            phase = line.split()[1]
        elif line.startswith("BENCH ") and phase:
            d = parse_lines(line, "BENCH")[0]
            if d.get("stored") != d.get("expected"):
                raise RuntimeError(f"{what} run stored {d.get('stored')} records "
                                   f"of {d.get('expected')}")
            d["median_ns"] = d["median_milli"] / 1000
            d["p99_ns"] = d["p99_milli"] / 1000
            phases.setdefault(phase, []).append(d)
    return phases


def boot(name: str, script: str, files: dict[str, Path], args, *, smp=None,
         extra_files=None, timeout=None, qemu=None, tcg_single=False,
         lttng=False) -> vm.Result:
    """One guest boot running `script` after GUEST_SETUP; raises unless it
    exited 0.  `qemu` replaces the QEMU binary (the -icount wrapper);
    `tcg_single`: all vCPUs in one host thread (see vm.run()); `lttng`:
    LTTng's modules loaded too, and lttngbench.guest_setup()'s `lt`."""
    run_dir = args.work / "runs" / name
    modules = [files["dti.ko"], files["dti_bench.ko"]]
    extra_files = dict(extra_files or {})
    setup = GUEST_SETUP
    if lttng:
        lt = files["lttng"]
        modules += lt["modules"]
        extra_files[lt["helper"]] = f"/usr/bin/{lttngbench.HELPER}"
        setup += lttngbench.guest_setup(lt)
    old = os.environ.get("DTI_QEMU")
    if qemu:
        os.environ["DTI_QEMU"] = str(qemu)
    try:
        t0 = time.monotonic()
        load0 = os.getloadavg()[0]
        res = vm.run(f"PERSIST=persist={PERSIST_REGION}\n" + setup + script,
                     smp=smp or args.smp, mem=args.mem,
                     timeout=timeout or args.timeout, modules=modules,
                     extra_files=extra_files, kernel=args.kernel,
                     build_dir=args.build_dir, run_dir=run_dir, tcg_single=tcg_single,
                     append=f"{args.append} {PERSIST_MEMMAP}".strip())
    finally:
        if qemu:
            if old is None:
                os.environ.pop("DTI_QEMU", None)
            else:
                os.environ["DTI_QEMU"] = old
    # The host's 1-minute load average before and after: the boot's vCPUs
    # themselves add up to --smp; anything above that is someone else's.
    res.host_load = (load0, os.getloadavg()[0])
    res.check()
    splats = res.splats()
    if splats:
        raise RuntimeError(f"kernel splat in {run_dir}:\n" + "\n".join(splats))
    log(f"{name}: {time.monotonic() - t0:.0f} s")
    return res


def uses_lttng(cases) -> bool:
    return any(c in LTTNG_CASES for c in cases)


def lttng_skipped_banner(reason: str) -> str:
    """What a run without LTTng says, on stderr at its start and end."""
    rule = "!" * 72
    return f"{rule}\nLTTng rows SKIPPED (lttng_event64, the goal dti_event64 / " \
           f"lttng_event64):\n{reason}\n{rule}"


def latency_boot(i: int, files, args) -> dict:
    """One repeat: every case on every CPU, then the throughput runs."""
    b, n = args.batches, args.calls
    script = case_commands(args.cases, args.smp, b, n)
    script += f"bench tput {TPUT_CASE} 1 {b} {n}\n"
    script += f"bench tput {TPUT_CASE} {args.smp} {b} {n}\n"
    script += ('echo "GUEST uname=$(uname -r) clocksource=$(cat '
               '/sys/devices/system/clocksource/clocksource0/current_clocksource)"\n')
    res = boot(f"latency-{i}", script, files, args, lttng=uses_lttng(args.cases))
    tput = {}
    for d in parse_lines(res.stdout, "BENCH"):
        if "writers" in d:
            if d["stored"] != d["expected"]:
                raise RuntimeError(f"throughput run stored {d['stored']} of "
                                   f"{d['expected']}")
            tput[d["writers"]] = d
    guest = parse_lines(res.stdout, "GUEST")
    return {"cases": case_results(res.stdout), "tput": tput,
            "guest_uname": guest[0]["uname"] if guest else None,
            "clocksource": guest[0]["clocksource"] if guest else None,
            "seconds": res.duration, "host_load": res.host_load}


# ---------------------------------------------------------------- probe effect

PROBE_STP = """
global n, warm
probe begin { printf("READY\\n") }
probe dti.record { n++ }
probe timer.ms(100) { if (n && !warm) { warm = 1; printf("WARM\\n") } }
probe end { printf("RECORDS %d\\n", n) }
"""


def probe_boot(files, args) -> dict | None:
    """dti_event 64 B without, with, and again without a dti.record probe."""
    if args.no_stap or not shutil.which("stap"):
        return {"skipped": "no stap (--no-stap, or stap not installed)"}
    from harness.stap import Stap
    from guestlib import STOP, start_stap
    stap = Stap(args.kernel, args.build_dir, files["dti.ko"])
    # The probe costs as much as the call it watches, on purpose: stap's
    # overload check (probe time over half the CPU's) must not end it.
    mod = stap.compile(PROBE_STP, name="dti_bench_probe", opts=["-DSTP_NO_OVERLOAD"])
    b, n = args.batches, args.calls
    script = ""
    for cpu in range(args.smp):
        script += f'echo "PHASE before"; bench run {PROBE_CASE} {cpu} {b} {n}\n'
    script += start_stap(mod, "/tmp/stap.out", warm=False)
    script += f"""
until grep -q WARM /tmp/stap.out; do
    n=$((n + 1)); [ $n -lt 600 ] || {{ echo "probe never fired" >&2; exit 9; }}
    echo "run {PROBE_CASE} 0 1 10" > $C
    sleep 0.1
done
"""
    for cpu in range(args.smp):
        script += f'echo "PHASE attached"; bench run {PROBE_CASE} {cpu} {b} {n}\n'
    script += STOP + "cat /tmp/stap.out\n"
    for cpu in range(args.smp):
        script += f'echo "PHASE after"; bench run {PROBE_CASE} {cpu} {b} {n}\n'
    # Attaching the probe patches the write path (a static key, a kprobe)
    # while bench runs go on: QEMU's multi-threaded TCG can then run a
    # stale translation of the patched code (see vm.run()'s tcg_single;
    # seen here as a call to 0 from dti_event_raw()).
    res = boot("probe", script, files, args, extra_files=stap.guest_files(mod),
               tcg_single=True)
    phases = phase_results(res.stdout, "probe")
    m = re.search(r"^RECORDS (\d+)", res.stdout, re.M)
    return {"phases": phases, "probe_records": int(m.group(1)) if m else None,
            "script": PROBE_STP.strip(), "stap_module": mod.name}


# ---------------------------------------------------------------- tracepoint

def phase_commands(phase: str, cases, cpus: int, batches: int, calls: int) -> str:
    return "".join(f'echo "PHASE {phase}"; bench run {case} {cpu} {batches} {calls}\n'
                   for case in cases for cpu in range(cpus))


def tracepoint_boots(files, args) -> dict:
    """--tp-pairs pairs of boots: dti.ko built without dti:dti_record
    ("absent"), then the usual dti.ko with it off ("off") and, in the same
    boot, with the event enabled in ftrace's top-level buffer ("on").
    Each boot runs TP_CASES on every CPU.  The boots follow each other on
    the same host, so their ns compare directly; a ratio to a case in the
    same boot would carry that case's noise too.  Enabling the event
    patches the write path between runs, with no run going on."""
    b, n = args.batches, args.calls
    off = phase_commands("off", TP_CASES, args.smp, b, n)
    on = phase_commands("on", TP_CASES, args.smp, b, n)
    boots: dict[str, list[dict]] = {"absent": [], "off": [], "on": []}
    for i in range(1, args.tp_pairs + 1):
        absent = dict(files, **{"dti.ko": files["dti-notp.ko"]})
        res = boot(f"tp-absent-{i}", off.replace("PHASE off", "PHASE absent"), absent, args)
        boots["absent"].append(phase_results(res.stdout, "tracepoint")["absent"])
        res = boot(f"tp-{i}", f"{off}echo 1 > {TP_EVENT}\n{on}echo 0 > {TP_EVENT}\n"
                   "grep -c dti_record: /sys/kernel/tracing/trace | sed 's/^/TPEVENTS /'\n",
                   files, args)
        ph = phase_results(res.stdout, "tracepoint")
        boots["off"].append(ph["off"])
        boots["on"].append(ph["on"])
        if not re.search(r"^TPEVENTS [1-9]", res.stdout, re.M):
            raise RuntimeError("the dti_record event saw no record while enabled")

    return {"method": "ns per call, the median of each CPU's batches, in boots that "
                      "alternate between a dti.ko without the tracepoint and the usual one "
                      f"({TP_BASE}, which does not involve DTI, shows the boots' own noise)",
            "boots": boots}


# ---------------------------------------------------------------- icount

def icount_boot(files, args, name: str = "icount", cases=None,
                setup: str = "") -> dict | None:
    """Every case (or `cases`) on CPU 0 under -icount shift=0, timed with
    the TSC: one tick per guest instruction, so the figure is instructions
    per call.  `setup`: guest shell run before the cases.  One CPU:
    QEMU's icount makes TCG single-threaded, and a 2-CPU guest did not
    come up under it here."""
    if args.no_icount:
        return {"skipped": "--no-icount"}
    script = "bench clock tsc\n" + setup
    script += "dmesg | grep -m1 'tsc: Detected' | sed 's/^/TSC /'\n"
    cases = cases or args.cases
    script += case_commands(cases, 1, args.icount_batches, args.icount_calls)
    res = boot(name, script, files, args, smp=1, qemu=HERE / "qemu-icount",
               lttng=uses_lttng(cases))
    results = case_results(res.stdout)
    tsc = re.search(r"^TSC .*Detected ([\d.]+) MHz", res.stdout, re.M)
    return {"method": "QEMU -icount shift=0: guest TSC ticks = guest instructions",
            "tsc_mhz": float(tsc.group(1)) if tsc else None,
            "cases": {c: {"insns_median": d[0]["median_milli"] / 1000,
                          "insns_min": d[0]["min_milli"] / 1000,
                          "insns_max": d[0]["max_milli"] / 1000}
                      for c, d in results.items()}}


def tracepoint_icount(files, args) -> dict:
    """Instructions per call of TP_CASES with the dti.ko built without the
    tracepoint and with the usual one and the event enabled; the usual
    one's with the event off are the icount boot's."""
    absent = dict(files, **{"dti.ko": files["dti-notp.ko"]})
    return {"absent": icount_boot(absent, args, "icount-tp-absent", TP_CASES),
            "on": icount_boot(files, args, "icount-tp-on", TP_CASES,
                              f"echo 1 > {TP_EVENT}\n")}


# ---------------------------------------------------------------- bytes per record

# "keep": the ring of each (DTI channel and ftrace instance) per CPU, and
# what goes in: an event of three u32 values, a 64-byte binary record.
KEEP_KB = 256
KEEP_SHAPES = {
    "u32x3": "an event of three u32 values (a DTI event type; a TRACE_EVENT of 3 u32 fields)",
    "bin64": "a 64-byte binary record (dti_event(); a TRACE_EVENT with u8[64])",
}
# Bytes per record by each format's layout, for the table beside the measure:
# DTI version 2 from one call site (header 8 + payload, 4-aligned; an
# event's payload has its 2-byte type id); ftrace: 4-byte ring event
# header, 8-byte trace_entry, the fields (4-aligned).
KEEP_LAYOUT = {"u32x3": {"dti": 8 + 2 + 12 + 2, "ftrace": 4 + 8 + 12},
               "bin64": {"dti": 8 + 64, "ftrace": 4 + 8 + 64}}


# The DTI channel's directory in the guest, whose merged view is read back.
KEEP_DIR = "/sys/kernel/debug/dti/dti_bench_k"
# Fills of each shape, and the records each logs more than the one before:
# what a ring keeps depends on how far its last sub-buffer or page is
# written, so the fills stop a prime number of records apart, which
# spreads the stops over any ring's sub-buffer or page.
KEEP_STOPS = 16
KEEP_STOPS_TINY = 2
KEEP_STEP = 997


def ftrace_ring_bytes(kb: int, page: dict) -> int:
    """The bytes of pages in an ftrace per-CPU ring whose buffer_size_kb
    reads `kb`: that file gives the pages' data bytes, floored to KiB
    (less than one page's data), so the pages are its quotient by a page's
    data rounded up.  The spare page ftrace keeps for its reader holds
    none of the records a fill leaves and is not counted."""
    pages = -(-(kb << 10) // page["size"])
    return pages * (page["offset"] + page["size"])


def _spread_of(values: list[int]) -> dict:
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def bytes_boot(files, args) -> dict:
    """History per MiB (issue 44): for each shape, KEEP_KB KiB per CPU of
    DTI and as many pages of ftrace (buffer_size_kb set from
    events/header_page: what a page's data holds) filled on one CPU with
    the same records, several times what fits.  What a ring keeps depends
    on how far its last sub-buffer or page is written when the writes
    stop, so each shape is filled KEEP_STOPS times (--tiny:
    KEEP_STOPS_TINY), stopping at as many points, and the mean kept is
    the figure.  Each fill is counted twice: DTI by the channel's stats
    and by the lines of its merged view, ftrace by its instance's entries
    on that CPU and by the lines of its per-CPU trace file; the two must
    agree."""
    script = f"""
hp=$(grep 'field: char data;' /sys/kernel/tracing/events/header_page)
off=${{hp#*offset:}}; off=${{off%%;*}}; size=${{hp#*size:}}; size=${{size%%;*}}
echo "FTPAGE offset=$off size=$size"
echo $(({KEEP_KB} * 1024 / (off + size) * size / 1024)) > $I/buffer_size_kb
"""
    n_stops = KEEP_STOPS_TINY if args.tiny else KEEP_STOPS
    stops = " ".join(str(j * KEEP_STEP) for j in range(n_stops))
    for shape in KEEP_SHAPES:
        script += f"""
for x in {stops}; do
    echo > $I/trace
    r=$(echo "keep {shape} {KEEP_KB} $x" > $C && cat $C) || r="keep={shape} error"
    echo "KEEP $r"
    cpu=${{r#* cpu=}}; cpu=${{cpu%% *}}
    s=$I/per_cpu/cpu$cpu
    echo "FTRACE entries=$(awk '/^entries:/ {{ print $2 }}' $s/stats)" \
         "kb=$(cat $s/buffer_size_kb) read=$(grep -vc '^#' $s/trace)"
    echo "DTIREAD read=$(grep -c '' {KEEP_DIR}/merged)"
done
"""
    res = boot("bytes", script, files, args)
    page = parse_lines(res.stdout, "FTPAGE")
    if not page or set(page[0]) != {"offset", "size"}:
        raise RuntimeError(f"bytes boot: no ftrace page layout:\n{res.stdout[-2000:]}")
    page = page[0]
    keep, ftrace, dti_read = (parse_lines(res.stdout, t) for t in ("KEEP", "FTRACE", "DTIREAD"))
    if not len(keep) == len(ftrace) == len(dti_read) == n_stops * len(KEEP_SHAPES) \
            or any("dti_kept" not in k for k in keep):
        raise RuntimeError(f"bytes boot: fills missing or failed:\n{res.stdout[-2000:]}")
    ring = KEEP_KB << 10
    out = {"kb": KEEP_KB, "ftrace_page": page, "dti_ring_bytes": ring,
           "stops": n_stops, "shapes": {}}
    for k, f, d in zip(keep, ftrace, dti_read):
        if (k["dti_kept"], f["entries"]) != (d["read"], f["read"]):
            raise RuntimeError(f"bytes boot, {k['keep']}: the readers count other records "
                               f"than the counters: DTI {d['read']} read, "
                               f"{k['dti_kept']} by its stats; ftrace {f['read']} read, "
                               f"{f['entries']} entries")
        fills = out["shapes"].setdefault(k["keep"], {"fills": []})["fills"]
        fills.append({"cpu": k["cpu"], "logged": k["logged"], "dti_kept": k["dti_kept"],
                      "ftrace_kept": f["entries"], "ftrace_buffer_size_kb": f["kb"],
                      "ftrace_ring_bytes": ftrace_ring_bytes(f["kb"], page)})
    for shape, v in out["shapes"].items():
        fills = v["fills"]
        ft_rings = {x["ftrace_ring_bytes"] for x in fills}
        if len(ft_rings) != 1:
            raise RuntimeError(f"bytes boot, {shape}: ftrace's ring changed size: {ft_rings}")
        dti, ft = (_spread_of([x[key] for x in fills]) for key in ("dti_kept", "ftrace_kept"))
        v.update(what=KEEP_SHAPES[shape], dti_kept=dti, ftrace_kept=ft,
                 ftrace_buffer_size_kb=fills[0]["ftrace_buffer_size_kb"],
                 ftrace_ring_bytes=fills[0]["ftrace_ring_bytes"],
                 dti_bytes=ring / dti["mean"],
                 ftrace_bytes=fills[0]["ftrace_ring_bytes"] / ft["mean"],
                 layout=KEEP_LAYOUT[shape])
        v["ratio"] = v["dti_bytes"] / v["ftrace_bytes"]
    return out


# ---------------------------------------------------------------- dti decode vs cat

def files_boot(files, args, what: str = "") -> Path:
    """Flood channel dti_bench_big in the guest (every CPU wraps its ring
    once) and bring its per-CPU trace files back; returns their dir.
    `what` "text": small text records alone (issue 44's input)."""
    script = f"""
bench fill {args.fill_kb} {what}
mkdir -p /out/big
for f in /sys/kernel/debug/dti/dti_bench_big/trace*; do cat $f > /out/big/${{f##*/}}; done
cat /sys/kernel/debug/dti/dti_bench_big/stats > /out/big/stats
cat /sys/kernel/debug/dti/dti_bench_big/info > /out/big/info
"""
    res = boot(f"files{what}", script, files, args)
    big = res.outdir / "big"
    if not list(big.glob("trace*")):
        raise RuntimeError("no trace files came back from the guest")
    return big


def time_cmd(cmd: list[str], reps: int) -> float:
    """Best wall time of `cmd` over `reps` runs, in seconds, stdout to
    /dev/null: on a shared host the best run is the one least disturbed."""
    times = []
    with open(os.devnull, "wb") as null:
        for _ in range(reps):
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=null, stderr=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - t0)
    return min(times)


# Issue 44's goals on small text records (cat's time over dti's)
SMALL_GOALS = {"raw": 0.7, "text": 0.5, "json": 0.25}


def decode_bench(big: Path, dti: Path, reps: int) -> dict:
    traces = sorted(str(p) for p in big.glob("trace[0-9]*"))
    size = sum(os.path.getsize(p) for p in traces)
    mb = size / 1e6
    records = int(subprocess.run([str(dti), "decode", "-q", "-F", "ts", str(big)],
                                 capture_output=True, check=True).stdout.count(b"\n"))
    out = {"files": len(traces), "bytes": size, "reps": reps, "records": records,
           "formats": {}}
    cat_times = []
    for fmt in DECODE_FORMATS:
        # cat is timed again beside each format, so that both see the
        # same moment of the host's load; the ratio uses that pair.
        cat_s = time_cmd(["cat", *traces], reps)
        cat_times.append(cat_s)
        s = time_cmd([str(dti), "decode", "-q", "-F", fmt, str(big)], reps)
        r = subprocess.run([str(dti), "decode", "-q", "-F", fmt, str(big)],
                           capture_output=True)
        ratio = cat_s / s
        out["formats"][fmt] = {"ms": s * 1e3, "mb_per_s": mb / s, "cat_ms": cat_s * 1e3,
                               "of_cat": ratio, "goal": DECODE_GOALS[fmt],
                               "holds": ratio >= DECODE_GOALS[fmt],
                               "records_per_s": records / s, "ns_per_record": s * 1e9 / records,
                               "output_bytes": len(r.stdout)}
    cat_s = min(cat_times)
    out["cat"] = {"ms": cat_s * 1e3, "mb_per_s": mb / cat_s}
    return out


# ---------------------------------------------------------------- dti dump vs cat

def dump_boot(files, args) -> Path:
    """Fill the bench channels of a DUMP_MEM guest, crash it and have
    QEMU write an ELF dump; returns its path."""
    res = dump.qemu_dump(GUEST_SETUP + f"bench fill {args.fill_kb}\n", mem=DUMP_MEM,
                         smp=args.smp, modules=[files["dti.ko"], files["dti_bench.ko"]],
                         kernel=args.kernel, build_dir=args.build_dir,
                         run_dir=args.work / "runs" / "dump", formats=("elf",),
                         append=args.append)
    return res.files["elf"]


def dump_bench(vmcore: Path, dti: Path, reps: int) -> dict:
    """`dti dump` (every channel, text) against `cat` of the same ELF
    dump, page cache warm."""
    size = vmcore.stat().st_size
    mb = size / 1e6
    cat_s = time_cmd(["cat", str(vmcore)], reps)
    s = time_cmd([str(dti), "dump", str(vmcore)], reps)
    r = subprocess.run([str(dti), "dump", "--list", str(vmcore)], capture_output=True,
                       text=True)
    ratio = cat_s / s
    return {"bytes": size, "reps": reps, "ms": s * 1e3, "mb_per_s": mb / s,
            "cat_ms": cat_s * 1e3, "cat_mb_per_s": mb / cat_s, "of_cat": ratio,
            "goal": DUMP_GOAL, "holds": ratio >= DUMP_GOAL, "channels": r.stdout}


# ---------------------------------------------------------------- static count

DTI_PATH = ["dti_event_raw", "dti_write_record", "dti_meta_init", "dti_write",
            "dti_write_slow", "dti_store", "dti_fill_record", "dti_write_result",
            "dti_probe_stored", "dti_lose"]


def disassemble(ko: Path) -> dict[str, dict]:
    """{function: {"section", "start", "end", "insns"}} of a module's code.
    objdump -dr: a module's calls are relocations, so the target of each
    call is taken from the relocation line that follows it and written
    into the instruction as <target>."""
    r = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", str(ko)],
                       capture_output=True, text=True, check=True)
    funcs: dict[str, dict] = {}
    cur = section = None
    for line in r.stdout.splitlines():
        m = re.match(r"^Disassembly of section (\S+):$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            cur = funcs[m.group(2)] = {"section": section, "start": int(m.group(1), 16),
                                       "end": int(m.group(1), 16), "insns": []}
            continue
        if cur is None:
            continue
        rel = re.match(r"^\s+[0-9a-f]+: R_X86_64_\w+\s+([^+\s-]+)", line)
        ins = re.match(r"^\s+([0-9a-f]+):\s+(\S.*)$", line)
        if rel:
            if cur["insns"] and re.match(r"(call|jmp)\b", cur["insns"][-1]):
                cur["insns"][-1] = (re.sub(r"<[^>]*>", "", cur["insns"][-1])
                                    + f" <{rel.group(1)}>")
        elif ins:
            cur["insns"].append(ins.group(2).strip())
            cur["end"] = int(ins.group(1), 16) + 1
    return funcs


def jump_label_sites(ko: Path) -> list[tuple[str, int]]:
    """(section, offset) of every static-key site (struct jump_entry's
    code field: the first of its three relocations, entries 16 bytes)."""
    r = subprocess.run(["objdump", "-r", "-j", "__jump_table", str(ko)],
                       capture_output=True, text=True)
    sites = []
    for off, sec, add in re.findall(r"^([0-9a-f]+) R_X86_64_PC32\s+(\.\S+?)\+0x([0-9a-f]+)",
                                    r.stdout, re.M):
        if int(off, 16) % JUMP_ENTRY_SIZE == 0:
            sites.append((sec, int(add, 16)))
    return sites


JUMP_ENTRY_SIZE = 16            # struct jump_entry on x86-64: s32, s32, long


def batch_function(bench: dict, case: str) -> tuple[dict | None, str | None]:
    """The code of `case`'s batch function in dti_bench.ko, and the name
    of the function it was folded into, if any: gcc's identical code
    folding makes a batch whose code is another's (lttng_event64's is
    trace_event64's) a jump to that one."""
    fn = bench.get(f"bench_batch_{case}")
    body = [i for i in (fn or {}).get("insns", ())
            if not re.match(r"nop|call\s.*<__fentry__>", i)]
    m = len(body) == 1 and re.match(r"jmp\s.*<(bench_batch_\w+)>$", body[0])
    return (bench[m.group(1)], m.group(1)) if m else (fn, None)


def static_count(files, cases) -> dict:
    """Static instruction counts of dti_event's path through dti.ko and of
    each case's loop in dti_bench.ko, the calls each makes, and its
    static-key sites (jump labels: a NOP or jmp patched at run time)."""
    dti = disassemble(files["dti.ko"])
    bench = disassemble(files["dti_bench.ko"])

    def entry(fn, sites):
        if fn is None:
            return {"insns": 0, "calls": [], "static_keys": 0}
        # calls, and tail calls (jmp to another function's start)
        calls = sorted({m for i in fn["insns"]
                        for m in re.findall(r"^(?:call|jmp)\s.*<([^>+]+)>", i)}
                       - {"__x86_return_thunk", "__fentry__"})
        keys = sum(1 for sec, off in sites
                   if sec == fn["section"] and fn["start"] <= off < fn["end"])
        return {"insns": len(fn["insns"]), "calls": calls, "static_keys": keys}

    dsites = jump_label_sites(files["dti.ko"])
    bsites = jump_label_sites(files["dti_bench.ko"])
    path = {f: entry(dti[f], dsites) for f in DTI_PATH if f in dti}
    notp = disassemble(files["dti-notp.ko"])
    nsites = jump_label_sites(files["dti-notp.ko"])
    path_notp = {f: entry(notp[f], nsites) for f in DTI_PATH if f in notp}
    loops = {}
    for c in cases:
        fn, folded = batch_function(bench, c)
        loops[c] = dict(entry(fn, bsites), **({"folded_into": folded} if folded else {}))
    stub_calls = sorted(f"{f} -> {c}" for f in path if not f.startswith("dti_probe_")
                        for c in path[f]["calls"] if c.startswith("dti_probe_"))
    return {"method": "objdump -dr: instructions in each function's body (a static "
                      "count, not the instructions executed; callees outside the "
                      "function not included)",
            "dti_path": path, "dti_path_insns": sum(p["insns"] for p in path.values()),
            "dti_path_without_tracepoint": path_notp,
            "dti_path_insns_without_tracepoint": sum(p["insns"] for p in path_notp.values()),
            "bench_loops": loops, "probe_stub_calls_on_path": stub_calls}


# ---------------------------------------------------------------- machine

def machine(args) -> dict:
    cpu = "?"
    try:
        m = re.search(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
        cpu = m.group(1) if m else platform.processor()
    except OSError:
        pass
    q = subprocess.run([vm.qemu_binary(), "--version"], capture_output=True, text=True)
    return {"date": args.date, "host_cpu": cpu, "host_cores": os.cpu_count(),
            "host_kernel": platform.release(), "guest_kernel": args.kernel.release,
            "qemu": q.stdout.splitlines()[0] if q.stdout else "?",
            "accel": "kvm" if vm.use_kvm() else "tcg", "guest_smp": args.smp,
            "guest_mem_mb": args.mem, "python": platform.python_version()}


# ---------------------------------------------------------------- main

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, help="guest boots for the latency "
                   f"cases (default {DEFAULTS['repeat']})")
    p.add_argument("--smp", type=int, default=2, help="guest CPUs (default 2)")
    p.add_argument("--batches", type=int, help=f"batches per case and CPU "
                   f"(default {DEFAULTS['batches']})")
    p.add_argument("--calls", type=int, help=f"calls per batch "
                   f"(default {DEFAULTS['calls']})")
    p.add_argument("--fill-kb", type=int, help="KiB per CPU of the channel "
                   f"decoded on the host (default {DEFAULTS['fill_kb']})")
    p.add_argument("--tiny", action="store_true",
                   help="tiny counts, one boot of each kind: for the test suite")
    p.add_argument("--no-stap", action="store_true", help="skip the probe effect")
    p.add_argument("--tp-pairs", type=int, help="pairs of boots measuring the "
                   f"tracepoint's cost (default {DEFAULTS['tp_pairs']})")
    p.add_argument("--bytes", action="store_true",
                   help="only the bytes-per-record boot: what DTI and ftrace "
                        "keep of the same records in rings of one size")
    p.add_argument("--insns", action="store_true",
                   help="with --cases: guest instructions per call instead "
                        "(one boot under -icount)")
    p.add_argument("--no-icount", action="store_true",
                   help="skip the instruction count under -icount")
    p.add_argument("--append", default=DEFAULT_APPEND,
                   help=f"guest kernel command line additions (default "
                        f"'{DEFAULT_APPEND}': see DEFAULT_APPEND)")
    p.add_argument("--cases", type=lambda s: s.split(","),
                   help="a quick look while profiling: only these cases "
                        "(comma-separated), latency boots only; prints each "
                        "boot's medians and writes no report")
    p.add_argument("--mem", type=int, default=1024,
                   help="guest MiB (default 1024: the persistent region lies below 784)")
    p.add_argument("--timeout", type=float, default=900.0,
                   help="seconds per guest boot (default 900)")
    p.add_argument("--outdir", type=Path, default=HERE / "results",
                   help="where the JSON, PNG and table go (default bench/results); "
                        "each run's guest directories go in a bench-DATE/ below it")
    args = p.parse_args(argv)
    base = TINY if args.tiny else DEFAULTS
    for k, v in base.items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    unknown = set(args.cases or ()) - set(CASES) - set(LTTNG_CASES)
    if unknown:
        p.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    return args


def quick_look(files, args) -> int:
    """--cases: each boot's median ns per call of the chosen cases, and
    their ratio to the first one."""
    for i in range(1, args.repeat + 1):
        b = latency_boot(i, files, args)
        base = statistics.mean(d["median_ns"] for d in b["cases"][args.cases[0]].values())
        print(f"boot {i} (clocksource {b['clocksource']}):")
        for case in args.cases:
            ns = statistics.mean(d["median_ns"] for d in b["cases"][case].values())
            print(f"  {case:20} {ns:9.1f} ns  {ns / base:6.2f} x {args.cases[0]}")
    return 0


def quick_insns(files, args) -> int:
    """--cases with --insns: one icount boot, the chosen cases' guest
    instructions per call and their ratio to the first one."""
    cases = icount_boot(files, args, "icount-look")["cases"]
    base = cases[args.cases[0]]["insns_median"]
    for case in args.cases:
        n = cases[case]["insns_median"]
        print(f"  {case:20} {n:9.1f} insns  {n / base:6.2f} x {args.cases[0]}")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    now = datetime.datetime.now(datetime.timezone.utc)
    args.date = now.strftime("%Y-%m-%d %H:%M UTC")
    stamp = now.strftime("%Y%m%d-%H%M%S")
    args.outdir = args.outdir.resolve()
    args.work = args.outdir / f"bench-{stamp}"
    args.work.mkdir(parents=True)
    args.kernel = find_kernel()
    args.build_dir = initramfs.default_build_dir()
    log(f"building a copy of the sources for {args.kernel.release} in {args.work}")
    files = build(args.kernel, args.work)
    lt = files.get("lttng")
    if lt:
        log(f"LTTng {lt['version']} from {lt['source']}: case lttng_event64 included")
        lttng = {k: str(v) for k, v in lt.items() if k != "modules"}
        lttng["modules"] = [Path(m).name for m in lt["modules"]]
        lttng["record_min_bytes"] = lttngbench.RECORD_MIN
    else:
        log(lttng_skipped_banner(files["lttng_skipped"]))
        lttng = {"skipped": files["lttng_skipped"]}

    data = {"args": {k: getattr(args, k) for k in
                     ("repeat", "smp", "batches", "calls", "fill_kb", "tiny",
                      "icount_batches", "icount_calls", "host_reps", "tp_pairs")},
            "cases": {**CASES, **(LTTNG_CASES if lt else {})}, "lttng": lttng,
            "machine": machine(args), "boots": []}
    if args.cases:
        if uses_lttng(args.cases) and not lt:
            sys.exit("bench: --cases names an LTTng case and LTTng is not available")
        if args.insns:
            return quick_insns(files, args)
        return quick_look(files, args)
    if args.bytes:
        print(json.dumps(bytes_boot(files, args), indent=1))
        return 0
    args.cases = list(data["cases"])
    for i in range(1, args.repeat + 1):
        log(f"latency boot {i}/{args.repeat}")
        data["boots"].append(latency_boot(i, files, args))
    data["machine"]["guest_uname"] = data["boots"][0]["guest_uname"]
    data["machine"]["clocksource"] = data["boots"][0]["clocksource"]
    data["machine"]["guest_append"] = args.append
    log("probe boot")
    data["probe"] = probe_boot(files, args)
    log("tracepoint boots")
    data["tracepoint"] = tracepoint_boots(files, args)
    log("icount boot")
    data["icount"] = icount_boot(files, args)
    log("icount boots of the tracepoint")
    data["tracepoint"]["icount"] = tracepoint_icount(files, args)
    log("bytes boot")
    data["bytes"] = bytes_boot(files, args)
    log("files boot")
    big = files_boot(files, args)
    log(f"dti decode vs cat on {sum(p.stat().st_size for p in big.glob('trace*')) >> 20} MiB")
    data["decode"] = decode_bench(big, files["dti"], args.host_reps)
    log("files boot of small text records")
    small = files_boot(files, args, "text")
    data["decode_small"] = decode_bench(small, files["dti"], args.host_reps)
    data["decode_small"]["goals"] = SMALL_GOALS
    log("dump boot")
    vmcore = dump_boot(files, args)
    log(f"dti dump vs cat on a {vmcore.stat().st_size >> 20} MiB ELF dump")
    try:
        data["dump"] = dump_bench(vmcore, files["dti"], min(args.host_reps, DUMP_REPS))
    finally:
        vmcore.unlink()
    data["static"] = static_count(files, args.cases)
    data["summary"] = report.summarise(data)

    paths = report.write_all(data, args.outdir, stamp)
    print(report.markdown(data, paths))
    log(f"JSON {paths['json']}, chart {paths['png']}")
    if not lt:
        log(lttng_skipped_banner(files["lttng_skipped"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
