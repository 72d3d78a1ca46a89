// SPDX-License-Identifier: GPL-2.0
/*
 * DTI for BPF programs: kfuncs that write into channels and freeze them.
 *
 * A program gets a channel by name (dti_bpf_get(), an acquire kfunc that
 * may return NULL), logs into it (a binary record, text the program
 * formatted, an event of a type the channel's driver registered), arms
 * its halt trigger by count or by time, reads what the trigger has left,
 * switches its ordered mode, and puts it (dti_bpf_put(), the release):
 * the verifier refuses a program that uses the channel without checking
 * for NULL, after putting it, or that leaves it unput.
 *
 * The channel is reached under RCU: a tracing or kprobe program runs
 * inside an RCU read-side section, and a channel is freed only after a
 * grace period that follows its removal from the name table
 * (__dti_unregister()), so what dti_bpf_get() found stays valid until
 * the program returns, which
 * is as long as the verifier lets it keep the reference (no map may hold
 * it: no destructor is registered).  The writes go through the write
 * path, which is lock-free and safe in every context a program runs in,
 * NMI included; what it refuses is counted in the channel's stats as for
 * any caller: a level out of range (a bad argument) and a length past
 * the channel's largest payload, both as rejected.  A record's caller is
 * the return address into the program, which kallsyms names
 * bpf_prog_<tag>_<name>.
 *
 * The kfuncs need dti.ko's BTF (kmod/mkbtf.sh for a module built out of
 * tree); without it dti_bpf_init() says so and registers nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/module.h>
#include <linux/rcupdate.h>

#include "dti_compat.h"
#include "dti_internal.h"

#if IS_ENABLED(CONFIG_BPF_SYSCALL) && IS_ENABLED(CONFIG_DEBUG_INFO_BTF) && \
	defined(DTI_HAVE_BTF_KFUNC_ID_SET)

/**
 * dti_bpf_get - find a channel by name, for a BPF program
 * @name: its name, not necessarily NUL-terminated within @name__sz
 * @name__sz: bytes of @name
 *
 * Context: a BPF program (any context, NMI included).
 * Return: the channel, to be put with dti_bpf_put(), or NULL if there is
 * no such (visible) channel or @name is no channel name.
 */
__bpf_kfunc struct dti_channel *dti_bpf_get(const char *name, u32 name__sz)
{
	char buf[DTI_NAME_MAX + 1];
	size_t len = strnlen(name, min_t(size_t, name__sz, sizeof(buf)));

	if (!len || len == sizeof(buf))
		return NULL;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return dti_find_visible(buf);
}

/**
 * dti_bpf_put - put a channel dti_bpf_get() gave
 * @ch: the channel
 *
 * Context: a BPF program (any context, NMI included).
 */
__bpf_kfunc void dti_bpf_put(struct dti_channel *ch)
{
}

/*
 * Store a record of @flags from a program, its caller @ip.  A level out
 * of range goes to the write path, which counts it (as rejected, a bad
 * argument) rather than have the level filter take it for a verbose one.
 */
static int dti_bpf_write(struct dti_channel *ch, int level, u8 flags,
			 const void *data, u32 len, unsigned long ip)
{
	if (level >= 0 && level <= DTI_LEVEL_MAX && !dti_enabled(ch->info, level))
		return 1;
	return dti_write_record(ch->info, level, flags, data, len, ip);
}

/**
 * dti_bpf_log - store a binary record from a BPF program
 * @ch: the channel, from dti_bpf_get()
 * @level: the record's level, 0..7
 * @data: its payload
 * @data__sz: bytes of @data
 *
 * Context: a BPF program (any context, NMI included).
 * Return: 0 if stored, 1 if the channel's level filtered it out, else a
 * negative errno of the write path (the loss counted in the channel's
 * stats): -EMSGSIZE for more than the channel's largest payload, -EINVAL
 * for a level out of range.
 */
__bpf_kfunc int dti_bpf_log(struct dti_channel *ch, int level, const void *data,
			    u32 data__sz)
{
	return dti_bpf_write(ch, level, 0, data, data__sz, _RET_IP_);
}

/**
 * dti_bpf_log_text - store a text record from a BPF program
 * @ch: the channel, from dti_bpf_get()
 * @level: the record's level, 0..7
 * @text: the text, as bpf_snprintf() formatted it; it ends at its first
 *	  NUL or after @text__sz bytes
 * @text__sz: bytes of @text
 *
 * Context: a BPF program (any context, NMI included).
 * Return: as dti_bpf_log().
 */
__bpf_kfunc int dti_bpf_log_text(struct dti_channel *ch, int level, const char *text,
				 u32 text__sz)
{
	return dti_bpf_write(ch, level, DTI_REC_TEXT, text, strnlen(text, text__sz),
			     _RET_IP_);
}

/**
 * dti_bpf_log_event - store an event of a type registered on the channel
 * @ch: the channel, from dti_bpf_get()
 * @level: the record's level, 0..7
 * @data: the event as dti_record.h lays it out: the type's __u16 id, then
 *	  its values, packed
 * @data__sz: bytes of @data, at least the id's two
 *
 * The driver registers the type (dti_event_register()); the program packs
 * the values its template says.  An event whose values do not fill the
 * type's layout prints as hex.
 *
 * Context: a BPF program (any context, NMI included).
 * Return: as dti_bpf_log(); -EINVAL also for fewer than two bytes.
 */
