// SPDX-License-Identifier: GPL-2.0
/*
 * dti export, and -F ctf of read, decode, dump and console-log: a
 * channel's records as a CTF 1.8 trace (ctf.c) that babeltrace2, Trace
 * Compass and the other CTF readers open; -F perfetto (at the end of
 * this file): the records of every channel read as one Perfetto trace
 * (perfetto.c).  A converter on libdti's public API, as babeltrace2's
 * sinks are components on its own: the
 * records come from dti_next() with the reader's filters, typed events'
 * fields from dti_event_info() and dti_event_field().
 *
 * Event classes: "text" (a text record: field text), "binary" (a binary
 * record, or a typed event whose type is not known or whose values do
 * not fill its layout, as dti read prints it in hex: field data), and
 * one per event type seen (its name, its fields with their names and
 * types: integers of their size and sign, addresses in hex, strings,
 * byte sequences).  Format records are no events.  Markers are text or
 * binary records like any other (their caller is in dti.ko).  Every
 * event carries the record's logging CPU, level, sequence number, flags
 * and caller.  The stream of a record is the CPU whose buffer holds it,
 * by which its sequence number counts (its logging CPU but for replayed
 * records); the losses dti read tells ("N records lost on cpuC between
 * seq A and B") are that stream's discarded events, between the same
 * records.
 */
#include <byteswap.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dti-cli.h"
#include "ctf.h"

const char usage_export[] =
	"usage: dti export [options] DIR SNAPSHOT | FILE... | -\n"
	"       dti export -F perfetto [options] FILE SNAPSHOT | FILE... | -\n"
	"\nWrite the records of a snapshot (or of per-CPU files, '-' standard input)\n"
	"as a CTF 1.8 trace into DIR (created, or empty), for babeltrace2 and the\n"
	"other CTF readers: a stream per CPU, an event class per kind of record\n"
	"(text, binary) and per event type, with its fields; the records lost (the\n"
	"sequence gaps) as discarded events.  Or, -F perfetto, as a Perfetto trace\n"
	"into FILE ('-': standard output), for Perfetto's UI and trace processor:\n"
	"a track per channel and per CPU, every record an instant event with its\n"
	"level, seq, caller and fields as arguments, lost records as slices \"lost\n"
	"N records\".  The filters hold.  'dti read', 'dti dump' and 'dti\n"
	"console-log' export a live channel, a previous boot, a dump and a console\n"
	"log with -F ctf -o DIR or -F perfetto [-o FILE].\n"
	"\n"
	"  -F, --format FMT      ctf (CTF 1.8, the default) or perfetto\n"
	"  -c, --cpu LIST        only records of these CPUs (0,2-3; repeatable)\n"
	"  -p, --priority L      only records of level L and more severe, or of the\n"
	"                        levels L1..L2\n"
	"  -S, --since T         only records logged at T or later (as dti decode)\n"
	"  -U, --until T         only records logged at T or earlier\n"
	"  -g, --grep REGEX      only records whose message matches REGEX\n"
	"      --case-sensitive  with --grep: case matters\n"
	"      --filter EXPR     only typed events for which EXPR holds\n"
	"      --strict          stop at the first damaged record (exit status 1)\n"
	"  -q, --quiet           report neither lost records nor damage on stderr\n"
	"  -s, --symbols         (perfetto) callers' symbols through /proc/kallsyms\n"
	"                        (a snapshot of this boot only, as dti decode);\n"
	"                        --kallsyms, --lines, -d, --kernel-release and\n"
	"                        --modules as dti decode has them\n"
	"\nExit status: 0, 1 failure, 2 damaged data skipped, 129 usage.\n";

/* An event type seen, as its CTF event class */
struct dti_xclass {
	int type_id;
	char *name;
	unsigned int n;
	struct dti_ctf_field f[DTI_EVENT_ARGS_MAX];
	int ctf_id;
};

