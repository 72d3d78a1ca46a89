/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic physical memory images holding DTI dump descriptors, as
 * dti.ko lays them out (<linux/dti_record.h>): channel descriptors, CPU
 * tables, page lists, rings scattered over page frames with sub-buffer
 * headers and records, pending stores.  Used by test_dump.c to check
 * what libdti finds, and to write the seeds of fuzz_dump.c.
 *
 * Everything is written in the host's byte order, or the other one with
 * img_swapped set.  Virtual addresses (pending stores' buffers) are
 * physical ones plus IMG_VOFF.
 */
#ifndef _DTI_DUMP_IMAGE_H
#define _DTI_DUMP_IMAGE_H

#include <byteswap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dti_record.h>

#define IMG_PAGE	4096u
#define IMG_VOFF	0xffff888000000000ull	/* virtual = physical + this */
#define IMG_REC		((uint32_t)sizeof(struct dti_record))
#define IMG_SUB		((uint32_t)DTI_SUBBUF_HEADER_SIZE_V1)

struct img {
	unsigned char *p;
	size_t size;
};

static bool img_swapped;	/* write in the other byte order */

static inline uint16_t img16(uint16_t v) { return img_swapped ? bswap_16(v) : v; }
static inline uint32_t img32(uint32_t v) { return img_swapped ? bswap_32(v) : v; }
static inline uint64_t img64(uint64_t v) { return img_swapped ? bswap_64(v) : v; }

/* CRC-32 as zlib computes it, bit by bit: independent of libdti's. */
static inline uint32_t img_crc32(const void *p, size_t len)
{
	const unsigned char *q = p;
	uint32_t crc = ~0u;
	int k;

	while (len--) {
		crc ^= *q++;
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

static inline void img_init(struct img *m, size_t pages)
{
	m->size = (size_t)pages * IMG_PAGE;
	m->p = calloc(1, m->size);
}

static inline void img_put(struct img *m, uint64_t addr, const void *p, size_t len)
{
	if (addr + len <= m->size)
		memcpy(m->p + addr, p, len);
}

static inline void img_marker(char *marker, const char *name)
{
	memset(marker, 0, DTI_DUMP_MARKER_SIZE);
	memcpy(marker, DTI_MARKER_PREFIX, strlen(DTI_MARKER_PREFIX));
	memcpy(marker + strlen(DTI_MARKER_PREFIX), name, strlen(name));
}

/* A channel as dti.ko describes it: where its pieces lie in the image */
struct img_chan {
	const char *name;
	uint32_t flags, generation, subbuf_size, n_subbufs, nr_cpu_ids;
	int level;
	uint64_t desc, level_at, table;	/* physical addresses; level_at 0: none */
	uint64_t pfns[8];		/* per CPU: its page list; 0: no ring */
	uint64_t pages[8][16];		/* per CPU: the page frames of its ring */
};

static inline uint32_t img_ring_pages(const struct img_chan *c)
{
	return ((uint64_t)c->subbuf_size * c->n_subbufs + IMG_PAGE - 1) / IMG_PAGE;
}

/* Write @c's descriptor, level, CPU table and page lists. */
static inline void img_channel(struct img *m, const struct img_chan *c)
{
	struct dti_dump_desc d;
	struct dti_dump_cpu cpus[8];
	uint64_t pfns[16];
	uint32_t n = img_ring_pages(c), cpu, i;
	int32_t level = (int32_t)img32((uint32_t)c->level);

	memset(cpus, 0, sizeof(cpus));
	for (cpu = 0; cpu < c->nr_cpu_ids && cpu < 8; cpu++) {
		if (!c->pfns[cpu])
			continue;
		for (i = 0; i < n; i++)
			pfns[i] = img64(c->pages[cpu][i]);
		img_put(m, c->pfns[cpu], pfns, n * sizeof(pfns[0]));
		cpus[cpu].pfns = img64(c->pfns[cpu]);
		cpus[cpu].n_pages = img32(n);
		cpus[cpu].pfns_crc = img32(img_crc32(pfns, n * sizeof(pfns[0])));
	}
	if (c->table)
		img_put(m, c->table, cpus, c->nr_cpu_ids * sizeof(cpus[0]));
	if (c->level_at)
		img_put(m, c->level_at, &level, sizeof(level));
	memset(&d, 0, sizeof(d));
	img_marker(d.marker, c->name);
	d.magic = img32(DTI_DUMP_MAGIC);
	d.version = img16(DTI_DUMP_VERSION);
	d.type = img16(DTI_DUMP_CHANNEL);
	d.size = img32(sizeof(d));
	d.flags = img32(c->flags);
	d.generation = img32(c->generation);
	d.subbuf_size = img32(c->subbuf_size);
	d.n_subbufs = img32(c->n_subbufs);
	d.nr_cpus = img32(c->nr_cpu_ids);
	d.page_size = img32(IMG_PAGE);
	d.cpu_table_crc = c->table ?
		img32(img_crc32(cpus, c->nr_cpu_ids * sizeof(cpus[0]))) : 0;
	d.level_addr = img64(c->level_at);
	d.cpu_table = img64(c->table);
	d.crc = img32(img_crc32(&d, sizeof(d)));
	img_put(m, c->desc, &d, sizeof(d));
}

/* Bytes @len at offset @off of CPU @cpu's ring of @c, over its page frames. */
static inline void img_ring_put(struct img *m, const struct img_chan *c, unsigned int cpu,
			 uint64_t off, const void *p, size_t len)
{
	const unsigned char *q = p;
	size_t k;

	while (len) {
		k = IMG_PAGE - off % IMG_PAGE;
		if (k > len)
			k = len;
		img_put(m, c->pages[cpu][off / IMG_PAGE] * IMG_PAGE + off % IMG_PAGE, q, k);
		q += k;
		off += k;
		len -= k;
	}
}

/* A record header and payload at @out (DTI_RECORD_SIZE(@len) bytes). */
static inline size_t img_record(unsigned char *out, unsigned int cpu, unsigned int flags,
			 int level, uint64_t seq, uint64_t ts, const void *payload,
			 uint32_t len)
{
	struct dti_record r = {
		.magic = img16(DTI_RECORD_MAGIC), .version = DTI_RECORD_VERSION_1,
		.flags = flags, .level = level, .hdr_len = sizeof(r),
		.cpu = img16(cpu), .len = img32(len), .log_cpu = img32(cpu),
		.seq = img64(seq), .ts_ns = img64(ts),
		.caller = img64(0xffffffffc0001234ull),
	};
	size_t size = DTI_RECORD_SIZE(len);

	memset(out, 0, size);
	memcpy(out, &r, sizeof(r));
	memcpy(out + sizeof(r), payload, len);
	return size;
}

/*
 * Sub-buffer @number of CPU @cpu in its slot (@number % n_subbufs) of
 * @c's ring: a header of generation @gen (of channel @name, NULL: @c's)
 * and @nrec text records "<tag><i>", record i with seq @seq0 + i and
 * time @ts0 + 10 * i; closed with its padding if @closed.
 */
static inline void img_subbuf(struct img *m, const struct img_chan *c, unsigned int cpu,
		       uint64_t number, uint32_t gen, const char *name,
		       unsigned int nrec, bool closed, const char *tag,
		       uint64_t seq0, uint64_t ts0)
{
	unsigned char *sb = calloc(1, c->subbuf_size);
	struct dti_subbuf_info in;
	char text[64];
	size_t pos = IMG_SUB;
	unsigned int i;

	for (i = 0; i < nrec; i++) {
		snprintf(text, sizeof(text), "%s%u", tag, i);
		pos += img_record(sb + pos, cpu, DTI_REC_TEXT, 3, seq0 + i,
				  ts0 + 10 * i, text, strlen(text));
	}
	memset(&in, 0, sizeof(in));
	in.subbuf_size = img32(c->subbuf_size);
	in.n_subbufs = img32(c->n_subbufs);
	in.padding = img32(closed ? c->subbuf_size - pos : 0);
	in.records = img32(nrec);
	in.state = img32(closed ? DTI_SUBBUF_CLOSED : DTI_SUBBUF_OPEN);
	in.generation = img32(gen);
	strcpy(in.name, name ? name : c->name);
	img_record(sb, cpu, DTI_REC_SUBBUF, 0, number, ts0 ? ts0 - 1 : 0, &in,
		   DTI_SUBBUF_INFO_V1_SIZE);
	img_ring_put(m, c, cpu, number % c->n_subbufs * c->subbuf_size, sb,
		     c->subbuf_size);
	free(sb);
}

/* A pending record (logged by @cpu at @ts, DTI_REC_PENDING, seq 0) at @out. */
static inline size_t img_pending_rec(unsigned char *out, unsigned int cpu, uint64_t ts,
			      const char *text)
{
	return img_record(out, cpu, DTI_REC_TEXT | DTI_REC_PENDING, 4, 0, ts,
			  text, strlen(text));
}

/*
 * A pending store of channel @name: its descriptor at @desc (sealed if
 * @seal), the count of @used bytes 64 bytes after it as a native
 * unsigned long, its buffer of @size bytes at physical @buf holding
 * @used bytes of @recs.
 */
static inline void img_pending(struct img *m, const char *name, uint64_t desc, bool seal,
			uint64_t buf, uint64_t size, const void *recs, uint64_t used)
{
	const uint32_t used_offset = 128;
	struct dti_dump_pending d;
	uint64_t u = img64(used);

	memset(&d, 0, sizeof(d));
	img_marker(d.marker, name);
	d.magic = img32(DTI_DUMP_MAGIC);
	d.version = img16(DTI_DUMP_VERSION);
	d.type = img16(DTI_DUMP_PENDING);
	d.size = img32(sizeof(d));
	d.used_offset = img32(used_offset);
	d.buf = img64(buf + IMG_VOFF);
	d.buf_size = img64(size);
	if (seal)
		d.crc = img32(img_crc32(&d, sizeof(d)));
	img_put(m, desc, &d, sizeof(d));
	img_put(m, desc + used_offset, &u, sizeof(u));
	img_put(m, buf, recs, used);
}

/* ---- persistent regions ---- */

/* A slot of a region as a test describes it (host values) */
struct img_slot {
	const char *name;		/* NULL: a free slot */
	uint64_t area_size;
	struct dti_persist_area area[2];
};

/* Bytes between two CPUs' rings of an area: each starts on a page */
static inline uint64_t img_stride(const struct dti_persist_area *a)
{
	return ((uint64_t)a->subbuf_size * a->n_subbufs + IMG_PAGE - 1) / IMG_PAGE * IMG_PAGE;
}

/* Slot @s as dti.ko writes it, sealed with its CRC, at @out */
static inline void img_slot_put(struct dti_persist_slot *out, const struct img_slot *s)
{
	int k;

	memset(out, 0, sizeof(*out));
	if (s && s->name) {
		strcpy(out->name, s->name);
		out->area_size = img64(s->area_size);
		for (k = 0; k < 2; k++) {
			const struct dti_persist_area *a = &s->area[k];

			out->area[k] = (struct dti_persist_area){
				.offset = img64(a->offset), .generation = img32(a->generation),
				.boot = img32(a->boot), .state = img32(a->state),
				.subbuf_size = img32(a->subbuf_size),
				.n_subbufs = img32(a->n_subbufs), .nr_cpus = img32(a->nr_cpus),
			};
		}
	}
	out->crc = img32(img_crc32(out, sizeof(*out)));
}

/*
 * A persistent region of @size bytes at physical @base, taken by @boots
 * loads, its space in use up to @next_free: the header and a table of
 * DTI_PERSIST_SLOTS slots, the first @n of them @slots, the others free.
 */
static inline void img_region(struct img *m, uint64_t base, uint64_t size, uint32_t boots,
			      const struct img_slot *slots, unsigned int n,
			      uint64_t next_free)
{
	struct dti_persist_header h;
	struct dti_persist_slot sl;
	unsigned int i;

	memset(&h, 0, sizeof(h));
	memcpy(h.marker, DTI_PERSIST_MARKER, sizeof(DTI_PERSIST_MARKER));
	h.magic = img32(DTI_PERSIST_MAGIC);
	h.version = img32(DTI_PERSIST_VERSION);
	h.size = img64(size);
	h.base = img64(base);
	h.boots = img32(boots);
	h.header_size = img32(sizeof(h));
	h.n_slots = img32(DTI_PERSIST_SLOTS);
	h.slot_size = img32(sizeof(sl));
	h.page_size = img32(IMG_PAGE);
	h.next_free = img64(next_free);
	h.crc = img32(img_crc32(&h, sizeof(h)));
	img_put(m, base, &h, sizeof(h));
	for (i = 0; i < DTI_PERSIST_SLOTS; i++) {
		img_slot_put(&sl, i < n ? &slots[i] : NULL);
		img_put(m, base + sizeof(h) + i * sizeof(sl), &sl, sizeof(sl));
	}
}

/* @c: area @a of channel @name in the region at @base, for img_subbuf() */
static inline void img_area_chan(struct img_chan *c, const char *name, uint64_t base,
				 const struct dti_persist_area *a)
{
	unsigned int cpu, i;

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->flags = DTI_DUMP_F_BUFFERS | DTI_DUMP_F_PERSIST;
	c->generation = a->generation;
	c->subbuf_size = a->subbuf_size;
	c->n_subbufs = a->n_subbufs;
	c->nr_cpu_ids = a->nr_cpus;
	for (cpu = 0; cpu < a->nr_cpus && cpu < 8; cpu++)
		for (i = 0; i < img_stride(a) / IMG_PAGE && i < 16; i++)
			c->pages[cpu][i] = (base + a->offset + cpu * img_stride(a)) / IMG_PAGE + i;
}

/* Entries @e (host order) into a table's @out in the image's byte order */
static inline void img_module_entries(struct dti_module *out, const struct dti_module *e,
				      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && i < DTI_MODULES_MAX; i++) {
		out[i] = e[i];
		out[i].text = img64(e[i].text);
		out[i].text_size = img32(e[i].text_size);
		out[i].state = img32(e[i].state);
		out[i].loaded_ns = img64(e[i].loaded_ns);
		out[i].unloaded_ns = img64(e[i].unloaded_ns);
		out[i].build_id_len = img32(e[i].build_id_len);
	}
}

/*
 * Module table @k of the region at @base (struct dti_persist_modules,
 * after its DTI_PERSIST_SLOTS slots): boot @boot's, the @n entries of @e
 * (host order), sealed with its CRC unless @bad_crc.
 */
static inline void img_region_modules(struct img *m, uint64_t base, unsigned int k,
				      uint32_t boot, const struct dti_module *e,
				      unsigned int n, bool bad_crc)
{
	struct dti_persist_modules *t = calloc(1, sizeof(*t));

	if (!t)
		return;
	t->boot = img32(boot);
	t->n_entries = img32(DTI_MODULES_MAX);
	t->entry_size = img32(sizeof(t->mod[0]));
	img_module_entries(t->mod, e, n);
	t->crc = img32(img_crc32(t, sizeof(*t)) ^ bad_crc);
	img_put(m, base + sizeof(struct dti_persist_header) +
		DTI_PERSIST_SLOTS * sizeof(struct dti_persist_slot) + k * sizeof(*t), t, sizeof(*t));
	free(t);
}

/*
 * dti.ko's module table (struct dti_dump_modules) at @addr with the @n
 * entries of @e (host order; the others free), sealed with its CRC
 * unless @bad_crc.
 */
static inline void img_modules(struct img *m, uint64_t addr, const struct dti_module *e,
			       unsigned int n, bool bad_crc)
{
	struct dti_dump_modules *t = calloc(1, sizeof(*t));

	if (!t)
		return;
	img_marker(t->marker, DTI_MODULES_FILE);
	t->magic = img32(DTI_DUMP_MAGIC);
	t->version = img16(DTI_DUMP_VERSION);
	t->type = img16(DTI_DUMP_MODULES);
	t->size = img32(sizeof(*t));
	t->entry_size = img32(sizeof(t->mod[0]));
	t->n_entries = img32(DTI_MODULES_MAX);
	img_module_entries(t->mod, e, n);
	t->crc = img32(img_crc32(t, sizeof(*t)) ^ bad_crc);
	img_put(m, addr, t, sizeof(*t));
	free(t);
}

#endif /* _DTI_DUMP_IMAGE_H */
