// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_conn - the data path: a process connects to a memory instance
 * with libsacred, attaches regions, reads and writes them with one-sided
 * RDMA, and is refused by the memory (not by the library) where its ACL
 * entry says so.
 *
 * Every test gets a fresh instance on the first rxe device and one 64 KiB
 * region whose ACL gives process WRITER read-write-atomic and process
 * READER read only; process STRANGER is in no ACL.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7481
#define REGION_SIZE	65536
#define WRITER		101
#define READER		102
#define STRANGER	103
#define TEST_TIMEOUT_MS	3000

FIXTURE(conn) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem;
	struct sacred_region_info region;
	struct sacred_conn *c[4];
	char dev[64];
};

static int set_acl(struct sacred_ctrl *ctrl, uint32_t mem_id,
		   uint32_t region_id, uint32_t writer_access,
		   uint32_t reader_access)
{
	struct sacred_acl_entry acl[2] = {
		{ .process_id = WRITER, .access = writer_access },
		{ .process_id = READER, .access = reader_access },
	};

	return sacred_region_set_acl(ctrl, mem_id, region_id, acl, 2);
}

FIXTURE_SETUP(conn)
{
	struct sacred_mem_params p = {
		.id = SACRED_MEM_ID_ANY,
		.cm_port = TEST_CM_PORT,
	};

	if (!st_open(_metadata, &self->ctrl, 1, 0))
		return;
	env_word("SACRED_RXE_DEVS", 0, self->dev, sizeof(self->dev));
	st_mem_new(_metadata, self->ctrl, 0, &p, &self->mem);
	ASSERT_EQ(AF_INET, self->mem.addr.ss_family);
	st_region_new(_metadata, self->ctrl, self->mem.id, REGION_SIZE,
		      SACRED_POLICY_STATIC, NULL, 0, &self->region);
	ASSERT_EQ(0, set_acl(self->ctrl, self->mem.id, self->region.id,
			     SACRED_ACCESS_ALL, SACRED_ACCESS_READ));
}

FIXTURE_TEARDOWN(conn)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(self->c); i++)
		sacred_conn_destroy(self->c[i]);
	if (self->ctrl)
		sacred_mem_del(self->ctrl, self->mem.id);
	sacred_ctrl_close(self->ctrl);
}

/* The connections' timeout: SACRED_CONN_TIMEOUT_MS stretches it (valgrind). */
static int conn_timeout_ms(void)
{
	const char *t = getenv("SACRED_CONN_TIMEOUT_MS");

	return t ? atoi(t) : TEST_TIMEOUT_MS;
}

/* Connect as @pid. */
static int connect_as(struct sacred_mem_info *mem, uint32_t pid,
		      size_t bounce, struct sacred_conn **c)
{
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&mem->addr,
		.process_id = pid,
		.timeout_ms = conn_timeout_ms(),
		.bounce_size = bounce,
	};

	return sacred_conn_create(&attr, c);
}

static void fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

TEST_F(conn, attach_write_read_round_trip)
{
	static uint8_t out[8192], in[8192];
	struct sacred_region_attr a, cached;
	uint64_t word = 0x1122334455667788ULL, back = 0;

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	EXPECT_EQ(self->mem.id, sacred_conn_mem_id(self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, &a));
	EXPECT_EQ(self->region.id, a.region_id);
	EXPECT_EQ(SACRED_ACCESS_ALL, a.access);
	EXPECT_EQ(REGION_SIZE, a.size);
	EXPECT_NE(0, a.rkey);
	ASSERT_EQ(0, sacred_conn_region(self->c[0], self->region.id,
					&cached));
	EXPECT_EQ(0, memcmp(&a, &cached, sizeof(a)));

	/* Larger than any inline send: through the bounce buffer. */
	fill(out, sizeof(out), 1);
	ASSERT_EQ(0, sacred_write(self->c[0], self->region.id, 100, out,
				  sizeof(out)));
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 100, in,
				 sizeof(in)));
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));

	/* Small: inline. */
	ASSERT_EQ(0, sacred_write(self->c[0], self->region.id, 40000, &word,
				  sizeof(word)));
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 40000, &back,
				 sizeof(back)));
	EXPECT_EQ(word, back);
	EXPECT_EQ(NULL, sacred_conn_errmsg(self->c[0]));

	/* Zero bytes at the very end: nothing to do, and in range. */
	EXPECT_EQ(0, sacred_read(self->c[0], self->region.id, REGION_SIZE,
				 NULL, 0));
}

