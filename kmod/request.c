// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - the request dispatcher: what processes send an instance.
 *
 * This file owns the two kinds of request a process makes, and their
 * answers; it parses and checks every byte a process sends, and nothing
 * below it trusts one:
 *
 *   connect requests - the listener's handler (mem.c) checks the private
 *   data and queues the answer (peer lookup, proof, endpoint set-up,
 *   accept) for the instance's connect work on sacred_wq, which answers
 *   them in order, each under mem->lock and then the new id's handler
 *   lock; no rdma_cm handler ever waits for mem->lock, which a fence may
 *   hold for a second, on rdma_cm's workqueue that every RDMA user shares,
 *   and a stalled instance holds one kworker, however many processes
 *   knock;
 *
 *   requests on an endpoint (ATTACH, PERM) - ep.c offers each one, in
 *   its receive completion, to sacred_request_cq(), which answers
 *   there, under mem->cq_lock, what needs no sleeping step (a change
 *   that fences nobody, an attach of a registered grant, a request
 *   answered without its region); the
 *   rest goes, in order, to sacred_request_recv(), which under mem->lock
 *   checks it, dispatches it to perm.c (sacred_perm_change(),
 *   sacred_perm_attach()), sends the reply with sacred_ep_reply() and
 *   then lets perm.c finish the change (sacred_perm_change_end()).
 *
 * It is the top of the data path: it calls perm.c, peer.c, ep.c and
 * auth.c, and is called by mem.c (connect requests) and, through the
 * struct sacred_ep_ops it gives every endpoint, by ep.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include "auth.h"
#include "ep.h"
#include "peer.h"
#include "perm.h"
#include "policy.h"
#include "request.h"

/*
 * Most receiver-not-ready retries a connect request may ask our QP for;
 * 7 means without end (IBTA). A reply stuck that way is still bounded by
 * SACRED_WR_TIMEOUT_MS once a switch waits behind it (perm.c); this bound
 * makes it end by itself, and the CPU it costs a bounded amount.
 */
#define SACRED_RNR_RETRY_MAX	6

/*
 * Check a request and find its region; fill in @rep's status when there
 * is nothing more to do (a malformed request, no such region). Every field
 * of the request is checked here; nothing the process sent is trusted
 * further down.
 *
 * Context: mem->lock or mem->cq_lock held.
 * Return: the region, or NULL when @rep is the whole answer.
 */
static struct sacred_region *
sacred_request_parse(struct sacred_ep *ep, const struct sacred_wire_req *req,
		     u32 len, struct sacred_wire_reply *rep,
		     struct sacred_perm_change *chg)
{
	struct sacred_peer *peer = sacred_ep_peer(ep);
	struct sacred_region *region;
	u16 op;

	rep->status = cpu_to_le32(SACRED_ST_INVALID);
	if (len < sizeof(*req))
		return NULL;
	rep->region_id = req->region_id;
	/* Exactly a request: nothing after it is read, so nothing is sent. */
	if (len != sizeof(*req) ||
	    le16_to_cpu(req->hdr.version) != SACRED_WIRE_VERSION ||
	    req->reserved)
		return NULL;
	op = le16_to_cpu(req->hdr.op);
	if (op != SACRED_OP_ATTACH && op != SACRED_OP_PERM)
		return NULL;
	chg->access = le32_to_cpu(req->access);
	if (!sacred_access_valid(chg->access) ||
	    (op == SACRED_OP_ATTACH && (chg->access || req->ballot ||
					req->target)))
		return NULL;

	region = xa_load(&peer->mem->regions, le32_to_cpu(req->region_id));
	if (!region) {
		rep->status = cpu_to_le32(SACRED_ST_NO_REGION);
		return NULL;
	}
	if (op == SACRED_OP_PERM) {
		chg->requester = peer->process_id;
		chg->ballot = le64_to_cpu(req->ballot);
		chg->target = le32_to_cpu(req->target);
		chg->via = ep;
		/* Invalid: like every malformed request, nothing of the region. */
		if (!sacred_policy_args_valid(region->policy, chg))
			return NULL;
	}
	rep->size = cpu_to_le64(region->size);
	rep->tag = cpu_to_le64(region->tag);
	return region;
}

