// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_prims - the SACRED-MA primitives on three memory instances (one
 * per rxe device): owned regions (the memory refuses every writer but the
 * owner), shared regions, the shared state table and the atomic register,
 * each with a memory down, and a torn cell planted in one memory that a
 * reader must never take as valid.
 *
 * Three processes P0..P2 (each its own replicated-memory handle, all in
 * this test program). Regions, the same ids on every instance:
 *   OWNED       swmr, P0 writes, P1 and P2 read
 *   SHARED      static, everyone read-write
 *   REVOKE      revoke-only, P0 writes, P1 and P2 read (and may revoke)
 *   SST_BASE+r  swmr, Pr writes its row, the others read
 *   REG_BASE+r  the same, for the register
 */
#include <errno.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7511
#define NR_MEMS		3
#define NR_PROCS	3
#define PID(i)		(401 + (i))
#define OWNED		10
#define SHARED		11
#define REVOKE		12
#define SST_BASE	20
#define REG_BASE	30
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

FIXTURE(prims) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	bool have[NR_MEMS];
	struct sacred_rmem *p[NR_PROCS];
};

/* Region @id on every instance, policy @policy, writer @writer (-1: all). */
static int region_everywhere(struct sacred_ctrl *ctrl,
			     struct sacred_mem_info *mem, uint32_t id,
			     uint8_t policy, int writer)
{
	return region_on_all(ctrl, mem, NR_MEMS, id, 65536, policy, PID(0),
			     NR_PROCS, writer);
}

FIXTURE_SETUP(prims)
{
	unsigned int i;

	if (!st_open(_metadata, &self->ctrl, NR_MEMS, 0))
		return;
	ASSERT_EQ(0, mems_new(self->ctrl, NR_MEMS, TEST_CM_PORT, self->mem,
			      self->have, NULL));
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, OWNED,
				       SACRED_POLICY_SWMR, 0));
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, SHARED,
				       SACRED_POLICY_STATIC, -1));
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, REVOKE,
				       SACRED_POLICY_REVOKE_ONLY, 0));
	for (i = 0; i < NR_PROCS; i++) {
		ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem,
					       SST_BASE + i,
					       SACRED_POLICY_SWMR, i));
		ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem,
					       REG_BASE + i,
					       SACRED_POLICY_SWMR, i));
	}
	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, rmem_anew(&self->p[i], self->mem, NR_MEMS,
				       PID(i)));
}

FIXTURE_TEARDOWN(prims)
{
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++)
		sacred_rmem_destroy(self->p[i]);
	mems_del(self->ctrl, self->mem, self->have, NR_MEMS);
}

/*
 * A raw write on memory @i's connection of @rm, behind the primitives'
 * back; waits while the replicated memory still has operations in flight
 * there (stragglers of its last quorum call).
 */
static int raw_write(struct sacred_rmem *rm, unsigned int i, uint32_t region,
		     uint64_t offset, const void *buf, size_t len)
{
	return once_settled(sacred_write(sacred_rmem_conn(rm, i), region,
					 offset, buf, len));
}

