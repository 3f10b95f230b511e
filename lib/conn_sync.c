// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - the synchronous data path of a connection: attach, detach,
 * READ, WRITE, compare-and-swap, fetch-and-add and changePermission, each a
 * blocking call.
 *
 * A call posts one work request (an RDMA READ, WRITE or atomic, or the SEND
 * of a request) and waits for its completion - and, for a request, for the
 * reply, matched by cookie (conn_wait(), conn_request()). The regions a
 * connection attached are cached (lib/conn.c); a reply refreshes the cache
 * (conn_cache_update()). Connecting is lib/conn.c, the asynchronous
 * operations lib/conn_io.c, reconnecting lib/conn_reconnect.c.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>


#include "conn_internal.h"
#include "internal.h"
#include "sacred.h"

/* ------------------------------------------------------------------ */
/* Completions.                                                        */

static void conn_wc(struct conn_wait *w, const struct ibv_wc *wc)
{
	bool recv = wc->wr_id & CONN_RECV_TAG;

	if (wc->status != IBV_WC_SUCCESS) {
		if (!w->failed || (w->err == IBV_WC_WR_FLUSH_ERR &&
				   wc->status != IBV_WC_WR_FLUSH_ERR)) {
			w->failed = true;
			w->err = wc->status;
			w->err_recv = recv;
		}
		if (!recv && wc->wr_id == w->wr_id)
			w->send_done = true;
		return;
	}
	if (recv) {
		if (!w->want_recv || w->recv_done) {
			w->unsolicited = true;
			return;
		}
		w->recv_done = true;
		w->recv_slot = wc->wr_id & ~CONN_RECV_TAG;
		w->recv_len = wc->byte_len;
		return;
	}
	if (wc->wr_id == w->wr_id)
		w->send_done = true;
}

/* The errno and message of a failed completion; breaks the connection. */
int conn_wc_fail(struct sacred_conn *conn, const struct conn_wait *w)
{
	const char *status = ibv_wc_status_str(w->err);

	switch (w->err) {
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
		return conn_break(conn, -EACCES,
				  "%s on region %u of memory %u: %s: permission revoked or never held?",
				  w->what, w->region_id, conn->mem_id, status);
	case IBV_WC_WR_FLUSH_ERR:
		return conn_break(conn, -ECONNRESET,
				  "%s on region %u of memory %u: flushed: the connection is down",
				  w->what, w->region_id, conn->mem_id);
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_BAD_RESP_ERR:
	case IBV_WC_FATAL_ERR:
	case IBV_WC_GENERAL_ERR:
		return conn_break(conn, -ECONNRESET,
				  "%s on region %u of memory %u: %s",
				  w->what, w->region_id, conn->mem_id, status);
	default:
		if (w->err == IBV_WC_LOC_LEN_ERR && w->err_recv)
			return conn_break(conn, -EPROTO,
					  "%s: memory %u sent a message longer than %d bytes",
					  w->what, conn->mem_id,
					  SACRED_WIRE_MSG_MAX);
		return conn_break(conn, -EIO,
				  "%s on region %u of memory %u: %s%s",
				  w->what, w->region_id, conn->mem_id,
				  w->err_recv ? "receive: " : "", status);
	}
}

/* 1 when @w is satisfied, 0 while it is not, or a negative errno. */
static int conn_wait_done(struct sacred_conn *conn, const struct conn_wait *w)
{
	if (w->unsolicited)
		return conn_break(conn, -EPROTO,
				  "%s: memory %u sent a message nobody asked for",
				  w->what, conn->mem_id);
	if (!w->send_done)
		return 0;
	if (w->failed)
		return conn_wc_fail(conn, w);
	return !w->want_recv || w->recv_done;
}

/*
 * Sleep until the CQ has an event, the rdma_cm channel has one, or
 * @ns pass. Returns 0 or a negative errno (disconnect, poll failure). A
 * disconnect fails the call once its completion has had the grace of
 * conn_down() to come: a refusal may complete after the disconnect.
 */
