// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - the generic netlink family "sacred".
 *
 * This file owns the control plane's ABI (include/uapi/linux/sacred.h): the
 * family, one op table with a strict policy per op, message building, and
 * the events multicast group.
 *
 * Conventions:
 *   - every op has its own policy over the whole attribute space; an
 *     attribute an op does not take is NLA_UNSPEC there, so strict
 *     validation rejects it ("Unsupported attribute") instead of ignoring
 *     it;
 *   - ops that change state carry GENL_ADMIN_PERM (CAP_NET_ADMIN);
 *   - every error the caller can cause comes with an extack message;
 *   - dumps keep their cursor in cb->args[0] and set cb->seq from the
 *     object generation, so an interrupted dump is flagged
 *     NLM_F_DUMP_INTR instead of silently skipping or repeating;
 *   - the family lives in init_net only (netnsok false).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <net/genetlink.h>
#include <rdma/ib_cache.h>
#include "sacred.h"

enum sacred_nl_mcgrp {
	SACRED_NL_MCGRP_EVENTS,
};

static struct genl_family sacred_nl_family;

/* ---------------------------------------------------------------- devices */

static int sacred_nl_port_fill(struct sk_buff *skb, struct ib_device *ibdev,
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

static int sacred_nl_dev_fill(struct sk_buff *skb, struct sacred_dev *sdev,
			      u32 portid, u32 seq, int flags,
			      struct netlink_callback *cb)
{
	struct ib_device *ibdev = sdev->ibdev;
	struct nlattr *ports;
	void *hdr;
	u32 port;

	hdr = genlmsg_put(skb, portid, seq, &sacred_nl_family, flags,
			  SACRED_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);

	if (nla_put_u32(skb, SACRED_ATTR_DEV_INDEX, ibdev->index) ||
	    nla_put_string(skb, SACRED_ATTR_DEV_NAME, dev_name(&ibdev->dev)) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_DEV_NODE_GUID,
			      be64_to_cpu(ibdev->node_guid), SACRED_ATTR_PAD) ||
	    nla_put_u32(skb, SACRED_ATTR_DEV_NUM_PORTS, rdma_end_port(ibdev)))
		goto cancel;

	ports = nla_nest_start(skb, SACRED_ATTR_DEV_PORTS);
	if (!ports)
		goto cancel;
	rdma_for_each_port(ibdev, port)
		if (sacred_nl_port_fill(skb, ibdev, port))
			goto cancel;
	nla_nest_end(skb, ports);

	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int sacred_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *name = info->attrs[SACRED_ATTR_DEV_NAME];
	struct nlattr *index = info->attrs[SACRED_ATTR_DEV_INDEX];
	struct sacred_dev *sdev;
	struct sk_buff *msg;
	int ret;

	if (!name && !index) {
		GENL_SET_ERR_MSG(info, "DEV_NAME or DEV_INDEX is required");
		return -EINVAL;
	}

	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	mutex_lock(&sacred_lock);
	if (name)
		sdev = sacred_dev_find_by_name(nla_data(name));
	else
		sdev = sacred_dev_find_by_index(nla_get_u32(index));
	if (sdev && name && index &&
	    sdev->ibdev->index != nla_get_u32(index))
		sdev = NULL;
	if (!sdev) {
		NL_SET_ERR_MSG_ATTR(info->extack, name ?: index,
				    "no such RDMA device");
		ret = -ENODEV;
		goto err_unlock;
	}
	ret = sacred_nl_dev_fill(msg, sdev, info->snd_portid, info->snd_seq,
				 0, NULL);
	if (ret)
		goto err_unlock;
	mutex_unlock(&sacred_lock);

	return genlmsg_reply(msg, info);

err_unlock:
	mutex_unlock(&sacred_lock);
	nlmsg_free(msg);
	return ret;
}

static int sacred_nl_dev_get_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	long skip = cb->args[0], idx = 0;
	struct sacred_dev *sdev;
	int ret = 0;

	mutex_lock(&sacred_lock);
	cb->seq = sacred_dev_gen;
	list_for_each_entry(sdev, &sacred_devs, list) {
		if (idx++ < skip)
			continue;
		ret = sacred_nl_dev_fill(skb, sdev,
					 NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI, cb);
		if (ret) {
			idx--;
			break;
		}
	}
	mutex_unlock(&sacred_lock);

	cb->args[0] = idx;
	/* A full skb ends this part of the dump; anything else is an error. */
	return ret == -EMSGSIZE ? skb->len : ret ?: skb->len;
}

/* --------------------------------------------------------------- memories */

static int sacred_nl_mem_fill(struct sk_buff *skb, struct sacred_mem *mem,
			      u8 cmd, u32 portid, u32 seq, int flags,
			      struct netlink_callback *cb)
{
	struct ib_device *ibdev = mem->sdev->ibdev;
	const void *addr;
	int addr_len;
	u16 cm_port;
	void *hdr;

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

	hdr = genlmsg_put(skb, portid, seq, &sacred_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);

