// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: one CPU's stream of records.
 *
 * Two layouts are read:
 *
 *   stream  what read() of a relay trace file returns: sub-buffer header
 *           records and trace records back to back, padding stripped.
 *           Read sequentially through a buffer that only ever holds a few
 *           records.  Trailing zero-fill and zero-filled gaps before a
 *           sub-buffer header are skipped.
 *   raw     a byte copy of the ring (mmap, memory dump): the file size is
 *           a multiple of the sub-buffer size and every sub-buffer starts
 *           with its header.  Sub-buffers are visited in the order of
 *           their numbers (oldest first, whatever their place in the
 *           ring); in each, exactly the records its header counts are
 *           read, so padding and stale data after them are never looked at.
 *
 * A live source (a relay file in debugfs) may return a record that its
 * writer on another CPU has reserved but not yet filled in.  Such bytes
 * can only be at the end of what read() returned, so the reader skips to
 * that end, reports the skip, and continues at the next read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "libdti-local.h"

#define DEBUGFS_MAGIC	0x64626720

static int dti_grow(struct dti_stream *s, size_t need)
{
	unsigned char *nb;
	size_t cap = s->cap ? s->cap : DTI_BUF_INIT;

	while (cap < need)
		cap *= 2;
	if (cap == s->cap)
		return 0;
	nb = realloc(s->buf, cap);
	if (!nb)
		return dti_fail(ENOMEM, "%s: out of memory for a %zu-byte buffer",
				s->name, cap);
	s->buf = nb;
	s->cap = cap;
	return 0;
}

static ssize_t dti_src_pread(struct dti_stream *s, void *dst, size_t len,
			     uint64_t off)
{
	ssize_t n;

	if (s->fd < 0) {
		if (off >= s->mem_len)
			return 0;
		if (len > s->mem_len - off)
			len = s->mem_len - off;
		memcpy(dst, s->mem + off, len);
		return len;
	}
	do {
		n = pread(s->fd, dst, len, off);
	} while (n < 0 && errno == EINTR);
	return n;
}

/*
 * Read more data so that at least @need bytes are buffered from s->start.
 * Returns 1 if they are, 0 if the source has no more now, -1 on error.
 */
static int dti_fill(struct dti_stream *s, size_t need)
{
	ssize_t n;

	if (s->end - s->start >= need)
		return 1;
	if (s->start && (s->cap - s->start < need || s->start == s->end)) {
		memmove(s->buf, s->buf + s->start, s->end - s->start);
		s->buf_off += s->start;
		s->end -= s->start;
		s->start = 0;
	}
	if (dti_grow(s, s->start + need) < 0)
		return -1;
	while (s->end - s->start < need) {
		if (s->fd < 0) {
			n = dti_src_pread(s, s->buf + s->end, s->cap - s->end,
					  s->read_off);
		} else {
			do {
				n = read(s->fd, s->buf + s->end, s->cap - s->end);
			} while (n < 0 && errno == EINTR);
		}
		if (n < 0)
			return dti_fail(errno, "%s: read error at offset %llu: %s",
					s->name, (unsigned long long)s->read_off,
					strerror(errno));
		if (n == 0) {
			s->eof = true;
			return 0;
		}
		s->end += n;
		s->read_off += n;
	}
	return 1;
}

static uint64_t dti_pos_off(const struct dti_stream *s, size_t pos)
{
	return s->buf_off + pos;
}

static int dti_corrupt(struct dti_stream *s, uint64_t off, const char *what)
{
	return dti_fail(EBADMSG, "%s: corrupt data at offset %llu: %s",
			s->name, (unsigned long long)off, what);
}

static int dti_cmp_u64pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * Decide whether a regular file of @size bytes is a raw ring copy; if so
 * set up s->sub_off in sub-buffer number order.  Returns 0 (decided) or -1.
 */
