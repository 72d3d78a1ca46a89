// SPDX-License-Identifier: GPL-2.0
/*
 * A CTF 1.8 trace, written by hand as LTTng and barectf write theirs:
 * the TSDL text "metadata" (written last, once every event class is
 * known) and one data stream per CPU, "cpuN", a run of packets.  Every
 * packet starts with a header (magic, the trace's UUID) and a context
 * (its first and last time, sizes, its number in the stream, the
 * stream's count of discarded events, the CPU); every event with a
 * header (class id, full 64-bit time) and DTI's event context.  Every
 * field is byte-aligned and in this machine's byte order, so writing an
 * event is appending its bytes.
 *
 * Discarded events: CTF counts them per stream in the packet context, a
 * running total; a reader reports the difference between two packets as
 * lost between them.  So a loss closes the CPU's packet and its next
 * event opens one with the new total (an empty packet where there is no
 * packet before or event after it to carry the count).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "dti-cli.h"
#include "ctf.h"

#define DTI_CTF_MAGIC		0xC1FC1FC1u
/* A packet is closed once its content reaches this many bytes */
#define DTI_CTF_PACKET_MAX	(1u << 20)
/* The packet header and context: their fields' offsets, their size */
#define DTI_CTF_OFF_TS_END	28
#define DTI_CTF_OFF_CONTENT	36
#define DTI_CTF_OFF_SIZE	44
#define DTI_CTF_PACKET_HEAD	72

struct dti_ctf_stream {
	FILE *f;
	unsigned char *buf;
	size_t len, cap;
	bool used;		/* has packets */
	bool open;		/* a packet is being filled */
	uint64_t last_ts;	/* of its last event */
	uint64_t discarded;	/* told in its packets so far */
	uint64_t pending;	/* lost since, told by the next packet */
	uint64_t packet_seq;
};

struct dti_ctf_class {
	char *name;
	struct dti_ctf_field *f;
	unsigned int n;
};

struct dti_ctf {
	char *dir, *channel;
	unsigned char uuid[16];
	struct dti_ctf_stream *s;
	unsigned int n_s;
	struct dti_ctf_stream *cur;	/* the stream of the event begun */
	struct dti_ctf_class *classes;
	unsigned int n_classes;
	uint64_t last_ts;		/* of the last event of any stream */
	bool failed;			/* a message was printed */
};

static int dti_ctf_nomem(struct dti_ctf *c)
{
	c->failed = true;
	return dti_err("%s: out of memory", c->dir);
}

/* Create @dir, or check that it is empty.  0 or -1 (printed). */
static int dti_ctf_mkdir(const char *dir)
{
	struct dirent *de;
	bool empty = true;
	DIR *d;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno != EEXIST || !(d = opendir(dir))) {
		dti_err("%s: %s", dir, strerror(errno));
		return -1;
	}
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	if (!empty) {
		dti_err("%s: directory is not empty: a CTF trace is written into a new or empty one",
			dir);
		return -1;
	}
	return 0;
}

/* The UUID of the clock of every trace this run of dti writes */
static unsigned char dti_ctf_clock_uuid[16];
static bool dti_ctf_clock_uuid_set;

/* A random UUID (RFC 4122, version 4) into @u.  0, or -1 (errno). */
static int dti_ctf_new_uuid(unsigned char u[16])
{
	if (getrandom(u, 16, 0) != 16)
		return -1;
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	return 0;
}

/* @u as TSDL writes a UUID: a quoted string */
static void dti_ctf_uuid(FILE *f, const unsigned char u[16])
{
	fprintf(f, "\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		u[12], u[13], u[14], u[15]);
}

struct dti_ctf *dti_ctf_create(const char *dir, const char *channel)
{
	struct dti_ctf *c;

	if (dti_ctf_mkdir(dir) < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir)) || (channel && !(c->channel = strdup(channel)))) {
		dti_err("%s: out of memory", dir);
		if (c)
			free(c->dir);
		free(c);
		return NULL;
	}
	/* the trace's identity, which each packet repeats; the run's clock */
	if (dti_ctf_new_uuid(c->uuid) < 0 ||
	    (!dti_ctf_clock_uuid_set && dti_ctf_new_uuid(dti_ctf_clock_uuid) < 0)) {
		dti_err("%s: no random bytes for a UUID: %s", dir, strerror(errno));
		free(c->channel);
		free(c->dir);
		free(c);
		return NULL;
	}
	dti_ctf_clock_uuid_set = true;
	return c;
}

