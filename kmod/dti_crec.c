// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the records of a sub-buffer, whatever their version: the whole
 * headers of version 1 and the compact ones of version 2 (struct
 * dti_crec in dti_record.h), for the readers inside dti.ko: the merged
 * views, the panic print, persistent regions and the count of formats;
 * and the continuation headers that start the trace files' read()s.
 */
#include "dti_internal.h"

/**
 * dti_walk_start - start walking the records of a sub-buffer
 * @w: the walk
 * @sub: the sub-buffer, its header first
 * @end: bytes from @sub that may hold records: the sub-buffer's size, or
 *	 less where the caller knows where its data ends
 * @records: records to walk at most: the header's count, read by the
 *	 caller as it must be (with acquire, on a ring being written)
 *
 * Context: any, NMI and the panic path included.
 * Return: false if @sub does not start with a sub-buffer header of a
 * version dti.ko reads, whole within @end.
 */
bool dti_walk_start(struct dti_walk *w, const void *sub, size_t end, u32 records)
{
	const struct dti_record *hdr = sub;
	const struct dti_subbuf_info *info = sub + sizeof(*hdr);

	if (end < sizeof(*hdr) || !dti_subbuf_header_ok(hdr) ||
	    end < dti_subbuf_header_size(hdr))
		return false;
	w->sub = sub;
	w->pos = dti_subbuf_header_size(hdr);
	w->end = end;
	w->left = records;
	w->version = hdr->version;
	w->cpu = hdr->cpu;
	w->hdr_ts = hdr->ts_ns;
	w->caller_base = hdr->caller;
	if (w->version == DTI_RECORD_VERSION_1) {
		w->ts = 0;
		w->seq = 0;
		w->caller = 0;
	} else {
		w->ts = info->ts_base;
		w->seq = info->seq_base;
		w->caller = info->caller_prev;
	}
	return true;
}

/* The next record of a version-1 sub-buffer, @room bytes left in it. */
static bool dti_walk_v1(struct dti_walk *w, size_t room, struct dti_rview *v)
{
	const struct dti_record *rec = w->sub + w->pos;
	u32 len;

	if (!dti_record_whole(rec, room, &len) || (rec->flags & DTI_REC_SUBBUF))
		return false;
	v->ts_ns = rec->ts_ns;
	v->seq = rec->seq;
	v->caller = rec->caller;
	v->log_cpu = rec->log_cpu;
	v->flags = rec->flags;
	v->level = rec->level;
	v->len = len;
	v->payload = rec + 1;
	v->size = DTI_RECORD_SIZE((u64)len);
	return true;
}

/* Eight zero bytes, which are never a compact record's header */
static bool dti_crec_zero(const struct dti_crec *c)
{
	return !c->len && !c->flags && !c->info && !c->ts_delta;
}

/* Flags a compact record never has: those of records kept elsewhere */
#define DTI_CREC_NOT_FLAGS	(DTI_REC_SUBBUF | DTI_REC_PENDING)

/* The next record of a version-2 sub-buffer, @room bytes left in it. */
static bool dti_walk_v2(struct dti_walk *w, size_t room, struct dti_rview *v)
{
	const struct dti_crec *c = w->sub + w->pos;
	const u8 *x = (const u8 *)(c + 1);
	u64 len, ts, skip = 0;
	unsigned int hdr;
	u8 info, flags;

	if (room < sizeof(*c))
		return false;
	/* Each field once: a ring being written may change under us. */
	info = READ_ONCE(c->info);
	flags = READ_ONCE(c->flags);
	len = READ_ONCE(c->len);
	if ((flags & DTI_CREC_NOT_FLAGS) || dti_crec_zero(c))
		return false;
	hdr = dti_crec_hdr_size(info, flags);
	if (hdr > room)
		return false;
	if (info & DTI_CREC_LEN32) {
		len = get_unaligned((const u32 *)x);
		x += sizeof(u32);
	}
	if (DTI_CREC_SIZE(hdr, len) > room)
		return false;
	if (info & DTI_CREC_TS64) {
		ts = get_unaligned((const u64 *)x);
		x += sizeof(u64);
	} else {
		ts = w->ts + (s64)READ_ONCE(c->ts_delta);
	}
	if (info & DTI_CREC_SKIP) {
		skip = get_unaligned((const u64 *)x);
		x += sizeof(u64);
	}
	switch (info & DTI_CREC_CALLER) {
	case DTI_CREC_CALLER32:
		v->caller = w->caller_base + (s64)get_unaligned((const s32 *)x);
		x += sizeof(s32);
		break;
	case DTI_CREC_CALLER64:
		v->caller = get_unaligned((const u64 *)x);
		x += sizeof(u64);
		break;
	case DTI_CREC_CALLER_SAME:
		v->caller = w->caller;
		break;
	default:
		v->caller = 0;
	}
	v->log_cpu = w->cpu;
	if (flags & DTI_REC_REPLAYED)
		v->log_cpu = get_unaligned((const u32 *)x);
	if (flags & DTI_REC_FORMAT) {
		/* Outside the chains of time and sequence numbers. */
		v->ts_ns = w->hdr_ts;
		v->seq = 0;
	} else {
		w->ts = ts;
		w->seq += skip;
		w->caller = v->caller;
		v->ts_ns = ts;
		v->seq = w->seq++;
	}
	v->flags = flags;
	v->level = info & DTI_CREC_LEVEL;
	v->len = len;
	v->payload = (const void *)c + hdr;
	v->size = DTI_CREC_SIZE(hdr, len);
	return true;
}

