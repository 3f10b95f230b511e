/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw generic netlink for the sacred selftests.
 *
 * libsacred only sends well-formed messages; these helpers build any
 * message, malformed ones included, send it, and return the kernel's errno
 * and extended-ack message. No libnl: what goes on the wire is exactly
 * what the test wrote.
 */
#ifndef _SACRED_NLRAW_H
#define _SACRED_NLRAW_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

#define NLRAW_BUFSZ 8192

struct nlraw {
	int fd;
	uint16_t family;
	uint32_t seq;
	/* the message being built */
	char buf[NLRAW_BUFSZ] __attribute__((aligned(NLMSG_ALIGNTO)));
	/* last answer */
	char rbuf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	char errmsg[256];
	uint32_t miss_type;
	int dump_entries;
};

static inline struct nlmsghdr *nlraw_hdr(struct nlraw *nl)
{
	return (struct nlmsghdr *)nl->buf;
}

/* Start a message: @type is the family id, @cmd the genl command. */
static inline void nlraw_start(struct nlraw *nl, uint16_t type, uint8_t cmd,
			       uint16_t flags, uint8_t version)
{
	struct nlmsghdr *nlh = nlraw_hdr(nl);
	struct genlmsghdr *gh;

	memset(nl->buf, 0, sizeof(nl->buf));
	nlh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	gh = NLMSG_DATA(nlh);
	gh->cmd = cmd;
	gh->version = version;
}

/* Append an attribute with any length, even a wrong one. */
static inline void *nlraw_put(struct nlraw *nl, uint16_t type,
			      const void *data, size_t len)
{
	struct nlmsghdr *nlh = nlraw_hdr(nl);
	struct nlattr *nla = (void *)(nl->buf + NLMSG_ALIGN(nlh->nlmsg_len));

	if (NLMSG_ALIGN(nlh->nlmsg_len) + NLA_HDRLEN + NLA_ALIGN(len) >
	    sizeof(nl->buf))
		return NULL;
	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)nla + NLA_HDRLEN, data, len);
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + NLA_ALIGN(nla->nla_len);
	return nla;
}

static inline void nlraw_put_u32(struct nlraw *nl, uint16_t type, uint32_t v)
{
	nlraw_put(nl, type, &v, sizeof(v));
}

static inline void nlraw_put_u16(struct nlraw *nl, uint16_t type, uint16_t v)
{
	nlraw_put(nl, type, &v, sizeof(v));
}

static inline void nlraw_put_str(struct nlraw *nl, uint16_t type,
				 const char *s)
{
	nlraw_put(nl, type, s, strlen(s) + 1);
}

