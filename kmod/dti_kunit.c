// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of DTI's record codec, linked into dti itself
 * (CONFIG_DTI_KUNIT_TEST): the compact headers the writer plans and
 * writes (dti_crec_plan(), dti_crec_write()), the walk every reader
 * inside dti.ko decodes sub-buffers with (dti_walk_start(),
 * dti_walk_next(), dti_rec_size_at()) and the continuation header a
 * trace file's read() starts with (dti_walk_continue()), checked against
 * the format dti_record.h and docs/record-format.md define: its byte
 * layouts, round trips through every header size class and its edges,
 * and the input the walk must refuse.
 *
 * The sub-buffers are built here as dti_write.c frames them: a version-2
 * header whose bases start the chains, then compact records, each with
 * the header dti_crec_plan() planned for it, and the chains moved on as
 * __dti_store() moves them.
 */
#include <kunit/test.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "dti_internal.h"

/* The sub-buffer the tests build: its header's CPU and bases */
#define DTI_KUNIT_CPU		1
#define DTI_KUNIT_LOG_CPU	5	/* a replayed record's logging CPU */
#define DTI_KUNIT_HDR_TS	4000000000ULL
#define DTI_KUNIT_TS_BASE	5000000000ULL
#define DTI_KUNIT_SEQ_BASE	1000
#define DTI_KUNIT_CALLER_PREV	(dti_kunit_base() + 0x40)
#define DTI_KUNIT_NEAR		0x1234	/* a caller within 2 GiB of the base */

/* A caller far from every kernel address: 64 bits, on 64-bit kernels */
#define DTI_KUNIT_FAR_CALLER	0x0000123456789abcULL

/* Bytes of payload the first and the last record of a round trip carry */
#define DTI_KUNIT_A_LEN		4
#define DTI_KUNIT_C_LEN		2

/*
 * DTI_CALLER_BASE, hidden from the optimiser: a function's address plus
 * a constant otherwise folds into a relocation into the middle of
 * dti_walk_start(), which objtool reports under IBT ("relocation to
 * !ENDBR").
 */
static unsigned long dti_kunit_base(void)
{
	unsigned long base = DTI_CALLER_BASE;

	OPTIMIZER_HIDE_VAR(base);
	return base;
}

static void dti_kunit_vfree(void *p)
{
	vfree(p);
}

/* Zeroed memory the test frees when it ends, however it ends */
static void *dti_kunit_alloc(struct kunit *test, size_t size)
{
	void *p = vzalloc(size);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dti_kunit_vfree, p), 0);
	return p;
}

static struct dti_subbuf_info *dti_kunit_info(void *sub)
{
	return sub + sizeof(struct dti_record);
}

/* A version-2 sub-buffer header at @sub, as dti_write_subbuf_header() makes one */
static void dti_kunit_header(void *sub, size_t size, u64 seq_base, u64 ts_base,
			     u64 caller_prev)
{
	struct dti_record *hdr = sub;
	struct dti_subbuf_info *info = dti_kunit_info(sub);

	memset(sub, 0, DTI_SUBBUF_HEADER_SIZE);
	hdr->magic = DTI_RECORD_MAGIC;
	hdr->version = DTI_RECORD_VERSION;
	hdr->flags = DTI_REC_SUBBUF;
	hdr->hdr_len = sizeof(*hdr);
	hdr->cpu = DTI_KUNIT_CPU;
	hdr->len = sizeof(*info);
	hdr->log_cpu = DTI_KUNIT_CPU;
	hdr->ts_ns = DTI_KUNIT_HDR_TS;
	hdr->caller = dti_kunit_base();
	info->subbuf_size = size;
	info->n_subbufs = DTI_N_SUBBUFS_MIN;
	info->state = DTI_SUBBUF_OPEN;
	info->generation = 1;
	strscpy(info->name, "kunit", sizeof(info->name));
	info->seq_base = seq_base;
	info->ts_base = ts_base;
	info->caller_prev = caller_prev;
}

/**
 * struct dti_kunit_sub - a sub-buffer being written by a test
 * @sub:	its start, the header first
 * @size:	its bytes
 * @pos:	where the next record goes
 * @w:		the writer's chains (those of struct dti_trigger_cpu)
 */
struct dti_kunit_sub {
	void *sub;
	size_t size;
	size_t pos;
	struct dti_trigger_cpu w;
};

static void dti_kunit_start(struct dti_kunit_sub *s, void *sub, size_t size)
{
	s->sub = sub;
	s->size = size;
	s->pos = DTI_SUBBUF_HEADER_SIZE;
	memset(&s->w, 0, sizeof(s->w));
	s->w.crec_ts = DTI_KUNIT_TS_BASE;
	s->w.crec_seq = DTI_KUNIT_SEQ_BASE;
	s->w.crec_caller = DTI_KUNIT_CALLER_PREV;
	dti_kunit_header(sub, size, s->w.crec_seq, s->w.crec_ts, s->w.crec_caller);
}

/* The payload byte @i of a record of @len bytes */
static u8 dti_kunit_byte(size_t len, size_t i)
{
	return (u8)(i * 7 + len + 1);
}

/*
 * Store a record of @len payload bytes as __dti_store() does: the
 * header dti_crec_plan() plans, written by dti_crec_write(), the payload,
 * the count, the chains moved on.  Return: the header's bytes.
 */
