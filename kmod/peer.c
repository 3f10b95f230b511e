// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - peers: the processes an instance knows.
 *
 * This file owns struct sacred_peer. A peer is created by its first
 * connect request (request.c) and lives until its instance goes. It owns
 * a protection domain of its own: its MRs (perm.c) and its endpoints'
 * QPs (ep.c) live there and nowhere else, so a key of one process is
 * useless on another process's QP - a process that guesses or learns
 * another's rkey gets a remote access error. Its grants survive
 * reconnections, so MRs are not churned by a process that comes back.
 *
 * sacred_peer_fill() says what a peer's netlink messages carry. It sits
 * beside ep.c, below perm.c: of the module it uses only core.c's counters.
 */
#include <linux/slab.h>
#include "peer.h"

/*
 * Processes an instance keeps. Per instance: a peer outlives its
 * connections (its grants and, on a keyed instance, its replay counter
 * must), so anybody who can reach a keyless instance can fill its table
 * with made-up process ids - that instance only, never another one.
 */
#define SACRED_MAX_PEERS	4096

/**
 * sacred_peer_ep() - the endpoint of a peer's live connection
 * @peer: the peer
 *
 * Context: mem->lock held.
 * Return: the endpoint or NULL.
 */
struct sacred_ep *sacred_peer_ep(struct sacred_peer *peer)
{
	return peer->ep;
}

/**
 * sacred_peer_get() - look up, and maybe create, the peer of a process
 * @mem: the instance
 * @process_id: the process
 * @create: create it (with its protection domain) if it is unknown
 *
 * Context: mem->lock held.
 * Return: the peer, NULL if unknown and !@create, or an ERR_PTR.
 */
struct sacred_peer *sacred_peer_get(struct sacred_mem *mem, u32 process_id,
				    bool create)
{
	struct sacred_peer *peer;
	int ret;

	lockdep_assert_held(&mem->lock);
	peer = xa_load(&mem->peers, process_id);
	if (peer || !create)
		return peer;
	if (mem->nr_peers >= SACRED_MAX_PEERS)
		return ERR_PTR(-ENOSPC);

	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return ERR_PTR(-ENOMEM);
	peer->mem = mem;
	peer->process_id = process_id;
	xa_init(&peer->grants);
	peer->pd = ib_alloc_pd(mem->sdev->ibdev, 0);
	if (IS_ERR(peer->pd)) {
		ret = PTR_ERR(peer->pd);
		goto err_free;
	}
	ret = xa_insert(&mem->peers, process_id, peer, GFP_KERNEL);
	if (ret)
		goto err_pd;
	WRITE_ONCE(mem->nr_peers, mem->nr_peers + 1);
	sacred_mem_charge(mem, sizeof(*peer));
	atomic_inc(&sacred_live.peers);
	return peer;

err_pd:
	ib_dealloc_pd(peer->pd);
err_free:
	kfree(peer);
	return ERR_PTR(ret);
}

/**
 * sacred_mem_peers_free() - free every peer of an instance
 * @mem: the instance; its connections and regions must be gone already,
 *	so no peer holds a grant
 */
void sacred_mem_peers_free(struct sacred_mem *mem)
{
	struct sacred_peer *peer;
	unsigned long pid;

	xa_for_each(&mem->peers, pid, peer) {
		WARN_ON(peer->ep || !xa_empty(&peer->grants));
		xa_erase(&mem->peers, pid);
		xa_destroy(&peer->grants);
		/* An MR the device would not let go holds the PD: leak it. */
		if (!peer->unrevoked)
			ib_dealloc_pd(peer->pd);
		kfree(peer);
		WRITE_ONCE(mem->nr_peers, mem->nr_peers - 1);
		sacred_mem_uncharge(mem, sizeof(*peer));
		atomic_dec(&sacred_live.peers);
	}
	xa_destroy(&mem->peers);
}

/**
 * sacred_peer_fill() - put a peer's attributes into a netlink message
 * @skb: the message, its header put (netlink.c)
 * @peer: the peer
 *
 * Context: mem->lock held.
 * Return: 0, or -EMSGSIZE if they do not fit: the caller cancels the
 * message.
 */
int sacred_peer_fill(struct sk_buff *skb, struct sacred_peer *peer)
{
	if (nla_put_u32(skb, SACRED_ATTR_MEM_ID, peer->mem->id) ||
	    nla_put_u32(skb, SACRED_ATTR_PROCESS_ID, peer->process_id) ||
	    nla_put_u8(skb, SACRED_ATTR_PEER_CONNECTED, !!peer->ep) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_PEER_REQUESTS, peer->requests,
			      SACRED_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_PEER_REFUSED, peer->refused,
			      SACRED_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_PEER_FENCES, peer->fences,
			      SACRED_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_PEER_CONNECTS, peer->connects,
			      SACRED_ATTR_PAD) ||
	    nla_put_u32(skb, SACRED_ATTR_PEER_MRS, peer->nr_mrs) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_PEER_RACED, peer->raced,
			      SACRED_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_PEER_CQ_CHANGES,
			      peer->cq_changes, SACRED_ATTR_PAD))
		return -EMSGSIZE;
	return 0;
}
