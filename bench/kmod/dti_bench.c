// SPDX-License-Identifier: GPL-2.0
/*
 * dti_bench - what a DTI call costs, beside the kernel's other ways of
 * recording the same thing, measured in one guest run.
 *
 * Each case is one kind of call with one payload (see bench_cases[]): the
 * DTI calls, and the baselines a driver author would otherwise use (a raw
 * relay channel of the same geometry, an ftrace instance through
 * trace_array_printk() and through a TRACE_EVENT of this module, printk,
 * an empty function call), and LTTng recording the same TRACE_EVENT's
 * tracepoint (lttng_event64: bench/lttng/ attaches LTTng to it; this
 * module only fires it).  A case runs on a CPU in a kthread bound to it:
 * B batches of N calls, each batch timed as a whole, interrupts left on,
 * so a batch that a timer tick hit shows in the tail and not in the median.
 * The result is the median, p99, minimum and maximum over the batches of
 * the time per call, and how many of the calls' records were verifiably
 * stored (a case must never measure an error path).
 *
 * Control file /sys/kernel/debug/dti_bench/ctl; write one command, then
 * read the result:
 *
 *	run CASE CPU BATCHES CALLS	time CASE on CPU
 *	tput CASE WRITERS BATCHES CALLS	CASE on the first WRITERS online CPUs
 *					at once: records per second
 *	fill KB				channel "dti_bench_big" of KB KiB per
 *					CPU, filled on every CPU until it wraps
 *					(files for the host-side reader benchmark)
 *	keep SHAPE KB [EXTRA]		channel "dti_bench_k" of KB KiB per CPU
 *					and the ftrace instance filled with the
 *					same records on one CPU, several times
 *					over and EXTRA more; the channel stays
 *					until the next "keep" for its readers
 *	clock local|tsc			time with local_clock() (ns, default)
 *					or the TSC (under QEMU -icount shift=0
 *					one TSC tick is one guest instruction)
 *	list				the case names
 *
 * Times are reported in thousandths of the clock's unit per call
 * (picoseconds for "local") so that calls under a nanosecond keep their
 * digits.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/dti.h>
#include <linux/err.h>
#include <linux/irqflags.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/relay.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/timex.h>
#include <linux/trace_clock.h>
#include <linux/trace.h>
#include <linux/trace_events.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "dti_bench.h"
#include "dti_compat.h"

#define CREATE_TRACE_POINTS
#include "dti_bench_trace.h"

/* Geometry of the DTI channel and of the raw relay channel: the same. */
#define BENCH_SUBBUF_SIZE	(128U << 10)
#define BENCH_N_SUBBUFS		8

#define BENCH_NAME		"dti_bench"	/* DTI channel, ftrace instance */
#define BENCH_PERSIST_NAME	"dti_bench_p"	/* persistent DTI channel */
#define BENCH_TYPED_NAME	"dti_bench_t"	/* DTI channel with an event type */
#define BENCH_BIG_NAME		"dti_bench_big"	/* channel for "fill" */
#define BENCH_LEVEL		DTI_LEVEL_INFO	/* the channel's level */
#define BENCH_LEVEL_OFF		DTI_LEVEL_DEBUG	/* above it: filtered */

/* The text cases' format: three integers and a short string. */
#define BENCH_FMT		"bench %d %d %d %s\n"
#define BENCH_STR		"short"
/* The event type of the typed case: the same template, values packed */
#define BENCH_EVENT_ID		1

/* Limits on one command, so that no run overflows or hogs the guest. */
#define BENCH_BATCHES_MAX	100000U
#define BENCH_CALLS_MAX		10000000U
#define BENCH_FILL_KB_MAX	(DTI_BUF_SIZE_MAX >> 10)
#define BENCH_CMD_MAX		96
#define BENCH_RESULT_MAX	1024
#define BENCH_LIST_MAX		1024

/* Times per call are kept in thousandths of the clock's unit. */
#define BENCH_MILLI		1000ULL
#define BENCH_PERCENTILE	99
#define BENCH_PERCENT		100

/* "fill": bound on the bytes logged per CPU, in buffer sizes. */
#define BENCH_FILL_LIMIT	2

static u8 bench_payload[DTI_BENCH_LARGE];
static struct dti_info *bench_dti;
/* bench_dti's twin in dti.ko's persistent region; NULL without one */
static struct dti_info *bench_persist;
/* bench_dti's twin with an event type of BENCH_FMT's template */
static struct dti_info *bench_typed;
DEFINE_DTI_EVENT(bench_ev, BENCH_EVENT_ID, "bench", BENCH_FMT);
/* The "keep" command's event of three u32 values, and its channel */
#define BENCH_KEEP_NAME		"dti_bench_k"
#define BENCH_KEEP_SUBBUF	(16U << 10)
#define BENCH_KEEP_EVENT_ID	2
#define BENCH_KEEP_FMT		"a=%u b=%u c=%u"
/* Records "keep" logs: this many times what the smallest record fills */
#define BENCH_KEEP_PASSES	4
#define BENCH_KEEP_MIN_RECORD	16
DEFINE_DTI_EVENT(bench_keep_ev, BENCH_KEEP_EVENT_ID, "u32x3", BENCH_KEEP_FMT);
/* The last "keep" command's channel, left for its readers */
static struct dti_info *bench_keep;
static struct dti_info *bench_big;
static struct rchan *bench_relay;
static struct trace_array *bench_tr;
static struct dentry *bench_dir;
static bool bench_use_tsc;

