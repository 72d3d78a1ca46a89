// SPDX-License-Identifier: GPL-2.0
/*
 * DTI debugfs files: /sys/kernel/debug/dti/<name>/
 *
 *   level           read: the level; write: 0..7, "off" (-1), "destroy" (-2)
 *   reset_consumed  write "1": trace0..N return all records again
 *   stats           per-CPU counters
 *   info            buffer geometry, mode and record format
 *   dump_on_panic   newest records per CPU printed at panic (0: none)
 *   stop_on         what stops the channel: "none", or oops,warn,panic
 *   context         system events stored: "none", or sched,irq (dti_context.c)
 *   marker          write: one text record per write(2) (dti_usermark.c)
 *   marker_raw      write: one binary record per write(2)
 *   marker_level    level of markers that give none: 0..7
 *   trace0..N       raw per-CPU relay files        (while buffers exist)
 *   merged          records merged by time         (while buffers exist)
 *   merged-ts       the same with time, CPU, level (while buffers exist)
 *
 * A write that is not exactly one of the accepted values fails with
 * -EINVAL and changes nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "dti_internal.h"

#define DTI_ROOT_DIR		"dti"
/* Longest text accepted by a control file ("destroy\n" and room to spare). */
#define DTI_CTL_WRITE_MAX	15
/*
 * Longest text the stop_on and context files take: "oops,warn,panic\n"
 * and room to spare
 */
#define DTI_WORDS_WRITE_MAX	31
/* Longest text the size file takes: 20 digits and a suffix, or "0x..." */
#define DTI_SIZE_WRITE_MAX	23

static struct dentry *dti_root;

struct dentry *dti_fs_root(void)
{
	return dti_root;
}

/*
 * Copy a control-file write into @kbuf as a NUL-terminated string.
 * Partial writes at an offset and overlong writes are refused.
 */
static int __dti_ctl_copy(char *kbuf, size_t max, const char __user *ubuf,
			  size_t count, loff_t *ppos)
{
	if (*ppos || count == 0 || count > max)
		return -EINVAL;
	if (copy_from_user(kbuf, ubuf, count))
		return -EFAULT;
	kbuf[count] = '\0';
	return 0;
}

static int dti_ctl_copy(char *kbuf, const char __user *ubuf, size_t count,
			loff_t *ppos)
{
	return __dti_ctl_copy(kbuf, DTI_CTL_WRITE_MAX, ubuf, count, ppos);
}

/* A control file's read: @val and a newline. */
static ssize_t dti_ctl_read_int(char __user *ubuf, size_t count, loff_t *ppos,
				int val)
{
	char kbuf[16];
	int len;

	len = scnprintf(kbuf, sizeof(kbuf), "%d\n", val);
	return simple_read_from_buffer(ubuf, count, ppos, kbuf, len);
}

static ssize_t dti_level_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct dti_channel *ch = file->private_data;

	return dti_ctl_read_int(ubuf, count, ppos, READ_ONCE(ch->info->level));
}

/* A control file's write of a level, as dti_parse_level() reads it. */
static int dti_ctl_level(const char __user *ubuf, size_t count, loff_t *ppos,
			 int *level)
{
	char kbuf[DTI_CTL_WRITE_MAX + 1];
	int ret;

	ret = dti_ctl_copy(kbuf, ubuf, count, ppos);
	return ret ? ret : dti_parse_level(kbuf, level);
}

static ssize_t dti_level_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct dti_channel *ch = file->private_data;
	int level, ret;

	ret = dti_ctl_level(ubuf, count, ppos, &level);
	if (ret)
		return ret;
	ret = dti_change_level(ch, level, DTI_SRC_FILE);
	return ret ? ret : count;
}

static ssize_t dti_mark_level_read(struct file *file, char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct dti_channel *ch = file->private_data;

	return dti_ctl_read_int(ubuf, count, ppos, READ_ONCE(ch->mark_level));
}

