// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_log - the replicated log on three memory instances: a stable
 * leader appending, the leader crashing and a follower taking over, the
 * crashed leader coming back (and, unsure of its own cells, letting the
 * others lead until it can tell), an old leader that wakes up after it
 * was fenced, and a minority of memories going down under appends; and
 * a log with snapshots running far past its window of slots, with a
 * process coming back after its start was overwritten, a fail-over, and
 * a snapshot the application cannot take. Three processes (threads with
 * a replicated-memory handle each) drive their logs; every entry each
 * one delivers is stored (the snapshots are that store), every append
 * and delivery is recorded with its times, and every run checks: for
 * every index, every process delivered the same entry; every entry was
 * proposed; every entry a leader saw committed is in the log; and the
 * record of appends and deliveries is linearizable
 * (selftests/sacred_lincheck.h).
 *
 * Regions, the same ids on every instance: LOG (exclusive-writer, all
 * read-write), HB (static, all read-write); TRIM and SMALL for the logs
 * with snapshots.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_lincheck.h"
#include "sacred_log_state.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7531
#define NR_MEMS		3
#define NR_PROCS	3
#define PID(i)		(601 + (i))
#define LOG_REGION	1
#define HB_REGION	2
#define TRIM_REGION	3
#define SMALL_REGION	4
#define CAPACITY	256
#define ENTRY_MAX	64
#define ENTRY_LEN	32
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define LC_STEPS	10000000	/* the checker's bound: undecided fails */

/*
 * Every operation on the log, by every process and incarnation: appends
 * (recorded before they are proposed, with an unknown outcome until the
 * answer comes) and deliveries, each a read of one position at the
 * instant of the commit or restore callback.
 */
struct oprec {
	pthread_mutex_t lock;
	struct lc_op *ops;
	size_t n, cap;
	bool nomem;
};

struct proc {
	unsigned int me;
	struct sacred_rmem *rm;
	struct sacred_log *log;
	pthread_t thread;
	bool running;
	atomic_bool stop;	/* end the thread (and crash: drop the handle) */
	atomic_bool crash;
	atomic_bool pause;	/* stop polling and proposing: a hung process */
	atomic_bool parked;	/* the thread saw pause: its handle is free */
	unsigned int suspect_ms;	/* the log's; 0: 300 */
	int calm_timeouts;		/* the log's; 0: its default */
	/* After each poll: the log's timeout for each process. */
	atomic_uint timeout_ms[NR_PROCS];
	atomic_int target;	/* propose while leader until this many applied */
	/* Delivered entries, by index. */
	char hist[CAPACITY][ENTRY_LEN];
	atomic_uint applied;
	/* Entries this process saw committed as leader. */
	char mine[CAPACITY][ENTRY_LEN];
	unsigned int nr_mine;
	unsigned int proposed;
	int last_err;
	atomic_uint refused;	/* proposals refused after a fence */
	uint64_t first_commit_ms;
	atomic_uint max_poll_ms;	/* the longest sacred_log_poll() */
	/* A log with snapshots: its window (0: none), region and max_io. */
	unsigned int window;
	uint32_t log_region;
	size_t max_io;
	atomic_bool snap_fail;		/* the snapshot callback fails */
	atomic_uint nospc;		/* proposals refused with -ENOSPC */
	atomic_uint bad_snap;		/* callbacks called out of turn */
	struct oprec *rec;
};

FIXTURE(log) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	bool have[NR_MEMS];
	struct proc p[NR_PROCS];
	struct sacred_rmem_member m[NR_MEMS];
	struct oprec rec;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* An entry "P<q>#<j>" as a value for the checker; -1 if it is not one. */
static int64_t entry_value(const char *e, size_t len)
{
	unsigned int q, j;
	char s[ENTRY_LEN + 1];
	int end = 0;

	memcpy(s, e, len < ENTRY_LEN ? len : ENTRY_LEN);
	s[len < ENTRY_LEN ? len : ENTRY_LEN] = '\0';
	if (sscanf(s, "P%u#%u%n", &q, &j, &end) != 2 || s[end] ||
	    q >= NR_PROCS || j >= 1000000)
		return -1;
	return 1 + (int64_t)q * 1000000 + j;
}

/* Record @op; its index in the record, or -1 (the record is then bad). */
static long record(struct oprec *r, const struct lc_op *op)
{
	long i = -1;

	pthread_mutex_lock(&r->lock);
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		struct lc_op *ops = realloc(r->ops, cap * sizeof(*ops));

		if (!ops) {
			r->nomem = true;
			goto out;
		}
		r->ops = ops;
		r->cap = cap;
	}
	r->ops[r->n] = *op;
	i = r->n++;
out:
	pthread_mutex_unlock(&r->lock);
	return i;
}

/* Process @p delivered @data at @index. */
static void record_read(struct proc *p, uint64_t index, const void *data,
			size_t len)
{
	uint64_t t = now_ns();
	struct lc_op op = {
		.call = t, .done = t, .kind = LC_READ, .outcome = LC_OK,
		.val = index, .out = entry_value(data, len),
	};

	record(p->rec, &op);
}

/*
 * sacred_log_propose() of @entry by @p, recorded: ok with its position,
 * failed when the log says nothing was written (it does not lead, the
 * log is full), else unknown - it may be delivered still.
 */
static int propose_rec(struct proc *p, const char *entry, uint64_t *index)
{
	struct lc_op op = {
		.kind = LC_APPEND, .outcome = LC_UNKNOWN,
		.val = entry_value(entry, ENTRY_LEN),
	};
	uint64_t at;
	long i;
	int ret;

	op.call = now_ns();
	i = record(p->rec, &op);
	ret = sacred_log_propose(p->log, entry, ENTRY_LEN, &at);
	if (i < 0)
		return ret;
	pthread_mutex_lock(&p->rec->lock);
	if (!ret) {
		p->rec->ops[i].outcome = LC_OK;
		p->rec->ops[i].done = now_ns();
		p->rec->ops[i].out = at;
	} else if (ret == -EREMOTE || ret == -ENOSPC || ret == -EINVAL ||
		   ret == -EMSGSIZE) {
		p->rec->ops[i].outcome = LC_FAILED;
	}
	pthread_mutex_unlock(&p->rec->lock);
	if (!ret && index)
		*index = at;
	return ret;
}

static void on_commit(void *arg, uint64_t index, const void *data, size_t len)
{
	struct proc *p = arg;

	record_read(p, index, data, len);
	log_state_commit(p->hist, ENTRY_LEN, CAPACITY, &p->applied, index,
			 data, len);
}

/* The state is the entries delivered (selftests/sacred_log_state.h). */
static ssize_t on_snapshot(void *arg, uint64_t applied, void *buf,
			   size_t max)
{
	struct proc *p = arg;
	ssize_t ret;

	if (atomic_load(&p->snap_fail))
		return -ENOSPC;
	ret = log_state_snapshot(p->hist, ENTRY_LEN, CAPACITY,
				 &p->applied, applied, buf, max);
	if (ret < 0)
		atomic_fetch_add(&p->bad_snap, 1);
	return ret;
}

static int on_restore(void *arg, uint64_t applied, const void *buf,
		      size_t len)
{
	struct proc *p = arg;

	uint64_t i;
	int ret;

	ret = log_state_restore(p->hist, ENTRY_LEN, CAPACITY, &p->applied,
				applied, buf, len);
	if (ret)
		atomic_fetch_add(&p->bad_snap, 1);
	for (i = 0; !ret && i < applied; i++)
		record_read(p, i, (const char *)buf + i * ENTRY_LEN,
			    ENTRY_LEN);
	return ret;
}

