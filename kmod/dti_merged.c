// SPDX-License-Identifier: GPL-2.0
/*
 * DTI merged views: "merged" and "merged-ts", of a channel's buffers and of
 * the previous boot's records of a persistent channel; and the per-CPU
 * files of persistent channels.
 *
 * Opening a view takes a snapshot of every CPU's buffer and merges the
 * records by timestamp (ties go to the lower CPU; each CPU keeps its own
 * order).  Reading never consumes: every open shows all records the
 * buffers hold at that moment, and reset_consumed does not affect it.
 *
 * The snapshot is consistent without stopping writers and without
 * running anything on their CPUs.  Each sub-buffer is copied from the
 * opener's CPU as a trace file's reader reads it (dti_snap_subbuf()):
 * its header tells how many of its records are whole (the one being
 * written included: a record an NMI or a probe adds meanwhile is left
 * out) and, once closed, where its data ends; a copy whose slot the
 * writer began again meanwhile is discarded, and so are the oldest
 * sub-buffers the writer reached before the copy ended.
 *
 *   merged:     the text of text records, as logged (a newline is added
 *               if the text has none); binary payloads as hex bytes.
 *   merged-ts:  the same, each line prefixed with
 *               "[seconds.nanoseconds] cpuN Llevel #seq caller: ", where
 *               N is the CPU that logged the record and seq counts
 *               records in the buffer that holds it (see dti_record.h);
 *               in the previous boot's views the caller is an address
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "dti_internal.h"

/* Bytes of binary payload per "%*ph" conversion (its limit). */
#define DTI_HEX_CHUNK	64
/* Event formats a view keeps: the most a channel can have */
#define DTI_VIEW_FORMATS	64

/**
 * struct dti_view_fmt - an event format a view found in its snapshots
 * @id:		the type's id
 * @len:	bytes of @fmt
 * @fmt:	the format (struct dti_event_format and what follows it)
 */
struct dti_view_fmt {
	int id;
	u32 len;
	const void *fmt;
};

/**
 * struct dti_view_cpu - where a view's merge is in one CPU's snapshot
 * @walk:	the walk of sub-buffer @s
 * @head:	the CPU's next record, while @have
 * @s:		number of the sub-buffer walked
 * @have:	@head holds a record
 */
struct dti_view_cpu {
	struct dti_walk walk;
	struct dti_rview head;
	size_t s;
	bool have;
};

/**
 * struct dti_view - a merged snapshot, the private data of an open view
 * @with_ts:	merged-ts format
 * @nr_cpus:	entries in @cpus and @at
 * @cpus:	per-CPU snapshots
 * @at:		per CPU, the merge's place in its snapshot
 * @pos:	the number of the record the merge is at
 * @cur:	the CPU whose head is that record, or @nr_cpus at the end
 * @prev:	the previous boot's records the snapshots borrow, or NULL
 * @formats:	event formats found in the snapshots, the first of each id
 * @nr_formats:	entries in @formats
 *
 * The records are merged as they are read, from a walk of each CPU's
 * sub-buffers: compact records are read in order from their
 * sub-buffer's start (dti_walk_next()), and no index is kept.  A read
 * that goes back (seq_file restarts at an earlier record) merges again
 * from the start.
 */
struct dti_view {
	bool with_ts;
	unsigned int nr_cpus;
	struct dti_snap_cpu *cpus;
	struct dti_view_cpu *at;
	loff_t pos;
	unsigned int cur;
	struct dti_prev *prev;
	struct dti_view_fmt formats[DTI_VIEW_FORMATS];
	unsigned int nr_formats;
};

