// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libdti's memory dump reader (lib/dump.c) on synthetic
 * physical memory images (dump_image.h): which channels are found, what
 * is wrong with those that cannot be read, and exactly which records
 * come out, in which order, with which notices.  Wrapped rings, stale
 * sub-buffers of other generations, pending stores, damaged CRCs, pages
 * the dump lacks, the other byte order, duplicates, snapshots saved for
 * dti_open_dir(), and persistent regions: two boots' rings, damaged
 * slots and headers.  Prints "N passed, N failed" last.
 *
 * With --seeds DIR, writes the images as seeds of fuzz_dump.c instead.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dti/libdti.h"
#include "unit.h"
#include "dump_image.h"


/* ---- the dump's memory ---- */

/* An image as read_phys() and read_virt() see it; pages can be taken out. */
struct mem {
	struct img *m;
	unsigned char missing[64];	/* page n is missing if bit n is set */
	bool no_virt;			/* read_virt() fails */
	unsigned long reads;
};

static bool page_missing(const struct mem *mm, uint64_t page)
{
	return page < 8 * sizeof(mm->missing) && (mm->missing[page / 8] >> page % 8 & 1);
}

static int mem_read_phys(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct mem *mm = arg;
	uint64_t p;

	mm->reads++;
	if (addr > mm->m->size || len > mm->m->size - addr) {
		errno = EFAULT;
		return -1;
	}
	for (p = addr / IMG_PAGE; len && p <= (addr + len - 1) / IMG_PAGE; p++)
		if (page_missing(mm, p)) {
			errno = ENODATA;
			return -1;
		}
	memcpy(buf, mm->m->p + addr, len);
	return 0;
}

static int mem_read_virt(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct mem *mm = arg;

	if (mm->no_virt || addr < IMG_VOFF) {
		errno = EFAULT;
		return -1;
	}
	return mem_read_phys(arg, addr - IMG_VOFF, buf, len);
}

static const char *mem_errmsg(void *arg)
{
	(void)arg;
	return "test image";
}

/* A dump of @mm, scanned in runs of @run bytes (0: one run), loaded. */
static struct dti_dump *load_runs(struct mem *mm, size_t run, int *n)
{
	struct dti_mem_cfg;
	const struct dti_dump_mem mem = {
		.size = sizeof(mem), .read_phys = mem_read_phys, .read_virt = mem_read_virt,
		.errmsg = mem_errmsg, .arg = mm, .phys_end = mm->m->size,
	};
	struct dti_dump *d = dti_dump_new(&mem);
	size_t off, k;

	if (!run)
		run = mm->m->size;
	for (off = 0; off < mm->m->size; off += k) {
		k = mm->m->size - off < run ? mm->m->size - off : run;
		if (!page_missing(mm, off / IMG_PAGE))
			dti_dump_scan(d, off, mm->m->p + off, k);
	}
	*n = dti_dump_load(d);
	return d;
}

static struct dti_dump *load(struct mem *mm, int *n)
{
	return load_runs(mm, IMG_PAGE, n);
}

/* The index of channel @name, or -1 */
static int find(struct dti_dump *d, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(dti_dump_channel(d, i)->name, name))
			return i;
	return -1;
}

/* What a reader printed in @fmt, notices as "N: ..." in between; its damage count */
struct out {
	char *text;
	size_t len;
	int rc;
	unsigned long damage, warning;
};

static void fputs_notice(const struct dti_notice *n, void *arg)
{
	fprintf(arg, "N: %s\n", n->message);
}

static void print_reader(struct dti_reader *r, enum dti_format fmt, struct out *o)
{
	struct dti_rec rec;
	FILE *f;

	memset(o, 0, sizeof(*o));
	f = open_memstream(&o->text, &o->len);
	if (!r) {
		fprintf(f, "open failed: %s", dti_errmsg());
		fclose(f);
		o->rc = -2;
		return;
	}
	dti_set_notice_handler(r, fputs_notice, f);
	while ((o->rc = dti_next(r, &rec)) > 0)
		dti_print(r, f, &rec, fmt);
	o->damage = dti_damage_count(r);
	o->warning = dti_warning_count(r);
	dti_close(r);
	fclose(f);
}

/* print_reader() with dti_print_records() in calls of @max records */
static void print_batched(struct dti_reader *r, enum dti_format fmt,
			  unsigned long max, struct out *o)
{
	FILE *f;

	memset(o, 0, sizeof(*o));
	f = open_memstream(&o->text, &o->len);
	dti_set_notice_handler(r, fputs_notice, f);
	while ((o->rc = dti_print_records(r, f, fmt, max)) > 0)
		;
	o->damage = dti_damage_count(r);
	o->warning = dti_warning_count(r);
	dti_close(r);
	fclose(f);
}

/* The output of channel @name of @d in @fmt (freed by the next call). */
static const char *print_chan(struct dti_dump *d, int n, const char *name,
			      enum dti_format fmt, struct out *o)
{
	static char *last;
	int i = find(d, n, name);

	free(last);
	print_reader(i < 0 ? NULL : dti_dump_open(d, i, 0), fmt, o);
	last = o->text;
	return o->text;
}

/* ---- the images ---- */

/*
 * Channel "drv": 2 CPUs, rings of 4 sub-buffers of 2048 bytes (2 pages
 * each), the pages of each ring scattered and in reverse order.
 */
static void chan_drv(struct img_chan *c)
{
	unsigned int cpu, i;

	memset(c, 0, sizeof(*c));
	c->name = "drv";
	c->flags = DTI_DUMP_F_BUFFERS;
	c->generation = 0x5eed0001;
	c->subbuf_size = 2048;
	c->n_subbufs = 4;
	c->nr_cpu_ids = 2;
	c->level = DTI_LEVEL_INFO;
	c->desc = 3 * IMG_PAGE + 8;
	c->level_at = 3 * IMG_PAGE + 1024;
	c->table = 3 * IMG_PAGE + 2048;
	for (cpu = 0; cpu < 2; cpu++) {
		c->pfns[cpu] = 3 * IMG_PAGE + 2560 + 256 * cpu;
		for (i = 0; i < 2; i++)
			c->pages[cpu][i] = 12 - 4 * cpu - 2 * i;
	}
}

/*
 * drv's rings: cpu0 wrapped, slots holding sub-buffers 4, 5, 2, 3 (of
 * which 5 is open), cpu1 with sub-buffers 0 and 1 and two slots never
 * written.  Record times interleave the CPUs.
 */
static void rings_drv(struct img *m, const struct img_chan *c)
{
	img_subbuf(m, c, 0, 2, c->generation, NULL, 2, true, "a2-", 200, 1000);
	img_subbuf(m, c, 0, 3, c->generation, NULL, 2, true, "a3-", 202, 1100);
	img_subbuf(m, c, 0, 4, c->generation, NULL, 2, true, "a4-", 204, 1200);
	img_subbuf(m, c, 0, 5, c->generation, NULL, 1, false, "a5-", 206, 1300);
	img_subbuf(m, c, 1, 0, c->generation, NULL, 3, true, "b0-", 0, 1005);
	img_subbuf(m, c, 1, 1, c->generation, NULL, 1, false, "b1-", 3, 1205);
}

#define DRV_TEXT "a2-0\nb0-0\na2-1\nb0-1\nb0-2\na3-0\na3-1\na4-0\nb1-0\na4-1\na5-0\n"

static void image_drv(struct img *m, struct img_chan *c)
{
	img_init(m, 16);
	chan_drv(c);
	img_channel(m, c);
	rings_drv(m, c);
}

/* ---- tests ---- */

static void test_crc32(void)
{
	CHECK(img_crc32("123456789", 9) == 0xcbf43926);	/* the check value */
}

static void test_basic(void)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	const struct dti_dump_summary *sum;
	struct dti_dump *d;
	struct out o;
	int n;

	image_drv(&m, &c);
	d = load(&mm, &n);
	CHECK(n == 1);
	ch = dti_dump_channel(d, 0);
	CHECK_STR(ch->name, "drv");
	CHECK(ch->desc_addr == c.desc && !ch->pending_addr);
	CHECK(ch->flags == DTI_DUMP_F_BUFFERS && ch->level == DTI_LEVEL_INFO);
	CHECK(ch->generation == 0x5eed0001 && ch->subbuf_size == 2048 &&
	      ch->n_subbufs == 4 && ch->nr_cpu_ids == 2 && ch->page_size == IMG_PAGE);
	CHECK(ch->nr_bufs == 2 && ch->records == 11 && ch->stale_slots == 2);
	CHECK(!ch->missing_pages && !ch->swapped && !ch->pending_records);
	CHECK(!ch->error && !ch->damage && !ch->notes);
	sum = dti_dump_summary(d);
	CHECK(sum->scanned == m.size && sum->markers == 1 && sum->stray == 0 &&
	      sum->descriptors == 1 && sum->channels == 1);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o), DRV_TEXT);
	CHECK(o.rc == 0 && o.damage == 0 && o.warning == 0);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TS, &o),
		  "[    0.000001000] cpu0 L3 #200 0xffffffffc0001234: a2-0\n"
		  "[    0.000001005] cpu1 L3 #0 0xffffffffc0001234: b0-0\n"
		  "[    0.000001010] cpu0 L3 #201 0xffffffffc0001234: a2-1\n"
		  "[    0.000001015] cpu1 L3 #1 0xffffffffc0001234: b0-1\n"
		  "[    0.000001025] cpu1 L3 #2 0xffffffffc0001234: b0-2\n"
		  "[    0.000001100] cpu0 L3 #202 0xffffffffc0001234: a3-0\n"
		  "[    0.000001110] cpu0 L3 #203 0xffffffffc0001234: a3-1\n"
		  "[    0.000001200] cpu0 L3 #204 0xffffffffc0001234: a4-0\n"
		  "[    0.000001205] cpu1 L3 #3 0xffffffffc0001234: b1-0\n"
		  "[    0.000001210] cpu0 L3 #205 0xffffffffc0001234: a4-1\n"
		  "[    0.000001300] cpu0 L3 #206 0xffffffffc0001234: a5-0\n");
	CHECK(dti_dump_channel(d, 1) == NULL && errno == ENOENT);
	dti_dump_free(d);
	free(m.p);
}

