// SPDX-License-Identifier: GPL-2.0
/*
 * dti read, dti decode: print records merged by time.  Their options,
 * parsing and printing serve dti dump too (dump.c).
 *
 * read writes 1 to reset_consumed and then reads the trace files to their
 * end, so it prints every record the buffers hold (as the kernel's merged
 * view does) and leaves them consumed.  --follow then keeps reading the
 * trace files, polling every 100 ms, until interrupted.
 *
 * Records go through a stdio stream of our own over the output file
 * descriptor (fopencookie), which keeps the errno of a failed write:
 * stdio and dti_print() only say that writing failed, not why.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dti-cli.h"

/* Options of read and decode, as getopt_long entries and as help */
#define DTI_READ_HELP \
	DTI_HELP_FORMAT \
	"  -s, --symbols         resolve callers through /proc/kallsyms (records of\n" \
	"                        this boot only: a snapshot's boot_id says)\n" \
	DTI_HELP_TAIL
#define DTI_READ_OPTS \
	{ "help",      no_argument,       NULL, 'h' }, \
	{ "format",    required_argument, NULL, 'F' }, \
	{ "output",    required_argument, NULL, 'o' }, \
	{ "cpu",       required_argument, NULL, 'c' }, \
	{ "symbols",   no_argument,       NULL, 's' }, \
	{ "quiet",     no_argument,       NULL, 'q' }, \
	{ "priority",  required_argument, NULL, 'p' }, \
	{ "since",     required_argument, NULL, 'S' }, \
	{ "until",     required_argument, NULL, 'U' }, \
	{ "grep",      required_argument, NULL, 'g' }, \
	{ "case-sensitive", no_argument,  NULL, OPT_CASE }, \
	{ "filter",    required_argument, NULL, OPT_FILTER }, \
	{ "report",    no_argument,       NULL, OPT_REPORT }, \
	{ "min-level", required_argument, NULL, OPT_MIN }, \
	{ "max-level", required_argument, NULL, OPT_MAX }, \
	{ "kallsyms",  required_argument, NULL, OPT_KALLSYMS }, \
	{ "strict",    no_argument,       NULL, OPT_STRICT }, \
	{ "lines",     no_argument,       NULL, OPT_LINES }, \
	{ "debuginfo", required_argument, NULL, 'd' }, \
	{ "kernel-release", required_argument, NULL, OPT_RELEASE }, \
	{ "modules",   required_argument, NULL, OPT_MODULES }, \
	{ "journal",   no_argument,       NULL, OPT_JOURNAL }

const char usage_read[] =
	"usage: dti read [options] CHANNEL...\n"
	"\nPrint every record CHANNEL holds, all CPUs merged by time.  Consumes the\n"
	"trace files (after making them return everything again).  Several channels\n"
	"are merged into one timeline, each line after its channel's name.\n"
	"\n"
	"  -f, --follow          keep printing new records until interrupted\n"
	"      --no-reset        only the records not read before\n"
	"      --previous        the records the previous boot left in persistent\n"
	"                        channel CHANNEL (after a reset that kept RAM)\n"
	"                        (--lines: with the previous boot's module table)\n"
	DTI_READ_HELP;
const char usage_decode[] =
	"usage: dti decode [options] DIR... | FILE... | -\n"
	"\nPrint the records of per-CPU files copied by 'dti snapshot' (DIR holding\n"
	"trace0..N) or given one file per CPU, merged by time; '-' is standard\n"
	"input.  Copies of the whole ring (mmap, memory dumps) are read as well.\n"
	"Several DIRs (snapshots of channels) are merged into one timeline, each\n"
	"line after its channel's name.\n"
	"A snapshot's info, stats and modules given as FILEs are read as DIR's\n"
	"are, so 'dti decode DIR/*' prints what 'dti decode DIR' prints.  With\n"
	"--lines the module table is DIR/modules (or the FILE called modules).\n"
	"\n"
	DTI_READ_HELP;
const char usage_report[] =
	"usage: dti report [options] DIR | FILE... | -\n"
	"\nWhat the records of a snapshot or of per-CPU files say at a glance: how\n"
	"many, over what time, at what rate, per level, CPU, kind (text, binary,\n"
	"each event type) and caller; the intervals where records were lost\n"
	"(sequence gaps), with the times around them; and the channel's\n"
	"accounting (DIR/stats), which says why.  The filters hold.  For a live\n"
	"channel, a previous boot, a dump or a console log: --report of dti\n"
	"read, dti dump and dti console-log.\n"
	"\n"
	DTI_READ_HELP;

enum { OPT_MIN = 256, OPT_MAX, OPT_KALLSYMS, OPT_NORESET, OPT_STRICT,
       OPT_CHANNEL, OPT_OUT, OPT_EXCERPT, OPT_LINES, OPT_RELEASE, OPT_MODULES,
       OPT_PREVIOUS, OPT_CASE, OPT_FILTER, OPT_REPORT, OPT_JOURNAL };

static const struct option dti_read_opts[] = {
	DTI_READ_OPTS,
	{ "follow",    no_argument,       NULL, 'f' },
	{ "no-reset",  no_argument,       NULL, OPT_NORESET },
	{ "previous",  no_argument,       NULL, OPT_PREVIOUS },
	{ NULL, 0, NULL, 0 },
};
static const struct option dti_decode_opts[] = {
	DTI_READ_OPTS,
	{ NULL, 0, NULL, 0 },
};
/* console-log: the log's machine is not this one either */
static const struct option dti_console_opts[] = {
	DTI_READ_OPTS,
	{ "channel",   required_argument, NULL, OPT_CHANNEL },
	{ NULL, 0, NULL, 0 },
};
/*
 * /proc/kallsyms is the host's, not the dumped kernel's: no --symbols
 * (decode checks a snapshot's boot_id instead: dti_decode_this_boot())
 */
