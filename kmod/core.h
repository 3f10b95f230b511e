/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - permission-managed RDMA memory: the module's floor.
 *
 * The types every layer shares, the bounds they are built with, and the
 * globals of core.c. Each file's own calls are declared in a header of
 * its own (ep.h, perm.h, ...), which includes this one; a file includes
 * the headers of the files it calls, and those are all below it:
 *
 *   core, notify             the floor; events go up through notify.h's
 *                            table of callbacks
 *   auth, bpf, ep, peer      keys, programs, endpoints, peers
 *   policy                   what a change may do (calls bpf)
 *   perm                     grants, MRs, the permission switch
 *   region, request          regions; what processes send
 *   mem                      memory instances
 *   dev                      RDMA devices
 *   netlink                  the control plane
 *   main                     the module's init and exit
 *
 * scripts/check-kmod-layers checks that no file calls or includes one
 * above it.
 *
 * Objects and who owns them:
 *   struct sacred_dev  - one per RDMA device, created and destroyed by the
 *                        ib_client callbacks in dev.c;
 *   struct sacred_mem  - a memory instance (mem.c), bound to one port of a
 *                        sacred_dev and listening with rdma_cm;
 *   struct sacred_region - memory of an instance that peers access with
 *                        one-sided RDMA (region.c), with its ACL;
 *   struct sacred_peer - a process known to an instance: its protection
 *                        domain, its grants and its current connection
 *                        (peer.c); lives until the instance goes;
 *   struct sacred_ep   - an endpoint: the instance's end of one rdma_cm
 *                        connection of a peer - its QP, CQ and buffers
 *                        (ep.c); "conn" is the library's word, for the
 *                        process's end;
 *   struct sacred_grant - the fast-registration MR that gives one peer its
 *                        access to one region (perm.c);
 *   struct sacred_region_prog - the eBPF program that decides for a region
 *                        whose policy is bpf (bpf.c).
 *
 * Locking, outermost first:
 *   sacred_lock - a mutex; serialises the control plane: the device list,
 *	the instance table, region tables and every netlink command;
 *   mem->lock - a mutex per instance; serialises everything that changes
 *	permissions (ACLs, grants, MRs, fences) and the peer table. Request
 *	work items take it; netlink takes it inside sacred_lock. Always
 *	through sacred_mem_lock() and sacred_mem_unlock(), which say so in
 *	@mem->lock_held;
 *   mem->cq_lock - a spinlock per instance, the only lock of the CQ
 *	path: a request answered in its receive completion (request.c) when
 *	it needs no sleeping step, taken only while nobody holds mem->lock
 *	(sacred_mem_cq_begin()). Whoever holds mem->lock excludes the
 *	CQ path; whoever holds mem->cq_lock with !@mem->lock_held
 *	excludes every holder of mem->lock. So what a change decides and
 *	applies - ACL entries, a region's epoch, ballot and writer count, a
 *	grant's access and key, a peer's counters - is written under
 *	either, and read under either. A work request the CQ path posted
 *	for a change completes after the lock is dropped: its completion
 *	handler takes mem->cq_lock, and whoever takes mem->lock waits for
 *	it, and replaces the MRs the CQ path left (sacred_perm_sync()),
 *	before touching a grant, an MR or an ACL.
 * Completion handlers and rdma_cm event handlers take no mutex: they
 * answer what the CQ path may, and queue the rest as work. An
 * instance's connect requests are answered in order by
 * one work item of its own (request.c), each under mem->lock and then the
 * new id's handler lock, so a fence holding mem->lock - waiting for a
 * process's QP, up to SACRED_WR_TIMEOUT_MS - delays that instance's
 * connects (one kworker waits), never rdma_cm's (ib_cm's) shared
 * workqueue nor another instance's work. No work item takes sacred_lock,
 * so the control plane may flush sacred_wq while holding it.
 */
#ifndef _SACRED_CORE_H
#define _SACRED_CORE_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/atomic.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <linux/sacred.h>

extern struct mutex sacred_lock;

/*
 * How long a LOCAL_INV or REG_MR on a process's QP may take before the
 * connection is fenced. They run in microseconds, but they complete in
 * order behind the replies on the same send queue, and how long a reply
 * may be retried is the process's to say: its connect request sets our
 * QP's retry counts (up to 6 receiver-not-ready retries; request.c refuses
 * the endless 7), and its own QP the RNR timer (up to 655 ms a retry). A
 * process that posts no receive buffer would hold mem->lock - the
 * instance, and every netlink command on it - for seconds per reply
 * queued on a NIC, and for ever on rxe in 6.1 (a reply RNR-NAKed with a
 * registration queued behind it is retried once, then never). Past this
 * bound the process is treated as gone: its QP is moved to the error
 * state, which flushes the stuck reply and the work request behind it,
 * and the MR is replaced like after any flush. The same bound ends a
 * connection whose liveness probe goes unanswered (ep.c).
 */
