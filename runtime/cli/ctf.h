/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CTF 1.8 trace writer (ctf.c) for dti export (export.c): a directory
 * with the TSDL text "metadata" and one data stream per CPU, "cpuN",
 * written in packets.  It knows DTI's event context and packet context
 * but nothing of DTI's records: export.c declares the event classes and
 * puts each event's values.
 */
#ifndef _DTI_CTF_H
#define _DTI_CTF_H

#include <stdint.h>

struct dti_ctf;

/* What a field of an event class holds */
enum dti_ctf_kind {
	DTI_CTF_INT,		/* signed integer of @size bytes */
	DTI_CTF_UINT,		/* unsigned integer of @size bytes */
	DTI_CTF_HEX,		/* unsigned, shown in hex (an address) */
	DTI_CTF_STR,		/* text: a length, then UTF-8 bytes (a string) */
	DTI_CTF_BYTES,		/* a length, then bytes (a sequence of uint8) */
};

/**
 * struct dti_ctf_field - a field of an event class
 * @name:	its name as a reader shows it (a C identifier)
 * @kind:	what it holds
 * @size:	bytes of a number (1, 2, 4, 8); 0 for STR and BYTES
 */
struct dti_ctf_field {
	const char *name;
	enum dti_ctf_kind kind;
	unsigned int size;
};

/**
 * struct dti_ctf_ctx - the event context every event carries
 * @cpu:	CPU that logged it
 * @level:	its level (0..7)
 * @flags:	its DTI_REC_* bits
 * @seq:	its sequence number (0 where it has none: DTI_REC_PENDING)
 * @caller:	the logging call's return address
 */
struct dti_ctf_ctx {
	uint32_t cpu;
	int8_t level;
	uint8_t flags;
	uint64_t seq;
	uint64_t caller;
};

/*
 * A new trace in @dir (created; if it exists it must be empty), of
 * channel @channel (NULL: not known; see dti_ctf_set_channel()).  NULL
 * on error (printed, naming the directory).
 */
struct dti_ctf *dti_ctf_create(const char *dir, const char *channel);
/* The channel's name for the metadata's env, if none was given yet. */
void dti_ctf_set_channel(struct dti_ctf *c, const char *channel);
/*
 * Declare an event class called @name with the @n fields at @f (copied).
 * Returns its id, or -1 (out of memory, printed).
 */
int dti_ctf_class(struct dti_ctf *c, const char *name, const struct dti_ctf_field *f,
		  unsigned int n);
/*
 * Begin an event of class @id at @ts_ns in the stream of CPU @stream;
 * its fields follow with dti_ctf_put_num() and dti_ctf_put_bytes(), in
 * the order of the class.  Returns 0, or -1 (a write error or out of
 * memory, printed).
 */
int dti_ctf_event(struct dti_ctf *c, unsigned int stream, unsigned int id, uint64_t ts_ns,
		  const struct dti_ctf_ctx *ctx);
/* The next field of the event begun: a number of @size bytes */
void dti_ctf_put_num(struct dti_ctf *c, uint64_t v, unsigned int size);
/* The next field of the event begun, STR or BYTES: @len bytes at @p */
void dti_ctf_put_bytes(struct dti_ctf *c, const void *p, uint32_t len);
/*
 * @count records of CPU @stream were lost before its next event: that
 * event starts a packet whose events_discarded counts them, so that a
 * reader reports them between the events around the loss; two losses
 * with no event between them are told apart, by a packet of no event.
 */
void dti_ctf_discarded(struct dti_ctf *c, unsigned int stream, uint64_t count);
/*
 * Write what is left and the metadata, and free @c.  Returns 0, or -1
 * (printed, naming the file).
 */
int dti_ctf_close(struct dti_ctf *c);

#endif /* _DTI_CTF_H */
