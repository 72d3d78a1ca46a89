// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: dti_dump_excerpt(), a small ELF dump holding only what a dump's
 * channels are read from, which a dump reader (`dti dump`) reads as it
 * reads the whole dump.  `dti dump --excerpt` (libkdumpfile) and crash's
 * `dti -x` (readmem) write it, so that both write the same file.
 *
 * The channels are found again in a second struct dti_dump, from their
 * descriptors alone, loaded and opened, through read functions that note
 * every byte they read: the descriptors, CPU tables, page lists, levels,
 * rings, pending stores, persistent regions' headers and slot tables, the
 * module table.  Those pages go into the ELF dump at their physical
 * addresses (and virtual ones, where read so: pending stores); what else
 * they hold is left out (zero), so that other channels' descriptors on
 * the same page are not found in it.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libdti-local.h"

/* No virtual address: bytes read at a physical one */
#define DTI_NO_VADDR		0
/* The note an ELF dump keeps VMCOREINFO in, as the kernel writes it */
#define DTI_VMCOREINFO_NOTE	"VMCOREINFO"
#define DTI_NOTE_ALIGN		4
#define DTI_ALIGN(x, a)		(((x) + (a) - 1) / (a) * (a))

/* Field value @v in the excerpt's byte order */
#define ELF_PUT(v, big)	(sizeof(v) == 8 ? ((big) ? htobe64(v) : htole64(v)) : \
			 sizeof(v) == 4 ? ((big) ? htobe32(v) : htole32(v)) : \
			 ((big) ? htobe16(v) : htole16(v)))
#define ELF_GET(f, big)	(sizeof(f) == 8 ? ((big) ? be64toh(f) : le64toh(f)) : \
			 sizeof(f) == 4 ? ((big) ? be32toh(f) : le32toh(f)) : \
			 ((big) ? be16toh(f) : le16toh(f)))

/*
 * Bytes an excerpt holds, within one page: @len at @paddr, and if they
 * were read at a kernel virtual address, the address of their page
 * (else DTI_NO_VADDR).
 */
struct dti_xpage {
	uint64_t paddr, vaddr;
	uint32_t len;
};

/* One page of an excerpt: its frame, virtual address, and bytes noted */
struct dti_xframe {
	uint64_t pfn, vaddr;
	size_t first, n;		/* in dti_xrec.xp */
};

/* What the reads of the second dump noted */
struct dti_xrec {
	const struct dti_dump_mem *mem;		/* the dump's own reads */
	const struct dti_excerpt_spec *spec;
	struct dti_xpage *xp;
	size_t n_xp, cap_xp;
	const char *lost;			/* why bytes read were not noted */
};

static void dti_x_add(struct dti_xrec *x, uint64_t paddr, uint64_t vaddr, uint32_t len)
{
	struct dti_xpage *xp;
	size_t cap;

	if (x->n_xp == x->cap_xp) {
		cap = x->cap_xp ? 2 * x->cap_xp : 64;
		xp = reallocarray(x->xp, cap, sizeof(*xp));
		if (!xp) {
			x->lost = "out of memory";
			return;
		}
		x->xp = xp;
		x->cap_xp = cap;
	}
	x->xp[x->n_xp++] = (struct dti_xpage){ .paddr = paddr, .vaddr = vaddr, .len = len };
}

/*
 * Note [@addr, @addr + @len), just read, a page at a time; virtual
 * addresses (@virt) with the physical ones they are at.
 */
static void dti_x_note(struct dti_xrec *x, uint64_t addr, size_t len, bool virt)
{
	const uint64_t ps = x->spec->page_size;
	uint64_t end = addr + len, k, paddr;

	for (; addr < end; addr += k) {
		k = ps - addr % ps < end - addr ? ps - addr % ps : end - addr;
		if (!virt)
			dti_x_add(x, addr, DTI_NO_VADDR, k);
		else if (x->spec->virt_to_phys &&
			 x->spec->virt_to_phys(x->mem->arg, addr, &paddr) == 0)
			dti_x_add(x, paddr, addr - addr % ps, k);
		else
			x->lost = "a kernel virtual address read has no physical address";
	}
}

static int dti_x_read_phys(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct dti_xrec *x = arg;

	if (x->mem->read_phys(x->mem->arg, addr, buf, len) < 0)
		return -1;
	dti_x_note(x, addr, len, false);
	return 0;
}

static int dti_x_read_virt(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct dti_xrec *x = arg;

	if (x->mem->read_virt(x->mem->arg, addr, buf, len) < 0)
		return -1;
	dti_x_note(x, addr, len, true);
	return 0;
}

