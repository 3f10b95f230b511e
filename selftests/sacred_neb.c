// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_neb - Ed25519 process keys and non-equivocating broadcast on
 * three memory instances, with one Byzantine process of three (P2) doing
 * what the library's misbehave hook and raw RDMA let it: equivocate,
 * write garbage, forge another process's message in its copies, replay an
 * old signed message, and write into another process's region. Correct
 * processes never deliver two different messages for one (sender,
 * number), always deliver a correct sender's message, and the memory
 * refuses the illegal writes - also when memories are down or refuse a
 * write in the middle of a delivery.
 *
 * Region NEB_BASE + i, on every instance: swmr, process i writes, the
 * others read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7551
#define NR_MEMS		3
#define NR_PROCS	3
#define PID(i)		(701 + (i))
#define NEB_BASE	40
#define NR_MSGS		4
#define MSG_MAX		64
#define BYZ		2

FIXTURE(neb) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	bool have[NR_MEMS];
	char dir[64];
	struct sacred_bz_keys *keys[NR_PROCS];
	struct sacred_rmem *rm[NR_PROCS];
	struct sacred_neb *n[NR_PROCS];
};

static int neb_open(FIXTURE_DATA(neb) *self, unsigned int i)
{
	struct sacred_neb_attr na = {
		.rm = self->rm[i],
		.keys = self->keys[i],
		.base_region = NEB_BASE,
		.nr_msgs = NR_MSGS,
		.msg_max = MSG_MAX,
	};

	return sacred_neb_open(&na, &self->n[i]);
}

FIXTURE_SETUP(neb)
{
	unsigned int i, j;

	if (!st_open(_metadata, &self->ctrl, NR_MEMS, 0))
		return;
	st_keys_dir(_metadata, self->dir, sizeof(self->dir), "neb", NR_PROCS);
	ASSERT_EQ(0, mems_new(self->ctrl, NR_MEMS, TEST_CM_PORT, self->mem,
			      self->have, NULL));
	for (j = 0; j < NR_PROCS; j++)
		ASSERT_EQ(0, region_on_all(self->ctrl, self->mem, NR_MEMS,
					   NEB_BASE + j, 65536,
					   SACRED_POLICY_SWMR, PID(0), NR_PROCS,
					   j));
	st_bz_procs_open(_metadata, self->dir, NR_PROCS, PID(0), self->mem,
			 NR_MEMS, self->keys, self->rm);
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, neb_open(self, i));
}

FIXTURE_TEARDOWN(neb)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++)
		sacred_neb_close(self->n[i]);
	st_bz_procs_close(self->dir, NR_PROCS, self->keys, self->rm);
	mems_del(self->ctrl, self->mem, self->have, NR_MEMS);
}

static int deliver(FIXTURE_DATA(neb) *self, unsigned int q, unsigned int p,
		   uint64_t k, char *out)
{
	size_t len = 0;
	int ret;

	ret = sacred_neb_deliver(self->n[q], p, k, out, MSG_MAX, &len);
	if (!ret)
		out[len < MSG_MAX ? len : MSG_MAX - 1] = '\0';
	return ret;
}

TEST_F(neb, keys_sign_and_refuse)
{
	uint8_t sig[SACRED_BZ_SIG_LEN];
	struct sacred_bz_keys *k;

	sacred_bz_sign(self->keys[0], "test", "abc", 3, sig);
	EXPECT_TRUE(sacred_bz_verify(self->keys[1], 0, "test", "abc", 3,
				     sig));
	EXPECT_FALSE(sacred_bz_verify(self->keys[1], 1, "test", "abc", 3,
				      sig));
	EXPECT_FALSE(sacred_bz_verify(self->keys[1], 0, "other", "abc", 3,
				      sig));
	EXPECT_FALSE(sacred_bz_verify(self->keys[1], 0, "test", "abd", 3,
				      sig));
	EXPECT_EQ(-EEXIST, sacred_bz_keygen(self->dir, 0));
	/* A secret key that is not the public key's: refused. */
	EXPECT_EQ(0, sh("cp %s/ed25519-1.key %s/ed25519-0.key.x && "
			"mv %s/ed25519-0.key.x %s/ed25519-0.key",
			self->dir, self->dir, self->dir, self->dir));
	EXPECT_EQ(-EINVAL, sacred_bz_keys_load(self->dir, NR_PROCS, 0, &k));
	EXPECT_EQ(-ENOENT, sacred_bz_keys_load(self->dir, NR_PROCS + 1, 0,
					       &k));
}

