// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: one CPU's stream of records.
 *
 * Two layouts are read:
 *
 *   stream  what read() of a relay trace file returns: sub-buffer header
 *           records and trace records back to back, padding stripped (or
 *           records alone, as dti_print(DTI_FMT_RAW) writes them).  Read
 *           sequentially through a window that holds a few records.  Zero
 *           fill between sub-buffers and at the end is skipped.
 *   raw     a byte copy of the ring (mmap, memory dump): the size is a
 *           multiple of the sub-buffer size and every used slot starts
 *           with a sub-buffer header.  Slots are visited in the order of
 *           their numbers, oldest first.  This needs a source that can be
 *           read at any offset (memory, a regular file): through a pipe a
 *           ring copy is read in slot order, the padding of its closed
 *           sub-buffers recognised and skipped.
 *
 * A third, from memory dumps only, is read as a stream: a pending store's
 * records (DTI_REC_PENDING, seq 0; no sub-buffer headers), sorted by time.
 * Every record in it must carry that flag, and no other stream's may.
 *
 * In both, a closed sub-buffer is read up to the records its header
 * counts and never past the end of its data; in a raw copy an open one
 * too (the copy is of memory, its count is current); in a stream an open
 * one up to the next header, as its count was copied while it grew.
 *
 * Damage.  Every header is checked (decode.c).  Whatever cannot be
 * trusted is reported as DTI_NOTICE_DAMAGE and skipped: a record whose
 * fields are wrong but whose length is sound, alone; otherwise, in a raw
 * copy, the rest of its slot; in a stream, everything up to the next valid
 * sub-buffer header of the same CPU, found by scanning at record
 * alignment, or the rest of the stream if none follows (the stream is
 * then dead).  Nothing after damage is read as a record unless a valid
 * sub-buffer header frames it.  With DTI_OPEN_STRICT the first damage
 * fails dti_next() instead.
 *
 * A live source (a relay file in debugfs) may return a record that its
 * writer has reserved but not yet filled in.  Such bytes can only be at
 * the end of what read() returned, so the reader skips to that end,
 * reports the skip, and continues at the next read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "libdti-local.h"

#define DEBUGFS_MAGIC	0x64626720
#define DTI_PAGE	4096	/* relay sizes sub-buffers in whole pages */

/*
 * Where a sub-buffer header can start in a stream after one of @s's:
 * read() strips a closed sub-buffer's padding, so after version 2's
 * compact records, 4-byte aligned, the next header starts on a 4-byte
 * boundary, and after version 1's on an 8-byte one.
 */
static size_t dti_sync_step(const struct dti_stream *s)
{
	return s->compact ? DTI_CREC_ALIGN : DTI_RECORD_ALIGN;
}

/* What dti_damage() skips to get past damage. */
enum dti_skip {
	DTI_SKIP_NONE,		/* nothing: the message says what happens */
	DTI_SKIP_REC,		/* the record at the window's start */
	DTI_SKIP_SUB,		/* the rest of the sub-buffer, or to the next one */
	DTI_SKIP_SLOT,		/* a slot of a raw copy, not read at all */
};

/* ---- the window on the source ---- */

/*
 * The buffer is aligned and every read() lands on a boundary of this:
 * the kernel copies into an unaligned destination several times slower
 * (3 to 4 times measured on AMD Zen, FSRM).
 */
#define DTI_BUF_ALIGN	64

static int dti_grow(struct dti_stream *s, size_t need)
{
	unsigned char *nb;
	size_t cap = s->cap ? s->cap : DTI_BUF_INIT;

	while (cap < need)
		cap *= 2;
	if (cap == s->cap)
		return 0;
	nb = aligned_alloc(DTI_BUF_ALIGN, cap);
	if (!nb)
		return dti_fail(ENOMEM, "%s: out of memory for a %zu-byte buffer",
				s->name, cap);
	if (s->buf)
		memcpy(nb, s->buf, s->end);
	free(s->buf);
	s->buf = nb;
	s->data = nb;
	s->cap = cap;
	return 0;
}

static uint64_t dti_pos(const struct dti_stream *s)
{
	return s->base + s->start;
}

/*
 * read() or pread() at @off into @dst: bytes read, 0 at the end, -1.
 * With @quiet_einval, an EINVAL is returned as -EINVAL, not reported: a
 * trace file refuses a read() too small for its next record that way,
 * taking nothing (docs/record-format.md).
 */