static const char *dti_x_errmsg(void *arg)
{
	struct dti_xrec *x = arg;

	return x->mem->errmsg(x->mem->arg);
}

static int dti_xpage_cmp(const void *a, const void *b)
{
	const struct dti_xpage *x = a, *y = b;

	return x->paddr != y->paddr ? (x->paddr < y->paddr ? -1 : 1) : 0;
}

/* Sort the noted bytes and group them by page into @fr; the count of pages */
static size_t dti_x_frames(struct dti_xrec *x, struct dti_xframe *fr)
{
	const uint64_t ps = x->spec->page_size;
	size_t i, n = 0;

	qsort(x->xp, x->n_xp, sizeof(*x->xp), dti_xpage_cmp);
	for (i = 0; i < x->n_xp; i++) {
		if (!n || fr[n - 1].pfn != x->xp[i].paddr / ps)
			fr[n++] = (struct dti_xframe){
				.pfn = x->xp[i].paddr / ps, .vaddr = DTI_NO_VADDR, .first = i,
			};
		fr[n - 1].n++;
		if (x->xp[i].vaddr != DTI_NO_VADDR)
			fr[n - 1].vaddr = x->xp[i].vaddr;
	}
	return n;
}

/* Whether page @b goes on the segment that ends with page @a */
static bool dti_xframe_follows(const struct dti_xframe *a, const struct dti_xframe *b,
			       uint64_t ps)
{
	return b->pfn == a->pfn + 1 &&
	       (a->vaddr == DTI_NO_VADDR ? b->vaddr == DTI_NO_VADDR :
		b->vaddr == a->vaddr + ps);
}

static int dti_write_all(int fd, const void *buf, size_t len)
{
	ssize_t n;

	for (; len; len -= n, buf = (const char *)buf + n) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n < 0)
			return -1;
	}
	return 0;
}

/*
 * Write the ELF header, a VMCOREINFO note (if the spec has one) and a
 * PT_LOAD per run of the @n pages in @fr, in the dumped machine's byte
 * order, to @fd, up to *@data_off.  0, or -1 (errno).
 */
static int dti_x_headers(const struct dti_excerpt_spec *s, int fd,
			 const struct dti_xframe *fr, size_t n, uint64_t *data_off)
{
	const uint64_t ps = s->page_size;
	const char *info = s->vmcoreinfo;
	const bool big = s->big_endian;
	size_t i, nseg = 0, name_len = strlen(DTI_VMCOREINFO_NOTE) + 1;
	size_t info_len = info ? strlen(info) : 0, note_len = 0, hdr_len;
	uint64_t off, at;
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph;
	Elf64_Nhdr nh;
	char *hdr;
	int ret;

	for (i = 0; i < n; i++)
		nseg += !i || !dti_xframe_follows(&fr[i - 1], &fr[i], ps);
	if (info)
		note_len = sizeof(nh) + DTI_ALIGN(name_len, DTI_NOTE_ALIGN) +
			   DTI_ALIGN(info_len, DTI_NOTE_ALIGN);
	off = sizeof(eh) + (nseg + !!info) * sizeof(ph);
	*data_off = DTI_ALIGN(off + note_len, ps);
	hdr_len = *data_off;
	hdr = calloc(1, hdr_len);
	if (!hdr)
		return -1;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = big ? ELFDATA2MSB : ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ELF_PUT((uint16_t)ET_CORE, big);
	eh.e_machine = ELF_PUT(s->machine, big);
	eh.e_version = ELF_PUT((uint32_t)EV_CURRENT, big);
	eh.e_phoff = ELF_PUT((uint64_t)sizeof(eh), big);
	eh.e_ehsize = ELF_PUT((uint16_t)sizeof(eh), big);
	eh.e_phentsize = ELF_PUT((uint16_t)sizeof(ph), big);
	eh.e_phnum = ELF_PUT((uint16_t)(nseg + !!info), big);
	memcpy(hdr, &eh, sizeof(eh));
	at = sizeof(eh);
	if (info) {
		ph = (Elf64_Phdr){
			.p_type = ELF_PUT((uint32_t)PT_NOTE, big),
			.p_offset = ELF_PUT(off, big),
			.p_filesz = ELF_PUT((uint64_t)note_len, big),
		};
		memcpy(hdr + at, &ph, sizeof(ph));
		at += sizeof(ph);
		nh = (Elf64_Nhdr){
			.n_namesz = ELF_PUT((uint32_t)name_len, big),
			.n_descsz = ELF_PUT((uint32_t)info_len, big),
		};
		memcpy(hdr + off, &nh, sizeof(nh));
		memcpy(hdr + off + sizeof(nh), DTI_VMCOREINFO_NOTE, name_len);
		memcpy(hdr + off + sizeof(nh) + DTI_ALIGN(name_len, DTI_NOTE_ALIGN), info,
		       info_len);
	}
	for (i = 0, off = *data_off; i < n; i++) {
		if (i && dti_xframe_follows(&fr[i - 1], &fr[i], ps)) {
			ph.p_filesz = ph.p_memsz = ELF_PUT(ELF_GET(ph.p_filesz, big) + ps, big);
		} else {
			if (i) {
				memcpy(hdr + at, &ph, sizeof(ph));
				at += sizeof(ph);
			}
			ph = (Elf64_Phdr){
				.p_type = ELF_PUT((uint32_t)PT_LOAD, big),
				.p_flags = ELF_PUT((uint32_t)(PF_R | PF_W | PF_X), big),
				.p_offset = ELF_PUT(off, big),
				.p_vaddr = ELF_PUT(fr[i].vaddr, big),
				.p_paddr = ELF_PUT(fr[i].pfn * ps, big),
				.p_filesz = ELF_PUT(ps, big),
				.p_memsz = ELF_PUT(ps, big),
			};
		}
		off += ps;
	}
	if (n)
		memcpy(hdr + at, &ph, sizeof(ph));
	ret = dti_write_all(fd, hdr, hdr_len);
	free(hdr);
	return ret;
}