/* The source names and ring offsets of the records, as dti_rec says them. */
static void test_sources(void)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	struct dti_reader *r;
	struct dti_rec rec;
	struct dti_dump *d;
	int n;

	image_drv(&m, &c);
	d = load(&mm, &n);
	r = dti_dump_open(d, 0, 0);
	CHECK(r && dti_nr_streams(r) == 2);
	CHECK(dti_next(r, &rec) == 1);
	CHECK_STR(rec.source, "drv/trace0");
	CHECK(rec.offset == 2 * 2048 + IMG_SUB && rec.seq == 200 && rec.cpu == 0);
	CHECK(dti_next(r, &rec) == 1);
	CHECK_STR(rec.source, "drv/trace1");
	CHECK(rec.offset == IMG_SUB);
	dti_close(r);
	CHECK(!dti_dump_open(d, 0, DTI_OPEN_FOLLOW) && errno == EINVAL);
	CHECK(!dti_dump_open(d, 1, 0) && errno == ENOENT);
	dti_dump_free(d);
	free(m.p);
}

/*
 * Slots that are not of the live ring: an earlier generation full of
 * records, another channel's sub-buffer, the right generation in the
 * wrong slot, garbage.  All read as unused, without a notice.
 */
static void test_stale_slots(void)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	struct dti_dump *d;
	struct out o;
	unsigned char junk[2048];
	unsigned int i;
	int n;

	img_init(&m, 16);
	chan_drv(&c);
	img_channel(&m, &c);
	img_subbuf(&m, &c, 0, 0, c.generation, NULL, 2, true, "live0-", 0, 100);
	img_subbuf(&m, &c, 0, 1, c.generation - 1, NULL, 3, true, "old-", 9, 50);
	img_subbuf(&m, &c, 0, 2, c.generation, "other", 2, true, "oth-", 0, 60);
	img_subbuf(&m, &c, 0, 7, c.generation, NULL, 2, true, "wrong-", 7, 70);
	img_subbuf(&m, &c, 1, 0, c.generation, NULL, 1, false, "live1-", 0, 105);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = i * 37 + 11;
	img_ring_put(&m, &c, 1, 2048, junk, sizeof(junk));
	img_ring_put(&m, &c, 1, 3 * 2048, junk, sizeof(junk));
	d = load(&mm, &n);
	ch = dti_dump_channel(d, 0);
	/* slot 3 of cpu0 holds sub-buffer 7 (7 % 4 = 3): wrong-* are live */
	CHECK(ch->records == 5 && ch->stale_slots == 5);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o),
		  "live0-0\nlive1-0\nlive0-1\n"
		  "N: 5 records lost on cpu0 between seq 2 and 7\n"
		  "wrong-0\nwrong-1\n");
	CHECK(o.damage == 0 && o.warning == 0);
	dti_dump_free(d);
	free(m.p);
}

/*
 * A pending store (records out of time order, two logging CPUs) merged
 * with the rings; a pending store with no channel descriptor.
 */
static void test_pending(void)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	unsigned char recs[1024];
	struct dti_dump *d;
	struct out o;
	size_t used = 0;
	char dir[300];
	int n;

	image_drv(&m, &c);
	used += img_pending_rec(recs + used, 1, 1012, "p-late");
	used += img_pending_rec(recs + used, 0, 999, "p-first");
	used += img_pending_rec(recs + used, 0, 1200, "p-tie");	/* as a4-0 */
	img_pending(&m, "drv", 13 * IMG_PAGE, true, 14 * IMG_PAGE, 4096, recs, used);
	used = img_pending_rec(recs, 1, 5, "early");
	img_pending(&m, "early", 13 * IMG_PAGE + 2048, false, 15 * IMG_PAGE, 512,
		    recs, used);
	d = load(&mm, &n);
	CHECK(n == 2);
	ch = dti_dump_channel(d, find(d, n, "drv"));
	CHECK(ch->pending_addr == 13 * IMG_PAGE && ch->pending_records == 3);
	CHECK(!ch->error && !ch->damage && !ch->notes);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o),
		  "p-first\na2-0\nb0-0\na2-1\np-late\nb0-1\nb0-2\na3-0\na3-1\n"
		  "a4-0\np-tie\nb1-0\na4-1\na5-0\n");
	CHECK(o.damage == 0 && o.warning == 0);
	print_chan(d, n, "drv", DTI_FMT_TS, &o);
	CHECK(strstr(o.text, "[    0.000000999] cpu0 L4 #- 0xffffffffc0001234: p-first\n"
			     "[    0.000001000] cpu0 L3 #200 ") != NULL);
	CHECK(strstr(o.text, "] cpu1 L4 #- 0xffffffffc0001234: p-late\n") != NULL);
	print_chan(d, n, "drv", DTI_FMT_JSON, &o);
	CHECK(strstr(o.text, "{\"ts_ns\":\"999\",\"channel\":\"drv\",\"cpu\":0,\"level\":4,\"seq\":null,\"flags\":17,") != NULL);
	ch = dti_dump_channel(d, find(d, n, "early"));
	CHECK(ch->pending_records == 1 && !ch->desc_addr && !ch->nr_bufs);
	CHECK(ch->level == DTI_DUMP_NO_LEVEL && !ch->error && !ch->damage);
	CHECK_STR(ch->notes, "no channel descriptor: an early handle not yet initialised (or a descriptor the dump lacks); pending records only\n");
	CHECK_STR(print_chan(d, n, "early", DTI_FMT_TS, &o),
		  "[    0.000000005] cpu1 L4 #- 0xffffffffc0001234: early\n");
	/* saved: a directory with no trace files, a pending store's alone */
	snprintf(dir, sizeof(dir), "%s/early", tmpdir);
	CHECK(dti_dump_save(d, find(d, n, "early"), dir) == 0);
	print_reader(dti_open_dir(dir, 0), DTI_FMT_TS, &o);
	CHECK_STR(o.text, "[    0.000000005] cpu1 L4 #- 0xffffffffc0001234: early\n");
	CHECK(o.damage == 0 && o.warning == 0);
	free(o.text);
	dti_dump_free(d);
	/* no translation of virtual addresses: the store cannot be read */
	mm.no_virt = true;
	d = load(&mm, &n);
	ch = dti_dump_channel(d, find(d, n, "drv"));
	CHECK(ch->pending_records == 0 && !ch->error);
	CHECK_STR(ch->damage, "pending store (descriptor at physical 0xd000): its 144 bytes at virtual 0xffff88800000e000 cannot be read: not in the dump (test image)\n");
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o), DRV_TEXT);
	dti_dump_free(d);
	free(m.p);
}

/*
 * dti_print_records(), which `dti dump` uses, prints what the loop of
 * dti_next() and dti_print() prints: pending records, gaps and damage
 * in a dump's rings included.
 */
static void test_print_records(void)
{
	static const unsigned long maxes[] = { 0, 1, 3 };
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	unsigned char recs[256];
	struct dti_dump *d;
	struct out a, b;
	unsigned int fmt, i;
	size_t used;
	int n;

	image_drv(&m, &c);
	used = img_pending_rec(recs, 1, 1012, "p-late");
	used += img_pending_rec(recs + used, 0, 1200, "p-tie");
	img_pending(&m, "drv", 13 * IMG_PAGE, true, 14 * IMG_PAGE, 4096, recs, used);
	m.p[c.pages[1][0] * IMG_PAGE + IMG_SUB + DTI_RECORD_SIZE(4)] ^= 0x55;
	d = load(&mm, &n);
	for (fmt = DTI_FMT_TEXT; fmt <= DTI_FMT_RAW; fmt++) {
		print_reader(dti_dump_open(d, 0, 0), fmt, &a);
		for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
			print_batched(dti_dump_open(d, 0, 0), fmt, maxes[i], &b);
			CHECK(a.len > 50 && a.len == b.len && !memcmp(a.text, b.text, a.len));
			CHECK(a.damage == 1 && b.damage == 1 && b.rc == 0);
			free(b.text);
		}
		free(a.text);
	}
	dti_dump_free(d);
	free(m.p);
}