void dti_ctf_set_channel(struct dti_ctf *c, const char *channel)
{
	if (!c->channel && channel)
		c->channel = strdup(channel);
}

int dti_ctf_class(struct dti_ctf *c, const char *name, const struct dti_ctf_field *f,
		  unsigned int n)
{
	struct dti_ctf_class *k;
	unsigned int i;

	k = realloc(c->classes, (c->n_classes + 1) * sizeof(*k));
	if (!k)
		return dti_ctf_nomem(c), -1;
	c->classes = k;
	k += c->n_classes;
	k->n = n;
	k->name = strdup(name);
	k->f = calloc(n ? n : 1, sizeof(*k->f));
	for (i = 0; k->f && i < n; i++) {
		k->f[i] = f[i];
		k->f[i].name = strdup(f[i].name);
		if (!k->f[i].name)
			break;
	}
	if (!k->name || !k->f || i < n) {
		while (k->f && i--)
			free((char *)k->f[i].name);
		free(k->f);
		free(k->name);
		return dti_ctf_nomem(c), -1;
	}
	return c->n_classes++;
}

/* Room for @len more bytes in @s's packet.  0 or -1 (out of memory). */
static int dti_ctf_room(struct dti_ctf_stream *s, size_t len)
{
	size_t cap = s->cap ? s->cap : 4096;
	unsigned char *b;

	if (s->len + len <= s->cap)
		return 0;
	while (cap < s->len + len)
		cap *= 2;
	b = realloc(s->buf, cap);
	if (!b)
		return -1;
	s->buf = b;
	s->cap = cap;
	return 0;
}

static void dti_ctf_put(struct dti_ctf_stream *s, const void *p, size_t len)
{
	memcpy(s->buf + s->len, p, len);
	s->len += len;
}

/* A number of @size bytes (1, 2, 4, 8) in this machine's order; room made */
static void dti_ctf_num(struct dti_ctf_stream *s, uint64_t v, unsigned int size)
{
	uint8_t b = v;
	uint16_t h = v;
	uint32_t w = v;

	switch (size) {
	case 1:
		dti_ctf_put(s, &b, 1);
		break;
	case 2:
		dti_ctf_put(s, &h, 2);
		break;
	case 4:
		dti_ctf_put(s, &w, 4);
		break;
	default:
		dti_ctf_put(s, &v, 8);
	}
}

static struct dti_ctf_stream *dti_ctf_stream(struct dti_ctf *c, unsigned int cpu)
{
	struct dti_ctf_stream *s;

	if (cpu >= c->n_s) {
		s = realloc(c->s, (cpu + 1) * sizeof(*s));
		if (!s)
			return dti_ctf_nomem(c), NULL;
		memset(s + c->n_s, 0, (cpu + 1 - c->n_s) * sizeof(*s));
		c->s = s;
		c->n_s = cpu + 1;
	}
	return &c->s[cpu];
}

/* Start a packet of CPU @cpu's stream at @ts.  0 or -1 (printed). */
static int dti_ctf_packet_begin(struct dti_ctf *c, unsigned int cpu, uint64_t ts)
{
	struct dti_ctf_stream *s = &c->s[cpu];
	char path[PATH_MAX];

	if (!s->f) {
		snprintf(path, sizeof(path), "%s/cpu%u", c->dir, cpu);
		s->f = fopen(path, "wbx");
		if (!s->f) {
			c->failed = true;
			return dti_err("%s: %s", path, strerror(errno)), -1;
		}
	}
	if (dti_ctf_room(s, DTI_CTF_PACKET_HEAD) < 0)
		return dti_ctf_nomem(c), -1;
	s->len = 0;
	dti_ctf_num(s, DTI_CTF_MAGIC, 4);
	dti_ctf_put(s, c->uuid, sizeof(c->uuid));
	dti_ctf_num(s, ts, 8);		/* timestamp_begin */
	dti_ctf_num(s, ts, 8);		/* timestamp_end, content_size and */
	dti_ctf_num(s, 0, 8);		/* packet_size: at its end */
	dti_ctf_num(s, 0, 8);
	dti_ctf_num(s, s->packet_seq, 8);
	dti_ctf_num(s, s->discarded, 8);
	dti_ctf_num(s, cpu, 4);
	s->open = s->used = true;
	return 0;
}