static ssize_t dti_src_read_einval(struct dti_stream *s, void *dst, size_t len,
				   uint64_t off, bool quiet_einval)
{
	ssize_t n;

	do {
		n = s->src == DTI_SRC_FILE ? pread(s->fd, dst, len, off) :
					     read(s->fd, dst, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && quiet_einval && errno == EINVAL)
		return -EINVAL;
	if (n < 0)
		dti_fail(errno, "%s: read error at offset %llu: %s", s->name,
			 (unsigned long long)off, strerror(errno));
	return n;
}

static ssize_t dti_src_read(struct dti_stream *s, void *dst, size_t len,
			    uint64_t off)
{
	return dti_src_read_einval(s, dst, len, off, false);
}

/*
 * dti_fill() when the window holds fewer than @need bytes.  What is left
 * moves to the front, placed to end on a DTI_BUF_ALIGN boundary (but
 * never before the source's offset 0), so that the reads after it start
 * on one.  Output may still point into the window (dti_print() of raw
 * records): it is settled first.
 */
static int dti_refill(struct dti_stream *s, size_t need)
{
	size_t left = s->end - s->start, at = -left % DTI_BUF_ALIGN;
	ssize_t n;

	if (s->src == DTI_SRC_MEM)
		return 0;
	if (s->pin)
		dti_ob_settle(s->pin);
	if (at > s->base + s->start)
		at = 0;
	if (dti_grow(s, at + need) < 0)
		return -1;
	if (s->start != at) {
		memmove(s->buf + at, s->buf + s->start, left);
		s->base += s->start - at;
		s->start = at;
		s->end = at + left;
	}
	while (s->end - s->start < need) {
		/*
		 * A live trace file refuses a read() that cannot hold its
		 * next record whole: grow the window until one can (a
		 * record is at most a sub-buffer), and read again.
		 */
		n = dti_src_read_einval(s, s->buf + s->end, s->cap - s->end,
					s->base + s->end,
					s->live && s->cap < DTI_LIVE_READ_MAX);
		if (n == -EINVAL) {
			if (dti_grow(s, s->cap * 2) < 0)
				return -1;
			continue;
		}
		if (n <= 0)
			return n;
		s->end += n;
	}
	return 1;
}

/*
 * Make @need bytes from s->start available.  Returns 1 if they are, 0 if
 * the source has fewer (for now), -1 on a read error or ENOMEM.
 */
static inline int dti_fill(struct dti_stream *s, size_t need)
{
	return s->end - s->start >= need ? 1 : dti_refill(s, need);
}

/*
 * Move the window's start to source offset @off; a read()-only source
 * only ever moves forward.  Returns 1, 0 if the source ends before @off,
 * or -1 on a read error.
 */
static int dti_seek(struct dti_stream *s, uint64_t off)
{
	int ret;

	if (s->src == DTI_SRC_FILE && (off < s->base || off > s->base + s->end)) {
		s->base = off < s->size ? off : s->size;
		s->start = s->end = 0;
		return 1;
	}
	while (off > s->base + s->end) {
		s->start = s->end;
		if (s->src == DTI_SRC_MEM)
			return 0;
		ret = dti_fill(s, 1);
		if (ret <= 0)
			return ret;
	}
	s->start = off - s->base;
	return 1;
}

/* @len bytes at @off of a memory or file source, or NULL if it has fewer. */
static const unsigned char *dti_at(struct dti_stream *s, uint64_t off,
				   unsigned char *tmp, size_t len)
{
	if (off > s->size || s->size - off < len)
		return NULL;
	if (s->src == DTI_SRC_MEM)
		return s->data + off;
	return dti_src_read(s, tmp, len, off) == (ssize_t)len ? tmp : NULL;
}

static bool dti_zero(const unsigned char *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/* ---- sub-buffer headers ---- */

/*
 * Why @p (DTI_SUB_SIZE bytes) is not a valid sub-buffer header of @s's
 * CPU (once one is known), or NULL; @h and @sub are filled either way.
 */
static const char *dti_sub_why(const struct dti_stream *s,
			       const unsigned char *p, struct dti_hdr *h,
			       struct dti_sub *sub)
{
	enum dti_hdr_status st = dti_decode_hdr(p, h);
	const char *why;

	if (st != DTI_HDR_OK)
		return dti_hdr_status_str(st);
	if (!(h->flags & DTI_REC_SUBBUF))
		return "a record where a sub-buffer header belongs";
	dti_decode_sub(p + DTI_HDR_SIZE, h, sub);
	why = dti_sub_invalid(h, sub);
	if (!why && s->ident.set && h->cpu != s->sub_hdr.cpu)
		why = "a sub-buffer header of another CPU";
	return why;
}

static void dti_ident_of(struct dti_ident *id, const struct dti_sub *sub)
{
	id->set = true;
	id->subbuf_size = sub->subbuf_size;
	id->n_subbufs = sub->n_subbufs;
	memcpy(id->name, sub->name, sizeof(id->name));
}

static const char *dti_slot_why(struct dti_stream *s, uint64_t k,
				uint64_t nslots, struct dti_hdr *h);

/* ---- reporting ---- */

/* Skip what a live source returned but a writer had not finished. */
static void dti_skip_inflight(struct dti_reader *r, struct dti_stream *s)
{
	struct dti_notice n = {
		.type = DTI_NOTICE_SKIPPED, .cpu = s->cpu, .source = s->name,
		.offset = dti_pos(s), .count = s->end - s->start,
	};

	s->start = s->end;
	dti_notify(r, &n, "%s: skipped %llu bytes at offset %llu still being written",
		   s->name, (unsigned long long)n.count,
		   (unsigned long long)n.offset);
}

/*
 * Find the next valid sub-buffer header of @s's CPU after @off, at
 * dti_sync_step() alignment.  Returns 1 with the window at it, 0 if the source ends
 * first (the window is then at the end), -1 on a read error.
 */
static int dti_resync(struct dti_stream *s, uint64_t off)
{
	struct dti_hdr h;
	struct dti_sub sub;
	int ret = dti_seek(s, off + dti_sync_step(s));

	while (ret > 0) {
		ret = dti_fill(s, DTI_SUB_SIZE);
		if (ret > 0 && !dti_sub_why(s, s->data + s->start, &h, &sub)) {
			s->in_sub = s->expect_sub = false;
			return 1;
		}
		if (ret > 0)
			s->start += dti_sync_step(s);
	}
	if (!ret)
		s->start = s->end;
	return ret;
}

/*
 * Damage at @off, of which the printf-style message says what (after
 * "FILE: "): fail with DTI_OPEN_STRICT, else skip as @skip says and
 * report it and what was skipped.  Returns 1 to read on, or -1.
 */
static int __attribute__((format(printf, 6, 7)))
dti_damage(struct dti_reader *r, struct dti_stream *s, uint64_t off, int err,
	   enum dti_skip skip, const char *fmt, ...)
{
	struct dti_notice n = {
		.type = DTI_NOTICE_DAMAGE, .cpu = s->cpu, .source = s->name,
		.offset = off,
	};
	char what[512], act[160] = "";
	va_list ap;
	int ret;

	if (s->live && skip == DTI_SKIP_SUB) {
		dti_skip_inflight(r, s);
		return 1;
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (r->flags & DTI_OPEN_STRICT)
		return dti_fail(err, "%s: %s", s->name, what);
	if (skip == DTI_SKIP_REC) {
		n.count = s->head_size;
		s->start += n.count;
		if (s->in_sub && s->counted)
			s->left--;
		snprintf(act, sizeof(act), "; record skipped");
	} else if (skip == DTI_SKIP_SLOT) {
		n.count = s->ident.subbuf_size;
		snprintf(act, sizeof(act), "; that slot (%llu bytes) skipped",
			 (unsigned long long)n.count);
	} else if (skip == DTI_SKIP_SUB && s->raw) {
		n.count = s->in_sub && s->sub_end > off ? s->sub_end - off : 0;
		s->in_sub = s->expect_sub = false;
		snprintf(act, sizeof(act), "; the rest of sub-buffer %llu skipped",
			 (unsigned long long)s->sub_hdr.seq);
	} else if (skip == DTI_SKIP_SUB) {
		ret = dti_resync(s, off);
		if (ret < 0 && errno == ENOMEM)
			return -1;
		n.count = dti_pos(s) - off;
		s->dead = ret <= 0;
		if (ret < 0)
			snprintf(act, sizeof(act), "; then %s", dti_errmsg());
		else
			snprintf(act, sizeof(act), ret ?
				 "; %llu bytes skipped to the sub-buffer header at offset %llu" :
				 "; no valid sub-buffer header follows: the rest, %llu bytes, not read",
				 (unsigned long long)n.count,
				 (unsigned long long)dti_pos(s));
	}
	s->damaged++;
	dti_notify(r, &n, "%s: %s%s", s->name, what, act);
	return 1;
}

/* A read error: damage that ends the stream; ENOMEM fails dti_next(). */
static int dti_read_failed(struct dti_reader *r, struct dti_stream *s)
{
	struct dti_notice n = {
		.type = DTI_NOTICE_DAMAGE, .cpu = s->cpu, .source = s->name,
		.offset = s->base + s->end,
	};

	if (errno == ENOMEM || (r->flags & DTI_OPEN_STRICT))
		return -1;
	s->dead = true;
	s->damaged++;
	dti_notify(r, &n, "%s; nothing more is read from it", dti_errmsg());
	return 0;
}

/* Fewer records than the current sub-buffer counts: @what comes at @off. */
static int dti_sub_short(struct dti_reader *r, struct dti_stream *s,
			 uint64_t off, const char *what)
{
	return dti_damage(r, s, off, EBADMSG, DTI_SKIP_NONE,
			  "sub-buffer %llu (offset %llu) holds %u records, but %s at offset %llu after %u",
			  (unsigned long long)s->sub_hdr.seq,
			  (unsigned long long)s->sub_off, s->sub.records, what,
			  (unsigned long long)off, s->sub.records - s->left);
}

/* The end of the source, or of what a live source has now.  0 or -1. */
static int dti_at_end(struct dti_reader *r, struct dti_stream *s)
{
	struct dti_notice n = {
		.type = DTI_NOTICE_WARNING, .cpu = s->cpu, .source = s->name,
	};
	size_t left = s->end - s->start;
	uint64_t off = dti_pos(s);

	if (s->live) {
		if (left && !(r->flags & DTI_OPEN_FOLLOW))
			dti_skip_inflight(r, s);
		return 0;
	}
	if (!dti_zero(s->data + s->start, left)) {
		if (dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
			       "truncated record header at offset %llu (%zu of %zu bytes)",
			       (unsigned long long)off, left, DTI_HDR_SIZE) < 0)
			return -1;
	} else if (s->in_sub && s->counted && s->left &&
		   dti_sub_short(r, s, off, "the file ends") < 0) {
		return -1;
	}
	s->start = s->end;
	s->dead = true;
	if (!s->any && !s->damaged)
		dti_notify(r, &n, "%s: no DTI data (%s)", s->name,
			   dti_pos(s) ? "only zero bytes" : "empty");
	return 0;
}

/* ---- the steps of reading ---- */

/* The current sub-buffer ends here: its records are read or its space used. */
static int dti_sub_done(struct dti_reader *r, struct dti_stream *s)
{
	uint64_t off = dti_pos(s);

	if (s->raw && s->sub.state == DTI_SUBBUF_CLOSED && !s->left &&
	    off != s->sub_end)
		return dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
				  "sub-buffer %llu (offset %llu): its %u records end at offset %llu, its data at %llu",
				  (unsigned long long)s->sub_hdr.seq,
				  (unsigned long long)s->sub_off, s->sub.records,
				  (unsigned long long)off,
				  (unsigned long long)s->sub_end);
	s->in_sub = false;
	if (!s->raw) {
		/* A header must follow; where a copy keeps the padding, there. */
		s->expect_sub = true;
		s->expect_after = "the end of a sub-buffer";
		s->pad_next = s->sub_off + s->sub.subbuf_size;
	}
	if (s->counted && s->left)
		return dti_sub_short(r, s, off, "its data ends");
	return 1;
}

/* dti_peek_fast() for the records of the sub-buffer that starts (s->sub_hdr). */
static void dti_fast_setup(const struct dti_reader *r, struct dti_stream *s)
{
	const struct dti_record want = {
		.magic = DTI_RECORD_MAGIC, .version = DTI_RECORD_VERSION_1,
		.hdr_len = DTI_HDR_SIZE, .cpu = s->sub_hdr.cpu,
	}, mask = {
		.magic = 0xffff, .version = 0xff, .hdr_len = 0xff, .cpu = 0xffff,
		.flags = (uint8_t)~DTI_REC_PLAIN,
		.level = (int8_t)~DTI_LEVEL_MAX,
	};

	_Static_assert(offsetof(struct dti_record, cpu) == 6 && DTI_LEVEL_MAX == 7,
		       "the fields dti_peek_fast() compares at once");
	s->fast_mask = 0;
	s->fast_want = 1;
	s->fast_compact = s->compact && s->counted && !s->sub_hdr.swapped &&
			  s->sub_hdr.cpu < r->ncpu;
	if (s->sub_hdr.swapped || s->sub_hdr.cpu >= r->ncpu || s->compact)
		return;
	memcpy(&s->fast_want, &want, sizeof(s->fast_want));
	memcpy(&s->fast_mask, &mask, sizeof(s->fast_mask));
}

/*
 * Make the record of @size bytes at @off (the window's start) whole in
 * the window.  Returns true if it is; else false with what dti_step()
 * returns in *@ret.
 */
static bool dti_whole_rec(struct dti_reader *r, struct dti_stream *s, uint64_t off,
			  uint64_t size, int *ret)
{
	int got = dti_fill(s, size);

	if (got > 0)
		return true;
	if (got < 0)
		*ret = dti_read_failed(r, s);
	else if (s->live && (r->flags & DTI_OPEN_FOLLOW))
		*ret = 0;
	else
		*ret = dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
				  "truncated record at offset %llu: %llu bytes, %zu left in the file",
				  (unsigned long long)off, (unsigned long long)size,
				  s->end - s->start);
	return false;
}

