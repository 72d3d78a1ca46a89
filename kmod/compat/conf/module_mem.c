// SPDX-License-Identifier: GPL-2.0
/* struct module's memory in mod->mem[MOD_TEXT], mod->mem[MOD_RODATA] (6.4): before, one core_layout block */
#include <linux/module.h>

static __maybe_unused unsigned long dti_conf(struct module *mod)
{
	return (unsigned long)mod->mem[MOD_TEXT].base + mod->mem[MOD_RODATA].size;
}
