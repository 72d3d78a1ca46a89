// SPDX-License-Identifier: GPL-2.0
/*
 * dti-stress-check - verify every record a reader got during `make stress`
 *
 *   dti-stress-check [--ts] [--replays] [--name LABEL] FILE|-
 *
 * Reads the text that a channel's merged file (or, with --ts, merged-ts,
 * `dti read -F ts`) gives, one record a line, and checks each record
 * that testsuite/modules/dti_stress.c, the stress script's markers or
 * dti_inject.stp wrote:
 *   - its checksum and every field derived from its count;
 *   - with --ts: the CPU in its header is the CPU it says logged it, the
 *     level is a record level, and each CPU's sequence numbers only grow;
 *   - each writer's count only grows among the records it logged on one
 *     CPU (no record repeated, none out of order).
 * --replays: the channel has a pending store (a handle's, or one that
 * dti_ctl_create() made), whose records are stored when replayed, with
 * the sequence number of the CPU that replays them under the CPU that
 * logged them: neither order is checked, only each record.
 * Prints one summary line,
 *   check LABEL lines=N text=N event=N binary=N reserve=N marker=N inject=N bad=N
 * with --ts also "percpu LABEL CPU=LINES...", and the first bad lines
 * with the reason.  Exit status 1 if any line
 * was bad, 2 on a usage or read error.
 *
 * The checksum is 32-bit FNV-1a, as in dti_stress.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_BASIS	0x811c9dc5U
#define HASH_PRIME	0x01000193U
#define BIN_MAGIC	"DTS1"
#define BIN_HEADER	20		/* struct dts_bin */
#define BIN_MIN		(BIN_HEADER + 4)
#define EVENT_ID	1		/* dti_stress.c's DEFINE_DTI_EVENT()s */
#define EVENT_HEX	"01 00 "	/* ... printed as hex: its id first */
#define INJECT_MUL	2654435761U
#define MARKER_MUL	7
#define MARKER_MOD	1000
#define MAX_CPUS	64
#define MAX_HOMES	64
#define NR_CTX		5		/* P S H N, and M for markers */
#define SHOW_BAD	5
#define LINE_MAX_LEN	65536

static const char ctx_chars[NR_CTX] = { 'P', 'S', 'H', 'N', 'M' };

struct counts {
	unsigned long lines, text, event, binary, reserve, marker, inject, bad;
};

struct checker {
	const char *label;
	int ts;
	int replays;
	struct counts n;
	/* last count per (logging CPU, context, home CPU); 0 = none yet */
	uint64_t last_n[MAX_CPUS][NR_CTX][MAX_HOMES];
	uint64_t last_seq[MAX_CPUS];	/* last seq + 1; 0 = none yet */
	unsigned long per_cpu[MAX_CPUS];	/* lines with a header, by CPU */
	int hdr_cpu;			/* CPU of the header, -1 without --ts */
};

static uint32_t hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t h = HASH_BASIS;

	while (n--)
		h = (h ^ *b++) * HASH_PRIME;
	return h;
}

static int bad(struct checker *c, const char *line, const char *fmt, ...)
{
	va_list ap;

	if (c->n.bad++ < SHOW_BAD) {
		printf("bad %s: line %lu: ", c->label, c->n.lines);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf(": %.200s\n", line);
	}
	return -1;
}

static int ctx_index(char ctx)
{
	const char *p = memchr(ctx_chars, ctx, NR_CTX);

	return p ? (int)(p - ctx_chars) : -1;
}

/* A writer's count on one CPU must grow. */
static int check_order(struct checker *c, const char *line, unsigned int cpu,
		       char ctx, unsigned int home, uint64_t n)
{
	int x = ctx_index(ctx);
	uint64_t *last;

	if (c->replays)
		return 0;
	if (x < 0 || cpu >= MAX_CPUS || home >= MAX_HOMES)
		return bad(c, line, "context %c, cpu %u or home %u out of range",
			   ctx, cpu, home);
	if (c->hdr_cpu >= 0 && cpu != (unsigned int)c->hdr_cpu)
		return bad(c, line, "logged on cpu%u, stored as cpu%d's", cpu,
			   c->hdr_cpu);
	last = &c->last_n[cpu][x][home];
	if (*last && n + 1 <= *last)
		return bad(c, line, "count %" PRIu64 " after %" PRIu64, n,
			   *last - 1);
	*last = n + 1;
	return 0;
}

static int check_fill(const char *fill, size_t len, uint64_t n)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (fill[i] != 'a' + (char)((n + i) % 26))
			return -1;
	return 0;
}

