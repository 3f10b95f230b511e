// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - the control part: the generic netlink family "sacred".
 *
 * A handle owns one netlink socket and one libnl callback set, and runs one
 * request at a time. Every request has the same life:
 *
 *   1. ctrl_msg() builds a generic netlink message for the command;
 *   2. ctrl_request() sends it (libnl adds NLM_F_REQUEST | NLM_F_ACK and the
 *      next sequence number) and reads until the request is over:
 *      - a doit is over at its NLMSG_ERROR: error 0 is the ACK, which comes
 *        after the reply message if the command has one; anything else is
 *        the kernel's errno, followed by the extended-ack TLVs;
 *      - a dump is over at its NLMSG_DONE, whose payload is an errno as
 *        well (0, or the error that cut the dump short), again followed by
 *        TLVs; or at an NLMSG_ERROR if the kernel refused to start it.
 *      A message with another sequence number is a left-over of an earlier
 *      request abandoned on a transport error, and is skipped.
 *   3. every reply goes to the request's parser. A parser error, or a
 *      non-zero return from the caller's dump callback, ends the parsing
 *      but not the reading: the rest of the answer is drained, so the
 *      socket is clean for the next request.
 *
 * libnl never prints: the callback set is NL_CB_CUSTOM with only our
 * handlers in it, and the socket is created on that same set, so even
 * NLCB=debug in the environment has nothing to hook into. libnl error codes
 * are turned back into errnos (nlerr_to_errno()); a kernel error is
 * reported with the errno of its nlmsgerr, not libnl's translation of it.
 *
 * Replies are parsed against a policy; attributes newer than this library
 * (type above SACRED_ATTR_MAX) are ignored, so an old libsacred works with a
 * newer sacred.ko.
 *
 * A monitor (at the end of this file) is a handle that never sends a
 * request once the family is resolved: its socket joins the "events"
 * group, and every multicast message is parsed by the same parser as the
 * reply that describes the same object.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/handlers.h>
#include <netlink/socket.h>
#include <netlink/genl/genl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "sacred.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Longest extended-ack message kept; the kernel's are one short line. */
#define CTRL_ERRMSG_MAX 256

/*
 * Extended-ack TLVs (enum nlmsgerr_attrs in linux/netlink.h), spelled out
 * so that the library also builds against headers older than 6.0, which
 * lack the MISS_* attributes.
 */
enum {
	EXTACK_MSG = 1,		/* NLMSGERR_ATTR_MSG */
	EXTACK_OFFS = 2,	/* NLMSGERR_ATTR_OFFS */
	EXTACK_MISS_TYPE = 5,	/* NLMSGERR_ATTR_MISS_TYPE */
	EXTACK_MAX = 6,
};

/**
 * struct sacred_ctrl - a control handle
 * @sk: generic netlink socket
 * @cb: callback set used for every receive on @sk
 * @family: numeric id of the "sacred" family
 * @version: version of the family, as the kernel registered it
 * @mcgrp_events: id of the family's "events" multicast group, 0 if none
 * @errmsg: extended-ack message of the last failed call, "" if none
 */
struct sacred_ctrl {
	struct nl_sock *sk;
	struct nl_cb *cb;
	int family;
	unsigned int version;
	uint32_t mcgrp_events;
	char errmsg[CTRL_ERRMSG_MAX];
};

struct ctrl_req;

typedef int (*ctrl_parse_t)(struct ctrl_req *rq, struct nlmsghdr *nlh);

/**
 * struct ctrl_req - one request in flight
 * @ctrl: handle
 * @req: the request as sent, to name an attribute the kernel points at
 * @seq: its sequence number
 * @parse: called for every reply message; may be NULL
 * @arg: for @parse
 * @replies: reply messages seen so far
 * @kerr: the kernel's negative errno, or 0
 * @perr: first non-zero return of @parse: a negative errno, or positive
 *	when a caller's callback stopped a dump
 * @done: the ACK, error or NLMSG_DONE that ends the request arrived
 * @intr: the kernel flagged the dump NLM_F_DUMP_INTR
 */
struct ctrl_req {
	struct sacred_ctrl *ctrl;
	const struct nlmsghdr *req;
	uint32_t seq;
	ctrl_parse_t parse;
	void *arg;
	unsigned int replies;
	int kerr;
	int perr;
	bool done;
	bool intr;
};

/* One flat attribute space: the same policy serves messages and nests. */
static const struct nla_policy sacred_policy[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_DEV_INDEX] = { .type = NLA_U32 },
	[SACRED_ATTR_DEV_NAME] = { .type = NLA_STRING,
				   .maxlen = SACRED_NAME_MAX },
	[SACRED_ATTR_DEV_NODE_GUID] = { .type = NLA_U64 },
	[SACRED_ATTR_DEV_NUM_PORTS] = { .type = NLA_U32 },
	[SACRED_ATTR_DEV_PORTS] = { .type = NLA_NESTED },
	[SACRED_ATTR_PORT] = { .type = NLA_NESTED },
	[SACRED_ATTR_PORT_INDEX] = { .type = NLA_U32 },
	[SACRED_ATTR_PORT_STATE] = { .type = NLA_U8 },
	[SACRED_ATTR_PORT_PHYS_STATE] = { .type = NLA_U8 },
	[SACRED_ATTR_PORT_ACTIVE_MTU] = { .type = NLA_U32 },
	[SACRED_ATTR_PORT_LINK_LAYER] = { .type = NLA_U8 },
	[SACRED_ATTR_PORT_NETDEV] = { .type = NLA_STRING,
				      .maxlen = SACRED_NAME_MAX },
	[SACRED_ATTR_MEM_ID] = { .type = NLA_U32 },
	[SACRED_ATTR_MEM_ADDR] = { .type = NLA_UNSPEC,
				   .minlen = sizeof(struct in_addr),
				   .maxlen = sizeof(struct in6_addr) },
	[SACRED_ATTR_MEM_PORT] = { .type = NLA_U16 },
	[SACRED_ATTR_MEM_STATE] = { .type = NLA_U8 },
	[SACRED_ATTR_MEM_MEM_CAP] = { .type = NLA_U64 },
	[SACRED_ATTR_MEM_MEM_USED] = { .type = NLA_U64 },
	[SACRED_ATTR_MEM_NR_REGIONS] = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_ID] = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_SIZE] = { .type = NLA_U64 },
	[SACRED_ATTR_REGION_POLICY] = { .type = NLA_U8 },
	[SACRED_ATTR_REGION_EPOCH] = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_NR_CHUNKS] = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_ACL] = { .type = NLA_NESTED },
	[SACRED_ATTR_ACL_ENTRY] = { .type = NLA_NESTED },
	[SACRED_ATTR_PROCESS_ID] = { .type = NLA_U32 },
	[SACRED_ATTR_ACCESS] = { .type = NLA_U32 },
	[SACRED_ATTR_ACCESS_CUR] = { .type = NLA_U32 },
	[SACRED_ATTR_BALLOT] = { .type = NLA_U64 },
	[SACRED_ATTR_TARGET] = { .type = NLA_U32 },
	[SACRED_ATTR_REFUSE_REASON] = { .type = NLA_U32 },
	[SACRED_ATTR_PEER_CONNECTED] = { .type = NLA_U8 },
	[SACRED_ATTR_PEER_REQUESTS] = { .type = NLA_U64 },
	[SACRED_ATTR_PEER_REFUSED] = { .type = NLA_U64 },
	[SACRED_ATTR_PEER_FENCES] = { .type = NLA_U64 },
	[SACRED_ATTR_PEER_CONNECTS] = { .type = NLA_U64 },
	[SACRED_ATTR_PEER_MRS] = { .type = NLA_U32 },
	[SACRED_ATTR_MEM_KEYED] = { .type = NLA_U8 },
	[SACRED_ATTR_REGION_RACED] = { .type = NLA_U64 },
	[SACRED_ATTR_PEER_RACED] = { .type = NLA_U64 },
	[SACRED_ATTR_MEM_META_BYTES] = { .type = NLA_U64 },
	[SACRED_ATTR_MEM_NR_PEERS] = { .type = NLA_U32 },
	[SACRED_ATTR_MEM_NR_CONNS] = { .type = NLA_U32 },
	[SACRED_ATTR_MEM_NR_MRS] = { .type = NLA_U32 },
	[SACRED_ATTR_MEM_MR_PAGES] = { .type = NLA_U64 },
	[SACRED_ATTR_REGION_TAG] = { .type = NLA_U64 },
	[SACRED_ATTR_PERM_ERROR] = { .type = NLA_U32 },
	[SACRED_ATTR_REGION_PROG_ID] = { .type = NLA_U32 },
	[SACRED_ATTR_PEER_CQ_CHANGES] = { .type = NLA_U64 },
};

