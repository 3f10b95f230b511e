// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_perm - changePermission and the acceptChange policies, end to end:
 * real processes (connections) on SoftRoCE, real RDMA, the in-kernel
 * switch.
 *
 * For every policy: what a process holds after attaching, which requests
 * are accepted and refused (and why), that a refused request changes
 * nothing, that a revoked writer's next write fails with the data
 * untouched, that it can reconnect and re-attach, and the epoch. Also:
 * key rotation past the 8-bit key space, PERM_SET over netlink, the peer
 * list, and regions or instances deleted under connected processes.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define R	SACRED_ACCESS_READ
#define RW	(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define RWA	SACRED_ACCESS_ALL
#define NPROC	3
#define RSIZE	65536

FIXTURE(perm) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem;
	struct sockaddr_in addr;
	struct sacred_conn *p[NPROC + 1];	/* process i is p[i] */
	uint32_t region;
};

FIXTURE_VARIANT(perm) {
	uint8_t policy;
};

FIXTURE_VARIANT_ADD(perm, static_) { .policy = SACRED_POLICY_STATIC };
FIXTURE_VARIANT_ADD(perm, exclusive) {
	.policy = SACRED_POLICY_EXCLUSIVE_WRITER
};
FIXTURE_VARIANT_ADD(perm, swmr) { .policy = SACRED_POLICY_SWMR };
FIXTURE_VARIANT_ADD(perm, revoke_only) {
	.policy = SACRED_POLICY_REVOKE_ONLY
};
FIXTURE_VARIANT_ADD(perm, fenced) { .policy = SACRED_POLICY_FENCED };

static int set_acl(struct sacred_ctrl *ctrl, uint32_t mem, uint32_t region,
		   uint32_t a1, uint32_t a2, uint32_t a3)
{
	struct sacred_acl_entry acl[NPROC] = {
		{ .process_id = 1, .access = a1 },
		{ .process_id = 2, .access = a2 },
		{ .process_id = 3, .access = a3 },
	};

	return sacred_region_set_acl(ctrl, mem, region, acl, NPROC);
}

static int connect_proc(struct __test_metadata *_metadata,
			FIXTURE_DATA(perm) *self, uint32_t pid)
{
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&self->addr,
		.process_id = pid,
	};
	struct sacred_region_attr ra;
	int ret;

	ret = sacred_conn_create(&attr, &self->p[pid]);
	if (ret)
		return ret;
	return sacred_attach(self->p[pid], self->region, &ra);
}

/*
 * A memory instance with one region under @policy, the ACL below, and the
 * three processes connected and attached. Shared by the fixtures: perm
 * runs a test under every policy, perm_ew and perm_acl only under the
 * policies their tests are about (no test skips because a policy does not
 * apply).
 */
static void perm_open(struct __test_metadata *_metadata,
		      FIXTURE_DATA(perm) *self, uint8_t policy)
{
	struct sacred_mem_params mp = { .id = SACRED_MEM_ID_ANY };
	struct sacred_region_info ri;
	uint32_t a2 = policy == SACRED_POLICY_SWMR ||
		      policy == SACRED_POLICY_REVOKE_ONLY ? R : RW;
	int i;

	if (!st_open(_metadata, &self->ctrl, 1, 1))
		return;
	st_mem_new(_metadata, self->ctrl, 0, &mp, &self->mem);
	memcpy(&self->addr, &self->mem.addr, sizeof(self->addr));
	st_region_new(_metadata, self->ctrl, self->mem.id, RSIZE, policy,
		      NULL, 0, &ri);
	self->region = ri.id;
	/* 1 may write, 2 may write unless the policy wants one writer, 3 reads. */
	ASSERT_EQ(0, set_acl(self->ctrl, self->mem.id, self->region, RW, a2,
			     R));
	for (i = 1; i <= NPROC; i++)
		ASSERT_EQ(0, connect_proc(_metadata, self, i));
}

static void perm_close(FIXTURE_DATA(perm) *self)
{
	int i;

	for (i = 1; i <= NPROC; i++)
		sacred_conn_destroy(self->p[i]);
	if (self->ctrl && self->mem.state)
		sacred_mem_del(self->ctrl, self->mem.id);
	sacred_ctrl_close(self->ctrl);
}

FIXTURE_SETUP(perm)
{
	perm_open(_metadata, self, variant->policy);
}

FIXTURE_TEARDOWN(perm)
{
	perm_close(self);
}

