// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_mem - memory instances: create, look up, dump, destroy.
 *
 * An instance is a real rdma_cm listener on its device: the tests check
 * the address it chose, that a second listener on the same address is
 * refused, that an address of another device is refused, that a dump of
 * many instances spans several netlink messages without loss, and that a
 * process reaching the listener with librdmacm gets an answer.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_CM_PORT 7471

FIXTURE(mem) {
	struct sacred_ctrl *ctrl;
	char dev[64];
	char addr[64];
	char addr2[64];
};

FIXTURE_SETUP(mem)
{
	if (!st_open(_metadata, &self->ctrl, 1, 2))
		return;
	env_word("SACRED_RXE_DEVS", 0, self->dev, sizeof(self->dev));
	env_word("SACRED_RXE_ADDRS", 0, self->addr, sizeof(self->addr));
	env_word("SACRED_RXE_ADDRS", 1, self->addr2, sizeof(self->addr2));
}

struct ids {
	int n;
	uint32_t id[1024];
};

static int collect_id(const struct sacred_mem_info *info, void *arg)
{
	struct ids *ids = arg;

	if (ids->n < 1024)
		ids->id[ids->n++] = info->id;
	return 0;
}

/* Delete every instance (a callback must not call into the same handle). */
FIXTURE_TEARDOWN(mem)
{
	struct ids ids = {};
	int i;

	if (self->ctrl && !sacred_mem_list(self->ctrl, collect_id, &ids))
		for (i = 0; i < ids.n; i++)
			sacred_mem_del(self->ctrl, ids.id[i]);
	sacred_ctrl_close(self->ctrl);
}

static void params(struct sacred_mem_params *p, const char *dev,
		   const char *addr, uint16_t port)
{
	memset(p, 0, sizeof(*p));
	p->id = SACRED_MEM_ID_ANY;
	p->dev_name = dev;
	p->cm_port = port;
	if (addr) {
		struct sockaddr_in *sin = (void *)&p->addr;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, addr, &sin->sin_addr);
	}
}

static const char *addr_str(const struct sacred_mem_info *m, char *buf)
{
	const struct sockaddr_in *sin = (const void *)&m->addr;

	return inet_ntop(AF_INET, &sin->sin_addr, buf, INET_ADDRSTRLEN);
}

TEST_F(mem, add_on_default_address_and_show)
{
	struct sacred_mem_params p;
	struct sacred_mem_info m, g;
	char buf[INET_ADDRSTRLEN];

	params(&p, self->dev, NULL, TEST_CM_PORT);
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &m));
	EXPECT_STREQ(self->dev, m.dev_name);
	EXPECT_EQ(1, m.port);
	EXPECT_EQ(AF_INET, m.addr.ss_family);
	EXPECT_STREQ(self->addr, addr_str(&m, buf));
	EXPECT_EQ(TEST_CM_PORT,
		  ntohs(((struct sockaddr_in *)&m.addr)->sin_port));
	EXPECT_EQ(SACRED_MEM_UP, m.state);

	ASSERT_EQ(0, sacred_mem_get(self->ctrl, m.id, &g));
	EXPECT_EQ(m.id, g.id);
	EXPECT_STREQ(m.dev_name, g.dev_name);
	EXPECT_EQ(0, memcmp(&m.addr, &g.addr, sizeof(struct sockaddr_in)));

	ASSERT_EQ(0, sacred_mem_del(self->ctrl, m.id));
	EXPECT_EQ(-ENOENT, sacred_mem_get(self->ctrl, m.id, &g));
	EXPECT_EQ(-ENOENT, sacred_mem_del(self->ctrl, m.id));
}

/*
 * Ids go round, as ifindex does: the instance made after a deletion does
 * not get the deleted one's id, so whoever still holds that id (a second
 * "memory del", a test that makes its instance again under its old id)
 * meets nobody else's instance. An id asked for by name is still given.
 */
TEST_F(mem, deleted_id_is_not_given_again)
{
	struct sacred_mem_params p;
	struct sacred_mem_info a, b, c;

	params(&p, self->dev, NULL, TEST_CM_PORT);
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &a));
	ASSERT_EQ(0, sacred_mem_del(self->ctrl, a.id));
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &b));
	EXPECT_NE(a.id, b.id);
	EXPECT_EQ(-ENOENT, sacred_mem_del(self->ctrl, a.id));
	EXPECT_EQ(0, sacred_mem_get(self->ctrl, b.id, &c));

	p.id = a.id;
	p.cm_port = TEST_CM_PORT + 1;
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &c));
	EXPECT_EQ(a.id, c.id);
}

