/* SPDX-License-Identifier: LGPL-2.1 */
/* libdti internals: not installed, not part of the API. */
#ifndef _DTI_LIBDTI_LOCAL_H
#define _DTI_LIBDTI_LOCAL_H

#include <byteswap.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <linux/dti_record.h>
#include "dti/libdti.h"

#define DTI_HDR_SIZE		((size_t)sizeof(struct dti_record))	/* 40 */
#define DTI_SUB_SIZE		((size_t)DTI_SUBBUF_HEADER_SIZE)	/* 96 */
/*
 * Largest sub-buffer accepted: dti.ko makes them up to 4 MiB
 * (DTI_SUBBUF_SIZE_MAX in <linux/dti.h>, a kernel header).  A record never
 * straddles sub-buffers, so this bounds every payload too, and with it
 * the memory a reader needs whatever the input claims.
 */
#define DTI_SUBBUF_MAX		(4u << 20)
#define DTI_MAX_PAYLOAD		((uint32_t)(DTI_SUBBUF_MAX - DTI_SUB_SIZE - DTI_HDR_SIZE))
/* CPU numbers are 16 bits in the record header (dti_record.cpu). */
#define DTI_CPU_LIMIT		65536u
#define DTI_BUF_INIT		(64u << 10)
#define DTI_OBUF_SIZE		(256u << 10)
#define DTI_DEBUGFS_DEFAULT	"/sys/kernel/debug"