static unsigned int dti_kunit_put(struct kunit *test, struct dti_kunit_sub *s,
				  const struct dti_meta *meta, u64 seq, size_t len)
{
	u8 info = dti_crec_plan(&s->w, meta, seq, len);
	unsigned int hdr = dti_crec_hdr_size(info, meta->flags);
	void *at = s->sub + s->pos;
	u8 *data;
	size_t i;

	KUNIT_ASSERT_LE(test, s->pos + DTI_CREC_SIZE(hdr, len), (u64)s->size);
	data = dti_crec_write(at, info, meta, seq, len, &s->w);
	KUNIT_ASSERT_PTR_EQ(test, (void *)data, at + hdr);
	for (i = 0; i < len; i++)
		data[i] = dti_kunit_byte(len, i);
	s->w.crec_ts = meta->ts_ns;
	s->w.crec_seq = seq + 1;
	s->w.crec_caller = meta->caller;
	s->pos += DTI_CREC_SIZE(hdr, len);
	dti_kunit_info(s->sub)->records++;
	return hdr;
}

/* A record as a test expects a walk to give it back */
struct dti_kunit_rec {
	struct dti_meta meta;
	u64 seq;
	size_t len;
	size_t off;		/* where it starts in its sub-buffer */
	unsigned int hdr;	/* its header's bytes */
};

static void dti_kunit_expect(struct kunit *test, const struct dti_kunit_rec *r,
			     const struct dti_rview *v, const void *sub)
{
	u8 flags = r->meta.flags;
	size_t i, bad = 0;

	KUNIT_EXPECT_EQ(test, v->ts_ns, r->meta.ts_ns);
	KUNIT_EXPECT_EQ(test, v->seq, r->seq);
	KUNIT_EXPECT_EQ(test, v->caller, (u64)r->meta.caller);
	KUNIT_EXPECT_EQ(test, v->log_cpu,
			flags & DTI_REC_REPLAYED ? (u32)r->meta.cpu : DTI_KUNIT_CPU);
	KUNIT_EXPECT_EQ(test, v->flags, flags);
	KUNIT_EXPECT_EQ(test, v->level, r->meta.level);
	KUNIT_EXPECT_EQ(test, (size_t)v->len, r->len);
	KUNIT_EXPECT_EQ(test, (u64)v->size, DTI_CREC_SIZE(r->hdr, r->len));
	KUNIT_EXPECT_PTR_EQ(test, v->payload, sub + r->off + r->hdr);
	for (i = 0; i < r->len; i++)
		bad += ((const u8 *)v->payload)[i] != dti_kunit_byte(r->len, i);
	KUNIT_EXPECT_EQ(test, bad, 0);
}

/* ---- dti_crec: the layout, the plan and the written bytes ---- */

static void dti_crec_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct dti_crec), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct dti_crec, len), 0);
	KUNIT_EXPECT_EQ(test, offsetof(struct dti_crec, flags), 2);
	KUNIT_EXPECT_EQ(test, offsetof(struct dti_crec, info), 3);
	KUNIT_EXPECT_EQ(test, offsetof(struct dti_crec, ts_delta), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct dti_record), 40);
	/* "at the start of a sub-buffer its header (120 bytes)" */
	KUNIT_EXPECT_EQ(test, DTI_SUBBUF_HEADER_SIZE, 120);
	KUNIT_EXPECT_EQ(test, DTI_CREC_HDR_MAX, 40);
	KUNIT_EXPECT_EQ(test, DTI_CREC_SIZE(8, 0), 8);
	KUNIT_EXPECT_EQ(test, DTI_CREC_SIZE(8, 1), 12);
	KUNIT_EXPECT_EQ(test, DTI_CREC_SIZE(12, 4), 16);
	KUNIT_EXPECT_EQ(test, DTI_CREC_SIZE(12, 5), 20);
	/* The sizes docs/record-format.md's table gives */
	KUNIT_EXPECT_EQ(test, DTI_CREC_SIZE(8, 2 + 12), 24);	/* event, same caller */
	KUNIT_EXPECT_EQ(test, DTI_CREC_SIZE(12, 2 + 12), 28);	/* another call site's */
	KUNIT_EXPECT_EQ(test, DTI_CREC_SIZE(8, 64), 72);
	KUNIT_EXPECT_EQ(test, DTI_CREC_SIZE(12, 40), 52);
	KUNIT_EXPECT_EQ(test, DTI_RECORD_SIZE(64), 104);
}

static void dti_crec_hdr_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(DTI_CREC_CALLER_SAME, 0), 8);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(0, 0), 8);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(DTI_CREC_CALLER32, 0), 12);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(DTI_CREC_CALLER64, 0), 16);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(DTI_CREC_LEN32 | DTI_CREC_CALLER_SAME, 0), 12);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(DTI_CREC_TS64 | DTI_CREC_CALLER_SAME, 0), 16);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(DTI_CREC_SKIP | DTI_CREC_CALLER_SAME, 0), 16);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(DTI_CREC_CALLER_SAME, DTI_REC_REPLAYED), 12);
	/* The level bits and the other flags take no bytes */
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(DTI_CREC_LEVEL | DTI_CREC_CALLER_SAME,
						(u8)~DTI_REC_REPLAYED), 8);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(0xff & ~DTI_CREC_CALLER32, 0xff),
			DTI_CREC_HDR_MAX);
}

/* Every level goes into the info byte's level bits, and nothing else does */
static void dti_crec_plan_levels(struct kunit *test)
{
	struct dti_trigger_cpu w = { .crec_ts = 100, .crec_seq = 3,
				     .crec_caller = dti_kunit_base() };
	struct dti_meta meta = { .ts_ns = 101, .caller = dti_kunit_base() };
	int level;

	for (level = 0; level <= DTI_LEVEL_MAX; level++) {
		meta.level = level;
		KUNIT_EXPECT_EQ(test, dti_crec_plan(&w, &meta, 3, 0),
				level | DTI_CREC_CALLER_SAME);
	}
}

