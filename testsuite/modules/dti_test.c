// SPDX-License-Identifier: GPL-2.0
/*
 * dti_test - drives the DTI API on demand, for the test suite.
 *
 * Commands are written to /sys/kernel/debug/dti_test/ctl, one per write;
 * the outcome of the last one is read back from the same file as
 * "key=value" pairs, always starting with "ret=<errno or 0>".
 *
 *   register NAME SIZE LEVEL              dti_register()
 *   register_sub NAME SUBSIZE NSUB LEVEL FLAGS   dti_register_flags()
 *   unregister NAME                       dti_unregister()
 *   set_level NAME LEVEL                  dti_set_level()
 *   printk NAME LEVEL COUNT CPU CTX TAG   COUNT records "TAG <i>"
 *   event NAME LEVEL COUNT CPU CTX LEN    COUNT binary records, see below
 *   reserve NAME LEVEL COUNT CPU CTX LEN  the same through __dti_reserve()
 *   evlog NAME LEVEL COUNT CPU CTX TEXT   COUNT events of the types ints and
 *                                         mixed (alternately) into NAME and the
 *                                         same values with dti_printk() into
 *                                         channel TEXT (see dtt_typed())
 *   evreg NAME TYPE                       dti_event_register() of event type
 *                                         TYPE on channel or handle NAME
 *   evbad NAME TYPE                       the same, its error in the result:
 *                                         "ret=0 err=E"
 *   handle_init NAME                      INIT_DTI_HANDLE() of a handle below
 *   hprintk NAME LEVEL COUNT TAG          COUNT records "TAG <i>" to handle NAME,
 *                                         initialised or not, from this CPU
 *   race NAME MS                          log to handle NAME from every other
 *                                         CPU while CLEANUP_DTI_HANDLE() runs
 *   flood NAME MS                         log "flood <cpu> <i>" to NAME from
 *                                         every CPU for 2 * MS ms
 *   floodctx NAME MS                      for MS ms log to NAME on every CPU
 *                                         from a kthread ("flood P<cpu> <i>"),
 *                                         a timer ("flood S<cpu> <i>", softirq)
 *                                         and an hrtimer ("flood H<cpu> <i>",
 *                                         hardirq) -> "calls=N stored=N"
 *   s390_register NAME PAGES AREAS        debug_register() (dti_s390dbf.h)
 *   s390 NAME LEVEL COUNT TAG             debug_sprintf_event() and
 *                                         debug_event() COUNT times each
 *   s390_level NAME LEVEL                 debug_set_level()
 *   ctl_log NAME LEVEL COUNT CPU CTX TAG  dti_ctl_log() text records
 *   ctl_set NAME LEVEL CPU CTX            dti_ctl_set_level()
 *   ctl_create NAME LEVEL CPU CTX SIZE [N] dti_ctl_create(), owned by dti_test;
 *                                         with N, N channels NAME0..NAME<N-1>
 *                                         in one go
 *   ctl_get NAME                          dti_ctl_get_level() -> "level=N"
 *   ctl_release                           dti_ctl_release() -> "released=N"
 *   ctl_halt NAME COUNT                   dti_ctl_halt_after()
 *   ratelimited NAME LEVEL COUNT          COUNT records "rl <i>" through
 *                                         __dti_printk_ratelimited()
 *   ratelimit_rs NAME LEVEL COUNT         the same through __dti_printk_rs()
 *                                         with a limit of 10 a second
 *   devprintk NAME LEVEL                  "probed 7" by __dev_dti_printk()
 *                                         for platform device dti_test_dev.3
 *   context NAME MASK                     dti_set_context() -> "ret=R"
 *   blob NAME LEVEL LEN TYPE              one blob of LEN bytes, byte i
 *                                         (i * 131 + LEN) & 0xff, of media
 *                                         type TYPE ("-": none) -> "ret=R"
 *   ctl_halt_ns NAME NS                   dti_ctl_halt_after_ns() -> "ret=R
 *                                         before=T" (T: the channel's clock
 *                                         just before the call)
 *   badlen NAME LEN                       dti_event_raw(), dti_reserve_raw()
 *                                         and dti_ctl_log() with lengths
 *                                         SIZE_MAX, (size_t)-EINVAL,
 *                                         DTI_PAYLOAD_MAX + 1 and LEN, on a
 *                                         channel or on a handle in any state
 *                                         -> "event=E,E,E,E reserve=N ctl=..
 *                                         guard=ok" (guard: see h_raw)
 *   nest NAME MS                          kprobes inside DTI's write path
 *                                         (dti_nest_syms) log to NAME while
 *                                         "flood NAME MS" runs; per probe
 *                                         "SYM=hits/stored/busy/other"
 *   nmi NAME COUNT                        COUNT self-NMIs whose handler logs
 *                                         "nmi free <i>" to NAME from an idle
 *                                         CPU, then COUNT sent from inside a
 *                                         write to NAME (a kprobe on
 *                                         dti_probe_stored), whose records
 *                                         "nmi inside <i>" must be refused;
 *                                         x86 only, else -EOPNOTSUPP
 *   cross NAME OTHER MS                   two store locks taken in opposite
 *                                         orders (issue 40 item 9): both
 *                                         channels ordered, a kthread on one
 *                                         CPU logs "cross out" records to
 *                                         NAME, one on another CPU to OTHER,
 *                                         for MS; a kprobe on
 *                                         dti_probe_stored(), inside the
 *                                         store's order lock, logs "cross in"
 *                                         to the other channel from each ->
 *                                         "ret=0 outer=N stored=N nested=N
 *                                         other=N nmi=N ftrace=0|1"
 *   evrace NAME                           register event type "race" (id 77,
 *                                         "race %u") on NAME with a write
 *                                         watchpoint on its owner field: the
 *                                         CPU that makes that store waits
 *                                         there (up to DTT_EVRACE_WAIT_MS)
 *                                         while a kthread on another CPU
 *                                         logs "race 1" -> "ret=0 hits=N
 *                                         logged=0|1" (issue 40 item 7)
 *   holdres NAME CPU MS LEN [oops]        a kthread on CPU reserves LEN bytes
 *                                         of NAME (dti_reserve_raw()) and,
 *                                         interrupts still off, waits MS
 *                                         before it fills them with 0xa5 and
 *                                         commits; returns once reserved, or
 *                                         with "oops" oopses then, as "oops"
 *                                         does (this CPU must not be CPU:
 *                                         nothing that needs CPU, an IPI
 *                                         for a fork say, comes in between)
 *   rereg NAME                            unregister NAME in a kthread while
 *                                         registering NAME again here
 *   panicin NAME COUNT                    log up to COUNT records "pw <i>" to
 *                                         NAME from this CPU; a kprobe on
 *                                         dti_subbuf_start() panics the kernel
 *                                         at the first sub-buffer switch, in
 *                                         the middle of the write that makes
 *                                         it (-EAGAIN if none came)
 *   haltin NAME LEVEL                     dti_set_level(NAME, LEVEL) with a
 *                                         kprobe on dti_create_buffers(),
 *                                         which that level change calls before
 *                                         it stores LEVEL: its handler arms
 *                                         NAME's halt trigger for 0 records
 *                                         (dti_ctl_halt_after(), which fires
 *                                         at once) inside the level change;
 *                                         then one record "haltin" is logged
 *                                         -> "ret=0 hits=N armed=E level=L
 *                                         left=T logged=R" (E: what the
 *                                         arming returned, L: the level
 *                                         after, T: dti_ctl_trigger_left(),
 *                                         R: what the record's __dti_printk()
 *                                         returned; issue 52 item 7)
 *   oops [NAME]                           dereference NULL in the writer's
 *                                         context, holding no lock: an oops
 *                                         (a panic with panic_on_oops), which
 *                                         kills the writing process; with
 *                                         NAME, first log "before oops" to
 *                                         NAME on the CPU that oopses
 *   warn NAME [inres]                     log "before warn" to NAME, then
 *                                         WARN() on the same CPU, then log
 *                                         "after warn" -> "ret=0 cpu=C
 *                                         after=E res=R" (E: what the last
 *                                         __dti_printk() returned); with
 *                                         inres the WARN() is raised inside
 *                                         a reservation of NAME (its write
 *                                         guard held, interrupts off), whose
 *                                         DTT_WARN_RES_LEN bytes of 0xa5 are
 *                                         committed after it (R: 1 if it was
 *                                         reserved; -1 without inres)
 *   stop NAME|@all                        dti_stop() of NAME, or dti_stop_all()
 *   exception NAME LEVEL TAG [all]        dti_exception() ("TAG") on handle
 *                                         NAME, or __dti_exception() on
 *                                         channel NAME; with all the _all form
 *   scribble PHYS LEN BYTE                fill LEN bytes of reserved RAM at
 *                                         physical address PHYS with BYTE
 *                                         (damage in the persistent region)
 *   forge PHYS SIZE SEED                  rewrite the persistent region at
 *                                         PHYS (SIZE bytes) the way SEED picks
 *                                         (dtt_forge_kinds[SEED % N]), in the
 *                                         area of a slot written last, with
 *                                         what comes before the forged part
 *                                         still passing (slot CRCs sealed
 *                                         again, sub-buffer numbers in their
 *                                         slot's class) -> "ret=0 kind=K ..."
 *                                         (test_persist.py)
 *   forge_count PHYS SIZE CPU COUNT       in the same area, make the header of
 *                                         CPU's newest sub-buffer count COUNT
 *                                         records (a count that reached RAM
 *                                         before the records it counts)
 *   hotreg NAME CPU                       bring offline CPU up in a kthread,
 *                                         and register NAME (dti_register())
 *                                         while the CPU is held between
 *                                         relay's prepare step and coming
 *                                         online (up to DTT_HOTREG_HOLD_MS)
 *   badapi CASE [hardirq|nmi]             one call of the DTI API with a bad
 *                                         argument (dtt_bad_cases[]), in process
 *                                         context, a hard hrtimer or an NMI
 *                                         this CPU sends itself (x86 only,
 *                                         else -EOPNOTSUPP) -> "got=V":
 *                                         its return, DTT_BAD_NULL for NULL;
 *                                         needs channels "bk" and "bs"
 *                                         (test_bad_input_api.py)
 *
 * Lifecycle faults (test_lifecycle.py):
 *   bgflood NAME                          as floodctx, but the writers keep
 *                                         logging until "bgstop" or until
 *                                         the module is unloaded; at unload
 *                                         a handle is cleaned up while they
 *                                         still run, a channel after they
 *                                         stopped (dti_unregister()'s rule)
 *   bgstop                                stop them -> as floodctx's result
 *   hlevel HANDLE LEVEL                   dti_set_level() on a handle in any
 *                                         state (after a cleanup, say)
 *   failnth N CMD ARGS...                 run CMD with this task's N-th
 *                                         fault-injection call failing
 *                                         (fail_nth, CONFIG_FAULT_INJECTION)
 *                                         -> "ret=0 err=E injected=0|1";
 *                                         ret=-EOPNOTSUPP without it
 *   failwork N HANDLE TAG                 the same for the next run of DTI's
 *                                         work item (a kretprobe on
 *                                         dti_create_work sets the worker's
 *                                         fail_nth): log "TAG" to HANDLE, wait
 *                                         for the work -> "ret=0 ran=1
 *                                         injected=0|1"
 *
 * Four handles are defined here: h_demand (DEFINE_DTI_HANDLE), h_early
 * (DEFINE_DTI_EARLY_HANDLE, 4 KiB static buffer), h_raw (an early
 * handle whose 1 KiB pending store is followed by a guard pattern; not
 * initialised at load) and h_persist (DEFINE_DTI_PERSIST_HANDLE, 16 KiB
 * per CPU; not initialised at load).  At load, the module logs "early <i>" records
 * (module parameter early=, default 20) to h_early before initialising
 * it, then initialises h_early and h_demand; "unregister" on a handle is
 * CLEANUP_DTI_HANDLE(), "handle_init h_raw" initialises h_raw.
 *
 * NAME may be "@empty" for "" and "@null" for NULL.  CPU is a CPU
 * number or -1 for whichever CPU the command runs on.  CTX is "process"
 * (a kworker bound to CPU), "softirq" (a timer on CPU) or "hardirq" (a
 * pinned hard hrtimer on CPU).  Binary payload i of length LEN holds i as
 * a little-endian u32 in its first four bytes and (i + j) & 0xff in byte
 * j after that; LEN is at most DTI_PAYLOAD_MAX, the largest payload of
 * the largest sub-buffers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/crc32.h>
#include <linux/debugfs.h>
#include <linux/dti.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/hw_breakpoint.h>
#include <linux/delay.h>
#include <linux/dti_s390dbf.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#ifdef CONFIG_X86
#include <asm/apic.h>
#include <asm/nmi.h>
#endif

#include "dti_compat.h"

#define DTT_MAX_CHANNELS	16
#define DTT_CMD_MAX		256
#define DTT_RESULT_MAX		512
#define DTT_ARGS_MAX		8
#define DTT_TAG_MAX		64

enum dtt_kind {
	DTT_PRINTK, DTT_EVENT, DTT_RESERVE,
	DTT_CTL_LOG, DTT_CTL_SET, DTT_CTL_CREATE, DTT_TYPED,
};
enum dtt_ctx { DTT_PROCESS, DTT_SOFTIRQ, DTT_HARDIRQ };

static const char *const dtt_ctx_names[] = {
	[DTT_PROCESS] = "process",
	[DTT_SOFTIRQ] = "softirq",
	[DTT_HARDIRQ] = "hardirq",
};

#define DTT_EARLY_BUF_SIZE	4096
#define DTT_S390_DATA_LEN	8

struct dtt_channel {
	char name[DTI_NAME_MAX + 1];
	struct dti_info *trace;
	struct dti_handle *handle;	/* for handles */
	bool s390;			/* registered through dti_s390dbf.h */
};

DEFINE_DTI_HANDLE(h_demand, "h_demand", 64 * 1024, DTI_LEVEL_DEBUG);
static u64 h_early_buf[DTT_EARLY_BUF_SIZE / sizeof(u64)];
DEFINE_DTI_EARLY_HANDLE(h_early, "h_early", 64 * 1024, DTI_LEVEL_DEBUG,
			h_early_buf, sizeof(h_early_buf));

#define DTT_RAW_PENDING_SIZE	1024
#define DTT_GUARD_WORDS		8
#define DTT_GUARD_PATTERN	0x5a5aa5a5deadbeefULL

/* h_raw's pending store, and a guard pattern right after it. */
static struct {
	u64 buf[DTT_RAW_PENDING_SIZE / sizeof(u64)];
	u64 guard[DTT_GUARD_WORDS];
} h_raw_store = {
	.guard = { [0 ... DTT_GUARD_WORDS - 1] = DTT_GUARD_PATTERN },
};
DEFINE_DTI_EARLY_HANDLE(h_raw, "h_raw", 64 * 1024, DTI_LEVEL_DEBUG,
			h_raw_store.buf, sizeof(h_raw_store.buf));

DEFINE_DTI_PERSIST_HANDLE(h_persist, "h_persist", 16 * 1024, DTI_LEVEL_DEBUG);

static struct dti_handle *const dtt_handles[] = { &h_demand, &h_early, &h_raw, &h_persist };

static unsigned int early = 20;
module_param(early, uint, 0444);
MODULE_PARM_DESC(early, "records logged to h_early before its init");

struct dtt_job {
	struct dti_info *trace;
	enum dtt_kind kind;
	enum dtt_ctx ctx;
	int level;
	unsigned int count;
	size_t len;
	char tag[DTT_TAG_MAX];
	u8 *payload;
	const char *name;		/* for DTT_CTL_* */
	struct dti_info *text;		/* DTT_TYPED: the dti_printk() twin */
	/* results */
	unsigned int stored;
	unsigned int filtered;
	unsigned int errors;
	int first_err;
	int ran_cpu;
	bool ctx_ok;
	struct completion done;
	struct timer_list timer;
	struct hrtimer hrtimer;
};

static struct dtt_channel dtt_channels[DTT_MAX_CHANNELS];
static DEFINE_MUTEX(dtt_lock);		/* one command at a time */
static char dtt_result[DTT_RESULT_MAX];
static struct dentry *dtt_dir;

static const char *dtt_name_arg(const char *arg)
{
	if (!strcmp(arg, "@null"))
		return NULL;
	if (!strcmp(arg, "@empty"))
		return "";
	return arg;
}

static struct dtt_channel *dtt_find(const char *name)
{
	int i;

	for (i = 0; i < DTT_MAX_CHANNELS; i++) {
		if (dtt_channels[i].trace && !strcmp(dtt_channels[i].name, name))
			return &dtt_channels[i];
	}
	return NULL;
}

static struct dtt_channel *dtt_free_slot(void)
{
	int i;

	for (i = 0; i < DTT_MAX_CHANNELS; i++) {
		if (!dtt_channels[i].trace)
			return &dtt_channels[i];
	}
	return NULL;
}

static void dtt_fill_payload(u8 *p, size_t len, unsigned int i)
{
	size_t j;

	for (j = 0; j < len; j++)
		p[j] = (i + j) & 0xff;
	if (len >= sizeof(u32))
		put_unaligned_le32(i, p);
}

/*
 * Event types covering every conversion DTI supports: "evreg CH TYPE"
 * registers one, "evlog CH LEVEL COUNT CPU CTX TEXTCH" logs events of
 * both into CH and, with the same template and values, dti_printk()
 * records into TEXTCH.
 */
