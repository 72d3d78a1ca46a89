/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dti:dti_record, a kernel tracepoint that every stored DTI record
 * crosses: ftrace (events/dti/dti_record, with filters and triggers),
 * perf and bpftrace can attach to DTI's records without SystemTap.
 *
 * Behind the tracepoint's static key: while nothing is attached the write
 * path has one patched-out jump and computes nothing for it.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dti

#if !defined(_DTI_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DTI_TRACE_H

#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <uapi/linux/dti_record.h>

/* Read once: define_trace.h reads the rest of this file many times. */
#ifndef _DTI_TRACE_HELPERS
#define _DTI_TRACE_HELPERS

/* Most payload bytes an event carries; a record's len says how many it had. */
#define DTI_TP_PAYLOAD_MAX	256

/*
 * Payload bytes the event carries for @rec (a dti_reserve() record's
 * too: the event comes at its commit); a text record's are followed by
 * a NUL, so they print and filter as a string.
 */
static inline u32 dti_tp_payload_len(const struct dti_record *rec)
{
	return min_t(u32, rec->len, DTI_TP_PAYLOAD_MAX) +
	       !!(rec->flags & DTI_REC_TEXT);
}

/* The type id of an event of a registered type (DTI_REC_TYPED), else -1. */
static inline s32 dti_tp_event_id(const struct dti_record *rec, const void *payload)
{
	u16 id;

	if (!(rec->flags & DTI_REC_TYPED) || rec->len < sizeof(id))
		return -1;
	memcpy(&id, payload, sizeof(id));
	return id;
}

#define dti_tp_show_flags(flags)					\
	__print_flags(flags, "|",					\
		      { DTI_REC_TEXT,		"text" },			\
		      { DTI_REC_TRUNCATED,	"truncated" },			\
		      { DTI_REC_RESERVED,	"reserved" },			\
		      { DTI_REC_REPLAYED,	"replayed" },			\
		      { DTI_REC_TYPED,		"typed" })

#endif /* _DTI_TRACE_HELPERS */

/**
 * dti_record - a record was stored in a DTI channel
 * @name: the channel's name
 * @rec: the record's header, whole (version 1) whatever the format in
 *	 the buffer
 * @payload: its payload (see dti_tp_payload_len())
 *
 * Fields: channel (a fixed array, NUL-padded, so that tools read it as a
 * string without decoding a __data_loc field, which bpftrace 0.23 gets
 * wrong), cpu (whose buffer holds the record), log_cpu (that logged it:
 * another only for a DTI_REC_REPLAYED record), level, seq (per CPU and
 * channel), flags (DTI_REC_*), caller (the return address of the logging
 * call, for keys=caller.sym and bpftrace's ksym()), event_id (the type of
 * an event of a registered type, -1 for any other record), len (the whole
 * payload's length) and payload (its first DTI_TP_PAYLOAD_MAX bytes at
 * most).  The payload is passed as bytes, not void: a BTF tracepoint
 * program (tp_btf) may read a pointer to integers from its context, on
 * 6.1 none to void.
 */
TRACE_EVENT(dti_record,

	TP_PROTO(const char *name, const struct dti_record *rec, const u8 *payload),

	TP_ARGS(name, rec, payload),

	TP_STRUCT__entry(
		__array(char, channel, DTI_NAME_MAX + 1)
		__field(u32, cpu)
		__field(u32, log_cpu)
		__field(s32, level)
		__field(u64, seq)
		__field(u32, flags)
		__field(unsigned long, caller)
		__field(s32, event_id)
		__field(u32, len)
		__dynamic_array(char, payload, dti_tp_payload_len(rec))
	),

	TP_fast_assign(
		u32 n = __get_dynamic_array_len(payload);
		bool text = (rec->flags & DTI_REC_TEXT) && n;
		char *p = __get_dynamic_array(payload);

		strscpy_pad(__entry->channel, name, sizeof(__entry->channel));
		__entry->cpu = rec->cpu;
		__entry->log_cpu = rec->log_cpu;
		__entry->level = rec->level;
		__entry->seq = rec->seq;
		__entry->flags = rec->flags;
		__entry->caller = rec->caller;
		__entry->event_id = dti_tp_event_id(rec, payload);
		__entry->len = rec->len;
		memcpy(p, payload, n - text);
		if (text)
			p[n - 1] = '\0';
	),

	TP_printk("%s cpu=%u log_cpu=%u level=%d seq=%llu flags=%s caller=%pS event=%d len=%u %s",
		  __entry->channel, __entry->cpu, __entry->log_cpu, __entry->level,
		  __entry->seq, dti_tp_show_flags(__entry->flags),
		  (void *)__entry->caller, __entry->event_id, __entry->len,
		  (__entry->flags & DTI_REC_TEXT) ? __get_str(payload) :
		  __print_hex(__get_dynamic_array(payload),
			      __get_dynamic_array_len(payload)))
);

#endif /* _DTI_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dti_trace
#include <trace/define_trace.h>