/* Range of sub-buffer numbers holding data: [*first, *last]. */
static void dti_snap_range(const struct dti_snap_cpu *sc, bool *partial,
			   size_t *first, size_t *last)
{
	size_t oldest, oldest_after, last_after, n_subbufs = sc->n_subbufs;

	*partial = sc->offset <= sc->subbuf_size;
	dti_ring_range(sc->produced, sc->offset, sc->subbuf_size, n_subbufs,
		       &oldest, last);
	/*
	 * If the writer started new sub-buffers while the ring was copied,
	 * it reused the slots of the oldest: the ring it held after the
	 * copy starts later.  A full no-overwrite ring that a reader made
	 * room in resumes with sub-buffer @produced, in the slot of the
	 * oldest, with relay's count unchanged: only its offset says so.
	 */
	dti_ring_range(sc->produced_after, sc->offset_after, sc->subbuf_size,
		       n_subbufs, &oldest_after, &last_after);
	*first = max(oldest, oldest_after);
}

/*
 * Copy sub-buffer @s of the ring into its slot of the snapshot, from
 * this CPU while its writer goes on: its header read as a trace file's
 * reader reads it (dti_subbuf_peek()), a closed one up to its padding,
 * the one being written whole, its records after those it counted left
 * out.  The copy is kept if the slot's header still has its number after
 * it: a writer that begins the slot again changes that number before
 * anything else there.  The copy's header says what was taken (count,
 * state, padding), and @sc->padding the bytes of it used.  Returns false,
 * the slot's copy unnumbered (dti_subbuf_is() skips it), if the ring
 * does not hold sub-buffer @s whole.
 */
static bool dti_snap_subbuf(struct dti_snap_cpu *sc, size_t s)
{
	size_t size = sc->subbuf_size, idx = s % sc->n_subbufs, end;
	const void *src = sc->buf->start + idx * size;
	struct dti_record *hdr = sc->data + idx * size;
	struct dti_subbuf_info *info = (void *)(hdr + 1);
	struct dti_subbuf_peek p;
	struct dti_rview v;
	struct dti_walk w;

	if (!dti_subbuf_peek(src, s, &p))
		goto none;
	end = dti_subbuf_peek_end(&p, size);
	memcpy(hdr, src, end);
	/* Pairs with smp_wmb() in dti_write_subbuf_header(). */
	smp_rmb();
	if (READ_ONCE(((const struct dti_record *)src)->seq) != s)
		goto none;
	dti_subbuf_peek_put(info, &p);
	if (!p.closed) {
		/* Where the records counted end, in the copy */
		if (!dti_walk_start(&w, hdr, size, p.records))
			goto none;
		while (dti_walk_next(&w, &v))
			;
		end = w.pos;
	}
	sc->padding[idx] = size - end;
	return true;

none:
	hdr->seq = DTI_SUBBUF_UNNUMBERED;
	sc->padding[idx] = size;
	return false;
}

/*
 * Copy the ring @sc->buf of @ch into @sc, which the caller frees with
 * dti_snap_free() whether this succeeds or not.  Nothing runs on the
 * ring's CPU and no interrupts are disabled: each sub-buffer is copied from here
 * and checked (dti_snap_subbuf()).  The sub-buffer being written, if
 * the ring has one, is sub-buffer @produced; a full no-overwrite ring
 * has none, and its slot holds the oldest kept.
 */
static int dti_snap_cpu(struct dti_channel *ch, struct dti_snap_cpu *sc)
{
	size_t size = ch->subbuf_size, n = ch->n_subbufs, s, cur;
	struct rchan_buf *buf = sc->buf;

	sc->subbuf_size = size;
	sc->n_subbufs = n;
	sc->data = kvmalloc(size * n, GFP_KERNEL);
	sc->padding = kvmalloc_array(n, sizeof(*sc->padding), GFP_KERNEL);
	if (!sc->data || !sc->padding)
		return -ENOMEM;

	sc->produced = READ_ONCE(buf->subbufs_produced);
	for (s = sc->produced >= n - 1 ? sc->produced - (n - 1) : 0; s < sc->produced; s++)
		dti_snap_subbuf(sc, s);
	cur = sc->produced % n;
	if (dti_snap_subbuf(sc, sc->produced)) {
		sc->offset = size - sc->padding[cur];
	} else {
		sc->offset = size + 1;
		if (sc->produced >= n)
			dti_snap_subbuf(sc, sc->produced - n);
	}
	sc->produced_after = READ_ONCE(buf->subbufs_produced);
	sc->offset_after = READ_ONCE(buf->offset);
	return 0;
}

