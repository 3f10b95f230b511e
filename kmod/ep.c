// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - endpoints: the instance's end of a process's connection.
 *
 * This file owns struct sacred_ep, an endpoint: one RC QP on the peer's
 * PD, one CQ polled in softirq (or by poll.c's thread), SACRED_CREDITS
 * receive buffers and as many send buffers, all in one DMA-mapped
 * allocation - and every verbs primitive on them: posting
 * (sacred_ep_post_send(), sacred_ep_reply()), the completions, the fence
 * (sacred_ep_fence_start/finish()), the liveness probe and the teardown.
 * It is the floor of the data path: perm.c posts its MR work here and
 * fences here, request.c answers requests here; neither is called from
 * here but through the struct sacred_ep_ops an endpoint is created with
 * (ep.h). Of the layers above it knows only the types (core.h): the
 * endpoint detaches itself from its peer, and is counted in its instance.
 *
 * Request life, on the endpoint's side:
 *
 *   recv_done()   (CQ context) if no earlier request waits, offer it to
 *                 ops->in_cq() (request.c), which answers there what needs
 *                 no sleeping step - the reply posted from the completion
 *                 handler; else, or
 *                 if it declines, queue the buffer on ep->pending and kick
 *                 ep->work on sacred_wq;
 *   ep_work()     hand each pending request, in order, to ops->recv()
 *                 (request.c), which takes mem->lock, runs it, builds the
 *                 reply in the send buffer of the same slot and posts it
 *                 with sacred_ep_reply();
 *   send_done()   check the send; without inline sends, repost the
 *                 slot's receive buffer.
 *
 * Replies are sent inline where the device can (rxe can), and then a
 * slot's receive buffer is reposted just before its reply is posted: the
 * process gets its credit back with the reply. Without inline sends the
 * buffer is reposted when the send completes, so a send buffer is never
 * rewritten while the device may still read it. Either way a process that
 * sends more than its credits gets receiver-not-ready NAKs, never a queue
 * that grows.
 *
 * End of an endpoint: a disconnect, a connection error or any failed
 * completion queues ep->release_work once (SACRED_EP_RELEASE_QUEUED).
 * A fence (perm.c revoking a connected process's access) detaches the
 * endpoint itself and queues the release SACRED_FENCED_RELEASE_MS later,
 * after the reply it was for (the flush completions of a fenced QP queue
 * nothing). The release drains the QP (unless a fence already did), then
 * detaches the endpoint
 * from its peer under mem->lock - so a peer without an endpoint never has
 * a QP still placing data - and destroys QP, CQ and cm_id outside any
 * lock: rdma_destroy_id() waits for running event handlers. Before the QP
 * goes, the id's context is cleared under its handler lock: events that
 * still come (the process's answer to our disconnect) are dropped, never
 * read as an instance's (mem.c). The rule that
 * keeps this free of deadlocks: nothing calls rdma_destroy_id() or flushes
 * sacred_wq while holding mem->lock, and no work item takes sacred_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <rdma/rdma_cm.h>
#include "ep.h"
#include "poll.h"
#include "trace.h"

/*
 * Replies on a send queue at once. A process holds SACRED_CREDITS
 * requests outstanding; one that posts no receive buffer, and sends on
 * regardless (with inline replies its credit comes back before the reply
 * leaves), would pile replies up receiver-not-ready until the send queue
 * - which rxe makes larger than asked - is full, and then overflow the
 * CQ when the QP is flushed: a lost completion is a fence or a drain
 * that waits for ever. Past this bound the connection is released. Twice
 * the credits: a reply the process has taken is counted until its ACK
 * came back, and a correct process may have sent its next request by
 * then.
 */
#define SACRED_REPLIES_MAX	(2 * SACRED_CREDITS)
/*
 * A QP's send queue: SACRED_REPLIES_MAX replies, a change's MR work
 * requests (an invalidation and a registration), a liveness probe and
 * the release's drain marker, with room to spare; its receive queue: the
 * credits and the fence's drain marker.
 */
#define SACRED_SQ_DEPTH		(SACRED_REPLIES_MAX + 5)
#define SACRED_RQ_DEPTH		(SACRED_CREDITS + 1)
/*
 * How long the release of a fenced connection waits: long enough for the
 * reply that follows the fence to leave first (measured on rxe: a release
 * running at once, disconnect and QP/CQ/id destruction, delayed that reply
 * by about 0.5 ms, a third of the whole change), short next to the
 * process's own retry timeout. The process learns of the fence at its next
 * access anyway; its own disconnect releases the connection at once.
 */
#define SACRED_FENCED_RELEASE_MS	10

enum {
	SACRED_EP_RELEASE_QUEUED,
	SACRED_EP_FENCED,
	SACRED_EP_FENCE_FAILED,
	SACRED_EP_DEAD,
	SACRED_EP_PROBING,
};

/*
 * The PSNs of a connection's QP (24 bits, wrapping). The module never
 * sees the PSN of a packet, only the QP's next expected one (rq_psn), so
 * it keeps a floor below every packet sent after the process's latest
 * request: a revoke raced with the process's packets if rq_psn moved past
 * the floor by the end of the fence (sacred_ep_raced(), and
 * Documentation/permission-switch.rst for the argument). A request is
 * one packet: SACRED_WIRE_MSG_MAX is below the smallest MTU, and a
 * longer SEND fails on the receive buffer.
 */
#define SACRED_PSN_MASK		0xffffff

/*
 * The later of two PSNs that lie less than 2^23 apart; of two further
 * apart, the earlier one (a lower floor only counts more).
 */
static u32 sacred_psn_max(u32 a, u32 b)
{
	return ((b - a) & SACRED_PSN_MASK) < 0x800000 ? b : a;
}

/**
 * struct sacred_slot - one credit: a receive buffer and a send buffer
 * @rx_cqe: completion of the receive
 * @tx_cqe: completion of the reply
 * @ep: the endpoint
 * @list: entry in ep->pending
 * @len: bytes received
 * @index: the slot's number
 * @post_psn: an rq_psn of the QP from before the receive was posted: the
 *	request that lands in it has this PSN or a later one
 */
struct sacred_slot {
	struct ib_cqe rx_cqe;
	struct ib_cqe tx_cqe;
	struct sacred_ep *ep;
	struct list_head list;
	u32 len;
	unsigned int index;
	u32 post_psn;
};

/**
 * struct sacred_ep - an endpoint: our end of one connection of a peer
 * @peer: the peer
 * @ops: what its owner does with its requests
 * @cm_id: its rdma_cm id; the QP hangs off it
 * @cq: send and receive CQ, polled in softirq (IB_POLL_SOFTIRQ), or by the
 *	poller thread (IB_POLL_DIRECT, poll.c)
 * @poll: @cq's entry in the poller's list, when the poller polls it
 * @flags: SACRED_CONN_* bits
 * @lock: protects @pending and @working
 * @pending: slots holding requests not yet handled, in arrival order
 * @working: @work has taken a request off @pending and not yet found it
 *	empty: a new request goes behind it, never to ops->in_cq()
 * @work: handles @pending
 * @release_work: tears the connection down
 * @release_timer: queues @release_work a little after a fence
 * @fenced_link: entry in the instance's list of fenced connections whose
 *	release waits for @release_timer (under mem->lock)
 * @fenced: completed once the QP is drained (sacred_ep_fence_start())
 * @drain_cqe: completion of the receive-queue drain marker
 * @sq_drain_cqe: completion of the send-queue drain marker of a polled @cq
 * @sq_drained: completed by it (sacred_ep_drain_sq())
 * @probe_cqe: completion of a liveness probe (sacred_ep_probe())
 * @probe_timer: releases the connection if the probe is not answered
 * @qpn: the QP's number, for the tracepoints: kept here because a request's
 *	work item may still be running when the release destroys the QP
 * @inline_replies: the QP sends replies inline
 * @psn_known: the QP's first PSN was known, and @req_psn with it
 * @req_psn: the floor: no packet sent after the latest request received
 *	has a lower PSN (set by sacred_ep_recv_done())
 * @seen_psn: the QP's rq_psn, sampled after the latest reply was posted
 * @replies_out: replies posted and not completed (SACRED_REPLIES_MAX)
 * @buf: receive buffers, then send buffers, SACRED_WIRE_MSG_MAX each
 * @dma: DMA address of @buf
 * @slot: per-credit state
 */
struct sacred_ep {
	struct sacred_peer *peer;
	const struct sacred_ep_ops *ops;
	struct rdma_cm_id *cm_id;
	struct ib_cq *cq;
	struct sacred_poll_cq poll;
	unsigned long flags;
	spinlock_t lock;	/* protects @pending and @working */
	struct list_head pending;
	bool working;
	struct work_struct work;
	struct work_struct release_work;
	struct delayed_work release_timer;
	struct list_head fenced_link;
	struct completion fenced;
	struct ib_cqe drain_cqe;
	struct ib_cqe sq_drain_cqe;
	struct completion sq_drained;
	struct ib_cqe probe_cqe;
	struct delayed_work probe_timer;
	u32 qpn;
	bool inline_replies;
	bool psn_known;
	u32 req_psn;
	u32 seen_psn;
	atomic_t replies_out;
	u8 *buf;
	u64 dma;
	struct sacred_slot slot[SACRED_CREDITS];
};

#define SACRED_BUF_LEN	(2 * SACRED_CREDITS * SACRED_WIRE_MSG_MAX)

static inline u32 sacred_rx_off(unsigned int i)
{
	return i * SACRED_WIRE_MSG_MAX;
}

static inline u32 sacred_tx_off(unsigned int i)
{
	return (SACRED_CREDITS + i) * SACRED_WIRE_MSG_MAX;
}

static struct ib_device *sacred_ep_ibdev(struct sacred_ep *ep)
{
	return ep->peer->mem->sdev->ibdev;
}

/**
 * sacred_ep_qp() - the QP of an endpoint
 * @ep: the endpoint
 *
 * Return: the QP.
 */
struct ib_qp *sacred_ep_qp(struct sacred_ep *ep)
{
	return ep->cm_id->qp;
}

/**
 * sacred_ep_peer() - the peer an endpoint belongs to
 * @ep: the endpoint
 *
 * Return: the peer.
 */
struct sacred_peer *sacred_ep_peer(struct sacred_ep *ep)
{
	return ep->peer;
}

/**
 * sacred_ep_post_send() - post send work requests and run them now
 * @ep: the endpoint whose QP gets them
 * @wr: the chain of work requests
 *
 * ib_post_send() with bottom halves disabled around it. A software device
 * (rxe, siw) hands the work to a tasklet; scheduled from process context,
 * that tasklet waits for ksoftirqd to be scheduled, and the completion
 * then waits for this thread to be woken again. Pending softirqs run in
 * local_bh_enable(): the work request is executed, and usually completed
 * through the CQ (polled in softirq context), before this returns. The
 * caller still waits for the completion; a hardware device just posts.
 * Only for the module's own MR work: a reply posted this way also runs
 * the receiving side of a loopback peer here, which measured slower.
 *
 * Context: process context, bottom halves enabled.
 * Return: 0 or the error of ib_post_send().
 */
int sacred_ep_post_send(struct sacred_ep *ep,
			const struct ib_send_wr *wr)
{
	int ret;

	local_bh_disable();
	ret = ib_post_send(sacred_ep_qp(ep), wr, NULL);
	local_bh_enable();
	return ret;
}

/* The next PSN @ep's QP expects to receive, or -1 if it does not say. */
static s64 sacred_ep_rq_psn(struct sacred_ep *ep)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(sacred_ep_qp(ep), &attr, IB_QP_RQ_PSN, &init))
		return -1;
	return attr.rq_psn & SACRED_PSN_MASK;
}

/*
 * Sample the rq_psn for the receives posted from now on (after a reply
 * is posted: nothing waits for it). Any sample will do as their
 * post_psn, the older the lower.
 *
 * Context: process context.
 */
static void sacred_ep_sample_psn(struct sacred_ep *ep)
{
	s64 psn = sacred_ep_rq_psn(ep);

	if (psn >= 0)
		WRITE_ONCE(ep->seen_psn, psn);
}

/**
 * sacred_ep_raced() - did a fenced process's QP receive a packet sent
 *	after its latest request?
 * @ep: the endpoint, fenced (sacred_ep_fence_finish() returned):
 *	its rq_psn no longer moves, and every receive of a request that
 *	came before the fence has completed
 *
 * Every packet the process sent after its latest request has a PSN of
 * at least the floor, ep->req_psn; one that was received (a write
 * placed in part or whole, a read, an atomic, a request not yet run) has
 * moved rq_psn past it. So every write the fence tore counts. It also
 * counts when the floor lags: it is exact only if no other packet came
 * between the sample a request's receive was posted with and the
 * request. Also true when the QP's PSNs are not known.
 *
 * Return: true if rq_psn is not the floor.
 */
bool sacred_ep_raced(struct sacred_ep *ep)
{
	s64 psn;

	if (!ep->psn_known)
		return true;
	psn = sacred_ep_rq_psn(ep);
	return psn < 0 || psn != READ_ONCE(ep->req_psn);
}

/**
 * sacred_ep_usable() - may work requests still be posted on @ep?
 * @ep: the endpoint, or NULL
 *
 * Context: mem->lock or mem->cq_lock held.
 * Return: true if @ep is neither fenced nor dead.
 */
bool sacred_ep_usable(struct sacred_ep *ep)
{
	return ep && !test_bit(SACRED_EP_FENCED, &ep->flags) &&
	       !test_bit(SACRED_EP_DEAD, &ep->flags);
}

/**
 * sacred_ep_release() - queue the teardown of an endpoint, once
 * @ep: the endpoint
 *
 * Its release work (sacred_wq) drains the QP, detaches the endpoint from
 * its peer and frees it with its QP, CQ and id. A second call, or one
 * after a failed completion queued it, does nothing.
 *
 * Context: any; takes no lock.
 */
void sacred_ep_release(struct sacred_ep *ep)
{
	if (!test_and_set_bit(SACRED_EP_RELEASE_QUEUED, &ep->flags))
		queue_work(sacred_wq, &ep->release_work);
}

static int sacred_ep_post_recv(struct sacred_ep *ep, unsigned int i)
{
	struct ib_sge sge = {
		.addr	= ep->dma + sacred_rx_off(i),
		.length	= SACRED_WIRE_MSG_MAX,
		.lkey	= ep->peer->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &ep->slot[i].rx_cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	ib_dma_sync_single_for_device(sacred_ep_ibdev(ep),
				      ep->dma + sacred_rx_off(i),
				      SACRED_WIRE_MSG_MAX, DMA_FROM_DEVICE);
	/*
	 * The request that lands in this buffer comes after every request
	 * received so far: the floor of those is as good a sample as the
	 * QP's own, and the fresher of the two is taken.
	 */
	ep->slot[i].post_psn = sacred_psn_max(READ_ONCE(ep->seen_psn),
					      READ_ONCE(ep->req_psn));
	return ib_post_recv(sacred_ep_qp(ep), &wr, NULL);
}

static void sacred_ep_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sacred_slot *slot =
		container_of(wc->wr_cqe, struct sacred_slot, rx_cqe);
	struct sacred_ep *ep = slot->ep;
	unsigned long flags;
	bool queued;

	if (wc->status != IB_WC_SUCCESS) {
		/*
		 * The QP broke: done. Flushed by a fence: whoever fenced it
		 * releases it (sacred_ep_fence_finish()).
		 */
		if (!test_bit(SACRED_EP_FENCED, &ep->flags))
			sacred_ep_release(ep);
		return;
	}
	/*
	 * Requests come as plain SENDs. An RDMA WRITE with immediate also
	 * takes a receive, with no bytes in its buffer (byte_len is the
	 * write's), and a SEND with invalidate is not what the protocol
	 * sends: either one is a process breaking the protocol, not a
	 * request to answer, and ends its connection.
	 */
	if (wc->opcode != IB_WC_RECV ||
	    (wc->wc_flags & (IB_WC_WITH_IMM | IB_WC_WITH_INVALIDATE))) {
		pr_warn_ratelimited("process %u: not a plain SEND (opcode %d, flags %#x): disconnecting\n",
				    ep->peer->process_id, wc->opcode,
				    wc->wc_flags);
		sacred_ep_release(ep);
		return;
	}
	trace_sacred_request_recv(ep->peer, ep->qpn, slot->index);

	/*
	 * The request's PSN is at least the sample its receive was posted
	 * with, and above the previous request's: the floor moves past it.
	 * Completions of one CQ run one at a time, in order.
	 */
	WRITE_ONCE(ep->req_psn,
		   (sacred_psn_max(slot->post_psn, ep->req_psn) + 1) &
		   SACRED_PSN_MASK);
	slot->len = wc->byte_len;
	spin_lock_irqsave(&ep->lock, flags);
	queued = ep->working || !list_empty(&ep->pending);
	if (queued)
		list_add_tail(&slot->list, &ep->pending);
	spin_unlock_irqrestore(&ep->lock, flags);
	if (!queued) {
		ib_dma_sync_single_for_cpu(sacred_ep_ibdev(ep),
					   ep->dma + sacred_rx_off(slot->index),
					   SACRED_WIRE_MSG_MAX,
					   DMA_FROM_DEVICE);
		if (ep->ops->in_cq(ep, slot->index,
				   (void *)(ep->buf + sacred_rx_off(slot->index)),
				  slot->len,
				  (void *)(ep->buf + sacred_tx_off(slot->index))))
			return;
		/* Nothing else is queued: completions run one at a time. */
		spin_lock_irqsave(&ep->lock, flags);
		list_add_tail(&slot->list, &ep->pending);
		spin_unlock_irqrestore(&ep->lock, flags);
	}
	trace_sacred_request_queue(ep->peer, ep->qpn, slot->index);
	queue_work(sacred_wq, &ep->work);
}

/*
 * With inline replies the receive buffer went back before the reply was
 * posted; otherwise it goes back now that the device is done with the send
 * buffer of its slot.
 */
static void sacred_ep_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sacred_slot *slot =
		container_of(wc->wr_cqe, struct sacred_slot, tx_cqe);
	struct sacred_ep *ep = slot->ep;

	atomic_dec(&ep->replies_out);
	if (wc->status != IB_WC_SUCCESS) {
		if (!test_bit(SACRED_EP_FENCED, &ep->flags))
			sacred_ep_release(ep);
	} else if (!ep->inline_replies &&
		 (test_bit(SACRED_EP_DEAD, &ep->flags) ||
		  sacred_ep_post_recv(ep, slot->index)))
		sacred_ep_release(ep);
}

