/* SPDX-License-Identifier: LGPL-2.1 */
/* libdti internals: not installed, not part of the API. */
#ifndef _DTI_LIBDTI_LOCAL_H
#define _DTI_LIBDTI_LOCAL_H

#include <byteswap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <linux/dti_record.h>
#include "dti/libdti.h"

#define DTI_HDR_SIZE		((size_t)sizeof(struct dti_record))	/* 40 */
/* A sub-buffer header: version 1's, and the largest, version 2's */
#define DTI_SUB_SIZE_V1		((size_t)DTI_SUBBUF_HEADER_SIZE_V1)	/* 96 */
#define DTI_SUB_SIZE		((size_t)DTI_SUBBUF_HEADER_SIZE)	/* 120 */
#define DTI_CREC_SIZE_MIN	((size_t)sizeof(struct dti_crec))	/* 8 */
/*
 * Largest sub-buffer accepted: dti.ko makes them up to 4 MiB
 * (DTI_SUBBUF_SIZE_MAX in <linux/dti.h>, a kernel header).  A record never
 * straddles sub-buffers, so this bounds every payload too, and with it
 * the memory a reader needs whatever the input claims.
 */
#define DTI_SUBBUF_MAX		(4u << 20)
#define DTI_MAX_PAYLOAD		((uint32_t)(DTI_SUBBUF_MAX - DTI_SUB_SIZE_V1 - DTI_CREC_SIZE_MIN))
/*
 * The rest of dti.ko's limits on a channel's geometry (<linux/dti.h>:
 * DTI_SUBBUF_SIZE_MIN, DTI_N_SUBBUFS_MIN/MAX, DTI_BUF_SIZE_MAX), which a
 * dump descriptor is checked against before its rings are read.
 */
#define DTI_SUBBUF_MIN		512u
#define DTI_NSUB_MIN		2u
#define DTI_NSUB_MAX		4096u
#define DTI_RING_MAX		(64u << 20)
/* CPU numbers are 16 bits in the record header (dti_record.cpu). */
#define DTI_CPU_LIMIT		65536u
/*
 * Each stream's window (read() size), and dti_print()'s output buffer.
 * Measured best (page cache warm, L2 of 512 KiB): larger windows save
 * no time on system calls and leave more of what was read in L3.
 */
#define DTI_BUF_INIT		(128u << 10)
/*
 * The largest window a live trace file is read with: twice the largest
 * sub-buffer, so that the room left after what the window holds can take
 * any record with the header a read() starts with
 */
#define DTI_LIVE_READ_MAX	(8u << 20)
#define DTI_OBUF_SIZE		(256u << 10)
#define DTI_DEBUGFS_DEFAULT	"/sys/kernel/debug"
/* A pending store's records in a snapshot directory (dti_dump_save()) */
#define DTI_PENDING_FILE	"pending"
/* The module table in a snapshot directory (dti snapshot, dti_dump_save()) */
#define DTI_SNAP_MODULES_FILE	"modules"
#define DTI_SNAP_RELEASE_FILE	"release"
#define DTI_SNAP_BOOT_ID_FILE	"boot_id"

/* dump.c: how @d reads the dump's memory (excerpt.c reads it so too) */
const struct dti_dump_mem *dti_dump_get_mem(const struct dti_dump *d);

/* error.c */
int dti_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *dti_fail_null(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * decode.c: a host-order copy of a record header, laid out as struct
 * dti_record, so that one of the host's order is copied whole.
 */
struct dti_hdr {
	uint16_t magic;
	uint8_t version, flags;
	int8_t level;
	uint8_t hdr_len;
	uint16_t cpu;		/* buffer holding the record: seq counts per it */
	uint32_t len;
	uint32_t log_cpu;	/* CPU that logged it */
	uint64_t seq, ts_ns, caller;
	bool swapped;
};
_Static_assert(offsetof(struct dti_hdr, cpu) == offsetof(struct dti_record, cpu) &&
	       offsetof(struct dti_hdr, log_cpu) == offsetof(struct dti_record, log_cpu) &&
	       offsetof(struct dti_hdr, caller) == offsetof(struct dti_record, caller) &&
	       offsetof(struct dti_hdr, swapped) == sizeof(struct dti_record),
	       "struct dti_hdr starts as struct dti_record");

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

/*
 * The flags a plain record may have (dti_rec_plain(), dti_peek_fast()):
 * a text record's, a binary one's or an event's, not a format's
 */
#define DTI_REC_PLAIN	(DTI_REC_TEXT | DTI_REC_TRUNCATED | DTI_REC_RESERVED | \
			 DTI_REC_TYPED)

/*
 * An event with @flags and a payload of @len bytes that dti_rec_invalid()
 * refuses: text too, or shorter than its type's id.  Plain otherwise.
 */