static const struct option dti_dump_opts[] = {
	DTI_READ_OPTS,
	{ "list",      no_argument,       NULL, 'l' },
	{ "verbose",   no_argument,       NULL, 'v' },
	{ "channel",   required_argument, NULL, OPT_CHANNEL },
	{ "out",       required_argument, NULL, OPT_OUT },
	{ "excerpt",   required_argument, NULL, OPT_EXCERPT },
	{ NULL, 0, NULL, 0 },
};

/* What -s/--symbols refusals end with: why, and what to do instead */
#define DTI_SYMBOLS_THIS_BOOT \
	"-s/--symbols resolves callers through this boot's /proc/kallsyms; " \
	"give the kallsyms of the boot that logged with --kallsyms FILE"

static volatile sig_atomic_t dti_stop;

/* -S/--since (@since), -U/--until: -1 to go on, or an exit code */
static int dti_parse_time_opt(const char *cmd, bool since, const char *text,
			      struct dti_filter *filter)
{
	enum dti_time_base base;
	char msg[512];
	int64_t ns;

	if (dti_time_parse(text, &base, &ns) < 0 ||
	    (since ? dti_filter_since(filter, base, ns) :
	     dti_filter_until(filter, base, ns)) < 0) {
		snprintf(msg, sizeof(msg), "%s: %s", since ? "--since" : "--until", dti_errmsg());
		return dti_usage(cmd, true, msg);
	}
	return -1;
}

static void dti_on_signal(int sig)
{
	(void)sig;
	dti_stop = 1;
}

/* Damage notices printed per input; the rest are counted (a 512 MiB core
 * given to decode was 261,636 lines) */
#define DTI_DAMAGE_SHOWN_MAX	20

void dti_read_notice(const struct dti_notice *n, void *arg)
{
	struct dti_read_opts *o = arg;

	if (o->quiet)
		return;
	if (n->type == DTI_NOTICE_DAMAGE) {
		if (o->damage_shown < DTI_DAMAGE_SHOWN_MAX) {
			o->damage_shown++;
			dti_err("%s", n->message);	/* names file, offset and what */
		} else {
			o->damage_hidden++;
		}
		return;
	}
	/* lost records: libdti tells only those of the CPUs asked for */
	dti_warn("%s", n->message);
}

static ssize_t dti_out_write(void *cookie, const char *buf, size_t size)
{
	struct dti_out *out = cookie;
	size_t done = 0;
	ssize_t n;

	while (done < size) {
		n = write(out->fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			out->err = n < 0 ? errno : EIO;
			break;		/* a short count is stdio's error */
		}
		done += n;
	}
	return done;
}

/* Open @path (NULL: standard output) for the records.  NULL on error (printed). */
static FILE *dti_out_open(struct dti_out *out, const char *path)
{
	static const cookie_io_functions_t io = { .write = dti_out_write };
	FILE *f;

	out->err = 0;
	out->name = path ? path : "standard output";
	out->fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) :
		  STDOUT_FILENO;
	if (out->fd < 0) {
		dti_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	f = fopencookie(out, "w", io);
	/* dti_print() collects its output in large blocks: no second copy */
	if (!f || setvbuf(f, NULL, _IONBF, 0) != 0) {
		dti_err("%s: %s", out->name, strerror(errno));
		if (f)
			fclose(f);
		if (path)
			close(out->fd);
		return NULL;
	}
	return f;
}

/* Flush and close; DTI_EXIT_OK, or DTI_EXIT_FAIL saying why writing failed. */
static int dti_out_close(FILE *f, struct dti_out *out)
{
	if (fclose(f) != 0 && !out->err)
		out->err = EIO;
	if (out->fd >= 0 && out->fd != STDOUT_FILENO && close(out->fd) != 0 && !out->err)
		out->err = errno;
	if (out->err)
		return dti_err("writing %s: %s", out->name, strerror(out->err));
	return DTI_EXIT_OK;
}

/*
 * What source lines tell: a module without a file or DWARF, a file of
 * the wrong build passed over (warnings), a module whose files are all
 * other builds (an error: the exit status is 1 at the end).
 */
static void dti_lines_notice(const struct dti_notice *n, void *arg)
{
	struct dti_read_opts *o = arg;

	if (n->type == DTI_NOTICE_REFUSED) {
		o->refused++;
		dti_err("%s", n->message);
	} else if (!o->quiet) {
		dti_warn("%s", n->message);
	}
}

/* A resolver with the places given, into *@l.  DTI_EXIT_OK or _FAIL. */
static int dti_read_lines_make(struct dti_read_opts *o, struct dti_lines **l)
{
	unsigned int i;

	*l = dti_lines_new();
	if (!*l)
		return dti_err("%s", dti_errmsg());
	dti_lines_set_notice_handler(*l, dti_lines_notice, o);
	if (o->release && dti_lines_set_kernel(*l, o->release) < 0)
		return dti_err("--kernel-release: %s", dti_errmsg());
	for (i = 0; i < o->n_debuginfo; i++)
		if (dti_lines_add_search(*l, o->debuginfo[i]) < 0)
			return dti_err("%s", dti_errmsg());
	return DTI_EXIT_OK;
}

