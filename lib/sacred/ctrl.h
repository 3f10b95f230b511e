/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - control: sacred.ko's generic netlink family (devices, memory
 * instances, regions, ACLs, peers, changePermission) and its events.
 *
 * Part of the public API: <sacred.h> includes every layer's header;
 * this one may be included alone (<sacred/ctrl.h>).
 */
#ifndef _SACRED_CTRL_H
#define _SACRED_CTRL_H

#include <stdbool.h>
#include <stddef.h>
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
 * @cq_changes: its changePermission requests the instance decided and
 *	applied in the CQ handler of their receive (those that fence nobody:
 *	they take nothing from a connected process but the requester)
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
	uint64_t cq_changes;
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

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_CTRL_H */
