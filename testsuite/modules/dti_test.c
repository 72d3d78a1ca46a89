// SPDX-License-Identifier: GPL-2.0
/*
 * dti_test - drives the DTI API on demand, for the test suite.
 *
 * Commands are written to /sys/kernel/debug/dti_test/ctl, one per write;
 * the outcome of the last one is read back from the same file as
 * "key=value" pairs, always starting with "ret=<errno or 0>".
 *
 *   register NAME SIZE LEVEL              dti_register()
 *   register_sub NAME SUBSIZE NSUB LEVEL FLAGS   dti_register_flags()
 *   unregister NAME                       dti_unregister()
 *   set_level NAME LEVEL                  dti_set_level()
 *   printk NAME LEVEL COUNT CPU CTX TAG   COUNT records "TAG <i>"
 *   event NAME LEVEL COUNT CPU CTX LEN    COUNT binary records, see below
 *   reserve NAME LEVEL COUNT CPU CTX LEN  the same through __dti_reserve()
 *
 * NAME may be "@empty" for "" and "@null" for NULL.  CPU is a CPU
 * number or -1 for whichever CPU the command runs on.  CTX is "process"
 * (a kworker bound to CPU), "softirq" (a timer on CPU) or "hardirq" (a
 * pinned hard hrtimer on CPU).  Binary payload i of length LEN holds i as
 * a little-endian u32 in its first four bytes and (i + j) & 0xff in byte
 * j after that.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/dti.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <asm/unaligned.h>

#define DTT_MAX_CHANNELS	16
#define DTT_CMD_MAX		256
#define DTT_RESULT_MAX		256
#define DTT_ARGS_MAX		8
#define DTT_TAG_MAX		64
#define DTT_PAYLOAD_MAX		(64 * 1024)

enum dtt_kind { DTT_PRINTK, DTT_EVENT, DTT_RESERVE };
enum dtt_ctx { DTT_PROCESS, DTT_SOFTIRQ, DTT_HARDIRQ };

static const char *const dtt_ctx_names[] = {
	[DTT_PROCESS] = "process",
	[DTT_SOFTIRQ] = "softirq",
	[DTT_HARDIRQ] = "hardirq",
};

struct dtt_channel {
	char name[DTI_NAME_MAX + 1];
	struct dti_info *trace;
};

struct dtt_job {
	struct dti_info *trace;
	enum dtt_kind kind;
	enum dtt_ctx ctx;
	int level;
	unsigned int count;
	size_t len;
	char tag[DTT_TAG_MAX];
	u8 *payload;
	/* results */
	unsigned int stored;
	unsigned int errors;
	int first_err;
	int ran_cpu;
	bool ctx_ok;
	struct completion done;
	struct timer_list timer;
	struct hrtimer hrtimer;
};

static struct dtt_channel dtt_channels[DTT_MAX_CHANNELS];
static DEFINE_MUTEX(dtt_lock);		/* one command at a time */
static char dtt_result[DTT_RESULT_MAX];
static struct dentry *dtt_dir;

static const char *dtt_name_arg(const char *arg)
{
	if (!strcmp(arg, "@null"))
		return NULL;
	if (!strcmp(arg, "@empty"))
		return "";
	return arg;
}

static struct dtt_channel *dtt_find(const char *name)
{
	int i;

	for (i = 0; i < DTT_MAX_CHANNELS; i++) {
		if (dtt_channels[i].trace && !strcmp(dtt_channels[i].name, name))
			return &dtt_channels[i];
	}
	return NULL;
}

static struct dtt_channel *dtt_free_slot(void)
{
	int i;

	for (i = 0; i < DTT_MAX_CHANNELS; i++) {
		if (!dtt_channels[i].trace)
			return &dtt_channels[i];
	}
	return NULL;
}

static void dtt_fill_payload(u8 *p, size_t len, unsigned int i)
{
	size_t j;

	for (j = 0; j < len; j++)
		p[j] = (i + j) & 0xff;
	if (len >= sizeof(u32))
		put_unaligned_le32(i, p);
}

static int dtt_write_one(struct dtt_job *job, unsigned int i)
{
	unsigned long flags;
	void *p;

	switch (job->kind) {
	case DTT_PRINTK:
		return __dti_printk(job->trace, job->level, "%s %u\n",
				    job->tag, i);
	case DTT_EVENT:
		dtt_fill_payload(job->payload, job->len, i);
		return __dti_event(job->trace, job->level, job->payload,
				   job->len);
	case DTT_RESERVE:
		local_irq_save(flags);
		p = __dti_reserve(job->trace, job->level, job->len);
		if (p)
			dtt_fill_payload(p, job->len, i);
		local_irq_restore(flags);
		return p ? 0 : -ENOSPC;
	}
	return -EINVAL;
}

