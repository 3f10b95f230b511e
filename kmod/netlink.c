// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - the generic netlink family "sacred".
 *
 * This file owns the control plane's ABI (include/uapi/linux/sacred.h): the
 * family, one op table with a strict policy per op, the commands' handlers,
 * message headers, and the events multicast group. What an object's
 * messages say is put by a fill function next to the object -
 * sacred_dev_fill() (dev.c), sacred_mem_fill() (mem.c),
 * sacred_region_fill() (region.c), sacred_peer_fill() (peer.c),
 * sacred_perm_fill() (perm.c) - between sacred_nl_put() and
 * sacred_nl_end() here. Each object kind is one struct sacred_nl_obj
 * (fill, message size, lookup, destroy): one message frame, reply, event,
 * GET and DEL serve every kind. It is the top of the module: it calls
 * every object file, and none calls it; their events come through the
 * table it registers with notify.c.
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

#include <linux/random.h>
#include <net/genetlink.h>
#include "auth.h"
#include "bpf.h"
#include "dev.h"
#include "mem.h"
#include "netlink.h"
#include "notify.h"
#include "peer.h"
#include "perm.h"
#include "policy.h"
#include "region.h"

enum sacred_nl_mcgrp {
	SACRED_NL_MCGRP_EVENTS,
};

static struct genl_family sacred_nl_family;

/*
 * An optional id attribute of a *_NEW command: absent means "the lowest
 * free one" (U32_MAX inside the module), so U32_MAX itself is reserved.
 */
static int sacred_nl_opt_id(struct genl_info *info, int type, u32 *id)
{
	struct nlattr *attr = info->attrs[type];

	*id = U32_MAX;
	if (!attr)
		return 0;
	*id = nla_get_u32(attr);
	if (*id == U32_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "id 0xffffffff is reserved");
		return -EINVAL;
	}
	return 0;
}

/*
 * A message about one object: the family's header for @cmd - checked
 * against the dump's generation in a dump (@cb) - then the attributes
 * the object's own fill function puts (sacred_dev_fill(), sacred_mem_fill(),
 * ... next to each object), closed by sacred_nl_end().
 */
static void *sacred_nl_put(struct sk_buff *skb, u32 portid, u32 seq,
			   int flags, u8 cmd, struct netlink_callback *cb)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &sacred_nl_family, flags, cmd);
	if (hdr && cb)
		genl_dump_check_consistent(cb, hdr);
	return hdr;
}

