/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - RDMA devices (dev.c): the ib_client and the device list.
 */
#ifndef _SACRED_DEV_H
#define _SACRED_DEV_H

#include "core.h"

int sacred_dev_init(void);
void sacred_dev_exit(void);
struct sacred_dev *sacred_dev_find_by_name(const char *name);
struct sacred_dev *sacred_dev_find_by_index(u32 index);
int sacred_dev_fill(struct sk_buff *skb, struct sacred_dev *sdev);
extern struct list_head sacred_devs;
extern unsigned int sacred_dev_gen;

#endif /* _SACRED_DEV_H */