/*
 * Write what @x noted to @path: each page with the bytes noted in it,
 * read again, and zeros elsewhere.  The count of pages, or -1 (said why;
 * a regular file written in part is removed).
 */
static ssize_t dti_x_write(struct dti_xrec *x, const char *path)
{
	const uint64_t ps = x->spec->page_size;
	struct dti_xframe *fr = calloc(x->n_xp ? x->n_xp : 1, sizeof(*fr));
	unsigned char *page = malloc(ps);
	const char *why;
	uint64_t data_off;
	size_t i, k, n;
	struct stat st;
	bool own = false;
	int fd = -1, ret = -1;

	if (!fr || !page || x->lost) {
		dti_fail(x->lost ? EIO : ENOMEM, "%s: cannot write an excerpt: %s", path,
			 x->lost ? x->lost : "out of memory");
		goto out;
	}
	n = dti_x_frames(x, fr);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto write_error;
	own = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (dti_x_headers(x->spec, fd, fr, n, &data_off) < 0)
		goto write_error;
	for (i = 0; i < n; i++) {
		memset(page, 0, ps);
		for (k = fr[i].first; k < fr[i].first + fr[i].n; k++)
			if (x->mem->read_phys(x->mem->arg, x->xp[k].paddr,
					      page + x->xp[k].paddr % ps, x->xp[k].len) < 0) {
				why = x->mem->errmsg ? x->mem->errmsg(x->mem->arg) : NULL;
				dti_fail(EIO, "%s: reading physical address 0x%llx of the dump again: %s",
					 path, (unsigned long long)x->xp[k].paddr,
					 why ? why : strerror(errno));
				goto out;
			}
		if (dti_write_all(fd, page, ps) < 0)
			goto write_error;
	}
	k = close(fd);
	fd = -1;
	if (k)
		goto write_error;
	ret = 0;
	goto out;
write_error:
	dti_fail(errno, "%s: %s", path, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (ret < 0 && own)
		unlink(path);	/* no half-written excerpt is left */
	free(page);
	free(fr);
	return ret < 0 ? -1 : (ssize_t)n;
}

/* Read [@addr, @addr + @len) of the dump (noting it) into dti_dump_scan() of @xd */
static int dti_x_scan(struct dti_xrec *x, struct dti_dump *xd, uint64_t addr, size_t len)
{
	unsigned char buf[sizeof(struct dti_dump_modules)];

	_Static_assert(sizeof(struct dti_dump_modules) >= DTI_DUMP_CHANNEL_SIZE &&
		       sizeof(struct dti_dump_modules) >= DTI_DUMP_PENDING_SIZE &&
		       sizeof(struct dti_dump_modules) >= sizeof(struct dti_persist_header),
		       "the largest thing an excerpt scans");
	if (!addr || len > sizeof(buf) || dti_x_read_phys(x, addr, buf, len) < 0)
		return 0;	/* read as it was the first time */
	return dti_dump_scan(xd, addr, buf, len);
}

/* Find channel @only (every one if < 0) of @d again in @xd, load and read it */
static int dti_x_record(struct dti_xrec *x, const struct dti_dump *d, int only,
			struct dti_dump *xd)
{
	const struct dti_dump_channel *ch;
	struct dti_reader *r;
	int i, n;

	/* the module table, for --lines on the excerpt */
	if (dti_dump_summary(d)->modules_addr &&
	    dti_x_scan(x, xd, dti_dump_summary(d)->modules_addr,
		       sizeof(struct dti_dump_modules)) < 0)
		return -1;
	for (i = 0; (ch = dti_dump_channel(d, i)); i++) {
		if ((only >= 0 && i != only) || ch->error)
			continue;	/* nothing of it can be read */
		/* a channel of a region alone: the region, found by its header */
		if (!ch->desc_addr &&
		    dti_x_scan(x, xd, ch->region_addr, sizeof(struct dti_persist_header)) < 0)
			return -1;
		if (dti_x_scan(x, xd, ch->desc_addr, DTI_DUMP_CHANNEL_SIZE) < 0 ||
		    dti_x_scan(x, xd, ch->pending_addr, DTI_DUMP_PENDING_SIZE) < 0)
			return -1;
	}
	n = dti_dump_load(xd);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		r = dti_dump_open(xd, i, 0);
		if (r)
			dti_close(r);
		else if (errno == ENOMEM)
			return -1;
	}
	return n;
}

