// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: several readers merged by time (dti_merge_new()).
 *
 * A merge is a struct dti_reader with no streams of its own: its
 * children are readers, each of one channel, and each keeps what is its
 * channel's (event types, callers, notices, sequence checks).  Every
 * child holds its next record, read with dti_next() (its "head", valid
 * until its next dti_next()); the merge returns the head with the
 * smallest time, ties going to the child added first, and reads that
 * child's next head at its next call.  So the record the merge returned
 * last is its child's record returned last, and dti_print() and the
 * event functions take it through that child.
 *
 * The children print into the merge's output buffer (dti_print()
 * collects its text), so that their lines come out in the merge's order.
 * A filter set on the merge is set on the children, but for its times:
 * those relative to the first record (DTI_TIME_FIRST) and the last
 * (DTI_TIME_LAST) are of the merged records, so the merge checks them.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "libdti-local.h"

struct dti_reader *dti_merge_new(void)
{
	struct dti_reader *m = dti_reader_alloc(0, 0);

	if (!m)
		return NULL;
	m->merge = true;
	return m;
}

/* What was set on merge @m holds for child @r too. */
static int dti_merge_pass(struct dti_reader *m, struct dti_reader *r)
{
	if (m->notice)
		dti_set_notice_handler(r, m->notice, m->notice_arg);
	if (m->fmt)
		dti_set_formatter(r, m->fmt, m->fmt_arg);
	if (m->symbolizer)
		dti_set_symbolizer(r, m->symbolizer, m->symbolizer_arg);
	if (m->ksyms)
		dti_set_ksyms(r, m->ksyms);
	if (m->lines)
		dti_set_lines(r, m->lines);
	return m->filter ? dti_filter_attach(r, m->filter, false) : 0;
}

int dti_merge_add(struct dti_reader *m, struct dti_reader *r, const char *name)
{
	struct dti_kid *kids;
	char *copy = NULL;

	if (!m || !m->merge || !r || r->merge || r->in_merge)
		return dti_fail(EINVAL, "dti_merge_add(): %s",
				!m || !m->merge ? "not a merge" :
				!r ? "no reader" : r->merge ? "a merge in a merge" :
				"a reader already in a merge");
	if (m->started)
		return dti_fail(EINVAL, "dti_merge_add(): the merge was read from already");
	if (name && !(copy = strdup(name)))
		return dti_fail(ENOMEM, "out of memory");
	kids = realloc(m->kids, (m->n_kids + 1) * sizeof(*kids));
	if (!kids) {
		free(copy);
		return dti_fail(ENOMEM, "out of memory");
	}
	m->kids = kids;
	if (dti_merge_pass(m, r) < 0) {
		free(copy);
		return -1;
	}
	/* what it collected for dti_print() goes first */
	dti_ob_flush(r->ob);
	r->ob = m->ob;
	r->in_merge = true;
	kids[m->n_kids] = (struct dti_kid){ .r = r, .name = copy };
	return m->n_kids++;
}

int dti_merge_last(const struct dti_reader *m)
{
	if (!m->merge)
		return dti_fail(EINVAL, "not a merge");
	if (m->kid_last < 0)
		return dti_fail(ENOENT, "no record was returned yet");
	return m->kid_last;
}

struct dti_reader *dti_merge_reader(struct dti_reader *m, unsigned int i)
{
	if (!m->merge)
		return dti_fail_null(EINVAL, "not a merge");
	if (i >= m->n_kids)
		return dti_fail_null(ENOENT, "the merge has %u readers, not %u", m->n_kids, i + 1);
	return m->kids[i].r;
}

/* A child's name from its data (as JSON names it), once it is known */
static void dti_kid_name(struct dti_kid *k)
{
	const char *name;

	if (k->name || !(name = dti_rec_channel(k->r)))
		return;
	k->name = strdup(name);
}

const char *dti_merge_name(const struct dti_reader *m, unsigned int i)
{
	if (!m->merge)
		return dti_fail_null(EINVAL, "not a merge");
	if (i >= m->n_kids)
		return dti_fail_null(ENOENT, "the merge has %u readers, not %u", m->n_kids, i + 1);
	dti_kid_name(&m->kids[i]);
	if (!m->kids[i].name)
		return dti_fail_null(ENOENT, "reader %u: its channel is not known (yet)", i);
	return m->kids[i].name;
}

struct dti_reader *dti_merge_from(struct dti_reader *m)
{
	if (m->kid_last < 0)
		return dti_fail_null(ENOENT, "no record was returned yet");
	return m->kids[m->kid_last].r;
}

/* Child @k's head, if it has none and may have one.  0, or -1 (its error). */
static int dti_kid_fill(struct dti_kid *k)
{
	int ret;

	if (k->have || k->ended)
		return 0;
	ret = dti_next(k->r, &k->head);
	if (ret < 0)
		return -1;
	k->have = ret > 0;
	/* a live child may have more later */
	k->ended = !ret && !(k->r->flags & DTI_OPEN_FOLLOW);
	return 0;
}

/* At the first record: the names for the channel column, and its width */
static void dti_merge_start(struct dti_reader *m)
{
	unsigned int i, len;

	m->started = true;
	for (i = 0; i < m->n_kids; i++) {
		dti_kid_name(&m->kids[i]);
		len = m->kids[i].name ? strlen(m->kids[i].name) : 1;
		if (len > m->name_w)
			m->name_w = len;
	}
}

int dti_merge_next(struct dti_reader *m, struct dti_rec *rec)
{
	struct dti_kid *k, *best;
	unsigned int i;

	for (;;) {
		if (m->kid_last >= 0)
			m->kids[m->kid_last].have = false;	/* taken: its next one */
		m->kid_last = -1;
		best = NULL;
		for (i = 0; i < m->n_kids; i++) {
			k = &m->kids[i];
			if (dti_kid_fill(k) < 0)
				return dti_next_end(m, -1);
			if (k->have && (!best || k->head.ts_ns < best->head.ts_ns))
				best = k;
		}
		if (!m->started)
			dti_merge_start(m);
		if (!best)
			return dti_filter_end(m, dti_next_end(m, 0));
		m->kid_last = best - m->kids;
		if (m->filter && !dti_merge_times(m, best->head.ts_ns))
			continue;
		*rec = best->head;
		return 1;
	}
}

int dti_merge_print_records(struct dti_reader *m, FILE *out, enum dti_format format,
			    unsigned long max)
{
	unsigned long left = max ? max : ULONG_MAX;
	struct dti_rec rec;
	int ret;

	/* refused before a record is taken */
	if (format == DTI_FMT_RAW && m->n_kids > 1)
		return dti_merge_print(m, out, NULL, format);
	while (left--) {
		ret = dti_merge_next(m, &rec);
		if (ret <= 0)
			return ret;
		if (dti_merge_print(m, out, &rec, format) < 0)
			return -1;
	}
	return 1;
}

void dti_merge_close(struct dti_reader *m)
{
	unsigned int i;

	/* they flush into the merge's buffer: it goes out after them */
	for (i = 0; i < m->n_kids; i++) {
		dti_close(m->kids[i].r);
		free(m->kids[i].name);
	}
	free(m->kids);
	m->kids = NULL;
	m->n_kids = 0;
}