/* How a round trip's record B relates to the caller of the record before it */
enum dti_kunit_caller {
	DTI_KUNIT_SAME,		/* the same caller */
	DTI_KUNIT_ABOVE,	/* the caller base + DTI_KUNIT_NEAR */
	DTI_KUNIT_BELOW,	/* the caller base - DTI_KUNIT_NEAR */
	DTI_KUNIT_FAR,		/* DTI_KUNIT_FAR_CALLER (64-bit kernels) */
	DTI_KUNIT_ZERO,		/* none: 0 */
};

/**
 * struct dti_kunit_case - a record whose header has a given size class
 * @name:	what it is
 * @ts_delta:	its time less that of the record before it
 * @skip:	sequence numbers skipped before it
 * @caller:	its caller (enum dti_kunit_caller)
 * @len:	its payload bytes
 * @flags:	its DTI_REC_* flags
 * @level:	its level
 * @info:	the info bits dti_crec_plan() must give it besides the level
 *		(the caller's bits not checked for DTI_KUNIT_ZERO)
 * @hdr:	the bytes its header must take
 */
struct dti_kunit_case {
	const char *name;
	s64 ts_delta;
	u64 skip;
	enum dti_kunit_caller caller;
	u32 len;
	u8 flags;
	s8 level;
	u8 info;
	unsigned int hdr;
};

static const struct dti_kunit_case dti_kunit_cases[] = {
	{ "plain, same caller", 250, 0, DTI_KUNIT_SAME, 14, DTI_REC_TYPED,
	  DTI_LEVEL_ERR, DTI_CREC_CALLER_SAME, 8 },
	{ "plain, another caller", 250, 0, DTI_KUNIT_ABOVE, 40, DTI_REC_TEXT,
	  DTI_LEVEL_INFO, DTI_CREC_CALLER32, 12 },
	{ "caller below the base", 250, 0, DTI_KUNIT_BELOW, 8, 0,
	  DTI_LEVEL_DEBUG, DTI_CREC_CALLER32, 12 },
	{ "caller 64 bits", 250, 0, DTI_KUNIT_FAR, 8, 0,
	  DTI_LEVEL_EMERG, DTI_CREC_CALLER64, 16 },
	{ "no caller", 250, 0, DTI_KUNIT_ZERO, 8, 0,
	  DTI_LEVEL_ALERT, 0, 0 },
	{ "time delta 0", 0, 0, DTI_KUNIT_SAME, 8, 0,
	  DTI_LEVEL_ERR, DTI_CREC_CALLER_SAME, 8 },
	{ "time delta S32_MAX", S32_MAX, 0, DTI_KUNIT_SAME, 8, 0,
	  DTI_LEVEL_ERR, DTI_CREC_CALLER_SAME, 8 },
	{ "time delta S32_MAX + 1", (s64)S32_MAX + 1, 0, DTI_KUNIT_SAME, 8, 0,
	  DTI_LEVEL_ERR, DTI_CREC_TS64 | DTI_CREC_CALLER_SAME, 16 },
	{ "time delta S32_MIN", S32_MIN, 0, DTI_KUNIT_SAME, 8, 0,
	  DTI_LEVEL_ERR, DTI_CREC_CALLER_SAME, 8 },
	{ "time delta S32_MIN - 1", (s64)S32_MIN - 1, 0, DTI_KUNIT_SAME, 8, 0,
	  DTI_LEVEL_ERR, DTI_CREC_TS64 | DTI_CREC_CALLER_SAME, 16 },
	{ "one number skipped", 250, 1, DTI_KUNIT_SAME, 8, 0,
	  DTI_LEVEL_ERR, DTI_CREC_SKIP | DTI_CREC_CALLER_SAME, 16 },
	{ "2^40 numbers skipped", 250, 1ULL << 40, DTI_KUNIT_SAME, 8, 0,
	  DTI_LEVEL_ERR, DTI_CREC_SKIP | DTI_CREC_CALLER_SAME, 16 },
	{ "payload 0", 250, 0, DTI_KUNIT_SAME, 0, 0,
	  DTI_LEVEL_ERR, DTI_CREC_CALLER_SAME, 8 },
	{ "payload 1", 250, 0, DTI_KUNIT_SAME, 1, DTI_REC_TEXT | DTI_REC_TRUNCATED,
	  DTI_LEVEL_ERR, DTI_CREC_CALLER_SAME, 8 },
	{ "payload U16_MAX", 250, 0, DTI_KUNIT_SAME, U16_MAX, DTI_REC_RESERVED,
	  DTI_LEVEL_ERR, DTI_CREC_CALLER_SAME, 8 },
	{ "payload U16_MAX + 1", 250, 0, DTI_KUNIT_SAME, U16_MAX + 1, 0,
	  DTI_LEVEL_ERR, DTI_CREC_LEN32 | DTI_CREC_CALLER_SAME, 12 },
	{ "payload DTI_PAYLOAD_MAX", 250, 0, DTI_KUNIT_SAME, DTI_PAYLOAD_MAX, 0,
	  DTI_LEVEL_ERR, DTI_CREC_LEN32 | DTI_CREC_CALLER_SAME, 12 },
	{ "replayed", -1000, 0, DTI_KUNIT_SAME, 8, DTI_REC_REPLAYED | DTI_REC_TEXT,
	  DTI_LEVEL_NOTICE, DTI_CREC_CALLER_SAME, 12 },
	{ "every extension", -(1LL << 32), 5, DTI_KUNIT_FAR, U16_MAX + 1,
	  DTI_REC_REPLAYED | DTI_REC_TYPED, DTI_LEVEL_WARNING,
	  DTI_CREC_TS64 | DTI_CREC_SKIP | DTI_CREC_CALLER64 | DTI_CREC_LEN32,
	  DTI_CREC_HDR_MAX },
};