/* A crash: no goodbye, the log handle and the connections just go. */
static void proc_drop(struct proc *p)
{
	sacred_log_close(p->log);
	p->log = NULL;
	sacred_rmem_destroy(p->rm);
	p->rm = NULL;
}

static void *proc_thread(void *arg)
{
	struct proc *p = arg;
	char entry[ENTRY_LEN];
	uint64_t index, t;
	unsigned int i;
	int ret;

	while (!atomic_load(&p->stop)) {
		if (atomic_load(&p->pause)) {
			atomic_store(&p->parked, true);
			usleep(5000);
			continue;
		}
		atomic_store(&p->parked, false);
		t = now_ms();
		sacred_log_poll(p->log);
		t = now_ms() - t;
		if (t > atomic_load(&p->max_poll_ms))
			atomic_store(&p->max_poll_ms, t);
		for (i = 0; i < NR_PROCS; i++)
			atomic_store(&p->timeout_ms[i],
				     sacred_log_suspect_ms(p->log, i));
		if (sacred_log_is_leader(p->log) &&
		    (int)atomic_load(&p->applied) < atomic_load(&p->target)) {
			memset(entry, 0, sizeof(entry));
			snprintf(entry, sizeof(entry), "P%u#%u", p->me,
				 p->proposed++);
			ret = propose_rec(p, entry, &index);
			if (!ret) {
				if (!p->first_commit_ms)
					p->first_commit_ms = now_ms();
				memcpy(p->mine[p->nr_mine++ % CAPACITY], entry,
				       sizeof(entry));
			} else {
				p->last_err = ret;
				if (ret == -EACCES)
					atomic_fetch_add(&p->refused, 1);
				if (ret == -ENOSPC) {
					atomic_fetch_add(&p->nospc, 1);
					usleep(1000);
				}
			}
			continue;
		}
		usleep(1000);
	}
	if (atomic_load(&p->crash))
		proc_drop(p);
	return NULL;
}

static int region_everywhere(struct sacred_ctrl *ctrl,
			     struct sacred_mem_info *mem, uint32_t id,
			     uint64_t size, uint8_t policy)
{
	return region_on_all(ctrl, mem, NR_MEMS, id, size, policy, PID(0),
			     NR_PROCS, -1);
}

/* Process @p's log, as it opens it. */
static struct sacred_log_attr proc_log_attr(struct proc *p)
{
	struct sacred_log_attr la = {
		.rm = p->rm,
		.log_region = p->window ? p->log_region : LOG_REGION,
		.hb_region = HB_REGION,
		.nr_procs = NR_PROCS,
		.me = p->me,
		.capacity = p->window ? p->window : CAPACITY,
		.entry_max = ENTRY_MAX,
		.hb_period_ms = 10,
		.suspect_ms = p->suspect_ms ? p->suspect_ms : 300,
		.calm_timeouts = p->calm_timeouts,
		.commit = on_commit,
		.arg = p,
	};

	if (p->window) {
		la.snapshot_max = CAPACITY * ENTRY_LEN;
		la.snapshot = on_snapshot;
		la.restore = on_restore;
	}
	return la;
}

/* Open process @p's log on its replicated memory. */
static int proc_open(struct proc *p)
{
	struct sacred_log_attr la = proc_log_attr(p);

	return sacred_log_open(&la, &p->log);
}

static int proc_start(FIXTURE_DATA(log) *self, unsigned int i)
{
	struct sacred_rmem_attr ra = {
		.process_id = PID(i),
		.nr_mems = NR_MEMS,
		.mems = self->m,
		.max_io = self->p[i].max_io ? self->p[i].max_io : 65536,
	};
	struct proc *p = &self->p[i];
	int ret;

	p->me = i;
	p->rec = &self->rec;
	ret = sacred_rmem_create(&ra, &p->rm);
	if (ret)
		return ret;
	ret = proc_open(p);
	if (ret)
		return ret;
	ret = pthread_create(&p->thread, NULL, proc_thread, p);
	p->running = !ret;
	return ret;
}

static void proc_stop(struct proc *p, bool crash)
{
	if (!p->running)
		return;
	p->running = false;
	atomic_store(&p->crash, crash);
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
}

/*
 * Process @i, crashed, comes back with its id: a new incarnation that
 * delivers the log again from the start. What it saw committed as leader
 * before stays in its record.
 */
static int proc_restart(FIXTURE_DATA(log) *self, unsigned int i)
{
	struct proc *p = &self->p[i];

	atomic_store(&p->stop, false);
	atomic_store(&p->crash, false);
	atomic_store(&p->applied, 0);
	memset(p->hist, 0, sizeof(p->hist));
	p->first_commit_ms = 0;
	return proc_start(self, i);
}

FIXTURE_SETUP(log)
{
	unsigned int i;

	pthread_mutex_init(&self->rec.lock, NULL);
	if (!st_open(_metadata, &self->ctrl, NR_MEMS, 0))
		return;
	ASSERT_EQ(0, mems_new(self->ctrl, NR_MEMS, TEST_CM_PORT, self->mem,
			      self->have, self->m));
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, LOG_REGION,
				       1 << 20,
				       SACRED_POLICY_EXCLUSIVE_WRITER));
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, HB_REGION,
				       4096, SACRED_POLICY_STATIC));
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, proc_start(self, i));
}

FIXTURE_TEARDOWN(log)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		proc_stop(&self->p[i], false);
		sacred_log_close(self->p[i].log);
		sacred_rmem_destroy(self->p[i].rm);
	}
	mems_del(self->ctrl, self->mem, self->have, NR_MEMS);
	free(self->rec.ops);
}

/* Wait until every process in @mask applied @n entries; false on timeout. */
static bool wait_applied(FIXTURE_DATA(log) *self, unsigned int mask,
			 unsigned int n, int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	unsigned int i;

	while (now_ms() < end) {
		bool all = true;

		for (i = 0; i < NR_PROCS; i++)
			if (mask & (1U << i) &&
			    atomic_load(&self->p[i].applied) < n)
				all = false;
		if (all)
			return true;
		usleep(5000);
	}
	return false;
}

/*
 * Every operation any process did on the log, checked for
 * linearizability (selftests/sacred_lincheck.h): each delivery must read
 * what the one sequence of appends put at its position by then, each
 * answered append take effect once within its call, at the position it
 * was told, and one with no answer at most once, any time after its call.
 */
static bool linearizable(struct __test_metadata *_metadata,
			 FIXTURE_DATA(log) *self)
{
	struct oprec *r = &self->rec;
	struct lc_result res;
	struct lc_op *ops;
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->n;
	ops = malloc((n ? n : 1) * sizeof(*ops));
	if (ops)
		memcpy(ops, r->ops, n * sizeof(*ops));
	pthread_mutex_unlock(&r->lock);
	if (!ops || r->nomem) {
		TH_LOG("no memory for the history");
		free(ops);
		return false;
	}
	lc_check(ops, n, true, LC_STEPS, &res);
	TH_LOG("history checked: %zu operations (%zu unanswered appends), %llu search steps: %s",
	       res.ops, res.unknown, (unsigned long long)res.steps,
	       lc_verdict_name(res.verdict));
	if (res.verdict != LC_LINEARIZABLE)
		TH_LOG("at most %zu of them in one order", res.bad_depth);
	free(ops);
	return res.verdict == LC_LINEARIZABLE;
}

