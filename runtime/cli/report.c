// SPDX-License-Identifier: GPL-2.0
/*
 * dti report, and --report of read, decode, dump and console-log: what a
 * channel's records say at a glance, for whoever reads a trace first.
 * Counts and rates per level, CPU, kind of record (text, binary, each
 * event type) and caller; the intervals where records were lost, from
 * the sequence gaps (each with the times of the records around it); and
 * the channel's own accounting where the input has it (a live channel's
 * stats, a snapshot's), which says why records are missing: overwritten
 * by newer ones, discarded when full, dropped where DTI could not store.
 * The records are read as for printing: the filters hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dti-cli.h"

/* Callers listed, most records first */
#define DTI_REPORT_CALLERS	10
/* Lost-record intervals listed, earliest first; the rest are counted */
#define DTI_REPORT_GAPS		20
/* Slots of the callers' table (a power of 2) it starts with */
#define DTI_REPORT_HASH_INIT	256

struct dti_rcpu {
	uint64_t n, first_ts, last_ts, lost;
};

/*
 * A stream whose sequence numbers count on: a CPU of a channel (of the
 * merge's child @chan; 0 where one channel is read).  Its gaps end at
 * its own next record, not at a record of the same CPU of another
 * channel.
 */
struct dti_rstream {
	int chan;
	unsigned int cpu;
	uint64_t last_ts;		/* of its last record; 0: none yet */
	bool gap_open;			/* gaps from gap_from on wait for its next record */
	size_t gap_from;
};

/* A child of the merge read, for its notices: whose gaps they are */
struct dti_rchild {
	struct dti_report *rep;
	int chan;
};

/* Bytes of a kind's name: "event " and an event type's name, or the like */
#define DTI_REPORT_KIND_MAX	80

struct dti_rkind {
	char name[DTI_REPORT_KIND_MAX];
	uint64_t n;
};

struct dti_rcaller {
	uint64_t addr, n;
};

struct dti_rgap {
	int chan;
	unsigned int cpu;
	uint64_t from_seq, to_seq, count;
	uint64_t ts_before, ts_after;	/* 0: not known */
	bool open;			/* waits for its CPU's next record */
};

struct dti_report {
	uint64_t n, first_ts, last_ts;
	uint64_t by_level[DTI_LEVEL_MAX + 1];
	struct dti_rcpu *cpus;
	unsigned int n_cpus;
	struct dti_rkind *kinds;
	unsigned int n_kinds;
	struct dti_rkind *chans;	/* of merged channels: records per channel */
	unsigned int n_chans;
	struct dti_rcaller *callers;	/* open addressing by address */
	size_t cap, used;
	struct dti_rgap *gaps;
	size_t n_gaps;
	struct dti_rstream *streams;
	unsigned int n_streams;
	uint64_t lost;
	bool nomem;
	struct dti_read_opts *o;
};

static struct dti_rcpu *dti_rcpu(struct dti_report *rep, unsigned int cpu)
{
	struct dti_rcpu *c;

	if (cpu >= rep->n_cpus) {
		c = realloc(rep->cpus, (cpu + 1) * sizeof(*c));
		if (!c) {
			rep->nomem = true;
			return NULL;
		}
		memset(c + rep->n_cpus, 0, (cpu + 1 - rep->n_cpus) * sizeof(*c));
		rep->cpus = c;
		rep->n_cpus = cpu + 1;
	}
	return &rep->cpus[cpu];
}

/* The stream of CPU @cpu of channel @chan, added if new.  NULL: ENOMEM. */
static struct dti_rstream *dti_rstream(struct dti_report *rep, int chan, unsigned int cpu)
{
	struct dti_rstream *s;
	unsigned int i;

	for (i = 0; i < rep->n_streams; i++)
		if (rep->streams[i].chan == chan && rep->streams[i].cpu == cpu)
			return &rep->streams[i];
	s = realloc(rep->streams, (rep->n_streams + 1) * sizeof(*s));
	if (!s) {
		rep->nomem = true;
		return NULL;
	}
	rep->streams = s;
	s += rep->n_streams++;
	*s = (struct dti_rstream){ .chan = chan, .cpu = cpu };
	return s;
}

