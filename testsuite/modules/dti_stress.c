// SPDX-License-Identifier: GPL-2.0
/*
 * dti_stress - the kernel side of `make stress` (testsuite/test_stress.py).
 *
 * Commands, one per write to /sys/kernel/debug/dti_stress/ctl:
 *   start     register the stress channels (and "st_mark", for the
 *             script's markers) and start, on every online
 *             CPU, writers in process (a kthread), softirq (a timer),
 *             hardirq (an hrtimer) and NMI (self-NMIs sent from the
 *             hrtimer) context, and the churn thread
 *   stop      stop them all; the channels stay, to be read
 *   release   unregister the channels
 * Reading ctl gives the state and the counters (see dts_ctl_show()).
 *
 * Every writer logs, in turn, to each of the channels of dts_chans[]
 * through each logging call: __dti_printk() (text), __dti_event()
 * (binary), __dti_reserve() (binary, filled in place) and
 * __dti_log_event() (a typed event), at random levels with payloads of
 * random length.  Each payload says who wrote it and carries a checksum
 * (see dts_hash()), which testsuite/stress/dti-stress-check.c verifies in
 * everything a reader gets:
 *   text and typed:  "dts KC hH cC nN fFILL kHASH"
 *   binary:          struct dts_bin, the hash in its last 4 bytes
 * K is the call (T text, E event, B binary, R reserve), C the context
 * (P, S, H, N), H the writer's home CPU, C the CPU that logged it, N the
 * writer's count of its calls (so each writer's numbers only grow), FILL
 * letters derived from N, HASH dts_hash() of what comes before " k".
 *
 * Each call is counted per CPU and channel by how it ended: filtered by
 * the level (dti_enabled() is false), stored, or failed (with the errno).
 * With preemption off around the call, the CPU that counts it is the one
 * whose stats counted it, so the test compares these counters with each
 * channel's stats file exactly.
 *
 * The churn thread, meanwhile, in a loop:
 *   - registers "st_churn", logs DTS_CHURN_RECORDS to it, checks its
 *     written counters and unregisters it;
 *   - unregisters and initialises again the handle h_stress, which the
 *     writers log to without pause;
 *   - arms a halt trigger on "st_halt" for DTS_HALT_COUNT records and,
 *     once it fired, checks with dti_ctl_trigger_cpu() that exactly that
 *     many were let through, then sets the level back (which ends it);
 *   - calls dts_inject_point(), a probe point for the control tapset's
 *     stap script (dti_inject.stp), with a value and its hash.
 *
 * Locking: dts_lock (a mutex) serialises the commands.  The writers take
 * no lock of their own; they share only per-CPU counters (this_cpu_inc(),
 * one instruction, so NMI-safe) and their own struct dts_writer.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dti.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#ifdef CONFIG_X86
#include <asm/apic.h>
#include <asm/nmi.h>
#endif

#include "dti_compat.h"

/* Payload checksum: 32-bit FNV-1a, the same in dti-stress-check.c. */
#define DTS_HASH_BASIS		0x811c9dc5U
#define DTS_HASH_PRIME		0x01000193U
/* "DTS1" as a little-endian u32, first in every binary payload */
#define DTS_MAGIC		0x31535444U
/* dts_inject_point()'s second value: its first times this, mod 2^32 */
#define DTS_INJECT_MUL		2654435761U

/* Payload sizes: a text's letters, a binary payload's bytes */
#define DTS_FILL_MAX		160
#define DTS_EVENT_FILL_MAX	48
#define DTS_BIN_MAX		256
#define DTS_TEXT_MAX		224

/* Pace of the writers */
#define DTS_PROC_BATCH		8		/* records, then a sleep */
#define DTS_PROC_SLEEP_US	200
#define DTS_SOFT_BATCH		8		/* records a jiffy */
#define DTS_HARD_NS		(500 * NSEC_PER_USEC)
#define DTS_NMI_EVERY		4		/* hrtimer ticks between NMIs */

