// SPDX-License-Identifier: GPL-2.0
/* reserve_mem_find_by_name(): reserve_mem= regions found by name (6.11) */
#include <linux/mm.h>

static __maybe_unused int dti_conf(const char *name, phys_addr_t *start,
				   phys_addr_t *size)
{
	return reserve_mem_find_by_name(name, start, size);
}
