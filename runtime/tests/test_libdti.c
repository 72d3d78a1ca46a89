// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libdti on synthetic per-CPU files written by the tests
 * themselves: merge order, equal timestamps, empty CPUs, gaps, relay
 * padding in raw ring copies, wrap-around, zero fill, byte order,
 * truncated and corrupt input, formatting, channel control on a fake
 * debugfs tree and kernel symbols.  Prints "N passed, N failed" last.
 */
#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/dti_record.h>
#include "dti/libdti.h"
#include "unit.h"

#define DTI_HDR		((int)sizeof(struct dti_record))


/* ---- building synthetic buffers ---- */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
};

static void wb_put(struct wbuf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void wb_zero(struct wbuf *b, size_t n)
{
	static const unsigned char z[4096];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		wb_put(b, z, k);
		n -= k;
	}
}

static bool swap_next;	/* write the next records in the other byte order */
#define SUB_NAME "test"
static const char *sub_name = SUB_NAME;	/* channel of the next sub-buffer headers */
static unsigned int log_cpu_next = -1U;	/* log_cpu of the next record, if set */

static void wb_rec(struct wbuf *b, unsigned int cpu, unsigned int flags,
		   int level, uint64_t seq, uint64_t ts, const void *payload,
		   uint32_t len)
{
	struct dti_record r = {
		.magic = DTI_RECORD_MAGIC, .version = DTI_RECORD_VERSION_1,
		.flags = flags, .level = level, .hdr_len = sizeof(r), .cpu = cpu,
		.len = len, .log_cpu = cpu, .seq = seq, .ts_ns = ts,
		.caller = 0xffffffffc0001234ull,
	};

	if (log_cpu_next != -1U) {
		r.log_cpu = log_cpu_next;
		log_cpu_next = -1U;
	}
	size_t pad = DTI_RECORD_SIZE(len) - sizeof(r) - len;

	if (swap_next) {
		r.magic = bswap_16(r.magic);
		r.cpu = bswap_16(r.cpu);
		r.len = bswap_32(r.len);
		r.log_cpu = bswap_32(r.log_cpu);
		r.seq = bswap_64(r.seq);
		r.ts_ns = bswap_64(r.ts_ns);
		r.caller = bswap_64(r.caller);
	}
	wb_put(b, &r, sizeof(r));
	wb_put(b, payload, len);
	wb_zero(b, pad);
}

static void wb_text(struct wbuf *b, unsigned int cpu, uint64_t seq, uint64_t ts,
		    const char *text)
{
	wb_rec(b, cpu, DTI_REC_TEXT, 3, seq, ts, text, strlen(text));
}

static void wb_sub(struct wbuf *b, unsigned int cpu, uint64_t number,
		   uint32_t subbuf_size, uint32_t n_subbufs, uint32_t padding,
		   uint32_t records, uint32_t state)
{
	struct dti_subbuf_info in = {
		.subbuf_size = subbuf_size, .n_subbufs = n_subbufs,
		.padding = padding, .records = records, .state = state,
	};

	if (swap_next) {
		in.subbuf_size = bswap_32(in.subbuf_size);
		in.n_subbufs = bswap_32(in.n_subbufs);
		in.padding = bswap_32(in.padding);
		in.records = bswap_32(in.records);
		in.state = bswap_32(in.state);
	}
	strcpy(in.name, sub_name);
	wb_rec(b, cpu, DTI_REC_SUBBUF, 0, number, 1, &in, DTI_SUBBUF_INFO_V1_SIZE);
}

static char *tpath(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

/* Write @b to file @name (under the test directory) and keep it. */
static void wb_write(const struct wbuf *b, const char *name)
{
	FILE *f = fopen(tpath(name), "w");

	fwrite(b->p, 1, b->len, f);
	fclose(f);
}

static void wb_save(struct wbuf *b, const char *name)
{
	wb_write(b, name);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/*
 * @nsub sub-buffers of 1024 bytes, each of @per text records "<c><nn>"
 * (c: 'a' + @cpu, nn: the record's seq), record n of @cpu logged at time
 * 2n + @cpu; all closed but the last, laid out as read() returns them.
 */
static void wb_cpu(struct wbuf *b, unsigned int cpu, unsigned int nsub,
		   unsigned int per)
{
	unsigned int k, i, n = 0;
	char text[8];

	for (k = 0; k < nsub; k++) {
		bool last = k == nsub - 1;

		wb_sub(b, cpu, k, 1024, 8,
		       last ? 0 : 1024 - DTI_SUBBUF_HEADER_SIZE_V1 - per * 48, per,
		       last ? DTI_SUBBUF_OPEN : DTI_SUBBUF_CLOSED);
		for (i = 0; i < per; i++, n++) {
			snprintf(text, sizeof(text), "%c%02u", 'a' + cpu, n % 100);
			wb_text(b, cpu, n, 2 * n + cpu, text);
		}
	}
}

/* ---- record version 2: compact records, as dti.ko writes them ---- */

/* The caller base of the compact sub-buffer headers written here */
#define CBASE	0xffffffffc0000000ull

/* The chains of the compact sub-buffer being written (struct dti_crec) */
static struct { uint64_t ts, seq, caller; } cw;

/*
 * A version-2 sub-buffer header of CPU @cpu, number @number, its chains
 * starting at @seq_base, @ts_base and @caller_prev; returns where it
 * starts in @b.
 */
static size_t wb_csub(struct wbuf *b, unsigned int cpu, uint64_t number, uint32_t ss,
		      uint32_t padding, uint32_t records, uint32_t state,
		      uint64_t seq_base, uint64_t ts_base, uint64_t caller_prev)
{
	struct dti_subbuf_info in = {
		.subbuf_size = ss, .n_subbufs = 4, .padding = padding,
		.records = records, .state = state, .seq_base = seq_base,
		.ts_base = ts_base, .caller_prev = caller_prev,
	};
	struct dti_record r = {
		.magic = DTI_RECORD_MAGIC, .version = DTI_RECORD_VERSION,
		.flags = DTI_REC_SUBBUF, .hdr_len = sizeof(r), .cpu = cpu,
		.len = sizeof(in), .log_cpu = cpu, .seq = number, .ts_ns = ts_base,
		.caller = CBASE,
	};
	size_t start = b->len;

	strcpy(in.name, sub_name);
	wb_put(b, &r, sizeof(r));
	wb_put(b, &in, sizeof(in));
	cw.ts = ts_base;
	cw.seq = seq_base;
	cw.caller = caller_prev;
	return start;
}

/*
 * A compact record: @info's level and extension bits say what it stores;
 * @seq, @ts and @caller are what it must read as (a format's are left
 * out of the chains).
 */
static void wb_crec(struct wbuf *b, uint8_t flags, uint8_t info, uint64_t seq,
		    uint64_t ts, uint64_t caller, uint32_t log_cpu,
		    const void *payload, uint32_t len)
{
	struct dti_crec c = {
		.len = info & DTI_CREC_LEN32 ? 0 : len, .flags = flags, .info = info,
		.ts_delta = info & DTI_CREC_TS64 ? 0 : (int32_t)(ts - cw.ts),
	};
	uint64_t skip = seq - cw.seq, c64 = caller;
	int32_t c32 = (int32_t)(caller - CBASE);
	size_t start = b->len;

	wb_put(b, &c, sizeof(c));
	if (info & DTI_CREC_LEN32)
		wb_put(b, &len, sizeof(len));
	if (info & DTI_CREC_TS64)
		wb_put(b, &ts, sizeof(ts));
	if (info & DTI_CREC_SKIP)
		wb_put(b, &skip, sizeof(skip));
	if ((info & DTI_CREC_CALLER) == DTI_CREC_CALLER32)
		wb_put(b, &c32, sizeof(c32));
	if ((info & DTI_CREC_CALLER) == DTI_CREC_CALLER64)
		wb_put(b, &c64, sizeof(c64));
	if (flags & DTI_REC_REPLAYED)
		wb_put(b, &log_cpu, sizeof(log_cpu));
	wb_put(b, payload, len);
	wb_zero(b, -(b->len - start) % DTI_CREC_ALIGN);
	if (!(flags & DTI_REC_FORMAT)) {
		cw.ts = ts;
		cw.seq = seq + 1;
		cw.caller = caller;
	}
}

/* Close the sub-buffer at @start of @b: its padding, as dti.ko sets it */
static void wb_cclose(struct wbuf *b, size_t start, uint32_t ss)
{
	/* (a read() stream has no padding: a header is 4-byte aligned) */
	unsigned char *in = b->p + start + sizeof(struct dti_record);
	uint32_t padding = ss - (b->len - start), state = DTI_SUBBUF_CLOSED;

	memcpy(in + offsetof(struct dti_subbuf_info, padding), &padding, sizeof(padding));
	memcpy(in + offsetof(struct dti_subbuf_info, state), &state, sizeof(state));
}

/* ---- reading back ---- */

struct seen {
	char out[65536];	/* dti_print() of every record */
	char notices[4096];
	char sig[1024];		/* "type@offset+count " of every notice */
	int n, rc, err_no;
	unsigned long damage, warning;
	char err[512];
};

static unsigned int open_flags;	/* for read_paths() */

static void on_notice(const struct dti_notice *n, void *arg)
{
	struct seen *s = arg;
	size_t len = strlen(s->sig);

	strncat(s->notices, n->message, sizeof(s->notices) - strlen(s->notices) - 2);
	strcat(s->notices, "\n");
	snprintf(s->sig + len, sizeof(s->sig) - len, "%d@%llu+%llu ", n->type,
		 (unsigned long long)n->offset, (unsigned long long)n->count);
}

/* Notices into the FILE the records go to, as "N: message". */
static void fputs_notice(const struct dti_notice *n, void *arg)
{
	fprintf(arg, "N: %s\n", n->message);
}

static void drain(struct dti_reader *r, struct seen *s, enum dti_format fmt)
{
	struct dti_rec rec;
	FILE *f = fmemopen(s->out, sizeof(s->out) - 1, "w");

	memset(s, 0, sizeof(*s));
	dti_set_notice_handler(r, on_notice, s);
	while ((s->rc = dti_next(r, &rec)) > 0) {
		dti_print(r, f, &rec, fmt);
		s->n++;
	}
	s->err_no = errno;
	fclose(f);
	if (s->rc < 0)
		snprintf(s->err, sizeof(s->err), "%s", dti_errmsg());
	s->damage = dti_damage_count(r);
	s->warning = dti_warning_count(r);
}

/* Drain @r (NULL: opening failed) into @s and close it.  s->rc. */
static int drain_close(struct dti_reader *r, struct seen *s, enum dti_format fmt)
{
	if (!r) {
		memset(s, 0, sizeof(*s));
		snprintf(s->err, sizeof(s->err), "%s", dti_errmsg());
		return -1;
	}
	drain(r, s, fmt);
	dti_close(r);
	return s->rc;
}

/* ---- dti_print_records() against the loop of dti_next() and dti_print() ---- */

/* A source the tests read, opened again for batch_check() */
struct src {
	const char *const *paths;	/* files, or */
	int n;
	const char *dir;		/* a directory, or */
	const struct wbuf *mem;		/* memory, or */
	const struct wbuf *pipes;	/* two pipes written in packets of @chunk */
	size_t chunk;
	int *fds;			/* their ends, for close_pipes() */
};

static struct dti_reader *open_pipes_flags(unsigned int n, const struct wbuf *data,
					   size_t chunk, int *fds, unsigned int flags);

/* @src opened with @flags besides the tests' own */
static struct dti_reader *src_open(const struct src *src, unsigned int flags)
{
	const void *p;

	if (src->dir)
		return dti_open_dir(src->dir, open_flags | flags);
	if (src->mem) {
		p = src->mem->p;
		return dti_open_mem(&p, &src->mem->len, 1,
				    (open_flags & DTI_OPEN_STRICT) | flags);
	}
	if (src->pipes)
		return open_pipes_flags(2, src->pipes, src->chunk, src->fds, flags);
	return dti_open_files(src->paths, src->n, open_flags | flags);
}

/* What a reader printed, notices in between as "N: ...", and how it ended */
struct printed {
	char *out;
	size_t len;
	int rc, calls;
	char err[512];
	unsigned long damage, warning;
};

static void fputs_notice(const struct dti_notice *n, void *arg);
static int sample_fmt(FILE *out, const struct dti_rec *rec, void *arg);

/*
 * A filter of levels and CPUs as the tests state it: @cpus, the list
 * dti_filter_cpus() parses (NULL: all), and @mask, the same as bits
 */
struct fspec {
	const char *cpus;
	uint64_t mask;
	int from, to;
};

/* Whether @rec passes @fs, as struct fspec states it; formats always do */
static bool filter_pass(const struct fspec *fs, const struct dti_rec *rec)
{
	int lo, hi;

	if (!fs || rec->flags & DTI_REC_FORMAT)
		return true;
	lo = fs->from < fs->to ? fs->from : fs->to;
	hi = fs->from < fs->to ? fs->to : fs->from;
	return (!fs->cpus || (rec->cpu < 64 && fs->mask >> rec->cpu & 1)) &&
	       rec->level >= lo && rec->level <= hi;
}

/* fputs_notice() with the notices of lost records of CPUs a filter leaves out dropped */
struct fnotice {
	FILE *f;
	const struct fspec *fs;
};

static void fputs_notice_of(const struct dti_notice *n, void *arg)
{
	const struct fnotice *fn = arg;

	if (fn->fs && fn->fs->cpus &&
	    (n->type == DTI_NOTICE_GAP || n->type == DTI_NOTICE_BACKWARDS ||
	     n->type == DTI_NOTICE_SKIPPED) &&
	    !(n->cpu < 64 && fn->fs->mask >> n->cpu & 1))
		return;
	fputs_notice(n, fn->f);
}

/* @fs as a libdti filter (NULL for none) */
static struct dti_filter *filter_of(const struct fspec *fs)
{
	struct dti_filter *f;

	if (!fs)
		return NULL;
	f = dti_filter_new();
	CHECK(f && dti_filter_levels(f, fs->from, fs->to) == 0);
	if (f && fs->cpus)
		CHECK(dti_filter_cpus(f, fs->cpus) == 0);
	return f;
}

/* How print_with() reads */
enum how {
	HOW_LOOP,	/* dti_next() of all records, filtered by filter_pass() */
	HOW_NEXT,	/* dti_next() with the filter set on the reader */
	HOW_BATCH,	/* dti_print_records() with the filter set on the reader */
};

/*
 * Print @src's records (a reader of its own) as @how says, in calls of
 * @max records for HOW_BATCH; with @formatter sample_fmt() installed.
 * The loops read the format records too (DTI_OPEN_FORMATS), as
 * dti_print_records() prints them in DTI_FMT_RAW.
 */
static void print_with(const struct src *src, enum dti_format fmt,
		       const struct fspec *fs, enum how how, long max, bool formatter,
		       struct printed *o)
{
	struct dti_filter *flt = how == HOW_LOOP ? NULL : filter_of(fs);
	struct dti_reader *r = src_open(src, how == HOW_BATCH ? 0 : DTI_OPEN_FORMATS);
	struct fnotice fn;
	FILE *f;
	struct dti_rec rec;

	memset(o, 0, sizeof(*o));
	f = open_memstream(&o->out, &o->len);
	if (!r) {
		o->rc = -2;
		fclose(f);
		dti_filter_free(flt);
		return;
	}
	fn = (struct fnotice){ f, how == HOW_LOOP ? fs : NULL };
	dti_set_notice_handler(r, fputs_notice_of, &fn);
	if (formatter)
		dti_set_formatter(r, sample_fmt, &o->calls);
	CHECK(dti_set_filter(r, flt) == 0);
	if (how == HOW_BATCH) {
		while ((o->rc = dti_print_records(r, f, fmt, max)) > 0)
			;
	} else {
		while ((o->rc = dti_next(r, &rec)) > 0)
			if ((how == HOW_NEXT || filter_pass(fs, &rec)) &&
			    dti_print(r, f, &rec, fmt) < 0) {
				o->rc = -1;
				break;
			}
	}
	if (o->rc < 0)
		snprintf(o->err, sizeof(o->err), "%s", dti_errmsg());
	o->damage = dti_damage_count(r);
	o->warning = dti_warning_count(r);
	dti_close(r);
	dti_filter_free(flt);
	fclose(f);
}

static bool printed_same(const struct printed *a, const struct printed *b)
{
	return a->len == b->len && !memcmp(a->out, b->out, a->len) &&
	       a->rc == b->rc && !strcmp(a->err, b->err) && a->calls == b->calls &&
	       a->damage == b->damage && a->warning == b->warning;
}

static const struct fspec batch_filters[] = {
	{ NULL, 0, 0, 7 }, { "1", 0x2, 0, 7 }, { "0", 0x1, 4, 6 }, { NULL, 0, 5, 7 },
	{ NULL, 0, 7, 0 }, { "0-1", 0x3, 2, 2 }, { "1,3", 0xa, 0, 7 },
};
static const long batch_max[] = { 0, 1, 3, 4096 };
static unsigned long batch_checked;	/* sources compared */

/*
 * dti_print_records() and dti_next() with a filter set print what the
 * loop of every record filtered by the test prints, notices in the same
 * places (lost records only of the CPUs the filter keeps), and end the
 * same way, in every format, with and without a filter and formatter, in
 * calls of any number of records.
 */
static void batch_check(const struct src *src)
{
	struct printed ref, got;
	unsigned int fmt, fi, mi;
	const struct fspec *fs;
	bool formatter;

	for (fmt = DTI_FMT_TEXT; fmt <= DTI_FMT_RAW; fmt++) {
		for (fi = 0; fi <= sizeof(batch_filters) / sizeof(batch_filters[0]); fi++) {
			fs = fi ? &batch_filters[fi - 1] : NULL;
			formatter = fi == 1 && fmt <= DTI_FMT_TS;
			print_with(src, fmt, fs, HOW_LOOP, -1, formatter, &ref);
			print_with(src, fmt, fs, HOW_NEXT, -1, formatter, &got);
			if (!printed_same(&ref, &got)) {
				CHECK(!"dti_next() with a filter differs from the loop");
				fprintf(stderr, "  format %u filter %u: rc %d/%d, %zu/%zu bytes, err '%s'/'%s'\n",
					fmt, fi, ref.rc, got.rc, ref.len, got.len, ref.err, got.err);
			}
			free(got.out);
			for (mi = 0; mi < sizeof(batch_max) / sizeof(batch_max[0]); mi++) {
				print_with(src, fmt, fs, HOW_BATCH, batch_max[mi],
					   formatter, &got);
				if (!printed_same(&ref, &got)) {
					CHECK(!"dti_print_records() differs from the loop");
					fprintf(stderr, "  format %u filter %u max %ld: rc %d/%d, %zu/%zu bytes, err '%s'/'%s'\n",
						fmt, fi, batch_max[mi], ref.rc, got.rc,
						ref.len, got.len, ref.err, got.err);
				}
				free(got.out);
			}
			free(ref.out);
		}
	}
	batch_checked++;
}

static int read_paths(struct seen *s, enum dti_format fmt, int n,
		      const char **paths)
{
	const struct src src = { .paths = paths, .n = n };
	int ret = drain_close(dti_open_files(paths, n, open_flags), s, fmt);

	if (strncmp(paths[0], "/dev/fd/", 8))	/* not a pipe: read again */
		batch_check(&src);
	return ret;
}

static int read_files(struct seen *s, enum dti_format fmt, int n, ...)
{
	const char *paths[8];
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		paths[i] = tpath(va_arg(ap, const char *));
	va_end(ap);
	return read_paths(s, fmt, n, paths);
}

static int read_dir(struct seen *s, enum dti_format fmt, const char *name)
{
	const struct src src = { .dir = tpath(name) };
	int ret = drain_close(dti_open_dir(src.dir, open_flags), s, fmt);

	batch_check(&src);
	return ret;
}

static int read_mem(struct seen *s, enum dti_format fmt, const struct wbuf *b)
{
	const struct src src = { .mem = b };
	const void *p = b->p;
	int ret = drain_close(dti_open_mem(&p, &b->len, 1, 0), s, fmt);

	batch_check(&src);
	return ret;
}

/*
 * Read @len bytes at @data through a pipe whose writer writes them in
 * packets of @chunks[0], @chunks[1], ... bytes (cyclically): a pipe in
 * packet mode (O_DIRECT) hands each read() one packet, so the reader's
 * refills end exactly there.
 */
static int read_pipe(struct seen *s, enum dti_format fmt, const void *data,
		     size_t len, const size_t *chunks, unsigned int n_chunks)
{
	char path[64];
	const char *p = path;
	size_t off = 0, k;
	unsigned int i = 0;
	int fds[2], ret;
	pid_t pid;

	if (pipe2(fds, O_DIRECT) < 0)
		return -2;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		for (; off < len; off += k, i = (i + 1) % n_chunks) {
			k = chunks[i] < len - off ? chunks[i] : len - off;
			if (write(fds[1], (const char *)data + off, k) != (ssize_t)k)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	ret = read_paths(s, fmt, 1, &p);
	close(fds[0]);
	waitpid(pid, NULL, 0);
	return ret;
}

/* ---- tests ---- */

static void test_merge_two_cpus(void)
{
	struct wbuf a = {0}, b = {0};
	struct seen s;

	wb_sub(&a, 0, 0, 4096, 4, 0, 3, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 100, "a0\n");
	wb_text(&a, 0, 1, 300, "a1");
	wb_text(&a, 0, 2, 500, "a2\n");
	wb_sub(&b, 1, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&b, 1, 0, 200, "b0");
	wb_text(&b, 1, 1, 400, "b1");
	wb_save(&a, "m0");
	wb_save(&b, "m1");
	CHECK(read_files(&s, DTI_FMT_TEXT, 2, "m1", "m0") == 0);
	CHECK_STR(s.out, "a0\nb0\na1\nb1\na2\n");
	CHECK(s.n == 5);
	CHECK_STR(s.notices, "");
}

static void test_equal_timestamps(void)
{
	struct wbuf a = {0}, b = {0}, c = {0};
	struct seen s;

	wb_sub(&a, 0, 0, 4096, 4, 0, 0, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 100, "c0-first");
	wb_text(&a, 0, 1, 100, "c0-second");
	wb_text(&a, 0, 2, 200, "c0-third");
	wb_sub(&b, 1, 0, 4096, 4, 0, 0, DTI_SUBBUF_OPEN);
	wb_text(&b, 1, 0, 100, "c1-first");
	wb_text(&b, 1, 1, 200, "c1-second");
	wb_sub(&c, 2, 0, 4096, 4, 0, 0, DTI_SUBBUF_OPEN);
	wb_text(&c, 2, 0, 50, "c2-first");
	wb_text(&c, 2, 1, 100, "c2-second");
	wb_save(&a, "e0");
	wb_save(&b, "e1");
	wb_save(&c, "e2");
	CHECK(read_files(&s, DTI_FMT_TEXT, 3, "e2", "e0", "e1") == 0);
	CHECK_STR(s.out, "c2-first\nc0-first\nc0-second\nc1-first\nc2-second\n"
		  "c0-third\nc1-second\n");
}

static void test_empty_cpus(void)
{
	struct wbuf a = {0}, b = {0}, c = {0};
	struct seen s;
	char want[300];

	wb_save(&a, "x0");			/* empty file */
	wb_sub(&b, 1, 0, 4096, 4, 0, 0, DTI_SUBBUF_OPEN);	/* header only */
	wb_save(&b, "x1");
	wb_sub(&c, 2, 0, 4096, 4, 0, 1, DTI_SUBBUF_OPEN);
	wb_text(&c, 2, 7, 10, "only");
	wb_save(&c, "x2");
	CHECK(read_files(&s, DTI_FMT_TEXT, 3, "x0", "x1", "x2") == 0);
	CHECK_STR(s.out, "only\n");
	CHECK(read_files(&s, DTI_FMT_TEXT, 2, "x0", "x1") == 0);
	CHECK(s.n == 0);
	/* a CPU's empty file is said (no DTI data), its header-only one is not */
	snprintf(want, sizeof(want), "%s: no DTI data (empty)\n", tpath("x0"));
	CHECK_STR(s.notices, want);
	CHECK(s.warning == 1 && s.damage == 0);
}
static void test_gaps(void)
{
	struct wbuf a = {0}, b = {0};
	struct seen s;

	wb_sub(&a, 0, 0, 4096, 4, 0, 0, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 999, 1, "r999");
	wb_text(&a, 0, 1412, 2, "r1412");
	wb_text(&a, 0, 1413, 3, "r1413");
	wb_sub(&b, 1, 0, 4096, 4, 0, 0, DTI_SUBBUF_OPEN);
	wb_text(&b, 1, 5, 4, "s5");
	wb_text(&b, 1, 3, 5, "s3");
	wb_save(&a, "g0");
	wb_save(&b, "g1");
	CHECK(read_files(&s, DTI_FMT_TEXT, 2, "g0", "g1") == 0);
	CHECK(s.n == 5);
	CHECK(strstr(s.notices, "412 records lost on cpu0 between seq 1000 and 1412\n") != NULL);
	CHECK(strstr(s.notices, "sequence went backwards on cpu1: seq 3 after 5") != NULL);
	CHECK(strstr(s.notices, "cpu1 between") == NULL);
}

/*
 * Replayed records: logged on cpu1, stored in cpu0's buffer with cpu0's
 * sequence numbers.  They are shown as cpu1's and are no gap in cpu0's.
 */
static void test_replayed_records(void)
{
	struct wbuf a = {0};
	struct seen s;

	wb_sub(&a, 0, 0, 4096, 4, 0, 0, DTI_SUBBUF_OPEN);
	log_cpu_next = 1;
	wb_rec(&a, 0, DTI_REC_TEXT | DTI_REC_REPLAYED, 3, 0, 1, "x0", 2);
	wb_rec(&a, 0, DTI_REC_TEXT | DTI_REC_REPLAYED, 3, 1, 2, "x1", 2);
	log_cpu_next = 1;
	wb_rec(&a, 0, DTI_REC_TEXT | DTI_REC_REPLAYED, 3, 2, 3, "x2", 2);
	wb_rec(&a, 0, DTI_REC_TEXT, 3, 3, 4, "x3", 2);
	wb_save(&a, "rp0");
	CHECK(read_files(&s, DTI_FMT_TS, 1, "rp0") == 0);
	CHECK(s.n == 4);
	CHECK(s.notices[0] == '\0');
	CHECK(strstr(s.out, "cpu1 L3 #0 ") != NULL);
	CHECK(strstr(s.out, "cpu0 L3 #1 ") != NULL);
	CHECK(strstr(s.out, "cpu1 L3 #2 ") != NULL);
}

/*
 * A raw copy of a wrapped 4 x 512-byte ring: slots hold sub-buffers 4, 5,
 * 2 and 3.  Closed ones end in padding full of stale records; the open
 * one (5) has stale records after the ones its header counts.
 */
static void raw_sub(struct wbuf *b, uint64_t number, unsigned int nrec,
		    uint32_t state, bool zero_pad)
{
	const uint32_t ss = 512;
	size_t start = b->len, used;
	char text[16];
	unsigned int i;

	/* header first with a placeholder; fixed below */
	wb_sub(b, 0, number, ss, 4, 0, nrec, state);
	for (i = 0; i < nrec; i++) {
		snprintf(text, sizeof(text), "s%llu-%u", (unsigned long long)number, i);
		wb_text(b, 0, number * 100 + i, number * 1000 + i, text);
	}
	used = b->len - start;
	/* padding / unwritten space: stale records or zeros */
	while (b->len - start + 48 <= ss && !zero_pad)
		wb_text(b, 0, 7, 7, "STALE!!");
	wb_zero(b, ss - (b->len - start));
	if (state == DTI_SUBBUF_CLOSED) {
		struct dti_subbuf_info *in = (void *)(b->p + start + sizeof(struct dti_record));

		in->padding = ss - used;
	}
}

/* Slots hold sub-buffers 4, 5, 2 and 3 of a wrapped 4 x 512-byte ring. */
static void wb_ring(struct wbuf *b)
{
	raw_sub(b, 4, 5, DTI_SUBBUF_CLOSED, false);
	raw_sub(b, 5, 2, DTI_SUBBUF_OPEN, false);
	raw_sub(b, 2, 3, DTI_SUBBUF_CLOSED, false);
	raw_sub(b, 3, 4, DTI_SUBBUF_CLOSED, true);
}

/* The text of wb_ring()'s records, oldest first, but sub-buffer @skip's. */
static const char *ring_text(uint64_t skip)
{
	static char want[1024];
	static const unsigned int nrec[] = { 3, 4, 5, 2 };
	unsigned int i, k;
	char line[32];

	want[0] = '\0';
	for (k = 0; k < 4; k++)
		for (i = 0; i < nrec[k] && k + 2 != skip; i++) {
			snprintf(line, sizeof(line), "s%u-%u\n", k + 2, i);
			strcat(want, line);
		}
	return want;
}

static void test_raw_wrapped_ring_with_padding(void)
{
	struct wbuf b = {0};
	struct seen s;

	wb_ring(&b);
	wb_save(&b, "raw0");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "raw0") == 0);
	CHECK_STR(s.out, ring_text(-1));
	CHECK(strstr(s.out, "STALE") == NULL);
	/* seq jumps by sub-buffer in this synthetic ring: reported as gaps */
	CHECK_STR(s.notices, "97 records lost on cpu0 between seq 203 and 300\n"
		  "96 records lost on cpu0 between seq 304 and 400\n"
		  "95 records lost on cpu0 between seq 405 and 500\n");
	CHECK(s.damage == 0 && s.warning == 0);
}

/*
 * Once a ring copy is recognised, a bad slot is skipped and reported,
 * never read as a stream: one flipped bit in one sub-buffer header used
 * to print the stale padding as 21 records.  A sub-buffer is read up to
 * its record count, and a count that disagrees with its padding is damage.
 */
/*
 * wb_ring() with bit @bit flipped in byte @field of the sub-buffer
 * header in slot @slot, read: the output lacks sub-buffer @lost only,
 * and the notices are the damage (@damage, after the file name) and
 * @gaps.
 */
static void check_ring_flip(unsigned int slot, unsigned int field,
			    unsigned int bit, uint64_t lost, const char *damage,
			    const char *gaps)
{
	struct wbuf b = {0};
	struct seen s;
	char want[512];

	wb_ring(&b);
	b.p[slot * 512 + DTI_HDR + field] ^= bit;
	wb_save(&b, "rawbad");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "rawbad") == 0);
	CHECK_STR(s.out, ring_text(lost));
	snprintf(want, sizeof(want), "%s: %s\n%s", tpath("rawbad"), damage, gaps);
	CHECK_STR(s.notices, want);
	CHECK(s.damage == 1);
}

