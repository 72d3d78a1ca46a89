// SPDX-License-Identifier: GPL-2.0
/*
 * dti dump VMCORE: the DTI channels of a kernel memory dump, found by
 * their dump descriptors with no vmlinux, debuginfo or System.map.
 *
 * libkdumpfile reads the dump: ELF (QEMU's dump-guest-memory, copies of
 * /proc/vmcore, makedumpfile -E) and kdump-compressed files (makedumpfile
 * -c/-l/-p at any dump level, QEMU's kdump-* formats).  libdti
 * (lib/dump.c) does the rest: every physical page the dump holds goes
 * through dti_dump_scan(), then dti_dump_load() reads the descriptors
 * through libkdumpfile, and each channel is printed as `dti read` prints
 * one, or saved as a snapshot directory.
 *
 * What libkdumpfile 0.5.1 (Debian 12) does not do by itself:
 *  - makedumpfile's flattened format (QEMU 7.2 writes its kdump-*
 *    formats so) is reassembled into an unlinked temporary file first;
 *  - QEMU's kdump-* header has no utsname, so libkdumpfile does not set
 *    the architecture and cannot translate addresses: it is taken from
 *    the header's machine field;
 *  - with KASLR, QEMU's kdump sub-header has a wrong phys_base; the
 *    VMCOREINFO one (NUMBER(phys_base)) is used if they differ.
 * Scanning an ELF dump reads its segments (the program headers) with
 * pread() into a buffer that stays in the CPU's L2 cache, which costs
 * about what cat costs: libkdumpfile's reads copy every page once more,
 * and a mapping of the file costs its page faults.  Reads of descriptors
 * and rings that one segment holds are pread() from the file too: through
 * libkdumpfile, a 1 GiB dump's 32 MiB of rings took as long as its scan.
 * Other reads (virtual addresses, segments cut short), and every read of
 * other formats, go through libkdumpfile.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libkdumpfile/kdumpfile.h>

#include "dti-cli.h"

const char usage_dump[] =
	"usage: dti dump [options] VMCORE\n"
	"\nFind the DTI channels in a kernel memory dump (ELF or kdump-compressed,\n"
	"as QEMU, kdump and makedumpfile write them; no vmlinux or debuginfo\n"
	"needed) and print each one's records merged by time, as 'dti read'\n"
	"would have, each after a line \"==> NAME <==\".\n"
	"\n"
	"  -l, --list            list the channels found: level, flags, generation,\n"
	"                        geometry, CPUs with buffers, records, problems\n"
	"  -v, --verbose         say how the channels were found: by the dump index\n"
	"                        VMCOREINFO names (DTI built into the kernel), or by\n"
	"                        scanning the dump's memory (dti.ko)\n"
	"      --channel NAME    only channel NAME (no header line); NAME,NAME...\n"
	"                        (or --channel again): those channels merged into\n"
	"                        one timeline, each line after its channel's name\n"
	"      --out DIR         write each channel as a snapshot directory DIR/NAME\n"
	"                        ('dti decode DIR/NAME' reads it) instead of printing\n"
	"      --excerpt FILE    write a small ELF dump holding only what the channels\n"
	"                        (or the one --channel names) are read from, which\n"
	"                        'dti dump' reads as it reads VMCORE (to send it)\n"
	DTI_HELP_FORMAT
	DTI_HELP_TAIL
	"A damaged channel is reported and skipped (exit status 2).  --lines uses\n"
	"the dump's module table and its kernel's release (VMCOREINFO).\n";

/* makedumpfile's flattened format (makedumpfile.h): big-endian throughout;
 * MDF_SIGNATURE is in dti-cli.h (decode knows such files too) */
#define MDF_SIG_LEN		16
#define MDF_HEADER_SIZE		4096
#define MDF_TYPE_FLAT		1
#define MDF_VERSION_FLAT	1
#define MDF_END			(-1LL)
/* Where a kdump-compressed header keeps utsname.machine */
#define DISKDUMP_MACHINE_AT	(8 + 4 + 4 * 65)
#define UTS_LEN			65
/*
 * ... and its block_size: after the signature (8), header_version (4),
 * utsname (6 x 65), padding to 8 and a 64-bit struct timeval (16), status (4)
 */
#define DISKDUMP_BLOCK_SIZE_AT	428

/*
 * Bytes read at once when scanning: through libkdumpfile, and with
 * pread() from an ELF file, into a buffer that L2 holds.  Measured on a
 * 1 GiB ELF dump in the page cache: 0.11 s with 256 KiB, 0.12 s with
 * 1 MiB, 0.26 s with 64 MiB; mapping the file instead, 0.15 s.
 */
#define DTI_SCAN_CHUNK		(1u << 20)
#define DTI_READ_CHUNK		(256u << 10)
#define DTI_BUF_ALIGN		4096
/* Seconds between two updates of the progress line */
#define DTI_PROGRESS_EVERY	0.2
/* Runs of pages that cannot be read reported one by one, at most */
#define DTI_UNREAD_SHOWN	3

/* A run of memory an ELF dump keeps in its file (vaddr 0: none said) */
struct dti_seg {
	uint64_t paddr, vaddr, off, size;
};

struct dti_vmcore {
	const char *path;
	int fd;				/* what libkdumpfile reads */
	kdump_ctx_t *ctx;
	const char *format;		/* libkdumpfile's name of it */
	uint64_t phys_end;
	unsigned int page_size, long_size;
	struct dti_seg *segs;		/* ELF: PT_LOAD segments, else NULL */
	unsigned int n_segs;
	uint64_t file_size;
	uint64_t unread;		/* bytes the dump claims but cannot give */
	uint64_t unread_at;		/* where the last run of them ended */
	unsigned int unread_runs;	/* runs of them */
	char err[512];			/* libkdumpfile's last error */
	bool quiet;			/* --quiet: no warnings */
	/* progress on a terminal */
	bool progress;
	uint64_t total, done;
	double last;
};

/* A warning about the dump file, unless --quiet */
#define dti_vwarn(v, ...)	do { if (!(v)->quiet) dti_warn(__VA_ARGS__); } while (0)

/* ---- reading the dump for libdti ---- */

static int dti_kdump_read(struct dti_vmcore *v, kdump_addrspace_t as,
			  uint64_t addr, void *buf, size_t len)
{
	size_t got = len;
	kdump_status st = kdump_read(v->ctx, as, addr, buf, &got);

	if (st == KDUMP_OK)
		return 0;
	snprintf(v->err, sizeof(v->err), "%s", kdump_get_err(v->ctx));
	errno = st == KDUMP_ERR_NODATA ? ENODATA :
		st == KDUMP_ERR_ADDRXLAT ? EFAULT : EIO;
	return -1;
}

/*
 * The physical address of kernel virtual address @addr, for an excerpt:
 * through the dumped kernel's page tables, or else (an excerpt, which has
 * none) the ELF segment that said it holds @addr.  0, or -1.
 */