TEST_F(prims, owned_region_one_writer_many_readers)
{
	struct sacred_slots *w, *r, *w2;
	struct sacred_cell_view v;
	uint64_t raw = 0xbad, seq2 = 0;
	char buf[64];
	unsigned int i;
	int ret;

	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 8, 0, &w));
	ASSERT_EQ(0, sacred_slots_open(self->p[1], OWNED, 48, 8, 0, &r));
	EXPECT_TRUE(sacred_slots_writer(w));
	EXPECT_FALSE(sacred_slots_writer(r));
	EXPECT_EQ(-ENODATA, sacred_slots_read(r, 0, buf, sizeof(buf), &v));

	for (i = 0; i < 8; i++) {
		snprintf(buf, sizeof(buf), "slot %u, first", i);
		ASSERT_EQ(0, sacred_slots_write(w, i, buf, strlen(buf) + 1));
		snprintf(buf, sizeof(buf), "slot %u, second", i);
		ASSERT_EQ(0, sacred_slots_write(w, i, buf, strlen(buf) + 1));
	}
	for (i = 0; i < 8; i++) {
		char want[64];

		ASSERT_EQ(0, sacred_slots_read(r, i, buf, sizeof(buf), &v));
		snprintf(want, sizeof(want), "slot %u, second", i);
		EXPECT_STREQ(want, buf);
		/* One counter per slot, from the same start. */
		if (!i)
			seq2 = v.seq;
		EXPECT_EQ(seq2, v.seq);
		EXPECT_EQ(PID(0), v.pid);
	}

	/* Not the owner: refused here, and by the memory below us. */
	EXPECT_EQ(-EPERM, sacred_slots_write(r, 0, "x", 1));
	ret = sacred_rmem_write(self->p[1], OWNED, 0, &raw, sizeof(raw),
				NULL);
	EXPECT_EQ(-EACCES, ret);
	EXPECT_EQ(NR_MEMS, sacred_rmem_revive(self->p[1]));
	ASSERT_EQ(0, sacred_slots_read(r, 0, buf, sizeof(buf), &v));
	EXPECT_STREQ("slot 0, second", buf);

	/* A restarted owner goes on above its old sequence numbers. */
	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 8, 0, &w2));
	ASSERT_EQ(0, sacred_slots_write(w2, 0, "third", 6));
	ASSERT_EQ(0, sacred_slots_read(r, 0, buf, sizeof(buf), &v));
	EXPECT_STREQ("third", buf);
	EXPECT_LT(seq2, v.seq);
	EXPECT_EQ(-ENOSPC, sacred_slots_read(r, 0, buf, 2, &v));
	sacred_slots_close(w2);

	/*
	 * payload_max 45 has the same cells (72 bytes, padded): still, 46
	 * bytes are refused - a reader sized for 45 could not take them.
	 */
	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 45, 8, 0, &w2));
	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(-EMSGSIZE, sacred_slots_write(w2, 1, buf, 46));
	EXPECT_EQ(0, sacred_slots_write(w2, 1, buf, 45));
	sacred_slots_close(w2);
	sacred_slots_close(w);
	sacred_slots_close(r);
}

/*
 * The newest cell on one memory is made torn behind the library's back;
 * a reader that happens to see that memory must fall back to a valid
 * cell, never return the torn one.
 */
TEST_F(prims, torn_cell_is_never_taken)
{
	struct sacred_slots *w, *r;
	struct sacred_cell_view v;
	uint8_t junk[32];
	char buf[64];
	unsigned int i, round;

	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 1, 0, &w));
	ASSERT_EQ(0, sacred_slots_open(self->p[1], OWNED, 48, 1, 0, &r));
	ASSERT_EQ(0, sacred_slots_write(w, 0, "old", 4));
	ASSERT_EQ(0, sacred_slots_write(w, 0, "new", 4));
	/* Tear the first cell (seq 1, "old") on memory 0. */
	memset(junk, 0x5a, sizeof(junk));
	ASSERT_EQ(0, raw_write(self->p[0], 0, OWNED, 0, junk, sizeof(junk)));
	for (round = 0; round < 10; round++) {
		ASSERT_EQ(0, sacred_slots_read(r, 0, buf, sizeof(buf), &v));
		EXPECT_TRUE(!strcmp(buf, "new") || !strcmp(buf, "old"));
		EXPECT_EQ(PID(0), v.pid);
	}
	/* Tear both cells on memory 0: the others still have "new". */
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, raw_write(self->p[0], 0, OWNED, i * 72, junk,
				       sizeof(junk)));
	ASSERT_EQ(0, sacred_slots_read(r, 0, buf, sizeof(buf), &v));
	EXPECT_STREQ("new", buf);
	sacred_slots_close(w);
	sacred_slots_close(r);
}