/* End @hdr's message, or take it out of @skb if its fill failed (@ret). */
static int sacred_nl_end(struct sk_buff *skb, void *hdr, int ret)
{
	if (ret) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* ---------------------------------------------------------------- objects */

/**
 * struct sacred_nl_obj - an object kind as messages carry it
 * @fill: put the object's attributes; @dump: in a dump, where the message
 *	is shared with other objects (a region then leaves its ACL out)
 * @size: the message size the object needs, or NULL for NLMSG_GOODSIZE
 * @lookup: the object a GET or DEL request names, or an ERR_PTR with the
 *	extack set (kinds without GET/DEL doit: NULL)
 * @destroy: delete it (kinds without DEL: NULL)
 * @del_cmd: the event a DEL announces
 *
 * One message frame (sacred_nl_obj_fill()), one reply, one event, one
 * GET and one DEL per kind come from this table; the attributes, the
 * lookups and the destruction are the object files'.
 */
struct sacred_nl_obj {
	int (*fill)(struct sk_buff *skb, void *obj, bool dump);
	size_t (*size)(void *obj);
	void *(*lookup)(struct genl_info *info);
	void (*destroy)(void *obj);
	u8 del_cmd;
};

static void *sacred_nl_mem_find(struct genl_info *info);
static void *sacred_nl_region_find(struct genl_info *info);

static void sacred_nl_mem_destroy(void *obj)
{
	sacred_mem_destroy(obj);
}

static void sacred_nl_region_destroy(void *obj)
{
	sacred_region_destroy(obj);
}

static int sacred_nl_dev_attrs(struct sk_buff *skb, void *obj, bool dump)
{
	return sacred_dev_fill(skb, obj);
}

static int sacred_nl_mem_attrs(struct sk_buff *skb, void *obj, bool dump)
{
	return sacred_mem_fill(skb, obj);
}

/*
 * Dumps leave the ACL out: up to 1024 entries do not fit a dump buffer
 * next to other regions. A reply or an event carries it, in a message
 * sized for it.
 */
static int sacred_nl_region_attrs(struct sk_buff *skb, void *obj, bool dump)
{
	return sacred_region_fill(skb, obj, !dump);
}

static size_t sacred_nl_region_size(void *obj)
{
	return NLMSG_DEFAULT_SIZE + sacred_region_acl_size(obj);
}

static int sacred_nl_peer_attrs(struct sk_buff *skb, void *obj, bool dump)
{
	return sacred_peer_fill(skb, obj);
}

static const struct sacred_nl_obj sacred_nl_dev = {
	.fill = sacred_nl_dev_attrs,
};

static const struct sacred_nl_obj sacred_nl_mem = {
	.fill = sacred_nl_mem_attrs,
	.lookup = sacred_nl_mem_find,
	.destroy = sacred_nl_mem_destroy,
	.del_cmd = SACRED_CMD_MEM_DEL,
};

static const struct sacred_nl_obj sacred_nl_region = {
	.fill = sacred_nl_region_attrs,
	.size = sacred_nl_region_size,
	.lookup = sacred_nl_region_find,
	.destroy = sacred_nl_region_destroy,
	.del_cmd = SACRED_CMD_REGION_DEL,
};

static const struct sacred_nl_obj sacred_nl_peer = {
	.fill = sacred_nl_peer_attrs,
};

/* One message of @kind for @obj: a reply or event (!@cb), or in a dump. */
static int sacred_nl_obj_fill(struct sk_buff *skb,
			      const struct sacred_nl_obj *kind, void *obj,
			      u8 cmd, u32 portid, u32 seq, int flags,
			      struct netlink_callback *cb)
{
	void *hdr;

	hdr = sacred_nl_put(skb, portid, seq, flags, cmd, cb);
	if (!hdr)
		return -EMSGSIZE;
	return sacred_nl_end(skb, hdr, kind->fill(skb, obj, !!cb));
}

/* The same, as the next part of the dump @cb. */
static int sacred_nl_obj_dump(struct sk_buff *skb,
			      const struct sacred_nl_obj *kind, void *obj,
			      u8 cmd, struct netlink_callback *cb)
{
	return sacred_nl_obj_fill(skb, kind, obj, cmd,
				  NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, NLM_F_MULTI, cb);
}

static struct sk_buff *sacred_nl_obj_msg(const struct sacred_nl_obj *kind,
					 void *obj)
{
	return nlmsg_new(kind->size ? kind->size(obj) : NLMSG_GOODSIZE,
			 GFP_KERNEL);
}

/* Answer the request @info with @obj. */
static int sacred_nl_obj_reply(const struct sacred_nl_obj *kind, void *obj,
			       u8 cmd, struct genl_info *info)
{
	struct sk_buff *msg;
	int ret;

	msg = sacred_nl_obj_msg(kind, obj);
	if (!msg)
		return -ENOMEM;
	ret = sacred_nl_obj_fill(msg, kind, obj, cmd, info->snd_portid,
				 info->snd_seq, 0, NULL);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/*
 * Announce @obj on the events group. Best effort: events are lost, as
 * netlink multicast allows, when memory is short or a listener's socket
 * is full.
 */
static void sacred_nl_obj_notify(const struct sacred_nl_obj *kind, void *obj,
				 u8 cmd)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&sacred_nl_family, &init_net,
				SACRED_NL_MCGRP_EVENTS))
		return;

	msg = sacred_nl_obj_msg(kind, obj);
	if (!msg)
		return;
	if (sacred_nl_obj_fill(msg, kind, obj, cmd, 0, 0, 0, NULL)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&sacred_nl_family, msg, 0, SACRED_NL_MCGRP_EVENTS,
			  GFP_KERNEL);
}

/* A GET request of @kind: answer with the object it names, as @cmd. */
static int sacred_nl_obj_get(const struct sacred_nl_obj *kind, u8 cmd,
			     struct genl_info *info)
{
	void *obj;
	int ret;

	mutex_lock(&sacred_lock);
	obj = kind->lookup(info);
	if (IS_ERR(obj))
		ret = PTR_ERR(obj);
	else
		ret = sacred_nl_obj_reply(kind, obj, cmd, info);
	mutex_unlock(&sacred_lock);
	return ret;
}

/* A DEL request of @kind: announce the object it names, then delete it. */
static int sacred_nl_obj_del(const struct sacred_nl_obj *kind,
			     struct genl_info *info)
{
	void *obj;
	int ret = 0;

	mutex_lock(&sacred_lock);
	obj = kind->lookup(info);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto out_unlock;
	}
	sacred_nl_obj_notify(kind, obj, kind->del_cmd);
	kind->destroy(obj);
out_unlock:
	mutex_unlock(&sacred_lock);
	return ret;
}

/* ---------------------------------------------------------------- devices */

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
	ret = sacred_nl_obj_fill(msg, &sacred_nl_dev, sdev, SACRED_CMD_DEV_GET,
				 info->snd_portid, info->snd_seq, 0, NULL);
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
		ret = sacred_nl_obj_dump(skb, &sacred_nl_dev, sdev,
					 SACRED_CMD_DEV_GET, cb);
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

