// SPDX-License-Identifier: GPL-2.0
/*
 * dti_lines - records that say where they were logged, for the tests of
 * `dti read --lines` and its offline forms (testsuite/test_lines.py).
 *
 * Every record's text is "FILE:LINE FUNCTION", the __FILE__, __LINE__ and
 * __func__ of its own logging call: the line a reader resolves the
 * record's caller to must be that one.  The calls are in an ordinary
 * function, a function the compiler must inline into two callers, a
 * function it must not inline, a cold function (which lands in
 * .text.unlikely, after .text) and the init function (its record is
 * logged from .init.text, freed once the module is live: a reader says
 * it cannot resolve it).
 *
 * Writing N to /sys/kernel/debug/dti_lines/log logs N rounds of the
 * calls at level INFO into channel "lines", and with persist=1 into the
 * persistent channel "lines_p" as well (dti.ko needs its persist=).
 */
#include <linux/debugfs.h>
#include <linux/dti.h>
#include <linux/module.h>

/* The text of a record: where its call is; into lines_p too with persist=1 */
#define LINES_LOG(level) do {						\
	dti_printk(lines_trace, level, "%s:%d %s\n", __FILE__, __LINE__, __func__); \
	if (lines_persist)						\
		dti_printk(lines_pers, level, "%s:%d %s\n", __FILE__, __LINE__, __func__); \
} while (0)

/* Rounds one write may ask for */
#define LINES_ROUNDS_MAX	100000

DEFINE_DTI_HANDLE(lines_trace, "lines", 256 * 1024, DTI_LEVEL_INFO);
DEFINE_DTI_PERSIST_HANDLE(lines_pers, "lines_p", 256 * 1024, DTI_LEVEL_INFO);

static bool lines_persist;
module_param_named(persist, lines_persist, bool, 0444);
MODULE_PARM_DESC(persist, "log into the persistent channel lines_p as well");

static struct dentry *lines_dir;

static __always_inline void lines_helper(int round)
{
	if (round >= 0)
		LINES_LOG(DTI_LEVEL_INFO);
}

static noinline void lines_plain(int round)
{
	LINES_LOG(DTI_LEVEL_INFO);
	lines_helper(round);
}

static noinline void lines_other(int round)
{
	lines_helper(round);
	LINES_LOG(DTI_LEVEL_INFO);
}

static noinline __cold void lines_cold(void)
{
	LINES_LOG(DTI_LEVEL_INFO);
}

static int lines_log_set(void *data, u64 n)
{
	u64 i;

	if (n > LINES_ROUNDS_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		lines_plain(i);
		lines_other(i);
		lines_cold();
	}
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(lines_log_fops, NULL, lines_log_set, "%llu\n");

static int __init lines_init(void)
{
	int ret = INIT_DTI_HANDLE(lines_trace);

	if (ret)
		return ret;
	if (lines_persist) {
		ret = INIT_DTI_HANDLE(lines_pers);
		if (ret) {
			CLEANUP_DTI_HANDLE(lines_trace);
			return ret;
		}
	}
	LINES_LOG(DTI_LEVEL_INFO);
	lines_dir = debugfs_create_dir("dti_lines", NULL);
	debugfs_create_file_unsafe("log", 0200, lines_dir, NULL, &lines_log_fops);
	return 0;
}

static void __exit lines_exit(void)
{
	debugfs_remove_recursive(lines_dir);
	if (lines_persist)
		CLEANUP_DTI_HANDLE(lines_pers);
	CLEANUP_DTI_HANDLE(lines_trace);
}

module_init(lines_init);
module_exit(lines_exit);
MODULE_DESCRIPTION("Records that name their own source line, for dti --lines tests");
MODULE_LICENSE("GPL");