/*
 * Once a ring copy is recognised, a bad slot is skipped and reported,
 * never read as a stream: one flipped bit in one sub-buffer header used
 * to print the stale padding as 21 records.  A sub-buffer is read up to
 * its record count, and a count that disagrees with its padding is damage.
 */
static void test_raw_damaged_slot(void)
{
	struct seen s;
	char want[512];

	/* sub-buffer 2 (slot 2): state 1 -> 3 */
	check_ring_flip(2, 16, 2, 2,
			"corrupt sub-buffer header at offset 1024 of a ring copy: unknown sub-buffer state; that slot (512 bytes) skipped",
			"96 records lost on cpu0 between seq 304 and 400\n"
			"95 records lost on cpu0 between seq 405 and 500\n");
	/* sub-buffer 3 (slot 3): 4 records -> 0 */
	check_ring_flip(3, 12, 4, 3,
			"sub-buffer 3 (offset 1536): its 0 records end at offset 1632, its data at 1824; the rest of sub-buffer 3 skipped",
			"197 records lost on cpu0 between seq 203 and 400\n"
			"95 records lost on cpu0 between seq 405 and 500\n");
	open_flags = DTI_OPEN_STRICT;
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "rawbad") == -1);
	CHECK_STR(s.out, "s2-0\ns2-1\ns2-2\n");
	snprintf(want, sizeof(want),
		 "%s: sub-buffer 3 (offset 1536): its 0 records end at offset 1632, its data at 1824",
		 tpath("rawbad"));
	CHECK_STR(s.err, want);
	open_flags = 0;
}

static void test_raw_unused_subbufs(void)
{
	struct wbuf b = {0};
	struct seen s;

	raw_sub(&b, 0, 2, DTI_SUBBUF_CLOSED, false);
	raw_sub(&b, 1, 1, DTI_SUBBUF_OPEN, false);
	wb_zero(&b, 1024);		/* two never-used sub-buffers */
	wb_save(&b, "raw1");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "raw1") == 0);
	CHECK_STR(s.out, "s0-0\ns0-1\ns1-0\n");
}

static void test_stream_wraparound_and_zero_fill(void)
{
	struct wbuf a = {0};
	struct seen s;

	/* what read() returns after a wrap: oldest sub-buffer is number 9 */
	wb_sub(&a, 0, 9, 256, 4, 40, 2, DTI_SUBBUF_CLOSED);
	wb_text(&a, 0, 500, 10, "w500");
	wb_text(&a, 0, 501, 11, "w501");
	wb_zero(&a, 64);		/* zero-filled padding before the next header */
	wb_sub(&a, 0, 10, 256, 4, 0, 1, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 502, 12, "w502");
	wb_zero(&a, 4096);		/* trailing zero fill */
	wb_save(&a, "z0");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "z0") == 0);
	CHECK_STR(s.out, "w500\nw501\nw502\n");
	CHECK_STR(s.notices, "");
	wb_sub(&a, 0, 0, 256, 4, 0, 1, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 12, "short-tail");
	wb_zero(&a, 16);		/* shorter than a header */
	wb_save(&a, "z1");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "z1") == 0);
	CHECK_STR(s.out, "short-tail\n");
}

/*
 * read() of a trace file gave the start of a sub-buffer while it was
 * written (its header says open) and the rest once it was closed, without
 * the padding: the next header comes before the end an open sub-buffer
 * has, and runs past it.  That is the next sub-buffer, not damage.
 */
static void test_stream_open_then_closed(void)
{
	struct wbuf a = {0};
	struct seen s;

	wb_sub(&a, 0, 0, 256, 4, 0, 1, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 10, "o000");
	wb_text(&a, 0, 1, 11, "o001");	/* read after it closed: ends at 192 */
	wb_sub(&a, 0, 1, 256, 4, 0, 1, DTI_SUBBUF_OPEN);	/* 192 to 288 */
	wb_text(&a, 0, 2, 12, "o002");
	wb_save(&a, "oc");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "oc") == 0);
	CHECK_STR(s.out, "o000\no001\no002\n");
	CHECK_STR(s.notices, "");
}

/* --format raw of a merge is one file of several CPUs: it decodes again. */
static void test_raw_output_roundtrip(void)
{
	struct wbuf a = {0}, b = {0};
	const char *paths[2];
	struct dti_reader *r;
	struct dti_rec rec;
	struct seen s1, s2;
	FILE *f;

	wb_sub(&a, 0, 0, 4096, 4, 0, 3, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 10, 1, "a10");
	wb_text(&a, 0, 11, 3, "a11");
	wb_text(&a, 0, 13, 5, "a13");
	wb_sub(&b, 1, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&b, 1, 0, 2, "b0");
	wb_rec(&b, 1, 0, 4, 1, 4, "\x01\x02", 2);
	wb_save(&a, "ro0");
	wb_save(&b, "ro1");
	CHECK(read_files(&s1, DTI_FMT_TS, 2, "ro0", "ro1") == 0);
	paths[0] = tpath("ro0");
	paths[1] = tpath("ro1");
	r = dti_open_files(paths, 2, 0);
	f = fopen(tpath("merged.raw"), "w");
	while (r && f && dti_next(r, &rec) > 0)
		dti_print(r, f, &rec, DTI_FMT_RAW);
	fclose(f);
	dti_close(r);
	CHECK(read_files(&s2, DTI_FMT_TS, 1, "merged.raw") == 0);
	CHECK_STR(s2.out, s1.out);
	CHECK_STR(s2.notices, "1 records lost on cpu0 between seq 12 and 13\n");
}

/*
 * Read file @name alone into @s: it must print @out and give one notice,
 * damage, "@name: @notice".
 */
static void check_one(struct seen *s, const char *name, const char *out,
		      const char *notice)
{
	char want[1024];

	CHECK(read_files(s, DTI_FMT_TEXT, 1, name) == 0);
	CHECK_STR(s->out, out);
	snprintf(want, sizeof(want), "%s: %s\n", tpath(name), notice);
	CHECK_STR(s->notices, want);
	CHECK(s->damage == 1);
}

/*
 * Read file @name alone, strictly: it fails (@err) with "@name: @what"
 * after printing @out.  Then by default: it prints @out and reports the
 * damage and what it did, "@name: @what; @done".
 */
static void check_strict(const char *name, const char *out, const char *what,
			 const char *done, int err)
{
	struct seen s;
	char want[1024];

	open_flags = DTI_OPEN_STRICT;
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, name) == -1 && s.err_no == err);
	CHECK_STR(s.out, out);
	snprintf(want, sizeof(want), "%s: %s", tpath(name), what);
	CHECK_STR(s.err, want);
	open_flags = 0;
	snprintf(want, sizeof(want), "%s; %s", what, done);
	check_one(&s, name, out, want);
}

/*
 * Record version 2: every extension of a compact record, and the chains
 * of time, sequence number and caller within a sub-buffer and from one
 * sub-buffer to the next (its header's bases), read as the fields they
 * stand for; a skip is a gap like any other.
 */
static void test_compact_chains(void)
{
	static const struct {
		uint64_t seq, ts, caller;
		unsigned int cpu, level;
		uint32_t len;
	} want[] = {
		{ 10, 1000, CBASE + 0x100, 0, 3, 1 },		/* delta +100, CALLER32 */
		{ 11, 950, CBASE + 0x100, 0, 6, 1 },		/* delta -50, the same caller */
		{ 15, 10000000000ull, 0x1234, 0, 4, 1 },	/* SKIP 3, TS64, CALLER64 */
		{ 16, 10000000010ull, CBASE - 0x200, 0, 5, 70000 }, /* LEN32, a negative CALLER32 */
		{ 17, 10000000020ull, CBASE - 0x200, 1, 5, 1 },	/* replayed: logged by cpu1 */
		{ 18, 10000000030ull, 0, 0, 7, 1 },		/* no caller */
		{ 19, 10000000040ull, 0, 0, 2, 1 },		/* the next sub-buffer: same as before */
	};
	static unsigned char big[70000];
	struct wbuf a = {0};
	const char *paths[1];
	struct dti_reader *r;
	struct dti_rec rec;
	struct seen s;
	size_t sub, i;

	sub = wb_csub(&a, 0, 0, 131072, 0, 7, DTI_SUBBUF_OPEN, 10, 900, 0);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER32, 10, 1000, CBASE + 0x100, 0, "a", 1);
	wb_crec(&a, DTI_REC_TEXT, 6 | DTI_CREC_CALLER_SAME, 11, 950, CBASE + 0x100, 0, "b", 1);
	wb_crec(&a, DTI_REC_FORMAT, 0, 0, 0, 0, 0, "\0\0\0\0\0\0\0\0", 8);
	wb_crec(&a, DTI_REC_TEXT, 4 | DTI_CREC_SKIP | DTI_CREC_TS64 | DTI_CREC_CALLER64,
		15, 10000000000ull, 0x1234, 0, "c", 1);
	wb_crec(&a, 0, 5 | DTI_CREC_LEN32 | DTI_CREC_CALLER32, 16, 10000000010ull,
		CBASE - 0x200, 0, big, sizeof(big));
	wb_crec(&a, DTI_REC_TEXT | DTI_REC_REPLAYED, 5 | DTI_CREC_CALLER_SAME, 17,
		10000000020ull, CBASE - 0x200, 1, "r", 1);
	wb_crec(&a, DTI_REC_TEXT, 7, 18, 10000000030ull, 0, 0, "n", 1);
	wb_cclose(&a, sub, 131072);
	wb_csub(&a, 0, 1, 131072, 0, 1, DTI_SUBBUF_OPEN, cw.seq, cw.ts, cw.caller);
	wb_crec(&a, DTI_REC_TEXT, 2 | DTI_CREC_CALLER_SAME, 19, 10000000040ull, 0, 0, "d", 1);
	wb_save(&a, "cc0");

	paths[0] = tpath("cc0");
	r = dti_open_files(paths, 1, 0);
	CHECK(r != NULL);
	memset(&s, 0, sizeof(s));
	if (r)
		dti_set_notice_handler(r, on_notice, &s);
	for (i = 0; r && i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK(dti_next(r, &rec) == 1);
		CHECK(rec.seq == want[i].seq && rec.ts_ns == want[i].ts &&
		      rec.caller == want[i].caller && rec.cpu == want[i].cpu &&
		      rec.buf_cpu == 0 && (unsigned int)rec.level == want[i].level &&
		      rec.len == want[i].len && rec.raw_version == DTI_RECORD_VERSION);
		if (cur_failed)
			printf("record %zu: seq %llu ts %llu caller %llx cpu %u level %d len %zu\n",
			       i, (unsigned long long)rec.seq, (unsigned long long)rec.ts_ns,
			       (unsigned long long)rec.caller, rec.cpu, rec.level, rec.len);
	}
	CHECK(r && dti_next(r, &rec) == 0);
	CHECK(r && dti_damage_count(r) == 0);
	dti_close(r);
	CHECK(strstr(s.notices, "3 records lost on cpu0 between seq 12 and 15\n") != NULL);
}

