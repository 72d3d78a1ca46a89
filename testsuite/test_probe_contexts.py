"""dti.ko logging and control from the awkward contexts a SystemTap probe
can fire in (issue 15).

Each test puts a probe where DTI used to deadlock or refuse records and
checks, in the guest, that the script finishes, that the records are in
the channel (merged-ts, `dti read -F json` for the flags) and that every
record is accounted for in the channel's stats:

  next_seq == written + dropped + nested + nmi + lost + unavailable + rejected
              + halted

on every CPU.

* a dti.record handler logging into the same channel while its pending
  records are being replayed (the replay holds the channel's write guard);
* dti_create() from a probe on dti_find() while this CPU holds DTI's
  channel list lock (-EDEADLK instead of a self-deadlock);
* the first record of an on-demand channel logged from the scheduler's
  context-switch tracepoint, with a runqueue lock held (its buffers are
  created through irq_work, not queue_work());
* dti_inject.stp on a statement probe, an int3 kprobe that x86 runs as
  NMI (in_nmi()): records are stored, not refused as "nmi".

Guest runs have a short host timeout: on a kernel with these bugs a test
hangs the guest and is reported as VM-LOST.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dtirec import REC_REPLAYED, accounting_errors, json_record, parse_merged_ts, parse_stats
from guestlib import PRELUDE, WARM, plain_setup, start_stap
from harness.stap import stap_version, staprun_cmd

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
INJECT = REPO / "scripts" / "dti_inject.stp"
PLAIN_SRC = HERE / "modules" / "dti_plain.c"

# Host seconds per guest boot: a normal run needs well under 30, a hang
# costs all of it.
TIMEOUT = 120



def ko(modules, name):
    return next(m for m in modules if m.name == name)


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def stop(tenths: int = 300) -> str:
    """Guest shell: SIGINT the script and wait at most `tenths` tenths of
    a second for staprun to exit; fail the guest script if it does not."""
    return f"""
kill -INT $SP 2>/dev/null || true
n=0
while kill -0 $SP 2>/dev/null; do
    n=$((n + 1)); [ $n -lt {tenths} ] || {{ echo "staprun did not exit after SIGINT" >&2; exit 9; }}
    sleep 0.1
done
wait $SP || echo "staprun exit status $?"
"""


def wait_for(cond: str, what: str, tenths: int = 300, poke: str = ":") -> str:
    """Guest shell: until `cond` holds (at most `tenths` tenths of a second),
    running `poke` between tries."""
    return f"""
n=0
until {cond}; do
    n=$((n + 1)); [ $n -lt {tenths} ] || {{ echo "timed out waiting for {what}" >&2; exit 9; }}
    {poke}
    sleep 0.1
done
"""


def json_records(text: str) -> list[dict]:
    return [json_record(line) for line in text.splitlines() if line.strip()]


# --------------------------------------------------------------------------
# 1. A dti.record handler logs into the channel whose records it is being
#    told about, while they are replayed from the pending store.

REPLAY_NEST = r"""
// @1 channel, $2 most nested dti_log() calls (SystemTap aborts after
// MAXSKIPPED skipped probes; keep well below).
global replayed, direct, nested_ok, nested_err, errors

probe begin
{
	dti_create(@1, 64, 7)
	println("READY")
}

probe dti.record
{
	if (channel == "stapwarm") {
		printf("WARM %d\n", seq)
		next
	}
	if (channel != @1)
		next
	if (!(flags & 0x08)) {
		direct++
		next
	}
	n = ++replayed
	if (n > $2)
		next
	try {
		if (dti_log(@1, 6, sprintf("nested %d in replay of seq %d", n, seq)))
			nested_ok++
	} catch (e) {
		nested_err++
		errors[e]++
	}
}

