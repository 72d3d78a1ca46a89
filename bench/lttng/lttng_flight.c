// SPDX-License-Identifier: GPL-2.0
/*
 * lttng_flight - run a command while one kernel tracepoint is recorded by
 * an LTTng flight-recorder session, with no LTTng daemon.
 *
 *	lttng_flight EVENT COMMAND [ARG...]
 *
 * Speaks lttng-modules' ABI on /proc/lttng as lttng-sessiond would: a
 * session, one channel in overwrite mode (a flight recorder: the oldest
 * sub-buffer is overwritten, so no consumer is needed and no record is
 * ever refused for want of space) of SUBBUF_SIZE x N_SUBBUFS per CPU,
 * the same geometry as the benchmark's DTI channel, and the event EVENT
 * of LTTng's tracepoint instrumentation, enabled.  It then starts the
 * session, runs COMMAND and waits for it, and prints for each CPU's
 * buffer what was written there while COMMAND ran:
 *
 *	cpu=N bytes=B
 *
 * bytes: how far the buffer's write position moved (records, packet
 * headers and the padding at the end of sub-buffers).  It then closes
 * its LTTng files, which destroys the session: LTTng then reports in the
 * kernel log any buffer that lost records ("records were lost"); the
 * count of discarded events it keeps is the consumer's, read from the
 * packet a consumer holds, and there is none here.
 *
 * Exit status: COMMAND's, 2 for a usage error, or 1 after a message on
 * stderr naming the LTTng request that failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define SUBBUF_SIZE	(128U << 10)
#define N_SUBBUFS	8
#define MAX_CPUS	256

/*
 * lttng-modules' ABI, version 2 (include/lttng/abi.h and
 * include/ringbuffer/vfs.h of lttng-modules 2.13; lttng-tools carries the
 * same definitions).  Only what this program uses.
 */
#define LTTNG_ABI_MAJOR		2
#define LTTNG_SYM_NAME_LEN	256
#define LTTNG_TRACEPOINT	0	/* enum lttng_kernel_abi_instrumentation */
#define LTTNG_SPLICE		0	/* enum lttng_kernel_abi_output */

struct lttng_abi_version {
	uint32_t major;
	uint32_t minor;
} __attribute__((packed));

struct lttng_abi_channel {
	uint64_t subbuf_size;
	uint64_t num_subbuf;
	unsigned int switch_timer_interval;
	unsigned int read_timer_interval;
	uint32_t output;
	int overwrite;
	char padding[LTTNG_SYM_NAME_LEN + 32];
} __attribute__((packed));

/* struct lttng_kernel_abi_event, its per-instrumentation union as padding */
struct lttng_abi_event {
	char name[LTTNG_SYM_NAME_LEN];
	uint32_t instrumentation;
	uint64_t token;
	char padding1[8];
	char u[LTTNG_SYM_NAME_LEN + 32];
} __attribute__((packed));

#define LTTNG_ABI_VERSION	_IOR(0xF6, 0x4B, struct lttng_abi_version)
#define LTTNG_SESSION		_IO(0xF6, 0x45)
#define LTTNG_CHANNEL		_IOW(0xF6, 0x55, struct lttng_abi_channel)
#define LTTNG_SESSION_START	_IO(0xF6, 0x56)
#define LTTNG_STREAM		_IO(0xF6, 0x62)
#define LTTNG_EVENT		_IOW(0xF6, 0x63, struct lttng_abi_event)
#define LTTNG_ENABLE		_IO(0xF6, 0x82)
#define RB_SAMPLE_POSITIONS	_IO(0xF6, 0x0E)
#define RB_GET_PRODUCED		_IOR(0xF6, 0x02, unsigned long)

#define LTTNG_PROC		"/proc/lttng"

static int fail(const char *what)
{
	fprintf(stderr, "lttng_flight: %s: %s\n", what, strerror(errno));
	return -1;
}

/* ioctl() on an LTTng file: its result, or -1 after saying what failed. */
static int lttng_ioctl(int fd, unsigned long req, void *arg, const char *what)
{
	int ret = ioctl(fd, req, arg);

	if (ret < 0)
		return fail(what);
	return ret;
}

