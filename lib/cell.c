// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - cells: the self-checking record every layer above the raw
 * data path stores in remote memory.
 *
 * Why: a write that is cut short - its writer revoked while its packets
 * were arriving, or crashed mid-write - can leave a multi-packet record
 * torn in memory (measured on rxe: the module counts such revokes as
 * "raced"). The memory cannot tell; the reader must. A cell carries a
 * sequence number, the writer's process id, the payload length and a
 * 64-bit BLAKE2b digest of all of them and of the payload, so a torn,
 * stale-length or garbage cell is recognised and never taken as valid.
 *
 * Layout (little-endian), SACRED_CELL_HDR bytes of header then payload:
 *
 *   0  __le64 seq     0 is never written: an all-zero cell is "empty"
 *   8  __le32 pid
 *  12  __le32 len     payload bytes
 *  16  u8 sum[8]      BLAKE2b-64 over bytes 0..15 and the payload
 *
 * Pure functions, no I/O; host unit tests in tests/unit/test_cell.c.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "sacred.h"

#define CELL_SUM_LEN	8

static void cell_sum(const uint8_t *hdr, const void *data, size_t len,
		     uint8_t *sum)
{
	crypto_generichash_state st;

	/*
	 * Idempotent and cheap once done; picks the fastest implementation.
	 * Its failure (no random source) does not matter to a hash.
	 */
	if (sodium_init() < 0) {
		/* go on: BLAKE2b needs no randomness */
	}
	crypto_generichash_init(&st, NULL, 0, CELL_SUM_LEN);
	crypto_generichash_update(&st, hdr, 16);
	if (len)
		crypto_generichash_update(&st, data, len);
	crypto_generichash_final(&st, sum, CELL_SUM_LEN);
}

/**
 * sacred_cell_encode() - build a cell
 * @cell: where, @size bytes; bytes past the payload are zeroed
 * @size: the cell's size, at least SACRED_CELL_HDR + @len
 * @seq: sequence number, not 0
 * @pid: the writer
 * @data: the payload; it may already be in place, at @cell +
 *	SACRED_CELL_HDR (a caller that builds it there copies nothing)
 * @len: its bytes
 *
 * Return: 0, or -EINVAL (seq 0, too small, NULL data with a length).
 */
int sacred_cell_encode(void *cell, size_t size, uint64_t seq, uint32_t pid,
		       const void *data, size_t len)
{
	uint8_t *c = cell;
	uint64_t s = htole64(seq);
	uint32_t p = htole32(pid), l = htole32((uint32_t)len);

	if (!cell || !seq || size < SACRED_CELL_HDR ||
	    len > size - SACRED_CELL_HDR || len > UINT32_MAX ||
	    (!data && len))
		return -EINVAL;
	memcpy(c, &s, 8);
	memcpy(c + 8, &p, 4);
	memcpy(c + 12, &l, 4);
	if (len)
		memmove(c + SACRED_CELL_HDR, data, len);
	memset(c + SACRED_CELL_HDR + len, 0, size - SACRED_CELL_HDR - len);
	cell_sum(c, c + SACRED_CELL_HDR, len, c + 16);
	return 0;
}

/**
 * sacred_cell_decode() - check a cell and take what it holds
 * @cell: the cell, @size bytes, as read from a memory
 * @size: its size
 * @out: what it holds (may be NULL): @out->data points into @cell
 *
 * Return: 0 for a valid cell; -ENODATA for an empty (all-zero header)
 * cell; -EBADMSG for anything else: torn, garbage, a length beyond the
 * cell; -EINVAL for bad arguments.
 */
int sacred_cell_decode(const void *cell, size_t size,
		       struct sacred_cell_view *out)
{
	const uint8_t *c = cell;
	uint8_t sum[CELL_SUM_LEN];
	uint64_t seq;
	uint32_t pid, len;
	unsigned int i;

	if (!cell || size < SACRED_CELL_HDR)
		return -EINVAL;
	memcpy(&seq, c, 8);
	memcpy(&pid, c + 8, 4);
	memcpy(&len, c + 12, 4);
	seq = le64toh(seq);
	pid = le32toh(pid);
	len = le32toh(len);
	if (!seq) {
		for (i = 0; i < SACRED_CELL_HDR; i++)
			if (c[i])
				return -EBADMSG;
		return -ENODATA;
	}
	if (len > size - SACRED_CELL_HDR)
		return -EBADMSG;
	cell_sum(c, c + SACRED_CELL_HDR, len, sum);
	if (memcmp(sum, c + 16, CELL_SUM_LEN))
		return -EBADMSG;
	if (out) {
		out->seq = seq;
		out->pid = pid;
		out->len = len;
		out->data = c + SACRED_CELL_HDR;
	}
	return 0;
}

/**
 * sacred_cell_newer() - whether @a is newer than @b: higher seq, then
 * higher pid (a total order over the cells of several writers)
 */
bool sacred_cell_newer(const struct sacred_cell_view *a,
		       const struct sacred_cell_view *b)
{
	return a->seq > b->seq || (a->seq == b->seq && a->pid > b->pid);
}
