// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_cheapq - Byzantine consensus (lib/cheapq.c) on three memory instances,
 * three processes with Ed25519 keys, f = 1: all correct (decided on the
 * fast path, everyone the leader's value, the leader in one round trip);
 * a silent leader (everyone panics, the leader's write permission is
 * revoked for good by the revoke-only policy, the memory refuses its
 * writes and its request to get it back, and the backup decides one of
 * the others' inputs); an equivocating leader (no fast-path decision; the
 * backup agrees on one of its two values); a Byzantine leader that lets
 * P1 decide on the fast path and then lies - P2 still decides P1's value;
 * a Byzantine backup leader whose unjustified proposal nobody accepts.
 * Then a correct leader that decided after its one write, with a
 * Byzantine follower: a forged, a garbage and a replayed copy are not
 * counted (and the follower cannot write another's region or the
 * leader's); a follower that withholds its copy and, leading a backup
 * round, proposes its own unproven value is refused; one that carries a
 * value with a forged leader signature is caught. Each time the backup
 * decides the leader's value. A follower that opens only after a panic
 * took its commit write still joins and decides in the backup; a backup
 * cut off from its memories for a while goes on when called again. Last,
 * a leader that decided and comes back with a fresh handle proposes the
 * value it signed, not a second one; one that comes back unable to tell
 * whether it signed (a memory silent) signs nothing new, while a leader
 * opening a new instance with a memory down takes the fast path.
 *
 * Regions: sacred_cheapq_setup() at CHEAPQ_BASE on every instance.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7561
#define NR_MEMS		3
#define NR_PROCS	3
#define PID(i)		(801 + (i))
#define CHEAPQ_BASE		50
#define VALUE_MAX	64
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

FIXTURE(cheapq) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	bool have[NR_MEMS];
	char dir[64];
	struct sacred_bz_keys *keys[NR_PROCS];
	struct sacred_rmem *rm[NR_PROCS];
	struct sacred_cheapq *cheapq[NR_PROCS];
	struct sacred_cheapq_attr ca[NR_PROCS];	/* to open a handle again */
};

FIXTURE_SETUP(cheapq)
{
	struct sacred_cheapq_attr ca0;
	uint32_t ids[NR_MEMS];
	unsigned int i;

	if (!st_open(_metadata, &self->ctrl, NR_MEMS, 0))
		return;
	st_keys_dir(_metadata, self->dir, sizeof(self->dir), "cheapq",
		    NR_PROCS);
	ASSERT_EQ(0, mems_new(self->ctrl, NR_MEMS, TEST_CM_PORT, self->mem,
			      self->have, NULL));
	for (i = 0; i < NR_MEMS; i++)
		ids[i] = self->mem[i].id;
	ca0 = (struct sacred_cheapq_attr){
		.base_region = CHEAPQ_BASE,
		.leader_pid = PID(0),
		.value_max = VALUE_MAX,
		.timeout_ms = 500 * test_slow(),
		/*
		 * Backup steps wait 2 s (x round + 1): long enough that the
		 * late Byzantine P0's round-0 proposal is seen and refused
		 * even on a loaded TCG host.
		 */
		.round_ms = 2000 * test_slow(),
	};
	ASSERT_EQ(0, sacred_cheapq_setup(self->ctrl, ids, NR_MEMS, &ca0,
				     NR_PROCS));
	st_bz_procs_open(_metadata, self->dir, NR_PROCS, PID(0), self->mem,
			 NR_MEMS, self->keys, self->rm);
	for (i = 0; i < NR_PROCS; i++) {
		struct sacred_cheapq_attr ca = ca0;

		ca.rm = self->rm[i];
		ca.keys = self->keys[i];
		self->ca[i] = ca;
		ASSERT_EQ(0, sacred_cheapq_open(&ca, &self->cheapq[i]));
	}
}

FIXTURE_TEARDOWN(cheapq)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++)
		sacred_cheapq_close(self->cheapq[i]);
	st_bz_procs_close(self->dir, NR_PROCS, self->keys, self->rm);
	mems_del(self->ctrl, self->mem, self->have, NR_MEMS);
}

struct proposer {
	struct sacred_cheapq *cheapq;
	const struct sacred_mem_info *mem; /* for wait_revoked */
	char in[VALUE_MAX];
	char out[VALUE_MAX + 1];
	int ret;
	int help; /* sacred_cheapq_help()'s result, or 1: not run */
	unsigned int delay_ms; /* wait before proposing (x test_slow()) */
	bool wait_revoked; /* wait until a panic revoked the leader */
	int help_ms; /* how long to help; 0: 8000 (x test_slow()) */
	bool helper; /* decided before: only help */
	bool retry; /* propose again after an error, for 60 s */
	unsigned int errors; /* errors that a retry went on from */
	struct sacred_cheapq_stats st;
	struct sacred_cheapq_stats st_help; /* after helping */
};

/*
 * Wait until process @pid has lost write on @region at a quorum of the
 * memories - somebody panicked - or 60 s passed. With its own netlink
 * socket: the threads of a test share nothing else.
 */
