/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - the public API, all of it in this one header, bottom up:
 *
 *   control        sacred.ko's generic netlink family "sacred" (lib/ctrl.c,
 *                  libnl-genl-3): instances, regions, ACLs, changes, events
 *   data path      one RC connection to one memory instance (lib/conn.c):
 *                  READ, WRITE, atomics, changePermission; synchronous and
 *                  asynchronous
 *   replicated     the same regions on m memories used as one (lib/rmem.c)
 *   memory
 *   primitives     cells, slots, the shared state table and registers
 *                  (lib/cell.c, slots.c, sst.c, register.c)
 *   agreement      Protected Memory Paxos and Disk Paxos (lib/pmp.c), the
 *                  replicated log with fail-over (lib/log.c)
 *   Byzantine      Ed25519 keys, non-equivocating broadcast (lib/neb.c),
 *                  Cheap Quorum with its robust backup (lib/cheapq.c)
 *
 * Handles are opaque; every call returns 0 or a negative errno. When the
 * kernel attached an extended-ack message to an error,
 * sacred_ctrl_errmsg() returns it until the next call.
 */
#ifndef _SACRED_H
#define _SACRED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/sacred.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sacred_ctrl;

/**
 * sacred_ctrl_open() - connect to the sacred generic netlink family
 * @ctrl: on success, the new handle
 *
 * Return: 0; -ENOENT when the family is not registered (sacred.ko not
 * loaded); another negative errno on failure.
 */
int sacred_ctrl_open(struct sacred_ctrl **ctrl);

/** sacred_ctrl_close() - release a handle from sacred_ctrl_open(); NULL is ok */
void sacred_ctrl_close(struct sacred_ctrl *ctrl);

/**
 * sacred_ctrl_errmsg() - the kernel's extended-ack message of the last
 * failed call on @ctrl, or NULL if it sent none.
 */
const char *sacred_ctrl_errmsg(const struct sacred_ctrl *ctrl);

/** sacred_ctrl_family_version() - the kernel family's version */
unsigned int sacred_ctrl_family_version(const struct sacred_ctrl *ctrl);

struct sacred_port_info {
	uint32_t index;
	uint8_t state;		/* enum sacred_port_state */
	uint8_t phys_state;
	uint8_t link_layer;	/* enum sacred_link_layer */
	uint32_t active_mtu;	/* bytes; 0 if unknown */
	char netdev[SACRED_NAME_MAX]; /* "" if none */
};

#define SACRED_MAX_PORTS 8

struct sacred_dev_info {
	uint32_t index;
	char name[SACRED_NAME_MAX];
	uint64_t node_guid;
	uint32_t num_ports;
	uint32_t nr_port_info;	/* entries filled in @ports */
	struct sacred_port_info ports[SACRED_MAX_PORTS];
};

/**
 * sacred_dev_get() - look up one RDMA device the module is attached to
 * @ctrl: handle
 * @name: device name, or NULL to look up by @index
 * @index: device index, used when @name is NULL
 * @info: filled in on success
 *
 * Return: 0, -ENODEV if there is no such device, or a negative errno.
 */
int sacred_dev_get(struct sacred_ctrl *ctrl, const char *name, uint32_t index,
		   struct sacred_dev_info *info);

/**
 * sacred_dev_list() - dump all RDMA devices the module is attached to
 * @ctrl: handle
 * @cb: called once per device; a non-zero return stops the walk and is
 *	returned
 * @arg: passed to @cb
 */
int sacred_dev_list(struct sacred_ctrl *ctrl,
		    int (*cb)(const struct sacred_dev_info *info, void *arg),
		    void *arg);

/**
 * struct sacred_mem_info - a memory instance, as the kernel reports it
 * @id: instance id
 * @dev_index: index of its RDMA device
 * @dev_name: name of its RDMA device
 * @port: RDMA port number
 * @addr: address and rdma_cm port it listens on; AF_UNSPEC if unknown
 * @state: &enum sacred_mem_state (%SACRED_MEM_UNSPEC if unknown)
 * @mem_cap: bytes of region memory the instance may allocate
 * @mem_used: bytes of region memory allocated
 * @nr_regions: number of regions
 * @keyed: 1: only processes proving a key connect
 * @meta_bytes: kernel memory sacred.ko holds for the instance besides
 *	region memory (its descriptors, scatterlists, ACL entries, processes,
 *	connections and grants), as the slab allocator sized each
 * @nr_peers: processes known to the instance (a protection domain each)
 * @nr_conns: their connections (an RC QP and a CQ each)
 * @nr_mrs: fast-registration MRs of the instance (one per grant)
 * @mr_pages: page-list entries of those MRs
 *
 * The last five are 0 from a kernel module that does not report them.
 */
struct sacred_mem_info {
	uint32_t id;
	uint32_t dev_index;
	char dev_name[SACRED_NAME_MAX];
	uint32_t port;
	struct sockaddr_storage addr;
	uint8_t state;
	uint64_t mem_cap;
	uint64_t mem_used;
	uint32_t nr_regions;
	uint8_t keyed;
	uint64_t meta_bytes;
	uint32_t nr_peers;
	uint32_t nr_conns;
	uint32_t nr_mrs;
	uint64_t mr_pages;
};

/**
 * struct sacred_mem_params - what sacred_mem_new() creates
 * @id: wanted instance id, or SACRED_MEM_ID_ANY for the next free one
 * @dev_name: RDMA device name (required)
 * @port: RDMA port number; 0 means 1
 * @addr: listen address: AF_INET or AF_INET6 with the rdma_cm port in
 *	sin_port/sin6_port (network order). Family AF_UNSPEC: the kernel
 *	picks the port's RoCE v2 IPv4 address, and then the port is taken
 *	from @cm_port.
 * @cm_port: rdma_cm port when @addr's family is AF_UNSPEC (host order)
 * @key: master key, SACRED_KEY_MIN..SACRED_KEY_MAX bytes, or NULL: with a
 *	key, only processes proving theirs connect (uapi "Identity")
 * @key_len: bytes in @key
 * @mem_cap: bytes of region memory the instance may allocate; 0 for the
 *	kernel's default (%SACRED_MEM_CAP_DEFAULT)
 */
struct sacred_mem_params {
	uint32_t id;
	const char *dev_name;
	uint32_t port;
	struct sockaddr_storage addr;
	uint16_t cm_port;
	const void *key;
	size_t key_len;
	uint64_t mem_cap;
};

#define SACRED_MEM_ID_ANY UINT32_MAX

/** sacred_mem_new() - create a memory instance; @info (may be NULL) gets it */
int sacred_mem_new(struct sacred_ctrl *ctrl,
		   const struct sacred_mem_params *params,
		   struct sacred_mem_info *info);

/** sacred_mem_del() - destroy memory instance @id */
int sacred_mem_del(struct sacred_ctrl *ctrl, uint32_t id);

/**
 * sacred_mem_set() - change a memory instance
 * @ctrl: handle
 * @id: instance
 * @state: SACRED_MEM_DOWN (crash emulation: its listener and connections
 *	go, its regions and grants stay), SACRED_MEM_UP, or 0 to keep it
 * @mem_cap: new cap in bytes (not below what its regions use), or 0 to
 *	keep it
 * @info: if not NULL, the instance afterwards
 *
 * Return: 0 or a negative errno (-EBUSY: cap below the memory in use).
 */
int sacred_mem_set(struct sacred_ctrl *ctrl, uint32_t id, uint8_t state,
		   uint64_t mem_cap, struct sacred_mem_info *info);

/**
 * sacred_mem_set_key() - give instance @id a master key, or none
 * @ctrl: handle
 * @id: instance
 * @key: SACRED_KEY_MIN..SACRED_KEY_MAX bytes, or NULL for no key
 * @len: bytes in @key
 *
 * Connections already made stay; new ones must prove a process key.
 *
 * Return: 0 or a negative errno (-EINVAL with a message for a bad length).
 */
int sacred_mem_set_key(struct sacred_ctrl *ctrl, uint32_t id, const void *key,
		       size_t len);

/** sacred_mem_get() - look up memory instance @id; -ENOENT if absent */
int sacred_mem_get(struct sacred_ctrl *ctrl, uint32_t id,
		   struct sacred_mem_info *info);

/** sacred_mem_list() - dump all memory instances, as sacred_dev_list() */
int sacred_mem_list(struct sacred_ctrl *ctrl,
		    int (*cb)(const struct sacred_mem_info *info, void *arg),
		    void *arg);

#define SACRED_REGION_ID_ANY UINT32_MAX

/**
 * struct sacred_region_info - a region of a memory instance
 * @mem_id: the instance it belongs to
 * @id: region id, unique within the instance
 * @size: bytes
 * @policy: &enum sacred_policy
 * @epoch: permission epoch: bumped by every permission change
 * @nr_chunks: physically contiguous chunks the region is made of
 * @raced: revokes of a connected process whose QP had received a packet
 *	sent after its latest request by the end of the fence: every revoke
 *	that tore a multi-packet write (placed it in part), and some that
 *	tore none
 * @tag: fixed at creation, told to processes on attach (see
 *	sacred_region_new_tagged())
 */
struct sacred_region_info {
	uint32_t mem_id;
	uint32_t id;
	uint64_t size;
	uint8_t policy;
	uint32_t epoch;
	uint32_t nr_chunks;
	uint64_t raced;
	uint64_t tag;
};

