/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * sacred - permission-managed RDMA memory: the userspace ABI.
 *
 * This header is the only one shared by sacred.ko and userspace. It owns:
 *   - the generic netlink family "sacred": commands, attributes, the
 *     multicast group and the enumerations carried in attributes;
 *   - the wire: what a process and a memory instance exchange over
 *     rdma_cm and RC SENDs (connect data, requests, replies).
 *
 * Rules for changing it: append only; never renumber; a new attribute is
 * optional for old userspace; bump SACRED_GENL_VERSION when the meaning of
 * an existing command changes. All integers in netlink attributes are in
 * host byte order, as everywhere in netlink.
 *
 * Attribute space: one flat space (like devlink). Nested attributes reuse
 * it: SACRED_ATTR_DEV_PORTS holds SACRED_ATTR_PORT nests, each holding
 * SACRED_ATTR_PORT_* attributes.
 */
#ifndef _UAPI_LINUX_SACRED_H
#define _UAPI_LINUX_SACRED_H

#include <linux/types.h>

#define SACRED_GENL_NAME		"sacred"
#define SACRED_GENL_VERSION		1
#define SACRED_GENL_MCGRP_EVENTS	"events"

/* Longest name of an RDMA device or netdev, with its NUL (IB_DEVICE_NAME_MAX). */
#define SACRED_NAME_MAX			64

/**
 * enum sacred_cmd - generic netlink commands of the "sacred" family
 * @SACRED_CMD_UNSPEC: invalid
 * @SACRED_CMD_DEV_GET: get one RDMA device the module is attached to
 *	(by %SACRED_ATTR_DEV_INDEX or %SACRED_ATTR_DEV_NAME), or dump all.
 *	Unprivileged.
 * @SACRED_CMD_MEM_NEW: create a memory instance on a device/port, listening
 *	with rdma_cm on an address and TCP-space port. Needs CAP_NET_ADMIN.
 *	Replies with the new instance (%SACRED_CMD_MEM_NEW, same attributes
 *	as %SACRED_CMD_MEM_GET).
 * @SACRED_CMD_MEM_DEL: destroy a memory instance by %SACRED_ATTR_MEM_ID.
 *	Needs CAP_NET_ADMIN.
 * @SACRED_CMD_MEM_GET: get one memory instance by %SACRED_ATTR_MEM_ID, or
 *	dump all. Unprivileged.
 * @SACRED_CMD_REGION_NEW: create a region in a memory instance
 *	(%SACRED_ATTR_MEM_ID, %SACRED_ATTR_REGION_SIZE, optional
 *	%SACRED_ATTR_REGION_ID, %SACRED_ATTR_REGION_POLICY and
 *	%SACRED_ATTR_REGION_TAG). Needs
 *	CAP_NET_ADMIN. Replies with the region (%SACRED_CMD_REGION_NEW).
 * @SACRED_CMD_REGION_DEL: destroy region %SACRED_ATTR_REGION_ID of
 *	instance %SACRED_ATTR_MEM_ID. Needs CAP_NET_ADMIN.
 * @SACRED_CMD_REGION_GET: get one region (%SACRED_ATTR_MEM_ID and
 *	%SACRED_ATTR_REGION_ID), or dump all, optionally only those of
 *	%SACRED_ATTR_MEM_ID. Unprivileged.
 * @SACRED_CMD_REGION_SET: replace the ACL of a region
 *	(%SACRED_ATTR_MEM_ID, %SACRED_ATTR_REGION_ID, %SACRED_ATTR_REGION_ACL).
 *	Access removed from a process is revoked before the reply. Needs
 *	CAP_NET_ADMIN.
 * @SACRED_CMD_PEER_GET: dump the processes known to the instances
 *	(optionally only those of %SACRED_ATTR_MEM_ID), connected or not.
 *	Unprivileged.
 * @SACRED_CMD_MEM_SET: change a memory instance (%SACRED_ATTR_MEM_ID):
 *	%SACRED_ATTR_MEM_STATE down (crash emulation: the listener and every
 *	connection go, regions and grants stay) or up (listen again), and/or
 *	%SACRED_ATTR_MEM_MEM_CAP (not below what is allocated). Needs
 *	CAP_NET_ADMIN. Replies with the instance.
 * @SACRED_CMD_PERM_SET: changePermission on behalf of a process
 *	(%SACRED_ATTR_MEM_ID, %SACRED_ATTR_REGION_ID, %SACRED_ATTR_PROCESS_ID,
 *	%SACRED_ATTR_ACCESS, optional %SACRED_ATTR_BALLOT and
 *	%SACRED_ATTR_TARGET): runs the region's policy exactly as a request
 *	from that process would. Needs CAP_NET_ADMIN. Also the event sent to
 *	the events group for every permission change and every refusal
 *	(with %SACRED_ATTR_REFUSE_REASON then, and with
 *	%SACRED_ATTR_PERM_ERROR for an accepted change that failed).
 * @__SACRED_CMD_MAX: internal
 * @SACRED_CMD_MAX: highest command number
 */
