/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LTTng's side of the benchmark's 64-byte tracepoint: how LTTng records
 * dti_bench_payload64 (bench/kmod/dti_bench_trace.h), the payload as an
 * array of 64 bytes, as ftrace's TRACE_EVENT of the same tracepoint does.
 * Read by LTTng's define_trace.h, which makes the probe and the event's
 * description from it (dti_bench_lttng.c).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dti_bench

#if !defined(_DTI_BENCH_LTTNG_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DTI_BENCH_LTTNG_H

#include <lttng/tracepoint-event.h>

#include "dti_bench.h"

LTTNG_TRACEPOINT_EVENT(dti_bench_payload64,
	TP_PROTO(const void *payload),
	TP_ARGS(payload),
	TP_FIELDS(
		ctf_array(u8, data, payload, DTI_BENCH_MEDIUM)
	)
)

#endif /* _DTI_BENCH_LTTNG_H */

#include <lttng/define_trace.h>
