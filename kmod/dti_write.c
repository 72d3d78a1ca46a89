// SPDX-License-Identifier: GPL-2.0
/*
 * DTI writers and the relay callbacks that frame sub-buffers.
 *
 * Every record is written with interrupts disabled on the local CPU into
 * that CPU's relay buffer.  That keeps interrupt handlers on the same CPU
 * out of a half-done relay_reserve() (relay itself does no locking),
 * makes the region an RCU read-side critical section for the buffer
 * pointer, and lets a snapshot taken by an IPI on that CPU see only whole
 * records.
 *
 * What interrupts being off does not keep out is NMIs and probes: a
 * SystemTap or kprobe handler can fire anywhere in this file, in relay,
 * in memcpy() or strscpy(), and log to DTI from there, and x86 runs
 * int3-based kprobe handlers as NMIs.  The per-CPU write guard
 * (dti_guard_enter()) makes such a nested write back off instead of
 * entering a buffer or the pending store a second time; it is counted
 * (nested, or nmi) and takes a sequence number, so a reader can see the
 * gap.  A write from NMI context that interrupted no writer of the
 * channel is stored like any other.
 *
 * No spinlock of DTI's is held while a probe point is called, and nothing
 * here wakes a task: buffers are created from a work item that an
 * irq_work queues (dti_queue_work()).
 *
 * Accounting (see struct dti_cpu_stats): a record that passed the level
 * check ends in exactly one of written, dropped, nested, nmi, lost,
 * unavailable, rejected, halted and stopped on the CPU that handled it, and takes
 * one sequence number there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/hardirq.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/smp.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "dti_internal.h"
#include "dti_trace.h"

/* dti:dti_record while attached; never with make DTI_NO_TRACEPOINT=y. */
#ifdef DTI_NO_TRACEPOINT
#define dti_trace_attached()	false
#else
#define dti_trace_attached()	trace_dti_record_enabled()
#endif

/*
 * Formatting space for dti_printk_raw(), one per nesting level: a
 * dti_printk() to another channel from an NMI or a probe that interrupts
 * vsnprintf() must not write over the text being formatted.
 */
#define DTI_TEXT_NEST_MAX	4

struct dti_text_bufs {
	unsigned int depth;
	char buf[DTI_TEXT_NEST_MAX][DTI_TEXT_MAX];
};

static DEFINE_PER_CPU(struct dti_text_bufs, dti_text);

/**
 * enum dti_loss - why a record that passed the level check was not stored
 * @DTI_LOSS_FULL:	no-overwrite buffer full
 * @DTI_LOSS_NESTED:	would have nested inside a write or copy on its CPU
 * @DTI_LOSS_NMI:	the same, from NMI context
 * @DTI_LOSS_PENDING:	pending store full
 * @DTI_LOSS_RESERVE:	a reservation while there are no buffers
 * @DTI_LOSS_NOBUF:	no buffer: being destroyed, or none for this CPU
 * @DTI_LOSS_TOO_BIG:	payload larger than the channel can hold
 * @DTI_LOSS_BAD_ARG:	bad level, or a payload length without a payload
 * @DTI_LOSS_HALTED:	a halt trigger let its last record through already
 * @DTI_LOSS_STOPPED:	the channel is stopped (dti_stop.c)
 */
enum dti_loss {
	DTI_LOSS_FULL,
	DTI_LOSS_NESTED,
	DTI_LOSS_NMI,
	DTI_LOSS_PENDING,
	DTI_LOSS_RESERVE,
	DTI_LOSS_NOBUF,
	DTI_LOSS_TOO_BIG,
	DTI_LOSS_BAD_ARG,
	DTI_LOSS_HALTED,
	DTI_LOSS_STOPPED,
};

/* For each loss: the counter, the caller's errno, dti.lost's reason. */
static const struct {
	size_t counter;
	int err;
	const char *reason;
} dti_losses[] = {
#define DTI_LOSS(why, field, errno, text) \
	[why] = { offsetof(struct dti_cpu_stats, field), errno, text }
	DTI_LOSS(DTI_LOSS_FULL, dropped, -ENOSPC, "full"),
	DTI_LOSS(DTI_LOSS_NESTED, nested, -EBUSY, "nested"),
	DTI_LOSS(DTI_LOSS_NMI, nmi, -EBUSY, "nmi"),
	DTI_LOSS(DTI_LOSS_PENDING, lost, -ENOSPC, "pending full"),
	DTI_LOSS(DTI_LOSS_RESERVE, lost, -ENOSPC, "no buffers to reserve in"),
	DTI_LOSS(DTI_LOSS_NOBUF, unavailable, -ENODEV, "no buffer"),
	DTI_LOSS(DTI_LOSS_TOO_BIG, rejected, -EMSGSIZE, "too big"),
	DTI_LOSS(DTI_LOSS_BAD_ARG, rejected, -EINVAL, "bad argument"),
	DTI_LOSS(DTI_LOSS_HALTED, halted, -ECANCELED, "halted"),
	DTI_LOSS(DTI_LOSS_STOPPED, stopped, -ECANCELED, "stopped"),
#undef DTI_LOSS
};

static struct dti_subbuf_info *dti_subbuf_info(void *subbuf)
{
	return subbuf + sizeof(struct dti_record);
}

/*
 * Frame a sub-buffer: its header, of the current record version, with
 * where the chains of its compact records start.  A buffer's first
 * sub-buffer (@first) starts them: there is no record before it.
 */
static void dti_write_subbuf_header(struct dti_channel *ch, struct rchan_buf *buf,
				    void *subbuf, bool first)
{
	struct dti_trigger_cpu *w = per_cpu_ptr(ch->trigger, buf->cpu);
	struct dti_subbuf_info *info = dti_subbuf_info(subbuf);
	struct dti_record *hdr = subbuf;
	struct dti_meta meta = {
		.ts_ns = ktime_get_mono_fast_ns(),
		.caller = DTI_CALLER_BASE,
		.cpu = buf->cpu,
		.flags = DTI_REC_SUBBUF,
	};

	if (first) {
		w->crec_ts = meta.ts_ns;
		w->crec_seq = per_cpu_ptr(ch->info->stats, buf->cpu)->seq;
		w->crec_caller = 0;
	}
	/*
	 * The old number gone before any other store into the header: a
	 * reader that copied a slot and finds its number unchanged after
	 * the copy knows the copy is whole.
	 */
	WRITE_ONCE(hdr->seq, DTI_SUBBUF_UNNUMBERED);
	smp_wmb();	/* pairs with smp_rmb() in dti_snap_subbuf() and dti_panic_format() */
	dti_fill_record(hdr, &meta, buf->cpu, sizeof(*info), DTI_SUBBUF_UNNUMBERED);
	hdr->version = DTI_RECORD_VERSION;
	memset(info, 0, sizeof(*info));
	info->subbuf_size = buf->chan->subbuf_size;
	info->n_subbufs = buf->chan->n_subbufs;
	info->state = DTI_SUBBUF_OPEN;
	info->generation = ch->dump.generation;
	strscpy(info->name, ch->name, sizeof(info->name));
	info->seq_base = w->crec_seq;
	info->ts_base = w->crec_ts;
	info->caller_prev = w->crec_caller;
	/*
	 * The number last: a reader that finds it finds the header whole.
	 * Pairs with smp_load_acquire() in dti_subbuf_peek().
	 */
	smp_store_release(&hdr->seq, (u64)buf->subbufs_produced);
}

/*
 * Called by relay with the writer's interrupts off whenever a new
 * sub-buffer is started, and once per buffer when it is created.
 * Closes the previous sub-buffer's header, accounts for the records a
 * wrapped buffer is about to overwrite (its formats are none of them),
 * and frames the new one: its header, then the formats of the channel's
 * event types, counted in its records.
 */
static int dti_subbuf_start(struct rchan_buf *buf, void *subbuf, void *prev_subbuf)
{
	struct dti_channel *ch = buf->chan->private_data;
	struct dti_subbuf_info *info;
	size_t formats;

	/*
	 * relay counted the new sub-buffer in subbufs_produced already; a
	 * trace file reader that sees a byte of it, or of the closing of
	 * the one before, sees that count too.  Pairs with smp_rmb() in
	 * dti_read_intact().
	 */
	smp_wmb();
	if (prev_subbuf) {
		info = dti_subbuf_info(prev_subbuf);
		info->padding = dti_prev_padding(buf);
		/*
		 * The padding before the state that makes it valid.  Pairs
		 * with smp_load_acquire() in dti_subbuf_peek().
		 */
		smp_store_release(&info->state, DTI_SUBBUF_CLOSED);
	}

	/* A full no-overwrite ring keeps its unread sub-buffers: drop. */
	if ((ch->flags & DTI_F_NO_OVERWRITE) && relay_buf_full(buf))
		return 0;
	if (buf->subbufs_produced >= buf->chan->n_subbufs) {
		/*
		 * The ring wrapped: this sub-buffer holds the oldest records
		 * (in a no-overwrite ring, read ones), which it writes over.
		 * Only the writer of buf->cpu gets here, on that CPU and under
		 * its write guard, so no one else updates the counter.
		 */
		info = dti_subbuf_info(subbuf);
		per_cpu_ptr(ch->info->stats, buf->cpu)->overwritten +=
			info->records - dti_event_formats(subbuf, buf->chan->subbuf_size,
							  info->records);
	}

	dti_write_subbuf_header(ch, buf, subbuf, !prev_subbuf);
	/*
	 * The new header before anything that writes over the records the
	 * slot held: a reader of the live ring on another CPU (an oops on
	 * it, dti_panic.c) that finds the header unchanged after copying a
	 * record knows the copy is whole.
	 */
	smp_wmb();
	info = dti_subbuf_info(subbuf);
	/*
	 * The formats counted once whole, as records are (dti_publish()).
	 * Pairs with smp_load_acquire() in dti_subbuf_peek() and in the
	 * panic path's dti_panic_header_ok().
	 */
	smp_store_release(&info->records,
			  dti_event_frame(ch, buf, subbuf + DTI_SUBBUF_HEADER_SIZE,
					  &formats));
	subbuf_start_reserve(buf, DTI_SUBBUF_HEADER_SIZE + formats);
	return 1;
}