enum sacred_cmd {
	SACRED_CMD_UNSPEC,
	SACRED_CMD_DEV_GET,
	SACRED_CMD_MEM_NEW,
	SACRED_CMD_MEM_DEL,
	SACRED_CMD_MEM_GET,
	SACRED_CMD_REGION_NEW,
	SACRED_CMD_REGION_DEL,
	SACRED_CMD_REGION_GET,
	SACRED_CMD_REGION_SET,
	SACRED_CMD_PEER_GET,
	SACRED_CMD_PERM_SET,
	SACRED_CMD_MEM_SET,

	__SACRED_CMD_MAX,
	SACRED_CMD_MAX = __SACRED_CMD_MAX - 1
};

/**
 * enum sacred_attr - attributes of the "sacred" family
 * @SACRED_ATTR_UNSPEC: invalid
 * @SACRED_ATTR_PAD: padding for 64-bit attributes
 * @SACRED_ATTR_DEV_INDEX: u32, RDMA device index (as in `rdma dev`)
 * @SACRED_ATTR_DEV_NAME: string, RDMA device name (e.g. "rxe0")
 * @SACRED_ATTR_DEV_NODE_GUID: u64, node GUID, host byte order
 * @SACRED_ATTR_DEV_NUM_PORTS: u32, number of ports
 * @SACRED_ATTR_DEV_PORTS: nest of %SACRED_ATTR_PORT
 * @SACRED_ATTR_PORT: nest of %SACRED_ATTR_PORT_* describing one port
 * @SACRED_ATTR_PORT_INDEX: u32, port number (first port is 1)
 * @SACRED_ATTR_PORT_STATE: u8, &enum sacred_port_state
 * @SACRED_ATTR_PORT_PHYS_STATE: u8, IBTA physical port state (5 = LinkUp)
 * @SACRED_ATTR_PORT_ACTIVE_MTU: u32, active path MTU in bytes
 * @SACRED_ATTR_PORT_LINK_LAYER: u8, &enum sacred_link_layer
 * @SACRED_ATTR_PORT_NETDEV: string, netdev bound to the port (RoCE/iWARP)
 * @SACRED_ATTR_MEM_ID: u32, memory instance id (unique on this host)
 * @SACRED_ATTR_MEM_ADDR: binary, 4 (IPv4) or 16 (IPv6) bytes in network
 *	byte order: the address the instance listens on. Optional in
 *	%SACRED_CMD_MEM_NEW: by default, the IPv4 address of the port's
 *	first RoCE v2 GID.
 * @SACRED_ATTR_MEM_PORT: u16, rdma_cm port (TCP port space), host order;
 *	0 in %SACRED_CMD_MEM_NEW: any free port
 * @SACRED_ATTR_MEM_STATE: u8, &enum sacred_mem_state
 * @SACRED_ATTR_MEM_MEM_CAP: u64, bytes of region memory the instance may
 *	allocate; optional in %SACRED_CMD_MEM_NEW (default
 *	%SACRED_MEM_CAP_DEFAULT)
 * @SACRED_ATTR_MEM_MEM_USED: u64, bytes of region memory allocated
 * @SACRED_ATTR_MEM_NR_REGIONS: u32, number of regions
 * @SACRED_ATTR_REGION_ID: u32, region id, unique within its instance
 * @SACRED_ATTR_REGION_SIZE: u64, bytes; a non-zero multiple of 4096, at
 *	most %SACRED_REGION_SIZE_MAX
 * @SACRED_ATTR_REGION_POLICY: u8, &enum sacred_policy (default
 *	%SACRED_POLICY_STATIC)
 * @SACRED_ATTR_REGION_EPOCH: u32, permission epoch: bumped by every
 *	permission change on the region
 * @SACRED_ATTR_REGION_NR_CHUNKS: u32, physically contiguous chunks the
 *	region is made of (diagnostics)
 * @SACRED_ATTR_REGION_ACL: nest of %SACRED_ATTR_ACL_ENTRY
 * @SACRED_ATTR_ACL_ENTRY: nest: %SACRED_ATTR_PROCESS_ID,
 *	%SACRED_ATTR_ACCESS (the most the process may hold) and, in replies,
 *	%SACRED_ATTR_ACCESS_CUR (what it holds now)
 * @SACRED_ATTR_PROCESS_ID: u32, a process id
 * @SACRED_ATTR_ACCESS: u32, &enum sacred_access bits: 0, READ,
 *	READ|WRITE or READ|WRITE|ATOMIC
 * @SACRED_ATTR_ACCESS_CUR: u32, &enum sacred_access bits held now
 * @SACRED_ATTR_BALLOT: u64, ballot of a grant on a fenced region; in
 *	region replies: the highest ballot seen
 * @SACRED_ATTR_TARGET: u32, process id whose write a revoke-only request
 *	revokes
 * @SACRED_ATTR_REFUSE_REASON: u32, &enum sacred_refuse_reason
 * @SACRED_ATTR_PEER_CONNECTED: u8, 1 while the process is connected
 * @SACRED_ATTR_PEER_REQUESTS: u64, requests received from the process
 * @SACRED_ATTR_PEER_REFUSED: u64, its requests the policies refused
 * @SACRED_ATTR_PEER_FENCES: u64, times its connection was fenced
 * @SACRED_ATTR_PEER_CONNECTS: u64, connections it made
 * @SACRED_ATTR_PEER_MRS: u32, fast-registration MRs it holds
 * @SACRED_ATTR_MEM_KEY: binary, %SACRED_KEY_MIN..%SACRED_KEY_MAX bytes:
 *	the instance's master key (%SACRED_CMD_MEM_NEW, %SACRED_CMD_MEM_SET;
 *	empty in MEM_SET: no key). Never sent back.
 * @SACRED_ATTR_MEM_KEYED: u8, 1 when the instance has a key
 * @SACRED_ATTR_REGION_RACED: u64, revokes of a connected process whose
 *	QP had received, by the end of its fence, a packet sent after the
 *	process's latest request (or where the module cannot tell). Every
 *	revoke that tore a multi-packet write (placed it in part) is among
 *	them, and so are some that tore none: an upper bound. The module
 *	cannot see the bytes.
 * @SACRED_ATTR_PEER_RACED: u64, the same, per process
 * @SACRED_ATTR_MEM_META_BYTES: u64, bytes of kernel memory sacred.ko
 *	holds for the instance besides its regions' memory: the instance,
 *	its regions' descriptors, scatterlists and ACL entries, its
 *	processes, their connections (descriptor and message buffers) and
 *	grants, as the slab allocator sized each. Not included: what the
 *	RDMA driver allocates for the objects below, and xarray index nodes.
 * @SACRED_ATTR_MEM_NR_PEERS: u32, processes known to the instance (one
 *	protection domain each)
 * @SACRED_ATTR_MEM_NR_CONNS: u32, their connections (one RC QP and one CQ
 *	each), counting those being torn down
 * @SACRED_ATTR_MEM_NR_MRS: u32, fast-registration MRs (one per grant)
 * @SACRED_ATTR_MEM_MR_PAGES: u64, page-list entries of those MRs, what the
 *	driver sizes their translation tables by
 * @SACRED_ATTR_REGION_TAG: u64, an opaque value fixed at the region's
 *	creation and told to every process in its replies (&struct
 *	sacred_wire_reply.tag), so that a process can tell this region from
 *	an earlier one that had the same id - e.g. to bind signatures to one
 *	incarnation of an agreement's regions. Optional in
 *	%SACRED_CMD_REGION_NEW (give the same one on every instance a
 *	replicated region lives on); when absent, a random one. Refused in
 *	%SACRED_CMD_REGION_SET.
 * @SACRED_ATTR_PERM_ERROR: u32, a positive errno, in the
 *	%SACRED_CMD_PERM_SET event of a change the policy accepted but the
 *	instance could not apply in full (the requester got
 *	%SACRED_ST_FAILED, an admin's command that errno): access may have
 *	been revoked, nothing was granted. Absent when the change was
 *	applied or refused.
 * @SACRED_ATTR_REGION_PROG_FD: u32, a file descriptor of the caller's
 *	for an eBPF program of type BPF_PROG_TYPE_SOCKET_FILTER: the
 *	decision of a region whose policy is %SACRED_POLICY_BPF
 *	(%SACRED_CMD_REGION_NEW, %SACRED_CMD_REGION_SET; Documentation/
 *	policies.rst). The module holds its own reference to the program.
 * @SACRED_ATTR_REGION_PROG_ID: u32, in region replies and events: the
 *	kernel's id of that program (as ``bpftool prog show id`` takes it)
 * @SACRED_ATTR_PEER_CQ_CHANGES: u64, the process's changePermission
 *	requests decided and applied in the CQ handler of their receive,
 *	with no work item and no sleeping step: those that fence nobody
 *	(Documentation/permission-switch.rst)
 * @__SACRED_ATTR_MAX: internal
 * @SACRED_ATTR_MAX: highest attribute number
 */
