// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libdti's event types (lib/event.c): the formats
 * read from DTI_REC_FORMAT records and the events (DTI_REC_TYPED) printed
 * through them, as text and JSON.  fuzz_decode.c reaches them too, but
 * only where a mutation keeps the framing intact; here the target frames
 * the payloads itself.  After a byte of flags the input holds payloads
 * as parts (fuzz_file.h) named format, event or text (others are binary
 * records); they become one sub-buffer of records of CPU 0, in the
 * input's order, read from memory with every record printed in every
 * format (fuzz_drain.h).  Bit 0 writes the framing in the other byte
 * order (the payloads are taken as they are).
 *
 * Seeds (fuzz-seeds-from-guest.py): the formats and events of
 * tests/guest-output/snap, a real channel with dti_test's event types,
 * each format with its events.
 */
#include <byteswap.h>
#include <stdlib.h>

#include "fuzz_drain.h"
#include "fuzz_file.h"

/* Records and bytes of a stream: at most the parts, in one sub-buffer */
#define FUZZ_STREAM_MAX	(1u << 20)

static bool swap;

static uint16_t s16(uint16_t v) { return swap ? bswap_16(v) : v; }
static uint32_t s32(uint32_t v) { return swap ? bswap_32(v) : v; }
static uint64_t s64(uint64_t v) { return swap ? bswap_64(v) : v; }

/* A record of @len bytes at @p into @out at *@at; false if it does not fit */
static bool fuzz_put(uint8_t *out, size_t *at, unsigned int flags, int level,
		     uint64_t seq, const void *p, size_t len)
{
	struct dti_record h = {
		.magic = s16(DTI_RECORD_MAGIC), .version = DTI_RECORD_VERSION_1,
		.flags = flags, .level = level, .hdr_len = sizeof(h),
		.len = s32(len), .seq = s64(seq), .ts_ns = s64(1000 + *at),
		.caller = s64(0xffffffffc0001234ull),
	};
	size_t size = DTI_RECORD_SIZE(len);

	if (size > FUZZ_STREAM_MAX - *at)
		return false;
	memcpy(out + *at, &h, sizeof(h));
	memcpy(out + *at + sizeof(h), p, len);
	memset(out + *at + sizeof(h) + len, 0, size - sizeof(h) - len);
	*at += size;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *out;
	struct fuzz_part parts[FUZZ_PARTS_MAX];
	struct dti_subbuf_info sub = { .n_subbufs = s32(1), .generation = s32(1) };
	const void *bufs[1];
	unsigned int n, i, flags, records = 0;
	uint64_t seq = 0;
	size_t at, head, len[1];
	struct dti_reader *r;

	if (size < 1)
		return 0;
	if (!out && !(out = malloc(FUZZ_STREAM_MAX)))
		__builtin_trap();
	swap = data[0] & 1;
	n = fuzz_split(data + 1, size - 1, parts);
	at = DTI_SUBBUF_HEADER_SIZE_V1;
	for (i = 0; i < n; i++) {
		flags = fuzz_named(&parts[i], "format") ? DTI_REC_FORMAT :
			fuzz_named(&parts[i], "event") ? DTI_REC_TYPED :
			fuzz_named(&parts[i], "text") ? DTI_REC_TEXT : 0;
		if (!fuzz_put(out, &at, flags, flags == DTI_REC_FORMAT ? 0 : 6,
			      flags == DTI_REC_FORMAT ? 0 : seq++, parts[i].p, parts[i].len))
			break;
		records++;
	}
	sub.subbuf_size = s32(FUZZ_STREAM_MAX);
	sub.records = s32(records);
	strcpy(sub.name, "fuzz");
	head = 0;
	fuzz_put(out, &head, DTI_REC_SUBBUF, 0, 0, &sub, DTI_SUBBUF_INFO_V1_SIZE);
	bufs[0] = out;
	len[0] = at;
	r = dti_open_mem(bufs, len, 1, 0);
	if (r)
		fuzz_drain(r, false);
	return 0;
}
