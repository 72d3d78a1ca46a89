// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: readers and the per-CPU merge.
 *
 * dti_next() is a streaming k-way merge in the manner of blkparse: every
 * CPU stream holds its next record decoded (its "head"); the head with
 * the smallest timestamp is returned, ties going to the lower CPU as in
 * the kernel's merged view.  Memory is one buffer per CPU.  Where one
 * CPU's records come before all others for a while (a run), each is
 * taken with a few compares on its bytes (dti_next()), the stream's own
 * state brought up to date when the run ends.
 *
 * Each CPU's records are merged from one stream only: the first one (in
 * CPU order of the file names, then as given) that holds records of that
 * CPU owns it.  Another stream's records of the same CPU (trace0 and
 * trace007, one file given twice, a merged file beside its sources) are
 * duplicates: skipped, with one warning per stream.  A pending store's
 * records (from a memory dump: logged while the channel had no buffers)
 * are held by no CPU's buffer and have no sequence numbers yet: their
 * stream is merged whatever CPUs logged them, after all others, and
 * without the sequence checks.
 *
 * The channel a stream belongs to is in every sub-buffer header (name and
 * geometry); records alone, as dti_print(DTI_FMT_RAW) writes them, carry
 * none.  Streams are checked against the directory's info file, else
 * against the first stream with a header.
 *
 * A directory from dti_open_dir() may hold a snapshot's info and stats
 * beside trace0..N.  `dti snapshot` copies them with the channel off, so
 * they describe the same moment as the trace files: stats lists every CPU
 * the machine has, with the sequence number each would use next.  A trace
 * file of a CPU stats does not list, or a record at or past that next
 * number, is from another snapshot (the directory was reused): the first
 * is not merged, the second is warned about.  An older file of a CPU
 * stats lists would have been overwritten by the new snapshot's, so
 * these are the traces a reused directory leaves.  A snapshot of a
 * memory dump (dti_dump_save()) has no stats; its info says how many CPUs
 * the machine had, and it may hold a pending store's records, "pending".
 * The files of a snapshot given one by one to dti_open_files(), info and
 * stats among them (`dti decode DIR/x` for every x), are read as the
 * directory is (dti_snap_kind() says which is which).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libdti-local.h"

/* A reader of @n streams, all still to be set up.  NULL (ENOMEM). */
struct dti_reader *dti_reader_alloc(unsigned int n, unsigned int flags)
{
	struct dti_reader *r;
	unsigned int i;

	r = calloc(1, sizeof(*r));
	if (r)
		r->s = calloc(n ? n : 1, sizeof(*r->s));
	if (!r || !r->s) {
		free(r);
		return dti_fail_null(ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		r->s[i].fd = -1;
	r->n = n;
	r->flags = flags;
	r->ncpu = DTI_CPU_LIMIT;
	r->lcache.type = &dti_lcaller_cache;
	r->ob = &r->own_ob;
	r->kid_last = -1;
	return r;
}

void dti_close(struct dti_reader *r)
{
	unsigned int i;

	if (!r)
		return;
	if (r->merge)
		dti_merge_close(r);
	dti_ob_flush(r->ob);
	for (i = 0; i < r->n; i++)
		dti_stream_free(&r->s[i]);
	for (i = 0; i < r->n_notes; i++) {
		free(r->notes[i].source);
		free(r->notes[i].message);
	}
	free(r->notes);
	free(r->s);
	free(r->cpus);
	dti_events_free(&r->events);
	dti_cache_free(&r->lcache);
	free(r->info);
	free(r->stats);
	free(r->own_ob.p);
	free(r->match_buf);
	free(r->chan_name);
	free(r);
}

/* CPU number in a name ending in digits ("trace12" -> 12), else @dflt. */
static unsigned int dti_name_cpu(const char *path, unsigned int dflt)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	p = base + strlen(base);
	while (p > base && isdigit((unsigned char)p[-1]))
		p--;
	if (!*p || strlen(p) > 6)
		return dflt;
	return (unsigned int)atoi(p);
}

/*
 * By CPU, then in the order given (owned holds it until the first read);
 * a pending store's records, which no CPU's buffer holds, last.
 */
static int dti_cmp_stream(const void *a, const void *b)
{
	const struct dti_stream *x = a, *y = b;

	if (x->pending != y->pending)
		return x->pending ? 1 : -1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->owned < y->owned ? -1 : x->owned > y->owned;
}

static void dti_sort_streams(struct dti_reader *r)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		r->s[i].owned = i;
	qsort(r->s, r->n, sizeof(*r->s), dti_cmp_stream);
	for (i = 0; i < r->n; i++)
		r->s[i].owned = -1U;
}

/*
 * Open @n files; @hint: the geometry of the channel they are of, if
 * known; the files from index @pending on hold pending stores' records.
 */
static struct dti_reader *dti_open_paths(const char *const *paths,
					 unsigned int n, unsigned int flags,
					 bool live, const struct dti_ident *hint,
					 unsigned int pending)
{
	struct dti_reader *r;
	unsigned int i;
	int fd;

	r = dti_reader_alloc(n, flags);
	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			int err = errno;

			dti_close(r);
			return dti_fail_null(err, "%s: %s%s", paths[i], strerror(err),
					     err == EACCES ? " (debugfs and trace files are root-only)" : "");
		}
		if (dti_stream_init_fd(&r->s[i], paths[i], fd, live,
				       i >= pending ? NULL : hint) < 0) {
			int err = errno;

			dti_close(r);
			errno = err;
			return NULL;
		}
		r->s[i].cpu = dti_name_cpu(paths[i], i);
		r->s[i].pending = i >= pending;
	}
	dti_sort_streams(r);
	return r;
}