/* ---- compact records (version 2) ---- */

static int dti_skip_zeros(struct dti_stream *s);
static int dti_take_head(struct dti_reader *r, struct dti_stream *s, uint64_t off);

static uint32_t dti_rd32(const unsigned char *p, bool swapped)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swapped ? bswap_32(v) : v;
}

static uint64_t dti_rd64(const unsigned char *p, bool swapped)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swapped ? bswap_64(v) : v;
}

/* The struct dti_crec at @p, in host order */
static void dti_crec_get(const unsigned char *p, bool swapped, struct dti_crec *c)
{
	memcpy(c, p, sizeof(*c));
	if (swapped) {
		c->len = bswap_16(c->len);
		c->ts_delta = (int32_t)bswap_32((uint32_t)c->ts_delta);
	}
}

/*
 * The bytes of the compact record at @p, whose header (*@c) is whole
 * within @room bytes, in *@size; NULL if it is whole, else why not.
 */
static const char *dti_crec_frame(const unsigned char *p, size_t room, bool swapped,
				  const struct dti_crec *c, uint32_t *hlen, uint64_t *len,
				  uint64_t *size)
{
	*hlen = dti_crec_hdr_size(c->info, c->flags);
	*len = *size = 0;
	if (c->flags & (DTI_REC_SUBBUF | DTI_REC_PENDING))
		return "a compact record with the flags of a sub-buffer header or a pending record";
	if (!c->len && !c->flags && !c->info && !c->ts_delta)
		return "zero bytes where a record header belongs";
	if (*hlen > room)
		return NULL;
	*len = c->info & DTI_CREC_LEN32 ? dti_rd32(p + sizeof(*c), swapped) : c->len;
	if (*len > DTI_MAX_PAYLOAD)
		return "impossible payload length";
	*size = DTI_CREC_SIZE(*hlen, *len);
	return NULL;
}

