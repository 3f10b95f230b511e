// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_cq - Cheap Quorum's fast path and panic on three memory
 * instances, three processes with Ed25519 keys: all correct (decided in
 * one round of writes, everyone the leader's value), a silent leader
 * (everyone panics, the leader's write permission is revoked for good by
 * the revoke-only policy and the memory refuses its writes and its
 * requests to get it back), and an equivocating leader (nobody decides on
 * the fast path; each carries the value it copied).
 *
 * Regions on every instance: CQ_BASE revoke-only (P0, the leader, rw; the
 * others r), CQ_BASE + 1 + i swmr (Pi writes).
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
#define CQ_BASE		50
#define VALUE_MAX	64
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

FIXTURE(cq) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	bool have[NR_MEMS];
	char dir[64];
	struct sacred_bz_keys *keys[NR_PROCS];
	struct sacred_rmem *rm[NR_PROCS];
	struct sacred_cq *cq[NR_PROCS];
};

static int region_everywhere(struct sacred_ctrl *ctrl,
			     struct sacred_mem_info *mem, uint32_t id,
			     uint8_t policy, unsigned int writer)
{
	return region_on_all(ctrl, mem, NR_MEMS, id, 65536, policy, PID(0),
			     NR_PROCS, writer);
}

FIXTURE_SETUP(cq)
{
	const char *t = getenv("SACRED_CONN_TIMEOUT_MS");
	struct sacred_rmem_member m[NR_MEMS];
	char dev[64];
	unsigned int i;
	int ret = sacred_ctrl_open(&self->ctrl);

	if (ret == -ENOENT)
		SKIP(return, "sacred.ko is not loaded");
	ASSERT_EQ(0, ret);
	if (!env_word("SACRED_RXE_DEVS", NR_MEMS - 1, dev, sizeof(dev)))
		SKIP(return, "needs three rxe devices");
	snprintf(self->dir, sizeof(self->dir), "/tmp/sacred-cq-%d", getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0700));
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, sacred_bz_keygen(self->dir, i));
	for (i = 0; i < NR_MEMS; i++) {
		struct sacred_mem_params p = {
			.id = SACRED_MEM_ID_ANY,
			.cm_port = TEST_CM_PORT,
			.dev_name = dev,
		};

		ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", i, dev,
					 sizeof(dev)));
		ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &self->mem[i]));
		self->have[i] = true;
		m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&self->mem[i].addr,
			.timeout_ms = t ? atoi(t) : 1000,
		};
	}
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, CQ_BASE,
				       SACRED_POLICY_REVOKE_ONLY, 0));
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem,
					       CQ_BASE + 1 + i,
					       SACRED_POLICY_SWMR, i));
	for (i = 0; i < NR_PROCS; i++) {
		struct sacred_rmem_attr ra = {
			.process_id = PID(i),
			.nr_mems = NR_MEMS,
			.mems = m,
			.max_io = 4096,
		};
		struct sacred_cq_attr ca = {
			.base_region = CQ_BASE,
			.leader_pid = PID(0),
			.value_max = VALUE_MAX,
			.timeout_ms = 500,
		};

		ASSERT_EQ(0, sacred_bz_keys_load(self->dir, NR_PROCS, i,
						 &self->keys[i]));
		ASSERT_EQ(0, sacred_rmem_create(&ra, &self->rm[i]));
		ca.rm = self->rm[i];
		ca.keys = self->keys[i];
		ASSERT_EQ(0, sacred_cq_open(&ca, &self->cq[i]));
	}
}

FIXTURE_TEARDOWN(cq)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		sacred_cq_close(self->cq[i]);
		sacred_rmem_destroy(self->rm[i]);
		sacred_bz_keys_free(self->keys[i]);
	}
	for (i = 0; i < NR_MEMS; i++)
		if (self->have[i])
			sacred_mem_del(self->ctrl, self->mem[i].id);
	sacred_ctrl_close(self->ctrl);
	if (self->dir[0])
		sh("rm -rf %s", self->dir);
}