/* --lines: the resolver with the places given.  DTI_EXIT_OK or _FAIL. */
static int dti_read_lines_new(struct dti_read_opts *o)
{
	o->modules_given = o->modules != NULL;
	return dti_read_lines_make(o, &o->lines_l);
}

int dti_read_lines_other(struct dti_read_opts *o, const struct dti_module *mods, int n)
{
	dti_lines_free(o->lines_other);
	o->lines_other = NULL;
	o->lines_other_off = false;
	if (!o->lines_l || o->modules_given || (!mods && !n))
		return DTI_EXIT_OK;
	if (n < 0) {
		if (!o->quiet)
			dti_warn("callers not resolved to source lines: %s", dti_errmsg());
		o->lines_other_off = true;
		return DTI_EXIT_OK;
	}
	if (dti_read_lines_make(o, &o->lines_other) != DTI_EXIT_OK)
		return DTI_EXIT_FAIL;
	if (dti_lines_add_modules(o->lines_other, mods, n) < 0)
		return dti_err("%s", dti_errmsg());
	return DTI_EXIT_OK;
}

int dti_read_lines_table(struct dti_read_opts *o, const struct dti_module *mods, int n,
			 const char *why)
{
	struct dti_module *given = NULL;
	int ret = DTI_EXIT_OK;

	if (!o->lines_l || o->lines_done)
		return DTI_EXIT_OK;
	o->lines_done = true;
	if (o->modules) {
		/* --modules wins over the table of the source; it must read */
		n = dti_modules_load(o->modules, &given);
		if (n < 0)
			return dti_err("--modules: %s", dti_errmsg());
		mods = given;
		why = NULL;
	}
	if (n < 0) {
		if (!o->quiet)
			dti_warn("callers not resolved to source lines: %s",
				 why ? why : dti_errmsg());
	} else if (dti_lines_add_modules(o->lines_l, mods, n) < 0) {
		ret = dti_err("%s", dti_errmsg());
	} else {
		o->lines_on = true;
	}
	free(given);
	return ret;
}

int dti_read_lines_file(struct dti_read_opts *o, const char *path)
{
	struct dti_module *mods = NULL;
	int n, ret;

	if (!o->lines_l || o->lines_done)
		return DTI_EXIT_OK;
	n = o->modules ? 0 : dti_modules_load(path, &mods);
	ret = dti_read_lines_table(o, mods, n, NULL);
	free(mods);
	return ret;
}

/* --channel A,B (repeated: added): into o->channels.  0, or -1 (ENOMEM). */
static int dti_read_channels(struct dti_read_opts *o, char *list)
{
	char **names, *name, *save = NULL;

	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		names = realloc(o->channels, (o->n_channels + 1) * sizeof(*names));
		if (!names)
			return -1;
		o->channels = names;
		names[o->n_channels++] = name;
	}
	o->channel = o->n_channels ? o->channels[0] : NULL;
	return 0;
}

bool dti_read_selects(const struct dti_read_opts *o, const char *name)
{
	unsigned int i;

	for (i = 0; i < o->n_channels; i++)
		if (!strcmp(o->channels[i], name))
			return true;
	return !o->n_channels;
}

/*
 * Parse options and operands (@min_args..@max_args of them, 0: any), load
 * the symbols and open the output, before anything is read or reset.
 * Returns -1 to go on, or an exit code.
 */