static int dti_vtop(void *arg, uint64_t addr, uint64_t *paddr)
{
	struct dti_vmcore *v = arg;
	addrxlat_fulladdr_t fa = { .addr = addr, .as = ADDRXLAT_KVADDR };
	addrxlat_ctx_t *axctx = NULL;
	addrxlat_sys_t *axsys = NULL;
	unsigned int i;
	int ret = -1;

	if (kdump_get_addrxlat(v->ctx, &axctx, &axsys) == KDUMP_OK) {
		ret = addrxlat_fulladdr_conv(&fa, ADDRXLAT_MACHPHYSADDR, axctx, axsys) ==
		      ADDRXLAT_OK ? 0 : -1;
		addrxlat_ctx_decref(axctx);
		addrxlat_sys_decref(axsys);
	}
	kdump_clear_err(v->ctx);
	if (!ret) {
		*paddr = fa.addr;
		return 0;
	}
	for (i = 0; i < v->n_segs; i++)
		if (v->segs[i].vaddr && addr >= v->segs[i].vaddr &&
		    addr - v->segs[i].vaddr < v->segs[i].size) {
			*paddr = v->segs[i].paddr + (addr - v->segs[i].vaddr);
			return 0;
		}
	return -1;
}

/*
 * Physical addresses are the machine's: the same as the kernel's but
 * under Xen, which is not supported.  They need no address translation.
 */
/*
 * Read [@addr, @addr + @len) of an ELF dump's memory straight from the
 * file, if one segment's bytes in the file hold it all (segments are
 * sorted by address).  0, or -1: not so, or a read error (let
 * libkdumpfile read it and say what is wrong).
 */
static int dti_elf_read(struct dti_vmcore *v, uint64_t addr, void *buf, size_t len)
{
	unsigned int lo = 0, hi = v->n_segs, mid;
	const struct dti_seg *s;

	while (lo < hi) {	/* the first segment that ends after @addr */
		mid = lo + (hi - lo) / 2;
		s = &v->segs[mid];
		if (addr >= s->paddr && addr - s->paddr >= s->size)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == v->n_segs)
		return -1;
	s = &v->segs[lo];
	if (addr < s->paddr || len > s->size - (addr - s->paddr))
		return -1;
	return pread(v->fd, buf, len, s->off + (addr - s->paddr)) == (ssize_t)len ? 0 : -1;
}

static int dti_read_phys(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct dti_vmcore *v = arg;

	if ((!v->n_segs || dti_elf_read(v, addr, buf, len) < 0) &&
	    dti_kdump_read(v, KDUMP_MACHPHYSADDR, addr, buf, len) < 0)
		return -1;
	return 0;
}

static int dti_read_virt(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct dti_vmcore *v = arg;

	return dti_kdump_read(v, KDUMP_KVADDR, addr, buf, len);
}

static const char *dti_read_errmsg(void *arg)
{
	struct dti_vmcore *v = arg;

	return v->err;
}

/* ---- opening ---- */

static double dti_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t dti_be64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* Read exactly @len bytes (fewer only at the end of the file).  Bytes read, -1. */
static ssize_t dti_read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		done += n;
	}
	return done;
}

/*
 * Reassemble the flattened dump on @fd (its header read) into an
 * unlinked temporary file, as makedumpfile -R does: after the header,
 * records of a big-endian (offset, size) and size bytes, to be written
 * at offset, until an offset of -1.  Returns its descriptor, or -1
 * (message printed).
 */
static int dti_unflatten(const char *path, int fd)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	unsigned char hdr[16], *buf = malloc(DTI_SCAN_CHUNK);
	uint64_t at = MDF_HEADER_SIZE, size, n;
	int64_t off;
	ssize_t got;
	int out;

	out = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (out < 0 || !buf) {
		dti_err("%s: cannot create a temporary file in %s to reassemble it: %s",
			path, dir, strerror(errno));
		goto fail;
	}
	if (lseek(fd, MDF_HEADER_SIZE, SEEK_SET) < 0)
		goto read_error;
	for (;;) {
		got = dti_read_full(fd, hdr, sizeof(hdr));
		if (got < 0)
			goto read_error;
		if (got < (ssize_t)sizeof(hdr)) {
			dti_err("%s: truncated flattened dump: it ends at offset %llu, before its end marker",
				path, (unsigned long long)(at + got));
			goto fail;
		}
		off = (int64_t)dti_be64(hdr);
		size = dti_be64(hdr + 8);
		if (off == MDF_END)
			break;
		if (off < 0 || size > INT64_MAX - (uint64_t)off) {
			dti_err("%s: corrupt flattened dump: a record at offset %llu says %lld bytes at %lld",
				path, (unsigned long long)at, (long long)size, (long long)off);
			goto fail;
		}
		at += sizeof(hdr);
		while (size) {
			n = size < DTI_SCAN_CHUNK ? size : DTI_SCAN_CHUNK;
			got = dti_read_full(fd, buf, n);
			if (got < 0)
				goto read_error;
			if ((uint64_t)got < n) {
				dti_err("%s: truncated flattened dump: a record at offset %llu ends past the end of the file",
					path, (unsigned long long)at);
				goto fail;
			}
			if (pwrite(out, buf, n, off) != (ssize_t)n) {
				dti_err("%s: writing the reassembled dump into %s: %s", path,
					dir, strerror(errno));
				goto fail;
			}
			off += n;
			at += n;
			size -= n;
		}
	}
	free(buf);
	return out;
read_error:
	dti_err("%s: read error at offset %llu: %s", path, (unsigned long long)at,
		strerror(errno));
fail:
	free(buf);
	if (out >= 0)
		close(out);
	return -1;
}

/*
 * The file libkdumpfile is to read: @path, or a reassembled copy of it
 * if it is in makedumpfile's flattened format.  Sets v->fd.  0, or -1.
 */
static int dti_vmcore_file(struct dti_vmcore *v)
{
	char sig[MDF_SIG_LEN];
	unsigned char mdf[MDF_SIG_LEN + 16];
	struct stat st;
	int fd;

	fd = open(v->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		dti_err("%s: %s", v->path, strerror(errno));
		return -1;
	}
	v->fd = fd;
	v->file_size = st.st_size;
	if (S_ISDIR(st.st_mode)) {
		dti_err("%s: a directory, not a memory dump (a vmcore, an ELF core, a kdump-compressed file); 'dti decode %s' reads a snapshot directory",
			v->path, v->path);
		return -1;
	}
	memset(sig, 0, sizeof(sig));
	memcpy(sig, MDF_SIGNATURE, strlen(MDF_SIGNATURE));
	if (pread(fd, mdf, sizeof(mdf), 0) != (ssize_t)sizeof(mdf) ||
	    memcmp(mdf, sig, sizeof(sig)))
		return 0;
	if (dti_be64(mdf + MDF_SIG_LEN) != MDF_TYPE_FLAT ||
	    dti_be64(mdf + MDF_SIG_LEN + 8) != MDF_VERSION_FLAT) {
		dti_err("%s: makedumpfile's flattened format of an unknown type or version (%llu, %llu)",
			v->path, (unsigned long long)dti_be64(mdf + MDF_SIG_LEN),
			(unsigned long long)dti_be64(mdf + MDF_SIG_LEN + 8));
		return -1;
	}
	dti_vwarn(v, "%s: makedumpfile's flattened format (as QEMU writes its kdump-* dumps), which libkdumpfile cannot read: reassembling it into a temporary file (makedumpfile -R NEWFILE < %s makes a copy that can be read directly)",
		  v->path, v->path);
	fd = dti_unflatten(v->path, v->fd);
	if (fd < 0)
		return -1;
	close(v->fd);
	v->fd = fd;
	v->file_size = lseek(fd, 0, SEEK_END);
	return 0;
}