struct proposer {
	struct sacred_cq *cq;
	char in[VALUE_MAX];
	char out[VALUE_MAX + 1];
	int ret;
	struct sacred_cq_stats st;
};

static void *propose_thread(void *arg)
{
	struct proposer *p = arg;
	size_t len = 0;

	p->ret = sacred_cq_propose(p->cq, p->in, strlen(p->in) + 1, p->out,
				   VALUE_MAX, &len);
	p->out[len < VALUE_MAX ? len : VALUE_MAX] = '\0';
	sacred_cq_stats(p->cq, &p->st);
	return NULL;
}

static void run(FIXTURE_DATA(cq) *self, struct proposer *p, unsigned int mask)
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

TEST_F(cq, all_correct_decide_on_the_fast_path)
{
	struct proposer p[NR_PROCS];
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		p[i] = (struct proposer){ .cq = self->cq[i] };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
	}
	run(self, p, 7);
	for (i = 0; i < NR_PROCS; i++) {
		EXPECT_EQ(0, p[i].ret) TH_LOG("P%u: %d", i, p[i].ret);
		EXPECT_STREQ("value of P0", p[i].out);
		EXPECT_TRUE(p[i].st.fast);
		TH_LOG("P%u: %u round trips", i, p[i].st.round_trips);
	}
}

/*
 * The leader says nothing: everyone panics with its own input, the
 * leader's write is revoked, and nothing gives it back.
 */
TEST_F(cq, silent_leader_is_revoked_for_good)
{
	struct sacred_perm_req req = { .region_id = CQ_BASE, .access = RW };
	struct sacred_rmem_result res;
	struct proposer p[NR_PROCS];
	unsigned int i;
	int ret;

	for (i = 1; i < NR_PROCS; i++) {
		p[i] = (struct proposer){ .cq = self->cq[i] };
		snprintf(p[i].in, sizeof(p[i].in), "value of P%u", i);
	}
	run(self, p, 6);
	for (i = 1; i < NR_PROCS; i++) {
		EXPECT_EQ(SACRED_CQ_PANIC, p[i].ret);
		EXPECT_STREQ(p[i].in, p[i].out);
		EXPECT_TRUE(p[i].st.panicked);
	}
	/* The leader wakes up: the memory refuses its value ... */
	ret = sacred_cq_lead_value(self->cq[0], "late", 5);
	TH_LOG("the revoked leader writes: %d", ret);
	EXPECT_TRUE(ret == -EACCES || ret == -ECONNRESET || ret == -ENOTCONN);
	/* ... and its request to get write back. */
	sacred_rmem_revive(self->rm[0]);
	EXPECT_EQ(-EPERM, sacred_rmem_change_perm(self->rm[0], &req, &res));
	EXPECT_EQ(SACRED_REFUSE_NO_GRANT, res.perm[0].reason);
}

/*
 * The leader signs two values: P1 copies one, P2 the other. No fast-path
 * decision; each carries the value it copied.
 */
TEST_F(cq, equivocating_leader_gets_no_fast_decision)
{
	struct proposer p[NR_PROCS];
	unsigned int i;

	pthread_t th;

	ASSERT_EQ(0, sacred_cq_lead_value(self->cq[0], "red", 4));
	p[1] = (struct proposer){ .cq = self->cq[1], .in = "P1" };
	pthread_create(&th, NULL, propose_thread, &p[1]);
	/* P1 copied "red" and waits for the others' copies (500 ms). */
	usleep(150000);
	ASSERT_EQ(0, sacred_cq_lead_value(self->cq[0], "blue", 5));
	p[2] = (struct proposer){ .cq = self->cq[2], .in = "P2" };
	propose_thread(&p[2]);
	pthread_join(th, NULL);
	for (i = 1; i < NR_PROCS; i++) {
		EXPECT_EQ(SACRED_CQ_PANIC, p[i].ret);
		EXPECT_FALSE(p[i].st.fast);
	}
	EXPECT_STREQ("red", p[1].out);
	EXPECT_STREQ("blue", p[2].out);
}

TEST_HARNESS_MAIN
