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
 * magic number tells a reader which order that was.
 *
 * Two record versions exist.  Version 1 records each carry a whole
 * struct dti_record, start on a DTI_RECORD_ALIGN boundary and occupy
 * DTI_RECORD_SIZE() bytes.  From version 2 the sub-buffer header is still
 * a struct dti_record (its version 2), but the records after it are
 * compact (struct dti_crec): their time, sequence number and caller are
 * told relative to the record before them and to the sub-buffer header,
 * so a reader decodes a sub-buffer from its start.  Pending stores and
 * the records-alone stream of readers (dti read -F raw) keep version 1's
 * whole headers, which stand alone.
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
#define DTI_RECORD_VERSION	2	/* sub-buffers of compact records */
#define DTI_RECORD_VERSION_1	1	/* whole headers everywhere */
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
#define DTI_REC_PENDING		0x10	/* waiting in a pending store: no seq yet */
#define DTI_REC_FORMAT		0x20	/* an event type's format (struct dti_event_format) */
#define DTI_REC_TYPED		0x40	/* a registered type's event: __u16 id, its values */
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

/**
 * struct dti_crec - header in front of every record after a version-2
 * sub-buffer header
 * @len:	payload length in bytes; 0 with DTI_CREC_LEN32, where a __u32
 *		length follows
 * @flags:	DTI_REC_* bits; never DTI_REC_SUBBUF nor DTI_REC_PENDING
 * @info:	the level (DTI_CREC_LEVEL) and DTI_CREC_* bits saying which
 *		extensions follow
 * @ts_delta:	the record's time less the time of the record before it in
 *		the sub-buffer (for the first: struct dti_subbuf_info's
 *		@ts_base); 0 with DTI_CREC_TS64
 *
 * The header is followed by its extensions, in this order, each present
 * when its bit is set: the __u32 length (DTI_CREC_LEN32), the __u64 time
 * (DTI_CREC_TS64), the __u64 count of sequence numbers skipped
 * (DTI_CREC_SKIP), the caller (DTI_CREC_CALLER32: a __s32 to add to the
 * sub-buffer header's @caller, the caller base; DTI_CREC_CALLER64: a
 * __u64; DTI_CREC_CALLER_SAME, both bits: none, the caller is that of the
 * record before it, for the first struct dti_subbuf_info's @caller_prev;
 * neither: no caller, 0: a format's), and for a DTI_REC_REPLAYED record
 * the __u32 CPU that logged it.  A trace record always has caller bits,
 * so no record's header is eight zero bytes: those are never a record
 * (zero fill, or an area a boot zeroed).  Then the payload.  A record starts on a
 * DTI_CREC_ALIGN boundary and takes DTI_CREC_SIZE() bytes.
 *
 * Sequence numbers: the first record of a sub-buffer has the number
 * struct dti_subbuf_info's @seq_base says, each one after has the number
 * after the one before it; DTI_CREC_SKIP adds the records that were not
 * stored (dropped, nested, halted) in between.  DTI_REC_FORMAT records
 * take no number and no time: they are left out of both chains, and
 * their time is the sub-buffer header's.  The CPU whose buffer holds a
 * record is the sub-buffer header's @cpu, and so is the CPU that logged
 * it unless the record says otherwise (DTI_REC_REPLAYED).
 */
struct dti_crec {
	__u16 len;
	__u8  flags;
	__u8  info;
	__s32 ts_delta;
};

/* dti_crec.info */
#define DTI_CREC_LEVEL		0x07	/* the record's level */
#define DTI_CREC_TS64		0x08	/* __u64 time: the delta did not fit */
#define DTI_CREC_SKIP		0x10	/* __u64 sequence numbers skipped */
#define DTI_CREC_CALLER32	0x20	/* __s32 caller, from the caller base */
#define DTI_CREC_CALLER64	0x40	/* __u64 caller */
#define DTI_CREC_LEN32		0x80	/* __u32 payload length */
#define DTI_CREC_CALLER_SAME	(DTI_CREC_CALLER32 | DTI_CREC_CALLER64)	/* none */
#define DTI_CREC_CALLER		DTI_CREC_CALLER_SAME	/* the caller's bits */

