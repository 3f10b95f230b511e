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
 *                    (one cell write to a quorum) of 64 bytes
 *   batched append   the same with BATCH commands of 64 bytes packed by
 *                    the client into one entry (lib/log.c appends one
 *                    entry per call; packing is what sacred-kv could do):
 *                    a second log whose entries hold BATCH * 64 bytes
 *   Cheap Quorum     sacred_cheapq_propose() by three correct processes
 *                    (threads, each with its own connections, process id
 *                    and key; none is the process of the rows above),
 *                    the fast path: the leader's decision, and the time
 *                    until all three decided; a fresh instance each.
 *                    The leader's decision is also split: the time its
 *                    thread spent inside sacred_bz_sign() and
 *                    sacred_bz_verify() during the call, and the rest
 *                    (see "Signature work" below). Each process warms
 *                    up before its clock starts (cheapq_warm()). The rest is
 *                    measured twice: all three proposing at once, and
 *                    the followers starting 5 ms after the leader, so
 *                    that nothing of theirs shares the guest's two vCPUs
 *                    and the rxe devices with its decision (as on
 *                    separate hosts)
 *   Ed25519          sacred_bz_sign() and sacred_bz_verify() of a 64-byte
 *                    message, alone (no RDMA)
 *
 * Then throughput: back-to-back operations of one kind for a while, in
 * turns - raw 8-byte writes to one memory, quorum writes, log appends
 * of one command and batched appends - as operations (commands) per
 * second.
 *
 * Then a log with snapshots (a window of SNAP_WINDOW entries, a 64 KiB
 * application state): every append, the appends that wrote a snapshot
 * first, and a follower opened again far behind, until it delivered
 * everything (it restores the newest snapshot, then reads the rest).
 *
 * Each single-shot decision uses a fresh instance (its own region), opened
 * before the clock starts. Samples of every kind are taken in turns, so
 * that a noisy moment hits all rows alike; each turn starts with untimed
 * writes and quorum writes (WARM_OPS), so that no row is timed as the
 * first operation after a sleep, which costs several times more on this
 * rig (bench/README.md). Prints a Markdown report: min,
 * median, p99 and count in microseconds, and the ratios the project
 * targets (PMP within 1.3x of one write round trip; Disk Paxos at least
 * 1.7x PMP; the Cheap Quorum fast path within 1.5x of PMP, issue 6).
 *
 * Run inside the VM rig: make bench. Options: -n SAMPLES (default 200),
 * -b BATCH (commands per batched entry, default 16), -t MS (time per
 * throughput kind, default 2000).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include "sacred.h"
#include "bench.h"

/*
 * Signature work. The Makefile links this program with
 * -Wl,--wrap=sacred_bz_sign -Wl,--wrap=sacred_bz_verify: every call to
 * them from libsacred.a (lib/cheapq.c calls into lib/neb.c, another object)
 * comes through the wrappers below, which time the real function and add
 * the time to the calling thread's counter. A Cheap Quorum thread reads
 * its counter before and after sacred_cheapq_propose(): the difference is
 * the time that call spent signing and verifying, measured per sample.
 */
void __real_sacred_bz_sign(const struct sacred_bz_keys *keys,
			   const char *domain, const void *msg, size_t len,
			   uint8_t *sig);
bool __real_sacred_bz_verify(const struct sacred_bz_keys *keys,
			     unsigned int who, const char *domain,
			     const void *msg, size_t len, const uint8_t *sig);
void __wrap_sacred_bz_sign(const struct sacred_bz_keys *keys,
			   const char *domain, const void *msg, size_t len,
			   uint8_t *sig);
bool __wrap_sacred_bz_verify(const struct sacred_bz_keys *keys,
			     unsigned int who, const char *domain,
			     const void *msg, size_t len, const uint8_t *sig);

static __thread double bz_us;	/* this thread's time signing, verifying */
static __thread long bz_calls;

#define MEM_PORT	7711
#define NR_MEMS		3
#define NR_PROCS	3
#define PID(i)		(2001 + (i))
/* Cheap Quorum's processes: a panic fences its leader, not PID(0). */
#define CHEAPQ_PID(i)	(2011 + (i))
#define PMP_BASE	1000
#define DISK_BASE	3000
#define LOG_REGION	10
#define HB_REGION	11
#define RAW_REGION	12
#define BLOG_REGION	13
#define BHB_REGION	14
#define SLOG_REGION	15
#define SHB_REGION	16
#define SNAP_WINDOW	256	/* the log with snapshots: its window, */
#define SNAP_STATE	65536	/* the application state's bytes, */
#define SNAP_APPENDS	2048	/* appends timed, */
#define SNAP_RESTORES	10	/* and reopenings of a follower timed */
#define CHEAPQ_BASE		5000	/* CHEAPQ_REGIONS per Cheap Quorum instance */
#define CMD_LEN		64
#define BATCH_MAX	64
#define CHEAPQ_VALUE_MAX	32
#define CHEAPQ_STAGGER_US	5000	/* the followers' late start, 2nd row */
#define CHEAPQ_WARM_READS	3	/* before each timed call: cheapq_warm() */
#define WARM_OPS	2	/* untimed writes before each turn's rows */
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define MAXN		2000