static inline bool dti_typed_odd(unsigned int flags, uint32_t len)
{
	return (flags & DTI_REC_TYPED) &&
	       ((flags & DTI_REC_TEXT) || len < sizeof(uint16_t));
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
	memcpy(h, p, DTI_HDR_SIZE);
	h->swapped = h->magic != DTI_RECORD_MAGIC;
	if (h->swapped && h->magic != bswap_16(DTI_RECORD_MAGIC)) {
		/* Zero where a header belongs: padding or never written. */
		return h->magic || h->version || h->flags || h->level ||
		       h->hdr_len || h->cpu ? DTI_HDR_BAD_MAGIC : DTI_HDR_ZERO;
	}
	/* Whole headers are version 1's, and version 2's sub-buffer headers. */
	if (h->version != DTI_RECORD_VERSION_1 &&
	    (h->version != DTI_RECORD_VERSION || !(h->flags & DTI_REC_SUBBUF)))
		return DTI_HDR_BAD_VERSION;
	if (h->swapped) {
		h->magic = DTI_RECORD_MAGIC;
		h->cpu = bswap_16(h->cpu);
		h->len = bswap_32(h->len);
		h->log_cpu = bswap_32(h->log_cpu);
		h->seq = bswap_64(h->seq);
		h->ts_ns = bswap_64(h->ts_ns);
		h->caller = bswap_64(h->caller);
	}
	if (h->hdr_len != DTI_HDR_SIZE || h->len > DTI_MAX_PAYLOAD)
		return DTI_HDR_BAD_LEN;
	return DTI_HDR_OK;
}

/* Bytes of the sub-buffer header of record version @version (1 or 2). */
static inline size_t dti_sub_size(uint8_t version)
{
	return version == DTI_RECORD_VERSION_1 ? DTI_SUB_SIZE_V1 : DTI_SUB_SIZE;
}

/* Bytes of the info a sub-buffer header of record version @version has */
static inline uint32_t dti_sub_info_len(uint8_t version)
{
	return version == DTI_RECORD_VERSION_1 ? DTI_SUBBUF_INFO_V1_SIZE :
						 sizeof(struct dti_subbuf_info);
}

/*
 * Sub-buffer info payload (host order) of a DTI_REC_SUBBUF record; for
 * version 1 the bases are 0.
 */
struct dti_sub {
	uint32_t subbuf_size, n_subbufs, padding, records, state, generation;
	bool name_ok;		/* the name field holds a NUL */
	char name[DTI_NAME_MAX + 1];
	uint64_t seq_base, ts_base, caller_prev;
	uint8_t version;	/* the header's record version */
};
/* @payload holds dti_sub_info_len(@h->version) bytes */
void dti_decode_sub(const void *payload, const struct dti_hdr *h, struct dti_sub *s);
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
	bool pending;			/* a pending store's records (DTI_REC_PENDING),
					 * sorted by time: merged whatever their CPU,
					 * without sequence checks */
	bool dead;			/* nothing more is read from it */
	uint32_t ring_subbuf;		/* dti_stream_init_ring()'s sub-buffer size, or 0 */
	uint64_t size;			/* MEM and FILE: bytes in the source */

	/* window on the source: data[start, end) is at source offset base + start */
	const unsigned char *data;	/* buf, or the memory source */
	unsigned char *buf;
	void *mem_owned;		/* a memory source freed with the stream */
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

	/*
	 * dti_peek_fast(): the first 8 header bytes of a plain record of the
	 * sub-buffer being read, under a mask; a mask of 0 with 1 wanted
	 * when there is no such sub-buffer.
	 */
	uint64_t fast_mask, fast_want;
	struct dti_obuf *pin;		/* holds a run of this window's bytes */

	/* the next record, decoded */
	bool have_head;
	struct dti_hdr head;
	size_t head_pos;		/* in data */
	uint64_t head_off;		/* in the source */
	uint32_t head_hlen;		/* bytes of its header: where its payload starts */
	uint32_t head_size;		/* bytes it takes */

	/*
	 * A version-2 sub-buffer (compact records): the chains its records
	 * are told from, as after the last record decoded
	 */
	bool compact;
	bool fast_compact;		/* dti_peek_compact() may take its records */
	uint64_t c_ts, c_seq, c_caller;

	bool any;			/* DTI data seen */
	unsigned long damaged;		/* damage notices about it */
	unsigned int cpu;		/* from records or the file name */
	unsigned int owned;		/* last CPU it was found to own */
};

/* A notice found when a reader was opened, kept for its first dti_next(). */
struct dti_note {
	enum dti_notice_type type;
	unsigned int cpu;
	uint64_t offset, count;
	char *source, *message;
};

/* What the reader knows of each CPU (by the buffer that holds its records). */
struct dti_cpu {
	int owner;			/* stream whose records are merged, or -1 */
	bool seen, warned;
	uint64_t seq;			/* last sequence number */
	uint64_t next_seq;		/* from a snapshot's stats, or UINT64_MAX */
};

/*
 * dti_print() output collected for one FILE: @len bytes at @p, then a
 * run of @run_len raw record bytes still in @run_src's window (format.c)
 */
struct dti_obuf {
	char *p;
	size_t len, cap;
	FILE *out;
	int err;			/* errno of the first failed write */
	const unsigned char *run;
	size_t run_len;
	struct dti_stream *run_src;
};

