/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - data path: one RC connection to one memory instance, blocking
 * and asynchronous.
 *
 * Part of the public API: <sacred.h> includes every layer's header;
 * this one may be included alone (<sacred/conn.h>).
 */
#ifndef _SACRED_CONN_H
#define _SACRED_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/sacred.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ----------------------------------------------------------------------
 * Data path (lib/conn.c, lib/conn_sync.c, lib/conn_reconnect.c): one RC
 * connection from this process to one memory instance (librdmacm +
 * libibverbs), region attach, RDMA READ, WRITE, compare-and-swap,
 * fetch-and-add, and changePermission. Every call is synchronous and
 * returns 0 or a negative errno; a connection is used by one thread at a
 * time. sacred_conn_errmsg() describes the last failure.
 *
 * A failed completion, a timeout, a disconnect by the memory or a
 * malformed message from it breaks the connection: every later call
 * returns -ECONNRESET until sacred_conn_reconnect().
 * ----------------------------------------------------------------------
 */

struct sacred_conn;

/**
 * struct sacred_conn_attr - what sacred_conn_create() connects to, and how
 * @addr: the instance's address (AF_INET or AF_INET6) with its rdma_cm
 *	port
 * @process_id: the process's id; one connection per id and instance
 * @timeout_ms: bound on address and route resolution and connecting
 *	(counted from librdmacm's initialization, which the first
 *	connection of a process pays for), and on every blocking call; 0
 *	means 2000
 * @bounce_size: bytes of the registered buffer READ and WRITE copy
 *	through, and the largest single RDMA operation; 0 means 1 MiB, at
 *	most 1 GiB
 * @key: the process's key (SACRED_MAC_LEN bytes, sacred_process_key()) for
 *	an instance that has a master key; NULL otherwise. Copied.
 * @queue_depth: asynchronous operations in flight at most (sacred_io_post());
 *	each gets bounce_size / queue_depth bytes of the bounce buffer. 0
 *	means 16; at most 256.
 * @flags: SACRED_CONN_AUTO_RECONNECT: a call on a broken connection first
 *	reconnects (sacred_conn_reconnect()) instead of failing with
 *	-ECONNRESET
 */
struct sacred_conn_attr {
	const struct sockaddr *addr;
	uint32_t process_id;
	int timeout_ms;
	size_t bounce_size;
	const uint8_t *key;
	unsigned int queue_depth;
	unsigned int flags;
};

#define SACRED_CONN_AUTO_RECONNECT	(1U << 0)

/**
 * sacred_process_key() - derive a process's key from an instance's master
 * key, as the instance does (uapi "Identity")
 * @master: the master key, SACRED_KEY_MIN..SACRED_KEY_MAX bytes
 * @len: bytes in @master
 * @process_id: the process
 * @key: SACRED_MAC_LEN bytes: the process's key
 *
 * For the admin who hands processes their keys; a process never needs
 * the master key.
 *
 * Return: 0, or -EINVAL for a master key of the wrong length.
 */
int sacred_process_key(const void *master, size_t len, uint32_t process_id,
		       uint8_t *key);

/**
 * struct sacred_region_attr - a region, as the memory described it
 * @region_id: the region
 * @access: &enum sacred_access bits held
 * @rkey: key for RDMA on the region; 0 when @access is 0
 * @epoch: the region's permission epoch when the memory answered
 * @addr: remote address of the region's byte 0
 * @size: bytes
 * @tag: the region's tag (struct sacred_region_info.tag)
 */
struct sacred_region_attr {
	uint32_t region_id;
	uint32_t access;
	uint32_t rkey;
	uint32_t epoch;
	uint64_t addr;
	uint64_t size;
	uint64_t tag;
};

/**
 * struct sacred_perm_req - a changePermission request
 * @region_id: the region
 * @access: access wanted: 0, READ, READ|WRITE or READ|WRITE|ATOMIC
 * @ballot: fenced regions: the grant's ballot; otherwise 0
 * @target: revoke-only regions: the process whose write access is
 *	revoked; otherwise 0
 */
struct sacred_perm_req {
	uint32_t region_id;
	uint32_t access;
	uint64_t ballot;
	uint32_t target;
};

