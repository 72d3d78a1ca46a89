// SPDX-License-Identifier: GPL-2.0
/*
 * dti_sample_fmt - print the sample driver's records with libdti,
 * decoding its binary request records instead of printing hex.
 *
 *   dti_sample_fmt CHANNEL          read a live channel (as root)
 *   dti_sample_fmt DIR | FILE...    read a 'dti snapshot' copy
 *
 * Build (runtime/Makefile does): cc -I runtime/include -I kmod/include/uapi \
 *           -I examples dti_sample_fmt.c runtime/build/libdti.a
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <dti/libdti.h>
#include "dti_sample/dti_sample.h"	/* struct dti_sample_req */

static const char *const state_names[] = {
	[DTI_SAMPLE_IDLE] = "idle", [DTI_SAMPLE_QUEUED] = "queued",
	[DTI_SAMPLE_ACTIVE] = "active", [DTI_SAMPLE_DONE] = "done",
	[DTI_SAMPLE_TIMEOUT] = "timeout", [DTI_SAMPLE_RESET] = "reset",
};

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/*
 * Formatter: 1 if it printed the record, 0 to let libdti print hex.  The
 * record is little-endian whatever the reader's byte order, so the fields
 * are assembled byte by byte rather than read through the packed struct.
 */
static int sample_format(FILE *out, const struct dti_rec *rec, void *arg)
{
	const unsigned char *p = rec->payload;
	struct dti_sample_req req;
	const char *state;

	(void)arg;
	if (rec->len != sizeof(req))
		return 0;
	req.id = le32(p);
	req.state = le32(p + 4);
	req.submit_ns = le64(p + 8);
	req.latency_ns = le64(p + 16);
	req.result = (int32_t)le32(p + 24);
	req.flags = le32(p + 28);
	state = req.state < sizeof(state_names) / sizeof(state_names[0]) &&
		state_names[req.state] ? state_names[req.state] : "?";
	fprintf(out, "req id=%" PRIu32 " state=%s submit=%" PRIu64
		" latency=%" PRIu64 "ns result=%" PRId32 " flags=%#" PRIx32 "%s",
		(uint32_t)req.id, state, (uint64_t)req.submit_ns,
		(uint64_t)req.latency_ns, (int32_t)req.result,
		(uint32_t)req.flags,
		req.flags & DTI_SAMPLE_F_FAULT ? " (fault)" : "");
	return 1;
}

static void print_notice(const struct dti_notice *n, void *arg)
{
	(void)arg;
	fprintf(stderr, "dti_sample_fmt: %s\n", n->message);
}

int main(int argc, char **argv)
{
	struct dti_reader *r;
	struct dti_rec rec;
	struct stat st;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CHANNEL | DIR | FILE...\n", argv[0]);
		return 129;
	}
	if (argc == 2 && stat(argv[1], &st) == 0 && S_ISDIR(st.st_mode))
		r = dti_open_dir(argv[1], 0);
	else if (argc == 2 && !strchr(argv[1], '/') && stat(argv[1], &st) != 0)
		r = dti_open_channel(argv[1], DTI_OPEN_RESET);
	else
		r = dti_open_files((const char *const *)argv + 1, argc - 1, 0);
	if (!r) {
		fprintf(stderr, "dti_sample_fmt: %s\n", dti_errmsg());
		return 1;
	}
	dti_set_formatter(r, sample_format, NULL);
	dti_set_notice_handler(r, print_notice, NULL);
	while ((ret = dti_next(r, &rec)) > 0)
		dti_print(r, stdout, &rec, DTI_FMT_TS);
	if (ret < 0)
		fprintf(stderr, "dti_sample_fmt: %s\n", dti_errmsg());
	dti_close(r);
	return ret < 0;
}
