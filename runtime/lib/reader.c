// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: readers and the per-CPU merge.
 *
 * dti_next() is a streaming k-way merge in the manner of blkparse: every
 * CPU stream holds its next record decoded (its "head"); the head with
 * the smallest timestamp is returned, ties going to the lower CPU as in
 * the kernel's merged view.  Memory is one buffer per CPU.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libdti-local.h"

static struct dti_reader *dti_reader_alloc(unsigned int n, unsigned int flags)
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
	r->last = -1;
	return r;
}

void dti_close(struct dti_reader *r)
{
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		dti_stream_free(&r->s[i]);
	free(r->s);
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

static int dti_cmp_stream(const void *a, const void *b)
{
	const struct dti_stream *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static struct dti_reader *dti_open_paths(const char *const *paths,
					 unsigned int n, unsigned int flags,
					 bool live)
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
		if (dti_stream_init_fd(&r->s[i], paths[i], fd, live) < 0) {
			int err = errno;

			dti_close(r);
			errno = err;
			return NULL;
		}
		r->s[i].cpu = dti_name_cpu(paths[i], i);
	}
	qsort(r->s, n, sizeof(*r->s), dti_cmp_stream);
	return r;
}

struct dti_reader *dti_open_files(const char *const *paths, unsigned int n,
				  unsigned int flags)
{
	if (!n)
		return dti_fail_null(EINVAL, "no files to read");
	return dti_open_paths(paths, n, flags, false);
}

struct dti_reader *dti_open_mem(const void *const *bufs, const size_t *lens,
				unsigned int n)
{
	struct dti_reader *r;
	char name[32];
	unsigned int i;

	r = dti_reader_alloc(n, 0);
	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "buffer%u", i);
		dti_stream_init_mem(&r->s[i], name, bufs[i], lens[i]);
		if (!r->s[i].name || !r->s[i].buf) {
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

static struct dti_reader *dti_open_dir_live(const char *dir, unsigned int flags,
					    bool live)
{
	struct dti_reader *r = NULL;
	struct dirent *de;
	char **paths = NULL, **np;
	unsigned int n = 0, i;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return dti_fail_null(errno, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (!dti_is_trace_name(de->d_name))
			continue;
		np = realloc(paths, (n + 1) * sizeof(*paths));
		if (!np)
			goto nomem;
		paths = np;
		if (asprintf(&paths[n], "%s/%s", dir, de->d_name) < 0)
			goto nomem;
		n++;
	}
	closedir(d);
	d = NULL;
	if (!n) {
		dti_fail(ENOENT, "%s: no per-CPU files trace0..N", dir);
		goto out;
	}
	r = dti_open_paths((const char *const *)paths, n, flags, live);
	goto out;
nomem:
	dti_fail(ENOMEM, "out of memory");
out:
	if (d)
		closedir(d);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return r;
}

struct dti_reader *dti_open_dir(const char *dir, unsigned int flags)
{
	return dti_open_dir_live(dir, flags, false);
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
	return r;
}

unsigned int dti_nr_streams(const struct dti_reader *r)
{
	return r->n;
}

int dti_set_notice_handler(struct dti_reader *r, dti_notice_fn fn, void *arg)
{
	r->notice = fn;
	r->notice_arg = arg;
	return 0;
}

int dti_set_formatter(struct dti_reader *r, dti_formatter_fn fn, void *arg)
{
	r->fmt = fn;
	r->fmt_arg = arg;
	return 0;
}

int dti_set_ksyms(struct dti_reader *r, struct dti_ksyms *syms)
{
	r->ksyms = syms;
	return 0;
}

void dti_notify(struct dti_reader *r, enum dti_notice_type type,
		struct dti_stream *s, uint64_t from, uint64_t to, uint64_t count,
		uint64_t offset)
{
	struct dti_notice n = {
		.type = type, .cpu = s->cpu, .from_seq = from, .to_seq = to,
		.count = count, .source = s->name, .offset = offset,
	};
	char msg[256];

	if (!r->notice)
		return;
	switch (type) {
	case DTI_NOTICE_GAP:
		snprintf(msg, sizeof(msg),
			 "%llu records lost on cpu%u between seq %llu and %llu",
			 (unsigned long long)count, s->cpu,
			 (unsigned long long)from, (unsigned long long)to);
		break;
	case DTI_NOTICE_BACKWARDS:
		snprintf(msg, sizeof(msg),
			 "sequence went backwards on cpu%u: seq %llu after %llu (%s offset %llu)",
			 s->cpu, (unsigned long long)to, (unsigned long long)from,
			 s->name, (unsigned long long)offset);
		break;
	case DTI_NOTICE_SKIPPED:
		snprintf(msg, sizeof(msg),
			 "%s: skipped %llu bytes at offset %llu still being written",
			 s->name, (unsigned long long)count,
			 (unsigned long long)offset);
		break;
	}
	n.message = msg;
	r->notice(&n, r->notice_arg);
}

static int dti_check_seq(struct dti_reader *r, struct dti_stream *s)
{
	unsigned int cpu = s->head.cpu;
	uint64_t seq = s->head.seq;
	struct dti_cpu_seq *cs;

	if (cpu >= s->n_cs) {
		size_t n = cpu + 1;

		cs = realloc(s->cs, n * sizeof(*cs));
		if (!cs)
			return dti_fail(ENOMEM, "out of memory");
		memset(cs + s->n_cs, 0, (n - s->n_cs) * sizeof(*cs));
		s->cs = cs;
		s->n_cs = n;
	}
	cs = &s->cs[cpu];
	s->cpu = cpu;
	if (cs->seen && seq != cs->seq + 1) {
		if (seq > cs->seq)
			dti_notify(r, DTI_NOTICE_GAP, s, cs->seq + 1, seq,
				   seq - cs->seq - 1, s->head_off);
		else
			dti_notify(r, DTI_NOTICE_BACKWARDS, s, cs->seq, seq,
				   0, s->head_off);
	}
	cs->seen = true;
	cs->seq = seq;
	s->seen = true;
	return 0;
}

int dti_next(struct dti_reader *r, struct dti_rec *rec)
{
	struct dti_stream *s, *best = NULL;
	unsigned int i;
	int ret;

	if (r->last >= 0) {
		dti_stream_consume(&r->s[r->last]);
		r->last = -1;
	}
	for (i = 0; i < r->n; i++) {
		s = &r->s[i];
		ret = dti_stream_peek(r, s);
		if (ret < 0)
			return -1;
		if (!ret)
			continue;
		if (!best || s->head.ts_ns < best->head.ts_ns ||
		    (s->head.ts_ns == best->head.ts_ns && s->head.cpu < best->head.cpu))
			best = s;
	}
	if (!best)
		return 0;
	if (dti_check_seq(r, best) < 0)
		return -1;
	rec->cpu = best->head.log_cpu;
	rec->level = best->head.level;
	rec->flags = best->head.flags;
	rec->seq = best->head.seq;
	rec->ts_ns = best->head.ts_ns;
	rec->caller = best->head.caller;
	rec->raw = best->buf + best->head_pos;
	rec->raw_len = dti_rec_size(best->head.len);
	rec->payload = best->buf + best->head_pos + DTI_HDR_SIZE;
	rec->len = best->head.len;
	rec->source = best->name;
	rec->offset = best->head_off;
	rec->swapped = best->head.swapped;
	r->last = best - r->s;
	return 1;
}
