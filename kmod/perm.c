// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - the permission switch: grants, their MRs, and the revoke fence.
 *
 * This file owns struct sacred_grant and every verbs operation that changes
 * who may touch a region: fast registration, local invalidation, MR
 * replacement and the fence of a revoked process's connection. policy.c
 * decides; this file applies, revocations first.
 *
 * The life of a grant's MR
 * ------------------------
 * One MR per (peer, region), allocated in the peer's own PD the first time
 * the peer attaches, with room for the whole region at the region's MR page
 * size. Its states, with grant->access as the state variable:
 *
 *        alloc                REG_MR (key+1)
 *   ----------> FREE --------------------------> VALID(access)
 *               ^  ^                                 |   |
 *               |  |      LOCAL_INV completed        |   |
 *               |  +---------------------------------+   |
 *               |   dereg + alloc (key space used up,    |
 *               +---- state unknown, or no QP to post ---+
 *                     the invalidation on)
 *
 * - REG_MR and LOCAL_INV are posted on the peer's own QP (rxe, like the
 *   IBTA, wants the MR's PD on the QP), signaled, and waited for - at
 *   most SACRED_WR_TIMEOUT_MS, then the connection is fenced and the
 *   flushed MR replaced (a process that stops taking our replies cannot
 *   hold the instance).
 * - A registration advances the key's low byte by one. After 255 of them
 *   the next registration first replaces the MR: a key never repeats on a
 *   peer's MR while the peer could still hold the old one.
 * - The region's pages are mapped into the MR (ib_map_mr_sg()) once, before
 *   its first registration; every later one re-keys the same page list,
 *   so no switch walks the region's pages.
 * - A failed or flushed work request leaves the MR in an unknown state: it
 *   is replaced, never reused.
 * - With no usable QP of the peer (it is disconnected, or its connection
 *   is fenced), invalidation is replacement: ib_dereg_mr() needs no QP.
 *   This is the fail-over case (the old leader crashed); it costs one MR
 *   allocation per revoked region.
 * - Registration is lazy: a grant is registered when its process attaches
 *   or asks for a change, on the QP the request came on. A revoke only
 *   ever invalidates.
 *
 * The revoke guarantee
 * --------------------
 * Once the reply to a change that revokes access of process V has been
 * posted, no access by V with a revoked key takes effect on the region.
 * For a V connected on ep, in this order, 1 and 2 before the reply:
 *
 *   1. LOCAL_INV of V's MR on V's QP, waited for: from here on a new
 *      packet carrying the key fails the key check. A packet that passed
 *      the check before may still be copying (rxe does not wait for it).
 *   2. fence: V's QP to ERR and a marker on its receive queue (what
 *      ib_drain_rq() does, split so several fences overlap): the marker
 *      is flushed by the responder that places RDMA data, after it
 *      finished the packet in progress (sacred_ep_fence_start()). Now nothing
 *      of V's is being placed and nothing more will be: the QP drops new
 *      packets, and the MR refuses the key on any other QP of V's PD.
 *   3. if step 1 was flushed (V broke its QP first), the MR is replaced
 *      after the reply, before mem->lock is dropped: V's only QP is
 *      drained in ERR, and a new one of V's PD is made only under
 *      mem->lock (request.c), so no QP can use the key meanwhile.
 *
 * Losers are revoked together (sacred_perm_settle()): every invalidation
 * in flight at once, then every fence, the requester's registration
 * meanwhile - two rounds of waiting, whatever the number of losers. The
 * reply follows the registration on the requester's send queue; what
 * needs no waiting before it - the registration's completion, MR
 * replacements, race counts, the event - runs after it is posted
 * (sacred_perm_change_end()).
 *
 * A V that is not connected has no QP in its PD, so nothing can use its
 * key until it connects again, and by then the MR is replaced (after the
 * reply, under the same hold of mem->lock). A revoke
 * of the requester's own access is not fenced (its reply travels on that
 * connection); RC ordering places its earlier writes before its request.
 * Bytes of a multi-packet write placed before step 2 stay in memory: the
 * module cannot undo them (torn writes); layers above validate entries.
 *
 * A change in the receive completion
 * ----------------------------------
 * A change that fences nobody - it takes nothing from a connected process
 * but its requester - is decided and applied in its request's receive
 * completion, under mem->cq_lock (sacred_perm_change_cq()): the
 * requester's registration (or invalidation) and its reply are posted
 * there, in the work path's order, the work request's completion
 * (sacred_grant_cq_done()) finishes it, and a loser with no connection
 * has its MR replaced before it can have a QP again. Whoever takes
 * mem->lock to touch a grant, an MR or an ACL first waits for those work
 * requests and replaces the MRs left (sacred_perm_sync()), so the rules
 * above hold: no MR is replaced or freed with a work request on it, and
 * no QP is made in a PD whose revoked key still lives.
 *
 * Every decided change is announced (notify.h); sacred_perm_fill() says
 * what its netlink event carries.
 *
 * Context: under mem->lock, and may sleep - but sacred_perm_change_cq(),
 * sacred_perm_change_cq_end() (softirq, mem->cq_lock) and
 * sacred_grant_cq_done() (CQ context).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "ep.h"
#include "notify.h"
#include "peer.h"
#include "perm.h"
#include "policy.h"
#include "trace.h"

#define SACRED_KEY_REGS_MAX	255

static void sacred_wait_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sacred_wait *w = container_of(wc->wr_cqe, struct sacred_wait,
					     cqe);

	w->status = wc->status;
	complete(&w->done);
}

static void sacred_wait_init(struct sacred_wait *w)
{
	w->cqe.done = sacred_wait_done;
	w->status = IB_WC_GENERAL_ERR;
	init_completion(&w->done);
	w->ep = NULL;
}

/*
 * Wait for a posted work request: every one completes, or is flushed -
 * at the latest once its QP is in the error state, where the fence puts
 * it at @deadline (jiffies). @w lives on the caller's stack: never return
 * before its completion ran - not even if the device refused the fence,
 * when this waits for as long as the device holds the request.
 */
