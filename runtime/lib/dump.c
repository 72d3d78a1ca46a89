// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: channels in a memory dump, found by their dump descriptors
 * (<linux/dti_record.h>) with nothing but the dump's memory.
 *
 * dti_dump_scan() notes every "__DTI__" at an 8-byte boundary of the
 * physical memory it is given; nothing else is kept of it, so memory use
 * does not grow with the dump.  dti_dump_load() reads what each marker
 * begins through read_phys(): a marker with no valid magic behind it is
 * a stray copy of the string (page cache, module data) and only counted.
 * Behind a valid magic is a descriptor: channel descriptors and pending
 * stores' descriptors are checked (version, size, CRC, name, geometry),
 * grouped by name and paired.  Of several valid channel descriptors of
 * one name, the one whose rings hold the most sub-buffers of its
 * generation is used; a damaged one next to a valid one is an earlier
 * copy, noted; a name with damaged descriptors only is a channel with an
 * error.  For the channel used, the CPU table and each CPU's page list
 * are read and checked, and every slot's sub-buffer header: a slot
 * belongs to the live ring only if its header has the channel's name,
 * the descriptor's generation and the slot's number (seq modulo
 * n_subbufs).  Other slots (freed rings, an earlier boot, never written)
 * are read as unused, not as damage.
 *
 * A persistent region (dti.ko's persist=, reserved RAM kept across a
 * reset) starts with "__DTI_PERSIST__" on a page boundary: the scan
 * looks for "__DTI_", which both markers begin with.  A region whose
 * header checks out (magic, version, CRC, its own address, geometry)
 * has a table of slots, each with its CRC, each naming a channel and two
 * areas of contiguous per-CPU rings.  An area of the region's last boot
 * that a channel descriptor also describes (name and generation) is that
 * channel's; any other written area is a channel of its own,
 * "NAME@bootN", read like any other, and a descriptor an earlier boot
 * left in memory for it (a reset keeps RAM) is not used.  A slot that
 * fails its checks is counted and described, never read.
 *
 * dti_dump_open() copies each CPU's ring out of the dump, its stale
 * slots zeroed, and reads it with the raw-ring code of stream.c, so that
 * records print and damage is reported exactly as from a copy of the
 * ring in a file (dti_dump_save() writes those copies).  A pending
 * store's records are copied in time order into a stream of their own
 * (stream.c, reader.c: merged without CPU ownership or sequence checks).
 *
 * dti.ko's module table (struct dti_dump_modules, "__DTI__.modules":
 * where each module that can log was loaded, for source lines) is found
 * by its marker too, which names no channel: checked whole (magic,
 * version, size, CRC, each entry) and handed out by dti_dump_modules(),
 * the first that checks out; the others are noted for --list.
 *
 * A kernel with DTI built in names its dump index in VMCOREINFO (struct
 * dti_dump_index: the physical address of each descriptor);
 * dti_dump_locate() takes what it lists as the markers a scan would have
 * found, after checking the index whole (magic, version, size, CRC, no
 * overflow, every entry the start of a marker), so that dti_dump_load()
 * reads them as it reads those of a scan.  An index that fails is
 * refused whole, and the caller scans.
 *
 * Every number read from the dump is checked before it is used as a
 * size, an address or an index; every failure names the physical (or
 * virtual) address it was read from.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libdti-local.h"

#define DTI_MARKER_LEN		(sizeof(DTI_MARKER_PREFIX) - 1)
/* What the scan looks for: the start of both markers */
#define DTI_SCAN_PREFIX		"__DTI_"
#define DTI_SCAN_LEN		(sizeof(DTI_SCAN_PREFIX) - 1)
/* The start every descriptor shares: marker, magic, version, type, size */
#define DTI_DUMP_HEAD		(offsetof(struct dti_dump_desc, size) + sizeof(uint32_t))
/* Page sizes a dumped machine may have */
#define DTI_DUMP_PAGE_MIN	4096u
#define DTI_DUMP_PAGE_MAX	(1u << 20)
/*
 * A pending store's count of used bytes lies this close behind its
 * descriptor at most: dti.ko keeps both in one page.
 */
#define DTI_DUMP_USED_MAX	4096u
/* Largest pending store read: as large as a CPU's ring may be. */
#define DTI_DUMP_PENDING_MAX	DTI_RING_MAX
#define DTI_DUMP_FLAGS_KNOWN	(DTI_DUMP_F_BUFFERS | DTI_DUMP_F_NO_OVERWRITE | \
				 DTI_DUMP_F_HANDLE | DTI_DUMP_F_PERSIST)
/* Most slots a region's table is read with: dti.ko writes DTI_PERSIST_SLOTS */
#define DTI_REGION_SLOTS_MAX	1024u
/* Largest structure whose CRC is checked with its CRC field zeroed */
#define DTI_CRC_COPY_MAX	128u
#define DTI_WHY_MAX		256

_Static_assert(DTI_DUMP_HEAD == 52 && DTI_DUMP_CHANNEL_SIZE == 104 &&
	       DTI_DUMP_PENDING_SIZE == 80 && sizeof(struct dti_dump_cpu) == 16,
	       "the descriptor layout of <linux/dti_record.h>");
_Static_assert(sizeof(struct dti_dump_index) == 4096,
	       "the dump index layout of <linux/dti_record.h>");
_Static_assert(sizeof(struct dti_persist_header) == 72 &&
	       sizeof(struct dti_persist_area) == 32 &&
	       sizeof(struct dti_persist_slot) == 112 &&
	       sizeof(struct dti_persist_slot) <= DTI_CRC_COPY_MAX &&
	       DTI_DUMP_CHANNEL_SIZE <= DTI_CRC_COPY_MAX,
	       "the persistent region layout of <linux/dti_record.h>");

/* A descriptor behind a marker, in host order */
struct dti_found {
	uint64_t addr;
	unsigned int type;		/* DTI_DUMP_CHANNEL or DTI_DUMP_PENDING */
	bool swapped;
	bool unsealed;			/* a pending store's, its CRC not yet set */
	uint64_t live;			/* a channel's: sub-buffers of its generation */
	char why[DTI_WHY_MAX];		/* "" if valid, else what is wrong */
	char name[4 * DTI_NAME_MAX + 1];	/* the name, escaped if not valid */
	union {
		struct dti_dump_desc c;
		struct dti_dump_pending p;
	} d;
};

/* One CPU's ring: its page frames, host order; pfn NULL if not read */
struct dti_dump_ring {
	uint64_t *pfn;
	uint32_t n_pages;
};

struct dti_dump_chan {
	struct dti_dump_channel pub;
	char name[4 * DTI_NAME_MAX + 1];	/* escaped if not valid */
	char chan[DTI_NAME_MAX + 1];	/* the name sub-buffer headers carry */
	const struct dti_found *desc;	/* the channel descriptor used, or NULL */
	struct dti_found *own;		/* a region's area as a descriptor, or NULL */
	const struct dti_found *pend;	/* the pending store's, or NULL */
	struct dti_dump_ring *rings;	/* nr_cpu_ids of them, or NULL */
	uint64_t live_slots;		/* slots of this generation: the choice */
	uint8_t record_version;		/* of their sub-buffer headers; 0: none seen */
	uint64_t pend_used;		/* bytes of the pending store to read */
	char *error, *damage, *notes;	/* lines, malloc()ed */
};

/* A persistent region whose header checks out, in host order */
struct dti_region {
	uint64_t addr;
	bool swapped;
	struct dti_persist_header h;
	struct dti_persist_slot *slots;		/* h.n_slots, host order */
	unsigned char *slot_ok;			/* per slot: passed its checks */
	/* its module tables (struct dti_persist_modules): boot 0 if unusable */
	struct dti_region_mods {
		uint32_t boot;
		struct dti_module *mods;	/* used entries, host order */
		unsigned int n;
		char why[DTI_WHY_MAX];		/* why not usable, "" if never written */
	} tab[DTI_PERSIST_MODULE_TABLES];
};

/* A channel descriptor an earlier boot left, of rings a region keeps */
struct dti_earlier {
	uint64_t addr;			/* the descriptor's */
	const struct dti_region *g;
	unsigned int slot, area;
};

struct dti_dump {
	struct dti_dump_mem mem;
	uint64_t marker_word, marker_mask;	/* "__DTI_" as a word */
	uint64_t *marks;			/* where markers were found */
	size_t n_marks, cap_marks;
	struct dti_found *found;
	size_t n_found;
	struct dti_region *regions;
	size_t n_regions;
	struct dti_earlier *earlier;
	size_t n_earlier;
	struct dti_dump_chan *ch;
	unsigned int n_ch;
	char *region_lines, *region_damage;
	struct dti_dump_summary sum;
	bool loaded;
	char err[DTI_WHY_MAX];			/* dti_dump_readerr() */
	/* the module table (DTI_DUMP_MODULES): the first that checks out */
	struct dti_module *mods;		/* its used entries, host order */
	unsigned int n_mods;
	unsigned long n_tables;			/* tables found, valid or not */
	char *mods_lines;			/* where, what; damage; for --list */
	char mods_why[DTI_WHY_MAX + 64];	/* why none is used, if one was found */
};

/* ---- helpers ---- */

/*
 * CRC-32 (zlib's crc32(), the kernel's ~crc32_le(~0, ...)) of @len bytes,
 * a nibble at a time: descriptors and page lists are small.
 */
static uint32_t dti_crc32(const void *p, size_t len)
{
	static const uint32_t tab[16] = {
		0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
		0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
		0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
		0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
	};
	const unsigned char *q = p;
	uint32_t crc = ~0u;

	while (len--) {
		crc ^= *q++;
		crc = (crc >> 4) ^ tab[crc & 15];
		crc = (crc >> 4) ^ tab[crc & 15];
	}
	return ~crc;
}

static uint16_t dti_d16(uint16_t v, bool swapped)
{
	return swapped ? bswap_16(v) : v;
}

static uint32_t dti_d32(uint32_t v, bool swapped)
{
	return swapped ? bswap_32(v) : v;
}

static uint64_t dti_d64(uint64_t v, bool swapped)
{
	return swapped ? bswap_64(v) : v;
}

/* Append a line to *@str.  Out of memory, the line is lost: it is a message. */
static void __attribute__((format(printf, 2, 3)))
dti_addf(char **str, const char *fmt, ...)
{
	size_t old = *str ? strlen(*str) : 0;
	char *line, *ns;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	ns = realloc(*str, old + len + 2);
	if (ns) {
		memcpy(ns + old, line, len);
		memcpy(ns + old + len, "\n", 2);
		*str = ns;
	}
	free(line);
}

/* Why reading failed: the reader's message, or errno's. */
static const char *dti_dump_readerr(struct dti_dump *d, int err)
{
	const char *msg = d->mem.errmsg ? d->mem.errmsg(d->mem.arg) : NULL;

	if (err == ENODATA || err == EFAULT)
		snprintf(d->err, sizeof(d->err), "not in the dump%s%s%s",
			 msg ? " (" : "", msg ? msg : "", msg ? ")" : "");
	else
		snprintf(d->err, sizeof(d->err), "%s", msg ? msg : strerror(err));
	return d->err;
}

/* read_phys(); on failure NULL and *@why says why, else @buf. */
static void *dti_phys(struct dti_dump *d, uint64_t addr, void *buf, size_t len,
		      const char **why)
{
	errno = 0;
	if (addr + len < addr) {
		*why = "beyond the end of the address space";
		return NULL;
	}
	if (d->mem.read_phys(d->mem.arg, addr, buf, len) == 0)
		return buf;
	*why = dti_dump_readerr(d, errno ? errno : EIO);
	return NULL;
}

/* Whether @name (NUL-terminated) is a channel name dti.ko accepts. */
static bool dti_name_valid(const char *name)
{
	size_t n = strlen(name), i;

	if (!n || n > DTI_NAME_MAX || name[0] == '.')
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || strchr("_-.:", c)))
			return false;
	}
	return true;
}

/* @n bytes at @p as text for a message: printable ASCII, others \xNN. */
static void dti_escape(char *out, size_t size, const unsigned char *p, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && p[i] && o + 5 < size; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			out[o++] = p[i];
		else
			o += snprintf(out + o, size - o, "\\x%02x", p[i]);
	}
	out[o] = '\0';
}

/* ---- scanning ---- */

struct dti_dump *dti_dump_new(const struct dti_dump_mem *mem)
{
	struct dti_dump *d;
	char word[8] = DTI_SCAN_PREFIX;
	char mask[8] = { 0 };