/* With a 4 KiB bounce buffer a whole-region write takes 16 operations. */
TEST_F(conn, large_transfers_are_split)
{
	static uint8_t out[REGION_SIZE], in[REGION_SIZE];

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 4096, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	fill(out, sizeof(out), 3);
	ASSERT_EQ(0, sacred_write(self->c[0], self->region.id, 0, out,
				  sizeof(out)));
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 0, in,
				 sizeof(in)));
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));
}

TEST_F(conn, compare_and_swap_and_fetch_and_add)
{
	uint64_t old = 1, v = 0;

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	ASSERT_EQ(0, sacred_write(self->c[0], self->region.id, 64, &v,
				  sizeof(v)));

	ASSERT_EQ(0, sacred_cas(self->c[0], self->region.id, 64, 0, 42, &old));
	EXPECT_EQ(0, old);
	ASSERT_EQ(0, sacred_cas(self->c[0], self->region.id, 64, 0, 7, &old));
	EXPECT_EQ(42, old);
	ASSERT_EQ(0, sacred_faa(self->c[0], self->region.id, 64, 8, &old));
	EXPECT_EQ(42, old);
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 64, &v,
				 sizeof(v)));
	EXPECT_EQ(50, v);

	EXPECT_EQ(-EINVAL, sacred_cas(self->c[0], self->region.id, 65, 0, 1,
				      &old));
	EXPECT_EQ(-ERANGE, sacred_faa(self->c[0], self->region.id,
				      REGION_SIZE - 4, 1, &old));
}

/*
 * The reader's key is good for READ only: the memory NAKs its write, the
 * connection breaks, and the region keeps what the writer put there.
 */
TEST_F(conn, read_only_write_is_refused_by_the_memory)
{
	static uint8_t out[4096], in[4096], mine[4096];
	struct sacred_region_attr a;

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	fill(out, sizeof(out), 5);
	ASSERT_EQ(0, sacred_write(self->c[0], self->region.id, 0, out,
				  sizeof(out)));

	ASSERT_EQ(0, connect_as(&self->mem, READER, 0, &self->c[1]));
	ASSERT_EQ(0, sacred_attach(self->c[1], self->region.id, &a));
	EXPECT_EQ(SACRED_ACCESS_READ, a.access);
	ASSERT_EQ(0, sacred_read(self->c[1], self->region.id, 0, in,
				 sizeof(in)));
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));

	/* Both the inline and the bounce-buffer path go to the wire. */
	fill(mine, sizeof(mine), 9);
	EXPECT_EQ(-EACCES, sacred_write(self->c[1], self->region.id, 0, mine,
					8));
	ASSERT_NE(NULL, sacred_conn_errmsg(self->c[1]));
	TH_LOG("refused: %s", sacred_conn_errmsg(self->c[1]));
	EXPECT_EQ(-ECONNRESET, sacred_read(self->c[1], self->region.id, 0, in,
					   sizeof(in)));
	EXPECT_EQ(-ECONNRESET, sacred_attach(self->c[1], self->region.id,
					     NULL));
	ASSERT_EQ(0, sacred_conn_reconnect(self->c[1]));
	EXPECT_EQ(-EACCES, sacred_write(self->c[1], self->region.id, 0, mine,
					sizeof(mine)));

	memset(in, 0, sizeof(in));
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 0, in,
				 sizeof(in)));
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));
}