static const char *const sacred_attr_names[SACRED_ATTR_MAX + 1] = {
	[SACRED_ATTR_PAD] = "PAD",
	[SACRED_ATTR_DEV_INDEX] = "DEV_INDEX",
	[SACRED_ATTR_DEV_NAME] = "DEV_NAME",
	[SACRED_ATTR_DEV_NODE_GUID] = "DEV_NODE_GUID",
	[SACRED_ATTR_DEV_NUM_PORTS] = "DEV_NUM_PORTS",
	[SACRED_ATTR_DEV_PORTS] = "DEV_PORTS",
	[SACRED_ATTR_PORT] = "PORT",
	[SACRED_ATTR_PORT_INDEX] = "PORT_INDEX",
	[SACRED_ATTR_PORT_STATE] = "PORT_STATE",
	[SACRED_ATTR_PORT_PHYS_STATE] = "PORT_PHYS_STATE",
	[SACRED_ATTR_PORT_ACTIVE_MTU] = "PORT_ACTIVE_MTU",
	[SACRED_ATTR_PORT_LINK_LAYER] = "PORT_LINK_LAYER",
	[SACRED_ATTR_PORT_NETDEV] = "PORT_NETDEV",
	[SACRED_ATTR_MEM_ID] = "MEM_ID",
	[SACRED_ATTR_MEM_ADDR] = "MEM_ADDR",
	[SACRED_ATTR_MEM_PORT] = "MEM_PORT",
	[SACRED_ATTR_MEM_STATE] = "MEM_STATE",
	[SACRED_ATTR_MEM_MEM_CAP] = "MEM_MEM_CAP",
	[SACRED_ATTR_MEM_MEM_USED] = "MEM_MEM_USED",
	[SACRED_ATTR_MEM_NR_REGIONS] = "MEM_NR_REGIONS",
	[SACRED_ATTR_REGION_ID] = "REGION_ID",
	[SACRED_ATTR_REGION_SIZE] = "REGION_SIZE",
	[SACRED_ATTR_REGION_POLICY] = "REGION_POLICY",
	[SACRED_ATTR_REGION_EPOCH] = "REGION_EPOCH",
	[SACRED_ATTR_REGION_NR_CHUNKS] = "REGION_NR_CHUNKS",
	[SACRED_ATTR_REGION_ACL] = "REGION_ACL",
	[SACRED_ATTR_ACL_ENTRY] = "ACL_ENTRY",
	[SACRED_ATTR_PROCESS_ID] = "PROCESS_ID",
	[SACRED_ATTR_ACCESS] = "ACCESS",
	[SACRED_ATTR_ACCESS_CUR] = "ACCESS_CUR",
	[SACRED_ATTR_BALLOT] = "BALLOT",
	[SACRED_ATTR_TARGET] = "TARGET",
	[SACRED_ATTR_REFUSE_REASON] = "REFUSE_REASON",
	[SACRED_ATTR_PEER_CONNECTED] = "PEER_CONNECTED",
	[SACRED_ATTR_PEER_REQUESTS] = "PEER_REQUESTS",
	[SACRED_ATTR_PEER_REFUSED] = "PEER_REFUSED",
	[SACRED_ATTR_PEER_FENCES] = "PEER_FENCES",
	[SACRED_ATTR_PEER_CONNECTS] = "PEER_CONNECTS",
	[SACRED_ATTR_PEER_MRS] = "PEER_MRS",
	[SACRED_ATTR_MEM_KEY] = "MEM_KEY",
	[SACRED_ATTR_MEM_KEYED] = "MEM_KEYED",
	[SACRED_ATTR_REGION_RACED] = "REGION_RACED",
	[SACRED_ATTR_PEER_RACED] = "PEER_RACED",
	[SACRED_ATTR_MEM_META_BYTES] = "MEM_META_BYTES",
	[SACRED_ATTR_MEM_NR_PEERS] = "MEM_NR_PEERS",
	[SACRED_ATTR_MEM_NR_CONNS] = "MEM_NR_CONNS",
	[SACRED_ATTR_MEM_NR_MRS] = "MEM_NR_MRS",
	[SACRED_ATTR_MEM_MR_PAGES] = "MEM_MR_PAGES",
	[SACRED_ATTR_REGION_TAG] = "REGION_TAG",
	[SACRED_ATTR_PERM_ERROR] = "PERM_ERROR",
	[SACRED_ATTR_REGION_PROG_FD] = "REGION_PROG_FD",
	[SACRED_ATTR_REGION_PROG_ID] = "REGION_PROG_ID",
	[SACRED_ATTR_PEER_CQ_CHANGES] = "PEER_CQ_CHANGES",
};

static const struct nla_policy extack_policy[EXTACK_MAX + 1] = {
	[EXTACK_MSG] = { .type = NLA_STRING },
	[EXTACK_OFFS] = { .type = NLA_U32 },
	[EXTACK_MISS_TYPE] = { .type = NLA_U32 },
};

static const struct nla_policy family_policy[CTRL_ATTR_MAX + 1] = {
	[CTRL_ATTR_FAMILY_ID] = { .type = NLA_U16 },
	[CTRL_ATTR_FAMILY_NAME] = { .type = NLA_STRING },
	[CTRL_ATTR_VERSION] = { .type = NLA_U32 },
	[CTRL_ATTR_MCAST_GROUPS] = { .type = NLA_NESTED },
};

static const struct nla_policy mcgrp_policy[CTRL_ATTR_MCAST_GRP_MAX + 1] = {
	[CTRL_ATTR_MCAST_GRP_NAME] = { .type = NLA_STRING },
	[CTRL_ATTR_MCAST_GRP_ID] = { .type = NLA_U32 },
};

/**
 * nlerr_to_errno() - turn a libnl error code into a negative errno
 * @err: NLE_* code, either sign
 *
 * libnl folds errnos into its own codes; this is the way back, as close as
 * the folding allows.
 */
static int nlerr_to_errno(int err)
{
	static const int map[] = {
		[NLE_FAILURE] = EIO,
		[NLE_INTR] = EINTR,
		[NLE_BAD_SOCK] = EBADF,
		[NLE_AGAIN] = EAGAIN,
		[NLE_NOMEM] = ENOMEM,
		[NLE_EXIST] = EEXIST,
		[NLE_INVAL] = EINVAL,
		[NLE_RANGE] = ERANGE,
		[NLE_MSGSIZE] = EMSGSIZE,
		[NLE_OPNOTSUPP] = EOPNOTSUPP,
		[NLE_AF_NOSUPPORT] = EAFNOSUPPORT,
		[NLE_OBJ_NOTFOUND] = ENOENT,
		[NLE_NOATTR] = ENODATA,
		[NLE_MISSING_ATTR] = EINVAL,
		[NLE_AF_MISMATCH] = EAFNOSUPPORT,
		[NLE_SEQ_MISMATCH] = EPROTO,
		[NLE_MSG_OVERFLOW] = ENOBUFS,
		[NLE_MSG_TRUNC] = EMSGSIZE,
		[NLE_NOADDR] = EADDRNOTAVAIL,
		[NLE_SRCRT_NOSUPPORT] = EOPNOTSUPP,
		[NLE_MSG_TOOSHORT] = EPROTO,
		[NLE_MSGTYPE_NOSUPPORT] = EOPNOTSUPP,
		[NLE_OBJ_MISMATCH] = EINVAL,
		[NLE_NOCACHE] = ENOENT,
		[NLE_BUSY] = EBUSY,
		[NLE_PROTO_MISMATCH] = EPROTONOSUPPORT,
		[NLE_NOACCESS] = EACCES,
		[NLE_PERM] = EPERM,
		[NLE_PKTLOC_FILE] = ENOENT,
		[NLE_PARSE_ERR] = EINVAL,
		[NLE_NODEV] = ENODEV,
		[NLE_IMMUTABLE] = EPERM,
		[NLE_DUMP_INTR] = EAGAIN,
		[NLE_ATTRSIZE] = ERANGE,
	};
	unsigned int code = err < 0 ? -err : err;

	if (!code)
		return 0;
	if (code < ARRAY_SIZE(map) && map[code])
		return -map[code];
	return -EIO;
}

static const char *attr_name(unsigned int type)
{
	if (type < ARRAY_SIZE(sacred_attr_names) && sacred_attr_names[type])
		return sacred_attr_names[type];
	return NULL;
}

static void ctrl_set_errmsg(struct sacred_ctrl *ctrl, const char *what,
			    unsigned int type)
{
	const char *name = attr_name(type);

	if (name)
		snprintf(ctrl->errmsg, sizeof(ctrl->errmsg), "%s %s", what,
			 name);
	else
		snprintf(ctrl->errmsg, sizeof(ctrl->errmsg), "%s (type %u)",
			 what, type);
}

/*
 * The type of the attribute at byte @off of the request, as the kernel's
 * NLMSGERR_ATTR_OFFS points at it; -1 if @off is not inside the request.
 */
static int ctrl_req_attr_at(const struct ctrl_req *rq, uint32_t off)
{
	struct nlattr nla;

	if (!rq->req || off < NLMSG_HDRLEN + GENL_HDRLEN ||
	    off > rq->req->nlmsg_len ||
	    rq->req->nlmsg_len - off < sizeof(nla))
		return -1;
	memcpy(&nla, (const char *)rq->req + off, sizeof(nla));
	return nla.nla_type & NLA_TYPE_MASK;
}

/**
 * ctrl_extack() - keep the extended-ack message of an error
 * @rq: request
 * @nlh: the NLMSG_ERROR or NLMSG_DONE message
 * @off: where its TLVs start, from @nlh
 *
 * The kernel's NLMSGERR_ATTR_MSG is kept as is. Without one, a missing or
 * rejected attribute the kernel names is turned into a message, so that
 * the caller always has something better than the bare errno to show.
 */