probe end
{
	printf("SUMMARY replayed=%d direct=%d nested_ok=%d nested_err=%d\n",
	       replayed, direct, nested_ok, nested_err)
	foreach (e in errors)
		printf("ERR %d %s\n", errors[e], e)
}
"""


def test_record_handler_logs_into_same_channel_during_replay(tapset_guest, stap):
    """Records kept in an on-demand channel's pending store are replayed by
    the work item that creates its buffers, with the channel's write guard
    held on that CPU; a dti.record handler that logs into the same channel
    from there must be refused (counted as nested) or stored, not spin on
    the pending store's lock."""
    count = 20
    mod = stap.compile(REPLAY_NEST, name="replay_nest", args=["rep", "40"])
    script = PRELUDE + start_stap(mod, "/out/stap.txt", warm=True) + wait_for(
        "[ -e $D/rep/level ]", "the script's channel") + f"""
        # {count} records from a hard interrupt on CPU 1: the irq_work that
        # queues buffer creation cannot run before the last, so all of them
        # wait in the pending store and are replayed.
        try ctl_log rep 6 {count} 1 hardirq pend > /out/ctl_pend
    """ + wait_for(f"[ -e $D/rep/merged ] && [ $(grep -c '^pend ' $D/rep/merged) -ge {count} ]",
                   "the replay") + """
        ctl ctl_log rep 5 3 0 process direct0
        ctl ctl_log rep 5 3 1 softirq direct1
    """ + stop() + """
        cat $D/rep/merged-ts > /out/merged-ts
        cat $D/rep/stats > /out/stats
        cat $D/rep/info > /out/info
        dti read -F json rep > /out/json
    """
    res = tapset_guest.run(script, smp=2, timeout=TIMEOUT,
                           extra_files=stap.guest_files(mod)).check()

    assert re.match(rf"ret=0 stored={count} errors=0 .*cpu=1 ctx=hardirq ctx_ok=1",
                    out(res, "ctl_pend")), out(res, "ctl_pend")
    assert f"pending_replayed: {count}" in out(res, "info"), out(res, "info")
    assert "pending_lost: 0" in out(res, "info")

    stap_out = out(res, "stap.txt")
    m = re.search(r"^SUMMARY replayed=(\d+) direct=(\d+) nested_ok=(\d+) nested_err=(\d+)$",
                  stap_out, re.M)
    assert m, stap_out
    replayed, direct, nested_ok, nested_err = map(int, m.groups())
    assert replayed == count and direct == 6, stap_out
    # One nested call per replayed record, each either stored or refused.
    assert nested_ok + nested_err == count, stap_out
    errors = re.findall(r"^ERR (\d+) (.*)$", stap_out, re.M)
    assert sum(int(n) for n, _ in errors) == nested_err
    for _, e in errors:
        assert "nested inside a write to the same channel (-16)" in e, stap_out

    # The channel: the replayed records in the order they were logged,
    # flagged replayed, logged on CPU 1; then the direct ones.
    lines = parse_merged_ts(out(res, "merged-ts"))
    assert [x.ts_ns for x in lines] == sorted(x.ts_ns for x in lines)
    pend = [x for x in lines if x.text.startswith("pend ")]
    assert [x.text for x in pend] == [f"pend {i}" for i in range(count)]
    assert all(x.cpu == 1 for x in pend)
    # Replayed into the replaying CPU's buffer; each nested call after a
    # replayed record, stored or refused, took the next sequence number.
    assert [x.seq for x in pend] == [2 * i for i in range(count)]
    recs = json_records(out(res, "json"))
    assert [r["text"].rstrip("\n") for r in recs if r["text"].startswith("pend ")] == \
        [f"pend {i}" for i in range(count)]
    for r in recs:
        replay_flag = bool(r["flags"] & REC_REPLAYED)
        assert replay_flag == r["text"].startswith("pend "), r
    assert sorted(x.text for x in lines if x.text.startswith("direct")) == \
        sorted([f"direct0 {i}" for i in range(3)] + [f"direct1 {i}" for i in range(3)])
    nested_stored = [x for x in lines if x.text.startswith("nested ")]
    assert len(nested_stored) == nested_ok

    # Every nested call is in the stats: stored, or refused as nested.
    st = parse_stats(out(res, "stats"))
    assert not accounting_errors(st)
    tot = st["total"]
    assert tot["written"] == count + 6 + nested_ok
    assert tot["nested"] + tot["nmi"] == nested_err
    assert tot["lost"] == tot["unavailable"] == tot["rejected"] == tot["dropped"] == 0


