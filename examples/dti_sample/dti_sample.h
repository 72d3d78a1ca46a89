/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * What dti_sample keeps of a request; a finished one is logged as an
 * event of the type "req" (dti_sample.c), whose template every reader
 * prints, so no userspace code needs this header.
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
 * struct dti_sample_req - one request
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
};

#define DTI_SAMPLE_F_FAULT	0x1	/* the request was told to hang */

#endif /* _DTI_SAMPLE_H */