/**
 * sacred_region_new() - create a region in a memory instance
 * @ctrl: handle
 * @mem_id: the instance
 * @id: wanted region id, or SACRED_REGION_ID_ANY for the lowest free one
 * @size: bytes: a non-zero multiple of %SACRED_REGION_ALIGN, at most
 *	%SACRED_REGION_SIZE_MAX and within the instance's free cap
 * @policy: &enum sacred_policy
 * @info: gets the new region; may be NULL
 *
 * Needs CAP_NET_ADMIN. The memory is allocated, zeroed and DMA-mapped by
 * the kernel before the call returns.
 *
 * Return: 0; -ENOENT if there is no instance @mem_id; -EEXIST if @id is
 * taken; -ENOSPC if the region would exceed the instance's cap; -EINVAL
 * for a bad @size or @policy (see sacred_ctrl_errmsg()); another negative
 * errno.
 */
int sacred_region_new(struct sacred_ctrl *ctrl, uint32_t mem_id, uint32_t id,
		      uint64_t size, uint8_t policy,
		      struct sacred_region_info *info);

/**
 * sacred_region_new_tagged() - sacred_region_new() with the region's tag
 * @tag: an opaque value every process attaching the region is told
 *	(struct sacred_region_attr.tag), fixed for the region's life
 *
 * sacred_region_new() lets the kernel pick a random tag. Give a replicated
 * region the same tag on every memory, and a new one each time it is made
 * again: the tag is how processes tell one incarnation of a region id from
 * another (sacred_rmem_attach() counts only memories of the incarnation a
 * quorum holds; sacred_rmem_region_tag()).
 *
 * Return: as sacred_region_new().
 */
int sacred_region_new_tagged(struct sacred_ctrl *ctrl, uint32_t mem_id,
			     uint32_t id, uint64_t size, uint8_t policy,
			     uint64_t tag, struct sacred_region_info *info);

/**
 * sacred_region_del() - destroy region @id of instance @mem_id
 *
 * Needs CAP_NET_ADMIN.
 *
 * Return: 0, -ENOENT if there is no such instance or region, or a
 * negative errno.
 */
int sacred_region_del(struct sacred_ctrl *ctrl, uint32_t mem_id, uint32_t id);

/**
 * sacred_region_get() - look up region @id of instance @mem_id
 *
 * Return: 0, -ENOENT if there is no such instance or region, or a
 * negative errno.
 */
int sacred_region_get(struct sacred_ctrl *ctrl, uint32_t mem_id, uint32_t id,
		      struct sacred_region_info *info);

/**
 * sacred_region_list() - dump regions, ordered by instance, then region id
 * @ctrl: handle
 * @mem_id: only the regions of this instance, or SACRED_MEM_ID_ANY for
 *	those of all instances. An instance that does not exist has no
 *	regions: not an error.
 * @cb: called once per region, as in sacred_dev_list()
 * @arg: passed to @cb
 */
int sacred_region_list(struct sacred_ctrl *ctrl, uint32_t mem_id,
		       int (*cb)(const struct sacred_region_info *info,
				 void *arg),
		       void *arg);

/** sacred_port_state_str() - "ACTIVE", "DOWN", ... as `rdma link` prints */
const char *sacred_port_state_str(uint8_t state);

/** sacred_phys_state_str() - "LINK_UP", "DISABLED", ... as `rdma link` */
const char *sacred_phys_state_str(uint8_t phys_state);

/** sacred_link_layer_str() - "InfiniBand", "Ethernet" or "unspecified" */
const char *sacred_link_layer_str(uint8_t link_layer);

/** sacred_mem_state_str() - "up", "down" or "unknown" */
const char *sacred_mem_state_str(uint8_t state);

/**
 * sacred_policy_str() - name of an &enum sacred_policy: "static",
 * "exclusive-writer", "swmr", "revoke-only", "fenced"; "unknown" for
 * other values
 */
const char *sacred_policy_str(uint8_t policy);

/**
 * sacred_policy_parse() - the policy named @name, as sacred_policy_str()
 * @name: exact name
 * @policy: set on success only
 *
 * Return: 0, or -EINVAL if @name (or @policy) is NULL or names no policy.
 */
int sacred_policy_parse(const char *name, uint8_t *policy);

/**
 * sacred_access_str() - name of a set of &enum sacred_access bits, as an
 * ACL entry holds them: "none", "r", "rw" or "rwa"; "unknown" for other
 * sets
 */
const char *sacred_access_str(uint32_t access);

/**
 * sacred_access_parse() - the access set named @name, as
 * sacred_access_str()
 * @name: exact name
 * @access: set on success only
 *
 * Return: 0, or -EINVAL if @name (or @access) is NULL or names no set.
 */
int sacred_access_parse(const char *name, uint32_t *access);

/**
 * sacred_refuse_str() - name of an &enum sacred_refuse_reason: "none",
 * "static", "not-member", "swmr", "no-grant", "stale-ballot"; "unknown"
 * for other values
 */
const char *sacred_refuse_str(uint32_t reason);

/**
 * struct sacred_acl_entry - one process in a region's ACL
 * @process_id: the process
 * @access: the most it may hold (&enum sacred_access): 0, READ,
 *	READ|WRITE or READ|WRITE|ATOMIC
 * @access_cur: what it holds now (filled by sacred_region_get_acl())
 */
struct sacred_acl_entry {
	uint32_t process_id;
	uint32_t access;
	uint32_t access_cur;
};

/**
 * sacred_region_set_acl() - replace a region's ACL
 * @ctrl: handle
 * @mem_id: instance
 * @region_id: region
 * @acl: the new ACL (@access of each entry is used)
 * @n: entries in @acl; at most 1024
 *
 * Access a process loses is revoked, its connection fenced, before this
 * returns. New access is given as the region's policy says (see
 * Documentation/policies.rst).
 *
 * Return: 0 or a negative errno (-EINVAL with a message for a bad entry).
 */
int sacred_region_set_acl(struct sacred_ctrl *ctrl, uint32_t mem_id,
			  uint32_t region_id,
			  const struct sacred_acl_entry *acl, unsigned int n);

/**
 * sacred_region_new_prog() - create a region whose eBPF program decides
 * @ctrl: handle
 * @mem_id: the instance
 * @id: wanted region id, or SACRED_REGION_ID_ANY for the lowest free one
 * @size: as for sacred_region_new()
 * @prog_fd: a BPF_PROG_TYPE_SOCKET_FILTER program (Documentation/
 *	policies.rst, struct sacred_policy_ctx); the module takes its own
 *	reference, so the caller may close @prog_fd afterwards
 * @tag: the region's tag, as for sacred_region_new_tagged(); NULL for a
 *	random one
 * @info: gets the new region; may be NULL
 *
 * The region's policy is %SACRED_POLICY_BPF. Needs CAP_NET_ADMIN.
 *
 * Return: as sacred_region_new(); -EBADF if @prog_fd is not a program,
 * -EINVAL if it is not a socket filter program.
 */
int sacred_region_new_prog(struct sacred_ctrl *ctrl, uint32_t mem_id,
			   uint32_t id, uint64_t size, int prog_fd,
			   const uint64_t *tag,
			   struct sacred_region_info *info);

/**
 * sacred_region_set_policy() - change a region's policy or program
 * @ctrl: handle
 * @mem_id: instance
 * @region_id: region
 * @policy: &enum sacred_policy: exclusive-writer, revoke-only, fenced or
 *	bpf, and only on a region that has one of these (in static and swmr
 *	regions the ACL is the access: those policies stay for good)
 * @prog_fd: with %SACRED_POLICY_BPF, the program (it replaces the
 *	region's program if it has one); otherwise -1
 *
 * What each process holds stays; later requests are decided by the new
 * policy or program. A request is decided wholly by the old program or
 * wholly by the new one. Needs CAP_NET_ADMIN.
 *
 * Return: 0; -EINVAL for a change of policy not allowed or a @prog_fd
 * that is not a socket filter program; -EBADF if @prog_fd is not a
 * program; another negative errno (see sacred_ctrl_errmsg()).
 */
int sacred_region_set_policy(struct sacred_ctrl *ctrl, uint32_t mem_id,
			     uint32_t region_id, uint8_t policy, int prog_fd);

/**
 * sacred_region_prog_id() - the program deciding for a bpf region
 * @ctrl: handle
 * @mem_id: instance
 * @region_id: region
 * @prog_id: gets the kernel's id of the program (``bpftool prog show id``,
 *	bpf_prog_get_fd_by_id()), 0 for a region without one
 *
 * Return: 0 or a negative errno.
 */
int sacred_region_prog_id(struct sacred_ctrl *ctrl, uint32_t mem_id,
			  uint32_t region_id, uint32_t *prog_id);

/**
 * sacred_region_get_acl() - read a region's ACL and highest ballot
 * @ctrl: handle
 * @mem_id: instance
 * @region_id: region
 * @acl: room for @max entries
 * @max: entries @acl holds
 * @n: set to the number of entries the region has
 * @ballot: if not NULL, set to the highest ballot granted (fenced regions)
 *
 * Return: 0; -ENOSPC if the ACL has more than @max entries (the first @max
 * are filled, *@n tells how many there are); another negative errno.
 */
int sacred_region_get_acl(struct sacred_ctrl *ctrl, uint32_t mem_id,
			  uint32_t region_id, struct sacred_acl_entry *acl,
			  unsigned int max, unsigned int *n, uint64_t *ballot);

struct sacred_perm_req;

