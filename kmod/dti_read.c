// SPDX-License-Identifier: GPL-2.0
/*
 * DTI trace files: relay's file operations with a read() that returns
 * whole records only, never bytes of a record a writer is changing.
 *
 * relay_file_read() copies from the ring straight to the reader with
 * nothing between it and the writer, which can change what it copies:
 *   - in the sub-buffer being written, relay's offset already counts a
 *     record the writer has reserved but not filled in yet;
 *   - in an overwrite channel, a writer that laps the ring comes back to
 *     the sub-buffer being copied and writes over it.
 * A reader then gets the start of one record and the rest of another,
 * which can even look like a valid header (the stress run found one).
 *
 * dti_trace_read() reads the positions relay's read uses (the consumed
 * counters of struct rchan_buf, so poll, relay_buf_full() and
 * reset_consumed work as before), through a bounce buffer:
 *   - a closed sub-buffer is copied while tracing goes on; the copy is
 *     kept if the writer has not come back to its slot meanwhile, else
 *     the sub-buffer is skipped whole: its records were overwritten (the
 *     writer counted them) and the reader sees a gap in sequence numbers.
 *     relay raises subbufs_produced before it writes a sub-buffer and
 *     dti_subbuf_start() orders that before the first byte (smp_wmb()),
 *     so a copy that holds a byte of the new lap sees the new count.
 *   - the sub-buffer being written is copied on its CPU, where writers
 *     run with interrupts off, so the copy ends after a whole record.  A
 *     record an NMI adds meanwhile comes after the copied bytes.
 *   - a read() that starts in the middle of a version-2 sub-buffer gets a
 *     continuation header first (DTI_SUBBUF_CONTINUED in dti_record.h):
 *     its compact records are told from the ones before them, which an
 *     earlier read() took, so each read() carries the chains' state.  It
 *     comes from a walk of the records already read, in the ring; the
 *     checks that keep the copy also keep the walk (a writer that laps
 *     the ring meanwhile has the step skip or redone).
 *
 * Locking: the trace file's inode lock serialises readers, as in relay.
 * The copy on the writer's CPU is an IPI (interrupts off, no lock taken),
 * which needs no lock while that CPU is online.  An offline CPU's copy is
 * made here, under cpu_hotplug_lock held for reading so that it stays
 * offline; that lock is tried, never waited for.  A read() of the file
 * must not wait for CPU hotplug: a CPU coming up holds cpu_hotplug_lock,
 * then relay_channels_mutex (relay_prepare_cpu()), and relay_close()
 * under relay_channels_mutex removes the trace files, taking each one's
 * inode lock (simple_recursive_removal()) and waiting for the read()s in
 * progress on it to return (debugfs's active users: no lock lockdep
 * sees).  A reader that waited for hotplug while its channel was
 * destroyed would close that circle (lockdep on the debug kernel
 * reported the inode lock's part of it).  So while hotplug is under way,
 * the read() of an offline CPU's sub-buffer being written ends early,
 * with what it has (0 if nothing): the bytes stay for the next one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>

#include "dti_internal.h"

/* Most bytes one step copies, and so keeps the writer's CPU waiting for */
#define DTI_READ_STEP_MAX	(64 * 1024)

/**
 * struct dti_read_step - one copy of part of a sub-buffer
 * @buf:	the buffer
 * @bounce:	what the read() gets: the continuation header, if any, then
 *		the bytes copied
 * @data:	where the bytes copied go, in @bounce
 * @cont:	bytes of the continuation header at @bounce, or 0
 * @subbuf:	number of the sub-buffer (counted as subbufs_consumed is)
 * @from:	offset in it of the first byte
 * @max:	most bytes to copy
 * @len:	bytes copied
 * @end:	end of its data, for a closed sub-buffer
 * @closed:	the sub-buffer is closed (else it is the one being written)
 * @first:	the read() has copied nothing yet: @max may cut a record,
 *		and a start in the middle of a sub-buffer takes a
 *		continuation header
 */
struct dti_read_step {
	struct rchan_buf *buf;
	void *bounce;
	void *data;
	size_t cont;
	size_t subbuf;
	size_t from;
	size_t max;
	size_t len;
	size_t end;
	bool closed;
	bool first;
};

static void *dti_read_slot(const struct rchan_buf *buf, size_t subbuf)
{
	return buf->start + (subbuf % buf->chan->n_subbufs) * buf->chan->subbuf_size;
}

/*
 * Has the writer come back to the slot of sub-buffer @subbuf?  In a
 * no-overwrite channel it never does before the reader consumed it:
 * dti_subbuf_start() writes nothing into a full ring (whose offset is
 * meanwhile 0 for a moment, then subbuf_size + 1).
 */
static bool dti_read_lapped(const struct rchan_buf *buf, size_t subbuf)
{
	const struct dti_channel *ch = buf->chan->private_data;

	if (ch->flags & DTI_F_NO_OVERWRITE)
		return false;
	return READ_ONCE(buf->subbufs_produced) - subbuf >= buf->chan->n_subbufs;
}