struct dti_reader *dti_open_mem(const void *const *bufs, const size_t *lens,
				unsigned int n, unsigned int flags)
{
	struct dti_reader *r;
	char name[32];
	unsigned int i;

	if (flags & ~(DTI_OPEN_STRICT | DTI_OPEN_FORMATS))
		return dti_fail_null(EINVAL, "dti_open_mem: flags %#x (only DTI_OPEN_STRICT "
				     "and DTI_OPEN_FORMATS)", flags);
	r = dti_reader_alloc(n, flags);
	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "buffer%u", i);
		if (dti_stream_init_mem(&r->s[i], name, bufs[i], lens[i]) < 0) {
			dti_close(r);
			return dti_fail_null(ENOMEM, "out of memory");
		}
		r->s[i].cpu = i;
	}
	return r;
}

static int dti_is_trace_name(const char *name)
{
	const char *p;

	if (strncmp(name, "trace", 5) || !name[5])
		return 0;
	for (p = name + 5; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return 1;
}

/* What a snapshot directory holds, by file name */
enum dti_snap_kind {
	DTI_SNAP_OTHER,		/* none of a snapshot's */
	DTI_SNAP_TRACE,		/* trace0..N: a CPU's records */
	DTI_SNAP_PENDING,	/* a pending store's records (dti_dump_save()) */
	DTI_SNAP_INFO,		/* the channel's info: no records */
	DTI_SNAP_STATS,		/* its per-CPU counters: no records */
	DTI_SNAP_MODULES,	/* the module table: no records, not read here */
	DTI_SNAP_RELEASE,	/* the kernel's release: no records, not read here */
	DTI_SNAP_BOOT_ID,	/* the boot's ID: no records, not read here */
};

static enum dti_snap_kind dti_snap_kind(const char *name)
{
	if (dti_is_trace_name(name))
		return DTI_SNAP_TRACE;
	if (!strcmp(name, DTI_PENDING_FILE))
		return DTI_SNAP_PENDING;
	if (!strcmp(name, "info"))
		return DTI_SNAP_INFO;
	if (!strcmp(name, DTI_SNAP_MODULES_FILE))
		return DTI_SNAP_MODULES;
	if (!strcmp(name, DTI_SNAP_RELEASE_FILE))
		return DTI_SNAP_RELEASE;
	if (!strcmp(name, DTI_SNAP_BOOT_ID_FILE))
		return DTI_SNAP_BOOT_ID;
	return strcmp(name, "stats") ? DTI_SNAP_OTHER : DTI_SNAP_STATS;
}

/* Bytes of a channel's name in a snapshot's info (a dump's NAME@bootN too) */
#define DTI_INFO_NAME_MAX	64

static int dti_parse_info(const char *path, struct dti_ident *id,
			  unsigned int *ncpu, char *chan);

/*
 * Open @n files of records, those from index @pending on a pending
 * store's, with their snapshot's @info and @stats (NULL: none): info
 * gives the geometry, with which a copy of a whole ring is known for one
 * even when its first slots are unused; both are checked against the
 * records at the first dti_next() (dti_check_snapshot()).
 */
static struct dti_reader *dti_open_snapshot(const char *const *paths,
					    unsigned int n, unsigned int pending,
					    unsigned int flags, bool live,
					    const char *info, const char *stats)
{
	char name[DTI_INFO_NAME_MAX + 1] = "";
	struct dti_ident hint = { 0 };
	struct dti_reader *r;
	unsigned int ncpu;

	if (info)
		dti_parse_info(info, &hint, &ncpu, name);
	r = dti_open_paths(paths, n, flags, live, &hint, pending);
	if (r && ((info && !(r->info = strdup(info))) ||
		  (stats && !(r->stats = strdup(stats))) ||
		  (name[0] && dti_set_channel_name(r, name) < 0))) {
		dti_close(r);
		return dti_fail_null(ENOMEM, "out of memory");
	}
	return r;
}

/*
 * The files of directory @dir: trace0..N, and (not @live) a pending
 * store's records, "pending", as dti_dump_save() writes them, and a
 * snapshot's info and stats.
 */
static struct dti_reader *dti_open_dir_live(const char *dir, unsigned int flags,
					    bool live)
{
	struct dti_reader *r = NULL;
	struct dirent *de;
	char **paths = NULL, **np, *pending = NULL, *info = NULL, *stats = NULL;
	enum dti_snap_kind kind;
	unsigned int n = 0, i, first_pending;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return dti_fail_null(errno, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		kind = dti_snap_kind(de->d_name);
		if (!live && kind == DTI_SNAP_PENDING && !pending) {
			if (asprintf(&pending, "%s/%s", dir, de->d_name) < 0) {
				pending = NULL;
				goto nomem;
			}
			continue;
		}
		if (kind != DTI_SNAP_TRACE)
			continue;
		np = realloc(paths, (n + 2) * sizeof(*paths));
		if (!np)
			goto nomem;
		paths = np;
		if (asprintf(&paths[n], "%s/%s", dir, de->d_name) < 0)
			goto nomem;
		n++;
	}
	closedir(d);
	d = NULL;
	if (!n && !pending) {
		dti_fail(ENOENT, "%s: no per-CPU files trace0..N", dir);
		goto out;
	}
	if (pending && !paths && !(paths = malloc(sizeof(*paths))))
		goto nomem;
	first_pending = n;
	if (pending) {
		paths[n++] = pending;
		pending = NULL;
	}
	if (!live) {
		if (asprintf(&info, "%s/info", dir) < 0)
			info = NULL;
		if (asprintf(&stats, "%s/stats", dir) < 0)
			stats = NULL;
		if (!info || !stats)
			goto nomem;
	}
	r = dti_open_snapshot((const char *const *)paths, n, first_pending,
			      flags, live, info, stats);
	goto out;
nomem:
	dti_fail(ENOMEM, "out of memory");
out:
	if (d)
		closedir(d);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(pending);
	free(info);
	free(stats);
	return r;
}

/* Whether the directory of @path holds per-CPU files or a pending store */
static bool dti_in_snapshot_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	enum dti_snap_kind kind;
	char dir[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (len >= sizeof(dir))
		return false;
	memcpy(dir, path, len);
	dir[len] = '\0';
	d = opendir(!slash ? "." : len ? dir : "/");
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		kind = dti_snap_kind(de->d_name);
		found = kind == DTI_SNAP_TRACE || kind == DTI_SNAP_PENDING;
	}
	closedir(d);
	return found;
}

