// SPDX-License-Identifier: GPL-2.0
/*
 * DTI writers and the relay callbacks that frame sub-buffers.
 *
 * Every record is written with interrupts disabled on the local CPU into
 * that CPU's relay buffer.  That makes relay_reserve() safe against
 * interrupt handlers logging on the same CPU (relay itself does no
 * locking), makes the region an RCU read-side critical section for the
 * buffer pointer, and lets a snapshot taken by an IPI on that CPU see
 * only whole records.  NMI handlers could interrupt a writer anywhere,
 * so records from NMI context are refused and counted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/hardirq.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "dti_internal.h"

/* Formatting space for dti_printk_raw(), used with interrupts off. */
static DEFINE_PER_CPU(char [DTI_TEXT_MAX], dti_text_buf);

static struct dti_subbuf_info *dti_subbuf_info(void *subbuf)
{
	return subbuf + sizeof(struct dti_record);
}

static void dti_fill_record(struct dti_record *rec, const struct dti_meta *meta,
			    unsigned int cpu, size_t len, u64 seq)
{
	rec->magic = DTI_RECORD_MAGIC;
	rec->version = DTI_RECORD_VERSION;
	rec->flags = meta->flags;
	rec->level = meta->level;
	rec->hdr_len = sizeof(*rec);
	rec->cpu = cpu;
	rec->len = len;
	rec->log_cpu = meta->cpu;
	rec->seq = seq;
	rec->ts_ns = meta->ts_ns;
	rec->caller = meta->caller;
}

static void dti_write_subbuf_header(struct dti_channel *ch,
				    struct rchan_buf *buf, void *subbuf)
{
	struct dti_subbuf_info *info = dti_subbuf_info(subbuf);
	struct dti_meta meta = {
		.ts_ns = ktime_get_mono_fast_ns(),
		.cpu = buf->cpu,
		.flags = DTI_REC_SUBBUF,
	};

	dti_fill_record(subbuf, &meta, buf->cpu, sizeof(*info),
			buf->subbufs_produced);
	memset(info, 0, sizeof(*info));
	info->subbuf_size = ch->subbuf_size;
	info->n_subbufs = ch->n_subbufs;
	info->state = DTI_SUBBUF_OPEN;
	strscpy(info->name, ch->name, sizeof(info->name));
}

/*
 * Called by relay with the writer's interrupts off whenever a new
 * sub-buffer is started, and once per buffer when it is created.
 * Closes the previous sub-buffer's header, accounts for the records a
 * wrapped buffer is about to overwrite, and frames the new one.
 */
static int dti_subbuf_start(struct rchan_buf *buf, void *subbuf,
			    void *prev_subbuf, size_t prev_padding)
{
	struct dti_channel *ch = buf->chan->private_data;
	struct dti_subbuf_info *info;

	if (prev_subbuf) {
		info = dti_subbuf_info(prev_subbuf);
		info->padding = prev_padding;
		info->state = DTI_SUBBUF_CLOSED;
	}

	if (ch->flags & DTI_F_NO_OVERWRITE) {
		/* Unread sub-buffers are kept; the new record is dropped. */
		if (relay_buf_full(buf))
			return 0;
	} else if (buf->subbufs_produced >= ch->n_subbufs) {
		/* The ring wrapped: this sub-buffer holds the oldest records. */
		info = dti_subbuf_info(subbuf);
		per_cpu_ptr(ch->info->stats, buf->cpu)->overwritten +=
			info->records;
	}

	dti_write_subbuf_header(ch, buf, subbuf);
	subbuf_start_reserve(buf, DTI_SUBBUF_HEADER_SIZE);
	return 1;
}

static struct dentry *dti_create_buf_file(const char *filename,
					  struct dentry *parent, umode_t mode,
					  struct rchan_buf *buf, int *is_global)
{
	return debugfs_create_file(filename, mode, parent, buf,
				   &relay_file_operations);
}

static int dti_remove_buf_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

const struct rchan_callbacks dti_relay_callbacks = {
	.subbuf_start		= dti_subbuf_start,
	.create_buf_file	= dti_create_buf_file,
	.remove_buf_file	= dti_remove_buf_file,
};

/**
 * dti_probe_stored - probe point: a record was stored
 * @ch: channel
 * @rec: the record, header and payload complete (for a record from
 *	 dti_reserve_raw() the payload is not written yet)
 *
 * Does nothing; tapset/dti.stp probes it to see every record.
 * Context: interrupts disabled.
 */
