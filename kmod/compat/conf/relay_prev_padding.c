// SPDX-License-Identifier: GPL-2.0
/* relay's subbuf_start callback is given the previous sub-buffer's padding (until 6.16: "relayfs: abolish prev_padding") */
#include <linux/relay.h>

static int dti_conf_start(struct rchan_buf *buf, void *subbuf, void *prev, size_t prev_padding)
{
	return buf->prev_padding == prev_padding;
}

static __maybe_unused const struct rchan_callbacks dti_conf = {
	.subbuf_start = dti_conf_start,
};