/* One more record of kind (or channel) @name in the table *@tab of *@n */
static void dti_rkind_add(struct dti_report *rep, struct dti_rkind **tab, unsigned int *n,
			  const char *name)
{
	struct dti_rkind *k;
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*tab)[i].name, name)) {
			(*tab)[i].n++;
			return;
		}
	k = realloc(*tab, (*n + 1) * sizeof(*k));
	if (!k) {
		rep->nomem = true;
		return;
	}
	*tab = k;
	k += (*n)++;
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->n = 1;
}

static size_t dti_rcaller_slot(const struct dti_rcaller *tab, size_t cap, uint64_t addr)
{
	size_t i = (addr * 0x9e3779b97f4a7c15ull) & (cap - 1);

	while (tab[i].n && tab[i].addr != addr)
		i = (i + 1) & (cap - 1);
	return i;
}

static void dti_rcaller_add(struct dti_report *rep, uint64_t addr)
{
	struct dti_rcaller *tab;
	size_t i, cap;

	if (2 * (rep->used + 1) > rep->cap) {
		cap = rep->cap ? 2 * rep->cap : DTI_REPORT_HASH_INIT;
		tab = calloc(cap, sizeof(*tab));
		if (!tab) {
			rep->nomem = true;
			return;
		}
		for (i = 0; i < rep->cap; i++)
			if (rep->callers[i].n)
				tab[dti_rcaller_slot(tab, cap, rep->callers[i].addr)] = rep->callers[i];
		free(rep->callers);
		rep->callers = tab;
		rep->cap = cap;
	}
	i = dti_rcaller_slot(rep->callers, rep->cap, addr);
	if (!rep->callers[i].n) {
		rep->callers[i].addr = addr;
		rep->used++;
	}
	rep->callers[i].n++;
}

/*
 * A sequence gap: an interval of lost records, closed by the next record
 * of its stream (@arg: a struct dti_rchild, the channel that told it).
 */
static void dti_report_notice(const struct dti_notice *n, void *arg)
{
	const struct dti_rchild *child = arg;
	struct dti_report *rep = child->rep;
	struct dti_rstream *s;
	struct dti_rcpu *c;
	struct dti_rgap *g;

	if (n->type != DTI_NOTICE_GAP) {
		dti_read_notice(n, rep->o);	/* damage, warnings: as when printing */
		return;
	}
	rep->lost += n->count;
	c = dti_rcpu(rep, n->cpu);
	if (c)
		c->lost += n->count;
	g = realloc(rep->gaps, (rep->n_gaps + 1) * sizeof(*g));
	if (!g) {
		rep->nomem = true;
		return;
	}
	rep->gaps = g;
	s = dti_rstream(rep, child->chan, n->cpu);
	if (s && !s->gap_open) {
		s->gap_open = true;
		s->gap_from = rep->n_gaps;
	}
	rep->gaps[rep->n_gaps++] = (struct dti_rgap){
		.chan = child->chan, .cpu = n->cpu, .from_seq = n->from_seq,
		.to_seq = n->to_seq, .count = n->count, .ts_before = s ? s->last_ts : 0,
		.open = true,
	};
}

static void dti_report_add(struct dti_report *rep, struct dti_reader *r,
			   const struct dti_rec *rec)
{
	int from = rep->o->merged ? dti_merge_last(r) : 0;
	struct dti_rstream *s = dti_rstream(rep, from, rec->cpu);
	struct dti_rcpu *c = dti_rcpu(rep, rec->cpu);
	const char *name;
	char kind[DTI_REPORT_KIND_MAX];
	size_t i;

	if (!rep->n++)
		rep->first_ts = rec->ts_ns;
	if (rec->ts_ns > rep->last_ts)
		rep->last_ts = rec->ts_ns;
	if (rec->level >= 0 && rec->level <= DTI_LEVEL_MAX)
		rep->by_level[rec->level]++;
	if (c) {
		if (!c->n++)
			c->first_ts = rec->ts_ns;
		c->last_ts = rec->ts_ns;
	}
	/* gaps of this stream told since its last record end at it */
	for (i = s && s->gap_open ? s->gap_from : rep->n_gaps; i < rep->n_gaps; i++) {
		if (!rep->gaps[i].open || rep->gaps[i].cpu != rec->cpu ||
		    rep->gaps[i].chan != from)
			continue;
		rep->gaps[i].open = false;
		rep->gaps[i].ts_after = rec->ts_ns;
	}
	if (s) {
		s->gap_open = false;
		s->last_ts = rec->ts_ns;
	}
	if (rec->flags & DTI_REC_TYPED)
		snprintf(kind, sizeof(kind), "event %s",
			 dti_event_info(r, rec, &name, NULL) >= 0 ? name : "(no format)");
	else
		snprintf(kind, sizeof(kind), "%s%s", rec->flags & DTI_REC_TEXT ? "text" :
			 rec->flags & DTI_REC_RESERVED ? "binary (reserved)" : "binary",
			 rec->flags & DTI_REC_REPLAYED ? ", replayed" :
			 rec->flags & DTI_REC_PENDING ? ", pending" : "");
	dti_rkind_add(rep, &rep->kinds, &rep->n_kinds, kind);
	dti_rcaller_add(rep, rec->caller);
	/* several channels merged: whose it is */
	if (rep->o->merged && from >= 0 && (name = dti_merge_name(r, from)))
		dti_rkind_add(rep, &rep->chans, &rep->n_chans, name);
}