static void dtt_run(struct dtt_job *job, bool ctx_ok)
{
	unsigned int i;
	int ret;

	job->ran_cpu = raw_smp_processor_id();
	job->ctx_ok = ctx_ok;
	for (i = 0; i < job->count; i++) {
		ret = dtt_write_one(job, i);
		if (ret) {
			if (!job->errors)
				job->first_err = ret;
			job->errors++;
		} else {
			job->stored++;
		}
	}
}

static void dtt_timer_fn(struct timer_list *t)
{
	struct dtt_job *job = from_timer(job, t, timer);

	dtt_run(job, in_serving_softirq() && !in_hardirq());
	complete(&job->done);
}

static enum hrtimer_restart dtt_hrtimer_fn(struct hrtimer *t)
{
	struct dtt_job *job = container_of(t, struct dtt_job, hrtimer);

	dtt_run(job, in_hardirq());
	complete(&job->done);
	return HRTIMER_NORESTART;
}

/* Runs on the chosen CPU in process context. */
static long dtt_on_cpu(void *arg)
{
	struct dtt_job *job = arg;

	switch (job->ctx) {
	case DTT_PROCESS:
		dtt_run(job, !in_interrupt() && !irqs_disabled());
		complete(&job->done);
		break;
	case DTT_SOFTIRQ:
		timer_setup(&job->timer, dtt_timer_fn, 0);
		job->timer.expires = jiffies;
		add_timer_on(&job->timer, raw_smp_processor_id());
		break;
	case DTT_HARDIRQ:
		hrtimer_init(&job->hrtimer, CLOCK_MONOTONIC,
				      HRTIMER_MODE_REL_PINNED_HARD);
		job->hrtimer.function = dtt_hrtimer_fn;
		hrtimer_start(&job->hrtimer, ns_to_ktime(NSEC_PER_USEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
		break;
	}
	return 0;
}

static int dtt_parse_ctx(const char *s, enum dtt_ctx *ctx)
{
	int i = match_string(dtt_ctx_names, ARRAY_SIZE(dtt_ctx_names), s);

	if (i < 0)
		return i;
	*ctx = i;
	return 0;
}

static int dtt_cmd_write(enum dtt_kind kind, char **argv, int argc)
{
	struct dtt_channel *c;
	struct dtt_job *job;
	int cpu, ret;

	if (argc != 7)
		return -EINVAL;
	c = dtt_find(argv[1]);
	if (!c)
		return -ENOENT;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	job->trace = c->trace;
	job->kind = kind;
	init_completion(&job->done);
	ret = kstrtoint(argv[2], 0, &job->level);
	if (!ret)
		ret = kstrtouint(argv[3], 0, &job->count);
	if (!ret)
		ret = kstrtoint(argv[4], 0, &cpu);
	if (!ret)
		ret = dtt_parse_ctx(argv[5], &job->ctx);
	if (ret)
		goto out;
	if (kind == DTT_PRINTK) {
		strscpy(job->tag, argv[6], sizeof(job->tag));
	} else {
		ret = kstrtoul(argv[6], 0, &job->len);
		if (ret || job->len > DTT_PAYLOAD_MAX) {
			ret = -EINVAL;
			goto out;
		}
		job->payload = kmalloc(max_t(size_t, job->len, 1), GFP_KERNEL);
		if (!job->payload) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (cpu < 0)
		cpu = raw_smp_processor_id();
	if (cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		ret = -ENXIO;
		goto out;
	}

	work_on_cpu(cpu, dtt_on_cpu, job);
	wait_for_completion(&job->done);
	/* The callback may still be returning after complete(). */
	if (job->ctx == DTT_SOFTIRQ)
		del_timer_sync(&job->timer);
	if (job->ctx == DTT_HARDIRQ)
		hrtimer_cancel(&job->hrtimer);

	scnprintf(dtt_result, sizeof(dtt_result),
		  "ret=0 stored=%u errors=%u first_err=%d cpu=%d ctx=%s ctx_ok=%d\n",
		  job->stored, job->errors, job->first_err, job->ran_cpu,
		  dtt_ctx_names[job->ctx], job->ctx_ok);
out:
	kfree(job->payload);
	kfree(job);
	return ret;
}

static int dtt_cmd_register(char **argv, int argc)
{
	unsigned long size, nsub = 0;
	struct dti_info *trace;
	struct dtt_channel *c;
	unsigned int flags = 0;
	const char *name;
	int level, ret;

	if (argc != 4 && argc != 6)
		return -EINVAL;
	name = dtt_name_arg(argv[1]);
	ret = kstrtoul(argv[2], 0, &size);
	if (!ret && argc == 6)
		ret = kstrtoul(argv[3], 0, &nsub);
	if (!ret)
		ret = kstrtoint(argv[argc == 6 ? 4 : 3], 0, &level);
	if (!ret && argc == 6)
		ret = kstrtouint(argv[5], 0, &flags);
	if (ret)
		return ret;
	c = dtt_free_slot();
	if (!c)
		return -ENOSPC;

	if (argc == 4)
		trace = dti_register(name, size, level);
	else
		trace = dti_register_flags(name, size, nsub, level, flags);
	if (IS_ERR(trace))
		return PTR_ERR(trace);
	if (WARN_ON(!trace))
		return -EFAULT;
	strscpy(c->name, name, sizeof(c->name));
	c->trace = trace;
	return 0;
}

static int dtt_execute(char **argv, int argc)
{
	struct dtt_channel *c;
	int level, ret;

	if (!strcmp(argv[0], "register") || !strcmp(argv[0], "register_sub"))
		return dtt_cmd_register(argv, argc);
	if (!strcmp(argv[0], "printk"))
		return dtt_cmd_write(DTT_PRINTK, argv, argc);
	if (!strcmp(argv[0], "event"))
		return dtt_cmd_write(DTT_EVENT, argv, argc);
	if (!strcmp(argv[0], "reserve"))
		return dtt_cmd_write(DTT_RESERVE, argv, argc);

	if (argc < 2)
		return -EINVAL;
	c = dtt_find(argv[1]);
	if (!c)
		return -ENOENT;
	if (!strcmp(argv[0], "unregister") && argc == 2) {
		dti_unregister(c->trace);
		c->trace = NULL;
		return 0;
	}
	if (!strcmp(argv[0], "set_level") && argc == 3) {
		ret = kstrtoint(argv[2], 0, &level);
		return ret ? ret : dti_set_level(c->trace, level);
	}
	return -EINVAL;
}

static ssize_t dtt_ctl_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char *argv[DTT_ARGS_MAX];
	char *buf, *p, *tok;
	int argc = 0, ret;

	if (count == 0 || count >= DTT_CMD_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = strim(buf);
	while ((tok = strsep(&p, " \t")) && argc < DTT_ARGS_MAX) {
		if (*tok)
			argv[argc++] = tok;
	}
	mutex_lock(&dtt_lock);
	scnprintf(dtt_result, sizeof(dtt_result), "ret=0\n");
	ret = argc ? dtt_execute(argv, argc) : -EINVAL;
	if (ret)
		scnprintf(dtt_result, sizeof(dtt_result), "ret=%d\n", ret);
	mutex_unlock(&dtt_lock);
	kfree(buf);
	return count;
}

static ssize_t dtt_ctl_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char result[DTT_RESULT_MAX];

	mutex_lock(&dtt_lock);
	strscpy(result, dtt_result, sizeof(result));
	mutex_unlock(&dtt_lock);
	return simple_read_from_buffer(ubuf, count, ppos, result,
				       strlen(result));
}

static const struct file_operations dtt_ctl_fops = {
	.owner	= THIS_MODULE,
	.write	= dtt_ctl_write,
	.read	= dtt_ctl_read,
	.llseek	= default_llseek,
};

static int __init dtt_init(void)
{
	dtt_dir = debugfs_create_dir("dti_test", NULL);
	debugfs_create_file("ctl", 0600, dtt_dir, NULL, &dtt_ctl_fops);
	return 0;
}

static void __exit dtt_exit(void)
{
	int i;

	debugfs_remove_recursive(dtt_dir);
	for (i = 0; i < DTT_MAX_CHANNELS; i++)
		dti_unregister(dtt_channels[i].trace);
}

module_init(dtt_init);
module_exit(dtt_exit);

MODULE_DESCRIPTION("DTI test client: drives the DTI API for the test suite");
MODULE_LICENSE("GPL");