/* The churn thread */
#define DTS_CHURN_MS		20
#define DTS_CHURN_RECORDS	64
#define DTS_CHURN_SIZE		(16 * 1024)
#define DTS_HALT_COUNT		500

enum dts_ctx { DTS_PROCESS, DTS_SOFTIRQ, DTS_HARDIRQ, DTS_NMI, DTS_NR_CTX };
static const char dts_ctx_char[DTS_NR_CTX] = { 'P', 'S', 'H', 'N' };

enum dts_kind { DTS_TEXT, DTS_EVENT, DTS_BINARY, DTS_RESERVE, DTS_NR_KIND };
static const char dts_kind_char[DTS_NR_KIND] = { 'T', 'E', 'B', 'R' };

/* How a call ended, beyond stored and filtered: by errno */
enum dts_err { DTS_ENOSPC, DTS_EBUSY, DTS_ENODEV, DTS_EMSGSIZE, DTS_EINVAL,
	       DTS_ECANCELED, DTS_ENOBUF, DTS_EOTHER, DTS_NR_ERR };
static const char *const dts_err_name[DTS_NR_ERR] = {
	"enospc", "ebusy", "enodev", "emsgsize", "einval", "ecanceled",
	"reserve_null", "other",
};

DEFINE_DTI_EVENT(dts_ev_main, 1, "stress", "dts %s h%u c%u n%u %s k%08x");
DEFINE_DTI_EVENT(dts_ev_flip, 1, "stress", "dts %s h%u c%u n%u %s k%08x");
DEFINE_DTI_EVENT(dts_ev_nover, 1, "stress", "dts %s h%u c%u n%u %s k%08x");
DEFINE_DTI_EVENT(dts_ev_halt, 1, "stress", "dts %s h%u c%u n%u %s k%08x");

DEFINE_DTI_HANDLE(h_stress, "st_handle", 32 * 1024, DTI_LEVEL_DEBUG);

/* The channels the writers log to; the last is the handle's. */
enum { DTS_MAIN, DTS_FLIP, DTS_NOVER, DTS_HALT, DTS_HANDLE, DTS_NR_CH };
static struct dts_chan {
	const char *name;
	size_t subbuf_size;
	size_t n_subbufs;
	unsigned int flags;
	struct dti_event_type *ev;	/* typed events, or NULL: text instead */
	struct dti_info *info;
} dts_chans[DTS_NR_CH] = {
	[DTS_MAIN]  = { "st_main", 4096, 8, 0, &dts_ev_main },
	[DTS_FLIP]  = { "st_flip", 4096, 8, 0, &dts_ev_flip },
	[DTS_NOVER] = { "st_nover", 4096, 4, DTI_F_NO_OVERWRITE, &dts_ev_nover },
	[DTS_HALT]  = { "st_halt", 4096, 4, 0, &dts_ev_halt },
	[DTS_HANDLE] = { "st_handle" },
};

/**
 * struct dts_bin - a binary payload
 * @magic:	DTS_MAGIC
 * @kind:	dts_kind_char[] of the call
 * @ctx:	dts_ctx_char[] of the context
 * @home:	the writer's home CPU
 * @cpu:	the CPU that logged it
 * @n:		the writer's call count
 * @len:	bytes of the whole payload; after this header come letters
 *		derived from @n, then the hash of all before it (4 bytes)
 */
struct dts_bin {
	__le32 magic;
	u8 kind;
	u8 ctx;
	__le16 home;
	__le32 cpu;
	__le32 n;
	__le32 len;
} __packed;

#define DTS_BIN_MIN	(sizeof(struct dts_bin) + sizeof(__le32))

struct dts_writer {
	unsigned int home;
	enum dts_ctx ctx;
	u32 n;
	u32 rnd;
};

struct dts_cpu {
	struct dts_writer w[DTS_NR_CTX];
	struct task_struct *task;
	struct timer_list timer;
	struct hrtimer hrtimer;
	unsigned int ticks;
	bool started;
};

