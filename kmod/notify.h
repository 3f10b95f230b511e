/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - events, from the objects up to whoever announces them.
 *
 * The objects (mem.c, region.c, perm.c) sit below netlink.c, which calls
 * them; an event they raise must not call back up. They call
 * sacred_notify_*() here, which go through the one table of callbacks
 * registered from above - netlink.c's, for the events multicast group -
 * and do nothing while none is.
 */
#ifndef _SACRED_NOTIFY_H
#define _SACRED_NOTIFY_H

#include <linux/gfp.h>
#include <linux/types.h>

struct sacred_mem;
struct sacred_region;
struct sacred_perm_event;

/**
 * struct sacred_notify_ops - who announces events
 * @mem: a memory instance was made, changed or deleted (a
 *	%SACRED_CMD_MEM_* command); sacred_lock held
 * @region: the same for a region (%SACRED_CMD_REGION_*); sacred_lock held
 * @perm: a changePermission was decided (and, unless @ev->err says
 *	otherwise, applied); under mem->lock, or from the CQ path
 *	(softirq: @gfp is GFP_ATOMIC then)
 */
struct sacred_notify_ops {
	void (*mem)(struct sacred_mem *mem, u8 cmd);
	void (*region)(struct sacred_region *region, u8 cmd);
	void (*perm)(struct sacred_region *region,
		     const struct sacred_perm_event *ev, gfp_t gfp);
};

void sacred_notify_register(const struct sacred_notify_ops *ops);
void sacred_notify_mem(struct sacred_mem *mem, u8 cmd);
void sacred_notify_region(struct sacred_region *region, u8 cmd);
void sacred_notify_perm(struct sacred_region *region,
			const struct sacred_perm_event *ev, gfp_t gfp);

#endif /* _SACRED_NOTIFY_H */
