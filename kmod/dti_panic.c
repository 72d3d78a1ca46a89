// SPDX-License-Identifier: GPL-2.0
/*
 * DTI on the console when the kernel panics: the newest records of the
 * channels that ask for it, merged by time, bounded.
 *
 * A channel opts in through its dump_on_panic file: how many of the
 * newest records of each CPU to print (0: none).  The dump_on_panic
 * module parameter is the value channels registered later start with.
 * panic_max_lines and panic_max_bytes cap what all channels print
 * together; each channel gets an even share of what is left, so one
 * large channel cannot stall the panic or crowd out the others.  When a
 * channel's selection does not fit its share, its oldest records are
 * left out, never the newest, and its end line says how many.
 * dump_on_oops prints the same at an oops, whether it panics or not
 * (the panic that follows an oops with panic_on_oops then says the
 * records are above instead of printing them again).  The sysrq key
 * (dti_stop.c) prints every channel, sysrq_records per CPU of one
 * without dump_on_panic.  The channels whose stop_on asks are stopped
 * (dti_stop.c) at the oops or the panic before anything is printed.
 *
 * Output, on the console at KERN_EMERG, each line "dti: panic: ...":
 *
 *   module NAME 0xTEXT 0xTEXT_SIZE BUILD_ID STATE LOADED_NS UNLOADED_NS
 *   ...
 *   ---- begin NAME: newest N per CPU, R records from CPUs LIST ----
 *   NAME: [    3.885676828] cpu0 L6 #840 0xffffffffc03734bf: w0 840
 *   ...
 *   ---- end NAME: R records ----
 *   ---- end NAME: R records, capped: K older ones not printed ----
 *
 * A record line is `dti read --format ts`'s line for the record, the
 * caller as an address, with its payload escaped so that the line is
 * the record exactly (`dti console-log` reads it back): a backslash is
 * "\\", a newline but a final one "\n", a tab "\t", other control bytes,
 * DEL, bytes above 0x7f and a leading '<' "\xNN"; "\c" ends a text
 * that does not end in a newline; a binary payload is "<bin>" and its
 * bytes in hex; "\~" ends a payload cut short to fit a console line.
 *
 * What a panicking kernel allows: no sleeping, no allocation (the
 * cursors and the line buffer are allocated at load), no IPI.  No lock
 * is taken: the channel list and the buffers are reached under RCU, so
 * a CPU stopped while creating or freeing buffers leaves either the old
 * pointer or the new one, both whole.  The one guard, against a second
 * CPU that panics or oopses at the same time, is an atomic flag taken
 * by trylock; the loser prints "skipped: busy".  Nothing another CPU
 * wrote is trusted: it may have stopped anywhere.  A sub-buffer is read
 * only if its header is one of this ring's, of the channel's generation
 * and of the slot's number, and only as many records as the header
 * counts, each checked (magic, version, length, CPU, rising sequence
 * number); the count grows only after a record is complete, so a writer
 * stopped in the middle of one, on another CPU or on this one under the
 * panic, leaves nothing half-written to print.  While a channel is read
 * its write guard is held on this CPU, so a probe on printk that logs
 * into DTI is refused (counted as nested) rather than changing the ring
 * being read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": panic: " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/notifier.h>
#include <linux/rculist.h>
#include <linux/relay.h>
#include <linux/slab.h>

#include "dti_internal.h"

/*
 * Defaults of the caps.  The lines wait in the printk buffer until a
 * console prints them (at panic, once the notifiers are done): 64 KiB is
 * half of Debian's (CONFIG_LOG_BUF_SHIFT=17), leaving room for the panic's
 * own messages, and about 6 s on a 115200-baud serial line.
 */
#define DTI_PANIC_MAX_LINES	2000
#define DTI_PANIC_MAX_BYTES	(64 << 10)
/* Longest line printed, within printk's limit for one message */
#define DTI_PANIC_LINE_MAX	768
/* Room kept at the end of a line for "\~" and the terminating NUL */
#define DTI_PANIC_LINE_TAIL	4
/* Newest records per CPU the sysrq key prints of a channel that asked none */
#define DTI_SYSRQ_RECORDS	20