DEFINE_DTI_EVENT(dtt_ev_ints, 1, "ints",
		 "s8 %hhd u8 %hhu x8 %hhx s16 %hd u16 %hu x16 %#hx s32 %d u32 %u x32 %08x X32 %X s64 %lld u64 %llu x64 %#llx l %ld i %+5i n %u\n");
DEFINE_DTI_EVENT(dtt_ev_mixed, 2, "mixed",
		 "ptr %px str '%s' w '%-6s|%5.2s' hex %*ph hc %*phC pct 100%% n %u");
/* Malformed or conflicting registrations, by "evbad CH CASE" */
DEFINE_DTI_EVENT(dtt_ev_dupid, 1, "dupid", "dup %d");
DEFINE_DTI_EVENT(dtt_ev_dupname, 3, "ints", "dup %d");
DEFINE_DTI_EVENT(dtt_ev_conv, 4, "conv", "char %c");
DEFINE_DTI_EVENT(dtt_ev_hashed, 5, "hashed", "ptr %p");
DEFINE_DTI_EVENT(dtt_ev_lenstr, 6, "lenstr", "str %ls");
DEFINE_DTI_EVENT(dtt_ev_many, 7, "many",
		 "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d");
DEFINE_DTI_EVENT(dtt_ev_badname, 8, "bad name", "x %d");
DEFINE_DTI_EVENT(dtt_ev_wide, 10, "wide",
		 "a template long enough that its format record does not fit a quarter of a 512-byte sub-buffer, "
		 "whatever the rest: %d");
/* A BPF program's events (examples/bpf/dti_bpf_log.bpf.c -e 11) */
DEFINE_DTI_EVENT(dtt_ev_pair, 11, "pair", "bpf event %llu cpu %llu");
static struct dti_event_type dtt_ev_long = { .id = 9, .name = "long" };
static char dtt_long_fmt[DTI_EVENT_FMT_MAX + 2];

static struct dti_handle *dtt_handle(const char *name);

static struct dti_event_type *dtt_event_type(const char *name)
{
	static struct dti_event_type *const all[] = {
		&dtt_ev_ints, &dtt_ev_mixed, &dtt_ev_dupid, &dtt_ev_dupname,
		&dtt_ev_conv, &dtt_ev_hashed, &dtt_ev_lenstr, &dtt_ev_many,
		&dtt_ev_badname, &dtt_ev_long, &dtt_ev_wide, &dtt_ev_pair,
	};
	unsigned int i;

	if (!dtt_long_fmt[0]) {
		memset(dtt_long_fmt, 'x', sizeof(dtt_long_fmt) - 1);
		dtt_ev_long.fmt = dtt_long_fmt;
	}
	for (i = 0; i < ARRAY_SIZE(all); i++)
		if (!strcmp(all[i] == &dtt_ev_badname ? "badname" : all[i]->name, name) ||
		    (all[i] == &dtt_ev_dupname && !strcmp(name, "dupname")))
			return all[i];
	return NULL;
}

/* "evreg CH TYPE": 0 or the error; "evbad CH TYPE": the error in the result */
static int dtt_cmd_evreg(char **argv, bool bad)
{
	struct dtt_channel *c = dtt_find(argv[1]);
	struct dti_event_type *t = dtt_event_type(argv[2]);
	struct dti_handle *h = dtt_handle(argv[1]);
	int ret;

	/* a handle not initialised yet has no channel to register on */
	if ((!c && !h) || !t)
		return -ENOENT;
	ret = dti_event_register(c ? c->trace : &h->info, t);
	if (!bad)
		return ret;
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 err=%d\n", ret);
	return 0;
}

/*
 * Values of event @i: the extremes for i % 4 == 0 and 1, others from @i;
 * strings of every length from empty to DTI_EVENT_STR_MAX, byte arrays
 * from none to DTI_EVENT_HEX_MAX bytes.
 */
static int dtt_typed(struct dtt_job *job, unsigned int i)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	char str[DTI_EVENT_STR_MAX + 1];
	u8 hex[DTI_EVENT_HEX_MAX];
	/* the mixed events are the odd ones: i / 2 counts them */
	unsigned int k, slen = i / 2 % (DTI_EVENT_STR_MAX + 1);
	unsigned int hlen = i / 2 % (DTI_EVENT_HEX_MAX + 1);
	s8 a = i % 4 == 0 ? S8_MIN : i % 4 == 1 ? S8_MAX : (s8)(i * 37);
	u8 b = i % 4 == 0 ? 0 : i % 4 == 1 ? U8_MAX : (u8)(i * 11);
	s16 c = i % 4 == 0 ? S16_MIN : i % 4 == 1 ? S16_MAX : (s16)(i * 4099);
	u16 d = i % 4 == 0 ? 0 : i % 4 == 1 ? U16_MAX : (u16)(i * 7919);
	s32 e = i % 4 == 0 ? S32_MIN : i % 4 == 1 ? S32_MAX : (s32)(i * 2654435761u);
	u32 f = i % 4 == 0 ? 0 : i % 4 == 1 ? U32_MAX : i * 40503u;
	s64 g = i % 4 == 0 ? S64_MIN : i % 4 == 1 ? S64_MAX : (s64)(i * 0x9e3779b97f4a7c15ull);
	u64 h = i % 4 == 0 ? 0 : i % 4 == 1 ? U64_MAX : i * 0x100000001b3ull;
	long l = i % 2 ? LONG_MIN : (long)i * -3;
	void *ptr = (void *)(unsigned long)(i * 0xffff888000001000ull);
	int ret;

	for (k = 0; k < slen; k++)
		str[k] = letters[(i + k) % (sizeof(letters) - 1)];
	str[slen] = '\0';
	for (k = 0; k < hlen; k++)
		hex[k] = i * 3 + k;
	if (i % 2 == 0) {
		ret = __dti_log_event(job->trace, job->level, dtt_ev_ints, a, b, b, c, d, d,
				      e, f, f, f, g, h, h, l, e, i);
		__dti_printk(job->text, job->level, dtt_ev_ints__dti_fmt, a, b, b, c, d, d,
			     e, f, f, f, g, h, h, l, e, i);
	} else {
		ret = __dti_log_event(job->trace, job->level, dtt_ev_mixed, ptr, str, str,
				      str, (int)hlen, hex, (int)(hlen / 2), hex, i);
		__dti_printk(job->text, job->level, dtt_ev_mixed__dti_fmt, ptr, str, str,
			     str, (int)hlen, hex, (int)(hlen / 2), hex, i);
	}
	return ret;
}

/* Identifies the channels this module creates through dti_ctl_create(). */
static char dtt_owner;

static int dtt_write_one(struct dtt_job *job, unsigned int i)
{
	char text[DTT_TAG_MAX + 16];
	unsigned long flags;
	int len;
	void *p;

	switch (job->kind) {
	case DTT_PRINTK:
		return __dti_printk(job->trace, job->level, "%s %u\n",
				    job->tag, i);
	case DTT_EVENT:
		dtt_fill_payload(job->payload, job->len, i);
		return __dti_event(job->trace, job->level, job->payload,
				   job->len);
	case DTT_RESERVE:
		local_irq_save(flags);
		p = __dti_reserve(job->trace, job->level, job->len);
		if (p) {
			dtt_fill_payload(p, job->len, i);
			__dti_commit(job->trace, p);
		}
		local_irq_restore(flags);
		return p ? 0 : -ENOSPC;
	case DTT_CTL_LOG:
		len = scnprintf(text, sizeof(text), "%s %u\n", job->tag, i);
		return dti_ctl_log(job->name, job->level, true, text, len,
				   _THIS_IP_);
	case DTT_CTL_SET:
		return dti_ctl_set_level(job->name, job->level);
	case DTT_CTL_CREATE:
		if (job->count == 1)
			return dti_ctl_create(job->name, job->len, job->level, &dtt_owner);
		scnprintf(text, sizeof(text), "%s%u", job->name, i);
		return dti_ctl_create(text, job->len, job->level, &dtt_owner);
	case DTT_TYPED:
		return dtt_typed(job, i);
	}
	return -EINVAL;
}

static void dtt_run(struct dtt_job *job, bool ctx_ok)
{
	unsigned int i;
	int ret;

	job->ran_cpu = raw_smp_processor_id();
	job->ctx_ok = ctx_ok;
	for (i = 0; i < job->count; i++) {
		ret = dtt_write_one(job, i);
		if (ret == 1) {
			job->filtered++;
		} else if (ret) {
			if (!job->errors)
				job->first_err = ret;
			job->errors++;
		} else {
			job->stored++;
		}
	}
}

static void dtt_timer_fn(struct timer_list *t)
{
	struct dtt_job *job = timer_container_of(job, t, timer);

	dtt_run(job, in_serving_softirq() && !in_hardirq());
	complete(&job->done);
}

static enum hrtimer_restart dtt_hrtimer_fn(struct hrtimer *t)
{
	struct dtt_job *job = container_of(t, struct dtt_job, hrtimer);

	dtt_run(job, in_hardirq());
	complete(&job->done);
	return HRTIMER_NORESTART;
}