static int sacred_wait_until(struct sacred_wait *w, unsigned long deadline)
{
	struct sacred_ep *ep = w->ep;
	unsigned long now = jiffies;
	long left = time_after(deadline, now) ? deadline - now : 0;

	if (!wait_for_completion_timeout(&w->done, left)) {
		pr_warn_ratelimited("process %u: a work request on its QP is still pending after %u ms: fencing its connection\n",
				    sacred_ep_peer(ep)->process_id,
				    SACRED_WR_TIMEOUT_MS);
		sacred_ep_fence(ep);
		wait_for_completion(&w->done);
	}
	return w->status == IB_WC_SUCCESS ? 0 : -EIO;
}

/* sacred_wait_until() SACRED_WR_TIMEOUT_MS from now. */
static int sacred_wait(struct sacred_wait *w)
{
	return sacred_wait_until(w, jiffies +
				 msecs_to_jiffies(SACRED_WR_TIMEOUT_MS));
}

static int ib_access_of(u32 access)
{
	int flags = IB_ACCESS_LOCAL_WRITE;

	if (access & SACRED_ACCESS_READ)
		flags |= IB_ACCESS_REMOTE_READ;
	if (access & SACRED_ACCESS_WRITE)
		flags |= IB_ACCESS_REMOTE_WRITE;
	if (access & SACRED_ACCESS_ATOMIC)
		flags |= IB_ACCESS_REMOTE_ATOMIC;
	return flags;
}

static int sacred_grant_alloc_mr(struct sacred_grant *grant)
{
	struct ib_mr *mr;

	mr = ib_alloc_mr(grant->peer->pd, IB_MR_TYPE_MEM_REG,
			 grant->region->mr_pages);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	grant->mr = mr;
	grant->regs = 0;
	grant->access = 0;
	grant->peer->nr_mrs++;
	atomic_inc(&grant->peer->mem->nr_mrs);
	atomic64_add(grant->region->mr_pages, &grant->peer->mem->mr_pages);
	atomic_inc(&sacred_live.mrs);
	return 0;
}

/*
 * Deregister the grant's MR. If the device fails to, the MR - and a key
 * the process may hold - can still be valid, and no later invalidation
 * reaches it: the process must never run a QP in its PD again. Its
 * connection is fenced, the instance refuses it from now on
 * (SACRED_REJ_UNREVOKED), and the PD, which the MR holds, is kept - with
 * a reference on this module, whose name the PD's resource entry points
 * to (rdma res show): sacred.ko stays loaded.
 */
static void sacred_grant_put_mr(struct sacred_grant *grant)
{
	struct sacred_peer *peer = grant->peer;
	int ret;

	if (!grant->mr)
		return;
	ret = ib_dereg_mr(grant->mr);
	if (ret) {
		struct sacred_ep *ep = sacred_peer_ep(peer);

		pr_err_ratelimited("process %u: %s failed to deregister an MR (%d): refusing the process until instance %u is deleted; the module stays loaded\n",
				   peer->process_id,
				   peer->pd->device->name, ret,
				   peer->mem->id);
		if (!peer->unrevoked)
			__module_get(THIS_MODULE);
		peer->unrevoked = true;
		if (ep)
			sacred_ep_fence(ep);
	}
	grant->mr = NULL;
	grant->access = 0;
	peer->nr_mrs--;
	atomic_dec(&peer->mem->nr_mrs);
	atomic64_sub(grant->region->mr_pages, &peer->mem->mr_pages);
	atomic_dec(&sacred_live.mrs);
}

/*
 * Replace the MR with a fresh, FREE one. The old one may be VALID: only
 * called when no QP of the peer that could still use it is running, or
 * for the requester's own MR before its new registration.
 */
static int sacred_grant_replace_mr(struct sacred_grant *grant)
{
	sacred_grant_put_mr(grant);
	return sacred_grant_alloc_mr(grant);
}

/**
 * sacred_grant_rkey() - the key a grant's process uses
 * @grant: the grant
 *
 * Return: the rkey, or 0 if the MR is FREE.
 */
u32 sacred_grant_rkey(struct sacred_grant *grant)
{
	return grant->access ? grant->mr->rkey : 0;
}

/* Post LOCAL_INV of @grant's MR on @ep, signaled to @cqe. */
static int sacred_grant_post_inv(struct sacred_grant *grant,
				 struct sacred_ep *ep, struct ib_cqe *cqe)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.wr_cqe = cqe,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = grant->mr->rkey,
	};

	return sacred_ep_post_send(ep, &wr);
}

/*
 * Post the registration of @grant's MR for @access on @ep, signaled to
 * @cqe: one chain, LOCAL_INV first if the MR is VALID, then REG_MR with
 * the next key. Sleeps only when the MR must be replaced first (its key
 * space used up) or mapped (its first registration): the CQ path
 * never asks for either.
 */
static int sacred_grant_post_reg(struct sacred_grant *grant,
				 struct sacred_ep *ep, u32 access,
				 struct ib_cqe *cqe)
{
	struct sacred_region *region = grant->region;
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV };
	struct ib_reg_wr reg = {};
	int n, ret;

	if (!grant->mr || grant->regs >= SACRED_KEY_REGS_MAX) {
		ret = sacred_grant_replace_mr(grant);
		if (ret)
			return ret;
	}

	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	if (grant->access) {
		inv.ex.invalidate_rkey = grant->mr->rkey;
		inv.next = &reg.wr;
	}

	/*
	 * The page list is the MR's, not the registration's: LOCAL_INV
	 * leaves it, and a REG_MR of the same MR registers it again. So
	 * it is set once per MR - O(pages) on a device that keeps one
	 * entry per page (rxe on 6.12: an xarray slot per 4 KiB) - and a
	 * switch costs the same for a region of any size.
	 */
	if (!grant->regs) {
		n = ib_map_mr_sg_zbva(grant->mr, region->sgt.sgl,
				      region->sgt.nents, NULL,
				      region->mr_page_size);
		if (n != region->sgt.nents)
			return n < 0 ? n : -EINVAL;
	}
	ib_update_fast_reg_key(grant->mr, (u8)(grant->mr->rkey + 1));
	grant->regs++;
	reg.mr = grant->mr;
	reg.key = grant->mr->rkey;
	reg.access = ib_access_of(access);

	ret = sacred_ep_post_send(ep, grant->access ? &inv : &reg.wr);
	trace_sacred_grant_register(grant, access, grant->regs == 1, ret);
	return ret;
}

