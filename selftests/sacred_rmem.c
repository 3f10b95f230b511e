// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_rmem - replicated memory over three memory instances (one per
 * rxe device): quorum writes and reads, a minority down, a majority down,
 * revival (of several memories at once), and quorum changePermission on
 * exclusive-writer regions, where the process that lost write permission
 * learns it from the quorum.
 *
 * Every instance has region REGION (same id everywhere, one tag) with
 * policy exclusive-writer; processes A and B are members with read-write.
 * Also: one incarnation of a region (memories holding a region made
 * again are left out), and the read among a set of memories lib/log.c's
 * recovery uses (lib/internal.h).
 */
#include <errno.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "internal.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7501
#define REGION		7
#define REGION_SIZE	65536
#define PROC_A		301
#define PROC_B		302
#define NR_MEMS		3
/* The region's one incarnation on every memory (and a default-made one's). */
#define TAG		0x7a90000000000007ULL
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

FIXTURE(rmem) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	bool have[NR_MEMS];
	struct sacred_rmem *a, *b;
};

static int mem_state(struct sacred_ctrl *ctrl, struct sacred_mem_info *mem,
		     uint8_t state)
{
	return sacred_mem_set(ctrl, mem->id, state, 0, NULL);
}

FIXTURE_SETUP(rmem)
{
	struct sacred_perm_req req = { .region_id = REGION, .access = RW };

	if (!st_open(_metadata, &self->ctrl, NR_MEMS, 0))
		return;
	ASSERT_EQ(0, mems_new(self->ctrl, NR_MEMS, TEST_CM_PORT, self->mem,
			      self->have, NULL));
	/* PROC_A and PROC_B (PROC_A + 1) both read-write. */
	ASSERT_EQ(0, region_on_all_tagged(self->ctrl, self->mem, NR_MEMS,
					  REGION, REGION_SIZE,
					  SACRED_POLICY_EXCLUSIVE_WRITER,
					  PROC_A, 2, -1, TAG));
	ASSERT_EQ(0, rmem_anew(&self->a, self->mem, NR_MEMS, PROC_A));
	ASSERT_EQ(0, sacred_rmem_attach(self->a, REGION, NULL));
	ASSERT_EQ(0, sacred_rmem_change_perm(self->a, &req, NULL));
}

FIXTURE_TEARDOWN(rmem)
{
	sacred_rmem_destroy(self->a);
	sacred_rmem_destroy(self->b);
	mems_del(self->ctrl, self->mem, self->have, NR_MEMS);
}

TEST_F(rmem, quorum_write_then_read_everywhere)
{
	uint64_t v = 0x5eed, got[NR_MEMS] = { 0 };
	void *bufs[NR_MEMS] = { &got[0], &got[1], &got[2] };
	struct sacred_rmem_result res;
	unsigned int i;

	EXPECT_EQ(NR_MEMS, sacred_rmem_nr_mems(self->a));
	EXPECT_EQ(2, sacred_rmem_quorum(self->a));
	EXPECT_EQ(7, sacred_rmem_up(self->a));
	struct sacred_rmem_result wres;

	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 8, &v, sizeof(v),
				       &wres));
	EXPECT_LE(2, __builtin_popcount(wres.ok));
	/* @all: every memory answers; every one that took the write has it. */
	ASSERT_EQ(0, sacred_rmem_read(self->a, REGION, 8, bufs, sizeof(v),
				      true, &res));
	EXPECT_LE(2, __builtin_popcount(res.ok));
	for (i = 0; i < NR_MEMS; i++)
		if (wres.ok & res.ok & (1U << i))
			EXPECT_EQ(v, got[i]);
	EXPECT_EQ(-EMSGSIZE, sacred_rmem_write(self->a, REGION, 0, &v, 8192,
					       NULL));
}

/* A minority down: the replicated memory goes on as if nothing failed. */
TEST_F(rmem, minority_down_then_revived)
{
	uint64_t v = 1, got[NR_MEMS] = { 0 };
	void *bufs[NR_MEMS] = { &got[0], &got[1], &got[2] };
	struct sacred_rmem_result res;

	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[2], SACRED_MEM_DOWN));
	for (v = 1; v <= 5; v++)
		ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v,
					       sizeof(v), &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_NE(0, res.status[2]);
	TH_LOG("memory 2 down: status %d", res.status[2]);
	EXPECT_EQ(3, sacred_rmem_up(self->a));
	ASSERT_EQ(0, sacred_rmem_read(self->a, REGION, 0, bufs, sizeof(v),
				      true, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(5, got[0]);
	EXPECT_EQ(5, got[1]);

	/* Down: revive cannot reach it; up again: it comes back. */
	EXPECT_EQ(2, sacred_rmem_revive(self->a));
	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[2], SACRED_MEM_UP));
	EXPECT_EQ(3, sacred_rmem_revive(self->a));
	EXPECT_EQ(7, sacred_rmem_up(self->a));
	/* Its grant outlived the crash: A writes all three again. */
	v = 6;
	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       NULL));
	ASSERT_EQ(0, sacred_rmem_read(self->a, REGION, 0, bufs, sizeof(v),
				      true, &res));
	EXPECT_EQ(7, res.ok);
	EXPECT_EQ(6, got[2]);
}