/* Runs on the chosen CPU in process context. */
static long dtt_on_cpu(void *arg)
{
	struct dtt_job *job = arg;

	switch (job->ctx) {
	case DTT_PROCESS:
		dtt_run(job, !in_interrupt() && !irqs_disabled());
		complete(&job->done);
		break;
	case DTT_SOFTIRQ:
		timer_setup(&job->timer, dtt_timer_fn, 0);
		job->timer.expires = jiffies;
		add_timer_on(&job->timer, raw_smp_processor_id());
		break;
	case DTT_HARDIRQ:
		hrtimer_setup(&job->hrtimer, dtt_hrtimer_fn, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
		hrtimer_start(&job->hrtimer, ns_to_ktime(NSEC_PER_USEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
		break;
	}
	return 0;
}

static int dtt_parse_ctx(const char *s, enum dtt_ctx *ctx)
{
	int i = match_string(dtt_ctx_names, ARRAY_SIZE(dtt_ctx_names), s);

	if (i < 0)
		return i;
	*ctx = i;
	return 0;
}

/* Run @job on @cpu (-1: this one) in its context; free it. */
static int dtt_job_run(struct dtt_job *job, int cpu)
{
	int ret = 0;

	if (cpu < 0)
		cpu = raw_smp_processor_id();
	if (cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		ret = -ENXIO;
		goto out;
	}
	work_on_cpu(cpu, dtt_on_cpu, job);
	wait_for_completion(&job->done);
	/* The callback may still be returning after complete(). */
	if (job->ctx == DTT_SOFTIRQ)
		timer_delete_sync(&job->timer);
	if (job->ctx == DTT_HARDIRQ)
		hrtimer_cancel(&job->hrtimer);

	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=0 stored=%u errors=%u first_err=%d filtered=%u cpu=%d ctx=%s ctx_ok=%d\n",
		  job->stored, job->errors, job->first_err, job->filtered,
		  job->ran_cpu, dtt_ctx_names[job->ctx], job->ctx_ok);
out:
	kvfree(job->payload);
	kfree(job);
	return ret;
}

static struct dtt_job *dtt_job_alloc(enum dtt_kind kind, const char *level,
				     const char *ctx)
{
	struct dtt_job *job = kzalloc(sizeof(*job), GFP_KERNEL);

	if (!job)
		return ERR_PTR(-ENOMEM);
	job->kind = kind;
	job->count = 1;
	init_completion(&job->done);
	if (kstrtoint(level, 0, &job->level) ||
	    dtt_parse_ctx(ctx, &job->ctx)) {
		kfree(job);
		return ERR_PTR(-EINVAL);
	}
	return job;
}

static int dtt_cmd_write(enum dtt_kind kind, char **argv, int argc)
{
	struct dtt_channel *c = NULL;
	struct dtt_job *job;
	int cpu, ret;

	if (argc != 7)
		return -EINVAL;
	if (kind != DTT_CTL_LOG) {
		c = dtt_find(argv[1]);
		if (!c)
			return -ENOENT;
	}
	job = dtt_job_alloc(kind, argv[2], argv[5]);
	if (IS_ERR(job))
		return PTR_ERR(job);
	job->trace = c ? c->trace : NULL;
	job->name = dtt_name_arg(argv[1]);
	ret = kstrtouint(argv[3], 0, &job->count);
	if (!ret)
		ret = kstrtoint(argv[4], 0, &cpu);
	if (ret)
		goto err_free;
	if (kind == DTT_PRINTK || kind == DTT_CTL_LOG) {
		strscpy(job->tag, argv[6], sizeof(job->tag));
	} else if (kind == DTT_TYPED) {
		ret = -ENOENT;
		if (!dtt_find(argv[6]))
			goto err_free;
		job->text = dtt_find(argv[6])->trace;
	} else {
		ret = kstrtoul(argv[6], 0, &job->len);
		if (ret || job->len > DTI_PAYLOAD_MAX) {
			ret = -EINVAL;
			goto err_free;
		}
		job->payload = kvmalloc(max_t(size_t, job->len, 1), GFP_KERNEL);
		if (!job->payload) {
			ret = -ENOMEM;
			goto err_free;
		}
	}
	return dtt_job_run(job, cpu);

err_free:
	kvfree(job->payload);
	kfree(job);
	return ret;
}

/* ctl_set NAME LEVEL CPU CTX, ctl_create NAME LEVEL CPU CTX SIZE [N] */
static int dtt_cmd_ctl(enum dtt_kind kind, char **argv, int argc)
{
	struct dtt_job *job;
	int cpu, ret;

	if (kind == DTT_CTL_CREATE ? argc != 6 && argc != 7 : argc != 5)
		return -EINVAL;
	job = dtt_job_alloc(kind, argv[2], argv[4]);
	if (IS_ERR(job))
		return PTR_ERR(job);
	job->name = dtt_name_arg(argv[1]);
	ret = kstrtoint(argv[3], 0, &cpu);
	if (!ret && kind == DTT_CTL_CREATE)
		ret = kstrtoul(argv[5], 0, &job->len);
	if (!ret && argc == 7)
		ret = kstrtouint(argv[6], 0, &job->count);
	if (!ret && !job->count)
		ret = -EINVAL;
	if (ret) {
		kfree(job);
		return ret;
	}
	return dtt_job_run(job, cpu);
}

static int dtt_add(const char *name, struct dti_info *trace,
		   struct dti_handle *handle, bool s390)
{
	struct dtt_channel *c = dtt_free_slot();

	if (!c)
		return -ENOSPC;
	strscpy(c->name, name, sizeof(c->name));
	c->trace = trace;
	c->handle = handle;
	c->s390 = s390;
	return 0;
}

static struct dti_handle *dtt_handle(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(dtt_handles); i++) {
		if (!strcmp(dtt_handles[i]->name, name))
			return dtt_handles[i];
	}
	return NULL;
}

static int dtt_handle_init(const char *name)
{
	struct dti_handle *h = dtt_handle(name);
	int ret;

	if (!h)
		return -ENOENT;
	if (dtt_find(name))
		return -EBUSY;
	ret = INIT_DTI_HANDLE(*h);
	if (ret)
		return ret;
	return dtt_add(name, &h->info, h, false);
}

/*
 * @len bytes of reserved RAM at @phys mapped, or ERR_PTR(-EPERM) for
 * RAM the kernel manages, ERR_PTR(-ENOMEM) if it cannot be mapped.
 */
static void *dtt_map_reserved(unsigned long long phys, unsigned long long len)
{
	void *p;

	if (region_intersects(phys, len, IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE) !=
	    REGION_DISJOINT)
		return ERR_PTR(-EPERM);
	p = memremap(phys, len, MEMREMAP_WB);
	return p ? p : ERR_PTR(-ENOMEM);
}

/* scribble: damage reserved RAM, which the kernel does not manage. */
static int dtt_cmd_scribble(char **argv)
{
	unsigned long long phys;
	unsigned int len, byte;
	void *p;

	if (kstrtoull(argv[1], 0, &phys) || kstrtouint(argv[2], 0, &len) ||
	    kstrtouint(argv[3], 0, &byte) || !len || byte > 0xff)
		return -EINVAL;
	p = dtt_map_reserved(phys, len);
	if (IS_ERR(p))
		return PTR_ERR(p);
	memset(p, byte, len);
	memunmap(p);
	return 0;
}

/*
 * forge: adversarial persistent regions.  Each kind rewrites one thing
 * the loader must not trust, leaving the checks before it passing, so
 * that the load reaches the code that uses it.
 */
enum dtt_forge_kind {
	DTT_FORGE_TOP,		/* one sub-buffer numbered U64_MAX */
	DTT_FORGE_SHIFT,	/* a CPU's whole ring moved near U64_MAX */
	DTT_FORGE_EDGE,		/* a CPU's ring moved to around SIZE_MAX / 2 */
	DTT_FORGE_RANDOM_SEQ,	/* random sub-buffer numbers */
	DTT_FORGE_AREA,		/* a random field of the area, CRC sealed */
	DTT_FORGE_INFO,		/* a sub-buffer header's count, padding, state */
	DTT_FORGE_RECORD,	/* a record header's length, CPU, level, flags */
	DTT_FORGE_BYTES,	/* random bytes anywhere in the rings */
	DTT_FORGE_SLOT,		/* the slot's size and name, CRC sealed */
	DTT_FORGE_KINDS
};

static const char *const dtt_forge_names[DTT_FORGE_KINDS] = {
	"top", "shift", "edge", "random-seq", "area", "info", "record", "bytes", "slot",
};

struct dtt_forge {
	struct dti_persist_header *hdr;
	struct dti_persist_slot *slot;
	struct dti_persist_area *area;
	u64 stride;
	u64 state;		/* xorshift64 */
	char *what;
	size_t what_len;
};

static u64 dtt_rand(struct dtt_forge *f)
{
	f->state ^= f->state << 13;
	f->state ^= f->state >> 7;
	f->state ^= f->state << 17;
	return f->state;
}

static u64 dtt_rand_below(struct dtt_forge *f, u64 n)
{
	return n ? dtt_rand(f) % n : 0;
}

static void dtt_forge_seal(struct dti_persist_slot *slot)
{
	slot->crc = 0;
	slot->crc = ~crc32_le(~0U, (const u8 *)slot, sizeof(*slot));
}

static struct dti_record *dtt_forge_sub(struct dtt_forge *f, unsigned int cpu, u64 idx)
{
	return (void *)f->hdr + f->area->offset + cpu * f->stride + idx * f->area->subbuf_size;
}

/* The largest number at or below @top that slot @idx of @n holds */
static u64 dtt_forge_in_class(u64 top, u64 idx, u64 n)
{
	u64 rem = top % n;

	return rem >= idx ? top - (rem - idx) : top - rem - (n - idx);
}

/* Move every sub-buffer of CPU @cpu by the same multiple of n, so its newest is near @top */
static void dtt_forge_move(struct dtt_forge *f, unsigned int cpu, u64 top)
{
	u64 n = f->area->n_subbufs, idx, newest = 0, delta;
	struct dti_record *rec;

	for (idx = 0; idx < n; idx++)
		newest = max(newest, dtt_forge_sub(f, cpu, idx)->seq);
	delta = (top - newest) / n * n;
	for (idx = 0; idx < n; idx++) {
		rec = dtt_forge_sub(f, cpu, idx);
		rec->seq += delta;
	}
	scnprintf(f->what, f->what_len, "cpu=%u newest=%llu", cpu, newest + delta);
}

static void dtt_forge_apply(struct dtt_forge *f, enum dtt_forge_kind kind)
{
	struct dti_persist_area *area = f->area;
	u64 n = area->n_subbufs, size = area->subbuf_size;
	unsigned int cpu = dtt_rand_below(f, area->nr_cpus);
	u64 idx = dtt_rand_below(f, n), r = dtt_rand(f), off;
	struct dti_record *sub = dtt_forge_sub(f, cpu, idx);
	struct dti_subbuf_info *info = (void *)(sub + 1);
	unsigned int i;
	u8 *p;

	switch (kind) {
	case DTT_FORGE_TOP:
		/* U64_MAX itself, in the slot it belongs to: newest + 1 wraps */
		idx = U64_MAX % n;
		sub = dtt_forge_sub(f, cpu, idx);
		sub->seq = U64_MAX;
		scnprintf(f->what, f->what_len, "cpu=%u slot=%llu seq=%llu", cpu, idx, sub->seq);
		break;
	case DTT_FORGE_SHIFT:
		dtt_forge_move(f, cpu, U64_MAX - dtt_rand_below(f, 4) * n);
		break;
	case DTT_FORGE_EDGE:
		dtt_forge_move(f, cpu, (u64)(SIZE_MAX / 2) - n + dtt_rand_below(f, 2 * n + 1));
		break;
	case DTT_FORGE_RANDOM_SEQ:
		for (i = 0; i < n; i++) {
			sub = dtt_forge_sub(f, cpu, dtt_rand_below(f, n));
			sub->seq = dtt_rand(f);
			if (i & 1)
				sub->seq = dtt_forge_in_class(sub->seq, (sub->seq >> 7) % n, n);
		}
		scnprintf(f->what, f->what_len, "cpu=%u", cpu);
		break;
	case DTT_FORGE_AREA:
		switch (r % 6) {
		case 0: area->offset = dtt_rand(f) & (r & 1 ? ~0xfffULL : ~0ULL); break;
		case 1: area->generation = dtt_rand(f); break;
		case 2: area->subbuf_size = r & 1 ? dtt_rand(f) : size * 2; break;
		case 3: area->n_subbufs = r & 1 ? dtt_rand(f) : n * 2; break;
		case 4: area->nr_cpus = r & 1 ? dtt_rand(f) : area->nr_cpus * 64; break;
		default: area->boot = dtt_rand(f); break;
		}
		dtt_forge_seal(f->slot);
		scnprintf(f->what, f->what_len, "field=%llu", r % 6);
		break;
	case DTT_FORGE_INFO:
		info->records = r & 1 ? U32_MAX : dtt_rand(f);
		info->padding = r & 2 ? size - DTI_SUBBUF_HEADER_SIZE : dtt_rand(f);
		if (r & 4)
			info->state = dtt_rand(f) & 3;
		scnprintf(f->what, f->what_len, "cpu=%u slot=%llu records=%u padding=%u state=%u",
			  cpu, idx, info->records, info->padding, info->state);
		break;
	case DTT_FORGE_RECORD:
		off = DTI_SUBBUF_HEADER_SIZE + dtt_rand_below(f, (size - DTI_SUBBUF_HEADER_SIZE) /
							  DTI_RECORD_ALIGN) * DTI_RECORD_ALIGN;
		if (off + sizeof(*sub) > size)
			off = DTI_SUBBUF_HEADER_SIZE;
		sub = (void *)sub + off;
		sub->magic = DTI_RECORD_MAGIC;
		sub->version = DTI_RECORD_VERSION;
		sub->hdr_len = sizeof(*sub);
		sub->len = r & 1 ? U32_MAX - (u32)dtt_rand_below(f, 64) : dtt_rand(f);
		if (r & 2)
			sub->cpu = dtt_rand(f);
		if (r & 4)
			sub->level = dtt_rand(f);
		if (r & 8)
			sub->flags = dtt_rand(f);
		scnprintf(f->what, f->what_len, "cpu=%u slot=%llu off=%llu len=%u", cpu, idx, off,
			  sub->len);
		break;
	case DTT_FORGE_BYTES:
		off = dtt_rand_below(f, f->stride * area->nr_cpus - 64);
		p = (u8 *)f->hdr + area->offset + off;
		for (i = 0; i < 64; i++)
			p[i] = dtt_rand(f);
		scnprintf(f->what, f->what_len, "off=%llu", off);
		break;
	case DTT_FORGE_SLOT:
		if (r & 1)
			memset(f->slot->name, 'x', sizeof(f->slot->name));
		else
			f->slot->area_size = dtt_rand(f);
		dtt_forge_seal(f->slot);
		scnprintf(f->what, f->what_len, "%s", r & 1 ? "name" : "area_size");
		break;
	default:
		break;
	}
}

/* The used area written last in the region, with its slot; false if none */
static bool dtt_forge_target(struct dtt_forge *f, u64 size)
{
	struct dti_persist_slot *slots = (void *)f->hdr + sizeof(*f->hdr);
	struct dti_persist_area *a;
	unsigned int i, j;

	f->area = NULL;
	for (i = 0; i < DTI_PERSIST_SLOTS; i++) {
		for (j = 0; j < ARRAY_SIZE(slots[i].area) && slots[i].name[0]; j++) {
			a = &slots[i].area[j];
			if (a->state != DTI_PERSIST_AREA_USED || (f->area && a->boot <= f->area->boot))
				continue;
			f->slot = &slots[i];
			f->area = a;
		}
	}
	if (!f->area)
		return false;
	f->stride = PAGE_ALIGN((u64)f->area->subbuf_size * f->area->n_subbufs);
	return f->area->n_subbufs && f->area->nr_cpus &&
	       f->area->offset + f->stride * f->area->nr_cpus <= size;
}

/* Map the region at PHYS (@argv[1]) of SIZE (@argv[2]) bytes and find the area to forge */
static int dtt_forge_map(struct dtt_forge *f, char **argv)
{
	unsigned long long phys, size;

	if (kstrtoull(argv[1], 0, &phys) || kstrtoull(argv[2], 0, &size) ||
	    size < sizeof(*f->hdr))
		return -EINVAL;
	f->hdr = dtt_map_reserved(phys, size);
	if (IS_ERR(f->hdr))
		return PTR_ERR(f->hdr);
	if (f->hdr->magic != DTI_PERSIST_MAGIC || !dtt_forge_target(f, size)) {
		memunmap(f->hdr);
		return -ENOENT;
	}
	return 0;
}

static int dtt_cmd_forge(char **argv)
{
	char what[128] = "";
	struct dtt_forge f = { .what = what, .what_len = sizeof(what) };
	enum dtt_forge_kind kind;
	unsigned long long seed;
	int ret;

	if (kstrtoull(argv[3], 0, &seed))
		return -EINVAL;
	ret = dtt_forge_map(&f, argv);
	if (ret)
		return ret;
	f.state = seed * 0x9e3779b97f4a7c15ULL + 1;
	kind = seed % DTT_FORGE_KINDS;
	dtt_forge_apply(&f, kind);
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 kind=%s %s\n",
		  dtt_forge_names[kind], what);
	memunmap(f.hdr);
	return 0;
}

static int dtt_cmd_forge_count(char **argv)
{
	struct dtt_forge f = {};
	struct dti_record *sub, *newest = NULL;
	struct dti_subbuf_info *info;
	unsigned int cpu, count;
	u64 idx;
	int ret;

	if (kstrtouint(argv[3], 0, &cpu) || kstrtouint(argv[4], 0, &count))
		return -EINVAL;
	ret = dtt_forge_map(&f, argv);
	if (ret)
		return ret;
	if (cpu >= f.area->nr_cpus) {
		ret = -EINVAL;
		goto out;
	}
	for (idx = 0; idx < f.area->n_subbufs; idx++) {
		sub = dtt_forge_sub(&f, cpu, idx);
		if (sub->magic == DTI_RECORD_MAGIC && (sub->flags & DTI_REC_SUBBUF) &&
		    (!newest || sub->seq > newest->seq))
			newest = sub;
	}
	if (!newest) {
		ret = -ENOENT;
		goto out;
	}
	info = (void *)(newest + 1);
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 subbuf=%llu records=%u\n",
		  newest->seq, info->records);
	info->records = count;
out:
	memunmap(f.hdr);
	return ret;
}

/* hprintk: log to a handle whether or not it was initialised. */
static int dtt_cmd_hprintk(char **argv)
{
	struct dti_handle *h = dtt_handle(argv[1]);
	unsigned int i, count, stored = 0;
	int level, ret;

	if (!h)
		return -ENOENT;
	if (kstrtoint(argv[2], 0, &level) || kstrtouint(argv[3], 0, &count))
		return -EINVAL;
	for (i = 0; i < count; i++) {
		ret = dti_printk(*h, level, "%s %u\n", argv[4], i);
		if (!ret)
			stored++;
	}
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 stored=%u\n", stored);
	return 0;
}

static void dtt_release(struct dtt_channel *c)
{
	if (c->handle)
		dti_handle_cleanup(c->handle);
	else if (c->s390)
		debug_unregister(c->trace);
	else
		dti_unregister(c->trace);
	c->trace = NULL;
}

struct dtt_racer {
	struct dti_info *trace;
	const char *tag;
	unsigned int cpu;
	struct task_struct *task;
	bool *stop;
	unsigned long calls;
	unsigned long stored;
};

static int dtt_racer_fn(void *arg)
{
	struct dtt_racer *r = arg;

	while (!READ_ONCE(*r->stop)) {
		if (!__dti_printk(r->trace, DTI_LEVEL_ERR, "%s %u %lu\n",
				  r->tag, r->cpu, r->calls))
			r->stored++;
		r->calls++;
		cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * Log "TAG <cpu> <i>" to @c from a kthread on every online CPU (but this
 * one, with @cleanup) for 2 * @ms; with @cleanup, CLEANUP_DTI_HANDLE()
 * halfway through.
 */
static int dtt_cmd_race(struct dtt_channel *c, unsigned int ms, bool cleanup)
{
	unsigned long calls = 0, stored = 0;
	struct dtt_racer *racers;
	unsigned int cpu, n = 0;
	bool stop = false;

	if (cleanup && !c->handle)
		return -EINVAL;
	racers = kcalloc(nr_cpu_ids, sizeof(*racers), GFP_KERNEL);
	if (!racers)
		return -ENOMEM;
	for_each_online_cpu(cpu) {
		if (cleanup && cpu == raw_smp_processor_id())
			continue;
		racers[n].trace = c->trace;
		racers[n].tag = cleanup ? "race" : "flood";
		racers[n].cpu = cpu;
		racers[n].stop = &stop;
		racers[n].task = kthread_run_on_cpu(dtt_racer_fn, &racers[n],
						    cpu, "dtt_race/%u");
		if (!IS_ERR(racers[n].task))
			n++;
	}
	msleep(ms);
	if (cleanup)
		dtt_release(c);
	msleep(ms);
	WRITE_ONCE(stop, true);
	while (n--) {
		kthread_stop(racers[n].task);
		calls += racers[n].calls;
		stored += racers[n].stored;
	}
	kfree(racers);
	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=0 calls=%lu stored=%lu\n", calls, stored);
	return 0;
}

static int dtt_cmd_s390(struct dtt_channel *c, int level, unsigned int count,
			const char *tag)
{
	u8 data[DTT_S390_DATA_LEN];
	unsigned int i, ok = 0;

	for (i = 0; i < count; i++) {
		dtt_fill_payload(data, sizeof(data), i);
		if (debug_sprintf_event(c->trace, level, "%s %u\n", tag, i))
			ok++;
		if (debug_event(c->trace, level, data, sizeof(data)))
			ok++;
	}
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 ok=%u\n", ok);
	return 0;
}

static int dtt_cmd_s390_register(char **argv, int argc)
{
	int pages, areas, ret;
	debug_info_t *id;

	if (argc != 4)
		return -EINVAL;
	ret = kstrtoint(argv[2], 0, &pages);
	if (!ret)
		ret = kstrtoint(argv[3], 0, &areas);
	if (ret)
		return ret;
	id = debug_register(argv[1], pages, areas, DTT_S390_DATA_LEN);
	if (!id)
		return -EINVAL;
	ret = dtt_add(argv[1], id, NULL, true);
	if (ret)
		debug_unregister(id);
	return ret;
}

static int dtt_cmd_register(char **argv, int argc)
{
	unsigned long size, nsub = 0;
	struct dti_info *trace;
	unsigned int flags = 0;
	const char *name;
	int level, ret;

	if (argc != 4 && argc != 6)
		return -EINVAL;
	name = dtt_name_arg(argv[1]);
	ret = kstrtoul(argv[2], 0, &size);
	if (!ret && argc == 6)
		ret = kstrtoul(argv[3], 0, &nsub);
	if (!ret)
		ret = kstrtoint(argv[argc == 6 ? 4 : 3], 0, &level);
	if (!ret && argc == 6)
		ret = kstrtouint(argv[5], 0, &flags);
	if (ret)
		return ret;
	if (argc == 4)
		trace = dti_register(name, size, level);
	else
		trace = dti_register_flags(name, size, nsub, level, flags);
	if (IS_ERR(trace))
		return PTR_ERR(trace);
	if (WARN_ON(!trace))
		return -EFAULT;
	ret = dtt_add(name, trace, NULL, false);
	if (ret)
		dti_unregister(trace);
	return ret;
}

static bool dtt_guard_intact(void)
{
	int i;

	for (i = 0; i < DTT_GUARD_WORDS; i++) {
		if (READ_ONCE(h_raw_store.guard[i]) != DTT_GUARD_PATTERN)
			return false;
	}
	return true;
}

/* A channel of this module by name, or a handle not initialised yet. */
static struct dti_info *dtt_trace_or_handle(const char *name)
{
	struct dtt_channel *c = dtt_find(name);
	struct dti_handle *h;

	if (c)
		return c->trace;
	h = dtt_handle(name);
	return h ? &h->info : NULL;
}

/*
 * badlen NAME LEN: every entry point that takes a length, with lengths
 * no record can have, whatever state NAME is in.  The level check is
 * bypassed on purpose: a length must be bounded before anything uses it.
 */
static int dtt_cmd_badlen(const char *name, const char *extra)
{
	size_t lens[] = { SIZE_MAX, (size_t)-EINVAL, DTI_PAYLOAD_MAX + 1, 0 };
	int ev[ARRAY_SIZE(lens)], ctl[ARRAY_SIZE(lens)];
	unsigned int i, reserved = 0;
	struct dti_info *trace;
	unsigned long flags;
	u8 small[16] = {};
	void *p;

	trace = dtt_trace_or_handle(name);
	if (!trace)
		return -ENOENT;
	if (kstrtoul(extra, 0, &lens[ARRAY_SIZE(lens) - 1]))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		ev[i] = dti_event_raw(trace, DTI_LEVEL_ERR, small, lens[i]);
		local_irq_save(flags);
		p = dti_reserve_raw(trace, DTI_LEVEL_ERR, lens[i]);
		if (p) {
			memset(p, 0, lens[i]);
			dti_commit_raw(trace, p);
			reserved++;
		}
		local_irq_restore(flags);
		ctl[i] = dti_ctl_log(name, DTI_LEVEL_ERR, false, small, lens[i],
				     _THIS_IP_);
	}
	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=0 event=%d,%d,%d,%d reserve=%u ctl=%d,%d,%d,%d guard=%s\n",
		  ev[0], ev[1], ev[2], ev[3], reserved, ctl[0], ctl[1], ctl[2],
		  ctl[3], dtt_guard_intact() ? "ok" : "broken");
	return 0;
}

