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
 * for region sizes from 4 KiB to 256 MiB; revoke+grant is sampled once
 * per size in turns (every region and its two connections open at once),
 * so that a slow spell of a shared host weighs on every size alike. Prints
 * a Markdown report: min,
 * median, p99 and count in microseconds, and the ratios the project
 * targets (revoke+grant within 1.5x of send/recv RTT, flat across sizes).
 *
 * Run inside the VM rig: make bench. Options: -n SAMPLES (default 200),
 * -s SIZES (comma list, default 4k,64k,1m,16m,256m).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
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

static void row(const char *what, const char *size, struct stats s)
{
	printf("| %s | %s | %.1f | %.1f | %.1f | %d |\n", what, size, s.min,
	       s.med, s.p99, s.n);
}

/*
 * Wait for one completion the way libsacred does: spin for up to 1 ms,
 * then sleep on the completion channel. Spinning forever on a 2-vCPU TCG
 * guest starves the echo thread and rxe's tasks.
 */
static int poll_one(struct rdma_cm_id *id, bool recv, struct ibv_wc *wc)
{
	struct ibv_cq *cq = recv ? id->recv_cq : id->send_cq;
	double deadline = now_us() + 1000;
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

/* ------------------------------------------------------ sacred itself */

static int conn_open(const struct sockaddr_storage *addr, uint32_t pid,
		     uint32_t region, struct sacred_conn **c)
{
	struct sacred_conn_attr attr = {
		.addr = (const struct sockaddr *)addr,
		.process_id = pid,
		.timeout_ms = 10000,
	};
	struct sacred_region_attr ra;
	int ret;

	ret = sacred_conn_create(&attr, c);
	if (!ret)
		ret = sacred_attach(*c, region, &ra);
	return ret;
}

static int ask(struct sacred_conn *c, uint32_t region, uint32_t access)
{
	struct sacred_perm_req req = { .region_id = region, .access = access };
	struct sacred_perm_result res;

	return sacred_change_perm(c, &req, &res);
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "permswitch: %s: %s\n", what, strerror(-ret));
	exit(1);
}

static void format_size(uint64_t s, char *buf, size_t len)
{
	if (s >= 1 << 20)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(s >> 20));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)(s >> 10));
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': return v << 10;
	case 'm': case 'M': return v << 20;
	case 'g': case 'G': return v << 30;
	default: return v;
	}
}

