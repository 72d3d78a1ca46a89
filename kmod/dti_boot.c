// SPDX-License-Identifier: GPL-2.0
/*
 * Channels and levels from the kernel command line, or dti.ko's load:
 *
 *	dti.channel=NAME:SIZE:LEVEL[:persist][,...]
 *	dti.level=NAME:LEVEL[,...]
 *
 * (channel= and level= to insmod).  Both may be given more than once;
 * each setting adds its entries to the ones before.  Built in, a
 * parameter's set callback runs from parse_args() in start_kernel(),
 * before the slab allocator exists: it only copies the value into
 * static storage.  DTI's init parses the entries.  A wrong one is
 * refused with a console message that names the parameter, the entry
 * and what is wrong with it, and the others are applied; the boot, or
 * the module's load, goes on.
 *
 * A channel's NAME may hold ':', so the fields are taken from the right.
 * The level table is filled once, before DTI is up, and only read after.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "dti_internal.h"

/* Bytes of one parameter's values, all its settings together */
#define DTI_BOOT_ARG_MAX	1024
/* Longest entry: a name and the longest SIZE and LEVEL one would write */
#define DTI_BOOT_ENTRY_MAX	(DTI_NAME_MAX + 64)
/* Channels channel= creates, levels level= keeps, at most */
#define DTI_BOOT_CHANNELS_MAX	16
#define DTI_BOOT_LEVELS_MAX	32
/* The flag a channel= entry may end with */
#define DTI_BOOT_PERSIST	"persist"

/**
 * struct dti_boot_arg - the values of one parameter, as given
 * @name:	the parameter, as its messages name it
 * @buf:	the values of all its settings, separated by ','
 * @len:	bytes of @buf used
 */
struct dti_boot_arg {
	const char *name;
	char buf[DTI_BOOT_ARG_MAX];
	size_t len;
};

static struct dti_boot_arg dti_boot_channel_arg = { .name = "dti.channel" };
static struct dti_boot_arg dti_boot_level_arg = { .name = "dti.level" };

/*
 * Add a setting's value to the ones before.  No allocation, no parsing:
 * built in, this runs before the slab allocator.  Never fails, so that
 * neither the boot nor the load stops at a wrong value.
 */
static int dti_boot_arg_set(const char *val, const struct kernel_param *kp)
{
	struct dti_boot_arg *arg = kp->arg;
	size_t len = val ? strlen(val) : 0;

	if (!len) {
		pr_err("%s: needs a value: ignored\n", arg->name);
		return 0;
	}
	if (len + !!arg->len >= sizeof(arg->buf) - arg->len) {
		pr_err("%s=%s: more than %zu bytes of values in all: ignored\n",
		       arg->name, val, sizeof(arg->buf) - 1);
		return 0;
	}
	if (arg->len)
		arg->buf[arg->len++] = ',';
	memcpy(arg->buf + arg->len, val, len + 1);
	arg->len += len;
	return 0;
}

static int dti_boot_arg_get(char *buf, const struct kernel_param *kp)
{
	struct dti_boot_arg *arg = kp->arg;

	return sysfs_emit(buf, "%s\n", arg->buf);
}

static const struct kernel_param_ops dti_boot_arg_ops = {
	.set = dti_boot_arg_set,
	.get = dti_boot_arg_get,
};

module_param_cb(channel, &dti_boot_arg_ops, &dti_boot_channel_arg, 0444);
MODULE_PARM_DESC(channel,
		 "NAME:SIZE:LEVEL[:persist],...: channels to create at DTI's init (SIZE bytes per CPU, K/M suffixes)");
module_param_cb(level, &dti_boot_arg_ops, &dti_boot_level_arg, 0444);
MODULE_PARM_DESC(level,
		 "NAME:LEVEL,...: the level of each named channel, set when it is registered");

/* Channels channel= created, for dti.ko's unload */
static struct dti_info *dti_boot_channels[DTI_BOOT_CHANNELS_MAX];

/**
 * struct dti_boot_level - a level= entry
 * @name:	channel name
 * @level:	its level
 */