static void dti_kunit_case_desc(const struct dti_kunit_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dti_kunit, dti_kunit_cases, dti_kunit_case_desc);

/*
 * The records of a round trip: A, plain; B, the case's; C, plain after
 * it, the same caller as B's: B must leave the chains where C finds them.
 */
static void dti_kunit_records(struct kunit *test, const struct dti_kunit_case *c,
			      struct dti_kunit_rec r[3])
{
	unsigned long caller = 0;

	if (c->caller == DTI_KUNIT_FAR && BITS_PER_LONG < 64)
		kunit_skip(test, "a 32-bit kernel has no caller beyond 2 GiB");
	memset(r, 0, 3 * sizeof(*r));
	r[0].meta.ts_ns = DTI_KUNIT_TS_BASE + 10;
	r[0].meta.caller = DTI_KUNIT_CALLER_PREV;
	r[0].meta.cpu = DTI_KUNIT_CPU;
	r[0].meta.level = DTI_LEVEL_CRIT;
	r[0].seq = DTI_KUNIT_SEQ_BASE;
	r[0].len = DTI_KUNIT_A_LEN;

	switch (c->caller) {
	case DTI_KUNIT_SAME:
		caller = r[0].meta.caller;
		break;
	case DTI_KUNIT_ABOVE:
		caller = dti_kunit_base() + DTI_KUNIT_NEAR;
		break;
	case DTI_KUNIT_BELOW:
		caller = dti_kunit_base() - DTI_KUNIT_NEAR;
		break;
	case DTI_KUNIT_FAR:
		caller = (unsigned long)DTI_KUNIT_FAR_CALLER;
		break;
	case DTI_KUNIT_ZERO:
		caller = 0;
		break;
	}
	r[1].meta.ts_ns = r[0].meta.ts_ns + c->ts_delta;
	r[1].meta.caller = caller;
	r[1].meta.cpu = c->flags & DTI_REC_REPLAYED ? DTI_KUNIT_LOG_CPU : DTI_KUNIT_CPU;
	r[1].meta.level = c->level;
	r[1].meta.flags = c->flags;
	r[1].seq = r[0].seq + 1 + c->skip;
	r[1].len = c->len;

	r[2].meta.ts_ns = r[1].meta.ts_ns + 1;
	r[2].meta.caller = caller;
	r[2].meta.cpu = DTI_KUNIT_CPU;
	r[2].meta.level = DTI_LEVEL_DEBUG;
	r[2].seq = r[1].seq + 1;
	r[2].len = DTI_KUNIT_C_LEN;
}

/* Bytes a sub-buffer holding @c's three records and nothing else takes */
static size_t dti_kunit_case_size(const struct dti_kunit_case *c)
{
	return DTI_SUBBUF_HEADER_SIZE + DTI_CREC_SIZE(sizeof(struct dti_crec), DTI_KUNIT_A_LEN) +
	       DTI_CREC_SIZE(DTI_CREC_HDR_MAX, c->len) +
	       DTI_CREC_SIZE(DTI_CREC_HDR_MAX, DTI_KUNIT_C_LEN);
}

/* Write @c's records into a new sub-buffer of @size bytes */
static void *dti_kunit_write_case(struct kunit *test, const struct dti_kunit_case *c,
				  struct dti_kunit_rec r[3], size_t size, size_t *end)
{
	struct dti_kunit_sub s;
	void *sub = dti_kunit_alloc(test, size);
	int i;

	dti_kunit_records(test, c, r);
	dti_kunit_start(&s, sub, size);
	for (i = 0; i < 3; i++) {
		r[i].off = s.pos;
		r[i].hdr = dti_kunit_put(test, &s, &r[i].meta, r[i].seq, r[i].len);
	}
	*end = s.pos;
	return sub;
}

/* The plan of each case: its info byte, its header's size */
static void dti_crec_plan_classes(struct kunit *test)
{
	const struct dti_kunit_case *c = test->param_value;
	struct dti_trigger_cpu w = { .crec_ts = DTI_KUNIT_TS_BASE + 10,
				     .crec_seq = DTI_KUNIT_SEQ_BASE + 1,
				     .crec_caller = DTI_KUNIT_CALLER_PREV };
	struct dti_kunit_rec r[3];
	u8 info;

	dti_kunit_records(test, c, r);
	info = dti_crec_plan(&w, &r[1].meta, r[1].seq, r[1].len);
	KUNIT_EXPECT_EQ(test, info & DTI_CREC_LEVEL, c->level);
	if (c->caller == DTI_KUNIT_ZERO) {
		/* Never eight zero bytes: a caller of 0 is told, not "the same" */
		KUNIT_EXPECT_NE(test, info & DTI_CREC_CALLER, 0);
		KUNIT_EXPECT_NE(test, info & DTI_CREC_CALLER, DTI_CREC_CALLER_SAME);
		KUNIT_EXPECT_EQ(test, info & ~(DTI_CREC_LEVEL | DTI_CREC_CALLER), 0);
		return;
	}
	KUNIT_EXPECT_EQ(test, info & ~DTI_CREC_LEVEL, c->info);
	KUNIT_EXPECT_EQ(test, dti_crec_hdr_size(info, c->flags), c->hdr);
}

