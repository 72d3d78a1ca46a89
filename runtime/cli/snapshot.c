// SPDX-License-Identifier: GPL-2.0
/*
 * dti snapshot CHANNEL DIR: usage model 2 in one step.  Remember the
 * level, switch the channel off, make the trace files return everything
 * (reset_consumed), copy every traceN plus info and stats into DIR (and
 * the module table and the kernel's release, for decode --lines, and
 * the boot's ID, for decode --symbols), and
 * restore the level, also when copying failed.  SIGINT, SIGTERM or SIGHUP
 * in between restore it too, from the handler, before the signal ends
 * the process as it would have.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "dti-cli.h"

const char usage_snapshot[] =
	"usage: dti snapshot [--raw] [--force] CHANNEL DIR\n"
	"\nSwitch CHANNEL off, copy every per-CPU trace file (all records the\n"
	"buffers hold), its info and stats, the module table and this kernel's\n"
	"release (as modules and release, for 'dti decode --lines') and this\n"
	"boot's ID (boot_id, for 'dti decode --symbols') into DIR (created if\n"
	"needed, else it must be empty), and restore the previous\n"
	"level, also when interrupted.  Decode the copy with 'dti decode DIR'.\n"
	"\n"
	"  --raw    copy each whole ring through mmap instead of reading the\n"
	"           trace files: nothing is consumed, padding is kept\n"
	"  --force  use a DIR that is not empty: remove the trace*, info, stats,\n"
	"           modules, release and boot_id files an earlier snapshot left\n"
	"           there\n";

/* What the signal handler needs to restore the level: no allocation, no stdio */
static struct {
	char path[PATH_MAX];
	char text[16], msg[128];
	size_t text_len, msg_len;
	struct sigaction old[3];
	bool armed;
} dti_snap;
static const int dti_snap_signals[3] = { SIGINT, SIGTERM, SIGHUP };

static void dti_snap_on_signal(int sig)
{
	int fd;

	if (write(STDERR_FILENO, dti_snap.msg, dti_snap.msg_len) < 0) {
		/* nothing to do about it */
	}
	fd = open(dti_snap.path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, dti_snap.text, dti_snap.text_len) < 0) {
			/* as above */
		}
		close(fd);
	}
	raise(sig);	/* SA_RESETHAND: dies of it once the handler returns */
}

/*
 * Until dti_snap_disarm(), SIGINT, SIGTERM and SIGHUP restore level @level
 * of @ch before they end the process.  Ignored signals stay ignored.
 * 0, or -1 (dti_errmsg()).
 */
static int dti_snap_arm(const char *ch, int level)
{
	struct sigaction sa;
	unsigned int i;

	if (dti_channel_path(ch, "level", dti_snap.path, sizeof(dti_snap.path)) < 0)
		return -1;
	dti_snap.text_len = snprintf(dti_snap.text, sizeof(dti_snap.text), "%d", level);
	dti_snap.msg_len = snprintf(dti_snap.msg, sizeof(dti_snap.msg),
				    "dti: interrupted: restoring level %d of %.40s\n",
				    level, ch);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dti_snap_on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaddset(&sa.sa_mask, dti_snap_signals[i]);
	for (i = 0; i < 3; i++) {
		sigaction(dti_snap_signals[i], NULL, &dti_snap.old[i]);
		if (dti_snap.old[i].sa_handler != SIG_IGN)
			sigaction(dti_snap_signals[i], &sa, NULL);
	}
	dti_snap.armed = true;
	return 0;
}

static void dti_snap_disarm(void)
{
	unsigned int i;

	for (i = 0; dti_snap.armed && i < 3; i++)
		sigaction(dti_snap_signals[i], &dti_snap.old[i], NULL);
	dti_snap.armed = false;
}

/* A file snapshot writes into DIR, and --force removes */
static bool dti_snap_file(const char *name)
{
	return !strncmp(name, "trace", 5) || !strcmp(name, "info") ||
	       !strcmp(name, "stats") || !strcmp(name, DTI_SNAP_MODULES) ||
	       !strcmp(name, DTI_SNAP_RELEASE) || !strcmp(name, DTI_SNAP_BOOT_ID);
}

/*
 * Create @dir, or check that it is empty; with @force remove the files of
 * an earlier snapshot from it instead, and say so.  0 or an exit code.
 */
static int dti_snap_dir(const char *dir, bool force)
{
	char path[PATH_MAX + 300];
	unsigned int removed = 0, other = 0;
	struct dirent *de;
	DIR *d;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno != EEXIST || !(d = opendir(dir)))
		return dti_err("%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!force || !dti_snap_file(de->d_name)) {
			other++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) != 0) {
			closedir(d);
			return dti_err("%s: %s", path, strerror(errno));
		}
		removed++;
	}
	closedir(d);
	if (!force && other)
		return dti_err("%s: directory is not empty (an earlier snapshot?); --force replaces its trace files",
			       dir);
	if (removed)
		dti_warn("%s: removed %u file%s of an earlier snapshot (--force)",
			 dir, removed, removed == 1 ? "" : "s");
	return 0;
}

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

/* Bytes dti_copy_file() reads at a time first, and at most */
#define DTI_COPY_CHUNK		(64u << 10)
#define DTI_COPY_CHUNK_MAX	(4u << 20)	/* the largest sub-buffer */