/* error.c */
int dti_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *dti_fail_null(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* decode.c: a host-order copy of a record header */
struct dti_hdr {
	uint8_t version, flags, hdr_len;
	int8_t level;
	uint16_t cpu;		/* buffer holding the record: seq counts per it */
	uint32_t log_cpu;	/* CPU that logged it */
	uint32_t len;
	uint64_t seq, ts_ns, caller;
	bool swapped;
};

enum dti_hdr_status {
	DTI_HDR_OK,
	DTI_HDR_ZERO,		/* all-zero header: padding or unused space */
	DTI_HDR_BAD_MAGIC,
	DTI_HDR_BAD_VERSION,
	DTI_HDR_BAD_LEN,	/* hdr_len or len impossible */
};

/* Bytes a record with a payload of @len bytes occupies. */
static inline uint64_t dti_rec_size(uint32_t len)
{
	return DTI_RECORD_SIZE((uint64_t)len);
}

/**
 * dti_decode_hdr - decode and check the framing of the header at @p
 *
 * @p holds DTI_HDR_SIZE bytes.  A payload longer than any sub-buffer can
 * hold is refused here; the caller checks it against its sub-buffer.
 *
 * Return: DTI_HDR_OK with @h filled, or why the header is not valid.
 */
static inline enum dti_hdr_status dti_decode_hdr(const void *p, struct dti_hdr *h)
{
	struct dti_record r;

	memcpy(&r, p, sizeof(r));
	h->swapped = r.magic != DTI_RECORD_MAGIC;
	if (h->swapped && r.magic != bswap_16(DTI_RECORD_MAGIC)) {
		/* Zero where a header belongs: padding or never written. */
		return r.magic || r.version || r.flags || r.level || r.hdr_len ||
		       r.cpu ? DTI_HDR_BAD_MAGIC : DTI_HDR_ZERO;
	}
	if (r.version != DTI_RECORD_VERSION)
		return DTI_HDR_BAD_VERSION;
	h->len = h->swapped ? bswap_32(r.len) : r.len;
	if (r.hdr_len != DTI_HDR_SIZE || h->len > DTI_MAX_PAYLOAD)
		return DTI_HDR_BAD_LEN;
	h->version = r.version;
	h->flags = r.flags;
	h->hdr_len = r.hdr_len;
	h->level = r.level;
	h->cpu = h->swapped ? bswap_16(r.cpu) : r.cpu;
	h->log_cpu = h->swapped ? bswap_32(r.log_cpu) : r.log_cpu;
	h->seq = h->swapped ? bswap_64(r.seq) : r.seq;
	h->ts_ns = h->swapped ? bswap_64(r.ts_ns) : r.ts_ns;
	h->caller = h->swapped ? bswap_64(r.caller) : r.caller;
	return DTI_HDR_OK;
}

/* Sub-buffer info payload (host order) of a DTI_REC_SUBBUF record. */
struct dti_sub {
	uint32_t subbuf_size, n_subbufs, padding, records, state, reserved;
	bool name_ok;		/* the name field holds a NUL */
	char name[DTI_NAME_MAX + 1];
};
void dti_decode_sub(const void *payload, bool swapped, struct dti_sub *s);
const char *dti_hdr_status_str(enum dti_hdr_status st);
const char *dti_sub_invalid(const struct dti_hdr *h, const struct dti_sub *sub);
const char *dti_rec_invalid(const struct dti_hdr *h, unsigned int ncpu,
			    char *buf, size_t size);

/* stream.c: one CPU's records */
enum dti_src { DTI_SRC_MEM, DTI_SRC_FILE, DTI_SRC_SEQ };

/* Who wrote a stream: from its sub-buffer headers, or the directory's info. */
struct dti_ident {
	bool set;
	uint32_t subbuf_size, n_subbufs;
	char name[DTI_NAME_MAX + 1];
	const char *from;	/* file it was taken from, for messages */
};

struct dti_stream {
	char *name;			/* file name for messages */
	int fd;				/* -1 for memory */
	enum dti_src src;		/* memory, seekable file, or read() only */
	bool live;			/* relay file: may grow, may be mid-write */
	bool raw;			/* a copy of the ring: sub-buffers in slots */
	bool dead;			/* nothing more is read from it */
	uint64_t size;			/* MEM and FILE: bytes in the source */

	/* window on the source: data[start, end) is at source offset base + start */
	const unsigned char *data;	/* buf, or the memory source */
	unsigned char *buf;
	size_t cap, start, end;
	uint64_t base;

	/* the sub-buffer being read */
	bool in_sub;
	bool counted;			/* its record count and data end are exact */
	bool expect_sub;		/* the next data must be a sub-buffer header, */
	const char *expect_after;	/* after this */
	struct dti_hdr sub_hdr;
	struct dti_sub sub;
	uint64_t sub_off, sub_end;	/* its header; the end of its data */
	uint32_t left;			/* records it counts that are not read yet */
	uint64_t pad_next;		/* where a copy with padding has the next one */
	struct dti_ident ident;		/* of its first sub-buffer header */
	bool warned_ident, warned_dup;

	/* raw mode: slot offsets in sub-buffer number order; bad slots */
	uint64_t *slots, *bad;
	size_t n_slots, cur_slot, n_bad, cur_bad;

	/* the next record, decoded */
	bool have_head;
	struct dti_hdr head;
	size_t head_pos;		/* in data */
	uint64_t head_off;		/* in the source */

	bool any;			/* DTI data seen */
	unsigned long damaged;		/* damage notices about it */
	unsigned int cpu;		/* from records or the file name */
	unsigned int owned;		/* last CPU it was found to own */
};

/* What the reader knows of each CPU (by the buffer that holds its records). */
struct dti_cpu {
	int owner;			/* stream whose records are merged, or -1 */
	bool seen, warned;
	uint64_t seq;			/* last sequence number */
	uint64_t next_seq;		/* from a snapshot's stats, or UINT64_MAX */
};

/* dti_print() output collected for one FILE */
struct dti_obuf {
	char *p;
	size_t len, cap;
	FILE *out;
	int err;			/* errno of the first failed write */
};

/* A caller as dti_print() shows it ("func+0x1c/0x80 [mod]" at most this long) */
#define DTI_CALLER_MAX	600
struct dti_caller {
	uint64_t addr;
	unsigned int len;		/* 0: empty */
	bool plain;			/* JSON takes it as it is */
	char text[DTI_CALLER_MAX];
};
#define DTI_CALLERS	8	/* 1 << 3: dti_put_caller() hashes to 3 bits */

struct dti_reader {
	struct dti_stream *s;
	unsigned int n;
	unsigned int flags;
	int last;			/* stream whose head was returned, or -1 */
	bool started;
	dti_notice_fn notice;
	void *notice_arg;
	dti_formatter_fn fmt;
	void *fmt_arg;
	struct dti_ksyms *ksyms;
	unsigned long n_damage, n_warning;

	struct dti_cpu *cpus;
	unsigned int n_cpus;
	unsigned int ncpu;		/* CPUs of the machine if known, else DTI_CPU_LIMIT */
	char *dir;			/* dti_open_dir(): checked at the first dti_next() */
	struct dti_ident ident;		/* the channel the streams should be of */
	struct dti_obuf ob;		/* dti_print() output not written yet */
	struct dti_caller callers[DTI_CALLERS];
};

int dti_stream_init_fd(struct dti_stream *s, const char *name, int fd, bool live);
int dti_stream_init_mem(struct dti_stream *s, const char *name,
			const void *mem, size_t len);
void dti_stream_free(struct dti_stream *s);
/* 1: head valid, 0: no record (end or nothing yet), -1: error */
int dti_stream_peek(struct dti_reader *r, struct dti_stream *s);

/* Step past the head. */
static inline void dti_stream_consume(struct dti_stream *s)
{
	if (!s->have_head)
		return;
	s->start = s->head_pos + dti_rec_size(s->head.len);
	s->have_head = false;
	if (s->in_sub && s->counted)
		s->left--;
}

/* reader.c */
void dti_notify(struct dti_reader *r, struct dti_notice *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void dti_check_ident(struct dti_reader *r, struct dti_stream *s,
		     const struct dti_ident *id);

/* format.c */
int dti_ob_flush(struct dti_obuf *ob);

/* channel.c */
char *dti_read_file(const char *path);
const char *dti_debugfs(void);
int dti_check_channel(const char *name, char *dir, size_t size);

#endif /* _DTI_LIBDTI_LOCAL_H */
