// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - a replicated log on Protected Memory Paxos, in the style of
 * Mu (Aguilera et al., OSDI'20): a stable leader appends an entry with
 * one quorum write; leadership comes from a heartbeat failure detector
 * read over RDMA, and a new leader fences the old one by taking write
 * permission on the log region (policy exclusive-writer) before it
 * recovers the log's tail.
 *
 * This file owns struct sacred_log: the log region's layout, the
 * heartbeat and failure detector, takeover and recovery, appends,
 * followers catching up, and the commit callback.
 *
 * Layout of the log region (same id on every memory, exclusive-writer,
 * every process a read-write member), all in cells (lib/cell.c):
 *
 *   meta[p]       two cells per process: (mbal, commit) - p's promise and
 *                 how many entries p knows to be decided
 *   snap[p]       two cells per process, with snapshots only: (index,
 *                 len, state) - the state after the first index entries
 *   area[p][s]    two cells per process and slot: the entry p accepted
 *                 at an index i with i % capacity == s: (bal, index,
 *                 commit, len, data)
 *
 * Every process writes only its own meta and area, and into the cell that
 * does not hold its last write a quorum took (as lib/pmp.c): a leader
 * revoked in the middle of a write can tear only its own newer cell,
 * never an entry that is decided. A write that failed may have reached a
 * quorum all the same (an acknowledgement lost with its connection), and
 * a follower may have counted it there (below): so after a failed entry
 * write that too few memories surely refused, its writer no longer knows
 * which cell of the pair to keep, and settles it from the memories - as
 * a process opened again does - before it writes that pair again. The
 * value of index i is the entry with
 * the highest bal at i over all areas of a quorum of memories - unless a
 * later index shows in i's slot of any area: then i was overwritten, and
 * only a snapshot has it (see the end of this comment).
 *
 * Heartbeats: region hb_region (static, everyone read-write) holds one
 * 8-byte counter per process; each process bumps its own every
 * hb_period_ms and reads all of them. A process whose counter has not
 * moved for its timeout (suspect_ms at first) is suspected; the leader is
 * the lowest-numbered process not suspected (Omega). A process found
 * alive after it was suspected gets its timeout doubled (up to 16 x
 * suspect_ms), as in an eventually perfect failure detector: a new
 * leader whose takeover outlasts the timeout on a loaded host is not
 * fenced by a follower over and over (make bench measured 60 s stalls
 * in 1 of 20 fail-overs without it).
 *
 * Suspected here means found still for its timeout at one of this
 * process's heartbeat rounds: a gap between two reads that no round
 * fell into (this process was held up itself) raises nothing.
 *
 * A raised timeout comes back down: it halves, never below suspect_ms,
 * once its process has been seen alive for calm_timeouts of it (8 by
 * default) in which no heartbeat round found its counter still for half
 * of it - a stretch in which the halved timeout would have suspected
 * nobody wrongly. A false suspicion, or a round that found it still for
 * half the timeout, starts that stretch again. Without the decay, a
 * process killed and restarted now and then (found alive after each
 * restart, as a slow one is) would be suspected ever more slowly: each
 * fail-over from it longer than the last, up to 16 x suspect_ms. With
 * it, a slow process still gets the timeout it needs within one episode
 * of false suspicions (they come closer together than the calm
 * stretch), and is suspected wrongly at most once per calm stretch
 * afterwards if it stays that slow; a process whose counter stands
 * still for half its timeout more often than that keeps the raised
 * timeout.
 *
 * Becoming leader with ballot b (takeover), at each memory in order:
 * changePermission(write), write own meta (mbal = b), read every meta;
 * abort if a higher mbal shows. Then recovery: from the first entry not
 * delivered here, read every area index by index (restoring a snapshot
 * first if that entry was overwritten); every entry found past the
 * highest commit any meta or entry shows is accepted again with ballot b
 * in own area (one quorum write each), up to the first index no area
 * holds. Then the log is decided up to there, and appends begin. A
 * memory the takeover could not reach holds no write permission of the
 * leader's: when it is up again, the leader takes over anew (next
 * heartbeat tick), or its appends there would all be refused.
 *
 * Appending: write (b, i, commit, data) into own area at the next index:
 * one round trip. A quorum took it: decided, the commit callback runs. A
 * refusal (write permission revoked: someone else took over) or no quorum
 * ends the leadership; the next poll decides who leads.
 *
 * Followers catch up by reading every area from their next index on (one
 * quorum read per area) and every meta, and deliver in order the entries
 * below the highest commit seen, and past it those a quorum of memories
 * holds (a leader's write that a quorum took is decided: the leader's own
 * rule). Each poll reads the metas and the elected leader's next slot in
 * one round trip, and the areas only when one of them shows something
 * new.
 *
 * A process that crashed may open the log again with its id. It starts
 * from nothing: it delivers the log from index 0 again, numbers its cells
 * above every one it wrote before (the real-time clock, lib/internal.h)
 * and its ballots above its own last promise; and before it writes into
 * one of its own cell pairs - its meta, or an area index - it reads the
 * pair from every memory that answers to learn which cell holds its last
 * write a quorum took (sacred_cell_tally_good()). Until that can be told (a
 * memory that did not answer may hold it) it writes nothing there: a
 * takeover or an append fails with -ENOTCONN and is tried again.
 *
 * A process that cannot lead yet abstains: it keeps its heartbeat still
 * and leaves itself out of the election, so that the others elect - and
 * keep - someone else. That is a process catching up after it opened
 * (until it delivered every entry the metas said were committed then:
 * recovering a long log inside one takeover would outlast the others'
 * timeouts), and one that opened again and cannot yet tell which of its
 * cells to keep (it asks the memories again on every heartbeat tick).
 *
 * Without snapshots the log holds capacity entries and appends beyond
 * it fail with -ENOSPC. With snapshots (snapshot_max, and the
 * application's snapshot and restore callbacks) it is a window of
 * capacity slots over an unbounded sequence, in the style of Raft's log
 * compaction: index i lives in slot i % capacity, and a cell says which
 * index it holds. The leader writes a snapshot of its state (one cell,
 * in pieces of at most max_io, all of them at a memory before it counts
 * towards the quorum: sacred_rmem_chain()) every capacity / 2 appends
 * (rounded up), and never appends index i while its last snapshot a
 * quorum took covers fewer than i - capacity + 1 entries (then it
 * snapshots first, or the append fails with -ENOSPC if the application
 * cannot). So the invariant is: an entry is overwritten only once a
 * snapshot covering it sits on a quorum, in a cell its writer will not
 * overwrite before a newer one does.
 *
 * A reader that finds, in any area, its next index's slot holding a
 * later index knows it fell behind: it reads every process's snapshot
 * cells from the memories, takes the newest valid one past its applied
 * entries and hands it to restore, then reads on from there. The check
 * is per slot and over every area because a reader must never take a
 * stale, lower-ballot entry for an index whose decided copy was
 * overwritten in another area. A process opened again starts from a
 * snapshot the same way, and a new leader recovers from one if it is
 * that far behind. A leader overwrites its own slot in recovery without
 * a snapshot of its own: the index it writes was appended before by a
 * leader that had one covering the slot's older entry. A process opened
 * again that led before settles which of its own snapshot cells to keep
 * as it does for its meta, and abstains until it can tell.
 *
 * Not thread-safe: one thread drives a handle (poll and propose).
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "sacred.h"

#define LOG_META_HDR	16	/* mbal, commit */
#define LOG_ENTRY_HDR	32	/* bal, index, commit, len, pad */
#define LOG_SNAP_HDR	16	/* index, len */
#define LOG_SNAP_MAX	(1U << 30)
/*
 * Batches read, or snapshots restored, by one follower's poll at most:
 * behind a leader that appends without pause, catching up would
 * otherwise never return (and the follower's heartbeat would stop).
 */
#define LOG_CATCH_UP_MAX	16
/* A process's suspicion timeout at most, in suspect_ms. */
#define LOG_SUSPECT_MAX		16

enum { LOG_FOLLOWER, LOG_LEADER };

/**
 * struct log_layout - the log region's cells
 * @meta_cell: bytes of a meta cell
 * @entry_cell: bytes of an entry cell
 * @snap_cell: bytes of a snapshot cell; 0 without snapshots
 * @snaps: offset of snap[0]
 * @areas: offset of area[0][0]
 * @size: bytes of the whole layout
 */
struct log_layout {
	size_t meta_cell;
	size_t entry_cell;
	size_t snap_cell;
	uint64_t snaps;
	uint64_t areas;
	uint64_t size;
};

/*
 * Values of sacred_log.still[]: how still a process's counter was at
 * this process's heartbeat rounds since it last moved.
 */
enum { LOG_MOVING, LOG_HALF_STILL, LOG_SUSPECTED };

/* A value of sacred_log.good[]: which own cell to keep is not known yet. */
#define LOG_CELL_UNSURE	2

/**
 * struct sacred_log - one process's view of a replicated log
 * @a: as opened
 * @lay: where the cells are
 * @role: LOG_FOLLOWER or LOG_LEADER
 * @b: ballot of the current leadership
 * @mbal: own promise
 * @max_seen: highest ballot seen anywhere
 * @seq: sequence number of own last cell
 * @meta_good: the own meta cell holding the last completed write
 * @meta_unsure: opened again, and @meta_good cannot be told yet
 * @area_unsure: opened again, and own cell pair @unsure_at cannot be told
 *	yet
 * @unsure_at: that index
 * @stand_after: abstain from the election until this many entries are
 *	delivered (the highest commit the metas showed at the open)
 * @good: per slot, the own area cell holding the last completed write,
 *	or LOG_CELL_UNSURE
 * @snap_good: the own snapshot cell holding the last completed write
 * @snap_unsure: opened again, and @snap_good cannot be told yet
 * @snap_index: entries the own last snapshot a quorum took covers
 * @next: leader: the next index to append
 * @committed: entries known decided: [0, @committed)
 * @applied: entries delivered to the callback
 * @meta_commit: the commit last written into own meta
 * @hb: own heartbeat counter
 * @hb_seen: per process, the last counter read
 * @hb_change: per process, when its counter last moved (ms)
 * @susp: per process, how long a still counter takes to suspect it (ms)
 * @calm: per process, since when it has been neither suspected nor still
 *	for half of @susp (ms): @susp halves after calm_timeouts of it
 * @still: per process, LOG_MOVING, LOG_HALF_STILL or LOG_SUSPECTED: at a
 *	heartbeat round since its counter last moved, it stood still for
 *	less than half of @susp, at least half, or all of it
 * @last_hb: when the last heartbeat round ran (ms)
 * @last_revive: when broken connections were last reconnected (ms)
 * @fenced: leader: the memories on which its takeover took write
 *	(log_fence())
 * @leader: the process the failure detector says leads
 * @stats: counters
 * @cell: a cell being written
 * @bufs: per memory, a read buffer of max_io bytes
 * @snap: a snapshot cell being written, or the best one read
 * @sbufs: per memory, a snapshot cell pair being read
 * @tail: per index of a recovery or catch-up batch, the best entry seen
 * @trim_at: in the last batch read, the first index found overwritten by
 *	a later one (the batch's length if none)
 */
struct sacred_log {
	struct sacred_log_attr a;
	struct log_layout lay;
	int role;
	uint64_t b;
	uint64_t mbal;
	uint64_t max_seen;
	uint64_t seq;
	uint8_t meta_good;
	bool meta_unsure;
	bool area_unsure;
	uint64_t unsure_at;
	uint64_t stand_after;
	uint8_t *good;
	uint8_t snap_good;
	bool snap_unsure;
	uint64_t snap_index;
	uint64_t next;
	uint64_t committed;
	uint64_t applied;
	uint64_t meta_commit;
	uint64_t hb;
	uint64_t hb_seen[SACRED_LOG_MAX_PROCS];
	uint64_t hb_change[SACRED_LOG_MAX_PROCS];
	uint64_t susp[SACRED_LOG_MAX_PROCS];
	uint64_t calm[SACRED_LOG_MAX_PROCS];
	uint8_t still[SACRED_LOG_MAX_PROCS];
	uint64_t last_hb;
	uint64_t last_revive;
	uint32_t fenced;
	int leader;
	struct sacred_log_stats stats;
	uint8_t *cell;
	uint8_t *bufs[SACRED_RMEM_MAX];
	uint8_t *snap;
	uint8_t *sbufs[SACRED_RMEM_MAX];
	struct log_best *tail;
	unsigned int batch;
	int trim_at;
};

/*
 * The best copy of one index seen in a batch of reads: the entry of the
 * highest bal, in process @area's area, and on how many of the memories
 * that answered the read of that area it sits (@copies).
 */
struct log_best {
	uint64_t bal;
	uint32_t len;
	unsigned int area;
	unsigned int copies;
	uint8_t *data;
};

static uint64_t log_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t log_meta_off(const struct sacred_log *l, unsigned int p,
			     unsigned int c)
{
	return ((uint64_t)p * 2 + c) * l->lay.meta_cell;
}

/* The slot of index @i. */
static uint64_t log_slot(const struct sacred_log *l, uint64_t i)
{
	return i % l->a.capacity;
}

/* Slots from index @i's on to the end of the area: at most @cnt. */
static uint64_t log_run(const struct sacred_log *l, uint64_t i, uint64_t cnt)
{
	uint64_t left = l->a.capacity - log_slot(l, i);

	return cnt < left ? cnt : left;
}

static uint64_t log_entry_off(const struct sacred_log *l, unsigned int p,
			      uint64_t i, unsigned int c)
{
	return l->lay.areas +
	       (((uint64_t)p * l->a.capacity + log_slot(l, i)) * 2 + c) *
	       l->lay.entry_cell;
}

static uint64_t log_snap_off(const struct sacred_log *l, unsigned int p,
			     unsigned int c)
{
	return l->lay.snaps + ((uint64_t)p * 2 + c) * l->lay.snap_cell;
}

/* The layout of @a's log region into @o: 0 or -EINVAL. */
static int log_layout(const struct sacred_log_attr *a, struct log_layout *o)
{
	uint64_t metas;

	if (!a->nr_procs || a->nr_procs > SACRED_LOG_MAX_PROCS ||
	    !a->capacity || a->capacity > (1U << 24) ||
	    a->entry_max > (1U << 20) || a->snapshot_max > LOG_SNAP_MAX)
		return -EINVAL;
	o->meta_cell = (SACRED_CELL_HDR + LOG_META_HDR + 7) & ~(size_t)7;
	o->entry_cell = (SACRED_CELL_HDR + LOG_ENTRY_HDR + a->entry_max + 7) &
			~(size_t)7;
	o->snap_cell = a->snapshot_max ?
		       (SACRED_CELL_HDR + LOG_SNAP_HDR + a->snapshot_max + 7) &
		       ~(size_t)7 : 0;
	metas = (uint64_t)a->nr_procs * 2 * o->meta_cell;
	o->snaps = (metas + 63) & ~63ULL;
	o->areas = (o->snaps + (uint64_t)a->nr_procs * 2 * o->snap_cell +
		    63) & ~63ULL;
	o->size = o->areas +
		  (uint64_t)a->nr_procs * a->capacity * 2 * o->entry_cell;
	return 0;
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* Which cell of a pair is the newer valid one (into @v), or -1. */
static int log_pick(const uint8_t *pair, size_t cell, size_t hdr,
		    struct sacred_cell_view *v)
{
	struct sacred_cell_view c[2];
	bool ok[2];
	unsigned int j;

	for (j = 0; j < 2; j++)
		ok[j] = !sacred_cell_decode(pair + j * cell, cell, &c[j]) &&
			c[j].len >= hdr;
	j = ok[0] && (!ok[1] || sacred_cell_newer(&c[0], &c[1])) ? 0 : 1;
	if (!ok[j])
		return -1;
	*v = c[j];
	return j;
}

/*
 * For a process that opened the log again: which own cell of the pair at
 * @off of @bufs[k], for every memory k in @ok (those that answered a
 * read of every memory), holds its last write a quorum took, by
 * sacred_cell_tally_good()'s rule - 0, 1 or LOG_CELL_UNSURE; @keep if no memory
 * holds a valid cell of the pair. Raises l->seq above every cell seen.
 */
static int log_own_good(struct sacred_log *l, uint8_t *const *bufs,
			uint32_t ok, size_t off, size_t cell, size_t hdr,
			int keep)
{
	unsigned int k, n = sacred_rmem_nr_mems(l->a.rm);
	struct sacred_cell_tally t = { 0 };
	struct sacred_cell_view v;
	int c;

	for (k = 0; k < n; k++) {
		if (!(ok & (1U << k)))
			continue;
		c = log_pick(bufs[k] + off, cell, hdr, &v);
		sacred_cell_tally_add(&t, c < 0 ? NULL : &v, c);
	}
	if (!t.have)
		return keep;
	if (t.best.seq > l->seq)
		l->seq = t.best.seq;
	c = sacred_cell_tally_good(&t, n, sacred_rmem_quorum(l->a.rm));
	return c < 0 ? LOG_CELL_UNSURE : c;
}

/*
 * Opened again: the good cells of own area from index @i on (a batch),
 * from a read of every memory that answers. Returns 0, -ENOTCONN while
 * index @i's cannot be told, or the read's error.
 */
static int log_settle_area(struct sacred_log *l, uint64_t i)
{
	size_t pair = 2 * l->lay.entry_cell;
	struct sacred_rmem_result res;
	uint64_t cnt = log_run(l, i, l->batch), s = log_slot(l, i), j;
	int ret;

	ret = sacred_rmem_read(l->a.rm, l->a.log_region,
			       log_entry_off(l, l->a.me, i, 0),
			       (void *const *)l->bufs, cnt * pair, true, &res);
	l->stats.round_trips++;
	if (ret)
		return ret;
	for (j = 0; j < cnt; j++)
		if (l->good[s + j] == LOG_CELL_UNSURE)
			l->good[s + j] = log_own_good(l, l->bufs, res.ok,
						      j * pair,
						      l->lay.entry_cell,
						      LOG_ENTRY_HDR, 1);
	l->area_unsure = l->good[s] == LOG_CELL_UNSURE;
	l->unsure_at = i;
	return l->area_unsure ? -ENOTCONN : 0;
}

/* Write @payload into own cell pair at @off (cells @size bytes). */
static int log_write_cell(struct sacred_log *l, uint64_t off, size_t size,
			  uint8_t *good, const void *payload, size_t len,
			  struct sacred_rmem_result *res)
{
	int ret;

	memset(res, 0, sizeof(*res));
	ret = sacred_cell_encode(l->cell, size, ++l->seq,
				 sacred_rmem_process_id(l->a.rm), payload, len);
	if (ret)
		return ret;
	ret = sacred_rmem_write(l->a.rm, l->a.log_region,
				off + (1 - *good) * size, l->cell, size, res);
	if (!ret)
		*good = 1 - *good;
	return ret;
}


static int log_write_entry(struct sacred_log *l, uint64_t i, uint64_t bal,
			   const void *data, size_t len)
{
	struct sacred_rmem_result res;
	uint8_t *payload;
	int ret;

	if (l->good[log_slot(l, i)] == LOG_CELL_UNSURE) {
		ret = log_settle_area(l, i);
		if (ret)
			return ret;
	}
	payload = malloc(LOG_ENTRY_HDR + len);
	if (!payload)
		return -ENOMEM;
	memset(payload, 0, LOG_ENTRY_HDR);
	put64(payload, bal);
	put64(payload + 8, i);
	put64(payload + 16, l->committed);
	put64(payload + 24, len);	/* len, then 4 bytes of padding */
	memcpy(payload + LOG_ENTRY_HDR, data, len);
	ret = log_write_cell(l, log_entry_off(l, l->a.me, i, 0),
			     l->lay.entry_cell, &l->good[log_slot(l, i)],
			     payload, LOG_ENTRY_HDR + len, &res);
	free(payload);
	l->stats.round_trips++;
	/* Maybe on a quorum, maybe delivered: not to be written over blind. */
	if (ret && sacred_rmem_maybe_on_quorum(l->a.rm, &res,
					       l->lay.entry_cell))
		l->good[log_slot(l, i)] = LOG_CELL_UNSURE;
	return ret;
}

static int log_write_meta(struct sacred_log *l, uint64_t mbal)
{
	struct sacred_rmem_result res;
	uint8_t payload[LOG_META_HDR];
	int ret;

	put64(payload, mbal);
	put64(payload + 8, l->committed);
	ret = log_write_cell(l, log_meta_off(l, l->a.me, 0), l->lay.meta_cell,
			     &l->meta_good, payload, sizeof(payload), &res);
	l->stats.round_trips++;
	if (!ret)
		l->meta_commit = l->committed;
	return ret;
}

/*
 * From the metas in l->bufs of the memories in @ok: the highest mbal of
 * the others (*@mbal) and the highest commit of all (*@commit).
 */
static void log_scan_metas(struct sacred_log *l, uint32_t ok, uint64_t *mbal,
			   uint64_t *commit)
{
	unsigned int k, p, n = sacred_rmem_nr_mems(l->a.rm);

	*mbal = 0;
	*commit = 0;
	for (k = 0; k < n; k++) {
		if (!(ok & (1U << k)))
			continue;
		for (p = 0; p < l->a.nr_procs; p++) {
			struct sacred_cell_view v;
			uint64_t x;

			if (log_pick(l->bufs[k] + log_meta_off(l, p, 0),
				     l->lay.meta_cell, LOG_META_HDR, &v) < 0)
				continue;
			x = get64(v.data);
			if (p != l->a.me && x > *mbal)
				*mbal = x;
			x = get64((const uint8_t *)v.data + 8);
			if (x > *commit)
				*commit = x;
		}
	}
}

/*
 * Every meta from a quorum (@all: from every memory that answers) into
 * l->bufs; @res says who answered.
 */
static int log_fetch_metas(struct sacred_log *l, bool all,
			   struct sacred_rmem_result *res)
{
	return sacred_rmem_read(l->a.rm, l->a.log_region, 0,
				(void *const *)l->bufs,
				log_meta_off(l, l->a.nr_procs, 0), all, res);
}

static int log_read_metas(struct sacred_log *l, uint64_t *mbal,
			  uint64_t *commit)
{
	struct sacred_rmem_result res;
	int ret;

	ret = log_fetch_metas(l, false, &res);
	l->stats.round_trips++;
	if (ret)
		return ret;
	log_scan_metas(l, res.ok, mbal, commit);
	return 0;
}

/*
 * Opened again: own last promise, the others' highest, and which own meta
 * cell holds the last write a quorum took, from a read of every memory
 * that answers. Returns 0, -ENOTCONN while that cell cannot be told, or
 * the read's error.
 */
static int log_settle_meta(struct sacred_log *l)
{
	unsigned int k, n = sacred_rmem_nr_mems(l->a.rm);
	struct sacred_rmem_result res;
	struct sacred_cell_view v;
	uint64_t mbal, commit;
	int good, ret;

	ret = log_fetch_metas(l, true, &res);
	l->stats.round_trips++;
	if (ret)
		return ret;
	log_scan_metas(l, res.ok, &mbal, &commit);
	if (mbal > l->max_seen)
		l->max_seen = mbal;
	for (k = 0; k < n; k++)
		if ((res.ok & (1U << k)) &&
		    log_pick(l->bufs[k] + log_meta_off(l, l->a.me, 0),
			     l->lay.meta_cell, LOG_META_HDR, &v) >= 0 &&
		    get64(v.data) > l->mbal)
			l->mbal = get64(v.data);
	good = log_own_good(l, l->bufs, res.ok, log_meta_off(l, l->a.me, 0),
			    l->lay.meta_cell, LOG_META_HDR, l->meta_good);
	l->meta_unsure = good == LOG_CELL_UNSURE;
	if (!l->meta_unsure)
		l->meta_good = good;
	return l->meta_unsure ? -ENOTCONN : 0;
}

/*
 * Read indices [@from, @from + l->batch) of every area from a quorum of
 * the memories in @mask each (not past the end of the area: no wrap
 * within one read);
 * l->tail[j] gets the best entry of index @from + j (bal 0: none) and
 * its copies, *@commit the highest commit any cell carries, and
 * l->trim_at the first
 * j whose slot holds a later index in some area (the entry of @from + j
 * is gone: only a snapshot has it). Returns the number of indices read.
 */
static int log_read_tail(struct sacred_log *l, uint64_t from,
			 uint64_t *commit, uint32_t mask)
{
	unsigned int n = sacred_rmem_nr_mems(l->a.rm);
	unsigned int cnt = log_run(l, from, l->batch), j, k, p;
	size_t pair = 2 * l->lay.entry_cell;
	struct sacred_rmem_result res;
	int ret;

	l->trim_at = (int)cnt;
	for (j = 0; j < cnt; j++) {
		l->tail[j].bal = 0;
		l->tail[j].copies = 0;
	}
	for (p = 0; p < l->a.nr_procs; p++) {
		/* A quorum of @mask: the memories outside it are not asked. */
		ret = sacred_rmem_read_among(l->a.rm, l->a.log_region,
					     log_entry_off(l, p, from, 0),
					     (void *const *)l->bufs, cnt * pair,
					     mask, &res);
		l->stats.round_trips++;
		if (ret)
			return ret;
		for (k = 0; k < n; k++) {
			if (!(res.ok & mask & (1U << k)))
				continue;
			for (j = 0; j < cnt; j++) {
				const uint8_t *d;
				struct sacred_cell_view v;
				uint64_t bal, c, i;
				uint32_t len;

				if (log_pick(l->bufs[k] + j * pair,
					     l->lay.entry_cell, LOG_ENTRY_HDR,
					     &v) < 0)
					continue;
				d = v.data;
				bal = get64(d);
				i = get64(d + 8);
				len = (uint32_t)get64(d + 24);
				if (len != v.len - LOG_ENTRY_HDR ||
				    len > l->a.entry_max ||
				    log_slot(l, i) != log_slot(l, from + j))
					continue;
				c = get64(d + 16);
				if (c > *commit)
					*commit = c;
				if (i > from + j && (int)j < l->trim_at)
					l->trim_at = (int)j;
				if (i != from + j || bal < l->tail[j].bal)
					continue;
				/* (area, bal, index) is one write, once. */
				if (bal == l->tail[j].bal) {
					if (p == l->tail[j].area &&
					    len == l->tail[j].len &&
					    !memcmp(l->tail[j].data,
						    d + LOG_ENTRY_HDR, len))
						l->tail[j].copies++;
					continue;
				}
				l->tail[j].bal = bal;
				l->tail[j].len = len;
				l->tail[j].area = p;
				l->tail[j].copies = 1;
				memcpy(l->tail[j].data, d + LOG_ENTRY_HDR, len);
			}
		}
	}
	return cnt;
}

/* Whether no memory was still to answer when a read returned. */
static bool log_all_answered(const struct sacred_rmem_result *res)
{
	unsigned int k;

	for (k = 0; k < res->nr_mems; k++)
		if (res->status[k] == -EINPROGRESS)
			return false;
	return true;
}

/*
 * Process @p's snapshot cells from the memories into l->sbufs (cell c of
 * memory k at l->sbufs[k] + c * snap_cell), in reads of at most max_io
 * bytes and only as far as the cells' own lengths reach; @okc[c] gets
 * the memories that sent every piece of cell c. *@all: wait for every
 * memory (sacred_rmem_read()); cleared once one did not answer a read in
 * time, so that a memory whose host is gone costs one timeout, not one
 * per read. Returns 0 or a read's error.
 */
static int log_read_snaps(struct sacred_log *l, unsigned int p,
			  uint32_t *okc, bool *all)
{
	size_t max_io = sacred_rmem_max_io(l->a.rm), cell = l->lay.snap_cell;
	size_t first = cell < max_io ? cell : max_io, need, at, len;
	unsigned int k, c, n = sacred_rmem_nr_mems(l->a.rm);
	struct sacred_rmem_result res;
	void *bufs[SACRED_RMEM_MAX];
	uint32_t got, x;
	int ret;

	for (c = 0; c < 2; c++) {
		got = (1U << n) - 1;
		for (k = 0; k < n; k++)
			bufs[k] = l->sbufs[k] + c * cell;
		ret = sacred_rmem_read(l->a.rm, l->a.log_region,
				       log_snap_off(l, p, c), bufs, first, *all,
				       &res);
		l->stats.round_trips++;
		if (ret)
			return ret;
		got &= res.ok;
		*all = *all && log_all_answered(&res);
		need = first;
		for (k = 0; k < n; k++) {
			if (!(got & (1U << k)))
				continue;
			memcpy(&x, (uint8_t *)bufs[k] + 12, 4);
			len = SACRED_CELL_HDR + (size_t)le32toh(x);
			if (len <= cell && len > need)
				need = len;
		}
		for (at = first; at < need; at += max_io) {
			for (k = 0; k < n; k++)
				bufs[k] = l->sbufs[k] + c * cell + at;
			ret = sacred_rmem_read(l->a.rm, l->a.log_region,
					       log_snap_off(l, p, c) + at, bufs,
					       need - at < max_io ?
					       need - at : max_io, *all, &res);
			l->stats.round_trips++;
			if (ret)
				return ret;
			got &= res.ok;
			*all = *all && log_all_answered(&res);
		}
		okc[c] = got;
	}
	return 0;
}

/*
 * Behind the trimmed part of the log: install the newest snapshot past
 * l->applied found in any process's cells on the memories. Any valid one
 * is a safe state (its writer applied decided entries only, in order);
 * every cell is read from a quorum, so the newest one a quorum took is
 * found unless its writer is overwriting it meanwhile. Returns 0 once the
 * state moved on, -EAGAIN if none was newer (the log moved on while this
 * ran: try again), a read's error, restore's, or -EBADMSG for a positive
 * return of restore.
 */
static int log_restore(struct sacred_log *l)
{
	unsigned int c, k, p, n = sacred_rmem_nr_mems(l->a.rm);
	uint64_t best = l->applied, idx;
	size_t best_len = 0;
	uint32_t okc[2], len;
	bool all = true;
	int ret;

	if (!l->lay.snap_cell)
		return -ENOSPC;
	for (p = 0; p < l->a.nr_procs; p++) {
		ret = log_read_snaps(l, p, okc, &all);
		if (ret)
			return ret;
		for (k = 0; k < n; k++) {
			for (c = 0; c < 2; c++) {
				const uint8_t *d;
				struct sacred_cell_view v;

				if (!(okc[c] & (1U << k)) ||
				    sacred_cell_decode(l->sbufs[k] +
						       c * l->lay.snap_cell,
						       l->lay.snap_cell, &v) ||
				    v.len < LOG_SNAP_HDR)
					continue;
				d = v.data;
				idx = get64(d);
				len = (uint32_t)get64(d + 8);
				if (len != v.len - LOG_SNAP_HDR ||
				    len > l->a.snapshot_max || idx <= best)
					continue;
				best = idx;
				best_len = len;
				memcpy(l->snap, d + LOG_SNAP_HDR, len);
			}
		}
	}
	if (best == l->applied)
		return -EAGAIN;
	ret = l->a.restore(l->a.arg, best, l->snap, best_len);
	if (ret)
		return ret < 0 ? ret : -EBADMSG;
	l->applied = best;
	if (l->committed < best)
		l->committed = best;
	l->stats.restores++;
	return 0;
}

/*
 * Opened again: which own snapshot cell holds the last write a quorum
 * took (as log_settle_meta()). Returns 0, -ENOTCONN while it cannot be
 * told, or a read's error.
 */
static int log_settle_snap(struct sacred_log *l)
{
	unsigned int k, up = 0;
	uint32_t okc[2], ok;
	bool all = true;
	int good, ret;

	ret = log_read_snaps(l, l->a.me, okc, &all);
	if (ret)
		return ret;
	ok = okc[0] & okc[1];
	for (k = 0; k < sacred_rmem_nr_mems(l->a.rm); k++)
		up += !!(ok & (1U << k));
	if (up < sacred_rmem_quorum(l->a.rm))
		return -ENOTCONN;
	good = log_own_good(l, l->sbufs, ok, 0, l->lay.snap_cell,
			    LOG_SNAP_HDR, l->snap_good);
	l->snap_unsure = good == LOG_CELL_UNSURE;
	if (!l->snap_unsure)
		l->snap_good = good;
	return l->snap_unsure ? -ENOTCONN : 0;
}

/*
 * Leader: a snapshot of the state after l->applied entries into the own
 * snapshot cell that does not hold the last one a quorum took, in pieces
 * of at most max_io sent in order at each memory; a memory counts when
 * it took every piece. Returns 0; -ENOSPC when the application could not
 * write one; -ENOTCONN while opened again and unsure of the own cells;
 * the chain's errors.
 */
static int log_snapshot(struct sacred_log *l)
{
	struct sacred_io ops[SACRED_RMEM_CHAIN_MAX];
	size_t max_io = sacred_rmem_max_io(l->a.rm), size, at;
	uint8_t *payload = l->snap + SACRED_CELL_HDR;
	unsigned int nops = 0;
	uint64_t off;
	ssize_t len;
	int ret;

	if (l->snap_unsure) {
		ret = log_settle_snap(l);
		if (ret)
			return ret;
	}
	len = l->a.snapshot(l->a.arg, l->applied, payload + LOG_SNAP_HDR,
			    l->a.snapshot_max);
	if (len < 0 || (size_t)len > l->a.snapshot_max)
		return -ENOSPC;
	put64(payload, l->applied);
	put64(payload + 8, len);
	ret = sacred_cell_encode(l->snap, l->lay.snap_cell, ++l->seq,
				 sacred_rmem_process_id(l->a.rm), payload,
				 LOG_SNAP_HDR + len);
	if (ret)
		return ret;
	size = SACRED_CELL_HDR + LOG_SNAP_HDR + len;
	off = log_snap_off(l, l->a.me, 1 - l->snap_good);
	for (at = 0; at < size; at += max_io)
		ops[nops++] = (struct sacred_io){
			.opcode = SACRED_IO_WRITE,
			.region_id = l->a.log_region,
			.offset = off + at,
			.buf = l->snap + at,
			.len = size - at < max_io ? size - at : max_io,
		};
	l->stats.round_trips += nops;
	ret = sacred_rmem_chain(l->a.rm, ops, nops, NULL, NULL);
	if (ret)
		return ret;
	l->snap_good = 1 - l->snap_good;
	l->snap_index = l->applied;
	l->stats.snapshots++;
	return 0;
}

static void log_deliver(struct sacred_log *l, uint64_t i, const void *data,
			size_t len)
{
	if (i != l->applied)
		return;
	l->applied++;
	if (l->a.commit)
		l->a.commit(l->a.arg, i, data, len);
}

static void log_step_down(struct sacred_log *l)
{
	if (l->role == LOG_LEADER)
		l->stats.step_downs++;
	l->role = LOG_FOLLOWER;
}

static uint64_t log_next_ballot(const struct sacred_log *l)
{
	uint64_t above = l->max_seen > l->mbal ? l->max_seen : l->mbal;
	uint64_t b = above / l->a.nr_procs * l->a.nr_procs + l->a.me + 1;

	while (b <= above)
		b += l->a.nr_procs;
	return b;
}

/*
 * A takeover's first round trip, at each memory in order: take write
 * permission (fencing the old leader), promise @b in own meta, read
 * every meta. @fenced gets the memories where all three were done,
 * @commit the highest commit recorded. 0, -EAGAIN (a higher promise
 * was seen), or an error.
 */
static int log_fence(struct sacred_log *l, uint64_t b, uint32_t *fenced,
		     uint64_t *commit)
{
	struct sacred_io ops[3];
	struct sacred_rmem_result res;
	uint8_t payload[LOG_META_HDR];
	uint64_t mbal;
	int ret;

	put64(payload, b);
	put64(payload + 8, l->committed);
	ret = sacred_cell_encode(l->cell, l->lay.meta_cell, ++l->seq,
				 sacred_rmem_process_id(l->a.rm), payload,
				 sizeof(payload));
	if (ret)
		return ret;
	ops[0] = (struct sacred_io){
		.opcode = SACRED_IO_PERM,
		.perm = {
			.region_id = l->a.log_region,
			.access = SACRED_ACCESS_READ | SACRED_ACCESS_WRITE,
		},
	};
	ops[1] = (struct sacred_io){
		.opcode = SACRED_IO_WRITE,
		.region_id = l->a.log_region,
		.offset = log_meta_off(l, l->a.me, 1 - l->meta_good),
		.buf = l->cell,
		.len = l->lay.meta_cell,
	};
	ops[2] = (struct sacred_io){
		.opcode = SACRED_IO_READ,
		.region_id = l->a.log_region,
		.len = log_meta_off(l, l->a.nr_procs, 0),
	};
	l->stats.round_trips += 3;
	ret = sacred_rmem_chain(l->a.rm, ops, 3, (void *const *)l->bufs, &res);
	if (ret)
		return ret;
	/*
	 * Recovery reads only where the permission came first: a memory that
	 * answered it with a failure may not have fenced the old leader,
	 * whose write could land there after this read.
	 */
	*fenced = res.ok;
	l->meta_good = 1 - l->meta_good;
	l->mbal = b;
	log_scan_metas(l, res.ok, &mbal, commit);
	if (mbal > b) {
		l->max_seen = mbal;
		return -EAGAIN;
	}
	return 0;
}

/* A takeover's second step: recover the tail with ballot @b. */
static int log_recover(struct sacred_log *l, uint64_t b, uint64_t commit,
		       uint32_t fenced)
{
	uint64_t i;
	int cnt, j, ret;

	/*
	 * Recovery: from the first entry not delivered here, read every
	 * area; accept again, with b, every entry past the highest commit
	 * anyone recorded (those below are decided already).
	 */
	if (commit < l->committed)
		commit = l->committed;
	for (i = l->applied;;) {
		cnt = log_read_tail(l, i, &commit, fenced);
		if (cnt < 0)
			return cnt;
		if (!l->trim_at) {
			/* That far behind: from a snapshot (it is decided). */
			ret = log_restore(l);
			if (ret)
				return ret;
			i = l->applied;
			if (commit < l->committed)
				commit = l->committed;
			continue;
		}
		for (j = 0; j < l->trim_at && l->tail[j].bal; j++, i++) {
			if (i >= commit) {
				ret = log_write_entry(l, i, b, l->tail[j].data,
						      l->tail[j].len);
				if (ret)
					return ret;
				l->stats.recovered++;
			}
			log_deliver(l, i, l->tail[j].data, l->tail[j].len);
		}
		if (j < l->trim_at)
			break;
	}
	l->committed = i;
	l->next = i;
	return 0;
}

/* Become leader: fence the others, promise b, recover the tail. */
static int log_takeover(struct sacred_log *l)
{
	uint64_t b, commit;
	uint32_t fenced;
	int ret;

	l->stats.takeovers++;
	/* Connections fenced by an earlier leader come back first. */
	if (sacred_rmem_up(l->a.rm) !=
	    (1U << sacred_rmem_nr_mems(l->a.rm)) - 1)
		sacred_rmem_revive_lazy(l->a.rm);
	if (l->meta_unsure) {
		ret = log_settle_meta(l);
		if (ret)
			return ret;
	}
	b = log_next_ballot(l);

	ret = log_fence(l, b, &fenced, &commit);
	if (ret)
		return ret;
	ret = log_recover(l, b, commit, fenced);
	if (ret)
		return ret;
	l->b = b;
	l->fenced = fenced;
	l->role = LOG_LEADER;
	return log_write_meta(l, b);
}

/*
 * The metas, as log_read_metas(), and whether the area of the process the
 * failure detector elects holds index @next at some memory (*@fresh):
 * both in one round trip when they fit one buffer.
 */
static int log_read_metas_probe(struct sacred_log *l, uint64_t next,
				uint64_t *mbal, uint64_t *commit, bool *fresh)
{
	unsigned int k, n = sacred_rmem_nr_mems(l->a.rm);
	size_t metas = log_meta_off(l, l->a.nr_procs, 0);
	size_t pair = 2 * l->lay.entry_cell, at = metas;
	struct sacred_io ops[2] = {
		{ .opcode = SACRED_IO_READ, .region_id = l->a.log_region,
		  .offset = 0, .len = metas },
		{ .opcode = SACRED_IO_READ, .region_id = l->a.log_region,
		  .len = pair },
	};
	struct sacred_rmem_result res;
	struct sacred_cell_view v;
	int ret;

	*fresh = false;
	if (l->leader < 0 || l->leader == (int)l->a.me)
		return log_read_metas(l, mbal, commit);
	ops[1].offset = log_entry_off(l, l->leader, next, 0);
	if (metas + pair <= sacred_rmem_max_io(l->a.rm)) {
		ret = sacred_rmem_batch(l->a.rm, ops, 2, (void *const *)l->bufs,
					&res);
	} else {
		ret = log_read_metas(l, mbal, commit);
		if (ret)
			return ret;
		at = 0;
		ret = sacred_rmem_read(l->a.rm, l->a.log_region,
				       ops[1].offset, (void *const *)l->bufs,
				       pair, false, &res);
	}
	l->stats.round_trips++;
	if (ret)
		return ret;
	if (at)
		log_scan_metas(l, res.ok, mbal, commit);
	for (k = 0; k < n; k++)
		if ((res.ok & (1U << k)) &&
		    log_pick(l->bufs[k] + at, l->lay.entry_cell,
			     LOG_ENTRY_HDR, &v) >= 0 &&
		    get64((const uint8_t *)v.data + 8) == next)
			*fresh = true;
	return 0;
}

/*
 * Follower: deliver what is decided past the applied entries - what the
 * metas and entries say is committed, and past that every entry found
 * on a quorum of memories: one write of one leader's, at a quorum, is
 * decided (the rule by which the leader itself decides it; a later
 * leader's recovery reads a quorum and finds it). So a follower does not
 * wait for a commit point that only the leader's next append or meta
 * would carry (a leader that stops polling writes no metas).
 */
static int log_catch_up(struct sacred_log *l)
{
	unsigned int rounds, q = sacred_rmem_quorum(l->a.rm);
	uint64_t mbal, commit = 0;
	bool fresh;
	int cnt, j, ret;

	ret = log_read_metas_probe(l, l->applied, &mbal, &commit, &fresh);
	if (ret)
		return ret;
	if (mbal > l->max_seen)
		l->max_seen = mbal;
	for (rounds = 0; rounds < LOG_CATCH_UP_MAX; rounds++) {
		uint64_t from = l->applied;

		if (commit <= from && !fresh)
			return 0;
		fresh = false;
		cnt = log_read_tail(l, from, &commit, UINT32_MAX);
		if (cnt <= 0)
			return cnt;
		if (!l->trim_at) {
			ret = log_restore(l);
			if (ret)
				return ret;
			continue;
		}
		for (j = 0; j < l->trim_at && l->tail[j].bal &&
		     (from + j < commit || l->tail[j].copies >= q); j++)
			log_deliver(l, from + j, l->tail[j].data,
				    l->tail[j].len);
		if (l->applied > l->committed)
			l->committed = l->applied;
		/* Stopped at a trimmed index: a snapshot, right away. */
		if (j < cnt && j != l->trim_at)
			return 0;
	}
	return 0;	/* more at the next poll */
}

/* Whether this process may not lead yet (see the header comment). */
static bool log_abstains(const struct sacred_log *l)
{
	return l->applied < l->stand_after || l->meta_unsure ||
	       l->area_unsure || l->snap_unsure;
}

/* Opened again and unsure of own cells: ask the memories again. */
static void log_resettle(struct sacred_log *l)
{
	if (l->meta_unsure)
		log_settle_meta(l);
	if (l->area_unsure)
		log_settle_area(l, l->unsure_at);
	if (l->snap_unsure)
		log_settle_snap(l);
}

/*
 * Process @p's counter moved at @now: raise or lower its timeout (see
 * the header comment), by how still it was at this process's heartbeat
 * rounds since it last moved. Those rounds alone count: a gap this
 * process saw only because it was held up itself - no round ran in
 * between - suspected nobody.
 */
static void log_adjust_timeout(struct sacred_log *l, unsigned int p,
			       uint64_t now)
{
	uint64_t base = l->a.suspect_ms;
	uint8_t still = l->still[p];

	l->still[p] = LOG_MOVING;
	if (still == LOG_SUSPECTED) {
		/* suspected wrongly: be slower to suspect it */
		if (l->susp[p] < LOG_SUSPECT_MAX * base) {
			l->susp[p] *= 2;
			l->stats.timeouts_raised += p != l->a.me;
		}
		l->calm[p] = now;
	} else if (still == LOG_HALF_STILL) {
		/* half the timeout would have suspected it: keep it */
		l->calm[p] = now;
		l->stats.half_stills += p != l->a.me;
	} else if (l->susp[p] > base &&
		   now - l->calm[p] >=
		   (uint64_t)l->a.calm_timeouts * l->susp[p]) {
		/* calm for long enough: be quicker to suspect it again */
		l->susp[p] /= 2;
		if (l->susp[p] < base)
			l->susp[p] = base;
		l->calm[p] = now;
		l->stats.timeouts_lowered += p != l->a.me;
	}
}

/*
 * Bump own heartbeat, read everyone's, and elect; an abstaining process
 * neither bumps it nor counts itself.
 */
static void log_heartbeat(struct sacred_log *l, uint64_t now)
{
	uint64_t words[SACRED_RMEM_MAX][SACRED_LOG_MAX_PROCS];
	void *bufs[SACRED_RMEM_MAX];
	unsigned int n = sacred_rmem_nr_mems(l->a.rm), k, p;
	struct sacred_rmem_result res;
	bool abstain = log_abstains(l);
	uint64_t hb;
	int leader = -1;

	l->last_hb = now;
	/*
	 * A revoke for another process fences this one's connections, and
	 * a memory that was down comes back: reconnect. A new attempt at
	 * most every suspect_ms / 2; one under way at every heartbeat,
	 * which costs nothing: sacred_rmem_revive_lazy() never waits for
	 * a memory while a quorum is usable, so the heartbeat goes on
	 * whatever became of the memory's host.
	 */
	if (sacred_rmem_up(l->a.rm) != (1U << n) - 1 &&
	    (sacred_rmem_reviving(l->a.rm) ||
	     now - l->last_revive >= (uint64_t)l->a.suspect_ms / 2)) {
		l->last_revive = now;
		sacred_rmem_revive_lazy(l->a.rm);
	}
	if (!abstain) {
		hb = htole64(++l->hb);
		sacred_rmem_write(l->a.rm, l->a.hb_region, 8 * l->a.me, &hb,
				  sizeof(hb), NULL);
	}
	for (k = 0; k < n; k++)
		bufs[k] = words[k];
	if (!sacred_rmem_read(l->a.rm, l->a.hb_region, 0, bufs,
			      8 * l->a.nr_procs, false, &res)) {
		for (p = 0; p < l->a.nr_procs; p++) {
			uint64_t best = 0;

			for (k = 0; k < n; k++)
				if (res.ok & (1U << k) &&
				    le64toh(words[k][p]) > best)
					best = le64toh(words[k][p]);
			/*
			 * Only a counter above the highest seen is a sign of
			 * life: a dead process's last write may sit on some
			 * memories only, and reads over different quorums
			 * then see its counter go back and forth for ever.
			 * Counters only grow (a new incarnation starts above
			 * the old one's: log_hb_floor()).
			 */
			if (best <= l->hb_seen[p])
				continue;
			log_adjust_timeout(l, p, now);
			l->hb_seen[p] = best;
			l->hb_change[p] = now;
		}
	}
	if (!abstain)
		l->hb_change[l->a.me] = now;
	for (p = 0; p < l->a.nr_procs; p++) {
		uint64_t still = now - l->hb_change[p];

		if (still >= l->susp[p])
			l->still[p] = LOG_SUSPECTED;
		else if (2 * still >= l->susp[p] &&
			 l->still[p] == LOG_MOVING)
			l->still[p] = LOG_HALF_STILL;
	}
	for (p = 0; p < l->a.nr_procs && leader < 0; p++)
		if (now - l->hb_change[p] < l->susp[p] &&
		    !(p == l->a.me && abstain))
			leader = p;
	l->leader = leader;
}

/*
 * Whether a meta of this process is on the memories that answered a read
 * of the metas (@ok): it took over before, as another incarnation.
 */
static bool log_led_before(struct sacred_log *l, uint32_t ok)
{
	unsigned int k, n = sacred_rmem_nr_mems(l->a.rm);
	struct sacred_cell_view v;

	for (k = 0; k < n; k++)
		if ((ok & (1U << k)) &&
		    log_pick(l->bufs[k] + log_meta_off(l, l->a.me, 0),
			     l->lay.meta_cell, LOG_META_HDR, &v) >= 0)
			return true;
	return false;
}

/* Own heartbeat counter: above what an earlier incarnation left. */
static int log_hb_floor(struct sacred_log *l)
{
	unsigned int k, n = sacred_rmem_nr_mems(l->a.rm);
	struct sacred_rmem_result res;
	uint64_t x;
	int ret;

	ret = sacred_rmem_read(l->a.rm, l->a.hb_region, 0,
			       (void *const *)l->bufs, 8 * l->a.nr_procs,
			       false, &res);
	if (ret)
		return ret;
	for (k = 0; k < n; k++) {
		if (!(res.ok & (1U << k)))
			continue;
		x = get64(l->bufs[k] + 8 * l->a.me);
		if (x > l->hb)
			l->hb = x;
	}
	return 0;
}

/* The log region on every memory attached is large enough: 0 or -ENOSPC. */
static int log_check_size(struct sacred_log *l)
{
	unsigned int k, n = sacred_rmem_nr_mems(l->a.rm);

	for (k = 0; k < n; k++) {
		struct sacred_conn *c = sacred_rmem_conn(l->a.rm, k);
		struct sacred_region_attr a;

		if (c && !sacred_conn_broken(c) &&
		    !sacred_conn_region(c, l->a.log_region, &a) &&
		    a.size < l->lay.size)
			return -ENOSPC;
	}
	return 0;
}

/**
 * sacred_log_region_size() - bytes the log region needs
 * @attr: the log, as it will be opened (rm, me and the callbacks are not
 *	looked at)
 *
 * Return: the bytes, or 0 when @attr is not valid.
 */
uint64_t sacred_log_region_size(const struct sacred_log_attr *attr)
{
	struct log_layout lay;

	if (!attr || log_layout(attr, &lay))
		return 0;
	return lay.size;
}

/*
 * @l's settings (defaults for those @attr leaves 0), its buffers, and
 * every process's failure-detector state as of now: 0, -EMSGSIZE when
 * the layout does not fit the replicated memory's max_io, or -ENOMEM.
 */
static int log_init(struct sacred_log *l, const struct sacred_log_attr *attr)
{
	uint64_t now = log_now_ms();
	unsigned int k, n, p;
	size_t max_io;

	if (!l->a.hb_period_ms)
		l->a.hb_period_ms = 10;
	if (!l->a.suspect_ms)
		l->a.suspect_ms = 200;
	if (!l->a.calm_timeouts)
		l->a.calm_timeouts = 8;
	l->meta_good = 1;
	l->snap_good = 1;
	l->leader = -1;
	max_io = sacred_rmem_max_io(attr->rm);
	l->batch = max_io / (2 * l->lay.entry_cell);
	if (l->batch > 64)
		l->batch = 64;
	n = sacred_rmem_nr_mems(attr->rm);

	if (!l->batch || log_meta_off(l, attr->nr_procs, 0) > max_io ||
	    l->lay.snap_cell > SACRED_RMEM_CHAIN_MAX * max_io)
		return -EMSGSIZE;
	l->good = malloc(attr->capacity);
	l->cell = malloc(l->lay.entry_cell);
	l->tail = calloc(l->batch, sizeof(*l->tail));
	if (!l->good || !l->cell || !l->tail)
		return -ENOMEM;
	memset(l->good, 1, attr->capacity);
	for (k = 0; k < l->batch; k++) {
		l->tail[k].data = malloc(attr->entry_max + 1);
		if (!l->tail[k].data)
			return -ENOMEM;
	}
	for (k = 0; k < n; k++) {
		l->bufs[k] = malloc(max_io);
		if (!l->bufs[k])
			return -ENOMEM;
	}
	if (l->lay.snap_cell) {
		l->snap = malloc(l->lay.snap_cell);
		if (!l->snap)
			return -ENOMEM;
		for (k = 0; k < n; k++) {
			l->sbufs[k] = malloc(2 * l->lay.snap_cell);
			if (!l->sbufs[k])
				return -ENOMEM;
		}
	}
	for (p = 0; p < attr->nr_procs; p++) {
		l->hb_change[p] = now;
		l->susp[p] = l->a.suspect_ms;
		l->calm[p] = now;
	}
	return 0;
}

/*
 * Attach the log and heartbeat regions and read the metas: the highest
 * ballot seen and, if this process led before a restart, what it may
 * have left unsure.
 */
static int log_join(struct sacred_log *l)
{
	const struct sacred_log_attr *attr = &l->a;
	struct sacred_rmem_result res;
	int ret;

	ret = sacred_rmem_attach(attr->rm, attr->log_region, NULL);
	if (!ret)
		ret = log_check_size(l);
	if (!ret)
		ret = sacred_rmem_attach(attr->rm, attr->hb_region, NULL);
	if (!ret)
		ret = log_hb_floor(l);
	if (!ret)
		ret = log_fetch_metas(l, false, &res);
	if (!ret) {
		uint64_t mbal;

		log_scan_metas(l, res.ok, &mbal, &l->stand_after);
		l->max_seen = mbal;
	}
	if (!ret && log_led_before(l, res.ok)) {
		memset(l->good, LOG_CELL_UNSURE, attr->capacity);
		l->meta_unsure = true;
		l->snap_unsure = !!l->lay.snap_cell;
		ret = log_settle_meta(l);
		if (ret == -ENOTCONN)
			ret = 0;	/* the takeover tries again */
	}
	return ret;
}

/**
 * sacred_log_open() - join a replicated log
 * @attr: see &struct sacred_log_attr
 * @lp: on success, the handle
 *
 * Reads the metas once, and nothing else yet: the first sacred_log_poll()
 * runs the failure detector, and the process it elects takes over. Every
 * process counts as alive for suspect_ms from here.
 *
 * A process that crashed may open the log again with its id (never
 * while its earlier incarnation still runs): it delivers the log from
 * index 0 again. If it led before - a meta of its id is on the memories -
 * it also reads the metas from every memory that answers, to learn its
 * last promise; which of its cells it must keep is learnt the same way
 * before it writes one (see the header comment).
 *
 * With snapshots, a process that finds the entries it needs next
 * overwritten starts from the newest snapshot instead: restore runs, and
 * the commit callback goes on from the snapshot's index.
 *
 * Return: 0; -EINVAL; -ENOMEM; -EMSGSIZE when max_io of the replicated
 * memory cannot hold the metas or one entry, or a snapshot cell needs
 * more than SACRED_RMEM_CHAIN_MAX writes of max_io; -ENOSPC when the log
 * region on a memory is smaller than sacred_log_region_size(); the errors
 * of sacred_rmem_attach() for either region (-EPROTO: no quorum of the
 * memories holds one incarnation of it) and of the reads of the metas
 * and the heartbeats.
 */
int sacred_log_open(const struct sacred_log_attr *attr,
		    struct sacred_log **lp)
{
	struct sacred_log *l;
	uint64_t ns;
	int ret;

	if (!attr || !lp || !attr->rm || attr->me >= attr->nr_procs ||
	    attr->hb_period_ms < 0 || attr->suspect_ms < 0 ||
	    attr->calm_timeouts < 0 ||
	    (attr->snapshot_max && (!attr->snapshot || !attr->restore)))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->a = *attr;
	ret = log_layout(attr, &l->lay);
	if (ret)
		goto err;
	ret = log_init(l, attr);
	if (ret)
		goto err;
	ret = log_join(l);
	if (ret)
		goto err;
	/* Above own cells on memories that did not answer too. */
	ns = sacred_clock_ns();
	if (l->seq < ns)
		l->seq = ns;
	*lp = l;
	return 0;

err:
	sacred_log_close(l);
	return ret;
}

/** sacred_log_close() - free @l (the log stays in the memories); NULL ok */
void sacred_log_close(struct sacred_log *l)
{
	unsigned int k;

	if (!l)
		return;
	for (k = 0; k < SACRED_RMEM_MAX; k++) {
		free(l->bufs[k]);
		free(l->sbufs[k]);
	}
	free(l->snap);
	if (l->tail)
		for (k = 0; k < l->batch; k++)
			free(l->tail[k].data);
	free(l->tail);
	free(l->cell);
	free(l->good);
	free(l);
}

/**
 * sacred_log_poll() - drive the log: heartbeats, election, takeover,
 * catching up
 * @l: the log
 *
 * Call it often (every few milliseconds); it does a few quorum round
 * trips. Every hb_period_ms it bumps this process's heartbeat and runs
 * the failure detector; the process it elects takes over if it does not
 * lead already, and a leader that is no longer elected steps down. A
 * follower delivers newly decided entries to the commit callback; a
 * leader writes its commit point into its meta when it moved.
 *
 * A process that cannot lead yet - catching up after it opened, or
 * opened again and unsure which of its cells to keep - abstains: its
 * heartbeat stays still and it does not elect itself, so the others go
 * on without it; it follows meanwhile.
 *
 * Return: 0; -EAGAIN when a takeover lost to a higher ballot, or when
 * no snapshot newer than what was delivered could be read yet; restore's
 * error, or -EBADMSG for a positive return of it; the replicated
 * memory's errors (no quorum). Errors are not fatal: poll again.
 */
int sacred_log_poll(struct sacred_log *l)
{
	uint64_t now = log_now_ms();
	bool tick;
	int ret;

	if (!l)
		return -EINVAL;
	tick = now - l->last_hb >= (uint64_t)l->a.hb_period_ms;

	if (tick) {
		log_resettle(l);
		log_heartbeat(l, now);
		if (l->leader != (int)l->a.me)
			log_step_down(l);
	}
	/*
	 * A memory this leadership never took write on - not reachable at
	 * the takeover - is up now: every append would be refused there
	 * (and break the connection, at each reconnect again), so the log
	 * would stand on the other memories alone, and stop when one of
	 * them goes. Take over again, on every memory up: a takeover is
	 * what entitles a leader to write, here as at the first one. On
	 * heartbeat ticks only (just after they reconnect what came back):
	 * a memory that refuses the permission costs a takeover a period.
	 */
	if (tick && l->role == LOG_LEADER &&
	    (sacred_rmem_up(l->a.rm) & ~l->fenced)) {
		ret = log_takeover(l);
		if (ret)
			log_step_down(l);
		return ret;
	}
	if (l->role == LOG_LEADER) {
		/* Entries carry the commit too: the meta only on ticks. */
		if (!tick || l->meta_commit == l->committed)
			return 0;
		ret = log_write_meta(l, l->b);
		if (ret)
			log_step_down(l);
		return ret;
	}
	if (l->leader == (int)l->a.me) {
		ret = log_takeover(l);
		if (ret)
			log_step_down(l);
		return ret;
	}
	return log_catch_up(l);
}

/*
 * An append failed with @ret: a revoke of our write permission drops the
 * connection (-ECONNRESET, then -ENOTCONN) just as a crashed memory does.
 * Reconnect and look: if a quorum answers and on a quorum we no longer
 * hold write, the permission was lost: -EACCES.
 */
static int log_why(struct sacred_log *l, int ret)
{
	unsigned int k, n = sacred_rmem_nr_mems(l->a.rm), up = 0, writers = 0;

	if (ret == -EACCES || ret == -EPERM)
		return -EACCES;
	if (ret != -ECONNRESET && ret != -ENOTCONN && ret != -EBUSY)
		return ret;
	sacred_rmem_revive(l->a.rm);
	for (k = 0; k < n; k++) {
		struct sacred_conn *c = sacred_rmem_conn(l->a.rm, k);
		struct sacred_region_attr a;

		if (!c || sacred_conn_broken(c) ||
		    sacred_conn_region(c, l->a.log_region, &a))
			continue;
		up++;
		writers += !!(a.access & SACRED_ACCESS_WRITE);
	}
	if (up >= sacred_rmem_quorum(l->a.rm) &&
	    writers < sacred_rmem_quorum(l->a.rm))
		return -EACCES;
	return ret;
}

/**
 * sacred_log_propose() - append an entry (leader only)
 * @l: the log
 * @data: the entry
 * @len: its bytes, at most entry_max
 * @index: gets its index; may be NULL
 *
 * One quorum write. On success the entry is decided and the commit
 * callback has run for it (and for every entry before it). With
 * snapshots, every capacity / 2 appends one also writes a snapshot first.
 *
 * Return: 0; -EREMOTE when this process does not lead (see
 * sacred_log_leader()); -EACCES when its write permission was revoked -
 * another process took over, and this one is a follower now; -ENOSPC when
 * the log is full (without snapshots: capacity entries; with them: the
 * snapshot callback failed, whatever its error, when one was needed);
 * -ENOMEM; -EMSGSIZE, -EINVAL;
 * -ENOTCONN, -ECONNRESET, -ETIMEDOUT when no quorum of memories took the
 * write, or the snapshot that had to come first (the entry may be decided
 * later, by the next leader's recovery): this process is a follower then
 * too;
 * -ENOTCONN also when a process that opened the log again cannot tell yet
 * which own cell at the index to keep (nothing was written).
 */
int sacred_log_propose(struct sacred_log *l, const void *data, size_t len,
		       uint64_t *index)
{
	uint64_t i;
	int ret;

	if (!l || (!data && len))
		return -EINVAL;
	if (len > l->a.entry_max)
		return -EMSGSIZE;
	if (l->role != LOG_LEADER)
		return -EREMOTE;
	/*
	 * Index next goes where next - capacity was: only once a snapshot
	 * covers that entry. Taken every capacity / 2 appends so that it is
	 * there in time; a failure is final only when it is needed now.
	 */
	if (l->lay.snap_cell &&
	    l->next - l->snap_index >= (l->a.capacity + 1) / 2) {
		ret = log_snapshot(l);
		if (ret && l->next >= l->snap_index + l->a.capacity) {
			if (ret == -ENOSPC)
				return ret;
			log_step_down(l);
			return log_why(l, ret);
		}
	}
	if (l->next >= l->snap_index + l->a.capacity)
		return -ENOSPC;
	i = l->next;
	ret = log_write_entry(l, i, l->b, data, len);
	if (ret) {
		log_step_down(l);
		return log_why(l, ret);
	}
	l->next = i + 1;
	l->committed = i + 1;
	l->stats.appends++;
	log_deliver(l, i, data, len);
	if (index)
		*index = i;
	return 0;
}

/** sacred_log_leader() - the process the failure detector elects, or -1 */
int sacred_log_leader(const struct sacred_log *l)
{
	return l->leader;
}

/** sacred_log_is_leader() - whether this process leads now */
bool sacred_log_is_leader(const struct sacred_log *l)
{
	return l->role == LOG_LEADER;
}

/** sacred_log_applied() - entries delivered to the commit callback */
uint64_t sacred_log_applied(const struct sacred_log *l)
{
	return l->applied;
}

/**
 * sacred_log_suspect_ms() - the failure detector's timeout for a process
 * @l: the log
 * @p: the process, 0 .. nr_procs - 1
 *
 * Return: how long, in milliseconds, @p's heartbeat must stand still for
 * this process to suspect it now: suspect_ms, doubled for each time @p
 * was found alive after it was suspected, halved after each calm
 * stretch (see the header comment); 0 when @p is out of range.
 */
uint64_t sacred_log_suspect_ms(const struct sacred_log *l, unsigned int p)
{
	return p < l->a.nr_procs ? l->susp[p] : 0;
}

/** sacred_log_stats() - the log's counters */
void sacred_log_stats(const struct sacred_log *l,
		      struct sacred_log_stats *stats)
{
	*stats = l->stats;
}
