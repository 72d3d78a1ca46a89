/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to dti.ko: the channel bookkeeping and the interfaces between
 * the module's source files.
 */
#ifndef _DTI_INTERNAL_H
#define _DTI_INTERNAL_H

#include <linux/cpu.h>
#include <linux/crc32.h>
#include <linux/dti.h>
#include <linux/irq_work.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/relay.h>
#include <linux/smp.h>
#include <linux/workqueue.h>

#include "dti_compat.h"

/* CRC-32 as zlib's crc32() computes it, which the readers use. */
static inline u32 dti_crc32(const void *p, size_t len)
{
	return ~crc32_le(~0U, p, len);
}

/*
 * dti_crc32() of the @len bytes at @p as if the u32 at @crc_off were
 * zero, without writing it: the CRC a sealed structure carries in itself
 * (the readers compute it the same way), of one that must not be changed
 * (the panic path's, or a copy of the previous boot's).
 */
static inline u32 dti_crc32_sealed(const void *p, size_t len, size_t crc_off)
{
	static const u32 zero;
	u32 crc;

	crc = crc32_le(~0U, p, crc_off);
	crc = crc32_le(crc, (const u8 *)&zero, sizeof(zero));
	crc = crc32_le(crc, (const u8 *)p + crc_off + sizeof(zero),
		       len - crc_off - sizeof(zero));
	return ~crc;
}

/* dti_crc32_sealed() of the structure *@p, whose CRC is its member crc */
#define DTI_CRC32_SEALED(p) \
	dti_crc32_sealed((p), sizeof(*(p)), offsetof(typeof(*(p)), crc))

#define DTI_MARKER_PREFIX_LEN	(sizeof(DTI_MARKER_PREFIX) - 1)

/*
 * Numbers [*@first, *@last] of the sub-buffers of a ring that may hold
 * records, from relay's count of sub-buffers produced and its write
 * offset.  A full no-overwrite buffer (offset subbuf_size + 1) has
 * produced at least one sub-buffer and has no current one.
 */
static inline void dti_ring_range(size_t produced, size_t offset, size_t subbuf_size,
				  size_t n_subbufs, size_t *first, size_t *last)
{
	*last = offset <= subbuf_size || !produced ? produced : produced - 1;
	*first = *last >= n_subbufs - 1 ? *last - (n_subbufs - 1) : 0;
}

/*
 * Whether a record header that parses is at @rec with the whole record
 * within the @room bytes from there; its payload length, read once, in
 * *@len.
 */
static inline bool dti_record_whole(const struct dti_record *rec, size_t room, u32 *len)
{
	if (room < sizeof(*rec))
		return false;
	*len = READ_ONCE(rec->len);
	return rec->magic == DTI_RECORD_MAGIC && rec->version == DTI_RECORD_VERSION_1 &&
	       rec->hdr_len == sizeof(*rec) && DTI_RECORD_SIZE((u64)*len) <= room;
}

/*
 * Whether @hdr is a sub-buffer header dti.ko can read the records after:
 * those of version 1 or 2.  Its info, at DTI_SUBBUF_INFO_V1_SIZE bytes of
 * which every version has, follows it.
 */
static inline bool dti_subbuf_header_ok(const struct dti_record *hdr)
{
	return hdr->magic == DTI_RECORD_MAGIC && (hdr->flags & DTI_REC_SUBBUF) &&
	       (hdr->version == DTI_RECORD_VERSION_1 ||
		hdr->version == DTI_RECORD_VERSION) &&
	       hdr->hdr_len == sizeof(*hdr) &&
	       hdr->len >= (hdr->version == DTI_RECORD_VERSION_1 ?
			    DTI_SUBBUF_INFO_V1_SIZE : sizeof(struct dti_subbuf_info));
}

/* Bytes of the header of a sub-buffer that dti_subbuf_header_ok() took */
static inline size_t dti_subbuf_header_size(const struct dti_record *hdr)
{
	return hdr->version == DTI_RECORD_VERSION_1 ? DTI_SUBBUF_HEADER_SIZE_V1 :
						      DTI_SUBBUF_HEADER_SIZE;
}

/**
 * struct dti_rview - a record as readers see it, whatever its version
 * @ts_ns:	time
 * @seq:	sequence number (0 for a format)
 * @caller:	caller, 0 if none
 * @payload:	the payload, in the buffer
 * @len:	payload bytes
 * @size:	bytes the record takes in its sub-buffer
 * @log_cpu:	CPU that logged it
 * @flags:	DTI_REC_* bits
 * @level:	level
 */
struct dti_rview {
	u64 ts_ns;
	u64 seq;
	u64 caller;
	const void *payload;
	u32 len;
	u32 size;
	u32 log_cpu;
	u8 flags;
	s8 level;
};