/*
 * The history check: the record of every process linearizable; same
 * entry at every index for every process in @mask, every entry
 * well-formed (proposed by someone), and every entry a process saw
 * committed while leading is in the log.
 */
static bool history_ok(struct __test_metadata *_metadata,
		       FIXTURE_DATA(log) *self, unsigned int mask)
{
	unsigned int i, j, k, n = 0, q;

	if (!linearizable(_metadata, self))
		return false;

	for (i = 0; i < NR_PROCS; i++)
		if (mask & (1U << i) && atomic_load(&self->p[i].applied) > n)
			n = atomic_load(&self->p[i].applied);
	for (k = 0; k < n; k++) {
		const char *e = NULL;

		for (i = 0; i < NR_PROCS; i++) {
			if (!(mask & (1U << i)) ||
			    k >= atomic_load(&self->p[i].applied))
				continue;
			if (!e)
				e = self->p[i].hist[k];
			if (strcmp(e, self->p[i].hist[k])) {
				TH_LOG("index %u: \"%s\" vs \"%s\" (P%u)", k,
				       e, self->p[i].hist[k], i);
				return false;
			}
			if (sscanf(e, "P%u#%u", &q, &j) != 2 || q >= NR_PROCS) {
				TH_LOG("index %u: \"%s\" was never proposed",
				       k, e);
				return false;
			}
		}
	}
	/* Committed entries survive. */
	for (i = 0; i < NR_PROCS; i++) {
		for (j = 0; j < self->p[i].nr_mine && j < CAPACITY; j++) {
			bool found = false;

			for (q = 0; q < NR_PROCS && !found; q++) {
				unsigned int a;

				if (!(mask & (1U << q)))
					continue;
				a = atomic_load(&self->p[q].applied);
				for (k = 0; k < a && !found; k++)
					found = !strcmp(self->p[q].hist[k],
							self->p[i].mine[j]);
			}
			if (!found) {
				TH_LOG("committed \"%s\" of P%u was lost",
				       self->p[i].mine[j], i);
				return false;
			}
		}
	}
	return true;
}

static void set_target(FIXTURE_DATA(log) *self, int n)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++)
		atomic_store(&self->p[i].target, n);
}

/*
 * Every process drops its log and opens one with snapshots instead:
 * region TRIM, a window of @window slots, reads and writes of at most
 * 4 KiB - so that a snapshot of the whole history (8 KiB) is written and
 * read in pieces.
 */
static void use_trimmed_log(struct __test_metadata *_metadata,
			    FIXTURE_DATA(log) *self, unsigned int window)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		struct proc *p = &self->p[i];

		proc_stop(p, false);
		proc_drop(p);
		atomic_store(&p->stop, false);
		atomic_store(&p->applied, 0);
		memset(p->hist, 0, sizeof(p->hist));
		p->nr_mine = 0;
		p->first_commit_ms = 0;
		p->window = window;
		p->log_region = TRIM_REGION;
		p->max_io = 4096;
	}
	self->rec.n = 0;	/* a new log */
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, TRIM_REGION,
				       1 << 20,
				       SACRED_POLICY_EXCLUSIVE_WRITER));
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, proc_start(self, i));
}

/* The counters of every process, summed; the processes are stopped. */
static void trimmed_stats(struct __test_metadata *_metadata,
			  FIXTURE_DATA(log) *self,
			  struct sacred_log_stats *sum, unsigned int *bad)
{
	struct sacred_log_stats st;
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	*bad = 0;
	for (i = 0; i < NR_PROCS; i++) {
		proc_stop(&self->p[i], false);
		*bad += atomic_load(&self->p[i].bad_snap);
		if (!self->p[i].log)
			continue;
		sacred_log_stats(self->p[i].log, &st);
		TH_LOG("P%u: %llu appends, %llu snapshots, %llu restores",
		       i, (unsigned long long)st.appends,
		       (unsigned long long)st.snapshots,
		       (unsigned long long)st.restores);
		sum->appends += st.appends;
		sum->snapshots += st.snapshots;
		sum->restores += st.restores;
	}
}

TEST_F(log, stable_leader_appends_followers_follow)
{
	struct sacred_log_stats st;

	set_target(self, 60);
	ASSERT_TRUE(wait_applied(self, 7, 60, 20000));
	EXPECT_TRUE(history_ok(_metadata, self, 7));
	proc_stop(&self->p[0], false);
	sacred_log_stats(self->p[0].log, &st);
	TH_LOG("P0: %llu appends, %llu takeovers, %llu round trips",
	       (unsigned long long)st.appends,
	       (unsigned long long)st.takeovers,
	       (unsigned long long)st.round_trips);
	EXPECT_LE(60, st.appends);
	EXPECT_EQ(0, strncmp(self->p[1].hist[0], "P0#", 3));
}

TEST_F(log, leader_crash_fail_over)
{
	uint64_t t_crash;
	unsigned int i;

	set_target(self, 20);
	ASSERT_TRUE(wait_applied(self, 7, 20, 20000));
	/*
	 * The leader crashes with appends on the way: it would stop at 40,
	 * the survivors at 60, so entries 40 to 59 need a new leader even
	 * when the old one is fast enough to append all its own
	 * before it is killed.
	 */
	set_target(self, 60);
	atomic_store(&self->p[0].target, 40);
	ASSERT_TRUE(wait_applied(self, 1, 25, 20000));
	t_crash = now_ms();
	proc_stop(&self->p[0], true);
	ASSERT_TRUE(wait_applied(self, 6, 60, 30000));
	for (i = 1; i < NR_PROCS; i++)
		if (self->p[i].first_commit_ms)
			TH_LOG("P%u led: first commit %llu ms after the crash",
			       i, (unsigned long long)
			       (self->p[i].first_commit_ms - t_crash));
	/* P1 normally; P2 if it suspected P1 too (a busy host). */
	EXPECT_TRUE(self->p[1].first_commit_ms || self->p[2].first_commit_ms);
	/* P0's committed entries count: compare against its record. */
	EXPECT_TRUE(history_ok(_metadata, self, 6));
	for (i = 0; i < self->p[0].nr_mine; i++) {
		bool found = false;
		unsigned int k;

		for (k = 0; k < atomic_load(&self->p[1].applied); k++)
			found |= !strcmp(self->p[1].hist[k],
					 self->p[0].mine[i]);
		EXPECT_TRUE(found) TH_LOG("lost %s", self->p[0].mine[i]);
	}
}

/*
 * A dead process's last heartbeat write may have landed on some memories
 * only; quorum reads over different memories then see its counter go
 * back and forth between two values (seen across VMs under the debug
 * kernel: the survivors took that for a live leader and stepped down for
 * good). Only a counter above the highest seen is a sign of life. Here
 * P0 crashes and its word goes back and forth - written by a stand-in
 * with P0's id, as those reads would see it: P1 must still take over.
 */
