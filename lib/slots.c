// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - owned and shared regions: a replicated region (same id on
 * every memory of a struct sacred_rmem) cut into slots, each holding the
 * latest of a sequence of cells (lib/cell.c).
 *
 * Owned region: the region's policy is swmr (or the ACL gives write to
 * one process only): the memory itself refuses every other writer, so a
 * slot is a single-writer multi-reader regular register - a read returns
 * the last completed write or one that is in progress. Shared region:
 * every member may write; writers race per memory, the newest cell
 * (sequence number, then process id) wins, and a write may be lost to a
 * concurrent one: the layers above must resolve contention (Disk Paxos
 * does it with ballots).
 *
 * A slot is two cells. A write goes into the cell that does not hold the
 * last write a quorum took, and the two swap roles only once the new write
 * is on a quorum: a write that is torn (its writer revoked or crashed in
 * the middle) or fails can never destroy the newest completed one. A
 * write that failed but may be on a quorum all the same (an
 * acknowledgement lost: sacred_rmem_maybe_on_quorum()) may have been read
 * as the newest: the slot is then unsure, and the next write first reads
 * which cell a quorum holds, as at a reopen. A read
 * fetches both cells from a quorum and takes the newest valid cell of all.
 * (In a shared region this holds per writer only.)
 *
 * Opening an owned region as its writer reads every slot once, so that a
 * restarted writer goes on above the sequence numbers it used before -
 * and above the real-time clock, for those on memories that do not answer
 * now - and finds which cell holds its last complete write
 * (slots_find_good()).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sacred.h"

/**
 * struct sacred_slots - a region of slots on a replicated memory
 * @rm: the replicated memory (not owned)
 * @region_id: the region, the same on every memory
 * @payload_max: the largest payload a write takes
 * @cell_size: bytes of one cell: header plus the largest payload, rounded
 *	up to 8
 * @nr_slots: slots in the region
 * @shared: any member may write
 * @writer: this process holds write access on a quorum
 * @seq: per slot, the last sequence number written or seen
 * @good: per slot, the cell holding the last write a quorum took
 * @unsure: per slot, for a writer that opened it again or whose last
 *	write failed but may be on a quorum: which cell is @good must be
 *	read from the memories first (slots_find_good()); no write until
 *	it can be told
 * @bufs: per memory, a two-cell read buffer
 */
struct sacred_slots {
	struct sacred_rmem *rm;
	uint32_t region_id;
	size_t payload_max;
	size_t cell_size;
	unsigned int nr_slots;
	bool shared;
	bool writer;
	uint64_t *seq;
	uint8_t *good;
	uint8_t *unsure;
	uint8_t *bufs[SACRED_RMEM_MAX];
	uint8_t *cell;
};

static uint64_t slot_offset(const struct sacred_slots *s, unsigned int slot)
{
	return (uint64_t)slot * 2 * s->cell_size;
}

/*
 * The newest valid cell of the two at @cells + @at in each memory's buffer
 * @bufs[i] that @res says is good: into @best (pointing into the
 * buffers), the cell's index into @cell. Returns 0, or -ENODATA if none
 * is valid.
 */
static int slots_newest(const struct sacred_slots *s, uint8_t *const *bufs,
			size_t at, const struct sacred_rmem_result *res,
			struct sacred_cell_view *best, unsigned int *cell)
{
	unsigned int i, j, n = sacred_rmem_nr_mems(s->rm);
	bool found = false;

	for (i = 0; i < n; i++) {
		if (!(res->ok & (1U << i)))
			continue;
		for (j = 0; j < 2; j++) {
			struct sacred_cell_view v;

			if (sacred_cell_decode(bufs[i] + at + j * s->cell_size,
					       s->cell_size, &v))
				continue;
			if (!found || sacred_cell_newer(&v, best)) {
				*best = v;
				found = true;
				if (cell)
					*cell = j;
			}
		}
	}
	return found ? 0 : -ENODATA;
}

/* Both cells of @slot from a quorum (@all: from every memory that answers). */
static int slots_read_pair(struct sacred_slots *s, unsigned int slot,
			   bool all, struct sacred_rmem_result *res)
{
	return sacred_rmem_read(s->rm, s->region_id, slot_offset(s, slot),
				(void *const *)s->bufs, 2 * s->cell_size, all,
				res);
}

