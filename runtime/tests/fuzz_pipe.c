// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libdti's sequential path: the file-descriptor
 * source, its refills and resynchronisation.  The input is laid out as
 * for fuzz_decode.c (first byte: 1..4 per-CPU parts in its low bits),
 * and each part goes through a pipe in packet mode, so that every read()
 * the reader makes ends where the writer's packet ends.  The packet sizes
 * come from bits 2..5 of the first byte, k: 0 is whole pages, others a
 * pseudo-random series of 1..8k bytes.  Bit 6 opens in strict mode.
 * Without DTI_OPEN_STRICT no input may fail dti_next() (only ENOMEM may).
 *
 * The pipes are filled before reading, so a part takes at most as many
 * packets as a pipe of PIPE_MAX bytes has buffers; the rest of it goes
 * in one last write.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "fuzz_drain.h"

#define PIPE_MAX	(1 << 20)
#define PACKETS		200	/* of the 256 buffers of such a pipe */

/* A pipe holding @len bytes at @p in packets of the sizes @seed gives. */
static int fill_pipe(const uint8_t *p, size_t len, unsigned int seed, int *rfd)
{
	uint32_t x = seed * 2654435761u + 1;
	unsigned int packets = 0;
	int fds[2];
	size_t k;

	if (pipe2(fds, O_DIRECT | O_CLOEXEC) < 0)
		return -1;
	fcntl(fds[1], F_SETPIPE_SZ, PIPE_MAX);
	while (len) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		k = seed ? 1 + x % (seed * 8) : 4096;
		if (k > len || ++packets == PACKETS)
			k = len;
		if (write(fds[1], p, k) != (ssize_t)k)
			__builtin_trap();
		p += k;
		len -= k;
	}
	close(fds[1]);
	*rfd = fds[0];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char names[4][32];
	const char *paths[4];
	int fds[4];
	size_t part, len;
	struct dti_reader *r;
	unsigned int n, i;
	bool strict;

	if (size < 1)
		return 0;
	n = (data[0] & 3) + 1;
	strict = data[0] & 0x40;
	part = (size - 1) / n;
	for (i = 0; i < n; i++) {
		len = i == n - 1 ? size - 1 - i * part : part;
		if (fill_pipe(data + 1 + i * part, len, (data[0] >> 2) & 15, &fds[i]) < 0)
			__builtin_trap();
		snprintf(names[i], sizeof(names[i]), "/dev/fd/%d", fds[i]);
		paths[i] = names[i];
	}
	r = dti_open_files(paths, n, strict ? DTI_OPEN_STRICT : 0);
	if (!r)
		__builtin_trap();
	fuzz_drain(r, strict);
	for (i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}
