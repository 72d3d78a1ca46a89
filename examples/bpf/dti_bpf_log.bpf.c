// SPDX-License-Identifier: GPL-2.0
/*
 * Log each call of a kernel function into a DTI channel: a text record
 * "bpf N cpu C" (N counts the calls from 0), then a binary record of the
 * same two numbers, and, given an event type's id, an event of them (a
 * type registered on the channel with two %llu values), from an fentry
 * program whose target the loader sets (dti_bpf_log.c).
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "dti_kfuncs.bpf.h"

const volatile char channel[DTI_BPF_NAME_SIZE] = "bpf";
const volatile int level = DTI_BPF_INFO;
const volatile int event_id = -1;	/* -1: no events */

/* An event of two u64 values, packed as dti_record.h lays events out */
struct pair_event {
	__u16 id;
	__u64 n;
	__u64 cpu;
} __attribute__((packed));

__u64 hits;		/* calls seen */
__u64 missed;		/* calls with no such channel */
__u64 refused;		/* records the channel did not store */

static __always_inline int log_call(void)
{
	char name[DTI_BPF_NAME_SIZE], text[48];
	struct dti_channel *ch;
	__u64 v[2];

	dti_bpf_name(name, channel);
	ch = dti_bpf_get(name, sizeof(name));
	if (!ch) {
		__sync_fetch_and_add(&missed, 1);
		return 0;
	}
	v[0] = __sync_fetch_and_add(&hits, 1);
	v[1] = bpf_get_smp_processor_id();
	bpf_snprintf(text, sizeof(text), "bpf %llu cpu %llu", v, sizeof(v));
	if (dti_bpf_log_text(ch, level, text, sizeof(text)))
		__sync_fetch_and_add(&refused, 1);
	if (dti_bpf_log(ch, level, v, sizeof(v)))
		__sync_fetch_and_add(&refused, 1);
	if (event_id >= 0) {
		struct pair_event ev = { .id = event_id, .n = v[0], .cpu = v[1] };

		if (dti_bpf_log_event(ch, level, &ev, sizeof(ev)))
			__sync_fetch_and_add(&refused, 1);
	}
	dti_bpf_put(ch);
	return 0;
}

SEC("fentry")
int dti_log_fentry(__u64 *ctx)
{
	return log_call();
}

/* The same from a kprobe: kernels from 6.10 take kfuncs from kprobe programs */
SEC("kprobe")
int dti_log_kprobe(void *ctx)
{
	return log_call();
}

char LICENSE[] SEC("license") = "GPL";