/*
 * A caller as dti_print() shows it: "func+0x1c/0x80 [mod]" or an address
 * in @text, at most DTI_CALLER_TEXT long; or, resolved to source lines
 * (dti_set_lines()), a struct dti_lcaller's text, at most DTI_CALLER_MAX
 * long, and its JSON fields.  @p is the text either way.
 */
#define DTI_CALLER_TEXT	600
#define DTI_CALLER_MAX	2048
struct dti_caller {
	uint64_t addr;
	uint64_t lo, hi;		/* the times it holds for (inclusive) */
	unsigned int len;		/* 0: empty */
	bool plain;			/* JSON takes it as it is */
	const char *p;			/* @text, or a struct dti_lcaller's */
	const char *json;		/* NULL, or "caller" and the line's fields */
	unsigned int json_len;
	const char *exp;		/* NULL, or the line's export fields */
	unsigned int exp_len;
	char text[DTI_CALLER_TEXT];
};
#define DTI_CALLERS	8	/* 1 << 3: dti_put_caller() hashes to 3 bits */

/*
 * lines.c: the cache of resolved addresses, one for a dti_lines' answers
 * and for a reader's callers made from them (struct dti_lcaller): a
 * trace has few callers and many records.  An open-addressing hash table
 * of entries of type->size bytes, each a struct dti_ckey first: the
 * address, a tag its user tells answers apart by (0 if none), and the
 * times the answer holds for (0..UINT64_MAX if time plays no part).
 */
struct dti_ckey {
	uint64_t addr;
	uint64_t lo, hi;		/* the times it holds for (inclusive) */
	unsigned int tag;
	bool used;
};

struct dti_cache_type {
	size_t size;			/* of an entry */
	size_t init;			/* slots a table starts with (a power of 2) */
	void (*drop)(void *e);		/* frees what entry @e holds */
};

struct dti_cache {
	const struct dti_cache_type *type;	/* set by the cache's owner */
	void *tab;
	size_t cap, used;
};

/* The entry of (@addr, @tag) that holds at @ts, or NULL */
void *dti_cache_find(const struct dti_cache *c, uint64_t addr, unsigned int tag,
		     uint64_t ts);
/* Room for one more entry.  0, or -1 (ENOMEM). */
int dti_cache_grow(struct dti_cache *c);
/*
 * The free slot a new entry of (@addr, @tag) at @ts takes, once
 * dti_cache_grow() made room: filled, it is added by dti_cache_add()
 */
void *dti_cache_slot(const struct dti_cache *c, uint64_t addr, unsigned int tag,
		     uint64_t ts);
/* Entry @e, filled, as that of (@addr, @tag) for the times @lo..@hi */
void dti_cache_add(struct dti_cache *c, void *e, uint64_t addr, unsigned int tag,
		   uint64_t lo, uint64_t hi);
/* Every entry dropped (type->drop) and the table freed: empty */
void dti_cache_free(struct dti_cache *c);

/*
 * A caller resolved to its source line (or not: then as it prints
 * without), kept by address and time for the reader's life: a trace has
 * few callers, and an address is another module's only where modules
 * were unloaded and others loaded there (dti_lines_resolve_when()).
 * @text has room for 32 bytes at least (dti_put_caller()).
 */
struct dti_lcaller {
	struct dti_ckey key;		/* first: the cache's (r->lcache) */
	bool plain;
	unsigned int len, json_len, exp_len;
	char *text, *json, *exp;
};

/*
 * Records of the stream last returned that dti_next() takes one after
 * another, plain, in sequence and before every other stream's head: it
 * keeps only this and brings the stream's own state (window start, count
 * left, its CPU's last seq) up to date when the run ends.
 */
struct dti_fast {
	bool on;
	const unsigned char *next;	/* after the record returned last */
	const unsigned char *lim;	/* the window's or sub-buffer's end */
	uint64_t ts_max;		/* last time before the other streams' heads */
	uint64_t seq_next, seq_end;	/* the seq that follows; its CPU's next_seq */
	uint64_t mask, want;		/* the stream's fast_mask, fast_want */
	uint32_t left;			/* the stream's left, UINT32_MAX if not counted */
	unsigned int cpu;
	uint64_t off_adj;		/* + a record's address: its offset */
	const char *name;
	/* apart from next: a store of both at once would delay its next load */
	const unsigned char *p;		/* the record returned last */
	/* a version-2 sub-buffer's run: the chains at the record returned last */
	bool compact;
	uint32_t hlen;			/* its header's bytes */
	uint64_t ts, caller, caller_base;
};

/*
 * A conversion of a template, as dti.ko parses it (dti_event.c): parsed
 * once, when its format is learnt, not again for every event.
 */
struct dti_conv {
	char arg;		/* DTI_ARG_*, 0 for %% */
	char conv;		/* d i u x X s p h(ex) */
	char hexsep;		/* %*ph: ' ', ':', '-' or 0 */
	bool left, plus, space, special, zero;
	int width, prec;	/* -1 if not given */
	size_t len;		/* bytes of the specification */
	/* of its value, set when learnt: dti_event_arg_size(), signed or not */
	uint8_t size;
	bool is_signed;
	/* a number with no width, precision, '+' or ' ': its digits (after 0x) */
	bool bare;
};

