/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - the request dispatcher (request.c): connect requests from an
 * instance's listener; the requests on endpoints reach it through the
 * struct sacred_ep_ops it gives each one.
 */
#ifndef _SACRED_REQUEST_H
#define _SACRED_REQUEST_H

#include "core.h"

void sacred_connreq_init(struct sacred_mem *mem);
int sacred_connreq_queue(struct sacred_mem *mem, struct rdma_cm_id *cm_id,
			 struct rdma_cm_event *event);
int sacred_connreq_event(struct sacred_mem *mem, struct rdma_cm_id *cm_id,
			 struct rdma_cm_event *event);

#endif /* _SACRED_REQUEST_H */
