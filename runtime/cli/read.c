// SPDX-License-Identifier: GPL-2.0
/*
 * dti read, dti decode: print records merged by time.
 *
 * read writes 1 to reset_consumed and then reads the trace files to their
 * end, so it prints every record the buffers hold (as the kernel's merged
 * view does) and leaves them consumed.  --follow then keeps reading the
 * trace files, polling every 100 ms, until interrupted.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dti-cli.h"

const char usage_read[] =
	"usage: dti read [options] CHANNEL\n"
	"\nPrint every record CHANNEL holds, all CPUs merged by time.  Consumes the\n"
	"trace files (after making them return everything again).\n"
	"\n"
	"  -f, --follow          keep printing new records until interrupted\n"
	"  -F, --format FMT      text (default: as the kernel's merged file), ts\n"
	"                        (as merged-ts), hex, json or raw\n"
	"  -c, --cpu N           only records of CPU N\n"
	"      --min-level L     only records of level L or higher (0..7 or a name)\n"
	"      --max-level L     only records of level L or lower\n"
	"  -s, --symbols         resolve callers through /proc/kallsyms\n"
	"      --kallsyms FILE   resolve callers through FILE\n"
	"      --no-reset        only the records not read before\n"
	"  -q, --quiet           do not report lost records on stderr\n";
const char usage_decode[] =
	"usage: dti decode [options] DIR | FILE...\n"
	"\nPrint the records of per-CPU files copied by 'dti snapshot' (DIR holding\n"
	"trace0..N) or given one file per CPU, merged by time.  Copies of the\n"
	"whole ring (mmap, memory dumps) are read as well.\n"
	"\n"
	"  -F, --format FMT      text, ts, hex, json or raw\n"
	"  -c, --cpu N           only records of CPU N\n"
	"      --min-level L     only records of level L or higher\n"
	"      --max-level L     only records of level L or lower\n"
	"  -s, --symbols         resolve callers through /proc/kallsyms\n"
	"      --kallsyms FILE   resolve callers through FILE (from the traced machine)\n"
	"  -q, --quiet           do not report lost records on stderr\n";

enum { OPT_MIN = 256, OPT_MAX, OPT_KALLSYMS, OPT_NORESET };

struct dti_read_opts {
	bool follow, quiet, no_reset, symbols;
	int format;
	long cpu;		/* -1: all */
	int min_level, max_level;
	const char *kallsyms;
};

static volatile sig_atomic_t dti_stop;

static void dti_on_signal(int sig)
{
	(void)sig;
	dti_stop = 1;
}

static void dti_notice(const struct dti_notice *n, void *arg)
{
	const struct dti_read_opts *o = arg;

	if (o->quiet || (o->cpu >= 0 && n->cpu != (unsigned long)o->cpu))
		return;
	dti_warn("%s", n->message);
}

/* Parse options; returns -1 to go on, or an exit code. */
static int dti_read_parse(const char *cmd, int argc, char **argv,
			  struct dti_read_opts *o)
{
	static const struct option opts[] = {
		{ "help",      no_argument,       NULL, 'h' },
		{ "follow",    no_argument,       NULL, 'f' },
		{ "format",    required_argument, NULL, 'F' },
		{ "cpu",       required_argument, NULL, 'c' },
		{ "symbols",   no_argument,       NULL, 's' },
		{ "quiet",     no_argument,       NULL, 'q' },
		{ "min-level", required_argument, NULL, OPT_MIN },
		{ "max-level", required_argument, NULL, OPT_MAX },
		{ "kallsyms",  required_argument, NULL, OPT_KALLSYMS },
		{ "no-reset",  no_argument,       NULL, OPT_NORESET },
		{ NULL, 0, NULL, 0 },
	};
	bool is_read = !strcmp(cmd, "read");
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	o->min_level = 0;
	o->max_level = 7;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, is_read ? "hfF:c:sq" : "hF:c:sq",
				opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			return dti_usage(cmd, false, NULL);
		case 'f':
			o->follow = true;
			break;
		case 'F':
			o->format = dti_format_parse(optarg);
			if (o->format < 0)
				return dti_usage(cmd, true, dti_errmsg());
			break;
		case 'c':
			if (!dti_parse_uint(optarg, &v) || v > 65535)
				return dti_usage(cmd, true, "--cpu needs a CPU number");
			o->cpu = (long)v;
			break;
		case 's':
			o->symbols = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_MIN:
		case OPT_MAX:
			if (dti_level_parse(optarg, c == OPT_MIN ? &o->min_level :
					    &o->max_level) < 0 ||
			    (c == OPT_MIN ? o->min_level : o->max_level) < 0)
				return dti_usage(cmd, true, "levels are 0..7 or emerg..debug");
			break;
		case OPT_KALLSYMS:
			o->kallsyms = optarg;
			o->symbols = true;
			break;
		case OPT_NORESET:
			if (!is_read)
				return dti_usage(cmd, true, "unknown option '--no-reset'");
			o->no_reset = true;
			break;
		default:
			return dti_usage(cmd, true, "unknown option or missing argument");
		}
	}
	return -1;
}