#define DTI_CREC_ALIGN		4
/* Longest header: struct dti_crec and every extension */
#define DTI_CREC_HDR_MAX	(sizeof(struct dti_crec) + 4 + 8 + 8 + 8 + 4)

/* Bytes the header of a compact record with these @info and @flags takes. */
static __inline__ unsigned int dti_crec_hdr_size(__u8 info, __u8 flags)
{
	return sizeof(struct dti_crec) +
	       (info & DTI_CREC_LEN32 ? 4 : 0) + (info & DTI_CREC_TS64 ? 8 : 0) +
	       (info & DTI_CREC_SKIP ? 8 : 0) +
	       ((info & DTI_CREC_CALLER) == DTI_CREC_CALLER32 ? 4 : 0) +
	       ((info & DTI_CREC_CALLER) == DTI_CREC_CALLER64 ? 8 : 0) +
	       (flags & DTI_REC_REPLAYED ? 4 : 0);
}

/* Bytes a compact record of @hdr header bytes and @len payload bytes takes. */
#define DTI_CREC_SIZE(hdr, len) \
	(((__u64)(hdr) + (len) + DTI_CREC_ALIGN - 1) & ~((__u64)DTI_CREC_ALIGN - 1))

/* Sub-buffer states, dti_subbuf_info.state */
#define DTI_SUBBUF_OPEN		0	/* being written; padding not yet known */
#define DTI_SUBBUF_CLOSED	1	/* complete; padding is valid */
#define DTI_SUBBUF_CONTINUED	2	/* a read()'s start: see below */

/**
 * struct dti_subbuf_info - payload of a sub-buffer header record
 * @subbuf_size:  size of each sub-buffer in bytes
 * @n_subbufs:	  number of sub-buffers per CPU buffer
 * @padding:	  unused bytes at the end of this sub-buffer (once closed)
 * @records:	  trace records stored in this sub-buffer
 * @state:	  DTI_SUBBUF_OPEN, DTI_SUBBUF_CLOSED or DTI_SUBBUF_CONTINUED
 * @generation:	  generation of the buffers (struct dti_dump_desc), never 0;
 *		  0 in sub-buffers written before dti.ko had generations
 * @name:	  channel name, NUL-terminated
 * @seq_base:	  version 2: the sequence number of the sub-buffer's first
 *		  record but for those it skips (struct dti_crec)
 * @ts_base:	  version 2: the time the first record's @ts_delta is from
 *		  (the time of the record stored before it on this CPU)
 * @caller_prev:  version 2: the caller of a first record that says it has
 *		  that of the record before it (DTI_CREC_CALLER_SAME)
 *
 * In a version-2 sub-buffer header (struct dti_record), @caller is the
 * caller base of DTI_CREC_CALLER32 callers.  Version 1's info ends
 * before @seq_base.
 *
 * A read() of a trace file that starts in the middle of a version-2
 * sub-buffer (an earlier read() took its start) begins with a copy of the
 * sub-buffer's header whose @state is DTI_SUBBUF_CONTINUED, whose
 * @seq_base, @ts_base and @caller_prev are those of the first record
 * after it, and whose @padding and @records are 0: its records run to
 * the next sub-buffer header or the end of the data.  So every read()
 * can be decoded alone, as a copy made with cat(1) is; a reader that
 * goes on from the read() before finds the chains as it left them.
 * Such a header is never in the ring itself.
 *
 * With this header a sub-buffer describes itself: a dump reader that
 * finds one in memory knows the channel, the CPU (in the record header),
 * where the sub-buffer sits in the ring and where its data ends, and,
 * by the generation, whether it belongs to the buffers a channel has now
 * or to freed ones whose pages were not yet written over.
 *
 * @records grows only after a record's payload is complete: a writer
 * stopped in the middle of a record (a crash, an NMI) leaves it outside
 * the count.  A record from dti_reserve() is counted at its
 * dti_commit(), once its caller has written the payload.
 */
struct dti_subbuf_info {
	__u32 subbuf_size;
	__u32 n_subbufs;
	__u32 padding;
	__u32 records;
	__u32 state;
	__u32 generation;
	char  name[DTI_NAME_MAX + 1];
	__u64 seq_base;
	__u64 ts_base;
	__u64 caller_prev;
};

