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

/* dti_bench_u32x3: three u32 fields, the "keep" command's small event */
TRACE_EVENT(dti_bench_u32x3,
	TP_PROTO(u32 a, u32 b, u32 c),
	TP_ARGS(a, b, c),
	TP_STRUCT__entry(
		__field(u32, a)
		__field(u32, b)
		__field(u32, c)
	),
	TP_fast_assign(
		__entry->a = a;
		__entry->b = b;
		__entry->c = c;
	),
	TP_printk("a=%u b=%u c=%u", __entry->a, __entry->b, __entry->c)
);

DTI_BENCH_PAYLOAD_EVENT(16, DTI_BENCH_SMALL);
DTI_BENCH_PAYLOAD_EVENT(64, DTI_BENCH_MEDIUM);
DTI_BENCH_PAYLOAD_EVENT(256, DTI_BENCH_LARGE);

#endif /* _DTI_BENCH_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dti_bench_trace
#include <trace/define_trace.h>
