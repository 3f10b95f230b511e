/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - endpoints: the instance's end of a process's connection.
 *
 * The lowest layer that does verbs work (ep.c): posting, polling, the
 * fence, liveness probes and teardown of one RC QP and its CQ. The
 * layers above - perm.c (grants and the switch) and request.c (what
 * processes send) - use it through these calls; it reaches them only
 * through the struct sacred_ep_ops an endpoint is created with.
 */
#ifndef _SACRED_EP_H
#define _SACRED_EP_H

#include "core.h"

/* Requests a process may have outstanding: receive buffers per endpoint. */
#define SACRED_CREDITS		16

struct sacred_ep;

/**
 * struct sacred_ep_ops - what an endpoint's owner does with its requests
 * @in_cq: answer the request in a slot's receive buffer right in its
 *	receive completion (softirq), building the reply in its send
 *	buffer (@rep, uninitialised) and sending it with
 *	sacred_ep_reply_cq(); return false to leave it to @recv. Called
 *	only when no earlier request of the endpoint waits for @recv.
 * @recv: handle the request in a slot's receive buffer and build the
 *	reply in its send buffer (@rep, uninitialised), then send it with
 *	sacred_ep_reply() unless the endpoint is no longer usable. Called
 *	from sacred_wq, one request of an endpoint at a time, in arrival
 *	order; takes mem->lock itself.
 */
struct sacred_ep_ops {
	bool (*in_cq)(struct sacred_ep *ep, unsigned int slot,
		      const struct sacred_wire_req *req, u32 len,
		     struct sacred_wire_reply *rep);
	void (*recv)(struct sacred_ep *ep, unsigned int slot,
		     const struct sacred_wire_req *req, u32 len,
		     struct sacred_wire_reply *rep);
};

struct sacred_ep *sacred_ep_create(struct sacred_peer *peer,
				   struct rdma_cm_id *cm_id,
				   const struct sacred_ep_ops *ops);
int sacred_ep_cm_event(struct rdma_cm_id *cm_id, struct rdma_cm_event *event);
void sacred_ep_release(struct sacred_ep *ep);
void sacred_ep_release_all(struct sacred_mem *mem);
struct sacred_peer *sacred_ep_peer(struct sacred_ep *ep);
struct ib_qp *sacred_ep_qp(struct sacred_ep *ep);
bool sacred_ep_usable(struct sacred_ep *ep);
int sacred_ep_post_send(struct sacred_ep *ep, const struct ib_send_wr *wr);
void sacred_ep_reply(struct sacred_ep *ep, unsigned int slot);
void sacred_ep_reply_cq(struct sacred_ep *ep, unsigned int slot);
void sacred_ep_probe(struct sacred_ep *ep);
bool sacred_ep_probing(struct sacred_ep *ep);
int sacred_ep_fence(struct sacred_ep *ep);
void sacred_ep_fence_start(struct sacred_ep *ep);
int sacred_ep_fence_finish(struct sacred_ep *ep);
bool sacred_ep_raced(struct sacred_ep *ep);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
void sacred_ep_debugfs_init(void);
void sacred_ep_debugfs_exit(void);
#else
static inline void sacred_ep_debugfs_init(void) { }
static inline void sacred_ep_debugfs_exit(void) { }
#endif

#endif /* _SACRED_EP_H */