/*
 * VMCOREINFO's value for @key (borrowed from @v's context), or NULL.
 * Read as an attribute, which libkdumpfile has before the OS type is
 * set (kdump_vmcoreinfo_line() refuses until then: "OS type is not set").
 */
static const char *dti_vmcoreinfo(struct dti_vmcore *v, const char *key)
{
	char attr[96];
	const char *val;

	snprintf(attr, sizeof(attr), "linux.vmcoreinfo.lines.%s", key);
	if (kdump_get_string_attr(v->ctx, attr, &val) == KDUMP_OK)
		return val;
	kdump_clear_err(v->ctx);
	return NULL;
}

/*
 * The architecture of a dump whose header does not name one libkdumpfile
 * knows, from a VMCOREINFO line only that architecture's kernel writes
 * (arch/x86/kernel/vmcore_info_64.c, arch/arm64/kernel/vmcore_info.c).
 * NULL if none is there.
 */
static const char *dti_vmcoreinfo_arch(struct dti_vmcore *v)
{
	static const struct {
		const char *line;
		const char *arch;
	} marks[] = {
		{ "SYMBOL(init_top_pgt)", "x86_64" },
		{ "NUMBER(VA_BITS)", "aarch64" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (dti_vmcoreinfo(v, marks[i].line))
			return marks[i].arch;
	return NULL;
}

/*
 * libkdumpfile 0.5.1 takes a kdump-compressed file's architecture from
 * the header's utsname only if all of it looks sane; QEMU fills in the
 * machine field alone, and QEMU 10 writes "Unknown" there (7.2 wrote
 * "x86_64"): then VMCOREINFO tells.  Without an architecture nothing
 * translates: every kernel virtual address is "No way to translate".
 */
static void dti_vmcore_arch(struct dti_vmcore *v)
{
	char machine[UTS_LEN + 1] = "";
	const char *arch;

	if (kdump_get_string_attr(v->ctx, KDUMP_ATTR_ARCH_NAME, &arch) == KDUMP_OK)
		return;
	kdump_clear_err(v->ctx);
	if (strcmp(v->format, "diskdump") ||
	    pread(v->fd, machine, UTS_LEN, DISKDUMP_MACHINE_AT) != UTS_LEN)
		return;
	machine[UTS_LEN] = '\0';
	if (kdump_set_string_attr(v->ctx, "linux.uts.machine", machine) == KDUMP_OK &&
	    kdump_get_string_attr(v->ctx, KDUMP_ATTR_ARCH_NAME, &arch) == KDUMP_OK)
		return;
	kdump_clear_err(v->ctx);
	arch = dti_vmcoreinfo_arch(v);
	if (!arch || kdump_set_string_attr(v->ctx, "linux.uts.machine", arch) != KDUMP_OK) {
		dti_vwarn(v, "%s: unknown architecture \"%s\" in the header, and VMCOREINFO "
			  "names none: kernel virtual addresses cannot be read", v->path, machine);
		kdump_clear_err(v->ctx);
	}
}

/*
 * With KASLR, QEMU's kdump-* sub-header has a wrong phys_base (which
 * libkdumpfile reads first); VMCOREINFO's NUMBER(phys_base) is right.
 */
static void dti_vmcore_phys_base(struct dti_vmcore *v)
{
	const char *line = dti_vmcoreinfo(v, "NUMBER(phys_base)");
	kdump_addr_t have;
	long long want;
	char *end;

	if (!line)
		return;
	errno = 0;
	want = strtoll(line, &end, 0);
	if (!errno && !*end && end != line &&
	    (kdump_get_address_attr(v->ctx, "linux.phys_base", &have) != KDUMP_OK ||
	     have != (kdump_addr_t)want) &&
	    kdump_set_address_attr(v->ctx, "linux.phys_base", (kdump_addr_t)want) != KDUMP_OK)
		dti_vwarn(v, "%s: cannot use VMCOREINFO's phys_base %lld: %s", v->path,
			  want, kdump_get_err(v->ctx));
	kdump_clear_err(v->ctx);
}

/* Open @path with libkdumpfile.  0, or -1 (message printed). */
/*
 * A kdump-compressed file whose blocks are not the kernel's pages: QEMU
 * 7.2's kdump-* dumps of an arm64 guest have 64 KiB blocks whatever the
 * guest's page size (it writes the largest the architecture allows), and
 * libkdumpfile 0.5.1, which decompresses each block into a page of the
 * kernel's (VMCOREINFO's PAGESIZE), fails on every block, then crashes
 * on the next read.  Refuse such a file before reading it.  0, or -1.
 */
static int dti_vmcore_block_size(struct dti_vmcore *v)
{
	uint32_t bs;

	if (strcmp(v->format, "diskdump") ||
	    pread(v->fd, &bs, sizeof(bs), DISKDUMP_BLOCK_SIZE_AT) != (ssize_t)sizeof(bs) ||
	    bs == v->page_size || __builtin_bswap32(bs) == v->page_size)
		return 0;
	dti_err("%s: a kdump-compressed dump whose blocks are %u bytes, though the kernel's pages are %u: libkdumpfile cannot read it (QEMU 7.2 writes such files for arm64 guests: dump-guest-memory's ELF format, or makedumpfile in the guest, gives a file that can be read)",
		v->path, bs, v->page_size);
	return -1;
}

static int dti_vmcore_open(struct dti_vmcore *v, const char *path, bool quiet)
{
	kdump_num_t num;

	memset(v, 0, sizeof(*v));
	v->path = path;
	v->quiet = quiet;
	v->fd = -1;
	if (dti_vmcore_file(v) < 0)
		return -1;
	v->ctx = kdump_new();
	if (!v->ctx) {
		dti_err("out of memory");
		return -1;
	}
	/*
	 * A mapping of a truncated file kills the reader with SIGBUS, and
	 * libkdumpfile maps the file while opening it (its notes): read(2)
	 * from the start.
	 */
	kdump_set_number_attr(v->ctx, KDUMP_ATTR_FILE_MMAP_POLICY, KDUMP_MMAP_NEVER);
	if (kdump_open_fd(v->ctx, v->fd) != KDUMP_OK) {
		dti_err("%s: not a memory dump libkdumpfile can read: %s", path,
			kdump_get_err(v->ctx));
		return -1;
	}
	if (kdump_get_string_attr(v->ctx, KDUMP_ATTR_FILE_FORMAT, &v->format) != KDUMP_OK)
		v->format = "?";
	dti_vmcore_arch(v);
	dti_vmcore_phys_base(v);
	if (kdump_set_string_attr(v->ctx, KDUMP_ATTR_OSTYPE, "linux") != KDUMP_OK) {
		dti_vwarn(v, "%s: kernel virtual addresses cannot be translated, so pending stores cannot be read: %s",
			  path, kdump_get_err(v->ctx));
		kdump_clear_err(v->ctx);
	}
	v->page_size = kdump_get_number_attr(v->ctx, KDUMP_ATTR_PAGE_SIZE, &num) ==
		       KDUMP_OK ? num : 4096;
	v->long_size = kdump_get_number_attr(v->ctx, KDUMP_ATTR_PTR_SIZE, &num) ==
		       KDUMP_OK && (num == 4 || num == 8) ? num : 8;
	if (kdump_get_number_attr(v->ctx, "max_pfn", &num) == KDUMP_OK)
		v->phys_end = num * v->page_size;
	kdump_clear_err(v->ctx);
	return dti_vmcore_block_size(v);
}

static void dti_vmcore_close(struct dti_vmcore *v)
{
	if (v->ctx)
		kdump_free(v->ctx);
	if (v->fd >= 0)
		close(v->fd);
	free(v->segs);
}

/* ---- scanning ---- */

static void dti_progress(struct dti_vmcore *v, uint64_t bytes)
{
	double now;

	v->done += bytes;
	if (!v->progress || (now = dti_now()) - v->last < DTI_PROGRESS_EVERY)
		return;
	v->last = now;
	fprintf(stderr, "\rdti dump: scanning %s: %llu of %llu MiB (%u%%)", v->path,
		(unsigned long long)(v->done >> 20), (unsigned long long)(v->total >> 20),
		v->total ? (unsigned int)(v->done * 100 / v->total) : 100);
}

static void dti_progress_end(struct dti_vmcore *v)
{
	if (v->progress && v->last)
		fputs("\r\033[K", stderr);
}

/* Field @f of an ELF header, in the file's byte order */
#define ELF_GET(f, big)	(sizeof(f) == 8 ? ((big) ? be64toh(f) : le64toh(f)) : \
			 sizeof(f) == 4 ? ((big) ? be32toh(f) : le32toh(f)) : \
			 ((big) ? be16toh(f) : le16toh(f)))

static int dti_seg_cmp(const void *a, const void *b)
{
	const struct dti_seg *x = a, *y = b;

	return x->paddr != y->paddr ? (x->paddr < y->paddr ? -1 : 1) : 0;
}

/*
 * The PT_LOAD segments of an ELF dump, from its program headers (64-bit
 * ELF; others are scanned through libkdumpfile), sorted by address.
 * Segments the file cuts short are kept to what it has, with a warning.
 * 0, or -1 (use libkdumpfile).
 */
static int dti_elf_segments(struct dti_vmcore *v)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr sh;
	uint64_t phoff, off, size, filesz;
	unsigned int i, n;
	bool big;

	if (strcmp(v->format, "elf") ||
	    pread(v->fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	phoff = ELF_GET(eh.e_phoff, big);
	n = ELF_GET(eh.e_phnum, big);
	if (n == PN_XNUM) {	/* the count is in section 0 */
		if (pread(v->fd, &sh, sizeof(sh), ELF_GET(eh.e_shoff, big)) !=
		    (ssize_t)sizeof(sh))
			return -1;
		n = ELF_GET(sh.sh_info, big);
	}
	if (ELF_GET(eh.e_phentsize, big) != sizeof(ph) || !n)
		return -1;
	v->segs = calloc(n, sizeof(*v->segs));
	if (!v->segs)
		return -1;
	for (i = 0; i < n; i++) {
		if (pread(v->fd, &ph, sizeof(ph), phoff + (uint64_t)i * sizeof(ph)) !=
		    (ssize_t)sizeof(ph))
			goto bad;
		if (ELF_GET(ph.p_type, big) != PT_LOAD)
			continue;
		off = ELF_GET(ph.p_offset, big);
		filesz = ELF_GET(ph.p_filesz, big);
		size = off >= v->file_size ? 0 :
		       filesz > v->file_size - off ? v->file_size - off : filesz;
		if (size < filesz) {
			dti_vwarn(v, "%s: truncated: the segment of physical 0x%llx has %llu of its %llu bytes in the file",
				  v->path, (unsigned long long)ELF_GET(ph.p_paddr, big),
				  (unsigned long long)size, (unsigned long long)filesz);
			v->unread += filesz - size;
			v->unread_runs++;
		}
		v->segs[v->n_segs++] = (struct dti_seg){
			.paddr = ELF_GET(ph.p_paddr, big), .vaddr = ELF_GET(ph.p_vaddr, big),
			.off = off, .size = size,
		};
		v->total += size;
	}
	qsort(v->segs, v->n_segs, sizeof(*v->segs), dti_seg_cmp);
	return 0;
bad:
	free(v->segs);
	v->segs = NULL;
	v->n_segs = 0;
	v->total = 0;
	return -1;
}

/*
 * Scan an ELF dump's segments, read from the file a chunk at a time.
 * DTI_EXIT_OK, or DTI_EXIT_FAIL (message printed).
 */
static int dti_scan_segments(struct dti_vmcore *v, struct dti_dump *d)
{
	unsigned char *buf = aligned_alloc(DTI_BUF_ALIGN, DTI_READ_CHUNK);
	uint64_t at, end, len;
	unsigned int i;
	ssize_t n;
	int ret = 0;

	if (!buf)
		return dti_err("out of memory");
	posix_fadvise(v->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (i = 0; i < v->n_segs && !ret; i++) {
		end = v->segs[i].off + v->segs[i].size;
		for (at = v->segs[i].off; at < end; at += n) {
			len = end - at < DTI_READ_CHUNK ? end - at : DTI_READ_CHUNK;
			n = pread(v->fd, buf, len, at);
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n <= 0) {
				ret = dti_err("%s: read error at offset %llu: %s", v->path,
					      (unsigned long long)at,
					      n ? strerror(errno) : "unexpected end of file");
				break;
			}
			if (dti_dump_scan(d, v->segs[i].paddr + (at - v->segs[i].off),
					  buf, n) < 0) {
				ret = dti_err("%s", dti_errmsg());
				break;
			}
			dti_progress(v, n);
		}
	}
	free(buf);
	return ret;
}

/* Pages the dump holds, as runs [*@first, *@end) of frame numbers */
static bool dti_next_run(kdump_bmp_t *bmp, uint64_t max_pfn, kdump_addr_t *first,
			 kdump_addr_t *end)
{
	if (*first >= max_pfn || kdump_bmp_find_set(bmp, first) != KDUMP_OK ||
	    *first >= max_pfn)
		return false;
	*end = *first;
	if (kdump_bmp_find_clear(bmp, end) != KDUMP_OK || *end > max_pfn)
		*end = max_pfn;
	return true;
}

/*
 * A page the dump claims that libkdumpfile cannot read at @addr: a
 * truncated or damaged file, reported with the first pages of each run
 * of them (@more: the run goes on), up to DTI_UNREAD_SHOWN runs.  Pages
 * a filtered dump leaves out are no such pages: the page map says so.
 */
static void dti_unread(struct dti_vmcore *v, kdump_status st, uint64_t addr,
		       bool more)
{
	if (!more && v->unread_runs++ < DTI_UNREAD_SHOWN) {
		dti_progress_end(v);
		v->last = 0;
		dti_vwarn(v, "%s: physical address 0x%llx cannot be read, though the dump says it holds it: %s",
			  v->path, (unsigned long long)addr,
			  st == KDUMP_ERR_NODATA ? "no data" : kdump_get_err(v->ctx));
	}
	kdump_clear_err(v->ctx);
}

/*
 * Scan every page the dump holds (file.pagemap) through libkdumpfile, a
 * chunk per read; pages that cannot be read are skipped (dti_unread()).
 * DTI_EXIT_OK, or DTI_EXIT_FAIL (message printed).
 */
static int dti_scan_read(struct dti_vmcore *v, struct dti_dump *d)
{
	const uint64_t ps = v->page_size, max_pfn = v->phys_end / ps;
	unsigned char *buf = malloc(DTI_SCAN_CHUNK);
	kdump_addr_t first = 0, end;
	kdump_attr_t attr;
	kdump_bmp_t *bmp;
	uint64_t addr, lim;
	kdump_status st;
	size_t len;
	int ret = 0;

	if (!buf)
		return dti_err("out of memory");
	if (kdump_get_attr(v->ctx, KDUMP_ATTR_FILE_PAGEMAP, &attr) != KDUMP_OK ||
	    attr.type != KDUMP_BITMAP) {
		free(buf);
		return dti_err("%s: libkdumpfile tells no map of the pages it holds: %s",
			       v->path, kdump_get_err(v->ctx));
	}
	bmp = attr.val.bitmap;
	kdump_bmp_incref(bmp);
	while (dti_next_run(bmp, max_pfn, &first, &end)) {
		v->total += (end - first) * ps;
		first = end;
	}
	for (first = 0; !ret && dti_next_run(bmp, max_pfn, &first, &end); first = end) {
		lim = end * ps;
		for (addr = first * ps; addr < lim; addr += len) {
			len = lim - addr < DTI_SCAN_CHUNK ? lim - addr : DTI_SCAN_CHUNK;
			st = kdump_read(v->ctx, KDUMP_MACHPHYSADDR, addr, buf, &len);
			if (len && dti_dump_scan(d, addr, buf, len) < 0) {
				ret = dti_err("%s", dti_errmsg());
				break;
			}
			dti_progress(v, len);
			if (st != KDUMP_OK) {	/* skip the page it cannot give */
				dti_unread(v, st, addr + len, v->unread_at == addr + len);
				len += ps - (addr + len) % ps;
				v->done += ps;
				v->unread += ps;
				v->unread_at = addr + len;
			}
		}
	}
	kdump_bmp_decref(bmp);
	free(buf);
	return ret;
}

/*
 * Give dti_dump_scan() all the dump holds (an ELF dump's segments read
 * by dti_elf_segments() first).  DTI_EXIT_OK, or DTI_EXIT_FAIL.
 */
static int dti_vmcore_scan(struct dti_vmcore *v, struct dti_dump *d)
{
	int ret;

	v->progress = !v->quiet && isatty(STDERR_FILENO);
	v->last = 0;
	ret = v->segs ? dti_scan_segments(v, d) : dti_scan_read(v, d);
	dti_progress_end(v);
	if (!ret && v->unread)
		dti_vwarn(v, "%s: %llu KiB of memory the dump should hold could not be read, in %u place%s; what they held is missing",
			  v->path, (unsigned long long)(v->unread >> 10), v->unread_runs,
			  v->unread_runs == 1 ? "" : "s");
	if (!ret && !dti_dump_summary(d)->scanned)
		return dti_err("%s: this %s dump holds no memory at all (truncated?)",
			       v->path, v->format);
	return ret;
}

/* ---- printing ---- */

static int dti_dump_list(struct dti_dump *d, struct dti_read_opts *o)
{
	int bad = dti_dump_print_list(d, o->f, o->channel,
				      o->quiet ? DTI_LIST_QUIET : 0);

	if (bad < 0)
		return dti_err("writing the listing: %s", strerror(errno));
	return bad ? DTI_EXIT_DAMAGE : DTI_EXIT_OK;
}

/* Problems of a channel found when loading, on stderr; the exit code they make */
static int dti_dump_problems(const struct dti_dump_channel *ch,
			     const struct dti_read_opts *o)
{
	const char *text, *nl;

	if (ch->error) {
		if (!o->quiet)
			dti_err("channel %s skipped: %.*s", ch->name,
				(int)strlen(ch->error) - 1, ch->error);
		return DTI_EXIT_DAMAGE;
	}
	for (text = ch->damage; !o->quiet && text && *text; text = nl + 1) {
		nl = strchr(text, '\n');
		dti_err("channel %s: %.*s", ch->name, (int)(nl - text), text);
	}
	for (text = ch->notes; !o->quiet && text && *text; text = nl + 1) {
		nl = strchr(text, '\n');
		dti_warn("channel %s: %.*s", ch->name, (int)(nl - text), text);
	}
	return ch->damage ? DTI_EXIT_DAMAGE : DTI_EXIT_OK;
}

/* Damage of persistent regions, on stderr; the exit code it makes */
static int dti_dump_region_damage(const struct dti_dump_summary *sum,
				  const struct dti_read_opts *o)
{
	const char *text, *nl;

	for (text = sum->region_damage; !o->quiet && text && *text; text = nl + 1) {
		nl = strchr(text, '\n');
		dti_err("%.*s", (int)(nl - text), text);
	}
	return sum->region_damage ? DTI_EXIT_DAMAGE : DTI_EXIT_OK;
}

/*
 * The channel from *@i on that --channel selects and that can be read,
 * the problems of those passed over and of it reported, the worst exit
 * code in *@ret; NULL after the last.
 */
static const struct dti_dump_channel *dti_dump_next(struct dti_dump *d, int n, int *i,
						    const struct dti_read_opts *o, int *ret)
{
	const struct dti_dump_channel *ch;

	for (; *i < n; ++*i) {
		ch = dti_dump_channel(d, *i);
		if (!dti_read_selects(o, ch->name))
			continue;
		*ret = dti_exit_worst(*ret, dti_dump_problems(ch, o));
		if (!ch->error)
			return ch;
	}
	return NULL;
}

/*
 * The channels --channel names (several) merged into one timeline, their
 * callers' lines through the dump's module table (@mods, @nm; @why: why
 * there is none)
 */
static int dti_dump_merged(struct dti_dump *d, int n, struct dti_read_opts *o,
			   const struct dti_module *mods, int nm, const char *why)
{
	const struct dti_dump_channel *ch;
	unsigned int flags = o->strict ? DTI_OPEN_STRICT : 0;
	struct dti_reader *m;
	int i, ret = dti_read_merge_new("dump", o, &m);

	if (ret >= 0)
		return ret;
	ret = DTI_EXIT_OK;
	for (i = 0; (ch = dti_dump_next(d, n, &i, o, &ret)); i++) {
		if (dti_read_merge_add(m, dti_dump_open(d, i, flags), ch->name) != DTI_EXIT_OK) {
			dti_close(m);
			return DTI_EXIT_FAIL;
		}
	}
	if (dti_read_lines_table(o, mods, nm, why) != DTI_EXIT_OK) {
		dti_close(m);
		return DTI_EXIT_FAIL;
	}
	return dti_exit_worst(ret, dti_read_print(m, o));
}

/* Print the channels of @d (n of them), or those --channel names */
static int dti_dump_print(struct dti_dump *d, int n, struct dti_read_opts *o)
{
	const struct dti_dump_channel *ch;
	unsigned int flags = o->strict ? DTI_OPEN_STRICT : 0;
	int i, ret = DTI_EXIT_OK, shown = 0;

	const struct dti_module *mods, *dump_mods = NULL;
	char dump_why[512] = "";
	int nm, dump_n = 0;
	bool same;

	if (o->lines_l) {
		dump_n = dti_dump_modules(d, &dump_mods);
		if (dump_n < 0)
			snprintf(dump_why, sizeof(dump_why), "%s", dti_errmsg());
	}
	if (o->n_channels > 1)
		return dti_dump_merged(d, n, o, dump_mods, dump_n, dump_why);
	for (i = 0; (ch = dti_dump_next(d, n, &i, o, &ret)); i++) {
		dti_print_channel_head(o, ch->name, shown++);
		o->chan_name = ch->name;	/* as dti_dump_open() names it */
		/*
		 * The dump's module table for the dumped boot's channels (told
		 * once if there is none); for an earlier boot's rings in a
		 * persistent region, the table of that boot the region keeps
		 */
		if (o->lines_l) {
			nm = dti_dump_channel_modules(d, i, &mods);
			same = nm >= 0 ? dump_n >= 0 && mods == dump_mods :
			       dump_n < 0 && !strcmp(dti_errmsg(), dump_why);
			if (same ? dti_read_lines_table(o, dump_mods, dump_n, dump_why) :
				   dti_read_lines_other(o, mods, nm))
				return DTI_EXIT_FAIL;
		}
		ret = dti_exit_worst(ret, dti_read_print(dti_dump_open(d, i, flags), o));
		dti_read_lines_other(o, NULL, 0);
	}
	return ret;
}

/*
 * Write each channel (or the one --channel names) as DIR/NAME, with the
 * dump's kernel release (@release, NULL: not known) as a snapshot has it.
 */
static int dti_dump_out(struct dti_dump *d, int n, struct dti_read_opts *o,
			const char *release)
{
	const struct dti_dump_channel *ch;
	char path[PATH_MAX];
	int i, ret = DTI_EXIT_OK;

	if (mkdir(o->out_dir, 0755) != 0 && errno != EEXIST)
		return dti_err("%s: %s", o->out_dir, strerror(errno));
	for (i = 0; (ch = dti_dump_next(d, n, &i, o, &ret)); i++) {
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, ch->name);
		if (dti_dump_save(d, i, path) < 0) {
			ret = dti_err("%s", dti_errmsg());
			continue;
		}
		/* the dumped kernel's, not that of an earlier boot's NAME@bootN */
		if (release && !strchr(ch->name, '@'))
			ret = dti_exit_worst(ret, dti_snap_write_release(path, release));
		fprintf(o->f, "%s: %u per-CPU files, %llu records, %llu pending records in %s\n",
			ch->name, ch->nr_bufs, (unsigned long long)ch->records,
			(unsigned long long)ch->pending_records, path);
	}
	return ret;
}

/* ---- excerpts ---- */

/* ELF machines of the 64-bit architectures libkdumpfile knows */
static const struct {
	const char *arch;
	uint16_t machine;
} dti_elf_machines[] = {
	{ KDUMP_ARCH_X86_64, EM_X86_64 }, { KDUMP_ARCH_AARCH64, EM_AARCH64 },
	{ KDUMP_ARCH_PPC64, EM_PPC64 }, { KDUMP_ARCH_S390X, EM_S390 },
	{ KDUMP_ARCH_IA64, EM_IA_64 }, { KDUMP_ARCH_ALPHA, EM_ALPHA },
};

/*
 * Write an excerpt of @v holding what the channels of @d (n of them), or
 * the one --channel names, are read from (dti_dump_excerpt()), with the
 * dump's machine, byte order and VMCOREINFO.  A channel with an error
 * is reported and left out: nothing of it can be read.  Returns the exit
 * code.
 */
static int dti_dump_excerpt_write(struct dti_vmcore *v, struct dti_dump *d, int n,
				  struct dti_read_opts *o)
{
	struct dti_excerpt_spec spec = {
		.size = sizeof(spec), .page_size = v->page_size, .virt_to_phys = dti_vtop,
	};
	const char *arch = NULL;
	char *info = NULL;
	int i, only = -1, nx, ret = DTI_EXIT_OK;
	kdump_num_t order;
	size_t pages, k;

	for (i = 0; dti_dump_next(d, n, &i, o, &ret); i++)
		;	/* the problems told */
	for (i = 0; o->channel && i < n; i++)
		if (!strcmp(dti_dump_channel(d, i)->name, o->channel))
			only = i;
	if (kdump_get_string_attr(v->ctx, KDUMP_ATTR_ARCH_NAME, &arch) == KDUMP_OK)
		for (k = 0; k < sizeof(dti_elf_machines) / sizeof(dti_elf_machines[0]); k++)
			if (!strcmp(arch, dti_elf_machines[k].arch))
				spec.machine = dti_elf_machines[k].machine;
	if (!spec.machine || v->long_size != sizeof(uint64_t)) {
		kdump_clear_err(v->ctx);
		return dti_err("%s: excerpts are written as 64-bit ELF dumps, and %s is %s",
			       o->excerpt, v->path, arch ? "not a 64-bit architecture's dump" :
			       "of an unknown architecture");
	}
	spec.big_endian = kdump_get_number_attr(v->ctx, KDUMP_ATTR_BYTE_ORDER, &order) ==
			  KDUMP_OK && order == KDUMP_BIG_ENDIAN;
	if (kdump_vmcoreinfo_raw(v->ctx, &info) != KDUMP_OK)
		info = NULL;	/* the excerpt has none either */
	kdump_clear_err(v->ctx);
	spec.vmcoreinfo = info;
	nx = dti_dump_excerpt(d, only, o->excerpt, &spec, &pages);
	free(info);
	if (nx < 0)
		return dti_err("%s", dti_errmsg());
	fprintf(o->f, "%s: %d channel%s in %zu pages (%zu KiB) of %s\n",
		o->excerpt_shown ? o->excerpt_shown : o->excerpt,
		nx, nx == 1 ? "" : "s", pages, pages * v->page_size >> 10, v->path);
	return ret;
}

/* Whether the channels --channel names are all in @d; if not, say which there are */
static bool dti_dump_has(struct dti_dump *d, int n, const struct dti_read_opts *o)
{
	const char *name = NULL;
	unsigned int k;
	int i;

	for (k = 0; k < o->n_channels && !name; k++) {
		name = o->channels[k];
		for (i = 0; i < n && name; i++)
			if (!strcmp(dti_dump_channel(d, i)->name, name))
				name = NULL;
	}
	if (!name)
		return true;
	fflush(NULL);
	fprintf(stderr, "dti: no channel %s in the dump; it has:", name);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %s", dti_dump_channel(d, i)->name);
	fputc('\n', stderr);
	return false;
}

/* The dump's kernel's release (VMCOREINFO OSRELEASE), to free; NULL: none */
static char *dti_vmcore_release(struct dti_vmcore *v)
{
	char *release = NULL;

	if (kdump_vmcoreinfo_line(v->ctx, "OSRELEASE", &release) != KDUMP_OK)
		release = NULL;
	kdump_clear_err(v->ctx);
	return release;
}

/*
 * --lines: the dump's kernel's release (VMCOREINFO OSRELEASE) for the
 * default places unless --kernel-release gave one; the module tables are
 * taken channel by channel (dti_dump_print()).  DTI_EXIT_OK.
 */
static int dti_dump_lines(struct dti_vmcore *v, struct dti_read_opts *o)
{
	static char dump_release[128];
	char *release = o->release ? NULL : dti_vmcore_release(v);

	if (release) {
		if (dti_lines_set_kernel(o->lines_l, release) < 0) {
			dti_vwarn(v, "%s: VMCOREINFO's OSRELEASE: %s", v->path, dti_errmsg());
		} else {
			/* for the resolvers of other boots' tables too */
			snprintf(dump_release, sizeof(dump_release), "%s", release);
			o->release = dump_release;
		}
	}
	free(release);
	return DTI_EXIT_OK;
}

/* dti_dump_out() with the dump's kernel release, if VMCOREINFO has it */
static int dti_dump_out_release(struct dti_vmcore *v, struct dti_dump *d, int n,
				struct dti_read_opts *o)
{
	char *release = dti_vmcore_release(v);
	int ret = dti_dump_out(d, n, o, release);

	free(release);
	return ret;
}

/*
 * The physical address of the dump index VMCOREINFO names (the line a
 * kernel with DTI built in writes), or 0: none, or not an address (said).
 */
static uint64_t dti_vmcore_index(struct dti_vmcore *v)
{
	const char *line = dti_vmcoreinfo(v, DTI_VMCOREINFO_KEY);
	unsigned long long addr;
	char *end;

	if (!line)
		return 0;
	errno = 0;
	addr = strtoull(line, &end, 16);
	if (errno || end == line || *end || !addr) {
		dti_vwarn(v, "%s: VMCOREINFO's %s=%s is no physical address: scanning the dump instead",
			  v->path, DTI_VMCOREINFO_KEY, line);
		return 0;
	}
	return addr;
}

/*
 * Find the descriptors of @v into a new dump *@dp and load them: through
 * the dump index VMCOREINFO names, or, without one or if it fails (said),
 * by scanning.  Returns dti_dump_load()'s count, or -1 (*@dp NULL: said;
 * else dti_errmsg() says why).
 */
static int dti_vmcore_find(struct dti_vmcore *v, const struct dti_dump_mem *mem,
			   const struct dti_read_opts *o, struct dti_dump **dp)
{
	uint64_t addr = dti_vmcore_index(v);
	struct dti_dump *d = dti_dump_new(mem);
	const struct dti_dump_summary *sum;
	int n;

	*dp = d;
	if (!d) {
		dti_err("%s", dti_errmsg());
		return -1;
	}
	/* for reads from the file and, in an excerpt, virtual addresses */
	if (!v->segs)
		dti_elf_segments(v);
	if (addr && dti_dump_locate(d, addr) >= 0) {
		n = dti_dump_load(d);
		sum = dti_dump_summary(d);
		if (n < 0 || !sum->stray) {
			if (n >= 0 && o->verbose)
				dti_info("%s: channels located by VMCOREINFO (%s=0x%llx): %lu descriptors in its dump index",
					 v->path, DTI_VMCOREINFO_KEY, (unsigned long long)addr,
					 sum->indexed);
			return n;
		}
		dti_vwarn(v, "%s: the dump index at physical 0x%llx (VMCOREINFO's %s) lists %lu entries that are no descriptor: scanning the dump instead",
			  v->path, (unsigned long long)addr, DTI_VMCOREINFO_KEY, sum->stray);
		dti_dump_free(d);
		d = *dp = dti_dump_new(mem);
		if (!d) {
			dti_err("%s", dti_errmsg());
			return -1;
		}
	} else if (addr) {
		dti_vwarn(v, "%s: %s: scanning the dump instead", v->path, dti_errmsg());
	}
	if (o->verbose)
		dti_info("%s: channels located by scanning %s", v->path,
			 addr ? "(VMCOREINFO's dump index could not be used)" :
			 "(VMCOREINFO names no dump index: dti.ko, not DTI built in, or no VMCOREINFO)");
	if (dti_vmcore_scan(v, d) != DTI_EXIT_OK) {
		dti_dump_free(d);
		*dp = NULL;
		return -1;
	}
	return dti_dump_load(d);
}

/* Find the channels of @v; print, list or save them as @o says. */
static int dti_dump_run(struct dti_vmcore *v, struct dti_read_opts *o)
{
	const struct dti_dump_mem mem = {
		.size = sizeof(mem), .read_phys = dti_read_phys, .read_virt = dti_read_virt,
		.errmsg = dti_read_errmsg, .arg = v, .phys_end = v->phys_end,
		.long_size = v->long_size,
	};
	const struct dti_dump_summary *sum;
	struct dti_dump *d;
	int n, ret = DTI_EXIT_OK;

	n = dti_vmcore_find(v, &mem, o, &d);
	if (!d)
		return DTI_EXIT_FAIL;
	sum = dti_dump_summary(d);
	if (n < 0) {
		ret = dti_err("%s", dti_errmsg());
	} else if (!n) {
		o->no_channels = true;
		dti_dump_region_damage(sum, o);
		ret = sum->index_addr ?
		      dti_err("%s: no DTI channels in this %s dump (its dump index, VMCOREINFO's %s=0x%llx, lists %lu descriptors, none of a channel or a persistent region with records)",
			      v->path, v->format, DTI_VMCOREINFO_KEY,
			      (unsigned long long)sum->index_addr, sum->indexed) :
		      dti_err("%s: no DTI channels in this %s dump (%llu MiB of memory scanned, %lu \"__DTI_\" markers, none before a descriptor or a persistent region with records)",
			      v->path, v->format, (unsigned long long)(sum->scanned >> 20),
			      sum->markers);
	} else if (o->channel && !dti_dump_has(d, n, o)) {
		ret = DTI_EXIT_FAIL;
	} else if (o->format == DTI_FMT_RAW && o->n_channels != 1 && !o->list &&
		   !o->out_dir && !o->excerpt && n > 1) {
		ret = dti_err("%s: %d channels: --format raw needs --channel NAME, one channel (or --out DIR)",
			      v->path, o->n_channels ? (int)o->n_channels : n);
	} else if (o->lines_l && !o->list && !o->out_dir && !o->excerpt &&
		   (ret = dti_dump_lines(v, o)) != DTI_EXIT_OK) {
		/* out of memory: said */
	} else {
		if (!o->list && !o->channel)
			ret = dti_dump_region_damage(sum, o);
		ret = dti_exit_worst(ret, o->list ? dti_dump_list(d, o) :
		      o->out_dir ? dti_dump_out_release(v, d, n, o) :
		      o->excerpt ? dti_dump_excerpt_write(v, d, n, o) :
		      dti_dump_print(d, n, o));
		/* what the dump lacks is damage too */
		ret = dti_exit_worst(ret, v->unread ? DTI_EXIT_DAMAGE : DTI_EXIT_OK);
	}
	dti_dump_free(d);
	return ret;
}

int cmd_dump(int argc, char **argv)
{
	struct dti_read_opts o;
	struct dti_vmcore v;
	int ret = dti_read_parse("dump", argc, argv, 1, 1, &o);

	if (ret >= 0)
		return ret;
	if (dti_vmcore_open(&v, argv[optind], o.quiet) < 0)
		ret = DTI_EXIT_FAIL;
	else
		ret = dti_dump_run(&v, &o);
	dti_vmcore_close(&v);
	return dti_read_finish(&o, ret);
}


/* ---- dti save-kdump ---- */

/* kdump-tools' KDUMP_COREDIR when its defaults file leaves it alone */
#define DTI_KDUMP_COREDIR	"/var/crash"
/* What save-kdump writes beside a dump, and beside one with no DTI channel */
#define DTI_KDUMP_EXCERPT	"dti-excerpt.elf"
#define DTI_KDUMP_NONE		"dti-excerpt.none"

const char usage_save_kdump[] =
	"usage: dti save-kdump [--dir DIR]\n"
	"\nBeside each memory dump that kdump-tools saved (DIR/STAMP/dump.STAMP or\n"
	"DIR/STAMP/vmcore.STAMP) and that has none yet, write DTI's excerpt of it,\n"
	"DIR/STAMP/" DTI_KDUMP_EXCERPT ", as 'dti dump --excerpt' writes it: a small ELF dump\n"
	"'dti dump' reads, to keep or send where the dump is too large.  A dump\n"
	"with no DTI channel gets DIR/STAMP/" DTI_KDUMP_NONE " saying so, and is not\n"
	"scanned again.  Prints a line per dump.  The dti-save-kdump service runs\n"
	"it at boot, after kdump-tools (which has no hook after it saves a dump).\n"
	"\n"
	"  --dir DIR   where kdump-tools saves dumps (default: $KDUMP_COREDIR, as\n"
	"              /etc/default/kdump-tools sets it, else " DTI_KDUMP_COREDIR ")\n"
	"\nExit status: 0, 1 a dump could not be read or its excerpt written (the\n"
	"others are saved), 2 a dump's DTI memory is damaged in part, 129 usage.\n";

/* The dump kdump-tools saved in @dir (a STAMP directory), or NULL */
static char *dti_kdump_file(const char *dir)
{
	struct dirent *e;
	char *path = NULL;
	DIR *d = opendir(dir);

	if (!d)
		return NULL;
	while (!path && (e = readdir(d))) {
		if ((strncmp(e->d_name, "dump.", 5) && strncmp(e->d_name, "vmcore.", 7)) ||
		    strstr(e->d_name, "incomplete"))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			path = NULL;
	}
	closedir(d);
	return path;
}

/* @dir/@name into @path (PATH_MAX bytes); false if it is longer */
static bool dti_kdump_path(char *path, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);

	if (a + 1 + b >= PATH_MAX)
		return false;
	memcpy(path, dir, a);
	path[a] = '/';
	memcpy(path + a + 1, name, b + 1);
	return true;
}

