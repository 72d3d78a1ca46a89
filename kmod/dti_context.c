// SPDX-License-Identifier: GPL-2.0
/*
 * DTI context records: the system's events beside a driver's records.
 *
 * A channel whose context file (or dti_set_context()) names "sched"
 * stores each context switch of every CPU as an event of the type
 * DTI_EVENT_ID_SCHED_SWITCH, and one that names "irq" each hardware
 * interrupt handler's entry as DTI_EVENT_ID_IRQ_ENTRY.  They are events
 * of types registered on the channel like a driver's (dti_event.c), so
 * their formats travel in every sub-buffer and every reader prints them
 * with no knowledge of their kind: trace files, the merged views,
 * snapshots, dumps and the previous boot's records.
 *
 * The records come from the kernel's own tracepoints (sched_switch,
 * irq_handler_entry), found by name, since a module may not link to
 * tracepoints that are not exported, and probed with the channel as the
 * probe's data.  The probes run in the scheduler with its runqueue lock
 * held and in hard interrupt context; they take nothing but the write
 * path, which is lock-free.  A context record is stored at the
 * channel's level, no more verbose than info: a channel that stores
 * anything stores them; one that is off stores none.
 *
 * Lock order: dti_context_mutex, then dti_event_mutex (the types'
 * registration), then the tracepoints' own mutex.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>

#include "dti_compat.h"
#include "dti_internal.h"

/* The words of the context file, in the order they print */
static const struct dti_word dti_context_words[] = {
	{ "sched",	DTI_CONTEXT_SCHED },
	{ "irq",	DTI_CONTEXT_IRQ },
};

/* Longest context text: every word, with commas */
#define DTI_CONTEXT_TEXT_MAX	sizeof("sched,irq")

/* A context switch's template, as ftrace's sched_switch prints it */
#define DTI_CONTEXT_SCHED_FMT \
	"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d"

/* The task state text of a switch: a letter, "+" after it if preempted */
#define DTI_CONTEXT_STATE_MAX	sizeof("R+")

/**
 * struct dti_context - a channel's context record types
 * @sched:	the sched_switch type
 * @irq:	the irq_handler_entry type
 * @on:	DTI_CONTEXT_* bits whose probes are registered
 */
struct dti_context {
	struct dti_event_type sched;
	struct dti_event_type irq;
	unsigned int on;
};

/* Serialises every change of a channel's context records */
static DEFINE_MUTEX(dti_context_mutex);

static struct tracepoint *dti_tp_sched_switch;
static struct tracepoint *dti_tp_irq_entry;

static void dti_context_find_tp(struct tracepoint *tp, void *unused)
{
	if (!strcmp(tp->name, "sched_switch"))
		dti_tp_sched_switch = tp;
	else if (!strcmp(tp->name, "irq_handler_entry"))
		dti_tp_irq_entry = tp;
}

/* The level a context record of @ch is stored at; negative: none is */
static __always_inline int dti_context_level(struct dti_channel *ch)
{
	return min_t(int, READ_ONCE(ch->info->level), DTI_LEVEL_INFO);
}

static void dti_context_sched_switch(DTI_SCHED_SWITCH_PROTO)
{
	struct dti_channel *ch = data;
	char state[DTI_CONTEXT_STATE_MAX];
	int level = dti_context_level(ch);

	if (level < 0)
		return;
	state[0] = task_index_to_char(DTI_SCHED_SWITCH_STATE(prev));
	state[1] = preempt ? '+' : '\0';
	state[2] = '\0';
	dti_event_log_raw(ch->info, level, &ch->context->sched,
			  prev->comm, task_pid_nr(prev), prev->prio, state,
			  next->comm, task_pid_nr(next), next->prio);
}

static void dti_context_irq_entry(void *data, int irq, struct irqaction *action)
{
	struct dti_channel *ch = data;
	int level = dti_context_level(ch);

	if (level >= 0)
		dti_event_log_raw(ch->info, level, &ch->context->irq, irq,
				  action && action->name ? action->name : "");
}

