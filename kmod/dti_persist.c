// SPDX-License-Identifier: GPL-2.0
/*
 * DTI's persistent region: RAM that keeps its contents across a reset.
 *
 * The persist= module parameter names RAM the kernel was told to leave
 * alone, one of two ways:
 *  - "SIZE@ADDR" (memparse() sizes: 16M, 0x1000000), a physical range
 *    reserved with memmap=SIZE$ADDR on x86: the memory map then says
 *    "reserved" there and the kernel never uses it.  dti.ko refuses a
 *    range that is not page-aligned, that overlaps RAM the kernel
 *    manages, or that the memory map does not call reserved from its
 *    first byte to its last: writing into RAM that some other user owns
 *    would corrupt it silently.
 *  - "NAME", a region reserve_mem=SIZE:ALIGN:NAME set aside at boot
 *    (6.11, where reserve_mem_find_by_name() finds it): RAM the kernel
 *    manages, taken out of its allocator for good.  Its place is chosen
 *    at boot; it stays the same across resets while the kernel, its
 *    command line and the machine's memory stay the same (with nokaslr:
 *    a randomly placed kernel image can push it elsewhere), and the
 *    region's header, which records where it lies, tells a moved region
 *    from a kept one.
 *
 * The region starts with struct dti_persist_header (dti_record.h) and
 * its slot table; the rest is the channels' rings.  A load that finds a
 * header whose every field checks out keeps what the region holds, the
 * previous boot's; any other content is RAM that was not kept (a cold
 * boot, a first use) or is damaged, and the region is set up anew.
 * /sys/kernel/debug/dti/.persist tells which.
 *
 * A channel registered with DTI_F_PERSIST gets a slot, by name, the
 * first time any boot registers it: two areas, each with a ring per
 * possible CPU.  Each boot writes one area and leaves the other, which
 * holds the records of the last boot that wrote the channel.  The rings
 * are struct rchan_buf that DTI builds over the region itself, driven by
 * its own sub-buffer switch (dti_ring_switch()): relay never sees them,
 * and every reader of relay buffers (merged views, panic path, dump
 * descriptor) serves them unchanged.  They are written with the same
 * write guard, in the same format, with the record count raised only
 * after a record is whole.  That order holds for this CPU's view of
 * memory, not for what a reset leaves: the region is mapped write-back
 * and dirty cache lines reach RAM in any order, so a count can be there
 * without the records it counts.  The area a boot writes is therefore
 * zeroed, and the zeroes written back to RAM, when the boot takes it
 * (dti_persist_wipe()): such a place then holds nothing that passes for
 * a record, not the records of the boot before the last, which wrote
 * that area before.  A record whose header reached RAM and whose payload
 * did not is shown with what reached it.
 *
 * After the slot table come two module tables (struct dti_persist_modules):
 * this boot keeps one equal to dti.ko's module table, so the next boot
 * can resolve the callers of the records this one leaves; the other,
 * the boot before's, is shown as .previous/<name>/modules for the
 * channels that boot wrote.
 *
 * At load, each slot's last written area is checked sub-buffer by
 * sub-buffer and record by record, as a dump reader would (the region
 * is untrusted input), into a copy that /sys/kernel/debug/dti/.previous/
 * <name>/ shows until a write to its clear file releases it.
 *
 * Locks: dti_persist.lock serialises changes of the header and the slot
 * table and the previous boot's directories.  It nests inside a
 * channel's ctl_lock (buffers are created under it); under it only the
 * channel's dump_lock is taken (dti_dump_add_ring()), and removing a
 * ring's file on failure waits for opens of it, which take buf_lock but
 * never this lock.  dti_persist_init() and dti_persist_exit() hand the
 * region's module table to dti_modules.c (dti_modules_persist()), which
 * takes dti_modules_lock alone, with no lock of this file held.
 * Nothing here runs in atomic context: registration, level changes,
 * module load and unload, and file operations.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/kernel.h>
#include <linux/libnvdimm.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "dti_internal.h"

/*
 * The region's file under /sys/kernel/debug/dti: a channel name cannot
 * start with a dot, so it never clashes with a channel's directory.
 */
#define DTI_PERSIST_FILE	".persist"
/* The previous boot's records: .previous/<name>/ */
#define DTI_PREVIOUS_DIR	".previous"

/* Longest persist= value: "SIZE@ADDR" with both in hex and a suffix */
#define DTI_PERSIST_ARG_MAX	48

static char dti_persist_arg[DTI_PERSIST_ARG_MAX];
module_param_string(persist, dti_persist_arg, sizeof(dti_persist_arg), 0444);
MODULE_PARM_DESC(persist,
		 "SIZE@ADDR (reserved with memmap=SIZE$ADDR on x86) or NAME (reserve_mem=SIZE:ALIGN:NAME, 6.11): RAM that keeps persistent channels' records across a reset");

/* What the load found in the region */
enum dti_persist_found {
	DTI_PERSIST_NONE,	/* no region */
	DTI_PERSIST_NEW,	/* nothing of a previous boot: set up anew */
	DTI_PERSIST_KEPT,	/* the previous boot's header, whole */
	DTI_PERSIST_DAMAGED,	/* a DTI header that fails its checks */
};

static const char *const dti_persist_found_names[] = {
	[DTI_PERSIST_NONE] = "none",
	[DTI_PERSIST_NEW] = "new",
	[DTI_PERSIST_KEPT] = "kept",
	[DTI_PERSIST_DAMAGED] = "damaged, set up anew",
};

/* What a reserve_mem= region that is not page-aligned needs */
#define DTI_PERSIST_ALIGN_HINT \
	": give reserve_mem= an ALIGN and a SIZE that are multiples of it"

/* No area of a slot holds a previous boot's records */
#define DTI_PERSIST_NO_AREA	(-1)