void __wrap_sacred_bz_sign(const struct sacred_bz_keys *keys,
			   const char *domain, const void *msg, size_t len,
			   uint8_t *sig)
{
	double t0 = now_us();

	__real_sacred_bz_sign(keys, domain, msg, len, sig);
	bz_us += now_us() - t0;
	bz_calls++;
}

bool __wrap_sacred_bz_verify(const struct sacred_bz_keys *keys,
			     unsigned int who, const char *domain,
			     const void *msg, size_t len, const uint8_t *sig)
{
	double t0 = now_us();
	bool ok = __real_sacred_bz_verify(keys, who, domain, msg, len, sig);

	bz_us += now_us() - t0;
	bz_calls++;
	return ok;
}

/* A region on every memory, read-write for the three processes. */
#define region_everywhere(ctrl, mem, id, size, policy) \
	bench_region_everywhere(ctrl, mem, NR_MEMS, id, size, policy, \
				PID(0), NR_PROCS)

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
	bool fast;
	double t;

	t = bench_propose(bench_pmp_open(rm, alg, region, NR_PROCS, 0), &fast);
	if (!fast)
		fprintf(stderr, "agreement: a decision left the fast path\n");
	return t;
}

/* A Cheap Quorum instance: the leader region and three per process. */
#define CHEAPQ_REGIONS	(1 + 3 * NR_PROCS)

/*
 * The three Cheap Quorum processes: threads, each with its own replicated
 * memory and key. Each round, between barriers, each opens its instance
 * itself - as a process would, and as the PMP row opens its own - then
 * all propose at once; once all three returned, each closes its handle.
 */
struct cheapq_proc {
	unsigned int me;
	struct sacred_rmem *rm;
	struct sacred_bz_keys *keys;
	struct sacred_cheapq *cheapq;
	uint32_t base;	/* this round's instance */
	double start, end;
	double bz;	/* of end - start, inside sign and verify */
	long bz_calls;
	const char *what;	/* what failed, with ret */
	int ret;
	bool fast;
};

static struct cheapq_proc cheapqp[NR_PROCS];
static pthread_barrier_t cheapq_go, cheapq_ready, cheapq_done, cheapq_closed;
static int cheapq_rounds;
static unsigned int cheapq_stagger_us;	/* followers start this much later */
static int cheapq_slow;	/* decisions (of any process) off the fast path */

/*
 * CHEAPQ_WARM_READS untimed quorum reads of the instance's leader region
 * (every process may read it) after the barrier, so that the timed call
 * starts, as the PMP row's does, right after quorum operations of the
 * same thread: the main thread runs three of them back to back before
 * each PMP decision (the two quorum-write rows, sacred_pmp_open()'s
 * read). A thread that slept pays more for its next few operations on
 * this rig: an 80 B quorum write took 69 us right after another, 92 us
 * after a 50 us sleep, 107 us after 300 us, 115-135 us after the barrier,
 * and the second after the barrier still 91 us (bench/README.md,
 * "Cheap Quorum's fast path").
 */
static int cheapq_warm(struct cheapq_proc *p)
{
	static __thread uint8_t buf[NR_MEMS][8];
	void *bufs[NR_MEMS];
	unsigned int i;
	int ret = 0;

	for (i = 0; i < NR_MEMS; i++)
		bufs[i] = buf[i];
	for (i = 0; i < CHEAPQ_WARM_READS && !ret; i++)
		ret = sacred_rmem_read(p->rm, p->base, 0, bufs,
				       sizeof(buf[0]), false, NULL);
	return ret;
}

static void *cheapq_thread(void *arg)
{
	struct cheapq_proc *p = arg;
	char in[CHEAPQ_VALUE_MAX], out[CHEAPQ_VALUE_MAX];
	struct sacred_cheapq_stats st;
	size_t len;
	int r;

	snprintf(in, sizeof(in), "value of P%u", p->me);
	for (r = 0; r < cheapq_rounds; r++) {
		struct sacred_cheapq_attr ca;
		double bz0;
		long calls0;

		pthread_barrier_wait(&cheapq_go);
		ca = (struct sacred_cheapq_attr){
			.rm = p->rm,
			.keys = p->keys,
			.base_region = p->base,
			.leader_pid = CHEAPQ_PID(0),
			.value_max = CHEAPQ_VALUE_MAX,
			.timeout_ms = 5000,
		};
		p->what = "sacred_cheapq_open";
		p->ret = sacred_cheapq_open(&ca, &p->cheapq);
		pthread_barrier_wait(&cheapq_ready);
		if (!p->ret && p->me && cheapq_stagger_us)
			usleep(cheapq_stagger_us);
		if (!p->ret) {
			p->what = "reading the leader region (warm-up)";
			p->ret = cheapq_warm(p);
		}
		if (!p->ret) {
			p->what = "sacred_cheapq_propose";
			bz0 = bz_us;
			calls0 = bz_calls;
			p->start = now_us();
			p->ret = sacred_cheapq_propose(p->cheapq, in,
						       strlen(in) + 1, out,
						       sizeof(out), &len);
			p->end = now_us();
			p->bz = bz_us - bz0;
			p->bz_calls = bz_calls - calls0;
			sacred_cheapq_stats(p->cheapq, &st);
			p->fast = !p->ret && st.fast;
		}
		pthread_barrier_wait(&cheapq_done);
		sacred_cheapq_close(p->cheapq);
		p->cheapq = NULL;
		pthread_barrier_wait(&cheapq_closed);
	}
	return NULL;
}