/*
 * The channel's context types, registered on it: both, whatever is asked
 * for, so that one change of the formats serves every later choice.  A
 * type once registered stays the channel's until it is freed.
 */
static int dti_context_types(struct dti_channel *ch)
{
	struct dti_context *ctx = ch->context;
	int ret;

	if (!ctx) {
		ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
		if (!ctx)
			return -ENOMEM;
		ctx->sched.id = DTI_EVENT_ID_SCHED_SWITCH;
		ctx->sched.name = "sched_switch";
		ctx->sched.fmt = DTI_CONTEXT_SCHED_FMT;
		ctx->irq.id = DTI_EVENT_ID_IRQ_ENTRY;
		ctx->irq.name = "irq_handler_entry";
		ctx->irq.fmt = "irq=%d name=%s";
		WRITE_ONCE(ch->context, ctx);
	}
	ret = ctx->sched.owner ? 0 : __dti_event_register(ch->info, &ctx->sched, true);
	if (!ret && !ctx->irq.owner)
		ret = __dti_event_register(ch->info, &ctx->irq, true);
	return ret;
}

/* Probes on for the bits of @mask, off for the others */
static int dti_context_probes(struct dti_channel *ch, unsigned int mask)
{
	struct dti_context *ctx = ch->context;
	unsigned int add = mask & ~ctx->on, del = ctx->on & ~mask;
	int ret = 0;

	if (add & DTI_CONTEXT_SCHED)
		ret = tracepoint_probe_register(dti_tp_sched_switch,
						dti_context_sched_switch, ch);
	if (!ret && (add & DTI_CONTEXT_IRQ)) {
		ret = tracepoint_probe_register(dti_tp_irq_entry,
						dti_context_irq_entry, ch);
		if (ret && (add & DTI_CONTEXT_SCHED))
			tracepoint_probe_unregister(dti_tp_sched_switch,
						    dti_context_sched_switch, ch);
	}
	if (ret)
		return ret;
	if (del & DTI_CONTEXT_SCHED)
		tracepoint_probe_unregister(dti_tp_sched_switch,
					    dti_context_sched_switch, ch);
	if (del & DTI_CONTEXT_IRQ)
		tracepoint_probe_unregister(dti_tp_irq_entry,
					    dti_context_irq_entry, ch);
	WRITE_ONCE(ctx->on, mask);
	return 0;
}

/**
 * dti_context_set - choose the context records a channel stores
 * @ch: channel
 * @mask: DTI_CONTEXT_* bits; 0 for none
 *
 * Context: process context; sleeps.  Not while @ch is being freed.
 * Return: 0, -EINVAL for an unknown bit, -EOPNOTSUPP if the kernel has
 * no such tracepoint, or an error of the types' registration (-ENOSPC:
 * the formats would not fit the channel's sub-buffers) or of the
 * tracepoints'.
 */
int dti_context_set(struct dti_channel *ch, unsigned int mask)
{
	int ret = 0;

	if (mask & ~DTI_CONTEXT_ALL)
		return -EINVAL;
	if (((mask & DTI_CONTEXT_SCHED) && !dti_tp_sched_switch) ||
	    ((mask & DTI_CONTEXT_IRQ) && !dti_tp_irq_entry))
		return -EOPNOTSUPP;
	mutex_lock(&dti_context_mutex);
	if (mask)
		ret = dti_context_types(ch);
	if (!ret && ch->context)
		ret = dti_context_probes(ch, mask);
	mutex_unlock(&dti_context_mutex);
	return ret;
}

/**
 * dti_context_get - the context records a channel stores
 * @ch: channel
 *
 * Context: any.
 * Return: its DTI_CONTEXT_* bits.
 */