/**
 * struct dti_persist - the region of this load
 * @base:	physical address
 * @size:	bytes
 * @hdr:	its mapping, the header first
 * @slots:	the slot table, after the header
 * @found:	what the load found there
 * @lock:	serialises changes of @hdr, @slots and @prev
 * @bad:	slots that failed their checks at load, never used again
 * @n_bad:	how many
 * @prev_area:	per slot, the area holding the previous boot's records,
 *		or DTI_PERSIST_NO_AREA
 * @prev:	per slot, those records, validated (released ones until
 *		unload, when their directory may still be going)
 * @prev_root:	.previous/
 * @mods:	the region's module tables, after the slot table
 * @prev_mods:	a checked copy of the other boot's module table, or NULL
 */
struct dti_persist {
	phys_addr_t base;
	u64 size;
	struct dti_persist_header *hdr;
	struct dti_persist_slot *slots;
	enum dti_persist_found found;
	struct mutex lock;		/* changes of @hdr, @slots, @prev */
	DECLARE_BITMAP(bad, DTI_PERSIST_SLOTS);
	unsigned int n_bad;
	int prev_area[DTI_PERSIST_SLOTS];
	struct dti_prev *prev[DTI_PERSIST_SLOTS];
	struct dentry *prev_root;
	struct dti_persist_modules *mods;
	struct dti_persist_modules *prev_mods;
};

static struct dti_persist dti_persist = {
	.lock = __MUTEX_INITIALIZER(dti_persist.lock),
};

/*
 * Where the areas start: the first page after the header, the slots and
 * the module tables
 */
static u64 dti_persist_areas_start(void)
{
	return PAGE_ALIGN(sizeof(struct dti_persist_header) +
			  DTI_PERSIST_SLOTS * sizeof(struct dti_persist_slot) +
			  DTI_PERSIST_MODULE_TABLES * sizeof(struct dti_persist_modules));
}

/* Bytes between the starts of two CPUs' rings: each starts on a page */
static u64 dti_persist_stride(u64 subbuf_size, u64 n_subbufs)
{
	return PAGE_ALIGN(subbuf_size * n_subbufs);
}

static u32 dti_persist_crc(const struct dti_persist_header *hdr)
{
	return DTI_CRC32_SEALED(hdr);
}

static u32 dti_persist_slot_crc(const struct dti_persist_slot *slot)
{
	return DTI_CRC32_SEALED(slot);
}

/*
 * The header and a slot each change in a few stores followed by their
 * CRC: a reset in between leaves a CRC that fails, and the next load
 * distrusts that part rather than reading rings it may describe wrongly.
 */
static void dti_persist_seal(struct dti_persist *p)
{
	p->hdr->crc = dti_persist_crc(p->hdr);
}

static void dti_persist_seal_slot(struct dti_persist_slot *slot)
{
	slot->crc = dti_persist_slot_crc(slot);
}

/*
 * The reserve_mem= region named @name into @base and @size.  Return: 0,
 * or -EINVAL with the reason logged.
 */
static int dti_persist_find_named(const char *name, phys_addr_t *base, u64 *size)
{
#ifdef DTI_HAVE_RESERVE_MEM_FIND_BY_NAME
	phys_addr_t start, len;

	if (!reserve_mem_find_by_name(name, &start, &len)) {
		pr_err("persist=%s: no reserve_mem= region of that name; set one aside on the kernel command line: reserve_mem=SIZE:ALIGN:%s (ALIGN at least %lu)\n",
		       name, name, PAGE_SIZE);
		return -EINVAL;
	}
	*base = start;
	*size = len;
	return 0;
#else
	pr_err("persist=%s: this kernel cannot find reserve_mem= regions by name (6.11 and later can); give the range as SIZE@ADDR, reserved with memmap=SIZE$ADDR (x86)\n",
	       name);
	return -EINVAL;
#endif
}

/*
 * Parse persist=: "SIZE@ADDR" into @base and @size, or a name of a
 * reserve_mem= region (@named set).  Return: 0, or -EINVAL with the
 * reason logged.
 */
static int dti_persist_parse(const char *arg, phys_addr_t *base, u64 *size,
			     bool *named)
{
	char *at, *end;

	*named = !strchr(arg, '@');
	if (*named)
		return dti_persist_find_named(arg, base, size);
	*size = memparse(arg, &at);
	if (*at != '@' || !*size)
		goto bad;
	*base = memparse(at + 1, &end);
	if (*end && *end != '\n')
		goto bad;
	return 0;
bad:
	pr_err("persist=%s: not SIZE@ADDR (for example 16M@0x30000000)\n", arg);
	return -EINVAL;
}

/*
 * walk_iomem_res_desc() callback: the reserved ranges overlapping the
 * region, lowest first; @arg is where the part covered without a gap
 * from the region's start ends.  A gap stops the walk.
 */
static int dti_persist_reserved_part(struct resource *res, void *arg)
{
	resource_size_t *covered = arg;

	if (res->start > *covered)
		return -ERANGE;
	*covered = max(*covered, res->end + 1);
	return 0;
}

/*
 * Whether [@base, @base + @size) is RAM the kernel was told to leave
 * alone: for a reserve_mem= region (@named) the kernel said so; a
 * range given by address must lie outside the RAM the kernel manages
 * and be reserved in the memory map (/proc/iomem's "Reserved", what
 * memmap=SIZE$ADDR makes) from its first byte to its last.
 * Return: 0, or -EINVAL with the reason logged.
 */