static DEFINE_MUTEX(bench_lock);	/* one command at a time */
static char bench_result[BENCH_RESULT_MAX];

/**
 * struct bench_start - where throughput writers wait to start together
 * @ready:	writers done with their warm-up batch
 * @go:		set once every writer is ready
 * @wq:		writers wait here for @go, the command for @ready
 *
 * Waiting, not spinning: with voluntary preemption a spinning writer
 * would keep the command's own thread off its CPU for good.
 */
struct bench_start {
	atomic_t ready;
	bool go;
	wait_queue_head_t wq;
};

/**
 * struct bench_run - one case on one CPU, as a kthread runs it
 * @bc:		the case
 * @cpu:	CPU the kthread is bound to
 * @batches:	batches to time
 * @calls:	calls per batch
 * @samples:	per batch, thousandths of a clock unit per call (sorted later)
 * @misses:	calls whose record the case could not store (must stay 0)
 * @before:	the case's DTI counter on @cpu after the warm-up batch
 * @t_start:	clock at the first timed call (for throughput)
 * @t_end:	clock after the last one
 * @start:	throughput runs: the start line all writers wait at, or NULL
 * @done:	completed by the kthread when it has finished
 */
struct bench_run {
	const struct bench_case *bc;
	unsigned int cpu;
	unsigned int batches;
	unsigned int calls;
	u64 *samples;
	u64 misses;
	u64 before;
	u64 t_start;
	u64 t_end;
	struct bench_start *start;
	struct completion done;
};

/*
 * How a case proves that its records were stored:
 * BENCH_CHECK_WRITTEN	the DTI channel's written counter on the CPU
 * BENCH_CHECK_PERSIST	the persistent channel's (the persist case)
 * BENCH_CHECK_TYPED	the typed channel's (the event type case)
 * BENCH_CHECK_FILTERED	its filtered counter (the filtered case)
 * BENCH_CHECK_MISSES	the call's own result (relay_reserve() not NULL,
 *			printk and trace_array_printk() returning > 0)
 * BENCH_CHECK_EXTERNAL	not visible here: the host reads the ftrace
 *			instance's per-CPU entries and overrun counts, or
 *			LTTng's buffer positions
 * BENCH_CHECK_NONE	nothing is stored (the empty call)
 */
enum bench_check {
	BENCH_CHECK_WRITTEN,
	BENCH_CHECK_PERSIST,
	BENCH_CHECK_TYPED,
	BENCH_CHECK_FILTERED,
	BENCH_CHECK_MISSES,
	BENCH_CHECK_EXTERNAL,
	BENCH_CHECK_NONE,
};

/**
 * struct bench_case - one measured call
 * @name:	case name used in commands and results
 * @batch:	runs @calls calls of the case and returns the clock ticks
 *		they took; a function per case so that the call is inlined
 *		in its loop and nothing but the loop is added to it
 * @check:	how stored records are counted
 * @ftrace_off:	an event of this module disabled in the ftrace instance
 *		while the case runs, or NULL: the LTTng case fires
 *		trace_event64's tracepoint with LTTng's probe alone on it
 */
struct bench_case {
	const char *name;
	u64 (*batch)(struct bench_run *run, unsigned int calls);
	enum bench_check check;
	const char *ftrace_off;
};

static u64 bench_now(void)
{
	return bench_use_tsc ? get_cycles() : local_clock();
}

/*
 * The empty call every other case is compared with: not inlined, and the
 * barrier keeps the compiler from proving it does nothing.
 */
static noinline void bench_empty(u64 i)
{
	barrier();
}

/* Keep a value the compiler would otherwise discard, at no cost. */
static __always_inline void bench_sink(u64 v)
{
	OPTIMIZER_HIDE_VAR(v);
}

/* Raw relay as blktrace uses it: reserve and copy, interrupts off. */
static __always_inline void bench_relay_write(struct bench_run *run,
					      size_t len)
{
	unsigned long flags;
	void *p;

	local_irq_save(flags);
	p = relay_reserve(bench_relay, len);
	if (likely(p))
		memcpy(p, bench_payload, len);
	else
		run->misses++;
	local_irq_restore(flags);
}

/*
 * The same with the length hidden from the compiler: memcpy() is then
 * called, as in DTI, whose length is a run-time value, instead of being
 * expanded inline into moves of a known size.
 */