/*
 * Read slot @slot from a quorum: the newest valid cell of all into @best
 * (pointing into the read buffers). Returns 0, -ENODATA if no memory has
 * a valid cell, or the replicated memory's error.
 */
static int slots_fetch(struct sacred_slots *s, unsigned int slot,
		       struct sacred_cell_view *best, unsigned int *cell,
		       bool all)
{
	struct sacred_rmem_result res;
	int ret;

	ret = slots_read_pair(s, slot, all, &res);
	if (ret)
		return ret;
	return slots_newest(s, s->bufs, 0, &res, best, cell);
}

/*
 * For a writer that opens the region again (after a crash, say), which
 * cell of @slot holds its last write a quorum took, from a read of every
 * memory that answers: in an owned region by sacred_cell_tally_good()'s rule -
 * the slot is unsure, and writes wait (-ENOTCONN), while it cannot be
 * told; in a shared one, where every writer's cells are the same two, the
 * newest cell. Sets the slot's seq above every cell seen. Returns 0 or the
 * read's error.
 */
static int slots_find_good(struct sacred_slots *s, unsigned int slot)
{
	unsigned int k, n = sacred_rmem_nr_mems(s->rm);
	struct sacred_cell_tally t = { 0 };
	struct sacred_rmem_result res, one;
	struct sacred_cell_view v;
	unsigned int c;
	int good, ret;

	ret = slots_read_pair(s, slot, true, &res);
	if (ret)
		return ret;
	for (k = 0; k < n; k++) {
		if (!(res.ok & (1U << k)))
			continue;
		one = res;
		one.ok = 1U << k;
		if (slots_newest(s, s->bufs, 0, &one, &v, &c))
			sacred_cell_tally_add(&t, NULL, 0);
		else
			sacred_cell_tally_add(&t, &v, c);
	}
	s->unsure[slot] = 0;
	if (!t.have)
		return 0;
	if (t.best.seq > s->seq[slot])
		s->seq[slot] = t.best.seq;
	good = s->shared ? (int)t.cell :
	       sacred_cell_tally_good(&t, n, sacred_rmem_quorum(s->rm));
	s->unsure[slot] = good < 0;
	if (good >= 0)
		s->good[slot] = good;
	return 0;
}

/*
 * Attach the region on every memory; check that the slots fit in it,
 * and whether this process may write it (on a quorum).
 */
static int slots_attach(struct sacred_slots *s)
{
	unsigned int i, n = sacred_rmem_nr_mems(s->rm), writers = 0;
	struct sacred_region_attr a;
	uint64_t size = 0;
	int ret;

	ret = sacred_rmem_attach(s->rm, s->region_id, NULL);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		struct sacred_conn *c = sacred_rmem_conn(s->rm, i);

		if (!c || sacred_conn_region(c, s->region_id, &a))
			continue;
		size = a.size;
		if (a.access & SACRED_ACCESS_WRITE)
			writers++;
	}
	if (slot_offset(s, s->nr_slots) > size)
		return -ENOSPC;
	s->writer = writers >= sacred_rmem_quorum(s->rm);
	return 0;
}

/*
 * A writer goes on above whatever it (or anyone) wrote before, and
 * finds which cell holds its last complete write.
 */
static int slots_resume(struct sacred_slots *s)
{
	/*
	 * And above what it wrote where nobody answers now: a cell of its
	 * own that is newer than every one seen would hide a new write
	 * there, or tie with it (internal.h).
	 */
	uint64_t floor = s->shared ? 0 : sacred_clock_ns();
	unsigned int i;
	int ret;

	for (i = 0; i < s->nr_slots; i++) {
		ret = slots_find_good(s, i);
		if (ret)
			return ret;
		if (s->seq[i] < floor)
			s->seq[i] = floor;
	}
	return 0;
}

/**
 * sacred_slots_open() - use a replicated region as slots
 * @rm: the replicated memory; must outlive the handle
 * @region_id: the region (attached on every memory by this call)
 * @payload_max: the largest payload of a cell
 * @nr_slots: slots the region holds; their cells must fit in the region
 * @flags: SACRED_SLOTS_SHARED for a shared region, 0 for an owned one
 * @sp: on success, the new handle
 *
 * Return: 0; -EINVAL; -ENOMEM; -ENOSPC if the slots do not fit in the
 * region; -EMSGSIZE if two cells exceed the replicated memory's max_io;
 * the errors of sacred_rmem_attach() and, for the writer of an owned
 * region, of the first read of every slot.
 */
