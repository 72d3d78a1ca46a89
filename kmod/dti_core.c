// SPDX-License-Identifier: GPL-2.0
/*
 * DTI channels: registration, levels, and the life of the relay buffers.
 *
 * A channel always has its debugfs directory and control files.  The
 * relay buffers of a channel registered directly exist whenever the level
 * is not DTI_LEVEL_DESTROY: they are created when the level rises from
 * "destroy" and freed when it falls back to it.  A handle's channel (and
 * one made by dti_ctl_create()) gets them on demand, when the first
 * record at a stored level arrives.  Writers never sleep and never take
 * a lock; they see the buffers through an RCU-protected pointer with
 * interrupts disabled, so freeing waits for a grace period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "dti_internal.h"

/*
 * All channels.  Registration from process context is serialised by
 * dti_register_lock; the list itself changes under dti_list_lock, which
 * dti_ctl_create() can take in any context, and is read under RCU.
 */
static LIST_HEAD(dti_channels);
static DEFINE_MUTEX(dti_register_lock);
DEFINE_SPINLOCK(dti_list_lock);

/*
 * Work for the channels: creating or freeing buffers on behalf of atomic
 * context, setting up channels made by dti_ctl_create().  Ordered, so a
 * channel's work never runs twice at once and runs in the order queued.
 */
static struct workqueue_struct *dti_wq;

/**
 * dti_queue_work - have a channel's buffers brought in line with its level
 * @ch: channel
 *
 * Context: any but NMI.
 */
void dti_queue_work(struct dti_channel *ch)
{
	queue_work(dti_wq, &ch->create_work);
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
 * dti_find - look a channel up by name
 * @name: channel name
 *
 * Context: under rcu_read_lock() or dti_list_lock.
 * Return: the channel, or NULL.
 */
struct dti_channel *dti_find(const char *name)
{
	struct dti_channel *ch;

	list_for_each_entry_rcu(ch, &dti_channels, list,
				lockdep_is_held(&dti_list_lock)) {
		if (!strcmp(ch->name, name))
			return ch;
	}
	return NULL;
}

/**
 * dti_add_channel - make a channel visible by name
 * @ch: channel
 *
 * Context: any but NMI.
 * Return: 0, or -EEXIST if the name is taken.
 */
int dti_add_channel(struct dti_channel *ch)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&dti_list_lock, flags);
	if (dti_find(ch->name))
		ret = -EEXIST;
	else
		list_add_tail_rcu(&ch->list, &dti_channels);
	spin_unlock_irqrestore(&dti_list_lock, flags);
	return ret;
}

static bool dti_name_taken(const char *name)
{
	bool taken;

	rcu_read_lock();
	taken = dti_find(name) != NULL;
	rcu_read_unlock();
	return taken;
}

static void dti_del_channel(struct dti_channel *ch)
{
	unsigned long flags;

	spin_lock_irqsave(&dti_list_lock, flags);
	list_del_rcu(&ch->list);
	spin_unlock_irqrestore(&dti_list_lock, flags);
}

/**
 * dti_take_owned - unlist the next channel made by dti_ctl_create()
 * @owner: owner cookie given to dti_ctl_create(), or NULL for any owner
 *
 * Context: any but NMI.
 * Return: a channel created by dti_ctl_create(), removed from the list so
 * no one else unregisters it, or NULL if there is none left.
 */
struct dti_channel *dti_take_owned(const void *owner)
{
	struct dti_channel *ch, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&dti_list_lock, flags);
	list_for_each_entry(ch, &dti_channels, list) {
		if (ch->owned && (!owner || ch->owner == owner)) {
			list_del_rcu(&ch->list);
			found = ch;
			break;
		}
	}
	spin_unlock_irqrestore(&dti_list_lock, flags);
	return found;
}

/* Pending records waiting for buffers? */
static bool dti_has_pending(struct dti_info *info)
{
	return info->pending && READ_ONCE(info->pending->used);
}

static int dti_create_buffers(struct dti_channel *ch)
{
	struct rchan *rchan;

	lockdep_assert_held(&ch->ctl_lock);
	if (rcu_access_pointer(ch->rchan))
		return 0;
	rchan = relay_open(DTI_TRACE_FILE_BASE, ch->dir, ch->subbuf_size,
			   ch->n_subbufs, &dti_relay_callbacks, ch);
	if (!rchan)
		return -ENOMEM;
	mutex_lock(&ch->buf_lock);
	dti_publish_buffers(ch, rchan);
	mutex_unlock(&ch->buf_lock);
	dti_fs_create_views(ch);
	return 0;
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
	/* Files still open keep their buffer until they are closed. */
	relay_close(rchan);
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
		dti_fs_create_control(ch);
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
		pr_warn("%s: cannot create buffers: %d\n", ch->name, ret);
}

