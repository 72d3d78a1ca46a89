// SPDX-License-Identifier: GPL-2.0
/*
 * dti - read and control DTI channels.  Subcommands in the style of git
 * and trace-cmd; each lives in the file of its family:
 *   ctl.c       list, level, reset, stats
 *   read.c      read, decode
 *   report.c    report (and --report)
 *   export.c    export (and -F ctf, -F perfetto), through ctf.c, perfetto.c
 *   snapshot.c  snapshot
 *   dump.c      dump
 *   console.c   console-log
 *   write.c     write
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dti-cli.h"

#ifndef DTI_VERSION
#define DTI_VERSION	"0.1"	/* the Makefile passes VERSION */
#endif

const struct dti_cmd dti_cmds[] = {
	{ "list",     cmd_list,     usage_list,     "list channels with level, size and counters" },
	{ "level",    cmd_level,    usage_level,    "show or set a channel's level" },
	{ "read",     cmd_read,     usage_read,     "print a channel's records merged by time" },
	{ "write",    cmd_write,    usage_write,    "add text records to a channel (user-space markers)" },
	{ "snapshot", cmd_snapshot, usage_snapshot, "stop a channel, copy its per-CPU files, restore it" },
	{ "decode",   cmd_decode,   usage_decode,   "print records from copied per-CPU files" },
	{ "report",   cmd_report,   usage_report,   "counts, rates and lost records of copied per-CPU files" },
	{ "export",   cmd_export,   usage_export,   "write copied per-CPU files as a CTF or Perfetto trace" },
	{ "dump",     cmd_dump,     usage_dump,     "print or save the channels of a kernel memory dump" },
	{ "console-log", cmd_console_log, usage_console_log,
	  "print the records a panic put on the console, from a saved log" },
	{ "reset",    cmd_reset,    usage_reset,    "make the trace files return every record again" },
	{ "stats",    cmd_stats,    usage_stats,    "print a channel's per-CPU counters" },
	{ "save-previous", cmd_save_previous, usage_save_previous,
	  "save the previous boot's persistent channels (at boot)" },
	{ "save-kdump", cmd_save_kdump, usage_save_kdump,
	  "save a DTI excerpt beside each dump kdump-tools saved (at boot)" },
	{ NULL, NULL, NULL, NULL },
};

static const char dti_main_usage[] =
	"usage: dti [--debugfs DIR] COMMAND [ARGS]\n"
	"       dti help COMMAND | dti COMMAND --help\n";

int dti_err(const char *fmt, ...)
{
	va_list ap;

	fflush(NULL);		/* keep the order of output and messages */
	fputs("dti: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return DTI_EXIT_FAIL;
}

void dti_warn(const char *fmt, ...)
{
	va_list ap;

	fflush(NULL);
	fputs("dti: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void dti_info(const char *fmt, ...)
{
	va_list ap;

	fflush(NULL);
	fputs("dti: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool dti_parse_uint(const char *s, unsigned long *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && !*end;
}

bool dti_parse_rec_level(const char *text, int *level)
{
	return dti_level_parse(text, level) == 0 && *level >= 0;
}

int dti_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts, int *ret)
{
	int c;

	opterr = 1;		/* glibc's messages name the option */
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == 'h' || c == '?') {
		*ret = dti_usage(cmd, c == '?', NULL);
		return DTI_OPT_EXIT;
	}
	return c;
}

static void dti_main_help(FILE *out)
{
	const struct dti_cmd *c;

	fputs(dti_main_usage, out);
	fputs("\ncommands:\n", out);
	for (c = dti_cmds; c->name; c++)
		fprintf(out, "   %-10s %s\n", c->name, c->summary);
	fputs("\noptions:\n"
	      "   --debugfs DIR   debugfs mount point (default: the first debugfs in\n"
	      "                   /proc/mounts, else /sys/kernel/debug)\n"
	      "   -V, --version   print the version\n"
	      "\nexit status: 0 success, 1 failure, 2 damaged data skipped,\n"
	      "129 usage error.  See dti(1).\n",
	      out);
}

int dti_usage(const char *cmd, bool error, const char *msg)
{
	const struct dti_cmd *c;
	const char *end;

	if (msg)
		fprintf(stderr, "dti %s: %s\n", cmd, msg);
	for (c = dti_cmds; c->name; c++) {
		if (strcmp(c->name, cmd))
			continue;
		if (!error) {
			fputs(c->usage, stdout);
			return DTI_EXIT_OK;
		}
		/* the synopsis: the lines before the first empty one */
		end = strstr(c->usage, "\n\n");
		fprintf(stderr, "%.*s\n(see 'dti %s --help')\n",
			end ? (int)(end - c->usage) : (int)strlen(c->usage),
			c->usage, cmd);
		return DTI_EXIT_USAGE;
	}
	dti_main_help(error ? stderr : stdout);
	return error ? DTI_EXIT_USAGE : DTI_EXIT_OK;
}

static const struct dti_cmd *dti_find_cmd(const char *name)
{
	const struct dti_cmd *c;

	for (c = dti_cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	fprintf(stderr, "dti: '%s' is not a dti command; see 'dti --help'\n", name);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "debugfs", required_argument, NULL, 'd' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct dti_cmd *c;
	const char *debugfs = NULL;
	char prog[32];
	int opt, ret = DTI_EXIT_OK;

	argv[0] = (char *)"dti";	/* getopt's messages: "dti: ..." */
	while ((opt = dti_getopt("", argc, argv, "+hV", opts, &ret)) != -1) {
		if (opt == DTI_OPT_EXIT)
			return ret;
		if (opt == 'V') {
			printf("dti version %s (record formats %d to %d; --journal: %s)\n",
			       DTI_VERSION, DTI_RECORD_VERSION_1, DTI_RECORD_VERSION,
			       dti_journal_support);
			return DTI_EXIT_OK;
		}
		debugfs = optarg;
	}
	if (optind >= argc)
		return dti_usage("", true, NULL);
	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 >= argc)
			return dti_usage("", false, NULL);
		c = dti_find_cmd(argv[optind + 1]);
		return c ? dti_usage(c->name, false, NULL) : DTI_EXIT_FAIL;
	}
	c = dti_find_cmd(argv[optind]);
	if (!c)
		return DTI_EXIT_USAGE;
	if (debugfs && dti_set_debugfs(debugfs) < 0)
		return dti_err("%s", dti_errmsg());
	/* "dti read: unrecognized option '--x'" from getopt */
	snprintf(prog, sizeof(prog), "dti %s", c->name);
	argv[optind] = prog;
	argc -= optind;
	argv += optind;
	optind = 0;		/* glibc: start afresh on the command's argv */
	return c->fn(argc, argv);
}
