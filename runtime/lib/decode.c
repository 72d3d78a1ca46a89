// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: record header decoding.
 *
 * Headers are in the byte order of the machine that wrote them; the magic
 * tells which.  Both orders are decoded into a host-order struct dti_hdr.
 */
#include <byteswap.h>
#include <stddef.h>
#include <string.h>

#include "libdti-local.h"

#define DTI_MAGIC_SWAPPED	0x1AD7

uint64_t dti_rec_size(uint32_t len)
{
	return DTI_RECORD_SIZE((uint64_t)len);
}

static bool dti_all_zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/**
 * dti_decode_hdr - decode and check the header at @p (DTI_HDR_SIZE bytes)
 * @max_payload: largest acceptable payload length
 *
 * Return: DTI_HDR_OK with @h filled, or why the header is not valid.
 */
enum dti_hdr_status dti_decode_hdr(const void *p, struct dti_hdr *h,
				   uint32_t max_payload)
{
	struct dti_record r;

	memcpy(&r, p, sizeof(r));
	if (r.magic == DTI_RECORD_MAGIC) {
		h->swapped = false;
	} else if (r.magic == DTI_MAGIC_SWAPPED) {
		h->swapped = true;
		r.cpu = bswap_16(r.cpu);
		r.len = bswap_32(r.len);
		r.log_cpu = bswap_32(r.log_cpu);
		r.seq = bswap_64(r.seq);
		r.ts_ns = bswap_64(r.ts_ns);
		r.caller = bswap_64(r.caller);
	} else {
		/* Zero where a header belongs: padding or never written. */
		return dti_all_zero(p, DTI_RECORD_ALIGN) ? DTI_HDR_ZERO :
							   DTI_HDR_BAD_MAGIC;
	}
	if (r.version != DTI_RECORD_VERSION)
		return DTI_HDR_BAD_VERSION;
	if (r.hdr_len != DTI_HDR_SIZE || r.len > max_payload)
		return DTI_HDR_BAD_LEN;
	if ((r.flags & DTI_REC_SUBBUF) && r.len < sizeof(struct dti_subbuf_info))
		return DTI_HDR_BAD_LEN;
	h->version = r.version;
	h->flags = r.flags;
	h->hdr_len = r.hdr_len;
	h->level = r.level;
	h->cpu = r.cpu;
	h->log_cpu = r.log_cpu;
	h->len = r.len;
	h->seq = r.seq;
	h->ts_ns = r.ts_ns;
	h->caller = r.caller;
	return DTI_HDR_OK;
}

const char *dti_hdr_status_str(enum dti_hdr_status st)
{
	switch (st) {
	case DTI_HDR_OK:		return "valid";
	case DTI_HDR_ZERO:		return "zero bytes where a record header belongs";
	case DTI_HDR_BAD_MAGIC:		return "bad magic (not DTI data)";
	case DTI_HDR_BAD_VERSION:	return "unsupported record version";
	case DTI_HDR_BAD_LEN:		return "impossible header or payload length";
	}
	return "?";
}

void dti_decode_sub(const void *payload, bool swapped, struct dti_sub *s)
{
	struct dti_subbuf_info in;

	memcpy(&in, payload, sizeof(in));
	s->subbuf_size = swapped ? bswap_32(in.subbuf_size) : in.subbuf_size;
	s->n_subbufs = swapped ? bswap_32(in.n_subbufs) : in.n_subbufs;
	s->padding = swapped ? bswap_32(in.padding) : in.padding;
	s->records = swapped ? bswap_32(in.records) : in.records;
	s->state = swapped ? bswap_32(in.state) : in.state;
	memcpy(s->name, in.name, sizeof(s->name));
	s->name[DTI_NAME_MAX] = '\0';
}