/*
 * @info without the line that names a built-in DTI's dump index
 * (DTI_VMCOREINFO_KEY): an excerpt holds only some of what the index
 * lists, and is read by its markers.  malloc()ed; NULL: ENOMEM.
 */
static char *dti_x_vmcoreinfo(const char *info)
{
	const size_t klen = strlen(DTI_VMCOREINFO_KEY);
	char *out = malloc(strlen(info) + 1), *o = out;
	const char *nl;
	size_t len;

	if (!out)
		return NULL;
	for (; *info; info += len) {
		nl = strchr(info, '\n');
		len = nl ? (size_t)(nl - info) + 1 : strlen(info);
		if (strncmp(info, DTI_VMCOREINFO_KEY, klen) || info[klen] != '=') {
			memcpy(o, info, len);
			o += len;
		}
	}
	*o = '\0';
	return out;
}

int dti_dump_excerpt(const struct dti_dump *d, int channel, const char *path,
		     const struct dti_excerpt_spec *spec, size_t *pages)
{
	struct dti_excerpt_spec s = { 0 };
	const struct dti_dump_mem *mem = dti_dump_get_mem(d);
	struct dti_xrec x = { .mem = mem, .spec = &s };
	struct dti_dump_mem xmem = {
		.size = sizeof(xmem), .read_phys = dti_x_read_phys,
		.read_virt = mem->read_virt ? dti_x_read_virt : NULL,
		.errmsg = mem->errmsg ? dti_x_errmsg : NULL, .arg = &x,
		.phys_end = mem->phys_end, .long_size = mem->long_size,
	};
	struct dti_dump *xd;
	ssize_t k;
	int n;

	if (!spec || spec->size < offsetof(struct dti_excerpt_spec, virt_to_phys) +
				  sizeof(spec->virt_to_phys))
		return dti_fail(EINVAL, "dti_dump_excerpt: struct dti_excerpt_spec.size is %zu, not sizeof(struct dti_excerpt_spec)",
				spec ? spec->size : 0);
	memcpy(&s, spec, spec->size < sizeof(s) ? spec->size : sizeof(s));
	if (!s.page_size || s.page_size & (s.page_size - 1) || s.page_size > (1u << 24))
		return dti_fail(EINVAL, "dti_dump_excerpt: page size %u is no power of two up to 16 MiB",
				s.page_size);
	if (!s.machine || mem->long_size != sizeof(uint64_t))
		return dti_fail(EINVAL, "%s: excerpts are written as 64-bit ELF dumps, and the dump is %s",
				path, s.machine ? "not a 64-bit architecture's" :
				"of no ELF machine given");
	if (!dti_dump_channel(d, 0))
		return dti_fail(EINVAL, "dti_dump_excerpt: no channel loaded (call dti_dump_load())");
	if (channel >= 0 && !dti_dump_channel(d, channel))
		return dti_fail(ENOENT, "no channel %d in the dump", channel);
	if (s.vmcoreinfo && !(s.vmcoreinfo = dti_x_vmcoreinfo(spec->vmcoreinfo)))
		return dti_fail(ENOMEM, "out of memory");
	xd = dti_dump_new(&xmem);
	if (!xd) {
		free((char *)s.vmcoreinfo);
		return -1;
	}
	n = dti_x_record(&x, d, channel, xd);
	dti_dump_free(xd);
	k = n < 0 ? -1 : dti_x_write(&x, path);
	free((char *)s.vmcoreinfo);
	free(x.xp);
	if (k < 0)
		return -1;
	if (pages)
		*pages = k;
	return n;
}