/* Damage in a pending store: the records before it come out. */
static void test_pending_damage(void)
{
	struct img m;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	unsigned char recs[1024];
	struct dti_dump *d;
	struct out o;
	size_t used = 0, bad;
	int n;

	img_init(&m, 8);
	used += img_pending_rec(recs + used, 0, 20, "two");
	used += img_pending_rec(recs + used, 1, 10, "one");
	bad = used;
	used += img_pending_rec(recs + used, 1, 30, "lost");
	recs[bad] ^= 0xff;			/* bad magic */
	img_pending(&m, "p", IMG_PAGE, true, 2 * IMG_PAGE, 4096, recs, used);
	d = load(&mm, &n);
	ch = dti_dump_channel(d, 0);
	CHECK(n == 1 && ch->pending_records == 2);
	CHECK_STR(ch->damage, "pending store at virtual 0xffff888000002000 (descriptor at physical 0x1000): bad magic (not DTI data) at offset 96; the rest, 48 bytes, not read\n");
	CHECK_STR(print_chan(d, n, "p", DTI_FMT_TEXT, &o),
		  "N: p/pending: corrupt data at offset 96 of the pending store at virtual 0xffff888000002000: bad magic (not DTI data); the rest, 48 bytes, not read\n"
		  "one\ntwo\n");
	CHECK(o.damage == 1);
	dti_dump_free(d);
	/* a record of a pending store without the pending flag */
	used = img_pending_rec(recs, 0, 20, "x");
	recs[offsetof(struct dti_record, flags)] &= ~DTI_REC_PENDING;
	img_pending(&m, "p", IMG_PAGE, true, 2 * IMG_PAGE, 4096, recs, used);
	d = load(&mm, &n);
	CHECK_STR(print_chan(d, n, "p", DTI_FMT_TEXT, &o),
		  "N: p/pending: corrupt data at offset 0: a record without the pending flag in a pending store; record skipped\n");
	dti_dump_free(d);
	/* one with a sequence number, one of a CPU the machine has not */
	used = img_pending_rec(recs, 0, 20, "x");
	recs[offsetof(struct dti_record, seq)] = 5;
	used += img_pending_rec(recs + used, 0, 30, "y");
	img_pending(&m, "p", IMG_PAGE, true, 2 * IMG_PAGE, 4096, recs, used);
	recs[used - DTI_RECORD_SIZE(1) + offsetof(struct dti_record, log_cpu)] = 1;
	img_pending(&m, "p", IMG_PAGE, true, 2 * IMG_PAGE, 4096, recs, used);
	d = load(&mm, &n);
	CHECK_STR(print_chan(d, n, "p", DTI_FMT_TEXT, &o),
		  "N: p/pending: corrupt data at offset 0: pending record with a sequence number; record skipped\n"
		  "N: p/pending: corrupt data at offset 48: logging CPU 1 in a record of cpu0 (not a replayed one); record skipped\n");
	dti_dump_free(d);
	free(m.p);
}

/* A descriptor, CPU table or page list that fails its CRC. */
static void test_crc_damage(void)
{
	struct img m;
	struct img_chan c, c2;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	struct dti_dump *d;
	struct out o;
	int n;

	image_drv(&m, &c);
	/* a second channel, "ok", sharing nothing */
	c2 = c;
	c2.name = "ok";
	c2.desc = 1 * IMG_PAGE;
	c2.level_at = 0;
	c2.table = 1 * IMG_PAGE + 512;
	c2.nr_cpu_ids = 1;
	c2.pfns[0] = 1 * IMG_PAGE + 1024;
	c2.pages[0][0] = 14;
	c2.pages[0][1] = 15;
	img_channel(&m, &c2);
	img_subbuf(&m, &c2, 0, 0, c2.generation, NULL, 1, false, "ok-", 0, 1);

	m.p[c.desc + offsetof(struct dti_dump_desc, subbuf_size)] ^= 1;
	d = load(&mm, &n);
	CHECK(n == 2);
	ch = dti_dump_channel(d, find(d, n, "drv"));
	CHECK_STR(ch->error, "channel descriptor at physical 0x3008: CRC mismatch (damaged, or caught in the middle of an update)\n");
	CHECK(!dti_dump_open(d, find(d, n, "drv"), 0) && errno == EINVAL);
	CHECK_STR(dti_errmsg(), "channel drv: channel descriptor at physical 0x3008: CRC mismatch (damaged, or caught in the middle of an update)");
	CHECK_STR(print_chan(d, n, "ok", DTI_FMT_TEXT, &o), "ok-0\n");
	CHECK(dti_dump_summary(d)->descriptors == 2);
	dti_dump_free(d);
	m.p[c.desc + offsetof(struct dti_dump_desc, subbuf_size)] ^= 1;

	m.p[c.table + 3] ^= 0x80;
	d = load(&mm, &n);
	ch = dti_dump_channel(d, find(d, n, "drv"));
	CHECK_STR(ch->error, "its CPU table at physical 0x3800 (descriptor at 0x3008) fails its CRC\n");
	dti_dump_free(d);
	m.p[c.table + 3] ^= 0x80;

	m.p[c.pfns[1]] ^= 1;		/* cpu1's page list */
	d = load(&mm, &n);
	ch = dti_dump_channel(d, find(d, n, "drv"));
	CHECK(!ch->error && ch->nr_bufs == 1 && ch->records == 7);
	CHECK_STR(ch->damage, "cpu1: its page list at physical 0x3b00 fails its CRC; its ring is not read\n");
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o),
		  "a2-0\na2-1\na3-0\na3-1\na4-0\na4-1\na5-0\n");
	dti_dump_free(d);
	free(m.p);
}

/* Descriptors with a valid magic but wrong in some other way. */
static void check_bad_desc(size_t field, uint32_t value, size_t width, const char *error)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	struct dti_dump_desc desc;
	struct dti_dump *d;
	char want[256];
	int n;

	image_drv(&m, &c);
	memcpy(&desc, m.p + c.desc, sizeof(desc));
	memcpy((char *)&desc + field, &value, width);
	desc.crc = 0;
	desc.crc = img_crc32(&desc, sizeof(desc));
	memcpy(m.p + c.desc, &desc, sizeof(desc));
	d = load(&mm, &n);
	CHECK(n == 1);
	snprintf(want, sizeof(want), "%s descriptor at physical 0x3008: %s\n",
		 field == offsetof(struct dti_dump_desc, type) ? "a" : "channel", error);
	if (want[0] == 'a')
		memmove(want, want + 2, strlen(want + 2) + 1);
	CHECK_STR(dti_dump_channel(d, 0)->error, want);
	dti_dump_free(d);
	free(m.p);
}

static void test_bad_descriptors(void)
{
	const size_t gen = offsetof(struct dti_dump_desc, generation);

	check_bad_desc(offsetof(struct dti_dump_desc, version), 2, 2,
		       "descriptor version 2 (this reader knows version 1)");
	check_bad_desc(offsetof(struct dti_dump_desc, type), 3, 2,
		       "unknown descriptor type 3");
	check_bad_desc(offsetof(struct dti_dump_desc, size), 96, 4,
		       "descriptor size 96, not 104");
	check_bad_desc(offsetof(struct dti_dump_desc, n_subbufs), 1, 4,
		       "impossible number of sub-buffers");
	check_bad_desc(offsetof(struct dti_dump_desc, n_subbufs), 4097, 4,
		       "impossible number of sub-buffers");
	check_bad_desc(offsetof(struct dti_dump_desc, subbuf_size), 4100, 4,
		       "impossible sub-buffer size");
	check_bad_desc(offsetof(struct dti_dump_desc, subbuf_size), 8u << 20, 4,
		       "impossible sub-buffer size");
	check_bad_desc(offsetof(struct dti_dump_desc, page_size), 3000, 4,
		       "impossible page size");
	check_bad_desc(offsetof(struct dti_dump_desc, nr_cpus), 0, 4,
		       "impossible number of CPUs");
	check_bad_desc(gen, 0, 4, "buffers of generation 0");
	check_bad_desc(offsetof(struct dti_dump_desc, cpu_table), 3, 4,
		       "impossible CPU table address");
	check_bad_desc(8, 'a' | '/' << 8, 2, "bad channel name in the marker");
	check_bad_desc(7, '.', 1, "bad channel name in the marker");
	check_bad_desc(20, 'x', 1, "bytes after the channel name in the marker");
	/* the CPU table's entry says 3 pages: 8192 bytes take 2 */
}

/* Markers that are no descriptor: counted as stray, never reported. */
static void test_stray_markers(void)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	const struct dti_dump_summary *sum;
	struct dti_dump *d;
	struct out o;
	int n;

	image_drv(&m, &c);
	img_put(&m, 5 * IMG_PAGE, "__DTI__drv\0\0\0", 13);		/* no magic */
	img_put(&m, 5 * IMG_PAGE + 64, "__DTI__%s", 9);
	img_put(&m, 5 * IMG_PAGE + 129, "__DTI__drv", 10);		/* unaligned */
	img_put(&m, 5 * IMG_PAGE + 4090, "__DTI_", 6);			/* at a page end */
	/* a static descriptor's image with no relocation: a module file */
	img_pending(&m, "drv", 6 * IMG_PAGE, false, 0, 4096, "", 0);
	m.p[6 * IMG_PAGE + offsetof(struct dti_dump_pending, buf)] = 0;
	memset(m.p + 6 * IMG_PAGE + offsetof(struct dti_dump_pending, buf), 0, 8);
	d = load(&mm, &n);
	sum = dti_dump_summary(d);
	CHECK(n == 1 && sum->markers == 4 && sum->stray == 3 && sum->descriptors == 1);
	CHECK(!dti_dump_channel(d, 0)->notes && !dti_dump_channel(d, 0)->pending_addr);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o), DRV_TEXT);
	dti_dump_free(d);
	free(m.p);
}

/* A descriptor straddling two runs given in reverse order; runs given twice. */
static void test_scan_runs(void)
{
	const struct dti_dump_mem mem = {
		.size = sizeof(mem), .read_phys = mem_read_phys,
	};
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	struct dti_dump_mem mem2 = mem;
	struct dti_dump *d;
	size_t cut;
	int n;

	image_drv(&m, &c);
	mem2.arg = &mm;
	for (cut = c.desc + 1; cut < c.desc + 8; cut += 3) {
		d = dti_dump_new(&mem2);
		CHECK(dti_dump_scan(d, cut, m.p + cut, m.size - cut) == 0);
		CHECK(dti_dump_scan(d, 0, m.p, cut) == 0);
		CHECK(dti_dump_scan(d, 0, m.p, cut) == 0);
		n = dti_dump_load(d);
		CHECK(n == 1 && dti_dump_summary(d)->markers == 1);
		CHECK(dti_dump_summary(d)->scanned == m.size + cut);
		CHECK(dti_dump_load(d) == -1 && errno == EINVAL);
		dti_dump_free(d);
	}
	CHECK(!dti_dump_new(&(struct dti_dump_mem){ 0 }) && errno == EINVAL);
	free(m.p);
}

