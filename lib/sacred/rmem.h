/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - replicated memory: m memory instances used as one.
 *
 * Part of the public API: <sacred.h> includes every layer's header;
 * this one may be included alone (<sacred/rmem.h>).
 */
#ifndef _SACRED_RMEM_H
#define _SACRED_RMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/sacred.h>

#include "conn.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ----------------------------------------------------------------------
 * Replicated memory (lib/rmem.c): m memory instances, each holding the
 * same regions (same ids), used as one memory that survives the crash of
 * a minority. Every call goes to all memories and returns once a quorum
 * (m / 2 + 1) answered; what each memory said is in the result.
 * ----------------------------------------------------------------------
 */

#define SACRED_RMEM_MAX	16

struct sacred_rmem;

/**
 * struct sacred_rmem_member - one memory of a replicated memory
 * @addr: its address (AF_INET or AF_INET6) with its rdma_cm port
 * @key: the process's key for it, or NULL (see &struct sacred_conn_attr)
 * @timeout_ms: how long an operation on it may take; 0 means 2000
 */
struct sacred_rmem_member {
	const struct sockaddr *addr;
	const uint8_t *key;
	int timeout_ms;
};

/**
 * struct sacred_rmem_attr - what sacred_rmem_create() connects to
 * @process_id: the process, the same on every memory
 * @nr_mems: memories, 1 to SACRED_RMEM_MAX
 * @mems: the memories
 * @max_io: largest READ or WRITE; 0 means 4096
 * @queue_depth: operations in flight per memory, as in &struct
 *	sacred_conn_attr; stragglers of earlier calls count
 */
struct sacred_rmem_attr {
	uint32_t process_id;
	unsigned int nr_mems;
	const struct sacred_rmem_member *mems;
	size_t max_io;
	unsigned int queue_depth;
};

/**
 * struct sacred_rmem_result - what each memory said to one call
 * @nr_mems: entries used below
 * @ok: memories that succeeded in time (bit i: memory i)
 * @done: memories that answered in time, with success or not
 * @status: each memory's status: 0, a negative errno, -EINPROGRESS if it
 *	had not answered when the call returned, -ENOTCONN if it was not
 *	connected
 * @perm: sacred_rmem_change_perm(): each memory's answer
 */
struct sacred_rmem_result {
	unsigned int nr_mems;
	uint32_t ok;
	uint32_t done;
	int status[SACRED_RMEM_MAX];
	struct sacred_perm_result perm[SACRED_RMEM_MAX];
};

/**
 * sacred_rmem_create() - connect to every memory; a minority may fail
 *
 * Return: 0, -EINVAL, -ENOMEM, or the last connection error when fewer
 * than a quorum connected.
 */
int sacred_rmem_create(const struct sacred_rmem_attr *attr,
		       struct sacred_rmem **rm);

/** sacred_rmem_destroy() - disconnect and free @rm; NULL is ok */
void sacred_rmem_destroy(struct sacred_rmem *rm);

/** sacred_rmem_nr_mems() - how many memories @rm has */
unsigned int sacred_rmem_nr_mems(const struct sacred_rmem *rm);

/** sacred_rmem_quorum() - how many make a quorum: nr_mems / 2 + 1 */
unsigned int sacred_rmem_quorum(const struct sacred_rmem *rm);

/** sacred_rmem_process_id() - the process @rm connects as */
uint32_t sacred_rmem_process_id(const struct sacred_rmem *rm);

/** sacred_rmem_max_io() - the largest READ or WRITE @rm takes */
size_t sacred_rmem_max_io(const struct sacred_rmem *rm);

/** sacred_rmem_up() - bit mask of the memories connected now */
uint32_t sacred_rmem_up(const struct sacred_rmem *rm);

/** sacred_rmem_conn() - the connection to memory @i (owned by @rm) */
struct sacred_conn *sacred_rmem_conn(struct sacred_rmem *rm, unsigned int i);

/**
 * sacred_rmem_revive() - reconnect the memories not connected (regions
 * attached again); returns how many are connected afterwards
 */
int sacred_rmem_revive(struct sacred_rmem *rm);

/**
 * sacred_rmem_attach() - attach a region on every memory; only memories
 * whose region has the tag a quorum shares count (the others: -ESTALE)
 *
 * Return: 0 when a quorum attached one incarnation; -EPROTO when no
 * quorum of those that attached shares a tag; else as
 * sacred_rmem_write().
 */
int sacred_rmem_attach(struct sacred_rmem *rm, uint32_t region_id,
		       struct sacred_rmem_result *res);

/**
 * sacred_rmem_region_tag() - the region's tag (the one the handle learned
 * from a quorum, else as the memories that attached it told it); @mask
 * (may be NULL) gets which memories hold it
 *
 * Return: 0; -ENOENT (attached nowhere); -EPROTO (no tag learned, and
 * memories disagree).
 */
int sacred_rmem_region_tag(const struct sacred_rmem *rm, uint32_t region_id,
			   uint64_t *tag, uint32_t *mask);

/**
 * sacred_rmem_write() - write to every memory, return at a quorum
 *
 * Return: 0 when a quorum acknowledged; otherwise, most telling first,
 * -EACCES (access refused), -ENOENT, -ECONNRESET (connections broke),
 * -ETIMEDOUT, -ENOTCONN (too few connected); -EINVAL, -EMSGSIZE.
 */
int sacred_rmem_write(struct sacred_rmem *rm, uint32_t region_id,
		      uint64_t offset, const void *buf, size_t len,
		      struct sacred_rmem_result *res);

/**
 * sacred_rmem_read() - read from every memory into @bufs[i], return at a
 * quorum (or, with @all, when every memory answered or timed out)
 *
 * Return: 0 when a quorum answered; otherwise as sacred_rmem_write().
 */
int sacred_rmem_read(struct sacred_rmem *rm, uint32_t region_id,
		     uint64_t offset, void *const *bufs, size_t len, bool all,
		     struct sacred_rmem_result *res);

#define SACRED_RMEM_CHAIN_MAX	8

/**
 * sacred_rmem_chain() - run @ops (the same for every memory) on every
 * memory, each memory's in order - the next sent once the one before it
 * succeeded there - and return when a quorum completed them all; the
 * READ among them (at most one) lands in @bufs[i]
 *
 * Return: 0 when a quorum completed all; otherwise as sacred_rmem_write().
 */
int sacred_rmem_chain(struct sacred_rmem *rm, const struct sacred_io *ops,
		      unsigned int nops, void *const *bufs,
		      struct sacred_rmem_result *res);

/**
 * sacred_rmem_batch() - run up to SACRED_RMEM_CHAIN_MAX READs and WRITEs
 * (the same for every memory) on every memory all at once, in no order,
 * and return when a quorum completed them all: one round trip; the READs
 * land one after the other in @bufs[i]
 *
 * Return: 0 when a quorum completed all; otherwise as sacred_rmem_write().
 */
int sacred_rmem_batch(struct sacred_rmem *rm, const struct sacred_io *ops,
		      unsigned int nops, void *const *bufs,
		      struct sacred_rmem_result *res);

/**
 * sacred_rmem_change_perm() - changePermission on every memory
 *
 * Return: 0 when a quorum accepted; -EPERM when refused by enough
 * policies; otherwise as sacred_rmem_write().
 */
int sacred_rmem_change_perm(struct sacred_rmem *rm,
			    const struct sacred_perm_req *req,
			    struct sacred_rmem_result *res);

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_RMEM_H */
