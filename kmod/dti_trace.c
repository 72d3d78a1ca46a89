// SPDX-License-Identifier: GPL-2.0
/*
 * DTI's kernel tracepoint, dti:dti_record (dti_trace.h): defined here,
 * fired from the write path (dti_store()) while something is attached.
 */
#include <linux/rcupdate.h>

#include "dti_internal.h"

#define CREATE_TRACE_POINTS
#include "dti_trace.h"

/**
 * dti_trace_record - fire dti:dti_record for a record just stored
 * @ch: channel
 * @rec: the record's header, as dti_probe_stored() gets it
 * @payload: its payload
 *
 * Out of line, so that the write path holds only the tracepoint's
 * patched-out jump.  The tracepoint's probes are found under RCU-sched,
 * which ignores a CPU where RCU is not watching; such a record is not
 * reported.  No probe DTI's writers run from is one: a kprobe's int3,
 * an NMI, an interrupt and an rcuidle tracepoint all make RCU watch.
 * The consumers (ftrace, perf, BPF) each keep their own recursion
 * guard; one that logs to DTI again is refused as nested by the write
 * guard held here.
 *
 * Context: interrupts disabled, the channel's write guard held; any
 * context, NMI included.
 */
void dti_trace_record(const struct dti_channel *ch, const struct dti_record *rec,
		      const void *payload)
{
	if (likely(rcu_is_watching()))
		trace_dti_record(ch->name, rec, payload);
}
