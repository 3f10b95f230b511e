// SPDX-License-Identifier: GPL-2.0
/*
 * permswitch - what a permission switch costs the process that asks for
 * it, next to the floor it is measured against, in one run on one rxe
 * device.
 *
 *   send/recv RTT   32-byte SEND, echoed by a userspace peer, back to back;
 *                   both sides spin 1 ms for a completion, then sleep, as
 *                   libsacred does
 *   write RTT       8-byte RDMA WRITE, post to completion (libsacred)
 *   attach          a request to the instance and its reply: the kernel's
 *                   request path without a change
 *   grant           changePermission with nobody to revoke (the process
 *                   flips its own access: invalidate + register)
 *   revoke+grant    changePermission that takes write from a connected
 *                   writer: invalidate on its QP, fence it, register the
 *                   requester, reply - the PMP leader change
 *   reconnect       what the fenced writer pays afterwards: a new
 *                   connection and the re-attach of its region
 *
 * for region sizes from 4 KiB to 256 MiB, and the same attach, own grant
 * and revoke+grant answered by a userspace reference server that takes
 * the same strict steps with busy polling (below). revoke+grant is
 * sampled once per size in turns (every region and its two connections
 * open at once), sacred's and the reference's one after the other, so
 * that a slow spell of a shared host weighs on every size and on both
 * alike. Prints a Markdown report: min, median, p99 and count in
 * microseconds, a table per size, and the ratios of issue 27's targets
 * (revoke+grant within 3.0 send/recv RTTs median and 2.5 minimum, attach
 * 1.5, own grant 2.0, flat within +-20% across sizes, within 1.2x of the
 * reference), and revoke+grant against own grant (minimums over all
 * sizes: what the revocation adds to a change); bench/targets holds the
 * targets. The switch's regression guard is bench/abswitch, which runs
 * this program with two modules in turns.
 *
 * Run inside the VM rig: make bench. Options: -n SAMPLES (default 200),
 * -s SIZES (comma list, default 4k,64k,1m,16m,256m), -w (the reference
 * server waits as libsacred does - spin 1 ms, then sleep - instead of
 * busy polling).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "sacred.h"
#include "bench.h"

#define ECHO_PORT	"7690"
#define MEM_PORT	7691
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define MAXN		100000
#define MAX_SIZES	16
/* How long a wait for a completion spins before it sleeps (poll_one()). */
#define SPIN_US		1000

/*
 * Wait for one completion the way libsacred does: spin for up to 1 ms,
 * then sleep on the completion channel. Spinning forever on a 2-vCPU TCG
 * guest starves the echo thread and rxe's tasks.
 */
static int poll_one(struct rdma_cm_id *id, bool recv, struct ibv_wc *wc)
{
	struct ibv_cq *cq = recv ? id->recv_cq : id->send_cq;
	double deadline = now_us() + SPIN_US;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 || wc->status != IBV_WC_SUCCESS ? -1 : 0;
	} while (now_us() < deadline);
	n = recv ? rdma_get_recv_comp(id, wc) : rdma_get_send_comp(id, wc);
	return n <= 0 || wc->status != IBV_WC_SUCCESS ? -1 : 0;
}

/* ------------------------------------------------ send/recv echo floor */

struct echo {
	const char *host;
	int n;
	int ready;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *echo_server(void *arg)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct rdma_cm_id *listen_id, *id;
	struct echo *e = arg;
	static char buf[64];
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int i;

	if (rdma_getaddrinfo(e->host, ECHO_PORT, &hints, &res) ||
	    rdma_create_ep(&listen_id, res, NULL, &attr) ||
	    rdma_listen(listen_id, 1))
		goto fail;
	rdma_freeaddrinfo(res);
	pthread_mutex_lock(&e->lock);
	e->ready = 1;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);

	if (rdma_get_request(listen_id, &id))
		goto fail;
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (!mr || rdma_post_recv(id, NULL, buf, 32, mr) ||
	    rdma_accept(id, NULL))
		goto fail;
	/*
	 * The echo side waits as the client does: spin up to 1 ms, then
	 * sleep. Back to back, each SEND finds it still spinning, as in
	 * perftest's ib_send_lat. An echo that only sleeps on completion
	 * events (or one sampled between switches, always asleep by then)
	 * measures how fast the TCG guest wakes a thread - 0.2 to 12 ms
	 * seen - not the device; one that spins for ever starves rxe's
	 * tasks.
	 */
	for (i = 0; i < e->n; i++) {
		if (poll_one(id, true, &wc) ||
		    rdma_post_recv(id, NULL, buf, 32, mr) ||
		    rdma_post_send(id, NULL, buf, 32, mr, 0) ||
		    poll_one(id, false, &wc))
			goto fail;
	}
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(listen_id);
	return NULL;
fail:
	perror("echo server");
	exit(1);
}

static struct stats bench_sendrecv(const char *host, int n, double *v)
{
	struct echo e = { .host = host, .n = n + 10,
			  .lock = PTHREAD_MUTEX_INITIALIZER,
			  .cond = PTHREAD_COND_INITIALIZER };
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	static char buf[64], rbuf[64];
	struct ibv_mr *mr, *rmr;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	pthread_t th;
	int i;

	pthread_create(&th, NULL, echo_server, &e);
	pthread_mutex_lock(&e.lock);
	while (!e.ready)
		pthread_cond_wait(&e.cond, &e.lock);
	pthread_mutex_unlock(&e.lock);