static __always_inline void bench_relay_write_var(struct bench_run *run,
						  size_t len)
{
	OPTIMIZER_HIDE_VAR(len);
	bench_relay_write(run, len);
}

/*
 * The floor of any timestamped record: relay64 with an 8-byte
 * CLOCK_MONOTONIC stamp in front of the payload, the clock DTI uses.
 */
static __always_inline void bench_relay_write_ts(struct bench_run *run,
						 size_t len)
{
	unsigned long flags;
	u64 *p;

	local_irq_save(flags);
	p = relay_reserve(bench_relay, sizeof(*p) + len);
	if (likely(p)) {
		*p = ktime_get_mono_fast_ns();
		memcpy(p + 1, bench_payload, len);
	} else {
		run->misses++;
	}
	local_irq_restore(flags);
}

/* dti_reserve(), a fill of the medium payload and the commit, as its caller must. */
static __always_inline void bench_dti_reserve(struct bench_run *run)
{
	unsigned long flags;
	void *p;

	local_irq_save(flags);
	p = __dti_reserve(bench_dti, BENCH_LEVEL, DTI_BENCH_MEDIUM);
	if (likely(p)) {
		memcpy(p, bench_payload, DTI_BENCH_MEDIUM);
		__dti_commit(bench_dti, p);
	} else
		run->misses++;
	local_irq_restore(flags);
}

/*
 * BENCH_BATCH(name, body) defines bench_batch_<name>(), which times
 * @calls executions of @body; @body sees the call's index as `i` and the
 * run as `run`.  The loop is the same for every case; its own cost is
 * part of every figure, the empty call's included.
 */
#define BENCH_BATCH(name, body)						\
static u64 bench_batch_##name(struct bench_run *run, unsigned int calls) \
{									\
	u64 t0 = bench_now();						\
	unsigned int i;							\
									\
	for (i = 0; i < calls; i++) {					\
		body;							\
	}								\
	return bench_now() - t0;					\
}

/* The three integers of the text cases. */
#define BENCH_ARGS	(int)i, (int)i + 1, (int)run->cpu, BENCH_STR

BENCH_BATCH(dti_event16,
	    __dti_event(bench_dti, BENCH_LEVEL, bench_payload, DTI_BENCH_SMALL))
BENCH_BATCH(dti_event64,
	    __dti_event(bench_dti, BENCH_LEVEL, bench_payload, DTI_BENCH_MEDIUM))
BENCH_BATCH(dti_event256,
	    __dti_event(bench_dti, BENCH_LEVEL, bench_payload, DTI_BENCH_LARGE))
BENCH_BATCH(dti_persist64,
	    __dti_event(bench_persist, BENCH_LEVEL, bench_payload, DTI_BENCH_MEDIUM))
BENCH_BATCH(dti_printk,
	    __dti_printk(bench_dti, BENCH_LEVEL, BENCH_FMT, BENCH_ARGS))
BENCH_BATCH(dti_typed,
	    __dti_log_event(bench_typed, BENCH_LEVEL, bench_ev, BENCH_ARGS))
BENCH_BATCH(dti_reserve64, bench_dti_reserve(run))
BENCH_BATCH(dti_filtered,
	    __dti_event(bench_dti, BENCH_LEVEL_OFF, bench_payload,
			DTI_BENCH_MEDIUM))
BENCH_BATCH(relay16, bench_relay_write(run, DTI_BENCH_SMALL))
BENCH_BATCH(relay64, bench_relay_write(run, DTI_BENCH_MEDIUM))
BENCH_BATCH(relay256, bench_relay_write(run, DTI_BENCH_LARGE))
BENCH_BATCH(relay64_var, bench_relay_write_var(run, DTI_BENCH_MEDIUM))
BENCH_BATCH(relay64_ts, bench_relay_write_ts(run, DTI_BENCH_MEDIUM))
BENCH_BATCH(trace_array_printk,
	    if (unlikely(trace_array_printk(bench_tr, _THIS_IP_, BENCH_FMT,
					    BENCH_ARGS) <= 0))
		run->misses++)
BENCH_BATCH(trace_event16, trace_dti_bench_payload16(bench_payload))
BENCH_BATCH(trace_event64, trace_dti_bench_payload64(bench_payload))
BENCH_BATCH(trace_event256, trace_dti_bench_payload256(bench_payload))
BENCH_BATCH(lttng_event64, trace_dti_bench_payload64(bench_payload))
BENCH_BATCH(printk,
	    if (unlikely(pr_info(BENCH_FMT, BENCH_ARGS) <= 0))
		run->misses++)
BENCH_BATCH(empty_call, bench_empty(i))
/*
 * The two clocks a record could be stamped with: DTI's CLOCK_MONOTONIC
 * (the timekeeping clocksource: TSC, or an MMIO read of the HPET where
 * the kernel found the TSC unusable) and ftrace's default "local" clock
 * (sched_clock(), the TSC wherever there is one).
 */
BENCH_BATCH(clock_mono, bench_sink(ktime_get_mono_fast_ns()))
BENCH_BATCH(clock_local, bench_sink(trace_clock_local()))

