// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_region - regions of a memory instance: sizes, ids, policies, the
 * per-instance memory cap, dumps, and the fate of regions whose instance
 * goes away.
 */
#include <errno.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

FIXTURE(region) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem;
	char dev[64];
};

static int new_mem(struct sacred_ctrl *ctrl, const char *dev, uint64_t cap,
		   struct sacred_mem_info *info)
{
	struct sacred_mem_params p = {
		.id = SACRED_MEM_ID_ANY,
		.dev_name = dev,
		.mem_cap = cap,
	};

	return sacred_mem_new(ctrl, &p, info);
}

FIXTURE_SETUP(region)
{
	if (!st_open(_metadata, &self->ctrl, 1, 0))
		return;
	env_word("SACRED_RXE_DEVS", 0, self->dev, sizeof(self->dev));
	ASSERT_EQ(0, new_mem(self->ctrl, self->dev, 0, &self->mem));
}

FIXTURE_TEARDOWN(region)
{
	if (self->ctrl)
		sacred_mem_del(self->ctrl, self->mem.id);
	sacred_ctrl_close(self->ctrl);
}

TEST_F(region, add_show_del_accounts_memory)
{
	struct sacred_region_info r, g;
	struct sacred_mem_info m;

	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, 65536,
				       SACRED_POLICY_EXCLUSIVE_WRITER, &r));
	EXPECT_EQ(self->mem.id, r.mem_id);
	EXPECT_EQ(65536, r.size);
	EXPECT_EQ(SACRED_POLICY_EXCLUSIVE_WRITER, r.policy);
	EXPECT_EQ(0, r.epoch);
	EXPECT_LE(1, r.nr_chunks);

	ASSERT_EQ(0, sacred_region_get(self->ctrl, self->mem.id, r.id, &g));
	EXPECT_EQ(r.id, g.id);
	EXPECT_EQ(r.size, g.size);

	ASSERT_EQ(0, sacred_mem_get(self->ctrl, self->mem.id, &m));
	EXPECT_EQ(65536, m.mem_used);
	EXPECT_EQ(1, m.nr_regions);
	EXPECT_EQ(SACRED_MEM_CAP_DEFAULT, m.mem_cap);

	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem.id, r.id));
	EXPECT_EQ(-ENOENT, sacred_region_get(self->ctrl, self->mem.id, r.id,
					     &g));
	EXPECT_EQ(-ENOENT, sacred_region_del(self->ctrl, self->mem.id, r.id));
	ASSERT_EQ(0, sacred_mem_get(self->ctrl, self->mem.id, &m));
	EXPECT_EQ(0, m.mem_used);
	EXPECT_EQ(0, m.nr_regions);
}

TEST_F(region, bad_sizes_are_refused)
{
	static const uint64_t bad[] = {
		0, 1, 4095, 4097, 5000, SACRED_REGION_SIZE_MAX + 4096,
	};
	struct sacred_region_info r;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, sacred_region_new(self->ctrl, self->mem.id,
						     SACRED_REGION_ID_ANY,
						     bad[i],
						     SACRED_POLICY_STATIC, &r));
		EXPECT_STREQ("size must be a non-zero multiple of 4096, at most 16 GiB",
			     sacred_ctrl_errmsg(self->ctrl));
	}
}

TEST_F(region, explicit_id_kept_and_duplicate_refused)
{
	struct sacred_region_info r;

	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id, 7, 4096,
				       SACRED_POLICY_SWMR, &r));
	EXPECT_EQ(7, r.id);
	EXPECT_EQ(-EEXIST, sacred_region_new(self->ctrl, self->mem.id, 7,
					     4096, SACRED_POLICY_SWMR, &r));
	EXPECT_STREQ("region id in use", sacred_ctrl_errmsg(self->ctrl));
}

/*
 * A tag given is kept, told by get and list, and a tag not given is a
 * random one: two incarnations of one id differ.
 */
TEST_F(region, tag_given_is_kept_and_otherwise_random)
{
	struct sacred_region_info r, g;
	uint64_t t1;

	ASSERT_EQ(0, sacred_region_new_tagged(self->ctrl, self->mem.id, 3,
					      4096, SACRED_POLICY_SWMR,
					      0xfeedface00c0ffeeULL, &r));
	EXPECT_EQ(0xfeedface00c0ffeeULL, r.tag);
	ASSERT_EQ(0, sacred_region_get(self->ctrl, self->mem.id, 3, &g));
	EXPECT_EQ(0xfeedface00c0ffeeULL, g.tag);
	ASSERT_EQ(0, sacred_region_new_tagged(self->ctrl, self->mem.id, 4,
					      4096, SACRED_POLICY_SWMR, 0, &r));
	EXPECT_EQ(0, r.tag);

	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id, 5, 4096,
				       SACRED_POLICY_STATIC, &r));
	t1 = r.tag;
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem.id, 5));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id, 5, 4096,
				       SACRED_POLICY_STATIC, &r));
	EXPECT_NE(t1, r.tag);
	EXPECT_NE(0, t1 | r.tag);
}

TEST_F(region, unknown_instance_is_enoent)
{
	struct sacred_region_info r;

	EXPECT_EQ(-ENOENT, sacred_region_new(self->ctrl, 0xfffffff0,
					     SACRED_REGION_ID_ANY, 4096,
					     SACRED_POLICY_STATIC, &r));
	EXPECT_STREQ("no such memory instance",
		     sacred_ctrl_errmsg(self->ctrl));
}