	if (rdma_getaddrinfo(host, ECHO_PORT, &hints, &res) ||
	    rdma_create_ep(&id, res, NULL, &attr))
		goto fail;
	rdma_freeaddrinfo(res);
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	rmr = rdma_reg_msgs(id, rbuf, sizeof(rbuf));
	if (!mr || !rmr || rdma_post_recv(id, NULL, rbuf, 32, rmr) ||
	    rdma_connect(id, NULL))
		goto fail;
	for (i = 0; i < n + 10; i++) {
		double t0 = now_us();

		if (rdma_post_send(id, NULL, buf, 32, mr, 0) ||
		    poll_one(id, true, &wc) ||
		    poll_one(id, false, &wc) ||
		    rdma_post_recv(id, NULL, rbuf, 32, rmr))
			goto fail;
		if (i >= 10)	/* warm-up */
			v[i - 10] = now_us() - t0;
	}
	pthread_join(th, NULL);
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_dereg_mr(rmr);
	rdma_destroy_ep(id);
	return summarize(v, n);
fail:
	perror("send/recv client");
	exit(1);
}

/* ------------------------------------------ the userspace reference */

/*
 * The reference server: the strict switch done by a userspace process on
 * the memory side, with the steps sacred.ko takes (kmod/perm.c, "The
 * revoke guarantee"), so that what the kernel adds can be told from what
 * the steps cost on this device. A thread owns one copy of every region
 * and one RC connection per writer (rdma_cm on REF_PORT, each writer in a
 * protection domain of its own, as sacred gives each peer one), and
 * busy-polls one CQ that all its QPs share. A writer's access to a
 * region is a type 2 memory window over the region's MR in the writer's
 * PD, bound on the writer's QP: the user verbs have no fast registration
 * of an MR, and a window's bind is the userspace form of REG_MR (a new
 * key each time, posted on the QP), its invalidation that of LOCAL_INV.
 *
 *   REF_ATTACH  the reply alone: the request path, no change
 *   REF_OWN     the requester's own access flipped: LOCAL_INV of its
 *               window and a bind with the new access, chained on its QP,
 *               waited for; then the reply
 *   REF_SWITCH  write taken from writer V for the requester: LOCAL_INV of
 *               V's window on V's QP, waited for; the requester's bind
 *               posted on its QP; the fence of V: a marker receive posted
 *               on V's QP, the QP to ERR, the marker's flush waited for;
 *               the bind's completion waited for; the reply with the new
 *               key
 *   REF_RESYNC  untimed: V's fenced QP cycled back to RTS (V cycles its
 *               side too), its receives posted again
 *
 * The thread spins only while a reference sample is taken (ref_run()):
 * parked, it leaves the guest's two vCPUs to sacred's samples.
 */
#define REF_PORT	"7693"
#define REF_NW		2	/* writers A and B */
#define REF_NRECV	4	/* receives kept posted per QP */
#define REF_CQ_DEPTH	256
#define REF_MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND)
#define REF_QP_ACCESS	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

enum ref_op { REF_ATTACH, REF_OWN, REF_SWITCH, REF_RESYNC, REF_QUIT };

/* What a work request's completion is for: wr_id = w << 16 | kind << 8 | slot. */
enum ref_wr { WR_RECV, WR_MARKER, WR_INV, WR_BIND, WR_REPLY };

struct ref_msg {
	uint32_t op;
	uint32_t region;	/* index of the region (one per size) */
	uint32_t access;	/* REF_OWN: the window's new remote access */
	uint32_t victim;	/* REF_SWITCH, REF_RESYNC: writer V */
	int32_t status;		/* reply: 0 or -errno */
	uint32_t rkey;		/* reply: the requester's key, 0 if none */
	uint64_t addr;		/* reply: the region's address */
};

struct ref_writer {
	struct rdma_cm_id *id;
	struct qp_attrs qa;
	struct ibv_pd *pd;
	struct ref_msg msgs[REF_NRECV + 1];	/* receives, then the reply */
	struct ibv_mr *msg_mr;
	struct ibv_mr *mr[MAX_SIZES];	/* the region, in this writer's PD */
	struct ibv_mw *mw[MAX_SIZES];	/* its window, bound while granted */
	uint32_t rkey[MAX_SIZES];	/* the window's key, 0 when unbound */
};

struct ref_server {
	struct rdma_cm_id *listen;
	struct ibv_cq *cq;
	struct ref_writer w[REF_NW];
	void *region[MAX_SIZES];
	size_t size[MAX_SIZES];
	int nregions;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_int run;		/* 1: spin; 0: park */
	atomic_int spinning;	/* the thread is in its polling loop */
	bool nap;		/* -w: sleep after 1 ms without completions */
	double busy_at;		/* the last completion, or the last wake-up */
	struct ibv_comp_channel *ch;
	int err;
};

static int ref_post_recv(struct ref_writer *rw, int w, int slot)
{
	if (rdma_post_recv(rw->id, (void *)(uintptr_t)(w << 16 | WR_RECV << 8 | slot),
			   &rw->msgs[slot], sizeof(struct ref_msg), rw->msg_mr))
		return -errno;
	return 0;
}

