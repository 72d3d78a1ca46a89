/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DTI - the Driver Tracing Interface: per-CPU flight-recorder channels
 * for drivers, built on relay and debugfs.
 *
 * Low-level interface:
 *
 *	struct dti_info *t = dti_register("mydrv", 64 * 1024, DTI_LEVEL_ERR);
 *	if (IS_ERR(t))
 *		return PTR_ERR(t);
 *	__dti_printk(t, DTI_LEVEL_INFO, "state %d -> %d\n", old, new);
 *	__dti_event(t, DTI_LEVEL_DEBUG, &req, sizeof(req));
 *	dti_unregister(t);
 *
 * The logging macros compare the record's level with the channel's level
 * inline and evaluate their arguments only when the record is stored, so
 * calls at disabled levels may stay in production code.  Records and the
 * levels are defined in <uapi/linux/dti_record.h>.
 */
#ifndef _LINUX_DTI_H
#define _LINUX_DTI_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/llist.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <uapi/linux/dti_record.h>

/*
 * The accounting (struct dti_cpu_stats) needs this_cpu_inc(),
 * this_cpu_add() and this_cpu_inc_return() of a u64 that an NMI on the
 * same CPU cannot tear or undo.  x86-64: one instruction on a %gs-based
 * address.  arm64: its own this_cpu ops (asm/percpu.h), preemption off
 * around an LSE atomic (stadd, ldadd: one instruction) or an LL/SC loop
 * (ldxr/stxr), whose store fails and is retried when an exception came
 * between the two, since an exception return clears the exclusive
 * monitor; a pseudo-NMI (CONFIG_ARM64_PSEUDO_NMI) is such an exception.
 * Elsewhere the generic this_cpu ops save and disable interrupts, which
 * masks no NMI, so DTI refuses to build there rather than miscount.
 */
#if !defined(CONFIG_X86_64) && !defined(CONFIG_ARM64)
#error "DTI: this_cpu operations are NMI-safe here only on x86-64 and arm64 (see dti.h)"
#endif

/* dti_register_flags() flags */
#define DTI_F_NO_OVERWRITE	0x1	/* drop new records when full, keep old */
#define DTI_F_PERSIST		0x2	/* buffers in dti.ko's persistent region */
/*
 * Stop storing at an oops, a WARN() or a panic (the channel's stop_on
 * file; dti.ko's stop_on parameter is what every channel starts with):
 * what led up to it stays in the buffers.  A level change starts the
 * channel again.
 */
#define DTI_F_STOP_ON_OOPS	0x4
#define DTI_F_STOP_ON_WARN	0x8
#define DTI_F_STOP_ON_PANIC	0x10
#define DTI_F_STOP_ON_ALL	(DTI_F_STOP_ON_OOPS | DTI_F_STOP_ON_WARN | \
				 DTI_F_STOP_ON_PANIC)

/* Sub-buffers per CPU buffer when dti_register() splits the size. */
#define DTI_DEFAULT_N_SUBBUFS	8

/* Limits on buffer geometry; registration refuses anything outside. */
#define DTI_SUBBUF_SIZE_MIN	512
#define DTI_SUBBUF_SIZE_MAX	(4U << 20)
#define DTI_N_SUBBUFS_MIN	2
#define DTI_N_SUBBUFS_MAX	4096
#define DTI_BUF_SIZE_MAX	(64U << 20)	/* per CPU */

/* Longest dti_printk() text; longer text is cut and flagged. */
#define DTI_TEXT_MAX		1024

/*
 * Largest payload any record can have: a sub-buffer of the largest size
 * less its header and the record's.  Every length a caller passes is
 * checked against this before anything else uses it.
 */
#define DTI_PAYLOAD_MAX		(DTI_SUBBUF_SIZE_MAX - DTI_SUBBUF_HEADER_SIZE - \
				 DTI_CREC_HDR_MAX)

