// SPDX-License-Identifier: GPL-2.0
/* __per_cpu_load: where the static per-CPU section's template was loaded, apart from where it is linked (until 6.15 on x86-64; the same place elsewhere) */
#include <asm/sections.h>

static __maybe_unused char *dti_conf(void)
{
	return __per_cpu_load;
}