static int ref_post_recvs(struct ref_writer *rw, int w)
{
	int slot, ret;

	for (slot = 0; slot < REF_NRECV; slot++) {
		ret = ref_post_recv(rw, w, slot);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * One poll of the server's CQ; when it is empty, the thread yields.
 * rxe moves packets in softirq context, and what a syscall raises is
 * often left to ksoftirqd: a thread that spins in userspace without ever
 * yielding keeps ksoftirqd off its CPU until the next tick (4 ms), and
 * its requests with it.
 */
static int ref_poll(struct ref_server *srv, struct ibv_wc *wc)
{
	struct pollfd pfd = { .fd = srv->ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ctx;
	int n = ibv_poll_cq(srv->cq, 1, wc);

	if (n) {
		srv->busy_at = now_us();
		return n;
	}
	if (!srv->nap || now_us() < srv->busy_at + 1000) {
		sched_yield();
		return 0;
	}
	/* -w: after 1 ms without a completion, sleep (as libsacred). */
	if (ibv_req_notify_cq(srv->cq, 0))
		return -1;
	n = ibv_poll_cq(srv->cq, 1, wc);
	if (n)
		return n;
	if (poll(&pfd, 1, 10) == 1 && !ibv_get_cq_event(srv->ch, &ev_cq, &ctx))
		ibv_ack_cq_events(ev_cq, 1);
	srv->busy_at = now_us();
	return 0;
}

/*
 * Spin on the CQ until the completions of every wr_id in @want (up to
 * two) are in; their statuses are judged here. Replies' completions and
 * flushes of a fenced QP's receives are passed over; a request cannot
 * come while one is served (a writer waits for its reply).
 */
static int ref_wait(struct ref_server *srv, const uint64_t *want, int n)
{
	bool seen[2] = { n < 1, n < 2 };
	struct ibv_wc wc;
	int i, got;

	while (!seen[0] || !seen[1]) {
		got = ref_poll(srv, &wc);
		if (got < 0)
			return -EIO;
		if (!got)
			continue;
		for (i = 0; i < n; i++) {
			if (wc.wr_id != want[i])
				continue;
			/* The marker is there to be flushed. */
			if (wc.status != IBV_WC_SUCCESS &&
			    ((wc.wr_id >> 8) & 0xff) != WR_MARKER) {
				fprintf(stderr, "permswitch: reference: work request %#llx: %s\n",
					(unsigned long long)wc.wr_id,
					ibv_wc_status_str(wc.status));
				return -EIO;
			}
			seen[i] = true;
		}
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV)
			return -EPROTO;
	}
	return 0;
}

/* Post LOCAL_INV of writer w's window over region r, then @next if any. */
static void ref_inv_wr(struct ref_writer *rw, int w, int r,
		       struct ibv_send_wr *wr, struct ibv_send_wr *next)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = w << 16 | WR_INV << 8;
	wr->opcode = IBV_WR_LOCAL_INV;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->invalidate_rkey = rw->rkey[r];
	wr->next = next;
}

/* A bind of writer w's window over region r with @access: a new key. */
static void ref_bind_wr(struct ref_server *srv, int w, int r, int access,
			struct ibv_send_wr *wr)
{
	struct ref_writer *rw = &srv->w[w];

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = w << 16 | WR_BIND << 8;
	wr->opcode = IBV_WR_BIND_MW;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->bind_mw.mw = rw->mw[r];
	wr->bind_mw.rkey = ibv_inc_rkey(rw->mw[r]->rkey);
	wr->bind_mw.bind_info.mr = rw->mr[r];
	wr->bind_mw.bind_info.addr = (uintptr_t)srv->region[r];
	wr->bind_mw.bind_info.length = srv->size[r];
	wr->bind_mw.bind_info.mw_access_flags = access;
}

/* After a bind completed: the window's key is the one it was bound with. */
static void ref_bound(struct ref_server *srv, int w, int r,
		      const struct ibv_send_wr *bind)
{
	srv->w[w].mw[r]->rkey = bind->bind_mw.rkey;
	srv->w[w].rkey[r] = bind->bind_mw.rkey;
}

/* REF_OWN: invalidate (if bound) and bind again, chained on g's QP. */
static int ref_own(struct ref_server *srv, int g, int r, int access)
{
	struct ref_writer *rw = &srv->w[g];
	struct ibv_send_wr inv, bind, *bad;
	uint64_t want[2];
	int n = 0, ret;

	ref_bind_wr(srv, g, r, access, &bind);
	ref_inv_wr(rw, g, r, &inv, &bind);
	if (rw->rkey[r])
		want[n++] = inv.wr_id;
	want[n++] = bind.wr_id;
	if (ibv_post_send(rw->id->qp, rw->rkey[r] ? &inv : &bind, &bad))
		return -EIO;
	rw->rkey[r] = 0;
	ret = ref_wait(srv, want, n);
	if (!ret)
		ref_bound(srv, g, r, &bind);
	return ret;
}

/* REF_SWITCH: write taken from v for g, the strict steps (above). */
static int ref_switch(struct ref_server *srv, int g, int v, int r)
{
	struct ref_writer *gw = &srv->w[g], *vw = &srv->w[v];
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_send_wr inv, ginv, bind, *bad;
	struct ibv_recv_wr marker = { .wr_id = v << 16 | WR_MARKER << 8 };
	struct ibv_recv_wr *rbad;
	uint64_t want[2];
	int ret;

	if (vw->rkey[r]) {
		ref_inv_wr(vw, v, r, &inv, NULL);
		if (ibv_post_send(vw->id->qp, &inv, &bad))
			return -EIO;
		vw->rkey[r] = 0;
		want[0] = inv.wr_id;
		ret = ref_wait(srv, want, 1);
		if (ret)
			return ret;
	}
	ref_bind_wr(srv, g, r, REF_QP_ACCESS, &bind);
	ref_inv_wr(gw, g, r, &ginv, &bind);
	if (ibv_post_send(gw->id->qp, gw->rkey[r] ? &ginv : &bind, &bad))
		return -EIO;
	gw->rkey[r] = 0;
	if (ibv_post_recv(vw->id->qp, &marker, &rbad) ||
	    ibv_modify_qp(vw->id->qp, &err, IBV_QP_STATE))
		return -EIO;
	want[0] = marker.wr_id;
	want[1] = bind.wr_id;
	ret = ref_wait(srv, want, 2);
	if (!ret)
		ref_bound(srv, g, r, &bind);
	return ret;
}

/* Serve one request of writer w: 0, 1 after REF_QUIT, or -errno. */
static int ref_handle(struct ref_server *srv, int w, const struct ref_msg *req)
{
	struct ref_writer *rw = &srv->w[w];
	struct ref_msg *rep = &rw->msgs[REF_NRECV];
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	int v = req->victim, r = req->region, ret = 0;

	if (r >= srv->nregions || v >= REF_NW ||
	    (req->op == REF_SWITCH && v == w) ||
	    (req->op == REF_OWN && req->access & ~REF_QP_ACCESS)) {
		ret = -EINVAL;
	} else {
		switch (req->op) {
		case REF_ATTACH:
		case REF_QUIT:
			break;
		case REF_OWN:
			ret = ref_own(srv, w, r, req->access);
			break;
		case REF_SWITCH:
			ret = ref_switch(srv, w, v, r);
			break;
		case REF_RESYNC:
			ret = qp_cycle(srv->w[v].id->qp, &srv->w[v].qa,
				       REF_QP_ACCESS);
			if (!ret)
				ret = ref_post_recvs(&srv->w[v], v);
			break;
		default:
			ret = -EINVAL;
		}
	}
	memset(rep, 0, sizeof(*rep));
	rep->op = req->op;
	rep->status = ret;
	if (r < srv->nregions) {
		rep->rkey = rw->rkey[r];
		rep->addr = (uintptr_t)srv->region[r];
	}
	sge.addr = (uintptr_t)rep;
	sge.length = sizeof(*rep);
	sge.lkey = rw->msg_mr->lkey;
	wr.wr_id = w << 16 | WR_REPLY << 8;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ibv_post_send(rw->id->qp, &wr, &bad))
		return -EIO;
	return req->op == REF_QUIT ? 1 : 0;
}