#define SACRED_WR_TIMEOUT_MS	1000

/*
 * Our QPs' local ACK timeout, 4.096 us << 16 = 268 ms: a reply lost on
 * the wire is sent again after that, three times within
 * SACRED_WR_TIMEOUT_MS. rdma_cm's own choice for RoCE is 2.1 s (packet
 * life time 18, plus one, in 6.1): a single lost frame would outlast the
 * bound above, and the process's wait for the reply.
 */
#define SACRED_ACK_TIMEOUT	16

/*
 * An instance's listen backlog, and the most connect requests it holds
 * waiting for their answer (request.c): past that, refused at once.
 */
#define SACRED_LISTEN_BACKLOG	128

/**
 * struct sacred_dev - an RDMA device sacred is attached to
 * @list: entry in the device list, under sacred_lock
 * @ibdev: the device; valid until dev.c's remove callback returns
 */
struct sacred_dev {
	struct list_head list;
	struct ib_device *ibdev;
};

struct crypto_shash;

/**
 * struct sacred_auth - an instance's master key, as HMAC transforms
 * @master: HMAC-SHA256 keyed with the master key
 * @proc: HMAC-SHA256 keyed, at each check, with the process's key
 */
struct sacred_auth {
	struct crypto_shash *master;
	struct crypto_shash *proc;
};

/**
 * struct sacred_mem - a memory instance
 * @id: host-unique id, the key of the instance table
 * @sdev: device the instance lives on
 * @port: RDMA port number on @sdev
 * @addr: address and rdma_cm port it listens on
 * @state: &enum sacred_mem_state
 * @listen_id: the rdma_cm listener; NULL while down
 * @regions: the instance's regions by id
 * @mem_cap: bytes of region memory the instance may allocate
 * @mem_used: bytes of region memory allocated
 * @nr_regions: number of regions
 * @auth: HMAC transforms of the master key (auth.c); none when
 *	@auth.master is NULL
 * @lock: see the locking rules above
 * @cq_lock: see the locking rules above
 * @lock_held: @lock is held (under @cq_lock)
 * @cq_wrs: work requests the CQ path posted for changes that have
 *	not completed (under @cq_lock; perm.c)
 * @cq_repairs: grants whose MR sacred_perm_sync() must replace: a
 *	failed work request's, a loser's with no connection (under
 *	@cq_lock; perm.c)
 * @cq_wq: woken when @cq_wrs drops to 0
 * @peers: processes known to the instance, by process id (under @lock)
 * @nr_peers: entries in @peers (under @lock; at most SACRED_MAX_PEERS)
 * @fenced: fenced connections whose release is deferred (ep.c; under
 *	@lock)
 * @connreq_lock: guards @connreqs and @nr_connreqs
 * @connreqs: connect requests waiting for their answer (request.c)
 * @nr_connreqs: entries in @connreqs (at most SACRED_LISTEN_BACKLOG)
 * @connreq_work: answers @connreqs, in order, on sacred_wq
 * @meta: bytes of kernel memory the module holds for the instance besides
 *	region memory: the instance itself, its regions' descriptors,
 *	scatterlists and ACL entries, its peers, their connections
 *	(descriptor and message buffer) and their grants, each counted as
 *	the slab allocator sizes it (sacred_mem_charge())
 * @nr_conns: connections with a QP and CQ on the device
 * @nr_mrs: fast-registration MRs of the instance's peers
 * @mr_pages: page-list entries those MRs were allocated for (what the
 *	device sizes an MR's translation table by)
 */
struct sacred_mem {
	u32 id;
	struct sacred_dev *sdev;
	u32 port;
	struct sockaddr_storage addr;
	u8 state;
	struct rdma_cm_id *listen_id;
	struct xarray regions;
	u64 mem_cap;
	u64 mem_used;
	u32 nr_regions;
	struct sacred_auth auth;
	struct mutex lock;	/* see "Locking" above */
	spinlock_t cq_lock;	/* see "Locking" above */
	bool lock_held;
	unsigned int cq_wrs;
	struct list_head cq_repairs;
	wait_queue_head_t cq_wq;
	struct xarray peers;
	u32 nr_peers;
	struct list_head fenced;
	spinlock_t connreq_lock;	/* guards the two below */
	struct list_head connreqs;	/* connect requests to answer */
	unsigned int nr_connreqs;
	struct work_struct connreq_work;	/* answers them, in order */
	atomic64_t meta;
	atomic_t nr_conns;
	atomic_t nr_mrs;
	atomic64_t mr_pages;
};