static unsigned int dti_panic_default;
module_param_named(dump_on_panic, dti_panic_default, uint, 0644);
MODULE_PARM_DESC(dump_on_panic,
		 "newest records per CPU printed at panic for channels registered from now on (0: none)");

static unsigned int dti_panic_max_lines = DTI_PANIC_MAX_LINES;
module_param_named(panic_max_lines, dti_panic_max_lines, uint, 0644);
MODULE_PARM_DESC(panic_max_lines, "record lines all channels print at panic, at most");

static unsigned int dti_panic_max_bytes = DTI_PANIC_MAX_BYTES;
module_param_named(panic_max_bytes, dti_panic_max_bytes, uint, 0644);
MODULE_PARM_DESC(panic_max_bytes, "bytes of record lines all channels print at panic, at most");

static bool dti_panic_on_oops;
module_param_named(dump_on_oops, dti_panic_on_oops, bool, 0644);
MODULE_PARM_DESC(dump_on_oops,
		 "print the dump_on_panic records at an oops that does not panic too");

/**
 * struct dti_panic_cursor - where the walk of one CPU's ring stands
 * @start:	the ring
 * @cpu:	its CPU
 * @first:	number of the oldest sub-buffer that may hold records
 * @last:	number of the newest
 * @s:		number of the sub-buffer being read
 * @walk:	the walk of its records
 * @seq:	sequence number of the last record returned
 * @older:	valid records before the selection
 * @skip:	valid records still to pass over before the selection
 * @rec:	the next record of the selection, as read (an oops does not
 *		stop writers: it is checked before it is printed)
 * @have:	@rec holds a record; false at the selection's end
 */
struct dti_panic_cursor {
	const void *start;
	unsigned int cpu;
	size_t first, last, s;
	struct dti_walk walk;
	u64 seq;
	u64 older, skip;
	struct dti_rview rec;
	bool have;
};

/* One per possible CPU, and the line: allocated at load */
static struct dti_panic_cursor *dti_panic_cursors;
static char *dti_panic_line;
static struct cpumask dti_panic_cpus;
static atomic_t dti_panic_busy = ATOMIC_INIT(0);
/* The CPU that printed at its oops (dump_on_oops), else -1 */
static int dti_panic_oops_cpu = -1;

/**
 * dti_panic_default_records - what dump_on_panic a new channel starts with
 *
 * Context: any.
 * Return: the dump_on_panic module parameter.
 */
unsigned int dti_panic_default_records(void)
{
	return READ_ONCE(dti_panic_default);
}

/*
 * Whether @rec is a sound header of sub-buffer @s of @ch's current ring,
 * CPU @cpu's
 */
static bool dti_panic_header_ok(struct dti_channel *ch, const struct dti_record *rec,
				size_t s, unsigned int cpu, u32 *records)
{
	const struct dti_subbuf_info *info = (const void *)(rec + 1);
	size_t room = ch->subbuf_size - DTI_SUBBUF_HEADER_SIZE;

	if (rec->magic != DTI_RECORD_MAGIC || rec->version != DTI_RECORD_VERSION ||
	    rec->hdr_len != sizeof(*rec) || !(rec->flags & DTI_REC_SUBBUF) ||
	    rec->len != sizeof(*info) || rec->seq != s || rec->cpu != cpu ||
	    info->generation != READ_ONCE(ch->dump.generation))
		return false;
	/* pairs with the writer's release: the records counted are whole */
	*records = smp_load_acquire(&info->records);
	return *records <= room / sizeof(struct dti_crec);
}

/* Open the next sub-buffer from c->s on whose header is sound. */
static bool dti_panic_open_subbuf(struct dti_channel *ch, struct dti_panic_cursor *c)
{
	const struct dti_record *hdr;
	u32 records;

	for (; c->s <= c->last; c->s++) {
		hdr = c->start + (c->s % ch->n_subbufs) * ch->subbuf_size;
		if (dti_panic_header_ok(ch, hdr, c->s, c->cpu, &records) &&
		    dti_walk_start(&c->walk, hdr, ch->subbuf_size, records))
			return true;
	}
	return false;
}