static int ref_serve(struct ref_server *srv)
{
	struct ref_msg req;
	struct ibv_wc wc;
	int w, slot, n, ret;

	for (;;) {
		if (!atomic_load(&srv->run)) {
			pthread_mutex_lock(&srv->lock);
			atomic_store(&srv->spinning, 0);
			while (!atomic_load(&srv->run))
				pthread_cond_wait(&srv->cond, &srv->lock);
			pthread_mutex_unlock(&srv->lock);
		}
		atomic_store(&srv->spinning, 1);
		n = ref_poll(srv, &wc);
		if (n < 0)
			return -EIO;
		/* Replies sent, and the flushes of a fenced QP. */
		if (!n || wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != IBV_WC_RECV)
			continue;
		w = wc.wr_id >> 16;
		slot = wc.wr_id & 0xff;
		if (w >= REF_NW || slot >= REF_NRECV ||
		    wc.byte_len != sizeof(req))
			return -EPROTO;
		req = srv->w[w].msgs[slot];
		ret = ref_post_recv(&srv->w[w], w, slot);
		if (!ret)
			ret = ref_handle(srv, w, &req);
		if (ret)
			return ret < 0 ? ret : 0;
	}
}

/* Accept writer w's connection: a QP in its PD on the shared CQ. */
static int ref_accept(struct ref_server *srv, int w)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = srv->cq,
		.recv_cq = srv->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = REF_NRECV + 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = { .qp_access_flags = REF_QP_ACCESS };
	struct ref_writer *rw = &srv->w[w];
	struct rdma_cm_id *id;
	int ret;

	if (rdma_get_request(srv->listen, &id))
		return -errno;
	if (rdma_create_qp(id, rw->pd, &attr)) {
		ret = -errno;
		goto err_id;
	}
	rw->id = id;
	ret = -ibv_modify_qp(id->qp, &a, IBV_QP_ACCESS_FLAGS);
	if (!ret)
		ret = ref_post_recvs(rw, w);
	if (!ret && rdma_accept(id, NULL))
		ret = -errno;
	if (!ret)
		ret = cache_attrs(id, &rw->qa);
	if (!ret)
		return 0;
	rw->id = NULL;
err_id:
	rdma_destroy_ep(id);
	return ret;
}

static void *ref_main(void *arg)
{
	struct ref_server *srv = arg;
	int w, ret = 0;

	for (w = 0; w < REF_NW && !ret; w++)
		ret = ref_accept(srv, w);
	if (!ret)
		ret = ref_serve(srv);
	srv->err = ret;
	if (ret)
		fprintf(stderr, "permswitch: reference server: %s\n",
			strerror(-ret));
	atomic_store(&srv->spinning, 0);
	return NULL;
}

static void ref_fini(struct ref_server *srv)
{
	int w, r;

	for (w = 0; w < REF_NW; w++) {
		struct ref_writer *rw = &srv->w[w];

		/* A bound window holds its QP: windows go first. */
		for (r = 0; r < srv->nregions; r++) {
			if (rw->mw[r])
				ibv_dealloc_mw(rw->mw[r]);
			if (rw->mr[r])
				ibv_dereg_mr(rw->mr[r]);
		}
		if (rw->id)
			rdma_destroy_ep(rw->id);
		if (rw->msg_mr)
			ibv_dereg_mr(rw->msg_mr);
		if (rw->pd)
			ibv_dealloc_pd(rw->pd);
	}
	for (r = 0; r < srv->nregions; r++)
		munmap(srv->region[r], srv->size[r]);
	if (srv->cq)
		ibv_destroy_cq(srv->cq);
	if (srv->ch)
		ibv_destroy_comp_channel(srv->ch);
	if (srv->listen)
		rdma_destroy_ep(srv->listen);
}

/*
 * Listen, make every region (faulted in: a bind should find its pages
 * pinned) with each writer's MR and window over it, and start the thread,
 * parked, that accepts the two writers and serves them.
 */
