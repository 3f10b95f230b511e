// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - memory instances.
 *
 * This file owns struct sacred_mem: a *memory* in the sense of the RDMA
 * agreement literature, bound to one port of one RDMA device and listening
 * with the kernel rdma_cm on an address and a TCP-port-space port. Several
 * instances may live on one host and on one device; tests use them as
 * independent memories.
 *
 * Life of an instance: created by MEM_NEW (sacred_mem_create), destroyed by
 * MEM_DEL, by the removal of its device (sacred_mem_destroy_dev) or by
 * module exit. All of that runs under sacred_lock. The listener's event
 * handler never takes sacred_lock: rdma_destroy_id() waits for it.
 *
 * Connection requests are answered by request.c. sacred_mem_fill() says
 * what an instance's netlink messages carry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/xarray.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include "auth.h"
#include "ep.h"
#include "mem.h"
#include "notify.h"
#include "peer.h"
#include "region.h"
#include "request.h"

static DEFINE_XARRAY_ALLOC(sacred_mems);
/*
 * Where the search for an id starts when MEM_NEW asks for none: ids go
 * round, as ifindex does, so a deleted instance's id is not given to the
 * next one. An admin's second "memory del 3", or a test making its
 * instance again under its old id, then meets nobody else's instance.
 */
static u32 sacred_mem_next_id;
/* Bumped on every change of the table; lets dumps detect interruption. */
unsigned int sacred_mem_gen;

/*
 * One handler for the listener and, by inheritance, for every connection
 * id it spawns. What an id is, and so what its context points to, is
 * told by the id itself; each change happens under the id's handler lock:
 *
 *   context   QP    the id of
 *   instance  no    the listener, or a request waiting for its answer
 *   ep        yes   an endpoint (from sacred_ep_create() on)
 *   NULL      -     a connection being released (its QP goes next)
 *
 * A connect request arrives on a new id whose context is still the
 * instance. Device removal is handled by dev.c before rdma_cm sees it.
 */
static int sacred_mem_cm_handler(struct rdma_cm_id *id,
				 struct rdma_cm_event *event)
{
	if (!id->context)
		return 0;
	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sacred_connreq_queue(id->context, id, event);
	if (id->qp)
		return sacred_ep_cm_event(id, event);
	return sacred_connreq_event(id->context, id, event);
}

/*
 * The address an instance listens on when the admin gave none: the IPv4
 * address of the port's first RoCE v2 GID.
 */
static int sacred_mem_default_addr(struct sacred_dev *sdev, u32 port,
				   struct sockaddr_in *sin)
{
	struct ib_device *ibdev = sdev->ibdev;
	const struct ib_gid_attr *attr;
	int i, len;

	len = ibdev->port_data[port].immutable.gid_tbl_len;
	for (i = 0; i < len; i++) {
		struct in6_addr *gid;
		bool found;

		attr = rdma_get_gid_attr(ibdev, port, i);
		if (IS_ERR(attr))
			continue;
		gid = (struct in6_addr *)attr->gid.raw;
		found = attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
			ipv6_addr_v4mapped(gid);
		if (found) {
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = gid->s6_addr32[3];
		}
		rdma_put_gid_attr(attr);
		if (found)
			return 0;
	}
	return -EADDRNOTAVAIL;
}

static int sacred_mem_listen(struct sacred_mem *mem,
			     struct netlink_ext_ack *extack)
{
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, sacred_mem_cm_handler, mem,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		NL_SET_ERR_MSG(extack, "cannot create an rdma_cm id");
		return PTR_ERR(id);
	}

	ret = rdma_bind_addr(id, (struct sockaddr *)&mem->addr);
	if (ret) {
		NL_SET_ERR_MSG(extack,
			       "cannot bind the address: in use or not local");
		goto err_destroy;
	}
	if (id->device != mem->sdev->ibdev || id->port_num != mem->port) {
		NL_SET_ERR_MSG(extack,
			       "the address does not belong to this device and port");
		ret = -EADDRNOTAVAIL;
		goto err_destroy;
	}

	ret = rdma_listen(id, SACRED_LISTEN_BACKLOG);
	if (ret) {
		NL_SET_ERR_MSG(extack, "rdma_listen failed");
		goto err_destroy;
	}

	/* Learn the port rdma_cm chose if the admin asked for any (0). */
	memcpy(&mem->addr, &id->route.addr.src_addr, sizeof(mem->addr));
	mem->listen_id = id;
	return 0;