/* Exclusive-writer only: a process may change its own access at will. */
FIXTURE(perm_ew) {
	FIXTURE_DATA(perm) f;
};

FIXTURE_SETUP(perm_ew)
{
	perm_open(_metadata, &self->f, SACRED_POLICY_EXCLUSIVE_WRITER);
}

FIXTURE_TEARDOWN(perm_ew)
{
	perm_close(&self->f);
}

/* The policies under which nothing changes access at runtime. */
FIXTURE(perm_acl) {
	FIXTURE_DATA(perm) f;
};

FIXTURE_VARIANT(perm_acl) {
	uint8_t policy;
};

FIXTURE_VARIANT_ADD(perm_acl, static_) { .policy = SACRED_POLICY_STATIC };
FIXTURE_VARIANT_ADD(perm_acl, swmr) { .policy = SACRED_POLICY_SWMR };

FIXTURE_SETUP(perm_acl)
{
	perm_open(_metadata, &self->f, variant->policy);
}

FIXTURE_TEARDOWN(perm_acl)
{
	perm_close(&self->f);
}

static uint32_t held(FIXTURE_DATA(perm) *self, int pid)
{
	struct sacred_region_attr ra;

	if (sacred_conn_region(self->p[pid], self->region, &ra))
		return 0xdead;
	return ra.access;
}

static int ask(FIXTURE_DATA(perm) *self, int pid, uint32_t access,
	       uint64_t ballot, uint32_t target,
	       struct sacred_perm_result *res)
{
	struct sacred_perm_req req = {
		.region_id = self->region,
		.access = access,
		.ballot = ballot,
		.target = target,
	};

	return sacred_change_perm(self->p[pid], &req, res);
}

/* Write a word, expect @want; on a broken connection, reconnect. */
static int try_write(FIXTURE_DATA(perm) *self, int pid, uint64_t off,
		     uint64_t v)
{
	int ret = sacred_write(self->p[pid], self->region, off, &v, sizeof(v));

	if (ret == -EACCES || ret == -ECONNRESET)
		sacred_conn_reconnect(self->p[pid]);
	return ret;
}

static uint64_t peek(struct __test_metadata *_metadata,
		     FIXTURE_DATA(perm) *self, uint64_t off)
{
	uint64_t v = 0;

	EXPECT_EQ(0, sacred_read(self->p[3], self->region, off, &v, sizeof(v)));
	return v;
}

TEST_F(perm, initial_access_follows_the_policy)
{
	switch (variant->policy) {
	case SACRED_POLICY_STATIC:
	case SACRED_POLICY_SWMR:
	case SACRED_POLICY_REVOKE_ONLY:
		EXPECT_EQ(RW, held(self, 1));
		break;
	default:
		EXPECT_EQ(R, held(self, 1));
	}
	EXPECT_EQ(R, held(self, 3));
}

TEST_F(perm, reader_write_fails_and_leaves_data_untouched)
{
	uint64_t v = 0x1111;

	if (held(self, 1) & SACRED_ACCESS_WRITE)
		ASSERT_EQ(0, sacred_write(self->p[1], self->region, 0, &v,
					  sizeof(v)));
	EXPECT_EQ(-EACCES, try_write(self, 3, 0, 0xbad));
	EXPECT_EQ(held(self, 1) & SACRED_ACCESS_WRITE ? 0x1111 : 0,
		  peek(_metadata, self, 0));
	/* After the refused write, the reader reconnected and reads again. */
	EXPECT_EQ(R, held(self, 3));
}

