// SPDX-License-Identifier: GPL-2.0
/*
 * userswitch - what userspace can do today, on the same rxe device, to
 * change which process may write a region, measured the way the process
 * that asks for the change sees it, next to the floor. These are the
 * mechanisms sacred's changePermission is compared with: bench/permswitch
 * measures sacred itself, and scripts/bench-report puts the two reports
 * side by side in bench/results/report.md.
 *
 * One process. A "memory host" thread owns the region and one RC QP per
 * writer (rdma_cm on the bench address, each writer in a protection
 * domain of its own, as sacred gives each peer one); the main thread plays
 * two writers, A and B, each with its own RC connection. A switch takes
 * write access from the current writer (revoked) and gives it to the other
 * (the requester, granted): a leader change. Rows, per region size:
 *
 *   send/recv RTT   a request the memory host answers without a change:
 *                   the round trip every "+ RTT" row pays so that the
 *                   memory host learns of the change at all
 *   8 B write RTT   one RDMA WRITE, post to completion
 *   modify_qp       ibv_modify_qp(IBV_QP_ACCESS_FLAGS) on the memory side:
 *                   the revoked writer's QP to remote read, the
 *                   requester's to read+write (Mu's fast path; rxe only
 *                   flips a flag and does not wait for a write already
 *                   being placed, so it is no fence - the kernel switch
 *                   drains the QP instead, Documentation/permission-switch.rst)
 *   QP cycle        the revoked writer's memory-side QP through
 *                   RESET->INIT->RTR->RTS with remote read only (Mu's
 *                   strict fallback), its receives posted again; the
 *                   requester is granted by access flags (a grant needs
 *                   no fence)
 *   dereg+reg       each writer has an MR of its own over the region; the
 *                   revoked writer's MR and the requester's are
 *                   deregistered and registered again with the new access
 *                   (the requester learns its new key from the reply)
 *   rereg_mr        the same with ibv_rereg_mr(IBV_REREG_MR_CHANGE_ACCESS),
 *                   or "unsupported" and the errno where the device says so
 *
 * "(local)" rows are the memory host's own time for the change; "+ RTT"
 * rows are what the requester sees: its request SEND, the change, the
 * reply. What the revoked writer pays afterwards is reported apart:
 *
 *   reconnect       after a modify_qp revoke its next write is refused and
 *                   breaks the connection: drop the old rdma_cm id,
 *                   resolve, connect, the memory host accepts - what a
 *                   sacred writer does after a fence
 *   QP re-sync      after a QP cycle the writer must cycle its own QP too
 *                   (the memory side restarted its packet sequence)
 *
 * Each round samples every row once, in turns (as bench/agreement does):
 * on a shared host running an emulated guest, slow spells come and go by
 * the second, and sampling in turns makes them weigh on all mechanisms
 * alike. The requester waits for completions as libsacred does (spin
 * 1 ms, then sleep on the completion channel); the memory host thread
 * sleeps on completion events, as sacred's kernel side is woken by its
 * CQ.
 *
 * Run inside the VM rig: make bench. Options: -n SAMPLES (default 200),
 * -s SIZES (comma list, default 4k,64k,1m,16m,256m), -p (the memory host
 * polls 1 ms before it sleeps), -v (progress on stderr). Environment:
 * SACRED_BENCH_DEV (title only, default rxe0), SACRED_BENCH_ADDR (default
 * 192.0.2.1).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "bench.h"

#define PORT		"7692"
#define NW		2	/* writers: A and B */
#define NRECV		4	/* receives the memory host keeps posted per QP */
#define WARMUP		10
#define MAXN		100000
#define SPIN_US		1000
#define TIMEOUT_MS	30000
#define CQ_DEPTH	256
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static bool verbose;

/* -v: where a run is, on stderr (a hang in the VM says nothing else). */
#define trace(...)							\
	do {								\
		if (verbose)						\
			fprintf(stderr, "userswitch: " __VA_ARGS__);	\
	} while (0)

/* QP access: who may read or write through this connection. */
#define ACC_READ	IBV_ACCESS_REMOTE_READ
#define ACC_RW		(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)
/* MR access: remote write needs local write. */
#define MR_READ		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ)
#define MR_RW		(MR_READ | IBV_ACCESS_REMOTE_WRITE)

enum op {
	OP_NOP,		/* answer, change nothing */
	OP_REGION,	/* replace the region: arg = size in bytes */
	OP_OWNER,	/* untimed setup: grant writes to "grant", arg = mech */
	OP_MODQP,	/* switch by QP access flags */
	OP_CYCLE,	/* switch by a state cycle of the revoked writer's QP */
	OP_MR,		/* switch by dereg + reg of both writers' MRs */
	OP_REREG,	/* switch by ibv_rereg_mr of both writers' MRs */
	OP_ACCEPT,	/* reply, then accept writer "revoke"'s new connection */
	OP_QUIT,
};

/* Which object carries the permission during a phase. */
enum mech { MECH_QP, MECH_MR };

struct msg {
	uint32_t op;
	uint32_t grant;		/* the writer that gets write (the requester) */
	uint32_t revoke;	/* the writer that loses it */
	int32_t status;		/* reply: 0 or -errno */
	int64_t arg;		/* request: size or mech; reply: rereg's code */
	uint64_t addr;		/* reply: the region's RDMA address */
	uint32_t rkey;		/* reply: the requester's key for it */
	uint32_t pad;
	double local_us;	/* reply: the memory host's time for the change */
	double t_in, t_out;	/* reply: when it woke with the request, replied */
};

