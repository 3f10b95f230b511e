// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_module - load and unload sacred.ko with devices and instances
 * present.
 *
 * Unloading must tear everything down (memory instances and their
 * listeners, the netlink family) without help, and loading again must
 * find every RDMA device that is already there. The rig checks the
 * kernel log for warnings and leak reports after the run.
 *
 * Uses the module file named by SACRED_KO; runs last, and leaves the
 * module loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

static int load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int unload(void)
{
	return syscall(SYS_delete_module, "sacred", O_NONBLOCK) ? -errno : 0;
}

static int count_dev(const struct sacred_dev_info *info, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

FIXTURE(module) {
	const char *ko;
	int ndev;
};

FIXTURE_SETUP(module)
{
	struct sacred_ctrl *ctrl;

	self->ko = getenv("SACRED_KO");
	if (!self->ko)
		SKIP(return, "SACRED_KO does not name the module file");
	if (sacred_ctrl_open(&ctrl))
		SKIP(return, "sacred.ko is not loaded");
	ASSERT_EQ(0, sacred_dev_list(ctrl, count_dev, &self->ndev));
	sacred_ctrl_close(ctrl);
}

FIXTURE_TEARDOWN(module)
{
	struct sacred_ctrl *ctrl;

	/* Leave the module loaded for whatever runs next. */
	if (self->ko && sacred_ctrl_open(&ctrl) == -ENOENT)
		load(self->ko);
	else if (self->ko)
		sacred_ctrl_close(ctrl);
}

TEST_F(module, unload_with_instances_then_reload_finds_devices)
{
	struct sacred_mem_params p = { .id = SACRED_MEM_ID_ANY };
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info m;
	char dev[64];
	int i, n = 0;

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	p.dev_name = dev;
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, sacred_mem_new(ctrl, &p, &m));
	sacred_ctrl_close(ctrl);

	ASSERT_EQ(0, unload());
	EXPECT_EQ(-ENOENT, sacred_ctrl_open(&ctrl));

	ASSERT_EQ(0, load(self->ko));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	ASSERT_EQ(0, sacred_dev_list(ctrl, count_dev, &n));
	EXPECT_EQ(self->ndev, n);
	EXPECT_EQ(-ENOENT, sacred_mem_get(ctrl, m.id, &m));
	sacred_ctrl_close(ctrl);
}

/*
 * Unload while a process is connected, holds write and keeps writing:
 * its connection is fenced and torn down, its MRs freed, and its next
 * operation fails cleanly.
 */
TEST_F(module, unload_with_connected_writer)
{
	struct sacred_acl_entry acl = { .process_id = 1,
					.access = SACRED_ACCESS_READ |
						  SACRED_ACCESS_WRITE };
	struct sacred_mem_params p = { .id = SACRED_MEM_ID_ANY };
	struct sacred_conn_attr attr = { .process_id = 1 };
	struct sacred_region_attr ra;
	struct sacred_region_info ri;
	struct sacred_mem_info m;
	struct sacred_ctrl *ctrl;
	struct sacred_conn *c;
	uint64_t v = 1;
	char dev[64];
	int i, ret = 0;

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	p.dev_name = dev;
	ASSERT_EQ(0, sacred_mem_new(ctrl, &p, &m));
	ASSERT_EQ(0, sacred_region_new(ctrl, m.id, SACRED_REGION_ID_ANY, 1 << 20,
				       SACRED_POLICY_STATIC, &ri));
	ASSERT_EQ(0, sacred_region_set_acl(ctrl, m.id, ri.id, &acl, 1));
	sacred_ctrl_close(ctrl);

	attr.addr = (struct sockaddr *)&m.addr;
	ASSERT_EQ(0, sacred_conn_create(&attr, &c));
	ASSERT_EQ(0, sacred_attach(c, ri.id, &ra));
	ASSERT_EQ(0, sacred_write(c, ri.id, 0, &v, sizeof(v)));

	ASSERT_EQ(0, unload());
	for (i = 0; i < 100 && !ret; i++)
		ret = sacred_write(c, ri.id, 0, &v, sizeof(v));
	EXPECT_NE(0, ret);
	sacred_conn_destroy(c);
	ASSERT_EQ(0, load(self->ko));
}

TEST_F(module, repeated_load_unload_is_clean)
{
	struct sacred_ctrl *ctrl;
	int i;

	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, unload());
		ASSERT_EQ(0, load(self->ko));
		ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
		sacred_ctrl_close(ctrl);
	}
}

/*
 * Unload does not wait for netlink users: genl_unregister_family() drains
 * running ops. A handle that resolved the family before the unload gets a
 * clean error for the stale family id, never a crash or a hang.
 */
TEST_F(module, stale_handle_after_unload_fails_cleanly)
{
	struct sacred_ctrl *ctrl;
	struct sacred_dev_info info;
	char dev[64];
	int ret;

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	ASSERT_EQ(0, unload());
	ret = sacred_dev_get(ctrl, dev, 0, &info);
	EXPECT_NE(0, ret);
	ASSERT_EQ(0, load(self->ko));
	sacred_ctrl_close(ctrl);
}

TEST_HARNESS_MAIN
