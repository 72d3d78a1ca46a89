// SPDX-License-Identifier: GPL-2.0
/*
 * DTI channels: registration, levels, and the life of the relay buffers.
 *
 * A channel always has its debugfs directory and control files.  The
 * relay buffers of a channel registered directly exist whenever the level
 * is not DTI_LEVEL_DESTROY: they are created when the level rises from
 * "destroy" and freed when it falls back to it.  A handle's channel (and
 * one made by dti_ctl_create()) gets them on demand, when the first
 * record at a stored level arrives.  Writers never sleep; they see the
 * buffers through an RCU-protected pointer with interrupts disabled, so
 * freeing waits for a grace period.  Storing into the buffers takes no
 * lock.  The one lock a writer takes is a pending store's raw spinlock,
 * for a channel that has no buffers yet (dti_write_pending()), with the
 * channel's write guard set; in NMI only by trylock.
 *
 * A name is taken from the start of its channel's registration to the
 * end of its removal, debugfs directory included: a registration of the
 * same name meanwhile waits, dti_ctl_create() fails with -EEXIST.
 *
 * An ordered channel's store lock (dti_ctl_set_ordered()) is taken like
 * a pending store's: by a writer, its write guard held, spinning only on
 * a CPU that holds no other store lock, in NMI only by trylock.
 *
 * Lock order: dti_register_lock, then a channel's ctl_lock, then its
 * buf_lock, then cpu_hotplug_lock (relay_open()).
 * dti_persist.c's lock nests inside ctl_lock (persistent buffers are
 * created under it) and takes none of the others.
 * dti_list_lock and a pending store's lock are innermost; both are
 * spinlocks taken with interrupts off and the CPU marked (the list's
 * busy flag, the channel's write guard), so that a probe or NMI on the
 * CPU holding one gives up instead of spinning on it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/kernel.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/stringhash.h>
#include <linux/wait.h>

#include <asm/sections.h>

#include "dti_internal.h"

/*
 * All channels.  Registration from process context is serialised by
 * dti_register_lock; the list itself changes under dti_list_lock, which
 * dti_ctl_create() can take in any context but NMI, and is read under
 * RCU.  dti_list_busy is set on a CPU from before it takes dti_list_lock
 * until after it lets go, so a probe that fires in between and calls
 * dti_ctl_create() is refused instead of spinning on its own CPU's lock.
 * dti_list_wq is woken whenever a hidden channel leaves the list.
 */
static LIST_HEAD(dti_channels);

/*
 * The channels by name, beside dti_channels (which keeps their order):
 * dti_ctl_log() and the other by-name calls look a channel up for every
 * record a script injects.  Changed under dti_list_lock, read under RCU.
 */
#define DTI_NAME_HASH_BITS	7
static DEFINE_HASHTABLE(dti_names, DTI_NAME_HASH_BITS);

static u32 dti_name_hash(const char *name)
{
	return full_name_hash(NULL, name, strlen(name));
}

static DEFINE_MUTEX(dti_register_lock);
DEFINE_RAW_SPINLOCK(dti_list_lock);
static DEFINE_PER_CPU(unsigned int, dti_list_busy);
static DECLARE_WAIT_QUEUE_HEAD(dti_list_wq);

/*
 * Work for the channels: creating or freeing buffers on behalf of atomic
 * context, setting up channels made by dti_ctl_create().  Ordered, so a
 * channel's work never runs twice at once and runs in the order queued.
 */
static struct workqueue_struct *dti_wq;

/*
 * Built in, DTI comes up at postcore_initcall; code that runs before it,
 * from start_kernel() on, may log to handles and INIT_DTI_HANDLE() them.
 * The records wait in the handles' static stores, and each handle that
 * logged or asked for its init is put on dti_early_handles, which
 * dti_init() walks once dti_up is set, registering each one.  dti_up is
 * set once and never cleared; dti.ko sets it at its load, before any
 * client can run.
 */
static bool dti_up;
static LLIST_HEAD(dti_early_handles);
static void dti_early_kick_fn(struct irq_work *kick);
static void dti_early_work_fn(struct work_struct *work);
static struct irq_work dti_early_kick = IRQ_WORK_INIT(dti_early_kick_fn);
static DECLARE_WORK(dti_early_work, dti_early_work_fn);

/*
 * Serialises the registration of handles: INIT_DTI_HANDLE(),
 * CLEANUP_DTI_HANDLE() and dti_init()'s registration of the handles
 * used before it.  Taken before dti_register_lock.
 */
static DEFINE_MUTEX(dti_handle_lock);

/**
 * dti_is_up - has DTI's init run?
 *
 * Context: any.
 * Return: true once channels can be registered.
 */
bool dti_is_up(void)
{
	/* Pairs with smp_store_release() in dti_init(): its setup is seen. */
	return smp_load_acquire(&dti_up);
}

/**
 * dti_early_link - put a handle used before DTI's init on dti_init()'s list
 * @p: the pending store of the dti_info a record was kept for
 *
 * Called for every record kept for (or lost by) a dti_info that has no
 * channel.  Before DTI's init, the first one of a handle links it; a
 * handle linked after dti_init() took the list is registered by
 * dti_early_work.  After DTI's init nothing is linked: a handle then
 * waits for its INIT_DTI_HANDLE(), as a module's does.
 *
 * Context: any, NMI included.
 */
void dti_early_link(struct dti_pending *p)
{
	if (READ_ONCE(dti_up) || !test_bit(DTI_PENDING_HANDLE, &p->early) ||
	    test_and_set_bit(DTI_PENDING_LINKED, &p->early))
		return;
	llist_add(&p->early_node, &dti_early_handles);
	/*
	 * llist_add()'s cmpxchg is a full barrier, paired with smp_mb() in
	 * dti_init() between its store of dti_up and its llist_del_all():
	 * either that walk finds this handle, or this sees dti_up set.
	 */
	if (READ_ONCE(dti_up))
		irq_work_queue(&dti_early_kick);
}

/**
 * dti_queue_work - have a channel's buffers brought in line with its level
 * @ch: channel
 *
 * Raises the channel's irq_work, which queues the work item: queue_work()
 * wakes a worker, and a record can come from a scheduler path that holds
 * the runqueue lock the wakeup needs, or from NMI.
 *
 * Context: any, NMI included.
 */
void dti_queue_work(struct dti_channel *ch)
{
	irq_work_queue(&ch->kick);
}

static void dti_kick(struct irq_work *kick)
{
	struct dti_channel *ch = container_of(kick, struct dti_channel, kick);

	queue_work(dti_wq, &ch->create_work);
}

/* Stop the channel's work for good; nothing may queue it any more. */
static void dti_cancel_work(struct dti_channel *ch)
{
	irq_work_sync(&ch->kick);
	cancel_work_sync(&ch->create_work);
}

/*
 * Take dti_list_lock from process context, which no holder of the lock
 * can have been interrupted by.
 */
static void dti_list_lock_process(unsigned long *flags)
	__acquires(&dti_list_lock)
{
	might_sleep();
	local_irq_save(*flags);
	this_cpu_write(dti_list_busy, 1);
	barrier();
	raw_spin_lock(&dti_list_lock);
}