TEST_F(conn, reconnect_after_refused_write)
{
	struct sacred_region_attr before, after;
	uint64_t v = 0xdead, w = 0;

	ASSERT_EQ(0, connect_as(&self->mem, READER, 0, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, &before));
	EXPECT_EQ(-EACCES, sacred_write(self->c[0], self->region.id, 8, &v,
					sizeof(v)));
	EXPECT_EQ(-ECONNRESET, sacred_read(self->c[0], self->region.id, 8, &w,
					   sizeof(w)));

	/* At once: the instance may still hold the old connection. */
	ASSERT_EQ(0, sacred_conn_reconnect(self->c[0]));
	EXPECT_EQ(NULL, sacred_conn_errmsg(self->c[0]));
	EXPECT_EQ(self->mem.id, sacred_conn_mem_id(self->c[0]));
	/* Re-attached by the reconnect, without asking. */
	ASSERT_EQ(0, sacred_conn_region(self->c[0], self->region.id, &after));
	EXPECT_EQ(SACRED_ACCESS_READ, after.access);
	EXPECT_EQ(before.size, after.size);
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 8, &w,
				 sizeof(w)));
	EXPECT_EQ(0, w);

	/* And again, on a healthy connection. */
	ASSERT_EQ(0, sacred_conn_reconnect(self->c[0]));
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 8, &w,
				 sizeof(w)));
}

/*
 * A region deleted and made again under its id, while the process was
 * away, is not taken back by a reconnect: its bytes are not the ones the
 * process knew (a memory that lost them would otherwise rejoin a quorum
 * silently). The process learns the new one only when it attaches again.
 */
TEST_F(conn, region_made_again_is_not_attached_back)
{
	struct sacred_perm_req req = { .access = SACRED_ACCESS_READ };
	struct sacred_region_attr before, after;
	struct sacred_region_info ri;
	uint64_t v = 0x5ac7ed, w = 1;

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, &before));
	EXPECT_EQ(self->region.tag, before.tag);
	ASSERT_EQ(0, sacred_write(self->c[0], self->region.id, 8, &v,
				  sizeof(v)));
	/* Deleted (the grant revoked: the connection fenced), made again. */
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem.id,
				       self->region.id));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       self->region.id, REGION_SIZE,
				       SACRED_POLICY_STATIC, &ri));
	ASSERT_EQ(0, set_acl(self->ctrl, self->mem.id, ri.id, SACRED_ACCESS_ALL,
			     SACRED_ACCESS_READ));
	ASSERT_NE(before.tag, ri.tag);

	ASSERT_EQ(0, sacred_conn_reconnect(self->c[0]));
	EXPECT_EQ(-ESTALE, sacred_conn_region(self->c[0], ri.id, &after));
	EXPECT_EQ(-ESTALE, sacred_read(self->c[0], ri.id, 8, &w, sizeof(w)));
	/* Nor does a changePermission take it back (nothing is sent). */
	req.region_id = ri.id;
	EXPECT_EQ(-ESTALE, sacred_change_perm(self->c[0], &req, NULL));
	EXPECT_EQ(-ESTALE, sacred_conn_region(self->c[0], ri.id, &after));
	/* Asked for, it is attached: the new one, zeroed. */
	ASSERT_EQ(0, sacred_attach(self->c[0], ri.id, &after));
	EXPECT_EQ(ri.tag, after.tag);
	ASSERT_EQ(0, sacred_read(self->c[0], ri.id, 8, &w, sizeof(w)));
	EXPECT_EQ(0, w);
}

TEST_F(conn, unknown_region_is_enoent)
{
	uint64_t v = 0;

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	EXPECT_EQ(-ENOENT, sacred_attach(self->c[0], self->region.id + 1000,
					 NULL));
	/* Not attached yet: refused locally, the connection stays up. */
	EXPECT_EQ(-ENOENT, sacred_read(self->c[0], self->region.id, 0, &v,
				       sizeof(v)));
	EXPECT_EQ(-ENOENT, sacred_write(self->c[0], self->region.id, 0, &v,
					sizeof(v)));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	EXPECT_EQ(0, sacred_read(self->c[0], self->region.id, 0, &v,
				 sizeof(v)));
	EXPECT_EQ(0, sacred_detach(self->c[0], self->region.id));
	EXPECT_EQ(-ENOENT, sacred_read(self->c[0], self->region.id, 0, &v,
				       sizeof(v)));
	EXPECT_EQ(-ENOENT, sacred_detach(self->c[0], self->region.id));
}

