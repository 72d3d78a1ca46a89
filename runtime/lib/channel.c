// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: channel control through <debugfs>/dti/<name>/.
 *
 * Every failure is classified for the user: debugfs not mounted, DTI not
 * loaded, no such channel, permission denied.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "libdti-local.h"

#define DEBUGFS_MAGIC	0x64626720

static char dti_debugfs_path[PATH_MAX] = DTI_DEBUGFS_DEFAULT;
static bool dti_debugfs_custom;

int dti_set_debugfs(const char *path)
{
	if (!path) {
		strcpy(dti_debugfs_path, DTI_DEBUGFS_DEFAULT);
		dti_debugfs_custom = false;
		return 0;
	}
	if (strlen(path) >= sizeof(dti_debugfs_path) - 64)
		return dti_fail(ENAMETOOLONG, "%s: path too long", path);
	strcpy(dti_debugfs_path, path);
	dti_debugfs_custom = true;
	return 0;
}

/*
 * Unless dti_set_debugfs() named a directory, use the first debugfs mount
 * in /proc/mounts, looked up afresh each time (it may be mounted or moved
 * while a program runs); with none, the default, which the messages below
 * tell how to mount.
 */
static const char *dti_debugfs_root(void)
{
	struct mntent *m;
	FILE *f;

	if (dti_debugfs_custom)
		return dti_debugfs_path;
	strcpy(dti_debugfs_path, DTI_DEBUGFS_DEFAULT);
	f = setmntent("/proc/mounts", "re");
	if (!f)
		return dti_debugfs_path;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "debugfs") &&
		    strlen(m->mnt_dir) < sizeof(dti_debugfs_path) - 64) {
			strcpy(dti_debugfs_path, m->mnt_dir);
			break;
		}
	}
	endmntent(f);
	return dti_debugfs_path;
}

/* Check that <debugfs>/dti exists and can be read.  0 or -1. */
static int dti_check_root(char *dir, size_t size)
{
	const char *root = dti_debugfs_root();
	struct statfs sfs;
	struct stat st;

	if (stat(root, &st) != 0)
		return dti_fail(ENODEV, "debugfs is not available: %s: %s",
				root, strerror(errno));
	if (!dti_debugfs_custom &&
	    (statfs(root, &sfs) != 0 || sfs.f_type != DEBUGFS_MAGIC))
		return dti_fail(ENODEV, "debugfs is not mounted on %s (mount -t debugfs none %s)",
				root, root);
	if ((size_t)snprintf(dir, size, "%s/dti", root) >= size)
		return dti_fail(ENAMETOOLONG, "%s/dti: path too long", root);
	if (stat(dir, &st) != 0) {
		if (errno == EACCES)
			return dti_fail(EACCES, "permission denied: %s (debugfs is accessible to root only)",
					dir);
		return dti_fail(ENODEV, "DTI is not loaded: %s does not exist (insmod dti.ko)",
				dir);
	}
	if (access(dir, R_OK | X_OK) != 0)
		return dti_fail(EACCES, "permission denied: %s", dir);
	return 0;
}