/*
 * A closed compact sub-buffer whose records do not end where its data
 * does (a length changed) is not read at all, with a notice: its records
 * are lost, as the next sub-buffer's numbers show, and none is invented.
 * Strictly, that is the error.
 */
static void test_compact_damage(void)
{
	struct wbuf a = {0};
	struct seen s;
	size_t sub, rec2;

	sub = wb_csub(&a, 0, 0, 512, 0, 1, DTI_SUBBUF_OPEN, 0, 100, 0);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER32, 0, 105, CBASE, 0, "zero", 4);
	wb_cclose(&a, sub, 512);
	sub = wb_csub(&a, 0, 1, 512, 0, 3, DTI_SUBBUF_OPEN, 1, 105, CBASE);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER_SAME, 1, 110, CBASE, 0, "one", 3);
	rec2 = a.len;
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER_SAME, 2, 120, CBASE, 0, "two", 3);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER_SAME, 3, 130, CBASE, 0, "three", 5);
	wb_cclose(&a, sub, 512);
	((struct dti_crec *)(a.p + rec2))->len = 7;	/* 4 bytes more than it has */
	wb_csub(&a, 0, 2, 512, 0, 1, DTI_SUBBUF_OPEN, 4, 130, CBASE);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER_SAME, 4, 140, CBASE, 0, "four", 4);
	wb_save(&a, "cd0");
	open_flags = DTI_OPEN_STRICT;
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "cd0") == -1 && s.err_no == EBADMSG);
	CHECK_STR(s.out, "zero\n");
	CHECK(strstr(s.err, "cd0: sub-buffer 1 (offset 136): a record runs past its data (record 3 of the 3 it counts, at offset 284); its 3 records are not read") != NULL);
	open_flags = 0;
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "cd0") == 0);
	CHECK_STR(s.out, "zero\nfour\n");
	CHECK(strstr(s.notices, "its 3 records are not read; 40 bytes skipped to the sub-buffer header at offset 296\n") != NULL);
	CHECK(strstr(s.notices, "3 records lost on cpu0 between seq 1 and 4\n") != NULL);
	CHECK(s.damage == 1);
}

/*
 * What reads of a trace file give when a read() stops in the middle of a
 * version-2 sub-buffer: the next one begins with a continuation header
 * (DTI_SUBBUF_CONTINUED) that holds the chains' state.  Read on from the
 * read() before, it changes nothing; read alone, it is where the records
 * start.  A continuation of another sub-buffer than the one being read
 * is a sub-buffer cut short, and said so.
 */
static void test_compact_continued(void)
{
	struct wbuf a = {0}, b = {0}, c = {0};
	const char *paths[1];
	struct dti_reader *r;
	struct dti_rec rec;
	size_t sub, cut;
	struct seen s;

	sub = wb_csub(&a, 0, 0, 1024, 0, 4, DTI_SUBBUF_OPEN, 7, 100, 0);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER32, 7, 110, CBASE + 4, 0, "r0", 2);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER_SAME, 8, 120, CBASE + 4, 0, "r1", 2);
	cut = a.len;
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER_SAME, 9, 130, CBASE + 4, 0, "r2", 2);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER32, 10, 140, CBASE + 8, 0, "r3", 2);
	wb_cclose(&a, sub, 1024);
	wb_csub(&b, 0, 0, 1024, 0, 0, DTI_SUBBUF_CONTINUED, 9, 120, CBASE + 4);
	/* the first read() took the header and r0, r1; the next the rest */
	wb_put(&c, a.p, cut);
	wb_put(&c, b.p, b.len);
	wb_put(&c, a.p + cut, a.len - cut);
	wb_write(&c, "ct0");
	free(c.p);
	memset(&c, 0, sizeof(c));
	wb_put(&c, b.p, b.len);
	wb_put(&c, a.p + cut, a.len - cut);
	wb_save(&c, "ct1");

	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "ct0") == 0);
	CHECK_STR(s.out, "r0\nr1\nr2\nr3\n");
	CHECK_STR(s.notices, "");
	paths[0] = tpath("ct1");
	r = dti_open_files(paths, 1, 0);
	CHECK(r != NULL);
	CHECK(r && dti_next(r, &rec) == 1 && rec.seq == 9 && rec.ts_ns == 130 &&
	      rec.caller == CBASE + 4);
	CHECK(r && dti_next(r, &rec) == 1 && rec.seq == 10 && rec.ts_ns == 140 &&
	      rec.caller == CBASE + 8);
	CHECK(r && dti_next(r, &rec) == 0 && dti_damage_count(r) == 0);
	dti_close(r);

	/* the continuation of sub-buffer 5 where sub-buffer 0 went on */
	memset(&c, 0, sizeof(c));
	wb_put(&c, a.p, cut);
	wb_csub(&c, 0, 5, 1024, 0, 0, DTI_SUBBUF_CONTINUED, 9, 120, CBASE + 4);
	wb_put(&c, a.p + cut, a.len - cut);
	wb_save(&c, "ct2");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "ct2") == 0);
	CHECK_STR(s.out, "r0\nr1\nr2\nr3\n");
	CHECK(strstr(s.notices, "sub-buffer 0 (offset 0) holds 4 records, but the next sub-buffer header comes at offset 148 after 2\n") != NULL);

	/* a length damaged after the continuation: the rest is not read */
	memset(&c, 0, sizeof(c));
	wb_put(&c, a.p, cut);
	wb_put(&c, b.p, b.len);
	wb_put(&c, a.p + cut, a.len - cut);
	((struct dti_crec *)(c.p + cut + b.len))->len += 8;
	wb_save(&c, "ct3");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "ct3") == 0);
	CHECK_STR(s.out, "r0\nr1\n");
	CHECK(strstr(s.notices, "ct3: sub-buffer 0 (offset 0): a record runs past its data (record 4 of the 4 it counts, at offset 288); its last 2 records are not read") != NULL);
	free(a.p);
	free(b.p);
}

/*
 * Compact records as raw output are whole (version-1) records: read back,
 * they are the records read from the compact sub-buffers.
 */
static void test_compact_raw_output(void)
{
	struct wbuf a = {0};
	const char *paths[1];
	struct dti_reader *r;
	struct dti_rec rec;
	struct seen s1, s2;
	size_t sub;
	FILE *f;

	sub = wb_csub(&a, 1, 0, 1024, 0, 3, DTI_SUBBUF_OPEN, 5, 1000, 0);
	wb_crec(&a, DTI_REC_TEXT, 3 | DTI_CREC_CALLER32, 5, 1001, CBASE + 8, 0, "x5", 2);
	wb_crec(&a, 0, 4 | DTI_CREC_CALLER_SAME | DTI_CREC_SKIP, 7, 999, CBASE + 8, 0,
		"\x01\x02\x03", 3);
	wb_crec(&a, DTI_REC_TEXT | DTI_REC_REPLAYED, 6 | DTI_CREC_CALLER64, 8, 2000, 0x42, 0,
		"x8", 2);
	wb_cclose(&a, sub, 1024);
	wb_save(&a, "cr1");
	CHECK(read_files(&s1, DTI_FMT_TS, 1, "cr1") == 0);
	paths[0] = tpath("cr1");
	r = dti_open_files(paths, 1, 0);
	f = fopen(tpath("cr1.raw"), "w");
	while (r && f && dti_next(r, &rec) > 0)
		dti_print(r, f, &rec, DTI_FMT_RAW);
	fclose(f);
	dti_close(r);
	CHECK(read_files(&s2, DTI_FMT_TS, 1, "cr1.raw") == 0);
	CHECK_STR(s2.out, s1.out);
	CHECK(s1.damage == 0 && s2.damage == 0);
}

/*
 * A cut file: with DTI_OPEN_STRICT the reader fails there, as it always
 * did; by default the cut is a damage notice and the stream ends.
 */
static void test_truncated(void)
{
	struct wbuf a = {0};
	char what[100];

	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 10, "complete");
	snprintf(what, sizeof(what),
		 "truncated record at offset %zu: 56 bytes, 46 left in the file", a.len);
	wb_text(&a, 0, 1, 11, "cut short here");
	a.len -= 10;
	wb_save(&a, "t0");
	check_strict("t0", "complete\n", what,
		     "no valid sub-buffer header follows: the rest, 46 bytes, not read",
		     EBADMSG);

	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 10, "complete");
	snprintf(what, sizeof(what),
		 "truncated record header at offset %zu (3 of 40 bytes)", a.len);
	wb_put(&a, "\x1a\xd7\x01", 3);
	wb_save(&a, "t1");
	check_strict("t1", "complete\n", what,
		     "no valid sub-buffer header follows: the rest, 3 bytes, not read",
		     EBADMSG);
}

/* A closed sub-buffer that ends before the records its header counts. */
static void test_short_subbuf(void)
{
	struct wbuf a = {0};
	struct seen s;

	wb_cpu(&a, 0, 2, 5);
	a.len = 96 + 3 * 48;		/* 3 of sub-buffer 0's 5 records */
	wb_save(&a, "sh0");
	check_one(&s, "sh0", "a00\na01\na02\n",
		  "sub-buffer 0 (offset 0) holds 5 records, but the file ends at offset 240 after 3");
}

/* One corrupt header of each kind; strict mode fails with today's messages. */
static void test_corrupt(void)
{
	static const char *const want_notice[] = {
		"corrupt data at offset 144: bad magic (not DTI data); 64 bytes skipped to the sub-buffer header at offset 208",
		"corrupt data at offset 96: impossible header or payload length; 112 bytes skipped to the sub-buffer header at offset 208",
		"record version 3 at offset 96 is not supported (this reader knows versions 1 and 2); 112 bytes skipped to the sub-buffer header at offset 208",
		"corrupt data at offset 112: not a sub-buffer header, after zero fill; 96 bytes skipped to the sub-buffer header at offset 208",
	};
	static const char *const want_err[] = {
		"corrupt data at offset 144: bad magic (not DTI data)",
		"corrupt data at offset 96: impossible header or payload length",
		"record version 3 at offset 96 is not supported (this reader knows versions 1 and 2)",
		"corrupt data at offset 112: not a sub-buffer header, after zero fill",
	};
	struct wbuf a = {0};
	struct seen s;
	char name[8], want[300];
	unsigned int k;
	size_t off;

	for (k = 0; k < 4; k++) {
		wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
		if (k == 0)
			wb_text(&a, 0, 0, 10, "good");
		if (k == 3)
			wb_zero(&a, 16);
		off = a.len;
		wb_text(&a, 0, 1, 11, "damaged");
		if (k == 0)
			a.p[off] ^= 0x55;
		if (k == 1)
			((struct dti_record *)(a.p + off))->len = 0x7fffffff;
		if (k == 2)
			((struct dti_record *)(a.p + off))->version = 3;
		wb_zero(&a, 208 - a.len);
		wb_sub(&a, 0, 1, 4096, 4, 0, 1, DTI_SUBBUF_OPEN);
		wb_text(&a, 0, 2, 12, "after");
		snprintf(name, sizeof(name), "c%u", k);
		wb_save(&a, name);

		open_flags = DTI_OPEN_STRICT;
		CHECK(read_files(&s, DTI_FMT_TEXT, 1, name) == -1);
		CHECK(s.err_no == (k == 2 ? EPROTO : EBADMSG));
		snprintf(want, sizeof(want), "%s: %s", tpath(name), want_err[k]);
		CHECK_STR(s.err, want);
		open_flags = 0;
		CHECK(read_files(&s, DTI_FMT_TEXT, 1, name) == 0);
		CHECK_STR(s.out, k ? "after\n" : "good\nafter\n");
		snprintf(want, sizeof(want), "%s: %s\n", tpath(name), want_notice[k]);
		CHECK(!strncmp(s.notices, want, strlen(want)));
		CHECK(s.damage == 1);
	}
}

/*
 * Read "two0" and "two1", wb_cpu() files of cpu0 and cpu1 with 4 x 10
 * records, once cpu0's is cut to @cut bytes (0: not) and its byte at
 * @flip (-1: none) is flipped.
 */
static int read_two_cpus(struct seen *s, size_t cut, long flip)
{
	struct wbuf a = {0}, b = {0};

	wb_cpu(&a, 0, 4, 10);
	wb_cpu(&b, 1, 4, 10);
	if (cut)
		a.len = cut;
	if (flip >= 0)
		a.p[flip] ^= 0xff;
	wb_save(&a, "two0");
	wb_save(&b, "two1");
	return read_files(s, DTI_FMT_TEXT, 2, "two0", "two1");
}

/* One damaged CPU file does not stop the merge: a file cut at 1000 bytes. */
static void test_cut_file_keeps_other_cpus(void)
{
	struct seen s;
	char want[300];

	/* the cut is in record a16 (960..1008) */
	CHECK(read_two_cpus(&s, 1000, -1) == 0);
	CHECK(s.n == 56);		/* a00..a15 and all of b00..b39 */
	CHECK(strstr(s.out, "a15\nb15\nb16\n") && strstr(s.out, "b38\nb39\n"));
	CHECK(!strstr(s.out, "a16"));
	snprintf(want, sizeof(want),
		 "%s: truncated record at offset 960: 48 bytes, 40 left in the file; no valid sub-buffer header follows: the rest, 40 bytes, not read\n",
		 tpath("two0"));
	CHECK_STR(s.notices, want);
	CHECK(s.damage == 1 && s.warning == 0);
	/* strict: today's behaviour, the merge stops at the cut */
	open_flags = DTI_OPEN_STRICT;
	CHECK(read_files(&s, DTI_FMT_TEXT, 2, "two0", "two1") == -1);
	CHECK(s.n == 31 && s.err_no == EBADMSG);
	open_flags = 0;
}

/*
 * One bad byte in a record header of trace0: the rest of its sub-buffer
 * is skipped up to the next sub-buffer header; trace1 is all there.
 */
static void test_bad_byte_resyncs(void)
{
	struct seen s;
	char want[400];

	/* the magic of record a02, at offset 192 */
	CHECK(read_two_cpus(&s, 0, 96 + 2 * 48) == 0);
	CHECK(s.n == 72);		/* a00, a01, a10..a39, b00..b39 */
	CHECK(strstr(s.out, "a00\nb00\na01\nb01\nb02\n") && strstr(s.out, "b09\na10\nb10\n"));
	CHECK(!strstr(s.out, "a02") && !strstr(s.out, "a09"));
	snprintf(want, sizeof(want),
		 "%s: corrupt data at offset 192: bad magic (not DTI data); 384 bytes skipped to the sub-buffer header at offset 576\n"
		 "8 records lost on cpu0 between seq 2 and 10\n", tpath("two0"));
	CHECK_STR(s.notices, want);
	CHECK(s.damage == 1);
}

/*
 * Every header field is checked: a flipped log_cpu, unknown flags, a
 * record of another CPU are skipped as damage; a level out of range is a
 * warning and the record is returned; a long record with the sub-buffer
 * flag is damage, not a sub-buffer header that swallows a record.
 */
static void test_header_fields(void)
{
	struct wbuf a = {0};
	struct seen s;
	char want[2048];
	const char *f = tpath("hf1");

	wb_sub(&a, 1, 0, 1024, 4, 0, 0, DTI_SUBBUF_OPEN);
	wb_text(&a, 1, 0, 10, "r0");				/* 96 */
	log_cpu_next = 16777217;
	wb_text(&a, 1, 1, 11, "r1 log_cpu flipped");		/* 144 */
	wb_rec(&a, 1, DTI_REC_TEXT | 0x40, 3, 2, 12, "r2 flags", 8);	/* 208 */
	wb_rec(&a, 1, DTI_REC_TEXT, 9, 3, 13, "r3 level 9", 10);	/* 256 */
	wb_rec(&a, 1, DTI_REC_TEXT, -3, 4, 14, "r4 level -3", 11);	/* 312 */
	wb_rec(&a, 1, DTI_REC_TEXT | DTI_REC_SUBBUF, 3, 5, 15,	/* 368 */
	       "r5 a long record with the sub-buffer flag, not a header", 55);
	wb_text(&a, 1, 6, 16, "r6 lost with r5's sub-buffer");	/* 464 */
	wb_sub(&a, 1, 1, 1024, 4, 0, 0, DTI_SUBBUF_OPEN);	/* 536 */
	wb_text(&a, 2, 7, 17, "r7 of cpu2");			/* 632 */
	wb_text(&a, 1, 8, 18, "r8");				/* 688 */
	wb_save(&a, "hf1");
	CHECK(read_files(&s, DTI_FMT_TS, 1, "hf1") == 0);
	CHECK_STR(s.out, "[    0.000000010] cpu1 L3 #0 0xffffffffc0001234: r0\n"
		  "[    0.000000013] cpu1 L9 #3 0xffffffffc0001234: r3 level 9\n"
		  "[    0.000000014] cpu1 L-3 #4 0xffffffffc0001234: r4 level -3\n"
		  "[    0.000000018] cpu1 L3 #8 0xffffffffc0001234: r8\n");
	snprintf(want, sizeof(want),
		 "%s: corrupt data at offset 144: logging CPU 16777217 in a record of cpu1 (not a replayed one); record skipped\n"
		 "%s: corrupt data at offset 208: event of 8 bytes with flags 0x41; record skipped\n"
		 "%s: record at offset 256 (cpu1 seq 3) has level 9, not 0..7\n"
		 "2 records lost on cpu1 between seq 1 and 3\n"
		 "%s: record at offset 312 (cpu1 seq 4) has level -3, not 0..7\n"
		 "%s: corrupt sub-buffer header at offset 368: record with the sub-buffer flag but not a sub-buffer header's length; 168 bytes skipped to the sub-buffer header at offset 536\n"
		 "%s: corrupt data at offset 632: record of cpu2 in a sub-buffer of cpu1; record skipped\n"
		 "3 records lost on cpu1 between seq 5 and 8\n", f, f, f, f, f, f);
	CHECK_STR(s.notices, want);
	CHECK(s.damage == 4 && s.warning == 2);
}

/* A directory with trace0 and trace007, or a file given twice: merged once. */
static void test_duplicate_cpus(void)
{
	struct wbuf a = {0}, b = {0};
	struct seen s;
	char want[512];

	mkdir(tpath("dup"), 0755);
	wb_cpu(&a, 0, 1, 3);
	wb_write(&a, "dup/trace0");
	wb_save(&a, "dup/trace007");
	wb_cpu(&b, 1, 1, 3);
	wb_save(&b, "dup/trace1");
	CHECK(read_dir(&s, DTI_FMT_TEXT, "dup") == 0);
	CHECK_STR(s.out, "a00\nb00\na01\nb01\na02\nb02\n");
	snprintf(want, sizeof(want),
		 "%s/trace007: records of cpu0, which %s/trace0 holds too, skipped: a CPU's records are merged once\n",
		 tpath("dup"), tpath("dup"));
	CHECK_STR(s.notices, want);
	CHECK(s.warning == 1 && s.damage == 0);
	CHECK(read_files(&s, DTI_FMT_TEXT, 2, "dup/trace1", "dup/trace1") == 0);
	CHECK_STR(s.out, "b00\nb01\nb02\n");
	CHECK(s.warning == 1);
}

/* Files of two channels: their sub-buffer headers name them. */
static void test_mixed_channels(void)
{
	struct wbuf a = {0}, b = {0};
	struct seen s;
	char want[512];

	sub_name = "alpha";
	wb_cpu(&a, 0, 2, 2);
	sub_name = "beta";
	wb_cpu(&b, 1, 2, 2);
	sub_name = "test";
	wb_save(&a, "mix0");
	wb_save(&b, "mix1");
	CHECK(read_files(&s, DTI_FMT_TEXT, 2, "mix0", "mix1") == 0);
	CHECK(s.n == 8);
	snprintf(want, sizeof(want),
		 "%s: sub-buffers of channel beta (8 x 1024 bytes), but %s has channel alpha (8 x 1024 bytes): files of different channels or snapshots merged\n",
		 tpath("mix1"), tpath("mix0"));
	CHECK_STR(s.notices, want);
	CHECK(s.warning == 1);
}