static void sacred_ep_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sacred_ep *ep =
		container_of(wc->wr_cqe, struct sacred_ep, probe_cqe);

	/*
	 * Answered: its timer goes, then the bit - the other way round, a
	 * probe started in between (a connect request on another CPU)
	 * would lose its timer, and stay "probing" for good if nobody
	 * answers it. A timer already running judges this probe, which
	 * answered at its deadline: at worst the connection is released
	 * and the process connects again.
	 */
	cancel_delayed_work(&ep->probe_timer);
	clear_bit(SACRED_EP_PROBING, &ep->flags);
	if (wc->status != IB_WC_SUCCESS &&
	    !test_bit(SACRED_EP_FENCED, &ep->flags))
		sacred_ep_release(ep);
}

/* The probe went unanswered for SACRED_WR_TIMEOUT_MS: nobody is there. */
static void sacred_ep_probe_timeout(struct work_struct *work)
{
	struct sacred_ep *ep = container_of(to_delayed_work(work),
					    struct sacred_ep,
					    probe_timer);

	if (!test_bit(SACRED_EP_PROBING, &ep->flags))
		return;
	pr_warn_ratelimited("process %u: no answer to a liveness probe in %u ms: releasing its connection\n",
			    ep->peer->process_id, SACRED_WR_TIMEOUT_MS);
	sacred_ep_release(ep);
}