int sacred_slots_open(struct sacred_rmem *rm, uint32_t region_id,
		      size_t payload_max, unsigned int nr_slots,
		      unsigned int flags, struct sacred_slots **sp)
{
	struct sacred_slots *s;
	unsigned int i, n;
	int ret;

	if (!rm || !sp || !nr_slots || flags & ~SACRED_SLOTS_SHARED ||
	    payload_max > (1U << 24))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->rm = rm;
	s->region_id = region_id;
	s->payload_max = payload_max;
	s->cell_size = (SACRED_CELL_HDR + payload_max + 7) & ~(size_t)7;
	s->nr_slots = nr_slots;
	s->shared = flags & SACRED_SLOTS_SHARED;
	n = sacred_rmem_nr_mems(rm);
	if (2 * s->cell_size > sacred_rmem_max_io(rm)) {
		free(s);
		return -EMSGSIZE;
	}

	ret = -ENOMEM;
	s->seq = calloc(nr_slots, sizeof(*s->seq));
	s->good = malloc(nr_slots);
	s->unsure = calloc(nr_slots, 1);
	s->cell = malloc(s->cell_size);
	if (!s->seq || !s->good || !s->unsure || !s->cell)
		goto err;
	memset(s->good, 1, nr_slots);
	for (i = 0; i < n; i++) {
		s->bufs[i] = malloc(2 * s->cell_size);
		if (!s->bufs[i])
			goto err;
	}

	ret = slots_attach(s);
	if (ret)
		goto err;
	if (s->writer) {
		ret = slots_resume(s);
		if (ret)
			goto err;
	}
	*sp = s;
	return 0;

err:
	sacred_slots_close(s);
	return ret;
}

/** sacred_slots_close() - free @s (the region stays as it is); NULL ok */
void sacred_slots_close(struct sacred_slots *s)
{
	unsigned int i;

	if (!s)
		return;
	for (i = 0; i < SACRED_RMEM_MAX; i++)
		free(s->bufs[i]);
	free(s->cell);
	free(s->good);
	free(s->unsure);
	free(s->seq);
	free(s);
}

/** sacred_slots_writer() - whether this process may write @s's slots */
bool sacred_slots_writer(const struct sacred_slots *s)
{
	return s->writer;
}

/**
 * sacred_slots_write() - write a new cell into a slot on a quorum
 * @s: the slots
 * @slot: which
 * @data: the payload
 * @len: at most payload_max
 *
 * In a shared region the sequence number is one above the newest cell a
 * quorum read shows (one round trip more); in an owned one the writer's
 * own counter.
 *
 * Return: 0 when a quorum holds the cell; -EPERM if this process does not
 * hold write access (owned region, not its owner); -EINVAL, -EMSGSIZE;
 * -ENOTCONN when the slot was opened again and the memories cannot tell
 * yet which cell holds the last complete write (slots_find_good()); the
 * errors of sacred_rmem_write() (-EACCES: write access was revoked).
 */
int sacred_slots_write(struct sacred_slots *s, unsigned int slot,
		       const void *data, size_t len)
{
	struct sacred_rmem_result res;
	struct sacred_cell_view v;
	uint64_t seq;
	int ret;

	if (!s || slot >= s->nr_slots || (!data && len))
		return -EINVAL;
	/* Not the cell's padding too: readers size buffers by payload_max. */
	if (len > s->payload_max)
		return -EMSGSIZE;
	if (!s->writer && !s->shared)
		return -EPERM;
	if (s->shared) {
		ret = slots_fetch(s, slot, &v, NULL, false);
		if (ret && ret != -ENODATA)
			return ret;
		if (!ret && v.seq > s->seq[slot])
			s->seq[slot] = v.seq;
	}
	if (s->unsure[slot]) {
		ret = slots_find_good(s, slot);
		if (ret)
			return ret;
		if (s->unsure[slot])
			return -ENOTCONN;
	}
	seq = ++s->seq[slot];
	ret = sacred_cell_encode(s->cell, s->cell_size, seq,
				 sacred_rmem_process_id(s->rm), data, len);
	if (ret)
		return ret;
	ret = sacred_rmem_write(s->rm, s->region_id,
				slot_offset(s, slot) +
				(1 - s->good[slot]) * s->cell_size,
				s->cell, s->cell_size, &res);
	if (!ret)
		s->good[slot] = 1 - s->good[slot];
	else if (sacred_rmem_maybe_on_quorum(s->rm, &res, s->cell_size))
		/*
		 * A reader may have seen it there: the next write into the
		 * same cell, torn, would take it away. Which cell to keep is
		 * read from the memories first.
		 */
		s->unsure[slot] = 1;
	return ret;
}