TEST_F(neb, correct_sender_is_delivered_by_all)
{
	char out[MSG_MAX];
	unsigned int q;

	EXPECT_EQ(-EAGAIN, deliver(self, 1, 0, 0, out));
	ASSERT_EQ(0, sacred_neb_broadcast(self->n[0], 0, "hello", 6));
	EXPECT_EQ(-EEXIST, sacred_neb_broadcast(self->n[0], 0, "again", 6));
	for (q = 0; q < NR_PROCS; q++) {
		ASSERT_EQ(0, deliver(self, q, 0, 0, out));
		EXPECT_STREQ("hello", out);
	}
	/* The Byzantine process's forged copy of it changes nothing. */
	ASSERT_EQ(0, sacred_neb_misbehave(self->n[BYZ], SACRED_NEB_FORGE, 1,
					  0, "forged", 7));
	ASSERT_EQ(0, sacred_neb_broadcast(self->n[0], 1, "second", 7));
	for (q = 0; q < BYZ; q++) {
		ASSERT_EQ(0, deliver(self, q, 0, 1, out));
		EXPECT_STREQ("second", out);
	}
}

TEST_F(neb, equivocation_is_never_delivered_twice)
{
	char out0[MSG_MAX], out1[MSG_MAX];
	int r0, r1;

	ASSERT_EQ(0, sacred_neb_broadcast(self->n[BYZ], 0, "yes", 4));
	r0 = deliver(self, 0, BYZ, 0, out0);
	ASSERT_EQ(0, r0);
	EXPECT_STREQ("yes", out0);
	/* It says something else to whoever looks next. */
	ASSERT_EQ(0, sacred_neb_misbehave(self->n[BYZ], SACRED_NEB_EQUIVOCATE,
					  0, 0, "no", 3));
	r1 = deliver(self, 1, BYZ, 0, out1);
	TH_LOG("P1 after the equivocation: %d", r1);
	EXPECT_EQ(-EPROTO, r1);
	/* P0 stands by what it delivered. */
	ASSERT_EQ(0, deliver(self, 0, BYZ, 0, out0));
	EXPECT_STREQ("yes", out0);
}

TEST_F(neb, garbage_forgery_and_replay_are_not_messages)
{
	char out[MSG_MAX];

	ASSERT_EQ(0, sacred_neb_misbehave(self->n[BYZ], SACRED_NEB_GARBAGE,
					  1, 0, NULL, 0));
	EXPECT_EQ(-EAGAIN, deliver(self, 0, BYZ, 1, out));
	ASSERT_EQ(0, sacred_neb_broadcast(self->n[BYZ], 0, "signed once", 12));
	ASSERT_EQ(0, sacred_neb_misbehave(self->n[BYZ], SACRED_NEB_REPLAY,
					  2, 0, NULL, 0));
	EXPECT_EQ(-EAGAIN, deliver(self, 0, BYZ, 2, out));
	/* A copy of P1's message 3 that P1 never signed. */
	ASSERT_EQ(0, sacred_neb_misbehave(self->n[BYZ], SACRED_NEB_FORGE, 3,
					  1, "P1 says so", 11));
	EXPECT_EQ(-EAGAIN, deliver(self, 0, 1, 3, out));
	ASSERT_EQ(0, sacred_neb_broadcast(self->n[1], 3, "P1 really", 10));
	ASSERT_EQ(0, deliver(self, 0, 1, 3, out));
	EXPECT_STREQ("P1 really", out);
}

/* The memory itself refuses a write into another process's region. */
TEST_F(neb, writing_another_region_is_refused_by_the_memory)
{
	uint8_t junk[64];
	char out[MSG_MAX];

	ASSERT_EQ(0, sacred_neb_broadcast(self->n[0], 0, "mine", 5));
	memset(junk, 0xa5, sizeof(junk));
	EXPECT_EQ(-EACCES, sacred_rmem_write(self->rm[BYZ], NEB_BASE + 0, 0,
					     junk, sizeof(junk), NULL));
	sacred_rmem_revive(self->rm[BYZ]);
	ASSERT_EQ(0, deliver(self, 1, 0, 0, out));
	EXPECT_STREQ("mine", out);
}

/*
 * lib/neb.c's layout, as a Byzantine process or a test sees it: a record
 * is NEB_REC_HDR bytes of header and signature, then the message; a
 * process's region has NR_MSGS own slots, then NR_MSGS copy slots per
 * sender.
 */
#define NEB_REC_HDR	(4 + 4 + 8 + 4 + 4 + SACRED_BZ_SIG_LEN)
#define NEB_SLOTS	(NR_MSGS * (NR_PROCS + 1))
#define NEB_COPY_SLOT(p, k)	(NR_MSGS + (p) * NR_MSGS + (k))

static int mem_state(FIXTURE_DATA(neb) *self, unsigned int i, uint8_t st)
{
	return sacred_mem_set(self->ctrl, self->mem[i].id, st, 0, NULL);
}