static int dti_name_ok(const char *name)
{
	if (!name || !*name || strlen(name) > DTI_NAME_MAX || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return dti_fail(EINVAL, "invalid channel name '%s'", name ? name : "");
	return 0;
}

/*
 * Check channel name @name and <debugfs>/dti, and write the directory
 * <debugfs>/dti/@sub@name to @dir.  0 if it is a directory, 1 if it is
 * not there (what that means is the caller's to say), -1.
 */
static int dti_channel_dir(const char *name, const char *sub, char *dir, size_t size)
{
	char root[PATH_MAX];
	struct stat st;

	if (dti_name_ok(name) < 0 || dti_check_root(root, sizeof(root)) < 0)
		return -1;
	if ((size_t)snprintf(dir, size, "%s/%s%s", root, sub, name) >= size)
		return dti_fail(ENAMETOOLONG, "%s/%s%s: path too long", root, sub, name);
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (errno == EACCES)
		return dti_fail(EACCES, "permission denied: %s", dir);
	return 1;
}

/* Check channel @name and write its directory to @dir.  0 or -1. */
int dti_check_channel(const char *name, char *dir, size_t size)
{
	int ret = dti_channel_dir(name, "", dir, size);

	if (ret > 0)
		return dti_fail(ENOENT, "no such channel: %s (see 'dti list')", name);
	return ret;
}

int dti_check_previous(const char *name, char *dir, size_t size)
{
	int ret = dti_channel_dir(name, DTI_PREVIOUS_DIR "/", dir, size);

	if (ret > 0)
		return dti_fail(ENOENT, "no records of channel %s from a previous boot: %s does not exist (dti.ko needs a region, persist=SIZE@ADDR or persist=NAME, the channel DTI_F_PERSIST, and the records may have been cleared)",
				name, dir);
	return ret;
}

/*
 * Path of @file in the directory of @name that @check (dti_check_channel(),
 * dti_check_previous()) finds, into @buf.  0 or -1.
 */
static int dti_path_in(int (*check)(const char *, char *, size_t), const char *name,
		       const char *file, char *buf, size_t size)
{
	char dir[PATH_MAX];

	if (check(name, dir, sizeof(dir)) < 0)
		return -1;
	if ((size_t)snprintf(buf, size, "%s%s%s", dir, file ? "/" : "",
			     file ? file : "") >= size)
		return dti_fail(ENAMETOOLONG, "%s/%s: path too long", dir, file);
	return 0;
}

int dti_channel_path(const char *name, const char *file, char *buf, size_t size)
{
	return dti_path_in(dti_check_channel, name, file, buf, size);
}

static int dti_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The directories in <debugfs>/dti/@sub (""), but those starting with a
 * dot, sorted.  @sub that is not there (@none_ok) has none.
 */
static char **dti_list_dirs(const char *sub, bool none_ok)
{
	char root[PATH_MAX], path[PATH_MAX + 256];
	char **names = NULL, **nn;
	struct dirent *de;
	struct stat st;
	size_t n = 0;
	DIR *d;

	if (dti_check_root(root, sizeof(root)) < 0)
		return NULL;
	if (strlen(root) + strlen(sub) + 1 >= sizeof(root))
		return dti_fail_null(ENAMETOOLONG, "%s/%s: path too long", root, sub);
	if (*sub) {
		strcat(root, "/");
		strcat(root, sub);
	}
	d = opendir(root);
	if (!d && errno == ENOENT && none_ok)
		return calloc(1, sizeof(*names)) ?: dti_fail_null(ENOMEM, "out of memory");
	if (!d)
		return dti_fail_null(errno, "%s: %s", root, strerror(errno));
	names = calloc(1, sizeof(*names));
	if (!names)
		goto nomem;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, de->d_name);
		if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		nn = realloc(names, (n + 2) * sizeof(*names));
		if (!nn)
			goto nomem;
		names = nn;
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto nomem;
		names[++n] = NULL;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), dti_cmp_str);
	return names;
nomem:
	closedir(d);
	dti_names_free(names);
	return dti_fail_null(ENOMEM, "out of memory");
}

char **dti_list_channels(void)
{
	return dti_list_dirs("", false);
}

char **dti_list_previous(void)
{
	return dti_list_dirs(DTI_PREVIOUS_DIR, true);
}

int dti_previous_path(const char *name, const char *file, char *buf, size_t size)
{
	return dti_path_in(dti_check_previous, name, file, buf, size);
}

void dti_names_free(char **names)
{
	char **p;

	if (!names)
		return;
	for (p = names; *p; p++)
		free(*p);
	free(names);
}

/*
 * Read a small text file (a control file, a snapshot's info or stats)
 * into a malloc()ed NUL-terminated string.  NULL on error.
 */
