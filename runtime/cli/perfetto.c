// SPDX-License-Identifier: GPL-2.0
/*
 * A Perfetto trace writer for dti export: records as TrackEvents of
 * Perfetto's protobuf trace format (the subset it writes is
 * runtime/perfetto/dti_perfetto.proto), encoded here by hand: a trace
 * is a sequence of length-delimited TracePackets, each built whole in a
 * buffer and then written.
 *
 * Tracks: one per channel (of every reader whose records it is given:
 * the channels of a dump are one trace), with a child per CPU, the CPU whose buffer
 * holds the record (by which its sequence number counts).  A record is
 * an instant event on its CPU's track, named by its message (a text
 * record), its event type (a typed event) or "binary"; its level, seq,
 * caller (and symbol or source line where resolved), flags and typed
 * fields are its debug annotations.  Records lost (a sequence gap) are a
 * slice "lost N records" on the CPU's track from its record before the
 * gap to its record after it, or an instant at the one of the two there
 * is.
 *
 * Timestamps: the records' CLOCK_MONOTONIC nanoseconds, as Perfetto's
 * builtin clock MONOTONIC; a ClockSnapshot names it the trace's clock,
 * so that Perfetto shows the records' own times (its default is
 * BOOTTIME, which it could not convert to without a second clock).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dti-cli.h"

/* Field numbers of Perfetto's protos (perfetto/protos/perfetto/trace/...) */
enum {
	PF_TRACE_PACKET = 1,			/* Trace */
	PF_PACKET_CLOCK_SNAPSHOT = 6,		/* TracePacket */
	PF_PACKET_TIMESTAMP = 8,
	PF_PACKET_SEQUENCE_ID = 10,
	PF_PACKET_TRACK_EVENT = 11,
	PF_PACKET_SEQUENCE_FLAGS = 13,
	PF_PACKET_CLOCK_ID = 58,
	PF_PACKET_TRACK_DESCRIPTOR = 60,
	PF_CLOCKS = 1,				/* ClockSnapshot */
	PF_PRIMARY_CLOCK = 2,
	PF_CLOCK_ID = 1,			/* ClockSnapshot.Clock */
	PF_CLOCK_TIMESTAMP = 2,
	PF_TRACK_UUID = 1,			/* TrackDescriptor */
	PF_TRACK_NAME = 2,
	PF_TRACK_PARENT = 5,
	PF_TRACK_CHILD_ORDERING = 11,
	PF_TRACK_RANK = 12,
	PF_EVENT_ANNOTATIONS = 4,		/* TrackEvent */
	PF_EVENT_TYPE = 9,
	PF_EVENT_TRACK = 11,
	PF_EVENT_CATEGORIES = 22,
	PF_EVENT_NAME = 23,
	PF_ANN_BOOL = 2,			/* DebugAnnotation */
	PF_ANN_UINT = 3,
	PF_ANN_INT = 4,
	PF_ANN_STRING = 6,
	PF_ANN_POINTER = 7,
	PF_ANN_NAME = 10,
	PF_ANN_DICT = 11,
};

#define PF_CLOCK_MONOTONIC	3	/* BuiltinClock */
#define PF_INCREMENTAL_CLEARED	1	/* TracePacket.SequenceFlags */
#define PF_ORDER_EXPLICIT	3	/* TrackDescriptor.ChildTracksOrdering */
#define PF_SLICE_BEGIN		1	/* TrackEvent.Type */
#define PF_SLICE_END		2
#define PF_INSTANT		3
#define PF_SEQUENCE		1	/* the one packet sequence written */

/* Bytes of packets written at once (the output is not buffered) */
#define PF_WRITE_AT		(64 * 1024)

/* Protobuf's wire types */
#define PB_VARINT	0
#define PB_LEN		2

/* The packet being built */
struct pf_buf {
	unsigned char *p;
	size_t len, cap;
	bool nomem;
};

/* A channel's track and its CPUs' */
struct pf_chan {
	char *name;
	uint64_t uuid;
	unsigned int n_cpus;
	struct pf_cpu {
		bool described;		/* its TrackDescriptor written */
		bool has_ts;		/* a record of it written: @last_ts */
		uint64_t last_ts;
	} *cpus;
};

/* Records lost, waiting for their CPU's next record */
struct pf_gap {
	unsigned int chan, cpu;
	uint64_t from_seq, to_seq, count;
	bool has_before;
	uint64_t ts_before;
};