/* The end of a registration: VALID(@access), or a fresh MR on failure. */
static int sacred_grant_reg_done(struct sacred_grant *grant, u32 access,
				 int ret)
{
	if (ret) {
		/* Unknown state: never reuse it. */
		sacred_grant_replace_mr(grant);
		return ret;
	}
	grant->access = access;
	return 0;
}

/* Register @grant for @access on @ep and wait for it. */
static int sacred_grant_register(struct sacred_grant *grant,
				 struct sacred_ep *ep, u32 access)
{
	struct sacred_wait w;
	int ret;

	if (!sacred_ep_usable(ep))
		return -ECONNRESET;	/* fenced: nothing was posted */
	sacred_wait_init(&w);
	w.ep = ep;
	ret = sacred_grant_post_reg(grant, ep, access, &w.cqe);
	if (!ret)
		ret = sacred_wait(&w);
	return sacred_grant_reg_done(grant, access, ret);
}

static struct sacred_grant *sacred_grant_lookup(struct sacred_mem *mem,
						u32 process_id, u32 region_id)
{
	struct sacred_peer *peer = xa_load(&mem->peers, process_id);

	return peer ? xa_load(&peer->grants, region_id) : NULL;
}

/* The grant of @peer on @region, created with its MR if it has none. */
static struct sacred_grant *sacred_grant_get(struct sacred_peer *peer,
					     struct sacred_region *region)
{
	struct sacred_grant *grant = xa_load(&peer->grants, region->id);
	int ret;

	if (grant)
		return grant;
	grant = kzalloc(sizeof(*grant), GFP_KERNEL);
	if (!grant)
		return ERR_PTR(-ENOMEM);
	grant->peer = peer;
	grant->region = region;
	INIT_LIST_HEAD(&grant->cq_link);
	ret = sacred_grant_alloc_mr(grant);
	if (ret)
		goto err_free;
	ret = xa_insert(&peer->grants, region->id, grant, GFP_KERNEL);
	if (ret)
		goto err_mr;
	sacred_mem_charge(peer->mem, sizeof(*grant));
	return grant;

err_mr:
	sacred_grant_put_mr(grant);
err_free:
	kfree(grant);
	return ERR_PTR(ret);
}

/**
 * sacred_grant_free() - revoke a grant and free it with its MR
 * @grant: the grant
 *
 * Context: mem->lock held.
 */
void sacred_grant_free(struct sacred_grant *grant)
{
	struct sacred_ep *ep = sacred_peer_ep(grant->peer);

	/* The MR goes away: no QP of the peer may still be placing data. */
	if (grant->access && ep)
		sacred_ep_fence(ep);
	sacred_grant_put_mr(grant);
	xa_erase(&grant->peer->grants, grant->region->id);
	sacred_mem_uncharge(grant->peer->mem, sizeof(*grant));
	kfree(grant);
}

/* The tracepoint of a round of losers' invalidations. */
static void sacred_perm_trace_invalidate(struct sacred_region *region,
					 const struct sacred_op *ops,
					 unsigned int n)
{
	unsigned int i, done = 0;

	for (i = 0; i < n; i++)
		done += ops[i].invalidated;
	trace_sacred_change_invalidate(region, n, done);
}

/*
 * Start taking away what every ACL member loses (@cur bits not in @next),
 * as the revoke guarantee says, and post @sw->reg's registration for
 * @sw->reg_access on @via. The verbs work of all processes runs together:
 *
 *   round 1: LOCAL_INV of every loser's MR, each on its own QP;
 *   round 2: the fence of every loser's connection (but @via) and,
 *            meanwhile, the registration on @via (chained after the
 *            invalidation of its old key).
 *
 * When this returns, every loser's connection is fenced and the reply may
 * be posted: it follows the registration on @via's send queue, so the
 * requester's new key is valid when the reply arrives, and a failed
 * registration breaks the QP and flushes the reply. What is left - the
 * registration's completion, the replacement of an MR whose invalidation
 * did not complete, the race counts - is sacred_perm_settle_end()'s, which
 * runs before mem->lock is dropped: until then no new QP can appear in a
 * loser's PD (connect requests are answered under mem->lock), so a key
 * left valid by a flushed invalidation is usable by no QP.
 * @region->ops has room for one entry per ACL member.
 */
static void sacred_perm_settle(struct sacred_region *region,
			       struct sacred_ep *via, struct sacred_switch *sw)
{
	struct sacred_op *ops = region->ops;
	struct sacred_acl_entry *e;
	unsigned long pid, deadline;
	unsigned int n = 0, i;

	xa_for_each(&region->acl, pid, e) {
		struct sacred_grant *grant;
		struct sacred_ep *ep;
		struct sacred_op *op;

		if (!(e->cur & ~e->next))
			continue;
		grant = sacred_grant_lookup(region->mem, pid, region->id);
		if (!grant || grant == sw->reg || !grant->access ||
		    !(grant->access & ~e->next))
			continue;
		op = &ops[n++];
		op->grant = grant;
		op->fence = NULL;
		op->replaced = false;
		sacred_wait_init(&op->w);
		ep = sacred_peer_ep(grant->peer);
		if (ep && ep != via)
			op->fence = ep;
		/*
		 * Behind an unanswered probe (ep.c) a LOCAL_INV would wait
		 * for it: a fenced loser's MR is replaced instead.
		 */
		op->w.ep = ep;
		op->invalidated = sacred_ep_usable(ep) &&
				  !(op->fence && sacred_ep_probing(ep)) &&
				  !sacred_grant_post_inv(grant, ep, &op->w.cqe);
	}
	sw->nr_ops = n;
	/*
	 * One deadline for the round: k losers that answer nothing cost one
	 * SACRED_WR_TIMEOUT_MS, not k of them, while the instance is locked.
	 * The invalidation runs before its QP is moved to the error state,
	 * which would flush it and cost an MR per switch: on a device that
	 * runs it in the post (rxe in 6.1) this wait ends at once.
	 */
	deadline = jiffies + msecs_to_jiffies(SACRED_WR_TIMEOUT_MS);
	for (i = 0; i < n; i++)
		if (ops[i].invalidated && sacred_wait_until(&ops[i].w, deadline))
			ops[i].invalidated = false;
	if (trace_sacred_change_invalidate_enabled())
		sacred_perm_trace_invalidate(region, ops, n);