/* @dir holds an excerpt, or a note that there is none to make */
static bool dti_kdump_done(const char *dir)
{
	char path[PATH_MAX];

	return (dti_kdump_path(path, dir, DTI_KDUMP_EXCERPT) && access(path, F_OK) == 0) ||
	       (dti_kdump_path(path, dir, DTI_KDUMP_NONE) && access(path, F_OK) == 0);
}

/* Write "@msg\n" into a new file @path.  0, or -1 (printed). */
static int dti_kdump_note(const char *path, const char *msg)
{
	FILE *f = fopen(path, "we");

	if (!f || fprintf(f, "%s\n", msg) < 0 || fclose(f) != 0)
		return dti_err("%s: %s", path, strerror(errno));
	return 0;
}

/*
 * The excerpt of @vmcore into @dir/dti-excerpt.elf, written as .part and
 * renamed once whole; @dir/dti-excerpt.none if the dump has no channel.
 */
static int dti_kdump_save(const char *dir, const char *vmcore)
{
	char part[PATH_MAX], final[PATH_MAX];
	char *argv[] = { "dump", "--excerpt", part, (char *)vmcore, NULL };
	struct dti_read_opts o;
	struct dti_vmcore v;
	int ret;

	if (!dti_kdump_path(part, dir, DTI_KDUMP_EXCERPT ".part") ||
	    !dti_kdump_path(final, dir, DTI_KDUMP_EXCERPT))
		return dti_err("%s: %s", dir, strerror(ENAMETOOLONG));
	optind = 0;	/* getopt anew for each dump */
	ret = dti_read_parse("dump", 4, argv, 1, 1, &o);
	if (ret >= 0)
		return ret;
	o.excerpt_shown = final;
	if (dti_vmcore_open(&v, vmcore, false) < 0)
		ret = DTI_EXIT_FAIL;
	else
		ret = dti_dump_run(&v, &o);
	dti_vmcore_close(&v);
	if (o.no_channels) {
		dti_kdump_path(final, dir, DTI_KDUMP_NONE);	/* shorter than part */
		if (dti_kdump_note(final, "no DTI channels in this dump") == 0) {
			printf("%s: no DTI channels in %s\n", final, vmcore);
			ret = DTI_EXIT_OK;
		}
	} else if (ret != DTI_EXIT_FAIL && rename(part, final) != 0) {
		ret = dti_err("%s: cannot name it %s: %s", part, final, strerror(errno));
	}
	if (ret == DTI_EXIT_FAIL)
		unlink(part);
	return dti_read_finish(&o, ret);
}