/* Per CPU and channel: how the calls counted on this CPU ended */
struct dts_acct {
	u64 calls[DTS_NR_CH];
	u64 filtered[DTS_NR_CH];
	u64 stored[DTS_NR_CH];
	u64 failed[DTS_NR_CH];
	u64 err[DTS_NR_CH][DTS_NR_ERR];
	u64 ctx_calls[DTS_NR_CTX];
	u64 nmi_sent;
};

/* What the churn thread did */
struct dts_churn {
	u64 rounds;
	u64 reg_ok, reg_err, reg_bad;		/* st_churn */
	u64 records;				/* logged to st_churn */
	u64 handle_ok, handle_err;		/* h_stress */
	u64 halt_armed, halt_fired, halt_bad, halt_err;
	u64 injected;
};

/* "st_mark": for the stress script's markers, no writer here logs to it */
#define DTS_MARK_NAME		"st_mark"
#define DTS_MARK_SIZE		(32 * 1024)
static struct dti_info *dts_mark;

void dts_inject_point(u32 n, u32 k);

static DEFINE_MUTEX(dts_lock);
static struct dts_cpu *dts_cpus;
static struct dts_acct __percpu *dts_acct;
static struct dts_churn dts_churn;
static struct task_struct *dts_churn_task;
static bool dts_running, dts_registered;
static bool dts_stop;
static bool nmi = true;
module_param(nmi, bool, 0444);
MODULE_PARM_DESC(nmi, "send the self-NMIs whose handler logs (default: yes)");

static DEFINE_PER_CPU(bool, dts_nmi_armed);
static DEFINE_PER_CPU(struct dts_writer *, dts_nmi_writer);

static u32 dts_hash(const void *p, size_t n)
{
	const u8 *b = p;
	u32 h = DTS_HASH_BASIS;

	while (n--)
		h = (h ^ *b++) * DTS_HASH_PRIME;
	return h;
}

/* xorshift32: cheap, lock-free, fine in NMI */
static u32 dts_rand(struct dts_writer *w)
{
	u32 x = w->rnd;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	w->rnd = x;
	return x;
}

static char dts_fill_char(u32 n, unsigned int i)
{
	return 'a' + (n + i) % 26;
}

/* "dts KC hH cC nN fFILL" into @buf; returns its length. */
static int dts_body(char *buf, size_t size, const struct dts_writer *w,
		    enum dts_kind kind, unsigned int cpu, u32 n,
		    unsigned int fill)
{
	int len = scnprintf(buf, size, "dts %c%c h%u c%u n%u f",
			    dts_kind_char[kind], dts_ctx_char[w->ctx], w->home,
			    cpu, n);
	unsigned int i;

	for (i = 0; i < fill && len < size - 1; i++)
		buf[len++] = dts_fill_char(n, i);
	buf[len] = '\0';
	return len;
}

static void dts_fill_bin(void *p, size_t len, const struct dts_writer *w,
			 enum dts_kind kind, unsigned int cpu, u32 n)
{
	struct dts_bin *b = p;
	u8 *fill = p + sizeof(*b);
	size_t i, nfill = len - DTS_BIN_MIN;
	__le32 h;

	b->magic = cpu_to_le32(DTS_MAGIC);
	b->kind = dts_kind_char[kind];
	b->ctx = dts_ctx_char[w->ctx];
	b->home = cpu_to_le16(w->home);
	b->cpu = cpu_to_le32(cpu);
	b->n = cpu_to_le32(n);
	b->len = cpu_to_le32(len);
	for (i = 0; i < nfill; i++)
		fill[i] = dts_fill_char(n, i);
	h = cpu_to_le32(dts_hash(p, len - sizeof(h)));
	memcpy(fill + nfill, &h, sizeof(h));
}