/* Empty and all-zero files are said to hold no DTI data; garbage is damage. */
static void test_no_dti_data(void)
{
	struct wbuf a = {0}, b = {0}, c = {0}, d = {0};
	struct seen s;
	char want[800];
	unsigned int i;

	wb_save(&a, "nd0");
	wb_zero(&b, 4096);
	wb_save(&b, "nd1");
	for (i = 0; i < 1000; i++)
		wb_put(&c, "garbage!", 8);
	wb_save(&c, "nd2");
	wb_cpu(&d, 3, 1, 2);
	wb_save(&d, "nd3");
	CHECK(read_files(&s, DTI_FMT_TEXT, 4, "nd0", "nd1", "nd2", "nd3") == 0);
	CHECK_STR(s.out, "d00\nd01\n");
	snprintf(want, sizeof(want),
		 "%s: no DTI data (empty)\n%s: no DTI data (only zero bytes)\n"
		 "%s: corrupt data at offset 0: bad magic (not DTI data); no valid sub-buffer header follows: the rest, 8000 bytes, not read\n",
		 tpath("nd0"), tpath("nd1"), tpath("nd2"));
	CHECK_STR(s.notices, want);
	CHECK(s.warning == 2 && s.damage == 1);
}

/*
 * A snapshot directory used twice: a trace file of a CPU its stats do not
 * list is not merged, records newer than its stats and sub-buffers of
 * another channel than its info are warned about.
 */
static void test_reused_snapshot_dir(void)
{
	struct wbuf a = {0}, b = {0}, c = {0};
	struct seen s;
	char want[2048], d[300];

	snprintf(d, sizeof(d), "%s", tpath("reuse"));
	mkdir(d, 0755);
	write_file(tpath("reuse/info"), "name: test\nlevel: 3\nmode: overwrite\n"
		   "subbuf_size: 1024\nn_subbufs: 8\nrecord_version: 1\n");
	write_file(tpath("reuse/stats"),
		   "cpu    written  overwritten     next_seq\n"
		   "0           10            0           10\n"
		   "1           10            0            5\n"
		   "total       20            0           15\n");
	wb_cpu(&a, 0, 1, 10);
	wb_save(&a, "reuse/trace0");
	sub_name = "other";
	wb_cpu(&b, 1, 1, 10);
	sub_name = "test";
	wb_save(&b, "reuse/trace1");
	wb_cpu(&c, 5, 1, 3);
	wb_save(&c, "reuse/trace5");
	CHECK(read_dir(&s, DTI_FMT_TEXT, "reuse") == 0);
	CHECK(s.n == 20 && !strstr(s.out, "f0"));
	snprintf(want, sizeof(want),
		 "%s/trace5: not merged: the snapshot's stats list only cpu0..cpu1 (a file of an earlier snapshot? the directory was reused)\n"
		 "%s/trace1: sub-buffers of channel other (8 x 1024 bytes), but the snapshot's info file has channel test (8 x 1024 bytes): files of different channels or snapshots merged\n"
		 "%s/trace1: cpu1 record seq 5 at offset 336 is not older than the snapshot's stats (next_seq 5): a file of a later snapshot? (the directory was reused)\n",
		 d, d, d);
	CHECK_STR(s.notices, want);
	CHECK(s.warning == 3 && s.damage == 0);
}

/*
 * A pipe delivers what the reader reads in pieces of any size.  A run of
 * zero bytes that ends at a read() boundary not on 8 bytes, followed by a
 * bad byte, once made the reader read before its buffer.  Pipe, file and
 * memory give the same records and notices for the same bytes.
 */
static void test_pipe_chunks(void)
{
	static const size_t chunks[][3] = {
		{ 253, 3, 1000 }, { 1, 1, 1 }, { 7, 7, 7 }, { 13, 5, 61 },
		{ 4096, 4096, 4096 },
	};
	struct wbuf a = {0}, b = {0};
	struct seen f, m, p;
	unsigned int i;

	wb_sub(&a, 0, 0, 512, 4, 0, 0, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 1, "p0");
	wb_text(&a, 0, 1, 2, "p1");
	wb_zero(&a, 61);			/* zeros up to 253 */
	wb_put(&a, "\x55\0\0", 3);		/* a bad byte at 253 */
	wb_sub(&a, 0, 1, 512, 4, 0, 0, DTI_SUBBUF_OPEN);	/* at 256 */
	wb_text(&a, 0, 2, 3, "p2");
	wb_text(&a, 0, 3, 4, "p3");
	wb_write(&a, "pipe0");
	check_one(&f, "pipe0", "p0\np1\np2\np3\n",
		  "corrupt data at offset 248: bad magic (not DTI data); 8 bytes skipped to the sub-buffer header at offset 256");
	CHECK(read_mem(&m, DTI_FMT_TEXT, &a) == 0);
	CHECK_STR(m.out, f.out);
	CHECK_STR(m.sig, f.sig);
	wb_cpu(&b, 1, 5, 7);			/* an undamaged stream too */
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		CHECK(read_pipe(&p, DTI_FMT_TEXT, a.p, a.len, chunks[i], 3) == 0);
		CHECK_STR(p.out, f.out);
		CHECK_STR(p.sig, f.sig);
		CHECK(p.damage == 1);
		CHECK(read_pipe(&p, DTI_FMT_TEXT, b.p, b.len, chunks[i], 3) == 0);
		CHECK(p.n == 35 && !p.notices[0]);
	}
	free(a.p);
	free(b.p);
}

/* JSON passes valid UTF-8 through and escapes only the bytes that are not. */
#define UTF8_TEXT	"r\xc3\xa9sum\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 | \xff \xc0\x80 " \
	"\xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82|\x7f\x1b\""
#define UTF8_JSON	"r\xc3\xa9sum\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 | \\u00ff \\u00c0\\u0080 " \
	"\\u00ed\\u00a0\\u0080 \\u00f4\\u0090\\u0080\\u0080 \\u00e2\\u0082|" \
	"\\u007f\\u001b\\\""
static void test_json_utf8(void)
{
	static const char text[] = UTF8_TEXT;
	struct wbuf a = {0};
	struct seen s;

	wb_sub(&a, 0, 0, 4096, 4, 0, 1, DTI_SUBBUF_OPEN);
	wb_rec(&a, 0, DTI_REC_TEXT, 6, 0, 1, text, sizeof(text) - 1);
	wb_save(&a, "utf0");
	CHECK(read_files(&s, DTI_FMT_JSON, 1, "utf0") == 0);
	CHECK_STR(s.out, "{\"ts_ns\":\"1\",\"channel\":\"" SUB_NAME "\",\"cpu\":0,\"level\":6,"
		  "\"seq\":\"0\",\"flags\":1,"
		  "\"caller\":\"0xffffffffc0001234\",\"text\":\"" UTF8_JSON "\"}\n");
}

/*
 * Output is collected and written in blocks: a payload larger than the
 * reader's buffer comes out whole in every format, and notices come
 * after the records printed before them.
 */
static void test_big_payload_and_order(void)
{
	const size_t len = 300000;
	unsigned char *bin = malloc(len);
	char *want = malloc(3 * len + 64), *p, *out = NULL;
	struct wbuf a = {0};
	const char *path = tpath("big1");
	struct dti_reader *r;
	struct dti_rec rec;
	size_t i, size = 0;
	FILE *f;

	for (i = 0; i < len; i++)
		bin[i] = i * 13 + (i >> 8);
	wb_sub(&a, 1, 0, 1 << 20, 2, 0, 3, DTI_SUBBUF_OPEN);
	wb_text(&a, 1, 0, 1, "before");
	wb_rec(&a, 1, 0, 6, 5, 2, bin, len);
	wb_text(&a, 1, 6, 3, "after");
	wb_save(&a, "big1");
	for (int fmt = DTI_FMT_TEXT; fmt <= DTI_FMT_JSON; fmt += DTI_FMT_JSON - DTI_FMT_TEXT) {
		f = open_memstream(&out, &size);
		r = dti_open_files(&path, 1, 0);
		CHECK(r != NULL);
		if (!r)
			break;
		dti_set_notice_handler(r, fputs_notice, f);
		while (dti_next(r, &rec) > 0)
			CHECK(dti_print(r, f, &rec, fmt) == 0);
		dti_close(r);
		fclose(f);
		p = want;
		if (fmt == DTI_FMT_TEXT) {
			p += sprintf(p, "before\nN: 4 records lost on cpu1 between seq 1 and 5\n");
			for (i = 0; i < len; i++)
				p += sprintf(p, i ? " %02x" : "%02x", bin[i]);
			strcpy(p, "\nafter\n");
			CHECK(!strcmp(out, want));
		} else {
			for (i = 0; i < len; i++)
				p += sprintf(p, "%02x", bin[i]);
			CHECK(strstr(out, want) != NULL);
			CHECK(strstr(out, "\"text\":\"before\"}\nN: 4 records lost") != NULL);
			CHECK(size > 2 * len && !strcmp(out + size - 2, "}\n"));
		}
		free(out);
		out = NULL;
	}
	free(bin);
	free(want);
}

static void test_byte_swapped(void)
{
	struct wbuf a = {0}, b = {0};
	struct seen s1, s2;
	unsigned char bin[] = { 1, 2, 3, 0xff };

	swap_next = true;
	wb_sub(&a, 1, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&a, 1, 41, 0x1122334455ull, "swapped");
	wb_rec(&a, 1, 0, 5, 42, 0x1122334456ull, bin, sizeof(bin));
	swap_next = false;
	wb_save(&a, "sw1");
	wb_sub(&b, 1, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&b, 1, 41, 0x1122334455ull, "swapped");
	wb_rec(&b, 1, 0, 5, 42, 0x1122334456ull, bin, sizeof(bin));
	wb_save(&b, "ns1");
	CHECK(read_files(&s1, DTI_FMT_TS, 1, "sw1") == 0);
	CHECK(read_files(&s2, DTI_FMT_TS, 1, "ns1") == 0);
	CHECK_STR(s1.out, s2.out);
	CHECK_STR(s2.out, "[   73.588229205] cpu1 L3 #41 0xffffffffc0001234: swapped\n"
		  "[   73.588229206] cpu1 L5 #42 0xffffffffc0001234: 01 02 03 ff\n");
}

static void test_formats(void)
{
	struct wbuf a = {0};
	struct seen s;
	unsigned char bin[70];
	char want[1024] = "", *p = want;
	unsigned int i;

	for (i = 0; i < sizeof(bin); i++)
		bin[i] = i * 7;
	wb_sub(&a, 0, 0, 4096, 4, 0, 4, DTI_SUBBUF_OPEN);
	wb_rec(&a, 0, 0, 7, 0, 1, bin, sizeof(bin));
	wb_rec(&a, 0, 0, 7, 1, 2, "", 0);
	wb_text(&a, 0, 2, 3, "");
	wb_rec(&a, 0, DTI_REC_TEXT | DTI_REC_TRUNCATED, 2, 3, 4, "q\"\\\x01", 4);
	wb_save(&a, "f0");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "f0") == 0);
	for (i = 0; i < sizeof(bin); i++)
		p += sprintf(p, i ? " %02x" : "%02x", bin[i]);
	strcat(want, "\n\n\nq\"\\\x01\n");
	CHECK_STR(s.out, want);
	CHECK(read_files(&s, DTI_FMT_JSON, 1, "f0") == 0);
	CHECK(strstr(s.out, "{\"ts_ns\":\"4\",\"channel\":\"" SUB_NAME "\",\"cpu\":0,\"level\":2,"
		     "\"seq\":\"3\",\"flags\":3,"
		     "\"caller\":\"0xffffffffc0001234\",\"text\":\"q\\\"\\\\\\u0001\"}\n") != NULL);
	CHECK(strstr(s.out, "\"data\":\"00070e15") != NULL);
	CHECK(read_files(&s, DTI_FMT_HEX, 1, "f0") == 0);
	CHECK(strstr(s.out, "[    0.000000003] cpu0 L3 #2 0xffffffffc0001234: \n") != NULL);
	CHECK(dti_format_parse("ts") == DTI_FMT_TS);
	CHECK(dti_format_parse("xml") == -1 && errno == EINVAL);
}

static int sample_fmt(FILE *out, const struct dti_rec *rec, void *arg)
{
	(*(int *)arg)++;
	if (rec->len != 4)
		return 0;
	fprintf(out, "u32=%u", *(const unsigned int *)rec->payload);
	return 1;
}

static void test_formatter_callback(void)
{
	struct wbuf a = {0};
	struct dti_reader *r;
	struct seen s;
	const char *path;
	unsigned int v = 77;
	int calls = 0;

	wb_sub(&a, 0, 0, 4096, 4, 0, 3, DTI_SUBBUF_OPEN);
	wb_rec(&a, 0, 0, 7, 0, 1, &v, 4);
	wb_rec(&a, 0, 0, 7, 1, 2, "ab", 2);
	wb_text(&a, 0, 2, 3, "text");
	wb_save(&a, "fc0");
	path = tpath("fc0");
	r = dti_open_files(&path, 1, 0);
	CHECK(r != NULL);
	if (!r)
		return;
	dti_set_formatter(r, sample_fmt, &calls);
	drain(r, &s, DTI_FMT_TEXT);
	dti_close(r);
	CHECK_STR(s.out, "u32=77\n61 62\ntext\n");
	CHECK(calls == 2);
}

static void test_many_records_stream(void)
{
	struct wbuf a = {0}, b = {0};
	struct seen *s = malloc(sizeof(*s));
	const char *paths[2];
	struct dti_reader *r;
	struct dti_rec rec;
	char text[64];
	unsigned int i, n = 0, sub = 0;
	uint64_t last = 0;
	bool ordered = true;

	/* 3 MB per CPU: many buffer refills, records of varying size */
	for (i = 0; i < 20000; i++) {
		if (i % 100 == 0)
			wb_sub(&a, 0, sub, 8192, 8, 0, 100, DTI_SUBBUF_CLOSED),
			wb_sub(&b, 1, sub++, 8192, 8, 0, 100, DTI_SUBBUF_CLOSED);
		snprintf(text, sizeof(text), "rec %u %.*s", i, (int)(i % 50), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		wb_text(&a, 0, i, 2 * i, text);
		wb_text(&b, 1, i, 2 * i + 1, text);
	}
	wb_save(&a, "big0");
	wb_save(&b, "big1");
	paths[0] = tpath("big0");
	paths[1] = tpath("big1");
	r = dti_open_files(paths, 2, 0);
	CHECK(r != NULL);
	while (r && dti_next(r, &rec) > 0) {
		if (n && rec.ts_ns != last + 1)
			ordered = false;
		last = rec.ts_ns;
		n++;
	}
	CHECK(n == 40000);
	CHECK(ordered);
	dti_close(r);
	free(s);
}

/* ---- runs, byte order and output blocks: the reader's fast paths ---- */

static uint32_t rnd_state = 1;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

struct run_rec {
	uint64_t ts;
	unsigned int cpu, i;
};

static int cmp_run_rec(const void *a, const void *b)
{
	const struct run_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/*
 * CPU @cpu's stream for test_runs(): @n records in closed sub-buffers of
 * @ss bytes (the last one open), payloads of 0..299 bytes, text or not.
 * Times mostly grow by 10, now and then by up to 2000, so that CPUs take
 * turns in runs of any length and meet at equal times; every fifth
 * record has a level of 3..6, not 6.  cpu0 loses 2
 * records before its record 700; cpu1's record 900 is a replayed one and
 * its record 1100 has level 9.  Appends to @recs, @nrec.
 */
static void wb_run_cpu(struct wbuf *b, unsigned int cpu, unsigned int n,
		       uint32_t ss, struct run_rec *recs, unsigned int *nrec)
{
	struct wbuf sub = {0};
	unsigned char pay[300];
	unsigned int i, j, k = 0, in_sub = 0, flags;
	uint64_t ts = 1000, seq = 0;
	uint32_t len;
	int level;

	for (i = 0; i < n; i++) {
		len = rnd() % 300;
		flags = rnd() % 3 ? 0 : DTI_REC_TEXT;
		level = i % 5 ? 6 : 3 + i % 4;	/* for filters */
		if (sub.len + DTI_RECORD_SIZE(len) > ss - DTI_SUBBUF_HEADER_SIZE_V1) {
			wb_sub(b, cpu, k++, ss, 8, ss - DTI_SUBBUF_HEADER_SIZE_V1 - sub.len,
			       in_sub, DTI_SUBBUF_CLOSED);
			wb_put(b, sub.p, sub.len);
			sub.len = 0;
			in_sub = 0;
		}
		ts += rnd() % 8 ? 10 : 10 * (1 + rnd() % 200);
		for (j = 0; j < len; j++)
			pay[j] = flags ? 'a' + (i + j) % 26 : (unsigned char)(i * 7 + j);
		if (cpu == 0 && i == 700)
			seq += 2;
		if (cpu == 1 && i == 900) {
			log_cpu_next = 0;
			flags |= DTI_REC_REPLAYED;
		}
		if (cpu == 1 && i == 1100)
			level = 9;
		wb_rec(&sub, cpu, flags, level, seq++, ts, pay, len);
		in_sub++;
		recs[(*nrec)++] = (struct run_rec){ ts, cpu, i };
	}
	wb_sub(b, cpu, k, ss, 8, 0, in_sub, DTI_SUBBUF_OPEN);
	wb_put(b, sub.p, sub.len);
	free(sub.p);
}

/* Every record of @r in @fmt into a string, and with @notices those. */
static char *print_all(struct dti_reader *r, enum dti_format fmt, size_t *size,
		       bool notices)
{
	struct dti_rec rec;
	char *out = NULL;
	FILE *f = open_memstream(&out, size);

	if (notices)
		dti_set_notice_handler(r, fputs_notice, f);
	while (dti_next(r, &rec) > 0)
		CHECK(dti_print(r, f, &rec, fmt) == 0);
	dti_close(r);
	fclose(f);
	return out;
}

/* Open @n pipes, each written with @data[i] in packets of @chunk bytes. */
static struct dti_reader *open_pipes_flags(unsigned int n, const struct wbuf *data,
					   size_t chunk, int *fds, unsigned int flags)
{
	char names[4][64];
	const char *paths[4];
	unsigned int i;
	int p[2];

	for (i = 0; i < n; i++) {
		if (pipe2(p, O_DIRECT) < 0)
			return NULL;
		if (fork() == 0) {
			size_t off, k;

			close(p[0]);
			for (off = 0; off < data[i].len; off += k) {
				k = chunk < data[i].len - off ? chunk : data[i].len - off;
				if (write(p[1], data[i].p + off, k) != (ssize_t)k)
					_exit(1);
			}
			_exit(0);
		}
		close(p[1]);
		fds[i] = p[0];
		snprintf(names[i], sizeof(names[i]), "/dev/fd/%d", p[0]);
		paths[i] = names[i];
	}
	return dti_open_files(paths, n, flags);
}

static struct dti_reader *open_pipes(unsigned int n, const struct wbuf *data,
				     size_t chunk, int *fds)
{
	return open_pipes_flags(n, data, chunk, fds, 0);
}

static void close_pipes(unsigned int n, const int *fds)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
	while (wait(NULL) > 0)
		;
}

/*
 * Long runs of one CPU's records, which dti_next() takes without a look
 * at the other CPU, ended by every kind of boundary: the other CPU's
 * record (by time, and at equal times by CPU), a gap, a record that is
 * not plain, the end of a sub-buffer's count, a window's end (files of
 * several windows; pipes in odd packets).  The records come in (time,
 * CPU) order, with the same output and notices from files, memory and
 * pipes in every format; raw output is the records as they are.
 */
static void test_runs(void)
{
	static const size_t chunks[] = { 61, 4096, 100000 };
	struct run_rec *recs = malloc(6000 * sizeof(*recs));
	struct wbuf w[2] = { {0}, {0} };
	const char *paths[2];
	const void *bufs[2];
	size_t lens[2], size, size2, raw_len = 0;
	char *ref, *out, *raw = NULL;
	struct dti_reader *r;
	struct dti_rec rec;
	unsigned int n = 0, i = 0, c, fmt;
	bool order = true;
	int fds[2];
	FILE *f;

	wb_run_cpu(&w[0], 0, 3000, 8192, recs, &n);
	wb_run_cpu(&w[1], 1, 3000, 8192, recs, &n);
	CHECK(w[0].len > 3 * (128 << 10));	/* several windows */
	qsort(recs, n, sizeof(*recs), cmp_run_rec);
	wb_write(&w[0], "run0");
	wb_write(&w[1], "run1");
	paths[0] = tpath("run0");
	paths[1] = tpath("run1");
	r = dti_open_files(paths, 2, 0);
	f = open_memstream(&raw, &raw_len);
	while (r && dti_next(r, &rec) > 0) {
		if (i >= n || rec.ts_ns != recs[i].ts ||
		    rec.cpu != (recs[i].cpu == 1 && recs[i].i == 900 ? 0 : recs[i].cpu))
			order = false;
		fwrite(rec.raw, 1, rec.raw_len, f);
		i++;
	}
	fclose(f);
	CHECK(order && i == n);
	dti_close(r);
	for (i = 0; i < 2; i++) {
		bufs[i] = w[i].p;
		lens[i] = w[i].len;
	}
	for (fmt = DTI_FMT_TEXT; fmt <= DTI_FMT_RAW; fmt++) {
		if (fmt != DTI_FMT_RAW) {	/* and the notices in order */
			ref = print_all(dti_open_files(paths, 2, 0), fmt, &size, true);
			CHECK(strstr(ref, "N: 2 records lost on cpu0 between seq 700 and 702\n"));
			CHECK(strstr(ref, "has level 9, not 0..7\n") != NULL);
			free(ref);
		}
		/* sources have other names: without the notices that name them */
		ref = print_all(dti_open_files(paths, 2, 0), fmt, &size, false);
		if (fmt == DTI_FMT_RAW)
			CHECK(size == raw_len && !memcmp(ref, raw, size));
		out = print_all(dti_open_mem(bufs, lens, 2, 0), fmt, &size2, false);
		CHECK(size == size2 && !memcmp(ref, out, size));
		free(out);
		for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			r = open_pipes(2, w, chunks[c], fds);
			CHECK(r != NULL);
			out = r ? print_all(r, fmt, &size2, false) : NULL;
			close_pipes(2, fds);
			CHECK(out && size == size2);
			CHECK(out && !memcmp(ref, out, size));
			free(out);
		}
		free(ref);
	}
	free(raw);
	free(recs);
	free(w[0].p);
	free(w[1].p);
}