TEST_F(conn, stranger_is_not_a_member)
{
	ASSERT_EQ(0, connect_as(&self->mem, STRANGER, 0, &self->c[0]));
	EXPECT_EQ(-EACCES, sacred_attach(self->c[0], self->region.id, NULL));
	/* A refusal in a reply leaves the connection usable. */
	EXPECT_EQ(-ENOENT, sacred_attach(self->c[0], self->region.id + 1,
					 NULL));
}

TEST_F(conn, same_process_twice_is_eaddrinuse)
{
	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	EXPECT_EQ(-EADDRINUSE, connect_as(&self->mem, WRITER, 0,
					  &self->c[1]));
	EXPECT_EQ(NULL, self->c[1]);
	/* Another process is welcome. */
	EXPECT_EQ(0, connect_as(&self->mem, READER, 0, &self->c[2]));
}

TEST_F(conn, no_instance_on_the_port_fails_fast)
{
	struct sacred_mem_info none = self->mem;
	struct sockaddr_in *sin = (struct sockaddr_in *)&none.addr;
	struct timespec t0;
	int ret;

	sin->sin_port = htons(TEST_CM_PORT + 50);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = connect_as(&none, WRITER, 0, &self->c[0]);
	EXPECT_NE(0, ret);
	EXPECT_EQ(NULL, self->c[0]);
	TH_LOG("no listener: %d (%s) after %.3f s", ret, strerror(-ret),
	       elapsed_s(&t0));
	EXPECT_EQ(-ECONNREFUSED, ret);
	if (!getenv("SACRED_CONN_TIMEOUT_MS"))
		EXPECT_GT(TEST_TIMEOUT_MS / 1000.0 + 2, elapsed_s(&t0));
}

TEST_F(conn, deleted_instance_refuses)
{
	ASSERT_EQ(0, sacred_mem_del(self->ctrl, self->mem.id));
	EXPECT_EQ(-ECONNREFUSED, connect_as(&self->mem, WRITER, 0,
					    &self->c[0]));
}

TEST_F(conn, out_of_range_is_erange_without_the_wire)
{
	uint8_t buf[16] = {};

	ASSERT_EQ(0, connect_as(&self->mem, READER, 0, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	EXPECT_EQ(-ERANGE, sacred_read(self->c[0], self->region.id,
				       REGION_SIZE - 8, buf, 16));
	EXPECT_EQ(-ERANGE, sacred_read(self->c[0], self->region.id,
				       REGION_SIZE + 1, buf, 0));
	EXPECT_EQ(-ERANGE, sacred_read(self->c[0], self->region.id,
				       UINT64_MAX, buf, 2));
	/* Would be refused by the memory: -ERANGE means it never went out. */
	EXPECT_EQ(-ERANGE, sacred_write(self->c[0], self->region.id,
					REGION_SIZE, buf, 1));
	EXPECT_NE(NULL, sacred_conn_errmsg(self->c[0]));
	/* Not broken. */
	EXPECT_EQ(0, sacred_read(self->c[0], self->region.id,
				 REGION_SIZE - 16, buf, 16));
}

TEST_F(conn, static_region_refuses_change_perm)
{
	struct sacred_perm_req req = {
		.region_id = self->region.id,
		.access = SACRED_ACCESS_READ,
	};
	struct sacred_perm_result res;

	ASSERT_EQ(0, connect_as(&self->mem, READER, 0, &self->c[0]));
	EXPECT_EQ(-EPERM, sacred_change_perm(self->c[0], &req, &res));
	EXPECT_EQ(SACRED_ST_REFUSED, res.status);
	EXPECT_EQ(SACRED_REFUSE_STATIC, res.reason);
	req.access = SACRED_ACCESS_WRITE;
	EXPECT_EQ(-EINVAL, sacred_change_perm(self->c[0], &req, &res));
	/* Still usable. */
	EXPECT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
}

/*
 * An admin takes write away from a process that is attached: its next
 * write never lands. The memory fences its connection, so the failure is
 * -EACCES or -ECONNRESET; after a reconnect it holds read only.
 */
TEST_F(conn, revoked_writer_cannot_write)
{
	uint64_t v = 1, w = 0;
	struct sacred_region_attr a;
	int ret;

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	ASSERT_EQ(0, sacred_write(self->c[0], self->region.id, 0, &v,
				  sizeof(v)));

	ASSERT_EQ(0, set_acl(self->ctrl, self->mem.id, self->region.id,
			     SACRED_ACCESS_READ, SACRED_ACCESS_READ));
	v = 2;
	ret = sacred_write(self->c[0], self->region.id, 0, &v, sizeof(v));
	TH_LOG("write after revoke: %d: %s", ret,
	       sacred_conn_errmsg(self->c[0]));
	EXPECT_TRUE(ret == -EACCES || ret == -ECONNRESET);

	ASSERT_EQ(0, sacred_conn_reconnect(self->c[0]));
	ASSERT_EQ(0, sacred_conn_region(self->c[0], self->region.id, &a));
	EXPECT_EQ(SACRED_ACCESS_READ, a.access);
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 0, &w,
				 sizeof(w)));
	EXPECT_EQ(1, w);
}