enum sacred_attr {
	SACRED_ATTR_UNSPEC,
	SACRED_ATTR_PAD,

	SACRED_ATTR_DEV_INDEX,
	SACRED_ATTR_DEV_NAME,
	SACRED_ATTR_DEV_NODE_GUID,
	SACRED_ATTR_DEV_NUM_PORTS,
	SACRED_ATTR_DEV_PORTS,

	SACRED_ATTR_PORT,
	SACRED_ATTR_PORT_INDEX,
	SACRED_ATTR_PORT_STATE,
	SACRED_ATTR_PORT_PHYS_STATE,
	SACRED_ATTR_PORT_ACTIVE_MTU,
	SACRED_ATTR_PORT_LINK_LAYER,
	SACRED_ATTR_PORT_NETDEV,

	SACRED_ATTR_MEM_ID,
	SACRED_ATTR_MEM_ADDR,
	SACRED_ATTR_MEM_PORT,
	SACRED_ATTR_MEM_STATE,
	SACRED_ATTR_MEM_MEM_CAP,
	SACRED_ATTR_MEM_MEM_USED,
	SACRED_ATTR_MEM_NR_REGIONS,

	SACRED_ATTR_REGION_ID,
	SACRED_ATTR_REGION_SIZE,
	SACRED_ATTR_REGION_POLICY,
	SACRED_ATTR_REGION_EPOCH,
	SACRED_ATTR_REGION_NR_CHUNKS,
	SACRED_ATTR_REGION_ACL,
	SACRED_ATTR_ACL_ENTRY,
	SACRED_ATTR_PROCESS_ID,
	SACRED_ATTR_ACCESS,
	SACRED_ATTR_ACCESS_CUR,
	SACRED_ATTR_BALLOT,
	SACRED_ATTR_TARGET,
	SACRED_ATTR_REFUSE_REASON,