/*
 * Move c->rec to the next whole record of the ring, passing over c->skip
 * of them first.  A record that fails a check ends its sub-buffer.
 */
static void dti_panic_advance(struct dti_channel *ch, struct dti_panic_cursor *c)
{
	struct dti_rview *rec = &c->rec;

	for (;;) {
		/* a header may count more records than its sub-buffer holds */
		if (!dti_walk_next(&c->walk, rec)) {
			c->s++;
			if (!dti_panic_open_subbuf(ch, c)) {
				c->have = false;
				return;
			}
			continue;
		}
		/* the event formats framing a sub-buffer are not shown */
		if (rec->flags & DTI_REC_FORMAT)
			continue;
		if (c->seq != U64_MAX && rec->seq <= c->seq) {
			c->walk.left = 0;
			continue;
		}
		c->seq = rec->seq;
		if (c->skip) {
			c->skip--;
			continue;
		}
		c->have = true;
		return;
	}
}

/* Put @c on the first record of @buf's ring, after @skip of them. */
static void dti_panic_cursor_start(struct dti_channel *ch, struct dti_panic_cursor *c,
				   u64 skip)
{
	c->s = c->first;
	c->seq = U64_MAX;
	c->skip = skip;
	if (dti_panic_open_subbuf(ch, c))
		dti_panic_advance(ch, c);
	else
		c->have = false;
}

/*
 * Set up @c for CPU @cpu's buffer @buf: the sub-buffers that may hold
 * records, as the merged views take them, and the newest @want records
 * of them selected.  Returns how many are selected.
 */
static u64 dti_panic_cursor_init(struct dti_channel *ch, struct dti_panic_cursor *c,
				 struct rchan_buf *buf, unsigned int cpu, u64 want)
{
	size_t produced = READ_ONCE(buf->subbufs_produced);
	size_t offset = READ_ONCE(buf->offset);
	u64 count = 0;

	c->start = buf->start;
	c->cpu = cpu;
	dti_ring_range(produced, offset, ch->subbuf_size, ch->n_subbufs, &c->first, &c->last);
	for (dti_panic_cursor_start(ch, c, 0); c->have; dti_panic_advance(ch, c))
		count++;
	c->older = count > want ? count - want : 0;
	dti_panic_cursor_start(ch, c, c->older);
	return min(count, want);
}

/* Put the @n cursors back on the first record of their selection */
static void dti_panic_rewind(struct dti_channel *ch, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dti_panic_cursor_start(ch, &dti_panic_cursors[i], dti_panic_cursors[i].older);
}

/* The cursor whose record comes first (ties: the lower CPU), or NULL */
static struct dti_panic_cursor *dti_panic_first(unsigned int n)
{
	struct dti_panic_cursor *best = NULL, *c;

	for (c = dti_panic_cursors; c < dti_panic_cursors + n; c++)
		if (c->have && (!best || c->rec.ts_ns < best->rec.ts_ns))
			best = c;
	return best;
}

/* Append @fmt to the line at *@at, within DTI_PANIC_LINE_MAX */
static __printf(2, 3) void dti_panic_put(size_t *at, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	*at += vscnprintf(dti_panic_line + *at, DTI_PANIC_LINE_MAX - *at, fmt, args);
	va_end(args);
}

/* Whether a text byte is escaped as \xNN (see the file comment) */
static bool dti_panic_escape(u8 b, size_t i)
{
	return b < ' ' || b >= 0x7f || (b == '<' && !i);
}

