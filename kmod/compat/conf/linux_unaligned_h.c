// SPDX-License-Identifier: GPL-2.0
/* the unaligned accessors' header is <linux/unaligned.h> (6.12); <asm/unaligned.h> before */
#include <linux/unaligned.h>