static int dti_persist_check(phys_addr_t base, u64 size, bool named)
{
	resource_size_t covered = base;

	if (!PAGE_ALIGNED(base) || !PAGE_ALIGNED(size) ||
	    size < PAGE_SIZE || base + size < base) {
		pr_err("persist=%s: the region (%llu bytes at %pa) must start and end on a page boundary (%lu)%s\n",
		       dti_persist_arg, size, &base, PAGE_SIZE,
		       named ? DTI_PERSIST_ALIGN_HINT : "");
		return -EINVAL;
	}
	if (named)
		return 0;
	if (region_intersects(base, size, IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE) !=
	    REGION_DISJOINT) {
		pr_err("persist=%s: the range is RAM the kernel uses; reserve it first: memmap=%#llx$%#llx on the kernel command line (x86; quote the $ for the boot loader), or set a region aside with reserve_mem=SIZE:ALIGN:NAME (6.11) and give its NAME\n",
		       dti_persist_arg, size, (unsigned long long)base);
		return -EINVAL;
	}
	walk_iomem_res_desc(IORES_DESC_RESERVED, IORESOURCE_MEM, base,
			    base + size - 1, &covered, dti_persist_reserved_part);
	if (covered < base + size) {
		if (covered == base)
			pr_err("persist=%s: the memory map does not say the range is reserved (see \"Reserved\" in /proc/iomem); reserve it with memmap=%#llx$%#llx (x86)\n",
			       dti_persist_arg, size, (unsigned long long)base);
		else
			pr_err("persist=%s: the memory map says only the first %llu bytes of the range are reserved (see \"Reserved\" in /proc/iomem); reserve all of it with memmap=%#llx$%#llx (x86)\n",
			       dti_persist_arg, (unsigned long long)(covered - base),
			       size, (unsigned long long)base);
		return -EINVAL;
	}
	return 0;
}

/* Set up the header of a region that holds nothing of a previous boot */
static void dti_persist_format(struct dti_persist *p)
{
	struct dti_persist_header *hdr = p->hdr;
	unsigned int i;

	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr->marker, DTI_PERSIST_MARKER, sizeof(DTI_PERSIST_MARKER));
	hdr->magic = DTI_PERSIST_MAGIC;
	hdr->version = DTI_PERSIST_VERSION;
	hdr->size = p->size;
	hdr->base = p->base;
	hdr->header_size = sizeof(*hdr);
	hdr->n_slots = DTI_PERSIST_SLOTS;
	hdr->slot_size = sizeof(struct dti_persist_slot);
	hdr->page_size = PAGE_SIZE;
	hdr->next_free = dti_persist_areas_start();
	memset(p->slots, 0, DTI_PERSIST_SLOTS * sizeof(*p->slots));
	for (i = 0; i < DTI_PERSIST_SLOTS; i++)
		dti_persist_seal_slot(&p->slots[i]);
	/* boot 0: never written */
	memset(p->mods, 0, DTI_PERSIST_MODULE_TABLES * sizeof(*p->mods));
}

/*
 * The module table the previous boot left (the one this boot does not
 * write), copied and checked like everything else the region holds:
 * NULL if it was never written, fails its CRC or is not of this layout.
 */
static struct dti_persist_modules *dti_persist_prev_modules(const struct dti_persist *p)
{
	const struct dti_persist_modules *t =
		&p->mods[(p->hdr->boots + 1) % DTI_PERSIST_MODULE_TABLES];
	struct dti_persist_modules *copy;

	if (!t->boot || t->boot >= p->hdr->boots || t->n_entries != DTI_MODULES_MAX ||
	    t->entry_size != sizeof(t->mod[0]))
		return NULL;
	copy = kmemdup(t, sizeof(*t), GFP_KERNEL);
	if (!copy)
		return NULL;
	if (DTI_CRC32_SEALED(copy) != copy->crc) {
		pr_warn("persistent region: boot %u's module table is damaged: its callers will not resolve to lines\n",
			t->boot);
		kfree(copy);
		return NULL;
	}
	return copy;
}

/* What the region's header says of the previous boot */
static enum dti_persist_found dti_persist_examine(const struct dti_persist *p)
{
	const struct dti_persist_header *hdr = p->hdr;

	if (memcmp(hdr->marker, DTI_PERSIST_MARKER, sizeof(DTI_PERSIST_MARKER)))
		return DTI_PERSIST_NEW;
	if (hdr->magic != DTI_PERSIST_MAGIC || hdr->version != DTI_PERSIST_VERSION ||
	    hdr->size != p->size || hdr->base != p->base ||
	    hdr->header_size != sizeof(*hdr) || hdr->crc != dti_persist_crc(hdr) ||
	    hdr->n_slots != DTI_PERSIST_SLOTS ||
	    hdr->slot_size != sizeof(struct dti_persist_slot) ||
	    hdr->page_size != PAGE_SIZE || !PAGE_ALIGNED(hdr->next_free) ||
	    hdr->next_free < dti_persist_areas_start() ||
	    hdr->next_free > p->size)
		return DTI_PERSIST_DAMAGED;
	return DTI_PERSIST_KEPT;
}

/* Whether an area of a slot that passed its CRC describes sane rings */
static bool dti_persist_area_ok(const struct dti_persist *p,
				const struct dti_persist_slot *slot,
				const struct dti_persist_area *area)
{
	u64 end = p->hdr->next_free;

	if (!PAGE_ALIGNED(area->offset) || area->offset < dti_persist_areas_start() ||
	    area->offset > end || slot->area_size > end - area->offset)
		return false;
	if (area->state == DTI_PERSIST_AREA_FREE)
		return true;
	return area->state == DTI_PERSIST_AREA_USED && area->generation &&
	       !dti_check_geometry(area->subbuf_size, area->n_subbufs) &&
	       area->nr_cpus &&
	       dti_persist_stride(area->subbuf_size, area->n_subbufs) * area->nr_cpus <=
	       slot->area_size;
}

