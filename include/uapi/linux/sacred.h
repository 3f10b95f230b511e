/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * sacred - permission-managed RDMA memory: the userspace ABI.
 *
 * This header is the only one shared by sacred.ko and userspace. It owns:
 *   - the generic netlink family "sacred": commands, attributes, the
 *     multicast group and the enumerations carried in attributes;
 *   - (later) the wire format of changePermission messages.
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
 * @__SACRED_CMD_MAX: internal
 * @SACRED_CMD_MAX: highest command number
 */
enum sacred_cmd {
	SACRED_CMD_UNSPEC,
	SACRED_CMD_DEV_GET,
	SACRED_CMD_MEM_NEW,
	SACRED_CMD_MEM_DEL,
	SACRED_CMD_MEM_GET,

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
 * @SACRED_ATTR_MEM_PORT: u16, rdma_cm port (TCP port space), host order
 * @SACRED_ATTR_MEM_STATE: u8, &enum sacred_mem_state
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
 * @SACRED_MEM_UP: listening and serving its peers
 * @SACRED_MEM_DOWN: crashed on purpose: no listener, no connections,
 *	regions kept
 */
enum sacred_mem_state {
	SACRED_MEM_UP,
	SACRED_MEM_DOWN,
};

#endif /* _UAPI_LINUX_SACRED_H */