TEST_F(mem, explicit_id_is_kept_and_duplicate_refused)
{
	struct sacred_mem_params p;
	struct sacred_mem_info m;

	params(&p, self->dev, NULL, TEST_CM_PORT);
	p.id = 42;
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &m));
	EXPECT_EQ(42, m.id);

	p.cm_port = TEST_CM_PORT + 1;
	EXPECT_EQ(-EEXIST, sacred_mem_new(self->ctrl, &p, &m));
	EXPECT_STREQ("memory instance id in use",
		     sacred_ctrl_errmsg(self->ctrl));
}

TEST_F(mem, same_address_twice_is_refused)
{
	struct sacred_mem_params p;
	struct sacred_mem_info m;

	params(&p, self->dev, self->addr, TEST_CM_PORT);
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &m));
	EXPECT_EQ(-EADDRINUSE, sacred_mem_new(self->ctrl, &p, &m));
	EXPECT_NE(NULL, sacred_ctrl_errmsg(self->ctrl));
}

TEST_F(mem, address_of_another_device_is_refused)
{
	struct sacred_mem_params p;
	struct sacred_mem_info m;

	params(&p, self->dev, self->addr2, TEST_CM_PORT);
	EXPECT_EQ(-EADDRNOTAVAIL, sacred_mem_new(self->ctrl, &p, &m));
	EXPECT_STREQ("the address does not belong to this device and port",
		     sacred_ctrl_errmsg(self->ctrl));
}

TEST_F(mem, missing_port_is_refused)
{
	struct sacred_mem_params p;
	struct sacred_mem_info m;

	params(&p, self->dev, NULL, TEST_CM_PORT);
	p.port = 2;
	EXPECT_EQ(-EINVAL, sacred_mem_new(self->ctrl, &p, &m));
	EXPECT_STREQ("no such port on this device",
		     sacred_ctrl_errmsg(self->ctrl));
}

TEST_F(mem, port_zero_picks_a_free_port)
{
	struct sacred_mem_params p;
	struct sacred_mem_info a, b;

	params(&p, self->dev, NULL, 0);
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &a));
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &b));
	EXPECT_NE(0, ntohs(((struct sockaddr_in *)&a.addr)->sin_port));
	EXPECT_NE(((struct sockaddr_in *)&a.addr)->sin_port,
		  ((struct sockaddr_in *)&b.addr)->sin_port);
}

struct count {
	int n;
	uint32_t last;
	int ordered;
};

static int count_cb(const struct sacred_mem_info *info, void *arg)
{
	struct count *c = arg;

	if (c->n && info->id <= c->last)
		c->ordered = 0;
	c->last = info->id;
	c->n++;
	return 0;
}

/* 300 instances need several dump messages: none lost, none repeated. */
TEST_F(mem, dump_of_many_instances_is_complete)
{
	struct count c = { .ordered = 1 };
	struct sacred_mem_params p;
	struct sacred_mem_info m;
	int i;

	params(&p, self->dev, NULL, 0);
	for (i = 0; i < 300; i++)
		ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &m));
	ASSERT_EQ(0, sacred_mem_list(self->ctrl, count_cb, &c));
	EXPECT_EQ(300, c.n);
	EXPECT_TRUE(c.ordered);
}

/*
 * The listener is real: a librdmacm client reaches it and gets an answer
 * (a refusal, until peers are served) instead of a timeout.
 */
TEST_F(mem, listener_answers_rdma_cm_connect)
{
	struct rdma_addrinfo hints = {}, *res;
	struct ibv_qp_init_attr attr = {};
	struct sacred_mem_params p;
	struct sacred_mem_info m;
	struct rdma_cm_id *id;
	char port[16];

	params(&p, self->dev, NULL, TEST_CM_PORT);
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &m));

	snprintf(port, sizeof(port), "%d", TEST_CM_PORT);
	hints.ai_port_space = RDMA_PS_TCP;
	ASSERT_EQ(0, rdma_getaddrinfo(self->addr, port, &hints, &res));
	attr.cap.max_send_wr = attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	ASSERT_EQ(0, rdma_create_ep(&id, res, NULL, &attr));
	rdma_freeaddrinfo(res);

	EXPECT_NE(0, rdma_connect(id, NULL));
	EXPECT_EQ(ECONNREFUSED, errno);
	rdma_destroy_ep(id);
}

TEST_HARNESS_MAIN