/*
 * Protected Memory Paxos in miniature: on an exclusive-writer region each
 * member starts with read; whoever asks for write gets it and the other
 * writer is demoted before the answer.
 */
TEST_F(conn, exclusive_writer_demotes_the_other_writer)
{
	struct sacred_perm_req req = { .access = SACRED_ACCESS_READ |
						 SACRED_ACCESS_WRITE };
	struct sacred_region_info r;
	struct sacred_perm_result res;
	struct sacred_region_attr a;
	uint64_t v = 7, w = 0;
	int ret;

	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, 4096,
				       SACRED_POLICY_EXCLUSIVE_WRITER, &r));
	ASSERT_EQ(0, set_acl(self->ctrl, self->mem.id, r.id,
			     SACRED_ACCESS_ALL, SACRED_ACCESS_ALL));
	req.region_id = r.id;

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	ASSERT_EQ(0, connect_as(&self->mem, READER, 0, &self->c[1]));
	ASSERT_EQ(0, sacred_attach(self->c[0], r.id, &a));
	EXPECT_EQ(SACRED_ACCESS_READ, a.access);

	ASSERT_EQ(0, sacred_change_perm(self->c[0], &req, &res));
	EXPECT_EQ(SACRED_ST_OK, res.status);
	EXPECT_EQ(req.access, res.region.access);
	EXPECT_LT(a.epoch, res.region.epoch);
	ASSERT_EQ(0, sacred_write(self->c[0], r.id, 0, &v, sizeof(v)));

	ASSERT_EQ(0, sacred_change_perm(self->c[1], &req, &res));
	v = 8;
	ret = sacred_write(self->c[0], r.id, 0, &v, sizeof(v));
	EXPECT_TRUE(ret == -EACCES || ret == -ECONNRESET);
	ASSERT_EQ(0, sacred_read(self->c[1], r.id, 0, &w, sizeof(w)));
	EXPECT_EQ(7, w);

	ASSERT_EQ(0, sacred_conn_reconnect(self->c[0]));
	ASSERT_EQ(0, sacred_conn_region(self->c[0], r.id, &a));
	EXPECT_EQ(SACRED_ACCESS_READ, a.access);
}

/* The instance as MEM_GET reports it, once its connections number @conns. */
static int mem_when_conns(struct sacred_ctrl *ctrl, uint32_t id,
			  uint32_t conns, struct sacred_mem_info *m)
{
	double end = now_s() + 5;
	int ret;

	do {
		ret = sacred_mem_get(ctrl, id, m);
		if (ret || m->nr_conns == conns)
			return ret;
		usleep(10000);
	} while (now_s() < end);
	return -ETIMEDOUT;
}

