/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * DTI on-buffer record format, shared by dti.ko and userspace readers.
 *
 * A DTI per-CPU buffer is a relay channel: a ring of n_subbufs sub-buffers
 * of subbuf_size bytes each.  Every sub-buffer starts with a sub-buffer
 * header record (flags has DTI_REC_SUBBUF) followed by trace records.  A
 * record never straddles two sub-buffers; the unused tail of a closed
 * sub-buffer is padding, whose length the sub-buffer header states.
 *
 * All fields are in the byte order of the machine that wrote them; the
 * magic number tells a reader which order that was.  Every record starts
 * on a DTI_RECORD_ALIGN boundary and occupies DTI_RECORD_SIZE() bytes.
 *
 * Timestamps come from ktime_get_mono_fast_ns(): CLOCK_MONOTONIC, one
 * clock for all CPUs (so records of different CPUs can be merged by
 * time), readable from any context including NMI, and comparable with
 * clock_gettime(CLOCK_MONOTONIC) in userspace.  local_clock() is cheaper
 * but may drift between CPUs; the global trace clock takes a lock.
 */
#ifndef _UAPI_LINUX_DTI_RECORD_H
#define _UAPI_LINUX_DTI_RECORD_H

#include <linux/types.h>

#define DTI_RECORD_MAGIC	0xD71A	/* reads as 0x1AD7 in the other byte order */
#define DTI_RECORD_VERSION	1
#define DTI_RECORD_ALIGN	8

/* Longest channel name, not counting the terminating NUL. */
#define DTI_NAME_MAX		31

/* Prefix of the marker string a dump tool searches for: "__DTI__<name>". */
#define DTI_MARKER_PREFIX	"__DTI__"

/* Levels a channel can be set to; records carry 0..DTI_LEVEL_MAX. */
#define DTI_LEVEL_DESTROY	(-2)	/* free the buffers, keep control files */
#define DTI_LEVEL_OFF		(-1)	/* store nothing, keep the buffers */
#define DTI_LEVEL_EMERG		0
#define DTI_LEVEL_ALERT		1
#define DTI_LEVEL_CRIT		2
#define DTI_LEVEL_ERR		3
#define DTI_LEVEL_WARNING	4
#define DTI_LEVEL_NOTICE	5
#define DTI_LEVEL_INFO		6
#define DTI_LEVEL_DEBUG		7
#define DTI_LEVEL_MIN		DTI_LEVEL_DESTROY
#define DTI_LEVEL_MAX		DTI_LEVEL_DEBUG
#define DTI_LEVEL_DEFAULT	DTI_LEVEL_ERR

/* dti_record.flags */
#define DTI_REC_TEXT		0x01	/* payload is text without a NUL (dti_printk) */
#define DTI_REC_TRUNCATED	0x02	/* text was cut at the formatting limit */
#define DTI_REC_RESERVED	0x04	/* payload written by the caller of dti_reserve */
#define DTI_REC_REPLAYED	0x08	/* copied from an early buffer into relay */
#define DTI_REC_SUBBUF		0x80	/* sub-buffer header, not a trace record */

/**
 * struct dti_record - header in front of every record
 * @magic:	DTI_RECORD_MAGIC
 * @version:	DTI_RECORD_VERSION
 * @flags:	DTI_REC_* bits
 * @level:	level the record was logged at (0..DTI_LEVEL_MAX)
 * @hdr_len:	size of this header; the payload starts @hdr_len bytes in
 * @cpu:	CPU whose buffer holds the record; @seq counts per this CPU
 * @len:	payload length in bytes, without header and alignment
 * @log_cpu:	CPU that logged the record.  The same as @cpu except for
 *		DTI_REC_REPLAYED records, which are stored by the CPU that
 *		replayed them.
 * @seq:	per-CPU sequence number of the record within its channel.
 *		Every record the channel accepted on that CPU consumes one,
 *		including records dropped for lack of space, so a reader can
 *		prove loss or its absence.  For a sub-buffer header: the
 *		number of the sub-buffer (count of sub-buffers before it).
 * @ts_ns:	CLOCK_MONOTONIC time in nanoseconds
 * @caller:	return address of the logging call (0 if unknown)
 */
struct dti_record {
	__u16 magic;
	__u8  version;
	__u8  flags;
	__s8  level;
	__u8  hdr_len;
	__u16 cpu;
	__u32 len;
	__u32 log_cpu;
	__u64 seq;
	__u64 ts_ns;
	__u64 caller;
};

/* Sub-buffer states, dti_subbuf_info.state */
#define DTI_SUBBUF_OPEN		0	/* being written; padding not yet known */
#define DTI_SUBBUF_CLOSED	1	/* complete; padding is valid */

/**
 * struct dti_subbuf_info - payload of a sub-buffer header record
 * @subbuf_size:  size of each sub-buffer in bytes
 * @n_subbufs:	  number of sub-buffers per CPU buffer
 * @padding:	  unused bytes at the end of this sub-buffer (once closed)
 * @records:	  trace records stored in this sub-buffer
 * @state:	  DTI_SUBBUF_OPEN or DTI_SUBBUF_CLOSED
 * @reserved:	  zero
 * @name:	  channel name, NUL-terminated
 *
 * With this header a sub-buffer describes itself: a dump reader that
 * finds one in memory knows the channel, the CPU (in the record header),
 * where the sub-buffer sits in the ring and where its data ends.
 */
struct dti_subbuf_info {
	__u32 subbuf_size;
	__u32 n_subbufs;
	__u32 padding;
	__u32 records;
	__u32 state;
	__u32 reserved;
	char  name[DTI_NAME_MAX + 1];
};

/* Bytes a record with a payload of @len bytes occupies in the buffer. */
#define DTI_RECORD_SIZE(len) \
	(((sizeof(struct dti_record) + (len)) + DTI_RECORD_ALIGN - 1) & \
	 ~((__u64)DTI_RECORD_ALIGN - 1))

/* Bytes the sub-buffer header takes at the start of every sub-buffer. */
#define DTI_SUBBUF_HEADER_SIZE	DTI_RECORD_SIZE(sizeof(struct dti_subbuf_info))

#endif /* _UAPI_LINUX_DTI_RECORD_H */
