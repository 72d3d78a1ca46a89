// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: record header decoding and checking.
 *
 * Headers are in the byte order of the machine that wrote them; the magic
 * tells which.  Both orders are decoded into a host-order struct dti_hdr.
 * dti_decode_hdr() (libdti-local.h: it is on every record's path) checks
 * what frames a record (magic, version, lengths);
 * dti_sub_invalid() and dti_rec_invalid() check every other field
 * against the format, so that a flipped bit is reported instead of
 * printed.
 */
#include <byteswap.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "libdti-local.h"

#define DTI_REC_KNOWN		(DTI_REC_TEXT | DTI_REC_TRUNCATED | \
				 DTI_REC_RESERVED | DTI_REC_REPLAYED | \
				 DTI_REC_PENDING | DTI_REC_FORMAT | DTI_REC_TYPED)

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

static uint32_t dti_u32(uint32_t v, bool swapped)
{
	return swapped ? bswap_32(v) : v;
}

static uint64_t dti_u64(uint64_t v, bool swapped)
{
	return swapped ? bswap_64(v) : v;
}

void dti_decode_sub(const void *payload, const struct dti_hdr *h, struct dti_sub *s)
{
	bool swapped = h->swapped;
	struct dti_subbuf_info in = { 0 };

	memcpy(&in, payload, dti_sub_info_len(h->version));
	s->subbuf_size = dti_u32(in.subbuf_size, swapped);
	s->n_subbufs = dti_u32(in.n_subbufs, swapped);
	s->padding = dti_u32(in.padding, swapped);
	s->records = dti_u32(in.records, swapped);
	s->state = dti_u32(in.state, swapped);
	s->generation = dti_u32(in.generation, swapped);
	s->name_ok = memchr(in.name, '\0', sizeof(in.name)) != NULL;
	memcpy(s->name, in.name, sizeof(s->name));
	s->name[DTI_NAME_MAX] = '\0';
	s->seq_base = dti_u64(in.seq_base, swapped);
	s->ts_base = dti_u64(in.ts_base, swapped);
	s->caller_prev = dti_u64(in.caller_prev, swapped);
	s->version = h->version;
}

/*
 * Why a header with DTI_REC_SUBBUF and its info @sub are not a sub-buffer
 * header as dti.ko writes it, or NULL if they are.
 */
const char *dti_sub_invalid(const struct dti_hdr *h, const struct dti_sub *sub)
{
	uint32_t ss = sub->subbuf_size, data, hs = dti_sub_size(h->version);
	bool v1 = h->version == DTI_RECORD_VERSION_1;

	if (h->flags != DTI_REC_SUBBUF)
		return "sub-buffer flag together with other flags";
	if (h->len != dti_sub_info_len(h->version))
		return "record with the sub-buffer flag but not a sub-buffer header's length";
	if (h->level || h->log_cpu != h->cpu)
		return "sub-buffer header with a level or another logging CPU";
	if (ss < hs + DTI_HDR_SIZE || ss > DTI_SUBBUF_MAX || ss % DTI_RECORD_ALIGN)
		return "impossible sub-buffer size";
	if (!sub->n_subbufs || sub->n_subbufs > DTI_CPU_LIMIT)
		return "impossible number of sub-buffers";
	if (sub->state > (v1 ? DTI_SUBBUF_CLOSED : DTI_SUBBUF_CONTINUED))
		return "unknown sub-buffer state";
	if (sub->padding > ss - hs ||
	    sub->padding % (v1 ? DTI_RECORD_ALIGN : DTI_CREC_ALIGN) ||
	    (sub->padding && sub->state != DTI_SUBBUF_CLOSED))
		return "impossible sub-buffer padding";
	data = ss - hs - sub->padding;
	if ((uint64_t)sub->records * (v1 ? DTI_HDR_SIZE : DTI_CREC_SIZE_MIN) > data)
		return "more records than the sub-buffer can hold";
	if (!sub->name_ok || !sub->name[0])
		return "bad channel name";
	return NULL;
}

/*
 * Check a trace record's fields (its framing is checked already): flags,
 * the CPU that holds it and the one that logged it, against @ncpu CPUs.
 * A pending record (in a pending store, from a memory dump) has no
 * sequence number yet (seq 0) and is held by no buffer: its cpu is the
 * logging CPU, as in dti.ko's dti_pending_add(), and it was not replayed.
 * Returns NULL if they are valid, else what is wrong, in @buf.
 */
const char *dti_rec_invalid(const struct dti_hdr *h, unsigned int ncpu,
			    char *buf, size_t size)
{
	if (h->flags & ~DTI_REC_KNOWN)
		snprintf(buf, size, "unknown flags %#x", h->flags);
	else if ((h->flags & DTI_REC_FORMAT) &&
		 (h->flags != DTI_REC_FORMAT || h->seq || h->level))
		snprintf(buf, size, "event format with flags %#x, seq %llu, level %d",
			 h->flags, (unsigned long long)h->seq, h->level);
	else if ((h->flags & DTI_REC_TYPED) &&
		 (h->len < sizeof(uint16_t) || (h->flags & DTI_REC_TEXT)))
		snprintf(buf, size, "event of %u bytes with flags %#x", h->len, h->flags);
	else if ((h->flags & DTI_REC_PENDING) &&
		 (h->seq || (h->flags & DTI_REC_REPLAYED)))
		snprintf(buf, size, "pending record with %s",
			 h->seq ? "a sequence number" : "the replayed flag");
	else if (h->cpu >= ncpu)
		snprintf(buf, size, "cpu %u, but the machine has %u CPUs",
			 h->cpu, ncpu);
	else if (h->flags & DTI_REC_REPLAYED ? h->log_cpu >= ncpu :
		 h->log_cpu != h->cpu)
		snprintf(buf, size, "logging CPU %u in a record of cpu%u%s",
			 h->log_cpu, h->cpu,
			 h->flags & DTI_REC_REPLAYED ? "" : " (not a replayed one)");
	else
		return NULL;
	return buf;
}