static noinline_for_stack int dts_log_text(struct dti_info *t, int level,
			const struct dts_writer *w, unsigned int cpu, u32 n,
			unsigned int fill)
{
	char buf[DTS_TEXT_MAX];
	int len = dts_body(buf, sizeof(buf), w, DTS_TEXT, cpu, n, fill);

	return dti_printk_raw(t, level, "%s k%08x\n", buf, dts_hash(buf, len));
}

static noinline_for_stack int dts_log_event(struct dti_info *t, int level,
			 const struct dts_chan *c, const struct dts_writer *w,
			 unsigned int cpu, u32 n, unsigned int fill)
{
	char buf[DTS_TEXT_MAX], kc[3] = { dts_kind_char[DTS_EVENT],
					  dts_ctx_char[w->ctx], '\0' };
	int len = dts_body(buf, sizeof(buf), w, DTS_EVENT, cpu, n,
			   fill % (DTS_EVENT_FILL_MAX + 1));

	/* Its values print as the body reads: "fFILL" is the last word. */
	return dti_event_log_raw(t, level, c->ev, kc, w->home, cpu, n,
				 strrchr(buf, ' ') + 1, dts_hash(buf, len));
}

static noinline_for_stack int dts_log_binary(struct dti_info *t, int level,
			  const struct dts_writer *w, unsigned int cpu, u32 n,
			  size_t len)
{
	u8 buf[DTS_BIN_MAX];

	dts_fill_bin(buf, len, w, DTS_BINARY, cpu, n);
	return dti_event_raw(t, level, buf, len);
}

/* Interrupts off from the reservation until the commit. */
static noinline_for_stack int dts_log_reserve(struct dti_info *t, int level,
			   const struct dts_writer *w, unsigned int cpu, u32 n,
			   size_t len)
{
	unsigned long flags;
	void *p;

	local_irq_save(flags);
	p = dti_reserve_raw(t, level, len);
	if (p) {
		dts_fill_bin(p, len, w, DTS_RESERVE, cpu, n);
		dti_commit_raw(t, p);
	}
	local_irq_restore(flags);
	return p ? 0 : -ENOBUFS;
}

static enum dts_err dts_err_of(int ret)
{
	switch (ret) {
	case -ENOSPC:		return DTS_ENOSPC;
	case -EBUSY:		return DTS_EBUSY;
	case -ENODEV:		return DTS_ENODEV;
	case -EMSGSIZE:		return DTS_EMSGSIZE;
	case -EINVAL:		return DTS_EINVAL;
	case -ECANCELED:	return DTS_ECANCELED;
	case -ENOBUFS:		return DTS_ENOBUF;
	default:		return DTS_EOTHER;
	}
}

/*
 * One call of @w to channel @ch.  Preemption is off, so the CPU counted
 * here is the one whose stats count the record (dti_enabled() included).
 */
static void dts_write(struct dts_writer *w, unsigned int ch)
{
	struct dts_chan *c = &dts_chans[ch];
	enum dts_kind kind = dts_rand(w) % DTS_NR_KIND;
	int level = dts_rand(w) % (DTI_LEVEL_MAX + 1);
	u32 r = dts_rand(w), n = w->n++;
	struct dti_info *t = c->info;
	unsigned int cpu;
	int ret;

	if (kind == DTS_EVENT && !c->ev)
		kind = DTS_TEXT;
	cpu = get_cpu();
	this_cpu_inc(dts_acct->calls[ch]);
	this_cpu_inc(dts_acct->ctx_calls[w->ctx]);
	if (!dti_enabled(t, level)) {
		this_cpu_inc(dts_acct->filtered[ch]);
		goto out;
	}
	switch (kind) {
	case DTS_TEXT:
		ret = dts_log_text(t, level, w, cpu, n, r % (DTS_FILL_MAX + 1));
		break;
	case DTS_EVENT:
		ret = dts_log_event(t, level, c, w, cpu, n, r);
		break;
	case DTS_BINARY:
		ret = dts_log_binary(t, level, w, cpu, n, DTS_BIN_MIN +
				     r % (DTS_BIN_MAX - DTS_BIN_MIN + 1));
		break;
	default:
		ret = dts_log_reserve(t, level, w, cpu, n, DTS_BIN_MIN +
				      r % (DTS_BIN_MAX - DTS_BIN_MIN + 1));
		break;
	}
	if (!ret) {
		this_cpu_inc(dts_acct->stored[ch]);
	} else {
		this_cpu_inc(dts_acct->failed[ch]);
		this_cpu_inc(dts_acct->err[ch][dts_err_of(ret)]);
	}
out:
	put_cpu();
}