int dti_read_parse(const char *cmd, int argc, char **argv, int min_args,
		   int max_args, struct dti_read_opts *o)
{
	bool is_read = !strcmp(cmd, "read"), is_dump = !strcmp(cmd, "dump");
	bool is_con = !strcmp(cmd, "console-log"), is_export = !strcmp(cmd, "export");
	bool priority = false, format = false, grep_case = false;
	const char *grep = NULL;
	char msg[512];
	int c, ret, i, stdin_args = 0;

	memset(o, 0, sizeof(*o));
	o->filter = dti_filter_new();
	if (!o->filter)
		return dti_err("%s", dti_errmsg());
	while ((c = dti_getopt(cmd, argc, argv,
			       is_read ? "hfF:o:c:p:sqd:S:U:g:" : is_dump ? "hF:o:c:p:qlvd:S:U:g:" :
			       is_con ? "hF:o:c:p:qd:S:U:g:" : "hF:o:c:p:sqd:S:U:g:",
			       is_read ? dti_read_opts : is_dump ? dti_dump_opts :
			       is_con ? dti_console_opts : dti_decode_opts, &ret)) != -1) {
		switch (c) {
		case 'l':
			o->list = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_CHANNEL:
			if (dti_read_channels(o, optarg) < 0)
				return dti_err("out of memory");
			break;
		case OPT_OUT:
			o->out_dir = optarg;
			break;
		case OPT_EXCERPT:
			o->excerpt = optarg;
			break;
		case DTI_OPT_EXIT:
			return ret;
		case 'f':
			o->follow = true;
			break;
		case OPT_NORESET:
			o->no_reset = true;
			break;
		case OPT_PREVIOUS:
			o->previous = true;
			break;
		case 'F':
			/* export.c's, not dti_print()'s */
			o->ctf = !strcmp(optarg, "ctf");
			o->perfetto = !strcmp(optarg, "perfetto");
			o->format = o->ctf || o->perfetto ? DTI_FMT_RAW : dti_format_parse(optarg);
			if (o->format < 0)
				return dti_usage(cmd, true, dti_errmsg());
			format = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'c':
			if (dti_filter_cpus(o->filter, optarg) < 0) {
				snprintf(msg, sizeof(msg), "-c/--cpu: %s", dti_errmsg());
				return dti_usage(cmd, true, msg);
			}
			o->filtered = true;
			break;
		case 'S':
		case 'U':
			ret = dti_parse_time_opt(cmd, c == 'S', optarg, o->filter);
			if (ret >= 0)
				return ret;
			o->filtered = true;
			break;
		case 'g':
			grep = optarg;
			break;
		case OPT_CASE:
			grep_case = true;
			break;
		case OPT_REPORT:
			o->report = true;
			break;
		case OPT_JOURNAL:
			o->journal = true;
			break;
		case OPT_FILTER:
			if (dti_filter_expr(o->filter, optarg) < 0) {
				snprintf(msg, sizeof(msg), "--filter: %s", dti_errmsg());
				return dti_usage(cmd, true, msg);
			}
			o->filtered = true;
			break;
		case 's':
			o->symbols = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'p':
			if (priority)
				return dti_usage(cmd, true, "-p/--priority given twice");
			priority = true;
			o->filtered = true;
			if (dti_filter_priority(o->filter, optarg) < 0) {
				snprintf(msg, sizeof(msg), "-p/--priority takes LEVEL or "
					 "LEVEL..LEVEL, not '%s' (0..7 or emerg, alert, crit, "
					 "err, warning, notice, info, debug)", optarg);
				return dti_usage(cmd, true, msg);
			}
			break;
		case OPT_MIN:
		case OPT_MAX:
			/* numbers grow less severe: "min" kept the less severe ones */
			return dti_usage(cmd, true, "--min-level and --max-level are gone: "
					 "-p/--priority LEVEL keeps LEVEL and more severe, "
					 "-p LEVEL1..LEVEL2 the levels between");
		case OPT_KALLSYMS:
			o->kallsyms = optarg;
			o->symbols = true;
			break;
		case OPT_STRICT:
			o->strict = true;
			break;
		case OPT_LINES:
			o->lines = true;
			break;
		case 'd':
			o->debuginfo = realloc(o->debuginfo,
					       (o->n_debuginfo + 1) * sizeof(*o->debuginfo));
			if (!o->debuginfo)
				return dti_err("out of memory");
			o->debuginfo[o->n_debuginfo++] = optarg;
			o->lines = true;
			break;
		case OPT_RELEASE:
			o->release = optarg;
			break;
		case OPT_MODULES:
			o->modules = optarg;
			o->lines = true;
			break;
		}
	}
	if (!strcmp(cmd, "report"))
		o->report = true;
	ret = dti_read_parse_export(cmd, format, o);
	if (ret >= 0)
		return ret;
	if (o->report && (o->follow || format))
		return dti_usage(cmd, true, "a report is text, of the records there are: "
				 "no --follow, no -F");
	if (o->journal && (format || o->output || o->report))
		return dti_usage(cmd, true, "--journal sends the records to the journal: "
				 "no -F, -o or --report");
	if (grep) {
		if (dti_filter_grep(o->filter, grep, grep_case ? DTI_GREP_CASE : 0) < 0) {
			snprintf(msg, sizeof(msg), "-g/--grep: %s", dti_errmsg());
			return dti_usage(cmd, true, msg);
		}
		o->filtered = true;
	} else if (grep_case) {
		return dti_usage(cmd, true, "--case-sensitive is for -g/--grep");
	}
	if (argc - optind < min_args + is_export)
		return dti_usage(cmd, true, is_read ? "missing CHANNEL" : is_export ?
				 (o->perfetto ? "missing FILE or input" : "missing DIR or input") :
				 is_dump ? "missing VMCORE" : is_con ? "missing FILE" :
				 "missing DIR or FILE");
	if (o->previous && (o->follow || o->no_reset))
		return dti_usage(cmd, true, "--previous reads records that no longer change: no --follow or --no-reset");
	if (o->previous && o->symbols && !o->kallsyms)
		return dti_usage(cmd, true, "--previous: the previous boot's records: "
				 DTI_SYMBOLS_THIS_BOOT);
	if (o->n_channels > 1 && (o->list || is_con))
		return dti_usage(cmd, true, is_con ? "--channel: one channel of a console log" :
				 "--list: one --channel, or none for all");
	if (o->list + !!o->out_dir + !!o->excerpt > 1)
		return dti_usage(cmd, true, "--list, --out and --excerpt exclude each other");
	if (is_export) {
		o->output = argv[optind++];	/* DIR, then what decode reads */
		if (o->perfetto && !strcmp(o->output, "-"))
			o->output = NULL;	/* a trace on standard output */
	}
	if (max_args && argc - optind > max_args)
		return dti_usage(cmd, true, "too many arguments");
	for (i = optind; !is_read && !is_dump && !is_con && i < argc; i++)
		stdin_args += !strcmp(argv[i], "-");
	if (stdin_args > 1)
		return dti_usage(cmd, true, "'-' (standard input) can be given once");
	if (o->symbols) {
		o->syms = dti_ksyms_load(o->kallsyms);
		if (!o->syms && o->kallsyms)
			return dti_err("%s", dti_errmsg());
		if (!o->syms)
			dti_warn("callers printed as addresses: %s", dti_errmsg());
	}
	if (o->release && !o->lines)
		return dti_usage(cmd, true, "--kernel-release is for --lines");
	if (format && o->format == DTI_FMT_TEXT && (o->symbols || o->lines))
		return dti_usage(cmd, true, "-F text prints no callers: --symbols, --kallsyms, "
				 "--lines, -d and --modules are for -F ts (their default), hex "
				 "or json");
	if (o->lines && dti_read_lines_new(o) != DTI_EXIT_OK) {
		dti_ksyms_free(o->syms);
		return DTI_EXIT_FAIL;
	}
	if (o->journal) {
		o->format = DTI_FMT_EXPORT;
		format = true;	/* not the terminal's, nor --symbols' */
	}
	o->f = o->journal ? dti_journal_open(&o->out) :
		 dti_out_open(&o->out, o->ctf ? NULL : o->output);
	if (!o->f) {
		dti_ksyms_free(o->syms);
		dti_lines_free(o->lines_l);
		dti_filter_free(o->filter);
		free(o->debuginfo);
		return DTI_EXIT_FAIL;
	}
	/*
	 * On a terminal, as trace-cmd report and perf script: time and CPU;
	 * and callers where they were asked for, which text has none of.
	 */
	if (!format && (isatty(o->out.fd) || o->symbols || o->lines))
		o->format = DTI_FMT_TS;
	if (!o->filtered) {	/* none: records go the fastest way */
		dti_filter_free(o->filter);
		o->filter = NULL;
	}
	return -1;
}