/* Cell @cell of slot 0 of OWNED (48-byte payloads) on memory @i, decoded. */
static int raw_cell(struct sacred_rmem *rm, unsigned int i, unsigned int cell,
		    uint8_t *buf, struct sacred_cell_view *v)
{
	int ret = sacred_read(sacred_rmem_conn(rm, i), OWNED, cell * 72, buf,
			      72);

	return ret ?: sacred_cell_decode(buf, 72, v);
}

/*
 * A writer that opens its region again has lost which cell holds its last
 * complete write. A newer cell on one memory only is a write cut short:
 * the next write goes over it, never over the complete one. With a
 * memory not answering, it cannot be told: writes wait until it can.
 */
TEST_F(prims, reopened_writer_never_writes_over_its_last_complete_cell)
{
	struct sacred_slots *w;
	struct sacred_cell_view v;
	uint64_t b, d;
	uint8_t cell[72];
	unsigned int i;

	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 1, 0, &w));
	ASSERT_EQ(0, sacred_slots_write(w, 0, "A", 2));	/* cell 0 */
	ASSERT_EQ(0, sacred_slots_write(w, 0, "B", 2));	/* cell 1 */
	sacred_slots_close(w);
	ASSERT_EQ(0, raw_cell(self->p[0], 1, 1, cell, &v));
	b = v.seq;
	/* "C", newer, cut short: on memory 0 only, in cell 0. */
	ASSERT_EQ(0, sacred_cell_encode(cell, 72, b + 1, PID(0), "C", 2));
	ASSERT_EQ(0, raw_write(self->p[0], 0, OWNED, 0, cell, 72));

	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 1, 0, &w));
	ASSERT_EQ(0, sacred_slots_write(w, 0, "D", 2));
	sacred_slots_close(w);
	for (i = 1; i < NR_MEMS; i++) {
		ASSERT_EQ(0, raw_cell(self->p[0], i, 1, cell, &v));
		EXPECT_EQ(b, v.seq);		/* "B" kept */
		ASSERT_EQ(0, raw_cell(self->p[0], i, 0, cell, &v));
		EXPECT_STREQ("D", (const char *)v.data);	/* over "A" */
		EXPECT_LT(b + 1, v.seq);
		d = v.seq;
	}

	/* "E", newer, cut short in cell 1; memory 2 does not answer. */
	ASSERT_EQ(0, sacred_cell_encode(cell, 72, d + 1, PID(0), "E", 2));
	ASSERT_EQ(0, raw_write(self->p[0], 0, OWNED, 72, cell, 72));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 1, 0, &w));
	EXPECT_EQ(-ENOTCONN, sacred_slots_write(w, 0, "F", 2));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_UP, 0, NULL));
	ASSERT_EQ(0, after_revive(self->p[0], 4,
				  sacred_slots_write(w, 0, "F", 2)));
	sacred_slots_close(w);
	ASSERT_EQ(0, raw_cell(self->p[0], 1, 0, cell, &v));
	EXPECT_STREQ("D", (const char *)v.data);	/* kept */
	ASSERT_EQ(0, raw_cell(self->p[0], 1, 1, cell, &v));
	EXPECT_STREQ("F", (const char *)v.data);
	EXPECT_LT(d + 1, v.seq);
}

/*
 * A cell a writer left on a memory that does not answer when it opens
 * again is one it cannot see: its new writes are numbered above it
 * anyway (by the clock), or a reader meeting that memory would take the
 * old cell for the newest.
 */
