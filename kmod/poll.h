/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - polling mode (poll.c): connections' completion queues polled by
 * a kernel thread instead of in softirq.
 */
#ifndef _SACRED_POLL_H
#define _SACRED_POLL_H

#include <linux/list.h>
#include <rdma/ib_verbs.h>

/**
 * struct sacred_poll_cq - a completion queue on the poller's list
 * @cq: the CQ, allocated with IB_POLL_DIRECT
 * @link: entry in the poller's list (under its lock)
 */
struct sacred_poll_cq {
	struct ib_cq *cq;
	struct list_head link;
};

int sacred_poll_init(void);
void sacred_poll_exit(void);
enum ib_poll_context sacred_poll_ctx(struct ib_device *ibdev);
void sacred_poll_add(struct sacred_poll_cq *pcq, struct ib_cq *cq);
void sacred_poll_del(struct sacred_poll_cq *pcq);

#endif /* _SACRED_POLL_H */
