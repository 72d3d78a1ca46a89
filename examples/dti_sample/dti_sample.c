// SPDX-License-Identifier: GPL-2.0
/*
 * dti_sample - a make-believe device that traces itself with DTI.
 *
 * Requests are queued from process context (a write to "submit"), an
 * hrtimer in hard interrupt context plays the device's interrupt: each
 * tick completes the active request and starts the next one.  A request
 * told to hang ("fault") never completes; a watchdog timer (softirq)
 * times it out and resets the controller.  Every state change is a text
 * record, every finished request an event of the type "req": packed
 * values, no text formatting, which every reader prints through the
 * type's template.
 *
 * /sys/kernel/debug/dti_sample/
 *   submit      write N: queue N requests
 *   rate_hz     interrupts per second (1..100000), default 1000
 *   timeout_ms  watchdog timeout, default 20
 *   fault       write "timeout": the next request to start hangs
 *   counters    what the driver did, to check DTI against
 *
 * Trace: /sys/kernel/debug/dti/dti_sample/ (created on the first record).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dti.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/uaccess.h>

#include "dti_compat.h"	/* hrtimer_setup() and timer_delete_sync() on older kernels */
#include "dti_sample.h"

#define DS_TRACE_SIZE		(64 * 1024)
#define DS_DEFAULT_RATE_HZ	1000
#define DS_MAX_RATE_HZ		100000
#define DS_DEFAULT_TIMEOUT_MS	20
#define DS_MAX_TIMEOUT_MS	10000
#define DS_MAX_SUBMIT		10000
#define DS_CTL_MAX		16

DEFINE_DTI_HANDLE(ds_trace, "dti_sample", DS_TRACE_SIZE, DTI_LEVEL_DEBUG);

/* A finished request: struct dti_sample_req, printed by any reader */
DEFINE_DTI_EVENT(ds_ev_req, 1, "req",
		 "req id=%u state=%s submit=%llu latency=%lluns result=%d flags=%#x%s\n");

static const char *const ds_state_names[] = {
	[DTI_SAMPLE_IDLE]	= "IDLE",
	[DTI_SAMPLE_QUEUED]	= "QUEUED",
	[DTI_SAMPLE_ACTIVE]	= "ACTIVE",
	[DTI_SAMPLE_DONE]	= "DONE",
	[DTI_SAMPLE_TIMEOUT]	= "TIMEOUT",
	[DTI_SAMPLE_RESET]	= "RESET",
};

struct ds_counters {
	u64 submitted;
	u64 started;
	u64 completed;
	u64 timeouts;
	u64 resets;
	u64 text_records;
	u64 event_records;
	u64 log_errors;
};

static struct {
	raw_spinlock_t lock;		/* protects everything below; raw: taken in hard irq, also on PREEMPT_RT */
	struct hrtimer irq;		/* the device interrupt */
	struct timer_list watchdog;
	bool irq_running;
	u32 next_queued;		/* id the next submitted request gets */
	u32 next_start;			/* id of the next request to start */
	bool active;
	bool hung;
	struct dti_sample_req req;	/* the active request */
	unsigned int faults;		/* requests still to hang */
	unsigned int rate_hz;
	unsigned int timeout_ms;
	struct ds_counters cnt;
} ds = {
	.lock = __RAW_SPIN_LOCK_UNLOCKED(ds.lock),
	.rate_hz = DS_DEFAULT_RATE_HZ,
	.timeout_ms = DS_DEFAULT_TIMEOUT_MS,
};

static struct dentry *ds_dir;

static void ds_count_log(int ret, u64 *counter)
{
	(*counter)++;
	if (ret)
		ds.cnt.log_errors++;
}

static void ds_transition(u32 id, enum dti_sample_state from,
			  enum dti_sample_state to, int level)
{
	ds_count_log(dti_printk(ds_trace, level, "req %u: %s -> %s\n", id,
				ds_state_names[from], ds_state_names[to]),
		     &ds.cnt.text_records);
}

static void ds_log_request(void)
{
	const struct dti_sample_req *r = &ds.req;

	ds_count_log(dti_log_event(ds_trace, DTI_LEVEL_DEBUG, ds_ev_req, r->id,
				   ds_state_names[r->state], r->submit_ns,
				   r->latency_ns, r->result, r->flags,
				   r->flags & DTI_SAMPLE_F_FAULT ? " (fault)" : ""),
		     &ds.cnt.event_records);
}