/**
 * __dti_list_try_lock - take dti_list_lock from any context but NMI
 * @flags: where to save the interrupt state
 *
 * Call it as dti_list_try_lock(), which tells sparse that the lock is
 * held when it returns true.
 *
 * Context: any but NMI.
 * Return: false, with nothing taken, if this CPU holds the lock already
 * (the caller is a probe or an interrupt that fired inside it).
 */
bool __dti_list_try_lock(unsigned long *flags)
{
	local_irq_save(*flags);
	if (this_cpu_read(dti_list_busy)) {
		local_irq_restore(*flags);
		return false;
	}
	this_cpu_write(dti_list_busy, 1);
	barrier();
	raw_spin_lock(&dti_list_lock);
	__release(&dti_list_lock);	/* counted by dti_list_try_lock() */
	return true;
}

/**
 * dti_list_unlock - let go of dti_list_lock
 * @flags: as saved when it was taken
 */
void dti_list_unlock(unsigned long flags)
	__releases(&dti_list_lock)
{
	raw_spin_unlock(&dti_list_lock);
	barrier();
	this_cpu_write(dti_list_busy, 0);
	local_irq_restore(flags);
}

/* The list of channels, for readers under RCU. */
struct list_head *dti_channel_list(void)
{
	return &dti_channels;
}

bool dti_level_valid(int level)
{
	return level >= DTI_LEVEL_MIN && level <= DTI_LEVEL_MAX;
}

/*
 * A name becomes a debugfs directory and is matched in memory dumps:
 * letters, digits and "_-.:" only, not starting with '.', so no '/',
 * no "." or "..", nothing a shell needs quoted.
 */
int dti_check_name(const char *name)
{
	size_t len, i;

	if (!name)
		return -EINVAL;
	len = strnlen(name, DTI_NAME_MAX + 1);
	if (len == 0 || len > DTI_NAME_MAX || name[0] == '.')
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (!isalnum(name[i]) && !strchr("_-.:", name[i]))
			return -EINVAL;
	}
	return 0;
}

int dti_check_geometry(size_t subbuf_size, size_t n_subbufs)
{
	if (subbuf_size < DTI_SUBBUF_SIZE_MIN ||
	    subbuf_size > DTI_SUBBUF_SIZE_MAX ||
	    subbuf_size % DTI_RECORD_ALIGN)
		return -EINVAL;
	if (n_subbufs < DTI_N_SUBBUFS_MIN || n_subbufs > DTI_N_SUBBUFS_MAX)
		return -EINVAL;
	if (subbuf_size * n_subbufs > DTI_BUF_SIZE_MAX)
		return -EINVAL;
	return 0;
}

/**
 * dti_find - look a channel up by name, hidden ones included
 * @name: channel name
 *
 * Context: under rcu_read_lock() or dti_list_lock.
 * Return: the channel holding @name, or NULL.
 */
struct dti_channel *dti_find(const char *name)
{
	struct dti_channel *ch;

	hash_for_each_possible_rcu(dti_names, ch, name_node, dti_name_hash(name),
				   lockdep_is_held(&dti_list_lock)) {
		if (!strcmp(ch->name, name))
			return ch;
	}
	return NULL;
}

/**
 * dti_find_visible - look a channel up by name for control by name
 * @name: channel name
 *
 * Context: under rcu_read_lock() or dti_list_lock.
 * Return: the channel, or NULL if there is none or it is being
 * registered or removed.
 */
struct dti_channel *dti_find_visible(const char *name)
{
	struct dti_channel *ch = dti_find(name);

	return ch && !READ_ONCE(ch->hidden) ? ch : NULL;
}

/**
 * dti_add_channel - put a channel on the list, taking its name
 * @ch: channel; visible by name at once unless @ch->hidden is set
 *
 * Context: any but NMI.
 * Return: 0, -EEXIST if the name is taken, -EDEADLK if called while
 * this CPU holds the list lock (from a probe inside DTI).
 */
int dti_add_channel(struct dti_channel *ch)
{
	unsigned long flags;
	int ret = 0;

	if (!dti_list_try_lock(&flags))
		return -EDEADLK;
	if (dti_find(ch->name)) {
		ret = -EEXIST;
	} else {
		list_add_tail_rcu(&ch->list, &dti_channels);
		hash_add_rcu(dti_names, &ch->name_node, dti_name_hash(ch->name));
	}
	dti_list_unlock(flags);
	return ret;
}

static void dti_set_hidden(struct dti_channel *ch, bool hidden)
{
	unsigned long flags;

	dti_list_lock_process(&flags);
	WRITE_ONCE(ch->hidden, hidden);
	dti_list_unlock(flags);
}

/* Take @ch off the list, freeing its name; wait before freeing @ch. */
static void dti_del_channel(struct dti_channel *ch)
{
	unsigned long flags;

	dti_list_lock_process(&flags);
	list_del_rcu(&ch->list);
	hash_del_rcu(&ch->name_node);
	dti_list_unlock(flags);
	wake_up_all(&dti_list_wq);
}

/* Is @name held by a channel being removed (or registered)? */
static bool dti_name_hidden(const char *name)
{
	struct dti_channel *ch;
	bool hidden;

	rcu_read_lock();
	ch = dti_find(name);
	hidden = ch && READ_ONCE(ch->hidden);
	rcu_read_unlock();
	return hidden;
}

/**
 * dti_take_owned - claim the next channel made by dti_ctl_create()
 * @owner: owner cookie given to dti_ctl_create(), or NULL for any owner
 *
 * Context: process context.
 * Return: a channel created by dti_ctl_create(), hidden so no one else
 * finds or unregisters it (pass it to __dti_unregister()), or NULL if
 * there is none left.
 */
struct dti_channel *dti_take_owned(const void *owner)
{
	struct dti_channel *ch, *found = NULL;
	unsigned long flags;

	dti_list_lock_process(&flags);
	list_for_each_entry(ch, &dti_channels, list) {
		if (ch->owned && !ch->hidden &&
		    (!owner || ch->owner == owner)) {
			WRITE_ONCE(ch->hidden, true);
			found = ch;
			break;
		}
	}
	dti_list_unlock(flags);
	return found;
}

/* Pending records waiting for buffers? */
static bool dti_has_pending(struct dti_info *info)
{
	return info->pending && READ_ONCE(info->pending->used);
}

static void dti_close_buffers(struct dti_channel *ch, struct rchan *rchan)
{
	if (ch->flags & DTI_F_PERSIST)
		dti_persist_close(rchan);
	else
		relay_close(rchan);
}

/*
 * After relay_open() failed: when relay's own allocation of a CPU's file
 * name fails after its buffer was made, relay_open_buf() forgets CPU 0's
 * buffer as dti_create_buf_file() explains, and that buffer's file stays
 * (its pages are relay's to leak).  A file left would make every later
 * relay_open() of the channel fail: remove it.  CPU hotplug is held off.
 */
