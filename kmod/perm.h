/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - the permission switch (perm.c): grants, their MRs, the revoke
 * fence, applied under mem->lock - or, for a change that fences nobody,
 * in its receive completion.
 */
#ifndef _SACRED_PERM_H
#define _SACRED_PERM_H

#include "core.h"

/**
 * struct sacred_wait - a signaled work request on a process's QP
 * @cqe: its completion entry
 * @done: completed by its completion, successful or flushed
 * @status: the completion's status
 * @ep: the endpoint it was posted on, fenced if it takes too long
 */
struct sacred_wait {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
	struct sacred_ep *ep;
};

/**
 * struct sacred_op - one loser's revocation in flight
 * @w: completion of the LOCAL_INV on the loser's QP
 * @grant: the loser's grant
 * @fence: the loser's connection, to fence; NULL if none (or the
 *	requester's own)
 * @invalidated: the LOCAL_INV was posted and completed successfully
 * @replaced: the device refused the fence, and the loser's MR was replaced
 *	before the reply
 */
struct sacred_op {
	struct sacred_wait w;
	struct sacred_grant *grant;
	struct sacred_ep *fence;
	bool invalidated;
	bool replaced;
};

/**
 * struct sacred_switch - a decided change between its reply and its end
 * @region: the region, or NULL when there is nothing to end (an attach)
 * @chg: the request, for its event
 * @reason: the policy's refusal reason, 0 if it accepted
 * @err: 0, or why the change could not be applied in full
 * @nr_ops: losers in @region->ops
 * @reg: the requester's grant being registered, or NULL
 * @reg_access: what @reg is being registered for
 * @reg_old_cur: what the requester held before (its ACL entry's @cur)
 * @reg_err: 0 if @reg's registration was posted, else why not
 * @reg_w: completion of @reg's registration
 *
 * sacred_perm_change() leaves in it what may wait until the reply is
 * posted; sacred_perm_change_end() does it (perm.c).
 */
struct sacred_switch {
	struct sacred_region *region;
	struct sacred_perm_change chg;
	u32 reason;
	int err;
	unsigned int nr_ops;
	struct sacred_grant *reg;
	u32 reg_access;
	u32 reg_old_cur;
	int reg_err;
	struct sacred_wait reg_w;
};

/**
 * struct sacred_cq_switch - a change the CQ path decided, until its
 *	reply is posted
 * @region: the region whose event to raise after the reply, or NULL when
 *	the registration's completion raises it
 * @grant: the requester's grant: what the reply tells
 * @ev: the change's event
 */
struct sacred_cq_switch {
	struct sacred_region *region;
	struct sacred_grant *grant;
	struct sacred_perm_event ev;
};

void sacred_perm_sync(struct sacred_mem *mem);
bool sacred_perm_change_cq(struct sacred_region *region,
			   const struct sacred_perm_change *chg,
			     struct sacred_cq_switch *csw);
void sacred_perm_change_cq_end(struct sacred_cq_switch *csw);
int sacred_perm_change(struct sacred_region *region,
		       const struct sacred_perm_change *chg, u32 *reason,
		       struct sacred_switch *sw);
void sacred_perm_change_end(struct sacred_switch *sw);
int sacred_perm_attach(struct sacred_peer *peer, struct sacred_region *region,
		       struct sacred_ep *via, struct sacred_grant **grantp);
int sacred_perm_set_acl(struct sacred_region *region, struct xarray *acl,
			struct netlink_ext_ack *extack);
void sacred_perm_region_revoke_all(struct sacred_region *region);
void sacred_grant_free(struct sacred_grant *grant);
u32 sacred_grant_rkey(struct sacred_grant *grant);
int sacred_perm_fill(struct sk_buff *skb, struct sacred_region *region,
		     const struct sacred_perm_event *ev);

#endif /* _SACRED_PERM_H */
