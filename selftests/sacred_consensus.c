// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_consensus - single-shot consensus on three memory instances:
 * Protected Memory Paxos through the kernel's permission switch and Disk
 * Paxos as the baseline. Agreement and validity under contention (every
 * process proposes at once, repeated on fresh instances), the fast path's
 * round trips, a leader that dies, a minority of memories down, and an
 * old leader that keeps writing after it was fenced. Every run records
 * each process's decision and checks the history: one value per
 * instance, and it was proposed.
 *
 * Processes P0..P2 each have a replicated-memory handle over the three
 * instances. Region CONS_BASE + k (k < ROUNDS) holds PMP instance k
 * (everyone read-write; P0 is granted write first by the admin, as a
 * deployment would); DISK_BASE + k holds Disk Paxos instance k (static,
 * everyone read-write).
 *
 * Every case runs twice, with the PMP regions' policy as each variant
 * says: exclusive-writer (SACRED_PMP), and a bpf region running
 * examples/policies/ballot.bpf.o - "a higher ballot takes the region" -
 * with PMP sending its proposal numbers as ballots (SACRED_PMP_BALLOT).
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7521
#define NR_MEMS		3
#define NR_PROCS	3
#define PID(i)		(501 + (i))
#define ROUNDS		8
#define CONS_BASE	100
#define DISK_BASE	200
#define VALUE_MAX	64
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

FIXTURE(cons) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	bool have[NR_MEMS];
	struct sacred_rmem *p[NR_PROCS];
};

/*
 * The PMP regions: their policy, the program of a bpf one
 * (examples/policies/NAME.bpf.o), and the algorithm that fits it.
 */
FIXTURE_VARIANT(cons) {
	uint8_t policy;
	const char *prog;
	int alg;
};

FIXTURE_VARIANT_ADD(cons, exclusive_writer) {
	.policy = SACRED_POLICY_EXCLUSIVE_WRITER,
	.alg = SACRED_PMP,
};

FIXTURE_VARIANT_ADD(cons, ballot_bpf) {
	.policy = SACRED_POLICY_BPF,
	.prog = "ballot",
	.alg = SACRED_PMP_BALLOT,
};

static int region_everywhere(struct sacred_ctrl *ctrl,
			     struct sacred_mem_info *mem, uint32_t id,
			     uint8_t policy)
{
	return region_on_all(ctrl, mem, NR_MEMS, id, 65536, policy, PID(0),
			     NR_PROCS, -1);
}

/*
 * A PMP region everywhere under @variant's policy: a bpf one is made
 * exclusive-writer with the test's tag and then given the program.
 */
static int pmp_region_everywhere(struct sacred_ctrl *ctrl,
				 struct sacred_mem_info *mem, uint32_t id,
				 const FIXTURE_VARIANT(cons) *variant,
				 int prog_fd)
{
	unsigned int i;
	int ret;

	ret = region_everywhere(ctrl, mem, id, variant->prog ?
				SACRED_POLICY_EXCLUSIVE_WRITER :
				variant->policy);
	for (i = 0; !ret && variant->prog && i < NR_MEMS; i++)
		ret = sacred_region_set_policy(ctrl, mem[i].id, id,
					       variant->policy, prog_fd);
	return ret;
}

/*
 * The admin gives P0 write on region @id everywhere: the first leader
 * (under a ballot rule, with ballot 1: the fast path's proposal number).
 */
static int grant_first_leader(struct sacred_ctrl *ctrl,
			      struct sacred_mem_info *mem, uint32_t id,
			      int alg)
{
	struct sacred_perm_req req = {
		.region_id = id,
		.access = RW,
		.ballot = alg == SACRED_PMP_BALLOT ? 1 : 0,
	};
	unsigned int i;
	int ret;

	for (i = 0; i < NR_MEMS; i++) {
		ret = sacred_perm_set(ctrl, mem[i].id, PID(0), &req);
		if (ret)
			return ret;
	}
	return 0;
}