/* One call to each channel, in an order that turns with the count */
static void dts_round(struct dts_writer *w)
{
	unsigned int i, first = w->n % DTS_NR_CH;

	for (i = 0; i < DTS_NR_CH; i++)
		dts_write(w, (first + i) % DTS_NR_CH);
}

static int dts_proc_fn(void *arg)
{
	struct dts_cpu *dc = arg;
	unsigned int i;

	while (!READ_ONCE(dts_stop)) {
		for (i = 0; i < DTS_PROC_BATCH; i++)
			dts_round(&dc->w[DTS_PROCESS]);
		usleep_range(DTS_PROC_SLEEP_US, 2 * DTS_PROC_SLEEP_US);
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static void dts_timer_fn(struct timer_list *t)
{
	struct dts_cpu *dc = timer_container_of(dc, t, timer);
	unsigned int i;

	for (i = 0; i < DTS_SOFT_BATCH; i++)
		dts_round(&dc->w[DTS_SOFTIRQ]);
	if (!READ_ONCE(dts_stop))
		mod_timer(&dc->timer, jiffies + 1);
}

#ifdef CONFIG_X86
/*
 * Our self-NMIs: only while armed on this CPU, so other NMIs pass by.
 * A timer that moved to another CPU (hotplug) uses the writer of the
 * CPU it runs on now: writers are per CPU, NMIs too.
 */
static int dts_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct dts_writer *w;

	if (!this_cpu_read(dts_nmi_armed))
		return NMI_DONE;
	w = this_cpu_read(dts_nmi_writer);
	dts_round(w);
	this_cpu_write(dts_nmi_armed, false);
	return NMI_HANDLED;
}

static int dts_nmi_register(void)
{
	return register_nmi_handler(NMI_LOCAL, dts_nmi_handler, 0, KBUILD_MODNAME);
}

/* Waits for NMI handlers running now. */
static void dts_nmi_unregister(void)
{
	unregister_nmi_handler(NMI_LOCAL, KBUILD_MODNAME);
}

static void dts_nmi_raise(void)
{
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
}
#else
/*
 * Self-NMIs are x86's (a handler of the module's own and the local
 * APIC); arm64's pseudo-NMIs serve only the kernel's own IPIs.  Elsewhere
 * none is sent: "nmi sent 0", and the NMI writer stays idle.
 */
static int dts_nmi_register(void)
{
	return 0;
}

static void dts_nmi_unregister(void)
{
}

static void dts_nmi_raise(void)
{
}
#endif

static void dts_send_nmi(struct dts_cpu *dc)
{
	this_cpu_write(dts_nmi_writer, &dc->w[DTS_NMI]);
	this_cpu_write(dts_nmi_armed, true);
	this_cpu_inc(dts_acct->nmi_sent);
	dts_nmi_raise();
}

static enum hrtimer_restart dts_hrtimer_fn(struct hrtimer *t)
{
	struct dts_cpu *dc = container_of(t, struct dts_cpu, hrtimer);

	dts_round(&dc->w[DTS_HARDIRQ]);
	if (IS_ENABLED(CONFIG_X86) && nmi && ++dc->ticks % DTS_NMI_EVERY == 0 &&
	    !this_cpu_read(dts_nmi_armed))
		dts_send_nmi(dc);
	if (READ_ONCE(dts_stop))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(DTS_HARD_NS));
	return HRTIMER_RESTART;
}