/**
 * struct dti_cpu_stats - per-CPU counters and write guard of a channel
 * @filtered:	records refused by the level check (counted inline)
 * @written:	records stored in the relay buffer
 * @overwritten: stored records since overwritten by newer ones
 * @discarded:	stored records freed with their buffers ("destroy")
 * @dropped:	records lost because a no-overwrite buffer was full
 * @nested:	records refused because they would have nested inside a
 *		write or a snapshot copy of the same channel on this CPU
 *		(a probe inside DTI's write path, for instance)
 * @nmi:	the same, for records logged from NMI context (NMIs and
 *		int3-based kprobe handlers); records from NMI context that
 *		interrupted no writer are stored as any other
 * @lost:	records lost in the pending store: it was full, or the record
 *		was a reservation, which needs buffers
 * @unavailable: records that found no buffer to go to: the buffers were
 *		being destroyed, or this CPU has none
 * @rejected:	records refused for bad arguments (length, level)
 * @halted:	records refused because a halt trigger had already let its
 *		records through (dti_ctl_halt_after())
 * @stopped:	records refused because the channel was stopped: at an
 *		oops, a WARN() or a panic (stop_on), by the sysrq key, or by
 *		dti_stop(), dti_stop_all() or an exception call
 * @seq:	next sequence number
 * @busy:	the write guard: non-zero while a write, a replay or a snapshot
 *		copy of this channel runs on this CPU.  Not a counter.
 *
 * Every record that passes the level check takes a sequence number on
 * the CPU that handles it and is counted exactly once: @seq = @written +
 * @dropped + @nested + @nmi + @lost + @unavailable + @rejected + @halted +
 * @stopped.  A record
 * kept in the pending store takes its number when it is replayed, on the
 * replaying CPU.  What a reader sees of a CPU's buffer is @written -
 * @overwritten - @discarded records.  The counters change with this_cpu
 * operations, NMI-safe on x86-64 and arm64 (above), so a nested writer
 * never undoes an update of the writer it interrupted.
 */
struct dti_cpu_stats {
	u64 filtered;
	u64 written;
	u64 overwritten;
	u64 discarded;
	u64 dropped;
	u64 nested;
	u64 nmi;
	u64 lost;
	u64 unavailable;
	u64 rejected;
	u64 halted;
	u64 stopped;
	u64 seq;
	unsigned int busy;
};

struct dti_channel;

/**
 * struct dti_pending - records kept until a channel's buffers exist
 * @dump:	dump descriptor, so that a memory dump shows the records
 *		(struct dti_dump_pending in dti_record.h); first, with @used
 *		right after it, so that both lie in one page
 * @used:	bytes holding records, in the format of dti_record.h
 * @lock:	protects the rest; taken with interrupts off
 * @buf:	storage, DTI_RECORD_ALIGN aligned
 * @size:	bytes of @buf
 * @lost:	records that did not fit
 * @replayed:	records copied into the relay buffers so far
 * @early:	DTI_PENDING_* bits: a handle's store, and what DTI's init is
 *		to do with the handle (built-in code before DTI's init)
 * @early_node:	on the list of handles DTI's init registers
 *
 * A handle logs here before INIT_DTI_HANDLE() (early handles) and while
 * its buffers are being created on demand; the records are replayed into
 * the buffers, in order and with their original timestamps, exactly once.
 */
struct dti_pending {
	struct dti_dump_pending dump;
	size_t used;
	raw_spinlock_t lock;
	void *buf;
	size_t size;
	u64 lost;
	u64 replayed;
	unsigned long early;
	struct llist_node early_node;
};

/*
 * Bits of dti_pending.early.  A handle's store has DTI_PENDING_HANDLE
 * from its definition; the others concern a handle used by built-in
 * code before DTI's init (a postcore_initcall), which registers it.
 */
enum {
	DTI_PENDING_HANDLE,	/* the store of a struct dti_handle */
	DTI_PENDING_LINKED,	/* on the list DTI's init walks */
	DTI_PENDING_DEFER,	/* INIT_DTI_HANDLE() before DTI's init */
	DTI_PENDING_WITHDRAWN,	/* CLEANUP_DTI_HANDLE() before DTI's init */
	DTI_PENDING_ADOPTED,	/* registered by DTI's init, unasked */
	DTI_PENDING_UNDUPLICATED, /* per-CPU counts of before setup_per_cpu_areas() fixed */
};

/*
 * Alignment of a handle's pending store: a power of two at least as
 * large as its descriptor and @used, so that the two never straddle a
 * page boundary of module memory, which is not physically contiguous.
 */
#define DTI_DUMP_PENDING_ALIGN	128