/* The bytes dti_crec_write() writes, as dti_record.h lays them out */
static void dti_crec_write_bytes(struct kunit *test)
{
#ifdef __LITTLE_ENDIAN
	static const u8 want_plain[] = {
		0x03, 0x00,		/* len 3 */
		DTI_REC_TEXT,		/* flags */
		DTI_LEVEL_NOTICE | DTI_CREC_CALLER32,
		0x04, 0x03, 0x02, 0x01,	/* ts_delta 0x01020304 */
		0x44, 0x33, 0x22, 0x11,	/* caller base + 0x11223344 */
	};
	static const u8 want_max[] = {
		0x00, 0x00,		/* len in the extension */
		DTI_REC_REPLAYED | DTI_REC_TYPED,
		DTI_LEVEL_DEBUG | DTI_CREC_TS64 | DTI_CREC_SKIP |
		DTI_CREC_CALLER64 | DTI_CREC_LEN32,
		0x00, 0x00, 0x00, 0x00,	/* no delta */
		0x00, 0x00, 0x01, 0x00,	/* len 0x10000 */
		0x00, 0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,	/* ts */
		0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* 3 skipped */
		0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00,	/* caller */
		0x03, 0x00, 0x00, 0x00,	/* logged on CPU 3 */
	};
	struct dti_trigger_cpu w = { .crec_ts = 0x1000, .crec_seq = 7,
				     .crec_caller = dti_kunit_base() };
	struct dti_meta meta = {
		.ts_ns = 0x1000 + 0x01020304,
		.caller = dti_kunit_base() + 0x11223344,
		.level = DTI_LEVEL_NOTICE,
		.flags = DTI_REC_TEXT,
	};
	u8 buf[DTI_CREC_HDR_MAX + 8];
	u8 info;

	memset(buf, 0xee, sizeof(buf));
	info = dti_crec_plan(&w, &meta, 7, 3);
	KUNIT_EXPECT_PTR_EQ(test, dti_crec_write(buf, info, &meta, 7, 3, &w),
			    (void *)buf + sizeof(want_plain));
	KUNIT_EXPECT_MEMEQ(test, buf, want_plain, sizeof(want_plain));
	KUNIT_EXPECT_EQ(test, buf[sizeof(want_plain)], 0xee);

	if (BITS_PER_LONG < 64)
		kunit_skip(test, "a 32-bit kernel has no 64-bit caller");
	meta.ts_ns = 0x100001000ULL;
	meta.caller = (unsigned long)DTI_KUNIT_FAR_CALLER;
	meta.cpu = 3;
	meta.level = DTI_LEVEL_DEBUG;
	meta.flags = DTI_REC_REPLAYED | DTI_REC_TYPED;
	memset(buf, 0xee, sizeof(buf));
	info = dti_crec_plan(&w, &meta, 10, U16_MAX + 1);
	KUNIT_EXPECT_PTR_EQ(test, dti_crec_write(buf, info, &meta, 10, U16_MAX + 1, &w),
			    (void *)buf + sizeof(want_max));
	KUNIT_EXPECT_EQ(test, sizeof(want_max), DTI_CREC_HDR_MAX);
	KUNIT_EXPECT_MEMEQ(test, buf, want_max, sizeof(want_max));
	KUNIT_EXPECT_EQ(test, buf[sizeof(want_max)], 0xee);
#else
	kunit_skip(test, "the expected bytes are little-endian");
#endif
}

static struct kunit_case dti_crec_cases[] = {
	KUNIT_CASE(dti_crec_layout),
	KUNIT_CASE(dti_crec_hdr_sizes),
	KUNIT_CASE(dti_crec_plan_levels),
	KUNIT_CASE_PARAM(dti_crec_plan_classes, dti_kunit_gen_params),
	KUNIT_CASE(dti_crec_write_bytes),
	{}
};

static struct kunit_suite dti_crec_suite = {
	.name = "dti_crec",
	.test_cases = dti_crec_cases,
};

/* ---- dti_walk: what the readers decode ---- */

/* plan, write, walk: every record comes back as it was stored */
static void dti_walk_round_trip(struct kunit *test)
{
	const struct dti_kunit_case *c = test->param_value;
	size_t size = dti_kunit_case_size(c), end;
	struct dti_kunit_rec r[3];
	struct dti_rview v;
	struct dti_walk w;
	void *sub;
	int i;

	sub = dti_kunit_write_case(test, c, r, size, &end);
	if (c->caller != DTI_KUNIT_ZERO)
		KUNIT_EXPECT_EQ(test, r[1].hdr, c->hdr);
	KUNIT_ASSERT_TRUE(test, dti_walk_start(&w, sub, size, 3));
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, w.pos, r[i].off);
		KUNIT_EXPECT_EQ(test, dti_rec_size_at(sub + r[i].off, size - r[i].off, false),
				DTI_CREC_SIZE(r[i].hdr, r[i].len));
		KUNIT_ASSERT_TRUE(test, dti_walk_next(&w, &v));
		dti_kunit_expect(test, &r[i], &v, sub);
	}
	KUNIT_EXPECT_EQ(test, w.pos, end);
	/* The count is reached: no fourth record, even with room for one */
	KUNIT_EXPECT_FALSE(test, dti_walk_next(&w, &v));
	KUNIT_EXPECT_EQ(test, dti_rec_size_at(sub, size, true), DTI_SUBBUF_HEADER_SIZE);
}