/* "dts KC hH cC nN fFILL kHASH" */
static int check_text(struct checker *c, const char *line, const char *p,
		      size_t len)
{
	const char *k = NULL, *q;
	unsigned int home, cpu, h;
	unsigned long long n;
	char kind, ctx;
	int used = 0;

	for (q = p; q + 2 <= p + len; q++)
		if (q[0] == ' ' && q[1] == 'k')
			k = q;
	if (!k || sscanf(k, " k%8x%n", &h, &used) != 1 || k + used != p + len)
		return bad(c, line, "no checksum at the end");
	if (h != hash(p, k - p))
		return bad(c, line, "checksum %08x, the text's is %08x", h,
			   hash(p, k - p));
	if (sscanf(p, "dts %c%c h%u c%u n%llu f%n", &kind, &ctx, &home, &cpu,
		   &n, &used) != 5 || !used)
		return bad(c, line, "not a stress record");
	if (check_fill(p + used, k - p - used, n))
		return bad(c, line, "letters do not follow from the count");
	switch (kind) {
	case 'T':
		c->n.text++;
		break;
	case 'E':
		c->n.event++;
		break;
	default:
		return bad(c, line, "kind %c in a text", kind);
	}
	return check_order(c, line, cpu, ctx, home, n);
}

static uint32_t le32(const unsigned char *b)
{
	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

/*
 * The stress's event type (id EVENT_ID, "dts %s h%u c%u n%u %s k%08x")
 * packed as <uapi/linux/dti_record.h> says: __u16 id, then __u16 length
 * and bytes for %s, 4 bytes for %u.  A reader prints such an event as hex
 * when it has not seen the type's format: a copy of a trace file that
 * starts in the middle of a sub-buffer, whose formats an earlier read
 * consumed.  Its values are turned back into the text and checked as
 * that.  Returns -2 if @b is not such an event.
 */
static int check_packed_event(struct checker *c, const char *line,
			      const unsigned char *b, size_t len)
{
	char text[LINE_MAX_LEN];
	size_t at = 2, slen[2], soff[2];
	uint32_t v[4];
	int i, s = 0, n = 0;

	if (len < 2 || (b[0] | b[1] << 8) != EVENT_ID)
		return -2;
	/* %s %u %u %u %s %u */
	for (i = 0; i < 6; i++) {
		if (i == 0 || i == 4) {
			if (at + 2 > len)
				return -2;
			slen[s] = b[at] | b[at + 1] << 8;
			soff[s] = at + 2;
			at += 2 + slen[s];
			if (at > len)
				return -2;
			s++;
		} else {
			if (at + 4 > len)
				return -2;
			v[n++] = le32(b + at);
			at += 4;
		}
	}
	if (at != len)
		return -2;
	snprintf(text, sizeof(text), "dts %.*s h%u c%u n%u %.*s k%08x",
		 (int)slen[0], (const char *)b + soff[0], v[0], v[1], v[2],
		 (int)slen[1], (const char *)b + soff[1], v[3]);
	return check_text(c, line, text, strlen(text));
}

/* Hex bytes, as the merged views print a binary payload */
static int check_binary(struct checker *c, const char *line, const char *p)
{
	unsigned char b[LINE_MAX_LEN / 3 + 1];
	size_t len = 0, fill;
	unsigned int home, byte;
	uint32_t n;
	int used;

	while (*p) {
		if (sscanf(p, "%2x%n", &byte, &used) != 1 || used != 2 ||
		    len >= sizeof(b))
			return bad(c, line, "not hex bytes");
		b[len++] = byte;
		p += used;
		if (*p == ' ')
			p++;
	}
	if (len < BIN_MIN || memcmp(b, BIN_MAGIC, 4)) {
		int ret = check_packed_event(c, line, b, len);

		if (ret != -2)
			return ret;
		return bad(c, line, "binary payload of %zu bytes, not a stress one", len);
	}
	if (le32(b + 16) != len)
		return bad(c, line, "%zu bytes, the payload says %u", len, le32(b + 16));
	if (le32(b + len - 4) != hash(b, len - 4))
		return bad(c, line, "checksum %08x, the payload's is %08x",
			   le32(b + len - 4), hash(b, len - 4));
	n = le32(b + 12);
	fill = len - BIN_MIN;
	if (check_fill((const char *)b + BIN_HEADER, fill, n))
		return bad(c, line, "filling does not follow from the count");
	switch (b[4]) {
	case 'B':
		c->n.binary++;
		break;
	case 'R':
		c->n.reserve++;
		break;
	default:
		return bad(c, line, "kind %c in a binary payload", b[4]);
	}
	home = b[6] | b[7] << 8;
	return check_order(c, line, le32(b + 8), b[5], home, n);
}

/* "COMM[PID]: dts M hW nN zZ": writer W, Z = N * MARKER_MUL % MARKER_MOD */
static int check_marker(struct checker *c, const char *line, const char *p)
{
	unsigned long long n, z;
	unsigned int w;
	int used = 0;

	if (sscanf(p, "dts M h%u n%llu z%llu%n", &w, &n, &z, &used) != 3 ||
	    p[used])
		return bad(c, line, "not a stress marker");
	if (z != n * MARKER_MUL % MARKER_MOD)
		return bad(c, line, "marker %llu says %llu", n, z);
	c->n.marker++;
	if (c->hdr_cpu < 0)
		return 0;	/* which CPU logged it is not in the text */
	return check_order(c, line, c->hdr_cpu, 'M', w, n);
}

/* dti_inject.stp: "dts_inject_point n=0xN k=0xK", K = N * INJECT_MUL */
static int check_inject(struct checker *c, const char *line, const char *p)
{
	unsigned long long n, k;
	int used = 0;

	if (sscanf(p, "dts_inject_point n=%llx k=%llx%n", &n, &k, &used) != 2 ||
	    p[used])
		return bad(c, line, "not an injected record");
	if ((uint32_t)(n * INJECT_MUL) != k)
		return bad(c, line, "k is not n * %u", INJECT_MUL);
	c->n.inject++;
	return 0;
}

/* "[SEC.NSEC] cpuN Llevel #seq CALLER: " -> the payload, or NULL */
static const char *parse_header(struct checker *c, const char *line)
{
	unsigned long sec, nsec;
	unsigned long long seq;
	unsigned int cpu;
	int level, used = 0;
	const char *p;

	if (sscanf(line, "[%lu.%lu] cpu%u L%d #%llu %n", &sec, &nsec, &cpu,
		   &level, &seq, &used) != 5 || !used) {
		bad(c, line, "no merged-ts header");
		return NULL;
	}
	p = strstr(line + used, ": ");
	if (!p) {
		bad(c, line, "no caller");
		return NULL;
	}
	if (cpu >= MAX_CPUS || level < 0 || level > 7) {
		bad(c, line, "cpu %u or level %d out of range", cpu, level);
		return NULL;
	}
	if (!c->replays && c->last_seq[cpu] && seq + 1 <= c->last_seq[cpu]) {
		bad(c, line, "cpu%u's seq %llu after %" PRIu64, cpu, seq,
		    c->last_seq[cpu] - 1);
		return NULL;
	}
	c->last_seq[cpu] = seq + 1;
	c->per_cpu[cpu]++;
	c->hdr_cpu = cpu;
	return p + 2;
}

static void check_line(struct checker *c, char *line)
{
	size_t len = strlen(line);
	const char *p = line, *m;

	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	c->n.lines++;
	c->hdr_cpu = -1;
	if (c->ts && !(p = parse_header(c, line)))
		return;
	if (!strncmp(p, "dts ", 4))
		check_text(c, line, p, strlen(p));
	else if (!strncmp(p, "44 54 53 31", 11) || !strncmp(p, EVENT_HEX, strlen(EVENT_HEX)))
		check_binary(c, line, p);
	else if (!strncmp(p, "dts_inject_point ", 17))
		check_inject(c, line, p);
	else if ((m = strstr(p, "]: dts M ")))
		check_marker(c, line, m + 3);
	else
		bad(c, line, "not written by the stress");
}

static int usage(FILE *f, int status)
{
	fputs("usage: dti-stress-check [--ts] [--replays] [--name LABEL] FILE|-\n", f);
	return status;
}

int main(int argc, char **argv)
{
	static struct checker c;
	static char line[LINE_MAX_LEN];
	const char *path = NULL;
	FILE *in;
	int i;

	c.label = "-";
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ts"))
			c.ts = 1;
		else if (!strcmp(argv[i], "--replays"))
			c.replays = 1;
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			c.label = argv[++i];
		else if (!strcmp(argv[i], "--help"))
			return usage(stdout, 0);
		else if (!path)
			path = argv[i];
		else
			return usage(stderr, 2);
	}
	if (!path)
		return usage(stderr, 2);
	in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!in) {
		fprintf(stderr, "dti-stress-check: %s: %s\n", path, strerror(errno));
		return 2;
	}
	while (fgets(line, sizeof(line), in))
		check_line(&c, line);
	if (ferror(in)) {
		fprintf(stderr, "dti-stress-check: %s: read error: %s\n", path,
			strerror(errno));
		return 2;
	}
	printf("check %s lines=%lu text=%lu event=%lu binary=%lu reserve=%lu marker=%lu inject=%lu bad=%lu\n",
	       c.label, c.n.lines, c.n.text, c.n.event, c.n.binary,
	       c.n.reserve, c.n.marker, c.n.inject, c.n.bad);
	if (c.ts) {
		printf("percpu %s", c.label);
		for (i = 0; i < MAX_CPUS; i++)
			if (c.per_cpu[i])
				printf(" %d=%lu", i, c.per_cpu[i]);
		putchar('\n');
	}
	return c.n.bad ? 1 : 0;
}