static void wait_revoked(const struct sacred_mem_info *mem, uint32_t region,
			 uint32_t pid)
{
	struct sacred_acl_entry acl[NR_PROCS];
	struct sacred_ctrl *ctrl;
	unsigned int i, j, n, gone = 0;
	int tries;

	if (sacred_ctrl_open(&ctrl))
		return;
	for (tries = 0; tries < 6000 && gone < NR_MEMS / 2 + 1; tries++) {
		usleep(10000);
		for (i = 0, gone = 0; i < NR_MEMS; i++) {
			if (sacred_region_get_acl(ctrl, mem[i].id, region, acl,
						  NR_PROCS, &n, NULL))
				continue;
			for (j = 0; j < n && j < NR_PROCS; j++)
				if (acl[j].process_id == pid &&
				    !(acl[j].access_cur & SACRED_ACCESS_WRITE))
					gone++;
		}
	}
	sacred_ctrl_close(ctrl);
}

/* The leader lost write on the leader region. */
static void wait_leader_revoked(const struct sacred_mem_info *mem)
{
	wait_revoked(mem, CHEAPQ_BASE, PID(0));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *propose_thread(void *arg)
{
	struct proposer *p = arg;
	size_t len = 0;

	p->help = 1;
	if (p->wait_revoked)
		wait_leader_revoked(p->mem);
	if (p->delay_ms)
		usleep(p->delay_ms * 1000 * test_slow());
	if (!p->helper) {
		uint64_t end = now_ms() + 60000;

		while ((p->ret = sacred_cheapq_propose(p->cheapq, p->in,
						   strlen(p->in) + 1, p->out,
						   VALUE_MAX, &len)) &&
		       p->retry && p->ret != -EALREADY && now_ms() < end) {
			p->errors++;
			usleep(100000);
		}
		p->out[len < VALUE_MAX ? len : VALUE_MAX] = '\0';
		sacred_cheapq_stats(p->cheapq, &p->st);
	}
	/* Stay for the others: they may need us for a quorum. */
	if (!p->ret)
		p->help = sacred_cheapq_help(p->cheapq,
					     (p->help_ms ? p->help_ms : 8000) *
						     test_slow());
	sacred_cheapq_stats(p->cheapq, &p->st_help);
	return NULL;
}

static void run(FIXTURE_DATA(cheapq) * self, struct proposer *p,
		unsigned int mask)
{
	pthread_t th[NR_PROCS];
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++)
		if (mask & (1U << i))
			pthread_create(&th[i], NULL, propose_thread, &p[i]);
	for (i = 0; i < NR_PROCS; i++)
		if (mask & (1U << i))
			pthread_join(th[i], NULL);
}

/* Everyone decided the leader's value on the fast path. */
static void expect_all_fast(struct __test_metadata *_metadata,
			    const struct proposer *p)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		EXPECT_EQ(0, p[i].ret) TH_LOG("P%u: %d", i, p[i].ret);
		EXPECT_STREQ("value of P0", p[i].out);
		EXPECT_TRUE(p[i].st.fast) TH_LOG("P%u not on the fast path", i);
	}
}

TEST_F(cheapq, all_correct_decide_on_the_fast_path)
{
	struct proposer p[NR_PROCS];
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		p[i] = (struct proposer){ .cheapq = self->cheapq[i] };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
	}
	run(self, p, 7);
	expect_all_fast(_metadata, p);
	for (i = 0; i < NR_PROCS; i++) {
		/* everyone decided and said so: nobody needs help */
		EXPECT_EQ(0, p[i].help);
		TH_LOG("P%u: %u round trips", i, p[i].st.round_trips);
	}
	/* the leader: its value's write */
	EXPECT_EQ(1U, p[0].st.round_trips);
}

/* Agreement, and validity: the decision is one of @nr @inputs. */
static void expect_one_of(struct __test_metadata *_metadata,
			  struct proposer *p, unsigned int mask,
			  const char *const *inputs, unsigned int nr)
{
	const char *d = NULL;
	unsigned int i, j;
	bool valid;

	for (i = 0; i < NR_PROCS; i++) {
		if (!(mask & (1U << i)))
			continue;
		ASSERT_EQ(0, p[i].ret) TH_LOG("P%u: %d", i, p[i].ret);
		EXPECT_NE(-EPROTO, p[i].help);
		if (!d)
			d = p[i].out;
		EXPECT_STREQ(d, p[i].out);
		for (j = 0, valid = false; j < nr; j++)
			valid |= !strcmp(inputs[j], p[i].out);
		EXPECT_TRUE(valid) TH_LOG("P%u decided \"%s\"", i, p[i].out);
		TH_LOG("P%u: \"%s\", fast %d, carried %u, %u backup rounds, faulty %#x",
		       i, p[i].out, p[i].st.fast, p[i].st.carried,
		       p[i].st.backup_rounds, p[i].st.faulty);
	}
}

