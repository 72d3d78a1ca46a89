// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test module: loads cleanly (warn=0) or emits one kernel
 * WARNING on load (warn=1), so the splat detector can be checked end to end.
 */
#include <linux/module.h>
#include <linux/kernel.h>

static int warn;
module_param(warn, int, 0444);
MODULE_PARM_DESC(warn, "emit a WARNING on load");

static int __init dti_splat_init(void)
{
	pr_info("dti_splat: loaded (warn=%d)\n", warn);
	WARN(warn, "dti_splat: deliberate warning for the harness self-test\n");
	return 0;
}

static void __exit dti_splat_exit(void)
{
	pr_info("dti_splat: unloaded\n");
}

module_init(dti_splat_init);
module_exit(dti_splat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("DTI harness self-test: deliberate WARNING");