err_destroy:
	rdma_destroy_id(id);
	return ret;
}

/**
 * sacred_mem_create() - create a memory instance and start listening
 * @sdev: device to live on
 * @port: RDMA port number on @sdev
 * @id: wanted id, or U32_MAX for the lowest free one
 * @addr: AF_INET or AF_INET6 address to listen on, or NULL for the port's
 *	RoCE v2 IPv4 address
 * @cm_port: rdma_cm port (host order); 0 lets rdma_cm pick one
 * @mem_cap: bytes of region memory the instance may allocate
 * @key: master key (already checked: SACRED_KEY_MIN..MAX bytes), or NULL
 * @key_len: bytes in @key
 * @extack: where to explain a failure
 * @memp: the new instance on success
 *
 * Context: sacred_lock held.
 * Return: 0 or a negative errno, with an extack message.
 */
int sacred_mem_create(struct sacred_dev *sdev, u32 port, u32 id,
		      const struct sockaddr *addr, u16 cm_port, u64 mem_cap,
		      const void *key, unsigned int key_len,
		      struct netlink_ext_ack *extack, struct sacred_mem **memp)
{
	struct sacred_mem *mem;
	int ret;

	lockdep_assert_held(&sacred_lock);

	if (!rdma_is_port_valid(sdev->ibdev, port)) {
		NL_SET_ERR_MSG(extack, "no such port on this device");
		return -EINVAL;
	}

	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem)
		return -ENOMEM;
	mem->sdev = sdev;
	mem->port = port;
	mem->state = SACRED_MEM_UP;
	mem->mem_cap = mem_cap;
	sacred_mem_charge(mem, sizeof(*mem));
	mutex_init(&mem->lock);
	spin_lock_init(&mem->cq_lock);
	init_waitqueue_head(&mem->cq_wq);
	INIT_LIST_HEAD(&mem->cq_repairs);
	xa_init_flags(&mem->regions, XA_FLAGS_ALLOC);
	xa_init(&mem->peers);
	INIT_LIST_HEAD(&mem->fenced);
	sacred_connreq_init(mem);
	/* Before the listener exists: no process ever gets in unproven. */
	if (key) {
		ret = sacred_mem_set_key(mem, key, key_len);
		if (ret) {
			NL_SET_ERR_MSG(extack,
				       "cannot set up HMAC-SHA256 for the key");
			goto err_free;
		}
	}

	if (addr) {
		memcpy(&mem->addr, addr, addr->sa_family == AF_INET6 ?
		       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	} else {
		ret = sacred_mem_default_addr(sdev, port,
					      (struct sockaddr_in *)&mem->addr);
		if (ret) {
			NL_SET_ERR_MSG(extack,
				       "port has no RoCE v2 IPv4 address; give one");
			goto err_free;
		}
	}
	if (mem->addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&mem->addr)->sin6_port = htons(cm_port);
	else
		((struct sockaddr_in *)&mem->addr)->sin_port = htons(cm_port);

	if (id != U32_MAX) {
		mem->id = id;
		ret = xa_insert(&sacred_mems, id, mem, GFP_KERNEL);
		if (ret == -EBUSY) {
			NL_SET_ERR_MSG(extack, "memory instance id in use");
			ret = -EEXIST;
		}
	} else {
		ret = xa_alloc_cyclic(&sacred_mems, &mem->id, mem,
				      XA_LIMIT(0, U32_MAX - 1),
				      &sacred_mem_next_id, GFP_KERNEL);
		if (ret == -EBUSY)
			NL_SET_ERR_MSG(extack, "no free memory instance id");
	}
	if (ret < 0)	/* xa_alloc_cyclic(): 1 if the ids wrapped */
		goto err_free;

	ret = sacred_mem_listen(mem, extack);
	if (ret)
		goto err_erase;

	sacred_mem_gen++;
	atomic_inc(&sacred_live.mems);
	*memp = mem;
	return 0;

err_erase:
	xa_erase(&sacred_mems, mem->id);
err_free:
	sacred_auth_release(&mem->auth);
	kfree_sensitive(mem);
	return ret;
}

