// SPDX-License-Identifier: GPL-2.0
/*
 * Dump descriptors: what lets a reader find a channel's records in a
 * memory dump with nothing but the dump (see struct dti_dump_desc in
 * <uapi/linux/dti_record.h> for the layout a reader sees).
 *
 * Each channel carries its descriptor behind its "__DTI__<name>" marker.
 * It describes the buffers the channel has now: their geometry, their
 * generation (which every sub-buffer header repeats, so that pages of a
 * freed ring are never taken for live ones) and, per CPU, the page frames
 * of the ring.  It changes only when buffers are created, when relay
 * gives a CPU that came online its buffer, and when buffers are freed;
 * never per record.  The channel's level is read through its address.
 *
 * Every change is made under the channel's dump_lock, a mutex: all of
 * them run in process context (registration, the channel's work item,
 * relay's callbacks from relay_open() and CPU hotplug).  Lock order:
 * relay's relay_channels_mutex (held around the callbacks), then
 * dump_lock; nothing is called with dump_lock held that takes another
 * lock.  A dump taken while a change is under way finds a CRC that does
 * not match, and the reader skips that channel: it cannot be trusted.
 *
 * Pending stores get a descriptor of their own (struct dti_dump_pending),
 * since an early handle's store holds records before its channel exists.
 *
 * Built into the kernel, DTI also lists every descriptor's physical
 * address in the dump index (struct dti_dump_index), which a VMCOREINFO
 * line names, so that a dump reader need not scan memory for markers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/kmemleak.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#if IS_BUILTIN(CONFIG_DTI) && IS_ENABLED(CONFIG_VMCORE_INFO)	/* DTI_DUMP_INDEX */
#include <linux/vmcore_info.h>
#endif

#include "dti_internal.h"

/*
 * Next buffer generation; starts at random so that a previous boot's
 * pages, which a warm reset keeps, carry other numbers.
 */
static atomic_t dti_generation;

/*
 * Physical address of @p: kmalloc()ed memory is in the direct map;
 * module data, where handles live, is mapped page by page, as vmalloc()
 * memory is.
 */
static u64 dti_kaddr_to_phys(void *p)
{
	if (virt_addr_valid(p))
		return virt_to_phys(p);
	return page_to_phys(vmalloc_to_page(p)) + offset_in_page(p);
}

/* List the descriptor at @desc in the dump index, if there is one. */
static void dti_dump_list(void *desc)
{
	if (DTI_DUMP_INDEX)
		dti_dump_index_add(dti_kaddr_to_phys(desc));
}

/* Take the descriptor at @desc out of the dump index, if there is one. */
static void dti_dump_unlist(void *desc)
{
	if (DTI_DUMP_INDEX)
		dti_dump_index_del(dti_kaddr_to_phys(desc));
}

/* Recompute the descriptor's CRC after a change; dump_lock held. */
static void dti_dump_seal(struct dti_channel *ch)
{
	struct dti_dump_desc *d = &ch->dump;

	lockdep_assert_held(&ch->dump_lock);
	d->cpu_table_crc = d->cpu_table ?
		dti_crc32(ch->dump_cpus, nr_cpu_ids * sizeof(*ch->dump_cpus)) : 0;
	d->crc = 0;
	d->crc = dti_crc32(d, sizeof(*d));
}

/*
 * The fields every descriptor begins with: marker, magic, version, type
 * (@type) and size, for @d, a struct dti_dump_desc or dti_dump_pending.
 */
#define DTI_DUMP_HEAD_INIT(d, type_, name) do {				\
	snprintf((d)->marker, sizeof((d)->marker), "%s%s",		\
		 DTI_MARKER_PREFIX, (name));				\
	(d)->magic = DTI_DUMP_MAGIC;					\
	(d)->version = DTI_DUMP_VERSION;				\
	(d)->type = (type_);						\
	(d)->size = sizeof(*(d));					\
} while (0)

/**
 * dti_dump_init - fill in a new channel's descriptor
 * @ch: channel being allocated; its name, geometry, flags and info set
 * @name: channel name, valid
 *
 * Built in, the descriptor is listed in the dump index until
 * dti_dump_wipe().
 *
 * Context: any but NMI; allocates nothing.
 */
