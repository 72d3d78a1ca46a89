// SPDX-License-Identifier: GPL-2.0
/*
 * Misuses of dti.ko's kfuncs, one program each (dti_bpf_misuse.c loads
 * one at a time).  The verifier refuses the first four; the last loads
 * and runs, and what it does wrong the channel counts.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "dti_kfuncs.bpf.h"

const volatile char channel[DTI_BPF_NAME_SIZE] = "bpf";

/* bigger than the payload of a channel of 512-byte sub-buffers */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[1024]);
} big SEC(".maps");

__s64 results[2];

static __always_inline struct dti_channel *get(void)
{
	char name[DTI_BPF_NAME_SIZE];

	dti_bpf_name(name, channel);
	return dti_bpf_get(name, sizeof(name));
}

/* the channel used without a check for NULL */
SEC("fentry/vfs_write")
int null_unchecked(__u64 *ctx)
{
	struct dti_channel *ch = get();
	char t[2] = "x";

	dti_bpf_log_text(ch, DTI_BPF_INFO, t, 1);
	dti_bpf_put(ch);
	return 0;
}

/* the channel not put */
SEC("fentry/vfs_write")
int leak(__u64 *ctx)
{
	struct dti_channel *ch = get();
	char t[2] = "x";

	if (ch)
		dti_bpf_log_text(ch, DTI_BPF_INFO, t, 1);
	return 0;
}

/* the channel used after it was put */
SEC("fentry/vfs_write")
int use_after_put(__u64 *ctx)
{
	struct dti_channel *ch = get();
	char t[2] = "x";

	if (!ch)
		return 0;
	dti_bpf_put(ch);
	dti_bpf_log_text(ch, DTI_BPF_INFO, t, 1);
	return 0;
}

/* something else passed as a channel */
SEC("fentry/vfs_write")
int not_a_channel(__u64 *ctx)
{
	char t[2] = "x";

	dti_bpf_log_text((struct dti_channel *)ctx[0], DTI_BPF_INFO, t, 1);
	return 0;
}

/* loads: a level out of range and more than the channel holds, counted */
SEC("fentry/vfs_write")
int bad_args(__u64 *ctx)
{
	struct dti_channel *ch = get();
	char t[10] = "bad level";
	__u32 key = 0;
	char *buf;

	if (!ch)
		return 0;
	buf = bpf_map_lookup_elem(&big, &key);
	if (buf && !results[0] && !results[1]) {
		results[0] = dti_bpf_log_text(ch, -1, t, 9);
		results[1] = dti_bpf_log(ch, DTI_BPF_INFO, buf, 1024);
	}
	dti_bpf_put(ch);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