/**
 * sacred_mem_lock() - take an instance's mutex, and keep the CQ path out
 * @mem: the instance
 *
 * Context: process context; sleeps.
 */
static inline void sacred_mem_lock(struct sacred_mem *mem)
{
	mutex_lock(&mem->lock);
	spin_lock_bh(&mem->cq_lock);
	mem->lock_held = true;
	spin_unlock_bh(&mem->cq_lock);
}

/**
 * sacred_mem_unlock() - drop what sacred_mem_lock() took
 * @mem: the instance
 */
static inline void sacred_mem_unlock(struct sacred_mem *mem)
{
	spin_lock_bh(&mem->cq_lock);
	mem->lock_held = false;
	spin_unlock_bh(&mem->cq_lock);
	mutex_unlock(&mem->lock);
}

/**
 * sacred_mem_cq_begin() - enter the CQ path, if mem->lock is free
 * @mem: the instance
 *
 * Context: softirq (a CQ's completion handler).
 * Return: true with @mem->cq_lock held: nothing the CQ path reads
 * changes until sacred_mem_cq_end(); false if mem->lock is held.
 */
static inline bool sacred_mem_cq_begin(struct sacred_mem *mem)
{
	spin_lock(&mem->cq_lock);
	if (!mem->lock_held)
		return true;
	spin_unlock(&mem->cq_lock);
	return false;
}

static inline void sacred_mem_cq_end(struct sacred_mem *mem)
{
	spin_unlock(&mem->cq_lock);
}

/*
 * Memory accounting: what a kmalloc() of @size really takes from the slab,
 * added to or taken from @mem's total. kmalloc_size_roundup() and not
 * ksize(): the latter unpoisons the whole object under KASAN. Index nodes
 * of the xarrays are not counted (one 576-byte node per 64 neighbouring
 * ids, shared by all of them).
 */
static inline void sacred_mem_charge(struct sacred_mem *mem, size_t size)
{
	atomic64_add(kmalloc_size_roundup(size), &mem->meta);
}

static inline void sacred_mem_uncharge(struct sacred_mem *mem, size_t size)
{
	atomic64_sub(kmalloc_size_roundup(size), &mem->meta);
}

/* What a policy takes from the members a change does not favour. */
#define SACRED_WRITE_BITS (SACRED_ACCESS_WRITE | SACRED_ACCESS_ATOMIC)

/**
 * struct sacred_acl_entry - a process's place in a region's ACL
 * @max: the most it may hold (&enum sacred_access), set by the admin
 * @cur: what the policy gives it now; always a subset of @max
 * @next: scratch for a change being decided: @cur after it
 */
struct sacred_acl_entry {
	u32 max;
	u32 cur;
	u32 next;
};

struct sacred_op;

/**
 * struct sacred_region - a region of a memory instance
 * @id: id, unique within @mem
 * @mem: the instance
 * @size: bytes
 * @policy: &enum sacred_policy
 * @epoch: permission epoch, bumped by every permission change
 * @nr_chunks: physically contiguous chunks in @sgt
 * @sgt: the chunks, DMA-mapped for @mem's device when @mapped
 * @mapped: @sgt is DMA-mapped
 * @mr_page_size: page size the MRs map the region with: the largest
 *	power of two every chunk is a multiple of (2 MiB at best)
 * @mr_pages: MR pages the region needs at @mr_page_size
 * @acl: &struct sacred_acl_entry by process id (under mem->lock)
 * @nr_acl: entries in @acl
 * @nr_writers: members of @acl holding write, counted as a decision starts
 *	(sacred_policy_decide(), under mem->lock): what the "bpf" policy's
 *	context tells its program
 * @writer: the lowest process id among them, 0 if none
 * @last_writer: a member whose @cur held write or atomic when access
 *	was last applied (a change, a new ACL), 0 if none: perm.c's CQ
 *	path asks whether it is connected before deciding a request that
 *	would take write from it. Access taken away since (a repair, a
 *	fenced member that left) leaves it stale, which sends such a
 *	request to the work path for nothing, and costs nothing else
 * @raced: revokes of a connected process whose QP had received a packet
 *	sent after its latest request by the end of the fence
 *	(sacred_ep_raced()): every revoke that tore a write, and more
 * @ballot: highest ballot granted on a fenced region (under mem->lock)
 * @tag: fixed at creation, sent in every reply about the region: tells
 *	processes one incarnation of a region id from another
 * @prog: the program deciding for policy %SACRED_POLICY_BPF, else NULL
 *	(bpf.c; replaced under mem->lock and sacred_lock)
 * @ops: room for a change's revocations, one per ACL member (perm.c;
 *	sized with the ACL, so that no change allocates)
 * @ops_cap: entries @ops has room for
 */