#define BENCH_CASE(n, how) \
	{ .name = #n, .batch = bench_batch_##n, .check = BENCH_CHECK_##how }

static const struct bench_case bench_cases[] = {
	BENCH_CASE(dti_event16, WRITTEN),
	BENCH_CASE(dti_event64, WRITTEN),
	BENCH_CASE(dti_event256, WRITTEN),
	BENCH_CASE(dti_persist64, PERSIST),
	BENCH_CASE(dti_printk, WRITTEN),
	BENCH_CASE(dti_typed, TYPED),
	BENCH_CASE(dti_reserve64, WRITTEN),
	BENCH_CASE(dti_filtered, FILTERED),
	BENCH_CASE(relay16, MISSES),
	BENCH_CASE(relay64, MISSES),
	BENCH_CASE(relay256, MISSES),
	BENCH_CASE(relay64_var, MISSES),
	BENCH_CASE(relay64_ts, MISSES),
	BENCH_CASE(trace_array_printk, MISSES),
	BENCH_CASE(trace_event16, EXTERNAL),
	BENCH_CASE(trace_event64, EXTERNAL),
	BENCH_CASE(trace_event256, EXTERNAL),
	{ .name = "lttng_event64", .batch = bench_batch_lttng_event64,
	  .check = BENCH_CHECK_EXTERNAL, .ftrace_off = "dti_bench_payload64" },
	BENCH_CASE(printk, MISSES),
	BENCH_CASE(empty_call, NONE),
	BENCH_CASE(clock_mono, NONE),
	BENCH_CASE(clock_local, NONE),
};

static const struct bench_case *bench_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bench_cases); i++)
		if (!strcmp(bench_cases[i].name, name))
			return &bench_cases[i];
	return NULL;
}

/* Enable or disable @bc's ftrace_off event in the ftrace instance. */
static int bench_ftrace_event(const struct bench_case *bc, bool enable)
{
	if (!bc->ftrace_off)
		return 0;
	return trace_array_set_clr_event(bench_tr, "dti_bench", bc->ftrace_off,
					 enable);
}

/* The per-CPU DTI counter a case's records show in, or NULL. */
static u64 *bench_counter(const struct bench_case *bc, unsigned int cpu)
{
	struct dti_cpu_stats *st = per_cpu_ptr(bench_dti->stats, cpu);

	switch (bc->check) {
	case BENCH_CHECK_WRITTEN:
		return &st->written;
	case BENCH_CHECK_PERSIST:
		return bench_persist ? &per_cpu_ptr(bench_persist->stats, cpu)->written : NULL;
	case BENCH_CHECK_TYPED:
		return &per_cpu_ptr(bench_typed->stats, cpu)->written;
	case BENCH_CHECK_FILTERED:
		return &st->filtered;
	default:
		return NULL;
	}
}

/* The case's DTI counter on the run's CPU now, 0 if it has none. */
static u64 bench_count(const struct bench_run *run)
{
	const u64 *counter = bench_counter(run->bc, run->cpu);

	return counter ? READ_ONCE(*counter) : 0;
}

/*
 * Records the case verifiably stored by the timed batches of a finished
 * run; -1 if this module cannot see them.
 */
static s64 bench_stored(const struct bench_run *run)
{
	u64 total = (u64)run->batches * run->calls;

	switch (run->bc->check) {
	case BENCH_CHECK_PERSIST:
		if (!bench_persist)
			return -1;
		fallthrough;
	case BENCH_CHECK_WRITTEN:
	case BENCH_CHECK_TYPED:
	case BENCH_CHECK_FILTERED:
		return bench_count(run) - run->before;
	case BENCH_CHECK_MISSES:
		return total - run->misses;
	case BENCH_CHECK_NONE:
		return total;
	default:
		return -1;
	}
}

/* The kthread: one untimed warm-up batch, then the timed ones. */
static int bench_thread(void *arg)
{
	struct bench_run *run = arg;
	unsigned int b;
	u64 ticks;

	run->bc->batch(run, run->calls);
	run->misses = 0;
	run->before = bench_count(run);
	if (run->start) {
		atomic_inc(&run->start->ready);
		wake_up_all(&run->start->wq);
		wait_event(run->start->wq, READ_ONCE(run->start->go));
	}
	run->t_start = bench_now();
	for (b = 0; b < run->batches; b++) {
		ticks = run->bc->batch(run, run->calls);
		run->samples[b] = div_u64(ticks * BENCH_MILLI, run->calls);
		cond_resched();		/* PREEMPT_VOLUNTARY: no soft lockups */
	}
	run->t_end = bench_now();
	complete(&run->done);
	return 0;
}