/*
 * Functions that run inside DTI's write path: the sub-buffer switch
 * (relay's for relay channels, DTI's ring writer for persistent ones, and
 * DTI's callback), the strscpy() of the sub-buffer header, and the
 * stored-record probe point.  strscpy() fires all over the kernel too:
 * those records are simply stored.  Since 6.8 strscpy() is a macro and
 * the function sized_strscpy(): a name the kernel lacks is tried with its
 * alias (dtt_nest_alias), and reported and logged under the first name.
 */
static const char *const dtt_nest_syms[] = {
	"relay_switch_subbuf", "dti_ring_switch", "dti_subbuf_start", "strscpy",
	"dti_probe_stored", "dti_trace_record", "trace_event_buffer_reserve",
};

static const char *const dtt_nest_alias[][2] = {
	{ "strscpy", "sized_strscpy" },
};

struct dtt_nest_probe {
	struct kprobe kp;
	const char *name;
	atomic_t hits, stored, busy, other;
};

static struct dti_info *dtt_nest_trace;

static int dtt_nest_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct dtt_nest_probe *np = container_of(kp, struct dtt_nest_probe, kp);
	int ret;

	atomic_inc(&np->hits);
	ret = __dti_printk(dtt_nest_trace, DTI_LEVEL_ERR, "nest %s %u\n",
			   np->name, raw_smp_processor_id());
	if (!ret)
		atomic_inc(&np->stored);
	else if (ret == -EBUSY)
		atomic_inc(&np->busy);
	else
		atomic_inc(&np->other);
	return 0;
}

/* register_kprobe() on @np's function, under its alias if it has one. */
static int dtt_nest_register(struct dtt_nest_probe *np)
{
	unsigned int i;
	int ret;

	np->kp.symbol_name = np->name;
	ret = register_kprobe(&np->kp);
	for (i = 0; ret == -ENOENT && i < ARRAY_SIZE(dtt_nest_alias); i++) {
		if (strcmp(dtt_nest_alias[i][0], np->name))
			continue;
		memset(&np->kp, 0, sizeof(np->kp));
		np->kp.symbol_name = dtt_nest_alias[i][1];
		np->kp.pre_handler = dtt_nest_pre;
		ret = register_kprobe(&np->kp);
	}
	return ret;
}

static int dtt_cmd_nest(struct dtt_channel *c, unsigned int ms)
{
	struct dtt_nest_probe *np;
	char race[DTT_RESULT_MAX];
	unsigned int i, n;
	size_t len;
	int ret;

	np = kcalloc(ARRAY_SIZE(dtt_nest_syms), sizeof(*np), GFP_KERNEL);
	if (!np)
		return -ENOMEM;
	dtt_nest_trace = c->trace;
	for (n = 0; n < ARRAY_SIZE(dtt_nest_syms); n++) {
		np[n].name = dtt_nest_syms[n];
		np[n].kp.pre_handler = dtt_nest_pre;
		ret = dtt_nest_register(&np[n]);
		if (ret) {
			pr_err("kprobe on %s: %d\n", dtt_nest_syms[n], ret);
			goto out_unregister;
		}
	}
	ret = dtt_cmd_race(c, ms, false);
	strscpy(race, dtt_result, sizeof(race));
	len = strcspn(race, "\n");
	race[len] = '\0';
out_unregister:
	for (i = 0; i < n; i++)
		unregister_kprobe(&np[i].kp);
	if (!ret) {
		for (i = 0; i < n; i++)
			len += scnprintf(race + len, sizeof(race) - len,
					 " %s=%d/%d/%d/%d", dtt_nest_syms[i],
					 atomic_read(&np[i].hits),
					 atomic_read(&np[i].stored),
					 atomic_read(&np[i].busy),
					 atomic_read(&np[i].other));
		scnprintf(dtt_result, sizeof(dtt_result), "%s\n", race);
	}
	kfree(np);
	return ret;
}

/*
 * Self-NMIs.  The handler logs only while armed for this CPU; other NMIs
 * pass it by.  "inside" NMIs are sent from a kprobe on dti_probe_stored,
 * which runs inside a write of the same channel on this CPU.
 *
 * x86 only: a module registers an NMI handler (register_nmi_handler())
 * and sends itself one through the local APIC.  arm64 has NMIs only as
 * GICv3 pseudo-NMIs (CONFIG_ARM64_PSEUDO_NMI, irqchip.gicv3_pseudo_nmi=1),
 * which the kernel keeps for its own IPIs (backtrace, KGDB) with no
 * handler a module can add; there "nmi" and "badapi CASE nmi" answer
 * -EOPNOTSUPP, which the tests report as unsupported.
 */
#define DTT_NMI_WAIT_US		100000

#ifdef CONFIG_X86

static struct {
	struct dti_info *trace;
	int cpu;		/* armed for this CPU, or -1 */
	bool inside;		/* sent from inside a write */
	unsigned int i;
	int ret;
	bool in_nmi;
	bool done;
} dtt_nmi;

static int dtt_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (READ_ONCE(dtt_nmi.cpu) != smp_processor_id())
		return NMI_DONE;
	WRITE_ONCE(dtt_nmi.cpu, -1);
	dtt_nmi.in_nmi = in_nmi();
	dtt_nmi.ret = __dti_printk(dtt_nmi.trace, DTI_LEVEL_ERR, "nmi %s %u\n",
				   dtt_nmi.inside ? "inside" : "free",
				   dtt_nmi.i);
	smp_store_release(&dtt_nmi.done, true);
	return NMI_HANDLED;
}

/* Send an NMI to this CPU and wait for the handler; preemption off. */
static bool dtt_nmi_fire(void)
{
	unsigned int us;

	WRITE_ONCE(dtt_nmi.done, false);
	WRITE_ONCE(dtt_nmi.cpu, smp_processor_id());
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	for (us = 0; us < DTT_NMI_WAIT_US; us++) {
		if (smp_load_acquire(&dtt_nmi.done))
			return true;
		udelay(1);
	}
	WRITE_ONCE(dtt_nmi.cpu, -1);
	return false;
}

static int dtt_nmi_stored_pre(struct kprobe *kp, struct pt_regs *regs)
{
	/* Only for the writes of the outer loop, not for the NMI's own. */
	if (READ_ONCE(dtt_nmi.inside) && !in_nmi() && !dtt_nmi_fire())
		dtt_nmi.ret = -ETIMEDOUT;
	return 0;
}

static int dtt_cmd_nmi(struct dtt_channel *c, unsigned int count)
{
	struct kprobe kp = {
		.symbol_name = "dti_probe_stored",
		.pre_handler = dtt_nmi_stored_pre,
	};
	unsigned int free_ok = 0, free_err = 0, in_busy = 0, in_err = 0;
	unsigned int timeouts = 0, in_nmi = 0;
	int ret;

	dtt_nmi.trace = c->trace;
	dtt_nmi.cpu = -1;
	ret = register_nmi_handler(NMI_LOCAL, dtt_nmi_handler, 0, "dti_test");
	if (ret)
		return ret;
	ret = register_kprobe(&kp);
	if (ret)
		goto out_nmi;

	for (dtt_nmi.i = 0; dtt_nmi.i < count; dtt_nmi.i++) {
		preempt_disable();
		if (!dtt_nmi_fire())
			timeouts++;
		else if (dtt_nmi.ret)
			free_err++;
		else
			free_ok++;
		in_nmi += dtt_nmi.in_nmi;
		preempt_enable();
	}
	WRITE_ONCE(dtt_nmi.inside, true);
	for (dtt_nmi.i = 0; dtt_nmi.i < count; dtt_nmi.i++) {
		dtt_nmi.ret = 1;
		__dti_printk(c->trace, DTI_LEVEL_ERR, "outer %u\n", dtt_nmi.i);
		if (dtt_nmi.ret == -EBUSY)
			in_busy++;
		else if (dtt_nmi.ret == -ETIMEDOUT || dtt_nmi.ret == 1)
			timeouts++;
		else
			in_err++;
		in_nmi += dtt_nmi.in_nmi;
	}
	WRITE_ONCE(dtt_nmi.inside, false);
	unregister_kprobe(&kp);
	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=0 free_stored=%u free_err=%u inside_busy=%u inside_err=%u in_nmi=%u timeouts=%u\n",
		  free_ok, free_err, in_busy, in_err, in_nmi, timeouts);
out_nmi:
	unregister_nmi_handler(NMI_LOCAL, "dti_test");
	return ret;
}
#else
static int dtt_cmd_nmi(struct dtt_channel *c, unsigned int count)
{
	return -EOPNOTSUPP;
}
#endif

/*
 * cross: the deadlock a probe could make between two store locks.  Each
 * crossing thread logs to its channel; a kprobe on dti_probe_stored()
 * (ftrace-based where the kernel has that, so not an NMI), which runs
 * inside that store and so inside its channel's order lock, logs to the
 * other channel.  The thread on the other CPU does the reverse.  Were a
 * CPU that holds one store lock to spin for another, the two would wait
 * for each other for ever.
 */
struct dtt_crosser {
	struct dti_info *trace, *other;
	unsigned int cpu;
	struct task_struct *task;
	bool *stop;
	unsigned long outer;
	atomic_t stored, nested, other_err, nmi;
};

/* The crosser whose store this CPU is in, for the kprobe; NULL outside. */
static DEFINE_PER_CPU(struct dtt_crosser *, dtt_crossing);

static int dtt_cross_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct dtt_crosser *x = this_cpu_read(dtt_crossing);
	int ret;

	if (!x)
		return 0;
	/* Once per outer record: not for the inner record's own store. */
	this_cpu_write(dtt_crossing, NULL);
	if (in_nmi())
		atomic_inc(&x->nmi);
	ret = __dti_printk(x->other, DTI_LEVEL_ERR, "cross in %u\n", x->cpu);
	if (!ret)
		atomic_inc(&x->stored);
	else if (ret == -EBUSY)
		atomic_inc(&x->nested);
	else
		atomic_inc(&x->other_err);
	return 0;
}

static int dtt_crosser_fn(void *arg)
{
	struct dtt_crosser *x = arg;

	while (!READ_ONCE(*x->stop)) {
		preempt_disable();
		this_cpu_write(dtt_crossing, x);
		__dti_printk(x->trace, DTI_LEVEL_ERR, "cross out %u %lu\n",
			     x->cpu, x->outer);
		this_cpu_write(dtt_crossing, NULL);
		preempt_enable();
		x->outer++;
		cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static int dtt_cmd_cross(struct dtt_channel *c, struct dtt_channel *o,
			 unsigned int ms)
{
	struct kprobe kp = {
		.symbol_name = "dti_probe_stored",
		.pre_handler = dtt_cross_pre,
	};
	struct dtt_crosser x[2] = {
		{ .trace = c->trace, .other = o->trace },
		{ .trace = o->trace, .other = c->trace },
	};
	unsigned long outer = 0;
	unsigned int i, n = 0, stored = 0, nested = 0, other = 0, nmi = 0;
	bool stop = false;
	int cpu, ret;

	if (c == o || !c->trace || !o->trace || num_online_cpus() < 2)
		return -EINVAL;
	ret = dti_ctl_set_ordered(c->name, true);
	if (!ret)
		ret = dti_ctl_set_ordered(o->name, true);
	if (ret)
		goto out_unorder;
	ret = dti_ctl_probe_stored(true);
	if (ret)
		goto out_unorder;
	ret = register_kprobe(&kp);
	if (ret)
		goto out_unlisten;
	/*
	 * The probe point's static key is switched by a work item soon
	 * after: the first records may be stored before the probe runs.
	 */
	for_each_online_cpu(cpu) {
		if (n == ARRAY_SIZE(x))
			break;
		x[n].cpu = cpu;
		x[n].stop = &stop;
		x[n].task = kthread_run_on_cpu(dtt_crosser_fn, &x[n], cpu,
					       "dtt_cross/%u");
		if (IS_ERR(x[n].task)) {
			ret = PTR_ERR(x[n].task);
			break;
		}
		n++;
	}
	if (n == ARRAY_SIZE(x))
		msleep(ms);
	WRITE_ONCE(stop, true);
	for (i = 0; i < n; i++) {
		kthread_stop(x[i].task);
		outer += x[i].outer;
		stored += atomic_read(&x[i].stored);
		nested += atomic_read(&x[i].nested);
		other += atomic_read(&x[i].other_err);
		nmi += atomic_read(&x[i].nmi);
	}
	if (!ret)
		scnprintf(dtt_result, sizeof(dtt_result),
			  "ret=0 outer=%lu stored=%u nested=%u other=%u nmi=%u ftrace=%d\n",
			  outer, stored, nested, other, nmi,
			  !!(kp.flags & KPROBE_FLAG_FTRACE));
	unregister_kprobe(&kp);
out_unlisten:
	dti_ctl_probe_stored(false);
out_unorder:
	dti_ctl_set_ordered(c->name, false);
	dti_ctl_set_ordered(o->name, false);
	return ret;
}

struct dtt_unreg {
	struct dti_info *trace;
	struct completion done;
};

static int dtt_unreg_fn(void *arg)
{
	struct dtt_unreg *u = arg;

	dti_unregister(u->trace);
	complete(&u->done);
	return 0;
}

#define DTT_REREG_TRIES		1000000

/*
 * rereg NAME: remove NAME in a kthread while registering the same name
 * here over and over until it is no longer taken.
 */
static int dtt_cmd_rereg(struct dtt_channel *c)
{
	struct dti_info *trace = ERR_PTR(-EEXIST);
	struct dtt_unreg u = { .trace = c->trace };
	struct task_struct *task;
	unsigned int tries;
	char name[DTI_NAME_MAX + 1];

	strscpy(name, c->name, sizeof(name));
	init_completion(&u.done);
	c->trace = NULL;
	task = kthread_run(dtt_unreg_fn, &u, "dtt_unreg");
	if (IS_ERR(task)) {
		c->trace = u.trace;
		return PTR_ERR(task);
	}
	for (tries = 0; tries < DTT_REREG_TRIES; tries++) {
		trace = dti_register(name, 64 * 1024, DTI_LEVEL_DEBUG);
		if (!IS_ERR(trace) || PTR_ERR(trace) != -EEXIST)
			break;
		cond_resched();
	}
	wait_for_completion(&u.done);
	if (IS_ERR(trace))
		return PTR_ERR(trace);
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 tries=%u\n", tries);
	return dtt_add(name, trace, NULL, false);
}


/*
 * hotreg: registration racing a CPU coming up.  relay gives a buffer to
 * every channel it knows at CPUHP_RELAY_PREPARE, before the CPU is
 * online; relay_open() gives one to every CPU online.  A channel
 * registered in between would get none for that CPU unless registration
 * holds CPU hotplug off.  A dynamic PREPARE state, which runs after
 * relay's, holds the CPU there until the registration is done or
 * DTT_HOTREG_HOLD_MS have passed (when registration waits for hotplug).
 */
#define DTT_HOTREG_HOLD_MS	2000

static struct {
	unsigned int cpu;
	struct completion reached;	/* the CPU is between the two */
	struct completion registered;
	struct completion up;
	int up_ret;
	bool held;
} dtt_hotreg;

static int dtt_hotreg_prepare(unsigned int cpu)
{
	if (cpu != dtt_hotreg.cpu)
		return 0;
	complete(&dtt_hotreg.reached);
	dtt_hotreg.held = wait_for_completion_timeout(&dtt_hotreg.registered,
				msecs_to_jiffies(DTT_HOTREG_HOLD_MS)) != 0;
	return 0;
}

static int dtt_hotreg_up(void *arg)
{
	dtt_hotreg.up_ret = add_cpu(dtt_hotreg.cpu);
	complete(&dtt_hotreg.up);
	return 0;
}

static int dtt_cmd_hotreg(const char *name, const char *cpu_arg)
{
	struct dti_info *trace;
	struct task_struct *task;
	int state, ret;

	ret = kstrtouint(cpu_arg, 0, &dtt_hotreg.cpu);
	if (ret)
		return ret;
	if (dtt_hotreg.cpu >= nr_cpu_ids || cpu_online(dtt_hotreg.cpu))
		return -EINVAL;
	init_completion(&dtt_hotreg.reached);
	init_completion(&dtt_hotreg.registered);
	init_completion(&dtt_hotreg.up);
	state = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "dti_test:hotreg",
					  dtt_hotreg_prepare, NULL);
	if (state < 0)
		return state;
	task = kthread_run(dtt_hotreg_up, NULL, "dtt_hotreg");
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		goto out_state;
	}
	wait_for_completion(&dtt_hotreg.reached);
	trace = dti_register(name, 64 * 1024, DTI_LEVEL_DEBUG);
	complete(&dtt_hotreg.registered);
	wait_for_completion(&dtt_hotreg.up);
	ret = PTR_ERR_OR_ZERO(trace);
	if (!ret) {
		ret = dtt_add(name, trace, NULL, false);
		if (ret)
			dti_unregister(trace);
	}
	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=%d up=%d held_until_registered=%d\n", ret,
		  dtt_hotreg.up_ret, dtt_hotreg.held);