/*
 * Wait for one completion the way libsacred does: spin for up to 1 ms,
 * then sleep on the completion channel. Spinning forever on a 2-vCPU TCG
 * guest starves the memory host thread and rxe's tasks. Returns 0 with
 * *wc filled (its status is the caller's to judge) or -errno.
 */
static int wait_wc(struct ibv_cq *cq, struct ibv_comp_channel *ch,
		   struct ibv_wc *wc)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	double deadline = now_us() + SPIN_US;
	struct ibv_cq *ev_cq;
	void *ctx;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -EIO : 0;
	} while (now_us() < deadline);
	for (;;) {
		if (ibv_req_notify_cq(cq, 0))
			return -EIO;
		/* A completion that came before the arm raises no event. */
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -EIO : 0;
		n = poll(&pfd, 1, TIMEOUT_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -ETIMEDOUT;
		if (ibv_get_cq_event(ch, &ev_cq, &ctx))
			return -EIO;
		ibv_ack_cq_events(ev_cq, 1);
	}
}

/* ------------------------------------------------------ the memory host */

struct mconn {
	struct rdma_cm_id *id;
	struct qp_attrs qa;
	int access;		/* the QP's remote access flags now */
};

struct memhost {
	struct rdma_cm_id *listen;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;	/* all QPs' receives: requests wake the thread */
	struct ibv_cq *scq;	/* all QPs' sends: drained, never waited for */
	struct ibv_pd *pd[NW];
	struct msg msgs[NW][NRECV + 1];	/* NRECV receives, then the reply */
	struct ibv_mr *msg_mr[NW];
	struct mconn c[NW];
	void *region;
	size_t size;
	struct ibv_mr *mr[NW];	/* each writer's MR over the region */
	int mr_access[NW];
	atomic_bool stop;	/* the client gave up: leave any wait */
	bool spin;		/* -p: poll 1 ms before sleeping */
	int err;
};

static int mh_post_recv(struct memhost *mh, struct rdma_cm_id *id, int w,
			int slot)
{
	if (rdma_post_recv(id, (void *)(uintptr_t)(w << 8 | slot),
			   &mh->msgs[w][slot], sizeof(struct msg),
			   mh->msg_mr[w]))
		return -errno;
	return 0;
}