static int sacred_nl_mem_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *key = info->attrs[SACRED_ATTR_MEM_KEY];
	struct nlattr *addr_attr = info->attrs[SACRED_ATTR_MEM_ADDR];
	struct sockaddr_storage ss = {};
	struct sockaddr *addr = NULL;
	struct sacred_dev *sdev;
	struct sacred_mem *mem;
	u64 mem_cap = SACRED_MEM_CAP_DEFAULT;
	u32 id, port = 1;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_DEV_NAME)) {
		GENL_SET_ERR_MSG(info, "DEV_NAME is required");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_MEM_PORT)) {
		GENL_SET_ERR_MSG(info, "MEM_PORT is required (0: any)");
		return -EINVAL;
	}

	ret = sacred_nl_opt_id(info, SACRED_ATTR_MEM_ID, &id);
	if (ret)
		return ret;
	if (info->attrs[SACRED_ATTR_PORT_INDEX])
		port = nla_get_u32(info->attrs[SACRED_ATTR_PORT_INDEX]);
	if (info->attrs[SACRED_ATTR_MEM_MEM_CAP])
		mem_cap = nla_get_u64(info->attrs[SACRED_ATTR_MEM_MEM_CAP]);
	if (key && (nla_len(key) < SACRED_KEY_MIN ||
		    nla_len(key) > SACRED_KEY_MAX)) {
		NL_SET_ERR_MSG_ATTR(info->extack, key,
				    "key must be 16 to 64 bytes");
		return -EINVAL;
	}

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
				mem_cap, key ? nla_data(key) : NULL,
				key ? nla_len(key) : 0, info->extack, &mem);
	if (ret)
		goto out_unlock;

	sacred_nl_obj_notify(&sacred_nl_mem, mem, SACRED_CMD_MEM_NEW);
	ret = sacred_nl_obj_reply(&sacred_nl_mem, mem, SACRED_CMD_MEM_NEW,
				  info);
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

static void *sacred_nl_mem_find(struct genl_info *info)
{
	return sacred_nl_mem_lookup(info);
}

static int sacred_nl_mem_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return sacred_nl_obj_del(&sacred_nl_mem, info);
}

static int sacred_nl_mem_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *state = info->attrs[SACRED_ATTR_MEM_STATE];
	struct nlattr *cap = info->attrs[SACRED_ATTR_MEM_MEM_CAP];
	struct nlattr *key = info->attrs[SACRED_ATTR_MEM_KEY];
	struct sacred_auth auth = {};
	struct sacred_mem *mem;
	int ret = 0;

	if (!state && !cap && !key) {
		GENL_SET_ERR_MSG(info,
				 "nothing to set: MEM_STATE, MEM_MEM_CAP or MEM_KEY");
		return -EINVAL;
	}
	if (key && nla_len(key) &&
	    (nla_len(key) < SACRED_KEY_MIN || nla_len(key) > SACRED_KEY_MAX)) {
		NL_SET_ERR_MSG_ATTR(info->extack, key,
				    "key must be 16 to 64 bytes, or empty for none");
		return -EINVAL;
	}

	mutex_lock(&sacred_lock);
	mem = sacred_nl_mem_lookup(info);
	if (IS_ERR(mem)) {
		ret = PTR_ERR(mem);
		goto out_unlock;
	}
	if (cap && nla_get_u64(cap) < mem->mem_used) {
		NL_SET_ERR_MSG_ATTR(info->extack, cap,
				    "cap below the memory its regions use");
		ret = -EBUSY;
		goto out_unlock;
	}
	/*
	 * The key first - the one step that may fail for want of memory,
	 * and in place before an instance brought up listens - and swapped
	 * back if the state change fails: a failed command changes nothing.
	 */
	if (key) {
		ret = sacred_auth_prepare(&auth, nla_len(key) ?
					  nla_data(key) : NULL, nla_len(key));
		if (ret) {
			NL_SET_ERR_MSG_ATTR(info->extack, key,
					    "cannot set up HMAC-SHA256 for the key");
			goto out_unlock;
		}
		sacred_mem_swap_key(mem, &auth);
	}
	if (state) {
		ret = sacred_mem_set_state(mem, nla_get_u8(state),
					   info->extack);
		if (ret) {
			if (key)
				sacred_mem_swap_key(mem, &auth);
			sacred_auth_release(&auth);
			goto out_unlock;
		}
	}
	sacred_auth_release(&auth);	/* the old key's, if any */
	if (cap)
		mem->mem_cap = nla_get_u64(cap);
	sacred_nl_obj_notify(&sacred_nl_mem, mem, SACRED_CMD_MEM_SET);
	sacred_nl_obj_reply(&sacred_nl_mem, mem, SACRED_CMD_MEM_SET, info);
out_unlock:
	mutex_unlock(&sacred_lock);
	return ret;
}

static int sacred_nl_mem_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return sacred_nl_obj_get(&sacred_nl_mem, SACRED_CMD_MEM_GET, info);
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
		ret = sacred_nl_obj_dump(skb, &sacred_nl_mem, mem,
					 SACRED_CMD_MEM_GET, cb);
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

/* ---------------------------------------------------------------- regions */