static int bench_run_init(struct bench_run *run, const struct bench_case *bc,
			  unsigned int cpu, unsigned int batches,
			  unsigned int calls, struct bench_start *start)
{
	memset(run, 0, sizeof(*run));
	run->bc = bc;
	run->cpu = cpu;
	run->batches = batches;
	run->calls = calls;
	run->start = start;
	init_completion(&run->done);
	run->samples = kvcalloc(batches, sizeof(*run->samples), GFP_KERNEL);
	return run->samples ? 0 : -ENOMEM;
}

static void bench_run_free(struct bench_run *run)
{
	kvfree(run->samples);
	run->samples = NULL;
}

/* Start the run's kthread on its CPU; bench_run_wait() collects it. */
static int bench_run_start(struct bench_run *run)
{
	struct task_struct *t;

	t = kthread_create(bench_thread, run, "dti_bench/%u", run->cpu);
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, run->cpu);
	wake_up_process(t);
	return 0;
}

static void bench_run_wait(struct bench_run *run)
{
	wait_for_completion(&run->done);
}

static int bench_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* The sample at percentile @pct of @n sorted samples (nearest rank). */
static u64 bench_percentile(const u64 *sorted, unsigned int n, unsigned int pct)
{
	unsigned int rank = DIV_ROUND_UP(n * pct, BENCH_PERCENT);

	return sorted[rank ? rank - 1 : 0];
}

static const char *bench_unit(void)
{
	return bench_use_tsc ? "tsc" : "ns";
}

static bool bench_cpu_ok(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_online(cpu);
}

/* "run CASE CPU BATCHES CALLS" */
static int bench_cmd_run(const struct bench_case *bc, unsigned int cpu,
			 unsigned int batches, unsigned int calls)
{
	struct bench_run run;
	u64 *s;
	int ret;

	if (!bench_cpu_ok(cpu))
		return -ENODEV;
	ret = bench_run_init(&run, bc, cpu, batches, calls, NULL);
	if (ret)
		return ret;
	ret = bench_run_start(&run);
	if (ret)
		goto out;
	bench_run_wait(&run);
	s = run.samples;
	sort(s, batches, sizeof(*s), bench_cmp_u64, NULL);
	scnprintf(bench_result, sizeof(bench_result),
		  "case=%s cpu=%u batches=%u calls=%u unit=%s median_milli=%llu p99_milli=%llu min_milli=%llu max_milli=%llu expected=%llu stored=%lld\n",
		  bc->name, cpu, batches, calls, bench_unit(),
		  bench_percentile(s, batches, BENCH_PERCENT / 2),
		  bench_percentile(s, batches, BENCH_PERCENTILE),
		  s[0], s[batches - 1], (u64)batches * calls,
		  bench_stored(&run));
out:
	bench_run_free(&run);
	return ret;
}

/* Start @n writers on the first @n online CPUs; returns how many started. */
static unsigned int bench_tput_start(struct bench_run *runs, unsigned int n)
{
	unsigned int started = 0, cpu;

	for_each_online_cpu(cpu) {
		if (started == n)
			break;
		runs[started].cpu = cpu;
		if (bench_run_start(&runs[started]))
			break;
		started++;
	}
	return started;
}

/*
 * "tput CASE WRITERS BATCHES CALLS": all writers start together, once
 * every one has done its warm-up.  Reports the records of all writers
 * over the time from the first start to the last end (per_sec), and the
 * sum of each writer's own rate (sum_per_sec), which a writer that was
 * slow to be scheduled does not drag down.
 */
static int bench_cmd_tput(const struct bench_case *bc, unsigned int writers,
			  unsigned int batches, unsigned int calls)
{
	u64 first = U64_MAX, last = 0, records = 0, sum_rate = 0, elapsed;
	struct bench_run *runs;
	unsigned int i, started;
	struct bench_start start = { .ready = ATOMIC_INIT(0) };
	s64 stored = 0;
	int ret = 0;

	if (!writers || writers > num_online_cpus())
		return -EINVAL;
	init_waitqueue_head(&start.wq);
	runs = kcalloc(writers, sizeof(*runs), GFP_KERNEL);
	if (!runs)
		return -ENOMEM;
	for (i = 0; i < writers; i++) {
		ret = bench_run_init(&runs[i], bc, 0, batches, calls, &start);
		if (ret)
			goto free;
	}
	started = bench_tput_start(runs, writers);
	wait_event(start.wq, atomic_read(&start.ready) >= started);
	WRITE_ONCE(start.go, true);
	wake_up_all(&start.wq);
	for (i = 0; i < started; i++)
		bench_run_wait(&runs[i]);
	if (started < writers) {
		ret = -ECHILD;
		goto free;
	}
	for (i = 0; i < writers; i++) {
		first = min(first, runs[i].t_start);
		last = max(last, runs[i].t_end);
		records += (u64)batches * calls;
		stored += bench_stored(&runs[i]);
		elapsed = max(runs[i].t_end - runs[i].t_start, 1ULL);
		sum_rate += mul_u64_u64_div_u64((u64)batches * calls,
						NSEC_PER_SEC, elapsed);
	}
	elapsed = last > first ? last - first : 1;
	scnprintf(bench_result, sizeof(bench_result),
		  "case=%s writers=%u batches=%u calls=%u unit=%s elapsed=%llu records=%llu per_sec=%llu sum_per_sec=%llu expected=%llu stored=%lld\n",
		  bc->name, writers, batches, calls, bench_unit(), elapsed,
		  records, mul_u64_u64_div_u64(records, NSEC_PER_SEC, elapsed),
		  sum_rate,
		  records, stored);
free:
	for (i = 0; i < writers; i++)
		bench_run_free(&runs[i]);
	kfree(runs);
	return ret;
}

