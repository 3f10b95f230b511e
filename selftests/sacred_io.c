// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_io - the asynchronous data path: sacred_io_post(), _poll(),
 * _wait() on rxe, on one memory and on three at once, with the failures
 * the layers above must see precisely: a writer revoked in the middle of
 * a batch, a memory brought down under operations in flight, and a
 * connection that reconnects by itself when asked to.
 *
 * Every test gets one instance per rxe device (up to three), each with
 * one 64 KiB exclusive-writer region whose ACL gives processes A and B
 * read-write-atomic; A asks for write permission first.
 */
#include <errno.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7491
#define REGION_SIZE	(256 * 1024)
#define PROC_A		201
#define PROC_B		202
#define NR_MEMS_MAX	3
#define TEST_TIMEOUT_MS	3000

FIXTURE(io) {
	struct sacred_ctrl *ctrl;
	unsigned int nr_mems;
	struct sacred_mem_info mem[NR_MEMS_MAX];
	uint32_t region[NR_MEMS_MAX];
	struct sacred_conn *a[NR_MEMS_MAX];
	struct sacred_conn *b[NR_MEMS_MAX];
};

static int connect_as(struct sacred_mem_info *mem, uint32_t pid,
		      unsigned int flags, struct sacred_conn **c)
{
	const char *t = getenv("SACRED_CONN_TIMEOUT_MS");
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&mem->addr,
		.process_id = pid,
		.timeout_ms = t ? atoi(t) : TEST_TIMEOUT_MS,
		.bounce_size = 256 * 1024,
		.flags = flags,
	};

	return sacred_conn_create(&attr, c);
}

/* Ask for write (and atomics) on region @region through @c, blocking. */
static int take_write(struct sacred_conn *c, uint32_t region)
{
	struct sacred_perm_req req = {
		.region_id = region,
		.access = SACRED_ACCESS_ALL,
	};

	return sacred_change_perm(c, &req, NULL);
}

FIXTURE_SETUP(io)
{
	struct sacred_acl_entry acl[2] = {
		{ .process_id = PROC_A, .access = SACRED_ACCESS_ALL },
		{ .process_id = PROC_B, .access = SACRED_ACCESS_ALL },
	};
	struct sacred_mem_params p = {
		.id = SACRED_MEM_ID_ANY,
		.cm_port = TEST_CM_PORT,
	};
	char dev[64];
	unsigned int i;

	if (!st_open(_metadata, &self->ctrl, 1, 0))
		return;
	for (i = 0; i < NR_MEMS_MAX; i++) {
		struct sacred_region_info r;

		if (!env_word("SACRED_RXE_DEVS", i, dev, sizeof(dev)))
			break;
		st_mem_new(_metadata, self->ctrl, i, &p, &self->mem[i]);
		self->nr_mems++;
		st_region_new(_metadata, self->ctrl, self->mem[i].id,
			      REGION_SIZE, SACRED_POLICY_EXCLUSIVE_WRITER,
			      acl, 2, &r);
		self->region[i] = r.id;
		ASSERT_EQ(0, connect_as(&self->mem[i], PROC_A, 0,
					&self->a[i]));
		ASSERT_EQ(0, take_write(self->a[i], r.id));
	}
}

FIXTURE_TEARDOWN(io)
{
	unsigned int i;

	for (i = 0; i < NR_MEMS_MAX; i++) {
		sacred_conn_destroy(self->a[i]);
		sacred_conn_destroy(self->b[i]);
		if (i < self->nr_mems)
			sacred_mem_del(self->ctrl, self->mem[i].id);
	}
	sacred_ctrl_close(self->ctrl);
}

/* Wait for and take every result of @c into @res; returns how many. */
static int drain(struct sacred_conn *c, struct sacred_io_result *res,
		 unsigned int max)
{
	unsigned int n = 0;
	int ret;

	while (sacred_io_pending(c) && n < max) {
		ret = sacred_io_wait(&c, 1, 10 * TEST_TIMEOUT_MS);
		if (ret < 0)
			return ret;
		if (!ret)
			return -ETIMEDOUT;
		ret = sacred_io_poll(c, res + n, max - n);
		if (ret < 0)
			return ret;
		n += ret;
	}
	return n;
}

