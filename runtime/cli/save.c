// SPDX-License-Identifier: GPL-2.0
/*
 * dti save-previous: what dti.ko shows of the previous boot's persistent
 * channels (<debugfs>/dti/.previous/NAME) saved as snapshot directories
 * under DIR/TIME-BOOTID/NAME, TIME when this boot saved them (UTC) and
 * BOOTID this boot's (/proc/sys/kernel/random/boot_id), so that a
 * second run in the same boot saves nothing twice; the oldest of those
 * directories beyond the last N are removed.  One line per channel on
 * standard output, which the dti-save-previous service's journal keeps,
 * as systemd-pstore does for pstore's records.  Each channel is copied
 * into NAME.part and renamed NAME once whole.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "dti-cli.h"

#define DTI_SAVE_DIR	"/var/lib/dti"
#define DTI_SAVE_KEEP	5
/* A boot's directory: YYYYmmddTHHMMSS-<32 hex digits> */
#define DTI_BOOT_TIME_LEN	15
#define DTI_BOOT_ID_LEN		32

const char usage_save_previous[] =
	"usage: dti save-previous [--dir DIR] [--keep N]\n"
	"\nSave the records every persistent channel has of the previous boot (as\n"
	"'dti read --previous' reads them), with that boot's module table, into\n"
	"DIR/TIME-BOOTID/NAME, a directory 'dti decode' reads (TIME: now, UTC;\n"
	"BOOTID: this boot's, so that a second run in the same boot saves nothing\n"
	"twice), and keep the last N such boot directories.  Prints a line per\n"
	"channel.  The dti-save-previous service runs it at boot.\n"
	"\n"
	"  --dir DIR   where to save (default " DTI_SAVE_DIR ")\n"
	"  --keep N    keep the directories of the last N boots that saved (default\n"
	"              5; 0: keep all); the oldest go\n";

/* This boot's ID, 32 hex digits, into @id.  DTI_EXIT_OK or _FAIL (printed). */
static int dti_boot_id(char id[DTI_BOOT_ID_LEN + 1])
{
	const char *path = "/proc/sys/kernel/random/boot_id";
	char line[64];
	size_t i, n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return dti_err("%s: %s", path, strerror(errno));
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	for (i = 0; line[i] && n < DTI_BOOT_ID_LEN; i++)
		if ((line[i] >= '0' && line[i] <= '9') || (line[i] >= 'a' && line[i] <= 'f'))
			id[n++] = line[i];
	id[n] = '\0';
	if (n != DTI_BOOT_ID_LEN)
		return dti_err("%s: not a boot ID: %s", path, line);
	return DTI_EXIT_OK;
}

/* @name is a boot's directory as this command names them */
static bool dti_boot_dir_name(const char *name)
{
	size_t i;

	if (strlen(name) != DTI_BOOT_TIME_LEN + 1 + DTI_BOOT_ID_LEN ||
	    name[8] != 'T' || name[DTI_BOOT_TIME_LEN] != '-')
		return false;
	for (i = 0; name[i]; i++)
		if (i != 8 && i != DTI_BOOT_TIME_LEN &&
		    !(name[i] >= '0' && name[i] <= '9') &&
		    !(i > DTI_BOOT_TIME_LEN && name[i] >= 'a' && name[i] <= 'f'))
			return false;
	return true;
}

static int dti_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The boot directories in @dir, sorted (oldest first), into *@names
 * (NULL-terminated, dti_names_free()).  Their number, or -1 (printed).
 */
static int dti_boot_dirs(const char *dir, char ***names)
{
	char **v = calloc(1, sizeof(*v)), **nv;
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	*names = v;
	if (!d || !v) {
		dti_err("%s: %s", dir, strerror(v ? errno : ENOMEM));
		if (d)
			closedir(d);
		return -1;
	}
	while ((de = readdir(d))) {
		if (!dti_boot_dir_name(de->d_name))
			continue;
		nv = realloc(v, (n + 2) * sizeof(*v));
		if (!nv || !(nv[n] = strdup(de->d_name))) {
			*names = nv ? nv : v;
			closedir(d);
			dti_err("out of memory");
			return -1;
		}
		nv[++n] = NULL;
		*names = v = nv;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), dti_cmp_names);
	return n;
}