/**
 * sacred_ep_probe() - is the process at the other end still there?
 * @ep: the endpoint
 *
 * Is the process at the other end still there? A host that crashed, or
 * a partition that outlasted the disconnect's retries, leaves the
 * connection up on our side for good: nothing is sent on an idle one,
 * and its process id would be refused as a duplicate for ever. So a
 * connect request for an id that has a connection sends, once at a
 * time, a zero-length RDMA WRITE down the old one: it needs no key and
 * places nothing, and a live QP acknowledges it at once (rdma_cm gives
 * every connected RC QP remote write access; a process that took it away
 * by hand is treated as gone, like a dead one). Unanswered after
 * SACRED_WR_TIMEOUT_MS - rxe 6.1 retries a lost packet a couple of times
 * and then never again, and hardware's own timeout is seconds - or
 * failed, the connection is released like any broken one, and the
 * process's next connect gets through.
 *
 * Context: mem->lock held.
 */
void sacred_ep_probe(struct sacred_ep *ep)
{
	struct ib_rdma_wr wr = {
		.wr.opcode	= IB_WR_RDMA_WRITE,
		.wr.wr_cqe	= &ep->probe_cqe,
		.wr.send_flags	= IB_SEND_SIGNALED,
	};

	if (!sacred_ep_usable(ep) ||
	    test_and_set_bit(SACRED_EP_PROBING, &ep->flags))
		return;
	if (sacred_ep_post_send(ep, &wr.wr))
		clear_bit(SACRED_EP_PROBING, &ep->flags);
	else	/* a full period for this probe, whatever was pending */
		mod_delayed_work(sacred_wq, &ep->probe_timer,
				 msecs_to_jiffies(SACRED_WR_TIMEOUT_MS));
}