/* The id of a DTI_REC_TYPED or DTI_REC_FORMAT record, or -1 if it has none */
static int dti_rec_event_id(const struct dti_rview *rec)
{
	if (rec->len < sizeof(u16))
		return -1;
	return get_unaligned((const u16 *)rec->payload);
}

/* Keep the first format of each id found in the snapshot, up to a limit. */
static void dti_view_format(struct dti_view *v, const struct dti_rview *rec)
{
	int id = dti_rec_event_id(rec);
	unsigned int i;

	if (id < 0 || v->nr_formats == DTI_VIEW_FORMATS)
		return;
	for (i = 0; i < v->nr_formats; i++)
		if (v->formats[i].id == id)
			return;
	v->formats[v->nr_formats++] = (struct dti_view_fmt){
		.id = id, .len = rec->len, .fmt = rec->payload,
	};
}

/*
 * Whether @sub starts with the header of sub-buffer number @s: the
 * writer frames a sub-buffer with its number before any record goes in,
 * so a slot it began again while it was copied says a later number.
 */
static bool dti_subbuf_is(const void *sub, size_t s)
{
	const struct dti_record *hdr = sub;

	return hdr->magic == DTI_RECORD_MAGIC && (hdr->flags & DTI_REC_SUBBUF) &&
	       hdr->seq == s;
}

/*
 * Sub-buffer number @s of a snapshot, if it holds data, and in *@len how
 * many of its bytes are used; NULL if it holds none.
 */
static const void *dti_snap_sub(const struct dti_snap_cpu *sc, bool partial,
				size_t s, size_t *len)
{
	size_t size = sc->subbuf_size, idx = s % sc->n_subbufs;
	const void *sub = sc->data + idx * size;

	/* a slot the writer began again while it was copied: skip */
	if (!dti_subbuf_is(sub, s))
		return NULL;
	if (s == sc->produced)
		*len = partial ? sc->offset : 0;
	else
		*len = size - min(sc->padding[idx], size);
	return sub;
}

/*
 * Hand @fn the data of every sub-buffer of a snapshot that holds any,
 * oldest first: the sub-buffer number, where it starts, and how many of
 * its bytes are used.
 */
static size_t dti_snap_for_each(const struct dti_snap_cpu *sc,
				size_t (*fn)(const void *sub, size_t len, void *arg),
				void *arg)
{
	size_t s, first, last, len, count = 0;
	const void *sub;
	bool partial;

	dti_snap_range(sc, &partial, &first, &last);
	for (s = first; s <= last && s <= sc->produced; s++) {
		sub = dti_snap_sub(sc, partial, s, &len);
		if (sub)
			count += fn(sub, len, arg);
	}
	return count;
}

/* Start a walk of the sub-buffer @sub, @len of its bytes used. */
static bool dti_snap_walk_start(struct dti_walk *w, const void *sub, size_t len)
{
	const struct dti_subbuf_info *info = sub + sizeof(struct dti_record);

	return len >= DTI_SUBBUF_HEADER_SIZE_V1 &&
	       dti_walk_start(w, sub, len, info->records);
}

/* Note the formats of one sub-buffer in the view @arg. */
static size_t dti_view_sub_formats(const void *sub, size_t len, void *arg)
{
	struct dti_walk w;
	struct dti_rview rec;

	if (!dti_snap_walk_start(&w, sub, len))
		return 0;
	while (dti_walk_next(&w, &rec))
		if (rec.flags & DTI_REC_FORMAT)
			dti_view_format(arg, &rec);
	return 0;
}

/*
 * The next trace record of CPU @c's snapshot into its head, walking on
 * into the sub-buffers after the one it is in; false at its end.
 */
