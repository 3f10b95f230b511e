// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - Cheap Quorum's fast path and panic (Aguilera et al., "The
 * Impact of RDMA on Agreement", PODC'19): Byzantine consensus that decides
 * in one round of writes when all n processes are correct, and otherwise
 * revokes the leader's write permission - for good, through the memory's
 * revoke-only policy - and hands every process a value to carry into the
 * robust backup.
 *
 * This file owns struct sacred_cq: the regions' layout, the signed
 * records, the fast path and the panic.
 *
 * Regions, the same ids on every memory of a replicated memory:
 *
 *   base            the leader region: policy revoke-only, the leader
 *                   read-write, everyone else read. Slot 0: the leader's
 *                   signed value.
 *   base + 1 + i    process i's region: policy swmr, i the writer. Slot 0:
 *                   i's signed copy of the leader's value; slot 1: i's
 *                   signed panic.
 *
 * propose(v), process i (the leader is process 0):
 *   1. the leader writes (v, sig_leader(v)) into the leader region;
 *   2. read the leader region until a value validly signed by the leader
 *      is there; copy (v, leader's signature, own signature) into own
 *      slot 0;
 *   3. read every process's slot 0 until all n hold valid copies of the
 *      same value: decide it (the fast path: for the leader its write,
 *      one read of the leader region, its copy and n copy reads - n + 3
 *      quorum round trips, one after the other, when everyone is there).
 *   Panic - on a timeout, a copy of another validly signed value (the
 *   leader equivocated), or another process's panic: revoke the leader's
 *   write permission on the leader region (changePermission, access 0,
 *   target the leader), write a signed panic into own slot 1, and return
 *   the value to carry into the backup: own copy if any (a value decided
 *   on the fast path was copied by every process, so every correct one
 *   carries it), else the leader's signed value if one can be read now,
 *   else the process's own input.
 *
 * What a Byzantine process cannot do: write into another's region or,
 * after the panic, the leader region (the memory refuses), sign as
 * another process, or make two correct processes decide differently on
 * the fast path (that needs all n copies to agree).
 *
 * The robust backup (Paxos over non-equivocating broadcast) is not
 * written yet: a panic returns SACRED_CQ_PANIC with the value to carry.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sacred.h"

#define CQ_VALUE_DOMAIN	"sacred-cq-value-v1"
#define CQ_COPY_DOMAIN	"sacred-cq-copy-v1"
#define CQ_PANIC_DOMAIN	"sacred-cq-panic-v1"
/* Record: __le32 len, pad, leader signature, own signature, value. */
#define CQ_HDR		(8 + 2 * SACRED_BZ_SIG_LEN)

/**
 * struct sacred_cq - one process's view of a Cheap Quorum instance
 * @a: as opened
 * @me: this process
 * @leader: the leader region's slots
 * @procs: each process's region's slots
 * @rec: a record being built
 * @buf: one being read
 * @signed_buf: the bytes a signature covers
 * @stats: counters of the last propose
 * @copied: this process copied (or tried to copy) a leader's value
 * @copy: that value
 * @copy_len: its bytes
 */
struct sacred_cq {
	struct sacred_cq_attr a;
	unsigned int me;
	struct sacred_slots *leader;
	struct sacred_slots *procs[SACRED_BZ_MAX_PROCS];
	uint8_t *rec, *buf, *signed_buf;
	struct sacred_cq_stats stats;
	bool copied;
	uint8_t *copy;
	size_t copy_len;
};

struct cq_rec {
	uint32_t len;
	const uint8_t *lsig;
	const uint8_t *sig;
	const uint8_t *val;
};

static uint64_t cq_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The bytes a signature covers: instance (base region), then @parts. */
static size_t cq_signed(struct sacred_cq *cq, const void *a, size_t alen,
			const void *b, size_t blen)
{
	uint32_t base = htole32(cq->a.base_region);

	memcpy(cq->signed_buf, &base, 4);
	memcpy(cq->signed_buf + 4, a, alen);
	if (blen)
		memcpy(cq->signed_buf + 4 + alen, b, blen);
	return 4 + alen + blen;
}

static bool cq_value_ok(struct sacred_cq *cq, const struct cq_rec *r)
{
	size_t n = cq_signed(cq, r->val, r->len, NULL, 0);

	return sacred_bz_verify(cq->a.keys, 0, CQ_VALUE_DOMAIN,
				cq->signed_buf, n, r->lsig);
}

static bool cq_copy_ok(struct sacred_cq *cq, unsigned int who,
		       const struct cq_rec *r)
{
	size_t n;

	if (!cq_value_ok(cq, r))
		return false;
	n = cq_signed(cq, r->lsig, SACRED_BZ_SIG_LEN, r->val, r->len);
	return sacred_bz_verify(cq->a.keys, who, CQ_COPY_DOMAIN,
				cq->signed_buf, n, r->sig);
}

static bool cq_parse(const struct sacred_cq *cq, const uint8_t *buf,
		     size_t len, struct cq_rec *r)
{
	uint32_t l;

	if (len < CQ_HDR)
		return false;
	memcpy(&l, buf, 4);
	r->len = le32toh(l);
	r->lsig = buf + 8;
	r->sig = buf + 8 + SACRED_BZ_SIG_LEN;
	r->val = buf + CQ_HDR;
	return r->len <= cq->a.value_max && r->len == len - CQ_HDR;
}

/* Build a record: value, the leader's signature, and (copies) our own. */
static size_t cq_build(struct sacred_cq *cq, const void *v, size_t len,
		       const uint8_t *lsig, bool copy)
{
	uint32_t l = htole32((uint32_t)len);
	size_t n;

	memset(cq->rec, 0, CQ_HDR);
	memcpy(cq->rec, &l, 4);
	memcpy(cq->rec + CQ_HDR, v, len);
	if (lsig) {
		memcpy(cq->rec + 8, lsig, SACRED_BZ_SIG_LEN);
	} else {
		n = cq_signed(cq, v, len, NULL, 0);
		sacred_bz_sign(cq->a.keys, CQ_VALUE_DOMAIN, cq->signed_buf, n,
			       cq->rec + 8);
	}
	if (copy) {
		n = cq_signed(cq, cq->rec + 8, SACRED_BZ_SIG_LEN, v, len);
		sacred_bz_sign(cq->a.keys, CQ_COPY_DOMAIN, cq->signed_buf, n,
			       cq->rec + 8 + SACRED_BZ_SIG_LEN);
	}
	return CQ_HDR + len;
}

/**
 * sacred_cq_open() - join a Cheap Quorum instance
 * @attr: see &struct sacred_cq_attr
 * @cqp: on success, the handle
 *
 * Return: 0; -EINVAL; -ENOMEM; -EPERM when this process cannot write its
 * own region (or, as the leader, the leader region); the errors of
 * sacred_slots_open().
 */
int sacred_cq_open(const struct sacred_cq_attr *attr, struct sacred_cq **cqp)
{
	unsigned int p, n;
	struct sacred_cq *cq;
	size_t rec;
	int ret;

	if (!attr || !cqp || !attr->rm || !attr->keys ||
	    attr->value_max > (1U << 16) || attr->timeout_ms < 0)
		return -EINVAL;
	n = sacred_bz_nr_procs(attr->keys);
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->a = *attr;
	if (!cq->a.timeout_ms)
		cq->a.timeout_ms = 1000;
	cq->me = sacred_bz_me(attr->keys);
	rec = CQ_HDR + attr->value_max;
	ret = -ENOMEM;
	cq->rec = malloc(rec);
	cq->buf = malloc(rec);
	cq->signed_buf = malloc(4 + SACRED_BZ_SIG_LEN + attr->value_max);
	cq->copy = malloc(attr->value_max + 1);
	if (!cq->rec || !cq->buf || !cq->signed_buf || !cq->copy)
		goto err;
	ret = sacred_slots_open(attr->rm, attr->base_region, rec, 1, 0,
				&cq->leader);
	if (ret)
		goto err;
	for (p = 0; p < n; p++) {
		ret = sacred_slots_open(attr->rm, attr->base_region + 1 + p,
					rec, 2, 0, &cq->procs[p]);
		if (ret)
			goto err;
	}
	ret = -EPERM;
	if (!sacred_slots_writer(cq->procs[cq->me]) ||
	    (cq->me == 0 && !sacred_slots_writer(cq->leader)))
		goto err;
	*cqp = cq;
	return 0;

err:
	sacred_cq_close(cq);
	return ret;
}

/** sacred_cq_close() - free @cq; NULL is ok */
void sacred_cq_close(struct sacred_cq *cq)
{
	unsigned int p;

	if (!cq)
		return;
	sacred_slots_close(cq->leader);
	for (p = 0; p < SACRED_BZ_MAX_PROCS; p++)
		sacred_slots_close(cq->procs[p]);
	free(cq->rec);
	free(cq->buf);
	free(cq->signed_buf);
	free(cq->copy);
	free(cq);
}

/* The leader's signed value, if one is there: into cq->buf / @r. */
static int cq_read_leader(struct sacred_cq *cq, struct cq_rec *r)
{
	struct sacred_cell_view v;
	int ret;

	cq->stats.round_trips++;
	ret = sacred_slots_read(cq->leader, 0, cq->buf, CQ_HDR +
				cq->a.value_max, &v);
	if (ret)
		return ret == -ENODATA ? -EAGAIN : ret;
	if (!cq_parse(cq, cq->buf, v.len, r) || !cq_value_ok(cq, r))
		return -EBADMSG;
	return 0;
}

/*
 * Panic: revoke the leader's write for good, tell the others, and pick
 * the value to carry into the backup (into @out).
 */
static int cq_panic(struct sacred_cq *cq, const void *v, size_t len,
		    void *out, size_t max, size_t *out_len)
{
	struct sacred_perm_req req = {
		.region_id = cq->a.base_region,
		.access = 0,
		.target = cq->a.leader_pid,
	};
	struct sacred_cell_view view;
	struct cq_rec r;
	const void *carry = v;
	size_t carry_len = len, n;
	uint8_t sig[SACRED_BZ_SIG_LEN];
	int ret;

	cq->stats.panicked = true;
	/* The leader's own connections are fenced by the revoke: back. */
	sacred_rmem_revive(cq->a.rm);
	cq->stats.round_trips++;
	ret = sacred_rmem_change_perm(cq->a.rm, &req, NULL);
	sacred_rmem_revive(cq->a.rm);
	/*
	 * A repeated revoke is accepted; -EPERM means the leader region is
	 * not revoke-only (or this process no member): the leader keeps
	 * write, so there is nothing safe to carry on with.
	 */
	if (ret)
		return ret;

	n = cq_signed(cq, "panic", 5, NULL, 0);
	sacred_bz_sign(cq->a.keys, CQ_PANIC_DOMAIN, cq->signed_buf, n, sig);
	memset(cq->rec, 0, CQ_HDR);
	memcpy(cq->rec + 8 + SACRED_BZ_SIG_LEN, sig, sizeof(sig));
	cq->stats.round_trips++;
	ret = sacred_slots_write(cq->procs[cq->me], 1, cq->rec, CQ_HDR);
	if (ret)
		return ret;

	/*
	 * Own copy first: a fast-path decision was copied by everyone. What
	 * we tried to copy counts even if the write failed: it may have
	 * landed where someone else saw it.
	 */
	if (cq->copied) {
		carry = cq->copy;
		carry_len = cq->copy_len;
	} else if (!sacred_slots_read(cq->procs[cq->me], 0, cq->buf,
				      CQ_HDR + cq->a.value_max, &view) &&
		   cq_parse(cq, cq->buf, view.len, &r) &&
		   cq_copy_ok(cq, cq->me, &r)) {
		carry = r.val;
		carry_len = r.len;
	} else if (!cq_read_leader(cq, &r)) {
		carry = r.val;
		carry_len = r.len;
	}
	if (carry_len > max)
		return -ENOSPC;
	memmove(out, carry, carry_len);
	*out_len = carry_len;
	return SACRED_CQ_PANIC;
}

/* Has anyone panicked? */
static bool cq_someone_panicked(struct sacred_cq *cq)
{
	struct sacred_cell_view v;
	unsigned int p;
	size_t n;

	for (p = 0; p < sacred_bz_nr_procs(cq->a.keys); p++) {
		if (p == cq->me)
			continue;
		cq->stats.round_trips++;
		if (sacred_slots_read(cq->procs[p], 1, cq->buf,
				      CQ_HDR + cq->a.value_max, &v) ||
		    v.len < CQ_HDR)
			continue;
		n = cq_signed(cq, "panic", 5, NULL, 0);
		if (sacred_bz_verify(cq->a.keys, p, CQ_PANIC_DOMAIN,
				     cq->signed_buf, n,
				     cq->buf + 8 + SACRED_BZ_SIG_LEN))
			return true;
	}
	return false;
}

/**
 * sacred_cq_propose() - propose @v; decide on the fast path or panic
 * @cq: the instance
 * @v: this process's input
 * @len: its bytes, at most value_max
 * @out: the decision, or after a panic the value to carry into the backup
 * @max: room in @out
 * @out_len: gets its bytes
 *
 * Return: 0 with the decision (fast path: every process copied the same
 * value the leader signed); SACRED_CQ_PANIC (a positive value) when the
 * fast path failed - timeout, an equivocating leader, someone else's
 * panic - after the leader's write permission was revoked for good, with
 * the value to carry in @out; -EINVAL, -EMSGSIZE, -ENOSPC;
 * replicated-memory errors.
 */
int sacred_cq_propose(struct sacred_cq *cq, const void *v, size_t len,
		      void *out, size_t max, size_t *out_len)
{
	struct sacred_cell_view view;
	unsigned int p, nr, same;
	struct cq_rec lr, r;
	uint64_t deadline;
	size_t n;
	int ret;

	if (!cq || (!v && len) || !out_len || (!out && max))
		return -EINVAL;
	nr = sacred_bz_nr_procs(cq->a.keys);
	deadline = cq_now_ms() + cq->a.timeout_ms;
	if (len > cq->a.value_max)
		return -EMSGSIZE;
	memset(&cq->stats, 0, sizeof(cq->stats));

	if (cq->me == 0) {
		n = cq_build(cq, v, len, NULL, false);
		cq->stats.round_trips++;
		ret = sacred_slots_write(cq->leader, 0, cq->rec, n);
		if (ret == -EACCES || ret == -ECONNRESET)
			return cq_panic(cq, v, len, out, max, out_len);
		if (ret)
			return ret;
	}

	/* The leader's value, then our copy of it. */
	for (;;) {
		ret = cq_read_leader(cq, &lr);
		if (!ret)
			break;
		if ((ret != -EAGAIN && ret != -EBADMSG) ||
		    cq_now_ms() >= deadline || cq_someone_panicked(cq))
			return cq_panic(cq, v, len, out, max, out_len);
		usleep(1000);
	}
	n = cq_build(cq, lr.val, lr.len, lr.lsig, true);
	memcpy(cq->copy, lr.val, lr.len);
	cq->copy_len = lr.len;
	cq->copied = true;
	cq->stats.round_trips++;
	ret = sacred_slots_write(cq->procs[cq->me], 0, cq->rec, n);
	if (ret)
		return cq_panic(cq, v, len, out, max, out_len);

	/* Everyone's copy of the same value: decided. */
	for (;;) {
		same = 0;
		for (p = 0; p < nr; p++) {
			cq->stats.round_trips++;
			ret = sacred_slots_read(cq->procs[p], 0, cq->buf,
						CQ_HDR + cq->a.value_max,
						&view);
			if (ret)
				break;
			if (!cq_parse(cq, cq->buf, view.len, &r) ||
			    !cq_copy_ok(cq, p, &r))
				break;
			if (r.len != n - CQ_HDR ||
			    memcmp(r.val, cq->rec + CQ_HDR, r.len))
				/* The leader signed two values: it lied. */
				return cq_panic(cq, v, len, out, max,
						out_len);
			same++;
		}
		if (same == nr)
			break;
		if (cq_now_ms() >= deadline || cq_someone_panicked(cq))
			return cq_panic(cq, v, len, out, max, out_len);
		usleep(1000);
	}
	if (n - CQ_HDR > max)
		return -ENOSPC;
	memcpy(out, cq->rec + CQ_HDR, n - CQ_HDR);
	*out_len = n - CQ_HDR;
	cq->stats.fast = true;
	return 0;
}

/**
 * sacred_cq_lead_value() - as the leader, write a signed @v into the
 * leader region outside the protocol (test harness: an equivocating
 * leader writes twice)
 *
 * Return: 0; -EPERM if this process is not the leader; -EACCES once its
 * write permission was revoked; replicated-memory errors.
 */
int sacred_cq_lead_value(struct sacred_cq *cq, const void *v, size_t len)
{
	size_t n;

	if (!cq || (!v && len))
		return -EINVAL;
	if (len > cq->a.value_max)
		return -EMSGSIZE;
	if (cq->me != 0)
		return -EPERM;
	n = cq_build(cq, v, len, NULL, false);
	return sacred_slots_write(cq->leader, 0, cq->rec, n);
}

/** sacred_cq_stats() - counters of the last sacred_cq_propose() */
void sacred_cq_stats(const struct sacred_cq *cq, struct sacred_cq_stats *st)
{
	*st = cq->stats;
}