int main(int argc, char **argv)
{
	static double v[MAXN], rg[MAX_SIZES][MAXN], rc[MAX_SIZES][MAXN];
	static struct sacred_conn *ca[MAX_SIZES], *cb[MAX_SIZES];
	static uint32_t rid[MAX_SIZES];
	static char names[MAX_SIZES][32];
	int nsizes = 0, k;
	struct sacred_acl_entry acl[] = {
		{ .process_id = 1, .access = RW },
		{ .process_id = 2, .access = RW },
	};
	struct sacred_mem_params mp = { .id = SACRED_MEM_ID_ANY,
					.cm_port = MEM_PORT,
					.mem_cap = 1ULL << 30 };
	const char *sizes = "4k,64k,1m,16m,256m", *dev, *host;
	struct stats floor_sr, s;
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info m;
	char *list, *tok, name[32];
	int n = 200, opt, i, ret;
	double worst = 0, best = 1e18;

	while ((opt = getopt(argc, argv, "n:s:h")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 's':
			sizes = optarg;
			break;
		default:
			fprintf(stderr, "usage: permswitch [-n SAMPLES] [-s SIZES]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 10 || n > MAXN) {
		fprintf(stderr, "permswitch: -n between 10 and %d\n", MAXN);
		return 2;
	}
	dev = getenv("SACRED_BENCH_DEV") ?: "rxe0";
	host = getenv("SACRED_BENCH_ADDR") ?: "192.0.2.1";

	ret = sacred_ctrl_open(&ctrl);
	if (ret)
		die("sacred_ctrl_open", ret);
	mp.dev_name = dev;
	ret = sacred_mem_new(ctrl, &mp, &m);
	if (ret)
		die("memory add", ret);

	printf("# sacred permission switch, one run on %s\n\n", dev);
	printf("Microseconds, client-observed (spin 1 ms, then sleep, as libsacred). %d samples per row after warm-up.\n\n", n);
	printf("| operation | region | min | median | p99 | n |\n");
	printf("|---|---|---|---|---|---|\n");

	floor_sr = bench_sendrecv(host, n, v);
	row("send/recv RTT (userspace echo)", "-", floor_sr);

	list = strdup(sizes);
	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		uint64_t size = parse_size(tok);

		if (nsizes == MAX_SIZES) {
			fprintf(stderr, "permswitch: at most %d sizes\n",
				MAX_SIZES);
			return 2;
		}
		struct sacred_conn *a, *b;
		struct sacred_region_info ri;
		uint64_t word = 1;

		format_size(size, name, sizeof(name));
		ret = sacred_region_new(ctrl, m.id, SACRED_REGION_ID_ANY, size,
					SACRED_POLICY_EXCLUSIVE_WRITER, &ri);
		if (ret)
			die("region add", ret);
		/*
		 * Every size's pair stays connected until the interleaved
		 * switch below: process ids of its own (an instance takes one
		 * connection per process).
		 */
		acl[0].process_id = 1 + 2 * nsizes;
		acl[1].process_id = 2 + 2 * nsizes;
		ret = sacred_region_set_acl(ctrl, m.id, ri.id, acl, 2);
		if (ret)
			die("region set acl", ret);
		ret = conn_open(&m.addr, acl[0].process_id, ri.id, &a);
		if (!ret)
			ret = conn_open(&m.addr, acl[1].process_id, ri.id, &b);
		if (ret)
			die("connect", ret);
		ret = ask(a, ri.id, RW);
		if (ret)
			die("take write", ret);

		for (i = 0; i < n + 10; i++) {
			double t0 = now_us();

			ret = sacred_write(a, ri.id, 0, &word, sizeof(word));
			if (ret)
				die("write", ret);
			if (i >= 10)
				v[i - 10] = now_us() - t0;
		}
		row("8 B write RTT", name, summarize(v, n));

		for (i = 0; i < n + 10; i++) {
			struct sacred_region_attr ra;
			double t0 = now_us();

			ret = sacred_attach(a, ri.id, &ra);
			if (ret)
				die("attach", ret);
			if (i >= 10)
				v[i - 10] = now_us() - t0;
		}
		row("attach (request path)", name, summarize(v, n));

		for (i = 0; i < n + 10; i++) {
			double t0 = now_us();

			ret = ask(a, ri.id, i % 2 ? RW : SACRED_ACCESS_READ);
			if (ret)
				die("grant", ret);
			if (i >= 10)
				v[i - 10] = now_us() - t0;
		}
		row("grant (own access)", name, summarize(v, n));

		/* The switch is timed below, all sizes in turns. */
		ca[nsizes] = a;
		cb[nsizes] = b;
		rid[nsizes] = ri.id;
		snprintf(names[nsizes], sizeof(names[0]), "%s", name);
		nsizes++;
	}
	free(list);

	/*
	 * revoke+grant, one sample per size in turns, so that a slow spell
	 * of the host weighs on every size alike (the flatness ratio): for
	 * each, b takes write (fencing a) and writes; a reconnects; then a
	 * takes write away from b, timed: b is fenced.
	 */
	for (i = 0; i < n + 5; i++) {
		for (k = 0; k < nsizes; k++) {
			uint64_t word = 1;
			double t0;

			while (ask(cb[k], rid[k], RW) ||
			       sacred_write(cb[k], rid[k], 8, &word,
					    sizeof(word)))
				if (sacred_conn_reconnect(cb[k]))
					usleep(1000);
			/* What the fenced writer pays: reconnect, re-attach. */
			t0 = now_us();
			ret = sacred_conn_reconnect(ca[k]);
			if (ret)
				die("reconnect", ret);
			if (i >= 5)
				rc[k][i - 5] = now_us() - t0;
			t0 = now_us();
			ret = ask(ca[k], rid[k], RW);
			if (ret)
				die("revoke+grant", ret);
			if (i >= 5)
				rg[k][i - 5] = now_us() - t0;
		}
	}
	for (k = 0; k < nsizes; k++) {
		row("revoked writer: reconnect after the fence", names[k],
		    summarize(rc[k], n));
		s = summarize(rg[k], n);
		row("revoke+grant (writer fenced)", names[k], s);
		if (s.med > worst)
			worst = s.med;
		if (s.med < best)
			best = s.med;
		sacred_conn_destroy(ca[k]);
		sacred_conn_destroy(cb[k]);
		sacred_region_del(ctrl, m.id, rid[k]);
	}

	printf("\n## Ratios (medians)\n\n");
	printf("| ratio | value | target |\n|---|---|---|\n");
	printf("| revoke+grant, worst size / send-recv RTT | %.2f | <= 1.5 |\n",
	       worst / floor_sr.med);
	printf("| revoke+grant, largest / smallest median across sizes | %.2f | <= 1.2 (flat +-20%%) |\n",
	       worst / best);

	sacred_mem_del(ctrl, m.id);
	sacred_ctrl_close(ctrl);
	return 0;
}
