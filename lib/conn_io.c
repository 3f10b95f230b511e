// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - asynchronous operations on a connection: sacred_io_post(),
 * sacred_io_poll(), sacred_io_pending() and sacred_io_wait().
 *
 * The bounce buffer is cut into @depth slots of @slot_size bytes, one per
 * operation in flight: a WRITE is copied into its slot when it is posted
 * (or sent inline), a READ lands in its slot and is copied out to the
 * caller's buffer when its completion is reaped, an atomic's old value and
 * a changePermission's request (when it cannot go inline) live there too.
 * Every operation is signaled; its work request id is CONN_ASYNC_TAG | slot.
 * A changePermission is done when both its SEND completed and its reply,
 * matched by cookie, arrived.
 *
 * Failures: the first failed completion breaks the connection (as for the
 * blocking calls) and gives its errno to its operation; every other one in
 * flight then ends with -ECONNRESET, without waiting for the flushes. A
 * disconnect by the memory does the same, and an operation still in
 * flight at its deadline (posted + timeout_ms) ends with -ETIMEDOUT. The
 * slots of operations ended that way are not reused before a reconnect
 * has destroyed the QP that might still write into them.
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


static const char *const io_name[] = {
	[SACRED_IO_READ]	= "READ",
	[SACRED_IO_WRITE]	= "WRITE",
	[SACRED_IO_CAS]		= "CAS",
	[SACRED_IO_FAA]		= "FAA",
	[SACRED_IO_PERM]	= "PERM",
};

static void *conn_slot(struct sacred_conn *conn, const struct conn_op *op)
{
	return (uint8_t *)conn->bounce + (op - conn->ops) * conn->slot_size;
}

static void conn_op_finish(struct sacred_conn *conn, struct conn_op *op,
			   int status)
{
	if (op->done)
		return;
	op->done = true;
	op->res.status = status;
	conn->nr_pending--;
	if (op->io.opcode == SACRED_IO_PERM)
		conn->perms_out--;
}

/* End every operation in flight: @cause with @err, the rest -ECONNRESET. */
void conn_ops_fail(struct sacred_conn *conn, struct conn_op *cause,
		   int err)
{
	unsigned int i;

	for (i = 0; i < conn->depth && conn->nr_pending; i++) {
		struct conn_op *op = &conn->ops[i];

		if (op->busy && !op->done)
			conn_op_finish(conn, op, op == cause ? err : -ECONNRESET);
	}
}

/* A changePermission's reply in receive slot @slot. */
static int conn_op_reply(struct sacred_conn *conn, unsigned int slot,
			 uint32_t len)
{
	struct conn_wait w = {
		.what		= "PERM",
		.recv_slot	= slot,
		.recv_len	= len,
	};
	struct sacred_wire_hdr hdr;
	struct conn_op *op = NULL;
	struct conn_reply rep;
	uint32_t cookie;
	unsigned int i;
	int ret;

	if (slot >= CONN_RECV_DEPTH)
		return conn_break(conn, -EIO, "receive completion for slot %u",
				  slot);
	if (len < sizeof(hdr))
		return conn_break(conn, -EPROTO,
				  "PERM: message of %u bytes from memory %u",
				  len, conn->mem_id);
	memcpy(&hdr, conn->ctl->recv[slot], sizeof(hdr));
	cookie = le32toh(hdr.cookie);
	for (i = 0; i < conn->depth; i++) {
		struct conn_op *o = &conn->ops[i];

		if (o->busy && !o->done && o->io.opcode == SACRED_IO_PERM &&
		    !o->recv_done && o->cookie == cookie) {
			op = o;
			break;
		}
	}
	if (!op)
		return conn_break(conn, -EPROTO,
				  "memory %u sent a message nobody asked for (cookie %u)",
				  conn->mem_id, cookie);

	w.region_id = op->io.perm.region_id;
	ret = conn_parse_reply(conn, &w, cookie, &rep);
	if (ret)
		return ret;
	ret = conn_post_recv(conn, slot);
	if (ret)
		return conn_break(conn, ret, "PERM: ibv_post_recv: %s",
				  strerror(-ret));

	op->res.perm.status = rep.status;
	op->res.perm.reason = rep.reason;
	op->res.perm.region = rep.region;
	ret = conn_status(conn, "PERM", w.region_id, &rep);
	op->res.status = conn_cache_update(conn, "PERM", w.region_id, ret,
					   &rep.region, false);
	op->recv_done = true;
	if (op->send_done)
		conn_op_finish(conn, op, op->res.status);
	return 0;
}