#define MISS(mm, page)	((mm).missing[(page) / 8] |= 1 << (page) % 8)

/*
 * Ring pages the dump does not hold read as zeros: a sub-buffer whose
 * header is in one is unused; records in one are damage.
 */
static void test_missing_pages(void)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	struct dti_dump *d;
	struct out o;
	unsigned int i;
	int n;

	image_drv(&m, &c);
	MISS(mm, c.pages[0][1]);	/* cpu0's slots 2 and 3 */
	MISS(mm, c.pages[1][0]);	/* cpu1's slots 0 and 1 */
	d = load(&mm, &n);
	ch = dti_dump_channel(d, 0);
	CHECK(ch->missing_pages == 2 && ch->stale_slots == 6 && ch->records == 3);
	CHECK(!ch->error && !ch->damage);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o), "a4-0\na4-1\na5-0\n");
	CHECK(o.damage == 0);
	dti_dump_free(d);
	free(m.p);

	/* sub-buffers of 3000 bytes: cpu1's sub-buffer 1 has records in two pages */
	img_init(&m, 16);
	chan_drv(&c);
	c.subbuf_size = 3000;
	c.pages[0][2] = 1;
	c.pages[1][2] = 2;
	img_channel(&m, &c);
	img_subbuf(&m, &c, 1, 1, c.generation, NULL, 30, false, "b", 0, 100);
	memset(mm.missing, 0, sizeof(mm.missing));
	MISS(mm, c.pages[1][1]);
	d = load(&mm, &n);
	ch = dti_dump_channel(d, 0);
	CHECK(ch->missing_pages == 1 && ch->records == 30 && !ch->damage);
	print_chan(d, n, "drv", DTI_FMT_TEXT, &o);
	if (getenv("VERBOSE"))
		printf("%s", o.text);
	for (i = 0; i < 20; i++) {
		char line[16];

		snprintf(line, sizeof(line), "%sb%u\n", i ? "" : "", i);
		CHECK(strstr(o.text, line) != NULL);
	}
	CHECK(strstr(o.text, "b20\n") == NULL);
	CHECK_STR(strstr(o.text, "b19\n"), "b19\n"
		  "N: drv/trace1: corrupt data at offset 4056: zero bytes where a record header belongs; the rest of sub-buffer 1 skipped\n");
	CHECK(strncmp(o.text, "N: drv/trace1: ring offsets 4096 to 8191 (page frame 0x6) are not in the dump: the records of sub-buffer slot 1 from offset 4056 on are lost\n", 100) == 0);
	CHECK(o.damage == 1 && o.warning == 1);
	dti_dump_free(d);
	free(m.p);

	/* the level and a page list */
	memset(mm.missing, 0, sizeof(mm.missing));
	image_drv(&m, &c);
	c.level_at = 9 * IMG_PAGE;
	c.pfns[1] = 10 * IMG_PAGE + 64;
	img_channel(&m, &c);
	MISS(mm, 9);
	MISS(mm, 10);
	d = load(&mm, &n);
	ch = dti_dump_channel(d, 0);
	CHECK(ch->level == DTI_DUMP_NO_LEVEL && ch->nr_bufs == 1);
	CHECK_STR(ch->notes, "level at physical 0x9000: not in the dump (test image)\n");
	CHECK_STR(ch->damage, "cpu1: its page list at physical 0xa040 cannot be read: not in the dump (test image); its ring is not read\n");
	dti_dump_free(d);
	free(m.p);
}

/* Damage inside a live sub-buffer: reported by the reader, the rest read. */
static void test_damage_in_ring(void)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	struct dti_dump *d;
	struct out o;
	uint64_t at;
	int n;

	image_drv(&m, &c);
	/* cpu1 slot 0, its second record's magic: pages[1][0], offset 96 + 48 */
	at = c.pages[1][0] * IMG_PAGE + IMG_SUB + DTI_RECORD_SIZE(4);
	m.p[at] ^= 0x55;
	d = load(&mm, &n);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o),
		  "a2-0\nb0-0\n"
		  "N: drv/trace1: corrupt data at offset 144: bad magic (not DTI data); the rest of sub-buffer 0 skipped\n"
		  "a2-1\na3-0\na3-1\na4-0\n"
		  "N: 2 records lost on cpu1 between seq 1 and 3\n"
		  "b1-0\na4-1\na5-0\n");
	CHECK(o.damage == 1);
	dti_dump_free(d);
	free(m.p);
}

/* The same image in the other byte order reads the same. */
static void test_other_byte_order(void)
{
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	unsigned char recs[256];
	struct dti_dump *d;
	struct out o;
	size_t used;
	int n;

	img_swapped = true;
	image_drv(&m, &c);
	used = img_pending_rec(recs, 1, 1012, "p-late");
	img_pending(&m, "drv", 13 * IMG_PAGE, true, 14 * IMG_PAGE, 4096, recs, used);
	img_swapped = false;
	d = load(&mm, &n);
	CHECK(n == 1 && dti_dump_channel(d, 0)->swapped);
	CHECK(dti_dump_channel(d, 0)->level == DTI_LEVEL_INFO);
	CHECK(dti_dump_channel(d, 0)->pending_records == 1);
	CHECK(!dti_dump_channel(d, 0)->error && !dti_dump_channel(d, 0)->damage);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o),
		  "a2-0\nb0-0\na2-1\np-late\nb0-1\nb0-2\na3-0\na3-1\na4-0\nb1-0\na4-1\na5-0\n");
	CHECK(o.damage == 0 && o.warning == 0);
	dti_dump_free(d);
	free(m.p);
}

/*
 * Two valid descriptors of one name: an earlier boot's, whose ring pages
 * now hold the live ring of another generation, and the live one.
 */
static void test_duplicates(void)
{
	struct img m;
	struct img_chan c, old;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	struct dti_dump *d;
	struct out o;
	char want[512];
	int n;

	image_drv(&m, &c);
	old = c;
	old.generation = 77;
	old.desc = 2 * IMG_PAGE;
	old.table = 2 * IMG_PAGE + 1024;
	old.pfns[0] = 2 * IMG_PAGE + 2048;
	old.pfns[1] = 2 * IMG_PAGE + 3072;
	img_channel(&m, &old);
	/* a damaged copy, and one of a later version */
	img_put(&m, 7 * IMG_PAGE, m.p + c.desc, sizeof(struct dti_dump_desc));
	m.p[7 * IMG_PAGE + 60] ^= 4;
	img_put(&m, 1 * IMG_PAGE, m.p + c.desc, sizeof(struct dti_dump_desc));
	m.p[1 * IMG_PAGE + offsetof(struct dti_dump_desc, version)] = 3;
	d = load(&mm, &n);
	CHECK(n == 1);
	ch = dti_dump_channel(d, 0);
	CHECK(ch->desc_addr == c.desc && ch->generation == c.generation);
	snprintf(want, sizeof(want),
		 "channel descriptor at physical 0x1000 not used: descriptor version 3 (this reader knows version 1)\n"
		 "channel descriptor at physical 0x2000 not used: valid, but its rings hold 0 sub-buffers of its generation, those of the one used 6 (an earlier boot's?)\n"
		 "channel descriptor at physical 0x7000 not used: CRC mismatch (damaged, or caught in the middle of an update)\n");
	CHECK_STR(ch->notes, want);
	CHECK(!ch->error && !ch->damage);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o), DRV_TEXT);
	dti_dump_free(d);
	free(m.p);
}

/*
 * dti_dump_save() writes what dti_open_dir() reads as dti_dump_open()
 * does, in every format, and what dti_open_files() reads the same given
 * its files in any order (info tells the geometry of cpu1's ring, pending
 * is merged as a pending store's records); a second save into the same
 * directory fails.
 */