/*
 * What dti_open_dir() would take file @path for: a name of a snapshot's
 * counts only in a snapshot directory (a file called info elsewhere is
 * read for records, and what is wrong with it reported).
 */
static enum dti_snap_kind dti_path_kind(const char *path)
{
	const char *base = strrchr(path, '/');
	enum dti_snap_kind kind = dti_snap_kind(base ? base + 1 : path);

	if (kind == DTI_SNAP_OTHER || kind == DTI_SNAP_TRACE ||
	    dti_in_snapshot_dir(path))
		return kind;
	return DTI_SNAP_OTHER;
}

/*
 * Files given one by one read as their directory would be: a snapshot's
 * info and stats are not files of records but what dti_open_dir() checks
 * its records against (the first of each: another is warned about and
 * not read), a pending store's records are merged last.
 */
struct dti_reader *dti_open_files(const char *const *paths, unsigned int n,
				  unsigned int flags)
{
	const char **recs, *side[2] = { NULL, NULL };	/* info, stats */
	enum dti_snap_kind *kind;
	struct dti_reader *r = NULL;
	unsigned int i, k, n_recs = 0, first_pending;

	if (!n)
		return dti_fail_null(EINVAL, "no files to read");
	recs = malloc(n * sizeof(*recs));
	kind = malloc(n * sizeof(*kind));
	if (!recs || !kind) {
		dti_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		kind[i] = dti_path_kind(paths[i]);
		if (kind[i] == DTI_SNAP_OTHER || kind[i] == DTI_SNAP_TRACE)
			recs[n_recs++] = paths[i];
	}
	first_pending = n_recs;
	for (i = 0; i < n; i++) {
		if (kind[i] == DTI_SNAP_PENDING)
			recs[n_recs++] = paths[i];
		k = kind[i] == DTI_SNAP_STATS;
		if ((kind[i] == DTI_SNAP_INFO || k) && !side[k])
			side[k] = paths[i];
	}
	if (!n_recs) {
		dti_fail(ENOENT, "%s: a snapshot's %s, not records: no per-CPU file given",
			 paths[0], kind[0] == DTI_SNAP_INFO ? "info" :
			 kind[0] == DTI_SNAP_STATS ? "stats" :
			 kind[0] == DTI_SNAP_MODULES ? "module table" :
			 kind[0] == DTI_SNAP_RELEASE ? "kernel release" : "boot ID");
		goto out;
	}
	r = dti_open_snapshot(recs, n_recs, first_pending, flags, false,
			      side[0], side[1]);
	for (i = 0; r && i < n; i++) {
		k = kind[i] == DTI_SNAP_STATS;
		if ((kind[i] != DTI_SNAP_INFO && !k) || paths[i] == side[k])
			continue;
		if (dti_note_add(r, DTI_NOTICE_WARNING, 0, paths[i], 0, 0,
				 "%s: not read: the snapshot's %s is %s (files of several snapshots?)",
				 paths[i], k ? "stats" : "info", side[k]) < 0) {
			dti_close(r);
			r = NULL;
		}
	}
out:
	free(recs);
	free(kind);
	return r;
}

struct dti_reader *dti_open_dir(const char *dir, unsigned int flags)
{
	return dti_open_dir_live(dir, flags, false);
}

/*
 * A live channel's records are of this boot: its wall clock time at
 * CLOCK_MONOTONIC 0 (the records' clock) and its boot ID, for
 * DTI_FMT_EXPORT.  What cannot be read is left unknown.
 */
static void dti_boot_this(struct dti_reader *r)
{
	struct timespec real, mono;
	char id[64];
	size_t i, n = 0;
	FILE *f;

	if (!clock_gettime(CLOCK_REALTIME, &real) && !clock_gettime(CLOCK_MONOTONIC, &mono)) {
		r->boot_realtime_ns = (real.tv_sec - mono.tv_sec) * 1000000000ll +
				      (real.tv_nsec - mono.tv_nsec);
		r->boot_known = true;
	}
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return;
	if (fgets(id, sizeof(id), f))
		for (i = 0; id[i] && n < sizeof(r->boot_id) - 1; i++)
			if (isxdigit((unsigned char)id[i]))
				r->boot_id[n++] = id[i];
	fclose(f);
	r->boot_id[n == sizeof(r->boot_id) - 1 ? n : 0] = '\0';
}

