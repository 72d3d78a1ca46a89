// SPDX-License-Identifier: GPL-2.0
/*
 * DTI channels: registration, levels, and the life of the relay buffers.
 *
 * A channel always has its debugfs directory and control files.  Its
 * relay buffers exist whenever the level is not DTI_LEVEL_DESTROY: they
 * are created when the level rises from "destroy" and freed when it
 * falls back to it.  Writers never sleep and never take a lock; they see
 * the buffers through an RCU-protected pointer with interrupts disabled,
 * so freeing waits for a grace period.
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

static LIST_HEAD(dti_channels);
static DEFINE_MUTEX(dti_channels_lock);	/* protects dti_channels */

static bool dti_level_valid(int level)
{
	return level >= DTI_LEVEL_MIN && level <= DTI_LEVEL_MAX;
}

/*
 * A name becomes a debugfs directory and is matched in memory dumps:
 * letters, digits and "_-.:" only, not starting with '.', so no '/',
 * no "." or "..", nothing a shell needs quoted.
 */
static int dti_check_name(const char *name)
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

static int dti_check_geometry(size_t subbuf_size, size_t n_subbufs)
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

static struct dti_channel *dti_find(const char *name)
{
	struct dti_channel *ch;

	lockdep_assert_held(&dti_channels_lock);
	list_for_each_entry(ch, &dti_channels, list) {
		if (!strcmp(ch->name, name))
			return ch;
	}
	return NULL;
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
	rcu_assign_pointer(ch->rchan, rchan);
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
 * dti_probe_level - probe point: a channel's level changed
 * @ch: channel
 * @old_level: level before
 * @new_level: level after
 * @source: who changed it
 *
 * Does nothing; tapset/dti.stp probes it.
 */
noinline void dti_probe_level(struct dti_channel *ch, int old_level,
			      int new_level, enum dti_level_source source)
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
	int old = ch->info.level;
	int ret;

	lockdep_assert_held(&ch->ctl_lock);
	if (!dti_level_valid(level))
		return -EINVAL;
	if (ch->dying)
		return -ENODEV;
	if (level == DTI_LEVEL_DESTROY) {
		WRITE_ONCE(ch->info.level, DTI_LEVEL_DESTROY);
		dti_destroy_buffers(ch);
	} else {
		if (level >= 0) {
			ret = dti_create_buffers(ch);
			if (ret)
				return ret;
		}
		WRITE_ONCE(ch->info.level, level);
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
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for a bad level, -ENOMEM if new buffers could not
 * be allocated (the level is then unchanged).
 */
int dti_set_level(struct dti_info *trace, int level)
{
	return dti_change_level(to_dti_channel(trace), level, DTI_SRC_KERNEL);
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

static struct dti_channel *dti_alloc_channel(const char *name,
					      size_t subbuf_size,
					      size_t n_subbufs,
					      unsigned int flags)
{
	struct dti_channel *ch;

	ch = kzalloc(sizeof(*ch), GFP_KERNEL);
	if (!ch)
		return NULL;
	ch->info.stats = alloc_percpu(struct dti_cpu_stats);
	if (!ch->info.stats) {
		kfree(ch);
		return NULL;
	}
	snprintf(ch->marker, sizeof(ch->marker), "%s%s", DTI_MARKER_PREFIX,
		 name);
	ch->name = ch->marker + DTI_MARKER_PREFIX_LEN;
	ch->subbuf_size = subbuf_size;
	ch->n_subbufs = n_subbufs;
	ch->flags = flags;
	ch->info.level = DTI_LEVEL_DESTROY;
	mutex_init(&ch->ctl_lock);
	mutex_init(&ch->buf_lock);
	INIT_LIST_HEAD(&ch->list);
	return ch;
}

static void dti_free_channel(struct dti_channel *ch)
{
	free_percpu(ch->info.stats);
	kfree(ch);
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
	struct dti_channel *ch;
	int ret;

	might_sleep();
	ret = dti_check_name(name);
	if (!ret)
		ret = dti_check_geometry(subbuf_size, n_subbufs);
	if (ret)
		return ERR_PTR(ret);
	if (!dti_level_valid(init_level) || (flags & ~DTI_F_NO_OVERWRITE))
		return ERR_PTR(-EINVAL);

	mutex_lock(&dti_channels_lock);
	if (dti_find(name)) {
		ret = -EEXIST;
		goto err_unlock;
	}
	ch = dti_alloc_channel(name, subbuf_size, n_subbufs, flags);
	if (!ch) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	ch->dir = debugfs_create_dir(name, dti_fs_root());
	dti_fs_create_control(ch);

	mutex_lock(&ch->ctl_lock);
	ret = init_level == DTI_LEVEL_DESTROY ? 0 : dti_create_buffers(ch);
	if (!ret)
		ret = __dti_set_level(ch, init_level, DTI_SRC_REGISTER);
	mutex_unlock(&ch->ctl_lock);
	if (ret)
		goto err_remove_dir;

	list_add_tail(&ch->list, &dti_channels);
	mutex_unlock(&dti_channels_lock);
	return &ch->info;

err_remove_dir:
	debugfs_remove_recursive(ch->dir);
	dti_free_channel(ch);
err_unlock:
	mutex_unlock(&dti_channels_lock);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(dti_register_flags);

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
	size_t subbuf_size = size / DTI_DEFAULT_N_SUBBUFS;

	subbuf_size = round_down(subbuf_size, DTI_RECORD_ALIGN);
	return __dti_register(name, subbuf_size, DTI_DEFAULT_N_SUBBUFS,
			      init_level);
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
	ch = to_dti_channel(trace);

	mutex_lock(&dti_channels_lock);
	list_del(&ch->list);
	mutex_unlock(&dti_channels_lock);

	mutex_lock(&ch->ctl_lock);
	__dti_set_level(ch, DTI_LEVEL_DESTROY, DTI_SRC_KERNEL);
	ch->dying = true;
	mutex_unlock(&ch->ctl_lock);
	/* Waits for control-file operations still running. */
	debugfs_remove_recursive(ch->dir);
	dti_free_channel(ch);
}
EXPORT_SYMBOL_GPL(dti_unregister);

static int __init dti_init(void)
{
	return dti_fs_init();
}

static void __exit dti_exit(void)
{
	/* Every client module holds a reference, so no channel is left. */
	WARN_ON(!list_empty(&dti_channels));
	dti_fs_exit();
}

module_init(dti_init);
module_exit(dti_exit);

MODULE_DESCRIPTION("Driver Tracing Interface: per-CPU flight-recorder channels");
MODULE_LICENSE("GPL");
