// SPDX-License-Identifier: GPL-2.0
/*
 * fdhold - hold files open across a channel's destroy, unregister and
 * rmmod, and try every file operation on them when told to
 * (test_lifecycle.py).
 *
 *   fdhold SPEC... < COMMANDS
 *
 * SPEC is r:PATH (open read-only, and mmap it), w:PATH:TEXT (write-only,
 * TEXT is what a phase writes) or rw:PATH:TEXT.  All are opened first;
 * one that cannot be opened is an error.  Then each line of standard
 * input is a command:
 *
 *   PHASE            on every file still open: seek to 0, read up to
 *                    64 KiB, seek to 0, write TEXT (w and rw), poll with
 *                    no timeout,
 *                    read the byte the open-time mapping holds, mmap
 *                    afresh; one line per file:
 *                    "@@FD PHASE PATH seek=N|ERR read=N|ERR write=N|ERR
 *                     poll=0xREVENTS map=ok|ERR mmap=ok|ERR"
 *                    (seek: the first lseek's result)
 *                    then "@@PHASE PHASE done"
 *   close SUBSTR     close the files whose path contains SUBSTR
 *   keep SUBSTR      close the others
 *
 * At the end of input every file is closed and "@@CLOSED" printed.  A
 * mapping that was made stays mapped until then (a page the kernel freed
 * under it would be read by "map").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_FILES	64
#define READ_MAX	65536

struct held {
	char *path;
	const char *text;	/* what a phase writes, or NULL */
	int fd;			/* -1 once closed */
	int readable;
	void *map;		/* open-time mapping, or MAP_FAILED */
	int map_err;
};

static struct held files[MAX_FILES];
static int nfiles;
static char rbuf[READ_MAX];

static const char *err_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "E?";
}

static void result(char *out, size_t size, long ret)
{
	if (ret < 0)
		snprintf(out, size, "%s", err_name(errno));
	else
		snprintf(out, size, "%ld", ret);
}

static void open_spec(char *spec)
{
	struct held *h = &files[nfiles];
	char *colon = strchr(spec, ':');
	int flags;

	if (!colon || nfiles == MAX_FILES) {
		fprintf(stderr, "fdhold: bad spec %s\n", spec);
		exit(2);
	}
	*colon = '\0';
	h->path = colon + 1;
	if (!strcmp(spec, "r")) {
		flags = O_RDONLY;
	} else {
		flags = strcmp(spec, "w") ? O_RDWR : O_WRONLY;
		colon = strchr(h->path, ':');
		if (!colon) {
			fprintf(stderr, "fdhold: %s: no text to write\n", h->path);
			exit(2);
		}
		*colon = '\0';
		h->text = colon + 1;
	}
	h->fd = open(h->path, flags);
	if (h->fd < 0) {
		fprintf(stderr, "fdhold: %s: %s\n", h->path, strerror(errno));
		exit(1);
	}
	h->readable = flags != O_WRONLY;
	h->map = MAP_FAILED;
	if (flags == O_RDONLY) {
		h->map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, h->fd, 0);
		h->map_err = h->map == MAP_FAILED ? errno : 0;
	}
	nfiles++;
}

static void phase(const char *name)
{
	char sk[32], rd[32], wr[32], mp[32], fresh[32];
	struct pollfd pfd;
	void *m;
	int i;

	for (i = 0; i < nfiles; i++) {
		struct held *h = &files[i];

		if (h->fd < 0)
			continue;
		result(sk, sizeof(sk), lseek(h->fd, 0, SEEK_SET));
		strcpy(rd, "-");
		if (h->readable)
			result(rd, sizeof(rd), read(h->fd, rbuf, sizeof(rbuf)));
		strcpy(wr, "-");
		if (h->text) {
			lseek(h->fd, 0, SEEK_SET);
			result(wr, sizeof(wr), write(h->fd, h->text, strlen(h->text)));
		}
		pfd.fd = h->fd;
		pfd.events = POLLIN | POLLOUT;
		pfd.revents = 0;
		poll(&pfd, 1, 0);
		if (h->map != MAP_FAILED)
			snprintf(mp, sizeof(mp), "ok:%02x", *(volatile unsigned char *)h->map);
		else
			snprintf(mp, sizeof(mp), "%s", h->text ? "-" : err_name(h->map_err));
		m = h->readable ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, h->fd, 0) : NULL;
		if (!m) {
			strcpy(fresh, "-");
		} else if (m == MAP_FAILED) {
			snprintf(fresh, sizeof(fresh), "%s", err_name(errno));
		} else {
			snprintf(fresh, sizeof(fresh), "ok:%02x", *(volatile unsigned char *)m);
			munmap(m, 4096);
		}
		printf("@@FD %s %s seek=%s read=%s write=%s poll=%#x map=%s mmap=%s\n",
		       name, h->path, sk, rd, wr, pfd.revents, mp, fresh);
	}
	printf("@@PHASE %s done\n", name);
	fflush(stdout);
}

static void close_matching(const char *substr, int keep)
{
	int i;

	for (i = 0; i < nfiles; i++) {
		struct held *h = &files[i];

		if (h->fd < 0 || (strstr(h->path, substr) != NULL) == keep)
			continue;
		if (h->map != MAP_FAILED)
			munmap(h->map, 4096);
		h->map = MAP_FAILED;
		close(h->fd);
		h->fd = -1;
	}
	printf("@@PHASE %s %s done\n", keep ? "keep" : "close", substr);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	char line[256];
	int i;

	for (i = 1; i < argc; i++)
		open_spec(argv[i]);
	printf("@@OPEN %d\n", nfiles);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "close ", 6))
			close_matching(line + 6, 0);
		else if (!strncmp(line, "keep ", 5))
			close_matching(line + 5, 1);
		else if (*line)
			phase(line);
	}
	close_matching("", 0);
	printf("@@CLOSED\n");
	return 0;
}