	if (!mem || mem->size < offsetof(struct dti_dump_mem, long_size) + sizeof(mem->long_size))
		return dti_fail_null(EINVAL, "dti_dump_new: struct dti_dump_mem.size is %zu, "
				     "not sizeof(struct dti_dump_mem)", mem ? mem->size : 0);
	if (!mem->read_phys)
		return dti_fail_null(EINVAL, "dti_dump_new: no read_phys function");
	if (mem->long_size && mem->long_size != 4 && mem->long_size != 8)
		return dti_fail_null(EINVAL, "dti_dump_new: long_size %u is neither 4 nor 8",
				     mem->long_size);
	d = calloc(1, sizeof(*d));
	if (!d)
		return dti_fail_null(ENOMEM, "out of memory");
	/* a larger struct of a later libdti.h: what this one knows of it */
	memcpy(&d->mem, mem, mem->size < sizeof(*mem) ? mem->size : sizeof(*mem));
	d->mem.size = sizeof(d->mem);
	if (!d->mem.long_size)
		d->mem.long_size = 8;
	/* the first bytes of an aligned word, whatever the host's byte order */
	memset(mask, 0xff, DTI_SCAN_LEN);
	memcpy(&d->marker_word, word, sizeof(d->marker_word));
	memcpy(&d->marker_mask, mask, sizeof(d->marker_mask));
	return d;
}

static int dti_mark(struct dti_dump *d, uint64_t addr)
{
	uint64_t *m;
	size_t cap;

	if (d->n_marks == d->cap_marks) {
		cap = d->cap_marks ? 2 * d->cap_marks : 64;
		m = realloc(d->marks, cap * sizeof(*m));
		if (!m)
			return dti_fail(ENOMEM, "out of memory for the markers found");
		d->marks = m;
		d->cap_marks = cap;
	}
	d->marks[d->n_marks++] = addr;
	return 0;
}

/* Words of the marker test, 8 bytes each: those in one test of a block */
#define DTI_SCAN_BLOCK	16

#ifdef __x86_64__
#include <immintrin.h>

/*
 * How many of the @n words at @p come before the first block of
 * DTI_SCAN_BLOCK words that may hold a marker (the first bytes of a
 * word, @want under @mask), or the last whole block: with AVX2, a block
 * takes four compares of four words and one test of all of them, so
 * that scanning keeps up with memory.
 */
__attribute__((target("avx2")))
static size_t dti_scan_avx2(const unsigned char *p, size_t n, uint64_t want,
			    uint64_t mask)
{
	const __m256i w = _mm256_set1_epi64x(want), m = _mm256_set1_epi64x(mask);
	__m256i a, b, c, e;
	size_t i;

	for (i = 0; i + DTI_SCAN_BLOCK <= n; i += DTI_SCAN_BLOCK) {
		const __m256i *q = (const __m256i *)(p + 8 * i);

		a = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_loadu_si256(q), m), w);
		b = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_loadu_si256(q + 1), m), w);
		c = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_loadu_si256(q + 2), m), w);
		e = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_loadu_si256(q + 3), m), w);
		a = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, e));
		if (!_mm256_testz_si256(a, a))
			break;
	}
	return i;
}

static bool dti_has_avx2(void)
{
	static int avx2 = -1;	/* a race only writes the same value */

	if (avx2 < 0)
		avx2 = __builtin_cpu_supports("avx2");
	return avx2;
}
#else
static size_t dti_scan_avx2(const unsigned char *p, size_t n, uint64_t want,
			    uint64_t mask)
{
	(void)p, (void)n, (void)want, (void)mask;
	return 0;
}

static bool dti_has_avx2(void)
{
	return false;
}
#endif

/*
 * The words of @p (@n of them, aligned in the dump) that begin with the
 * marker, added at @addr on.  Blocks without one are skipped by
 * dti_scan_avx2() where it can; the others are tested word by word,
 * eight at a time, the tests independent of each other so that the
 * compiler can do them at once.
 */
static int dti_scan_words(struct dti_dump *d, uint64_t addr,
			  const unsigned char *p, size_t n)
{
	const uint64_t want = d->marker_word, mask = d->marker_mask;
	const bool avx2 = dti_has_avx2();
	uint64_t w[8], hit;
	size_t i = 0, k, lim;

	while (i < n) {
		if (avx2)
			i += dti_scan_avx2(p + 8 * i, n - i, want, mask);
		lim = avx2 && n - i >= DTI_SCAN_BLOCK ? i + DTI_SCAN_BLOCK : n;
		for (; i + 8 <= lim; i += 8) {
			memcpy(w, p + 8 * i, sizeof(w));
			hit = 0;
			for (k = 0; k < 8; k++)
				hit |= (uint64_t)((w[k] & mask) == want) << k;
			if (__builtin_expect(!hit, 1))
				continue;
			for (k = 0; k < 8; k++)
				if ((hit >> k & 1) && dti_mark(d, addr + 8 * (i + k)) < 0)
					return -1;
		}
		for (; i < lim; i++) {
			memcpy(w, p + 8 * i, sizeof(w[0]));
			if ((w[0] & mask) == want && dti_mark(d, addr + 8 * i) < 0)
				return -1;
		}
	}
	return 0;
}

int dti_dump_scan(struct dti_dump *d, uint64_t addr, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t head = -addr % DTI_RECORD_ALIGN, words, tail;

	d->sum.scanned += len;
	if (head >= len)
		head = len;
	words = (len - head) / DTI_RECORD_ALIGN;
	if (dti_scan_words(d, addr + head, p + head, words) < 0)
		return -1;
	/*
	 * A run that ends inside an aligned word: if its bytes begin a
	 * marker, the rest may be in the next run.  dti_dump_load() reads
	 * the whole of it.
	 */
	tail = len - head - words * DTI_RECORD_ALIGN;
	if (tail && !memcmp(p + len - tail, DTI_SCAN_PREFIX,
			    tail < DTI_SCAN_LEN ? tail : DTI_SCAN_LEN))
		return dti_mark(d, addr + len - tail);
	return 0;
}

const struct dti_dump_summary *dti_dump_summary(const struct dti_dump *d)
{
	return &d->sum;
}

/* ---- the dump index (a built-in DTI's, named in VMCOREINFO) ---- */

/*
 * Why the dump index @x (in the byte order @sw says) cannot be used by
 * its header, or NULL; *@n: its slots.
 */
static const char *dti_index_head_why(const struct dti_dump_index *x, bool sw,
				      uint32_t *n)
{
	if (dti_d16(x->version, sw) != DTI_INDEX_VERSION)
		return "an index version this libdti does not know";
	*n = dti_d32(x->n_slots, sw);
	if (dti_d32(x->size, sw) != sizeof(*x) || *n != DTI_INDEX_SLOTS)
		return "an index of another size";
	return NULL;
}

int dti_dump_locate(struct dti_dump *d, uint64_t addr)
{
	struct dti_dump_index *x = NULL;
	unsigned char mk[DTI_SCAN_LEN];
	const char *why = NULL;
	uint64_t *at = NULL, a;
	uint32_t i, n = 0, crc;
	size_t found = 0;
	bool sw = false;
	int ret = -1;

	if (d->loaded || d->n_marks || d->sum.scanned)
		return dti_fail(EINVAL, "dti_dump_locate: called after dti_dump_scan(), "
				"dti_dump_load() or itself");
	x = malloc(sizeof(*x));
	at = malloc(DTI_INDEX_SLOTS * sizeof(*at));
	if (!x || !at) {
		ret = dti_fail(ENOMEM, "out of memory for the dump index");
		goto out;
	}
	if (!dti_phys(d, addr, x, sizeof(*x), &why))
		goto bad;
	sw = x->magic == dti_d32(DTI_INDEX_MAGIC, true);
	if (!sw && x->magic != DTI_INDEX_MAGIC) {
		why = "no dump index there (its magic is not DTI's)";
		goto bad;
	}
	why = dti_index_head_why(x, sw, &n);
	if (why)
		goto bad;
	crc = dti_d32(x->crc, sw);
	x->crc = 0;
	if (dti_crc32(x, sizeof(*x)) != crc) {
		why = "its CRC does not match: damaged, or caught in a change";
		goto bad;
	}
	if (x->overflowed) {
		why = "it overflowed: some descriptors found no slot in it";
		goto bad;
	}
	for (i = 0; i < n; i++) {
		a = dti_d64(x->slot[i], sw);
		if (!a)
			continue;
		if (!dti_phys(d, a, mk, sizeof(mk), &why)) {
			ret = dti_fail(EINVAL, "the dump index at physical 0x%llx lists 0x%llx "
				       "(slot %u), which cannot be read: %s",
				       (unsigned long long)addr, (unsigned long long)a, i, why);
			goto out;
		}
		if (memcmp(mk, DTI_SCAN_PREFIX, DTI_SCAN_LEN)) {
			ret = dti_fail(EINVAL, "the dump index at physical 0x%llx lists 0x%llx "
				       "(slot %u), which holds no DTI descriptor",
				       (unsigned long long)addr, (unsigned long long)a, i);
			goto out;
		}
		at[found++] = a;
	}
	for (i = 0; i < found; i++) {
		if (dti_mark(d, at[i]) < 0) {
			d->n_marks = 0;
			goto out;
		}
	}
	d->sum.index_addr = addr;
	d->sum.indexed = found;
	ret = found;
	goto out;
bad:
	ret = dti_fail(EINVAL, "VMCOREINFO's %s=0x%llx: %s", DTI_VMCOREINFO_KEY,
		       (unsigned long long)addr, why);
out:
	free(x);
	free(at);
	return ret;
}

/* ---- descriptors ---- */

/*
 * Check the marker at the start of @raw: "__DTI__<name>", NUL, zero
 * fill.  Fills f->name (escaped if not valid).  NULL or what is wrong.
 */
static const char *dti_marker_why(struct dti_found *f, const unsigned char *raw)
{
	const unsigned char *name = raw + DTI_MARKER_LEN;
	const size_t room = DTI_DUMP_MARKER_SIZE - DTI_MARKER_LEN;
	const unsigned char *nul = memchr(name, '\0', room);
	size_t i;

	dti_escape(f->name, sizeof(f->name), name,
		   nul ? (size_t)(nul - name) : room);
	if (!nul || !dti_name_valid((const char *)name))
		return "bad channel name in the marker";
	for (i = nul - raw; i < DTI_DUMP_MARKER_SIZE; i++)
		if (raw[i])
			return "bytes after the channel name in the marker";
	return NULL;
}

/* Whether the CRC-32 of the @size bytes at @raw, with the 4 at @crc_at zero, is @want. */
static bool dti_crc_ok(const unsigned char *raw, size_t size, size_t crc_at,
		       uint32_t want)
{
	unsigned char copy[DTI_CRC_COPY_MAX];

	if (size > sizeof(copy))
		return false;
	memcpy(copy, raw, size);
	memset(copy + crc_at, 0, sizeof(uint32_t));
	return dti_crc32(copy, size) == want;
}

/* Why rings of @n_subbufs sub-buffers of @subbuf_size bytes are impossible, or NULL */
static const char *dti_geometry_why(uint32_t subbuf_size, uint32_t n_subbufs)
{
	if (subbuf_size < DTI_SUBBUF_MIN || subbuf_size > DTI_SUBBUF_MAX ||
	    subbuf_size % DTI_RECORD_ALIGN)
		return "impossible sub-buffer size";
	if (n_subbufs < DTI_NSUB_MIN || n_subbufs > DTI_NSUB_MAX ||
	    (uint64_t)subbuf_size * n_subbufs > DTI_RING_MAX)
		return "impossible number of sub-buffers";
	return NULL;
}

/* Whether @page_size is one a dumped machine may have */
static bool dti_page_size_ok(uint32_t page_size)
{
	return page_size >= DTI_DUMP_PAGE_MIN && page_size <= DTI_DUMP_PAGE_MAX &&
	       !(page_size & (page_size - 1));
}

/* Host-order fields of a channel descriptor; why it is not valid, or NULL. */
static const char *dti_channel_why(struct dti_found *f, const unsigned char *raw)
{
	struct dti_dump_desc *c = &f->d.c;
	bool sw = f->swapped;
	const char *why;

	memcpy(c, raw, sizeof(*c));
	c->size = dti_d32(c->size, sw);
	c->flags = dti_d32(c->flags, sw);
	c->generation = dti_d32(c->generation, sw);
	c->subbuf_size = dti_d32(c->subbuf_size, sw);
	c->n_subbufs = dti_d32(c->n_subbufs, sw);
	c->nr_cpus = dti_d32(c->nr_cpus, sw);
	c->page_size = dti_d32(c->page_size, sw);
	c->cpu_table_crc = dti_d32(c->cpu_table_crc, sw);
	c->level_addr = dti_d64(c->level_addr, sw);
	c->cpu_table = dti_d64(c->cpu_table, sw);
	c->crc = dti_d32(c->crc, sw);
	if (!dti_crc_ok(raw, sizeof(*c), offsetof(struct dti_dump_desc, crc), c->crc))
		return "CRC mismatch (damaged, or caught in the middle of an update)";
	if (!c->nr_cpus || c->nr_cpus > DTI_CPU_LIMIT)
		return "impossible number of CPUs";
	if (!(c->flags & DTI_DUMP_F_BUFFERS))
		return NULL;
	if (!c->generation)
		return "buffers of generation 0";
	why = dti_geometry_why(c->subbuf_size, c->n_subbufs);
	if (why)
		return why;
	if (!dti_page_size_ok(c->page_size))
		return "impossible page size";
	if (!c->cpu_table || c->cpu_table % DTI_RECORD_ALIGN)
		return "impossible CPU table address";
	return NULL;
}