/*
 * --follow --lines: the live module table read again, so that the
 * callers of modules loaded (or unloaded and loaded again) since print
 * with their lines.  What it cannot read changes nothing.
 */
static void dti_read_lines_again(struct dti_read_opts *o)
{
	struct dti_module *mods = NULL;
	int n;

	if (!o->lines_on || o->modules_given || o->previous)
		return;
	n = dti_modules_read(NULL, 0, &mods);
	if (n >= 0 && dti_lines_add_modules(o->lines_l, mods, n) < 0 && !o->quiet)
		dti_warn("the module table read again: %s", dti_errmsg());
	free(mods);
}

static void dti_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Records read per dti_print_records() call: between calls an interrupt
 * (dti_stop) is seen, as it was after every record.
 */
#define DTI_READ_BATCH	4096

/* Print records of @r until the end (or interruption with --follow). */
static int dti_print_all(struct dti_reader *r, struct dti_read_opts *o)
{
	FILE *f = o->f;
	int ret;

	while (!dti_stop) {
		ret = dti_print_records(r, f, o->format, DTI_READ_BATCH);
		if (ret < 0)	/* a write error: dti_out_close() says why */
			return ferror(f) ? DTI_EXIT_OK : dti_err("%s", dti_errmsg());
		if (ret > 0)
			continue;
		if (!o->follow || fflush(f) == EOF)
			break;
		dti_read_lines_again(o);
		dti_sleep_ms(100);
	}
	return DTI_EXIT_OK;
}

/*
 * A live channel's caller that is a BPF program (a kfunc's caller, in
 * the program's JIT image, which no module table holds), named as
 * kallsyms names it, bpf_prog_<tag>_<name>, from this boot's
 * /proc/kallsyms, read at the first caller the lines do not resolve.
 * Other callers print as they did.
 */
static int dti_read_kallsyms(uint64_t addr, char *buf, size_t size, void *arg)
{
	struct dti_read_opts *o = arg;

	if (!o->lazy_syms && !o->lazy_failed) {
		o->lazy_syms = dti_ksyms_load(NULL);
		o->lazy_failed = !o->lazy_syms;
	}
	if (!o->lazy_syms || dti_ksyms_format(o->lazy_syms, addr, buf, size) ||
	    strncmp(buf, "bpf_prog_", 9))
		return -1;
	return 0;
}

int dti_read_print(struct dti_reader *r, struct dti_read_opts *o)
{
	bool damage;
	int ret;

	if (!r)
		return dti_err("%s", dti_errmsg());
	dti_set_notice_handler(r, dti_read_notice, o);
	if (dti_set_filter(r, o->filter) < 0 ||
	    (o->chan_name && dti_set_channel_name(r, o->chan_name) < 0)) {
		dti_err("%s", dti_errmsg());
		dti_close(r);
		return DTI_EXIT_FAIL;
	}
	dti_set_ksyms(r, o->syms);
	if (o->live && !o->syms)
		dti_set_symbolizer(r, dti_read_kallsyms, o);
	if (o->lines_other)
		dti_set_lines(r, o->lines_other);
	else if (o->lines_on && !o->lines_other_off)
		dti_set_lines(r, o->lines_l);
	o->damage_shown = 0;
	o->damage_hidden = 0;
	ret = o->report ? dti_report_run(r, o) : o->ctf ? dti_export_run(r, o) :
	      o->perfetto ? dti_export_perfetto(r, o) : dti_print_all(r, o);
	damage = dti_damage_count(r) > 0;
	dti_close(r);	/* writes what dti_print() still holds */
	if (o->damage_hidden)
		dti_err("%lu more damaged places not shown (the first %d are; --strict stops at the first)",
			o->damage_hidden, DTI_DAMAGE_SHOWN_MAX);
	return ret == DTI_EXIT_OK && damage ? DTI_EXIT_DAMAGE : ret;
}

int dti_exit_worst(int a, int b)
{
	return a == DTI_EXIT_FAIL || b == DTI_EXIT_FAIL ? DTI_EXIT_FAIL :
	       a == DTI_EXIT_DAMAGE || b == DTI_EXIT_DAMAGE ? DTI_EXIT_DAMAGE :
	       DTI_EXIT_OK;
}