TEST_F(log, heartbeat_going_back_and_forth_is_no_sign_of_life)
{
	struct sacred_rmem_attr ra = {
		.process_id = PID(0),
		.nr_mems = NR_MEMS,
		.mems = self->m,
		.max_io = 4096,
	};
	uint8_t words[NR_MEMS][8];
	void *bufs[NR_MEMS];
	struct sacred_rmem *ghost;
	uint64_t h = 0, v, t0 = 0, end;
	unsigned int i, k;
	int leader = -1, ret;

	set_target(self, 5);
	ASSERT_TRUE(wait_applied(self, 7, 5, 20000));
	proc_stop(&self->p[0], true);
	ASSERT_EQ(0, sacred_rmem_create(&ra, &ghost));
	ASSERT_EQ(0, sacred_rmem_attach(ghost, HB_REGION, NULL));
	for (k = 0; k < NR_MEMS; k++)
		bufs[k] = words[k];
	/*
	 * The stand-in connects as P0: a takeover that began meanwhile
	 * fences its connections as P0's (seen under the debug kernel).
	 */
	for (i = 0; i < 5; i++) {
		ret = sacred_rmem_read(ghost, HB_REGION, 0, bufs, 8, false,
				       NULL);
		if (ret != -ECONNRESET)
			break;
		sacred_rmem_revive(ghost);
	}
	ASSERT_EQ(0, ret);
	for (k = 0; k < NR_MEMS; k++) {
		memcpy(&v, words[k], 8);
		if (le64toh(v) > h)
			h = le64toh(v);
	}
	/* h + 1, h + 2, h + 1, h + 2, ... every 20 ms, for up to 5 s. */
	end = now_ms() + 5000;
	for (i = 0; now_ms() < end && leader < 1; i++) {
		v = htole64(h + 1 + (i & 1));
		sacred_rmem_write(ghost, HB_REGION, 0, &v, sizeof(v), NULL);
		if (!t0)
			t0 = now_ms();
		usleep(20000);
		for (k = 1; k < NR_PROCS; k++)
			if (sacred_log_is_leader(self->p[k].log))
				leader = k;
	}
	TH_LOG("P%d leads %llu ms after P0's word began to go back and forth",
	       leader, (unsigned long long)(now_ms() - t0));
	EXPECT_LE(1, leader);
	sacred_rmem_destroy(ghost);
	set_target(self, 10);
	EXPECT_TRUE(wait_applied(self, 6, 10, 20000));
}

TEST_F(log, crashed_leader_comes_back_and_leads_again)
{
	struct sacred_log_stats st;

	set_target(self, 40);
	atomic_store(&self->p[0].target, 20);
	ASSERT_TRUE(wait_applied(self, 7, 20, 20000));
	proc_stop(&self->p[0], true);
	ASSERT_TRUE(wait_applied(self, 6, 40, 30000));

	/*
	 * P0 comes back: it delivers the log again from the start and, the
	 * lowest id alive once its heartbeat moves, takes over from P1 -
	 * with a ballot above its own old promise, keeping the cells that
	 * hold its decided entries - and appends what nobody else will.
	 */
	ASSERT_EQ(0, proc_restart(self, 0));
	atomic_store(&self->p[0].target, 60);
	ASSERT_TRUE(wait_applied(self, 7, 60, 30000));
	EXPECT_TRUE(self->p[0].first_commit_ms)
		TH_LOG("P0 did not lead again");
	EXPECT_TRUE(history_ok(_metadata, self, 7));
	sacred_log_stats(self->p[0].log, &st);
	TH_LOG("P0 again: %llu takeovers, %llu entries recovered, %llu appends",
	       (unsigned long long)st.takeovers,
	       (unsigned long long)st.recovered,
	       (unsigned long long)st.appends);
}

/*
 * P0 leads with memory 2 down - its metas (the commit, on every tick) go
 * to memories 0 and 1 only - and crashes. Memory 2 comes back, memory 0
 * goes down, P1 leads on. P0 comes back: of the memories that answer,
 * only memory 1 holds its newest meta, and memory 0 may hold it too, so
 * it cannot tell which meta cell to keep and must not take over. It
 * abstains - heartbeat still, out of the election - and P1 and P2 go on
 * appending. Memory 0 back: P0 settles, stands, leads, appends.
 */
TEST_F(log, restarted_process_unsure_of_its_cells_lets_the_others_lead)
{
	set_target(self, 10);
	ASSERT_TRUE(wait_applied(self, 7, 10, 20000));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	set_target(self, 20);
	ASSERT_TRUE(wait_applied(self, 7, 20, 30000));
	usleep(100000);		/* a few ticks: P0's meta has commit 20 */
	proc_stop(&self->p[0], true);

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_UP, 0, NULL));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	set_target(self, 30);
	ASSERT_TRUE(wait_applied(self, 6, 30, 30000));

	ASSERT_EQ(0, proc_restart(self, 0));
	set_target(self, 45);
	atomic_store(&self->p[0].target, 0);
	ASSERT_TRUE(wait_applied(self, 6, 45, 30000))
		TH_LOG("P1 and P2 stopped while P0 could not lead");
	EXPECT_FALSE(self->p[0].first_commit_ms);

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_UP, 0, NULL));
	set_target(self, 45);
	atomic_store(&self->p[0].target, 60);
	ASSERT_TRUE(wait_applied(self, 7, 60, 30000));
	EXPECT_TRUE(self->p[0].first_commit_ms)
		TH_LOG("P0 did not lead again");
	EXPECT_TRUE(history_ok(_metadata, self, 7));
}

/* The log's layout (lib/log.c's header comment), to look at P0's cells. */
#define META_CELL	((SACRED_CELL_HDR + 16 + 7) & ~7)
#define ENTRY_CELL	((SACRED_CELL_HDR + 32 + ENTRY_MAX + 7) & ~7)
#define AREAS		((NR_PROCS * 2 * META_CELL + 63) & ~63)
#define REOPEN_N	5

/* The newest valid cell of P0's pair at index @i in @area, or -1. */
static int own_newest(const uint8_t *area, unsigned int i,
		      struct sacred_cell_view *v)
{
	struct sacred_cell_view c[2];
	bool ok[2];
	int j;

	for (j = 0; j < 2; j++)
		ok[j] = !sacred_cell_decode(area + (i * 2 + j) * ENTRY_CELL,
					    ENTRY_CELL, &c[j]);
	j = ok[0] && (!ok[1] || c[0].seq > c[1].seq) ? 0 : 1;
	if (!ok[j])
		return -1;
	*v = c[j];
	return j;
}

/* P0's area, indices [0, REOPEN_N], from every memory that answers. */
static uint32_t read_own_area(struct proc *p, uint8_t (*area)[2048])
{
	struct sacred_rmem_result res = {};
	void *bufs[NR_MEMS];
	unsigned int k;

	for (k = 0; k < NR_MEMS; k++)
		bufs[k] = area[k];
	if (sacred_rmem_read(p->rm, LOG_REGION, AREAS, bufs,
			     (REOPEN_N + 1) * 2 * ENTRY_CELL, true, &res))
		return 0;
	return res.ok;
}

/*
 * Leader @i proposes its next entry, driven from the test thread (its
 * own thread parked or stopped), and records it as committed when it
 * is; returns sacred_log_propose()'s result.
 */
static int propose_for(FIXTURE_DATA(log) *self, unsigned int i)
{
	struct proc *p = &self->p[i];
	char entry[ENTRY_LEN] = {};
	int ret;

	snprintf(entry, sizeof(entry), "P%u#%u", i, p->proposed++);
	ret = propose_rec(p, entry, NULL);
	if (!ret)
		memcpy(p->mine[p->nr_mine++ % CAPACITY], entry, sizeof(entry));
	return ret;
}

