// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - one RC connection to one memory instance: set-up and
 * teardown, the attached-region cache, errors, process keys.
 *
 * The life of a connection
 * ------------------------
 * sacred_conn_create() connects with librdmacm, in the TCP port space, on
 * an event channel of its own (one channel per rdma_cm id: when an id is
 * destroyed, its channel and every event still queued on it go too):
 *
 *   resolve address -> resolve route -> device objects (PD, bounce buffer,
 *   control buffer; kept across reconnects to the same device) -> CQ on a
 *   completion channel, RC QP, every receive buffer posted -> connect with
 *   struct sacred_wire_conn_req -> ESTABLISHED, with the instance's
 *   struct sacred_wire_conn_rep (or REJECTED with struct
 *   sacred_wire_conn_rej, mapped to an errno).
 *
 * Every call is synchronous: it posts one work request (an RDMA READ,
 * WRITE or atomic, or the SEND of a request) and waits for its completion
 * - and, for a request, for the reply, matched by cookie - so at most one
 * request is ever outstanding and the instance's credits are never an
 * issue. The wait busy-polls the CQ for CONN_SPIN_NS, then sleeps in
 * poll(2) on the completion channel and the rdma_cm channel together, so
 * that a disconnect by the instance ends the wait at once, and gives up at
 * the deadline (timeout_ms).
 *
 * Local buffers: the caller's buffers are never registered. RDMA READ and
 * WRITE go through one registered bounce buffer (writes that fit inline
 * skip it); atomics return the old value into an 8-byte registered word;
 * requests and replies use a small registered control area. Nothing the
 * device may write into is ever outside those, so a call that gives up
 * (timeout, disconnect) leaves no DMA pending into the caller's memory.
 *
 * Breaking and reconnecting: any failed completion, a timeout, a
 * disconnect or a protocol violation by the instance puts the QP (or our
 * trust in the stream) beyond repair. The connection is then *broken*:
 * every later call returns -ECONNRESET, and sacred_conn_errmsg() says what
 * broke it, until sacred_conn_reconnect() disconnects the old id, connects
 * a new one with the same process id (retrying while the instance still
 * holds the old connection: SACRED_REJ_DUPLICATE) and attaches again every
 * region that was attached, refreshing its key.
 *
 * Trust: the instance is a peer like any other. Its accept data, every
 * reply (length, version, op, cookie, region, status, the region's
 * bounds) and every completion are checked before use; an unsolicited or
 * malformed message breaks the connection with -EPROTO.
 *
 * Access is the memory's business: the library checks only that a region
 * is attached and that an access lies inside it. It does not refuse an
 * access its cached rights do not cover (they may be stale, and the memory
 * decides); only with no key at all (access 0) there is nothing to send,
 * and -EACCES comes back at once, leaving the connection intact.
 *
 * A connection is not thread-safe: one thread at a time per connection.
 *
 * The connection's files: this one connects and tears down;
 * lib/conn_sync.c is the synchronous data path (the blocking calls and
 * the waits under them), lib/conn_io.c the asynchronous operations,
 * lib/conn_reconnect.c reconnection; lib/conn_internal.h what they share.
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

#include <sodium.h>

#include "conn_internal.h"
#include "internal.h"
#include "sacred.h"

/* Inline sizes tried for the QP, largest first. */
static const uint32_t conn_inline_try[] = { 256, SACRED_WIRE_MSG_MAX, 0 };

