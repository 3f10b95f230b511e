// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_dev - the module follows RDMA devices as `rdma` sees them.
 *
 * DEV_GET must list exactly the devices `rdma dev` lists, with the same
 * indexes and port states, and must follow `rdma link add/del` live: a
 * device appears when it is added, and when it is deleted it disappears
 * together with every memory instance that lived on it.
 */
#include <errno.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_NETDEV	"sacst0"
#define TEST_RXE	"rxetst0"
#define TEST_ADDR	"192.0.2.200"

struct seen {
	int n;
	struct sacred_dev_info dev[32];
};

static int collect(const struct sacred_dev_info *info, void *arg)
{
	struct seen *s = arg;

	if (s->n < 32)
		s->dev[s->n] = *info;
	s->n++;
	return 0;
}

/*
 * Read `rdma -j dev show` / `rdma -j link show` and call @fn for each
 * object with its "ifindex" and "ifname" (and "port", "state").
 */
struct rdma_obj {
	int ifindex;
	char ifname[64];
	int port;
	char state[32];
};

static int rdma_json(const char *cmd, struct rdma_obj *objs, int max)
{
	static char buf[65536];
	char *p = buf;
	size_t len;
	FILE *f;
	int n = 0;

	f = popen(cmd, "r");
	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = 0;
	if (pclose(f))
		return -1;

	while ((p = strstr(p, "\"ifindex\":")) && n < max) {
		struct rdma_obj *o = &objs[n++];
		char *q;

		memset(o, 0, sizeof(*o));
		o->ifindex = atoi(p + strlen("\"ifindex\":"));
		q = strstr(p, "\"ifname\":\"");
		if (q)
			sscanf(q + strlen("\"ifname\":\""), "%63[^\"]", o->ifname);
		q = strstr(p, "\"port\":");
		if (q)
			o->port = atoi(q + strlen("\"port\":"));
		q = strstr(p, "\"state\":\"");
		if (q)
			sscanf(q + strlen("\"state\":\""), "%31[^\"]", o->state);
		p++;
	}
	return n;
}

FIXTURE(dev) {
	struct sacred_ctrl *ctrl;
};

FIXTURE_SETUP(dev)
{
	st_open(_metadata, &self->ctrl, 0, 0);
}

FIXTURE_TEARDOWN(dev)
{
	sacred_ctrl_close(self->ctrl);
	sh("rdma link del " TEST_RXE " 2>/dev/null");
	sh("ip link del " TEST_NETDEV " 2>/dev/null");
}

TEST_F(dev, dump_matches_rdma_dev)
{
	struct rdma_obj objs[32];
	struct seen s = {};
	int n, i, j;

	ASSERT_EQ(0, sacred_dev_list(self->ctrl, collect, &s));
	n = rdma_json("rdma -j dev show", objs, 32);
	ASSERT_LE(1, n) TH_LOG("no RDMA device: is the VM rig running?");
	ASSERT_EQ(n, s.n);
	for (i = 0; i < n; i++) {
		for (j = 0; j < s.n; j++)
			if (s.dev[j].index == (uint32_t)objs[i].ifindex)
				break;
		ASSERT_LT(j, s.n) TH_LOG("%s missing", objs[i].ifname);
		EXPECT_STREQ(objs[i].ifname, s.dev[j].name);
	}
}

TEST_F(dev, port_state_matches_rdma_link)
{
	struct rdma_obj objs[32];
	struct sacred_dev_info info;
	int n, i;

	n = rdma_json("rdma -j link show", objs, 32);
	ASSERT_LE(1, n);
	for (i = 0; i < n; i++) {
		const struct sacred_port_info *p;

		ASSERT_EQ(0, sacred_dev_get(self->ctrl, objs[i].ifname, 0,
					    &info));
		ASSERT_LE(objs[i].port, (int)info.nr_port_info);
		p = &info.ports[objs[i].port - 1];
		EXPECT_EQ((uint32_t)objs[i].port, p->index);
		EXPECT_STREQ(objs[i].state, sacred_port_state_str(p->state));
	}
}

TEST_F(dev, get_by_index_and_by_name_agree)
{
	struct sacred_dev_info a, b;
	struct seen s = {};

	ASSERT_EQ(0, sacred_dev_list(self->ctrl, collect, &s));
	ASSERT_LE(1, s.n);
	ASSERT_EQ(0, sacred_dev_get(self->ctrl, NULL, s.dev[0].index, &a));
	ASSERT_EQ(0, sacred_dev_get(self->ctrl, a.name, 0, &b));
	EXPECT_EQ(a.index, b.index);
	EXPECT_EQ(a.node_guid, b.node_guid);
	EXPECT_EQ(a.num_ports, b.num_ports);
}