TEST_F(io, batch_of_writes_then_reads_in_order)
{
	static uint8_t out[16][4096], in[16][4096];
	struct sacred_io io[16];
	struct sacred_io_result res[16];
	struct sacred_conn *c = self->a[0];
	unsigned int i, j;

	for (i = 0; i < 16; i++) {
		for (j = 0; j < sizeof(out[i]); j++)
			out[i][j] = (uint8_t)(i * 31 + j * 7 + (j >> 8));
		io[i] = (struct sacred_io){
			.user_data = 1000 + i,
			.opcode = SACRED_IO_WRITE,
			.region_id = self->region[0],
			.offset = i * sizeof(out[i]),
			.buf = out[i],
			/* Small ones go inline, large ones through slots. */
			.len = i % 2 ? sizeof(out[i]) : 16,
		};
	}
	ASSERT_EQ(16, sacred_io_post(c, io, 16));
	/* Posting copied the bytes: scribbling now changes nothing. */
	memset(out[1], 0xee, sizeof(out[1]));
	ASSERT_EQ(16, drain(c, res, 16));
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(1000 + i, res[i].user_data);
		EXPECT_EQ(SACRED_IO_WRITE, res[i].opcode);
		EXPECT_EQ(0, res[i].status);
	}

	for (i = 0; i < 16; i++) {
		io[i].opcode = SACRED_IO_READ;
		io[i].buf = in[i];
		io[i].user_data = 2000 + i;
	}
	ASSERT_EQ(16, sacred_io_post(c, io, 16));
	ASSERT_EQ(16, drain(c, res, 16));
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(2000 + i, res[i].user_data);
		EXPECT_EQ(0, res[i].status);
		if (i != 1)
			EXPECT_EQ(0, memcmp(in[i], out[i], io[i].len));
	}
	for (j = 0; j < sizeof(in[1]); j++)
		if (in[1][j] != (uint8_t)(31 + j * 7 + (j >> 8)))
			break;
	EXPECT_EQ(sizeof(in[1]), j);
	EXPECT_EQ(0, sacred_io_pending(c));
}

TEST_F(io, atomics_and_change_perm_complete_with_their_values)
{
	struct sacred_io io[10];
	struct sacred_io_result res[10];
	struct sacred_conn *c = self->a[0];
	uint64_t zero = 0, v = 0;
	unsigned int i;

	ASSERT_EQ(0, sacred_write(c, self->region[0], 64, &zero,
				  sizeof(zero)));
	for (i = 0; i < 8; i++)
		io[i] = (struct sacred_io){
			.user_data = i,
			.opcode = SACRED_IO_FAA,
			.region_id = self->region[0],
			.offset = 64,
			.compare_add = 5,
		};
	io[8] = (struct sacred_io){
		.user_data = 8,
		.opcode = SACRED_IO_CAS,
		.region_id = self->region[0],
		.offset = 64,
		.compare_add = 40,
		.swap = 1234,
	};
	io[9] = (struct sacred_io){
		.user_data = 9,
		.opcode = SACRED_IO_PERM,
		.perm = {
			.region_id = self->region[0],
			.access = SACRED_ACCESS_ALL,
		},
	};
	ASSERT_EQ(10, sacred_io_post(c, io, 10));
	ASSERT_EQ(10, drain(c, res, 10));
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(0, res[i].status);
		EXPECT_EQ(5 * i, res[i].old);
	}
	EXPECT_EQ(0, res[8].status);
	EXPECT_EQ(40, res[8].old);
	EXPECT_EQ(0, res[9].status);
	EXPECT_EQ(SACRED_IO_PERM, res[9].opcode);
	EXPECT_EQ(self->region[0], res[9].region_id);
	EXPECT_EQ(SACRED_ST_OK, res[9].perm.status);
	EXPECT_EQ(SACRED_ACCESS_ALL, res[9].perm.region.access);
	ASSERT_EQ(0, sacred_read(c, self->region[0], 64, &v, sizeof(v)));
	EXPECT_EQ(1234, v);
}

