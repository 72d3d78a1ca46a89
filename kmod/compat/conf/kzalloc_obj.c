// SPDX-License-Identifier: GPL-2.0
/* kzalloc_obj(*p, gfp): a zeroed object of the type p points to (7.0) */
#include <linux/slab.h>

struct dti_conf_obj {
	int a;
};

static __maybe_unused struct dti_conf_obj *dti_conf(void)
{
	struct dti_conf_obj *p = kzalloc_obj(*p, GFP_KERNEL);

	return p;
}