	for (i = 0; i < n; i++)
		if (ops[i].fence)
			sacred_ep_fence_start(ops[i].fence);
	if (sw->reg) {
		/*
		 * @via may have been fenced in round 1 (sacred_wait()):
		 * nothing is posted then, yet sacred_grant_reg_done() still
		 * replaces the MR. The requester's own access may be what
		 * narrows, and its MR lives in its PD, which its next
		 * connection shares: the old key must die with this change.
		 * (sacred_grant_register() needs no such step: at attach the
		 * grant never holds more than the ACL entry's @cur.)
		 */
		sacred_wait_init(&sw->reg_w);
		sw->reg_w.ep = via;
		sw->reg_err = sacred_ep_usable(via) ?
			      sacred_grant_post_reg(sw->reg, via, sw->reg_access,
						    &sw->reg_w.cqe) :
			      -ECONNRESET;
		/* What the reply tells; sacred_perm_settle_end() checks it. */
		if (!sw->reg_err)
			sw->reg->access = sw->reg_access;
	}
	/*
	 * A fence the device refused leaves the QP running: a packet that
	 * passed the key check before the LOCAL_INV may still be placing
	 * data. Once ib_dereg_mr() returns, the device no longer touches
	 * the MR's pages (what lets any ULP free them; rxe waits for the
	 * MR's last reference): the MR goes before the reply.
	 */
	for (i = 0; i < n; i++)
		if (ops[i].fence && sacred_ep_fence_finish(ops[i].fence)) {
			sacred_grant_replace_mr(ops[i].grant);
			ops[i].replaced = true;
		}
}

/*
 * The part of a change that waits until its reply is posted (see
 * sacred_perm_settle()). Returns 0, or why the requester's registration
 * failed.
 */
static int sacred_perm_settle_end(struct sacred_switch *sw)
{
	struct sacred_region *region = sw->region;
	struct sacred_op *ops = region->ops;
	struct sacred_acl_entry *e;
	unsigned int i;
	int ret;

	for (i = 0; i < sw->nr_ops; i++) {
		/*
		 * A write the fence tore was sent after the loser's latest
		 * request (RC order completes every earlier one before the
		 * request is received); its first packet moved the QP's
		 * rq_psn past a floor ep.c keeps. The module cannot see
		 * the bytes: it counts every revoke in which that happened.
		 */
		if (ops[i].fence && sacred_ep_raced(ops[i].fence)) {
			region->raced++;
			ops[i].grant->peer->raced++;
		}
		if (ops[i].invalidated)
			ops[i].grant->access = 0;
		else if (!ops[i].replaced)
			sacred_grant_replace_mr(ops[i].grant);
	}
	sw->nr_ops = 0;
	if (!sw->reg)
		return 0;
	ret = sw->reg_err ?: sacred_wait(&sw->reg_w);
	sacred_grant_reg_done(sw->reg, sw->reg_access, ret);
	sw->reg = NULL;
	if (!ret || sw->reg_err)
		return ret;
	/*
	 * Failed after the reply was posted: the failure broke the QP, which
	 * flushed the reply queued behind the registration. As when it fails
	 * before (sacred_perm_apply()), the requester keeps only what it
	 * held and still may: nothing is granted.
	 */
	e = xa_load(&region->acl, sw->chg.requester);
	if (e)
		e->cur &= sw->reg_old_cur;
	return ret;
}

/*
 * The end of a change on either path: every ACL entry's @next becomes its
 * @cur - or, when the change @failed, only what @next keeps of it (a
 * failed change never widens access) - the region's last_writer follows,
 * and the epoch is bumped.
 */
static void sacred_perm_commit(struct sacred_region *region, bool failed)
{
	struct sacred_acl_entry *e;
	unsigned long pid;

	region->last_writer = 0;
	xa_for_each(&region->acl, pid, e) {
		e->cur = failed ? e->cur & e->next : e->next;
		if (e->cur & SACRED_WRITE_BITS)
			region->last_writer = pid;
	}
	region->epoch++;
}

/*
 * Apply the @next of every ACL entry, then make it @cur and bump the
 * epoch. The requester's new access is registered on @via.
 */
static int sacred_perm_apply(struct sacred_region *region,
			     struct sacred_ep *via, u32 requester,
			     struct sacred_switch *sw)
{
	struct sacred_acl_entry *e;

	e = via ? xa_load(&region->acl, requester) : NULL;
	if (e && e->next) {
		sw->reg = sacred_grant_get(sacred_ep_peer(via), region);
		if (IS_ERR(sw->reg))
			sw->reg = NULL;	/* registered at its next attach */
		else if (sw->reg->access == e->next)
			sw->reg = NULL;
		else
			sw->reg_access = e->next;
		sw->reg_old_cur = e->cur;
	}

	sacred_perm_settle(region, via, sw);

	/*
	 * Not applied in full: what was taken away is gone (fenced, or
	 * about to be), but nothing is granted - a FAILED reply never
	 * widens access, now or at the next attach.
	 */
	sacred_perm_commit(region, sw->reg_err);
	return sw->reg_err;
}

/**
 * sacred_perm_change() - changePermission: decide, and apply up to the reply
 * @region: the region
 * @chg: the request; @chg->via is the requester's connection, or NULL when
 *	an admin asks over netlink
 * @reason: set to the policy's refusal reason, 0 if it accepted
 * @sw: set up for sacred_perm_change_end()
 *
 * A refused request changes nothing. An accepted one is applied up to
 * its reply: revocations fenced, the requester's new access registered on
 * @chg->via ahead of the reply, the epoch bumped. The caller posts the
 * reply, if any, then calls sacred_perm_change_end() - whatever this
 * returned - before it drops mem->lock.
 *
 * Context: mem->lock held.
 * Return: 0, or a negative errno if the change could not be applied in
 * full (access may then have been revoked, never widened).
 */