/* The descriptor of a statically defined store; dti_handle_init() seals it. */
#define DTI_DUMP_PENDING_INIT(_name, _buf, _bufsize) {			\
		.marker = DTI_MARKER_PREFIX _name,			\
		.magic = DTI_DUMP_MAGIC,				\
		.version = DTI_DUMP_VERSION,				\
		.type = DTI_DUMP_PENDING,				\
		.size = sizeof(struct dti_dump_pending),		\
		.used_offset = offsetof(struct dti_pending, used),	\
		.buf = (unsigned long)(_buf),				\
		.buf_size = (_bufsize),					\
	}

/**
 * struct dti_info - a DTI channel, as drivers see it
 * @level:	current level; records with a level above it are not stored
 * @stats:	per-CPU counters
 * @chan:	private to dti.ko; NULL while a handle is not initialised
 * @pending:	where records go while there are no buffers, or NULL
 */
struct dti_info {
	int level;
	struct dti_cpu_stats __percpu *stats;
	struct dti_channel __rcu *chan;
	struct dti_pending *pending;
};

/**
 * struct dti_handle - a channel defined statically, created on demand
 * @info:	the channel's level, counters and pending records
 * @pending:	storage for @info.pending, aligned for dump readers
 * @name:	channel name
 * @size:	bytes of buffer per CPU once the buffers exist
 * @flags:	DTI_F_PERSIST or 0
 *
 * Use DEFINE_DTI_HANDLE() or DEFINE_DTI_EARLY_HANDLE(), never directly.
 */
struct dti_handle {
	struct dti_info info;
	struct dti_pending pending __aligned(DTI_DUMP_PENDING_ALIGN);
	const char *name;
	size_t size;
	unsigned int flags;
};

/* Bytes of pending-record storage a DEFINE_DTI_HANDLE() handle gets. */
#define DTI_PENDING_DEFAULT_SIZE	1024

struct dti_info *dti_register_flags(const char *name, size_t subbuf_size,
				    size_t n_subbufs, int init_level,
				    unsigned int flags);
struct dti_info *__dti_register(const char *name, size_t subbuf_size,
				size_t n_subbufs, int init_level);
struct dti_info *dti_register(const char *name, size_t size, int init_level);
void dti_unregister(struct dti_info *trace);
int dti_set_level(struct dti_info *trace, int level);

int dti_handle_init(struct dti_handle *handle);
void dti_handle_cleanup(struct dti_handle *handle);

/*
 * Control by channel name, from any context but NMI (see dti_ctl.c).
 * DTI_CTL_VERSION, which dti_ctl_version() returns, is raised when one
 * of these functions changes its arguments or its meaning (one added
 * leaves it): tapset/dti_control.stp, which calls them through its own
 * prototypes, refuses a dti.ko whose version is not its own.
 */
#define DTI_CTL_VERSION		1
unsigned int dti_ctl_version(void);
int dti_ctl_get_level(const char *name, int *level);
int dti_ctl_set_level(const char *name, int level);
int dti_ctl_log(const char *name, int level, bool text, const void *buf,
		size_t len, unsigned long caller);
int dti_ctl_create(const char *name, size_t size, int level,
		   const void *owner);
int dti_ctl_release(const void *owner);
/* The largest count dti_ctl_halt_after() takes: 2^48 - 1 records */
#define DTI_HALT_COUNT_MAX	((1ULL << 48) - 1)
int dti_ctl_halt_after(const char *name, unsigned long count);
int dti_ctl_halt_after_ns(const char *name, u64 ns);
int dti_ctl_trigger_cpu(const char *name, unsigned int cpu, u64 *first_seq,
			u64 *last_seq, u64 *records);
long dti_ctl_trigger_left(const char *name);
int dti_ctl_set_ordered(const char *name, bool on);
int dti_ctl_stop(const char *name);

int dti_stop(struct dti_info *trace);
void dti_stop_all(void);
int dti_ctl_probe_filtered(bool on);
int dti_ctl_probe_stored(bool on);

__printf(3, 4)
int dti_printk_raw(struct dti_info *trace, int level, const char *fmt, ...);
int dti_event_raw(struct dti_info *trace, int level, const void *buf,
		  size_t len);