/* struct dti_subbuf_info as version 1 wrote it: up to @seq_base */
#define DTI_SUBBUF_INFO_V1_SIZE	(sizeof(struct dti_subbuf_info) - 3 * sizeof(__u64))

/* Bytes a record with a payload of @len bytes occupies in the buffer. */
#define DTI_RECORD_SIZE(len) \
	(((sizeof(struct dti_record) + (len)) + DTI_RECORD_ALIGN - 1) & \
	 ~((__u64)DTI_RECORD_ALIGN - 1))

/* Bytes the sub-buffer header takes at the start of every sub-buffer. */
#define DTI_SUBBUF_HEADER_SIZE	DTI_RECORD_SIZE(sizeof(struct dti_subbuf_info))
#define DTI_SUBBUF_HEADER_SIZE_V1	DTI_RECORD_SIZE(DTI_SUBBUF_INFO_V1_SIZE)

/*
 * Event types: binary records that describe themselves.  A driver
 * registers an event type on a channel: an id, a name and a template,
 * printf-like, whose conversions say what each value is.  An event of
 * the type is a DTI_REC_TYPED record whose payload is the type's id
 * (__u16) followed by its values, packed without padding in the byte
 * order of the record, one per conversion of the template:
 *
 *   %hhd %hhi / %hhu %hhx %hhX	DTI_ARG_S8 / DTI_ARG_U8, 1 byte
 *   %hd %hi / %hu %hx %hX	DTI_ARG_S16 / DTI_ARG_U16, 2 bytes
 *   %d %i / %u %x %X		DTI_ARG_S32 / DTI_ARG_U32, 4 bytes
 *   %lld %lli / %llu %llx %llX	DTI_ARG_S64 / DTI_ARG_U64, 8 bytes; with l
 *				instead of ll, the size of the registering
 *				kernel's long
 *   %px			DTI_ARG_PTR, 8 bytes, printed as the kernel's
 *				%px: 16 lowercase hex digits (%p alone, whose
 *				value the kernel hashes, is refused)
 *   %s				DTI_ARG_STR: __u16 length, then that many bytes
 *				(at most DTI_EVENT_STR_MAX, no NUL)
 *   %*ph %*phC %*phD %*phN	DTI_ARG_HEX: __u16 length, then that many bytes
 *				(at most DTI_EVENT_HEX_MAX), printed as the
 *				kernel prints them
 *
 * Integer conversions take the flags - + space # 0, a width and a
 * precision (digits, not *, at most DTI_EVENT_WIDTH_MAX), %s a width and
 * a precision; %% is a percent sign.  A template prints as the kernel's printf prints it
 * with the same values.
 *
 * The formats travel with the data: every sub-buffer of a channel with
 * event types starts, after its header, with one DTI_REC_FORMAT record
 * per type registered when it was started, so that each sub-buffer can
 * be decoded on its own (after wrap-around, in a dump, in the previous
 * boot's records).  A type registered later makes the next event of a
 * type not yet described start a new sub-buffer.  DTI_REC_FORMAT records
 * have level 0 and seq 0, take no sequence number and are counted in the
 * sub-buffer header's records; readers do not show them.
 */
#define DTI_EVENT_ARGS_MAX	16	/* values of an event */
#define DTI_EVENT_FMT_MAX	255	/* bytes of a template */
#define DTI_EVENT_STR_MAX	255	/* bytes of a %s value kept */
#define DTI_EVENT_HEX_MAX	64	/* bytes of a %*ph value kept */
#define DTI_EVENT_WIDTH_MAX	255	/* largest width or precision */

/*
 * Event ids from DTI_EVENT_ID_DTI up are dti.ko's own; a driver's types
 * take the ids below.  The context records (a channel's context file)
 * are events of types dti.ko registers, so their formats travel as a
 * driver's do:
 *
 *   sched_switch	 prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s
 *			 ==> next_comm=%s next_pid=%d next_prio=%d
 *   irq_handler_entry	 irq=%d name=%s
 */
#define DTI_EVENT_ID_DTI		0xff00
#define DTI_EVENT_ID_SCHED_SWITCH	0xff00	/* a context switch */
#define DTI_EVENT_ID_IRQ_ENTRY		0xff01	/* an interrupt handler's entry */

