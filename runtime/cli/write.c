// SPDX-License-Identifier: GPL-2.0
/*
 * dti write: user-space markers.  Every write(2) to a channel's marker
 * file is one text record, which dti.ko stamps "comm[pid]: text"; a
 * leading "<N>" (N 0..7) is that record's level, else the channel's
 * marker_level is.  So each record goes out as one write(2) of one
 * buffer, level prefix included, as soon as it is known: not through
 * stdio, which would join or split records, and not with writev(), which
 * a file with only a write method gets as one write per piece.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dti-cli.h"

const char usage_write[] =
	"usage: dti write [--level L] CHANNEL [TEXT...]\n"
	"\nAdd text records to CHANNEL, among the driver's, through its marker\n"
	"file: TEXT, its words joined by single spaces, as one record, or\n"
	"without TEXT each line of standard input as one record (without its\n"
	"newline; a last line without one counts too).  dti.ko stamps each\n"
	"with the writer's name and thread id: \"dti[PID]: TEXT\".  Options come\n"
	"before CHANNEL or right after it; the words after are TEXT.\n"
	"\n"
	"  --level L   the records' level: 0..7 or emerg..debug (default: the\n"
	"              channel's marker_level).  Without it, a TEXT or a line\n"
	"              that starts with <N> (N 0..7) sets its own level.\n"
	"\nA record the channel's level filters out is no error.  The first\n"
	"record that is not stored ends the command, with the reason and, for\n"
	"standard input, the line.\n"
	"\nExit status: 0, 1 failure, 129 usage.\n";

enum { OPT_LEVEL = 256 };

/* The marker file and the record being put together for it */
struct dti_marker {
	char path[PATH_MAX];
	int fd;
	char prefix[4];		/* "<N>" with --level, else "" */
	char *buf;		/* the record: prefix and text */
	size_t len, size;
};

/*
 * Open the marker file of channel @ch.  DTI_EXIT_OK, or DTI_EXIT_FAIL
 * saying what is missing or not allowed.
 */
static int dti_marker_open(struct dti_marker *m, const char *ch)
{
	if (dti_channel_path(ch, "marker", m->path, sizeof(m->path)) < 0)
		return dti_err("%s", dti_errmsg());
	m->fd = open(m->path, O_WRONLY | O_CLOEXEC);
	if (m->fd >= 0)
		return DTI_EXIT_OK;
	if (errno == ENOENT)
		return dti_err("channel %s has no marker file: %s does not exist (a dti.ko older than user-space markers?)",
			       ch, m->path);
	if (errno == EACCES || errno == EPERM)
		return dti_err("permission denied: %s (DTI's debugfs files are root's only)",
			       m->path);
	return dti_err("%s: %s", m->path, strerror(errno));
}

/* Start a record: the level prefix alone. */
static void dti_rec_start(struct dti_marker *m)
{
	m->len = strlen(m->prefix);
	memcpy(m->buf, m->prefix, m->len);
}

/* Add @len bytes of text to the record.  false if out of memory (said). */
static bool dti_rec_add(struct dti_marker *m, const char *text, size_t len)
{
	size_t size = m->size;
	char *nb;

	while (size - m->len < len)
		size *= 2;
	if (size != m->size) {
		nb = realloc(m->buf, size);
		if (!nb) {
			dti_err("out of memory for a record of %zu bytes", m->len + len);
			return false;
		}
		m->buf = nb;
		m->size = size;
	}
	memcpy(m->buf + m->len, text, len);
	m->len += len;
	return true;
}

/*
 * Store the record with one write(2).  false, with the reason and @what
 * (the record, which line) said, if dti.ko did not: a record the level
 * filters out is no error, one that is lost is (ENOSPC and the like).
 */
static bool dti_rec_put(struct dti_marker *m, const char *what)
{
	ssize_t n;

	do
		n = write(m->fd, m->buf, m->len);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)m->len)
		return true;
	if (n < 0)
		dti_err("%s: %s not stored: %s", m->path, what, strerror(errno));
	else
		dti_err("%s: %s not stored: short write (%zd of %zu bytes)", m->path,
			what, n, m->len);
	return false;
}

/* @words joined by single spaces as one record */
static int dti_write_words(struct dti_marker *m, char **words, int n)
{
	int i;

	dti_rec_start(m);
	for (i = 0; i < n; i++)
		if ((i && !dti_rec_add(m, " ", 1)) ||
		    !dti_rec_add(m, words[i], strlen(words[i])))
			return DTI_EXIT_FAIL;
	return dti_rec_put(m, "the record") ? DTI_EXIT_OK : DTI_EXIT_FAIL;
}

/* Each line of standard input as one record, as soon as it is read */
static int dti_write_lines(struct dti_marker *m)
{
	unsigned long lineno = 0;
	char *line = NULL, what[64];
	size_t cap = 0;
	ssize_t len;
	int ret = DTI_EXIT_OK;

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			len--;
		snprintf(what, sizeof(what), "line %lu of standard input", lineno);
		dti_rec_start(m);
		if (!dti_rec_add(m, line, len) || !dti_rec_put(m, what)) {
			ret = DTI_EXIT_FAIL;
			break;
		}
	}
	if (ret == DTI_EXIT_OK && ferror(stdin))
		ret = dti_err("standard input: read error after line %lu: %s", lineno,
			      strerror(errno));
	free(line);
	return ret;
}

int cmd_write(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help",  no_argument,       NULL, 'h' },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ NULL, 0, NULL, 0 },
	};
	struct dti_marker m = { .fd = -1, .size = 256 };
	const char *ch = NULL;
	bool ended;
	int c, ret, level;

	/*
	 * "+": options stop at CHANNEL and again at the first TEXT word, so
	 * that TEXT may look like an option ("dti write ch link -1 down").
	 */
	for (;;) {
		c = dti_getopt("write", argc, argv, "+h", opts, &ret);
		if (c == DTI_OPT_EXIT)
			return ret;
		if (c == OPT_LEVEL) {
			if (!dti_parse_rec_level(optarg, &level))
				return dti_usage("write", true, "--level takes 0..7 or emerg..debug");
			snprintf(m.prefix, sizeof(m.prefix), "<%d>", level);
			continue;
		}
		ended = !strcmp(argv[optind - 1], "--");
		if (ch || optind >= argc)
			break;
		ch = argv[optind++];
		if (ended)
			break;
	}
	if (!ch)
		return dti_usage("write", true, "missing CHANNEL");
	m.buf = malloc(m.size);
	if (!m.buf)
		return dti_err("out of memory");
	ret = dti_marker_open(&m, ch);
	if (ret == DTI_EXIT_OK) {
		/* a write error is said as one, with the line: not a signal */
		signal(SIGPIPE, SIG_IGN);
		ret = optind < argc ? dti_write_words(&m, argv + optind, argc - optind) :
		      dti_write_lines(&m);
		if (close(m.fd) != 0 && ret == DTI_EXIT_OK)
			ret = dti_err("%s: %s", m.path, strerror(errno));
	}
	free(m.buf);
	return ret;
}
