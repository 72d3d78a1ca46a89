/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DTI - the Driver Tracing Interface: per-CPU flight-recorder channels
 * for drivers, built on relay and debugfs.
 *
 * Low-level interface:
 *
 *	struct dti_info *t = dti_register("mydrv", 64 * 1024, DTI_LEVEL_ERR);
 *	if (IS_ERR(t))
 *		return PTR_ERR(t);
 *	__dti_printk(t, DTI_LEVEL_INFO, "state %d -> %d\n", old, new);
 *	__dti_event(t, DTI_LEVEL_DEBUG, &req, sizeof(req));
 *	dti_unregister(t);
 *
 * The logging macros compare the record's level with the channel's level
 * inline and evaluate their arguments only when the record is stored, so
 * calls at disabled levels may stay in production code.  Records and the
 * levels are defined in <uapi/linux/dti_record.h>.
 */
#ifndef _LINUX_DTI_H
#define _LINUX_DTI_H

#include <linux/compiler.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include <uapi/linux/dti_record.h>

/* dti_register_flags() flags */
#define DTI_F_NO_OVERWRITE	0x1	/* drop new records when full, keep old */

/* Sub-buffers per CPU buffer when dti_register() splits the size. */
#define DTI_DEFAULT_N_SUBBUFS	8

/* Limits on buffer geometry; registration refuses anything outside. */
#define DTI_SUBBUF_SIZE_MIN	512
#define DTI_SUBBUF_SIZE_MAX	(4U << 20)
#define DTI_N_SUBBUFS_MIN	2
#define DTI_N_SUBBUFS_MAX	4096
#define DTI_BUF_SIZE_MAX	(64U << 20)	/* per CPU */

/* Longest dti_printk() text; longer text is cut and flagged. */
#define DTI_TEXT_MAX		1024

/**
 * struct dti_cpu_stats - per-CPU counters of a channel
 * @filtered:	records refused by the level check (counted inline)
 * @written:	records stored in the relay buffer
 * @overwritten: stored records since overwritten by newer ones
 * @dropped:	records lost for lack of space (no-overwrite mode); each
 *		one leaves a gap in the sequence numbers
 * @rejected:	records refused for bad arguments (oversize, bad level)
 * @nmi:	records refused because they were logged from NMI context
 * @seq:	next sequence number; always @written + @dropped
 */
struct dti_cpu_stats {
	u64 filtered;
	u64 written;
	u64 overwritten;
	u64 dropped;
	u64 rejected;
	u64 nmi;
	u64 seq;
};

/**
 * struct dti_info - a DTI channel, as drivers see it
 * @level:	current level; records with a level above it are not stored
 * @stats:	per-CPU counters
 *
 * The rest of the channel is private to dti.ko.
 */
struct dti_info {
	int level;
	struct dti_cpu_stats __percpu *stats;
};

struct dti_info *dti_register_flags(const char *name, size_t subbuf_size,
				    size_t n_subbufs, int init_level,
				    unsigned int flags);
struct dti_info *__dti_register(const char *name, size_t subbuf_size,
				size_t n_subbufs, int init_level);
struct dti_info *dti_register(const char *name, size_t size, int init_level);
void dti_unregister(struct dti_info *trace);
int dti_set_level(struct dti_info *trace, int level);

__printf(3, 4)
int dti_printk_raw(struct dti_info *trace, int level, const char *fmt, ...);
int dti_event_raw(struct dti_info *trace, int level, const void *buf,
		  size_t len);
void *dti_reserve_raw(struct dti_info *trace, int level, size_t len);

/**
 * dti_enabled - would a record at @level be stored?
 * @trace: channel
 * @level: level of the record
 *
 * The inline part of every logging call: one load and one compare.  A
 * refused record is counted in the CPU's @filtered counter.
 *
 * Return: true if the channel's level is @level or higher.
 */
static __always_inline bool dti_enabled(struct dti_info *trace, int level)
{
	if (likely(level > READ_ONCE(trace->level))) {
		this_cpu_inc(trace->stats->filtered);
		return false;
	}
	return true;
}

/**
 * __dti_printk - log a printk-style text record
 * @trace: channel
 * @level: record level, 0..DTI_LEVEL_MAX
 * @fmt: printf format; the arguments are evaluated only if stored
 *
 * Return: 0 if stored or filtered by level, else a negative errno as for
 * dti_printk_raw().
 */
#define __dti_printk(trace, level, fmt, ...)				\
({									\
	struct dti_info *__dti_t = (trace);				\
	int __dti_l = (level);						\
	dti_enabled(__dti_t, __dti_l) ?					\
		dti_printk_raw(__dti_t, __dti_l, fmt, ##__VA_ARGS__) : 0; \
})

/**
 * __dti_event - log a binary record
 * @trace: channel
 * @level: record level
 * @buf: bytes to copy into the record
 * @len: number of bytes
 *
 * Return: as dti_event_raw(); 0 if filtered.
 */
#define __dti_event(trace, level, buf, len)				\
({									\
	struct dti_info *__dti_t = (trace);				\
	int __dti_l = (level);						\
	dti_enabled(__dti_t, __dti_l) ?					\
		dti_event_raw(__dti_t, __dti_l, buf, len) : 0;		\
})

/**
 * __dti_reserve - reserve space for a binary record the caller fills in
 * @trace: channel
 * @level: record level
 * @len: payload length
 *
 * Context: interrupts disabled, from the reservation until the payload
 * is filled in.
 * Return: pointer to @len bytes of payload, or NULL if filtered or not
 * stored.
 */
#define __dti_reserve(trace, level, len)				\
({									\
	struct dti_info *__dti_t = (trace);				\
	int __dti_l = (level);						\
	dti_enabled(__dti_t, __dti_l) ?					\
		dti_reserve_raw(__dti_t, __dti_l, len) : NULL;		\
})

#endif /* _LINUX_DTI_H */