/**
 * sacred_perm_set() - changePermission on behalf of a process, as admin
 * @ctrl: handle
 * @mem_id: instance
 * @process_id: the process the request is made for
 * @req: the request, as sacred_change_perm() takes it
 *
 * The region's policy decides exactly as for a request from the process
 * itself; the process learns its new key when it next attaches.
 *
 * Return: 0; -EPERM when the policy refused (sacred_ctrl_errmsg() says
 * why) or without CAP_NET_ADMIN; another negative errno.
 */
int sacred_perm_set(struct sacred_ctrl *ctrl, uint32_t mem_id,
		    uint32_t process_id, const struct sacred_perm_req *req);

/**
 * struct sacred_peer_info - a process known to an instance
 * @mem_id: the instance
 * @process_id: the process
 * @connected: 1 while it has a live connection
 * @requests: requests it sent
 * @refused: its requests a policy refused
 * @fences: times its connection was fenced by a revoke
 * @connects: connections it made
 * @mrs: MRs the instance holds for it (one per region it attached to)
 * @raced: its revokes in which its QP had received a packet sent after
 *	its latest request by the end of the fence (@raced of
 *	&struct sacred_region_info, per process)
 */
struct sacred_peer_info {
	uint32_t mem_id;
	uint32_t process_id;
	uint8_t connected;
	uint64_t requests;
	uint64_t refused;
	uint64_t fences;
	uint64_t connects;
	uint32_t mrs;
	uint64_t raced;
};

/**
 * sacred_peer_list() - dump the processes known to an instance (or to all,
 * with SACRED_MEM_ID_ANY), as sacred_dev_list()
 */
int sacred_peer_list(struct sacred_ctrl *ctrl, uint32_t mem_id,
		     int (*cb)(const struct sacred_peer_info *info, void *arg),
		     void *arg);

/*
 * ----------------------------------------------------------------------
 * Events (lib/ctrl.c): what sacred.ko announces on the family's multicast
 * group "events" (%SACRED_GENL_MCGRP_EVENTS). A monitor has a netlink
 * socket of its own, joined to the group; it only receives. Delivery is
 * best effort, as netlink multicast always is: when the socket's buffer
 * overflows, events are lost and the next sacred_monitor_next() says so.
 * ----------------------------------------------------------------------
 */

struct sacred_monitor;

/**
 * enum sacred_event_type - what a &struct sacred_event reports
 * @SACRED_EVENT_MEM_NEW: a memory instance was created (@mem)
 * @SACRED_EVENT_MEM_DEL: a memory instance was destroyed (@mem, as it was)
 * @SACRED_EVENT_REGION_NEW: a region was created (@region)
 * @SACRED_EVENT_REGION_DEL: a region was destroyed (@region, as it was)
 * @SACRED_EVENT_REGION_SET: a region's ACL was replaced (@region, after)
 * @SACRED_EVENT_PERM: a changePermission was applied or refused (@perm)
 * @SACRED_EVENT_MEM_SET: a memory instance was changed: brought down or
 *	up, or its cap changed (@mem, after)
 */
enum sacred_event_type {
	SACRED_EVENT_MEM_NEW = 1,
	SACRED_EVENT_MEM_DEL,
	SACRED_EVENT_REGION_NEW,
	SACRED_EVENT_REGION_DEL,
	SACRED_EVENT_REGION_SET,
	SACRED_EVENT_PERM,
	SACRED_EVENT_MEM_SET,
};

/**
 * struct sacred_perm_event - a changePermission, from a process or an admin
 * @mem_id: the instance
 * @region_id: the region
 * @process_id: the process the request was made by (or for)
 * @access: the access it asked for (&enum sacred_access)
 * @ballot: the request's ballot (fenced regions), else 0
 * @target: the request's target (revoke-only regions), else 0
 * @epoch: the region's permission epoch after the request
 * @reason: %SACRED_REFUSE_NONE if the region's policy accepted the
 *	change, else why it refused it (&enum sacred_refuse_reason)
 * @error: 0 if an accepted change was applied; a negative errno if the
 *	instance could not apply it in full (the requester got
 *	%SACRED_ST_FAILED): access may have been revoked, nothing was
 *	granted
 */
struct sacred_perm_event {
	uint32_t mem_id;
	uint32_t region_id;
	uint32_t process_id;
	uint32_t access;
	uint64_t ballot;
	uint32_t target;
	uint32_t epoch;
	uint32_t reason;
	int32_t error;
};

/**
 * struct sacred_event - one event
 * @type: &enum sacred_event_type; says which member of the union is set
 * @mem: %SACRED_EVENT_MEM_NEW, %SACRED_EVENT_MEM_DEL, %SACRED_EVENT_MEM_SET
 * @region: %SACRED_EVENT_REGION_*
 * @perm: %SACRED_EVENT_PERM
 */
struct sacred_event {
	int type;
	union {
		struct sacred_mem_info mem;
		struct sacred_region_info region;
		struct sacred_perm_event perm;
	};
};

/**
 * sacred_monitor_open() - subscribe to the events of sacred.ko
 * @mon: on success, the new monitor
 *
 * Return: 0; -ENOENT when the family is not registered; -EOPNOTSUPP when
 * it has no "events" group; another negative errno.
 */
int sacred_monitor_open(struct sacred_monitor **mon);

/** sacred_monitor_close() - unsubscribe and free @mon; NULL is ok */
void sacred_monitor_close(struct sacred_monitor *mon);

/**
 * sacred_monitor_fd() - the monitor's socket, to poll() for POLLIN; read
 * it with sacred_monitor_next() only
 */
int sacred_monitor_fd(const struct sacred_monitor *mon);

/**
 * sacred_monitor_next() - the next event
 * @mon: monitor
 * @ev: filled in when 0 is returned
 * @timeout_ms: how long to wait for one: -1 forever, 0 not at all
 *
 * Events of kinds this library does not know are skipped. One datagram
 * may carry several events: call again with a timeout of 0 until -EAGAIN
 * before polling sacred_monitor_fd() again.
 *
 * Return: 0 with an event; -EAGAIN when none came in time; -ENOBUFS when
 * events were lost (the socket's buffer overflowed: the monitor goes on,
 * call again); -EINTR when a signal interrupted the wait; -EPROTO for a
 * malformed event, which is dropped; another negative errno.
 */
int sacred_monitor_next(struct sacred_monitor *mon, struct sacred_event *ev,
			int timeout_ms);

/*
 * ----------------------------------------------------------------------
 * Data path (lib/conn.c): one RC connection from this process to one
 * memory instance (librdmacm + libibverbs), region attach, RDMA READ,
 * WRITE, compare-and-swap, fetch-and-add, and changePermission. Every
 * call is synchronous and returns 0 or a negative errno; a connection is
 * used by one thread at a time. sacred_conn_errmsg() describes the last
 * failure.
 *
 * A failed completion, a timeout, a disconnect by the memory or a
 * malformed message from it breaks the connection: every later call
 * returns -ECONNRESET until sacred_conn_reconnect().
 * ----------------------------------------------------------------------
 */

struct sacred_conn;

/**
 * struct sacred_conn_attr - what sacred_conn_create() connects to, and how
 * @addr: the instance's address (AF_INET or AF_INET6) with its rdma_cm
 *	port
 * @process_id: the process's id; one connection per id and instance
 * @timeout_ms: bound on address and route resolution and connecting
 *	(counted from librdmacm's initialization, which the first
 *	connection of a process pays for), and on every blocking call; 0
 *	means 2000
 * @bounce_size: bytes of the registered buffer READ and WRITE copy
 *	through, and the largest single RDMA operation; 0 means 1 MiB, at
 *	most 1 GiB
 * @key: the process's key (SACRED_MAC_LEN bytes, sacred_process_key()) for
 *	an instance that has a master key; NULL otherwise. Copied.
 * @queue_depth: asynchronous operations in flight at most (sacred_io_post());
 *	each gets bounce_size / queue_depth bytes of the bounce buffer. 0
 *	means 16; at most 256.
 * @flags: SACRED_CONN_AUTO_RECONNECT: a call on a broken connection first
 *	reconnects (sacred_conn_reconnect()) instead of failing with
 *	-ECONNRESET
 */
struct sacred_conn_attr {
	const struct sockaddr *addr;
	uint32_t process_id;
	int timeout_ms;
	size_t bounce_size;
	const uint8_t *key;
	unsigned int queue_depth;
	unsigned int flags;
};

#define SACRED_CONN_AUTO_RECONNECT	(1U << 0)

/**
 * sacred_process_key() - derive a process's key from an instance's master
 * key, as the instance does (uapi "Identity")
 * @master: the master key, SACRED_KEY_MIN..SACRED_KEY_MAX bytes
 * @len: bytes in @master
 * @process_id: the process
 * @key: SACRED_MAC_LEN bytes: the process's key
 *
 * For the admin who hands processes their keys; a process never needs
 * the master key.
 *
 * Return: 0, or -EINVAL for a master key of the wrong length.
 */
int sacred_process_key(const void *master, size_t len, uint32_t process_id,
		       uint8_t *key);

/**
 * struct sacred_region_attr - a region, as the memory described it
 * @region_id: the region
 * @access: &enum sacred_access bits held
 * @rkey: key for RDMA on the region; 0 when @access is 0
 * @epoch: the region's permission epoch when the memory answered
 * @addr: remote address of the region's byte 0
 * @size: bytes
 * @tag: the region's tag (struct sacred_region_info.tag)
 */