static void dti_remove_orphans(struct dti_channel *ch)
{
	char name[sizeof(DTI_TRACE_FILE_BASE) + 10];
	unsigned int cpu;

	for_each_online_cpu(cpu) {
		snprintf(name, sizeof(name), DTI_TRACE_FILE_BASE "%u", cpu);
		debugfs_lookup_and_remove(name, ch->dir);
	}
}

static int dti_create_buffers(struct dti_channel *ch)
{
	struct rchan *rchan;
	int ret;

	lockdep_assert_held(&ch->ctl_lock);
	if (rcu_access_pointer(ch->rchan))
		return 0;
	/*
	 * relay_open() gives a buffer to each online CPU and then puts the
	 * channel where relay's CPU-hotplug callback gives one to each CPU
	 * that comes up later.  A CPU coming up in between would get none;
	 * holding hotplug off closes that gap.
	 */
	dti_dump_new_buffers(ch);
	if (ch->flags & DTI_F_PERSIST) {
		rchan = dti_persist_open(ch);
	} else {
		cpus_read_lock();
		rchan = relay_open(DTI_TRACE_FILE_BASE, ch->dir, ch->subbuf_size,
				   ch->n_subbufs, &dti_relay_callbacks, ch);
		if (!rchan)
			dti_remove_orphans(ch);
		cpus_read_unlock();
		if (!rchan)
			rchan = ERR_PTR(-ENOMEM);
	}
	if (IS_ERR(rchan)) {
		dti_dump_buffers_gone(ch);
		return PTR_ERR(rchan);
	}
	/*
	 * The views are made before the buffers are published, under
	 * buf_lock, which their open takes: a reader who finds a view finds
	 * the buffers, and a failure to make them leaves the records still
	 * pending, not replayed into buffers about to be freed.  Creating a
	 * file takes the directory's inode lock inside buf_lock, as
	 * reset_consumed takes a trace file's; no one holding an inode lock
	 * of the channel's directory waits for buf_lock.
	 */
	mutex_lock(&ch->buf_lock);
	ret = dti_fs_create_views(ch);
	if (!ret) {
		ret = dti_publish_buffers(ch, rchan);
		if (ret)
			goto err_unlock_views;
	}
	mutex_unlock(&ch->buf_lock);
	if (ret)
		goto err_close;
	return 0;

err_unlock_views:
	mutex_unlock(&ch->buf_lock);
	/* Without buf_lock: removal waits for opens, which take it. */
	dti_fs_remove_views(ch);
err_close:
	dti_dump_buffers_gone(ch);
	dti_close_buffers(ch, rchan);
	return ret;
}

/*
 * The records a CPU's buffer held are gone with it: count them, so that
 * written - overwritten - discarded stays what a reader can see.  No
 * writer can reach the buffers any more (a grace period has passed).
 */
static void dti_discard_records(struct dti_channel *ch)
{
	struct dti_cpu_stats *s;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(ch->info->stats, cpu);
		s->discarded = s->written - s->overwritten;
	}
}

static void dti_destroy_buffers(struct dti_channel *ch)
{
	struct rchan *rchan;

	lockdep_assert_held(&ch->ctl_lock);
	if (!rcu_access_pointer(ch->rchan))
		return;
	mutex_lock(&ch->buf_lock);
	rchan = rcu_dereference_protected(ch->rchan,
					  lockdep_is_held(&ch->buf_lock));
	RCU_INIT_POINTER(ch->rchan, NULL);
	mutex_unlock(&ch->buf_lock);
	/* Waits for opens of the views, which take buf_lock. */
	dti_fs_remove_views(ch);
	/* Writers run with interrupts off: this waits for all of them. */
	synchronize_rcu();
	dti_discard_records(ch);
	/* Before relay_close(), which may free the pages at once. */
	dti_dump_buffers_gone(ch);
	/* Files still open keep their buffer (a copy) until they are closed. */
	dti_close_buffers(ch, rchan);
}

/**
 * dti_create_work - create or destroy buffers on behalf of atomic context
 * @work: the channel's create_work
 *
 * Queued by the first record stored while an on-demand channel has no
 * buffers (that record and those after it wait in the pending store), by
 * level changes made in atomic context, and by dti_ctl_create(), whose
 * channel gets its debugfs directory here.
 */
void dti_create_work(struct work_struct *work)
{
	struct dti_channel *ch = container_of(work, struct dti_channel,
					      create_work);
	int level, ret = 0;

	mutex_lock(&ch->ctl_lock);
	if (ch->dying)
		goto out_unlock;
	if (!ch->dir) {
		/* Created by dti_ctl_create(), maybe in atomic context. */
		ch->dir = debugfs_create_dir(ch->name, dti_fs_root());
		if (IS_ERR(ch->dir)) {
			ret = PTR_ERR(ch->dir);
			ch->dir = NULL;
			goto out_unlock;
		}
		ret = dti_fs_create_control(ch);
		if (ret) {
			/* The next record's work tries again. */
			debugfs_remove_recursive(ch->dir);
			ch->dir = NULL;
			goto out_unlock;
		}
	}
	/* Bring the buffers in line with a level set in atomic context. */
	level = READ_ONCE(ch->info->level);
	if (level == DTI_LEVEL_DESTROY)
		dti_destroy_buffers(ch);
	else if (level >= 0 && (!(ch->flags & DTI_F_ON_DEMAND) ||
				dti_has_pending(ch->info)))
		ret = dti_create_buffers(ch);
out_unlock:
	mutex_unlock(&ch->ctl_lock);
	if (ret)
		pr_warn("%s: cannot create %s: %d\n", ch->name,
			ch->dir ? "buffers" : "debugfs directory", ret);
}

/**
 * dti_resize - give a channel's buffers another size
 * @ch: channel, not a persistent one
 * @size: bytes of buffer per CPU, split into the channel's number of
 *	  sub-buffers (each rounded down to a multiple of DTI_RECORD_ALIGN)
 *
 * The channel's buffers are replaced by buffers of the new size, made
 * at once if it had buffers, else when it gets some.  The records the
 * old buffers held are discarded and counted so, as a destroy counts
 * them (written - overwritten - discarded stays what a reader can see);
 * a record logged while the channel has none goes where records go
 * then: into a handle's pending store, or lost as unavailable.  The
 * size changes while no writer can reach any buffer (after the grace
 * period dti_destroy_buffers() waits for), and a writer takes its
 * payload limit from the buffers it found (dti_write()), never from a
 * size that may be newer than they are.  A trace file held open across
 * it fails its reads with -EIO, as after a destroy.  The formats of
 * the channel's event types must fit the new sub-buffers' share.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL for a size out of range (dti_check_geometry());
 * -EOPNOTSUPP for a persistent channel, whose rings are laid out in
 * the region; -ENOSPC if its event formats would not fit; -ENODEV if it
 * is being unregistered; -ENOMEM if the new buffers could not be made:
 * the size is then the old one again, with buffers of it if those could
 * be made again (else they are made when the level is next set).
 */