DTI_PROBE_POINT void dti_probe_stored(struct dti_channel *ch,
				      const struct dti_record *rec)
{
	barrier();
}

/**
 * dti_probe_lost - probe point: a record passed the level check but was
 * not stored
 * @ch: channel
 * @meta: the record's metadata
 * @len: its payload length
 * @err: why, as returned to the caller (see dti_store())
 *
 * Does nothing; tapset/dti.stp probes it.
 * Context: interrupts disabled.
 */
DTI_PROBE_POINT void dti_probe_lost(struct dti_channel *ch,
				    const struct dti_meta *meta, size_t len,
				    int err)
{
	barrier();
}

DEFINE_STATIC_KEY_FALSE(dti_filtered_probe_key);
EXPORT_SYMBOL_GPL(dti_filtered_probe_key);

static int dti_probe_filtered_set(const char *val,
				  const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (on)
		static_branch_enable(&dti_filtered_probe_key);
	else
		static_branch_disable(&dti_filtered_probe_key);
	return 0;
}

static int dti_probe_filtered_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n",
			  static_key_enabled(&dti_filtered_probe_key) ? 'Y' : 'N');
}

static const struct kernel_param_ops dti_probe_filtered_ops = {
	.set = dti_probe_filtered_set,
	.get = dti_probe_filtered_get,
};
module_param_cb(probe_filtered, &dti_probe_filtered_ops, NULL, 0644);
MODULE_PARM_DESC(probe_filtered,
		 "call dti_probe_filtered() for records refused by level (for SystemTap)");

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
 * Return: bytes that fit in a sub-buffer after its header.
 */
size_t dti_max_payload(const struct dti_channel *ch)
{
	return ch->subbuf_size - DTI_SUBBUF_HEADER_SIZE -
	       sizeof(struct dti_record);
}

/**
 * dti_store - reserve a record in the local CPU's relay buffer
 * @ch: channel
 * @rchan: its relay channel
 * @meta: record metadata
 * @len: payload length, at most dti_max_payload()
 *
 * Fills in the header and accounts for the record; the caller writes the
 * payload.
 *
 * Context: interrupts disabled, not NMI.
 * Return: the payload area, or ERR_PTR(-ENOSPC) if a no-overwrite buffer
 * is full.
 */
static void *dti_store(struct dti_channel *ch, struct rchan *rchan,
		       const struct dti_meta *meta, size_t len)
{
	struct dti_cpu_stats *stats = this_cpu_ptr(ch->info->stats);
	struct rchan_buf *buf;
	struct dti_record *rec;
	u64 seq;

	seq = stats->seq++;
	rec = relay_reserve(rchan, DTI_RECORD_SIZE(len));
	if (unlikely(!rec)) {
		stats->dropped++;
		dti_probe_lost(ch, meta, len, -ENOSPC);
		return ERR_PTR(-ENOSPC);
	}
	buf = *this_cpu_ptr(rchan->buf);
	dti_fill_record(rec, meta, buf->cpu, len, seq);
	dti_subbuf_info(buf->data)->records++;
	stats->written++;
	return rec + 1;
}

/*
 * Copy a stored record's payload in and let probes see it.  Without a
 * payload (dti_reserve_raw()) the caller fills it in afterwards.
 */
static void dti_store_payload(struct dti_channel *ch, void *data,
			      const void *payload, size_t len)
{
	if (payload)
		memcpy(data, payload, len);
	dti_probe_stored(ch, (const struct dti_record *)data - 1);
}

/* Append a record to the pending store; its lock held. */
static int dti_pending_add(struct dti_pending *p, const struct dti_meta *meta,
			   const void *payload, size_t len)
{
	size_t size = DTI_RECORD_SIZE(len);
	struct dti_record *rec;

	if (!payload || size > p->size - p->used) {
		p->lost++;
		return -ENOSPC;
	}
	rec = p->buf + p->used;
	dti_fill_record(rec, meta, meta->cpu, len, 0);
	memcpy(rec + 1, payload, len);
	p->used += size;
	return 0;
}

/*
 * No relay buffers (yet): keep the record in @info's pending store, and
 * have an on-demand channel's buffers created.  Publication of the
 * buffers holds the store's lock, so checking again under it decides
 * once and for all whether the record is replayed or written directly.
 *
 * Return: ERR_PTR(-EINPROGRESS) if the record was kept, NULL if buffers
 * or a channel appeared meanwhile (the caller starts over), another
 * ERR_PTR() if the record is lost.
 */