/*
 * P0 alone, driven from the test thread: P1 and P2 crash, P0's thread
 * stops, memory 2 goes down, and P0 polls until it leads.
 */
static void lead_alone(struct __test_metadata *_metadata,
		       FIXTURE_DATA(log) *self)
{
	struct proc *p = &self->p[0];
	uint64_t end;

	proc_stop(&self->p[1], true);
	proc_stop(&self->p[2], true);
	proc_stop(p, false);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	for (end = now_ms() + 20000;
	     !sacred_log_is_leader(p->log) && now_ms() < end;)
		sacred_log_poll(p->log);
	ASSERT_TRUE(sacred_log_is_leader(p->log));
}

TEST_F(log, reopened_leader_keeps_its_last_complete_cells)
{
	static uint8_t before[NR_MEMS][2048], after[NR_MEMS][2048];
	struct proc *p = &self->p[0];
	struct sacred_log_stats st;
	struct sacred_cell_view v, w;
	bool enotconn = false;
	char entry[ENTRY_LEN];
	unsigned int i, k;
	uint64_t end, index;
	int c, ret;

	ASSERT_LE((REOPEN_N + 1) * 2 * ENTRY_CELL, sizeof(before[0]));
	/*
	 * P0 alone, driven from here. With memory 2 down, P0 leads and
	 * appends REOPEN_N entries: each in cell 0 of its pair on memories
	 * 0 and 1. No poll follows, so the last entry's commit is known
	 * nowhere: whoever leads next accepts it again. Then P0 crashes.
	 */
	lead_alone(_metadata, self);
	for (i = 0; i < REOPEN_N; i++)
		ASSERT_EQ(0, propose_for(self, 0));
	sacred_log_close(p->log);
	p->log = NULL;
	ASSERT_EQ(3, read_own_area(p, before));

	/*
	 * It comes back while memory 0 is down and 2 is up: of the two
	 * memories that answer, only memory 1 holds its newest cell at the
	 * last index, and memory 0 may hold it too - it cannot tell whether
	 * that write is complete, so it must write nothing there: its
	 * takeovers fail with -ENOTCONN.
	 */
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_UP, 0, NULL));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	atomic_store(&p->applied, 0);
	ASSERT_EQ(0, after_revive(p->rm, 5, proc_open(p)));
	for (end = now_ms() + 3000; now_ms() < end;) {
		ret = sacred_log_poll(p->log);
		enotconn |= ret == -ENOTCONN;
		ASSERT_FALSE(sacred_log_is_leader(p->log));
		usleep(1000);
	}
	EXPECT_TRUE(enotconn);
	sacred_log_stats(p->log, &st);
	EXPECT_EQ(0, st.recovered);

	/* Memory 0 answers again: now it can tell, and leads. */
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_UP, 0, NULL));
	for (end = now_ms() + 20000;
	     !sacred_log_is_leader(p->log) && now_ms() < end;
	     usleep(1000))
		sacred_log_poll(p->log);
	ASSERT_TRUE(sacred_log_is_leader(p->log));
	sacred_log_stats(p->log, &st);
	EXPECT_LE(1, st.recovered);
	memset(entry, 0, sizeof(entry));
	snprintf(entry, sizeof(entry), "P0#%u", p->proposed++);
	ASSERT_EQ(0, propose_rec(p, entry, &index));
	EXPECT_EQ(REOPEN_N, index);
	EXPECT_EQ(REOPEN_N + 1, atomic_load(&p->applied));
	for (i = 0; i < REOPEN_N; i++)
		EXPECT_EQ(0, strncmp(p->hist[i], "P0#", 3));

	/*
	 * Every cell that held its newest write before the crash holds it
	 * still; the entry it accepted again went into the other cell.
	 */
	ASSERT_EQ(7, read_own_area(p, after));
	for (k = 0; k < 2; k++) {
		for (i = 0; i < REOPEN_N; i++) {
			c = own_newest(before[k], i, &v);
			ASSERT_EQ(0, c);
			EXPECT_EQ(0, memcmp(before[k] + i * 2 * ENTRY_CELL,
					    after[k] + i * 2 * ENTRY_CELL,
					    ENTRY_CELL))
				TH_LOG("memory %u: the complete cell of index %u was written over",
				       k, i);
		}
		own_newest(before[k], REOPEN_N - 1, &v);
		c = own_newest(after[k], REOPEN_N - 1, &w);
		EXPECT_EQ(1, c);
		EXPECT_LT(v.seq, w.seq);
	}
	EXPECT_TRUE(history_ok(_metadata, self, 1));
}

/*
 * The leader hangs, is suspected and fenced; when it wakes up its next
 * append is refused by the memories, it steps down, and its history
 * joins the others' unharmed.
 */
TEST_F(log, fenced_old_leader_wakes_up)
{
	struct sacred_log_stats st;
	unsigned int n;

	set_target(self, 10);
	ASSERT_TRUE(wait_applied(self, 7, 10, 20000));
	atomic_store(&self->p[0].pause, true);
	set_target(self, 25);
	ASSERT_TRUE(wait_applied(self, 6, 25, 30000));
	EXPECT_TRUE(sacred_log_is_leader(self->p[0].log));
	/* Wake up: it still believes it leads, and proposes. */
	atomic_store(&self->p[0].pause, false);
	set_target(self, 40);
	ASSERT_TRUE(wait_applied(self, 7, 40, 30000));
	n = atomic_load(&self->p[0].refused);
	EXPECT_TRUE(history_ok(_metadata, self, 7));
	proc_stop(&self->p[0], false);
	sacred_log_stats(self->p[0].log, &st);
	TH_LOG("old leader: %u proposals refused as -EACCES, %llu step-downs, %llu takeovers",
	       n, (unsigned long long)st.step_downs,
	       (unsigned long long)st.takeovers);
	/* It learned it had lost leadership from a refused write. */
	EXPECT_LE(1, st.step_downs);
}

/*
 * Every process opens its log again with @suspect_ms (the log is empty:
 * nothing was proposed yet).
 */
static void reopen_all(struct __test_metadata *_metadata,
		       FIXTURE_DATA(log) *self, unsigned int suspect_ms)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		struct proc *p = &self->p[i];

		ASSERT_EQ(0, atomic_load(&p->applied));
		proc_stop(p, false);
		proc_drop(p);
		atomic_store(&p->stop, false);
		p->suspect_ms = suspect_ms;
	}
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, proc_start(self, i));
}

/* Stop process @i's thread (it stays alive) and wait until it has. */
static bool park(FIXTURE_DATA(log) *self, unsigned int i)
{
	uint64_t end = now_ms() + 10000;

	atomic_store(&self->p[i].pause, true);
	while (!atomic_load(&self->p[i].parked) && now_ms() < end)
		usleep(1000);
	return atomic_load(&self->p[i].parked);
}

/* Process @i stands still for @ms (as a hung host), then runs again. */
static bool stall(FIXTURE_DATA(log) *self, unsigned int i, unsigned int ms)
{
	if (!park(self, i))
		return false;
	usleep(ms * 1000);
	atomic_store(&self->p[i].pause, false);
	return true;
}

/*
 * The timeout P1 and P2 have for P0 now: the highest of the two if @hi,
 * else the lowest.
 */