/* Bytes of an event's JSON before its fields: ,"event":"<name>","id":<id>,"fields":{ */
#define DTI_EVENT_HEAD_MAX	128
/* Bytes of a field's JSON key: ,"<name>": */
#define DTI_EVENT_KEY_MAX	40

/**
 * struct dti_evfmt - an event type's format, as found in the data
 * @id:		the type's id
 * @nargs:	values of an event
 * @swapped:	found in the other byte order
 * @long_size:	bytes of the writing kernel's long (for %ld)
 * @name:	the type's name
 * @layout:	DTI_ARG_* per value
 * @fields:	the values' names
 * @fmt:	the template, @fmt_len bytes (not NUL-terminated)
 *
 * What printing an event needs, made when the format is learnt:
 * @conv:	value i's conversion
 * @lit:	the template's text around its conversions, %% as %
 * @lit_len:	bytes of @lit before conversion i; [@nargs]: after the last
 * @plain:	prints as text that JSON takes as it is (no %s, nothing to escape)
 * @head:	its JSON before the fields, @head_len bytes
 * @key:	field i's JSON key (after a comma from the second on), @key_len bytes
 */
struct dti_evfmt {
	uint16_t id;
	unsigned int nargs;
	bool swapped;
	unsigned int long_size;
	char name[DTI_NAME_MAX + 1];
	char layout[DTI_EVENT_ARGS_MAX];
	char fields[DTI_EVENT_ARGS_MAX][32];
	char fmt[DTI_EVENT_FMT_MAX + 1];
	size_t fmt_len;
	struct dti_conv conv[DTI_EVENT_ARGS_MAX];
	char lit[DTI_EVENT_FMT_MAX];
	uint16_t lit_len[DTI_EVENT_ARGS_MAX + 1];
	bool plain;
	char head[DTI_EVENT_HEAD_MAX];
	size_t head_len;
	char key[DTI_EVENT_ARGS_MAX][DTI_EVENT_KEY_MAX];
	uint8_t key_len[DTI_EVENT_ARGS_MAX];
};

/*
 * The values of an event, checked against its format's layout: each
 * value's bytes, and the length of a string or byte array
 */
struct dti_values {
	const unsigned char *p[DTI_EVENT_ARGS_MAX];
	uint16_t n[DTI_EVENT_ARGS_MAX];
	bool swapped;
};

/* The formats a reader has learnt: the first of each id */
struct dti_events {
	struct dti_evfmt *f;
	unsigned int n, cap;
};

/* Most bytes an event prints as, as text and as JSON fields (event.c proves it) */
#define DTI_EVENT_TEXT_MAX	8192
#define DTI_EVENT_JSON_MAX	32768

/* Learn a DTI_REC_FORMAT payload: 0, 1 if it does not hold together, -1 (ENOMEM). */
int dti_events_learn(struct dti_events *ev, const void *payload, size_t len,
		     bool swapped);
void dti_events_free(struct dti_events *ev);
/* The format of event @rec, or NULL */
const struct dti_evfmt *dti_events_find(const struct dti_events *ev,
					const struct dti_rec *rec);
/*
 * Value @i (< @f->nargs) of values @v of format @f: its bytes at *@data
 * (*@len of them for a string or byte array) and, for a number, its value
 * in *@num (sign-extended if signed, in host order)
 */
void dti_event_value(const struct dti_evfmt *f, const struct dti_values *v,
		     unsigned int i, const unsigned char **data, size_t *len,
		     uint64_t *num);
/*
 * The values of @rec (format @f) into @v, once for all of a record's
 * printing: 0, or -1 if they do not fill the layout.
 */
int dti_event_values(const struct dti_evfmt *f, const struct dti_rec *rec,
		     struct dti_values *v);
/*
 * Values @v through @f's template into @buf, which has room for
 * DTI_EVENT_TEXT_MAX bytes (no event prints more): bytes written
 */
size_t dti_event_print(const struct dti_evfmt *f, const struct dti_values *v, char *buf);
/*
 * ,"event":...,"id":...,"fields":{...} of values @v into @buf, which has
 * room for DTI_EVENT_JSON_MAX bytes (no event's JSON is longer), and if
 * @text (@f->plain: its text needs no escape) ,"text":"..." after it, in
 * DTI_EVENT_TEXT_MAX + 10 bytes more, its numbers copied from the fields:
 * bytes written
 */
size_t dti_event_json(const struct dti_evfmt *f, const struct dti_values *v, char *buf,
		      bool text);
/*
 * DTI_EVENT=, DTI_EVENT_ID= and a DTI_FIELD_<NAME>= per value of @v, as
 * fields of the Journal Export Format, into @buf, which has room for
 * DTI_EVENT_JSON_MAX bytes (no event's fields are longer): bytes written
 */
size_t dti_event_export(const struct dti_evfmt *f, const struct dti_values *v, char *buf);

/* Bytes of a boot ID (/proc/sys/kernel/random/boot_id, journald's _BOOT_ID) */
#define DTI_BOOT_ID_BYTES	16

