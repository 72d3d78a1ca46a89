// SPDX-License-Identifier: GPL-2.0
/*
 * dti_bench_lttng - the LTTng probe of the benchmark's tracepoint
 * dti_bench_payload64, so that an LTTng kernel session can enable the
 * event "dti_bench_payload64" and record the 64-byte payload beside DTI
 * and ftrace (bench case lttng_event64).  Built against lttng-modules'
 * headers and loaded after its modules; dti_bench.ko may come before or
 * after it (LTTng finds a module's tracepoints when either is loaded).
 */
#include <linux/module.h>

/*
 * The module's own declaration of the tracepoint first, so that the
 * compiler checks the probe's prototype against it.
 */
#include "dti_bench_trace.h"

#define LTTNG_PACKAGE_BUILD
#define CREATE_TRACE_POINTS
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dti_bench_lttng
#include "dti_bench_lttng.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("LTTng probe of the DTI benchmark's 64-byte tracepoint");
