/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmark's binary peer in ftrace: one event per payload size, each
 * carrying the payload as a fixed array, as a driver author would define
 * an event for a binary record.  Enabled only in the "dti_bench" ftrace
 * instance (trace_array_set_clr_event()).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dti_bench

#if !defined(_DTI_BENCH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DTI_BENCH_TRACE_H

#include <linux/string.h>
#include <linux/tracepoint.h>

#include "dti_bench.h"

/* dti_bench_payload<n>: the payload as an array of @size bytes. */
#define DTI_BENCH_PAYLOAD_EVENT(n, size)				\
TRACE_EVENT(dti_bench_payload##n,					\
	TP_PROTO(const void *payload),					\
	TP_ARGS(payload),						\
	TP_STRUCT__entry(						\
		__array(u8, data, size)					\
	),								\
	TP_fast_assign(							\
		memcpy(__entry->data, payload, size);			\
	),								\
	TP_printk("%s", __print_hex(__entry->data, size))		\
)

DTI_BENCH_PAYLOAD_EVENT(16, DTI_BENCH_SMALL);
DTI_BENCH_PAYLOAD_EVENT(64, DTI_BENCH_MEDIUM);
DTI_BENCH_PAYLOAD_EVENT(256, DTI_BENCH_LARGE);

#endif /* _DTI_BENCH_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dti_bench_trace
#include <trace/define_trace.h>
