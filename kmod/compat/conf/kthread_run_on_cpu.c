// SPDX-License-Identifier: GPL-2.0
/* kthread_run_on_cpu() (5.16) */
#include <linux/kthread.h>

static __maybe_unused struct task_struct *dti_conf(int (*fn)(void *), void *data)
{
	return kthread_run_on_cpu(fn, data, 0, "dti_conf/%u");
}
