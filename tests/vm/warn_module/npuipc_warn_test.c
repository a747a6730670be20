// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module for the vm-run self-test: loading it emits one kernel
 * WARNING, which vm-run must turn into a failed run. Never installed.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init npuipc_warn_test_init(void)
{
	WARN(1, "npuipc_warn_test: deliberate warning for the vm-run self-test\n");
	return 0;
}

static void __exit npuipc_warn_test_exit(void)
{
}

module_init(npuipc_warn_test_init);
module_exit(npuipc_warn_test_exit);
MODULE_DESCRIPTION("vm-run self-test: emits a kernel warning on load");
MODULE_LICENSE("GPL");