/* Whether a slot can be trusted: its CRC, its name and its areas */
static bool dti_persist_slot_ok(const struct dti_persist *p,
				const struct dti_persist_slot *slot)
{
	if (slot->crc != dti_persist_slot_crc(slot) ||
	    !memchr(slot->name, '\0', sizeof(slot->name)))
		return false;
	if (!slot->name[0])
		return true;	/* free */
	return !dti_check_name(slot->name) && slot->area_size &&
	       PAGE_ALIGNED(slot->area_size) &&
	       dti_persist_area_ok(p, slot, &slot->area[0]) &&
	       dti_persist_area_ok(p, slot, &slot->area[1]);
}

/* The area of @slot the last boot that wrote it wrote, if any */
static int dti_persist_last_area(const struct dti_persist_slot *slot)
{
	const struct dti_persist_area *a = slot->area;

	if (a[0].state == DTI_PERSIST_AREA_USED &&
	    (a[1].state != DTI_PERSIST_AREA_USED || a[0].boot >= a[1].boot))
		return 0;
	if (a[1].state == DTI_PERSIST_AREA_USED)
		return 1;
	return DTI_PERSIST_NO_AREA;
}

/*
 * The previous boot's records.  The area is read as a dump reader reads
 * memory: nothing in it is trusted until checked, and what fails a check
 * is counted and left out of the copy the files show.
 */

/*
 * The highest sub-buffer number a ring of the previous boot can have
 * reached: relay counts sub-buffers in a size_t and no ring fills half
 * of that range, so a header that claims more was not written by a
 * ring.  Refusing it keeps [first, newest] and every loop over it clear
 * of the wrap, and the number fits the snapshot's size_t.
 */
#define DTI_PREV_SEQ_MAX	((u64)(SIZE_MAX / 2))

/* Which slot of a ring of @n sub-buffers sub-buffer number @seq takes */
static size_t dti_seq_slot(u64 seq, u32 n)
{
	u32 rem;

	div_u64_rem(seq, n, &rem);
	return rem;
}

/* Whether sub-buffer @idx of a CPU's ring is one of @area's, for @cpu */
static bool dti_prev_subbuf_ok(const void *sub, const struct dti_persist_area *area,
			       const char *name, unsigned int cpu, size_t idx)
{
	const struct dti_record *rec = sub;
	const struct dti_subbuf_info *info = sub + sizeof(*rec);
	size_t size = area->subbuf_size, hdr_size;

	/* a version-1 ring is an older dti.ko's, whose info was shorter */
	if (size < DTI_SUBBUF_HEADER_SIZE || !dti_subbuf_header_ok(rec))
		return false;
	hdr_size = dti_subbuf_header_size(rec);
	return DTI_RECORD_SIZE((u64)rec->len) == hdr_size && rec->cpu == cpu &&
	       dti_seq_slot(rec->seq, area->n_subbufs) == idx &&
	       info->generation == area->generation && info->subbuf_size == size &&
	       info->n_subbufs == area->n_subbufs &&
	       (info->state == DTI_SUBBUF_OPEN ||
		(info->state == DTI_SUBBUF_CLOSED &&
		 info->padding <= size - hdr_size)) &&
	       !strncmp(info->name, name, sizeof(info->name));
}

/*
 * Check the records of a sub-buffer that passed dti_prev_subbuf_ok(), up
 * to as many as its header counts: they are whole, lie within its used
 * part and are @cpu's.  The first that fails ends the sub-buffer.
 * Return: the bytes used by the header and the good records; their
 * number in *@good.
 */
static size_t dti_prev_records(const void *sub, size_t size, unsigned int cpu, u32 *good)
{
	const struct dti_subbuf_info *info = sub + sizeof(struct dti_record);
	size_t end = size, pos;
	struct dti_rview rec;
	struct dti_walk w;

	if (info->state == DTI_SUBBUF_CLOSED)
		end = size - info->padding;
	*good = 0;
	if (!dti_walk_start(&w, sub, end, info->records))
		return 0;
	/* The header is the CPU's: dti_prev_subbuf_ok(). */
	for (pos = w.pos; dti_walk_next(&w, &rec); pos = w.pos, ++*good)
		if (rec.level < 0 || rec.level > DTI_LEVEL_MAX)
			break;
	return pos;
}

/*
 * Copy what checks out of CPU @cpu's ring at @ring into @sc, and count
 * what does not.  The sub-buffers that should hold records are the
 * n_subbufs numbered up to the newest one found (fewer before the ring
 * wrapped); one that holds another number, or fails a check, is damaged.
 * A copied sub-buffer's header is made to match the copy: closed, its
 * padding and record count those of the records that passed.
 */