static unsigned int timeout_of_p0(FIXTURE_DATA(log) *self, bool hi)
{
	unsigned int a = atomic_load(&self->p[1].timeout_ms[0]);
	unsigned int b = atomic_load(&self->p[2].timeout_ms[0]);

	return hi == (a > b) ? a : b;
}

/*
 * Watch P1's and P2's timeouts for P0 for up to @ms, until both are at
 * least @least (@up) or at most @most (!@up); 0: for all of @ms. Their
 * lowest meanwhile goes into *@low. Returns whether they got there.
 */
static bool watch_p0(FIXTURE_DATA(log) *self, unsigned int ms, bool up,
		     unsigned int want, unsigned int *low)
{
	uint64_t end = now_ms() + ms;
	unsigned int lo, hi;

	for (;;) {
		lo = timeout_of_p0(self, false);
		hi = timeout_of_p0(self, true);
		if (lo < *low)
			*low = lo;
		if (want && (up ? lo >= want : hi <= want))
			return true;
		if (now_ms() >= end)
			return false;
		usleep(2000);
	}
}

/*
 * The failure detector's timeouts go up with false suspicions and come
 * back down after a calm stretch (lib/log.c's header comment). With a
 * 300 ms timeout and calm_timeouts 2: first P1 stands still for three
 * timeouts - P1 itself, held up, suspected nobody: its timeout for P0
 * must not be raised (not above P2's, which saw whatever P0 did). Then
 * P0 stands still for three of its timeouts, twice - P1 and P2 suspect
 * it each time and, when it runs again, double their timeout for it:
 * 600, then 1200 ms. Then P0 stands
 * still for 800 ms every 1.8 s, three times: two thirds of 1200 ms, no
 * suspicion, but a halved timeout would have suspected it - the timeout
 * must stay 1200 ms, though 2.4 s (two timeouts) went by. Then P0 runs
 * on: the timeout halves to 600 ms no sooner than 2.4 s after its last
 * stall, and to 300 ms no sooner than 1.2 s after that, and never below
 * 300 ms. Only lower bounds are timed, and a raise is checked as one: a
 * busy host that stalls P0 more than planned (the VM saw 300 ms) only
 * raises the timeout further, or delays the decay (up to 20 s allowed).
 */
TEST_F(log, false_suspicions_raise_the_timeout_a_calm_stretch_lowers_it)
{
	unsigned int base = 300 * test_slow(), low = ~0U, t, i, k;
	uint64_t t_calm;

	for (i = 0; i < NR_PROCS; i++)
		self->p[i].calm_timeouts = 2;
	reopen_all(_metadata, self, base);
	set_target(self, 10);
	ASSERT_TRUE(wait_applied(self, 7, 10, 20000));
	EXPECT_EQ(base, timeout_of_p0(self, true));
	EXPECT_EQ(0, sacred_log_suspect_ms(self->p[1].log, NR_PROCS));

	ASSERT_TRUE(stall(self, 1, 3 * base));
	usleep(base * 1000);
	t = atomic_load(&self->p[1].timeout_ms[0]);
	TH_LOG("P1 held up: its timeout for P0 %u ms, P2's %u ms", t,
	       atomic_load(&self->p[2].timeout_ms[0]));
	EXPECT_GE(atomic_load(&self->p[2].timeout_ms[0]), t);

	for (k = 0; k < 2; k++) {
		ASSERT_TRUE(stall(self, 0, 3 * (base << k)));
		EXPECT_TRUE(watch_p0(self, 10000, true, base << (k + 1), &low))
			TH_LOG("not raised to %u ms", base << (k + 1));
	}
	TH_LOG("after two stalls: %u and %u ms",
	       atomic_load(&self->p[1].timeout_ms[0]),
	       atomic_load(&self->p[2].timeout_ms[0]));

	/* Near misses: 800 ms still of 1200, after 1 s of running, 3 x. */
	low = ~0U;
	for (k = 0; k < 3; k++) {
		watch_p0(self, 1000, true, 0, &low);
		ASSERT_TRUE(stall(self, 0, 8 * base / 3));
	}
	t_calm = now_ms();
	watch_p0(self, 50, true, 0, &low);
	TH_LOG("after the near misses: lowest %u ms", low);
	EXPECT_LE(4 * base, low);

	/* Calm: 1200 -> 600 after 2.4 s at least, -> 300 after 1.2 more. */
	low = ~0U;
	EXPECT_TRUE(watch_p0(self, 20000, false, 2 * base, &low));
	t = now_ms() - t_calm;
	TH_LOG("%u ms after the last stall: %u ms", t, 2 * base);
	EXPECT_LE(8 * base, t);
	EXPECT_TRUE(watch_p0(self, 20000, false, base, &low));
	t = now_ms() - t_calm;
	TH_LOG("%u ms after the last stall: %u ms", t, base);
	EXPECT_LE(12 * base, t);
	/* Never below the configured one. */
	watch_p0(self, 5 * base, true, 0, &low);
	EXPECT_EQ(base, low);
	EXPECT_TRUE(history_ok(_metadata, self, 7));
}

/*
 * A leader appends and then stops polling - it writes no metas, so
 * nothing it writes says that its last entry is committed. The followers
 * find that entry on a quorum of memories and deliver it all the same
 * (they waited for the leader's next tick before 2026-11-26). Nobody
 * suspects the leader meanwhile: 10 s to suspect.
 */
TEST_F(log, followers_deliver_an_entry_a_quorum_holds_without_a_commit)
{
	unsigned int n;

	reopen_all(_metadata, self, 10000);
	set_target(self, 5);
	ASSERT_TRUE(wait_applied(self, 7, 5, 20000));
	set_target(self, 0);
	ASSERT_TRUE(park(self, 0));
	ASSERT_TRUE(sacred_log_is_leader(self->p[0].log));
	for (n = 0; n < 3; n++) {
		unsigned int at = atomic_load(&self->p[0].applied);

		ASSERT_EQ(0, propose_for(self, 0));
		ASSERT_EQ(at + 1, atomic_load(&self->p[0].applied));
		EXPECT_TRUE(wait_applied(self, 6, at + 1, 3000))
			TH_LOG("entry %u: followers at %u and %u", at,
			       atomic_load(&self->p[1].applied),
			       atomic_load(&self->p[2].applied));
	}
	atomic_store(&self->p[0].pause, false);
	set_target(self, 12);
	ASSERT_TRUE(wait_applied(self, 7, 12, 20000));
	EXPECT_TRUE(history_ok(_metadata, self, 7));
}

/*
 * An entry that only one memory took is not delivered: memories 1 and 2
 * down, the leader's append reaches memory 0 alone and fails; memory 1
 * comes back, so that every read of a follower meets memory 0 and sees
 * the entry there - once, not on a quorum. Then memory 2 and the leader
 * come back, and the log goes on with one history.
 */
