// SPDX-License-Identifier: GPL-2.0
/*
 * agreement - what deciding costs, next to the raw round trips it is built
 * from, in one run on three memory instances (one per rxe device):
 *
 *   write RTT        8-byte RDMA WRITE to one memory (libsacred, blocking)
 *   quorum write     8-byte WRITE to three memories, returns at two
 *                    (sacred_rmem_write): the floor of a 1-round-trip
 *                    decision; and the same with 80 bytes, a PMP cell
 *   PMP decision     sacred_pmp_propose() by the first leader, holding
 *                    write permission: the fast path, one round trip
 *   Disk Paxos       sacred_pmp_propose() with SACRED_DISK_PAXOS, fast
 *                    path: write, then read, at each memory
 *   log append       sacred_log_propose() by a stable leader: one entry
 *                    (one cell write to a quorum)
 *
 * Each single-shot decision uses a fresh instance (its own region), opened
 * before the clock starts. Samples of every kind are taken in turns, so
 * that a noisy moment hits all rows alike. Prints a Markdown report: min,
 * median, p99 and count in microseconds, and the ratios the project
 * targets (PMP within 1.3x of one write round trip; Disk Paxos at least
 * 1.7x PMP).
 *
 * Run inside the VM rig: make bench. Option: -n SAMPLES (default 200).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "sacred.h"

#define MEM_PORT	7711
#define NR_MEMS		3
#define NR_PROCS	3
#define PID(i)		(2001 + (i))
#define PMP_BASE	1000
#define DISK_BASE	3000
#define LOG_REGION	10
#define HB_REGION	11
#define RAW_REGION	12
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define MAXN		2000

struct stats {
	double min, med, p99;
	int n;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct stats summarize(double *v, int n)
{
	struct stats s = { .n = n };

	if (!n)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	s.min = v[0];
	s.med = v[n / 2];
	s.p99 = v[(int)(n * 0.99) < n ? (int)(n * 0.99) : n - 1];
	return s;
}

static void row(const char *what, struct stats s)
{
	printf("| %s | %.1f | %.1f | %.1f | %d |\n", what, s.min, s.med,
	       s.p99, s.n);
}

/* The @i-th space-separated word of @s into @buf; false if none. */
static bool word(const char *s, int i, char *buf, size_t len)
{
	size_t w;

	for (;;) {
		s += strspn(s, " ");
		w = strcspn(s, " ");
		if (!w)
			return false;
		if (!i--)
			break;
		s += w;
	}
	snprintf(buf, len, "%.*s", (int)w, s);
	return true;
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "agreement: %s: %s\n", what, strerror(-ret));
	exit(1);
}

static void region_everywhere(struct sacred_ctrl *ctrl,
			      const struct sacred_mem_info *mem, uint32_t id,
			      uint64_t size, uint8_t policy)
{
	struct sacred_acl_entry acl[NR_PROCS];
	unsigned int i;
	int ret;

	for (i = 0; i < NR_PROCS; i++)
		acl[i] = (struct sacred_acl_entry){
			.process_id = PID(i),
			.access = RW,
		};
	for (i = 0; i < NR_MEMS; i++) {
		ret = sacred_region_new(ctrl, mem[i].id, id, size, policy,
					NULL);
		if (!ret)
			ret = sacred_region_set_acl(ctrl, mem[i].id, id, acl,
						    NR_PROCS);
		if (ret)
			die("creating regions", ret);
	}
}

static void grant(struct sacred_ctrl *ctrl, const struct sacred_mem_info *mem,
		  uint32_t id)
{
	struct sacred_perm_req req = { .region_id = id, .access = RW };
	unsigned int i;
	int ret;

	for (i = 0; i < NR_MEMS; i++) {
		ret = sacred_perm_set(ctrl, mem[i].id, PID(0), &req);
		if (ret)
			die("granting the first leader", ret);
	}
}

static double decide(struct sacred_rmem *rm, int alg, uint32_t region)
{
	struct sacred_pmp_attr a = {
		.rm = rm,
		.region_id = region,
		.alg = alg,
		.nr_procs = NR_PROCS,
		.me = 0,
		.value_max = 32,
	};
	struct sacred_pmp_stats st;
	struct sacred_pmp *p;
	char out[32];
	size_t len;
	double t0, t;
	int ret;

	ret = sacred_pmp_open(&a, &p);
	if (ret)
		die("sacred_pmp_open", ret);
	t0 = now_us();
	ret = sacred_pmp_propose(p, "value", 6, out, sizeof(out), &len);
	t = now_us() - t0;
	if (ret)
		die("sacred_pmp_propose", ret);
	sacred_pmp_stats(p, &st);
	if (!st.fast)
		fprintf(stderr, "agreement: a decision left the fast path\n");
	sacred_pmp_close(p);
	return t;
}