int dti_resize(struct dti_channel *ch, size_t size)
{
	size_t subbuf = round_down(size / ch->n_subbufs, DTI_RECORD_ALIGN);
	size_t old;
	bool had;
	int ret;

	ret = dti_check_geometry(subbuf, ch->n_subbufs);
	if (ret)
		return ret;
	if (ch->flags & DTI_F_PERSIST)
		return -EOPNOTSUPP;
	ret = dti_event_resize_begin(ch, subbuf);
	if (ret)
		return ret;
	mutex_lock(&ch->ctl_lock);
	old = ch->subbuf_size;
	if (ch->dying)
		ret = -ENODEV;
	if (ret || subbuf == old)
		goto out_unlock;
	had = rcu_access_pointer(ch->rchan);
	dti_destroy_buffers(ch);
	/* No writer holds the old buffers: dti_destroy_buffers() waited. */
	WRITE_ONCE(ch->subbuf_size, subbuf);
	if (!had)
		goto out_unlock;
	ret = dti_create_buffers(ch);
	if (ret) {
		WRITE_ONCE(ch->subbuf_size, old);
		if (dti_create_buffers(ch))
			pr_warn("%s: no buffers after a failed resize\n", ch->name);
	}
out_unlock:
	mutex_unlock(&ch->ctl_lock);
	dti_event_resize_end();
	return ret;
}

/**
 * dti_probe_level - probe point: a channel's level changed
 * @ch: channel
 * @old_level: level before
 * @new_level: level after
 * @source: who changed it
 *
 * Does nothing; tapset/dti.stp probes it.  Called with no DTI lock held,
 * but from a writer's context when a halt trigger fires (inside
 * dti_store(), its write guard held).
 * Context: process context for dti_set_level() and the level file; any,
 * NMI included, for a change by name (dti_ctl_set_level()) and for a halt
 * trigger's firing (dti_halt_fire()).
 */
DTI_PROBE_POINT void dti_probe_level(struct dti_channel *ch, int old_level,
				     int new_level,
				     enum dti_level_source source)
{
	barrier();
}

/**
 * dti_probe_register - probe point: a registration ended
 * @name: the name asked for (not validated if @err is -EINVAL)
 * @ch: the channel, once it can be found by name; NULL if @err
 * @err: 0, or why the registration failed
 *
 * Does nothing; tapset/dti.stp probes it (dti.register and
 * dti.register_failed).  Called with no DTI lock held.
 * Context: process context; any but NMI for dti_ctl_create().
 */
DTI_PROBE_POINT void dti_probe_register(const char *name,
					struct dti_channel *ch, int err)
{
	barrier();
}

/**
 * dti_probe_unregister - probe point: a channel is being removed
 * @ch: channel, hidden already (not found by name) but otherwise whole
 *
 * Does nothing; tapset/dti.stp probes it (dti.unregister).
 * Context: process context.
 */
DTI_PROBE_POINT void dti_probe_unregister(struct dti_channel *ch)
{
	barrier();
}

/**
 * dti_level_apply - store the level a channel's halt word says it has
 * @ch: channel
 *
 * Level changes and a halt trigger's firing each set the level the
 * channel is to have in @ch->halt_ctl with one atomic operation, which
 * puts them in one order, and then call this to store that level where
 * writers read it (@ch->info->level).  Two of them that store at once
 * may store in the other order; the one that stores the older level
 * sees the newer in @ch->halt_ctl afterwards and stores it again, so the
 * store that comes last is always of the level set last.
 *
 * Context: any, NMI included.
 */
void dti_level_apply(struct dti_channel *ch)
{
	int ctl = atomic_read(&ch->halt_ctl);
	int level;

	do {
		level = dti_halt_level(ctl);
		/*
		 * A full barrier between the store and the read of halt_ctl
		 * after it.  Pairs with the fully ordered atomic_try_cmpxchg()
		 * that set a newer level in halt_ctl (dti_level_switch(),
		 * dti_halt_fire()) before its own store here: if this store
		 * comes after that one, this read sees the newer level.
		 */
		smp_store_mb(ch->info->level, level);
		ctl = atomic_read(&ch->halt_ctl);
	} while (dti_halt_level(ctl) != level);
}

/**
 * dti_level_switch - set a channel's level, ending an armed halt trigger
 * @ch: channel
 * @level: new level, DTI_LEVEL_MIN..DTI_LEVEL_MAX
 *
 * The level changes, and an armed halt trigger (dti_ctl_halt_after())
 * ends, in one atomic operation on @ch->halt_ctl: a trigger that fires
 * after it finds itself ended and leaves the level alone, and one armed
 * after it is not ended.  An arming under way (DTI_HALT_ARMING) is one
 * made after it.  Buffers are not touched.  A stopped channel
 * (dti_stop.c) is started again: it stores as its new level says.
 *
 * Context: any, NMI included.
 * Return: the level before.
 */
int dti_level_switch(struct dti_channel *ch, int level)
{
	int ctl = atomic_read(&ch->halt_ctl);
	int state;

	WRITE_ONCE(ch->stop_reason, DTI_STOP_NONE);

	do {
		state = dti_halt_state(ctl);
		if (state == DTI_HALT_ARMED)
			state = DTI_HALT_OFF;
	} while (!atomic_try_cmpxchg(&ch->halt_ctl, &ctl,
				     dti_halt_ctl(state, level,
						  dti_halt_ctl_gen(ctl))));
	dti_level_apply(ch);
	return dti_halt_level(ctl);
}

/**
 * __dti_set_level - change a channel's level, with its lock held
 * @ch: channel
 * @level: new level, DTI_LEVEL_MIN..DTI_LEVEL_MAX
 * @old: where to store the level before, for dti_probe_level(), which
 *	 the caller calls once it has dropped the lock
 *
 * Return: 0, -EINVAL for a level out of range, -ENODEV if the channel is
 * being unregistered, -ENOMEM if buffers were needed and could not be
 * allocated (the level is then unchanged).
 */
int __dti_set_level(struct dti_channel *ch, int level, int *old)
{
	int ret;

	lockdep_assert_held(&ch->ctl_lock);
	*old = ch->info->level;
	if (!dti_level_valid(level))
		return -EINVAL;
	if (ch->dying)
		return -ENODEV;
	/* A level set by anyone ends a halt trigger (dti_ctl_halt_after()). */
	if (level == DTI_LEVEL_DESTROY) {
		*old = dti_level_switch(ch, DTI_LEVEL_DESTROY);
		dti_destroy_buffers(ch);
		/*
		 * dti_ctl_set_level() does not take ctl_lock: if it raised the
		 * level meanwhile, the buffers it expected are gone.
		 */
		if (READ_ONCE(ch->info->level) >= 0 && !ch->dying)
			dti_queue_work(ch);
	} else {
		if (level >= 0 && !(ch->flags & DTI_F_ON_DEMAND)) {
			ret = dti_create_buffers(ch);
			if (ret)
				return ret;
		}
		*old = dti_level_switch(ch, level);
	}
	return 0;
}

/**
 * dti_parse_level - parse a level as written to a "level" file
 * @buf: NUL-terminated text: a number, "off" or "destroy", with at most
 *	 one trailing newline
 * @level: where to store the level
 *
 * Return: 0, or -EINVAL if @buf is not a valid level.
 */