static int dti_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) != 0) {
		dti_err("%s: %s", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* Remove @path and all it holds.  DTI_EXIT_OK or _FAIL (printed). */
static int dti_rm_tree(const char *path)
{
	return nftw(path, dti_rm_one, 16, FTW_DEPTH | FTW_PHYS) ? DTI_EXIT_FAIL : DTI_EXIT_OK;
}

/*
 * The boot directory of this boot (@id) in @dir, made if there is none,
 * into @out.  DTI_EXIT_OK or _FAIL (printed).
 */
static int dti_this_boot_dir(const char *dir, const char *id, char *out, size_t size)
{
	char **names, stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	int n, i;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return dti_err("%s: %s", dir, strerror(errno));
	n = dti_boot_dirs(dir, &names);
	for (i = 0; i < n; i++)
		if (!strcmp(names[i] + DTI_BOOT_TIME_LEN + 1, id))
			break;
	if (n >= 0 && i < n) {
		snprintf(out, size, "%s/%s", dir, names[i]);
		dti_names_free(names);
		return DTI_EXIT_OK;
	}
	dti_names_free(names);
	if (n < 0)
		return DTI_EXIT_FAIL;
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", gmtime_r(&now, &tm));
	if ((size_t)snprintf(out, size, "%s/%s-%s", dir, stamp, id) >= size)
		return dti_err("%s: path too long", dir);
	if (mkdir(out, 0755) != 0)
		return dti_err("%s: %s", out, strerror(errno));
	return DTI_EXIT_OK;
}

/* The number after "@key: " in @text, or 0 */
static unsigned long dti_status_value(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ':')
			return strtoul(p + n + 1, NULL, 10);
	return 0;
}

/*
 * Copy previous channel @name's files (trace0..N, modules, status) into
 * @boot/@name (through @name.part) with this kernel's release, and say
 * so.  DTI_EXIT_OK or _FAIL (printed).
 */
static int dti_save_channel(const char *name, const char *boot)
{
	char src[PATH_MAX], path[PATH_MAX + 300], part[PATH_MAX + 300], dst[PATH_MAX + 300];
	char file[PATH_MAX + 600];
	unsigned int files = 0;
	long long bytes = 0, n;
	struct dirent *de;
	struct utsname u;
	struct stat st;
	char *status;
	int ret = DTI_EXIT_OK;
	DIR *d;

	snprintf(dst, sizeof(dst), "%s/%s", boot, name);
	if (stat(dst, &st) == 0) {
		printf("%s: the previous boot's records were saved in %s already\n", name, dst);
		return DTI_EXIT_OK;
	}
	if (dti_previous_path(name, NULL, src, sizeof(src)) < 0)
		return dti_err("%s", dti_errmsg());
	snprintf(part, sizeof(part), "%s/%s.part", boot, name);
	if (stat(part, &st) == 0 && dti_rm_tree(part) != DTI_EXIT_OK)
		return DTI_EXIT_FAIL;
	if (mkdir(part, 0755) != 0)
		return dti_err("%s: %s", part, strerror(errno));
	d = opendir(src);
	if (!d)
		return dti_err("%s: %s", src, strerror(errno));
	while ((de = readdir(d)) && ret == DTI_EXIT_OK) {
		bool trace = !strncmp(de->d_name, "trace", 5);

		if (!trace && strcmp(de->d_name, DTI_SNAP_MODULES) && strcmp(de->d_name, "status"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", src, de->d_name);
		snprintf(file, sizeof(file), "%s/%s", part, de->d_name);
		n = dti_copy_file(path, file);
		if (n < 0)
			ret = DTI_EXIT_FAIL;
		else if (trace)
			files++, bytes += n;
	}
	closedir(d);
	/* the region keeps no release: this kernel's, whose build-ids --lines checks */
	if (ret == DTI_EXIT_OK && uname(&u) != 0)
		ret = dti_err("uname: %s", strerror(errno));
	if (ret == DTI_EXIT_OK)
		ret = dti_snap_write_release(part, u.release);
	if (ret == DTI_EXIT_OK && rename(part, dst) != 0)
		ret = dti_err("%s: %s", dst, strerror(errno));
	if (ret != DTI_EXIT_OK)
		return ret;
	snprintf(file, sizeof(file), "%s/status", dst);
	status = dti_read_text_file(file);
	printf("%s: %lu records of the previous boot (boot %lu of the region, %lu damaged records "
	       "and %lu damaged sub-buffers skipped), %u per-CPU files, %lld bytes, saved in %s\n",
	       name, status ? dti_status_value(status, "records") : 0,
	       status ? dti_status_value(status, "boot") : 0,
	       status ? dti_status_value(status, "damaged_records") : 0,
	       status ? dti_status_value(status, "damaged_subbufs") : 0, files, bytes, dst);
	free(status);
	return DTI_EXIT_OK;
}

/* Remove the boot directories of @dir but the last @keep and this boot's (@id). */
static int dti_prune(const char *dir, unsigned long keep, const char *id)
{
	char **names, path[PATH_MAX + 64];
	int n = dti_boot_dirs(dir, &names), i, ret = n < 0 ? DTI_EXIT_FAIL : DTI_EXIT_OK;
	unsigned long left = n > 0 ? n : 0;

	for (i = 0; keep && i < n && left > keep; i++) {
		if (!strcmp(names[i] + DTI_BOOT_TIME_LEN + 1, id))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (dti_rm_tree(path) != DTI_EXIT_OK) {
			ret = DTI_EXIT_FAIL;
			continue;
		}
		printf("removed %s (--keep %lu)\n", path, keep);
		left--;
	}
	dti_names_free(names);
	return ret;
}

int cmd_save_previous(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument,       NULL, 'h' },
		{ "dir",  required_argument, NULL, 'D' },
		{ "keep", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = DTI_SAVE_DIR;
	unsigned long keep = DTI_SAVE_KEEP;
	char id[DTI_BOOT_ID_LEN + 1], boot[PATH_MAX];
	char **names, **p;
	bool saving;
	int c, ret;

	while ((c = dti_getopt("save-previous", argc, argv, "h", opts, &ret)) != -1) {
		if (c == DTI_OPT_EXIT)
			return ret;
		if (c == 'D')
			dir = optarg;
		else if (!dti_parse_uint(optarg, &keep))
			return dti_usage("save-previous", true, "--keep takes a number of boots");
	}
	if (argc != optind)
		return dti_usage("save-previous", true, "no arguments but the options");
	names = dti_list_previous();
	if (!names)
		return dti_err("%s", dti_errmsg());
	ret = dti_boot_id(id);
	if (ret == DTI_EXIT_OK && !names[0])
		printf("no records of a previous boot to save\n");
	else if (ret == DTI_EXIT_OK)
		ret = dti_this_boot_dir(dir, id, boot, sizeof(boot));
	saving = ret == DTI_EXIT_OK && names[0];
	/* a channel that fails leaves the others to be saved */
	for (p = names; saving && *p; p++)
		ret = dti_exit_worst(ret, dti_save_channel(*p, boot));
	dti_names_free(names);
	if ((saving || ret == DTI_EXIT_OK) && access(dir, F_OK) == 0)
		ret = dti_exit_worst(ret, dti_prune(dir, keep, id));
	return ret;
}
