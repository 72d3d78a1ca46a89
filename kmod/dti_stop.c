// SPDX-License-Identifier: GPL-2.0
/*
 * Stopping channels, so that what led up to an event stays in them: at
 * an oops, a WARN() or a panic for the channels that ask (stop_on), for
 * every channel on the sysrq key, or when a driver calls dti_stop(),
 * dti_stop_all() or an exception call (dti.h).  s390's debug feature
 * stops its logs at an oops the same way (debug_stop_all()).
 *
 * A stop is one cmpxchg() on the channel's stop_reason and nothing else:
 * no lock, no allocation, no record written, no wakeup.  So it is safe
 * from every context a stop can come from (an oops or a WARN() in NMI,
 * inside DTI's own write path with the channel's write guard and order
 * lock held, inside a reservation), and it cannot recurse.  The writers
 * read stop_reason before they store (dti_write()): a record that passes
 * the level check on a stopped channel is counted as stopped and takes
 * its sequence number, so next_seq = written + ... + halted + stopped
 * holds as before.  A writer that read stop_reason just before a stop
 * still stores the record it was writing: at most one per CPU and
 * context comes after the stop.  A level change (the level file, dti
 * level, dti_set_level(), dti_ctl_set_level()) starts the channel again.
 *
 * The hooks, on every kernel from 5.10 to 7.3:
 *   oops:  a kprobe on oops_enter() (kernel/panic.c), which x86's
 *          oops_begin() and arm64's die() call before the oops's report
 *          is printed, the report that takes the other CPUs a console's
 *          time to write over their rings; and the die notifier's
 *          DIE_OOPS, which die() raises on both once the report is
 *          printed, before the oopsing task is killed or the kernel
 *          panics (dti_panic.c), for a kernel without kprobes or an
 *          oops in a kprobe's handler;
 *   panic: the panic notifier (dti_panic.c), after the other CPUs have
 *          been stopped: what the rest of the panic path logs (other
 *          notifiers, kmsg dumpers, a probe on printk) no longer writes
 *          over the channel, and a dump taken after the notifiers
 *          (crash_kexec_post_notifiers) holds it as it was;
 *   warn:  no kernel of these has a notifier or a tracepoint for a
 *          WARN() (the panic notifier runs only with panic_on_warn, and
 *          after the warning's report).  Every WARN() of every
 *          architecture, the WARN_ON_ONCE()s included, goes through
 *          __warn() in kernel/panic.c (report_bug() for the trapping
 *          kinds, warn_slowpath_fmt() for the others), which kprobes may
 *          probe (it is not on the kprobe blacklist), so a kprobe on its
 *          first instruction sees each, before the report is printed, in
 *          the context of the WARN(), NMI included.  Its handler only
 *          stops channels.  A WARN() raised inside another kprobe's
 *          handler (a SystemTap probe, say) is one kprobes do not
 *          report, as any kprobe hit from a kprobe handler (the probe's
 *          nmissed counts it): it stops nothing.
 *
 * The sysrq key (sysrq_key, 'a' by default) stops every channel and
 * prints the newest records of each on the console, as the panic print
 * does (dti_panic_print_sysrq()).  'a' is free on every architecture
 * from 5.10 on (drivers/tty/sysrq.c leaves it unassigned; x and y are
 * taken by some architectures, the capitals exist only from 6.7).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/sysrq.h>
#include <linux/timekeeping.h>

#include "dti_internal.h"

/* The words of stop_on, in the order they print */
static const struct dti_word dti_stop_words[] = {
	{ "oops",	DTI_F_STOP_ON_OOPS },
	{ "warn",	DTI_F_STOP_ON_WARN },
	{ "panic",	DTI_F_STOP_ON_PANIC },
};

/* What a word list says when no word is set */
#define DTI_WORDS_NONE		"none"
/* Longest stop_on text: every word, with commas */
#define DTI_STOP_ON_MAX		sizeof("oops,warn,panic")

/**
 * dti_words_parse - parse a set of words, as stop_on and context take it
 * @buf: NUL-terminated text: "none", or words of @words joined by
 *	 commas, with at most one trailing newline
 * @words: the words and their bits
 * @n: entries in @words
 * @mask: where to store the bits of the words named
 *
 * Context: any but NMI.
 * Return: 0, or -EINVAL if @buf is none of these (*@mask unchanged).
 */