/*
 * dti_print_records() on test_runs()' streams: from files and memory
 * (batch_check()), from pipes in odd packets, to a FILE that fails (as
 * the loop: -1, EIO), and an unknown format.
 */
static void test_print_records(void)
{
	static const size_t chunks[] = { 61, 4096 };
	static const struct fspec flt = { "1", 0x2, 0, 6 };
	struct run_rec *recs = malloc(3000 * sizeof(*recs));
	struct wbuf w[2] = { {0}, {0} };
	const char *paths[2] = { tpath("pr0"), tpath("pr1") };
	struct src src = { .paths = paths, .n = 2 };
	struct printed ref, got;
	unsigned long before = batch_checked;
	unsigned int n = 0, c, fmt;
	int fds[2], err_loop, err_batch;
	struct src pipes = { .pipes = w, .fds = fds };
	struct dti_rec rec;
	struct dti_reader *r;
	FILE *full;

	wb_run_cpu(&w[0], 0, 1500, 8192, recs, &n);
	wb_run_cpu(&w[1], 1, 1500, 8192, recs, &n);
	wb_write(&w[0], "pr0");
	wb_write(&w[1], "pr1");
	batch_check(&src);
	src = (struct src){ .mem = &w[1] };
	batch_check(&src);
	CHECK(batch_checked == before + 2);
	for (fmt = DTI_FMT_TEXT; fmt <= DTI_FMT_RAW; fmt++) {
		for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			pipes.chunk = chunks[c];
			print_with(&pipes, fmt, &flt, HOW_LOOP, -1, false, &ref);
			close_pipes(2, fds);
			print_with(&pipes, fmt, &flt, HOW_BATCH, 100, false, &got);
			close_pipes(2, fds);
			CHECK(ref.rc == 0 && ref.len > 0 && printed_same(&ref, &got));
			free(ref.out);
			free(got.out);
		}
	}
	/* a write error: -1 and EIO, from the loop and from the batch alike */
	full = fopen("/dev/full", "w");
	CHECK(full != NULL);
	if (full) {
		setvbuf(full, NULL, _IONBF, 0);
		r = dti_open_files(paths, 2, 0);
		while (r && dti_next(r, &rec) > 0 && dti_print(r, full, &rec, DTI_FMT_TEXT) == 0)
			;
		err_loop = errno;
		dti_close(r);
		r = dti_open_files(paths, 2, 0);
		CHECK(r && dti_print_records(r, full, DTI_FMT_TEXT, 0) == -1);
		err_batch = errno;
		CHECK(err_loop == EIO && err_batch == EIO);
		dti_close(r);
		fclose(full);
	}
	r = dti_open_files(paths, 2, 0);
	CHECK(r && dti_print_records(r, stdout, (enum dti_format)9, 0) == -1 &&
	      errno == EINVAL);
	dti_close(r);
	free(recs);
	free(w[0].p);
	free(w[1].p);
}

/* A record wb_crun_cpu() wrote, as the reader must give it */
struct crun_rec {
	uint64_t ts, seq, caller;
	unsigned int cpu, log_cpu, level;
	uint32_t len;
	unsigned char first;	/* the payload's first byte */
};

static int cmp_crun_rec(const void *a, const void *b)
{
	const struct crun_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* The record count of the version-2 sub-buffer at @start of @b */
static void wb_csub_count(struct wbuf *b, size_t start, uint32_t records)
{
	unsigned char *in = b->p + start + sizeof(struct dti_record);

	memcpy(in + offsetof(struct dti_subbuf_info, records), &records, sizeof(records));
}

/*
 * wb_run_cpu() in version 2: @n compact records of CPU @cpu in closed
 * sub-buffers of @ss bytes (the last one open), with every kind of
 * header: most records of the call site before, some of another (32 or
 * 64 bits), a time now and then too far for a delta, 2 records skipped
 * (cpu0's 700th), one replayed (cpu1's 900th).
 */
static void wb_crun_cpu(struct wbuf *b, unsigned int cpu, unsigned int n,
			uint32_t ss, struct crun_rec *recs, unsigned int *nrec)
{
	unsigned char pay[300];
	uint64_t ts = 1000, seq = 0, caller = CBASE + 0x40, prev_ts;
	unsigned int i, j, k = 0, in_sub = 0, flags, info, log_cpu;
	size_t sub;
	uint32_t len;

	sub = wb_csub(b, cpu, k++, ss, 0, 0, DTI_SUBBUF_OPEN, seq, ts, caller);
	for (i = 0; i < n; i++) {
		len = rnd() % 300;
		flags = rnd() % 3 ? 0 : DTI_REC_TEXT;
		info = i % 5 ? 6 : 3 + i % 4;
		prev_ts = ts;
		ts += rnd() % 8 ? 10 : 10 * (1 + rnd() % 200);
		if (i % 97 == 50)
			ts += 3000000000ull;
		if (ts - prev_ts > INT32_MAX)
			info |= DTI_CREC_TS64;
		switch (rnd() % 8) {
		case 0:
			caller = CBASE + 0x40 * (1 + rnd() % 4);
			info |= DTI_CREC_CALLER32;
			break;
		case 1:
			caller = 0x1000 + rnd() % 16;
			info |= DTI_CREC_CALLER64;
			break;
		default:
			info |= DTI_CREC_CALLER_SAME;
		}
		if (cpu == 0 && i == 700) {
			seq += 2;
			info |= DTI_CREC_SKIP;
		}
		log_cpu = cpu;
		if (cpu == 1 && i == 900) {
			flags |= DTI_REC_REPLAYED;
			log_cpu = 0;
		}
		if (b->len - sub + DTI_CREC_SIZE(dti_crec_hdr_size(info, flags), len) > ss) {
			wb_csub_count(b, sub, in_sub);
			wb_cclose(b, sub, ss);
			sub = wb_csub(b, cpu, k++, ss, 0, 0, DTI_SUBBUF_OPEN,
				      cw.seq, cw.ts, cw.caller);
			in_sub = 0;
		}
		for (j = 0; j < len; j++)
			pay[j] = flags & DTI_REC_TEXT ? 'a' + (i + j) % 26 :
				 (unsigned char)(i * 7 + j);
		wb_crec(b, flags, info, seq, ts, caller, log_cpu, pay, len);
		recs[(*nrec)++] = (struct crun_rec){ ts, seq, caller, cpu, log_cpu,
						     info & DTI_CREC_LEVEL, len,
						     len ? pay[0] : 0 };
		seq++;
		in_sub++;
	}
	wb_csub_count(b, sub, in_sub);
}

/*
 * Runs (struct dti_fast) through compact records: every record as it
 * was written, from files, memory and pipes in any packets; and
 * dti_print_records() as the loop, in every format (batch_check()).
 */
static void test_compact_runs(void)
{
	static const size_t chunks[] = { 61, 4096 };
	struct crun_rec *recs = malloc(6000 * sizeof(*recs));
	struct wbuf w[2] = { {0}, {0} };
	const char *paths[2] = { tpath("crun0"), tpath("crun1") };
	struct src src = { .paths = paths, .n = 2 };
	const struct crun_rec *x;
	size_t size, size2;
	struct dti_reader *r;
	struct dti_rec rec;
	unsigned int n = 0, i = 0, c, fmt, bad = 0;
	char *ref, *out;
	int fds[2];

	wb_crun_cpu(&w[0], 0, 3000, 8192, recs, &n);
	wb_crun_cpu(&w[1], 1, 3000, 8192, recs, &n);
	qsort(recs, n, sizeof(*recs), cmp_crun_rec);
	wb_write(&w[0], "crun0");
	wb_write(&w[1], "crun1");
	r = dti_open_files(paths, 2, 0);
	CHECK(r != NULL);
	while (r && dti_next(r, &rec) > 0) {
		x = &recs[i];
		if (i >= n || rec.ts_ns != x->ts || rec.seq != x->seq ||
		    rec.caller != x->caller || rec.cpu != x->log_cpu ||
		    rec.buf_cpu != x->cpu || (unsigned int)rec.level != x->level ||
		    rec.len != x->len ||
		    (rec.len && *(const unsigned char *)rec.payload != x->first)) {
			if (!bad++)
				printf("record %u: seq %llu ts %llu caller %llx cpu %u/%u, want seq %llu ts %llu caller %llx cpu %u/%u\n",
				       i, (unsigned long long)rec.seq,
				       (unsigned long long)rec.ts_ns,
				       (unsigned long long)rec.caller, rec.cpu, rec.buf_cpu,
				       (unsigned long long)x->seq, (unsigned long long)x->ts,
				       (unsigned long long)x->caller, x->log_cpu, x->cpu);
		}
		i++;
	}
	CHECK(!bad && i == n);
	CHECK(r && dti_damage_count(r) == 0);
	dti_close(r);
	batch_check(&src);
	for (fmt = DTI_FMT_TEXT; fmt <= DTI_FMT_RAW; fmt++) {
		ref = print_all(dti_open_files(paths, 2, 0), fmt, &size, false);
		for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			r = open_pipes(2, w, chunks[c], fds);
			CHECK(r != NULL);
			out = r ? print_all(r, fmt, &size2, false) : NULL;
			close_pipes(2, fds);
			CHECK(out && size == size2 && !memcmp(ref, out, size));
			free(out);
		}
		free(ref);
	}
	free(recs);
	free(w[0].p);
	free(w[1].p);
}

/* Swap the @size-byte field at @p of @b in place */
static void wb_swap_at(struct wbuf *b, size_t p, unsigned int size)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (size) {
	case 2:
		memcpy(&v16, b->p + p, 2);
		v16 = bswap_16(v16);
		memcpy(b->p + p, &v16, 2);
		break;
	case 4:
		memcpy(&v32, b->p + p, 4);
		v32 = bswap_32(v32);
		memcpy(b->p + p, &v32, 4);
		break;
	default:
		memcpy(&v64, b->p + p, 8);
		v64 = bswap_64(v64);
		memcpy(b->p + p, &v64, 8);
	}
}

/*
 * @b, a stream of version-2 sub-buffers of @ss bytes that
 * wb_crun_cpu() wrote, in the other byte order: as a machine of that
 * order writes them (payloads are text or bytes, left as they are).
 */
static void wb_cswap(struct wbuf *b, uint32_t ss)
{
	static const struct { unsigned int off, size; } hdr[] = {
		{ offsetof(struct dti_record, magic), 2 }, { offsetof(struct dti_record, cpu), 2 },
		{ offsetof(struct dti_record, len), 4 }, { offsetof(struct dti_record, log_cpu), 4 },
		{ offsetof(struct dti_record, seq), 8 }, { offsetof(struct dti_record, ts_ns), 8 },
		{ offsetof(struct dti_record, caller), 8 },
	};
	size_t pos = 0, end, info, x, i;
	struct dti_subbuf_info in;
	struct dti_crec c;
	uint32_t len;

	while (pos < b->len) {
		info = pos + sizeof(struct dti_record);
		memcpy(&in, b->p + info, sizeof(in));
		end = in.state == DTI_SUBBUF_CLOSED ? pos + ss - in.padding : b->len;
		for (i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++)
			wb_swap_at(b, pos + hdr[i].off, hdr[i].size);
		for (i = 0; i < 6; i++)		/* subbuf_size .. generation */
			wb_swap_at(b, info + 4 * i, 4);
		wb_swap_at(b, info + offsetof(struct dti_subbuf_info, seq_base), 8);
		wb_swap_at(b, info + offsetof(struct dti_subbuf_info, ts_base), 8);
		wb_swap_at(b, info + offsetof(struct dti_subbuf_info, caller_prev), 8);
		pos = info + sizeof(in);
		while (pos < end) {
			memcpy(&c, b->p + pos, sizeof(c));
			len = c.len;
			wb_swap_at(b, pos + offsetof(struct dti_crec, len), 2);
			wb_swap_at(b, pos + offsetof(struct dti_crec, ts_delta), 4);
			x = pos + sizeof(c);
			if (c.info & DTI_CREC_LEN32) {
				memcpy(&len, b->p + x, 4);
				wb_swap_at(b, x, 4);
				x += 4;
			}
			if (c.info & DTI_CREC_TS64) {
				wb_swap_at(b, x, 8);
				x += 8;
			}
			if (c.info & DTI_CREC_SKIP) {
				wb_swap_at(b, x, 8);
				x += 8;
			}
			if ((c.info & DTI_CREC_CALLER) == DTI_CREC_CALLER32) {
				wb_swap_at(b, x, 4);
				x += 4;
			} else if ((c.info & DTI_CREC_CALLER) == DTI_CREC_CALLER64) {
				wb_swap_at(b, x, 8);
				x += 8;
			}
			if (c.flags & DTI_REC_REPLAYED)
				wb_swap_at(b, x, 4);
			pos += DTI_CREC_SIZE(dti_crec_hdr_size(c.info, c.flags), len);
		}
	}
}

/*
 * Compact records in the other byte order read as those of the host's:
 * every field, and every format but raw printed the same.
 */
static void test_compact_byte_swapped(void)
{
	struct crun_rec *recs = malloc(3000 * sizeof(*recs));
	struct wbuf w[2] = { {0}, {0} };
	static const char *const names[4] = { "cswap0", "cswap1", "chost0", "chost1" };
	char name[4][512];
	/* (tpath()'s four buffers would be taken again by wb_write()) */
	const char *paths[2] = { name[0], name[1] }, *host[2] = { name[2], name[3] };
	unsigned int n = 0, i = 0, fmt, bad = 0;
	struct dti_reader *r;
	struct dti_rec rec;
	size_t size, size2;
	char *ref, *out;

	for (i = 0; i < 4; i++)
		snprintf(name[i], sizeof(name[i]), "%s", tpath(names[i]));
	i = 0;
	wb_crun_cpu(&w[0], 0, 1500, 4096, recs, &n);
	wb_crun_cpu(&w[1], 1, 1500, 4096, recs, &n);
	qsort(recs, n, sizeof(*recs), cmp_crun_rec);
	wb_write(&w[0], "chost0");
	wb_write(&w[1], "chost1");
	wb_cswap(&w[0], 4096);
	wb_cswap(&w[1], 4096);
	wb_write(&w[0], "cswap0");
	wb_write(&w[1], "cswap1");
	r = dti_open_files(paths, 2, 0);
	CHECK(r != NULL);
	while (r && dti_next(r, &rec) > 0) {
		if (i >= n || rec.ts_ns != recs[i].ts || rec.seq != recs[i].seq ||
		    rec.caller != recs[i].caller || rec.cpu != recs[i].log_cpu ||
		    rec.len != recs[i].len || !rec.swapped) {
			if (!bad++)
				printf("record %u: seq %llu ts %llu caller %llx cpu %u len %zu swapped %d, want seq %llu ts %llu caller %llx cpu %u len %u\n",
				       i, (unsigned long long)rec.seq, (unsigned long long)rec.ts_ns,
				       (unsigned long long)rec.caller, rec.cpu, rec.len, rec.swapped,
				       (unsigned long long)recs[i].seq, (unsigned long long)recs[i].ts,
				       (unsigned long long)recs[i].caller, recs[i].log_cpu, recs[i].len);
		}
		i++;
	}
	CHECK(!bad && i == n);
	CHECK(r && dti_damage_count(r) == 0);
	dti_close(r);
	for (fmt = DTI_FMT_TEXT; fmt < DTI_FMT_RAW; fmt++) {
		ref = print_all(dti_open_files(host, 2, 0), fmt, &size, true);
		out = print_all(dti_open_files(paths, 2, 0), fmt, &size2, true);
		CHECK(ref && out && size > 0);
		if (ref && out && fmt != DTI_FMT_JSON)
			CHECK_STR(out, ref);
		free(ref);
		free(out);
	}
	free(recs);
	free(w[0].p);
	free(w[1].p);
}

/*
 * Raw output is written from the windows it comes from without a copy, a
 * run at a time: it is the records as they are, in order with output of
 * other formats and other FILEs in between, across window refills.
 */
static void test_raw_runs_and_files(void)
{
	struct run_rec *recs = malloc(4000 * sizeof(*recs));
	struct wbuf w[2] = { {0}, {0} }, want[2] = { {0}, {0} };
	char *out[2] = { NULL, NULL }, *line = NULL;
	size_t size[2], line_len;
	struct dti_reader *r;
	struct dti_rec rec;
	unsigned int n = 0, i = 0, k;
	int fds[2];
	FILE *f[2], *lf;

	wb_run_cpu(&w[0], 0, 1500, 8192, recs, &n);
	wb_run_cpu(&w[1], 1, 1500, 8192, recs, &n);
	r = open_pipes(2, w, 3001, fds);
	CHECK(r != NULL);
	f[0] = open_memstream(&out[0], &size[0]);
	f[1] = open_memstream(&out[1], &size[1]);
	while (r && dti_next(r, &rec) > 0) {
		/* FILE 0 takes runs of 50, FILE 1 every 7th in between, as text */
		k = i % 57 < 50 ? 0 : 1;
		if (k == 0) {
			CHECK(dti_print(r, f[0], &rec, DTI_FMT_RAW) == 0);
			wb_put(&want[0], rec.raw, rec.raw_len);
		} else {
			CHECK(dti_print(r, f[1], &rec, i % 7 ? DTI_FMT_RAW : DTI_FMT_TEXT) == 0);
			if (i % 7) {
				wb_put(&want[1], rec.raw, rec.raw_len);
			} else {
				lf = open_memstream(&line, &line_len);
				dti_print(NULL, lf, &rec, DTI_FMT_TEXT);
				fclose(lf);
				wb_put(&want[1], line, line_len);
				free(line);
			}
		}
		i++;
	}
	dti_close(r);
	close_pipes(2, fds);
	fclose(f[0]);
	fclose(f[1]);
	CHECK(i == n);
	for (k = 0; k < 2; k++) {
		CHECK(size[k] == want[k].len && !memcmp(out[k], want[k].p, size[k]));
		free(out[k]);
		free(want[k].p);
	}
	free(recs);
	free(w[0].p);
	free(w[1].p);
}

/* @out (@size bytes of JSON lines) without their "channel" fields: the bytes left */
static size_t json_drop_channel(char *out, size_t size)
{
	static const char key[] = ",\"channel\":\"";
	char *p = out, *q, *end;

	while ((q = memmem(p, size - (p - out), key, sizeof(key) - 1))) {
		end = memchr(q + sizeof(key) - 1, '"', size - (q + sizeof(key) - 1 - out));
		if (!end)
			break;
		end++;
		memmove(q, end, size - (end - out));
		size -= end - q;
		p = q;
	}
	return size;
}

/*
 * Every payload length from 0 to 160 and some long ones (SIMD hex in
 * turns of 32 and 16, then a table), text and binary, in every format
 * the reader's buffer holds as it does for a record printed alone; text
 * and ts as the kernel's merged files print them.
 */