TEST_F(prims, reopened_writer_numbers_above_cells_it_cannot_see)
{
	struct sacred_slots *w, *r;
	struct sacred_cell_view v;
	uint8_t cell[72];
	char buf[64];

	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 1, 0, &w));
	ASSERT_EQ(0, sacred_slots_write(w, 0, "old", 4));	/* cell 0 */
	sacred_slots_close(w);
	ASSERT_EQ(0, raw_cell(self->p[0], 1, 0, cell, &v));
	/* A later write of it that reached memory 2 only, in cell 1. */
	ASSERT_EQ(0, sacred_cell_encode(cell, 72, v.seq + 1000, PID(0),
					"stale", 6));
	ASSERT_EQ(0, raw_write(self->p[0], 2, OWNED, 72, cell, 72));

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 1, 0, &w));
	ASSERT_EQ(0, sacred_slots_write(w, 0, "new", 4));
	sacred_slots_close(w);

	/* Memory 2 back, memory 0 down: a reader meets memories 1 and 2. */
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_UP, 0, NULL));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, sacred_slots_open(self->p[1], OWNED, 48, 1, 0, &r));
	ASSERT_EQ(0, after_revive(self->p[1], 4,
				  sacred_slots_read(r, 0, buf, sizeof(buf),
						    &v)));
	EXPECT_STREQ("new", buf);
	sacred_slots_close(r);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_UP, 0, NULL));
}

TEST_F(prims, shared_region_newest_cell_wins)
{
	struct sacred_slots *s[NR_PROCS];
	struct sacred_cell_view v;
	char buf[32];
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++) {
		ASSERT_EQ(0, sacred_slots_open(self->p[i], SHARED, 24, 4,
					       SACRED_SLOTS_SHARED, &s[i]));
		EXPECT_TRUE(sacred_slots_writer(s[i]));
	}
	for (i = 0; i < 6; i++) {
		snprintf(buf, sizeof(buf), "from P%u #%u", i % 3, i);
		ASSERT_EQ(0, sacred_slots_write(s[i % 3], 1, buf,
						strlen(buf) + 1));
	}
	for (i = 0; i < NR_PROCS; i++) {
		ASSERT_EQ(0, sacred_slots_read(s[i], 1, buf, sizeof(buf), &v));
		EXPECT_STREQ("from P2 #5", buf);
		EXPECT_EQ(6, v.seq);
		EXPECT_EQ(PID(2), v.pid);
	}
	for (i = 0; i < NR_PROCS; i++)
		sacred_slots_close(s[i]);
}

TEST_F(prims, sst_rows_pushed_and_pulled_with_a_memory_down)
{
	struct sacred_sst *sst[NR_PROCS], *bad;
	struct sacred_cell_view views[NR_PROCS];
	char rows[NR_PROCS][32];
	void *bufs[NR_PROCS] = { rows[0], rows[1], rows[2] };
	unsigned int i, r;

	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, sacred_sst_open(self->p[i], SST_BASE, NR_PROCS,
					     i, 32, &sst[i]));
	/* P1 cannot claim row 0. */
	EXPECT_EQ(-EPERM, sacred_sst_open(self->p[1], SST_BASE, NR_PROCS, 0,
					  32, &bad));
	ASSERT_EQ(0, sacred_sst_pull_all(sst[0], bufs, 32, views));
	for (r = 0; r < NR_PROCS; r++)
		EXPECT_EQ(0, views[r].seq);

	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id,
				    SACRED_MEM_DOWN, 0, NULL));
	for (i = 0; i < NR_PROCS; i++) {
		char row[32];

		snprintf(row, sizeof(row), "row of P%u", i);
		ASSERT_EQ(0, sacred_sst_push(sst[i], row, strlen(row) + 1));
	}
	for (i = 0; i < NR_PROCS; i++) {
		ASSERT_EQ(0, sacred_sst_pull_all(sst[i], bufs, 32, views));
		for (r = 0; r < NR_PROCS; r++) {
			char want[32];

			snprintf(want, sizeof(want), "row of P%u", r);
			EXPECT_STREQ(want, rows[r]);
			EXPECT_EQ(PID(r), views[r].pid);
		}
	}
	for (i = 0; i < NR_PROCS; i++)
		sacred_sst_close(sst[i]);
}