/**
 * struct dti_walk - a reader's place in one sub-buffer (dti_walk_next())
 * @sub:	the sub-buffer, its header first
 * @pos:	where the next record starts, from @sub
 * @end:	bytes from @sub that may hold records
 * @left:	records of the header's count not walked yet
 * @version:	the header's record version
 * @cpu:	the CPU whose buffer it is
 * @hdr_ts:	the header's time: that of its formats
 * @ts:	time the next compact record's delta is from
 * @seq:	sequence number the next record takes unless it skips some
 * @caller_base: what DTI_CREC_CALLER32 callers are told from
 * @caller:	the caller of the record before (DTI_CREC_CALLER_SAME)
 */
struct dti_walk {
	const void *sub;
	size_t pos;
	size_t end;
	u32 left;
	u8 version;
	u16 cpu;
	u64 hdr_ts;
	u64 ts;
	u64 seq;
	u64 caller_base;
	u64 caller;
};

/*
 * What DTI_CREC_CALLER32 callers are told from: an address in dti.ko's
 * code, within 2 GiB of every module's and the kernel's on x86-64
 */
#define DTI_CALLER_BASE		((unsigned long)dti_walk_start)

bool dti_walk_start(struct dti_walk *w, const void *sub, size_t end, u32 records);
bool dti_walk_next(struct dti_walk *w, struct dti_rview *v);
size_t dti_rec_size_at(const void *p, size_t room, bool header);
void dti_walk_continue(const struct dti_walk *w, struct dti_subbuf_info *info);

/*
 * The seq of a sub-buffer header being written: no sub-buffer's number,
 * so a reader that looks for one does not take the header for its own
 */
#define DTI_SUBBUF_UNNUMBERED	U64_MAX

/**
 * struct dti_subbuf_peek - what a reader of a live ring takes from a
 * sub-buffer's header (dti_subbuf_peek())
 * @records:	its count of records: those before it are whole
 * @padding:	its padding, 0 unless @closed
 * @generation:	its generation
 * @closed:	it is closed: @records and @padding are final
 */
struct dti_subbuf_peek {
	u32 records;
	u32 padding;
	u32 generation;
	bool closed;
};

/*
 * Read the header of a live ring's sub-buffer at @sub if it is that of
 * sub-buffer number @nr.  Its number first, with acquire: the writer
 * stores it last (dti_write_subbuf_header()), so the rest of the header
 * read after it is sub-buffer @nr's or a later lap's, which the caller's
 * check after its copy finds.  Then its state, released once its padding
 * is set (dti_subbuf_start()), and its count, released once a record is
 * whole (dti_publish()).
 */
static inline bool dti_subbuf_peek(const void *sub, size_t nr, struct dti_subbuf_peek *p)
{
	const struct dti_record *hdr = sub;
	const struct dti_subbuf_info *info = sub + sizeof(*hdr);

	/* Pairs with smp_store_release() in dti_write_subbuf_header(). */
	if (smp_load_acquire(&hdr->seq) != nr)
		return false;
	/* Pairs with smp_store_release() in dti_subbuf_start(). */
	p->closed = smp_load_acquire(&info->state) == DTI_SUBBUF_CLOSED;
	/* Pairs with smp_store_release() in dti_publish(), dti_subbuf_start(). */
	p->records = smp_load_acquire(&info->records);
	p->padding = p->closed ? READ_ONCE(info->padding) : 0;
	p->generation = READ_ONCE(info->generation);
	return hdr->version == DTI_RECORD_VERSION;
}

/* Bytes of a sub-buffer of @size bytes that hold data, as @p tells */
static inline size_t dti_subbuf_peek_end(const struct dti_subbuf_peek *p, size_t size)
{
	return size - min_t(size_t, p->padding, size);
}

/*
 * Make a copy's header say what dti_subbuf_peek() found, whatever the
 * writer changed in it since: its count, padding and state.
 */
static inline void dti_subbuf_peek_put(struct dti_subbuf_info *info,
				       const struct dti_subbuf_peek *p)
{
	info->records = p->records;
	info->padding = p->padding;
	info->state = p->closed ? DTI_SUBBUF_CLOSED : DTI_SUBBUF_OPEN;
}

/* Base name of the per-CPU relay files: trace0, trace1, ... */
#define DTI_TRACE_FILE_BASE	"trace"

/*
 * Internal registration flag: buffers are created when the first record
 * at a stored level arrives (handles), not when the level allows it.
 */
#define DTI_F_ON_DEMAND		0x100

