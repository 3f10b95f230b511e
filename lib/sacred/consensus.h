/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - consensus: Protected Memory Paxos and Disk Paxos (single shot),
 * Cheap Quorum with its robust backup (Byzantine), and Cheap Quorum's
 * old names.
 *
 * Part of the public API: <sacred.h> includes every layer's header;
 * this one may be included alone (<sacred/consensus.h>).
 */
#ifndef _SACRED_CONSENSUS_H
#define _SACRED_CONSENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/sacred.h>

#include "rmem.h"
#include "bz.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ----------------------------------------------------------------------
 * Single-shot consensus (lib/pmp.c): Protected Memory Paxos, and Disk
 * Paxos as the baseline, behind one interface.
 * ----------------------------------------------------------------------
 */

struct sacred_pmp;

#define SACRED_PMP_MAX_PROCS	64

/**
 * enum sacred_pmp_alg - which algorithm a &struct sacred_pmp runs
 * @SACRED_PMP: Protected Memory Paxos; the region's policy is
 *	exclusive-writer, every process a read-write member
 * @SACRED_DISK_PAXOS: Disk Paxos; a static region, everyone read-write
 * @SACRED_PMP_BALLOT: Protected Memory Paxos whose requests for write
 *	carry the proposal number as their ballot, for memories that grant
 *	write only above the highest ballot granted so far: policy fenced,
 *	or bpf with examples/policies/ballot.bpf.o. A request refused for
 *	a stale ballot is contention (a higher proposal took the memory):
 *	the attempt is retried above it. The first leader's write comes from
 *	the admin, with ballot 1 (the fast path's proposal number).
 */
enum sacred_pmp_alg {
	SACRED_PMP = 1,
	SACRED_DISK_PAXOS,
	SACRED_PMP_BALLOT,
};

/**
 * struct sacred_pmp_attr - a consensus instance
 * @rm: the replicated memory; must outlive the instance
 * @region_id: the region holding the instance's slots (same id on every
 *	memory), at least nr_procs * 2 * ((value_max + 55) & ~7) bytes
 * @alg: &enum sacred_pmp_alg
 * @nr_procs: processes taking part, each with a slot
 * @me: this process's slot, 0 .. @nr_procs - 1; slot 0 may take the fast
 *	path on its first attempt
 * @value_max: the largest value
 * @timeout_ms: how long sacred_pmp_propose() keeps trying; 0 means 10 s
 */
struct sacred_pmp_attr {
	struct sacred_rmem *rm;
	uint32_t region_id;
	int alg;
	unsigned int nr_procs;
	unsigned int me;
	size_t value_max;
	int timeout_ms;
};

/**
 * struct sacred_pmp_stats - what a sacred_pmp_propose() took
 * @attempts: attempts made
 * @aborts: attempts given up for contention
 * @round_trips: quorum round trips (changePermission, write, read)
 * @fast: the decision came on the fast path
 */
struct sacred_pmp_stats {
	unsigned int attempts;
	unsigned int aborts;
	unsigned int round_trips;
	bool fast;
};

/** sacred_pmp_open() - join a consensus instance */
int sacred_pmp_open(const struct sacred_pmp_attr *attr,
		    struct sacred_pmp **p);

/** sacred_pmp_close() - free @p; NULL is ok */
void sacred_pmp_close(struct sacred_pmp *p);

/**
 * sacred_pmp_propose() - propose @v; @out gets the decided value
 *
 * Return: 0; -EBUSY (contention outlasted attr.timeout_ms); -ENOTCONN,
 * -ECONNRESET, -ETIMEDOUT (no quorum); -EPERM (a policy refused: the
 * region is not exclusive-writer); -EINVAL, -EMSGSIZE, -ENOSPC.
 */
int sacred_pmp_propose(struct sacred_pmp *p, const void *v, size_t len,
		       void *out, size_t max, size_t *out_len);

/** sacred_pmp_stats() - counters of the last sacred_pmp_propose() */
void sacred_pmp_stats(const struct sacred_pmp *p,
		      struct sacred_pmp_stats *stats);

/*
 * Byzantine consensus (lib/cheapq.c): Cheap Quorum's fast path - the leader
 * decides in one round trip when all processes are correct, the others a
 * few later - its panic, which revokes the leader's write permission for
 * good (revoke-only policy), and the robust backup, Paxos over
 * non-equivocating broadcast. n >= 2f + 1.
 */

struct sacred_cheapq;
struct sacred_ctrl;

