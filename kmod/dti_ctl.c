// SPDX-License-Identifier: GPL-2.0
/*
 * DTI control by channel name, from any context (dti_ctl_create(): any
 * but NMI).
 *
 * For code that holds no dti_info pointer and may run where nothing can
 * sleep: SystemTap probe handlers (tapset/dti_control.stp) above all.
 * Channels are found under RCU; whatever needs to sleep (debugfs files,
 * allocating or freeing relay buffers) is left to the channel's work
 * item, so a change made here takes effect on the level at once and on
 * the buffers shortly after.  Channels being registered or removed are
 * not found here (dti_find_visible()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/hardirq.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "dti_internal.h"

/* Bytes of pending store for channels created by dti_ctl_create(). */
#define DTI_CTL_PENDING_SIZE	4096

/**
 * struct dti_owned - what dti_ctl_create() needs besides the channel
 * @info:	the channel's dti_info
 * @pending:	its pending store
 * @buf:	the store's memory
 * @ch:		the channel's memory, while in the pool
 * @spare:	in dti_ctl_trash, to be freed by the refill work
 */
struct dti_owned {
	struct dti_info info;
	struct dti_pending pending;
	u64 buf[DTI_CTL_PENDING_SIZE / sizeof(u64)];
	struct dti_channel *ch;
	struct llist_node spare;
};

/*
 * dti_ctl_create() runs in any context but NMI: in a probe, with
 * interrupts off, in a hard interrupt.  On PREEMPT_RT no allocator may
 * be called there (its locks sleep), nor may memory be freed; on the
 * other kernels GFP_ATOMIC would do, but at the cost of a different path
 * on each.  So on every kernel a channel's memory comes from this pool,
 * filled in process context by dti_ctl_refill_work and refilled after
 * each take; a create that finds it empty is refused with -ENOMEM and
 * counted (DTI_CTL_POOL_FILE).  What a create took and could not use
 * goes back, or, if the pool filled up meanwhile, to dti_ctl_trash, a
 * lock-free list the same work frees.  The pool changes under
 * dti_list_lock, taken with dti_list_try_lock() in atomic context.
 */
#define DTI_CTL_POOL_SIZE	8

static struct dti_owned *dti_ctl_pool[DTI_CTL_POOL_SIZE];
static unsigned int dti_ctl_pool_n;
static atomic_long_t dti_ctl_pool_empty;
static LLIST_HEAD(dti_ctl_trash);
static void dti_ctl_refill(struct work_struct *work);
static DECLARE_WORK(dti_ctl_refill_work, dti_ctl_refill);
static void dti_ctl_refill_kick(struct irq_work *kick);
static struct irq_work dti_ctl_refill_irq_work = IRQ_WORK_INIT(dti_ctl_refill_kick);
static bool dti_ctl_exiting;

/**
 * dti_ctl_get_level - read a channel's level by name
 * @name: channel name
 * @level: where to store the level
 *
 * Context: any.
 * Return: 0, -EINVAL for NULL arguments, -ENOENT if there is no such
 * channel.
 */
