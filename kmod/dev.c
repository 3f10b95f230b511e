// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - RDMA device tracking.
 *
 * This file owns struct sacred_dev: the ib_client whose add and remove
 * callbacks follow `rdma link add/del` (and hot-unplug of real HCAs) live.
 * A device appears here when ib_core registers it and disappears before
 * ib_core lets it go: remove first destroys every memory instance on the
 * device, so nothing of ours holds a verbs object across removal.
 *
 * rdma_cm is an ib_client too and registered before us (we use its
 * symbols); clients are removed in LIFO order, so our remove runs while
 * rdma_cm still knows the device and our rdma_destroy_id() calls are legal.
 *
 * sacred_dev_fill() says what a device's netlink messages carry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include "dev.h"
#include "mem.h"

LIST_HEAD(sacred_devs);
/* Bumped on every change of sacred_devs; lets dumps detect interruption. */
unsigned int sacred_dev_gen;

static struct ib_client sacred_ib_client;

static int sacred_ib_add(struct ib_device *ibdev)
{
	struct sacred_dev *sdev;

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	sdev->ibdev = ibdev;

	mutex_lock(&sacred_lock);
	list_add_tail(&sdev->list, &sacred_devs);
	sacred_dev_gen++;
	mutex_unlock(&sacred_lock);

	atomic_inc(&sacred_live.devs);
	ib_set_client_data(ibdev, &sacred_ib_client, sdev);
	return 0;
}

static void sacred_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct sacred_dev *sdev = client_data;

	mutex_lock(&sacred_lock);
	sacred_mem_destroy_dev(sdev);
	list_del(&sdev->list);
	sacred_dev_gen++;
	mutex_unlock(&sacred_lock);

	kfree(sdev);
	atomic_dec(&sacred_live.devs);
}

static struct ib_client sacred_ib_client = {
	.name	= "sacred",
	.add	= sacred_ib_add,
	.remove	= sacred_ib_remove,
};

/**
 * sacred_dev_find_by_name() - look up an attached device by its name
 * @name: RDMA device name, e.g. "rxe0"
 *
 * Context: sacred_lock held; the result is valid while it stays held.
 * Return: the device or NULL.
 */
struct sacred_dev *sacred_dev_find_by_name(const char *name)
{
	struct sacred_dev *sdev;

	lockdep_assert_held(&sacred_lock);
	list_for_each_entry(sdev, &sacred_devs, list)
		if (!strcmp(sdev->ibdev->name, name))
			return sdev;
	return NULL;
}

/**
 * sacred_dev_find_by_index() - look up an attached device by its index
 * @index: RDMA device index, as `rdma dev` shows it
 *
 * Context: sacred_lock held; the result is valid while it stays held.
 * Return: the device or NULL.
 */
struct sacred_dev *sacred_dev_find_by_index(u32 index)
{
	struct sacred_dev *sdev;

	lockdep_assert_held(&sacred_lock);
	list_for_each_entry(sdev, &sacred_devs, list)
		if (sdev->ibdev->index == index)
			return sdev;
	return NULL;
}

/**
 * sacred_dev_init() - attach to every present and future RDMA device
 *
 * Return: 0 or a negative errno from ib_register_client().
 */
int sacred_dev_init(void)
{
	return ib_register_client(&sacred_ib_client);
}

/**
 * sacred_dev_exit() - detach from all devices; runs remove for each
 */
void sacred_dev_exit(void)
{
	ib_unregister_client(&sacred_ib_client);
}

/* One port of a device, a nest in the device's message. */
static int sacred_dev_port_fill(struct sk_buff *skb, struct ib_device *ibdev,
				u32 port)
{
	const struct ib_gid_attr *gid_attr;
	struct ib_port_attr attr;
	struct nlattr *nest;
	u8 link_layer;

	nest = nla_nest_start(skb, SACRED_ATTR_PORT);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, SACRED_ATTR_PORT_INDEX, port))
		goto cancel;

	if (!ib_query_port(ibdev, port, &attr)) {
		if (nla_put_u8(skb, SACRED_ATTR_PORT_STATE, attr.state) ||
		    nla_put_u8(skb, SACRED_ATTR_PORT_PHYS_STATE,
			       attr.phys_state) ||
		    nla_put_u32(skb, SACRED_ATTR_PORT_ACTIVE_MTU,
				ib_mtu_enum_to_int(attr.active_mtu)))
			goto cancel;
	}

	switch (rdma_port_get_link_layer(ibdev, port)) {
	case IB_LINK_LAYER_INFINIBAND:
		link_layer = SACRED_LINK_INFINIBAND;
		break;
	case IB_LINK_LAYER_ETHERNET:
		link_layer = SACRED_LINK_ETHERNET;
		break;
	default:
		link_layer = SACRED_LINK_UNSPECIFIED;
	}
	if (nla_put_u8(skb, SACRED_ATTR_PORT_LINK_LAYER, link_layer))
		goto cancel;

	/* The netdev of a RoCE/iWARP port is the one behind its GID 0. */
	gid_attr = rdma_get_gid_attr(ibdev, port, 0);
	if (!IS_ERR(gid_attr)) {
		struct net_device *ndev;
		int ret = 0;

		rcu_read_lock();
		ndev = rdma_read_gid_attr_ndev_rcu(gid_attr);
		if (!IS_ERR(ndev))
			ret = nla_put_string(skb, SACRED_ATTR_PORT_NETDEV,
					     ndev->name);
		rcu_read_unlock();
		rdma_put_gid_attr(gid_attr);
		if (ret)
			goto cancel;
	}

	nla_nest_end(skb, nest);
	return 0;

cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/**
 * sacred_dev_fill() - put a device's attributes into a netlink message
 * @skb: the message, its header put (netlink.c)
 * @sdev: the device
 *
 * Context: sacred_lock held.
 * Return: 0, or -EMSGSIZE if they do not fit: the caller cancels the
 * message.
 */
int sacred_dev_fill(struct sk_buff *skb, struct sacred_dev *sdev)
{
	struct ib_device *ibdev = sdev->ibdev;
	struct nlattr *ports;
	u32 port;

	if (nla_put_u32(skb, SACRED_ATTR_DEV_INDEX, ibdev->index) ||
	    nla_put_string(skb, SACRED_ATTR_DEV_NAME, ibdev->name) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_DEV_NODE_GUID,
			      be64_to_cpu(ibdev->node_guid), SACRED_ATTR_PAD) ||
	    nla_put_u32(skb, SACRED_ATTR_DEV_NUM_PORTS, rdma_end_port(ibdev)))
		return -EMSGSIZE;

	ports = nla_nest_start(skb, SACRED_ATTR_DEV_PORTS);
	if (!ports)
		return -EMSGSIZE;
	rdma_for_each_port(ibdev, port)
		if (sacred_dev_port_fill(skb, ibdev, port))
			return -EMSGSIZE;
	nla_nest_end(skb, ports);
	return 0;
}