int dti_parse_level(const char *buf, int *level)
{
	int val;

	if (sysfs_streq(buf, "off")) {
		*level = DTI_LEVEL_OFF;
		return 0;
	}
	if (sysfs_streq(buf, "destroy")) {
		*level = DTI_LEVEL_DESTROY;
		return 0;
	}
	if (kstrtoint(buf, 10, &val) || !dti_level_valid(val))
		return -EINVAL;
	*level = val;
	return 0;
}

/**
 * dti_set_level - set the level of a channel
 * @trace: channel
 * @level: DTI_LEVEL_DESTROY, DTI_LEVEL_OFF or 0..DTI_LEVEL_MAX
 *
 * Records are stored while their level is at most the channel's level.
 * DTI_LEVEL_OFF stops storing and keeps what was stored.
 * DTI_LEVEL_DESTROY also frees the buffers, their files and the merged
 * views; the control files stay.  Any level of 0 or more after that
 * allocates fresh, empty buffers; DTI_LEVEL_OFF does not.
 *
 * On a handle's channel the buffers are not allocated here but when the
 * next record at a stored level arrives.  On a handle that is not
 * initialised yet only the level is set.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for a bad level or a NULL or error-pointer @trace,
 * -ENOMEM if new buffers could not be allocated (the level is then
 * unchanged).
 */
int dti_set_level(struct dti_info *trace, int level)
{
	struct dti_channel *ch;

	if (IS_ERR_OR_NULL(trace))
		return -EINVAL;
	ch = rcu_dereference_protected(trace->chan, true);
	if (!ch) {
		/* A handle not initialised yet: only the level changes. */
		if (!dti_level_valid(level))
			return -EINVAL;
		WRITE_ONCE(trace->level, level);
		return 0;
	}
	return dti_change_level(ch, level, DTI_SRC_KERNEL);
}
EXPORT_SYMBOL_GPL(dti_set_level);

/**
 * dti_change_level - dti_set_level() on behalf of @source
 * @ch: channel
 * @level: new level
 * @source: who asks
 *
 * Context: process context; may sleep.
 * Return: as __dti_set_level().
 */
int dti_change_level(struct dti_channel *ch, int level,
		     enum dti_level_source source)
{
	int old, ret;

	might_sleep();
	mutex_lock(&ch->ctl_lock);
	ret = __dti_set_level(ch, level, &old);
	mutex_unlock(&ch->ctl_lock);
	if (!ret)
		dti_probe_level(ch, old, level, source);
	return ret;
}

/**
 * dti_alloc_channel_mem - allocate a channel's memory, all zero
 * @own_info: whether the channel has a dti_info of its own (registered
 *	      directly), whose statistics are allocated too
 * @gfp: allocation flags
 *
 * Return: the memory for dti_init_channel(), or NULL.
 */
struct dti_channel *dti_alloc_channel_mem(bool own_info, gfp_t gfp)
{
	struct dti_channel *ch;

	ch = kzalloc_obj(*ch, gfp);
	if (!ch)
		return NULL;
	ch->trigger = alloc_percpu_gfp(struct dti_trigger_cpu, gfp);
	if (!ch->trigger)
		goto err_free;
	ch->read_pos = alloc_percpu_gfp(struct dti_read_pos, gfp);
	if (!ch->read_pos)
		goto err_free_trigger;
	if (own_info) {
		ch->own_info.stats = alloc_percpu_gfp(struct dti_cpu_stats, gfp);
		if (!ch->own_info.stats)
			goto err_free_read_pos;
	}
	return ch;

err_free_read_pos:
	free_percpu(ch->read_pos);
err_free_trigger:
	free_percpu(ch->trigger);
err_free:
	kfree(ch);
	return NULL;
}

/**
 * dti_init_channel - initialise a channel in memory from dti_alloc_channel_mem()
 * @ch: the channel's memory
 * @name: valid channel name
 * @subbuf_size: valid sub-buffer size
 * @n_subbufs: valid number of sub-buffers
 * @flags: DTI_F_* flags
 * @info: the dti_info the channel serves, or NULL for its own
 *
 * Context: any but NMI; it neither sleeps nor allocates.
 */
void dti_init_channel(struct dti_channel *ch, const char *name, size_t subbuf_size,
		      size_t n_subbufs, unsigned int flags, struct dti_info *info)
{
	if (info) {
		ch->info = info;
	} else {
		ch->info = &ch->own_info;
		ch->own_info.level = DTI_LEVEL_DESTROY;
	}
	/* No trigger armed, at the level the dti_info has so far. */
	atomic_set(&ch->halt_ctl, dti_halt_ctl(DTI_HALT_OFF,
					       READ_ONCE(ch->info->level), 0));
	ch->subbuf_size = subbuf_size;
	ch->n_subbufs = n_subbufs;
	ch->flags = flags;
	ch->panic_records = dti_panic_default_records();
	ch->mark_level = DTI_LEVEL_DEFAULT;
	ch->stop_on = dti_stop_on_default() | (flags & DTI_F_STOP_ON_ALL);
	dti_dump_init(ch, name);
	ch->name = ch->dump.marker + DTI_MARKER_PREFIX_LEN;
	mutex_init(&ch->ctl_lock);
	mutex_init(&ch->buf_lock);
	raw_spin_lock_init(&ch->order_lock);
	INIT_WORK(&ch->create_work, dti_create_work);
	init_irq_work(&ch->kick, dti_kick);
	INIT_LIST_HEAD(&ch->list);
	INIT_HLIST_NODE(&ch->name_node);
}

/**
 * dti_alloc_channel - allocate and initialise a channel
 * @name: valid channel name
 * @subbuf_size: valid sub-buffer size
 * @n_subbufs: valid number of sub-buffers
 * @flags: DTI_F_* flags
 * @info: the dti_info the channel serves, or NULL for one of its own
 * @gfp: allocation flags
 *
 * Return: the channel, or NULL without memory.
 */
struct dti_channel *dti_alloc_channel(const char *name, size_t subbuf_size,
				      size_t n_subbufs, unsigned int flags,
				      struct dti_info *info, gfp_t gfp)
{
	struct dti_channel *ch = dti_alloc_channel_mem(!info, gfp);

	if (ch)
		dti_init_channel(ch, name, subbuf_size, n_subbufs, flags, info);
	return ch;
}

/**
 * dti_free_channel - free a channel no one can reach any more
 * @ch: channel from dti_alloc_channel()
 *
 * Context: any for a channel that never had event types (the one
 * dti_ctl_create() could not add); process context otherwise.
 */
void dti_free_channel(struct dti_channel *ch)
{
	dti_context_release(ch);
	dti_event_release(ch);
	dti_context_free(ch);
	dti_dump_wipe(ch);
	free_percpu(ch->own_info.stats);
	free_percpu(ch->read_pos);
	free_percpu(ch->trigger);
	if (ch->owned)
		dti_ctl_free_owned(ch);
	kfree(ch);
}

/*
 * Register a channel for @info (a handle's) or for a new dti_info of its
 * own (@info NULL).  The level stays whatever @info holds until it is
 * set to @init_level, or to the level the level= parameter gives @name.
 */
