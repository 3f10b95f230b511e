/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A replicated log's application state for tests: the entries it
 * delivered, stored in order. Entry i is stored at @entries + i * @entry,
 * *@applied entries are there, at most @cap; a snapshot of n entries is
 * the first n * @entry bytes. The commit, snapshot and restore callbacks
 * of struct sacred_log_attr for selftests/sacred_log.c and
 * selftests/sacred_multivm.c.
 */
#ifndef _SACRED_LOG_STATE_H
#define _SACRED_LOG_STATE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

static inline void log_state_commit(void *entries, size_t entry,
				    unsigned int cap, atomic_uint *applied,
				    uint64_t index, const void *data,
				    size_t len)
{
	if (index < cap && len <= entry) {
		memcpy((char *)entries + index * entry, data, len);
		atomic_store(applied, index + 1);
	}
}

/* Entries [0, @n) into @buf, @n being all applied: its bytes, or -EINVAL. */
static inline ssize_t log_state_snapshot(const void *entries, size_t entry,
					 unsigned int cap, atomic_uint *applied,
					 uint64_t n, void *buf, size_t max)
{
	size_t len = n * entry;

	if (n != atomic_load(applied) || n > cap || len > max)
		return -EINVAL;
	memcpy(buf, entries, len);
	return len;
}

/* Never backwards, never a length that is not @n entries': -EBADMSG. */
static inline int log_state_restore(void *entries, size_t entry,
				    unsigned int cap, atomic_uint *applied,
				    uint64_t n, const void *buf, size_t len)
{
	if (n <= atomic_load(applied) || n > cap || len != n * entry)
		return -EBADMSG;
	memcpy(entries, buf, len);
	atomic_store(applied, n);
	return 0;
}

#endif /* _SACRED_LOG_STATE_H */