/*
 * The program of a region whose policy is to be @policy: taken from
 * REGION_PROG_FD, which policy bpf needs and every other policy refuses.
 * NULL with *@ret 0 when there is none to take.
 */
static struct sacred_region_prog *sacred_nl_region_prog(struct genl_info *info,
							u8 policy, int *ret)
{
	struct nlattr *fd = info->attrs[SACRED_ATTR_REGION_PROG_FD];
	struct sacred_region_prog *rp;

	*ret = 0;
	if (policy != SACRED_POLICY_BPF) {
		if (!fd)
			return NULL;
		NL_SET_ERR_MSG_ATTR(info->extack, fd,
				    "REGION_PROG_FD is for policy bpf only");
		*ret = -EINVAL;
		return NULL;
	}
	if (!fd) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[SACRED_ATTR_REGION_POLICY],
				    "policy bpf needs a program: REGION_PROG_FD");
		*ret = -EINVAL;
		return NULL;
	}
	rp = sacred_bpf_get(nla_get_u32(fd), info->extack);
	if (IS_ERR(rp)) {
		*ret = PTR_ERR(rp);
		return NULL;
	}
	return rp;
}

static int sacred_nl_region_new_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	u8 policy = SACRED_POLICY_STATIC;
	struct sacred_region_prog *prog;
	struct sacred_region *region;
	struct sacred_mem *mem;
	u64 tag;
	u32 id;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_REGION_SIZE)) {
		GENL_SET_ERR_MSG(info, "REGION_SIZE is required");
		return -EINVAL;
	}
	ret = sacred_nl_opt_id(info, SACRED_ATTR_REGION_ID, &id);
	if (ret)
		return ret;
	if (info->attrs[SACRED_ATTR_REGION_POLICY])
		policy = nla_get_u8(info->attrs[SACRED_ATTR_REGION_POLICY]);
	prog = sacred_nl_region_prog(info, policy, &ret);
	if (ret)
		return ret;
	/* No tag given: a random one, so that no two incarnations share it. */
	if (info->attrs[SACRED_ATTR_REGION_TAG])
		tag = nla_get_u64(info->attrs[SACRED_ATTR_REGION_TAG]);
	else
		tag = get_random_u64();

	mutex_lock(&sacred_lock);
	mem = sacred_nl_mem_lookup(info);
	if (IS_ERR(mem)) {
		ret = PTR_ERR(mem);
		goto out_unlock;
	}
	ret = sacred_region_create(mem, id,
				   nla_get_u64(info->attrs[SACRED_ATTR_REGION_SIZE]),
				   policy, prog, tag, info->extack, &region);
	if (ret)
		goto out_unlock;
	prog = NULL;

	sacred_nl_obj_notify(&sacred_nl_region, region, SACRED_CMD_REGION_NEW);
	sacred_nl_obj_reply(&sacred_nl_region, region, SACRED_CMD_REGION_NEW,
			    info);
out_unlock:
	mutex_unlock(&sacred_lock);
	sacred_bpf_put(prog);
	return ret;
}

static struct sacred_region *sacred_nl_region_lookup(struct genl_info *info)
{
	struct sacred_region *region;
	struct sacred_mem *mem;

	mem = sacred_nl_mem_lookup(info);
	if (IS_ERR(mem))
		return ERR_CAST(mem);
	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_REGION_ID)) {
		GENL_SET_ERR_MSG(info, "REGION_ID is required");
		return ERR_PTR(-EINVAL);
	}
	region = sacred_region_find(mem,
				    nla_get_u32(info->attrs[SACRED_ATTR_REGION_ID]));
	if (!region) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[SACRED_ATTR_REGION_ID],
				    "no such region in this memory instance");
		return ERR_PTR(-ENOENT);
	}
	return region;
}

static void *sacred_nl_region_find(struct genl_info *info)
{
	return sacred_nl_region_lookup(info);
}

static int sacred_nl_region_del_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	return sacred_nl_obj_del(&sacred_nl_region, info);
}

static int sacred_nl_region_get_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	return sacred_nl_obj_get(&sacred_nl_region, SACRED_CMD_REGION_GET,
				 info);
}

/*
 * A dump request's attribute. genetlink validated the request against the
 * op's policy before the dump started, so it is well-formed; finding it
 * in the message directly works alike on every kernel (where the parsed
 * attributes live moved in 6.2).
 */
static struct nlattr *sacred_nl_dump_attr(struct netlink_callback *cb,
					  int type)
{
	return nlmsg_find_attr(cb->nlh, GENL_HDRLEN, type);
}

/*
 * Cursor: args[0] instance id, args[1] region id, args[2] set when done.
 * With MEM_ID in the request, only that instance's regions are dumped.
 */
static int sacred_nl_region_get_dumpit(struct sk_buff *skb,
				       struct netlink_callback *cb)
{
	struct nlattr *filter = sacred_nl_dump_attr(cb, SACRED_ATTR_MEM_ID);
	struct sacred_region *region = NULL;
	u32 mem_id = cb->args[0], id = cb->args[1];
	struct sacred_mem *mem;
	int ret = 0;