void dti_print_channel_head(struct dti_read_opts *o, const char *name, int shown)
{
	/* JSON and export records carry their channel: all is records */
	if (o->channel || o->format >= DTI_FMT_JSON)
		return;
	fprintf(o->f, "%s==> %s <==\n", shown ? "\n" : "", name);
}

/*
 * The exit code of @ret (of dti_read_print(), the worst of several) and
 * the output's close: a write error fails whatever was printed.
 */
int dti_read_finish(struct dti_read_opts *o, int ret)
{
	int ret_out;

	/* a Perfetto trace's last packets (a write error: the close says why) */
	if (o->pf && dti_perfetto_close(o->pf) < 0)
		ret = DTI_EXIT_FAIL;
	ret_out = dti_out_close(o->f, &o->out);

	if (ret != DTI_EXIT_FAIL && ret_out != DTI_EXIT_OK)
		ret = ret_out;
	/* a module's files all of another build: told, its callers left */
	if (o->refused)
		ret = DTI_EXIT_FAIL;
	dti_ksyms_free(o->syms);
	dti_lines_free(o->lines_other);
	dti_lines_free(o->lines_l);
	dti_ksyms_free(o->lazy_syms);
	dti_filter_free(o->filter);
	while (o->n_report_stats)
		free(o->report_stats[--o->n_report_stats]);
	free(o->report_stats);
	free(o->channels);
	free(o->debuginfo);
	return ret;
}

/* Print what @r (NULL: opening failed) returns; the exit code.  Frees all. */
static int dti_read_run(struct dti_reader *r, struct dti_read_opts *o)
{
	return dti_read_finish(o, dti_read_print(r, o));
}

int dti_read_merge_add(struct dti_reader *m, struct dti_reader *r, const char *name)
{
	if (!r)
		return dti_err("%s", dti_errmsg());
	if ((name && dti_set_channel_name(r, name) < 0) || dti_merge_add(m, r, name) < 0) {
		dti_err("%s", dti_errmsg());
		dti_close(r);
		return DTI_EXIT_FAIL;
	}
	return DTI_EXIT_OK;
}

unsigned int dti_read_nr_readers(struct dti_reader *r, const struct dti_read_opts *o)
{
	unsigned int n = 1;

	while (o->merged && dti_merge_reader(r, n))
		n++;
	return n;
}

int dti_read_merge_new(const char *cmd, struct dti_read_opts *o, struct dti_reader **m)
{
	if (o->format == DTI_FMT_RAW && !o->ctf && !o->perfetto)
		return dti_usage(cmd, true, "-F raw writes a channel's records as stored: "
				 "one channel at a time");
	*m = dti_merge_new();
	if (!*m)
		return dti_err("%s", dti_errmsg());
	o->merged = true;
	o->chan_name = NULL;	/* each child names its own */
	return -1;
}

int cmd_read(int argc, char **argv)
{
	struct dti_module *mods = NULL;
	struct dti_reader *r = NULL, *m = NULL;
	struct dti_read_opts o;
	struct sigaction sa;
	unsigned int flags;
	int i, n, ret = dti_read_parse("read", argc, argv, 1, 0, &o);

	if (ret >= 0)
		return ret;
	flags = o.strict ? DTI_OPEN_STRICT : 0;
	if (!o.no_reset)
		flags |= DTI_OPEN_RESET;
	if (o.follow)
		flags |= DTI_OPEN_FOLLOW;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dti_on_signal;	/* no SA_RESTART: wake the sleep */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* several channels: one timeline of them all */
	if (argc - optind > 1 && (ret = dti_read_merge_new("read", &o, &m)) >= 0)
		return dti_read_finish(&o, ret);
	o.live = !o.previous;
	if (!o.previous) {
		o.report_live = argv + optind;
		o.n_report_live = argc - optind;
	}
	for (i = optind; i < argc; i++) {
		r = o.previous ? dti_open_previous(argv[i], flags) :
				 dti_open_channel(argv[i], flags);
		if (!m) {
			o.chan_name = argv[i];
			break;
		}
		ret = dti_read_merge_add(m, r, argv[i]);
		if (ret != DTI_EXIT_OK) {
			dti_close(m);
			return dti_read_finish(&o, ret);
		}
		r = m;
	}
	/* --lines: the machine's table (with --previous, the first channel's) */
	if (r && o.lines_l) {
		n = o.modules ? 0 : dti_modules_read(argv[optind],
							 o.previous ? DTI_MODULES_PREVIOUS : 0, &mods);
		ret = dti_read_lines_table(&o, mods, n, NULL);
		free(mods);
		if (ret != DTI_EXIT_OK) {
			dti_close(r);
			return dti_read_finish(&o, ret);
		}
	}
	return dti_read_run(r, &o);
}

/* Files that are no DTI records but that dti dump reads, by what they begin with */
static const struct {
	const char *magic;
	const char *what;
} dti_dump_files[] = {
	{ ELFMAG, "an ELF file (as memory dumps are)" },
	{ "KDUMP   ", "a kdump-compressed memory dump" },
	{ "DISKDUMP", "a diskdump memory dump" },
	{ MDF_SIGNATURE, "a memory dump in makedumpfile's flattened format" },
};