/*
 * Several slots of two regions read in one batch: each slot's payload or
 * its own error, the same with a memory down; and the arguments the
 * batch refuses.
 */
TEST_F(prims, many_slots_read_at_once)
{
	struct sacred_slots *w, *w2, *r, *r2, *other, *s[6];
	struct sacred_cell_view views[6];
	unsigned int slots[6] = { 0, 1, 2, 5, 1, 0 };
	char out[6][64], big[2][3000];
	void *data[6] = { out[0], out[1], out[2], out[3], out[4], out[5] };
	void *bigs[NR_MEMS] = { big[0], big[1], big[0] };
	struct sacred_io io[2] = {
		{ .opcode = SACRED_IO_READ, .region_id = OWNED, .len = 3000 },
		{ .opcode = SACRED_IO_READ, .region_id = OWNED, .len = 3000 },
	};
	int rets[6];
	unsigned int i, pass;

	ASSERT_EQ(0, sacred_slots_open(self->p[0], OWNED, 48, 8, 0, &w));
	ASSERT_EQ(0, sacred_slots_open(self->p[0], SST_BASE, 32, 4, 0, &w2));
	ASSERT_EQ(0, sacred_slots_open(self->p[1], OWNED, 48, 8, 0, &r));
	ASSERT_EQ(0, sacred_slots_open(self->p[1], SST_BASE, 32, 4, 0, &r2));
	ASSERT_EQ(0, sacred_slots_open(self->p[2], OWNED, 48, 8, 0, &other));
	for (i = 0; i < 3; i++) {
		char v[48];

		snprintf(v, sizeof(v), "owned slot %u", i);
		ASSERT_EQ(0, sacred_slots_write(w, i, v, strlen(v) + 1));
	}
	ASSERT_EQ(0, sacred_slots_write(w2, 1, "sst slot 1", 11));
	ASSERT_EQ(0, sacred_slots_write(w2, 1, "sst slot 1, again", 18));
	ASSERT_EQ(0,
		  sacred_slots_write(w, 0, "owned slot 0, longer than 16", 29));

	for (i = 0; i < 6; i++)
		s[i] = i == 4 ? r2 : r;
	for (pass = 0; pass < 2; pass++) {
		/* pass 1: with a memory down, still one quorum */
		if (pass == 1)
			ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id,
						    SACRED_MEM_DOWN, 0, NULL));
		memset(out, 0, sizeof(out));
		ASSERT_EQ(0, sacred_slots_read_many(s, slots, 6, data, 64,
						    views, rets));
		EXPECT_EQ(0, rets[0]);
		EXPECT_STREQ("owned slot 0, longer than 16", out[0]);
		EXPECT_EQ(views[1].seq + 1, views[0].seq);	/* written twice */
		EXPECT_EQ(0, rets[1]);
		EXPECT_STREQ("owned slot 1", out[1]);
		EXPECT_EQ(0, rets[2]);
		EXPECT_STREQ("owned slot 2", out[2]);
		EXPECT_EQ(PID(0), views[2].pid);
		EXPECT_EQ(-ENODATA, rets[3]);	/* never written */
		EXPECT_EQ(0, rets[4]);
		EXPECT_STREQ("sst slot 1, again", out[4]);
		EXPECT_EQ(PID(0), views[4].pid);
		EXPECT_EQ(0, rets[5]);		/* the same slot twice */
		EXPECT_STREQ("owned slot 0, longer than 16", out[5]);
		/* room for 16 bytes: the long one does not fit, alone */
		ASSERT_EQ(0, sacred_slots_read_many(s, slots, 3, data, 16, NULL,
						    rets));
		EXPECT_EQ(-ENOSPC, rets[0]);
		EXPECT_EQ(0, rets[1]);
		EXPECT_STREQ("owned slot 1", out[1]);
	}

	/* What a batch refuses, with nothing sent. */
	EXPECT_EQ(-EINVAL,
		  sacred_slots_read_many(s, slots, 0, data, 64, views, rets));
	EXPECT_EQ(-EINVAL,
		  sacred_slots_read_many(s, slots, SACRED_RMEM_CHAIN_MAX + 1,
					 data, 64, views, rets));
	s[1] = other;	/* another replicated memory */
	EXPECT_EQ(-EINVAL,
		  sacred_slots_read_many(s, slots, 2, data, 64, views, rets));
	io[1].offset = 3000;
	EXPECT_EQ(-EMSGSIZE, sacred_rmem_batch(self->p[1], io, 2, bigs, NULL));
	io[1].opcode = SACRED_IO_CAS;
	io[1].len = 0;
	EXPECT_EQ(-EINVAL, sacred_rmem_batch(self->p[1], io, 2, bigs, NULL));
	EXPECT_EQ(-EINVAL, sacred_rmem_batch(self->p[1], io, 1, NULL, NULL));

	sacred_slots_close(other);
	sacred_slots_close(r2);
	sacred_slots_close(r);
	sacred_slots_close(w2);
	sacred_slots_close(w);
}