static void test_print_lengths(void)
{
	static const uint32_t longer[] = { 255, 256, 257, 1000, 4095, 70000 };
	unsigned char *pay = malloc(70000);
	struct wbuf a = {0}, want = {0};
	char *line = NULL, *ref, *out = NULL, hex[4];
	size_t line_len, size, want_len;
	const char *path = tpath("len0");
	struct dti_reader *r;
	struct dti_rec rec;
	uint32_t len, i, seq = 0;
	enum dti_format fmt;
	FILE *f, *lf;

	for (i = 0; i < 70000; i++)
		pay[i] = i * 151 + (i >> 8);
	wb_sub(&a, 0, 0, 1 << 20, 2, 0, 0, DTI_SUBBUF_OPEN);
	for (len = 0; len < 160 + 2 * 6; len++) {
		uint32_t l = len < 160 ? len : longer[(len - 160) / 2];
		unsigned int flags = len < 160 ? 0 : (len % 2 ? DTI_REC_TEXT : 0);

		wb_rec(&a, 0, flags, len % 8, seq++, 1000000000ull * len + len, pay, l);
		if (len < 40)		/* text, some with their own newline */
			wb_rec(&a, 0, DTI_REC_TEXT, 3, seq++, 1000000000ull * len + 500,
			       &"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLM\n"[39 - len], len);
	}
	wb_save(&a, "len0");
	for (fmt = DTI_FMT_TEXT; fmt <= DTI_FMT_JSON; fmt++) {
		r = dti_open_files(&path, 1, 0);
		f = open_memstream(&out, &size);
		memset(&want, 0, sizeof(want));
		while (r && dti_next(r, &rec) > 0) {
			CHECK(dti_print(r, f, &rec, fmt) == 0);
			lf = open_memstream(&line, &line_len);
			CHECK(dti_print(NULL, lf, &rec, fmt) == 0);
			fclose(lf);
			wb_put(&want, line, line_len);
			free(line);
			if (fmt == DTI_FMT_TEXT && !(rec.flags & DTI_REC_TEXT)) {
				/* "%*ph" of the kernel: bytes as hex, a space between */
				ref = malloc(3 * rec.len + 2);
				for (i = 0, want_len = 0; i < rec.len; i++) {
					snprintf(hex, sizeof(hex), i ? " %02x" : "%02x",
						 ((const unsigned char *)rec.payload)[i]);
					memcpy(ref + want_len, hex, strlen(hex));
					want_len += strlen(hex);
				}
				ref[want_len++] = '\n';
				CHECK(want.len >= want_len &&
				      !memcmp(want.p + want.len - want_len, ref, want_len));
				free(ref);
			}
		}
		dti_close(r);
		fclose(f);
		if (fmt == DTI_FMT_JSON)	/* alone, a record's channel is not known */
			size = json_drop_channel(out, size);
		CHECK(size == want.len && !memcmp(out, want.p, size));
		free(out);
		free(want.p);
	}
	free(pay);
}

/*
 * A long stream of the other byte order reads as the same in host order.
 * Raw, one CPU's records in sub-buffers of 1 MiB are written a window at
 * a time, straight from it.
 */
static void test_byte_swapped_long(void)
{
	struct run_rec *recs = malloc(6000 * sizeof(*recs));
	struct wbuf a = {0}, b = {0}, raw = {0};
	const char *pa = tpath("swl0"), *pb = tpath("nsl0");
	struct dti_reader *r;
	struct dti_rec rec;
	char *sa, *sb;
	size_t la, lb;
	unsigned int n = 0;

	swap_next = true;
	rnd_state = 7;
	wb_run_cpu(&a, 0, 3000, 1 << 20, recs, &n);
	swap_next = false;
	rnd_state = 7;
	wb_run_cpu(&b, 0, 3000, 1 << 20, recs, &n);
	wb_save(&a, "swl0");
	wb_save(&b, "nsl0");
	sa = print_all(dti_open_files(&pa, 1, 0), DTI_FMT_TS, &la, false);
	sb = print_all(dti_open_files(&pb, 1, 0), DTI_FMT_TS, &lb, false);
	CHECK(la == lb && la > 100000 && !memcmp(sa, sb, la));
	free(sa);
	free(sb);
	r = dti_open_files(&pb, 1, 0);
	while (r && dti_next(r, &rec) > 0)
		wb_put(&raw, rec.raw, rec.raw_len);
	dti_close(r);
	sb = print_all(dti_open_files(&pb, 1, 0), DTI_FMT_RAW, &lb, false);
	CHECK(lb == raw.len && lb > 3 * (128 << 10) && !memcmp(sb, raw.p, lb));
	free(sb);
	free(raw.p);
	free(recs);
}

static void test_open_dir_and_mem(void)
{
	struct wbuf a = {0};
	struct dti_reader *r;
	struct seen s;
	char dir[512];
	unsigned int i;
	const void *bufs[2];
	size_t lens[2];

	snprintf(dir, sizeof(dir), "%s/snap", tmpdir);
	mkdir(dir, 0755);
	for (i = 0; i < 12; i++) {
		char name[32], text[16];

		wb_sub(&a, i, 0, 4096, 4, 0, 1, DTI_SUBBUF_OPEN);
		snprintf(text, sizeof(text), "cpu%u", i);
		wb_text(&a, i, 0, 5, text);	/* equal ts: CPU order decides */
		snprintf(name, sizeof(name), "snap/trace%u", i);
		wb_save(&a, name);
	}
	wb_text(&a, 0, 0, 5, "not-a-trace-file");
	wb_save(&a, "snap/info");
	r = dti_open_dir(dir, 0);
	CHECK(r && dti_nr_streams(r) == 12);
	if (r) {
		drain(r, &s, DTI_FMT_TEXT);
		CHECK_STR(s.out, "cpu0\ncpu1\ncpu2\ncpu3\ncpu4\ncpu5\ncpu6\ncpu7\ncpu8\n"
			  "cpu9\ncpu10\ncpu11\n");
		dti_close(r);
	}
	CHECK(dti_open_dir(tmpdir, 0) == NULL && errno == ENOENT);
	CHECK(strstr(dti_errmsg(), "no per-CPU files trace0..N") != NULL);

	wb_sub(&a, 0, 0, 4096, 4, 0, 1, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 9, "mem0");
	bufs[0] = a.p;
	lens[0] = a.len;
	bufs[1] = "";
	lens[1] = 0;
	r = dti_open_mem(bufs, lens, 2, 0);
	CHECK(r != NULL);
	if (r) {
		drain(r, &s, DTI_FMT_TEXT);
		CHECK_STR(s.out, "mem0\n");
		dti_close(r);
	}
	free(a.p);
}


static void test_control_fake_debugfs(void)
{
	char root[512], ch[600], p[700], **names;
	int level;
	char *text;

	snprintf(root, sizeof(root), "%s/debugfs", tmpdir);
	mkdir(root, 0755);
	dti_set_debugfs(root);
	CHECK(dti_list_channels() == NULL && errno == ENODEV);
	CHECK(strstr(dti_errmsg(), "DTI is not loaded") != NULL);
	snprintf(ch, sizeof(ch), "%s/dti", root);
	mkdir(ch, 0755);
	snprintf(ch, sizeof(ch), "%s/dti/beta", root);
	mkdir(ch, 0755);
	snprintf(ch, sizeof(ch), "%s/dti/alpha", root);
	mkdir(ch, 0755);
	snprintf(p, sizeof(p), "%s/level", ch);
	write_file(p, "5\n");
	snprintf(p, sizeof(p), "%s/stats", ch);
	write_file(p, "cpu written\n0 1\n");
	names = dti_list_channels();
	CHECK(names && names[0] && !strcmp(names[0], "alpha") && names[1] &&
	      !strcmp(names[1], "beta") && !names[2]);
	dti_names_free(names);
	CHECK(dti_get_level("alpha", &level) == 0 && level == 5);
	CHECK(dti_set_level("alpha", -1) == 0);
	text = dti_read_ctl("alpha", "level");
	CHECK_STR(text, "-1");
	free(text);
	CHECK(dti_set_level("alpha", 9) == -1 && errno == EINVAL);
	CHECK(dti_get_level("gamma", &level) == -1 && errno == ENOENT);
	CHECK_STR(dti_errmsg(), "no such channel: gamma (see 'dti list')");
	CHECK(dti_get_level("../x", &level) == -1 && errno == EINVAL);
	CHECK(dti_open_channel("beta", 0) == NULL && errno == ENXIO);
	CHECK(dti_open_channel("nope", 0) == NULL && errno == ENOENT);
	CHECK(dti_level_parse("warning", &level) == 0 && level == 4);
	CHECK(dti_level_parse("destroy", &level) == 0 && level == -2);
	CHECK(dti_level_parse("-1", &level) == 0 && level == -1);
	CHECK(dti_level_parse("8", &level) == -1 && errno == EINVAL);
	CHECK(dti_level_parse("3x", &level) == -1);
	CHECK_STR(dti_level_name(3), "err");
	dti_set_debugfs(NULL);
}

static void test_ksyms(void)
{
	struct dti_ksyms *ks;
	char buf[128];

	write_file(tpath("kallsyms"),
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81000100 T first_func\n"
		   "ffffffff81000100 T alias_func\n"
		   "ffffffff81000180 t second_func\n"
		   "ffffffffc0001000 t mod_a\t[dti_test]\n"
		   "ffffffffc0001100 t mod_b\t[dti_test]\n"
		   "ffffffffc0002000 t other\t[othermod]\n"
		   "ffffffffc0003000 t bpf_prog_93ce878898ca301d_dti_log_fentry\t[bpf]\n"
		   "ffffffffc0005000 t bpf_prog_0123456789abcdef_last\t[bpf]\n");
	ks = dti_ksyms_load(tpath("kallsyms"));
	CHECK(ks != NULL);
	CHECK(dti_ksyms_format(ks, 0xffffffff81000110ull, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "first_func+0x10/0x80");
	CHECK(dti_ksyms_format(ks, 0xffffffffc0001004ull, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "mod_a+0x4/0x100 [dti_test]");
	/* a BPF program: as %pS prints it, with no module and no size */
	CHECK(dti_ksyms_format(ks, 0xffffffffc00030dbull, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "bpf_prog_93ce878898ca301d_dti_log_fentry+0xdb");
	CHECK(dti_ksyms_format(ks, 0xffffffffc0005010ull, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "bpf_prog_0123456789abcdef_last+0x10");
	CHECK(dti_ksyms_format(ks, 0xffffffffc0105000ull, buf, sizeof(buf)) == -1);
	CHECK(dti_ksyms_format(ks, 0x1000, buf, sizeof(buf)) == -1 && errno == ENOENT);
	CHECK_STR(buf, "0x1000");
	dti_ksyms_free(ks);
	write_file(tpath("kallsyms0"), "0000000000000000 T _stext\n");
	CHECK(dti_ksyms_load(tpath("kallsyms0")) == NULL && errno == EACCES);
	CHECK(dti_ksyms_load(tpath("missing")) == NULL && errno == ENOENT);
}

/*
 * A file with no symbol line is no kallsyms file, not one whose addresses
 * are hidden; a line longer than any buffer is one line, skipped if it
 * is no symbol (it was read as two, its tail as a symbol of its own).
 */
static void test_ksyms_bad_files(void)
{
	static char line[3000];
	struct dti_ksyms *ks;
	char buf[128], want[300];

	write_file(tpath("ksyms-empty"), "");
	CHECK(dti_ksyms_load(tpath("ksyms-empty")) == NULL && errno == EINVAL);
	snprintf(want, sizeof(want), "%s: no symbols in it (not a copy of /proc/kallsyms?)",
		 tpath("ksyms-empty"));
	CHECK_STR(dti_errmsg(), want);
	write_file(tpath("ksyms-text"), "hello\nworld\n");
	CHECK(dti_ksyms_load(tpath("ksyms-text")) == NULL && errno == EINVAL);
	memset(line, 'x', sizeof(line) - 1);
	memcpy(line + 1023, "ffffffff81000180 t tail_func ", 29);
	write_file(tpath("ksyms-long"), "ffffffff81000000 T _stext\n");
	{
		FILE *f = fopen(tpath("ksyms-long"), "a");

		fputs(line, f);
		fputs("\nffffffff81000200 T last_func\n", f);
		fclose(f);
	}
	ks = dti_ksyms_load(tpath("ksyms-long"));
	CHECK(ks != NULL);
	CHECK(dti_ksyms_format(ks, 0xffffffff81000190ull, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "_stext+0x190/0x200");
	dti_ksyms_free(ks);
}

/*
 * A snapshot's info or stats that say nothing (empty, garbage) are
 * warned about and not used; an info field too large for its 32 bits is
 * no value (it was cut to its low bits: 4294971392 read as 4096).
 */
static void test_snapshot_bad_info_stats(void)
{
	struct wbuf a = {0};
	struct seen s;
	char want[1024], d[300];

	snprintf(d, sizeof(d), "%s", tpath("badside"));
	mkdir(d, 0755);
	write_file(tpath("badside/info"), "\x01\x02garbage\n");
	write_file(tpath("badside/stats"), "");
	wb_cpu(&a, 0, 1, 10);
	wb_save(&a, "badside/trace0");
	CHECK(read_dir(&s, DTI_FMT_TEXT, "badside") == 0);
	CHECK(s.n == 10);
	snprintf(want, sizeof(want),
		 "%s/info: not read: no name, subbuf_size or n_subbufs line in it (not a snapshot's info file?)\n"
		 "%s/stats: not read: no \"cpu ...\" header line in it (not a snapshot's stats file?)\n",
		 d, d);
	CHECK_STR(s.notices, want);
	CHECK(s.warning == 2 && s.damage == 0);
	write_file(tpath("badside/info"), "name: test\nsubbuf_size: 4294971392\nn_subbufs: 8\n");
	unlink(tpath("badside/stats"));
	CHECK(read_dir(&s, DTI_FMT_TEXT, "badside") == 0);
	CHECK(s.n == 10 && s.warning == 0 && s.damage == 0);
	CHECK_STR(s.notices, "");
}

/* Run @cmd through the shell; its stdout+stderr in @out, exit status returned. */
static int run_cmd(const char *cmd, char *out, size_t size)
{
	char full[1024];
	size_t n = 0;
	FILE *p;
	int st;

	snprintf(full, sizeof(full), "%s 2>&1", cmd);
	p = popen(full, "r");
	if (!p)
		return -1;
	while (n < size - 1 && fgets(out + n, size - n, p))
		n += strlen(out + n);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *bindir = "build";

static void test_cli_decode(void)
{
	struct wbuf a = {0};
	char cmd[1024], out[4096];
	size_t off;

	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 1000000001, "one");
	wb_text(&a, 0, 2, 1000000002, "three");
	off = a.len;
	wb_text(&a, 0, 3, 1000000003, "cut");
	a.len -= 3;
	wb_save(&a, "cli/trace0");
	/* damage: reported, the rest printed, exit status 2 (dti(1)) */
	snprintf(cmd, sizeof(cmd), "%s/dti decode -F ts %s", bindir, tpath("cli"));
	CHECK(run_cmd(cmd, out, sizeof(out)) == 2);
	snprintf(cmd, sizeof(cmd),
		 "[    1.000000001] cpu0 L3 #0 0xffffffffc0001234: one\n"
		 "dti: warning: 1 records lost on cpu0 between seq 1 and 2\n"
		 "[    1.000000002] cpu0 L3 #2 0xffffffffc0001234: three\n"
		 "dti: %s: truncated record at offset %zu: 48 bytes, 45 left in the file; "
		 "no valid sub-buffer header follows: the rest, 45 bytes, not read\n",
		 tpath("cli/trace0"), off);
	CHECK_STR(out, cmd);
	/* --strict: today's failure, exit status 1 */
	snprintf(cmd, sizeof(cmd), "%s/dti decode --strict -q %s", bindir, tpath("cli"));
	CHECK(run_cmd(cmd, out, sizeof(out)) == 1);
	CHECK(strstr(out, "45 left in the file\n") != NULL);
	snprintf(cmd, sizeof(cmd), "%s/dti decode --bogus x", bindir);
	CHECK(run_cmd(cmd, out, sizeof(out)) == 129);
	snprintf(cmd, sizeof(cmd), "%s/dti decode --help", bindir);
	CHECK(run_cmd(cmd, out, sizeof(out)) == 0 && !strncmp(out, "usage: dti decode", 17));
	snprintf(cmd, sizeof(cmd), "%s/dti --debugfs %s list", bindir, tmpdir);
	CHECK(run_cmd(cmd, out, sizeof(out)) == 1);
	CHECK(strstr(out, "DTI is not loaded") != NULL);
}

/* ---- event types ---- */

/* A DTI_REC_FORMAT record of type @id "@name" with @layout, @fields and @fmt */
static uint64_t format_ts = 1;	/* time of the next wb_format() records */

static void wb_format(struct wbuf *b, unsigned int cpu, uint16_t id, const char *name,
		      const char *layout, const char *fields, const char *fmt)
{
	struct dti_event_format f = {
		.id = id, .nargs = strlen(layout), .name_len = strlen(name),
		.fields_len = strlen(fields), .fmt_len = strlen(fmt),
	};
	unsigned char p[1024];
	size_t n = 0;

	memcpy(p, &f, sizeof(f));
	n = sizeof(f);
	memcpy(p + n, name, f.name_len);
	n += f.name_len;
	memcpy(p + n, layout, f.nargs);
	n += f.nargs;
	memcpy(p + n, fields, f.fields_len);
	n += f.fields_len;
	memcpy(p + n, fmt, f.fmt_len);
	n += f.fmt_len;
	wb_rec(b, cpu, DTI_REC_FORMAT, 0, 0, format_ts, p, n);
}

#define EV_FMT	"v %hhd/%hu x %#x s '%-4s' h %*phC p %px %lld%% n %u\n"
#define EV_TEXT	"v -5/65535 x 0x0 s 'ab  ' h 01:02:ab p ffff888012345678 -9000000000% n 42\n" \
	"08 00 01 02 00 03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n" \
	"07 00 01 02 00 03 00 00 00 03 00 61 62 63 01 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n" \
	"v 127/0 x 0xbeef s '    ' h  p 0000000000000000 1% n 7\n"

/* The values of an event of EV_FMT, packed */
static size_t ev_pack(unsigned char *p, uint16_t id, int8_t v, uint16_t u, uint32_t x,
		      const char *s, const unsigned char *h, uint16_t hl, uint64_t ptr,
		      int64_t q, uint32_t n)
{
	uint16_t sl = strlen(s);
	size_t k = 0;

#define PUT(val) do { memcpy(p + k, &(val), sizeof(val)); k += sizeof(val); } while (0)
	PUT(id);
	PUT(v);
	PUT(u);
	PUT(x);
	PUT(sl);
	memcpy(p + k, s, sl);
	k += sl;
	PUT(hl);
	memcpy(p + k, h, hl);
	k += hl;
	PUT(ptr);
	PUT(q);
	PUT(n);
#undef PUT
	return k;
}

/*
 * Events print through the format that frames their sub-buffer, as the
 * kernel's printf prints the template (%#x of 0 is "0x0"), and as named
 * JSON fields; an unknown id or values that do not fill the layout print
 * as hex; formats take no sequence number, are not printed, and stay in
 * raw output, which reads back the same.
 */
static void test_events(void)
{
	static const unsigned char h[] = { 1, 2, 0xab };
	unsigned char p[512];
	struct wbuf a = {0}, raw = {0};
	struct seen s;
	size_t n;

	wb_sub(&a, 0, 0, 4096, 4, 0, 5, DTI_SUBBUF_OPEN);
	wb_format(&a, 0, 7, "ev", "bHIsapqI", "v,arg1,x,s,h,p,arg6,n", EV_FMT);
	n = ev_pack(p, 7, -5, 65535, 0, "ab", h, 3, 0xffff888012345678ull,
		    -9000000000ll, 42);
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 0, 10, p, n);
	n = ev_pack(p, 8, 1, 2, 3, "", h, 0, 0, 0, 0);		/* no format of id 8 */
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 1, 20, p, n);
	n = ev_pack(p, 7, 1, 2, 3, "abc", h, 1, 0, 0, 0);	/* one byte short */
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 2, 30, p, n - 1);
	n = ev_pack(p, 7, 127, 0, 0xbeef, "", h, 0, 0, 1, 7);
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 3, 40, p, n);
	wb_save(&a, "ev0");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "ev0") == 0);
	CHECK_STR(s.out, EV_TEXT);
	CHECK(s.n == 4);	/* the format is no record of dti_next() ... */
	CHECK_STR(s.notices, "");
	open_flags = DTI_OPEN_FORMATS;	/* ... unless asked for */
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "ev0") == 0);
	open_flags = 0;
	CHECK_STR(s.out, EV_TEXT);
	CHECK(s.n == 5);
	CHECK(read_files(&s, DTI_FMT_JSON, 1, "ev0") == 0);
	CHECK(strstr(s.out, ",\"event\":\"ev\",\"id\":7,\"fields\":{\"v\":-5,\"arg1\":65535,\"x\":0,"
		     "\"s\":\"ab\",\"h\":\"0102ab\",\"p\":\"0xffff888012345678\","
		     "\"arg6\":\"-9000000000\",\"n\":42},\"text\":\"v -5/65535 x 0x0 s 'ab  ' h 01:02:ab "
		     "p ffff888012345678 -9000000000% n 42\\n\"}\n"));
	CHECK(strstr(s.out, "\"data\":\"0800"));
	/* raw output keeps the format: it reads back the same */
	{
		const char *path = tpath("ev0");
		struct dti_reader *r = dti_open_files(&path, 1, 0);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		CHECK(r && dti_print_records(r, f, DTI_FMT_RAW, 0) == 0);
		dti_close(r);
		fclose(f);
		wb_put(&raw, buf, len);
		free(buf);
	}
	CHECK(read_mem(&s, DTI_FMT_TEXT, &raw) == 0);
	CHECK_STR(s.out, EV_TEXT);
	/*
	 * A format whose template does not give its layout is not learnt,
	 * and said once (not at each sub-buffer that repeats it).
	 */
	a.len = 0;
	for (unsigned int k = 0; k < 2; k++) {
		wb_sub(&a, 0, k, 4096, 4, 0, 2, k ? DTI_SUBBUF_OPEN : DTI_SUBBUF_CLOSED);
		wb_format(&a, 0, 7, "ev", "bHIsapqQ", "v,arg1,x,s,h,p,arg6,n", EV_FMT);
		n = ev_pack(p, 7, -5, 65535, 0, "ab", h, 3, 0, 0, 42);
		wb_rec(&a, 0, DTI_REC_TYPED, 6, k, 10 + k, p, n);
	}
	wb_save(&a, "ev1");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "ev1") == 0);
	CHECK(!strncmp(s.out, "07 00 fb ff ff 00 00 00 00", 26));
	CHECK(s.n == 2 && s.warning == 1 && s.damage == 0);
	CHECK(strstr(s.notices, "/ev1: event format at offset 96 does not hold together (its template, layout and field names disagree): events of its type print as hex\n"));
	free(a.p);
	free(raw.p);
}