	if (nla_put_u32(skb, SACRED_ATTR_MEM_ID, mem->id) ||
	    nla_put_u32(skb, SACRED_ATTR_DEV_INDEX, ibdev->index) ||
	    nla_put_string(skb, SACRED_ATTR_DEV_NAME, dev_name(&ibdev->dev)) ||
	    nla_put_u32(skb, SACRED_ATTR_PORT_INDEX, mem->port) ||
	    nla_put(skb, SACRED_ATTR_MEM_ADDR, addr_len, addr) ||
	    nla_put_u16(skb, SACRED_ATTR_MEM_PORT, cm_port) ||
	    nla_put_u8(skb, SACRED_ATTR_MEM_STATE, mem->state)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}

	genlmsg_end(skb, hdr);
	return 0;
}

/**
 * sacred_nl_notify_mem() - announce a memory instance on the events group
 * @mem: the instance
 * @cmd: %SACRED_CMD_MEM_NEW or %SACRED_CMD_MEM_DEL
 *
 * Best effort: events are lost, as netlink multicast allows, when memory
 * is short or a listener's socket is full.
 *
 * Context: sacred_lock held.
 */
void sacred_nl_notify_mem(struct sacred_mem *mem, u8 cmd)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&sacred_nl_family, &init_net,
				SACRED_NL_MCGRP_EVENTS))
		return;

	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (sacred_nl_mem_fill(msg, mem, cmd, 0, 0, 0, NULL)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&sacred_nl_family, msg, 0, SACRED_NL_MCGRP_EVENTS,
			  GFP_KERNEL);
}

static int sacred_nl_mem_reply(struct sacred_mem *mem, u8 cmd,
			       struct genl_info *info)
{
	struct sk_buff *msg;
	int ret;

	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	ret = sacred_nl_mem_fill(msg, mem, cmd, info->snd_portid,
				 info->snd_seq, 0, NULL);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static int sacred_nl_mem_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *addr_attr = info->attrs[SACRED_ATTR_MEM_ADDR];
	struct sockaddr_storage ss = {};
	struct sockaddr *addr = NULL;
	struct sacred_dev *sdev;
	struct sacred_mem *mem;
	u32 id = U32_MAX, port = 1;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_DEV_NAME)) {
		GENL_SET_ERR_MSG(info, "DEV_NAME is required");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_MEM_PORT)) {
		GENL_SET_ERR_MSG(info, "MEM_PORT is required (0: any)");
		return -EINVAL;
	}

	if (info->attrs[SACRED_ATTR_MEM_ID]) {
		id = nla_get_u32(info->attrs[SACRED_ATTR_MEM_ID]);
		if (id == U32_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[SACRED_ATTR_MEM_ID],
					    "memory instance id 0xffffffff is reserved");
			return -EINVAL;
		}
	}
	if (info->attrs[SACRED_ATTR_PORT_INDEX])
		port = nla_get_u32(info->attrs[SACRED_ATTR_PORT_INDEX]);

	if (addr_attr) {
		if (nla_len(addr_attr) == sizeof(struct in_addr)) {
			struct sockaddr_in *sin = (void *)&ss;

			sin->sin_family = AF_INET;
			nla_memcpy(&sin->sin_addr, addr_attr,
				   sizeof(sin->sin_addr));
		} else if (nla_len(addr_attr) == sizeof(struct in6_addr)) {
			struct sockaddr_in6 *sin6 = (void *)&ss;

			sin6->sin6_family = AF_INET6;
			nla_memcpy(&sin6->sin6_addr, addr_attr,
				   sizeof(sin6->sin6_addr));
		} else {
			NL_SET_ERR_MSG_ATTR(info->extack, addr_attr,
					    "address must be 4 (IPv4) or 16 (IPv6) bytes");
			return -EINVAL;
		}
		addr = (struct sockaddr *)&ss;
	}

	mutex_lock(&sacred_lock);
	sdev = sacred_dev_find_by_name(nla_data(info->attrs[SACRED_ATTR_DEV_NAME]));
	if (!sdev) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[SACRED_ATTR_DEV_NAME],
				    "no such RDMA device");
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = sacred_mem_create(sdev, port, id, addr,
				nla_get_u16(info->attrs[SACRED_ATTR_MEM_PORT]),
				info->extack, &mem);
	if (ret)
		goto out_unlock;

	sacred_nl_notify_mem(mem, SACRED_CMD_MEM_NEW);
	ret = sacred_nl_mem_reply(mem, SACRED_CMD_MEM_NEW, info);
	/* The instance exists either way; a lost reply is not a failure. */
	ret = 0;
out_unlock:
	mutex_unlock(&sacred_lock);
	return ret;
}

static struct sacred_mem *sacred_nl_mem_lookup(struct genl_info *info)
{
	struct sacred_mem *mem;

	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_MEM_ID)) {
		GENL_SET_ERR_MSG(info, "MEM_ID is required");
		return ERR_PTR(-EINVAL);
	}
	mem = sacred_mem_find(nla_get_u32(info->attrs[SACRED_ATTR_MEM_ID]));
	if (!mem) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[SACRED_ATTR_MEM_ID],
				    "no such memory instance");
		return ERR_PTR(-ENOENT);
	}
	return mem;
}