static void ctrl_extack(struct ctrl_req *rq, const struct nlmsghdr *nlh,
			size_t off)
{
	struct sacred_ctrl *ctrl = rq->ctrl;
	struct nlattr *tb[EXTACK_MAX + 1];
	int type;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off >= nlh->nlmsg_len)
		return;
	if (nla_parse(tb, EXTACK_MAX, (struct nlattr *)((char *)nlh + off),
		      nlh->nlmsg_len - off, extack_policy))
		return;

	if (tb[EXTACK_MSG]) {
		snprintf(ctrl->errmsg, sizeof(ctrl->errmsg), "%s",
			 (const char *)nla_data(tb[EXTACK_MSG]));
	} else if (tb[EXTACK_MISS_TYPE]) {
		ctrl_set_errmsg(ctrl, "missing attribute",
				nla_get_u32(tb[EXTACK_MISS_TYPE]));
	} else if (tb[EXTACK_OFFS]) {
		type = ctrl_req_attr_at(rq, nla_get_u32(tb[EXTACK_OFFS]));
		if (type >= 0)
			ctrl_set_errmsg(ctrl, "invalid attribute", type);
	}
}

static int ctrl_seq_cb(struct nl_msg *msg, void *arg)
{
	struct ctrl_req *rq = arg;

	return nlmsg_hdr(msg)->nlmsg_seq == rq->seq ? NL_OK : NL_SKIP;
}

static int ctrl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct ctrl_req *rq = arg;
	int ret;

	if (rq->perr)
		return NL_SKIP;	/* draining */
	if (!genlmsg_valid_hdr(nlh, 0)) {
		rq->perr = -EPROTO;
		return NL_SKIP;
	}
	rq->replies++;
	if (rq->parse) {
		ret = rq->parse(rq, nlh);
		if (ret)
			rq->perr = ret;
	}
	return NL_OK;
}

static int ctrl_ack_cb(struct nl_msg *msg, void *arg)
{
	struct ctrl_req *rq = arg;

	(void)msg;
	rq->done = true;
	return NL_STOP;
}

static int ctrl_finish_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct ctrl_req *rq = arg;
	int err;

	if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(err)) {
		memcpy(&err, nlmsg_data(nlh), sizeof(err));
		if (err < 0) {
			rq->kerr = err;
			ctrl_extack(rq, nlh,
				    NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(err)));
		}
	}
	rq->done = true;
	return NL_STOP;
}

static int ctrl_error_cb(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	/* libnl passes the payload of the NLMSG_ERROR; its header is before. */
	const struct nlmsghdr *nlh =
		(const void *)((const char *)e - NLMSG_HDRLEN);
	size_t off = NLMSG_HDRLEN + sizeof(*e);
	struct ctrl_req *rq = arg;

	(void)who;
	/* Without NLM_F_CAPPED the whole request is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
	    e->msg.nlmsg_len > NLMSG_HDRLEN)
		off += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN);
	rq->kerr = e->error < 0 ? e->error : -e->error;
	ctrl_extack(rq, nlh, off);
	rq->done = true;
	return NL_STOP;
}

static int ctrl_dump_intr_cb(struct nl_msg *msg, void *arg)
{
	struct ctrl_req *rq = arg;

	(void)msg;
	rq->intr = true;
	return NL_OK;
}

/* Start a call on @ctrl: the previous call's message is forgotten. */
static void ctrl_begin(struct sacred_ctrl *ctrl)
{
	ctrl->errmsg[0] = '\0';
}

static struct nl_msg *ctrl_msg(int family, uint8_t cmd, uint8_t version,
			       int flags)
{
	struct nl_msg *msg;

	msg = nlmsg_alloc();
	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags,
			 cmd, version)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static struct nl_msg *sacred_msg(struct sacred_ctrl *ctrl, uint8_t cmd,
				 int flags)
{
	return ctrl_msg(ctrl->family, cmd, SACRED_GENL_VERSION, flags);
}

/**
 * ctrl_request() - send a request and read its whole answer
 * @ctrl: handle
 * @msg: the request; still owned by the caller
 * @parse: called for every reply message, may be NULL
 * @arg: for @parse, as &struct ctrl_req.arg
 *
 * Return: the number of reply messages, or a negative errno: the kernel's,
 * the parser's, or a transport error.
 */
static int ctrl_request(struct sacred_ctrl *ctrl, struct nl_msg *msg,
			ctrl_parse_t parse, void *arg)
{
	struct ctrl_req rq = {
		.ctrl = ctrl,
		.parse = parse,
		.arg = arg,
	};
	struct nl_cb *cb = ctrl->cb;
	int ret;

	ret = nl_send_auto(ctrl->sk, msg);
	if (ret < 0)
		return nlerr_to_errno(ret);
	rq.req = nlmsg_hdr(msg);
	rq.seq = rq.req->nlmsg_seq;

	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, ctrl_seq_cb, &rq);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, ctrl_valid_cb, &rq);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ctrl_ack_cb, &rq);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, ctrl_finish_cb, &rq);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, ctrl_dump_intr_cb, &rq);
	nl_cb_err(cb, NL_CB_CUSTOM, ctrl_error_cb, &rq);

	while (!rq.done) {
		ret = nl_recvmsgs(ctrl->sk, cb);
		/* An error callback's NL_STOP comes back as an error, too. */
		if (ret < 0 && !rq.done)
			break;
		ret = 0;
	}

	/* Nothing may point into this stack frame once it is gone. */
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, NULL, NULL);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, NULL, NULL);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, NULL, NULL);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, NULL, NULL);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, NULL, NULL);
	nl_cb_err(cb, NL_CB_CUSTOM, NULL, NULL);

	if (ret < 0)
		return nlerr_to_errno(ret);
	if (rq.kerr)
		return rq.kerr;
	if (rq.perr < 0)
		return rq.perr;
	if (rq.intr) {
		snprintf(ctrl->errmsg, sizeof(ctrl->errmsg),
			 "dump interrupted by a concurrent change, try again");
		return -EAGAIN;
	}
	return rq.replies;
}

/* ------------------------------------------------------------ handles */

/* The id of the "events" group in a CTRL_ATTR_MCAST_GROUPS nest, or 0. */
static uint32_t family_mcgrp(struct nlattr *groups)
{
	struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1];
	struct nlattr *grp;
	int rem;

	nla_for_each_nested(grp, groups, rem) {
		if (nla_parse_nested(tb, CTRL_ATTR_MCAST_GRP_MAX, grp,
				     mcgrp_policy) ||
		    !tb[CTRL_ATTR_MCAST_GRP_NAME] ||
		    !tb[CTRL_ATTR_MCAST_GRP_ID])
			continue;
		if (!strcmp(nla_get_string(tb[CTRL_ATTR_MCAST_GRP_NAME]),
			    SACRED_GENL_MCGRP_EVENTS))
			return nla_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	}
	return 0;
}

static int family_parse(struct ctrl_req *rq, struct nlmsghdr *nlh)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct sacred_ctrl *ctrl = rq->ctrl;

	if (rq->replies > 1)
		return 0;
	if (genlmsg_parse(nlh, 0, tb, CTRL_ATTR_MAX, family_policy) ||
	    !tb[CTRL_ATTR_FAMILY_ID])
		return -EPROTO;
	ctrl->family = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_VERSION])
		ctrl->version = nla_get_u32(tb[CTRL_ATTR_VERSION]);
	if (tb[CTRL_ATTR_MCAST_GROUPS])
		ctrl->mcgrp_events = family_mcgrp(tb[CTRL_ATTR_MCAST_GROUPS]);
	return 0;
}

/*
 * Resolve the family with our own CTRL_CMD_GETFAMILY rather than
 * genl_ctrl_resolve(): it also gives the family's version, and the kernel's
 * own errno (ENOENT when the family is not registered).
 */
static int ctrl_resolve(struct sacred_ctrl *ctrl)
{
	struct nl_msg *msg;
	int ret;

	msg = ctrl_msg(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	if (!msg)
		return -ENOMEM;
	ret = nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, SACRED_GENL_NAME);
	if (ret < 0) {
		ret = -EMSGSIZE;
		goto out;
	}
	ret = ctrl_request(ctrl, msg, family_parse, NULL);
	if (ret == 0)
		ret = -EPROTO;	/* an ACK without the family */
	else if (ret > 0)
		ret = 0;
out:
	nlmsg_free(msg);
	return ret;
}

int sacred_ctrl_open(struct sacred_ctrl **ctrlp)
{
	struct sacred_ctrl *ctrl;
	int one = 1;
	int ret;
	int fd;

	if (!ctrlp)
		return -EINVAL;
	*ctrlp = NULL;

	ctrl = calloc(1, sizeof(*ctrl));
	if (!ctrl)
		return -ENOMEM;
	ctrl->cb = nl_cb_alloc(NL_CB_CUSTOM);
	if (!ctrl->cb) {
		ret = -ENOMEM;
		goto err;
	}
	ctrl->sk = nl_socket_alloc_cb(ctrl->cb);
	if (!ctrl->sk) {
		ret = -ENOMEM;
		goto err;
	}
	ret = genl_connect(ctrl->sk);
	if (ret < 0) {
		ret = nlerr_to_errno(ret);
		goto err;
	}

	/*
	 * Best effort: without extended acks (kernels before 4.12) errors
	 * just come without a message. Capped acks do not echo our request.
	 */
	fd = nl_socket_get_fd(ctrl->sk);
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	ret = ctrl_resolve(ctrl);
	if (ret < 0)
		goto err;

	ctrl->errmsg[0] = '\0';
	*ctrlp = ctrl;
	return 0;

err:
	sacred_ctrl_close(ctrl);
	return ret;
}

void sacred_ctrl_close(struct sacred_ctrl *ctrl)
{
	if (!ctrl)
		return;
	if (ctrl->sk)
		nl_socket_free(ctrl->sk);
	if (ctrl->cb)
		nl_cb_put(ctrl->cb);
	free(ctrl);
}

