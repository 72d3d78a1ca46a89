// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libdti's memory dump reader (lib/dump.c): the
 * input, after a byte of flags, is a dump's physical memory from address
 * 0, read through read_phys(); virtual addresses are physical ones plus
 * IMG_VOFF, as in dump_image.h.  It is scanned, loaded, and every channel
 * that can be is opened and read to its end with every record printed in
 * every format (fuzz_drain.h).  Nothing may fail but for ENOMEM, damage
 * is only ever a notice, and a channel with an error must not open.
 *
 * Flags (first byte):
 *   bit 0   first set the CRCs of what looks like a descriptor, its CPU
 *           table and its page lists, so that mutations get past the CRC
 *           checks to the fields behind them
 *   bit 1   read_virt() fails (no address translation)
 *   bit 2,3 scan runs: whole input, pages, 1000 bytes (unaligned), pages
 *           in reverse order
 *   bit 4   odd pages are missing from the dump (ENODATA)
 *   bit 5   the dumped kernel's unsigned long has 4 bytes
 *
 * Seeds: tests/fuzz-seeds-dump, written by `build/test_dump --seeds DIR` from
 * the images of its tests (a channel with wrapped and stale sub-buffers
 * and a pending store, the same in the other byte order, an early
 * handle's store).
 */
#include <stdbool.h>
#include <stdint.h>

#include "fuzz_drain.h"
#include "dump_image.h"

/* Rings larger than this are found but not read: a fuzzer's time is short */
#define FUZZ_RING_MAX	(4u << 20)

struct fuzz_mem {
	const uint8_t *p;
	size_t size;
	bool no_virt, holes;
};

static int fuzz_read_phys(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct fuzz_mem *m = arg;
	uint64_t page;

	if (addr > m->size || len > m->size - addr) {
		errno = EFAULT;
		return -1;
	}
	for (page = addr / IMG_PAGE; m->holes && len && page <= (addr + len - 1) / IMG_PAGE; page++)
		if (page & 1) {
			errno = ENODATA;
			return -1;
		}
	memcpy(buf, m->p + addr, len);
	return 0;
}

static int fuzz_read_virt(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct fuzz_mem *m = arg;

	if (m->no_virt || addr < IMG_VOFF) {
		errno = EFAULT;
		return -1;
	}
	return fuzz_read_phys(arg, addr - IMG_VOFF, buf, len);
}

static uint32_t f32(uint32_t v, bool sw) { return sw ? bswap_32(v) : v; }
static uint64_t f64(uint64_t v, bool sw) { return sw ? bswap_64(v) : v; }

/* Whether [@at, @at + @len) lies in @size bytes */
static bool in(uint64_t at, uint64_t len, size_t size)
{
	return at <= size && len <= size - at;
}

/* Set the CRCs of the channel descriptor at @p + @at and what it points to. */
static void fix_channel(uint8_t *p, size_t size, size_t at, bool sw)
{
	struct dti_dump_desc d;
	struct dti_dump_cpu e;
	uint64_t table, pfns;
	uint32_t n, cpu, crc;

	memcpy(&d, p + at, sizeof(d));
	table = f64(d.cpu_table, sw);
	n = f32(d.nr_cpu_ids, sw);
	if (in(table, (uint64_t)n * sizeof(e), size) && table % 8 == 0) {
		for (cpu = 0; cpu < n; cpu++) {
			memcpy(&e, p + table + cpu * sizeof(e), sizeof(e));
			pfns = f64(e.pfns, sw);
			if (!in(pfns, (uint64_t)f32(e.n_pages, sw) * 8, size))
				continue;
			e.pfns_crc = f32(img_crc32(p + pfns, (uint64_t)f32(e.n_pages, sw) * 8), sw);
			memcpy(p + table + cpu * sizeof(e), &e, sizeof(e));
		}
		d.cpu_table_crc = f32(img_crc32(p + table, (uint64_t)n * sizeof(e)), sw);
	}
	d.crc = 0;
	crc = img_crc32(&d, sizeof(d));
	d.crc = f32(crc, sw);
	memcpy(p + at, &d, sizeof(d));
}

/* The CRCs of every descriptor in @p, as if dti.ko had written them. */
static void fix_crcs(uint8_t *p, size_t size)
{
	struct dti_dump_pending pd;
	size_t at;
	uint32_t magic;
	uint16_t type;
	bool sw;

	for (at = 0; at + sizeof(struct dti_dump_desc) <= size; at += 8) {
		if (memcmp(p + at, DTI_MARKER_PREFIX, strlen(DTI_MARKER_PREFIX)))
			continue;
		memcpy(&magic, p + at + offsetof(struct dti_dump_desc, magic), 4);
		if (magic != DTI_DUMP_MAGIC && magic != bswap_32(DTI_DUMP_MAGIC))
			continue;
		sw = magic != DTI_DUMP_MAGIC;
		memcpy(&type, p + at + offsetof(struct dti_dump_desc, type), 2);
		type = sw ? bswap_16(type) : type;
		if (type == DTI_DUMP_CHANNEL) {
			fix_channel(p, size, at, sw);
		} else if (type == DTI_DUMP_PENDING) {
			memcpy(&pd, p + at, sizeof(pd));
			if (!pd.crc)
				continue;	/* unsealed stays so */
			pd.crc = 0;
			pd.crc = f32(img_crc32(&pd, sizeof(pd)), sw);
			memcpy(p + at, &pd, sizeof(pd));
		}
	}
}

static void scan(struct dti_dump *d, const uint8_t *p, size_t size, unsigned int how)
{
	size_t run = how == 1 || how == 3 ? IMG_PAGE : how == 2 ? 1000 : size;
	size_t off, k, pages = (size + IMG_PAGE - 1) / IMG_PAGE;

	if (how == 3) {
		while (pages--) {
			off = pages * IMG_PAGE;
			dti_dump_scan(d, off, p + off, size - off < IMG_PAGE ? size - off : IMG_PAGE);
		}
		return;
	}
	for (off = 0; off < size; off += k) {
		k = size - off < run ? size - off : run;
		dti_dump_scan(d, off, p + off, k);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem m;
	struct dti_dump_mem mem = {
		.read_phys = fuzz_read_phys, .read_virt = fuzz_read_virt, .arg = &m,
	};
	const struct dti_dump_channel *ch;
	struct dti_dump *d;
	struct dti_reader *r;
	uint8_t *copy = NULL;
	unsigned int flags;
	int n, i;

	if (size < 1)
		return 0;
	flags = data[0];
	m = (struct fuzz_mem){
		.p = data + 1, .size = size - 1, .no_virt = flags & 2,
		.holes = flags & 16,
	};
	if (flags & 1) {
		copy = malloc(m.size ? m.size : 1);
		memcpy(copy, m.p, m.size);
		fix_crcs(copy, m.size);
		m.p = copy;
	}
	mem.phys_end = m.size;
	mem.long_size = flags & 32 ? 4 : 8;
	d = dti_dump_new(&mem);
	if (!d)
		__builtin_trap();
	scan(d, m.p, m.size, flags >> 2 & 3);
	n = dti_dump_load(d);
	if (n < 0 && errno != ENOMEM)
		__builtin_trap();
	for (i = 0; i < n; i++) {
		ch = dti_dump_channel(d, i);
		if (!ch || !ch->name)
			__builtin_trap();
		if ((uint64_t)ch->subbuf_size * ch->n_subbufs * ch->nr_bufs > FUZZ_RING_MAX)
			continue;
		r = dti_dump_open(d, i, 0);
		if (r && ch->error)
			__builtin_trap();	/* a channel with an error opened */
		if (!r && errno != (ch->error ? EINVAL : ENOMEM))
			__builtin_trap();
		if (r)
			fuzz_drain(r, false);
	}
	dti_dump_free(d);
	free(copy);
	return 0;
}
