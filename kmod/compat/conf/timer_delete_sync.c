// SPDX-License-Identifier: GPL-2.0
/* timer_delete_sync() (6.2; del_timer_sync() is gone from 6.15) */
#include <linux/timer.h>

static __maybe_unused int dti_conf(struct timer_list *t)
{
	return timer_delete_sync(t);
}