/*
 * A blob (dti_blob()): bytes of any length up to the largest payload,
 * with a media type (RFC 6838: "application/octet-stream",
 * "application/vnd.tcpdump.pcap", "image/png"), printed as hex and
 * written whole by the records-alone stream.  It is a DTI_REC_TYPED
 * record of id DTI_EVENT_ID_BLOB, with no format: its payload is the
 * id, a __u8 length of the media type, the media type (no NUL, at most
 * DTI_BLOB_TYPE_MAX bytes) and the bytes, to the payload's end.
 */
#define DTI_EVENT_ID_BLOB		0xffff
#define DTI_BLOB_TYPE_MAX		127
/* Bytes of a blob's payload before its media type: the id and the length */
#define DTI_BLOB_HDR_SIZE		3

/* Characters of struct dti_event_format's layout: one per value */
#define DTI_ARG_S8		'b'
#define DTI_ARG_U8		'B'
#define DTI_ARG_S16		'h'
#define DTI_ARG_U16		'H'
#define DTI_ARG_S32		'i'
#define DTI_ARG_U32		'I'
#define DTI_ARG_S64		'q'
#define DTI_ARG_U64		'Q'
#define DTI_ARG_PTR		'p'
#define DTI_ARG_STR		's'
#define DTI_ARG_HEX		'a'

/* Bytes a value of kind @arg takes; 0 for those with a length (%s, %*ph) */
static __inline__ unsigned int dti_event_arg_size(char arg)
{
	switch (arg) {
	case DTI_ARG_S8: case DTI_ARG_U8:
		return 1;
	case DTI_ARG_S16: case DTI_ARG_U16:
		return 2;
	case DTI_ARG_S32: case DTI_ARG_U32:
		return 4;
	case DTI_ARG_S64: case DTI_ARG_U64: case DTI_ARG_PTR:
		return 8;
	}
	return 0;
}

/**
 * struct dti_event_format - payload of a DTI_REC_FORMAT record
 * @id:		the type's id, unique in its channel
 * @nargs:	values of an event of the type
 * @name_len:	bytes of the name (no NUL; at most DTI_NAME_MAX)
 * @fields_len:	bytes of the field names
 * @fmt_len:	bytes of the template (no NUL; at most DTI_EVENT_FMT_MAX)
 *
 * Followed by the name, the layout (@nargs DTI_ARG_* characters), the
 * field names (@nargs names, each a C identifier, separated by commas:
 * the word that the template's text before the conversion ends in,
 * blanks and one of = : ' " ( [ { < after it allowed, else argN) and
 * the template.
 */
struct dti_event_format {
	__u16 id;
	__u8  nargs;
	__u8  name_len;
	__u16 fields_len;
	__u16 fmt_len;
};

/*
 * Dump descriptors: how a reader finds DTI's buffers in a memory dump
 * (a vmcore, a QEMU guest dump) with no debuginfo and no System.map.
 *
 * A reader scans physical memory for DTI_MARKER_PREFIX at an 8-byte
 * boundary.  A descriptor starts with the marker: "__DTI__<name>", NUL,
 * zero fill up to DTI_DUMP_MARKER_SIZE, then the magic, the version and
 * the type.  Every descriptor lies in physically contiguous memory and
 * carries a CRC-32 (that of zlib and of the kernel's crc32_le() with ~0
 * in and out) of its DTI_DUMP_*_SIZE bytes with the crc field zero.  A
 * descriptor whose CRC fails was damaged, or caught in the middle of an
 * update: its channel is reported and skipped.  Everything is in the
 * byte order of the kernel that wrote it; the magic tells which.
 *
 * DTI_DUMP_CHANNEL: one per registered channel, inside the channel's
 * bookkeeping.  It is written when buffers are created or destroyed and
 * when the level changes, never per record, and its marker is wiped when
 * the channel is freed.  @cpu_table is the physical address of
 * @nr_cpus struct dti_dump_cpu entries, one per possible CPU, each of
 * which gives the physical address of an array of @n_pages page frame
 * numbers (__u64): the pages of that CPU's ring, in ring order.  Relay
 * allocates the ring page by page, so its sub-buffers need not be
 * contiguous.  A sub-buffer belongs to the ring only if its header has
 * the descriptor's generation and its sub-buffer number (the header's
 * seq) modulo n_subbufs is its slot.
 *
 * DTI_DUMP_PENDING: one per pending store (handles, channels created by
 * dti_ctl_create()), where records wait while a channel has no buffers
 * yet, before INIT_DTI_HANDLE() of an early handle included.  A store
 * defined statically only knows kernel virtual addresses, so @buf is
 * one, translated through the kernel's page tables; @used (the bytes of
 * @buf holding records) is kept by the kernel in a native unsigned long
 * at @used_offset bytes from the descriptor.  Its records are in the
 * format above with DTI_REC_PENDING set and seq 0.
 */