void *dti_reserve_raw(struct dti_info *trace, int level, size_t len);
int dti_blob_raw(struct dti_info *trace, int level, const char *media_type,
		 const void *buf, size_t len);
void dti_commit_raw(struct dti_info *trace, void *data);

/**
 * struct dti_event_type - an event type: binary records that describe
 *	themselves (see <uapi/linux/dti_record.h>)
 * @id:		its id, unique in its channel
 * @name:	its name, as a channel name
 * @fmt:	its template, printf-like: the conversions say what the
 *		values are and how they print
 * @owner:	the channel it is registered on, or NULL (dti.ko's)
 * @nargs:	values of an event (dti.ko's)
 * @layout:	DTI_ARG_* per value (dti.ko's)
 * @format:	its DTI_REC_FORMAT payload (dti.ko's)
 * @format_len:	bytes of @format (dti.ko's)
 * Define one with DEFINE_DTI_EVENT(), register it with
 * dti_event_register(), log with __dti_log_event() or dti_log_event().
 */
struct dti_event_type {
	u16 id;
	const char *name;
	const char *fmt;
	struct dti_info *owner;
	u8 nargs;
	char layout[DTI_EVENT_ARGS_MAX];
	void *format;
	u16 format_len;
};

/**
 * DEFINE_DTI_EVENT - define an event type
 * @var: variable name of the type
 * @_id: its id in the channel (0..65535)
 * @_name: its name
 * @_fmt: its template, a string literal
 *
 * The template is kept in a const array of its own as well, so that the
 * compiler checks the values of every __dti_log_event() against it.
 */
#define DEFINE_DTI_EVENT(var, _id, _name, _fmt)				\
	static const char var##__dti_fmt[] = _fmt;			\
	static struct dti_event_type var = {				\
		.id = (_id), .name = (_name), .fmt = var##__dti_fmt,	\
	}

int dti_event_register(struct dti_info *trace, struct dti_event_type *type);

/* dti_set_context() bits: the system events a channel stores */
#define DTI_CONTEXT_SCHED	0x1	/* every CPU's context switches */
#define DTI_CONTEXT_IRQ		0x2	/* every interrupt handler's entry */
#define DTI_CONTEXT_ALL		(DTI_CONTEXT_SCHED | DTI_CONTEXT_IRQ)
int dti_set_context(struct dti_info *trace, unsigned int mask);
int dti_event_log_raw(struct dti_info *trace, int level,
		      const struct dti_event_type *type, ...);

/* Never called: lets the compiler check an event's values against its template */
static inline __printf(1, 2) void __dti_event_check(const char *fmt, ...)
{
}

/*
 * On while SystemTap (or anything) listens to refused records.  It is
 * exported only because dti_enabled(), inlined into every client, tests
 * it; it belongs to dti.ko, which turns it on and off
 * (dti_ctl_probe_filtered(), the probe_filtered parameter).  A module
 * that flips it itself only makes refused records call
 * dti_probe_filtered(), which does nothing but be probed.
 */
DECLARE_STATIC_KEY_FALSE(dti_filtered_probe_key);
void dti_probe_filtered(struct dti_info *trace, int level, unsigned long ip);

/**
 * dti_enabled - would a record at @level be stored?
 * @trace: channel
 * @level: level of the record
 *
 * The inline part of every logging call: one load and one compare.  A
 * refused record is counted in the CPU's @filtered counter and, only
 * while dti.ko's probe_filtered parameter is set (a patched-out branch
 * otherwise), reported to dti_probe_filtered() for SystemTap.
 *
 * Return: true if the channel's level is @level or higher.
 */
static __always_inline bool dti_enabled(struct dti_info *trace, int level)
{
	if (likely(level > READ_ONCE(trace->level))) {
		this_cpu_inc(trace->stats->filtered);
		if (static_branch_unlikely(&dti_filtered_probe_key))
			dti_probe_filtered(trace, level, _THIS_IP_);
		return false;
	}
	return true;
}

/*
 * __dti_call - make a logging call that stays a call
 *
 * dti.ko records a call's return address as the record's caller.  A
 * logging call in tail position (the last statement of a function) that
 * the compiler turned into a jump would return to the caller's caller,
 * and the record would name the wrong function and line; the empty asm
 * after it keeps it a call.  It emits no instruction.
 */
