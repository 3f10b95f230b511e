/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - what the connection's files share: struct sacred_conn, the
 * wait and reply records, the clock helpers, and the functions one file
 * defines for the others. Not installed, not part of the API.
 *
 *   lib/conn.c            connection set-up and teardown, attached-region
 *                         cache, errors, accessors, process keys
 *   lib/conn_sync.c       the synchronous data path (attach, READ, WRITE,
 *                         atomics, changePermission) and the waits under it
 *   lib/conn_io.c         asynchronous operations (sacred_io_*)
 *   lib/conn_reconnect.c  reconnection
 */
#ifndef SACRED_LIB_CONN_INTERNAL_H
#define SACRED_LIB_CONN_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

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
/*
 * How long a blocking call still waits for its completion after the
 * memory's disconnect (conn_down()): a refusal's NAK that the NIC took in
 * before the disconnect may complete after the rdma_cm event reports it -
 * rxe in 6.12 completes in a work item, the disconnect comes through the
 * CM - and it tells the caller -EACCES, where the disconnect says only
 * -ECONNRESET. Asynchronous operations (lib/conn_io.c) end at the
 * disconnect: a quorum wants a memory's failure at once.
 */
#define CONN_GONE_GRACE_NS	20000000ULL
/* Longest pause between connect attempts refused as duplicates. */
#define CONN_DUP_BACKOFF_MAX_MS	64
#define CONN_ERRMSG_MAX		192
#define CONN_RECV_TAG		(1ULL << 63)
/* IB_CM_REJ_CONSUMER_DEFINED: a reject with the instance's reason. */
#define CONN_REJ_CONSUMER	28
#define CONN_REJ_NO_LISTENER	8	/* IB_CM_REJ_INVALID_SERVICE_ID */

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
 * @gone: when the memory's disconnect was seen (CLOCK_MONOTONIC ns)
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
	uint64_t gone;
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

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Milliseconds left until @deadline, at least 1 (rdma_cm wants > 0). */
static inline int ms_left(uint64_t deadline)
{
	uint64_t t = now_ns();
	uint64_t ms;

	if (t >= deadline)
		return 1;
	ms = (deadline - t + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}


/* lib/conn.c: errors, the attached-region cache, connecting */
int conn_broken(struct sacred_conn *conn);
void conn_cm_close(struct sacred_conn *conn);
bool conn_cm_drain(struct sacred_conn *conn);
bool conn_down(struct sacred_conn *conn, uint64_t *grace);
int conn_connect(struct sacred_conn *conn, bool retry_dup);
int conn_connect_start(struct sacred_conn *conn, uint64_t *deadlinep);
int conn_connect_step(struct sacred_conn *conn, uint64_t until);
void conn_connected(struct sacred_conn *conn);
void conn_disconnect(struct sacred_conn *conn, bool wait);
int conn_post_recv(struct sacred_conn *conn, unsigned int slot);
void conn_region_drop(struct sacred_conn *conn, uint32_t region_id);
struct sacred_region_attr *
conn_region_find(struct sacred_conn *conn, uint32_t region_id);
void conn_region_stale(struct sacred_conn *conn, struct sacred_region_attr *r);
int conn_region_store(struct sacred_conn *conn,
		      const struct sacred_region_attr *attr);
void conn_stale_del(struct sacred_conn *conn, uint32_t region_id);
bool conn_stale_has(const struct sacred_conn *conn, uint32_t region_id);
const char *refuse_reason_str(uint32_t reason);
int __printf(3, 4) conn_fail(struct sacred_conn *conn, int err,
			       const char *fmt, ...);
int __printf(3, 4) conn_break(struct sacred_conn *conn, int err,
				const char *fmt, ...);

/* lib/conn_sync.c: replies and the checks every access makes */
bool access_valid(uint32_t access);
int conn_attach(struct sacred_conn *conn, uint32_t region_id,
		struct sacred_region_attr *attr, bool relearn);
int conn_cache_update(struct sacred_conn *conn, const char *what,
		      uint32_t region_id, int ret,
		      const struct sacred_region_attr *attr,
		      bool relearn);
int conn_io_check(struct sacred_conn *conn, const char *what,
		  uint32_t region_id, uint64_t offset, uint64_t len,
		  struct sacred_region_attr *region);
int conn_parse_reply(struct sacred_conn *conn,
		     const struct conn_wait *w, uint32_t cookie,
		     struct conn_reply *out);
int conn_stale(struct sacred_conn *conn, const char *what, uint32_t region_id);
int conn_status(struct sacred_conn *conn, const char *what,
		uint32_t region_id, const struct conn_reply *rep);
int conn_wc_fail(struct sacred_conn *conn, const struct conn_wait *w);

/* lib/conn_io.c: what a blocking call or a reconnect does to the slots */
void conn_ops_fail(struct sacred_conn *conn, struct conn_op *cause, int err);
void conn_reap(struct sacred_conn *conn);

#endif /* SACRED_LIB_CONN_INTERNAL_H */