static void test_save(void)
{
	static const enum dti_format fmts[] = {
		DTI_FMT_TEXT, DTI_FMT_TS, DTI_FMT_HEX, DTI_FMT_JSON, DTI_FMT_RAW,
	};
	static const char *const names[] = { "pending", "trace1", "info", "trace0" };
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	unsigned char recs[256];
	struct dti_dump *d;
	struct out a, b, fl;
	char dir[300], *info, path[400], files[4][400];
	const char *paths[4];
	size_t used, i;
	FILE *f;
	int n;

	img_init(&m, 16);
	chan_drv(&c);
	/*
	 * sub-buffers of 3000 bytes: slots straddle pages, and cpu1's first
	 * slot is unused, so that the copy of its ring starts with no header
	 * (only info tells its geometry)
	 */
	c.subbuf_size = 3000;
	c.pages[0][2] = 1;
	c.pages[1][2] = 2;
	img_channel(&m, &c);
	img_subbuf(&m, &c, 0, 2, c.generation, NULL, 2, true, "a2-", 200, 1000);
	img_subbuf(&m, &c, 0, 3, c.generation, NULL, 2, true, "a3-", 202, 1100);
	img_subbuf(&m, &c, 0, 4, c.generation, NULL, 2, true, "a4-", 204, 1200);
	img_subbuf(&m, &c, 0, 5, c.generation, NULL, 1, false, "a5-", 206, 1300);
	img_subbuf(&m, &c, 1, 1, c.generation, NULL, 3, true, "b1-", 0, 1005);
	img_subbuf(&m, &c, 1, 2, c.generation, NULL, 1, false, "b2-", 3, 1205);
	used = img_pending_rec(recs, 1, 1012, "p-late");
	used += img_pending_rec(recs + used, 0, 999, "p-first");
	img_pending(&m, "drv", 13 * IMG_PAGE, true, 14 * IMG_PAGE, 4096, recs, used);
	d = load(&mm, &n);
	snprintf(dir, sizeof(dir), "%s/save", tmpdir);
	CHECK(dti_dump_save(d, 0, dir) == 0);
	for (i = 0; i < 4; i++) {
		snprintf(files[i], sizeof(files[i]), "%s/%s", dir, names[i]);
		paths[i] = files[i];
	}
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		print_reader(dti_dump_open(d, 0, 0), fmts[i], &a);
		print_reader(dti_open_dir(dir, 0), fmts[i], &b);
		print_reader(dti_open_files(paths, 4, 0), fmts[i], &fl);
		CHECK(a.len > 50 && a.len == b.len && !memcmp(a.text, b.text, a.len));
		CHECK(fl.len == b.len && !memcmp(fl.text, b.text, b.len));
		if (cur_failed && getenv("VERBOSE"))
			printf("format %zu:\n%s\n---\n%s\n", i, a.text, b.text);
		CHECK(a.damage == 0 && b.damage == 0 && b.warning == 0);
		CHECK(fl.damage == 0 && fl.warning == 0);
		free(a.text);
		free(b.text);
		free(fl.text);
	}
	print_reader(dti_open_dir(dir, 0), DTI_FMT_TEXT, &b);
	CHECK_STR(b.text, "p-first\na2-0\nb1-0\na2-1\np-late\nb1-1\nb1-2\na3-0\na3-1\n"
		  "a4-0\nb2-0\na4-1\na5-0\n");
	free(b.text);
	snprintf(path, sizeof(path), "%s/info", dir);
	f = fopen(path, "r");
	info = calloc(1, 4096);
	CHECK(f && fread(info, 1, 4095, f) > 0);
	if (f)
		fclose(f);
	CHECK_STR(info, "name: drv\nlevel: 6\nmode: overwrite\nsubbuf_size: 3000\n"
		  "n_subbufs: 4\nbuffers: allocated\nrecord_version: 1\n"
		  "generation: 1592590337\nnr_cpu_ids: 2\npage_size: 4096\n"
		  "descriptor: physical 0x3008\npending_descriptor: physical 0xd000\n"
		  "pending_records: 2\nbyte_order: little-endian\nsource: memory dump\n");
	free(info);
	CHECK(dti_dump_save(d, 0, dir) == -1 && errno == ENOTEMPTY);
	dti_dump_free(d);
	free(m.p);
}

/*
 * The geometry in a snapshot's info does not make what read() returned
 * a ring copy: a stream of full sub-buffers without padding, the first
 * of them not in its slot, is as long as the ring.
 */
static void test_info_hint_stream(void)
{
	unsigned char ring[2 * 512];
	struct dti_subbuf_info in;
	char dir[300], path[400], text[65];
	size_t pos;
	unsigned int k, i;
	struct out o;
	FILE *f;

	for (k = 0; k < 2; k++) {
		unsigned char *sb = ring + 512 * k;

		pos = IMG_SUB;
		for (i = 0; i < 4; i++) {	/* 4 records of 104 bytes fill 416 */
			snprintf(text, sizeof(text), "s%u-%u%060u", k + 5, i, 0);
			pos += img_record(sb + pos, 0, DTI_REC_TEXT, 3, 4 * k + i,
					  100 * k + i, text, 64);
		}
		memset(&in, 0, sizeof(in));
		in.subbuf_size = 512;
		in.n_subbufs = 2;
		in.records = 4;
		in.state = DTI_SUBBUF_CLOSED;
		strcpy(in.name, "hint");
		img_record(sb, 0, DTI_REC_SUBBUF, 0, k + 5, 0, &in, DTI_SUBBUF_INFO_V1_SIZE);
	}
	snprintf(dir, sizeof(dir), "%s/hint", tmpdir);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/trace0", dir);
	f = fopen(path, "w");
	fwrite(ring, 1, sizeof(ring), f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/info", dir);
	f = fopen(path, "w");
	fputs("name: hint\nsubbuf_size: 512\nn_subbufs: 2\n", f);
	fclose(f);
	print_reader(dti_open_dir(dir, 0), DTI_FMT_TEXT, &o);
	CHECK(o.rc == 0 && o.damage == 0 && o.warning == 0);
	CHECK(o.text && !strncmp(o.text, "s5-0", 4) && strstr(o.text, "s6-3") &&
	      !strstr(o.text, "N: "));
	free(o.text);
}

/* ---- seeds for fuzz_dump.c ---- */

/* Write @m as seed @name, with fuzz_dump.c's flag byte @flags first. */
/* ---- persistent regions ---- */

#define PR_BASE		(16 * IMG_PAGE)
#define PR_SIZE		(32 * IMG_PAGE)
/* after the slot table and the module tables, on a page */
#define PR_AREAS	((sizeof(struct dti_persist_header) + \
			  DTI_PERSIST_SLOTS * sizeof(struct dti_persist_slot) + \
			  DTI_PERSIST_MODULE_TABLES * sizeof(struct dti_persist_modules) + \
			  IMG_PAGE - 1) / IMG_PAGE * IMG_PAGE)
#define PR_AREA(k)	(PR_AREAS + (k) * 4 * IMG_PAGE)
#define PR_GEN_OLD	0xa0000001u
#define PR_GEN_NOW	0xa0000002u

/*
 * Region slots: "pa" written by boot 1 and by boot 2 (the dumped one,
 * whose descriptor describes the rings of area 1); "pb" by boot 1 only.
 */
static const struct img_slot pr_slots[] = {
	{ "pa", 4 * IMG_PAGE, {
		{ PR_AREA(0), PR_GEN_OLD, 1, DTI_PERSIST_AREA_USED, 2048, 4, 2 },
		{ PR_AREA(1), PR_GEN_NOW, 2, DTI_PERSIST_AREA_USED, 2048, 4, 2 } } },
	{ "pb", 4 * IMG_PAGE, {
		{ PR_AREA(2), 0xb0000001u, 1, DTI_PERSIST_AREA_USED, 4096, 2, 2 },
		{ PR_AREA(3), 0, 0, DTI_PERSIST_AREA_FREE, 0, 0, 0 } } },
};

#define PA_OLD_TEXT "old0-0\nold1-0\nold0-1\nold1-1\nolder-0\nolder-1\nolder-2\n"
#define PA_NOW_TEXT "now-0\nnow-1\nnow-2\n"
#define PB_TEXT "pb-0\npb-1\n"

/* A region with pr_slots' rings, and pa's channel descriptor (if @desc) */
static void image_persist(struct img *m, bool desc)
{
	struct img_chan c;
	unsigned int cpu;

	img_init(m, 48);
	img_region(m, PR_BASE, PR_SIZE, 2, pr_slots, 2, PR_AREA(4));
	img_area_chan(&c, "pa", PR_BASE, &pr_slots[0].area[0]);
	img_subbuf(m, &c, 0, 1, PR_GEN_OLD, NULL, 2, true, "old0-", 10, 100);
	img_subbuf(m, &c, 1, 0, PR_GEN_OLD, NULL, 2, true, "old1-", 0, 105);
	img_subbuf(m, &c, 0, 2, PR_GEN_OLD, NULL, 3, false, "older-", 12, 200);
	/* the dumped boot's buffers of pa, another generation, in area 1 */
	img_area_chan(&c, "pa", PR_BASE, &pr_slots[0].area[1]);
	img_subbuf(m, &c, 1, 0, PR_GEN_NOW, NULL, 3, false, "now-", 0, 900);
	if (desc) {
		c.level = DTI_LEVEL_DEBUG;
		c.desc = 3 * IMG_PAGE + 8;
		c.level_at = 3 * IMG_PAGE + 1024;
		c.table = 3 * IMG_PAGE + 2048;
		for (cpu = 0; cpu < 2; cpu++)
			c.pfns[cpu] = 3 * IMG_PAGE + 2560 + 256 * cpu;
		img_channel(m, &c);
	}
	img_area_chan(&c, "pb", PR_BASE, &pr_slots[1].area[0]);
	img_subbuf(m, &c, 1, 0, 0xb0000001u, NULL, 2, false, "pb-", 0, 50);
}

/*
 * A region holding two boots' rings: those of the dumped boot belong to
 * the channel its descriptor describes, the others are channels
 * NAME@bootN, read like any other; saved, they read back the same.
 */