struct dti_export {
	struct dti_ctf *ctf;
	struct dti_read_opts *o;
	struct dti_xclass *classes;
	unsigned int n_classes;
	int text_id, binary_id;
};

static const struct dti_ctf_field dti_text_fields[] = { { "text", DTI_CTF_STR, 0 } };
static const struct dti_ctf_field dti_binary_fields[] = { { "data", DTI_CTF_BYTES, 0 } };

/* Losses are the stream's discarded events; the rest as dti read tells it */
static void dti_export_notice(const struct dti_notice *n, void *arg)
{
	struct dti_export *x = arg;

	if (n->type == DTI_NOTICE_GAP)
		dti_ctf_discarded(x->ctf, n->cpu, n->count);
	dti_read_notice(n, x->o);
}

static enum dti_ctf_kind dti_export_kind(enum dti_field_type t)
{
	switch (t) {
	case DTI_FIELD_INT:
		return DTI_CTF_INT;
	case DTI_FIELD_UINT:
		return DTI_CTF_UINT;
	case DTI_FIELD_PTR:
		return DTI_CTF_HEX;
	case DTI_FIELD_STR:
		return DTI_CTF_STR;
	case DTI_FIELD_BYTES:
		break;
	}
	return DTI_CTF_BYTES;
}

/*
 * The class of typed record @rec, whose @n fields are at @v: the one of
 * its type's id, name and fields (a type that another boot registered
 * under the same id with other fields is a class of its own), made the
 * first time.  Its CTF id, or -1 (printed).
 */
static int dti_export_class(struct dti_export *x, int type_id, const char *name,
			    const struct dti_field *v, unsigned int n)
{
	struct dti_ctf_field f[DTI_EVENT_ARGS_MAX];
	struct dti_xclass *k;
	unsigned int i, j;

	for (i = 0; i < n; i++)
		f[i] = (struct dti_ctf_field){ v[i].name, dti_export_kind(v[i].type), v[i].size };
	for (i = 0; i < x->n_classes; i++) {
		k = &x->classes[i];
		if (k->type_id != type_id || k->n != n || strcmp(k->name, name))
			continue;
		for (j = 0; j < n; j++)
			if (strcmp(k->f[j].name, f[j].name) || k->f[j].kind != f[j].kind ||
			    k->f[j].size != f[j].size)
				break;
		if (j == n)
			return k->ctf_id;
	}
	k = realloc(x->classes, (x->n_classes + 1) * sizeof(*k));
	if (!k)
		return dti_err("out of memory"), -1;
	x->classes = k;
	k += x->n_classes;
	k->ctf_id = dti_ctf_class(x->ctf, name, f, n);
	if (k->ctf_id < 0)
		return -1;
	k->name = strdup(name);
	if (!k->name)
		return dti_err("out of memory"), -1;
	k->type_id = type_id;
	k->n = 0;
	x->n_classes++;
	for (j = 0; j < n; j++, k->n++) {
		k->f[j] = f[j];
		k->f[j].name = strdup(f[j].name);
		if (!k->f[j].name)
			return dti_err("out of memory"), -1;
	}
	return k->ctf_id;
}

unsigned int dti_export_stream(const struct dti_rec *rec)
{
	return rec->buf_cpu;
}

