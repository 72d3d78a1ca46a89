// SPDX-License-Identifier: GPL-2.0
/* hrtimer_setup() sets a timer's callback with its clock and mode (6.13; hrtimer_init() is gone from 6.15) */
#include <linux/hrtimer.h>

static enum hrtimer_restart dti_conf_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

static __maybe_unused void dti_conf(struct hrtimer *t)
{
	hrtimer_setup(t, dti_conf_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
}