struct dti_reader {
	struct dti_stream *s;
	unsigned int n;
	unsigned int flags;
	struct dti_stream *last;	/* whose head dti_next() returned, or NULL */
	bool started;
	/*
	 * Set by dti_first(): the other streams' heads are all there (or
	 * their streams ended), the first of them at (bound_ts, bound_cpu).
	 * A next head of the last stream that comes before it is the next
	 * record (dti_next_std(), struct dti_fast).
	 */
	bool run;
	uint64_t bound_ts;
	unsigned int bound_cpu;
	struct dti_fast fast;
	dti_notice_fn notice;
	void *notice_arg;
	dti_formatter_fn fmt;
	void *fmt_arg;
	struct dti_ksyms *ksyms;
	dti_symbol_fn symbolizer;	/* dti_set_symbolizer() */
	void *symbolizer_arg;
	struct dti_lines *lines;	/* dti_set_lines(), and its callers */
	struct dti_cache lcache;	/* of struct dti_lcaller */
	unsigned long lines_gen;	/* dti_lines_gen() they were made at */
	unsigned long n_damage, n_warning;

	struct dti_cpu *cpus;
	unsigned int n_cpus;
	unsigned int ncpu;		/* CPUs of the machine if known, else DTI_CPU_LIMIT */
	char *info, *stats;		/* a snapshot's: checked at the first dti_next() */
	struct dti_note *notes;		/* found when opening, told at the first dti_next() */
	unsigned int n_notes;
	struct dti_ident ident;		/* the channel the streams should be of */
	struct dti_obuf *ob;		/* &own_ob, or for a merge's child the merge's */
	struct dti_obuf own_ob;		/* dti_print() output not written yet */
	struct dti_caller callers[DTI_CALLERS];
	struct dti_events events;	/* formats of event types, as read */
	bool warned_format;		/* of a format that does not hold together */
	/* dti_set_filter(): the filter, and its times for this reader's input */
	const struct dti_filter *filter;
	bool first_seen;		/* the first record was seen (DTI_TIME_FIRST) */
	uint64_t since_ns, until_ns;	/* resolved: 0, UINT64_MAX if not set */
	char *match_buf;		/* a record's message, for --grep */
	char *chan_name;		/* dti_set_channel_name(), or NULL */
	uint64_t first_ts;		/* the first record the filter saw (first_seen) */
	/* a merge (dti_merge_new()): its children, n_kids of them (merge.c) */
	bool merge;
	struct dti_kid *kids;
	unsigned int n_kids;
	int kid_last;			/* whose record dti_next() returned last, or -1 */
	unsigned int name_w;		/* the widest child's name: the channel column */
	uint64_t m_since, m_until;	/* the filter's times, for the merged records */
	bool m_first;			/* the times from the first record are known */
	bool in_merge;			/* a merge's child: the merge applies the times */
	/* the boot that wrote the records, for DTI_FMT_EXPORT, when known */
	bool boot_known;
	int64_t boot_realtime_ns;	/* CLOCK_REALTIME at CLOCK_MONOTONIC 0 */
	char boot_id[2 * DTI_BOOT_ID_BYTES + 1];	/* its boot ID in hex, or "" */
};

/* merge.c: a merge's child */
struct dti_kid {
	struct dti_reader *r;
	char *name;			/* its channel's name */
	struct dti_rec head;		/* its next record, if have */
	bool have, ended;
};
int dti_merge_next(struct dti_reader *m, struct dti_rec *rec);
int dti_merge_print(struct dti_reader *m, FILE *out, const struct dti_rec *rec,
		    enum dti_format format);
int dti_merge_print_records(struct dti_reader *m, FILE *out, enum dti_format format,
			    unsigned long max);
/* The child whose record dti_next() on merge @m returned last, or NULL (ENOENT) */
struct dti_reader *dti_merge_from(struct dti_reader *m);
void dti_merge_close(struct dti_reader *m);

/* filter.c */
bool dti_filter_match(struct dti_reader *r, const struct dti_rec *rec);
/*
 * dti_set_filter() of a reader (no merge); a merge's child takes the
 * times of @f from the merge (!@times).  0, or -1.
 */
int dti_filter_attach(struct dti_reader *r, const struct dti_filter *f, bool times);
/* Whether the merged record of time @ts is within the times of merge @m's filter */
bool dti_merge_times(struct dti_reader *m, uint64_t ts);
/*
 * The end of reading @r (@ret: 0 there, else what to return): fail with
 * EINVAL if its filter's expression names a field that neither every
 * record nor any event type read has.  Not for a merge's child (the
 * merge checks), nor with DTI_OPEN_FOLLOW (more types may come).  @ret,
 * or -1.
 */
int dti_filter_end(struct dti_reader *r, int ret);
bool dti_filter_simple(const struct dti_filter *f);
bool dti_filter_cpu(const struct dti_filter *f, unsigned int cpu);
void dti_filter_level_range(const struct dti_filter *f, int *min, int *max);
uint64_t dti_time_add(uint64_t ts, int64_t ns);