/*
 * Runs on the buffer's CPU with interrupts off: copy what the writer
 * finished of the sub-buffer it writes, if that is still @st->subbuf.
 */
static void dti_read_current(void *arg)
{
	struct dti_read_step *st = arg;
	struct rchan_buf *buf = st->buf;
	size_t offset = buf->offset;

	if (buf->subbufs_produced != st->subbuf ||
	    offset > buf->chan->subbuf_size) {
		st->closed = true;	/* closed meanwhile: read it as such */
		return;
	}
	if (offset > st->from) {
		st->len = min(offset - st->from, st->max);
		memcpy(st->data, dti_read_slot(buf, st->subbuf) + st->from,
		       st->len);
	}
}

/*
 * Run dti_read_current() on the buffer's CPU, or here if it is offline.
 * False if it is offline while a CPU hotplug operation is under way:
 * nothing was copied.
 */
static bool dti_read_on_cpu(struct dti_read_step *st)
{
	if (!smp_call_function_single(st->buf->cpu, dti_read_current, st, 1))
		return true;
	if (!cpus_read_trylock())
		return false;
	dti_on_cpu(st->buf->cpu, dti_read_current, st);
	cpus_read_unlock();
	return true;
}

/*
 * A reader the writer lapped goes on at the oldest sub-buffer kept.
 *
 * A no-overwrite ring is never lapped: its writer starts no sub-buffer in
 * an unread slot.  When such a ring is full, relay_switch_subbuf() still
 * sets offset to 0 for a moment before dti_subbuf_start() refuses, which
 * relay's own test (produced - consumed >= n_subbufs with offset <=
 * subbuf_size) takes for a lap: it would drop the oldest sub-buffer, even
 * a half-read one, and the reader would get half a sub-buffer followed by
 * the next one's header.
 *
 * A consumed count ahead of produced (nothing should make one) is taken
 * as all read, rather than as a sub-buffer to copy.
 */
static void dti_read_catch_up(struct rchan_buf *buf, size_t produced)
{
	const struct dti_channel *ch = buf->chan->private_data;
	size_t n = buf->chan->n_subbufs;

	if ((ssize_t)(produced - buf->subbufs_consumed) < 0) {
		buf->subbufs_consumed = produced;
		buf->bytes_consumed = 0;
		return;
	}
	if (ch->flags & DTI_F_NO_OVERWRITE)
		return;
	if (READ_ONCE(buf->offset) <= buf->chan->subbuf_size &&
	    produced - buf->subbufs_consumed >= n) {
		buf->subbufs_consumed = produced - n + 1;
		buf->bytes_consumed = 0;
	}
}

static void dti_read_next_subbuf(struct rchan_buf *buf)
{
	buf->subbufs_consumed++;
	buf->bytes_consumed = 0;
}

/*
 * A copy that the step's limit cut short ends at its last whole record
 * instead, so that a reader the writer laps before its next read() never
 * holds the start of a record followed by another sub-buffer.  A first
 * record longer than the limit is cut only if the read() has nothing
 * yet (the reader asked for less than a record) and gets no
 * continuation header; else the read() ends before it.  The copy starts
 * at a record (the reads before ended at one).
 */
static size_t dti_read_whole(const struct dti_read_step *st)
{
	size_t pos = 0, size;

	while ((size = dti_rec_size_at(st->data + pos, st->len - pos,
				       st->from + pos == 0)))
		pos += size;
	return pos || !st->first || st->cont ? pos : st->len;
}

/* dti_read_whole(), in @st->len; -EINVAL if a continuation header has none */
static ssize_t dti_read_cut(struct dti_read_step *st)
{
	st->len = dti_read_whole(st);
	return st->len || !st->cont ? st->len : -EINVAL;
}

/*
 * Set up @st->cont, and @st->data after it: the continuation header a
 * first step that starts in the middle of a version-2 sub-buffer gives
 * (see the top of the file), from a walk of the records before @st->from
 * in the ring.  The walk's bytes are checked as the copy's are, after it:
 * a slot the writer came back to meanwhile has the step skip it (closed)
 * or start again (the one being written, which the copy finds closed).
 * A walk that does not end at @st->from can only be such a slot's; it
 * gives no header.
 */
static void dti_read_cont(struct dti_read_step *st)
{
	const void *sub = dti_read_slot(st->buf, st->subbuf);
	struct dti_subbuf_info *info;
	struct dti_rview v;
	struct dti_walk w;

	st->cont = 0;
	st->data = st->bounce;
	if (!st->first || !st->from ||
	    !dti_walk_start(&w, sub, st->from, U32_MAX) ||
	    w.version == DTI_RECORD_VERSION_1)
		return;
	while (w.pos < st->from && dti_walk_next(&w, &v))
		;
	if (w.pos != st->from)
		return;
	memcpy(st->bounce, sub, DTI_SUBBUF_HEADER_SIZE);
	info = st->bounce + sizeof(struct dti_record);
	info->padding = 0;
	info->records = 0;
	info->state = DTI_SUBBUF_CONTINUED;
	info->seq_base = w.seq;
	info->ts_base = w.ts;
	info->caller_prev = w.caller;
	st->cont = DTI_SUBBUF_HEADER_SIZE;
	st->data = st->bounce + st->cont;
}

