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
 * dti_trace_read() keeps the positions relay's read uses (the consumed
 * counters of struct rchan_buf, so poll, relay_buf_full() and
 * reset_consumed work as before), and copies from the ring to the reader
 * on the reader's CPU, with interrupts on: what there is to copy comes
 * from the sub-buffer's own header, and every copy is checked once made.
 *   - The header's number (its record's seq) is stored last, with
 *     release (dti_write_subbuf_header()): a reader that finds there the
 *     number it wants finds the rest of that header (dti_subbuf_peek()).
 *   - Its count of records grows, with release, once a record is whole
 *     (dti_publish()): the reader copies the records counted and so
 *     never one being written, whatever an NMI or a probe logs meanwhile.
 *   - Its state turns DTI_SUBBUF_CLOSED, with release, after its padding
 *     is set (dti_subbuf_start()): a reader that finds it closed knows
 *     where its data ends and that no record will be added.  relay's
 *     padding[] is not used: relay stores it and raises
 *     subbufs_produced with no barrier between the two.
 *   - relay raises subbufs_produced before a writer comes back to a
 *     slot, and dti_subbuf_start() orders that before its first store
 *     there, so a copy holding a byte of the slot's next lap sees the
 *     new count (dti_read_intact()).  Such a copy is not given: the
 *     read() goes on with the oldest sub-buffer kept, over the same user
 *     bytes; the writer counted what it wrote over and the reader sees
 *     the gap in sequence numbers.
 *
 * A read() returns whole units, in the order the ring holds them:
 *   - a sub-buffer's header, at the start of a sub-buffer;
 *   - at the start of a read() in the middle of a version-2 sub-buffer,
 *     a continuation header (DTI_SUBBUF_CONTINUED in dti_record.h) and
 *     the record after it: compact records are told from the ones before
 *     them, which an earlier read() took, so each read() carries the
 *     chains' state and can be decoded alone, as a cat(1) copy is;
 *   - whole records.
 * A read() too small for its first unit fails with EINVAL and consumes
 * nothing.  One of the sub-buffer's size never does: a sub-buffer holds
 * its header besides any record, and a continuation header is as long.
 * So a record of any size the channel accepts comes out whole.
 *
 * The chains' state where a read() stopped is kept for the next one
 * (struct dti_read_pos), so that small reads take time linear in what
 * they read.  Only a read() leaves a reader in the middle of a
 * sub-buffer, so that state always describes the place; a place it does
 * not describe would be reached by a walk from the sub-buffer's start.
 *
 * Locking: the trace file's inode lock serialises readers, as in relay,
 * and guards the buffer's struct dti_read_pos.  Nothing runs on the
 * writer's CPU and nothing waits for CPU hotplug: the copy goes straight
 * from the ring to user memory, and may fault.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/relay.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "dti_internal.h"

/**
 * struct dti_read - one read() of a trace file
 * @buf:	the buffer
 * @pos:	the chains' state where the last read() stopped
 * @ubuf:	where the next unit goes
 * @room:	bytes left at @ubuf
 * @copied:	bytes the read() has given so far
 */
struct dti_read {
	struct rchan_buf *buf;
	struct dti_read_pos *pos;
	char __user *ubuf;
	size_t room;
	size_t copied;
};

/**
 * struct dti_read_sub - the reader's sub-buffer, as its header told
 * @sub:	its slot in the ring
 * @nr:		its number, as subbufs_consumed counts
 * @from:	bytes of it already read (bytes_consumed)
 * @hdr:	what its header said: count, padding, generation, closed
 * @end:	bytes of it that hold data (its size unless closed)
 * @walk:	the walk of its records, from @from on
 * @walked:	records before @walk's place
 * @cut:	the next record is whole but the read() has no room for it
 * @stuck:	the walk stopped at a record the count has, that does not
 *		parse: damage, unless the copy turns out written over
 */
struct dti_read_sub {
	const void *sub;
	size_t nr;
	size_t from;
	struct dti_subbuf_peek hdr;
	size_t end;
	struct dti_walk walk;
	u32 walked;
	bool cut;
	bool stuck;
};

static const void *dti_read_slot(const struct rchan_buf *buf, size_t subbuf)
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
 * Are the bytes taken from the slot of @s, its header's included, still
 * those of sub-buffer @s->nr?  Only if the writer did not come back.
 */