/**
 * sacred_ep_probing() - is a liveness probe of @ep unanswered?
 * @ep: the endpoint
 *
 * A work request posted now would complete only after the probe, which
 * on a dead process takes SACRED_WR_TIMEOUT_MS.
 *
 * Return: true while a probe is in flight.
 */
bool sacred_ep_probing(struct sacred_ep *ep)
{
	return test_bit(SACRED_EP_PROBING, &ep->flags);
}

/*
 * Post the reply in @slot's send buffer. Inline (the device copies it at
 * post time, so the buffer is free at once), the slot's receive buffer is
 * reposted first: the process gets its credit back with the reply.
 * -ENOBUFS when SACRED_REPLIES_MAX are out already.
 */
static int sacred_ep_post_reply(struct sacred_ep *ep,
				struct sacred_slot *slot)
{
	struct ib_sge sge = {
		.length	= sizeof(struct sacred_wire_reply),
		.lkey	= ep->peer->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &slot->tx_cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	int ret;

	/* Taken back by sacred_ep_send_done(), flushed or not. */
	if (atomic_inc_return(&ep->replies_out) > SACRED_REPLIES_MAX) {
		ret = -ENOBUFS;
		goto err;
	}
	if (ep->inline_replies) {
		ret = sacred_ep_post_recv(ep, slot->index);
		if (ret)
			goto err;
		/* Inline data is read by the CPU: a kernel address. */
		sge.addr = (uintptr_t)(ep->buf + sacred_tx_off(slot->index));
		wr.send_flags |= IB_SEND_INLINE;
	} else {
		sge.addr = ep->dma + sacred_tx_off(slot->index);
		ib_dma_sync_single_for_device(sacred_ep_ibdev(ep),
					      sge.addr, sge.length,
					      DMA_TO_DEVICE);
	}
	ret = ib_post_send(sacred_ep_qp(ep), &wr, NULL);
	if (ret)
		goto err;
	return 0;

err:
	atomic_dec(&ep->replies_out);
	return ret;
}

/* The tracepoint of a posted reply, with the status it tells. */
static void sacred_ep_trace_reply(struct sacred_ep *ep, unsigned int slot,
				  bool in_cq)
{
	const struct sacred_wire_reply *rep;

	if (!trace_sacred_request_reply_enabled())
		return;
	rep = (void *)(ep->buf + sacred_tx_off(slot));
	trace_sacred_request_reply(ep->peer, ep->qpn, slot,
				   le32_to_cpu(rep->status), in_cq);
}

/**
 * sacred_ep_reply() - send the reply built in a slot's send buffer
 * @ep: the endpoint, usable (sacred_ep_usable())
 * @slot: the slot the request came in
 *
 * Posts the reply (and, inline, the slot's receive buffer first); if it
 * cannot be posted, the endpoint is released. Then samples the QP's PSN
 * for the receives posted from now on (sacred_ep_raced()).
 *
 * Context: mem->lock held, so that a change that revokes this process is
 * never overtaken by this reply, and a fence of this endpoint never by a
 * post.
 */
void sacred_ep_reply(struct sacred_ep *ep, unsigned int slot)
{
	lockdep_assert_held(&ep->peer->mem->lock);
	if (sacred_ep_post_reply(ep, &ep->slot[slot])) {
		sacred_ep_release(ep);
		return;
	}
	sacred_ep_trace_reply(ep, slot, false);
	sacred_ep_sample_psn(ep);
}

/**
 * sacred_ep_reply_cq() - send a reply from a receive completion
 * @ep: the endpoint, usable (sacred_ep_usable())
 * @slot: the slot the request came in
 *
 * As sacred_ep_reply(), without the PSN sample: a QP query, which a device
 * may answer only in process context, and which measured a sixth of an
 * attach answered on the CQ path on rxe when left to a work item. The
 * receive buffer reposted with the reply takes the floor instead
 * (sacred_ep_post_recv()).
 *
 * Context: softirq, mem->cq_lock held (sacred_mem_cq_begin()).
 */
void sacred_ep_reply_cq(struct sacred_ep *ep, unsigned int slot)
{
	lockdep_assert_held(&ep->peer->mem->cq_lock);
	if (sacred_ep_post_reply(ep, &ep->slot[slot]))
		sacred_ep_release(ep);
	else
		sacred_ep_trace_reply(ep, slot, true);
}

static void sacred_ep_work(struct work_struct *work)
{
	struct sacred_ep *ep = container_of(work, struct sacred_ep, work);
	struct ib_device *ibdev = sacred_ep_ibdev(ep);
	struct sacred_slot *slot;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&ep->lock, flags);
		slot = list_first_entry_or_null(&ep->pending,
						struct sacred_slot, list);
		if (slot)
			list_del(&slot->list);
		ep->working = !!slot;
		spin_unlock_irqrestore(&ep->lock, flags);
		if (!slot)
			return;