/*
 * One Cheap Quorum decision on a fresh instance: the leader's time; into
 * @bz the part of it the leader spent signing and verifying, into @all
 * the time until all three decided. With @stagger_us the followers start
 * that much after the leader.
 */
static double cheapq_decide(struct sacred_ctrl *ctrl,
			const struct sacred_mem_info *mem, uint32_t base,
			unsigned int stagger_us, double *bz, double *all)
{
	struct sacred_cheapq_attr ca = {
		.base_region = base,
		.leader_pid = CHEAPQ_PID(0),
		.value_max = CHEAPQ_VALUE_MAX,
	};
	double first = 1e300, last = 0;
	uint32_t ids[NR_MEMS];
	unsigned int i;
	int ret;

	for (i = 0; i < NR_MEMS; i++)
		ids[i] = mem[i].id;
	ret = sacred_cheapq_setup(ctrl, ids, NR_MEMS, &ca, NR_PROCS);
	if (ret)
		die("sacred_cheapq_setup", ret);
	for (i = 0; i < NR_PROCS; i++)
		cheapqp[i].base = base;
	cheapq_stagger_us = stagger_us;
	pthread_barrier_wait(&cheapq_go);
	pthread_barrier_wait(&cheapq_ready);
	pthread_barrier_wait(&cheapq_done);
	pthread_barrier_wait(&cheapq_closed);
	for (i = 0; i < NR_PROCS; i++) {
		if (cheapqp[i].ret)
			die(cheapqp[i].what,
			    cheapqp[i].ret < 0 ? cheapqp[i].ret : -EPROTO);
		if (!cheapqp[i].fast)
			cheapq_slow++;
		if (cheapqp[i].start < first)
			first = cheapqp[i].start;
		if (cheapqp[i].end > last)
			last = cheapqp[i].end;
	}
	/* A fresh instance each time: give the memory back. */
	for (i = 0; i < NR_MEMS; i++) {
		unsigned int r;

		for (r = 0; r < CHEAPQ_REGIONS; r++)
			sacred_region_del(ctrl, mem[i].id, base + r);
	}
	/*
	 * The leader signs its value on every path: a fast decision with no
	 * signature timed means the wrappers are not in the call path (the
	 * link lost --wrap, or lib/cheapq.c signs some other way) - the split
	 * would be a lie.
	 */
	if (cheapqp[0].fast && !cheapqp[0].bz_calls)
		die("no sacred_bz_sign/verify call of the leader was timed (link with --wrap)",
		    -EPROTO);
	*bz = cheapqp[0].bz;
	*all = last - first;
	return cheapqp[0].end - cheapqp[0].start;
}

static void cheapq_setup(const struct sacred_mem_info *mem, char *dir,
		     int rounds, pthread_t *th)
{
	struct sacred_rmem_member m[NR_MEMS];
	unsigned int i;
	int ret;

	if (!mkdtemp(dir))
		die("mkdtemp", -errno);
	for (i = 0; i < NR_PROCS; i++) {
		ret = sacred_bz_keygen(dir, i);
		if (ret)
			die("sacred_bz_keygen", ret);
	}
	for (i = 0; i < NR_MEMS; i++)
		m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&mem[i].addr,
		};
	cheapq_rounds = rounds;
	pthread_barrier_init(&cheapq_go, NULL, NR_PROCS + 1);
	pthread_barrier_init(&cheapq_ready, NULL, NR_PROCS + 1);
	pthread_barrier_init(&cheapq_done, NULL, NR_PROCS + 1);
	pthread_barrier_init(&cheapq_closed, NULL, NR_PROCS + 1);
	for (i = 0; i < NR_PROCS; i++) {
		struct sacred_rmem_attr ra = {
			.process_id = CHEAPQ_PID(i),
			.nr_mems = NR_MEMS,
			.mems = m,
			.max_io = 4096,
		};

		cheapqp[i].me = i;
		ret = sacred_bz_keys_load(dir, NR_PROCS, i, &cheapqp[i].keys);
		if (ret)
			die("sacred_bz_keys_load", ret);
		ret = sacred_rmem_create(&ra, &cheapqp[i].rm);
		if (ret)
			die("sacred_rmem_create", ret);
		pthread_create(&th[i], NULL, cheapq_thread, &cheapqp[i]);
	}
}