/*
 * Hand the newest cell @v of slot @slot to the caller: its payload into
 * @data (at most @max bytes, else -ENOSPC and nothing copied), its seq,
 * pid and len into @view (may be NULL; @view->data is NULL), and remember
 * its seq as the slot's newest.
 */
static int slots_deliver(struct sacred_slots *s, unsigned int slot,
			 const struct sacred_cell_view *v, void *data,
			 size_t max, struct sacred_cell_view *view)
{
	if (v->len > max)
		return -ENOSPC;
	memcpy(data, v->data, v->len);
	if (v->seq > s->seq[slot])
		s->seq[slot] = v->seq;
	if (view) {
		*view = *v;
		view->data = NULL;
	}
	return 0;
}

/* The newest valid cell of @slot in the read buffers (@res) into @data. */
static int slots_pick(struct sacred_slots *s, unsigned int slot,
		      const struct sacred_rmem_result *res, void *data,
		      size_t max, struct sacred_cell_view *view)
{
	struct sacred_cell_view v;
	int ret = slots_newest(s, s->bufs, 0, res, &v, NULL);

	return ret ? ret : slots_deliver(s, slot, &v, data, max, view);
}

/**
 * sacred_slots_read() - the newest valid cell of a slot on a quorum
 * @s: the slots
 * @slot: which
 * @data: gets the payload
 * @max: room in @data
 * @view: gets seq, pid and len of the cell (@view->data is NULL: the
 *	payload is in @data); may be NULL
 *
 * Return: 0; -ENODATA if the slot was never written (completely) on the
 * quorum read; -ENOSPC if the payload exceeds @max (nothing copied);
 * -EINVAL; the errors of sacred_rmem_read().
 */
int sacred_slots_read(struct sacred_slots *s, unsigned int slot, void *data,
		      size_t max, struct sacred_cell_view *view)
{
	struct sacred_cell_view v;
	int ret;

	if (!s || slot >= s->nr_slots || (!data && max))
		return -EINVAL;
	ret = slots_fetch(s, slot, &v, NULL, false);
	if (ret)
		return ret;
	return slots_deliver(s, slot, &v, data, max, view);
}

/*
 * sacred_slots_read_every() - as sacred_slots_read(), from every memory
 * that answers in time, not just a quorum; *@every says whether all of
 * them answered (set on -ENODATA too). Library-internal (internal.h).
 */
int sacred_slots_read_every(struct sacred_slots *s, unsigned int slot,
			    void *data, size_t max,
			    struct sacred_cell_view *view, bool *every)
{
	struct sacred_rmem_result res;
	int ret;

	if (!s || slot >= s->nr_slots || (!data && max) || !every)
		return -EINVAL;
	*every = false;
	ret = slots_read_pair(s, slot, true, &res);
	if (ret)
		return ret;
	*every = res.ok == (1U << sacred_rmem_nr_mems(s->rm)) - 1;
	return slots_pick(s, slot, &res, data, max, view);
}

/**
 * sacred_slots_read_after() - a changePermission, then the newest valid
 * cell of a slot, in that order at every memory the read counts
 * @s: the slots
 * @slot: which
 * @perm: the changePermission sent first (any region; typically a revoke
 *	of the slot's writer on @s's own region)
 * @data: gets the payload
 * @max: room in @data
 * @view: as for sacred_slots_read(); may be NULL
 *
 * One sacred_rmem_chain() of two operations: at each memory the READ of
 * both cells is sent only once the changePermission there was answered,
 * and cells are taken only from memories where both succeeded. A quorum
 * of separate sacred_rmem_change_perm() and sacred_slots_read() calls does
 * not give that: a memory that missed the change (down, its connection
 * broken, or sitting out with an earlier changePermission unanswered) can
 * be reconnected in between and counted by the read, while the revoked
 * writer can still write there after it. With this call, every memory
 * whose cells are used had the change applied - a revoked writer fenced -
 * before it was read: what the writer completed on a quorum is seen, and
 * nothing it writes later can land at those memories. Two quorum round
 * trips, one after the other.
 *
 * Return: as sacred_slots_read() (0, -ENODATA, -ENOSPC, -EINVAL); the
 * errors of sacred_rmem_chain(): -EPERM when the policies refused the
 * change on enough memories that no quorum can accept it, else as
 * sacred_rmem_write().
 */