		trace_sacred_request_work(ep->peer, ep->qpn, slot->index);
		ib_dma_sync_single_for_cpu(ibdev,
					   ep->dma + sacred_rx_off(slot->index),
					   SACRED_WIRE_MSG_MAX, DMA_FROM_DEVICE);
		ep->ops->recv(ep, slot->index,
			      (void *)(ep->buf + sacred_rx_off(slot->index)),
			      slot->len,
			      (void *)(ep->buf + sacred_tx_off(slot->index)));
		trace_sacred_request_done(ep->peer, ep->qpn, slot->index);
	}
}

static void sacred_ep_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sacred_ep *ep =
		container_of(wc->wr_cqe, struct sacred_ep, drain_cqe);

	trace_sacred_fence_end(ep->peer, ep->qpn);
	complete_all(&ep->fenced);
}

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * Nothing makes a QP of ours refuse the error state, so the fence's
 * failure is injected: /sys/kernel/debug/sacred/fail_fence, the kernel's
 * fault attributes (Documentation/fault-injection/), on kernels built
 * with CONFIG_FAULT_INJECTION_DEBUG_FS (selftests/sacred_wire).
 */
static DECLARE_FAULT_ATTR(sacred_fail_fence);
static struct dentry *sacred_debugfs;

/**
 * sacred_ep_debugfs_init() - create the module's debugfs directory
 *
 * Only the fence's fault attribute lives there; debugfs failures are
 * not errors (the directory is a test's knob).
 */