static void cheapq_teardown(const char *dir, pthread_t *th)
{
	char path[128];
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		pthread_join(th[i], NULL);
		sacred_rmem_destroy(cheapqp[i].rm);
		sacred_bz_keys_free(cheapqp[i].keys);
		snprintf(path, sizeof(path), "%s/ed25519-%u.key", dir, i);
		unlink(path);
		snprintf(path, sizeof(path), "%s/ed25519-%u.pub", dir, i);
		unlink(path);
	}
	rmdir(dir);
	pthread_barrier_destroy(&cheapq_go);
	pthread_barrier_destroy(&cheapq_ready);
	pthread_barrier_destroy(&cheapq_done);
	pthread_barrier_destroy(&cheapq_closed);
}

/* Ed25519 alone: sign and verify a 64-byte message, @n times each. */
static void bench_ed25519(int n, double *sign, double *verify)
{
	uint8_t msg[64] = "sixty-four bytes, about a Cheap Quorum record";
	uint8_t sig[SACRED_BZ_SIG_LEN];
	int i;

	for (i = 0; i < n + 10; i++) {
		double t0 = now_us();

		sacred_bz_sign(cheapqp[0].keys, "sacred-bench", msg, sizeof(msg),
			       sig);
		if (i >= 10)
			sign[i - 10] = now_us() - t0;
		t0 = now_us();
		if (!sacred_bz_verify(cheapqp[1].keys, 0, "sacred-bench", msg,
				      sizeof(msg), sig))
			die("sacred_bz_verify", -EPROTO);
		if (i >= 10)
			verify[i - 10] = now_us() - t0;
	}
}

/* Let the third memory's answer to the last quorum call arrive: untimed. */
static void drain(struct sacred_conn *c0)
{
	if (sacred_io_pending(c0))
		sacred_io_wait(&c0, 1, 100);
}

static int open_log(struct sacred_log_attr *la, struct sacred_log **log)
{
	int ret = sacred_log_open(la, log);

	if (ret)
		return ret;
	while (!sacred_log_is_leader(*log)) {
		sacred_log_poll(*log);
		usleep(1000);
	}
	return 0;
}

/* The log with snapshots: a state of SNAP_STATE bytes, never looked at. */
static ssize_t snap_take(void *arg, uint64_t applied, void *buf, size_t max)
{
	(void)arg;
	if (max < SNAP_STATE)
		return -ENOSPC;
	memset(buf, (int)(applied & 0xff), SNAP_STATE);
	return SNAP_STATE;
}

static int snap_restore(void *arg, uint64_t applied, const void *buf,
			size_t len)
{
	(void)arg;
	(void)applied;
	(void)buf;
	return len == SNAP_STATE ? 0 : -EBADMSG;
}

/*
 * On regions of its own on @mem, appends to a log with snapshots by
 * process 0 on @rm, each timed (into @all; those that wrote a snapshot
 * first also into @snap, their number into *@nsnap), then SNAP_RESTORES
 * times a follower - process 1, with connections of its own (@ra with
 * its id) - opened again and polled until it delivered all (into
 * @restore).
 */
static void bench_snapshots(struct sacred_ctrl *ctrl,
			    const struct sacred_mem_info *mem,
			    struct sacred_rmem *rm,
			    const struct sacred_rmem_attr *ra, double *all,
			    double *snap, int *nsnap, double *restore)
{
	struct sacred_log_attr la = {
		BENCH_LOG_ATTR(SLOG_REGION, SHB_REGION, NR_PROCS, SNAP_WINDOW,
			       CMD_LEN, 5000),
		.snapshot_max = SNAP_STATE,
		.snapshot = snap_take,
		.restore = snap_restore,
	};
	struct sacred_rmem_attr rb = *ra;
	struct sacred_rmem *rm1;
	struct sacred_log *log, *f;
	struct sacred_log_stats st;
	char entry[CMD_LEN] = "entry";
	uint64_t snaps = 0;
	double t0;
	int i, ret;

	region_everywhere(ctrl, mem, SLOG_REGION,
			  (sacred_log_region_size(&la) + 4095) & ~4095ULL,
			  SACRED_POLICY_EXCLUSIVE_WRITER);
	region_everywhere(ctrl, mem, SHB_REGION, 4096, SACRED_POLICY_STATIC);
	rb.process_id = PID(1);
	ret = sacred_rmem_create(&rb, &rm1);
	if (ret)
		die("sacred_rmem_create (snapshots, follower)", ret);
	la.rm = rm;
	ret = open_log(&la, &log);
	if (ret)
		die("sacred_log_open (snapshots)", ret);
	*nsnap = 0;
	for (i = 0; i < SNAP_APPENDS; i++) {
		sacred_log_poll(log);
		t0 = now_us();
		ret = sacred_log_propose(log, entry, sizeof(entry), NULL);
		all[i] = now_us() - t0;
		if (ret)
			die("sacred_log_propose (snapshots)", ret);
		sacred_log_stats(log, &st);
		if (st.snapshots != snaps)
			snap[(*nsnap)++] = all[i];
		snaps = st.snapshots;
	}
	la.rm = rm1;
	la.me = 1;
	for (i = 0; i < SNAP_RESTORES; i++) {
		t0 = now_us();
		ret = sacred_log_open(&la, &f);
		if (ret)
			die("sacred_log_open (snapshots, follower)", ret);
		/* The leader goes on too: its metas carry the commit point. */
		while (sacred_log_applied(f) < sacred_log_applied(log)) {
			sacred_log_poll(f);
			sacred_log_poll(log);
		}
		restore[i] = now_us() - t0;
		sacred_log_stats(f, &st);
		if (!st.restores)
			die("the follower did not restore", -EPROTO);
		sacred_log_close(f);
		/* Keep the leader's heartbeat going. */
		sacred_log_poll(log);
	}
	sacred_log_close(log);
	sacred_rmem_destroy(rm1);
}