static bool dti_view_cpu_next(struct dti_view *v, unsigned int c)
{
	const struct dti_snap_cpu *sc = &v->cpus[c];
	struct dti_view_cpu *at = &v->at[c];
	size_t first, last, len;
	const void *sub;
	bool partial;

	dti_snap_range(sc, &partial, &first, &last);
	for (;;) {
		while (dti_walk_next(&at->walk, &at->head))
			if (!(at->head.flags & DTI_REC_FORMAT))
				return at->have = true;
		do {
			if (++at->s > last || at->s > sc->produced)
				return at->have = false;
			sub = dti_snap_sub(sc, partial, at->s, &len);
		} while (!sub || !dti_snap_walk_start(&at->walk, sub, len));
	}
}

/* Make the CPU whose head is the oldest the current one. */
static void dti_view_pick(struct dti_view *v)
{
	unsigned int c;

	/* Ties go to the lower CPU. */
	v->cur = v->nr_cpus;
	for (c = 0; c < v->nr_cpus; c++)
		if (v->at[c].have &&
		    (v->cur == v->nr_cpus || v->at[c].head.ts_ns < v->at[v->cur].head.ts_ns))
			v->cur = c;
}

/* Start the merge over, at the first record. */
static void dti_view_rewind(struct dti_view *v)
{
	size_t first, last;
	unsigned int c;
	bool partial;

	for (c = 0; c < v->nr_cpus; c++) {
		dti_snap_range(&v->cpus[c], &partial, &first, &last);
		/* One before the first: dti_view_cpu_next() goes on from it. */
		v->at[c].s = first - 1;
		v->at[c].walk.left = 0;
		dti_view_cpu_next(v, c);
	}
	v->pos = 0;
	dti_view_pick(v);
}

/* Take the current record and move to the next one; false at the end. */
static bool dti_view_advance(struct dti_view *v)
{
	if (v->cur == v->nr_cpus)
		return false;
	dti_view_cpu_next(v, v->cur);
	v->pos++;
	dti_view_pick(v);
	return v->cur != v->nr_cpus;
}

static void dti_view_free(struct dti_view *v)
{
	unsigned int c;

	if (!v)
		return;
	for (c = 0; c < v->nr_cpus; c++)
		dti_snap_free(&v->cpus[c]);
	kfree(v->cpus);
	kfree(v->at);
	if (v->prev)
		dti_prev_put(v->prev);
	kfree(v);
}

/* Find the formats of the snapshots in @v->cpus and start the merge. */
static int dti_view_index(struct dti_view *v)
{
	unsigned int c;

	v->at = kcalloc(max(v->nr_cpus, 1U), sizeof(*v->at), GFP_KERNEL);
	if (!v->at)
		return -ENOMEM;
	for (c = 0; c < v->nr_cpus; c++)
		dti_snap_for_each(&v->cpus[c], dti_view_sub_formats, v);
	dti_view_rewind(v);
	return 0;
}

static int dti_view_fill(struct dti_channel *ch, struct rchan *rchan,
			 struct dti_view *v)
{
	struct rchan_buf *buf;
	unsigned int cpu;
	int ret;

	v->cpus = kcalloc(num_possible_cpus(), sizeof(*v->cpus), GFP_KERNEL);
	if (!v->cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		buf = *per_cpu_ptr(rchan->buf, cpu);
		if (!buf)
			continue;
		v->cpus[v->nr_cpus].buf = buf;
		ret = dti_snap_cpu(ch, &v->cpus[v->nr_cpus++]);
		if (ret)
			return ret;
	}
	return dti_view_index(v);
}

/**
 * dti_snap_free - free a snapshot's copy, unless it is borrowed
 * @sc: snapshot; may be partly filled
 */
void dti_snap_free(struct dti_snap_cpu *sc)
{
	if (sc->borrowed)
		return;
	kvfree(sc->data);
	kvfree(sc->padding);
	sc->data = NULL;
	sc->padding = NULL;
}

static struct dti_view *dti_view_create(struct dti_channel *ch, bool with_ts)
{
	struct dti_view *v;
	struct rchan *rchan;
	int ret;

