// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_revoke - the revoke guarantee under fire.
 *
 * Once the reply to a changePermission that revokes a writer has been
 * received, no write of the revoked writer may land in the region. rxe
 * can place up to one MTU of a write that was being received after a
 * LOCAL_INV completes (shared/notes/softroce-vm.md); the module fences the
 * writer's QP before it replies. This test tries to catch a late write.
 *
 * Process 1 (a child) streams writes of SIZE bytes at offset 0 of an
 * exclusive-writer region. Every 8-byte word it writes carries the epoch
 * of its grant in the high half and a sequence number in the low half.
 * When its write fails (it was revoked and fenced), it reconnects, asks
 * for write again and goes on. Process 2 (the parent) takes write away
 * again and again; for each reply with epoch E:
 *   - process 3 (a reader, never fenced) reads the region twice; a word
 *     that changed between the reads with an epoch below E was written by
 *     the revoked writer after the reply: a violation;
 *   - process 2 writes its own marker (epoch E) over the range; then any
 *     word process 3 sees with an epoch below E is a violation.
 * Words with an epoch above E are the writer's, after it took write back.
 *
 * SACRED_REVOKE_TRIALS sets the number of revokes per size (default 1000;
 * `make soak` runs SOAK_TRIALS, 10^5 by default). Each size ends with one
 * "# soak:" line: revokes, size against the path MTU, violations, the
 * module's count of the writer's revokes that may have torn a write
 * (PEER_RACED), the writer's writes and fences, the duration and the
 * kernel. The case's time limit grows with the trials.
 *
 * every_torn_write_is_counted_as_raced tears writes on purpose and checks
 * that the module counted each revoke that tore one (below).
 */
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define RW	(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define R	SACRED_ACCESS_READ
#define MAXSZ	16384

struct shared {
	atomic_int stop;
	atomic_long writes;
	atomic_long failed;
	atomic_long regrants;
	atomic_int error;
	atomic_int gate;
	atomic_long revoked;
	atomic_long released;
};

FIXTURE(revoke) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem;
	struct sockaddr_storage addr;
	uint32_t region;
	struct shared *sh;
	pid_t writer;
};

FIXTURE_VARIANT(revoke) {
	size_t size;
};

/* One word, one packet, several packets (MTU 1024 on rxe). */
FIXTURE_VARIANT_ADD(revoke, w8) { .size = 8 };
FIXTURE_VARIANT_ADD(revoke, w4k) { .size = 4096 };
FIXTURE_VARIANT_ADD(revoke, w16k) { .size = 16384 };

static int open_conn(FIXTURE_DATA(revoke) *self, uint32_t pid,
		     struct sacred_conn **c)
{
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&self->addr,
		.process_id = pid,
	};
	struct sacred_region_attr ra;
	int ret;

	ret = sacred_conn_create(&attr, c);
	if (ret)
		return ret;
	ret = sacred_attach(*c, self->region, &ra);
	if (ret) {
		sacred_conn_destroy(*c);
		*c = NULL;
	}
	return ret;
}

static int take_write(struct sacred_conn *c, uint32_t region, uint32_t *epoch)
{
	struct sacred_perm_req req = { .region_id = region, .access = RW };
	struct sacred_perm_result res;
	int ret;

	ret = sacred_change_perm(c, &req, &res);
	if (!ret)
		*epoch = res.region.epoch;
	return ret;
}

/* Process 1: stream tagged writes; after every fence, take write back. */
static void writer_main(FIXTURE_DATA(revoke) *self, size_t size)
{
	static uint64_t buf[MAXSZ / 8];
	struct sacred_conn *c = NULL;
	uint32_t epoch = 0, seq = 0;
	size_t i;
	int ret;

	if (open_conn(self, 1, &c))
		_exit(2);
	while (!atomic_load(&self->sh->stop)) {
		if (take_write(c, self->region, &epoch)) {
			if (sacred_conn_reconnect(c))
				usleep(1000);
			continue;
		}
		atomic_fetch_add(&self->sh->regrants, 1);
		for (;;) {
			seq++;
			for (i = 0; i < size / 8; i++)
				buf[i] = (uint64_t)epoch << 32 | seq;
			ret = sacred_write(c, self->region, 0, buf, size);
			if (ret)
				break;
			atomic_fetch_add(&self->sh->writes, 1);
			if (atomic_load(&self->sh->stop))
				break;
		}
		if (ret) {
			atomic_fetch_add(&self->sh->failed, 1);
			/* Give the revoker a moment to look at the region. */
			usleep(2000);
			/* Gated: until it has looked, as long as it wants. */
			while (atomic_load(&self->sh->gate) &&
			       atomic_load(&self->sh->released) <
			       atomic_load(&self->sh->revoked) &&
			       !atomic_load(&self->sh->stop))
				usleep(200);
			while (sacred_conn_reconnect(c) &&
			       !atomic_load(&self->sh->stop))
				usleep(1000);
		}
	}
	sacred_conn_destroy(c);
	_exit(0);
}