static void test_persist_region(void)
{
	struct img_chan old;
	struct img m;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	const struct dti_dump_summary *sum;
	struct dti_dump *d;
	char dir[300], path[400], *info;
	struct out o, b;
	FILE *f;
	int n;

	image_persist(&m, true);
	/*
	 * boot 1's descriptor of pa, left in memory by the reset: its rings
	 * are pa@boot1, and hold more sub-buffers than the live ones
	 */
	img_area_chan(&old, "pa", PR_BASE, &pr_slots[0].area[0]);
	old.desc = 5 * IMG_PAGE + 8;
	old.table = 5 * IMG_PAGE + 2048;
	old.pfns[0] = 5 * IMG_PAGE + 2560;
	old.pfns[1] = 5 * IMG_PAGE + 2816;
	img_channel(&m, &old);
	d = load(&mm, &n);
	CHECK(n == 3);
	CHECK_STR(dti_dump_channel(d, 0)->name, "pa");
	CHECK_STR(dti_dump_channel(d, 1)->name, "pa@boot1");
	CHECK_STR(dti_dump_channel(d, 2)->name, "pb@boot1");
	ch = dti_dump_channel(d, 0);
	CHECK(ch->desc_addr == 3 * IMG_PAGE + 8 && ch->region_addr == PR_BASE &&
	      ch->boot == 2 && ch->level == DTI_LEVEL_DEBUG && ch->records == 3);
	CHECK(ch->flags == (DTI_DUMP_F_BUFFERS | DTI_DUMP_F_PERSIST));
	CHECK(!ch->notes && !ch->error && !ch->damage);
	ch = dti_dump_channel(d, 1);
	CHECK(ch->notes && strstr(ch->notes, "channel descriptor at physical 0x5008 not used: boot 1 left it in memory, it describes these rings"));
	CHECK(!ch->desc_addr && ch->region_addr == PR_BASE && ch->boot == 1 &&
	      ch->level == DTI_DUMP_NO_LEVEL && ch->generation == PR_GEN_OLD &&
	      ch->nr_bufs == 2 && ch->records == 7 && ch->stale_slots == 5);
	CHECK(!ch->error && !ch->damage && !ch->missing_pages);
	ch = dti_dump_channel(d, 2);
	CHECK(ch->boot == 1 && ch->subbuf_size == 4096 && ch->n_subbufs == 2 &&
	      ch->records == 2 && !ch->error && !ch->damage);
	sum = dti_dump_summary(d);
	CHECK(sum->regions == 1 && sum->damaged_slots == 0 && !sum->region_damage &&
	      sum->markers == 3 && sum->stray == 0 && sum->descriptors == 2);
	CHECK_STR(sum->region_lines, "persistent region at physical 0x10000: 128 KiB, taken by 2 boots of dti.ko, 2 of 32 slots used, 44 KiB free\n");
	CHECK_STR(print_chan(d, n, "pa", DTI_FMT_TEXT, &o), PA_NOW_TEXT);
	CHECK_STR(print_chan(d, n, "pa@boot1", DTI_FMT_TEXT, &o), PA_OLD_TEXT);
	CHECK(o.damage == 0 && o.warning == 0);
	CHECK_STR(print_chan(d, n, "pb@boot1", DTI_FMT_TEXT, &o), PB_TEXT);
	/* saved, pa@boot1 reads back the same, its info naming the region */
	snprintf(dir, sizeof(dir), "%s/pa@boot1", tmpdir);
	CHECK(dti_dump_save(d, 1, dir) == 0);
	print_reader(dti_open_dir(dir, 0), DTI_FMT_TEXT, &b);
	CHECK_STR(b.text, PA_OLD_TEXT);
	CHECK(b.damage == 0 && b.warning == 0);
	free(b.text);
	snprintf(path, sizeof(path), "%s/info", dir);
	f = fopen(path, "r");
	info = calloc(1, 4096);
	CHECK(f && fread(info, 1, 4095, f) > 0);
	if (f)
		fclose(f);
	CHECK(strstr(info, "name: pa\n") && strstr(info, "persistent_region: physical 0x10000\nboot: 1\n") &&
	      !strstr(info, "descriptor:"));
	free(info);
	dti_dump_free(d);
	free(m.p);
}

/* Without a descriptor (dti.ko not loaded, or not yet) both areas are channels. */
static void test_persist_no_descriptor(void)
{
	struct img m;
	struct mem mm = { .m = &m };
	struct dti_dump *d;
	struct out o;
	char *list = NULL;
	size_t len;
	FILE *f;
	int n;

	image_persist(&m, false);
	d = load(&mm, &n);
	CHECK(n == 3);
	CHECK_STR(dti_dump_channel(d, 0)->name, "pa@boot1");
	CHECK_STR(dti_dump_channel(d, 1)->name, "pa@boot2");
	CHECK_STR(dti_dump_channel(d, 2)->name, "pb@boot1");
	CHECK_STR(print_chan(d, n, "pa@boot2", DTI_FMT_TEXT, &o), PA_NOW_TEXT);
	f = open_memstream(&list, &len);
	CHECK(dti_dump_print_list(d, f, NULL, 0) == 0);
	fclose(f);
	CHECK(list && strstr(list, "\npa@boot2                 ?           buffers,persist       0xa0000002 4 x 2048     2/2               3        0\n"));
	CHECK(list && strstr(list, "  region: persistent region at physical 0x10000: 128 KiB"));
	CHECK(list && strstr(list, "\npb@boot1 ") && strstr(list, "  rings written by boot 2, in the persistent region at physical 0x10000\n"));
	free(list);
	dti_dump_free(d);
	free(m.p);
}

/* Re-seal slot @i of the region in @m after a test changed it. */
static void pr_reseal(struct img *m, unsigned int i)
{
	struct dti_persist_slot *sl = (void *)(m->p + PR_BASE +
		sizeof(struct dti_persist_header) + i * sizeof(*sl));

	sl->crc = 0;
	sl->crc = img_crc32(sl, sizeof(*sl));
}

/* Damage in the region: the slot or header that fails is said, nothing else lost. */
static void test_persist_damage(void)
{
	char want[128];
	struct img m;
	struct mem mm = { .m = &m };
	const struct dti_dump_summary *sum;
	struct dti_persist_slot *sl;
	struct dti_dump *d;
	struct out o;
	FILE *f;
	int n;

	/* pb's slot fails its CRC: pa is read, pb is not */
	image_persist(&m, true);
	m.p[PR_BASE + sizeof(struct dti_persist_header) + sizeof(*sl) + 1] ^= 1;
	d = load(&mm, &n);
	sum = dti_dump_summary(d);
	CHECK(n == 2 && sum->regions == 1 && sum->damaged_slots == 1);
	CHECK_STR(sum->region_damage, "persistent region at physical 0x10000: slot 1 (physical 0x100b8): CRC mismatch (damaged, or caught in the middle of an update); its records are not read\n");
	CHECK_STR(print_chan(d, n, "pa@boot1", DTI_FMT_TEXT, &o), PA_OLD_TEXT);
	f = fopen("/dev/null", "w");
	CHECK(dti_dump_print_list(d, f, NULL, 0) == 1);
	CHECK(dti_dump_print_list(d, f, "pa", 0) == 0);
	fclose(f);
	dti_dump_free(d);
	free(m.p);

	/* an area of impossible geometry, its slot sealed: the same */
	image_persist(&m, true);
	sl = (void *)(m.p + PR_BASE + sizeof(struct dti_persist_header));
	sl->area[0].subbuf_size = 100;
	pr_reseal(&m, 0);
	d = load(&mm, &n);
	sum = dti_dump_summary(d);
	CHECK(n == 2 && sum->damaged_slots == 1);
	CHECK(sum->region_damage && strstr(sum->region_damage, "slot 0 (physical 0x10048): an area of impossible geometry"));
	CHECK(find(d, n, "pa") >= 0 && !dti_dump_channel(d, find(d, n, "pa"))->region_addr);
	CHECK_STR(print_chan(d, n, "pb@boot1", DTI_FMT_TEXT, &o), PB_TEXT);
	dti_dump_free(d);
	free(m.p);

	/* rings beyond the space in use */
	image_persist(&m, false);
	sl = (void *)(m.p + PR_BASE + sizeof(struct dti_persist_header));
	sl->area[1].offset = PR_AREA(4);
	pr_reseal(&m, 0);
	d = load(&mm, &n);
	CHECK(n == 1 && dti_dump_summary(d)->damaged_slots == 1);
	CHECK(strstr(dti_dump_summary(d)->region_damage, "an area outside the space in use"));
	dti_dump_free(d);
	free(m.p);

	/* the header fails: no region, said so; a copy elsewhere is stray */
	image_persist(&m, true);
	memcpy(m.p + 10 * IMG_PAGE, m.p + PR_BASE, sizeof(struct dti_persist_header));
	m.p[PR_BASE + offsetof(struct dti_persist_header, boots)] ^= 4;
	d = load(&mm, &n);
	sum = dti_dump_summary(d);
	CHECK(n == 1 && sum->regions == 0 && sum->stray == 1);
	CHECK_STR(sum->region_damage, "persistent region at physical 0x10000: its header fails: CRC mismatch (damaged, or caught in the middle of an update); nothing of it is read\n");
	dti_dump_free(d);
	free(m.p);

	/* a header of another version */
	image_persist(&m, false);
	{
		struct dti_persist_header *h = (void *)(m.p + PR_BASE);

		h->version = DTI_PERSIST_VERSION + 1;
		h->crc = 0;
		h->crc = img_crc32(h, sizeof(*h));
	}
	d = load(&mm, &n);
	snprintf(want, sizeof(want), "region version %u (this reader knows version %u)",
		 DTI_PERSIST_VERSION + 1, DTI_PERSIST_VERSION);
	CHECK(n == 0 && dti_dump_summary(d)->region_damage &&
	      strstr(dti_dump_summary(d)->region_damage, want));
	dti_dump_free(d);
	free(m.p);
}

/*
 * A dump without the region (kdump leaves reserved RAM out): the
 * persistent channel's descriptor is there, its rings are not; a note
 * says where its records are.  The other byte order reads the same.
 */