struct tput {
	const char *what;
	double us;	/* time spent */
	long ops;	/* operations (commands) done */
};

/* The sample series of the first table, one sample per turn each. */
enum series {
	RAW, QUORUM, QCELL, PMP, DISK, APP, BAPP,
	CHEAPQ_LAT, CHEAPQ_ATTR, CHEAPQ_BZ, CHEAPQ_REST, CHEAPQ_SREST,
	SIGN, VERIFY, NR_SERIES
};

/* What main() sets up and measures, for the row functions below. */
struct agreement {
	int n, k, tput_ms;	/* -n, -b, -t */
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	struct sacred_rmem_member m[NR_MEMS];
	struct sacred_rmem_attr ra;
	struct sacred_log_attr la, lb;	/* the log, the batched log */
	struct sacred_rmem *rm;
	struct sacred_log *log, *blog;
	struct sacred_conn *c0;	/* the raw write's connection */
	uint64_t used, bused;	/* entries of each log */
	uint64_t one;	/* what the writes write */
	uint8_t cell[80];
	char entry[CMD_LEN], batch[BATCH_MAX * CMD_LEN];
	char keydir[32];
	pthread_t th[NR_PROCS];
	double x[NR_SERIES][MAXN];	/* the samples */
	struct stats s[NR_SERIES];
	struct tput tp[4];
	double sapp[SNAP_APPENDS], ssnap[SNAP_APPENDS], srest[SNAP_RESTORES];
	int nsnap;
};

/* The command line: -n SAMPLES, -b BATCH, -t MS. */
static void parse_args(struct agreement *a, int argc, char **argv)
{
	const struct bench_opt opts[] = {
		BENCH_INT('n', "[-n SAMPLES]", &a->n),
		BENCH_INT('b', "[-b BATCH]", &a->k),
		BENCH_INT('t', "[-t MS]", &a->tput_ms),
	};

	a->n = 200;
	a->k = 16;
	a->tput_ms = 2000;
	bench_args("agreement", argc, argv, opts, 3);
	if (a->n < 1 || a->n > MAXN)
		a->n = MAXN;
	if (a->k < 2 || a->k > BATCH_MAX || a->tput_ms < 100 ||
	    a->tput_ms > 60000)
		bench_exit(2, "-b 2 to %d, -t 100 to 60000", BATCH_MAX);
}

/*
 * The memories and every region on them: a PMP and a Disk Paxos instance
 * per sample, the two logs, the raw region. Then the replicated memory,
 * the logs and the Cheap Quorum processes.
 */
static void setup(struct agreement *a)
{
	int i, ret;

	a->ctrl = bench_ctrl();
	bench_mems(a->ctrl, NR_MEMS, MEM_PORT, 0, a->mem);
	for (i = 0; i < NR_MEMS; i++)
		a->m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&a->mem[i].addr,
		};
	for (i = 0; i < a->n; i++) {
		region_everywhere(a->ctrl, a->mem, PMP_BASE + i, 4096,
				  SACRED_POLICY_EXCLUSIVE_WRITER);
		grant(a->ctrl, a->mem, PMP_BASE + i);
		region_everywhere(a->ctrl, a->mem, DISK_BASE + i, 4096,
				  SACRED_POLICY_STATIC);
	}
	/* Sizes as struct sacred_log_attr documents them, rounded up. */
	region_everywhere(a->ctrl, a->mem, LOG_REGION, 12 << 20,
			  SACRED_POLICY_EXCLUSIVE_WRITER);
	region_everywhere(a->ctrl, a->mem, HB_REGION, 4096,
			  SACRED_POLICY_STATIC);
	region_everywhere(a->ctrl, a->mem, BLOG_REGION,
			  (3ULL * 4096 * 2 * (a->k * CMD_LEN + 64) + 4096 +
			   4095) & ~4095ULL, SACRED_POLICY_EXCLUSIVE_WRITER);
	region_everywhere(a->ctrl, a->mem, BHB_REGION, 4096,
			  SACRED_POLICY_STATIC);
	region_everywhere(a->ctrl, a->mem, RAW_REGION, 4096,
			  SACRED_POLICY_STATIC);

	ret = sacred_rmem_create(&a->ra, &a->rm);
	if (ret)
		die("sacred_rmem_create", ret);
	ret = sacred_rmem_attach(a->rm, RAW_REGION, NULL);
	if (ret)
		die("attaching the raw region", ret);
	a->la.rm = a->rm;
	a->lb = a->la;
	a->lb.log_region = BLOG_REGION;
	a->lb.hb_region = BHB_REGION;
	a->lb.capacity = 4096;
	a->lb.entry_max = a->k * CMD_LEN;
	ret = open_log(&a->la, &a->log);
	if (!ret)
		ret = open_log(&a->lb, &a->blog);
	if (ret)
		die("sacred_log_open", ret);
	a->c0 = sacred_rmem_conn(a->rm, 0);
	cheapq_setup(a->mem, a->keydir, 2 * a->n + 1, a->th);
	for (i = 0; i < a->k; i++)
		snprintf(a->batch + i * CMD_LEN, CMD_LEN, "command %d", i);
}