/*
 * The leader says nothing: everyone panics, the leader's write is
 * revoked and nothing gives it back; the backup decides one of the
 * others' inputs.
 */
TEST_F(cheapq, silent_leader_is_revoked_for_good)
{
	static const char *const in[] = { "value of P1", "value of P2" };
	struct sacred_perm_req req = { .region_id = CHEAPQ_BASE, .access = RW };
	struct sacred_rmem_result res;
	struct proposer p[NR_PROCS];
	unsigned int i;
	int ret;

	for (i = 1; i < NR_PROCS; i++) {
		p[i] = (struct proposer){ .cheapq = self->cheapq[i] };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
	}
	run(self, p, 6);
	expect_one_of(_metadata, p, 6, in, 2);
	for (i = 1; i < NR_PROCS; i++) {
		EXPECT_TRUE(p[i].st.panicked);
		EXPECT_EQ(SACRED_CHEAPQ_CARRY_INPUT, p[i].st.carried);
	}
	/* The leader wakes up: the memory refuses its value ... */
	ret = sacred_cheapq_lead_value(self->cheapq[0], "late", 5);
	TH_LOG("the revoked leader writes: %d", ret);
	EXPECT_TRUE(ret == -EACCES || ret == -ECONNRESET || ret == -ENOTCONN);
	/* ... and its request to get write back. */
	sacred_rmem_revive(self->rm[0]);
	EXPECT_EQ(-EPERM, sacred_rmem_change_perm(self->rm[0], &req, &res));
	EXPECT_EQ(SACRED_REFUSE_NO_GRANT, res.perm[0].reason);
}

/*
 * The instance made again on the same regions, with the same keys, is a
 * new instance. In the first, everyone decides on the fast path, so P2's
 * commit region holds a unanimity certificate. The regions are deleted
 * and sacred_cheapq_setup() makes them again (a new tag); P2, Byzantine,
 * writes its old commit region back, byte for byte. The leader stays
 * silent: P1 and P2 panic, and P1 reads P2's commit region after
 * revoking it. The old certificate must not count - were it taken, P1
 * would carry it certified and the backup would decide "value of P0",
 * which nobody proposed in this instance (and, had P0's new value been
 * decided on the fast path, against it).
 */
TEST_F(cheapq, certificate_of_an_earlier_instance_is_not_counted)
{
	static const char *const in[] = { "value of P1", "value of P2" };
	const uint32_t commit2 = CHEAPQ_BASE + 1 + NR_PROCS + 2;
	uint8_t old[NR_MEMS][4096], *bufs[NR_MEMS];
	struct sacred_rmem_result res;
	struct proposer p[NR_PROCS];
	struct sacred_cheapq_attr ca;
	uint32_t ids[NR_MEMS];
	unsigned int i, j;
	uint64_t t1, t2;

	for (i = 0; i < NR_PROCS; i++) {
		p[i] = (struct proposer){ .cheapq = self->cheapq[i] };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
	}
	run(self, p, 7);
	expect_all_fast(_metadata, p);
	for (i = 0; i < NR_MEMS; i++)
		bufs[i] = old[i];
	ASSERT_EQ(0,
		  sacred_rmem_read(self->rm[2], commit2, 0, (void *const *)bufs,
				   sizeof(old[0]), true, &res));
	ASSERT_TRUE(res.ok & 1);
	ASSERT_EQ(0,
		  sacred_rmem_region_tag(self->rm[2], CHEAPQ_BASE, &t1, NULL));

	for (i = 0; i < NR_PROCS; i++) {
		sacred_cheapq_close(self->cheapq[i]);
		self->cheapq[i] = NULL;
	}
	for (i = 0; i < NR_MEMS; i++) {
		ids[i] = self->mem[i].id;
		for (j = 0; j <= 3 * NR_PROCS; j++)
			ASSERT_EQ(0, sacred_region_del(self->ctrl, ids[i],
						       CHEAPQ_BASE + j));
	}
	/* Made again with a tag given, as each of several hosts would. */
	ca = self->ca[0];
	ca.tag = t1 + 1;
	ASSERT_EQ(0,
		  sacred_cheapq_setup(self->ctrl, ids, NR_MEMS, &ca, NR_PROCS));
	/* Through new replicated-memory handles: one per incarnation. */
	for (i = 0; i < NR_PROCS; i++) {
		ASSERT_EQ(0,
			  rmem_anew(&self->rm[i], self->mem, NR_MEMS, PID(i)));
		self->ca[i].rm = self->rm[i];
		ASSERT_EQ(0,
			  sacred_cheapq_open(&self->ca[i], &self->cheapq[i]));
	}
	ASSERT_EQ(0,
		  sacred_rmem_region_tag(self->rm[2], CHEAPQ_BASE, &t2, NULL));
	EXPECT_EQ(t1 + 1, t2);
	/* P2 puts the old certificate back (memory 0's bytes, everywhere). */
	ASSERT_EQ(0, sacred_rmem_write(self->rm[2], commit2, 0, old[0],
				       sizeof(old[0]), NULL));

	for (i = 1; i < NR_PROCS; i++) {
		p[i] = (struct proposer){ .cheapq = self->cheapq[i] };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
	}
	run(self, p, 6);
	expect_one_of(_metadata, p, 6, in, 2);
	EXPECT_TRUE(p[1].st.panicked);
	EXPECT_EQ(SACRED_CHEAPQ_CARRY_INPUT, p[1].st.carried);
}

