// SPDX-License-Identifier: GPL-2.0
/* timer_container_of() (6.16; from_timer() before) */
#include <linux/timer.h>

struct dti_conf_s {
	struct timer_list timer;
};

static __maybe_unused struct dti_conf_s *dti_conf(struct timer_list *t)
{
	struct dti_conf_s *s = timer_container_of(s, t, timer);

	return s;
}