/*
 * raw_write(), reconnecting @rm's broken connections (a memory that was
 * down, a connection the kernel fenced) and trying again, a few times.
 */
static int raw_write_again(struct sacred_rmem *rm, unsigned int i,
			   uint32_t region, uint64_t offset, const void *buf,
			   size_t len)
{
	unsigned int tries;
	int ret = -ENOTCONN;

	for (tries = 0; tries < 4; tries++) {
		ret = raw_write(rm, i, region, offset, buf, len);
		if (!ret || ret == -EACCES)
			break;
		sacred_rmem_revive(rm);
	}
	return ret;
}

/*
 * A revoke and a read as two quorum calls can read a memory the revoke
 * missed, where the writer still writes; sacred_slots_read_after() reads
 * a memory only after the revoke was answered there. Memory 2 misses a
 * revoke of P0 and takes a late write of P0 once it is back; with memory
 * 0 down, the chained read uses memories 1 and 2: it sees the late cell,
 * and P0 can write there no more. Then a repeated revoke, a refused one,
 * and the arguments the call refuses.
 */
TEST_F(prims, read_after_revoke_at_every_memory_it_uses)
{
	struct sacred_perm_req revoke = {
		.region_id = REVOKE,
		.access = 0,
		.target = PID(0),
	};
	struct sacred_perm_req swmr = revoke;
	size_t cell_size = (SACRED_CELL_HDR + 48 + 7) & ~(size_t)7;
	struct sacred_slots *w, *r, *owned;
	struct sacred_cell_view v;
	uint8_t cell[128];
	unsigned int tries;
	uint64_t late;
	char buf[64];
	int ret;

	ASSERT_EQ(0, sacred_slots_open(self->p[0], REVOKE, 48, 1, 0, &w));
	ASSERT_EQ(0, sacred_slots_open(self->p[1], REVOKE, 48, 1, 0, &r));
	ASSERT_EQ(0, sacred_slots_open(self->p[1], OWNED, 48, 1, 0, &owned));
	EXPECT_TRUE(sacred_slots_writer(w));
	ASSERT_EQ(0, sacred_slots_write(w, 0, "before", 7));

	/* Memory 2 misses the revoke. */
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, sacred_rmem_change_perm(self->p[1], &revoke, NULL));
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_UP, 0, NULL));
	/* P0 still writes there: a valid, newer cell in the other cell. */
	ASSERT_EQ(0, sacred_slots_read(r, 0, buf, sizeof(buf), &v));
	late = v.seq + 1;
	ASSERT_LE(cell_size, sizeof(cell));
	ASSERT_EQ(0, sacred_cell_encode(cell, cell_size, late, PID(0), "late",
					5));
	ASSERT_EQ(0, raw_write_again(self->p[0], 2, REVOKE, cell_size, cell,
				     cell_size));

	/* Memories 1 and 2 only: the read at 2 follows the revoke there. */
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[0].id,
				    SACRED_MEM_DOWN, 0, NULL));
	sacred_rmem_revive(self->p[1]);
	for (tries = 0; tries < 4; tries++) {
		memset(buf, 0, sizeof(buf));
		ret = sacred_slots_read_after(r, 0, &revoke, buf, sizeof(buf),
					      &v);
		if (ret != -ECONNRESET && ret != -ENOTCONN)
			break;
		sacred_rmem_revive(self->p[1]);
	}
	ASSERT_EQ(0, ret);
	EXPECT_STREQ("late", buf);
	EXPECT_EQ(late, v.seq);
	EXPECT_EQ(PID(0), v.pid);
	EXPECT_EQ(5, v.len);
	EXPECT_EQ(-EACCES, raw_write_again(self->p[0], 2, REVOKE, 0, cell,
					   cell_size));

	/* A repeated revoke is accepted on a revoke-only region. */
	ASSERT_EQ(0, sacred_slots_read_after(r, 0, &revoke, buf, sizeof(buf),
					     NULL));
	EXPECT_STREQ("late", buf);
	EXPECT_EQ(-ENOSPC, sacred_slots_read_after(r, 0, &revoke, buf, 2,
						   &v));
	/* swmr refuses every change: nothing is read. */
	swmr.region_id = OWNED;
	swmr.target = 0;	/* a target is for revoke-only regions */
	EXPECT_EQ(-EPERM, sacred_slots_read_after(owned, 0, &swmr, buf,
						  sizeof(buf), &v));
	EXPECT_EQ(-EINVAL, sacred_slots_read_after(r, 0, NULL, buf,
						   sizeof(buf), &v));
	EXPECT_EQ(-EINVAL, sacred_slots_read_after(r, 1, &revoke, buf,
						   sizeof(buf), &v));
	EXPECT_EQ(-EINVAL, sacred_slots_read_after(NULL, 0, &revoke, buf,
						   sizeof(buf), &v));
	sacred_slots_close(owned);
	sacred_slots_close(r);
	sacred_slots_close(w);
}

