/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels DTI builds on,
 * and the one place where their alternatives live.  dti.ko, the example
 * drivers, the test modules and the benchmark module include it; nothing
 * else in the tree tests a kernel's version.
 *
 * Each difference is decided by what the kernel being built against has,
 * never by its version number, so a distribution kernel that backported
 * an interface builds with no edit:
 *
 *  - macros: #ifdef below;
 *  - headers and everything else: the feature tests in conf/, one small
 *    C file each (not __has_include(), which sparse does not know),
 *    compiled with the kernel's compiler and flags when a module is built
 *    (conf.mk, conftest.sh); dti_conf.h, generated in the build
 *    directory, defines DTI_HAVE_<TEST> for each that compiled.
 *
 * The feature tests and what they detect (the kernel named is where
 * mainline changed; a backport makes no difference):
 *
 *  conf/module_mem.c		struct module's mem[MOD_TEXT], mem[MOD_RODATA]
 *				(6.4); before, one core_layout block with the
 *				read-only data after the text
 *  conf/relay_prev_padding.c	relay passes subbuf_start the previous
 *				sub-buffer's padding (until 6.16)
 *  conf/hrtimer_setup.c		hrtimer_setup() (6.13); hrtimer_init() and a
 *				separate .function before
 *  conf/timer_delete_sync.c	timer_delete_sync() (6.2); del_timer_sync()
 *				before
 *  conf/timer_container_of.c	timer_container_of() (6.16); from_timer()
 *				before
 *  conf/trace_array_get_by_name_systems.c
 *				trace_array_get_by_name() takes the events'
 *				systems (6.7)
 *  conf/relay_const_callbacks.c	relay_open() takes const callbacks (5.11);
 *				before, it filled in the ones missing
 *  conf/kthread_run_on_cpu.c	kthread_run_on_cpu() (5.16)
 *  conf/linux_unaligned_h.c	the unaligned accessors' header is
 *				<linux/unaligned.h> (6.12); <asm/unaligned.h>
 *				before
 *  conf/linux_panic_notifier_h.c	panic_notifier_list has a header of its own
 *				(5.14); <linux/kernel.h> before
 *  conf/linux_hex_h.c		bin2hex() has <linux/hex.h>, which
 *				<linux/kernel.h> no longer includes (7.0)
 *  conf/reserve_mem_find_by_name.c
 *				a reserve_mem= region found by its name (6.11)
 *  conf/per_cpu_load.c		__per_cpu_load, where the static per-CPU
 *				section's template was loaded apart from where
 *				it is linked (gone from 6.15: x86-64 loads it
 *				where it is linked, as other architectures do)
 *  conf/kzalloc_obj.c		kzalloc_obj(*p, gfp) (7.0); kzalloc(sizeof(*p),
 *				gfp) before
 *  conf/sysrq_handler_u8.c	a sysrq key's handler takes a u8 (6.7); an
 *				int before
 *  conf/btf_kfunc_id_set.c	a module registers kfuncs with a struct
 *				btf_kfunc_id_set of an owner and a BTF id set
 *				with flags (6.1); none before
 *  conf/sched_switch_prev_state.c
 *				the sched_switch tracepoint passes the
 *				previous task's state (5.18); the probe reads
 *				it from the task before
 *
 * and the macros tested by #ifdef:
 *
 *  __cond_lock			sparse's conditional-lock annotation, gone with
 *				context analysis (7.0)
 *  __noipa			<linux/compiler_attributes.h> (5.13)
 *  IRQ_WORK_INIT		an irq_work initializer (5.11)
 *  in_hardirq			(5.11; in_irq() before)
 *  __bpf_kfunc			a kfunc's attributes (6.2; __used noinline
 *				before)
 *  BTF_KFUNCS_START		a kfunc set's start (6.9; BTF_SET8_START()
 *				before)
 *  KF_TRUSTED_ARGS		kfuncs whose pointers must be trusted; once
 *				that is every kfunc's default the flag is 0
 *  IS_ERR_PCPU, PTR_ERR_PCPU	an error in a __percpu pointer, which a cast
 *				to void * no longer reaches once per-CPU
 *				pointers have an address space of their own
 *				(6.12; the kernel's definition before)
 */
#ifndef _DTI_COMPAT_H
#define _DTI_COMPAT_H

#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/timer.h>

#include "dti_conf.h"

#ifdef DTI_HAVE_BTF_KFUNC_ID_SET
#include <linux/btf.h>
#include <linux/btf_ids.h>

#ifndef __bpf_kfunc
#define __bpf_kfunc __used noinline
#endif
#ifdef BTF_KFUNCS_START
#define DTI_BTF_KFUNCS_START(name)	BTF_KFUNCS_START(name)
#define DTI_BTF_KFUNCS_END(name)	BTF_KFUNCS_END(name)
#else
#define DTI_BTF_KFUNCS_START(name)	BTF_SET8_START(name)
#define DTI_BTF_KFUNCS_END(name)	BTF_SET8_END(name)
#endif
#ifdef KF_TRUSTED_ARGS
#define DTI_KF_TRUSTED_ARGS		KF_TRUSTED_ARGS
#else
#define DTI_KF_TRUSTED_ARGS		0
#endif
#endif /* DTI_HAVE_BTF_KFUNC_ID_SET */

#ifdef DTI_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#ifdef DTI_HAVE_LINUX_PANIC_NOTIFIER_H
#include <linux/panic_notifier.h>
#endif

#ifdef DTI_HAVE_LINUX_HEX_H
#include <linux/hex.h>
#endif

/**
 * struct dti_mod_block - where part of a loaded module lies
 * @base:	its first byte
 * @size:	its size in bytes
 */
struct dti_mod_block {
	const u8 *base;
	unsigned int size;
};

#ifdef DTI_HAVE_MODULE_MEM
static inline struct dti_mod_block dti_module_text(const struct module *mod)
{
	return (struct dti_mod_block){ mod->mem[MOD_TEXT].base, mod->mem[MOD_TEXT].size };
}

static inline struct dti_mod_block dti_module_rodata(const struct module *mod)
{
	return (struct dti_mod_block){ mod->mem[MOD_RODATA].base, mod->mem[MOD_RODATA].size };
}
#else
static inline struct dti_mod_block dti_module_text(const struct module *mod)
{
	return (struct dti_mod_block){ mod->core_layout.base, mod->core_layout.text_size };
}

/* The read-only data follows the text in the same block. */
static inline struct dti_mod_block dti_module_rodata(const struct module *mod)
{
	const struct module_layout *l = &mod->core_layout;

	return (struct dti_mod_block){ (const u8 *)l->base + l->text_size,
				       l->ro_size - l->text_size };
}
#endif

/*
 * DTI_SCHED_SWITCH_PROTO: the parameters of a sched_switch probe, with
 * @data, @preempt, @prev and @next; DTI_SCHED_SWITCH_STATE(prev): the
 * index of the state @prev left the CPU in (task_index_to_char() prints
 * it), from what the tracepoint passes where it passes it.
 */
#ifdef DTI_HAVE_SCHED_SWITCH_PREV_STATE
#define DTI_SCHED_SWITCH_PROTO						\
	void *data, bool preempt, struct task_struct *prev,		\
	struct task_struct *next, unsigned int prev_state
#define DTI_SCHED_SWITCH_STATE(prev) __task_state_index(prev_state, (prev)->exit_state)
#else
#define DTI_SCHED_SWITCH_PROTO						\
	void *data, bool preempt, struct task_struct *prev,		\
	struct task_struct *next
#define DTI_SCHED_SWITCH_STATE(prev) task_state_index(prev)
#endif

/*
 * DTI_RELAY_SUBBUF_START(name, fn) defines @name, a relay subbuf_start
 * callback with the kernel's prototype, as a call of
 * int fn(struct rchan_buf *buf, void *subbuf, void *prev_subbuf).  The
 * padding older kernels pass is also in buf->padding[] (dti_prev_padding()).
 */
#ifdef DTI_HAVE_RELAY_PREV_PADDING
#define DTI_RELAY_SUBBUF_START(name, fn)					\
static int name(struct rchan_buf *buf, void *subbuf, void *prev_subbuf,	\
		size_t prev_padding)						\
{									\
	return fn(buf, subbuf, prev_subbuf);				\
}
#else
#define DTI_RELAY_SUBBUF_START(name, fn)					\
static int name(struct rchan_buf *buf, void *subbuf, void *prev_subbuf)	\
{									\
	return fn(buf, subbuf, prev_subbuf);				\
}
#endif

/* The key a sysrq key's handler is given */
#ifdef DTI_HAVE_SYSRQ_HANDLER_U8
#define DTI_SYSRQ_KEY_T		u8
#else
#define DTI_SYSRQ_KEY_T		int
#endif

/* What relay_open() is given: relay fills in the callbacks missing before 5.11 */
#ifdef DTI_HAVE_RELAY_CONST_CALLBACKS
#define DTI_RELAY_CALLBACKS_CONST	const
#else
#define DTI_RELAY_CALLBACKS_CONST
#endif

/*
 * The padding of the sub-buffer before the current one, when relay
 * switches sub-buffers: relay has counted it in subbufs_produced and set
 * its padding before calling subbuf_start.
 */
static inline size_t dti_prev_padding(const struct rchan_buf *buf)
{
	size_t n = buf->chan->n_subbufs;

	return buf->padding[(buf->subbufs_produced + n - 1) % n];
}

#ifndef DTI_HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

#ifndef DTI_HAVE_TIMER_DELETE_SYNC
static inline int timer_delete_sync(struct timer_list *timer)
{
	return del_timer_sync(timer);
}
#endif

#ifndef DTI_HAVE_KZALLOC_OBJ
#define kzalloc_obj(obj, gfp)	kzalloc(sizeof(obj), gfp)
#endif

#ifndef DTI_HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, timer, field)	from_timer(var, timer, field)
#endif

#ifdef DTI_HAVE_TRACE_ARRAY_GET_BY_NAME_SYSTEMS
#define dti_trace_array_get_by_name(name)	trace_array_get_by_name(name, NULL)
#else
#define dti_trace_array_get_by_name(name)	trace_array_get_by_name(name)
#endif

#ifndef DTI_HAVE_KTHREAD_RUN_ON_CPU
/*
 * kthread_create_on_cpu() was not exported before either: a thread bound
 * to @cpu, named after it, as the kernel's would be (unlike that one,
 * not parked while @cpu is offline: the scheduler moves it elsewhere).
 */
static inline struct task_struct *kthread_run_on_cpu(int (*threadfn)(void *data), void *data,
						     unsigned int cpu, const char *namefmt)
{
	struct task_struct *p = kthread_create_on_node(threadfn, data, cpu_to_node(cpu),
						       namefmt, cpu);

	if (!IS_ERR(p)) {
		kthread_bind(p, cpu);
		wake_up_process(p);
	}
	return p;
}
#endif

/*
 * dti_percpu_template(addr): where the initial copy of the static per-CPU
 * variable at @addr (its address in the section, as linked) lies.
 */
#ifdef DTI_HAVE_PER_CPU_LOAD
#define dti_percpu_template(addr)	(__per_cpu_load + ((addr) - __per_cpu_start))
#else
#define dti_percpu_template(addr)	(addr)
#endif

#ifndef __noipa
#if __has_attribute(__noipa__)
#define __noipa		__attribute__((__noipa__))
#else
#define __noipa
#endif
#endif

#ifndef IRQ_WORK_INIT
#define IRQ_WORK_INIT(_func)	((struct irq_work){ .flags = ATOMIC_INIT(0), .func = (_func) })
#endif

#ifndef IS_ERR_PCPU
#define IS_ERR_PCPU(ptr)	(IS_ERR((const void *)(__force const unsigned long)(ptr)))
#define PTR_ERR_PCPU(ptr)	(PTR_ERR((const void *)(__force const unsigned long)(ptr)))
#endif

#ifndef in_hardirq
#define in_hardirq()		in_irq()
#endif

#ifdef __cond_lock
#define dti_cond_lock(lock, c)	__cond_lock(lock, c)
#else
#define dti_cond_lock(lock, c)	(c)
#endif

#endif /* _DTI_COMPAT_H */
