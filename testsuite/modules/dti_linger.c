// SPDX-License-Identifier: GPL-2.0
/*
 * dti_linger - holds up the unload notification of another module.
 *
 * Loaded with target=NAME and delay_ms=N, it sleeps N ms in its module
 * notifier when NAME is going away.  Notifiers of equal priority run in
 * the order they were registered: loaded after boot and before a
 * SystemTap script starts, its notifier runs after kprobes' (which marks
 * the kprobes in NAME gone) and before SystemTap's (which unregisters
 * the script's probes in NAME), and the sleep widens that moment for a
 * test to find what happens in it.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/string.h>

static char *target = "dti";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "name of the module whose unload is held up");

static unsigned int delay_ms = 1000;
module_param(delay_ms, uint, 0444);
MODULE_PARM_DESC(delay_ms, "how long its unload notification is held up, in ms");

static unsigned int lingered;
module_param(lingered, uint, 0444);
MODULE_PARM_DESC(lingered, "how many unloads of the target were held up");

static int linger_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	if (state != MODULE_STATE_GOING || strcmp(mod->name, target) != 0)
		return NOTIFY_DONE;
	msleep(delay_ms);
	WRITE_ONCE(lingered, lingered + 1);
	return NOTIFY_DONE;
}

static struct notifier_block linger_nb = {
	.notifier_call	= linger_notify,
	.priority	= 0,
};

static int __init linger_init(void)
{
	return register_module_notifier(&linger_nb);
}

static void __exit linger_exit(void)
{
	unregister_module_notifier(&linger_nb);
}

module_init(linger_init);
module_exit(linger_exit);
MODULE_DESCRIPTION("Holds up another module's unload notification, for SystemTap tests");
MODULE_LICENSE("GPL");