	SACRED_ATTR_PEER_CONNECTED,
	SACRED_ATTR_PEER_REQUESTS,
	SACRED_ATTR_PEER_REFUSED,
	SACRED_ATTR_PEER_FENCES,
	SACRED_ATTR_PEER_CONNECTS,
	SACRED_ATTR_PEER_MRS,

	SACRED_ATTR_MEM_KEY,
	SACRED_ATTR_MEM_KEYED,
	SACRED_ATTR_REGION_RACED,
	SACRED_ATTR_PEER_RACED,

	SACRED_ATTR_MEM_META_BYTES,
	SACRED_ATTR_MEM_NR_PEERS,
	SACRED_ATTR_MEM_NR_CONNS,
	SACRED_ATTR_MEM_NR_MRS,
	SACRED_ATTR_MEM_MR_PAGES,

	SACRED_ATTR_REGION_TAG,
	SACRED_ATTR_PERM_ERROR,

	SACRED_ATTR_REGION_PROG_FD,
	SACRED_ATTR_REGION_PROG_ID,

	SACRED_ATTR_PEER_CQ_CHANGES,

	__SACRED_ATTR_MAX,
	SACRED_ATTR_MAX = __SACRED_ATTR_MAX - 1
};

/**
 * enum sacred_port_state - logical port state, as IBTA (and `rdma link`)
 * @SACRED_PORT_NOP: no state change
 * @SACRED_PORT_DOWN: link down
 * @SACRED_PORT_INIT: initializing
 * @SACRED_PORT_ARMED: armed
 * @SACRED_PORT_ACTIVE: active: traffic flows
 * @SACRED_PORT_ACTIVE_DEFER: active, deferred
 */
enum sacred_port_state {
	SACRED_PORT_NOP,
	SACRED_PORT_DOWN,
	SACRED_PORT_INIT,
	SACRED_PORT_ARMED,
	SACRED_PORT_ACTIVE,
	SACRED_PORT_ACTIVE_DEFER,
};

/**
 * enum sacred_link_layer - link layer of a port
 * @SACRED_LINK_UNSPECIFIED: unknown
 * @SACRED_LINK_INFINIBAND: InfiniBand
 * @SACRED_LINK_ETHERNET: Ethernet (RoCE, including SoftRoCE)
 */
enum sacred_link_layer {
	SACRED_LINK_UNSPECIFIED,
	SACRED_LINK_INFINIBAND,
	SACRED_LINK_ETHERNET,
};

/**
 * enum sacred_mem_state - state of a memory instance
 * @SACRED_MEM_UNSPEC: not a state (so that a missing attribute is not "up")
 * @SACRED_MEM_UP: listening and serving its peers
 * @SACRED_MEM_DOWN: crashed on purpose: no listener, no connections,
 *	regions kept
 */
enum sacred_mem_state {
	SACRED_MEM_UNSPEC,
	SACRED_MEM_UP,
	SACRED_MEM_DOWN,
};

/**
 * enum sacred_policy - acceptChange policy of a region
 * @SACRED_POLICY_STATIC: no runtime change; the ACL is set by an admin
 * @SACRED_POLICY_EXCLUSIVE_WRITER: a member asking for write gets it;
 *	every other writer is demoted to read-only first (Protected Memory
 *	Paxos)
 * @SACRED_POLICY_SWMR: one owner writes, members read; every change is
 *	refused (non-equivocating broadcast)
 * @SACRED_POLICY_REVOKE_ONLY: any member may revoke the writer's write
 *	permission; nothing is ever granted back (Cheap Quorum panic)
 * @SACRED_POLICY_FENCED: a grant carries a ballot and is accepted only
 *	above the highest ballot seen (fencing token)
 * @SACRED_POLICY_BPF: an eBPF program decides (%SACRED_ATTR_REGION_PROG_FD,
 *	&struct sacred_policy_ctx); the module applies its verdict
 * @__SACRED_POLICY_MAX: internal
 * @SACRED_POLICY_MAX: highest policy number
 */
enum sacred_policy {
	SACRED_POLICY_STATIC,
	SACRED_POLICY_EXCLUSIVE_WRITER,
	SACRED_POLICY_SWMR,
	SACRED_POLICY_REVOKE_ONLY,
	SACRED_POLICY_FENCED,
	SACRED_POLICY_BPF,

	__SACRED_POLICY_MAX,
	SACRED_POLICY_MAX = __SACRED_POLICY_MAX - 1
};