/*
 * Called by relay for each CPU's new buffer, its pages allocated: at
 * relay_open() and when a CPU comes online.  relay names the file after
 * the CPU (DTI_TRACE_FILE_BASE followed by its number) but sets
 * buf->cpu only after this returns.
 */
static struct dentry *dti_create_buf_file(const char *filename,
					  struct dentry *parent, umode_t mode,
					  struct rchan_buf *buf, int *is_global)
{
	struct dti_channel *ch = buf->chan->private_data;
	struct dentry *dentry;
	unsigned int cpu;

	dentry = debugfs_create_file(filename, mode, parent, buf,
				     &dti_trace_fops);
	if (kstrtouint(filename + strlen(DTI_TRACE_FILE_BASE), 10, &cpu))
		return dentry;
	if (IS_ERR(dentry)) {
		/*
		 * relay_open_buf() frees a buffer whose file failed with
		 * relay_destroy_buf(), which clears the channel's slot of
		 * buf->cpu, still 0 then: CPU 0's buffer would be forgotten,
		 * its file and pages left behind.  Name the right slot (NULL).
		 */
		buf->cpu = cpu;
		return dentry;
	}
	dti_dump_add_buf(ch, buf, cpu);
	return dentry;
}

static int dti_remove_buf_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

DTI_RELAY_SUBBUF_START(dti_relay_subbuf_start, dti_subbuf_start)

DTI_RELAY_CALLBACKS_CONST struct rchan_callbacks dti_relay_callbacks = {
	.subbuf_start		= dti_relay_subbuf_start,
	.create_buf_file	= dti_create_buf_file,
	.remove_buf_file	= dti_remove_buf_file,
};

/**
 * dti_probe_stored - probe point: a record was stored
 * @ch: channel
 * @rec: the record's whole header (version 1, built for the probe: the
 *	 buffer holds a compact one)
 * @payload: its payload, complete (a dti_reserve_raw() record's once
 *	 dti_commit_raw() publishes it)
 *
 * Does nothing; tapset/dti.stp probes it to see every record.  Called
 * only while someone listens (dti_ctl_probe_stored(), or the
 * probe_stored parameter).  It runs under the channel's write guard on
 * this CPU: a record the probe logs to the same channel is refused as
 * nested, to any other channel is stored.
 * Context: interrupts disabled; any context, NMI included.
 */
DTI_PROBE_POINT void dti_probe_stored(struct dti_channel *ch,
				      const struct dti_record *rec,
				      const void *payload)
{
	barrier();
}

/**
 * dti_probe_lost - probe point: a record passed the level check but was
 * not stored
 * @ch: channel
 * @meta: the record's metadata
 * @len: its payload length, as the caller gave it (not bounded)
 * @err: the errno the caller gets
 * @reason: why, in words (see dti_losses[]), e.g. "nested"
 *
 * Does nothing; tapset/dti.stp probes it.  Not called for records logged
 * to a handle before INIT_DTI_HANDLE(), which has no channel yet.
 * Context: interrupts disabled; any context, NMI included.
 */
DTI_PROBE_POINT void dti_probe_lost(struct dti_channel *ch,
				    const struct dti_meta *meta, size_t len,
				    int err, const char *reason)
{
	barrier();
}

/*
 * Probe points behind static keys: with nothing listening, the hot path
 * makes no call.  A key is on while its module parameter forces it or a
 * listener holds it (dti_ctl_probe_stored(), for the tapset's lifetime).
 * Switching a static key patches code and sleeps, so every change is
 * carried out by a work item that reads the state afresh, queued through
 * an irq_work from any context; the last change always has a run after
 * it, so the key ends as the state says.
 */
struct dti_probe_switch {
	struct static_key_false *key;
	bool forced;
	atomic_t listeners;
	struct irq_work kick;
	struct work_struct work;
};

static void dti_probe_switch_work(struct work_struct *work)
{
	struct dti_probe_switch *sw =
		container_of(work, struct dti_probe_switch, work);

	if (READ_ONCE(sw->forced) || atomic_read(&sw->listeners) > 0)
		static_branch_enable(sw->key);
	else
		static_branch_disable(sw->key);
}

static void dti_probe_switch_kick(struct irq_work *kick)
{
	struct dti_probe_switch *sw =
		container_of(kick, struct dti_probe_switch, kick);

	schedule_work(&sw->work);
}

static DEFINE_STATIC_KEY_FALSE(dti_stored_probe_key);
DEFINE_STATIC_KEY_FALSE(dti_filtered_probe_key);
EXPORT_SYMBOL_GPL(dti_filtered_probe_key);

#define DEFINE_DTI_PROBE_SWITCH(_name, _key)				\
	static struct dti_probe_switch _name = {			\
		.key = &(_key),						\
		.listeners = ATOMIC_INIT(0),				\
		.kick = IRQ_WORK_INIT(dti_probe_switch_kick),		\
		.work = __WORK_INITIALIZER((_name).work,		\
					   dti_probe_switch_work),	\
	}

DEFINE_DTI_PROBE_SWITCH(dti_filtered_switch, dti_filtered_probe_key);
DEFINE_DTI_PROBE_SWITCH(dti_stored_switch, dti_stored_probe_key);

/*
 * Context: any, NMI included.  Before DTI's init (built-in code) there
 * is nothing to queue yet: dti_write_loaded() switches as the state says.
 */
static void dti_probe_switch_request(struct dti_probe_switch *sw)
{
	if (dti_is_up())
		irq_work_queue(&sw->kick);
}

/*
 * A module parameter's write: switch now.  Given at the load, or built
 * in on the command line (from parse_args(), before workqueues and
 * static keys work), DTI's init switches (dti_write_loaded()).
 * Context: process, or early boot.
 */
static int dti_probe_switch_param_set(const char *val,
				      const struct kernel_param *kp)
{
	struct dti_probe_switch *sw = kp->arg;
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	WRITE_ONCE(sw->forced, on);
	if (!dti_is_up())
		return 0;
	schedule_work(&sw->work);
	flush_work(&sw->work);
	return 0;
}

static int dti_probe_switch_param_get(char *buf, const struct kernel_param *kp)
{
	struct dti_probe_switch *sw = kp->arg;

	return sysfs_emit(buf, "%c\n", static_key_enabled(sw->key) ? 'Y' : 'N');
}

static const struct kernel_param_ops dti_probe_switch_ops = {
	.set = dti_probe_switch_param_set,
	.get = dti_probe_switch_param_get,
};
module_param_cb(probe_filtered, &dti_probe_switch_ops, &dti_filtered_switch,
		0644);
MODULE_PARM_DESC(probe_filtered,
		 "call dti_probe_filtered() for records refused by level (for SystemTap)");
module_param_cb(probe_stored, &dti_probe_switch_ops, &dti_stored_switch,
		0644);
MODULE_PARM_DESC(probe_stored,
		 "call dti_probe_stored() for every stored record even with no SystemTap script listening (for perf probe, bpftrace, kprobes)");

/**
 * dti_ctl_probe_filtered - switch the probe_filtered parameter
 * @on: true to make records refused by a level reach dti_probe_filtered()
 *
 * As writing dti.ko's probe_filtered parameter, but callable from a
 * SystemTap probe: the switch happens shortly after the call.
 *
 * Context: any, NMI included.
 * Return: 0.
 */
int dti_ctl_probe_filtered(bool on)
{
	WRITE_ONCE(dti_filtered_switch.forced, on);
	dti_probe_switch_request(&dti_filtered_switch);
	return 0;
}
EXPORT_SYMBOL_GPL(dti_ctl_probe_filtered);

/**
 * dti_ctl_probe_stored - start or stop listening to stored records
 * @on: true to add a listener, false to drop one
 *
 * dti_probe_stored() is called for every stored record while at least
 * one listener is held or the probe_stored parameter is set; otherwise
 * the write path makes no call.  tapset/dti.stp holds a listener from a
 * script's first begin probe to its last end (or error) probe, so a
 * script sees records shortly after it starts.  Calls must pair.
 *
 * Context: any, NMI included; the switch happens shortly after the call.
 * Return: 0, or -EINVAL for a drop with no listener held.
 */
int dti_ctl_probe_stored(bool on)
{
	if (on)
		atomic_inc(&dti_stored_switch.listeners);
	else if (atomic_add_unless(&dti_stored_switch.listeners, -1, 0) == 0)
		return -EINVAL;
	dti_probe_switch_request(&dti_stored_switch);
	return 0;
}
EXPORT_SYMBOL_GPL(dti_ctl_probe_stored);