/* @path is a directory (not '-') */
static bool dti_is_dir(const char *path)
{
	struct stat st;

	return strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* decode's operands are several directories: snapshots merged */
static bool dti_decode_dirs(char **args, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!dti_is_dir(args[i]))
			return false;
	return n > 1;
}

/*
 * decode's operands, recognised before they are parsed: a directory among
 * files, or a memory dump, which dti dump reads.  A file that cannot be
 * read is left to the opening, which says why.
 */
static int dti_decode_check(char **args, unsigned int n)
{
	char head[16];
	struct stat st;
	unsigned int i, m;
	ssize_t len;
	int fd;

	for (i = 0; i < n; i++) {
		if (!strcmp(args[i], "-") || stat(args[i], &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && n > 1 && !dti_decode_dirs(args, n))
			return dti_err("%s: a directory among files: dti decode reads snapshot directories, or one channel's files",
				       args[i]);
		if (!S_ISREG(st.st_mode))
			continue;
		fd = open(args[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = pread(fd, head, sizeof(head), 0);
		close(fd);
		for (m = 0; m < sizeof(dti_dump_files) / sizeof(dti_dump_files[0]); m++) {
			if (len >= (ssize_t)strlen(dti_dump_files[m].magic) &&
			    !memcmp(head, dti_dump_files[m].magic, strlen(dti_dump_files[m].magic)))
				return dti_err("%s: %s, not DTI records: 'dti dump %s' reads the channels of a memory dump",
					       args[i], dti_dump_files[m].what, args[i]);
		}
	}
	return DTI_EXIT_OK;
}

/* Open the operands of decode: one directory, or files with '-' for stdin. */
/* A whole file as a NUL-terminated string to free(), or NULL */
char *dti_read_text_file(const char *path)
{
	char *text = NULL;
	size_t size = 0, n;
	FILE *f = fopen(path, "r");
	char buf[4096];

	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		char *t = realloc(text, size + n + 1);

		if (!t) {
			free(text);
			fclose(f);
			return NULL;
		}
		text = t;
		memcpy(text + size, buf, n);
		size += n;
		text[size] = 0;
	}
	fclose(f);
	return text ? text : strdup("");
}

/* --report: one more stats file, @path (taken) */
static void dti_report_stats_add(struct dti_read_opts *o, char *path)
{
	char **list = path ? realloc(o->report_stats,
				     (o->n_report_stats + 1) * sizeof(*list)) : NULL;

	if (!list) {
		free(path);
		return;
	}
	o->report_stats = list;
	list[o->n_report_stats++] = path;
}

/*
 * --report: the snapshots' stats among the operands (DIR/stats of each
 * DIR, or a file called stats)
 */
static void dti_decode_report_stats(struct dti_read_opts *o, char **args, unsigned int n)
{
	const char *base;
	char *path;
	unsigned int i;

	for (i = 0; i < n && dti_is_dir(args[i]); i++) {
		if (asprintf(&path, "%s/stats", args[i]) < 0)
			continue;
		if (access(path, R_OK))
			free(path);
		else
			dti_report_stats_add(o, path);
	}
	for (i = 0; i < n && !o->n_report_stats; i++) {
		base = strrchr(args[i], '/');
		if (!strcmp(base ? base + 1 : args[i], "stats"))
			dti_report_stats_add(o, strdup(args[i]));
	}
}

static struct dti_reader *dti_decode_open(char **args, unsigned int n,
					  unsigned int flags)
{
	unsigned int i;

	if (n == 1 && dti_is_dir(args[0]))
		return dti_open_dir(args[0], flags);
	for (i = 0; i < n; i++)
		if (!strcmp(args[i], "-"))
			args[i] = (char *)"/dev/stdin";
	return dti_open_files((const char *const *)args, n, flags);
}

/*
 * The kernel release a snapshot names in @path (DTI_SNAP_RELEASE), for
 * the places searched unless --kernel-release gave one.  A snapshot
 * older than the file has none, and the running kernel's is used; a file
 * that does not hold a release is told and passed over.
 */
static void dti_decode_release(struct dti_read_opts *o, const char *path)
{
	char line[256];
	FILE *f;

	if (o->release)
		return;
	f = fopen(path, "r");
	if (!f) {
		if (errno != ENOENT)
			dti_warn("%s: %s", path, strerror(errno));
		return;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (dti_lines_set_kernel(o->lines_l, line) < 0)
		dti_warn("%s: not used (the running kernel's release is): %s",
			 path, dti_errmsg());
}

/* @path's last component is @name */
static bool dti_named(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, name);
}

/*
 * --lines: the module table of what decode reads: DIR/modules, or the
 * file "modules" of a snapshot among the files (dti_open_files() leaves
 * it out of the records), unless --modules names one; and the kernel
 * release in DIR/release or a file "release" among them.
 */
static int dti_decode_lines(struct dti_read_opts *o, char **args, unsigned int n)
{
	char path[PATH_MAX];
	unsigned int i;

	if (!o->lines_l)
		return DTI_EXIT_OK;
	/* of several directories, the first one's */
	if (dti_is_dir(args[0])) {
		snprintf(path, sizeof(path), "%s/" DTI_SNAP_RELEASE, args[0]);
		dti_decode_release(o, path);
		snprintf(path, sizeof(path), "%s/" DTI_SNAP_MODULES, args[0]);
		return dti_read_lines_file(o, path);
	}
	for (i = 0; i < n; i++)
		if (dti_named(args[i], DTI_SNAP_RELEASE))
			dti_decode_release(o, args[i]);
	for (i = 0; i < n; i++)
		if (dti_named(args[i], DTI_SNAP_MODULES))
			return dti_read_lines_file(o, args[i]);
	return dti_read_lines_table(o, NULL, -1,
				    "no module table among the files (a snapshot's DIR/modules, or --modules FILE)");
}

/* The boot ID in file @path, blanks off, into @id (@size); 0, or -1 (errno) */
static int dti_boot_id_read(const char *path, char *id, size_t size)
{
	FILE *f = fopen(path, "re");
	int err;

	if (!f)
		return -1;
	if (!fgets(id, size, f))
		id[0] = '\0';
	err = ferror(f) ? EIO : 0;
	fclose(f);
	id[strcspn(id, " \t\n")] = '\0';
	errno = err;
	return err ? -1 : 0;
}

/*
 * Whether @path (a boot_id file of @what; NULL: none) names this boot,
 * @this.  DTI_EXIT_OK, or the usage error that says why not.
 */
static int dti_boot_is(const char *cmd, const char *what, const char *path,
		       const char *this)
{
	char id[64], msg[PATH_MAX + 512];

	if (!path)
		snprintf(msg, sizeof(msg), "%s: records of no known boot (no file "
			 DTI_SNAP_BOOT_ID " among them)", what);
	else if (dti_boot_id_read(path, id, sizeof(id)) < 0)
		snprintf(msg, sizeof(msg), "%s: records of no known boot (%s: %s; 'dti snapshot' writes it, not an older dti, 'dti dump --out' or save-previous)",
			 what, path, strerror(errno));
	else if (strcmp(id, this))
		snprintf(msg, sizeof(msg), "%s: records of boot %s (%s), not of this one, %s", what,
			 id, path, this);
	else
		return DTI_EXIT_OK;
	snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), ": " DTI_SYMBOLS_THIS_BOOT);
	return dti_usage(cmd, true, msg);
}