static int sacred_nl_mem_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sacred_mem *mem;
	int ret = 0;

	mutex_lock(&sacred_lock);
	mem = sacred_nl_mem_lookup(info);
	if (IS_ERR(mem)) {
		ret = PTR_ERR(mem);
		goto out_unlock;
	}
	sacred_nl_notify_mem(mem, SACRED_CMD_MEM_DEL);
	sacred_mem_destroy(mem);
out_unlock:
	mutex_unlock(&sacred_lock);
	return ret;
}

static int sacred_nl_mem_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sacred_mem *mem;
	int ret;

	mutex_lock(&sacred_lock);
	mem = sacred_nl_mem_lookup(info);
	if (IS_ERR(mem))
		ret = PTR_ERR(mem);
	else
		ret = sacred_nl_mem_reply(mem, SACRED_CMD_MEM_GET, info);
	mutex_unlock(&sacred_lock);
	return ret;
}

static int sacred_nl_mem_get_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	struct sacred_mem *mem;
	u32 id = cb->args[0];
	int ret = 0;

	/* args[1] marks the end: id U32_MAX is never used, so no overflow. */
	if (cb->args[1])
		return 0;

	mutex_lock(&sacred_lock);
	cb->seq = sacred_mem_gen;
	while ((mem = sacred_mem_next(&id))) {
		ret = sacred_nl_mem_fill(skb, mem, SACRED_CMD_MEM_GET,
					 NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI, cb);
		if (ret)
			break;
		id++;
	}
	mutex_unlock(&sacred_lock);

	cb->args[0] = id;
	if (!mem)
		cb->args[1] = 1;
	return ret == -EMSGSIZE ? skb->len : ret ?: skb->len;
}

/* ----------------------------------------------------------------- family */

static const struct nla_policy sacred_dev_get_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_DEV_INDEX]	= { .type = NLA_U32 },
	[SACRED_ATTR_DEV_NAME]	= { .type = NLA_NUL_STRING,
				    .len = SACRED_NAME_MAX - 1 },
};

static const struct nla_policy sacred_mem_new_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_MEM_ID]	 = { .type = NLA_U32 },
	[SACRED_ATTR_DEV_NAME]	 = { .type = NLA_NUL_STRING,
				     .len = SACRED_NAME_MAX - 1 },
	[SACRED_ATTR_PORT_INDEX] = NLA_POLICY_RANGE(NLA_U32, 1, 255),
	[SACRED_ATTR_MEM_ADDR]	 = { .type = NLA_BINARY,
				     .len = sizeof(struct in6_addr) },
	[SACRED_ATTR_MEM_PORT]	 = { .type = NLA_U16 },
};

static const struct nla_policy sacred_mem_id_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_MEM_ID]	= { .type = NLA_U32 },
};

static const struct genl_ops sacred_nl_ops[] = {
	{
		.cmd		= SACRED_CMD_DEV_GET,
		.doit		= sacred_nl_dev_get_doit,
		.dumpit		= sacred_nl_dev_get_dumpit,
		.policy		= sacred_dev_get_policy,
		.maxattr	= SACRED_ATTR_MAX,
	},
	{
		.cmd		= SACRED_CMD_MEM_NEW,
		.doit		= sacred_nl_mem_new_doit,
		.policy		= sacred_mem_new_policy,
		.maxattr	= SACRED_ATTR_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= SACRED_CMD_MEM_DEL,
		.doit		= sacred_nl_mem_del_doit,
		.policy		= sacred_mem_id_policy,
		.maxattr	= SACRED_ATTR_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= SACRED_CMD_MEM_GET,
		.doit		= sacred_nl_mem_get_doit,
		.dumpit		= sacred_nl_mem_get_dumpit,
		.policy		= sacred_mem_id_policy,
		.maxattr	= SACRED_ATTR_MAX,
	},
};

static const struct genl_multicast_group sacred_nl_mcgrps[] = {
	[SACRED_NL_MCGRP_EVENTS] = { .name = SACRED_GENL_MCGRP_EVENTS },
};

static struct genl_family sacred_nl_family __ro_after_init = {
	.name		= SACRED_GENL_NAME,
	.version	= SACRED_GENL_VERSION,
	.maxattr	= SACRED_ATTR_MAX,
	.netnsok	= false,
	.module		= THIS_MODULE,
	.ops		= sacred_nl_ops,
	.n_ops		= ARRAY_SIZE(sacred_nl_ops),
	.mcgrps		= sacred_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(sacred_nl_mcgrps),
};

/**
 * sacred_nl_init() - register the generic netlink family
 *
 * Return: 0 or a negative errno from genl_register_family().
 */
int sacred_nl_init(void)
{
	return genl_register_family(&sacred_nl_family);
}

/**
 * sacred_nl_exit() - unregister the generic netlink family
 */
void sacred_nl_exit(void)
{
	genl_unregister_family(&sacred_nl_family);
}