void dti_dump_init(struct dti_channel *ch, const char *name)
{
	struct dti_dump_desc *d = &ch->dump;

	BUILD_BUG_ON(DTI_MARKER_PREFIX_LEN + DTI_NAME_MAX + 1 >
		     DTI_DUMP_MARKER_SIZE);
	mutex_init(&ch->dump_lock);
	DTI_DUMP_HEAD_INIT(d, DTI_DUMP_CHANNEL, name);
	if (ch->flags & DTI_F_NO_OVERWRITE)
		d->flags |= DTI_DUMP_F_NO_OVERWRITE;
	if (ch->info->pending)
		d->flags |= DTI_DUMP_F_HANDLE;
	if (ch->flags & DTI_F_PERSIST)
		d->flags |= DTI_DUMP_F_PERSIST;
	d->subbuf_size = ch->subbuf_size;
	d->n_subbufs = ch->n_subbufs;
	d->nr_cpus = nr_cpu_ids;
	d->page_size = PAGE_SIZE;
	d->level_addr = dti_kaddr_to_phys(&ch->info->level);
	/* No one else can see the channel yet. */
	d->crc = dti_crc32(d, sizeof(*d));
	dti_dump_list(d);
}

/**
 * dti_dump_wipe - wipe a channel's descriptor before it is freed
 * @ch: channel no one can reach any more
 *
 * A dump taken later, with the memory not yet reused, must not show the
 * channel as live.
 *
 * Context: any but NMI.
 */
void dti_dump_wipe(struct dti_channel *ch)
{
	/* Buffers are freed before their channel, and their table with them. */
	WARN_ON_ONCE(ch->dump_cpus);
	dti_dump_unlist(&ch->dump);
	memzero_explicit(&ch->dump, sizeof(ch->dump));
}

/**
 * dti_dump_new_buffers - prepare the descriptor for buffers being created
 * @ch: channel, its ctl_lock held; relay_open() follows
 *
 * Takes a new generation, which dti_subbuf_start() writes into every
 * sub-buffer header, and allocates the CPU table that relay's
 * create_buf_file callback fills in (dti_dump_add_buf()).  Without
 * memory the channel still works, but a dump cannot show it.
 *
 * Context: process context; may sleep.
 */
void dti_dump_new_buffers(struct dti_channel *ch)
{
	struct dti_dump_cpu *cpus;
	u32 gen;

	cpus = kcalloc(nr_cpu_ids, sizeof(*cpus), GFP_KERNEL | __GFP_NOWARN);
	if (!cpus)
		pr_warn("%s: no memory for the dump descriptor: a memory dump will not show this channel\n",
			ch->name);
	do {
		gen = atomic_inc_return(&dti_generation);
	} while (!gen);

	mutex_lock(&ch->dump_lock);
	ch->dump_cpus = cpus;
	ch->dump.generation = gen;
	ch->dump.cpu_table = cpus ? dti_kaddr_to_phys(cpus) : 0;
	if (cpus)
		ch->dump.flags |= DTI_DUMP_F_BUFFERS;
	dti_dump_seal(ch);
	mutex_unlock(&ch->dump_lock);
}

/**
 * dti_dump_add_ring - enter a CPU's new ring in the descriptor
 * @ch: channel
 * @cpu: the ring's CPU
 * @pages: its pages in ring order, or NULL if they are contiguous
 * @first_pfn: with @pages NULL, the page frame of the first page
 * @n_pages: pages of the ring
 *
 * A ring of buffers the descriptor no longer lists (relay creating one
 * for a CPU coming online while the channel's buffers are being freed)
 * is left out.
 *
 * Context: process context; may sleep.
 */
void dti_dump_add_ring(struct dti_channel *ch, unsigned int cpu, struct page **pages,
		       u64 first_pfn, size_t n_pages)
{
	struct dti_dump_cpu *entry;
	u64 *pfns;
	size_t i;

	if (WARN_ON_ONCE(cpu >= nr_cpu_ids))
		return;
	pfns = kmalloc_array(n_pages, sizeof(*pfns), GFP_KERNEL | __GFP_NOWARN);
	if (!pfns) {
		pr_warn("%s: no memory to describe cpu%u's buffer: a memory dump will not show it\n",
			ch->name, cpu);
		return;
	}
	for (i = 0; i < n_pages; i++)
		pfns[i] = pages ? page_to_pfn(pages[i]) : first_pfn + i;
	/*
	 * Only the descriptor's physical address points at it, which
	 * kmemleak does not follow; it holds no pointers to scan.
	 */
	kmemleak_ignore(pfns);

	mutex_lock(&ch->dump_lock);
	if (!ch->dump_cpus || ch->dump_cpus[cpu].pfns) {
		mutex_unlock(&ch->dump_lock);
		kfree(pfns);
		return;
	}
	entry = &ch->dump_cpus[cpu];
	entry->n_pages = n_pages;
	entry->pfns_crc = dti_crc32(pfns, n_pages * sizeof(*pfns));
	entry->pfns = dti_kaddr_to_phys(pfns);
	dti_dump_seal(ch);
	mutex_unlock(&ch->dump_lock);
}