/* Host-order fields of a pending store's descriptor; why not valid, or NULL. */
static const char *dti_pending_why(struct dti_dump *d, struct dti_found *f,
				   const unsigned char *raw)
{
	struct dti_dump_pending *p = &f->d.p;
	bool sw = f->swapped;

	memcpy(p, raw, sizeof(*p));
	p->size = dti_d32(p->size, sw);
	p->used_offset = dti_d32(p->used_offset, sw);
	p->buf = dti_d64(p->buf, sw);
	p->buf_size = dti_d64(p->buf_size, sw);
	p->crc = dti_d32(p->crc, sw);
	/* A handle defined statically is sealed when it is initialised. */
	f->unsealed = !p->crc;
	if (!f->unsealed &&
	    !dti_crc_ok(raw, sizeof(*p), offsetof(struct dti_dump_pending, crc), p->crc))
		return "CRC mismatch (damaged, or caught in the middle of an update)";
	if (p->used_offset < sizeof(*p) || p->used_offset > DTI_DUMP_USED_MAX ||
	    p->used_offset % d->mem.long_size)
		return "impossible place of the count of used bytes";
	if (p->buf % DTI_RECORD_ALIGN || !p->buf_size ||
	    p->buf_size > DTI_DUMP_PENDING_MAX)
		return "impossible buffer address or size";
	return NULL;
}

/*
 * What the marker at @addr begins: 0 if it is a descriptor (f filled,
 * f->why "" if valid), 1 if it is none (a stray marker).
 */
static int dti_classify(struct dti_dump *d, uint64_t addr, struct dti_found *f)
{
	unsigned char raw[DTI_DUMP_CHANNEL_SIZE];
	uint32_t magic, size;
	uint16_t version;
	const char *why;
	size_t want;

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	if (!dti_phys(d, addr, raw, DTI_DUMP_HEAD, &why))
		return 1;
	memcpy(&magic, raw + offsetof(struct dti_dump_desc, magic), sizeof(magic));
	if (magic != DTI_DUMP_MAGIC && magic != bswap_32(DTI_DUMP_MAGIC))
		return 1;
	f->swapped = magic != DTI_DUMP_MAGIC;
	memcpy(&version, raw + offsetof(struct dti_dump_desc, version), sizeof(version));
	memcpy(&f->type, raw + offsetof(struct dti_dump_desc, type), sizeof(uint16_t));
	memcpy(&size, raw + offsetof(struct dti_dump_desc, size), sizeof(size));
	f->type = dti_d16(f->type, f->swapped);
	version = dti_d16(version, f->swapped);
	size = dti_d32(size, f->swapped);
	why = dti_marker_why(f, raw);
	want = f->type == DTI_DUMP_CHANNEL ? DTI_DUMP_CHANNEL_SIZE :
	       f->type == DTI_DUMP_PENDING ? DTI_DUMP_PENDING_SIZE : 0;
	if (why)
		snprintf(f->why, sizeof(f->why), "%s", why);
	else if (version != DTI_DUMP_VERSION)
		snprintf(f->why, sizeof(f->why),
			 "descriptor version %u (this reader knows version %u)",
			 version, DTI_DUMP_VERSION);
	else if (!want)
		snprintf(f->why, sizeof(f->why), "unknown descriptor type %u", f->type);
	else if (size != want)
		snprintf(f->why, sizeof(f->why), "descriptor size %u, not %zu", size, want);
	else if (!dti_phys(d, addr, raw, want, &why))
		snprintf(f->why, sizeof(f->why),
			 "the descriptor's %zu bytes cannot be read: %s", want, why);
	else if ((why = f->type == DTI_DUMP_CHANNEL ? dti_channel_why(f, raw) :
						      dti_pending_why(d, f, raw)))
		snprintf(f->why, sizeof(f->why), "%s", why);
	/*
	 * The image of a handle's static descriptor, relocations not
	 * applied: a module file in the page cache, not a store in use.
	 */
	if (!f->why[0] && f->type == DTI_DUMP_PENDING && f->unsealed && !f->d.p.buf)
		return 1;
	return 0;
}

/* ---- channels ---- */

static const char *dti_type_name(unsigned int type)
{
	return type == DTI_DUMP_CHANNEL ? "channel descriptor" :
	       type == DTI_DUMP_PENDING ? "pending store descriptor" : "descriptor";
}

/*
 * @len bytes at offset @off of @ring (page frames of @page_size bytes)
 * into @buf.  Pages the dump does not hold read as zeros, their bits set
 * in bitmap @missing (by page of the ring) if not NULL.
 */
static void dti_ring_read(struct dti_dump *d, const struct dti_dump_ring *ring,
			  uint32_t page_size, uint64_t off, void *buf, size_t len,
			  unsigned char *missing)
{
	unsigned char *out = buf;
	uint64_t page, in;
	size_t n;

	while (len) {
		page = off / page_size;
		in = off % page_size;
		n = page_size - in < len ? page_size - in : len;
		if (page >= ring->n_pages ||
		    d->mem.read_phys(d->mem.arg, ring->pfn[page] * page_size + in,
				     out, n) != 0) {
			memset(out, 0, n);
			if (missing && page < ring->n_pages)
				missing[page / 8] |= 1 << page % 8;
		}
		out += n;
		off += n;
		len -= n;
	}
}

/*
 * Whether @p, the first DTI_SUB_SIZE bytes of slot @k of @c's ring, is a
 * sub-buffer header of the channel's current buffers: of its name, its
 * generation, its byte order, and the slot's number.  @sub is filled.
 */
static bool dti_slot_live(const struct dti_dump_chan *c, const unsigned char *p,
			  uint64_t k, struct dti_sub *sub)
{
	const struct dti_dump_desc *desc = &c->desc->d.c;
	struct dti_hdr h;

	if (dti_decode_hdr(p, &h) != DTI_HDR_OK || !(h.flags & DTI_REC_SUBBUF) ||
	    h.len != dti_sub_info_len(h.version) || h.swapped != c->desc->swapped)
		return false;
	dti_decode_sub(p + DTI_HDR_SIZE, &h, sub);
	return sub->generation == desc->generation &&
	       h.seq % desc->n_subbufs == k && sub->name_ok &&
	       !strcmp(sub->name, c->chan);
}

/*
 * Count the slots of ring @r of @c that hold sub-buffers of its buffers,
 * the records they hold, and the ring's pages the dump lacks.
 */
static void dti_ring_scan(struct dti_dump *d, struct dti_dump_chan *c,
			  const struct dti_dump_ring *r)
{
	const struct dti_dump_desc *desc = &c->desc->d.c;
	const uint64_t ss = desc->subbuf_size, ps = desc->page_size;
	unsigned char hdr[DTI_SUB_SIZE];
	struct dti_sub sub;
	uint64_t k;
	uint32_t i;

	c->pub.nr_bufs++;
	for (k = 0; k < desc->n_subbufs; k++) {
		dti_ring_read(d, r, ps, k * ss, hdr, sizeof(hdr), NULL);
		if (!dti_slot_live(c, hdr, k, &sub)) {
			c->pub.stale_slots++;
			continue;
		}
		c->live_slots++;
		if (sub.version > c->record_version)
			c->record_version = sub.version;
		/* more than it can hold is damage the reader reports */
		if ((uint64_t)sub.records * (sub.version == DTI_RECORD_VERSION_1 ?
					     DTI_HDR_SIZE : DTI_CREC_SIZE_MIN) <=
		    ss - dti_sub_size(sub.version))
			c->pub.records += sub.records;
	}
	for (i = 0; i < r->n_pages; i++)
		if (d->mem.read_phys(d->mem.arg, r->pfn[i] * ps, hdr, 1) != 0)
			c->pub.missing_pages++;
}

/*
 * Read CPU @cpu's entry of the CPU table, its page list, and the
 * headers of its slots.  A page list that cannot be used is damage of
 * that CPU only; an entry that contradicts the descriptor (the table's
 * CRC passed) is the channel's error.  0, or -1 (error set, ENOMEM).
 */
static int dti_chan_cpu(struct dti_dump *d, struct dti_dump_chan *c,
			unsigned int cpu, const struct dti_dump_cpu *e)
{
	const struct dti_dump_desc *desc = &c->desc->d.c;
	const bool sw = c->desc->swapped;
	const uint64_t ss = desc->subbuf_size, ps = desc->page_size;
	const uint64_t ring = ss * desc->n_subbufs;
	const uint32_t want = (ring + ps - 1) / ps;
	uint64_t pfns = dti_d64(e->pfns, sw), max_pfn;
	uint32_t n = dti_d32(e->n_pages, sw), i;
	struct dti_dump_ring *r = &c->rings[cpu];
	const char *why;

	if (!pfns)
		return 0;
	if (n != want || pfns % DTI_RECORD_ALIGN) {
		dti_addf(&c->error, "CPU table at physical 0x%llx: cpu%u's page list at 0x%llx has %u pages, but a ring of %llu bytes takes %u",
			 (unsigned long long)desc->cpu_table, cpu,
			 (unsigned long long)pfns, n, (unsigned long long)ring, want);
		return -1;
	}
	r->pfn = malloc(n * sizeof(*r->pfn));
	if (!r->pfn)
		return dti_fail(ENOMEM, "out of memory for cpu%u's page list", cpu);
	r->n_pages = n;
	if (!dti_phys(d, pfns, r->pfn, n * sizeof(*r->pfn), &why)) {
		dti_addf(&c->damage, "cpu%u: its page list at physical 0x%llx cannot be read: %s; its ring is not read",
			 cpu, (unsigned long long)pfns, why);
		goto unusable;
	}
	if (dti_crc32(r->pfn, n * sizeof(*r->pfn)) != dti_d32(e->pfns_crc, sw)) {
		dti_addf(&c->damage, "cpu%u: its page list at physical 0x%llx fails its CRC; its ring is not read",
			 cpu, (unsigned long long)pfns);
		goto unusable;
	}
	max_pfn = d->mem.phys_end ? d->mem.phys_end / ps : UINT64_MAX / ps;
	for (i = 0; i < n; i++) {
		r->pfn[i] = dti_d64(r->pfn[i], sw);
		if (r->pfn[i] >= max_pfn) {
			dti_addf(&c->damage, "cpu%u: page %u of its ring (page list at physical 0x%llx) has frame 0x%llx, beyond the end of memory; its ring is not read",
				 cpu, i, (unsigned long long)pfns,
				 (unsigned long long)r->pfn[i]);
			goto unusable;
		}
	}
	dti_ring_scan(d, c, r);
	return 0;
unusable:
	free(r->pfn);
	r->pfn = NULL;
	return 0;
}

/* The level of @c's channel, a native int at level_addr. */
static void dti_chan_level(struct dti_dump *d, struct dti_dump_chan *c)
{
	const struct dti_dump_desc *desc = &c->desc->d.c;
	const char *why = "out of range";
	int32_t level;

	c->pub.level = DTI_DUMP_NO_LEVEL;
	if (!desc->level_addr)
		return;
	if (dti_phys(d, desc->level_addr, &level, sizeof(level), &why)) {
		level = (int32_t)dti_d32(level, c->desc->swapped);
		if (level >= DTI_LEVEL_MIN && level <= DTI_LEVEL_MAX) {
			c->pub.level = level;
			return;
		}
	}
	dti_addf(&c->notes, "level at physical 0x%llx: %s",
		 (unsigned long long)desc->level_addr, why);
}

/* Make @f (a channel descriptor, read or made of a region's area) @c's. */
static void dti_chan_use(struct dti_dump_chan *c, const struct dti_found *f)
{
	const struct dti_dump_desc *desc = &f->d.c;

	c->desc = f;
	c->pub.flags = desc->flags;
	c->pub.generation = desc->generation;
	c->pub.subbuf_size = desc->subbuf_size;
	c->pub.n_subbufs = desc->n_subbufs;
	c->pub.nr_cpu_ids = desc->nr_cpus;
	c->pub.page_size = desc->page_size;
	c->pub.swapped = f->swapped;
}

/*
 * Describe @c's channel by descriptor @f: its level, CPU table, rings.
 * 0, or -1 (ENOMEM).  A problem of the dump sets c->error or c->damage.
 */