FIXTURE_SETUP(cons)
{
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	int prog_fd = -1;
	unsigned int i, k;

	if (!st_open(_metadata, &self->ctrl, NR_MEMS, 0))
		return;
	/*
	 * The program first: the harness runs no teardown after a failed
	 * setup, and memories left behind would hold the port for every
	 * test after this one.
	 */
	if (variant->prog) {
		char path[128];

		snprintf(path, sizeof(path), "../examples/policies/%s.bpf.o",
			 variant->prog);
		obj = bpf_object__open_file(path, NULL);
		ASSERT_NE(NULL, obj) TH_LOG("%s: %s", path, strerror(errno));
		prog = bpf_object__next_program(obj, NULL);
		ASSERT_NE(NULL, prog);
		bpf_program__set_type(prog, BPF_PROG_TYPE_SOCKET_FILTER);
		ASSERT_EQ(0, bpf_object__load(obj));
		prog_fd = bpf_program__fd(prog);
	}
	ASSERT_EQ(0, mems_new(self->ctrl, NR_MEMS, TEST_CM_PORT, self->mem,
			      self->have, NULL));
	for (k = 0; k < ROUNDS; k++) {
		ASSERT_EQ(0, pmp_region_everywhere(self->ctrl, self->mem,
						   CONS_BASE + k, variant,
						   prog_fd));
		ASSERT_EQ(0, grant_first_leader(self->ctrl, self->mem,
						CONS_BASE + k, variant->alg));
		ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem,
					       DISK_BASE + k,
					       SACRED_POLICY_STATIC));
	}
	/* The regions hold the program now; its maps live with it. */
	bpf_object__close(obj);
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, rmem_anew(&self->p[i], self->mem, NR_MEMS,
				       PID(i)));
}

FIXTURE_TEARDOWN(cons)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++)
		sacred_rmem_destroy(self->p[i]);
	mems_del(self->ctrl, self->mem, self->have, NR_MEMS);
}

static int open_instance(struct sacred_rmem *rm, int alg, uint32_t region,
			 unsigned int me, struct sacred_pmp **p)
{
	struct sacred_pmp_attr a = {
		.rm = rm,
		.region_id = region,
		.alg = alg,
		.nr_procs = NR_PROCS,
		.me = me,
		.value_max = VALUE_MAX,
	};

	return sacred_pmp_open(&a, p);
}

/* One process's part in a run: propose, record what was decided. */
struct proposer {
	struct sacred_rmem *rm;
	int alg;
	uint32_t region;
	unsigned int me;
	char value[VALUE_MAX];
	char decided[VALUE_MAX + 1];
	struct sacred_pmp_stats stats;
	int ret;
	pthread_barrier_t *start;
};

static void *propose_thread(void *arg)
{
	struct proposer *pr = arg;
	struct sacred_pmp *p;
	size_t len = 0;

	pr->ret = open_instance(pr->rm, pr->alg, pr->region, pr->me, &p);
	if (pr->start)
		pthread_barrier_wait(pr->start);
	if (pr->ret)
		return NULL;
	pr->ret = sacred_pmp_propose(p, pr->value, strlen(pr->value) + 1,
				     pr->decided, VALUE_MAX, &len);
	sacred_pmp_stats(p, &pr->stats);
	sacred_pmp_close(p);
	return NULL;
}

/*
 * The history check: every process that decided decided the same value,
 * and it is one of the values proposed.
 */
static bool history_ok(struct __test_metadata *_metadata,
		       const struct proposer *pr, unsigned int n)
{
	const char *decided = NULL;
	unsigned int i, j;
	bool valid = false;

	for (i = 0; i < n; i++) {
		if (pr[i].ret)
			continue;
		if (!decided)
			decided = pr[i].decided;
		if (strcmp(decided, pr[i].decided)) {
			TH_LOG("agreement violated: \"%s\" vs \"%s\"",
			       decided, pr[i].decided);
			return false;
		}
	}
	if (!decided)
		return true;
	for (j = 0; j < n; j++)
		valid |= !strcmp(decided, pr[j].value);
	if (!valid)
		TH_LOG("validity violated: \"%s\" was never proposed",
		       decided);
	return valid;
}

static void run_contended(struct __test_metadata *_metadata,
			  FIXTURE_DATA(cons) *self, int alg, uint32_t base)
{
	unsigned int k, i, attempts = 0, max_attempts = 0;

	for (k = 0; k < ROUNDS; k++) {
		struct proposer pr[NR_PROCS];
		pthread_t th[NR_PROCS];
		pthread_barrier_t start;

		pthread_barrier_init(&start, NULL, NR_PROCS);
		for (i = 0; i < NR_PROCS; i++) {
			pr[i] = (struct proposer){
				.rm = self->p[i],
				.alg = alg,
				.region = base + k,
				.me = i,
				.start = &start,
			};
			snprintf(pr[i].value, sizeof(pr[i].value),
				 "round %u value of P%u", k, i);
			ASSERT_EQ(0, pthread_create(&th[i], NULL,
						    propose_thread, &pr[i]));
		}
		for (i = 0; i < NR_PROCS; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&start);
		for (i = 0; i < NR_PROCS; i++) {
			EXPECT_EQ(0, pr[i].ret)
				TH_LOG("round %u P%u: %d", k, i, pr[i].ret);
			attempts += pr[i].stats.attempts;
			if (pr[i].stats.attempts > max_attempts)
				max_attempts = pr[i].stats.attempts;
		}
		EXPECT_TRUE(history_ok(_metadata, pr, NR_PROCS));
	}
	TH_LOG("%u rounds of %u contending proposers: %u attempts, at most %u by one",
	       ROUNDS, NR_PROCS, attempts, max_attempts);
}