/*
 * Whether the bytes at @p are a sub-buffer header rather than a compact
 * record: the magic, and the sub-buffer flag where a compact record has
 * DTI_CREC_LEN32, with which its 16-bit length is 0, never the magic.
 */
static bool dti_crec_is_sub(const unsigned char *p)
{
	uint16_t magic;

	memcpy(&magic, p, sizeof(magic));
	return (magic == DTI_RECORD_MAGIC || magic == bswap_16(DTI_RECORD_MAGIC)) &&
	       (p[offsetof(struct dti_record, flags)] & DTI_REC_SUBBUF);
}

/*
 * A closed version-2 sub-buffer (or one of a ring copy) is read only if
 * its records, as many as its header counts (those left after a
 * continuation header), end where its data does: a
 * compact record is told from the ones before it, so a damaged length
 * would have every record after it read wrong.  Checked on the bytes the
 * source has; one that ends early is left to the reading to report.
 * Returns 1 to read it, or what dti_damage() returns, the sub-buffer
 * skipped: its records are lost, which the next sequence number shows.
 */
static int dti_compact_check(struct dti_reader *r, struct dti_stream *s)
{
	uint64_t off = dti_pos(s), pos = off, size, len;
	bool swapped = s->sub_hdr.swapped;
	const unsigned char *p;
	const char *why = NULL;
	struct dti_crec c;
	uint32_t i, hlen;
	int ret;

	if (s->sub_end < off)
		why = "its header runs past its data";
	ret = why ? 1 : dti_fill(s, s->sub_end - off);
	if (ret < 0)
		return dti_read_failed(r, s);
	for (i = 0; !why && ret && i < s->left; i++) {
		p = s->data + s->start + (pos - off);
		if (s->sub_end - pos < sizeof(c)) {
			why = "a record header runs past its data";
			break;
		}
		dti_crec_get(p, swapped, &c);
		/*
		 * Most records have a 16-bit length, which no sub-buffer
		 * header seems to have (dti_crec_is_sub()), and some bits set.
		 */
		if (!(c.info & DTI_CREC_LEN32) &&
		    !(c.flags & (DTI_REC_SUBBUF | DTI_REC_PENDING)) &&
		    (c.len || c.flags || c.info || c.ts_delta)) {
			size = DTI_CREC_SIZE(dti_crec_hdr_size(c.info, c.flags), c.len);
			if (size > s->sub_end - pos) {
				why = "a record runs past its data";
				break;
			}
			pos += size;
			continue;
		}
		/*
		 * A read() of a trace file stopped here and the next one goes
		 * on with a continuation header (DTI_SUBBUF_CONTINUED): the
		 * reading finds out whether it continues this sub-buffer.
		 */
		if (dti_crec_is_sub(p))
			return 1;
		why = dti_crec_frame(p, s->sub_end - pos, swapped, &c, &hlen, &len, &size);
		if (!why && (hlen > s->sub_end - pos || size > s->sub_end - pos))
			why = "a record runs past its data";
		if (why)
			break;
		pos += size;
	}
	if (!why && ret && s->sub.state == DTI_SUBBUF_CLOSED && pos != s->sub_end)
		why = "its records do not end where its data does";
	if (!why)
		return 1;
	return dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
			  "sub-buffer %llu (offset %llu): %s (record %u of the %u it counts, at offset %llu); its %s%u records are not read",
			  (unsigned long long)s->sub_hdr.seq,
			  (unsigned long long)s->sub_off, why,
			  s->sub.records - s->left + i + 1, s->sub.records,
			  (unsigned long long)pos, s->left == s->sub.records ? "" : "last ",
			  s->left);
}

/*
 * One step of dti_step() in a version-2 sub-buffer: the compact record
 * at @off, decoded into the head with the time, sequence number and
 * caller its chains give, which move on to it.  Returns as dti_step().
 */
static int dti_step_compact(struct dti_reader *r, struct dti_stream *s, uint64_t off)
{
	bool swapped = s->sub_hdr.swapped;
	uint64_t len, size, skip = 0;
	const unsigned char *p, *x;
	struct dti_hdr *h = &s->head;
	const char *why;
	struct dti_crec c;
	uint32_t hlen;
	int ret;

	ret = dti_fill(s, sizeof(c));
	if (ret < 0)
		return dti_read_failed(r, s);
	if (!ret)
		return dti_at_end(r, s);
	p = s->data + s->start;
	/*
	 * In a sub-buffer that was open when its header was read, the next
	 * header can come before its end, and zero fill is its end.  In any,
	 * a read() of a trace file can stop before its end, the next one
	 * starting with a continuation header.
	 */
	if (dti_crec_is_sub(p))
		return 2;
	if (!s->counted && dti_zero(p, sizeof(c)))
		return dti_skip_zeros(s) < 0 ? dti_read_failed(r, s) : 1;
	dti_crec_get(p, swapped, &c);
	why = dti_crec_frame(p, s->end - s->start, swapped, &c, &hlen, &len, &size);
	if (!why && hlen > s->end - s->start) {
		ret = dti_fill(s, hlen);
		if (ret < 0)
			return dti_read_failed(r, s);
		if (!ret)
			return dti_at_end(r, s);
		p = s->data + s->start;
		why = dti_crec_frame(p, hlen, swapped, &c, &hlen, &len, &size);
	}
	if (!why && size > s->sub_end - off)
		why = "the record runs past the end of its sub-buffer";
	if (why)
		return dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
				  "corrupt data at offset %llu: %s",
				  (unsigned long long)off, why);
	if (!dti_whole_rec(r, s, off, size, &ret))
		return ret;
	p = s->data + s->start;
	x = p + sizeof(c) + (c.info & DTI_CREC_LEN32 ? sizeof(uint32_t) : 0);
	dti_crec_head(s, &c, hlen, len);
	if (c.info & DTI_CREC_TS64) {
		h->ts_ns = dti_rd64(x, swapped);
		x += sizeof(uint64_t);
	} else {
		h->ts_ns = s->c_ts + (int64_t)c.ts_delta;
	}
	if (c.info & DTI_CREC_SKIP) {
		skip = dti_rd64(x, swapped);
		x += sizeof(uint64_t);
	}
	switch (c.info & DTI_CREC_CALLER) {
	case DTI_CREC_CALLER32:
		h->caller = s->sub_hdr.caller + (int64_t)(int32_t)dti_rd32(x, swapped);
		x += sizeof(uint32_t);
		break;
	case DTI_CREC_CALLER64:
		h->caller = dti_rd64(x, swapped);
		x += sizeof(uint64_t);
		break;
	case DTI_CREC_CALLER_SAME:
		h->caller = s->c_caller;
		break;
	default:
		h->caller = 0;
	}
	h->log_cpu = c.flags & DTI_REC_REPLAYED ? dti_rd32(x, swapped) : h->cpu;
	if (c.flags & DTI_REC_FORMAT) {
		/* outside the chains: the sub-buffer's time, no number */
		h->ts_ns = s->sub_hdr.ts_ns;
		h->seq = 0;
	} else {
		h->seq = s->c_seq + skip;
		s->c_seq = h->seq + 1;
		s->c_ts = h->ts_ns;
		s->c_caller = h->caller;
	}
	s->head_hlen = hlen;
	s->head_size = size;
	return dti_take_head(r, s, off);
}