int dti_ctl_get_level(const char *name, int *level)
{
	struct dti_channel *ch;
	int ret = -ENOENT;

	if (!name || !level)
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	if (ch) {
		*level = READ_ONCE(ch->info->level);
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_get_level);

/* Do the buffers need creating or freeing to match @level? */
static bool dti_ctl_buffers_stale(struct dti_channel *ch, int level)
{
	bool buffers = rcu_access_pointer(ch->rchan);

	if (level == DTI_LEVEL_DESTROY)
		return buffers;
	return level >= 0 && !buffers && !(ch->flags & DTI_F_ON_DEMAND);
}

/*
 * A level change by name, without ctl_lock: like every level change it
 * ends an armed halt trigger, and dti.level_change is told.
 * Context: any, NMI included.
 */
static void dti_ctl_switch_level(struct dti_channel *ch, int level)
{
	int old = dti_level_switch(ch, level);

	dti_probe_level(ch, old, level, DTI_SRC_CONTROL);
}

/**
 * dti_ctl_set_level - set a channel's level by name
 * @name: channel name
 * @level: DTI_LEVEL_DESTROY, DTI_LEVEL_OFF or 0..DTI_LEVEL_MAX
 *
 * The level changes at once: from the next logging call on, records are
 * filtered by it.  Buffers that must be allocated (a level of 0 or more
 * after "destroy") or freed ("destroy") are dealt with by a work item;
 * until new buffers exist, records of a channel without a pending store
 * are counted as unavailable.
 *
 * Context: any, NMI included.
 * Return: 0, -EINVAL for a bad argument, -ENOENT if there is no such
 * channel.
 */
int dti_ctl_set_level(const char *name, int level)
{
	struct dti_channel *ch;
	int ret = 0;

	if (!name || !dti_level_valid(level))
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	if (!ch) {
		ret = -ENOENT;
		goto out_unlock;
	}
	dti_ctl_switch_level(ch, level);
	if (dti_ctl_buffers_stale(ch, level))
		dti_queue_work(ch);
out_unlock:
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_set_level);

/**
 * dti_ctl_log - log a record to a channel found by name
 * @name: channel name
 * @level: record level, 0..DTI_LEVEL_MAX
 * @text: true for a text record (no NUL), false for binary
 * @buf: payload
 * @len: payload length
 * @caller: address to record as the caller, e.g. a probed address
 *
 * Context: any, NMI included.
 * Return: 0 if stored (or kept for replay), 1 if the channel's level
 * filtered it, -ENOENT if there is no such channel, -EINVAL for a bad
 * argument, otherwise as dti_event_raw().
 */
int dti_ctl_log(const char *name, int level, bool text, const void *buf,
		size_t len, unsigned long caller)
{
	struct dti_channel *ch;
	int ret;

	if (!name || (!buf && len))
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	if (!ch)
		ret = -ENOENT;
	else if (!dti_enabled(ch->info, level))
		ret = 1;
	else
		ret = dti_write_record(ch->info, level,
				       text ? DTI_REC_TEXT : 0, buf, len,
				       caller);
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_log);

/* A pool entry's memory, all zero.  Context: process context. */
static struct dti_owned *dti_ctl_spare_alloc(void)
{
	struct dti_owned *own = kzalloc_obj(*own, GFP_KERNEL);

	if (!own)
		return NULL;
	own->info.stats = alloc_percpu(struct dti_cpu_stats);
	if (!own->info.stats)
		goto err_free;
	own->ch = dti_alloc_channel_mem(false, GFP_KERNEL);
	if (!own->ch)
		goto err_free_stats;
	return own;

err_free_stats:
	free_percpu(own->info.stats);
err_free:
	kfree(own);
	return NULL;
}

/* Free a pool entry.  Context: process context. */
static void dti_ctl_spare_free(struct dti_owned *own)
{
	free_percpu(own->ch->trigger);
	kfree(own->ch);
	free_percpu(own->info.stats);
	kfree(own);
}

/*
 * Put @own in the pool if it has room.  Context: any but NMI.
 * Return: whether it did.
 */
static bool dti_ctl_pool_add(struct dti_owned *own)
{
	unsigned long flags;
	bool added = false;

	if (!dti_list_try_lock(&flags))
		return false;
	if (dti_ctl_pool_n < DTI_CTL_POOL_SIZE) {
		dti_ctl_pool[dti_ctl_pool_n++] = own;
		added = true;
	}
	dti_list_unlock(flags);
	return added;
}

static void dti_ctl_refill_kick(struct irq_work *kick)
{
	schedule_work(&dti_ctl_refill_work);
}

/* Fill the pool up and free the trash.  Context: process context. */
static void dti_ctl_refill(struct work_struct *work)
{
	struct dti_owned *own, *next;

	llist_for_each_entry_safe(own, next, llist_del_all(&dti_ctl_trash), spare)
		dti_ctl_spare_free(own);
	while (!READ_ONCE(dti_ctl_exiting) && READ_ONCE(dti_ctl_pool_n) < DTI_CTL_POOL_SIZE) {
		own = dti_ctl_spare_alloc();
		if (!own)
			return;
		if (!dti_ctl_pool_add(own)) {
			dti_ctl_spare_free(own);
			return;
		}
	}
}

/*
 * Take a pool entry and have the pool refilled.
 * Context: any but NMI.
 * Return: the entry; NULL if the pool is empty (counted), ERR_PTR(-EDEADLK)
 * if this CPU holds the channel list lock already.
 */
static struct dti_owned *dti_ctl_spare_take(void)
{
	struct dti_owned *own = NULL;
	unsigned long flags;

	if (!dti_list_try_lock(&flags))
		return ERR_PTR(-EDEADLK);
	if (dti_ctl_pool_n)
		own = dti_ctl_pool[--dti_ctl_pool_n];
	dti_list_unlock(flags);
	if (!own)
		atomic_long_inc(&dti_ctl_pool_empty);
	irq_work_queue(&dti_ctl_refill_irq_work);
	return own;
}

/*
 * Give back an entry that dti_ctl_create() took and could not use, its
 * memory as the pool keeps it: zero but for the per-CPU areas, which
 * nothing wrote.  Context: any but NMI.
 */
static void dti_ctl_spare_put(struct dti_owned *own)
{
	struct dti_channel *ch = own->ch;
	void __percpu *trigger = ch->trigger;
	void __percpu *stats = own->info.stats;

	memset(ch, 0, sizeof(*ch));
	ch->trigger = trigger;
	memset(own, 0, sizeof(*own));
	own->info.stats = stats;
	own->ch = ch;
	if (dti_ctl_pool_add(own))
		return;
	llist_add(&own->spare, &dti_ctl_trash);
	irq_work_queue(&dti_ctl_refill_irq_work);
}

/* Make a pool entry the dti_owned of a channel called @name. */
static void dti_owned_init(struct dti_owned *own, const char *name, int level)
{
	own->info.level = level;
	own->info.pending = &own->pending;
	raw_spin_lock_init(&own->pending.lock);
	own->pending.buf = own->buf;
	own->pending.size = sizeof(own->buf);
	dti_dump_pending_init(&own->pending, name);
}

/**
 * dti_ctl_free_owned - free what dti_ctl_create() allocated for @ch
 * @ch: channel being freed
 */
void dti_ctl_free_owned(struct dti_channel *ch)
{
	struct dti_owned *own = ch->owned;

	dti_dump_pending_wipe(&own->pending);
	free_percpu(own->info.stats);
	kfree(own);
}

/*
 * Take over an orphaned channel of dti_ctl_create() called @name.
 * Return: 0, -ENOENT if there is no channel of that name, -EEXIST if
 * there is one that cannot be taken over, -EDEADLK if called from
 * inside the channel list lock.
 */
static int dti_ctl_adopt(const char *name, int level, const void *owner)
{
	struct dti_channel *ch;
	unsigned long flags;
	int ret = -EEXIST;

	if (!dti_list_try_lock(&flags))
		return -EDEADLK;
	ch = dti_find(name);
	if (!ch) {
		ret = -ENOENT;
	} else if (ch->owned && !ch->owner && !ch->hidden) {
		ch->owner = owner;
		ret = 0;
	}
	dti_list_unlock(flags);
	if (ret)
		return ret;
	return dti_ctl_set_level(name, level);
}

/* dti_ctl_create(); *@created is set to a channel made anew. */
static int __dti_ctl_create(const char *name, size_t size, int level,
			    const void *owner, struct dti_channel **created)
{
	size_t subbuf_size = dti_default_subbuf_size(size);
	struct dti_channel *ch;
	struct dti_owned *own;
	int ret;

	if (!owner || !dti_level_valid(level))
		return -EINVAL;
	ret = dti_check_name(name);
	if (!ret)
		ret = dti_check_geometry(subbuf_size, DTI_DEFAULT_N_SUBBUFS);
	if (ret)
		return ret;
	if (in_nmi())
		return -EBUSY;
	/* Built-in code before DTI's init: no pool, no work queue yet. */
	if (!dti_is_up())
		return -ENODEV;
	ret = dti_ctl_adopt(name, level, owner);
	if (ret != -ENOENT)
		return ret;

	own = dti_ctl_spare_take();
	if (IS_ERR_OR_NULL(own))
		return own ? PTR_ERR(own) : -ENOMEM;
	dti_owned_init(own, name, level);
	ch = own->ch;
	dti_init_channel(ch, name, subbuf_size, DTI_DEFAULT_N_SUBBUFS,
			 DTI_F_ON_DEMAND, &own->info);
	ch->owned = own;
	ch->owner = owner;
	rcu_assign_pointer(own->info.chan, ch);
	ret = dti_add_channel(ch);
	if (ret) {
		/* Never visible: nothing to wait for, nothing to free here. */
		dti_dump_wipe(ch);
		dti_dump_pending_wipe(&own->pending);
		dti_ctl_spare_put(own);
		return ret;
	}
	dti_queue_work(ch);
	*created = ch;
	return 0;
}

/**
 * dti_ctl_create - create a channel owned by the caller
 * @name: channel name, as for dti_register_flags()
 * @size: bytes of buffer per CPU, as for dti_register()
 * @level: initial level
 * @owner: non-NULL cookie identifying the creator, for dti_ctl_release()
 *
 * The channel can be found by name and logged to at once.  Like a
 * handle's, its buffers are allocated when the first record at a stored
 * level arrives; its debugfs directory appears shortly after this call,
 * from a work item.  Records logged before the buffers exist wait in a
 * DTI_CTL_PENDING_SIZE pending store and are replayed.
 *
 * If a channel of that name was created this way and released, it is
 * taken over as it is (records, size) and set to @level.
 *
 * Context: any but NMI, PREEMPT_RT's hard interrupts and raw-spinlock
 * sections included: the channel's memory comes from a pool filled in
 * process context (see dti_ctl_pool), so a probe inside the memory
 * allocator may call it too.
 * Return: 0, -EINVAL for a bad argument, -EEXIST if the name is taken
 * (also by a channel still being registered or removed), -ENOMEM if
 * the pool is empty (counted in DTI_CTL_POOL_FILE),
 * -EBUSY in NMI context, -EDEADLK from a probe that fired while this
 * CPU held DTI's channel list lock, -ENODEV before DTI's init (built-in
 * code).
 */
int dti_ctl_create(const char *name, size_t size, int level,
		   const void *owner)
{
	struct dti_channel *ch = NULL;
	int ret;

	ret = __dti_ctl_create(name, size, level, owner, &ch);
	/* A channel taken over was registered before. */
	if (ret || ch)
		dti_probe_register(name, ch, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_create);

/**
 * dti_ctl_release - give up the channels @owner created
 * @owner: the cookie given to dti_ctl_create()
 *
 * The channels are switched off, ending any halt trigger (as every level
 * change does), and stay, with their records, so they
 * can still be read after their creator (a SystemTap script, say) has
 * gone; dti_ctl_create() with the same name takes one over again.  They
 * are freed when dti.ko is unloaded.
 *
 * Context: any but NMI.
 * Return: the number of channels released, or -EINVAL for a NULL @owner.
 */
int dti_ctl_release(const void *owner)
{
	struct dti_channel *ch;
	int n = 0;

	if (!owner)
		return -EINVAL;
	rcu_read_lock();
	list_for_each_entry_rcu(ch, dti_channel_list(), list) {
		if (!ch->owned || READ_ONCE(ch->hidden) ||
		    cmpxchg(&ch->owner, owner, NULL) != owner)
			continue;
		dti_ctl_switch_level(ch, DTI_LEVEL_OFF);
		n++;
	}
	rcu_read_unlock();
	return n;
}
EXPORT_SYMBOL_GPL(dti_ctl_release);

/*
 * Arm @ch's halt trigger for @count records, or, with a @deadline, for
 * the records whose timestamps are not after it (dti_ctl_halt_after_ns()).
 * Context: any, NMI included; the RCU read lock held.
 */
static int dti_halt_arm(struct dti_channel *ch, unsigned long count, u64 deadline)
{
	int ctl, armed;
	u32 gen;

	/*
	 * A new generation: what writers still hold of the last arming
	 * (a place, a record being stored) no longer counts, and each
	 * CPU's report starts again at its first record of this one.
	 */
	ctl = atomic_read(&ch->halt_ctl);
	do {
		if (dti_halt_state(ctl) != DTI_HALT_OFF)
			return -EBUSY;
		gen = (dti_halt_ctl_gen(ctl) + 1) & DTI_HALT_GEN_MASK;
	} while (!atomic_try_cmpxchg(&ch->halt_ctl, &ctl,
				     dti_halt_ctl(DTI_HALT_ARMING,
						  dti_halt_level(ctl), gen)));
	atomic64_set(&ch->halt_pending, DTI_HALT_WORD(gen, count));
	atomic64_set(&ch->halt_places, DTI_HALT_WORD(gen, count));
	WRITE_ONCE(ch->halt_deadline, deadline);
	/*
	 * Armed, at the level a level change made meanwhile, if one did
	 * (it leaves an arming under way alone: this arming comes after
	 * it).  Nothing else changes halt_ctl while it says ARMING.  Fully
	 * ordered, so a release of the counts and the deadline above:
	 * pairs with the atomic_read_acquire() in __dti_store(), a writer
	 * that sees the trigger armed sees its counts and its deadline.
	 */
	ctl = atomic_read(&ch->halt_ctl);
	do {
		armed = dti_halt_ctl(DTI_HALT_ARMED, dti_halt_level(ctl), gen);
	} while (!atomic_try_cmpxchg(&ch->halt_ctl, &ctl, armed));
	if (!count)
		dti_halt_fire(ch, gen);
	return 0;
}

/**
 * dti_ctl_halt_after - switch a channel off after exactly @count more records
 * @name: channel name
 * @count: records to store before the channel is switched off
 *	   (0: switch it off now)
 *
 * Arms the channel's halt trigger.  From then on every record the
 * channel is about to store, on any CPU, takes one of @count places; the
 * writer that completes the last of those records sets the level to
 * DTI_LEVEL_OFF.  Records that find no place left are refused and
 * counted as halted, so exactly @count records are stored after the
 * trigger was armed (a record a CPU had already begun to store when the
 * trigger was armed is not one of them, and neither counts nor fires
 * this arming: not even the record whose dti.record handler arms it).
 * dti_ctl_trigger_cpu() tells which records they were.  The trigger
 * stays armed after it fired; a level change (by any means) ends it, and
 * then it can be armed again.  A level change that ends it while its
 * last record is being stored is not undone by the trigger, and one
 * that runs while this call arms it comes before the arming, which it
 * therefore leaves armed.  On a channel that is off or destroyed the
 * trigger arms, and its firing changes nothing: such a channel stays as
 * it is (a destroyed one keeps no buffers) and no level change is
 * reported; only a level change ends the trigger.
 *
 * Context: any, NMI included; a probe handler of the channel's own
 * records (dti.record) may call it.
 * Return: 0, -EINVAL for a bad argument (@count above
 * DTI_HALT_COUNT_MAX, 2^48 - 1), -ENOENT if there is no such channel,
 * -EBUSY if its trigger is armed already (only one of several CPUs
 * arming it at once succeeds).
 */
int dti_ctl_halt_after(const char *name, unsigned long count)
{
	struct dti_channel *ch;
	int ret;

	BUILD_BUG_ON(DTI_HALT_COUNT_MAX != (1ULL << DTI_HALT_GEN_SHIFT) - 1);
	if (!name)
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	ret = ch ? __dti_halt_after(ch, count) : -ENOENT;
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_halt_after);

/**
 * __dti_halt_after - dti_ctl_halt_after() for a channel in hand
 * @ch: the channel
 * @count: records it still stores
 *
 * Context: any, NMI included.
 * Return: as dti_ctl_halt_after().
 */
int __dti_halt_after(struct dti_channel *ch, u64 count)
{
	return count > DTI_HALT_COUNT_MAX ? -EINVAL : dti_halt_arm(ch, count, 0);
}

/**
 * __dti_halt_after_ns - dti_ctl_halt_after_ns() for a channel in hand
 * @ch: the channel
 * @ns: how long it goes on storing
 *
 * Context: any, NMI included.
 * Return: as dti_ctl_halt_after_ns().
 */
int __dti_halt_after_ns(struct dti_channel *ch, u64 ns)
{
	u64 now = ktime_get_mono_fast_ns();

	if (ns > U64_MAX - now)
		return -EINVAL;
	return dti_halt_arm(ch, DTI_HALT_COUNT_MAX, now + ns);
}

/**
 * __dti_trigger_left - dti_ctl_trigger_left() for a channel in hand
 * @ch: the channel
 *
 * Context: any, NMI included.
 * Return: as dti_ctl_trigger_left().
 */
long __dti_trigger_left(struct dti_channel *ch)
{
	if (dti_halt_state(atomic_read(&ch->halt_ctl)) != DTI_HALT_ARMED)
		return -ENODATA;
	return DTI_HALT_COUNT(atomic64_read(&ch->halt_pending));
}

/**
 * dti_ctl_halt_after_ns - switch a channel off @ns nanoseconds from now
 * @name: channel name
 * @ns: how long the channel goes on storing, in nanoseconds
 *
 * Arms the channel's halt trigger by time: its deadline is the channel's
 * clock (the records' timestamps, ktime_get_mono_fast_ns()) now, plus
 * @ns.  From then on a record whose timestamp is after the deadline is
 * refused and counted as halted, on whichever CPU it is written, and
 * the first such record switches the channel off (dti.level_change,
 * source "trigger"); a record whose timestamp is not after it is stored
 * as any other, even on a CPU that stores it after another CPU's record
 * switched the channel off.  So the records kept after the arming are
 * exactly those whose timestamps fall within @ns of it: a writer checks
 * the level before it takes its record's timestamp, so a record refused
 * by the level turned off has a timestamp later than the record that
 * turned it off.  A record replayed from a pending store keeps its own
 * (earlier) timestamp and is stored.  Until a record comes after the
 * deadline the level stays as it is: the channel's info file shows the
 * deadline (halt_deadline_ns).  Everything else, the records'
 * report by CPU (dti_ctl_trigger_cpu()), the end by a level change and
 * -EBUSY, is as for dti_ctl_halt_after().
 *
 * Context: any, NMI included; a probe handler of the channel's own
 * records (dti.record) may call it.
 * Return: 0, -EINVAL for a bad argument (a deadline past the clock's
 * range), -ENOENT if there is no such channel, -EBUSY if its trigger is
 * armed already.
 */
int dti_ctl_halt_after_ns(const char *name, u64 ns)
{
	struct dti_channel *ch;
	int ret;

	if (!name)
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	ret = ch ? __dti_halt_after_ns(ch, ns) : -ENOENT;
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_halt_after_ns);

/**
 * dti_ctl_set_ordered - store a channel's records in one order for all CPUs
 * @name: channel name
 * @on: true: ordered; false: back to lock-free stores
 *
 * While a channel is ordered, each store takes a raw spinlock of the
 * channel and the record's timestamp under it: the records of all CPUs
 * then have timestamps in the order they were stored, and a record's
 * probe handlers (dti.record) run before any other CPU stores one.  A
 * halt trigger armed from such a handler therefore counts exactly the
 * records whose timestamps come after the record that armed it, even
 * while every CPU logs (what dti_freeze.stp relies on).  The price: the
 * channel's writers go one at a time, and a writer that finds the lock
 * taken where it may not spin for it (NMI, or its CPU inside another
 * store lock) loses its record, counted as nmi or nested.  Stores under
 * way when it is turned on or off finish as they began.
 *
 * Context: any, NMI included.
 * Return: 0, -EINVAL for a NULL @name, -ENOENT if there is no such channel.
 */
int dti_ctl_set_ordered(const char *name, bool on)
{
	struct dti_channel *ch;
	int ret = 0;

	if (!name)
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	if (ch)
		WRITE_ONCE(ch->ordered, on);
	else
		ret = -ENOENT;
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_set_ordered);

/**
 * dti_ctl_trigger_cpu - the records a halt trigger let through on a CPU
 * @name: channel name
 * @cpu: CPU whose buffer holds them
 * @first_seq: where to store the sequence number of the first
 * @last_seq: where to store that of the last
 * @records: where to store how many there were (0: none on @cpu, and
 *	     the sequence numbers mean nothing)
 *
 * Reports what the last dti_ctl_halt_after() on the channel let through
 * so far.  On one CPU those records are contiguous in sequence numbers
 * (a gap is a record lost for a reason its stats count).
 *
 * Context: any, NMI included.
 * Return: 0, -EINVAL for a bad argument, -ENOENT if there is no such
 * channel, -ENODATA if no trigger was armed.
 */
int dti_ctl_trigger_cpu(const char *name, unsigned int cpu, u64 *first_seq,
			u64 *last_seq, u64 *records)
{
	const struct dti_trigger_cpu *t;
	struct dti_channel *ch;
	int ret = 0;

	if (!name || !first_seq || !last_seq || !records || cpu >= nr_cpu_ids)
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	if (!ch) {
		ret = -ENOENT;
	} else if (dti_halt_state(atomic_read(&ch->halt_ctl)) != DTI_HALT_ARMED) {
		ret = -ENODATA;
	} else {
		*first_seq = *last_seq = *records = 0;
		t = cpu_possible(cpu) ? per_cpu_ptr(ch->trigger, cpu) : NULL;
		/* a CPU with no record of this arming still holds an older one's */
		if (t && READ_ONCE(t->gen) ==
			 DTI_HALT_GEN(atomic64_read(&ch->halt_pending))) {
			*first_seq = READ_ONCE(t->first_seq);
			*last_seq = READ_ONCE(t->last_seq);
			*records = READ_ONCE(t->records);
		}
	}
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_trigger_cpu);

/**
 * dti_ctl_trigger_left - how many records a halt trigger still lets through
 * @name: channel name
 *
 * Context: any, NMI included.
 * Return: how many records it still lets through before the channel
 * goes off (0: all are stored and the channel is off),
 * -EINVAL for a NULL @name, -ENOENT if there is no such channel,
 * -ENODATA if no trigger is armed.
 */
long dti_ctl_trigger_left(const char *name)
{
	struct dti_channel *ch;
	long ret;

	if (!name)
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	ret = ch ? __dti_trigger_left(ch) : -ENOENT;
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_trigger_left);

/*
 * The version this dti.ko claims: DTI_CTL_VERSION, unless the build
 * says otherwise (KCFLAGS=-DDTI_CTL_VERSION_BUILT=N: the test suite's
 * dti.ko of another version, which the tapset must refuse).
 */
#ifndef DTI_CTL_VERSION_BUILT
#define DTI_CTL_VERSION_BUILT	DTI_CTL_VERSION
#endif

/**
 * dti_ctl_version - version of the by-name control interface
 *
 * Context: any, NMI included.
 * Return: DTI_CTL_VERSION of the <linux/dti.h> dti.ko was built with.
 */
unsigned int dti_ctl_version(void)
{
	return DTI_CTL_VERSION_BUILT;
}
EXPORT_SYMBOL_GPL(dti_ctl_version);

/* DTI_CTL_POOL_FILE: the pool's size, entries free now, creates refused. */
static int dti_ctl_pool_show(struct seq_file *m, void *v)
{
	seq_printf(m, "size: %u\nfree: %u\nrefused_empty: %lu\n", DTI_CTL_POOL_SIZE,
		   READ_ONCE(dti_ctl_pool_n), atomic_long_read(&dti_ctl_pool_empty));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dti_ctl_pool);

/**
 * dti_ctl_init - fill dti_ctl_create()'s pool
 *
 * Context: process context, at module load, after dti_fs_init().
 * Return: 0, or -ENOMEM if not one entry could be allocated.
 */
int __init dti_ctl_init(void)
{
	dti_ctl_refill(NULL);
	if (!dti_ctl_pool_n)
		return -ENOMEM;
	debugfs_create_file(DTI_CTL_POOL_FILE, 0444, dti_fs_root(), NULL, &dti_ctl_pool_fops);
	return 0;
}

/**
 * dti_ctl_exit - free dti_ctl_create()'s pool
 *
 * Context: process context, at module unload, once no channel
 * dti_ctl_create() made is left.
 */
void dti_ctl_exit(void)
{
	WRITE_ONCE(dti_ctl_exiting, true);
	irq_work_sync(&dti_ctl_refill_irq_work);
	cancel_work_sync(&dti_ctl_refill_work);
	dti_ctl_refill(NULL);	/* the trash only */
	while (dti_ctl_pool_n)
		dti_ctl_spare_free(dti_ctl_pool[--dti_ctl_pool_n]);
}