struct sacred_region_attr {
	uint32_t region_id;
	uint32_t access;
	uint32_t rkey;
	uint32_t epoch;
	uint64_t addr;
	uint64_t size;
	uint64_t tag;
};

/**
 * struct sacred_perm_req - a changePermission request
 * @region_id: the region
 * @access: access wanted: 0, READ, READ|WRITE or READ|WRITE|ATOMIC
 * @ballot: fenced regions: the grant's ballot; otherwise 0
 * @target: revoke-only regions: the process whose write access is
 *	revoked; otherwise 0
 */
struct sacred_perm_req {
	uint32_t region_id;
	uint32_t access;
	uint64_t ballot;
	uint32_t target;
};

/**
 * struct sacred_perm_result - the memory's answer to a changePermission
 * @status: &enum sacred_wire_status
 * @reason: &enum sacred_refuse_reason when refused
 * @region: the region after an accepted change; after a refusal only its
 *	@epoch and @size are meaningful
 */
struct sacred_perm_result {
	uint32_t status;
	uint32_t reason;
	struct sacred_region_attr region;
};

/**
 * sacred_conn_create() - connect to a memory instance
 *
 * Return: 0; -ECONNREFUSED (nothing listens, or the instance is down),
 * -EACCES (the instance has a key and @attr's did not prove the process),
 * -EADDRINUSE (the process id is connected already), -EPROTONOSUPPORT
 * (wire version), -ENOMEM, -EPROTO, -ETIMEDOUT, or another negative errno.
 */
int sacred_conn_create(const struct sacred_conn_attr *attr,
		       struct sacred_conn **conn);

/** sacred_conn_destroy() - disconnect and free @conn; NULL is ok */
void sacred_conn_destroy(struct sacred_conn *conn);

/**
 * sacred_conn_reconnect() - new connection, same process and instance;
 * every attached region is attached again with a fresh key
 *
 * Return: 0; -ESTALE if another instance answers at the address now; the
 * errors of sacred_conn_create() and sacred_attach().
 */
int sacred_conn_reconnect(struct sacred_conn *conn);

/**
 * sacred_conn_reconnect_async() - sacred_conn_reconnect() in steps that
 * never wait for the network: the first call starts an attempt, each
 * later one moves it on by what the rdma_cm answered since
 *
 * Return: 0 when connected and the regions attached again; -EINPROGRESS
 * while under way; otherwise as sacred_conn_reconnect(), and the next
 * call starts anew.
 */
int sacred_conn_reconnect_async(struct sacred_conn *conn);

/** sacred_conn_mem_id() - id of the instance @conn is connected to */
uint32_t sacred_conn_mem_id(const struct sacred_conn *conn);

/**
 * sacred_conn_errmsg() - one line on the last call's failure, or NULL if
 * it succeeded
 */
const char *sacred_conn_errmsg(const struct sacred_conn *conn);

/**
 * sacred_conn_broken() - true once a call saw the connection break; every
 * later call fails with -ECONNRESET until sacred_conn_reconnect()
 */
bool sacred_conn_broken(const struct sacred_conn *conn);

/**
 * sacred_attach() - learn a region's key, bounds and the access held
 *
 * Return: 0; -ENOENT (no such region), -EACCES (not a member),
 * -ECONNRESET, -ETIMEDOUT, -EPROTO, or another negative errno.
 */
int sacred_attach(struct sacred_conn *conn, uint32_t region_id,
		  struct sacred_region_attr *attr);

/** sacred_detach() - forget an attached region (local); -ENOENT if not */
int sacred_detach(struct sacred_conn *conn, uint32_t region_id);

/** sacred_conn_region() - the cached attributes of an attached region */
int sacred_conn_region(const struct sacred_conn *conn, uint32_t region_id,
		       struct sacred_region_attr *attr);

/**
 * sacred_change_perm() - changePermission
 *
 * Return: 0 when accepted (@result->region and the cached key updated);
 * -EPERM when the policy refused (@result->reason says why); -EINVAL,
 * -ENOENT, -EACCES, -EIO (the memory failed to apply it), -ESTALE (the
 * region was made again since it was attached: nothing sent), -ECONNRESET,
 * -ETIMEDOUT, -EPROTO.
 */
int sacred_change_perm(struct sacred_conn *conn,
		       const struct sacred_perm_req *req,
		       struct sacred_perm_result *result);

/**
 * sacred_read() - RDMA READ of @len bytes at @offset of a region
 *
 * Return: 0; -ENOENT (not attached), -ESTALE (made again since it was
 * attached), -ERANGE (outside the region; nothing sent), -EACCES
 * (refused by the memory, which breaks the connection, or no access
 * held), -ECONNRESET, -ETIMEDOUT.
 */
int sacred_read(struct sacred_conn *conn, uint32_t region_id,
		uint64_t offset, void *buf, size_t len);

/**
 * sacred_write() - RDMA WRITE of @len bytes at @offset of a region
 *
 * Return: as sacred_read(). A failed write may have landed, in whole or
 * in part.
 */
int sacred_write(struct sacred_conn *conn, uint32_t region_id,
		 uint64_t offset, const void *buf, size_t len);

/**
 * sacred_cas() - compare-and-swap of the 8-byte word at @offset; *@old
 * (may be NULL) gets its previous value: it was swapped iff *@old ==
 * @expect
 *
 * Return: as sacred_read(); -EINVAL if @offset is not 8-byte aligned;
 * -EOPNOTSUPP if the device does no atomics.
 */
int sacred_cas(struct sacred_conn *conn, uint32_t region_id, uint64_t offset,
	       uint64_t expect, uint64_t swap, uint64_t *old);

/** sacred_faa() - fetch-and-add on the 8-byte word at @offset */
int sacred_faa(struct sacred_conn *conn, uint32_t region_id, uint64_t offset,
	       uint64_t add, uint64_t *old);

/*
 * ----------------------------------------------------------------------
 * Asynchronous data path (lib/conn.c): post many operations, on one
 * connection or on several (one per memory), and take their results as
 * they complete. A connection's blocking calls return -EBUSY while
 * asynchronous operations are in flight on it.
 * ----------------------------------------------------------------------
 */

/** enum sacred_io_opcode - what a &struct sacred_io does */
enum sacred_io_opcode {
	SACRED_IO_READ = 1,
	SACRED_IO_WRITE,
	SACRED_IO_CAS,
	SACRED_IO_FAA,
	SACRED_IO_PERM,
};

/**
 * struct sacred_io - one asynchronous operation
 * @user_data: the caller's, returned in the result
 * @opcode: &enum sacred_io_opcode
 * @region_id: READ, WRITE, CAS, FAA: an attached region
 * @offset: READ, WRITE, CAS, FAA: first byte (8-byte aligned for atomics)
 * @buf: READ: where the bytes go (valid until the result is taken);
 *	WRITE: the bytes (copied when posted)
 * @len: READ, WRITE: bytes; at most bounce_size / queue_depth
 * @compare_add: CAS: the value expected; FAA: what to add
 * @swap: CAS: the new value
 * @perm: PERM: the changePermission request
 */
struct sacred_io {
	uint64_t user_data;
	uint32_t opcode;
	uint32_t region_id;
	uint64_t offset;
	void *buf;
	uint32_t len;
	uint64_t compare_add;
	uint64_t swap;
	struct sacred_perm_req perm;
};

/**
 * struct sacred_io_result - the outcome of one &struct sacred_io
 * @user_data: as posted
 * @opcode: as posted
 * @region_id: the region (for PERM, @perm.region_id of the request)
 * @status: 0 or a negative errno, as the blocking call would return
 * @old: CAS, FAA: the word's previous value
 * @perm: PERM: the memory's answer, as sacred_change_perm() gives it
 */
struct sacred_io_result {
	uint64_t user_data;
	uint32_t opcode;
	uint32_t region_id;
	int status;
	uint64_t old;
	struct sacred_perm_result perm;
};

/**
 * sacred_io_post() - start up to @n operations on @conn, in order
 *
 * Return: the number posted (>= 1), or a negative errno when none was:
 * -EAGAIN (no free slot, or no credit for a changePermission), -EMSGSIZE,
 * and the checks of the blocking calls.
 */
int sacred_io_post(struct sacred_conn *conn, const struct sacred_io *io,
		   unsigned int n);

/**
 * sacred_io_poll() - take up to @max results of @conn, oldest first;
 * never blocks
 *
 * Return: the number of results stored (0 if none is ready), or -EINVAL.
 */
int sacred_io_poll(struct sacred_conn *conn, struct sacred_io_result *res,
		   unsigned int max);

/**
 * sacred_io_wait() - wait until any of @conns has results to poll
 *
 * Return: how many of them have results; 0 on timeout or when nothing is
 * in flight; a negative errno.
 */
int sacred_io_wait(struct sacred_conn *const *conns, unsigned int n,
		   int timeout_ms);

/** sacred_io_pending() - operations posted whose results are not taken */
unsigned int sacred_io_pending(const struct sacred_conn *conn);

/*
 * ----------------------------------------------------------------------
 * Replicated memory (lib/rmem.c): m memory instances, each holding the
 * same regions (same ids), used as one memory that survives the crash of
 * a minority. Every call goes to all memories and returns once a quorum
 * (m / 2 + 1) answered; what each memory said is in the result.
 * ----------------------------------------------------------------------
 */

#define SACRED_RMEM_MAX	16

struct sacred_rmem;