TEST_F(io, bad_operations_are_refused_at_post)
{
	static uint8_t big[256 * 1024];
	struct sacred_io io = {
		.opcode = SACRED_IO_WRITE,
		.region_id = self->region[0],
		.buf = big,
		.len = 8,
	};
	struct sacred_io_result res[20];
	struct sacred_conn *c = self->a[0];
	uint64_t v;
	unsigned int i;
	int ret;

	io.len = sizeof(big) / 16 + 1;		/* beyond a slot */
	EXPECT_EQ(-EMSGSIZE, sacred_io_post(c, &io, 1));
	io.len = 8;
	io.offset = REGION_SIZE - 4;
	EXPECT_EQ(-ERANGE, sacred_io_post(c, &io, 1));
	io.offset = 0;
	io.region_id = 9999;
	EXPECT_EQ(-ENOENT, sacred_io_post(c, &io, 1));
	io.region_id = self->region[0];
	io.opcode = 77;
	EXPECT_EQ(-EINVAL, sacred_io_post(c, &io, 1));
	io.opcode = SACRED_IO_CAS;
	io.offset = 4;
	EXPECT_EQ(-EINVAL, sacred_io_post(c, &io, 1));
	EXPECT_NE(NULL, sacred_conn_errmsg(c));
	EXPECT_EQ(0, sacred_io_pending(c));

	/* Sixteen slots: the seventeenth waits for a poll. */
	io.opcode = SACRED_IO_WRITE;
	io.offset = 0;
	for (i = 0; i < 16; i++)
		ASSERT_EQ(1, sacred_io_post(c, &io, 1));
	EXPECT_EQ(-EAGAIN, sacred_io_post(c, &io, 1));
	/*
	 * A blocking call goes ahead only when nothing is in flight (the
	 * writes may all be done by now); the results stay to be taken.
	 */
	ret = sacred_read(c, self->region[0], 0, &v, 8);
	EXPECT_TRUE(ret == -EBUSY || ret == 0);
	if (!ret) {
		EXPECT_EQ(16, sacred_io_poll(c, res, 20));
	} else {
		ASSERT_EQ(16, drain(c, res, 20));
	}
	EXPECT_EQ(1, sacred_io_post(c, &io, 1));
	ASSERT_EQ(1, drain(c, res, 20));
	EXPECT_EQ(0, sacred_read(c, self->region[0], 0, &v, 8));
}

/* One write to each of three memories, overlapped, then read back. */
TEST_F(io, three_memories_at_once)
{
	struct sacred_io_result res[NR_MEMS_MAX];
	uint64_t v[NR_MEMS_MAX], back[NR_MEMS_MAX];
	unsigned int i, done = 0;
	int ret;

	if (self->nr_mems < NR_MEMS_MAX)
		SKIP(return, "needs three rxe devices");
	for (i = 0; i < NR_MEMS_MAX; i++) {
		struct sacred_io io = {
			.user_data = i,
			.opcode = SACRED_IO_WRITE,
			.region_id = self->region[i],
			.offset = 128,
			.buf = &v[i],
			.len = sizeof(v[i]),
		};

		v[i] = 0xabc0 + i;
		ASSERT_EQ(1, sacred_io_post(self->a[i], &io, 1));
	}
	while (done < NR_MEMS_MAX) {
		ret = sacred_io_wait(self->a, NR_MEMS_MAX, 5000);
		ASSERT_LT(0, ret);
		for (i = 0; i < NR_MEMS_MAX; i++) {
			ret = sacred_io_poll(self->a[i], res, 1);
			ASSERT_LE(0, ret);
			if (!ret)
				continue;
			EXPECT_EQ(i, res[0].user_data);
			EXPECT_EQ(0, res[0].status);
			done++;
		}
	}
	for (i = 0; i < NR_MEMS_MAX; i++) {
		ASSERT_EQ(0, sacred_read(self->a[i], self->region[i], 128,
					 &back[i], sizeof(back[i])));
		EXPECT_EQ(v[i], back[i]);
	}
	/* Nothing in flight: a wait returns at once. */
	EXPECT_EQ(0, sacred_io_wait(self->a, NR_MEMS_MAX, -1));
}

/*
 * A revoked while its operations are in flight: every operation gets
 * exactly one result; once the revoke is answered, nothing A writes lands
 * and A's failures say "revoked" (-EACCES) or "fenced" (-ECONNRESET).
 */
