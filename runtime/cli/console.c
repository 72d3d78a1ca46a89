// SPDX-License-Identifier: GPL-2.0
/*
 * dti console-log FILE: the records dti.ko printed on the console when
 * the kernel panicked (dump_on_panic, kmod/dti_panic.c), read back out
 * of a saved console log and printed as `dti read` prints a channel.
 *
 * Every line of the panic output holds "dti: panic: ", wherever the log
 * put it: after the kernel's "[  12.345678] ", a syslog or journal
 * prefix, or another message that was cut.  The other lines are not
 * looked at.  A channel's records lie between its begin and end lines;
 * each record line is `dti read --format ts`'s, with the payload escaped
 * (see kmod/dti_panic.c), so the record comes back whole: time, CPU,
 * level, sequence number, caller, flags text or binary, payload.  The
 * records of each channel become one stream per CPU in memory, which
 * libdti reads as it reads per-CPU files.
 *
 * The module table comes before the channels, a "module" line per entry
 * ("dti: panic: module NAME 0xTEXT ...", as <debugfs>/dti/.modules), for
 * --lines.
 *
 * Damage (exit status 2, a message naming the line): a record line that
 * does not parse, a payload cut short on the console, a section the log
 * ends inside of (its last record may be cut), an end line whose count
 * differs from the records read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dti-cli.h"

const char usage_console_log[] =
	"usage: dti console-log [options] FILE\n"
	"\nRead the records dti.ko printed on the console at a panic (channels with\n"
	"dump_on_panic set) out of a saved console log (serial console capture,\n"
	"netconsole, dmesg, journal or syslog; '-' is standard input) and print\n"
	"each channel's records merged by time, as 'dti read' would, each after a\n"
	"line \"==> NAME <==\".  --lines uses the module table printed before them.\n"
	"\n"
	"      --channel NAME    only channel NAME (no header line)\n"
	DTI_HELP_FORMAT
	DTI_HELP_TAIL;

/* What every line of the panic output holds, and its frame lines */
#define DTI_PANIC_TAG		"dti: panic: "
#define DTI_BEGIN		"---- begin "
#define DTI_END			"---- end "
/* A line of the module table, printed before the channels */
#define DTI_MODULE		"module "
/* The payload marks of kmod/dti_panic.c */
#define DTI_BIN_MARK		"<bin>"
/* Most CPUs a console section can name */
#define DTI_CON_CPUS		4096
/*
 * Longest payload a record can have: what a sub-buffer of dti.ko's
 * largest (4 MiB, DTI_SUBBUF_SIZE_MAX of <linux/dti.h>) holds.  A longer
 * one is no record dti.ko printed, and a reader would take it for damage
 * and drop what follows it.
 */
#define DTI_CON_PAYLOAD_MAX	((4u << 20) - DTI_SUBBUF_HEADER_SIZE - sizeof(struct dti_record))

/* One channel's records, one growing stream per CPU */
struct dti_con_chan {
	char name[DTI_NAME_MAX + 1];
	unsigned char *buf[DTI_CON_CPUS];
	size_t len[DTI_CON_CPUS], cap[DTI_CON_CPUS];
	unsigned int n_cpus;		/* highest CPU with a buffer + 1 */
	uint64_t records;
	unsigned int damage;		/* damaged places reported */
	bool open;			/* inside its begin and end lines */
	unsigned long begin_line;
	struct dti_con_chan *next;
};

struct dti_con {
	const char *path;
	/* the module table printed before the channels ("module" lines) */
	struct dti_module *mods;
	size_t n_mods, cap_mods;
	bool mods_closed;		/* a channel began after them */
	unsigned long mods_line;	/* the line of the first of them */
	const char *only;		/* --channel: damage of others not told */
	struct dti_con_chan *chans, **tail;
	unsigned long line;
	unsigned int damage;		/* damage outside any channel */
	bool quiet;
};

/* Report damage at the current line, of channel @ch (NULL: of none) */
static void dti_con_damage(struct dti_con *c, struct dti_con_chan *ch, const char *fmt,
			   const char *name)
{
	if (ch)
		ch->damage++;
	else
		c->damage++;
	if (!c->quiet && (!ch || !c->only || !strcmp(ch->name, c->only))) {
		fflush(NULL);
		fprintf(stderr, "dti: %s:%lu: ", c->path, c->line);
		fprintf(stderr, fmt, name);
		fputc('\n', stderr);
	}
}

static struct dti_con_chan *dti_con_find(struct dti_con *c, const char *name, size_t len)
{
	struct dti_con_chan *ch;

