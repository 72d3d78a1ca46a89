/* SPDX-License-Identifier: GPL-2.0 */
/*
 * s390dbf calls on top of DTI, so a driver written for the s390 debug
 * feature (arch/s390/include/asm/debug.h) can log to DTI on any
 * architecture by including this header instead.
 *
 *   s390dbf                                  DTI
 *   debug_register(name, pages, areas, len)  dti_register(name, size, DEBUG_DEFAULT_LEVEL)
 *   debug_unregister(id)                     dti_unregister(id)
 *   debug_event(id, level, data, len)        __dti_event(id, level, data, len)
 *   debug_text_event(id, level, text)        __dti_printk(id, level, "%s", text)
 *   debug_sprintf_event(id, level, fmt, ...) __dti_printk(id, level, fmt, ...)
 *   debug_set_level(id, level)               dti_set_level(id, level)
 *
 * The buffer size is pages_per_area * nr_areas pages per CPU.  s390dbf
 * levels 0..6 are DTI levels 0..6; DEBUG_OFF_LEVEL is DTI_LEVEL_OFF.
 * s390dbf's per-entry buf_size has no meaning for DTI, whose records have
 * the length they are logged with.  Views (debug_register_view()) do not
 * exist: DTI's merged and merged-ts files take their place.
 */
#ifndef _LINUX_DTI_S390DBF_H
#define _LINUX_DTI_S390DBF_H

#include <linux/dti.h>
#include <linux/err.h>
#include <linux/mm.h>

#ifdef CONFIG_S390
#error "s390 has the real debug feature; include <asm/debug.h> there"
#endif

#define DEBUG_MAX_LEVEL		6
#define DEBUG_OFF_LEVEL		DTI_LEVEL_OFF
#define DEBUG_DEFAULT_LEVEL	3

#define debug_info_t		struct dti_info
/* s390dbf returns the entry written; here only NULL tells anything. */
#define debug_entry_t		void

static inline debug_info_t *debug_register(const char *name,
					   int pages_per_area, int nr_areas,
					   int buf_size)
{
	struct dti_info *id;

	if (pages_per_area <= 0 || nr_areas <= 0)
		return NULL;
	id = dti_register(name, (size_t)pages_per_area * nr_areas * PAGE_SIZE,
			  DEBUG_DEFAULT_LEVEL);
	return IS_ERR(id) ? NULL : id;
}

static inline void debug_unregister(debug_info_t *id)
{
	dti_unregister(id);
}

static inline void debug_set_level(debug_info_t *id, int new_level)
{
	if (new_level >= DEBUG_OFF_LEVEL && new_level <= DEBUG_MAX_LEVEL)
		dti_set_level(id, new_level);
}

/* Non-NULL if the entry was stored or filtered, as s390dbf's never fail. */
static inline debug_entry_t *debug_event(debug_info_t *id, int level,
					 void *data, int length)
{
	return __dti_event(id, level, data, length) ? NULL : id;
}

static inline debug_entry_t *debug_text_event(debug_info_t *id, int level,
					      const char *txt)
{
	return __dti_printk(id, level, "%s", txt) ? NULL : id;
}

#define debug_sprintf_event(id, level, fmt, ...) ({			\
	debug_info_t *__dti_id = (id);					\
									\
	__dti_printk(__dti_id, level, fmt, ##__VA_ARGS__) ?		\
		NULL : (debug_entry_t *)__dti_id;			\
})

#endif /* _LINUX_DTI_S390DBF_H */