/* reader.c */
/* End of dti_next(): what dti_print() collected goes out; @ret, or -1 (EIO) */
int dti_next_end(struct dti_reader *r, int ret);
/* dti_next() with the format records, and no filter */
int dti_next_any(struct dti_reader *r, struct dti_rec *rec);
/* Whether @r reads a live channel (relay files) */
bool dti_reader_live(const struct dti_reader *r);
/*
 * A second reader of the same input from its start, with the same flags
 * but DTI_OPEN_FOLLOW and no notice handler: NULL (ESPIPE for an input
 * that cannot be read twice, a pipe; ENOMEM; the errors of open()).
 */
struct dti_reader *dti_reader_twin(const struct dti_reader *r);

int dti_stream_init_fd(struct dti_stream *s, const char *name, int fd, bool live,
		       const struct dti_ident *hint);
int dti_stream_init_mem(struct dti_stream *s, const char *name,
			const void *mem, size_t len);
int dti_stream_twin(struct dti_stream *s, const struct dti_stream *o,
		    const struct dti_ident *hint);
int dti_stream_init_ring(struct dti_stream *s, const char *name, void *mem,
			 size_t len, uint32_t subbuf_size);
int dti_stream_init_pending(struct dti_stream *s, const char *name, void *mem,
			    size_t len);
void dti_stream_free(struct dti_stream *s);
/* 1: head valid, 0: no record (end or nothing yet), -1: error */
int dti_stream_peek(struct dti_reader *r, struct dti_stream *s);

/* Step past the head. */
static inline void dti_stream_consume(struct dti_stream *s)
{
	if (!s->have_head)
		return;
	s->start = s->head_pos + s->head_size;
	s->have_head = false;
	if (s->in_sub && s->counted)
		s->left--;
}

/*
 * Take the record at the window's start as the head if it is plain: in
 * the host's byte order, whole in the window, inside the sub-buffer being
 * read and before the end of its count, logged by the CPU of that
 * sub-buffer, which the machine has, with no flags but DTI_REC_PLAIN's
 * (an event as dti_rec_invalid() has it) and a level of 0..7.  These are
 * the checks of dti_decode_hdr() and dti_rec_plain(), the first eight
 * bytes (magic, version, flags, level, hdr_len, cpu) compared at once
 * (fast_mask, set up by dti_sub_start()).  Anything else is left to
 * dti_stream_peek().
 */
/*
 * The fields of the head that a compact record (*@c, @hlen header bytes,
 * @len payload bytes) of @s's sub-buffer gives as they are: all but its
 * time, number and caller.  The CPU that logged it is the sub-buffer's.
 */
static inline void dti_crec_head(struct dti_stream *s, const struct dti_crec *c,
				 uint32_t hlen, uint32_t len)
{
	struct dti_hdr *h = &s->head;

	h->magic = DTI_RECORD_MAGIC;
	h->version = DTI_RECORD_VERSION;
	h->flags = c->flags;
	h->level = c->info & DTI_CREC_LEVEL;
	h->hdr_len = hlen;
	h->cpu = s->sub_hdr.cpu;
	h->len = len;
	h->log_cpu = h->cpu;
	h->swapped = s->sub_hdr.swapped;
}

/*
 * dti_peek_fast() in a version-2 sub-buffer whose records were checked
 * whole (counted: dti_compact_check()), of the host's byte order and a
 * CPU the machine has (fast_compact, set up by dti_sub_start()): the
 * next compact record if it is plain, with no extension but a 32-bit
 * caller, its fields told from the chains, which move on to it.
 */
static inline bool dti_peek_compact(struct dti_stream *s)
{
	const unsigned char *p = s->data + s->start;
	uint64_t off = s->base + s->start, size;
	size_t have = s->end - s->start;
	struct dti_hdr *h = &s->head;
	struct dti_crec c;
	uint32_t hlen = sizeof(c);
	int32_t c32;

	if (!s->fast_compact || !s->in_sub || !s->left || have < sizeof(c) ||
	    off + sizeof(c) > s->sub_end)
		return false;
	memcpy(&c, p, sizeof(c));
	if ((c.info & (DTI_CREC_LEN32 | DTI_CREC_TS64 | DTI_CREC_SKIP)) ||
	    !(c.info & DTI_CREC_CALLER) || (c.flags & ~DTI_REC_PLAIN) ||
	    dti_typed_odd(c.flags, c.len))
		return false;
	switch (c.info & DTI_CREC_CALLER) {
	case DTI_CREC_CALLER_SAME:
		h->caller = s->c_caller;
		break;
	case DTI_CREC_CALLER32:
		memcpy(&c32, p + sizeof(c), sizeof(c32));
		h->caller = s->sub_hdr.caller + (int64_t)c32;
		hlen += sizeof(c32);
		break;
	default:
		return false;
	}
	size = DTI_CREC_SIZE(hlen, c.len);
	if (size > have || size > s->sub_end - off)
		return false;
	dti_crec_head(s, &c, hlen, c.len);
	h->seq = s->c_seq++;
	h->ts_ns = s->c_ts += (int64_t)c.ts_delta;
	s->c_caller = h->caller;
	s->head_pos = s->start;
	s->head_off = off;
	s->head_hlen = hlen;
	s->head_size = size;
	s->have_head = true;
	return true;
}