static int mh_post_recvs(struct memhost *mh, struct rdma_cm_id *id, int w)
{
	int slot, ret;

	for (slot = 0; slot < NRECV; slot++) {
		ret = mh_post_recv(mh, id, w, slot);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Wait for the next completion on the receive CQ, asleep on its channel
 * (the memory host is woken by the request, as sacred's kernel side is),
 * in 100 ms slices so that a client that gave up can stop the thread.
 * With -p it first polls for up to 1 ms, as the requester does - what a
 * memory host that may burn a core (Mu's replicas poll) would gain.
 */
static int mh_wait(struct memhost *mh, struct ibv_wc *wc)
{
	struct pollfd pfd = { .fd = mh->ch->fd, .events = POLLIN };
	double deadline = now_us() + SPIN_US;
	struct ibv_cq *ev_cq;
	void *ctx;
	int n;

	while (mh->spin && now_us() < deadline) {
		n = ibv_poll_cq(mh->cq, 1, wc);
		if (n)
			return n < 0 ? -EIO : 0;
	}
	for (;;) {
		n = ibv_poll_cq(mh->cq, 1, wc);
		if (n)
			return n < 0 ? -EIO : 0;
		if (ibv_req_notify_cq(mh->cq, 0))
			return -EIO;
		n = ibv_poll_cq(mh->cq, 1, wc);
		if (n)
			return n < 0 ? -EIO : 0;
		do {
			if (atomic_load(&mh->stop))
				return -ECANCELED;
			n = poll(&pfd, 1, 100);
		} while (!n || (n < 0 && errno == EINTR));
		if (n < 0)
			return -errno;
		if (ibv_get_cq_event(mh->ch, &ev_cq, &ctx))
			return -EIO;
		ibv_ack_cq_events(ev_cq, 1);
	}
}

/*
 * Accept writer w's (next) connection: a QP in w's PD on the shared CQs,
 * with w's current access set while it is still in INIT - before it can
 * take a packet - and the receives posted before the accept. A connection
 * w had before (broken by a refused write) is released after the new one
 * is up; the flushes of its receives reach the receive CQ and are ignored.
 */
static int accept_writer(struct memhost *mh, int w)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = mh->scq,
		.recv_cq = mh->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct pollfd pfd = { .fd = mh->listen->channel->fd, .events = POLLIN };
	struct ibv_qp_attr a = { .qp_access_flags = mh->c[w].access };
	struct rdma_cm_id *id;
	struct qp_attrs qa;
	int ret;

	do {
		if (atomic_load(&mh->stop))
			return -ECANCELED;
		ret = poll(&pfd, 1, 100);
	} while (!ret || (ret < 0 && errno == EINTR));
	if (ret < 0)
		return -errno;
	if (rdma_get_request(mh->listen, &id))
		return -errno;
	trace("memory host: connection request for writer %d\n", w);
	if (rdma_create_qp(id, mh->pd[w], &attr)) {
		ret = -errno;
		goto err_id;
	}
	ret = -ibv_modify_qp(id->qp, &a, IBV_QP_ACCESS_FLAGS);
	if (!ret)
		ret = mh_post_recvs(mh, id, w);
	if (ret)
		goto err_id;
	if (rdma_accept(id, NULL)) {
		ret = -errno;
		goto err_id;
	}
	trace("memory host: writer %d accepted\n", w);
	ret = cache_attrs(id, &qa);
	if (ret)
		goto err_id;
	if (mh->c[w].id)
		rdma_destroy_ep(mh->c[w].id);
	mh->c[w].id = id;
	mh->c[w].qa = qa;
	return 0;

err_id:
	rdma_destroy_ep(id);	/* and its QP, if it got one */
	return ret;
}

static int mh_set_access(struct memhost *mh, int w, int access)
{
	struct ibv_qp_attr a = { .qp_access_flags = access };
	int ret;

	ret = ibv_modify_qp(mh->c[w].id->qp, &a, IBV_QP_ACCESS_FLAGS);
	if (ret)
		return -ret;
	mh->c[w].access = access;
	return 0;
}

/* A reset discards the posted receives: posting them again is part of it. */
static int mh_cycle(struct memhost *mh, int w, int access)
{
	struct mconn *c = &mh->c[w];
	int ret;

	ret = qp_cycle(c->id->qp, &c->qa, access);
	if (ret)
		return ret;
	c->access = access;
	return mh_post_recvs(mh, c->id, w);
}

static int mh_reg(struct memhost *mh, int w, int access)
{
	int ret;

	if (mh->mr[w]) {
		ret = ibv_dereg_mr(mh->mr[w]);
		if (ret)
			return -ret;	/* kept, for memhost_fini to retry */
		mh->mr[w] = NULL;
	}
	mh->mr[w] = ibv_reg_mr(mh->pd[w], mh->region, mh->size, access);
	if (!mh->mr[w])
		return -errno;
	mh->mr_access[w] = access;
	return 0;
}

/*
 * ibv_rereg_mr returns one of enum ibv_rereg_mr_err_code and sets errno;
 * the code goes back in *code. After a command error the old MR "should
 * not be used" (ibv_rereg_mr(3)): it is replaced by a fresh registration
 * with its old access, so that the run can go on.
 */
static int mh_rereg(struct memhost *mh, int w, int access, int64_t *code)
{
	int ret, err;

	errno = 0;
	ret = ibv_rereg_mr(mh->mr[w], IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
			   0, access);
	err = errno ? errno : EIO;
	if (!ret) {
		mh->mr_access[w] = access;
		return 0;
	}
	*code = ret;
	if (ret == IBV_REREG_MR_ERR_CMD ||
	    ret == IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW ||
	    ret == IBV_REREG_MR_ERR_DO_FORK_OLD)
		mh_reg(mh, w, mh->mr_access[w]);
	return -err;
}

static void mh_drop_region(struct memhost *mh)
{
	int w;

	for (w = 0; w < NW; w++) {
		if (mh->mr[w] && !ibv_dereg_mr(mh->mr[w]))
			mh->mr[w] = NULL;
	}
	if (mh->region)
		munmap(mh->region, mh->size);
	mh->region = NULL;
	mh->size = 0;
}

static int mh_region(struct memhost *mh, size_t size)
{
	void *p;
	int w, ret;

	mh_drop_region(mh);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	/* Fault every page in now: a registration should pin, not allocate. */
	memset(p, 0, size);
	mh->region = p;
	mh->size = size;
	for (w = 0; w < NW; w++) {
		ret = mh_reg(mh, w, MR_RW);
		if (ret)
			return ret;	/* the next region or fini drops it */
	}
	return 0;
}

/*
 * Put the permission where a phase's mechanism keeps it: QP access flags
 * (one RW MR each) or MRs (every QP RW), write for g, read for the rest.
 */
static int mh_owner(struct memhost *mh, int g, int mech)
{
	int w, qp_acc, mr_acc, ret;

	for (w = 0; w < NW; w++) {
		qp_acc = mech == MECH_QP && w != g ? ACC_READ : ACC_RW;
		mr_acc = mech == MECH_MR && w != g ? MR_READ : MR_RW;
		if (mh->c[w].access != qp_acc) {
			ret = mh_set_access(mh, w, qp_acc);
			if (ret)
				return ret;
		}
		if (!mh->mr[w] || mh->mr_access[w] != mr_acc) {
			ret = mh_reg(mh, w, mr_acc);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Serve one request that came on writer w's connection. */
static void handle(struct memhost *mh, int w, const struct msg *req,
		   struct msg *rep)
{
	int r = req->revoke, g = req->grant;
	int ret = 0;
	double t0;

	memset(rep, 0, sizeof(*rep));
	rep->op = req->op;
	if (r >= NW || g >= NW ||
	    ((req->op == OP_CYCLE || req->op == OP_ACCEPT) && r == w)) {
		rep->status = -EINVAL;
		return;
	}
	t0 = now_us();
	switch (req->op) {
	case OP_NOP:
	case OP_ACCEPT:
	case OP_QUIT:
		break;
	case OP_REGION:
		ret = mh_region(mh, req->arg);
		break;
	case OP_OWNER:
		ret = mh_owner(mh, g, req->arg);
		break;
	case OP_MODQP:
		ret = mh_set_access(mh, r, ACC_READ);
		if (!ret)
			ret = mh_set_access(mh, g, ACC_RW);
		break;
	case OP_CYCLE:
		ret = mh_cycle(mh, r, ACC_READ);
		if (!ret)
			ret = mh_set_access(mh, g, ACC_RW);
		break;
	case OP_MR:
		ret = mh_reg(mh, r, MR_READ);
		if (!ret)
			ret = mh_reg(mh, g, MR_RW);
		break;
	case OP_REREG:
		ret = mh_rereg(mh, r, MR_READ, &rep->arg);
		if (!ret)
			ret = mh_rereg(mh, g, MR_RW, &rep->arg);
		break;
	default:
		ret = -EINVAL;
	}
	rep->local_us = now_us() - t0;
	rep->status = ret;
	rep->addr = (uintptr_t)mh->region;
	rep->rkey = mh->mr[w] ? mh->mr[w]->rkey : 0;
}

/*
 * The replies' completions go to a CQ of their own that nobody sleeps on:
 * a wake-up per reply would cost the thread as much as the request's.
 * It is drained as requests come, so that it never fills.
 */
static void drain_sends(struct memhost *mh)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(mh->scq, 16, wc) > 0)
		;
}

static int serve(struct memhost *mh)
{
	struct msg req, *rep;
	struct ibv_wc wc;
	int w, slot, ret;
	double t_in;

	for (;;) {
		ret = mh_wait(mh, &wc);
		if (ret)
			return ret;
		drain_sends(mh);
		/* The flushes of a QP that a refused write broke. */
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
			continue;
		w = wc.wr_id >> 8;
		slot = wc.wr_id & 0xff;
		if (w >= NW || slot >= NRECV)
			return -EPROTO;
		req = mh->msgs[w][slot];
		ret = mh_post_recv(mh, mh->c[w].id, w, slot);
		if (ret)
			return ret;
		/*
		 * One reply buffer per writer is enough: a writer sends its
		 * next request only after it has this reply.
		 */
		rep = &mh->msgs[w][NRECV];
		t_in = now_us();
		handle(mh, w, &req, rep);
		rep->t_in = t_in;
		rep->t_out = now_us();
		if (rdma_post_send(mh->c[w].id, NULL, rep, sizeof(*rep),
				   mh->msg_mr[w], 0))
			return -errno;
		if (req.op == OP_ACCEPT && !rep->status) {
			ret = accept_writer(mh, req.revoke);
			if (ret)
				return ret;
		}
		if (req.op == OP_QUIT)
			return 0;
	}
}

static void *memhost_main(void *arg)
{
	struct memhost *mh = arg;
	int w, ret = 0;

	for (w = 0; w < NW && !ret; w++)
		ret = accept_writer(mh, w);
	if (!ret)
		ret = serve(mh);
	mh->err = ret;
	if (ret && ret != -ECANCELED)
		fprintf(stderr, "userswitch: memory host: %s\n", strerror(-ret));
	return NULL;
}

static void memhost_fini(struct memhost *mh)
{
	int w;

	for (w = 0; w < NW; w++) {
		if (mh->c[w].id)
			rdma_destroy_ep(mh->c[w].id);
		mh->c[w].id = NULL;
	}
	mh_drop_region(mh);
	for (w = 0; w < NW; w++) {
		if (mh->msg_mr[w])
			ibv_dereg_mr(mh->msg_mr[w]);
		if (mh->pd[w])
			ibv_dealloc_pd(mh->pd[w]);
	}
	if (mh->scq)
		ibv_destroy_cq(mh->scq);
	if (mh->cq)
		ibv_destroy_cq(mh->cq);
	if (mh->ch)
		ibv_destroy_comp_channel(mh->ch);
	if (mh->listen)
		rdma_destroy_ep(mh->listen);
}

static int memhost_init(struct memhost *mh, const char *host)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_context *verbs;
	int w, ret;

	for (w = 0; w < NW; w++)
		mh->c[w].access = ACC_READ;
	if (rdma_getaddrinfo(host, PORT, &hints, &res))
		return -EADDRNOTAVAIL;
	ret = rdma_create_ep(&mh->listen, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (ret) {
		mh->listen = NULL;
		return -errno;
	}
	if (rdma_listen(mh->listen, NW)) {
		ret = -errno;
		goto err;
	}
	/* Bound to the bench address, the listener knows its device. */
	verbs = mh->listen->verbs;
	ret = -ENODEV;
	if (!verbs)
		goto err;
	ret = -ENOMEM;
	mh->ch = ibv_create_comp_channel(verbs);
	if (!mh->ch)
		goto err;
	mh->cq = ibv_create_cq(verbs, CQ_DEPTH, NULL, mh->ch, 0);
	if (!mh->cq)
		goto err;
	mh->scq = ibv_create_cq(verbs, CQ_DEPTH, NULL, NULL, 0);
	if (!mh->scq)
		goto err;
	for (w = 0; w < NW; w++) {
		mh->pd[w] = ibv_alloc_pd(verbs);
		if (!mh->pd[w])
			goto err;
		mh->msg_mr[w] = ibv_reg_mr(mh->pd[w], mh->msgs[w],
					   sizeof(mh->msgs[w]),
					   IBV_ACCESS_LOCAL_WRITE);
		if (!mh->msg_mr[w])
			goto err;
	}
	return 0;
err:
	memhost_fini(mh);
	return ret;
}

/* ---------------------------------------------------------- the writers */

struct wconn {
	struct rdma_cm_id *id;
	struct qp_attrs qa;
	uint64_t addr;		/* the region, from the last reply */
	uint32_t rkey;
};

struct client {
	struct rdma_addrinfo *res;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct {
		struct msg send, recv;
		uint64_t word;
	} buf[NW];
	struct wconn w[NW];
};

static int client_post_recv(struct client *cl, int w)
{
	if (rdma_post_recv(cl->w[w].id, NULL, &cl->buf[w].recv,
			   sizeof(struct msg), cl->mr))
		return -errno;
	return 0;
}

static int client_connect(struct client *cl, int w)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct wconn *c = &cl->w[w];
	struct rdma_cm_id *id;
	int ret;

	if (rdma_create_ep(&id, cl->res, NULL, NULL))
		return -errno;
	if (!cl->pd) {
		/*
		 * All ids on a device share one verbs context: one PD and one
		 * MR serve every connection, reconnections included.
		 */
		ret = -ENOMEM;
		cl->pd = ibv_alloc_pd(id->verbs);
		if (!cl->pd)
			goto err;
		cl->mr = ibv_reg_mr(cl->pd, cl->buf, sizeof(cl->buf),
				    IBV_ACCESS_LOCAL_WRITE);
		if (!cl->mr)
			goto err;
	}
	if (rdma_create_qp(id, cl->pd, &attr)) {
		ret = -errno;
		goto err;
	}
	c->id = id;
	ret = client_post_recv(cl, w);
	if (ret)
		goto err;
	if (rdma_connect(id, NULL)) {
		ret = -errno;
		goto err;
	}
	ret = cache_attrs(id, &c->qa);
	if (!ret)
		return 0;
err:
	c->id = NULL;
	rdma_destroy_ep(id);
	return ret;
}

/*
 * A fresh connection: the way back after a refused write broke the last.
 * The old id is destroyed without rdma_disconnect(), which on a
 * synchronous id waits for the peer's DREP - and the memory host answers
 * only when it lets the old connection go, after accepting the new one.
 * Destroying sends the DREQ and does not wait.
 */
static int client_reconnect(struct client *cl, int w)
{
	rdma_destroy_ep(cl->w[w].id);
	cl->w[w].id = NULL;
	return client_connect(cl, w);
}

/* After the memory side cycled this writer's QP, cycle ours to match. */
static int client_resync(struct client *cl, int w)
{
	struct wconn *c = &cl->w[w];
	int ret;

	ret = qp_cycle(c->id->qp, &c->qa, c->qa.init.qp_access_flags);
	return ret ? ret : client_post_recv(cl, w);
}

static void client_fini(struct client *cl)
{
	int w;

	/* No rdma_disconnect(): see client_reconnect(). */
	for (w = 0; w < NW; w++) {
		if (cl->w[w].id)
			rdma_destroy_ep(cl->w[w].id);
		cl->w[w].id = NULL;
	}
	if (cl->mr)
		ibv_dereg_mr(cl->mr);
	if (cl->pd)
		ibv_dealloc_pd(cl->pd);
	if (cl->res)
		rdma_freeaddrinfo(cl->res);
}

/*
 * Writer w's request and the memory host's reply, timed from the post
 * of the SEND until both its completion and the reply's are in. Returns
 * a transport error; the memory host's verdict is rep->status.
 */
static int request(struct client *cl, int w, const struct msg *req,
		   struct msg *rep, double *rtt)
{
	struct rdma_cm_id *id = cl->w[w].id;
	struct ibv_wc wc;
	double t0;
	int ret;

	cl->buf[w].send = *req;
	t0 = now_us();
	if (rdma_post_send(id, NULL, &cl->buf[w].send, sizeof(struct msg),
			   cl->mr, 0))
		return -errno;
	ret = wait_wc(id->recv_cq, id->recv_cq_channel, &wc);
	if (!ret && wc.status != IBV_WC_SUCCESS)
		ret = -EIO;
	if (!ret)
		ret = wait_wc(id->send_cq, id->send_cq_channel, &wc);
	if (!ret && wc.status != IBV_WC_SUCCESS)
		ret = -EIO;
	if (rtt)
		*rtt = now_us() - t0;
	if (ret)
		return ret;
	*rep = cl->buf[w].recv;
	cl->w[w].addr = rep->addr;
	cl->w[w].rkey = rep->rkey;
	return client_post_recv(cl, w);
}

/*
 * One 8-byte RDMA WRITE by writer w, post to completion. Returns 0, the
 * completion's failed status (> 0), or -errno.
 */
static int write8(struct client *cl, int w, double *rtt)
{
	struct wconn *c = &cl->w[w];
	struct ibv_wc wc;
	double t0;
	int ret;

	cl->buf[w].word++;
	t0 = now_us();
	if (rdma_post_write(c->id, NULL, &cl->buf[w].word, sizeof(uint64_t),
			    cl->mr, 0, c->addr + 8 * w, c->rkey))
		return -errno;
	ret = wait_wc(c->id->send_cq, c->id->send_cq_channel, &wc);
	if (rtt)
		*rtt = now_us() - t0;
	return ret ? ret : (int)wc.status;
}

/* ------------------------------------------------------------ the bench */

/*
 * Sample series, one per row and per leg of a round trip. A switch's
 * series come in fours: the memory host's time, the round trip, and the
 * round trip's request and reply legs.
 */
enum series {
	S_SR, S_WRITE,
	S_MODQP, S_MODQP_RTT, S_MODQP_IN, S_MODQP_OUT,
	S_RECONNECT,
	S_CYCLE, S_CYCLE_RTT, S_CYCLE_IN, S_CYCLE_OUT,
	S_RESYNC,
	S_MR, S_MR_RTT, S_MR_IN, S_MR_OUT,
	S_REREG, S_REREG_RTT, S_REREG_IN, S_REREG_OUT,
	NSERIES
};

struct bench {
	struct client cl;
	int n;
	int owner;		/* the writer that may write now */
	double *v[NSERIES];
	char size[32];
	/* Per mechanism and size: the medians of a switch's three legs. */
	struct {
		const char *mech;
		char size[32];
		double in, change, out;
	} legs[64];
	int nlegs;
	int revoked_writes;	/* writes by a writer modify_qp revoked */
	int refused_flags;	/* refused by the QP's access flags */
	int refused_other;	/* refused otherwise */
	bool rereg;		/* ibv_rereg_mr works: sample it too */
	int rereg_err;		/* errno of an unsupported ibv_rereg_mr */
	int64_t rereg_code;
};

static void row(struct bench *b, const char *what, enum series s)
{
	struct stats st = summarize(b->v[s], b->n);

	printf("| %s | %s | %.1f | %.1f | %.1f | %d |\n", what, b->size,
	       st.min, st.med, st.p99, st.n);
}

/* Print a switch's two rows and keep the medians of its legs. */
static void switch_rows(struct bench *b, const char *mech, enum series s,
			const char *local, const char *rtt)
{
	row(b, local, s);
	row(b, rtt, s + 1);
	if (b->nlegs >= (int)ARRAY_SIZE(b->legs))
		return;
	b->legs[b->nlegs].mech = mech;
	strcpy(b->legs[b->nlegs].size, b->size);
	b->legs[b->nlegs].change = summarize(b->v[s], b->n).med;
	b->legs[b->nlegs].in = summarize(b->v[s + 2], b->n).med;
	b->legs[b->nlegs].out = summarize(b->v[s + 3], b->n).med;
	b->nlegs++;
}

static int fail(const char *what, int ret)
{
	if (ret > 0)
		fprintf(stderr, "userswitch: %s: completion %s\n", what,
			ibv_wc_status_str(ret));
	else
		fprintf(stderr, "userswitch: %s: %s\n", what, strerror(-ret));
	return ret > 0 ? -EIO : ret;
}

/* A request by writer w that must succeed; its reply in *rep. */
static int call(struct bench *b, int w, enum op op, int revoke, int64_t arg,
		struct msg *rep, double *rtt)
{
	struct msg req = { .op = op, .grant = w, .revoke = revoke,
			   .arg = arg };
	int ret;

	ret = request(&b->cl, w, &req, rep, rtt);
	return ret ? ret : rep->status;
}

/* Samples of the first WARMUP rounds are thrown away. */
static void put(struct bench *b, enum series s, int i, double x)
{
	if (i >= WARMUP)
		b->v[s][i - WARMUP] = x;
}

/*
 * The writer without write asks for it with op, taking it from the
 * owner, then writes - with the key of the reply - to show that the grant
 * took effect. Both threads read one clock, so the request's way until the
 * memory host thread runs with it and the reply's way back can be told
 * from the change itself.
 */
static int timed_switch(struct bench *b, int i, enum op op, enum series s,
			const char *what)
{
	int g = 1 - b->owner, ret;
	struct msg rep;
	double t0, t;

	t0 = now_us();
	ret = call(b, g, op, b->owner, 0, &rep, &t);
	if (ret)
		return fail(what, ret);
	b->owner = g;
	ret = write8(&b->cl, g, NULL);
	if (ret)
		return fail("write after the grant", ret);
	put(b, s, i, rep.local_us);
	put(b, s + 1, i, t);
	put(b, s + 2, i, rep.t_in - t0);
	put(b, s + 3, i, t0 + t - rep.t_out);
	return 0;
}

/*
 * The writer modify_qp just revoked writes on - an old leader that does
 * not know yet. It is refused, and the refusal breaks its connection (the
 * QP goes to ERROR). Timed: its rdma_cm reconnect, the memory host
 * accepting it, which is told first.
 */
static int revoked_reconnects(struct bench *b, int i)
{
	int g = b->owner, r = 1 - b->owner, ret;
	struct msg rep;
	double t0;

	ret = write8(&b->cl, r, NULL);
	if (ret < 0)
		return fail("write after revoke", ret);
	trace("round %d: revoked write: %s\n", i, ibv_wc_status_str(ret));
	b->revoked_writes++;
	if (ret == IBV_WC_REM_INV_REQ_ERR)
		b->refused_flags++;
	else if (ret)
		b->refused_other++;
	ret = call(b, g, OP_ACCEPT, r, 0, &rep, NULL);
	if (ret)
		return fail("accept request", ret);
	t0 = now_us();
	ret = client_reconnect(&b->cl, r);
	put(b, S_RECONNECT, i, now_us() - t0);
	if (ret)
		return fail("reconnect", ret);
	/* The new connection carries a request: it works. */
	ret = call(b, r, OP_NOP, g, 0, &rep, NULL);
	return ret ? fail("request after reconnect", ret) : 0;
}

/*
 * One round: every mechanism once, in turns, so that a slow spell of the
 * (shared, emulated) machine weighs on all of them alike, and the ratios
 * within a run hold even when the absolute figures move.
 */
static int one_round(struct bench *b, int i)
{
	struct msg rep;
	double t, t0;
	int ret;

	trace("round %d\n", i);
	ret = call(b, b->owner, OP_NOP, 1 - b->owner, 0, &rep, &t);
	if (ret)
		return fail("request", ret);
	put(b, S_SR, i, t);
	ret = write8(&b->cl, b->owner, &t);
	if (ret)
		return fail("write", ret);
	put(b, S_WRITE, i, t);

	ret = timed_switch(b, i, OP_MODQP, S_MODQP, "modify_qp switch");
	if (!ret)
		ret = revoked_reconnects(b, i);
	if (ret)
		return ret;

	ret = timed_switch(b, i, OP_CYCLE, S_CYCLE, "QP cycle switch");
	if (ret)
		return ret;
	/* Its next request, in the next round, proves the re-sync. */
	t0 = now_us();
	ret = client_resync(&b->cl, 1 - b->owner);
	put(b, S_RESYNC, i, now_us() - t0);
	if (ret)
		return fail("QP re-sync", ret);

	/* The permission moves from the QPs to the MRs, and back. */
	ret = call(b, b->owner, OP_OWNER, 1 - b->owner, MECH_MR, &rep, NULL);
	if (ret)
		return fail("MR setup", ret);
	ret = timed_switch(b, i, OP_MR, S_MR, "dereg+reg switch");
	if (!ret && b->rereg)
		ret = timed_switch(b, i, OP_REREG, S_REREG, "rereg_mr switch");
	if (ret)
		return ret;
	ret = call(b, b->owner, OP_OWNER, 1 - b->owner, MECH_QP, &rep, NULL);
	return ret ? fail("QP setup", ret) : 0;
}

/*
 * Does ibv_rereg_mr work here? Asked once, on the first region. Where the
 * device says no, that is the result, and the MRs are as they were
 * (mh_rereg() replaced one the call spoilt).
 */
static int probe_rereg(struct bench *b)
{
	struct msg req = { .op = OP_REREG, .grant = 1 - b->owner,
			   .revoke = b->owner }, rep;
	int ret;

	ret = request(&b->cl, req.grant, &req, &rep, NULL);
	if (ret)
		return fail("rereg request", ret);
	if (rep.status) {
		b->rereg_err = -rep.status;
		b->rereg_code = rep.arg;
		return 0;
	}
	b->rereg = true;
	b->owner = req.grant;
	return 0;
}

static int run_size(struct bench *b, uint64_t size, bool first)
{
	struct msg rep;
	int w, i, ret;

	trace("region %s\n", b->size);
	ret = call(b, b->owner, OP_REGION, 1 - b->owner, size, &rep, NULL);
	if (ret)
		return fail("region setup", ret);
	/* Every writer learns the region's address and its key. */
	for (w = 0; w < NW; w++) {
		ret = call(b, w, OP_NOP, 1 - w, 0, &rep, NULL);
		if (ret)
			return fail("request", ret);
	}
	if (first) {
		ret = call(b, b->owner, OP_OWNER, 1 - b->owner, MECH_MR, &rep,
			   NULL);
		if (!ret)
			ret = probe_rereg(b);
		if (ret)
			return ret;
	}
	ret = call(b, b->owner, OP_OWNER, 1 - b->owner, MECH_QP, &rep, NULL);
	if (ret)
		return fail("QP setup", ret);
	for (i = 0; i < WARMUP + b->n; i++) {
		ret = one_round(b, i);
		if (ret)
			return ret;
	}
	/* The last re-synced connection has not carried a request yet. */
	ret = call(b, 1 - b->owner, OP_NOP, b->owner, 0, &rep, NULL);
	if (ret)
		return fail("request after QP re-sync", ret);

	row(b, "send/recv RTT (request, no change)", S_SR);
	row(b, "8 B write RTT", S_WRITE);
	switch_rows(b, "modify_qp", S_MODQP, "modify_qp revoke+grant (local)",
		    "modify_qp revoke+grant + RTT");
	row(b, "revoked writer: reconnect after refused write (rdma_cm)",
	    S_RECONNECT);
	switch_rows(b, "QP cycle", S_CYCLE, "QP cycle revoke + grant (local)",
		    "QP cycle revoke + grant + RTT");
	row(b, "revoked writer: QP re-sync (own cycle)", S_RESYNC);
	switch_rows(b, "dereg+reg", S_MR, "dereg+reg revoke+grant (local)",
		    "dereg+reg revoke+grant + RTT");
	if (b->rereg)
		switch_rows(b, "rereg_mr", S_REREG,
			    "rereg_mr revoke+grant (local)",
			    "rereg_mr revoke+grant + RTT");
	else
		printf("| rereg_mr revoke+grant + RTT | %s | - | unsupported (%s) | - | 0 |\n",
		       b->size, strerrorname_np(b->rereg_err) ?: "?");
	fflush(stdout);
	return 0;
}

/* The guest, in one line: the figures only mean something with it. */
static void print_machine(void)
{
	char thp[128] = "unknown", *l, *r;
	struct utsname u;
	FILE *f;

	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (fgets(thp, sizeof(thp), f)) {
			l = strchr(thp, '[');
			r = l ? strchr(l, ']') : NULL;
			if (l && r) {
				*r = '\0';
				memmove(thp, l + 1, r - l);
			}
		}
		fclose(f);
	}
	uname(&u);
	printf("Machine: Linux %s %s, %ld CPUs online, transparent huge pages %s.\n\n",
	       u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN),
	       strtok(thp, "\n"));
}

/*
 * The memory host's thread started (*@running: it has to be stopped),
 * both clients connected to it.
 */
static int start(struct memhost *mh, pthread_t *th, struct bench *b,
		 const char *host, bool *running)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	int w, ret;

	ret = memhost_init(mh, host);
	if (ret)
		return fail("memory host", ret);
	ret = -pthread_create(th, NULL, memhost_main, mh);
	if (ret) {
		memhost_fini(mh);
		return fail("memory host thread", ret);
	}
	*running = true;
	if (rdma_getaddrinfo(host, PORT, &hints, &b->cl.res))
		return fail("rdma_getaddrinfo", -EADDRNOTAVAIL);
	for (w = 0; w < NW; w++) {
		ret = client_connect(&b->cl, w);
		if (ret)
			return fail("connect", ret);
	}
	return 0;
}