static int dti_detect_raw(struct dti_stream *s, uint64_t size)
{
	unsigned char hb[DTI_SUBBUF_HEADER_SIZE];
	struct dti_hdr h;
	struct dti_sub sub;
	uint64_t ss, k, nslots, *pairs;
	size_t n = 0;

	if (size < sizeof(hb) ||
	    dti_src_pread(s, hb, sizeof(hb), 0) != (ssize_t)sizeof(hb))
		return 0;
	if (dti_decode_hdr(hb, &h, DTI_MAX_PAYLOAD) != DTI_HDR_OK ||
	    !(h.flags & DTI_REC_SUBBUF))
		return 0;
	dti_decode_sub(hb + DTI_HDR_SIZE, h.swapped, &sub);
	ss = sub.subbuf_size;
	if (ss < DTI_SUBBUF_HEADER_SIZE + DTI_HDR_SIZE || ss % DTI_RECORD_ALIGN ||
	    size % ss)
		return 0;
	nslots = size / ss;
	pairs = calloc(nslots, 2 * sizeof(*pairs));
	if (!pairs)
		return dti_fail(ENOMEM, "%s: out of memory", s->name);
	for (k = 0; k < nslots; k++) {
		enum dti_hdr_status st;

		if (dti_src_pread(s, hb, sizeof(hb), k * ss) != (ssize_t)sizeof(hb))
			goto not_raw;
		st = dti_decode_hdr(hb, &h, DTI_MAX_PAYLOAD);
		if (st == DTI_HDR_ZERO)
			continue;		/* never used */
		if (st != DTI_HDR_OK || !(h.flags & DTI_REC_SUBBUF))
			goto not_raw;
		dti_decode_sub(hb + DTI_HDR_SIZE, h.swapped, &sub);
		if (sub.subbuf_size != ss)
			goto not_raw;
		pairs[2 * n] = h.seq;
		pairs[2 * n + 1] = k * ss;
		n++;
	}
	/* One sub-buffer: both layouts read the same; keep streaming. */
	if (nslots < 2) {
		free(pairs);
		return 0;
	}
	qsort(pairs, n, 2 * sizeof(*pairs), dti_cmp_u64pair);
	s->sub_off = malloc((n ? n : 1) * sizeof(*s->sub_off));
	if (!s->sub_off) {
		free(pairs);
		return dti_fail(ENOMEM, "%s: out of memory", s->name);
	}
	for (k = 0; k < n; k++)
		s->sub_off[k] = pairs[2 * k + 1];
	free(pairs);
	s->n_sub = n;
	s->cur_sub = 0;
	s->subbuf_size = ss;
	s->mode = DTI_MODE_RAW;
	s->start = s->end = 0;
	s->sub_left = 0;
	return dti_grow(s, ss);
not_raw:
	free(pairs);
	return 0;
}

static int dti_stream_setup(struct dti_stream *s, const char *name)
{
	s->name = strdup(name);
	if (!s->name)
		return dti_fail(ENOMEM, "out of memory");
	s->mode = DTI_MODE_STREAM;
	return dti_grow(s, DTI_BUF_INIT);
}

/**
 * dti_stream_init_fd - set up a stream reading @fd (owned by the stream)
 * @live: a relay file that is being written
 *
 * Return: 0, or -1 (ENOMEM, or errors reading a regular file).
 */