/**
 * struct dti_read_pos - where the reader of a trace file stopped
 * @buf:	the buffer read (a channel's buffers come and go)
 * @generation:	its generation, from its sub-buffer headers
 * @subbuf:	number of the sub-buffer, as subbufs_consumed counts
 * @offset:	bytes of it read, as bytes_consumed counts
 * @records:	records of it before @offset
 * @ts:		time the next compact record's delta is from
 * @seq:	sequence number the next record takes unless it skips some
 * @caller:	caller of the record before (DTI_CREC_CALLER_SAME)
 *
 * So that the next read() (dti_read.c) finds the chains of struct
 * dti_walk at its place without walking the records before it.  It
 * describes the place it names only; the trace file's inode lock
 * guards it.
 */
struct dti_read_pos {
	const struct rchan_buf *buf;
	u32 generation;
	size_t subbuf;
	size_t offset;
	u32 records;
	u64 ts;
	u64 seq;
	u64 caller;
};

/**
 * struct dti_channel - a DTI channel
 * @own_info:	the part drivers see, for channels registered directly
 * @info:	the part drivers see: @own_info, or a handle's
 * @dump:	dump descriptor: a reader of a memory dump finds the channel
 *		by its marker, "__DTI__<name>", and @name points into that
 *		(dti_dump.c)
 * @dump_cpus:	the descriptor's CPU table while there are buffers
 * @dump_lock:	serialises changes of @dump and @dump_cpus
 * @name:	channel name
 * @subbuf_size: relay sub-buffer size
 * @n_subbufs:	relay sub-buffers per CPU
 * @flags:	DTI_F_* registration flags
 * @rchan:	relay channel, NULL while the buffers are destroyed.  Writers
 *		run with interrupts off and read it under RCU; process-context
 *		readers hold @buf_lock.
 * @ctl_lock:	serialises level changes and unregistration; held while
 *		debugfs files are removed, so file operations never take it
 * @buf_lock:	held by file operations that use @rchan; taken only briefly
 *		by level changes, to publish or detach @rchan
 * @dying:	set by dti_unregister(); level changes then fail
 * @hidden:	on the list, so its name is taken, but not to be found by
 *		name: being registered or being removed.  Changes under
 *		dti_list_lock.
 * @create_work: creates the buffers of an on-demand channel
 * @kick:	queues @create_work; raised instead of queue_work() so that
 *		no context a record comes from (a scheduler path holding a
 *		runqueue lock, NMI) ever wakes a worker itself
 * @halt_ctl:	the halt trigger's state (DTI_HALT_*: whether a "halt
 *		after N" trigger is armed, dti_ctl_halt_after()), the
 *		generation of its last arming and the level the channel is
 *		to have, one word (dti_halt_ctl()) that level changes and
 *		the trigger each change with one atomic operation, so that
 *		they take effect in one order; @info's level follows it
 *		(dti_level_apply()).  The trigger stays armed once it fired,
 *		so that records still arriving are refused and counted,
 *		until the level changes.
 * @halt_places: the arming's generation and the places it still has for
 *		records (DTI_HALT_WORD())
 * @halt_pending: the arming's generation and the records it let through
 *		that are not stored yet; the writer that stores the last
 *		switches the channel off.  A record counts toward the arming
 *		it took its place from, never toward a later one.
 * @halt_deadline: for an arming by time (dti_ctl_halt_after_ns()), the
 *		timestamp after which no record is stored, 0 for one by
 *		count; written before the arming's release of @halt_ctl,
 *		read after a writer's acquire of it
 * @trigger:	per CPU, the records the trigger let through
 * @read_pos:	per CPU, where the reader of its trace file stopped
 * @ordered:	stores take @order_lock and their timestamp under it
 *		(dti_ctl_set_ordered())
 * @order_lock:	serialises an ordered channel's stores across CPUs
 * @owned:	created by dti_ctl_create(); freed with the channel
 * @owner:	cookie of the creator, for dti_ctl_release()
 * @dir:	debugfs directory of the channel
 * @merged:	the "merged" file, present while the buffers are
 * @merged_ts:	the "merged-ts" file, present while the buffers are
 * @list:	entry in the list of all channels
 * @name_node:	entry in the channels by name (dti_find())
 * @panic_records: newest records per CPU printed at panic (the
 *		dump_on_panic file; 0: none); read locklessly by dti_panic.c
 * @mark_level: level of user-space markers that give none (dti_usermark.c)
 * @stop_on:	DTI_F_STOP_ON_* bits: what stops the channel (dti_stop.c)
 * @stop_reason: why it is stopped (enum dti_stop_reason; DTI_STOP_NONE:
 *		it is not).  Set from any context by one cmpxchg(), read by
 *		every writer; a level change clears it (dti_level_switch()).
 * @stop_ns:	when it was stopped, in the records' clock, taken after
 *		@stop_reason was set
 * @events:	its event types (dti_event.c), or NULL
 * @context:	its context record types and the probes on (dti_context.c),
 *		or NULL before it first stored any
 */
