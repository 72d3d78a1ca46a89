// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libdti's decoder and merge: the input is split
 * into 1..4 per-CPU buffers (first byte), each read as a stream or a raw
 * ring copy, and every record is printed in every format.  No input may
 * fail dti_next() (damage is a notice; only ENOMEM may fail it).
 *
 * Seeds (fuzz-seeds/, shared with fuzz_pipe.c): small synthetic streams
 * and a ring, and real guest output of the benchmark's dti_bench_big
 * channel: guest-2cpu, the first 4000 bytes of trace0 and trace1;
 * guest-subbuf-edge, trace0 across the end of a sub-buffer; guest-raw-*,
 * ring copies (4 slots, wrapped, stale data in them) built from its records.
 * Those are record version 1; of version 2 (compact records), from
 * testsuite/test_kmod.py's test_each_read_of_a_trace_file_decodes_alone:
 * guest-v2-subbufs, a closed and an open sub-buffer of trace0 read whole;
 * guest-v2-reads, the start of trace0 read 200 bytes at a time, a
 * continuation header (DTI_SUBBUF_CONTINUED) at the start of each read().
 */
#include <stdbool.h>
#include <stdint.h>

#include "fuzz_drain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const void *bufs[4];
	size_t lens[4], part;
	struct dti_reader *r;
	unsigned int n, i;

	if (size < 1)
		return 0;
	n = (data[0] & 3) + 1;
	data++;
	size--;
	part = size / n;
	for (i = 0; i < n; i++) {
		bufs[i] = data + i * part;
		lens[i] = i == n - 1 ? size - i * part : part;
	}
	r = dti_open_mem(bufs, lens, n, 0);
	if (r)
		fuzz_drain(r, false);
	return 0;
}