/**
 * struct sacred_rmem_member - one memory of a replicated memory
 * @addr: its address (AF_INET or AF_INET6) with its rdma_cm port
 * @key: the process's key for it, or NULL (see &struct sacred_conn_attr)
 * @timeout_ms: how long an operation on it may take; 0 means 2000
 */
struct sacred_rmem_member {
	const struct sockaddr *addr;
	const uint8_t *key;
	int timeout_ms;
};

/**
 * struct sacred_rmem_attr - what sacred_rmem_create() connects to
 * @process_id: the process, the same on every memory
 * @nr_mems: memories, 1 to SACRED_RMEM_MAX
 * @mems: the memories
 * @max_io: largest READ or WRITE; 0 means 4096
 * @queue_depth: operations in flight per memory, as in &struct
 *	sacred_conn_attr; stragglers of earlier calls count
 */
struct sacred_rmem_attr {
	uint32_t process_id;
	unsigned int nr_mems;
	const struct sacred_rmem_member *mems;
	size_t max_io;
	unsigned int queue_depth;
};

/**
 * struct sacred_rmem_result - what each memory said to one call
 * @nr_mems: entries used below
 * @ok: memories that succeeded in time (bit i: memory i)
 * @done: memories that answered in time, with success or not
 * @status: each memory's status: 0, a negative errno, -EINPROGRESS if it
 *	had not answered when the call returned, -ENOTCONN if it was not
 *	connected
 * @perm: sacred_rmem_change_perm(): each memory's answer
 */
struct sacred_rmem_result {
	unsigned int nr_mems;
	uint32_t ok;
	uint32_t done;
	int status[SACRED_RMEM_MAX];
	struct sacred_perm_result perm[SACRED_RMEM_MAX];
};

/**
 * sacred_rmem_create() - connect to every memory; a minority may fail
 *
 * Return: 0, -EINVAL, -ENOMEM, or the last connection error when fewer
 * than a quorum connected.
 */
int sacred_rmem_create(const struct sacred_rmem_attr *attr,
		       struct sacred_rmem **rm);

/** sacred_rmem_destroy() - disconnect and free @rm; NULL is ok */
void sacred_rmem_destroy(struct sacred_rmem *rm);

/** sacred_rmem_nr_mems() - how many memories @rm has */
unsigned int sacred_rmem_nr_mems(const struct sacred_rmem *rm);

/** sacred_rmem_quorum() - how many make a quorum: nr_mems / 2 + 1 */
unsigned int sacred_rmem_quorum(const struct sacred_rmem *rm);

/** sacred_rmem_process_id() - the process @rm connects as */
uint32_t sacred_rmem_process_id(const struct sacred_rmem *rm);

/** sacred_rmem_max_io() - the largest READ or WRITE @rm takes */
size_t sacred_rmem_max_io(const struct sacred_rmem *rm);

/** sacred_rmem_up() - bit mask of the memories connected now */
uint32_t sacred_rmem_up(const struct sacred_rmem *rm);

/** sacred_rmem_conn() - the connection to memory @i (owned by @rm) */
struct sacred_conn *sacred_rmem_conn(struct sacred_rmem *rm, unsigned int i);

/**
 * sacred_rmem_revive() - reconnect the memories not connected (regions
 * attached again); returns how many are connected afterwards
 */
int sacred_rmem_revive(struct sacred_rmem *rm);

/**
 * sacred_rmem_attach() - attach a region on every memory; only memories
 * whose region has the tag a quorum shares count (the others: -ESTALE)
 *
 * Return: 0 when a quorum attached one incarnation; -EPROTO when no
 * quorum of those that attached shares a tag; else as
 * sacred_rmem_write().
 */
int sacred_rmem_attach(struct sacred_rmem *rm, uint32_t region_id,
		       struct sacred_rmem_result *res);

/**
 * sacred_rmem_region_tag() - the region's tag (the one the handle learned
 * from a quorum, else as the memories that attached it told it); @mask
 * (may be NULL) gets which memories hold it
 *
 * Return: 0; -ENOENT (attached nowhere); -EPROTO (no tag learned, and
 * memories disagree).
 */
int sacred_rmem_region_tag(const struct sacred_rmem *rm, uint32_t region_id,
			   uint64_t *tag, uint32_t *mask);

/**
 * sacred_rmem_write() - write to every memory, return at a quorum
 *
 * Return: 0 when a quorum acknowledged; otherwise, most telling first,
 * -EACCES (access refused), -ENOENT, -ECONNRESET (connections broke),
 * -ETIMEDOUT, -ENOTCONN (too few connected); -EINVAL, -EMSGSIZE.
 */
int sacred_rmem_write(struct sacred_rmem *rm, uint32_t region_id,
		      uint64_t offset, const void *buf, size_t len,
		      struct sacred_rmem_result *res);

/**
 * sacred_rmem_read() - read from every memory into @bufs[i], return at a
 * quorum (or, with @all, when every memory answered or timed out)
 *
 * Return: 0 when a quorum answered; otherwise as sacred_rmem_write().
 */
int sacred_rmem_read(struct sacred_rmem *rm, uint32_t region_id,
		     uint64_t offset, void *const *bufs, size_t len, bool all,
		     struct sacred_rmem_result *res);

#define SACRED_RMEM_CHAIN_MAX	8

/**
 * sacred_rmem_chain() - run @ops (the same for every memory) on every
 * memory, each memory's in order - the next sent once the one before it
 * succeeded there - and return when a quorum completed them all; the
 * READ among them (at most one) lands in @bufs[i]
 *
 * Return: 0 when a quorum completed all; otherwise as sacred_rmem_write().
 */
int sacred_rmem_chain(struct sacred_rmem *rm, const struct sacred_io *ops,
		      unsigned int nops, void *const *bufs,
		      struct sacred_rmem_result *res);

/**
 * sacred_rmem_batch() - run up to SACRED_RMEM_CHAIN_MAX READs and WRITEs
 * (the same for every memory) on every memory all at once, in no order,
 * and return when a quorum completed them all: one round trip; the READs
 * land one after the other in @bufs[i]
 *
 * Return: 0 when a quorum completed all; otherwise as sacred_rmem_write().
 */
int sacred_rmem_batch(struct sacred_rmem *rm, const struct sacred_io *ops,
		      unsigned int nops, void *const *bufs,
		      struct sacred_rmem_result *res);

/**
 * sacred_rmem_change_perm() - changePermission on every memory
 *
 * Return: 0 when a quorum accepted; -EPERM when refused by enough
 * policies; otherwise as sacred_rmem_write().
 */
int sacred_rmem_change_perm(struct sacred_rmem *rm,
			    const struct sacred_perm_req *req,
			    struct sacred_rmem_result *res);

/*
 * ----------------------------------------------------------------------
 * The SACRED-MA primitives, bottom up: cells (lib/cell.c), owned and
 * shared regions of slots (lib/slots.c), the shared state table
 * (lib/sst.c) and the atomic register (lib/register.c).
 * ----------------------------------------------------------------------
 */

/* Bytes of a cell's header: seq, pid, len, checksum (lib/cell.c). */
#define SACRED_CELL_HDR	24

/**
 * struct sacred_cell_view - what a valid cell holds
 * @seq: its sequence number (never 0)
 * @pid: the process that wrote it
 * @len: payload bytes
 * @data: the payload, inside the cell that was decoded
 */
struct sacred_cell_view {
	uint64_t seq;
	uint32_t pid;
	uint32_t len;
	const void *data;
};

/**
 * sacred_cell_encode() - build a self-checking cell of @size bytes
 *
 * Return: 0, or -EINVAL (seq 0, payload does not fit).
 */
int sacred_cell_encode(void *cell, size_t size, uint64_t seq, uint32_t pid,
		       const void *data, size_t len);

/**
 * sacred_cell_decode() - check a cell read from a memory
 *
 * Return: 0 (valid, @out filled), -ENODATA (empty), -EBADMSG (torn or
 * garbage), -EINVAL.
 */
int sacred_cell_decode(const void *cell, size_t size,
		       struct sacred_cell_view *out);

/** sacred_cell_newer() - @a is newer than @b: seq, then pid */
bool sacred_cell_newer(const struct sacred_cell_view *a,
		       const struct sacred_cell_view *b);

struct sacred_slots;

#define SACRED_SLOTS_SHARED	(1U << 0)

/**
 * sacred_slots_open() - a replicated region as @nr_slots slots of cells:
 * owned (one writer, enforced by the memory) or, with
 * SACRED_SLOTS_SHARED, shared (every member writes; newest cell wins)
 *
 * Return: 0; -EINVAL, -ENOMEM, -ENOSPC (does not fit), -EMSGSIZE (two
 * cells exceed the replicated memory's max_io); replicated-memory errors.
 */
int sacred_slots_open(struct sacred_rmem *rm, uint32_t region_id,
		      size_t payload_max, unsigned int nr_slots,
		      unsigned int flags, struct sacred_slots **s);

/** sacred_slots_close() - free @s; NULL is ok */
void sacred_slots_close(struct sacred_slots *s);

/** sacred_slots_writer() - this process holds write access on a quorum */
bool sacred_slots_writer(const struct sacred_slots *s);

/**
 * sacred_slots_write() - write a new cell into slot @slot on a quorum
 *
 * Return: 0; -EPERM (owned region, not the owner); -EINVAL; -EMSGSIZE;
 * -ENOTCONN also when a writer that opened the region again cannot tell
 * yet which cell holds its last complete write; the errors of
 * sacred_rmem_write().
 */