struct dti_reader *dti_open_channel(const char *name, unsigned int flags)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct dti_reader *r;
	int fd;

	if (dti_check_channel(name, dir, sizeof(dir)) < 0)
		return NULL;
	snprintf(path, sizeof(path), "%s/trace0", dir);
	if (access(path, F_OK) != 0)
		return dti_fail_null(ENXIO, "channel %s has no buffers (level destroy); set a level to allocate them",
				     name);
	if (flags & DTI_OPEN_RESET) {
		snprintf(path, sizeof(path), "%s/reset_consumed", dir);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "1", 1) != 1) {
			int err = errno;

			if (fd >= 0)
				close(fd);
			return dti_fail_null(err, "%s: %s", path, strerror(err));
		}
		close(fd);
	}
	r = dti_open_dir_live(dir, flags, true);
	if (r)
		dti_boot_this(r);
	return r;
}

struct dti_reader *dti_open_previous(const char *name, unsigned int flags)
{
	char dir[PATH_MAX];

	if (dti_check_previous(name, dir, sizeof(dir)) < 0)
		return NULL;
	return dti_open_dir_live(dir, flags & ~(DTI_OPEN_RESET | DTI_OPEN_FOLLOW), false);
}

/*
 * A merge's sum of what @get gives of each child, with its own (@own);
 * a reader's, @own alone
 */
static unsigned long dti_kids_sum(const struct dti_reader *r, unsigned long own,
				  unsigned long (*get)(const struct dti_reader *))
{
	unsigned int i;

	for (i = 0; i < r->n_kids; i++)
		own += get(r->kids[i].r);
	return own;
}

static unsigned long dti_nr_streams_of(const struct dti_reader *r)
{
	return dti_nr_streams(r);
}

unsigned int dti_nr_streams(const struct dti_reader *r)
{
	return dti_kids_sum(r, r->n, dti_nr_streams_of);
}

unsigned long dti_damage_count(const struct dti_reader *r)
{
	return dti_kids_sum(r, r->n_damage, dti_damage_count);
}

unsigned long dti_warning_count(const struct dti_reader *r)
{
	return dti_kids_sum(r, r->n_warning, dti_warning_count);
}

int dti_set_notice_handler(struct dti_reader *r, dti_notice_fn fn, void *arg)
{
	unsigned int i;

	r->notice = fn;
	r->notice_arg = arg;
	for (i = 0; i < r->n_kids; i++)
		dti_set_notice_handler(r->kids[i].r, fn, arg);
	return 0;
}

int dti_set_formatter(struct dti_reader *r, dti_formatter_fn fn, void *arg)
{
	unsigned int i;

	r->fmt = fn;
	r->fmt_arg = arg;
	for (i = 0; i < r->n_kids; i++)
		dti_set_formatter(r->kids[i].r, fn, arg);
	return 0;
}

int dti_set_channel_name(struct dti_reader *r, const char *name)
{
	char *copy = NULL;

	if (r->merge)
		return dti_fail(EINVAL, "a merge's channels are named by dti_merge_add()");
	if (name && !(copy = strdup(name)))
		return dti_fail(ENOMEM, "out of memory");
	free(r->chan_name);
	r->chan_name = copy;
	return 0;
}

int dti_set_symbolizer(struct dti_reader *r, dti_symbol_fn fn, void *arg)
{
	unsigned int i;

	for (i = 0; i < r->n_kids; i++)
		dti_set_symbolizer(r->kids[i].r, fn, arg);
	r->symbolizer = fn;
	r->symbolizer_arg = arg;
	memset(r->callers, 0, sizeof(r->callers));	/* made again through it */
	dti_cache_free(&r->lcache);
	return 0;
}

int dti_set_ksyms(struct dti_reader *r, struct dti_ksyms *syms)
{
	unsigned int i;

	for (i = 0; i < r->n_kids; i++)
		dti_set_ksyms(r->kids[i].r, syms);
	r->ksyms = syms;
	memset(r->callers, 0, sizeof(r->callers));
	dti_cache_free(&r->lcache);
	return 0;
}

int dti_set_lines(struct dti_reader *r, struct dti_lines *lines)
{
	unsigned int i;

	for (i = 0; i < r->n_kids; i++)
		dti_set_lines(r->kids[i].r, lines);
	r->lines = lines;
	r->lines_gen = lines ? dti_lines_gen(lines) : 0;
	memset(r->callers, 0, sizeof(r->callers));
	dti_cache_free(&r->lcache);
	return 0;
}

/*
 * Count notice @n and hand it with its message to the handler; output
 * printed so far goes out first, so that both appear in order.
 */
static void dti_vnotify(struct dti_reader *r, struct dti_notice *n,
			const char *fmt, va_list ap)
{
	char msg[1024];

	if (n->type == DTI_NOTICE_DAMAGE)
		r->n_damage++;
	if (n->type == DTI_NOTICE_WARNING)
		r->n_warning++;
	if (!r->notice)
		return;
	/* lost and skipped records of CPUs the filter leaves out: not told */
	if (r->filter && (n->type == DTI_NOTICE_GAP || n->type == DTI_NOTICE_BACKWARDS ||
			  n->type == DTI_NOTICE_SKIPPED) && !dti_filter_cpu(r->filter, n->cpu))
		return;
	dti_ob_flush(r->ob);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n->message = msg;
	r->notice(n, r->notice_arg);
}

void dti_notify(struct dti_reader *r, struct dti_notice *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dti_vnotify(r, n, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 3, 4)))
dti_warn(struct dti_reader *r, struct dti_stream *s, const char *fmt, ...)
{
	struct dti_notice n = {
		.type = DTI_NOTICE_WARNING, .cpu = s->cpu, .source = s->name,
	};
	va_list ap;

	va_start(ap, fmt);
	dti_vnotify(r, &n, fmt, ap);
	va_end(ap);
}