int dti_words_parse(const char *buf, const struct dti_word *words, size_t n,
		    unsigned int *mask)
{
	size_t len = strlen(buf), w, i;
	const char *p = buf, *end;
	unsigned int m = 0;

	if (len && buf[len - 1] == '\n')
		len--;
	end = buf + len;
	if (len == strlen(DTI_WORDS_NONE) && !strncmp(buf, DTI_WORDS_NONE, len)) {
		*mask = 0;
		return 0;
	}
	while (p < end) {
		/* the word up to the next comma, or to the end */
		w = min_t(size_t, strcspn(p, ","), end - p);
		for (i = 0; i < n; i++)
			if (w == strlen(words[i].name) && !strncmp(p, words[i].name, w))
				break;
		if (i == n)
			return -EINVAL;
		m |= words[i].bit;
		p += w;
		/* at a comma, which must have a word after it */
		if (p < end && ++p == end)
			return -EINVAL;
	}
	if (!m)
		return -EINVAL;
	*mask = m;
	return 0;
}

/**
 * dti_words_format - a set of words as dti_words_parse() takes it
 * @buf: where to write it
 * @size: bytes of @buf
 * @words: the words and their bits, in the order they print
 * @n: entries in @words
 * @mask: the bits
 *
 * Context: any.
 * Return: the length written, without the NUL.
 */
size_t dti_words_format(char *buf, size_t size, const struct dti_word *words,
			size_t n, unsigned int mask)
{
	size_t at = 0, i;

	for (i = 0; i < n; i++)
		if (mask & words[i].bit)
			at += scnprintf(buf + at, size - at, "%s%s", at ? "," : "",
					words[i].name);
	if (!at)
		at = scnprintf(buf, size, "%s", DTI_WORDS_NONE);
	return at;
}

/**
 * dti_stop_on_parse - parse a stop_on value
 * @buf: NUL-terminated text: "none", or words of "oops", "warn" and
 *	 "panic" joined by commas, with at most one trailing newline
 * @mask: where to store the DTI_F_STOP_ON_* bits
 *
 * Context: any but NMI.
 * Return: 0, or -EINVAL if @buf is none of these (*@mask unchanged).
 */
int dti_stop_on_parse(const char *buf, unsigned int *mask)
{
	return dti_words_parse(buf, dti_stop_words, ARRAY_SIZE(dti_stop_words), mask);
}

/* @mask as stop_on prints it, in @buf of @size bytes; its length */
static size_t dti_stop_on_format(char *buf, size_t size, unsigned int mask)
{
	return dti_words_format(buf, size, dti_stop_words, ARRAY_SIZE(dti_stop_words),
				mask);
}

/**
 * dti_stop_on_show - print a stop_on value
 * @m: where
 * @mask: DTI_F_STOP_ON_* bits
 *
 * Context: process context.
 */
void dti_stop_on_show(struct seq_file *m, unsigned int mask)
{
	char buf[DTI_STOP_ON_MAX];

	dti_stop_on_format(buf, sizeof(buf), mask);
	seq_puts(m, buf);
}

static unsigned int dti_stop_on_param;

static int dti_stop_on_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int mask;
	int ret = dti_stop_on_parse(val, &mask);

	if (!ret)
		WRITE_ONCE(dti_stop_on_param, mask);
	return ret;
}

static int dti_stop_on_param_get(char *buf, const struct kernel_param *kp)
{
	size_t len = dti_stop_on_format(buf, PAGE_SIZE, READ_ONCE(dti_stop_on_param));

	return len + scnprintf(buf + len, PAGE_SIZE - len, "\n");
}

static const struct kernel_param_ops dti_stop_on_ops = {
	.set = dti_stop_on_param_set,
	.get = dti_stop_on_param_get,
};
module_param_cb(stop_on, &dti_stop_on_ops, NULL, 0644);
MODULE_PARM_DESC(stop_on,
		 "what stops the channels registered from now on: oops,warn,panic or none (default)");

/**
 * dti_stop_on_default - the stop_on a new channel starts with
 *
 * Context: any.
 * Return: the stop_on parameter's DTI_F_STOP_ON_* bits.
 */
unsigned int dti_stop_on_default(void)
{
	return READ_ONCE(dti_stop_on_param);
}

/**
 * dti_stop_reason_name - what the info file calls a stop reason
 * @reason: enum dti_stop_reason
 *
 * Context: any.
 * Return: its name.
 */
