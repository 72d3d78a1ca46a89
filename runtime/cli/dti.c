// SPDX-License-Identifier: GPL-2.0
/*
 * dti - read and control DTI channels.  Subcommands in the style of git
 * and trace-cmd; each lives in the file of its family:
 *   ctl.c       list, level, reset, stats
 *   read.c      read, decode
 *   snapshot.c  snapshot
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dti-cli.h"

#define DTI_VERSION	"0.1"

const struct dti_cmd dti_cmds[] = {
	{ "list",     cmd_list,     usage_list,     "list channels with level, size and counters" },
	{ "level",    cmd_level,    usage_level,    "show or set a channel's level" },
	{ "read",     cmd_read,     usage_read,     "print a channel's records merged by time" },
	{ "snapshot", cmd_snapshot, usage_snapshot, "stop a channel, copy its per-CPU files, restore it" },
	{ "decode",   cmd_decode,   usage_decode,   "print records from copied per-CPU files" },
	{ "reset",    cmd_reset,    usage_reset,    "make the trace files return every record again" },
	{ "stats",    cmd_stats,    usage_stats,    "print a channel's per-CPU counters" },
	{ NULL, NULL, NULL, NULL },
};

static const char dti_main_usage[] =
	"usage: dti [--debugfs DIR] COMMAND [ARGS]\n"
	"       dti help COMMAND | dti COMMAND --help\n";

int dti_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);		/* keep the order of output and messages */
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

	fflush(stdout);
	fputs("dti: warning: ", stderr);
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

static void dti_main_help(FILE *out)
{
	const struct dti_cmd *c;

	fputs(dti_main_usage, out);
	fputs("\ncommands:\n", out);
	for (c = dti_cmds; c->name; c++)
		fprintf(out, "   %-10s %s\n", c->name, c->summary);
	fputs("\noptions:\n"
	      "   --debugfs DIR   debugfs mount point (default /sys/kernel/debug)\n"
	      "   --version       print the version\n"
	      "\nexit status: 0 success, 1 failure, 129 usage error.  See dti(1).\n",
	      out);
}

int dti_usage(const char *cmd, bool error, const char *msg)
{
	const struct dti_cmd *c;
	FILE *out = error ? stderr : stdout;

	if (msg)
		fprintf(stderr, "dti %s: %s\n", cmd, msg);
	for (c = dti_cmds; c->name; c++) {
		if (!strcmp(c->name, cmd)) {
			fputs(c->usage, out);
			return error ? DTI_EXIT_USAGE : DTI_EXIT_OK;
		}
	}
	dti_main_help(out);
	return error ? DTI_EXIT_USAGE : DTI_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct dti_cmd *c;
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "--debugfs") && i + 1 < argc) {
			dti_set_debugfs(argv[i + 1]);
			i += 2;
		} else if (!strncmp(argv[i], "--debugfs=", 10)) {
			dti_set_debugfs(argv[i] + 10);
			i++;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			dti_main_help(stdout);
			return DTI_EXIT_OK;
		} else if (!strcmp(argv[i], "--version")) {
			printf("dti version %s (record format %d)\n", DTI_VERSION,
			       1);
			return DTI_EXIT_OK;
		} else {
			fprintf(stderr, "dti: unknown option '%s'\n", argv[i]);
			dti_main_help(stderr);
			return DTI_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		dti_main_help(stderr);
		return DTI_EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help")) {
		if (i + 1 < argc)
			return dti_usage(argv[i + 1], false, NULL);
		dti_main_help(stdout);
		return DTI_EXIT_OK;
	}
	for (c = dti_cmds; c->name; c++)
		if (!strcmp(c->name, argv[i]))
			return c->fn(argc - i, argv + i);
	fprintf(stderr, "dti: '%s' is not a dti command; see 'dti --help'\n", argv[i]);
	return DTI_EXIT_USAGE;
}
