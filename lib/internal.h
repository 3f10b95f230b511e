/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - helpers the library's files share; not installed, not part
 * of the API (libsacred.map keeps sacred_slots_read_every() and
 * sacred_rmem_revive_lazy() local).
 */
#ifndef SACRED_LIB_INTERNAL_H
#define SACRED_LIB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sacred.h"

/*
 * The real-time clock in nanoseconds: a number above every counter this
 * process id used before - a proof counter (lib/conn.c), a writer's cell
 * sequence numbers (lib/slots.c, lib/pmp.c) - as long as the clock did
 * not go back across the restart (one step of a counter takes far more
 * than a nanosecond). Callers still go above what they see.
 */
static inline uint64_t sacred_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * Which of a slot's two cells holds its writer's last complete write, for
 * a writer that opens the slot again and no longer knows (lib/slots.c,
 * lib/pmp.c, lib/log.c), from a read of the pair at every memory that
 * answers: sacred_cell_tally_add() for each of them, then
 * sacred_cell_tally_good().
 */
struct sacred_cell_tally {
	struct sacred_cell_view best;	/* the newest valid cell seen */
	unsigned int cell;		/* which of the two holds it */
	unsigned int have;		/* memories holding it; 0: none seen */
	unsigned int answered;		/* memories that answered */
};

/*
 * One memory's answer: @v its newest valid cell of the pair, in cell
 * @cell, or NULL if it holds none.
 */
static inline void sacred_cell_tally_add(struct sacred_cell_tally *t,
					 const struct sacred_cell_view *v,
					 unsigned int cell)
{
	t->answered++;
	if (!v)
		return;
	if (!t->have || sacred_cell_newer(v, &t->best)) {
		t->best = *v;
		t->cell = cell;
		t->have = 1;
	} else if (!sacred_cell_newer(&t->best, v)) {
		t->have++;
	}
}

/*
 * The good cell, with @nr_mems memories and @quorum a majority: the one
 * holding the newest write if a quorum holds it; the other one if every
 * memory answered and fewer hold it (a write cut short: the next write
 * goes over it). Otherwise it cannot be told - a memory that did not
 * answer may hold it or not - and a write into either cell, if torn,
 * could destroy the last complete one: -1, write nothing until a later
 * read tells. Call only with t->have: with no valid cell anywhere the
 * caller knows best.
 */
static inline int sacred_cell_tally_good(const struct sacred_cell_tally *t,
					 unsigned int nr_mems,
					 unsigned int quorum)
{
	if (t->have >= quorum)
		return t->cell;
	if (t->answered == nr_mems)
		return 1 - t->cell;
	return -1;
}

/*
 * As sacred_slots_read(), from every memory that answers, and whether all
 * of them did (lib/slots.c): for a writer that must know it never wrote
 * a slot, not just that no quorum holds a write (lib/cheapq.c's leader).
 */
int sacred_slots_read_every(struct sacred_slots *s, unsigned int slot,
			    void *data, size_t max,
			    struct sacred_cell_view *view, bool *every);

/*
 * lib/rmem.c: sacred_rmem_read() (not @all) sent only to the memories in
 * @mask (bit i: memory i), returning once a quorum of the handle's
 * memories among them answered, or when that can no longer happen; the
 * others get -ENOTCONN, not asked (lib/log.c's recovery reads only where
 * its changePermission went through).
 */
int sacred_rmem_read_among(struct sacred_rmem *rm, uint32_t region_id,
			   uint64_t offset, void *const *bufs, size_t len,
			   uint32_t mask, struct sacred_rmem_result *res);

/*
 * lib/rmem.c: after a write (of @cell bytes, or a chain with one) on @rm
 * that failed, per @res: whether it may sit, complete, on a quorum all the
 * same - unless enough memories surely did not take it: never sent there
 * (down, sitting out, refused at the post, another incarnation), or
 * refused by the memory in one packet (a revoked key; a multi-packet cell
 * refused mid-write may be placed in part, and valid where the bytes
 * missing were the zeros both writes hold). An acknowledgement lost with
 * its connection, a timeout or an answer still to come leave it possible:
 * the writer's next write must not go blind into the cell that write used
 * (lib/log.c, lib/slots.c, lib/pmp.c mark it unsure).
 */
bool sacred_rmem_maybe_on_quorum(const struct sacred_rmem *rm,
				 const struct sacred_rmem_result *res,
				 size_t cell);

/* lib/rmem.c: revive without waiting for memories that answer nothing. */
int sacred_rmem_revive_lazy(struct sacred_rmem *rm);
bool sacred_rmem_reviving(const struct sacred_rmem *rm);

/*
 * lib/conn.c: the rdma_cm channel of @conn's connect attempt, readable
 * when sacred_conn_reconnect_async() has something to take; -1 if none.
 */
int sacred_conn_cm_fd(const struct sacred_conn *conn);

/*
 * lib/conn.c: a connection as sacred_conn_create() makes it, but not
 * connected yet: broken until sacred_conn_reconnect() or
 * sacred_conn_reconnect_async() connects it (lib/rmem.c, for a memory
 * never reached).
 */
int sacred_conn_new_unconnected(const struct sacred_conn_attr *attr,
				struct sacred_conn **connp);

/*
 * lib/conn_reconnect.c: break @conn as sacred_conn_reconnect() does before it
 * connects again - operations fail, and an established rdma_cm
 * connection is disconnected, waiting (up to 250 ms) for the instance to
 * answer, so that it has let go of it when the next attempt arrives
 * (lib/rmem.c, before the attempts of a blocking revive).
 */
void sacred_conn_drop(struct sacred_conn *conn);

/*
 * lib/conn_sync.c: forget attached region @region_id, another incarnation than
 * the one of tag *@tag a quorum of memories holds (@tag NULL: no quorum
 * shares a tag): dropped, its id stale (-ESTALE) until attached
 * explicitly. Returns -ESTALE (-ENOENT if it was not attached).
 */
int sacred_conn_forget(struct sacred_conn *conn, uint32_t region_id,
		       const uint64_t *tag);

/*
 * lib/rmem.c: the one tag regions @first .. @first + @count - 1 were
 * made with (sacred_rmem_region_tag()), for an agreement that binds its
 * signatures to one incarnation of its regions (lib/cheapq.c, lib/neb.c).
 * -EPROTO if a region's memories disagree or two regions' tags differ,
 * -ENOENT if one is attached nowhere.
 */
int sacred_rmem_span_tag(const struct sacred_rmem *rm, uint32_t first,
			 unsigned int count, uint64_t *tag);

#endif /* SACRED_LIB_INTERNAL_H */
