/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What test_libdti.c and test_dump.c share: the checks, which note a
 * failure and go on, and the run of a table of tests in a scratch
 * directory (tmpdir, removed at the end unless KEEP is set in the
 * environment), each reported "ok  " or "FAIL" with its name.
 */
#ifndef DTI_UNIT_H
#define DTI_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed, cur_failed;
static char tmpdir[256];

#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		cur_failed = 1; \
	} \
} while (0)

#define CHECK_STR(got, want) do { \
	const char *_g = (got), *_w = (want); \
	if (!_g || strcmp(_g, _w)) { \
		printf("  FAIL %s:%d: %s\n    got:  '%s'\n    want: '%s'\n", \
		       __FILE__, __LINE__, #got, _g ? _g : "(null)", _w); \
		cur_failed = 1; \
	} \
} while (0)

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/* Make tmpdir, /tmp/libdti-@tag.XXXXXX.  0, or 2 (message printed). */
static int unit_setup(const char *tag)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/libdti-%s.XXXXXX", tag);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	return 0;
}

/* Run the @n tests of @t, counting them in passed and failed. */
static void unit_run(const struct unit_test *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cur_failed = 0;
		t[i].fn();
		printf("%s: %s\n", cur_failed ? "FAIL" : "ok  ", t[i].name);
		if (cur_failed)
			failed++;
		else
			passed++;
	}
}

/* Remove tmpdir (unless KEEP is set), print the counts; the exit status. */
static int unit_finish(void)
{
	char cmd[sizeof(tmpdir) + 16];

	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif /* DTI_UNIT_H */