/* A record's level only: "off" and "destroy" are channel levels. */
static ssize_t dti_mark_level_write(struct file *file, const char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	struct dti_channel *ch = file->private_data;
	int level, ret;

	ret = dti_ctl_level(ubuf, count, ppos, &level);
	if (ret)
		return ret;
	if (level < 0 || level > DTI_LEVEL_MAX)
		return -EINVAL;
	WRITE_ONCE(ch->mark_level, level);
	return count;
}

static const struct file_operations dti_mark_level_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= dti_mark_level_read,
	.write	= dti_mark_level_write,
	.llseek	= default_llseek,
};

static const struct file_operations dti_level_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= dti_level_read,
	.write	= dti_level_write,
	.llseek	= default_llseek,
};

/*
 * Is sub-buffer number produced - n_subbufs, in the slot the writer
 * reuses next, still held?  Only if no sub-buffer is being written: the
 * writer found the ring full.  A no-overwrite ring is full when nothing
 * of it is consumed; its offset is no guide, relay_switch_subbuf() sets
 * it to 0 for a moment before dti_subbuf_start() refuses.  Call with the
 * trace file's inode lock held, which keeps subbufs_consumed still.
 */
static bool dti_reset_oldest_held(const struct dti_channel *ch,
				  const struct rchan_buf *buf, size_t produced)
{
	if (ch->flags & DTI_F_NO_OVERWRITE)
		return produced - buf->subbufs_consumed >= buf->chan->n_subbufs;
	return READ_ONCE(buf->offset) > buf->chan->subbuf_size;
}

/*
 * Make every record still held in @buf readable again through its trace
 * file: move the consumed count back to the oldest sub-buffer holding
 * data.  The relay read path runs under the file's inode lock.
 */
static void dti_reset_consumed_buf(const struct dti_channel *ch,
				   struct rchan_buf *buf)
{
	struct inode *inode = d_inode(buf->dentry);
	size_t produced, oldest = 0;

	inode_lock(inode);
	produced = READ_ONCE(buf->subbufs_produced);
	if (produced >= buf->chan->n_subbufs)
		oldest = produced - buf->chan->n_subbufs +
			 !dti_reset_oldest_held(ch, buf, produced);
	buf->subbufs_consumed = oldest;
	buf->bytes_consumed = 0;
	inode_unlock(inode);
}

static ssize_t dti_reset_consumed_write(struct file *file,
					const char __user *ubuf, size_t count,
					loff_t *ppos)
{
	struct dti_channel *ch = file->private_data;
	char kbuf[DTI_CTL_WRITE_MAX + 1];
	struct rchan_buf *buf;
	struct rchan *rchan;
	unsigned int cpu;
	int ret;

	ret = dti_ctl_copy(kbuf, ubuf, count, ppos);
	if (ret)
		return ret;
	if (!sysfs_streq(kbuf, "1"))
		return -EINVAL;

	mutex_lock(&ch->buf_lock);
	rchan = rcu_dereference_protected(ch->rchan,
					  lockdep_is_held(&ch->buf_lock));
	if (!rchan) {
		ret = -ENODEV;
		goto out_unlock;
	}
	for_each_possible_cpu(cpu) {
		buf = *per_cpu_ptr(rchan->buf, cpu);
		if (buf && buf->dentry)
			dti_reset_consumed_buf(ch, buf);
	}
out_unlock:
	mutex_unlock(&ch->buf_lock);
	return ret ? ret : count;
}

/*
 * dump_on_panic: the newest records per CPU printed at panic.  As
 * debugfs_create_u32() would, but a value over U32_MAX is refused, and
 * creating it reports failure.
 */
static int dti_panic_records_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u32 *)data);
	return 0;
}

static int dti_panic_records_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(dti_panic_records_fops, dti_panic_records_get,
			 dti_panic_records_set, "%llu\n");

static const struct file_operations dti_reset_consumed_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= dti_reset_consumed_write,
	.llseek	= noop_llseek,
};