/*
 * The instance, the region with processes 1 and 2 read-write and 3 read,
 * and the writer (process 1) streaming @size-byte writes: the setup of
 * both fixtures.
 */
static void revoke_open(struct __test_metadata *_metadata,
			FIXTURE_DATA(revoke) *self, size_t size)
{
	struct sacred_acl_entry acl[] = {
		{ .process_id = 1, .access = RW },
		{ .process_id = 2, .access = RW },
		{ .process_id = 3, .access = R },
	};
	struct sacred_mem_params mp = { .id = SACRED_MEM_ID_ANY };
	struct sacred_region_info ri;

	if (!st_open(_metadata, &self->ctrl, 1, 0))
		return;
	st_mem_new(_metadata, self->ctrl, 0, &mp, &self->mem);
	self->addr = self->mem.addr;
	st_region_new(_metadata, self->ctrl, self->mem.id, 65536,
		      SACRED_POLICY_EXCLUSIVE_WRITER, acl, 3, &ri);
	self->region = ri.id;

	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
	self->writer = fork();
	ASSERT_LE(0, self->writer);
	if (!self->writer)
		writer_main(self, size);
}

static void revoke_close(FIXTURE_DATA(revoke) *self)
{
	if (self->sh && self->writer > 0) {
		atomic_store(&self->sh->stop, 1);
		waitpid(self->writer, NULL, 0);
	}
	if (self->sh)
		munmap(self->sh, sizeof(*self->sh));
	if (self->ctrl && self->mem.state)
		sacred_mem_del(self->ctrl, self->mem.id);
	sacred_ctrl_close(self->ctrl);
}

FIXTURE_SETUP(revoke)
{
	revoke_open(_metadata, self, variant->size);
}

FIXTURE_TEARDOWN(revoke)
{
	revoke_close(self);
}

/*
 * The writes that can be torn: more than one packet (MTU 1024 on rxe).
 * @must_tear: the case fails if no write was torn - it then checked
 * nothing. Not for 4 KiB: on 6.12's rxe a 4 KiB write is seldom torn on a
 * quiet host (0 and 1 of 300 fences, 2026-12-06), a 16 KiB one often
 * enough (20 in 275). (One case for both sizes would fork the second
 * writer from a process that has used verbs already: it never wrote.)
 */
FIXTURE(torn) {
	FIXTURE_DATA(revoke) f;
};

FIXTURE_VARIANT(torn) {
	size_t size;
	bool must_tear;
};

FIXTURE_VARIANT_ADD(torn, w4k) { .size = 4096 };
FIXTURE_VARIANT_ADD(torn, w16k) { .size = 16384, .must_tear = true };

FIXTURE_SETUP(torn)
{
	revoke_open(_metadata, &self->f, variant->size);
}

FIXTURE_TEARDOWN(torn)
{
	revoke_close(&self->f);
}

/* PEER_RACED and PEER_FENCES of process @pid; raced UINT64_MAX if none. */
static struct sacred_peer_info peer_info(FIXTURE_DATA(revoke) *self,
					 uint32_t pid)
{
	struct sacred_peer_info pi = { .process_id = pid, .raced = UINT64_MAX };

	if (st_peer_of(self->ctrl, self->mem.id, pid, &pi))
		pi.raced = UINT64_MAX;
	return pi;
}


/* Words below @epoch that are not equal in @a and @b: late writes. */
static int late_words(const uint64_t *a, const uint64_t *b, size_t n,
		      uint32_t epoch)
{
	int bad = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i] && (b[i] >> 32) < epoch)
			bad++;
	return bad;
}

static int below(const uint64_t *a, size_t n, uint32_t epoch)
{
	int bad = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if ((a[i] >> 32) < epoch)
			bad++;
	return bad;
}