/* Accepted, refused or attach: tell what @grant's process holds now. */
static void sacred_request_granted(struct sacred_wire_reply *rep,
				   struct sacred_grant *grant, u32 reason)
{
	rep->access = cpu_to_le32(grant ? grant->access : 0);
	rep->rkey = cpu_to_le32(grant ? sacred_grant_rkey(grant) : 0);
	if (reason) {
		rep->status = cpu_to_le32(SACRED_ST_REFUSED);
		rep->reason = cpu_to_le32(reason);
	} else {
		rep->status = cpu_to_le32(SACRED_ST_OK);
	}
}

/* Run one request under mem->lock and fill in @rep. */
static void sacred_request_handle(struct sacred_ep *ep,
				  const struct sacred_wire_req *req, u32 len,
				  struct sacred_wire_reply *rep,
				  struct sacred_switch *sw)
{
	struct sacred_peer *peer = sacred_ep_peer(ep);
	struct sacred_perm_change chg = {};
	struct sacred_region *region;
	struct sacred_grant *grant;
	u32 reason = SACRED_REFUSE_NONE;
	int ret;

	peer->requests++;
	region = sacred_request_parse(ep, req, len, rep, &chg);
	if (!region)
		return;

	if (chg.via) {
		ret = sacred_perm_change(region, &chg, &reason, sw);
		if (ret) {
			rep->status = cpu_to_le32(SACRED_ST_FAILED);
			goto out;
		}
		if (reason)
			peer->refused++;
	}

	if (!xa_load(&region->acl, peer->process_id)) {
		rep->status = cpu_to_le32(SACRED_ST_NO_ACCESS);
		goto out;
	}
	ret = sacred_perm_attach(peer, region, ep, &grant);
	if (ret) {
		rep->status = cpu_to_le32(SACRED_ST_FAILED);
		goto out;
	}
	sacred_request_granted(rep, grant, reason);
out:
	rep->epoch = cpu_to_le32(region->epoch);
}

/* The reply's header, as for any request. */
static void sacred_request_reply_init(const struct sacred_wire_req *req,
				      u32 len, struct sacred_wire_reply *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->hdr.version = cpu_to_le16(SACRED_WIRE_VERSION);
	rep->hdr.op = cpu_to_le16(SACRED_OP_REPLY);
	if (len >= sizeof(req->hdr))
		rep->hdr.cookie = req->hdr.cookie;
}

/*
 * ep.c's ops->recv(): build the reply's header, run the request under
 * mem->lock and send the reply - unless the endpoint was fenced or died
 * meanwhile, and then nothing is sent. What a change leaves until after
 * its reply (perm.c) runs then, before mem->lock is dropped.
 */
static void sacred_request_recv(struct sacred_ep *ep, unsigned int slot,
				const struct sacred_wire_req *req, u32 len,
				struct sacred_wire_reply *rep)
{
	struct sacred_mem *mem = sacred_ep_peer(ep)->mem;
	struct sacred_switch sw = {};

	sacred_request_reply_init(req, len, rep);
	sacred_mem_lock(mem);
	/* What the CQ handler left in flight first (a failure fences here). */
	sacred_perm_sync(mem);
	if (!sacred_ep_usable(ep)) {
		sacred_mem_unlock(mem);
		return;
	}
	sacred_request_handle(ep, req, len, rep, &sw);
	/*
	 * Posted under mem->lock, so that a change that revokes this
	 * process is never overtaken by this reply, and a fence of
	 * this endpoint is never overtaken by a post.
	 */
	if (sacred_ep_usable(ep))
		sacred_ep_reply(ep, slot);
	sacred_perm_change_end(&sw);
	sacred_mem_unlock(mem);
}