	v = kzalloc_obj(*v, GFP_KERNEL);
	if (!v)
		return ERR_PTR(-ENOMEM);
	v->with_ts = with_ts;

	mutex_lock(&ch->buf_lock);
	rchan = rcu_dereference_protected(ch->rchan,
					  lockdep_is_held(&ch->buf_lock));
	if (rchan)
		ret = dti_view_fill(ch, rchan, v);
	else
		ret = -ENODEV;
	mutex_unlock(&ch->buf_lock);

	if (ret) {
		dti_view_free(v);
		return ERR_PTR(ret);
	}
	return v;
}

static void *dti_merged_start(struct seq_file *m, loff_t *pos)
{
	struct dti_view *v = m->private;

	if (*pos < v->pos)
		dti_view_rewind(v);
	while (v->pos < *pos && dti_view_advance(v))
		;
	if (v->pos != *pos || v->cur == v->nr_cpus)
		return NULL;
	return &v->at[v->cur];
}

static void *dti_merged_next(struct seq_file *m, void *p, loff_t *pos)
{
	++*pos;
	return dti_merged_start(m, pos);
}

static void dti_merged_stop(struct seq_file *m, void *p)
{
}

/* Print event @rec through its format, if the snapshot has it; true if printed. */
static bool dti_show_event(struct seq_file *m, const struct dti_view *v,
			   const struct dti_rview *rec)
{
	int id = dti_rec_event_id(rec);
	unsigned int i;

	for (i = 0; id >= 0 && i < v->nr_formats; i++) {
		if (v->formats[i].id != id)
			continue;
		if (dti_event_show(m, v->formats[i].fmt, v->formats[i].len,
				   rec->payload, rec->len))
			return false;
		if (!seq_has_overflowed(m) && (!m->count || m->buf[m->count - 1] != '\n'))
			seq_putc(m, '\n');
		return true;
	}
	return false;
}

/* @len bytes at @data as hex, a space between bytes, and a newline */
static void dti_show_hex(struct seq_file *m, const u8 *data, size_t len)
{
	size_t pos, chunk;

	for (pos = 0; pos < len; pos += chunk) {
		chunk = min_t(size_t, len - pos, DTI_HEX_CHUNK);
		seq_printf(m, "%s%*ph", pos ? " " : "", (int)chunk, data + pos);
	}
	seq_putc(m, '\n');
}

/*
 * A blob (DTI_EVENT_ID_BLOB) as "blob TYPE LEN: HEX"; false if @rec is
 * none, or one whose media type runs past its payload.
 */
static bool dti_show_blob(struct seq_file *m, const struct dti_rview *rec)
{
	const u8 *data = rec->payload;
	size_t type_len;

	if (rec->len < DTI_BLOB_HDR_SIZE || dti_rec_event_id(rec) != DTI_EVENT_ID_BLOB)
		return false;
	type_len = data[sizeof(u16)];
	if (DTI_BLOB_HDR_SIZE + type_len > rec->len)
		return false;
	seq_printf(m, "blob %.*s %zu:%s", (int)type_len, data + DTI_BLOB_HDR_SIZE,
		   rec->len - DTI_BLOB_HDR_SIZE - type_len,
		   rec->len > DTI_BLOB_HDR_SIZE + type_len ? " " : "");
	dti_show_hex(m, data + DTI_BLOB_HDR_SIZE + type_len,
		     rec->len - DTI_BLOB_HDR_SIZE - type_len);
	return true;
}

static void dti_show_payload(struct seq_file *m, const struct dti_view *v,
			     const struct dti_rview *rec)
{
	const u8 *data = rec->payload;

	if ((rec->flags & DTI_REC_TYPED) &&
	    (dti_show_blob(m, rec) || dti_show_event(m, v, rec)))
		return;
	if (rec->flags & DTI_REC_TEXT) {
		seq_write(m, data, rec->len);
		if (!rec->len || data[rec->len - 1] != '\n')
			seq_putc(m, '\n');
		return;
	}
	dti_show_hex(m, data, rec->len);
}