	if (cb->args[2])
		return 0;
	if (filter)
		mem_id = nla_get_u32(filter);

	mutex_lock(&sacred_lock);
	cb->seq = sacred_mem_gen + sacred_region_gen;
	while ((mem = sacred_mem_next(&mem_id))) {
		if (filter && mem_id != nla_get_u32(filter))
			break;
		while ((region = sacred_region_next(mem, &id))) {
			ret = sacred_nl_obj_dump(skb, &sacred_nl_region,
						 region, SACRED_CMD_REGION_GET,
						 cb);
			if (ret)
				goto out;
			id++;
			if (!id)	/* wrapped: U32_MAX is never an id */
				break;
		}
		id = 0;
		if (++mem_id == 0)
			break;
	}
out:
	mutex_unlock(&sacred_lock);

	cb->args[0] = mem_id;
	cb->args[1] = id;
	if (!ret)
		cb->args[2] = 1;
	return ret == -EMSGSIZE ? skb->len : ret ?: skb->len;
}

/* --------------------------------------------------------- permissions */

#define SACRED_ACL_MAX	1024

static void sacred_nl_acl_free(struct xarray *acl)
{
	struct sacred_acl_entry *e;
	unsigned long pid;

	xa_for_each(acl, pid, e)
		kfree(e);
	xa_destroy(acl);
}

/* Parse a REGION_ACL nest into @acl (process id -> entry with @max). */
static int sacred_nl_acl_parse(struct nlattr *nest, struct xarray *acl,
			       struct netlink_ext_ack *extack)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1];
	struct sacred_acl_entry *e;
	struct nlattr *ent;
	int rem, n = 0, ret;

	nla_for_each_nested(ent, nest, rem) {
		u32 pid, access;

		if (nla_type(ent) != SACRED_ATTR_ACL_ENTRY) {
			NL_SET_ERR_MSG_ATTR(extack, ent,
					    "ACL holds only ACL_ENTRY nests");
			return -EINVAL;
		}
		if (++n > SACRED_ACL_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, ent,
					    "too many ACL entries (max 1024)");
			return -E2BIG;
		}
		ret = nla_parse_nested(tb, SACRED_ATTR_MAX, ent, NULL, extack);
		if (ret)
			return ret;
		if (!tb[SACRED_ATTR_PROCESS_ID] || !tb[SACRED_ATTR_ACCESS]) {
			NL_SET_ERR_MSG_ATTR(extack, ent,
					    "ACL entry needs PROCESS_ID and ACCESS");
			return -EINVAL;
		}
		pid = nla_get_u32(tb[SACRED_ATTR_PROCESS_ID]);
		access = nla_get_u32(tb[SACRED_ATTR_ACCESS]);
		if (!sacred_access_valid(access)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[SACRED_ATTR_ACCESS],
					    "access must be none, r, rw or rwa");
			return -EINVAL;
		}
		e = kzalloc(sizeof(*e), GFP_KERNEL);
		if (!e)
			return -ENOMEM;
		e->max = access;
		ret = xa_insert(acl, pid, e, GFP_KERNEL);
		if (ret) {
			kfree(e);
			if (ret == -EBUSY) {
				NL_SET_ERR_MSG_ATTR(extack, ent,
						    "process listed twice in the ACL");
				ret = -EINVAL;
			}
			return ret;
		}
	}
	return 0;
}

/*
 * May a region's policy go from @from to @to at runtime? Between the
 * policies under which access changes at runtime, whatever each member
 * holds stays a state the new one can start from. Into or out of static
 * and swmr, where the ACL is the access, it would not be.
 */
static bool sacred_nl_policy_change_ok(u8 from, u8 to)
{
	return from == to ||
	       (!sacred_policy(from)->acl_is_access &&
		!sacred_policy(to)->acl_is_access);
}