/*
 * ----------------------------------------------------------------------
 * Programmable acceptChange: the context of a %SACRED_POLICY_BPF program.
 *
 * The program is of type BPF_PROG_TYPE_SOCKET_FILTER. For every request on
 * its region the module runs it over a buffer that holds one struct
 * sacred_policy_ctx, little-endian as the host is; the program reads it
 * with bpf_skb_load_bytes(skb, 0, &ctx, sizeof(ctx)) (fields added later
 * go at the end: check @size). It may use maps and bpf_ktime_get_ns()
 * (@now_ns is CLOCK_MONOTONIC at the tick's resolution, the clock of
 * bpf_ktime_get_coarse_ns(), read without touching the hardware clock).
 * It returns a verdict:
 *
 *   SACRED_VERDICT_REFUSE | SACRED_VERDICT_CODE(c)   refuse; the requester
 *	and the monitor see reason SACRED_REFUSE_PROGRAM_BASE + c
 *   SACRED_VERDICT_GRANT        the requester gets @req_access (at most its
 *	ACL maximum: more is refused with %SACRED_REFUSE_NOT_MEMBER);
 *	every other process keeps what it holds
 *   SACRED_VERDICT_GRANT_EXCLUSIVE  the same, and if @req_access includes
 *	write, every other process is first demoted to read
 *   SACRED_VERDICT_REVOKE_TARGET    @target loses write (and atomic);
 *	@req_access must be 0
 *
 * A program refusing for a reason a built-in policy has may give that
 * reason as its code (SACRED_REFUSE_STALE_BALLOT, say), so that clients
 * read SACRED_REFUSE_PROGRAM_BASE + n as reason n.
 *
 * Any other value refuses with %SACRED_REFUSE_PROGRAM_VERDICT. The program
 * only decides: the module performs the switch, revokes first, with the
 * same guarantee as for every policy. An accepted request that carries a
 * ballot above @region_ballot raises the region's ballot to it.
 * ----------------------------------------------------------------------
 */

#define SACRED_POLICY_CTX_VERSION	1

/**
 * struct sacred_policy_ctx - what a %SACRED_POLICY_BPF program decides on
 * @version: %SACRED_POLICY_CTX_VERSION
 * @size: sizeof(struct sacred_policy_ctx) as the module knows it
 * @mem_id: the memory instance
 * @region_id: the region
 * @requester: process id of the process asking (for an admin's
 *	%SACRED_CMD_PERM_SET: the process it names)
 * @cur_access: what the requester holds now (&enum sacred_access)
 * @req_access: what it asks for
 * @max_access: its ACL maximum; 0 if it is not a member
 * @target: the process a revoke names (0 when none)
 * @target_access: what @target holds now (0 if not a member)
 * @nr_writers: processes holding write on the region now
 * @writer: the lowest id among them (0 when none)
 * @epoch: the region's permission epoch
 * @from_admin: 1 for an admin's %SACRED_CMD_PERM_SET, 0 for a request on
 *	the wire
 * @ballot: the request's ballot
 * @region_ballot: the highest ballot accepted on the region so far
 * @now_ns: CLOCK_MONOTONIC_COARSE when the request is decided, in ns
 */
struct sacred_policy_ctx {
	__u32 version;
	__u32 size;
	__u32 mem_id;
	__u32 region_id;
	__u32 requester;
	__u32 cur_access;
	__u32 req_access;
	__u32 max_access;
	__u32 target;
	__u32 target_access;
	__u32 nr_writers;
	__u32 writer;
	__u32 epoch;
	__u32 from_admin;
	__u64 ballot;
	__u64 region_ballot;
	__u64 now_ns;
};

/* A %SACRED_POLICY_BPF program's return value. */
#define SACRED_VERDICT_REFUSE		0x0
#define SACRED_VERDICT_GRANT		0x1
#define SACRED_VERDICT_GRANT_EXCLUSIVE	0x2
#define SACRED_VERDICT_REVOKE_TARGET	0x3
#define SACRED_VERDICT_MASK		0xff
/* The program's own reason for a refusal, 0..0xffff. */
#define SACRED_VERDICT_CODE(c)		(((__u32)(c) & 0xffff) << 16)
#define SACRED_VERDICT_CODE_OF(v)	(((__u32)(v) >> 16) & 0xffff)

/* Region sizes: page multiples up to 16 GiB. */
#define SACRED_REGION_ALIGN		4096ULL
#define SACRED_REGION_SIZE_MAX		(16ULL << 30)
/* Region memory an instance may allocate unless told otherwise. */
#define SACRED_MEM_CAP_DEFAULT		(1ULL << 30)

