/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - the public API.
 *
 * Control part (this file, for now): talks to sacred.ko over the generic
 * netlink family "sacred" (libnl-genl-3). Handles are opaque; every call
 * returns 0 or a negative errno. When the kernel attached an extended-ack
 * message to an error, sacred_ctrl_errmsg() returns it until the next call.
 */
#ifndef _SACRED_H
#define _SACRED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
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

struct sacred_mem_info {
	uint32_t id;
	uint32_t dev_index;
	char dev_name[SACRED_NAME_MAX];
	uint32_t port;			/* RDMA port number */
	struct sockaddr_storage addr;	/* address and rdma_cm port */
	uint8_t state;			/* enum sacred_mem_state */
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
 */
struct sacred_mem_params {
	uint32_t id;
	const char *dev_name;
	uint32_t port;
	struct sockaddr_storage addr;
	uint16_t cm_port;
};

#define SACRED_MEM_ID_ANY UINT32_MAX

/** sacred_mem_new() - create a memory instance; @info (may be NULL) gets it */
int sacred_mem_new(struct sacred_ctrl *ctrl,
		   const struct sacred_mem_params *params,
		   struct sacred_mem_info *info);

/** sacred_mem_del() - destroy memory instance @id */
int sacred_mem_del(struct sacred_ctrl *ctrl, uint32_t id);

/** sacred_mem_get() - look up memory instance @id; -ENOENT if absent */
int sacred_mem_get(struct sacred_ctrl *ctrl, uint32_t id,
		   struct sacred_mem_info *info);

/** sacred_mem_list() - dump all memory instances, as sacred_dev_list() */
int sacred_mem_list(struct sacred_ctrl *ctrl,
		    int (*cb)(const struct sacred_mem_info *info, void *arg),
		    void *arg);

/** sacred_port_state_str() - "ACTIVE", "DOWN", ... as `rdma link` prints */
const char *sacred_port_state_str(uint8_t state);

/** sacred_phys_state_str() - "LINK_UP", "DISABLED", ... as `rdma link` */
const char *sacred_phys_state_str(uint8_t phys_state);

/** sacred_link_layer_str() - "InfiniBand", "Ethernet" or "unspecified" */
const char *sacred_link_layer_str(uint8_t link_layer);

/** sacred_mem_state_str() - "up" or "down" */
const char *sacred_mem_state_str(uint8_t state);

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_H */