static inline bool dti_peek_fast(struct dti_stream *s)
{
	const unsigned char *p = s->data + s->start;
	uint64_t off = s->base + s->start, size, w;
	size_t have = s->end - s->start;
	struct dti_hdr *h = &s->head;
	uint32_t len, log_cpu;

	if (s->compact)
		return dti_peek_compact(s);
	if (!s->in_sub || (s->counted && !s->left) || have < DTI_HDR_SIZE ||
	    off + DTI_HDR_SIZE > s->sub_end)
		return false;
	memcpy(&w, p, sizeof(w));
	if ((w & s->fast_mask) != s->fast_want)
		return false;
	/*
	 * Field by field, not one copy: the caller reads them back at once,
	 * and a load of part of a wider store waits for it to complete.
	 */
	memcpy(&len, p + offsetof(struct dti_record, len), sizeof(len));
	memcpy(&log_cpu, p + offsetof(struct dti_record, log_cpu), sizeof(log_cpu));
	size = dti_rec_size(len);
	if (log_cpu != s->sub_hdr.cpu || len > DTI_MAX_PAYLOAD || size > have ||
	    size > s->sub_end - off ||
	    dti_typed_odd(p[offsetof(struct dti_record, flags)], len))
		return false;
	memcpy(h, &w, sizeof(w));
	h->len = len;
	h->log_cpu = log_cpu;
	memcpy(&h->seq, p + offsetof(struct dti_record, seq), sizeof(h->seq));
	memcpy(&h->ts_ns, p + offsetof(struct dti_record, ts_ns), sizeof(h->ts_ns));
	memcpy(&h->caller, p + offsetof(struct dti_record, caller), sizeof(h->caller));
	h->swapped = false;
	s->head_pos = s->start;
	s->head_off = off;
	s->head_hlen = DTI_HDR_SIZE;
	s->head_size = size;
	s->have_head = true;
	return true;
}