/* The columns of the stats file, in order. */
static const struct {
	const char *name;
	size_t offset;
} dti_stats_cols[] = {
#define DTI_STAT(name, field) { name, offsetof(struct dti_cpu_stats, field) }
	DTI_STAT("written", written),
	DTI_STAT("filtered", filtered),
	DTI_STAT("overwritten", overwritten),
	DTI_STAT("discarded", discarded),
	DTI_STAT("dropped", dropped),
	DTI_STAT("nested", nested),
	DTI_STAT("nmi", nmi),
	DTI_STAT("lost", lost),
	DTI_STAT("unavailable", unavailable),
	DTI_STAT("rejected", rejected),
	DTI_STAT("halted", halted),
	DTI_STAT("stopped", stopped),
	DTI_STAT("next_seq", seq),
#undef DTI_STAT
};

static u64 dti_stat(const struct dti_cpu_stats *s, unsigned int col)
{
	return *(const u64 *)((const char *)s + dti_stats_cols[col].offset);
}

static int dti_stats_show(struct seq_file *m, void *unused)
{
	struct dti_channel *ch = m->private;
	u64 total[ARRAY_SIZE(dti_stats_cols)] = {};
	const struct dti_cpu_stats *s;
	unsigned int cpu, c;

	seq_printf(m, "%-6s", "cpu");
	for (c = 0; c < ARRAY_SIZE(dti_stats_cols); c++)
		seq_printf(m, " %12s", dti_stats_cols[c].name);
	seq_putc(m, '\n');
	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(ch->info->stats, cpu);
		seq_printf(m, "%-6u", cpu);
		for (c = 0; c < ARRAY_SIZE(dti_stats_cols); c++) {
			total[c] += dti_stat(s, c);
			seq_printf(m, " %12llu", dti_stat(s, c));
		}
		seq_putc(m, '\n');
	}
	seq_printf(m, "%-6s", "total");
	for (c = 0; c < ARRAY_SIZE(dti_stats_cols); c++)
		seq_printf(m, " %12llu", total[c]);
	seq_putc(m, '\n');
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dti_stats);

static int dti_info_show(struct seq_file *m, void *unused)
{
	struct dti_channel *ch = m->private;
	struct dti_pending *p = ch->info->pending;
	unsigned long flags;
	u64 replayed, lost;
	bool buffers;
	size_t used;
	int reason;

	rcu_read_lock();
	buffers = rcu_dereference(ch->rchan);
	rcu_read_unlock();

	seq_printf(m, "name: %s\n", ch->name);
	seq_printf(m, "level: %d\n", READ_ONCE(ch->info->level));
	seq_printf(m, "mode: %s\n", ch->flags & DTI_F_NO_OVERWRITE ?
		   "no-overwrite" : "overwrite");
	seq_printf(m, "subbuf_size: %zu\n", ch->subbuf_size);
	seq_printf(m, "n_subbufs: %zu\n", ch->n_subbufs);
	seq_printf(m, "max_payload: %zu\n", dti_max_payload(ch));
	seq_printf(m, "buffers: %s\n", buffers ? "allocated" : "none");
	seq_printf(m, "record_version: %u\n", DTI_RECORD_VERSION);
	seq_printf(m, "on_demand: %d\n", !!(ch->flags & DTI_F_ON_DEMAND));
	seq_puts(m, "context: ");
	dti_context_show(m, ch);
	seq_puts(m, "\nstop_on: ");
	dti_stop_on_show(m, READ_ONCE(ch->stop_on));
	reason = READ_ONCE(ch->stop_reason);
	seq_printf(m, "\nstopped: %s\n", dti_stop_reason_name(reason));
	if (reason)
		seq_printf(m, "stopped_ns: %llu\n", READ_ONCE(ch->stop_ns));
	if (dti_halt_state(atomic_read(&ch->halt_ctl)) == DTI_HALT_ARMED &&
	    READ_ONCE(ch->halt_deadline))
		seq_printf(m, "halt_deadline_ns: %llu\n", READ_ONCE(ch->halt_deadline));
	if (p) {
		dti_pending_lock(ch->info, &flags);
		used = p->used;
		replayed = p->replayed;
		lost = p->lost;
		dti_pending_unlock(ch->info, flags);
		seq_printf(m, "pending_size: %zu\npending_used: %zu\n"
			   "pending_replayed: %llu\npending_lost: %llu\n",
			   p->size, used, replayed, lost);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dti_info);

static int dti_stop_on_show_file(struct seq_file *m, void *unused)
{
	struct dti_channel *ch = m->private;

	dti_stop_on_show(m, READ_ONCE(ch->stop_on));
	seq_putc(m, '\n');
	return 0;
}

static int dti_stop_on_open(struct inode *inode, struct file *file)
{
	return single_open(file, dti_stop_on_show_file, inode->i_private);
}

/*
 * A write of a file that takes a set of words ("none", or words joined
 * by commas): @parse reads it, @set applies it to the file's channel.
 */
static ssize_t dti_words_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos,
			       int (*parse)(const char *buf, unsigned int *mask),
			       int (*set)(struct dti_channel *ch, unsigned int mask))
{
	struct seq_file *m = file->private_data;
	char kbuf[DTI_WORDS_WRITE_MAX + 1];
	unsigned int mask;
	int ret;

	ret = __dti_ctl_copy(kbuf, DTI_WORDS_WRITE_MAX, ubuf, count, ppos);
	if (!ret)
		ret = parse(kbuf, &mask);
	if (!ret)
		ret = set(m->private, mask);
	return ret ? ret : count;
}