const char *sacred_ctrl_errmsg(const struct sacred_ctrl *ctrl)
{
	if (!ctrl || !ctrl->errmsg[0])
		return NULL;
	return ctrl->errmsg;
}

unsigned int sacred_ctrl_family_version(const struct sacred_ctrl *ctrl)
{
	return ctrl ? ctrl->version : 0;
}

/* ------------------------------------------------------------ objects */

/*
 * Every object - a device, a memory instance, a region - comes in a message
 * of its own, and one parser per kind turns that message into the caller's
 * struct. The helpers below run the three kinds of requests the API has:
 * a doit answered by one object, a doit naming its object by ids, and a
 * dump handing every object to a callback.
 */
typedef int (*obj_parse_t)(struct nlmsghdr *nlh, void *obj);

/**
 * struct ctrl_obj - where the object a doit answers with goes
 * @parse: its parser
 * @obj: the caller's struct
 */
struct ctrl_obj {
	obj_parse_t parse;
	void *obj;
};

static int obj_one_parse(struct ctrl_req *rq, struct nlmsghdr *nlh)
{
	const struct ctrl_obj *one = rq->arg;

	if (rq->replies > 1)
		return 0;
	return one->parse(nlh, one->obj);
}

/**
 * ctrl_request_obj() - send a doit and parse the object it answers with
 * @ctrl: handle
 * @msg: the request; still owned by the caller
 * @parse: parser of the reply
 * @obj: where the object goes; NULL: a reply is read but not parsed
 *
 * Return: as ctrl_request(): the number of replies (0 when the kernel only
 * ACKed), or a negative errno.
 */
static int ctrl_request_obj(struct sacred_ctrl *ctrl, struct nl_msg *msg,
			    obj_parse_t parse, void *obj)
{
	struct ctrl_obj one = { .parse = parse, .obj = obj };

	return ctrl_request(ctrl, msg, obj ? obj_one_parse : NULL, &one);
}

/**
 * ctrl_get() - ctrl_request_obj() for a command that must answer @obj
 *
 * Return: 0; -EPROTO if @obj is not NULL and the kernel ACKed without
 * sending the object; another negative errno.
 */
static int ctrl_get(struct sacred_ctrl *ctrl, struct nl_msg *msg,
		    obj_parse_t parse, void *obj)
{
	int ret = ctrl_request_obj(ctrl, msg, parse, obj);

	if (ret == 0 && obj)
		return -EPROTO;
	return ret < 0 ? ret : 0;
}

/* Put MEM_ID and, if @region_id is not NULL, REGION_ID; 0 or -EMSGSIZE. */
static int ctrl_put_ids(struct nl_msg *msg, uint32_t mem_id,
			const uint32_t *region_id)
{
	if (nla_put_u32(msg, SACRED_ATTR_MEM_ID, mem_id) < 0 ||
	    (region_id &&
	     nla_put_u32(msg, SACRED_ATTR_REGION_ID, *region_id) < 0))
		return -EMSGSIZE;
	return 0;
}

/**
 * ctrl_id_request() - a doit naming its object by ids
 * @ctrl: handle
 * @cmd: command
 * @mem_id: %SACRED_ATTR_MEM_ID
 * @region_id: %SACRED_ATTR_REGION_ID, or NULL for a command on an instance
 * @parse: parser of the reply
 * @obj: where the object goes, or NULL for a command without a reply
 *
 * Return: as ctrl_get().
 */
static int ctrl_id_request(struct sacred_ctrl *ctrl, uint8_t cmd,
			   uint32_t mem_id, const uint32_t *region_id,
			   obj_parse_t parse, void *obj)
{
	struct nl_msg *msg;
	int ret;

	msg = sacred_msg(ctrl, cmd, 0);
	if (!msg)
		return -ENOMEM;
	ret = ctrl_put_ids(msg, mem_id, region_id);
	if (!ret)
		ret = ctrl_get(ctrl, msg, parse, obj);
	nlmsg_free(msg);
	return ret;
}

/**
 * ctrl_change() - send a change that answers with no object, and free it
 * @ctrl: handle
 * @msg: the request, built; freed here
 * @bad: building it failed (an attribute did not fit): it is not sent
 *
 * The tail of every command that only changes something.
 *
 * Return: 0; -EMSGSIZE if @bad; the request's negative errno.
 */
static int ctrl_change(struct sacred_ctrl *ctrl, struct nl_msg *msg,
		       bool bad)
{
	int ret = -EMSGSIZE;

	if (!bad)
		ret = ctrl_request_obj(ctrl, msg, NULL, NULL);
	nlmsg_free(msg);
	return ret < 0 ? ret : 0;
}

/*
 * The objects the API gets and lists, one descriptor each: the command
 * that gets one (a doit) or all of them (a dump; kernel side, each
 * command has its own attribute policy), and the parser of one reply
 * into the caller's struct.
 */
enum ctrl_kind {
	CTRL_DEV,
	CTRL_MEM,
	CTRL_REGION,
	CTRL_PEER,
	CTRL_REGION_PROG_ID,	/* a region's BPF program id, in a u32 */
	CTRL_REGION_ACL,	/* a region's ACL, in a struct acl_out */
};

static int parse_dev(struct nlmsghdr *nlh, void *obj);
static int parse_mem(struct nlmsghdr *nlh, void *obj);
static int parse_region(struct nlmsghdr *nlh, void *obj);
static int parse_peer(struct nlmsghdr *nlh, void *obj);
static int parse_prog_id(struct nlmsghdr *nlh, void *obj);
static int parse_acl(struct nlmsghdr *nlh, void *obj);

static const struct ctrl_desc {
	uint8_t cmd;
	obj_parse_t parse;
} ctrl_descs[] = {
	[CTRL_DEV]		= { SACRED_CMD_DEV_GET,    parse_dev },
	[CTRL_MEM]		= { SACRED_CMD_MEM_GET,    parse_mem },
	[CTRL_REGION]		= { SACRED_CMD_REGION_GET, parse_region },
	[CTRL_PEER]		= { SACRED_CMD_PEER_GET,   parse_peer },
	[CTRL_REGION_PROG_ID]	= { SACRED_CMD_REGION_GET, parse_prog_id },
	[CTRL_REGION_ACL]	= { SACRED_CMD_REGION_GET, parse_acl },
};

/**
 * ctrl_lookup() - get one object of @kind, named by ids
 * @ctrl: handle
 * @kind: which descriptor of ctrl_descs[]
 * @mem_id: %SACRED_ATTR_MEM_ID
 * @region_id: %SACRED_ATTR_REGION_ID, or NULL for an instance
 * @obj: where the object goes
 *
 * Return: as ctrl_get(); -EINVAL without @ctrl or @obj.
 */
static int ctrl_lookup(struct sacred_ctrl *ctrl, enum ctrl_kind kind,
		       uint32_t mem_id, const uint32_t *region_id, void *obj)
{
	if (!ctrl || !obj)
		return -EINVAL;
	ctrl_begin(ctrl);
	return ctrl_id_request(ctrl, ctrl_descs[kind].cmd, mem_id, region_id,
			       ctrl_descs[kind].parse, obj);
}

/**
 * struct ctrl_walk - a dump handing every object to the caller
 * @kind: which descriptor of ctrl_descs[] parses the objects
 * @obj: room for one object
 * @cb: the caller's callback, of the object's type
 * @arg: its argument
 * @stop: the callback's return value, once non-zero
 */
struct ctrl_walk {
	enum ctrl_kind kind;
	union {
		struct sacred_dev_info dev;
		struct sacred_mem_info mem;
		struct sacred_region_info region;
		struct sacred_peer_info peer;
	} obj;
	union {
		int (*dev)(const struct sacred_dev_info *info, void *arg);
		int (*mem)(const struct sacred_mem_info *info, void *arg);
		int (*region)(const struct sacred_region_info *info,
			      void *arg);
		int (*peer)(const struct sacred_peer_info *info, void *arg);
	} cb;
	void *arg;
	int stop;
};

/* Hand the object just parsed to the callback of its type. */
static int walk_call(struct ctrl_walk *walk)
{
	switch (walk->kind) {
	case CTRL_DEV:
		return walk->cb.dev(&walk->obj.dev, walk->arg);
	case CTRL_MEM:
		return walk->cb.mem(&walk->obj.mem, walk->arg);
	case CTRL_REGION:
		return walk->cb.region(&walk->obj.region, walk->arg);
	case CTRL_PEER:
		return walk->cb.peer(&walk->obj.peer, walk->arg);
	default:
		return -EINVAL;
	}
}

static int walk_parse(struct ctrl_req *rq, struct nlmsghdr *nlh)
{
	struct ctrl_walk *walk = rq->arg;
	int ret;

	ret = ctrl_descs[walk->kind].parse(nlh, &walk->obj);
	if (ret)
		return ret;
	walk->stop = walk_call(walk);
	return walk->stop ? 1 : 0;
}

/**
 * ctrl_list() - dump the objects of @walk's kind to its callback
 * @ctrl: handle
 * @mem_id: only the objects of this instance (%SACRED_ATTR_MEM_ID in the
 *	request), or %SACRED_MEM_ID_ANY for all
 * @walk: kind and callback
 *
 * Return: 0, the non-zero return of the callback that stopped the walk,
 * or a negative errno; -EINVAL without @ctrl.
 */
static int ctrl_list(struct sacred_ctrl *ctrl, uint32_t mem_id,
		     struct ctrl_walk *walk)
{
	struct nl_msg *msg;
	int ret = 0;