TEST_F(prims, atomic_register_reads_the_last_write)
{
	struct sacred_register *reg[NR_PROCS];
	char buf[32];
	size_t len;
	unsigned int i;

	for (i = 0; i < NR_PROCS; i++)
		ASSERT_EQ(0, sacred_register_open(self->p[i], REG_BASE,
						  NR_PROCS, i, 32, &reg[i]));
	EXPECT_EQ(-ENODATA, sacred_register_read(reg[1], buf, sizeof(buf),
						 &len));
	ASSERT_EQ(0, sacred_register_write(reg[0], "alpha", 6));
	ASSERT_EQ(0, sacred_register_read(reg[1], buf, sizeof(buf), &len));
	EXPECT_STREQ("alpha", buf);
	ASSERT_EQ(0, sacred_register_write(reg[2], "beta", 5));
	ASSERT_EQ(0, sacred_register_read(reg[0], buf, sizeof(buf), &len));
	EXPECT_STREQ("beta", buf);

	/* A minority down changes nothing. */
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[2].id,
				    SACRED_MEM_DOWN, 0, NULL));
	ASSERT_EQ(0, sacred_register_write(reg[1], "gamma", 6));
	for (i = 0; i < NR_PROCS; i++) {
		ASSERT_EQ(0, sacred_register_read(reg[i], buf, sizeof(buf),
						  &len));
		EXPECT_STREQ("gamma", buf);
		EXPECT_EQ(6, len);
	}
	EXPECT_EQ(-ENOSPC, sacred_register_read(reg[0], buf, 3, &len));
	for (i = 0; i < NR_PROCS; i++)
		sacred_register_close(reg[i]);
}

TEST_HARNESS_MAIN