/* A record that fills a sub-buffer of the largest size to its last byte */
static void dti_walk_full_subbuf(struct kunit *test)
{
	size_t size = DTI_SUBBUF_SIZE_MAX;
	struct dti_meta meta = { .ts_ns = DTI_KUNIT_TS_BASE, .cpu = DTI_KUNIT_CPU,
				 .level = DTI_LEVEL_ERR };
	struct dti_kunit_rec r = { .seq = DTI_KUNIT_SEQ_BASE, .len = DTI_PAYLOAD_MAX };
	struct dti_kunit_sub s;
	struct dti_rview v;
	struct dti_walk w;

	dti_kunit_start(&s, dti_kunit_alloc(test, size), size);
	/* The header with every extension dti_crec_plan() can give */
	meta.ts_ns += 1ULL << 40;
	meta.caller = BITS_PER_LONG < 64 ? dti_kunit_base() : (unsigned long)DTI_KUNIT_FAR_CALLER;
	meta.flags = DTI_REC_REPLAYED;
	r.meta = meta;
	r.seq += 2;
	r.off = s.pos;
	r.hdr = dti_kunit_put(test, &s, &meta, r.seq, r.len);
	if (BITS_PER_LONG == 64)
		KUNIT_EXPECT_EQ(test, r.hdr, DTI_CREC_HDR_MAX);
	KUNIT_EXPECT_LE(test, s.pos, size);
	KUNIT_ASSERT_TRUE(test, dti_walk_start(&w, s.sub, size, 1));
	KUNIT_ASSERT_TRUE(test, dti_walk_next(&w, &v));
	dti_kunit_expect(test, &r, &v, s.sub);
	KUNIT_EXPECT_EQ(test, w.pos, s.pos);
}

/*
 * Formats, as dti_event_frame() writes them after the header: outside
 * the chains of time and number, with the header's time.
 */
static void dti_walk_formats(struct kunit *test)
{
	static const u8 fmt[] = { 1, 2, 3, 4, 5 };
	size_t size = 512, fmt_size = DTI_CREC_SIZE(sizeof(struct dti_crec), sizeof(fmt));
	struct dti_kunit_rec r = { .seq = DTI_KUNIT_SEQ_BASE, .len = 3 };
	struct dti_kunit_sub s;
	struct dti_crec *f;
	struct dti_rview v;
	struct dti_walk w;
	int i;

	dti_kunit_start(&s, dti_kunit_alloc(test, size), size);
	for (i = 0; i < 2; i++) {
		f = s.sub + s.pos;
		f->len = sizeof(fmt);
		f->flags = DTI_REC_FORMAT;
		memcpy(f + 1, fmt, sizeof(fmt));
		s.pos += fmt_size;
		dti_kunit_info(s.sub)->records++;
	}
	r.meta.ts_ns = DTI_KUNIT_TS_BASE + 3;
	r.meta.caller = DTI_KUNIT_CALLER_PREV;
	r.meta.level = DTI_LEVEL_WARNING;
	r.meta.flags = DTI_REC_TYPED;
	r.off = s.pos;
	r.hdr = dti_kunit_put(test, &s, &r.meta, r.seq, r.len);
	KUNIT_EXPECT_EQ(test, r.hdr, sizeof(struct dti_crec));

	KUNIT_ASSERT_TRUE(test, dti_walk_start(&w, s.sub, size, 3));
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_TRUE(test, dti_walk_next(&w, &v));
		KUNIT_EXPECT_EQ(test, v.flags, DTI_REC_FORMAT);
		KUNIT_EXPECT_EQ(test, v.ts_ns, DTI_KUNIT_HDR_TS);
		KUNIT_EXPECT_EQ(test, v.seq, 0);
		KUNIT_EXPECT_EQ(test, v.caller, 0);
		KUNIT_EXPECT_EQ(test, v.level, 0);
		KUNIT_EXPECT_EQ(test, v.len, sizeof(fmt));
		KUNIT_EXPECT_EQ(test, v.size, fmt_size);
		KUNIT_EXPECT_MEMEQ(test, v.payload, fmt, sizeof(fmt));
	}
	/* The record after them is told from the header's bases */
	KUNIT_ASSERT_TRUE(test, dti_walk_next(&w, &v));
	dti_kunit_expect(test, &r, &v, s.sub);
	KUNIT_EXPECT_FALSE(test, dti_walk_next(&w, &v));
}

/* A version-1 sub-buffer: whole headers, read as before */
static void dti_walk_version1(struct kunit *test)
{
	size_t size = 512, pos = DTI_SUBBUF_HEADER_SIZE_V1;
	struct dti_meta meta = { .ts_ns = 77, .caller = dti_kunit_base(),
				 .cpu = DTI_KUNIT_LOG_CPU, .level = DTI_LEVEL_INFO,
				 .flags = DTI_REC_TEXT | DTI_REC_REPLAYED };
	void *sub = dti_kunit_alloc(test, size);
	struct dti_record *hdr = sub, *rec;
	struct dti_rview v;
	struct dti_walk w;
	int i;

	dti_kunit_header(sub, size, 0, 0, 0);
	hdr->version = DTI_RECORD_VERSION_1;
	hdr->len = DTI_SUBBUF_INFO_V1_SIZE;
	for (i = 0; i < 2; i++) {
		rec = sub + pos;
		dti_fill_record(rec, &meta, DTI_KUNIT_CPU, 5 + i, 40 + i);
		memset(rec + 1, 'a' + i, 5 + i);
		pos += DTI_RECORD_SIZE(5 + i);
	}
	KUNIT_ASSERT_TRUE(test, dti_walk_start(&w, sub, size, 3));
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_TRUE(test, dti_walk_next(&w, &v));
		KUNIT_EXPECT_EQ(test, v.seq, 40 + i);
		KUNIT_EXPECT_EQ(test, v.ts_ns, 77);
		KUNIT_EXPECT_EQ(test, v.caller, (u64)dti_kunit_base());
		KUNIT_EXPECT_EQ(test, v.log_cpu, DTI_KUNIT_LOG_CPU);
		KUNIT_EXPECT_EQ(test, v.flags, DTI_REC_TEXT | DTI_REC_REPLAYED);
		KUNIT_EXPECT_EQ(test, v.level, DTI_LEVEL_INFO);
		KUNIT_EXPECT_EQ(test, v.len, 5 + i);
		KUNIT_EXPECT_EQ(test, v.size, DTI_RECORD_SIZE(5 + i));
		KUNIT_EXPECT_EQ(test, ((const char *)v.payload)[4 + i], 'a' + i);
	}
	/* The count says 3; zero fill after the second is no record */
	KUNIT_EXPECT_FALSE(test, dti_walk_next(&w, &v));
	KUNIT_EXPECT_EQ(test, w.pos, pos);
	/* A sub-buffer header is no record of version 1 */
	rec = sub + DTI_SUBBUF_HEADER_SIZE_V1;
	rec->flags |= DTI_REC_SUBBUF;
	KUNIT_ASSERT_TRUE(test, dti_walk_start(&w, sub, size, 2));
	KUNIT_EXPECT_FALSE(test, dti_walk_next(&w, &v));
}