int cmd_save_kdump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument,       NULL, 'h' },
		{ "dir",  required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = getenv("KDUMP_COREDIR");
	struct dirent **e;
	char stamp[PATH_MAX], *vmcore;
	int c, i, n, ret = DTI_EXIT_OK, saved = 0;

	while ((c = dti_getopt("save-kdump", argc, argv, "h", opts, &ret)) != -1) {
		if (c == DTI_OPT_EXIT)
			return ret;
		dir = optarg;
	}
	if (argc != optind)
		return dti_usage("save-kdump", true, "no arguments but the options");
	if (!dir || !*dir)
		dir = DTI_KDUMP_COREDIR;
	n = scandir(dir, &e, NULL, alphasort);
	if (n < 0 && errno == ENOENT) {
		printf("%s: no such directory: no dumps to save an excerpt of\n", dir);
		return DTI_EXIT_OK;
	}
	if (n < 0)
		return dti_err("%s: %s", dir, strerror(errno));
	for (i = 0; i < n; i++) {
		vmcore = e[i]->d_name[0] == '.' || !dti_kdump_path(stamp, dir, e[i]->d_name) ?
			 NULL : dti_kdump_file(stamp);
		if (vmcore && !dti_kdump_done(stamp)) {
			ret = dti_exit_worst(ret, dti_kdump_save(stamp, vmcore));
			saved++;
		}
		free(vmcore);
		free(e[i]);
	}
	free(e);
	if (!saved)
		printf("%s: no dump without its DTI excerpt\n", dir);
	return ret;
}