/* "fill KB text": small text records alone, of the sample driver's sizes */
static bool bench_fill_text;
#define BENCH_SMALL_FMT		"req %u: state %u -> %u\n"

/* One record of the "fill" mix: the benchmark's payloads and its text. */
static void bench_fill_one(unsigned int i, unsigned int cpu)
{
	static const size_t sizes[] = {
		DTI_BENCH_SMALL, DTI_BENCH_MEDIUM, DTI_BENCH_LARGE,
	};
	unsigned int pick = i % (ARRAY_SIZE(sizes) + 1);

	if (bench_fill_text)
		__dti_printk(bench_big, BENCH_LEVEL, BENCH_SMALL_FMT, i, i % 4, (i + 1) % 4);
	else if (pick < ARRAY_SIZE(sizes))
		__dti_event(bench_big, BENCH_LEVEL, bench_payload, sizes[pick]);
	else
		__dti_printk(bench_big, BENCH_LEVEL, BENCH_FMT, (int)i,
			     (int)i + 1, (int)cpu, BENCH_STR);
}

/**
 * struct bench_filler - one CPU's part of "fill"
 * @cpu:	CPU it runs on
 * @max_records: bound on the records it logs, should the ring never wrap
 * @done:	completed when it has finished
 */
struct bench_filler {
	unsigned int cpu;
	u64 max_records;
	struct completion done;
};

/* Log the mix on this CPU until its buffer has wrapped once. */
static int bench_fill_thread(void *arg)
{
	struct bench_filler *f = arg;
	struct dti_cpu_stats *st = per_cpu_ptr(bench_big->stats, f->cpu);
	u64 i;

	for (i = 0; !READ_ONCE(st->overwritten) && i < f->max_records; i++) {
		bench_fill_one(i, f->cpu);
		cond_resched();
	}
	complete(&f->done);
	return 0;
}

/* "fill KB": a channel of KB KiB per CPU, wrapped once on every CPU. */
static int bench_cmd_fill(unsigned int kb)
{
	struct bench_filler f;
	struct task_struct *t;
	unsigned int cpu;
	u64 records = 0;
	int ret;

	if (bench_big || !kb || kb > BENCH_FILL_KB_MAX)
		return -EINVAL;
	bench_big = dti_register(BENCH_BIG_NAME, (size_t)kb << 10, BENCH_LEVEL);
	if (IS_ERR(bench_big)) {
		ret = PTR_ERR(bench_big);
		bench_big = NULL;
		return ret;
	}
	for_each_online_cpu(cpu) {
		f.cpu = cpu;
		/* Every record takes at least a header: this surely wraps. */
		f.max_records = BENCH_FILL_LIMIT * ((u64)kb << 10) /
				DTI_CREC_SIZE(sizeof(struct dti_crec), 0);
		init_completion(&f.done);
		t = kthread_create(bench_fill_thread, &f, "dti_bench_fill/%u",
				   cpu);
		if (IS_ERR(t))
			return PTR_ERR(t);
		kthread_bind(t, cpu);
		wake_up_process(t);
		wait_for_completion(&f.done);
		records += per_cpu_ptr(bench_big->stats, cpu)->written;
	}
	scnprintf(bench_result, sizeof(bench_result),
		  "fill=%s kb=%u written=%llu\n", BENCH_BIG_NAME, kb, records);
	return 0;
}

/*
 * "keep SHAPE KB [EXTRA]": history per MiB.  A DTI channel of KB KiB per
 * CPU and the ftrace instance (whose ring the caller made as large) both
 * get the same records on this CPU, BENCH_KEEP_PASSES times more than
 * fit and @extra more (at most as many again: what a ring keeps depends
 * on where in its last sub-buffer or page the writes stop, so the caller
 * varies it).  SHAPE "u32x3" is an event of three u32 values (a DTI
 * event type, a TRACE_EVENT), "bin64" a 64-byte binary record
 * (dti_event(), the u8[64] TRACE_EVENT).  Reports the CPU and the
 * records the channel holds at the end by its stats; the instance's
 * per_cpu/cpuN/stats "entries" says what ftrace holds.  The channel is
 * left registered until the next "keep" (or the module's unload), so
 * that its readers can count what it holds too.
 */