char *dti_read_file(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf, *nb;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dti_fail_null(errno, "%s: %s", path, strerror(errno));
	buf = malloc(cap);
	if (!buf)
		goto nomem;
	for (;;) {
		if (cap - len < 2) {
			nb = realloc(buf, cap * 2);
			if (!nb)
				goto nomem;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			free(buf);
			close(fd);
			return dti_fail_null(err, "%s: read error: %s", path, strerror(err));
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
nomem:
	free(buf);
	close(fd);
	return dti_fail_null(ENOMEM, "out of memory");
}

char *dti_read_ctl(const char *name, const char *file)
{
	char path[PATH_MAX], *text;

	if (dti_channel_path(name, file, path, sizeof(path)) < 0)
		return NULL;
	text = dti_read_file(path);
	if (!text && errno == ENOENT)
		return dti_fail_null(ENOENT, "channel %s has no file %s", name, file);
	return text;
}

static int dti_write_ctl(const char *name, const char *file, const char *text)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err;

	if (dti_channel_path(name, file, path, sizeof(path)) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return dti_fail(errno, "%s: %s", path, strerror(errno));
	n = write(fd, text, strlen(text));
	err = errno;
	close(fd);
	if (n != (ssize_t)strlen(text))
		return dti_fail(n < 0 ? err : EIO, "%s: writing '%s' failed: %s",
				path, text, n < 0 ? strerror(err) : "short write");
	return 0;
}

int dti_get_level(const char *name, int *level)
{
	char *text = dti_read_ctl(name, "level"), *end;
	long v;

	if (!text)
		return -1;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || (*end && *end != '\n') ||
	    v < DTI_LEVEL_MIN || v > DTI_LEVEL_MAX) {
		dti_fail(EPROTO, "channel %s: unexpected level '%s'", name, text);
		free(text);
		return -1;
	}
	free(text);
	*level = (int)v;
	return 0;
}

int dti_set_level(const char *name, int level)
{
	char text[16];

	if (level < DTI_LEVEL_MIN || level > DTI_LEVEL_MAX)
		return dti_fail(EINVAL, "level %d out of range (-2..7)", level);
	snprintf(text, sizeof(text), "%d", level);
	return dti_write_ctl(name, "level", text);
}

int dti_reset_consumed(const char *name)
{
	return dti_write_ctl(name, "reset_consumed", "1");
}

static const char *const dti_level_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

const char *dti_level_name(int level)
{
	if (level == DTI_LEVEL_OFF)
		return "off";
	if (level == DTI_LEVEL_DESTROY)
		return "destroy";
	if (level >= 0 && level <= DTI_LEVEL_MAX)
		return dti_level_names[level];
	return "?";
}

/* syslog's other spellings of three levels (syslog.conf(5)) */
static const struct {
	const char *name;
	int level;
} dti_level_synonyms[] = {
	{ "panic", DTI_LEVEL_EMERG },
	{ "error", DTI_LEVEL_ERR },
	{ "warn",  DTI_LEVEL_WARNING },
};

int dti_level_parse(const char *text, int *level)
{
	char *end;
	size_t i;
	long v;
	int l;

	for (l = DTI_LEVEL_MIN; l <= DTI_LEVEL_MAX; l++) {
		if (!strcasecmp(text, dti_level_name(l))) {
			*level = l;
			return 0;
		}
	}
	for (i = 0; i < sizeof(dti_level_synonyms) / sizeof(dti_level_synonyms[0]); i++) {
		if (!strcasecmp(text, dti_level_synonyms[i].name)) {
			*level = dti_level_synonyms[i].level;
			return 0;
		}
	}
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < DTI_LEVEL_MIN || v > DTI_LEVEL_MAX)
		return dti_fail(EINVAL, "invalid level '%s' (0..7, emerg, alert, crit, err, "
				"warning, notice, info, debug, off or destroy)", text);
	*level = (int)v;
	return 0;
}

int dti_modules_read(const char *name, unsigned int flags, struct dti_module **mods)
{
	char root[PATH_MAX], path[PATH_MAX + 64];

	*mods = NULL;
	if (flags & ~DTI_MODULES_PREVIOUS)
		return dti_fail(EINVAL, "dti_modules_read: unknown flags 0x%x", flags);
	if (!(flags & DTI_MODULES_PREVIOUS)) {
		if (dti_check_root(root, sizeof(root)) < 0)
			return -1;
		snprintf(path, sizeof(path), "%s/" DTI_MODULES_FILE, root);
		if (access(path, F_OK) != 0 && errno == ENOENT)
			return dti_fail(ENOENT, "%s does not exist (a dti.ko without a module table?)",
					path);
		return dti_modules_load(path, mods);
	}
	/* the table of the boot that wrote @name's records, which dti.ko checked */
	if (dti_check_previous(name, root, sizeof(root)) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", root, DTI_SNAP_MODULES_FILE);
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return dti_fail(ENOENT, "%s does not exist (the persistent region holds no sound module table of the boot that wrote %s's records, or dti.ko keeps none)",
				path, name);
	return dti_modules_load(path, mods);
}
