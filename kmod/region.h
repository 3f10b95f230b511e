/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - regions of a memory instance (region.c).
 */
#ifndef _SACRED_REGION_H
#define _SACRED_REGION_H

#include "core.h"

int sacred_region_create(struct sacred_mem *mem, u32 id, u64 size, u8 policy,
			 struct sacred_region_prog *prog, u64 tag,
			 struct netlink_ext_ack *extack,
			 struct sacred_region **regionp);
void sacred_region_destroy(struct sacred_region *region);
struct sacred_region *sacred_region_find(struct sacred_mem *mem, u32 id);
struct sacred_region *sacred_region_next(struct sacred_mem *mem, u32 *id);
void sacred_region_destroy_all(struct sacred_mem *mem);
int sacred_region_fill(struct sk_buff *skb, struct sacred_region *region,
		       bool acl);
size_t sacred_region_acl_size(struct sacred_region *region);
extern unsigned int sacred_region_gen;

#endif /* _SACRED_REGION_H */