/* One completion; a negative errno breaks the connection (*@cause's). */
static int conn_reap_wc(struct sacred_conn *conn, const struct ibv_wc *wc,
			struct conn_op **cause)
{
	struct conn_wait w = { .failed = true, .err = wc->status };
	uint64_t idx = wc->wr_id & ~(CONN_ASYNC_TAG | CONN_RECV_TAG);
	struct conn_op *op;

	if (wc->wr_id & CONN_RECV_TAG) {
		if (wc->status == IBV_WC_SUCCESS)
			return conn_op_reply(conn, idx, wc->byte_len);
		w.what = "PERM";
		w.err_recv = true;
		return conn_wc_fail(conn, &w);
	}
	/* Anything else is left over from a blocking call that gave up. */
	if (!(wc->wr_id & CONN_ASYNC_TAG) || idx >= conn->depth)
		return 0;
	op = &conn->ops[idx];
	if (!op->busy || op->done)
		return 0;
	if (wc->status != IBV_WC_SUCCESS) {
		w.what = io_name[op->io.opcode];
		w.region_id = op->io.region_id;
		*cause = op;
		return conn_wc_fail(conn, &w);
	}

	switch (op->io.opcode) {
	case SACRED_IO_READ:
		if (op->io.len)
			memcpy(op->io.buf, conn_slot(conn, op), op->io.len);
		break;
	case SACRED_IO_CAS:
	case SACRED_IO_FAA:
		memcpy(&op->res.old, conn_slot(conn, op), sizeof(uint64_t));
		break;
	case SACRED_IO_PERM:
		op->send_done = true;
		if (!op->recv_done)
			return 0;
		break;
	}
	conn_op_finish(conn, op, op->res.status);
	return 0;
}

/*
 * Take whatever the CQ and the rdma_cm channel hold, and end overdue
 * operations. Never blocks.
 */
void conn_reap(struct sacred_conn *conn)
{
	struct conn_op *cause = NULL;
	struct ibv_wc wc[16];
	uint64_t first = UINT64_MAX;
	unsigned int i;
	int n, ret = 0;

	if (!conn->nr_pending)
		return;
	if (conn->broken)
		goto fail;
	do {
		n = ibv_poll_cq(conn->cq, ARRAY_SIZE(wc), wc);
		if (n < 0) {
			ret = conn_break(conn, -EIO, "ibv_poll_cq failed");
			goto fail;
		}
		for (i = 0; i < (unsigned int)n; i++) {
			ret = conn_reap_wc(conn, &wc[i], &cause);
			if (ret)
				goto fail;
		}
	} while (n == ARRAY_SIZE(wc) && conn->nr_pending);
	if (!conn->nr_pending)
		return;

	if (conn_cm_drain(conn)) {
		ret = conn_break(conn, -ECONNRESET, "memory %u disconnected",
				 conn->mem_id);
		goto fail;
	}
	for (i = 0; i < conn->depth; i++) {
		struct conn_op *op = &conn->ops[i];

		if (op->busy && !op->done && op->deadline < first) {
			first = op->deadline;
			cause = op;
		}
	}
	if (now_ns() < first)
		return;
	ret = conn_break(conn, -ETIMEDOUT,
			 "%s on region %u of memory %u: no answer within %d ms",
			 io_name[cause->io.opcode], cause->io.region_id,
			 conn->mem_id, conn->timeout_ms);
fail:
	conn_ops_fail(conn, cause, ret ?: -ECONNRESET);
}