TEST_F(cons, pmp_fast_path_is_one_round_trip)
{
	struct proposer pr[2] = {
		{ .rm = self->p[0], .alg = variant->alg, .region = CONS_BASE,
		  .me = 0, .value = "first" },
		{ .rm = self->p[1], .alg = variant->alg, .region = CONS_BASE,
		  .me = 1, .value = "second" },
	};

	propose_thread(&pr[0]);
	ASSERT_EQ(0, pr[0].ret);
	EXPECT_STREQ("first", pr[0].decided);
	EXPECT_TRUE(pr[0].stats.fast);
	EXPECT_EQ(1, pr[0].stats.round_trips);
	/* A later proposer finds the decision: 4 round trips, same value. */
	propose_thread(&pr[1]);
	ASSERT_EQ(0, pr[1].ret);
	EXPECT_STREQ("first", pr[1].decided);
	EXPECT_FALSE(pr[1].stats.fast);
	EXPECT_EQ(4, pr[1].stats.round_trips);
}

TEST_F(cons, disk_paxos_fast_path_is_two_round_trips)
{
	struct proposer pr[2] = {
		{ .rm = self->p[0], .alg = SACRED_DISK_PAXOS,
		  .region = DISK_BASE, .me = 0, .value = "first" },
		{ .rm = self->p[2], .alg = SACRED_DISK_PAXOS,
		  .region = DISK_BASE, .me = 2, .value = "third" },
	};

	propose_thread(&pr[0]);
	ASSERT_EQ(0, pr[0].ret);
	EXPECT_TRUE(pr[0].stats.fast);
	EXPECT_EQ(2, pr[0].stats.round_trips);
	propose_thread(&pr[1]);
	ASSERT_EQ(0, pr[1].ret);
	EXPECT_STREQ("first", pr[1].decided);
	EXPECT_EQ(4, pr[1].stats.round_trips);
}

TEST_F(cons, pmp_agreement_under_contention)
{
	run_contended(_metadata, self, variant->alg, CONS_BASE);
}

TEST_F(cons, disk_paxos_agreement_under_contention)
{
	run_contended(_metadata, self, SACRED_DISK_PAXOS, DISK_BASE);
}

/* A minority of memories down, then back: decisions go on. */
TEST_F(cons, minority_of_memories_down_and_back)
{
	struct proposer pr[NR_PROCS];
	unsigned int i;

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	for (i = 0; i < NR_PROCS; i++) {
		pr[i] = (struct proposer){
			.rm = self->p[i],
			.alg = variant->alg,
			.region = CONS_BASE + 1,
			.me = i,
		};
		snprintf(pr[i].value, sizeof(pr[i].value), "P%u", i);
	}
	/* P1 leads while memory 0 is down. */
	propose_thread(&pr[1]);
	ASSERT_EQ(0, pr[1].ret);
	EXPECT_STREQ("P1", pr[1].decided);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_UP, 0, NULL));
	for (i = 0; i < NR_PROCS; i++)
		sacred_rmem_revive(self->p[i]);
	/* Then memory 2 goes down: P2 and P0 still find P1's decision. */
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	propose_thread(&pr[2]);
	propose_thread(&pr[0]);
	for (i = 0; i < NR_PROCS; i++)
		EXPECT_EQ(0, pr[i].ret);
	EXPECT_TRUE(history_ok(_metadata, pr, NR_PROCS));
	EXPECT_STREQ("P1", pr[0].decided);
	EXPECT_STREQ("P1", pr[2].decided);
}

/*
 * The first leader dies before proposing (it holds write permission
 * everywhere): the others take permission from it and decide.
 */