/* Every path once, untimed; and the Ed25519 rows (no RDMA). */
static void warm_up(struct agreement *a)
{
	double bz, all;

	sacred_write(a->c0, RAW_REGION, 0, &a->one, sizeof(a->one));
	sacred_rmem_write(a->rm, RAW_REGION, 8, &a->one, sizeof(a->one), NULL);
	sacred_log_propose(a->log, a->entry, sizeof(a->entry), NULL);
	sacred_log_propose(a->blog, a->batch, a->k * CMD_LEN, NULL);
	a->used++;
	a->bused++;
	cheapq_decide(a->ctrl, a->mem,
		      CHEAPQ_BASE + CHEAPQ_REGIONS * 2 * a->n, 0, &bz, &all);
	bench_ed25519(a->n, a->x[SIGN], a->x[VERIFY]);
}

/*
 * Not timed: WARM_OPS quorum writes and writes, each after the stragglers
 * of the last quorum call. The last row of the previous turn, Cheap
 * Quorum's, leaves this thread asleep at barriers for milliseconds, and on
 * this rig a thread's first operations after a sleep - and the first on a
 * connection unused for as long - cost several times one made back to
 * back (bench/README.md); timed cold, these rows would flatter every ratio
 * to them.
 */
static void warm_turn(struct agreement *a)
{
	int k2;

	for (k2 = 0; k2 < WARM_OPS; k2++) {
		sacred_rmem_write(a->rm, RAW_REGION, 8, &a->one, sizeof(a->one),
				  NULL);
		drain(a->c0);
		sacred_write(a->c0, RAW_REGION, 0, &a->one, sizeof(a->one));
	}
}

/*
 * Sample @i of the write rows: raw write, 8 B and 80 B quorum writes.
 * False if the raw write found the connection busy (the turn is taken
 * again).
 */
static bool sample_writes(struct agreement *a, int i)
{
	double t0;
	int ret;

	t0 = now_us();
	ret = sacred_write(a->c0, RAW_REGION, 0, &a->one, sizeof(a->one));
	a->x[RAW][i] = now_us() - t0;
	if (ret == -EBUSY)
		return false;
	if (ret)
		die("sacred_write", ret);

	t0 = now_us();
	ret = sacred_rmem_write(a->rm, RAW_REGION, 8, &a->one, sizeof(a->one),
				NULL);
	a->x[QUORUM][i] = now_us() - t0;
	if (ret)
		die("sacred_rmem_write", ret);

	t0 = now_us();
	ret = sacred_rmem_write(a->rm, RAW_REGION, 64, a->cell,
				sizeof(a->cell), NULL);
	a->x[QCELL][i] = now_us() - t0;
	if (ret)
		die("sacred_rmem_write", ret);
	return true;
}

/* One append to @log of @len bytes, timed; @what names it in errors. */
static double timed_append(struct sacred_log *log, const void *buf,
			   size_t len, const char *what)
{
	double t0, t;
	int ret;

	sacred_log_poll(log);
	t0 = now_us();
	ret = sacred_log_propose(log, buf, len, NULL);
	t = now_us() - t0;
	if (ret)
		die(what, ret);
	return t;
}

/* Sample @i of the Cheap Quorum rows: together, then staggered. */
static void sample_cheapq(struct agreement *a, int i)
{
	double t, bz, all;

	a->x[CHEAPQ_LAT][i] = cheapq_decide(
		a->ctrl, a->mem, CHEAPQ_BASE + CHEAPQ_REGIONS * 2 * i, 0,
		&a->x[CHEAPQ_BZ][i], &a->x[CHEAPQ_ATTR][i]);
	a->x[CHEAPQ_REST][i] = a->x[CHEAPQ_LAT][i] - a->x[CHEAPQ_BZ][i];
	t = cheapq_decide(a->ctrl, a->mem,
			  CHEAPQ_BASE + CHEAPQ_REGIONS * (2 * i + 1),
			  CHEAPQ_STAGGER_US, &bz, &all);
	a->x[CHEAPQ_SREST][i] = t - bz;
}