static struct dti_info *dti_register_info(const char *name,
					  size_t subbuf_size,
					  size_t n_subbufs, int init_level,
					  unsigned int flags,
					  struct dti_info *info)
{
	struct dti_channel *ch;
	bool create;
	int old, ret;

	ret = dti_check_name(name);
	if (!ret)
		ret = dti_check_geometry(subbuf_size, n_subbufs);
	if (!ret && !dti_level_valid(init_level))
		ret = -EINVAL;
	/* Built-in code before DTI's init: nothing can be allocated yet. */
	if (!ret && !dti_is_up())
		ret = -EPROBE_DEFER;
	if (!ret)
		init_level = dti_boot_level(name, init_level);
	/* A handle's buffers come later: the region must be there now. */
	if (!ret && (flags & DTI_F_PERSIST) && !dti_persist_ready())
		ret = -ENODEV;
	if (ret)
		goto err_report;
	ch = dti_alloc_channel(name, subbuf_size, n_subbufs, flags, info,
			       GFP_KERNEL);
	if (!ch) {
		ret = -ENOMEM;
		goto err_report;
	}
	/* Its name is taken, but it is not to be controlled by name yet. */
	ch->hidden = true;

	mutex_lock(&dti_register_lock);
	/* A channel of this name being removed still has its directory. */
	wait_event(dti_list_wq, !dti_name_hidden(name));
	ret = dti_add_channel(ch);
	if (ret)
		goto err_unlock;
	ch->dir = debugfs_create_dir(name, dti_fs_root());
	if (IS_ERR(ch->dir)) {
		ret = PTR_ERR(ch->dir);
		ch->dir = NULL;
		goto err_unlist;
	}
	ret = dti_fs_create_control(ch);
	if (ret)
		goto err_unpublish;	/* a level write may have come meanwhile */

	/*
	 * From here on, logging calls on a handle reach the channel; until
	 * its buffers exist they keep records in the pending store.
	 */
	rcu_assign_pointer(ch->info->chan, ch);

	create = init_level != DTI_LEVEL_DESTROY;
	if (flags & DTI_F_ON_DEMAND)
		create = init_level >= 0 && dti_has_pending(ch->info);
	mutex_lock(&ch->ctl_lock);
	ret = create ? dti_create_buffers(ch) : 0;
	if (!ret)
		ret = __dti_set_level(ch, init_level, &old);
	mutex_unlock(&ch->ctl_lock);
	if (ret)
		goto err_unpublish;

	dti_set_hidden(ch, false);
	mutex_unlock(&dti_register_lock);
	dti_probe_level(ch, old, init_level, DTI_SRC_REGISTER);
	dti_probe_register(name, ch, 0);
	return ch->info;

err_unpublish:
	RCU_INIT_POINTER(ch->info->chan, NULL);
	synchronize_rcu();
	mutex_lock(&ch->ctl_lock);
	ch->dying = true;
	dti_destroy_buffers(ch);
	mutex_unlock(&ch->ctl_lock);
	debugfs_remove_recursive(ch->dir);
	dti_cancel_work(ch);
err_unlist:
	dti_del_channel(ch);
	/* dti_find() under RCU may still be looking at it. */
	synchronize_rcu();
err_unlock:
	mutex_unlock(&dti_register_lock);
	dti_free_channel(ch);
err_report:
	dti_probe_register(name, NULL, ret);
	return ERR_PTR(ret);
}

/**
 * dti_register_flags - create a DTI channel
 * @name: channel name: 1..DTI_NAME_MAX characters out of letters, digits
 *	  and "_-.:", not starting with '.'
 * @subbuf_size: bytes per relay sub-buffer, a multiple of
 *	  DTI_RECORD_ALIGN in DTI_SUBBUF_SIZE_MIN..DTI_SUBBUF_SIZE_MAX
 * @n_subbufs: sub-buffers per CPU, DTI_N_SUBBUFS_MIN..DTI_N_SUBBUFS_MAX;
 *	  @subbuf_size * @n_subbufs may not exceed DTI_BUF_SIZE_MAX
 * @init_level: initial level, DTI_LEVEL_MIN..DTI_LEVEL_MAX; buffers are
 *	  allocated now unless it is DTI_LEVEL_DESTROY
 * @flags: DTI_F_NO_OVERWRITE to keep the oldest records and drop new
 *	  ones when a CPU's buffer is full (by default the newest survive);
 *	  DTI_F_PERSIST to take the buffers from dti.ko's persistent region
 *	  (the persist= parameter), where the next boot finds the records
 *	  after a reset that keeps RAM; DTI_F_STOP_ON_OOPS, _WARN and
 *	  _PANIC to stop storing at an oops, a WARN() or a panic, besides
 *	  what the stop_on parameter gives every channel
 *
 * Creates /sys/kernel/debug/dti/<name>/ with its control files and, if
 * buffers are allocated, the per-CPU trace files and the merged views.
 * On failure nothing is left behind.
 *
 * Context: process context; may sleep.
 * Return: the channel, or ERR_PTR(-EINVAL) for a bad argument,
 * ERR_PTR(-EEXIST) if the name is taken, ERR_PTR(-ENOMEM); with
 * DTI_F_PERSIST, ERR_PTR(-ENODEV) if dti.ko has no persistent region and
 * ERR_PTR(-ENOSPC) if it has no room for the buffers (why is logged);
 * ERR_PTR(-EPROBE_DEFER) if called by built-in code before DTI's init.
 */
struct dti_info *dti_register_flags(const char *name, size_t subbuf_size,
				    size_t n_subbufs, int init_level,
				    unsigned int flags)
{
	might_sleep();
	if (flags & ~(DTI_F_NO_OVERWRITE | DTI_F_PERSIST | DTI_F_STOP_ON_ALL)) {
		dti_probe_register(name, NULL, -EINVAL);
		return ERR_PTR(-EINVAL);
	}
	return dti_register_info(name, subbuf_size, n_subbufs, init_level,
				 flags, NULL);
}
EXPORT_SYMBOL_GPL(dti_register_flags);

/* Sub-buffer size when @size bytes per CPU are split the default way. */
size_t dti_default_subbuf_size(size_t size)
{
	return round_down(size / DTI_DEFAULT_N_SUBBUFS, DTI_RECORD_ALIGN);
}

/**
 * __dti_register - create a channel with explicit sub-buffer geometry
 * @name: channel name, see dti_register_flags()
 * @subbuf_size: bytes per sub-buffer
 * @n_subbufs: sub-buffers per CPU
 * @init_level: initial level
 *
 * The channel runs in flight-recorder mode: when a CPU's buffer is full
 * the oldest sub-buffer is overwritten.
 *
 * Context: process context; may sleep.
 * Return: as dti_register_flags().
 */
struct dti_info *__dti_register(const char *name, size_t subbuf_size,
				size_t n_subbufs, int init_level)
{
	return dti_register_flags(name, subbuf_size, n_subbufs, init_level, 0);
}
EXPORT_SYMBOL_GPL(__dti_register);

/**
 * dti_register - create a flight-recorder channel
 * @name: channel name, see dti_register_flags()
 * @size: bytes of buffer per CPU, split into DTI_DEFAULT_N_SUBBUFS
 *	  sub-buffers (rounded down to a multiple of DTI_RECORD_ALIGN)
 * @init_level: initial level
 *
 * Context: process context; may sleep.
 * Return: as dti_register_flags().
 */