/* Close CPU @cpu's packet, ending at @ts, and write it.  0 or -1 (printed). */
static int dti_ctf_packet_end(struct dti_ctf *c, unsigned int cpu, uint64_t ts)
{
	struct dti_ctf_stream *s = &c->s[cpu];
	uint64_t bits = (uint64_t)s->len * 8;
	char path[PATH_MAX];

	memcpy(s->buf + DTI_CTF_OFF_TS_END, &ts, 8);
	memcpy(s->buf + DTI_CTF_OFF_CONTENT, &bits, 8);
	memcpy(s->buf + DTI_CTF_OFF_SIZE, &bits, 8);
	s->open = false;
	s->packet_seq++;
	if (fwrite(s->buf, 1, s->len, s->f) != s->len) {
		c->failed = true;
		snprintf(path, sizeof(path), "%s/cpu%u", c->dir, cpu);
		return dti_err("writing %s: %s", path, strerror(errno)), -1;
	}
	return 0;
}

/* A packet of no event at @ts, to carry a count.  0 or -1 (printed). */
static int dti_ctf_packet_empty(struct dti_ctf *c, unsigned int cpu, uint64_t ts)
{
	if (dti_ctf_packet_begin(c, cpu, ts) < 0)
		return -1;
	return dti_ctf_packet_end(c, cpu, ts);
}

/*
 * The losses told since CPU @cpu's last packet, before its event at @ts
 * (UINT64_MAX: before another loss, or at the end): its packet is
 * closed, and the next carries them.  0 or -1 (printed).
 */
static int dti_ctf_flush_lost(struct dti_ctf *c, unsigned int cpu, uint64_t ts)
{
	struct dti_ctf_stream *s = &c->s[cpu];
	uint64_t at = c->last_ts < ts ? c->last_ts : ts;

	if (!s->pending)
		return 0;
	if (s->open && dti_ctf_packet_end(c, cpu, s->last_ts) < 0)
		return -1;
	/* a reader counts from a stream's first packet on */
	if (!s->used && dti_ctf_packet_empty(c, cpu, at) < 0)
		return -1;
	s->discarded += s->pending;
	s->pending = 0;
	/* none follows: a packet of its own says it */
	if (ts == UINT64_MAX)
		return dti_ctf_packet_empty(c, cpu, s->last_ts > at ? s->last_ts : at);
	return 0;
}

void dti_ctf_discarded(struct dti_ctf *c, unsigned int stream, uint64_t count)
{
	struct dti_ctf_stream *s = dti_ctf_stream(c, stream);

	if (!s || c->failed)
		return;
	/* a loss with no event of the stream since the last: a packet apart */
	if (s->pending)
		dti_ctf_flush_lost(c, stream, UINT64_MAX);
	s->pending += count;
}

int dti_ctf_event(struct dti_ctf *c, unsigned int stream, unsigned int id, uint64_t ts_ns,
		  const struct dti_ctf_ctx *ctx)
{
	struct dti_ctf_stream *s = dti_ctf_stream(c, stream);

	if (!s || c->failed)
		return -1;
	if (dti_ctf_flush_lost(c, stream, ts_ns) < 0)
		return -1;
	if (s->open && s->len >= DTI_CTF_PACKET_MAX &&
	    dti_ctf_packet_end(c, stream, s->last_ts) < 0)
		return -1;
	if (!s->open && dti_ctf_packet_begin(c, stream, ts_ns) < 0)
		return -1;
	if (dti_ctf_room(s, 34) < 0)
		return dti_ctf_nomem(c), -1;
	dti_ctf_num(s, id, 4);
	dti_ctf_num(s, ts_ns, 8);
	dti_ctf_num(s, ctx->cpu, 4);
	dti_ctf_num(s, (uint8_t)ctx->level, 1);
	dti_ctf_num(s, ctx->seq, 8);
	dti_ctf_num(s, ctx->flags, 1);
	dti_ctf_num(s, ctx->caller, 8);
	s->last_ts = ts_ns;
	c->last_ts = ts_ns;
	c->cur = s;
	return 0;
}

