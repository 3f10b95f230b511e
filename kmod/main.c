// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - permission-managed RDMA memory.
 *
 * This file owns the module's life: init and exit order, the workqueue's
 * creation, the poller's start and stop (poll.c), and the check of the
 * live-object counters on exit (the lock, the workqueue and the counters
 * themselves are core.c's: every layer uses them, and this file is the
 * top one).
 *
 * Init order: netlink family first (so that devices found while the ib_client
 * registers can already be reported), the poller if poll_cpu asks for one
 * (before any connection exists), the debugfs knob of ep.c (kernels with
 * fault injection only), then the ib_client. Exit runs in
 * reverse: unregistering the ib_client calls remove for every device, which
 * destroys the memory instances on it; then the family goes away, and
 * last the poller stops, once every connection's teardown has drained
 * its queues.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/workqueue.h>
#include "dev.h"
#include "ep.h"
#include "mem.h"
#include "netlink.h"
#include "poll.h"

static int __init sacred_init(void)
{
	int ret;

	sacred_wq = alloc_workqueue("sacred", 0, 0);
	if (!sacred_wq)
		return -ENOMEM;

	ret = sacred_nl_init();
	if (ret)
		goto err_wq;

	ret = sacred_poll_init();
	if (ret)
		goto err_nl;

	sacred_ep_debugfs_init();
	ret = sacred_dev_init();
	if (ret)
		goto err_debugfs;

	return 0;

err_debugfs:
	sacred_ep_debugfs_exit();
	sacred_poll_exit();
err_nl:
	sacred_nl_exit();
err_wq:
	destroy_workqueue(sacred_wq);
	return ret;
}

static void __exit sacred_exit(void)
{
	sacred_dev_exit();
	sacred_ep_debugfs_exit();
	sacred_mem_exit();
	sacred_nl_exit();
	destroy_workqueue(sacred_wq);
	/* Last: the connections' teardown above waited for their drains. */
	sacred_poll_exit();

	WARN(atomic_read(&sacred_live.devs) || atomic_read(&sacred_live.mems) ||
	     atomic_read(&sacred_live.regions) ||
	     atomic_read(&sacred_live.peers) ||
	     atomic_read(&sacred_live.conns) || atomic_read(&sacred_live.mrs),
	     "sacred: leaked objects: devs %d mems %d regions %d peers %d conns %d mrs %d\n",
	     atomic_read(&sacred_live.devs), atomic_read(&sacred_live.mems),
	     atomic_read(&sacred_live.regions),
	     atomic_read(&sacred_live.peers),
	     atomic_read(&sacred_live.conns), atomic_read(&sacred_live.mrs));
}

module_init(sacred_init);
module_exit(sacred_exit);

MODULE_AUTHOR("sacred developers");
MODULE_DESCRIPTION("Permission-managed RDMA memory with in-kernel permission switch");
MODULE_LICENSE("GPL");
MODULE_ALIAS_GENL_FAMILY(SACRED_GENL_NAME);