TEST_F(cons, leader_crash_before_proposing)
{
	struct proposer pr[NR_PROCS];
	unsigned int i;

	sacred_rmem_destroy(self->p[0]);
	self->p[0] = NULL;
	for (i = 1; i < NR_PROCS; i++) {
		pr[i] = (struct proposer){
			.rm = self->p[i],
			.alg = variant->alg,
			.region = CONS_BASE + 2,
			.me = i,
		};
		snprintf(pr[i].value, sizeof(pr[i].value), "P%u", i);
		propose_thread(&pr[i]);
		EXPECT_EQ(0, pr[i].ret);
	}
	EXPECT_TRUE(history_ok(_metadata, pr + 1, NR_PROCS - 1));
	EXPECT_STREQ("P1", pr[2].decided);
}

/*
 * The old leader, fenced by a new one, keeps writing its slot with its
 * old key: every write fails, and every process still decides the value
 * the memories hold.
 */
TEST_F(cons, fenced_old_leader_cannot_write)
{
	struct proposer pr[NR_PROCS];
	uint8_t junk[64];
	unsigned int i, m;
	int ret;

	for (i = 0; i < NR_PROCS; i++) {
		pr[i] = (struct proposer){
			.rm = self->p[i],
			.alg = variant->alg,
			.region = CONS_BASE + 3,
			.me = i,
		};
		snprintf(pr[i].value, sizeof(pr[i].value), "P%u", i);
	}
	propose_thread(&pr[0]);
	ASSERT_EQ(0, pr[0].ret);
	EXPECT_TRUE(pr[0].stats.fast);
	/* P1 takes over: it must find P0's decision. */
	propose_thread(&pr[1]);
	ASSERT_EQ(0, pr[1].ret);
	EXPECT_STREQ("P0", pr[1].decided);

	/* P0 scribbles over every slot with the key it had. */
	memset(junk, 0xee, sizeof(junk));
	for (m = 0; m < NR_MEMS; m++) {
		struct sacred_conn *c = sacred_rmem_conn(self->p[0], m);

		for (i = 0; i < 10 && c; i++) {
			ret = sacred_write(c, CONS_BASE + 3, i * 64, junk,
					   sizeof(junk));
			EXPECT_NE(0, ret);
			if (ret == -EBUSY)
				usleep(10000);
		}
	}
	/*
	 * Reconnected, it holds read only, and the memory refuses the
	 * writes: -EACCES, or -ECONNRESET where the memory's disconnect -
	 * the refusal broke its queue pair - reaches the process before
	 * the refusal's completion does (seen on rxe in 6.12, with every
	 * module): a quorum's operations end at the disconnect, where a
	 * blocking call waits for the refusal (CONN_GONE_GRACE_NS).
	 */
	EXPECT_EQ(NR_MEMS, sacred_rmem_revive(self->p[0]));
	for (m = 0; m < NR_MEMS; m++) {
		struct sacred_region_attr ra = {};

		EXPECT_EQ(0, sacred_conn_region(sacred_rmem_conn(self->p[0], m),
						CONS_BASE + 3, &ra));
		EXPECT_EQ(SACRED_ACCESS_READ, ra.access);
	}
	ret = sacred_rmem_write(self->p[0], CONS_BASE + 3, 0, junk,
				sizeof(junk), NULL);
	EXPECT_TRUE(ret == -EACCES || ret == -ECONNRESET)
		TH_LOG("write with read access: %d", ret);
	propose_thread(&pr[2]);
	ASSERT_EQ(0, pr[2].ret);
	EXPECT_STREQ("P0", pr[2].decided);
	EXPECT_TRUE(history_ok(_metadata, pr, NR_PROCS));
}

/*
 * A proposer that opens its instance again (after a crash) has lost
 * which cell of its slot holds its last complete write. A newer cell on
 * one memory may be a write cut short, or a complete write whose other
 * copies are on the memory that does not answer: writing into either
 * cell could tear the last complete one, so it waits until it can tell,
 * and then goes on. lib/pmp.c's cells: 112 bytes with VALUE_MAX 64.
 */