/*
 * ep.c's ops->in_cq(): answer, in the receive completion, a request that
 * needs no sleeping step - a change that fences nobody
 * (sacred_perm_change_cq()), an attach whose process's MR
 * is registered for what it holds, or one that is answered without its
 * region (a malformed request, no such region). Everything else, and
 * everything while mem->lock is held, goes to sacred_request_recv().
 *
 * Context: softirq; takes mem->cq_lock.
 * Return: true if the reply was sent (or nothing is to be sent).
 */
static bool sacred_request_cq(struct sacred_ep *ep, unsigned int slot,
			      const struct sacred_wire_req *req, u32 len,
				struct sacred_wire_reply *rep)
{
	struct sacred_peer *peer = sacred_ep_peer(ep);
	struct sacred_perm_change chg = {};
	struct sacred_cq_switch csw = {};
	struct sacred_region *region;
	struct sacred_grant *grant = NULL;
	struct sacred_acl_entry *acl;

	if (!sacred_mem_cq_begin(peer->mem))
		return false;
	if (!sacred_ep_usable(ep))
		goto work;
	sacred_request_reply_init(req, len, rep);
	region = sacred_request_parse(ep, req, len, rep, &chg);
	if (region && chg.via) {
		if (!sacred_perm_change_cq(region, &chg, &csw))
			goto work;	/* it fences someone */
		if (csw.ev.err) {
			rep->status = cpu_to_le32(SACRED_ST_FAILED);
		} else {
			if (csw.ev.reason)
				peer->refused++;
			sacred_request_granted(rep, csw.grant, csw.ev.reason);
		}
		rep->epoch = cpu_to_le32(region->epoch);
	} else if (region) {
		acl = xa_load(&region->acl, peer->process_id);
		if (acl && acl->cur) {
			grant = xa_load(&peer->grants, region->id);
			if (!grant || grant->access != acl->cur)
				goto work;	/* a registration */
		}
		if (acl)
			sacred_request_granted(rep, grant, SACRED_REFUSE_NONE);
		else
			rep->status = cpu_to_le32(SACRED_ST_NO_ACCESS);
		rep->epoch = cpu_to_le32(region->epoch);
	}
	peer->requests++;
	sacred_ep_reply_cq(ep, slot);
	sacred_perm_change_cq_end(&csw);
	sacred_mem_cq_end(peer->mem);
	return true;

work:
	sacred_mem_cq_end(peer->mem);
	return false;
}

static const struct sacred_ep_ops sacred_request_ep_ops = {
	.in_cq	= sacred_request_cq,
	.recv	= sacred_request_recv,
};