static int conn_sleep(struct sacred_conn *conn, const struct conn_wait *w,
		      uint64_t ns)
{
	struct pollfd pfd[2] = {
		{ .fd = conn->cc->fd, .events = POLLIN },
		{ .fd = conn->ch->fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	uint64_t ms, grace;
	void *cq_ctx;
	int ret;

	if (conn_down(conn, &grace)) {
		if (!grace)
			return conn_break(conn, -ECONNRESET,
					  "%s on region %u: memory %u disconnected",
					  w->what, w->region_id, conn->mem_id);
		ns = grace < ns ? grace : ns;
	}
	ms = (ns + 999999) / 1000000;
	ret = poll(pfd, 2, ms > INT_MAX ? INT_MAX : (int)ms);
	if (ret < 0) {
		if (errno == EINTR)
			return 0;
		return conn_break(conn, -errno, "%s: poll: %s", w->what,
				  strerror(errno));
	}
	if (pfd[0].revents && !ibv_get_cq_event(conn->cc, &cq, &cq_ctx))
		ibv_ack_cq_events(cq, 1);
	return 0;
}

/*
 * Wait for what @w describes: busy-poll for CONN_SPIN_NS, then sleep on
 * the completion and rdma_cm channels, until the connection's timeout.
 * Any failure breaks the connection.
 */
static int conn_wait(struct sacred_conn *conn, struct conn_wait *w)
{
	uint64_t t0 = now_ns();
	uint64_t deadline = t0 + conn->timeout_ms * 1000000ULL;
	unsigned int polls = 0;
	struct ibv_wc wc[8];
	bool armed = false;
	uint64_t t;
	int n, i, ret;

	for (;;) {
		n = ibv_poll_cq(conn->cq, 8, wc);
		if (n < 0)
			return conn_break(conn, -EIO, "%s: ibv_poll_cq failed",
					  w->what);
		for (i = 0; i < n; i++)
			conn_wc(w, &wc[i]);
		ret = conn_wait_done(conn, w);
		if (ret)
			return ret < 0 ? ret : 0;
		if (n || ++polls % 64)
			continue;

		t = now_ns();
		if (t >= deadline)
			return conn_break(conn, -ETIMEDOUT,
					  "%s on region %u of memory %u: no answer within %d ms",
					  w->what, w->region_id, conn->mem_id,
					  conn->timeout_ms);
		if (t - t0 < CONN_SPIN_NS)
			continue;
		if (!armed) {
			/* Poll once more after arming: nothing slips by. */
			if (ibv_req_notify_cq(conn->cq, 0))
				return conn_break(conn, -EIO,
						  "%s: ibv_req_notify_cq failed",
						  w->what);
			armed = true;
			continue;
		}
		ret = conn_sleep(conn, w, deadline - t);
		if (ret)
			return ret;
		armed = false;
	}
}

/* Post @wr (signaled) and wait for its completion, and a reply if asked. */
static int conn_post_wait(struct sacred_conn *conn, struct ibv_send_wr *wr,
			  struct conn_wait *w)
{
	struct ibv_send_wr *bad;
	int ret;

	wr->wr_id = ++conn->wr_seq & ~CONN_RECV_TAG;
	wr->send_flags |= IBV_SEND_SIGNALED;
	w->wr_id = wr->wr_id;
	ret = ibv_post_send(conn->qp, wr, &bad);
	if (ret)
		return conn_break(conn, -ret, "%s: ibv_post_send: %s",
				  w->what, strerror(ret));
	return conn_wait(conn, w);
}

/* ------------------------------------------------------------------ */
/* Requests and replies.                                               */

/* Check the reply in receive slot @w->recv_slot against the request. */
int conn_parse_reply(struct sacred_conn *conn,
		     const struct conn_wait *w, uint32_t cookie,
		     struct conn_reply *out)
{
	struct sacred_wire_reply m;
	uint64_t addr, size;

	if (w->recv_len < sizeof(m))
		return conn_break(conn, -EPROTO,
				  "%s: reply of %u bytes from memory %u, want %zu",
				  w->what, w->recv_len, conn->mem_id,
				  sizeof(m));
	memcpy(&m, conn->ctl->recv[w->recv_slot], sizeof(m));
	if (le16toh(m.hdr.version) != SACRED_WIRE_VERSION ||
	    le16toh(m.hdr.op) != SACRED_OP_REPLY)
		return conn_break(conn, -EPROTO,
				  "%s: memory %u sent version %u op %u, want a version %d reply",
				  w->what, conn->mem_id,
				  le16toh(m.hdr.version), le16toh(m.hdr.op),
				  SACRED_WIRE_VERSION);
	if (le32toh(m.hdr.cookie) != cookie)
		return conn_break(conn, -EPROTO,
				  "%s: reply with cookie %u from memory %u, want %u",
				  w->what, le32toh(m.hdr.cookie), conn->mem_id,
				  cookie);

	memset(out, 0, sizeof(*out));
	out->status = le32toh(m.status);
	out->reason = le32toh(m.reason);
	if (out->status > SACRED_ST_FAILED)
		return conn_break(conn, -EPROTO,
				  "%s: unknown status %u from memory %u",
				  w->what, out->status, conn->mem_id);
	/* A request found malformed has no region to echo. */
	if (out->status == SACRED_ST_INVALID)
		return 0;
	if (le32toh(m.region_id) != w->region_id)
		return conn_break(conn, -EPROTO,
				  "%s: reply about region %u from memory %u, asked about %u",
				  w->what, le32toh(m.region_id), conn->mem_id,
				  w->region_id);

	addr = le64toh(m.addr);
	size = le64toh(m.size);
	out->region.region_id = w->region_id;
	out->region.access = le32toh(m.access);
	out->region.rkey = le32toh(m.rkey);
	out->region.epoch = le32toh(m.epoch);
	out->region.addr = addr;
	out->region.size = size;
	out->region.tag = le64toh(m.tag);
	if (out->status != SACRED_ST_OK)
		return 0;
	if (out->region.access & ~SACRED_ACCESS_ALL || !size ||
	    addr + size < addr)
		return conn_break(conn, -EPROTO,
				  "%s: bad region from memory %u: access %#x addr %#llx size %llu",
				  w->what, conn->mem_id, out->region.access,
				  (unsigned long long)addr,
				  (unsigned long long)size);
	if (!out->region.access)
		out->region.rkey = 0;
	return 0;
}

/* Send one request and wait for its checked reply. */
static int conn_request(struct sacred_conn *conn, uint16_t op,
			const char *what, uint32_t region_id, uint32_t access,
			uint64_t ballot, uint32_t target,
			struct conn_reply *out)
{
	struct sacred_wire_req *req = (void *)conn->ctl->send;
	struct conn_wait w = {
		.what		= what,
		.region_id	= region_id,
		.want_recv	= true,
	};
	struct ibv_sge sge = {
		.addr	= (uintptr_t)req,
		.length	= sizeof(*req),
		.lkey	= conn->ctl_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IBV_WR_SEND,
	};
	uint32_t cookie = ++conn->cookie;
	int ret, ret2;

	memset(req, 0, sizeof(*req));
	req->hdr.version = htole16(SACRED_WIRE_VERSION);
	req->hdr.op = htole16(op);
	req->hdr.cookie = htole32(cookie);
	req->region_id = htole32(region_id);
	req->access = htole32(access);
	req->ballot = htole64(ballot);
	req->target = htole32(target);
	if (sizeof(*req) <= conn->max_inline)
		wr.send_flags = IBV_SEND_INLINE;

	ret = conn_post_wait(conn, &wr, &w);
	if (ret)
		return ret;
	ret = conn_parse_reply(conn, &w, cookie, out);
	ret2 = conn_post_recv(conn, w.recv_slot);
	if (ret2 && !ret)
		ret = conn_break(conn, ret2, "%s: ibv_post_recv: %s", what,
				 strerror(-ret2));
	return ret;
}

/* The errno of a reply's status, with a message; for ATTACH and PERM. */
int conn_status(struct sacred_conn *conn, const char *what,
		uint32_t region_id, const struct conn_reply *rep)
{
	switch (rep->status) {
	case SACRED_ST_OK:
		return 0;
	case SACRED_ST_REFUSED:
		return conn_fail(conn, -EPERM,
				 "%s on region %u of memory %u: refused: %s",
				 what, region_id, conn->mem_id,
				 refuse_reason_str(rep->reason));
	case SACRED_ST_NO_REGION:
		return conn_fail(conn, -ENOENT,
				 "%s: memory %u has no region %u",
				 what, conn->mem_id, region_id);
	case SACRED_ST_NO_ACCESS:
		return conn_fail(conn, -EACCES,
				 "%s: process %u is not a member of region %u of memory %u",
				 what, conn->process_id, region_id,
				 conn->mem_id);
	case SACRED_ST_INVALID:
		return conn_fail(conn, -EINVAL,
				 "%s on region %u: memory %u found the request malformed",
				 what, region_id, conn->mem_id);
	default:
		return conn_fail(conn, -EIO,
				 "%s on region %u: memory %u failed to apply it (access may have shrunk)",
				 what, region_id, conn->mem_id);
	}
}

/* The error of a call on a region gone or made again since attached. */
int conn_stale(struct sacred_conn *conn, const char *what,
	       uint32_t region_id)
{
	return conn_fail(conn, -ESTALE,
			 "%s: region %u of memory %u was deleted or made again since it was attached: attach it anew",
			 what, region_id, conn->mem_id);
}

/*
 * Bring the cache up to date after a reply whose status gave @ret: the
 * region is stored when the memory described it, kept keyless when the
 * process is no member. One that is gone, or was made again since it was
 * cached (another tag) unless @relearn (an ATTACH the caller asked for),
 * is dropped and its id kept stale (-ESTALE from then on): its bytes are
 * not the ones this process knew, and a memory that lost them must not
 * be taken back behind the caller's back. Returns @ret, -ESTALE or
 * -ENOMEM.
 */
int conn_cache_update(struct sacred_conn *conn, const char *what,
		      uint32_t region_id, int ret,
		      const struct sacred_region_attr *attr,
		      bool relearn)
{
	struct sacred_region_attr *r;

	switch (ret) {
	case 0:
		r = conn_region_find(conn, region_id);
		if (r && !relearn && r->tag != attr->tag) {
			unsigned long long was = r->tag;

			conn_region_stale(conn, r);
			return conn_fail(conn, -ESTALE,
					 "%s: region %u of memory %u was made again (tag %#llx, was %#llx): attach it anew",
					 what, region_id, conn->mem_id,
					 (unsigned long long)attr->tag, was);
		}
		if (!r && !relearn && conn_stale_has(conn, region_id))
			return conn_stale(conn, what, region_id);
		if (relearn)
			conn_stale_del(conn, region_id);
		if (conn_region_store(conn, attr))
			return conn_fail(conn, -ENOMEM,
					 "%s: no memory for region %u", what,
					 region_id);
		break;
	case -ENOENT:
		/*
		 * Gone: its id stays refused, or a changePermission would
		 * take a region made later under it for this one.
		 */
		r = conn_region_find(conn, region_id);
		if (r)
			conn_region_stale(conn, r);
		break;
	case -EACCES:
		r = conn_region_find(conn, region_id);
		if (r) {
			r->access = 0;
			r->rkey = 0;
		}
		break;
	}
	return ret;
}

/* ATTACH one region and bring the cache up to date. */
int conn_attach(struct sacred_conn *conn, uint32_t region_id,
		struct sacred_region_attr *attr, bool relearn)
{
	struct conn_reply rep;
	int ret;

	ret = conn_request(conn, SACRED_OP_ATTACH, "ATTACH", region_id, 0, 0,
			   0, &rep);
	if (ret)
		return ret;
	ret = conn_status(conn, "ATTACH", region_id, &rep);
	ret = conn_cache_update(conn, "ATTACH", region_id, ret, &rep.region,
				relearn);
	if (!ret && attr)
		*attr = rep.region;
	return ret;
}


/*
 * May a blocking call go ahead? Not while asynchronous operations are in
 * flight: it would take their completions for its own, and it copies
 * through their slots of the bounce buffer. On a broken connection only
 * after the reconnect that SACRED_CONN_AUTO_RECONNECT asks for.
 */
static int conn_sync_ready(struct sacred_conn *conn, const char *what)
{
	conn->errmsg[0] = '\0';
	if (conn->nr_pending) {
		conn_reap(conn);
		if (conn->nr_pending)
			return conn_fail(conn, -EBUSY,
					 "%s: %u asynchronous operations in flight: wait for them first",
					 what, conn->nr_pending);
	}
	if (!conn->broken)
		return 0;
	if (!conn->auto_reconnect)
		return conn_broken(conn);
	return sacred_conn_reconnect(conn);
}


/**
 * sacred_attach() - learn a region's key, bounds and the access held
 * @conn: the connection
 * @region_id: the region
 * @attr: gets the region as the memory describes it; may be NULL
 *
 * Asks the memory (SACRED_OP_ATTACH) and caches the answer: reads,
 * writes and atomics on the region use it, and sacred_conn_reconnect()
 * renews it. Attaching again refreshes the cache (after an access error,
 * or to see the current epoch).
 *
 * Return: 0 (access may be 0: a member holding nothing now); -ENOENT if
 * the memory has no such region; -EACCES if the process is not a member
 * of its ACL; -ECONNRESET if the connection is broken; -ETIMEDOUT;
 * -EPROTO if the memory's reply is malformed; another negative errno.
 */
int sacred_attach(struct sacred_conn *conn, uint32_t region_id,
		  struct sacred_region_attr *attr)
{
	int ret;

	if (!conn)
		return -EINVAL;
	ret = conn_sync_ready(conn, "ATTACH");
	if (ret)
		return ret;
	return conn_attach(conn, region_id, attr, true);
}

/**
 * sacred_detach() - forget a region
 * @conn: the connection
 * @region_id: the region
 *
 * Local only: the memory keeps the process's grant; the region is just no
 * longer accessible through @conn, nor attached again on reconnect. A
 * region forgotten because it was deleted or made again is let go of too.
 *
 * Return: 0, or -ENOENT if the region is not attached.
 */
int sacred_detach(struct sacred_conn *conn, uint32_t region_id)
{
	if (!conn)
		return -EINVAL;
	conn->errmsg[0] = '\0';
	if (conn_stale_has(conn, region_id)) {
		conn_stale_del(conn, region_id);
		return 0;
	}
	if (!conn_region_find(conn, region_id))
		return conn_fail(conn, -ENOENT, "region %u is not attached",
				 region_id);
	conn_region_drop(conn, region_id);
	return 0;
}

/*
 * lib/internal.h: forget attached region @region_id as if it had been made
 * again - another incarnation than the one of the tag a quorum of
 * memories holds (*@tag), or than any (@tag NULL: no quorum shares one):
 * -ESTALE on every call until attached explicitly.
 */
int sacred_conn_forget(struct sacred_conn *conn, uint32_t region_id,
		       const uint64_t *tag)
{
	struct sacred_region_attr *r = conn_region_find(conn, region_id);
	unsigned long long held;

	if (!r)
		return conn_stale_has(conn, region_id) ? -ESTALE : -ENOENT;
	held = r->tag;
	conn_region_stale(conn, r);
	if (!tag)
		return conn_fail(conn, -ESTALE,
				 "region %u of memory %u (tag %#llx): no quorum of memories holds one incarnation of it: left out",
				 region_id, conn->mem_id, held);
	return conn_fail(conn, -ESTALE,
			 "region %u of memory %u is another incarnation (tag %#llx) than a quorum of memories holds (tag %#llx): left out",
			 region_id, conn->mem_id, held,
			 (unsigned long long)*tag);
}

/**
 * sacred_conn_region() - the cached description of an attached region
 * @conn: the connection
 * @region_id: the region
 * @attr: gets what the last ATTACH or accepted change said
 *
 * Local only; nothing is sent.
 *
 * Return: 0; -ESTALE if it was forgotten because it was deleted or made
 * again since it was attached; -ENOENT if the region is not attached.
 */
int sacred_conn_region(const struct sacred_conn *conn, uint32_t region_id,
		       struct sacred_region_attr *attr)
{
	const struct sacred_region_attr *r;

	if (!conn || !attr)
		return -EINVAL;
	r = conn_region_find((struct sacred_conn *)conn, region_id);
	if (!r)
		return conn_stale_has(conn, region_id) ? -ESTALE : -ENOENT;
	*attr = *r;
	return 0;
}

bool access_valid(uint32_t access)
{
	return access == 0 || access == SACRED_ACCESS_READ ||
	       access == (SACRED_ACCESS_READ | SACRED_ACCESS_WRITE) ||
	       access == SACRED_ACCESS_ALL;
}

/**
 * sacred_change_perm() - changePermission: ask a region's policy for access
 * @conn: the connection
 * @req: the region, the access wanted (0, READ, READ|WRITE or
 *	READ|WRITE|ATOMIC), the ballot (fenced regions) and the target
 *	(revoke-only regions)
 * @result: gets the outcome; may be NULL
 *
 * The memory runs the region's acceptChange policy and applies the change
 * - revocations of other processes first - before it replies. When it is
 * accepted, the region is attached (or its cache entry updated) with the
 * new key.
 *
 * @result->status and @result->reason are set whenever the memory
 * answered; @result->region describes the region after an accepted change
 * and, after a refusal, carries the region's current epoch and size only.
 *
 * Return: 0 when accepted; -EPERM when the policy refused (see
 * @result->reason); -EINVAL for a bad @req or one the memory found
 * malformed; -ENOENT if there is no such region; -EACCES if the process
 * is not a member; -EIO if the memory failed to apply the change (access
 * may have been revoked, never widened); -ECONNRESET, -ETIMEDOUT, -EPROTO
 * as for sacred_attach().
 */
int sacred_change_perm(struct sacred_conn *conn,
		       const struct sacred_perm_req *req,
		       struct sacred_perm_result *result)
{
	struct conn_reply rep;
	int ret;

	if (!conn || !req)
		return -EINVAL;
	conn->errmsg[0] = '\0';
	if (!access_valid(req->access))
		return conn_fail(conn, -EINVAL,
				 "PERM: access %#x is none of 0, r, rw, rwa",
				 req->access);
	if (conn_stale_has(conn, req->region_id))
		return conn_stale(conn, "PERM", req->region_id);
	ret = conn_sync_ready(conn, "PERM");
	if (ret)
		return ret;

	ret = conn_request(conn, SACRED_OP_PERM, "PERM", req->region_id,
			   req->access, req->ballot, req->target, &rep);
	if (ret)
		return ret;
	if (result) {
		result->status = rep.status;
		result->reason = rep.reason;
		result->region = rep.region;
	}
	ret = conn_status(conn, "PERM", req->region_id, &rep);
	return conn_cache_update(conn, "PERM", req->region_id, ret,
				 &rep.region, false);
}

/*
 * The region an access of @len bytes at @offset goes to, after the
 * checks every access makes: region attached, access inside it, some key
 * held.
 */
int conn_io_check(struct sacred_conn *conn, const char *what,
		  uint32_t region_id, uint64_t offset, uint64_t len,
		  struct sacred_region_attr *region)
{
	const struct sacred_region_attr *r;

	r = conn_region_find(conn, region_id);
	if (!r && conn_stale_has(conn, region_id))
		return conn_stale(conn, what, region_id);
	if (!r)
		return conn_fail(conn, -ENOENT,
				 "%s: region %u is not attached", what,
				 region_id);
	if (offset > r->size || len > r->size - offset)
		return conn_fail(conn, -ERANGE,
				 "%s: %llu bytes at offset %llu are outside region %u (%llu bytes)",
				 what, (unsigned long long)len,
				 (unsigned long long)offset, region_id,
				 (unsigned long long)r->size);
	if (!r->access)
		return conn_fail(conn, -EACCES,
				 "%s: no access to region %u held (attach again to refresh)",
				 what, region_id);
	*region = *r;
	return 0;
}

/* One RDMA READ or WRITE of at most bounce_size bytes. */
static int conn_rdma(struct sacred_conn *conn, enum ibv_wr_opcode opcode,
		     const struct sacred_region_attr *r, uint64_t offset,
		     void *local, uint32_t lkey, uint32_t len, bool inl)
{
	struct conn_wait w = {
		.what		= opcode == IBV_WR_RDMA_READ ? "READ" : "WRITE",
		.region_id	= r->region_id,
	};
	struct ibv_sge sge = {
		.addr	= (uintptr_t)local,
		.length	= len,
		.lkey	= lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= opcode,
		.send_flags	= inl ? IBV_SEND_INLINE : 0,
		.wr.rdma	= {
			.remote_addr	= r->addr + offset,
			.rkey		= r->rkey,
		},
	};

	return conn_post_wait(conn, &wr, &w);
}

/**
 * sacred_read() - RDMA READ from a region
 * @conn: the connection
 * @region_id: an attached region
 * @offset: first byte, from the region's start
 * @buf: where the bytes go
 * @len: how many; larger reads are split at the bounce buffer's size
 *
 * Return: 0; -ENOENT if the region is not attached; -ERANGE if the bytes
 * are not all inside the region (nothing is sent); -EACCES if the memory
 * refused the access, or no access is held at all; -ECONNRESET if the
 * connection is broken or breaks; -ETIMEDOUT. After -EACCES (from the
 * memory), -ECONNRESET or -ETIMEDOUT the connection is broken until
 * sacred_conn_reconnect(); @buf may then hold part of the data.
 *
 * When the memory revokes access of a connected process for someone else
 * (an admin, another process's changePermission), it fences and drops
 * that process's connection: its next call fails with -ECONNRESET ("memory
 * disconnected") rather than -EACCES, and the reconnect shows the access
 * left.
 */
int sacred_read(struct sacred_conn *conn, uint32_t region_id,
		uint64_t offset, void *buf, size_t len)
{
	struct sacred_region_attr r;
	size_t n;
	int ret;

	if (!conn || (!buf && len))
		return -EINVAL;
	ret = conn_sync_ready(conn, "READ");
	if (ret)
		return ret;
	ret = conn_io_check(conn, "READ", region_id, offset, len, &r);
	if (ret)
		return ret;
	while (len) {
		n = len < conn->bounce_size ? len : conn->bounce_size;
		ret = conn_rdma(conn, IBV_WR_RDMA_READ, &r, offset,
				conn->bounce, conn->bounce_mr->lkey, n, false);
		if (ret)
			return ret;
		memcpy(buf, conn->bounce, n);
		buf = (uint8_t *)buf + n;
		offset += n;
		len -= n;
	}
	return 0;
}

/**
 * sacred_write() - RDMA WRITE to a region
 * @conn: the connection
 * @region_id: an attached region
 * @offset: first byte, from the region's start
 * @buf: the bytes
 * @len: how many; larger writes are split at the bounce buffer's size and
 *	written in order
 *
 * Return: as sacred_read(). A write that failed may have landed in part
 * (torn) or in whole: the layers above must be able to tell.
 */
int sacred_write(struct sacred_conn *conn, uint32_t region_id,
		 uint64_t offset, const void *buf, size_t len)
{
	struct sacred_region_attr r;
	size_t n;
	int ret;

	if (!conn || (!buf && len))
		return -EINVAL;
	ret = conn_sync_ready(conn, "WRITE");
	if (ret)
		return ret;
	ret = conn_io_check(conn, "WRITE", region_id, offset, len, &r);
	if (ret)
		return ret;
	while (len) {
		n = len < conn->bounce_size ? len : conn->bounce_size;
		if (n <= conn->max_inline) {
			/* Copied into the work request: no bounce, no key. */
			ret = conn_rdma(conn, IBV_WR_RDMA_WRITE, &r, offset,
					(void *)buf, 0, n, true);
		} else {
			memcpy(conn->bounce, buf, n);
			ret = conn_rdma(conn, IBV_WR_RDMA_WRITE, &r, offset,
					conn->bounce, conn->bounce_mr->lkey, n,
					false);
		}
		if (ret)
			return ret;
		buf = (const uint8_t *)buf + n;
		offset += n;
		len -= n;
	}
	return 0;
}

static int conn_atomic(struct sacred_conn *conn, enum ibv_wr_opcode opcode,
		       const char *what, uint32_t region_id, uint64_t offset,
		       uint64_t compare_add, uint64_t swap, uint64_t *old)
{
	struct sacred_region_attr r;
	struct conn_wait w = {
		.what		= what,
		.region_id	= region_id,
	};
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= opcode,
	};
	int ret;

	if (!conn)
		return -EINVAL;
	ret = conn_sync_ready(conn, what);
	if (ret)
		return ret;
	ret = conn_io_check(conn, what, region_id, offset, sizeof(uint64_t),
			    &r);
	if (ret)
		return ret;
	if ((r.addr + offset) % sizeof(uint64_t))
		return conn_fail(conn, -EINVAL,
				 "%s: offset %llu of region %u is not 8-byte aligned",
				 what, (unsigned long long)offset, region_id);
	if (!conn->atomics)
		return conn_fail(conn, -EOPNOTSUPP,
				 "%s: the device does no atomics", what);

	sge.addr = (uintptr_t)&conn->ctl->atomic;
	sge.length = sizeof(uint64_t);
	sge.lkey = conn->ctl_mr->lkey;
	wr.wr.atomic.remote_addr = r.addr + offset;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	wr.wr.atomic.rkey = r.rkey;
	ret = conn_post_wait(conn, &wr, &w);
	if (ret)
		return ret;
	if (old)
		*old = conn->ctl->atomic;
	return 0;
}

/**
 * sacred_cas() - RDMA compare-and-swap on 8 bytes of a region
 * @conn: the connection
 * @region_id: an attached region
 * @offset: 8-byte aligned offset of the word
 * @expect: the value the word must hold
 * @swap: what it becomes if it does
 * @old: gets the value the word held; may be NULL. The swap happened iff
 *	*@old == @expect.
 *
 * The word is a native 64-bit integer of the memory's host.
 *
 * Return: 0; -EINVAL if @offset is not aligned; -EOPNOTSUPP if the
 * device does no atomics; otherwise as sacred_read() (the access needs
 * SACRED_ACCESS_ATOMIC).
 */
int sacred_cas(struct sacred_conn *conn, uint32_t region_id, uint64_t offset,
	       uint64_t expect, uint64_t swap, uint64_t *old)
{
	return conn_atomic(conn, IBV_WR_ATOMIC_CMP_AND_SWP, "CAS", region_id,
			   offset, expect, swap, old);
}

/**
 * sacred_faa() - RDMA fetch-and-add on 8 bytes of a region
 * @conn: the connection
 * @region_id: an attached region
 * @offset: 8-byte aligned offset of the word
 * @add: what to add (modulo 2^64)
 * @old: gets the value before the addition; may be NULL
 *
 * Return: as sacred_cas().
 */
int sacred_faa(struct sacred_conn *conn, uint32_t region_id, uint64_t offset,
	       uint64_t add, uint64_t *old)
{
	return conn_atomic(conn, IBV_WR_ATOMIC_FETCH_AND_ADD, "FAA", region_id,
			   offset, add, 0, old);
}