TEST_F(cons, reopened_proposer_waits_to_tell_its_last_complete_write)
{
	struct proposer pr = {
		.rm = self->p[1], .alg = SACRED_DISK_PAXOS,
		.region = DISK_BASE + 5, .me = 1, .value = "first",
	};
	struct sacred_pmp_attr a = {
		.rm = self->p[1],
		.region_id = DISK_BASE + 5,
		.alg = SACRED_DISK_PAXOS,
		.nr_procs = NR_PROCS,
		.me = 1,
		.value_max = VALUE_MAX,
		.timeout_ms = 1500,
	};
	uint8_t payload[24] = { 0 }, cell[112];
	uint64_t mbal = htole64(1000), seq = 0;
	struct sacred_cell_view v;
	struct sacred_conn *c0;
	char out[VALUE_MAX];
	struct sacred_pmp *p;
	unsigned int i;
	size_t len;

	propose_thread(&pr);
	ASSERT_EQ(0, pr.ret);
	/*
	 * Newer than P1's two cells (memory 0 has both, once it answered
	 * what the proposal left it: the proposal returned with a quorum).
	 */
	c0 = sacred_rmem_conn(self->p[1], 0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, once_settled(sacred_read(c0, DISK_BASE + 5,
						      (2 + i) * 112, cell,
						      sizeof(cell))));
		ASSERT_EQ(0, sacred_cell_decode(cell, sizeof(cell), &v));
		if (v.seq > seq)
			seq = v.seq;
	}
	/* P1's promise 1000, in cell 0 of its slot, memory 0 only. */
	memcpy(payload, &mbal, sizeof(mbal));
	ASSERT_EQ(0, sacred_cell_encode(cell, sizeof(cell), seq + 1, PID(1),
					payload, sizeof(payload)));
	ASSERT_EQ(0, sacred_write(sacred_rmem_conn(self->p[1], 0),
				  DISK_BASE + 5, 2 * 112, cell, sizeof(cell)));

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, sacred_pmp_open(&a, &p));
	EXPECT_EQ(-ENOTCONN, sacred_pmp_propose(p, "x", 2, out, sizeof(out),
						&len));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_UP, 0, NULL));
	EXPECT_EQ(0, after_revive(self->p[1], 4,
				  sacred_pmp_propose(p, "x", 2, out,
						     sizeof(out), &len)));
	EXPECT_STREQ("first", out);
	sacred_pmp_close(p);
}

/*
 * Process 0 crashed with its fast write - proposal number 1 - on memory
 * 0 only, and opens again while memory 0 is down. It must not propose
 * number 1 again with another value: P1, reading memories 0 and 1 later,
 * would find two values under one number and could take the one nobody
 * decided. Its first open left the promise of 1 on a quorum; the second
 * finds it and numbers above. The fast write is made by hand (a process
 * cannot be stopped between its write at one memory and the next):
 * lib/pmp.c's cells are 112 bytes with VALUE_MAX 64, the payload (mbal,
 * bal, len, pad) 24 bytes before the value; it goes into the cell the
 * open did not write, above its sequence number.
 */
TEST_F(cons, reopened_first_leader_never_proposes_number_1_twice)
{
	struct sacred_conn *c0 = sacred_rmem_conn(self->p[0], 0);
	struct proposer pr = {
		.rm = self->p[1], .alg = variant->alg,
		.region = CONS_BASE + 4, .me = 1, .value = "P1",
	};
	uint8_t payload[24 + 5] = { 0 }, cell[112];
	uint64_t one = htole64(1), seq = 0;
	uint32_t vlen = htole32(5);
	struct sacred_cell_view v;
	unsigned int i, older = 0;
	struct sacred_pmp *p;
	char out[VALUE_MAX];
	size_t len;

	ASSERT_EQ(0, open_instance(self->p[0], variant->alg, CONS_BASE + 4, 0,
				   &p));
	sacred_pmp_close(p);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, once_settled(sacred_read(c0, CONS_BASE + 4,
						      i * 112, cell,
						      sizeof(cell))));
		if (!sacred_cell_decode(cell, sizeof(cell), &v) &&
		    v.seq > seq) {
			seq = v.seq;
			older = 1 - i;
		}
	}
	memcpy(payload, &one, 8);
	memcpy(payload + 8, &one, 8);
	memcpy(payload + 16, &vlen, 4);
	memcpy(payload + 24, "lost", 5);
	ASSERT_EQ(0, sacred_cell_encode(cell, sizeof(cell), seq + 1, PID(0),
					payload, sizeof(payload)));
	ASSERT_EQ(0, sacred_write(c0, CONS_BASE + 4, older * 112, cell,
				  sizeof(cell)));

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, open_instance(self->p[0], variant->alg, CONS_BASE + 4, 0,
				   &p));
	ASSERT_EQ(0, sacred_pmp_propose(p, "second", 7, out, sizeof(out),
					&len));
	EXPECT_STREQ("second", out);
	sacred_pmp_close(p);

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_UP, 0, NULL));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	propose_thread(&pr);
	ASSERT_EQ(0, pr.ret);
	EXPECT_STREQ("second", pr.decided);
}

TEST_HARNESS_MAIN