/* The @len bytes of payload of @rec, escaped, after the prefix at *@at */
static void dti_panic_payload(const struct dti_rview *rec, size_t *at)
{
	const size_t room = DTI_PANIC_LINE_MAX - DTI_PANIC_LINE_TAIL;
	const u8 *p = rec->payload;
	u32 len = rec->len;
	size_t i, n = len;
	bool text = rec->flags & DTI_REC_TEXT;

	if (!text)
		dti_panic_put(at, "<bin>");
	if (text && n && p[n - 1] == '\n')
		n--;
	for (i = 0; i < n && *at < room - 4; i++) {
		if (!text)
			dti_panic_put(at, " %02x", p[i]);
		else if (p[i] == '\\')
			dti_panic_put(at, "\\\\");
		else if (p[i] == '\n')
			dti_panic_put(at, "\\n");
		else if (p[i] == '\t')
			dti_panic_put(at, "\\t");
		else if (dti_panic_escape(p[i], i))
			dti_panic_put(at, "\\x%02x", p[i]);
		else
			dti_panic_line[(*at)++] = p[i];
	}
	dti_panic_line[*at] = '\0';
	if (i < n)
		dti_panic_put(at, "%s\\~", text ? "" : " ");
	else if (text && n == len)
		dti_panic_put(at, "\\c");
}

/*
 * Format the record of @c into dti_panic_line; returns its length, or 0
 * if the record may have been written over while it was copied.  At an
 * oops the other CPUs go on writing: a writer that reuses the slot of a
 * sub-buffer writes its new header first (dti_subbuf_start()), so a
 * header still numbered c->s after the copy means the copy is whole.
 */
static size_t dti_panic_format(struct dti_channel *ch, const struct dti_panic_cursor *c)
{
	const struct dti_record *hdr = c->start + (c->s % ch->n_subbufs) * ch->subbuf_size;
	const struct dti_rview *rec = &c->rec;
	size_t at = 0;
	u32 nsec;
	u64 sec;

	sec = div_u64_rem(rec->ts_ns, NSEC_PER_SEC, &nsec);
	dti_panic_put(&at, "[%5llu.%09u] cpu%u L%d #%llu 0x%llx: ", sec, nsec,
		      rec->log_cpu, rec->level, rec->seq, rec->caller);
	dti_panic_payload(rec, &at);
	smp_rmb();	/* pairs with smp_wmb() in dti_subbuf_start() */
	return READ_ONCE(hdr->seq) == c->s ? at : 0;
}

/**
 * struct dti_panic_pass - one merge of a channel's selected records
 * @skip_lines:	pass over at least this many of the oldest records
 * @skip_bytes:	and at least this many bytes of their lines
 * @print:	print the others (else only count them)
 * @skipped:	records passed over
 * @skipped_bytes: bytes of their lines
 * @bytes:	bytes of the lines of the others
 * @printed:	lines printed (or, not printing, that would be)
 *
 * At an oops the other CPUs go on writing: records selected when the
 * cursors were set can be written over before they are reached (their
 * sub-buffer no longer holds them) or while they are copied
 * (dti_panic_format()); those are neither printed nor counted in
 * @printed.
 */
struct dti_panic_pass {
	u64 skip_lines, skip_bytes;
	bool print;
	u64 skipped, skipped_bytes, bytes, printed;
};

/* Merge the @n cursors of @ch by time, as @p says. */
static void dti_panic_merge(struct dti_channel *ch, unsigned int n,
			    struct dti_panic_pass *p)
{
	struct dti_panic_cursor *c;
	size_t len;
	u64 line;

	while ((c = dti_panic_first(n))) {
		len = dti_panic_format(ch, c);
		if (!len) {
			dti_panic_advance(ch, c);
			continue;
		}
		/* the line printed: "dti: panic: NAME: LINE\n" */
		line = strlen(pr_fmt("")) + strlen(ch->name) + 2 + len + 1;
		if (p->skipped < p->skip_lines || p->skipped_bytes < p->skip_bytes) {
			p->skipped++;
			p->skipped_bytes += line;
		} else {
			if (p->print)
				pr_emerg("%s: %s\n", ch->name, dti_panic_line);
			p->printed++;
			p->bytes += line;
		}
		dti_panic_advance(ch, c);
	}
}

/* Set the cursors of @ch's rings; how many rings, and records selected */
static unsigned int dti_panic_cursors_init(struct dti_channel *ch, struct rchan *rchan,
					   u64 want, u64 *records)
{
	struct rchan_buf *buf;
	unsigned int cpu, n = 0;
	u64 got;

	cpumask_clear(&dti_panic_cpus);
	*records = 0;
	for_each_possible_cpu(cpu) {
		buf = *per_cpu_ptr(rchan->buf, cpu);
		if (!buf)
			continue;
		got = dti_panic_cursor_init(ch, &dti_panic_cursors[n++], buf, cpu, want);
		if (got)
			cpumask_set_cpu(cpu, &dti_panic_cpus);
		*records += got;
	}
	return n;
}

