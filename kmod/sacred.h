/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - permission-managed RDMA memory: internal declarations.
 *
 * Objects and who owns them:
 *   struct sacred_dev  - one per RDMA device, created and destroyed by the
 *                        ib_client callbacks in dev.c;
 *   struct sacred_mem  - a memory instance (mem.c), bound to one port of a
 *                        sacred_dev and listening with rdma_cm.
 *
 * Locking: sacred_lock (a mutex) serialises the control plane: the device
 * list, the memory-instance table and every netlink command. It is never
 * taken from an rdma_cm event handler, because instances are destroyed with
 * rdma_destroy_id() under it and that waits for running handlers.
 */
#ifndef _SACRED_H
#define _SACRED_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/atomic.h>
#include <net/genetlink.h>
#include <rdma/ib_verbs.h>
#include <linux/sacred.h>

extern struct mutex sacred_lock;

/**
 * struct sacred_dev - an RDMA device sacred is attached to
 * @list: entry in the device list, under sacred_lock
 * @ibdev: the device; valid until dev.c's remove callback returns
 */
struct sacred_dev {
	struct list_head list;
	struct ib_device *ibdev;
};

/**
 * struct sacred_mem - a memory instance
 * @id: host-unique id, the key of the instance table
 * @sdev: device the instance lives on
 * @port: RDMA port number on @sdev
 * @addr: address and rdma_cm port it listens on
 * @state: &enum sacred_mem_state
 * @listen_id: the rdma_cm listener; NULL while down
 */
struct sacred_mem {
	u32 id;
	struct sacred_dev *sdev;
	u32 port;
	struct sockaddr_storage addr;
	u8 state;
	struct rdma_cm_id *listen_id;
};

/* Live-object counters: every one must be zero after module exit. */
struct sacred_counters {
	atomic_t devs;
	atomic_t mems;
};

extern struct sacred_counters sacred_live;

/* dev.c */
int sacred_dev_init(void);
void sacred_dev_exit(void);
struct sacred_dev *sacred_dev_find_by_name(const char *name);
struct sacred_dev *sacred_dev_find_by_index(u32 index);
extern struct list_head sacred_devs;
extern unsigned int sacred_dev_gen;

/* mem.c */
int sacred_mem_create(struct sacred_dev *sdev, u32 port, u32 id,
		      const struct sockaddr *addr, u16 cm_port,
		      struct netlink_ext_ack *extack, struct sacred_mem **memp);
void sacred_mem_destroy(struct sacred_mem *mem);
struct sacred_mem *sacred_mem_find(u32 id);
struct sacred_mem *sacred_mem_next(u32 *id);
void sacred_mem_destroy_dev(struct sacred_dev *sdev);
void sacred_mem_exit(void);
extern unsigned int sacred_mem_gen;

/* netlink.c */
int sacred_nl_init(void);
void sacred_nl_exit(void);
void sacred_nl_notify_mem(struct sacred_mem *mem, u8 cmd);

#endif /* _SACRED_H */
