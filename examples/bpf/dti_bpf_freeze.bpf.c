// SPDX-License-Identifier: GPL-2.0
/*
 * Freeze a DTI channel exactly N records (or T nanoseconds) after the
 * first record whose text matches a pattern: a tp_btf program on dti.ko's
 * dti:dti_record tracepoint arms the channel's halt trigger, and dti.ko
 * counts the records after it in its writers.  The tracepoint fires as
 * the record is stored; in ordered mode (set by on_sys_enter, which the
 * loader makes run in its own next system call) that is under the
 * channel's order lock, so no CPU stores a record between the match and the arming, and
 * the count is exact across CPUs.
 *
 * The pattern is a glob of the text without its final newline: '?'
 * matches any one byte, a final '*' any tail.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "dti_kfuncs.bpf.h"
#include "../../kmod/include/uapi/linux/dti_record.h"

#define PATTERN_MAX	64

const volatile char channel[DTI_BPF_NAME_SIZE] = "";
const volatile char pattern[PATTERN_MAX] = "";
const volatile __u32 pattern_len = 0;	/* without a final '*' */
const volatile int pattern_tail = 0;	/* it had one */
const volatile __u64 after = 0;		/* records kept after the match */
const volatile __u64 after_ns = 0;	/* or nanoseconds, if not 0 */

int matched;
__u64 seen, seen_channel;	/* records seen, and of the channel */
__u32 match_cpu;
__u64 match_seq, match_ts;
__s64 arm_ret;

static __always_inline int same_channel(const char *name)
{
	char nm[DTI_BPF_NAME_SIZE];
	int i;

	if (bpf_probe_read_kernel_str(nm, sizeof(nm), name) < 0)
		return 0;
	for (i = 0; i < DTI_BPF_NAME_SIZE; i++) {
		if (nm[i] != channel[i])
			return 0;
		if (!nm[i])
			return 1;
	}
	return 1;
}

static __always_inline int glob(const char *text, __u32 len)
{
	int i;

	if (len != pattern_len && !(pattern_tail && len >= pattern_len))
		return 0;
	for (i = 0; i < PATTERN_MAX; i++) {
		if (i >= pattern_len)
			return 1;
		if (pattern[i] != '?' && pattern[i] != text[i])
			return 0;
	}
	return 1;
}

SEC("tp_btf/dti_record")
int BPF_PROG(on_record, const char *name, const struct dti_record *rec, const void *payload)
{
	char text[PATTERN_MAX], nm[DTI_BPF_NAME_SIZE];
	struct dti_channel *ch;
	__u32 len;

	/* 6.12's verifier takes a tracepoint's pointers for maybe NULL */
	if (!rec || !name)
		return 0;
	__sync_fetch_and_add(&seen, 1);
	if (matched || !same_channel(name))
		return 0;
	__sync_fetch_and_add(&seen_channel, 1);
	if (!(rec->flags & DTI_REC_TEXT))
		return 0;
	len = rec->len;
	if (bpf_probe_read_kernel(text, sizeof(text), payload) < 0 &&
	    bpf_probe_read_kernel(text, len < sizeof(text) ? len : sizeof(text), payload) < 0)
		return 0;
	if (len && len <= sizeof(text) && text[(len - 1) & (PATTERN_MAX - 1)] == '\n')
		len--;
	if (!glob(text, len))
		return 0;
	dti_bpf_name(nm, channel);
	ch = dti_bpf_get(nm, sizeof(nm));
	if (!ch)
		return 0;
	arm_ret = after_ns ? dti_bpf_halt_after_ns(ch, after_ns) : dti_bpf_halt_after(ch, after);
	dti_bpf_put(ch);
	if (arm_ret == 0) {
		match_cpu = rec->cpu;
		match_seq = rec->seq;
		match_ts = rec->ts_ns;
		matched = 1;
	}
	return 0;
}

/*
 * The loader's request for the channel's ordered mode (1 on, 0 off, -1
 * none), done in its next system call by on_sys_enter: a tracing
 * program, inside the RCU read-side section dti_bpf_get() needs (a
 * syscall program runs outside it, and dti.ko gives it no kfuncs).
 */
int want_ordered = -1;
int loader_tgid;
int ordered_ret;

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, void *regs, long id)
{
	char nm[DTI_BPF_NAME_SIZE];
	struct dti_channel *ch;
	int on = want_ordered;

	if (on < 0 || (bpf_get_current_pid_tgid() >> 32) != loader_tgid)
		return 0;
	dti_bpf_name(nm, channel);
	ch = dti_bpf_get(nm, sizeof(nm));
	if (ch) {
		ordered_ret = dti_bpf_set_ordered(ch, on);
		dti_bpf_put(ch);
	} else {
		ordered_ret = -2;	/* ENOENT */
	}
	want_ordered = -1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