out_state:
	cpuhp_remove_state_nocalls(state);
	return ret;
}


/*
 * floodctx: every CPU logs from process, softirq and hardirq context at
 * once.  The softirq timer logs DTT_FLOOD_SOFT_BATCH records a jiffy,
 * the hrtimer one every DTT_FLOOD_HARD_NS.
 */
#define DTT_FLOOD_SOFT_BATCH	16
#define DTT_FLOOD_HARD_NS	(200 * NSEC_PER_USEC)

struct dtt_flooder {
	struct dti_info *trace;
	unsigned int cpu;
	bool stop;
	struct task_struct *task;
	struct timer_list timer;
	struct hrtimer hrtimer;
	unsigned long calls[3];		/* process, softirq, hardirq */
	unsigned long stored;
};

static void dtt_flood_one(struct dtt_flooder *f, int ctx, char tag)
{
	if (!__dti_printk(f->trace, DTI_LEVEL_ERR, "flood %c%u %lu\n", tag,
			  f->cpu, f->calls[ctx]))
		f->stored++;
	f->calls[ctx]++;
}

static int dtt_flood_thread(void *arg)
{
	struct dtt_flooder *f = arg;
	unsigned long flags;

	while (!READ_ONCE(f->stop)) {
		/* stored is shared with the timers on this CPU. */
		local_irq_save(flags);
		dtt_flood_one(f, 0, 'P');
		local_irq_restore(flags);
		cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static void dtt_flood_timer(struct timer_list *t)
{
	struct dtt_flooder *f = timer_container_of(f, t, timer);
	unsigned long flags;
	int i;

	local_irq_save(flags);
	for (i = 0; i < DTT_FLOOD_SOFT_BATCH; i++)
		dtt_flood_one(f, 1, 'S');
	local_irq_restore(flags);
	if (!READ_ONCE(f->stop))
		mod_timer(&f->timer, jiffies + 1);
}

static enum hrtimer_restart dtt_flood_hrtimer(struct hrtimer *t)
{
	struct dtt_flooder *f = container_of(t, struct dtt_flooder, hrtimer);

	dtt_flood_one(f, 2, 'H');
	if (READ_ONCE(f->stop))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(DTT_FLOOD_HARD_NS));
	return HRTIMER_RESTART;
}

/* Runs on f->cpu: start its timers there. */
static long dtt_flood_start_timers(void *arg)
{
	struct dtt_flooder *f = arg;

	timer_setup(&f->timer, dtt_flood_timer, TIMER_PINNED);
	f->timer.expires = jiffies + 1;
	add_timer_on(&f->timer, f->cpu);
	hrtimer_setup(&f->hrtimer, dtt_flood_hrtimer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	hrtimer_start(&f->hrtimer, ns_to_ktime(DTT_FLOOD_HARD_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
	return 0;
}

static int dtt_cmd_floodctx(struct dtt_channel *c, unsigned int ms)
{
	unsigned long calls[3] = {}, stored = 0;
	struct dtt_flooder *fl;
	unsigned int cpu, n = 0, i;

	fl = kcalloc(nr_cpu_ids, sizeof(*fl), GFP_KERNEL);
	if (!fl)
		return -ENOMEM;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		fl[n].trace = c->trace;
		fl[n].cpu = cpu;
		fl[n].task = kthread_run_on_cpu(dtt_flood_thread, &fl[n], cpu,
						"dtt_flood/%u");
		if (IS_ERR(fl[n].task)) {
			fl[n].task = NULL;
			continue;
		}
		work_on_cpu(cpu, dtt_flood_start_timers, &fl[n]);
		n++;
	}
	cpus_read_unlock();
	msleep(ms);
	for (i = 0; i < n; i++)
		WRITE_ONCE(fl[i].stop, true);
	for (i = 0; i < n; i++) {
		kthread_stop(fl[i].task);
		timer_delete_sync(&fl[i].timer);
		hrtimer_cancel(&fl[i].hrtimer);
		calls[0] += fl[i].calls[0];
		calls[1] += fl[i].calls[1];
		calls[2] += fl[i].calls[2];
		stored += fl[i].stored;
	}
	kfree(fl);
	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=0 calls=%lu stored=%lu process=%lu softirq=%lu hardirq=%lu\n",
		  calls[0] + calls[1] + calls[2], stored, calls[0], calls[1],
		  calls[2]);
	return 0;
}


/* The CPU whose next sub-buffer switch panics (panicin), else -1 */
static int dtt_panicin_cpu = -1;

static int dtt_panicin_pre(struct kprobe *kp, struct pt_regs *regs)
{
	if (READ_ONCE(dtt_panicin_cpu) == smp_processor_id())
		panic("dti_test: panic inside a write, at a sub-buffer switch");
	return 0;
}

static int dtt_cmd_panicin(struct dtt_channel *c, unsigned int count)
{
	struct kprobe kp = {
		.symbol_name = "dti_subbuf_start",
		.pre_handler = dtt_panicin_pre,
	};
	unsigned int i;
	int ret;

	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	preempt_disable();
	WRITE_ONCE(dtt_panicin_cpu, smp_processor_id());
	for (i = 0; i < count; i++)
		__dti_printk(c->trace, DTI_LEVEL_ERR, "pw %u\n", i);
	WRITE_ONCE(dtt_panicin_cpu, -1);
	preempt_enable();
	unregister_kprobe(&kp);
	return -EAGAIN;
}

/*
 * haltin: a halt trigger armed, and fired, inside a level change, after
 * the change began and before it stored its level (issue 52 item 7).
 * dti_set_level() on a channel of its own calls dti_create_buffers()
 * there; a kprobe on it arms the trigger for 0 records, the once, from
 * the task that runs the command.
 */
static struct {
	const char *name;
	struct task_struct *task;
	atomic_t hits;
	int armed;
} dtt_haltin;

static int dtt_haltin_pre(struct kprobe *kp, struct pt_regs *regs)
{
	if (current != READ_ONCE(dtt_haltin.task))
		return 0;
	if (atomic_inc_return(&dtt_haltin.hits) == 1)
		dtt_haltin.armed = dti_ctl_halt_after(dtt_haltin.name, 0);
	return 0;
}

/* ratelimit_rs's own rate limit: 10 records a second */
static DEFINE_DTI_RATELIMIT(dtt_rs, HZ, 10);

/*
 * COUNT records "rl <i>" through __dti_printk_ratelimited() (one call
 * site, printk_ratelimited()'s 10 each 5 seconds) or, with @own,
 * through __dti_printk_rs() with dtt_rs.
 */
static int dtt_cmd_ratelimited(struct dtt_channel *c, int level,
			       unsigned int count, bool own)
{
	unsigned int i;
	int ret;

	if (!c->trace)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		if (own)
			ret = __dti_printk_rs(c->trace, &dtt_rs, level, "rl %u\n", i);
		else
			ret = __dti_printk_ratelimited(c->trace, level, "rl %u\n", i);
		if (ret)
			return ret;
	}
	return 0;
}

/* One record "probed 7" through __dev_dti_printk() for a platform device. */
static int dtt_cmd_devprintk(struct dtt_channel *c, int level)
{
	struct platform_device *pdev;
	int ret;

	if (!c->trace)
		return -EINVAL;
	pdev = platform_device_register_simple("dti_test_dev", 3, NULL, 0);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	ret = __dev_dti_printk(c->trace, level, &pdev->dev, "probed %d\n", 7);
	platform_device_unregister(pdev);
	return ret;
}

static int dtt_cmd_haltin(struct dtt_channel *c, int level)
{
	struct kprobe kp = {
		.symbol_name = "dti_create_buffers",
		.pre_handler = dtt_haltin_pre,
	};
	int ret, logged;

	if (c->handle || !c->trace)
		return -EINVAL;
	dtt_haltin.name = c->name;
	dtt_haltin.armed = 1;
	atomic_set(&dtt_haltin.hits, 0);
	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	WRITE_ONCE(dtt_haltin.task, current);
	ret = dti_set_level(c->trace, level);
	WRITE_ONCE(dtt_haltin.task, NULL);
	unregister_kprobe(&kp);
	if (ret)
		return ret;
	logged = __dti_printk(c->trace, DTI_LEVEL_ERR, "haltin\n");
	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=0 hits=%d armed=%d level=%d left=%ld logged=%d\n",
		  atomic_read(&dtt_haltin.hits), dtt_haltin.armed,
		  READ_ONCE(c->trace->level), dti_ctl_trigger_left(c->name),
		  logged);
	return 0;
}

/* An oops: a load from NULL the compiler can neither see nor drop */
static int dtt_cmd_oops(void)
{
	int *volatile p = NULL;

	return READ_ONCE(*p);
}

/* oops NAME: "before oops" on the CPU that oopses */
static int dtt_cmd_oops_after(const char *name)
{
	struct dti_info *trace = dtt_trace_or_handle(name);

	if (!trace)
		return -ENOENT;
	preempt_disable();
	__dti_printk(trace, DTI_LEVEL_ERR, "before oops\n");
	return dtt_cmd_oops();
}

/* Bytes of the reservation "warn NAME inres" raises its WARN() in, and theirs */
#define DTT_WARN_RES_LEN	32
#define DTT_WARN_RES_BYTE	0xa5

/*
 * warn NAME [inres]: stop_on warn.  Preemption is off from the first
 * record to the last, so that both and the warning come from one CPU.
 */
static int dtt_cmd_warn(struct dtt_channel *c, bool inres)
{
	unsigned long flags;
	int cpu, after, res = -1;
	void *p;

	preempt_disable();
	cpu = smp_processor_id();
	__dti_printk(c->trace, DTI_LEVEL_ERR, "before warn\n");
	if (inres) {
		local_irq_save(flags);
		p = dti_reserve_raw(c->trace, DTI_LEVEL_ERR, DTT_WARN_RES_LEN);
		WARN(1, "dti-test: warn inside a reservation\n");
		if (p) {
			memset(p, DTT_WARN_RES_BYTE, DTT_WARN_RES_LEN);
			dti_commit_raw(c->trace, p);
		}
		local_irq_restore(flags);
		res = !!p;
	} else {
		WARN(1, "dti-test: warn\n");
	}
	after = __dti_printk(c->trace, DTI_LEVEL_ERR, "after warn\n");
	preempt_enable();
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 cpu=%d after=%d res=%d\n",
		  cpu, after, res);
	return 0;
}

/* exception NAME LEVEL TAG [all] */
static int dtt_cmd_exception(char **argv, int argc)
{
	struct dtt_channel *c = dtt_find(argv[1]);
	struct dti_handle *h = dtt_handle(argv[1]);
	bool all = argc == 5 && !strcmp(argv[4], "all");
	int level, ret;

	if ((argc == 5 && !all) || kstrtoint(argv[2], 0, &level))
		return -EINVAL;
	if (h && all)
		ret = dti_exception_all(*h, level, "%s\n", argv[3]);
	else if (h)
		ret = dti_exception(*h, level, "%s\n", argv[3]);
	else if (c && all)
		ret = __dti_exception_all(c->trace, level, "%s\n", argv[3]);
	else if (c)
		ret = __dti_exception(c->trace, level, "%s\n", argv[3]);
	else
		return -ENOENT;
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 logged=%d\n", ret);
	return 0;
}

/*
 * evrace: what a writer on another CPU sees of an event type whose
 * registration has just made it loggable (its owner set).  The store of
 * the owner hits a watchpoint; its handler, on the registering CPU and
 * right after the store, holds that CPU there while a kthread on another
 * CPU logs one record of the type.  If the owner is set before the
 * channel's table of types lists the type, that record goes into a
 * sub-buffer that carries no format for it.
 */
#define DTT_EVRACE_WAIT_MS	1000

DEFINE_DTI_EVENT(dtt_ev_race, 77, "race", "race %u");

static struct {
	struct dti_info *trace;
	atomic_t hits;
	bool go;		/* the owner was stored: log now */
	bool done;		/* the kthread logged, or gave up */
	int ret;		/* what its __dti_log_event() returned */
} dtt_evrace;

static void dtt_evrace_hit(struct perf_event *bp, struct perf_sample_data *data,
			   struct pt_regs *regs)
{
	unsigned int ms;

	if (atomic_inc_return(&dtt_evrace.hits) != 1)
		return;
	smp_store_release(&dtt_evrace.go, true);
	for (ms = 0; ms < DTT_EVRACE_WAIT_MS && !smp_load_acquire(&dtt_evrace.done); ms++)
		mdelay(1);
}

static int dtt_evrace_fn(void *arg)
{
	unsigned int ms;

	/* Spin, not sleep: the registering CPU waits with interrupts off. */
	for (ms = 0; !smp_load_acquire(&dtt_evrace.go); ms++) {
		if (ms >= 10 * DTT_EVRACE_WAIT_MS)
			goto out;
		mdelay(1);
	}
	dtt_evrace.ret = __dti_log_event(dtt_evrace.trace, DTI_LEVEL_ERR, dtt_ev_race, 1);
out:
	smp_store_release(&dtt_evrace.done, true);
	return 0;
}

/* blob NAME LEVEL LEN TYPE: one blob of LEN pattern bytes */
static int dtt_cmd_blob(struct dtt_channel *c, char **argv)
{
	unsigned int level, len, i;
	u8 *buf;
	int ret;

	ret = kstrtouint(argv[2], 0, &level);
	if (!ret)
		ret = kstrtouint(argv[3], 0, &len);
	if (ret)
		return ret;
	buf = kvmalloc(len ? len : 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		buf[i] = (i * 131 + len) & 0xff;
	ret = __dti_blob(c->trace, level, strcmp(argv[4], "-") ? argv[4] : "", buf, len);
	kvfree(buf);
	scnprintf(dtt_result, sizeof(dtt_result), "ret=%d\n", ret);
	return 0;
}

static int dtt_cmd_evrace(struct dtt_channel *c)
{
	struct perf_event * __percpu *bp;
	struct perf_event_attr attr;
	struct task_struct *task;
	unsigned int cpu;
	int ret;

	cpu = cpumask_any_but(cpu_online_mask, get_cpu());
	put_cpu();
	if (cpu >= nr_cpu_ids || !c->trace)
		return -EINVAL;
	dtt_evrace.trace = c->trace;
	dtt_evrace.ret = 1;
	atomic_set(&dtt_evrace.hits, 0);
	WRITE_ONCE(dtt_evrace.go, false);
	WRITE_ONCE(dtt_evrace.done, false);
	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&dtt_ev_race.owner;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.bp_type = HW_BREAKPOINT_W;
	bp = register_wide_hw_breakpoint(&attr, dtt_evrace_hit, NULL);
	if (IS_ERR_PCPU(bp))
		return PTR_ERR_PCPU(bp);
	task = kthread_run_on_cpu(dtt_evrace_fn, NULL, cpu, "dtt_evrace/%u");
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		goto out;
	}
	ret = dti_event_register(c->trace, &dtt_ev_race);
	/* Without a hit, the kthread gives up on its own. */
	while (!smp_load_acquire(&dtt_evrace.done))
		msleep(1);
out:
	unregister_wide_hw_breakpoint(bp);
	if (!ret)
		scnprintf(dtt_result, sizeof(dtt_result), "ret=0 hits=%d logged=%d\n",
			  atomic_read(&dtt_evrace.hits), dtt_evrace.ret == 0);
	return ret;
}

/*
 * holdres: a reservation held open while something else looks at the
 * channel (an oops that prints it, say), which must not take the
 * unwritten bytes for a record.
 */
#define DTT_HOLD_BYTE		0xa5

static struct {
	struct dti_info *trace;
	unsigned int ms;
	unsigned long len;
	atomic_t state;		/* 0 starting, 1 reserved, -1 refused */
} dtt_hold;

static int dtt_hold_fn(void *arg)
{
	unsigned long flags;
	unsigned int ms;
	void *p;

	local_irq_save(flags);
	p = dti_reserve_raw(dtt_hold.trace, DTI_LEVEL_ERR, dtt_hold.len);
	atomic_set_release(&dtt_hold.state, p ? 1 : -1);
	if (p) {
		for (ms = 0; ms < dtt_hold.ms; ms++)
			mdelay(1);
		memset(p, DTT_HOLD_BYTE, dtt_hold.len);
		dti_commit_raw(dtt_hold.trace, p);
	}
	local_irq_restore(flags);
	return 0;
}

static int dtt_cmd_holdres(char **argv, int argc)
{
	struct task_struct *task;
	unsigned int cpu;
	int state;

	dtt_hold.trace = dtt_trace_or_handle(argv[1]);
	if (!dtt_hold.trace)
		return -ENOENT;
	if (kstrtouint(argv[2], 0, &cpu) || kstrtouint(argv[3], 0, &dtt_hold.ms) ||
	    kstrtoul(argv[4], 0, &dtt_hold.len) || !cpu_online(cpu) ||
	    (argc == 6 && strcmp(argv[5], "oops")))
		return -EINVAL;
	atomic_set(&dtt_hold.state, 0);
	task = kthread_run_on_cpu(dtt_hold_fn, NULL, cpu, "dtt_hold/%u");
	if (IS_ERR(task))
		return PTR_ERR(task);
	while (!(state = atomic_read_acquire(&dtt_hold.state)))
		msleep(1);
	if (state < 0)
		return -ENOSPC;
	return argc == 6 ? dtt_cmd_oops() : 0;
}