static int dti_prev_load_cpu(struct dti_prev *prev, struct dti_snap_cpu *sc,
			     const void *ring, const struct dti_persist_area *area,
			     unsigned int cpu)
{
	size_t size = area->subbuf_size, n = area->n_subbufs, idx, used;
	u64 *seqs, newest = 0, s, first, wild_seq = 0;
	struct dti_subbuf_info *info;
	size_t wild = 0, wild_idx = 0;
	bool any = false;
	u32 good;
	void *copy;

	seqs = kmalloc_array(n, sizeof(*seqs), GFP_KERNEL);
	sc->data = kvzalloc(size * n, GFP_KERNEL);
	sc->padding = kvmalloc_array(n, sizeof(*sc->padding), GFP_KERNEL);
	if (!seqs || !sc->data || !sc->padding) {
		kfree(seqs);
		return -ENOMEM;
	}
	sc->subbuf_size = size;
	sc->n_subbufs = n;
	for (idx = 0; idx < n; idx++) {
		sc->padding[idx] = size;
		seqs[idx] = U64_MAX;
		if (!dti_prev_subbuf_ok(ring + idx * size, area, prev->name, cpu, idx))
			continue;
		s = ((const struct dti_record *)(ring + idx * size))->seq;
		if (s > DTI_PREV_SEQ_MAX) {
			if (!wild++) {
				wild_idx = idx;
				wild_seq = s;
			}
			continue;
		}
		seqs[idx] = s;
		if (!any || s > newest)
			newest = s;
		any = true;
	}
	if (wild) {
		prev->bad_subbufs += wild;
		pr_warn("%s: CPU %u of boot %u: %zu sub-buffer headers claim numbers no ring reaches (slot %zu: %llu); left out\n",
			prev->name, cpu, prev->boot, wild, wild_idx, wild_seq);
	}
	first = newest >= n - 1 ? newest - (n - 1) : 0;
	for (s = first; s <= newest; s++) {
		idx = dti_seq_slot(s, n);
		if (seqs[idx] != s) {
			prev->bad_subbufs++;
			continue;
		}
		copy = sc->data + idx * size;
		used = dti_prev_records(ring + idx * size, size, cpu, &good);
		memcpy(copy, ring + idx * size, used);
		/* The copied header still has the count the ring claimed. */
		info = copy + sizeof(struct dti_record);
		prev->bad_records += info->records - good;
		info->records = good;
		info->padding = size - used;
		info->state = DTI_SUBBUF_CLOSED;
		sc->padding[idx] = size - used;
		if (s == newest)
			sc->offset = used;
		prev->subbufs++;
		prev->records += good - dti_event_formats(copy, size, good);
	}
	sc->produced = newest;
	sc->produced_after = newest;
	kfree(seqs);
	return 0;
}

static void dti_prev_free(struct kref *ref)
{
	struct dti_prev *prev = container_of(ref, struct dti_prev, ref);
	unsigned int c;

	for (c = 0; c < prev->nr_cpus; c++)
		dti_snap_free(&prev->cpus[c]);
	kfree(prev->cpus);
	kfree(prev);
}

/**
 * dti_prev_get - hold the previous boot's records for a file being opened
 * @prev: records
 *
 * Context: a file operation on one of @prev's files, which keeps @prev
 * from being freed while it runs.
 * Return: false once a clear released them.
 */
bool dti_prev_get(struct dti_prev *prev)
{
	return !READ_ONCE(prev->cleared) && kref_get_unless_zero(&prev->ref);
}

/**
 * dti_prev_put - let go of what dti_prev_get() held
 * @prev: records
 *
 * Context: process context.
 */
void dti_prev_put(struct dti_prev *prev)
{
	kref_put(&prev->ref, dti_prev_free);
}

static int dti_prev_status_show(struct seq_file *m, void *v)
{
	struct dti_prev *prev = m->private;
	const struct dti_snap_cpu *sc = prev->cpus;

	seq_printf(m, "name: %s\n", prev->name);
	seq_printf(m, "boot: %u\n", prev->boot);
	seq_printf(m, "this_boot: %u\n", dti_persist.hdr->boots);
	seq_printf(m, "subbuf_size: %zu\n", sc->subbuf_size);
	seq_printf(m, "n_subbufs: %zu\n", sc->n_subbufs);
	seq_printf(m, "nr_cpus: %u\n", prev->nr_cpus);
	seq_printf(m, "subbufs: %lu\n", prev->subbufs);
	seq_printf(m, "damaged_subbufs: %lu\n", prev->bad_subbufs);
	seq_printf(m, "records: %lu\n", prev->records);
	seq_printf(m, "damaged_records: %lu\n", prev->bad_records);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dti_prev_status);

static void dti_prev_remove_work(struct work_struct *work)
{
	struct dti_prev *prev = container_of(work, struct dti_prev, remove_work);

	debugfs_remove_recursive(prev->dir);
	prev->dir = NULL;
}

/*
 * Release the previous boot's records: no new opens, the area is free
 * (the next boot will not show it again), and the directory goes away
 * shortly after.  Its removal waits for the file operations in progress,
 * this write among them, so it is left to a work item.
 */
static ssize_t dti_prev_clear_write(struct file *file, const char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	struct dti_prev *prev = file->private_data;
	struct dti_persist *p = &dti_persist;
	struct dti_persist_slot *slot;
	char kbuf[4] = "";

	if (*ppos || !count || count >= sizeof(kbuf))
		return -EINVAL;
	if (copy_from_user(kbuf, ubuf, count))
		return -EFAULT;
	/* "1" and an optional newline, as every control file takes it */
	if (!sysfs_streq(kbuf, "1"))
		return -EINVAL;
	mutex_lock(&p->lock);
	if (!prev->cleared) {
		WRITE_ONCE(prev->cleared, true);
		slot = &p->slots[prev->slot];
		slot->area[p->prev_area[prev->slot]].state = DTI_PERSIST_AREA_FREE;
		dti_persist_seal_slot(slot);
		p->prev_area[prev->slot] = DTI_PERSIST_NO_AREA;
		schedule_work(&prev->remove_work);
	}
	mutex_unlock(&p->lock);
	return count;
}

static const struct file_operations dti_prev_clear_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= dti_prev_clear_write,
};

static int dti_prev_modules_show(struct seq_file *m, void *v)
{
	const struct dti_persist_modules *t = m->private;

	dti_modules_seq_show(m, t->mod);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dti_prev_modules);

/*
 * The previous boot's files of @prev; with @mods, the module table of
 * the boot that wrote its records, a "modules" file as DTI_MODULES_FILE
 */