static int sacred_nl_region_set_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct nlattr *pol = info->attrs[SACRED_ATTR_REGION_POLICY];
	struct nlattr *acl_attr = info->attrs[SACRED_ATTR_REGION_ACL];
	struct sacred_region_prog *prog = NULL, *old_prog;
	struct sacred_region *region;
	u8 policy, old_policy;
	struct xarray acl;
	int ret;

	if (!acl_attr && !pol && !info->attrs[SACRED_ATTR_REGION_PROG_FD]) {
		GENL_SET_ERR_MSG(info,
				 "REGION_ACL, REGION_POLICY or REGION_PROG_FD is required");
		return -EINVAL;
	}
	xa_init(&acl);
	if (acl_attr) {
		ret = sacred_nl_acl_parse(acl_attr, &acl, info->extack);
		if (ret)
			goto out_free;
	}

	mutex_lock(&sacred_lock);
	region = sacred_nl_region_lookup(info);
	if (IS_ERR(region)) {
		ret = PTR_ERR(region);
		goto out_unlock;
	}
	old_policy = region->policy;
	policy = pol ? nla_get_u8(pol) : old_policy;
	if (!sacred_nl_policy_change_ok(old_policy, policy)) {
		NL_SET_ERR_MSG_ATTR(info->extack, pol,
				    "the policy changes at runtime only among exclusive-writer, revoke-only, fenced and bpf");
		ret = -EINVAL;
		goto out_unlock;
	}
	/* A bpf region keeps its program unless it is given another. */
	if (pol || info->attrs[SACRED_ATTR_REGION_PROG_FD]) {
		prog = sacred_nl_region_prog(info, policy, &ret);
		if (ret)
			goto out_unlock;
	}

	/*
	 * Policy and program first, so that processes the new ACL lets in
	 * start from the new policy's initial access; both go back if the
	 * ACL cannot be applied. Every decision runs under mem->lock: each
	 * is made wholly by the old program or wholly by the new one.
	 */
	sacred_mem_lock(region->mem);
	old_prog = region->prog;
	if (pol || prog) {
		region->policy = policy;
		region->prog = prog;
	}
	ret = acl_attr ? sacred_perm_set_acl(region, &acl, info->extack) : 0;
	if (ret && (pol || prog)) {
		region->policy = old_policy;
		region->prog = old_prog;
	}
	sacred_mem_unlock(region->mem);
	if (ret)
		goto out_unlock;
	if (pol || prog)
		prog = old_prog;
	else
		prog = NULL;
	sacred_nl_obj_notify(&sacred_nl_region, region, SACRED_CMD_REGION_SET);
	sacred_nl_obj_reply(&sacred_nl_region, region, SACRED_CMD_REGION_SET,
			    info);
out_unlock:
	mutex_unlock(&sacred_lock);
	/* The replaced program, or the one taken for a failed change. */
	sacred_bpf_put(prog);
out_free:
	sacred_nl_acl_free(&acl);
	return ret;
}

static void sacred_nl_refuse_msg(struct netlink_ext_ack *extack, u32 reason)
{
	switch (reason) {
	case SACRED_REFUSE_STATIC:
		NL_SET_ERR_MSG(extack,
			       "static region: permissions change only with its ACL");
		break;
	case SACRED_REFUSE_NOT_MEMBER:
		NL_SET_ERR_MSG(extack,
			       "the ACL does not allow that access to this process");
		break;
	case SACRED_REFUSE_SWMR:
		NL_SET_ERR_MSG(extack, "swmr region: nothing changes at runtime");
		break;
	case SACRED_REFUSE_NO_GRANT:
		NL_SET_ERR_MSG(extack,
			       "revoke-only region: nothing is ever granted");
		break;
	case SACRED_REFUSE_STALE_BALLOT:
		NL_SET_ERR_MSG(extack,
			       "fenced region: the ballot is not above the highest seen");
		break;
	case SACRED_REFUSE_PROGRAM_VERDICT:
		NL_SET_ERR_MSG(extack,
			       "bpf region: the program returned no known verdict");
		break;
	default:
		if (reason >= SACRED_REFUSE_PROGRAM_BASE)
			NL_SET_ERR_MSG(extack,
				       "bpf region: the program refused the change (its code: the event's REFUSE_REASON)");
		break;
	}
}

static int sacred_nl_perm_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sacred_perm_change chg = {};
	struct sacred_switch sw;
	struct sacred_region *region;
	u32 reason;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_PROCESS_ID)) {
		GENL_SET_ERR_MSG(info, "PROCESS_ID is required");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, SACRED_ATTR_ACCESS)) {
		GENL_SET_ERR_MSG(info, "ACCESS is required");
		return -EINVAL;
	}
	chg.requester = nla_get_u32(info->attrs[SACRED_ATTR_PROCESS_ID]);
	chg.access = nla_get_u32(info->attrs[SACRED_ATTR_ACCESS]);
	if (!sacred_access_valid(chg.access)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[SACRED_ATTR_ACCESS],
				    "access must be none, r, rw or rwa");
		return -EINVAL;
	}
	if (info->attrs[SACRED_ATTR_BALLOT])
		chg.ballot = nla_get_u64(info->attrs[SACRED_ATTR_BALLOT]);
	if (info->attrs[SACRED_ATTR_TARGET])
		chg.target = nla_get_u32(info->attrs[SACRED_ATTR_TARGET]);

	mutex_lock(&sacred_lock);
	region = sacred_nl_region_lookup(info);
	if (IS_ERR(region)) {
		ret = PTR_ERR(region);
		goto out_unlock;
	}
	if (!sacred_policy_args_valid(region->policy, &chg)) {
		GENL_SET_ERR_MSG(info,
				 "BALLOT is for fenced and bpf regions, TARGET for revoke-only and bpf ones");
		ret = -EINVAL;
		goto out_unlock;
	}
	sacred_mem_lock(region->mem);
	ret = sacred_perm_change(region, &chg, &reason, &sw);
	sacred_perm_change_end(&sw);
	sacred_mem_unlock(region->mem);
	if (ret) {
		GENL_SET_ERR_MSG(info, "the change could not be applied in full");
		goto out_unlock;
	}
	if (reason) {
		sacred_nl_refuse_msg(info->extack, reason);
		ret = -EPERM;
		goto out_unlock;
	}
	sacred_nl_obj_reply(&sacred_nl_region, region, SACRED_CMD_PERM_SET,
			    info);
