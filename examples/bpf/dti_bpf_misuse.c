// SPDX-License-Identifier: GPL-2.0
/*
 * dti-bpf-misuse PROGRAM [CHANNEL]: load one program of
 * dti_bpf_misuse.bpf.c and print the verifier's log; a program that
 * loads is attached until a write(2) made it run once, and its results
 * are printed.  Exit status 0 if it loaded, 1 if the kernel refused it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "dti_bpf_misuse.skel.h"

static char log_buf[1 << 16];

int main(int argc, char **argv)
{
	struct dti_bpf_misuse_bpf *skel;
	struct bpf_program *prog, *want = NULL;
	struct bpf_link *link;
	int err;

	if (argc < 2 || argc > 3) {
		fputs("usage: dti-bpf-misuse PROGRAM [CHANNEL]\n", stderr);
		return 2;
	}
	libbpf_set_print(NULL);
	skel = dti_bpf_misuse_bpf__open();
	if (!skel)
		return 2;
	if (argc == 3)
		strncpy((char *)skel->rodata->channel, argv[2], sizeof(skel->rodata->channel) - 1);
	bpf_object__for_each_program(prog, skel->obj) {
		if (strcmp(bpf_program__name(prog), argv[1])) {
			bpf_program__set_autoload(prog, false);
		} else {
			want = prog;
			bpf_program__set_log_buf(prog, log_buf, sizeof(log_buf));
			bpf_program__set_log_level(prog, 1);
		}
	}
	if (!want) {
		fprintf(stderr, "dti-bpf-misuse: no program %s\n", argv[1]);
		return 2;
	}
	err = dti_bpf_misuse_bpf__load(skel);
	fputs(log_buf, stdout);
	if (err) {
		printf("refused: %s\n", strerror(-err));
		dti_bpf_misuse_bpf__destroy(skel);
		return 1;
	}
	link = bpf_program__attach(want);
	if (!link) {
		printf("attach: %s\n", strerror(errno));
		return 2;
	}
	if (write(STDOUT_FILENO, "", 0) < 0 || fflush(stdout))
		return 2;
	printf("loaded: results %lld %lld\n", (long long)skel->bss->results[0],
	       (long long)skel->bss->results[1]);
	bpf_link__destroy(link);
	dti_bpf_misuse_bpf__destroy(skel);
	return 0;
}
