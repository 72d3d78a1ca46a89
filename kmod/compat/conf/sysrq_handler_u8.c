// SPDX-License-Identifier: GPL-2.0
/* a sysrq key's handler takes the key as a u8 (6.7); before, as an int */
#include <linux/sysrq.h>

static void dti_conf_handler(u8 key)
{
}

static __maybe_unused const struct sysrq_key_op dti_conf = { .handler = dti_conf_handler };
