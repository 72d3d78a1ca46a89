/* SPDX-License-Identifier: LGPL-2.1 */
/* libdti internals: not installed, not part of the API. */
#ifndef _DTI_LIBDTI_LOCAL_H
#define _DTI_LIBDTI_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/dti_record.h>
#include "dti/libdti.h"

#define DTI_HDR_SIZE		((size_t)sizeof(struct dti_record))	/* 40 */
/* Largest payload accepted when the geometry is not known yet. */
#define DTI_MAX_PAYLOAD		(16u << 20)
#define DTI_BUF_INIT		(64u << 10)
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

enum dti_hdr_status dti_decode_hdr(const void *p, struct dti_hdr *h,
				   uint32_t max_payload);
uint64_t dti_rec_size(uint32_t len);
/* Sub-buffer info payload (host order) of a DTI_REC_SUBBUF record. */
struct dti_sub {
	uint32_t subbuf_size, n_subbufs, padding, records, state;
	char name[DTI_NAME_MAX + 1];
};
void dti_decode_sub(const void *payload, bool swapped, struct dti_sub *s);
const char *dti_hdr_status_str(enum dti_hdr_status st);

/* stream.c: one CPU's records */
enum dti_stream_mode { DTI_MODE_STREAM, DTI_MODE_RAW };

struct dti_stream {
	char *name;			/* file name for messages */
	int fd;				/* -1 for memory */
	const unsigned char *mem;	/* memory source */
	uint64_t mem_len;
	bool live;			/* relay file: not seekable, may grow */
	bool eof;
	enum dti_stream_mode mode;

	unsigned char *buf;
	size_t cap, start, end;
	uint64_t buf_off;		/* source offset of buf[0] */
	uint64_t read_off;		/* source offset of the next read */

	/* raw mode: sub-buffers in ring order */
	uint32_t subbuf_size;
	uint64_t *sub_off;		/* offsets of sub-buffers, oldest first */
	size_t n_sub, cur_sub;
	uint32_t sub_left;		/* records left in the current sub-buffer */
	uint64_t sub_end;		/* end of data of the current sub-buffer */

	/* the next record, decoded */
	bool have_head;
	struct dti_hdr head;
	size_t head_pos;		/* in buf */
	uint64_t head_off;		/* in the source */

	/* last sequence number per CPU (a merged file holds several) */
	struct dti_cpu_seq {
		uint64_t seq;
		bool seen;
	} *cs;
	size_t n_cs;
	bool seen;			/* any trace record yet */
	unsigned int cpu;		/* from records or the file name */
};

struct dti_reader {
	struct dti_stream *s;
	unsigned int n;
	unsigned int flags;
	int last;			/* stream whose head was returned, or -1 */
	dti_notice_fn notice;
	void *notice_arg;
	dti_formatter_fn fmt;
	void *fmt_arg;
	struct dti_ksyms *ksyms;
};

int dti_stream_init_fd(struct dti_stream *s, const char *name, int fd, bool live);
void dti_stream_init_mem(struct dti_stream *s, const char *name,
			 const void *mem, size_t len);
void dti_stream_free(struct dti_stream *s);
/* 1: head valid, 0: no record (end or nothing yet), -1: error */
int dti_stream_peek(struct dti_reader *r, struct dti_stream *s);
void dti_stream_consume(struct dti_stream *s);
void dti_notify(struct dti_reader *r, enum dti_notice_type type,
		struct dti_stream *s, uint64_t from, uint64_t to, uint64_t count,
		uint64_t offset);

/* channel.c */
const char *dti_debugfs(void);
int dti_check_channel(const char *name, char *dir, size_t size);

#endif /* _DTI_LIBDTI_LOCAL_H */