static void dti_prev_create_files(struct dti_prev *prev,
				  const struct dti_persist_modules *mods)
{
	char name[sizeof(DTI_TRACE_FILE_BASE) + 10];
	unsigned int c;

	if (mods && mods->boot == prev->boot)
		debugfs_create_file("modules", 0400, prev->dir, (void *)mods,
				    &dti_prev_modules_fops);

	debugfs_create_file("status", 0444, prev->dir, prev, &dti_prev_status_fops);
	debugfs_create_file("clear", 0200, prev->dir, prev, &dti_prev_clear_fops);
	debugfs_create_file("merged", 0444, prev->dir, prev, &dti_prev_merged_fops);
	debugfs_create_file("merged-ts", 0444, prev->dir, prev, &dti_prev_merged_ts_fops);
	for (c = 0; c < prev->nr_cpus; c++) {
		snprintf(name, sizeof(name), DTI_TRACE_FILE_BASE "%u", c);
		debugfs_create_file(name, 0400, prev->dir, prev, &dti_prev_ring_fops);
	}
}

/* Check and copy slot @i's area @a, written by the previous boot */
static struct dti_prev *dti_prev_load(struct dti_persist *p, unsigned int i, int a)
{
	const struct dti_persist_slot *slot = &p->slots[i];
	const struct dti_persist_area *area = &slot->area[a];
	u64 stride = dti_persist_stride(area->subbuf_size, area->n_subbufs);
	const void *rings = (void *)p->hdr + area->offset;
	struct dti_prev *prev;
	unsigned int c;

	prev = kzalloc_obj(*prev, GFP_KERNEL);
	if (!prev)
		return NULL;
	kref_init(&prev->ref);
	INIT_WORK(&prev->remove_work, dti_prev_remove_work);
	strscpy(prev->name, slot->name, sizeof(prev->name));
	prev->slot = i;
	prev->boot = area->boot;
	prev->nr_cpus = area->nr_cpus;
	prev->cpus = kcalloc(prev->nr_cpus, sizeof(*prev->cpus), GFP_KERNEL);
	if (!prev->cpus)
		goto err;
	for (c = 0; c < prev->nr_cpus; c++)
		if (dti_prev_load_cpu(prev, &prev->cpus[c], rings + c * stride, area, c))
			goto err;
	return prev;
err:
	dti_prev_put(prev);
	return NULL;
}

/*
 * At load: find each slot's previous records and show them.  Slots that
 * fail their checks are marked and left alone.
 */
static void dti_persist_load_slots(struct dti_persist *p)
{
	struct dti_persist_slot *slot;
	struct dti_prev *prev;
	unsigned int i;
	int a;

	p->prev_root = debugfs_create_dir(DTI_PREVIOUS_DIR, dti_fs_root());
	for (i = 0; i < DTI_PERSIST_SLOTS; i++) {
		slot = &p->slots[i];
		p->prev_area[i] = DTI_PERSIST_NO_AREA;
		if (!dti_persist_slot_ok(p, slot)) {
			set_bit(i, p->bad);
			p->n_bad++;
			pr_warn("persistent region: slot %u is damaged; its records are not read and its space is not used again\n",
				i);
			continue;
		}
		a = dti_persist_last_area(slot);
		if (!slot->name[0] || a == DTI_PERSIST_NO_AREA)
			continue;
		prev = dti_prev_load(p, i, a);
		if (!prev) {
			pr_warn("%s: no memory to read the previous boot's records\n", slot->name);
			continue;
		}
		p->prev_area[i] = a;
		p->prev[i] = prev;
		prev->dir = debugfs_create_dir(prev->name, p->prev_root);
		dti_prev_create_files(prev, p->prev_mods);
		pr_info("%s: boot %u left %lu records in %lu sub-buffers; %lu damaged sub-buffers and %lu damaged records skipped\n",
			prev->name, prev->boot, prev->records, prev->subbufs,
			prev->bad_subbufs, prev->bad_records);
	}
}

/*
 * A slot for channel @name whose areas hold @need bytes: its own from an
 * earlier registration or boot, else a free one with new areas.
 * Return: the slot's number, or -ENOSPC (why is logged).
 */
static int dti_persist_slot_get(struct dti_persist *p, const char *name, u64 need)
{
	struct dti_persist_slot *slot;
	int i, free = -1;

	lockdep_assert_held(&p->lock);
	for (i = 0; i < DTI_PERSIST_SLOTS; i++) {
		if (test_bit(i, p->bad))
			continue;
		slot = &p->slots[i];
		if (!strcmp(slot->name, name)) {
			if (slot->area_size >= need)
				return i;
			pr_err("%s: the persistent region keeps %llu bytes per boot for this channel, its buffers now need %llu: register it with its former size\n",
			       name, slot->area_size, need);
			return -ENOSPC;
		}
		if (free < 0 && !slot->name[0])
			free = i;
	}
	if (free < 0) {
		pr_err("%s: the persistent region's %d channel slots are taken\n", name,
		       DTI_PERSIST_SLOTS);
		return -ENOSPC;
	}
	if (p->size - p->hdr->next_free < 2 * need) {
		pr_err("%s: the persistent region has %llu bytes free, the channel needs 2 x %llu (this boot's records and the previous one's)\n",
		       name, p->size - p->hdr->next_free, need);
		return -ENOSPC;
	}
	slot = &p->slots[free];
	memset(slot, 0, sizeof(*slot));
	strscpy(slot->name, name, sizeof(slot->name));
	slot->area_size = need;
	slot->area[0].offset = p->hdr->next_free;
	slot->area[1].offset = p->hdr->next_free + need;
	dti_persist_seal_slot(slot);
	p->hdr->next_free += 2 * need;
	dti_persist_seal(p);
	return free;
}

/*
 * The area of slot @i this boot writes: the one it wrote already, else
 * the one that does not hold the previous boot's records.
 */
static int dti_persist_write_area(const struct dti_persist *p, unsigned int i)
{
	const struct dti_persist_area *a = p->slots[i].area;

	if (a[0].state == DTI_PERSIST_AREA_USED && a[0].boot == p->hdr->boots)
		return 0;
	if (a[1].state == DTI_PERSIST_AREA_USED && a[1].boot == p->hdr->boots)
		return 1;
	return p->prev_area[i] == 0 ? 1 : 0;
}