/* Runs on dc's CPU: start its timers there. */
static long dts_start_timers(void *arg)
{
	struct dts_cpu *dc = arg;

	timer_setup(&dc->timer, dts_timer_fn, TIMER_PINNED);
	dc->timer.expires = jiffies + 1;
	add_timer_on(&dc->timer, smp_processor_id());
	hrtimer_setup(&dc->hrtimer, dts_hrtimer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	hrtimer_start(&dc->hrtimer, ns_to_ktime(DTS_HARD_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
	return 0;
}

/**
 * dts_inject_point - a probe point for the control tapset's stap script
 * @n: a count
 * @k: @n * DTS_INJECT_MUL, for dti-stress-check to verify
 *
 * dti_inject.stp logs "dts_inject_point n=0x.. k=0x.." at each call.
 */
noinline void dts_inject_point(u32 n, u32 k)
{
	asm volatile("" : : "r" (n), "r" (k) : "memory");
}

/* st_churn: register, log from this thread alone, check, unregister */
static void dts_churn_register(void)
{
	u64 stored = 0, written = 0;
	struct dti_info *t;
	unsigned int i, cpu;

	t = dti_register("st_churn", DTS_CHURN_SIZE, DTI_LEVEL_DEBUG);
	if (IS_ERR(t)) {
		dts_churn.reg_err++;
		return;
	}
	dts_churn.reg_ok++;
	for (i = 0; i < DTS_CHURN_RECORDS; i++) {
		if (!__dti_printk(t, DTI_LEVEL_INFO, "churn %llu %u\n",
				  dts_churn.reg_ok, i))
			stored++;
	}
	for_each_possible_cpu(cpu)
		written += per_cpu_ptr(t->stats, cpu)->written;
	if (written != stored || stored != DTS_CHURN_RECORDS)
		dts_churn.reg_bad++;
	dts_churn.records += stored;
	dti_unregister(t);
}

static void dts_churn_handle(void)
{
	CLEANUP_DTI_HANDLE(h_stress);
	if (INIT_DTI_HANDLE(h_stress))
		dts_churn.handle_err++;
	else
		dts_churn.handle_ok++;
}

/* Arm st_halt's trigger; once it fired, check it let DTS_HALT_COUNT by. */
static void dts_churn_halt(bool *armed)
{
	u64 first, last, records, total = 0;
	unsigned int cpu;
	int level;

	if (!*armed) {
		if (dti_ctl_halt_after("st_halt", DTS_HALT_COUNT)) {
			dts_churn.halt_err++;
			return;
		}
		dts_churn.halt_armed++;
		*armed = true;
		return;
	}
	if (dti_ctl_get_level("st_halt", &level) || level != DTI_LEVEL_OFF)
		return;
	for_each_possible_cpu(cpu) {
		if (dti_ctl_trigger_cpu("st_halt", cpu, &first, &last, &records))
			dts_churn.halt_err++;
		else
			total += records;
	}
	dts_churn.halt_fired++;
	if (total != DTS_HALT_COUNT)
		dts_churn.halt_bad++;
	/* A level change ends the trigger, so it can be armed again. */
	if (dti_ctl_set_level("st_halt", DTI_LEVEL_DEBUG))
		dts_churn.halt_err++;
	*armed = false;
}

static int dts_churn_fn(void *arg)
{
	bool armed = false;
	u32 n;

	while (!kthread_should_stop()) {
		dts_churn.rounds++;
		dts_churn_register();
		dts_churn_handle();
		dts_churn_halt(&armed);
		n = dts_churn.injected++;
		dts_inject_point(n, n * DTS_INJECT_MUL);
		msleep_interruptible(DTS_CHURN_MS);
	}
	return 0;
}

static void dts_unregister_all(void)
{
	unsigned int i;

	CLEANUP_DTI_HANDLE(h_stress);
	if (dts_mark)
		dti_unregister(dts_mark);
	dts_mark = NULL;
	for (i = 0; i < DTS_NR_CH; i++) {
		if (i != DTS_HANDLE && dts_chans[i].info)
			dti_unregister(dts_chans[i].info);
		dts_chans[i].info = NULL;
	}
	dts_registered = false;
}

static int dts_register_all(void)
{
	struct dts_chan *c;
	unsigned int i;
	int ret;

	dts_mark = dti_register(DTS_MARK_NAME, DTS_MARK_SIZE, DTI_LEVEL_DEBUG);
	if (IS_ERR(dts_mark)) {
		ret = PTR_ERR(dts_mark);
		dts_mark = NULL;
		return ret;
	}
	for (i = 0; i < DTS_NR_CH; i++) {
		c = &dts_chans[i];
		if (i == DTS_HANDLE) {
			ret = INIT_DTI_HANDLE(h_stress);
			if (ret)
				goto out_unregister;
			c->info = &h_stress.info;
			continue;
		}
		c->info = dti_register_flags(c->name, c->subbuf_size,
					     c->n_subbufs, DTI_LEVEL_DEBUG,
					     c->flags);
		if (IS_ERR(c->info)) {
			ret = PTR_ERR(c->info);
			c->info = NULL;
			goto out_unregister;
		}
		ret = dti_event_register(c->info, c->ev);
		if (ret)
			goto out_unregister;
	}
	dts_registered = true;
	return 0;

out_unregister:
	dts_unregister_all();
	return ret;
}

static void dts_stop_all(void)
{
	unsigned int cpu;

	WRITE_ONCE(dts_stop, true);
	if (dts_churn_task)
		kthread_stop(dts_churn_task);
	dts_churn_task = NULL;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct dts_cpu *dc = &dts_cpus[cpu];

		if (!dc->started)
			continue;
		kthread_stop(dc->task);
		timer_delete_sync(&dc->timer);
		hrtimer_cancel(&dc->hrtimer);
		dc->started = false;
	}
	/* Waits for NMI handlers running now; none is sent any more. */
	dts_nmi_unregister();
	dts_running = false;
}

static int dts_start(void)
{
	struct dts_cpu *dc;
	unsigned int cpu, ctx;
	int ret;

	if (dts_running || dts_registered)
		return -EBUSY;
	memset(&dts_churn, 0, sizeof(dts_churn));
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(dts_acct, cpu), 0, sizeof(struct dts_acct));
	ret = dts_register_all();
	if (ret)
		return ret;
	ret = dts_nmi_register();
	if (ret)
		goto out_unregister;
	WRITE_ONCE(dts_stop, false);
	dts_running = true;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		dc = &dts_cpus[cpu];
		memset(dc, 0, sizeof(*dc));
		for (ctx = 0; ctx < DTS_NR_CTX; ctx++) {
			dc->w[ctx].home = cpu;
			dc->w[ctx].ctx = ctx;
			dc->w[ctx].rnd = 0x9e3779b9U * (cpu * DTS_NR_CTX + ctx + 1);
		}
		dc->task = kthread_run_on_cpu(dts_proc_fn, dc, cpu, "dts_proc/%u");
		if (IS_ERR(dc->task))
			continue;
		work_on_cpu(cpu, dts_start_timers, dc);
		dc->started = true;
	}
	cpus_read_unlock();
	dts_churn_task = kthread_run(dts_churn_fn, NULL, "dts_churn");
	if (IS_ERR(dts_churn_task)) {
		dts_churn_task = NULL;
		dts_stop_all();
		ret = -ENOMEM;
		goto out_unregister;
	}
	return 0;

out_unregister:
	dts_running = false;
	dts_unregister_all();
	return ret;
}

