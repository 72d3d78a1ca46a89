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

TRACE_EVENT(dti_bench_payload16,
	TP_PROTO(const void *payload),
	TP_ARGS(payload),
	TP_STRUCT__entry(
		__array(u8, data, DTI_BENCH_SMALL)
	),
	TP_fast_assign(
		memcpy(__entry->data, payload, DTI_BENCH_SMALL);
	),
	TP_printk("%s", __print_hex(__entry->data, DTI_BENCH_SMALL))
);

TRACE_EVENT(dti_bench_payload64,
	TP_PROTO(const void *payload),
	TP_ARGS(payload),
	TP_STRUCT__entry(
		__array(u8, data, DTI_BENCH_MEDIUM)
	),
	TP_fast_assign(
		memcpy(__entry->data, payload, DTI_BENCH_MEDIUM);
	),
	TP_printk("%s", __print_hex(__entry->data, DTI_BENCH_MEDIUM))
);

TRACE_EVENT(dti_bench_payload256,
	TP_PROTO(const void *payload),
	TP_ARGS(payload),
	TP_STRUCT__entry(
		__array(u8, data, DTI_BENCH_LARGE)
	),
	TP_fast_assign(
		memcpy(__entry->data, payload, DTI_BENCH_LARGE);
	),
	TP_printk("%s", __print_hex(__entry->data, DTI_BENCH_LARGE))
);

#endif /* _DTI_BENCH_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dti_bench_trace
#include <trace/define_trace.h>
