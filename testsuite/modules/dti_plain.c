// SPDX-License-Identifier: GPL-2.0
/*
 * dti_plain - a module that knows nothing of DTI, for injection tests.
 *
 * Writing "A B" to /sys/kernel/debug/dti_plain/poke calls
 * plain_compute(A, B), which returns A * B + 1; "last" reads the result.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#define PLAIN_CMD_MAX	32

static struct dentry *plain_dir;
static int plain_last;

static noinline int plain_compute(int a, int b)
{
	return a * b + 1;
}

static ssize_t plain_poke(struct file *file, const char __user *ubuf,
			  size_t count, loff_t *ppos)
{
	char buf[PLAIN_CMD_MAX];
	int a, b, r;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%d %d", &a, &b) != 2)
		return -EINVAL;
	r = plain_compute(a, b);
	WRITE_ONCE(plain_last, r);
	return count;
}

static const struct file_operations plain_fops = {
	.owner	= THIS_MODULE,
	.write	= plain_poke,
	.llseek	= noop_llseek,
};

static int __init plain_init(void)
{
	plain_dir = debugfs_create_dir("dti_plain", NULL);
	debugfs_create_file("poke", 0200, plain_dir, NULL, &plain_fops);
	debugfs_create_u32("last", 0444, plain_dir, (u32 *)&plain_last);
	return 0;
}

static void __exit plain_exit(void)
{
	debugfs_remove_recursive(plain_dir);
}

module_init(plain_init);
module_exit(plain_exit);
MODULE_DESCRIPTION("A module without DTI, for SystemTap injection tests");
MODULE_LICENSE("GPL");