/*
 * Whether the header @h, @sub is the continuation header of the
 * sub-buffer @s is in: a read() of a trace file stopped in it and the
 * next one goes on there (DTI_SUBBUF_CONTINUED in dti_record.h).
 */
static bool dti_sub_goes_on(const struct dti_stream *s, const struct dti_hdr *h,
			    const struct dti_sub *sub)
{
	return sub->state == DTI_SUBBUF_CONTINUED && s->compact &&
	       h->seq == s->sub_hdr.seq && h->cpu == s->sub_hdr.cpu &&
	       sub->generation == s->sub.generation;
}

/* A sub-buffer header record is at the window's start, complete. */
static int dti_sub_start(struct dti_reader *r, struct dti_stream *s,
			 uint64_t off)
{
	struct dti_ident id = { 0 };
	struct dti_hdr h;
	struct dti_sub sub;
	const char *why = "record with the sub-buffer flag but not a sub-buffer header's length";

	if (s->head.len == dti_sub_info_len(s->head.version))
		why = dti_sub_why(s, s->data + s->start, &h, &sub);
	if (!why && s->raw && s->in_sub)
		why = "a sub-buffer header where a record belongs";
	if (why)
		return dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
				  "corrupt sub-buffer header at offset %llu: %s",
				  (unsigned long long)off, why);
	/*
	 * A read() stopped in the sub-buffer being read, counted: read on,
	 * its count and end moved past the header, its chains from it (the
	 * same but after damage).  Its records after it are checked.
	 */
	if (s->in_sub && s->counted && s->left && dti_sub_goes_on(s, &h, &sub)) {
		s->start += dti_sub_size(h.version);
		s->sub_end += dti_sub_size(h.version);
		s->c_ts = sub.ts_base;
		s->c_seq = sub.seq_base;
		s->c_caller = sub.caller_prev;
		return dti_compact_check(r, s);
	}
	if (s->in_sub && s->counted && s->left &&
	    dti_sub_short(r, s, off, "the next sub-buffer header comes") < 0)
		return -1;
	s->in_sub = true;
	s->expect_sub = false;
	s->counted = s->raw || sub.state == DTI_SUBBUF_CLOSED;
	s->sub_hdr = h;
	s->sub = sub;
	s->sub_off = off;
	s->sub_end = off + sub.subbuf_size - sub.padding;
	s->left = sub.records;
	s->compact = h.version != DTI_RECORD_VERSION_1;
	s->c_ts = sub.ts_base;
	s->c_seq = sub.seq_base;
	s->c_caller = sub.caller_prev;
	dti_fast_setup(r, s);
	if (!s->any)
		s->cpu = h.cpu;
	s->any = true;
	dti_ident_of(&id, &sub);
	if (!s->ident.set)
		s->ident = id;
	dti_check_ident(r, s, &id);
	s->start += dti_sub_size(h.version);
	if (s->compact && s->counted)
		return dti_compact_check(r, s);
	return 1;
}

/*
 * A record where a sub-buffer header must be.  A copy of the ring through
 * a pipe keeps each closed sub-buffer's padding: its next header is a
 * whole sub-buffer after the last one, which is taken silently.
 */
static int dti_not_sub(struct dti_reader *r, struct dti_stream *s, uint64_t off)
{
	struct dti_hdr h;
	struct dti_sub sub;
	uint64_t gap = s->pad_next - off;

	if (s->pad_next > off && gap <= DTI_SUBBUF_MAX && !s->live) {
		int ret = dti_fill(s, gap + DTI_SUB_SIZE);

		if (ret < 0)
			return dti_read_failed(r, s);
		if (ret && !dti_sub_why(s, s->data + s->start + gap, &h, &sub)) {
			s->start += gap;
			return 1;
		}
	}
	return dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
			  "corrupt data at offset %llu: not a sub-buffer header, after %s",
			  (unsigned long long)off, s->expect_after);
}

/* Skip zero fill, dti_sync_step() bytes at a time; a sub-buffer header must follow.  1 or -1. */
static int dti_skip_zeros(struct dti_stream *s)
{
	size_t step = dti_sync_step(s);
	int ret;

	s->in_sub = false;
	s->expect_sub = true;
	s->expect_after = "zero fill";
	for (;;) {
		while (s->end - s->start >= step && dti_zero(s->data + s->start, step))
			s->start += step;
		if (s->end - s->start >= step)
			return 1;
		ret = dti_fill(s, step);
		if (ret <= 0)
			return ret < 0 ? -1 : 1;
	}
}

/* The fields of a record that dti_check_rec() finds not plain: 0, 1 or -1. */
static int dti_check_rec_slow(struct dti_reader *r, struct dti_stream *s,
			      uint64_t off)
{
	struct dti_notice n = {
		.type = DTI_NOTICE_WARNING, .cpu = s->head.cpu, .source = s->name,
		.offset = off,
	};
	const struct dti_hdr *h = &s->head;
	const char *why;
	char buf[160];

	why = dti_rec_invalid(h, r->ncpu, buf, sizeof(buf));
	if (!why && s->in_sub && h->cpu != s->sub_hdr.cpu) {
		snprintf(buf, sizeof(buf), "record of cpu%u in a sub-buffer of cpu%u",
			 h->cpu, s->sub_hdr.cpu);
		why = buf;
	}
	if (!why && s->pending != !!(h->flags & DTI_REC_PENDING))
		why = s->pending ? "a record without the pending flag in a pending store" :
				   "a pending record (no sequence number) in a trace buffer";
	if (why)
		return dti_damage(r, s, off, EBADMSG, DTI_SKIP_REC,
				  "corrupt data at offset %llu: %s",
				  (unsigned long long)off, why);
	if (h->level < 0 || h->level > DTI_LEVEL_MAX)
		dti_notify(r, &n, "%s: record at offset %llu (cpu%u seq %llu) has level %d, not 0..%d",
			   s->name, (unsigned long long)off, h->cpu,
			   (unsigned long long)h->seq, h->level, DTI_LEVEL_MAX);
	return 0;
}

