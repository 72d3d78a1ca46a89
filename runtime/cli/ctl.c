// SPDX-License-Identifier: GPL-2.0
/* dti list, level, reset, stats: the channel control files. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dti-cli.h"

const char usage_list[] =
	"usage: dti list\n"
	"\nList every channel: level, buffer bytes per CPU, and the totals of\n"
	"records written, overwritten and dropped.\n";
const char usage_level[] =
	"usage: dti level [--] CHANNEL [LEVEL]\n"
	"\nWithout LEVEL print the channel's level.  LEVEL is 0..7 or\n"
	"emerg, alert, crit, err, warning, notice, info, debug; 'off' (-1) stops\n"
	"storing and keeps the records; 'destroy' (-2) frees the buffers.\n";
const char usage_reset[] =
	"usage: dti reset CHANNEL\n"
	"\nMake the channel's trace files return every record they still hold\n"
	"(writes 1 to reset_consumed).  Records are not deleted.\n";
const char usage_stats[] =
	"usage: dti stats CHANNEL\n"
	"\nPrint the per-CPU counters: written, filtered, overwritten, discarded,\n"
	"dropped, nested, nmi, lost, unavailable, rejected, halted, stopped,\n"
	"next_seq.\n"
	"Per CPU, next_seq = written + dropped + nested + nmi + lost +\n"
	"unavailable + rejected + halted + stopped; a reader sees written -\n"
	"overwritten - discarded records.\n";

/*
 * Only --help/-h; returns -1 to go on, or an exit code.  @shortopts "+h"
 * stops at the first operand, so that "level CH -1" takes -1 as a level.
 */
static int dti_simple_opts(const char *cmd, int argc, char **argv,
			   const char *shortopts)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = -1;

	/* -h and errors end it; the first call returns -1 otherwise */
	dti_getopt(cmd, argc, argv, shortopts, opts, &ret);
	return ret;
}

/* Value of @key ("key: value" lines) in @text, or 0. */
static unsigned long long dti_kv(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return strtoull(p + klen + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/* Column @col of the "total" line of a stats file. */
static unsigned long long dti_stat_total(const char *stats, const char *col)
{
	const char *hdr_end = strchr(stats, '\n'), *tot;
	char head[512], *tok, *save;
	int idx = 0, want = -1, i;

	if (!hdr_end || (size_t)(hdr_end - stats) >= sizeof(head))
		return 0;
	memcpy(head, stats, hdr_end - stats);
	head[hdr_end - stats] = '\0';
	for (tok = strtok_r(head, " ", &save); tok; tok = strtok_r(NULL, " ", &save), idx++)
		if (!strcmp(tok, col))
			want = idx;
	tot = strstr(stats, "\ntotal");
	if (want < 0 || !tot)
		return 0;
	tot++;
	for (i = 0; i < want; i++) {
		tot += strcspn(tot, " ");
		tot += strspn(tot, " ");
	}
	return strtoull(tot, NULL, 10);
}

int cmd_list(int argc, char **argv)
{
	char **names, **n, *info, *stats, lv[24];
	int ret = dti_simple_opts("list", argc, argv, "h"), level;

	if (ret >= 0)
		return ret;
	if (optind != argc)
		return dti_usage("list", true, "too many arguments");
	names = dti_list_channels();
	if (!names)
		return dti_err("%s", dti_errmsg());
	printf("%-20s %-11s %10s %12s %12s %12s\n", "CHANNEL", "LEVEL", "SIZE/CPU",
	       "WRITTEN", "OVERWRITTEN", "DROPPED");
	ret = DTI_EXIT_OK;
	for (n = names; *n; n++) {
		if (dti_get_level(*n, &level) < 0) {
			ret = dti_err("%s", dti_errmsg());
			continue;
		}
		info = dti_read_ctl(*n, "info");
		stats = dti_read_ctl(*n, "stats");
		if (!info || !stats) {
			ret = dti_err("%s", dti_errmsg());
			free(info);
			free(stats);
			continue;
		}
		snprintf(lv, sizeof(lv), "%d (%s)", level, dti_level_name(level));
		printf("%-20s %-11s %10llu %12llu %12llu %12llu\n", *n, lv,
		       dti_kv(info, "subbuf_size") * dti_kv(info, "n_subbufs"),
		       dti_stat_total(stats, "written"),
		       dti_stat_total(stats, "overwritten"),
		       dti_stat_total(stats, "dropped"));
		free(info);
		free(stats);
	}
	dti_names_free(names);
	return ret;
}

int cmd_level(int argc, char **argv)
{
	int ret = dti_simple_opts("level", argc, argv, "+h"), level;

	if (ret >= 0)
		return ret;
	if (argc - optind < 1 || argc - optind > 2)
		return dti_usage("level", true, argc - optind < 1 ?
				 "missing CHANNEL" : "too many arguments");
	if (argc - optind == 1) {
		if (dti_get_level(argv[optind], &level) < 0)
			return dti_err("%s", dti_errmsg());
		printf("%d (%s)\n", level, dti_level_name(level));
		return DTI_EXIT_OK;
	}
	if (dti_level_parse(argv[optind + 1], &level) < 0)
		return dti_usage("level", true, dti_errmsg());
	if (dti_set_level(argv[optind], level) < 0)
		return dti_err("%s", dti_errmsg());
	return DTI_EXIT_OK;
}

int cmd_reset(int argc, char **argv)
{
	int ret = dti_simple_opts("reset", argc, argv, "h");

	if (ret >= 0)
		return ret;
	if (argc - optind != 1)
		return dti_usage("reset", true, "expected one CHANNEL");
	if (dti_reset_consumed(argv[optind]) < 0)
		return dti_err("%s", dti_errmsg());
	return DTI_EXIT_OK;
}

int cmd_stats(int argc, char **argv)
{
	int ret = dti_simple_opts("stats", argc, argv, "h");
	char *text;

	if (ret >= 0)
		return ret;
	if (argc - optind != 1)
		return dti_usage("stats", true, "expected one CHANNEL");
	text = dti_read_ctl(argv[optind], "stats");
	if (!text)
		return dti_err("%s", dti_errmsg());
	fputs(text, stdout);
	free(text);
	return DTI_EXIT_OK;
}