/* Build and post @io in free slot @op; the checks are the caller's. */
static int conn_op_post(struct sacred_conn *conn, struct conn_op *op,
			const struct sacred_io *io,
			const struct sacred_region_attr *r)
{
	const char *what = io_name[io->opcode];
	void *slot = conn_slot(conn, op);
	struct sacred_wire_req *req = slot;
	struct ibv_sge sge = {
		.addr	= (uintptr_t)slot,
		.length	= io->len,
		.lkey	= conn->bounce_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id		= CONN_ASYNC_TAG | (uint64_t)(op - conn->ops),
		.sg_list	= &sge,
		.num_sge	= 1,
		.send_flags	= IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	uint32_t cookie = 0;
	int ret;

	switch (io->opcode) {
	case SACRED_IO_READ:
	case SACRED_IO_WRITE:
		wr.opcode = io->opcode == SACRED_IO_READ ? IBV_WR_RDMA_READ :
							  IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = r->addr + io->offset;
		wr.wr.rdma.rkey = r->rkey;
		if (io->opcode == SACRED_IO_READ || !io->len)
			break;
		if (io->len <= conn->max_inline) {
			sge.addr = (uintptr_t)io->buf;
			wr.send_flags |= IBV_SEND_INLINE;
		} else {
			memcpy(slot, io->buf, io->len);
		}
		break;
	case SACRED_IO_CAS:
	case SACRED_IO_FAA:
		wr.opcode = io->opcode == SACRED_IO_CAS ?
			    IBV_WR_ATOMIC_CMP_AND_SWP :
			    IBV_WR_ATOMIC_FETCH_AND_ADD;
		sge.length = sizeof(uint64_t);
		wr.wr.atomic.remote_addr = r->addr + io->offset;
		wr.wr.atomic.compare_add = io->compare_add;
		wr.wr.atomic.swap = io->swap;
		wr.wr.atomic.rkey = r->rkey;
		break;
	case SACRED_IO_PERM:
		cookie = ++conn->cookie;
		memset(req, 0, sizeof(*req));
		req->hdr.version = htole16(SACRED_WIRE_VERSION);
		req->hdr.op = htole16(SACRED_OP_PERM);
		req->hdr.cookie = htole32(cookie);
		req->region_id = htole32(io->perm.region_id);
		req->access = htole32(io->perm.access);
		req->ballot = htole64(io->perm.ballot);
		req->target = htole32(io->perm.target);
		wr.opcode = IBV_WR_SEND;
		sge.length = sizeof(*req);
		if (sizeof(*req) <= conn->max_inline)
			wr.send_flags |= IBV_SEND_INLINE;
		break;
	}

	ret = ibv_post_send(conn->qp, &wr, &bad);
	if (ret)
		return conn_break(conn, -ret, "%s: ibv_post_send: %s", what,
				  strerror(ret));

	memset(op, 0, sizeof(*op));
	op->io = *io;
	op->res.user_data = io->user_data;
	op->res.opcode = io->opcode;
	op->res.region_id = io->opcode == SACRED_IO_PERM ?
			    io->perm.region_id : io->region_id;
	op->io.region_id = op->res.region_id;
	op->seq = ++conn->op_seq;
	op->deadline = now_ns() + conn->timeout_ms * 1000000ULL;
	op->cookie = cookie;
	op->busy = true;
	conn->nr_busy++;
	conn->nr_pending++;
	if (io->opcode == SACRED_IO_PERM)
		conn->perms_out++;
	return 0;
}

/* Check one operation and post it. */
static int conn_io_post(struct sacred_conn *conn, const struct sacred_io *io)
{
	struct sacred_region_attr r = { 0 };
	unsigned int credits;
	const char *what;
	unsigned int i;
	int ret;

	if (io->opcode >= ARRAY_SIZE(io_name) || !io_name[io->opcode])
		return conn_fail(conn, -EINVAL, "post: unknown opcode %u",
				 io->opcode);
	what = io_name[io->opcode];
	if (conn->broken)
		return conn_broken(conn);
	if (conn->nr_busy == conn->depth)
		return conn_fail(conn, -EAGAIN,
				 "%s: all %u slots are busy: poll results first",
				 what, conn->depth);

	switch (io->opcode) {
	case SACRED_IO_READ:
	case SACRED_IO_WRITE:
		if (!io->buf && io->len)
			return conn_fail(conn, -EINVAL, "%s: no buffer", what);
		if (io->len > conn->slot_size)
			return conn_fail(conn, -EMSGSIZE,
					 "%s: %u bytes, at most %zu per asynchronous operation",
					 what, io->len, conn->slot_size);
		ret = conn_io_check(conn, what, io->region_id, io->offset,
				    io->len, &r);
		if (ret)
			return ret;
		break;
	case SACRED_IO_CAS:
	case SACRED_IO_FAA:
		ret = conn_io_check(conn, what, io->region_id, io->offset,
				    sizeof(uint64_t), &r);
		if (ret)
			return ret;
		if ((r.addr + io->offset) % sizeof(uint64_t))
			return conn_fail(conn, -EINVAL,
					 "%s: offset %llu of region %u is not 8-byte aligned",
					 what, (unsigned long long)io->offset,
					 io->region_id);
		if (!conn->atomics)
			return conn_fail(conn, -EOPNOTSUPP,
					 "%s: the device does no atomics", what);
		break;
	case SACRED_IO_PERM:
		if (!access_valid(io->perm.access))
			return conn_fail(conn, -EINVAL,
					 "PERM: access %#x is none of 0, r, rw, rwa",
					 io->perm.access);
		if (conn_stale_has(conn, io->perm.region_id))
			return conn_stale(conn, "PERM", io->perm.region_id);
		credits = conn->credits < CONN_RECV_DEPTH ? conn->credits :
							     CONN_RECV_DEPTH;
		if (conn->perms_out >= credits)
			return conn_fail(conn, -EAGAIN,
					 "PERM: %u requests await their reply, the memory takes %u",
					 conn->perms_out, credits);
		break;
	}

	for (i = 0; conn->ops[i].busy; i++)
		;
	return conn_op_post(conn, &conn->ops[i], io, &r);
}

/**
 * sacred_io_post() - start operations without waiting for them
 * @conn: the connection
 * @io: the operations, posted in order
 * @n: how many
 *
 * Each operation is checked as the blocking call of the same kind checks
 * it, takes a slot and is sent; its result comes back from
 * sacred_io_poll(). RDMA operations on one connection are carried out by
 * the memory in the order posted. A WRITE's bytes are copied when it is
 * posted: its buffer may be reused at once. A READ's bytes are copied into
 * @io->buf when its completion is taken: that buffer must stay valid until
 * sacred_io_poll() returned the result.
 *
 * Return: the number of operations posted, from 1 to @n; when none was, a
 * negative errno for the first: -EAGAIN when every slot is busy (poll
 * results first) or, for a changePermission, when the memory's credits
 * are all in use; -EMSGSIZE for a READ or WRITE longer than the slot
 * (bounce_size / queue_depth, see &struct sacred_conn_attr); otherwise
 * the errors of the matching blocking call's checks (-EINVAL, -ENOENT,
 * -ERANGE, -EACCES, -EOPNOTSUPP, -ECONNRESET). sacred_conn_errmsg() tells
 * why the first operation not posted was refused.
 */
int sacred_io_post(struct sacred_conn *conn, const struct sacred_io *io,
		   unsigned int n)
{
	unsigned int i;
	int ret = 0;

	if (!conn || (!io && n))
		return -EINVAL;
	conn->errmsg[0] = '\0';
	if (conn->broken)
		conn_reap(conn);
	if (conn->broken && conn->auto_reconnect) {
		ret = sacred_conn_reconnect(conn);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		ret = conn_io_post(conn, &io[i]);
		if (ret)
			break;
	}
	return i ? (int)i : ret;
}

/**
 * sacred_io_poll() - take results of operations posted with sacred_io_post()
 * @conn: the connection
 * @res: room for @max results
 * @max: how many to take at most
 *
 * Never blocks. Results come oldest operation first. Each operation
 * posted yields exactly one result, also when the connection broke or
 * was reconnected meanwhile (with the errno of the failure that broke it
 * for the operation that failed, -ETIMEDOUT for one that timed out,
 * -ECONNRESET for the others); sacred_conn_destroy() drops results not
 * taken.
 *
 * The status of a result is what the blocking call of the same kind would
 * have returned: 0; -EACCES when the memory refused the access (permission
 * revoked, or the region deleted: attach again to tell); -ECONNRESET when
 * the memory disconnected (a revoke fences the revoked process's
 * connection; a memory brought down drops it) or the connection broke
 * before; -ETIMEDOUT; for changePermission -EPERM, -ENOENT, ... as for
 * sacred_change_perm(), with the memory's answer in @res->perm.
 *
 * Return: the number of results stored in @res (0 if none is ready), or
 * -EINVAL.
 */
int sacred_io_poll(struct sacred_conn *conn, struct sacred_io_result *res,
		   unsigned int max)
{
	unsigned int n = 0, i;

	if (!conn || (!res && max))
		return -EINVAL;
	conn_reap(conn);
	while (n < max && conn->nr_busy > conn->nr_pending) {
		struct conn_op *oldest = NULL;

		for (i = 0; i < conn->depth; i++) {
			struct conn_op *op = &conn->ops[i];

			if (op->busy && op->done &&
			    (!oldest || op->seq < oldest->seq))
				oldest = op;
		}
		res[n++] = oldest->res;
		oldest->busy = false;
		conn->nr_busy--;
	}
	return n;
}

/**
 * sacred_io_pending() - operations posted on @conn whose results have not
 * been taken by sacred_io_poll() yet
 */
unsigned int sacred_io_pending(const struct sacred_conn *conn)
{
	return conn ? conn->nr_busy : 0;
}

static bool conn_io_ready(const struct sacred_conn *conn)
{
	return conn->nr_busy > conn->nr_pending;
}

/*
 * Arm the CQs of the connections with operations in flight and sleep in
 * poll(2) on their completion and rdma_cm channels until one has
 * something, @until, or the first operation's deadline.
 */
static int conn_io_sleep(struct sacred_conn *const *conns, unsigned int n,
			 uint64_t until)
{
	struct pollfd *pfd;
	unsigned int i, k = 0;
	uint64_t t, ms;
	int ret;

	pfd = calloc(2 * n, sizeof(*pfd));
	if (!pfd)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct sacred_conn *c = conns[i];
		unsigned int j;

		if (!c || !c->nr_pending)
			continue;
		if (ibv_req_notify_cq(c->cq, 0)) {
			conn_ops_fail(c, NULL,
				      conn_break(c, -EIO,
						 "ibv_req_notify_cq failed"));
			goto out;
		}
		for (j = 0; j < c->depth; j++)
			if (c->ops[j].busy && !c->ops[j].done &&
			    c->ops[j].deadline < until)
				until = c->ops[j].deadline;
		pfd[k].fd = c->cc->fd;
		pfd[k++].events = POLLIN;
		pfd[k].fd = c->ch->fd;
		pfd[k++].events = POLLIN;
	}
	/* Poll once more after arming: nothing slips by. */
	for (i = 0; i < n; i++) {
		if (!conns[i])
			continue;
		conn_reap(conns[i]);
		if (conn_io_ready(conns[i]))
			goto out;
	}

	t = now_ns();
	ms = until > t ? (until - t + 999999) / 1000000 : 0;
	ret = poll(pfd, k, ms > INT_MAX ? INT_MAX : (int)ms);
	if (ret < 0 && errno != EINTR) {
		ret = -errno;
		free(pfd);
		return ret;
	}
	for (i = 0; i < n; i++) {
		struct sacred_conn *c = conns[i];
		struct ibv_cq *cq;
		void *cq_ctx;

		if (c && c->cc && !ibv_get_cq_event(c->cc, &cq, &cq_ctx))
			ibv_ack_cq_events(cq, 1);
	}
out:
	free(pfd);
	return 0;
}