# --------------------------------------------------------------------------
# 2. dti_create() from a probe on dti_find(), which runs with DTI's channel
#    list lock held (dti_ctl_create() -> adopt, dti_add_channel()).

CREATE_IN_FIND = r"""
// $1: most dti_create() calls from the probe.
global hits, calls, made, made_n, errors

probe begin { println("READY") }

probe module("dti").function("dti_find")
{
	hits++
	if (calls >= $1)
		next
	n = ++calls
	name = sprintf("fromprobe%d", n)
	try {
		dti_create(name, 16, 5)
		made[n] = name
		made_n++
	} catch (e) {
		errors[e]++
	}
}

probe end
{
	printf("SUMMARY hits=%d calls=%d made=%d\n", hits, calls, made_n)
	foreach (n in made+)
		printf("MADE %s\n", made[n])
	foreach (e in errors)
		printf("ERR %d %s\n", errors[e], e)
}
"""


def test_create_from_probe_under_list_lock(tapset_guest, stap):
    """dti_find() is called with dti_list_lock held by dti_ctl_create()
    (taking over a released channel) and dti_add_channel(); a probe there
    that calls dti_create() must fail with -EDEADLK instead of spinning
    on the lock its own CPU holds.  The registrations the probe fired in
    go through; channels the probe did create (where it fired outside the
    lock) are real."""
    budget = 20
    mod = stap.compile(CREATE_IN_FIND, name="create_in_find", opts=["-E", WARM],
                       args=[str(budget)])
    script = PRELUDE + start_stap(mod, "/out/stap.txt", warm=True) + """
        # dti_ctl_create() in a kworker on each CPU: it looks the name up
        # under the list lock (out-of-line dti_find(), an ftrace kprobe),
        # then adds the channel (dti_find() inlined, an int3 kprobe).
        try ctl_create trig0 3 0 process 65536 > /out/trig0
        try ctl_create trig1 3 1 process 65536 > /out/trig1
        # A registration from this shell: dti_find() inlined, twice.
        try register trigreg 65536 3 > /out/trigreg
        ctl ctl_log trig0 3 1 -1 process after-trig0
    """ + wait_for("[ -e $D/trig0/merged ] && [ -e $D/trig1/level ]",
                   "the triggering channels") + """
        cat /sys/kernel/debug/kprobes/list > /out/kprobes
    """ + stop() + """
        ls $D > /out/ls
        cat $D/trig0/merged > /out/trig0-merged
        for c in $(ls $D); do
            if [ -e $D/$c/stats ]; then cat $D/$c/stats > /out/stats-$c; fi
        done
    """
    res = tapset_guest.run(script, smp=2, timeout=TIMEOUT,
                           extra_files=stap.guest_files(mod)).check()

    # The registrations the probe fired in succeeded.
    for f in ("trig0", "trig1", "trigreg"):
        assert out(res, f).startswith("ret=0"), (f, out(res, f))
    assert "stored=1 errors=0" in out(res, "trig0")
    assert "stored=1 errors=0" in out(res, "trig1")
    assert out(res, "trig0-merged") == "after-trig0 0\n"
    listed = out(res, "ls").split()
    assert {"trig0", "trig1", "trigreg"} <= set(listed), listed

    stap_out = out(res, "stap.txt")
    m = re.search(r"^SUMMARY hits=(\d+) calls=(\d+) made=(\d+)$", stap_out, re.M)
    assert m, stap_out
    hits, calls, made_n = map(int, m.groups())
    assert 0 < calls <= budget and hits >= calls, stap_out
    made = re.findall(r"^MADE (\S+)$", stap_out, re.M)
    errors = [(int(n), e) for n, e in re.findall(r"^ERR (\d+) (.*)$", stap_out, re.M)]
    assert len(made) == made_n
    assert made_n + sum(n for n, _ in errors) == calls, stap_out
    # Under the list lock: refused.  At the inlined (int3, NMI) sites:
    # refused as NMI.  Nothing else.
    deadlk = [e for _, e in errors
              if e.endswith("refused: called inside DTI's channel list lock (-35)")]
    assert deadlk, stap_out
    for _, e in errors:
        assert (e.endswith("refused: called inside DTI's channel list lock (-35)")
                or e.endswith("refused: NMI context, or nested inside a write to the "
                              "same channel (-16)")), e
    # Whatever the probe created exists.
    for name in made:
        assert name in listed, (name, listed)

    for f in res.outdir.glob("stats-*"):
        assert not accounting_errors(parse_stats(f.read_text()))