#define DTI_DUMP_MAGIC		0xD7D0B1E5U
#define DTI_DUMP_VERSION	1
#define DTI_DUMP_MARKER_SIZE	40	/* "__DTI__" + DTI_NAME_MAX + NUL, rounded up */

/* struct dti_dump_desc.type */
#define DTI_DUMP_CHANNEL	1
#define DTI_DUMP_PENDING	2

/* struct dti_dump_desc.flags */
#define DTI_DUMP_F_BUFFERS	0x1	/* the channel has buffers (cpu_table valid) */
#define DTI_DUMP_F_NO_OVERWRITE	0x2	/* DTI_F_NO_OVERWRITE channel */
#define DTI_DUMP_F_HANDLE	0x4	/* a handle's channel: it has a pending store */
#define DTI_DUMP_F_PERSIST	0x8	/* DTI_F_PERSIST: its rings lie in the persistent region */

/**
 * struct dti_dump_desc - what a dump reader finds after a channel's marker
 * @marker:	"__DTI__<name>", NUL-padded
 * @magic:	DTI_DUMP_MAGIC
 * @version:	DTI_DUMP_VERSION
 * @type:	DTI_DUMP_CHANNEL
 * @size:	DTI_DUMP_CHANNEL_SIZE
 * @flags:	DTI_DUMP_F_* bits
 * @generation:	generation of the current buffers, never 0 (a new one each
 *		time buffers are created, from a counter that starts at
 *		random at module load), carried by every sub-buffer header
 * @subbuf_size: bytes per sub-buffer
 * @n_subbufs:	sub-buffers per CPU
 * @nr_cpus:	entries in the CPU table: the kernel's nr_cpu_ids (a name
 *		the kernel defines as a macro without SMP)
 * @page_size:	bytes per page frame
 * @cpu_table_crc: CRC-32 of the CPU table
 * @level_addr:	physical address of the channel's current level, a native
 *		int (DTI_LEVEL_*); it changes from any context, so it lies
 *		outside the descriptor and its CRC
 * @cpu_table:	physical address of the CPU table; 0 without buffers
 * @crc:	CRC-32 of the descriptor, this field zero
 * @reserved:	zero
 */
struct dti_dump_desc {
	char  marker[DTI_DUMP_MARKER_SIZE];
	__u32 magic;
	__u16 version;
	__u16 type;
	__u32 size;
	__u32 flags;
	__u32 generation;
	__u32 subbuf_size;
	__u32 n_subbufs;
	__u32 nr_cpus;
	__u32 page_size;
	__u32 cpu_table_crc;
	__u64 level_addr;
	__u64 cpu_table;
	__u32 crc;
	__u32 reserved;
};

#define DTI_DUMP_CHANNEL_SIZE	sizeof(struct dti_dump_desc)

/**
 * struct dti_dump_cpu - one CPU's ring in a channel's CPU table
 * @pfns:	physical address of @n_pages page frame numbers (__u64);
 *		0 if this CPU has no buffer
 * @n_pages:	pages of the ring: subbuf_size * n_subbufs bytes rounded up
 *		to whole pages (sub-buffers need not be page-sized)
 * @pfns_crc:	CRC-32 of the @n_pages * 8 bytes at @pfns
 */
struct dti_dump_cpu {
	__u64 pfns;
	__u32 n_pages;
	__u32 pfns_crc;
};