/**
 * dti_probe_loaded - probe point: dti.ko is ready
 * @version: the control interface's version, as dti_ctl_version() gives it
 * @listen: dti_ctl_probe_stored(), for a listener taken here
 *
 * Does nothing; called once, as dti.ko's initialisation ends.  A
 * SystemTap script started before dti.ko takes its listener here
 * through @listen: a module cannot be symbol_get() while it initialises.
 * A listener taken here is in effect before the initialisation returns
 * (dti_write_loaded()), so records of every client loaded after dti.ko
 * reach dti_probe_stored().
 * Context: process (module init).
 */
DTI_PROBE_POINT void dti_probe_loaded(unsigned int version,
				      int (*listen)(bool on))
{
	barrier();
}

/**
 * dti_probe_unloading - probe point: dti.ko is being removed
 *
 * Does nothing; called once, as dti.ko's exit begins.  Listeners held
 * end with this dti.ko: a script that listens takes a listener again
 * when dti.ko is loaded again (dti_probe_loaded()).
 * Context: process (module exit).
 */
DTI_PROBE_POINT void dti_probe_unloading(void)
{
	barrier();
}

/**
 * dti_write_loaded - announce a dti.ko ready for listeners
 *
 * Calls dti_probe_loaded() and then switches dti_probe_stored() on at
 * once if a listener was taken there, rather than shortly after, and
 * both probe switches as their parameters say.
 * Context: process (module init).
 */
void dti_write_loaded(void)
{
	dti_probe_loaded(dti_ctl_version(), dti_ctl_probe_stored);
	irq_work_sync(&dti_stored_switch.kick);
	schedule_work(&dti_stored_switch.work);
	schedule_work(&dti_filtered_switch.work);
	flush_work(&dti_stored_switch.work);
	flush_work(&dti_filtered_switch.work);
}

/**
 * dti_write_exit - wait for pending probe switches
 */
void dti_write_exit(void)
{
	irq_work_sync(&dti_filtered_switch.kick);
	irq_work_sync(&dti_stored_switch.kick);
	cancel_work_sync(&dti_filtered_switch.work);
	cancel_work_sync(&dti_stored_switch.work);
}

/**
 * dti_probe_filtered - probe point: a record was refused by the level
 * @trace: channel
 * @level: the record's level
 * @ip: address of the logging call
 *
 * Called from the inline level check only while the probe_filtered
 * module parameter is set; does nothing itself.
 * Context: any.
 */
DTI_PROBE_POINT void dti_probe_filtered(struct dti_info *trace, int level,
					unsigned long ip)
{
	barrier();
}
EXPORT_SYMBOL_GPL(dti_probe_filtered);

/**
 * dti_max_payload - largest payload a record of this channel can carry
 * @ch: channel
 *
 * Return: bytes that fit in a sub-buffer after its header, and after the
 * most that the formats of event types can take once it has any.
 */
size_t dti_max_payload(const struct dti_channel *ch)
{
	return __dti_max_payload(ch, READ_ONCE(ch->subbuf_size));
}

/*
 * Account for a record that is not stored: count it under its reason,
 * give it a sequence number unless it took one already (@seq_taken) and
 * tell dti.lost.  this_cpu operations, as
 * a writer this one interrupted may be updating the same counters.
 *
 * Context: interrupts disabled.
 * Return: the errno for the caller, as an ERR_PTR().
 */
static void *__dti_lose(struct dti_info *info, struct dti_channel *ch,
			const struct dti_meta *meta, size_t len,
			enum dti_loss why, bool seq_taken)
{
	u64 __percpu *counter = (u64 __percpu *)
		((char __percpu *)info->stats + dti_losses[why].counter);

	this_cpu_inc(*counter);
	if (!seq_taken)
		this_cpu_inc(info->stats->seq);
	if (ch)
		dti_probe_lost(ch, meta, len, dti_losses[why].err,
			       dti_losses[why].reason);
	return ERR_PTR(dti_losses[why].err);
}

static void *dti_lose(struct dti_info *info, struct dti_channel *ch,
		      const struct dti_meta *meta, size_t len,
		      enum dti_loss why)
{
	return __dti_lose(info, ch, meta, len, why, false);
}

/* Why a write that found its CPU busy with the same channel is refused. */
static enum dti_loss dti_nested_loss(void)
{
	return in_nmi() ? DTI_LOSS_NMI : DTI_LOSS_NESTED;
}

/**
 * dti_halt_fire - a halt trigger let its last record through
 * @ch: channel
 * @gen: the arming (DTI_HALT_GEN()) whose last record it was
 *
 * Switches the channel off and tells dti.level_change (source "trigger"),
 * unless that arming ended meanwhile: a level change ended it (and the
 * level it set stays), or the channel was armed again.  The check and
 * the change are one atomic operation on @ch->halt_ctl, which every
 * level change makes too (dti_level_switch()), so a level set at any
 * moment after it stays, the value it had before included.  A channel
 * below level 0, off or destroyed, stores nothing already: it is left as
 * it is (a destroyed one is not turned into one that is off, whose
 * buffers would be expected), and nothing is reported.
 *
 * Context: any, NMI included.
 */
void dti_halt_fire(struct dti_channel *ch, u32 gen)
{
	int ctl = atomic_read(&ch->halt_ctl);
	int old;

	do {
		old = dti_halt_level(ctl);
		if (dti_halt_state(ctl) != DTI_HALT_ARMED ||
		    dti_halt_ctl_gen(ctl) != gen || old < 0)
			return;
	} while (!atomic_try_cmpxchg(&ch->halt_ctl, &ctl,
				     dti_halt_ctl(DTI_HALT_ARMED, DTI_LEVEL_OFF,
						  gen)));
	dti_level_apply(ch);
	dti_probe_level(ch, old, DTI_LEVEL_OFF, DTI_SRC_TRIGGER);
}

/*
 * Take one of the places of the armed trigger for a record.
 * Return: the arming's generation + 1, or 0 if it has no place left.
 */
static u32 dti_halt_take(struct dti_channel *ch)
{
	s64 word = atomic64_read(&ch->halt_places);

	do {
		if (!DTI_HALT_COUNT(word))
			return 0;
	} while (!atomic64_try_cmpxchg(&ch->halt_places, &word, word - 1));
	return DTI_HALT_GEN(word) + 1;
}

/* Give back the place a record took under arming @gen that was not stored. */
static void dti_halt_untake(struct dti_channel *ch, u32 gen)
{
	s64 word = atomic64_read(&ch->halt_places);

	do {
		if (DTI_HALT_GEN(word) != gen)
			return;		/* armed again: the place went with the old arming */
	} while (!atomic64_try_cmpxchg(&ch->halt_places, &word, word + 1));
}

/*
 * Note a record that took its place under arming @gen.  The writer that
 * completes the last of that arming's records, whichever CPU took the
 * last place, halts the channel: no record it let through is stored
 * after the level went off.  A record of an arming that a later one
 * replaced counts toward neither.
 */
static void dti_halt_account(struct dti_channel *ch, u32 gen, u64 seq)
{
	struct dti_trigger_cpu *t = this_cpu_ptr(ch->trigger);
	s64 word = atomic64_read(&ch->halt_pending);

	do {
		if (DTI_HALT_GEN(word) != gen || !DTI_HALT_COUNT(word))
			return;
	} while (!atomic64_try_cmpxchg(&ch->halt_pending, &word, word - 1));
	if (t->gen != gen) {
		t->gen = gen;
		t->records = 0;
	}
	if (!t->records++)
		t->first_seq = seq;
	t->last_seq = seq;
	if (DTI_HALT_COUNT(word) == 1)
		dti_halt_fire(ch, gen);
}

/*
 * Whether a record comes after the deadline of a trigger armed by time
 * (dti_ctl_halt_after_ns()).  Read after the writer's acquire of
 * @ch->halt_ctl that saw the trigger armed, which pairs with the
 * arming's release.  A writer whose place came from an arming that has
 * ended since (only a level change ends one, before another is armed)
 * may read the next arming's deadline: its record counts toward
 * neither arming, and is stored, or refused as halted, by that one.
 */
static __always_inline bool dti_halt_past(struct dti_channel *ch,
					  const struct dti_meta *meta)
{
	u64 deadline = READ_ONCE(ch->halt_deadline);

	return deadline && meta->ts_ns > deadline;
}

/**
 * dti_ring_switch - start the next sub-buffer of a persistent ring
 * @buf: the ring, one of dti_persist.c's
 * @length: bytes the caller wants to reserve
 *
 * The ring writer of persistent channels, whose rings lie in reserved RAM
 * that relay cannot manage: the same steps as relay_switch_subbuf() on
 * the fields of struct rchan_buf the readers know (the merged views, the
 * panic path, the dump descriptor), with no file to grow and no reader
 * to wake, as no reader waits on these rings.  A current sub-buffer is
 * closed with its padding, the next one in the ring is framed by
 * dti_subbuf_start(), and a full no-overwrite ring keeps no current one
 * (offset subbuf_size + 1).
 *
 * Context: interrupts disabled, the channel's write guard held.
 * Return: @length, or 0 if the ring has no room for it.
 */
