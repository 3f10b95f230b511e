/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - the generic netlink family (netlink.c): the top of the module,
 * which calls every object below it.
 */
#ifndef _SACRED_NETLINK_H
#define _SACRED_NETLINK_H

#include "core.h"

int sacred_nl_init(void);
void sacred_nl_exit(void);

#endif /* _SACRED_NETLINK_H */