TEST_F(log, entry_a_minority_holds_is_not_delivered)
{
	static uint8_t area[NR_MEMS][2048];
	struct sacred_cell_view v;
	unsigned int i, at;
	uint64_t index;
	int ret;

	reopen_all(_metadata, self, 10000);
	set_target(self, 5);
	ASSERT_TRUE(wait_applied(self, 7, 5, 20000));
	set_target(self, 0);
	ASSERT_TRUE(wait_applied(self, 6, 5, 5000));
	ASSERT_TRUE(park(self, 0));
	at = atomic_load(&self->p[0].applied);
	for (i = 1; i < NR_MEMS; i++)
		ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[i].id,
					    SACRED_MEM_DOWN, 0, NULL));
	ret = propose_for(self, 0);
	TH_LOG("append with memories 1 and 2 down: %d", ret);
	ASSERT_NE(0, ret);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id,
				    SACRED_MEM_UP, 0, NULL));
	/* It is there on memory 0, not on memory 1. */
	ASSERT_GE(REOPEN_N, at);
	sacred_rmem_revive(self->p[0].rm);
	ASSERT_EQ(3, read_own_area(&self->p[0], area));
	ASSERT_LE(0, own_newest(area[0], at, &v));
	memcpy(&index, (const uint8_t *)v.data + 8, 8);
	ASSERT_EQ(at, le64toh(index));
	if (own_newest(area[1], at, &v) >= 0) {
		memcpy(&index, (const uint8_t *)v.data + 8, 8);
		ASSERT_NE(at, le64toh(index));
	}
	usleep(1500 * 1000);
	EXPECT_EQ(at, atomic_load(&self->p[1].applied));
	EXPECT_EQ(at, atomic_load(&self->p[2].applied));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_UP, 0, NULL));
	atomic_store(&self->p[0].pause, false);
	set_target(self, at + 5);
	ASSERT_TRUE(wait_applied(self, 7, at + 5, 30000));
	EXPECT_TRUE(history_ok(_metadata, self, 7));
}

TEST_F(log, minority_of_memories_down_under_appends)
{
	set_target(self, 15);
	ASSERT_TRUE(wait_applied(self, 7, 15, 20000));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id,
				    SACRED_MEM_DOWN, 0, NULL));
	set_target(self, 35);
	ASSERT_TRUE(wait_applied(self, 7, 35, 30000));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id,
				    SACRED_MEM_UP, 0, NULL));
	set_target(self, 50);
	ASSERT_TRUE(wait_applied(self, 7, 50, 30000));
	EXPECT_TRUE(history_ok(_metadata, self, 7));
}

/* Which process holds write on the log region at memory @k; -1 if none. */
static int log_writer(FIXTURE_DATA(log) *self, unsigned int k)
{
	struct sacred_acl_entry acl[NR_PROCS];
	unsigned int n, j;

	if (sacred_region_get_acl(self->ctrl, self->mem[k].id, LOG_REGION,
				  acl, NR_PROCS, &n, NULL))
		return -1;
	for (j = 0; j < n && j < NR_PROCS; j++)
		if (acl[j].access_cur & SACRED_ACCESS_WRITE)
			return acl[j].process_id;
	return -1;
}

/*
 * A memory that was down when the leader took over comes back: the
 * leader takes over again, on every memory up, and so holds write there
 * too. Appending there without it, the leader would have each write
 * refused, which breaks the connection, which its heartbeat reconnects,
 * over and over (seen across VMs: 25 connects of the leader at a memory
 * whose first connect was slow); the log would stand on the other two
 * memories alone, and a takeover after the leader's death would find
 * nothing to fence there.
 */
TEST_F(log, memory_back_after_the_takeover_gets_the_leaders_write)
{
	struct sacred_peer_info before = {}, after = {};
	unsigned int tries;
	int leader;

	set_target(self, 10);
	ASSERT_TRUE(wait_applied(self, 7, 10, 20000));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	/* The next leader takes over on memories 0 and 1 alone. */
	proc_stop(&self->p[0], true);
	set_target(self, 20);
	ASSERT_TRUE(wait_applied(self, 6, 20, 30000));
	leader = log_writer(self, 0);
	ASSERT_TRUE(leader == PID(1) || leader == PID(2));
	EXPECT_NE(leader, log_writer(self, 2));

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_UP, 0, NULL));
	for (tries = 0; tries < 1000; tries++) {
		leader = log_writer(self, 0);
		if (leader >= 0 && leader == log_writer(self, 2))
			break;
		usleep(10000);
	}
	ASSERT_EQ(leader, log_writer(self, 2));
	TH_LOG("P%d holds write at memory 2 %u ms after it came back",
	       leader - PID(0), tries * 10);

	/* It keeps that connection while it appends (one fence at most). */
	ASSERT_EQ(0, st_peer_of(self->ctrl, self->mem[2].id, leader,
				&before));
	set_target(self, 40);
	ASSERT_TRUE(wait_applied(self, 6, 40, 30000));
	ASSERT_EQ(0, st_peer_of(self->ctrl, self->mem[2].id, leader, &after));
	EXPECT_GE(before.connects + 1, after.connects);

	/* Memory 0 goes: the log stands on memories 1 and 2. */
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	set_target(self, 60);
	ASSERT_TRUE(wait_applied(self, 6, 60, 30000));
	EXPECT_TRUE(history_ok(_metadata, self, 6));
}

/*
 * A memory that answers nothing - down when a process starts, so that
 * the process never reached it - costs the processes' polls nothing:
 * their attempts to reach it run in steps that never wait (until
 * 2026-11-26 the log's poll blocked for the memory's timeout, 1 s here,
 * at the first attempt and after every back-off).
 */
TEST_F(log, memory_that_never_answers_costs_the_polls_nothing)
{
	struct silent sl = {};
	unsigned int i, longest = 0;

	set_target(self, 10);
	ASSERT_TRUE(wait_applied(self, 7, 10, 20000));
	proc_stop(&self->p[0], true);
	ASSERT_EQ(0, sacred_mem_del(self->ctrl, self->mem[2].id));
	self->have[2] = false;
	ASSERT_EQ(0, listen_silent(&sl, &self->mem[2].addr));

	/* P0 comes back, never reaching memory 2; P1 and P2 lost it. */
	ASSERT_EQ(0, proc_restart(self, 0));
	for (i = 0; i < NR_PROCS; i++)
		atomic_store(&self->p[i].max_poll_ms, 0);
	set_target(self, 40);
	ASSERT_TRUE(wait_applied(self, 7, 40, 30000));
	usleep(3000000);	/* three timeouts of attempts on memory 2 */
	for (i = 0; i < NR_PROCS; i++) {
		unsigned int t = atomic_load(&self->p[i].max_poll_ms);

		EXPECT_EQ(0, sacred_rmem_up(self->p[i].rm) & 4);
		longest = t > longest ? t : longest;
		TH_LOG("P%u: longest poll %u ms", i, t);
	}
	if (!getenv("SACRED_CONN_TIMEOUT_MS"))
		EXPECT_GT(500, longest);
	EXPECT_TRUE(history_ok(_metadata, self, 7));
	EXPECT_LE(1, close_silent(&sl));
}

/*
 * 200 entries through a window of 16 slots: the leader snapshots every 8
 * appends and overwrites what its snapshots cover (without snapshots the
 * 17th append fails with -ENOSPC); the followers keep up, or restore a
 * snapshot when they fell behind, and all end with the same 200.
 */
TEST_F(log, log_with_snapshots_runs_far_past_its_window)
{
	struct sacred_log_stats sum;
	unsigned int bad;

	use_trimmed_log(_metadata, self, 16);
	set_target(self, 200);
	ASSERT_TRUE(wait_applied(self, 7, 200, 60000));
	EXPECT_TRUE(history_ok(_metadata, self, 7));
	trimmed_stats(_metadata, self, &sum, &bad);
	EXPECT_EQ(0, bad);
	EXPECT_LE(200, sum.appends);
	/* One at least every window, from entry 16 on. */
	EXPECT_LE((200 - 16) / 16, sum.snapshots);
}