void dti_ctf_put_num(struct dti_ctf *c, uint64_t v, unsigned int size)
{
	if (dti_ctf_room(c->cur, 8) < 0) {
		dti_ctf_nomem(c);
		return;
	}
	dti_ctf_num(c->cur, v, size);
}

void dti_ctf_put_bytes(struct dti_ctf *c, const void *p, uint32_t len)
{
	if (dti_ctf_room(c->cur, 4 + (size_t)len) < 0) {
		dti_ctf_nomem(c);
		return;
	}
	dti_ctf_num(c->cur, len, 4);
	dti_ctf_put(c->cur, p, len);
}

/* @s as a TSDL string literal, quotes and backslashes escaped */
static void dti_ctf_quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* Whether a field of @k is called @name */
static bool dti_ctf_taken(const struct dti_ctf_class *k, const char *name)
{
	unsigned int i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->f[i].name, name))
			return true;
	return false;
}

/*
 * Field @f of class @k in TSDL.  A name starts with an underscore, which
 * a reader drops (CTF 1.8, 4.4): so that no field name is taken for a
 * keyword.  A length field before a STR or BYTES field is called
 * _NAME_length (with further underscores if the class has a field of
 * that name), as LTTng calls them.  A text is a sequence of UTF-8
 * bytes rather than a NUL-terminated string: it may hold a NUL (a
 * marker), and its length stays exact where a reader shows an empty
 * one wrong (babeltrace2 2.0 keeps the text of the event before).
 */
static void dti_ctf_field_tsdl(FILE *f, const struct dti_ctf_class *k,
			       const struct dti_ctf_field *x)
{
	char len[128];
	size_t n;

	switch (x->kind) {
	case DTI_CTF_INT:
	case DTI_CTF_UINT:
	case DTI_CTF_HEX:
		fprintf(f, "\t\tinteger { size = %u; align = 8; signed = %s;%s } _%s;\n",
			x->size * 8, x->kind == DTI_CTF_INT ? "true" : "false",
			x->kind == DTI_CTF_HEX ? " base = 16;" : "", x->name);
		return;
	case DTI_CTF_STR:
	case DTI_CTF_BYTES:
		snprintf(len, sizeof(len), "_%s_length", x->name);
		n = strlen(len);
		while (dti_ctf_taken(k, len) && n + 1 < sizeof(len)) {
			len[n++] = '_';
			len[n] = '\0';
		}
		fprintf(f, "\t\tinteger { size = 32; align = 8; signed = false; } _%s;\n", len);
		fprintf(f, "\t\tinteger { size = 8; align = 8; signed = false; %s } _%s[_%s];\n",
			x->kind == DTI_CTF_STR ? "encoding = UTF8;" : "base = 16;", x->name, len);
		return;
	}
}

static const char dti_ctf_head[] =
	"/* CTF 1.8 */\n"
	"\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"\n";

/*
 * The clock of DTI's records: dti.ko stamps them with
 * ktime_get_mono_fast_ns(), CLOCK_MONOTONIC in nanoseconds, from the
 * traced machine's boot; its offset from the epoch is not known.  Its
 * UUID, after "clock {" and its name, is one for all the traces a run of
 * dti writes (several channels of one machine), so that babeltrace2
 * merges them by time: of clocks with no UUID and no absolute origin it
 * takes those of one trace only (2.1: "Unexpected clock class").
 */