static void report_head(const struct bench *b, const struct memhost *mh,
			const char *dev)
{
	printf("# Userspace permission switches, one run on %s\n\n", dev);
	printf("Microseconds. Every mechanism is sampled once per round, in turns, %d rounds after %d warm-up, so that a slow spell of the machine weighs on all alike. A switch takes write from one writer and gives it to the other (a leader change). \"+ RTT\" rows are client-observed: the requester's SEND, the memory host's change, its reply (the requester spins 1 ms, then sleeps on the completion channel, as libsacred does; the memory host thread %s). \"(local)\" rows are the memory host's own time for the change. sacred's own switch is measured by bench/permswitch (results/permswitch.md); results/report.md puts the two side by side.\n\n",
	       b->n, WARMUP,
	       mh->spin ? "polls 1 ms, then sleeps on completion events (-p)" :
			  "sleeps on completion events");
	print_machine();
	printf("| operation | region | min | median | p99 | n |\n");
	printf("|---|---|---|---|---|---|\n");
}

/* Every size of the comma list @sizes, in order. */
static int run_sizes(struct bench *b, const char *sizes)
{
	char *list = strdup(sizes), *tok;
	int ret = 0;

	if (!list)
		return -ENOMEM;
	for (tok = strtok(list, ","); tok && !ret; tok = strtok(NULL, ",")) {
		format_size(parse_size(tok), b->size, sizeof(b->size));
		ret = run_size(b, parse_size(tok), tok == list);
	}
	free(list);
	return ret;
}