unsigned int dti_context_get(struct dti_channel *ch)
{
	const struct dti_context *ctx = READ_ONCE(ch->context);

	return ctx ? READ_ONCE(ctx->on) : 0;
}

/**
 * dti_context_parse - parse a context file's text
 * @buf: "none", or words of "sched" and "irq" joined by commas, with at
 *	 most one trailing newline
 * @mask: where to store the DTI_CONTEXT_* bits
 *
 * Context: any but NMI.
 * Return: 0, or -EINVAL (*@mask unchanged).
 */
int dti_context_parse(const char *buf, unsigned int *mask)
{
	return dti_words_parse(buf, dti_context_words,
			       ARRAY_SIZE(dti_context_words), mask);
}

/**
 * dti_context_show - print a channel's context records as the file does
 * @m: where
 * @ch: channel
 *
 * Context: process context.
 */
void dti_context_show(struct seq_file *m, struct dti_channel *ch)
{
	char buf[DTI_CONTEXT_TEXT_MAX];

	dti_words_format(buf, sizeof(buf), dti_context_words,
			 ARRAY_SIZE(dti_context_words), dti_context_get(ch));
	seq_puts(m, buf);
}

/**
 * dti_context_release - stop a channel's context records for good
 * @ch: channel no one can reach any more but its probes
 *
 * Unregisters the probes and waits until none runs; the types are freed
 * by dti_context_free(), after the channel's event types are released.
 *
 * Context: process context; sleeps.
 */
void dti_context_release(struct dti_channel *ch)
{
	if (!ch->context)
		return;
	mutex_lock(&dti_context_mutex);
	dti_context_probes(ch, 0);
	mutex_unlock(&dti_context_mutex);
	/* no probe still runs with @ch as its data */
	tracepoint_synchronize_unregister();
}

/**
 * dti_context_free - free a released channel's context types
 * @ch: channel after dti_context_release() and dti_event_release()
 *
 * Context: any.
 */
void dti_context_free(struct dti_channel *ch)
{
	kfree(ch->context);
	ch->context = NULL;
}

/**
 * dti_set_context - choose the context records a driver's channel stores
 * @trace: the channel (a handle's: &handle.info, after INIT_DTI_HANDLE())
 * @mask: DTI_CONTEXT_SCHED (every CPU's context switches),
 *	  DTI_CONTEXT_IRQ (every hardware interrupt handler's entry), or 0
 *	  for none
 *
 * The records are events of types dti.ko registers on the channel
 * (ids DTI_EVENT_ID_SCHED_SWITCH and DTI_EVENT_ID_IRQ_ENTRY), stored at
 * the channel's level but never above info.  The channel's context file
 * shows and changes the same choice.
 *
 * Context: process context; sleeps.  Must not race with the channel's
 * unregistration.
 * Return: 0, -EINVAL for a bad @trace or @mask, -ENODEV if @trace has
 * no channel, -EOPNOTSUPP if the kernel lacks the tracepoint, -ENOSPC
 * if the types' formats would not fit the channel's sub-buffers.
 */
int dti_set_context(struct dti_info *trace, unsigned int mask)
{
	struct dti_channel *ch;

	if (IS_ERR_OR_NULL(trace))
		return -EINVAL;
	ch = rcu_access_pointer(trace->chan);
	if (!ch)
		return -ENODEV;
	return dti_context_set(ch, mask);
}
EXPORT_SYMBOL_GPL(dti_set_context);

/**
 * dti_context_init - find the tracepoints context records come from
 *
 * A kernel without one of them refuses its word with -EOPNOTSUPP.
 *
 * Context: process context, at dti.ko's init.
 */
void __init dti_context_init(void)
{
	for_each_kernel_tracepoint(dti_context_find_tp, NULL);
	if (!dti_tp_sched_switch || !dti_tp_irq_entry)
		pr_info("context records: no %s tracepoint\n",
			dti_tp_sched_switch ? "irq_handler_entry" : "sched_switch");
}