/*
 * ----------------------------------------------------------------------
 * The wire: what a process and a memory instance exchange.
 *
 * Connecting. A process connects to an instance with rdma_cm (RC, TCP
 * port space, the instance's address and port), presenting struct
 * sacred_wire_conn_req as private data. The instance answers with struct
 * sacred_wire_conn_rep, or rejects with IB_CM_REJ_CONSUMER_DEFINED and
 * struct sacred_wire_conn_rej, whose reason (&enum sacred_wire_rej_reason)
 * says which check failed. The checks, in this order:
 *
 *   1. at least the 2 bytes of @version, and version SACRED_WIRE_VERSION
 *      (%SACRED_REJ_VERSION; fewer bytes: %SACRED_REJ_MALFORMED);
 *   2. exactly sizeof(struct sacred_wire_conn_req) bytes, no flag but
 *      SACRED_CONN_F_PROOF, both reserved words 0, and without that flag
 *      a zero counter and MAC (%SACRED_REJ_MALFORMED). IB and RoCE carry
 *      56 bytes behind rdma_cm's header whatever the process gave,
 *      zero-padded: a shorter request arrives as one whose remaining
 *      fields are 0 and is read so (a request of its 2 version bytes
 *      alone is process 0 without a proof). iWARP carries the length
 *      given;
 *   3. rnr_retry_count at most 6 (%SACRED_REJ_RNR_RETRY);
 *   4. fewer than 128 requests of this instance waiting for their answer
 *      (%SACRED_REJ_RESOURCES);
 *   5. the instance still up (%SACRED_REJ_DOWN);
 *   6. a keyed instance: a valid proof with a fresh counter
 *      (%SACRED_REJ_AUTH); a keyless one: no proof (%SACRED_REJ_UNKEYED);
 *   7. room for the process and memory for it (%SACRED_REJ_RESOURCES);
 *   8. the process not barred (%SACRED_REJ_UNREVOKED), and not connected
 *      already (%SACRED_REJ_DUPLICATE);
 *   9. its queue pair set up (%SACRED_REJ_RESOURCES).
 *
 * An instance that is down or gone has no listener: the CM rejects with
 * no private data (IB_CM_REJ_INVALID_SERVICE_ID on IB and RoCE).
 *
 * Connection parameters (the IB CM gives each side's QP the other side's
 * numbers). The process's initiator_depth is what it may have in flight of
 * RDMA READ and atomics: the instance grants responder_resources of
 * min(initiator_depth, the device's max_qp_rd_atom), which becomes the
 * process QP's max_rd_atomic. A process that reads or does atomics needs
 * an initiator_depth of at least 1: with 0 it may have none in flight,
 * and its READs and atomics do not run (rxe holds them for ever). The
 * instance's initiator_depth is 0 (it reads nothing of the
 * process), so the process's responder_resources may be 0. rnr_retry_count
 * is what the instance's QP retries a reply the process has no receive
 * buffer for: 0 to 6 (7, without end, is refused: step 3), which the
 * process should never need - it posts a receive buffer of at least
 * SACRED_WIRE_MSG_MAX bytes for a request's reply before it sends the
 * request. A reply that runs out of retries ends the connection. The
 * instance's rnr_retry_count is 7: the process's QP retries a request the
 * instance has no receive buffer for without end (see credits).
 * retry_count is the process's choice (7 is fine).
 *
 * Messages. Over the connection, the process SENDs requests and the
 * instance SENDs one reply to each, in order. Every message starts with
 * struct sacred_wire_hdr; every field is little-endian; a message is at
 * most SACRED_WIRE_MSG_MAX bytes (a longer one ends the connection). A
 * request is exactly struct sacred_wire_req: any other length, or a field
 * outside what its description allows, gets %SACRED_ST_INVALID. Plain
 * SENDs only: a SEND with immediate or with invalidate, or an RDMA WRITE
 * with immediate, ends the connection.
 *
 * Credits. At most the number of credits in the conn_rep may be
 * outstanding (sent but not answered); a reply gives its credit back (on
 * devices without inline sends, a moment after it arrives). A request
 * beyond the credits finds no receive buffer and waits in
 * receiver-not-ready retries, which the instance's accept makes endless,
 * until one is free: it is answered, in order. More than twice the
 * credits of replies waiting for the process to take them ends the
 * connection.
 *
 * RDMA. Regions are addressed zero-based: RDMA address 0 is the region's
 * first byte, so a READ or WRITE at offset o of a region uses remote
 * address addr + o with the rkey of the reply (addr is 0 today; use it
 * anyway). The words that compare-and-swap and fetch-and-add work on are
 * 8-byte aligned and in the memory host's byte order, as RDMA atomics
 * define them. An access the process's key does not allow is a remote
 * access error: the process's QP goes to the error state, and the
 * connection is over.
 *
 * A process whose access is revoked by someone else's request (or an
 * admin's) is fenced: its connection is broken and disconnected. It learns
 * why by reconnecting and attaching: the reply has its access and the
 * region's epoch now.
 * ----------------------------------------------------------------------
 */
#define SACRED_WIRE_VERSION	2
#define SACRED_WIRE_MSG_MAX	64

/*
 * Identity. An instance may have a master key M (netlink, never sent
 * back). Each process p then holds its own key, derived by the admin:
 *
 *	K(p) = HMAC-SHA256(M, "sacred-process-key" || le32 p)
 *
 * and proves it in its connect request: with a counter c it never used
 * before with this instance (a clock in nanoseconds will do), flags
 * SACRED_CONN_F_PROOF, counter c (le64) and
 *
 *	mac = HMAC-SHA256(K(p), "sacred-connect-v1" || le32 p || le64 c)
 *
 * (the labels without their NUL). The instance refuses (%SACRED_REJ_AUTH)
 * a request without a proof, with a wrong one, or with a counter not
 * above the last it checked from p (also one then refused as a
 * duplicate), before any queue pair exists for it. A process cannot act
 * as another: it does not hold the other's key. Give every instance its
 * own master key: a proof is bound to the key, not to the instance. An
 * instance without a key believes the process id, and refuses a request
 * with a proof (%SACRED_REJ_UNKEYED): the process expects a check that
 * would not happen.
 */
#define SACRED_KEY_MIN		16
#define SACRED_KEY_MAX		64
#define SACRED_MAC_LEN		32
#define SACRED_PROCESS_KEY_LABEL	"sacred-process-key"
#define SACRED_CONNECT_LABEL		"sacred-connect-v1"

/* struct sacred_wire_conn_req.flags */
#define SACRED_CONN_F_PROOF	0x1