# --------------------------------------------------------------------------
# 3. The first record of an on-demand channel comes from the scheduler's
#    context-switch tracepoint, with the runqueue lock held.

SCHED_STAGES = 8

SCHED_LOG = r"""
// @1 channel prefix, $2 records per CPU and stage, $3 stage length in ms.
// Channels @1<0..STAGES-1>, all made in begin; during stage i the probe
// logs into channel i only, so each channel's first record comes from the
// scheduler path at a time its buffers' work item is idle, to be woken.
// Stage 0 starts with the probe's first hit.
// Guru mode: time and per-CPU counters in C, so that the handler takes no
// SystemTap global lock on the scheduler path.
%{
#include <linux/percpu.h>
#include <linux/math64.h>
#include <linux/timekeeping.h>
#define DTI_T_STAGES STAGES
struct dti_t_counts {
	long hits[DTI_T_STAGES];
	long fails;
};
static DEFINE_PER_CPU(struct dti_t_counts, dti_t_counts);
static u64 dti_t_start;
%}

// The stage we are in, counted from the first call, or -1 after the last.
function stage:long(ms:long)
%{
	u64 now = ktime_get_mono_fast_ns();
	u64 t0 = READ_ONCE(dti_t_start);
	u64 i;

	if (!t0) {
		t0 = cmpxchg(&dti_t_start, 0, now);
		if (!t0)
			t0 = now;
	}
	i = div64_u64(now - t0, (u64)STAP_ARG_ms * NSEC_PER_MSEC);
	STAP_RETVALUE = i < DTI_T_STAGES ? (long)i : -1;
%}

// Count a hit on this CPU in stage @s: its number if at most @max, else 0.
function take:long(s:long, max:long)
%{
	long n = 0;

	if (STAP_ARG_s >= 0 && STAP_ARG_s < DTI_T_STAGES)
		n = ++this_cpu_ptr(&dti_t_counts)->hits[STAP_ARG_s];
	STAP_RETVALUE = n <= STAP_ARG_max ? n : 0;
%}

function failed:long()
%{
	STAP_RETVALUE = ++this_cpu_ptr(&dti_t_counts)->fails;
%}

function hits:long(cpu:long, s:long)
%{ /* pure */
	STAP_RETVALUE = 0;
	if (STAP_ARG_cpu >= 0 && STAP_ARG_cpu < nr_cpu_ids &&
	    STAP_ARG_s >= 0 && STAP_ARG_s < DTI_T_STAGES)
		STAP_RETVALUE = per_cpu_ptr(&dti_t_counts, STAP_ARG_cpu)->hits[STAP_ARG_s];
%}

function fails:long(cpu:long)
%{ /* pure */
	STAP_RETVALUE = 0;
	if (STAP_ARG_cpu >= 0 && STAP_ARG_cpu < nr_cpu_ids)
		STAP_RETVALUE = per_cpu_ptr(&dti_t_counts, STAP_ARG_cpu)->fails;
%}

probe begin
{
	for (s = 0; s < STAGES; s++)
		dti_create(sprintf("%s%d", @1, s), 16, 7)
	println("READY")
}

probe scheduler.ctxswitch
{
	s = stage($3)
	if (s < 0)
		next
	n = take(s, $2)
	if (!n)
		next
	try {
		dti_log(sprintf("%s%d", @1, s), 6, sprintf("ctxsw cpu%d s%d n%d", cpu(), s, n))
	} catch (e) {
		if (failed() == 1)
			warn(e)
	}
}

probe end
{
	for (c = 0; c < 2; c++) {
		printf("CPU %d fails=%d hits", c, fails(c))
		for (s = 0; s < STAGES; s++)
			printf(" %d", hits(c, s))
		printf("\n")
	}
}
""".replace("STAGES", str(SCHED_STAGES))