static int ref_init(struct ref_server *srv, const char *host,
		    const uint64_t *sizes, int nsizes)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_context *verbs;
	int w, r, ret;

	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->cond, NULL);
	if (rdma_getaddrinfo(host, REF_PORT, &hints, &res))
		return -EADDRNOTAVAIL;
	ret = rdma_create_ep(&srv->listen, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (ret) {
		srv->listen = NULL;
		return -errno;
	}
	if (rdma_listen(srv->listen, REF_NW)) {
		ret = -errno;
		goto err;
	}
	verbs = srv->listen->verbs;
	ret = -ENOMEM;
	srv->ch = ibv_create_comp_channel(verbs);
	if (!srv->ch)
		goto err;
	srv->cq = ibv_create_cq(verbs, REF_CQ_DEPTH, NULL, srv->ch, 0);
	if (!srv->cq)
		goto err;
	for (r = 0; r < nsizes; r++) {
		void *p = mmap(NULL, sizes[r], PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			goto err;
		memset(p, 0, sizes[r]);
		srv->region[r] = p;
		srv->size[r] = sizes[r];
		srv->nregions++;
	}
	for (w = 0; w < REF_NW; w++) {
		struct ref_writer *rw = &srv->w[w];

		rw->pd = ibv_alloc_pd(verbs);
		if (!rw->pd)
			goto err;
		rw->msg_mr = ibv_reg_mr(rw->pd, rw->msgs, sizeof(rw->msgs),
					IBV_ACCESS_LOCAL_WRITE);
		if (!rw->msg_mr)
			goto err;
		for (r = 0; r < nsizes; r++) {
			rw->mr[r] = ibv_reg_mr(rw->pd, srv->region[r],
					       sizes[r], REF_MR_ACCESS);
			if (!rw->mr[r])
				goto err;
			rw->mw[r] = ibv_alloc_mw(rw->pd, IBV_MW_TYPE_2);
			if (!rw->mw[r])
				goto err;
		}
	}
	ret = -pthread_create(&srv->thread, NULL, ref_main, srv);
	if (!ret)
		return 0;
err:
	ref_fini(srv);
	return ret;
}

/* Let the thread spin (1) or park it (0); spinning, wait until it does. */
static void ref_run(struct ref_server *srv, int run)
{
	pthread_mutex_lock(&srv->lock);
	atomic_store(&srv->run, run);
	pthread_cond_signal(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	while (run && !atomic_load(&srv->spinning) && !srv->err)
		sched_yield();
}

/* The writers' side: two connections, waiting as libsacred does. */
struct ref_client {
	struct rdma_cm_id *id[REF_NW];
	struct qp_attrs qa[REF_NW];
	struct ibv_mr *mr[REF_NW];
	struct {
		struct ref_msg send, recv;
		uint64_t word;
	} buf[REF_NW];
	struct ref_msg rep[REF_NW];	/* the last reply */
};

static int ref_connect(struct ref_client *cl, const char *host, int w)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	int ret;

	if (rdma_getaddrinfo(host, REF_PORT, &hints, &res))
		return -EADDRNOTAVAIL;
	ret = rdma_create_ep(&cl->id[w], res, NULL, &attr);
	rdma_freeaddrinfo(res);
	if (ret) {
		cl->id[w] = NULL;
		return -errno;
	}
	cl->mr[w] = rdma_reg_msgs(cl->id[w], &cl->buf[w], sizeof(cl->buf[w]));
	if (!cl->mr[w] ||
	    rdma_post_recv(cl->id[w], NULL, &cl->buf[w].recv,
			   sizeof(struct ref_msg), cl->mr[w]) ||
	    rdma_connect(cl->id[w], NULL))
		return -errno;
	return cache_attrs(cl->id[w], &cl->qa[w]);
}

static void ref_client_fini(struct ref_client *cl)
{
	int w;

	for (w = 0; w < REF_NW; w++) {
		if (cl->mr[w])
			rdma_dereg_mr(cl->mr[w]);
		if (cl->id[w])
			rdma_destroy_ep(cl->id[w]);
	}
}

/*
 * Writer w's request and the reply, timed from the post of the SEND to
 * both completions (as sacred_change_perm() is); the server's verdict is
 * returned, its reply kept in cl->rep[w].
 */
static int ref_call(struct ref_client *cl, int w, uint32_t op, int region,
		    uint32_t access, int victim, double *us)
{
	struct rdma_cm_id *id = cl->id[w];
	struct ibv_wc wc;
	double t0;

	cl->buf[w].send = (struct ref_msg){ .op = op, .region = region,
					    .access = access,
					    .victim = victim };
	t0 = now_us();
	if (rdma_post_send(id, NULL, &cl->buf[w].send, sizeof(struct ref_msg),
			   cl->mr[w], 0) ||
	    poll_one(id, true, &wc) || poll_one(id, false, &wc)) {
		fprintf(stderr, "permswitch: reference: writer %d, request %u: %s\n",
			w, op, ibv_wc_status_str(wc.status));
		return -EIO;
	}
	if (us)
		*us = now_us() - t0;
	cl->rep[w] = cl->buf[w].recv;
	if (rdma_post_recv(id, NULL, &cl->buf[w].recv, sizeof(struct ref_msg),
			   cl->mr[w]))
		return -errno;
	return cl->rep[w].status;
}

/* An 8-byte RDMA WRITE by writer w with its last key; 0 or -EIO. */
static int ref_write(struct ref_client *cl, int w)
{
	struct ibv_wc wc;

	cl->buf[w].word++;
	if (rdma_post_write(cl->id[w], NULL, &cl->buf[w].word,
			    sizeof(uint64_t), cl->mr[w], 0,
			    cl->rep[w].addr + 8 * w, cl->rep[w].rkey))
		return -errno;
	return poll_one(cl->id[w], false, &wc) ? -EIO : 0;
}

/*
 * After its fence, writer v cycles its own QP, drops the completions its
 * QP's error left (a refused write, its receive flushed), and asks
 * (through the other writer's connection) for the server's side to be
 * cycled.
 */
static int ref_resync(struct ref_client *cl, int v, int region)
{
	struct ibv_wc wc;
	int ret;

	ret = qp_cycle(cl->id[v]->qp, &cl->qa[v],
		       cl->qa[v].init.qp_access_flags);
	if (ret)
		return ret;
	while (ibv_poll_cq(cl->id[v]->recv_cq, 1, &wc) > 0 ||
	       ibv_poll_cq(cl->id[v]->send_cq, 1, &wc) > 0)
		;
	if (rdma_post_recv(cl->id[v], NULL, &cl->buf[v].recv,
			   sizeof(struct ref_msg), cl->mr[v]))
		return -errno;
	return ref_call(cl, 1 - v, REF_RESYNC, region, 0, v, NULL);
}

/* ------------------------------------------------------ sacred itself */

static int ask(struct sacred_conn *c, uint32_t region, uint32_t access)
{
	struct sacred_perm_req req = { .region_id = region, .access = access };
	struct sacred_perm_result res;

	return sacred_change_perm(c, &req, &res);
}

static void ref_die(const char *what, int ret)
{
	fprintf(stderr, "permswitch: reference: %s: %s\n", what,
		strerror(ret < 0 ? -ret : EIO));
	exit(1);
}

/* Go on if @ret is 0, else die: "reference: @what". */
static void ref_ok(int ret, const char *what)
{
	if (ret)
		ref_die(what, ret);
}

/*
 * One reference switch of region k, as sacred's is sampled: B takes write
 * from A (fencing A) and writes; A's QP is cycled back; then A takes
 * write from B, timed (B is fenced), writes with the new key, and B's QP
 * is cycled back. With @check, B then writes with its revoked key, which
 * must fail (and B is cycled back again).
 */
static double ref_sample(struct ref_client *cl, int k, bool check)
{
	double t;

	ref_ok(ref_call(cl, 1, REF_SWITCH, k, 0, 0, NULL), "B takes write");
	ref_ok(ref_write(cl, 1), "B's write");
	ref_ok(ref_resync(cl, 0, k), "A's resync");
	ref_ok(ref_call(cl, 0, REF_SWITCH, k, 0, 1, &t), "revoke+grant");
	ref_ok(ref_write(cl, 0), "write after the grant");
	ref_ok(ref_resync(cl, 1, k), "resync");
	if (check) {
		if (!ref_write(cl, 1))
			ref_die("a write with the revoked key took effect",
				-EPERM);
		ref_ok(ref_resync(cl, 1, k), "resync after the refused write");
	}
	return t;
}

/* The larger of @x and @a / @b: the worst ratio so far. */
static double worse(double x, double a, double b)
{
	return b > 0 && a / b > x ? a / b : x;
}

/* Everything main() sets up and measures, per region size @k. */
struct run {
	int n, nsizes;
	const char *dev, *host;
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info m;
	struct ref_server srv;
	struct ref_client cl;
	uint64_t size_b[MAX_SIZES];
	char names[MAX_SIZES][32];
	uint32_t rid[MAX_SIZES];
	struct sacred_conn *ca[MAX_SIZES], *cb[MAX_SIZES];
	double v[MAXN], rg[MAX_SIZES][MAXN], rc[MAX_SIZES][MAXN];
	double ref_rg[MAX_SIZES][MAXN];
	struct stats floor_sr;
	struct stats attach[MAX_SIZES], grant[MAX_SIZES];
	struct stats rattach[MAX_SIZES], rgrant[MAX_SIZES];
	struct stats sw[MAX_SIZES], ref[MAX_SIZES];
};

/* The command line: -n SAMPLES, -s SIZES, -w. */
static void parse_args(struct run *r, int argc, char **argv)
{
	const char *sizes = "4k,64k,1m,16m,256m";
	const struct bench_opt opts[] = {
		BENCH_INT('n', "[-n SAMPLES]", &r->n),
		BENCH_STR('s', "[-s SIZES]", &sizes),
		BENCH_FLAG('w', "[-w]", &r->srv.nap, true),
	};
	char *list, *tok;

	r->n = 200;
	bench_args("permswitch", argc, argv, opts, 3);
	if (r->n < 10 || r->n > MAXN)
		bench_exit(2, "-n between 10 and %d", MAXN);
	list = strdup(sizes);
	if (!list)
		exit(1);
	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		if (r->nsizes == MAX_SIZES)
			bench_exit(2, "at most %d sizes", MAX_SIZES);
		r->size_b[r->nsizes] = parse_size(tok);
		if (r->size_b[r->nsizes] < 4096 ||
		    r->size_b[r->nsizes] > 1ULL << 30)
			bench_exit(2, "%s: sizes from 4k to 1g", tok);
		format_size(r->size_b[r->nsizes], r->names[r->nsizes],
			    sizeof(r->names[0]));
		r->nsizes++;
	}
	free(list);
	if (!r->nsizes)
		exit(2);
}

