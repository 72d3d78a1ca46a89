// SPDX-License-Identifier: GPL-2.0
/* the sched_switch tracepoint passes the previous task's state, with __task_state_index() to read it (5.18) */
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <trace/events/sched.h>

static void dti_conf_probe(void *data, bool preempt, struct task_struct *prev,
			   struct task_struct *next, unsigned int prev_state)
{
	(void)__task_state_index(prev_state, prev->exit_state);
}

static __maybe_unused int dti_conf(void)
{
	return register_trace_sched_switch(dti_conf_probe, NULL);
}
