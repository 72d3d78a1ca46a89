/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzz targets of file readers share: the input as a file, and
 * an input that holds several named files.
 *
 * Several files travel in one input as parts, each "@@F:" NAME "\n"
 * CONTENT, up to the next "@@F:" (what comes before the first is not a
 * part): tests/fuzz-seeds-from-guest.py writes seeds so, and mutations
 * that cut or join parts make files missing, empty or doubled.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_SEP	"@@F:"
#define FUZZ_SEP_LEN	4
#define FUZZ_PARTS_MAX	16

/* One part of an input: its name (@name_len bytes) and content */
struct fuzz_part {
	const char *name;
	size_t name_len;
	const uint8_t *p;
	size_t len;
};

/* Where "@@F:" next starts in @p (@len bytes), or @len */
static inline size_t fuzz_sep(const uint8_t *p, size_t len)
{
	const uint8_t *q = len >= FUZZ_SEP_LEN ?
		memmem(p, len, FUZZ_SEP, FUZZ_SEP_LEN) : NULL;

	return q ? (size_t)(q - p) : len;
}

/* Split @data into at most FUZZ_PARTS_MAX parts; returns how many. */
static inline unsigned int fuzz_split(const uint8_t *data, size_t size,
				      struct fuzz_part *parts)
{
	size_t at = fuzz_sep(data, size), end, nl;
	unsigned int n = 0;

	while (at < size && n < FUZZ_PARTS_MAX) {
		at += FUZZ_SEP_LEN;
		end = at + fuzz_sep(data + at, size - at);
		nl = at;
		while (nl < end && data[nl] != '\n')
			nl++;
		parts[n].name = (const char *)data + at;
		parts[n].name_len = nl - at;
		parts[n].p = data + (nl < end ? nl + 1 : end);
		parts[n].len = end - (nl < end ? nl + 1 : end);
		n++;
		at = end;
	}
	return n;
}

/* Whether part @pt is named @name */
static inline bool fuzz_named(const struct fuzz_part *pt, const char *name)
{
	return pt->name_len == strlen(name) && !memcmp(pt->name, name, pt->name_len);
}

/*
 * @len bytes at @p as a file in memory, named /proc/self/fd/N in @path
 * (@size bytes).  Returns its descriptor, for the caller to close.
 */
static inline int fuzz_memfd(const void *p, size_t len, char *path, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || write(fd, p, len) != (ssize_t)len)
		__builtin_trap();
	snprintf(path, size, "/proc/self/fd/%d", fd);
	return fd;
}