/*
 * Lifecycle faults.  bgflood leaves floodctx's writers running; failnth
 * and failwork fail the N-th allocation (of those fault injection sees:
 * slab, and pages with fail_page_alloc's filters relaxed) of this task
 * or of DTI's worker, through the task's fail_nth as
 * /proc/thread-self/fail-nth does, so that exactly the DTI call is hit.
 */
static struct {
	struct dtt_flooder *fl;
	unsigned int n;
	struct dtt_channel *c;
} dtt_bg;

static int dtt_cmd_bgflood(struct dtt_channel *c)
{
	unsigned int cpu;

	if (dtt_bg.fl)
		return -EBUSY;
	dtt_bg.fl = kcalloc(nr_cpu_ids, sizeof(*dtt_bg.fl), GFP_KERNEL);
	if (!dtt_bg.fl)
		return -ENOMEM;
	dtt_bg.c = c;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct dtt_flooder *f = &dtt_bg.fl[dtt_bg.n];

		f->trace = c->trace;
		f->cpu = cpu;
		f->task = kthread_run_on_cpu(dtt_flood_thread, f, cpu, "dtt_bg/%u");
		if (IS_ERR(f->task))
			continue;
		work_on_cpu(cpu, dtt_flood_start_timers, f);
		dtt_bg.n++;
	}
	cpus_read_unlock();
	return 0;
}

static int dtt_cmd_bgstop(void)
{
	unsigned long calls[3] = {}, stored = 0;
	unsigned int i;

	if (!dtt_bg.fl)
		return -ENOENT;
	for (i = 0; i < dtt_bg.n; i++)
		WRITE_ONCE(dtt_bg.fl[i].stop, true);
	for (i = 0; i < dtt_bg.n; i++) {
		kthread_stop(dtt_bg.fl[i].task);
		timer_delete_sync(&dtt_bg.fl[i].timer);
		hrtimer_cancel(&dtt_bg.fl[i].hrtimer);
		calls[0] += dtt_bg.fl[i].calls[0];
		calls[1] += dtt_bg.fl[i].calls[1];
		calls[2] += dtt_bg.fl[i].calls[2];
		stored += dtt_bg.fl[i].stored;
	}
	kfree(dtt_bg.fl);
	dtt_bg.fl = NULL;
	dtt_bg.n = 0;
	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=0 calls=%lu stored=%lu process=%lu softirq=%lu hardirq=%lu\n",
		  calls[0] + calls[1] + calls[2], stored, calls[0], calls[1],
		  calls[2]);
	return 0;
}

/* At unload: a handle goes while its writers still log, then they stop. */
static void dtt_bg_exit(void)
{
	if (!dtt_bg.fl)
		return;
	if (dtt_bg.c->handle && dtt_bg.c->trace) {
		pr_info("bgflood: cleaning up %s while %u CPUs log to it\n",
			dtt_bg.c->name, dtt_bg.n);
		dtt_release(dtt_bg.c);
	}
	dtt_cmd_bgstop();
}

static int dtt_execute(char **argv, int argc);

#ifdef CONFIG_FAULT_INJECTION
static int dtt_cmd_failnth(char **argv, int argc)
{
	unsigned int n;
	bool injected;
	int err;

	if (kstrtouint(argv[1], 0, &n) || !n || !strcmp(argv[2], "failnth"))
		return -EINVAL;
	WRITE_ONCE(current->fail_nth, n);
	err = dtt_execute(argv + 2, argc - 2);
	injected = !READ_ONCE(current->fail_nth);
	WRITE_ONCE(current->fail_nth, 0);
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 err=%d injected=%d\n",
		  err, injected);
	return 0;
}

/* failwork: the worker's fail_nth for the next run of dti_create_work() */
static atomic_t dtt_failwork_nth = ATOMIC_INIT(0);
static int dtt_failwork_ran;		/* 0, then 1 not injected, 2 injected */
static DECLARE_WAIT_QUEUE_HEAD(dtt_failwork_wq);

static int dtt_failwork_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned int n = atomic_xchg(&dtt_failwork_nth, 0);

	*(unsigned int *)ri->data = n;
	if (n)
		WRITE_ONCE(current->fail_nth, n);
	return 0;
}

static int dtt_failwork_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (!*(unsigned int *)ri->data)
		return 0;
	WRITE_ONCE(dtt_failwork_ran, READ_ONCE(current->fail_nth) ? 1 : 2);
	WRITE_ONCE(current->fail_nth, 0);
	wake_up(&dtt_failwork_wq);
	return 0;
}

static int dtt_cmd_failwork(char **argv)
{
	struct dti_handle *h = dtt_handle(argv[2]);
	struct kretprobe krp = {
		.kp.symbol_name = "dti_create_work",
		.entry_handler = dtt_failwork_entry,
		.handler = dtt_failwork_ret,
		.data_size = sizeof(unsigned int),
		.maxactive = 4,
	};
	unsigned int n;
	int ret, ran;

	if (!h)
		return -ENOENT;
	if (kstrtouint(argv[1], 0, &n) || !n)
		return -EINVAL;
	WRITE_ONCE(dtt_failwork_ran, 0);
	atomic_set(&dtt_failwork_nth, n);
	ret = register_kretprobe(&krp);
	if (ret)
		return ret;
	/* Its first record has DTI's work item create the buffers. */
	dti_printk(*h, DTI_LEVEL_ERR, "%s\n", argv[3]);
	wait_event_timeout(dtt_failwork_wq, READ_ONCE(dtt_failwork_ran), 10 * HZ);
	unregister_kretprobe(&krp);
	atomic_set(&dtt_failwork_nth, 0);
	ran = READ_ONCE(dtt_failwork_ran);
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 ran=%d injected=%d\n",
		  ran != 0, ran == 2);
	return 0;
}
#else
static int dtt_cmd_failnth(char **argv, int argc)
{
	return -EOPNOTSUPP;
}

static int dtt_cmd_failwork(char **argv)
{
	return -EOPNOTSUPP;
}
#endif

/*
 * badapi CASE [CTX]: the bad-input suite's kernel API cases
 * (testsuite/test_bad_input_api.py).  Each case makes one call to an
 * exported DTI function or macro with a bad argument and reports what
 * it returned as "ret=0 got=V": an errno, 0, 1 (filtered, dti_ctl_log())
 * or DTT_BAD_NULL for a NULL pointer.  The test, not this module, knows
 * what each case should give.  Channels "bk" (the records the test
 * keeps) and "bs" (scratch) must be registered first.  CTX "hardirq"
 * runs the case in a hard hrtimer on this CPU, "nmi" in an NMI (the
 * cases whose functions may be called there).
 */
#define DTT_BAD_NULL		1000
#define DTT_BAD_TYPES		(64 + 1)

static struct {
	struct dti_info *bk, *bs;
	const struct dtt_bad_case *c;
	long got;
	struct completion done;
	struct hrtimer timer;
	int nmi_cpu;
	bool nmi_done;
} dtt_bad = { .nmi_cpu = -1 };

/* Where a case may run: what its function's Context: line allows */
#define DTT_BAD_PROC		0
#define DTT_BAD_HARD		1
#define DTT_BAD_NMI		2
#define DTT_BAD_ANY		(DTT_BAD_HARD | DTT_BAD_NMI)

struct dtt_bad_case {
	const char *name;
	long (*fn)(void);
	unsigned int ctx;
};

static char dtt_bad_owner;
static const char *dtt_bad_nullfmt;
static u8 dtt_bad_payload[16];

/*
 * The bad name is set when the case runs: the name in the handle's
 * pending-store descriptor stays a valid one, as `dti dump` rightly calls
 * a descriptor with a bad name damage (which made every dump of a guest
 * with dti_test loaded fail).
 */
DEFINE_DTI_HANDLE(dtt_h_badname, "dtt_badname", 16 * 1024, DTI_LEVEL_ERR);
DEFINE_DTI_HANDLE(dtt_h_size0, "dtt_size0", 0, DTI_LEVEL_ERR);
DEFINE_DTI_HANDLE(dtt_h_sizemax, "dtt_sizemax", SIZE_MAX, DTI_LEVEL_ERR);
DEFINE_DTI_HANDLE(dtt_h_level8, "dtt_level8", 16 * 1024, 8);
DEFINE_DTI_HANDLE(dtt_h_twice, "dtt_twice", 16 * 1024, DTI_LEVEL_ERR);

DEFINE_DTI_EVENT(dtt_bad_ev_free, 30, "never_registered", "v %d");
DEFINE_DTI_EVENT(dtt_bad_ev_bs, 31, "on_bs", "v %d");
DEFINE_DTI_EVENT(dtt_bad_ev_empty, 32, "noconv", "no values");
DEFINE_DTI_EVENT(dtt_bad_ev_pct, 33, "pct", "x %");
DEFINE_DTI_EVENT(dtt_bad_ev_width, 34, "width", "%999d");
DEFINE_DTI_EVENT(dtt_bad_ev_cleaned, 35, "cleaned", "v %d");
static struct dti_event_type dtt_bad_ev_nullname = { .id = 36, .fmt = "v %d" };
static struct dti_event_type dtt_bad_ev_emptyname = { .id = 37, .name = "", .fmt = "v %d" };
static struct dti_event_type dtt_bad_ev_longname = {
	.id = 38, .name = "a_name_of_thirty_two_characters_", .fmt = "v %d" };
static struct dti_event_type dtt_bad_ev_nullfmt = { .id = 39, .name = "nullfmt" };
static struct dti_event_type dtt_bad_ev_emptyfmt = { .id = 40, .name = "emptyfmt", .fmt = "" };

/* Core and handles: process context only */
static long dtt_bad_set_level_null(void) { return dti_set_level(NULL, 3); }
static long dtt_bad_set_level_errptr(void) { return dti_set_level(ERR_PTR(-ENOMEM), 3); }
static long dtt_bad_unregister_null(void) { dti_unregister(NULL); return 0; }
static long dtt_bad_unregister_errptr(void) { dti_unregister(ERR_PTR(-EEXIST)); return 0; }
/* __dti_register(): its error, or 0 (and the channel unregistered) */
static long dtt_bad_reg(size_t n_subbufs, int level)
{
	struct dti_info *t = __dti_register("bx", 65536, n_subbufs, level);

	if (IS_ERR(t))
		return PTR_ERR(t);
	dti_unregister(t);
	return 0;
}

static long dtt_bad_reg_nsub0(void) { return dtt_bad_reg(0, DTI_LEVEL_DEBUG); }
static long dtt_bad_reg_level8(void) { return dtt_bad_reg(4, 8); }
static long dtt_bad_hinit_null(void) { return dti_handle_init(NULL); }
static long dtt_bad_hinit_twice(void) { return INIT_DTI_HANDLE(h_demand); }
static long dtt_bad_hinit_badname(void)
{
	dtt_h_badname.name = "bad/name";
	return INIT_DTI_HANDLE(dtt_h_badname);
}
static long dtt_bad_hinit_size0(void) { return INIT_DTI_HANDLE(dtt_h_size0); }
static long dtt_bad_hinit_sizemax(void) { return INIT_DTI_HANDLE(dtt_h_sizemax); }
static long dtt_bad_hinit_level8(void) { return INIT_DTI_HANDLE(dtt_h_level8); }
static long dtt_bad_hcleanup_null(void) { dti_handle_cleanup(NULL); return 0; }
static long dtt_bad_hcleanup_uninit(void) { CLEANUP_DTI_HANDLE(dtt_h_twice); return 0; }
static long dtt_bad_uninit_level8(void) { return dti_set_level(&dtt_h_twice.info, 8); }

static long dtt_bad_uninit_reserve(void)
{
	unsigned long flags;
	void *p;

	local_irq_save(flags);
	p = dti_reserve(dtt_h_twice, DTI_LEVEL_ERR, 8);
	if (p) {
		memset(p, 0, 8);
		dti_commit(dtt_h_twice, p);
	}
	local_irq_restore(flags);
	return p ? 0 : DTT_BAD_NULL;
}

static long dtt_bad_uninit_event(void)
{
	return dti_event(dtt_h_twice, DTI_LEVEL_ERR, dtt_bad_payload, SIZE_MAX);
}

static long dtt_bad_uninit_evlog(void)
{
	return dti_log_event(dtt_h_twice, DTI_LEVEL_ERR, dtt_bad_ev_free, 1);
}

static long dtt_bad_uninit_evreg(void)
{
	return dti_event_register(&dtt_h_twice.info, &dtt_bad_ev_cleaned);
}

/* init, cleanup, cleanup again: the init's result */
static long dtt_bad_hcleanup_twice(void)
{
	int ret = INIT_DTI_HANDLE(dtt_h_twice);

	CLEANUP_DTI_HANDLE(dtt_h_twice);
	CLEANUP_DTI_HANDLE(dtt_h_twice);
	return ret;
}

/* at the level it was left at (destroy): filtered; at 3: kept for a new init */
static long dtt_bad_cleaned_printk(void)
{
	return dti_printk(dtt_h_twice, DTI_LEVEL_ERR, "after cleanup\n");
}

static long dtt_bad_cleaned_set_level(void)
{
	return dti_set_level(&dtt_h_twice.info, DTI_LEVEL_ERR);
}

static long dtt_bad_cleaned_evreg(void)
{
	return dti_event_register(&dtt_h_twice.info, &dtt_bad_ev_cleaned);
}

/* the record kept since cleanup is replayed; cleaned up again after */
static long dtt_bad_cleaned_reinit(void)
{
	int ret = INIT_DTI_HANDLE(dtt_h_twice);

	if (!ret && !READ_ONCE(dtt_h_twice.pending.replayed))
		ret = -ENODATA;
	CLEANUP_DTI_HANDLE(dtt_h_twice);
	return ret;
}

/* Event types */
static long dtt_bad_evreg_null_trace(void) { return dti_event_register(NULL, &dtt_bad_ev_free); }
static long dtt_bad_evreg_null_type(void) { return dti_event_register(dtt_bad.bk, NULL); }
static long dtt_bad_evreg_nullname(void) { return dti_event_register(dtt_bad.bs, &dtt_bad_ev_nullname); }
static long dtt_bad_evreg_emptyname(void) { return dti_event_register(dtt_bad.bs, &dtt_bad_ev_emptyname); }
static long dtt_bad_evreg_longname(void) { return dti_event_register(dtt_bad.bs, &dtt_bad_ev_longname); }
static long dtt_bad_evreg_nullfmt(void) { return dti_event_register(dtt_bad.bs, &dtt_bad_ev_nullfmt); }
static long dtt_bad_evreg_pct(void) { return dti_event_register(dtt_bad.bs, &dtt_bad_ev_pct); }
static long dtt_bad_evreg_width(void) { return dti_event_register(dtt_bad.bs, &dtt_bad_ev_width); }
static long dtt_bad_evreg_noconv(void) { return dti_event_register(dtt_bad.bk, &dtt_bad_ev_empty); }
static long dtt_bad_evreg_emptyfmt(void) { return dti_event_register(dtt_bad.bs, &dtt_bad_ev_emptyfmt); }
static long dtt_bad_evreg_bs(void) { return dti_event_register(dtt_bad.bs, &dtt_bad_ev_bs); }

/* 64 types on a channel of their own, then one more: its result */
static long dtt_bad_evreg_65th(void)
{
	struct dti_event_type *t;
	struct dti_info *ch;
	char (*names)[sizeof("t-2147483648")];	/* any int */
	long ret = 0;
	int i;

	t = kcalloc(DTT_BAD_TYPES, sizeof(*t), GFP_KERNEL);
	names = kcalloc(DTT_BAD_TYPES, sizeof(*names), GFP_KERNEL);
	if (!t || !names) {
		ret = -ENOMEM;
		goto out_free;
	}
	ch = dti_register("dtt_types", 512 * 1024, DTI_LEVEL_ERR);
	if (IS_ERR(ch)) {
		ret = PTR_ERR(ch);
		goto out_free;
	}
	for (i = 0; i < DTT_BAD_TYPES && !ret; i++) {
		snprintf(names[i], sizeof(names[i]), "t%d", i);
		t[i].id = i;
		t[i].name = names[i];
		t[i].fmt = "v %d";
		ret = dti_event_register(ch, &t[i]);
		if (ret && i < DTT_BAD_TYPES - 1)
			ret = -EIO;	/* one of the first 64 failed */
	}
	dti_unregister(ch);
out_free:
	kfree(names);
	kfree(t);
	return ret;
}

/* Writers: any context */
static long dtt_bad_printk_null_trace(void) { return dti_printk_raw(NULL, DTI_LEVEL_ERR, "x"); }
static long dtt_bad_printk_null_fmt(void) { return dti_printk_raw(dtt_bad.bk, DTI_LEVEL_ERR, dtt_bad_nullfmt); }
static long dtt_bad_printk_level8(void) { return dti_printk_raw(dtt_bad.bk, 8, "x"); }
static long dtt_bad_printk_destroy(void) { return dti_printk_raw(dtt_bad.bk, DTI_LEVEL_DESTROY, "x"); }
static long dtt_bad_printk_intmin(void) { return dti_printk_raw(dtt_bad.bk, INT_MIN, "x"); }
static long dtt_bad_printk_macro_off(void) { return __dti_printk(dtt_bad.bk, DTI_LEVEL_OFF, "x"); }
static long dtt_bad_printk_macro_8(void) { return __dti_printk(dtt_bad.bk, 8, "x"); }