/* The latency rows: one sample of every kind per turn, in turns. */
static void sample_latency(struct agreement *a)
{
	int i;

	for (i = 0; i < a->n; i++) {
		warm_turn(a);
		if (!sample_writes(a, i)) {
			i--;
			usleep(1000);
			continue;
		}
		a->x[PMP][i] = decide(a->rm, SACRED_PMP, PMP_BASE + i);
		a->x[DISK][i] = decide(a->rm, SACRED_DISK_PAXOS,
					DISK_BASE + i);
		a->x[APP][i] = timed_append(a->log, a->entry,
					     sizeof(a->entry),
					     "sacred_log_propose");
		a->used++;
		a->x[BAPP][i] = timed_append(a->blog, a->batch,
					      a->k * CMD_LEN,
					      "sacred_log_propose (batched)");
		a->bused++;
		sample_cheapq(a, i);
	}
}

/* 20 back-to-back operations of kind @kind into a->tp[kind]. */
static void tput_round(struct agreement *a, int kind)
{
	double t0;
	int j, ret = 0;

	if (kind == 2)
		sacred_log_poll(a->log);
	else if (kind == 3)
		sacred_log_poll(a->blog);
	t0 = now_us();
	for (j = 0; j < 20 && !ret; j++) {
		if (kind == 0)
			ret = sacred_write(a->c0, RAW_REGION, 0, &a->one,
					   sizeof(a->one));
		else if (kind == 1)
			ret = sacred_rmem_write(a->rm, RAW_REGION, 8,
						&a->one, sizeof(a->one), NULL);
		else if (kind == 2)
			ret = sacred_log_propose(a->log, a->entry,
						 sizeof(a->entry), NULL);
		else
			ret = sacred_log_propose(a->blog, a->batch,
						 a->k * CMD_LEN, NULL);
	}
	if (ret)
		die(kind == 0 ? "sacred_write" : kind == 1 ?
		    "sacred_rmem_write" : kind == 2 ? "sacred_log_propose" :
		    "sacred_log_propose (batched)", ret);
	a->tp[kind].us += now_us() - t0;
	a->tp[kind].ops += kind == 3 ? 20L * a->k : 20;
}

/*
 * Throughput: rounds of 20 back-to-back operations of each kind, in
 * turns, until each kind has run tput_ms (or its log is nearly full).
 */
static void sample_throughput(struct agreement *a)
{
	double until = a->tput_ms * 1e3;
	int kind;

	while (a->tp[0].us < until || a->tp[1].us < until ||
	       a->tp[2].us < until || a->tp[3].us < until) {
		if (a->used + 20 >= a->la.capacity ||
		    a->bused + 20 >= a->lb.capacity)
			break;
		drain(a->c0);
		for (kind = 0; kind < 4; kind++)
			tput_round(a, kind);
		a->used += 20;
		a->bused += 20;
	}
}

/* The first table: latencies, microseconds. */
static void report_latency(const struct agreement *a)
{
	const struct stats *s = a->s;

	printf("# agreement: deciding over three memories, microseconds\n\n");
	stats_head();
	stats_row("8 B write RTT (one memory)", s[RAW]);
	stats_row("8 B quorum write (2 of 3)", s[QUORUM]);
	stats_row("80 B quorum write (a PMP cell)", s[QCELL]);
	stats_row("PMP decision (fast path)", s[PMP]);
	stats_row("Disk Paxos decision (fast path)", s[DISK]);
	stats_row("log append (stable leader)", s[APP]);
	printf("| log append, %d x %d B commands packed in one entry (client-side batching) | %.1f | %.1f | %.1f | %d |\n",
	       a->k, CMD_LEN, s[BAPP].min, s[BAPP].med, s[BAPP].p99,
	       s[BAPP].n);
	stats_row("Cheap Quorum fast path, leader's decision", s[CHEAPQ_LAT]);
	stats_row("Cheap Quorum fast path, leader's decision: its own signing and verifying (time inside sacred_bz_sign/verify)",
	    s[CHEAPQ_BZ]);
	stats_row("Cheap Quorum fast path, leader's decision minus its own signing and verifying (per sample)",
	    s[CHEAPQ_REST]);
	stats_row("Cheap Quorum fast path, leader's decision minus its own signing and verifying, the followers starting 5 ms later (per sample)",
	    s[CHEAPQ_SREST]);
	stats_row("Cheap Quorum fast path, until all three decided",
		  s[CHEAPQ_ATTR]);
	if (cheapq_slow)
		printf("| Cheap Quorum: process decisions off the fast path (panic, backup) | %d of %d | - | - | - |\n",
		       cheapq_slow, NR_PROCS * (2 * a->n + 1));
	stats_row("Ed25519 sign, 64 B (sacred_bz_sign)", s[SIGN]);
	stats_row("Ed25519 verify, 64 B (sacred_bz_verify)", s[VERIFY]);
}

static void report_throughput(const struct agreement *a)
{
	const struct tput *tp = a->tp;
	int i;

	printf("\n## Throughput\n\n");
	printf("One client thread, back-to-back operations (each waits for the last), rounds of 20 of each kind in turns. A batched entry counts as %d commands.\n\n",
	       a->k);
	printf("| operation | ops/s | operations | seconds |\n|---|---|---|---|\n");
	for (i = 0; i < 4; i++) {
		char what[96];

		if (i == 3)
			snprintf(what, sizeof(what),
				 "log append, %d commands per entry (client-packed), commands/s",
				 a->k);
		printf("| %s | %.0f | %ld | %.2f |\n", i == 3 ? what : tp[i].what,
		       tp[i].us > 0 ? tp[i].ops / (tp[i].us / 1e6) : 0.0,
		       tp[i].ops, tp[i].us / 1e6);
	}
}