static int dti_rcaller_cmp(const void *a, const void *b)
{
	const struct dti_rcaller *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Records per second over @ns, as text */
static const char *dti_rate(char *buf, size_t size, uint64_t n, uint64_t ns)
{
	if (ns)
		snprintf(buf, size, "%.1f/s", (double)n * 1e9 / (double)ns);
	else
		snprintf(buf, size, "-");
	return buf;
}

static void dti_ts(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

/* The caller at @addr as --symbols shows it, else as an address */
static const char *dti_rcaller_name(struct dti_read_opts *o, uint64_t addr, char *buf,
				    size_t size)
{
	if (!o->syms || dti_ksyms_format(o->syms, addr, buf, size) < 0)
		snprintf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

static void dti_report_print(struct dti_report *rep, struct dti_reader *r, FILE *f)
{
	const uint64_t span = rep->last_ts - rep->first_ts;
	char rate[32], name[256];
	struct dti_rcaller *top;
	unsigned int i, cpu;
	size_t k, n;

	fprintf(f, "records: %" PRIu64, rep->n);
	if (rep->n) {
		fputs(" from ", f);
		dti_ts(f, rep->first_ts);
		fputs(" to ", f);
		dti_ts(f, rep->last_ts);
		fprintf(f, " s (%.3f s), %s", (double)span / 1e9,
			dti_rate(rate, sizeof(rate), rep->n, span));
	}
	fprintf(f, "\nlost: %" PRIu64 " records in %zu intervals (sequence gaps)\n",
		rep->lost, rep->n_gaps);
	fprintf(f, "damaged places skipped: %lu; warnings: %lu\n", dti_damage_count(r),
		dti_warning_count(r));
	fputs("\nlevel      records\n", f);
	for (i = 0; i <= DTI_LEVEL_MAX; i++)
		if (rep->by_level[i])
			fprintf(f, "%-9s %8" PRIu64 "\n", dti_level_name(i), rep->by_level[i]);
	fputs("\ncpu   records         rate          first           last     lost\n", f);
	for (cpu = 0; cpu < rep->n_cpus; cpu++) {
		const struct dti_rcpu *c = &rep->cpus[cpu];

		if (!c->n && !c->lost)
			continue;
		fprintf(f, "%-4u %8" PRIu64 " %12s ", cpu, c->n,
			dti_rate(rate, sizeof(rate), c->n, c->last_ts - c->first_ts));
		dti_ts(f, c->first_ts);
		fputc(' ', f);
		dti_ts(f, c->last_ts);
		fprintf(f, " %8" PRIu64 "\n", c->lost);
	}
	if (rep->n_chans)
		fputs("\nchannel                       records\n", f);
	for (i = 0; i < rep->n_chans; i++)
		fprintf(f, "%-28s %8" PRIu64 "\n", rep->chans[i].name, rep->chans[i].n);
	fputs("\nkind                          records\n", f);
	for (i = 0; i < rep->n_kinds; i++)
		fprintf(f, "%-28s %8" PRIu64 "\n", rep->kinds[i].name, rep->kinds[i].n);
	top = malloc((rep->used ? rep->used : 1) * sizeof(*top));
	for (k = n = 0; top && k < rep->cap; k++)
		if (rep->callers[k].n)
			top[n++] = rep->callers[k];
	if (top) {
		qsort(top, n, sizeof(*top), dti_rcaller_cmp);
		fprintf(f, "\ncallers (%zu; the %d with most records)\n", n, DTI_REPORT_CALLERS);
		for (k = 0; k < n && k < DTI_REPORT_CALLERS; k++)
			fprintf(f, "%8" PRIu64 "  %s\n", top[k].n,
				dti_rcaller_name(rep->o, top[k].addr, name, sizeof(name)));
		free(top);
	}
	if (rep->n_gaps) {
		fputs("\nlost records (cpu, sequence numbers, between the records logged at)\n", f);
		for (k = 0; k < rep->n_gaps && k < DTI_REPORT_GAPS; k++) {
			const struct dti_rgap *g = &rep->gaps[k];
			const char *chan = rep->o->merged ? dti_merge_name(r, g->chan) : NULL;

			if (chan)
				fprintf(f, "%s ", chan);
			fprintf(f, "cpu%-3u %" PRIu64 "..%" PRIu64 " (%" PRIu64 ")  ", g->cpu,
				g->from_seq, g->to_seq - 1, g->count);
			if (g->ts_before)
				dti_ts(f, g->ts_before);
			else
				fputs("(start)", f);
			fputs(" .. ", f);
			if (g->ts_after)
				dti_ts(f, g->ts_after);
			else
				fputs("(end)", f);
			fputc('\n', f);
		}
		if (rep->n_gaps > DTI_REPORT_GAPS)
			fprintf(f, "... %zu more intervals\n", rep->n_gaps - DTI_REPORT_GAPS);
	}
}

/*
 * The channel's accounting as the input keeps it: a live channel's stats
 * file, a snapshot's copy; the per-CPU counters say why records are
 * missing (see dti stats --help).  Of merged channels, each one's.
 */
static void dti_report_stats(struct dti_read_opts *o, FILE *f)
{
	unsigned int i, n = o->n_report_stats ? o->n_report_stats : o->n_report_live;
	char *stats;

	if (!n) {
		fputs("\naccounting: none in this input (a live channel's stats or a snapshot's "
		      "say why records are missing)\n", f);
		return;
	}
	for (i = 0; i < n; i++) {
		stats = o->n_report_stats ? dti_read_text_file(o->report_stats[i]) :
			dti_read_ctl(o->report_live[i], "stats");
		if (o->n_report_stats)
			fprintf(f, "\naccounting (%s)", o->report_stats[i]);
		else if (n > 1)
			fprintf(f, "\naccounting (channel %s's stats)", o->report_live[i]);
		else
			fputs("\naccounting (the channel's stats)", f);
		if (!stats && n == 1)
			fputs(": none in this input (a live channel's stats or a snapshot's "
			      "say why records are missing)\n", f);
		else
			fprintf(f, ":\n%s", stats ? stats : "(could not be read)\n");
		free(stats);
	}
}

int dti_report_run(struct dti_reader *r, struct dti_read_opts *o)
{
	struct dti_report rep = { .o = o };
	struct dti_rchild *child;
	struct dti_rec rec;
	unsigned int n = dti_read_nr_readers(r, o), i;
	int ret;

	child = calloc(n, sizeof(*child));
	if (!child)
		return dti_err("out of memory");
	for (i = 0; i < n; i++) {
		child[i] = (struct dti_rchild){ .rep = &rep, .chan = i };
		dti_set_notice_handler(o->merged ? dti_merge_reader(r, i) : r,
				       dti_report_notice, &child[i]);
	}
	while ((ret = dti_next(r, &rec)) > 0 && !rep.nomem)
		dti_report_add(&rep, r, &rec);
	if (ret < 0 || rep.nomem) {
		ret = dti_err("%s", ret < 0 ? dti_errmsg() : "out of memory");
	} else {
		dti_report_print(&rep, r, o->f);
		dti_report_stats(o, o->f);
		ret = DTI_EXIT_OK;
	}
	free(rep.cpus);
	free(rep.kinds);
	free(rep.chans);
	free(rep.callers);
	free(rep.gaps);
	free(rep.streams);
	free(child);
	return ret;
}