/**
 * dti_persist_close - free what dti_persist_open() built; the records
 *	stay in the region for the next boot
 * @rchan: the rings, which no writer reaches any more; may be partly built
 *
 * Context: process context; may sleep.
 */
void dti_persist_close(struct rchan *rchan)
{
	struct rchan_buf *buf;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		buf = *per_cpu_ptr(rchan->buf, cpu);
		if (!buf)
			continue;
		debugfs_remove(buf->dentry);
		kfree(buf->padding);
		kfree(buf);
	}
	free_percpu(rchan->buf);
	kfree(rchan);
}

/*
 * Rings over the area at @rings (physical @phys), one per possible CPU,
 * @stride bytes apart, with their per-CPU files and dump descriptor
 * entries.
 */
static struct rchan *dti_persist_rings(struct dti_channel *ch, void *rings,
				       phys_addr_t phys, u64 stride)
{
	char name[sizeof(DTI_TRACE_FILE_BASE) + 10];
	struct rchan_buf *buf;
	struct rchan *rchan;
	unsigned int cpu;

	rchan = kzalloc_obj(*rchan, GFP_KERNEL);
	if (!rchan)
		return NULL;
	rchan->buf = alloc_percpu(struct rchan_buf *);
	if (!rchan->buf) {
		kfree(rchan);
		return NULL;
	}
	kref_init(&rchan->kref);
	rchan->subbuf_size = ch->subbuf_size;
	rchan->n_subbufs = ch->n_subbufs;
	rchan->alloc_size = stride;
	rchan->cb = &dti_relay_callbacks;
	rchan->private_data = ch;
	for_each_possible_cpu(cpu) {
		buf = kzalloc_obj(*buf, GFP_KERNEL);
		if (!buf)
			goto err;
		*per_cpu_ptr(rchan->buf, cpu) = buf;
		buf->padding = kcalloc(ch->n_subbufs, sizeof(*buf->padding), GFP_KERNEL);
		if (!buf->padding)
			goto err;
		buf->chan = rchan;
		buf->cpu = cpu;
		buf->start = rings + cpu * stride;
		kref_init(&buf->kref);
		init_waitqueue_head(&buf->read_wait);
		dti_ring_start(buf);
		snprintf(name, sizeof(name), DTI_TRACE_FILE_BASE "%u", cpu);
		buf->dentry = debugfs_create_file(name, 0400, ch->dir, buf, &dti_ring_fops);
		if (IS_ERR(buf->dentry))
			buf->dentry = NULL;
		dti_dump_add_ring(ch, cpu, NULL, PHYS_PFN(phys + cpu * stride),
				  stride >> PAGE_SHIFT);
	}
	return rchan;
err:
	dti_persist_close(rchan);
	return NULL;
}

/* Bytes dti_persist_wipe() zeroes between two chances to reschedule */
#define DTI_PERSIST_WIPE_CHUNK	SZ_1M

/*
 * Zero the @len bytes at @start, an area this boot is about to write,
 * and write the zeroes back to RAM where the architecture can
 * (arch_wb_cache_pmem(); elsewhere they reach RAM as the cache evicts
 * them).  See the comment at the top of this file.
 */
static void dti_persist_wipe(void *start, u64 len)
{
	u64 done, chunk;

	for (done = 0; done < len; done += chunk) {
		chunk = min_t(u64, len - done, DTI_PERSIST_WIPE_CHUNK);
		memset(start + done, 0, chunk);
#ifdef CONFIG_ARCH_HAS_PMEM_API
		arch_wb_cache_pmem(start + done, chunk);
#endif
		cond_resched();
	}
}

/**
 * dti_persist_ready - does dti.ko have a persistent region?
 *
 * Registration asks before it takes a persistent channel, so that a
 * handle's channel, whose buffers come later, fails as a channel
 * registered directly does.
 *
 * Context: any.
 * Return: true if dti.ko was loaded with a region (persist=SIZE@ADDR).
 */
bool dti_persist_ready(void)
{
	return READ_ONCE(dti_persist.hdr);
}

/**
 * dti_persist_open - create a persistent channel's buffers in the region
 * @ch: channel with DTI_F_PERSIST, its ctl_lock held; its generation
 *	taken (dti_dump_new_buffers())
 *
 * Takes the channel's slot, zeroes the area this boot writes, marks it written
 * with the channel's geometry and generation, and builds a ring for each
 * possible CPU over it, with read-only trace0..N files.
 *
 * Context: process context; may sleep.
 * Return: what dti_persist_close() takes, or ERR_PTR(-ENODEV) without a
 * region, ERR_PTR(-ENOSPC) without room (why is logged), ERR_PTR(-ENOMEM).
 */
struct rchan *dti_persist_open(struct dti_channel *ch)
{
	u64 stride = dti_persist_stride(ch->subbuf_size, ch->n_subbufs);
	struct dti_persist *p = &dti_persist;
	struct dti_persist_area *area;
	struct rchan *rchan;
	int i;

	lockdep_assert_held(&ch->ctl_lock);
	if (!p->hdr) {
		pr_err("%s: a persistent channel, but dti.ko was loaded without a region (persist=SIZE@ADDR or persist=NAME)\n",
		       ch->name);
		return ERR_PTR(-ENODEV);
	}
	mutex_lock(&p->lock);
	i = dti_persist_slot_get(p, ch->name, stride * nr_cpu_ids);
	if (i < 0) {
		mutex_unlock(&p->lock);
		return ERR_PTR(i);
	}
	area = &p->slots[i].area[dti_persist_write_area(p, i)];
	dti_persist_wipe((void *)p->hdr + area->offset, stride * nr_cpu_ids);
	area->generation = ch->dump.generation;
	area->boot = p->hdr->boots;
	area->subbuf_size = ch->subbuf_size;
	area->n_subbufs = ch->n_subbufs;
	area->nr_cpus = nr_cpu_ids;
	area->state = DTI_PERSIST_AREA_USED;
	dti_persist_seal_slot(&p->slots[i]);
	rchan = dti_persist_rings(ch, (void *)p->hdr + area->offset, p->base + area->offset,
				  stride);
	mutex_unlock(&p->lock);
	return rchan ? rchan : ERR_PTR(-ENOMEM);
}