TEST_F_TIMEOUT(revoke, no_write_lands_after_the_revoke_reply, 600)
{
	static uint64_t s0[MAXSZ / 8], s1[MAXSZ / 8], mark[MAXSZ / 8];
	const char *env = getenv("SACRED_REVOKE_TRIALS");
	int trials = env ? atoi(env) : 1000;
	struct sacred_conn *p2 = NULL, *p3 = NULL;
	struct sacred_region_info ri = {};
	size_t n = variant->size / 8, i;
	int t, checked = 0, marked = 0, violations = 0;
	struct sacred_peer_info wi;
	long last_writes = 0;
	struct timespec t0, t1;
	struct utsname un;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, open_conn(self, 2, &p2));
	ASSERT_EQ(0, open_conn(self, 3, &p3));

	for (t = 0; t < trials && !violations; t++) {
		uint32_t epoch;
		long w;

		/* Let the writer hold write and stream for a while. */
		for (i = 0; i < 2000; i++) {
			w = atomic_load(&self->sh->writes);
			if (w > last_writes + 3)
				break;
			usleep(500);
		}
		last_writes = w;

		if (take_write(p2, self->region, &epoch)) {
			sacred_conn_reconnect(p2);
			continue;
		}
		/* The reply is in: from here on, nothing of epoch < E. */
		ASSERT_EQ(0, sacred_read(p3, self->region, 0, s0,
					 variant->size));
		ASSERT_EQ(0, sacred_read(p3, self->region, 0, s1,
					 variant->size));
		violations += late_words(s0, s1, n, epoch);
		checked++;

		for (i = 0; i < n; i++)
			mark[i] = (uint64_t)epoch << 32 | 0xffffffffu;
		if (sacred_write(p2, self->region, 0, mark, variant->size)) {
			/* The writer took write back first: fenced. */
			sacred_conn_reconnect(p2);
			continue;
		}
		usleep(100);
		ASSERT_EQ(0, sacred_read(p3, self->region, 0, s1,
					 variant->size));
		violations += below(s1, n, epoch);
		marked++;
		if (violations)
			TH_LOG("trial %d: write of epoch < %u after the reply",
			       t, epoch);
	}

	TH_LOG("%d revokes, %d double-read checks, %d marker checks, writer: %ld writes, %ld failed, %ld grants",
	       t, checked, marked, atomic_load(&self->sh->writes),
	       atomic_load(&self->sh->failed),
	       atomic_load(&self->sh->regrants));
	EXPECT_EQ(0, violations);

	/*
	 * The module's own view: the writer's revokes in which its QP had
	 * received a packet sent after its latest request (every torn write
	 * is among them). It counts only fences of a connected writer that
	 * had sent a write: never more than the writer's fences. (Process
	 * 2's revokes count too, after its marker writes: the region's count
	 * is the sum.)
	 */
	EXPECT_EQ(0, sacred_region_get(self->ctrl, self->mem.id, self->region,
				       &ri));
	wi = peer_info(self, 1);
	EXPECT_NE(UINT64_MAX, wi.raced);
	TH_LOG("module counted %llu of the writer's %llu fences as raced, %llu on the region",
	       (unsigned long long)wi.raced, (unsigned long long)wi.fences,
	       (unsigned long long)ri.raced);
	EXPECT_LE(wi.raced, wi.fences);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	uname(&un);
	ksft_print_msg("soak: size %zu B (%s the 1024 B MTU): %d of %d revokes, %d violations, %llu of the writer's raced (may tear), %d double-read and %d marker checks, writer %ld writes %ld fenced, %.0f s, kernel %s\n",
		       variant->size, variant->size > 1024 ? "above" : "below",
		       t, trials, violations, (unsigned long long)wi.raced,
		       checked, marked, atomic_load(&self->sh->writes),
		       atomic_load(&self->sh->failed),
		       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9,
		       un.release);
	/* The test saw real contention, or it proves nothing. */
	EXPECT_LE(trials / 2, checked);
	EXPECT_LE(trials / 4, atomic_load(&self->sh->failed));
	sacred_conn_destroy(p3);
	sacred_conn_destroy(p2);
}

/* Does @a hold words of more than one write? */
static bool torn(const uint64_t *a, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (a[i] != a[0])
			return true;
	return false;
}

static uint64_t region_raced(FIXTURE_DATA(revoke) *self)
{
	struct sacred_region_info ri = {};

	if (sacred_region_get(self->ctrl, self->mem.id, self->region, &ri))
		return UINT64_MAX;
	return ri.raced;
}