/* A process that names the tag it expects opens only that instance. */
TEST_F(cheapq, open_with_another_tag_is_refused)
{
	struct sacred_cheapq_attr ca = self->ca[1];
	uint64_t tag;

	ASSERT_EQ(0,
		  sacred_rmem_region_tag(self->rm[1], CHEAPQ_BASE, &tag, NULL));
	sacred_cheapq_close(self->cheapq[1]);
	self->cheapq[1] = NULL;
	ca.tag = tag ^ 1;
	EXPECT_EQ(-EPROTO, sacred_cheapq_open(&ca, &self->cheapq[1]));
	ca.tag = tag;
	EXPECT_EQ(0, sacred_cheapq_open(&ca, &self->cheapq[1]));
}

/* Make P2's region again on memory @i alone, ACL and all, with @tag. */
static int remake_p2(FIXTURE_DATA(cheapq) *self, unsigned int i, uint64_t tag)
{
	struct sacred_acl_entry acl[NR_PROCS];
	const uint32_t region = CHEAPQ_BASE + 1 + 2;
	const uint32_t mem = self->mem[i].id;
	struct sacred_region_info ri;
	unsigned int n;
	int ret;

	ret = sacred_region_get(self->ctrl, mem, region, &ri);
	if (!ret)
		ret = sacred_region_get_acl(self->ctrl, mem, region, acl,
					    NR_PROCS, &n, NULL);
	if (!ret)
		ret = sacred_region_del(self->ctrl, mem, region);
	if (!ret)
		ret = sacred_region_new_tagged(self->ctrl, mem, region,
					       ri.size, ri.policy, tag, NULL);
	return ret ?: sacred_region_set_acl(self->ctrl, mem, region, acl, n);
}

/*
 * A memory holding another incarnation of a region is left out of it (a
 * memory that forgot): the instance opens on the others. With a second
 * one, no quorum holds one incarnation: no instance.
 */
TEST_F(cheapq, memories_of_another_incarnation_are_left_out)
{
	uint64_t tag;
	uint32_t mask;

	ASSERT_EQ(0,
		  sacred_rmem_region_tag(self->rm[1], CHEAPQ_BASE, &tag, NULL));
	sacred_cheapq_close(self->cheapq[1]);
	self->cheapq[1] = NULL;
	ASSERT_EQ(0, remake_p2(self, 2, tag + 1));
	ASSERT_EQ(0, after_revive(self->rm[1], 3,
				  sacred_cheapq_open(&self->ca[1],
						     &self->cheapq[1])));
	ASSERT_EQ(0, sacred_rmem_region_tag(self->rm[1], CHEAPQ_BASE + 1 + 2,
					    &tag, &mask));
	EXPECT_EQ(3, mask);

	sacred_cheapq_close(self->cheapq[1]);
	self->cheapq[1] = NULL;
	ASSERT_EQ(0, remake_p2(self, 1, tag + 2));
	EXPECT_EQ(-EPROTO, after_revive(self->rm[1], 3,
					sacred_cheapq_open(&self->ca[1],
						       &self->cheapq[1])));
}

/*
 * A follower slow to start: by the time it opens, P1 (the leader silent)
 * panicked and took its write on its commit region. It still joins - no
 * fast path for it, straight into the backup - and P1, which needs it
 * for a quorum, decides with it.
 */
TEST_F(cheapq, follower_late_after_a_panic_still_joins)
{
	static const char *const in[] = { "value of P1", "value of P2" };
	struct proposer p[NR_PROCS];
	pthread_t th[NR_PROCS];
	unsigned int i;

	p[1] = (struct proposer){ .cheapq = self->cheapq[1], .in = "value of P1" };
	pthread_create(&th[1], NULL, propose_thread, &p[1]);
	/* P1's panic: its commit write freezes P2's commit region. */
	wait_revoked(self->mem, CHEAPQ_BASE + 1 + NR_PROCS + 2, PID(2));
	sacred_cheapq_close(self->cheapq[2]);
	self->cheapq[2] = NULL;
	EXPECT_EQ(0, sacred_cheapq_open(&self->ca[2], &self->cheapq[2]));
	if (self->cheapq[2]) {
		p[2] = (struct proposer){ .cheapq = self->cheapq[2],
					  .in = "value of P2" };
		pthread_create(&th[2], NULL, propose_thread, &p[2]);
		pthread_join(th[2], NULL);
	}
	pthread_join(th[1], NULL);
	if (!self->cheapq[2])
		return;
	expect_one_of(_metadata, p, 6, in, 2);
	for (i = 1; i < NR_PROCS; i++)
		EXPECT_FALSE(p[i].st.fast);
}