def test_log_from_scheduler_path(tapset_guest, stap):
    """dti_log() from sched_switch (a runqueue lock held) as the first
    record of channels made by dti_create(): the record waits in the
    pending store and the buffers are created through irq_work and a work
    item, without waking anything from the scheduler path.  There are
    several channels whose first records come one after another, each once
    the work item of the one before is done, so that each of them has a
    worker to wake."""
    # SystemTap's own probe point, which DTI does not provide: where the
    # SystemTap in use cannot resolve it for this kernel (5.1 on 6.12:
    # "resolution failed in tracepoint builder", and no DWARF to fall
    # back on without the -dbg package), the test cannot run here.
    r = stap.elaborate("probe scheduler.ctxswitch { println(prev_pid) }")
    if r.returncode != 0:
        errors = [ln for ln in r.stderr.splitlines() if "error" in ln]
        pytest.skip(f"{stap_version()}: scheduler.ctxswitch does not resolve for "
                    f"{stap.kernel.release}: {'; '.join(dict.fromkeys(errors))}")
    per_stage, stage_ms = 4, 250
    mod = stap.compile(SCHED_LOG, name="sched_log", opts=["-g"],
                       args=["sched", str(per_stage), str(stage_ms)])
    chans = [f"sched{i}" for i in range(SCHED_STAGES)]
    last = chans[-1]
    # Context switches on both CPUs: a kworker bound to each.
    poke = "try ctl_set nosuch 1 0 process >/dev/null; try ctl_set nosuch 1 1 process >/dev/null"
    script = PRELUDE + start_stap(mod, "/out/stap.txt", warm=False) + wait_for(
        f"[ -e $D/{last}/merged ]", "the last stage's channel", tenths=600, poke=poke) + f"""
        # Let the last stage end.
        for i in {' '.join(str(i) for i in range(stage_ms // 100 + 2))}; do {poke}; sleep 0.1; done
    """ + stop() + f"""
        for c in {' '.join(chans)}; do
            mkdir -p /out/$c
            cat $D/$c/merged-ts > /out/$c/merged-ts
            cat $D/$c/stats > /out/$c/stats
            cat $D/$c/info > /out/$c/info
            dti read -F json $c > /out/$c/json
        done
    """
    res = tapset_guest.run(script, smp=2, timeout=TIMEOUT,
                           extra_files=stap.guest_files(mod)).check()

    stap_out = out(res, "stap.txt")
    hits = {}
    for c in (0, 1):
        m = re.search(rf"^CPU {c} fails=(\d+) hits((?: \d+)+)$", stap_out, re.M)
        assert m, stap_out
        assert m[1] == "0", stap_out
        hits[c] = [int(h) for h in m[2].split()]

    cpus_seen = set()
    for s, ch in enumerate(chans):
        # Buffers created on demand; every record from the probe: per CPU,
        # n1..nK in time order, as many as the probe logged in that stage.
        assert "buffers: allocated" in out(res, ch, "info"), (ch, out(res, ch, "info"))
        lines = parse_merged_ts(out(res, ch, "merged-ts"))
        assert lines, ch
        assert [x.ts_ns for x in lines] == sorted(x.ts_ns for x in lines), ch
        for c in (0, 1):
            got = [x.text for x in lines if x.cpu == c]
            want = min(hits[c][s], per_stage)
            assert got == [f"ctxsw cpu{c} s{s} n{i}" for i in range(1, want + 1)], (ch, got)
            if got:
                cpus_seen.add(c)
        # The first record came before the buffers, and was replayed.
        recs = sorted(json_records(out(res, ch, "json")), key=lambda r: r["ts_ns"])
        assert len(recs) == len(lines)
        assert recs[0]["flags"] & REC_REPLAYED, (ch, recs[0])
        replayed = sum(1 for r in recs if r["flags"] & REC_REPLAYED)
        assert f"pending_replayed: {replayed}\n" in out(res, ch, "info"), out(res, ch, "info")
        assert "pending_lost: 0\n" in out(res, ch, "info")

        st = parse_stats(out(res, ch, "stats"))
        assert not accounting_errors(st)
        assert st["total"]["written"] == st["total"]["next_seq"] == len(lines), (ch, st)
    # Records from both CPUs.
    assert cpus_seen == {0, 1}