static int dti_stop_on_set(struct dti_channel *ch, unsigned int mask)
{
	WRITE_ONCE(ch->stop_on, mask);
	return 0;
}

/* "none" or words of oops, warn and panic joined by commas */
static ssize_t dti_stop_on_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	return dti_words_write(file, ubuf, count, ppos, dti_stop_on_parse,
			       dti_stop_on_set);
}

static int dti_context_show_file(struct seq_file *m, void *unused)
{
	dti_context_show(m, m->private);
	seq_putc(m, '\n');
	return 0;
}

static int dti_context_open(struct inode *inode, struct file *file)
{
	return single_open(file, dti_context_show_file, inode->i_private);
}

/* "none" or words of sched and irq joined by commas */
static ssize_t dti_context_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	return dti_words_write(file, ubuf, count, ppos, dti_context_parse,
			       dti_context_set);
}

static ssize_t dti_size_read(struct file *file, char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	struct dti_channel *ch = file->private_data;
	char kbuf[DTI_SIZE_WRITE_MAX + 2];
	int len;

	len = scnprintf(kbuf, sizeof(kbuf), "%zu\n",
			READ_ONCE(ch->subbuf_size) * ch->n_subbufs);
	return simple_read_from_buffer(ubuf, count, ppos, kbuf, len);
}

/* The bytes per CPU, as memparse() reads them ("1M", "262144"). */
static ssize_t dti_size_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct dti_channel *ch = file->private_data;
	char kbuf[DTI_SIZE_WRITE_MAX + 1], *end;
	unsigned long long size;
	int ret;

	ret = __dti_ctl_copy(kbuf, DTI_SIZE_WRITE_MAX, ubuf, count, ppos);
	if (ret)
		return ret;
	size = memparse(kbuf, &end);
	if (end == kbuf || (*end && !(*end == '\n' && !end[1])) || size > SIZE_MAX)
		return -EINVAL;
	ret = dti_resize(ch, size);
	return ret ? ret : count;
}

static const struct file_operations dti_size_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= dti_size_read,
	.write	= dti_size_write,
	.llseek	= default_llseek,
};