int sacred_perm_change(struct sacred_region *region,
		       const struct sacred_perm_change *chg, u32 *reason,
		       struct sacred_switch *sw)
{
	sacred_perm_sync(region->mem);
	memset(sw, 0, sizeof(*sw));
	sw->region = region;
	sw->chg = *chg;
	*reason = sacred_policy_decide(region, chg);
	trace_sacred_change_decide(region, chg, *reason, false);
	sw->reason = *reason;
	if (!*reason)
		sw->err = sacred_perm_apply(region, chg->via, chg->requester,
					    sw);
	return sw->err;
}

/**
 * sacred_perm_change_end() - finish a change after its reply was posted
 * @sw: what sacred_perm_change() set up; a zeroed one does nothing
 *
 * Waits for the requester's registration, replaces the MRs whose
 * invalidation did not complete, counts raced revokes and raises the
 * change's event - with the error of a registration that failed after
 * the reply was posted (the reply was flushed with the QP, and nothing
 * was granted).
 *
 * Context: mem->lock held, as since sacred_perm_change().
 */
void sacred_perm_change_end(struct sacred_switch *sw)
{
	struct sacred_perm_event ev;
	int ret;

	if (!sw->region)
		return;
	lockdep_assert_held(&sw->region->mem->lock);
	ret = sacred_perm_settle_end(sw);
	if (ret && !sw->err)
		sw->err = ret;
	ev.chg = sw->chg;
	ev.reason = sw->reason;
	ev.err = sw->err;
	ev.epoch = sw->region->epoch;
	sacred_notify_perm(sw->region, &ev, GFP_KERNEL);
	sw->region = NULL;
}

/* Put @grant on the instance's list of grants sacred_perm_sync() repairs. */
static void sacred_grant_cq_repair_later(struct sacred_grant *grant)
{
	struct sacred_mem *mem = grant->peer->mem;

	lockdep_assert_held(&mem->cq_lock);
	grant->access = 0;	/* no answer on the CQ path uses its key again */
	if (list_empty(&grant->cq_link))
		list_add_tail(&grant->cq_link, &mem->cq_repairs);
}

/*
 * The completion of the work request the CQ path posted for a change
 * (its requester's registration, or the invalidation of its key):
 * announce the change - with the error, if it failed - and let the grant
 * go. A failed one broke the QP, which flushed the reply behind it: the
 * process was told nothing, and sacred_perm_sync() repairs the grant.
 *
 * Context: CQ context (softirq, or the poller with bottom halves off).
 */
static void sacred_grant_cq_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sacred_grant *grant = container_of(wc->wr_cqe,
						  struct sacred_grant,
						  cq_wr_cqe);
	struct sacred_peer *peer = grant->peer;
	struct sacred_mem *mem = peer->mem;
	bool failed = wc->status != IB_WC_SUCCESS;

	/*
	 * Before @mem->cq_wrs drops: until then whoever holds mem->lock
	 * waits (sacred_perm_sync()), so the region and the grant stay.
	 */
	if (failed)
		grant->cq_ev.err = -EIO;
	sacred_notify_perm(grant->region, &grant->cq_ev, GFP_ATOMIC);

	spin_lock(&mem->cq_lock);
	if (failed) {
		grant->cq_failed = true;
		sacred_grant_cq_repair_later(grant);
	} else {
		peer->cq_grant = NULL;
	}
	if (!--mem->cq_wrs)
		wake_up(&mem->cq_wq);
	spin_unlock(&mem->cq_lock);
}

/*
 * Repair a grant the CQ path left for sacred_perm_sync(): replace its
 * MR, whose key must die or whose state is unknown.
 *
 * A loser with no connection (sacred_perm_change_cq()): no QP of its PD
 * can use the key until it connects again, and its connect is answered
 * after this (under mem->lock, after sacred_perm_sync()) - the work
 * path's rule for such a loser, whose MR it replaces after the reply.
 *
 * The requester of a change whose work request failed: as when a
 * registration fails on the work path (sacred_perm_settle_end()), it
 * keeps only what it held before the change and still may - nothing was
 * granted - and its connection, broken already, is fenced first if it is
 * still attached, so that no QP of its PD runs while the MR goes.
 */
static void sacred_grant_cq_repair(struct sacred_grant *grant)
{
	struct sacred_peer *peer = grant->peer;
	struct sacred_mem *mem = peer->mem;
	struct sacred_ep *ep = sacred_peer_ep(peer);
	struct sacred_acl_entry *e;

	if (grant->cq_failed && ep)
		sacred_ep_fence(ep);
	WARN_ON_ONCE(sacred_peer_ep(peer));
	sacred_grant_replace_mr(grant);
	if (grant->cq_failed) {
		e = xa_load(&grant->region->acl, peer->process_id);
		if (e)
			e->cur &= grant->cq_old_cur;
	}
	spin_lock_bh(&mem->cq_lock);
	list_del_init(&grant->cq_link);
	if (grant->cq_failed)
		peer->cq_grant = NULL;
	grant->cq_failed = false;
	spin_unlock_bh(&mem->cq_lock);
}

/* No work request of the CQ path in flight? And is any grant to repair? */
static bool sacred_perm_cq_idle(struct sacred_mem *mem, bool *repairs)
{
	bool idle;

	spin_lock_bh(&mem->cq_lock);
	idle = !mem->cq_wrs;
	*repairs = !list_empty(&mem->cq_repairs);
	spin_unlock_bh(&mem->cq_lock);
	return idle;
}

/**
 * sacred_perm_sync() - settle what the CQ path left in flight
 * @mem: the instance
 *
 * A change applied in its receive completion (sacred_perm_change_cq())
 * leaves its requester's work request in flight, and the MRs of losers
 * with no connection to replace. Whoever takes mem->lock to touch a
 * grant, an MR or an ACL calls this first: it waits for every such work
 * request - at most SACRED_WR_TIMEOUT_MS, then the connections they wait
 * on are fenced, as the work path's waits do - and repairs the grants
 * left (sacred_grant_cq_repair()). Until mem->lock is dropped no new
 * one starts: no MR is replaced or freed with a work request of the CQ
 * path on it, no QP is made in a PD whose revoked key still lives, and
 * every ACL entry's @cur is what its process may hold.
 *
 * Context: mem->lock held (sacred_mem_lock()); may sleep.
 */
