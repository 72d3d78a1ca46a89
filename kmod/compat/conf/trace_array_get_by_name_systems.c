// SPDX-License-Identifier: GPL-2.0
/* trace_array_get_by_name() takes the instance's event systems (6.7) */
#include <linux/stddef.h>
#include <linux/trace.h>

static __maybe_unused struct trace_array *dti_conf(void)
{
	return trace_array_get_by_name("dti_conf", NULL);
}