void sacred_ep_debugfs_init(void)
{
	sacred_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	fault_create_debugfs_attr("fail_fence", sacred_debugfs,
				  &sacred_fail_fence);
}

/**
 * sacred_ep_debugfs_exit() - remove what sacred_ep_debugfs_init() made
 */
void sacred_ep_debugfs_exit(void)
{
	debugfs_remove_recursive(sacred_debugfs);
}

static bool sacred_ep_fail_fence(void)
{
	return should_fail(&sacred_fail_fence, 1);
}
#else
static bool sacred_ep_fail_fence(void)
{
	return false;
}
#endif

/* The fence's one step that asks the device to stop the QP. */
static int sacred_ep_qp_to_err(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (sacred_ep_fail_fence())
		return -EIO;
	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

/**
 * sacred_ep_fence_start() - start the fence of a connection
 * @ep: the endpoint of a process whose access is being revoked
 *
 * Moves the QP to the error state and posts a marker on its receive
 * queue; sacred_ep_fence_finish() waits for the marker's flush. On rxe
 * the receive queue is flushed by the same responder task that places
 * incoming RDMA data, one packet at a time and after checking the QP
 * state: once the marker's flush completes, no packet of this QP is being
 * placed and none will be (what ib_drain_rq() waits for, split in two so
 * that several fences and registrations run at once). See
 * Documentation/permission-switch.rst for the argument and for hardware.
 *
 * If the device refuses either step, the fence has failed: it is marked
 * so and done at once, and sacred_ep_fence_finish() says so - the QP may
 * still be placing data, and the caller must stop the process's keys
 * another way. (ib_drain_rq() is no fallback: it asks the device for the
 * same two steps, warns when they fail, and on a polled CQ would poll
 * beside the poller.)
 *
 * Only the first caller starts it; a fence and the release work may both
 * get here, and the second one only waits for the first.
 *
 * Context: may be called with mem->lock held.
 */
void sacred_ep_fence_start(struct sacred_ep *ep)
{
	struct ib_recv_wr wr = { .wr_cqe = &ep->drain_cqe };
	struct ib_qp *qp = sacred_ep_qp(ep);
	const char *step = "the error state";
	int ret;

	if (test_and_set_bit(SACRED_EP_FENCED, &ep->flags))
		return;
	ret = sacred_ep_qp_to_err(qp);
	if (!ret) {
		/* As in sacred_ep_post_send(): the flush runs here. */
		local_bh_disable();
		trace_sacred_fence_start(ep->peer, ep->qpn);
		ret = ib_post_recv(qp, &wr, NULL);
		local_bh_enable();
		step = "the drain marker";
	}
	if (ret) {
		pr_err_ratelimited("fence of process %u failed: QP %u refused %s (%d)\n",
				   ep->peer->process_id, ep->qpn, step, ret);
		set_bit(SACRED_EP_FENCE_FAILED, &ep->flags);
		complete_all(&ep->fenced);
	}
}

/* Wait until the fence sacred_ep_fence_start() started is done. */
static void sacred_ep_fence_wait(struct sacred_ep *ep)
{
	sacred_ep_fence_start(ep);
	wait_for_completion(&ep->fenced);
}

/**
 * sacred_ep_fence_finish() - finish a fence and give the connection up
 * @ep: an endpoint sacred_ep_fence_start() was called on
 *
 * Waits for the drain, then detaches the connection from its peer, so the
 * process can connect again at once. Its release, which disconnects it,
 * runs SACRED_FENCED_RELEASE_MS later (or when the process disconnects, or
 * the instance shuts down): not in the way of the reply that the fence
 * was for. Nothing of the guarantee waits for it.
 *
 * Context: mem->lock held; sleeps.
 * Return: 0, or -EIO if the device refused the fence: the QP may still be
 * placing data with a key that passed its check, and only deregistering
 * the MR stops that (the connection is given up all the same).
 */
int sacred_ep_fence_finish(struct sacred_ep *ep)
{
	lockdep_assert_held(&ep->peer->mem->lock);
	sacred_ep_fence_wait(ep);
	if (ep->peer->ep == ep) {
		ep->peer->fences++;
		ep->peer->ep = NULL;
	}
	set_bit(SACRED_EP_DEAD, &ep->flags);
	if (list_empty(&ep->fenced_link))
		list_add_tail(&ep->fenced_link, &ep->peer->mem->fenced);
	queue_delayed_work(sacred_wq, &ep->release_timer,
			   msecs_to_jiffies(SACRED_FENCED_RELEASE_MS));
	return test_bit(SACRED_EP_FENCE_FAILED, &ep->flags) ? -EIO : 0;
}

/**
 * sacred_ep_fence() - stop every access of a connection, for good
 * @ep: the endpoint
 *
 * sacred_ep_fence_start() and sacred_ep_fence_finish() in one.
 *
 * Context: mem->lock held; sleeps.
 * Return: as sacred_ep_fence_finish().
 */
int sacred_ep_fence(struct sacred_ep *ep)
{
	sacred_ep_fence_start(ep);
	return sacred_ep_fence_finish(ep);
}

static void sacred_ep_free(struct sacred_ep *ep)
{
	struct ib_device *ibdev = sacred_ep_ibdev(ep);
	struct sacred_mem *mem = ep->peer->mem;

	ib_dma_unmap_single(ibdev, ep->dma, SACRED_BUF_LEN,
			    DMA_BIDIRECTIONAL);
	kfree(ep->buf);
	kfree(ep);
	sacred_mem_uncharge(mem, sizeof(*ep));
	sacred_mem_uncharge(mem, SACRED_BUF_LEN);
	atomic_dec(&sacred_live.conns);
	/*
	 * The last use of @mem: sacred_ep_release_all() lets it be freed once
	 * the count is 0 (wake_up_var() only hashes the address).
	 */
	if (atomic_dec_and_test(&mem->nr_conns))
		wake_up_var(&mem->nr_conns);
}

static void sacred_ep_release_timer(struct work_struct *work)
{
	struct sacred_ep *ep = container_of(to_delayed_work(work),
					    struct sacred_ep,
					    release_timer);

	sacred_ep_release(ep);
}

/* Is @ep's CQ polled by the poller thread (poll.c)? */
static bool sacred_ep_polled(struct sacred_ep *ep)
{
	return ep->cq->poll_ctx == IB_POLL_DIRECT;
}

static void sacred_ep_sq_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sacred_ep *ep = container_of(wc->wr_cqe, struct sacred_ep,
					    sq_drain_cqe);

	complete(&ep->sq_drained);
}

