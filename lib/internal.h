/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - helpers the library's files share; not installed, not part
 * of the API (libsacred.map keeps sacred_slots_read_every() local). All
 * serve a writer that opens its cells again.
 */
#ifndef SACRED_LIB_INTERNAL_H
#define SACRED_LIB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct sacred_slots;
struct sacred_cell_view;

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
 * lib/pmp.c): its newest cell is in cell @newest, and @have of the
 * @answered memories (of @nr_mems; @quorum a majority) hold it. That cell,
 * if a quorum holds it; the other one, if every memory answered and fewer
 * hold it (a write cut short: the next write goes over it). Otherwise it
 * cannot be told - a memory that did not answer may hold it or not - and
 * a write into either cell, if torn, could destroy the last complete one:
 * -1, write nothing until a later read tells.
 */
static inline int sacred_good_cell(unsigned int newest, unsigned int have,
				   unsigned int answered, unsigned int nr_mems,
				   unsigned int quorum)
{
	if (have >= quorum)
		return newest;
	if (answered == nr_mems)
		return 1 - newest;
	return -1;
}

/*
 * As sacred_slots_read(), from every memory that answers, and whether all
 * of them did (lib/slots.c): for a writer that must know it never wrote
 * a slot, not just that no quorum holds a write (lib/cq.c's leader).
 */
int sacred_slots_read_every(struct sacred_slots *s, unsigned int slot,
			    void *data, size_t max,
			    struct sacred_cell_view *view, bool *every);

#endif /* SACRED_LIB_INTERNAL_H */