struct dti_channel {
	struct dti_info own_info;
	struct dti_info *info;
	struct dti_dump_desc dump;
	struct dti_dump_cpu *dump_cpus;
	struct mutex dump_lock;		/* serialises changes of @dump, @dump_cpus */
	const char *name;
	size_t subbuf_size;
	size_t n_subbufs;
	unsigned int flags;
	struct rchan __rcu *rchan;
	struct mutex ctl_lock;		/* level changes, unregistration */
	struct mutex buf_lock;		/* file operations that use @rchan */
	bool dying;
	bool hidden;
	struct work_struct create_work;
	struct irq_work kick;
	atomic_t halt_ctl;
	atomic64_t halt_places;
	atomic64_t halt_pending;
	u64 halt_deadline;
	struct dti_trigger_cpu __percpu *trigger;
	struct dti_read_pos __percpu *read_pos;
	bool ordered;
	raw_spinlock_t order_lock;
	void *owned;
	const void *owner;
	struct dentry *dir;
	struct dentry *merged;
	struct dentry *merged_ts;
	struct list_head list;
	struct hlist_node name_node;
	u32 panic_records;
	int mark_level;
	unsigned int stop_on;
	int stop_reason;
	u64 stop_ns;
	struct dti_event_table __rcu *events;
	struct dti_context *context;
};

/**
 * enum dti_stop_reason - why a channel stopped storing (dti_stop.c)
 * @DTI_STOP_NONE:	it did not: it stores
 * @DTI_STOP_OOPS:	an oops (stop_on oops)
 * @DTI_STOP_WARN:	a WARN() (stop_on warn)
 * @DTI_STOP_PANIC:	a panic (stop_on panic)
 * @DTI_STOP_SYSRQ:	the sysrq key
 * @DTI_STOP_CALL:	dti_stop(), dti_stop_all(), an exception call,
 *			dti_ctl_stop()
 */
enum dti_stop_reason {
	DTI_STOP_NONE,
	DTI_STOP_OOPS,
	DTI_STOP_WARN,
	DTI_STOP_PANIC,
	DTI_STOP_SYSRQ,
	DTI_STOP_CALL,
};

/**
 * struct dti_snap_cpu - copy of one CPU's ring
 * @buf:	the ring copied, NULL for the previous boot's
 * @data:	copy of the whole ring, sub-buffer N at (N % @n_subbufs) *
 *		@subbuf_size
 * @padding:	copy of the per-sub-buffer padding
 * @subbuf_size: bytes per sub-buffer
 * @n_subbufs:	sub-buffers in the ring
 * @produced:	sub-buffers produced when the current one was copied
 * @offset:	write offset in the current sub-buffer at that moment
 * @produced_after: sub-buffers produced after the closed ones were copied
 * @offset_after: the write offset then (a full no-overwrite ring that
 *		resumed says so only there)
 * @borrowed:	@data and @padding belong to someone else
 */
struct dti_snap_cpu {
	struct rchan_buf *buf;
	void *data;
	size_t *padding;
	size_t subbuf_size;
	size_t n_subbufs;
	size_t produced;
	size_t offset;
	size_t produced_after;
	size_t offset_after;
	bool borrowed;
};

/**
 * struct dti_prev - what a persistent channel's previous boot left
 * @ref:	held by dti_persist.c until unload and by open views
 * @cleared:	released by a write to the clear file: no new opens
 * @name:	channel name
 * @slot:	its slot in the region
 * @boot:	the load of dti.ko that wrote the records
 * @nr_cpus:	entries in @cpus
 * @cpus:	per CPU, the validated copy (@data NULL: no ring)
 * @subbufs:	sub-buffers that passed the checks
 * @bad_subbufs: sub-buffers that should hold records and failed them
 * @records:	records that passed
 * @bad_records: records a sub-buffer header counts that failed
 * @dir:	.previous/<name>/, NULL once a clear removed it
 * @remove_work: removes @dir after a clear
 */
struct dti_prev {
	struct kref ref;
	bool cleared;
	char name[DTI_NAME_MAX + 1];
	unsigned int slot;
	unsigned int boot;
	unsigned int nr_cpus;
	struct dti_snap_cpu *cpus;
	unsigned long subbufs;
	unsigned long bad_subbufs;
	unsigned long records;
	unsigned long bad_records;
	struct dentry *dir;
	struct work_struct remove_work;
};

/* The state in struct dti_channel.halt_ctl */
#define DTI_HALT_OFF		0
#define DTI_HALT_ARMING		1	/* dti_ctl_halt_after() setting it up */
#define DTI_HALT_ARMED		2