static void report_tail(const struct bench *b)
{
	int i;

	printf("\n## Checks\n\n");
	printf("- Writes by a revoked writer after a modify_qp revoke: %d, %d refused by the QP's access flags (remote invalid request), %d otherwise, %d landed.\n",
	       b->revoked_writes, b->refused_flags, b->refused_other,
	       b->revoked_writes - b->refused_flags - b->refused_other);
	printf("- Every grant was followed by a write of the new writer that completed; every QP re-sync by a request on the re-synced connection.\n");
	if (b->rereg_err)
		printf("- ibv_rereg_mr(IBV_REREG_MR_CHANGE_ACCESS): %s (%s), return code %lld.\n",
		       strerrorname_np(b->rereg_err) ?: "?",
		       strerror(b->rereg_err), (long long)b->rereg_code);

	printf("\n## Where a switch + RTT goes\n\n");
	printf("Medians in microseconds: the request until the memory host thread runs with it, the change, the reply until the requester has it (the two threads read one clock).\n\n");
	printf("| mechanism | region | request | change | reply |\n|---|---|---|---|---|\n");
	for (i = 0; i < b->nlegs; i++)
		printf("| %s | %s | %.1f | %.1f | %.1f |\n", b->legs[i].mech,
		       b->legs[i].size, b->legs[i].in, b->legs[i].change,
		       b->legs[i].out);
}

