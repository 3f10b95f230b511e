// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - the data path: one RC connection to one memory instance.
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

#include "internal.h"
#include "sacred.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#define __aligned(n)		__attribute__((aligned(n)))

#define CONN_TIMEOUT_MS_DEFAULT	2000
/*
 * The QP's local ACK timeout, 4.096 us << t: the resend of a lost packet
 * comes after one such period. For RoCE rdma_cm picks t = 19 (Linux 6.1:
 * packet life time 18, plus one), 2.1 s - longer than a call waits, so one
 * lost frame would fail the call. conn_ack_timeout() fits at least four
 * periods in timeout_ms, within these bounds: below 15 a peer descheduled
 * for a second (a loaded VM) exhausts the retries and breaks the
 * connection.
 */
#define CONN_ACK_TIMEOUT_MIN	15
#define CONN_ACK_TIMEOUT_MAX	19
#define CONN_BOUNCE_DEFAULT	(1UL << 20)
#define CONN_BOUNCE_MAX		(1UL << 30)
/*
 * Receive buffers kept posted: one per request that may await its reply
 * (asynchronous changePermissions are bounded by this and the credits).
 */
#define CONN_RECV_DEPTH		16
/* Send queue room beyond the asynchronous slots: the blocking calls' one. */
#define CONN_SEND_SLACK		2
/* Asynchronous operations in flight per connection (struct sacred_io). */
#define CONN_QDEPTH_DEFAULT	16
#define CONN_QDEPTH_MAX		256
/* Smallest slot of the bounce buffer an asynchronous operation gets. */
#define CONN_SLOT_MIN		64
#define CONN_ASYNC_TAG		(1ULL << 62)
/* Outstanding RDMA READs/atomics we ask the instance to accept. */
#define CONN_RD_ATOMIC_MAX	16
/* Busy-poll this long before sleeping (build with -DCONN_SPIN_NS= to tune). */
#ifndef CONN_SPIN_NS
#define CONN_SPIN_NS		1000000ULL
#endif
/* How long a reconnect waits for the old connection's disconnect. */
#define CONN_DISC_WAIT_MS	250
/* Longest pause between connect attempts refused as duplicates. */
#define CONN_DUP_BACKOFF_MAX_MS	64
#define CONN_ERRMSG_MAX		192
#define CONN_RECV_TAG		(1ULL << 63)
/* IB_CM_REJ_CONSUMER_DEFINED: a reject with the instance's reason. */
#define CONN_REJ_CONSUMER	28
#define CONN_REJ_NO_LISTENER	8	/* IB_CM_REJ_INVALID_SERVICE_ID */

/* Inline sizes tried for the QP, largest first. */
static const uint32_t conn_inline_try[] = { 256, SACRED_WIRE_MSG_MAX, 0 };

/*
 * A connect attempt: the rdma_cm event it waits for next. The steps are
 * driven by conn_connect_step(), which a blocking connect runs to the end
 * and sacred_conn_reconnect_async() only as far as the events that came.
 */
enum conn_step {
	CONN_IDLE,
	CONN_ADDR,	/* rdma_resolve_addr() posted */
	CONN_ROUTE,	/* rdma_resolve_route() posted */
	CONN_EST,	/* rdma_connect() posted */
};

/**
 * struct conn_ctl - the registered control area
 * @atomic: old value of the last compare-and-swap or fetch-and-add
 * @send: the request being sent
 * @recv: receive buffers, one per posted receive
 */
struct conn_ctl {
	uint64_t atomic;
	uint8_t send[SACRED_WIRE_MSG_MAX] __aligned(64);
	uint8_t recv[CONN_RECV_DEPTH][SACRED_WIRE_MSG_MAX];
};

/**
 * struct conn_op - one asynchronous operation's slot
 * @io: the operation as posted (@io.buf is the caller's)
 * @res: its result, filled in when it is done
 * @seq: post order: results are returned oldest first
 * @deadline: when it times out (CLOCK_MONOTONIC ns)
 * @cookie: a changePermission's request cookie
 * @busy: posted, or done and not yet returned by sacred_io_poll()
 * @done: @res is final
 * @send_done: a changePermission's SEND completed
 * @recv_done: a changePermission's reply arrived
 */
struct conn_op {
	struct sacred_io io;
	struct sacred_io_result res;
	uint64_t seq;
	uint64_t deadline;
	uint32_t cookie;
	bool busy;
	bool done;
	bool send_done;
	bool recv_done;
};