int sacred_slots_write(struct sacred_slots *s, unsigned int slot,
		       const void *data, size_t len);

/**
 * sacred_slots_read() - the newest valid cell of slot @slot on a quorum
 *
 * Return: 0; -ENODATA (never written); -ENOSPC (@max too small);
 * the errors of sacred_rmem_read().
 */
int sacred_slots_read(struct sacred_slots *s, unsigned int slot, void *data,
		      size_t max, struct sacred_cell_view *view);

/**
 * sacred_slots_read_after() - as sacred_slots_read(), each memory's read
 * sent only after changePermission @perm was answered there, in one
 * sacred_rmem_chain(): cells only from memories where both succeeded
 *
 * Return: as sacred_slots_read(); the errors of sacred_rmem_chain()
 * (-EPERM: the policies refused the change).
 */
int sacred_slots_read_after(struct sacred_slots *s, unsigned int slot,
			    const struct sacred_perm_req *perm, void *data,
			    size_t max, struct sacred_cell_view *view);

/**
 * sacred_slots_read_many() - as sacred_slots_read(), for @nr slots of
 * handles on the same replicated memory, in one quorum round trip
 * (sacred_rmem_batch()); each slot's outcome in @rets[k]
 *
 * Return: 0 (the quorum read was done); -EINVAL; -ENOMEM; -EMSGSIZE; the
 * errors of sacred_rmem_batch().
 */
int sacred_slots_read_many(struct sacred_slots *const *s,
			   const unsigned int *slots, unsigned int nr,
			   void *const *data, size_t max,
			   struct sacred_cell_view *views, int *rets);

struct sacred_sst;

#define SACRED_SST_MAX_ROWS	64

/**
 * sacred_sst_open() - a shared state table: row r is owned region
 * @base_region + r, written by one process, read by all
 *
 * Return: 0; -EPERM when this process cannot write @my_row; as
 * sacred_slots_open().
 */
int sacred_sst_open(struct sacred_rmem *rm, uint32_t base_region,
		    unsigned int nr_rows, unsigned int my_row, size_t row_max,
		    struct sacred_sst **sst);

/** sacred_sst_close() - free @sst; NULL is ok */
void sacred_sst_close(struct sacred_sst *sst);

/** sacred_sst_rows() - rows of @sst */
unsigned int sacred_sst_rows(const struct sacred_sst *sst);

/** sacred_sst_my_row() - this process's row */
unsigned int sacred_sst_my_row(const struct sacred_sst *sst);

/** sacred_sst_push() - write this process's row on a quorum */
int sacred_sst_push(struct sacred_sst *sst, const void *row, size_t len);

/** sacred_sst_pull() - read row @r (newest valid cell on a quorum) */
int sacred_sst_pull(struct sacred_sst *sst, unsigned int r, void *buf,
		    size_t max, struct sacred_cell_view *view);

/**
 * sacred_sst_pull_all() - read every row into @bufs[r]; a row never
 * pushed gets seq 0 in @views[r]
 */
int sacred_sst_pull_all(struct sacred_sst *sst, void *const *bufs,
			size_t max, struct sacred_cell_view *views);

struct sacred_register;

/**
 * sacred_register_open() - an atomic multi-writer multi-reader register on
 * an SST (rows @base_region ..)
 */
int sacred_register_open(struct sacred_rmem *rm, uint32_t base_region,
			 unsigned int nr_rows, unsigned int my_row,
			 size_t value_max, struct sacred_register **reg);

/** sacred_register_close() - free @reg; NULL is ok */
void sacred_register_close(struct sacred_register *reg);

/** sacred_register_write() - write a value; 0 once linearized */
int sacred_register_write(struct sacred_register *reg, const void *value,
			  size_t len);

/**
 * sacred_register_read() - read the value (with write-back)
 *
 * Return: 0; -ENODATA (never written); -ENOSPC; replicated-memory errors.
 */
int sacred_register_read(struct sacred_register *reg, void *value,
			 size_t max, size_t *len);

/*
 * ----------------------------------------------------------------------
 * Single-shot consensus (lib/pmp.c): Protected Memory Paxos, and Disk
 * Paxos as the baseline, behind one interface.
 * ----------------------------------------------------------------------
 */

struct sacred_pmp;

#define SACRED_PMP_MAX_PROCS	64

/**
 * enum sacred_pmp_alg - which algorithm a &struct sacred_pmp runs
 * @SACRED_PMP: Protected Memory Paxos; the region's policy is
 *	exclusive-writer, every process a read-write member
 * @SACRED_DISK_PAXOS: Disk Paxos; a static region, everyone read-write
 * @SACRED_PMP_BALLOT: Protected Memory Paxos whose requests for write
 *	carry the proposal number as their ballot, for memories that grant
 *	write only above the highest ballot granted so far: policy fenced,
 *	or bpf with examples/policies/ballot.bpf.o. A request refused for
 *	a stale ballot is contention (a higher proposal took the memory):
 *	the attempt is retried above it. The first leader's write comes from
 *	the admin, with ballot 1 (the fast path's proposal number).
 */
enum sacred_pmp_alg {
	SACRED_PMP = 1,
	SACRED_DISK_PAXOS,
	SACRED_PMP_BALLOT,
};

/**
 * struct sacred_pmp_attr - a consensus instance
 * @rm: the replicated memory; must outlive the instance
 * @region_id: the region holding the instance's slots (same id on every
 *	memory), at least nr_procs * 2 * ((value_max + 55) & ~7) bytes
 * @alg: &enum sacred_pmp_alg
 * @nr_procs: processes taking part, each with a slot
 * @me: this process's slot, 0 .. @nr_procs - 1; slot 0 may take the fast
 *	path on its first attempt
 * @value_max: the largest value
 * @timeout_ms: how long sacred_pmp_propose() keeps trying; 0 means 10 s
 */
struct sacred_pmp_attr {
	struct sacred_rmem *rm;
	uint32_t region_id;
	int alg;
	unsigned int nr_procs;
	unsigned int me;
	size_t value_max;
	int timeout_ms;
};

/**
 * struct sacred_pmp_stats - what a sacred_pmp_propose() took
 * @attempts: attempts made
 * @aborts: attempts given up for contention
 * @round_trips: quorum round trips (changePermission, write, read)
 * @fast: the decision came on the fast path
 */
struct sacred_pmp_stats {
	unsigned int attempts;
	unsigned int aborts;
	unsigned int round_trips;
	bool fast;
};

/** sacred_pmp_open() - join a consensus instance */
int sacred_pmp_open(const struct sacred_pmp_attr *attr,
		    struct sacred_pmp **p);

/** sacred_pmp_close() - free @p; NULL is ok */
void sacred_pmp_close(struct sacred_pmp *p);

/**
 * sacred_pmp_propose() - propose @v; @out gets the decided value
 *
 * Return: 0; -EBUSY (contention outlasted attr.timeout_ms); -ENOTCONN,
 * -ECONNRESET, -ETIMEDOUT (no quorum); -EPERM (a policy refused: the
 * region is not exclusive-writer); -EINVAL, -EMSGSIZE, -ENOSPC.
 */
int sacred_pmp_propose(struct sacred_pmp *p, const void *v, size_t len,
		       void *out, size_t max, size_t *out_len);

/** sacred_pmp_stats() - counters of the last sacred_pmp_propose() */
void sacred_pmp_stats(const struct sacred_pmp *p,
		      struct sacred_pmp_stats *stats);

/*
 * ----------------------------------------------------------------------
 * Replicated log (lib/log.c): multi-slot Protected Memory Paxos with a
 * stable leader, a heartbeat failure detector over RDMA, and fail-over
 * that fences the old leader through the permission switch.
 * ----------------------------------------------------------------------
 */

struct sacred_log;

#define SACRED_LOG_MAX_PROCS	16

/**
 * sacred_log_commit_fn - called once per decided entry, in index order,
 * from sacred_log_poll() or sacred_log_propose()
 */
typedef void (*sacred_log_commit_fn)(void *arg, uint64_t index,
				     const void *data, size_t len);

/**
 * sacred_log_snapshot_fn - write the state after the first @applied
 * entries into @buf, at most @max bytes; return its length, or a negative
 * errno (-ENOSPC: it does not fit)
 */
typedef ssize_t (*sacred_log_snapshot_fn)(void *arg, uint64_t applied,
					  void *buf, size_t max);

/**
 * sacred_log_restore_fn - replace the whole state with a snapshot's, the
 * state after the first @applied entries; 0, or a negative errno if @buf
 * cannot be taken (the log then stays where it was)
 */
typedef int (*sacred_log_restore_fn)(void *arg, uint64_t applied,
				     const void *buf, size_t len);