/*
 * Most records are plain: logged by the CPU that holds them, in their
 * sub-buffer's CPU, with known flags and a level in range, and not in a
 * pending store (whose records are all checked: they must say so).
 */
static inline bool dti_rec_plain(const struct dti_reader *r,
				 const struct dti_stream *s)
{
	const struct dti_hdr *h = &s->head;

	return !s->pending && h->log_cpu == h->cpu &&
	       (!s->in_sub || h->cpu == s->sub_hdr.cpu) &&
	       !(h->flags & ~DTI_REC_PLAIN) && !dti_typed_odd(h->flags, h->len) &&
	       (uint8_t)h->level <= DTI_LEVEL_MAX && h->cpu < r->ncpu;
}

/*
 * Check the head's fields: 0 if it is to be returned, 1 if it was skipped
 * as damage, -1 (strict).
 */
static inline int dti_check_rec(struct dti_reader *r, struct dti_stream *s,
				uint64_t off)
{
	return dti_rec_plain(r, s) ? 0 : dti_check_rec_slow(r, s, off);
}

/* Start reading the next slot of a raw copy; report its bad slots first. */
static int dti_raw_next(struct dti_reader *r, struct dti_stream *s)
{
	uint64_t ss = s->ident.subbuf_size, off;
	struct dti_hdr h;

	if (s->cur_bad < s->n_bad) {
		off = s->bad[s->cur_bad++];
		return dti_damage(r, s, off, EBADMSG, DTI_SKIP_SLOT,
				  "corrupt sub-buffer header at offset %llu of a ring copy: %s",
				  (unsigned long long)off,
				  dti_slot_why(s, off / ss, s->size / ss, &h));
	}
	if (s->cur_slot == s->n_slots) {
		s->dead = true;
		return 0;
	}
	s->expect_sub = true;
	s->expect_after = "the start of a slot";
	return dti_seek(s, s->slots[s->cur_slot++]);
}

/*
 * One step towards the next record: decode what is at the window's
 * start.  Returns 1 to go on (s->have_head says whether a record was
 * found), 0 if there is none (end of data, or none yet), -1 on error.
 */
static int dti_step(struct dti_reader *r, struct dti_stream *s)
{
	enum dti_hdr_status st;
	uint64_t off, size;
	int ret;

	if (s->in_sub && s->counted && !s->left)
		return dti_sub_done(r, s);
	if (s->raw && !s->in_sub && !s->expect_sub)
		return dti_raw_next(r, s);
	off = dti_pos(s);
	if (s->in_sub && s->compact) {
		if (off + sizeof(struct dti_crec) > s->sub_end)
			return dti_sub_done(r, s);
		ret = dti_step_compact(r, s, off);
		if (ret != 2)
			return ret;
		/* a sub-buffer header: read on as version 1 would */
	}
	ret = dti_fill(s, DTI_HDR_SIZE);
	if (ret < 0)
		return dti_read_failed(r, s);
	if (!ret)
		return dti_at_end(r, s);
	/* (In a compact one, dti_step_compact() found a header here.) */
	if (s->in_sub && !s->compact && off + DTI_HDR_SIZE > s->sub_end)
		return dti_sub_done(r, s);
	st = dti_decode_hdr(s->data + s->start, &s->head);
	if (st == DTI_HDR_ZERO && !s->live && !s->raw && !(s->in_sub && s->counted))
		return dti_skip_zeros(s) < 0 ? dti_read_failed(r, s) : 1;
	if (st == DTI_HDR_BAD_VERSION)
		return dti_damage(r, s, off, EPROTO, DTI_SKIP_SUB,
				  "record version %u at offset %llu is not supported (this reader knows versions %u and %u)",
				  s->data[s->start + 2], (unsigned long long)off,
				  DTI_RECORD_VERSION_1, DTI_RECORD_VERSION);
	if (st != DTI_HDR_OK)
		return dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
				  "corrupt data at offset %llu: %s",
				  (unsigned long long)off, dti_hdr_status_str(st));
	size = dti_rec_size(s->head.len);
	/*
	 * A sub-buffer that was being written when its start was read says
	 * it is open, its end unknown: read() gave the rest of it once it was
	 * closed, without its padding, so the next sub-buffer's header can
	 * start anywhere before the end an open one is given, and run past it.
	 */
	if (s->in_sub && size > s->sub_end - off &&
	    ((s->counted && !s->compact) || !(s->head.flags & DTI_REC_SUBBUF)))
		return dti_damage(r, s, off, EBADMSG, DTI_SKIP_SUB,
				  "corrupt data at offset %llu: record of %llu bytes runs past the end of sub-buffer %llu at offset %llu",
				  (unsigned long long)off, (unsigned long long)size,
				  (unsigned long long)s->sub_hdr.seq,
				  (unsigned long long)s->sub_end);
	if (!dti_whole_rec(r, s, off, size, &ret))
		return ret;
	if ((s->head.flags & DTI_REC_SUBBUF) && s->pending)
		return dti_damage(r, s, off, EBADMSG, DTI_SKIP_REC,
				  "corrupt data at offset %llu: a sub-buffer header in a pending store",
				  (unsigned long long)off);
	if (s->head.flags & DTI_REC_SUBBUF)
		return dti_sub_start(r, s, off);
	if (s->expect_sub)
		return dti_not_sub(r, s, off);
	s->head_hlen = DTI_HDR_SIZE;
	s->head_size = size;
	return dti_take_head(r, s, off);
}

/*
 * The record decoded at @off (s->head, s->head_hlen, s->head_size): check
 * its fields, learn it if it is an event format, and make it the head.
 * Returns as dti_step().
 */
static int dti_take_head(struct dti_reader *r, struct dti_stream *s, uint64_t off)
{
	int ret;

	ret = dti_check_rec(r, s, off);
	if (ret)
		return ret;
	/*
	 * An event format is learnt, and returned: raw output keeps it.  One
	 * that does not hold together is said once per reader (every
	 * sub-buffer repeats it).
	 */
	if (s->head.flags & DTI_REC_FORMAT) {
		ret = dti_events_learn(&r->events, s->data + s->start + s->head_hlen,
				       s->head.len, s->head.swapped);
		if (ret < 0)
			return dti_read_failed(r, s);
		if (ret && !r->warned_format) {
			struct dti_notice n = {
				.type = DTI_NOTICE_WARNING, .cpu = s->head.cpu,
				.source = s->name, .offset = off,
			};

			r->warned_format = true;
			dti_notify(r, &n, "%s: event format at offset %llu does not hold together (its template, layout and field names disagree): events of its type print as hex",
				   s->name, (unsigned long long)off);
		}
	}
	s->head_pos = s->start;
	s->head_off = off;
	s->have_head = true;
	s->any = true;
	return 1;
}