static long dtt_bad_printk_long(void)
{
	return __dti_printk(dtt_bad.bs, DTI_LEVEL_ERR, "%0*d\n", 2 * DTI_TEXT_MAX, 7);
}

static long dtt_bad_event(struct dti_info *t, int level, const void *buf, size_t len)
{
	return dti_event_raw(t, level, buf, len);
}

static long dtt_bad_event_null_trace(void) { return dtt_bad_event(NULL, 3, dtt_bad_payload, 4); }
static long dtt_bad_event_null_buf(void) { return dtt_bad_event(dtt_bad.bk, 3, NULL, 5); }
static long dtt_bad_event_null_buf0(void) { return dtt_bad_event(dtt_bad.bs, 3, NULL, 0); }
static long dtt_bad_event_level8(void) { return dtt_bad_event(dtt_bad.bk, 8, dtt_bad_payload, 4); }
static long dtt_bad_event_off(void) { return dtt_bad_event(dtt_bad.bk, DTI_LEVEL_OFF, dtt_bad_payload, 4); }
static long dtt_bad_event_sizemax(void) { return dtt_bad_event(dtt_bad.bk, 3, dtt_bad_payload, SIZE_MAX); }
static long dtt_bad_event_errno(void) { return dtt_bad_event(dtt_bad.bk, 3, dtt_bad_payload, (size_t)-EINVAL); }
static long dtt_bad_event_over(void) { return dtt_bad_event(dtt_bad.bk, 3, dtt_bad_payload, DTI_PAYLOAD_MAX + 1); }
static long dtt_bad_event_max(void) { return dtt_bad_event(dtt_bad.bk, 3, dtt_bad_payload, DTI_PAYLOAD_MAX); }
static long dtt_bad_event_chan(void) { return dtt_bad_event(dtt_bad.bk, 3, dtt_bad_payload, 65536); }

static long dtt_bad_reserve(struct dti_info *t, int level, size_t len)
{
	unsigned long flags;
	void *p;

	local_irq_save(flags);
	p = dti_reserve_raw(t, level, len);
	if (p) {
		memset(p, 0, len);
		dti_commit_raw(t, p);
	}
	local_irq_restore(flags);
	/* none of the cases should get space */
	return p ? 0 : DTT_BAD_NULL;
}

static long dtt_bad_reserve_null_trace(void) { return dtt_bad_reserve(NULL, 3, 8); }
static long dtt_bad_reserve_sizemax(void) { return dtt_bad_reserve(dtt_bad.bk, 3, SIZE_MAX); }
static long dtt_bad_reserve_chan(void) { return dtt_bad_reserve(dtt_bad.bk, 3, 65536); }
static long dtt_bad_reserve_level8(void) { return dtt_bad_reserve(dtt_bad.bk, 8, 8); }
static long dtt_bad_reserve_off(void) { return dtt_bad_reserve(dtt_bad.bk, DTI_LEVEL_OFF, 8); }

static long dtt_bad_evlog_free(void) { return __dti_log_event(dtt_bad.bk, 3, dtt_bad_ev_free, 1); }
static long dtt_bad_evlog_other(void) { return __dti_log_event(dtt_bad.bk, 3, dtt_bad_ev_bs, 1); }
static long dtt_bad_evlog_null_type(void) { return dti_event_log_raw(dtt_bad.bk, 3, NULL); }
static long dtt_bad_evlog_null_trace(void) { return dti_event_log_raw(NULL, 3, &dtt_bad_ev_empty); }
static long dtt_bad_evlog_off(void) { return __dti_log_event(dtt_bad.bk, DTI_LEVEL_OFF, dtt_bad_ev_empty); }
static long dtt_bad_evlog_level8(void) { return dti_event_log_raw(dtt_bad.bk, 8, &dtt_bad_ev_empty); }

/* Control by name: any context */
static long dtt_bad_get(const char *name)
{
	int level;

	return dti_ctl_get_level(name, &level);
}

static long dtt_bad_get_null(void) { return dtt_bad_get(NULL); }
static long dtt_bad_get_null_level(void) { return dti_ctl_get_level("bk", NULL); }
static long dtt_bad_get_unknown(void) { return dtt_bad_get("nope"); }
static long dtt_bad_get_empty(void) { return dtt_bad_get(""); }
static long dtt_bad_get_long(void) { return dtt_bad_get("bk_and_a_name_longer_than_thirty_one"); }
static long dtt_bad_set_null(void) { return dti_ctl_set_level(NULL, 3); }
static long dtt_bad_set_8(void) { return dti_ctl_set_level("bk", 8); }
static long dtt_bad_set_m3(void) { return dti_ctl_set_level("bk", -3); }
static long dtt_bad_set_unknown(void) { return dti_ctl_set_level("nope", 3); }

static long dtt_bad_log(const char *name, int level, const void *buf, size_t len)
{
	return dti_ctl_log(name, level, true, buf, len, _THIS_IP_);
}

static long dtt_bad_log_null(void) { return dtt_bad_log(NULL, 3, "x", 1); }
static long dtt_bad_log_null_buf(void) { return dtt_bad_log("bk", 3, NULL, 5); }
static long dtt_bad_log_level8(void) { return dtt_bad_log("bk", 8, "x", 1); }
static long dtt_bad_log_off(void) { return dtt_bad_log("bk", DTI_LEVEL_OFF, "x", 1); }
static long dtt_bad_log_sizemax(void) { return dtt_bad_log("bk", 3, dtt_bad_payload, SIZE_MAX); }
static long dtt_bad_log_chan(void) { return dtt_bad_log("bk", 3, dtt_bad_payload, 65536); }
static long dtt_bad_log_unknown(void) { return dtt_bad_log("nope", 3, "x", 1); }
static long dtt_bad_log_empty(void) { return dtt_bad_log("", 3, "x", 1); }

static long dtt_bad_create(const char *name, size_t size, int level, const void *owner)
{
	return dti_ctl_create(name, size, level, owner);
}

static long dtt_bad_create_null_owner(void) { return dtt_bad_create("bc", 65536, 3, NULL); }
static long dtt_bad_create_null(void) { return dtt_bad_create(NULL, 65536, 3, &dtt_bad_owner); }
static long dtt_bad_create_empty(void) { return dtt_bad_create("", 65536, 3, &dtt_bad_owner); }
static long dtt_bad_create_badname(void) { return dtt_bad_create("a/b", 65536, 3, &dtt_bad_owner); }
static long dtt_bad_create_size0(void) { return dtt_bad_create("bc", 0, 3, &dtt_bad_owner); }
static long dtt_bad_create_sizemax(void) { return dtt_bad_create("bc", SIZE_MAX, 3, &dtt_bad_owner); }
static long dtt_bad_create_level8(void) { return dtt_bad_create("bc", 65536, 8, &dtt_bad_owner); }
static long dtt_bad_create_taken(void) { return dtt_bad_create("bk", 65536, 3, &dtt_bad_owner); }
static long dtt_bad_create_ok(void) { return dtt_bad_create("bc", 65536, 3, &dtt_bad_owner); }
static long dtt_bad_release_null(void) { return dti_ctl_release(NULL); }
static long dtt_bad_release_mine(void) { return dti_ctl_release(&dtt_bad_owner); }
static long dtt_bad_release_unknown(void) { return dti_ctl_release(&dtt_bad); }
static long dtt_bad_halt_null(void) { return dti_ctl_halt_after(NULL, 1); }
static long dtt_bad_halt_huge(void) { return dti_ctl_halt_after("bs", DTI_HALT_COUNT_MAX + 1); }
static long dtt_bad_halt_unknown(void) { return dti_ctl_halt_after("nope", 1); }

/* arm, arm again: the second's result; a level change disarms it */
static long dtt_bad_halt_twice(void)
{
	long ret = dti_ctl_halt_after("bs", 1000);

	if (!ret)
		ret = dti_ctl_halt_after("bs", 1000);
	dti_ctl_set_level("bs", DTI_LEVEL_DEBUG);
	return ret;
}

static long dtt_bad_trig(const char *name, unsigned int cpu, bool null_out)
{
	u64 a, b, c;

	return dti_ctl_trigger_cpu(name, cpu, &a, null_out ? NULL : &b, &c);
}

static long dtt_bad_trig_null(void) { return dtt_bad_trig(NULL, 0, false); }
static long dtt_bad_trig_null_out(void) { return dtt_bad_trig("bs", 0, true); }
static long dtt_bad_trig_cpu(void) { return dtt_bad_trig("bs", nr_cpu_ids, false); }
static long dtt_bad_trig_cpumax(void) { return dtt_bad_trig("bs", UINT_MAX, false); }
static long dtt_bad_trig_unknown(void) { return dtt_bad_trig("nope", 0, false); }
static long dtt_bad_trig_unarmed(void) { return dtt_bad_trig("bs", 0, false); }
static long dtt_bad_left_null(void) { return dti_ctl_trigger_left(NULL); }
static long dtt_bad_left_unknown(void) { return dti_ctl_trigger_left("nope"); }
static long dtt_bad_left_unarmed(void) { return dti_ctl_trigger_left("bs"); }
static long dtt_bad_ordered_null(void) { return dti_ctl_set_ordered(NULL, true); }
static long dtt_bad_ordered_unknown(void) { return dti_ctl_set_ordered("nope", true); }
static long dtt_bad_stored_unpaired(void) { return dti_ctl_probe_stored(false); }

#define DTT_BAD(n, f, c)	{ .name = n, .fn = dtt_bad_##f, .ctx = c }

static const struct dtt_bad_case dtt_bad_cases[] = {
	DTT_BAD("set_level.null", set_level_null, DTT_BAD_PROC),
	DTT_BAD("set_level.errptr", set_level_errptr, DTT_BAD_PROC),
	DTT_BAD("unregister.null", unregister_null, DTT_BAD_PROC),
	DTT_BAD("unregister.errptr", unregister_errptr, DTT_BAD_PROC),
	DTT_BAD("handle_init.null", hinit_null, DTT_BAD_PROC),
	DTT_BAD("handle_init.twice", hinit_twice, DTT_BAD_PROC),
	DTT_BAD("handle_init.badname", hinit_badname, DTT_BAD_PROC),
	DTT_BAD("handle_init.size0", hinit_size0, DTT_BAD_PROC),
	DTT_BAD("handle_init.sizemax", hinit_sizemax, DTT_BAD_PROC),
	DTT_BAD("handle_init.level8", hinit_level8, DTT_BAD_PROC),
	DTT_BAD("handle_cleanup.null", hcleanup_null, DTT_BAD_PROC),
	DTT_BAD("handle_cleanup.uninit", hcleanup_uninit, DTT_BAD_PROC),
	DTT_BAD("handle.uninit.level8", uninit_level8, DTT_BAD_PROC),
	DTT_BAD("handle.uninit.evreg", uninit_evreg, DTT_BAD_PROC),
	DTT_BAD("handle.uninit.reserve", uninit_reserve, DTT_BAD_ANY),
	DTT_BAD("handle.uninit.event", uninit_event, DTT_BAD_ANY),
	DTT_BAD("handle.uninit.evlog", uninit_evlog, DTT_BAD_ANY),
	DTT_BAD("__dti_register.nsub0", reg_nsub0, DTT_BAD_PROC),
	DTT_BAD("__dti_register.level8", reg_level8, DTT_BAD_PROC),
	DTT_BAD("handle_cleanup.twice", hcleanup_twice, DTT_BAD_PROC),
	DTT_BAD("handle.cleaned.printk", cleaned_printk, DTT_BAD_ANY),
	DTT_BAD("handle.cleaned.set_level", cleaned_set_level, DTT_BAD_PROC),
	DTT_BAD("handle.cleaned.evreg", cleaned_evreg, DTT_BAD_PROC),
	DTT_BAD("handle.cleaned.reinit", cleaned_reinit, DTT_BAD_PROC),
	DTT_BAD("evreg.null_trace", evreg_null_trace, DTT_BAD_PROC),
	DTT_BAD("evreg.null_type", evreg_null_type, DTT_BAD_PROC),
	DTT_BAD("evreg.null_name", evreg_nullname, DTT_BAD_PROC),
	DTT_BAD("evreg.empty_name", evreg_emptyname, DTT_BAD_PROC),
	DTT_BAD("evreg.long_name", evreg_longname, DTT_BAD_PROC),
	DTT_BAD("evreg.null_fmt", evreg_nullfmt, DTT_BAD_PROC),
	DTT_BAD("evreg.pct", evreg_pct, DTT_BAD_PROC),
	DTT_BAD("evreg.width", evreg_width, DTT_BAD_PROC),
	DTT_BAD("evreg.empty_fmt", evreg_emptyfmt, DTT_BAD_PROC),
	DTT_BAD("evreg.noconv", evreg_noconv, DTT_BAD_PROC),
	DTT_BAD("evreg.bs", evreg_bs, DTT_BAD_PROC),
	DTT_BAD("evreg.65th", evreg_65th, DTT_BAD_PROC),
	DTT_BAD("printk_raw.null_trace", printk_null_trace, DTT_BAD_ANY),
	DTT_BAD("printk_raw.null_fmt", printk_null_fmt, DTT_BAD_ANY),
	DTT_BAD("printk_raw.level8", printk_level8, DTT_BAD_ANY),
	DTT_BAD("printk_raw.destroy", printk_destroy, DTT_BAD_ANY),
	DTT_BAD("printk_raw.intmin", printk_intmin, DTT_BAD_ANY),
	DTT_BAD("printk.off", printk_macro_off, DTT_BAD_ANY),
	DTT_BAD("printk.level8", printk_macro_8, DTT_BAD_ANY),
	DTT_BAD("printk.long", printk_long, DTT_BAD_ANY),
	DTT_BAD("event_raw.null_trace", event_null_trace, DTT_BAD_ANY),
	DTT_BAD("event_raw.null_buf", event_null_buf, DTT_BAD_ANY),
	DTT_BAD("event_raw.null_buf0", event_null_buf0, DTT_BAD_ANY),
	DTT_BAD("event_raw.level8", event_level8, DTT_BAD_ANY),
	DTT_BAD("event_raw.off", event_off, DTT_BAD_ANY),
	DTT_BAD("event_raw.sizemax", event_sizemax, DTT_BAD_ANY),
	DTT_BAD("event_raw.errno", event_errno, DTT_BAD_ANY),
	DTT_BAD("event_raw.over", event_over, DTT_BAD_ANY),
	DTT_BAD("event_raw.max", event_max, DTT_BAD_ANY),
	DTT_BAD("event_raw.chan", event_chan, DTT_BAD_ANY),
	DTT_BAD("reserve_raw.null_trace", reserve_null_trace, DTT_BAD_ANY),
	DTT_BAD("reserve_raw.sizemax", reserve_sizemax, DTT_BAD_ANY),
	DTT_BAD("reserve_raw.chan", reserve_chan, DTT_BAD_ANY),
	DTT_BAD("reserve_raw.level8", reserve_level8, DTT_BAD_ANY),
	DTT_BAD("reserve_raw.off", reserve_off, DTT_BAD_ANY),
	DTT_BAD("evlog.unregistered", evlog_free, DTT_BAD_ANY),
	DTT_BAD("evlog.other", evlog_other, DTT_BAD_ANY),
	DTT_BAD("evlog.null_type", evlog_null_type, DTT_BAD_ANY),
	DTT_BAD("evlog.null_trace", evlog_null_trace, DTT_BAD_ANY),
	DTT_BAD("evlog.off", evlog_off, DTT_BAD_ANY),
	DTT_BAD("evlog.level8", evlog_level8, DTT_BAD_ANY),
	DTT_BAD("ctl_get.null", get_null, DTT_BAD_ANY),
	DTT_BAD("ctl_get.null_level", get_null_level, DTT_BAD_ANY),
	DTT_BAD("ctl_get.unknown", get_unknown, DTT_BAD_ANY),
	DTT_BAD("ctl_get.empty", get_empty, DTT_BAD_ANY),
	DTT_BAD("ctl_get.long", get_long, DTT_BAD_ANY),
	DTT_BAD("ctl_set.null", set_null, DTT_BAD_ANY),
	DTT_BAD("ctl_set.level8", set_8, DTT_BAD_ANY),
	DTT_BAD("ctl_set.m3", set_m3, DTT_BAD_ANY),
	DTT_BAD("ctl_set.unknown", set_unknown, DTT_BAD_ANY),
	DTT_BAD("ctl_log.null", log_null, DTT_BAD_ANY),
	DTT_BAD("ctl_log.null_buf", log_null_buf, DTT_BAD_ANY),
	DTT_BAD("ctl_log.level8", log_level8, DTT_BAD_ANY),
	DTT_BAD("ctl_log.off", log_off, DTT_BAD_ANY),
	DTT_BAD("ctl_log.sizemax", log_sizemax, DTT_BAD_ANY),
	DTT_BAD("ctl_log.chan", log_chan, DTT_BAD_ANY),
	DTT_BAD("ctl_log.unknown", log_unknown, DTT_BAD_ANY),
	DTT_BAD("ctl_log.empty", log_empty, DTT_BAD_ANY),
	DTT_BAD("ctl_create.null_owner", create_null_owner, DTT_BAD_ANY),
	DTT_BAD("ctl_create.null", create_null, DTT_BAD_ANY),
	DTT_BAD("ctl_create.empty", create_empty, DTT_BAD_ANY),
	DTT_BAD("ctl_create.badname", create_badname, DTT_BAD_ANY),
	DTT_BAD("ctl_create.size0", create_size0, DTT_BAD_ANY),
	DTT_BAD("ctl_create.sizemax", create_sizemax, DTT_BAD_ANY),
	DTT_BAD("ctl_create.level8", create_level8, DTT_BAD_ANY),
	DTT_BAD("ctl_create.taken", create_taken, DTT_BAD_ANY),
	DTT_BAD("ctl_create.ok", create_ok, DTT_BAD_ANY),
	DTT_BAD("ctl_release.null", release_null, DTT_BAD_HARD),
	DTT_BAD("ctl_release.mine", release_mine, DTT_BAD_HARD),
	DTT_BAD("ctl_release.unknown", release_unknown, DTT_BAD_HARD),
	DTT_BAD("ctl_halt.null", halt_null, DTT_BAD_ANY),
	DTT_BAD("ctl_halt.huge", halt_huge, DTT_BAD_ANY),
	DTT_BAD("ctl_halt.unknown", halt_unknown, DTT_BAD_ANY),
	DTT_BAD("ctl_halt.twice", halt_twice, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_cpu.null", trig_null, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_cpu.null_out", trig_null_out, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_cpu.nr_cpu_ids", trig_cpu, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_cpu.uint_max", trig_cpumax, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_cpu.unknown", trig_unknown, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_cpu.unarmed", trig_unarmed, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_left.null", left_null, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_left.unknown", left_unknown, DTT_BAD_ANY),
	DTT_BAD("ctl_trigger_left.unarmed", left_unarmed, DTT_BAD_ANY),
	DTT_BAD("ctl_set_ordered.null", ordered_null, DTT_BAD_ANY),
	DTT_BAD("ctl_set_ordered.unknown", ordered_unknown, DTT_BAD_ANY),
	DTT_BAD("ctl_probe_stored.unpaired", stored_unpaired, DTT_BAD_ANY),
};

