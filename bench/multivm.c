// SPDX-License-Identifier: GPL-2.0
/*
 * multivm - what deciding costs when the three memories are three
 * machines: the client side of scripts/vm-multi --bench, which boots three
 * memory VMs (one rxe device and one sacred.ko memory instance each) and
 * a client VM on a private qemu network, and runs this program in the
 * client.
 *
 * bench/agreement measures the same operations with the three memories in
 * one guest kernel, where the three rxe devices share two vCPUs and a
 * write to three memories costs about three writes to one. Here each
 * memory has a CPU of its own, as the algorithms presume, so the rows
 * below say what a quorum operation costs against a single round trip
 * when the memories work in parallel:
 *
 *   write RTT, memory k   8-byte RDMA WRITE to memory k alone (blocking)
 *   quorum write          8-byte WRITE to all three, returns at two
 *                         (sacred_rmem_write); and 80 bytes, a PMP cell
 *   PMP decision          sacred_pmp_propose() by a leader that holds
 *                         write permission: the fast path, one round trip
 *   Disk Paxos decision   the same with SACRED_DISK_PAXOS: write, then
 *                         read, at each memory
 *   log append            sacred_log_propose() by the stable leader, one
 *                         64-byte entry
 *
 * Samples of every kind are taken in turns, each turn after WARM_OPS
 * untimed writes (a thread's first operations after a pause cost more on
 * this rig: bench/README.md). Every single-shot decision has a fresh
 * instance (region) of its own, made by the memory VMs before the run;
 * the PMP leader takes write permission on it with an untimed
 * changePermission before opening it, as agreement's does by netlink.
 *
 * Environment (set by scripts/vm-multi): SACRED_MULTIVM_MEMS (three
 * addresses), SACRED_MULTIVM_PORT (their rdma_cm port, default 7531).
 * Each memory has the regions of scripts/vm-multi's --bench: LOG_REGION
 * and HB_REGION as the multi-VM test has them, RAW_REGION (static, 4 KiB)
 * and, for i < SAMPLES, PMP_BASE + i (exclusive-writer) and DISK_BASE + i
 * (static), 4 KiB each; processes 601-604 read-write on all (this
 * program is 601).
 *
 * Options: -n SAMPLES (default 100, at most MAXN; the memory VMs must
 * have made as many instances). Prints a Markdown report on stdout.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "sacred.h"
#include "bench.h"
#include "../selftests/sacred_multivm_env.h"

#define NR_MEMS		3
#define NR_PROCS	3
#define PID		601
#define LOG_REGION	1
#define HB_REGION	2
#define RAW_REGION	3
#define PMP_BASE	1000
#define DISK_BASE	3000
#define CAPACITY	1024
#define CMD_LEN		64
#define WARM_OPS	2
#define TIMEOUT_MS	5000
#define MAXN		500
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

/* Let the third memory's answer to the last quorum call arrive: untimed. */
static void drain(struct sacred_rmem *rm)
{
	struct sacred_conn *c;
	unsigned int i;

	for (i = 0; i < NR_MEMS; i++) {
		c = sacred_rmem_conn(rm, i);
		if (c && sacred_io_pending(c))
			sacred_io_wait(&c, 1, TIMEOUT_MS);
	}
}

/*
 * One single-shot decision on the fresh instance @region. For PMP the
 * leader first takes write permission on it at every memory (untimed).
 */
static double decide(struct sacred_rmem *rm, int alg, uint32_t region)
{
	struct sacred_perm_req req = { .region_id = region, .access = RW };
	struct sacred_rmem_result res;
	struct sacred_pmp *p;
	bool fast;
	double t;
	int ret;

	if (alg == SACRED_PMP) {
		ret = sacred_rmem_attach(rm, region, NULL);
		if (!ret)
			ret = sacred_rmem_change_perm(rm, &req, &res);
		if (ret)
			die("taking write permission on a PMP instance", ret);
		drain(rm);
	}
	p = bench_pmp_open(rm, alg, region, NR_PROCS, TIMEOUT_MS);
	drain(rm);
	t = bench_propose(p, &fast);
	if (!fast)
		die("a decision left the fast path or decided another value",
		    -EPROTO);
	return t;
}