	if (!ctrl)
		return -EINVAL;
	ctrl_begin(ctrl);
	msg = sacred_msg(ctrl, ctrl_descs[walk->kind].cmd, NLM_F_DUMP);
	if (!msg)
		return -ENOMEM;
	if (mem_id != SACRED_MEM_ID_ANY)
		ret = ctrl_put_ids(msg, mem_id, NULL);
	if (!ret)
		ret = ctrl_request(ctrl, msg, walk_parse, walk);
	nlmsg_free(msg);

	if (walk->stop)
		return walk->stop;
	return ret < 0 ? ret : 0;
}

/* ------------------------------------------------------------ devices */

static int parse_port(struct nlattr *nest, struct sacred_port_info *port)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1];

	if (nla_parse_nested(tb, SACRED_ATTR_MAX, nest, sacred_policy) ||
	    !tb[SACRED_ATTR_PORT_INDEX])
		return -EPROTO;

	memset(port, 0, sizeof(*port));
	port->index = nla_get_u32(tb[SACRED_ATTR_PORT_INDEX]);
	if (tb[SACRED_ATTR_PORT_STATE])
		port->state = nla_get_u8(tb[SACRED_ATTR_PORT_STATE]);
	if (tb[SACRED_ATTR_PORT_PHYS_STATE])
		port->phys_state = nla_get_u8(tb[SACRED_ATTR_PORT_PHYS_STATE]);
	if (tb[SACRED_ATTR_PORT_LINK_LAYER])
		port->link_layer = nla_get_u8(tb[SACRED_ATTR_PORT_LINK_LAYER]);
	if (tb[SACRED_ATTR_PORT_ACTIVE_MTU])
		port->active_mtu = nla_get_u32(tb[SACRED_ATTR_PORT_ACTIVE_MTU]);
	if (tb[SACRED_ATTR_PORT_NETDEV])
		nla_strlcpy(port->netdev, tb[SACRED_ATTR_PORT_NETDEV],
			    sizeof(port->netdev));
	return 0;
}

static int parse_dev(struct nlmsghdr *nlh, void *obj)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1];
	struct sacred_dev_info *info = obj;
	struct nlattr *pos;
	int rem;
	int ret;

	if (genlmsg_parse(nlh, 0, tb, SACRED_ATTR_MAX, sacred_policy) ||
	    !tb[SACRED_ATTR_DEV_INDEX] || !tb[SACRED_ATTR_DEV_NAME])
		return -EPROTO;

	memset(info, 0, sizeof(*info));
	info->index = nla_get_u32(tb[SACRED_ATTR_DEV_INDEX]);
	nla_strlcpy(info->name, tb[SACRED_ATTR_DEV_NAME], sizeof(info->name));
	if (tb[SACRED_ATTR_DEV_NODE_GUID])
		info->node_guid = nla_get_u64(tb[SACRED_ATTR_DEV_NODE_GUID]);

	if (tb[SACRED_ATTR_DEV_PORTS]) {
		nla_for_each_nested(pos, tb[SACRED_ATTR_DEV_PORTS], rem) {
			if (nla_type(pos) != SACRED_ATTR_PORT)
				continue;
			if (info->nr_port_info == SACRED_MAX_PORTS)
				break;
			ret = parse_port(pos, &info->ports[info->nr_port_info]);
			if (ret)
				return ret;
			info->nr_port_info++;
		}
	}

	if (tb[SACRED_ATTR_DEV_NUM_PORTS])
		info->num_ports = nla_get_u32(tb[SACRED_ATTR_DEV_NUM_PORTS]);
	else
		info->num_ports = info->nr_port_info;
	return 0;
}

int sacred_dev_get(struct sacred_ctrl *ctrl, const char *name, uint32_t index,
		   struct sacred_dev_info *info)
{
	struct nl_msg *msg;
	int ret;

	if (!ctrl || !info)
		return -EINVAL;
	ctrl_begin(ctrl);
	/* No device has a name that long, or an empty one. */
	if (name && (!name[0] || strlen(name) >= SACRED_NAME_MAX))
		return -ENODEV;

	msg = sacred_msg(ctrl, SACRED_CMD_DEV_GET, 0);
	if (!msg)
		return -ENOMEM;
	if (name)
		ret = nla_put_string(msg, SACRED_ATTR_DEV_NAME, name);
	else
		ret = nla_put_u32(msg, SACRED_ATTR_DEV_INDEX, index);
	if (ret < 0)
		ret = -EMSGSIZE;
	else
		ret = ctrl_get(ctrl, msg, parse_dev, info);
	nlmsg_free(msg);
	return ret;
}

int sacred_dev_list(struct sacred_ctrl *ctrl,
		    int (*cb)(const struct sacred_dev_info *info, void *arg),
		    void *arg)
{
	struct ctrl_walk w = { .kind = CTRL_DEV, .cb.dev = cb, .arg = arg };

	return cb ? ctrl_list(ctrl, SACRED_MEM_ID_ANY, &w) : -EINVAL;
}

/* ----------------------------------------------------------- memories */

static int parse_mem(struct nlmsghdr *nlh, void *obj)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1];
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sacred_mem_info *info = obj;
	struct nlattr *addr;
	uint16_t cm_port = 0;

	if (genlmsg_parse(nlh, 0, tb, SACRED_ATTR_MAX, sacred_policy) ||
	    !tb[SACRED_ATTR_MEM_ID])
		return -EPROTO;

	memset(info, 0, sizeof(*info));
	info->id = nla_get_u32(tb[SACRED_ATTR_MEM_ID]);
	if (tb[SACRED_ATTR_DEV_INDEX])
		info->dev_index = nla_get_u32(tb[SACRED_ATTR_DEV_INDEX]);
	if (tb[SACRED_ATTR_DEV_NAME])
		nla_strlcpy(info->dev_name, tb[SACRED_ATTR_DEV_NAME],
			    sizeof(info->dev_name));
	if (tb[SACRED_ATTR_PORT_INDEX])
		info->port = nla_get_u32(tb[SACRED_ATTR_PORT_INDEX]);
	if (tb[SACRED_ATTR_MEM_STATE])
		info->state = nla_get_u8(tb[SACRED_ATTR_MEM_STATE]);
	if (tb[SACRED_ATTR_MEM_PORT])
		cm_port = nla_get_u16(tb[SACRED_ATTR_MEM_PORT]);
	if (tb[SACRED_ATTR_MEM_MEM_CAP])
		info->mem_cap = nla_get_u64(tb[SACRED_ATTR_MEM_MEM_CAP]);
	if (tb[SACRED_ATTR_MEM_MEM_USED])
		info->mem_used = nla_get_u64(tb[SACRED_ATTR_MEM_MEM_USED]);
	if (tb[SACRED_ATTR_MEM_NR_REGIONS])
		info->nr_regions = nla_get_u32(tb[SACRED_ATTR_MEM_NR_REGIONS]);
	if (tb[SACRED_ATTR_MEM_KEYED])
		info->keyed = nla_get_u8(tb[SACRED_ATTR_MEM_KEYED]);
	if (tb[SACRED_ATTR_MEM_META_BYTES])
		info->meta_bytes = nla_get_u64(tb[SACRED_ATTR_MEM_META_BYTES]);
	if (tb[SACRED_ATTR_MEM_NR_PEERS])
		info->nr_peers = nla_get_u32(tb[SACRED_ATTR_MEM_NR_PEERS]);
	if (tb[SACRED_ATTR_MEM_NR_CONNS])
		info->nr_conns = nla_get_u32(tb[SACRED_ATTR_MEM_NR_CONNS]);
	if (tb[SACRED_ATTR_MEM_NR_MRS])
		info->nr_mrs = nla_get_u32(tb[SACRED_ATTR_MEM_NR_MRS]);
	if (tb[SACRED_ATTR_MEM_MR_PAGES])
		info->mr_pages = nla_get_u64(tb[SACRED_ATTR_MEM_MR_PAGES]);

	addr = tb[SACRED_ATTR_MEM_ADDR];
	if (!addr) {
		info->addr.ss_family = AF_UNSPEC;
	} else if (nla_len(addr) == sizeof(sin.sin_addr)) {
		memcpy(&sin.sin_addr, nla_data(addr), sizeof(sin.sin_addr));
		sin.sin_port = htons(cm_port);
		memcpy(&info->addr, &sin, sizeof(sin));
	} else if (nla_len(addr) == sizeof(sin6.sin6_addr)) {
		memcpy(&sin6.sin6_addr, nla_data(addr), sizeof(sin6.sin6_addr));
		sin6.sin6_port = htons(cm_port);
		memcpy(&info->addr, &sin6, sizeof(sin6));
	} else {
		return -EPROTO;
	}
	return 0;
}