static int bench_cmd_keep(const char *shape, unsigned int kb, unsigned int extra)
{
	bool u32x3 = !strcmp(shape, "u32x3");
	struct dti_cpu_stats *st;
	struct dti_info *k;
	unsigned int cpu;
	u64 i, n;
	int ret;

	if ((!u32x3 && strcmp(shape, "bin64")) || !kb || kb % (BENCH_KEEP_SUBBUF >> 10) ||
	    kb > BENCH_FILL_KB_MAX)
		return -EINVAL;
	n = BENCH_KEEP_PASSES * ((u64)kb << 10) / BENCH_KEEP_MIN_RECORD;
	if (extra > n)
		return -EINVAL;
	n += extra;
	if (bench_keep) {
		dti_unregister(bench_keep);
		bench_keep = NULL;
	}
	k = __dti_register(BENCH_KEEP_NAME, BENCH_KEEP_SUBBUF,
			   kb / (BENCH_KEEP_SUBBUF >> 10), BENCH_LEVEL);
	if (IS_ERR(k))
		return PTR_ERR(k);
	ret = u32x3 ? dti_event_register(k, &bench_keep_ev) : 0;
	if (ret)
		goto out;
	cpu = get_cpu();
	for (i = 0; i < n; i++) {
		if (u32x3) {
			__dti_log_event(k, BENCH_LEVEL, bench_keep_ev, (u32)i, (u32)i + 1,
					(u32)i + 2);
			trace_dti_bench_u32x3(i, i + 1, i + 2);
		} else {
			__dti_event(k, BENCH_LEVEL, bench_payload, DTI_BENCH_MEDIUM);
			trace_dti_bench_payload64(bench_payload);
		}
	}
	put_cpu();
	st = per_cpu_ptr(k->stats, cpu);
	scnprintf(bench_result, sizeof(bench_result),
		  "keep=%s cpu=%u kb=%u logged=%llu dti_written=%llu dti_kept=%llu\n",
		  shape, cpu, kb, n, st->written, st->written - st->overwritten);
	bench_keep = k;
	return 0;
out:
	dti_unregister(k);
	return ret;
}

static int bench_cmd_list(void)
{
	size_t i, off = 0;

	for (i = 0; i < ARRAY_SIZE(bench_cases); i++)
		off += scnprintf(bench_result + off, sizeof(bench_result) - off,
				 "%s\n", bench_cases[i].name);
	return 0;
}

static int bench_check_counts(unsigned int batches, unsigned int calls)
{
	if (!batches || batches > BENCH_BATCHES_MAX)
		return -EINVAL;
	if (!calls || calls > BENCH_CALLS_MAX)
		return -EINVAL;
	return 0;
}

/* Parse and run one command; its result is left in bench_result. */
static int bench_command(const char *cmd)
{
	char verb[BENCH_CMD_MAX], arg[BENCH_CMD_MAX];
	unsigned int a = 0, b = 0, c = 0;
	const struct bench_case *bc;
	int n, ret, on;

	n = sscanf(cmd, "%95s %95s %u %u %u", verb, arg, &a, &b, &c);
	if (n >= 1 && !strcmp(verb, "list"))
		return bench_cmd_list();
	if (n == 2 && !strcmp(verb, "clock")) {
		if (strcmp(arg, "tsc") && strcmp(arg, "local"))
			return -EINVAL;
		bench_use_tsc = !strcmp(arg, "tsc");
		scnprintf(bench_result, sizeof(bench_result), "clock=%s\n",
			  bench_unit());
		return 0;
	}
	if ((n == 3 || n == 4) && !strcmp(verb, "keep"))
		return bench_cmd_keep(arg, a, b);
	if (n == 2 && !strcmp(verb, "fill")) {
		/* "fill KB text": %u took nothing */
		bench_fill_text = strstr(cmd, " text") != NULL;
		ret = kstrtouint(arg, 0, &a);
		return ret ? ret : bench_cmd_fill(a);
	}
	if (n != 5)
		return -EINVAL;
	bc = bench_find(arg);
	if (!bc)
		return -ENOENT;
	ret = bench_check_counts(b, c);
	if (ret)
		return ret;
	if (strcmp(verb, "run") && strcmp(verb, "tput"))
		return -EINVAL;
	ret = bench_ftrace_event(bc, false);
	if (ret)
		return ret;
	if (!strcmp(verb, "run"))
		ret = bench_cmd_run(bc, a, b, c);
	else
		ret = bench_cmd_tput(bc, a, b, c);
	on = bench_ftrace_event(bc, true);
	return ret ? ret : on;
}

static ssize_t bench_ctl_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	char cmd[BENCH_CMD_MAX];
	int ret;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	mutex_lock(&bench_lock);
	bench_result[0] = '\0';
	ret = bench_command(cmd);
	if (ret)
		scnprintf(bench_result, sizeof(bench_result), "error=%d\n", ret);
	mutex_unlock(&bench_lock);
	return ret ? ret : count;
}

static ssize_t bench_ctl_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&bench_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, bench_result,
				      strlen(bench_result));
	mutex_unlock(&bench_lock);
	return ret;
}