TEST_F(dev, follows_rdma_link_add_and_del)
{
	struct sacred_mem_params p = { .id = SACRED_MEM_ID_ANY };
	struct sacred_dev_info info;
	struct sacred_mem_info mem;

	ASSERT_EQ(-ENODEV, sacred_dev_get(self->ctrl, TEST_RXE, 0, &info));

	ASSERT_EQ(0, sh("ip link add " TEST_NETDEV " type dummy && "
			"ip link set " TEST_NETDEV " up && "
			"ip addr add " TEST_ADDR "/32 dev " TEST_NETDEV));
	ASSERT_EQ(0, sh("rdma link add " TEST_RXE " type rxe netdev "
			TEST_NETDEV));

	ASSERT_EQ(0, sacred_dev_get(self->ctrl, TEST_RXE, 0, &info));
	EXPECT_STREQ(TEST_RXE, info.name);
	ASSERT_LE(1, info.nr_port_info);
	EXPECT_STREQ(TEST_NETDEV, info.ports[0].netdev);
	EXPECT_EQ(SACRED_LINK_ETHERNET, info.ports[0].link_layer);

	/* A memory instance on the device dies with it. */
	p.dev_name = TEST_RXE;
	p.cm_port = 0;
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &mem));
	ASSERT_EQ(0, sacred_mem_get(self->ctrl, mem.id, &mem));

	ASSERT_EQ(0, sh("rdma link del " TEST_RXE));
	EXPECT_EQ(-ENODEV, sacred_dev_get(self->ctrl, TEST_RXE, 0, &info));
	EXPECT_EQ(-ENOENT, sacred_mem_get(self->ctrl, mem.id, &mem));
}

/*
 * The device goes away under a connected process that holds write: its
 * connection is drained and torn down with the instance, its MRs freed,
 * and its next operation fails cleanly (the rig checks the kernel log).
 *
 * The process is a child: rxe cannot disassociate a user context, so
 * `rdma link del` waits until every process with the device open exits,
 * and the child exits once it has seen its write fail.
 */
TEST_F(dev, link_del_under_a_connected_writer)
{
	struct sacred_acl_entry acl = { .process_id = 1,
					.access = SACRED_ACCESS_READ |
						  SACRED_ACCESS_WRITE };
	struct sacred_mem_params p = { .id = SACRED_MEM_ID_ANY,
				       .dev_name = TEST_RXE };
	struct sacred_region_info ri;
	struct sacred_mem_info mem;
	int pipefd[2], st;
	char ready;
	pid_t pid;

	ASSERT_EQ(0, sh("ip link add " TEST_NETDEV " type dummy && "
			"ip link set " TEST_NETDEV " up && "
			"ip addr add " TEST_ADDR "/32 dev " TEST_NETDEV));
	ASSERT_EQ(0, sh("rdma link add " TEST_RXE " type rxe netdev "
			TEST_NETDEV));
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &mem));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, mem.id,
				       SACRED_REGION_ID_ANY, 65536,
				       SACRED_POLICY_STATIC, &ri));
	ASSERT_EQ(0, sacred_region_set_acl(self->ctrl, mem.id, ri.id, &acl,
					   1));
	ASSERT_EQ(0, pipe(pipefd));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct sacred_conn_attr attr = {
			.addr = (struct sockaddr *)&mem.addr,
			.process_id = 1,
		};
		struct sacred_region_attr ra;
		struct sacred_conn *c;
		uint64_t v = 1;
		int i;

		if (sacred_conn_create(&attr, &c) ||
		    sacred_attach(c, ri.id, &ra) ||
		    sacred_write(c, ri.id, 0, &v, sizeof(v)))
			_exit(2);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(3);
		for (i = 0; i < 1000; i++) {
			if (sacred_write(c, ri.id, 0, &v, sizeof(v)))
				_exit(0);	/* failed cleanly */
			usleep(10000);
		}
		_exit(4);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &ready, 1));
	close(pipefd[0]);

	ASSERT_EQ(0, sh("rdma link del " TEST_RXE));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(-ENOENT, sacred_mem_get(self->ctrl, mem.id, &mem));
}

TEST_HARNESS_MAIN
