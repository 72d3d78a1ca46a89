// SPDX-License-Identifier: GPL-2.0
/*
 * dti snapshot CHANNEL DIR: usage model 2 in one step.  Remember the
 * level, switch the channel off, make the trace files return everything
 * (reset_consumed), copy every traceN plus info and stats into DIR, and
 * restore the level, also when copying failed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dti-cli.h"

const char usage_snapshot[] =
	"usage: dti snapshot [--raw] CHANNEL DIR\n"
	"\nSwitch CHANNEL off, copy every per-CPU trace file (all records the\n"
	"buffers hold) and its info and stats into DIR (created if needed), and\n"
	"restore the previous level.  Decode the copy with 'dti decode DIR'.\n"
	"\n"
	"  --raw    copy each whole ring through mmap instead of reading the\n"
	"           trace files: nothing is consumed, padding is kept\n";

/* Geometry from the channel's info file: ring bytes per CPU, or 0. */
static size_t dti_ring_bytes(const char *ch)
{
	char *info = dti_read_ctl(ch, "info"), *p;
	unsigned long long ss = 0, n = 0;

	if (!info)
		return 0;
	p = strstr(info, "subbuf_size: ");
	if (p)
		ss = strtoull(p + 13, NULL, 10);
	p = strstr(info, "n_subbufs: ");
	if (p)
		n = strtoull(p + 11, NULL, 10);
	free(info);
	return ss * n;
}

/* Copy a relay file's whole ring through mmap.  Bytes copied or -1. */
static long long dti_copy_mmap(const char *src, const char *dst, size_t ring)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (ring + page - 1) / page * page;
	long long ret = (long long)ring;
	void *map;
	int in, out;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		dti_err("%s: %s", src, strerror(errno));
		return -1;
	}
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, in, 0);
	close(in);
	if (map == MAP_FAILED) {
		if (errno == ENODEV)
			dti_err("%s: this file cannot be mapped (a debugfs file proxy without mmap); use snapshot without --raw",
				src);
		else
			dti_err("%s: mmap of %zu bytes failed: %s", src, len,
				strerror(errno));
		return -1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0 || write(out, map, ring) != (ssize_t)ring) {
		dti_err("%s: %s", dst, strerror(errno));
		ret = -1;
	}
	if (out >= 0 && close(out) != 0 && ret >= 0) {
		dti_err("%s: %s", dst, strerror(errno));
		ret = -1;
	}
	munmap(map, len);
	return ret;
}

/* Copy @src to @dst; returns bytes copied or -1 (message printed). */
static long long dti_copy(const char *src, const char *dst)
{
	char buf[65536];
	long long total = 0;
	int in, out;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		dti_err("%s: %s", src, strerror(errno));
		return -1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		dti_err("%s: %s", dst, strerror(errno));
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, n) != n) {
			dti_err("%s: write error: %s", dst, strerror(errno));
			total = -1;
			break;
		}
		total += n;
	}
	if (n < 0) {
		dti_err("%s: read error: %s", src, strerror(errno));
		total = -1;
	}
	close(in);
	if (close(out) != 0 && total >= 0) {
		dti_err("%s: %s", dst, strerror(errno));
		total = -1;
	}
	return total;
}

static int dti_copy_channel(const char *chdir, const char *dir, size_t ring,
			    unsigned int *files, long long *bytes)
{
	char src[PATH_MAX + 300], dst[PATH_MAX + 300];
	struct dirent *de;
	long long n;
	DIR *d;
	int ret = 0;

	d = opendir(chdir);
	if (!d)
		return dti_err("%s: %s", chdir, strerror(errno));
	while ((de = readdir(d))) {
		bool trace = !strncmp(de->d_name, "trace", 5);

		if (!trace && strcmp(de->d_name, "info") && strcmp(de->d_name, "stats"))
			continue;
		snprintf(src, sizeof(src), "%s/%s", chdir, de->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", dir, de->d_name);
		n = trace && ring ? dti_copy_mmap(src, dst, ring) : dti_copy(src, dst);
		if (n < 0) {
			ret = DTI_EXIT_FAIL;
			break;
		}
		if (trace) {
			(*files)++;
			*bytes += n;
		}
	}
	closedir(d);
	return ret;
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "raw",  no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	char chdir[PATH_MAX];
	size_t ring = 0;
	bool raw = false;
	const char *ch, *dir;
	unsigned int files = 0;
	long long bytes = 0;
	int c, level, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return dti_usage("snapshot", false, NULL);
		if (c == 'r') {
			raw = true;
			continue;
		}
		return dti_usage("snapshot", true, "unknown option");
	}
	if (argc - optind != 2)
		return dti_usage("snapshot", true, "expected CHANNEL and DIR");
	ch = argv[optind];
	dir = argv[optind + 1];
	if (dti_channel_path(ch, NULL, chdir, sizeof(chdir)) < 0 ||
	    dti_get_level(ch, &level) < 0)
		return dti_err("%s", dti_errmsg());
	if (level == -2)
		return dti_err("channel %s has no buffers (level destroy): nothing to copy", ch);
	if (raw) {
		ring = dti_ring_bytes(ch);
		if (!ring)
			return dti_err("channel %s: cannot tell the buffer size from its info file", ch);
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return dti_err("%s: %s", dir, strerror(errno));
	if (level != -1 && dti_set_level(ch, -1) < 0)
		return dti_err("%s", dti_errmsg());
	if (!raw && dti_reset_consumed(ch) < 0)
		ret = dti_err("%s", dti_errmsg());
	else
		ret = dti_copy_channel(chdir, dir, ring, &files, &bytes);
	if (level != -1 && dti_set_level(ch, level) < 0)
		ret = dti_err("cannot restore level %d: %s", level, dti_errmsg());
	if (ret == DTI_EXIT_OK)
		printf("%s: %u per-CPU files, %lld bytes in %s (level %d restored)\n",
		       ch, files, bytes, dir, level);
	return ret;
}
