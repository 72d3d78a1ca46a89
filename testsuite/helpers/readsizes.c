// SPDX-License-Identifier: GPL-2.0
/*
 * readsizes - read a DTI trace file with read()s of every size in a range
 *
 *   readsizes TRACE RESET SUBBUF MIN MAX ALT KEEPDIR [KEEP...]
 *
 * For each size N from MIN to MAX: write "1" to RESET (the channel's
 * reset_consumed, so the file gives every record again), then read TRACE
 * with read()s of N bytes until one returns 0; with ALT not 0, read()s of
 * ALT and of N bytes in turn, so that those of N start in the middle of
 * sub-buffers.  A read() that fails with
 * EINVAL is followed by one of SUBBUF bytes, which must give something:
 * the refused read() took nothing.  What each N read is checked against
 * what reads of SUBBUF bytes read:
 *   - every read() gives at least a header's bytes, and starts with a
 *     sub-buffer header of record version 2 (DTI_SUBBUF_OPEN or CLOSED)
 *     or a continuation header (DTI_SUBBUF_CONTINUED);
 *   - the bytes read, less the continuation headers, are those of the
 *     reads of SUBBUF bytes less theirs, byte for byte.
 * One line per N on standard output:
 *   N reads=R einval=E cont=C bytes=B ok
 * or, instead of "ok", "bad: WHAT".  The streams of the sizes KEEP are
 * written whole to KEEPDIR/N, for the test to decode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>
#include <linux/dti_record.h>

struct stream {
	unsigned char *data;	/* what the read()s gave */
	size_t len;
	unsigned char *plain;	/* the same less continuation headers */
	size_t plain_len;
	unsigned long reads, einval, cont;
	char bad[128];
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		perror("readsizes: realloc");
		exit(2);
	}
	return p;
}

static void append(unsigned char **buf, size_t *len, size_t *cap,
		   const void *p, size_t n)
{
	if (*len + n > *cap) {
		*cap = (*len + n) * 2;
		*buf = xrealloc(*buf, *cap);
	}
	memcpy(*buf + *len, p, n);
	*len += n;
}

static void reset(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, "1", 1) != 1) {
		perror(path);
		exit(2);
	}
	close(fd);
}

/* Check the header a read() starts with; 1 if it is a continuation. */
static int check_head(struct stream *s, const unsigned char *p, ssize_t n)
{
	const struct dti_record *rec = (const void *)p;
	const struct dti_subbuf_info *info = (const void *)(rec + 1);

	if (n < (ssize_t)DTI_SUBBUF_HEADER_SIZE) {
		snprintf(s->bad, sizeof(s->bad), "read %lu gave %zd bytes", s->reads, n);
		return -1;
	}
	if (rec->magic != DTI_RECORD_MAGIC || rec->version != DTI_RECORD_VERSION ||
	    !(rec->flags & DTI_REC_SUBBUF) || info->state > DTI_SUBBUF_CONTINUED) {
		snprintf(s->bad, sizeof(s->bad), "read %lu starts with no header", s->reads);
		return -1;
	}
	return info->state == DTI_SUBBUF_CONTINUED;
}

static void take(struct stream *s, const unsigned char *p, ssize_t n,
		 size_t *cap, size_t *pcap)
{
	int cont = check_head(s, p, n);

	if (cont < 0)
		return;
	s->reads++;
	s->cont += cont;
	append(&s->data, &s->len, cap, p, n);
	if (cont) {
		p += DTI_SUBBUF_HEADER_SIZE;
		n -= DTI_SUBBUF_HEADER_SIZE;
	}
	append(&s->plain, &s->plain_len, pcap, p, n);
}

static void read_all(struct stream *s, const char *trace, size_t size, size_t alt,
		     size_t subbuf)
{
	size_t cap = 0, pcap = 0, bufsz = size > subbuf ? size : subbuf, want;
	unsigned char *buf;
	int fd = open(trace, O_RDONLY);
	unsigned long i;
	ssize_t n;

	memset(s, 0, sizeof(*s));
	if (fd < 0) {
		perror(trace);
		exit(2);
	}
	if (alt > bufsz)
		bufsz = alt;
	buf = xrealloc(NULL, bufsz);
	for (i = 0; !s->bad[0]; i++) {
		want = alt && !(i & 1) ? alt : size;
		n = read(fd, buf, want);
		if (n < 0 && errno == EINVAL) {
			s->einval++;
			n = read(fd, buf, subbuf);
			if (n <= 0) {
				snprintf(s->bad, sizeof(s->bad),
					 "read of %zu after EINVAL: %zd (%s)", subbuf, n,
					 n ? strerror(errno) : "nothing");
				break;
			}
		} else if (n < 0) {
			snprintf(s->bad, sizeof(s->bad), "read: %s", strerror(errno));
			break;
		}
		if (!n)
			break;
		take(s, buf, n, &cap, &pcap);
	}
	close(fd);
	free(buf);
}

int main(int argc, char **argv)
{
	struct stream ref, s;
	size_t subbuf, min, max, alt, n, at;
	FILE *f;
	char path[4096];
	int i;

	if (argc < 8) {
		fprintf(stderr, "usage: readsizes TRACE RESET SUBBUF MIN MAX ALT KEEPDIR [KEEP...]\n");
		return 2;
	}
	subbuf = strtoul(argv[3], NULL, 0);
	min = strtoul(argv[4], NULL, 0);
	max = strtoul(argv[5], NULL, 0);
	alt = strtoul(argv[6], NULL, 0);
	reset(argv[2]);
	read_all(&ref, argv[1], subbuf, 0, subbuf);
	if (ref.bad[0] || !ref.len) {
		printf("reference bad: %s\n", ref.bad[0] ? ref.bad : "empty");
		return 1;
	}
	for (n = min; n <= max; n++) {
		reset(argv[2]);
		read_all(&s, argv[1], n, alt, subbuf);
		if (!s.bad[0] && s.plain_len != ref.plain_len)
			snprintf(s.bad, sizeof(s.bad), "%zu bytes without continuations, not %zu",
				 s.plain_len, ref.plain_len);
		for (at = 0; !s.bad[0] && at < s.plain_len; at++) {
			if (s.plain[at] != ref.plain[at])
				snprintf(s.bad, sizeof(s.bad), "differs at byte %zu", at);
		}
		printf("%zu reads=%lu einval=%lu cont=%lu bytes=%zu %s%s\n", n, s.reads,
		       s.einval, s.cont, s.len, s.bad[0] ? "bad: " : "ok", s.bad);
		for (i = 8; i < argc; i++) {
			if (strtoul(argv[i], NULL, 0) != n)
				continue;
			snprintf(path, sizeof(path), "%s/%zu", argv[7], n);
			f = fopen(path, "w");
			if (!f || fwrite(s.data, 1, s.len, f) != s.len || fclose(f)) {
				perror(path);
				return 2;
			}
		}
		free(s.data);
		free(s.plain);
	}
	return 0;
}