TEST_F(region, cap_is_enforced_and_released)
{
	struct sacred_region_info a, b;
	struct sacred_mem_info m;

	ASSERT_EQ(0, new_mem(self->ctrl, self->dev, 1 << 20, &m));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, m.id, SACRED_REGION_ID_ANY,
				       1 << 20, SACRED_POLICY_STATIC, &a));
	EXPECT_EQ(-ENOSPC, sacred_region_new(self->ctrl, m.id,
					     SACRED_REGION_ID_ANY, 4096,
					     SACRED_POLICY_STATIC, &b));
	EXPECT_STREQ("region would exceed the instance's memory cap",
		     sacred_ctrl_errmsg(self->ctrl));
	ASSERT_EQ(0, sacred_region_del(self->ctrl, m.id, a.id));
	EXPECT_EQ(0, sacred_region_new(self->ctrl, m.id, SACRED_REGION_ID_ANY,
				       4096, SACRED_POLICY_STATIC, &b));
	/* Deleting the instance frees its regions (checked at unload). */
	EXPECT_EQ(0, sacred_mem_del(self->ctrl, m.id));
}

/* 1 GiB without physically contiguous memory: mostly 2 MiB chunks. */
TEST_F(region, one_gib_region)
{
	struct sacred_region_info r;

	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, 1ULL << 30,
				       SACRED_POLICY_STATIC, &r));
	EXPECT_EQ(1ULL << 30, r.size);
	EXPECT_GE(r.nr_chunks, 512);
	TH_LOG("1 GiB in %u chunks", r.nr_chunks);
	EXPECT_EQ(0, sacred_region_del(self->ctrl, self->mem.id, r.id));
}

struct seen {
	int n;
	int other;
	uint32_t mem_id;
};

static int count_cb(const struct sacred_region_info *info, void *arg)
{
	struct seen *s = arg;

	s->n++;
	if (info->mem_id != s->mem_id)
		s->other++;
	return 0;
}

TEST_F(region, dump_all_and_per_instance)
{
	struct sacred_region_info r;
	struct sacred_mem_info m2;
	struct seen s = { .mem_id = self->mem.id };
	int i;

	ASSERT_EQ(0, new_mem(self->ctrl, self->dev, 0, &m2));
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
					       SACRED_REGION_ID_ANY, 4096,
					       SACRED_POLICY_STATIC, &r));
		ASSERT_EQ(0, sacred_region_new(self->ctrl, m2.id,
					       SACRED_REGION_ID_ANY, 4096,
					       SACRED_POLICY_STATIC, &r));
	}
	ASSERT_EQ(0, sacred_region_list(self->ctrl, self->mem.id, count_cb,
					&s));
	EXPECT_EQ(200, s.n);
	EXPECT_EQ(0, s.other);

	memset(&s, 0, sizeof(s));
	s.mem_id = self->mem.id;
	ASSERT_EQ(0, sacred_region_list(self->ctrl, SACRED_MEM_ID_ANY,
					count_cb, &s));
	EXPECT_EQ(400, s.n);
	EXPECT_EQ(200, s.other);
	EXPECT_EQ(0, sacred_mem_del(self->ctrl, m2.id));
}

/*
 * The largest ACL: set, read back whole, and a region dump around it stays
 * complete (dumps carry no ACL; a region's reply is sized for its ACL).
 */
TEST_F(region, largest_acl_round_trips)
{
	static struct sacred_acl_entry acl[1025], back[1024];
	struct sacred_region_info r;
	struct seen s = { .mem_id = self->mem.id };
	unsigned int i, n;

	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, 4096,
				       SACRED_POLICY_EXCLUSIVE_WRITER, &r));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, 4096,
				       SACRED_POLICY_STATIC, &r));
	for (i = 0; i < 1025; i++) {
		acl[i].process_id = 1000 + i;
		acl[i].access = i % 2 ? SACRED_ACCESS_READ :
					SACRED_ACCESS_READ | SACRED_ACCESS_WRITE;
	}
	ASSERT_EQ(0, sacred_region_set_acl(self->ctrl, self->mem.id, r.id, acl,
					   1024));
	ASSERT_EQ(0, sacred_region_get_acl(self->ctrl, self->mem.id, r.id,
					   back, 1024, &n, NULL));
	ASSERT_EQ(1024, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(acl[i].process_id, back[i].process_id);
		EXPECT_EQ(acl[i].access, back[i].access);
		/* Static: what a process holds is its ACL entry. */
		EXPECT_EQ(acl[i].access, back[i].access_cur);
	}
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, 4096,
				       SACRED_POLICY_STATIC, &r));
	ASSERT_EQ(0, sacred_region_list(self->ctrl, self->mem.id, count_cb,
					&s));
	EXPECT_EQ(3, s.n);
	/* One entry more than the limit is refused, and says so. */
	EXPECT_EQ(-E2BIG, sacred_region_set_acl(self->ctrl, self->mem.id,
						r.id, acl, 1025));
	EXPECT_STREQ("too many ACL entries (max 1024)",
		     sacred_ctrl_errmsg(self->ctrl));
}

TEST_HARNESS_MAIN