static bool dti_read_intact(const struct rchan_buf *buf, const struct dti_read_sub *s)
{
	/*
	 * Pairs with smp_wmb() in dti_subbuf_start(): subbufs_produced is
	 * raised before the slot's next lap writes a byte there.
	 */
	smp_rmb();
	return !dti_read_lapped(buf, s->nr);
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
 * Find the reader's sub-buffer and read its header as the ring has it.
 * Returns 1 with @s set up, 0 if there is nothing to read yet (the
 * sub-buffer is not framed, or a full no-overwrite ring was read to its
 * end), -ESTALE if the slot no longer holds it or its header is not one
 * dti.ko writes (written over meanwhile, or damage).
 */
static int dti_read_find(struct dti_read *r, struct dti_read_sub *s)
{
	struct rchan_buf *buf = r->buf;
	size_t produced;

	produced = READ_ONCE(buf->subbufs_produced);
	dti_read_catch_up(buf, produced);
	s->nr = buf->subbufs_consumed;
	s->from = buf->bytes_consumed;
	s->sub = dti_read_slot(buf, s->nr);
	if (!dti_subbuf_peek(s->sub, s->nr, &s->hdr))
		return s->nr == produced ? 0 : -ESTALE;
	s->end = dti_subbuf_peek_end(&s->hdr, buf->chan->subbuf_size);
	s->walked = 0;
	s->cut = false;
	s->stuck = false;
	if (!dti_walk_start(&s->walk, s->sub, s->end, s->hdr.records))
		return s->nr == produced ? 0 : -ESTALE;
	return 1;
}

/*
 * Take the walk of @s to the reader's place, with the chains' state
 * there: from @r->pos if it describes that place, else from a walk of
 * the records before it.  False if the place is no record's start in
 * the sub-buffer as the ring holds it now.
 */
static bool dti_read_resume(const struct dti_read *r, struct dti_read_sub *s)
{
	const struct dti_read_pos *p = r->pos;
	struct dti_walk *w = &s->walk;
	struct dti_rview v;

	if (!s->from)
		return true;
	if (p->buf == r->buf && p->generation == s->hdr.generation &&
	    p->subbuf == s->nr && p->offset == s->from && p->records <= s->hdr.records) {
		w->pos = p->offset;
		w->left = s->hdr.records - p->records;
		w->ts = p->ts;
		w->seq = p->seq;
		w->caller = p->caller;
		s->walked = p->records;
		return true;
	}
	while (w->pos < s->from && dti_walk_next(w, &v))
		s->walked++;
	return w->pos == s->from;
}

/*
 * Walk the records of @s that fit in @room bytes, up to the count; say
 * why the walk stopped before the count (@s->cut, @s->stuck).
 */
static void dti_read_walk(struct dti_read_sub *s, size_t room)
{
	struct dti_walk *w = &s->walk;
	struct dti_rview v;
	size_t size;
	u32 left;

	w->end = min(s->end, w->pos + room);
	for (;;) {
		left = w->left;
		if (!left || !dti_walk_next(w, &v))
			break;
		s->walked++;
	}
	if (!left || w->pos >= s->end)
		return;
	size = dti_rec_size_at(s->sub + w->pos, s->end - w->pos, false);
	if (size && w->pos + size > w->end)
		s->cut = true;
	else
		s->stuck = true;
}

/*
 * Copy the units of @s that fit to the reader (see the top of the file):
 * the header, a sub-buffer's or a continuation, then whole records.  The
 * copy is the reader's only once dti_read_intact() has checked it.
 * Returns the bytes copied, 0 if there are none to give now,
 * -EINVAL if the read() has no room for its first unit, -EFAULT.
 */
static ssize_t dti_read_copy(struct dti_read *r, struct dti_read_sub *s)
{
	u8 head[DTI_SUBBUF_HEADER_SIZE] __aligned(sizeof(u64));
	struct dti_subbuf_info *info = (void *)(head + sizeof(struct dti_record));
	const struct dti_walk from = s->walk;
	size_t len;

	dti_read_walk(s, r->room > sizeof(head) ? r->room - sizeof(head) : 0);
	len = s->walk.pos - from.pos;
	if (s->from && !len)
		return s->cut && !r->copied ? -EINVAL : 0;
	if (r->room < sizeof(head)) {
		s->cut = true;
		return r->copied ? 0 : -EINVAL;
	}
	/* The header as this read() found it, whatever changed since. */
	memcpy(head, s->sub, sizeof(head));
	dti_subbuf_peek_put(info, &s->hdr);
	if (s->from)
		dti_walk_continue(&from, info);
	if (copy_to_user(r->ubuf, head, sizeof(head)) ||
	    copy_to_user(r->ubuf + sizeof(head), s->sub + from.pos, len))
		return -EFAULT;
	return sizeof(head) + len;
}

/* The @n bytes dti_read_copy() took from @s reached the reader. */
static void dti_read_give(struct dti_read *r, const struct dti_read_sub *s, size_t n)
{
	struct dti_read_pos *p = r->pos;

	r->ubuf += n;
	r->room -= n;
	r->copied += n;
	r->buf->bytes_consumed = s->walk.pos;
	p->buf = r->buf;
	p->generation = s->hdr.generation;
	p->subbuf = s->nr;
	p->offset = s->walk.pos;
	p->records = s->walked;
	p->ts = s->walk.ts;
	p->seq = s->walk.seq;
	p->caller = s->walk.caller;
}

/*
 * Give the reader the next units of its sub-buffer.  Returns 1 if that
 * sub-buffer was read to its end and the read() may go on with the next,
 * 0 if the read() is over, -EINVAL or -EFAULT.
 */
static int dti_read_step(struct dti_read *r)
{
	struct dti_read_sub s;
	ssize_t n;
	int ret;

	for (;;) {
		ret = dti_read_find(r, &s);
		if (!ret)
			return 0;
		if (ret < 0)
			goto next;	/* written over, or damage */
		if (s.hdr.closed && s.from >= s.end)
			goto next;	/* read to its end before it closed */
		if (s.from >= r->buf->chan->subbuf_size)
			return 0;	/* the rest of a damaged one, skipped */
		n = dti_read_resume(r, &s) ? dti_read_copy(r, &s) : -ESTALE;
		if (!dti_read_intact(r->buf, &s))
			goto next;	/* written over meanwhile */
		if (n == -ESTALE)
			s.stuck = true;	/* not a place a read() leaves */
		else if (n < 0)
			return n;
		else if (n)
			dti_read_give(r, &s, n);
		if (s.cut || (!s.hdr.closed && !s.stuck))
			return 0;
		if (!s.hdr.closed) {
			/* Damage in the one being written: skip the rest. */
			r->buf->bytes_consumed = r->buf->chan->subbuf_size;
			return 0;
		}
next:
		dti_read_next_subbuf(r->buf);
		if (r->copied)
			return 1;
	}
}

static ssize_t dti_trace_read(struct file *filp, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct rchan_buf *buf = filp->private_data;
	struct dti_channel *ch = buf->chan->private_data;
	struct dti_read r = {
		.buf = buf,
		.pos = per_cpu_ptr(ch->read_pos, buf->cpu),
		.ubuf = ubuf,
		.room = count,
	};
	int ret = 0;

	if (!count)
		return 0;
	inode_lock(file_inode(filp));
	while (r.room && (ret = dti_read_step(&r)) > 0)
		;
	inode_unlock(file_inode(filp));
	if (!r.copied)
		return ret;
	*ppos += r.copied;
	return r.copied;
}

static int dti_trace_open(struct inode *inode, struct file *filp)
{
	return relay_file_operations.open(inode, filp);
}

static __poll_t dti_trace_poll(struct file *filp, poll_table *wait)
{
	return relay_file_operations.poll(filp, wait);
}

static int dti_trace_release(struct inode *inode, struct file *filp)
{
	return relay_file_operations.release(inode, filp);
}

/*
 * The per-CPU trace files' operations: relay's, but for read() (see
 * above).  relay's open, poll and release are static in kernel/relay.c,
 * so they are called through relay_file_operations, the table relay
 * exports.  Left out:
 *   - splice_read (relay's before 6.5), which would copy unchecked as
 *     relay's read does;
 *   - llseek (no_llseek before 6.12): without one, lseek() fails with
 *     ESPIPE as it did;
 *   - mmap: debugfs's file proxy forwards no mmap, so a file made by
 *     debugfs_create_file() never maps (ENODEV), relay's or not.
 * The owner pins dti.ko while a trace file is open, since read() is here.
 */
const struct file_operations dti_trace_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_trace_open,
	.poll		= dti_trace_poll,
	.read		= dti_trace_read,
	.release	= dti_trace_release,
};