/**
 * struct sacred_log_attr - a replicated log
 * @rm: the replicated memory; must outlive the log
 * @log_region: the log (same id on every memory): exclusive-writer, every
 *	process a read-write member; at least sacred_log_region_size()
 *	bytes
 * @hb_region: heartbeats: static, everyone read-write, 8 * nr_procs bytes
 * @nr_procs: processes, 1 to SACRED_LOG_MAX_PROCS
 * @me: this process, 0 .. nr_procs - 1; the lowest alive one leads
 * @capacity: entries the log holds; with snapshots, the window of the
 *	latest entries it holds (index i in slot i % capacity)
 * @entry_max: the largest entry
 * @hb_period_ms: heartbeat period; 0 means 10
 * @suspect_ms: a process whose heartbeat did not move this long is
 *	suspected; 0 means 200. Its first timeout: a process found alive
 *	after it was suspected gets its timeout doubled, up to 16 x
 *	@suspect_ms
 * @calm_timeouts: a raised timeout halves, never below @suspect_ms, once
 *	its process was seen alive for this many of it without a heartbeat
 *	round finding it still for half of it; 0 means 8
 * @commit: called for every decided entry, in order; may be NULL
 * @arg: passed to @commit, @snapshot and @restore
 * @snapshot_max: 0: no snapshots, the log is full after @capacity
 *	entries. Otherwise the largest snapshot (at most 1 GiB; one cell of
 *	it must take at most SACRED_RMEM_CHAIN_MAX writes of max_io): the
 *	leader writes one every @capacity / 2 appends, entries a snapshot
 *	covers are overwritten, and a process that needs one of those
 *	restores the newest snapshot instead
 * @snapshot: with @snapshot_max, the state after the entries applied
 * @restore: with @snapshot_max, install a snapshot
 */
struct sacred_log_attr {
	struct sacred_rmem *rm;
	uint32_t log_region;
	uint32_t hb_region;
	unsigned int nr_procs;
	unsigned int me;
	unsigned int capacity;
	size_t entry_max;
	int hb_period_ms;
	int suspect_ms;
	int calm_timeouts;
	sacred_log_commit_fn commit;
	void *arg;
	size_t snapshot_max;
	sacred_log_snapshot_fn snapshot;
	sacred_log_restore_fn restore;
};

/**
 * struct sacred_log_stats - a log's counters
 * @takeovers: times this process tried to take over
 * @step_downs: times it stopped leading
 * @appends: entries it appended as leader
 * @recovered: entries it accepted again in a takeover
 * @round_trips: quorum round trips of its log operations (not heartbeats)
 * @snapshots: snapshots it wrote (as leader)
 * @restores: snapshots it installed (it was behind the overwritten part)
 * @timeouts_raised: times it doubled its timeout for another process,
 *	found alive after it suspected it
 * @half_stills: times another process was found alive after a heartbeat
 *	round found it still for half its timeout (but not all): its calm
 *	stretch began again
 * @timeouts_lowered: times it halved its timeout for another process
 *	after a calm stretch
 */
struct sacred_log_stats {
	uint64_t takeovers;
	uint64_t step_downs;
	uint64_t appends;
	uint64_t recovered;
	uint64_t round_trips;
	uint64_t snapshots;
	uint64_t restores;
	uint64_t timeouts_raised;
	uint64_t half_stills;
	uint64_t timeouts_lowered;
};

/**
 * sacred_log_region_size() - bytes the log region of @attr needs; 0 for
 * an invalid @attr
 */
uint64_t sacred_log_region_size(const struct sacred_log_attr *attr);

/**
 * sacred_log_open() - join a replicated log
 *
 * A process that crashed may join again with its id (never while the old
 * one runs): it delivers the log again from the start - or from the
 * newest snapshot, once the start was overwritten - and learns from the
 * memories which of its cells it must keep (see lib/log.c).
 *
 * Return: 0; -EINVAL; -ENOMEM; -EMSGSIZE (max_io too small); -ENOSPC (the
 * log region is smaller than sacred_log_region_size()); the replicated
 * memory's errors.
 */
int sacred_log_open(const struct sacred_log_attr *attr,
		    struct sacred_log **l);

/** sacred_log_close() - free @l; NULL is ok */
void sacred_log_close(struct sacred_log *l);

/**
 * sacred_log_poll() - heartbeats, election, takeover, catching up; call
 * it every few milliseconds, leader or not
 */
int sacred_log_poll(struct sacred_log *l);

/**
 * sacred_log_propose() - append an entry; leader only
 *
 * Return: 0 (decided, delivered); -EREMOTE (not the leader); -EACCES
 * (write permission lost: another process took over); -ENOSPC (full, or
 * no snapshot when one was needed);
 * -ENOTCONN, -ECONNRESET, -ETIMEDOUT (no quorum); -EINVAL, -EMSGSIZE.
 */
int sacred_log_propose(struct sacred_log *l, const void *data, size_t len,
		       uint64_t *index);

/** sacred_log_leader() - the process the failure detector elects, or -1 */
int sacred_log_leader(const struct sacred_log *l);

/** sacred_log_is_leader() - this process leads now */
bool sacred_log_is_leader(const struct sacred_log *l);

/** sacred_log_applied() - entries delivered to the commit callback */
uint64_t sacred_log_applied(const struct sacred_log *l);

/**
 * sacred_log_suspect_ms() - how long process @p's heartbeat must stand
 * still for @l to suspect it now (ms); 0 when @p is out of range
 */
uint64_t sacred_log_suspect_ms(const struct sacred_log *l, unsigned int p);

/** sacred_log_stats() - the log's counters */
void sacred_log_stats(const struct sacred_log *l,
		      struct sacred_log_stats *stats);

/*
 * ----------------------------------------------------------------------
 * Byzantine tolerance (lib/neb.c): process keys (Ed25519, libsodium) and
 * non-equivocating broadcast over single-writer (swmr) regions.
 * ----------------------------------------------------------------------
 */

#define SACRED_BZ_MAX_PROCS	16
#define SACRED_BZ_SIG_LEN	64

struct sacred_bz_keys;

/**
 * sacred_bz_keygen() - write process @i's key pair into @dir:
 * ed25519-I.key (0600) and ed25519-I.pub; never overwrites
 */
int sacred_bz_keygen(const char *dir, unsigned int i);

/**
 * sacred_bz_keys_load() - this process's secret key and all public keys
 *
 * Return: 0; -EINVAL (bad file, mismatched pair); -ENOENT; -ENOMEM.
 */
int sacred_bz_keys_load(const char *dir, unsigned int nr_procs,
			unsigned int me, struct sacred_bz_keys **keys);

/** sacred_bz_keys_free() - wipe and free @keys; NULL is ok */
void sacred_bz_keys_free(struct sacred_bz_keys *keys);

/** sacred_bz_me() - the process @keys belong to */
unsigned int sacred_bz_me(const struct sacred_bz_keys *keys);

/** sacred_bz_nr_procs() - the number of processes @keys has keys of */
unsigned int sacred_bz_nr_procs(const struct sacred_bz_keys *keys);

/** sacred_bz_sign() - sign @msg under @domain: SACRED_BZ_SIG_LEN bytes */
void sacred_bz_sign(const struct sacred_bz_keys *keys, const char *domain,
		    const void *msg, size_t len, uint8_t *sig);

/** sacred_bz_verify() - process @who's signature of @msg under @domain */
bool sacred_bz_verify(const struct sacred_bz_keys *keys, unsigned int who,
		      const char *domain, const void *msg, size_t len,
		      const uint8_t *sig);

struct sacred_neb;

/**
 * struct sacred_neb_attr - a non-equivocating broadcast
 * @rm: the replicated memory; must outlive the broadcast
 * @keys: the processes' keys; must outlive it (keys->nr_procs processes)
 * @base_region: process i owns region @base_region + i on every memory:
 *	policy swmr, i the writer, the others readers; each holds
 *	nr_msgs * (nr_procs + 1) slots of two cells of
 *	(msg_max + 112) bytes, rounded up to 8
 * @nr_msgs: messages each process may broadcast
 * @msg_max: the largest message
 */
struct sacred_neb_attr {
	struct sacred_rmem *rm;
	const struct sacred_bz_keys *keys;
	uint32_t base_region;
	unsigned int nr_msgs;
	size_t msg_max;
};

/** sacred_neb_open() - join a non-equivocating broadcast */
int sacred_neb_open(const struct sacred_neb_attr *attr,
		    struct sacred_neb **n);

/** sacred_neb_close() - free @n; NULL is ok */
void sacred_neb_close(struct sacred_neb *n);

/**
 * sacred_neb_broadcast() - sign and publish message @k
 *
 * Return: 0 (the same message again completes a failed broadcast);
 * -EEXIST (another message @k was broadcast); -EMSGSIZE, -EINVAL;
 * replicated-memory errors.
 */
int sacred_neb_broadcast(struct sacred_neb *n, uint64_t k, const void *msg,
			 size_t len);

/**
 * sacred_neb_deliver() - deliver process @p's message @k if no correct
 * process can deliver another
 *
 * Return: 0 delivered; -EAGAIN nothing valid yet; -EPROTO @p equivocated;
 * -ENOSPC, -EINVAL; replicated-memory errors.
 */
int sacred_neb_deliver(struct sacred_neb *n, unsigned int p, uint64_t k,
		       void *msg, size_t max, size_t *len);

/**
 * enum sacred_neb_misbehave - what sacred_neb_misbehave() does
 * @SACRED_NEB_EQUIVOCATE: sign another message @k over the one broadcast
 * @SACRED_NEB_GARBAGE: random bytes as message @k
 * @SACRED_NEB_FORGE: a copy of process @arg's message @k with a made-up
 *	signature
 * @SACRED_NEB_REPLAY: the signed record of message @arg as message @k
 */
enum sacred_neb_misbehave {
	SACRED_NEB_EQUIVOCATE = 1,
	SACRED_NEB_GARBAGE,
	SACRED_NEB_FORGE,
	SACRED_NEB_REPLAY,
};

/**
 * sacred_neb_misbehave() - act as a Byzantine process would, through this
 * process's own region: for test harnesses only
 */