static DTI_PROBE_POINT size_t dti_ring_switch(struct rchan_buf *buf, size_t length)
{
	struct rchan *rchan = buf->chan;
	size_t size = rchan->subbuf_size, n = rchan->n_subbufs, idx;
	void *old = buf->data, *new;

	if (buf->offset != size + 1) {
		buf->padding[buf->subbufs_produced % n] = size - buf->offset;
		buf->subbufs_produced++;
	}
	idx = buf->subbufs_produced % n;
	new = buf->start + idx * size;
	buf->offset = 0;
	if (!dti_subbuf_start(buf, new, old)) {
		buf->offset = size + 1;
		return 0;
	}
	buf->data = new;
	buf->padding[idx] = 0;
	return buf->offset + length <= size ? length : 0;
}

/**
 * dti_ring_start - frame the first sub-buffer of a new persistent ring
 * @buf: the ring, its start, chan, cpu and padding set and the rest zero
 *
 * Context: process context, before any writer can reach @buf.
 */
void dti_ring_start(struct rchan_buf *buf)
{
	buf->data = buf->start;
	dti_subbuf_start(buf, buf->start, NULL);
}

/*
 * relay_reserve() on a buffer the caller already holds: with interrupts
 * off on its CPU there is no need to look the per-CPU buffer up again,
 * nor to disable preemption around it as relay_reserve() does.  A
 * persistent channel's ring switches sub-buffers with DTI's own writer.
 */
static inline void *dti_relay_reserve(struct dti_channel *ch, struct rchan *rchan,
				      struct rchan_buf *buf, size_t length)
{
	void *reserved;

	if (unlikely(buf->offset + length > rchan->subbuf_size)) {
		if (ch->flags & DTI_F_PERSIST)
			length = dti_ring_switch(buf, length);
		else
			length = relay_switch_subbuf(buf, length);
		if (!length)
			return NULL;
	}
	reserved = buf->data + buf->offset;
	buf->offset += length;
	return reserved;
}

/*
 * Payloads up to this size are copied by dti_copy_payload() itself, a
 * word at a time, rather than by memcpy(): on CPUs with fast short
 * "rep movsb" memcpy() is that one instruction, which starts slowly on
 * hardware and runs one byte per step under emulation (QEMU TCG), where
 * it was a quarter of a 64-byte dti_event().  Larger ones go to memcpy().
 */
#define DTI_COPY_INLINE_MAX	256

/* Words of a payload copied without a loop */
#define DTI_COPY_UNROLLED	8

/* Copy word @i of a payload, at any alignment */
static __always_inline void dti_copy_word(void *dst, const void *src, unsigned int i)
{
	put_unaligned(get_unaligned((const u64 *)src + i), (u64 *)dst + i);
}

/*
 * Copy a payload into a record.  @dst follows a compact record header
 * and is DTI_CREC_ALIGN-aligned; @src may have any alignment.
 */
static __always_inline void dti_copy_payload(void *dst, const void *src,
					     size_t len)
{
	size_t words = len / sizeof(u64);

	if (unlikely(len > DTI_COPY_INLINE_MAX)) {
		memcpy(dst, src, len);
		return;
	}
	/*
	 * The words from the last one down, unrolled up to
	 * DTI_COPY_UNROLLED of them: a loop's counting was a third of a
	 * 64-byte dti_event()'s instructions.
	 */
	switch (words) {
	default:
		for (; words > DTI_COPY_UNROLLED; words--)
			dti_copy_word(dst, src, words - 1);
		fallthrough;
	case 8:
		dti_copy_word(dst, src, 7);
		fallthrough;
	case 7:
		dti_copy_word(dst, src, 6);
		fallthrough;
	case 6:
		dti_copy_word(dst, src, 5);
		fallthrough;
	case 5:
		dti_copy_word(dst, src, 4);
		fallthrough;
	case 4:
		dti_copy_word(dst, src, 3);
		fallthrough;
	case 3:
		dti_copy_word(dst, src, 2);
		fallthrough;
	case 2:
		dti_copy_word(dst, src, 1);
		fallthrough;
	case 1:
		dti_copy_word(dst, src, 0);
		fallthrough;
	case 0:
		break;
	}
	dst += len & ~(sizeof(u64) - 1);
	src += len & ~(sizeof(u64) - 1);
	if (len & sizeof(u32)) {
		put_unaligned(get_unaligned((const u32 *)src), (u32 *)dst);
		dst += sizeof(u32);
		src += sizeof(u32);
	}
	if (len & sizeof(u16)) {
		put_unaligned(get_unaligned((const u16 *)src), (u16 *)dst);
		dst += sizeof(u16);
		src += sizeof(u16);
	}
	if (len & 1)
		*(u8 *)dst = *(const u8 *)src;
}

/*
 * End this CPU's sub-buffer and start the next one, framed with the
 * channel's current formats; a full no-overwrite ring then has none, and
 * the record that asked for it is dropped as full.
 */
static noinline void dti_switch_now(struct dti_channel *ch, struct rchan_buf *buf)
{
	if (ch->flags & DTI_F_PERSIST)
		dti_ring_switch(buf, 0);
	else
		relay_switch_subbuf(buf, 0);
}

/*
 * Store locks (pending stores', ordered channels') this CPU holds or
 * spins for.  A writer spins for one only when it holds none, else it
 * only tries: two CPUs can never each hold one and spin for the other's
 * (a probe's record from inside a store, on another channel).
 */
static DEFINE_PER_CPU(unsigned int, dti_lock_depth);

/*
 * Take store lock @lock as a writer may: spinning only outside NMI and
 * while its CPU holds (or spins for) no other, else by trylock.
 * dti_lock_depth is raised before the spin, or once the trylock won.
 * Return: false if the lock was not taken.
 */
static __always_inline bool dti_store_lock(raw_spinlock_t *lock)
{
	if (!in_nmi() && !__this_cpu_read(dti_lock_depth)) {
		/* Before the lock: what probes its spinning only tries. */
		__this_cpu_inc(dti_lock_depth);
		raw_spin_lock(lock);
		return true;
	}
	if (!raw_spin_trylock(lock))
		return false;
	__this_cpu_inc(dti_lock_depth);
	return true;
}

/* Let go of a lock dti_store_lock() took. */
static __always_inline void dti_store_unlock(raw_spinlock_t *lock)
{
	raw_spin_unlock(lock);
	__this_cpu_dec(dti_lock_depth);
}

/**
 * struct dti_reservation - a record reserved and not yet committed
 * @ch:		its channel (dti_commit_raw() cannot look it up: a channel
 *		being destroyed is no longer found, though it waits for
 *		this CPU to enable interrupts before it goes)
 * @buf:	its CPU's buffer
 * @payload:	the record's payload; NULL while the slot is free
 * @meta:	the record's metadata
 * @seq:	its sequence number
 * @len:	its payload length
 * @halt:	the halt trigger's place it took: the arming's generation
 *		+ 1, or 0
 * @locked:	it holds the channel's order lock
 *
 * A CPU has one slot outside NMI and one in NMI: interrupts stay off from
 * a reservation to its commit, so only an NMI can come in between.
 */
struct dti_reservation {
	struct dti_channel *ch;
	struct rchan_buf *buf;
	void *payload;
	struct dti_meta meta;
	u64 seq;
	size_t len;
	u32 halt;
	bool locked;
};

static DEFINE_PER_CPU(struct dti_reservation [2], dti_reservations);

/* This CPU's reservation slot for the context it runs in. */
static __always_inline struct dti_reservation *dti_reservation_slot(void)
{
	return this_cpu_ptr(&dti_reservations[!!in_nmi()]);
}

static __always_inline void dti_reservation_open(struct dti_channel *ch,
						 struct rchan_buf *buf,
						 const struct dti_meta *meta, u64 seq,
						 void *payload, size_t len, u32 halt)
{
	struct dti_reservation *r = dti_reservation_slot();

	r->ch = ch;
	r->buf = buf;
	r->meta = *meta;
	r->seq = seq;
	r->len = len;
	r->halt = halt;
	r->locked = false;
	r->payload = payload;
}

/*
 * The stored-record probe point and the tracepoint, which get the
 * record's whole header, built here: the buffer holds a compact one.
 */
static noinline void dti_publish_probes(struct dti_channel *ch, struct rchan_buf *buf,
					const struct dti_meta *meta, u64 seq,
					const void *payload, size_t len)
{
	struct dti_record rec;

	dti_fill_record(&rec, meta, buf->cpu, len, seq);
	if (static_branch_unlikely(&dti_stored_probe_key))
		dti_probe_stored(ch, &rec, payload);
	if (dti_trace_attached())
		dti_trace_record(ch, &rec, payload);
}

/*
 * Publish a record whose header and payload are complete: count it in its
 * sub-buffer and call the stored-record probe point and the tracepoint.
 * @halt is the halt trigger's generation + 1 under which it took its
 * place, or 0.
 */
static __always_inline void dti_publish(struct dti_channel *ch,
					struct rchan_buf *buf,
					const struct dti_meta *meta, u64 seq,
					const void *payload, size_t len, u32 halt)
{
	struct dti_info *info = ch->info;

	/*
	 * Count the record only once it is whole: a dump taken with this
	 * CPU stopped anywhere above shows it as unused space, and a reader
	 * of the live ring on another CPU (an oops there, dti_panic.c) that
	 * reads the count with acquire sees the record whole.  A release
	 * store: a plain store on x86, where only the compiler could
	 * reorder.  This CPU alone writes the count.
	 */
	smp_store_release(&dti_subbuf_info(buf->data)->records,
			  dti_subbuf_info(buf->data)->records + 1);
	this_cpu_inc(info->stats->written);
	if (static_branch_unlikely(&dti_stored_probe_key) || dti_trace_attached())
		dti_publish_probes(ch, buf, meta, seq, payload, len);
	if (unlikely(halt))
		dti_halt_account(ch, halt - 1, seq);
}