/*
 * MEM_GET's object counts and its byte count of the module's own memory
 * follow every object an instance gains and loses, back to the same byte.
 */
TEST_F(conn, kernel_memory_is_counted_per_object)
{
	struct sacred_mem_info m0, m1, m2, m3, m4, m5, m6, empty;
	struct sacred_mem_params p = {
		.id = SACRED_MEM_ID_ANY,
		.dev_name = self->dev,
		.cm_port = TEST_CM_PORT + 1,
	};
	struct sacred_region_info other;

	/* An instance without regions or processes: the instance alone. */
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &empty));
	ASSERT_EQ(0, sacred_mem_del(self->ctrl, empty.id));
	EXPECT_LT(0, empty.meta_bytes);

	ASSERT_EQ(0, sacred_mem_get(self->ctrl, self->mem.id, &m0));
	/* Its region and the region's two ACL entries on top. */
	EXPECT_LT(empty.meta_bytes, m0.meta_bytes);
	EXPECT_EQ(0, m0.nr_peers);
	EXPECT_EQ(0, m0.nr_conns);
	EXPECT_EQ(0, m0.nr_mrs);
	EXPECT_EQ(0, m0.mr_pages);

	/* A process: its peer, its connection and message buffer. */
	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	ASSERT_EQ(0, mem_when_conns(self->ctrl, self->mem.id, 1, &m1));
	EXPECT_EQ(1, m1.nr_peers);
	EXPECT_EQ(0, m1.nr_mrs);
	EXPECT_LT(m0.meta_bytes + 256, m1.meta_bytes);

	/* Its grant: one MR over the region's pages, 4 KiB to 64 KiB each. */
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	ASSERT_EQ(0, sacred_mem_get(self->ctrl, self->mem.id, &m2));
	EXPECT_EQ(1, m2.nr_mrs);
	EXPECT_LE(1, m2.mr_pages);
	EXPECT_GE(REGION_SIZE / 4096, m2.mr_pages);
	EXPECT_LT(m1.meta_bytes, m2.meta_bytes);
	TH_LOG("instance + region: %llu B; + process: %llu B; + grant: %llu B",
	       (unsigned long long)m0.meta_bytes,
	       (unsigned long long)(m1.meta_bytes - m0.meta_bytes),
	       (unsigned long long)(m2.meta_bytes - m1.meta_bytes));

	/* Gone: the connection; the peer and its grant stay. */
	sacred_conn_destroy(self->c[0]);
	self->c[0] = NULL;
	ASSERT_EQ(0, mem_when_conns(self->ctrl, self->mem.id, 0, &m3));
	EXPECT_EQ(1, m3.nr_peers);
	EXPECT_EQ(1, m3.nr_mrs);
	EXPECT_GT(m2.meta_bytes, m3.meta_bytes);
	EXPECT_LT(m0.meta_bytes, m3.meta_bytes);

	/* Back with the same objects: to the byte. */
	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	ASSERT_EQ(0, mem_when_conns(self->ctrl, self->mem.id, 1, &m4));
	EXPECT_EQ(m2.meta_bytes, m4.meta_bytes);
	EXPECT_EQ(m2.mr_pages, m4.mr_pages);

	/* A region made and deleted leaves no trace. */
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, 16 << 20,
				       SACRED_POLICY_STATIC, &other));
	ASSERT_EQ(0, sacred_mem_get(self->ctrl, self->mem.id, &m5));
	EXPECT_LT(m4.meta_bytes, m5.meta_bytes);
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem.id, other.id));

	/*
	 * The region with the grant: its MR and the grant go with it, and
	 * the connection, fenced because it could use the MR, soon after.
	 */
	ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem.id,
				       self->region.id));
	ASSERT_EQ(0, mem_when_conns(self->ctrl, self->mem.id, 0, &m6));
	EXPECT_EQ(0, m6.nr_mrs);
	EXPECT_EQ(0, m6.mr_pages);
	EXPECT_EQ(1, m6.nr_peers);
	/* What is left: an empty instance's bytes and the peer's. */
	EXPECT_EQ(empty.meta_bytes + (m3.meta_bytes - m0.meta_bytes) -
		  (m2.meta_bytes - m1.meta_bytes), m6.meta_bytes);
}