/* Set @mem's state where connect answers read it: under mem->lock. */
static void sacred_mem_mark(struct sacred_mem *mem, u8 state)
{
	sacred_mem_lock(mem);
	mem->state = state;
	sacred_mem_unlock(mem);
}

/**
 * sacred_mem_set_state() - crash an instance on purpose, or bring it back
 * @mem: the instance
 * @state: %SACRED_MEM_DOWN or %SACRED_MEM_UP
 * @extack: where to explain a failure
 *
 * Down: the listener goes, so nobody new arrives, then every connection,
 * each drained first; regions, ACLs and grants stay. A process's MRs stay
 * registered, but no QP of its PD exists until it connects again, and a
 * revoke in the meantime replaces them. Up: listen again on the same
 * address and port.
 *
 * Context: sacred_lock held.
 * Return: 0 or a negative errno, with an extack message.
 */
int sacred_mem_set_state(struct sacred_mem *mem, u8 state,
			 struct netlink_ext_ack *extack)
{
	int ret;

	lockdep_assert_held(&sacred_lock);
	if (state == mem->state)
		return 0;

	if (state == SACRED_MEM_DOWN) {
		sacred_mem_mark(mem, SACRED_MEM_DOWN);
		rdma_destroy_id(mem->listen_id);
		mem->listen_id = NULL;
		sacred_ep_release_all(mem);
		return 0;
	}

	/* Up first: a request that comes as soon as it listens is served. */
	sacred_mem_mark(mem, SACRED_MEM_UP);
	ret = sacred_mem_listen(mem, extack);
	if (ret)
		sacred_mem_mark(mem, SACRED_MEM_DOWN);
	return ret;
}

/**
 * sacred_mem_destroy() - stop listening, free the regions and the instance
 * @mem: the instance; freed on return
 *
 * Context: sacred_lock held; may sleep (waits for rdma_cm handlers).
 */
void sacred_mem_destroy(struct sacred_mem *mem)
{
	lockdep_assert_held(&sacred_lock);

	/*
	 * No new process can arrive (a connect request queued already is
	 * refused when its work runs), then none stays, then nothing is
	 * left.
	 */
	sacred_mem_mark(mem, SACRED_MEM_DOWN);
	if (mem->listen_id)
		rdma_destroy_id(mem->listen_id);
	sacred_ep_release_all(mem);
	sacred_region_destroy_all(mem);
	xa_destroy(&mem->regions);
	sacred_mem_peers_free(mem);
	/* Every object gave back what it was charged: the count is right. */
	WARN_ONCE(atomic64_read(&mem->meta) !=
		  kmalloc_size_roundup(sizeof(*mem)) ||
		  atomic_read(&mem->nr_conns) || atomic_read(&mem->nr_mrs) ||
		  atomic64_read(&mem->mr_pages),
		  "sacred: instance %u left meta %lld (own %zu) conns %d mrs %d mr_pages %lld\n",
		  mem->id, (long long)atomic64_read(&mem->meta),
		  kmalloc_size_roundup(sizeof(*mem)),
		  atomic_read(&mem->nr_conns), atomic_read(&mem->nr_mrs),
		  (long long)atomic64_read(&mem->mr_pages));
	sacred_auth_release(&mem->auth);
	xa_erase(&sacred_mems, mem->id);
	sacred_mem_gen++;
	kfree(mem);
	atomic_dec(&sacred_live.mems);
}

/**
 * sacred_mem_find() - look up a memory instance by id
 * @id: instance id
 *
 * Context: sacred_lock held; the result is valid while it stays held.
 * Return: the instance or NULL.
 */
struct sacred_mem *sacred_mem_find(u32 id)
{
	lockdep_assert_held(&sacred_lock);
	return xa_load(&sacred_mems, id);
}

/**
 * sacred_mem_next() - the instance with the lowest id >= *@id, for dumps
 * @id: in: where to start; out: the id found
 *
 * Context: sacred_lock held.
 * Return: the instance or NULL when there is none left.
 */