/**
 * sacred_io_wait() - wait for results on any of several connections
 * @conns: the connections (NULL entries are skipped); typically one per
 *	memory, so that operations on several memories overlap
 * @n: entries in @conns
 * @timeout_ms: how long to wait at most: -1 forever, 0 not at all
 *
 * Busy-polls for a moment, then sleeps on the connections' completion
 * and rdma_cm channels. Operations that reach their deadline end with
 * -ETIMEDOUT meanwhile (see sacred_io_post()), which makes a result ready:
 * with operations in flight, a wait never lasts much beyond the
 * connections' timeouts.
 *
 * Return: the number of connections with results to take with
 * sacred_io_poll(); 0 when none came within @timeout_ms, or at once when
 * no operation is in flight on any of them; -EINVAL; -ENOMEM; another
 * negative errno from poll(2).
 */
int sacred_io_wait(struct sacred_conn *const *conns, unsigned int n,
		   int timeout_ms)
{
	uint64_t t0 = now_ns(), t;
	uint64_t until = timeout_ms < 0 ? UINT64_MAX :
			 t0 + timeout_ms * 1000000ULL;
	unsigned int i, ready, inflight;
	int ret;

	if (!conns && n)
		return -EINVAL;
	for (;;) {
		ready = 0;
		inflight = 0;
		for (i = 0; i < n; i++) {
			if (!conns[i])
				continue;
			conn_reap(conns[i]);
			ready += conn_io_ready(conns[i]);
			inflight += conns[i]->nr_pending;
		}
		if (ready || !inflight)
			return ready;
		t = now_ns();
		if (t >= until)
			return 0;
		if (t - t0 < CONN_SPIN_NS)
			continue;
		ret = conn_io_sleep(conns, n, until);
		if (ret)
			return ret;
	}
}