static void *dti_write_pending(struct dti_info *info, struct dti_channel *ch,
			       const struct dti_meta *meta,
			       const void *payload, size_t len)
{
	struct dti_pending *p = info->pending;
	bool appeared;
	int err;

	if (!p) {
		/* Raced with "destroy": the level check passed just before. */
		this_cpu_inc(info->stats->filtered);
		return ERR_PTR(-ENODEV);
	}
	raw_spin_lock(&p->lock);
	if (ch)
		appeared = rcu_access_pointer(ch->rchan) != NULL;
	else
		appeared = rcu_access_pointer(info->chan) != NULL;
	err = appeared ? 0 : dti_pending_add(p, meta, payload, len);
	raw_spin_unlock(&p->lock);
	if (appeared)
		return NULL;
	if (ch && (ch->flags & DTI_F_ON_DEMAND))
		dti_queue_work(ch);
	return ERR_PTR(err ? err : -EINPROGRESS);
}

/*
 * Write one record for @info: into this CPU's relay buffer, or into the
 * pending store while there is none.
 *
 * Context: interrupts disabled.
 * Return: the payload area in the relay buffer; ERR_PTR(-EINPROGRESS)
 * if the record waits in the pending store; ERR_PTR(-EBUSY) from NMI
 * context, ERR_PTR(-EMSGSIZE) if @len cannot fit a sub-buffer,
 * ERR_PTR(-ENOSPC) if there is no room, ERR_PTR(-ENODEV) if the buffers
 * are being destroyed.
 */
static void *dti_write(struct dti_info *info, const struct dti_meta *meta,
		       const void *payload, size_t len)
{
	struct dti_channel *ch;
	struct rchan *rchan;
	void *data;

	lockdep_assert_irqs_disabled();
	if (unlikely(in_nmi())) {
		this_cpu_inc(info->stats->nmi);
		return ERR_PTR(-EBUSY);
	}
	for (;;) {
		ch = rcu_dereference_sched(info->chan);
		if (likely(ch)) {
			if (unlikely(len > dti_max_payload(ch))) {
				this_cpu_inc(info->stats->rejected);
				dti_probe_lost(ch, meta, len, -EMSGSIZE);
				return ERR_PTR(-EMSGSIZE);
			}
			rchan = rcu_dereference_sched(ch->rchan);
			if (likely(rchan))
				break;
		}
		data = dti_write_pending(info, ch, meta, payload, len);
		if (data)
			return data;
	}

	data = dti_store(ch, rchan, meta, len);
	if (!IS_ERR(data))
		dti_store_payload(ch, data, payload, len);
	return data;
}

/**
 * dti_publish_buffers - make new relay buffers visible to writers
 * @ch: channel
 * @rchan: its new relay channel
 *
 * First replays the records waiting in the pending store into this
 * CPU's buffer, in the order they were logged and with their original
 * timestamp, level, caller and logging CPU (log_cpu), flagged
 * DTI_REC_REPLAYED.  They take sequence numbers of the buffer they land
 * in, whose CPU is their cpu.
 *
 * Context: process context, @ch->buf_lock held.
 */
void dti_publish_buffers(struct dti_channel *ch, struct rchan *rchan)
{
	struct dti_pending *p = ch->info->pending;
	struct dti_record *rec;
	struct dti_meta meta;
	unsigned long flags;
	size_t pos;
	void *data;

	lockdep_assert_held(&ch->buf_lock);
	if (!p) {
		rcu_assign_pointer(ch->rchan, rchan);
		return;
	}
	raw_spin_lock_irqsave(&p->lock, flags);
	for (pos = 0; pos < p->used; pos += DTI_RECORD_SIZE(rec->len)) {
		rec = p->buf + pos;
		meta.ts_ns = rec->ts_ns;
		meta.caller = rec->caller;
		meta.cpu = rec->log_cpu;
		meta.level = rec->level;
		meta.flags = rec->flags | DTI_REC_REPLAYED;
		if (rec->len > dti_max_payload(ch)) {
			this_cpu_inc(ch->info->stats->rejected);
			continue;
		}
		data = dti_store(ch, rchan, &meta, rec->len);
		if (IS_ERR(data))
			continue;
		dti_store_payload(ch, data, rec + 1, rec->len);
		p->replayed++;
	}
	p->used = 0;
	rcu_assign_pointer(ch->rchan, rchan);
	raw_spin_unlock_irqrestore(&p->lock, flags);
}

static bool dti_level_ok(struct dti_info *info, int level)
{
	if (likely(level >= 0 && level <= DTI_LEVEL_MAX))
		return true;
	this_cpu_inc(info->stats->rejected);
	return false;
}