/*
 * The compact headers (struct dti_crec) most records have: a time within
 * 2 s of the record before, the number after its, a length in 16 bits,
 * no CPU of its own, and the caller of the record before or one within
 * 2 GiB of DTI_CALLER_BASE.
 */
#define DTI_CREC_PLAIN_HDR	sizeof(struct dti_crec)

/*
 * Whether the record of @len payload bytes that takes sequence number
 * @seq has the plain header, told from what @w says of the record stored
 * before it on this CPU.
 */
static __always_inline bool dti_crec_plain(const struct dti_trigger_cpu *w,
					   const struct dti_meta *meta, u64 seq,
					   size_t len)
{
	s64 delta = meta->ts_ns - w->crec_ts;
	long off = meta->caller - DTI_CALLER_BASE;

	return likely(delta == (s32)delta && seq == w->crec_seq && off == (s32)off &&
		      len <= U16_MAX && !(meta->flags & DTI_REC_REPLAYED));
}

/* The info byte of a header that is not plain (dti_crec_plain()). */
DTI_VISIBLE_IF_KUNIT noinline u8 dti_crec_plan(const struct dti_trigger_cpu *w,
					       const struct dti_meta *meta, u64 seq,
					       size_t len)
{
	s64 delta = meta->ts_ns - w->crec_ts;
	long off = meta->caller - DTI_CALLER_BASE;
	u8 info = meta->level;

	if (delta != (s32)delta)
		info |= DTI_CREC_TS64;
	if (seq != w->crec_seq)
		info |= DTI_CREC_SKIP;
	if (meta->caller == w->crec_caller)
		info |= DTI_CREC_CALLER_SAME;
	else if (off == (s32)off)
		info |= DTI_CREC_CALLER32;
	else	/* 0 too, so that no header is eight zero bytes */
		info |= DTI_CREC_CALLER64;
	if (len > U16_MAX)
		info |= DTI_CREC_LEN32;
	return info;
}

/*
 * Write at @at a header that is not plain, of the @info dti_crec_plan()
 * planned.  Return: where the payload goes.
 */
DTI_VISIBLE_IF_KUNIT noinline void *dti_crec_write(void *at, u8 info,
						   const struct dti_meta *meta, u64 seq,
						   size_t len, const struct dti_trigger_cpu *w)
{
	struct dti_crec *c = at;
	u8 *x = (u8 *)(c + 1);

	c->len = info & DTI_CREC_LEN32 ? 0 : len;
	c->flags = meta->flags;
	c->info = info;
	c->ts_delta = info & DTI_CREC_TS64 ? 0 : (s32)(meta->ts_ns - w->crec_ts);
	if (info & DTI_CREC_LEN32) {
		put_unaligned((u32)len, (u32 *)x);
		x += sizeof(u32);
	}
	if (info & DTI_CREC_TS64) {
		put_unaligned(meta->ts_ns, (u64 *)x);
		x += sizeof(u64);
	}
	if (info & DTI_CREC_SKIP) {
		put_unaligned(seq - w->crec_seq, (u64 *)x);
		x += sizeof(u64);
	}
	if ((info & DTI_CREC_CALLER) == DTI_CREC_CALLER32) {
		put_unaligned((s32)(meta->caller - DTI_CALLER_BASE), (s32 *)x);
		x += sizeof(s32);
	} else if ((info & DTI_CREC_CALLER) == DTI_CREC_CALLER64) {
		put_unaligned((u64)meta->caller, (u64 *)x);
		x += sizeof(u64);
	}
	if (meta->flags & DTI_REC_REPLAYED) {
		put_unaligned((u32)meta->cpu, (u32 *)x);
		x += sizeof(u32);
	}
	return x;
}

/**
 * __dti_store - store a record in the local CPU's relay buffer
 * @ch: channel
 * @rchan: its relay channel
 * @meta: record metadata
 * @payload: payload to copy in, or NULL for a reservation: the caller
 *	     writes the payload, then dti_commit_raw() publishes the record
 * @len: payload length, at most dti_max_payload()
 *
 * Fills in the header, accounts for the record, and calls the stored-record
 * probe point and the dti:dti_record tracepoint while they have listeners.
 * While a halt trigger is armed, a record is stored only if the trigger
 * lets it through; the writer that completes the last such record
 * switches the channel off.  A reservation is left unpublished, with its
 * trigger place kept for dti_commit_raw().
 *
 * Context: interrupts disabled, the channel's write guard held.
 * Return: the payload area, or an ERR_PTR() from dti_lose().
 */
static __always_inline void *__dti_store(struct dti_channel *ch,
					 struct rchan *rchan,
					 const struct dti_meta *meta,
					 const void *payload, size_t len)
{
	struct dti_info *info = ch->info;
	struct dti_trigger_cpu *w;
	struct rchan_buf *buf;
	unsigned int hdr;
	void *rec, *data;
	u8 crec_info;
	bool plain, same;
	u64 seq;
	u32 halt = 0;		/* the trigger's generation + 1 while it holds a place */

	buf = *this_cpu_ptr(rchan->buf);
	if (unlikely(!buf))
		return dti_lose(info, ch, meta, len, DTI_LOSS_NOBUF);
	/* Pairs with the arming's atomic_try_cmpxchg() to ARMED. */
	if (unlikely(dti_halt_state(atomic_read_acquire(&ch->halt_ctl)) ==
		     DTI_HALT_ARMED)) {
		/* Take one of the places the trigger has. */
		halt = dti_halt_take(ch);
		if (!halt)
			return dti_lose(info, ch, meta, len, DTI_LOSS_HALTED);
		if (unlikely(dti_halt_past(ch, meta))) {
			dti_halt_untake(ch, halt - 1);
			dti_halt_fire(ch, halt - 1);
			return dti_lose(info, ch, meta, len, DTI_LOSS_HALTED);
		}
	}
	/* One reservation at a time in a context: commits find it by CPU. */
	if (unlikely(!payload) && dti_reservation_slot()->payload) {
		if (halt)
			dti_halt_untake(ch, halt - 1);
		return dti_lose(info, ch, meta, len, dti_nested_loss());
	}
	/* An event whose format this sub-buffer lacks starts a new one. */
	if (unlikely(meta->flags & DTI_REC_TYPED) && dti_event_stale(ch, buf->cpu))
		dti_switch_now(ch, buf);
	/*
	 * The number first: one this CPU's NMI takes for a record it loses
	 * comes after it, so the header planned here stays true.
	 */
	seq = this_cpu_inc_return(info->stats->seq) - 1;
	w = this_cpu_ptr(ch->trigger);
	plain = dti_crec_plain(w, meta, seq, len);
	if (likely(plain)) {
		same = meta->caller == w->crec_caller;
		crec_info = meta->level | (same ? DTI_CREC_CALLER_SAME : DTI_CREC_CALLER32);
		hdr = DTI_CREC_PLAIN_HDR + (same ? 0 : sizeof(s32));
	} else {
		crec_info = dti_crec_plan(w, meta, seq, len);
		hdr = dti_crec_hdr_size(crec_info, meta->flags);
	}
	rec = dti_relay_reserve(ch, rchan, buf, DTI_CREC_SIZE(hdr, len));
	if (unlikely(!rec)) {
		/* Nothing was stored: the place goes back to the trigger. */
		if (halt)
			dti_halt_untake(ch, halt - 1);
		return __dti_lose(info, ch, meta, len, DTI_LOSS_FULL, true);
	}
	if (likely(plain)) {
		struct dti_crec *c = rec;

		c->len = len;
		c->flags = meta->flags;
		c->info = crec_info;
		c->ts_delta = meta->ts_ns - w->crec_ts;
		if (!same)
			put_unaligned((s32)(meta->caller - DTI_CALLER_BASE), (s32 *)(c + 1));
		data = rec + hdr;
	} else {
		data = dti_crec_write(rec, crec_info, meta, seq, len, w);
	}
	w->crec_ts = meta->ts_ns;
	w->crec_seq = seq + 1;
	w->crec_caller = meta->caller;
	if (unlikely(!payload)) {
		dti_reservation_open(ch, buf, meta, seq, data, len, halt);
		return data;
	}
	dti_copy_payload(data, payload, len);
	dti_publish(ch, buf, meta, seq, data, len, halt);
	return data;
}

/*
 * An ordered channel's store: under its order lock, with the timestamp
 * taken there (a replayed record keeps its own), so that timestamps
 * follow the order of the stores on every CPU and the record's probes
 * run before any other CPU stores.  A record that cannot have the lock
 * without spinning where a writer may not is lost as nested (or NMI).
 */
