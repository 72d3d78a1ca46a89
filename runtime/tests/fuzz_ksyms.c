// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libdti's kallsyms reader (lib/ksyms.c): the input
 * is a kallsyms file, loaded with dti_ksyms_load(); the address at the
 * start of each of its first lines, one below and one above, and the
 * first bytes of the input as an address, are each printed with
 * dti_ksyms_format() into a buffer large enough and into one too small.
 * Loading fails only with a message and one of its errnos; a format
 * fails only with ENOENT or ENOSPC, and always leaves a string.
 *
 * Seeds (tests/guest-output/kallsyms, fuzz-seeds-from-guest.py): the
 * first lines of a guest's /proc/kallsyms and those of dti.ko and
 * dti_test.ko.
 */
#include <errno.h>
#include <stdlib.h>

#include "dti/libdti.h"
#include "fuzz_file.h"

#define FUZZ_LOOKUPS	32

static void fuzz_format(const struct dti_ksyms *ks, uint64_t addr)
{
	static const size_t sizes[] = { 600, 12 };
	char buf[600];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		memset(buf, 'X', sizeof(buf));
		if (dti_ksyms_format(ks, addr, buf, sizes[i]) < 0 &&
		    errno != ENOENT && errno != ENOSPC)
			__builtin_trap();
		if (!memchr(buf, '\0', sizes[i]))
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *text, *line;
	struct dti_ksyms *ks;
	unsigned int n = 0;
	uint64_t addr = 0;
	int fd;

	fd = fuzz_memfd(data, size, path, sizeof(path));
	ks = dti_ksyms_load(path);
	close(fd);
	if (!ks) {
		if ((errno != EACCES && errno != ENOENT && errno != ENOMEM &&
		     errno != EINVAL) || !strstr(dti_errmsg(), path))
			__builtin_trap();
		return 0;
	}
	text = strndup((const char *)data, size);
	for (line = text; line && *line && n < FUZZ_LOOKUPS; n++) {
		addr = strtoull(line, NULL, 16);
		fuzz_format(ks, addr - 1);
		fuzz_format(ks, addr);
		fuzz_format(ks, addr + 1);
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	free(text);
	memcpy(&addr, data, size < sizeof(addr) ? size : sizeof(addr));
	fuzz_format(ks, addr);
	dti_ksyms_free(ks);
	return 0;
}