void sacred_perm_sync(struct sacred_mem *mem)
{
	struct sacred_grant *grant;
	struct sacred_peer *peer;
	unsigned long pid;
	bool repairs;

	lockdep_assert_held(&mem->lock);
	if (likely(sacred_perm_cq_idle(mem, &repairs) && !repairs))
		return;
	if (!wait_event_timeout(mem->cq_wq,
				sacred_perm_cq_idle(mem, &repairs),
				msecs_to_jiffies(SACRED_WR_TIMEOUT_MS))) {
		xa_for_each(&mem->peers, pid, peer) {
			struct sacred_ep *ep = sacred_peer_ep(peer);

			if (!READ_ONCE(peer->cq_grant) || !ep)
				continue;
			pr_warn_ratelimited("process %u: a work request on its QP is still pending after %u ms: fencing its connection\n",
					    peer->process_id,
					    SACRED_WR_TIMEOUT_MS);
			sacred_ep_fence(ep);
		}
		wait_event(mem->cq_wq,
			   sacred_perm_cq_idle(mem, &repairs));
	}
	/* Nothing adds to the list now: the CQ path is out, none in flight. */
	while ((grant = list_first_entry_or_null(&mem->cq_repairs,
						 struct sacred_grant,
						 cq_link)))
		sacred_grant_cq_repair(grant);
}

/*
 * Would taking what @e loses of @region need a verbs step on a live
 * connection - a loser (not @requester) whose MR grants some of it, and
 * whose process is connected? With @lost 0, what the entry loses is its
 * @cur less its @next; otherwise @lost (every bit a policy may take).
 *
 * A change of the loser's own that the CQ path applied has set @e->cur
 * and the grant's access at its post, but the key it narrowed dies only
 * when its work request runs - which a process can hold back behind its
 * own replies (stop posting receives: they wait for RNR retries). Until
 * that completion (or sacred_perm_sync()'s repair of a failed one) the
 * loser holds what it held before (the grant's @cq_old_cur), and taking that
 * from it needs the fence: the work path then waits for the work request
 * first.
 *
 * Context: mem->cq_lock held (the CQ path).
 */
static bool sacred_perm_loss_needs_fence(struct sacred_region *region,
					 u32 requester, unsigned long pid,
					 struct sacred_acl_entry *e, u32 lost)
{
	struct sacred_mem *mem = region->mem;
	struct sacred_peer *peer;
	struct sacred_grant *grant;
	u32 cur, held;

	lockdep_assert_held(&mem->cq_lock);
	if (pid == requester)
		return false;
	/* Nothing of the CQ path in flight or to repair: @e->cur is held. */
	if (!(e->cur & (lost ?: ~e->next)) && !mem->cq_wrs &&
	    list_empty(&mem->cq_repairs))
		return false;
	peer = xa_load(&mem->peers, pid);
	grant = peer ? xa_load(&peer->grants, region->id) : NULL;
	if (!grant)
		return false;
	cur = e->cur;
	held = grant->access;
	if (peer->cq_grant == grant) {
		cur |= grant->cq_old_cur;
		held |= grant->cq_old_cur;
	}
	lost = cur & (lost ?: ~e->next);
	return (held & lost) && sacred_peer_ep(peer);
}

/* Does the change just decided on @region take from a connected loser? */
static bool sacred_perm_fences(struct sacred_region *region, u32 requester,
			       u32 lost)
{
	struct sacred_acl_entry *e;
	unsigned long pid;

	xa_for_each(&region->acl, pid, e)
		if (sacred_perm_loss_needs_fence(region, requester, pid, e,
						 lost))
			return true;
	return false;
}

/*
 * Would @chg, if its policy accepted it, take write from a connected
 * process - known without deciding (sacred_policy_takes_write()), from
 * the member that held write when access was last applied? Such a change
 * needs the work path, which decides it once: decided here and taken
 * back, the first decision after a context switch measured as much as
 * the work path's own steps before its fence in a TCG guest
 * (bench/results/runs/abswitch.md). A wrong "no" costs that detour;
 * sacred_perm_fences() after the decision still catches every fence.
 */
static bool
sacred_perm_takes_from_connected_writer(struct sacred_region *region,
					const struct sacred_perm_change *chg)
{
	u32 writer = region->last_writer;
	struct sacred_peer *peer;

	if (!writer || writer == chg->requester ||
	    !sacred_policy_takes_write(region, chg))
		return false;
	peer = xa_load(&region->mem->peers, writer);
	return peer && sacred_peer_ep(peer);
}

/*
 * Apply, in the receive completion, what the change just decided takes
 * from the others: each loser has no connection (checked), so its MR,
 * if it grants what is lost, is replaced by sacred_perm_sync() before
 * its process can have a QP again.
 */
static void sacred_perm_cq_losers(struct sacred_region *region,
				  u32 requester)
{
	struct sacred_acl_entry *e;
	struct sacred_grant *grant;
	struct sacred_peer *peer;
	unsigned long pid;

	xa_for_each(&region->acl, pid, e) {
		if (pid == requester || !(e->cur & ~e->next))
			continue;
		peer = xa_load(&region->mem->peers, pid);
		grant = peer ? xa_load(&peer->grants, region->id) : NULL;
		if (grant && (grant->access & ~e->next))
			sacred_grant_cq_repair_later(grant);
	}
}

/*
 * Post the requester's part of a change on @via: the registration of its
 * new access, or, when it keeps nothing, the invalidation of its key.
 * Signaled to the grant, whose completion announces the change.
 */
static int sacred_perm_cq_post(struct sacred_grant *grant,
			       struct sacred_ep *via, u32 access)
{
	grant->cq_wr_cqe.done = sacred_grant_cq_done;
	if (access)
		return sacred_grant_post_reg(grant, via, access,
					     &grant->cq_wr_cqe);
	return sacred_grant_post_inv(grant, via, &grant->cq_wr_cqe);
}