enum series { QUORUM, QCELL, PMP, DISK, APP, NR_SERIES };

/* The samples, in microseconds: one per turn of every kind. */
struct samples {
	double raw[NR_MEMS][MAXN];
	double x[NR_SERIES][MAXN];
};

/* Connected to every memory, the raw region attached, leading the log. */
static void setup(struct sacred_rmem_attr *ra, struct sacred_rmem **rm,
		  struct sacred_log_attr *la, struct sacred_log **log)
{
	unsigned int k;
	int ret;

	ret = sacred_rmem_create(ra, rm);
	if (ret)
		die("sacred_rmem_create", ret);
	for (k = 0; k < NR_MEMS; k++)
		if (!sacred_rmem_conn(*rm, k) ||
		    sacred_conn_broken(sacred_rmem_conn(*rm, k)))
			die("connecting to every memory", -ENOTCONN);
	ret = sacred_rmem_attach(*rm, RAW_REGION, NULL);
	if (ret)
		die("attaching the raw region", ret);
	la->rm = *rm;
	ret = sacred_log_open(la, log);
	if (ret)
		die("sacred_log_open", ret);
	while (!sacred_log_is_leader(*log)) {
		sacred_log_poll(*log);
		usleep(1000);
	}
}

/* Every path once, untimed. */
static void warm_up(struct sacred_rmem *rm, struct sacred_log *log)
{
	char entry[CMD_LEN] = "entry";
	uint64_t v = 1;
	unsigned int k;
	int ret = 0;

	for (k = 0; k < NR_MEMS && !ret; k++)
		ret = sacred_write(sacred_rmem_conn(rm, k), RAW_REGION, 0, &v,
				   sizeof(v));
	if (!ret)
		ret = sacred_rmem_write(rm, RAW_REGION, 8, &v, sizeof(v),
					NULL);
	if (ret)
		die("warming up", ret);
	ret = sacred_log_propose(log, entry, sizeof(entry), NULL);
	if (ret)
		die("sacred_log_propose", ret);
	drain(rm);
}

/* A quorum write of @len bytes at @off, timed, its stragglers drained. */
static double timed_quorum_write(struct sacred_rmem *rm, uint64_t off,
				 const void *buf, size_t len)
{
	double t0 = now_us(), t;
	int ret;

	ret = sacred_rmem_write(rm, RAW_REGION, off, buf, len, NULL);
	t = now_us() - t0;
	if (ret)
		die("sacred_rmem_write", ret);
	drain(rm);
	return t;
}

/* Turn @i: WARM_OPS untimed writes, then one sample of every kind. */
static void sample_turn(struct sacred_rmem *rm, struct sacred_log *log,
			int i, struct samples *sm)
{
	static const uint8_t cell[80];
	char entry[CMD_LEN] = "entry";
	uint64_t v = 1;
	unsigned int k;
	double t0;
	int w, ret = 0;

	/* Untimed: see the comment at the top. */
	for (w = 0; w < WARM_OPS && !ret; w++) {
		ret = sacred_rmem_write(rm, RAW_REGION, 8, &v, sizeof(v), NULL);
		drain(rm);
	}
	if (ret)
		die("sacred_rmem_write (warm-up)", ret);
	for (k = 0; k < NR_MEMS; k++) {
		struct sacred_conn *c = sacred_rmem_conn(rm, k);

		ret = sacred_write(c, RAW_REGION, 0, &v, sizeof(v));
		if (ret)
			die("sacred_write (warm-up)", ret);
		t0 = now_us();
		ret = sacred_write(c, RAW_REGION, 0, &v, sizeof(v));
		sm->raw[k][i] = now_us() - t0;
		if (ret)
			die("sacred_write", ret);
	}
	sm->x[QUORUM][i] = timed_quorum_write(rm, 8, &v, sizeof(v));
	sm->x[QCELL][i] = timed_quorum_write(rm, 64, cell, sizeof(cell));
	sm->x[PMP][i] = decide(rm, SACRED_PMP, PMP_BASE + i);
	drain(rm);
	sm->x[DISK][i] = decide(rm, SACRED_DISK_PAXOS, DISK_BASE + i);
	drain(rm);

	sacred_log_poll(log);
	drain(rm);
	t0 = now_us();
	ret = sacred_log_propose(log, entry, sizeof(entry), NULL);
	sm->x[APP][i] = now_us() - t0;
	if (ret)
		die("sacred_log_propose", ret);
	drain(rm);
}