/**
 * dti_walk_next - the next record of a sub-buffer
 * @w: a walk dti_walk_start() started
 * @v: where to put the record
 *
 * Records are walked in the order they were stored, as many as the
 * header counted, as long as each is whole within the sub-buffer and its
 * header can be a record's.  A version-2 record is told from the ones
 * before it, so a walk that stopped cannot go on past the record it
 * stopped at.
 *
 * Context: any, NMI and the panic path included.
 * Return: false when the walk is over: the count is reached, or the next
 * bytes cannot be a record (damage, or a record still being written).
 */
bool dti_walk_next(struct dti_walk *w, struct dti_rview *v)
{
	size_t room;
	bool ok;

	if (!w->left || w->pos > w->end)
		return false;
	room = w->end - w->pos;
	if (w->version == DTI_RECORD_VERSION_1)
		ok = dti_walk_v1(w, room, v);
	else
		ok = dti_walk_v2(w, room, v);
	if (!ok) {
		w->left = 0;
		return false;
	}
	w->pos += v->size;
	w->left--;
	return true;
}

/**
 * dti_walk_continue - make a copy of a version-2 sub-buffer's header the
 * continuation header of the records from a walk's place
 * @w: a walk of the sub-buffer, at the first record the copy is to go with
 * @info: the copy's info
 *
 * The copy then says what a reader of the records from @w's place needs
 * of those before them (DTI_SUBBUF_CONTINUED in dti_record.h): the
 * chains' state, and no count nor padding, as its records run to the
 * next sub-buffer header.
 *
 * Context: any.
 */
void dti_walk_continue(const struct dti_walk *w, struct dti_subbuf_info *info)
{
	info->records = 0;
	info->padding = 0;
	info->state = DTI_SUBBUF_CONTINUED;
	info->seq_base = w->seq;
	info->ts_base = w->ts;
	info->caller_prev = w->caller;
}

/**
 * dti_rec_size_at - the bytes of the record at @p of a current sub-buffer
 * @p: where a record starts
 * @room: bytes from @p that may hold it
 * @header: @p is the sub-buffer's start: its header
 *
 * A record's size needs nothing of the records before it, so a reader
 * that goes on from a record boundary can tell where whole records end.
 *
 * Context: any.
 * Return: the bytes the record takes, or 0 if no whole record of this
 * dti.ko's version is within @room there.
 */
size_t dti_rec_size_at(const void *p, size_t room, bool header)
{
	const struct dti_crec *c = p;
	unsigned int hdr;
	u64 len;

	if (header) {
		const struct dti_record *rec = p;

		return room >= sizeof(*rec) && dti_subbuf_header_ok(rec) &&
		       DTI_RECORD_SIZE((u64)rec->len) <= room ?
		       DTI_RECORD_SIZE((u64)rec->len) : 0;
	}
	if (room < sizeof(*c) || dti_crec_zero(c))
		return 0;
	hdr = dti_crec_hdr_size(c->info, c->flags);
	if (hdr > room)
		return 0;
	len = c->info & DTI_CREC_LEN32 ? get_unaligned((const u32 *)(c + 1)) : c->len;
	return DTI_CREC_SIZE(hdr, len) <= room ? DTI_CREC_SIZE(hdr, len) : 0;
}