struct dti_boot_level {
	char name[DTI_NAME_MAX + 1];
	int level;
};

static struct dti_boot_level dti_boot_levels[DTI_BOOT_LEVELS_MAX];
static unsigned int dti_boot_n_levels;

/*
 * Take the next entry of @*rest into @entry, NUL-terminated.
 * Return: false when there is none left.
 */
static bool __init dti_boot_next(const struct dti_boot_arg *arg, char **rest,
				 char *entry)
{
	char *e;

	while ((e = strsep(rest, ","))) {
		/* None given (or ",,"): nothing to say. */
		if (!*e)
			continue;
		if (strscpy(entry, e, DTI_BOOT_ENTRY_MAX) >= 0)
			return true;
		pr_err("%s=%s: longer than %d bytes: ignored\n", arg->name, e,
		       DTI_BOOT_ENTRY_MAX - 1);
	}
	return false;
}

/* Cut the last ':'-separated field off @entry; NULL if there is none. */
static char *__init dti_boot_field(char *entry)
{
	char *colon = strrchr(entry, ':');

	if (!colon)
		return NULL;
	*colon = '\0';
	return colon + 1;
}

/**
 * dti_boot_levels_init - parse the level= entries into the level table
 *
 * Context: DTI's init, before any channel is registered.
 */
void __init dti_boot_levels_init(void)
{
	struct dti_boot_arg *arg = &dti_boot_level_arg;
	static char values[DTI_BOOT_ARG_MAX] __initdata;
	char entry[DTI_BOOT_ENTRY_MAX], whole[DTI_BOOT_ENTRY_MAX];
	char *rest = values, *lvl;
	unsigned int i;
	int level;

	strscpy(values, arg->buf, sizeof(values));
	while (dti_boot_next(arg, &rest, entry)) {
		strscpy(whole, entry, sizeof(whole));
		lvl = dti_boot_field(entry);
		if (!lvl) {
			pr_err("%s=%s: not NAME:LEVEL: ignored\n", arg->name, whole);
			continue;
		}
		if (dti_check_name(entry)) {
			pr_err("%s=%s: \"%s\" is not a channel name (1 to %d letters, digits and \"_-.:\", not starting with '.'): ignored\n",
			       arg->name, whole, entry, DTI_NAME_MAX);
			continue;
		}
		if (dti_parse_level(lvl, &level)) {
			pr_err("%s=%s: \"%s\" is not a level (%d to %d, off or destroy): ignored\n",
			       arg->name, whole, lvl, DTI_LEVEL_MIN, DTI_LEVEL_MAX);
			continue;
		}
		/* A name given again: the last level given counts. */
		for (i = 0; i < dti_boot_n_levels; i++) {
			if (!strcmp(dti_boot_levels[i].name, entry))
				break;
		}
		if (i == DTI_BOOT_LEVELS_MAX) {
			pr_err("%s=%s: more than %d channels: ignored\n",
			       arg->name, whole, DTI_BOOT_LEVELS_MAX);
			continue;
		}
		strscpy(dti_boot_levels[i].name, entry, sizeof(dti_boot_levels[i].name));
		dti_boot_levels[i].level = level;
		if (i == dti_boot_n_levels)
			dti_boot_n_levels++;
	}
}

/**
 * dti_boot_level - the level a channel is registered at
 * @name: a valid channel name
 * @level: the level its registration asks for
 *
 * Context: any, once DTI is up (the table does not change after).
 * Return: the level level= gives @name, or else @level.
 */
int dti_boot_level(const char *name, int level)
{
	unsigned int i;

	for (i = 0; i < dti_boot_n_levels; i++) {
		if (!strcmp(dti_boot_levels[i].name, name))
			return dti_boot_levels[i].level;
	}
	return level;
}

/* Why registration refused a channel= entry, in words */
static const char *__init dti_boot_why(int err)
{
	switch (err) {
	case -EEXIST:
		return "a channel of that name exists";
	case -ENODEV:
		return "persist needs a persistent region (dti.persist=)";
	case -ENOSPC:
		return "no room for it in the persistent region";
	case -ENOMEM:
		return "out of memory";
	default:
		return "registration failed";
	}
}

