/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - the replicated log: multi-slot Protected Memory Paxos with
 * leader election and fail-over.
 *
 * Part of the public API: <sacred.h> includes every layer's header;
 * this one may be included alone (<sacred/log.h>).
 */
#ifndef _SACRED_LOG_H
#define _SACRED_LOG_H

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
 * Replicated log (lib/log.c): multi-slot Protected Memory Paxos with a
 * stable leader, a heartbeat failure detector over RDMA, and fail-over
 * that fences the old leader through the permission switch.
 * ----------------------------------------------------------------------
 */

struct sacred_log;

#define SACRED_LOG_MAX_PROCS	16

/**
 * sacred_log_commit_fn - called once per decided entry, in index order,
 * from sacred_log_poll() or sacred_log_propose()
 */
typedef void (*sacred_log_commit_fn)(void *arg, uint64_t index,
				     const void *data, size_t len);

/**
 * sacred_log_snapshot_fn - write the state after the first @applied
 * entries into @buf, at most @max bytes; return its length, or a negative
 * errno (-ENOSPC: it does not fit)
 */
typedef ssize_t (*sacred_log_snapshot_fn)(void *arg, uint64_t applied,
					  void *buf, size_t max);

/**
 * sacred_log_restore_fn - replace the whole state with a snapshot's, the
 * state after the first @applied entries; 0, or a negative errno if @buf
 * cannot be taken (the log then stays where it was)
 */
typedef int (*sacred_log_restore_fn)(void *arg, uint64_t applied,
				     const void *buf, size_t len);

/**
 * struct sacred_log_attr - a replicated log
 * @rm: the replicated memory; must outlive the log
 * @log_region: the log (same id on every memory): exclusive-writer, every
 *	process a read-write member; at least sacred_log_region_size()
 *	bytes
 * @hb_region: heartbeats: static, everyone read-write, 8 * nr_procs bytes
 * @nr_procs: processes, 1 to SACRED_LOG_MAX_PROCS
 * @me: this process, 0 .. nr_procs - 1; the lowest alive one leads
 * @capacity: entries the log holds; with snapshots, the window of the
 *	latest entries it holds (index i in slot i % capacity)
 * @entry_max: the largest entry
 * @hb_period_ms: heartbeat period; 0 means 10
 * @suspect_ms: a process whose heartbeat did not move this long is
 *	suspected; 0 means 200. Its first timeout: a process found alive
 *	after it was suspected gets its timeout doubled, up to 16 x
 *	@suspect_ms
 * @calm_timeouts: a raised timeout halves, never below @suspect_ms, once
 *	its process was seen alive for this many of it without a heartbeat
 *	round finding it still for half of it; 0 means 8
 * @commit: called for every decided entry, in order; may be NULL
 * @arg: passed to @commit, @snapshot and @restore
 * @snapshot_max: 0: no snapshots, the log is full after @capacity
 *	entries. Otherwise the largest snapshot (at most 1 GiB; one cell of
 *	it must take at most SACRED_RMEM_CHAIN_MAX writes of max_io): the
 *	leader writes one every @capacity / 2 appends, entries a snapshot
 *	covers are overwritten, and a process that needs one of those
 *	restores the newest snapshot instead
 * @snapshot: with @snapshot_max, the state after the entries applied
 * @restore: with @snapshot_max, install a snapshot
 */
struct sacred_log_attr {
	struct sacred_rmem *rm;
	uint32_t log_region;
	uint32_t hb_region;
	unsigned int nr_procs;
	unsigned int me;
	unsigned int capacity;
	size_t entry_max;
	int hb_period_ms;
	int suspect_ms;
	int calm_timeouts;
	sacred_log_commit_fn commit;
	void *arg;
	size_t snapshot_max;
	sacred_log_snapshot_fn snapshot;
	sacred_log_restore_fn restore;
};

/**
 * struct sacred_log_stats - a log's counters
 * @takeovers: times this process tried to take over (a leader, too,
 *	when a memory its takeover did not reach came back)
 * @step_downs: times it stopped leading
 * @appends: entries it appended as leader
 * @recovered: entries it accepted again in a takeover
 * @round_trips: quorum round trips of its log operations (not heartbeats)
 * @snapshots: snapshots it wrote (as leader)
 * @restores: snapshots it installed (it was behind the overwritten part)
 * @timeouts_raised: times it doubled its timeout for another process,
 *	found alive after it suspected it
 * @half_stills: times another process was found alive after a heartbeat
 *	round found it still for half its timeout (but not all): its calm
 *	stretch began again
 * @timeouts_lowered: times it halved its timeout for another process
 *	after a calm stretch
 */
struct sacred_log_stats {
	uint64_t takeovers;
	uint64_t step_downs;
	uint64_t appends;
	uint64_t recovered;
	uint64_t round_trips;
	uint64_t snapshots;
	uint64_t restores;
	uint64_t timeouts_raised;
	uint64_t half_stills;
	uint64_t timeouts_lowered;
};

/**
 * sacred_log_region_size() - bytes the log region of @attr needs; 0 for
 * an invalid @attr
 */
uint64_t sacred_log_region_size(const struct sacred_log_attr *attr);

/**
 * sacred_log_open() - join a replicated log
 *
 * A process that crashed may join again with its id (never while the old
 * one runs): it delivers the log again from the start - or from the
 * newest snapshot, once the start was overwritten - and learns from the
 * memories which of its cells it must keep (see lib/log.c).
 *
 * Return: 0; -EINVAL; -ENOMEM; -EMSGSIZE (max_io too small); -ENOSPC (the
 * log region is smaller than sacred_log_region_size()); the replicated
 * memory's errors.
 */
int sacred_log_open(const struct sacred_log_attr *attr,
		    struct sacred_log **l);

/** sacred_log_close() - free @l; NULL is ok */
void sacred_log_close(struct sacred_log *l);

/**
 * sacred_log_poll() - heartbeats, election, takeover, catching up; call
 * it every few milliseconds, leader or not
 */
int sacred_log_poll(struct sacred_log *l);

/**
 * sacred_log_propose() - append an entry; leader only
 *
 * Return: 0 (decided, delivered); -EREMOTE (not the leader); -EACCES
 * (write permission lost: another process took over); -ENOSPC (full, or
 * no snapshot when one was needed);
 * -ENOTCONN, -ECONNRESET, -ETIMEDOUT (no quorum); -EINVAL, -EMSGSIZE.
 */
int sacred_log_propose(struct sacred_log *l, const void *data, size_t len,
		       uint64_t *index);

/** sacred_log_leader() - the process the failure detector elects, or -1 */
int sacred_log_leader(const struct sacred_log *l);

/** sacred_log_is_leader() - this process leads now */
bool sacred_log_is_leader(const struct sacred_log *l);

/** sacred_log_applied() - entries delivered to the commit callback */
uint64_t sacred_log_applied(const struct sacred_log *l);

/**
 * sacred_log_suspect_ms() - how long process @p's heartbeat must stand
 * still for @l to suspect it now (ms); 0 when @p is out of range
 */
uint64_t sacred_log_suspect_ms(const struct sacred_log *l, unsigned int p);

/** sacred_log_stats() - the log's counters */
void sacred_log_stats(const struct sacred_log *l,
		      struct sacred_log_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_LOG_H */
