// SPDX-License-Identifier: GPL-2.0
/* bin2hex() and the other hex helpers have a header of their own, <linux/hex.h>, which <linux/kernel.h> no longer includes (7.0) */
#include <linux/hex.h>