# --------------------------------------------------------------------------
# 4. dti_inject.stp on a statement probe: an int3 kprobe, NMI context.

def plain_compute_line() -> int:
    """The line of plain_compute()'s body in dti_plain.c, where its
    parameters a and b are in scope."""
    text = PLAIN_SRC.read_text().splitlines()
    start = next(i for i, line in enumerate(text) if re.match(r"static .*\bplain_compute\(", line))
    for i in range(start + 1, len(text)):
        if re.search(r"\breturn\b.*\ba\b.*\bb\b", text[i]):
            return i + 1
        if text[i].startswith("}"):
            break
    raise AssertionError("no return line in plain_compute()")


def test_inject_on_statement_probe(dti_guest, stap, modules):
    """A statement probe in the middle of a function is an int3 kprobe,
    whose handler x86 runs as NMI.  Records logged from there interrupt no
    DTI writer and are stored with the variables in scope."""
    plain = ko(modules, "dti_plain.ko")
    line = plain_compute_line()
    probe = f'module("{plain}").statement("plain_compute@*dti_plain.c:{line}")'
    mod = stap.compile(INJECT, name="inject_stmt", args=[probe, "stmt", "5", "32"])
    pokes = [(6, 7), (-3, 5), (100, -2), (0, 0)]

    def hexval(v: int) -> str:
        return hex(v & 0xffffffffffffffff)

    want = [f"plain_compute a={hexval(a)} b={hexval(b)}" for a, b in pokes]
    script = r"""
        # Keep the kprobe an int3 one: an optimised (jump) kprobe would not
        # run its handler as NMI.  (staprun switches optimisation off too.)
        echo 0 > /proc/sys/debug/kprobes-optimization
    """ + plain_setup("stmt") + f"""
        {staprun_cmd(mod, opts='-o /out/stap.txt')} &
        SP=$!
    """ + wait_for("grep -q '^dti_inject:' /out/stap.txt 2>/dev/null", "stap to start") \
        + wait_for("[ -e $C/merged ] && grep -q plain_compute $C/merged",
                   "the probe to fire", poke="echo '1 1' > $P") + "".join(
        f"echo '{a} {b}' > $P\n" for a, b in pokes) + """
        cat /sys/kernel/debug/kprobes/list > /out/kprobes
        cat $C/merged-ts > /out/merged-ts
        cat $C/stats > /out/stats
    """ + stop()
    res = dti_guest.run(script, smp=2, timeout=TIMEOUT,
                        extra_files=stap.guest_files(mod)).check()

    lines = parse_merged_ts(out(res, "merged-ts"))
    injected = [x for x in lines if x.text.startswith("plain_compute ")]
    assert [x.text for x in injected[-len(pokes):]] == want, [x.text for x in injected]
    # The warm-up pokes before them: the same function, a=1 b=1.
    assert all(x.text == "plain_compute a=0x1 b=0x1" for x in injected[:-len(pokes)])
    stap_out = out(res, "stap.txt")
    m = re.search(r"dti_inject: (\d+) logged, 0 filtered by level, 0 failed", stap_out)
    assert m, stap_out
    assert int(m[1]) == len(injected) == len(lines), stap_out

    # The probe was an int3 one in the function's body, not at its entry.
    kp = [x for x in out(res, "kprobes").splitlines() if "plain_compute" in x]
    assert len(kp) == 1 and "[FTRACE]" not in kp[0] and "[OPTIMIZED]" not in kp[0], kp
    off = re.search(r"plain_compute\+(0x[0-9a-f]+)", kp[0])
    assert off and int(off[1], 16) > 0, kp
    for x in injected:
        assert x.caller.startswith(f"plain_compute+{off[1]}/") and "[dti_plain]" in x.caller, x

    st = parse_stats(out(res, "stats"))
    assert not accounting_errors(st)
    assert st["total"]["written"] == len(injected)
    assert st["total"]["nmi"] == st["total"]["nested"] == 0
