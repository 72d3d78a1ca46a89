// SPDX-License-Identifier: GPL-2.0
/*
 * Count every record DTI stores, by channel, CPU, level and caller: a
 * tp_btf program on dti.ko's dti:dti_record tracepoint, which every
 * stored record crosses (dti_bpf_watch.c prints the counts).  A record
 * whose key found no room in the map, or whose update the map refused (a
 * hash map's lock is only tried in NMI), is counted in `missed`, so the
 * totals add up to the channels' own `written` or say by how much not.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "dti_kfuncs.bpf.h"
#include "dti_bpf_watch.h"
#include "../../kmod/include/uapi/linux/dti_record.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DTI_WATCH_KEYS);
	__type(key, struct dti_watch_key);
	__type(value, __u64);
} counts SEC(".maps");

__u64 missed;

SEC("tp_btf/dti_record")
int BPF_PROG(on_record, const char *name, const struct dti_record *rec, const __u8 *payload)
{
	struct dti_watch_key k = {};
	__u64 one = 1, *v;

	if (!rec || !name)
		return 0;
	bpf_probe_read_kernel_str(k.channel, sizeof(k.channel), name);
	k.cpu = rec->cpu;
	k.level = rec->level;
	k.caller = rec->caller;
	v = bpf_map_lookup_elem(&counts, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	if (!bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST))
		return 0;
	/* another CPU added it meanwhile, or no room */
	v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		__sync_fetch_and_add(&missed, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