/* Parse an NLMSG_ERROR: returns its errno (<= 0) and records extack. */
static inline int nlraw_parse_err(struct nlraw *nl, struct nlmsghdr *nlh)
{
	struct nlmsgerr *err = NLMSG_DATA(nlh);
	size_t off = sizeof(*err);
	struct nlattr *nla;

	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += err->msg.nlmsg_len - sizeof(err->msg);
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return err->error;

	nla = (void *)((char *)err + NLMSG_ALIGN(off));
	while ((char *)nla + NLA_HDRLEN <= (char *)nlh + nlh->nlmsg_len &&
	       nla->nla_len >= NLA_HDRLEN) {
		const char *data = (char *)nla + NLA_HDRLEN;
		size_t len = nla->nla_len - NLA_HDRLEN;

		if ((nla->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
			snprintf(nl->errmsg, sizeof(nl->errmsg), "%.*s",
				 (int)len, data);
		} else if ((nla->nla_type & NLA_TYPE_MASK) ==
			   NLMSGERR_ATTR_MISS_TYPE && len >= 4) {
			memcpy(&nl->miss_type, data, 4);
		}
		nla = (void *)((char *)nla + NLA_ALIGN(nla->nla_len));
	}
	return err->error;
}

/*
 * Send the message built and read until the ack (or the end of a dump).
 * Returns 0 or the negative errno the kernel answered. The first reply
 * message (not the ack) stays in rbuf; dump_entries counts the messages.
 */
static inline int nlraw_xfer(struct nlraw *nl)
{
	struct nlmsghdr *nlh = nlraw_hdr(nl);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	static char tmp[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	int first = 1;

	nl->errmsg[0] = 0;
	nl->miss_type = 0;
	nl->dump_entries = 0;
	if (sendto(nl->fd, nl->buf, nlh->nlmsg_len, 0, (void *)&sa,
		   sizeof(sa)) < 0)
		return -errno;

	for (;;) {
		ssize_t n = recv(nl->fd, tmp, sizeof(tmp), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return -errno;
		for (h = (void *)tmp; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != nl->seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return nlraw_parse_err(nl, h);
			if (h->nlmsg_type == NLMSG_DONE)
				return *(int *)NLMSG_DATA(h);
			if (first) {
				memcpy(nl->rbuf, h, h->nlmsg_len);
				first = 0;
			}
			nl->dump_entries++;
		}
	}
}

/* Find attribute @type at the top level of the reply kept in rbuf. */
static inline struct nlattr *nlraw_reply_attr(struct nlraw *nl, uint16_t type)
{
	struct nlmsghdr *nlh = (void *)nl->rbuf;
	struct nlattr *nla = (void *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	char *end = (char *)nlh + nlh->nlmsg_len;

	while ((char *)nla + NLA_HDRLEN <= end && nla->nla_len >= NLA_HDRLEN) {
		if ((nla->nla_type & NLA_TYPE_MASK) == type)
			return nla;
		nla = (void *)((char *)nla + NLA_ALIGN(nla->nla_len));
	}
	return NULL;
}

/*
 * Ask the generic netlink controller about family @name: its answer's
 * attribute @type into *@attr (NULL if it has none); 0 or -errno.
 */
static inline int nlraw_family_attr(struct nlraw *nl, const char *name,
				    uint16_t type, struct nlattr **attr)
{
	int ret;

	nlraw_start(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, 1);
	nlraw_put_str(nl, CTRL_ATTR_FAMILY_NAME, name);
	ret = nlraw_xfer(nl);
	*attr = ret ? NULL : nlraw_reply_attr(nl, type);
	return ret;
}

/* Open a socket with extended acks and resolve @name; 0 or -errno. */
static inline int nlraw_open(struct nlraw *nl, const char *name)
{
	struct nlattr *id;
	int one = 1, ret;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));

	ret = nlraw_family_attr(nl, name, CTRL_ATTR_FAMILY_ID, &id);
	if (ret)
		goto err;
	if (!id) {
		ret = -EPROTO;
		goto err;
	}
	memcpy(&nl->family, (char *)id + NLA_HDRLEN, sizeof(nl->family));
	return 0;
err:
	close(nl->fd);
	nl->fd = -1;
	return ret;
}

static inline void nlraw_close(struct nlraw *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}

/*
 * Helpers for callers that build their own datagrams and read the answers
 * themselves (the fuzzer: several threads, each with its own socket and
 * buffers, where nlraw_xfer()'s shared buffer and blocking read will not
 * do).
 */

/* Send @len bytes exactly as they are, malformed or not, to the kernel. */
static inline int nlraw_send_raw(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(fd, buf, len, 0, (void *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/*
 * Wait up to @timeout_ms for one datagram and read it into @buf. Returns
 * its length, -ETIMEDOUT if none came, -EMSGSIZE if it did not fit (it is
 * consumed all the same), or another -errno.
 */
static inline ssize_t nlraw_recv_timeout(int fd, void *buf, size_t len,
					 int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int ret;

	do
		ret = poll(&pfd, 1, timeout_ms);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	if (!ret)
		return -ETIMEDOUT;
	n = recv(fd, buf, len, MSG_TRUNC | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	if ((size_t)n > len)
		return -EMSGSIZE;
	return n;
}

/* Find attribute @type at the top level of genetlink message @nlh. */
static inline struct nlattr *nlraw_msg_attr(const struct nlmsghdr *nlh,
					    uint16_t type)
{
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	struct nlattr *nla;

	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return NULL;
	nla = (void *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	while ((char *)nla + NLA_HDRLEN <= end && nla->nla_len >= NLA_HDRLEN &&
	       (char *)nla + nla->nla_len <= end) {
		if ((nla->nla_type & NLA_TYPE_MASK) == type)
			return nla;
		nla = (void *)((char *)nla + NLA_ALIGN(nla->nla_len));
	}
	return NULL;
}

/* The attributes nested in @nest, one by one: for (a = first; a; a = next) */
static inline struct nlattr *nlraw_nested(const struct nlattr *nest,
					  const struct nlattr *prev)
{
	const char *end = (const char *)nest + nest->nla_len;
	const char *p = prev ? (const char *)prev + NLA_ALIGN(prev->nla_len) :
			       (const char *)nest + NLA_HDRLEN;
	const struct nlattr *a = (const void *)p;

	if (p + NLA_HDRLEN > end || a->nla_len < NLA_HDRLEN ||
	    p + a->nla_len > end)
		return NULL;
	return (struct nlattr *)a;
}

/*
 * Join multicast group @group of family @family with @nl's socket (opened
 * by nlraw_open()); 0 or -errno. The group's messages arrive on it from
 * then on, between any answers: keep such a socket for listening.
 */
static inline int nlraw_join_group(struct nlraw *nl, const char *family,
				   const char *group)
{
	struct nlattr *grps, *g, *a;
	int ret;

	ret = nlraw_family_attr(nl, family, CTRL_ATTR_MCAST_GROUPS, &grps);
	if (ret)
		return ret;
	if (!grps)
		return -ENOENT;
	for (g = nlraw_nested(grps, NULL); g; g = nlraw_nested(grps, g)) {
		const char *name = NULL;
		uint32_t id = 0;

		for (a = nlraw_nested(g, NULL); a; a = nlraw_nested(g, a)) {
			size_t len = a->nla_len - NLA_HDRLEN;
			const char *data = (const char *)a + NLA_HDRLEN;

			if ((a->nla_type & NLA_TYPE_MASK) ==
			    CTRL_ATTR_MCAST_GRP_NAME && len &&
			    !data[len - 1])
				name = data;
			else if ((a->nla_type & NLA_TYPE_MASK) ==
				 CTRL_ATTR_MCAST_GRP_ID && len == 4)
				memcpy(&id, data, 4);
		}
		if (!name || strcmp(name, group))
			continue;
		if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			       &id, sizeof(id)))
			return -errno;
		return 0;
	}
	return -ENOENT;
}

#endif /* _SACRED_NLRAW_H */