out_unlock:
	mutex_unlock(&sacred_lock);
	return ret;
}

/**
 * sacred_nl_notify_perm() - announce a permission change or a refusal
 * @region: the region
 * @ev: the change, its decision and its outcome
 * @gfp: how to allocate the message
 *
 * Context: mem->lock held, or softirq with @gfp GFP_ATOMIC (it builds no
 * ACL: nothing it reads changes under it).
 */
static void sacred_nl_notify_perm(struct sacred_region *region,
				  const struct sacred_perm_event *ev, gfp_t gfp)
{
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&sacred_nl_family, &init_net,
				SACRED_NL_MCGRP_EVENTS))
		return;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, gfp);
	if (!msg)
		return;
	hdr = sacred_nl_put(msg, 0, 0, 0, SACRED_CMD_PERM_SET, NULL);
	if (!hdr || sacred_perm_fill(msg, region, ev)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&sacred_nl_family, msg, 0, SACRED_NL_MCGRP_EVENTS,
			  gfp);
}

/* ------------------------------------------------------------------ peers */

/*
 * Cursor: args[0] instance id, args[1] process id, args[2] set when done.
 * With MEM_ID in the request, only that instance's peers are dumped.
 */
static int sacred_nl_peer_get_dumpit(struct sk_buff *skb,
				     struct netlink_callback *cb)
{
	struct nlattr *filter = sacred_nl_dump_attr(cb, SACRED_ATTR_MEM_ID);
	u32 mem_id = cb->args[0];
	unsigned long pid = cb->args[1];
	struct sacred_peer *peer;
	struct sacred_mem *mem;
	int ret = 0;

	if (cb->args[2])
		return 0;
	if (filter)
		mem_id = nla_get_u32(filter);

	mutex_lock(&sacred_lock);
	cb->seq = sacred_mem_gen;
	while ((mem = sacred_mem_next(&mem_id))) {
		if (filter && mem_id != nla_get_u32(filter))
			break;
		sacred_mem_lock(mem);
		xa_for_each_start(&mem->peers, pid, peer, pid) {
			ret = sacred_nl_obj_dump(skb, &sacred_nl_peer, peer,
						 SACRED_CMD_PEER_GET, cb);
			if (ret)
				break;
		}
		sacred_mem_unlock(mem);
		if (ret)
			break;
		pid = 0;
		if (++mem_id == 0)
			break;
	}
	mutex_unlock(&sacred_lock);

	cb->args[0] = mem_id;
	cb->args[1] = pid;
	if (!ret)
		cb->args[2] = 1;
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
	[SACRED_ATTR_MEM_MEM_CAP] = { .type = NLA_U64 },
	[SACRED_ATTR_MEM_KEY]	 = { .type = NLA_BINARY, .len = SACRED_KEY_MAX },
};

static const struct nla_policy sacred_mem_set_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_MEM_ID]	  = { .type = NLA_U32 },
	[SACRED_ATTR_MEM_STATE]	  = NLA_POLICY_RANGE(NLA_U8, SACRED_MEM_UP,
						     SACRED_MEM_DOWN),
	[SACRED_ATTR_MEM_MEM_CAP] = { .type = NLA_U64 },
	[SACRED_ATTR_MEM_KEY]	  = { .type = NLA_BINARY, .len = SACRED_KEY_MAX },
};

static const struct nla_policy sacred_mem_id_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_MEM_ID]	= { .type = NLA_U32 },
};

static const struct nla_policy sacred_region_new_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_MEM_ID]	    = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_ID]	    = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_SIZE]   = { .type = NLA_U64 },
	[SACRED_ATTR_REGION_POLICY] = NLA_POLICY_MAX(NLA_U8, SACRED_POLICY_MAX),
	[SACRED_ATTR_REGION_TAG]    = { .type = NLA_U64 },
	[SACRED_ATTR_REGION_PROG_FD] = { .type = NLA_U32 },
};

static const struct nla_policy sacred_region_id_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_MEM_ID]	= { .type = NLA_U32 },
	[SACRED_ATTR_REGION_ID]	= { .type = NLA_U32 },
};

static const struct nla_policy sacred_acl_entry_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_PROCESS_ID] = { .type = NLA_U32 },
	[SACRED_ATTR_ACCESS]	 = NLA_POLICY_MAX(NLA_U32, SACRED_ACCESS_ALL),
};