/*
 * The leader silent, P1 and P2 in the backup - and two memories go down
 * for a while: their backup calls fail. Called again, each goes on where
 * it stopped (the message whose broadcast failed sent again as it was),
 * and they decide together once the memories are back.
 */
TEST_F(cheapq, backup_goes_on_after_the_memories_come_back)
{
	static const char *const in[] = { "value of P1", "value of P2" };
	struct proposer p[NR_PROCS];
	pthread_t th[NR_PROCS];
	unsigned int i;

	for (i = 1; i < NR_PROCS; i++) {
		p[i] = (struct proposer){ .cheapq = self->cheapq[i],
					  .retry = true };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
		pthread_create(&th[i], NULL, propose_thread, &p[i]);
	}
	wait_leader_revoked(self->mem);
	usleep(300000);
	for (i = 1; i < NR_MEMS; i++)
		ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[i].id,
					    SACRED_MEM_DOWN, 0, NULL));
	sleep(3);
	for (i = 1; i < NR_MEMS; i++)
		ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[i].id,
					    SACRED_MEM_UP, 0, NULL));
	for (i = 1; i < NR_PROCS; i++)
		pthread_join(th[i], NULL);
	expect_one_of(_metadata, p, 6, in, 2);
	TH_LOG("errors gone on from: P1 %u, P2 %u", p[1].errors,
	       p[2].errors);
	EXPECT_LE(1, p[1].errors + p[2].errors);
}

/*
 * A new instance whose processes open it with memory 2 down - a crashed
 * memory is a fault the model allows: the leader, opening it for the
 * first time, finds no mark of its own, so it signed nothing; it marks
 * (one write at the open) and takes the fast path like everyone else.
 */
TEST_F(cheapq, instance_opened_with_a_memory_down_takes_the_fast_path)
{
	struct sacred_cheapq_attr ca = self->ca[0];
	struct proposer p[NR_PROCS];
	uint32_t ids[NR_MEMS];
	unsigned int i;

	for (i = 0; i < NR_MEMS; i++)
		ids[i] = self->mem[i].id;
	for (i = 0; i < NR_PROCS; i++) {
		sacred_cheapq_close(self->cheapq[i]);
		self->cheapq[i] = NULL;
	}
	ca.base_region = CHEAPQ_BASE + 100;
	ASSERT_EQ(0,
		  sacred_cheapq_setup(self->ctrl, ids, NR_MEMS, &ca, NR_PROCS));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	for (i = 0; i < NR_PROCS; i++) {
		ca = self->ca[i];
		ca.base_region = CHEAPQ_BASE + 100;
		ASSERT_EQ(0, after_revive(self->rm[i], 5,
					  sacred_cheapq_open(
						  &ca, &self->cheapq[i])));
		p[i] = (struct proposer){ .cheapq = self->cheapq[i] };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
	}
	run(self, p, 7);
	expect_all_fast(_metadata, p);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id, SACRED_MEM_UP,
				    0, NULL));
}

/*
 * The leader signs a value that only memory 0 takes (1 and 2 are down),
 * then crashes, and comes back while memory 0 is down: the two memories
 * that answer hold nothing, but memory 0 may hold a value it signed. It
 * must not sign another - a second signed value, which a follower could
 * hold against the first - so it takes no fast path: the backup decides.
 */
TEST_F(cheapq, restarted_leader_unsure_of_what_it_signed_signs_nothing)
{
	static const char *const in[] = { "second", "P1", "P2" };
	struct proposer p[NR_PROCS];
	size_t len;
	int ret;

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ret = sacred_cheapq_propose(self->cheapq[0], "first", 6, p[0].out,
				    VALUE_MAX, &len);
	TH_LOG("the leader's propose with one memory up: %d", ret);
	EXPECT_NE(0, ret);
	sacred_cheapq_close(self->cheapq[0]);
	self->cheapq[0] = NULL;
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id, SACRED_MEM_UP,
				    0, NULL));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id, SACRED_MEM_UP,
				    0, NULL));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, after_revive(self->rm[0], 5,
				  sacred_cheapq_open(&self->ca[0],
						     &self->cheapq[0])));

	p[0] = (struct proposer){ .cheapq = self->cheapq[0], .in = "second" };
	p[1] = (struct proposer){ .cheapq = self->cheapq[1], .in = "P1" };
	p[2] = (struct proposer){ .cheapq = self->cheapq[2], .in = "P2" };
	run(self, p, 7);
	expect_one_of(_metadata, p, 7, in, 3);
	EXPECT_FALSE(p[0].st.fast);
	EXPECT_TRUE(p[0].st.panicked);
	EXPECT_FALSE(p[1].st.fast);
	EXPECT_FALSE(p[2].st.fast);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_UP, 0, NULL));
}

/*
 * The leader signs two values: P1 copies one, P2 the other. No fast-path
 * decision; the backup agrees on one of the two. P1 stops right after its
 * copy (no clock of its runs meanwhile), so the leader's second value is
 * written while P1 is still on the fast path whatever the host's speed.
 */