/*
 * Region @k of size r->size_b[k], exclusive-writer, and its two processes
 * connected, a holding write. Every size's pair stays connected until the
 * interleaved switch: process ids of its own (an instance takes one
 * connection per process).
 */
static void size_setup(struct run *r, int k)
{
	struct sacred_acl_entry acl[] = {
		{ .process_id = 1 + 2 * k, .access = RW },
		{ .process_id = 2 + 2 * k, .access = RW },
	};
	struct sacred_region_info ri;
	int ret;

	ret = sacred_region_new(r->ctrl, r->m.id, SACRED_REGION_ID_ANY,
				r->size_b[k], SACRED_POLICY_EXCLUSIVE_WRITER,
				&ri);
	if (ret)
		die("region add", ret);
	ret = sacred_region_set_acl(r->ctrl, r->m.id, ri.id, acl, 2);
	if (ret)
		die("region set acl", ret);
	ret = bench_conn_open(&r->m.addr, acl[0].process_id, ri.id,
			      &r->ca[k]);
	if (!ret)
		ret = bench_conn_open(&r->m.addr, acl[1].process_id, ri.id,
				      &r->cb[k]);
	if (ret)
		die("connect", ret);
	ret = ask(r->ca[k], ri.id, RW);
	if (ret)
		die("take write", ret);
	r->rid[k] = ri.id;
}

/* The rows sampled one size at a time; one sample of each, microseconds. */
enum size_row { WRITE, ATTACH, GRANT, REF_ATTACH_ROW, REF_GRANT_ROW };

