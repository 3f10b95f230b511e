// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - events, from the objects up to whoever announces them.
 *
 * This file owns the table of event callbacks (notify.h): the objects
 * below netlink.c raise events through it, netlink.c registers the
 * callbacks that send them at its init and takes them away at its exit.
 * It calls nothing of the module but through that table, so any layer
 * may raise an event without depending on the one that announces it.
 *
 * No lock: the table is set before the first device is attached (no
 * object exists to raise an event) and cleared after the last instance is
 * gone, both in the module's init and exit, which run alone.
 */
#include <linux/compiler.h>
#include "notify.h"
#include "trace.h"

static const struct sacred_notify_ops *sacred_notify_ops;

/**
 * sacred_notify_register() - set, or clear, the event callbacks
 * @ops: the callbacks, or NULL to raise events into nothing
 *
 * Context: module init or exit, while no object raises events.
 */
void sacred_notify_register(const struct sacred_notify_ops *ops)
{
	WRITE_ONCE(sacred_notify_ops, ops);
}

/**
 * sacred_notify_mem() - raise an event about a memory instance
 * @mem: the instance
 * @cmd: %SACRED_CMD_MEM_NEW, %SACRED_CMD_MEM_SET or %SACRED_CMD_MEM_DEL
 *
 * Context: sacred_lock held.
 */
void sacred_notify_mem(struct sacred_mem *mem, u8 cmd)
{
	const struct sacred_notify_ops *ops = READ_ONCE(sacred_notify_ops);

	if (ops)
		ops->mem(mem, cmd);
}

/**
 * sacred_notify_region() - raise an event about a region
 * @region: the region
 * @cmd: %SACRED_CMD_REGION_NEW, %SACRED_CMD_REGION_SET or
 *	%SACRED_CMD_REGION_DEL
 *
 * Context: sacred_lock held.
 */
void sacred_notify_region(struct sacred_region *region, u8 cmd)
{
	const struct sacred_notify_ops *ops = READ_ONCE(sacred_notify_ops);

	if (ops)
		ops->region(region, cmd);
}

/**
 * sacred_notify_perm() - raise the event of a decided changePermission
 * @region: the region
 * @ev: the change, its decision and its outcome
 * @gfp: GFP_KERNEL under mem->lock, GFP_ATOMIC from the CQ path
 *
 * Context: mem->lock held, or softirq (perm.c's CQ path: under
 * mem->cq_lock, or in a registration's completion).
 */
void sacred_notify_perm(struct sacred_region *region,
			const struct sacred_perm_event *ev, gfp_t gfp)
{
	const struct sacred_notify_ops *ops = READ_ONCE(sacred_notify_ops);

	trace_sacred_change_end(region, ev);
	if (ops)
		ops->perm(region, ev, gfp);
}