int sacred_mem_new(struct sacred_ctrl *ctrl,
		   const struct sacred_mem_params *params,
		   struct sacred_mem_info *info)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;
	const void *addr = NULL;
	struct nl_msg *msg;
	size_t addr_len = 0;
	uint16_t cm_port;
	size_t len;
	int ret;

	if (!ctrl || !params)
		return -EINVAL;
	ctrl_begin(ctrl);
	if (!params->dev_name)
		return -EINVAL;
	len = strlen(params->dev_name);
	if (!len || len >= SACRED_NAME_MAX)
		return -EINVAL;

	/* A zero port in @addr falls back to @cm_port. */
	cm_port = params->cm_port;
	switch (params->addr.ss_family) {
	case AF_UNSPEC:
		break;
	case AF_INET:
		memcpy(&sin, &params->addr, sizeof(sin));
		addr = &sin.sin_addr;
		addr_len = sizeof(sin.sin_addr);
		if (sin.sin_port)
			cm_port = ntohs(sin.sin_port);
		break;
	case AF_INET6:
		memcpy(&sin6, &params->addr, sizeof(sin6));
		addr = &sin6.sin6_addr;
		addr_len = sizeof(sin6.sin6_addr);
		if (sin6.sin6_port)
			cm_port = ntohs(sin6.sin6_port);
		break;
	default:
		return -EAFNOSUPPORT;
	}

	msg = sacred_msg(ctrl, SACRED_CMD_MEM_NEW, 0);
	if (!msg)
		return -ENOMEM;
	if ((params->id != SACRED_MEM_ID_ANY &&
	     nla_put_u32(msg, SACRED_ATTR_MEM_ID, params->id) < 0) ||
	    nla_put_string(msg, SACRED_ATTR_DEV_NAME, params->dev_name) < 0 ||
	    nla_put_u32(msg, SACRED_ATTR_PORT_INDEX,
			params->port ? params->port : 1) < 0 ||
	    (addr && nla_put(msg, SACRED_ATTR_MEM_ADDR, addr_len, addr) < 0) ||
	    nla_put_u16(msg, SACRED_ATTR_MEM_PORT, cm_port) < 0 ||
	    (params->mem_cap &&
	     nla_put_u64(msg, SACRED_ATTR_MEM_MEM_CAP, params->mem_cap) < 0) ||
	    (params->key && nla_put(msg, SACRED_ATTR_MEM_KEY, params->key_len,
				    params->key) < 0)) {
		ret = -EMSGSIZE;
		goto out;
	}

	ret = ctrl_request_obj(ctrl, msg, parse_mem, info);
	if (ret > 0 || (ret == 0 && !info)) {
		ret = 0;
	} else if (ret == 0) {
		/*
		 * Created, but the kernel could not send the instance back
		 * (it does not fail the command for that). Ask for it.
		 */
		if (params->id != SACRED_MEM_ID_ANY)
			ret = sacred_mem_get(ctrl, params->id, info);
		else
			ret = -ENOMSG;
	}
out:
	nlmsg_free(msg);
	return ret;
}

int sacred_mem_del(struct sacred_ctrl *ctrl, uint32_t id)
{
	if (!ctrl)
		return -EINVAL;
	ctrl_begin(ctrl);
	return ctrl_id_request(ctrl, SACRED_CMD_MEM_DEL, id, NULL, NULL, NULL);
}

int sacred_mem_set(struct sacred_ctrl *ctrl, uint32_t id, uint8_t state,
		   uint64_t mem_cap, struct sacred_mem_info *info)
{
	struct nl_msg *msg;
	int ret;

	if (!ctrl || (!state && !mem_cap))
		return -EINVAL;
	ctrl_begin(ctrl);

	msg = sacred_msg(ctrl, SACRED_CMD_MEM_SET, 0);
	if (!msg)
		return -ENOMEM;
	if (ctrl_put_ids(msg, id, NULL) ||
	    (state && nla_put_u8(msg, SACRED_ATTR_MEM_STATE, state) < 0) ||
	    (mem_cap &&
	     nla_put_u64(msg, SACRED_ATTR_MEM_MEM_CAP, mem_cap) < 0)) {
		ret = -EMSGSIZE;
		goto out;
	}
	ret = ctrl_request_obj(ctrl, msg, parse_mem, info);
	if (ret > 0 || (ret == 0 && !info))
		ret = 0;
	else if (ret == 0)
		ret = sacred_mem_get(ctrl, id, info);
out:
	nlmsg_free(msg);
	return ret;
}

int sacred_mem_set_key(struct sacred_ctrl *ctrl, uint32_t id, const void *key,
		       size_t len)
{
	struct nl_msg *msg;

	if (!ctrl || (key && !len) || len > SACRED_KEY_MAX)
		return -EINVAL;
	ctrl_begin(ctrl);

	msg = sacred_msg(ctrl, SACRED_CMD_MEM_SET, 0);
	if (!msg)
		return -ENOMEM;
	/* An empty MEM_KEY takes the key away. */
	return ctrl_change(ctrl, msg, ctrl_put_ids(msg, id, NULL) ||
			   nla_put(msg, SACRED_ATTR_MEM_KEY, key ? len : 0,
				   key) < 0);
}

int sacred_mem_get(struct sacred_ctrl *ctrl, uint32_t id,
		   struct sacred_mem_info *info)
{
	return ctrl_lookup(ctrl, CTRL_MEM, id, NULL, info);
}

int sacred_mem_list(struct sacred_ctrl *ctrl,
		    int (*cb)(const struct sacred_mem_info *info, void *arg),
		    void *arg)
{
	struct ctrl_walk w = { .kind = CTRL_MEM, .cb.mem = cb, .arg = arg };

	return cb ? ctrl_list(ctrl, SACRED_MEM_ID_ANY, &w) : -EINVAL;
}

/* ------------------------------------------------------------ regions */

static int parse_region(struct nlmsghdr *nlh, void *obj)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1];
	struct sacred_region_info *info = obj;

	if (genlmsg_parse(nlh, 0, tb, SACRED_ATTR_MAX, sacred_policy) ||
	    !tb[SACRED_ATTR_MEM_ID] || !tb[SACRED_ATTR_REGION_ID])
		return -EPROTO;

	memset(info, 0, sizeof(*info));
	info->mem_id = nla_get_u32(tb[SACRED_ATTR_MEM_ID]);
	info->id = nla_get_u32(tb[SACRED_ATTR_REGION_ID]);
	if (tb[SACRED_ATTR_REGION_SIZE])
		info->size = nla_get_u64(tb[SACRED_ATTR_REGION_SIZE]);
	if (tb[SACRED_ATTR_REGION_POLICY])
		info->policy = nla_get_u8(tb[SACRED_ATTR_REGION_POLICY]);
	if (tb[SACRED_ATTR_REGION_EPOCH])
		info->epoch = nla_get_u32(tb[SACRED_ATTR_REGION_EPOCH]);
	if (tb[SACRED_ATTR_REGION_NR_CHUNKS])
		info->nr_chunks = nla_get_u32(tb[SACRED_ATTR_REGION_NR_CHUNKS]);
	if (tb[SACRED_ATTR_REGION_RACED])
		info->raced = nla_get_u64(tb[SACRED_ATTR_REGION_RACED]);
	if (tb[SACRED_ATTR_REGION_TAG])
		info->tag = nla_get_u64(tb[SACRED_ATTR_REGION_TAG]);
	return 0;
}

static int ctrl_region_new(struct sacred_ctrl *ctrl, uint32_t mem_id,
			   uint32_t id, uint64_t size, uint8_t policy,
			   const uint64_t *tag, int prog_fd,
			   struct sacred_region_info *info)
{
	struct nl_msg *msg;
	int ret;

	if (!ctrl)
		return -EINVAL;
	ctrl_begin(ctrl);

	/* The kernel checks @size and @policy, and says what is wrong. */
	msg = sacred_msg(ctrl, SACRED_CMD_REGION_NEW, 0);
	if (!msg)
		return -ENOMEM;
	if (ctrl_put_ids(msg, mem_id,
			 id != SACRED_REGION_ID_ANY ? &id : NULL) ||
	    nla_put_u64(msg, SACRED_ATTR_REGION_SIZE, size) < 0 ||
	    nla_put_u8(msg, SACRED_ATTR_REGION_POLICY, policy) < 0 ||
	    (tag && nla_put_u64(msg, SACRED_ATTR_REGION_TAG, *tag) < 0) ||
	    (prog_fd >= 0 &&
	     nla_put_u32(msg, SACRED_ATTR_REGION_PROG_FD, prog_fd) < 0)) {
		ret = -EMSGSIZE;
		goto out;
	}

	ret = ctrl_request_obj(ctrl, msg, parse_region, info);
	if (ret > 0 || (ret == 0 && !info)) {
		ret = 0;
	} else if (ret == 0) {
		/* Created without a reply, as in sacred_mem_new(). */
		if (id != SACRED_REGION_ID_ANY)
			ret = sacred_region_get(ctrl, mem_id, id, info);
		else
			ret = -ENOMSG;
	}
out:
	nlmsg_free(msg);
	return ret;
}

int sacred_region_new(struct sacred_ctrl *ctrl, uint32_t mem_id, uint32_t id,
		      uint64_t size, uint8_t policy,
		      struct sacred_region_info *info)
{
	return ctrl_region_new(ctrl, mem_id, id, size, policy, NULL, -1, info);
}

int sacred_region_new_tagged(struct sacred_ctrl *ctrl, uint32_t mem_id,
			     uint32_t id, uint64_t size, uint8_t policy,
			     uint64_t tag, struct sacred_region_info *info)
{
	return ctrl_region_new(ctrl, mem_id, id, size, policy, &tag, -1, info);
}

int sacred_region_new_prog(struct sacred_ctrl *ctrl, uint32_t mem_id,
			   uint32_t id, uint64_t size, int prog_fd,
			   const uint64_t *tag,
			   struct sacred_region_info *info)
{
	if (prog_fd < 0)
		return -EBADF;
	return ctrl_region_new(ctrl, mem_id, id, size, SACRED_POLICY_BPF,
			       tag, prog_fd, info);
}

