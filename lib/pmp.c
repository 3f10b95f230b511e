// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - single-shot consensus on a replicated memory: Protected
 * Memory Paxos (Aguilera, Ben-David, Guerraoui, Marathe, Xygkis,
 * Zablotchi, "The Impact of RDMA on Agreement", PODC'19) and, behind the
 * same interface, Gafni and Lamport's Disk Paxos as the baseline.
 *
 * This file owns struct sacred_pmp: the slot layout in the consensus
 * region, proposal numbers, the two phases, and the retry loop.
 *
 * Layout: one region, the same id on each of the m memories; process i
 * (of n) owns slot i: two cells (lib/cell.c). A write goes to the cell
 * that does not hold the last write a quorum took, and the cells swap
 * roles only when the new write is on a quorum: a torn or failed write
 * can never destroy the newest completed one; a write that failed but may
 * be on a quorum all the same (an acknowledgement lost) makes the slot
 * unsure, as below, before the next write. A process that opens its
 * slot again finds that cell from the memories (pmp_find_good()), or
 * writes nothing until it can, and numbers its cells above those it sees
 * and above the real-time clock (lib/internal.h). A cell holds
 *
 *   __le64 mbal    the highest proposal number the process has promised
 *   __le64 bal     the proposal number of the value it accepted, 0: none
 *   __le32 len     value bytes
 *   __le32 pad
 *   value
 *
 * PMP needs the region's policy to be exclusive-writer, with every
 * process a read-write member: whoever asks for write gets it and every
 * other writer is revoked (and fenced) before the answer. Disk Paxos
 * needs no permission change (a static region, everyone read-write).
 *
 * propose(v), PMP, proposal number b (unique per process, growing):
 *   phase 1 (skipped on the first attempt of process 0 when it holds write
 *   permission on a quorum from the start: nobody can have gone before
 *   it), at every memory in order - changePermission(write), write own
 *   slot (mbal = b, the accepted pair unchanged), read every slot - and
 *   wait for a quorum of memories that did all three (sacred_rmem_chain():
 *   the read at a memory must follow our permission at that memory);
 *   abort if any mbal or bal read is above b; v' = the value of the
 *   highest bal read, or v if none.
 *   phase 2: write own slot (mbal = bal = b, v'), quorum: decided.
 *   Any failed write (permission revoked: someone contended) aborts the
 *   attempt; the process backs off and retries with a higher b.
 * Round trips: 1 on the fast path, 4 otherwise.
 *
 * The fast path writes proposal number 1 without a phase 1. A process
 * that crashed may have left such a write on a minority of memories only,
 * which a quorum read at its next open cannot see: proposing 1 again,
 * with another value, would put two values under one number, and a
 * later phase 1 could take either. So an open that may take the fast
 * path first promises 1 on a quorum (pmp_mark(), at the open, not on the
 * way to a decision). Every write of an accepted value now follows a
 * promise of its number on a quorum - phase 1's, or the mark - and a
 * quorum read at any later open sees it and numbers above it.
 *
 * Disk Paxos: the same, without changePermission, and phase 2 reads every
 * slot after its write, at each memory, and aborts if any mbal or bal is
 * above b (nothing else stops a contender). The first attempt of process
 * 0 skips phase 1 (b is the lowest number anyone uses). Round trips: 2 on
 * the fast path, 4 otherwise (write + read per phase).
 *
 * The Promela model of this algorithm is models/pmp.pml
 * (Documentation/pmp-model.rst).
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "internal.h"
#include "sacred.h"

#define PMP_HDR		24	/* mbal, bal, len, pad */
#define PMP_FAST_BALLOT	1	/* process 0's first, below everyone's */
#define PMP_BACKOFF_US	200

/**
 * struct sacred_pmp - one consensus instance, as one process sees it
 * @a: as opened (a.rm: not owned; a.me: this process's slot), with
 *	a.timeout_ms's default filled in
 * @cell_size: bytes of a cell
 * @seq: sequence number of the last cell written into own slot
 * @good: the cell of own slot that holds the last write a quorum took:
 *	writes go to the other one until one is taken, so a torn write never
 *	destroys the newest completed one
 * @unsure: opened on a slot written before, or a write into it failed but
 *	may be on a quorum: which cell is @good is read from the memories
 *	first (pmp_settle()); nothing is written until it can be told
 * @mbal: own promise
 * @bal: own accepted proposal number, 0 if none
 * @val: own accepted value
 * @val_len: its bytes
 * @prop: the value the attempt under way proposes (phase 2), kept apart
 *	from @val so that own slot always shows a real (@bal, @val) pair
 * @prop_len: its bytes
 * @max_seen: the highest proposal number seen in any slot
 * @first: no attempt made yet
 * @fast_ok: the first attempt may skip phase 1
 * @stats: counters of the last propose
 * @cell: a cell to write
 * @bufs: per memory, room for every slot
 */
struct sacred_pmp {
	struct sacred_pmp_attr a;
	size_t cell_size;
	uint64_t seq;
	unsigned int good;
	bool unsure;
	uint64_t mbal;
	uint64_t bal;
	uint8_t *val;
	size_t val_len;
	uint8_t *prop;
	size_t prop_len;
	uint64_t max_seen;
	bool first;
	bool fast_ok;
	struct sacred_pmp_stats stats;
	uint8_t *cell;
	uint8_t *bufs[SACRED_RMEM_MAX];
};

struct pmp_slot {
	uint64_t mbal;
	uint64_t bal;
	uint32_t len;
	const uint8_t *val;
};

static size_t pmp_region_bytes(const struct sacred_pmp *p)
{
	return (size_t)p->a.nr_procs * 2 * p->cell_size;
}

/*
 * The newest valid cell of slot @i in memory buffer @buf, parsed; its seq
 * and which of the two cells it is in *@seq and *@cell (may be NULL).
 */
static bool pmp_parse(const struct sacred_pmp *p, const uint8_t *buf,
		      unsigned int i, struct pmp_slot *out, uint64_t *seq,
		      unsigned int *cell)
{
	struct sacred_cell_view best = { 0 }, v;
	unsigned int j, best_j = 0;
	uint64_t x;
	uint32_t len;

	for (j = 0; j < 2; j++) {
		if (sacred_cell_decode(buf + (2 * i + j) * p->cell_size,
				       p->cell_size, &v))
			continue;
		if (v.len < PMP_HDR)
			continue;
		if (!best.seq || sacred_cell_newer(&v, &best)) {
			best = v;
			best_j = j;
		}
	}
	if (!best.seq)
		return false;
	memcpy(&x, best.data, 8);
	out->mbal = le64toh(x);
	memcpy(&x, (const uint8_t *)best.data + 8, 8);
	out->bal = le64toh(x);
	memcpy(&len, (const uint8_t *)best.data + 16, 4);
	out->len = le32toh(len);
	if (out->len != best.len - PMP_HDR)
		return false;
	out->val = (const uint8_t *)best.data + PMP_HDR;
	if (seq)
		*seq = best.seq;
	if (cell)
		*cell = best_j;
	return true;
}

/*
 * Build the next cell of own slot (mbal, bal, value) in p->cell and the
 * WRITE that puts it into the cell that does not hold the last completed
 * write; pmp_written() flips the cells once a quorum took it. The payload
 * is laid out in place, after the cell's header: nothing is allocated on
 * the way to a decision.
 */
static int pmp_cell(struct sacred_pmp *p, uint64_t mbal, uint64_t bal,
		    const void *val, size_t len, struct sacred_io *io)
{
	uint8_t *payload = p->cell + SACRED_CELL_HDR;
	uint64_t seq = p->seq + 1;
	uint32_t l = htole32((uint32_t)len);
	uint64_t x;
	int ret;

	memset(payload, 0, PMP_HDR);
	x = htole64(mbal);
	memcpy(payload, &x, 8);
	x = htole64(bal);
	memcpy(payload + 8, &x, 8);
	memcpy(payload + 16, &l, 4);
	if (len)
		memmove(payload + PMP_HDR, val, len);
	ret = sacred_cell_encode(p->cell, p->cell_size, seq,
				 sacred_rmem_process_id(p->a.rm), payload,
				 PMP_HDR + len);
	if (ret)
		return ret;
	p->seq = seq;
	*io = (struct sacred_io){
		.opcode = SACRED_IO_WRITE,
		.region_id = p->a.region_id,
		.offset = (uint64_t)p->a.me * 2 * p->cell_size +
			  (1 - p->good) * p->cell_size,
		.buf = p->cell,
		.len = p->cell_size,
	};
	return 0;
}

/* The cell just written is on a quorum: it is the one to keep now. */
static void pmp_written(struct sacred_pmp *p)
{
	p->good = 1 - p->good;
}

/*
 * A chain with a write into own slot failed (@ret): if the write may be on
 * a quorum all the same, a reader may have taken it - the next write must
 * not go blind into the same cell (a torn one would take it away): which
 * cell to keep is read from the memories first (pmp_settle()).
 */
static int pmp_failed(struct sacred_pmp *p,
		      const struct sacred_rmem_result *res, int ret)
{
	if (sacred_rmem_maybe_on_quorum(p->a.rm, res, p->cell_size))
		p->unsure = true;
	return ret;
}

/*
 * Promise the fast path's proposal number in own slot on a quorum (see
 * the top of this file). Returns 0, or an error after which the fast path
 * is off - a mark on a minority does no harm: later proposals run phase 1.
 */
static int pmp_mark(struct sacred_pmp *p)
{
	struct sacred_rmem_result res;
	struct sacred_io io;
	int ret;

	ret = pmp_cell(p, PMP_FAST_BALLOT, 0, NULL, 0, &io);
	if (ret)
		return ret;
	ret = sacred_rmem_chain(p->a.rm, &io, 1, NULL, &res);
	if (ret)
		return pmp_failed(p, &res, ret);
	pmp_written(p);
	p->mbal = PMP_FAST_BALLOT;
	return 0;
}

/*
 * Did a memory refuse a permission for a stale ballot - the fenced
 * policy's reason, or a bpf program's refusal with that reason as its
 * code (examples/policies/ballot.bpf.o)?
 */
static bool pmp_stale(const struct sacred_rmem_result *res)
{
	unsigned int k;

	for (k = 0; k < res->nr_mems; k++) {
		uint32_t why = res->perm[k].reason;

		if (res->status[k] == -EPERM &&
		    (why == SACRED_REFUSE_STALE_BALLOT ||
		     why == SACRED_REFUSE_PROGRAM_BASE +
			    SACRED_REFUSE_STALE_BALLOT))
			return true;
	}
	return false;
}

static struct sacred_io pmp_read_op(const struct sacred_pmp *p)
{
	return (struct sacred_io){
		.opcode = SACRED_IO_READ,
		.region_id = p->a.region_id,
		.len = pmp_region_bytes(p),
	};
}

/*
 * Look at every slot read from the memories in @res->ok. *@higher gets
 * the highest mbal or bal above @b seen (0 if none); with @best_bal, the
 * value of the highest bal of the other processes is copied to @best_val.
 */
static void pmp_scan(struct sacred_pmp *p, const struct sacred_rmem_result *res,
		     uint64_t b, uint64_t *higher, uint64_t *best_bal,
		     uint8_t *best_val, size_t *best_len)
{
	unsigned int i, k, n = sacred_rmem_nr_mems(p->a.rm);

	*higher = 0;
	if (best_bal)
		*best_bal = 0;
	for (k = 0; k < n; k++) {
		if (!(res->ok & (1U << k)))
			continue;
		for (i = 0; i < p->a.nr_procs; i++) {
			struct pmp_slot s;

			if (i == p->a.me || !pmp_parse(p, p->bufs[k], i, &s,
						     NULL, NULL))
				continue;
			if (s.mbal > b && s.mbal > *higher)
				*higher = s.mbal;
			if (s.bal > b && s.bal > *higher)
				*higher = s.bal;
			if (best_bal && s.bal > *best_bal &&
			    s.len <= p->a.value_max) {
				*best_bal = s.bal;
				memcpy(best_val, s.val, s.len);
				*best_len = s.len;
			}
		}
	}
}

/* The next proposal number of this process above @above. */
static uint64_t pmp_next_ballot(const struct sacred_pmp *p, uint64_t above)
{
	uint64_t k = above / p->a.nr_procs;
	uint64_t b = k * p->a.nr_procs + p->a.me + 1;

	while (b <= above)
		b += p->a.nr_procs;
	return b;
}

static uint64_t pmp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pmp_backoff(unsigned int attempt)
{
	unsigned int shift = attempt < 8 ? attempt : 8;
	uint32_t us = randombytes_uniform(PMP_BACKOFF_US << shift) + 1;
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	nanosleep(&ts, NULL);
}

/*
 * Which own cell holds the last write a quorum took - what a process that
 * opens its slot again after a crash does not know - from a read of the
 * region (@res: who answered), by sacred_cell_tally_good()'s rule; @unsure when
 * it cannot be told yet (pmp_settle() reads again).
 */
static void pmp_find_good(struct sacred_pmp *p,
			  const struct sacred_rmem_result *res)
{
	unsigned int k, n = sacred_rmem_nr_mems(p->a.rm);
	struct sacred_cell_tally t = { 0 };
	/* Own cells only: the sequence number orders them. */
	struct sacred_cell_view v = { .pid = p->a.me };
	struct pmp_slot s;
	unsigned int c;
	int good;

	for (k = 0; k < n; k++) {
		if (!(res->ok & (1U << k)))
			continue;
		if (pmp_parse(p, p->bufs[k], p->a.me, &s, &v.seq, &c))
			sacred_cell_tally_add(&t, &v, c);
		else
			sacred_cell_tally_add(&t, NULL, 0);
	}
	p->unsure = false;
	if (!t.have)
		return;
	good = sacred_cell_tally_good(&t, n, sacred_rmem_quorum(p->a.rm));
	p->unsure = good < 0;
	if (!p->unsure)
		p->good = good;
}

/* Read every memory again until pmp_find_good() can tell: 0, -ENOTCONN. */
static int pmp_settle(struct sacred_pmp *p)
{
	struct sacred_rmem_result res;
	int ret;

	ret = sacred_rmem_read(p->a.rm, p->a.region_id, 0,
			       (void *const *)p->bufs, pmp_region_bytes(p),
			       true, &res);
	if (ret)
		return ret;
	pmp_find_good(p, &res);
	return p->unsure ? -ENOTCONN : 0;
}

static bool pmp_attr_bad(const struct sacred_pmp_attr *attr)
{
	return !attr || !attr->rm || !attr->nr_procs ||
	       attr->nr_procs > SACRED_PMP_MAX_PROCS ||
	       attr->me >= attr->nr_procs || attr->value_max > (1U << 20) ||
	       attr->timeout_ms < 0 ||
	       (attr->alg != SACRED_PMP && attr->alg != SACRED_DISK_PAXOS &&
		attr->alg != SACRED_PMP_BALLOT);
}

/* @p's fields from @attr, and its buffers: 0, -EMSGSIZE or -ENOMEM. */
static int pmp_init(struct sacred_pmp *p, const struct sacred_pmp_attr *attr)
{
	unsigned int k, n;

	p->a = *attr;
	p->cell_size = (SACRED_CELL_HDR + PMP_HDR + attr->value_max + 7) &
		       ~(size_t)7;
	p->first = true;
	p->good = 1;
	p->a.timeout_ms = attr->timeout_ms ?: 10000;
	n = sacred_rmem_nr_mems(p->a.rm);

	if (pmp_region_bytes(p) > sacred_rmem_max_io(p->a.rm))
		return -EMSGSIZE;
	p->val = malloc(attr->value_max + 1);
	p->prop = malloc(attr->value_max + 1);
	p->cell = calloc(1, p->cell_size);
	if (!p->val || !p->prop || !p->cell)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		p->bufs[k] = malloc(pmp_region_bytes(p));
		if (!p->bufs[k])
			return -ENOMEM;
	}
	return 0;
}

/*
 * Attach the region, and note whether the fast path may be tried: by
 * process 0, under Disk Paxos or holding write access on a quorum.
 */
static int pmp_attach(struct sacred_pmp *p)
{
	unsigned int k, n = sacred_rmem_nr_mems(p->a.rm), writers = 0;
	int ret;

	/* Connections fenced by an earlier instance come back first. */
	if (sacred_rmem_up(p->a.rm) != (1U << n) - 1)
		sacred_rmem_revive(p->a.rm);
	ret = sacred_rmem_attach(p->a.rm, p->a.region_id, NULL);
	if (ret)
		return ret;
	for (k = 0; k < n; k++) {
		struct sacred_conn *c = sacred_rmem_conn(p->a.rm, k);
		struct sacred_region_attr a;

		if (c && !sacred_conn_region(c, p->a.region_id, &a) &&
		    a.access & SACRED_ACCESS_WRITE)
			writers++;
	}
	p->fast_ok = p->a.me == 0 && (p->a.alg == SACRED_DISK_PAXOS ||
				    writers >= sacred_rmem_quorum(p->a.rm));
	return 0;
}

/*
 * From every slot as the memories that answered @res hold it: the
 * highest ballot seen, and this process's own sequence number, ballots
 * and accepted value from before a restart.
 */
static void pmp_learn(struct sacred_pmp *p,
		      const struct sacred_rmem_result *res)
{
	unsigned int i, k, n = sacred_rmem_nr_mems(p->a.rm);

	for (k = 0; k < n; k++) {
		if (!(res->ok & (1U << k)))
			continue;
		for (i = 0; i < p->a.nr_procs; i++) {
			struct pmp_slot s;
			uint64_t seq;

			if (!pmp_parse(p, p->bufs[k], i, &s, &seq, NULL))
				continue;
			if (s.mbal > p->max_seen)
				p->max_seen = s.mbal;
			if (s.bal > p->max_seen)
				p->max_seen = s.bal;
			if (i != p->a.me)
				continue;
			/* Someone has gone before: no fast path. */
			p->fast_ok = false;
			if (seq > p->seq)
				p->seq = seq;
			if (s.mbal > p->mbal)
				p->mbal = s.mbal;
			if (s.bal > p->bal && s.len <= p->a.value_max) {
				p->bal = s.bal;
				memcpy(p->val, s.val, s.len);
				p->val_len = s.len;
			}
		}
	}
}

/**
 * sacred_pmp_open() - join a consensus instance
 * @attr: see &struct sacred_pmp_attr
 * @pp: on success, the handle
 *
 * Reads every slot once (own slot: to go on above its sequence numbers
 * and keep what it accepted before a restart) and, for PMP, notes
 * whether this process holds write permission on a quorum already.
 *
 * Return: 0; -EINVAL; -ENOMEM; -EMSGSIZE when the slots exceed the
 * replicated memory's max_io; the errors of sacred_rmem_attach() (-EPROTO:
 * no quorum of the memories holds one incarnation of a region) and
 * sacred_rmem_read().
 */
int sacred_pmp_open(const struct sacred_pmp_attr *attr,
		    struct sacred_pmp **pp)
{
	struct sacred_rmem_result res;
	struct sacred_pmp *p;
	unsigned int i;
	uint64_t now;
	int ret;

	if (!pp || pmp_attr_bad(attr))
		return -EINVAL;
	if (sodium_init() < 0)
		return -EIO;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = pmp_init(p, attr);
	if (ret)
		goto err;
	ret = pmp_attach(p);
	if (ret)
		goto err;

	/* Every memory that answers: pmp_find_good() counts them. */
	for (i = 0; i < 3; i++) {
		ret = sacred_rmem_read(p->a.rm, p->a.region_id, 0,
				       (void *const *)p->bufs,
				       pmp_region_bytes(p), true, &res);
		if (ret != -ECONNRESET && ret != -ENOTCONN)
			break;
		sacred_rmem_revive(p->a.rm);
	}
	if (ret)
		goto err;
	pmp_learn(p, &res);
	if (p->max_seen)
		p->fast_ok = false;
	pmp_find_good(p, &res);
	/* Above own cells on memories that did not answer too (internal.h). */
	now = sacred_clock_ns();
	if (p->seq < now)
		p->seq = now;
	if (p->fast_ok && pmp_mark(p))
		p->fast_ok = false;
	*pp = p;
	return 0;

err:
	sacred_pmp_close(p);
	return ret;
}

/** sacred_pmp_close() - free @p (the region stays); NULL is ok */
void sacred_pmp_close(struct sacred_pmp *p)
{
	unsigned int k;

	if (!p)
		return;
	for (k = 0; k < SACRED_RMEM_MAX; k++)
		free(p->bufs[k]);
	free(p->cell);
	free(p->val);
	free(p->prop);
	free(p);
}

/*
 * Phase 1 of attempt @b: promise, read, and pick the value to propose
 * (the highest accepted one seen, else own, else @v) into p->prop.
 * 0, -EAGAIN (contention), or an error that ends the proposal.
 */
static int pmp_phase1(struct sacred_pmp *p, uint64_t b, const void *v,
		      size_t len)
{
	struct sacred_io ops[3];
	struct sacred_rmem_result res;
	uint64_t higher, best_bal;
	size_t best_len = 0;
	unsigned int nops = 0;
	uint8_t *best;
	int ret;

	/*
	 * Phase 1, at each memory in order: take write permission (PMP),
	 * promise b in own slot, read every slot. A memory counts once all
	 * three are done there, so each read comes after our permission at
	 * its memory: a write of an earlier leader that a quorum took is
	 * seen by this read at some memory.
	 */
	if (p->a.alg != SACRED_DISK_PAXOS)
		ops[nops++] = (struct sacred_io){
			.opcode = SACRED_IO_PERM,
			.perm = {
				.region_id = p->a.region_id,
				.access = SACRED_ACCESS_READ |
					  SACRED_ACCESS_WRITE,
				.ballot = p->a.alg == SACRED_PMP_BALLOT ? b : 0,
			},
		};
	ret = pmp_cell(p, b, p->bal, p->val, p->val_len, &ops[nops++]);
	if (ret)
		return ret;
	ops[nops++] = pmp_read_op(p);
	p->stats.round_trips += nops;
	ret = sacred_rmem_chain(p->a.rm, ops, nops, (void *const *)p->bufs,
				&res);
	/*
	 * -EPERM: a policy refused. SACRED_PMP_BALLOT: for a stale ballot,
	 * a higher proposal took the memory - contention: retry above it
	 * and above what the memories that answered hold. Anything else
	 * (not a member, not the region's policy): give up.
	 */
	if (ret == -EPERM && p->a.alg == SACRED_PMP_BALLOT && pmp_stale(&res)) {
		pmp_failed(p, &res, ret);
		pmp_scan(p, &res, b, &higher, NULL, NULL, NULL);
		if (higher < b)
			higher = b;
		p->max_seen = higher > p->max_seen ? higher : p->max_seen;
		return -EAGAIN;
	}
	if (ret)
		return pmp_failed(p, &res, ret);
	pmp_written(p);
	p->mbal = b;

	best = malloc(p->a.value_max + 1);
	if (!best)
		return -ENOMEM;
	pmp_scan(p, &res, b, &higher, &best_bal, best, &best_len);
	if (higher) {
		free(best);
		p->max_seen = higher > p->max_seen ? higher : p->max_seen;
		return -EAGAIN;
	}
	/* Own accepted pair counts too. */
	if (best_bal > p->bal) {
		memcpy(p->prop, best, best_len);
		p->prop_len = best_len;
	} else if (p->bal) {
		memcpy(p->prop, p->val, p->val_len);
		p->prop_len = p->val_len;
	} else {
		memcpy(p->prop, v, len);
		p->prop_len = len;
	}
	free(best);
	return 0;
}

/* Phase 2 of attempt @b: accept p->prop. As pmp_attempt() returns. */
static int pmp_phase2(struct sacred_pmp *p, uint64_t b)
{
	struct sacred_io ops[2];
	struct sacred_rmem_result res;
	unsigned int nops = 0;
	uint64_t higher;
	int ret;

	/*
	 * Phase 2: accept (b, value) in own slot. PMP: one write; a memory
	 * where someone took permission since refuses it. Disk Paxos: write,
	 * then read every slot at that memory, abort on a higher promise.
	 */
	ret = pmp_cell(p, b, b, p->prop, p->prop_len, &ops[nops++]);
	if (ret)
		return ret;
	if (p->a.alg == SACRED_DISK_PAXOS)
		ops[nops++] = pmp_read_op(p);
	p->stats.round_trips += nops;
	ret = sacred_rmem_chain(p->a.rm, ops, nops, (void *const *)p->bufs,
				&res);
	if (ret)
		return pmp_failed(p, &res, ret);
	pmp_written(p);
	p->mbal = b;
	p->bal = b;
	memcpy(p->val, p->prop, p->prop_len);
	p->val_len = p->prop_len;
	if (p->a.alg == SACRED_DISK_PAXOS) {
		pmp_scan(p, &res, b, &higher, NULL, NULL, NULL);
		if (higher) {
			p->max_seen = higher > p->max_seen ? higher :
							      p->max_seen;
			return -EAGAIN;
		}
	}
	return 0;
}

/*
 * One attempt with proposal number @b. Returns 0 with the decision in
 * p->val, -EAGAIN when it must be retried (contention), or an error that
 * ends the proposal.
 */
static int pmp_attempt(struct sacred_pmp *p, uint64_t b, const void *v,
		       size_t len, bool fast)
{
	int ret;

	if (fast) {
		p->stats.fast = true;
		memcpy(p->prop, v, len);
		p->prop_len = len;
	} else {
		ret = pmp_phase1(p, b, v, len);
		if (ret)
			return ret;
	}
	return pmp_phase2(p, b);
}

/**
 * sacred_pmp_propose() - propose a value; returns the decided one
 * @p: the instance
 * @v: the value proposed
 * @len: its bytes, at most value_max
 * @out: gets the decided value (@v or another process's)
 * @max: room in @out
 * @out_len: gets its bytes
 *
 * Retries (with random backoff) while other processes contend, until a
 * value is decided or attr.timeout_ms passed.
 * A write refused because another process took write permission, or a
 * connection fenced for it, means contention: the broken connections are
 * reconnected and the attempt repeated with a higher proposal number.
 *
 * Return: 0 with the decision; -EINVAL, -EMSGSIZE, -ENOSPC (@max too
 * small); -EPERM when a memory's policy refused write permission (the
 * region is not exclusive-writer - fenced or ballot-ruled for
 * SACRED_PMP_BALLOT - or this process is no rw member); -EBUSY when the
 * time ran out under contention; -ENOTCONN,
 * -ECONNRESET, -ETIMEDOUT when it ran out without a quorum of memories.
 */
int sacred_pmp_propose(struct sacred_pmp *p, const void *v, size_t len,
		       void *out, size_t max, size_t *out_len)
{
	unsigned int attempt;
	uint64_t b, deadline;
	int ret;

	if (!p || (!v && len) || !out_len || (!out && max))
		return -EINVAL;
	if (len > p->a.value_max)
		return -EMSGSIZE;
	memset(&p->stats, 0, sizeof(p->stats));
	deadline = pmp_now_ms() + p->a.timeout_ms;
	for (attempt = 0; ; attempt++) {
		bool fast = p->first && p->fast_ok;

		p->first = false;
		/* Above the mark's promise, once the fast path is behind. */
		b = fast ? PMP_FAST_BALLOT :
			   pmp_next_ballot(p, p->max_seen > p->mbal ?
						      p->max_seen : p->mbal);
		p->stats.attempts++;
		ret = p->unsure ? pmp_settle(p) : 0;
		if (!ret)
			ret = pmp_attempt(p, b, v, len, fast);
		if (!ret)
			break;
		p->stats.fast = false;
		if (ret != -EAGAIN && ret != -EACCES && ret != -ECONNRESET &&
		    ret != -ENOTCONN && ret != -ETIMEDOUT && ret != -EBUSY)
			return ret;
		/*
		 * Contention (a higher proposal seen, a write refused, a
		 * connection fenced) or memories lost: bring fenced
		 * connections back and retry, until the deadline.
		 */
		p->stats.aborts++;
		if (pmp_now_ms() >= deadline)
			return ret == -EAGAIN || ret == -EACCES ? -EBUSY :
			       ret == -EBUSY ? -ETIMEDOUT : ret;
		if (ret != -EAGAIN)
			sacred_rmem_revive(p->a.rm);
		pmp_backoff(attempt);
	}
	if (p->val_len > max)
		return -ENOSPC;
	memcpy(out, p->val, p->val_len);
	*out_len = p->val_len;
	return 0;
}

/** sacred_pmp_stats() - what the last sacred_pmp_propose() took */
void sacred_pmp_stats(const struct sacred_pmp *p,
		      struct sacred_pmp_stats *stats)
{
	*stats = p->stats;
}
