// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - the shared state table (SST): one row per process, each
 * row an owned region (lib/slots.c) that only its process may write -
 * the memory's swmr policy enforces it - and every process reads.
 *
 * The admin gives row r region id @base_region + r on every memory of
 * the replicated memory, policy swmr, with an ACL naming process r as the
 * writer and the others as readers. A process pushes its own row (one
 * quorum write) and pulls any row, or all of them, each read from a
 * quorum: the newest valid cell of the row. This is the layer Disk Paxos
 * is written against (a row is a process's "disk block"), and the one the
 * atomic register of lib/register.c uses for its write-backs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "sacred.h"

/**
 * struct sacred_sst - a shared state table
 * @nr_rows: rows (processes)
 * @my_row: this process's row
 * @rows: one owned region per row
 */
struct sacred_sst {
	unsigned int nr_rows;
	unsigned int my_row;
	struct sacred_slots *rows[SACRED_SST_MAX_ROWS];
};

/**
 * sacred_sst_open() - open a shared state table
 * @rm: the replicated memory; must outlive the table
 * @base_region: region id of row 0; row r is @base_region + r
 * @nr_rows: rows, 1 to SACRED_SST_MAX_ROWS
 * @my_row: this process's row, which it must be able to write
 * @row_max: the largest row, in bytes
 * @sstp: on success, the new table
 *
 * Return: 0; -EINVAL; -ENOMEM; -EPERM when this process cannot write
 * @my_row; the errors of sacred_slots_open().
 */
int sacred_sst_open(struct sacred_rmem *rm, uint32_t base_region,
		    unsigned int nr_rows, unsigned int my_row, size_t row_max,
		    struct sacred_sst **sstp)
{
	struct sacred_sst *sst;
	unsigned int r;
	int ret;

	if (!rm || !sstp || !nr_rows || nr_rows > SACRED_SST_MAX_ROWS ||
	    my_row >= nr_rows || base_region > UINT32_MAX - nr_rows)
		return -EINVAL;
	sst = calloc(1, sizeof(*sst));
	if (!sst)
		return -ENOMEM;
	sst->nr_rows = nr_rows;
	sst->my_row = my_row;
	for (r = 0; r < nr_rows; r++) {
		ret = sacred_slots_open(rm, base_region + r, row_max, 1, 0,
					&sst->rows[r]);
		if (ret)
			goto err;
	}
	ret = -EPERM;
	if (!sacred_slots_writer(sst->rows[my_row]))
		goto err;
	*sstp = sst;
	return 0;

err:
	sacred_sst_close(sst);
	return ret;
}

/** sacred_sst_close() - free @sst; NULL is ok */
void sacred_sst_close(struct sacred_sst *sst)
{
	unsigned int r;

	if (!sst)
		return;
	for (r = 0; r < sst->nr_rows; r++)
		sacred_slots_close(sst->rows[r]);
	free(sst);
}

/** sacred_sst_rows() - the number of rows of @sst */
unsigned int sacred_sst_rows(const struct sacred_sst *sst)
{
	return sst->nr_rows;
}

/** sacred_sst_my_row() - this process's row of @sst */
unsigned int sacred_sst_my_row(const struct sacred_sst *sst)
{
	return sst->my_row;
}

/**
 * sacred_sst_push() - write this process's row on a quorum
 *
 * Return: as sacred_slots_write().
 */
int sacred_sst_push(struct sacred_sst *sst, const void *row, size_t len)
{
	if (!sst)
		return -EINVAL;
	return sacred_slots_write(sst->rows[sst->my_row], 0, row, len);
}

/**
 * sacred_sst_pull() - read row @r from a quorum
 * @sst: the table
 * @r: the row
 * @buf: gets the row
 * @max: room in @buf
 * @view: gets seq, pid and len of the row's cell; may be NULL
 *
 * Return: 0; -ENODATA if the row was never pushed; as sacred_slots_read().
 */
int sacred_sst_pull(struct sacred_sst *sst, unsigned int r, void *buf,
		    size_t max, struct sacred_cell_view *view)
{
	if (!sst || r >= sst->nr_rows)
		return -EINVAL;
	return sacred_slots_read(sst->rows[r], 0, buf, max, view);
}

/**
 * sacred_sst_pull_all() - read every row
 * @sst: the table
 * @bufs: one buffer of @max bytes per row
 * @max: room in each
 * @views: one per row: its cell's seq, pid and len; a row never pushed
 *	has seq 0
 *
 * Return: 0 when every row was read (or found never pushed); the first
 * other error.
 */
int sacred_sst_pull_all(struct sacred_sst *sst, void *const *bufs,
			size_t max, struct sacred_cell_view *views)
{
	unsigned int r;
	int ret;

	if (!sst || !bufs || !views)
		return -EINVAL;
	for (r = 0; r < sst->nr_rows; r++) {
		ret = sacred_slots_read(sst->rows[r], 0, bufs[r], max,
					&views[r]);
		if (ret == -ENODATA) {
			views[r] = (struct sacred_cell_view){ 0 };
			continue;
		}
		if (ret)
			return ret;
	}
	return 0;
}