/*
 * Copy the next unread bytes into @st->data, up to @max bytes with the
 * continuation header before them.  Returns the bytes copied (without
 * the header), 0 if there are none now, -EAGAIN if the sub-buffer being
 * written is an offline CPU's and a CPU hotplug operation is under way,
 * -EINVAL if a continuation header leaves no room in @max for a record.
 */
static ssize_t dti_read_step(struct dti_read_step *st, size_t max)
{
	struct rchan_buf *buf = st->buf;
	size_t size = buf->chan->subbuf_size, produced;

	for (;;) {
		produced = READ_ONCE(buf->subbufs_produced);
		dti_read_catch_up(buf, produced);
		st->subbuf = buf->subbufs_consumed;
		st->from = buf->bytes_consumed;
		st->len = 0;
		st->closed = st->subbuf != produced ||
			     READ_ONCE(buf->offset) > size;
		if (!st->closed && READ_ONCE(buf->offset) <= st->from)
			return 0;
		if (st->subbuf == produced && st->closed)
			return 0;	/* full no-overwrite ring, all read */
		if (st->closed) {
			/* subbufs_produced was raised after the padding was set. */
			smp_rmb();
			st->end = size - READ_ONCE(buf->padding[st->subbuf %
								buf->chan->n_subbufs]);
		}
		if (!st->closed || st->from < st->end) {
			dti_read_cont(st);
			if (max <= st->cont)
				return -EINVAL;
			st->max = max - st->cont;
		}
		if (!st->closed) {
			if (!dti_read_on_cpu(st))
				return -EAGAIN;
			if (!st->closed)
				return st->len < st->max ? st->len : dti_read_cut(st);
			continue;
		}
		if (st->from < st->end) {
			st->len = min(st->end - st->from, st->max);
			memcpy(st->data, dti_read_slot(buf, st->subbuf) + st->from,
			       st->len);
			/* Pairs with smp_wmb() in dti_subbuf_start(). */
			smp_rmb();
			if (!dti_read_lapped(buf, st->subbuf))
				return st->end - st->from <= st->max ? st->len :
				       dti_read_cut(st);
		}
		/* Read to its end, or written over: on to the next one. */
		dti_read_next_subbuf(buf);
	}
}

/* The bytes of @st reached the reader. */
static void dti_read_consume(struct rchan_buf *buf, const struct dti_read_step *st)
{
	buf->bytes_consumed = st->from + st->len;
	if (st->closed && buf->bytes_consumed >= st->end)
		dti_read_next_subbuf(buf);
}

static ssize_t dti_trace_read(struct file *filp, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct dti_read_step st = { .buf = filp->private_data };
	size_t step = min3(count, st.buf->chan->subbuf_size,
			   (size_t)DTI_READ_STEP_MAX);
	ssize_t copied = 0, n;

	if (!count)
		return 0;
	st.bounce = kvmalloc(step, GFP_KERNEL);
	if (!st.bounce)
		return -ENOMEM;
	inode_lock(file_inode(filp));
	while (count) {
		st.first = !copied;
		/* -EAGAIN: what is left waits for the next read() ("Locking") */
		n = dti_read_step(&st, min(count, step));
		if (n <= 0) {
			if (n == -EINVAL && !copied)
				copied = n;
			break;
		}
		if (copy_to_user(ubuf, st.bounce, st.cont + st.len)) {
			if (!copied)
				copied = -EFAULT;
			break;
		}
		dti_read_consume(st.buf, &st);
		ubuf += st.cont + st.len;
		count -= st.cont + st.len;
		copied += st.cont + st.len;
	}
	inode_unlock(file_inode(filp));
	kvfree(st.bounce);
	if (copied > 0)
		*ppos += copied;
	return copied;
}

/* relay's operations with dti_trace_read(); set up by dti_read_init() */
struct file_operations dti_trace_fops;

/**
 * dti_read_init - set up the file operations of the per-CPU trace files
 *
 * relay's own, but for read() (see above) and splice, which would copy
 * unchecked as relay's read does.  "Whole records only" is read()'s
 * promise: relay's mmap() is kept on purpose, for copies of the whole
 * ring as it is (`dti snapshot --raw`), which the reader checks record by
 * record as it checks a memory dump, since a writer may be in the middle
 * of any of them.  The owner pins dti.ko while a trace file is open,
 * since its read() is here.
 *
 * Context: process context, at module load.
 */
void dti_read_init(void)
{
	dti_trace_fops = relay_file_operations;
	dti_trace_fops.owner = THIS_MODULE;
	dti_trace_fops.read = dti_trace_read;
	dti_trace_fops.splice_read = NULL;
}