/*
 * A halt trigger's counters (struct dti_channel.halt_places and
 * .halt_pending) are one 64-bit word each: the generation of the arming
 * they belong to above DTI_HALT_GEN_SHIFT, a count below it, so that a
 * writer takes a place of, and completes a record for, one arming and
 * never a later one (a dti.record handler may arm again while the
 * record that called it is still being stored).
 */
#define DTI_HALT_GEN_SHIFT	48	/* DTI_HALT_COUNT_MAX (dti.h) below it */
#define DTI_HALT_GEN_MASK	((1U << (64 - DTI_HALT_GEN_SHIFT)) - 1)
#define DTI_HALT_WORD(gen, count) \
	(((s64)((gen) & DTI_HALT_GEN_MASK) << DTI_HALT_GEN_SHIFT) | (s64)(count))
#define DTI_HALT_GEN(word)	((u32)((u64)(word) >> DTI_HALT_GEN_SHIFT))
#define DTI_HALT_COUNT(word)	((u64)(word) & DTI_HALT_COUNT_MAX)

/*
 * struct dti_channel.halt_ctl: the state in its low bits, the level the
 * channel is to have (less DTI_LEVEL_MIN) above them, the generation of
 * the last arming at the top.
 */
#define DTI_HALT_STATE_MASK	0x3
#define DTI_HALT_LEVEL_SHIFT	2
#define DTI_HALT_LEVEL_MASK	0xf
#define DTI_HALT_CTL_GEN_SHIFT	8

static inline int dti_halt_ctl(int state, int level, u32 gen)
{
	BUILD_BUG_ON(DTI_LEVEL_MAX - DTI_LEVEL_MIN > DTI_HALT_LEVEL_MASK);
	return state | (level - DTI_LEVEL_MIN) << DTI_HALT_LEVEL_SHIFT |
	       (gen & DTI_HALT_GEN_MASK) << DTI_HALT_CTL_GEN_SHIFT;
}

static inline int dti_halt_state(int ctl)
{
	return ctl & DTI_HALT_STATE_MASK;
}

static inline int dti_halt_level(int ctl)
{
	return ((ctl >> DTI_HALT_LEVEL_SHIFT) & DTI_HALT_LEVEL_MASK) + DTI_LEVEL_MIN;
}

static inline u32 dti_halt_ctl_gen(int ctl)
{
	return ((u32)ctl >> DTI_HALT_CTL_GEN_SHIFT) & DTI_HALT_GEN_MASK;
}

/**
 * struct dti_trigger_cpu - what a halt trigger let through on one CPU
 * @first_seq:	sequence number of the first record stored under arming @gen
 * @last_seq:	sequence number of the last one
 * @records:	how many were stored (sequence numbers in between that are
 *		missing belong to records that were lost, see the stats)
 * @gen:	the arming (DTI_HALT_GEN()) the three fields above belong
 *		to; the CPU's first record of a later arming starts them
 *		again, so arming touches no CPU's data
 * @events_gen:	generation of the event types whose formats frame the
 *		CPU's current sub-buffer (dti_event.c); not a trigger's,
 *		but per channel and per CPU as well
 * @crec_ts:	time of the record the CPU stored last, which the next
 *		compact record's time is told from (struct dti_crec)
 * @crec_seq:	sequence number the next record stored takes unless it
 *		skips some; like @crec_ts, the writer's and not a trigger's
 * @crec_caller: caller of the record the CPU stored last
 */
struct dti_trigger_cpu {
	u64 first_seq;
	u64 last_seq;
	u64 records;
	u32 gen;
	u32 events_gen;
	u64 crec_ts;
	u64 crec_seq;
	u64 crec_caller;
};

/**
 * struct dti_meta - what a writer knows about a record besides its payload
 * @ts_ns:	timestamp
 * @caller:	return address of the logging call
 * @cpu:	CPU the record was logged on
 * @level:	record level
 * @flags:	DTI_REC_* flags
 */
struct dti_meta {
	u64 ts_ns;
	unsigned long caller;
	u16 cpu;
	s8 level;
	u8 flags;
};

/*
 * Functions of one file that the KUnit suite (dti_kunit.c, linked into
 * dti itself) calls as well: static unless CONFIG_DTI_KUNIT_TEST, so
 * that a build without the suite is the same as before.  The kernel's
 * VISIBLE_IF_KUNIT would make them global in any kernel with KUnit.
 */
#if IS_ENABLED(CONFIG_DTI_KUNIT_TEST)
#define DTI_VISIBLE_IF_KUNIT
u8 dti_crec_plan(const struct dti_trigger_cpu *w, const struct dti_meta *meta,
		 u64 seq, size_t len);
void *dti_crec_write(void *at, u8 info, const struct dti_meta *meta, u64 seq,
		     size_t len, const struct dti_trigger_cpu *w);
#else
#define DTI_VISIBLE_IF_KUNIT	static
#endif