static void test_persist_missing_and_swapped(void)
{
	struct img m;
	struct mem mm = { .m = &m };
	const struct dti_dump_channel *ch;
	struct dti_dump *d;
	struct out o;
	unsigned int p;
	int n;

	image_persist(&m, true);
	for (p = PR_BASE / IMG_PAGE; p < (PR_BASE + PR_SIZE) / IMG_PAGE; p++)
		mm.missing[p / 8] |= 1 << p % 8;
	d = load(&mm, &n);
	CHECK(n == 1 && dti_dump_summary(d)->regions == 0);
	ch = dti_dump_channel(d, 0);
	CHECK(ch->records == 0 && ch->missing_pages == 4 && !ch->region_addr);
	CHECK(ch->notes && strstr(ch->notes, "a persistent channel whose rings the dump lacks"));
	dti_dump_free(d);
	free(m.p);

	img_swapped = true;
	image_persist(&m, true);
	img_swapped = false;
	memset(mm.missing, 0, sizeof(mm.missing));
	d = load(&mm, &n);
	CHECK(n == 3 && dti_dump_summary(d)->regions == 1);
	CHECK(dti_dump_channel(d, 1)->swapped && dti_dump_channel(d, 1)->boot == 1);
	CHECK_STR(print_chan(d, n, "pa@boot1", DTI_FMT_TEXT, &o), PA_OLD_TEXT);
	CHECK_STR(print_chan(d, n, "pa", DTI_FMT_TEXT, &o), PA_NOW_TEXT);
	CHECK_STR(print_chan(d, n, "pb@boot1", DTI_FMT_TEXT, &o), PB_TEXT);
	dti_dump_free(d);
	free(m.p);
}

static void seed(const char *dir, const char *name, const struct img *m,
		 unsigned char flags)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputc(flags, f);
	fwrite(m->p, 1, m->size, f);
	fclose(f);
}

/* ---- the module table ---- */

#define MODS_AT		(14 * IMG_PAGE)

static const struct dti_module mods_drv[] = {
	{ .name = "drv_mod", .text = 0xffffffffc0a00000ull, .text_size = 0x2345,
	  .state = DTI_MODULE_LIVE, .loaded_ns = 1000, .build_id_len = 20,
	  .build_id = { 0x3f, 0x6c, 0x2e, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
			15, 16, 0xff } },
	{ .name = "old", .text = 0xffffffffc0b00000ull, .text_size = 0x1000,
	  .state = DTI_MODULE_GONE, .loaded_ns = 5, .unloaded_ns = 900 },
};

/* drv's image with the module table after its rings */
static void image_mods(struct img *m, struct img_chan *c, bool bad_crc)
{
	image_drv(m, c);
	img_modules(m, MODS_AT, mods_drv, 2, bad_crc);
}

/* The table found, no channel; in host order from either byte order; listed */
static void test_modules(void)
{
	const struct dti_module *mods;
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	const struct dti_dump_summary *sum;
	struct dti_dump *d;
	struct out o;
	char *text = NULL;
	size_t len;
	FILE *f;
	int n, swapped;

	for (swapped = 0; swapped < 2; swapped++) {
		img_swapped = swapped;
		image_mods(&m, &c, false);
		img_swapped = false;
		d = load(&mm, &n);
		CHECK(n == 1);
		CHECK_STR(dti_dump_channel(d, 0)->name, "drv");
		sum = dti_dump_summary(d);
		CHECK(sum->markers == 2 && sum->descriptors == 2 && sum->stray == 0 &&
		      sum->channels == 1 && sum->modules_addr == MODS_AT);
		CHECK(dti_dump_modules(d, &mods) == 2);
		CHECK(mods && !memcmp(&mods[0], &mods_drv[0], sizeof(mods[0])) &&
		      !memcmp(&mods[1], &mods_drv[1], sizeof(mods[1])));
		f = open_memstream(&text, &len);
		CHECK(f && dti_dump_print_list(d, f, NULL, 0) == 0);
		if (f)
			fclose(f);
		CHECK(text && strstr(text, "\n  modules: module table at physical 0xe000: 2 entries, 1 of them live\n"));
		free(text);
		text = NULL;
		CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o), DRV_TEXT);
		dti_dump_free(d);
		free(m.p);
	}
	/* none: ENOENT */
	image_drv(&m, &c);
	d = load(&mm, &n);
	errno = 0;
	CHECK(dti_dump_modules(d, &mods) == -1 && errno == ENOENT && !mods);
	CHECK(!dti_dump_summary(d)->modules_addr);
	dti_dump_free(d);
	free(m.p);
}

/* A table whose CRC fails is not used, and said; the records still read */
static void test_modules_damaged(void)
{
	const struct dti_module *mods;
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	struct dti_dump *d;
	struct dti_module bad = mods_drv[0];
	struct out o;
	int n;

	image_mods(&m, &c, true);
	d = load(&mm, &n);
	CHECK(n == 1);
	errno = 0;
	CHECK(dti_dump_modules(d, &mods) == -1 && errno == EBADMSG && !mods);
	CHECK(strstr(dti_errmsg(), "module table at physical 0xe000: CRC mismatch"));
	CHECK(!dti_dump_summary(d)->modules_addr);
	CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o), DRV_TEXT);
	CHECK(o.rc == 0 && o.damage == 0);
	dti_dump_free(d);
	free(m.p);

	/* an entry that cannot be, under a good CRC */
	image_drv(&m, &c);
	bad.state = 7;
	img_modules(&m, MODS_AT, &bad, 1, false);
	d = load(&mm, &n);
	CHECK(n == 1 && dti_dump_modules(d, &mods) == -1 && errno == EBADMSG &&
	      strstr(dti_errmsg(), "entry 0: unknown state 7"));
	dti_dump_free(d);
	free(m.p);

	/* a damaged copy beside a good one: the good one */
	image_mods(&m, &c, false);
	img_modules(&m, IMG_PAGE, mods_drv, 1, true);
	d = load(&mm, &n);
	CHECK(n == 1 && dti_dump_modules(d, &mods) == 2);
	dti_dump_free(d);
	free(m.p);
}

/* dti_dump_save() writes the table as modules, which dti_modules_load() reads */
static void test_modules_saved(void)
{
	struct dti_module *mods = NULL;
	char dir[512], path[600];
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	struct dti_dump *d;
	int n;

	image_mods(&m, &c, false);
	d = load(&mm, &n);
	snprintf(dir, sizeof(dir), "%s/mods-save", tmpdir);
	CHECK(dti_dump_save(d, 0, dir) == 0);
	snprintf(path, sizeof(path), "%s/modules", dir);
	CHECK(dti_modules_load(path, &mods) == 2);
	CHECK(mods && !memcmp(&mods[0], &mods_drv[0], sizeof(mods[0])) &&
	      !memcmp(&mods[1], &mods_drv[1], sizeof(mods[1])));
	free(mods);
	dti_dump_free(d);
	free(m.p);
}

/*
 * The module tables a region keeps: an earlier boot's rings (NAME@bootN)
 * have their boot's, the dumped boot's channels the dump's; a damaged
 * one is said and not used
 */
static void test_persist_modules(void)
{
	static const struct dti_module boot1[] = {
		{ .name = "mod_b1", .text = 0xffffffffc0c00000ull, .text_size = 0x1000,
		  .state = DTI_MODULE_LIVE, .loaded_ns = 7 },
	};
	const struct dti_module *mods;
	struct img m;
	struct mem mm = { .m = &m };
	struct dti_dump *d;
	char dir[512], path[600];
	struct dti_module *saved = NULL;
	char *list = NULL;
	size_t len;
	FILE *f;
	int n, i;

	image_persist(&m, true);
	img_region_modules(&m, PR_BASE, 1, 1, boot1, 1, false);
	img_region_modules(&m, PR_BASE, 0, 2, mods_drv, 2, false);
	img_modules(&m, 14 * IMG_PAGE, mods_drv, 2, false);
	d = load(&mm, &n);
	CHECK(n == 3);
	i = find(d, n, "pa@boot1");
	CHECK(i >= 0 && dti_dump_channel_modules(d, i, &mods) == 1 && mods &&
	      !memcmp(&mods[0], &boot1[0], sizeof(mods[0])));
	i = find(d, n, "pb@boot1");
	CHECK(i >= 0 && dti_dump_channel_modules(d, i, &mods) == 1);
	i = find(d, n, "pa");
	CHECK(i >= 0 && dti_dump_channel_modules(d, i, &mods) == 2 &&
	      !memcmp(&mods[1], &mods_drv[1], sizeof(mods[1])));
	CHECK(dti_dump_channel_modules(d, 9, &mods) == -1 && errno == ENOENT);
	f = open_memstream(&list, &len);
	CHECK(f && dti_dump_print_list(d, f, NULL, DTI_LIST_QUIET) == 0);
	if (f)
		fclose(f);
	CHECK(list && strstr(list, "  modules: module table of boot 1 in the persistent region, at physical 0x"));
	free(list);
	/* saved: the channel's table */
	snprintf(dir, sizeof(dir), "%s/pa-boot1", tmpdir);
	i = find(d, n, "pa@boot1");
	CHECK(dti_dump_save(d, i, dir) == 0);
	snprintf(path, sizeof(path), "%s/modules", dir);
	CHECK(dti_modules_load(path, &saved) == 1 && saved && !strcmp(saved[0].name, "mod_b1"));
	free(saved);
	dti_dump_free(d);
	free(m.p);

	/* boot 1's table damaged: said, not used */
	image_persist(&m, false);
	img_region_modules(&m, PR_BASE, 1, 1, boot1, 1, true);
	d = load(&mm, &n);
	i = find(d, n, "pa@boot1");
	errno = 0;
	CHECK(i >= 0 && dti_dump_channel_modules(d, i, &mods) == -1 && errno == EBADMSG &&
	      strstr(dti_errmsg(), "CRC mismatch"));
	CHECK(dti_dump_summary(d)->damaged_slots == 0 && !dti_dump_summary(d)->region_damage);
	dti_dump_free(d);
	free(m.p);
}