/*
 * A format takes its sub-buffer header's time, which can be later than
 * the first records after it (dti.ko writes the header after it took the
 * time of the record that started the sub-buffer): the merge takes it
 * first and orders the records by their own times, on every CPU.
 */
static void test_formats_take_no_time(void)
{
	struct wbuf a = {0}, b = {0};
	unsigned char p[8];
	uint16_t id = 7;
	struct seen s;

	memcpy(p, &id, sizeof(id));
	format_ts = 100;
	for (unsigned int cpu = 0; cpu < 2; cpu++) {
		struct wbuf *w = cpu ? &b : &a;

		wb_sub(w, cpu, 0, 4096, 4, 0, 4, DTI_SUBBUF_OPEN);
		wb_format(w, cpu, 7, "ev", "", "", "ev on cpu");
		p[2] = '0' + cpu;
		/* cpu1's records come first: 10, 20 (cpu0), 30, 40 (cpu0) */
		wb_rec(w, cpu, DTI_REC_TYPED, 6, 0, cpu ? 10 : 20, p, 2);
		wb_rec(w, cpu, DTI_REC_TYPED, 6, 1, cpu ? 30 : 40, p, 2);
		wb_text(w, cpu, 2, cpu ? 50 : 60, cpu ? "t1" : "t0");
	}
	format_ts = 1;
	wb_save(&a, "fmt0");
	wb_save(&b, "fmt1");
	CHECK(read_files(&s, DTI_FMT_JSON, 2, "fmt0", "fmt1") == 0);
	CHECK(s.n == 6);
	{
		const char *at = s.out;
		static const char *const want[] = {
			"\"ts_ns\":\"10\",\"channel\":\"test\",\"cpu\":1", "\"ts_ns\":\"20\",\"channel\":\"test\",\"cpu\":0",
			"\"ts_ns\":\"30\",\"channel\":\"test\",\"cpu\":1", "\"ts_ns\":\"40\",\"channel\":\"test\",\"cpu\":0",
			"\"ts_ns\":\"50\",\"channel\":\"test\",\"cpu\":1", "\"ts_ns\":\"60\",\"channel\":\"test\",\"cpu\":0",
		};

		for (unsigned int i = 0; i < 6 && at; i++)
			at = strstr(at, want[i]);
		CHECK(at != NULL);
	}
	CHECK_STR(s.notices, "");
	free(a.p);
	free(b.p);
}

/* A blob's payload (DTI_EVENT_ID_BLOB) of @len bytes i * 3 with @type */
static size_t blob_pack(unsigned char *p, const char *type, size_t len)
{
	uint16_t id = DTI_EVENT_ID_BLOB;
	size_t n = strlen(type);

	memcpy(p, &id, sizeof(id));
	p[2] = n;
	memcpy(p + DTI_BLOB_HDR_SIZE, type, n);
	for (size_t i = 0; i < len; i++)
		p[DTI_BLOB_HDR_SIZE + n + i] = i * 3;
	return DTI_BLOB_HDR_SIZE + n + len;
}

/*
 * Blobs print as "blob TYPE LEN: HEX" (the kernel's merged view's line),
 * in JSON with their media type and bytes, in the journal export with
 * DTI_MEDIA_TYPE; dti_blob_info() gives the parts; one whose media type
 * runs past its payload, or of another id, is no blob.
 */
static void test_blobs(void)
{
	unsigned char p[300];
	struct wbuf a = {0};
	struct seen s;
	size_t n;

	wb_sub(&a, 0, 0, 4096, 4, 0, 4, DTI_SUBBUF_OPEN);
	n = blob_pack(p, "image/png", 4);
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 0, 10, p, n);
	n = blob_pack(p, "", 0);
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 1, 20, p, n);
	n = blob_pack(p, "x/y", 2);
	p[2] = 200;	/* a media type past the payload */
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 2, 30, p, n);
	n = blob_pack(p, "a", 1);
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 3, 40, p, n);
	wb_save(&a, "blob0");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "blob0") == 0);
	CHECK_STR(s.out, "blob image/png 4: 00 03 06 09\nblob  0:\n"
		  "ff ff c8 78 2f 79 00 03\nblob a 1: 00\n");
	CHECK(read_files(&s, DTI_FMT_JSON, 1, "blob0") == 0);
	CHECK(strstr(s.out, ",\"event\":\"blob\",\"media_type\":\"image/png\",\"data\":\"00030609\"}\n"));
	CHECK(strstr(s.out, ",\"event\":\"blob\",\"media_type\":\"\",\"data\":\"\"}\n"));
	CHECK(strstr(s.out, ",\"data\":\"ffffc8782f790003\"}\n"));
	CHECK(read_files(&s, DTI_FMT_EXPORT, 1, "blob0") == 0);
	CHECK(strstr(s.out, "DTI_MEDIA_TYPE=image/png\nMESSAGE=blob image/png 4: 00 03 06 09\n"
		     "DTI_DATA=00030609\n"));
	{
		struct dti_rec rec = { .flags = DTI_REC_TYPED, .payload = p };
		const char *type;
		const void *data;
		size_t tl, len;

		rec.len = blob_pack(p, "text/plain", 3);
		CHECK(dti_blob_info(&rec, &type, &tl, &data, &len) == 0);
		CHECK(tl == 10 && !memcmp(type, "text/plain", 10) && len == 3 &&
		      data == p + DTI_BLOB_HDR_SIZE + 10);
		p[2] = 14;	/* 3 + 14 bytes: one past the payload */
		errno = 0;
		CHECK(dti_blob_info(&rec, &type, &tl, &data, &len) == -1 && errno == EBADMSG);
		p[0] = 7;
		CHECK(dti_blob_info(&rec, &type, &tl, &data, &len) == -1 && errno == ENOENT);
		rec.flags = 0;
		p[0] = 0xff;
		CHECK(dti_blob_info(&rec, &type, &tl, &data, &len) == -1 && errno == ENOENT);
	}
	free(a.p);
}

/*
 * Events one after another in sequence are read as text records are, in
 * a run (struct dti_fast), and printed the same in every format
 * (read_files() compares dti_print_records() with the loop); one with
 * the text flag too, or shorter than its id, is damage there as anywhere.
 */
static void test_events_run(void)
{
	struct wbuf a = {0};
	struct seen s;
	unsigned char p[8];
	char want[512];
	const char *f = tpath("evrun");
	uint16_t id = 3;
	uint32_t v;

	memcpy(p, &id, sizeof(id));
	wb_sub(&a, 0, 0, 4096, 4, 0, 10, DTI_SUBBUF_CLOSED);
	wb_format(&a, 0, id, "n", "I", "v", "v=%u");		/* 96 */
	for (v = 0; v < 8; v++) {	/* 152, 48 bytes each */
		memcpy(p + sizeof(id), &v, sizeof(v));
		if (v == 3)	/* in the run that seq 1 starts */
			wb_rec(&a, 0, DTI_REC_TYPED | DTI_REC_TEXT, 6, v, 10 + v, p, 6);
		else if (v == 6)	/* in the run that seq 5 starts */
			wb_rec(&a, 0, DTI_REC_TYPED, 6, v, 10 + v, p, 1);
		else
			wb_rec(&a, 0, DTI_REC_TYPED, 6, v, 10 + v, p, 6);
	}
	wb_text(&a, 0, 8, 18, "t8");
	wb_save(&a, "evrun");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "evrun") == 0);
	CHECK_STR(s.out, "v=0\nv=1\nv=2\nv=4\nv=5\nv=7\nt8\n");
	snprintf(want, sizeof(want),
		 "%s: corrupt data at offset 296: event of 6 bytes with flags 0x41; record skipped\n"
		 "1 records lost on cpu0 between seq 3 and 4\n"
		 "%s: corrupt data at offset 440: event of 1 bytes with flags 0x40; record skipped\n"
		 "1 records lost on cpu0 between seq 6 and 7\n", f, f);
	CHECK_STR(s.notices, want);
	CHECK(s.damage == 2 && s.n == 7);
	CHECK(read_files(&s, DTI_FMT_JSON, 1, "evrun") == 0);
	CHECK(strstr(s.out, "\"seq\":\"5\",\"flags\":64,\"caller\":\"0xffffffffc0001234\","
		     "\"event\":\"n\",\"id\":3,\"fields\":{\"v\":5},\"text\":\"v=5\"}\n"));
	CHECK(s.damage == 2 && s.n == 7);
	free(a.p);
}

/*
 * Numbers print as C's printf prints them, with every flag, width and
 * precision, where it agrees with the kernel's: not a precision with the
 * 0 flag (the kernel keeps the zeros), nor "%#x" or a precision of 0 of
 * the value 0 (the kernel prints "0x0" and "0").  Each template is one
 * type, each event one value; in JSON too, where the text copies the
 * digits of the fields.
 */
static void test_events_printf(void)
{
	static const char *const flags[] = {
		"", "-", "+", " ", "#", "0", "-+", "+0", " 0", "#0", "-#",
	};
	static const char *const widths[] = { "", "1", "6", "25" };
	static const char *const precs[] = { "", ".0", ".3", ".21" };
	static const struct { const char *len; char s, u; unsigned int size; } sizes[] = {
		{ "hh", DTI_ARG_S8, DTI_ARG_U8, 1 }, { "h", DTI_ARG_S16, DTI_ARG_U16, 2 },
		{ "", DTI_ARG_S32, DTI_ARG_U32, 4 }, { "ll", DTI_ARG_S64, DTI_ARG_U64, 8 },
	};
	static const uint64_t vals[] = {
		0, 1, 9, 10, 99, 100, 12345, 0x7f, 0x80, 0xffff, 0x80000000ull,
		-1ull, -10ull, -12345ull, 0x8000000000000000ull, 10000000000000000000ull,
	};
	static const char convs[] = "diuxX";
	const size_t nvals = sizeof(vals) / sizeof(vals[0]);
	struct wbuf a = {0}, want = {0};
	char fmt[32], layout[2] = "", line[128], *out = NULL;
	unsigned char p[sizeof(uint16_t) + sizeof(uint64_t)];
	unsigned int fi, wi, pi, si, ci, k, id = 0;
	const void *mem;
	size_t len = 0, n, size;
	struct dti_reader *r;
	FILE *f;

	for (fi = 0; fi < sizeof(flags) / sizeof(flags[0]); fi++)
	for (wi = 0; wi < sizeof(widths) / sizeof(widths[0]); wi++)
	for (pi = 0; pi < sizeof(precs) / sizeof(precs[0]); pi++)
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
	for (ci = 0; convs[ci]; ci++) {
		char c = convs[ci];
		bool is_signed = c == 'd' || c == 'i';

		if ((*precs[pi] && strchr(flags[fi], '0')) || (is_signed && strchr(flags[fi], '#')))
			continue;	/* the kernel's own way; undefined in C */
		snprintf(fmt, sizeof(fmt), "%%%s%s%s%s%c", flags[fi], widths[wi], precs[pi],
			 sizes[si].len, c);
		layout[0] = is_signed ? sizes[si].s : sizes[si].u;
		size = sizes[si].size;
		wb_sub(&a, 0, id, 65536, 4, 0, 1 + nvals, DTI_SUBBUF_OPEN);
		wb_format(&a, 0, id, "num", layout, "v", fmt);
		for (k = 0; k < nvals; k++) {
			uint64_t v = size == 8 ? vals[k] : vals[k] & ((1ull << 8 * size) - 1);
			uint16_t id16 = id;

			if (!v && (!strcmp(precs[pi], ".0") || (strchr(flags[fi], '#') && c != 'u')))
				v = 7;	/* the kernel's own way */
			memcpy(p, &id16, sizeof(id16));
			memcpy(p + sizeof(id16), &v, size);	/* little-endian: the low bytes */
			wb_rec(&a, 0, DTI_REC_TYPED, 6, id * (1 + nvals) + k, 10 + k, p,
			       sizeof(id16) + size);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			if (size == 8)
				n = snprintf(line, sizeof(line), fmt, (long long)v);
			else if (size == 4)
				n = snprintf(line, sizeof(line), fmt, (int)v);
			else if (size == 2)
				n = snprintf(line, sizeof(line), fmt,
					     is_signed ? (int)(int16_t)v : (int)(uint16_t)v);
			else
				n = snprintf(line, sizeof(line), fmt,
					     is_signed ? (int)(int8_t)v : (int)(uint8_t)v);
#pragma GCC diagnostic pop
			wb_put(&want, line, n);
			wb_put(&want, "\n", 1);
		}
		id++;
	}
	wb_put(&want, "", 1);
	CHECK(id > 1000);
	for (k = 0; k < 2; k++) {
		mem = a.p;
		r = dti_open_mem(&mem, &a.len, 1, 0);
		f = open_memstream(&out, &len);
		CHECK(r && f && dti_print_records(r, f, k ? DTI_FMT_JSON : DTI_FMT_TEXT, 0) == 0);
		dti_close(r);
		fclose(f);
		if (k) {
			/* JSON: each object's "text", numbers copied from its "fields" */
			char *o = out, *q, *t;

			for (q = out; (t = strstr(q, ",\"text\":\"")); q = strchr(t, '\n') + 1) {
				t += 9;
				n = strstr(t, "\"}\n") - t;
				memmove(o, t, n);
				o += n;
				*o++ = '\n';
			}
			*o = 0;
		}
		CHECK_STR(out, (const char *)want.p);
		free(out);
	}
	free(a.p);
	free(want.p);
}

/* What dti_next() returns of the files @paths through filter @f */
static void filtered(const char *const *paths, unsigned int n, struct dti_filter *f,
		     char *out, size_t size)
{
	struct dti_reader *r = dti_open_files(paths, n, 0);
	struct dti_rec rec;
	FILE *o;

	out[0] = 0;	/* fmemopen() leaves it as it is if nothing is written */
	o = fmemopen(out, size, "w");
	CHECK(r && o);
	CHECK(dti_set_filter(r, f) == 0);
	while (r && dti_next(r, &rec) > 0)
		fprintf(o, "%u/%d/%" PRIu64 " ", rec.cpu, rec.level, rec.ts_ns);
	fclose(o);
	dti_close(r);
}

/*
 * Filters (dti_set_filter()): levels, CPU lists, times from boot, from
 * the first and from the last record, --grep on text and on typed
 * events, field expressions; the same through dti_print_records(); field
 * access; and the errors of each builder, which say what is wrong where.
 */
