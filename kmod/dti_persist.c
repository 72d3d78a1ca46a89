// SPDX-License-Identifier: GPL-2.0
/*
 * DTI's persistent region: RAM that keeps its contents across a reset.
 *
 * The persist= module parameter, "SIZE@ADDR" (memparse() sizes: 16M,
 * 0x1000000), names a physical range the kernel was told to leave
 * alone: memmap=SIZE$ADDR on x86 (the firmware map then says
 * "reserved" there and the kernel never uses it), reserve_mem= from
 * 6.11.  dti.ko refuses to load with a range that is not page-aligned,
 * that overlaps RAM the kernel manages, or (on x86) that the memory map
 * does not say is reserved: writing into RAM that some other user owns
 * would corrupt it silently.
 *
 * The region starts with struct dti_persist_header (dti_record.h).  A
 * load that finds a header whose every field checks out keeps what the
 * region holds, the previous boot's; any other content is RAM that was
 * not kept (a cold boot, a first use) or is damaged, and the region is
 * set up anew.  /sys/kernel/debug/dti/.persist tells which.
 *
 * Everything here runs at module load and unload, and from the file's
 * read: process context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#ifdef CONFIG_X86
#include <asm/e820/api.h>
#endif

#include "dti_internal.h"

/*
 * The region's file under /sys/kernel/debug/dti: a channel name cannot
 * start with a dot, so it never clashes with a channel's directory.
 */
#define DTI_PERSIST_FILE	".persist"

/* Longest persist= value: "SIZE@ADDR" with both in hex and a suffix */
#define DTI_PERSIST_ARG_MAX	48

static char dti_persist_arg[DTI_PERSIST_ARG_MAX];
module_param_string(persist, dti_persist_arg, sizeof(dti_persist_arg), 0444);
MODULE_PARM_DESC(persist,
		 "SIZE@ADDR: reserved RAM (memmap=SIZE$ADDR on x86) that keeps persistent channels' records across a reset");

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

/**
 * struct dti_persist - the region of this load
 * @base:	physical address
 * @size:	bytes
 * @hdr:	its mapping, the header first
 * @found:	what the load found there
 */
static struct dti_persist {
	phys_addr_t base;
	u64 size;
	struct dti_persist_header *hdr;
	enum dti_persist_found found;
} dti_persist;

static u32 dti_persist_crc(const struct dti_persist_header *hdr)
{
	struct dti_persist_header copy = *hdr;

	copy.crc = 0;
	return dti_crc32(&copy, sizeof(copy));
}

/*
 * Parse "SIZE@ADDR" into @base and @size.  Return: 0, or -EINVAL with
 * the reason logged.
 */
static int dti_persist_parse(const char *arg, phys_addr_t *base, u64 *size)
{
	char *at, *end;

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
 * Whether [@base, @base + @size) is RAM the kernel was told to leave
 * alone.  Return: 0, or -EINVAL with the reason logged.
 */
static int dti_persist_check(phys_addr_t base, u64 size)
{
	if (!PAGE_ALIGNED(base) || !PAGE_ALIGNED(size) ||
	    size < PAGE_SIZE || base + size < base) {
		pr_err("persist=%s: the address and the size must be multiples of the page size (%lu)\n",
		       dti_persist_arg, PAGE_SIZE);
		return -EINVAL;
	}
	if (region_intersects(base, size, IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE) !=
	    REGION_DISJOINT) {
		pr_err("persist=%s: the range is RAM the kernel uses; reserve it first: memmap=%#llx$%#llx on the kernel command line (x86; quote the $ for the boot loader), or reserve_mem= from 6.11\n",
		       dti_persist_arg, size, (unsigned long long)base);
		return -EINVAL;
	}
#ifdef CONFIG_X86
	if (!e820__mapped_any(base, base + size, E820_TYPE_RESERVED)) {
		pr_err("persist=%s: the memory map does not say the range is reserved RAM (see the e820 lines at boot); reserve it with memmap=%#llx$%#llx\n",
		       dti_persist_arg, size, (unsigned long long)base);
		return -EINVAL;
	}
#endif
	return 0;
}

/* Set up the header of a region that holds nothing of a previous boot */
static void dti_persist_format(struct dti_persist *p)
{
	struct dti_persist_header *hdr = p->hdr;

	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr->marker, DTI_PERSIST_MARKER, sizeof(DTI_PERSIST_MARKER));
	hdr->magic = DTI_PERSIST_MAGIC;
	hdr->version = DTI_PERSIST_VERSION;
	hdr->size = p->size;
	hdr->base = p->base;
	hdr->header_size = sizeof(*hdr);
}

/* What the region's header says of the previous boot */
static enum dti_persist_found dti_persist_examine(const struct dti_persist *p)
{
	const struct dti_persist_header *hdr = p->hdr;

	if (memcmp(hdr->marker, DTI_PERSIST_MARKER, sizeof(DTI_PERSIST_MARKER)))
		return DTI_PERSIST_NEW;
	if (hdr->magic != DTI_PERSIST_MAGIC || hdr->version != DTI_PERSIST_VERSION ||
	    hdr->size != p->size || hdr->base != p->base ||
	    hdr->header_size != sizeof(*hdr) || hdr->crc != dti_persist_crc(hdr))
		return DTI_PERSIST_DAMAGED;
	return DTI_PERSIST_KEPT;
}

static int dti_persist_show(struct seq_file *m, void *v)
{
	struct dti_persist *p = &dti_persist;

	if (!p->hdr) {
		seq_puts(m, "region none\n");
		return 0;
	}
	seq_printf(m, "region %pa %llu\n", &p->base, p->size);
	seq_printf(m, "boots %u\n", p->hdr->boots);
	seq_printf(m, "found %s\n", dti_persist_found_names[p->found]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dti_persist);

/**
 * dti_persist_init - take the region persist= names, if any
 *
 * Maps it, keeps or sets up its header, counts this boot in it, and
 * creates /sys/kernel/debug/dti/.persist.
 *
 * Context: module load, after dti_fs_init().
 * Return: 0 (no region asked for, or the region taken), or -EINVAL when
 * the range is wrong (why is logged), -ENOMEM.
 */
int __init dti_persist_init(void)
{
	struct dti_persist *p = &dti_persist;
	int ret;

	if (dti_persist_arg[0]) {
		ret = dti_persist_parse(dti_persist_arg, &p->base, &p->size);
		if (!ret)
			ret = dti_persist_check(p->base, p->size);
		if (ret)
			return ret;
		p->hdr = memremap(p->base, p->size, MEMREMAP_WB);
		if (!p->hdr) {
			pr_err("persist=%s: cannot map the range\n", dti_persist_arg);
			return -ENOMEM;
		}
		p->found = dti_persist_examine(p);
		if (p->found != DTI_PERSIST_KEPT)
			dti_persist_format(p);
		p->hdr->boots++;
		p->hdr->crc = dti_persist_crc(p->hdr);
		pr_info("persistent region %pa, %llu bytes, boot %u: %s\n", &p->base, p->size,
			p->hdr->boots, dti_persist_found_names[p->found]);
	}
	debugfs_create_file(DTI_PERSIST_FILE, 0444, dti_fs_root(), NULL, &dti_persist_fops);
	return 0;
}

/**
 * dti_persist_exit - let the region go; what it holds stays
 *
 * Context: module unload.
 */
void dti_persist_exit(void)
{
	if (dti_persist.hdr)
		memunmap(dti_persist.hdr);
	dti_persist.hdr = NULL;
}