int sacred_region_set_policy(struct sacred_ctrl *ctrl, uint32_t mem_id,
			     uint32_t region_id, uint8_t policy, int prog_fd)
{
	struct nl_msg *msg;

	if (!ctrl)
		return -EINVAL;
	ctrl_begin(ctrl);
	msg = sacred_msg(ctrl, SACRED_CMD_REGION_SET, 0);
	if (!msg)
		return -ENOMEM;
	return ctrl_change(ctrl, msg,
			   ctrl_put_ids(msg, mem_id, &region_id) ||
			   nla_put_u8(msg, SACRED_ATTR_REGION_POLICY,
				      policy) < 0 ||
			   (prog_fd >= 0 &&
			    nla_put_u32(msg, SACRED_ATTR_REGION_PROG_FD,
					prog_fd) < 0));
}

static int parse_prog_id(struct nlmsghdr *nlh, void *obj)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1];
	uint32_t *prog_id = obj;

	if (genlmsg_parse(nlh, 0, tb, SACRED_ATTR_MAX, sacred_policy))
		return -EPROTO;
	*prog_id = tb[SACRED_ATTR_REGION_PROG_ID] ?
		   nla_get_u32(tb[SACRED_ATTR_REGION_PROG_ID]) : 0;
	return 0;
}

int sacred_region_prog_id(struct sacred_ctrl *ctrl, uint32_t mem_id,
			  uint32_t region_id, uint32_t *prog_id)
{
	return ctrl_lookup(ctrl, CTRL_REGION_PROG_ID, mem_id, &region_id,
			   prog_id);
}

int sacred_region_del(struct sacred_ctrl *ctrl, uint32_t mem_id, uint32_t id)
{
	if (!ctrl)
		return -EINVAL;
	ctrl_begin(ctrl);
	return ctrl_id_request(ctrl, SACRED_CMD_REGION_DEL, mem_id, &id, NULL,
			       NULL);
}

int sacred_region_get(struct sacred_ctrl *ctrl, uint32_t mem_id, uint32_t id,
		      struct sacred_region_info *info)
{
	return ctrl_lookup(ctrl, CTRL_REGION, mem_id, &id, info);
}

int sacred_region_list(struct sacred_ctrl *ctrl, uint32_t mem_id,
		       int (*cb)(const struct sacred_region_info *info,
				 void *arg),
		       void *arg)
{
	struct ctrl_walk w = {
		.kind = CTRL_REGION, .cb.region = cb, .arg = arg,
	};

	return cb ? ctrl_list(ctrl, mem_id, &w) : -EINVAL;
}

/* --------------------------------------------------------- permissions */

/* Put @acl (@n entries) as a REGION_ACL nest; 0 or -EMSGSIZE. */
static int ctrl_put_acl(struct nl_msg *msg, const struct sacred_acl_entry *acl,
			unsigned int n)
{
	struct nlattr *nest, *ent;
	unsigned int i;

	nest = nla_nest_start(msg, SACRED_ATTR_REGION_ACL);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		ent = nla_nest_start(msg, SACRED_ATTR_ACL_ENTRY);
		if (!ent ||
		    nla_put_u32(msg, SACRED_ATTR_PROCESS_ID,
				acl[i].process_id) < 0 ||
		    nla_put_u32(msg, SACRED_ATTR_ACCESS, acl[i].access) < 0)
			return -EMSGSIZE;
		nla_nest_end(msg, ent);
	}
	/*
	 * An empty ACL is an empty nest: plain nla_nest_end() would drop
	 * it, and the kernel would find no REGION_ACL at all. Past 64 KiB
	 * libnl drops the nest too, and says so.
	 */
	if (nla_nest_end_keep_empty(msg, nest) < 0)
		return -EMSGSIZE;
	return 0;
}

int sacred_region_set_acl(struct sacred_ctrl *ctrl, uint32_t mem_id,
			  uint32_t region_id,
			  const struct sacred_acl_entry *acl, unsigned int n)
{
	struct nl_msg *msg;

	if (!ctrl || (n && !acl))
		return -EINVAL;
	ctrl_begin(ctrl);

	/* An ACL of 1024 entries takes ~36 KiB. */
	msg = nlmsg_alloc_size(64 + n * 40);
	if (!msg)
		return -ENOMEM;
	return ctrl_change(ctrl, msg,
			   !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ,
					ctrl->family, 0, 0,
					SACRED_CMD_REGION_SET,
					SACRED_GENL_VERSION) ||
			   ctrl_put_ids(msg, mem_id, &region_id) ||
			   ctrl_put_acl(msg, acl, n));
}

/* The ACL of a REGION_* reply, into struct acl_out. */
struct acl_out {
	struct sacred_acl_entry *acl;
	unsigned int max;
	unsigned int n;
	uint64_t ballot;
};

static int parse_acl(struct nlmsghdr *nlh, void *obj)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1], *et[SACRED_ATTR_MAX + 1];
	struct acl_out *out = obj;
	struct nlattr *ent;
	int rem;

	if (genlmsg_parse(nlh, 0, tb, SACRED_ATTR_MAX, sacred_policy))
		return -EPROTO;
	out->n = 0;
	if (tb[SACRED_ATTR_BALLOT])
		out->ballot = nla_get_u64(tb[SACRED_ATTR_BALLOT]);
	if (!tb[SACRED_ATTR_REGION_ACL])
		return 0;
	nla_for_each_nested(ent, tb[SACRED_ATTR_REGION_ACL], rem) {
		struct sacred_acl_entry *e;

		if (nla_parse_nested(et, SACRED_ATTR_MAX, ent, sacred_policy) ||
		    !et[SACRED_ATTR_PROCESS_ID] || !et[SACRED_ATTR_ACCESS])
			return -EPROTO;
		if (out->n >= out->max) {
			out->n++;
			continue;
		}
		e = &out->acl[out->n++];
		e->process_id = nla_get_u32(et[SACRED_ATTR_PROCESS_ID]);
		e->access = nla_get_u32(et[SACRED_ATTR_ACCESS]);
		e->access_cur = et[SACRED_ATTR_ACCESS_CUR] ?
			nla_get_u32(et[SACRED_ATTR_ACCESS_CUR]) : 0;
	}
	return 0;
}

int sacred_region_get_acl(struct sacred_ctrl *ctrl, uint32_t mem_id,
			  uint32_t region_id, struct sacred_acl_entry *acl,
			  unsigned int max, unsigned int *n, uint64_t *ballot)
{
	struct acl_out out = { .acl = acl, .max = max };
	int ret;

	if (!n || (max && !acl))
		return -EINVAL;
	ret = ctrl_lookup(ctrl, CTRL_REGION_ACL, mem_id, &region_id, &out);
	if (ret)
		return ret;
	*n = out.n;
	if (ballot)
		*ballot = out.ballot;
	return out.n > max ? -ENOSPC : 0;
}

int sacred_perm_set(struct sacred_ctrl *ctrl, uint32_t mem_id,
		    uint32_t process_id, const struct sacred_perm_req *req)
{
	struct nl_msg *msg;
	bool bad;

	if (!ctrl || !req)
		return -EINVAL;
	ctrl_begin(ctrl);

	msg = sacred_msg(ctrl, SACRED_CMD_PERM_SET, 0);
	if (!msg)
		return -ENOMEM;
	bad = ctrl_put_ids(msg, mem_id, &req->region_id) ||
	      nla_put_u32(msg, SACRED_ATTR_PROCESS_ID, process_id) < 0 ||
	      nla_put_u32(msg, SACRED_ATTR_ACCESS, req->access) < 0 ||
	      (req->ballot &&
	       nla_put_u64(msg, SACRED_ATTR_BALLOT, req->ballot) < 0) ||
	      (req->target &&
	       nla_put_u32(msg, SACRED_ATTR_TARGET, req->target) < 0);
	return ctrl_change(ctrl, msg, bad);
}

/* ------------------------------------------------------------------ peers */

static int parse_peer(struct nlmsghdr *nlh, void *obj)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1];
	struct sacred_peer_info *info = obj;

	if (genlmsg_parse(nlh, 0, tb, SACRED_ATTR_MAX, sacred_policy) ||
	    !tb[SACRED_ATTR_MEM_ID] || !tb[SACRED_ATTR_PROCESS_ID])
		return -EPROTO;

	memset(info, 0, sizeof(*info));
	info->mem_id = nla_get_u32(tb[SACRED_ATTR_MEM_ID]);
	info->process_id = nla_get_u32(tb[SACRED_ATTR_PROCESS_ID]);
	if (tb[SACRED_ATTR_PEER_CONNECTED])
		info->connected = nla_get_u8(tb[SACRED_ATTR_PEER_CONNECTED]);
	if (tb[SACRED_ATTR_PEER_REQUESTS])
		info->requests = nla_get_u64(tb[SACRED_ATTR_PEER_REQUESTS]);
	if (tb[SACRED_ATTR_PEER_REFUSED])
		info->refused = nla_get_u64(tb[SACRED_ATTR_PEER_REFUSED]);
	if (tb[SACRED_ATTR_PEER_FENCES])
		info->fences = nla_get_u64(tb[SACRED_ATTR_PEER_FENCES]);
	if (tb[SACRED_ATTR_PEER_CONNECTS])
		info->connects = nla_get_u64(tb[SACRED_ATTR_PEER_CONNECTS]);
	if (tb[SACRED_ATTR_PEER_MRS])
		info->mrs = nla_get_u32(tb[SACRED_ATTR_PEER_MRS]);
	if (tb[SACRED_ATTR_PEER_RACED])
		info->raced = nla_get_u64(tb[SACRED_ATTR_PEER_RACED]);
	if (tb[SACRED_ATTR_PEER_CQ_CHANGES])
		info->cq_changes =
			nla_get_u64(tb[SACRED_ATTR_PEER_CQ_CHANGES]);
	return 0;
}