static int dti_merged_show(struct seq_file *m, void *p)
{
	const struct dti_rview *rec = &((struct dti_view_cpu *)p)->head;
	struct dti_view *v = m->private;
	u32 nsec;
	u64 sec;

	if (v->with_ts) {
		sec = div_u64_rem(rec->ts_ns, NSEC_PER_SEC, &nsec);
		seq_printf(m, "[%5llu.%09u] cpu%u L%d #%llu ", sec, nsec,
			   rec->log_cpu, rec->level, rec->seq);
		/* This boot's symbols do not describe another boot's code. */
		if (v->prev)
			seq_printf(m, "%#llx: ", rec->caller);
		else
			seq_printf(m, "%pS: ", (void *)(unsigned long)rec->caller);
	}
	dti_show_payload(m, v, rec);
	return 0;
}

static const struct seq_operations dti_merged_seq_ops = {
	.start	= dti_merged_start,
	.next	= dti_merged_next,
	.stop	= dti_merged_stop,
	.show	= dti_merged_show,
};

/*
 * A merged view of the previous boot's records: the snapshots are the
 * validated copies dti_persist.c made at load, borrowed for as long as
 * the view is open.
 */
static struct dti_view *dti_prev_view_create(struct dti_prev *prev, bool with_ts)
{
	struct dti_view *v;
	unsigned int c;
	int ret;

	if (!dti_prev_get(prev))
		return ERR_PTR(-ENOENT);
	v = kzalloc_obj(*v, GFP_KERNEL);
	if (!v) {
		dti_prev_put(prev);
		return ERR_PTR(-ENOMEM);
	}
	v->with_ts = with_ts;
	v->prev = prev;
	v->cpus = kcalloc(prev->nr_cpus, sizeof(*v->cpus), GFP_KERNEL);
	ret = v->cpus ? 0 : -ENOMEM;
	for (c = 0; !ret && c < prev->nr_cpus; c++) {
		if (!prev->cpus[c].data)
			continue;
		v->cpus[v->nr_cpus] = prev->cpus[c];
		v->cpus[v->nr_cpus++].borrowed = true;
	}
	if (!ret)
		ret = dti_view_index(v);
	if (ret) {
		dti_view_free(v);
		return ERR_PTR(ret);
	}
	return v;
}

/* Serve the view @v (or an ERR_PTR() from making it) through @file. */
static int dti_view_open(struct file *file, struct dti_view *v)
{
	int ret;

	if (IS_ERR(v))
		return PTR_ERR(v);
	ret = seq_open(file, &dti_merged_seq_ops);
	if (ret) {
		dti_view_free(v);
		return ret;
	}
	((struct seq_file *)file->private_data)->private = v;
	return 0;
}

static int dti_merged_open(struct inode *inode, struct file *file)
{
	return dti_view_open(file, dti_view_create(inode->i_private, false));
}

static int dti_merged_ts_open(struct inode *inode, struct file *file)
{
	return dti_view_open(file, dti_view_create(inode->i_private, true));
}

static int dti_prev_merged_open(struct inode *inode, struct file *file)
{
	return dti_view_open(file, dti_prev_view_create(inode->i_private, false));
}

static int dti_prev_merged_ts_open(struct inode *inode, struct file *file)
{
	return dti_view_open(file, dti_prev_view_create(inode->i_private, true));
}

static int dti_view_release(struct inode *inode, struct file *file)
{
	dti_view_free(((struct seq_file *)file->private_data)->private);
	return seq_release(inode, file);
}

const struct file_operations dti_merged_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_merged_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= dti_view_release,
};

const struct file_operations dti_merged_ts_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_merged_ts_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= dti_view_release,
};

const struct file_operations dti_prev_merged_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_prev_merged_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= dti_view_release,
};

const struct file_operations dti_prev_merged_ts_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_prev_merged_ts_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= dti_view_release,
};