const char *dti_stop_reason_name(int reason)
{
	static const char *const names[] = {
		[DTI_STOP_NONE] = "none",
		[DTI_STOP_OOPS] = "oops",
		[DTI_STOP_WARN] = "warn",
		[DTI_STOP_PANIC] = "panic",
		[DTI_STOP_SYSRQ] = "sysrq",
		[DTI_STOP_CALL] = "call",
	};

	return reason >= 0 && reason < ARRAY_SIZE(names) ? names[reason] : "?";
}

/* Stop @ch for @why unless it is stopped; whether this call stopped it. */
static bool dti_stop_mark(struct dti_channel *ch, enum dti_stop_reason why)
{
	return cmpxchg(&ch->stop_reason, DTI_STOP_NONE, why) == DTI_STOP_NONE;
}

/**
 * dti_stop_channel - stop one channel
 * @ch: channel
 * @why: the reason, not DTI_STOP_NONE
 *
 * A channel stopped already keeps its reason and time.  The time is
 * taken after the stop, which cmpxchg() orders fully: a record whose
 * own time comes after it was stored by a writer that read stop_reason
 * before the stop, at most one per CPU and context.
 *
 * Context: any, NMI included.
 * Return: true if this call stopped it.
 */
bool dti_stop_channel(struct dti_channel *ch, enum dti_stop_reason why)
{
	if (!dti_stop_mark(ch, why))
		return false;
	WRITE_ONCE(ch->stop_ns, ktime_get_mono_fast_ns());
	return true;
}

/**
 * dti_stop_marked - stop the channels whose stop_on has a bit of @mask
 * @mask: DTI_F_STOP_ON_* bits, or 0 for every channel
 * @why: the reason, not DTI_STOP_NONE
 *
 * Every channel is marked first, then the time taken once for all of
 * them, so that each has the time of the last channel's stop.  The list
 * is walked under RCU: a channel being removed is either seen or gone.
 *
 * Context: any, NMI included.
 * Return: the channels this call stopped.
 */
unsigned int dti_stop_marked(unsigned int mask, enum dti_stop_reason why)
{
	struct dti_channel *ch;
	unsigned int n = 0;
	u64 now;

	rcu_read_lock();
	list_for_each_entry_rcu(ch, dti_channel_list(), list)
		if ((!mask || (READ_ONCE(ch->stop_on) & mask)) && dti_stop_mark(ch, why)) {
			/* 0 until the time below: marks the ones this call stopped */
			WRITE_ONCE(ch->stop_ns, 0);
			n++;
		}
	if (n) {
		now = ktime_get_mono_fast_ns();
		list_for_each_entry_rcu(ch, dti_channel_list(), list)
			if (READ_ONCE(ch->stop_reason) == why && !READ_ONCE(ch->stop_ns))
				WRITE_ONCE(ch->stop_ns, now);
	}
	rcu_read_unlock();
	return n;
}

/**
 * dti_stop - stop a channel storing
 * @trace: channel
 *
 * What the channel holds stays; the records that come after are refused
 * and counted as stopped, until a level change starts it again.  Its
 * info file says "stopped: call" and when.
 *
 * Context: any, NMI included; never sleeps, takes no lock.
 * Return: 0, -EINVAL for a NULL or error-pointer @trace, -ENODEV for a
 * handle not initialised yet.
 */
int dti_stop(struct dti_info *trace)
{
	struct dti_channel *ch;
	int ret = 0;

	if (IS_ERR_OR_NULL(trace))
		return -EINVAL;
	rcu_read_lock();
	ch = rcu_dereference(trace->chan);
	if (ch)
		dti_stop_channel(ch, DTI_STOP_CALL);
	else
		ret = -ENODEV;
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_stop);

/**
 * dti_stop_all - stop every channel storing
 *
 * As dti_stop() for every channel there is, whatever its stop_on.
 *
 * Context: any, NMI included; never sleeps, takes no lock.
 */
void dti_stop_all(void)
{
	dti_stop_marked(0, DTI_STOP_CALL);
}
EXPORT_SYMBOL_GPL(dti_stop_all);

/**
 * dti_ctl_stop - stop a channel by name
 * @name: channel name
 *
 * As dti_stop(); the tapset's dti_stop().
 *
 * Context: any, NMI included.
 * Return: 0, -EINVAL for a NULL @name, -ENOENT if there is no such channel.
 */