static int dti_chan_desc(struct dti_dump *d, struct dti_dump_chan *c,
			 const struct dti_found *f)
{
	const struct dti_dump_desc *desc = &f->d.c;
	struct dti_dump_cpu *table;
	size_t size = (size_t)desc->nr_cpus * sizeof(*table);
	const char *why;
	unsigned int cpu;
	int ret = 0;

	dti_chan_use(c, f);
	c->pub.desc_addr = f->addr;
	dti_chan_level(d, c);
	if (desc->flags & ~DTI_DUMP_FLAGS_KNOWN)
		dti_addf(&c->notes, "%s at physical 0x%llx: unknown flags %#x",
			 dti_type_name(f->type), (unsigned long long)f->addr,
			 desc->flags & ~DTI_DUMP_FLAGS_KNOWN);
	if (!(desc->flags & DTI_DUMP_F_BUFFERS)) {
		c->pub.subbuf_size = c->pub.n_subbufs = 0;
		return 0;
	}
	table = malloc(size);
	c->rings = calloc(desc->nr_cpus, sizeof(*c->rings));
	if (!table || !c->rings) {
		free(table);
		return dti_fail(ENOMEM, "out of memory for a CPU table");
	}
	if (!dti_phys(d, desc->cpu_table, table, size, &why)) {
		dti_addf(&c->error, "its CPU table at physical 0x%llx (descriptor at 0x%llx) cannot be read: %s",
			 (unsigned long long)desc->cpu_table,
			 (unsigned long long)f->addr, why);
	} else if (dti_crc32(table, size) != desc->cpu_table_crc) {
		dti_addf(&c->error, "its CPU table at physical 0x%llx (descriptor at 0x%llx) fails its CRC",
			 (unsigned long long)desc->cpu_table,
			 (unsigned long long)f->addr);
	} else {
		for (cpu = 0; cpu < desc->nr_cpus && !c->error; cpu++) {
			ret = dti_chan_cpu(d, c, cpu, &table[cpu]);
			if (ret < 0 && !c->error)
				break;		/* ENOMEM */
			ret = 0;
		}
	}
	free(table);
	return ret;
}

static void dti_chan_free(struct dti_dump_chan *c)
{
	unsigned int cpu;

	for (cpu = 0; c->rings && cpu < c->pub.nr_cpu_ids; cpu++)
		free(c->rings[cpu].pfn);
	free(c->rings);
	free(c->own);
	free(c->error);
	free(c->damage);
	free(c->notes);
	memset(c, 0, sizeof(*c));
}

/* ---- pending stores ---- */

/* A pending record in a store: where, and its time */
struct dti_pend_rec {
	uint64_t ts, pos;
	uint32_t size;
};

