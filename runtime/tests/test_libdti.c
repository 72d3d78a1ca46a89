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

static int passed, failed, cur_failed;
static char tmpdir[256];

#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		cur_failed = 1; \
	} \
} while (0)

#define CHECK_STR(got, want) do { \
	const char *_g = (got), *_w = (want); \
	if (!_g || strcmp(_g, _w)) { \
		printf("  FAIL %s:%d: %s\n    got:  '%s'\n    want: '%s'\n", \
		       __FILE__, __LINE__, #got, _g ? _g : "(null)", _w); \
		cur_failed = 1; \
	} \
} while (0)

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
static unsigned int log_cpu_next = -1U;	/* log_cpu of the next record, if set */

static void wb_rec(struct wbuf *b, unsigned int cpu, unsigned int flags,
		   int level, uint64_t seq, uint64_t ts, const void *payload,
		   uint32_t len)
{
	struct dti_record r = {
		.magic = DTI_RECORD_MAGIC, .version = DTI_RECORD_VERSION,
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
	strcpy(in.name, "test");
	wb_rec(b, cpu, DTI_REC_SUBBUF, 0, number, 1, &in, sizeof(in));
}

static char *tpath(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static void wb_save(struct wbuf *b, const char *name)
{
	FILE *f = fopen(tpath(name), "w");

	fwrite(b->p, 1, b->len, f);
	fclose(f);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- reading back ---- */

struct seen {
	char out[65536];	/* dti_print(DTI_FMT_TEXT) of every record */
	char notices[4096];
	int n, rc;
	char err[512];
};

static void on_notice(const struct dti_notice *n, void *arg)
{
	struct seen *s = arg;

	strncat(s->notices, n->message, sizeof(s->notices) - strlen(s->notices) - 2);
	strcat(s->notices, "\n");
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
	fclose(f);
	if (s->rc < 0)
		snprintf(s->err, sizeof(s->err), "%s", dti_errmsg());
}

static int read_files(struct seen *s, enum dti_format fmt, int n, ...)
{
	const char *paths[8];
	struct dti_reader *r;
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		paths[i] = tpath(va_arg(ap, const char *));
	va_end(ap);
	r = dti_open_files(paths, n, 0);
	if (!r) {
		memset(s, 0, sizeof(*s));
		snprintf(s->err, sizeof(s->err), "%s", dti_errmsg());
		return -1;
	}
	drain(r, s, fmt);
	dti_close(r);
	return s->rc;
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

static void test_raw_wrapped_ring_with_padding(void)
{
	struct wbuf b = {0};
	struct seen s;
	char want[1024] = "";
	char line[32];
	uint64_t num[] = { 2, 3, 4, 5 };
	unsigned int i, k, nrec[] = { 3, 4, 5, 2 };

	raw_sub(&b, 4, 5, DTI_SUBBUF_CLOSED, false);
	raw_sub(&b, 5, 2, DTI_SUBBUF_OPEN, false);
	raw_sub(&b, 2, 3, DTI_SUBBUF_CLOSED, false);
	raw_sub(&b, 3, 4, DTI_SUBBUF_CLOSED, true);
	wb_save(&b, "raw0");
	for (k = 0; k < 4; k++)
		for (i = 0; i < nrec[k]; i++) {
			snprintf(line, sizeof(line), "s%llu-%u\n",
				 (unsigned long long)num[k], i);
			strcat(want, line);
		}
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "raw0") == 0);
	CHECK_STR(s.out, want);
	CHECK(strstr(s.out, "STALE") == NULL);
	/* seq jumps by sub-buffer in this synthetic ring: reported as gaps */
	CHECK(strstr(s.notices, "records lost on cpu0 between seq 203 and 300") != NULL);
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

static void test_truncated(void)
{
	struct wbuf a = {0};
	struct seen s;
	size_t full;

	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 10, "complete");
	full = a.len;
	wb_text(&a, 0, 1, 11, "cut short here");
	a.len -= 10;
	wb_save(&a, "t0");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "t0") == -1);
	CHECK_STR(s.out, "complete\n");
	{
		char want[200];

		snprintf(want, sizeof(want),
			 "%s: truncated record at offset %zu: 56 bytes, 46 left in the file",
			 tpath("t0"), full);
		CHECK_STR(s.err, want);
	}
	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 10, "complete");
	full = a.len;
	wb_put(&a, "\x1a\xd7\x01", 3);
	wb_save(&a, "t1");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "t1") == -1);
	CHECK(strstr(s.err, "truncated record header at offset") != NULL);
	CHECK(errno == EBADMSG);
}