/* sacred_conn_reconnect_async() until it is done; the longest call. */
static int reconnect_async_until_done(struct sacred_conn *c, double limit_s,
				      double *longest_s, unsigned int *calls)
{
	double end = now_s() + limit_s, t;
	int ret;

	*longest_s = 0;
	*calls = 0;
	do {
		t = now_s();
		ret = sacred_conn_reconnect_async(c);
		t = now_s() - t;
		if (t > *longest_s)
			*longest_s = t;
		++*calls;
		if (ret == -EINPROGRESS)
			usleep(2000);
	} while (ret == -EINPROGRESS && now_s() < end);
	return ret;
}

/*
 * A memory that does not answer costs a reconnect in steps no wait: each
 * call is over at once, the attempt ends by the timeout, and the same
 * connection gets through once the instance is back.
 */
TEST_F(conn, reconnect_async_never_waits)
{
	struct sacred_mem_params p = {
		.id = self->mem.id,
		.dev_name = self->dev,
		.cm_port = TEST_CM_PORT,
	};
	uint64_t word = 0x5ac5ed, back = 0;
	struct sacred_region_info region;
	struct sacred_region_attr ra;
	struct silent sl = {};
	unsigned int calls;
	double longest, t0;
	int ret;

	ASSERT_EQ(0, connect_as(&self->mem, WRITER, 0, &self->c[0]));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, NULL));
	ASSERT_EQ(0, sacred_mem_del(self->ctrl, self->mem.id));
	ASSERT_EQ(0, listen_silent(&sl, &self->mem.addr));

	t0 = now_s();
	ret = reconnect_async_until_done(self->c[0], 3 * conn_timeout_ms() / 1e3,
					 &longest, &calls);
	TH_LOG("unanswered: %d (%s) after %.3f s, %u calls, the longest %.1f ms",
	       ret, strerror(-ret), now_s() - t0, calls, longest * 1e3);
	EXPECT_EQ(-ETIMEDOUT, ret);
	EXPECT_TRUE(sacred_conn_broken(self->c[0]));
	EXPECT_LT(10, calls);
	if (!getenv("SACRED_CONN_TIMEOUT_MS"))
		EXPECT_GT(0.5, longest);
	EXPECT_LE(1, close_silent(&sl));

	/*
	 * The instance is back, with its region made again: the same
	 * connection comes back too, without the region (a new one, another
	 * tag) until it is attached again.
	 */
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &self->mem));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       self->region.id, REGION_SIZE,
				       SACRED_POLICY_STATIC, &region));
	ASSERT_EQ(0, set_acl(self->ctrl, self->mem.id, self->region.id,
			     SACRED_ACCESS_ALL, SACRED_ACCESS_READ));
	ret = reconnect_async_until_done(self->c[0], 3 * conn_timeout_ms() / 1e3,
					 &longest, &calls);
	TH_LOG("back: %d after %u calls, the longest %.1f ms", ret, calls,
	       longest * 1e3);
	ASSERT_EQ(0, ret);
	EXPECT_FALSE(sacred_conn_broken(self->c[0]));
	EXPECT_EQ(-ESTALE, sacred_conn_region(self->c[0], self->region.id,
					      &ra));
	ASSERT_EQ(0, sacred_attach(self->c[0], self->region.id, &ra));
	EXPECT_EQ(region.tag, ra.tag);
	ASSERT_EQ(0, sacred_write(self->c[0], self->region.id, 0, &word,
				  sizeof(word)));
	ASSERT_EQ(0, sacred_read(self->c[0], self->region.id, 0, &back,
				 sizeof(back)));
	EXPECT_EQ(word, back);
}

TEST_HARNESS_MAIN