/*
 * Write the whole (version 1) header of a record of @len bytes of payload
 * held by @cpu's buffer: a pending store's, or a sub-buffer header, whose
 * version the caller sets.
 */
static inline void dti_fill_record(struct dti_record *rec, const struct dti_meta *meta,
				   unsigned int cpu, size_t len, u64 seq)
{
	rec->magic = DTI_RECORD_MAGIC;
	rec->version = DTI_RECORD_VERSION_1;
	rec->flags = meta->flags;
	rec->level = meta->level;
	rec->hdr_len = sizeof(*rec);
	rec->cpu = cpu;
	rec->len = len;
	rec->log_cpu = meta->cpu;
	rec->seq = seq;
	rec->ts_ns = meta->ts_ns;
	rec->caller = meta->caller;
}

/*
 * Probe points for SystemTap: never inlined, never cloned or given fewer
 * arguments by interprocedural optimisation, so a probe on the function
 * sees every call with all its arguments.
 */
#define DTI_PROBE_POINT		noinline __noipa

/* Who changed a level, as passed to dti_probe_level(). */
enum dti_level_source {
	DTI_SRC_REGISTER,	/* initial level at registration */
	DTI_SRC_KERNEL,		/* dti_set_level() or dti_unregister() */
	DTI_SRC_FILE,		/* a write to the "level" file */
	DTI_SRC_CONTROL,	/* dti_ctl_set_level(), e.g. from a stap script */
	DTI_SRC_TRIGGER,	/* a halt trigger fired (dti_ctl_halt_after()) */
};

/*
 * The write guard (struct dti_cpu_stats.busy).  Relay buffers and the
 * pending store cannot be entered twice on one CPU, and everything that
 * enters them runs with interrupts off, so only NMIs and probes (kprobes,
 * int3-based ones included, which x86 runs as NMIs) can nest inside one
 * of them.  A nested entry finds the guard taken and backs off; nesting
 * is strictly last-in first-out on a CPU, so a plain per-CPU flag is
 * enough: an NMI that fires between the test and the set leaves it clear
 * again before the interrupted code goes on.
 *
 * Context: interrupts disabled.
 * Return: true if taken; then call dti_guard_exit().
 */
static inline bool dti_guard_enter(struct dti_info *info)
{
	if (this_cpu_read(info->stats->busy))
		return false;
	this_cpu_write(info->stats->busy, 1);
	barrier();
	return true;
}

static inline void dti_guard_exit(struct dti_info *info)
{
	barrier();
	this_cpu_write(info->stats->busy, 0);
}

/* dti_core.c */
extern raw_spinlock_t dti_list_lock;
bool dti_level_valid(int level);
int dti_check_name(const char *name);

/*
 * Built into the kernel (CONFIG_DTI=y) rather than dti.ko: DTI comes up
 * at postcore_initcall, and built-in code may use handles before that.
 */
#ifdef MODULE
#define DTI_BUILTIN	false
#else
#define DTI_BUILTIN	true
#endif

bool dti_is_up(void);
void dti_early_link(struct dti_pending *p);

/* dti_boot.c: the channel= and level= parameters */
int dti_boot_level(const char *name, int level);
void dti_boot_levels_init(void);
unsigned int dti_boot_channels_init(void);
void dti_boot_channels_exit(void);

/* dti_event.c */
/*
 * The formats framing each sub-buffer take at most this fraction of it:
 * a sub-buffer of 4096 bytes has room for 1024 bytes of formats.
 */
#define DTI_EVENT_FRAME_SHARE	4

struct dti_event_table;
int dti_event_parse(const char *fmt, size_t len, char *layout);
void dti_event_release(struct dti_channel *ch);
int __dti_event_register(struct dti_info *trace, struct dti_event_type *type,
			 bool own);
int dti_event_resize_begin(struct dti_channel *ch, size_t subbuf_size);
void dti_event_resize_end(void);
int dti_resize(struct dti_channel *ch, size_t size);
unsigned int dti_event_frame(struct dti_channel *ch, struct rchan_buf *buf,
			     void *at, size_t *bytes);
bool dti_event_stale(struct dti_channel *ch, unsigned int cpu);
unsigned int dti_event_formats(const void *subbuf, size_t size, u32 records);
size_t dti_event_pack(const struct dti_event_type *type, u8 *out, va_list args,
		      bool *truncated);
int dti_event_show(struct seq_file *m, const void *fmt, size_t fmt_len,
		   const u8 *data, size_t len);
void dti_event_formats_show(struct seq_file *m, struct dti_channel *ch);
int dti_check_geometry(size_t subbuf_size, size_t n_subbufs);
size_t dti_default_subbuf_size(size_t size);
struct dti_channel *dti_alloc_channel_mem(bool own_info, gfp_t gfp);
void dti_init_channel(struct dti_channel *ch, const char *name, size_t subbuf_size,
		      size_t n_subbufs, unsigned int flags, struct dti_info *info);