static void dti_meta_init(struct dti_meta *meta, int level, u8 flags,
			  unsigned long caller)
{
	meta->ts_ns = ktime_get_mono_fast_ns();
	meta->caller = caller;
	meta->cpu = smp_processor_id();
	meta->level = level;
	meta->flags = flags;
}

/* Result of a logging call: a record kept for replay counts as stored. */
static int dti_write_result(const void *data)
{
	if (PTR_ERR(data) == -EINPROGRESS)
		return 0;
	return PTR_ERR_OR_ZERO(data);
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
 * Context: any but NMI.
 * Return: 0 if stored (or kept for replay into buffers being created);
 * -EINVAL for a bad level; -EBUSY from NMI context; -EMSGSIZE if the
 * text cannot fit a sub-buffer; -ENOSPC if there is no room (no-overwrite
 * buffer full, or pending store full); -ENODEV if the buffers are being
 * destroyed.
 */
int dti_printk_raw(struct dti_info *trace, int level, const char *fmt, ...)
{
	struct dti_meta meta;
	unsigned long flags;
	va_list args;
	char *text;
	void *data;
	int len;

	if (!dti_level_ok(trace, level))
		return -EINVAL;
	local_irq_save(flags);
	dti_meta_init(&meta, level, DTI_REC_TEXT, _RET_IP_);
	if (unlikely(in_nmi())) {
		data = dti_write(trace, &meta, NULL, 0);
		goto out;
	}
	text = this_cpu_ptr(dti_text_buf);
	va_start(args, fmt);
	len = vsnprintf(text, DTI_TEXT_MAX, fmt, args);
	va_end(args);
	if (len >= DTI_TEXT_MAX) {
		len = DTI_TEXT_MAX - 1;
		meta.flags |= DTI_REC_TRUNCATED;
	}
	data = dti_write(trace, &meta, text, len);
out:
	local_irq_restore(flags);
	return dti_write_result(data);
}
EXPORT_SYMBOL_GPL(dti_printk_raw);

/**
 * dti_write_record - store a record whose payload is ready
 * @info: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @flags: DTI_REC_TEXT or 0
 * @buf: payload
 * @len: payload length
 * @caller: address to record as the caller
 *
 * Context: any but NMI.
 * Return: as dti_event_raw().
 */
int dti_write_record(struct dti_info *info, int level, u8 flags,
		     const void *buf, size_t len, unsigned long caller)
{
	struct dti_meta meta;
	unsigned long irqflags;
	void *data;

	if (!dti_level_ok(info, level))
		return -EINVAL;
	if (unlikely(!buf && len)) {
		this_cpu_inc(info->stats->rejected);
		return -EINVAL;
	}
	local_irq_save(irqflags);
	dti_meta_init(&meta, level, flags, caller);
	data = dti_write(info, &meta, buf ? buf : "", len);
	local_irq_restore(irqflags);
	return dti_write_result(data);
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
 * Context: any but NMI.
 * Return: as dti_printk_raw(); also -EINVAL for a NULL @buf with a
 * non-zero @len.
 */
int dti_event_raw(struct dti_info *trace, int level, const void *buf,
		  size_t len)
{
	return dti_write_record(trace, level, 0, buf, len, _RET_IP_);
}
EXPORT_SYMBOL_GPL(dti_event_raw);

/**
 * dti_reserve_raw - reserve a binary record for the caller to fill in
 * @trace: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @len: payload length
 *
 * Usually called through __dti_reserve() or dti_reserve().  The caller
 * must keep interrupts disabled until it has written the payload: that
 * is what keeps another writer on this CPU, a snapshot of the buffer and
 * the destruction of the buffer away from the half-written record.
 * While a handle's buffers do not exist yet nothing can be reserved; the
 * record is counted as lost in the pending store.
 *
 * Context: interrupts disabled, not NMI.
 * Return: pointer to @len bytes of payload, or NULL if not stored (the
 * reason is counted in the channel's stats).
 */
void *dti_reserve_raw(struct dti_info *trace, int level, size_t len)
{
	struct dti_meta meta;
	void *data;

	if (WARN_ON_ONCE(!irqs_disabled()) || !dti_level_ok(trace, level))
		return NULL;
	dti_meta_init(&meta, level, DTI_REC_RESERVED, _RET_IP_);
	data = dti_write(trace, &meta, NULL, len);
	return IS_ERR(data) ? NULL : data;
}
EXPORT_SYMBOL_GPL(dti_reserve_raw);