/*
 * The counters, one line each:
 *   state running|stopped registered 0|1
 *   acct CHANNEL CPU calls filtered stored failed ERR=N...
 *   ctx CONTEXT calls
 *   nmi sent N
 *   churn KEY=N...
 */
static int dts_ctl_show(struct seq_file *m, void *unused)
{
	const struct dts_acct *a;
	u64 ctx[DTS_NR_CTX] = {}, sent = 0;
	unsigned int cpu, ch, e;

	mutex_lock(&dts_lock);
	seq_printf(m, "state %s registered %d\n",
		   dts_running ? "running" : "stopped", dts_registered);
	for_each_possible_cpu(cpu) {
		a = per_cpu_ptr(dts_acct, cpu);
		for (ch = 0; ch < DTS_NR_CH; ch++) {
			seq_printf(m, "acct %s %u calls=%llu filtered=%llu stored=%llu failed=%llu",
				   dts_chans[ch].name, cpu, a->calls[ch],
				   a->filtered[ch], a->stored[ch], a->failed[ch]);
			for (e = 0; e < DTS_NR_ERR; e++)
				seq_printf(m, " %s=%llu", dts_err_name[e],
					   a->err[ch][e]);
			seq_putc(m, '\n');
		}
		for (e = 0; e < DTS_NR_CTX; e++)
			ctx[e] += a->ctx_calls[e];
		sent += a->nmi_sent;
	}
	for (e = 0; e < DTS_NR_CTX; e++)
		seq_printf(m, "ctx %c %llu\n", dts_ctx_char[e], ctx[e]);
	seq_printf(m, "nmi sent %llu\n", sent);
	seq_printf(m, "churn rounds=%llu reg_ok=%llu reg_err=%llu reg_bad=%llu records=%llu handle_ok=%llu handle_err=%llu halt_armed=%llu halt_fired=%llu halt_bad=%llu halt_err=%llu injected=%llu\n",
		   dts_churn.rounds, dts_churn.reg_ok, dts_churn.reg_err,
		   dts_churn.reg_bad, dts_churn.records, dts_churn.handle_ok,
		   dts_churn.handle_err, dts_churn.halt_armed,
		   dts_churn.halt_fired, dts_churn.halt_bad,
		   dts_churn.halt_err, dts_churn.injected);
	mutex_unlock(&dts_lock);
	return 0;
}

