// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libdti's memory dump reader (lib/dump.c).  After a
 * byte of flags the input is a dump's memory, read through read_phys()
 * and read_virt(): either flat, physical memory from address 0 with
 * virtual addresses IMG_VOFF above (dump_image.h), or (bit 6) an ELF
 * dump, whose PT_LOAD segments give the physical and virtual addresses
 * of their bytes, as `dti dump --excerpt` writes one from a real dump;
 * segments the input cuts short hold what it has.  The memory is
 * scanned, loaded, and every channel that can be is opened and read to
 * its end with every record printed in every format (fuzz_drain.h).
 * Nothing may fail but for ENOMEM, damage is only ever a notice, and a
 * channel with an error must not open.
 *
 * Flags (first byte):
 *   bit 0   first set the CRCs of what looks like a descriptor, its CPU
 *           table and its page lists, or a persistent region's header and
 *           slots, so that mutations get past the CRC checks to the
 *           fields behind them
 *   bit 1   read_virt() fails (no address translation)
 *   bit 2,3 scan runs: whole segments, pages, 1000 bytes (unaligned),
 *           pages in reverse order
 *   bit 4   odd pages are missing from the dump (ENODATA)
 *   bit 5   the dumped kernel's unsigned long has 4 bytes
 *   bit 6   the input is an ELF dump
 *
 * Seeds:
 *  - tests/fuzz-seeds-dump: flat images, written by `build/test_dump
 *    --seeds DIR` from the images of its tests (a channel with wrapped
 *    and stale sub-buffers and a pending store, the same in the other
 *    byte order, an early handle's store, a persistent region holding
 *    two boots' rings);
 *  - build/fuzz-seeds-dump-real: made by tests/dump-seed-variants.py from
 *    tests/dump-excerpts/ (excerpts of a real guest crash, one channel
 *    each): each whole, truncated, and with bits flipped.
 *
 * With DTI_FUZZ_VERBOSE set in the environment, what each input held is
 * printed on stderr (to see what a seed reaches).
 */
#include <elf.h>
#include <stdbool.h>
#include <stdint.h>

#include "fuzz_drain.h"

#include "dump_image.h"

/* Rings larger than this are found but not read: a fuzzer's time is short */
#define FUZZ_RING_MAX	(4u << 20)
/* PT_LOAD segments of an ELF input used, at most */
#define FUZZ_SEGS	64

enum {
	FUZZ_FIX_CRC = 1, FUZZ_NO_VIRT = 2, FUZZ_SCAN_SHIFT = 2, FUZZ_SCAN_MASK = 3,
	FUZZ_HOLES = 16, FUZZ_LONG4 = 32, FUZZ_ELF = 64,
};

static uint32_t f32(uint32_t v, bool sw) { return sw ? bswap_32(v) : v; }
static uint64_t f64(uint64_t v, bool sw) { return sw ? bswap_64(v) : v; }

/* Whether [@at, @at + @len) lies in @size bytes */
static bool in(uint64_t at, uint64_t len, size_t size)
{
	return at <= size && len <= size - at;
}

/* Bytes of the input at a physical and (if not 0) a virtual address */
struct fuzz_seg {
	uint64_t paddr, vaddr, len;
	uint8_t *p;
};

struct fuzz_mem {
	struct fuzz_seg seg[FUZZ_SEGS];
	unsigned int n;
	bool no_virt, holes;
};

/*
 * Copy [@addr, @addr + @len) at physical (or @virt) addresses, piece by
 * piece from the segments that hold it.  0, or -1: EFAULT if a byte is
 * in none, ENODATA if it is on a missing odd page.
 */
static int fuzz_read(struct fuzz_mem *m, uint64_t addr, void *buf, size_t len, bool virt)
{
	const struct fuzz_seg *s;
	uint64_t start, k;
	unsigned int i;

	while (len) {
		for (i = 0, s = NULL; i < m->n && !s; i++) {
			start = virt ? m->seg[i].vaddr : m->seg[i].paddr;
			if ((!virt || start) && addr >= start && addr - start < m->seg[i].len)
				s = &m->seg[i];
		}
		if (!s) {
			errno = EFAULT;
			return -1;
		}
		start = virt ? s->vaddr : s->paddr;
		k = s->len - (addr - start) < len ? s->len - (addr - start) : len;
		if (m->holes && ((s->paddr + (addr - start)) / IMG_PAGE & 1)) {
			errno = ENODATA;
			return -1;
		}
		k = k < IMG_PAGE - addr % IMG_PAGE ? k : IMG_PAGE - addr % IMG_PAGE;
		memcpy(buf, s->p + (addr - start), k);
		buf = (uint8_t *)buf + k;
		addr += k;
		len -= k;
	}
	return 0;
}

static int fuzz_read_phys(void *arg, uint64_t addr, void *buf, size_t len)
{
	return fuzz_read(arg, addr, buf, len, false);
}

static int fuzz_read_virt(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct fuzz_mem *m = arg;

	if (m->no_virt) {
		errno = EFAULT;
		return -1;
	}
	return fuzz_read(m, addr, buf, len, true);
}

/* The bytes at physical [@addr, @addr + @len) if one segment holds them all */
static uint8_t *fuzz_at(struct fuzz_mem *m, uint64_t addr, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (addr >= m->seg[i].paddr && addr - m->seg[i].paddr <= m->seg[i].len &&
		    len <= m->seg[i].len - (addr - m->seg[i].paddr))
			return m->seg[i].p + (addr - m->seg[i].paddr);
	return NULL;
}

/*
 * The PT_LOAD segments of the ELF dump in @p (64-bit, either byte
 * order), clipped to the @size bytes there are.  The count, 0 if it is
 * none.
 */
static unsigned int fuzz_elf(struct fuzz_mem *m, uint8_t *p, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint64_t off, n, i;
	bool sw;

	if (size < sizeof(eh))
		return 0;
	memcpy(&eh, p, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	sw = eh.e_ident[EI_DATA] != (__BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB :
						     ELFDATA2MSB);
#define E(f)	(sizeof(f) == 8 ? f64(f, sw) : sizeof(f) == 4 ? f32(f, sw) : \
		 (sw ? bswap_16(f) : (f)))
	n = E(eh.e_phnum);
	for (i = 0; i < n && m->n < FUZZ_SEGS; i++) {
		off = E(eh.e_phoff) + i * sizeof(ph);
		if (!in(off, sizeof(ph), size))
			break;
		memcpy(&ph, p + off, sizeof(ph));
		if (E(ph.p_type) != PT_LOAD || E(ph.p_offset) >= size)
			continue;
		off = E(ph.p_offset);
		m->seg[m->n++] = (struct fuzz_seg){
			.paddr = E(ph.p_paddr), .vaddr = E(ph.p_vaddr), .p = p + off,
			.len = E(ph.p_filesz) < size - off ? E(ph.p_filesz) : size - off,
		};
	}
#undef E
	return m->n;
}

/* Set the CRCs of the channel descriptor at @p and what it points to. */
static void fix_channel(struct fuzz_mem *m, uint8_t *p, bool sw)
{
	struct dti_dump_desc d;
	struct dti_dump_cpu e;
	uint8_t *table, *pfns;
	uint32_t n, cpu, crc;
	uint64_t len;

	memcpy(&d, p, sizeof(d));
	n = f32(d.nr_cpus, sw);
	table = f64(d.cpu_table, sw) % 8 ? NULL :
		fuzz_at(m, f64(d.cpu_table, sw), (uint64_t)n * sizeof(e));
	if (table) {
		for (cpu = 0; cpu < n; cpu++) {
			memcpy(&e, table + cpu * sizeof(e), sizeof(e));
			len = (uint64_t)f32(e.n_pages, sw) * sizeof(uint64_t);
			pfns = fuzz_at(m, f64(e.pfns, sw), len);
			if (!pfns)
				continue;
			e.pfns_crc = f32(img_crc32(pfns, len), sw);
			memcpy(table + cpu * sizeof(e), &e, sizeof(e));
		}
		d.cpu_table_crc = f32(img_crc32(table, (uint64_t)n * sizeof(e)), sw);
	}
	d.crc = 0;
	crc = img_crc32(&d, sizeof(d));
	d.crc = f32(crc, sw);
	memcpy(p, &d, sizeof(d));
}

/* Set the CRCs of the persistent region header at @p (@len bytes on) and its slots. */
static void fix_region(uint8_t *p, size_t len, bool sw)
{
	struct dti_persist_header h;
	struct dti_persist_slot sl;
	uint32_t i, n;

	memcpy(&h, p, sizeof(h));
	h.crc = 0;
	h.crc = f32(img_crc32(&h, sizeof(h)), sw);
	memcpy(p, &h, sizeof(h));
	n = f32(h.n_slots, sw);
	for (i = 0; i < n && sizeof(h) + (i + 1) * sizeof(sl) <= len; i++) {
		memcpy(&sl, p + sizeof(h) + i * sizeof(sl), sizeof(sl));
		sl.crc = 0;
		sl.crc = f32(img_crc32(&sl, sizeof(sl)), sw);
		memcpy(p + sizeof(h) + i * sizeof(sl), &sl, sizeof(sl));
	}
}

/* The CRCs of every descriptor in @m, as if dti.ko had written them. */
static void fix_crcs(struct fuzz_mem *m)
{
	struct dti_dump_pending pd;
	unsigned int i;
	uint32_t magic;
	uint16_t type;
	uint8_t *p;
	size_t at;
	bool sw;

	for (i = 0; i < m->n; i++)
		for (at = 0; at + sizeof(struct dti_dump_desc) <= m->seg[i].len; at += 8) {
			p = m->seg[i].p + at;
			if (!memcmp(p, DTI_PERSIST_MARKER, DTI_PERSIST_MARKER_SIZE)) {
				memcpy(&magic, p + offsetof(struct dti_persist_header, magic), 4);
				if (magic == DTI_PERSIST_MAGIC || magic == bswap_32(DTI_PERSIST_MAGIC))
					fix_region(p, m->seg[i].len - at,
						   magic != DTI_PERSIST_MAGIC);
				continue;
			}
			if (memcmp(p, DTI_MARKER_PREFIX, strlen(DTI_MARKER_PREFIX)))
				continue;
			memcpy(&magic, p + offsetof(struct dti_dump_desc, magic), 4);
			if (magic != DTI_DUMP_MAGIC && magic != bswap_32(DTI_DUMP_MAGIC))
				continue;
			sw = magic != DTI_DUMP_MAGIC;
			memcpy(&type, p + offsetof(struct dti_dump_desc, type), 2);
			type = sw ? bswap_16(type) : type;
			if (type == DTI_DUMP_CHANNEL) {
				fix_channel(m, p, sw);
			} else if (type == DTI_DUMP_PENDING) {
				memcpy(&pd, p, sizeof(pd));
				if (!pd.crc)
					continue;	/* unsealed stays so */
				pd.crc = 0;
				pd.crc = f32(img_crc32(&pd, sizeof(pd)), sw);
				memcpy(p, &pd, sizeof(pd));
			} else if (type == DTI_DUMP_MODULES &&
				   sizeof(struct dti_dump_modules) <= m->seg[i].len - at) {
				/* the table as this dti.ko writes it, whole */
				struct dti_dump_modules *t = malloc(sizeof(*t));

				if (!t)
					continue;
				memcpy(t, p, sizeof(*t));
				t->crc = 0;
				t->crc = f32(img_crc32(t, sizeof(*t)), sw);
				memcpy(p, t, sizeof(*t));
				free(t);
			}
		}
}

/* Give segment @s to dti_dump_scan() in runs as @how says (flags bits 2, 3) */
static void scan_seg(struct dti_dump *d, const struct fuzz_seg *s, unsigned int how)
{
	uint64_t run = how == 1 || how == 3 ? IMG_PAGE : how == 2 ? 1000 : s->len;
	uint64_t off, k, pages = (s->len + IMG_PAGE - 1) / IMG_PAGE;

	if (how == 3) {
		while (pages--) {
			off = pages * IMG_PAGE;
			k = s->len - off < IMG_PAGE ? s->len - off : IMG_PAGE;
			dti_dump_scan(d, s->paddr + off, s->p + off, k);
		}
		return;
	}
	for (off = 0; off < s->len; off += k) {
		k = s->len - off < run ? s->len - off : run;
		dti_dump_scan(d, s->paddr + off, s->p + off, k);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem m = { 0 };
	struct dti_dump_mem mem = {
		.size = sizeof(mem), .read_phys = fuzz_read_phys, .read_virt = fuzz_read_virt, .arg = &m,
	};
	const struct dti_dump_channel *ch;
	const struct dti_module *mods;
	struct dti_dump *d;
	struct dti_reader *r;
	unsigned int flags, how, s;
	uint8_t *copy;
	int n, i, nm;

	if (size < 1)
		return 0;
	flags = data[0];
	/* a copy, which fix_crcs() may change, of a size ASan checks */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	m.no_virt = flags & FUZZ_NO_VIRT;
	m.holes = flags & FUZZ_HOLES;
	if (!(flags & FUZZ_ELF))
		m.seg[m.n++] = (struct fuzz_seg){
			.paddr = 0, .vaddr = IMG_VOFF, .len = size - 1, .p = copy,
		};
	else if (!fuzz_elf(&m, copy, size - 1))
		goto out;
	if (flags & FUZZ_FIX_CRC)
		fix_crcs(&m);
	for (s = 0; s < m.n; s++)
		if (m.seg[s].paddr + m.seg[s].len > mem.phys_end)
			mem.phys_end = m.seg[s].paddr + m.seg[s].len;
	mem.long_size = flags & FUZZ_LONG4 ? 4 : 8;
	d = dti_dump_new(&mem);
	if (!d)
		__builtin_trap();
	how = flags >> FUZZ_SCAN_SHIFT & FUZZ_SCAN_MASK;
	for (s = 0; s < m.n; s++)
		scan_seg(d, &m.seg[how == 3 ? m.n - 1 - s : s], how);
	n = dti_dump_load(d);
	if (n < 0 && errno != ENOMEM)
		__builtin_trap();
	/* the module table: either a valid one or why not */
	nm = n >= 0 ? dti_dump_modules(d, &mods) : 0;
	if (nm < 0 && errno != ENOENT && errno != EBADMSG)
		__builtin_trap();
	if (nm > 0 && (!mods || !dti_dump_summary(d)->modules_addr))
		__builtin_trap();
	for (i = 0; i < n; i++) {
		ch = dti_dump_channel(d, i);
		if (!ch || !ch->name)
			__builtin_trap();
		if (getenv("DTI_FUZZ_VERBOSE"))
			fprintf(stderr, "fuzz_dump: flags 0x%02x: channel %s: %llu records, %llu pending, %s\n",
				flags, ch->name, (unsigned long long)ch->records,
				(unsigned long long)ch->pending_records,
				ch->error ? ch->error : "no error\n");
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
out:
	free(copy);
	return 0;
}