static double sample_one(struct run *r, int k, enum size_row what, int i)
{
	struct sacred_region_attr ra;
	uint64_t word = 1;
	double t0 = now_us(), t = 0;
	int ret;

	switch (what) {
	case WRITE:
		ret = sacred_write(r->ca[k], r->rid[k], 0, &word, sizeof(word));
		if (ret)
			die("write", ret);
		break;
	case ATTACH:
		ret = sacred_attach(r->ca[k], r->rid[k], &ra);
		if (ret)
			die("attach", ret);
		break;
	case GRANT:
		ret = ask(r->ca[k], r->rid[k], i % 2 ? RW : SACRED_ACCESS_READ);
		if (ret)
			die("grant", ret);
		break;
	case REF_ATTACH_ROW:
		ret = ref_call(&r->cl, 0, REF_ATTACH, k, 0, 0, &t);
		if (ret)
			ref_die("attach", ret);
		return t;
	case REF_GRANT_ROW:
		ret = ref_call(&r->cl, 0, REF_OWN, k,
			       i % 2 ? REF_QP_ACCESS : IBV_ACCESS_REMOTE_READ,
			       0, &t);
		if (ret)
			ref_die("grant", ret);
		return t;
	}
	return now_us() - t0;
}

/* Row @what of size @k: 10 samples of warm-up, then r->n, summarized. */
static struct stats size_row(struct run *r, int k, enum size_row what,
			     const char *label)
{
	struct stats s;
	double t;
	int i;

	for (i = 0; i < r->n + 10; i++) {
		t = sample_one(r, k, what, i);
		if (i >= 10)
			r->v[i - 10] = t;
	}
	s = summarize(r->v, r->n);
	stats_row2(label, r->names[k], s);
	return s;
}

/* The rows of size @k that need no other size: the switch comes later. */
static void size_rows(struct run *r, int k)
{
	size_setup(r, k);
	size_row(r, k, WRITE, "8 B write RTT");
	r->attach[k] = size_row(r, k, ATTACH, "attach (request path)");
	r->grant[k] = size_row(r, k, GRANT, "grant (own access)");
	/* The reference's request path and own grant, spinning. */
	ref_run(&r->srv, 1);
	r->rattach[k] = size_row(r, k, REF_ATTACH_ROW,
				 "reference: attach (request path)");
	r->rgrant[k] = size_row(r, k, REF_GRANT_ROW,
				"reference: grant (own access)");
	ref_run(&r->srv, 0);
}

/*
 * Sample @i of the switch of size @k: b takes write (fencing a) and
 * writes; a reconnects; then a takes write away from b, timed: b is
 * fenced. Then the reference's sample of the same size (ref_sample()),
 * its server spinning only for it. The first 5 samples are warm-up.
 */
static void switch_sample(struct run *r, int k, int i)
{
	uint64_t word = 1;
	double t0, t;
	int ret;

	while (ask(r->cb[k], r->rid[k], RW) ||
	       sacred_write(r->cb[k], r->rid[k], 8, &word, sizeof(word)))
		if (sacred_conn_reconnect(r->cb[k]))
			usleep(1000);
	/* What the fenced writer pays: reconnect, re-attach. */
	t0 = now_us();
	ret = sacred_conn_reconnect(r->ca[k]);
	if (ret)
		die("reconnect", ret);
	if (i >= 5)
		r->rc[k][i - 5] = now_us() - t0;
	t0 = now_us();
	ret = ask(r->ca[k], r->rid[k], RW);
	if (ret)
		die("revoke+grant", ret);
	if (i >= 5)
		r->rg[k][i - 5] = now_us() - t0;

	ref_run(&r->srv, 1);
	t = ref_sample(&r->cl, k, i == 0);
	ref_run(&r->srv, 0);
	if (i >= 5)
		r->ref_rg[k][i - 5] = t;
}

/*
 * revoke+grant, one sample per size in turns, so that a slow spell of the
 * host weighs on every size alike (the flatness ratio); then its rows,
 * and each size's region and connections go.
 */
static void switch_rows(struct run *r)
{
	int i, k;

	for (i = 0; i < r->n + 5; i++)
		for (k = 0; k < r->nsizes; k++)
			switch_sample(r, k, i);
	for (k = 0; k < r->nsizes; k++) {
		stats_row2("revoked writer: reconnect after the fence",
			   r->names[k], summarize(r->rc[k], r->n));
		r->sw[k] = summarize(r->rg[k], r->n);
		stats_row2("revoke+grant (writer fenced)", r->names[k],
			   r->sw[k]);
		r->ref[k] = summarize(r->ref_rg[k], r->n);
		stats_row2("reference: revoke+grant (writer fenced)",
			   r->names[k], r->ref[k]);
		sacred_conn_destroy(r->ca[k]);
		sacred_conn_destroy(r->cb[k]);
		sacred_region_del(r->ctrl, r->m.id, r->rid[k]);
	}
}