/**
 * struct sacred_perm_result - the memory's answer to a changePermission
 * @status: &enum sacred_wire_status
 * @reason: &enum sacred_refuse_reason when refused
 * @region: the region after an accepted change; after a refusal only its
 *	@epoch and @size are meaningful
 */
struct sacred_perm_result {
	uint32_t status;
	uint32_t reason;
	struct sacred_region_attr region;
};

/**
 * sacred_conn_create() - connect to a memory instance
 *
 * Return: 0; -ECONNREFUSED (nothing listens, or the instance is down),
 * -EACCES (the instance has a key and @attr's did not prove the process),
 * -EADDRINUSE (the process id is connected already), -EPROTONOSUPPORT
 * (wire version), -ENOMEM, -EPROTO, -ETIMEDOUT, or another negative errno.
 */
int sacred_conn_create(const struct sacred_conn_attr *attr,
		       struct sacred_conn **conn);

/** sacred_conn_destroy() - disconnect and free @conn; NULL is ok */
void sacred_conn_destroy(struct sacred_conn *conn);

/**
 * sacred_conn_reconnect() - new connection, same process and instance;
 * every attached region is attached again with a fresh key
 *
 * Return: 0; -ESTALE if another instance answers at the address now; the
 * errors of sacred_conn_create() and sacred_attach().
 */
int sacred_conn_reconnect(struct sacred_conn *conn);

/**
 * sacred_conn_reconnect_async() - sacred_conn_reconnect() in steps that
 * never wait for the network: the first call starts an attempt, each
 * later one moves it on by what the rdma_cm answered since
 *
 * Return: 0 when connected and the regions attached again; -EINPROGRESS
 * while under way; otherwise as sacred_conn_reconnect(), and the next
 * call starts anew.
 */
int sacred_conn_reconnect_async(struct sacred_conn *conn);

/** sacred_conn_mem_id() - id of the instance @conn is connected to */
uint32_t sacred_conn_mem_id(const struct sacred_conn *conn);

/**
 * sacred_conn_errmsg() - one line on the last call's failure, or NULL if
 * it succeeded
 */
const char *sacred_conn_errmsg(const struct sacred_conn *conn);

/**
 * sacred_conn_broken() - true once a call saw the connection break; every
 * later call fails with -ECONNRESET until sacred_conn_reconnect()
 */
bool sacred_conn_broken(const struct sacred_conn *conn);

/**
 * sacred_attach() - learn a region's key, bounds and the access held
 *
 * Return: 0; -ENOENT (no such region), -EACCES (not a member),
 * -ECONNRESET, -ETIMEDOUT, -EPROTO, or another negative errno.
 */
int sacred_attach(struct sacred_conn *conn, uint32_t region_id,
		  struct sacred_region_attr *attr);

/** sacred_detach() - forget an attached region (local); -ENOENT if not */
int sacred_detach(struct sacred_conn *conn, uint32_t region_id);

/** sacred_conn_region() - the cached attributes of an attached region */
int sacred_conn_region(const struct sacred_conn *conn, uint32_t region_id,
		       struct sacred_region_attr *attr);

/**
 * sacred_change_perm() - changePermission
 *
 * Return: 0 when accepted (@result->region and the cached key updated);
 * -EPERM when the policy refused (@result->reason says why); -EINVAL,
 * -ENOENT, -EACCES, -EIO (the memory failed to apply it), -ESTALE (the
 * region was made again since it was attached: nothing sent), -ECONNRESET,
 * -ETIMEDOUT, -EPROTO.
 */
int sacred_change_perm(struct sacred_conn *conn,
		       const struct sacred_perm_req *req,
		       struct sacred_perm_result *result);

/**
 * sacred_read() - RDMA READ of @len bytes at @offset of a region
 *
 * Return: 0; -ENOENT (not attached), -ESTALE (made again since it was
 * attached), -ERANGE (outside the region; nothing sent), -EACCES
 * (refused by the memory, which breaks the connection, or no access
 * held), -ECONNRESET, -ETIMEDOUT.
 */
int sacred_read(struct sacred_conn *conn, uint32_t region_id,
		uint64_t offset, void *buf, size_t len);