struct dti_perfetto {
	FILE *out;
	struct dti_ksyms *syms;
	struct dti_lines *lines;
	struct pf_buf b;		/* packets not written yet */
	size_t packet;			/* where in @b the one being built starts */
	struct pf_chan *chans;
	unsigned int n_chans;
	struct pf_gap *gaps;
	size_t n_gaps;
	bool started;			/* a packet written */
	bool failed;			/* a write or an allocation failed */
	bool clock_written;
	uint64_t last_ts;		/* of the records written */
};

/* The buffer grown to hold @n more bytes; false if out of memory */
static bool pf_grow(struct pf_buf *b, size_t n)
{
	unsigned char *p;
	size_t cap;

	if (b->nomem)
		return false;
	cap = b->cap ? b->cap : 512;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->nomem = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

/* Room for @n more bytes: false if it cannot be had (out of memory) */
static inline bool pf_room(struct pf_buf *b, size_t n)
{
	return b->len + n <= b->cap ? true : pf_grow(b, n);
}

/* Bytes of @v as a varint */
static unsigned int pf_varint_len(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void pf_varint_at(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p = (unsigned char)v;
}

static inline void pf_varint(struct pf_buf *b, uint64_t v)
{
	if (!pf_room(b, 10))
		return;
	if (v < 0x80) {
		b->p[b->len++] = (unsigned char)v;
		return;
	}
	pf_varint_at(b->p + b->len, v);
	b->len += pf_varint_len(v);
}

static void pf_uint(struct pf_buf *b, unsigned int field, uint64_t v)
{
	pf_varint(b, (uint64_t)field << 3 | PB_VARINT);
	pf_varint(b, v);
}

static void pf_bytes(struct pf_buf *b, unsigned int field, const void *p, size_t n)
{
	pf_varint(b, (uint64_t)field << 3 | PB_LEN);
	pf_varint(b, n);
	if (pf_room(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

static void pf_str(struct pf_buf *b, unsigned int field, const char *s)
{
	pf_bytes(b, field, s, strlen(s));
}

/*
 * Begin submessage @field: its length, one byte for now, is after its
 * key.  Returns where its content starts, for pf_end().
 */
static size_t pf_begin(struct pf_buf *b, unsigned int field)
{
	pf_varint(b, (uint64_t)field << 3 | PB_LEN);
	if (pf_room(b, 1))
		b->len++;
	return b->len;
}

/* End the submessage whose content starts at @start: its length set */
static void pf_end(struct pf_buf *b, size_t start)
{
	size_t n = b->len - start;
	unsigned int k = pf_varint_len(n);

	if (b->nomem || !pf_room(b, k - 1))
		return;
	memmove(b->p + start + k - 1, b->p + start, n);
	pf_varint_at(b->p + start - 1, n);
	b->len += k - 1;
}

/*
 * The @n bytes at @s as a string field: valid UTF-8 as it is, a byte
 * that is none as the character of its value (U+0080..U+00FF), as
 * DTI_FMT_JSON has it (\u00XX); protobuf's strings are UTF-8.
 */
static void pf_text(struct pf_buf *b, unsigned int field, const unsigned char *s, size_t n)
{
	size_t i = 0, k, start;
	unsigned int need;
	unsigned char c, *p;

	start = pf_begin(b, field);
	/* at most two bytes for every byte */
	if (!pf_room(b, 2 * n))
		return;
	p = b->p + b->len;
	while (i < n) {
		c = s[i];
		if (c < 0x80) {
			*p++ = c;
			i++;
			continue;
		}
		need = (c & 0xe0) == 0xc0 && c >= 0xc2 ? 1 : (c & 0xf0) == 0xe0 ? 2 :
		       (c & 0xf8) == 0xf0 && c <= 0xf4 ? 3 : 4;
		for (k = 1; need <= 3 && k <= need; k++)
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80)
				need = 4;
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((need == 2 && ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0))) ||
		    (need == 3 && ((c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90))))
			need = 4;
		if (need == 4) {
			*p++ = 0xc0 | c >> 6;
			*p++ = 0x80 | (c & 0x3f);
			i++;
			continue;
		}
		memcpy(p, s + i, need + 1);
		p += need + 1;
		i += need + 1;
	}
	b->len = p - b->p;
	pf_end(b, start);
}

/* Write the packets built.  0, or -1 (ENOMEM, EIO). */
static int pf_write(struct dti_perfetto *pf)
{
	struct pf_buf *b = &pf->b;

	if (b->nomem) {
		errno = ENOMEM;
		return -1;
	}
	if (b->len && fwrite(b->p, 1, b->len, pf->out) != b->len) {
		errno = EIO;
		return -1;
	}
	b->len = pf->packet = 0;
	return 0;
}

/*
 * The packet built (from pf->packet on) is done: its key and length put
 * before it, the next one starts after it; written with those before it
 * once they fill PF_WRITE_AT bytes.  0, or -1 (ENOMEM, EIO).
 */
static int pf_flush(struct dti_perfetto *pf)
{
	struct pf_buf *b = &pf->b;
	size_t n = b->len - pf->packet;
	unsigned int k = pf_varint_len(n);

	if (!pf_room(b, k + 1))
		return pf_write(pf);	/* ENOMEM */
	memmove(b->p + pf->packet + k + 1, b->p + pf->packet, n);
	b->p[pf->packet] = PF_TRACE_PACKET << 3 | PB_LEN;
	pf_varint_at(b->p + pf->packet + 1, n);
	b->len += k + 1;
	pf->packet = b->len;
	return b->len >= PF_WRITE_AT ? pf_write(pf) : 0;
}

/*
 * -1 after a failure: a write error (EIO), which the output's close
 * tells with its reason, or out of memory, told here.  Nothing is
 * written after it.
 */
static int pf_fail(struct dti_perfetto *pf)
{
	if (errno != EIO)
		dti_err("out of memory");
	pf->failed = true;
	return -1;
}

/*
 * The packet's sequence (there is one), and on the first packet that its
 * state starts there
 */
static void pf_seq(struct dti_perfetto *pf)
{
	pf_uint(&pf->b, PF_PACKET_SEQUENCE_ID, PF_SEQUENCE);
	if (!pf->started)
		pf_uint(&pf->b, PF_PACKET_SEQUENCE_FLAGS, PF_INCREMENTAL_CLEARED);
	pf->started = true;
}

/* A TracePacket's fields of every event: its time, its clock, its sequence */
static void pf_packet_head(struct dti_perfetto *pf, uint64_t ts)
{
	pf_uint(&pf->b, PF_PACKET_TIMESTAMP, ts);
	pf_uint(&pf->b, PF_PACKET_CLOCK_ID, PF_CLOCK_MONOTONIC);
	pf_seq(pf);
}

/*
 * The first packet, before the first event at @ts: the trace's clock is
 * MONOTONIC, read @ts there.
 */
static int pf_clock(struct dti_perfetto *pf, uint64_t ts)
{
	struct pf_buf *b = &pf->b;
	size_t snap, clock;

	if (pf->clock_written)
		return 0;
	pf->clock_written = true;
	pf_seq(pf);
	snap = pf_begin(b, PF_PACKET_CLOCK_SNAPSHOT);
	clock = pf_begin(b, PF_CLOCKS);
	pf_uint(b, PF_CLOCK_ID, PF_CLOCK_MONOTONIC);
	pf_uint(b, PF_CLOCK_TIMESTAMP, ts);
	pf_end(b, clock);
	pf_uint(b, PF_PRIMARY_CLOCK, PF_CLOCK_MONOTONIC);
	pf_end(b, snap);
	return pf_flush(pf);
}

/* Track uuids: channel i's (i + 1) << 32, its CPU c's that | (c + 1) */
static uint64_t pf_cpu_uuid(const struct pf_chan *c, unsigned int cpu)
{
	return c->uuid | (cpu + 1ull);
}

/*
 * The index of channel @name, its track described on its first use.
 * -1 on error (ENOMEM, EIO).
 */
static int pf_chan(struct dti_perfetto *pf, const char *name)
{
	struct pf_buf *b = &pf->b;
	struct pf_chan *c;
	unsigned int i;
	size_t desc;

	if (!name)
		name = "dti";	/* input that does not name it */
	for (i = 0; i < pf->n_chans; i++)
		if (!strcmp(pf->chans[i].name, name))
			return i;
	c = realloc(pf->chans, (pf->n_chans + 1) * sizeof(*c));
	if (!c)
		return -1;
	pf->chans = c;
	c += pf->n_chans;
	memset(c, 0, sizeof(*c));
	c->name = strdup(name);
	if (!c->name)
		return -1;
	c->uuid = (uint64_t)(pf->n_chans + 1) << 32;
	pf->n_chans++;
	desc = pf_begin(b, PF_PACKET_TRACK_DESCRIPTOR);
	pf_uint(b, PF_TRACK_UUID, c->uuid);
	pf_text(b, PF_TRACK_NAME, (const unsigned char *)c->name, strlen(c->name));
	pf_uint(b, PF_TRACK_CHILD_ORDERING, PF_ORDER_EXPLICIT);
	pf_end(b, desc);
	pf_seq(pf);
	return pf_flush(pf) < 0 ? -1 : (int)i;
}

/* CPU @cpu of channel @ci, its track described on its first use; NULL: -1 above */
static struct pf_cpu *pf_cpu(struct dti_perfetto *pf, unsigned int ci, unsigned int cpu)
{
	struct pf_chan *c = &pf->chans[ci];
	struct pf_buf *b = &pf->b;
	struct pf_cpu *p;
	char name[24];
	size_t desc;

	if (cpu >= c->n_cpus) {
		p = realloc(c->cpus, (cpu + 1) * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + c->n_cpus, 0, (cpu + 1 - c->n_cpus) * sizeof(*p));
		c->cpus = p;
		c->n_cpus = cpu + 1;
	}
	p = &c->cpus[cpu];
	if (p->described)
		return p;
	p->described = true;
	snprintf(name, sizeof(name), "cpu%u", cpu);
	desc = pf_begin(b, PF_PACKET_TRACK_DESCRIPTOR);
	pf_uint(b, PF_TRACK_UUID, pf_cpu_uuid(c, cpu));
	pf_uint(b, PF_TRACK_PARENT, c->uuid);
	pf_str(b, PF_TRACK_NAME, name);
	pf_uint(b, PF_TRACK_RANK, cpu);
	pf_end(b, desc);
	pf_seq(pf);
	return pf_flush(pf) < 0 ? NULL : p;
}

/* Begin a TrackEvent of @type at @ts on CPU @cpu of channel @ci; for pf_end() */
static size_t pf_event(struct dti_perfetto *pf, uint64_t ts, unsigned int ci,
		       unsigned int cpu, unsigned int type)
{
	struct pf_buf *b = &pf->b;
	size_t ev;

	pf_packet_head(pf, ts);
	ev = pf_begin(b, PF_PACKET_TRACK_EVENT);
	pf_uint(b, PF_EVENT_TYPE, type);
	pf_uint(b, PF_EVENT_TRACK, pf_cpu_uuid(&pf->chans[ci], cpu));
	if (type != PF_SLICE_END)
		pf_str(b, PF_EVENT_CATEGORIES, "dti");
	return ev;
}

/*
 * Begin debug annotation @name as field @field: PF_EVENT_ANNOTATIONS of
 * the event, PF_ANN_DICT of a dictionary.  For pf_end().
 */
static size_t pf_ann(struct pf_buf *b, const char *name, unsigned int field)
{
	size_t a = pf_begin(b, field);

	pf_text(b, PF_ANN_NAME, (const unsigned char *)name, strlen(name));
	return a;
}

static void pf_ann_uint(struct pf_buf *b, const char *name, unsigned int type, uint64_t v)
{
	size_t a = pf_ann(b, name, PF_EVENT_ANNOTATIONS);

	pf_uint(b, type, v);
	pf_end(b, a);
}

static void pf_ann_str(struct pf_buf *b, const char *name, const char *s)
{
	size_t a = pf_ann(b, name, PF_EVENT_ANNOTATIONS);

	pf_text(b, PF_ANN_STRING, (const unsigned char *)s, strlen(s));
	pf_end(b, a);
}

/* The @n bytes at @p as lowercase hex digits, as DTI_FMT_JSON has them */
static void pf_hex(struct pf_buf *b, unsigned int field, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i, start = pf_begin(b, field);

	if (pf_room(b, 2 * n)) {
		for (i = 0; i < n; i++) {
			b->p[b->len++] = digits[p[i] >> 4];
			b->p[b->len++] = digits[p[i] & 15];
		}
	}
	pf_end(b, start);
}

/*
 * The losses of CPU @cpu of channel @ci, before its record at @ts (@has_ts
 * false: at the end, none comes): a slice from its record before to @ts,
 * or an instant at the one there is.  0, or -1 (ENOMEM, EIO).
 */
static int pf_gaps(struct dti_perfetto *pf, unsigned int ci, unsigned int cpu,
		   bool has_ts, uint64_t ts)
{
	struct pf_buf *b = &pf->b;
	struct pf_gap *g;
	size_t i, j, ev;
	char name[48];
	bool slice;

	for (i = j = 0; i < pf->n_gaps; i++) {
		g = &pf->gaps[i];
		if (g->chan != ci || g->cpu != cpu) {
			pf->gaps[j++] = *g;
			continue;
		}
		slice = g->has_before && has_ts;
		snprintf(name, sizeof(name), "lost %" PRIu64 " records", g->count);
		ev = pf_event(pf, g->has_before ? g->ts_before : has_ts ? ts : pf->last_ts, ci, cpu,
			      slice ? PF_SLICE_BEGIN : PF_INSTANT);
		pf_str(b, PF_EVENT_NAME, name);
		pf_ann_uint(b, "count", PF_ANN_UINT, g->count);
		pf_ann_uint(b, "first_seq", PF_ANN_UINT, g->from_seq);
		pf_ann_uint(b, "last_seq", PF_ANN_UINT, g->to_seq - 1);
		pf_end(b, ev);
		if (pf_flush(pf) < 0)
			return -1;
		if (!slice)
			continue;
		ev = pf_event(pf, ts, ci, cpu, PF_SLICE_END);
		pf_end(b, ev);
		if (pf_flush(pf) < 0)
			return -1;
	}
	pf->n_gaps = j;
	return 0;
}

struct dti_perfetto *dti_perfetto_open(FILE *out)
{
	struct dti_perfetto *pf = calloc(1, sizeof(*pf));

	if (!pf) {
		dti_err("out of memory");
		return NULL;
	}
	pf->out = out;
	return pf;
}

void dti_perfetto_callers(struct dti_perfetto *pf, struct dti_ksyms *syms,
			  struct dti_lines *lines)
{
	pf->syms = syms;
	pf->lines = lines;
}

/* The caller's annotations: its address, and what it resolves to */
static void pf_caller(struct dti_perfetto *pf, const struct dti_rec *rec)
{
	struct pf_buf *b = &pf->b;
	struct dti_line line;
	char sym[256];

	pf_ann_uint(b, "caller", PF_ANN_POINTER, rec->caller);
	if (pf->lines && dti_lines_resolve_at(pf->lines, rec->caller, rec->ts_ns, &line) == 0) {
		if (line.function) {
			snprintf(sym, sizeof(sym), "%s+0x%" PRIx64, line.function, line.offset);
			pf_ann_str(b, "symbol", sym);
		}
		if (line.file) {
			pf_ann_str(b, "file", line.file);
			pf_ann_uint(b, "line", PF_ANN_UINT, line.line);
		}
	} else if (pf->syms && dti_ksyms_format(pf->syms, rec->caller, sym, sizeof(sym)) == 0) {
		pf_ann_str(b, "symbol", sym);
	}
}

/* A typed event's fields as the dictionary "fields", each of its type */
static void pf_fields(struct pf_buf *b, struct dti_reader *r, const struct dti_rec *rec,
		      unsigned int n)
{
	struct dti_field f;
	size_t dict, a;
	unsigned int i;

	dict = pf_ann(b, "fields", PF_EVENT_ANNOTATIONS);
	for (i = 0; i < n && dti_event_field(r, rec, i, &f) == 0; i++) {
		a = pf_ann(b, f.name, PF_ANN_DICT);
		switch (f.type) {
		case DTI_FIELD_INT:
			pf_uint(b, PF_ANN_INT, (uint64_t)f.i);
			break;
		case DTI_FIELD_UINT:
			pf_uint(b, PF_ANN_UINT, f.u);
			break;
		case DTI_FIELD_PTR:
			pf_uint(b, PF_ANN_POINTER, f.u);
			break;
		case DTI_FIELD_STR:
			pf_text(b, PF_ANN_STRING, f.data, f.len);
			break;
		case DTI_FIELD_BYTES:
			pf_hex(b, PF_ANN_STRING, f.data, f.len);
			break;
		}
		pf_end(b, a);
	}
	pf_end(b, dict);
}

int dti_perfetto_record(struct dti_perfetto *pf, struct dti_reader *r,
			const struct dti_rec *rec, const char *channel)
{
	unsigned int cpu = dti_export_stream(rec), nfields = 0;
	struct pf_buf *b = &pf->b;
	const char *event = NULL;
	const unsigned char *text = rec->payload;
	struct pf_cpu *c;
	size_t ev, len;
	int ci;

	if (pf->failed)
		return -1;
	if (rec->flags & DTI_REC_FORMAT)
		return 0;
	if (pf_clock(pf, rec->ts_ns) < 0 || (ci = pf_chan(pf, channel)) < 0 ||
	    !(c = pf_cpu(pf, ci, cpu)) || pf_gaps(pf, ci, cpu, true, rec->ts_ns) < 0)
		goto fail;
	c->has_ts = true;
	c->last_ts = rec->ts_ns;
	pf->last_ts = rec->ts_ns;
	ev = pf_event(pf, rec->ts_ns, ci, cpu, PF_INSTANT);
	if (rec->flags & DTI_REC_TYPED)
		dti_event_info(r, rec, &event, &nfields);
	if (event) {
		pf_text(b, PF_EVENT_NAME, (const unsigned char *)event, strlen(event));
	} else if (rec->flags & DTI_REC_TEXT) {
		/* the message, its newline left out */
		len = rec->len && text[rec->len - 1] == '\n' ? rec->len - 1 : rec->len;
		pf_text(b, PF_EVENT_NAME, text, len);
	} else {
		pf_str(b, PF_EVENT_NAME, "binary");
	}
	pf_ann_str(b, "level", dti_level_name(rec->level));
	if (!(rec->flags & DTI_REC_PENDING))
		pf_ann_uint(b, "seq", PF_ANN_UINT, rec->seq);
	pf_caller(pf, rec);
	if (rec->cpu != cpu)
		pf_ann_uint(b, "log_cpu", PF_ANN_UINT, rec->cpu);
	if (rec->flags & DTI_REC_REPLAYED)
		pf_ann_uint(b, "replayed", PF_ANN_BOOL, 1);
	if (rec->flags & DTI_REC_PENDING)
		pf_ann_uint(b, "pending", PF_ANN_BOOL, 1);
	if (rec->flags & DTI_REC_TRUNCATED)
		pf_ann_uint(b, "truncated", PF_ANN_BOOL, 1);
	if (event) {
		pf_fields(b, r, rec, nfields);
	} else if (!(rec->flags & DTI_REC_TEXT)) {
		len = pf_ann(b, "data", PF_EVENT_ANNOTATIONS);
		pf_hex(b, PF_ANN_STRING, rec->payload, rec->len);
		pf_end(b, len);
	}
	pf_end(b, ev);
	if (pf_flush(pf) == 0)
		return 0;
fail:
	return pf_fail(pf);
}

int dti_perfetto_loss(struct dti_perfetto *pf, const char *channel,
		      const struct dti_notice *n)
{
	struct pf_gap *g;
	struct pf_cpu *c;
	int ci;

	if (pf->failed)
		return -1;
	if (n->type != DTI_NOTICE_GAP)
		return 0;
	ci = pf_chan(pf, channel);
	c = ci < 0 ? NULL : pf_cpu(pf, ci, n->cpu);
	g = c ? realloc(pf->gaps, (pf->n_gaps + 1) * sizeof(*g)) : NULL;
	if (!g)
		return pf_fail(pf);
	pf->gaps = g;
	pf->gaps[pf->n_gaps++] = (struct pf_gap){
		.chan = ci, .cpu = n->cpu, .from_seq = n->from_seq, .to_seq = n->to_seq,
		.count = n->count, .has_before = c->has_ts, .ts_before = c->last_ts,
	};
	return 0;
}

int dti_perfetto_close(struct dti_perfetto *pf)
{
	unsigned int i;
	int ret = 0;

	if (pf->failed)
		ret = -1;
	/* losses no record came after: where the record before was */
	while (pf->n_gaps && ret == 0) {
		if (pf_clock(pf, pf->gaps[0].ts_before) < 0 ||
		    pf_gaps(pf, pf->gaps[0].chan, pf->gaps[0].cpu, false, 0) < 0)
			ret = pf_fail(pf);
	}
	if (ret == 0 && pf_write(pf) < 0)
		ret = pf_fail(pf);
	for (i = 0; i < pf->n_chans; i++) {
		free(pf->chans[i].name);
		free(pf->chans[i].cpus);
	}
	free(pf->chans);
	free(pf->gaps);
	free(pf->b.p);
	free(pf);
	return ret;
}