TEST_F(cheapq, equivocating_leader_gets_no_fast_decision)
{
	static const char *const in[] = { "red", "blue" };
	struct proposer p[NR_PROCS];
	pthread_t th;
	size_t len;

	ASSERT_EQ(0, sacred_cheapq_lead_value(self->cheapq[0], "red", 4));
	ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[1],
					     SACRED_CHEAPQ_STALL_AFTER_COPY,
					     NULL, 0));
	ASSERT_EQ(-EINPROGRESS,
		  sacred_cheapq_propose(self->cheapq[1], "P1", 3, p[1].out,
					VALUE_MAX, &len));
	/* P1 copied "red"; now the leader signs and writes another value. */
	ASSERT_EQ(0, sacred_cheapq_lead_value(self->cheapq[0], "blue", 5));
	/* P1 resumes and finds "blue"; P2 copies it and finds P1's "red". */
	p[1] = (struct proposer){ .cheapq = self->cheapq[1], .in = "P1" };
	pthread_create(&th, NULL, propose_thread, &p[1]);
	p[2] = (struct proposer){ .cheapq = self->cheapq[2], .in = "P2" };
	propose_thread(&p[2]);
	pthread_join(th, NULL);
	expect_one_of(_metadata, p, 6, in, 2);
	EXPECT_FALSE(p[1].st.fast);
	EXPECT_FALSE(p[2].st.fast);
	EXPECT_EQ(SACRED_CHEAPQ_CARRY_COPY, p[1].st.carried);
	EXPECT_EQ(SACRED_CHEAPQ_CARRY_COPY, p[2].st.carried);
}

/*
 * A Byzantine leader lets P1 decide "red" on the fast path - P2 copied
 * "red" too, but is slow - then writes a signed "blue" over its value:
 * P2 wakes up, sees the lie and panics.
 * The leader then joins the backup carrying "blue" and, as round 0's
 * leader, proposes it. P2 must still decide "red": its panic froze P1's
 * commit region and found P1's certificate.
 */
TEST_F(cheapq, fast_decision_survives_a_lying_leader)
{
	static const char *const in[] = { "red" };
	struct proposer p[NR_PROCS];
	size_t len;

	ASSERT_EQ(0, sacred_cheapq_lead_value(self->cheapq[0], "red", 4));
	/* P2 is slow: it copies "red", then nothing for a while. */
	ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[2],
					     SACRED_CHEAPQ_STALL_AFTER_COPY,
					     NULL, 0));
	ASSERT_EQ(-EINPROGRESS,
		  sacred_cheapq_propose(self->cheapq[2], "P2", 3, p[2].out,
					VALUE_MAX, &len));
	p[1] = (struct proposer){ .cheapq = self->cheapq[1], .in = "P1" };
	ASSERT_EQ(0, sacred_cheapq_propose(p[1].cheapq, p[1].in, 3, p[1].out,
					   VALUE_MAX, &len));
	sacred_cheapq_stats(p[1].cheapq, &p[1].st);
	ASSERT_TRUE(p[1].st.fast);
	ASSERT_STREQ("red", p[1].out);
	p[1].helper = true;

	ASSERT_EQ(0, sacred_cheapq_lead_value(self->cheapq[0], "blue", 5));
	ASSERT_EQ(0,
		  sacred_cheapq_misbehave(self->cheapq[0],
					  SACRED_CHEAPQ_BAD_CARRY, "blue", 5));
	ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[0],
					     SACRED_CHEAPQ_BAD_PROPOSE, "blue",
					     5));
	p[0] = (struct proposer){ .cheapq = self->cheapq[0],
				  .in = "P0",
				  .delay_ms = 300 };
	p[2] = (struct proposer){ .cheapq = self->cheapq[2], .in = "P2" };
	run(self, p, 7);
	expect_one_of(_metadata, p, 6, in, 1);
	EXPECT_TRUE(p[2].st.panicked);
	EXPECT_EQ(SACRED_CHEAPQ_CARRY_CERTIFIED, p[2].st.carried);
	/* P0's proposal of "blue" was refused, and P0 caught */
	EXPECT_EQ(1U, p[2].st.faulty);
	TH_LOG("the Byzantine leader: %d \"%s\"", p[0].ret, p[0].out);
}

/*
 * The leader stays silent in the fast path until the others panicked,
 * then joins the backup and, as round 0's leader, proposes "evil", which
 * nobody carried: refused.
 * The decision is one of the carried values, never "evil".
 */
