// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libdti's decoder and merge: the input is split
 * into 1..4 per-CPU buffers (first byte), each read as a stream or a raw
 * ring copy, and every record is printed in every format.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dti/libdti.h"

static void ignore(const struct dti_notice *n, void *arg)
{
	(void)n;
	(*(unsigned long *)arg)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	const void *bufs[4];
	size_t lens[4], part;
	struct dti_reader *r;
	struct dti_rec rec;
	unsigned long notices = 0;
	unsigned int n, i, guard = 0;

	if (!null)
		null = fopen("/dev/null", "w");
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
	r = dti_open_mem(bufs, lens, n);
	if (!r)
		return 0;
	dti_set_notice_handler(r, ignore, &notices);
	while (dti_next(r, &rec) > 0 && guard++ < 100000) {
		if (rec.raw_len < 40 || rec.len > rec.raw_len - 40)
			__builtin_trap();
		dti_print(r, null, &rec, guard % 5);
	}
	dti_close(r);
	return 0;
}