/*
 * The broadcast made again on the same region ids, with @tag: every
 * handle closed, the regions deleted (their grants revoked, the
 * connections fenced) and made anew, every handle opened again - on a
 * new replicated-memory handle (one lives with one incarnation).
 */
static int neb_again(FIXTURE_DATA(neb) *self, uint64_t tag)
{
	unsigned int i, j;
	int ret;

	for (i = 0; i < NR_PROCS; i++) {
		sacred_neb_close(self->n[i]);
		self->n[i] = NULL;
	}
	for (j = 0; j < NR_PROCS; j++) {
		for (i = 0; i < NR_MEMS; i++) {
			ret = sacred_region_del(self->ctrl, self->mem[i].id,
						NEB_BASE + j);
			if (ret)
				return ret;
		}
		ret = region_on_all_tagged(self->ctrl, self->mem, NR_MEMS,
					   NEB_BASE + j, 65536,
					   SACRED_POLICY_SWMR, PID(0), NR_PROCS,
					   j, tag);
		if (ret)
			return ret;
	}
	for (i = 0; i < NR_PROCS; i++) {
		ret = rmem_anew(&self->rm[i], self->mem, NR_MEMS, PID(i));
		if (!ret)
			ret = neb_open(self, i);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A record signed for an earlier broadcast on the same region ids is
 * not a message of this one: the signature binds the regions' tag. A
 * Byzantine P2 keeps its signed "old" and writes it back, raw, into its
 * slot 0 after the regions were made again. With the tag of before (an
 * admin who reused it) the replay is delivered - the binding is all that
 * stops it; with a new tag it is nothing.
 */
TEST_F(neb, record_of_an_earlier_incarnation_is_not_a_message)
{
	uint8_t rec[NEB_REC_HDR + MSG_MAX];
	struct sacred_slots *sl;
	struct sacred_cell_view v;
	uint64_t tag, again;
	char out[MSG_MAX];

	ASSERT_EQ(0, sacred_rmem_region_tag(self->rm[0], NEB_BASE, &tag,
					    NULL));
	ASSERT_EQ(0, sacred_neb_broadcast(self->n[BYZ], 0, "old", 4));
	ASSERT_EQ(0, sacred_slots_open(self->rm[BYZ], NEB_BASE + BYZ,
				       sizeof(rec), NEB_SLOTS, 0, &sl));
	ASSERT_EQ(0, sacred_slots_read(sl, 0, rec, sizeof(rec), &v));
	sacred_slots_close(sl);

	for (again = tag; ; again = tag + 1) {
		ASSERT_EQ(0, neb_again(self, again));
		ASSERT_EQ(-EAGAIN, deliver(self, 0, BYZ, 0, out));
		ASSERT_EQ(0, sacred_slots_open(self->rm[BYZ], NEB_BASE + BYZ,
					       sizeof(rec), NEB_SLOTS, 0,
					       &sl));
		ASSERT_EQ(0, sacred_slots_write(sl, 0, rec, v.len));
		sacred_slots_close(sl);
		if (again != tag)
			break;
		ASSERT_EQ(0, deliver(self, 0, BYZ, 0, out));
		EXPECT_STREQ("old", out);
	}
	EXPECT_EQ(-EAGAIN, deliver(self, 0, BYZ, 0, out));
	EXPECT_EQ(-EAGAIN, deliver(self, 1, BYZ, 0, out));
	/* P2's own broadcast of this incarnation still goes through. */
	ASSERT_EQ(0, sacred_neb_broadcast(self->n[BYZ], 1, "new", 4));
	ASSERT_EQ(0, deliver(self, 1, BYZ, 1, out));
	EXPECT_STREQ("new", out);
}

/*
 * A memory whose region was made again (another incarnation) is left out
 * for that region, as if it had crashed, and the broadcast goes on with
 * the others; with a second one made again no quorum holds one
 * incarnation, and the broadcast does not open.
 */
TEST_F(neb, memories_of_another_incarnation_are_left_out)
{
	char out[MSG_MAX];
	uint64_t tag, t;
	uint32_t mask;

	ASSERT_EQ(0, sacred_rmem_region_tag(self->rm[0], NEB_BASE + 1, &tag,
					    &mask));
	EXPECT_EQ(7, mask);
	sacred_neb_close(self->n[0]);
	self->n[0] = NULL;
	/* Region 1 made again on memory 0 only, with another tag. */
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem[0].id,
				       NEB_BASE + 1));
	ASSERT_EQ(0, region_on_all_tagged(self->ctrl, self->mem, 1,
					  NEB_BASE + 1, 65536,
					  SACRED_POLICY_SWMR, PID(0), NR_PROCS,
					  1, tag + 1));
	ASSERT_EQ(0, after_revive(self->rm[0], 3, neb_open(self, 0)));
	t = 0;
	ASSERT_EQ(0, sacred_rmem_region_tag(self->rm[0], NEB_BASE + 1, &t,
					    &mask));
	EXPECT_EQ(tag, t);
	EXPECT_EQ(6, mask);
	/* P1's message reaches P0 through memories 1 and 2. */
	ASSERT_EQ(0, sacred_neb_broadcast(self->n[1], 0, "through 1, 2", 13));
	ASSERT_EQ(0, after_revive(self->rm[0], 3, deliver(self, 0, 1, 0, out)));
	EXPECT_STREQ("through 1, 2", out);

	/* Memory 1's too: one of three holds the broadcast's region 1. */
	sacred_neb_close(self->n[0]);
	self->n[0] = NULL;
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem[1].id,
				       NEB_BASE + 1));
	ASSERT_EQ(0, region_on_all_tagged(self->ctrl, self->mem + 1, 1,
					  NEB_BASE + 1, 65536,
					  SACRED_POLICY_SWMR, PID(0), NR_PROCS,
					  1, tag + 2));
	EXPECT_EQ(-EPROTO, after_revive(self->rm[0], 3, neb_open(self, 0)));
	/* A process that never attached it learns no tag from a minority. */
	ASSERT_EQ(0, rmem_anew(&self->rm[0], self->mem, NR_MEMS, PID(0)));
	EXPECT_EQ(-EPROTO, neb_open(self, 0));
	EXPECT_EQ(-ENOENT, sacred_rmem_region_tag(self->rm[0], NEB_BASE + 1,
						  &t, NULL));
}