/*
 * A memory whose region was deleted and made again (its host rebooted,
 * say) lost what it held: revived, it is not taken back for that region
 * - it serves nothing there, as if it had crashed - nor when the process
 * attaches the region again, until the region there has the tag a quorum
 * holds.
 */
TEST_F(rmem, memory_whose_region_was_made_again_serves_nothing)
{
	uint64_t v = 7, got[NR_MEMS] = { 0 };
	void *bufs[NR_MEMS] = { &got[0], &got[1], &got[2] };
	struct sacred_perm_req req = { .region_id = REGION, .access = RW };
	struct sacred_acl_entry acl[2];
	struct sacred_rmem_result res;
	unsigned int n;

	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       NULL));
	ASSERT_EQ(0, sacred_region_get_acl(self->ctrl, self->mem[2].id,
					   REGION, acl, 2, &n, NULL));
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem[2].id, REGION));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem[2].id, REGION,
				       REGION_SIZE,
				       SACRED_POLICY_EXCLUSIVE_WRITER, NULL));
	ASSERT_EQ(0, sacred_region_set_acl(self->ctrl, self->mem[2].id,
					   REGION, acl, n));

	/* Fenced by the delete: found broken, revived, not for the region. */
	v = 8;
	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       NULL));
	/* Waits for every memory: memory 2's answer is the broken QP. */
	ASSERT_EQ(0, sacred_rmem_read(self->a, REGION, 0, bufs, sizeof(v),
				      true, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(3, sacred_rmem_revive(self->a));
	EXPECT_EQ(7, sacred_rmem_up(self->a));
	v = 9;
	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_NE(0, res.status[2]);
	TH_LOG("memory 2, its region made again: status %d", res.status[2]);
	ASSERT_EQ(0, sacred_rmem_read(self->a, REGION, 0, bufs, sizeof(v),
				      true, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(9, got[0]);
	EXPECT_EQ(9, got[1]);
	/* A changePermission does not take it back either. */
	ASSERT_EQ(0, sacred_rmem_change_perm(self->a, &req, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(-ESTALE, res.status[2]);
	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       &res));
	EXPECT_EQ(-ESTALE, res.status[2]);

	/*
	 * Attached again: still left out - its tag is not the one the
	 * handle learned from a quorum.
	 */
	ASSERT_EQ(0, sacred_rmem_attach(self->a, REGION, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(-ESTALE, res.status[2]);

	/*
	 * Made with the quorum's tag (whoever does that says the memory may
	 * join empty): attached, it serves the new region, which never saw
	 * 7, 8, 9.
	 */
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem[2].id, REGION));
	ASSERT_EQ(0, sacred_region_new_tagged(self->ctrl, self->mem[2].id,
					      REGION, REGION_SIZE,
					      SACRED_POLICY_EXCLUSIVE_WRITER,
					      TAG, NULL));
	ASSERT_EQ(0, sacred_region_set_acl(self->ctrl, self->mem[2].id,
					   REGION, acl, n));
	EXPECT_EQ(3, sacred_rmem_revive(self->a));
	ASSERT_EQ(0, sacred_rmem_attach(self->a, REGION, &res));
	EXPECT_EQ(7, res.ok);
	ASSERT_EQ(0, sacred_rmem_read(self->a, REGION, 0, bufs, sizeof(v),
				      true, &res));
	EXPECT_EQ(7, res.ok);
	EXPECT_EQ(0, got[2]);
}

/* Make region REGION on memory @i again, with @tag (0: a random one). */
static int remake(struct sacred_ctrl *ctrl, struct sacred_mem_info *mem,
		  unsigned int i, uint64_t tag)
{
	struct sacred_acl_entry acl[2] = {
		{ .process_id = PROC_A, .access = RW },
		{ .process_id = PROC_B, .access = RW },
	};
	int ret;

	ret = sacred_region_del(ctrl, mem[i].id, REGION);
	if (!ret && tag)
		ret = sacred_region_new_tagged(ctrl, mem[i].id, REGION,
					       REGION_SIZE,
					       SACRED_POLICY_EXCLUSIVE_WRITER,
					       tag, NULL);
	else if (!ret)
		ret = sacred_region_new(ctrl, mem[i].id, REGION, REGION_SIZE,
					SACRED_POLICY_EXCLUSIVE_WRITER, NULL);
	return ret ?: sacred_region_set_acl(ctrl, mem[i].id, REGION, acl, 2);
}

/*
 * Memory 2, back and connected again on B's handle, holds another
 * incarnation of the region: revived, it is up, and B's changePermission
 * and write of @v go through on memories 0 and 1 without it (-ESTALE).
 *
 * If the connection never cached the region (memory 2 was down at the
 * attach), memory 2 is known to be stale only by its answer to the
 * changePermission, which may come after the quorum's (-EINPROGRESS);
 * until it is in, memory 2 sits the write out (-EBUSY). The write is
 * made again until it is, for at most two seconds.
 */
static void connected_but_left_out(struct __test_metadata *_metadata,
				   FIXTURE_DATA(rmem) *self, uint64_t v)
{
	struct sacred_perm_req req = { .region_id = REGION, .access = RW };
	struct sacred_rmem_result res;
	double end = now_s() + 2 * test_slow();

	EXPECT_EQ(3, sacred_rmem_revive(self->b));
	EXPECT_EQ(7, sacred_rmem_up(self->b));
	ASSERT_EQ(0, sacred_rmem_change_perm(self->b, &req, &res));
	EXPECT_EQ(3, res.ok);
	if (res.status[2] != -EINPROGRESS)
		EXPECT_EQ(-ESTALE, res.status[2]);
	do {
		ASSERT_EQ(0, sacred_rmem_write(self->b, REGION, 0, &v,
					       sizeof(v), &res));
		EXPECT_EQ(3, res.ok);
	} while (res.status[2] == -EBUSY && now_s() < end);
	EXPECT_EQ(-ESTALE, res.status[2]);
}

/*
 * A process that attaches for the first time - nothing cached - finds a
 * memory whose region was made again (another tag): a quorum shares the
 * region's tag, so that memory is left out, and stays out across its
 * reconnects.
 */
TEST_F(rmem, first_attach_leaves_out_a_memory_that_forgot)
{
	struct sacred_perm_req req = { .region_id = REGION, .access = RW };
	uint64_t v = 11, tag, got[NR_MEMS] = { 0 };
	void *bufs[NR_MEMS] = { &got[0], &got[1], &got[2] };
	struct sacred_rmem_result res;
	uint32_t mask;

	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       NULL));
	ASSERT_EQ(0, remake(self->ctrl, self->mem, 2, 0));
	ASSERT_EQ(0, rmem_anew(&self->b, self->mem, NR_MEMS, PROC_B));
	ASSERT_EQ(0, sacred_rmem_attach(self->b, REGION, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(-ESTALE, res.status[2]);
	TH_LOG("%s", sacred_conn_errmsg(sacred_rmem_conn(self->b, 2)) ?: "-");
	ASSERT_EQ(0, sacred_rmem_region_tag(self->b, REGION, &tag, &mask));
	EXPECT_EQ(TAG, tag);
	EXPECT_EQ(3, mask);
	ASSERT_EQ(0, sacred_rmem_read(self->b, REGION, 0, bufs, sizeof(v),
				      true, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(-ESTALE, res.status[2]);
	EXPECT_EQ(11, got[0]);
	EXPECT_EQ(11, got[1]);

	/* B takes write: memory 2's say does not count either. */
	ASSERT_EQ(0, sacred_rmem_change_perm(self->b, &req, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(-ESTALE, res.status[2]);
	/* Its connection made again: still not counted. */
	ASSERT_EQ(0, sacred_conn_reconnect(sacred_rmem_conn(self->b, 2)));
	v = 12;
	ASSERT_EQ(0, sacred_rmem_write(self->b, REGION, 0, &v, sizeof(v),
				       &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(-ESTALE, res.status[2]);
}

/*
 * A memory whose attach failed (down at the time) has nothing of the
 * region cached; back, with the region made again there, the first thing
 * it answers is a changePermission - whose reply describes the region.
 * That answer does not count, nor does anything after it.
 */
TEST_F(rmem, memory_first_met_by_a_change_perm_is_checked)
{
	struct sacred_rmem_result res;

	ASSERT_EQ(0, rmem_anew(&self->b, self->mem, NR_MEMS, PROC_B));
	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[2], SACRED_MEM_DOWN));
	ASSERT_EQ(0, sacred_rmem_attach(self->b, REGION, &res));
	EXPECT_EQ(3, res.ok);
	TH_LOG("memory 2 down at the attach: status %d", res.status[2]);
	ASSERT_EQ(0, remake(self->ctrl, self->mem, 2, 0));
	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[2], SACRED_MEM_UP));
	connected_but_left_out(_metadata, self, 15);
}

/*
 * No quorum shares a tag - the regions were made without one common tag,
 * or a quorum of them made again: nothing is attached, and the call says
 * why. Once a quorum holds one incarnation again, it attaches.
 */
TEST_F(rmem, attach_without_a_quorum_of_one_incarnation_is_refused)
{
	uint64_t v = 13;
	struct sacred_rmem_result res;
	unsigned int i;

	ASSERT_EQ(0, remake(self->ctrl, self->mem, 1, 0));
	ASSERT_EQ(0, remake(self->ctrl, self->mem, 2, 0));
	ASSERT_EQ(0, rmem_anew(&self->b, self->mem, NR_MEMS, PROC_B));
	EXPECT_EQ(-EPROTO, sacred_rmem_attach(self->b, REGION, &res));
	EXPECT_EQ(0, res.ok);
	for (i = 0; i < NR_MEMS; i++)
		EXPECT_EQ(-ESTALE, res.status[i]);
	TH_LOG("%s", sacred_conn_errmsg(sacred_rmem_conn(self->b, 0)) ?: "-");
	EXPECT_EQ(-ENOTCONN, sacred_rmem_write(self->b, REGION, 0, &v,
					       sizeof(v), &res));
	EXPECT_EQ(0, res.ok);

	/* Memory 1 made with the tag memory 0 holds: a quorum of one. */
	ASSERT_EQ(0, remake(self->ctrl, self->mem, 1, TAG));
	ASSERT_EQ(0, sacred_rmem_attach(self->b, REGION, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(-ESTALE, res.status[2]);
}

/*
 * A memory the handle reaches only after it attached (down at first):
 * connected, it is given the regions - but one made again there, under
 * another tag than the quorum's, is left out.
 */
TEST_F(rmem, memory_connected_late_with_another_incarnation_is_left_out)
{
	struct sacred_rmem_result res;

	ASSERT_EQ(0, remake(self->ctrl, self->mem, 2, 0));
	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[2], SACRED_MEM_DOWN));
	ASSERT_EQ(0, rmem_anew(&self->b, self->mem, NR_MEMS, PROC_B));
	EXPECT_EQ(3, sacred_rmem_up(self->b));
	ASSERT_EQ(0, sacred_rmem_attach(self->b, REGION, &res));
	EXPECT_EQ(3, res.ok);
	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[2], SACRED_MEM_UP));
	connected_but_left_out(_metadata, self, 14);
}

/*
 * sacred_rmem_read_among(): only the memories named are asked, and the
 * quorum is counted among them - with memory 2 down, memories {0, 2}
 * cannot answer one although memories 0 and 1 are up.
 */
TEST_F(rmem, read_among_asks_only_the_memories_named)
{
	uint64_t v = 16, got[NR_MEMS] = { 0 };
	void *bufs[NR_MEMS] = { &got[0], &got[1], &got[2] };
	struct sacred_rmem_result res;
	int ret;

	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       NULL));
	ASSERT_EQ(0, sacred_rmem_read_among(self->a, REGION, 0, bufs,
					    sizeof(v), 3, &res));
	EXPECT_EQ(3, res.ok);
	EXPECT_EQ(-ENOTCONN, res.status[2]);
	EXPECT_EQ(16, got[0]);
	EXPECT_EQ(16, got[1]);
	EXPECT_EQ(0, got[2]);

	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[2], SACRED_MEM_DOWN));
	ret = sacred_rmem_read_among(self->a, REGION, 0, bufs, sizeof(v), 5,
				     &res);
	TH_LOG("memories 0 and 2, 2 down: %d", ret);
	EXPECT_NE(0, ret);
	EXPECT_EQ(0, res.ok & 2);
	/* Every memory again, after the call. */
	ASSERT_EQ(0, sacred_rmem_read(self->a, REGION, 0, bufs, sizeof(v),
				      false, &res));
	EXPECT_EQ(3, res.ok);
}