TEST_F(cheapq, unjustified_proposal_is_refused)
{
	static const char *const in[] = { "value of P1", "value of P2",
					  "P0 carry" };
	struct proposer p[NR_PROCS];
	unsigned int i;

	ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[0],
					     SACRED_CHEAPQ_BAD_CARRY,
					     "P0 carry", 9));
	ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[0],
					     SACRED_CHEAPQ_BAD_PROPOSE, "evil",
					     5));
	for (i = 0; i < NR_PROCS; i++) {
		p[i] = (struct proposer){ .cheapq = self->cheapq[i] };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
	}
	p[0].mem = self->mem;
	p[0].wait_revoked = true;
	run(self, p, 7);
	expect_one_of(_metadata, p, 6, in, 3);
	EXPECT_STRNE("evil", p[1].out);
	/* round 0 was P0's: refused, P0 caught; round 1 decided */
	EXPECT_GE(p[1].st.backup_rounds, 2);
	EXPECT_EQ(1U, p[1].st.faulty);
	EXPECT_EQ(1U, p[2].st.faulty);
	TH_LOG("the Byzantine leader: %d \"%s\"", p[0].ret, p[0].out);
}

/* The correct leader proposes this and decides it after one write. */
#define LEADS "the leader's value"

static void leader_decides(struct __test_metadata *_metadata,
			   FIXTURE_DATA(cheapq) * self, struct proposer *p)
{
	size_t len;

	*p = (struct proposer){ .cheapq = self->cheapq[0],
				.in = LEADS,
				.helper = true };
	ASSERT_EQ(0, sacred_cheapq_propose(p->cheapq, LEADS, sizeof(LEADS),
					   p->out, VALUE_MAX, &len));
	sacred_cheapq_stats(p->cheapq, &p->st);
	ASSERT_TRUE(p->st.fast);
	ASSERT_STREQ(LEADS, p->out);
}

/*
 * The leader decided after its write; P2 writes a bad copy and says
 * nothing more. P1 must neither count the copy (no certificate, no fast
 * decision) nor take it for the leader's second value: it times out,
 * panics, carries its copy, and the backup decides the leader's value.
 */
static void bad_copy(struct __test_metadata *_metadata,
		     FIXTURE_DATA(cheapq) *self, int how)
{
	static const char *const in[] = { LEADS };
	struct proposer p[NR_PROCS];
	uint8_t junk[VALUE_MAX];
	unsigned int i;
	size_t len;

	leader_decides(_metadata, self, &p[0]);
	p[0].help_ms = 4000;
	p[1] = (struct proposer){ .cheapq = self->cheapq[1],
				  .in = "P1",
				  .help_ms = 4000 };
	switch (how) {
	case SACRED_CHEAPQ_REPLAY_COPY:
		/* P1 copies first; P2 passes P1's signed copy off as its own */
		ASSERT_EQ(0, sacred_cheapq_misbehave(
				     self->cheapq[1],
				     SACRED_CHEAPQ_STALL_AFTER_COPY, NULL, 0));
		ASSERT_EQ(-EINPROGRESS,
			  sacred_cheapq_propose(self->cheapq[1], "P1", 3,
						p[1].out, VALUE_MAX, &len));
		ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[2], how, NULL,
						     0));
		break;
	case SACRED_CHEAPQ_GARBAGE_COPY:
		srand(getpid());
		for (i = 0; i < sizeof(junk); i++)
			junk[i] = rand();
		ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[2], how, junk,
						     sizeof(junk)));
		break;
	default:
		/* the leader's own value, with a made-up leader signature */
		ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[2], how,
						     LEADS, sizeof(LEADS)));
		break;
	}
	run(self, p, 3);
	expect_one_of(_metadata, p, 3, in, 1);
	EXPECT_FALSE(p[1].st.fast);
	EXPECT_TRUE(p[1].st.panicked);
	EXPECT_EQ(SACRED_CHEAPQ_CARRY_COPY, p[1].st.carried);
}

TEST_F(cheapq, forged_copy_is_not_counted)
{
	struct sacred_rmem_result res;
	char junk[64] = "not yours";

	bad_copy(_metadata, self, SACRED_CHEAPQ_BAD_COPY);
	/* nor can P2 write P1's region or the leader's: the memory refuses */
	EXPECT_NE(0, sacred_rmem_write(self->rm[2], CHEAPQ_BASE + 1 + 1, 0,
				       junk, sizeof(junk), &res));
	EXPECT_EQ(0U, res.ok);
	sacred_rmem_revive(self->rm[2]);
	EXPECT_NE(0, sacred_rmem_write(self->rm[2], CHEAPQ_BASE, 0, junk,
				       sizeof(junk), &res));
	EXPECT_EQ(0U, res.ok);
}

TEST_F(cheapq, garbage_copy_is_not_counted)
{
	bad_copy(_metadata, self, SACRED_CHEAPQ_GARBAGE_COPY);
}

TEST_F(cheapq, replayed_copy_is_not_counted)
{
	bad_copy(_metadata, self, SACRED_CHEAPQ_REPLAY_COPY);
}

/*
 * The leader decided after its write, then stays away from the backup
 * for a while. P1, Byzantine, withholds its copy until P2 timed out and
 * panicked, then carries "evil" with no proof into the backup and, as
 * round 1's leader (round 0's, the leader, is not there), proposes it to
 * a quorum of itself and P2. P2 carries the leader's value signed: a
 * plain value cannot be proposed over it - were it accepted, P2 would
 * decide "evil" against the leader's decision. P2 refuses it, catches
 * P1, and decides the leader's value with the leader in a later round.
 */