int sacred_neb_misbehave(struct sacred_neb *n, int how, uint64_t k,
			 unsigned int arg, const void *msg, size_t len);

/*
 * Byzantine consensus (lib/cheapq.c): Cheap Quorum's fast path - the leader
 * decides in one round trip when all processes are correct, the others a
 * few later - its panic, which revokes the leader's write permission for
 * good (revoke-only policy), and the robust backup, Paxos over
 * non-equivocating broadcast. n >= 2f + 1.
 */

struct sacred_cheapq;
struct sacred_ctrl;

/**
 * struct sacred_cheapq_attr - a Byzantine consensus instance
 * @rm: the replicated memory; must outlive the instance
 * @keys: the processes' keys (keys->nr_procs processes; process 0 leads
 *	the fast path)
 * @base_region: the first of the instance's 1 + 3n regions (layout in
 *	lib/cheapq.c; sacred_cheapq_setup() creates them)
 * @leader_pid: the leader's process id; process i's is @leader_pid + i
 *	unless @pids is set
 * @value_max: the largest value
 * @timeout_ms: how long the fast path waits before it panics; 0 means 1000
 * @pids: the process ids of processes 0 .. n - 1, or NULL (see
 *	@leader_pid); copied at open
 * @rounds: backup rounds at most; 0 means 8, at most 64
 * @round_ms: how long each step of backup round r waits, times r + 1;
 *	0 means @timeout_ms
 * @tag: sacred_cheapq_setup(): the tag to make the regions with, or 0 for a
 *	random one (several hosts setting up one instance: the same
 *	non-zero tag on each); sacred_cheapq_open(): 0, or the tag the regions
 *	must have
 */
struct sacred_cheapq_attr {
	struct sacred_rmem *rm;
	const struct sacred_bz_keys *keys;
	uint32_t base_region;
	uint32_t leader_pid;
	size_t value_max;
	int timeout_ms;
	const uint32_t *pids;
	unsigned int rounds;
	int round_ms;
	uint64_t tag;
};

/* struct sacred_cheapq_stats.carried: what a panic carried into the backup */
#define SACRED_CHEAPQ_CARRY_INPUT	1	/* its own input */
#define SACRED_CHEAPQ_CARRY_LEADER	2	/* the leader's signed value */
#define SACRED_CHEAPQ_CARRY_COPY	3	/* its copy of it */
#define SACRED_CHEAPQ_CARRY_CERTIFIED	4	/* a unanimity certificate */

/**
 * struct sacred_cheapq_stats - what a sacred_cheapq_propose() took
 * @round_trips: quorum operations of the fast path and the panic
 *	(reads, writes, changePermissions)
 * @fast: decided on the fast path
 * @panicked: panicked (and decided in the backup)
 * @carried: SACRED_CHEAPQ_CARRY_*, after a panic
 * @backup_rounds: backup rounds this process took part in
 * @faulty: processes the backup caught sending invalid messages (bit i:
 *	process i), ignored from then on
 */
struct sacred_cheapq_stats {
	unsigned int round_trips;
	bool fast;
	bool panicked;
	unsigned int carried;
	unsigned int backup_rounds;
	uint32_t faulty;
};

/**
 * sacred_cheapq_setup() - create an instance's regions on memory instances,
 * with their policies and ACLs (as admin)
 */
int sacred_cheapq_setup(struct sacred_ctrl *ctrl, const uint32_t *mem_ids,
			unsigned int nr_mems,
			const struct sacred_cheapq_attr *attr,
			unsigned int nr_procs);

/** sacred_cheapq_open() - join an instance */
int sacred_cheapq_open(const struct sacred_cheapq_attr *attr,
		       struct sacred_cheapq **cheapq);

/** sacred_cheapq_close() - free @cheapq; NULL is ok */
void sacred_cheapq_close(struct sacred_cheapq *cheapq);

/**
 * sacred_cheapq_propose() - propose @v and decide: on the fast path, or after
 * a panic in the robust backup
 *
 * Return: 0 with the decision in @out; a negative errno.
 */
int sacred_cheapq_propose(struct sacred_cheapq *cheapq, const void *v,
			  size_t len, void *out, size_t max, size_t *out_len);

/**
 * sacred_cheapq_help() - after deciding, serve the backup until every process
 * is done or @timeout_ms passed
 */
int sacred_cheapq_help(struct sacred_cheapq *cheapq, int timeout_ms);

/**
 * sacred_cheapq_lead_value() - the leader writes a signed @v outside the
 * protocol: test harness for an equivocating leader
 */
int sacred_cheapq_lead_value(struct sacred_cheapq *cheapq, const void *v,
			     size_t len);

/**
 * enum sacred_cheapq_misbehave - what sacred_cheapq_misbehave() does
 * @SACRED_CHEAPQ_BAD_COPY: a follower writes a copy of a chosen value with a
 *	made-up leader signature
 * @SACRED_CHEAPQ_BAD_CARRY: carry a chosen value, with no proof, into the
 *	backup
 * @SACRED_CHEAPQ_BAD_PROPOSE: as backup leader, propose a chosen value
 * @SACRED_CHEAPQ_STALL_AFTER_COPY: be slow, not faulty: the next propose
 *	returns -EINPROGRESS right after its copy, the one after resumes
 * @SACRED_CHEAPQ_GARBAGE_COPY: a follower writes chosen bytes as its copy
 * @SACRED_CHEAPQ_REPLAY_COPY: a follower writes another follower's signed
 *	copy as its own
 * @SACRED_CHEAPQ_FORGED_CARRY: carry a chosen value into the backup as if the
 *	leader had signed it (a made-up signature)
 */
enum sacred_cheapq_misbehave {
	SACRED_CHEAPQ_BAD_COPY = 1,
	SACRED_CHEAPQ_BAD_CARRY,
	SACRED_CHEAPQ_BAD_PROPOSE,
	SACRED_CHEAPQ_STALL_AFTER_COPY,
	SACRED_CHEAPQ_GARBAGE_COPY,
	SACRED_CHEAPQ_REPLAY_COPY,
	SACRED_CHEAPQ_FORGED_CARRY,
};

/** sacred_cheapq_misbehave() - act Byzantine: for test harnesses only */
int sacred_cheapq_misbehave(struct sacred_cheapq *cheapq, int how,
			    const void *v, size_t len);

/** sacred_cheapq_stats() - counters of the last sacred_cheapq_propose() */
void sacred_cheapq_stats(const struct sacred_cheapq *cheapq,
			 struct sacred_cheapq_stats *st);

/*
 * Old names. Cheap Quorum was called "cq" before LIBSACRED_0.3, a name the
 * tree also uses for completion queues. The old functions stay exported
 * (same types, same behaviour) and the old names of types and constants
 * stay defined until 1.0; new code uses the sacred_cheapq_ names. Define
 * SACRED_NO_OLD_NAMES to get only the new ones.
 */
int sacred_cq_setup(struct sacred_ctrl *ctrl, const uint32_t *mem_ids,
		    unsigned int nr_mems, const struct sacred_cheapq_attr *attr,
		    unsigned int nr_procs);
int sacred_cq_open(const struct sacred_cheapq_attr *attr,
		   struct sacred_cheapq **cheapq);
void sacred_cq_close(struct sacred_cheapq *cheapq);
int sacred_cq_propose(struct sacred_cheapq *cheapq, const void *v, size_t len,
		      void *out, size_t max, size_t *out_len);
int sacred_cq_help(struct sacred_cheapq *cheapq, int timeout_ms);
int sacred_cq_lead_value(struct sacred_cheapq *cheapq, const void *v,
			 size_t len);
int sacred_cq_misbehave(struct sacred_cheapq *cheapq, int how, const void *v,
			size_t len);
void sacred_cq_stats(const struct sacred_cheapq *cheapq,
		     struct sacred_cheapq_stats *st);

#ifndef SACRED_NO_OLD_NAMES
/* struct tags, and the functions of the same name (both mean the new) */
#define sacred_cq			sacred_cheapq
#define sacred_cq_attr			sacred_cheapq_attr
#define sacred_cq_stats			sacred_cheapq_stats
#define sacred_cq_misbehave		sacred_cheapq_misbehave
#define SACRED_CQ_CARRY_INPUT		SACRED_CHEAPQ_CARRY_INPUT
#define SACRED_CQ_CARRY_LEADER		SACRED_CHEAPQ_CARRY_LEADER
#define SACRED_CQ_CARRY_COPY		SACRED_CHEAPQ_CARRY_COPY
#define SACRED_CQ_CARRY_CERTIFIED	SACRED_CHEAPQ_CARRY_CERTIFIED
#define SACRED_CQ_BAD_COPY		SACRED_CHEAPQ_BAD_COPY
#define SACRED_CQ_BAD_CARRY		SACRED_CHEAPQ_BAD_CARRY
#define SACRED_CQ_BAD_PROPOSE		SACRED_CHEAPQ_BAD_PROPOSE
#define SACRED_CQ_STALL_AFTER_COPY	SACRED_CHEAPQ_STALL_AFTER_COPY
#define SACRED_CQ_GARBAGE_COPY		SACRED_CHEAPQ_GARBAGE_COPY
#define SACRED_CQ_REPLAY_COPY		SACRED_CHEAPQ_REPLAY_COPY
#define SACRED_CQ_FORGED_CARRY		SACRED_CHEAPQ_FORGED_CARRY
#endif

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_H */