/**
 * struct sacred_wire_conn_req - private data of a connect request
 * @version: %SACRED_WIRE_VERSION
 * @flags: %SACRED_CONN_F_PROOF when @counter and @mac are set (only to
 *	an instance with a key); no other flag
 * @process_id: the process's id, any value; one connection per id and
 *	instance
 * @reserved: 0
 * @counter: with a proof: never reused with this instance; else 0
 * @mac: with a proof: see "Identity" above; else 0
 *
 * 56 bytes: all the private data an IB CM connect request carries for
 * rdma_cm's TCP port space. Send all of them: see "The wire" for what
 * the instance reads of a shorter one.
 */
struct sacred_wire_conn_req {
	__le16 version;
	__le16 flags;
	__le32 process_id;
	__le32 reserved[2];
	__le64 counter;
	__u8 mac[SACRED_MAC_LEN];
};

/**
 * struct sacred_wire_conn_rep - private data of the instance's accept
 * @version: %SACRED_WIRE_VERSION
 * @flags: 0 (a process ignores flags it does not know)
 * @mem_id: id of the instance
 * @credits: requests the process may have outstanding, at least 1
 * @msg_max: largest message either side sends (%SACRED_WIRE_MSG_MAX)
 * @reserved: 0
 *
 * 16 bytes; on IB and RoCE the accept carries them zero-padded.
 */
struct sacred_wire_conn_rep {
	__le16 version;
	__le16 flags;
	__le32 mem_id;
	__le16 credits;
	__le16 msg_max;
	__le32 reserved;
};

/**
 * enum sacred_wire_rej_reason - why an instance refused a connection
 *
 * In the order the instance checks (see "The wire").
 *
 * @SACRED_REJ_VERSION: @version is not %SACRED_WIRE_VERSION
 * @SACRED_REJ_MALFORMED: private data shorter than 2 bytes; or not
 *	exactly struct sacred_wire_conn_req (iWARP only: IB and RoCE pad
 *	it); or a flag other than %SACRED_CONN_F_PROOF, a non-zero reserved
 *	word, or without that flag a non-zero counter or MAC
 * @SACRED_REJ_DUPLICATE: a connection holds this process id; it is probed,
 *	and released if found dead: try again
 * @SACRED_REJ_RESOURCES: 128 connect requests of the instance wait for
 *	their answer already, it knows 4096 processes, or it is out of
 *	memory or queue pairs
 * @SACRED_REJ_DOWN: the instance went down while the request waited (a
 *	request that comes while it is down finds no listener)
 * @SACRED_REJ_AUTH: the instance has a key and the request did not prove
 *	the process's (no proof, a wrong one, or a counter not above the
 *	last one checked)
 * @SACRED_REJ_RNR_RETRY: the request's rnr_retry_count is 7, which would
 *	make the instance's QP retry a reply the process does not take for
 *	ever; at most 6 is accepted
 * @SACRED_REJ_UNREVOKED: the device failed to deregister an MR this
 *	process held a key to, which may still be valid: the instance never
 *	lets the process run a QP in that protection domain again (refused
 *	until the instance is deleted)
 * @SACRED_REJ_UNKEYED: the request carries a proof and the instance has
 *	no key to check it with
 */
enum sacred_wire_rej_reason {
	SACRED_REJ_VERSION = 1,
	SACRED_REJ_MALFORMED,
	SACRED_REJ_DUPLICATE,
	SACRED_REJ_RESOURCES,
	SACRED_REJ_DOWN,
	SACRED_REJ_AUTH,
	SACRED_REJ_RNR_RETRY,
	SACRED_REJ_UNREVOKED,
	SACRED_REJ_UNKEYED,
};

/**
 * struct sacred_wire_conn_rej - private data of the instance's reject
 * @version: %SACRED_WIRE_VERSION
 * @reason: &enum sacred_wire_rej_reason
 *
 * 4 bytes; on IB and RoCE the reject carries them zero-padded.
 */
struct sacred_wire_conn_rej {
	__le16 version;
	__le16 reason;
};

/**
 * enum sacred_wire_op - message types
 * @SACRED_OP_ATTACH: process -> instance: learn the region's key, size,
 *	epoch and the access the process holds (struct sacred_wire_req)
 * @SACRED_OP_PERM: process -> instance: changePermission: ask for
 *	@access on the region (struct sacred_wire_req)
 * @SACRED_OP_REPLY: instance -> process: the answer to a request, with
 *	the request's cookie (struct sacred_wire_reply)
 */
enum sacred_wire_op {
	SACRED_OP_ATTACH = 1,
	SACRED_OP_PERM,
	SACRED_OP_REPLY,
};

/**
 * enum sacred_access - access bits of a process on a region
 * @SACRED_ACCESS_READ: RDMA READ
 * @SACRED_ACCESS_WRITE: RDMA WRITE
 * @SACRED_ACCESS_ATOMIC: compare-and-swap and fetch-and-add
 *
 * An ACL entry is one of: none (0), read, read|write,
 * read|write|atomic.
 */
enum sacred_access {
	SACRED_ACCESS_READ	= 1 << 0,
	SACRED_ACCESS_WRITE	= 1 << 1,
	SACRED_ACCESS_ATOMIC	= 1 << 2,
};

#define SACRED_ACCESS_ALL	(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE | \
				 SACRED_ACCESS_ATOMIC)

/**
 * struct sacred_wire_hdr - starts every message
 * @version: %SACRED_WIRE_VERSION
 * @op: &enum sacred_wire_op; a process sends %SACRED_OP_ATTACH or
 *	%SACRED_OP_PERM only
 * @cookie: chosen by the process, echoed in the reply
 */