static int write_seeds(const char *dir)
{
	struct img m;
	struct img_chan c;
	unsigned char recs[256];
	size_t used;

	img_init(&m, 16);
	chan_drv(&c);
	img_channel(&m, &c);
	rings_drv(&m, &c);
	used = img_pending_rec(recs, 1, 1012, "p-late");
	used += img_pending_rec(recs + used, 0, 999, "p-first");
	img_pending(&m, "drv", 13 * IMG_PAGE, true, 14 * IMG_PAGE, 4096, recs, used);
	seed(dir, "dump-drv", &m, 1);
	free(m.p);
	img_swapped = true;
	image_drv(&m, &c);
	img_swapped = false;
	seed(dir, "dump-swapped", &m, 1);
	free(m.p);
	img_init(&m, 4);
	used = img_pending_rec(recs, 1, 5, "early");
	img_pending(&m, "early", IMG_PAGE, false, 2 * IMG_PAGE, 512, recs, used);
	seed(dir, "dump-pending", &m, 0);
	free(m.p);
	image_persist(&m, true);
	img_region_modules(&m, PR_BASE, 1, 1, mods_drv, 2, false);
	seed(dir, "dump-persist", &m, 1);
	free(m.p);
	image_mods(&m, &c, false);
	seed(dir, "dump-modules", &m, 1);
	free(m.p);
	return 0;
}

/* ---- the dump index of a built-in DTI (dti_dump_locate()) ---- */

#define INDEX_AT	(1 * IMG_PAGE)

/*
 * The dump index at INDEX_AT listing @slots (@n of them, 0 for a free
 * slot) in slots 0.., sealed (or not); in img_swapped's byte order.
 */
static void img_index(struct img *m, const uint64_t *slots, unsigned int n,
		      bool overflowed, bool seal)
{
	struct dti_dump_index x = { 0 };
	unsigned int i;

	x.magic = img32(DTI_INDEX_MAGIC);
	x.version = img16(DTI_INDEX_VERSION);
	x.size = img32(sizeof(x));
	x.n_slots = img32(DTI_INDEX_SLOTS);
	x.changes = img32(7);
	x.overflowed = img32(overflowed);
	for (i = 0; i < n; i++)
		x.slot[i] = img64(slots[i]);
	if (seal)
		x.crc = img32(img_crc32(&x, sizeof(x)));
	img_put(m, INDEX_AT, &x, sizeof(x));
}

/* A new dump of @mm located through the index at @addr: its count, or -1 */
static struct dti_dump *locate(struct mem *mm, uint64_t addr, int *located)
{
	const struct dti_dump_mem mem = {
		.size = sizeof(mem), .read_phys = mem_read_phys, .read_virt = mem_read_virt,
		.errmsg = mem_errmsg, .arg = mm, .phys_end = mm->m->size,
	};
	struct dti_dump *d = dti_dump_new(&mem);

	*located = dti_dump_locate(d, addr);
	return d;
}

/* Found through the index, in either byte order: what a scan finds, none read but them */
static void test_index(void)
{
	const uint64_t slots[] = { 0, MODS_AT, 0, 3 * IMG_PAGE + 8 };
	const struct dti_dump_summary *sum;
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	struct dti_dump *d;
	struct out o;
	char *text = NULL;
	size_t len;
	FILE *f;
	int n, k, swapped;

	for (swapped = 0; swapped < 2; swapped++) {
		img_swapped = swapped;
		image_mods(&m, &c, false);
		img_index(&m, slots, 4, false, true);
		img_swapped = false;
		d = locate(&mm, INDEX_AT, &k);
		CHECK(k == 2);
		n = dti_dump_load(d);
		CHECK(n == 1);
		CHECK_STR(dti_dump_channel(d, 0)->name, "drv");
		CHECK(dti_dump_channel(d, 0)->records == 11 && !dti_dump_channel(d, 0)->error);
		CHECK_STR(print_chan(d, n, "drv", DTI_FMT_TEXT, &o), DRV_TEXT);
		sum = dti_dump_summary(d);
		CHECK(sum->scanned == 0 && sum->index_addr == INDEX_AT && sum->indexed == 2 &&
		      sum->markers == 2 && sum->stray == 0 && sum->modules_addr == MODS_AT);
		f = open_memstream(&text, &len);
		CHECK(f && dti_dump_print_list(d, f, NULL, 0) == 0);
		if (f)
			fclose(f);
		CHECK(text && strstr(text, "1 channel located by VMCOREINFO (DTI=0x1000): its dump index lists 2 descriptors, 0 of them neither descriptor nor region\n"));
		free(text);
		text = NULL;
		dti_dump_free(d);
		free(m.p);
	}
}

/*
 * An index that cannot be used is refused whole, the address named, and
 * the same dump is then scanned as if nothing had happened.
 */
static void check_index_refused(struct img *m, uint64_t addr, const char *error)
{
	struct mem mm = { .m = m };
	struct dti_dump *d;
	int k, n;

	d = locate(&mm, addr, &k);
	CHECK(k == -1 && errno == EINVAL);
	CHECK_STR(dti_errmsg(), error);
	CHECK(dti_dump_scan(d, 0, m->p, m->size) == 0);
	n = dti_dump_load(d);
	CHECK(n == 1 && !dti_dump_summary(d)->index_addr);
	CHECK_STR(dti_dump_channel(d, 0)->name, "drv");
	CHECK(dti_dump_channel(d, 0)->records == 11);
	dti_dump_free(d);
}

static void test_index_refused(void)
{
	const uint64_t good[] = { 3 * IMG_PAGE + 8, MODS_AT };
	const uint64_t zero[] = { 3 * IMG_PAGE + 8, 5 * IMG_PAGE };
	const uint64_t outside[] = { 3 * IMG_PAGE + 8, 64 * IMG_PAGE };
	struct img m;
	struct img_chan c;
	struct mem mm = { .m = &m };
	struct dti_dump *d;
	int k;

	image_mods(&m, &c, false);
	check_index_refused(&m, 0x100000,
			    "VMCOREINFO's DTI=0x100000: not in the dump (test image)");
	check_index_refused(&m, 2 * IMG_PAGE,
			    "VMCOREINFO's DTI=0x2000: no dump index there (its magic is not DTI's)");
	img_index(&m, good, 2, false, false);
	check_index_refused(&m, INDEX_AT,
			    "VMCOREINFO's DTI=0x1000: its CRC does not match: damaged, or caught in a change");
	img_index(&m, good, 2, true, true);
	check_index_refused(&m, INDEX_AT,
			    "VMCOREINFO's DTI=0x1000: it overflowed: some descriptors found no slot in it");
	img_index(&m, zero, 2, false, true);
	check_index_refused(&m, INDEX_AT,
			    "the dump index at physical 0x1000 lists 0x5000 (slot 1), which holds no DTI descriptor");
	img_index(&m, outside, 2, false, true);
	check_index_refused(&m, INDEX_AT,
			    "the dump index at physical 0x1000 lists 0x40000 (slot 1), which cannot be read: not in the dump (test image)");
	/* after a scan: refused, the scan's markers kept */
	img_index(&m, good, 2, false, true);
	d = load(&mm, &k);
	CHECK(k == 1);
	CHECK(dti_dump_locate(d, INDEX_AT) == -1 && errno == EINVAL);
	dti_dump_free(d);
	free(m.p);
}

static const struct unit_test tests[] = {
	{ "CRC-32 of the test images", test_crc32 },
	{ "a channel: descriptor, level, rings over scattered pages", test_basic },
	{ "record sources and offsets; open flags", test_sources },
	{ "stale slots read as unused", test_stale_slots },
	{ "pending stores merged by time, early handles", test_pending },
	{ "damage in a pending store", test_pending_damage },
	{ "dti_print_records() prints dumps as the loop does", test_print_records },
	{ "damaged CRCs: descriptor, CPU table, page list", test_crc_damage },
	{ "descriptors with a valid magic, wrong otherwise", test_bad_descriptors },
	{ "stray markers counted, not reported", test_stray_markers },
	{ "runs in any order, split descriptors, runs twice", test_scan_runs },
	{ "pages the dump lacks", test_missing_pages },
	{ "damage inside a live sub-buffer", test_damage_in_ring },
	{ "the other byte order", test_other_byte_order },
	{ "duplicate descriptors", test_duplicates },
	{ "dti_dump_save() reads back as dti_dump_open()", test_save },
	{ "info's geometry does not make a stream a ring copy", test_info_hint_stream },
	{ "persistent region: two boots' rings, saved", test_persist_region },
	{ "persistent region without descriptors; the listing", test_persist_no_descriptor },
	{ "persistent region: damaged slots and headers", test_persist_damage },
	{ "persistent region not in the dump; the other byte order", test_persist_missing_and_swapped },
	{ "module table: found, no channel, either byte order, listed", test_modules },
	{ "module table: damaged ones not used, records read", test_modules_damaged },
	{ "module table saved with a channel", test_modules_saved },
	{ "persistent region: each boot's module table", test_persist_modules },
	{ "dump index: descriptors located, either byte order, listed", test_index },
	{ "dump index: refused, named, then scanned", test_index_refused },
};

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	if (unit_setup("dump-test"))
		return 2;
	unit_run(tests, sizeof(tests) / sizeof(tests[0]));
	return unit_finish();
}
