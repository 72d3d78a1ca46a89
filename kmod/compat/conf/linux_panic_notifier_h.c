// SPDX-License-Identifier: GPL-2.0
/* panic_notifier_list is declared in <linux/panic_notifier.h> (5.14); in <linux/kernel.h> before */
#include <linux/panic_notifier.h>
