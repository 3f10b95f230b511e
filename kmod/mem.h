/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - memory instances (mem.c).
 */
#ifndef _SACRED_MEM_H
#define _SACRED_MEM_H

#include "core.h"

int sacred_mem_create(struct sacred_dev *sdev, u32 port, u32 id,
		      const struct sockaddr *addr, u16 cm_port, u64 mem_cap,
		      const void *key, unsigned int key_len,
		      struct netlink_ext_ack *extack, struct sacred_mem **memp);
void sacred_mem_destroy(struct sacred_mem *mem);
int sacred_mem_set_state(struct sacred_mem *mem, u8 state,
			 struct netlink_ext_ack *extack);
struct sacred_mem *sacred_mem_find(u32 id);
struct sacred_mem *sacred_mem_next(u32 *id);
void sacred_mem_destroy_dev(struct sacred_dev *sdev);
void sacred_mem_exit(void);
int sacred_mem_fill(struct sk_buff *skb, struct sacred_mem *mem);
extern unsigned int sacred_mem_gen;

#endif /* _SACRED_MEM_H */