/*
 * A process crashes and comes back after the start of the log, and more,
 * was overwritten: it starts from the newest snapshot (restore), then
 * follows, and its history is everybody's.
 */
TEST_F(log, process_back_after_its_entries_were_overwritten_restores)
{
	struct sacred_log_stats st;

	use_trimmed_log(_metadata, self, 16);
	set_target(self, 20);
	ASSERT_TRUE(wait_applied(self, 7, 20, 30000));
	proc_stop(&self->p[2], true);
	set_target(self, 100);
	ASSERT_TRUE(wait_applied(self, 3, 100, 60000));
	ASSERT_EQ(0, proc_restart(self, 2));
	ASSERT_TRUE(wait_applied(self, 4, 100, 30000));
	set_target(self, 120);
	ASSERT_TRUE(wait_applied(self, 7, 120, 30000));
	EXPECT_TRUE(history_ok(_metadata, self, 7));
	proc_stop(&self->p[2], false);
	sacred_log_stats(self->p[2].log, &st);
	TH_LOG("P2 back: %llu restores", (unsigned long long)st.restores);
	EXPECT_LE(1, st.restores);
	EXPECT_EQ(0, atomic_load(&self->p[2].bad_snap));
}

/*
 * The leader crashes deep into a log with snapshots: the new leader
 * recovers the tail from the window, writes a snapshot of its own before
 * it overwrites anything, and goes on; nothing the old leader saw
 * committed is lost.
 */
TEST_F(log, fail_over_in_a_log_with_snapshots)
{
	struct sacred_log_stats sum;
	unsigned int bad;

	use_trimmed_log(_metadata, self, 16);
	set_target(self, 150);
	atomic_store(&self->p[0].target, 100);
	ASSERT_TRUE(wait_applied(self, 1, 60, 30000));
	proc_stop(&self->p[0], true);
	ASSERT_TRUE(wait_applied(self, 6, 150, 60000));
	EXPECT_TRUE(history_ok(_metadata, self, 6));
	trimmed_stats(_metadata, self, &sum, &bad);
	EXPECT_EQ(0, bad);
}

/*
 * The application cannot write a snapshot: the leader appends until the
 * window is used up - the entries its last snapshot covers plus 16 - and
 * then refuses with -ENOSPC, overwriting nothing; once a snapshot can be
 * taken again the log goes on.
 */
TEST_F(log, no_snapshot_no_overwrite)
{
	uint64_t end;
	unsigned int i, a, most = 0, nospc = 0;

	use_trimmed_log(_metadata, self, 16);
	set_target(self, 10);
	ASSERT_TRUE(wait_applied(self, 7, 10, 30000));
	for (i = 0; i < NR_PROCS; i++)
		atomic_store(&self->p[i].snap_fail, true);
	set_target(self, 100);
	end = now_ms() + 30000;
	while (now_ms() < end && !nospc) {
		usleep(10000);
		for (i = 0; i < NR_PROCS; i++)
			nospc += atomic_load(&self->p[i].nospc);
	}
	ASSERT_LT(0, nospc);
	usleep(200000);
	for (i = 0; i < NR_PROCS; i++) {
		a = atomic_load(&self->p[i].applied);
		most = a > most ? a : most;
	}
	TH_LOG("stopped at %u entries", most);
	/* The snapshot at entry 8 covers up to there: 8 + 16 at most. */
	EXPECT_LE(10, most);
	EXPECT_GE(24, most);
	for (i = 0; i < NR_PROCS; i++)
		atomic_store(&self->p[i].snap_fail, false);
	ASSERT_TRUE(wait_applied(self, 7, 100, 60000));
	EXPECT_TRUE(history_ok(_metadata, self, 7));
}

/*
 * P0 leads a log with snapshots with memory 2 down - its snapshot goes to
 * memories 0 and 1 only - then appends once more with all three up (its
 * meta is on all of them) and crashes. It comes back with memory 0 down:
 * its meta it can settle, but of the memories that answer only memory 1
 * holds its snapshot cell, so it cannot tell which one to keep, and may
 * write no snapshot. It must abstain - else, the lowest id, it is elected,
 * leads until it needs a snapshot, fails, and is elected again, and the
 * log stalls (the first version did). P1 leads meanwhile; memory 0 back,
 * P0 settles and the log goes on.
 */
TEST_F(log, reopened_leader_unsure_of_its_snapshot_abstains)
{
	struct proc *p = &self->p[0];
	struct sacred_log_stats st;
	unsigned int i;
	uint64_t end;

	use_trimmed_log(_metadata, self, 16);
	lead_alone(_metadata, self);
	for (i = 0; i < 11; i++) {
		if (i == 10) {
			/* The snapshot at 8 is on memories 0 and 1 only. */
			ASSERT_EQ(0, sacred_mem_set(self->ctrl,
						    self->mem[2].id,
						    SACRED_MEM_UP, 0, NULL));
			ASSERT_EQ(3, sacred_rmem_revive(p->rm));
		}
		ASSERT_EQ(0, propose_for(self, 0));
	}
	sacred_log_stats(p->log, &st);
	ASSERT_EQ(1, st.snapshots);
	/* A few ticks: the meta (commit 11) goes to all three. */
	for (end = now_ms() + 100; now_ms() < end; usleep(1000))
		sacred_log_poll(p->log);
	ASSERT_TRUE(sacred_log_is_leader(p->log));
	proc_drop(p);

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, proc_restart(self, i));
	set_target(self, 40);
	ASSERT_TRUE(wait_applied(self, 6, 40, 30000));

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_UP, 0, NULL));
	set_target(self, 60);
	ASSERT_TRUE(wait_applied(self, 7, 60, 30000));
	EXPECT_TRUE(history_ok(_metadata, self, 7));
}

/*
 * sacred_log_region_size() says what the layout needs, and a log region
 * smaller than that is refused at the open; snapshots without the
 * callbacks are refused too.
 */
TEST_F(log, log_region_smaller_than_its_layout_is_refused)
{
	struct proc *p = &self->p[0];
	struct sacred_log_attr la;
	struct sacred_log *log = NULL;
	uint64_t need, plain;

	proc_stop(p, false);
	sacred_log_close(p->log);
	p->log = NULL;
	la = proc_log_attr(p);
	plain = sacred_log_region_size(&la);
	/* Metas, then the areas: 3 x 256 slots x 2 cells of 120 bytes. */
	EXPECT_EQ(256 + 3 * 256 * 2 * 120, plain);
	p->window = 16;
	p->log_region = SMALL_REGION;
	la = proc_log_attr(p);
	need = sacred_log_region_size(&la);
	/* ... and 3 x 2 snapshot cells of 24 + 16 + 8192 bytes. */
	EXPECT_EQ(((256 + 3 * 2 * 8232 + 63) & ~63) + 3 * 16 * 2 * 120, need);
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, SMALL_REGION,
				       4096,
				       SACRED_POLICY_EXCLUSIVE_WRITER));
	EXPECT_EQ(-ENOSPC, sacred_log_open(&la, &log));
	EXPECT_EQ(NULL, log);
	la.restore = NULL;
	EXPECT_EQ(-EINVAL, sacred_log_open(&la, &log));
	EXPECT_EQ(0, sacred_log_region_size(NULL));
	la.capacity = 0;
	EXPECT_EQ(0, sacred_log_region_size(&la));
}

TEST_HARNESS_MAIN
