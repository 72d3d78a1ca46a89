/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dti.ko's kfuncs, for BPF programs (kmod/dti_bpf.c documents each).
 *
 * A program gets a channel by name, checks it for NULL, logs into it or
 * arms its halt trigger, and puts it before it returns: the verifier
 * refuses it otherwise.  Tracing programs (fentry, fexit, tp_btf) may
 * call them on every kernel with module kfuncs (6.1 and later), kprobe
 * programs where the kernel takes module kfuncs for them.  dti.ko needs
 * its BTF (kmod/mkbtf.sh).
 */
#ifndef DTI_KFUNCS_BPF_H
#define DTI_KFUNCS_BPF_H

/* Opaque: a program only passes it back to dti.ko */
struct dti_channel {
	int opaque;
};

extern struct dti_channel *dti_bpf_get(const char *name, __u32 name__sz) __ksym;
extern void dti_bpf_put(struct dti_channel *ch) __ksym;
extern int dti_bpf_log(struct dti_channel *ch, int level, const void *data,
		       __u32 data__sz) __ksym;
extern int dti_bpf_log_text(struct dti_channel *ch, int level, const char *text,
			    __u32 text__sz) __ksym;
extern int dti_bpf_log_event(struct dti_channel *ch, int level, const void *data,
			     __u32 data__sz) __ksym;
extern int dti_bpf_halt_after(struct dti_channel *ch, __u64 count) __ksym;
extern int dti_bpf_halt_after_ns(struct dti_channel *ch, __u64 ns) __ksym;
extern __s64 dti_bpf_trigger_left(struct dti_channel *ch) __ksym;
extern int dti_bpf_set_ordered(struct dti_channel *ch, int on) __ksym;

/* The levels, as <linux/dti_record.h> numbers them */
#define DTI_BPF_ERR	3
#define DTI_BPF_INFO	6
#define DTI_BPF_DEBUG	7

/* Longest channel name and its NUL */
#define DTI_BPF_NAME_SIZE	32

/*
 * A channel name set by the loader (a const volatile .rodata array) onto
 * the stack, where dti_bpf_get() can take it (a kfunc takes writable
 * memory only).  Byte by byte through the volatile: memcpy() from it
 * cast to plain memory lets the compiler copy the initializer instead.
 */
static __always_inline void dti_bpf_name(char *dst, const volatile char *src)
{
	int i;

	for (i = 0; i < DTI_BPF_NAME_SIZE; i++)
		dst[i] = src[i];
}

#endif