struct dti_info *dti_register(const char *name, size_t size, int init_level)
{
	return __dti_register(name, dti_default_subbuf_size(size),
			      DTI_DEFAULT_N_SUBBUFS, init_level);
}
EXPORT_SYMBOL_GPL(dti_register);

/**
 * dti_unregister - destroy a channel
 * @trace: channel returned by a dti_register*() call, or NULL or an
 *	   error pointer (then nothing is done)
 *
 * Stops logging, frees the buffers and removes the channel's debugfs
 * directory.  Readers that hold a trace file open keep its buffer until
 * they close it; their reads fail with -EIO.  No logging call on @trace
 * may run or start once this is called.
 *
 * Context: process context; may sleep.
 */
void dti_unregister(struct dti_info *trace)
{
	struct dti_channel *ch;

	if (IS_ERR_OR_NULL(trace))
		return;
	ch = rcu_dereference_protected(trace->chan, true);
	if (!ch)
		return;

	dti_set_hidden(ch, true);
	__dti_unregister(ch);
}
EXPORT_SYMBOL_GPL(dti_unregister);

/**
 * __dti_unregister - destroy a hidden channel
 * @ch: channel, hidden from control by name (dti_set_hidden(),
 *	dti_take_owned()); its name stays taken until it is gone
 *
 * Context: process context; may sleep.
 */
void __dti_unregister(struct dti_channel *ch)
{
	struct dti_info *trace = ch->info;
	int old;

	dti_probe_unregister(ch);
	/* Logging calls reach the channel only with interrupts off. */
	old = dti_level_switch(ch, DTI_LEVEL_DESTROY);
	RCU_INIT_POINTER(trace->chan, NULL);
	/* No writer, and no control by name, uses the channel after this. */
	synchronize_rcu();

	mutex_lock(&ch->ctl_lock);
	/* From now on level changes through the files fail. */
	ch->dying = true;
	dti_level_switch(ch, DTI_LEVEL_DESTROY);
	dti_destroy_buffers(ch);
	mutex_unlock(&ch->ctl_lock);
	dti_probe_level(ch, old, DTI_LEVEL_DESTROY, DTI_SRC_KERNEL);
	/* Waits for control-file operations still running. */
	debugfs_remove_recursive(ch->dir);
	/* Nothing is left that could queue the channel's work. */
	dti_cancel_work(ch);
	dti_del_channel(ch);
	/* dti_find() under RCU may still be looking at it. */
	synchronize_rcu();
	dti_free_channel(ch);
}

#ifndef MODULE
/* The words of struct dti_cpu_stats that count, all before @busy */
#define DTI_STATS_WORDS	(offsetof(struct dti_cpu_stats, busy) / sizeof(u64))

static u64 __percpu *dti_stats_word(struct dti_info *info, unsigned int i)
{
	return (u64 __percpu *)info->stats + i;
}

/* The static per-CPU template of @info's counters: its address */
static char *dti_stats_addr(struct dti_info *info)
{
	return (char *)(__force unsigned long)info->stats;
}

static const u64 *dti_stats_template(struct dti_info *info)
{
	return (const u64 *)dti_percpu_template(dti_stats_addr(info));
}

/* Take the template's counts off this CPU's (an IPI's function). */
static void dti_stats_unduplicate(void *arg)
{
	struct dti_info *info = arg;
	const u64 *tmpl = dti_stats_template(info);
	unsigned int i;

	if (smp_processor_id() == cpumask_first(cpu_possible_mask))
		return;
	for (i = 0; i < DTI_STATS_WORDS; i++)
		this_cpu_sub(*dti_stats_word(info, i), tmpl[i]);
}

/*
 * Before setup_per_cpu_areas(), early in start_kernel(), this_cpu
 * operations reach the static per-CPU template, which that function then
 * copies to every possible CPU: what a built-in handle counted so early
 * (records refused by level, lost) would be counted once per CPU.  The
 * template keeps those counts until the kernel frees its init memory:
 * they stay on the first possible CPU (the boot CPU on x86 and arm64)
 * and are taken off the others, each by its own CPU (this_cpu
 * operations, as its writers use) or, offline, here.
 */
static void dti_stats_fixup(struct dti_handle *handle)
{
	struct dti_info *info = &handle->info;
	char *addr = dti_stats_addr(info);
	const u64 *tmpl;
	unsigned int cpu, i;

	if (!IS_ENABLED(CONFIG_SMP) || addr < __per_cpu_start ||
	    addr >= __per_cpu_end || system_state >= SYSTEM_FREEING_INITMEM ||
	    test_and_set_bit(DTI_PENDING_UNDUPLICATED, &handle->pending.early))
		return;
	tmpl = dti_stats_template(info);
	/* Nothing counted so early, as almost always: nothing to take off. */
	if (!memchr_inv(tmpl, 0, DTI_STATS_WORDS * sizeof(*tmpl)))
		return;
	cpus_read_lock();
	on_each_cpu(dti_stats_unduplicate, info, 1);
	for_each_possible_cpu(cpu) {
		if (cpu_online(cpu) || cpu == cpumask_first(cpu_possible_mask))
			continue;
		for (i = 0; i < DTI_STATS_WORDS; i++)
			*per_cpu_ptr(dti_stats_word(info, i), cpu) -= tmpl[i];
	}
	cpus_read_unlock();
}
#else
/* A module's per-CPU memory is its own, allocated at its load. */
static void dti_stats_fixup(struct dti_handle *handle)
{
}
#endif

/* Register a handle's channel; dti_handle_lock held, DTI up. */
static int __dti_handle_init(struct dti_handle *handle)
{
	struct dti_info *info;

	lockdep_assert_held(&dti_handle_lock);
	dti_dump_pending_seal(&handle->pending);
	dti_stats_fixup(handle);
	info = dti_register_info(handle->name,
				 dti_default_subbuf_size(handle->size),
				 DTI_DEFAULT_N_SUBBUFS,
				 READ_ONCE(handle->info.level),
				 DTI_F_ON_DEMAND | (handle->flags & DTI_F_PERSIST),
				 &handle->info);
	return PTR_ERR_OR_ZERO(info);
}

/**
 * dti_handle_init - register the channel of a handle
 * @handle: handle defined with DEFINE_DTI_HANDLE() or
 *	    DEFINE_DTI_EARLY_HANDLE(); use INIT_DTI_HANDLE()
 *
 * Creates the channel's directory and control files at the handle's
 * current level (or the one the level= parameter names for it).  The
 * buffers, their files and the merged views follow when the first
 * record at a stored level arrives, or now if records logged before
 * this call are waiting to be replayed.
 *
 * Called by built-in code before DTI's init (a postcore_initcall), it
 * only asks for the registration, which DTI's init carries out.  A
 * handle that DTI's init registered on its own, as it does every handle
 * logged to before it, is not registered again: the first call returns
 * 0 as if it had registered it.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for a NULL @handle, -EBUSY if it is initialised
 * already, or a negative errno as for dti_register_flags().
 */