/*
 * Per-CPU files of persistent channels, live and previous: relay cannot
 * serve rings it did not allocate, so these are DTI's own.  An open
 * copies the CPU's sub-buffers holding records, oldest first and each
 * without its unused end, which is what relay's trace files return after
 * reset_consumed; reading never consumes.
 */

/**
 * struct dti_ring_text - the bytes an open per-CPU file returns
 * @len:	bytes in @data
 * @data:	the sub-buffers, oldest first
 */
struct dti_ring_text {
	size_t len;
	char data[];
};

static size_t dti_ring_text_len(const void *sub, size_t len, void *arg)
{
	return len;
}

static size_t dti_ring_text_add(const void *sub, size_t len, void *arg)
{
	struct dti_ring_text *t = arg;

	memcpy(t->data + t->len, sub, len);
	t->len += len;
	return len;
}

static struct dti_ring_text *dti_ring_text_make(const struct dti_snap_cpu *sc)
{
	struct dti_ring_text *t;

	t = kvmalloc(struct_size(t, data, dti_snap_for_each(sc, dti_ring_text_len, NULL)),
		     GFP_KERNEL);
	if (!t)
		return NULL;
	t->len = 0;
	dti_snap_for_each(sc, dti_ring_text_add, t);
	return t;
}

/* A live persistent ring: a snapshot, as the merged views take one. */
static struct dti_ring_text *dti_ring_text_live(struct rchan_buf *buf)
{
	struct dti_channel *ch = buf->chan->private_data;
	struct dti_snap_cpu sc = { .buf = buf };
	struct dti_ring_text *t = ERR_PTR(-ENODEV);

	mutex_lock(&ch->buf_lock);
	if (rcu_access_pointer(ch->rchan) == buf->chan) {
		t = dti_snap_cpu(ch, &sc) ? NULL : dti_ring_text_make(&sc);
		if (!t)
			t = ERR_PTR(-ENOMEM);
	}
	mutex_unlock(&ch->buf_lock);
	dti_snap_free(&sc);
	return t;
}

/* The previous boot's ring of the CPU the file is named after. */
static struct dti_ring_text *dti_ring_text_prev(struct dti_prev *prev, struct file *file)
{
	const char *name = file->f_path.dentry->d_name.name;
	struct dti_ring_text *t;
	unsigned int cpu;

	if (kstrtouint(name + strlen(DTI_TRACE_FILE_BASE), 10, &cpu) || cpu >= prev->nr_cpus)
		return ERR_PTR(-ENOENT);
	if (!dti_prev_get(prev))
		return ERR_PTR(-ENOENT);
	t = dti_ring_text_make(&prev->cpus[cpu]);
	dti_prev_put(prev);
	return t ? t : ERR_PTR(-ENOMEM);
}

/* Serve @t (or an ERR_PTR() from making it) through @file. */
static int dti_ring_open(struct file *file, struct dti_ring_text *t)
{
	if (IS_ERR(t))
		return PTR_ERR(t);
	file->private_data = t;
	return 0;
}

static int dti_ring_live_open(struct inode *inode, struct file *file)
{
	return dti_ring_open(file, dti_ring_text_live(inode->i_private));
}

static int dti_ring_prev_open(struct inode *inode, struct file *file)
{
	return dti_ring_open(file, dti_ring_text_prev(inode->i_private, file));
}

static ssize_t dti_ring_read(struct file *file, char __user *ubuf, size_t count,
			     loff_t *ppos)
{
	struct dti_ring_text *t = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, t->data, t->len);
}

static int dti_ring_release(struct inode *inode, struct file *file)
{
	kvfree(file->private_data);
	return 0;
}

const struct file_operations dti_ring_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_ring_live_open,
	.read		= dti_ring_read,
	.llseek		= default_llseek,
	.release	= dti_ring_release,
};

const struct file_operations dti_prev_ring_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_ring_prev_open,
	.read		= dti_ring_read,
	.llseek		= default_llseek,
	.release	= dti_ring_release,
};