	for (ch = c->chans; ch; ch = ch->next)
		if (strlen(ch->name) == len && !memcmp(ch->name, name, len))
			return ch;
	return NULL;
}

/* Append the record to @cpu's stream; 0, or -1 (ENOMEM) */
static int dti_con_add(struct dti_con_chan *ch, unsigned int cpu,
		       const struct dti_record *hdr, const unsigned char *payload)
{
	size_t size = DTI_RECORD_SIZE(hdr->len), cap;
	unsigned char *p;

	if (ch->len[cpu] + size > ch->cap[cpu]) {
		cap = ch->cap[cpu] ? ch->cap[cpu] : 4096;
		while (cap < ch->len[cpu] + size)
			cap *= 2;
		p = realloc(ch->buf[cpu], cap);
		if (!p)
			return -1;
		ch->buf[cpu] = p;
		ch->cap[cpu] = cap;
	}
	p = ch->buf[cpu] + ch->len[cpu];
	memset(p, 0, size);
	memcpy(p, hdr, sizeof(*hdr));
	memcpy(p + sizeof(*hdr), payload, hdr->len);
	ch->len[cpu] += size;
	if (cpu >= ch->n_cpus)
		ch->n_cpus = cpu + 1;
	ch->records++;
	return 0;
}

static int dti_hexval(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
	       ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/*
 * Decode the payload text @s into @out (room for strlen(@s) + 1 bytes),
 * setting *@text and *@cut.  Returns its length, or -1 if it does not
 * parse.
 */
static long dti_con_payload(const char *s, unsigned char *out, bool *text, bool *cut)
{
	size_t n = 0;
	int hi, lo;

	*cut = false;
	*text = strncmp(s, DTI_BIN_MARK, strlen(DTI_BIN_MARK)) != 0;
	if (!*text) {
		for (s += strlen(DTI_BIN_MARK); *s; s += 3) {
			if (!strcmp(s, " \\~")) {
				*cut = true;
				break;
			}
			if (s[0] != ' ' || (hi = dti_hexval(s[1])) < 0 ||
			    (lo = dti_hexval(s[2])) < 0)
				return -1;
			out[n++] = hi << 4 | lo;
		}
		return n;
	}
	for (; *s; s++) {
		if (*s != '\\') {
			out[n++] = *s;
			continue;
		}
		switch (*++s) {
		case '\\':
			out[n++] = '\\';
			break;
		case 'n':
			out[n++] = '\n';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'x':
			if ((hi = dti_hexval(s[1])) < 0 || (lo = dti_hexval(s[2])) < 0)
				return -1;
			out[n++] = hi << 4 | lo;
			s += 2;
			break;
		case 'c':	/* no newline at the end */
		case '~':	/* cut short */
			if (s[1])
				return -1;
			*cut = *s == '~';
			return n;
		default:
			return -1;
		}
	}
	out[n++] = '\n';	/* the final newline the line leaves out */
	return n;
}

/*
 * A record line of channel @ch: "[S.N] cpuC LL #SEQ 0xCALLER: PAYLOAD".
 * 0, 1 if it does not parse (damage reported), -1 (ENOMEM).
 */
static int dti_con_record(struct dti_con *c, struct dti_con_chan *ch, const char *s)
{
	struct dti_record hdr = {
		.magic = DTI_RECORD_MAGIC, .version = DTI_RECORD_VERSION_1,
		.hdr_len = sizeof(hdr),
	};
	unsigned long long sec, seq, caller;
	unsigned int nsec, cpu;
	unsigned char *payload;
	int level, used = 0;
	bool text, cut;
	long n;

	if (sscanf(s, " [%llu.%9u] cpu%u L%d #%llu 0x%llx: %n", &sec, &nsec, &cpu, &level,
		   &seq, &caller, &used) < 6 || !used || cpu >= DTI_CON_CPUS ||
	    level < DTI_LEVEL_EMERG || level > DTI_LEVEL_MAX) {
		dti_con_damage(c, ch, "a record line of channel %s does not parse; skipped",
			       ch->name);
		return 1;
	}
	payload = malloc(strlen(s + used) + 1);
	if (!payload)
		return -1;
	n = dti_con_payload(s + used, payload, &text, &cut);
	if (n < 0 || (size_t)n > DTI_CON_PAYLOAD_MAX) {
		free(payload);
		dti_con_damage(c, ch, n < 0 ?
			       "a record of channel %s has a payload that does not parse; skipped" :
			       "a record of channel %s is longer than any record can be; skipped",
			       ch->name);
		return 1;
	}
	if (cut)
		dti_con_damage(c, ch, "a record of channel %s was cut short to fit the console line",
			       ch->name);
	hdr.flags = text ? DTI_REC_TEXT : 0;
	hdr.level = level;
	hdr.cpu = cpu;
	hdr.log_cpu = cpu;
	hdr.len = n;
	hdr.seq = seq;
	hdr.ts_ns = sec * 1000000000ull + nsec;
	hdr.caller = caller;
	n = dti_con_add(ch, cpu, &hdr, payload);
	free(payload);
	return n < 0 ? -1 : 0;
}

/* A begin line: open the channel's section (a new channel, or again) */
static int dti_con_begin(struct dti_con *c, const char *s)
{
	size_t len = strcspn(s, ":");
	struct dti_con_chan *ch;

	if (!s[len] || !len || len > DTI_NAME_MAX) {
		dti_con_damage(c, NULL, "%s line that does not parse", "a begin");
		return 0;
	}
	ch = dti_con_find(c, s, len);
	if (ch && ch->open)
		dti_con_damage(c, ch, "channel %s begins again before it ended: the log lost lines",
			       ch->name);
	if (ch) {
		/* printed again (an oops, then the panic): the later one counts */
		if (!ch->open && !c->quiet && (!c->only || !strcmp(ch->name, c->only)))
			dti_warn("%s:%lu: channel %s is printed again; its records from line %lu are replaced",
				 c->path, c->line, ch->name, ch->begin_line);
		/* n_cpus stays: the buffers up to it are reused, then freed */
		memset(ch->len, 0, sizeof(ch->len));
		ch->records = 0;
	} else {
		ch = calloc(1, sizeof(*ch));
		if (!ch)
			return -1;
		memcpy(ch->name, s, len);
		*c->tail = ch;
		c->tail = &ch->next;
	}
	ch->open = true;
	ch->begin_line = c->line;
	return 0;
}

/* An end line: "NAME: R records[, capped: ...] ----" */
static void dti_con_end(struct dti_con *c, const char *s)
{
	size_t len = strcspn(s, ":");
	struct dti_con_chan *ch = dti_con_find(c, s, len);
	unsigned long long want;

	if (!ch || !ch->open) {
		dti_con_damage(c, ch, "the end of a channel whose beginning is not in the log (%s)",
			       ch ? ch->name : "?");
		return;
	}
	ch->open = false;
	if (sscanf(s + len, ": %llu records", &want) != 1 || want != ch->records)
		dti_con_damage(c, ch, "channel %s ends with another count of records than were read: lines were lost",
			       ch->name);
}

/*
 * A module line, "module NAME 0xTEXT ...", the entry as <debugfs>/dti/
 * .modules has it.  A table printed again (an oops, then the panic)
 * replaces the one before.  One that does not parse is left out, with a
 * warning.  0, or -1 (ENOMEM).
 */
static int dti_con_module(struct dti_con *c, const char *s)
{
	struct dti_module *e, *n;
	char src[32];
	int k;

	if (c->mods_closed) {
		c->n_mods = 0;
		c->mods_closed = false;
	}
	if (!c->n_mods)
		c->mods_line = c->line;
	if (c->n_mods == c->cap_mods) {
		c->cap_mods = c->cap_mods ? 2 * c->cap_mods : 16;
		n = realloc(c->mods, c->cap_mods * sizeof(*n));
		if (!n)
			return -1;
		c->mods = n;
	}
	strcpy(src, "-");
	k = dti_modules_parse(s, strlen(s), src, &e);
	if (k < 0 && errno == ENOMEM)
		return -1;
	if (k < 0) {
		/* "-:1: what is wrong: the line" */
		if (!c->quiet)
			dti_warn("%s:%lu: a module line that does not parse (left out): %s",
				 c->path, c->line, dti_errmsg() + strlen(src) + 4);
		return 0;
	}
	if (k == 1)
		c->mods[c->n_mods++] = *e;
	free(e);
	return 0;
}

/* One line of the log */
static int dti_con_line(struct dti_con *c, char *line)
{
	struct dti_con_chan *ch;
	char *s = strstr(line, DTI_PANIC_TAG);
	size_t len;

	if (!s)
		return 0;
	s += strlen(DTI_PANIC_TAG);
	line[strcspn(line, "\r\n")] = '\0';
	if (!strncmp(s, DTI_MODULE, strlen(DTI_MODULE)))
		return dti_con_module(c, s + strlen(DTI_MODULE));
	if (!strncmp(s, DTI_BEGIN, strlen(DTI_BEGIN))) {
		c->mods_closed = c->n_mods > 0;
		return dti_con_begin(c, s + strlen(DTI_BEGIN));
	}
	if (!strncmp(s, DTI_END, strlen(DTI_END))) {
		dti_con_end(c, s + strlen(DTI_END));
		return 0;
	}
	len = strcspn(s, ":");
	ch = dti_con_find(c, s, len);
	if (!ch || !ch->open || strncmp(s + len, ": [", 3))
		return 0;	/* "kernel panic: ...", "---- NAME: no buffers ----" */
	return dti_con_record(c, ch, s + len + 1) < 0 ? -1 : 0;
}

static void dti_con_free(struct dti_con *c)
{
	struct dti_con_chan *ch, *next;
	unsigned int cpu;

	for (ch = c->chans; ch; ch = next) {
		next = ch->next;
		for (cpu = 0; cpu < ch->n_cpus; cpu++)
			free(ch->buf[cpu]);
		free(ch);
	}
	free(c->mods);
}

/* Read the log; DTI_EXIT_OK or DTI_EXIT_FAIL (message printed) */
static int dti_con_read(struct dti_con *c, FILE *f)
{
	struct dti_con_chan *ch;
	size_t cap = 0;
	char *line = NULL;

	while (getline(&line, &cap, f) >= 0) {
		c->line++;
		if (dti_con_line(c, line) < 0) {
			free(line);
			return dti_err("out of memory");
		}
	}
	free(line);
	if (ferror(f))
		return dti_err("%s: %s", c->path, strerror(errno));
	for (ch = c->chans; ch; ch = ch->next)
		if (ch->open)
			dti_con_damage(c, ch, "the log ends inside channel %s's records: it was cut, and the last of them may be incomplete",
				       ch->name);
	return DTI_EXIT_OK;
}

/* Print every channel read (or the one --channel names) */
static int dti_con_print(struct dti_con *c, struct dti_read_opts *o)
{
	const void *bufs[DTI_CON_CPUS];
	struct dti_con_chan *ch;
	int ret = DTI_EXIT_OK, shown = 0;
	unsigned int cpu, n;

	for (ch = c->chans; ch; ch = ch->next) {
		if (o->channel && strcmp(ch->name, o->channel))
			continue;
		for (cpu = n = 0; cpu < ch->n_cpus; cpu++)
			if (ch->len[cpu]) {
				bufs[n] = ch->buf[cpu];
				ch->len[n++] = ch->len[cpu];
			}
		dti_print_channel_head(o, ch->name, shown++);
		o->chan_name = ch->name;
		ret = dti_exit_worst(ret, dti_read_print(dti_open_mem(bufs, ch->len, n, o->strict ? DTI_OPEN_STRICT : 0), o));
		ret = dti_exit_worst(ret, ch->damage ? DTI_EXIT_DAMAGE : DTI_EXIT_OK);
	}
	if (o->channel && !shown)
		return dti_err("%s: no channel %s in the log", c->path, o->channel);
	if (!c->chans)
		return dti_err("%s: no DTI records printed at a panic in this log (no \"%s" DTI_BEGIN "\" line)",
			       c->path, DTI_PANIC_TAG);
	return ret;
}

int cmd_console_log(int argc, char **argv)
{
	struct dti_con c = { 0 };
	struct dti_read_opts o;
	FILE *f;
	int ret = dti_read_parse("console-log", argc, argv, 1, 1, &o);

	if (ret >= 0)
		return ret;
	c.path = argv[optind];
	c.tail = &c.chans;
	c.quiet = o.quiet;
	c.only = o.channel;
	f = strcmp(c.path, "-") ? fopen(c.path, "r") : stdin;
	if (!f)
		return dti_read_finish(&o, dti_err("%s: %s", c.path, strerror(errno)));
	ret = dti_con_read(&c, f);
	if (f != stdin)
		fclose(f);
	if (ret == DTI_EXIT_OK && c.n_mods)
		ret = dti_read_lines_table(&o, c.mods, c.n_mods, NULL);
	else if (ret == DTI_EXIT_OK)
		ret = dti_read_lines_table(&o, NULL, -1,
					   "no module table in the log (\"" DTI_PANIC_TAG DTI_MODULE
					   "...\" lines: a dti.ko without one?)");
	if (ret == DTI_EXIT_OK)
		ret = dti_con_print(&c, &o);
	if (ret == DTI_EXIT_OK && c.damage)
		ret = DTI_EXIT_DAMAGE;
	dti_con_free(&c);
	return dti_read_finish(&o, ret);
}