static const struct file_operations bench_ctl_fops = {
	.owner	= THIS_MODULE,
	.write	= bench_ctl_write,
	.read	= bench_ctl_read,
	.llseek	= default_llseek,
};

/*
 * Relay callbacks of the raw channel.  Overwrite mode, as DTI's: a new
 * sub-buffer is always started, so no call ever finds the buffer full.
 */
static int bench_subbuf_start(struct rchan_buf *buf, void *subbuf, void *prev_subbuf)
{
	return 1;
}

DTI_RELAY_SUBBUF_START(bench_relay_subbuf_start, bench_subbuf_start)

static struct dentry *bench_create_buf_file(const char *filename,
					    struct dentry *parent,
					    umode_t mode, struct rchan_buf *buf,
					    int *is_global)
{
	return debugfs_create_file(filename, mode, parent, buf,
				   &relay_file_operations);
}

static int bench_remove_buf_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

static DTI_RELAY_CALLBACKS_CONST struct rchan_callbacks bench_relay_cb = {
	.subbuf_start		= bench_relay_subbuf_start,
	.create_buf_file	= bench_create_buf_file,
	.remove_buf_file	= bench_remove_buf_file,
};

/* Events of this module's trace header, enabled in the instance only. */
static const char *const bench_events[] = {
	"dti_bench_payload16", "dti_bench_payload64", "dti_bench_payload256",
	"dti_bench_u32x3",
};

static void bench_ftrace_exit(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bench_events); i++)
		trace_array_set_clr_event(bench_tr, "dti_bench",
					  bench_events[i], false);
	trace_array_put(bench_tr);
	trace_array_destroy(bench_tr);
	bench_tr = NULL;
}

/* The ftrace instance "dti_bench", ready for trace_array_printk(). */
static int bench_ftrace_init(void)
{
	size_t i;
	int ret;

	bench_tr = dti_trace_array_get_by_name(BENCH_NAME);
	if (!bench_tr)
		return -ENOMEM;
	ret = trace_array_init_printk(bench_tr);
	if (ret)
		goto err;
	for (i = 0; i < ARRAY_SIZE(bench_events); i++) {
		ret = trace_array_set_clr_event(bench_tr, "dti_bench",
						bench_events[i], true);
		if (ret)
			goto err;
	}
	return 0;
err:
	bench_ftrace_exit();
	return ret;
}

static void bench_fill_payload(void)
{
	size_t i;

	for (i = 0; i < sizeof(bench_payload); i++)
		bench_payload[i] = i;
}

static int __init bench_init(void)
{
	int ret;

	bench_fill_payload();
	bench_dir = debugfs_create_dir(BENCH_NAME, NULL);
	bench_dti = __dti_register(BENCH_NAME, BENCH_SUBBUF_SIZE,
				   BENCH_N_SUBBUFS, BENCH_LEVEL);
	if (IS_ERR(bench_dti)) {
		ret = PTR_ERR(bench_dti);
		goto err_dir;
	}
	/* dti.ko loaded without persist= has no region: no persist case. */
	bench_persist = dti_register_flags(BENCH_PERSIST_NAME, BENCH_SUBBUF_SIZE,
					   BENCH_N_SUBBUFS, BENCH_LEVEL, DTI_F_PERSIST);
	if (IS_ERR(bench_persist))
		bench_persist = NULL;
	bench_typed = __dti_register(BENCH_TYPED_NAME, BENCH_SUBBUF_SIZE,
				     BENCH_N_SUBBUFS, BENCH_LEVEL);
	if (IS_ERR(bench_typed)) {
		ret = PTR_ERR(bench_typed);
		goto err_persist;
	}
	ret = dti_event_register(bench_typed, &bench_ev);
	if (ret)
		goto err_typed;
	bench_relay = relay_open("relay", bench_dir, BENCH_SUBBUF_SIZE,
				 BENCH_N_SUBBUFS, &bench_relay_cb, NULL);
	if (!bench_relay) {
		ret = -ENOMEM;
		goto err_typed;
	}
	ret = bench_ftrace_init();
	if (ret)
		goto err_relay;
	debugfs_create_file("ctl", 0600, bench_dir, NULL, &bench_ctl_fops);
	return 0;

err_relay:
	relay_close(bench_relay);
err_typed:
	dti_unregister(bench_typed);
err_persist:
	dti_unregister(bench_persist);
	dti_unregister(bench_dti);
err_dir:
	debugfs_remove_recursive(bench_dir);
	return ret;
}

static void __exit bench_exit(void)
{
	bench_ftrace_exit();
	relay_close(bench_relay);
	if (bench_big)
		dti_unregister(bench_big);
	if (bench_keep)
		dti_unregister(bench_keep);
	dti_unregister(bench_typed);
	dti_unregister(bench_persist);
	dti_unregister(bench_dti);
	debugfs_remove_recursive(bench_dir);
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("DTI benchmark: cost per call beside relay, ftrace and printk");