static int dts_ctl_open(struct inode *inode, struct file *file)
{
	return single_open(file, dts_ctl_show, NULL);
}

static ssize_t dts_ctl_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char cmd[16];
	int ret = -EINVAL;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	strim(cmd);
	mutex_lock(&dts_lock);
	if (!strcmp(cmd, "start")) {
		ret = dts_start();
	} else if (!strcmp(cmd, "stop")) {
		ret = dts_running ? 0 : -EINVAL;
		if (!ret)
			dts_stop_all();
	} else if (!strcmp(cmd, "release")) {
		ret = dts_running ? -EBUSY : 0;
		if (!ret)
			dts_unregister_all();
	}
	mutex_unlock(&dts_lock);
	return ret ? ret : count;
}

static const struct file_operations dts_ctl_fops = {
	.owner		= THIS_MODULE,
	.open		= dts_ctl_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= dts_ctl_write,
};

static struct dentry *dts_dir;

static int __init dts_init(void)
{
	dts_cpus = kcalloc(nr_cpu_ids, sizeof(*dts_cpus), GFP_KERNEL);
	if (!dts_cpus)
		return -ENOMEM;
	dts_acct = alloc_percpu(struct dts_acct);
	if (!dts_acct) {
		kfree(dts_cpus);
		return -ENOMEM;
	}
	dts_dir = debugfs_create_dir("dti_stress", NULL);
	debugfs_create_file("ctl", 0600, dts_dir, NULL, &dts_ctl_fops);
	return 0;
}

static void __exit dts_exit(void)
{
	debugfs_remove_recursive(dts_dir);
	mutex_lock(&dts_lock);
	if (dts_running)
		dts_stop_all();
	if (dts_registered)
		dts_unregister_all();
	mutex_unlock(&dts_lock);
	free_percpu(dts_acct);
	kfree(dts_cpus);
}

module_init(dts_init);
module_exit(dts_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("DTI stress writers, for make stress");