TEST_F(io, writer_revoked_mid_batch)
{
	static uint8_t old[16384], new[16384], back[16384];
	struct sacred_io io[16];
	struct sacred_io_result res[16];
	struct sacred_conn *c = self->a[0];
	struct sacred_region_attr attr;
	unsigned int i, ok = 0;
	int n, ret;

	memset(old, 0x11, sizeof(old));
	memset(new, 0x22, sizeof(new));
	for (i = 0; i < 16; i++)
		io[i] = (struct sacred_io){
			.user_data = i,
			.opcode = SACRED_IO_WRITE,
			.region_id = self->region[0],
			.offset = i * sizeof(old),
			.buf = old,
			.len = sizeof(old),
		};
	ASSERT_EQ(0, connect_as(&self->mem[0], PROC_B, 0, &self->b[0]));
	ASSERT_EQ(16, sacred_io_post(c, io, 16));
	ASSERT_EQ(0, take_write(self->b[0], self->region[0]));
	n = drain(c, res, 16);
	ASSERT_EQ(16, n);
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(i, res[i].user_data);
		if (!res[i].status) {
			ok++;
			continue;
		}
		EXPECT_TRUE(res[i].status == -EACCES ||
			    res[i].status == -ECONNRESET)
			TH_LOG("result %u: %d", i, res[i].status);
	}
	TH_LOG("%u of 16 writes in flight at the revoke landed", ok);

	/* After the revoke: a post fails, or every write fails. */
	for (i = 0; i < 16; i++)
		io[i].buf = new;
	ret = sacred_io_post(c, io, 16);
	TH_LOG("post after the revoke: %d (%s)", ret, sacred_conn_errmsg(c));
	if (ret > 0) {
		ASSERT_EQ(ret, drain(c, res, 16));
		for (i = 0; i < (unsigned int)ret; i++)
			EXPECT_TRUE(res[i].status == -EACCES ||
				    res[i].status == -ECONNRESET)
				TH_LOG("late result %u: %d", i, res[i].status);
	} else {
		EXPECT_EQ(-ECONNRESET, ret);
	}
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, sacred_read(self->b[0], self->region[0],
					 i * sizeof(back), back,
					 sizeof(back)));
		EXPECT_NE(0x22, back[0]);
		EXPECT_NE(0x22, back[sizeof(back) - 1]);
	}

	/* The connection is broken until reconnected; then A reads only. */
	EXPECT_EQ(-ECONNRESET, sacred_io_post(c, io, 1));
	ASSERT_EQ(0, sacred_conn_reconnect(c));
	ASSERT_EQ(0, sacred_conn_region(c, self->region[0], &attr));
	EXPECT_EQ(SACRED_ACCESS_READ, attr.access);
}

/* A memory brought down under operations in flight ends them all. */
TEST_F(io, memory_down_mid_batch)
{
	static uint8_t buf[16][4096];
	struct sacred_io io[16];
	struct sacred_io_result res[16];
	struct sacred_conn *c = self->a[0];
	unsigned int i;
	int n, ret;

	for (i = 0; i < 16; i++)
		io[i] = (struct sacred_io){
			.user_data = i,
			.opcode = i % 2 ? SACRED_IO_READ : SACRED_IO_WRITE,
			.region_id = self->region[0],
			.offset = i * sizeof(buf[i]),
			.buf = buf[i],
			.len = sizeof(buf[i]),
		};
	ASSERT_EQ(16, sacred_io_post(c, io, 16));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	n = drain(c, res, 16);
	ASSERT_EQ(16, n);
	for (i = 0; i < 16; i++)
		EXPECT_TRUE(res[i].status == 0 ||
			    res[i].status == -ECONNRESET ||
			    res[i].status == -EACCES ||
			    res[i].status == -ETIMEDOUT);
	/* Down: reconnecting is refused; up again: it works. */
	ret = sacred_io_post(c, io, 1);
	TH_LOG("post to a memory that is down: %d (%s)", ret,
	       sacred_conn_errmsg(c));
	if (ret == 1) {
		ASSERT_EQ(1, drain(c, res, 1));
		EXPECT_NE(0, res[0].status);
	} else {
		EXPECT_EQ(-ECONNRESET, ret);
	}
	EXPECT_EQ(-ECONNREFUSED, sacred_conn_reconnect(c));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_UP, 0, NULL));
	ASSERT_EQ(0, sacred_conn_reconnect(c));
	ASSERT_EQ(16, sacred_io_post(c, io, 16));
	ASSERT_EQ(16, drain(c, res, 16));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, res[i].status);
}

/* SACRED_CONN_AUTO_RECONNECT: the next call after a fence just works. */
TEST_F(io, auto_reconnect_after_a_fence)
{
	struct sacred_conn *c;
	struct sacred_region_attr attr;
	uint64_t v = 42, w = 0;

	ASSERT_EQ(0, connect_as(&self->mem[0], PROC_B,
				SACRED_CONN_AUTO_RECONNECT, &self->b[0]));
	c = self->b[0];
	ASSERT_EQ(0, take_write(c, self->region[0]));
	ASSERT_EQ(0, sacred_write(c, self->region[0], 0, &v, sizeof(v)));
	/* A (fenced by B's request) takes write back: B is fenced. */
	ASSERT_EQ(0, sacred_conn_reconnect(self->a[0]));
	ASSERT_EQ(0, take_write(self->a[0], self->region[0]));
	EXPECT_NE(0, sacred_write(c, self->region[0], 0, &v, sizeof(v)));
	/* No sacred_conn_reconnect(): the read reconnects by itself. */
	ASSERT_EQ(0, sacred_read(c, self->region[0], 0, &w, sizeof(w)));
	EXPECT_EQ(42, w);
	ASSERT_EQ(0, sacred_conn_region(c, self->region[0], &attr));
	EXPECT_EQ(SACRED_ACCESS_READ, attr.access);
}

TEST_HARNESS_MAIN