static int dti_region_show(struct seq_file *m, void *v)
{
	struct dti_persist *p = &dti_persist;
	const struct dti_persist_slot *slot;
	const struct dti_persist_area *area;
	unsigned int i, a;

	if (!p->hdr) {
		seq_puts(m, "region none\n");
		return 0;
	}
	seq_printf(m, "region %pa %llu\n", &p->base, p->size);
	seq_printf(m, "boots %u\n", p->hdr->boots);
	seq_printf(m, "found %s\n", dti_persist_found_names[p->found]);
	mutex_lock(&p->lock);
	seq_printf(m, "free %llu\n", p->size - p->hdr->next_free);
	seq_printf(m, "damaged_slots %u\n", p->n_bad);
	for (i = 0; i < DTI_PERSIST_SLOTS; i++) {
		slot = &p->slots[i];
		if (test_bit(i, p->bad) || !slot->name[0])
			continue;
		seq_printf(m, "slot %u %s area_size %llu\n", i, slot->name, slot->area_size);
		for (a = 0; a < ARRAY_SIZE(slot->area); a++) {
			area = &slot->area[a];
			seq_printf(m, "area %u %u offset %#llx ", i, a, area->offset);
			if (area->state == DTI_PERSIST_AREA_FREE)
				seq_puts(m, "free\n");
			else
				seq_printf(m, "boot %u %zux%u%s\n", area->boot,
					   (size_t)area->n_subbufs, area->subbuf_size,
					   a == p->prev_area[i] ? " previous" : "");
		}
	}
	mutex_unlock(&p->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dti_region);

/**
 * dti_persist_init - take the region persist= names, if any
 *
 * Maps it, keeps or sets up its header, counts this boot in it, and
 * creates /sys/kernel/debug/dti/.persist.
 *
 * Context: module load, after dti_fs_init().
 * Return: 0 (no region asked for, or the region taken), or -EINVAL when
 * the range is wrong (why is logged), -ENOMEM.  Built in, DTI comes up
 * without a region instead, and the message says so.
 */
int __init dti_persist_init(void)
{
	struct dti_persist *p = &dti_persist;
	bool named;
	int ret;

	if (dti_persist_arg[0]) {
		ret = dti_persist_parse(dti_persist_arg, &p->base, &p->size, &named);
		if (!ret)
			ret = dti_persist_check(p->base, p->size, named);
		if (ret)
			goto refused;
		if (p->size < dti_persist_areas_start() + 2 * PAGE_SIZE) {
			pr_err("persist=%s: too small; the header alone takes %llu bytes\n",
			       dti_persist_arg, dti_persist_areas_start());
			ret = -EINVAL;
			goto refused;
		}
		p->hdr = memremap(p->base, p->size, MEMREMAP_WB);
		if (!p->hdr) {
			pr_err("persist=%s: cannot map the range\n", dti_persist_arg);
			ret = -ENOMEM;
			goto refused;
		}
		p->slots = (void *)p->hdr + sizeof(*p->hdr);
		p->mods = (void *)(p->slots + DTI_PERSIST_SLOTS);
		p->found = dti_persist_examine(p);
		if (p->found != DTI_PERSIST_KEPT)
			dti_persist_format(p);
		p->hdr->boots++;
		dti_persist_seal(p);
		dti_dump_index_add(p->base);
		pr_info("persistent region %pa, %llu bytes, boot %u: %s\n", &p->base, p->size,
			p->hdr->boots, dti_persist_found_names[p->found]);
		p->prev_mods = dti_persist_prev_modules(p);
		dti_persist_load_slots(p);
		dti_modules_persist(&p->mods[p->hdr->boots % DTI_PERSIST_MODULE_TABLES],
				    p->hdr->boots);
	}
	debugfs_create_file(DTI_PERSIST_FILE, 0444, dti_fs_root(), NULL, &dti_region_fops);
	return 0;

refused:
	/* dti.ko is loaded again with another; a boot goes on without. */
	if (!DTI_BUILTIN)
		return ret;
	pr_err("persist=%s: ignored: no persistent region this boot\n", dti_persist_arg);
	p->base = 0;
	p->size = 0;
	dti_persist_arg[0] = '\0';
	debugfs_create_file(DTI_PERSIST_FILE, 0444, dti_fs_root(), NULL, &dti_region_fops);
	return 0;
}

/**
 * dti_persist_exit - let the region go; what it holds stays
 *
 * Context: module unload, or a failed load, before dti_fs_exit(); no
 * channel is left.
 */
void dti_persist_exit(void)
{
	struct dti_persist *p = &dti_persist;
	struct dti_prev *prev;
	unsigned int i;

	dti_modules_persist(NULL, 0);
	for (i = 0; i < DTI_PERSIST_SLOTS; i++) {
		prev = p->prev[i];
		p->prev[i] = NULL;
		if (!prev)
			continue;
		/* A clear's removal that has not run yet is done here. */
		cancel_work_sync(&prev->remove_work);
		debugfs_remove_recursive(prev->dir);
		dti_prev_put(prev);
	}
	debugfs_remove_recursive(p->prev_root);
	kfree(p->prev_mods);
	p->prev_mods = NULL;
	if (p->hdr) {
		dti_dump_index_del(p->base);
		memunmap(p->hdr);
	}
	p->hdr = NULL;
}