static void dti_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Print records of @r until the end (or interruption with --follow). */
static int dti_print_all(struct dti_reader *r, struct dti_read_opts *o)
{
	struct dti_ksyms *syms = NULL;
	struct dti_rec rec;
	int ret, status = DTI_EXIT_OK;

	dti_set_notice_handler(r, dti_notice, o);
	if (o->symbols) {
		syms = dti_ksyms_load(o->kallsyms);
		if (!syms)
			dti_warn("callers printed as addresses: %s", dti_errmsg());
		dti_set_ksyms(r, syms);
	}
	while (!dti_stop) {
		ret = dti_next(r, &rec);
		if (ret < 0) {
			status = dti_err("%s", dti_errmsg());
			break;
		}
		if (ret == 0) {
			if (!o->follow)
				break;
			if (fflush(stdout) == EOF) {
				status = dti_err("write error: %s", strerror(errno));
				break;
			}
			dti_sleep_ms(100);
			continue;
		}
		if ((o->cpu >= 0 && rec.cpu != (unsigned long)o->cpu) ||
		    rec.level < o->min_level || rec.level > o->max_level)
			continue;
		if (dti_print(r, stdout, &rec, o->format) < 0) {
			status = dti_err("%s", dti_errmsg());
			break;
		}
	}
	if (fflush(stdout) == EOF && status == DTI_EXIT_OK)
		status = dti_err("write error: %s", strerror(errno));
	dti_ksyms_free(syms);
	return status;
}

int cmd_read(int argc, char **argv)
{
	struct dti_read_opts o;
	struct sigaction sa;
	struct dti_reader *r;
	unsigned int flags = 0;
	int ret = dti_read_parse("read", argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (argc - optind != 1)
		return dti_usage("read", true, argc - optind < 1 ?
				 "missing CHANNEL" : "too many arguments");
	if (!o.no_reset)
		flags |= DTI_OPEN_RESET;
	if (o.follow)
		flags |= DTI_OPEN_FOLLOW;
	r = dti_open_channel(argv[optind], flags);
	if (!r)
		return dti_err("%s", dti_errmsg());
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dti_on_signal;	/* no SA_RESTART: wake the sleep */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = dti_print_all(r, &o);
	dti_close(r);
	return ret;
}

int cmd_decode(int argc, char **argv)
{
	struct dti_read_opts o;
	struct dti_reader *r;
	struct stat st;
	int ret = dti_read_parse("decode", argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (argc - optind < 1)
		return dti_usage("decode", true, "missing DIR or FILE");
	if (argc - optind == 1 && stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode))
		r = dti_open_dir(argv[optind], 0);
	else
		r = dti_open_files((const char *const *)argv + optind,
				   argc - optind, 0);
	if (!r)
		return dti_err("%s", dti_errmsg());
	ret = dti_print_all(r, &o);
	dti_close(r);
	return ret;
}