static void report_snapshots(struct agreement *a)
{
	printf("\n## A log with snapshots\n\n");
	printf("A window of %d entries of %d B, a state of %d KiB: the leader writes a snapshot every %d appends (in pieces of at most max_io, %d KiB, each to a quorum in order at each memory). Appends back to back (the rows above are taken in turns with other kinds: not comparable). A follower opened again %d times, far behind, the leader polling too: open, restore the newest snapshot, deliver the rest.\n\n",
	       SNAP_WINDOW, CMD_LEN, SNAP_STATE / 1024, SNAP_WINDOW / 2,
	       (int)(a->ra.max_io / 1024), SNAP_RESTORES);
	stats_head();
	stats_row("log append with snapshots, every append",
		  summarize(a->sapp, SNAP_APPENDS));
	stats_row("log append with snapshots, the appends that wrote one first",
		  summarize(a->ssnap, a->nsnap));
	stats_row("follower opened again: until it delivered everything",
		  summarize(a->srest, SNAP_RESTORES));
}

/* A ratio row: | what | measured | target |. */
static void ratio_row(const char *what, double x, const char *target)
{
	printf("| %s | %.2f | %s |\n", what, x, target);
}

/* The ratios the project targets, and the rig's own. */
static void report_ratios(const struct agreement *a)
{
	const struct stats *s = a->s;
	const struct tput *tp = a->tp;

	printf("\n| ratio (medians) | measured | target |\n|---|---|---|\n");
	ratio_row("PMP / write RTT", s[PMP].med / s[RAW].med, "<= 1.3");
	ratio_row("quorum write / write RTT (the rig's floor)",
		  s[QUORUM].med / s[RAW].med, "-");
	ratio_row("PMP / 80 B quorum write", s[PMP].med / s[QCELL].med, "-");
	ratio_row("log append / write RTT", s[APP].med / s[RAW].med, "-");
	ratio_row("Disk Paxos / PMP", s[DISK].med / s[PMP].med, ">= 1.7");
	ratio_row("Cheap Quorum leader / PMP", s[CHEAPQ_LAT].med / s[PMP].med,
		  "<= 1.5");
	ratio_row("Cheap Quorum leader excluding its own signing and verifying (their time subtracted per sample) / PMP",
		  s[CHEAPQ_REST].med / s[PMP].med, "<= 1.5");
	ratio_row("Cheap Quorum leader alone (the followers start 5 ms later), excluding its own signing and verifying / PMP",
		  s[CHEAPQ_SREST].med / s[PMP].med, "-");
	ratio_row("batched commands/s / unbatched appends/s",
		  tp[3].us > 0 && tp[2].ops ?
		  (tp[3].ops / tp[3].us) / (tp[2].ops / tp[2].us) : 0.0, "-");
	ratio_row("log appends/s / raw write ops/s",
		  tp[0].ops && tp[2].us > 0 ?
		  (tp[2].ops / tp[2].us) / (tp[0].ops / tp[0].us) : 0.0, "-");
}

static void teardown(struct agreement *a)
{
	int i;

	cheapq_teardown(a->keydir, a->th);
	sacred_log_close(a->log);
	sacred_log_close(a->blog);
	sacred_rmem_destroy(a->rm);
	for (i = 0; i < NR_MEMS; i++)
		sacred_mem_del(a->ctrl, a->mem[i].id);
	sacred_ctrl_close(a->ctrl);
}

int main(int argc, char **argv)
{
	static struct agreement a = {
		.ra = {
			.process_id = PID(0),
			.nr_mems = NR_MEMS,
			.max_io = 65536,
		},
		.la = {
			BENCH_LOG_ATTR(LOG_REGION, HB_REGION, NR_PROCS, 16384,
				       CMD_LEN, 1000),
		},
		.tp = {
			{ .what = "8 B write, one memory (raw write ops/s)" },
			{ .what = "8 B quorum write (2 of 3)" },
			{ .what = "log append, 1 command per entry" },
			{ .what = "log append, BATCH commands per entry (client-packed)" },
		},
		.one = 1,
		.entry = "entry",
		.keydir = "/tmp/agreement-keys.XXXXXX",
	};
	int i;

	parse_args(&a, argc, argv);
	a.ra.mems = a.m;
	bench_rig_devs();
	setup(&a);
	warm_up(&a);
	sample_latency(&a);
	sample_throughput(&a);
	bench_snapshots(a.ctrl, a.mem, a.rm, &a.ra, a.sapp, a.ssnap, &a.nsnap,
			a.srest);
	for (i = 0; i < NR_SERIES; i++)
		a.s[i] = summarize(a.x[i], a.n);
	report_latency(&a);
	report_throughput(&a);
	report_snapshots(&a);
	report_ratios(&a);
	bench_footer(" in the guest");
	teardown(&a);
	return 0;
}
