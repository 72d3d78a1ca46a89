// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libdti's snapshot directories (lib/reader.c): the
 * files a `dti snapshot` or dti_dump_save() writes (trace0..N, copies of
 * the rings; info; stats; pending) and what checks them against each
 * other.  After a byte of flags the input holds the files as parts
 * (fuzz_file.h) named info, stats, pending, modules or traceN (N of up to three
 * digits, so that trace0 and trace00 are two files of one CPU); parts
 * of other names are left out.  They are written into a directory that
 * is opened with dti_open_dir(), or (bit 0) whose files are given to
 * dti_open_files() in the input's order; bit 1 opens it in strict mode.
 * Every record is printed in every format (fuzz_drain.h): nothing may
 * fail but for ENOMEM and, in strict mode, damage.
 *
 * Seeds (fuzz-seeds-from-guest.py): tests/guest-output/snap, a real
 * snapshot of a wrapped channel with events, as it is and with its info
 * and stats changed.
 */
#include <limits.h>
#include <stdlib.h>

#include "fuzz_drain.h"
#include "fuzz_file.h"

static char dir[] = "/tmp/dti-fuzz-snapshot-XXXXXX";

static void fuzz_rmdir(void)
{
	rmdir(dir);
}

/* Whether @pt names a file of a snapshot */
static bool fuzz_snap_name(const struct fuzz_part *pt)
{
	size_t i;

	if (fuzz_named(pt, "info") || fuzz_named(pt, "stats") || fuzz_named(pt, "pending") ||
	    fuzz_named(pt, "modules"))
		return true;
	if (pt->name_len < 6 || pt->name_len > 8 || memcmp(pt->name, "trace", 5))
		return false;
	for (i = 5; i < pt->name_len; i++)
		if (pt->name[i] < '0' || pt->name[i] > '9')
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char names[FUZZ_PARTS_MAX][PATH_MAX];
	const char *paths[FUZZ_PARTS_MAX];
	struct fuzz_part parts[FUZZ_PARTS_MAX];
	struct dti_reader *r;
	struct dti_module *mods = NULL;
	struct dti_lines *l = NULL;
	unsigned int n, i, k = 0;
	int nm, open_err;
	static bool made;
	bool strict;
	FILE *f;

	if (!made) {
		if (!mkdtemp(dir))
			__builtin_trap();
		atexit(fuzz_rmdir);
		made = true;
	}
	if (size < 1)
		return 0;
	strict = data[0] & 2;
	n = fuzz_split(data + 1, size - 1, parts);
	for (i = 0; i < n; i++) {
		if (!fuzz_snap_name(&parts[i]))
			continue;
		snprintf(names[k], sizeof(names[k]), "%s/%.*s", dir,
			 (int)parts[i].name_len, parts[i].name);
		f = fopen(names[k], "w");
		if (!f || fwrite(parts[i].p, 1, parts[i].len, f) != parts[i].len ||
		    fclose(f) != 0)
			__builtin_trap();
		paths[k] = names[k];
		k++;
	}
	if (!k)
		return 0;
	if (data[0] & 1)
		r = dti_open_files(paths, k, strict ? DTI_OPEN_STRICT : 0);
	else
		r = dti_open_dir(dir, strict ? DTI_OPEN_STRICT : 0);
	open_err = errno;
	/* a module table: callers printed through it (no file is found) */
	snprintf(names[FUZZ_PARTS_MAX - 1], PATH_MAX, "%s/modules", dir);
	nm = dti_modules_load(names[FUZZ_PARTS_MAX - 1], &mods);
	if (nm < 0 && errno != ENOENT && errno != EINVAL && errno != ENOMEM)
		__builtin_trap();
	if (r && nm >= 0 && (l = dti_lines_new()) &&
	    !dti_lines_set_kernel(l, "fuzz-no-such-release") &&
	    dti_lines_add_modules(l, mods, nm) >= 0)
		dti_set_lines(r, l);
	if (r)
		fuzz_drain(r, strict);	/* closes it */
	else if (open_err != ENOENT && open_err != ENOMEM)
		__builtin_trap();
	dti_lines_free(l);
	free(mods);
	for (i = 0; i < k; i++)
		unlink(paths[i]);
	return 0;
}