int sacred_slots_read_after(struct sacred_slots *s, unsigned int slot,
			    const struct sacred_perm_req *perm, void *data,
			    size_t max, struct sacred_cell_view *view)
{
	struct sacred_rmem_result res;
	struct sacred_io ops[2];
	int ret;

	if (!s || !perm || slot >= s->nr_slots || (!data && max))
		return -EINVAL;
	ops[0] = (struct sacred_io){
		.opcode = SACRED_IO_PERM,
		.perm = *perm,
	};
	ops[1] = (struct sacred_io){
		.opcode = SACRED_IO_READ,
		.region_id = s->region_id,
		.offset = slot_offset(s, slot),
		.len = 2 * s->cell_size,
	};
	ret = sacred_rmem_chain(s->rm, ops, 2, (void *const *)s->bufs, &res);
	if (ret)
		return ret;
	/* Only memories where both were done: bit i of res.ok. */
	return slots_pick(s, slot, &res, data, max, view);
}

/**
 * sacred_slots_read_many() - read several slots in one quorum round trip
 * @s: the slots handles, all on the same replicated memory (one may
 *	appear more than once)
 * @slots: which slot of each
 * @nr: how many, 1 to SACRED_RMEM_CHAIN_MAX
 * @data: per slot, where its payload goes
 * @max: room in each
 * @views: per slot, as sacred_slots_read() gives it (may be NULL)
 * @rets: per slot, what sacred_slots_read() would have returned: 0,
 *	-ENODATA or -ENOSPC
 *
 * Both cells of every slot are read from every memory at once
 * (sacred_rmem_batch()): as many reads as @nr sacred_slots_read() calls,
 * but one round trip, when the reads do not depend on each other. Their
 * cells must fit in the replicated memory's max_io together.
 *
 * Return: 0 when a quorum answered (each slot's outcome in @rets);
 * -EINVAL; -ENOMEM; -EMSGSIZE; the errors of sacred_rmem_batch().
 */
int sacred_slots_read_many(struct sacred_slots *const *s,
			   const unsigned int *slots, unsigned int nr,
			   void *const *data, size_t max,
			   struct sacred_cell_view *views, int *rets)
{
	struct sacred_io ops[SACRED_RMEM_CHAIN_MAX];
	uint8_t *bufs[SACRED_RMEM_MAX] = { NULL };
	struct sacred_rmem_result res;
	size_t at[SACRED_RMEM_CHAIN_MAX];
	unsigned int k, i, n;
	size_t total = 0;
	uint8_t *mem;
	int ret;

	if (!s || !slots || !nr || nr > SACRED_RMEM_CHAIN_MAX || !data || !rets)
		return -EINVAL;
	for (k = 0; k < nr; k++)
		if (!s[k] || s[k]->rm != s[0]->rm ||
		    slots[k] >= s[k]->nr_slots || (!data[k] && max))
			return -EINVAL;
	for (k = 0; k < nr; k++) {
		ops[k] = (struct sacred_io){
			.opcode = SACRED_IO_READ,
			.region_id = s[k]->region_id,
			.offset = slot_offset(s[k], slots[k]),
			.len = 2 * s[k]->cell_size,
		};
		at[k] = total;
		total += 2 * s[k]->cell_size;
	}
	if (total > sacred_rmem_max_io(s[0]->rm))
		return -EMSGSIZE;
	n = sacred_rmem_nr_mems(s[0]->rm);
	mem = malloc(n * total);
	if (!mem)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		bufs[i] = mem + i * total;
	ret = sacred_rmem_batch(s[0]->rm, ops, nr, (void *const *)bufs, &res);
	for (k = 0; !ret && k < nr; k++) {
		struct sacred_cell_view v;

		rets[k] = slots_newest(s[k], bufs, at[k], &res, &v, NULL);
		if (!rets[k])
			rets[k] = slots_deliver(s[k], slots[k], &v, data[k],
						max, views ? &views[k] : NULL);
	}
	free(mem);
	return ret;
}