long long dti_copy_file(const char *src, const char *dst)
{
	size_t size = DTI_COPY_CHUNK;
	long long total = 0;
	char *buf, *nb;
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
	buf = malloc(size);
	if (!buf) {
		dti_err("%s: out of memory", src);
		close(in);
		close(out);
		return -1;
	}
	for (;;) {
		n = read(in, buf, size);
		/*
		 * A trace file refuses a read() too small for its next
		 * record, taking nothing: read again with more room.
		 */
		if (n < 0 && errno == EINVAL && size < DTI_COPY_CHUNK_MAX &&
		    (nb = realloc(buf, size * 2))) {
			buf = nb;
			size *= 2;
			continue;
		}
		if (n <= 0)
			break;
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
	free(buf);
	close(in);
	if (close(out) != 0 && total >= 0) {
		dti_err("%s: %s", dst, strerror(errno));
		total = -1;
	}
	return total;
}

/*
 * The machine's module table, <debugfs>/dti/.modules beside the channel
 * directory @chdir, into DIR/modules, for 'dti decode --lines': where the
 * modules that logged were loaded, with their build-ids.  A dti.ko
 * without one has none: nothing is copied.  0 or an exit code.
 */
static int dti_copy_modules(const char *chdir, const char *dir)
{
	char src[PATH_MAX + 32], dst[PATH_MAX + 300];
	const char *slash = strrchr(chdir, '/');

	snprintf(src, sizeof(src), "%.*s/" DTI_MODULES_FILE,
		 slash ? (int)(slash - chdir) : 1, slash ? chdir : ".");
	if (access(src, F_OK) != 0)
		return 0;
	snprintf(dst, sizeof(dst), "%s/" DTI_SNAP_MODULES, dir);
	return dti_copy_file(src, dst) < 0 ? DTI_EXIT_FAIL : 0;
}

int dti_snap_write_release(const char *dir, const char *release)
{
	char path[PATH_MAX + 300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/" DTI_SNAP_RELEASE, dir);
	f = fopen(path, "w");
	if (!f)
		return dti_err("%s: %s", path, strerror(errno));
	fprintf(f, "%s\n", release);
	if (fclose(f) != 0)
		return dti_err("%s: %s", path, strerror(errno));
	return DTI_EXIT_OK;
}

/*
 * The release of the running kernel, whose modules wrote the records, as
 * DIR/release: 'dti decode --lines' elsewhere looks for their files
 * under that release's directories.  0 or an exit code.
 */
static int dti_copy_release(const char *dir)
{
	struct utsname u;

	if (uname(&u))
		return dti_err("uname: %s", strerror(errno));
	return dti_snap_write_release(dir, u.release);
}

/*
 * This boot's ID as DIR/boot_id: 'dti decode -s' resolves callers through
 * /proc/kallsyms only for records of the boot it runs in.  Without
 * DTI_BOOT_ID (no procfs) there is none, and decode -s refuses the
 * snapshot.  0 or an exit code.
 */
static int dti_copy_boot_id(const char *dir)
{
	char dst[PATH_MAX + 300];

	if (access(DTI_BOOT_ID, R_OK) != 0)
		return DTI_EXIT_OK;
	snprintf(dst, sizeof(dst), "%s/" DTI_SNAP_BOOT_ID, dir);
	return dti_copy_file(DTI_BOOT_ID, dst) < 0 ? DTI_EXIT_FAIL : DTI_EXIT_OK;
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

		if (!dti_snap_file(de->d_name))
			continue;
		snprintf(src, sizeof(src), "%s/%s", chdir, de->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", dir, de->d_name);
		n = trace && ring ? dti_copy_mmap(src, dst, ring) : dti_copy_file(src, dst);
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
		{ "raw",   no_argument, NULL, 'r' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	char chdir[PATH_MAX];
	size_t ring = 0;
	bool raw = false, force = false;
	const char *ch, *dir;
	unsigned int files = 0;
	long long bytes = 0;
	int c, level, ret;

	while ((c = dti_getopt("snapshot", argc, argv, "h", opts, &ret)) != -1) {
		if (c == DTI_OPT_EXIT)
			return ret;
		if (c == 'r')
			raw = true;
		else
			force = true;
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
	ret = dti_snap_dir(dir, force);
	if (ret != DTI_EXIT_OK)
		return ret;
	if (level != -1 && (dti_snap_arm(ch, level) < 0 || dti_set_level(ch, -1) < 0)) {
		dti_snap_disarm();
		return dti_err("%s", dti_errmsg());
	}
	if (!raw && dti_reset_consumed(ch) < 0)
		ret = dti_err("%s", dti_errmsg());
	else
		ret = dti_copy_channel(chdir, dir, ring, &files, &bytes);
	if (ret == DTI_EXIT_OK)
		ret = dti_copy_modules(chdir, dir);
	if (ret == DTI_EXIT_OK)
		ret = dti_copy_release(dir);
	if (ret == DTI_EXIT_OK)
		ret = dti_copy_boot_id(dir);
	if (level != -1 && dti_set_level(ch, level) < 0)
		ret = dti_err("cannot restore level %d: %s", level, dti_errmsg());
	dti_snap_disarm();
	if (ret == DTI_EXIT_OK)
		printf("%s: %u per-CPU files, %lld bytes in %s (level %d restored)\n",
		       ch, files, bytes, dir, level);
	return ret;
}