/**
 * sacred_perm_change_cq() - changePermission in its receive completion
 * @region: the region
 * @chg: the request; @chg->via is usable
 * @csw: set up for sacred_perm_change_cq_end()
 *
 * Decides and applies, with no sleeping step, a change that needs no
 * fence: one that takes nothing from a connected process but its
 * requester - an own grant or loss, a refusal, a revoke of a process with
 * no connection - from a process that holds what its MR is registered
 * for, on an MR that needs neither a page list nor a replacement, with
 * none of its work requests from here in flight.
 *
 * A decision must not be made twice where it has effects of its own (a
 * bpf program may update its maps): for a bpf region all of it is checked
 * before the program runs - no other member that holds write or atomic,
 * all a policy may take from others, is connected. A built-in policy
 * changes nothing but the ACL's @next and the fenced policy's ballot, so
 * its decision is made, and undone when it would fence someone: the work
 * path then makes it again. The common such case - a request for write
 * while another process that holds it is connected, under the
 * exclusive-writer rules - is told before deciding, and goes to the work
 * path at once (sacred_perm_takes_from_connected_writer()).
 *
 * The requester's new access is registered on @chg->via (or its key
 * invalidated, when it keeps nothing), its reply follows on the same send
 * queue - as in the work path, its key is valid when the reply arrives,
 * and a failed work request flushes the reply - and the completion
 * announces the change (sacred_grant_cq_done()). The MRs of losers with
 * no connection are replaced by sacred_perm_sync(). A work request that
 * cannot be posted fails the change (nothing granted) and releases the
 * connection; sacred_perm_sync() repairs the grant.
 *
 * Context: softirq, mem->cq_lock held (sacred_mem_cq_begin()).
 * Return: false if the change needs the work path: nothing was decided,
 * or a decision was undone. True if it was decided and applied up to its
 * reply (@csw says how); the caller posts the reply, then calls
 * sacred_perm_change_cq_end().
 */
bool sacred_perm_change_cq(struct sacred_region *region,
			   const struct sacred_perm_change *chg,
			     struct sacred_cq_switch *csw)
{
	struct sacred_ep *via = chg->via;
	struct sacred_peer *peer = sacred_ep_peer(via);
	struct sacred_mem *mem = region->mem;
	struct sacred_acl_entry *self;
	struct sacred_grant *grant;
	u64 ballot;
	int ret = 0;

	lockdep_assert_held(&mem->cq_lock);
	if (peer->cq_grant || sacred_ep_probing(via))
		return false;
	self = xa_load(&region->acl, chg->requester);
	grant = xa_load(&peer->grants, region->id);
	if (!self || !grant || !grant->mr || !grant->regs ||
	    grant->regs >= SACRED_KEY_REGS_MAX || grant->access != self->cur)
		return false;
	if (!sacred_policy_undoable(region->policy) &&
	    sacred_perm_fences(region, chg->requester, SACRED_WRITE_BITS))
		return false;
	if (sacred_perm_takes_from_connected_writer(region, chg))
		return false;

	ballot = region->ballot;
	csw->ev.reason = sacred_policy_decide(region, chg);
	trace_sacred_change_decide(region, chg, csw->ev.reason, true);
	if (!csw->ev.reason && sacred_perm_fences(region, chg->requester, 0)) {
		if (WARN_ON_ONCE(!sacred_policy_undoable(region->policy)))
			return false;	/* cannot happen: checked above */
		sacred_policy_undo(region, ballot);
		return false;
	}

	peer->cq_changes++;
	csw->region = region;
	csw->grant = grant;
	csw->ev.chg = *chg;
	csw->ev.err = 0;
	if (csw->ev.reason) {
		csw->ev.epoch = region->epoch;
		return true;
	}

	csw->ev.epoch = region->epoch + 1;
	if (self->next != grant->access) {
		/* Set before the post: its completion may run at once. */
		grant->cq_old_cur = self->cur;
		grant->cq_ev = csw->ev;
		peer->cq_grant = grant;
		ret = sacred_perm_cq_post(grant, via, self->next);
		if (ret) {
			/* Maybe posted in part: the MR's state is unknown. */
			grant->cq_failed = true;
			sacred_grant_cq_repair_later(grant);
			sacred_ep_release(via);
		} else {
			grant->access = self->next;
			mem->cq_wrs++;
			csw->region = NULL;	/* the completion announces it */
		}
	}
	sacred_perm_cq_losers(region, chg->requester);
	/* As sacred_perm_apply(): a failed change never widens access. */
	sacred_perm_commit(region, ret);
	csw->ev.err = ret;
	return true;
}

/**
 * sacred_perm_change_cq_end() - announce a CQ-path change after its reply
 * @csw: what sacred_perm_change_cq() set up
 *
 * Raises the change's event, unless its work request's completion does.
 *
 * Context: softirq, mem->cq_lock held.
 */
void sacred_perm_change_cq_end(struct sacred_cq_switch *csw)
{
	if (csw->region)
		sacred_notify_perm(csw->region, &csw->ev, GFP_ATOMIC);
}

/**
 * sacred_perm_attach() - make a process's MR match its current access
 * @peer: the process
 * @region: the region; @peer must be in its ACL
 * @via: @peer's endpoint, to post on
 * @grantp: the grant, or NULL when the process holds no access now
 *
 * Context: mem->lock held.
 * Return: 0 or a negative errno.
 */
int sacred_perm_attach(struct sacred_peer *peer, struct sacred_region *region,
		       struct sacred_ep *via, struct sacred_grant **grantp)
{
	struct sacred_acl_entry *e = xa_load(&region->acl, peer->process_id);
	struct sacred_grant *grant;
	int ret;

	*grantp = NULL;
	sacred_perm_sync(region->mem);
	if (!e || !e->cur)
		return 0;

	grant = sacred_grant_get(peer, region);
	if (IS_ERR(grant))
		return PTR_ERR(grant);
	if (grant->access != e->cur) {
		ret = sacred_grant_register(grant, via, e->cur);
		if (ret)
			return ret;
	}
	*grantp = grant;
	return 0;
}

static void sacred_perm_free_ops(struct sacred_region *region)
{
	if (!region->ops)
		return;
	sacred_mem_uncharge(region->mem,
			    array_size(region->ops_cap, sizeof(*region->ops)));
	kvfree(region->ops);
	region->ops = NULL;
	region->ops_cap = 0;
}