/**
 * struct sacred_cheapq_attr - a Byzantine consensus instance
 * @rm: the replicated memory; must outlive the instance
 * @keys: the processes' keys (keys->nr_procs processes; process 0 leads
 *	the fast path)
 * @base_region: the first of the instance's 1 + 3n regions (layout in
 *	lib/cheapq.c; sacred_cheapq_setup() creates them)
 * @leader_pid: the leader's process id; process i's is @leader_pid + i
 *	unless @pids is set
 * @value_max: the largest value
 * @timeout_ms: how long the fast path waits before it panics; 0 means 1000
 * @pids: the process ids of processes 0 .. n - 1, or NULL (see
 *	@leader_pid); copied at open
 * @rounds: backup rounds at most; 0 means 8, at most 64
 * @round_ms: how long each step of backup round r waits, times r + 1;
 *	0 means @timeout_ms
 * @tag: sacred_cheapq_setup(): the tag to make the regions with, or 0 for a
 *	random one (several hosts setting up one instance: the same
 *	non-zero tag on each); sacred_cheapq_open(): 0, or the tag the regions
 *	must have
 */
struct sacred_cheapq_attr {
	struct sacred_rmem *rm;
	const struct sacred_bz_keys *keys;
	uint32_t base_region;
	uint32_t leader_pid;
	size_t value_max;
	int timeout_ms;
	const uint32_t *pids;
	unsigned int rounds;
	int round_ms;
	uint64_t tag;
};

/* struct sacred_cheapq_stats.carried: what a panic carried into the backup */
#define SACRED_CHEAPQ_CARRY_INPUT	1	/* its own input */
#define SACRED_CHEAPQ_CARRY_LEADER	2	/* the leader's signed value */
#define SACRED_CHEAPQ_CARRY_COPY	3	/* its copy of it */
#define SACRED_CHEAPQ_CARRY_CERTIFIED	4	/* a unanimity certificate */

/**
 * struct sacred_cheapq_stats - what a sacred_cheapq_propose() took
 * @round_trips: quorum operations of the fast path and the panic
 *	(reads, writes, changePermissions)
 * @fast: decided on the fast path
 * @panicked: panicked (and decided in the backup)
 * @carried: SACRED_CHEAPQ_CARRY_*, after a panic
 * @backup_rounds: backup rounds this process took part in
 * @faulty: processes the backup caught sending invalid messages (bit i:
 *	process i), ignored from then on
 */
struct sacred_cheapq_stats {
	unsigned int round_trips;
	bool fast;
	bool panicked;
	unsigned int carried;
	unsigned int backup_rounds;
	uint32_t faulty;
};

/**
 * sacred_cheapq_setup() - create an instance's regions on memory instances,
 * with their policies and ACLs (as admin)
 */
int sacred_cheapq_setup(struct sacred_ctrl *ctrl, const uint32_t *mem_ids,
			unsigned int nr_mems,
			const struct sacred_cheapq_attr *attr,
			unsigned int nr_procs);

/** sacred_cheapq_open() - join an instance */
int sacred_cheapq_open(const struct sacred_cheapq_attr *attr,
		       struct sacred_cheapq **cheapq);

/** sacred_cheapq_close() - free @cheapq; NULL is ok */
void sacred_cheapq_close(struct sacred_cheapq *cheapq);

/**
 * sacred_cheapq_propose() - propose @v and decide: on the fast path, or after
 * a panic in the robust backup
 *
 * Return: 0 with the decision in @out; a negative errno.
 */
int sacred_cheapq_propose(struct sacred_cheapq *cheapq, const void *v,
			  size_t len, void *out, size_t max, size_t *out_len);

/**
 * sacred_cheapq_help() - after deciding, serve the backup until every process
 * is done or @timeout_ms passed
 */
int sacred_cheapq_help(struct sacred_cheapq *cheapq, int timeout_ms);

/**
 * sacred_cheapq_lead_value() - the leader writes a signed @v outside the
 * protocol: test harness for an equivocating leader
 */
int sacred_cheapq_lead_value(struct sacred_cheapq *cheapq, const void *v,
			     size_t len);