int main(int argc, char **argv)
{
	static double raw[MAXN], quorum[MAXN], qcell[MAXN], pmp[MAXN],
		      disk[MAXN], app[MAXN];
	static uint8_t cell[80];
	struct sacred_rmem_member m[NR_MEMS];
	struct sacred_mem_info mem[NR_MEMS];
	struct sacred_rmem_attr ra = {
		.process_id = PID(0),
		.nr_mems = NR_MEMS,
		.mems = m,
		.max_io = 65536,
	};
	struct sacred_log_attr la = {
		.log_region = LOG_REGION,
		.hb_region = HB_REGION,
		.nr_procs = NR_PROCS,
		.me = 0,
		.capacity = 4096,
		.entry_max = 64,
		.suspect_ms = 1000,
	};
	struct sacred_ctrl *ctrl;
	struct sacred_rmem *rm;
	struct sacred_log *log;
	struct sacred_conn *c0;
	struct stats s_raw, s_q, s_qc, s_pmp, s_disk, s_app;
	char dev[64], entry[64] = "entry";
	const char *devs;
	uint64_t v = 1;
	int n = 200, opt, i, ret;

	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: agreement [-n SAMPLES]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 1 || n > MAXN)
		n = MAXN;
	devs = getenv("SACRED_RXE_DEVS");
	if (!devs) {
		fprintf(stderr, "agreement: run in the VM rig (make bench)\n");
		return 1;
	}
	ret = sacred_ctrl_open(&ctrl);
	if (ret)
		die("sacred_ctrl_open", ret);
	for (i = 0; i < NR_MEMS; i++) {
		struct sacred_mem_params p = {
			.id = SACRED_MEM_ID_ANY,
			.cm_port = MEM_PORT,
			.dev_name = dev,
		};

		if (!word(devs, i, dev, sizeof(dev)))
			die("SACRED_RXE_DEVS names fewer than 3 devices",
			    -EINVAL);
		ret = sacred_mem_new(ctrl, &p, &mem[i]);
		if (ret)
			die("sacred_mem_new", ret);
		m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&mem[i].addr,
		};
	}
	for (i = 0; i < n; i++) {
		region_everywhere(ctrl, mem, PMP_BASE + i, 4096,
				  SACRED_POLICY_EXCLUSIVE_WRITER);
		grant(ctrl, mem, PMP_BASE + i);
		region_everywhere(ctrl, mem, DISK_BASE + i, 4096,
				  SACRED_POLICY_STATIC);
	}
	region_everywhere(ctrl, mem, LOG_REGION, 4 << 20,
			  SACRED_POLICY_EXCLUSIVE_WRITER);
	region_everywhere(ctrl, mem, HB_REGION, 4096, SACRED_POLICY_STATIC);
	region_everywhere(ctrl, mem, RAW_REGION, 4096, SACRED_POLICY_STATIC);

	ret = sacred_rmem_create(&ra, &rm);
	if (ret)
		die("sacred_rmem_create", ret);
	ret = sacred_rmem_attach(rm, RAW_REGION, NULL);
	if (ret)
		die("attaching the raw region", ret);
	la.rm = rm;
	ret = sacred_log_open(&la, &log);
	if (ret)
		die("sacred_log_open", ret);
	while (!sacred_log_is_leader(log)) {
		sacred_log_poll(log);
		usleep(1000);
	}
	c0 = sacred_rmem_conn(rm, 0);

	/* Warm up every path once. */
	sacred_write(c0, RAW_REGION, 0, &v, sizeof(v));
	sacred_rmem_write(rm, RAW_REGION, 8, &v, sizeof(v), NULL);
	sacred_log_propose(log, entry, sizeof(entry), NULL);

	for (i = 0; i < n; i++) {
		double t0;

		/* Stragglers of the last quorum call first: not timed. */
		while (sacred_io_pending(c0)) {
			sacred_io_wait(&c0, 1, 100);
			break;
		}
		t0 = now_us();
		ret = sacred_write(c0, RAW_REGION, 0, &v, sizeof(v));
		raw[i] = now_us() - t0;
		if (ret == -EBUSY) {
			i--;
			usleep(1000);
			continue;
		}
		if (ret)
			die("sacred_write", ret);

		t0 = now_us();
		ret = sacred_rmem_write(rm, RAW_REGION, 8, &v, sizeof(v),
					NULL);
		quorum[i] = now_us() - t0;
		if (ret)
			die("sacred_rmem_write", ret);

		t0 = now_us();
		ret = sacred_rmem_write(rm, RAW_REGION, 64, cell,
					sizeof(cell), NULL);
		qcell[i] = now_us() - t0;
		if (ret)
			die("sacred_rmem_write", ret);

		pmp[i] = decide(rm, SACRED_PMP, PMP_BASE + i);
		disk[i] = decide(rm, SACRED_DISK_PAXOS, DISK_BASE + i);

		sacred_log_poll(log);
		t0 = now_us();
		ret = sacred_log_propose(log, entry, sizeof(entry), NULL);
		app[i] = now_us() - t0;
		if (ret)
			die("sacred_log_propose", ret);
	}

	s_raw = summarize(raw, n);
	s_q = summarize(quorum, n);
	s_qc = summarize(qcell, n);
	s_pmp = summarize(pmp, n);
	s_disk = summarize(disk, n);
	s_app = summarize(app, n);
	printf("# agreement: deciding over three memories, microseconds\n\n");
	printf("| what | min | median | p99 | n |\n|---|---|---|---|---|\n");
	row("8 B write RTT (one memory)", s_raw);
	row("8 B quorum write (2 of 3)", s_q);
	row("80 B quorum write (a PMP cell)", s_qc);
	row("PMP decision (fast path)", s_pmp);
	row("Disk Paxos decision (fast path)", s_disk);
	row("log append (stable leader)", s_app);
	printf("\n| ratio (medians) | measured | target |\n|---|---|---|\n");
	printf("| PMP / write RTT | %.2f | <= 1.3 |\n", s_pmp.med / s_raw.med);
	printf("| quorum write / write RTT (the rig's floor) | %.2f | - |\n",
	       s_q.med / s_raw.med);
	printf("| PMP / 80 B quorum write | %.2f | - |\n",
	       s_pmp.med / s_qc.med);
	printf("| log append / write RTT | %.2f | - |\n",
	       s_app.med / s_raw.med);
	printf("| Disk Paxos / PMP | %.2f | >= 1.7 |\n",
	       s_disk.med / s_pmp.med);

	sacred_log_close(log);
	sacred_rmem_destroy(rm);
	for (i = 0; i < NR_MEMS; i++)
		sacred_mem_del(ctrl, mem[i].id);
	sacred_ctrl_close(ctrl);
	return 0;
}