static noinline void *dti_store_ordered(struct dti_channel *ch, struct rchan *rchan,
					const struct dti_meta *meta,
					const void *payload, size_t len)
{
	struct dti_meta m = *meta;
	void *ret;

	if (!dti_store_lock(&ch->order_lock))
		return dti_lose(ch->info, ch, meta, len, dti_nested_loss());
	if (!(m.flags & DTI_REC_REPLAYED))
		m.ts_ns = ktime_get_mono_fast_ns();
	ret = __dti_store(ch, rchan, &m, payload, len);
	if (!payload && !IS_ERR(ret)) {
		/* A reservation keeps the lock: dti_commit_raw() lets it go. */
		dti_reservation_slot()->locked = true;
		__release(&ch->order_lock);
	} else {
		dti_store_unlock(&ch->order_lock);
	}
	return ret;
}

/**
 * dti_store - store a record in the local CPU's relay buffer
 * @ch: channel
 * @rchan: its relay channel
 * @meta: record metadata
 * @payload: payload to copy in, or NULL to leave it to the caller
 * @len: payload length, at most dti_max_payload()
 *
 * __dti_store(), through the channel's order lock while it is ordered.
 *
 * Context: interrupts disabled, the channel's write guard held.
 * Return: the payload area, or an ERR_PTR() from dti_lose().
 */
static __always_inline void *dti_store(struct dti_channel *ch, struct rchan *rchan,
				       const struct dti_meta *meta,
				       const void *payload, size_t len)
{
	if (unlikely(READ_ONCE(ch->ordered)))
		return dti_store_ordered(ch, rchan, meta, payload, len);
	return __dti_store(ch, rchan, meta, payload, len);
}

/*
 * Append a record to the pending store; its lock held.  @len is at most
 * DTI_PAYLOAD_MAX, so DTI_RECORD_SIZE() cannot wrap.
 */
static bool dti_pending_add(struct dti_pending *p, const struct dti_meta *meta,
			    const void *payload, size_t len)
{
	struct dti_record *rec;
	size_t size;

	if (!payload || len > p->size)
		goto lost;
	size = DTI_RECORD_SIZE(len);
	if (size > p->size - p->used)
		goto lost;
	rec = p->buf + p->used;
	dti_fill_record(rec, meta, meta->cpu, len, 0);
	rec->flags |= DTI_REC_PENDING;
	memcpy(rec + 1, payload, len);
	/* Whole before counted, for dump readers (see dti_store()). */
	barrier();
	WRITE_ONCE(p->used, p->used + size);
	return true;
lost:
	p->lost++;
	return false;
}

/*
 * No relay buffers (yet): keep the record in @info's pending store, and
 * have an on-demand channel's buffers created (before DTI's init, a
 * handle's channel registered: dti_early_link()).  Publication of the
 * buffers holds the store's lock, so checking again under it decides
 * once and for all whether the record is replayed or written directly.
 * The write guard keeps this CPU from taking the lock twice.  An NMI
 * only tries the lock (an NMI must never spin: the CPU that holds it may
 * be waiting for this one), and its record is counted in @nmi when
 * another CPU holds it.  So does a writer that comes while its CPU holds
 * (or spins for) another channel's store lock, a probe's record from
 * inside this function: only a CPU that holds no store lock ever spins,
 * so two CPUs can never each hold one store's lock and spin for the
 * other's (its record is counted in @nested when the trylock fails).
 *
 * Context: interrupts disabled, @info's write guard held.
 * Return: ERR_PTR(-EINPROGRESS) if the record was kept, NULL if buffers
 * or a channel appeared meanwhile (the caller starts over), another
 * ERR_PTR() if the record is lost.
 */
static void *dti_write_pending(struct dti_info *info, struct dti_channel *ch,
			       const struct dti_meta *meta,
			       const void *payload, size_t len)
{
	struct dti_pending *p = info->pending;
	bool appeared, kept = false;

	if (!p) {
		/* Raced with "destroy": the level check passed just before. */
		return dti_lose(info, ch, meta, len, DTI_LOSS_NOBUF);
	}
	if (!dti_store_lock(&p->lock))
		return dti_lose(info, ch, meta, len, dti_nested_loss());
	if (ch)
		appeared = rcu_access_pointer(ch->rchan);
	else
		appeared = rcu_access_pointer(info->chan);
	if (!appeared)
		kept = dti_pending_add(p, meta, payload, len);
	dti_store_unlock(&p->lock);
	if (appeared)
		return NULL;
	if (ch && (ch->flags & DTI_F_ON_DEMAND))
		dti_queue_work(ch);
	else if (!ch)
		dti_early_link(p);	/* built-in code before DTI's init */
	if (!kept)
		return dti_lose(info, ch, meta, len, payload ? DTI_LOSS_PENDING :
							       DTI_LOSS_RESERVE);
	return ERR_PTR(-EINPROGRESS);
}

/*
 * dti_write() with the guard held and the arguments checked, for every
 * case but the common one that dti_write() handles inline: a record too
 * big for the channel, or no relay buffers (yet).
 */
static noinline void *dti_write_slow(struct dti_info *info,
				     const struct dti_meta *meta,
				     const void *payload, size_t len)
{
	struct dti_channel *ch;
	struct rchan *rchan;
	void *data;

	for (;;) {
		ch = rcu_dereference_sched(info->chan);
		if (likely(ch)) {
			if (unlikely(len > dti_max_payload(ch)))
				return dti_lose(info, ch, meta, len,
						DTI_LOSS_TOO_BIG);
			rchan = rcu_dereference_sched(ch->rchan);
			if (likely(rchan))
				return dti_store(ch, rchan, meta, payload, len);
		}
		data = dti_write_pending(info, ch, meta, payload, len);
		if (data)
			return data;
	}
}

/*
 * Write one record for @info: into this CPU's relay buffer, or into the
 * pending store while there is none.  @len is checked against
 * DTI_PAYLOAD_MAX before anything else uses it.
 *
 * Context: interrupts disabled; any context, NMI included.
 * Return: the payload area in the relay buffer; ERR_PTR(-EINPROGRESS)
 * if the record waits in the pending store; otherwise the ERR_PTR() of
 * the loss (see dti_losses[]).
 */
static __always_inline void *dti_write(struct dti_info *info,
				       const struct dti_meta *meta,
				       const void *payload, size_t len)
{
	struct dti_channel *ch;
	struct rchan *rchan;
	enum dti_loss why;
	void *data;

	lockdep_assert_irqs_disabled();
	if (unlikely(len > DTI_PAYLOAD_MAX)) {
		why = DTI_LOSS_TOO_BIG;
	} else if (unlikely(meta->level < 0)) {
		why = DTI_LOSS_BAD_ARG;
	} else if (unlikely(!dti_guard_enter(info))) {
		why = dti_nested_loss();
	} else {
		ch = rcu_dereference_sched(info->chan);
		rchan = likely(ch) ? rcu_dereference_sched(ch->rchan) : NULL;
		/*
		 * A stopped channel (dti_stop.c) keeps what it holds: neither
		 * its buffers nor its pending store take more.  A stop is one
		 * store to stop_reason, from whatever context stopped it; a
		 * writer that read it before the store finishes its record.
		 */
		if (unlikely(ch && READ_ONCE(ch->stop_reason)))
			data = dti_lose(info, ch, meta, len, DTI_LOSS_STOPPED);
		/*
		 * The size from the buffers in hand, read through their
		 * pointer: a resize (dti_resize()) publishes new buffers of
		 * another size, and this writer may see those before the
		 * channel's new size.
		 */
		else if (likely(rchan && len <= __dti_max_payload(ch, rchan->subbuf_size)))
			data = dti_store(ch, rchan, meta, payload, len);
		else
			data = dti_write_slow(info, meta, payload, len);
		/* A reservation keeps the guard until dti_commit_raw(). */
		if (payload || IS_ERR(data))
			dti_guard_exit(info);
		return data;
	}
	return dti_lose(info, rcu_dereference_sched(info->chan), meta, len, why);
}

/**
 * dti_pending_lock - take a pending store's lock from process context
 * @info: channel with a pending store
 * @flags: where to save the interrupt state
 *
 * Disables interrupts and takes the write guard first, so that an NMI or
 * a probe on this CPU that logs to @info backs off instead of spinning on
 * the lock this CPU holds; one that logs to another channel without
 * buffers only tries that one's lock (see dti_write_pending()).
 *
 * Context: process context.
 */
void dti_pending_lock(struct dti_info *info, unsigned long *flags)
	__acquires(&info->pending->lock)
{
	local_irq_save(*flags);
	/* Nothing that holds the guard can be interrupted by process context. */
	WARN_ON_ONCE(!dti_guard_enter(info));
	/* A probe's record meanwhile only tries other stores' locks. */
	__this_cpu_inc(dti_lock_depth);
	raw_spin_lock(&info->pending->lock);
}

/**
 * dti_pending_unlock - undo dti_pending_lock()
 * @info: channel
 * @flags: interrupt state saved by dti_pending_lock()
 */
void dti_pending_unlock(struct dti_info *info, unsigned long flags)
	__releases(&info->pending->lock)
{
	raw_spin_unlock(&info->pending->lock);
	__this_cpu_dec(dti_lock_depth);
	dti_guard_exit(info);
	local_irq_restore(flags);
}

/**
 * struct dti_replay - pending records moved out of the store for replay
 * @buf:	copy of the store
 * @used:	bytes of @buf holding records
 * @recs:	the records, sorted by time
 * @nr:		number of @recs
 */
struct dti_replay {
	void *buf;
	size_t used;
	const struct dti_record **recs;
	size_t nr;
};