static ktime_t ds_period(void)
{
	return ns_to_ktime(NSEC_PER_SEC / ds.rate_hz);
}

/* ds.lock held */
static void ds_kick_irq(void)
{
	if (ds.irq_running)
		return;
	ds.irq_running = true;
	hrtimer_start(&ds.irq, ds_period(), HRTIMER_MODE_REL_HARD);
}

/* ds.lock held */
static void ds_start_next(void)
{
	memset(&ds.req, 0, sizeof(ds.req));
	ds.req.id = ds.next_start++;
	ds.req.submit_ns = ktime_get_mono_fast_ns();
	ds.active = true;
	ds.cnt.started++;
	ds_transition(ds.req.id, DTI_SAMPLE_QUEUED, DTI_SAMPLE_ACTIVE,
		      DTI_LEVEL_INFO);
	if (ds.faults) {
		ds.faults--;
		ds.hung = true;
		ds.req.flags |= DTI_SAMPLE_F_FAULT;
		mod_timer(&ds.watchdog,
			  jiffies + msecs_to_jiffies(ds.timeout_ms));
	}
}

/* ds.lock held */
static void ds_finish(enum dti_sample_state state, int result, int level)
{
	ds.req.state = state;
	ds.req.result = result;
	ds.req.latency_ns = ktime_get_mono_fast_ns() - ds.req.submit_ns;
	ds_transition(ds.req.id, DTI_SAMPLE_ACTIVE, state, level);
	ds_log_request();
	ds.active = false;
	ds.hung = false;
}

/* The device interrupt: hard irq context. */
static enum hrtimer_restart ds_irq(struct hrtimer *t)
{
	enum hrtimer_restart ret = HRTIMER_NORESTART;

	raw_spin_lock(&ds.lock);
	if (ds.active && !ds.hung) {
		ds_finish(DTI_SAMPLE_DONE, 0, DTI_LEVEL_NOTICE);
		ds.cnt.completed++;
	}
	if (!ds.active && ds.next_start != ds.next_queued)
		ds_start_next();
	if (ds.active && !ds.hung) {
		hrtimer_forward_now(t, ds_period());
		ret = HRTIMER_RESTART;
	} else {
		ds.irq_running = false;
	}
	raw_spin_unlock(&ds.lock);
	return ret;
}

/* The watchdog: softirq context. */
static void ds_watchdog(struct timer_list *t)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ds.lock, flags);
	if (ds.active && ds.hung) {
		ds.cnt.timeouts++;
		ds_finish(DTI_SAMPLE_TIMEOUT, -ETIMEDOUT, DTI_LEVEL_ERR);
		ds.cnt.resets++;
		ds_count_log(dti_printk(ds_trace, DTI_LEVEL_ERR,
					"controller reset after req %u\n",
					ds.req.id),
			     &ds.cnt.text_records);
		if (ds.next_start != ds.next_queued)
			ds_kick_irq();
	}
	raw_spin_unlock_irqrestore(&ds.lock, flags);
}

static int ds_read_uint(const char __user *ubuf, size_t count, loff_t *ppos,
			unsigned int min, unsigned int max, unsigned int *val)
{
	int ret;

	if (*ppos)
		return -EINVAL;
	ret = kstrtouint_from_user(ubuf, count, 0, val);
	if (ret)
		return ret;
	return *val < min || *val > max ? -EINVAL : 0;
}

static ssize_t ds_submit_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	unsigned long flags;
	unsigned int n, i;
	int ret;

	ret = ds_read_uint(ubuf, count, ppos, 1, DS_MAX_SUBMIT, &n);
	if (ret)
		return ret;
	raw_spin_lock_irqsave(&ds.lock, flags);
	for (i = 0; i < n; i++) {
		ds_transition(ds.next_queued++, DTI_SAMPLE_IDLE,
			      DTI_SAMPLE_QUEUED, DTI_LEVEL_INFO);
		ds.cnt.submitted++;
	}
	if (!ds.active || !ds.hung)
		ds_kick_irq();
	raw_spin_unlock_irqrestore(&ds.lock, flags);
	return count;
}