int dti_handle_init(struct dti_handle *handle)
{
	unsigned long *early;
	int ret;

	might_sleep();
	if (!handle)
		return -EINVAL;
	early = &handle->pending.early;
	mutex_lock(&dti_handle_lock);
	if (!dti_is_up()) {
		clear_bit(DTI_PENDING_WITHDRAWN, early);
		set_bit(DTI_PENDING_DEFER, early);
		dti_dump_pending_seal(&handle->pending);
		dti_early_link(&handle->pending);
		ret = 0;
	} else if (rcu_access_pointer(handle->info.chan)) {
		ret = test_and_clear_bit(DTI_PENDING_ADOPTED, early) ? 0 : -EBUSY;
	} else {
		ret = __dti_handle_init(handle);
	}
	mutex_unlock(&dti_handle_lock);
	if (ret == -EBUSY)
		dti_probe_register(handle->name, NULL, -EBUSY);
	return ret;
}
EXPORT_SYMBOL_GPL(dti_handle_init);

/**
 * dti_handle_cleanup - unregister the channel of a handle
 * @handle: handle; use CLEANUP_DTI_HANDLE().  A handle never initialised,
 *	    cleaned up already, or NULL is left as it is.
 *
 * Unlike dti_unregister() on a channel of its own, this may run while
 * other CPUs are still logging to @handle: their records are refused or
 * land in the handle's pending store, never in freed memory.  The
 * handle's level is left at DTI_LEVEL_DESTROY; set another before a new
 * INIT_DTI_HANDLE() if records should be stored again.
 *
 * Called by built-in code before DTI's init, it withdraws an earlier
 * INIT_DTI_HANDLE(): DTI's init leaves the handle as one never
 * initialised, its records kept in its store.
 *
 * Context: process context; may sleep.
 */
void dti_handle_cleanup(struct dti_handle *handle)
{
	if (!handle)
		return;
	mutex_lock(&dti_handle_lock);
	if (!dti_is_up()) {
		clear_bit(DTI_PENDING_DEFER, &handle->pending.early);
		set_bit(DTI_PENDING_WITHDRAWN, &handle->pending.early);
	} else {
		clear_bit(DTI_PENDING_ADOPTED, &handle->pending.early);
		dti_unregister(&handle->info);
	}
	mutex_unlock(&dti_handle_lock);
	dti_dump_pending_wipe(&handle->pending);
}
EXPORT_SYMBOL_GPL(dti_handle_cleanup);

/*
 * Register a handle that built-in code used before DTI's init: it logged
 * (kept or lost records) or asked with INIT_DTI_HANDLE().
 * Return: whether it was registered.
 */
static bool dti_early_register(struct dti_handle *handle)
{
	unsigned long *early = &handle->pending.early;
	bool asked;
	int ret = 0;

	mutex_lock(&dti_handle_lock);
	if (test_bit(DTI_PENDING_WITHDRAWN, early) ||
	    rcu_access_pointer(handle->info.chan)) {
		mutex_unlock(&dti_handle_lock);
		return false;
	}
	asked = test_and_clear_bit(DTI_PENDING_DEFER, early);
	ret = __dti_handle_init(handle);
	/* Unasked: the driver's INIT_DTI_HANDLE() is still to come. */
	if (!ret && !asked)
		set_bit(DTI_PENDING_ADOPTED, early);
	mutex_unlock(&dti_handle_lock);
	if (ret)
		pr_err("%s: cannot register the channel of a handle used before DTI's init: %d; its records stay in its static store\n",
		       handle->name, ret);
	return !ret;
}

/*
 * Register the handles on dti_early_handles, in the order they were
 * first used.  Return: how many were registered.
 */
static unsigned int dti_early_adopt(void)
{
	struct llist_node *list = llist_del_all(&dti_early_handles);
	struct dti_pending *p, *next;
	unsigned int n = 0;

	list = llist_reverse_order(list);
	llist_for_each_entry_safe(p, next, list, early_node)
		n += dti_early_register(container_of(p, struct dti_handle, pending));
	return n;
}

/* A handle linked after dti_init() walked the list (dti_early_link()). */
static void dti_early_work_fn(struct work_struct *work)
{
	dti_early_adopt();
}

static void dti_early_kick_fn(struct irq_work *kick)
{
	schedule_work(&dti_early_work);
}

/*
 * DTI's init: a postcore_initcall built in, after debugfs (a
 * core_initcall) and before the drivers' initcalls; dti.ko's load.
 */
static int __init dti_init(void)
{
	unsigned int early, channels;
	int ret;

	dti_boot_levels_init();
	dti_dump_setup();
	dti_context_init();
	dti_wq = alloc_ordered_workqueue("dti", 0);
	if (!dti_wq)
		return -ENOMEM;
	ret = dti_modules_init();
	if (ret)
		goto err_wq;
	ret = dti_panic_init();
	if (ret)
		goto err_modules;
	ret = dti_fs_init();
	if (ret)
		goto err_panic;
	ret = dti_stop_init();
	if (ret)
		goto err_fs;
	ret = dti_ctl_init();
	if (ret)
		goto err_stop;
	ret = dti_persist_init();
	if (ret)
		goto err_ctl;

	/* From here on channels can be registered. */
	mutex_lock(&dti_handle_lock);
	/* Pairs with smp_load_acquire() in dti_is_up(): the setup first. */
	smp_store_release(&dti_up, true);
	/* Pairs with llist_add() in dti_early_link(): see there. */
	smp_mb();
	mutex_unlock(&dti_handle_lock);
	/* After dti_up: a probe switch's parameter set later switches itself. */
	dti_write_loaded();
	/* BPF programs may call the kfuncs from here on. */
	dti_bpf_init();
	early = dti_early_adopt();
	channels = dti_boot_channels_init();
	pr_info("up: %u handle(s) used before registered, %u channel(s) from dti.channel=\n",
		early, channels);
	return 0;

err_ctl:
	dti_ctl_exit();
err_stop:
	dti_stop_exit();
err_fs:
	dti_fs_exit();
err_panic:
	dti_panic_exit();
err_modules:
	dti_modules_exit();
err_wq:
	destroy_workqueue(dti_wq);
	return ret;
}

static void __exit dti_exit(void)
{
	struct dti_channel *ch;

	dti_probe_unloading();
	irq_work_sync(&dti_early_kick);
	cancel_work_sync(&dti_early_work);
	dti_boot_channels_exit();
	/* Channels scripts created and did not release. */
	while ((ch = dti_take_owned(NULL)))
		__dti_unregister(ch);
	dti_write_exit();
	destroy_workqueue(dti_wq);
	/* Every client module holds a reference, so no channel is left. */
	WARN_ON(!list_empty(&dti_channels));
	dti_ctl_exit();
	dti_persist_exit();
	dti_stop_exit();
	dti_fs_exit();
	dti_panic_exit();
	dti_modules_exit();
}

postcore_initcall(dti_init);
module_exit(dti_exit);

MODULE_DESCRIPTION("Driver Tracing Interface: per-CPU flight-recorder channels");
MODULE_LICENSE("GPL");