/* @rec as an event.  0 or -1 (printed). */
static int dti_export_rec(struct dti_export *x, struct dti_reader *r,
			  const struct dti_rec *rec)
{
	struct dti_field v[DTI_EVENT_ARGS_MAX];
	const struct dti_ctf_ctx ctx = {
		.cpu = rec->cpu, .level = rec->level, .flags = rec->flags,
		.seq = rec->flags & DTI_REC_PENDING ? 0 : rec->seq, .caller = rec->caller,
	};
	unsigned int n = 0, i, stream = dti_export_stream(rec);
	const char *name;
	int type_id = -1, id;

	if (rec->flags & DTI_REC_TYPED) {
		type_id = dti_event_info(r, rec, &name, &n);
		for (i = 0; type_id >= 0 && i < n && i < DTI_EVENT_ARGS_MAX; i++)
			if (dti_event_field(r, rec, i, &v[i]) < 0)
				type_id = -1;	/* printed as hex: a binary record */
	}
	if (type_id >= 0) {
		id = dti_export_class(x, type_id, name, v, n);
		if (id < 0 || dti_ctf_event(x->ctf, stream, id, rec->ts_ns, &ctx) < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (v[i].type == DTI_FIELD_STR || v[i].type == DTI_FIELD_BYTES)
				dti_ctf_put_bytes(x->ctf, v[i].data, v[i].len);
			else
				dti_ctf_put_num(x->ctf, v[i].u, v[i].size);
		}
		return 0;
	}
	id = rec->flags & DTI_REC_TEXT ? x->text_id : x->binary_id;
	if (dti_ctf_event(x->ctf, stream, id, rec->ts_ns, &ctx) < 0)
		return -1;
	dti_ctf_put_bytes(x->ctf, rec->payload, rec->len);
	return 0;
}

/*
 * Where the trace of the channel being read goes: -o DIR, or DIR/NAME
 * where several channels may come (dump, console-log without
 * --channel), DIR made by the first.  NULL on error (printed).
 */
static char *dti_export_dir(struct dti_read_opts *o)
{
	char *dir;

	if (!o->ctf_per_channel)
		return strdup(o->output);
	if (mkdir(o->output, 0755) != 0 && errno != EEXIST) {
		dti_err("%s: %s", o->output, strerror(errno));
		return NULL;
	}
	if (asprintf(&dir, "%s/%s", o->output, o->chan_name ? o->chan_name : "channel") < 0)
		return NULL;
	return dir;
}

/* Begin the trace of @r's records in @dir.  0, or -1 (printed). */
static int dti_export_open(struct dti_export *x, struct dti_reader *r, const char *dir,
			   struct dti_read_opts *o)
{
	x->o = o;
	x->ctf = dti_ctf_create(dir, o->merged ? NULL : o->chan_name);
	if (!x->ctf)
		return -1;
	x->text_id = dti_ctf_class(x->ctf, "text", dti_text_fields, 1);
	x->binary_id = dti_ctf_class(x->ctf, "binary", dti_binary_fields, 1);
	dti_set_notice_handler(r, dti_export_notice, x);
	return x->text_id >= 0 && x->binary_id >= 0 ? 0 : -1;
}

/* End the trace begun by dti_export_open() of @r.  0, or -1 (printed). */
static int dti_export_close(struct dti_export *x, struct dti_reader *r)
{
	unsigned int i, j;
	int ret = 0;

	if (!x->ctf)
		return 0;
	dti_ctf_set_channel(x->ctf, dti_channel_name(r));
	if (dti_ctf_close(x->ctf) < 0)
		ret = -1;
	for (i = 0; i < x->n_classes; i++) {
		for (j = 0; j < x->classes[i].n; j++)
			free((char *)x->classes[i].f[j].name);
		free(x->classes[i].name);
	}
	free(x->classes);
	return ret;
}

/* The records of @r into @x's trace.  0, or -1 (printed). */
static int dti_export_records(struct dti_reader *r, struct dti_export *x, unsigned int n)
{
	struct dti_rec rec;
	int ret, i = 0;

	while ((ret = dti_next(r, &rec)) > 0) {
		if (n > 1)
			i = dti_merge_last(r);
		if (dti_export_rec(&x[i], n > 1 ? dti_merge_reader(r, i) : r, &rec) < 0)
			return -1;
	}
	if (ret < 0)
		dti_err("%s", dti_errmsg());
	return ret;
}

/* Bytes of a merge child's name as the exports give it: NAME or NAME.N */
#define DTI_EXPORT_NAME_MAX	(DTI_NAME_MAX + 16)