/**
 * struct sacred_conn - one RC connection to one memory instance
 * @addr: the instance's address, with its rdma_cm port
 * @process_id: who we are
 * @timeout_ms: bound on connecting and on every blocking call
 * @bounce_size: bytes of @bounce
 * @ch: rdma_cm event channel of @id
 * @id: rdma_cm id of the current connection, NULL when there is none
 * @established: @id is connected and no disconnect was seen since
 * @step: the event a connect attempt under way waits for (&enum
 *	conn_step); CONN_IDLE when none is
 * @deadline: when that attempt times out (CLOCK_MONOTONIC ns)
 * @ctx: device context the objects below belong to
 * @pd: protection domain
 * @bounce: bounce buffer for READ and WRITE
 * @bounce_mr: its registration
 * @ctl: control area
 * @ctl_mr: its registration
 * @atomics: the device does atomics
 * @rd_atomic: outstanding READs/atomics we ask for
 * @cc: completion channel of @cq
 * @cq: send and receive CQ of @qp
 * @qp: the RC QP (@id->qp)
 * @max_inline: largest inline send @qp takes
 * @have_mem_id: @mem_id is known (after the first connection)
 * @mem_id: the instance's id
 * @credits: requests the instance lets us have outstanding
 * @cookie: cookie of the last request
 * @wr_seq: id of the last send work request
 * @broken: every call fails with -ECONNRESET until a reconnect
 * @regions: attached regions, sorted by id
 * @nr_regions: entries in @regions
 * @max_regions: room in @regions, and in @stale
 * @stale: ids of regions forgotten because they were deleted or made
 *	again (another tag) since they were attached, or left out by
 *	lib/rmem.c (another incarnation than a quorum's): refused until
 *	attached on purpose
 * @nr_stale: entries in @stale
 * @auto_reconnect: a call on a broken connection reconnects first
 * @depth: asynchronous slots (sacred_io_post())
 * @slot_size: bytes of the bounce buffer each slot owns
 * @ops: the slots
 * @nr_busy: slots posted, or done and not yet polled
 * @nr_pending: slots posted and not done
 * @perms_out: asynchronous changePermissions awaiting their reply
 * @op_seq: post order of the slots
 * @errmsg: what made the last call fail, "" if it did not
 * @cause: what broke the connection
 */
struct sacred_conn {
	struct sockaddr_storage addr;
	uint32_t process_id;
	int timeout_ms;
	size_t bounce_size;
	uint8_t key[SACRED_MAC_LEN];
	bool keyed;
	uint64_t counter;

	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	bool established;
	uint8_t step;
	uint64_t deadline;

	struct ibv_context *ctx;
	struct ibv_pd *pd;
	void *bounce;
	struct ibv_mr *bounce_mr;
	struct conn_ctl *ctl;
	struct ibv_mr *ctl_mr;
	bool atomics;
	uint8_t rd_atomic;

	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t max_inline;

	bool have_mem_id;
	uint32_t mem_id;
	uint16_t credits;
	uint32_t cookie;
	uint64_t wr_seq;
	bool broken;

	struct sacred_region_attr *regions;
	unsigned int nr_regions;
	unsigned int max_regions;
	uint32_t *stale;
	unsigned int nr_stale;

	bool auto_reconnect;
	unsigned int depth;
	size_t slot_size;
	struct conn_op *ops;
	unsigned int nr_busy;
	unsigned int nr_pending;
	unsigned int perms_out;
	uint64_t op_seq;

	char errmsg[CONN_ERRMSG_MAX];
	char cause[CONN_ERRMSG_MAX];
};

/**
 * struct conn_wait - what a blocking call waits for
 * @what: the operation, for messages ("WRITE", "ATTACH", ...)
 * @region_id: the region it is about
 * @wr_id: the signaled send work request
 * @want_recv: a reply is expected as well
 * @send_done: @wr_id completed (successfully or not)
 * @recv_done: the reply arrived
 * @recv_slot: its receive buffer
 * @recv_len: its length
 * @failed: some completion failed; @err is the first failure, preferring
 *	a real error to a flush
 * @err: status of that completion
 * @err_recv: it was a receive
 * @unsolicited: a message arrived that nobody asked for
 */
struct conn_wait {
	const char *what;
	uint32_t region_id;
	uint64_t wr_id;
	bool want_recv;
	bool send_done;
	bool recv_done;
	unsigned int recv_slot;
	uint32_t recv_len;
	bool failed;
	enum ibv_wc_status err;
	bool err_recv;
	bool unsolicited;
};

/**
 * struct conn_reply - a checked reply, in host order
 * @status: &enum sacred_wire_status
 * @reason: &enum sacred_refuse_reason
 * @region: the region as the reply describes it
 */