/* A majority down: no quorum, and the error says the memories are gone. */
TEST_F(rmem, majority_down_is_no_quorum)
{
	uint64_t v = 9, got[NR_MEMS];
	void *bufs[NR_MEMS] = { &got[0], &got[1], &got[2] };
	struct sacred_rmem_result res;
	int ret;

	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[0], SACRED_MEM_DOWN));
	ASSERT_EQ(0, mem_state(self->ctrl, &self->mem[1], SACRED_MEM_DOWN));
	ret = sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v), &res);
	TH_LOG("write with two of three down: %d", ret);
	EXPECT_TRUE(ret == -ECONNRESET || ret == -ENOTCONN);
	ret = sacred_rmem_read(self->a, REGION, 0, bufs, sizeof(v), false,
			       &res);
	EXPECT_EQ(-ENOTCONN, ret);
	EXPECT_EQ(4, sacred_rmem_up(self->a));
}

/*
 * B takes write permission on a quorum; A's next quorum write fails and
 * says why; what B wrote is what a quorum read shows.
 */
TEST_F(rmem, losing_write_permission_is_reported)
{
	struct sacred_perm_req req = { .region_id = REGION, .access = RW };
	uint64_t v = 100, got[NR_MEMS] = { 0 };
	void *bufs[NR_MEMS] = { &got[0], &got[1], &got[2] };
	struct sacred_rmem_result res, wres;
	unsigned int i;
	int ret;

	ASSERT_EQ(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       NULL));
	ASSERT_EQ(0, rmem_anew(&self->b, self->mem, NR_MEMS, PROC_B));
	ASSERT_EQ(0, sacred_rmem_attach(self->b, REGION, NULL));
	ASSERT_EQ(0, sacred_rmem_change_perm(self->b, &req, &res));
	for (i = 0; i < NR_MEMS; i++)
		if (res.ok & (1U << i))
			EXPECT_EQ(RW, res.perm[i].region.access);

	v = 200;
	ret = sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v), &res);
	TH_LOG("A after B took write: %d (%d %d %d)", ret, res.status[0],
	       res.status[1], res.status[2]);
	EXPECT_TRUE(ret == -EACCES || ret == -ECONNRESET);

	v = 300;
	ASSERT_EQ(0, sacred_rmem_write(self->b, REGION, 0, &v, sizeof(v),
				       &wres));
	ASSERT_EQ(0, sacred_rmem_read(self->b, REGION, 0, bufs, sizeof(v),
				      true, &res));
	/* A memory still answering B's changePermission sat the write out. */
	for (i = 0; i < NR_MEMS; i++)
		if (wres.ok & res.ok & (1U << i))
			EXPECT_EQ(300, got[i]);

	/* A comes back as a reader: it sees B's value, cannot write. */
	EXPECT_EQ(NR_MEMS, sacred_rmem_revive(self->a));
	ASSERT_EQ(0, sacred_rmem_read(self->a, REGION, 0, bufs, sizeof(v),
				      false, &res));
	for (i = 0; i < NR_MEMS; i++)
		if (res.ok & (1U << i))
			EXPECT_EQ(300, got[i]);
	v = 400;
	EXPECT_EQ(-EACCES, sacred_rmem_write(self->a, REGION, 0, &v,
					     sizeof(v), NULL));
}