/**
 * sacred_perm_set_acl() - replace a region's ACL
 * @region: the region
 * @acl: the new ACL: &struct sacred_acl_entry by process id, with @max
 *	set; the entries are moved into the region, @acl is left empty
 * @extack: where to explain a refusal
 *
 * A process that stays keeps what it holds within its new @max (on a
 * static or swmr region, where the ACL is the access, what a new member
 * would get); a new one gets the policy's initial access; a
 * process that leaves loses everything. Losses are applied, with fences,
 * before this returns.
 *
 * Context: mem->lock held.
 * Return: 0 or a negative errno, with an extack message.
 */
int sacred_perm_set_acl(struct sacred_region *region, struct xarray *acl,
			struct netlink_ext_ack *extack)
{
	const struct sacred_policy_ops *pol = sacred_policy(region->policy);
	struct sacred_switch sw = { .region = region };
	struct sacred_acl_entry *e, *old;
	unsigned int nr = 0;
	struct sacred_op *ops;
	unsigned long pid;
	int writers = 0;

	sacred_perm_sync(region->mem);
	xa_for_each(acl, pid, e) {
		nr++;
		old = xa_load(&region->acl, pid);
		if (pol->acl_is_access || !old)
			e->cur = pol->initial(e->max);
		else
			e->cur = old->cur & e->max;
		if (e->max & SACRED_ACCESS_WRITE)
			writers++;
	}
	if (region->policy == SACRED_POLICY_SWMR && writers > 1) {
		NL_SET_ERR_MSG(extack, "an swmr region has at most one writer");
		return -EINVAL;
	}

	/*
	 * Room for the newcomers first: past this point nothing fails. The
	 * ops fit the old ACL's losers now and the new one's later.
	 */
	nr = max3(nr, region->nr_acl, 1U);
	ops = kvcalloc(nr, sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return -ENOMEM;
	xa_for_each(acl, pid, e) {
		if (xa_load(&region->acl, pid))
			continue;
		if (xa_reserve(&region->acl, pid, GFP_KERNEL)) {
			xa_for_each(acl, pid, e)
				if (!xa_load(&region->acl, pid))
					xa_release(&region->acl, pid);
			kvfree(ops);
			return -ENOMEM;
		}
	}

	/* What each current member keeps, then take the rest away. */
	xa_for_each(&region->acl, pid, old) {
		e = xa_load(acl, pid);
		old->next = e ? e->cur : 0;
	}
	sacred_perm_free_ops(region);
	region->ops = ops;
	region->ops_cap = nr;
	sacred_mem_charge(region->mem, array_size(nr, sizeof(*ops)));
	sacred_perm_settle(region, NULL, &sw);
	sacred_perm_settle_end(&sw);	/* no registration: cannot fail */

	/* Install: members that leave go, the others take their new entry. */
	xa_for_each(&region->acl, pid, old) {
		if (xa_load(acl, pid))
			continue;
		xa_erase(&region->acl, pid);
		sacred_mem_uncharge(region->mem, sizeof(*old));
		kfree(old);
	}
	WRITE_ONCE(region->nr_acl, 0);
	region->last_writer = 0;
	xa_for_each(acl, pid, e) {
		xa_erase(acl, pid);
		WRITE_ONCE(region->nr_acl, region->nr_acl + 1);
		if (e->cur & SACRED_WRITE_BITS)
			region->last_writer = pid;
		/* The slot exists (reserved or in use): this cannot fail. */
		old = xa_store(&region->acl, pid, e, GFP_KERNEL);
		if (WARN_ON_ONCE(xa_is_err(old))) {
			kfree(e);
			continue;
		}
		sacred_mem_charge(region->mem, sizeof(*e));
		if (old) {
			sacred_mem_uncharge(region->mem, sizeof(*old));
			kfree(old);
		}
	}
	region->epoch++;
	return 0;
}

/**
 * sacred_perm_region_revoke_all() - free every grant on a region
 * @region: the region, about to be destroyed
 *
 * Every process holding access on it is fenced first, so its memory can
 * be freed.
 *
 * Context: mem->lock held.
 */
void sacred_perm_region_revoke_all(struct sacred_region *region)
{
	struct sacred_peer *peer;
	struct sacred_grant *grant;
	struct sacred_acl_entry *e;
	unsigned long pid;

	sacred_perm_sync(region->mem);
	xa_for_each(&region->mem->peers, pid, peer) {
		grant = xa_load(&peer->grants, region->id);
		if (grant)
			sacred_grant_free(grant);
	}
	xa_for_each(&region->acl, pid, e) {
		xa_erase(&region->acl, pid);
		sacred_mem_uncharge(region->mem, sizeof(*e));
		kfree(e);
	}
	sacred_perm_free_ops(region);
}

/**
 * sacred_perm_fill() - put a decided change into a netlink message
 * @skb: the message, its header put (netlink.c)
 * @region: the region
 * @ev: the change, its decision and its outcome
 *
 * Reads nothing of @region that a change alters: an event may be raised
 * after the change, from its registration's completion.
 *
 * Return: 0, or -EMSGSIZE if it does not fit: the caller frees the
 * message.
 */
int sacred_perm_fill(struct sk_buff *skb, struct sacred_region *region,
		     const struct sacred_perm_event *ev)
{
	const struct sacred_perm_change *chg = &ev->chg;

	if (nla_put_u32(skb, SACRED_ATTR_MEM_ID, region->mem->id) ||
	    nla_put_u32(skb, SACRED_ATTR_REGION_ID, region->id) ||
	    nla_put_u32(skb, SACRED_ATTR_PROCESS_ID, chg->requester) ||
	    nla_put_u32(skb, SACRED_ATTR_ACCESS, chg->access) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_BALLOT, chg->ballot,
			      SACRED_ATTR_PAD) ||
	    nla_put_u32(skb, SACRED_ATTR_TARGET, chg->target) ||
	    nla_put_u32(skb, SACRED_ATTR_REGION_EPOCH, ev->epoch) ||
	    (ev->reason &&
	     nla_put_u32(skb, SACRED_ATTR_REFUSE_REASON, ev->reason)) ||
	    (ev->err && nla_put_u32(skb, SACRED_ATTR_PERM_ERROR, -ev->err)))
		return -EMSGSIZE;
	return 0;
}
