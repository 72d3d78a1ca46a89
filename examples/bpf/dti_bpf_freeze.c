// SPDX-License-Identifier: GPL-2.0
/*
 * dti-bpf-freeze CHANNEL PATTERN N|Nms: freeze CHANNEL exactly N records
 * (or N milliseconds) after the first record whose text matches PATTERN,
 * with dti_bpf_freeze.bpf.c; the channel is ordered meanwhile.  Prints
 * "ready" once the program is attached, then, once the channel went off,
 * "MATCH cpu=C seq=S ts_ns=T".
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "dti_bpf_freeze.skel.h"

#define LEVEL_PATH	"/sys/kernel/debug/dti/%s/level"
/* How long it waits for the match and the halt: seconds */
#define WAIT_MAX	600

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

/* Have on_sys_enter set the channel's ordered mode in this process's next system call */
static int set_ordered(struct dti_bpf_freeze_bpf *skel, int on)
{
	skel->bss->loader_tgid = getpid();
	skel->bss->ordered_ret = 0;
	__atomic_store_n(&skel->data->want_ordered, on, __ATOMIC_SEQ_CST);
	(void)getppid();
	if (__atomic_load_n(&skel->data->want_ordered, __ATOMIC_SEQ_CST) != -1)
		return -EAGAIN;	/* the program did not run */
	return skel->bss->ordered_ret;
}

/* The channel's level file says it is off */
static int channel_off(const char *channel)
{
	char path[128], buf[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), LEVEL_PATH, channel);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strncmp(buf, "-1", 2) || !strncmp(buf, "off", 3);
}

int main(int argc, char **argv)
{
	struct dti_bpf_freeze_bpf *skel;
	const char *what;
	unsigned long long n;
	size_t plen;
	char *end;
	int err, i;

	if (argc != 4 || strlen(argv[1]) >= 32 || (plen = strlen(argv[2])) >= 64 || !plen) {
		fputs("usage: dti-bpf-freeze CHANNEL PATTERN N|Nms\n", stderr);
		return 2;
	}
	n = strtoull(argv[3], &end, 10);
	if (end == argv[3] || (*end && strcmp(end, "ms"))) {
		fprintf(stderr, "dti-bpf-freeze: %s: not a count or a time (Nms)\n", argv[3]);
		return 2;
	}
	skel = dti_bpf_freeze_bpf__open();
	if (!skel)
		return 1;
	strncpy((char *)skel->rodata->channel, argv[1], sizeof(skel->rodata->channel) - 1);
	memcpy((char *)skel->rodata->pattern, argv[2], plen);
	skel->rodata->pattern_tail = argv[2][plen - 1] == '*';
	skel->rodata->pattern_len = plen - skel->rodata->pattern_tail;
	if (*end)
		skel->rodata->after_ns = n * 1000000ull;
	else
		skel->rodata->after = n;
	err = dti_bpf_freeze_bpf__load(skel);
	what = "loading the programs";
	if (!err) {
		err = dti_bpf_freeze_bpf__attach(skel);
		what = "attaching to dti:dti_record and sys_enter";
	}
	if (!err) {
		err = set_ordered(skel, 1);
		what = "ordering the channel";
	}
	if (err) {
		fprintf(stderr, "dti-bpf-freeze: %s: %s: %s\n", argv[1], what, strerror(-err));
		dti_bpf_freeze_bpf__destroy(skel);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (i = 0; i < WAIT_MAX * 10 && !done; i++) {
		if (skel->bss->matched && channel_off(argv[1]))
			break;
		usleep(100000);
	}
	set_ordered(skel, 0);
	dti_bpf_freeze_bpf__detach(skel);
	if (!skel->bss->matched) {
		printf("no match: %llu records seen, %llu of the channel (arming: %lld)\n",
		       (unsigned long long)skel->bss->seen,
		       (unsigned long long)skel->bss->seen_channel, (long long)skel->bss->arm_ret);
		dti_bpf_freeze_bpf__destroy(skel);
		return 1;
	}
	printf("MATCH cpu=%u seq=%llu ts_ns=%llu%s\n", skel->bss->match_cpu,
	       (unsigned long long)skel->bss->match_seq, (unsigned long long)skel->bss->match_ts,
	       channel_off(argv[1]) ? "" : " (not off yet)");
	dti_bpf_freeze_bpf__destroy(skel);
	return 0;
}