/**
 * dti_dump_add_buf - enter a CPU's new relay buffer in the descriptor
 * @ch: channel
 * @buf: the buffer, its pages allocated
 * @cpu: its CPU
 *
 * Called from relay's create_buf_file callback, for each CPU at
 * relay_open() and for each CPU that comes online later.
 *
 * Context: process context, relay_channels_mutex held; may sleep.
 */
void dti_dump_add_buf(struct dti_channel *ch, struct rchan_buf *buf,
		      unsigned int cpu)
{
	dti_dump_add_ring(ch, cpu, buf->page_array, 0, buf->page_count);
}

/**
 * dti_dump_buffers_gone - take the buffers out of the descriptor
 * @ch: channel whose buffers are about to be freed, or failed to be
 *	created; no writer reaches them any more
 *
 * Context: process context; may sleep.
 */
void dti_dump_buffers_gone(struct dti_channel *ch)
{
	struct dti_dump_cpu *cpus;
	unsigned int cpu;

	mutex_lock(&ch->dump_lock);
	cpus = ch->dump_cpus;
	ch->dump_cpus = NULL;
	ch->dump.cpu_table = 0;
	ch->dump.flags &= ~DTI_DUMP_F_BUFFERS;
	dti_dump_seal(ch);
	mutex_unlock(&ch->dump_lock);

	if (!cpus)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (cpus[cpu].pfns)
			kfree(phys_to_virt(cpus[cpu].pfns));
	kfree(cpus);
}

/**
 * dti_dump_pending_init - give a pending store allocated at run time its
 * descriptor
 * @p: pending store, its buffer and size set
 * @name: name of the channel it serves
 *
 * Stores defined statically get theirs from DTI_DUMP_PENDING_INIT().
 *
 * Context: any but NMI.
 */
void dti_dump_pending_init(struct dti_pending *p, const char *name)
{
	struct dti_dump_pending *d = &p->dump;

	memset(d, 0, sizeof(*d));
	DTI_DUMP_HEAD_INIT(d, DTI_DUMP_PENDING, name);
	d->used_offset = offsetof(struct dti_pending, used) -
			 offsetof(struct dti_pending, dump);
	d->buf = (unsigned long)p->buf;
	d->buf_size = p->size;
	dti_dump_pending_seal(p);
}

/**
 * dti_dump_pending_seal - compute a pending store descriptor's CRC
 * @p: pending store whose descriptor is complete
 *
 * For a handle's static store, done when the handle is initialised.
 * Built in, the descriptor is listed in the dump index from then on.
 *
 * Context: any but NMI.
 */
void dti_dump_pending_seal(struct dti_pending *p)
{
	struct dti_dump_pending *d = &p->dump;

	WRITE_ONCE(d->magic, DTI_DUMP_MAGIC);
	d->crc = 0;
	d->crc = dti_crc32(d, sizeof(*d));
	dti_dump_list(d);
}

/**
 * dti_dump_pending_wipe - make a pending store invisible to dump readers
 * @p: pending store whose channel is gone: the memory of a handle goes
 *     with its module, unwiped
 *
 * Context: any but NMI.
 */
void dti_dump_pending_wipe(struct dti_pending *p)
{
	dti_dump_unlist(&p->dump);
	WRITE_ONCE(p->dump.magic, 0);
}

/**
 * dti_dump_setup - start the generation counter
 */
void __init dti_dump_setup(void)
{
	atomic_set(&dti_generation, get_random_u32());
}

#if DTI_DUMP_INDEX
/*
 * The dump index (struct dti_dump_index in <uapi/linux/dti_record.h>):
 * one page of the kernel's data, so physically contiguous, listing the
 * physical address of every descriptor.  Slots are filled and cleared
 * from any context but NMI (channels and their pending stores come and
 * go so), under dti_index_lock, and every change seals the table anew.
 * Of a dump taken in the middle of a change, a reader finds a CRC that
 * does not match, and scans.
 */