static void report(struct samples *sm, int n)
{
	struct stats raw[NR_MEMS], s[NR_SERIES];
	unsigned int fastest = 0, k;
	char what[64];

	for (k = 0; k < NR_MEMS; k++) {
		raw[k] = summarize(sm->raw[k], n);
		if (raw[k].med < raw[fastest].med)
			fastest = k;
	}
	for (k = 0; k < NR_SERIES; k++)
		s[k] = summarize(sm->x[k], n);

	printf("# multivm: deciding over three memories on three VMs, microseconds\n\n");
	stats_head();
	for (k = 0; k < NR_MEMS; k++) {
		snprintf(what, sizeof(what), "8 B write RTT, memory %u alone",
			 k);
		stats_row(what, raw[k]);
	}
	stats_row("8 B quorum write (2 of 3)", s[QUORUM]);
	stats_row("80 B quorum write (a PMP cell)", s[QCELL]);
	stats_row("PMP decision (fast path)", s[PMP]);
	stats_row("Disk Paxos decision (fast path)", s[DISK]);
	stats_row("log append (stable leader)", s[APP]);

	printf("\n| ratio (medians) | measured | target |\n|---|---|---|\n");
	printf("| PMP / write RTT (the fastest memory's, %u) | %.2f | <= 1.3 |\n",
	       fastest, s[PMP].med / raw[fastest].med);
	printf("| quorum write / write RTT (the rig's floor) | %.2f | - |\n",
	       s[QUORUM].med / raw[fastest].med);
	printf("| PMP / 80 B quorum write | %.2f | - |\n",
	       s[PMP].med / s[QCELL].med);
	printf("| log append / write RTT | %.2f | - |\n",
	       s[APP].med / raw[fastest].med);
	printf("| Disk Paxos / PMP | %.2f | >= 1.7 |\n",
	       s[DISK].med / s[PMP].med);
}

int main(int argc, char **argv)
{
	static struct samples sm;
	struct sockaddr_in addrs[NR_MEMS];
	struct sacred_rmem_member m[NR_MEMS];
	struct sacred_rmem_attr ra = {
		.process_id = PID,
		.nr_mems = NR_MEMS,
		.mems = m,
		.max_io = 4096,
	};
	struct sacred_log_attr la = {
		BENCH_LOG_ATTR(LOG_REGION, HB_REGION, NR_PROCS, CAPACITY,
			       CMD_LEN, 1000),
	};
	int n = 100, i;
	const struct bench_opt opts[] = {
		BENCH_INT('n', "[-n SAMPLES]", &n),
	};
	struct sacred_rmem *rm;
	struct sacred_log *log;

	bench_args("multivm", argc, argv, opts, 1);
	/* The log holds the appends and the warm-up's. */
	if (n < 1 || n > MAXN || n + 2 > CAPACITY)
		bench_exit(2, "-n 1 to %d", MAXN);
	if (multivm_members(addrs, m, NR_MEMS, TIMEOUT_MS))
		bench_exit(1, "run by scripts/vm-multi --bench (SACRED_MULTIVM_MEMS: three IPv4 addresses; SACRED_MULTIVM_PORT)");

	setup(&ra, &rm, &la, &log);
	warm_up(rm, log);
	for (i = 0; i < n; i++)
		sample_turn(rm, log, i, &sm);
	report(&sm, n);
	bench_footer(" in the client VM");

	sacred_log_close(log);
	sacred_rmem_destroy(rm);
	return 0;
}