/*
 * A copy that a failed write left on a minority of memories is not a
 * copy on a quorum. P0's copy of P2's message is put on memory 0 only
 * (the write P0's deliver would do, with memories 1 and 2 down: it fails
 * there). P0, delivering later with memory 2 down, finds it on memory 0
 * - and must write it again before it delivers: else P1, reading the
 * copies on memories 1 and 2 after P2 equivocated, would not meet it and
 * would deliver the other message.
 */
TEST_F(neb, copy_left_on_a_minority_is_written_again)
{
	struct sacred_slots *own, *sender;
	uint8_t rec[NEB_REC_HDR + MSG_MAX];
	char out0[MSG_MAX], out1[MSG_MAX];
	struct sacred_cell_view v;
	int r1;

	ASSERT_EQ(0, sacred_neb_broadcast(self->n[BYZ], 0, "yes", 4));
	ASSERT_EQ(0, sacred_slots_open(self->rm[0], NEB_BASE + BYZ,
				       sizeof(rec), NEB_SLOTS, 0, &sender));
	ASSERT_EQ(0, sacred_slots_read(sender, 0, rec, sizeof(rec), &v));
	sacred_slots_close(sender);
	ASSERT_EQ(0, sacred_slots_open(self->rm[0], NEB_BASE, sizeof(rec),
				       NEB_SLOTS, 0, &own));
	ASSERT_EQ(0, mem_state(self, 1, SACRED_MEM_DOWN));
	ASSERT_EQ(0, mem_state(self, 2, SACRED_MEM_DOWN));
	EXPECT_NE(0, sacred_slots_write(own, NEB_COPY_SLOT(BYZ, 0), rec,
					v.len));
	sacred_slots_close(own);

	/* With memory 2 down, P0 finds its copy on memory 0 and delivers. */
	ASSERT_EQ(0, mem_state(self, 1, SACRED_MEM_UP));
	sacred_rmem_revive(self->rm[0]);
	ASSERT_EQ(0, deliver(self, 0, BYZ, 0, out0));
	EXPECT_STREQ("yes", out0);

	/* Memory 0 down, 2 back: P2 says "no"; P1 must see P0's copy. */
	ASSERT_EQ(0, mem_state(self, 2, SACRED_MEM_UP));
	ASSERT_EQ(0, mem_state(self, 0, SACRED_MEM_DOWN));
	/* Connections to a memory that went down are found broken in use. */
	ASSERT_EQ(0, after_revive(self->rm[BYZ], 3,
				  sacred_neb_misbehave(self->n[BYZ],
						       SACRED_NEB_EQUIVOCATE,
						       0, 0, "no", 3)));
	r1 = after_revive(self->rm[1], 3, deliver(self, 1, BYZ, 0, out1));
	TH_LOG("P1: %d %s", r1, r1 ? "" : out1);
	EXPECT_EQ(-EPROTO, r1);
	ASSERT_EQ(0, mem_state(self, 0, SACRED_MEM_UP));
}

TEST_HARNESS_MAIN