/**
 * dti_probe_level - probe point: a channel's level changed
 * @ch: channel
 * @old_level: level before
 * @new_level: level after
 * @source: who changed it
 *
 * Does nothing; tapset/dti.stp probes it.
 */
DTI_PROBE_POINT void dti_probe_level(struct dti_channel *ch, int old_level,
				     int new_level,
				     enum dti_level_source source)
{
	barrier();
}

/**
 * __dti_set_level - change a channel's level, with its lock held
 * @ch: channel
 * @level: new level, DTI_LEVEL_MIN..DTI_LEVEL_MAX
 * @source: who asks, for dti_probe_level()
 *
 * Return: 0, -EINVAL for a level out of range, -ENODEV if the channel is
 * being unregistered, -ENOMEM if buffers were needed and could not be
 * allocated (the level is then unchanged).
 */
int __dti_set_level(struct dti_channel *ch, int level,
		    enum dti_level_source source)
{
	int old = ch->info->level;
	int ret;

	lockdep_assert_held(&ch->ctl_lock);
	if (!dti_level_valid(level))
		return -EINVAL;
	if (ch->dying)
		return -ENODEV;
	if (level == DTI_LEVEL_DESTROY) {
		WRITE_ONCE(ch->info->level, DTI_LEVEL_DESTROY);
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
		WRITE_ONCE(ch->info->level, level);
	}
	dti_probe_level(ch, old, level, source);
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
 * Return: 0, -EINVAL for a bad level, -ENOMEM if new buffers could not
 * be allocated (the level is then unchanged).
 */
int dti_set_level(struct dti_info *trace, int level)
{
	struct dti_channel *ch = rcu_dereference_protected(trace->chan, true);

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
	int ret;

	might_sleep();
	mutex_lock(&ch->ctl_lock);
	ret = __dti_set_level(ch, level, source);
	mutex_unlock(&ch->ctl_lock);
	return ret;
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
	struct dti_channel *ch;

	ch = kzalloc(sizeof(*ch), gfp);
	if (!ch)
		return NULL;
	if (info) {
		ch->info = info;
	} else {
		ch->info = &ch->own_info;
		ch->own_info.level = DTI_LEVEL_DESTROY;
		ch->own_info.stats = alloc_percpu_gfp(struct dti_cpu_stats,
						      gfp);
		if (!ch->own_info.stats) {
			kfree(ch);
			return NULL;
		}
	}
	snprintf(ch->marker, sizeof(ch->marker), "%s%s", DTI_MARKER_PREFIX,
		 name);
	ch->name = ch->marker + DTI_MARKER_PREFIX_LEN;
	ch->subbuf_size = subbuf_size;
	ch->n_subbufs = n_subbufs;
	ch->flags = flags;
	mutex_init(&ch->ctl_lock);
	mutex_init(&ch->buf_lock);
	INIT_WORK(&ch->create_work, dti_create_work);
	INIT_LIST_HEAD(&ch->list);
	return ch;
}

static void dti_free_channel(struct dti_channel *ch)
{
	free_percpu(ch->own_info.stats);
	if (ch->owned)
		dti_ctl_free_owned(ch);
	kfree(ch);
}

/*
 * Register a channel for @info (a handle's) or for a new dti_info of its
 * own (@info NULL).  The level stays whatever @info holds.
 */
static struct dti_info *dti_register_info(const char *name,
					  size_t subbuf_size,
					  size_t n_subbufs, int init_level,
					  unsigned int flags,
					  struct dti_info *info)
{
	struct dti_channel *ch;
	bool create;
	int ret;

	ret = dti_check_name(name);
	if (!ret)
		ret = dti_check_geometry(subbuf_size, n_subbufs);
	if (ret)
		return ERR_PTR(ret);
	if (!dti_level_valid(init_level))
		return ERR_PTR(-EINVAL);

	mutex_lock(&dti_register_lock);
	if (dti_name_taken(name)) {
		ret = -EEXIST;
		goto err_unlock;
	}
	ch = dti_alloc_channel(name, subbuf_size, n_subbufs, flags, info,
			       GFP_KERNEL);
	if (!ch) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	ch->dir = debugfs_create_dir(name, dti_fs_root());
	dti_fs_create_control(ch);

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
		ret = __dti_set_level(ch, init_level, DTI_SRC_REGISTER);
	mutex_unlock(&ch->ctl_lock);
	if (ret)
		goto err_unpublish;