int dti_stream_init_fd(struct dti_stream *s, const char *name, int fd, bool live)
{
	struct statfs sfs;
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	if (dti_stream_setup(s, name) < 0)
		return -1;
	if (!live && fstatfs(fd, &sfs) == 0 && sfs.f_type == DEBUGFS_MAGIC)
		live = true;
	s->live = live;
	if (!live && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return dti_detect_raw(s, st.st_size);
	return 0;
}

/* Set up a stream over @len bytes at @mem (not copied). */
void dti_stream_init_mem(struct dti_stream *s, const char *name,
			 const void *mem, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->mem = mem;
	s->mem_len = len;
	if (dti_stream_setup(s, name) == 0)
		dti_detect_raw(s, len);
}

void dti_stream_free(struct dti_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->name);
	free(s->buf);
	free(s->sub_off);
	free(s->cs);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

void dti_stream_consume(struct dti_stream *s)
{
	if (!s->have_head)
		return;
	s->start = s->head_pos + dti_rec_size(s->head.len);
	s->have_head = false;
	if (s->mode == DTI_MODE_RAW && s->sub_left)
		s->sub_left--;
}

/* Load the next sub-buffer of a raw stream.  1 loaded, 0 none left, -1 error. */
static int dti_raw_next_sub(struct dti_stream *s)
{
	struct dti_hdr h;
	struct dti_sub sub;
	uint64_t off;
	ssize_t n;

	if (s->cur_sub >= s->n_sub)
		return 0;
	off = s->sub_off[s->cur_sub++];
	n = dti_src_pread(s, s->buf, s->subbuf_size, off);
	if (n != (ssize_t)s->subbuf_size)
		return dti_fail(n < 0 ? errno : EBADMSG,
				"%s: cannot read the sub-buffer at offset %llu",
				s->name, (unsigned long long)off);
	if (dti_decode_hdr(s->buf, &h, s->subbuf_size) != DTI_HDR_OK)
		return dti_corrupt(s, off, "sub-buffer header changed");
	dti_decode_sub(s->buf + DTI_HDR_SIZE, h.swapped, &sub);
	s->buf_off = off;
	s->start = DTI_SUBBUF_HEADER_SIZE;
	s->end = s->subbuf_size;
	if (sub.state == DTI_SUBBUF_CLOSED) {
		if (sub.padding > s->subbuf_size - DTI_SUBBUF_HEADER_SIZE)
			return dti_corrupt(s, off, "sub-buffer padding larger than the sub-buffer");
		s->end = s->subbuf_size - sub.padding;
	}
	s->sub_left = sub.records;
	if (!s->seen)
		s->cpu = h.cpu;
	return 1;
}

static int dti_peek_raw(struct dti_stream *s)
{
	enum dti_hdr_status st;
	int ret;

	for (;;) {
		if (!s->sub_left || s->end - s->start < DTI_HDR_SIZE) {
			ret = dti_raw_next_sub(s);
			if (ret <= 0)
				return ret;
			continue;
		}
		st = dti_decode_hdr(s->buf + s->start, &s->head,
				    s->end - s->start - DTI_HDR_SIZE);
		if (st != DTI_HDR_OK)
			return dti_corrupt(s, dti_pos_off(s, s->start),
					   dti_hdr_status_str(st));
		if (dti_rec_size(s->head.len) > s->end - s->start)
			return dti_corrupt(s, dti_pos_off(s, s->start),
					   "record runs past the end of its sub-buffer");
		if (s->head.flags & DTI_REC_SUBBUF)
			return dti_corrupt(s, dti_pos_off(s, s->start),
					   "sub-buffer header inside a sub-buffer");
		s->head_pos = s->start;
		s->head_off = dti_pos_off(s, s->start);
		s->have_head = true;
		return 1;
	}
}

static bool dti_tail_is_zero(const struct dti_stream *s)
{
	size_t i;

	for (i = s->start; i < s->end; i++)
		if (s->buf[i])
			return false;
	return true;
}

/* Skip what a live source returned but a writer had not finished. */
static void dti_skip_inflight(struct dti_reader *r, struct dti_stream *s)
{
	uint64_t off = dti_pos_off(s, s->start);
	size_t n = s->end - s->start;

	s->start = s->end;
	dti_notify(r, DTI_NOTICE_SKIPPED, s, 0, 0, n, off);
}

/*
 * Skip zero bytes in a stream file.  Returns 1 if a sub-buffer header
 * follows, 0 at the end of the file, -1 if other data follows.
 */
static int dti_skip_zeros(struct dti_stream *s)
{
	uint64_t at = dti_pos_off(s, s->start);
	struct dti_hdr h;
	size_t i;
	int ret;

	for (;;) {
		for (i = s->start; i < s->end && !s->buf[i]; i++)
			;
		/* Records start at multiples of 8 in a stream file. */
		s->start = i - (dti_pos_off(s, i) % DTI_RECORD_ALIGN);
		if (i < s->end)
			break;
		s->start = s->end;
		ret = dti_fill(s, DTI_HDR_SIZE);
		if (ret < 0)
			return -1;
		if (s->start == s->end)
			return 0;
	}
	ret = dti_fill(s, DTI_HDR_SIZE);
	if (ret < 0)
		return -1;
	if (ret == 0 ||
	    dti_decode_hdr(s->buf + s->start, &h, DTI_MAX_PAYLOAD) != DTI_HDR_OK ||
	    !(h.flags & DTI_REC_SUBBUF))
		return dti_corrupt(s, at, "zero bytes followed by data that is not a sub-buffer header");
	return 1;
}

static int dti_peek_stream(struct dti_reader *r, struct dti_stream *s)
{
	bool follow = r->flags & DTI_OPEN_FOLLOW;
	enum dti_hdr_status st;
	uint64_t size, off;
	int ret;

	for (;;) {
		ret = dti_fill(s, DTI_HDR_SIZE);
		if (ret < 0)
			return -1;
		if (ret == 0) {
			if (s->start == s->end || (s->live && follow))
				return 0;
			if (s->live) {
				dti_skip_inflight(r, s);
				return 0;
			}
			if (dti_tail_is_zero(s)) {
				s->start = s->end;	/* short zero fill at the end */
				return 0;
			}
			return dti_fail(EBADMSG,
					"%s: truncated record header at offset %llu (%zu of %zu bytes)",
					s->name,
					(unsigned long long)dti_pos_off(s, s->start),
					s->end - s->start, DTI_HDR_SIZE);
		}
		off = dti_pos_off(s, s->start);
		st = dti_decode_hdr(s->buf + s->start, &s->head, DTI_MAX_PAYLOAD);
		if (st == DTI_HDR_ZERO && !s->live) {
			ret = dti_skip_zeros(s);
			if (ret <= 0)
				return ret;
			continue;
		}
		if (st != DTI_HDR_OK) {
			if (s->live) {
				dti_skip_inflight(r, s);
				continue;
			}
			if (st == DTI_HDR_BAD_VERSION)
				return dti_fail(EPROTO,
						"%s: record version %u at offset %llu is not supported (this reader knows version %u)",
						s->name, s->buf[s->start + 2],
						(unsigned long long)off,
						DTI_RECORD_VERSION);
			return dti_corrupt(s, off, dti_hdr_status_str(st));
		}
		size = dti_rec_size(s->head.len);
		ret = dti_fill(s, size);
		if (ret < 0)
			return -1;
		if (ret == 0) {
			if (s->live && follow)
				return 0;
			if (s->live) {
				dti_skip_inflight(r, s);
				return 0;
			}
			return dti_fail(EBADMSG,
					"%s: truncated record at offset %llu: %llu bytes, %zu left in the file",
					s->name, (unsigned long long)off,
					(unsigned long long)size, s->end - s->start);
		}
		if (s->head.flags & DTI_REC_SUBBUF) {
			struct dti_sub sub;

			dti_decode_sub(s->buf + s->start + DTI_HDR_SIZE,
				       s->head.swapped, &sub);
			if (!s->seen)
				s->cpu = s->head.cpu;
			s->subbuf_size = sub.subbuf_size;
			s->start += size;
			continue;
		}
		s->head_pos = s->start;
		s->head_off = off;
		s->have_head = true;
		return 1;
	}
}

/**
 * dti_stream_peek - make the stream's next trace record its head
 *
 * Return: 1 if s->head is valid, 0 if there is no record (end of data, or
 * no data yet from a followed source), -1 on error.
 */
int dti_stream_peek(struct dti_reader *r, struct dti_stream *s)
{
	if (s->have_head)
		return 1;
	if (s->eof && !(s->live && (r->flags & DTI_OPEN_FOLLOW)) &&
	    s->mode == DTI_MODE_STREAM && s->start == s->end)
		return 0;
	s->eof = false;
	if (s->mode == DTI_MODE_RAW)
		return dti_peek_raw(s);
	return dti_peek_stream(r, s);
}