/**
 * struct dti_kunit_bad - input the walk must refuse
 * @name:	what is wrong
 * @spoil:	make it so in a sub-buffer of "plain, same caller"'s records
 * @start:	dti_walk_start() still takes the sub-buffer
 * @walked:	records the walk gives before it stops
 * @unsized:	dti_rec_size_at() finds no whole record where it stops
 *		either (it reads sizes, not flags)
 */
struct dti_kunit_bad {
	const char *name;
	void (*spoil)(void *sub, size_t *end, u32 *records);
	bool start;
	int walked;
	bool unsized;
};

static struct dti_crec *dti_kunit_rec_b(void *sub)
{
	return sub + DTI_SUBBUF_HEADER_SIZE +
	       DTI_CREC_SIZE(sizeof(struct dti_crec), DTI_KUNIT_A_LEN);
}

static void dti_bad_magic(void *sub, size_t *end, u32 *records)
{
	((struct dti_record *)sub)->magic = swab16(DTI_RECORD_MAGIC);
}

static void dti_bad_not_subbuf(void *sub, size_t *end, u32 *records)
{
	((struct dti_record *)sub)->flags &= ~DTI_REC_SUBBUF;
}

static void dti_bad_version(void *sub, size_t *end, u32 *records)
{
	((struct dti_record *)sub)->version = DTI_RECORD_VERSION + 1;
}

static void dti_bad_hdr_len(void *sub, size_t *end, u32 *records)
{
	((struct dti_record *)sub)->hdr_len = sizeof(struct dti_crec);
}

static void dti_bad_info_len(void *sub, size_t *end, u32 *records)
{
	((struct dti_record *)sub)->len = DTI_SUBBUF_INFO_V1_SIZE;
}

static void dti_bad_header_cut(void *sub, size_t *end, u32 *records)
{
	*end = DTI_SUBBUF_HEADER_SIZE - 1;
}

static void dti_bad_subbuf_flag(void *sub, size_t *end, u32 *records)
{
	dti_kunit_rec_b(sub)->flags |= DTI_REC_SUBBUF;
}

static void dti_bad_pending_flag(void *sub, size_t *end, u32 *records)
{
	dti_kunit_rec_b(sub)->flags |= DTI_REC_PENDING;
}

static void dti_bad_zero(void *sub, size_t *end, u32 *records)
{
	memset(dti_kunit_rec_b(sub), 0, sizeof(struct dti_crec));
}

static void dti_bad_len(void *sub, size_t *end, u32 *records)
{
	dti_kunit_rec_b(sub)->len = U16_MAX;
}

static void dti_bad_len32(void *sub, size_t *end, u32 *records)
{
	struct dti_crec *c = dti_kunit_rec_b(sub);

	/* The extension's length comes first, so it is where the caller's was */
	c->info = (c->info & DTI_CREC_LEVEL) | DTI_CREC_LEN32 | DTI_CREC_CALLER_SAME;
	c->len = 0;
	put_unaligned((u32)DTI_PAYLOAD_MAX, (u32 *)(c + 1));
}

static void dti_bad_extensions_cut(void *sub, size_t *end, u32 *records)
{
	struct dti_crec *c = dti_kunit_rec_b(sub);

	/* 28 header bytes, 16 before the end */
	c->info |= DTI_CREC_TS64 | DTI_CREC_SKIP | DTI_CREC_LEN32;
	*end = (void *)c - sub + 2 * sizeof(*c);
}

static void dti_bad_record_cut(void *sub, size_t *end, u32 *records)
{
	*end -= DTI_CREC_ALIGN;
}

static void dti_bad_count(void *sub, size_t *end, u32 *records)
{
	*records = 1;
}

static const struct dti_kunit_bad dti_kunit_bads[] = {
	{ "header magic swapped", dti_bad_magic, false, 0 },
	{ "header without DTI_REC_SUBBUF", dti_bad_not_subbuf, false, 0 },
	{ "header of an unknown version", dti_bad_version, false, 0 },
	{ "header hdr_len not 40", dti_bad_hdr_len, false, 0 },
	{ "version-2 header with a version-1 info", dti_bad_info_len, false, 0 },
	{ "header cut by the end", dti_bad_header_cut, false, 0 },
	{ "record with DTI_REC_SUBBUF", dti_bad_subbuf_flag, true, 1 },
	{ "record with DTI_REC_PENDING", dti_bad_pending_flag, true, 1 },
	{ "record of eight zero bytes", dti_bad_zero, true, 1, true },
	{ "record's length beyond the end", dti_bad_len, true, 1, true },
	{ "record's 32-bit length beyond the end", dti_bad_len32, true, 1, true },
	{ "record's extensions beyond the end", dti_bad_extensions_cut, true, 1, true },
	{ "last record cut by the end", dti_bad_record_cut, true, 2, true },
	{ "count reached", dti_bad_count, true, 1 },
};