static void report_sizes(const struct run *r)
{
	const struct stats *f = &r->floor_sr;
	int k;

	printf("\n## Per size\n\n");
	printf("Medians (minimums in brackets), microseconds; send/recv RTT %.1f (%.1f).\n\n",
	       f->med, f->min);
	printf("| region | revoke+grant | reference | sacred / reference | switch / RTT | switch min / RTT min | attach / RTT | own grant / RTT |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (k = 0; k < r->nsizes; k++)
		printf("| %s | %.1f (%.1f) | %.1f (%.1f) | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
		       r->names[k], r->sw[k].med, r->sw[k].min, r->ref[k].med,
		       r->ref[k].min, r->sw[k].med / r->ref[k].med,
		       r->sw[k].med / f->med, r->sw[k].min / f->min,
		       r->attach[k].med / f->med, r->grant[k].med / f->med);
}

/* The larger of the worst over the sizes so far, @x, and size @k's. */
#define WORST(x, a, b) ((x) = worse((x), (a), (b)))

/*
 * A row of the ratio table over the send/recv RTT's median: "-" (not
 * measured) when that median is a wait that slept, not the echo.
 */
static void rtt_row(const char *what, double v, bool floor_ok,
		    const char *target)
{
	if (floor_ok)
		printf("| %s | %.2f | %s |\n", what, v, target);
	else
		printf("| %s | - | %s |\n", what, target);
}

/* The ratios: each the worst over the sizes. */
static void report_ratios(const struct run *r)
{
	const struct stats *f = &r->floor_sr;
	double worst = 0, best = 1e18, rg_rtt = 0, rg_rtt_min = 0;
	double attach_rtt = 0, grant_rtt = 0, vs_ref = 0, ref_rtt = 0;
	double ref_rtt_min = 0, attach_ref = 0, grant_ref = 0;
	double rg_min = 1e18, grant_min = 1e18;
	bool floor_ok;
	int k;

	for (k = 0; k < r->nsizes; k++) {
		if (r->sw[k].med > worst)
			worst = r->sw[k].med;
		if (r->sw[k].med < best)
			best = r->sw[k].med;
		if (r->sw[k].min < rg_min)
			rg_min = r->sw[k].min;
		if (r->grant[k].min < grant_min)
			grant_min = r->grant[k].min;
		WORST(rg_rtt, r->sw[k].med, f->med);
		WORST(rg_rtt_min, r->sw[k].min, f->min);
		WORST(attach_rtt, r->attach[k].med, f->med);
		WORST(grant_rtt, r->grant[k].med, f->med);
		WORST(vs_ref, r->sw[k].med, r->ref[k].med);
		WORST(ref_rtt, r->ref[k].med, f->med);
		WORST(ref_rtt_min, r->ref[k].min, f->min);
		WORST(attach_ref, r->attach[k].med, r->rattach[k].med);
		WORST(grant_ref, r->grant[k].med, r->rgrant[k].med);
	}
	/*
	 * Both ends of the echo spin SPIN_US before they sleep: a median
	 * above that is how fast the guest wakes a thread (seen: 1375 us
	 * on 6.12, 20 samples), and every ratio over it would pass any
	 * switch. Those rows are then not measured, which fails the check.
	 */
	floor_ok = f->med < SPIN_US;
	printf("\n## Ratios (medians unless said)\n\n");
	printf("Each the worst over the sizes; the targets are issue 27's.\n\n");
	if (!floor_ok)
		printf("The send/recv RTT's median (%.1f us) is above the echo's %d us spin: a thread's wake-up, not the floor. The ratios over it are not measured (-).\n\n",
		       f->med, SPIN_US);
	printf("| ratio | value | target |\n|---|---|---|\n");
	rtt_row("revoke+grant, worst size / send-recv RTT", rg_rtt, floor_ok,
		"<= 3.0");
	printf("| revoke+grant minimum, worst size / send-recv RTT minimum | %.2f | <= 2.5 |\n",
	       rg_rtt_min);
	rtt_row("attach, worst size / send-recv RTT", attach_rtt, floor_ok,
		"<= 1.5");
	rtt_row("grant of its own access, worst size / send-recv RTT",
		grant_rtt, floor_ok, "<= 2.0");
	printf("| revoke+grant, largest / smallest median across sizes | %.2f | <= 1.2 (flat +-20%%) |\n",
	       worst / best);
	printf("| revoke+grant, sacred / reference, worst size | %.2f | <= 1.2 |\n",
	       vs_ref);
	/*
	 * What the revocation adds: the smallest of every size's samples on
	 * both sides - two changes of one instance that differ only in the
	 * writer's LOCAL_INV and fence. It differs from host to host by more
	 * than a 30% regression moves it (bench/README.md), so it guards
	 * nothing; bench/abswitch does.
	 */
	printf("| revoke+grant minimum / own grant minimum, all sizes | %.2f | - |\n",
	       rg_min / grant_min);
	rtt_row("reference revoke+grant, worst size / send-recv RTT", ref_rtt,
		floor_ok, "-");
	printf("| reference revoke+grant minimum, worst size / send-recv RTT minimum | %.2f | - |\n",
	       ref_rtt_min);
	printf("| attach, sacred / reference, worst size | %.2f | - |\n",
	       attach_ref);
	printf("| grant of its own access, sacred / reference, worst size | %.2f | - |\n",
	       grant_ref);
}

int main(int argc, char **argv)
{
	static struct run r;
	int k, ret;

	parse_args(&r, argc, argv);
	r.dev = bench_dev();
	r.host = getenv("SACRED_BENCH_ADDR") ?: "192.0.2.1";
	r.ctrl = bench_ctrl();
	bench_mem(r.ctrl, MEM_PORT, 1ULL << 30, &r.m);
	ret = ref_init(&r.srv, r.host, r.size_b, r.nsizes);
	if (!ret)
		ret = ref_connect(&r.cl, r.host, 0);
	if (!ret)
		ret = ref_connect(&r.cl, r.host, 1);
	if (ret)
		ref_die("setup", ret);

	printf("# sacred permission switch, one run on %s\n\n", r.dev);
	printf("Microseconds, client-observed (spin 1 ms, then sleep, as libsacred). %d samples per row after warm-up. \"reference\" rows: the same strict steps done by a userspace server that busy-polls its CQ (memory windows for the MRs: LOCAL_INV of the writer's window, fence of its QP, bind for the requester, reply).\n\n",
	       r.n);
	printf("| operation | region | min | median | p99 | n |\n");
	printf("|---|---|---|---|---|---|\n");
	r.floor_sr = bench_sendrecv(r.host, r.n, r.v);
	stats_row2("send/recv RTT (userspace echo)", "-", r.floor_sr);
	for (k = 0; k < r.nsizes; k++)
		size_rows(&r, k);
	switch_rows(&r);

	ref_run(&r.srv, 1);
	ret = ref_call(&r.cl, 0, REF_QUIT, 0, 0, 0, NULL);
	if (ret)
		ref_die("quit", ret);
	pthread_join(r.srv.thread, NULL);
	ref_client_fini(&r.cl);
	ref_fini(&r.srv);

	report_sizes(&r);
	report_ratios(&r);
	sacred_mem_del(r.ctrl, r.m.id);
	sacred_ctrl_close(r.ctrl);
	return 0;
}