/*
 * -s/--symbols (no --kallsyms) for what decode reads: /proc/kallsyms
 * holds this boot's addresses, so only records known to be of this boot
 * (a snapshot's boot_id, DTI_SNAP_BOOT_ID, that is this boot's, of each
 * DIR, or a file boot_id among the FILEs) are resolved through it; the
 * others are refused, as dump and console-log refuse -s.  DTI_EXIT_OK,
 * or an exit code.
 */
static int dti_decode_this_boot(const char *cmd, struct dti_read_opts *o, char **args,
				unsigned int n)
{
	char this[64], path[PATH_MAX + 16];
	unsigned int i;
	int ret = DTI_EXIT_OK;

	if (!o->symbols || o->kallsyms)
		return DTI_EXIT_OK;
	if (dti_boot_id_read(DTI_BOOT_ID, this, sizeof(this)) < 0 || !this[0])
		return dti_err("-s/--symbols: this boot's ID: %s: %s", DTI_BOOT_ID,
			       strerror(errno ? errno : EINVAL));
	for (i = 0; ret == DTI_EXIT_OK && i < n && dti_is_dir(args[i]); i++) {
		snprintf(path, sizeof(path), "%s/" DTI_SNAP_BOOT_ID, args[i]);
		ret = dti_boot_is(cmd, args[i], path, this);
	}
	if (i)
		return ret;
	for (i = 0; i < n; i++)
		if (dti_named(args[i], DTI_SNAP_BOOT_ID))
			return dti_boot_is(cmd, "the files", args[i], this);
	return dti_boot_is(cmd, "the files", NULL, this);
}

/* Snapshot directories @dirs (@n > 1) merged into one timeline */
static int dti_decode_merged(const char *cmd, char **dirs, unsigned int n,
			     struct dti_read_opts *o)
{
	struct dti_reader *m;
	unsigned int i;
	int ret = dti_read_merge_new(cmd, o, &m);

	for (i = 0; ret < 0 && i < n; i++) {
		if (dti_read_merge_add(m, dti_open_dir(dirs[i], o->strict ? DTI_OPEN_STRICT : 0),
				       NULL) != DTI_EXIT_OK) {
			dti_close(m);
			ret = DTI_EXIT_FAIL;
		}
	}
	return ret >= 0 ? dti_read_finish(o, ret) : dti_read_run(m, o);
}

int dti_decode_cmd(const char *cmd, int argc, char **argv)
{
	struct dti_read_opts o;
	int ret = dti_read_parse(cmd, argc, argv, 1, 0, &o);

	if (ret >= 0)
		return ret;
	ret = dti_decode_check(argv + optind, argc - optind);
	if (ret == DTI_EXIT_OK)
		ret = dti_decode_this_boot(cmd, &o, argv + optind, argc - optind);
	if (ret == DTI_EXIT_OK)
		ret = dti_decode_lines(&o, argv + optind, argc - optind);
	if (ret != DTI_EXIT_OK)
		return dti_read_finish(&o, ret);
	if (o.report)
		dti_decode_report_stats(&o, argv + optind, argc - optind);
	if (dti_decode_dirs(argv + optind, argc - optind))
		return dti_decode_merged(cmd, argv + optind, argc - optind, &o);
	return dti_read_run(dti_decode_open(argv + optind, argc - optind,
					    o.strict ? DTI_OPEN_STRICT : 0), &o);
}

int cmd_decode(int argc, char **argv)
{
	return dti_decode_cmd("decode", argc, argv);
}

int cmd_report(int argc, char **argv)
{
	return dti_decode_cmd("report", argc, argv);
}