struct dti_channel *dti_alloc_channel(const char *name, size_t subbuf_size,
				      size_t n_subbufs, unsigned int flags,
				      struct dti_info *info, gfp_t gfp);
void dti_free_channel(struct dti_channel *ch);
struct dti_channel *dti_find(const char *name);
struct dti_channel *dti_find_visible(const char *name);
int dti_add_channel(struct dti_channel *ch);
bool __dti_list_try_lock(unsigned long *flags);
#define dti_list_try_lock(flags) \
	dti_cond_lock(&dti_list_lock, __dti_list_try_lock(flags))
void dti_list_unlock(unsigned long flags)
	__releases(&dti_list_lock);
struct dti_channel *dti_take_owned(const void *owner);
void dti_queue_work(struct dti_channel *ch);
struct list_head *dti_channel_list(void);
void __dti_unregister(struct dti_channel *ch);
int __dti_set_level(struct dti_channel *ch, int level, int *old);
void dti_level_apply(struct dti_channel *ch);
int dti_level_switch(struct dti_channel *ch, int level);
int dti_change_level(struct dti_channel *ch, int level,
		     enum dti_level_source source);
void dti_probe_level(struct dti_channel *ch, int old_level, int new_level,
		     enum dti_level_source source);
void dti_probe_register(const char *name, struct dti_channel *ch, int err);
void dti_probe_unregister(struct dti_channel *ch);
int dti_parse_level(const char *buf, int *level);
void dti_create_work(struct work_struct *work);

/* dti_trace.c */
void dti_trace_record(const struct dti_channel *ch, const struct dti_record *rec,
		      const void *payload);

/* dti_usermark.c */
int dti_user_mark_create_files(struct dti_channel *ch);

/* dti_write.c */
void dti_write_loaded(void);
void dti_probe_loaded(unsigned int version, int (*listen)(bool on));
void dti_probe_unloading(void);
void dti_write_exit(void);
void dti_probe_stored(struct dti_channel *ch, const struct dti_record *rec,
		      const void *payload);
void dti_probe_lost(struct dti_channel *ch, const struct dti_meta *meta,
		    size_t len, int err, const char *reason);
extern DTI_RELAY_CALLBACKS_CONST struct rchan_callbacks dti_relay_callbacks;
extern const struct file_operations dti_trace_fops;

int dti_publish_buffers(struct dti_channel *ch, struct rchan *rchan);
void dti_ring_start(struct rchan_buf *buf);
void dti_pending_lock(struct dti_info *info, unsigned long *flags)
	__acquires(&info->pending->lock);
void dti_pending_unlock(struct dti_info *info, unsigned long flags)
	__releases(&info->pending->lock);
int dti_write_record(struct dti_info *info, int level, u8 flags,
		     const void *buf, size_t len, unsigned long caller);
size_t dti_max_payload(const struct dti_channel *ch);

/*
 * The largest payload in sub-buffers of @subbuf_size bytes of @ch: what
 * fits after the sub-buffer's header, and after the most that the
 * formats of event types can take once it has any.
 */
static inline size_t __dti_max_payload(const struct dti_channel *ch,
				       size_t subbuf_size)
{
	size_t formats = rcu_access_pointer(ch->events) ?
			 subbuf_size / DTI_EVENT_FRAME_SHARE : 0;

	return subbuf_size - DTI_SUBBUF_HEADER_SIZE - formats - DTI_CREC_HDR_MAX;
}

void dti_halt_fire(struct dti_channel *ch, u32 gen);

/* dti_ctl.c */
#define DTI_CTL_POOL_FILE	".ctl_pool"
int __init dti_ctl_init(void);
void dti_ctl_exit(void);
void dti_ctl_free_owned(struct dti_channel *ch);

/* dti_fs.c */
int dti_fs_init(void);
void dti_fs_exit(void);
struct dentry *dti_fs_root(void);
int dti_fs_create_control(struct dti_channel *ch);
int dti_fs_create_views(struct dti_channel *ch);
void dti_fs_remove_views(struct dti_channel *ch);

/* dti_dump.c */
void dti_dump_setup(void);

/* dti_persist.c */
int __init dti_persist_init(void);
void dti_persist_exit(void);
bool dti_persist_ready(void);
struct rchan *dti_persist_open(struct dti_channel *ch);
void dti_persist_close(struct rchan *rchan);
bool dti_prev_get(struct dti_prev *prev);
void dti_prev_put(struct dti_prev *prev);

/* dti_panic.c */
int __init dti_panic_init(void);
void dti_panic_exit(void);
unsigned int dti_panic_default_records(void);