/**
 * enum sacred_cheapq_misbehave - what sacred_cheapq_misbehave() does
 * @SACRED_CHEAPQ_BAD_COPY: a follower writes a copy of a chosen value with a
 *	made-up leader signature
 * @SACRED_CHEAPQ_BAD_CARRY: carry a chosen value, with no proof, into the
 *	backup
 * @SACRED_CHEAPQ_BAD_PROPOSE: as backup leader, propose a chosen value
 * @SACRED_CHEAPQ_STALL_AFTER_COPY: be slow, not faulty: the next propose
 *	returns -EINPROGRESS right after its copy, the one after resumes
 * @SACRED_CHEAPQ_GARBAGE_COPY: a follower writes chosen bytes as its copy
 * @SACRED_CHEAPQ_REPLAY_COPY: a follower writes another follower's signed
 *	copy as its own
 * @SACRED_CHEAPQ_FORGED_CARRY: carry a chosen value into the backup as if the
 *	leader had signed it (a made-up signature)
 */
enum sacred_cheapq_misbehave {
	SACRED_CHEAPQ_BAD_COPY = 1,
	SACRED_CHEAPQ_BAD_CARRY,
	SACRED_CHEAPQ_BAD_PROPOSE,
	SACRED_CHEAPQ_STALL_AFTER_COPY,
	SACRED_CHEAPQ_GARBAGE_COPY,
	SACRED_CHEAPQ_REPLAY_COPY,
	SACRED_CHEAPQ_FORGED_CARRY,
};

/** sacred_cheapq_misbehave() - act Byzantine: for test harnesses only */
int sacred_cheapq_misbehave(struct sacred_cheapq *cheapq, int how,
			    const void *v, size_t len);

/** sacred_cheapq_stats() - counters of the last sacred_cheapq_propose() */
void sacred_cheapq_stats(const struct sacred_cheapq *cheapq,
			 struct sacred_cheapq_stats *st);

/*
 * Old names. Cheap Quorum was called "cq" before LIBSACRED_0.3, a name the
 * tree also uses for completion queues. The old functions stay exported
 * (same types, same behaviour) and the old names of types and constants
 * stay defined until 1.0; new code uses the sacred_cheapq_ names. Define
 * SACRED_NO_OLD_NAMES to get only the new ones.
 */
int sacred_cq_setup(struct sacred_ctrl *ctrl, const uint32_t *mem_ids,
		    unsigned int nr_mems, const struct sacred_cheapq_attr *attr,
		    unsigned int nr_procs);
int sacred_cq_open(const struct sacred_cheapq_attr *attr,
		   struct sacred_cheapq **cheapq);
void sacred_cq_close(struct sacred_cheapq *cheapq);
int sacred_cq_propose(struct sacred_cheapq *cheapq, const void *v, size_t len,
		      void *out, size_t max, size_t *out_len);
int sacred_cq_help(struct sacred_cheapq *cheapq, int timeout_ms);
int sacred_cq_lead_value(struct sacred_cheapq *cheapq, const void *v,
			 size_t len);
int sacred_cq_misbehave(struct sacred_cheapq *cheapq, int how, const void *v,
			size_t len);
void sacred_cq_stats(const struct sacred_cheapq *cheapq,
		     struct sacred_cheapq_stats *st);

#ifndef SACRED_NO_OLD_NAMES
/* struct tags, and the functions of the same name (both mean the new) */
#define sacred_cq			sacred_cheapq
#define sacred_cq_attr			sacred_cheapq_attr
#define sacred_cq_stats			sacred_cheapq_stats
#define sacred_cq_misbehave		sacred_cheapq_misbehave
#define SACRED_CQ_CARRY_INPUT		SACRED_CHEAPQ_CARRY_INPUT
#define SACRED_CQ_CARRY_LEADER		SACRED_CHEAPQ_CARRY_LEADER
#define SACRED_CQ_CARRY_COPY		SACRED_CHEAPQ_CARRY_COPY
#define SACRED_CQ_CARRY_CERTIFIED	SACRED_CHEAPQ_CARRY_CERTIFIED
#define SACRED_CQ_BAD_COPY		SACRED_CHEAPQ_BAD_COPY
#define SACRED_CQ_BAD_CARRY		SACRED_CHEAPQ_BAD_CARRY
#define SACRED_CQ_BAD_PROPOSE		SACRED_CHEAPQ_BAD_PROPOSE
#define SACRED_CQ_STALL_AFTER_COPY	SACRED_CHEAPQ_STALL_AFTER_COPY
#define SACRED_CQ_GARBAGE_COPY		SACRED_CHEAPQ_GARBAGE_COPY
#define SACRED_CQ_REPLAY_COPY		SACRED_CHEAPQ_REPLAY_COPY
#define SACRED_CQ_FORGED_CARRY		SACRED_CHEAPQ_FORGED_CARRY
#endif

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_CONSENSUS_H */