static int sacred_connreq_reject(struct rdma_cm_id *cm_id, u16 reason)
{
	struct sacred_wire_conn_rej rej = {
		.version = cpu_to_le16(SACRED_WIRE_VERSION),
		.reason = cpu_to_le16(reason),
	};

	rdma_reject(cm_id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	/*
	 * The id goes: from the listener's handler, rdma_cm destroys it when
	 * the handler returns this; from the connect work, the work does.
	 */
	return -ECONNREFUSED;
}

/* A connect request on its way to an answer (sacred_connreq_work()). */
struct sacred_connreq {
	struct list_head link;		/* in mem->connreqs */
	struct rdma_cm_id *cm_id;
	struct sacred_wire_conn_req req;
	u32 responder_resources;
	bool gone;			/* the process gave up: answer nothing */
};

/*
 * Answer a checked connect request: find or create the peer, refuse a
 * second connection for a process that has a live one, build the
 * connection and accept it. Returns 0 when the connection was built
 * (accepted, or handed to its release work when the accept failed),
 * -ECONNREFUSED when the request was rejected: @cm_id is the caller's to
 * destroy then.
 *
 * Context: mem->lock (sacred_perm_sync() done under it) and @cm_id's
 * handler lock held.
 */
static int sacred_connreq_answer(struct sacred_mem *mem,
				 struct rdma_cm_id *cm_id,
				 const struct sacred_wire_conn_req *req,
				 u32 responder_resources)
{
	struct sacred_wire_conn_rep rep = {};
	struct rdma_conn_param accept = {};
	u32 pid = le32_to_cpu(req->process_id);
	struct sacred_peer *peer;
	struct sacred_ep *ep;

	lockdep_assert_held(&mem->lock);
	if (mem->state != SACRED_MEM_UP)
		return sacred_connreq_reject(cm_id, SACRED_REJ_DOWN);
	/* Proven before anything is allocated for the process. */
	if (sacred_mem_keyed(mem)) {
		peer = sacred_peer_get(mem, pid, false);
		if (!sacred_auth_check(mem, req, peer ? peer->last_counter : 0))
			return sacred_connreq_reject(cm_id, SACRED_REJ_AUTH);
	} else if (le16_to_cpu(req->flags) & SACRED_CONN_F_PROOF) {
		/* Nothing to check it with: the process expects a key. */
		return sacred_connreq_reject(cm_id, SACRED_REJ_UNKEYED);
	}
	peer = sacred_peer_get(mem, pid, true);
	if (IS_ERR(peer))
		return sacred_connreq_reject(cm_id, SACRED_REJ_RESOURCES);
	/*
	 * A proof counts as used once checked, even if the request is then
	 * refused as a duplicate: replayed after the probe below released
	 * the old connection, it would let its sender in as this process.
	 */
	if (sacred_mem_keyed(mem))
		peer->last_counter = le64_to_cpu(req->counter);
	if (peer->unrevoked)
		return sacred_connreq_reject(cm_id, SACRED_REJ_UNREVOKED);
	if (peer->ep) {
		/* Still there? If not, a later attempt gets through. */
		sacred_ep_probe(peer->ep);
		return sacred_connreq_reject(cm_id, SACRED_REJ_DUPLICATE);
	}
	ep = sacred_ep_create(peer, cm_id, &sacred_request_ep_ops);
	if (IS_ERR(ep))
		return sacred_connreq_reject(cm_id, SACRED_REJ_RESOURCES);
	peer->ep = ep;
	peer->connects++;

	rep.version = cpu_to_le16(SACRED_WIRE_VERSION);
	rep.mem_id = cpu_to_le32(mem->id);
	rep.credits = cpu_to_le16(SACRED_CREDITS);
	rep.msg_max = cpu_to_le16(SACRED_WIRE_MSG_MAX);
	accept.private_data = &rep;
	accept.private_data_len = sizeof(rep);
	/*
	 * The CM gives each side's QP the other side's numbers: the
	 * process's QP gets our responder resources as its READ/atomic
	 * depth, and our RNR retry count - 7, without end: a request
	 * beyond its credits waits for a receive buffer, never fails.
	 * We do no READ or atomic on the process.
	 */
	accept.responder_resources = responder_resources;
	accept.initiator_depth = 0;
	accept.rnr_retry_count = 7;
	/* Taken when rdma_accept() moves the QP to RTS; cannot fail on RC. */
	rdma_set_ack_timeout(cm_id, SACRED_ACK_TIMEOUT);
	/*
	 * If the accept fails (the process gave up and its REJ came first,
	 * or the device refused what the request asked), rdma_accept() has
	 * moved the QP to ERR: the receives posted on it flush, and their
	 * completions may have queued the release already. So the release
	 * work takes the connection down, as any broken one, and the id is
	 * its to destroy: 0 either way.
	 */
	if (rdma_accept(cm_id, &accept))
		sacred_ep_release(ep);
	return 0;
}

/*
 * Answer the first request of mem->connreqs, which only this work takes
 * off, and free it.
 */
static void sacred_connreq_one(struct sacred_mem *mem,
			       struct sacred_connreq *creq)
{
	struct rdma_cm_id *cm_id = creq->cm_id;
	bool gone;
	int ret;

	/*
	 * mem->lock first: the id's handler lock is held only for the
	 * answer itself, never while waiting behind a fence - an event on
	 * the id (the process giving up) would wait for it on rdma_cm's
	 * workqueue. Nothing takes mem->lock under a handler lock. So
	 * what the CQ path left in flight is settled here, before the
	 * handler lock (it may wait and fence): a grant whose work request
	 * failed is repaired before its process can have a QP again.
	 */
	sacred_mem_lock(mem);
	sacred_perm_sync(mem);
	rdma_lock_handler(cm_id);
	/*
	 * Off the list only now: until the handler lock was ours, an event
	 * saying the process gave up could still find it and mark it.
	 */
	spin_lock(&mem->connreq_lock);
	list_del(&creq->link);
	mem->nr_connreqs--;
	gone = creq->gone;
	spin_unlock(&mem->connreq_lock);
	ret = gone ? -ECONNABORTED :
	      sacred_connreq_answer(mem, cm_id, &creq->req,
				    creq->responder_resources);
	rdma_unlock_handler(cm_id);
	sacred_mem_unlock(mem);
	/* Rejected or gone: nobody else will destroy it (not under a lock). */
	if (ret)
		rdma_destroy_id(cm_id);
	kfree(creq);
}

static void sacred_connreq_work(struct work_struct *work)
{
	struct sacred_mem *mem =
		container_of(work, struct sacred_mem, connreq_work);
	struct sacred_connreq *creq;

	for (;;) {
		spin_lock(&mem->connreq_lock);
		creq = list_first_entry_or_null(&mem->connreqs,
						struct sacred_connreq, link);
		spin_unlock(&mem->connreq_lock);
		if (!creq)
			return;
		sacred_connreq_one(mem, creq);
	}
}

/**
 * sacred_connreq_event() - an rdma_cm event on a waiting request's id
 * @mem: the instance whose listener got the request
 * @cm_id: the id, which has no QP yet (or the listener's own id)
 * @event: the event
 *
 * The process gave up on a request still waiting for its answer (its
 * REJ, a timeout): the request is marked, and its answer builds nothing
 * - no peer, no proof used, no queue pair - and only destroys the id.
 *
 * Context: rdma_cm event handler; takes mem->connreq_lock only.
 * Return: 0: the id stays (the connect work destroys it).
 */
int sacred_connreq_event(struct sacred_mem *mem, struct rdma_cm_id *cm_id,
			 struct rdma_cm_event *event)
{
	struct sacred_connreq *creq;

	switch (event->event) {
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DISCONNECTED:
		break;
	default:
		return 0;
	}
	spin_lock(&mem->connreq_lock);
	list_for_each_entry(creq, &mem->connreqs, link) {
		if (creq->cm_id == cm_id) {
			creq->gone = true;
			break;
		}
	}
	spin_unlock(&mem->connreq_lock);
	return 0;
}

/**
 * sacred_connreq_init() - set up an instance's queue of connect requests
 * @mem: the instance, before its listener exists
 */
void sacred_connreq_init(struct sacred_mem *mem)
{
	spin_lock_init(&mem->connreq_lock);
	INIT_LIST_HEAD(&mem->connreqs);
	INIT_WORK(&mem->connreq_work, sacred_connreq_work);
}

/*
 * Only defined flags, zero reserved words, and a counter and MAC only
 * with a proof: a field a later version gives a meaning is never taken
 * for garbage sent today.
 */
static bool sacred_connreq_well_formed(const struct sacred_wire_conn_req *req)
{
	u16 flags = le16_to_cpu(req->flags);

	if ((flags & ~SACRED_CONN_F_PROOF) || req->reserved[0] ||
	    req->reserved[1])
		return false;
	return (flags & SACRED_CONN_F_PROOF) ||
	       (!req->counter && !memchr_inv(req->mac, 0, sizeof(req->mac)));
}

/**
 * sacred_connreq_queue() - take a process's connect request
 * @mem: the instance whose listener got it
 * @cm_id: the new rdma_cm id
 * @event: the CONNECT_REQUEST event, with the process's private data
 *
 * Checks the private data and queues the rest of the answer
 * (sacred_connreq_answer()) for the instance's connect work on sacred_wq.
 * The answer takes mem->lock, which a fence may hold for up to
 * SACRED_WR_TIMEOUT_MS: waiting for it here would hold up rdma_cm's
 * workqueue, and with it the connection events of every instance and of
 * every other user of the RDMA stack on the host. At most
 * SACRED_LISTEN_BACKLOG wait; more are refused (SACRED_REJ_RESOURCES): a
 * flood costs memory, never kworkers. The instance's teardown flushes
 * sacred_wq after its listener is gone, so the work never outlives @mem.
 *
 * Context: the listener's rdma_cm event handler; takes no lock.
 * Return: 0 when the request was queued (@cm_id is then ours: the work
 * accepts it or destroys it); non-zero to make rdma_cm destroy @cm_id.
 */
int sacred_connreq_queue(struct sacred_mem *mem, struct rdma_cm_id *cm_id,
			 struct rdma_cm_event *event)
{
	const struct rdma_conn_param *param = &event->param.conn;
	struct ib_device *ibdev = mem->sdev->ibdev;
	u16 rej = SACRED_REJ_MALFORMED;
	struct sacred_connreq *creq;

	creq = kzalloc(sizeof(*creq), GFP_KERNEL);
	if (!creq)
		return sacred_connreq_reject(cm_id, SACRED_REJ_RESOURCES);
	/*
	 * The version first: another version may have another length. On
	 * IB and RoCE the CM hands over the connect request's 56 bytes of
	 * private data behind rdma_cm's header, zero-padded, whatever the
	 * process gave; iWARP hands over what it gave, and it must be
	 * exactly the request.
	 */
	if (!param->private_data ||
	    param->private_data_len < sizeof(creq->req.version))
		goto reject;
	memcpy(&creq->req, param->private_data,
	       min_t(size_t, param->private_data_len, sizeof(creq->req)));
	if (le16_to_cpu(creq->req.version) != SACRED_WIRE_VERSION) {
		rej = SACRED_REJ_VERSION;
		goto reject;
	}
	if (param->private_data_len != sizeof(creq->req) ||
	    !sacred_connreq_well_formed(&creq->req))
		goto reject;
	/*
	 * The CM gives our QP the request's retry counts. At 7 it would
	 * retry a reply the process never posts a receive for without end,
	 * as often as the process's RNR timer says (down to 10 us): bounded
	 * retries or no connection.
	 */
	if (param->rnr_retry_count > SACRED_RNR_RETRY_MAX) {
		rej = SACRED_REJ_RNR_RETRY;
		goto reject;
	}

	/*
	 * The process reads and does atomics on us: we are the responder.
	 * The CM hands the request's numbers over from our side already:
	 * param->responder_resources is what the process's initiator depth
	 * asks of us.
	 */
	creq->responder_resources = min_t(u32, param->responder_resources,
					  ibdev->attrs.max_qp_rd_atom);
	creq->cm_id = cm_id;
	spin_lock(&mem->connreq_lock);
	if (mem->nr_connreqs >= SACRED_LISTEN_BACKLOG) {
		spin_unlock(&mem->connreq_lock);
		rej = SACRED_REJ_RESOURCES;
		goto reject;
	}
	list_add_tail(&creq->link, &mem->connreqs);
	mem->nr_connreqs++;
	spin_unlock(&mem->connreq_lock);
	queue_work(sacred_wq, &mem->connreq_work);
	return 0;

reject:
	kfree(creq);
	return sacred_connreq_reject(cm_id, rej);
}