	/* dti_ctl_create() does not take dti_register_lock. */
	ret = dti_add_channel(ch);
	if (ret)
		goto err_unpublish;
	mutex_unlock(&dti_register_lock);
	return ch->info;

err_unpublish:
	RCU_INIT_POINTER(ch->info->chan, NULL);
	synchronize_rcu();
	cancel_work_sync(&ch->create_work);
	mutex_lock(&ch->ctl_lock);
	dti_destroy_buffers(ch);
	mutex_unlock(&ch->ctl_lock);
	debugfs_remove_recursive(ch->dir);
	dti_free_channel(ch);
err_unlock:
	mutex_unlock(&dti_register_lock);
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
 *	  ones when a CPU's buffer is full; by default the newest survive
 *
 * Creates /sys/kernel/debug/dti/<name>/ with its control files and, if
 * buffers are allocated, the per-CPU trace files and the merged views.
 * On failure nothing is left behind.
 *
 * Context: process context; may sleep.
 * Return: the channel, or ERR_PTR(-EINVAL) for a bad argument,
 * ERR_PTR(-EEXIST) if the name is taken, ERR_PTR(-ENOMEM).
 */
struct dti_info *dti_register_flags(const char *name, size_t subbuf_size,
				    size_t n_subbufs, int init_level,
				    unsigned int flags)
{
	might_sleep();
	if (flags & ~DTI_F_NO_OVERWRITE)
		return ERR_PTR(-EINVAL);
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

	dti_del_channel(ch);
	__dti_unregister(ch);
}
EXPORT_SYMBOL_GPL(dti_unregister);

/**
 * __dti_unregister - destroy a channel no longer on the list
 * @ch: channel
 *
 * Context: process context; may sleep.
 */
void __dti_unregister(struct dti_channel *ch)
{
	struct dti_info *trace = ch->info;
	int old;

	/* Logging calls reach the channel only with interrupts off. */
	WRITE_ONCE(trace->level, DTI_LEVEL_DESTROY);
	RCU_INIT_POINTER(trace->chan, NULL);
	synchronize_rcu();
	/* Nothing can queue it any more. */
	cancel_work_sync(&ch->create_work);

	mutex_lock(&ch->ctl_lock);
	/* From now on nothing queues the channel's work again. */
	ch->dying = true;
	old = xchg(&trace->level, DTI_LEVEL_DESTROY);
	dti_destroy_buffers(ch);
	dti_probe_level(ch, old, DTI_LEVEL_DESTROY, DTI_SRC_KERNEL);
	mutex_unlock(&ch->ctl_lock);
	/* Waits for control-file operations still running. */
	debugfs_remove_recursive(ch->dir);
	dti_free_channel(ch);
}

/**
 * dti_handle_init - register the channel of a handle
 * @handle: handle defined with DEFINE_DTI_HANDLE() or
 *	    DEFINE_DTI_EARLY_HANDLE(); use INIT_DTI_HANDLE()
 *
 * Creates the channel's directory and control files at the handle's
 * current level.  The buffers, their files and the merged views follow
 * when the first record at a stored level arrives, or now if records
 * logged before this call are waiting to be replayed.
 *
 * Context: process context; may sleep.
 * Return: 0, or a negative errno as for dti_register_flags().
 */
int dti_handle_init(struct dti_handle *handle)
{
	struct dti_info *info;

	might_sleep();
	if (rcu_access_pointer(handle->info.chan))
		return -EBUSY;
	info = dti_register_info(handle->name,
				 dti_default_subbuf_size(handle->size),
				 DTI_DEFAULT_N_SUBBUFS,
				 READ_ONCE(handle->info.level),
				 DTI_F_ON_DEMAND, &handle->info);
	return PTR_ERR_OR_ZERO(info);
}
EXPORT_SYMBOL_GPL(dti_handle_init);

/**
 * dti_handle_cleanup - unregister the channel of a handle
 * @handle: handle; use CLEANUP_DTI_HANDLE()
 *
 * Unlike dti_unregister() on a channel of its own, this may run while
 * other CPUs are still logging to @handle: their records are refused or
 * land in the handle's pending store, never in freed memory.  The
 * handle's level is left at DTI_LEVEL_DESTROY; set another before a new
 * INIT_DTI_HANDLE() if records should be stored again.
 *
 * Context: process context; may sleep.
 */
void dti_handle_cleanup(struct dti_handle *handle)
{
	dti_unregister(&handle->info);
}
EXPORT_SYMBOL_GPL(dti_handle_cleanup);

static int __init dti_init(void)
{
	int ret;

	dti_wq = alloc_ordered_workqueue("dti", 0);
	if (!dti_wq)
		return -ENOMEM;
	ret = dti_fs_init();
	if (ret)
		destroy_workqueue(dti_wq);
	return ret;
}

static void __exit dti_exit(void)
{
	struct dti_channel *ch;

	/* Channels scripts created and did not release. */
	while ((ch = dti_take_owned(NULL)))
		__dti_unregister(ch);
	destroy_workqueue(dti_wq);
	/* Every client module holds a reference, so no channel is left. */
	WARN_ON(!list_empty(&dti_channels));
	dti_fs_exit();
}

module_init(dti_init);
module_exit(dti_exit);

MODULE_DESCRIPTION("Driver Tracing Interface: per-CPU flight-recorder channels");
MODULE_LICENSE("GPL");