TEST_F(perm, requests_are_decided_by_the_policy)
{
	struct sacred_perm_result res;

	switch (variant->policy) {
	case SACRED_POLICY_STATIC:
		EXPECT_EQ(-EPERM, ask(self, 2, RW, 0, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_STATIC, res.reason);
		break;
	case SACRED_POLICY_SWMR:
		EXPECT_EQ(-EPERM, ask(self, 2, RW, 0, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_SWMR, res.reason);
		EXPECT_EQ(RW, held(self, 1));
		break;
	case SACRED_POLICY_EXCLUSIVE_WRITER:
		EXPECT_EQ(-EPERM, ask(self, 3, RW, 0, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_NOT_MEMBER, res.reason);
		ASSERT_EQ(0, ask(self, 1, RW, 0, 0, &res));
		EXPECT_EQ(RW, res.region.access);
		EXPECT_NE(0, res.region.rkey);
		EXPECT_EQ(0, try_write(self, 1, 0, 1));
		ASSERT_EQ(0, ask(self, 2, RW, 0, 0, &res));
		EXPECT_EQ(0, try_write(self, 2, 0, 2));
		/* 1 was demoted, and fenced: its write fails, data stays. */
		EXPECT_NE(0, try_write(self, 1, 0, 0xbad));
		EXPECT_EQ(2, peek(_metadata, self, 0));
		EXPECT_EQ(R, held(self, 1));
		break;
	case SACRED_POLICY_REVOKE_ONLY:
		EXPECT_EQ(0, try_write(self, 1, 0, 1));
		EXPECT_EQ(-EPERM, ask(self, 2, RW, 0, 1, &res));
		EXPECT_EQ(SACRED_REFUSE_NO_GRANT, res.reason);
		ASSERT_EQ(0, ask(self, 3, 0, 0, 1, &res));
		EXPECT_NE(0, try_write(self, 1, 0, 0xbad));
		EXPECT_EQ(1, peek(_metadata, self, 0));
		EXPECT_EQ(R, held(self, 1));
		/* Never granted back, not even to itself. */
		EXPECT_EQ(-EPERM, ask(self, 1, RW, 0, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_NO_GRANT, res.reason);
		break;
	case SACRED_POLICY_FENCED:
		ASSERT_EQ(0, ask(self, 1, RW, 5, 0, &res));
		EXPECT_EQ(0, try_write(self, 1, 0, 1));
		EXPECT_EQ(-EPERM, ask(self, 2, RW, 5, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_STALE_BALLOT, res.reason);
		EXPECT_EQ(0, try_write(self, 1, 0, 11));
		ASSERT_EQ(0, ask(self, 2, RW, 6, 0, &res));
		EXPECT_NE(0, try_write(self, 1, 0, 0xbad));
		EXPECT_EQ(11, peek(_metadata, self, 0));
		EXPECT_EQ(-EPERM, ask(self, 1, RW, 6, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_STALE_BALLOT, res.reason);
		break;
	}
}

TEST_F(perm, refused_request_changes_nothing)
{
	struct sacred_perm_result res;
	struct sacred_region_info before, after;

	ASSERT_EQ(0, sacred_region_get(self->ctrl, self->mem.id, self->region,
				       &before));
	/* Process 3 may never write: refused under every policy. */
	EXPECT_EQ(-EPERM, ask(self, 3, RW,
			      variant->policy == SACRED_POLICY_FENCED ? 100 : 0,
			      0, &res));
	ASSERT_EQ(0, sacred_region_get(self->ctrl, self->mem.id, self->region,
				       &after));
	EXPECT_EQ(before.epoch, after.epoch);
	EXPECT_EQ(R, held(self, 3));
}

/*
 * More registrations than the 8-bit key space holds: every grant gets a
 * key the process did not hold in its last 255 grants, and the process
 * keeps a single MR.
 */
TEST_F(perm_ew, keys_never_repeat_across_the_8_bit_wrap)
{
	static uint32_t keys[600];
	struct sacred_perm_result res;
	int i, j, bad = 0;

	for (i = 0; i < 600; i++) {
		ASSERT_EQ(0, ask(&self->f, 1, i % 2 ? R : RW, 0, 0, &res));
		keys[i] = res.region.rkey;
	}
	for (i = 0; i < 600; i++)
		for (j = i + 1; j < 600 && j < i + 255; j++)
			bad += keys[i] == keys[j];
	EXPECT_EQ(0, bad);
}

/*
 * Where nothing changes access at runtime (static, swmr), the ACL is the
 * access: a new ACL that makes 2 the writer instead of 1 leaves 2 able to
 * write and 1 not - not the old access cut down to the new maximum.
 */
TEST_F(perm_acl, acl_handing_write_over_moves_it_where_the_acl_is_the_access)
{
	FIXTURE_DATA(perm) *f = &self->f;
	struct sacred_region_attr ra;
	uint64_t v = 42;

	ASSERT_EQ(0, set_acl(f->ctrl, f->mem.id, f->region, R, RW, R));
	ASSERT_EQ(0, sacred_conn_reconnect(f->p[2]));
	ASSERT_EQ(0, sacred_attach(f->p[2], f->region, &ra));
	EXPECT_EQ(RW, ra.access);
	EXPECT_EQ(0, sacred_write(f->p[2], f->region, 16, &v, sizeof(v)));
	EXPECT_EQ(42, peek(_metadata, f, 16));
	EXPECT_NE(0, try_write(f, 1, 16, 0xbad));
	EXPECT_EQ(42, peek(_metadata, f, 16));
	ASSERT_EQ(0, sacred_attach(f->p[1], f->region, &ra));
	EXPECT_EQ(R, ra.access);
}

TEST_F(perm_ew, epoch_counts_accepted_changes)
{
	FIXTURE_DATA(perm) *f = &self->f;
	struct sacred_perm_result res;
	uint32_t e0;

	ASSERT_EQ(0, ask(f, 1, RW, 0, 0, &res));
	e0 = res.region.epoch;
	ASSERT_EQ(0, ask(f, 2, RW, 0, 0, &res));
	EXPECT_EQ(e0 + 1, res.region.epoch);
	EXPECT_EQ(-EPERM, ask(f, 3, RW, 0, 0, &res));
	ASSERT_EQ(0, ask(f, 2, R, 0, 0, &res));
	EXPECT_EQ(e0 + 2, res.region.epoch);
}

TEST_F(perm, admin_perm_set_runs_the_policy)
{
	struct sacred_perm_req req = {
		.region_id = self->region,
		.access = RW,
		.ballot = 9,
		.target = 1,
	};
	uint64_t v = 7;

	/* A ballot only on a fenced region, a target on a revoke-only one. */
	EXPECT_EQ(-EINVAL, sacred_perm_set(self->ctrl, self->mem.id, 2, &req));
	EXPECT_NE(NULL, sacred_ctrl_errmsg(self->ctrl));
	if (variant->policy != SACRED_POLICY_FENCED)
		req.ballot = 0;
	req.target = 0;
	if (variant->policy == SACRED_POLICY_STATIC ||
	    variant->policy == SACRED_POLICY_SWMR) {
		EXPECT_EQ(-EPERM, sacred_perm_set(self->ctrl, self->mem.id, 2,
						  &req));
		EXPECT_NE(NULL, sacred_ctrl_errmsg(self->ctrl));
		return;
	}
	if (variant->policy == SACRED_POLICY_REVOKE_ONLY) {
		req.access = 0;
		req.target = 1;
	}
	ASSERT_EQ(0, sacred_perm_set(self->ctrl, self->mem.id, 2, &req));
	if (variant->policy == SACRED_POLICY_REVOKE_ONLY) {
		EXPECT_NE(0, try_write(self, 1, 0, 0xbad));
		return;
	}
	/* Process 2 learns its new access when it attaches again. */
	ASSERT_EQ(0, sacred_conn_reconnect(self->p[2]));
	EXPECT_EQ(RW, held(self, 2));
	EXPECT_EQ(0, sacred_write(self->p[2], self->region, 8, &v, sizeof(v)));
	EXPECT_EQ(7, peek(_metadata, self, 8));
}

struct peer_seen {
	int connected;
	uint64_t fences;
	uint32_t mrs;
};

static int peer_cb(const struct sacred_peer_info *info, void *arg)
{
	struct peer_seen *s = arg;

	s->connected += info->connected;
	s->fences += info->fences;
	s->mrs += info->mrs;
	return 0;
}

TEST_F(perm, peer_list_counts_connections_and_mrs)
{
	struct peer_seen s = {};

	ASSERT_EQ(0, sacred_peer_list(self->ctrl, self->mem.id, peer_cb, &s));
	EXPECT_EQ(NPROC, s.connected);
	/* One MR per process holding access on the one region. */
	EXPECT_EQ(NPROC, s.mrs);
}

TEST_F(perm, region_deleted_under_a_writer)
{
	struct sacred_perm_result res;
	uint64_t v = 1;

	/* Where write is asked for, not held from the attach, ask. */
	if (!(held(self, 1) & SACRED_ACCESS_WRITE))
		ASSERT_EQ(0, ask(self, 1, RW,
				 variant->policy == SACRED_POLICY_FENCED ? 1 : 0,
				 0, &res));
	ASSERT_EQ(RW, held(self, 1));
	ASSERT_EQ(0, sacred_write(self->p[1], self->region, 0, &v, sizeof(v)));
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem.id, self->region));
	EXPECT_NE(0, sacred_write(self->p[1], self->region, 0, &v, sizeof(v)));
}

TEST_F(perm, instance_deleted_under_connected_processes)
{
	uint64_t v = 1;

	ASSERT_EQ(0, sacred_mem_del(self->ctrl, self->mem.id));
	self->mem.state = 0;
	EXPECT_NE(0, sacred_read(self->p[3], self->region, 0, &v, sizeof(v)));
}

TEST_HARNESS_MAIN