/**
 * struct dti_dump_pending - what a dump reader finds after a pending
 * store's marker
 * @marker:	"__DTI__<name>", NUL-padded
 * @magic:	DTI_DUMP_MAGIC
 * @version:	DTI_DUMP_VERSION
 * @type:	DTI_DUMP_PENDING
 * @size:	DTI_DUMP_PENDING_SIZE
 * @used_offset: where the count of used bytes is, from the descriptor
 * @buf:	kernel virtual address of the store's records
 * @buf_size:	bytes at @buf
 * @crc:	CRC-32 of the descriptor, this field zero; 0 in a store defined
 *		statically (DEFINE_DTI_HANDLE()) whose handle was not yet
 *		initialised, as the compiler cannot compute it
 * @reserved:	zero
 *
 * The count of used bytes changes with every record, so it lies outside
 * the descriptor and its CRC; a reader checks it against @buf_size and
 * reads whole records within it.
 */
struct dti_dump_pending {
	char  marker[DTI_DUMP_MARKER_SIZE];
	__u32 magic;
	__u16 version;
	__u16 type;
	__u32 size;
	__u32 used_offset;
	__u64 buf;
	__u64 buf_size;
	__u32 crc;
	__u32 reserved;
};

#define DTI_DUMP_PENDING_SIZE	sizeof(struct dti_dump_pending)

/*
 * Dump index: DTI built into the kernel lists the physical address of
 * every descriptor it has (channels, pending stores, the module table, a
 * persistent region's header) in one table, struct dti_dump_index, and
 * names the table in VMCOREINFO with the line
 * DTI_VMCOREINFO_KEY "=0x<physical address>", so that a reader of a dump
 * that has the note (kdump's /proc/vmcore; QEMU's dump-guest-memory of a
 * guest with -device vmcoreinfo) goes to them without scanning memory.
 * dti.ko cannot add to VMCOREINFO and keeps no index: its descriptors are
 * found by their markers.
 *
 * The table lies in the kernel's data, physically contiguous, and is
 * changed from any context but NMI under a spinlock: a slot is filled
 * after its descriptor is complete and cleared before the descriptor is
 * wiped, and the CRC is computed anew each time.  A dump taken during a
 * change finds a CRC that does not match; a reader then scans, as it does
 * when @overflowed is set (a descriptor found no free slot, so the table
 * lacks it) or when anything the table lists is not a descriptor.
 */
#define DTI_VMCOREINFO_KEY	"DTI"
#define DTI_INDEX_MAGIC		0xD7D01DE5U
#define DTI_INDEX_VERSION	1
#define DTI_INDEX_SLOTS		508	/* the table fills one 4 KiB page */

/**
 * struct dti_dump_index - where a built-in DTI's descriptors are
 * @magic:	DTI_INDEX_MAGIC
 * @version:	DTI_INDEX_VERSION
 * @reserved:	zero
 * @size:	sizeof(struct dti_dump_index)
 * @n_slots:	DTI_INDEX_SLOTS
 * @changes:	changes made to the table since boot
 * @overflowed:	non-zero once a descriptor found no free slot: the table
 *		is not complete, and a reader scans
 * @crc:	CRC-32 of the whole table, this field zero
 * @reserved2:	zero
 * @slot:	physical addresses of descriptors, each where a marker
 *		("__DTI__" or DTI_PERSIST_MARKER) starts; 0: a free slot
 */
struct dti_dump_index {
	__u32 magic;
	__u16 version;
	__u16 reserved;
	__u32 size;
	__u32 n_slots;
	__u32 changes;
	__u32 overflowed;
	__u32 crc;
	__u32 reserved2;
	__u64 slot[DTI_INDEX_SLOTS];
};

/*
 * Persistent region: RAM the kernel was told to leave alone (memmap= on
 * x86, reserve_mem= from 6.11), named by dti.ko's persist= parameter,
 * which keeps what it holds across any reset that keeps RAM.  It starts
 * with struct dti_persist_header; what follows belongs to persistent
 * channels.
 */
#define DTI_PERSIST_MARKER	"__DTI_PERSIST__"
#define DTI_PERSIST_MARKER_SIZE	16
#define DTI_PERSIST_MAGIC	0xD7D0AE55U
#define DTI_PERSIST_VERSION	4

/* Channels a region holds: entries in its slot table */
#define DTI_PERSIST_SLOTS	32