/*
 * The name of merge @m's child @i as the exports give it (a CTF trace's
 * directory, a Perfetto track): its channel's, NAME.@i where an earlier
 * child has the same one, into @buf of DTI_EXPORT_NAME_MAX bytes.
 */
static const char *dti_export_child_name(struct dti_reader *m, unsigned int i, char *buf)
{
	const char *name = dti_merge_name(m, i), *other;
	unsigned int j;

	if (!name)
		name = "channel";
	snprintf(buf, DTI_EXPORT_NAME_MAX, "%s", name);
	for (j = 0; j < i; j++) {
		other = dti_merge_name(m, j);
		if (other && !strcmp(other, name)) {
			snprintf(buf, DTI_EXPORT_NAME_MAX, "%s.%u", name, i);
			break;
		}
	}
	return buf;
}

/*
 * Several channels (a merge, @m): a trace of each, DIR/NAME, which CTF
 * readers merge by time again (babeltrace2 DIR).  Each is written in
 * DIR/.N while the records come, as a child's name may come from its
 * data, then named; a second channel of the same name is NAME.N.
 */
static int dti_export_merged(struct dti_reader *m, struct dti_read_opts *o)
{
	unsigned int n = dti_read_nr_readers(m, o), i;
	char name[DTI_EXPORT_NAME_MAX], *tmp, *dir;
	struct dti_export *x;
	int ret = 0;

	x = calloc(n, sizeof(*x));
	if (!x)
		return dti_err("out of memory");
	if (mkdir(o->output, 0755) != 0 && errno != EEXIST)
		ret = dti_err("%s: %s", o->output, strerror(errno));
	for (i = 0; ret == 0 && i < n; i++) {
		if (asprintf(&tmp, "%s/.%u", o->output, i) < 0)
			ret = -1;
		else
			ret = dti_export_open(&x[i], dti_merge_reader(m, i), tmp, o);
		free(tmp);
	}
	if (ret == 0)
		ret = dti_export_records(m, x, n);
	for (i = 0; i < n; i++) {
		if (dti_export_close(&x[i], dti_merge_reader(m, i)) < 0 || !x[i].ctf)
			ret = -1;
		if (!x[i].ctf || asprintf(&tmp, "%s/.%u", o->output, i) < 0)
			continue;
		if (asprintf(&dir, "%s/%s", o->output, dti_export_child_name(m, i, name)) < 0)
			dir = NULL;
		if (!dir || rename(tmp, dir) != 0)
			ret = dti_err("%s: cannot name the trace %s: %s", tmp, dir ? dir : "",
				      strerror(dir ? errno : ENOMEM));
		free(tmp);
		free(dir);
	}
	free(x);
	return ret == 0 ? DTI_EXIT_OK : DTI_EXIT_FAIL;
}

int dti_export_run(struct dti_reader *r, struct dti_read_opts *o)
{
	struct dti_export x = { 0 };
	char *dir;
	int ret;

	if (o->merged)
		return dti_export_merged(r, o);
	dir = dti_export_dir(o);
	if (!dir)
		return DTI_EXIT_FAIL;
	ret = dti_export_open(&x, r, dir, o);
	free(dir);
	if (ret == 0)
		ret = dti_export_records(r, &x, 1);
	if (dti_export_close(&x, r) < 0 || !x.ctf)
		ret = -1;
	return ret == 0 ? DTI_EXIT_OK : DTI_EXIT_FAIL;
}

/* A reader's records going into the Perfetto trace of a run */
struct dti_xperfetto {
	struct dti_read_opts *o;
	struct dti_reader *r;		/* the reader read (a merge: the merge) */
	int child;			/* of a merge, the child whose notices these are */
	char name[DTI_EXPORT_NAME_MAX];	/* of a merge's child: its track's name */
	bool *failed;
};

/*
 * The channel @x's records are of: the reader's, or of a merge's child
 * @x->child its name as the CTF traces of several channels have it.
 */
