// SPDX-License-Identifier: GPL-2.0
/*
 * --journal: the records into the system journal, through libsystemd's
 * sd_journal_sendv().  libdti prints them as the Journal Export Format
 * (DTI_FMT_EXPORT) into a stdio stream of ours, which takes its entries
 * apart and sends each: the export and the journal get the same fields.
 * Those starting with '_' (the timestamps, _BOOT_ID) are journald's to
 * set and are left out.  Built without libsystemd (no libsystemd-dev,
 * pkg-config libsystemd), --journal says so and fails.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "dti-cli.h"

#ifdef DTI_HAVE_LIBSYSTEMD
/* CODE_FILE, CODE_LINE, CODE_FUNC are the record's caller's, not ours */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

/* Most fields of an entry (a typed event has at most 32 of its own) */
#define DTI_JOURNAL_FIELDS	128

/*
 * What was written and not yet sent (@buf, @len bytes: an entry's
 * beginning), and the fields of the entry being taken apart, as
 * "NAME=VALUE" one after another in @fields (@ends: where each ends).
 */
struct dti_journal {
	struct dti_out *out;
	char *buf, *fields;
	size_t len, cap, flen, fcap;
	size_t ends[DTI_JOURNAL_FIELDS];
	unsigned int n;
};

/* Append @n bytes to *@p (@len of *@cap used).  0, or -1 (ENOMEM). */
static int dti_journal_add(char **p, size_t *len, size_t *cap, const void *s, size_t n)
{
	size_t want = *cap ? *cap : 4096;
	char *np;

	while (want - *len < n)
		want *= 2;
	if (want != *cap) {
		np = realloc(*p, want);
		if (!np)
			return -1;
		*p = np;
		*cap = want;
	}
	memcpy(*p + *len, s, n);
	*len += n;
	return 0;
}

/* Field NAME (@name_len bytes) with its @n bytes of value.  0 or -errno. */
static int dti_journal_field(struct dti_journal *j, const char *name, size_t name_len,
			     const char *v, size_t n)
{
	if (name_len && name[0] == '_')
		return 0;	/* journald's own */
	if (j->n == DTI_JOURNAL_FIELDS)
		return -E2BIG;
	if (dti_journal_add(&j->fields, &j->flen, &j->fcap, name, name_len) ||
	    dti_journal_add(&j->fields, &j->flen, &j->fcap, "=", 1) ||
	    dti_journal_add(&j->fields, &j->flen, &j->fcap, v, n))
		return -ENOMEM;
	j->ends[j->n++] = j->flen;
	return 0;
}

/* Send the entry taken apart.  0 or -errno. */
static int dti_journal_send(struct dti_journal *j)
{
	struct iovec iov[DTI_JOURNAL_FIELDS];
	size_t start = 0;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < j->n; i++) {
		iov[i].iov_base = j->fields + start;
		iov[i].iov_len = j->ends[i] - start;
		start = j->ends[i];
	}
	if (j->n)
		ret = sd_journal_sendv(iov, (int)j->n);
	j->n = 0;
	j->flen = 0;
	return ret;
}

/*
 * Take apart and send the whole entries of j->buf, keeping what is left
 * of one not whole yet.  0 or -errno.
 */
static int dti_journal_parse(struct dti_journal *j)
{
	size_t pos = 0, at, name_len;
	const char *p = j->buf, *nl, *eq;
	uint64_t n;
	int ret = 0;

	while (pos < j->len && !ret) {
		if (p[pos] == '\n') {		/* an empty line ends the entry */
			ret = dti_journal_send(j);
			pos++;
			continue;
		}
		nl = memchr(p + pos, '\n', j->len - pos);
		if (!nl)
			break;
		eq = memchr(p + pos, '=', nl - (p + pos));
		if (eq) {
			ret = dti_journal_field(j, p + pos, eq - (p + pos), eq + 1, nl - eq - 1);
			pos = nl + 1 - p;
			continue;
		}
		/* binary: NAME, newline, 64-bit little-endian length, value, newline */
		name_len = nl - (p + pos);
		at = name_len + 1 + sizeof(n);
		if (j->len - pos < at)
			break;
		memcpy(&n, p + pos + name_len + 1, sizeof(n));
		n = le64toh(n);
		if (n > j->len - pos - at)
			break;
		if (j->len - pos - at - n < 1)
			break;
		ret = dti_journal_field(j, p + pos, name_len, p + pos + at, n);
		pos += at + n + 1;
	}
	/* what is taken apart stays in j->fields: only the rest is kept */
	memmove(j->buf, j->buf + pos, j->len - pos);
	j->len -= pos;
	return ret;
}

static ssize_t dti_journal_write(void *cookie, const char *buf, size_t size)
{
	struct dti_journal *j = cookie;
	int ret;

	if (dti_journal_add(&j->buf, &j->len, &j->cap, buf, size)) {
		j->out->err = ENOMEM;
		return 0;
	}
	ret = dti_journal_parse(j);
	if (ret < 0) {
		j->out->err = -ret;
		return 0;	/* stdio's error */
	}
	return size;
}

static int dti_journal_close(void *cookie)
{
	struct dti_journal *j = cookie;

	free(j->buf);
	free(j->fields);
	free(j);
	return 0;
}

FILE *dti_journal_open(struct dti_out *out)
{
	static const cookie_io_functions_t io = {
		.write = dti_journal_write, .close = dti_journal_close,
	};
	struct dti_journal *j = calloc(1, sizeof(*j));
	FILE *f;

	out->err = 0;
	out->fd = -1;
	out->name = "the journal";
	if (!j) {
		dti_err("out of memory");
		return NULL;
	}
	j->out = out;
	f = fopencookie(j, "w", io);
	if (!f || setvbuf(f, NULL, _IONBF, 0) != 0) {
		dti_err("--journal: %s", strerror(errno));
		if (f)
			fclose(f);
		else
			dti_journal_close(j);
		return NULL;
	}
	return f;
}

const char dti_journal_support[] = "libsystemd";

#else /* !DTI_HAVE_LIBSYSTEMD */

FILE *dti_journal_open(struct dti_out *out)
{
	(void)out;
	dti_err("--journal: this dti was built without libsystemd (pkg-config libsystemd "
		"found none: apt-get install libsystemd-dev and build again); "
		"'-F export | /lib/systemd/systemd-journal-remote -o FILE.journal -' "
		"writes a journal file without it");
	return NULL;
}

const char dti_journal_support[] = "none";

#endif