/*
 * Wait until every send work request of @ep's QP, which is in the error
 * state, has completed: ib_drain_sq()'s marker, without its polling of a
 * polled CQ from here, beside the poller (poll.c keeps devices with a
 * drain of their own off polled CQs).
 */
static void sacred_ep_drain_sq(struct sacred_ep *ep)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &ep->sq_drain_cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	int ret;

	init_completion(&ep->sq_drained);
	ret = ib_post_send(sacred_ep_qp(ep), &wr.wr, NULL);
	if (WARN_ONCE(ret, "failed to drain send queue: %d\n", ret))
		return;
	wait_for_completion(&ep->sq_drained);
}

static void sacred_ep_release_work(struct work_struct *work)
{
	struct sacred_ep *ep =
		container_of(work, struct sacred_ep, release_work);
	struct sacred_mem *mem = ep->peer->mem;

	/*
	 * Drained before it is detached: a peer without a connection never
	 * has a QP that may still be placing data (perm.c relies on it).
	 */
	rdma_disconnect(ep->cm_id);
	sacred_ep_fence_wait(ep);
	/*
	 * And every send completion handled: without inline replies,
	 * send_done() reposts a receive buffer, which must not meet a QP
	 * being destroyed. The send queue keeps room for the marker.
	 */
	if (sacred_ep_polled(ep))
		sacred_ep_drain_sq(ep);
	else
		ib_drain_sq(sacred_ep_qp(ep));

	sacred_mem_lock(mem);
	if (ep->peer->ep == ep)
		ep->peer->ep = NULL;
	set_bit(SACRED_EP_DEAD, &ep->flags);
	list_del_init(&ep->fenced_link);
	sacred_mem_unlock(mem);
	/* Detached and dead: no fence or probe arms a timer again. */
	cancel_delayed_work_sync(&ep->release_timer);
	cancel_delayed_work_sync(&ep->probe_timer);

	/*
	 * The id's events are nobody's from here on. Without its QP,
	 * sacred_mem_cm_handler() would take it for a waiting request,
	 * and the connection for its instance: the process's DREP, which
	 * may come any time after our rdma_disconnect(), would lock a
	 * spinlock inside the connection.
	 */
	rdma_lock_handler(ep->cm_id);
	ep->cm_id->context = NULL;
	rdma_unlock_handler(ep->cm_id);
	if (sacred_ep_polled(ep))
		sacred_poll_del(&ep->poll);
	rdma_destroy_qp(ep->cm_id);
	ib_free_cq(ep->cq);
	/* No completion handler runs now; the work cannot be queued again. */
	cancel_work_sync(&ep->work);
	rdma_destroy_id(ep->cm_id);
	sacred_ep_free(ep);
}

/**
 * sacred_ep_cm_event() - an rdma_cm event on an endpoint's id
 * @cm_id: the id; its context is the endpoint
 * @event: the event
 *
 * Connection ids inherit the listener's handler (mem.c), which passes
 * every event but CONNECT_REQUEST on an id with a QP here.
 *
 * Context: rdma_cm event handler; takes no lock.
 * Return: 0: the release work destroys the id, never rdma_cm.
 */
int sacred_ep_cm_event(struct rdma_cm_id *cm_id, struct rdma_cm_event *event)
{
	struct sacred_ep *ep = cm_id->context;

	switch (event->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		sacred_ep_release(ep);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * The floor before any packet: the first PSN the QP will expect, which
 * rdma_accept() sets when it moves the QP to RTR (rdma_init_qp_attr()
 * says which, from the connect request). Without it every revoke of the
 * process counts as raced.
 */
static void sacred_ep_init_psn(struct sacred_ep *ep)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTR };
	int mask = 0;

	/* A request is one packet, even at the smallest MTU, 256 B. */
	BUILD_BUG_ON(SACRED_WIRE_MSG_MAX > 256);
	if (rdma_init_qp_attr(ep->cm_id, &attr, &mask) ||
	    !(mask & IB_QP_RQ_PSN))
		return;
	ep->req_psn = attr.rq_psn & SACRED_PSN_MASK;
	ep->seen_psn = ep->req_psn;
	ep->psn_known = true;
}

/**
 * sacred_ep_create() - make the endpoint of a connect request
 * @peer: the process asking
 * @cm_id: the request's id, not yet accepted
 * @ops: what to do with the requests that come on it
 *
 * Maps the buffers, creates the CQ and the QP (on @peer's PD) and posts
 * every receive buffer. Accepting the request is the caller's; if the
 * accept fails, sacred_ep_release() takes the endpoint down.
 *
 * Context: mem->lock and @cm_id's handler lock held.
 * Return: the endpoint, or an ERR_PTR.
 */