static int dti_replay_cmp(const void *a, const void *b)
{
	const struct dti_record *x = *(const struct dti_record **)a;
	const struct dti_record *y = *(const struct dti_record **)b;

	/* Records of one time keep the order they were logged in. */
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The store holds records in the order CPUs took its lock, not the order
 * of their timestamps; readers merge each CPU's records assuming time
 * order, so sort them.  The records were written by dti_pending_add()
 * and are walked within @r->used only.
 */
static void dti_replay_sort(struct dti_replay *r)
{
	const struct dti_record *rec;
	size_t pos;

	r->nr = 0;
	for (pos = 0; r->used - pos >= sizeof(*rec);
	     pos += DTI_RECORD_SIZE(rec->len)) {
		rec = r->buf + pos;
		if (rec->len > r->used - pos - sizeof(*rec))
			break;
		r->recs[r->nr++] = rec;
	}
	sort(r->recs, r->nr, sizeof(*r->recs), dti_replay_cmp, NULL);
}

/* Store the records of @r in this CPU's buffer; the guard held. */
static u64 dti_replay(struct dti_channel *ch, struct rchan *rchan,
		      struct dti_replay *r)
{
	const struct dti_record *rec;
	struct dti_meta meta;
	u64 replayed = 0;
	size_t i;

	dti_replay_sort(r);
	for (i = 0; i < r->nr; i++) {
		rec = r->recs[i];
		meta.ts_ns = rec->ts_ns;
		meta.caller = rec->caller;
		meta.cpu = rec->log_cpu;
		meta.level = rec->level;
		meta.flags = (rec->flags & ~DTI_REC_PENDING) | DTI_REC_REPLAYED;
		if (rec->len > __dti_max_payload(ch, rchan->subbuf_size)) {
			dti_lose(ch->info, ch, &meta, rec->len,
				 DTI_LOSS_TOO_BIG);
			continue;
		}
		if (!IS_ERR(dti_store(ch, rchan, &meta, rec + 1, rec->len)))
			replayed++;
	}
	return replayed;
}

/**
 * dti_publish_buffers - make new relay buffers visible to writers
 * @ch: channel
 * @rchan: its new relay channel
 *
 * First moves the records waiting in the pending store out, publishes
 * the buffers, and replays the records into this CPU's buffer, sorted by
 * time, with their original timestamp, level, caller and logging CPU
 * (log_cpu), flagged DTI_REC_REPLAYED.  They take sequence numbers of the
 * buffer they land in, whose CPU is their cpu.  Interrupts stay off and
 * the write guard is held from before the move until the last record is
 * replayed, so nothing else reaches this CPU's new buffer first; the
 * stored-record probe points are called with no spinlock held.
 *
 * Context: process context, @ch->ctl_lock and @ch->buf_lock held (no
 * atomic context takes either).
 * Return: 0, or -ENOMEM (nothing published, the records stay pending).
 */
int dti_publish_buffers(struct dti_channel *ch, struct rchan *rchan)
{
	struct dti_info *info = ch->info;
	struct dti_pending *p = info->pending;
	struct dti_replay r = {};
	unsigned long flags;
	u64 replayed;

	lockdep_assert_held(&ch->buf_lock);
	if (!p) {
		rcu_assign_pointer(ch->rchan, rchan);
		return 0;
	}
	r.buf = kvmalloc(p->size, GFP_KERNEL);
	r.recs = kvmalloc_array(p->size / DTI_RECORD_SIZE(0) + 1,
				sizeof(*r.recs), GFP_KERNEL);
	if (!r.buf || !r.recs) {
		kvfree(r.buf);
		kvfree(r.recs);
		return -ENOMEM;
	}

	dti_pending_lock(info, &flags);
	r.used = p->used;
	memcpy(r.buf, p->buf, r.used);
	p->used = 0;
	rcu_assign_pointer(ch->rchan, rchan);
	raw_spin_unlock(&p->lock);

	replayed = dti_replay(ch, rchan, &r);

	raw_spin_lock(&p->lock);
	p->replayed += replayed;
	dti_pending_unlock(info, flags);
	kvfree(r.buf);
	kvfree(r.recs);
	return 0;
}

/* A record's level, or -1 if it is not one a record can have. */
static __always_inline void dti_meta_init(struct dti_meta *meta, int level,
					  u8 flags, unsigned long caller)
{
	meta->ts_ns = ktime_get_mono_fast_ns();
	meta->caller = caller;
	meta->cpu = smp_processor_id();
	meta->level = level >= 0 && level <= DTI_LEVEL_MAX ? level : -1;
	meta->flags = flags;
}

/* Result of a logging call: a record kept for replay counts as stored. */
static int dti_write_result(const void *data)
{
	if (PTR_ERR(data) == -EINPROGRESS)
		return 0;
	return PTR_ERR_OR_ZERO(data);
}

/*
 * This CPU's formatting buffer for the current nesting depth, or NULL
 * if nesting is deeper than DTI_TEXT_NEST_MAX.  Interrupts disabled.
 */
static char *dti_text_get(void)
{
	struct dti_text_bufs *t = this_cpu_ptr(&dti_text);
	unsigned int depth = t->depth;

	if (depth >= DTI_TEXT_NEST_MAX)
		return NULL;
	t->depth = depth + 1;
	barrier();
	return t->buf[depth];
}

/*
 * Interrupts disabled, as for dti_text_get(): a plain decrement, which an
 * NMI's own get and put leave as they found it.  (this_cpu_dec() of a
 * constant also draws sparse's "cast truncates bits" from arm64's
 * percpu.h, in the cases for the sizes it does not take.)
 */
static void dti_text_put(void)
{
	barrier();
	__this_cpu_dec(dti_text.depth);
}

/**
 * dti_printk_raw - format a text record and store it
 * @trace: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @fmt: printf format
 *
 * Usually called through __dti_printk() or dti_printk(), which check the
 * level inline first; this function does not check it again.  Text longer
 * than DTI_TEXT_MAX - 1 bytes is cut and flagged DTI_REC_TRUNCATED.
 *
 * Context: any, NMI included (vsnprintf() must then be safe for the
 * conversions used, as for trace_printk()).
 * Return: 0 if stored (or kept for replay into buffers being created);
 * -EINVAL for a bad level, a NULL @fmt or a NULL or error-pointer @trace
 * (which no stats count); -EBUSY if it would nest inside a write of the
 * same channel on this CPU; -EMSGSIZE if the text cannot fit a
 * sub-buffer; -ENOSPC if there is no room (no-overwrite buffer full, or
 * pending store full); -ENODEV if there is no buffer (being destroyed).
 */
int dti_printk_raw(struct dti_info *trace, int level, const char *fmt, ...)
{
	struct dti_meta meta;
	unsigned long flags;
	va_list args;
	char *text;
	void *data;
	int len;

	if (IS_ERR_OR_NULL(trace))
		return -EINVAL;
	local_irq_save(flags);
	dti_meta_init(&meta, level, DTI_REC_TEXT, _RET_IP_);
	if (unlikely(!fmt)) {
		data = dti_lose(trace, rcu_dereference_sched(trace->chan),
				&meta, 0, DTI_LOSS_BAD_ARG);
		goto out;
	}
	text = dti_text_get();
	if (unlikely(!text)) {
		data = dti_lose(trace, rcu_dereference_sched(trace->chan),
				&meta, 0, dti_nested_loss());
		goto out;
	}
	va_start(args, fmt);
	len = vsnprintf(text, DTI_TEXT_MAX, fmt, args);
	va_end(args);
	if (len >= DTI_TEXT_MAX) {
		len = DTI_TEXT_MAX - 1;
		meta.flags |= DTI_REC_TRUNCATED;
	}
	data = dti_write(trace, &meta, text, len);
	dti_text_put();
out:
	local_irq_restore(flags);
	return dti_write_result(data);
}
EXPORT_SYMBOL_GPL(dti_printk_raw);

/**
 * dti_ratelimit - whether a rate-limited call site may store a record now
 * @rs: the call site's rate limit
 * @missed: set to the records refused since the last one let through,
 *	    when this one is (0 if none), else left alone
 *
 * A window of @rs->interval jiffies lets @rs->burst records through;
 * the first call after it ends starts the next.  Lock-free: the window
 * is begun by one atomic_long_try_cmpxchg() on @rs->begin (of CPUs that
 * find it ended at once, one begins it), its places are taken with
 * atomic_dec_if_positive(), so a window lets through at most @rs->burst
 * records on all CPUs together, save those that took a place of the old
 * window while the new one was begun.
 *
 * Context: any, NMI included.
 * Return: true if the record may be stored.
 */
bool dti_ratelimit(struct dti_ratelimit *rs, int *missed)
{
	unsigned long now = jiffies;
	long begin = atomic_long_read(&rs->begin);

	if (!rs->interval)
		return true;
	if ((!begin || time_after(now, (unsigned long)begin + rs->interval)) &&
	    atomic_long_try_cmpxchg(&rs->begin, &begin, now ? now : 1))
		atomic_set(&rs->left, rs->burst);
	if (atomic_dec_if_positive(&rs->left) < 0) {
		atomic_inc(&rs->missed);
		return false;
	}
	*missed = atomic_xchg(&rs->missed, 0);
	return true;
}
EXPORT_SYMBOL_GPL(dti_ratelimit);

/* dti_write_record(), inlined into the exported writers. */
static __always_inline int __dti_write_record(struct dti_info *info,
					      int level, u8 flags,
					      const void *buf, size_t len,
					      unsigned long caller)
{
	struct dti_meta meta;
	unsigned long irqflags;
	void *data;

	local_irq_save(irqflags);
	dti_meta_init(&meta, level, flags, caller);
	if (unlikely(!buf && len))
		data = dti_lose(info, rcu_dereference_sched(info->chan), &meta,
				len, DTI_LOSS_BAD_ARG);
	else
		data = dti_write(info, &meta, buf ? buf : "", len);
	local_irq_restore(irqflags);
	return dti_write_result(data);
}

/**
 * dti_write_record - store a record whose payload is ready
 * @info: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @flags: DTI_REC_TEXT and DTI_REC_TRUNCATED, or 0
 * @buf: payload
 * @len: payload length, any value: checked before use
 * @caller: address to record as the caller
 *
 * Context: any, NMI included.
 * Return: as dti_event_raw().
 */
int dti_write_record(struct dti_info *info, int level, u8 flags,
		     const void *buf, size_t len, unsigned long caller)
{
	return __dti_write_record(info, level, flags, buf, len, caller);
}

/**
 * dti_event_raw - store a binary record
 * @trace: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @buf: payload
 * @len: payload length; at most the sub-buffer size less the headers
 *
 * Usually called through __dti_event() or dti_event(), which check the
 * level inline first.
 *
 * Context: any, NMI included.
 * Return: as dti_printk_raw(); also -EINVAL for a NULL @buf with a
 * non-zero @len, and -EMSGSIZE for any @len over DTI_PAYLOAD_MAX.
 */
int dti_event_raw(struct dti_info *trace, int level, const void *buf,
		  size_t len)
{
	if (IS_ERR_OR_NULL(trace))
		return -EINVAL;
	return __dti_write_record(trace, level, 0, buf, len, _RET_IP_);
}
EXPORT_SYMBOL_GPL(dti_event_raw);

/**
 * dti_event_log_raw - store an event of a registered type
 * @trace: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @type: the event's type, registered on @trace (dti_event_register())
 *
 * Packs the values that follow as @type's template says, with no text
 * formatting, into a DTI_REC_TYPED record (see dti_record.h); a string
 * or byte array cut to fit is flagged DTI_REC_TRUNCATED.  Usually
 * called through __dti_log_event() or dti_log_event(), which check the
 * level inline first and have the compiler check the values against the
 * template.
 *
 * Context: any, NMI included (strings are read as printk reads them).
 * Return: as dti_printk_raw(); -EINVAL also for a NULL @type or one not
 * registered on @trace.
 */
int dti_event_log_raw(struct dti_info *trace, int level,
		      const struct dti_event_type *type, ...)
{
	bool truncated = false;
	struct dti_meta meta;
	unsigned long flags;
	va_list args;
	size_t len;
	void *data;
	u8 *out;

	if (IS_ERR_OR_NULL(trace))
		return -EINVAL;
	local_irq_save(flags);
	dti_meta_init(&meta, level, DTI_REC_TYPED, _RET_IP_);
	/* Pairs with dti_event_register()'s release: the table is seen too. */
	if (unlikely(!type || smp_load_acquire(&type->owner) != trace)) {
		data = dti_lose(trace, rcu_dereference_sched(trace->chan),
				&meta, 0, DTI_LOSS_BAD_ARG);
		goto out;
	}
	out = dti_text_get();
	if (unlikely(!out)) {
		data = dti_lose(trace, rcu_dereference_sched(trace->chan),
				&meta, 0, dti_nested_loss());
		goto out;
	}
	va_start(args, type);
	len = dti_event_pack(type, out, args, &truncated);
	va_end(args);
	if (truncated)
		meta.flags |= DTI_REC_TRUNCATED;
	data = dti_write(trace, &meta, out, len);
	dti_text_put();
out:
	local_irq_restore(flags);
	return dti_write_result(data);
}
EXPORT_SYMBOL_GPL(dti_event_log_raw);

/**
 * dti_reserve_raw - reserve a binary record for the caller to fill in
 * @trace: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @len: payload length
 *
 * Usually called through __dti_reserve() or dti_reserve().  The caller
 * writes the payload, then calls dti_commit_raw() (dti_commit()), with
 * interrupts disabled from this call until then.  Until the commit the
 * record is nobody's to see: not counted in its sub-buffer (so no
 * reader, oops report or memory dump takes the unwritten bytes for a
 * record), not in the channel's stats, not given to the stored-record
 * probes or the tracepoint.  Its sequence number is taken here, so that
 * the compact header written here is true: a record of the same channel
 * that this CPU logs meanwhile (an NMI) is refused as nmi and takes the
 * number after it; a second reservation in the same context, on any channel,
 * before the commit is refused as nested.  While a handle's buffers do
 * not exist yet nothing can be reserved; the record is counted as lost.
 *
 * Context: interrupts disabled; any context, NMI included.
 * Return: pointer to @len bytes of payload, or NULL if not stored (the
 * reason is counted in the channel's stats; a NULL or error-pointer
 * @trace is counted nowhere).
 */
void *dti_reserve_raw(struct dti_info *trace, int level, size_t len)
{
	struct dti_meta meta;
	void *data;

	if (IS_ERR_OR_NULL(trace))
		return NULL;
	if (WARN_ON_ONCE(!irqs_disabled()))
		return NULL;
	dti_meta_init(&meta, level, DTI_REC_RESERVED, _RET_IP_);
	data = dti_write(trace, &meta, NULL, len);
	return IS_ERR(data) ? NULL : data;
}
EXPORT_SYMBOL_GPL(dti_reserve_raw);

/**
 * dti_blob_raw - store a blob: bytes of any length with a media type
 * @trace: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @media_type: the bytes' media type, at most DTI_BLOB_TYPE_MAX bytes
 * @buf: the bytes
 * @len: how many; with the media type, at most the sub-buffer size less
 *	 the headers
 *
 * Stores a DTI_REC_TYPED record of id DTI_EVENT_ID_BLOB (see
 * dti_record.h), copied straight into the channel's buffer, whatever its
 * length: the record is reserved, filled in and committed with
 * interrupts disabled.  Usually called through __dti_blob() or
 * dti_blob(), which check the level inline first.  A handle's channel
 * whose buffers do not exist yet keeps no blob (counted as lost), as it
 * keeps no reservation.
 *
 * Context: any, NMI included.
 * Return: as dti_event_raw(); -EINVAL also for a NULL or too long
 * @media_type.
 */
int dti_blob_raw(struct dti_info *trace, int level, const char *media_type,
		 const void *buf, size_t len)
{
	struct dti_meta meta;
	unsigned long flags;
	size_t type_len;
	u16 id = DTI_EVENT_ID_BLOB;
	u8 *p;

	if (IS_ERR_OR_NULL(trace) || !media_type || (!buf && len))
		return -EINVAL;
	type_len = strnlen(media_type, DTI_BLOB_TYPE_MAX + 1);
	if (type_len > DTI_BLOB_TYPE_MAX)
		return -EINVAL;
	/* a length past any payload is refused as too big, counted */
	len = min_t(size_t, len, DTI_PAYLOAD_MAX + 1);
	local_irq_save(flags);
	dti_meta_init(&meta, level, DTI_REC_TYPED, _RET_IP_);
	p = dti_write(trace, &meta, NULL, DTI_BLOB_HDR_SIZE + type_len + len);
	if (!IS_ERR(p)) {
		memcpy(p, &id, sizeof(id));
		p[sizeof(id)] = type_len;
		memcpy(p + DTI_BLOB_HDR_SIZE, media_type, type_len);
		memcpy(p + DTI_BLOB_HDR_SIZE + type_len, buf, len);
		dti_commit_raw(trace, p);
	}
	local_irq_restore(flags);
	return dti_write_result(p);
}
EXPORT_SYMBOL_GPL(dti_blob_raw);

/**
 * dti_commit_raw - publish a record dti_reserve_raw() reserved
 * @trace: the channel it was reserved on
 * @data: what dti_reserve_raw() returned; NULL does nothing
 *
 * Usually called through dti_commit().  The record, its payload now
 * written, is counted in its sub-buffer and the channel's stats, and
 * goes to the stored-record probes and the
 * tracepoint, payload included; it counts toward a halt trigger armed
 * when it was reserved.  A @data that is not this CPU's open reservation
 * of @trace is a caller's bug: a warning, and nothing published.
 *
 * Context: the one of the dti_reserve_raw() call, on its CPU, with
 * interrupts still disabled since.
 */
void dti_commit_raw(struct dti_info *trace, void *data)
{
	struct dti_reservation *r;

	if (!data)
		return;
	r = dti_reservation_slot();
	if (WARN_ON_ONCE(!r->payload || r->payload != data ||
			 r->ch->info != trace || !irqs_disabled()))
		return;
	dti_publish(r->ch, r->buf, &r->meta, r->seq, r->payload, r->len, r->halt);
	if (r->locked) {
		/* Taken by dti_store_ordered() for the reservation. */
		__acquire(&r->ch->order_lock);
		dti_store_unlock(&r->ch->order_lock);
	}
	r->payload = NULL;
	dti_guard_exit(trace);
}
EXPORT_SYMBOL_GPL(dti_commit_raw);