static const char dti_ctf_clock[] =
	"\tdescription = \"CLOCK_MONOTONIC of the traced machine (dti.ko: ktime_get_mono_fast_ns()), nanoseconds since its boot\";\n"
	"\tfreq = 1000000000;\n"
	"\tprecision = 1;\n"
	"\toffset_s = 0;\n"
	"\toffset = 0;\n"
	"\tabsolute = false;\n"
	"};\n"
	"\n"
	"typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n"
	"\n"
	"stream {\n"
	"\tpacket.context := struct {\n"
	"\t\tuint64_clock_monotonic_t timestamp_begin;\n"
	"\t\tuint64_clock_monotonic_t timestamp_end;\n"
	"\t\tuint64_t content_size;\n"
	"\t\tuint64_t packet_size;\n"
	"\t\tuint64_t packet_seq_num;\n"
	"\t\tuint64_t events_discarded;\n"
	"\t\tuint32_t cpu_id;\n"
	"\t};\n"
	"\tevent.header := struct {\n"
	"\t\tuint32_t id;\n"
	"\t\tuint64_clock_monotonic_t timestamp;\n"
	"\t};\n"
	"\tevent.context := struct {\n"
	"\t\tuint32_t _cpu;\n"
	"\t\tenum : integer { size = 8; align = 8; signed = true; } {\n"
	"\t\t\temerg = 0, alert = 1, crit = 2, err = 3,\n"
	"\t\t\twarning = 4, notice = 5, info = 6, debug = 7,\n"
	"\t\t} _level;\n"
	"\t\tuint64_t _seq;\n"
	"\t\tuint8_t _flags;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _caller;\n"
	"\t};\n"
	"};\n";

/* The metadata of @c into DIR/metadata.  0 or -1 (printed). */
static int dti_ctf_metadata(struct dti_ctf *c)
{
	char path[PATH_MAX];
	unsigned int i, j;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/metadata", c->dir);
	f = fopen(path, "wx");
	if (!f)
		return dti_err("%s: %s", path, strerror(errno)), -1;
	fputs(dti_ctf_head, f);
	fputs("trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = ", f);
	dti_ctf_uuid(f, c->uuid);
	fprintf(f, ";\n\tbyte_order = %s;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n\t};\n};\n\n",
		__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "le" : "be");
	fputs("env {\n\tdomain = \"kernel\";\n\ttracer_name = \"dti\";\n", f);
	fprintf(f, "\ttracer_major = %d;\n\ttracer_minor = %d;\n", 0, 1);
	fputs("\tchannel = ", f);
	dti_ctf_quote(f, c->channel ? c->channel : "");
	fputs(";\n};\n\n", f);
	fputs("clock {\n\tname = \"monotonic\";\n\tuuid = ", f);
	dti_ctf_uuid(f, dti_ctf_clock_uuid);
	fputs(";\n", f);
	fputs(dti_ctf_clock, f);
	for (i = 0; i < c->n_classes; i++) {
		const struct dti_ctf_class *k = &c->classes[i];

		fputs("\nevent {\n\tname = ", f);
		dti_ctf_quote(f, k->name);
		fprintf(f, ";\n\tid = %u;\n\tfields := struct {\n", i);
		for (j = 0; j < k->n; j++)
			dti_ctf_field_tsdl(f, k, &k->f[j]);
		fputs("\t};\n};\n", f);
	}
	err = ferror(f) ? EIO : 0;
	if (fclose(f) != 0 && !err)
		err = errno;
	if (err)
		return dti_err("writing %s: %s", path, strerror(err)), -1;
	return 0;
}

int dti_ctf_close(struct dti_ctf *c)
{
	struct dti_ctf_stream *s;
	char path[PATH_MAX];
	unsigned int i, j;
	int ret = c->failed ? -1 : 0;

	for (i = 0; i < c->n_s && !ret; i++) {
		s = &c->s[i];
		if (dti_ctf_flush_lost(c, i, UINT64_MAX) < 0 ||
		    (s->open && dti_ctf_packet_end(c, i, s->last_ts) < 0))
			ret = -1;
	}
	for (i = 0; i < c->n_s; i++) {
		s = &c->s[i];
		if (s->f && fclose(s->f) != 0 && !ret) {
			snprintf(path, sizeof(path), "%s/cpu%u", c->dir, i);
			dti_err("writing %s: %s", path, strerror(errno));
			ret = -1;
		}
		free(s->buf);
	}
	if (!ret)
		ret = dti_ctf_metadata(c);
	for (i = 0; i < c->n_classes; i++) {
		for (j = 0; j < c->classes[i].n; j++)
			free((char *)c->classes[i].f[j].name);
		free(c->classes[i].f);
		free(c->classes[i].name);
	}
	free(c->classes);
	free(c->s);
	free(c->channel);
	free(c->dir);
	free(c);
	return ret;
}
