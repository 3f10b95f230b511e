/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - the SACRED-MA primitives: cells, owned and shared regions of
 * slots, the shared state table, the atomic register.
 *
 * Part of the public API: <sacred.h> includes every layer's header;
 * this one may be included alone (<sacred/prims.h>).
 */
#ifndef _SACRED_PRIMS_H
#define _SACRED_PRIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/sacred.h>

#include "rmem.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ----------------------------------------------------------------------
 * The SACRED-MA primitives, bottom up: cells (lib/cell.c), owned and
 * shared regions of slots (lib/slots.c), the shared state table
 * (lib/sst.c) and the atomic register (lib/register.c).
 * ----------------------------------------------------------------------
 */

/* Bytes of a cell's header: seq, pid, len, checksum (lib/cell.c). */
#define SACRED_CELL_HDR	24

/**
 * struct sacred_cell_view - what a valid cell holds
 * @seq: its sequence number (never 0)
 * @pid: the process that wrote it
 * @len: payload bytes
 * @data: the payload, inside the cell that was decoded
 */
struct sacred_cell_view {
	uint64_t seq;
	uint32_t pid;
	uint32_t len;
	const void *data;
};

/**
 * sacred_cell_encode() - build a self-checking cell of @size bytes
 *
 * Return: 0, or -EINVAL (seq 0, payload does not fit).
 */
int sacred_cell_encode(void *cell, size_t size, uint64_t seq, uint32_t pid,
		       const void *data, size_t len);

/**
 * sacred_cell_decode() - check a cell read from a memory
 *
 * Return: 0 (valid, @out filled), -ENODATA (empty), -EBADMSG (torn or
 * garbage), -EINVAL.
 */
int sacred_cell_decode(const void *cell, size_t size,
		       struct sacred_cell_view *out);

/** sacred_cell_newer() - @a is newer than @b: seq, then pid */
bool sacred_cell_newer(const struct sacred_cell_view *a,
		       const struct sacred_cell_view *b);

struct sacred_slots;

#define SACRED_SLOTS_SHARED	(1U << 0)

/**
 * sacred_slots_open() - a replicated region as @nr_slots slots of cells:
 * owned (one writer, enforced by the memory) or, with
 * SACRED_SLOTS_SHARED, shared (every member writes; newest cell wins)
 *
 * Return: 0; -EINVAL, -ENOMEM, -ENOSPC (does not fit), -EMSGSIZE (two
 * cells exceed the replicated memory's max_io); replicated-memory errors.
 */
int sacred_slots_open(struct sacred_rmem *rm, uint32_t region_id,
		      size_t payload_max, unsigned int nr_slots,
		      unsigned int flags, struct sacred_slots **s);

/** sacred_slots_close() - free @s; NULL is ok */
void sacred_slots_close(struct sacred_slots *s);

/** sacred_slots_writer() - this process holds write access on a quorum */
bool sacred_slots_writer(const struct sacred_slots *s);

/**
 * sacred_slots_write() - write a new cell into slot @slot on a quorum
 *
 * Return: 0; -EPERM (owned region, not the owner); -EINVAL; -EMSGSIZE;
 * -ENOTCONN also when a writer that opened the region again cannot tell
 * yet which cell holds its last complete write; the errors of
 * sacred_rmem_write().
 */
int sacred_slots_write(struct sacred_slots *s, unsigned int slot,
		       const void *data, size_t len);

/**
 * sacred_slots_read() - the newest valid cell of slot @slot on a quorum
 *
 * Return: 0; -ENODATA (never written); -ENOSPC (@max too small);
 * the errors of sacred_rmem_read().
 */
int sacred_slots_read(struct sacred_slots *s, unsigned int slot, void *data,
		      size_t max, struct sacred_cell_view *view);

/**
 * sacred_slots_read_after() - as sacred_slots_read(), each memory's read
 * sent only after changePermission @perm was answered there, in one
 * sacred_rmem_chain(): cells only from memories where both succeeded
 *
 * Return: as sacred_slots_read(); the errors of sacred_rmem_chain()
 * (-EPERM: the policies refused the change).
 */
int sacred_slots_read_after(struct sacred_slots *s, unsigned int slot,
			    const struct sacred_perm_req *perm, void *data,
			    size_t max, struct sacred_cell_view *view);

/**
 * sacred_slots_read_many() - as sacred_slots_read(), for @nr slots of
 * handles on the same replicated memory, in one quorum round trip
 * (sacred_rmem_batch()); each slot's outcome in @rets[k]
 *
 * Return: 0 (the quorum read was done); -EINVAL; -ENOMEM; -EMSGSIZE; the
 * errors of sacred_rmem_batch().
 */
int sacred_slots_read_many(struct sacred_slots *const *s,
			   const unsigned int *slots, unsigned int nr,
			   void *const *data, size_t max,
			   struct sacred_cell_view *views, int *rets);

struct sacred_sst;

#define SACRED_SST_MAX_ROWS	64

/**
 * sacred_sst_open() - a shared state table: row r is owned region
 * @base_region + r, written by one process, read by all
 *
 * Return: 0; -EPERM when this process cannot write @my_row; as
 * sacred_slots_open().
 */
int sacred_sst_open(struct sacred_rmem *rm, uint32_t base_region,
		    unsigned int nr_rows, unsigned int my_row, size_t row_max,
		    struct sacred_sst **sst);

/** sacred_sst_close() - free @sst; NULL is ok */
void sacred_sst_close(struct sacred_sst *sst);

/** sacred_sst_rows() - rows of @sst */
unsigned int sacred_sst_rows(const struct sacred_sst *sst);

/** sacred_sst_my_row() - this process's row */
unsigned int sacred_sst_my_row(const struct sacred_sst *sst);

/** sacred_sst_push() - write this process's row on a quorum */
int sacred_sst_push(struct sacred_sst *sst, const void *row, size_t len);

/** sacred_sst_pull() - read row @r (newest valid cell on a quorum) */
int sacred_sst_pull(struct sacred_sst *sst, unsigned int r, void *buf,
		    size_t max, struct sacred_cell_view *view);

/**
 * sacred_sst_pull_all() - read every row into @bufs[r]; a row never
 * pushed gets seq 0 in @views[r]
 */
int sacred_sst_pull_all(struct sacred_sst *sst, void *const *bufs,
			size_t max, struct sacred_cell_view *views);

struct sacred_register;

/**
 * sacred_register_open() - an atomic multi-writer multi-reader register on
 * an SST (rows @base_region ..)
 */
int sacred_register_open(struct sacred_rmem *rm, uint32_t base_region,
			 unsigned int nr_rows, unsigned int my_row,
			 size_t value_max, struct sacred_register **reg);

/** sacred_register_close() - free @reg; NULL is ok */
void sacred_register_close(struct sacred_register *reg);

/** sacred_register_write() - write a value; 0 once linearized */
int sacred_register_write(struct sacred_register *reg, const void *value,
			  size_t len);

/**
 * sacred_register_read() - read the value (with write-back)
 *
 * Return: 0; -ENODATA (never written); -ENOSPC; replicated-memory errors.
 */
int sacred_register_read(struct sacred_register *reg, void *value,
			 size_t max, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_PRIMS_H */