/*
 * Print the newest @want records per CPU of @ch, merged, within @lines
 * and *@bytes: if they do not fit, the oldest of them are left out.
 * Returns the lines printed and takes their bytes off *@bytes.
 */
static u64 dti_panic_channel(struct dti_channel *ch, struct rchan *rchan, u64 want,
			     u64 lines, u64 *bytes)
{
	struct dti_panic_pass all = { }, out = { .print = true };
	u64 total, printed, gone;
	unsigned int n;

	n = dti_panic_cursors_init(ch, rchan, want, &total);
	pr_emerg("---- begin %s: newest %llu per CPU, %llu records from CPUs %*pbl ----\n",
		 ch->name, want, total, cpumask_pr_args(&dti_panic_cpus));
	dti_panic_merge(ch, n, &all);
	out.skip_lines = total > lines ? total - lines : 0;
	out.skip_bytes = all.bytes > *bytes ? all.bytes - *bytes : 0;
	dti_panic_rewind(ch, n);
	dti_panic_merge(ch, n, &out);
	*bytes -= min(*bytes, out.bytes);
	printed = out.printed;
	gone = total - min(total, out.skipped + printed);
	if (out.skipped)
		pr_emerg("---- end %s: %llu records, capped: %llu older ones not printed (panic_max_lines %u, panic_max_bytes %u)%s ----\n",
			 ch->name, printed, out.skipped,
			 READ_ONCE(dti_panic_max_lines), READ_ONCE(dti_panic_max_bytes),
			 gone ? ", others written over while read" : "");
	else if (gone)
		pr_emerg("---- end %s: %llu records, %llu written over while read, not printed ----\n",
			 ch->name, printed, gone);
	else
		pr_emerg("---- end %s: %llu records ----\n", ch->name, total);
	return printed;
}

static unsigned int dti_sysrq_records = DTI_SYSRQ_RECORDS;
module_param_named(sysrq_records, dti_sysrq_records, uint, 0644);
MODULE_PARM_DESC(sysrq_records,
		 "newest records per CPU the sysrq key prints of a channel whose dump_on_panic is 0");

/*
 * Whether @ch asked for records at panic, and how many per CPU; with
 * @every (the sysrq key) every channel prints, sysrq_records of one
 * that did not ask.
 */
static unsigned int dti_panic_want(struct dti_channel *ch, bool every)
{
	unsigned int want;

	if (READ_ONCE(ch->hidden))
		return 0;
	want = READ_ONCE(ch->panic_records);
	return want || !every ? want : READ_ONCE(dti_sysrq_records);
}

/*
 * Print every channel that asked for it (with @every, every channel),
 * each within an even share of what is left of the caps.  @why names
 * the occasion.
 */
static void dti_panic_print(const char *why, bool every)
{
	u64 lines = READ_ONCE(dti_panic_max_lines), bytes = READ_ONCE(dti_panic_max_bytes);
	unsigned int asked = 0, done = 0, want;
	struct dti_channel *ch;
	struct rchan *rchan;
	u64 share_lines, share_bytes;
	bool guarded;

	if (!dti_panic_cursors)
		return;
	if (atomic_cmpxchg(&dti_panic_busy, 0, 1)) {
		pr_emerg("skipped: busy (another CPU is printing)\n");
		return;
	}
	rcu_read_lock();
	list_for_each_entry_rcu(ch, dti_channel_list(), list)
		asked += !!dti_panic_want(ch, every);
	if (asked) {
		pr_emerg("%s: the newest records of %u channel%s\n", why, asked,
			 asked == 1 ? "" : "s");
		/* where the callers' modules were: console-log --lines */
		dti_modules_panic_print("panic: ");
	}
	list_for_each_entry_rcu(ch, dti_channel_list(), list) {
		want = dti_panic_want(ch, every);
		if (!want || done == asked)
			continue;
		share_lines = div_u64(lines, asked - done);
		share_bytes = div_u64(bytes, asked - done);
		bytes -= share_bytes;
		done++;
		rchan = rcu_dereference(ch->rchan);
		if (!rchan) {
			pr_emerg("---- %s: no buffers ----\n", ch->name);
			bytes += share_bytes;
			continue;
		}
		guarded = dti_guard_enter(ch->info);
		lines -= dti_panic_channel(ch, rchan, want, share_lines, &share_bytes);
		if (guarded)
			dti_guard_exit(ch->info);
		bytes += share_bytes;
	}
	rcu_read_unlock();
	atomic_set(&dti_panic_busy, 0);
}

