// SPDX-License-Identifier: GPL-2.0
/* kfuncs a module registers: a struct btf_kfunc_id_set of an owner and a BTF id set with flags (6.1; 5.18 to 6.0 had one set per kind) */
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/module.h>

BTF_SET8_START(dti_conf_ids)
BTF_SET8_END(dti_conf_ids)

static const struct btf_kfunc_id_set dti_conf_set = {
	.owner = THIS_MODULE,
	.set = &dti_conf_ids,
};

static __maybe_unused int dti_conf(void)
{
	return register_btf_kfunc_id_set(BPF_PROG_TYPE_TRACING, &dti_conf_set) +
	       KF_ACQUIRE + KF_RELEASE + KF_RET_NULL;
}