/**
 * struct dti_persist_header - the start of a persistent region
 * @marker:	DTI_PERSIST_MARKER, NUL-padded
 * @magic:	DTI_PERSIST_MAGIC
 * @version:	DTI_PERSIST_VERSION
 * @size:	bytes of the region, this header included
 * @base:	physical address of the region
 * @boots:	loads of dti.ko that took the region, the current one included
 * @header_size: sizeof(struct dti_persist_header)
 * @crc:	CRC-32 (zlib's) of the header, this field zero
 * @n_slots:	entries in the slot table, DTI_PERSIST_SLOTS
 * @slot_size:	sizeof(struct dti_persist_slot)
 * @page_size:	bytes per page of the kernel that set the region up: the
 *		areas and every CPU's ring in them start on a page
 * @next_free:	offset from the region's start of the first byte no slot's
 *		areas use; the slot table follows this header, then the
 *		module tables (struct dti_persist_modules); the areas start
 *		at the first page boundary after them
 *
 * A load that finds a header whose every field checks out keeps what
 * the region holds (the previous boot's records); any other content is
 * taken for RAM that was not kept, or damaged, and the region is set up
 * anew.
 */
struct dti_persist_header {
	char  marker[DTI_PERSIST_MARKER_SIZE];
	__u32 magic;
	__u32 version;
	__u64 size;
	__u64 base;
	__u32 boots;
	__u32 header_size;
	__u32 crc;
	__u32 n_slots;
	__u32 slot_size;
	__u32 page_size;
	__u64 next_free;
};

/* struct dti_persist_area.state */
#define DTI_PERSIST_AREA_FREE	0	/* holds nothing to keep */
#define DTI_PERSIST_AREA_USED	1	/* written by boot @boot */

/**
 * struct dti_persist_area - one of the two rings of a slot
 * @offset:	where its per-CPU rings start, from the region's start;
 *		CPU N's ring is at @offset + N * stride, where the stride is
 *		@subbuf_size * @n_subbufs rounded up to the header's @page_size
 * @generation:	generation every sub-buffer header of these rings carries
 * @boot:	the header's @boots of the load that wrote it
 * @state:	DTI_PERSIST_AREA_*
 * @subbuf_size: bytes per sub-buffer
 * @n_subbufs:	sub-buffers per CPU
 * @nr_cpus:	CPUs with a ring (nr_cpu_ids of that boot)
 *
 * A channel writes one of its slot's areas and leaves the other, which
 * holds the previous boot's records, alone; the next boot reads the one
 * written last and writes the other.
 */
struct dti_persist_area {
	__u64 offset;
	__u32 generation;
	__u32 boot;
	__u32 state;
	__u32 subbuf_size;
	__u32 n_subbufs;
	__u32 nr_cpus;
};

/**
 * struct dti_persist_slot - a persistent channel's place in the region
 * @name:	channel name, NUL-padded; empty: the slot is free
 * @area_size:	bytes each of the two areas has
 * @area:	the two areas
 * @crc:	CRC-32 of the slot, this field zero
 * @reserved:	zero
 *
 * A slot whose CRC fails is not trusted: its channel is reported as
 * damaged and its space is not used again until the region is set up
 * anew.
 */
struct dti_persist_slot {
	char  name[DTI_NAME_MAX + 1];
	__u64 area_size;
	struct dti_persist_area area[2];
	__u32 crc;
	__u32 reserved;
};

/*
 * Modules: what a reader needs to map a record's caller (a return
 * address in the module that logged) back into the module's file, with
 * nothing but the data: the module's name, its GNU build-id (which names
 * the one file whose lines are right) and where its code was loaded.
 *
 * dti.ko keeps one table for the whole machine: itself, and every module
 * loaded after it, which are all the modules that can call DTI (a client
 * needs dti.ko's symbols; SystemTap modules log through dti_ctl_*).  An
 * entry is written when its module comes in (MODULE_STATE_COMING, so
 * records its init function logs are covered) and marked gone with the
 * time when it leaves; a gone entry is reused, oldest first, only when
 * no free one is left.
 *
 * A module's core code is one block from @text: its executable sections
 * but the .init ones, in the order of its section headers, each at the
 * next multiple of its alignment (the kernel's layout_sections()), so
 * .text is at @text itself and .text.unlikely follows it.  @text_size
 * covers them all.
 *
 * It is seen three ways: the debugfs file DTI_MODULES_FILE (one line per
 * entry: "NAME 0xTEXT 0xTEXT_SIZE BUILD_ID STATE LOADED_NS UNLOADED_NS",
 * BUILD_ID in hex or "-", STATE "live" or "gone"), its copy in a
 * snapshot, and in a memory dump behind the marker "__DTI__" DTI_MODULES_FILE
 * (channel names never start with '.') as struct dti_dump_modules.
 */