struct sacred_region {
	u32 id;
	struct sacred_mem *mem;
	u64 size;
	u8 policy;
	u32 epoch;
	unsigned int nr_chunks;
	struct sg_table sgt;
	bool mapped;
	u32 mr_page_size;
	u32 mr_pages;
	struct xarray acl;
	u32 nr_acl;
	u32 nr_writers;
	u32 writer;
	u32 last_writer;
	u64 ballot;
	u64 raced;
	u64 tag;
	struct sacred_region_prog *prog;
	struct sacred_op *ops;
	u32 ops_cap;
};

struct sacred_ep;

/**
 * struct sacred_perm_change - a changePermission request
 * @requester: process id of the process asking
 * @access: access it asks for (&enum sacred_access)
 * @ballot: ballot of a grant on a fenced region
 * @target: process whose write a revoke-only request takes away
 * @via: the requester's endpoint, or NULL for an admin's PERM_SET
 */
struct sacred_perm_change {
	u32 requester;
	u32 access;
	u64 ballot;
	u32 target;
	struct sacred_ep *via;
};

/**
 * struct sacred_perm_event - a decided changePermission, as announced
 * @chg: the request
 * @reason: 0 if the policy accepted it, else why it refused it
 * @err: 0, or the negative errno of an accepted change that could not be
 *	applied in full
 * @epoch: the region's epoch once the change was decided
 */
struct sacred_perm_event {
	struct sacred_perm_change chg;
	u32 reason;
	int err;
	u32 epoch;
};

/**
 * struct sacred_peer - a process known to an instance
 * @mem: the instance
 * @process_id: its id
 * @pd: its protection domain: its MRs and QPs live here and nowhere else,
 *	so no other process's QP can use its keys
 * @grants: &struct sacred_grant by region id
 * @ep: the endpoint of its live connection, or NULL (under mem->lock)
 * @nr_mrs: MRs it holds
 * @requests: requests received
 * @refused: requests refused by a policy
 * @fences: times its connection was fenced
 * @connects: connections accepted
 * @last_counter: highest proof counter accepted (instances with a key)
 * @raced: its revokes counted in the region's @raced
 * @cq_changes: its changes decided and applied in their receive
 *	completion (perm.c's CQ path)
 * @cq_grant: its grant whose work request from the CQ path has not
 *	completed, or failed and is not repaired yet; NULL if none: at most
 *	one per peer, so its send queue has room for it (under
 *	@mem->cq_lock)
 * @unrevoked: the device failed to deregister one of its MRs, whose key
 *	may still be valid: its connection was fenced, it is refused from
 *	then on, and @pd is never freed (the MR holds it)
 */
struct sacred_peer {
	struct sacred_mem *mem;
	u32 process_id;
	struct ib_pd *pd;
	struct xarray grants;
	struct sacred_ep *ep;
	u32 nr_mrs;
	u64 requests;
	u64 refused;
	u64 fences;
	u64 connects;
	u64 last_counter;
	u64 raced;
	u64 cq_changes;
	struct sacred_grant *cq_grant;
	bool unrevoked;
};

/**
 * struct sacred_grant - one peer's MR over one region
 * @peer: the peer
 * @region: the region
 * @mr: the fast-registration MR; allocated once, re-registered for every
 *	change, replaced only when its key space is used up or its state is
 *	unknown
 * @access: access the MR is registered with; 0: the MR is FREE
 *	(invalidated or fresh)
 * @regs: registrations since @mr was allocated; the key's low byte
 *	advances by one with each, so no key repeats within 255; while 0,
 *	@mr has no page list yet (perm.c maps the region into it once)
 * @cq_wr_cqe: completion of the work request the CQ path posted for a
 *	change of this grant's process (registration or invalidation)
 * @cq_old_cur: what the ACL entry held before that change
 * @cq_failed: that work request failed: @mr's state is unknown and the
 *	ACL entry's @cur too wide until sacred_perm_sync() repairs both
 * @cq_link: entry in @mem->cq_repairs, or empty
 * @cq_ev: that change's event, raised when the work request completes
 */
struct sacred_grant {
	struct sacred_peer *peer;
	struct sacred_region *region;
	struct ib_mr *mr;
	u32 access;
	u32 regs;
	struct ib_cqe cq_wr_cqe;
	u32 cq_old_cur;
	bool cq_failed;
	struct list_head cq_link;
	struct sacred_perm_event cq_ev;
};

/* Live-object counters: every one must be zero after module exit. */
struct sacred_counters {
	atomic_t devs;
	atomic_t mems;
	atomic_t regions;
	atomic_t peers;
	atomic_t conns;
	atomic_t mrs;
};

extern struct workqueue_struct *sacred_wq;

extern struct sacred_counters sacred_live;

#endif /* _SACRED_CORE_H */