/**
 * dti_note_add - keep a notice found when opening for the first dti_next()
 * @fmt: the message, printf-style
 *
 * The fields are those of struct dti_notice.  Opening has no notice
 * handler yet; this way the notice comes where those of reading do.
 *
 * Return: 0, or -1 (ENOMEM).
 */
int dti_note_add(struct dti_reader *r, enum dti_notice_type type,
		 unsigned int cpu, const char *source, uint64_t offset,
		 uint64_t count, const char *fmt, ...)
{
	struct dti_note *notes, *n;
	va_list ap;
	int len;

	notes = realloc(r->notes, (r->n_notes + 1) * sizeof(*notes));
	if (!notes)
		return dti_fail(ENOMEM, "out of memory");
	r->notes = notes;
	n = &notes[r->n_notes];
	*n = (struct dti_note){
		.type = type, .cpu = cpu, .offset = offset, .count = count,
		.source = strdup(source),
	};
	va_start(ap, fmt);
	len = vasprintf(&n->message, fmt, ap);
	va_end(ap);
	if (len < 0 || !n->source) {
		free(n->source);
		if (len >= 0)
			free(n->message);
		return dti_fail(ENOMEM, "out of memory");
	}
	r->n_notes++;
	return 0;
}

/* The notices dti_note_add() kept, at the first dti_next(). */
static void dti_notes_tell(struct dti_reader *r)
{
	struct dti_notice n;
	unsigned int i;

	for (i = 0; i < r->n_notes; i++) {
		n = (struct dti_notice){
			.type = r->notes[i].type, .cpu = r->notes[i].cpu,
			.source = r->notes[i].source,
			.offset = r->notes[i].offset, .count = r->notes[i].count,
		};
		dti_notify(r, &n, "%s", r->notes[i].message);
	}
}

/* Warn once per stream if @id, of a sub-buffer of @s, is not the reader's channel. */
void dti_check_ident(struct dti_reader *r, struct dti_stream *s,
		     const struct dti_ident *id)
{
	const struct dti_ident *ref = &r->ident;

	if (!ref->set) {
		r->ident = *id;
		r->ident.from = s->name;
		return;
	}
	if (s->warned_ident || (!strcmp(ref->name, id->name) &&
				ref->subbuf_size == id->subbuf_size &&
				ref->n_subbufs == id->n_subbufs))
		return;
	s->warned_ident = true;
	dti_warn(r, s, "%s: sub-buffers of channel %s (%u x %u bytes), but %s has channel %s (%u x %u bytes): files of different channels or snapshots merged",
		 s->name, id->name, id->n_subbufs, id->subbuf_size, ref->from,
		 ref->name, ref->n_subbufs, ref->subbuf_size);
}

/* The reader's entry for @cpu, created as needed; NULL (ENOMEM). */
static struct dti_cpu *dti_cpu(struct dti_reader *r, unsigned int cpu)
{
	struct dti_cpu *c;
	unsigned int n, i;

	if (cpu < r->n_cpus)
		return &r->cpus[cpu];
	n = cpu + 1 > 2 * r->n_cpus ? cpu + 1 : 2 * r->n_cpus;
	c = realloc(r->cpus, n * sizeof(*c));
	if (!c)
		return dti_fail_null(ENOMEM, "out of memory");
	for (i = r->n_cpus; i < n; i++)
		c[i] = (struct dti_cpu){ .owner = -1, .next_seq = UINT64_MAX };
	r->cpus = c;
	r->n_cpus = n;
	return &c[cpu];
}

/*
 * "key: value" lines of a snapshot's info: the value of @key as a 32-bit
 * number, 0 if there is none (or it is no such number).
 */
static uint32_t dti_info_num(const char *info, const char *key)
{
	const char *p = strstr(info, key);
	unsigned long long v;
	char *end;

	if (!p)
		return 0;
	p += strlen(key);
	errno = 0;
	v = strtoull(p, &end, 10);
	return errno || end == p || !isdigit((unsigned char)*p) || v > UINT32_MAX ||
	       (*end && *end != '\n') ? 0 : v;
}

/*
 * A snapshot's info: the channel, and (from dti_dump_save()) the number
 * of CPUs of the machine in *@ncpu (0 if not there); into @chan (NULL:
 * not wanted; DTI_INFO_NAME_MAX + 1 bytes) the name its first line gives,
 * also where no geometry follows (a pending store's records alone, an
 * earlier boot's rings in a dump: dti_dump_save()), for JSON's
 * "channel".  Returns -1 if there is no such file, 0 if it holds none of
 * the fields, 1 if it does.
 */
static int dti_parse_info(const char *path, struct dti_ident *id,
			  unsigned int *ncpu, char *chan)
{
	char *info = dti_read_file(path), *p;
	unsigned long n;
	int found;

	*ncpu = 0;
	if (!info)
		return -1;
	p = strstr(info, "name: ");
	_Static_assert(DTI_INFO_NAME_MAX == 64, "the width of the sscanf() below");
	if (chan && (p != info || sscanf(p, "name: %64s", chan) != 1))
		chan[0] = 0;
	id->subbuf_size = dti_info_num(info, "\nsubbuf_size: ");
	id->n_subbufs = dti_info_num(info, "\nn_subbufs: ");
	if (p == info && id->subbuf_size && id->n_subbufs &&
	    sscanf(p, "name: %31s", id->name) == 1) {
		id->set = true;
		id->from = "the snapshot's info file";
	}
	n = dti_info_num(info, "\nnr_cpu_ids: ");
	if (n && n <= DTI_CPU_LIMIT)
		*ncpu = n;
	found = p == info || id->subbuf_size || id->n_subbufs || n;
	free(info);
	return found;
}

