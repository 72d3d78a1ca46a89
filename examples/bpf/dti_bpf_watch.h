/* SPDX-License-Identifier: GPL-2.0 */
/* The key of dti_bpf_watch's counts, shared by the program and its loader */
#ifndef DTI_BPF_WATCH_H
#define DTI_BPF_WATCH_H

#define DTI_WATCH_KEYS	8192	/* channel, CPU, level and caller triples kept */

struct dti_watch_key {
	char channel[32];
	__u32 cpu;
	__s32 level;
	__u64 caller;
};

#endif