static enum hrtimer_restart dtt_bad_timer_fn(struct hrtimer *t)
{
	dtt_bad.got = in_hardirq() ? dtt_bad.c->fn() : -EXDEV;
	complete(&dtt_bad.done);
	return HRTIMER_NORESTART;
}

#ifdef CONFIG_X86
static int dtt_bad_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (READ_ONCE(dtt_bad.nmi_cpu) != smp_processor_id())
		return NMI_DONE;
	WRITE_ONCE(dtt_bad.nmi_cpu, -1);
	dtt_bad.got = in_nmi() ? dtt_bad.c->fn() : -EXDEV;
	smp_store_release(&dtt_bad.nmi_done, true);
	return NMI_HANDLED;
}

/*
 * Run the case in an NMI this CPU sends itself (as "nmi" does); 0, or
 * -EOPNOTSUPP where there are no self-NMIs.
 */
static int dtt_bad_run_nmi(void)
{
	unsigned int us;
	int ret;

	ret = register_nmi_handler(NMI_LOCAL, dtt_bad_nmi_handler, 0, "dti_test_bad");
	if (ret) {
		dtt_bad.got = ret;
		return 0;
	}
	dtt_bad.got = -ETIMEDOUT;
	preempt_disable();
	WRITE_ONCE(dtt_bad.nmi_done, false);
	WRITE_ONCE(dtt_bad.nmi_cpu, smp_processor_id());
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	for (us = 0; us < DTT_NMI_WAIT_US && !smp_load_acquire(&dtt_bad.nmi_done); us++)
		udelay(1);
	WRITE_ONCE(dtt_bad.nmi_cpu, -1);
	preempt_enable();
	unregister_nmi_handler(NMI_LOCAL, "dti_test_bad");
	return 0;
}
#else
static int dtt_bad_run_nmi(void)
{
	return -EOPNOTSUPP;
}
#endif

static int dtt_cmd_badapi(char **argv, int argc)
{
	const struct dtt_bad_case *c = NULL;
	struct dtt_channel *bk = dtt_find("bk"), *bs = dtt_find("bs");
	bool hard = argc == 3 && !strcmp(argv[2], "hardirq");
	bool nmi = argc == 3 && !strcmp(argv[2], "nmi");
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dtt_bad_cases); i++)
		if (!strcmp(dtt_bad_cases[i].name, argv[1]))
			c = &dtt_bad_cases[i];
	if (!c || !bk || !bs)
		return -ENOENT;
	if ((argc == 3 && !hard && !nmi) || (hard && !(c->ctx & DTT_BAD_HARD)) ||
	    (nmi && !(c->ctx & DTT_BAD_NMI)))
		return -EINVAL;
	dtt_bad.bk = bk->trace;
	dtt_bad.bs = bs->trace;
	dtt_bad.c = c;
	if (hard) {
		init_completion(&dtt_bad.done);
		hrtimer_setup(&dtt_bad.timer, dtt_bad_timer_fn, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
		hrtimer_start(&dtt_bad.timer, ns_to_ktime(NSEC_PER_USEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
		wait_for_completion(&dtt_bad.done);
		hrtimer_cancel(&dtt_bad.timer);
	} else if (nmi) {
		int ret = dtt_bad_run_nmi();

		if (ret)
			return ret;
	} else {
		dtt_bad.got = c->fn();
	}
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0 got=%ld\n", dtt_bad.got);
	return 0;
}

/* At unload: what the cases left (a handle, channels of dtt_bad_owner) */
static void dtt_bad_exit(void)
{
	CLEANUP_DTI_HANDLE(dtt_h_badname);
	CLEANUP_DTI_HANDLE(dtt_h_size0);
	CLEANUP_DTI_HANDLE(dtt_h_sizemax);
	CLEANUP_DTI_HANDLE(dtt_h_level8);
	CLEANUP_DTI_HANDLE(dtt_h_twice);
	dti_ctl_release(&dtt_bad_owner);
}
/* end of badapi */

static int dtt_execute(char **argv, int argc)
{
	struct dtt_channel *c;
	unsigned int count;
	int level, ret;

	if (!strcmp(argv[0], "failnth") && argc >= 3)
		return dtt_cmd_failnth(argv, argc);
	if (!strcmp(argv[0], "failwork") && argc == 4)
		return dtt_cmd_failwork(argv);
	if (!strcmp(argv[0], "bgstop") && argc == 1)
		return dtt_cmd_bgstop();
	if (!strcmp(argv[0], "hlevel") && argc == 3) {
		struct dti_handle *h = dtt_handle(argv[1]);

		if (!h || kstrtoint(argv[2], 0, &level))
			return -EINVAL;
		return dti_set_level(&h->info, level);
	}
	if (!strcmp(argv[0], "register") || !strcmp(argv[0], "register_sub"))
		return dtt_cmd_register(argv, argc);
	if (!strcmp(argv[0], "printk"))
		return dtt_cmd_write(DTT_PRINTK, argv, argc);
	if (!strcmp(argv[0], "event"))
		return dtt_cmd_write(DTT_EVENT, argv, argc);
	if (!strcmp(argv[0], "reserve"))
		return dtt_cmd_write(DTT_RESERVE, argv, argc);
	if (!strcmp(argv[0], "evlog"))
		return dtt_cmd_write(DTT_TYPED, argv, argc);
	if ((!strcmp(argv[0], "evreg") || !strcmp(argv[0], "evbad")) && argc == 3)
		return dtt_cmd_evreg(argv, argv[0][2] == 'b');
	if (!strcmp(argv[0], "ctl_log"))
		return dtt_cmd_write(DTT_CTL_LOG, argv, argc);
	if (!strcmp(argv[0], "ctl_set"))
		return dtt_cmd_ctl(DTT_CTL_SET, argv, argc);
	if (!strcmp(argv[0], "ctl_create"))
		return dtt_cmd_ctl(DTT_CTL_CREATE, argv, argc);
	if (!strcmp(argv[0], "ctl_release") && argc == 1) {
		ret = dti_ctl_release(&dtt_owner);
		scnprintf(dtt_result, sizeof(dtt_result), "ret=0 released=%d\n",
			  ret);
		return ret < 0 ? ret : 0;
	}
	if (!strcmp(argv[0], "ctl_halt") && argc == 3) {
		ret = kstrtouint(argv[2], 0, &count);
		return ret ? ret : dti_ctl_halt_after(dtt_name_arg(argv[1]),
						      count);
	}
	if (!strcmp(argv[0], "ctl_halt_ns") && argc == 3) {
		u64 ns, before;

		ret = kstrtou64(argv[2], 0, &ns);
		if (ret)
			return ret;
		before = ktime_get_mono_fast_ns();
		ret = dti_ctl_halt_after_ns(dtt_name_arg(argv[1]), ns);
		scnprintf(dtt_result, sizeof(dtt_result), "ret=%d before=%llu\n",
			  ret, before);
		return ret;
	}
	if (!strcmp(argv[0], "ctl_get") && argc == 2) {
		ret = dti_ctl_get_level(dtt_name_arg(argv[1]), &level);
		if (!ret)
			scnprintf(dtt_result, sizeof(dtt_result),
				  "ret=0 level=%d\n", level);
		return ret;
	}
	if (!strcmp(argv[0], "handle_init") && argc == 2)
		return dtt_handle_init(argv[1]);
	if (!strcmp(argv[0], "hprintk") && argc == 5)
		return dtt_cmd_hprintk(argv);
	if (!strcmp(argv[0], "s390_register"))
		return dtt_cmd_s390_register(argv, argc);
	if (!strcmp(argv[0], "badlen") && argc == 3)
		return dtt_cmd_badlen(argv[1], argv[2]);
	if (!strcmp(argv[0], "scribble") && argc == 4)
		return dtt_cmd_scribble(argv);
	if (!strcmp(argv[0], "forge") && argc == 4)
		return dtt_cmd_forge(argv);
	if (!strcmp(argv[0], "forge_count") && argc == 5)
		return dtt_cmd_forge_count(argv);
	if (!strcmp(argv[0], "holdres") && (argc == 5 || argc == 6))
		return dtt_cmd_holdres(argv, argc);
	if (!strcmp(argv[0], "hotreg") && argc == 3)
		return dtt_cmd_hotreg(argv[1], argv[2]);
	if (!strcmp(argv[0], "badapi") && (argc == 2 || argc == 3))
		return dtt_cmd_badapi(argv, argc);
	if (!strcmp(argv[0], "exception") && (argc == 4 || argc == 5))
		return dtt_cmd_exception(argv, argc);
	if (!strcmp(argv[0], "stop") && argc == 2) {
		if (!strcmp(argv[1], "@all")) {
			dti_stop_all();
			return 0;
		}
		c = dtt_find(argv[1]);
		return c ? dti_stop(c->trace) : -ENOENT;
	}

	if (argc < 2)
		return -EINVAL;
	c = dtt_find(argv[1]);
	if (!c)
		return -ENOENT;
	if (!strcmp(argv[0], "unregister") && argc == 2) {
		dtt_release(c);
		return 0;
	}
	if (!strcmp(argv[0], "evrace") && argc == 2)
		return dtt_cmd_evrace(c);
	if (!strcmp(argv[0], "blob") && argc == 5)
		return dtt_cmd_blob(c, argv);
	if (!strcmp(argv[0], "context") && argc == 3) {
		ret = kstrtouint(argv[2], 0, &count);
		if (ret)
			return ret;
		ret = dti_set_context(c->trace, count);
		scnprintf(dtt_result, sizeof(dtt_result), "ret=%d\n", ret);
		return 0;
	}
	if (!strcmp(argv[0], "floodctx") && argc == 3) {
		ret = kstrtouint(argv[2], 0, &count);
		return ret ? ret : dtt_cmd_floodctx(c, count);
	}
	if (!strcmp(argv[0], "bgflood") && argc == 2)
		return dtt_cmd_bgflood(c);
	if (!strcmp(argv[0], "warn") && (argc == 2 || (argc == 3 && !strcmp(argv[2], "inres"))))
		return dtt_cmd_warn(c, argc == 3);
	if (!strcmp(argv[0], "rereg") && argc == 2 && !c->handle && !c->s390)
		return dtt_cmd_rereg(c);
	if (!strcmp(argv[0], "nest") && argc == 3) {
		ret = kstrtouint(argv[2], 0, &count);
		return ret ? ret : dtt_cmd_nest(c, count);
	}
	if (!strcmp(argv[0], "panicin") && argc == 3) {
		ret = kstrtouint(argv[2], 0, &count);
		return ret ? ret : dtt_cmd_panicin(c, count);
	}
	if (!strcmp(argv[0], "nmi") && argc == 3) {
		ret = kstrtouint(argv[2], 0, &count);
		return ret ? ret : dtt_cmd_nmi(c, count);
	}
	if (!strcmp(argv[0], "cross") && argc == 4) {
		struct dtt_channel *o = dtt_find(argv[2]);

		if (!o)
			return -ENOENT;
		ret = kstrtouint(argv[3], 0, &count);
		return ret ? ret : dtt_cmd_cross(c, o, count);
	}
	if ((!strcmp(argv[0], "race") || !strcmp(argv[0], "flood")) &&
	    argc == 3) {
		ret = kstrtouint(argv[2], 0, &count);
		return ret ? ret : dtt_cmd_race(c, count, argv[0][0] == 'r');
	}
	if (argc < 3)
		return -EINVAL;
	ret = kstrtoint(argv[2], 0, &level);
	if (ret)
		return ret;
	if (!strcmp(argv[0], "set_level") && argc == 3)
		return dti_set_level(c->trace, level);
	if (!strcmp(argv[0], "haltin") && argc == 3)
		return dtt_cmd_haltin(c, level);
	if ((!strcmp(argv[0], "ratelimited") || !strcmp(argv[0], "ratelimit_rs")) &&
	    argc == 4) {
		ret = kstrtouint(argv[3], 0, &count);
		return ret ? ret : dtt_cmd_ratelimited(c, level, count,
						       !strcmp(argv[0], "ratelimit_rs"));
	}
	if (!strcmp(argv[0], "devprintk") && argc == 3)
		return dtt_cmd_devprintk(c, level);
	if (!strcmp(argv[0], "s390_level") && argc == 3) {
		debug_set_level(c->trace, level);
		return 0;
	}
	if (!strcmp(argv[0], "s390") && argc == 5) {
		ret = kstrtouint(argv[3], 0, &count);
		return ret ? ret : dtt_cmd_s390(c, level, count, argv[4]);
	}
	return -EINVAL;
}

static ssize_t dtt_ctl_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char *argv[DTT_ARGS_MAX];
	char *buf, *p, *tok;
	int argc = 0, ret;

	if (count == 0 || count >= DTT_CMD_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = strim(buf);
	while ((tok = strsep(&p, " \t")) && argc < DTT_ARGS_MAX) {
		if (*tok)
			argv[argc++] = tok;
	}
	/* outside dtt_lock, which the killed writer would keep */
	if (argc == 1 && !strcmp(argv[0], "oops"))
		dtt_cmd_oops();
	if (argc == 2 && !strcmp(argv[0], "oops"))
		dtt_cmd_oops_after(argv[1]);
	mutex_lock(&dtt_lock);
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0\n");
	ret = argc ? dtt_execute(argv, argc) : -EINVAL;
	if (ret)
		scnprintf(dtt_result, sizeof(dtt_result), "ret=%d\n", ret);
	mutex_unlock(&dtt_lock);
	kfree(buf);
	return count;
}

static ssize_t dtt_ctl_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char result[DTT_RESULT_MAX];

	mutex_lock(&dtt_lock);
	strscpy(result, dtt_result, sizeof(result));
	mutex_unlock(&dtt_lock);
	return simple_read_from_buffer(ubuf, count, ppos, result,
				       strlen(result));
}

static const struct file_operations dtt_ctl_fops = {
	.owner	= THIS_MODULE,
	.write	= dtt_ctl_write,
	.read	= dtt_ctl_read,
	.llseek	= default_llseek,
};

/* Not __init: the callers' addresses must still resolve after loading. */
static noinline void dtt_log_early(void)
{
	unsigned int i;

	for (i = 0; i < early; i++)
		dti_printk(h_early, DTI_LEVEL_WARNING, "early %u\n", i);
}

static int __init dtt_init(void)
{
	int ret;

	dtt_log_early();
	ret = dtt_handle_init("h_early");
	if (!ret)
		ret = dtt_handle_init("h_demand");
	if (ret) {
		CLEANUP_DTI_HANDLE(h_early);
		return ret;
	}
	dtt_dir = debugfs_create_dir("dti_test", NULL);
	debugfs_create_file("ctl", 0600, dtt_dir, NULL, &dtt_ctl_fops);
	return 0;
}

static void __exit dtt_exit(void)
{
	int i;

	debugfs_remove_recursive(dtt_dir);
	dtt_bad_exit();
	dtt_bg_exit();
	dti_ctl_release(&dtt_owner);
	for (i = 0; i < DTT_MAX_CHANNELS; i++) {
		if (dtt_channels[i].trace)
			dtt_release(&dtt_channels[i]);
	}
}

module_init(dtt_init);
module_exit(dtt_exit);

MODULE_DESCRIPTION("DTI test client: drives the DTI API for the test suite");
MODULE_LICENSE("GPL");
