// SPDX-License-Identifier: GPL-2.0
/*
 * User-space markers: a shell script or a daemon drops a line into the
 * same timeline as the driver's records, as ftrace's trace_marker does.
 *
 *   /sys/kernel/debug/dti/<name>/marker
 *	Each write(2) is one text record, "comm[pid]: text", with the
 *	writer's command name and thread id.  One trailing newline is
 *	dropped.  A leading "<N>", N a digit 0..7, is the record's level,
 *	as printk's KERN_<LEVEL> prefixes; without it the level is the
 *	one in marker_level.  A record longer than a text record can be
 *	(DTI_TEXT_MAX - 1 bytes, or less in small sub-buffers) is cut and
 *	flagged DTI_REC_TRUNCATED.
 *   /sys/kernel/debug/dti/<name>/marker_raw
 *	Each write(2) is one binary record holding exactly the bytes
 *	written, cut at the channel's largest payload and flagged
 *	DTI_REC_TRUNCATED if longer.  No stamp, no prefix.
 *   /sys/kernel/debug/dti/<name>/marker_level (dti_fs.c)
 *	The level of markers that give none, 0..7; DTI_LEVEL_DEFAULT at
 *	first, so a channel left at its default level stores them.
 *
 * A write takes every byte it is given, cut or not, so one write(2) is
 * always one record.  A write of no bytes stores nothing.  A record the
 * channel's level filters out is not an error; one that is lost (no
 * room, no buffers) fails the write with the reason's errno, as
 * dti_printk() returns it.  The files are debugfs's: root only.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#include "dti_internal.h"

/* Room for the stamp, "comm[pid]: ", with any pid. */
#define DTI_MARK_STAMP_MAX	(TASK_COMM_LEN + sizeof("[-2147483648]: "))
/* A level prefix, "<N>". */
#define DTI_MARK_PREFIX_LEN	3

/* Length of the level prefix at @p, storing its level in @level; or 0. */
static size_t dti_mark_prefix(const char *p, size_t len, int *level)
{
	if (len < DTI_MARK_PREFIX_LEN || p[0] != '<' || p[2] != '>' ||
	    p[1] < '0' || p[1] > '0' + DTI_LEVEL_MAX)
		return 0;
	*level = p[1] - '0';
	return DTI_MARK_PREFIX_LEN;
}

/*
 * Store one marker of @count bytes from @ubuf.  The bytes are copied
 * after DTI_MARK_STAMP_MAX bytes of room, where a text marker's stamp is
 * then written right in front of its text.  Only as many bytes as can
 * end up in the record are copied, and one more to see a cut.
 */
static ssize_t dti_mark_store(struct dti_channel *ch, const char __user *ubuf,
			      size_t count, bool text)
{
	size_t limit = dti_max_payload(ch), copied, skip = 0, len;
	int level = READ_ONCE(ch->mark_level);
	u8 flags = text ? DTI_REC_TEXT : 0;
	char *buf, *data, *rec;
	ssize_t ret;

	if (!count)
		return 0;
	if (text)
		limit = min_t(size_t, limit, DTI_TEXT_MAX - 1);
	copied = min(count, limit + DTI_MARK_PREFIX_LEN + 1);
	buf = kvmalloc(DTI_MARK_STAMP_MAX + copied, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	data = buf + DTI_MARK_STAMP_MAX;
	if (copy_from_user(data, ubuf, copied)) {
		ret = -EFAULT;
		goto out;
	}
	len = copied;
	rec = data;
	if (text) {
		skip = dti_mark_prefix(data, len, &level);
		if (copied == count && data[len - 1] == '\n')
			len--;
		len = len > skip ? len - skip : 0;
		/* The stamp goes right in front of the text. */
		ret = scnprintf(buf, DTI_MARK_STAMP_MAX, "%s[%d]: ",
				current->comm, task_pid_nr(current));
		rec = data + skip - ret;
		memmove(rec, buf, ret);
		len += ret;
	}
	if (len > limit || copied < count) {
		len = min(len, limit);
		flags |= DTI_REC_TRUNCATED;
	}
	ret = count;
	if (dti_enabled(ch->info, level)) {
		int err = dti_write_record(ch->info, level, flags, rec, len,
					   _THIS_IP_);

		if (err)
			ret = err;
	}
out:
	kvfree(buf);
	return ret;
}

static ssize_t dti_mark_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	return dti_mark_store(file->private_data, ubuf, count, true);
}

static ssize_t dti_mark_raw_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	return dti_mark_store(file->private_data, ubuf, count, false);
}

static const struct file_operations dti_mark_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= dti_mark_write,
	.llseek	= noop_llseek,
};

static const struct file_operations dti_mark_raw_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= dti_mark_raw_write,
	.llseek	= noop_llseek,
};

/**
 * dti_user_mark_create_files - create a channel's marker files
 * @ch: channel with @ch->dir set
 *
 * Context: process context.
 * Return: 0, or -ENOMEM if a file could not be created.
 */
int dti_user_mark_create_files(struct dti_channel *ch)
{
	struct dentry *d;

	d = debugfs_create_file("marker", 0200, ch->dir, ch, &dti_mark_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d = debugfs_create_file("marker_raw", 0200, ch->dir, ch,
				&dti_mark_raw_fops);
	return PTR_ERR_OR_ZERO(d);
}