/* The same for a request that makes a file, closed on exec: its fd. */
static int lttng_new_fd(int fd, unsigned long req, void *arg, const char *what)
{
	int ret = lttng_ioctl(fd, req, arg, what);

	if (ret >= 0 && fcntl(ret, F_SETFD, FD_CLOEXEC) < 0)
		return fail("FD_CLOEXEC on an LTTng file");
	return ret;
}

/*
 * The session, its channel and the event, enabled; the session's fd (the
 * channel's in *channel), or -1.
 */
static int lttng_setup(const char *event, int *channel)
{
	struct lttng_abi_channel chan = {
		.subbuf_size = SUBBUF_SIZE,
		.num_subbuf = N_SUBBUFS,
		.output = LTTNG_SPLICE,
		.overwrite = 1,
	};
	struct lttng_abi_event ev = { .instrumentation = LTTNG_TRACEPOINT };
	struct lttng_abi_version v;
	int ctl, session, evfd;

	if (strlen(event) >= sizeof(ev.name)) {
		errno = ENAMETOOLONG;
		return fail(event);
	}
	strcpy(ev.name, event);
	ctl = open(LTTNG_PROC, O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return fail(LTTNG_PROC " (lttng-tracer.ko not loaded?)");
	if (lttng_ioctl(ctl, LTTNG_ABI_VERSION, &v, "tracer ABI version") < 0)
		return -1;
	if (v.major != LTTNG_ABI_MAJOR) {
		fprintf(stderr, "lttng_flight: lttng-modules ABI %u.%u, expected %u.x\n",
			v.major, v.minor, LTTNG_ABI_MAJOR);
		return -1;
	}
	session = lttng_new_fd(ctl, LTTNG_SESSION, NULL, "session");
	if (session < 0)
		return -1;
	*channel = lttng_new_fd(session, LTTNG_CHANNEL, &chan,
				"overwrite channel (lttng-ring-buffer-client-overwrite.ko loaded?)");
	if (*channel < 0)
		return -1;
	evfd = lttng_new_fd(*channel, LTTNG_EVENT, &ev, event);
	if (evfd < 0 || lttng_ioctl(evfd, LTTNG_ENABLE, NULL, "event enable") < 0)
		return -1;
	return session;
}

/* A stream per CPU buffer, in CPU order, until the channel has no more. */
static int open_streams(int channel, int *streams)
{
	int n, fd;

	for (n = 0; n < MAX_CPUS; n++) {
		fd = ioctl(channel, LTTNG_STREAM, NULL);
		if (fd < 0)
			break;
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
			return fail("FD_CLOEXEC on a stream");
		streams[n] = fd;
	}
	if (!n)
		return fail("stream");
	return n;
}

/* The write position of a CPU's buffer, in bytes since it was made. */
static int sample(int stream, unsigned long *produced)
{
	if (lttng_ioctl(stream, RB_SAMPLE_POSITIONS, NULL, "sample positions") < 0 ||
	    lttng_ioctl(stream, RB_GET_PRODUCED, produced, "produced position") < 0)
		return -1;
	return 0;
}

/* COMMAND's exit status, or -1 if it could not be run. */
static int run(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return fail("fork");
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "lttng_flight: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return fail("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	static unsigned long before[MAX_CPUS], after[MAX_CPUS];
	static int streams[MAX_CPUS];
	int session, channel, n, i, status, fd;

	if (argc < 3) {
		fprintf(stderr, "usage: lttng_flight EVENT COMMAND [ARG...]\n");
		return 2;
	}
	session = lttng_setup(argv[1], &channel);
	if (session < 0)
		return 1;
	n = open_streams(channel, streams);
	if (n < 0)
		return 1;
	if (lttng_ioctl(session, LTTNG_SESSION_START, NULL, "session start") < 0)
		return 1;
	for (i = 0; i < n; i++)
		if (sample(streams[i], &before[i]) < 0)
			return 1;
	status = run(argv + 2);
	if (status < 0)
		return 1;
	for (i = 0; i < n; i++)
		if (sample(streams[i], &after[i]) < 0)
			return 1;
	/* Our files (all above stderr) closed: the session is destroyed. */
	for (fd = 3; fd <= streams[n - 1]; fd++)
		close(fd);
	for (i = 0; i < n; i++)
		printf("cpu=%d bytes=%lu\n", i, after[i] - before[i]);
	return status;
}