/* Record a failure and return @err. */
int __printf(3, 4)
conn_fail(struct sacred_conn *conn, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(conn->errmsg, sizeof(conn->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* Record a failure that leaves the connection unusable; return @err. */
int __printf(3, 4)
conn_break(struct sacred_conn *conn, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(conn->errmsg, sizeof(conn->errmsg), fmt, ap);
	va_end(ap);
	memcpy(conn->cause, conn->errmsg, sizeof(conn->cause));
	conn->broken = true;
	return err;
}

int conn_broken(struct sacred_conn *conn)
{
	return conn_fail(conn, -ECONNRESET,
			 "connection broken (%s): call sacred_conn_reconnect()",
			 conn->cause[0] ? conn->cause : "not connected");
}

const char *refuse_reason_str(uint32_t reason)
{
	static const char *const str[] = {
		[SACRED_REFUSE_NONE]		= "no reason",
		[SACRED_REFUSE_STATIC]		= "static region",
		[SACRED_REFUSE_NOT_MEMBER]	= "not a member for that access",
		[SACRED_REFUSE_SWMR]		= "single-writer region",
		[SACRED_REFUSE_NO_GRANT]	= "revoke-only region",
		[SACRED_REFUSE_STALE_BALLOT]	= "stale ballot",
	};

	if (reason < ARRAY_SIZE(str))
		return str[reason];
	return "unknown reason";
}

/* ------------------------------------------------------------------ */
/* Attached regions: a sorted array, searched on every access.         */

struct sacred_region_attr *
conn_region_find(struct sacred_conn *conn, uint32_t region_id)
{
	unsigned int lo = 0, hi = conn->nr_regions;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		uint32_t id = conn->regions[mid].region_id;

		if (id == region_id)
			return &conn->regions[mid];
		if (id < region_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int conn_region_store(struct sacred_conn *conn,
		      const struct sacred_region_attr *attr)
{
	struct sacred_region_attr *r = conn_region_find(conn, attr->region_id);
	unsigned int i;

	if (r) {
		*r = *attr;
		return 0;
	}
	/* Room for every id known, attached or stale: a drop never allocates. */
	if (conn->nr_regions + conn->nr_stale == conn->max_regions) {
		unsigned int max = conn->max_regions ? 2 * conn->max_regions : 8;
		uint32_t *st;

		st = reallocarray(conn->stale, max, sizeof(*st));
		if (!st)
			return -ENOMEM;
		conn->stale = st;
		r = reallocarray(conn->regions, max, sizeof(*r));
		if (!r)
			return -ENOMEM;
		conn->regions = r;
		conn->max_regions = max;
	}
	for (i = conn->nr_regions; i; i--) {
		if (conn->regions[i - 1].region_id < attr->region_id)
			break;
		conn->regions[i] = conn->regions[i - 1];
	}
	conn->regions[i] = *attr;
	conn->nr_regions++;
	return 0;
}

void conn_region_drop(struct sacred_conn *conn, uint32_t region_id)
{
	struct sacred_region_attr *r = conn_region_find(conn, region_id);
	unsigned int i;

	if (!r)
		return;
	conn->nr_regions--;
	for (i = r - conn->regions; i < conn->nr_regions; i++)
		conn->regions[i] = conn->regions[i + 1];
}

bool conn_stale_has(const struct sacred_conn *conn, uint32_t region_id)
{
	unsigned int i;

	for (i = 0; i < conn->nr_stale; i++)
		if (conn->stale[i] == region_id)
			return true;
	return false;
}

void conn_stale_del(struct sacred_conn *conn, uint32_t region_id)
{
	unsigned int i;

	for (i = 0; i < conn->nr_stale; i++)
		if (conn->stale[i] == region_id)
			conn->stale[i] = conn->stale[--conn->nr_stale];
}

/* Forget attached region @r, gone or made again: its id is stale now. */
void conn_region_stale(struct sacred_conn *conn,
		       struct sacred_region_attr *r)
{
	uint32_t id = r->region_id;

	conn_region_drop(conn, id);
	/* The room the region took: see conn_region_store(). */
	conn->stale[conn->nr_stale++] = id;
}

/* ------------------------------------------------------------------ */
/* rdma_cm events.                                                     */

static const char *cm_event_str(enum rdma_cm_event_type type)
{
	return rdma_event_str(type);
}

/* Wait for the next event on the connection's channel, until @deadline. */
static int conn_cm_next(struct sacred_conn *conn, uint64_t deadline,
			struct rdma_cm_event **ev)
{
	struct pollfd pfd = { .fd = conn->ch->fd, .events = POLLIN };
	int ret;

	for (;;) {
		if (!rdma_get_cm_event(conn->ch, ev))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (now_ns() >= deadline)
			return -ETIMEDOUT;
		ret = poll(&pfd, 1, ms_left(deadline));
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * Take every queued event without waiting; note disconnects. Returns
 * true if the connection is gone.
 */
bool conn_cm_drain(struct sacred_conn *conn)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(conn->ch, &ev)) {
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			if (conn->established)
				conn->gone = now_ns();
			conn->established = false;
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
	return !conn->established;
}

/*
 * Is the connection down (conn_cm_drain())? If so, *@grace is how long
 * the completions of what the memory sent before its disconnect may
 * still take (CONN_GONE_GRACE_NS from the disconnect), 0 once the
 * caller should give up on them.
 */
bool conn_down(struct sacred_conn *conn, uint64_t *grace)
{
	uint64_t t;

	if (!conn_cm_drain(conn))
		return false;
	t = now_ns();
	*grace = t - conn->gone < CONN_GONE_GRACE_NS ?
		 conn->gone + CONN_GONE_GRACE_NS - t : 0;
	return true;
}

/* The instance said no: map its reason, if it gave one, to an errno. */
static int conn_rejected(struct sacred_conn *conn,
			 const struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *p = &ev->param.conn;
	struct sacred_wire_conn_rej rej;

	if (ev->status == CONN_REJ_NO_LISTENER)
		return conn_fail(conn, -ECONNREFUSED,
				 "connect: no memory instance listens there");
	if (ev->status != CONN_REJ_CONSUMER || !p->private_data ||
	    p->private_data_len < sizeof(rej))
		return conn_fail(conn, -ECONNREFUSED,
				 "connect: rejected (IB CM reason %d)",
				 ev->status);
	memcpy(&rej, p->private_data, sizeof(rej));
	if (le16toh(rej.version) != SACRED_WIRE_VERSION)
		return conn_fail(conn, -ECONNREFUSED,
				 "connect: rejected, unknown wire version %u",
				 le16toh(rej.version));

	switch (le16toh(rej.reason)) {
	case SACRED_REJ_VERSION:
		return conn_fail(conn, -EPROTONOSUPPORT,
				 "connect: the instance does not speak wire version %d",
				 SACRED_WIRE_VERSION);
	case SACRED_REJ_MALFORMED:
		return conn_fail(conn, -EPROTO,
				 "connect: the instance found our request malformed");
	case SACRED_REJ_DUPLICATE:
		return conn_fail(conn, -EADDRINUSE,
				 "connect: process %u is already connected",
				 conn->process_id);
	case SACRED_REJ_RESOURCES:
		return conn_fail(conn, -ENOMEM,
				 "connect: the instance is out of resources");
	case SACRED_REJ_DOWN:
		return conn_fail(conn, -ECONNREFUSED,
				 "connect: the instance is down");
	case SACRED_REJ_AUTH:
		return conn_fail(conn, -EACCES,
				 conn->keyed ?
				 "connect: the instance refused our proof of process %u's key" :
				 "connect: the instance wants a key for process %u",
				 conn->process_id);
	case SACRED_REJ_RNR_RETRY:
		return conn_fail(conn, -EPROTO,
				 "connect: the instance refuses endless receiver-not-ready retries");
	case SACRED_REJ_UNKEYED:
		return conn_fail(conn, -EACCES,
				 "connect: the instance has no key to check process %u's proof",
				 conn->process_id);
	case SACRED_REJ_UNREVOKED:
		return conn_fail(conn, -EKEYREVOKED,
				 "connect: the instance could not revoke a key of process %u and refuses it until the instance is deleted",
				 conn->process_id);
	default:
		return conn_fail(conn, -ECONNREFUSED,
				 "connect: rejected, reason %u",
				 le16toh(rej.reason));
	}
}

/*
 * Wait for event @want until @until. Private data of the event, if
 * @pdata, is copied (at most *@pdata_len bytes; *@pdata_len becomes the
 * length received). Any other event ends the wait with an errno, except
 * TIMEWAIT_EXIT and ADDR_CHANGE, which say nothing about this step.
 * Nothing by @until is -EINPROGRESS if the attempt's deadline is still
 * ahead, -ETIMEDOUT otherwise.
 */
static int conn_cm_expect(struct sacred_conn *conn,
			  enum rdma_cm_event_type want, uint64_t until,
			  void *pdata, size_t *pdata_len)
{
	struct rdma_cm_event *ev;
	int ret;

	if (until > conn->deadline)
		until = conn->deadline;
	for (;;) {
		ret = conn_cm_next(conn, until, &ev);
		if (ret == -ETIMEDOUT && now_ns() < conn->deadline)
			return -EINPROGRESS;
		if (ret == -ETIMEDOUT)
			return conn_fail(conn, ret, "connect: no %s within %d ms",
					 cm_event_str(want), conn->timeout_ms);
		if (ret)
			return conn_fail(conn, ret,
					 "connect: rdma_get_cm_event: %s",
					 strerror(-ret));
		if (ev->event != RDMA_CM_EVENT_TIMEWAIT_EXIT &&
		    ev->event != RDMA_CM_EVENT_ADDR_CHANGE)
			break;
		rdma_ack_cm_event(ev);
	}

	if (ev->event == want) {
		if (pdata) {
			size_t n = ev->param.conn.private_data_len;

			if (!ev->param.conn.private_data)
				n = 0;
			memcpy(pdata, ev->param.conn.private_data,
			       n < *pdata_len ? n : *pdata_len);
			*pdata_len = n;
		}
		ret = 0;
	} else if (ev->event == RDMA_CM_EVENT_REJECTED) {
		ret = conn_rejected(conn, ev);
	} else {
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
			ret = ev->status < 0 ? ev->status : -EHOSTUNREACH;
			break;
		case RDMA_CM_EVENT_CONNECT_ERROR:
			ret = ev->status < 0 ? ev->status : -ECONNREFUSED;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			ret = -ECONNRESET;
			break;
		default:
			ret = -EPROTO;
			break;
		}
		conn_fail(conn, ret, "connect: %s (%s) while waiting for %s",
			  cm_event_str(ev->event), strerror(-ret),
			  cm_event_str(want));
	}
	rdma_ack_cm_event(ev);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Device objects: PD, bounce buffer, control area.                    */

static void conn_dev_teardown(struct sacred_conn *conn)
{
	if (conn->ctl_mr)
		ibv_dereg_mr(conn->ctl_mr);
	free(conn->ctl);
	if (conn->bounce_mr)
		ibv_dereg_mr(conn->bounce_mr);
	free(conn->bounce);
	if (conn->pd)
		ibv_dealloc_pd(conn->pd);
	conn->ctl_mr = NULL;
	conn->ctl = NULL;
	conn->bounce_mr = NULL;
	conn->bounce = NULL;
	conn->pd = NULL;
	conn->ctx = NULL;
}

/* Make sure the device objects live on @ctx (they are kept if they do). */
static int conn_dev_setup(struct sacred_conn *conn, struct ibv_context *ctx)
{
	struct ibv_device_attr dev;
	int ret;

	if (conn->ctx == ctx)
		return 0;
	conn_dev_teardown(conn);

	ret = ibv_query_device(ctx, &dev);
	if (ret)
		return conn_fail(conn, -ret, "ibv_query_device: %s",
				 strerror(ret));
	conn->atomics = dev.atomic_cap != IBV_ATOMIC_NONE;
	conn->rd_atomic = dev.max_qp_init_rd_atom < CONN_RD_ATOMIC_MAX ?
			  dev.max_qp_init_rd_atom : CONN_RD_ATOMIC_MAX;

	conn->pd = ibv_alloc_pd(ctx);
	if (!conn->pd) {
		ret = errno ? -errno : -ENOMEM;
		conn_fail(conn, ret, "ibv_alloc_pd: %s", strerror(-ret));
		goto err;
	}

	ret = posix_memalign(&conn->bounce, 4096, conn->bounce_size);
	if (ret) {
		conn->bounce = NULL;
		ret = conn_fail(conn, -ret, "no memory for a %zu-byte bounce buffer",
				conn->bounce_size);
		goto err;
	}
	/* The device writes it behind valgrind's back: define it once. */
	memset(conn->bounce, 0, conn->bounce_size);
	conn->bounce_mr = ibv_reg_mr(conn->pd, conn->bounce, conn->bounce_size,
				     IBV_ACCESS_LOCAL_WRITE);
	if (!conn->bounce_mr) {
		ret = errno ? -errno : -ENOMEM;
		conn_fail(conn, ret, "registering the bounce buffer: %s",
			  strerror(-ret));
		goto err;
	}

	ret = posix_memalign((void **)&conn->ctl, 4096, sizeof(*conn->ctl));
	if (ret) {
		conn->ctl = NULL;
		ret = conn_fail(conn, -ret, "no memory for the control area");
		goto err;
	}
	memset(conn->ctl, 0, sizeof(*conn->ctl));
	conn->ctl_mr = ibv_reg_mr(conn->pd, conn->ctl, sizeof(*conn->ctl),
				  IBV_ACCESS_LOCAL_WRITE);
	if (!conn->ctl_mr) {
		ret = errno ? -errno : -ENOMEM;
		conn_fail(conn, ret, "registering the control area: %s",
			  strerror(-ret));
		goto err;
	}
	conn->ctx = ctx;
	return 0;

err:
	conn_dev_teardown(conn);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The queue pair.                                                     */

int conn_post_recv(struct sacred_conn *conn, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr	= (uintptr_t)conn->ctl->recv[slot],
		.length	= SACRED_WIRE_MSG_MAX,
		.lkey	= conn->ctl_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id		= CONN_RECV_TAG | slot,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(conn->qp, &wr, &bad);
}

static void conn_qp_destroy(struct sacred_conn *conn)
{
	if (conn->qp)
		rdma_destroy_qp(conn->id);
	conn->qp = NULL;
	if (conn->cq)
		ibv_destroy_cq(conn->cq);
	conn->cq = NULL;
	if (conn->cc)
		ibv_destroy_comp_channel(conn->cc);
	conn->cc = NULL;
}

static int conn_qp_create(struct sacred_conn *conn)
{
	struct ibv_qp_init_attr init;
	unsigned int i;
	int ret = 0;

	conn->cc = ibv_create_comp_channel(conn->ctx);
	if (!conn->cc) {
		ret = errno ? -errno : -ENOMEM;
		return conn_fail(conn, ret, "ibv_create_comp_channel: %s",
				 strerror(-ret));
	}
	if (fcntl(conn->cc->fd, F_SETFL,
		  fcntl(conn->cc->fd, F_GETFL) | O_NONBLOCK)) {
		ret = conn_fail(conn, -errno, "completion channel: %s",
				strerror(errno));
		goto err;
	}
	conn->cq = ibv_create_cq(conn->ctx,
				 conn->depth + CONN_SEND_SLACK + CONN_RECV_DEPTH,
				 NULL, conn->cc, 0);
	if (!conn->cq) {
		ret = errno ? -errno : -ENOMEM;
		conn_fail(conn, ret, "ibv_create_cq: %s", strerror(-ret));
		goto err;
	}

	for (i = 0; i < ARRAY_SIZE(conn_inline_try); i++) {
		memset(&init, 0, sizeof(init));
		init.send_cq = conn->cq;
		init.recv_cq = conn->cq;
		init.cap.max_send_wr = conn->depth + CONN_SEND_SLACK;
		init.cap.max_recv_wr = CONN_RECV_DEPTH;
		init.cap.max_send_sge = 1;
		init.cap.max_recv_sge = 1;
		init.cap.max_inline_data = conn_inline_try[i];
		init.qp_type = IBV_QPT_RC;
		init.sq_sig_all = 0;
		ret = rdma_create_qp(conn->id, conn->pd, &init);
		if (!ret)
			break;
		ret = -errno;
	}
	if (ret) {
		conn_fail(conn, ret, "rdma_create_qp: %s", strerror(-ret));
		goto err;
	}
	conn->qp = conn->id->qp;
	conn->max_inline = init.cap.max_inline_data;

	for (i = 0; i < CONN_RECV_DEPTH; i++) {
		ret = conn_post_recv(conn, i);
		if (ret) {
			conn_fail(conn, ret, "ibv_post_recv: %s",
				  strerror(-ret));
			goto err;
		}
	}
	return 0;

err:
	conn_qp_destroy(conn);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Connecting.                                                         */

void conn_cm_close(struct sacred_conn *conn)
{
	conn_qp_destroy(conn);
	if (conn->id)
		rdma_destroy_id(conn->id);
	conn->id = NULL;
	if (conn->ch)
		rdma_destroy_event_channel(conn->ch);
	conn->ch = NULL;
	conn->established = false;
	conn->step = CONN_IDLE;
}

/* The largest ACK timeout exponent with four periods in @timeout_ms. */
static uint8_t conn_ack_timeout(int timeout_ms)
{
	uint64_t quarter_ns = (uint64_t)timeout_ms * 1000000 / 4;
	uint8_t t = CONN_ACK_TIMEOUT_MIN;

	while (t < CONN_ACK_TIMEOUT_MAX && (4096ULL << (t + 1)) <= quarter_ns)
		t++;
	return t;
}

static int conn_cm_open(struct sacred_conn *conn)
{
	uint8_t ack_timeout = conn_ack_timeout(conn->timeout_ms);
	int ret;

	conn->ch = rdma_create_event_channel();
	if (!conn->ch) {
		ret = errno ? -errno : -ENODEV;
		return conn_fail(conn, ret, "rdma_create_event_channel: %s",
				 strerror(-ret));
	}
	if (fcntl(conn->ch->fd, F_SETFL,
		  fcntl(conn->ch->fd, F_GETFL) | O_NONBLOCK)) {
		ret = conn_fail(conn, -errno, "rdma_cm channel: %s",
				strerror(errno));
		goto err;
	}
	if (rdma_create_id(conn->ch, &conn->id, conn, RDMA_PS_TCP)) {
		conn->id = NULL;
		ret = conn_fail(conn, -errno, "rdma_create_id: %s",
				strerror(errno));
		goto err;
	}
	/* Before the QP reaches RTS, which takes it from the id. */
	if (rdma_set_option(conn->id, RDMA_OPTION_ID,
			    RDMA_OPTION_ID_ACK_TIMEOUT, &ack_timeout,
			    sizeof(ack_timeout))) {
		ret = conn_fail(conn, -errno, "rdma_set_option(ACK_TIMEOUT): %s",
				strerror(errno));
		goto err;
	}
	return 0;

err:
	conn_cm_close(conn);
	return ret;
}

/* Check the instance's accept data and take what it tells us. */
static int conn_accepted(struct sacred_conn *conn, const void *pdata,
			 size_t len)
{
	struct sacred_wire_conn_rep rep;
	uint16_t msg_max;

	if (len < sizeof(rep))
		return conn_fail(conn, -EPROTO,
				 "connect: accept data of %zu bytes, want %zu",
				 len, sizeof(rep));
	memcpy(&rep, pdata, sizeof(rep));
	if (le16toh(rep.version) != SACRED_WIRE_VERSION)
		return conn_fail(conn, -EPROTO,
				 "connect: accept with wire version %u",
				 le16toh(rep.version));
	msg_max = le16toh(rep.msg_max);
	if (msg_max < sizeof(struct sacred_wire_reply) ||
	    msg_max > SACRED_WIRE_MSG_MAX)
		return conn_fail(conn, -EPROTO,
				 "connect: the instance sends messages up to %u bytes, we take %u to %d",
				 msg_max,
				 (unsigned int)sizeof(struct sacred_wire_reply),
				 SACRED_WIRE_MSG_MAX);
	if (!le16toh(rep.credits))
		return conn_fail(conn, -EPROTO,
				 "connect: the instance gives no credits");
	if (conn->have_mem_id && le32toh(rep.mem_id) != conn->mem_id)
		return conn_fail(conn, -ESTALE,
				 "connect: memory %u answers where memory %u was",
				 le32toh(rep.mem_id), conn->mem_id);
	conn->mem_id = le32toh(rep.mem_id);
	conn->have_mem_id = true;
	conn->credits = le16toh(rep.credits);
	return 0;
}

/*
 * Prove the process's key in @req (uapi "Identity"): a counter above every
 * one used before - nanoseconds of the real-time clock, so it also grows
 * across restarts - and the HMAC over it.
 */
static void conn_prove(struct sacred_conn *conn,
		       struct sacred_wire_conn_req *req)
{
	static const char label[] = SACRED_CONNECT_LABEL;
	crypto_auth_hmacsha256_state st;
	uint64_t c;
	struct {
		uint32_t process_id;
		uint64_t counter;
	} __attribute__((packed)) msg;

	c = sacred_clock_ns();
	if (c <= conn->counter)
		c = conn->counter + 1;
	conn->counter = c;

	msg.process_id = htole32(conn->process_id);
	msg.counter = htole64(c);
	req->flags = htole16(SACRED_CONN_F_PROOF);
	req->counter = msg.counter;
	crypto_auth_hmacsha256_init(&st, conn->key, sizeof(conn->key));
	crypto_auth_hmacsha256_update(&st, (const void *)label,
				      sizeof(label) - 1);
	crypto_auth_hmacsha256_update(&st, (const void *)&msg, sizeof(msg));
	crypto_auth_hmacsha256_final(&st, req->mac);
	sodium_memzero(&st, sizeof(st));
}

/*
 * Start a connection attempt: its rdma_cm id, and the address resolution
 * posted. A zero *@deadlinep is set once the rdma_cm channel is open: the
 * first channel of a process initializes librdmacm, which loads the
 * device providers and may take long (most of a second in a VM). On
 * failure nothing of the attempt is left but @conn's device objects.
 */
int conn_connect_start(struct sacred_conn *conn, uint64_t *deadlinep)
{
	int ret;

	ret = conn_cm_open(conn);
	if (ret)
		return ret;
	if (!*deadlinep)
		*deadlinep = now_ns() + conn->timeout_ms * 1000000ULL;
	conn->deadline = *deadlinep;

	if (rdma_resolve_addr(conn->id, NULL, (struct sockaddr *)&conn->addr,
			      ms_left(conn->deadline))) {
		ret = conn_fail(conn, -errno, "rdma_resolve_addr: %s",
				strerror(errno));
		conn_cm_close(conn);
		return ret;
	}
	conn->step = CONN_ADDR;
	return 0;
}

/* Ask the instance to take us: our QP, then the connect request. */
static int conn_connect_send(struct sacred_conn *conn)
{
	struct sacred_wire_conn_req req = {
		.version	= htole16(SACRED_WIRE_VERSION),
		.process_id	= htole32(conn->process_id),
	};
	struct rdma_conn_param param = {
		.private_data		= &req,
		.private_data_len	= sizeof(req),
		.retry_count		= 7,
		/* The most an instance accepts (SACRED_REJ_RNR_RETRY). */
		.rnr_retry_count	= 6,
		/* We read and do atomics on the instance; it does nothing on us. */
		.responder_resources	= 0,
	};
	int ret;

	ret = conn_dev_setup(conn, conn->id->verbs);
	if (ret)
		return ret;
	ret = conn_qp_create(conn);
	if (ret)
		return ret;
	if (conn->keyed)
		conn_prove(conn, &req);
	param.initiator_depth = conn->rd_atomic;
	if (rdma_connect(conn->id, &param))
		return conn_fail(conn, -errno, "rdma_connect: %s",
				 strerror(errno));
	return 0;
}

/*
 * Advance the attempt under way by the rdma_cm events that come until
 * @until (now: only those already queued; the attempt's deadline: to the
 * end). Return: 0 once connected; -EINPROGRESS if @until came first; or
 * the attempt's error, and then nothing of it is left but @conn's device
 * objects.
 */
int conn_connect_step(struct sacred_conn *conn, uint64_t until)
{
	uint8_t pdata[256];
	size_t len;
	int ret;

	for (;;) {
		switch (conn->step) {
		case CONN_ADDR:
			ret = conn_cm_expect(conn, RDMA_CM_EVENT_ADDR_RESOLVED,
					     until, NULL, NULL);
			if (ret)
				break;
			if (rdma_resolve_route(conn->id,
					       ms_left(conn->deadline))) {
				ret = conn_fail(conn, -errno,
						"rdma_resolve_route: %s",
						strerror(errno));
				break;
			}
			conn->step = CONN_ROUTE;
			continue;
		case CONN_ROUTE:
			ret = conn_cm_expect(conn, RDMA_CM_EVENT_ROUTE_RESOLVED,
					     until, NULL, NULL);
			if (!ret)
				ret = conn_connect_send(conn);
			if (ret)
				break;
			conn->step = CONN_EST;
			continue;
		case CONN_EST:
			len = sizeof(pdata);
			ret = conn_cm_expect(conn, RDMA_CM_EVENT_ESTABLISHED,
					     until, pdata, &len);
			if (ret)
				break;
			if (len > sizeof(pdata))
				len = sizeof(pdata);
			ret = conn_accepted(conn, pdata, len);
			if (ret)
				break;
			conn->step = CONN_IDLE;
			conn->established = true;
			return 0;
		default:
			return conn_fail(conn, -EINVAL,
					 "connect: no attempt under way");
		}
		if (ret != -EINPROGRESS)
			conn_cm_close(conn);
		return ret;
	}
}

/* One connection attempt, to the end: conn_connect_start() and its steps. */
static int conn_connect_once(struct sacred_conn *conn, uint64_t *deadlinep)
{
	int ret;

	ret = conn_connect_start(conn, deadlinep);
	if (ret)
		return ret;
	return conn_connect_step(conn, *deadlinep);
}

/*
 * Connect within the timeout. With @retry_dup, a refusal because the
 * instance still holds our previous connection is retried, backing off,
 * until the deadline: the instance releases a connection asynchronously
 * after the disconnect.
 */
int conn_connect(struct sacred_conn *conn, bool retry_dup)
{
	unsigned int backoff = 1;
	uint64_t deadline = 0;
	int ret;

	for (;;) {
		ret = conn_connect_once(conn, &deadline);
		if (ret != -EADDRINUSE || !retry_dup ||
		    now_ns() + backoff * 1000000ULL >= deadline)
			return ret;
		sleep_ms(backoff);
		if (backoff < CONN_DUP_BACKOFF_MAX_MS)
			backoff *= 2;
	}
}

/*
 * Say goodbye on the current id and, with @wait, wait a little for the
 * instance's answer, so that it lets the process id go soon.
 */
void conn_disconnect(struct sacred_conn *conn, bool wait)
{
	uint64_t deadline = now_ns() + CONN_DISC_WAIT_MS * 1000000ULL;
	struct rdma_cm_event *ev;

	if (!conn->id || !conn->established || conn_cm_drain(conn))
		return;
	if (rdma_disconnect(conn->id))
		return;
	while (wait && conn->established &&
	       !conn_cm_next(conn, deadline, &ev)) {
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			conn->established = false;
		rdma_ack_cm_event(ev);
	}
}

/* ------------------------------------------------------------------ */
/* The API.                                                            */

/*
 * Check @attr and make a connection that is not connected yet: broken
 * until it connects (internal.h).
 */
int sacred_conn_new_unconnected(const struct sacred_conn_attr *attr,
				struct sacred_conn **connp)
{
	struct sacred_conn *conn;
	size_t salen;
	long page;

	if (!attr || !connp || !attr->addr || attr->timeout_ms < 0 ||
	    attr->bounce_size > CONN_BOUNCE_MAX ||
	    attr->queue_depth > CONN_QDEPTH_MAX ||
	    attr->flags & ~SACRED_CONN_AUTO_RECONNECT)
		return -EINVAL;
	if (attr->addr->sa_family == AF_INET)
		salen = sizeof(struct sockaddr_in);
	else if (attr->addr->sa_family == AF_INET6)
		salen = sizeof(struct sockaddr_in6);
	else
		return -EAFNOSUPPORT;

	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return -ENOMEM;
	memcpy(&conn->addr, attr->addr, salen);
	conn->process_id = attr->process_id;
	if (attr->key) {
		memcpy(conn->key, attr->key, sizeof(conn->key));
		conn->keyed = true;
	}
	conn->timeout_ms = attr->timeout_ms ?: CONN_TIMEOUT_MS_DEFAULT;
	conn->bounce_size = attr->bounce_size ?: CONN_BOUNCE_DEFAULT;
	page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	conn->bounce_size = (conn->bounce_size + page - 1) & ~(size_t)(page - 1);
	conn->auto_reconnect = attr->flags & SACRED_CONN_AUTO_RECONNECT;
	conn->depth = attr->queue_depth ?: CONN_QDEPTH_DEFAULT;
	conn->slot_size = conn->bounce_size / conn->depth & ~(size_t)63;
	if (conn->slot_size < CONN_SLOT_MIN) {
		free(conn);
		return -EINVAL;
	}
	conn->ops = calloc(conn->depth, sizeof(*conn->ops));
	if (!conn->ops) {
		free(conn);
		return -ENOMEM;
	}
	conn->broken = true;
	snprintf(conn->cause, sizeof(conn->cause), "not connected yet");
	*connp = conn;
	return 0;
}

/* A connect attempt succeeded: the connection is whole again. */
void conn_connected(struct sacred_conn *conn)
{
	conn->broken = false;
	conn->cause[0] = '\0';
}

/**
 * sacred_conn_create() - connect to a memory instance
 * @attr: where and who; see &struct sacred_conn_attr
 * @connp: on success, the new connection
 *
 * Resolves the instance's address, connects as process @attr->process_id
 * and registers a bounce buffer of @attr->bounce_size bytes. No region is
 * attached yet.
 *
 * Return: 0; -EINVAL for bad arguments; -ECONNREFUSED when nothing listens
 * on the address or the instance is down; -EADDRINUSE when the instance
 * already has a connection of this process id; -EPROTONOSUPPORT for a
 * wire version mismatch; -ENOMEM when either side is out of resources;
 * -EPROTO for a malformed exchange; -ETIMEDOUT; -EHOSTUNREACH or another
 * negative errno from address or route resolution.
 */
int sacred_conn_create(const struct sacred_conn_attr *attr,
		       struct sacred_conn **connp)
{
	struct sacred_conn *conn;
	int ret;

	ret = sacred_conn_new_unconnected(attr, &conn);
	if (ret)
		return ret;
	ret = conn_connect(conn, false);
	if (ret) {
		sacred_conn_destroy(conn);
		return ret;
	}
	conn_connected(conn);
	conn->errmsg[0] = '\0';
	*connp = conn;
	return 0;
}

/**
 * sacred_conn_destroy() - disconnect and free a connection
 * @conn: from sacred_conn_create(), or NULL
 *
 * Does not wait for the instance to acknowledge the disconnect: a new
 * connection with the same process id made right after may be refused
 * with -EADDRINUSE for a moment (sacred_conn_reconnect() retries instead).
 */
void sacred_conn_destroy(struct sacred_conn *conn)
{
	if (!conn)
		return;
	conn_disconnect(conn, false);
	conn_cm_close(conn);
	conn_dev_teardown(conn);
	free(conn->regions);
	free(conn->stale);
	free(conn->ops);
	free(conn);
}

int sacred_conn_cm_fd(const struct sacred_conn *conn)
{
	return conn->ch ? conn->ch->fd : -1;
}

/**
 * sacred_conn_mem_id() - id of the memory instance @conn is connected to
 * @conn: the connection
 *
 * Return: the id the instance sent when it accepted the connection.
 */
uint32_t sacred_conn_mem_id(const struct sacred_conn *conn)
{
	return conn->mem_id;
}

/**
 * sacred_conn_broken() - whether @conn is broken: every call fails with
 * -ECONNRESET until sacred_conn_reconnect() (or reconnects first, with
 * SACRED_CONN_AUTO_RECONNECT)
 * @conn: the connection
 *
 * Local only: a connection the memory dropped is known to be broken once
 * a call (or sacred_io_poll()) has seen it.
 */
bool sacred_conn_broken(const struct sacred_conn *conn)
{
	return conn->broken;
}

/**
 * sacred_conn_errmsg() - what made the last call on @conn fail
 * @conn: the connection
 *
 * Return: a one-line description, valid until the next call on @conn,
 * or NULL if the last call succeeded.
 */
const char *sacred_conn_errmsg(const struct sacred_conn *conn)
{
	return conn && conn->errmsg[0] ? conn->errmsg : NULL;
}


int sacred_process_key(const void *master, size_t len, uint32_t process_id,
		       uint8_t *key)
{
	static const char label[] = SACRED_PROCESS_KEY_LABEL;
	crypto_auth_hmacsha256_state st;
	uint32_t pid = htole32(process_id);

	if (!master || !key || len < SACRED_KEY_MIN || len > SACRED_KEY_MAX)
		return -EINVAL;
	crypto_auth_hmacsha256_init(&st, master, len);
	crypto_auth_hmacsha256_update(&st, (const void *)label,
				      sizeof(label) - 1);
	crypto_auth_hmacsha256_update(&st, (const void *)&pid, sizeof(pid));
	crypto_auth_hmacsha256_final(&st, key);
	sodium_memzero(&st, sizeof(st));
	return 0;
}