int dti_ctl_stop(const char *name)
{
	struct dti_channel *ch;
	int ret = 0;

	if (!name)
		return -EINVAL;
	rcu_read_lock();
	ch = dti_find_visible(name);
	if (ch)
		dti_stop_channel(ch, DTI_STOP_CALL);
	else
		ret = -ENOENT;
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(dti_ctl_stop);

#if IS_ENABLED(CONFIG_KPROBES)
static int dti_warn_pre(struct kprobe *p, struct pt_regs *regs)
{
	dti_stop_marked(DTI_F_STOP_ON_WARN, DTI_STOP_WARN);
	return 0;
}

static int dti_oops_pre(struct kprobe *p, struct pt_regs *regs)
{
	dti_stop_marked(DTI_F_STOP_ON_OOPS, DTI_STOP_OOPS);
	return 0;
}

/*
 * The functions every WARN() and every oops go through (see the file
 * comment), and whether each is probed
 */
static struct {
	struct kprobe kp;
	const char *what;
	bool hooked;
} dti_stop_probes[] = {
	{ .kp = { .symbol_name = "__warn", .pre_handler = dti_warn_pre },
	  .what = "stop_on warn unavailable" },
	{ .kp = { .symbol_name = "oops_enter", .pre_handler = dti_oops_pre },
	  .what = "stop_on oops only once the oops is printed (the die notifier)" },
};

static void dti_kprobes_hook(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(dti_stop_probes); i++) {
		ret = register_kprobe(&dti_stop_probes[i].kp);
		if (ret)
			pr_warn("%s: no kprobe on %s (%d)\n", dti_stop_probes[i].what,
				dti_stop_probes[i].kp.symbol_name, ret);
		dti_stop_probes[i].hooked = !ret;
	}
}

static void dti_kprobes_unhook(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dti_stop_probes); i++)
		if (dti_stop_probes[i].hooked)
			unregister_kprobe(&dti_stop_probes[i].kp);
}
#else
static void dti_kprobes_hook(void)
{
	pr_warn("stop_on warn unavailable: the kernel has no kprobes\n");
}

static void dti_kprobes_unhook(void)
{
}
#endif

#if IS_ENABLED(CONFIG_MAGIC_SYSRQ)
/* The sysrq key's default: free on every architecture (file comment) */
#define DTI_SYSRQ_KEY		"a"

static char *dti_sysrq_key = DTI_SYSRQ_KEY;
module_param_named(sysrq_key, dti_sysrq_key, charp, 0444);
MODULE_PARM_DESC(sysrq_key,
		 "sysrq key that stops every channel and prints its newest records (\"\": none)");

static int dti_sysrq_registered = -1;

static void dti_sysrq_handler(DTI_SYSRQ_KEY_T key)
{
	dti_stop_marked(0, DTI_STOP_SYSRQ);
	dti_panic_print_sysrq();
}

static const struct sysrq_key_op dti_sysrq_op = {
	.handler	= dti_sysrq_handler,
	.help_msg	= "dti-stop-print(a)",
	.action_msg	= "DTI: stop every channel and print its newest records",
	.enable_mask	= SYSRQ_ENABLE_DUMP,
};

static void dti_sysrq_hook(void)
{
	int key, ret;

	if (!dti_sysrq_key || !*dti_sysrq_key)
		return;
	key = dti_sysrq_key[0];
	if (dti_sysrq_key[1] || !isalnum(key)) {
		pr_warn("sysrq_key=%s: not one letter or digit, no key\n", dti_sysrq_key);
		return;
	}
	ret = register_sysrq_key(key, &dti_sysrq_op);
	if (ret) {
		pr_warn("sysrq_key=%c: taken (%d), no key\n", key, ret);
		return;
	}
	dti_sysrq_registered = key;
}

static void dti_sysrq_unhook(void)
{
	if (dti_sysrq_registered >= 0)
		unregister_sysrq_key(dti_sysrq_registered, &dti_sysrq_op);
	dti_sysrq_registered = -1;
}
#else
static void dti_sysrq_hook(void)
{
}

static void dti_sysrq_unhook(void)
{
}
#endif

/**
 * dti_stop_init - hook WARN() and the sysrq key
 *
 * Either may be missing (a kernel without kprobes or sysrq, a key taken):
 * that is logged, and DTI comes up without it.
 *
 * Context: DTI's init.
 * Return: 0.
 */
int __init dti_stop_init(void)
{
	dti_kprobes_hook();
	dti_sysrq_hook();
	return 0;
}

/**
 * dti_stop_exit - unhook them
 *
 * Context: module unload.
 */
void dti_stop_exit(void)
{
	dti_sysrq_unhook();
	dti_kprobes_unhook();
}