__bpf_kfunc int dti_bpf_log_event(struct dti_channel *ch, int level, const void *data,
				  u32 data__sz)
{
	if (data__sz < sizeof(u16))
		return -EINVAL;
	return dti_bpf_write(ch, level, DTI_REC_TYPED, data, data__sz, _RET_IP_);
}

/**
 * dti_bpf_halt_after - arm a channel's halt trigger by count
 * @ch: the channel, from dti_bpf_get()
 * @count: records it stores before it switches itself off
 *
 * As dti_ctl_halt_after(): with the channel ordered, exactly @count
 * records after the arming are kept, across CPUs.
 *
 * Context: a BPF program (any context, NMI included).
 * Return: 0, -EINVAL for @count over DTI_HALT_COUNT_MAX, -EBUSY if the
 * trigger is armed already.
 */
__bpf_kfunc int dti_bpf_halt_after(struct dti_channel *ch, u64 count)
{
	return __dti_halt_after(ch, count);
}

/**
 * dti_bpf_halt_after_ns - arm a channel's halt trigger by time
 * @ch: the channel, from dti_bpf_get()
 * @ns: nanoseconds it goes on storing, by the records' timestamps
 *
 * Context: a BPF program (any context, NMI included).
 * Return: as dti_ctl_halt_after_ns().
 */
__bpf_kfunc int dti_bpf_halt_after_ns(struct dti_channel *ch, u64 ns)
{
	return __dti_halt_after_ns(ch, ns);
}

/**
 * dti_bpf_trigger_left - what a channel's armed halt trigger has left
 * @ch: the channel, from dti_bpf_get()
 *
 * Context: a BPF program (any context, NMI included).
 * Return: the records it still lets through, or -ENODATA if none is armed.
 */
__bpf_kfunc s64 dti_bpf_trigger_left(struct dti_channel *ch)
{
	return __dti_trigger_left(ch);
}

/**
 * dti_bpf_set_ordered - switch a channel's ordered mode
 * @ch: the channel, from dti_bpf_get()
 * @on: 1: ordered (dti_ctl_set_ordered()); 0: lock-free stores
 *
 * Context: a BPF program (any context, NMI included).
 * Return: 0.
 */
__bpf_kfunc int dti_bpf_set_ordered(struct dti_channel *ch, int on)
{
	WRITE_ONCE(ch->ordered, !!on);
	return 0;
}

DTI_BTF_KFUNCS_START(dti_bpf_kfunc_ids)
BTF_ID_FLAGS(func, dti_bpf_get, KF_ACQUIRE | KF_RET_NULL)
BTF_ID_FLAGS(func, dti_bpf_put, KF_RELEASE)
BTF_ID_FLAGS(func, dti_bpf_log, DTI_KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, dti_bpf_log_text, DTI_KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, dti_bpf_log_event, DTI_KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, dti_bpf_halt_after, DTI_KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, dti_bpf_halt_after_ns, DTI_KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, dti_bpf_trigger_left, DTI_KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, dti_bpf_set_ordered, DTI_KF_TRUSTED_ARGS)
DTI_BTF_KFUNCS_END(dti_bpf_kfunc_ids)

static const struct btf_kfunc_id_set dti_bpf_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &dti_bpf_kfunc_ids,
};

/*
 * The program types that may call them, and whether the kernel must take
 * them.  The ones a kernel may refuse come first: until 6.11 a refused
 * registration frees every set the module registered before it.
 */
static const struct {
	enum bpf_prog_type type;
	const char *name;
	bool needed;
} dti_bpf_prog_types[] = {
	{ BPF_PROG_TYPE_KPROBE, "kprobe", false },
	{ BPF_PROG_TYPE_TRACING, "tracing (fentry, fexit, tp_btf)", true },
};

/**
 * dti_bpf_init - register the kfuncs for the program types that take them
 *
 * Tracing programs (fentry, fexit, tp_btf) take module kfuncs on every
 * kernel that has them; kprobe programs only on later kernels (6.10's
 * kprobe kfunc hook): a kernel that refuses a type with -EINVAL does not
 * have it, and is told once.  Not syscall programs, which are sleepable
 * and run outside the RCU read-side section a found channel needs.
 *
 * The kfuncs are an extra: a dti.ko without BTF has none, and works.
 *
 * Context: process context, at dti.ko's init.
 */
void __init dti_bpf_init(void)
{
	unsigned int i;
	int ret;

#ifdef MODULE
	if (!THIS_MODULE->btf_data_size) {
		pr_info("no BTF in dti.ko: BPF programs cannot call its kfuncs (build it with kmod/mkbtf.sh)\n");
		return;
	}
#endif
	for (i = 0; i < ARRAY_SIZE(dti_bpf_prog_types); i++) {
		ret = register_btf_kfunc_id_set(dti_bpf_prog_types[i].type, &dti_bpf_kfunc_set);
		if (ret && (dti_bpf_prog_types[i].needed || ret != -EINVAL))
			pr_warn("kfuncs for %s programs: error %d\n",
				dti_bpf_prog_types[i].name, ret);
		else if (ret)
			pr_info("kfuncs: this kernel takes none from %s programs\n",
				dti_bpf_prog_types[i].name);
	}
}

#else /* no BPF, or no module kfuncs */

void __init dti_bpf_init(void)
{
}

#endif
