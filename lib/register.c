// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - an atomic (linearizable) multi-writer multi-reader register
 * on a shared state table, in the manner of Attiya, Bar-Noy and Dolev:
 * every process keeps its view of the register in its own SST row, as
 * (timestamp, writer, value); the memories' swmr policy makes sure a row
 * is only ever written by its process.
 *
 *   write(v): pull every row (quorum reads), take the highest tag (ts,
 *             writer), push (ts + 1, me, v) to my row on a quorum.
 *   read():   pull every row, take the value of the highest tag; if my
 *             row is behind it, push that tag and value to my row (the
 *             write-back that makes reads atomic, not just regular), and
 *             return the value.
 *
 * Round trips: a write is n row reads and one write; a read n row reads
 * and at most one write (n rows, one quorum round trip each).
 *
 * Row payload (little-endian): __le64 ts, __le32 writer, __le32 len, then
 * the value.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sacred.h"

#define REG_HDR		16

/**
 * struct sacred_register - an atomic register
 * @sst: the rows (owned)
 * @value_max: the largest value
 * @rows: per row, a buffer of REG_HDR + @value_max bytes
 * @me: this process's id
 */
struct sacred_register {
	struct sacred_sst *sst;
	size_t value_max;
	uint8_t *rows[SACRED_SST_MAX_ROWS];
	uint32_t me;
};

struct reg_tag {
	uint64_t ts;
	uint32_t writer;
};

static bool tag_newer(const struct reg_tag *a, const struct reg_tag *b)
{
	return a->ts > b->ts || (a->ts == b->ts && a->writer > b->writer);
}

/*
 * Pull every row; the index of the row with the highest tag in *@best
 * (-1 when no row holds a value) and its tag in *@tag; this process's own
 * tag in *@mine.
 */
static int reg_collect(struct sacred_register *reg, int *best,
		       struct reg_tag *tag, struct reg_tag *mine)
{
	struct sacred_cell_view views[SACRED_SST_MAX_ROWS];
	unsigned int r, n = sacred_sst_rows(reg->sst);
	int ret;

	ret = sacred_sst_pull_all(reg->sst, (void *const *)reg->rows,
				  REG_HDR + reg->value_max, views);
	if (ret)
		return ret;
	*best = -1;
	*tag = (struct reg_tag){ 0 };
	*mine = (struct reg_tag){ 0 };
	for (r = 0; r < n; r++) {
		struct reg_tag t;
		uint32_t len;

		if (!views[r].seq)
			continue;
		if (views[r].len < REG_HDR)
			return -EBADMSG;
		memcpy(&t.ts, reg->rows[r], 8);
		memcpy(&t.writer, reg->rows[r] + 8, 4);
		memcpy(&len, reg->rows[r] + 12, 4);
		t.ts = le64toh(t.ts);
		t.writer = le32toh(t.writer);
		if (le32toh(len) != views[r].len - REG_HDR)
			return -EBADMSG;
		if (r == sacred_sst_my_row(reg->sst))
			*mine = t;
		if (*best < 0 || tag_newer(&t, tag)) {
			*best = r;
			*tag = t;
		}
	}
	return 0;
}

static int reg_push(struct sacred_register *reg, const struct reg_tag *tag,
		    const void *value, size_t len)
{
	uint8_t *row = reg->rows[sacred_sst_my_row(reg->sst)];
	uint64_t ts = htole64(tag->ts);
	uint32_t w = htole32(tag->writer), l = htole32((uint32_t)len);

	memmove(row + REG_HDR, value, len);
	memcpy(row, &ts, 8);
	memcpy(row + 8, &w, 4);
	memcpy(row + 12, &l, 4);
	return sacred_sst_push(reg->sst, row, REG_HDR + len);
}

/**
 * sacred_register_open() - open an atomic register
 * @rm: the replicated memory; must outlive the register
 * @base_region: the register's rows: regions @base_region .. + @nr_rows - 1
 *	(see sacred_sst_open())
 * @nr_rows: processes that use the register
 * @my_row: this process's row
 * @value_max: the largest value
 * @regp: on success, the register
 *
 * Return: as sacred_sst_open().
 */
int sacred_register_open(struct sacred_rmem *rm, uint32_t base_region,
			 unsigned int nr_rows, unsigned int my_row,
			 size_t value_max, struct sacred_register **regp)
{
	struct sacred_register *reg;
	unsigned int r;
	int ret;

	if (!rm || !regp || !nr_rows || nr_rows > SACRED_SST_MAX_ROWS ||
	    value_max > (1U << 20))
		return -EINVAL;
	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	reg->value_max = value_max;
	reg->me = sacred_rmem_process_id(rm);
	ret = -ENOMEM;
	for (r = 0; r < nr_rows; r++) {
		reg->rows[r] = calloc(1, REG_HDR + value_max);
		if (!reg->rows[r])
			goto err;
	}
	ret = sacred_sst_open(rm, base_region, nr_rows, my_row,
			      REG_HDR + value_max, &reg->sst);
	if (ret)
		goto err;
	*regp = reg;
	return 0;

err:
	sacred_register_close(reg);
	return ret;
}

/** sacred_register_close() - free @reg; NULL is ok */
void sacred_register_close(struct sacred_register *reg)
{
	unsigned int r;

	if (!reg)
		return;
	sacred_sst_close(reg->sst);
	for (r = 0; r < SACRED_SST_MAX_ROWS; r++)
		free(reg->rows[r]);
	free(reg);
}

/**
 * sacred_register_write() - write @len bytes of @value
 *
 * Return: 0 once the write is linearized (on a quorum); -EMSGSIZE;
 * the errors of sacred_sst_pull_all() and sacred_sst_push().
 */
int sacred_register_write(struct sacred_register *reg, const void *value,
			  size_t len)
{
	struct reg_tag tag, mine;
	int best, ret;

	if (!reg || (!value && len))
		return -EINVAL;
	if (len > reg->value_max)
		return -EMSGSIZE;
	ret = reg_collect(reg, &best, &tag, &mine);
	if (ret)
		return ret;
	tag.ts++;
	tag.writer = reg->me;
	return reg_push(reg, &tag, value, len);
}

/**
 * sacred_register_read() - read the register
 * @reg: the register
 * @value: gets the value
 * @max: room in @value
 * @len: gets the value's length
 *
 * Return: 0; -ENODATA if it was never written; -ENOSPC if the value is
 * longer than @max; the errors of sacred_sst_pull_all() and of the
 * write-back.
 */
int sacred_register_read(struct sacred_register *reg, void *value,
			 size_t max, size_t *len)
{
	struct reg_tag tag, mine;
	uint32_t l;
	int best, ret;

	if (!reg || !len || (!value && max))
		return -EINVAL;
	ret = reg_collect(reg, &best, &tag, &mine);
	if (ret)
		return ret;
	if (best < 0)
		return -ENODATA;
	memcpy(&l, reg->rows[best] + 12, 4);
	l = le32toh(l);
	if (l > max)
		return -ENOSPC;
	memcpy(value, reg->rows[best] + REG_HDR, l);
	*len = l;
	if (tag_newer(&tag, &mine)) {
		ret = reg_push(reg, &tag, value, l);
		if (ret)
			return ret;
	}
	return 0;
}