static const struct nla_policy sacred_acl_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_ACL_ENTRY]	= NLA_POLICY_NESTED(sacred_acl_entry_policy),
};

static const struct nla_policy sacred_region_set_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_MEM_ID]	 = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_ID]	 = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_ACL] = NLA_POLICY_NESTED(sacred_acl_policy),
	[SACRED_ATTR_REGION_TAG] = {
		.type = NLA_REJECT,
		.reject_message = "a region's tag is fixed at its creation",
	},
	[SACRED_ATTR_REGION_POLICY] = NLA_POLICY_MAX(NLA_U8, SACRED_POLICY_MAX),
	[SACRED_ATTR_REGION_PROG_FD] = { .type = NLA_U32 },
};

static const struct nla_policy sacred_perm_set_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_MEM_ID]	 = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_ID]	 = { .type = NLA_U32 },
	[SACRED_ATTR_PROCESS_ID] = { .type = NLA_U32 },
	[SACRED_ATTR_ACCESS]	 = NLA_POLICY_MAX(NLA_U32, SACRED_ACCESS_ALL),
	[SACRED_ATTR_BALLOT]	 = { .type = NLA_U64 },
	[SACRED_ATTR_TARGET]	 = { .type = NLA_U32 },
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
	{
		.cmd		= SACRED_CMD_REGION_NEW,
		.doit		= sacred_nl_region_new_doit,
		.policy		= sacred_region_new_policy,
		.maxattr	= SACRED_ATTR_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= SACRED_CMD_REGION_DEL,
		.doit		= sacred_nl_region_del_doit,
		.policy		= sacred_region_id_policy,
		.maxattr	= SACRED_ATTR_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= SACRED_CMD_REGION_GET,
		.doit		= sacred_nl_region_get_doit,
		.dumpit		= sacred_nl_region_get_dumpit,
		.policy		= sacred_region_id_policy,
		.maxattr	= SACRED_ATTR_MAX,
	},
	{
		.cmd		= SACRED_CMD_REGION_SET,
		.doit		= sacred_nl_region_set_doit,
		.policy		= sacred_region_set_policy,
		.maxattr	= SACRED_ATTR_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= SACRED_CMD_PEER_GET,
		.dumpit		= sacred_nl_peer_get_dumpit,
		.policy		= sacred_mem_id_policy,
		.maxattr	= SACRED_ATTR_MAX,
	},
	{
		.cmd		= SACRED_CMD_MEM_SET,
		.doit		= sacred_nl_mem_set_doit,
		.policy		= sacred_mem_set_policy,
		.maxattr	= SACRED_ATTR_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= SACRED_CMD_PERM_SET,
		.doit		= sacred_nl_perm_set_doit,
		.policy		= sacred_perm_set_policy,
		.maxattr	= SACRED_ATTR_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
};

static const struct genl_multicast_group sacred_nl_mcgrps[] = {
	[SACRED_NL_MCGRP_EVENTS] = { .name = SACRED_GENL_MCGRP_EVENTS },
};

/*
 * Parallel: every handler serialises itself on sacred_lock, and some wait
 * for an instance's mem->lock behind a permission switch that fences a
 * slow process (up to SACRED_WR_TIMEOUT_MS a loser) - under genl_mutex
 * that wait would stall every other generic netlink family of the host.
 */
static struct genl_family sacred_nl_family __ro_after_init = {
	.name		= SACRED_GENL_NAME,
	.version	= SACRED_GENL_VERSION,
	.maxattr	= SACRED_ATTR_MAX,
	.netnsok	= false,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= sacred_nl_ops,
	.n_ops		= ARRAY_SIZE(sacred_nl_ops),
	.mcgrps		= sacred_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(sacred_nl_mcgrps),
};

/* Context: sacred_lock held. */
static void sacred_nl_notify_mem(struct sacred_mem *mem, u8 cmd)
{
	sacred_nl_obj_notify(&sacred_nl_mem, mem, cmd);
}

/* Context: sacred_lock held. */
static void sacred_nl_notify_region(struct sacred_region *region, u8 cmd)
{
	sacred_nl_obj_notify(&sacred_nl_region, region, cmd);
}

/* The objects' events (notify.h) go to the events group. */
static const struct sacred_notify_ops sacred_nl_notify_ops = {
	.mem	= sacred_nl_notify_mem,
	.region	= sacred_nl_notify_region,
	.perm	= sacred_nl_notify_perm,
};

/**
 * sacred_nl_init() - register the generic netlink family and its events
 *
 * Return: 0 or a negative errno from genl_register_family().
 */
int sacred_nl_init(void)
{
	int ret;

	ret = genl_register_family(&sacred_nl_family);
	if (ret)
		return ret;
	sacred_notify_register(&sacred_nl_notify_ops);
	return 0;
}

/**
 * sacred_nl_exit() - unregister the family; events go nowhere from now on
 */
void sacred_nl_exit(void)
{
	sacred_notify_register(NULL);
	genl_unregister_family(&sacred_nl_family);
}
