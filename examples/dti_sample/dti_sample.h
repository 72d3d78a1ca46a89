/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The binary record dti_sample logs for every finished request, shared
 * with userspace formatters (examples/dti_sample_fmt.c).
 */
#ifndef _DTI_SAMPLE_H
#define _DTI_SAMPLE_H

#include <linux/types.h>

/* Request states, also the numbers in struct dti_sample_req.state */
enum dti_sample_state {
	DTI_SAMPLE_IDLE,
	DTI_SAMPLE_QUEUED,
	DTI_SAMPLE_ACTIVE,
	DTI_SAMPLE_DONE,
	DTI_SAMPLE_TIMEOUT,
	DTI_SAMPLE_RESET,
};

/**
 * struct dti_sample_req - one finished request (32 bytes, little-endian
 * on the machines DTI's tests run on)
 * @id:		request number, from 0
 * @state:	final state: DTI_SAMPLE_DONE or DTI_SAMPLE_TIMEOUT
 * @submit_ns:	CLOCK_MONOTONIC time the request went to the "hardware"
 * @latency_ns:	time from submission to completion or timeout
 * @result:	0, or -ETIMEDOUT
 * @flags:	DTI_SAMPLE_F_* bits
 */
struct dti_sample_req {
	__u32 id;
	__u32 state;
	__u64 submit_ns;
	__u64 latency_ns;
	__s32 result;
	__u32 flags;
} __attribute__((packed));

#define DTI_SAMPLE_F_FAULT	0x1	/* the request was told to hang */

#endif /* _DTI_SAMPLE_H */