/* reader.c */
struct dti_reader *dti_reader_alloc(unsigned int n, unsigned int flags);
int dti_note_add(struct dti_reader *r, enum dti_notice_type type,
		 unsigned int cpu, const char *source, uint64_t offset,
		 uint64_t count, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* The record dti_next() returned last (r->last is its stream). */
static inline const unsigned char *dti_last_raw(const struct dti_reader *r)
{
	return r->fast.on ? r->fast.p : r->last->data + r->last->head_pos;
}

/* dti_fast_step() in a version-2 sub-buffer: the chains move on in @f */
static inline __attribute__((always_inline)) const unsigned char *
dti_fast_step_compact(struct dti_fast *f)
{
	const unsigned char *p = f->next;
	uint64_t ts, caller, size;
	uint32_t hlen = sizeof(struct dti_crec);
	struct dti_crec c;
	int32_t c32;

	if ((size_t)(f->lim - p) < sizeof(c))
		return NULL;
	__builtin_prefetch((const void *)((uintptr_t)p + 1024));
	memcpy(&c, p, sizeof(c));
	ts = f->ts + (int64_t)c.ts_delta;
	if (ts > f->ts_max ||
	    (c.info & (DTI_CREC_LEN32 | DTI_CREC_TS64 | DTI_CREC_SKIP)) ||
	    (c.flags & ~DTI_REC_PLAIN) || dti_typed_odd(c.flags, c.len))
		return NULL;
	switch (c.info & DTI_CREC_CALLER) {
	case DTI_CREC_CALLER_SAME:
		caller = f->caller;
		break;
	case DTI_CREC_CALLER32:
		memcpy(&c32, p + sizeof(c), sizeof(c32));
		caller = f->caller_base + (int64_t)c32;
		hlen += sizeof(c32);
		break;
	default:
		return NULL;
	}
	size = DTI_CREC_SIZE(hlen, c.len);
	if (size > (size_t)(f->lim - p) || f->seq_next >= f->seq_end || f->left <= 1)
		return NULL;
	f->p = p;
	f->next = p + size;
	f->seq_next++;
	f->left--;
	f->ts = ts;
	f->caller = caller;
	f->hlen = hlen;
	return p;
}

/*
 * The next record of a run (struct dti_fast), taken with the checks of
 * dti_next_std() made on its bytes, the time first (where CPUs take turns,
 * that is what ends a run): returns it and steps past it, or NULL with
 * nothing changed.  Inline, so that dti_print_records() keeps @f in
 * registers.
 */
static inline __attribute__((always_inline)) const unsigned char *
dti_fast_step(struct dti_fast *f)
{
	const unsigned char *p = f->next;
	uint64_t w, seq, ts, size;
	uint32_t len, log_cpu;

	if (f->compact)
		return dti_fast_step_compact(f);
	if ((size_t)(f->lim - p) < DTI_HDR_SIZE)
		return NULL;
	/* the kernel's copy into the window may have left it in L3 */
	__builtin_prefetch((const void *)((uintptr_t)p + 1024));
	__builtin_prefetch((const void *)((uintptr_t)p + 1024 + 64));
	memcpy(&ts, p + offsetof(struct dti_record, ts_ns), sizeof(ts));
	if (ts > f->ts_max)
		return NULL;
	memcpy(&w, p, sizeof(w));
	memcpy(&len, p + offsetof(struct dti_record, len), sizeof(len));
	memcpy(&log_cpu, p + offsetof(struct dti_record, log_cpu), sizeof(log_cpu));
	memcpy(&seq, p + offsetof(struct dti_record, seq), sizeof(seq));
	size = dti_rec_size(len);
	if ((w & f->mask) != f->want || log_cpu != f->cpu || len > DTI_MAX_PAYLOAD ||
	    size > (size_t)(f->lim - p) || seq != f->seq_next ||
	    seq >= f->seq_end || f->left <= 1 ||
	    dti_typed_odd(p[offsetof(struct dti_record, flags)], len))
		return NULL;
	f->p = p;
	f->next = p + size;
	f->seq_next = seq + 1;
	f->left--;
	return p;
}

/* The level of @p, a record dti_fast_step() took from the run @f */
static inline __attribute__((always_inline)) int
dti_fast_level(const struct dti_fast *f, const unsigned char *p)
{
	if (f->compact)
		return p[offsetof(struct dti_crec, info)] & DTI_CREC_LEVEL;
	return (int8_t)p[offsetof(struct dti_record, level)];
}

/* @rec from @p, a record dti_fast_step() took from the run @f */
static inline __attribute__((always_inline)) void
dti_fast_rec(const struct dti_fast *f, const unsigned char *p, struct dti_rec *rec)
{
	uint32_t len;

	if (f->compact) {
		uint16_t len16;

		memcpy(&len16, p + offsetof(struct dti_crec, len), sizeof(len16));
		rec->cpu = f->cpu;
		rec->buf_cpu = f->cpu;
		rec->raw_version = DTI_RECORD_VERSION;
		rec->level = p[offsetof(struct dti_crec, info)] & DTI_CREC_LEVEL;
		rec->flags = p[offsetof(struct dti_crec, flags)];
		rec->seq = f->seq_next - 1;
		rec->ts_ns = f->ts;
		rec->caller = f->caller;
		rec->raw = p;
		rec->raw_len = f->next - p;
		rec->payload = p + f->hlen;
		rec->len = len16;
		rec->source = f->name;
		rec->offset = f->off_adj + (uintptr_t)p;
		rec->swapped = 0;
		return;
	}
	memcpy(&len, p + offsetof(struct dti_record, len), sizeof(len));
	rec->cpu = f->cpu;
	rec->buf_cpu = f->cpu;
	rec->raw_version = DTI_RECORD_VERSION_1;
	rec->level = (int8_t)p[offsetof(struct dti_record, level)];
	rec->flags = p[offsetof(struct dti_record, flags)];
	rec->seq = f->seq_next - 1;
	memcpy(&rec->ts_ns, p + offsetof(struct dti_record, ts_ns), sizeof(rec->ts_ns));
	memcpy(&rec->caller, p + offsetof(struct dti_record, caller), sizeof(rec->caller));
	rec->raw = p;
	rec->raw_len = f->next - p;
	rec->payload = p + DTI_HDR_SIZE;
	rec->len = len;
	rec->source = f->name;
	rec->offset = f->off_adj + (uintptr_t)p;
	rec->swapped = 0;
}

void dti_notify(struct dti_reader *r, struct dti_notice *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void dti_check_ident(struct dti_reader *r, struct dti_stream *s,
		     const struct dti_ident *id);

/*
 * lines.c: dti_lines_resolve_at() of a record's caller, and the times
 * *@lo..*@hi (inclusive) through which the answer holds at @addr
 */
int dti_lines_resolve_when(struct dti_lines *l, uint64_t addr, uint64_t ts_ns,
			   struct dti_line *out, uint64_t *lo, uint64_t *hi);
/* Counts the changes of @l's modules: what was resolved before may be wrong */
unsigned long dti_lines_gen(const struct dti_lines *l);

/* format.c */
int dti_ob_flush(struct dti_obuf *ob);
/* The channel of the record @r returned last, as JSON names it; or NULL */
const char *dti_rec_channel(const struct dti_reader *r);
int dti_ob_settle(struct dti_obuf *ob);
/* struct dti_lcaller: what r->lcache holds */
extern const struct dti_cache_type dti_lcaller_cache;
/*
 * The one JSON string escaper (payloads, callers, events' names and
 * strings): @len bytes at @s as a JSON string's characters into @p, up
 * to @lim, while DTI_JSON_STEP bytes of room are left (8 plain bytes go
 * at once; an escape takes 6, a UTF-8 character 4 at most).  *@done:
 * bytes of @s taken.  Returns the end of what it wrote.
 */
#define DTI_JSON_STEP	8
char *dti_json_chars(char *p, const char *lim, const unsigned char *s, size_t len,
		     size_t *done);

/* channel.c */
char *dti_read_file(const char *path);
int dti_check_channel(const char *name, char *dir, size_t size);
/* The previous boot's records of persistent channels: <debugfs>/dti/.previous/ */
#define DTI_PREVIOUS_DIR	".previous"
int dti_check_previous(const char *name, char *dir, size_t size);

#endif /* _DTI_LIBDTI_LOCAL_H */