struct conn_reply {
	uint32_t status;
	uint32_t reason;
	struct sacred_region_attr region;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Milliseconds left until @deadline, at least 1 (rdma_cm wants > 0). */
static int ms_left(uint64_t deadline)
{
	uint64_t t = now_ns();
	uint64_t ms;

	if (t >= deadline)
		return 1;
	ms = (deadline - t + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Record a failure and return @err. */
static int __printf(3, 4)
conn_fail(struct sacred_conn *conn, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(conn->errmsg, sizeof(conn->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* Record a failure that leaves the connection unusable; return @err. */
static int __printf(3, 4)
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

static int conn_broken(struct sacred_conn *conn)
{
	return conn_fail(conn, -ECONNRESET,
			 "connection broken (%s): call sacred_conn_reconnect()",
			 conn->cause[0] ? conn->cause : "not connected");
}

static const char *refuse_reason_str(uint32_t reason)
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

static struct sacred_region_attr *
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

static int conn_region_store(struct sacred_conn *conn,
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

static void conn_region_drop(struct sacred_conn *conn, uint32_t region_id)
{
	struct sacred_region_attr *r = conn_region_find(conn, region_id);
	unsigned int i;

	if (!r)
		return;
	conn->nr_regions--;
	for (i = r - conn->regions; i < conn->nr_regions; i++)
		conn->regions[i] = conn->regions[i + 1];
}

static bool conn_stale_has(const struct sacred_conn *conn, uint32_t region_id)
{
	unsigned int i;

	for (i = 0; i < conn->nr_stale; i++)
		if (conn->stale[i] == region_id)
			return true;
	return false;
}

static void conn_stale_del(struct sacred_conn *conn, uint32_t region_id)
{
	unsigned int i;

	for (i = 0; i < conn->nr_stale; i++)
		if (conn->stale[i] == region_id)
			conn->stale[i] = conn->stale[--conn->nr_stale];
}

/* Forget attached region @r, gone or made again: its id is stale now. */
static void conn_region_stale(struct sacred_conn *conn,
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
static bool conn_cm_drain(struct sacred_conn *conn)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(conn->ch, &ev)) {
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			conn->established = false;
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
	return !conn->established;
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

static int conn_post_recv(struct sacred_conn *conn, unsigned int slot)
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

static void conn_cm_close(struct sacred_conn *conn)
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
static int conn_connect_start(struct sacred_conn *conn, uint64_t *deadlinep)
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
static int conn_connect_step(struct sacred_conn *conn, uint64_t until)
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
static int conn_connect(struct sacred_conn *conn, bool retry_dup)
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
static void conn_disconnect(struct sacred_conn *conn, bool wait)
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
static int conn_wc_fail(struct sacred_conn *conn, const struct conn_wait *w)
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
 * @ns pass. Returns 0 or a negative errno (disconnect, poll failure).
 */
static int conn_sleep(struct sacred_conn *conn, const struct conn_wait *w,
		      uint64_t ns)
{
	struct pollfd pfd[2] = {
		{ .fd = conn->cc->fd, .events = POLLIN },
		{ .fd = conn->ch->fd, .events = POLLIN },
	};
	uint64_t ms = (ns + 999999) / 1000000;
	struct ibv_cq *cq;
	void *cq_ctx;
	int ret;

	ret = poll(pfd, 2, ms > INT_MAX ? INT_MAX : (int)ms);
	if (ret < 0) {
		if (errno == EINTR)
			return 0;
		return conn_break(conn, -errno, "%s: poll: %s", w->what,
				  strerror(errno));
	}
	if (pfd[1].revents && conn_cm_drain(conn))
		return conn_break(conn, -ECONNRESET,
				  "%s on region %u: memory %u disconnected",
				  w->what, w->region_id, conn->mem_id);
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
static int conn_parse_reply(struct sacred_conn *conn,
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
static int conn_status(struct sacred_conn *conn, const char *what,
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
static int conn_stale(struct sacred_conn *conn, const char *what,
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
static int conn_cache_update(struct sacred_conn *conn, const char *what,
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
static int conn_attach(struct sacred_conn *conn, uint32_t region_id,
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

/* After a reconnect: attach every cached region again. */
static int conn_reattach(struct sacred_conn *conn)
{
	char why[sizeof(conn->errmsg)];
	unsigned int i = 0;
	uint32_t id;
	int ret;

	while (i < conn->nr_regions) {
		id = conn->regions[i].region_id;
		ret = conn_attach(conn, id, NULL, false);
		if (ret && ret != -ENOENT && ret != -EACCES && ret != -ESTALE) {
			/*
			 * The regions not attached again still carry the old
			 * connection's keys and access: broken until the next
			 * reconnect, not half usable.
			 */
			memcpy(why, conn->errmsg, sizeof(why));
			return conn_break(conn, ret,
					  "attaching region %u again: %s", id,
					  why);
		}
		/* A region gone, or made again, was dropped: same index. */
		if (ret != -ENOENT && ret != -ESTALE)
			i++;
	}
	conn->errmsg[0] = '\0';
	return 0;
}

static void conn_reap(struct sacred_conn *conn);
static void conn_ops_fail(struct sacred_conn *conn, struct conn_op *cause,
			  int err);

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
static void conn_connected(struct sacred_conn *conn)
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

/*
 * Before a reconnect: operations in flight die with the QP (their results
 * stay to poll), the old connection goes (waiting a little for the
 * instance's answer if @wait), and the connection is broken until the
 * new one is made.
 */
static void conn_drop(struct sacred_conn *conn, bool wait)
{
	conn->errmsg[0] = '\0';
	conn_ops_fail(conn, NULL, -ECONNRESET);
	conn_disconnect(conn, wait);
	conn_cm_close(conn);
	conn->broken = true;
	snprintf(conn->cause, sizeof(conn->cause), "reconnecting");
}

void sacred_conn_drop(struct sacred_conn *conn)
{
	if (conn && conn->step == CONN_IDLE)
		conn_drop(conn, true);
}

/* After a reconnect attempt that ended with @ret: attach again, or why not. */
static int conn_reconnected(struct sacred_conn *conn, int ret)
{
	if (ret) {
		memcpy(conn->cause, conn->errmsg, sizeof(conn->cause));
		return ret;
	}
	conn_connected(conn);
	return conn_reattach(conn);
}

/**
 * sacred_conn_reconnect() - replace a broken connection
 * @conn: the connection
 *
 * Disconnects the current rdma_cm id, if any, and connects a new one as
 * the same process to the same address; while the instance still holds
 * the old connection (it releases it asynchronously), the attempt is
 * repeated until the timeout. Then every region that was attached is
 * attached again, refreshing its key, access and epoch: a region that is
 * gone, or was made again under its id since (another tag: its bytes are
 * not those this process knew), is forgotten and its id refused with
 * -ESTALE until sacred_attach() takes the new one; one the process is no
 * longer a member of is kept with no access. Works on a healthy
 * connection too.
 *
 * Return: 0; -ESTALE if another instance (another memory id) now answers
 * at the address; the errors of sacred_conn_create() and sacred_attach().
 * On failure the connection stays broken and the call may be repeated.
 */
int sacred_conn_reconnect(struct sacred_conn *conn)
{
	int ret;

	if (!conn)
		return -EINVAL;
	conn_drop(conn, true);
	ret = conn_connect(conn, true);
	return conn_reconnected(conn, ret);
}

/**
 * sacred_conn_reconnect_async() - sacred_conn_reconnect() without waiting
 * @conn: the connection
 *
 * The first call drops the current connection and starts a new attempt;
 * each later call takes the rdma_cm's answers that came since and moves
 * the attempt on, without waiting for more. Once the instance accepted,
 * the call that sees it attaches the regions again as
 * sacred_conn_reconnect() does (waiting for those replies: the instance
 * has just answered). An attempt takes up to the connection's timeout; a
 * memory whose host is gone costs the caller nothing meanwhile. A
 * duplicate refusal (the instance still holds the old connection) is
 * returned, not retried: the next call starts a new attempt.
 * sacred_conn_reconnect(), sacred_conn_destroy() and a blocking call on a
 * connection made with SACRED_CONN_AUTO_RECONNECT (which reconnects
 * first) abandon the attempt; other calls fail with -ECONNRESET, as on
 * any broken connection, and leave it be.
 *
 * Return: 0 when connected and attached again; -EINPROGRESS while the
 * attempt is under way: call again later; otherwise the errors of
 * sacred_conn_reconnect(), after which the next call starts anew.
 */
int sacred_conn_reconnect_async(struct sacred_conn *conn)
{
	uint64_t deadline = 0;
	int ret;

	if (!conn)
		return -EINVAL;
	if (conn->step == CONN_IDLE) {
		conn_drop(conn, false);
		ret = conn_connect_start(conn, &deadline);
		if (ret)
			return conn_reconnected(conn, ret);
	}
	ret = conn_connect_step(conn, now_ns());
	if (ret == -EINPROGRESS)
		return ret;
	return conn_reconnected(conn, ret);
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

static bool access_valid(uint32_t access)
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
static int conn_io_check(struct sacred_conn *conn, const char *what,
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

/* ------------------------------------------------------------------ */
/* Asynchronous operations: sacred_io_post(), _poll(), _wait().        */
/*
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
static void conn_ops_fail(struct sacred_conn *conn, struct conn_op *cause,
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
static void conn_reap(struct sacred_conn *conn)
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