static int dti_pend_cmp(const void *a, const void *b)
{
	const struct dti_pend_rec *x = a, *y = b;

	/* records of one time keep the order they were logged in */
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * The records of @c's pending store, read through read_virt(), in time
 * order: a malloc()ed copy in *@out (*@len bytes) and their number in
 * *@count.  Their framing is checked here (the reader checks the rest):
 * damage ends the store, and is told into *@damage and as a notice of
 * @r, either NULL if not wanted.  Returns 0 (*@out NULL if the store
 * cannot be read), or -1 (ENOMEM).
 */
static int dti_pend_copy(struct dti_dump *d, struct dti_dump_chan *c,
			 char **damage, struct dti_reader *r, void **out,
			 size_t *len, uint64_t *count)
{
	const struct dti_dump_pending *p = &c->pend->d.p;
	uint64_t used = c->pend_used, pos = 0, size;
	struct dti_pend_rec *recs = NULL;
	unsigned char *buf, *sorted = NULL;
	size_t n = 0, i, at = 0;
	const char *what = NULL;
	char source[sizeof(c->name) + sizeof(DTI_PENDING_FILE) + 1];
	struct dti_hdr h;
	enum dti_hdr_status st;

	*out = NULL;
	*len = 0;
	*count = 0;
	if (!used)
		return 0;
	buf = malloc(used);
	if (!buf)
		return dti_fail(ENOMEM, "out of memory for a pending store");
	snprintf(source, sizeof(source), "%s/%s", c->name, DTI_PENDING_FILE);
	errno = 0;
	if (d->mem.read_virt(d->mem.arg, p->buf, buf, used) != 0) {
		what = dti_dump_readerr(d, errno ? errno : EIO);
		if (damage)
			dti_addf(damage, "pending store (descriptor at physical 0x%llx): its %llu bytes at virtual 0x%llx cannot be read: %s",
				 (unsigned long long)c->pend->addr,
				 (unsigned long long)used, (unsigned long long)p->buf,
				 what);
		free(buf);
		if (r && dti_note_add(r, DTI_NOTICE_DAMAGE, 0, source, 0, used,
				      "%s: the pending store's %llu bytes at virtual 0x%llx cannot be read: %s",
				      source, (unsigned long long)used,
				      (unsigned long long)p->buf, what) < 0)
			return -1;
		return 0;
	}
	recs = malloc((used / DTI_HDR_SIZE + 1) * sizeof(*recs));
	if (!recs)
		goto nomem;
	while (pos < used) {
		if (used - pos < DTI_HDR_SIZE) {
			what = "truncated record header";
			break;
		}
		st = dti_decode_hdr(buf + pos, &h);
		if (st != DTI_HDR_OK) {
			what = dti_hdr_status_str(st);
			break;
		}
		size = dti_rec_size(h.len);
		if (size > used - pos) {
			what = "record runs past the bytes in use";
			break;
		}
		recs[n++] = (struct dti_pend_rec){ .ts = h.ts_ns, .pos = pos, .size = size };
		pos += size;
	}
	if (what && damage)
		dti_addf(damage, "pending store at virtual 0x%llx (descriptor at physical 0x%llx): %s at offset %llu; the rest, %llu bytes, not read",
			 (unsigned long long)p->buf, (unsigned long long)c->pend->addr,
			 what, (unsigned long long)pos, (unsigned long long)(used - pos));
	if (what && r &&
	    dti_note_add(r, DTI_NOTICE_DAMAGE, 0, source, pos, used - pos,
			 "%s: corrupt data at offset %llu of the pending store at virtual 0x%llx: %s; the rest, %llu bytes, not read",
			 source, (unsigned long long)pos, (unsigned long long)p->buf,
			 what, (unsigned long long)(used - pos)) < 0)
		goto fail;
	qsort(recs, n, sizeof(*recs), dti_pend_cmp);
	sorted = malloc(pos ? pos : 1);
	if (!sorted)
		goto nomem;
	for (i = 0; i < n; i++) {
		memcpy(sorted + at, buf + recs[i].pos, recs[i].size);
		at += recs[i].size;
	}
	free(recs);
	free(buf);
	*out = sorted;
	*len = at;
	*count = n;
	return 0;
nomem:
	dti_fail(ENOMEM, "out of memory for a pending store");
fail:
	free(recs);
	free(buf);
	return -1;
}

/* Describe @c's pending store by descriptor @f.  0, or -1 (ENOMEM). */
static int dti_chan_pending(struct dti_dump *d, struct dti_dump_chan *c,
			    const struct dti_found *f)
{
	const struct dti_dump_pending *p = &f->d.p;
	unsigned char raw[8];
	uint64_t used;
	const char *why;
	size_t len;
	void *recs;

	c->pend = f;
	c->pub.pending_addr = f->addr;
	if (!c->desc)
		c->pub.swapped = f->swapped;
	if (!dti_phys(d, f->addr + p->used_offset, raw, d->mem.long_size, &why)) {
		dti_addf(&c->damage, "pending store (descriptor at physical 0x%llx): its count of used bytes at 0x%llx cannot be read: %s",
			 (unsigned long long)f->addr,
			 (unsigned long long)(f->addr + p->used_offset), why);
		return 0;
	}
	if (d->mem.long_size == 4) {
		uint32_t u;

		memcpy(&u, raw, sizeof(u));
		used = dti_d32(u, f->swapped);
	} else {
		memcpy(&used, raw, sizeof(used));
		used = dti_d64(used, f->swapped);
	}
	if (used > p->buf_size) {
		dti_addf(&c->damage, "pending store (descriptor at physical 0x%llx): %llu bytes used of %llu; not read",
			 (unsigned long long)f->addr, (unsigned long long)used,
			 (unsigned long long)p->buf_size);
		return 0;
	}
	if (used && !d->mem.read_virt) {
		dti_addf(&c->damage, "pending store (descriptor at physical 0x%llx): %llu bytes at virtual 0x%llx not read: no translation of virtual addresses",
			 (unsigned long long)f->addr, (unsigned long long)used,
			 (unsigned long long)p->buf);
		return 0;
	}
	c->pend_used = used;
	if (dti_pend_copy(d, c, &c->damage, NULL, &recs, &len,
			  &c->pub.pending_records) < 0)
		return -1;
	if (!recs && used)
		c->pend_used = 0;	/* unreadable: c->damage says why */
	free(recs);
	return 0;
}

/* ---- pairing ---- */

static int dti_found_cmp(const void *a, const void *b)
{
	const struct dti_found *x = a, *y = b;
	int ret = strcmp(x->name, y->name);

	if (ret)
		return ret;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int dti_u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Note the descriptors of @c's name not used, [@from, @to), but @used. */
static void dti_note_unused(struct dti_dump_chan *c, const struct dti_found *from,
			    const struct dti_found *to, const struct dti_found *used)
{
	const struct dti_found *f;

	for (f = from; f < to; f++) {
		if (f == used)
			continue;
		if (f->why[0])
			dti_addf(&c->notes, "%s at physical 0x%llx not used: %s",
				 dti_type_name(f->type), (unsigned long long)f->addr,
				 f->why);
		else if (f->type == DTI_DUMP_CHANNEL)
			dti_addf(&c->notes, "channel descriptor at physical 0x%llx not used: valid, but its rings hold %llu sub-buffers of its generation, those of the one used %llu (an earlier boot's?)",
				 (unsigned long long)f->addr, (unsigned long long)f->live,
				 (unsigned long long)used->live);
		else
			dti_addf(&c->notes, "pending store descriptor at physical 0x%llx not used: valid, but so is the one used%s",
				 (unsigned long long)f->addr,
				 f->unsealed ? ", which is sealed" : "");
	}
}

/*
 * The channel descriptor of @c among @n of one name at @f: of the valid
 * ones, that whose rings hold the most sub-buffers of its generation
 * (the others are of an earlier boot, their pages reused), the first of
 * equals.  With none valid, the channel's error is the first one's.
 * 0, or -1 (ENOMEM).
 */
static int dti_choose_desc(struct dti_dump *d, struct dti_dump_chan *c,
			   struct dti_found *f, size_t n)
{
	struct dti_dump_chan best = { 0 }, try;
	const struct dti_found *used = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (f[i].why[0])
			continue;
		memset(&try, 0, sizeof(try));
		memcpy(try.name, c->name, sizeof(try.name));
		memcpy(try.chan, c->chan, sizeof(try.chan));
		if (dti_chan_desc(d, &try, &f[i]) < 0) {
			dti_chan_free(&try);
			dti_chan_free(&best);
			return -1;
		}
		f[i].live = try.error ? 0 : try.live_slots;
		if (!used || (!try.error && (best.error || try.live_slots > best.live_slots))) {
			dti_chan_free(&best);
			best = try;
			used = &f[i];
		} else {
			dti_chan_free(&try);
		}
	}
	if (!used) {
		dti_addf(&c->error, "%s at physical 0x%llx: %s", dti_type_name(f->type),
			 (unsigned long long)f->addr, f->why);
		dti_note_unused(c, f + 1, f + n, NULL);
		return 0;
	}
	*c = best;		/* @c held only its names */
	dti_note_unused(c, f, f + n, used);
	return 0;
}

/*
 * The pending store of @c among @n descriptors at @f: the first valid
 * one sealed, else the first valid one (an early handle's, not yet
 * initialised).  0, or -1 (ENOMEM).
 */
static int dti_choose_pending(struct dti_dump *d, struct dti_dump_chan *c,
			      const struct dti_found *f, size_t n)
{
	const struct dti_found *used = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if (!f[i].why[0] && (!used || (used->unsealed && !f[i].unsealed)))
			used = &f[i];
	if (!used) {
		dti_addf(c->desc ? &c->damage : &c->error, "%s at physical 0x%llx: %s",
			 dti_type_name(f->type), (unsigned long long)f->addr, f->why);
		dti_note_unused(c, f + 1, f + n, NULL);
		return 0;
	}
	dti_note_unused(c, f, f + n, used);
	return dti_chan_pending(d, c, used);
}

/* Sort and merge the markers found: a run given twice is found twice. */
static void dti_marks_unique(struct dti_dump *d)
{
	size_t i, n = 0;

	if (d->n_marks)		/* qsort() of NULL is undefined */
		qsort(d->marks, d->n_marks, sizeof(*d->marks), dti_u64_cmp);
	for (i = 0; i < d->n_marks; i++)
		if (!n || d->marks[n - 1] != d->marks[i])
			d->marks[n++] = d->marks[i];
	d->n_marks = n;
}

/* The channel of the descriptors [@f, @end) of one name. */
static int dti_load_channel(struct dti_dump *d, struct dti_dump_chan *c,
			    struct dti_found *f, struct dti_found *end)
{
	struct dti_found *pend = f;

	memcpy(c->name, f->name, sizeof(c->name));
	snprintf(c->chan, sizeof(c->chan), "%.*s", DTI_NAME_MAX, f->name);
	while (pend < end && pend->type == DTI_DUMP_CHANNEL)
		pend++;
	if (pend > f && dti_choose_desc(d, c, f, pend - f) < 0)
		return -1;
	if (c->desc && c->desc->d.c.flags & DTI_DUMP_F_PERSIST && c->rings &&
	    c->pub.nr_bufs && c->pub.missing_pages && !c->pub.records)
		dti_addf(&c->notes, "a persistent channel whose rings the dump lacks: reserved RAM (memmap=) is left out of kdump's dumps; the next boot's dti.ko shows its records under .previous/%s",
			 c->name);
	if (end > pend && dti_choose_pending(d, c, pend, end - pend) < 0)
		return -1;
	if (!c->desc) {
		c->pub.level = DTI_DUMP_NO_LEVEL;
		if (c->pend && !c->error)
			dti_addf(&c->notes, "no channel descriptor: an early handle not yet initialised (or a descriptor the dump lacks); pending records only");
	}
	return 0;
}

/* ---- persistent regions ---- */

/* Round @v up to a multiple of @align, a power of two. */
static uint64_t dti_align_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/* Where the areas of region @g start: the first page after its slot table. */
/* Offset in @g of its module tables: after the header and the slot table */
static uint64_t dti_region_tables(const struct dti_region *g)
{
	return g->h.header_size + (uint64_t)g->h.n_slots * g->h.slot_size;
}

static uint64_t dti_region_areas(const struct dti_region *g)
{
	return dti_align_up(dti_region_tables(g) + DTI_PERSIST_MODULE_TABLES *
			    (uint64_t)sizeof(struct dti_persist_modules), g->h.page_size);
}

/* Physical address of slot @i of @g. */
static uint64_t dti_region_slot_addr(const struct dti_region *g, unsigned int i)
{
	return g->addr + g->h.header_size + (uint64_t)i * g->h.slot_size;
}

/* Bytes between two CPUs' rings in an area: each starts on a page. */
static uint64_t dti_area_stride(const struct dti_region *g,
				const struct dti_persist_area *a)
{
	return dti_align_up((uint64_t)a->subbuf_size * a->n_subbufs, g->h.page_size);
}

/*
 * Host-order fields of the region header @raw, found at @g->addr: NULL
 * if it checks out, else what is wrong.  *@stray is set if it is no
 * region at all: no magic, or a copy of a header that lies elsewhere.
 */
static const char *dti_region_why(struct dti_dump *d, struct dti_region *g,
				  const unsigned char *raw, bool *stray)
{
	struct dti_persist_header *h = &g->h;
	bool sw;

	memcpy(h, raw, sizeof(*h));
	*stray = true;
	if (g->addr % DTI_DUMP_PAGE_MIN)
		return "not on a page boundary";
	if (h->magic != DTI_PERSIST_MAGIC && h->magic != bswap_32(DTI_PERSIST_MAGIC))
		return "no magic";
	sw = g->swapped = h->magic != DTI_PERSIST_MAGIC;
	h->base = dti_d64(h->base, sw);
	if (h->base != g->addr)
		return "a copy of the header of a region elsewhere";
	*stray = false;
	h->version = dti_d32(h->version, sw);
	h->size = dti_d64(h->size, sw);
	h->boots = dti_d32(h->boots, sw);
	h->header_size = dti_d32(h->header_size, sw);
	h->crc = dti_d32(h->crc, sw);
	h->n_slots = dti_d32(h->n_slots, sw);
	h->slot_size = dti_d32(h->slot_size, sw);
	h->page_size = dti_d32(h->page_size, sw);
	h->next_free = dti_d64(h->next_free, sw);
	if (h->version != DTI_PERSIST_VERSION) {
		snprintf(d->err, sizeof(d->err),
			 "region version %u (this reader knows version %u)",
			 h->version, DTI_PERSIST_VERSION);
		return d->err;
	}
	if (h->header_size != sizeof(*h))
		return "impossible header size";
	if (!dti_crc_ok(raw, sizeof(*h), offsetof(struct dti_persist_header, crc), h->crc))
		return "CRC mismatch (damaged, or caught in the middle of an update)";
	if (!dti_page_size_ok(h->page_size) || g->addr % h->page_size)
		return "impossible page size";
	/*
	 * Not checked against the end of the dump's memory: an excerpt ends
	 * where the last thing read from it does.  Pages beyond are missing.
	 */
	if (h->size % h->page_size || h->size < 2 * (uint64_t)h->page_size ||
	    g->addr + h->size < g->addr)
		return "impossible size";
	if (!h->n_slots || h->n_slots > DTI_REGION_SLOTS_MAX ||
	    h->slot_size != sizeof(struct dti_persist_slot))
		return "impossible slot table";
	if (h->next_free % h->page_size || h->next_free < dti_region_areas(g) ||
	    h->next_free > h->size)
		return "impossible end of the space in use";
	return NULL;
}

/* Host-order fields of area @a of a slot of @g; why it is not sane, or NULL. */
static const char *dti_area_why(const struct dti_region *g, uint64_t area_size,
				struct dti_persist_area *a)
{
	const bool sw = g->swapped;
	const uint64_t end = g->h.next_free;

	a->offset = dti_d64(a->offset, sw);
	a->generation = dti_d32(a->generation, sw);
	a->boot = dti_d32(a->boot, sw);
	a->state = dti_d32(a->state, sw);
	a->subbuf_size = dti_d32(a->subbuf_size, sw);
	a->n_subbufs = dti_d32(a->n_subbufs, sw);
	a->nr_cpus = dti_d32(a->nr_cpus, sw);
	if (a->offset % g->h.page_size || a->offset < dti_region_areas(g) ||
	    a->offset > end || area_size > end - a->offset)
		return "an area outside the space in use";
	if (a->state == DTI_PERSIST_AREA_FREE)
		return NULL;
	if (a->state != DTI_PERSIST_AREA_USED)
		return "an area of unknown state";
	if (!a->generation)
		return "an area of generation 0";
	if (dti_geometry_why(a->subbuf_size, a->n_subbufs))
		return "an area of impossible geometry";
	if (!a->nr_cpus || a->nr_cpus > DTI_CPU_LIMIT ||
	    dti_area_stride(g, a) * a->nr_cpus > area_size)
		return "an area whose rings do not fit it";
	return NULL;
}

/* Host-order fields of slot @sl (@raw as read) of @g; why it is not sane, or NULL. */
static const char *dti_slot_why(const struct dti_region *g, struct dti_persist_slot *sl,
				const unsigned char *raw)
{
	const char *why;
	int a;

	memcpy(sl, raw, sizeof(*sl));
	sl->crc = dti_d32(sl->crc, g->swapped);
	sl->area_size = dti_d64(sl->area_size, g->swapped);
	if (!dti_crc_ok(raw, sizeof(*sl), offsetof(struct dti_persist_slot, crc), sl->crc))
		return "CRC mismatch (damaged, or caught in the middle of an update)";
	if (!memchr(sl->name, '\0', sizeof(sl->name)))
		return "a name without its end";
	if (!sl->name[0])
		return NULL;		/* free */
	if (!dti_name_valid(sl->name))
		return "a channel name dti.ko refuses";
	if (!sl->area_size || sl->area_size % g->h.page_size)
		return "impossible area size";
	for (a = 0; a < 2; a++)
		if ((why = dti_area_why(g, sl->area_size, &sl->area[a])))
			return why;
	return NULL;
}

/*
 * Region @g's slot table: every slot checked and kept in host order,
 * those that fail counted and described.  0, or -1 (ENOMEM).
 */
static int dti_table_entries(const unsigned char *raw, uint32_t n, bool sw,
			     struct dti_module *out, char *why, size_t size);

/*
 * The module tables of @g, after its slot table: a boot's is used for
 * the records of its areas if it checks out (entries, size, CRC, a boot
 * the region has seen), else said in the listing.  0, or -1 (ENOMEM).
 */
static int dti_region_mods(struct dti_dump *d, struct dti_region *g)
{
	const size_t size = sizeof(struct dti_persist_modules);
	const size_t head = offsetof(struct dti_persist_modules, mod);
	struct dti_region_mods *t;
	struct dti_persist_modules h;
	unsigned char *raw = malloc(size);
	uint64_t addr;
	const char *rwhy;
	unsigned int k;
	int n;

	if (!raw)
		return dti_fail(ENOMEM, "out of memory for a module table");
	for (k = 0; k < DTI_PERSIST_MODULE_TABLES; k++) {
		t = &g->tab[k];
		addr = g->addr + dti_region_tables(g) + k * size;
		if (!dti_phys(d, addr, raw, size, &rwhy)) {
			snprintf(t->why, sizeof(t->why), "it cannot be read: %s", rwhy);
			goto bad;
		}
		memcpy(&h, raw, head);
		h.boot = dti_d32(h.boot, g->swapped);
		h.n_entries = dti_d32(h.n_entries, g->swapped);
		h.entry_size = dti_d32(h.entry_size, g->swapped);
		h.crc = dti_d32(h.crc, g->swapped);
		if (!h.boot)
			continue;	/* never written */
		if (h.boot > g->h.boots || h.n_entries != DTI_MODULES_MAX ||
		    h.entry_size != sizeof(struct dti_module)) {
			snprintf(t->why, sizeof(t->why), "impossible boot %u or size (%u entries of %u bytes)",
				 h.boot, h.n_entries, h.entry_size);
			goto bad;
		}
		memset(raw + offsetof(struct dti_persist_modules, crc), 0, sizeof(h.crc));
		if (dti_crc32(raw, size) != h.crc) {
			snprintf(t->why, sizeof(t->why),
				 "CRC mismatch (damaged, or caught in the middle of an update)");
			goto bad;
		}
		t->mods = calloc(h.n_entries, sizeof(*t->mods));
		if (!t->mods) {
			free(raw);
			return dti_fail(ENOMEM, "out of memory for a module table");
		}
		/* the entries lie as in struct dti_dump_modules, at its offset */
		n = dti_table_entries(raw + head - offsetof(struct dti_dump_modules, mod),
				      h.n_entries, g->swapped, t->mods, t->why, sizeof(t->why));
		if (n < 0) {
			free(t->mods);
			t->mods = NULL;
			goto bad;
		}
		t->boot = h.boot;
		t->n = n;
		dti_addf(&d->mods_lines, "module table of boot %u in the persistent region, at physical 0x%llx: %u entries",
			 h.boot, (unsigned long long)addr, t->n);
		continue;
bad:
		dti_addf(&d->mods_lines, "module table %u of the persistent region, at physical 0x%llx: %s; the callers of its boot's records are not resolved",
			 k, (unsigned long long)addr, t->why);
	}
	free(raw);
	return 0;
}

static int dti_region_slots(struct dti_dump *d, struct dti_region *g)
{
	const size_t size = (size_t)g->h.n_slots * g->h.slot_size;
	unsigned char *raw = malloc(size);
	unsigned int i, used = 0;
	const char *why;

	g->slots = calloc(g->h.n_slots, sizeof(*g->slots));
	g->slot_ok = calloc(g->h.n_slots, 1);
	if (!raw || !g->slots || !g->slot_ok) {
		free(raw);
		return dti_fail(ENOMEM, "out of memory for a slot table");
	}
	if (!dti_phys(d, g->addr + g->h.header_size, raw, size, &why)) {
		dti_addf(&d->region_damage, "persistent region at physical 0x%llx: its slot table cannot be read: %s; nothing of it is read",
			 (unsigned long long)g->addr, why);
		free(raw);
		return 0;
	}
	for (i = 0; i < g->h.n_slots; i++) {
		why = dti_slot_why(g, &g->slots[i], raw + (size_t)i * g->h.slot_size);
		if (why) {
			d->sum.damaged_slots++;
			dti_addf(&d->region_damage, "persistent region at physical 0x%llx: slot %u (physical 0x%llx): %s; its records are not read",
				 (unsigned long long)g->addr, i,
				 (unsigned long long)dti_region_slot_addr(g, i), why);
			continue;
		}
		g->slot_ok[i] = 1;
		used += !!g->slots[i].name[0];
	}
	free(raw);
	if (dti_region_mods(d, g) < 0)
		return -1;
	dti_addf(&d->region_lines, "persistent region at physical 0x%llx: %llu KiB, taken by %u boot%s of dti.ko, %u of %u slots used, %llu KiB free",
		 (unsigned long long)g->addr, (unsigned long long)(g->h.size >> 10),
		 g->h.boots, g->h.boots == 1 ? "" : "s", used, g->h.n_slots,
		 (unsigned long long)((g->h.size - g->h.next_free) >> 10));
	return 0;
}

/*
 * If the marker at @addr begins a persistent region: 1 if its header
 * checks out (added to d->regions, its slots read), 0 if not (a damaged
 * one is described), -1 on ENOMEM.  -2: no region marker, a descriptor's
 * perhaps.
 */
static int dti_region_find(struct dti_dump *d, uint64_t addr)
{
	unsigned char raw[sizeof(struct dti_persist_header)];
	struct dti_region g = { .addr = addr }, *n;
	const char *why;
	bool stray;

	if (!dti_phys(d, addr, raw, DTI_PERSIST_MARKER_SIZE, &why) ||
	    memcmp(raw, DTI_PERSIST_MARKER, DTI_PERSIST_MARKER_SIZE))
		return -2;
	if (!dti_phys(d, addr, raw, sizeof(raw), &why)) {
		d->sum.stray++;
		return 0;
	}
	why = dti_region_why(d, &g, raw, &stray);
	if (stray) {
		d->sum.stray++;
		return 0;
	}
	if (why) {
		dti_addf(&d->region_damage, "persistent region at physical 0x%llx: its header fails: %s; nothing of it is read",
			 (unsigned long long)addr, why);
		return 0;
	}
	n = realloc(d->regions, (d->n_regions + 1) * sizeof(*n));
	if (!n)
		return dti_fail(ENOMEM, "out of memory for a region");
	d->regions = n;
	n[d->n_regions++] = g;
	d->sum.regions++;
	return dti_region_slots(d, &n[d->n_regions - 1]) < 0 ? -1 : 1;
}

/* The channel of @d's descriptors whose buffers area @a of slot @sl is, or NULL. */
static struct dti_dump_chan *dti_area_owner(struct dti_dump *d,
					    const struct dti_persist_slot *sl,
					    const struct dti_persist_area *a)
{
	unsigned int i;

	for (i = 0; i < d->n_ch; i++) {
		struct dti_dump_chan *c = &d->ch[i];

		if (c->desc && !c->own && !strcmp(c->chan, sl->name) &&
		    c->desc->d.c.flags & DTI_DUMP_F_BUFFERS &&
		    c->desc->d.c.generation == a->generation)
			return c;
	}
	return NULL;
}

/*
 * Area @a of slot @i of region @g as the channel @c (zeroed): a
 * descriptor made of what the slot says, its rings contiguous.  0, or -1
 * (ENOMEM).
 */
static int dti_area_chan(struct dti_dump *d, const struct dti_region *g,
			 unsigned int i, const struct dti_persist_area *a,
			 struct dti_dump_chan *c)
{
	const struct dti_persist_slot *sl = &g->slots[i];
	const uint64_t ps = g->h.page_size, stride = dti_area_stride(g, a);
	struct dti_dump_desc *desc;
	struct dti_dump_ring *r;
	unsigned int cpu;
	uint32_t k;

	c->own = calloc(1, sizeof(*c->own));
	c->rings = calloc(a->nr_cpus, sizeof(*c->rings));
	if (!c->own || !c->rings)
		return dti_fail(ENOMEM, "out of memory for a persistent channel");
	snprintf(c->chan, sizeof(c->chan), "%s", sl->name);
	snprintf(c->name, sizeof(c->name), "%s@boot%u", sl->name, a->boot);
	c->own->addr = dti_region_slot_addr(g, i);
	c->own->type = DTI_DUMP_CHANNEL;
	c->own->swapped = g->swapped;
	snprintf(c->own->name, sizeof(c->own->name), "%s", c->name);
	desc = &c->own->d.c;
	desc->flags = DTI_DUMP_F_BUFFERS | DTI_DUMP_F_PERSIST;
	desc->generation = a->generation;
	desc->subbuf_size = a->subbuf_size;
	desc->n_subbufs = a->n_subbufs;
	desc->nr_cpus = a->nr_cpus;
	desc->page_size = ps;
	dti_chan_use(c, c->own);
	c->pub.level = DTI_DUMP_NO_LEVEL;
	c->pub.region_addr = g->addr;
	c->pub.boot = a->boot;
	for (cpu = 0; cpu < a->nr_cpus; cpu++) {
		r = &c->rings[cpu];
		r->n_pages = stride / ps;
		r->pfn = malloc(r->n_pages * sizeof(*r->pfn));
		if (!r->pfn)
			return dti_fail(ENOMEM, "out of memory for cpu%u's page list", cpu);
		for (k = 0; k < r->n_pages; k++)
			r->pfn[k] = (g->addr + a->offset + cpu * stride) / ps + k;
		dti_ring_scan(d, c, r);
	}
	for (k = 0; k < d->n_earlier; k++)
		if (d->earlier[k].g == g && d->earlier[k].slot == i &&
		    &g->slots[i].area[d->earlier[k].area] == a)
			dti_addf(&c->notes, "channel descriptor at physical 0x%llx not used: boot %u left it in memory, it describes these rings",
				 (unsigned long long)d->earlier[k].addr, a->boot);
	return 0;
}

/*
 * The written areas of region @g's slots that checked out: those of a
 * channel of the descriptors are noted there, the others added to d->ch
 * (room made by the caller).  0, or -1 (ENOMEM).
 */
static int dti_region_chans(struct dti_dump *d, const struct dti_region *g)
{
	const struct dti_persist_area *a;
	struct dti_dump_chan *c;
	unsigned int i, k;

	for (i = 0; i < g->h.n_slots; i++) {
		if (!g->slot_ok[i] || !g->slots[i].name[0])
			continue;
		for (k = 0; k < 2; k++) {
			a = &g->slots[i].area[k];
			if (a->state != DTI_PERSIST_AREA_USED)
				continue;
			c = dti_area_owner(d, &g->slots[i], a);
			if (c) {
				c->pub.region_addr = g->addr;
				c->pub.boot = a->boot;
				continue;
			}
			if (dti_area_chan(d, g, i, a, &d->ch[d->n_ch++]) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * Whether channel descriptor @f describes an area that a region keeps
 * from an earlier boot than its last; *@e says which.
 */
static bool dti_earlier_area(const struct dti_dump *d, const struct dti_found *f,
			     struct dti_earlier *e)
{
	const struct dti_persist_area *a;
	const struct dti_region *g;
	unsigned int s, k;
	size_t r;

	for (r = 0; r < d->n_regions; r++) {
		g = &d->regions[r];
		for (s = 0; g->slot_ok && s < g->h.n_slots; s++) {
			for (k = 0; g->slot_ok[s] && k < 2; k++) {
				a = &g->slots[s].area[k];
				if (a->state == DTI_PERSIST_AREA_USED && a->boot < g->h.boots &&
				    a->generation == f->d.c.generation &&
				    !strcmp(g->slots[s].name, f->name)) {
					*e = (struct dti_earlier){
						.addr = f->addr, .g = g, .slot = s, .area = k,
					};
					return true;
				}
			}
		}
	}
	return false;
}

/*
 * Take out of d->found the channel descriptors of rings that a region
 * keeps from an earlier boot than its last (a reset keeps the old
 * kernel's memory, descriptors included): those rings are the channel
 * NAME@bootN, and the descriptor must not make them the channel NAME of
 * the dumped boot.  @n: descriptors in d->found; returns those left, or
 * -1 (ENOMEM).
 */
static ssize_t dti_drop_earlier(struct dti_dump *d, size_t n)
{
	struct dti_earlier where, *e;
	size_t i, kept = 0;

	for (i = 0; i < n; i++) {
		const struct dti_found *f = &d->found[i];

		if (f->why[0] || f->type != DTI_DUMP_CHANNEL ||
		    !(f->d.c.flags & DTI_DUMP_F_BUFFERS) || !dti_earlier_area(d, f, &where)) {
			d->found[kept++] = *f;
			continue;
		}
		e = realloc(d->earlier, (d->n_earlier + 1) * sizeof(*e));
		if (!e)
			return dti_fail(ENOMEM, "out of memory for descriptors");
		d->earlier = e;
		e[d->n_earlier++] = where;
	}
	return kept;
}

/* Written areas of slots that checked out, in every region: channels at most */
static size_t dti_region_areas_used(const struct dti_dump *d)
{
	const struct dti_region *g;
	size_t n = 0, r;
	unsigned int i, k;

	for (r = 0; r < d->n_regions; r++)
		for (g = &d->regions[r], i = 0; g->slot_ok && i < g->h.n_slots; i++)
			for (k = 0; g->slot_ok[i] && k < 2; k++)
				n += g->slots[i].name[0] &&
				     g->slots[i].area[k].state == DTI_PERSIST_AREA_USED;
	return n;
}

/* ---- the module table ---- */

/* The marker of the module table: "__DTI__" DTI_MODULES_FILE, zero fill */
static bool dti_is_modules_marker(const unsigned char *raw)
{
	static const char want[DTI_DUMP_MARKER_SIZE] = DTI_MARKER_PREFIX DTI_MODULES_FILE;

	return !memcmp(raw, want, sizeof(want));
}

/* Most entries a table is read with: dti.ko writes DTI_MODULES_MAX */
#define DTI_TABLE_ENTRIES_MAX	4096u
#define DTI_TABLE_HEAD		offsetof(struct dti_dump_modules, mod)

/*
 * The entries of the table at @raw (@n of them, checked by its CRC) into
 * @out in host order, the free ones left out: how many, or -1 with what
 * is wrong with one in @why.
 */
static int dti_table_entries(const unsigned char *raw, uint32_t n, bool sw,
			     struct dti_module *out, char *why, size_t size)
{
	struct dti_module e;
	uint32_t i, k = 0;

	for (i = 0; i < n; i++) {
		memcpy(&e, raw + DTI_TABLE_HEAD + (size_t)i * sizeof(e), sizeof(e));
		e.text = dti_d64(e.text, sw);
		e.text_size = dti_d32(e.text_size, sw);
		e.state = dti_d32(e.state, sw);
		e.loaded_ns = dti_d64(e.loaded_ns, sw);
		e.unloaded_ns = dti_d64(e.unloaded_ns, sw);
		e.build_id_len = dti_d32(e.build_id_len, sw);
		if (e.state == DTI_MODULE_FREE)
			continue;
		if (e.state != DTI_MODULE_LIVE && e.state != DTI_MODULE_GONE)
			snprintf(why, size, "entry %u: unknown state %u", i, e.state);
		else if (!memchr(e.name, '\0', sizeof(e.name)) || !e.name[0])
			snprintf(why, size, "entry %u: no module name", i);
		else if (e.build_id_len > DTI_BUILD_ID_SIZE)
			snprintf(why, size, "entry %u: a build-id of %u bytes", i, e.build_id_len);
		else {
			out[k++] = e;
			continue;
		}
		return -1;
	}
	return k;
}

/*
 * The marker at @addr begins a module table (struct dti_dump_modules):
 * check it and, if it is the first that checks out, keep its entries.
 * 0, 1 if it is a stray marker (no magic), -1 (ENOMEM).
 */
static int dti_table_found(struct dti_dump *d, uint64_t addr)
{
	unsigned char head[DTI_TABLE_HEAD], *raw = NULL;
	struct dti_module *mods = NULL;
	char why[DTI_WHY_MAX] = "";
	uint32_t magic, size, entry_size, n, crc;
	uint16_t version, type;
	const char *rwhy;
	int k = 0;
	bool sw;

	if (!dti_phys(d, addr, head, sizeof(head), &rwhy))
		return 1;
#define DTI_TABLE_FIELD(v, f) \
	memcpy(&(v), head + offsetof(struct dti_dump_modules, f), sizeof(v))
	DTI_TABLE_FIELD(magic, magic);
	if (magic != DTI_DUMP_MAGIC && magic != bswap_32(DTI_DUMP_MAGIC))
		return 1;
	d->n_tables++;
	sw = magic != DTI_DUMP_MAGIC;
	DTI_TABLE_FIELD(version, version);
	DTI_TABLE_FIELD(type, type);
	DTI_TABLE_FIELD(size, size);
	DTI_TABLE_FIELD(entry_size, entry_size);
	DTI_TABLE_FIELD(n, n_entries);
	DTI_TABLE_FIELD(crc, crc);
#undef DTI_TABLE_FIELD
	version = dti_d16(version, sw);
	type = dti_d16(type, sw);
	size = dti_d32(size, sw);
	entry_size = dti_d32(entry_size, sw);
	n = dti_d32(n, sw);
	crc = dti_d32(crc, sw);
	if (version != DTI_DUMP_VERSION)
		snprintf(why, sizeof(why), "version %u (this reader knows version %u)",
			 version, DTI_DUMP_VERSION);
	else if (type != DTI_DUMP_MODULES)
		snprintf(why, sizeof(why), "type %u, not that of a module table (%u)",
			 type, DTI_DUMP_MODULES);
	else if (entry_size != sizeof(struct dti_module) || !n || n > DTI_TABLE_ENTRIES_MAX ||
		 size != DTI_TABLE_HEAD + (uint64_t)n * entry_size)
		snprintf(why, sizeof(why), "impossible size %u for %u entries of %u bytes",
			 size, n, entry_size);
	else if (!(raw = malloc(size)) || !(mods = calloc(n, sizeof(*mods))))
		goto nomem;
	else if (!dti_phys(d, addr, raw, size, &rwhy))
		snprintf(why, sizeof(why), "its %u bytes cannot be read: %s", size, rwhy);
	else if (memset(raw + offsetof(struct dti_dump_modules, crc), 0, sizeof(crc)),
		 dti_crc32(raw, size) != crc)
		snprintf(why, sizeof(why), "CRC mismatch (damaged, or caught in the middle of an update)");
	else
		k = dti_table_entries(raw, n, sw, mods, why, sizeof(why));
	free(raw);
	if (why[0]) {
		dti_addf(&d->mods_lines, "module table at physical 0x%llx: %s; not used",
			 (unsigned long long)addr, why);
		if (!d->mods_why[0])
			snprintf(d->mods_why, sizeof(d->mods_why), "module table at physical 0x%llx: %s",
				 (unsigned long long)addr, why);
		free(mods);
		return 0;
	}
	if (d->sum.modules_addr) {
		/* the same twice (a copy) is no news */
		if ((unsigned int)k != d->n_mods || memcmp(mods, d->mods, k * sizeof(*mods)))
			dti_addf(&d->mods_lines, "module table at physical 0x%llx: %d entries; another table, at physical 0x%llx, is used",
				 (unsigned long long)addr, k, (unsigned long long)d->sum.modules_addr);
		free(mods);
		return 0;
	}
	d->mods = mods;
	d->n_mods = k;
	d->sum.modules_addr = addr;
	return 0;
nomem:
	free(raw);
	free(mods);
	return dti_fail(ENOMEM, "out of memory for a module table of %u entries", n);
}

int dti_dump_channel_modules(const struct dti_dump *d, unsigned int i,
			     const struct dti_module **mods)
{
	const struct dti_dump_chan *c;
	const struct dti_region *g;
	size_t r;
	unsigned int k;

	*mods = NULL;
	if (i >= d->n_ch)
		return dti_fail(ENOENT, "no channel %u in the dump (%u found)", i, d->n_ch);
	c = &d->ch[i];
	/* the dumped boot's channels: the dump's table */
	if (!c->own || !c->pub.region_addr)
		return dti_dump_modules(d, mods);
	/* an earlier boot's rings in a persistent region: that boot's table */
	for (r = 0; r < d->n_regions; r++) {
		g = &d->regions[r];
		if (g->addr != c->pub.region_addr)
			continue;
		for (k = 0; k < DTI_PERSIST_MODULE_TABLES; k++)
			if (g->tab[k].boot == c->pub.boot) {
				*mods = g->tab[k].mods;
				return g->tab[k].n;
			}
		for (k = 0; k < DTI_PERSIST_MODULE_TABLES; k++)
			if (g->tab[k].why[0])
				return dti_fail(EBADMSG, "channel %s: no sound module table of boot %u in the persistent region at physical 0x%llx (table %u: %s)",
						c->name, c->pub.boot, (unsigned long long)g->addr,
						k, g->tab[k].why);
	}
	return dti_fail(ENOENT, "channel %s: no module table of boot %u in the persistent region",
			c->name, c->pub.boot);
}

const struct dti_dump_mem *dti_dump_get_mem(const struct dti_dump *d)
{
	return &d->mem;
}

int dti_dump_modules(const struct dti_dump *d, const struct dti_module **mods)
{
	*mods = NULL;
	if (d->sum.modules_addr) {
		*mods = d->mods;
		return d->n_mods;
	}
	if (d->mods_why[0])
		return dti_fail(EBADMSG, "%s", d->mods_why);
	return dti_fail(ENOENT, "no module table in the dump (a dti.ko without one?)");
}

static int dti_chan_cmp(const void *a, const void *b)
{
	const struct dti_dump_chan *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static unsigned int dti_live_count(const struct dti_dump *d)
{
	unsigned int i, n = 0;

	for (i = 0; i < d->n_mods; i++)
		n += d->mods[i].state == DTI_MODULE_LIVE;
	return n;
}

int dti_dump_load(struct dti_dump *d)
{
	struct dti_found *f;
	size_t i, j, n = 0, cap = 0;
	ssize_t kept;
	int ret;

	if (d->loaded)
		return dti_fail(EINVAL, "dti_dump_load: called twice");
	d->loaded = true;
	dti_marks_unique(d);
	d->sum.markers = d->n_marks;
	for (i = 0; i < d->n_marks; i++) {
		unsigned char mk[DTI_DUMP_MARKER_SIZE];
		const char *why;

		ret = dti_region_find(d, d->marks[i]);
		if (ret == -1)
			return -1;
		if (ret != -2)
			continue;
		/* the module table: no channel ("." starts no channel name) */
		if (dti_phys(d, d->marks[i], mk, sizeof(mk), &why) && dti_is_modules_marker(mk)) {
			ret = dti_table_found(d, d->marks[i]);
			if (ret < 0)
				return -1;
			d->sum.stray += ret;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			f = realloc(d->found, cap * sizeof(*f));
			if (!f)
				return dti_fail(ENOMEM, "out of memory for %zu descriptors", cap);
			d->found = f;
		}
		if (dti_classify(d, d->marks[i], &d->found[n]))
			d->sum.stray++;
		else
			n++;
	}
	d->sum.descriptors = n + d->n_tables;
	if (d->sum.modules_addr)
		dti_addf(&d->mods_lines, "module table at physical 0x%llx: %u entries, %u of them live",
			 (unsigned long long)d->sum.modules_addr, d->n_mods, dti_live_count(d));
	kept = dti_drop_earlier(d, n);
	if (kept < 0)
		return -1;
	n = d->n_found = kept;
	if (n)
		qsort(d->found, n, sizeof(*d->found), dti_found_cmp);
	cap = n + dti_region_areas_used(d);
	d->ch = calloc(cap ? cap : 1, sizeof(*d->ch));
	if (!d->ch)
		return dti_fail(ENOMEM, "out of memory for %zu channels", cap);
	for (i = 0; i < n; i = j) {
		f = &d->found[i];
		for (j = i; j < n && !strcmp(d->found[j].name, f->name); j++)
			;
		if (dti_load_channel(d, &d->ch[d->n_ch++], f, &d->found[j - 1] + 1) < 0)
			return -1;
	}
	for (i = 0; i < d->n_regions; i++)
		if (dti_region_chans(d, &d->regions[i]) < 0)
			return -1;
	if (d->n_ch)
		qsort(d->ch, d->n_ch, sizeof(*d->ch), dti_chan_cmp);
	for (i = 0; i < d->n_ch; i++) {
		d->ch[i].pub.name = d->ch[i].name;
		d->ch[i].pub.error = d->ch[i].error;
		d->ch[i].pub.damage = d->ch[i].damage;
		d->ch[i].pub.notes = d->ch[i].notes;
	}
	d->sum.channels = d->n_ch;
	d->sum.region_lines = d->region_lines;
	d->sum.region_damage = d->region_damage;
	return d->n_ch;
}

const struct dti_dump_channel *dti_dump_channel(const struct dti_dump *d,
						unsigned int i)
{
	if (i >= d->n_ch)
		return dti_fail_null(ENOENT, "no channel %u in the dump (%u found)",
				     i, d->n_ch);
	return &d->ch[i].pub;
}

void dti_dump_free(struct dti_dump *d)
{
	unsigned int i, k;

	if (!d)
		return;
	for (i = 0; i < d->n_ch; i++)
		dti_chan_free(&d->ch[i]);
	free(d->ch);
	for (i = 0; i < d->n_regions; i++) {
		free(d->regions[i].slots);
		free(d->regions[i].slot_ok);
		for (k = 0; k < DTI_PERSIST_MODULE_TABLES; k++)
			free(d->regions[i].tab[k].mods);
	}
	free(d->regions);
	free(d->earlier);
	free(d->region_lines);
	free(d->region_damage);
	free(d->mods);
	free(d->mods_lines);
	free(d->found);
	free(d->marks);
	free(d);
}

/* ---- reading a channel ---- */

/* Channel @i, if it can be read: NULL with errno and message if not. */
static struct dti_dump_chan *dti_chan_usable(struct dti_dump *d, unsigned int i)
{
	struct dti_dump_chan *c;

	if (i >= d->n_ch)
		return dti_fail_null(ENOENT, "no channel %u in the dump (%u found)",
				     i, d->n_ch);
	c = &d->ch[i];
	if (c->error)
		return dti_fail_null(EINVAL, "channel %s: %.*s", c->name,
				     (int)strlen(c->error) - 1, c->error);
	return c;
}

/*
 * A version-2 sub-buffer @slot (decoded: *@sub) whose bytes from @keep
 * on are not in the dump: its header made to count only the records
 * whole before @keep, closed there, so that what is read of it is told
 * from records that are all there.  *@sub is made to match.
 */
static void dti_slot_cut_compact(bool swapped, unsigned char *slot, uint64_t keep,
				 struct dti_sub *sub)
{
	struct dti_subbuf_info *info = (void *)(slot + DTI_HDR_SIZE);
	uint64_t pos = DTI_SUB_SIZE, size;
	struct dti_crec cr;
	uint32_t n, v, hlen;

	for (n = 0; n < sub->records && pos + sizeof(cr) <= keep; n++, pos += size) {
		memcpy(&cr, slot + pos, sizeof(cr));
		hlen = dti_crec_hdr_size(cr.info, cr.flags);
		if (cr.info & DTI_CREC_LEN32) {
			memcpy(&v, slot + pos + sizeof(cr), sizeof(v));
			size = DTI_CREC_SIZE(hlen, swapped ? bswap_32(v) : v);
		} else {
			size = DTI_CREC_SIZE(hlen, swapped ? bswap_16(cr.len) : cr.len);
		}
		if (pos + hlen > keep || pos + size > keep)
			break;
	}
	sub->records = n;
	sub->padding = sub->subbuf_size - pos;
	sub->state = DTI_SUBBUF_CLOSED;
	v = swapped ? bswap_32(n) : n;
	memcpy(&info->records, &v, sizeof(v));
	v = swapped ? bswap_32(sub->padding) : sub->padding;
	memcpy(&info->padding, &v, sizeof(v));
	v = swapped ? bswap_32(DTI_SUBBUF_CLOSED) : DTI_SUBBUF_CLOSED;
	memcpy(&info->state, &v, sizeof(v));
	memset(slot + pos, 0, sub->subbuf_size - pos);
}

/*
 * Slot @k of @buf, a copy of CPU @cpu's ring, is live but has data in a
 * page the dump lacks (*@page, the first): a record there is not whole,
 * and nothing shows it.  Zero the slot from the first record that
 * reaches into the page on, where the reader then reports damage, and
 * tell @r (if not NULL) why.  -1 (ENOMEM), else 0.
 */
static int dti_slot_cut(struct dti_dump_chan *c, struct dti_reader *r,
			unsigned int cpu, unsigned char *buf, uint64_t k,
			uint64_t page, struct dti_sub *sub)
{
	const struct dti_dump_desc *desc = &c->desc->d.c;
	const uint64_t ss = desc->subbuf_size, start = k * ss;
	const uint64_t lost = page * desc->page_size;
	uint64_t pos = start + dti_sub_size(sub->version);
	char source[sizeof(c->name) + 16];
	struct dti_hdr h;

	if (sub->version != DTI_RECORD_VERSION_1) {
		dti_slot_cut_compact(c->desc->swapped, buf + start, lost - start, sub);
		pos = start + ss - sub->padding;
	} else {
		while (pos + DTI_HDR_SIZE <= start + ss && pos + DTI_HDR_SIZE <= lost &&
		       dti_decode_hdr(buf + pos, &h) == DTI_HDR_OK &&
		       pos + dti_rec_size(h.len) <= lost)
			pos += dti_rec_size(h.len);
		memset(buf + pos, 0, start + ss - pos);
	}
	snprintf(source, sizeof(source), "%s/trace%u", c->name, cpu);
	if (!r)
		return 0;
	return dti_note_add(r, DTI_NOTICE_WARNING, cpu, source, lost, desc->page_size,
			    "%s: ring offsets %llu to %llu (page frame 0x%llx) are not in the dump: the records of sub-buffer slot %llu from offset %llu on are lost",
			    source, (unsigned long long)lost,
			    (unsigned long long)(lost + desc->page_size - 1),
			    (unsigned long long)c->rings[cpu].pfn[page],
			    (unsigned long long)k, (unsigned long long)pos);
}

/*
 * A copy of CPU @cpu's ring (*@len bytes, malloc()ed) with the slots
 * that are not of the current buffers zeroed: a raw ring copy as a
 * reader of files sees it.  Records that pages the dump lacks cut short
 * are zeroed and reported to @r (if not NULL): dti_slot_cut().  NULL
 * (ENOMEM).
 */
static unsigned char *dti_ring_copy(struct dti_dump *d, struct dti_dump_chan *c,
				    unsigned int cpu, size_t *len,
				    struct dti_reader *r)
{
	const struct dti_dump_desc *desc = &c->desc->d.c;
	const struct dti_dump_ring *ring = &c->rings[cpu];
	const uint64_t ss = desc->subbuf_size, ps = desc->page_size;
	unsigned char *buf, *missing;
	struct dti_sub sub;
	uint64_t k, page;

	*len = ss * desc->n_subbufs;
	buf = malloc(*len);
	missing = calloc(ring->n_pages / 8 + 1, 1);
	if (!buf || !missing) {
		free(buf);
		free(missing);
		return dti_fail_null(ENOMEM, "out of memory for a ring of %zu bytes", *len);
	}
	dti_ring_read(d, ring, ps, 0, buf, *len, missing);
	for (k = 0; k < desc->n_subbufs; k++) {
		if (!dti_slot_live(c, buf + k * ss, k, &sub)) {
			memset(buf + k * ss, 0, ss);
			continue;
		}
		for (page = (k * ss + DTI_SUB_SIZE) / ps; page <= (k * ss + ss - 1) / ps; page++)
			if (missing[page / 8] >> page % 8 & 1)
				break;
		if (page <= (k * ss + ss - 1) / ps &&
		    dti_slot_cut(c, r, cpu, buf, k, page, &sub) < 0) {
			free(buf);
			buf = NULL;
			break;
		}
	}
	free(missing);
	return buf;
}

/* Streams of @c: CPUs with a ring, and its pending store. */
static unsigned int dti_chan_streams(const struct dti_dump_chan *c)
{
	unsigned int cpu, n = !!c->pend_used;

	for (cpu = 0; c->rings && cpu < c->pub.nr_cpu_ids; cpu++)
		n += c->rings[cpu].pfn != NULL;
	return n;
}

struct dti_reader *dti_dump_open(struct dti_dump *d, unsigned int i,
				 unsigned int flags)
{
	char name[sizeof(d->ch->name) + 16];
	struct dti_dump_chan *c;
	struct dti_reader *r;
	unsigned int cpu, n = 0;
	unsigned char *buf;
	uint64_t count;
	size_t len;
	void *recs;

	if (flags & ~(DTI_OPEN_STRICT | DTI_OPEN_FORMATS))
		return dti_fail_null(EINVAL, "dti_dump_open: flags %#x (only DTI_OPEN_STRICT "
				     "and DTI_OPEN_FORMATS)", flags);
	c = dti_chan_usable(d, i);
	if (!c)
		return NULL;
	r = dti_reader_alloc(dti_chan_streams(c), flags);
	if (!r)
		return NULL;
	/* JSON's "channel": NAME@bootN for an earlier boot's rings */
	if (dti_set_channel_name(r, c->name) < 0)
		goto fail;
	for (cpu = 0; c->rings && cpu < c->pub.nr_cpu_ids; cpu++) {
		if (!c->rings[cpu].pfn)
			continue;
		buf = dti_ring_copy(d, c, cpu, &len, r);
		snprintf(name, sizeof(name), "%s/trace%u", c->name, cpu);
		if (!buf || dti_stream_init_ring(&r->s[n++], name, buf, len,
						 c->pub.subbuf_size) < 0)
			goto fail;
		r->s[n - 1].cpu = cpu;
	}
	if (c->pend_used) {
		if (dti_pend_copy(d, c, NULL, r, &recs, &len, &count) < 0)
			goto fail;
		snprintf(name, sizeof(name), "%s/%s", c->name, DTI_PENDING_FILE);
		if (recs && !len)	/* nothing before damage: no stream */
			free(recs);
		else if (recs && dti_stream_init_pending(&r->s[n++], name, recs, len) < 0)
			goto fail;
	}
	r->n = n;
	if (c->desc) {
		r->ncpu = c->pub.nr_cpu_ids;
		if (c->pub.subbuf_size) {
			r->ident = (struct dti_ident){
				.set = true, .subbuf_size = c->pub.subbuf_size,
				.n_subbufs = c->pub.n_subbufs,
				.from = "the dump descriptor",
			};
			snprintf(r->ident.name, sizeof(r->ident.name), "%.*s",
				 DTI_NAME_MAX, c->chan);
		}
	}
	return r;
fail:
	r->n = n;
	dti_close(r);
	return NULL;
}

/* ---- saving a channel ---- */

/* Write @len bytes at @p to the new file @dir/@name.  0, or -1 (message set). */
static int dti_save_file(const char *dir, const char *name, const void *p,
			 size_t len)
{
	const char *q = p;
	char *path;
	ssize_t n;
	int fd, err = 0;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return dti_fail(ENOMEM, "out of memory");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		err = errno;
	while (fd >= 0 && len && !err) {
		n = write(fd, q, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n < 0 ? errno : EIO;
		else
			q += n, len -= n;
	}
	if (fd >= 0 && close(fd) != 0 && !err)
		err = errno;
	if (err) {
		dti_fail(err, "%s: %s", path, strerror(err));
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

/* Create @dir, or make sure that it is empty.  0, or -1 (message set). */
static int dti_save_dir(const char *dir)
{
	struct dirent *de;
	DIR *dd;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno != EEXIST || !(dd = opendir(dir)))
		return dti_fail(errno, "%s: %s", dir, strerror(errno));
	while ((de = readdir(dd)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			closedir(dd);
			return dti_fail(ENOTEMPTY, "%s: directory is not empty", dir);
		}
	closedir(dd);
	return 0;
}

/* The info file of @c, as the kernel's with what the descriptor adds.  NULL (ENOMEM). */
static char *dti_save_info(const struct dti_dump_chan *c, size_t *len)
{
	const struct dti_dump_channel *ch = &c->pub;
	bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return dti_fail_null(ENOMEM, "out of memory");
	fprintf(f, "name: %s\n", c->chan);
	if (ch->level != DTI_DUMP_NO_LEVEL)
		fprintf(f, "level: %d\n", ch->level);
	if (c->desc) {
		fprintf(f, "mode: %s\n", ch->flags & DTI_DUMP_F_NO_OVERWRITE ?
			"no-overwrite" : "overwrite");
		if (ch->subbuf_size)
			fprintf(f, "subbuf_size: %u\nn_subbufs: %u\n",
				ch->subbuf_size, ch->n_subbufs);
	}
	fprintf(f, "buffers: %s\n", ch->subbuf_size ? "allocated" : "none");
	fprintf(f, "record_version: %u\n",
		c->record_version ? c->record_version : DTI_RECORD_VERSION);
	if (c->desc)
		fprintf(f, "generation: %u\nnr_cpu_ids: %u\npage_size: %u\n",
			ch->generation, ch->nr_cpu_ids, ch->page_size);
	if (ch->desc_addr)
		fprintf(f, "descriptor: physical 0x%llx\n",
			(unsigned long long)ch->desc_addr);
	if (ch->region_addr)
		fprintf(f, "persistent_region: physical 0x%llx\nboot: %u\n",
			(unsigned long long)ch->region_addr, ch->boot);
	if (c->pend)
		fprintf(f, "pending_descriptor: physical 0x%llx\npending_records: %llu\n",
			(unsigned long long)ch->pending_addr,
			(unsigned long long)ch->pending_records);
	fprintf(f, "byte_order: %s\nsource: memory dump\n",
		little != !ch->swapped ? "big-endian" : "little-endian");
	if (fclose(f) != 0) {
		free(text);
		return dti_fail_null(ENOMEM, "out of memory");
	}
	return text;
}

int dti_dump_save(struct dti_dump *d, unsigned int i, const char *dir)
{
	struct dti_dump_chan *c = dti_chan_usable(d, i);
	const struct dti_module *mods;
	char name[32];
	unsigned int cpu;
	unsigned char *buf;
	uint64_t count;
	void *recs;
	size_t len;
	char *info;
	int ret, n;

	if (!c || dti_save_dir(dir) < 0)
		return -1;
	for (cpu = 0; c->rings && cpu < c->pub.nr_cpu_ids; cpu++) {
		if (!c->rings[cpu].pfn)
			continue;
		buf = dti_ring_copy(d, c, cpu, &len, NULL);
		if (!buf)
			return -1;
		snprintf(name, sizeof(name), "trace%u", cpu);
		ret = dti_save_file(dir, name, buf, len);
		free(buf);
		if (ret < 0)
			return -1;
	}
	if (c->pend_used) {
		if (dti_pend_copy(d, c, NULL, NULL, &recs, &len, &count) < 0)
			return -1;
		ret = recs && len ? dti_save_file(dir, DTI_PENDING_FILE, recs, len) : 0;
		free(recs);
		if (ret < 0)
			return -1;
	}
	info = dti_save_info(c, &len);
	if (!info)
		return -1;
	ret = dti_save_file(dir, "info", info, len);
	free(info);
	if (ret < 0 || (n = dti_dump_channel_modules(d, i, &mods)) < 0)
		return ret;
	/* its records' module table, as a snapshot has it (dti_modules_load()) */
	info = dti_modules_text(mods, n, &len);
	if (!info)
		return -1;
	ret = dti_save_file(dir, DTI_SNAP_MODULES_FILE, info, len);
	free(info);
	return ret;
}

/* ---- the listing ---- */

static void dti_flags_text(unsigned int flags, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s", flags & DTI_DUMP_F_BUFFERS ? ",buffers" : "",
		 flags & DTI_DUMP_F_NO_OVERWRITE ? ",no-overwrite" : "",
		 flags & DTI_DUMP_F_HANDLE ? ",handle" : "",
		 flags & DTI_DUMP_F_PERSIST ? ",persist" : "", flags ? "" : ",-");
	memmove(buf, buf + 1, strlen(buf));
}

/* Each line of @text (lines end in '\n', the last may not) as "  @tag: line" */
static void dti_list_lines(FILE *out, const char *tag, const char *text)
{
	size_t len;

	for (; text && *text; text += len + (text[len] == '\n')) {
		len = strcspn(text, "\n");
		fprintf(out, "  %s: %.*s\n", tag, (int)len, text);
	}
}

static void dti_list_channel(FILE *out, const struct dti_dump_channel *ch,
			     unsigned int flags)
{
	char level[24], fl[40], geom[32], cpus[24], gen[16], recs[24];

	if (ch->level == DTI_DUMP_NO_LEVEL)
		snprintf(level, sizeof(level), "?");
	else
		snprintf(level, sizeof(level), "%d (%s)", ch->level,
			 dti_level_name(ch->level));
	dti_flags_text(ch->flags, fl, sizeof(fl));
	snprintf(gen, sizeof(gen), ch->desc_addr || ch->region_addr ? "%#x" : "-",
		 ch->generation);
	snprintf(geom, sizeof(geom), ch->subbuf_size ? "%u x %u" : "-",
		 ch->n_subbufs, ch->subbuf_size);
	snprintf(cpus, sizeof(cpus), ch->desc_addr || ch->region_addr ? "%u/%u" : "-",
		 ch->nr_bufs, ch->nr_cpu_ids);
	snprintf(recs, sizeof(recs), ch->error ? "-" : "%llu",
		 (unsigned long long)ch->records);
	fprintf(out, "%-24s %-11s %-21s %-10s %-12s %-9s %9s %8llu\n", ch->name,
		level, fl, gen, geom, cpus, recs,
		(unsigned long long)ch->pending_records);
	dti_list_lines(out, "error", ch->error);
	dti_list_lines(out, "damage", ch->damage);
	if (!(flags & DTI_LIST_QUIET))
		dti_list_lines(out, "note", ch->notes);
	if (ch->region_addr)
		fprintf(out, "  rings written by boot %u, in the persistent region at physical 0x%llx\n",
			ch->boot, (unsigned long long)ch->region_addr);
	if (ch->stale_slots || ch->missing_pages)
		fprintf(out, "  %lu sub-buffer slots stale or unused, %lu ring pages not in the dump\n",
			ch->stale_slots, ch->missing_pages);
}

int dti_dump_print_list(const struct dti_dump *d, FILE *out,
			const char *channel, unsigned int flags)
{
	const struct dti_dump_summary *sum = dti_dump_summary(d);
	const struct dti_dump_channel *ch;
	unsigned int i;
	int bad = 0;

	fprintf(out, "%-24s %-11s %-21s %-10s %-12s %-9s %9s %8s\n", "channel",
		"level", "flags", "generation", "subbufs", "cpus", "records",
		"pending");
	for (i = 0; i < d->n_ch; i++) {
		ch = &d->ch[i].pub;
		if (channel && strcmp(ch->name, channel))
			continue;
		dti_list_channel(out, ch, flags);
		bad += ch->error || ch->damage;
	}
	dti_list_lines(out, "region", d->region_lines);
	dti_list_lines(out, "damage", d->region_damage);
	dti_list_lines(out, "modules", d->mods_lines);
	if (!(flags & DTI_LIST_QUIET) && sum->index_addr) {
		fprintf(out, "%u channel%s located by VMCOREINFO (%s=0x%llx): its dump index lists %lu descriptors, %lu of them neither descriptor nor region\n",
			d->n_ch, d->n_ch == 1 ? "" : "s", DTI_VMCOREINFO_KEY,
			(unsigned long long)sum->index_addr, sum->indexed, sum->stray);
	} else if (!(flags & DTI_LIST_QUIET)) {
		fprintf(out, "%u channel%s in %llu MiB of memory; %lu \"%s\" markers, %lu of them neither descriptor nor region\n",
			d->n_ch, d->n_ch == 1 ? "" : "s",
			(unsigned long long)(sum->scanned >> 20),
			sum->markers, DTI_SCAN_PREFIX, sum->stray);
	}
	bad += !channel && sum->region_damage;
	if (fflush(out) || ferror(out)) {
		errno = EIO;
		return -1;
	}
	return bad;
}