struct sacred_wire_hdr {
	__le16 version;
	__le16 op;
	__le32 cookie;
};

/**
 * struct sacred_wire_req - %SACRED_OP_ATTACH and %SACRED_OP_PERM
 * @hdr: header (another version or op: %SACRED_ST_INVALID)
 * @region_id: the region
 * @access: %SACRED_OP_PERM: the access wanted (&enum sacred_access);
 *	0 for %SACRED_OP_ATTACH, and for a revoke on a revoke-only region
 * @ballot: %SACRED_OP_PERM on a fenced or bpf region: the ballot of the
 *	grant; otherwise 0 (else %SACRED_ST_INVALID)
 * @target: %SACRED_OP_PERM on a revoke-only or bpf region: the process
 *	whose write permission is revoked; otherwise 0 (else
 *	%SACRED_ST_INVALID)
 * @reserved: 0 (else %SACRED_ST_INVALID)
 *
 * 32 bytes, sent as exactly that: a shorter or longer message is answered
 * %SACRED_ST_INVALID. @access is 0, %SACRED_ACCESS_READ, READ|WRITE or
 * READ|WRITE|ATOMIC (else %SACRED_ST_INVALID).
 */
struct sacred_wire_req {
	struct sacred_wire_hdr hdr;
	__le32 region_id;
	__le32 access;
	__le64 ballot;
	__le32 target;
	__le32 reserved;
};

/**
 * enum sacred_wire_status - the outcome in a reply
 * @SACRED_ST_OK: done; the reply describes the access now held
 * @SACRED_ST_REFUSED: the region's policy refused the change; nothing
 *	changed; @reason says why
 * @SACRED_ST_NO_REGION: no such region
 * @SACRED_ST_NO_ACCESS: the process is not in the region's ACL; nothing
 *	changed
 * @SACRED_ST_INVALID: malformed request (see struct sacred_wire_req);
 *	nothing changed
 * @SACRED_ST_FAILED: the instance failed to apply the change (out of
 *	resources, device error); access may have been revoked, never
 *	widened (not at a later attach either; a fenced region's ballot
 *	counts as seen)
 */
enum sacred_wire_status {
	SACRED_ST_OK,
	SACRED_ST_REFUSED,
	SACRED_ST_NO_REGION,
	SACRED_ST_NO_ACCESS,
	SACRED_ST_INVALID,
	SACRED_ST_FAILED,
};

/**
 * enum sacred_refuse_reason - why a policy refused a change
 * @SACRED_REFUSE_NONE: not refused
 * @SACRED_REFUSE_STATIC: the region's permissions change only by an admin
 * @SACRED_REFUSE_NOT_MEMBER: the process may not hold that access
 * @SACRED_REFUSE_SWMR: single-writer region: nothing changes at runtime
 * @SACRED_REFUSE_NO_GRANT: revoke-only region: nothing is ever granted
 * @SACRED_REFUSE_STALE_BALLOT: fenced region: the ballot is not above the
 *	highest seen
 * @SACRED_REFUSE_PROGRAM_VERDICT: bpf region: the program returned no
 *	verdict the module knows
 * @SACRED_REFUSE_PROGRAM_BASE: bpf region: the program refused; the
 *	reason is this plus the program's code (%SACRED_VERDICT_CODE), up to
 *	%SACRED_REFUSE_PROGRAM_BASE + 0xffff
 */
enum sacred_refuse_reason {
	SACRED_REFUSE_NONE,
	SACRED_REFUSE_STATIC,
	SACRED_REFUSE_NOT_MEMBER,
	SACRED_REFUSE_SWMR,
	SACRED_REFUSE_NO_GRANT,
	SACRED_REFUSE_STALE_BALLOT,
	SACRED_REFUSE_PROGRAM_VERDICT,

	SACRED_REFUSE_PROGRAM_BASE = 0x10000,
};

/**
 * struct sacred_wire_reply - %SACRED_OP_REPLY
 * @hdr: header, with the request's cookie (0 if the request was too short
 *	to carry one)
 * @status: &enum sacred_wire_status
 * @reason: &enum sacred_refuse_reason
 * @region_id: the region the request named (0 if it was shorter than
 *	struct sacred_wire_req)
 * @access: the access the process now holds (&enum sacred_access), with
 *	%SACRED_ST_OK and %SACRED_ST_REFUSED; 0 otherwise
 * @rkey: key for RDMA on the region; 0 when @access is 0
 * @epoch: the region's permission epoch after the request
 * @addr: remote address of the region's byte 0
 * @size: region size in bytes
 * @tag: the region's tag (%SACRED_ATTR_REGION_TAG)
 *
 * With %SACRED_ST_INVALID and %SACRED_ST_NO_REGION only @hdr, @status and
 * @region_id are set: every other field is 0.
 *
 * 56 bytes. Version 2 added @tag (version 1 replies were 48 bytes).
 */
struct sacred_wire_reply {
	struct sacred_wire_hdr hdr;
	__le32 status;
	__le32 reason;
	__le32 region_id;
	__le32 access;
	__le32 rkey;
	__le32 epoch;
	__le64 addr;
	__le64 size;
	__le64 tag;
};

#endif /* _UAPI_LINUX_SACRED_H */