static void test_filters(void)
{
	const char *paths[2] = { tpath("fl0"), tpath("fl1") };
	static const unsigned char h[3] = { 1, 2, 0xab };
	struct wbuf a = {0}, b = {0};
	struct dti_filter *f;
	enum dti_time_base base;
	struct dti_field fld;
	struct dti_reader *r;
	struct dti_rec rec;
	unsigned char p[512];
	const char *name;
	unsigned int nf;
	char out[4096];
	int64_t ns;
	size_t n;

	/* cpu0: text at 10, 30, 50 (levels 3, 6, 7); cpu1: events at 20, 40 */
	wb_sub(&a, 0, 0, 4096, 4, 0, 3, DTI_SUBBUF_OPEN);
	wb_rec(&a, 0, DTI_REC_TEXT, 3, 0, 10, "disk Error 5", 12);
	wb_rec(&a, 0, DTI_REC_TEXT, 6, 1, 30, "link up", 7);
	wb_rec(&a, 0, DTI_REC_TEXT, 7, 2, 50, "poll", 4);
	wb_save(&a, "fl0");
	wb_sub(&b, 1, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_format(&b, 1, 7, "ev", "bHIsapqI", "v,arg1,x,s,h,p,arg6,n", EV_FMT);
	n = ev_pack(p, 7, -5, 65535, 0, "ab", h, 3, 0xffff888012345678ull, -9000000000ll, 42);
	wb_rec(&b, 1, DTI_REC_TYPED, 4, 0, 20, p, n);
	n = ev_pack(p, 7, 127, 0, 0xbeef, "eth0", h, 0, 0, 1, 7);
	wb_rec(&b, 1, DTI_REC_TYPED, 6, 1, 40, p, n);
	wb_save(&b, "fl1");

	f = dti_filter_new();
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/3/10 1/4/20 0/6/30 1/6/40 0/7/50 ");
	CHECK(dti_filter_levels(f, DTI_LEVEL_EMERG, DTI_LEVEL_WARNING) == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/3/10 1/4/20 ");
	CHECK(dti_filter_levels(f, DTI_LEVEL_DEBUG, DTI_LEVEL_INFO) == 0);	/* either order */
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/6/30 1/6/40 0/7/50 ");
	CHECK(dti_filter_cpus(f, "1") == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/6/40 ");
	CHECK(dti_filter_cpus(f, "0,5-7") == 0);	/* adds to CPU 1 */
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/6/30 1/6/40 0/7/50 ");
	dti_filter_free(f);

	/* times: since boot, after the first record, before the last */
	f = dti_filter_new();
	CHECK(dti_filter_since(f, DTI_TIME_BOOT, 20) == 0 &&
	      dti_filter_until(f, DTI_TIME_BOOT, 40) == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/4/20 0/6/30 1/6/40 ");
	CHECK(dti_filter_since(f, DTI_TIME_FIRST, 15) == 0 &&
	      dti_filter_until(f, DTI_TIME_LAST, -15) == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/6/30 ");
	CHECK(dti_filter_until(f, DTI_TIME_LAST, 0) == 0 &&
	      dti_filter_since(f, DTI_TIME_LAST, -10) == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/6/40 0/7/50 ");
	/* a pipe cannot be read twice for its last record */
	{
		const struct wbuf one = { .p = (unsigned char *)"", .len = 0 };
		int fds[2];

		r = open_pipes(1, &one, 1, fds);
		CHECK(r && dti_set_filter(r, f) == -1 && errno == ESPIPE);
		dti_close(r);
		close_pipes(1, fds);
	}
	dti_filter_free(f);

	CHECK(dti_filter_since(f = dti_filter_new(), DTI_TIME_BOOT, 30) == 0 &&
	      dti_filter_until(f, DTI_TIME_BOOT, 20) == -1 && errno == EINVAL &&
	      strstr(dti_errmsg(), "since is after until"));
	filtered(paths, 2, f, out, sizeof(out));	/* the until refused is not set */
	CHECK_STR(out, "0/6/30 1/6/40 0/7/50 ");
	dti_filter_free(f);
	CHECK(dti_time_parse("12.5", &base, &ns) == 0 && base == DTI_TIME_BOOT &&
	      ns == 12500000000LL);
	CHECK(dti_time_parse("+2ms", &base, &ns) == 0 && base == DTI_TIME_FIRST && ns == 2000000);
	CHECK(dti_time_parse("-1.5min", &base, &ns) == 0 && base == DTI_TIME_LAST &&
	      ns == -90000000000LL);
	CHECK(dti_time_parse("7ns", &base, &ns) == 0 && ns == 7);
	CHECK(dti_time_parse("10 s", &base, &ns) == -1 && errno == EINVAL &&
	      strstr(dti_errmsg(), "time \"10 s\": expected SECONDS since boot"));
	CHECK(dti_time_parse("99999999999999999999", &base, &ns) == -1 && errno == ERANGE);
	CHECK(dti_time_parse("10d", &base, &ns) == -1 && errno == EINVAL);

	/* grep: smart case, typed events as their text, binary never */
	f = dti_filter_new();
	CHECK(dti_filter_grep(f, "error", 0) == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/3/10 ");
	CHECK(dti_filter_grep(f, "error", DTI_GREP_CASE) == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "");
	CHECK(dti_filter_grep(f, "Error", 0) == 0);	/* a capital: exact */
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/3/10 ");
	CHECK(dti_filter_grep(f, "x 0xbeef s 'eth0'", 0) == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/6/40 ");
	CHECK(dti_filter_grep(f, "a(b", 0) == -1 && errno == EINVAL &&
	      strstr(dti_errmsg(), "\"a(b\" is no regular expression: "));
	CHECK(dti_filter_grep(f, "x", DTI_GREP_CASE | DTI_GREP_ICASE) == -1 && errno == EINVAL);
	dti_filter_free(f);

	/* field expressions */
	f = dti_filter_new();
	CHECK(dti_filter_expr(f, "v < 0") == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/4/20 ");
	CHECK(dti_filter_expr(f, "arg6 == -9000000000 || (s ~ \"eth*\" && x >= 0xbeef)") == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/4/20 1/6/40 ");
	CHECK(dti_filter_expr(f, "p == 0xffff888012345678") == 0);	/* beyond INT64_MAX */
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/4/20 ");
	CHECK(dti_filter_expr(f, "!(event == ev) && level <= notice") == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/3/10 ");
	CHECK(dti_filter_expr(f, "n != 42 && cpu == 1") == 0);
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/6/40 ");
	CHECK(dti_filter_expr(f, "nosuch == 1 || s == 1") == 0);	/* false both */
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "");
	CHECK(dti_filter_expr(f, "n > -1") == 0);	/* unsigned field, negative value */
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "1/4/20 1/6/40 ");
	CHECK(dti_filter_expr(f, "status != 0 &&") == -1 && errno == EINVAL &&
	      strstr(dti_errmsg(), "expression \"status != 0 &&\": a field name was expected at column 15 (the end)"));
	CHECK(dti_filter_expr(f, "a = = 1") == -1 &&
	      strstr(dti_errmsg(), "a value was expected at column 5"));
	CHECK(dti_filter_expr(f, "(a == 1") == -1 && strstr(dti_errmsg(), "')' was expected"));
	CHECK(dti_filter_expr(f, "a == 1 b") == -1 &&
	      strstr(dti_errmsg(), "'&&', '||' or the end was expected at column 8"));
	CHECK(dti_filter_expr(f, "s == \"ab") == -1 && strstr(dti_errmsg(), "unterminated string"));
	CHECK(dti_filter_expr(f, "a 1") == -1 && strstr(dti_errmsg(), "an operator"));
	/* and through dti_print_records() */
	CHECK(dti_filter_expr(f, "x == 0xbeef") == 0);
	r = dti_open_files(paths, 2, 0);
	out[0] = 0;
	{
		FILE *o = fmemopen(out, sizeof(out), "w");

		CHECK(r && dti_set_filter(r, f) == 0 &&
		      dti_print_records(r, o, DTI_FMT_TEXT, 0) == 0);
		fclose(o);
	}
	CHECK_STR(out, "v 127/0 x 0xbeef s 'eth0' h  p 0000000000000000 1% n 7\n");
	dti_close(r);
	dti_filter_free(f);
	CHECK(dti_filter_cpus(f = dti_filter_new(), "1-0") == -1 &&
	      strstr(dti_errmsg(), "range 1-0 runs backwards"));
	CHECK(dti_filter_cpus(f, "0,x") == -1 &&
	      strstr(dti_errmsg(), "a CPU number was expected at \"x\""));
	CHECK(dti_filter_cpus(f, "65536") == -1 && strstr(dti_errmsg(), "out of range"));
	CHECK(dti_filter_cpus(f, "") == -1 && errno == EINVAL);
	CHECK(dti_filter_levels(f, 0, 8) == -1 && errno == EINVAL);
	CHECK(dti_filter_priority(f, "off") == -1 && errno == EINVAL &&
	      strstr(dti_errmsg(), "priority \"off\": LEVEL or LEVEL..LEVEL"));
	CHECK(dti_filter_priority(f, "loud..err") == -1 && dti_filter_priority(f, "err..") == -1);
	dti_filter_free(f);
	f = dti_filter_new();
	CHECK(dti_filter_priority(f, "WARNING") == 0);	/* and more severe */
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/3/10 1/4/20 ");
	CHECK(dti_filter_priority(f, "debug..6") == 0);	/* a range, either order */
	filtered(paths, 2, f, out, sizeof(out));
	CHECK_STR(out, "0/6/30 1/6/40 0/7/50 ");
	dti_filter_free(f);

	/* field access */
	r = dti_open_files(paths, 2, 0);
	CHECK(r && dti_next(r, &rec) == 1);	/* cpu0's text */
	CHECK(dti_event_info(r, &rec, &name, &nf) == -1 && errno == ENOENT &&
	      strstr(dti_errmsg(), "not a typed event"));
	CHECK(dti_next(r, &rec) == 1 && dti_event_info(r, &rec, &name, &nf) == 7 &&
	      !strcmp(name, "ev") && nf == 8);
	CHECK(dti_event_field(r, &rec, 0, &fld) == 0 && !strcmp(fld.name, "v") &&
	      fld.type == DTI_FIELD_INT && fld.size == 1 && fld.i == -5);
	CHECK(dti_event_field(r, &rec, 1, &fld) == 0 && fld.type == DTI_FIELD_UINT &&
	      fld.size == 2 && fld.u == 65535);
	CHECK(dti_event_field_by_name(r, &rec, "s", &fld) == 0 && fld.type == DTI_FIELD_STR &&
	      fld.len == 2 && !memcmp(fld.data, "ab", 2));
	CHECK(dti_event_field_by_name(r, &rec, "h", &fld) == 0 && fld.type == DTI_FIELD_BYTES &&
	      fld.len == 3 && !memcmp(fld.data, h, 3));
	CHECK(dti_event_field_by_name(r, &rec, "p", &fld) == 0 && fld.type == DTI_FIELD_PTR &&
	      fld.size == 8 && fld.u == 0xffff888012345678ull);
	CHECK(dti_event_field_by_name(r, &rec, "arg6", &fld) == 0 && fld.i == -9000000000LL);
	CHECK(dti_event_field(r, &rec, 8, &fld) == -1 && errno == ENOENT);
	CHECK(dti_event_field_by_name(r, &rec, "nosuch", &fld) == -1 && errno == ENOENT &&
	      strstr(dti_errmsg(), "event ev has no field nosuch"));
	dti_close(r);
}

/*
 * An event's string in JSON is escaped as a payload is (test_json_utf8):
 * valid UTF-8 kept, other bytes as \u00XX (it was each byte's \u00XX,
 * with a NUL in it)
 */
static void test_event_json_utf8(void)
{
	static const char text[] = UTF8_TEXT;
	uint16_t id = 7, len = sizeof(text) - 1;
	unsigned char p[sizeof(text) + 4];
	struct wbuf a = {0};
	struct seen s;

	memcpy(p, &id, 2);
	memcpy(p + 2, &len, 2);
	memcpy(p + 4, text, len);
	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_format(&a, 0, 7, "ev", "s", "s", "%s");
	wb_rec(&a, 0, DTI_REC_TYPED, 6, 0, 2, p, len + 4);
	wb_save(&a, "utf1");
	CHECK(read_files(&s, DTI_FMT_JSON, 1, "utf1") == 0);
	CHECK(strstr(s.out, ",\"event\":\"ev\",\"id\":7,\"fields\":{\"s\":\"" UTF8_JSON "\"},")
	      != NULL);
	CHECK_STR(s.notices, "");
	free(a.p);
}

/* ---- several channels: merges ---- */

/* Channel @name's records, cpu0 and cpu1, in @buf[0..1]: "NAME-t" at time t */
static void merge_chan(struct wbuf *buf, const char *name, const uint64_t *ts0,
		       unsigned int n0, const uint64_t *ts1, unsigned int n1)
{
	char text[32];
	unsigned int i;

	sub_name = name;
	wb_sub(&buf[0], 0, 0, 4096, 4, 0, n0, DTI_SUBBUF_OPEN);
	for (i = 0; i < n0; i++) {
		snprintf(text, sizeof(text), "%s-%llu", name, (unsigned long long)ts0[i]);
		wb_text(&buf[0], 0, i, ts0[i], text);
	}
	wb_sub(&buf[1], 1, 0, 4096, 4, 0, n1, DTI_SUBBUF_OPEN);
	for (i = 0; i < n1; i++) {
		snprintf(text, sizeof(text), "%s-%llu", name, (unsigned long long)ts1[i]);
		/* a gap on cpu1 of each channel: seq 0, 2, 3 ... */
		wb_text(&buf[1], 1, i ? i + 1 : 0, ts1[i], text);
	}
	sub_name = SUB_NAME;
}

static struct dti_reader *merge_open_mem(const struct wbuf *buf)
{
	const void *p[2] = { buf[0].p, buf[1].p };
	size_t len[2] = { buf[0].len, buf[1].len };

	return dti_open_mem(p, len, 2, 0);
}

/* A merge of "alpha" (given its name) and "beta" (named by its data), with @f */
static struct dti_reader *merge_two(const struct wbuf *a, const struct wbuf *b,
				    const struct dti_filter *f)
{
	struct dti_reader *m = dti_merge_new();

	CHECK(m != NULL);
	CHECK(dti_merge_add(m, merge_open_mem(a), "alpha") == 0);
	CHECK(dti_merge_add(m, merge_open_mem(b), NULL) == 1);
	if (f)
		CHECK(dti_set_filter(m, f) == 0);
	return m;
}

/* "CHANNEL:text " of every record of @m, and the merge's notices */
static void merge_drain(struct dti_reader *m, char *out, size_t size, struct seen *s)
{
	struct dti_rec rec;
	size_t len = 0;
	int i;

	memset(s, 0, sizeof(*s));
	dti_set_notice_handler(m, on_notice, s);
	out[0] = 0;
	while (dti_next(m, &rec) > 0) {
		i = dti_merge_last(m);
		CHECK(i == 0 || i == 1);
		len += snprintf(out + len, size - len, "%s:%.*s ", i >= 0 ?
				dti_merge_name(m, i) : "?", (int)rec.len,
				(const char *)rec.payload);
	}
	CHECK(dti_merge_last(m) < 0 && errno == ENOENT);
	s->damage = dti_damage_count(m);
}

/* The records merge_drain() shows of merge_two(@a, @b, @f) are @want */
static void merge_check(const struct wbuf *a, const struct wbuf *b,
			const struct dti_filter *f, const char *want)
{
	struct dti_reader *m = merge_two(a, b, f);
	char out[4096];
	struct seen s;

	merge_drain(m, out, sizeof(out), &s);
	CHECK_STR(out, want);
	dti_close(m);
}

static void test_merge_channels(void)
{
	static const uint64_t a0[] = { 100, 300, 300, 500 }, a1[] = { 200, 600 };
	static const uint64_t b0[] = { 150, 200 }, b1[] = { 300, 350, 700 };
	struct wbuf a[2] = {{0}}, b[2] = {{0}};
	struct dti_filter *f;
	struct dti_reader *m, *r, *other;
	char out[4096], want[4096], *text;
	struct seen s;
	size_t size;

	merge_chan(a, "alpha", a0, 4, a1, 2);
	merge_chan(b, "beta", b0, 2, b1, 3);
	/* by time; ties to the reader added first (not the lower CPU), then its order */
	m = merge_two(a, b, NULL);
	merge_drain(m, out, sizeof(out), &s);
	CHECK_STR(out, "alpha:alpha-100 beta:beta-150 alpha:alpha-200 beta:beta-200 "
		  "alpha:alpha-300 alpha:alpha-300 beta:beta-300 beta:beta-350 "
		  "alpha:alpha-500 alpha:alpha-600 beta:beta-700 ");
	/* each channel's gap on cpu1 told by its own reader */
	CHECK_STR(s.notices, "1 records lost on cpu1 between seq 1 and 2\n"
		  "1 records lost on cpu1 between seq 1 and 2\n");
	CHECK(dti_nr_streams(m) == 4);
	CHECK(dti_merge_reader(m, 1) != NULL && dti_merge_reader(m, 2) == NULL);
	r = dti_merge_new();
	CHECK(dti_merge_add(m, r, NULL) < 0 && errno == EINVAL);
	dti_close(r);
	dti_close(m);

	/* printed: a channel column as wide as the longest name; JSON's channel */
	text = print_all(merge_two(a, b, NULL), DTI_FMT_TEXT, &size, false);
	CHECK_STR(text, "alpha alpha-100\nbeta  beta-150\nalpha alpha-200\nbeta  beta-200\n"
		  "alpha alpha-300\nalpha alpha-300\nbeta  beta-300\nbeta  beta-350\n"
		  "alpha alpha-500\nalpha alpha-600\nbeta  beta-700\n");
	free(text);
	text = print_all(merge_two(a, b, NULL), DTI_FMT_TS, &size, false);
	CHECK(!strncmp(text, "alpha [    0.000000100] cpu0 L3 #0 0xffffffffc0001234: alpha-100\n"
		       "beta  [    0.000000150] cpu0 L3 #0 0xffffffffc0001234: beta-150\n", 129));
	free(text);
	text = print_all(merge_two(a, b, NULL), DTI_FMT_JSON, &size, false);
	CHECK(strstr(text, "\"channel\":\"alpha\",\"cpu\":0,\"level\":3,\"seq\":\"0\"") ==
	      strstr(text, "\"channel\":"));
	CHECK(strstr(text, "{\"ts_ns\":\"150\",\"channel\":\"beta\",") != NULL);
	free(text);
	/* dti_print_records() prints what the loop does */
	m = merge_two(a, b, NULL);
	{
		char *batch = NULL;
		FILE *fo = open_memstream(&batch, &size);

		while (dti_print_records(m, fo, DTI_FMT_TS, 3) > 0)
			;
		CHECK(dti_print_records(m, fo, DTI_FMT_RAW, 0) < 0 && errno == EINVAL);
		dti_close(m);
		fclose(fo);
		text = print_all(merge_two(a, b, NULL), DTI_FMT_TS, &size, false);
		CHECK_STR(batch, text);
		free(text);
		free(batch);
	}

	/* a filter: CPUs and levels per channel, times of the merged records */
	f = dti_filter_new();
	CHECK(dti_filter_cpus(f, "1") == 0);
	merge_check(a, b, f, "alpha:alpha-200 beta:beta-300 beta:beta-350 alpha:alpha-600 "
		    "beta:beta-700 ");
	/* from the first record of all (100), not of each (beta's 150) */
	CHECK(dti_filter_since(f, DTI_TIME_FIRST, 150) == 0);
	CHECK(dti_filter_until(f, DTI_TIME_FIRST, 560) == 0);
	merge_check(a, b, f, "beta:beta-300 beta:beta-350 alpha:alpha-600 ");
	dti_filter_free(f);
	/* from the last of all (beta's 700), not of each (alpha's 600) */
	f = dti_filter_new();
	CHECK(dti_filter_since(f, DTI_TIME_LAST, -150) == 0);
	merge_check(a, b, f, "alpha:alpha-600 beta:beta-700 ");
	dti_filter_free(f);

	/* one reader: no column; what is refused */
	m = dti_merge_new();
	r = merge_open_mem(b);
	CHECK(dti_merge_last(m) < 0 && errno == ENOENT);
	CHECK(dti_merge_add(r, m, NULL) < 0 && errno == EINVAL);
	CHECK(dti_merge_add(m, r, NULL) == 0);
	other = dti_merge_new();
	CHECK(dti_merge_add(other, r, NULL) < 0 && errno == EINVAL);
	dti_close(other);
	CHECK(dti_set_channel_name(m, "x") < 0 && errno == EINVAL);
	CHECK(dti_merge_name(m, 0) == NULL && errno == ENOENT);	/* not read yet */
	text = print_all(m, DTI_FMT_TEXT, &size, false);
	snprintf(want, sizeof(want), "beta-150\nbeta-200\nbeta-300\nbeta-350\nbeta-700\n");
	CHECK_STR(text, want);
	free(text);
	for (int i = 0; i < 2; i++) {
		free(a[i].p);
		free(b[i].p);
	}
}

static const struct unit_test tests[] = {
	{ "merge of two CPUs by timestamp", test_merge_two_cpus },
	{ "event types: formats learnt, events printed through them", test_events },
	{ "event types: events in a run, damaged ones in it", test_events_run },
	{ "event types: a format goes first, records by their own times", test_formats_take_no_time },
	{ "blobs: text, JSON, export, dti_blob_info()", test_blobs },
	{ "event types: numbers as C's printf prints them, every flag", test_events_printf },
	{ "filters: levels, CPU lists, times, grep, fields; field access", test_filters },
	{ "an event's string escaped in JSON as a payload is", test_event_json_utf8 },
	{ "equal timestamps: lower CPU first, CPU order kept", test_equal_timestamps },
	{ "several channels merged: order, names, printing, filters", test_merge_channels },
	{ "empty CPUs", test_empty_cpus },
	{ "gaps and backwards sequence numbers", test_gaps },
	{ "replayed records keep their logging CPU", test_replayed_records },
	{ "raw copy of a wrapped ring with padding", test_raw_wrapped_ring_with_padding },
	{ "raw copy with unused sub-buffers", test_raw_unused_subbufs },
	{ "a sub-buffer read open, then closed", test_stream_open_then_closed },
	{ "read() stream after wrap-around, zero fill", test_stream_wraparound_and_zero_fill },
	{ "--format raw output decodes again", test_raw_output_roundtrip },
	{ "record version 2: compact records and their chains", test_compact_chains },
	{ "record version 2: a damaged sub-buffer is not read", test_compact_damage },
	{ "record version 2: a read() that starts in a sub-buffer", test_compact_continued },
	{ "record version 2: raw output is whole records", test_compact_raw_output },
	{ "truncated input: strict fails, default reports", test_truncated },
	{ "sub-buffer shorter than its record count", test_short_subbuf },
	{ "corrupt input: strict fails, default resynchronises", test_corrupt },
	{ "a cut file does not hide the other CPUs", test_cut_file_keeps_other_cpus },
	{ "a bad byte: resynchronised at the next sub-buffer", test_bad_byte_resyncs },
	{ "raw copy: a bad slot is skipped, never read as a stream", test_raw_damaged_slot },
	{ "every header field checked", test_header_fields },
	{ "duplicate CPUs merged once", test_duplicate_cpus },
	{ "files of two channels", test_mixed_channels },
	{ "files with no DTI data", test_no_dti_data },
	{ "a reused snapshot directory", test_reused_snapshot_dir },
	{ "pipes read in any chunk sizes, as files and memory", test_pipe_chunks },
	{ "JSON passes UTF-8, escapes invalid bytes", test_json_utf8 },
	{ "big payloads, output and notices in order", test_big_payload_and_order },
	{ "byte-swapped records", test_byte_swapped },
	{ "output formats", test_formats },
	{ "formatter callback", test_formatter_callback },
	{ "40000 records through small buffers", test_many_records_stream },
	{ "runs of one CPU's records, from files, memory and pipes", test_runs },
	{ "record version 2: runs of compact records, printed as the loop", test_compact_runs },
	{ "record version 2: compact records in the other byte order", test_compact_byte_swapped },
	{ "raw output in runs, with other output and FILEs between", test_raw_runs_and_files },
	{ "dti_print_records() prints as dti_next() and dti_print()", test_print_records },
	{ "every payload length in every format", test_print_lengths },
	{ "a long stream in the other byte order", test_byte_swapped_long },
	{ "directories and memory sources", test_open_dir_and_mem },
	{ "channel control on a fake debugfs", test_control_fake_debugfs },
	{ "kernel symbols", test_ksyms },
	{ "kallsyms files with no symbol, long lines", test_ksyms_bad_files },
	{ "snapshot info and stats that say nothing or too much", test_snapshot_bad_info_stats },
	{ "dti decode on the command line", test_cli_decode },
};

int main(int argc, char **argv)
{
	char cli[sizeof(tmpdir) + 8];

	if (argc > 1)
		bindir = argv[1];	/* where dti is */

	if (unit_setup("test"))
		return 2;
	snprintf(cli, sizeof(cli), "%s/cli", tmpdir);
	mkdir(cli, 0755);
	unit_run(tests, sizeof(tests) / sizeof(tests[0]));
	printf("dti_print_records() compared with the loop on %lu sources\n",
	       batch_checked);
	return unit_finish();
}