static int __attribute__((noinline)) dti_peek_slow(struct dti_reader *r,
						   struct dti_stream *s)
{
	int ret;

	while (!s->have_head) {
		if (s->dead)
			return 0;
		ret = dti_step(r, s);
		if (ret <= 0)
			return ret;
	}
	return 1;
}

/**
 * dti_stream_peek - make the stream's next trace record its head
 *
 * Most records are plain and taken by dti_peek_fast(), those of the other
 * byte order here, with the tests dti_step() makes in that case; anything
 * else goes through dti_step().
 *
 * Return: 1 if s->head is valid, 0 if there is no record (end of data, or
 * no data yet from a followed source), -1 on error.
 */
int dti_stream_peek(struct dti_reader *r, struct dti_stream *s)
{
	uint64_t off = dti_pos(s), size;
	size_t have = s->end - s->start;

	if (s->have_head || dti_peek_fast(s))
		return 1;
	if (!s->in_sub || !s->sub_hdr.swapped || s->compact || (s->counted && !s->left) ||
	    have < DTI_HDR_SIZE || off + DTI_HDR_SIZE > s->sub_end ||
	    dti_decode_hdr(s->data + s->start, &s->head) != DTI_HDR_OK ||
	    (s->head.flags & DTI_REC_SUBBUF))
		return dti_peek_slow(r, s);
	size = dti_rec_size(s->head.len);
	if (size > have || size > s->sub_end - off || !dti_rec_plain(r, s))
		return dti_peek_slow(r, s);
	s->head_pos = s->start;
	s->head_off = off;
	s->head_hlen = DTI_HDR_SIZE;
	s->head_size = size;
	s->have_head = true;
	return 1;
}

/* ---- raw ring copies ---- */

static int dti_cmp_u64pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Why the slot at @off (number @k of @nslots) is not a sub-buffer of the ring. */
static const char *dti_slot_why(struct dti_stream *s, uint64_t k,
				uint64_t nslots, struct dti_hdr *h)
{
	unsigned char tmp[DTI_SUB_SIZE];
	const unsigned char *p;
	struct dti_sub sub;
	const char *why;

	p = dti_at(s, k * s->ident.subbuf_size, tmp, sizeof(tmp));
	if (!p)
		return "cannot be read";
	why = dti_sub_why(s, p, h, &sub);
	if (why)
		return why;
	if (sub.subbuf_size != s->ident.subbuf_size)
		return "another sub-buffer size";
	if (nslots == sub.n_subbufs && h->seq % nslots != k)
		return "a sub-buffer number that does not belong in this slot";
	return NULL;
}

/* Number of valid headers where the stream layout puts them, from 0. */
static uint64_t dti_chain(struct dti_stream *s)
{
	unsigned char tmp[DTI_SUB_SIZE];
	const unsigned char *p;
	struct dti_hdr h;
	struct dti_sub sub;
	uint64_t off = 0, n = 0;

	while ((p = dti_at(s, off, tmp, sizeof(tmp))) &&
	       !dti_sub_why(s, p, &h, &sub)) {
		n++;
		if (sub.state != DTI_SUBBUF_CLOSED)
			break;
		off += sub.subbuf_size - sub.padding;
	}
	return n;
}

/*
 * The first valid sub-buffer header at a multiple of @step before @lim,
 * @h and @sub filled: its offset, or UINT64_MAX if there is none.
 */
static uint64_t dti_first_sub(struct dti_stream *s, uint64_t step, uint64_t lim,
			      struct dti_hdr *h, struct dti_sub *sub)
{
	unsigned char tmp[DTI_SUB_SIZE];
	const unsigned char *p;
	uint64_t off;

	for (off = 0; off < lim; off += step) {
		p = dti_at(s, off, tmp, sizeof(tmp));
		if (!p)
			break;
		if (!dti_sub_why(s, p, h, sub))
			return off;
	}
	return UINT64_MAX;
}

/*
 * Set up the slots of a raw copy of sub-buffers of @ss bytes: those that
 * hold a valid sub-buffer header in number order, the others that are
 * not zero in the list of bad ones.  The first valid header says which
 * CPU and channel the copy is of.  With @chain (how many valid headers
 * the stream layout would find in a row, see dti_detect_raw()) not
 * UINT64_MAX, the source is taken as a raw copy only if more slots are
 * valid, or as many and it is exactly one ring of @n_subbufs.  Returns 0
 * (decided) or -1 (ENOMEM).
 */
static int dti_raw_setup(struct dti_stream *s, uint64_t ss, uint64_t chain,
			 uint32_t n_subbufs)
{
	unsigned char tmp[DTI_SUB_SIZE];
	const unsigned char *p;
	uint64_t k, nslots = s->size / ss, *pairs = NULL;
	struct dti_hdr h;
	struct dti_sub sub;
	size_t good = 0;

	memset(&s->ident, 0, sizeof(s->ident));
	if (dti_first_sub(s, ss, s->size, &h, &sub) != UINT64_MAX) {
		dti_ident_of(&s->ident, &sub);
		s->sub_hdr = h;
	}
	s->ident.subbuf_size = ss;	/* slots of this size, whatever the headers say */
	pairs = calloc(nslots ? nslots : 1, 2 * sizeof(*pairs));
	s->bad = calloc(nslots ? nslots : 1, sizeof(*s->bad));
	if (!pairs || !s->bad)
		goto nomem;
	for (k = 0; k < nslots; k++) {
		if (!dti_slot_why(s, k, nslots, &h)) {
			pairs[2 * good] = h.seq;
			pairs[2 * good++ + 1] = k * ss;
		} else if ((p = dti_at(s, k * ss, tmp, DTI_RECORD_ALIGN)) &&
			   !dti_zero(p, DTI_RECORD_ALIGN)) {
			s->bad[s->n_bad++] = k * ss;	/* never used if zero */
		}
	}
	if (chain != UINT64_MAX &&
	    (good < chain || (good == chain && s->size != ss * n_subbufs))) {
		free(pairs);
		free(s->bad);
		s->bad = NULL;
		s->n_bad = 0;
		memset(&s->ident, 0, sizeof(s->ident));
		return 0;
	}
	qsort(pairs, good, 2 * sizeof(*pairs), dti_cmp_u64pair);
	s->slots = malloc((good ? good : 1) * sizeof(*s->slots));
	if (!s->slots)
		goto nomem;
	for (k = 0; k < good; k++)
		s->slots[k] = pairs[2 * k + 1];
	free(pairs);
	s->n_slots = good;
	s->raw = true;
	return 0;
nomem:
	free(pairs);
	return dti_fail(ENOMEM, "%s: out of memory", s->name);
}