/*
 * Two memories whose hosts take connect requests and answer none: a
 * revive tries them at the same time, so it costs one timeout, not two
 * (until 2026-11-26 it connected the memories one after the other).
 */
TEST_F(rmem, revive_tries_every_memory_at_once)
{
	const char *t = getenv("SACRED_CONN_TIMEOUT_MS");
	uint64_t timeout = t ? atoi(t) : 1000, took;
	double t0;
	struct silent sl[2] = {};
	unsigned int i;
	uint64_t v = 7;

	for (i = 1; i < NR_MEMS; i++) {
		ASSERT_EQ(0, sacred_mem_del(self->ctrl, self->mem[i].id));
		self->have[i] = false;
		ASSERT_EQ(0, listen_silent(&sl[i - 1], &self->mem[i].addr));
	}
	/* The write finds both connections gone: no quorum. */
	EXPECT_NE(0, sacred_rmem_write(self->a, REGION, 0, &v, sizeof(v),
				       NULL));
	EXPECT_EQ(1, sacred_rmem_up(self->a));
	t0 = now_s();
	EXPECT_EQ(1, sacred_rmem_revive(self->a));
	took = (now_s() - t0) * 1000;
	TH_LOG("revive with two silent memories: %llu ms (timeout %llu ms)",
	       (unsigned long long)took, (unsigned long long)timeout);
	EXPECT_LE(timeout * 9 / 10, took);
	EXPECT_GT(timeout * 17 / 10, took);
	for (i = 0; i < 2; i++)
		EXPECT_LE(1, close_silent(&sl[i]));
}

TEST_HARNESS_MAIN