static const char *dti_xperfetto_name(struct dti_xperfetto *x)
{
	if (x->child < 0)
		return dti_channel_name(x->r);
	return dti_export_child_name(x->r, x->child, x->name);
}

/* Lost records into the Perfetto trace, and every notice on stderr as dti read has it */
static void dti_export_perfetto_notice(const struct dti_notice *n, void *arg)
{
	struct dti_xperfetto *x = arg;

	if (dti_perfetto_loss(x->o->pf, dti_xperfetto_name(x), n) < 0)
		*x->failed = true;
	dti_read_notice(n, x->o);
}

int dti_export_perfetto(struct dti_reader *r, struct dti_read_opts *o)
{
	struct dti_lines *lines = o->lines_other ? o->lines_other :
				  o->lines_on && !o->lines_other_off ? o->lines_l : NULL;
	struct dti_xperfetto *x;
	unsigned int k = dti_read_nr_readers(r, o), i;
	bool failed = false;
	struct dti_rec rec;
	int n = 0;

	x = calloc(k, sizeof(*x));
	if (!x)
		return dti_err("out of memory");
	if (!o->pf) {
		o->pf = dti_perfetto_open(o->f);
		if (!o->pf) {
			free(x);
			return DTI_EXIT_FAIL;
		}
	}
	dti_perfetto_callers(o->pf, o->syms, lines);
	/* several channels: each child's notices are of its own channel */
	for (i = 0; i < k; i++) {
		x[i] = (struct dti_xperfetto){ .o = o, .r = r, .child = o->merged ? (int)i : -1,
					       .failed = &failed };
		dti_set_notice_handler(o->merged ? dti_merge_reader(r, i) : r,
				       dti_export_perfetto_notice, &x[i]);
	}
	while (!failed && (n = dti_next(r, &rec)) > 0) {
		i = o->merged ? (unsigned int)dti_merge_last(r) : 0;
		if (dti_perfetto_record(o->pf, r, &rec, dti_xperfetto_name(&x[i])) < 0)
			failed = true;
	}
	free(x);
	/* a write error: the output's close says why */
	if (failed)
		return DTI_EXIT_FAIL;
	if (n < 0)
		return dti_err("%s", dti_errmsg());
	return DTI_EXIT_OK;
}

int dti_read_parse_export(const char *cmd, bool format, struct dti_read_opts *o)
{
	bool is_export = !strcmp(cmd, "export");

	if (is_export) {
		if (format && !o->ctf && !o->perfetto)
			return dti_usage(cmd, true, "-F/--format: dti export writes ctf (CTF 1.8) "
					 "or perfetto");
		if (o->output)
			return dti_usage(cmd, true, o->perfetto ?
					 "-o: the trace's file is the first operand, FILE" :
					 "-o: the trace's directory is the first operand, DIR");
		o->ctf = !o->perfetto;
	}
	if (o->perfetto && (o->report || o->follow || o->list || o->out_dir || o->excerpt))
		return dti_usage(cmd, true, "a Perfetto trace is written of the records there "
				 "are: no --report, --follow, --list, --out or --excerpt");
	if (!o->ctf)
		return -1;
	if (!is_export && !o->output)
		return dti_usage(cmd, true, "-F ctf writes a directory: -o DIR");
	if (o->report || o->follow || o->list || o->out_dir || o->excerpt)
		return dti_usage(cmd, true, "a CTF trace is written of the records there are: "
				 "no --report, --follow, --list, --out or --excerpt");
	if (o->symbols || o->lines)
		return dti_usage(cmd, true, "CTF events carry callers as addresses: no --symbols, "
				 "--kallsyms, --lines, -d, --kernel-release or --modules");
	/* dump and console-log read every channel unless --channel names one */
	o->ctf_per_channel = (!strcmp(cmd, "dump") || !strcmp(cmd, "console-log")) &&
			     !o->channel;
	return -1;
}

int cmd_export(int argc, char **argv)
{
	return dti_decode_cmd("export", argc, argv);
}
