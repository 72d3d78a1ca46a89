// SPDX-License-Identifier: GPL-2.0
/* The DTI handle API in twenty lines: cat /sys/kernel/debug/dti/hello/merged */
#include <linux/dti.h>
#include <linux/module.h>

DEFINE_DTI_HANDLE(hello_trace, "hello", 16 * 1024, DTI_LEVEL_INFO);

static int __init hello_init(void)
{
	int ret = INIT_DTI_HANDLE(hello_trace);

	if (!ret)
		dti_printk(hello_trace, DTI_LEVEL_INFO, "hello from cpu %d\n",
			   raw_smp_processor_id());
	return ret;
}

static void __exit hello_exit(void)
{
	CLEANUP_DTI_HANDLE(hello_trace);
}

module_init(hello_init);
module_exit(hello_exit);
MODULE_DESCRIPTION("DTI hello: a handle and one record");
MODULE_LICENSE("GPL");