static struct dti_dump_index dti_index __page_aligned_data = {
	.magic = DTI_INDEX_MAGIC,
	.version = DTI_INDEX_VERSION,
	.size = sizeof(struct dti_dump_index),
	.n_slots = DTI_INDEX_SLOTS,
};

static DEFINE_RAW_SPINLOCK(dti_index_lock);

/* Count a change and recompute the index's CRC; dti_index_lock held. */
static void dti_index_seal(void)
{
	lockdep_assert_held(&dti_index_lock);
	dti_index.changes++;
	WRITE_ONCE(dti_index.crc, DTI_CRC32_SEALED(&dti_index));
}

/**
 * dti_dump_index_add - list a descriptor in the dump index
 * @phys: physical address of the descriptor, complete and sealed; one
 *	  listed already is left as it is
 *
 * A descriptor that finds no free slot marks the index as overflowed
 * for the rest of the boot: readers then scan for markers, as they do
 * for dti.ko.
 *
 * Context: any but NMI.
 */
void dti_dump_index_add(u64 phys)
{
	unsigned int i, free = DTI_INDEX_SLOTS;
	unsigned long flags;
	bool full = false;

	/*
	 * The descriptor is stored before its slot.  A dump reader reads
	 * the slot, then the descriptor, in the memory of a stopped
	 * machine: it has no barrier to pair with this one.
	 */
	smp_wmb();
	raw_spin_lock_irqsave(&dti_index_lock, flags);
	for (i = 0; i < DTI_INDEX_SLOTS; i++) {
		if (dti_index.slot[i] == phys)
			goto out;
		if (!dti_index.slot[i] && free == DTI_INDEX_SLOTS)
			free = i;
	}
	if (free < DTI_INDEX_SLOTS) {
		WRITE_ONCE(dti_index.slot[free], phys);
	} else {
		full = !dti_index.overflowed;
		WRITE_ONCE(dti_index.overflowed, 1);
	}
	dti_index_seal();
out:
	raw_spin_unlock_irqrestore(&dti_index_lock, flags);
	if (full)
		pr_warn("dump index full (%u descriptors): dump readers will scan memory for channels\n",
			DTI_INDEX_SLOTS);
}

/**
 * dti_dump_index_del - take a descriptor out of the dump index
 * @phys: physical address of the descriptor, which is about to be
 *	  wiped; one not listed is ignored
 *
 * Context: any but NMI.
 */
void dti_dump_index_del(u64 phys)
{
	unsigned long flags;
	unsigned int i;

	raw_spin_lock_irqsave(&dti_index_lock, flags);
	for (i = 0; i < DTI_INDEX_SLOTS; i++) {
		if (dti_index.slot[i] == phys) {
			WRITE_ONCE(dti_index.slot[i], 0);
			dti_index_seal();
			break;
		}
	}
	raw_spin_unlock_irqrestore(&dti_index_lock, flags);
	/*
	 * The slot is cleared before the descriptor is wiped; as in
	 * dti_dump_index_add(), the dump reader has no barrier to pair.
	 */
	smp_wmb();
}

/*
 * Name the dump index in VMCOREINFO.  crash_save_vmcoreinfo_init(), a
 * subsys_initcall, allocates vmcoreinfo_data and builds the note from
 * it, after DTI's own init (postcore_initcall).  Appending a line does
 * not rebuild the note, which QEMU reads at dump-guest-memory (the
 * address qemu_fw_cfg handed over) and which kdump copies when its
 * kernel is loaded: it is rebuilt here as the init built it.
 */
static int __init dti_dump_vmcoreinfo(void)
{
	unsigned long flags;
	u32 *buf;

	if (!vmcoreinfo_data || !vmcoreinfo_note)
		return 0;
	raw_spin_lock_irqsave(&dti_index_lock, flags);
	dti_index_seal();
	raw_spin_unlock_irqrestore(&dti_index_lock, flags);
	vmcoreinfo_append_str("%s=0x%llx\n", DTI_VMCOREINFO_KEY,
			      (unsigned long long)__pa_symbol(&dti_index));
	buf = append_elf_note(vmcoreinfo_note, VMCOREINFO_NOTE_NAME, 0,
			      vmcoreinfo_data, vmcoreinfo_size);
	final_note(buf);
	return 0;
}
subsys_initcall_sync(dti_dump_vmcoreinfo);
#endif /* DTI_DUMP_INDEX */