static const struct file_operations ds_submit_fops = {
	.owner	= THIS_MODULE,
	.write	= ds_submit_write,
	.llseek	= noop_llseek,
};

static ssize_t ds_fault_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char kbuf[DS_CTL_MAX + 1];
	unsigned long flags;

	if (*ppos || count == 0 || count > DS_CTL_MAX)
		return -EINVAL;
	if (copy_from_user(kbuf, ubuf, count))
		return -EFAULT;
	kbuf[count] = '\0';
	if (!sysfs_streq(kbuf, "timeout"))
		return -EINVAL;
	raw_spin_lock_irqsave(&ds.lock, flags);
	ds.faults++;
	raw_spin_unlock_irqrestore(&ds.lock, flags);
	return count;
}

static const struct file_operations ds_fault_fops = {
	.owner	= THIS_MODULE,
	.write	= ds_fault_write,
	.llseek	= noop_llseek,
};

static int ds_counters_show(struct seq_file *m, void *unused)
{
	struct ds_counters c;
	unsigned long flags;

	raw_spin_lock_irqsave(&ds.lock, flags);
	c = ds.cnt;
	raw_spin_unlock_irqrestore(&ds.lock, flags);
	seq_printf(m, "submitted %llu\nstarted %llu\ncompleted %llu\n"
		   "timeouts %llu\nresets %llu\ntext_records %llu\n"
		   "event_records %llu\nlog_errors %llu\n",
		   c.submitted, c.started, c.completed, c.timeouts, c.resets,
		   c.text_records, c.event_records, c.log_errors);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ds_counters);

static int ds_rate_set(void *data, u64 val)
{
	if (val < 1 || val > DS_MAX_RATE_HZ)
		return -EINVAL;
	WRITE_ONCE(ds.rate_hz, val);
	return 0;
}

static int ds_rate_get(void *data, u64 *val)
{
	*val = READ_ONCE(ds.rate_hz);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(ds_rate_fops, ds_rate_get, ds_rate_set, "%llu\n");

static int ds_timeout_set(void *data, u64 val)
{
	if (val < 1 || val > DS_MAX_TIMEOUT_MS)
		return -EINVAL;
	WRITE_ONCE(ds.timeout_ms, val);
	return 0;
}

static int ds_timeout_get(void *data, u64 *val)
{
	*val = READ_ONCE(ds.timeout_ms);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(ds_timeout_fops, ds_timeout_get, ds_timeout_set,
			 "%llu\n");

static int __init ds_init(void)
{
	int ret;

	ret = INIT_DTI_HANDLE(ds_trace);
	if (ret)
		return ret;
	ret = dti_event_register(&ds_trace.info, &ds_ev_req);
	if (ret) {
		CLEANUP_DTI_HANDLE(ds_trace);
		return ret;
	}
	hrtimer_setup(&ds.irq, ds_irq, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	timer_setup(&ds.watchdog, ds_watchdog, 0);

	ds_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("submit", 0200, ds_dir, NULL, &ds_submit_fops);
	debugfs_create_file("fault", 0200, ds_dir, NULL, &ds_fault_fops);
	debugfs_create_file("counters", 0444, ds_dir, NULL, &ds_counters_fops);
	debugfs_create_file_unsafe("rate_hz", 0644, ds_dir, NULL,
				   &ds_rate_fops);
	debugfs_create_file_unsafe("timeout_ms", 0644, ds_dir, NULL,
				   &ds_timeout_fops);
	/* The first record also has DTI create the buffers, in a work item. */
	ds_count_log(dti_printk(ds_trace, DTI_LEVEL_NOTICE,
				"dti_sample loaded: %u Hz, timeout %u ms\n",
				ds.rate_hz, ds.timeout_ms),
		     &ds.cnt.text_records);
	return 0;
}

static void __exit ds_exit(void)
{
	debugfs_remove_recursive(ds_dir);
	hrtimer_cancel(&ds.irq);
	timer_delete_sync(&ds.watchdog);
	CLEANUP_DTI_HANDLE(ds_trace);
}

module_init(ds_init);
module_exit(ds_exit);

MODULE_DESCRIPTION("DTI sample driver: a simulated device that traces itself");
MODULE_LICENSE("GPL");