#define __dti_call(call)						\
({									\
	typeof(call) __dti_ret = (call);				\
	barrier();							\
	__dti_ret;							\
})

/**
 * __dti_printk - log a printk-style text record
 * @trace: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @fmt: printf format; the arguments are evaluated only if stored
 *
 * Return: 0 if stored or filtered by level, else a negative errno as for
 * dti_printk_raw().
 */
#define __dti_printk(trace, level, fmt, ...)				\
({									\
	struct dti_info *__dti_t = (trace);				\
	int __dti_l = (level);						\
	dti_enabled(__dti_t, __dti_l) ?					\
		__dti_call(dti_printk_raw(__dti_t, __dti_l, fmt, ##__VA_ARGS__)) : 0; \
})

/**
 * struct dti_ratelimit - how often a logging call site may store
 * @begin:	jiffies at which the current window began, 0 before the first
 * @left:	records the current window still lets through
 * @missed:	records refused since the last one let through
 * @interval:	length of a window, in jiffies
 * @burst:	records a window lets through
 *
 * One per call site of dti_printk_ratelimited() (DEFINE_DTI_RATELIMIT()
 * for a state of one's own), changed with atomic operations only, so
 * that a rate-limited call may come from any context, NMI included.
 */
struct dti_ratelimit {
	atomic_long_t begin;
	atomic_t left;
	atomic_t missed;
	unsigned int interval;
	unsigned int burst;
};

/* As printk_ratelimited()'s defaults: 10 records each 5 seconds */
#define DTI_RATELIMIT_INTERVAL	(5 * HZ)
#define DTI_RATELIMIT_BURST	10

/* The first call begins the first window (@begin 0), filling @left. */
#define DTI_RATELIMIT_INIT(interval_jiffies, nr_burst) {		\
	.begin = ATOMIC_LONG_INIT(0),					\
	.left = ATOMIC_INIT(0),						\
	.missed = ATOMIC_INIT(0),					\
	.interval = (interval_jiffies),					\
	.burst = (nr_burst),						\
}

/**
 * DEFINE_DTI_RATELIMIT - define a rate limit for dti_printk_rs()
 * @name: variable name
 * @interval_jiffies: length of a window, in jiffies
 * @nr_burst: records stored in each window
 */
#define DEFINE_DTI_RATELIMIT(name, interval_jiffies, nr_burst)		\
	struct dti_ratelimit name = DTI_RATELIMIT_INIT(interval_jiffies, nr_burst)

bool dti_ratelimit(struct dti_ratelimit *rs, int *missed);

/**
 * __dti_printk_rs - log a text record unless @rs refuses it
 * @trace: channel
 * @rs: rate limit (struct dti_ratelimit)
 * @level: record level
 * @fmt: printf format; the arguments are evaluated only if stored
 *
 * The rate limit is consulted only for a record the level lets through,
 * so a filtered call costs what __dti_printk() costs.  The first record
 * a window lets through after others were refused is preceded by a
 * record, at the same level, that says how many were
 * ("dti: N records suppressed by a rate limit").
 *
 * Return: as __dti_printk(); 0 for a record the rate limit refused.
 */
#define __dti_printk_rs(trace, rs, level, fmt, ...)			\
({									\
	struct dti_info *__dti_rt = (trace);				\
	int __dti_rl = (level), __dti_missed = 0, __dti_ret = 0;	\
	if (dti_enabled(__dti_rt, __dti_rl) &&				\
	    dti_ratelimit((rs), &__dti_missed)) {			\
		if (unlikely(__dti_missed))				\
			dti_printk_raw(__dti_rt, __dti_rl,		\
				       "dti: %d records suppressed by a rate limit\n", \
				       __dti_missed);			\
		__dti_ret = __dti_call(dti_printk_raw(__dti_rt, __dti_rl, \
						      fmt, ##__VA_ARGS__)); \
	}								\
	__dti_ret;							\
})

/**
 * __dti_printk_ratelimited - __dti_printk(), at most DTI_RATELIMIT_BURST
 *	records each DTI_RATELIMIT_INTERVAL from this call site
 * @trace: channel
 * @level: record level
 * @fmt: printf format
 *
 * As printk_ratelimited(), with a rate limit of the call site's own; see
 * __dti_printk_rs().  Context: any, NMI included.
 */
#define __dti_printk_ratelimited(trace, level, fmt, ...)		\
({									\
	static struct dti_ratelimit __dti_rs =				\
		DTI_RATELIMIT_INIT(DTI_RATELIMIT_INTERVAL, DTI_RATELIMIT_BURST); \
	__dti_printk_rs(trace, &__dti_rs, level, fmt, ##__VA_ARGS__);	\
})

/*
 * Records that name a device first, as dev_printk() does ("DRIVER
 * DEVICE: "): dev_driver_string() and dev_name() are evaluated only if
 * the record is stored.  <linux/device.h> is the caller's.
 */
#define __dev_dti_printk(trace, level, dev, fmt, ...)			\
({									\
	const struct device *__dti_dev = (dev);				\
	__dti_printk(trace, level, "%s %s: " fmt,			\
		     dev_driver_string(__dti_dev), dev_name(__dti_dev),	\
		     ##__VA_ARGS__);					\
})

/**
 * __dti_event - log a binary record
 * @trace: channel
 * @level: record level
 * @buf: bytes to copy into the record
 * @len: number of bytes
 *
 * Return: as dti_event_raw(); 0 if filtered.
 */
#define __dti_event(trace, level, buf, len)				\
({									\
	struct dti_info *__dti_t = (trace);				\
	int __dti_l = (level);						\
	dti_enabled(__dti_t, __dti_l) ?					\
		__dti_call(dti_event_raw(__dti_t, __dti_l, buf, len)) : 0; \
})

/**
 * __dti_blob - log a blob: bytes of any length with a media type
 * @trace: channel
 * @level: record level
 * @media_type: its media type, a string ("application/octet-stream")
 * @buf: bytes to copy into the record
 * @len: number of bytes, up to the largest payload less the media type
 *
 * Return: as dti_blob_raw(); 0 if filtered.
 */
#define __dti_blob(trace, level, media_type, buf, len)			\
({									\
	struct dti_info *__dti_t = (trace);				\
	int __dti_l = (level);						\
	dti_enabled(__dti_t, __dti_l) ?					\
		__dti_call(dti_blob_raw(__dti_t, __dti_l, media_type,	\
					buf, len)) : 0;			\
})

/**
 * __dti_reserve - reserve space for a binary record the caller fills in
 * @trace: channel
 * @level: record level
 * @len: payload length
 *
 * Fill in the payload, then publish the record with __dti_commit(); it
 * is invisible until then (see dti_reserve_raw()).
 *
 * Context: interrupts disabled, from the reservation until the commit.
 * Return: pointer to @len bytes of payload, aligned to DTI_CREC_ALIGN
 * (4) bytes only, or NULL if filtered or not stored.
 */
#define __dti_reserve(trace, level, len)				\
({									\
	struct dti_info *__dti_t = (trace);				\
	int __dti_l = (level);						\
	dti_enabled(__dti_t, __dti_l) ?					\
		dti_reserve_raw(__dti_t, __dti_l, len) : NULL;		\
})

/**
 * __dti_commit - publish a record __dti_reserve() reserved
 * @trace: channel
 * @data: what __dti_reserve() returned (NULL does nothing)
 *
 * Context: as the __dti_reserve() call, interrupts still disabled.
 */
#define __dti_commit(trace, data)	dti_commit_raw(trace, data)

/**
 * __dti_log_event - log an event of a registered type
 * @trace: channel
 * @level: record level
 * @ev: the type's variable (DEFINE_DTI_EVENT()), registered on @trace
 * @...: its values, as its template says
 * The values are packed as the template's conversions say, with no text
 * formatting (see dti_event_log_raw()); readers print them through the
 * template.
 * Return: as dti_event_log_raw(); 0 if filtered.
 */
#define __dti_log_event(trace, level, ev, ...)				\
({									\
	struct dti_info *__dti_t = (trace);				\
	int __dti_l = (level);						\
	if (0)								\
		__dti_event_check(ev##__dti_fmt, ##__VA_ARGS__);	\
	dti_enabled(__dti_t, __dti_l) ?					\
		__dti_call(dti_event_log_raw(__dti_t, __dti_l, &(ev),	\
					     ##__VA_ARGS__)) : 0;	\
})

/**
 * __dti_exception - log a text record, then stop the channel
 * @trace: channel
 * @level: record level
 * @fmt: printf format
 *
 * As s390dbf's exception calls: the record (stored if its level is,
 * as __dti_printk() stores it) is the channel's last until a level
 * change starts it again (dti_stop()).
 *
 * Context: any, NMI included.
 * Return: as __dti_printk().
 */
#define __dti_exception(trace, level, fmt, ...)				\
({									\
	struct dti_info *__dti_x = (trace);				\
	int __dti_r = __dti_printk(__dti_x, level, fmt, ##__VA_ARGS__); \
	dti_stop(__dti_x);						\
	__dti_r;							\
})

/**
 * __dti_exception_all - log a text record, then stop every channel
 * @trace: channel
 * @level: record level
 * @fmt: printf format
 *
 * As __dti_exception(), stopping every channel (dti_stop_all()).
 *
 * Context: any, NMI included.
 * Return: as __dti_printk().
 */
#define __dti_exception_all(trace, level, fmt, ...)			\
({									\
	int __dti_r = __dti_printk(trace, level, fmt, ##__VA_ARGS__);	\
	dti_stop_all();							\
	__dti_r;							\
})

/*
 * The handle interface.  A handle is defined once, statically, in the
 * file that logs to it; the channel's buffers are allocated when the
 * first record at a stored level arrives, from any context.
 *
 *	DEFINE_DTI_HANDLE(mytrace, "mydrv", 64 * 1024, DTI_LEVEL_ERR);
 *
 *	init:	err = INIT_DTI_HANDLE(mytrace);
 *	log:	dti_printk(mytrace, DTI_LEVEL_INFO, "reset %d\n", why);
 *	exit:	CLEANUP_DTI_HANDLE(mytrace);
 */
#define __DEFINE_DTI_HANDLE(handle, _name, _size, _level, _buf, _bufsize, \
			    _flags)					   \
	static DEFINE_PER_CPU(struct dti_cpu_stats, handle##__dti_stats);  \
	static struct dti_handle handle = {				   \
		.info = {						   \
			.level = (_level),				   \
			.stats = &handle##__dti_stats,			   \
			.pending = &handle.pending,			   \
		},							   \
		.pending = {						   \
			.dump = DTI_DUMP_PENDING_INIT(_name, _buf, _bufsize), \
			.lock = __RAW_SPIN_LOCK_UNLOCKED(handle.pending.lock), \
			.buf = (_buf),					   \
			.size = (_bufsize),				   \
			.early = BIT(DTI_PENDING_HANDLE),		   \
		},							   \
		.name = (_name),					   \
		.size = (_size),					   \
		.flags = (_flags),					   \
	}

/**
 * DEFINE_DTI_HANDLE - define a file-local DTI handle
 * @handle: variable name of the handle
 * @name: channel name (see dti_register_flags())
 * @size: bytes of relay buffer per CPU, allocated on demand
 * @init_level: level before anyone changes it
 *
 * The handle also gets DTI_PENDING_DEFAULT_SIZE bytes for records that
 * arrive while its buffers are being created.
 */
#define DEFINE_DTI_HANDLE(handle, name, size, init_level)		   \
	static u64 handle##__dti_buf[DTI_PENDING_DEFAULT_SIZE / sizeof(u64)]; \
	__DEFINE_DTI_HANDLE(handle, name, size, init_level,		   \
			    handle##__dti_buf, sizeof(handle##__dti_buf), 0)

/**
 * DEFINE_DTI_EARLY_HANDLE - define a handle that can log before its init
 * @handle: variable name of the handle
 * @name: channel name
 * @size: bytes of relay buffer per CPU
 * @init_level: level before anyone changes it
 * @static_buf: storage for records logged before INIT_DTI_HANDLE(), at
 *		least DTI_RECORD_ALIGN aligned
 * @static_size: bytes of @static_buf
 *
 * Records logged before INIT_DTI_HANDLE() go to @static_buf and are
 * replayed into the channel when it is initialised.  In built-in code
 * the handle may log from start_kernel() on, before DTI's init (a
 * postcore_initcall), which registers the channel of every handle
 * logged to or INIT_DTI_HANDLE()d before it; a record that does not fit
 * @static_buf is counted as lost.
 */
#define DEFINE_DTI_EARLY_HANDLE(handle, name, size, init_level,		   \
				static_buf, static_size)		   \
	__DEFINE_DTI_HANDLE(handle, name, size, init_level,		   \
			    static_buf, static_size, 0)

/**
 * DEFINE_DTI_PERSIST_HANDLE - define a handle whose records survive a reset
 * @handle: variable name of the handle
 * @name: channel name
 * @size: bytes of buffer per CPU, taken from dti.ko's persistent region
 * @init_level: level before anyone changes it
 *
 * As DEFINE_DTI_HANDLE(), with the channel's buffers in the region that
 * dti.ko's persist= parameter names (DTI_F_PERSIST): after a reset that
 * keeps RAM, the next load of dti.ko shows this boot's records under
 * /sys/kernel/debug/dti/.previous/<name>/.  INIT_DTI_HANDLE() fails with
 * -ENODEV without a region.  Room in the region is taken when the
 * buffers are created, with the first record at a stored level: without
 * room they are not created, and why is logged.
 */
#define DEFINE_DTI_PERSIST_HANDLE(handle, name, size, init_level)	   \
	static u64 handle##__dti_buf[DTI_PENDING_DEFAULT_SIZE / sizeof(u64)]; \
	__DEFINE_DTI_HANDLE(handle, name, size, init_level,		   \
			    handle##__dti_buf, sizeof(handle##__dti_buf),  \
			    DTI_F_PERSIST)

/*
 * Register the handle's channel; returns 0 or a negative errno.  Before
 * DTI's init (built-in code), returns 0 and leaves it to DTI's init.
 */
#define INIT_DTI_HANDLE(handle)		dti_handle_init(&(handle))
/* Unregister it; safe against logging calls running concurrently. */
#define CLEANUP_DTI_HANDLE(handle)	dti_handle_cleanup(&(handle))

/* Logging through a handle: as __dti_printk() and friends. */
#define dti_printk(handle, level, fmt, ...) \
	__dti_printk(&(handle).info, level, fmt, ##__VA_ARGS__)
#define dti_event(handle, level, buf, len) \
	__dti_event(&(handle).info, level, buf, len)
#define dti_blob(handle, level, media_type, buf, len) \
	__dti_blob(&(handle).info, level, media_type, buf, len)
#define dti_reserve(handle, level, len) \
	__dti_reserve(&(handle).info, level, len)
#define dti_commit(handle, data) \
	__dti_commit(&(handle).info, data)
#define dti_log_event(handle, level, ev, ...) \
	__dti_log_event(&(handle).info, level, ev, ##__VA_ARGS__)
#define dti_printk_ratelimited(handle, level, fmt, ...) \
	__dti_printk_ratelimited(&(handle).info, level, fmt, ##__VA_ARGS__)
#define dti_printk_rs(handle, rs, level, fmt, ...) \
	__dti_printk_rs(&(handle).info, rs, level, fmt, ##__VA_ARGS__)
#define dev_dti_printk(handle, level, dev, fmt, ...) \
	__dev_dti_printk(&(handle).info, level, dev, fmt, ##__VA_ARGS__)
#define dev_dti_err(handle, dev, fmt, ...) \
	dev_dti_printk(handle, DTI_LEVEL_ERR, dev, fmt, ##__VA_ARGS__)
#define dev_dti_warn(handle, dev, fmt, ...) \
	dev_dti_printk(handle, DTI_LEVEL_WARNING, dev, fmt, ##__VA_ARGS__)
#define dev_dti_info(handle, dev, fmt, ...) \
	dev_dti_printk(handle, DTI_LEVEL_INFO, dev, fmt, ##__VA_ARGS__)
#define dev_dti_dbg(handle, dev, fmt, ...) \
	dev_dti_printk(handle, DTI_LEVEL_DEBUG, dev, fmt, ##__VA_ARGS__)
#define dti_exception(handle, level, fmt, ...) \
	__dti_exception(&(handle).info, level, fmt, ##__VA_ARGS__)
#define dti_exception_all(handle, level, fmt, ...) \
	__dti_exception_all(&(handle).info, level, fmt, ##__VA_ARGS__)

#endif /* _LINUX_DTI_H */
