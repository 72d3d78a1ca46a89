// SPDX-License-Identifier: GPL-2.0
/*
 * dti-bpf-watch [-d SECONDS] [-c CHANNEL]: count every record DTI stores
 * with dti_bpf_watch.bpf.c until SIGINT, SIGTERM or SECONDS, then print,
 * for each channel (or only CHANNEL):
 *
 *   channel=NAME records=N
 *   channel=NAME cpu=C records=N
 *   channel=NAME level=L records=N
 *   channel=NAME caller=0xADDR records=N      (the 10 busiest)
 *
 * and "missed=N": records counted nowhere (the map was full or busy).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "dti_bpf_watch.h"
#include "dti_bpf_watch.skel.h"

#define TOP_CALLERS	10
#define MAX_CPUS	1024
#define MAX_LEVEL	7

struct row {
	struct dti_watch_key k;
	unsigned long long n;
};

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

/* The counts of channel @name among @rows */
static void print_channel(const char *name, struct row *rows, size_t n)
{
	static unsigned long long cpu[MAX_CPUS], level[MAX_LEVEL + 1];
	unsigned long long total = 0;
	size_t i, shown = 0;

	memset(cpu, 0, sizeof(cpu));
	memset(level, 0, sizeof(level));
	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].k.channel, name))
			continue;
		total += rows[i].n;
		if (rows[i].k.cpu < MAX_CPUS)
			cpu[rows[i].k.cpu] += rows[i].n;
		if (rows[i].k.level >= 0 && rows[i].k.level <= MAX_LEVEL)
			level[rows[i].k.level] += rows[i].n;
	}
	printf("channel=%s records=%llu\n", name, total);
	for (i = 0; i < MAX_CPUS; i++)
		if (cpu[i])
			printf("channel=%s cpu=%zu records=%llu\n", name, i, cpu[i]);
	for (i = 0; i <= MAX_LEVEL; i++)
		if (level[i])
			printf("channel=%s level=%zu records=%llu\n", name, i, level[i]);
	/* rows are sorted by count: the busiest callers first (a caller's CPUs apart) */
	for (i = 0; i < n && shown < TOP_CALLERS; i++)
		if (!strcmp(rows[i].k.channel, name)) {
			printf("channel=%s caller=0x%llx cpu=%u level=%d records=%llu\n", name,
			       (unsigned long long)rows[i].k.caller, rows[i].k.cpu,
			       rows[i].k.level, rows[i].n);
			shown++;
		}
}

int main(int argc, char **argv)
{
	struct dti_watch_key key, next;
	struct dti_bpf_watch_bpf *skel;
	const char *only = NULL;
	struct row *rows;
	size_t n = 0, i, j;
	int seconds = 0, opt, fd, err;

	while ((opt = getopt(argc, argv, "d:c:h")) != -1) {
		switch (opt) {
		case 'd':
			seconds = atoi(optarg);
			break;
		case 'c':
			only = optarg;
			break;
		default:
			fputs("usage: dti-bpf-watch [-d SECONDS] [-c CHANNEL]\n",
			      opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	skel = dti_bpf_watch_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "dti-bpf-watch: loading the program: %s\n", strerror(errno));
		return 1;
	}
	err = dti_bpf_watch_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "dti-bpf-watch: attaching to dti:dti_record: %s\n", strerror(-err));
		dti_bpf_watch_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	for (i = 0; !done && (!seconds || i < (size_t)seconds * 10); i++)
		usleep(100000);
	dti_bpf_watch_bpf__detach(skel);
	rows = calloc(DTI_WATCH_KEYS, sizeof(*rows));
	fd = bpf_map__fd(skel->maps.counts);
	if (!rows)
		return 1;
	for (err = bpf_map_get_next_key(fd, NULL, &next); !err && n < DTI_WATCH_KEYS;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &rows[n].n)) {
			rows[n].k = key;
			n++;
		}
	}
	qsort(rows, n, sizeof(*rows), by_count);
	for (i = 0; i < n; i++) {
		/* each channel once, in the order of its busiest row */
		for (j = 0; j < i && strcmp(rows[j].k.channel, rows[i].k.channel); j++)
			;
		if (j == i && (!only || !strcmp(only, rows[i].k.channel)))
			print_channel(rows[i].k.channel, rows, n);
	}
	printf("missed=%llu\n", (unsigned long long)skel->bss->missed);
	free(rows);
	dti_bpf_watch_bpf__destroy(skel);
	return 0;
}