/**
 * sacred_write() - RDMA WRITE of @len bytes at @offset of a region
 *
 * Return: as sacred_read(). A failed write may have landed, in whole or
 * in part.
 */
int sacred_write(struct sacred_conn *conn, uint32_t region_id,
		 uint64_t offset, const void *buf, size_t len);

/**
 * sacred_cas() - compare-and-swap of the 8-byte word at @offset; *@old
 * (may be NULL) gets its previous value: it was swapped iff *@old ==
 * @expect
 *
 * Return: as sacred_read(); -EINVAL if @offset is not 8-byte aligned;
 * -EOPNOTSUPP if the device does no atomics.
 */
int sacred_cas(struct sacred_conn *conn, uint32_t region_id, uint64_t offset,
	       uint64_t expect, uint64_t swap, uint64_t *old);

/** sacred_faa() - fetch-and-add on the 8-byte word at @offset */
int sacred_faa(struct sacred_conn *conn, uint32_t region_id, uint64_t offset,
	       uint64_t add, uint64_t *old);

/*
 * ----------------------------------------------------------------------
 * Asynchronous data path (lib/conn_io.c): post many operations, on one
 * connection or on several (one per memory), and take their results as
 * they complete. A connection's blocking calls return -EBUSY while
 * asynchronous operations are in flight on it.
 * ----------------------------------------------------------------------
 */

/** enum sacred_io_opcode - what a &struct sacred_io does */
enum sacred_io_opcode {
	SACRED_IO_READ = 1,
	SACRED_IO_WRITE,
	SACRED_IO_CAS,
	SACRED_IO_FAA,
	SACRED_IO_PERM,
};

/**
 * struct sacred_io - one asynchronous operation
 * @user_data: the caller's, returned in the result
 * @opcode: &enum sacred_io_opcode
 * @region_id: READ, WRITE, CAS, FAA: an attached region
 * @offset: READ, WRITE, CAS, FAA: first byte (8-byte aligned for atomics)
 * @buf: READ: where the bytes go (valid until the result is taken);
 *	WRITE: the bytes (copied when posted)
 * @len: READ, WRITE: bytes; at most bounce_size / queue_depth
 * @compare_add: CAS: the value expected; FAA: what to add
 * @swap: CAS: the new value
 * @perm: PERM: the changePermission request
 */
struct sacred_io {
	uint64_t user_data;
	uint32_t opcode;
	uint32_t region_id;
	uint64_t offset;
	void *buf;
	uint32_t len;
	uint64_t compare_add;
	uint64_t swap;
	struct sacred_perm_req perm;
};

/**
 * struct sacred_io_result - the outcome of one &struct sacred_io
 * @user_data: as posted
 * @opcode: as posted
 * @region_id: the region (for PERM, @perm.region_id of the request)
 * @status: 0 or a negative errno, as the blocking call would return
 * @old: CAS, FAA: the word's previous value
 * @perm: PERM: the memory's answer, as sacred_change_perm() gives it
 */
struct sacred_io_result {
	uint64_t user_data;
	uint32_t opcode;
	uint32_t region_id;
	int status;
	uint64_t old;
	struct sacred_perm_result perm;
};

/**
 * sacred_io_post() - start up to @n operations on @conn, in order
 *
 * Return: the number posted (>= 1), or a negative errno when none was:
 * -EAGAIN (no free slot, or no credit for a changePermission), -EMSGSIZE,
 * and the checks of the blocking calls.
 */
int sacred_io_post(struct sacred_conn *conn, const struct sacred_io *io,
		   unsigned int n);

/**
 * sacred_io_poll() - take up to @max results of @conn, oldest first;
 * never blocks
 *
 * Return: the number of results stored (0 if none is ready), or -EINVAL.
 */
int sacred_io_poll(struct sacred_conn *conn, struct sacred_io_result *res,
		   unsigned int max);

/**
 * sacred_io_wait() - wait until any of @conns has results to poll
 *
 * Return: how many of them have results; 0 on timeout or when nothing is
 * in flight; a negative errno.
 */
int sacred_io_wait(struct sacred_conn *const *conns, unsigned int n,
		   int timeout_ms);

/** sacred_io_pending() - operations posted whose results are not taken */
unsigned int sacred_io_pending(const struct sacred_conn *conn);

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_CONN_H */