TEST_F(cheapq, withheld_copy_and_unproven_proposal_are_refused)
{
	static const char *const in[] = { LEADS };
	struct proposer p[NR_PROCS];

	leader_decides(_metadata, self, &p[0]);
	p[0].delay_ms = 3000;
	p[0].help_ms = 40000;
	ASSERT_EQ(0,
		  sacred_cheapq_misbehave(self->cheapq[1],
					  SACRED_CHEAPQ_BAD_CARRY, "evil", 5));
	ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[1],
					     SACRED_CHEAPQ_BAD_PROPOSE, "evil",
					     5));
	p[1] = (struct proposer){ .cheapq = self->cheapq[1],
				  .in = "P1",
				  .mem = self->mem,
				  .wait_revoked = true,
				  .help_ms = 40000 };
	p[2] = (struct proposer){ .cheapq = self->cheapq[2],
				  .in = "P2",
				  .help_ms = 40000 };
	run(self, p, 7);
	expect_one_of(_metadata, p, 5, in, 1);
	EXPECT_TRUE(p[2].st.panicked);
	EXPECT_EQ(SACRED_CHEAPQ_CARRY_COPY, p[2].st.carried);
	EXPECT_EQ(2U, p[2].st.faulty);
	/*
	 * Round 1 (P1's, refused) was reached. Round 0's leader, the
	 * helping P0, comes late, but may still get its proposal accepted
	 * by a quorum before round 1 ends (the debug kernel's timing): so
	 * the decision may be round 0's, seen in round 1.
	 */
	EXPECT_GE(p[2].st.backup_rounds, 2U);
	TH_LOG("the Byzantine P1: %d \"%s\"", p[1].ret, p[1].out);
}

/*
 * The leader decided after its write; P1 carries "evil" into the backup
 * with a made-up leader signature - it would outrank P2's plain input if
 * it were believed. Its promise fails the signature check: P1 is caught,
 * and the backup decides the leader's value.
 */
TEST_F(cheapq, forged_leader_signature_is_refused)
{
	static const char *const in[] = { LEADS };
	struct proposer p[NR_PROCS];

	leader_decides(_metadata, self, &p[0]);
	/* late enough that P2 sees P1's promise before anything decides */
	p[0].delay_ms = 1500;
	ASSERT_EQ(0, sacred_cheapq_misbehave(self->cheapq[1],
					 SACRED_CHEAPQ_FORGED_CARRY, "evil", 5));
	p[1] = (struct proposer){ .cheapq = self->cheapq[1], .in = "P1",
				  .mem = self->mem, .wait_revoked = true,
				  .help_ms = 4000 };
	p[2] = (struct proposer){ .cheapq = self->cheapq[2], .in = "P2",
				  .help_ms = 4000 };
	run(self, p, 7);
	expect_one_of(_metadata, p, 5, in, 1);
	EXPECT_TRUE(p[2].st.panicked);
	EXPECT_EQ(2U, p[2].st.faulty);
	TH_LOG("the Byzantine P1: %d \"%s\"", p[1].ret, p[1].out);
}

/*
 * The leader decides, crashes and comes back with a fresh handle, which
 * is asked to propose something else: it must propose, and decide, the
 * value it signed before - a second signed value would be an
 * equivocation of a correct leader - and the followers decide that value
 * on the fast path without catching anybody.
 */
TEST_F(cheapq, restarted_leader_proposes_what_it_signed)
{
	static const char *const in[] = { LEADS };
	struct proposer p[NR_PROCS];
	size_t len;

	leader_decides(_metadata, self, &p[0]);
	sacred_cheapq_close(self->cheapq[0]);
	self->cheapq[0] = NULL;
	ASSERT_EQ(0, sacred_cheapq_open(&self->ca[0], &self->cheapq[0]));
	ASSERT_EQ(0, sacred_cheapq_propose(self->cheapq[0], "another value", 14,
				       p[0].out, VALUE_MAX, &len));
	p[0].out[len < VALUE_MAX ? len : VALUE_MAX] = '\0';
	EXPECT_STREQ(LEADS, p[0].out);
	sacred_cheapq_stats(self->cheapq[0], &p[0].st);
	EXPECT_TRUE(p[0].st.fast);
	p[0] = (struct proposer){ .cheapq = self->cheapq[0], .in = LEADS,
				  .helper = true };
	p[1] = (struct proposer){ .cheapq = self->cheapq[1], .in = "P1" };
	p[2] = (struct proposer){ .cheapq = self->cheapq[2], .in = "P2" };
	run(self, p, 7);
	expect_one_of(_metadata, p, 6, in, 1);
	EXPECT_TRUE(p[1].st.fast);
	EXPECT_TRUE(p[2].st.fast);
	EXPECT_EQ(0U, p[1].st.faulty);
	EXPECT_EQ(0U, p[2].st.faulty);
}

TEST_HARNESS_MAIN
