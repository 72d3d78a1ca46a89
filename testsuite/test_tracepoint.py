"""The dti:dti_record tracepoint (issue 23): ftrace, triggers and perf see
DTI's records without SystemTap.

* ftrace, with a filter on the channel name: every record the channel
  stored, from both CPUs, in process, softirq, hardirq and NMI context,
  text, binary (longer than the event's payload bound), reserved,
  replayed (logged before the buffers existed) and user-space markers,
  appears exactly once in the trace with its cpu, seq, level, flags,
  length and payload; records of another channel and records the level
  filtered out do not appear.
* A `traceoff if level == 1` trigger stops the trace at the level-1
  record; DTI keeps storing.
* `perf record -e dti:dti_record` in the guest records every stored
  record, and `perf script` prints them.

About 20 s per test on the reference host, 40 s for perf.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from dtirec import json_record
from guestlib import PRELUDE, self_nmi_unsupported

TP_PAYLOAD_MAX = 256        # DTI_TP_PAYLOAD_MAX
FLAG_NAMES = {0x01: "text", 0x02: "truncated", 0x04: "reserved", 0x08: "replayed",
              0x40: "typed"}
TRACING = r"""
R=/sys/kernel/tracing
E=$R/events/dti/dti_record
echo 4096 > $R/buffer_size_kb
"""
EVENT_RE = re.compile(r"dti_record: (\S+) cpu=(\d+) log_cpu=(\d+) level=(-?\d+) seq=(\d+) "
                      r"flags=(\S*) caller=(.*?) event=(-?\d+) len=(\d+) ?(.*)$")


def records(path) -> list[dict]:
    return [json_record(line) for line in path.read_text().splitlines()]


def events(text: str) -> list[dict]:
    """The dti_record events of an ftrace `trace` file or `perf script`."""
    out = []
    for line in text.splitlines():
        m = EVENT_RE.search(line)
        if m:
            out.append(dict(channel=m[1], cpu=int(m[2]), log_cpu=int(m[3]), level=int(m[4]),
                            seq=int(m[5]), flags=m[6], caller=m[7], event=int(m[8]),
                            len=int(m[9]), payload=m[10]))
    return out


def flag_names(flags: int) -> str:
    return "|".join(n for bit, n in FLAG_NAMES.items() if flags & bit)


def expected_payload(r: dict) -> str:
    """The payload as the event prints it: text as text, bytes as hex
    (at most TP_PAYLOAD_MAX; compared without the spaces, which the
    kernel's hex printing puts between 16-byte groups unevenly); a
    reserved record's too, as the event comes at its commit."""
    if "text" in r:
        # The event's line ends where a text's final newline is.
        return r["text"][:TP_PAYLOAD_MAX].removesuffix("\n")
    return r["data"][:2 * TP_PAYLOAD_MAX]


def check_every_record_once(evs: list[dict], recs: list[dict], channel: str) -> None:
    """Each record of `recs` (dti read's JSON, whose cpu is the CPU that
    logged the record) is one event of `evs`, matched by the logging CPU,
    seq and whether it was replayed: seq counts per buffer, so (buffer
    CPU, seq) is unique, and the buffer is the logging CPU's but for a
    replayed record (which the CPU that replays the pending store stores,
    beside that CPU's own: "dem 0" replayed into CPU 0's buffer as seq 0
    while "dem 1" is seq 0 of CPU 1's, both logged on CPU 1)."""
    assert recs and evs
    assert {e["channel"] for e in evs} == {channel}
    assert len({(e["cpu"], e["seq"]) for e in evs}) == len(evs), "a record was reported twice"
    assert all(e["cpu"] == e["log_cpu"] or "replayed" in e["flags"] for e in evs)
    by_key = {(e["log_cpu"], e["seq"], "replayed" in e["flags"]): e for e in evs}
    assert len(by_key) == len(evs)

    def key(r: dict) -> tuple:
        return r["cpu"], r["seq"], bool(r["flags"] & 0x08)
    assert set(by_key) == {key(r) for r in recs}
    for r in recs:
        e = by_key[key(r)]
        assert (e["level"], e["flags"]) == (r["level"], flag_names(r["flags"])), (e, r)
        assert e["event"] == (r.get("id") if r["flags"] & 0x40 else -1), (e, r)
        payload_len = len(r["text"].encode()) if "text" in r else len(r["data"]) // 2
        assert e["len"] == payload_len, (e, r)
        payload = e["payload"] if "text" in r else e["payload"].replace(" ", "")
        assert payload == expected_payload(r), (e, r)


def test_ftrace_sees_every_stored_record_once(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    # NMI records only where dti_test can send itself NMIs (x86)
    nmi = self_nmi_unsupported(dti_guest.kernel) is None
    res = dti_guest.run(PRELUDE + TRACING + """
        echo 1 > /sys/module/dti/parameters/probe_stored
        cat $E/format > /out/format
        echo 'channel == "tp" || channel == "h_demand"' > $E/filter
        echo 1 > $E/enable
        # h_demand, on demand: its first records wait for its buffers and
        # are replayed into them.
        ctl hprintk h_demand 3 20 dem
        ctl register_sub tp 65536 8 5 0
        ctl register_sub other 65536 8 7 0
        for cpu in 0 1; do
            ctl printk tp 3 300 $cpu process p$cpu
            ctl printk tp 3 200 $cpu softirq s$cpu
            ctl printk tp 3 200 $cpu hardirq h$cpu
            ctl event tp 4 100 $cpu process 300
            ctl event tp 4 100 $cpu hardirq 16
            ctl reserve tp 4 50 $cpu hardirq 24
            ctl printk tp 6 50 $cpu process filtered
            ctl printk other 3 100 $cpu process o$cpu
        done
        [ "$NMI" = 0 ] || ctl nmi tp 10
        echo "a marker" > $D/tp/marker
        echo 0 > $E/enable
        cat $R/trace > /out/trace
        cat $R/per_cpu/cpu0/stats $R/per_cpu/cpu1/stats > /out/ftstats
        dti read --format json tp > /out/read
        dti read --format json h_demand > /out/read-demand
    """.replace("$NMI", "1" if nmi else "0"), smp=2, timeout=600).check()
    out = res.outdir
    fmt = (out / "format").read_text()
    for field in ("char channel[32];", "u32 cpu;", "u32 log_cpu;", "s32 level;",
                  "u64 seq;", "u32 flags;", "unsigned long caller;", "s32 event_id;",
                  "u32 len;", "__data_loc char[] payload"):
        assert field in fmt, field
    assert re.findall(r"^overrun: (\d+)$", (out / "ftstats").read_text(), re.M) == ["0", "0"]
    recs = records(out / "read")
    kinds = {r["text"].split(" ")[0] if "text" in r else f"bin{len(r['data']) // 2}"
             for r in recs}
    assert {"p0", "p1", "s0", "s1", "h0", "h1", "bin300", "bin16", "bin24"} <= kinds
    assert not nmi or any(r.get("text", "").startswith("nmi free") for r in recs)
    assert any(r.get("text", "").endswith(": a marker") for r in recs)
    assert not any(r.get("text", "").startswith("filtered") for r in recs)
    demand = records(out / "read-demand")
    assert [r["text"] for r in demand] == [f"dem {i}\n" for i in range(20)]
    assert any(r["flags"] & 0x08 for r in demand)
    evs = events((out / "trace").read_text())
    # ftrace names the logging call: dti_test's, for the records it logs
    logged = [e for e in evs if re.match(r"[psh][01] ", e["payload"])]
    assert logged and all(e["caller"].endswith(" [dti_test]") for e in logged), logged[:3]
    check_every_record_once([e for e in evs if e["channel"] == "tp"], recs, "tp")
    check_every_record_once([e for e in evs if e["channel"] == "h_demand"], demand,
                            "h_demand")
    assert {e["channel"] for e in evs} == {"tp", "h_demand"}


def test_traceoff_trigger_on_a_level(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    res = dti_guest.run(PRELUDE + TRACING + """
        ctl register_sub tp 65536 8 7 0
        echo 'traceoff if level == 1' > $E/trigger
        echo 1 > $E/enable
        ctl printk tp 3 50 0 process before
        ctl printk tp 1 1 0 process stop
        ctl printk tp 3 50 0 process after
        cat $R/tracing_on > /out/on
        cat $E/trigger > /out/trigger
        cat $R/trace > /out/trace
        dti read --format json tp > /out/read
    """, smp=2).check()
    out = res.outdir
    assert (out / "on").read_text().strip() == "0"
    assert re.match(r"traceoff:unlimited if level == 1", (out / "trigger").read_text())
    texts = [e["payload"] for e in events((out / "trace").read_text())]
    assert texts == [f"before {i}" for i in range(50)] + ["stop 0"]
    # DTI itself goes on storing.
    assert [r["text"] for r in records(out / "read")] == (
        [f"before {i}\n" for i in range(50)] + ["stop 0\n"] +
        [f"after {i}\n" for i in range(50)])


PERF = shutil.which("perf")


@pytest.mark.skipif(PERF is None, reason="perf not installed (linux-perf)")
def test_perf_records_every_record(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    dti_guest.extra_files[PERF] = "/usr/bin/perf"
    res = dti_guest.run(PRELUDE + """
        ctl register_sub tp 65536 8 7 0
        ctl register_sub other 65536 8 7 0
        perf record -q -N -B -a -e dti:dti_record --filter 'channel == "tp"' \\
            -o /tmp/perf.data -- sh -c "
                echo 'printk tp 3 200 0 process a' > $T
                echo 'printk tp 3 200 1 hardirq b' > $T
                echo 'event tp 5 50 1 softirq 40' > $T
                echo 'printk other 3 50 0 process o' > $T
                echo 'from perf' > $D/tp/marker" 2> /out/perf.err ||
            echo "perf record: exit $?" >> /out/perf.err
        perf script -i /tmp/perf.data > /out/perf 2>> /out/perf.err ||
            echo "perf script: exit $?" >> /out/perf.err
        dti read --format json tp > /out/read
    """, smp=2, timeout=600, mem=1024).check()
    out = res.outdir
    assert ": exit" not in (out / "perf.err").read_text(), (out / "perf.err").read_text()
    evs = events((out / "perf").read_text())
    check_every_record_once(evs, records(out / "read"), "tp")
    assert len(evs) == 451


def module_functions(modules, name: str) -> set[str]:
    """The functions of module `name` (nm)."""
    ko = next(m for m in modules if m.name == f"{name}.ko")
    r = subprocess.run(["nm", str(ko)], capture_output=True, text=True, check=True)
    return {f[2] for f in (x.split() for x in r.stdout.splitlines())
            if len(f) == 3 and f[1] in "tT"}


def test_hist_trigger_by_caller_and_event_type(dti_guest, modules):
    """An ftrace histogram keyed by the logging call and the event type:
    every key a function of dti_test, the counts those it logged."""
    res = dti_guest.run(PRELUDE + TRACING + """
        ctl register_sub tp 65536 8 7 0
        ctl register_sub tpx 65536 8 7 0
        ctl evreg tp ints
        echo 'hist:keys=caller.sym,event_id:vals=hitcount if channel == "tp"' > $E/trigger
        ctl printk tp 3 30 0 process a
        ctl event tp 4 20 1 process 16
        # evlog's even events are "ints" (registered), its odd ones "mixed" (not)
        ctl evlog tp 6 10 0 process tpx
        cat $E/hist > /out/hist
    """, smp=2).check()
    hist = (res.outdir / "hist").read_text()
    keys = re.findall(r"^\{ caller: \[[0-9a-f]+\] (\S+) \[(\S+)\]\s*, event_id:\s*(-?\d+) \} "
                      r"hitcount:\s*(\d+)$", hist, re.M)
    assert keys, hist
    funcs = module_functions(modules, "dti_test")
    assert all(mod == "dti_test" and sym in funcs for sym, mod, _, _ in keys), (keys, hist)
    by_event: dict[int, int] = {}
    for _, _, ev, n in keys:
        # 6.1's histogram prints a signed key's -1 as 2^64 - 1
        v = int(ev) - (1 << 64) if int(ev) >= 1 << 63 else int(ev)
        by_event[v] = by_event.get(v, 0) + int(n)
    assert by_event == {-1: 50, 1: 5}, hist


BPFTRACE = shutil.which("bpftrace")


@pytest.mark.skipif(BPFTRACE is None, reason="bpftrace not installed")
def test_bpftrace_counts_every_record(dti_guest, dti_tool, kernel, modules):
    """bpftrace with its LLVM (about 200 MB of libraries) in the guest
    image: counts per CPU and level of one channel's records, the
    channel matched by name (bpftrace 0.23 reads __data_loc strings
    wrong; the channel is a fixed array, which every version reads)."""
    config = kernel.config()
    if config is not None and "CONFIG_DEBUG_INFO_BTF=y" not in config:
        # bpftrace then wants the kernel's headers, which the guest lacks
        pytest.skip("the guest kernel has no BTF (CONFIG_DEBUG_INFO_BTF): the debug "
                    "kernel's config does not set it yet")
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    dti_guest.extra_files[BPFTRACE] = "/usr/bin/bpftrace"
    res = dti_guest.run(PRELUDE + """
        ctl register_sub tp 65536 8 7 0
        ctl register_sub other 65536 8 7 0
        printf '%s\n' "echo 'printk tp 3 150 0 process a' > $T" \
            "echo 'printk tp 5 100 1 hardirq b' > $T" \
            "echo 'event tp 6 50 1 softirq 40' > $T" \
            "echo 'printk other 3 50 0 process o' > $T" > /tmp/log.sh
        bpftrace -c 'sh /tmp/log.sh' -e '
            tracepoint:dti:dti_record /args->channel == "tp"/ {
                @records[args->cpu, args->level] = count();
                @callers[ksym(args->caller)] = count();
            }' > /out/bpftrace 2> /out/bpftrace.err || echo "exit $?" >> /out/bpftrace.err
        dti read --format json tp > /out/read
    """, smp=2, timeout=900, mem=2048).check()
    out = res.outdir
    assert "exit" not in (out / "bpftrace.err").read_text(), (out / "bpftrace.err").read_text()
    got = {(int(c), int(lv)): int(n) for c, lv, n in
           re.findall(r"^@records\[(\d+), (\d+)\]: (\d+)$", (out / "bpftrace").read_text(), re.M)}
    want: dict[tuple[int, int], int] = {}
    for r in records(out / "read"):
        want[(r["cpu"], r["level"])] = want.get((r["cpu"], r["level"]), 0) + 1
    assert got == want == {(0, 3): 150, (1, 5): 100, (1, 6): 50}
    # the top callers, by name: dti_test's functions that logged them
    # (keyed by address, named when printed: two call sites of one
    # function are two lines of the same name)
    callers = re.findall(r"^@callers\[(\S+)\]: (\d+)$", (out / "bpftrace").read_text(), re.M)
    assert callers and {f for f, _ in callers} <= module_functions(modules, "dti_test"), callers
    assert sum(int(n) for _, n in callers) == 300, callers