/*
 * The panic an oops ends in when panic_on_oops is set (oops_end()):
 * "Fatal exception", or "Fatal exception in interrupt".
 */
#define DTI_OOPS_PANIC		"Fatal exception"

static int dti_panic_notify(struct notifier_block *nb, unsigned long event, void *msg)
{
	/* Before the print: it reads what the panic left. */
	dti_stop_marked(DTI_F_STOP_ON_PANIC, DTI_STOP_PANIC);
	if (READ_ONCE(dti_panic_oops_cpu) == raw_smp_processor_id() && msg &&
	    !strncmp(msg, DTI_OOPS_PANIC, strlen(DTI_OOPS_PANIC)))
		pr_emerg("kernel panic: the records were printed at the oops above\n");
	else
		dti_panic_print("kernel panic", false);
	return NOTIFY_DONE;
}

/**
 * dti_panic_print_sysrq - the sysrq key's print
 *
 * The newest records of every channel, as at panic: dump_on_panic of
 * each CPU of a channel that has one, sysrq_records of the others,
 * within panic_max_lines and panic_max_bytes, lock-free.
 *
 * Context: the sysrq handler's: process context (/proc/sysrq-trigger)
 * or an interrupt (a keyboard, a serial break).
 */
void dti_panic_print_sysrq(void)
{
	dti_panic_print("sysrq", true);
}

/*
 * An oops, which panics next if panic_on_oops is set (not exported, so
 * not known here): the panic notifier then knows it by its message and
 * CPU, and does not print the same records again.
 */
static int dti_die_notify(struct notifier_block *nb, unsigned long event, void *data)
{
	if (event != DIE_OOPS)
		return NOTIFY_DONE;
	/* before the records are printed and the oopsing task goes on to die */
	dti_stop_marked(DTI_F_STOP_ON_OOPS, DTI_STOP_OOPS);
	if (READ_ONCE(dti_panic_on_oops)) {
		dti_panic_print("oops", false);
		WRITE_ONCE(dti_panic_oops_cpu, raw_smp_processor_id());
	}
	return NOTIFY_DONE;
}

static struct notifier_block dti_panic_nb = {
	.notifier_call = dti_panic_notify,
};

static struct notifier_block dti_die_nb = {
	.notifier_call = dti_die_notify,
};

/**
 * dti_panic_init - allocate what the panic path needs and hook it
 *
 * Context: module load.
 * Return: 0, or -ENOMEM.
 */
int __init dti_panic_init(void)
{
	dti_panic_cursors = kcalloc(nr_cpu_ids, sizeof(*dti_panic_cursors), GFP_KERNEL);
	dti_panic_line = kmalloc(DTI_PANIC_LINE_MAX, GFP_KERNEL);
	if (!dti_panic_cursors || !dti_panic_line) {
		kfree(dti_panic_cursors);
		kfree(dti_panic_line);
		return -ENOMEM;
	}
	atomic_notifier_chain_register(&panic_notifier_list, &dti_panic_nb);
	register_die_notifier(&dti_die_nb);
	return 0;
}

/**
 * dti_panic_exit - unhook the panic path and free what it used
 *
 * Context: module unload.
 */
void dti_panic_exit(void)
{
	unregister_die_notifier(&dti_die_nb);
	atomic_notifier_chain_unregister(&panic_notifier_list, &dti_panic_nb);
	kfree(dti_panic_cursors);
	kfree(dti_panic_line);
}