/* dti_ctl.c: for a channel in hand */
int __dti_halt_after(struct dti_channel *ch, u64 count);
int __dti_halt_after_ns(struct dti_channel *ch, u64 ns);
long __dti_trigger_left(struct dti_channel *ch);

/* dti_bpf.c: the kfuncs, declared for the checkers (BPF programs call them) */
void __init dti_bpf_init(void);
struct dti_channel *dti_bpf_get(const char *name, u32 name__sz);
void dti_bpf_put(struct dti_channel *ch);
int dti_bpf_log(struct dti_channel *ch, int level, const void *data, u32 data__sz);
int dti_bpf_log_text(struct dti_channel *ch, int level, const char *text, u32 text__sz);
int dti_bpf_log_event(struct dti_channel *ch, int level, const void *data, u32 data__sz);
int dti_bpf_halt_after(struct dti_channel *ch, u64 count);
int dti_bpf_halt_after_ns(struct dti_channel *ch, u64 ns);
s64 dti_bpf_trigger_left(struct dti_channel *ch);
int dti_bpf_set_ordered(struct dti_channel *ch, int on);

/* dti_context.c */
struct seq_file;

void __init dti_context_init(void);
int dti_context_set(struct dti_channel *ch, unsigned int mask);
unsigned int dti_context_get(struct dti_channel *ch);
int dti_context_parse(const char *buf, unsigned int *mask);
void dti_context_show(struct seq_file *m, struct dti_channel *ch);
void dti_context_release(struct dti_channel *ch);
void dti_context_free(struct dti_channel *ch);

/* dti_stop.c */
/**
 * struct dti_word - a word of a control file that takes a set of words
 * @name:	the word
 * @bit:	its bit in the set
 */
struct dti_word {
	const char *name;
	unsigned int bit;
};

int dti_words_parse(const char *buf, const struct dti_word *words, size_t n,
		    unsigned int *mask);
size_t dti_words_format(char *buf, size_t size, const struct dti_word *words,
			size_t n, unsigned int mask);
int __init dti_stop_init(void);
void dti_stop_exit(void);
unsigned int dti_stop_on_default(void);
const char *dti_stop_reason_name(int reason);
int dti_stop_on_parse(const char *buf, unsigned int *mask);
void dti_stop_on_show(struct seq_file *m, unsigned int mask);
bool dti_stop_channel(struct dti_channel *ch, enum dti_stop_reason why);
unsigned int dti_stop_marked(unsigned int mask, enum dti_stop_reason why);

/* dti_panic.c: the sysrq key's print */
void dti_panic_print_sysrq(void);

/* dti_modules.c: the module table (struct dti_dump_modules) */
int __init dti_modules_init(void);
void dti_modules_exit(void);
void dti_modules_panic_print(const char *prefix);
extern const struct file_operations dti_modules_fops;
struct seq_file;
void dti_modules_seq_show(struct seq_file *m, const struct dti_module *mods);
void dti_modules_persist(struct dti_persist_modules *t, u32 boot);

/* dti_dump.c */
void dti_dump_init(struct dti_channel *ch, const char *name);
void dti_dump_wipe(struct dti_channel *ch);
void dti_dump_new_buffers(struct dti_channel *ch);
void dti_dump_add_ring(struct dti_channel *ch, unsigned int cpu, struct page **pages,
		       u64 first_pfn, size_t n_pages);
void dti_dump_add_buf(struct dti_channel *ch, struct rchan_buf *buf,
		      unsigned int cpu);
void dti_dump_buffers_gone(struct dti_channel *ch);
void dti_dump_pending_init(struct dti_pending *p, const char *name);
void dti_dump_pending_seal(struct dti_pending *p);
void dti_dump_pending_wipe(struct dti_pending *p);
/*
 * The dump index, named in VMCOREINFO: built in only (dti.ko cannot add
 * to VMCOREINFO), and only with VMCOREINFO.
 */
#define DTI_DUMP_INDEX	(IS_BUILTIN(CONFIG_DTI) && IS_ENABLED(CONFIG_VMCORE_INFO))
#if DTI_DUMP_INDEX
void dti_dump_index_add(u64 phys);
void dti_dump_index_del(u64 phys);
#else
static inline void dti_dump_index_add(u64 phys) { }
static inline void dti_dump_index_del(u64 phys) { }
#endif

/* dti_merged.c */
extern const struct file_operations dti_merged_fops;
extern const struct file_operations dti_merged_ts_fops;
extern const struct file_operations dti_prev_merged_fops;
extern const struct file_operations dti_prev_merged_ts_fops;
extern const struct file_operations dti_ring_fops;
extern const struct file_operations dti_prev_ring_fops;
void dti_snap_free(struct dti_snap_cpu *sc);

#endif /* _DTI_INTERNAL_H */