int sacred_peer_list(struct sacred_ctrl *ctrl, uint32_t mem_id,
		     int (*cb)(const struct sacred_peer_info *info, void *arg),
		     void *arg)
{
	struct ctrl_walk w = { .kind = CTRL_PEER, .cb.peer = cb, .arg = arg };

	return cb ? ctrl_list(ctrl, mem_id, &w) : -EINVAL;
}

/* ------------------------------------------------------------- monitor */

/* First size of the receive buffer; it grows to the largest datagram. */
#define MONITOR_BUF_SIZE	8192
/* Asked for the socket's receive buffer (capped by net.core.rmem_max). */
#define MONITOR_RCVBUF		(1 << 20)

/**
 * struct sacred_monitor - a subscription to the "events" group
 * @ctrl: a control handle of its own: its socket resolved the family and
 *	then joined the group; no request is sent on it afterwards
 * @buf: the last datagram received
 * @size: bytes @buf holds
 * @len: bytes of the datagram in @buf
 * @off: where its next message starts
 */
struct sacred_monitor {
	struct sacred_ctrl *ctrl;
	char *buf;
	size_t size;
	size_t len;
	size_t off;
};

static int parse_perm_event(struct nlmsghdr *nlh, void *obj)
{
	struct nlattr *tb[SACRED_ATTR_MAX + 1];
	struct sacred_perm_event *perm = obj;

	if (genlmsg_parse(nlh, 0, tb, SACRED_ATTR_MAX, sacred_policy) ||
	    !tb[SACRED_ATTR_MEM_ID] || !tb[SACRED_ATTR_REGION_ID] ||
	    !tb[SACRED_ATTR_PROCESS_ID])
		return -EPROTO;

	memset(perm, 0, sizeof(*perm));
	perm->mem_id = nla_get_u32(tb[SACRED_ATTR_MEM_ID]);
	perm->region_id = nla_get_u32(tb[SACRED_ATTR_REGION_ID]);
	perm->process_id = nla_get_u32(tb[SACRED_ATTR_PROCESS_ID]);
	if (tb[SACRED_ATTR_ACCESS])
		perm->access = nla_get_u32(tb[SACRED_ATTR_ACCESS]);
	if (tb[SACRED_ATTR_BALLOT])
		perm->ballot = nla_get_u64(tb[SACRED_ATTR_BALLOT]);
	if (tb[SACRED_ATTR_TARGET])
		perm->target = nla_get_u32(tb[SACRED_ATTR_TARGET]);
	if (tb[SACRED_ATTR_REGION_EPOCH])
		perm->epoch = nla_get_u32(tb[SACRED_ATTR_REGION_EPOCH]);
	if (tb[SACRED_ATTR_REFUSE_REASON])
		perm->reason = nla_get_u32(tb[SACRED_ATTR_REFUSE_REASON]);
	if (tb[SACRED_ATTR_PERM_ERROR]) {
		uint32_t err = nla_get_u32(tb[SACRED_ATTR_PERM_ERROR]);

		/* A positive errno, never 0: anything else is malformed. */
		if (!err || err > 4095)
			return -EPROTO;
		perm->error = -(int32_t)err;
	}
	return 0;
}

/**
 * monitor_parse() - turn one message into an event
 * @mon: monitor
 * @nlh: the message, known to fit in the datagram
 * @ev: the event
 *
 * Return: 0 with @ev filled in; 1 for a message that is no event this
 * library knows (another family, a newer command, a netlink control
 * message); -EPROTO if it is malformed.
 */
static int monitor_parse(struct sacred_monitor *mon, struct nlmsghdr *nlh,
			 struct sacred_event *ev)
{
	static const struct {
		int type;
		obj_parse_t parse;
		size_t offset;
	} cmds[] = {
		[SACRED_CMD_MEM_NEW] = { SACRED_EVENT_MEM_NEW, parse_mem,
					 offsetof(struct sacred_event, mem) },
		[SACRED_CMD_MEM_DEL] = { SACRED_EVENT_MEM_DEL, parse_mem,
					 offsetof(struct sacred_event, mem) },
		[SACRED_CMD_MEM_SET] = { SACRED_EVENT_MEM_SET, parse_mem,
					 offsetof(struct sacred_event, mem) },
		[SACRED_CMD_REGION_NEW] = { SACRED_EVENT_REGION_NEW,
					    parse_region,
					    offsetof(struct sacred_event,
						     region) },
		[SACRED_CMD_REGION_DEL] = { SACRED_EVENT_REGION_DEL,
					    parse_region,
					    offsetof(struct sacred_event,
						     region) },
		[SACRED_CMD_REGION_SET] = { SACRED_EVENT_REGION_SET,
					    parse_region,
					    offsetof(struct sacred_event,
						     region) },
		[SACRED_CMD_PERM_SET] = { SACRED_EVENT_PERM, parse_perm_event,
					  offsetof(struct sacred_event, perm) },
	};
	struct genlmsghdr *ghdr;

	if (nlh->nlmsg_type != mon->ctrl->family)
		return 1;
	if (!genlmsg_valid_hdr(nlh, 0))
		return -EPROTO;
	ghdr = nlmsg_data(nlh);
	if (ghdr->cmd >= ARRAY_SIZE(cmds) || !cmds[ghdr->cmd].parse)
		return 1;

	memset(ev, 0, sizeof(*ev));
	ev->type = cmds[ghdr->cmd].type;
	return cmds[ghdr->cmd].parse(nlh, (char *)ev + cmds[ghdr->cmd].offset);
}

/*
 * Wait up to @timeout_ms for a datagram and read it whole into @mon->buf.
 * Return: 0; -EAGAIN if none came; -ENOBUFS if the kernel dropped some
 * for want of room in the socket; another negative errno.
 */
static int monitor_recv(struct sacred_monitor *mon, int timeout_ms)
{
	int fd = nl_socket_get_fd(mon->ctrl->sk);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct sockaddr_nl from;
	socklen_t from_len;
	ssize_t n;
	char *buf;
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return -errno;
	if (!ret)
		return -EAGAIN;

	/* Netlink reports a datagram's whole length with MSG_TRUNC. */
	n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if ((size_t)n > mon->size) {
		buf = realloc(mon->buf, n);
		if (!buf)
			return -ENOMEM;
		mon->buf = buf;
		mon->size = n;
	}

	from_len = sizeof(from);
	n = recvfrom(fd, mon->buf, mon->size, MSG_DONTWAIT,
		     (struct sockaddr *)&from, &from_len);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	/* Only the kernel speaks for sacred.ko. */
	if (from_len != sizeof(from) || from.nl_pid != 0)
		n = 0;
	mon->len = n;
	mon->off = 0;
	return 0;
}

int sacred_monitor_next(struct sacred_monitor *mon, struct sacred_event *ev,
			int timeout_ms)
{
	struct nlmsghdr *nlh;
	size_t left;
	int ret;

	if (!mon || !ev)
		return -EINVAL;
	for (;;) {
		while (mon->off < mon->len) {
			nlh = (struct nlmsghdr *)(mon->buf + mon->off);
			left = mon->len - mon->off;
			if (!nlmsg_ok(nlh, left)) {
				mon->off = mon->len;	/* a torn tail */
				return -EPROTO;
			}
			mon->off += NLMSG_ALIGN(nlh->nlmsg_len) < left ?
				    NLMSG_ALIGN(nlh->nlmsg_len) : left;
			ret = monitor_parse(mon, nlh, ev);
			if (ret <= 0)
				return ret;
		}
		ret = monitor_recv(mon, timeout_ms);
		if (ret)
			return ret;
	}
}

int sacred_monitor_fd(const struct sacred_monitor *mon)
{
	return mon ? nl_socket_get_fd(mon->ctrl->sk) : -1;
}

int sacred_monitor_open(struct sacred_monitor **monp)
{
	struct sacred_monitor *mon;
	int ret;

	if (!monp)
		return -EINVAL;
	*monp = NULL;

	mon = calloc(1, sizeof(*mon));
	if (!mon)
		return -ENOMEM;
	mon->size = MONITOR_BUF_SIZE;
	mon->buf = malloc(mon->size);
	if (!mon->buf) {
		ret = -ENOMEM;
		goto err;
	}
	ret = sacred_ctrl_open(&mon->ctrl);
	if (ret)
		goto err;
	if (!mon->ctrl->mcgrp_events) {
		ret = -EOPNOTSUPP;
		goto err;
	}

	/* Best effort: a bigger buffer loses fewer events in a burst. */
	nl_socket_set_buffer_size(mon->ctrl->sk, MONITOR_RCVBUF, 0);
	/* Events carry sequence number 0; libnl must not check them. */
	nl_socket_disable_seq_check(mon->ctrl->sk);
	ret = nl_socket_add_membership(mon->ctrl->sk, mon->ctrl->mcgrp_events);
	if (ret < 0) {
		ret = nlerr_to_errno(ret);
		goto err;
	}

	*monp = mon;
	return 0;

err:
	sacred_monitor_close(mon);
	return ret;
}

void sacred_monitor_close(struct sacred_monitor *mon)
{
	if (!mon)
		return;
	sacred_ctrl_close(mon->ctrl);
	free(mon->buf);
	free(mon);
}