#define DTI_MODULES_FILE	".modules"
#define DTI_MODULE_NAME_MAX	55	/* MODULE_NAME_LEN - 1 on 64-bit kernels */
#define DTI_BUILD_ID_SIZE	20	/* a GNU build-id: SHA-1 */
#define DTI_MODULES_MAX		64	/* entries in the table */

/* struct dti_dump_desc.type of the module table */
#define DTI_DUMP_MODULES	3

/* struct dti_module.state */
#define DTI_MODULE_FREE		0	/* unused entry */
#define DTI_MODULE_LIVE		1	/* loaded now */
#define DTI_MODULE_GONE		2	/* unloaded at @unloaded_ns */

/**
 * struct dti_module - where a module was loaded
 * @name:	module name, NUL-padded
 * @text:	kernel address of its core code, where its .text starts
 * @text_size:	bytes of its core code (all its non-init executable sections)
 * @state:	DTI_MODULE_*
 * @loaded_ns:	when it came in, in the records' clock
 * @unloaded_ns: when it left (DTI_MODULE_GONE), else 0
 * @build_id:	its GNU build-id, @build_id_len bytes
 * @build_id_len: 0 if the module has none
 */
struct dti_module {
	char  name[DTI_MODULE_NAME_MAX + 1];
	__u64 text;
	__u32 text_size;
	__u32 state;
	__u64 loaded_ns;
	__u64 unloaded_ns;
	__u8  build_id[DTI_BUILD_ID_SIZE];
	__u32 build_id_len;
};

/**
 * struct dti_dump_modules - the module table, as a dump reader finds it
 * @marker:	"__DTI__" DTI_MODULES_FILE, NUL-padded
 * @magic:	DTI_DUMP_MAGIC
 * @version:	DTI_DUMP_VERSION
 * @type:	DTI_DUMP_MODULES
 * @size:	sizeof(struct dti_dump_modules)
 * @entry_size:	sizeof(struct dti_module)
 * @n_entries:	DTI_MODULES_MAX
 * @crc:	CRC-32 of the whole table, entries included, this field zero
 * @reserved:	zero
 * @mod:	the entries, in no order
 *
 * It lies in physically contiguous memory and is changed only when a
 * module comes or goes, under a mutex; a dump taken in the middle of a
 * change finds a CRC that does not match.
 */
struct dti_dump_modules {
	char  marker[DTI_DUMP_MARKER_SIZE];
	__u32 magic;
	__u16 version;
	__u16 type;
	__u32 size;
	__u32 entry_size;
	__u32 n_entries;
	__u32 crc;
	__u32 reserved;
	struct dti_module mod[DTI_MODULES_MAX];
};

/* Module tables a persistent region holds, after its slot table */
#define DTI_PERSIST_MODULE_TABLES	2

/**
 * struct dti_persist_modules - a boot's module table in a persistent region
 * @boot:	the header's @boots of the load that wrote it; 0: never written
 * @n_entries:	DTI_MODULES_MAX
 * @entry_size:	sizeof(struct dti_module)
 * @crc:	CRC-32 of the table, this field zero
 * @mod:	the entries, as struct dti_dump_modules holds them
 *
 * A region holds DTI_PERSIST_MODULE_TABLES of them right after its slot
 * table, and its areas start at the first page boundary after them.  The
 * load whose @boots is N keeps table N % 2 equal to its module table, so
 * the other one holds the module table of the boot before.  The records
 * of a slot's area are read with the table whose @boot is the area's.
 */
struct dti_persist_modules {
	__u32 boot;
	__u32 n_entries;
	__u32 entry_size;
	__u32 crc;
	struct dti_module mod[DTI_MODULES_MAX];
};

#endif /* _UAPI_LINUX_DTI_RECORD_H */