static void dti_kunit_bad_desc(const struct dti_kunit_bad *b, char *desc)
{
	strscpy(desc, b->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dti_kunit_bad, dti_kunit_bads, dti_kunit_bad_desc);

static void dti_walk_refuses(struct kunit *test)
{
	const struct dti_kunit_bad *b = test->param_value;
	const struct dti_kunit_case *c = &dti_kunit_cases[0];
	size_t size = dti_kunit_case_size(c), end;
	struct dti_kunit_rec r[3];
	u32 records = 3;
	struct dti_rview v;
	struct dti_walk w;
	void *sub;
	int i;

	sub = dti_kunit_write_case(test, c, r, size, &end);
	b->spoil(sub, &end, &records);
	KUNIT_ASSERT_EQ(test, dti_walk_start(&w, sub, end, records), b->start);
	if (!b->start)
		return;
	for (i = 0; i < b->walked; i++) {
		KUNIT_ASSERT_TRUE(test, dti_walk_next(&w, &v));
		dti_kunit_expect(test, &r[i], &v, sub);
	}
	KUNIT_EXPECT_FALSE(test, dti_walk_next(&w, &v));
	/* A walk that stopped stays stopped */
	KUNIT_EXPECT_FALSE(test, dti_walk_next(&w, &v));
	KUNIT_EXPECT_EQ(test, w.pos, r[b->walked].off);
	if (b->unsized)
		KUNIT_EXPECT_EQ(test, dti_rec_size_at(sub + w.pos, end - w.pos, false), 0);
}

static struct kunit_case dti_walk_cases[] = {
	KUNIT_CASE_PARAM(dti_walk_round_trip, dti_kunit_gen_params),
	KUNIT_CASE(dti_walk_full_subbuf),
	KUNIT_CASE(dti_walk_formats),
	KUNIT_CASE(dti_walk_version1),
	KUNIT_CASE_PARAM(dti_walk_refuses, dti_kunit_bad_gen_params),
	{}
};

static struct kunit_suite dti_walk_suite = {
	.name = "dti_walk",
	.test_cases = dti_walk_cases,
};

/* ---- dti_continue: a read() that starts in the middle of a sub-buffer ---- */

/*
 * Walk each case's sub-buffer up to every record boundary, put there a
 * continuation header as dti_read_copy() does, then the rest of the
 * records: the copy decodes alone, to the same records.
 */
static void dti_continue_round_trip(struct kunit *test)
{
	const struct dti_kunit_case *c = test->param_value;
	size_t size = dti_kunit_case_size(c), end, len;
	struct dti_subbuf_info *info;
	struct dti_kunit_rec r[3], rc;
	struct dti_walk w, wc;
	struct dti_rview v;
	void *sub, *copy;
	int k, i;

	sub = dti_kunit_write_case(test, c, r, size, &end);
	copy = dti_kunit_alloc(test, size);
	for (k = 1; k <= 3; k++) {
		KUNIT_ASSERT_TRUE(test, dti_walk_start(&w, sub, end, 3));
		for (i = 0; i < k; i++)
			KUNIT_ASSERT_TRUE(test, dti_walk_next(&w, &v));
		len = end - w.pos;
		memcpy(copy, sub, DTI_SUBBUF_HEADER_SIZE);
		info = dti_kunit_info(copy);
		dti_walk_continue(&w, info);
		memcpy(copy + DTI_SUBBUF_HEADER_SIZE, sub + w.pos, len);

		KUNIT_EXPECT_EQ(test, info->state, DTI_SUBBUF_CONTINUED);
		KUNIT_EXPECT_EQ(test, info->records, 0);
		KUNIT_EXPECT_EQ(test, info->padding, 0);
		KUNIT_EXPECT_EQ(test, info->seq_base, k < 3 ? r[k].seq - (k == 1 ? c->skip : 0)
							    : r[2].seq + 1);
		KUNIT_EXPECT_EQ(test, info->ts_base, r[k - 1].meta.ts_ns);
		KUNIT_EXPECT_EQ(test, info->caller_prev, (u64)r[k - 1].meta.caller);
		/* The rest of the header is the sub-buffer's */
		KUNIT_EXPECT_MEMEQ(test, copy, sub, offsetof(struct dti_subbuf_info, padding) +
				   sizeof(struct dti_record));
		KUNIT_EXPECT_STREQ(test, info->name, dti_kunit_info(sub)->name);

		/* Its records run to the end of the data: the reader counts them */
		KUNIT_ASSERT_TRUE(test, dti_walk_start(&wc, copy,
						       DTI_SUBBUF_HEADER_SIZE + len, 3 - k));
		for (i = k; i < 3; i++) {
			rc = r[i];
			rc.off = r[i].off - w.pos + DTI_SUBBUF_HEADER_SIZE;
			KUNIT_ASSERT_TRUE(test, dti_walk_next(&wc, &v));
			dti_kunit_expect(test, &rc, &v, copy);
		}
		KUNIT_EXPECT_FALSE(test, dti_walk_next(&wc, &v));
		KUNIT_EXPECT_EQ(test, wc.pos, DTI_SUBBUF_HEADER_SIZE + len);
	}
}

static struct kunit_case dti_continue_cases[] = {
	KUNIT_CASE_PARAM(dti_continue_round_trip, dti_kunit_gen_params),
	{}
};

static struct kunit_suite dti_continue_suite = {
	.name = "dti_continue",
	.test_cases = dti_continue_cases,
};

kunit_test_suites(&dti_crec_suite, &dti_walk_suite, &dti_continue_suite);