/* Seconds since @t0. */
static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return t1.tv_sec - t0->tv_sec + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * Every torn write is counted: the writer streams SIZE-byte writes, each
 * word of one write carrying its epoch and sequence number, and process 2
 * takes write away, SACRED_TORN_ROUNDS times (default 300), until 20
 * rounds tore a write, or for SACRED_TORN_SECONDS (default 40), whichever
 * ends first (on rxe 6.1 about half of the rounds tear a write, on 6.12
 * one in 5 to 30). Right after
 * each reply process 3 reads the range (nothing of the writer lands after
 * the reply, and the writer, gated, takes write back only once the range
 * was read): words of more than one write there are a torn write of this
 * revoke. In every such round the region's and the writer's raced counts
 * must have moved. A round counts only if the writer had written since
 * the previous one and was fenced (PEER_FENCES moved). Fewer than 10
 * fences fail; the torn writes seen are returned (none torn proves
 * nothing: see the torn fixture's must_tear).
 */
static int torn_writes_counted(struct __test_metadata *_metadata,
			       FIXTURE_DATA(revoke) *self, size_t size)
{
	static uint64_t s0[MAXSZ / 8];
	const char *env = getenv("SACRED_TORN_ROUNDS");
	int rounds = env ? atoi(env) : 300;
	double budget = getenv("SACRED_TORN_SECONDS") ?
			atof(getenv("SACRED_TORN_SECONDS")) : 40;
	struct sacred_conn *p2 = NULL, *p3 = NULL;
	int ret, t, nr_torn = 0, counted = 0, missed = 0, revokes = 0;
	size_t n = size / 8, i;
	long last_writes = 0;
	struct timespec t0;
	struct utsname un;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&self->sh->gate, 1);
	ASSERT_EQ(0, open_conn(self, 2, &p2));
	ASSERT_EQ(0, open_conn(self, 3, &p3));

	for (t = 1; t <= rounds && nr_torn < 20 && since(&t0) < budget;
	     t++) {
		struct sacred_peer_info w0, w1;
		uint64_t r0, r1, p0, p1;
		uint32_t epoch;
		bool is_torn;
		long w = 0;

		/* The writer holds write and streams, or no round. */
		for (i = 0; i < 2000; i++) {
			w = atomic_load(&self->sh->writes);
			if (w > last_writes + 3)
				break;
			usleep(500);
		}
		if (w <= last_writes + 3)
			continue;

		r0 = region_raced(self);
		w0 = peer_info(self, 1);
		ASSERT_NE(UINT64_MAX, r0);
		ASSERT_NE(UINT64_MAX, w0.raced);
		/* A write failing from here on waits for round t's read. */
		atomic_store(&self->sh->revoked, t);
		/* Fenced when the writer took write back: connect again. */
		for (i = 0; i < 10 && (ret = take_write(p2, self->region,
							 &epoch)); i++)
			sacred_conn_reconnect(p2);
		if (!ret)
			ASSERT_EQ(0, sacred_read(p3, self->region, 0, s0,
						 size));
		/* Progress from here on is the writer's, with write again. */
		last_writes = atomic_load(&self->sh->writes);
		atomic_store(&self->sh->released, t);
		if (ret)
			continue;
		r1 = region_raced(self);
		w1 = peer_info(self, 1);
		ASSERT_NE(UINT64_MAX, r1);
		ASSERT_NE(UINT64_MAX, w1.raced);
		/* Not fenced: the writer did not hold write (yet). */
		if (w1.fences == w0.fences)
			continue;
		revokes++;
		p0 = w0.raced;
		p1 = w1.raced;

		is_torn = torn(s0, n);
		nr_torn += is_torn;
		counted += p1 != p0;
		if (is_torn && (r1 == r0 || p1 == p0)) {
			missed++;
			TH_LOG("round %d: torn write (words of seq %u and %u), raced: region %llu -> %llu, writer %llu -> %llu",
			       t, (uint32_t)s0[0], (uint32_t)s0[n - 1],
			       (unsigned long long)r0, (unsigned long long)r1,
			       (unsigned long long)p0, (unsigned long long)p1);
		}
	}
	atomic_store(&self->sh->gate, 0);
	uname(&un);
	ksft_print_msg("torn: size %zu B: %d fences of the writer in %d rounds, %d torn, %d counted as raced, %d torn and not counted, %.0f s, kernel %s\n",
		       size, revokes, t - 1, nr_torn, counted, missed,
		       since(&t0), un.release);
	EXPECT_EQ(0, missed);
	/* Too few fences: the size checked nothing. */
	EXPECT_LE(10, revokes);
	sacred_conn_destroy(p3);
	sacred_conn_destroy(p2);
	return nr_torn;
}

TEST_F_TIMEOUT(torn, every_torn_write_is_counted_as_raced, 300)
{
	int nr_torn = torn_writes_counted(_metadata, &self->f, variant->size);

	if (variant->must_tear)
		EXPECT_LT(0, nr_torn);
}

/*
 * The case's time limit: 600 s, or 0.2 s per revoke per size for a soak
 * (a revoke takes about 21 ms in the TCG guest of the project's machine;
 * ten times that allows for a busy host).
 */
static void __attribute__((constructor)) revoke_soak_timeout(void)
{
	const char *env = getenv("SACRED_REVOKE_TRIALS");
	long trials = env ? atol(env) : 0;

	if (trials / 5 > 600)
		_revoke_no_write_lands_after_the_revoke_reply_object.timeout =
			trials / 5;
}

TEST_HARNESS_MAIN
