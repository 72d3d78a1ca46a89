// SPDX-License-Identifier: GPL-2.0
/*
 * dti-bpf-log: attach dti_bpf_log.bpf.c to a kernel function with
 * fentry, so that each call logs into a DTI channel, until SIGINT or
 * SIGTERM; then print what the program counted.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "dti_bpf_log.skel.h"

static const char usage[] =
	"usage: dti-bpf-log [-c CHANNEL] [-l LEVEL] [-e ID] [-k] FUNCTION\n"
	"\nAttach an fentry program to kernel function FUNCTION (of vmlinux or of\n"
	"a module with BTF) that logs \"bpf N cpu C\" and a binary record of N and C\n"
	"into DTI channel CHANNEL (default bpf) at LEVEL (default 6) on each call,\n"
	"until SIGINT or SIGTERM; then print hits=, missed= (no such channel) and\n"
	"refused= (records not stored).  It prints \"attached\" once it runs.\n"
	"-e ID: also an event of type ID (registered on CHANNEL, of two %llu\n"
	"values) of N and C.  -k: a kprobe program instead of fentry (the kernel\n"
	"must take kfuncs from kprobe programs: 6.10 and later).\n";

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	const char *channel = "bpf";
	struct dti_bpf_log_bpf *skel;
	int level = 6, event_id = -1, kprobe = 0, opt, err;
	struct bpf_link *link = NULL;

	while ((opt = getopt(argc, argv, "c:l:e:kh")) != -1) {
		switch (opt) {
		case 'c':
			channel = optarg;
			break;
		case 'l':
			level = atoi(optarg);
			break;
		case 'e':
			event_id = atoi(optarg);
			break;
		case 'k':
			kprobe = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || strlen(channel) >= sizeof(skel->rodata->channel)) {
		fputs(usage, stderr);
		return 2;
	}
	skel = dti_bpf_log_bpf__open();
	if (!skel) {
		fprintf(stderr, "dti-bpf-log: open: %s\n", strerror(errno));
		return 1;
	}
	strncpy((char *)skel->rodata->channel, channel, sizeof(skel->rodata->channel) - 1);
	skel->rodata->level = level;
	skel->rodata->event_id = event_id;
	bpf_program__set_autoload(kprobe ? skel->progs.dti_log_fentry :
					   skel->progs.dti_log_kprobe, false);
	err = kprobe ? 0 : bpf_program__set_attach_target(skel->progs.dti_log_fentry, 0,
							   argv[optind]);
	if (!err)
		err = dti_bpf_log_bpf__load(skel);
	if (!err && kprobe) {
		link = bpf_program__attach_kprobe(skel->progs.dti_log_kprobe, false, argv[optind]);
		err = link ? 0 : -errno;
	} else if (!err) {
		err = dti_bpf_log_bpf__attach(skel);
	}
	if (err) {
		fprintf(stderr, "dti-bpf-log: %s: %s\n", argv[optind], strerror(-err));
		dti_bpf_log_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!done)
		pause();
	printf("hits=%llu missed=%llu refused=%llu\n", (unsigned long long)skel->bss->hits,
	       (unsigned long long)skel->bss->missed, (unsigned long long)skel->bss->refused);
	bpf_link__destroy(link);
	dti_bpf_log_bpf__destroy(skel);
	return 0;
}