struct sacred_mem *sacred_mem_next(u32 *id)
{
	unsigned long index = *id;
	struct sacred_mem *mem;

	lockdep_assert_held(&sacred_lock);
	mem = xa_find(&sacred_mems, &index, U32_MAX, XA_PRESENT);
	if (mem)
		*id = index;
	return mem;
}

/**
 * sacred_mem_destroy_dev() - destroy every instance living on a device
 * @sdev: the device that is going away
 *
 * Each destruction is announced on the events multicast group.
 *
 * Context: sacred_lock held.
 */
void sacred_mem_destroy_dev(struct sacred_dev *sdev)
{
	struct sacred_mem *mem;
	unsigned long index;

	lockdep_assert_held(&sacred_lock);
	xa_for_each(&sacred_mems, index, mem) {
		if (mem->sdev != sdev)
			continue;
		sacred_notify_mem(mem, SACRED_CMD_MEM_DEL);
		sacred_mem_destroy(mem);
	}
}

/**
 * sacred_mem_exit() - release the instance table at module exit
 *
 * Every instance lives on a device, and every device has been removed by
 * then, so the table must be empty.
 */
void sacred_mem_exit(void)
{
	WARN_ON(!xa_empty(&sacred_mems));
	xa_destroy(&sacred_mems);
}

/**
 * sacred_mem_fill() - put an instance's attributes into a netlink message
 * @skb: the message, its header put (netlink.c)
 * @mem: the instance
 *
 * Context: sacred_lock held.
 * Return: 0, or -EMSGSIZE if they do not fit: the caller cancels the
 * message.
 */
int sacred_mem_fill(struct sk_buff *skb, struct sacred_mem *mem)
{
	struct ib_device *ibdev = mem->sdev->ibdev;
	const void *addr;
	int addr_len;
	u16 cm_port;

	if (mem->addr.ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (void *)&mem->addr;

		addr = &sin6->sin6_addr;
		addr_len = sizeof(sin6->sin6_addr);
		cm_port = ntohs(sin6->sin6_port);
	} else {
		const struct sockaddr_in *sin = (void *)&mem->addr;

		addr = &sin->sin_addr;
		addr_len = sizeof(sin->sin_addr);
		cm_port = ntohs(sin->sin_port);
	}

	if (nla_put_u32(skb, SACRED_ATTR_MEM_ID, mem->id) ||
	    nla_put_u32(skb, SACRED_ATTR_DEV_INDEX, ibdev->index) ||
	    nla_put_string(skb, SACRED_ATTR_DEV_NAME, ibdev->name) ||
	    nla_put_u32(skb, SACRED_ATTR_PORT_INDEX, mem->port) ||
	    nla_put(skb, SACRED_ATTR_MEM_ADDR, addr_len, addr) ||
	    nla_put_u16(skb, SACRED_ATTR_MEM_PORT, cm_port) ||
	    nla_put_u8(skb, SACRED_ATTR_MEM_STATE, mem->state) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_MEM_MEM_CAP, mem->mem_cap,
			      SACRED_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_MEM_MEM_USED, mem->mem_used,
			      SACRED_ATTR_PAD) ||
	    nla_put_u32(skb, SACRED_ATTR_MEM_NR_REGIONS, mem->nr_regions) ||
	    nla_put_u8(skb, SACRED_ATTR_MEM_KEYED, sacred_mem_keyed(mem)) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_MEM_META_BYTES,
			      atomic64_read(&mem->meta), SACRED_ATTR_PAD) ||
	    nla_put_u32(skb, SACRED_ATTR_MEM_NR_PEERS,
			READ_ONCE(mem->nr_peers)) ||
	    nla_put_u32(skb, SACRED_ATTR_MEM_NR_CONNS,
			atomic_read(&mem->nr_conns)) ||
	    nla_put_u32(skb, SACRED_ATTR_MEM_NR_MRS,
			atomic_read(&mem->nr_mrs)) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_MEM_MR_PAGES,
			      atomic64_read(&mem->mr_pages), SACRED_ATTR_PAD))
		return -EMSGSIZE;
	return 0;
}
