// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_netlink - the generic netlink family as a hostile caller sees it.
 *
 * Every message here is built by hand (nlraw.h), so the tests control the
 * exact bytes: unknown, misplaced, mistyped and oversized attributes,
 * unknown commands, dirty reserved header fields, missing required
 * attributes and callers without CAP_NET_ADMIN. Each refusal must be a
 * clean errno and, where the caller can fix something, an extack message.
 */
#include <errno.h>
#include <sys/wait.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "nlraw.h"
#include "sacred_test.h"

FIXTURE(nl) {
	struct nlraw nl;
	char dev[64];
};

FIXTURE_SETUP(nl)
{
	int ret = nlraw_open(&self->nl, SACRED_GENL_NAME);

	if (ret == -ENOENT)
		SKIP(return, "sacred.ko is not loaded");
	ASSERT_EQ(0, ret);
	if (!env_word("SACRED_RXE_DEVS", 0, self->dev, sizeof(self->dev)))
		strcpy(self->dev, "rxe0");
}

FIXTURE_TEARDOWN(nl)
{
	nlraw_close(&self->nl);
}

static int dev_get(struct nlraw *nl, const char *name)
{
	nlraw_start(nl, nl->family, SACRED_CMD_DEV_GET, 0, 1);
	nlraw_put_str(nl, SACRED_ATTR_DEV_NAME, name);
	return nlraw_xfer(nl);
}

TEST_F(nl, dev_get_by_name_answers)
{
	struct nlattr *a;

	ASSERT_EQ(0, dev_get(&self->nl, self->dev));
	a = nlraw_reply_attr(&self->nl, SACRED_ATTR_DEV_NAME);
	ASSERT_NE(NULL, a);
	EXPECT_STREQ(self->dev, (char *)a + NLA_HDRLEN);
	EXPECT_NE(NULL, nlraw_reply_attr(&self->nl, SACRED_ATTR_DEV_PORTS));
}

TEST_F(nl, dev_get_unknown_device_is_enodev_with_message)
{
	EXPECT_EQ(-ENODEV, dev_get(&self->nl, "nosuchdev0"));
	EXPECT_STREQ("no such RDMA device", self->nl.errmsg);
}

TEST_F(nl, dev_get_without_key_is_einval_with_message)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_DEV_GET, 0, 1);
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_STREQ("DEV_NAME or DEV_INDEX is required", self->nl.errmsg);
}

TEST_F(nl, attribute_of_another_command_is_refused)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_DEV_GET, 0, 1);
	nlraw_put_str(&self->nl, SACRED_ATTR_DEV_NAME, self->dev);
	nlraw_put_u16(&self->nl, SACRED_ATTR_MEM_PORT, 7471);
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_NE(0, self->nl.errmsg[0]);
	TH_LOG("extack: %s", self->nl.errmsg);
}

TEST_F(nl, attribute_beyond_max_is_refused)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_DEV_GET, 0, 1);
	nlraw_put_str(&self->nl, SACRED_ATTR_DEV_NAME, self->dev);
	nlraw_put_u32(&self->nl, SACRED_ATTR_MAX + 1, 1);
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_NE(0, self->nl.errmsg[0]);
}

TEST_F(nl, attribute_of_wrong_length_is_refused)
{
	uint16_t idx = 0;

	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_DEV_GET, 0, 1);
	nlraw_put(&self->nl, SACRED_ATTR_DEV_INDEX, &idx, sizeof(idx));
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_NE(0, self->nl.errmsg[0]);
	TH_LOG("extack: %s", self->nl.errmsg);
}

TEST_F(nl, name_without_nul_is_refused)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_DEV_GET, 0, 1);
	nlraw_put(&self->nl, SACRED_ATTR_DEV_NAME, "rxe0", 4);
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_NE(0, self->nl.errmsg[0]);
}

TEST_F(nl, overlong_name_is_refused)
{
	char name[SACRED_NAME_MAX + 16];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_DEV_GET, 0, 1);
	nlraw_put_str(&self->nl, SACRED_ATTR_DEV_NAME, name);
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_NE(0, self->nl.errmsg[0]);
}

TEST_F(nl, unknown_command_is_eopnotsupp)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_MAX + 1, 0, 1);
	EXPECT_EQ(-EOPNOTSUPP, nlraw_xfer(&self->nl));
}

TEST_F(nl, dirty_reserved_header_is_refused)
{
	struct genlmsghdr *gh;

	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_DEV_GET, 0, 1);
	nlraw_put_str(&self->nl, SACRED_ATTR_DEV_NAME, self->dev);
	gh = NLMSG_DATA(nlraw_hdr(&self->nl));
	gh->reserved = 1;
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
}