/* Create the channel of one channel= entry.  Return: 0 or -errno. */
static int __init dti_boot_channel(const struct dti_boot_arg *arg, char *entry,
				   const char *whole, struct dti_info **info)
{
	char *lvl, *size_str, *end;
	unsigned int flags = 0;
	unsigned long long size;
	size_t subbuf;
	int level;

	lvl = dti_boot_field(entry);
	if (lvl && !strcmp(lvl, DTI_BOOT_PERSIST)) {
		flags = DTI_F_PERSIST;
		lvl = dti_boot_field(entry);
	}
	size_str = lvl ? dti_boot_field(entry) : NULL;
	if (!size_str) {
		pr_err("%s=%s: not NAME:SIZE:LEVEL[:persist]: ignored\n", arg->name, whole);
		return -EINVAL;
	}
	if (dti_check_name(entry)) {
		pr_err("%s=%s: \"%s\" is not a channel name (1 to %d letters, digits and \"_-.:\", not starting with '.'): ignored\n",
		       arg->name, whole, entry, DTI_NAME_MAX);
		return -EINVAL;
	}
	size = memparse(size_str, &end);
	subbuf = dti_default_subbuf_size(size);
	if (end == size_str || *end || size > DTI_BUF_SIZE_MAX ||
	    dti_check_geometry(subbuf, DTI_DEFAULT_N_SUBBUFS)) {
		pr_err("%s=%s: SIZE \"%s\" is not %u to %u bytes per CPU (K and M suffixes): ignored\n",
		       arg->name, whole, size_str,
		       DTI_SUBBUF_SIZE_MIN * DTI_DEFAULT_N_SUBBUFS, DTI_BUF_SIZE_MAX);
		return -EINVAL;
	}
	if (dti_parse_level(lvl, &level)) {
		pr_err("%s=%s: \"%s\" is not a level (%d to %d, off or destroy): ignored\n",
		       arg->name, whole, lvl, DTI_LEVEL_MIN, DTI_LEVEL_MAX);
		return -EINVAL;
	}
	*info = dti_register_flags(entry, subbuf, DTI_DEFAULT_N_SUBBUFS, level, flags);
	if (IS_ERR(*info)) {
		pr_err("%s=%s: %s (%ld): ignored\n", arg->name, whole,
		       dti_boot_why(PTR_ERR(*info)), PTR_ERR(*info));
		return PTR_ERR(*info);
	}
	return 0;
}

/**
 * dti_boot_channels_init - create the channels channel= names
 *
 * Context: DTI's init, once it is up.
 * Return: the number of channels created.
 */
unsigned int __init dti_boot_channels_init(void)
{
	struct dti_boot_arg *arg = &dti_boot_channel_arg;
	static char values[DTI_BOOT_ARG_MAX] __initdata;
	char entry[DTI_BOOT_ENTRY_MAX], whole[DTI_BOOT_ENTRY_MAX];
	struct dti_info *info;
	char *rest = values;
	unsigned int n = 0;

	strscpy(values, arg->buf, sizeof(values));
	while (dti_boot_next(arg, &rest, entry)) {
		strscpy(whole, entry, sizeof(whole));
		if (n == DTI_BOOT_CHANNELS_MAX) {
			pr_err("%s=%s: more than %d channels: ignored\n",
			       arg->name, whole, DTI_BOOT_CHANNELS_MAX);
			continue;
		}
		if (!dti_boot_channel(arg, entry, whole, &info))
			dti_boot_channels[n++] = info;
	}
	return n;
}

/**
 * dti_boot_channels_exit - remove the channels channel= created
 *
 * Context: dti.ko's unload.
 */
void dti_boot_channels_exit(void)
{
	unsigned int i;

	for (i = 0; i < DTI_BOOT_CHANNELS_MAX; i++) {
		dti_unregister(dti_boot_channels[i]);
		dti_boot_channels[i] = NULL;
	}
}