/*
 * A snapshot's stats: the CPUs of the machine and their next numbers.
 * Returns -1 if there is no such file, 0 if it has no "cpu" header line,
 * 1 if it has.
 */
static int dti_read_stats(struct dti_reader *r, const char *path)
{
	char *stats = dti_read_file(path), *line, *save = NULL, *tok, *ts;
	unsigned int col = 0, i, cpu, ncpu = 0;
	bool header = false;
	struct dti_cpu *c;

	if (!stats)
		return -1;
	for (line = strtok_r(stats, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		tok = strtok_r(line, " \t", &ts);
		if (tok && !strcmp(tok, "cpu")) {
			header = true;
			for (i = 1; (tok = strtok_r(NULL, " \t", &ts)); i++)
				if (!strcmp(tok, "next_seq"))
					col = i;
			continue;
		}
		if (!tok || !isdigit((unsigned char)*tok) ||
		    (cpu = strtoul(tok, NULL, 10)) >= DTI_CPU_LIMIT ||
		    !(c = dti_cpu(r, cpu)))
			continue;
		ncpu = cpu + 1 > ncpu ? cpu + 1 : ncpu;
		for (i = 1; (tok = strtok_r(NULL, " \t", &ts)); i++)
			if (i == col)
				c->next_seq = strtoull(tok, NULL, 10);
	}
	if (ncpu)
		r->ncpu = ncpu;
	free(stats);
	return header;
}

/* A warning about a snapshot's info or stats file @path */
static void __attribute__((format(printf, 3, 4)))
dti_warn_file(struct dti_reader *r, const char *path, const char *fmt, ...)
{
	struct dti_notice n = { .type = DTI_NOTICE_WARNING, .source = path };
	va_list ap;

	va_start(ap, fmt);
	dti_vnotify(r, &n, fmt, ap);
	va_end(ap);
}

/*
 * Before the first record: check the files against their snapshot's info
 * and stats.  An info or stats file that says nothing is warned about
 * and not used.
 */
static void dti_check_snapshot(struct dti_reader *r)
{
	struct dti_stream *s;
	unsigned int i, ncpu;

	if (r->info) {
		if (!dti_parse_info(r->info, &r->ident, &ncpu, NULL))
			dti_warn_file(r, r->info, "%s: not read: no name, subbuf_size or n_subbufs line in it (not a snapshot's info file?)",
				      r->info);
		if (ncpu)
			r->ncpu = ncpu;
	}
	if (r->stats && !dti_read_stats(r, r->stats))
		dti_warn_file(r, r->stats, "%s: not read: no \"cpu ...\" header line in it (not a snapshot's stats file?)",
			      r->stats);
	for (i = 0; i < r->n && r->ncpu < DTI_CPU_LIMIT; i++) {
		s = &r->s[i];
		if (s->cpu < r->ncpu || s->pending)
			continue;
		s->dead = true;
		dti_warn(r, s, "%s: not merged: the snapshot's stats list only cpu0..cpu%u (a file of an earlier snapshot? the directory was reused)",
			 s->name, r->ncpu - 1);
	}
}

/*
 * The next record of stream @i whose CPU it owns: records of a CPU that
 * another stream owns are skipped.  A pending store's records are held
 * by no CPU's buffer: they are all taken.  1, 0 (none) or -1.
 */
static int dti_peek_owned(struct dti_reader *r, unsigned int i)
{
	struct dti_stream *s = &r->s[i];
	struct dti_cpu *c;
	int ret;

	if (s->pending)
		return dti_stream_peek(r, s);
	for (;;) {
		ret = dti_stream_peek(r, s);
		if (ret <= 0 || s->head.cpu == s->owned)
			return ret;
		c = dti_cpu(r, s->head.cpu);
		if (!c)
			return -1;
		if (c->owner < 0)
			c->owner = i;
		if (c->owner == (int)i) {
			s->owned = s->head.cpu;
			return 1;
		}
		if (!s->warned_dup) {
			s->warned_dup = true;
			dti_warn(r, s, "%s: records of cpu%u, which %s holds too, skipped: a CPU's records are merged once",
				 s->name, s->head.cpu, r->s[c->owner].name);
		}
		dti_stream_consume(s);
	}
}

/* A gap, a step back, or a record newer than the stats: say so. */
static void __attribute__((noinline))
dti_seq_notice(struct dti_reader *r, struct dti_stream *s, struct dti_cpu *c)
{
	uint64_t seq = s->head.seq;
	struct dti_notice n = {
		.cpu = s->head.cpu, .source = s->name, .offset = s->head_off,
	};

	if (c->seen && seq != c->seq + 1) {
		n.type = seq > c->seq ? DTI_NOTICE_GAP : DTI_NOTICE_BACKWARDS;
		n.from_seq = seq > c->seq ? c->seq + 1 : c->seq;
		n.to_seq = seq;
		if (seq > c->seq) {
			n.count = seq - c->seq - 1;
			dti_notify(r, &n, "%llu records lost on cpu%u between seq %llu and %llu",
				   (unsigned long long)n.count, s->cpu,
				   (unsigned long long)n.from_seq,
				   (unsigned long long)seq);
		} else {
			dti_notify(r, &n, "sequence went backwards on cpu%u: seq %llu after %llu (%s offset %llu)",
				   s->cpu, (unsigned long long)seq,
				   (unsigned long long)c->seq, s->name,
				   (unsigned long long)n.offset);
		}
	}
	if (seq >= c->next_seq && !c->warned) {
		c->warned = true;
		n.type = DTI_NOTICE_WARNING;
		dti_notify(r, &n, "%s: cpu%u record seq %llu at offset %llu is not older than the snapshot's stats (next_seq %llu): a file of a later snapshot? (the directory was reused)",
			   s->name, s->cpu, (unsigned long long)seq,
			   (unsigned long long)n.offset,
			   (unsigned long long)c->next_seq);
	}
}

/*
 * Sequence numbers of the head of @s, about to be returned.  A pending
 * record has none yet, an event format takes none: neither is a step in
 * its CPU's sequence.
 */
static inline void dti_check_seq(struct dti_reader *r, struct dti_stream *s)
{
	struct dti_cpu *c;
	uint64_t seq = s->head.seq;

	s->cpu = s->head.cpu;
	if (s->pending || (s->head.flags & DTI_REC_FORMAT))
		return;
	c = &r->cpus[s->head.cpu];	/* claimed: exists */
	if ((c->seen && seq != c->seq + 1) || seq >= c->next_seq)
		dti_seq_notice(r, s, c);
	c->seen = true;
	c->seq = seq;
}

/* End of dti_next(): what dti_print() collected goes out. */
int dti_next_end(struct dti_reader *r, int ret)
{
	int err = errno;

	if (dti_ob_flush(r->ob) < 0 && ret == 0)
		return dti_fail(r->ob->err, "write error: %s", strerror(r->ob->err));
	errno = err;
	return ret;
}

/*
 * Whether head @a comes before a head at (@ts, @cpu): by time, then CPU.
 * Two heads are equal only if one is a pending record (each CPU's buffer
 * is merged from one stream): the first stream's goes first, and pending
 * stores' streams are last, as their records were logged while the
 * channel had no buffers.
 */
static inline bool dti_before(const struct dti_hdr *a, uint64_t ts,
			      unsigned int cpu)
{
	return a->ts_ns < ts || (a->ts_ns == ts && a->cpu < cpu);
}

/*
 * Whether head @a goes before head @b.  An event format has no time of
 * its own (it takes its sub-buffer header's, which may be later than the
 * first records of the sub-buffer: the header is written after the time
 * of the record that started the sub-buffer was taken), and is only
 * learnt: it goes before every record.
 */
static inline bool dti_head_before(const struct dti_hdr *a, const struct dti_hdr *b)
{
	bool fa = a->flags & DTI_REC_FORMAT, fb = b->flags & DTI_REC_FORMAT;

	if (fa != fb)
		return fa;
	return dti_before(a, b->ts_ns, b->cpu);
}

/*
 * The stream with the first head, after peeking every stream that has
 * none; r->run and the bound say what dti_next_std() may skip next time.
 * NULL at the end, or on an error (*@err = -1).
 */
static struct dti_stream *dti_first(struct dti_reader *r, int *err)
{
	struct dti_stream *s, *best = NULL, *second = NULL;
	bool run = true;
	unsigned int i;
	int ret;

	for (i = 0; i < r->n; i++) {
		s = &r->s[i];
		ret = s->have_head && (s->head.cpu == s->owned || s->pending) ? 1 :
		      dti_peek_owned(r, i);
		if (ret < 0) {
			*err = -1;
			return NULL;
		}
		if (!ret) {
			run &= s->dead;	/* else it is peeked again next time */
		} else if (!best || dti_head_before(&s->head, &best->head)) {
			second = best;
			best = s;
		} else if (!second || dti_head_before(&s->head, &second->head)) {
			second = s;
		}
	}
	r->run = run;
	/* a format waiting: no record goes before it without a look */
	r->bound_ts = !second ? UINT64_MAX :
		      second->head.flags & DTI_REC_FORMAT ? 0 : second->head.ts_ns;
	r->bound_cpu = !second ? UINT_MAX :
		       second->head.flags & DTI_REC_FORMAT ? 0 : second->head.cpu;
	return best;
}

/* @rec from the head of @s, the record dti_next() returns. */
static inline void dti_return(struct dti_reader *r, struct dti_stream *s,
			      struct dti_rec *rec)
{
	rec->cpu = s->head.log_cpu;
	rec->buf_cpu = s->head.cpu;
	rec->level = s->head.level;
	rec->flags = s->head.flags;
	rec->raw_version = s->head.version;
	rec->seq = s->head.seq;
	rec->ts_ns = s->head.ts_ns;
	rec->caller = s->head.caller;
	rec->raw = s->data + s->head_pos;
	rec->raw_len = s->head_size;
	rec->payload = s->data + s->head_pos + s->head_hlen;
	rec->len = s->head.len;
	rec->source = s->name;
	rec->offset = s->head_off;
	rec->swapped = s->head.swapped;
	r->last = s;
}

/* dti_next() when dti_first() is needed, or a sequence notice. */
static int __attribute__((noinline)) dti_next_slow(struct dti_reader *r,
						   struct dti_rec *rec)
{
	struct dti_stream *best;
	int err = 0;

	if (!r->started) {
		r->started = true;
		dti_notes_tell(r);
		dti_check_snapshot(r);
	}
	best = dti_first(r, &err);
	if (!best)
		return dti_next_end(r, err);
	dti_check_seq(r, best);
	dti_return(r, best, rec);
	return 1;
}

/* Start a run (struct dti_fast) with the head of @s, taken by dti_peek_fast(). */
static void dti_fast_start(struct dti_reader *r, struct dti_stream *s)
{
	struct dti_fast *f = &r->fast;
	uint64_t sub = s->sub_end - s->base;	/* in_sub: not before start */

	/* (ts, cpu) before (bound_ts, bound_cpu) as one compare: ts <= ts_max */
	if (s->head.cpu < r->bound_cpu)
		f->ts_max = r->bound_ts;
	else if (r->bound_ts)
		f->ts_max = r->bound_ts - 1;
	else
		return;
	f->on = true;
	f->p = s->data + s->head_pos;
	f->next = f->p + s->head_size;
	f->lim = s->data + (s->end < sub ? s->end : sub);
	f->off_adj = s->base - (uintptr_t)s->data;
	f->seq_next = s->head.seq + 1;
	f->seq_end = r->cpus[s->head.cpu].next_seq;
	f->left = s->counted ? s->left : UINT32_MAX;
	f->mask = s->fast_mask;
	f->want = s->fast_want;
	f->cpu = s->head.cpu;
	f->name = s->name;
	/* dti_peek_compact() moved the chains on to the head */
	f->compact = s->compact;
	f->ts = s->c_ts;
	f->caller = s->c_caller;
	f->caller_base = s->sub_hdr.caller;
	f->hlen = s->head_hlen;
}

/* End the run: its stream as if its last record had been consumed. */
static void dti_fast_end(struct dti_reader *r)
{
	struct dti_fast *f = &r->fast;
	struct dti_stream *s = r->last;

	f->on = false;
	s->start = f->next - s->data;
	s->have_head = false;
	if (s->counted)
		s->left = f->left - 1;
	s->cpu = f->cpu;
	r->cpus[f->cpu].seq = f->seq_next - 1;
	if (f->compact) {
		s->c_ts = f->ts;
		s->c_seq = f->seq_next;
		s->c_caller = f->caller;
	}
}

/*
 * dti_next() out of a run.  Only the stream whose head was returned needs
 * a new one; if it is plain (dti_peek_fast()), comes before every other
 * stream's head, which r->run says are all known, and follows its CPU's
 * last one in sequence, it is the next record without a look at the
 * others, and a run starts.  Otherwise dti_first() peeks every stream
 * that has no head (in the order that the shortcut would have: the
 * notices come out the same) and compares all heads.
 */
static int __attribute__((noinline)) dti_next_std(struct dti_reader *r,
						  struct dti_rec *rec)
{
	struct dti_stream *s = r->last;
	struct dti_cpu *c;

	if (!s)
		return dti_next_slow(r, rec);
	if (r->fast.on)
		dti_fast_end(r);
	else
		dti_stream_consume(s);
	r->last = NULL;
	if (!r->run || !dti_peek_fast(s) || s->head.cpu != s->owned ||
	    !dti_before(&s->head, r->bound_ts, r->bound_cpu))
		return dti_next_slow(r, rec);
	c = &r->cpus[s->head.cpu];	/* s owns it: it exists */
	if (s->head.seq != c->seq + 1 || s->head.seq >= c->next_seq || !c->seen)
		return dti_next_slow(r, rec);
	c->seq = s->head.seq;
	s->cpu = s->head.cpu;
	dti_return(r, s, rec);
	dti_fast_start(r, s);
	return 1;
}

/*
 * The merge in its most common case: the next record of a run
 * (dti_fast_step()).  Anything else, and the end of the window,
 * sub-buffer or count, ends the run.
 */
int dti_next_any(struct dti_reader *r, struct dti_rec *rec)
{
	const unsigned char *p;

	if (!r->fast.on || !(p = dti_fast_step(&r->fast)))
		return dti_next_std(r, rec);
	dti_fast_rec(&r->fast, p, rec);
	return 1;
}

/*
 * dti_next_any() without the format records (unless DTI_OPEN_FORMATS) and
 * the records the filter keeps out.  A run's records are plain ones
 * (dti_fast_setup()): never a format.
 */
int dti_next(struct dti_reader *r, struct dti_rec *rec)
{
	const unsigned char *p;
	int ret;

	if (r->fast.on && !r->filter && (p = dti_fast_step(&r->fast))) {
		dti_fast_rec(&r->fast, p, rec);
		return 1;
	}
	if (r->merge)
		return dti_merge_next(r, rec);
	while ((ret = dti_next_any(r, rec)) > 0) {
		if (rec->flags & DTI_REC_FORMAT) {
			if (r->flags & DTI_OPEN_FORMATS)
				return 1;
			continue;
		}
		if (!r->filter || dti_filter_match(r, rec))
			return 1;
	}
	return dti_filter_end(r, ret);
}

bool dti_reader_live(const struct dti_reader *r)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		if (r->s[i].live)
			return true;
	for (i = 0; i < r->n_kids; i++)
		if (dti_reader_live(r->kids[i].r))
			return true;
	return false;
}

struct dti_reader *dti_reader_twin(const struct dti_reader *r)
{
	struct dti_reader *t;
	unsigned int i;

	t = dti_reader_alloc(r->n, r->flags & ~DTI_OPEN_FOLLOW);
	if (!t)
		return NULL;
	for (i = 0; i < r->n; i++) {
		if (dti_stream_twin(&t->s[i], &r->s[i], r->ident.set ? &r->ident : NULL) < 0) {
			int err = errno;

			t->n = i + 1;
			dti_close(t);
			errno = err;
			return NULL;
		}
	}
	t->ncpu = r->ncpu;
	t->ident = r->ident;
	return t;
}