/*
 * Decide whether a source of known size is a raw ring copy; if so, set up
 * its slots in number order and the list of bad ones.  The sub-buffer
 * size is that of @hint (a snapshot's info) if the source is one ring of
 * its geometry: a copy whose first slots are unused (a memory dump's)
 * has no header at its start.  Otherwise the first valid sub-buffer
 * header at a page boundary gives it.  The layouts differ only where a
 * closed sub-buffer has padding: it is a raw copy if its size is a
 * multiple of the sub-buffer size and more slots start with a header
 * than the stream layout has headers in a row from the start, or as many
 * if it is exactly one ring.  A bad slot does not change the decision as
 * long as the others outnumber the stream chain.  Returns 0 (decided) or
 * -1 (ENOMEM).
 */
static int dti_detect_raw(struct dti_stream *s, const struct dti_ident *hint)
{
	uint64_t off, ss;
	struct dti_hdr h;
	struct dti_sub sub;

	if (hint && hint->set && hint->n_subbufs >= 2 &&
	    hint->subbuf_size >= DTI_SUB_SIZE + DTI_HDR_SIZE &&
	    hint->subbuf_size <= DTI_SUBBUF_MAX &&
	    s->size == (uint64_t)hint->subbuf_size * hint->n_subbufs)
		return dti_raw_setup(s, hint->subbuf_size, dti_chain(s),
				     hint->n_subbufs);
	off = dti_first_sub(s, DTI_PAGE, 2 * DTI_SUBBUF_MAX + 1, &h, &sub);
	if (off == UINT64_MAX)
		return 0;
	ss = sub.subbuf_size;
	if (off % ss || s->size % ss || s->size / ss < 2)
		return 0;
	return dti_raw_setup(s, ss, dti_chain(s), sub.n_subbufs);
}

/* ---- setting up ---- */

static int dti_stream_setup(struct dti_stream *s, const char *name)
{
	s->name = strdup(name);
	if (!s->name)
		return dti_fail(ENOMEM, "out of memory");
	s->owned = -1U;
	s->fast_want = 1;	/* no sub-buffer: dti_peek_fast() takes nothing */
	return 0;
}

/**
 * dti_stream_init_fd - set up a stream reading @fd (owned by the stream)
 * @live: a relay file that is being written
 * @hint: the channel's geometry if known (a snapshot's info), else NULL
 *
 * A regular file is read with pread() and may be a raw ring copy; pipes,
 * FIFOs, character devices and relay files are read sequentially.
 *
 * Return: 0, or -1 (ENOMEM, or errors reading a regular file).
 */
int dti_stream_init_fd(struct dti_stream *s, const char *name, int fd, bool live,
		       const struct dti_ident *hint)
{
	struct statfs sfs;
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->src = DTI_SRC_SEQ;
	if (dti_stream_setup(s, name) < 0 || dti_grow(s, DTI_BUF_INIT) < 0)
		return -1;
	if (!live && fstatfs(fd, &sfs) == 0 && sfs.f_type == DEBUGFS_MAGIC)
		live = true;
	s->live = live;
	if (live || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	s->src = DTI_SRC_FILE;
	s->size = st.st_size;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);	/* more read-ahead */
	return dti_detect_raw(s, hint);
}

static void dti_stream_mem(struct dti_stream *s, const void *mem, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->src = DTI_SRC_MEM;
	s->data = mem;
	s->size = s->end = len;
}

/* Set up a stream over @len bytes at @mem (not copied).  0 or -1 (ENOMEM). */
int dti_stream_init_mem(struct dti_stream *s, const char *name,
			const void *mem, size_t len)
{
	dti_stream_mem(s, mem, len);
	if (dti_stream_setup(s, name) < 0)
		return -1;
	return dti_detect_raw(s, NULL);
}

/**
 * dti_stream_init_ring - set up a stream over a copy of one CPU's ring
 * @mem: @len bytes, malloc()ed: the stream frees them
 * @subbuf_size: bytes per sub-buffer; @len is a multiple of it
 *
 * For a ring whose geometry is known (a dump descriptor's): no guessing
 * of the layout, which a ring whose first slots are unused could defeat.
 *
 * Return: 0, or -1 (ENOMEM; @mem is freed either way).
 */
int dti_stream_init_ring(struct dti_stream *s, const char *name, void *mem,
			 size_t len, uint32_t subbuf_size)
{
	dti_stream_mem(s, mem, len);
	s->mem_owned = mem;
	s->ring_subbuf = subbuf_size;
	if (dti_stream_setup(s, name) < 0)
		return -1;
	return dti_raw_setup(s, subbuf_size, UINT64_MAX, 0);
}

/**
 * dti_stream_init_pending - set up a stream over a pending store's records
 * @mem: @len bytes of records alone, malloc()ed: the stream frees them
 *
 * Return: 0, or -1 (ENOMEM; @mem is freed either way).
 */
int dti_stream_init_pending(struct dti_stream *s, const char *name, void *mem,
			    size_t len)
{
	dti_stream_mem(s, mem, len);
	s->mem_owned = mem;
	s->pending = true;
	return dti_stream_setup(s, name);
}

/*
 * A stream over the same source as @o, from its start: memory is shared
 * (@o's owner must outlive it), a file is opened again.  0, or -1
 * (ESPIPE: a pipe or a live file, which cannot be read twice; ENOMEM;
 * the errors of open()).
 */
int dti_stream_twin(struct dti_stream *s, const struct dti_stream *o,
		    const struct dti_ident *hint)
{
	int fd, ret;

	if (o->src == DTI_SRC_MEM) {
		dti_stream_mem(s, o->data, o->size);
		s->pending = o->pending;
		s->ring_subbuf = o->ring_subbuf;
		if (dti_stream_setup(s, o->name) < 0)
			return -1;
		if (o->pending)
			ret = 0;
		else if (o->ring_subbuf)
			ret = dti_raw_setup(s, o->ring_subbuf, UINT64_MAX, 0);
		else
			ret = dti_detect_raw(s, NULL);
	} else {
		if (o->src != DTI_SRC_FILE || o->live)
			return dti_fail(ESPIPE, "%s: a pipe or live file cannot be read twice",
					o->name);
		fd = open(o->name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return dti_fail(errno, "%s: %s", o->name, strerror(errno));
		ret = dti_stream_init_fd(s, o->name, fd, false, hint);
		s->pending = o->pending;
	}
	s->cpu = o->cpu;
	s->owned = o->owned;
	return ret;
}

void dti_stream_free(struct dti_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->name);
	free(s->buf);
	free(s->slots);
	free(s->bad);
	free(s->mem_owned);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
