/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - the permission switch (perm.c): grants, their MRs, the revoke
 * fence, applied under mem->lock.
 */
#ifndef _SACRED_PERM_H
#define _SACRED_PERM_H

#include "core.h"

int sacred_perm_change(struct sacred_region *region,
		       const struct sacred_perm_change *chg, u32 *reason);
int sacred_perm_attach(struct sacred_peer *peer, struct sacred_region *region,
		       struct sacred_ep *via, struct sacred_grant **grantp);
int sacred_perm_set_acl(struct sacred_region *region, struct xarray *acl,
			struct netlink_ext_ack *extack);
void sacred_perm_region_revoke_all(struct sacred_region *region);
void sacred_grant_free(struct sacred_grant *grant);
u32 sacred_grant_rkey(struct sacred_grant *grant);
int sacred_perm_fill(struct sk_buff *skb, struct sacred_region *region,
		     const struct sacred_perm_change *chg, u32 reason, int err);

#endif /* _SACRED_PERM_H */