struct sacred_ep *sacred_ep_create(struct sacred_peer *peer,
				   struct rdma_cm_id *cm_id,
				   const struct sacred_ep_ops *ops)
{
	struct ib_device *ibdev = peer->mem->sdev->ibdev;
	struct ib_qp_init_attr attr = {};
	struct sacred_ep *ep;
	unsigned int i;
	int ret;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return ERR_PTR(-ENOMEM);
	ep->peer = peer;
	ep->ops = ops;
	ep->cm_id = cm_id;
	spin_lock_init(&ep->lock);
	INIT_LIST_HEAD(&ep->pending);
	INIT_WORK(&ep->work, sacred_ep_work);
	INIT_WORK(&ep->release_work, sacred_ep_release_work);
	INIT_DELAYED_WORK(&ep->release_timer, sacred_ep_release_timer);
	INIT_DELAYED_WORK(&ep->probe_timer, sacred_ep_probe_timeout);
	INIT_LIST_HEAD(&ep->fenced_link);
	init_completion(&ep->fenced);
	ep->drain_cqe.done = sacred_ep_drain_done;
	ep->sq_drain_cqe.done = sacred_ep_sq_drain_done;
	ep->probe_cqe.done = sacred_ep_probe_done;
	for (i = 0; i < SACRED_CREDITS; i++) {
		ep->slot[i].ep = ep;
		ep->slot[i].index = i;
		ep->slot[i].rx_cqe.done = sacred_ep_recv_done;
		ep->slot[i].tx_cqe.done = sacred_ep_send_done;
	}

	ret = -ENOMEM;
	ep->buf = kzalloc(SACRED_BUF_LEN, GFP_KERNEL);
	if (!ep->buf)
		goto err_free;
	ep->dma = ib_dma_map_single(ibdev, ep->buf, SACRED_BUF_LEN,
				    DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, ep->dma))
		goto err_buf;

	/*
	 * Every completion of both queues fits in the CQ at once: a flush
	 * posts them all before the CQ is polled, and rxe drops what does
	 * not fit. Polled in softirq, or by the poller (poll.c), where the
	 * handlers run with bottom halves disabled as in softirq: every
	 * handler only queues work or completes, and a completion that
	 * wakes a waiting request is one context switch sooner than from a
	 * workqueue.
	 */
	ep->cq = ib_alloc_cq(ibdev, ep, SACRED_SQ_DEPTH + SACRED_RQ_DEPTH,
			     0, sacred_poll_ctx(ibdev));
	if (IS_ERR(ep->cq)) {
		ret = PTR_ERR(ep->cq);
		goto err_unmap;
	}

	attr.qp_context = ep;
	attr.send_cq = ep->cq;
	attr.recv_cq = ep->cq;
	attr.cap.max_send_wr = SACRED_SQ_DEPTH;
	attr.cap.max_recv_wr = SACRED_RQ_DEPTH;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.cap.max_inline_data = sizeof(struct sacred_wire_reply);
	ret = rdma_create_qp(cm_id, peer->pd, &attr);
	if (ret) {
		/* A device without inline sends: credits return later. */
		attr.cap.max_inline_data = 0;
		ret = rdma_create_qp(cm_id, peer->pd, &attr);
		if (ret)
			goto err_cq;
	} else {
		ep->inline_replies = true;
	}
	ep->qpn = cm_id->qp->qp_num;

	sacred_ep_init_psn(ep);
	for (i = 0; i < SACRED_CREDITS; i++) {
		ret = sacred_ep_post_recv(ep, i);
		if (ret)
			goto err_qp;
	}

	cm_id->context = ep;
	if (sacred_ep_polled(ep))
		sacred_poll_add(&ep->poll, ep->cq);
	sacred_mem_charge(peer->mem, sizeof(*ep));
	sacred_mem_charge(peer->mem, SACRED_BUF_LEN);
	atomic_inc(&peer->mem->nr_conns);
	atomic_inc(&sacred_live.conns);
	return ep;

err_qp:
	/*
	 * A device may flush the receives posted so far as the QP goes,
	 * and a flushed receive asks for the release of an endpoint about
	 * to be freed: it must find the release queued already.
	 */
	set_bit(SACRED_EP_RELEASE_QUEUED, &ep->flags);
	rdma_destroy_qp(cm_id);
err_cq:
	ib_free_cq(ep->cq);
err_unmap:
	ib_dma_unmap_single(ibdev, ep->dma, SACRED_BUF_LEN,
			    DMA_BIDIRECTIONAL);
err_buf:
	kfree(ep->buf);
err_free:
	kfree(ep);
	return ERR_PTR(ret);
}

/**
 * sacred_ep_release_all() - release every endpoint of an instance
 * @mem: the instance; its listener must be gone already, and its state
 *	down: a connect request still queued is refused, not accepted
 *
 * Context: may sleep; mem->lock not held; no work item of sacred_wq may
 * be waiting for the caller.
 */
void sacred_ep_release_all(struct sacred_mem *mem)
{
	struct sacred_ep *ep;
	struct sacred_peer *peer;
	unsigned long pid;

	sacred_mem_lock(mem);
	xa_for_each(&mem->peers, pid, peer)
		if (peer->ep)
			sacred_ep_release(peer->ep);
	/* Fenced ones waiting for their timer: now. */
	list_for_each_entry(ep, &mem->fenced, fenced_link)
		sacred_ep_release(ep);
	sacred_mem_unlock(mem);
	flush_workqueue(sacred_wq);
	/*
	 * The flush waits only for work queued before it. A handler that
	 * had set a connection's RELEASE_QUEUED bit (so we queued nothing)
	 * but not queued the work yet when we flushed queues it later:
	 * wait for the connections themselves to be freed.
	 */
	wait_var_event(&mem->nr_conns, !atomic_read(&mem->nr_conns));
	WARN_ON(!list_empty(&mem->fenced) || !list_empty(&mem->connreqs));
}