int main(int argc, char **argv)
{
	const char *sizes = "4k,64k,1m,16m,256m", *host;
	static struct memhost mh;
	static struct bench b;
	int n = 200, i, ret = 0;
	const struct bench_opt opts[] = {
		BENCH_INT('n', "[-n SAMPLES]", &n),
		BENCH_STR('s', "[-s SIZES]", &sizes),
		BENCH_FLAG('p', "[-p]", &mh.spin, true),
		BENCH_FLAG('v', "[-v]", &verbose, true),
	};
	bool running = false;
	struct msg rep;
	pthread_t th;

	bench_args("userswitch", argc, argv, opts, 4);
	if (n < 10 || n > MAXN)
		bench_exit(2, "-n between 10 and %d", MAXN);
	host = getenv("SACRED_BENCH_ADDR") ?: "192.0.2.1";
	b.n = n;
	for (i = 0; i < NSERIES && !ret; i++) {
		b.v[i] = calloc(n, sizeof(double));
		if (!b.v[i])
			ret = -ENOMEM;
	}
	if (ret)
		goto out_free;
	ret = start(&mh, &th, &b, host, &running);
	if (!ret) {
		report_head(&b, &mh, bench_dev());
		ret = run_sizes(&b, sizes);
	}
	if (!ret) {
		report_tail(&b);
		ret = call(&b, b.owner, OP_QUIT, 1 - b.owner, 0, &rep, NULL);
		if (ret)
			fail("quit", ret);
	}
	if (running) {
		atomic_store(&mh.stop, true);
		pthread_join(th, NULL);
		client_fini(&b.cl);
		memhost_fini(&mh);
	}
out_free:
	for (i = 0; i < NSERIES; i++)
		free(b.v[i]);
	return ret || mh.err ? 1 : 0;
}
