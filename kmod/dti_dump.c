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

#include "dti_internal.h"

/* Next buffer generation; starts at random so that a previous boot's
 * pages, which a warm reset keeps, carry other numbers. */
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
	d->nr_cpu_ids = nr_cpu_ids;
	d->page_size = PAGE_SIZE;
	d->level_addr = dti_kaddr_to_phys(&ch->info->level);
	/* No one else can see the channel yet. */
	d->crc = dti_crc32(d, sizeof(*d));
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
 *
 * Context: any but NMI.
 */
void dti_dump_pending_seal(struct dti_pending *p)
{
	struct dti_dump_pending *d = &p->dump;

	WRITE_ONCE(d->magic, DTI_DUMP_MAGIC);
	d->crc = 0;
	d->crc = dti_crc32(d, sizeof(*d));
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
	WRITE_ONCE(p->dump.magic, 0);
}

/**
 * dti_dump_setup - start the generation counter
 */
void __init dti_dump_setup(void)
{
	atomic_set(&dti_generation, get_random_u32());
}