static const struct file_operations dti_stop_on_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_stop_on_open,
	.read		= seq_read,
	.write		= dti_stop_on_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static const struct file_operations dti_context_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_context_open,
	.read		= seq_read,
	.write		= dti_context_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int dti_formats_show(struct seq_file *m, void *unused)
{
	dti_event_formats_show(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dti_formats);

/*
 * The control files.  A channel missing one could not be controlled or
 * read as documented, so each is checked: debugfs fails only without
 * memory.
 */
static const struct {
	const char *name;
	umode_t mode;
	const struct file_operations *fops;
} dti_control_files[] = {
	{ "level",		0600, &dti_level_fops },
	{ "reset_consumed",	0200, &dti_reset_consumed_fops },
	{ "stats",		0444, &dti_stats_fops },
	{ "info",		0444, &dti_info_fops },
	{ "formats",		0444, &dti_formats_fops },
	{ "marker_level",	0600, &dti_mark_level_fops },
	{ "stop_on",		0600, &dti_stop_on_fops },
	{ "size",		0600, &dti_size_fops },
	{ "context",		0600, &dti_context_fops },
};

/**
 * dti_fs_create_control - create the files a channel always has
 * @ch: channel with @ch->dir set
 *
 * Context: process context; may sleep.
 * Return: 0, or -ENOMEM if a file could not be created; the caller
 * removes @ch->dir with whatever it holds.
 */
int dti_fs_create_control(struct dti_channel *ch)
{
	struct dentry *d;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dti_control_files); i++) {
		d = debugfs_create_file(dti_control_files[i].name,
					dti_control_files[i].mode, ch->dir, ch,
					dti_control_files[i].fops);
		if (IS_ERR(d))
			return PTR_ERR(d);
	}
	d = debugfs_create_file_unsafe("dump_on_panic", 0600, ch->dir,
				       &ch->panic_records,
				       &dti_panic_records_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	return dti_user_mark_create_files(ch);
}

/**
 * dti_fs_create_views - create the merged views of a channel's buffers
 * @ch: channel whose buffers are being created, not yet published
 *
 * Context: process context, @ch->ctl_lock and @ch->buf_lock held (an
 * open of a view waits for the buffers).
 * Return: 0, or -ENOMEM with neither view left.
 */
int dti_fs_create_views(struct dti_channel *ch)
{
	struct dentry *merged, *merged_ts;

	lockdep_assert_held(&ch->ctl_lock);
	merged = debugfs_create_file("merged", 0444, ch->dir, ch,
				     &dti_merged_fops);
	if (IS_ERR(merged))
		return PTR_ERR(merged);
	merged_ts = debugfs_create_file("merged-ts", 0444, ch->dir, ch,
					&dti_merged_ts_fops);
	if (IS_ERR(merged_ts)) {
		debugfs_remove(merged);
		return PTR_ERR(merged_ts);
	}
	ch->merged = merged;
	ch->merged_ts = merged_ts;
	return 0;
}

/**
 * dti_fs_remove_views - remove the merged views
 * @ch: channel whose buffers are going away
 *
 * Waits for operations on the views that are in progress.
 */
void dti_fs_remove_views(struct dti_channel *ch)
{
	lockdep_assert_held(&ch->ctl_lock);
	debugfs_remove(ch->merged);
	debugfs_remove(ch->merged_ts);
	ch->merged = NULL;
	ch->merged_ts = NULL;
}

int dti_fs_init(void)
{
	dti_root = debugfs_create_dir(DTI_ROOT_DIR, NULL);
	if (IS_ERR(dti_root)) {
		pr_err("cannot create debugfs directory %s: %ld\n",
		       DTI_ROOT_DIR, PTR_ERR(dti_root));
		return PTR_ERR(dti_root);
	}
	debugfs_create_file(DTI_MODULES_FILE, 0400, dti_root, NULL, &dti_modules_fops);
	return 0;
}

void dti_fs_exit(void)
{
	debugfs_remove_recursive(dti_root);
}
