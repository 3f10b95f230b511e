/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - helpers the library's files share; not installed, not part
 * of the API.
 */
#ifndef SACRED_LIB_INTERNAL_H
#define SACRED_LIB_INTERNAL_H

#include <stdint.h>
#include <time.h>

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

#endif /* SACRED_LIB_INTERNAL_H */