TEST_F(nl, mem_new_without_device_names_the_missing_attribute)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_MEM_NEW, 0, 1);
	nlraw_put_u16(&self->nl, SACRED_ATTR_MEM_PORT, 7471);
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_EQ(SACRED_ATTR_DEV_NAME, self->nl.miss_type);
	EXPECT_STREQ("DEV_NAME is required", self->nl.errmsg);
}

TEST_F(nl, mem_new_with_bad_address_length_is_refused)
{
	char addr[5] = { 192, 0, 2, 1, 0 };

	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_MEM_NEW, 0, 1);
	nlraw_put_str(&self->nl, SACRED_ATTR_DEV_NAME, self->dev);
	nlraw_put_u16(&self->nl, SACRED_ATTR_MEM_PORT, 7471);
	nlraw_put(&self->nl, SACRED_ATTR_MEM_ADDR, addr, sizeof(addr));
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_STREQ("address must be 4 (IPv4) or 16 (IPv6) bytes",
		     self->nl.errmsg);
}

TEST_F(nl, mem_new_with_port_out_of_range_is_refused)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_MEM_NEW, 0, 1);
	nlraw_put_str(&self->nl, SACRED_ATTR_DEV_NAME, self->dev);
	nlraw_put_u16(&self->nl, SACRED_ATTR_MEM_PORT, 7471);
	nlraw_put_u32(&self->nl, SACRED_ATTR_PORT_INDEX, 0);
	EXPECT_EQ(-ERANGE, nlraw_xfer(&self->nl));
	EXPECT_NE(0, self->nl.errmsg[0]);
}

TEST_F(nl, reserved_id_is_refused)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_MEM_NEW, 0, 1);
	nlraw_put_str(&self->nl, SACRED_ATTR_DEV_NAME, self->dev);
	nlraw_put_u16(&self->nl, SACRED_ATTR_MEM_PORT, 0);
	nlraw_put_u32(&self->nl, SACRED_ATTR_MEM_ID, 0xffffffff);
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_STREQ("id 0xffffffff is reserved", self->nl.errmsg);
}

TEST_F(nl, mem_del_unknown_is_enoent_with_message)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_MEM_DEL, 0, 1);
	nlraw_put_u32(&self->nl, SACRED_ATTR_MEM_ID, 0xfffffff0);
	EXPECT_EQ(-ENOENT, nlraw_xfer(&self->nl));
	EXPECT_STREQ("no such memory instance", self->nl.errmsg);
}

/* A region's tag is fixed at its creation: REGION_SET refuses one. */
TEST_F(nl, region_set_cannot_change_the_tag)
{
	uint64_t tag = 1;

	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_REGION_SET, 0, 1);
	nlraw_put_u32(&self->nl, SACRED_ATTR_MEM_ID, 0xfffffff0);
	nlraw_put_u32(&self->nl, SACRED_ATTR_REGION_ID, 1);
	nlraw_put(&self->nl, SACRED_ATTR_REGION_TAG, &tag, sizeof(tag));
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
	EXPECT_STREQ("a region's tag is fixed at its creation",
		     self->nl.errmsg);
}

TEST_F(nl, region_new_with_short_tag_is_refused)
{
	nlraw_start(&self->nl, self->nl.family, SACRED_CMD_REGION_NEW, 0, 1);
	nlraw_put_u32(&self->nl, SACRED_ATTR_MEM_ID, 0xfffffff0);
	nlraw_put(&self->nl, SACRED_ATTR_REGION_SIZE, &(uint64_t){ 4096 }, 8);
	nlraw_put_u32(&self->nl, SACRED_ATTR_REGION_TAG, 1);
	EXPECT_EQ(-EINVAL, nlraw_xfer(&self->nl));
}

/*
 * Without CAP_NET_ADMIN: reading works, every mutating command is refused
 * with EPERM before it is looked at.
 */
TEST_F(nl, unprivileged_mutation_is_refused)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct nlraw *nl = &self->nl;

		nlraw_close(nl);
		if (drop_privileges())
			_exit(10);
		if (nlraw_open(nl, SACRED_GENL_NAME))
			_exit(11);
		nlraw_start(nl, nl->family, SACRED_CMD_DEV_GET, NLM_F_DUMP, 1);
		if (nlraw_xfer(nl) || nl->dump_entries < 1)
			_exit(12);
		nlraw_start(nl, nl->family, SACRED_CMD_MEM_NEW, 0, 1);
		nlraw_put_str(nl, SACRED_ATTR_DEV_NAME, self->dev);
		nlraw_put_u16(nl, SACRED_ATTR_MEM_PORT, 7471);
		if (nlraw_xfer(nl) != -EPERM)
			_exit(13);
		nlraw_start(nl, nl->family, SACRED_CMD_MEM_DEL, 0, 1);
		nlraw_put_u32(nl, SACRED_ATTR_MEM_ID, 0);
		if (nlraw_xfer(nl) != -EPERM)
			_exit(14);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