static void test_corrupt(void)
{
	struct wbuf a = {0};
	struct seen s;
	size_t off;
	char want[200];

	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 10, "good");
	off = a.len;
	wb_text(&a, 0, 1, 11, "bad magic");
	a.p[off] ^= 0x55;
	wb_save(&a, "c0");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "c0") == -1);
	snprintf(want, sizeof(want), "%s: corrupt data at offset %zu: bad magic (not DTI data)",
		 tpath("c0"), off);
	CHECK_STR(s.err, want);

	/* impossible length */
	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	off = a.len;
	wb_text(&a, 0, 1, 11, "huge");
	((struct dti_record *)(a.p + off))->len = 0x7fffffff;
	wb_save(&a, "c1");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "c1") == -1);
	CHECK(strstr(s.err, "impossible header or payload length") != NULL);

	/* unknown version */
	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	off = a.len;
	wb_text(&a, 0, 1, 11, "v2");
	((struct dti_record *)(a.p + off))->version = 2;
	wb_save(&a, "c2");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "c2") == -1);
	CHECK(errno == EPROTO);
	CHECK(strstr(s.err, "record version 2 at offset") != NULL);

	/* zero bytes followed by a record that is not a sub-buffer header */
	wb_sub(&a, 0, 0, 4096, 4, 0, 2, DTI_SUBBUF_OPEN);
	wb_zero(&a, 16);
	wb_text(&a, 0, 1, 11, "x");
	wb_save(&a, "c3");
	CHECK(read_files(&s, DTI_FMT_TEXT, 1, "c3") == -1);
	CHECK(strstr(s.err, "zero bytes followed by") != NULL);
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
	CHECK(strstr(s.out, "{\"ts_ns\":4,\"cpu\":0,\"level\":2,\"seq\":3,\"flags\":3,"
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
	r = dti_open_mem(bufs, lens, 2);
	CHECK(r != NULL);
	if (r) {
		drain(r, &s, DTI_FMT_TEXT);
		CHECK_STR(s.out, "mem0\n");
		dti_close(r);
	}
	free(a.p);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
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
		   "ffffffffc0002000 t other\t[othermod]\n");
	ks = dti_ksyms_load(tpath("kallsyms"));
	CHECK(ks != NULL);
	CHECK(dti_ksyms_format(ks, 0xffffffff81000110ull, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "first_func+0x10/0x80");
	CHECK(dti_ksyms_format(ks, 0xffffffffc0001004ull, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "mod_a+0x4/0x100 [dti_test]");
	CHECK(dti_ksyms_format(ks, 0x1000, buf, sizeof(buf)) == -1 && errno == ENOENT);
	CHECK_STR(buf, "0x1000");
	dti_ksyms_free(ks);
	write_file(tpath("kallsyms0"), "0000000000000000 T _stext\n");
	CHECK(dti_ksyms_load(tpath("kallsyms0")) == NULL && errno == EACCES);
	CHECK(dti_ksyms_load(tpath("missing")) == NULL && errno == ENOENT);
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
	snprintf(cmd, sizeof(cmd), "%s/dti decode -F ts %s", bindir, tpath("cli"));
	CHECK(run_cmd(cmd, out, sizeof(out)) == 1);
	snprintf(cmd, sizeof(cmd),
		 "[    1.000000001] cpu0 L3 #0 0xffffffffc0001234: one\n"
		 "dti: warning: 1 records lost on cpu0 between seq 1 and 2\n"
		 "[    1.000000002] cpu0 L3 #2 0xffffffffc0001234: three\n"
		 "dti: %s: truncated record at offset %zu: 48 bytes, 45 left in the file\n",
		 tpath("cli/trace0"), off);
	CHECK_STR(out, cmd);
	snprintf(cmd, sizeof(cmd), "%s/dti decode --bogus x", bindir);
	CHECK(run_cmd(cmd, out, sizeof(out)) == 129);
	snprintf(cmd, sizeof(cmd), "%s/dti decode --help", bindir);
	CHECK(run_cmd(cmd, out, sizeof(out)) == 0 && !strncmp(out, "usage: dti decode", 17));
	snprintf(cmd, sizeof(cmd), "%s/dti --debugfs %s list", bindir, tmpdir);
	CHECK(run_cmd(cmd, out, sizeof(out)) == 1);
	CHECK(strstr(out, "DTI is not loaded") != NULL);
}

static void test_example_formatter(void)
{
	struct wbuf a = {0};
	unsigned char req[32] = {
		7, 0, 0, 0,  2, 0, 0, 0,		/* id 7, state 2 */
		0xe8, 3, 0, 0, 0, 0, 0, 0,		/* submit_ns 1000 */
		250, 0, 0, 0, 0, 0, 0, 0,		/* latency_ns 250 */
		0xfb, 0xff, 0xff, 0xff,			/* result -5 */
		3, 0, 0, 0,				/* flags 0x3 */
	};
	char cmd[1024], out[4096];

	wb_sub(&a, 0, 0, 4096, 4, 0, 3, DTI_SUBBUF_OPEN);
	wb_text(&a, 0, 0, 5, "submit");
	wb_rec(&a, 0, 0, 6, 1, 6, req, sizeof(req));
	wb_rec(&a, 0, 0, 6, 2, 7, req, 4);
	wb_save(&a, "sample0");
	snprintf(cmd, sizeof(cmd), "%s/dti_sample_fmt %s", bindir, tpath("sample0"));
	CHECK(run_cmd(cmd, out, sizeof(out)) == 0);
	CHECK_STR(out,
		  "[    0.000000005] cpu0 L3 #0 0xffffffffc0001234: submit\n"
		  "[    0.000000006] cpu0 L6 #1 0xffffffffc0001234: req id=7 state=active "
		  "submit=1000 latency=250ns result=-5 flags=0x3 (fault)\n"
		  "[    0.000000007] cpu0 L6 #2 0xffffffffc0001234: 07 00 00 00\n");
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "merge of two CPUs by timestamp", test_merge_two_cpus },
	{ "equal timestamps: lower CPU first, CPU order kept", test_equal_timestamps },
	{ "empty CPUs", test_empty_cpus },
	{ "gaps and backwards sequence numbers", test_gaps },
	{ "replayed records keep their logging CPU", test_replayed_records },
	{ "raw copy of a wrapped ring with padding", test_raw_wrapped_ring_with_padding },
	{ "raw copy with unused sub-buffers", test_raw_unused_subbufs },
	{ "read() stream after wrap-around, zero fill", test_stream_wraparound_and_zero_fill },
	{ "--format raw output decodes again", test_raw_output_roundtrip },
	{ "truncated input", test_truncated },
	{ "corrupt input", test_corrupt },
	{ "byte-swapped records", test_byte_swapped },
	{ "output formats", test_formats },
	{ "formatter callback", test_formatter_callback },
	{ "40000 records through small buffers", test_many_records_stream },
	{ "directories and memory sources", test_open_dir_and_mem },
	{ "channel control on a fake debugfs", test_control_fake_debugfs },
	{ "kernel symbols", test_ksyms },
	{ "dti decode on the command line", test_cli_decode },
	{ "examples/dti_sample_fmt formatter", test_example_formatter },
};

int main(int argc, char **argv)
{
	unsigned int i;
	char cmd[300];

	if (argc > 1)
		bindir = argv[1];	/* where dti and dti_sample_fmt are */

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/libdti-test.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(cmd, sizeof(cmd), "%s/cli", tmpdir);
	mkdir(cmd, 0755);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		cur_failed = 0;
		tests[i].fn();
		printf("%s: %s\n", cur_failed ? "FAIL" : "ok  ", tests[i].name);
		if (cur_failed)
			failed++;
		else
			passed++;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
