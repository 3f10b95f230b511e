// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - replicated memory: m memory instances that, with a minority
 * of them crashed, behave as one memory that does not fail.
 *
 * This file owns struct sacred_rmem: one connection per memory (built on
 * the asynchronous data path of conn.c), the quorum rule, and the
 * bookkeeping of operations that are still in flight on slow memories
 * when a call has its quorum and returns.
 *
 * Every call sends the same operation to every memory that is connected,
 * waits until a quorum (a majority: m / 2 + 1) has answered with success
 * or until a quorum can no longer succeed, and reports each memory's
 * outcome. A region is replicated by giving it the same id, and the same
 * tag, on every memory: the handle learns the tag a quorum shares at the
 * region's first sacred_rmem_attach() and leaves out, for good, a memory
 * whose region has another (made again there, and empty: a memory that
 * forgot must not count towards a quorum).
 *
 * Stragglers: a memory that has not answered when the quorum is reached
 * keeps its operation; its result is taken and dropped by a later call
 * (results carry the call's sequence number). A memory with a
 * changePermission still unanswered sits out later calls (status -EBUSY)
 * until the answer comes: operations sent meanwhile would carry a key
 * that may be about to change, and break the connection. A READ therefore never
 * lands in the caller's buffer after the call returned: each memory reads
 * into a buffer of the handle, copied out only for memories that answered
 * in time. A memory whose connection broke (it crashed, was brought down,
 * or fenced this process on a revoke) is skipped until
 * sacred_rmem_revive() reconnects it.
 *
 * Not thread-safe: one thread at a time per handle.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <netinet/in.h>

#include "sacred.h"
#include "internal.h"

#define RMEM_MAX_IO_DEFAULT	4096
#define RMEM_TIMEOUT_DEFAULT	2000
/* Every memory of the handle, as a mask of those a call asks. */
#define RMEM_ALL		UINT32_MAX

/**
 * struct rmem_region - a region the handle attached
 * @id: its id
 * @known: @tag was learned
 * @tag: the incarnation a quorum of memories holds: the tag they gave
 *	when the first sacred_rmem_attach() that reached such a quorum ran
 */
struct rmem_region {
	uint32_t id;
	bool known;
	uint64_t tag;
};

/**
 * struct sacred_rmem - a replicated memory
 * @process_id: who we are
 * @nr_mems: memories
 * @quorum: a majority of @nr_mems
 * @max_io: largest READ or WRITE
 * @seq: sequence number of the last call; results of older ones are
 *	stragglers
 * @attr: what each connection was (and is re-) created with
 * @conns: the connections; NULL for a memory never connected
 * @rbuf: per-memory READ buffers, @max_io bytes each
 * @regions: regions attached with sacred_rmem_attach(), by id: attached
 *	again on a memory that sacred_rmem_revive() connects for the first
 *	time, and every memory checked against their tags
 * @nr_regions: entries in @regions
 * @max_regions: room in @regions
 * @perm_seq: per memory, the call whose changePermission there was still
 *	unanswered when the call returned (0: none). Until its answer comes,
 *	the memory sits out later calls: the key an operation would carry
 *	may be about to change.
 */
struct sacred_rmem {
	uint32_t process_id;
	unsigned int nr_mems;
	unsigned int quorum;
	size_t max_io;
	uint64_t seq;
	struct sacred_conn_attr attr[SACRED_RMEM_MAX];
	struct sockaddr_storage addr[SACRED_RMEM_MAX];
	uint8_t key[SACRED_RMEM_MAX][SACRED_MAC_LEN];
	struct sacred_conn *conns[SACRED_RMEM_MAX];
	uint8_t *rbuf[SACRED_RMEM_MAX];
	struct rmem_region *regions;
	unsigned int nr_regions;
	unsigned int max_regions;
	uint64_t perm_seq[SACRED_RMEM_MAX];
	/* Memories never reached: their connection, until it connects. */
	struct sacred_conn *pending[SACRED_RMEM_MAX];
};

/*
 * Between attempts of one sacred_rmem_revive_lazy() that needs a quorum
 * back: from REVIVE_RETRY_MS, doubling up to REVIVE_RETRY_MAX_MS (an
 * instance refusing us as a duplicate is releasing the old connection;
 * one refusing us outright may be coming up).
 */
#define REVIVE_RETRY_MS		1
#define REVIVE_RETRY_MAX_MS	64

static uint64_t rmem_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool rmem_usable(const struct sacred_rmem *rm, unsigned int i)
{
	return rm->conns[i] && !sacred_conn_broken(rm->conns[i]);
}

/**
 * sacred_rmem_create() - connect to the memories of a replicated memory
 * @attr: the memories and who we are; see &struct sacred_rmem_attr
 * @rmp: on success, the new handle
 *
 * Connects to every memory in turn. A minority may fail (they are down,
 * or unreachable): they stay disconnected until sacred_rmem_revive().
 *
 * Return: 0; -EINVAL for bad attributes; -ENOMEM; otherwise the error of
 * the last memory that failed, when fewer than a quorum connected.
 */
int sacred_rmem_create(const struct sacred_rmem_attr *attr,
		       struct sacred_rmem **rmp)
{
	struct sacred_rmem *rm;
	unsigned int i, up = 0;
	int ret = 0;

	if (!attr || !rmp || !attr->nr_mems ||
	    attr->nr_mems > SACRED_RMEM_MAX || !attr->mems ||
	    attr->queue_depth > 256 ||
	    (uint64_t)(((attr->max_io ?: RMEM_MAX_IO_DEFAULT) + 63) & ~63ULL) *
	    (attr->queue_depth ?: 16) > (1U << 30))
		return -EINVAL;
	for (i = 0; i < attr->nr_mems; i++) {
		const struct sockaddr *sa = attr->mems[i].addr;

		if (!sa || (sa->sa_family != AF_INET &&
			    sa->sa_family != AF_INET6) ||
		    attr->mems[i].timeout_ms < 0)
			return -EINVAL;
	}

	rm = calloc(1, sizeof(*rm));
	if (!rm)
		return -ENOMEM;
	rm->process_id = attr->process_id;
	rm->nr_mems = attr->nr_mems;
	rm->quorum = attr->nr_mems / 2 + 1;
	rm->max_io = attr->max_io ?: RMEM_MAX_IO_DEFAULT;

	for (i = 0; i < rm->nr_mems; i++) {
		const struct sacred_rmem_member *m = &attr->mems[i];
		struct sacred_conn_attr *ca = &rm->attr[i];

		memcpy(&rm->addr[i], m->addr,
		       m->addr->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) :
		       sizeof(struct sockaddr_in6));
		ca->addr = (struct sockaddr *)&rm->addr[i];
		ca->process_id = attr->process_id;
		ca->timeout_ms = m->timeout_ms ?: RMEM_TIMEOUT_DEFAULT;
		ca->queue_depth = attr->queue_depth;
		/* Every slot holds the largest operation (slots are 64-aligned). */
		ca->bounce_size = ((rm->max_io + 63) & ~(size_t)63) *
				  (attr->queue_depth ?: 16);
		if (m->key) {
			memcpy(rm->key[i], m->key, SACRED_MAC_LEN);
			ca->key = rm->key[i];
		}
		rm->rbuf[i] = malloc(rm->max_io);
		if (!rm->rbuf[i]) {
			ret = -ENOMEM;
			goto err;
		}
	}
	for (i = 0; i < rm->nr_mems; i++) {
		int r = sacred_conn_create(&rm->attr[i], &rm->conns[i]);

		if (r) {
			rm->conns[i] = NULL;
			ret = r;
			continue;
		}
		up++;
	}
	if (up < rm->quorum)
		goto err;
	*rmp = rm;
	return 0;

err:
	sacred_rmem_destroy(rm);
	return ret ?: -ENOTCONN;
}

/** sacred_rmem_destroy() - disconnect from every memory and free @rm */
void sacred_rmem_destroy(struct sacred_rmem *rm)
{
	unsigned int i;

	if (!rm)
		return;
	for (i = 0; i < rm->nr_mems; i++) {
		sacred_conn_destroy(rm->conns[i]);
		sacred_conn_destroy(rm->pending[i]);
		free(rm->rbuf[i]);
	}
	free(rm->regions);
	memset(rm->key, 0, sizeof(rm->key));
	free(rm);
}

/** sacred_rmem_nr_mems() - the number of memories of @rm */
unsigned int sacred_rmem_nr_mems(const struct sacred_rmem *rm)
{
	return rm->nr_mems;
}

/** sacred_rmem_process_id() - the process @rm connects as */
uint32_t sacred_rmem_process_id(const struct sacred_rmem *rm)
{
	return rm->process_id;
}

/** sacred_rmem_max_io() - the largest READ or WRITE of @rm */
size_t sacred_rmem_max_io(const struct sacred_rmem *rm)
{
	return rm->max_io;
}

/** sacred_rmem_quorum() - how many memories make a quorum of @rm */
unsigned int sacred_rmem_quorum(const struct sacred_rmem *rm)
{
	return rm->quorum;
}

/**
 * sacred_rmem_conn() - the connection to memory @i, or NULL while there is
 * none; it belongs to @rm (do not destroy it, and do not leave
 * asynchronous operations of your own on it)
 */
struct sacred_conn *sacred_rmem_conn(struct sacred_rmem *rm, unsigned int i)
{
	return i < rm->nr_mems ? rm->conns[i] : NULL;
}

/**
 * sacred_rmem_up() - the memories whose connections are usable, as a bit
 * mask (bit i: memory i)
 */
uint32_t sacred_rmem_up(const struct sacred_rmem *rm)
{
	uint32_t mask = 0;
	unsigned int i;

	for (i = 0; i < rm->nr_mems; i++)
		if (rmem_usable(rm, i))
			mask |= 1U << i;
	return mask;
}

/*
 * Before a reconnect: results of the broken connection are stragglers;
 * the reconnect attaches again, with the key the memory gives now, so an
 * unanswered changePermission no longer matters.
 */
static void rmem_drop_stragglers(struct sacred_rmem *rm, unsigned int i)
{
	struct sacred_io_result res[16];

	while (sacred_io_poll(rm->conns[i], res, 16) > 0)
		;
	rm->perm_seq[i] = 0;
}

/* The entry of region @id in @rm->regions, or NULL. */
static struct rmem_region *rmem_region_find(const struct sacred_rmem *rm,
					    uint32_t id)
{
	unsigned int lo = 0, hi = rm->nr_regions;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (rm->regions[mid].id == id)
			return &rm->regions[mid];
		if (rm->regions[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The entry of region @id, made (tag not known) if needed; NULL: ENOMEM. */
static struct rmem_region *rmem_region_add(struct sacred_rmem *rm,
					   uint32_t id)
{
	struct rmem_region *g = rmem_region_find(rm, id);
	unsigned int i;

	if (g)
		return g;
	if (rm->nr_regions == rm->max_regions) {
		unsigned int max = rm->max_regions ? 2 * rm->max_regions : 8;

		g = reallocarray(rm->regions, max, sizeof(*g));
		if (!g)
			return NULL;
		rm->regions = g;
		rm->max_regions = max;
	}
	for (i = rm->nr_regions; i && rm->regions[i - 1].id > id; i--)
		rm->regions[i] = rm->regions[i - 1];
	rm->regions[i] = (struct rmem_region){ .id = id };
	rm->nr_regions++;
	return &rm->regions[i];
}

/*
 * Whether memory @i may count for region @id: -ESTALE if its connection
 * holds another incarnation than the tag the handle learned (forgotten
 * now, if it was not already), else 0 - also when the connection has not
 * cached the region: an operation that needs its key fails by itself,
 * and a changePermission is checked again on its answer, which caches it.
 */
static int rmem_incarnation(const struct sacred_rmem *rm, unsigned int i,
			    uint32_t id)
{
	const struct rmem_region *g = rmem_region_find(rm, id);
	struct sacred_region_attr ra;
	int ret;

	if (!g || !g->known)
		return 0;
	ret = sacred_conn_region(rm->conns[i], id, &ra);
	if (ret == -ESTALE)
		return ret;
	if (ret || ra.tag == g->tag)
		return 0;
	return sacred_conn_forget(rm->conns[i], id, &g->tag);
}

/* The region operation @io is on. */
static uint32_t rmem_io_region(const struct sacred_io *io)
{
	return io->opcode == SACRED_IO_PERM ? io->perm.region_id :
					      io->region_id;
}

/*
 * A memory connected for the first time: what the others have attached,
 * but not a region of another incarnation than the one a quorum holds.
 */
static void rmem_attach_all(struct sacred_rmem *rm, unsigned int i)
{
	unsigned int r;

	for (r = 0; r < rm->nr_regions; r++)
		if (!sacred_attach(rm->conns[i], rm->regions[r].id, NULL))
			rmem_incarnation(rm, i, rm->regions[r].id);
}

/*
 * The next step of memory @i's connect, without waiting: a broken
 * connection's (its old results go), or for a memory never reached, that
 * of a connection made for it, which becomes its own once connected.
 */
static int rmem_reconnect_step(struct sacred_rmem *rm, unsigned int i)
{
	int ret;

	if (rm->conns[i]) {
		rmem_drop_stragglers(rm, i);
		return sacred_conn_reconnect_async(rm->conns[i]);
	}
	if (!rm->pending[i]) {
		ret = sacred_conn_new_unconnected(&rm->attr[i],
						  &rm->pending[i]);
		if (ret)
			return ret;
	}
	ret = sacred_conn_reconnect_async(rm->pending[i]);
	if (!ret) {
		rm->conns[i] = rm->pending[i];
		rm->pending[i] = NULL;
		rmem_attach_all(rm, i);
	}
	return ret;
}

/* The connection memory @i's attempt under way runs on, if any. */
static struct sacred_conn *rmem_attempt(const struct sacred_rmem *rm,
					unsigned int i)
{
	return rm->conns[i] ?: rm->pending[i];
}

/*
 * Reconnect the memories that are not usable, all at once, in steps that
 * never wait for the network (sacred_conn_reconnect_async()), waiting
 * between them on the rdma_cm channels. An attempt refused as a
 * duplicate (the memory still holds the old connection) or run out is
 * made anew after a back-off of 1 to 64 ms; one refused otherwise (the
 * memory is down, say) is not. Returns when every memory is usable or
 * refused, at the longest timeout of those not usable, or - @lazy - as
 * soon as a quorum is usable, after taking the answers already there.
 * Returns the number of memories usable.
 */
static int rmem_revive(struct sacred_rmem *rm, bool lazy)
{
	struct pollfd pfd[SACRED_RMEM_MAX];
	uint64_t retry_at[SACRED_RMEM_MAX] = { 0 };
	bool done[SACRED_RMEM_MAX] = { false };
	unsigned int backoff[SACRED_RMEM_MAX];
	unsigned int i, up, nfds, active;
	uint64_t now, end, wake;
	int ret;

	/*
	 * Waiting anyway: let the instances see the connections this
	 * process breaks go first, or the new attempts meet them as
	 * duplicates (and the instances would notice only when probing).
	 */
	for (i = 0; i < rm->nr_mems && !lazy; i++)
		if (!rmem_usable(rm, i) && rm->conns[i])
			sacred_conn_drop(rm->conns[i]);
	/* Time for a whole attempt at the slowest of those to revive. */
	now = rmem_now_ms();
	end = now;
	for (i = 0; i < rm->nr_mems; i++) {
		backoff[i] = REVIVE_RETRY_MS;
		if (!rmem_usable(rm, i) && now + rm->attr[i].timeout_ms > end)
			end = now + rm->attr[i].timeout_ms;
	}
	for (;;) {
		up = 0;
		nfds = 0;
		active = 0;
		now = rmem_now_ms();
		wake = end;
		for (i = 0; i < rm->nr_mems; i++) {
			if (rmem_usable(rm, i)) {
				up++;
				continue;
			}
			if (done[i])
				continue;
			active++;
			if (now < retry_at[i]) {
				wake = retry_at[i] < wake ? retry_at[i] : wake;
				continue;
			}
			ret = rmem_reconnect_step(rm, i);
			if (!ret) {
				active--;
				up++;
			} else if (ret == -EINPROGRESS) {
				pfd[nfds].fd =
					sacred_conn_cm_fd(rmem_attempt(rm, i));
				pfd[nfds++].events = POLLIN;
			} else if (ret != -EADDRINUSE && ret != -ETIMEDOUT) {
				/* It answered no: ask again at the next call. */
				active--;
				done[i] = true;
			} else {
				/*
				 * Still held as a duplicate, or an attempt of
				 * an earlier call ran out: anew after a pause,
				 * if still needed.
				 */
				retry_at[i] = now + backoff[i];
				if (backoff[i] < REVIVE_RETRY_MAX_MS)
					backoff[i] *= 2;
				wake = retry_at[i] < wake ? retry_at[i] : wake;
			}
		}
		if (!active)
			return up;
		now = rmem_now_ms();
		if ((lazy && up >= rm->quorum) || now >= end) {
			/* Take the answers already there, then go. */
			if (!nfds || poll(pfd, nfds, 0) <= 0)
				return up;
			continue;
		}
		poll(pfd, nfds, wake > now ? (int)(wake - now) : 0);
	}
}

/**
 * sacred_rmem_revive() - reconnect every memory that is not connected
 * @rm: the handle
 *
 * A broken connection is reconnected (its regions attached again, with
 * fresh keys: see sacred_conn_reconnect()), a memory never reached is
 * connected. The attempts run at the same time, so the call takes about
 * one connect, or the longest timeout of the memories that do not
 * answer; an attempt the memory refuses as a duplicate (it still holds
 * the broken connection) is made again within that time.
 *
 * Return: the number of memories usable afterwards.
 */
int sacred_rmem_revive(struct sacred_rmem *rm)
{
	return rmem_revive(rm, false);
}

/**
 * sacred_rmem_revive_lazy() - sacred_rmem_revive() for callers on a timer
 * @rm: the handle
 *
 * For lib/log.c's poll, whose other work - a leader's appends, its
 * heartbeat - must not stop for a memory whose host is gone. A broken
 * connection is reconnected in steps that never wait for the network
 * (sacred_conn_reconnect_async()): the call starts or moves on every
 * attempt, as far as the answers already there take it. While fewer than
 * a quorum of memories are usable - a new leader whose connections an
 * earlier leader fenced needs them back - it also waits for answers and
 * starts new attempts after those refused as duplicates or run out
 * (backing off), up to the longest timeout of those memories; a memory
 * that refused otherwise (down, say) is asked again at the next call.
 * With a quorum it returns, and attempts under way go on at the next call
 * (sacred_rmem_reviving()). A memory never reached is connected the same
 * way, on a connection of its own that becomes the memory's once
 * connected, with every region attached.
 *
 * Return: the number of memories usable afterwards.
 */
int sacred_rmem_revive_lazy(struct sacred_rmem *rm)
{
	return rmem_revive(rm, true);
}

/**
 * sacred_rmem_reviving() - is a reconnect under way?
 * @rm: the handle
 *
 * Return: true while a broken connection has an attempt in progress, which
 * sacred_rmem_revive_lazy() moves on.
 */
bool sacred_rmem_reviving(const struct sacred_rmem *rm)
{
	const struct sacred_conn *c;
	unsigned int i;

	for (i = 0; i < rm->nr_mems; i++) {
		c = rmem_attempt(rm, i);
		if (c && sacred_conn_broken(c) && sacred_conn_cm_fd(c) >= 0)
			return true;
	}
	return false;
}

/*
 * The error a call that missed its quorum returns: a refusal by a policy
 * (-EPERM) or by the memory's access check (-EACCES) says the most, then
 * -ENOENT, then a broken connection (crashed, down, or fenced), then a
 * timeout; a memory whose region was made again (-ESTALE) counts as one
 * not connected.
 */
static int rmem_error(const struct sacred_rmem_result *res)
{
	static const int rank[] = { -EPERM, -EACCES, -ENOENT, -ECONNRESET,
				    -ETIMEDOUT };
	unsigned int r, i;

	for (r = 0; r < sizeof(rank) / sizeof(rank[0]); r++)
		for (i = 0; i < res->nr_mems; i++)
			if (res->status[i] == rank[r])
				return rank[r];
	/* A region made again there: that memory is as good as down. */
	for (i = 0; i < res->nr_mems; i++)
		if (res->status[i] && res->status[i] != -EINPROGRESS &&
		    res->status[i] != -ENOTCONN && res->status[i] != -ESTALE)
			return res->status[i];
	return -ENOTCONN;
}

/*
 * Take the results of earlier calls' stragglers on memory @i; a
 * changePermission among them lets the memory take part again.
 */
static void rmem_reap(struct sacred_rmem *rm, unsigned int i)
{
	struct sacred_io_result r;

	if (!rm->conns[i])
		return;
	while (sacred_io_poll(rm->conns[i], &r, 1) == 1)
		if (r.opcode == SACRED_IO_PERM &&
		    r.user_data >> 8 == rm->perm_seq[i])
			rm->perm_seq[i] = 0;
	if (sacred_conn_broken(rm->conns[i]) &&
	    !sacred_io_pending(rm->conns[i]))
		rm->perm_seq[i] = 0;
}

/*
 * Wait (up to the memory's timeout, twice) until memory @i has no
 * operation of an earlier call in flight: blocking calls on its
 * connection need that.
 */
static void rmem_drain(struct sacred_rmem *rm, unsigned int i)
{
	uint64_t end = rmem_now_ms() + 2 * (uint64_t)rm->attr[i].timeout_ms;
	struct sacred_conn *c = rm->conns[i];

	rmem_reap(rm, i);
	while (c && sacred_io_pending(c) && rmem_now_ms() < end) {
		sacred_io_wait(&c, 1, 10);
		rmem_reap(rm, i);
	}
}

/*
 * Post step @k of @ops to memory @i, a READ into the handle's buffer at
 * @off; false if it could not be posted.
 */
static bool rmem_post_step(struct sacred_rmem *rm, unsigned int i,
			   const struct sacred_io *ops, unsigned int k,
			   size_t off, uint64_t seq,
			   struct sacred_rmem_result *res)
{
	struct sacred_io io = ops[k];
	int ret;

	io.user_data = seq << 8 | k;
	if (io.opcode == SACRED_IO_READ)
		io.buf = rm->rbuf[i] + off;
	ret = sacred_io_post(rm->conns[i], &io, 1);
	if (ret >= 0)
		return true;
	res->status[i] = ret;
	res->done |= 1U << i;
	return false;
}

/*
 * A batched call's result @r from memory @i: the memory fails with the
 * first operation that does (later results of this call there are
 * dropped), and succeeds once all its operations did.
 */
static void
rmem_batch_result(struct sacred_rmem *rm, unsigned int i,
		  const struct sacred_io *ops, const struct sacred_io_result *r,
		  const size_t *off, void *const *bufs, unsigned int *left,
		  struct sacred_rmem_result *res, unsigned int *waiting,
		  unsigned int *ok, unsigned int *failed)
{
	unsigned int k = r->user_data & 0xff;
	int status = r->status;

	if (res->done & (1U << i))
		return;
	if (!status)
		status = rmem_incarnation(rm, i, r->region_id);
	if (status) {
		res->status[i] = status;
		res->done |= 1U << i;
		(*waiting)--;
		(*failed)++;
		return;
	}
	if (ops[k].opcode == SACRED_IO_READ && ops[k].len)
		memcpy((uint8_t *)bufs[i] + off[k], rm->rbuf[i] + off[k],
		       ops[k].len);
	if (--left[i])
		return;
	res->status[i] = 0;
	res->done |= 1U << i;
	res->ok |= 1U << i;
	(*waiting)--;
	(*ok)++;
}

/* @res, or @local if NULL, cleared: every memory -ENOTCONN until it answers. */
static struct sacred_rmem_result *
rmem_result_start(const struct sacred_rmem *rm, struct sacred_rmem_result *res,
		  struct sacred_rmem_result *local)
{
	unsigned int i;

	if (!res)
		res = local;
	memset(res, 0, sizeof(*res));
	res->nr_mems = rm->nr_mems;
	for (i = 0; i < rm->nr_mems; i++)
		res->status[i] = -ENOTCONN;
	return res;
}

/**
 * struct rmem_call - one call of rmem_run() under way
 * @ops: the operations, the same for every memory
 * @nops: how many
 * @bufs: where READs land for the caller, per memory
 * @batch: all posted at once (else chained: one after the other)
 * @seq: the call's number, in the operations' user_data
 * @off: batched, where each READ lands in the handle's buffers
 * @step: chained, the operation each memory is at
 * @left: batched, the operations each memory has yet to complete
 * @failed: memories that failed (or were not asked)
 * @ok: memories that succeeded
 * @waiting: memories with operations in flight
 * @res: the caller's result
 */
struct rmem_call {
	const struct sacred_io *ops;
	unsigned int nops;
	void *const *bufs;
	bool batch;
	uint64_t seq;
	size_t off[SACRED_RMEM_CHAIN_MAX];
	unsigned int step[SACRED_RMEM_MAX];
	unsigned int left[SACRED_RMEM_MAX];
	unsigned int failed;
	unsigned int ok;
	unsigned int waiting;
	struct sacred_rmem_result *res;
};

/*
 * Start @c at memory @i if it is asked (@ask) and usable: post its first
 * operation (chained) or all of them (batched). Return its timeout if it
 * now waits; 0 if it failed at once.
 */
static int rmem_start(struct sacred_rmem *rm, struct rmem_call *c,
		      unsigned int i, uint32_t ask)
{
	const struct sacred_io *ops = c->ops;
	struct sacred_rmem_result *res = c->res;
	unsigned int k, nops = c->nops;
	int ret = 0;

	rmem_reap(rm, i);
	if (!(ask & (1U << i))) {
		/* Not asked (sacred_rmem_read_among()). */
		c->failed++;
		return 0;
	}
	if (rmem_usable(rm, i) && rm->perm_seq[i]) {
		/* Its key may be changing: it sits this one out. */
		res->status[i] = -EBUSY;
		c->failed++;
		return 0;
	}
	if (!rmem_usable(rm, i)) {
		c->failed++;
		return 0;
	}
	/* Another incarnation there: it does not count. */
	for (k = 0; k < nops; k++) {
		ret = rmem_incarnation(rm, i, rmem_io_region(&ops[k]));
		if (ret)
			break;
	}
	if (k < nops) {
		res->status[i] = ret;
		c->failed++;
		return 0;
	}
	/* Batched: everything now; a memory that takes not all fails. */
	for (k = 0; k < (c->batch ? nops : 1); k++)
		if (!rmem_post_step(rm, i, ops, k, c->off[k], c->seq, res))
			break;
	if (k < (c->batch ? nops : 1)) {
		c->failed++;
		return 0;
	}
	c->left[i] = nops;
	res->status[i] = -EINPROGRESS;
	c->waiting++;
	return rm->attr[i].timeout_ms;
}

/*
 * A chained call's result @r from memory @i: the next operation is posted
 * if this one succeeded. True while the memory has one in flight.
 */
static bool rmem_chain_result(struct sacred_rmem *rm, struct rmem_call *c,
			      unsigned int i, struct sacred_io_result *r)
{
	const struct sacred_io *ops = c->ops;
	struct sacred_rmem_result *res = c->res;
	unsigned int k = c->step[i];

	/* A PERM's answer may have cached the region. */
	if (!r->status)
		r->status = rmem_incarnation(rm, i, r->region_id);
	res->status[i] = r->status;
	if (ops[k].opcode == SACRED_IO_PERM)
		res->perm[i] = r->perm;
	if (!r->status && ops[k].opcode == SACRED_IO_READ && ops[k].len)
		memcpy(c->bufs[i], rm->rbuf[i], ops[k].len);
	if (!r->status && ++c->step[i] < c->nops) {
		res->status[i] = -EINPROGRESS;
		if (rmem_post_step(rm, i, ops, c->step[i], 0, c->seq, res))
			return true;
	}
	return false;
}

/* Take every result memory @i has now, for @c or straggling from before. */
static void rmem_poll(struct sacred_rmem *rm, struct rmem_call *c,
		      unsigned int i)
{
	struct sacred_rmem_result *res = c->res;
	struct sacred_io_result r;

	while (sacred_io_poll(rm->conns[i], &r, 1) == 1) {
		if (c->batch && r.user_data >> 8 == c->seq) {
			rmem_batch_result(rm, i, c->ops, &r, c->off, c->bufs,
					  c->left, res, &c->waiting, &c->ok,
					  &c->failed);
			continue;
		}
		if (c->batch || r.user_data != (c->seq << 8 | c->step[i])) {
			/* A straggler of an earlier call. */
			if (r.opcode == SACRED_IO_PERM &&
			    r.user_data >> 8 == rm->perm_seq[i])
				rm->perm_seq[i] = 0;
			continue;
		}
		if (rmem_chain_result(rm, c, i, &r))
			continue;
		c->waiting--;
		res->done |= 1U << i;
		if (res->status[i]) {
			c->failed++;
			continue;
		}
		c->ok++;
		res->ok |= 1U << i;
	}
}

/*
 * Run @ops (@nops of them, the same for every memory) on every usable
 * memory. Chained (!@batch), each memory's operations run one after the
 * other: the next is posted once the previous one succeeded, so that, at
 * every memory, they take effect in order (a changePermission is applied
 * before the WRITE after it is sent); the READ among them (at most one)
 * lands at the start of the buffers. Batched, all are posted at once, in
 * no order (READs and WRITEs only), and the READs land one after the
 * other. A memory succeeds when all its operations did. Collects results
 * until a quorum succeeded, a quorum can no longer succeed, everyone
 * answered (@all), or the slowest memory's timeouts passed. READs land in
 * the handle's buffer of each memory and are copied to @bufs[i] for
 * memories that succeed. Only the memories in @ask (bit i: memory i) are
 * asked; the others count as failed (-ENOTCONN).
 */
static int rmem_run(struct sacred_rmem *rm, const struct sacred_io *ops,
		    unsigned int nops, void *const *bufs, bool all, bool batch,
		    uint32_t ask, struct sacred_rmem_result *res)
{
	struct sacred_rmem_result local;
	struct rmem_call c = {
		.ops = ops, .nops = nops, .bufs = bufs, .batch = batch,
		.seq = ++rm->seq,
	};
	unsigned int i, k;
	uint64_t deadline;
	int timeout = 0, err = 0, ret;
	size_t o = 0;

	/* Where each READ lands: one after the other when batched. */
	for (k = 0; batch && k < nops; k++) {
		c.off[k] = o;
		if (ops[k].opcode == SACRED_IO_READ)
			o += ops[k].len;
	}
	c.res = res = rmem_result_start(rm, res, &local);
	for (i = 0; i < rm->nr_mems; i++) {
		ret = rmem_start(rm, &c, i, ask);
		if (ret > timeout)
			timeout = ret;
	}

	/* Operations time out in the connections; this is a backstop. */
	deadline = rmem_now_ms() + (nops + 1) * (uint64_t)timeout + 100;
	while (c.waiting && (all || (c.ok < rm->quorum &&
				     c.failed <= rm->nr_mems - rm->quorum))) {
		uint64_t now = rmem_now_ms();

		if (now >= deadline)
			break;
		ret = sacred_io_wait(rm->conns, rm->nr_mems,
				     (int)(deadline - now));
		if (ret < 0) {
			err = ret;
			break;
		}
		for (i = 0; i < rm->nr_mems; i++)
			if (rm->conns[i])
				rmem_poll(rm, &c, i);
	}
	/* Even after a failed wait: those keys may still change. */
	for (i = 0; i < rm->nr_mems; i++)
		if (res->status[i] == -EINPROGRESS &&
		    ops[c.step[i]].opcode == SACRED_IO_PERM)
			rm->perm_seq[i] = c.seq;
	if (err)
		return err;
	return c.ok >= rm->quorum ? 0 : rmem_error(res);
}

/*
 * The checks a READ or WRITE of a chain or batch must pass before
 * anything is sent: -EMSGSIZE above max_io, -EINVAL for a WRITE without
 * a buffer. Other operations pass.
 */
static int rmem_check_rw(const struct sacred_rmem *rm,
			 const struct sacred_io *op)
{
	if (op->opcode != SACRED_IO_READ && op->opcode != SACRED_IO_WRITE)
		return 0;
	if (op->len > rm->max_io)
		return -EMSGSIZE;
	if (op->opcode == SACRED_IO_WRITE && !op->buf && op->len)
		return -EINVAL;
	return 0;
}

/**
 * sacred_rmem_chain() - run a short sequence of operations on every
 * memory, each memory's in order, and return at a quorum
 * @rm: the handle
 * @ops: the operations, the same for every memory (user_data is the
 *	handle's; a READ's @buf is ignored)
 * @nops: how many, 1 to SACRED_RMEM_CHAIN_MAX
 * @bufs: where the READ among @ops (at most one) lands, one buffer per
 *	memory; NULL without a READ
 * @res: each memory's outcome (may be NULL): the status of its first
 *	failed operation, or 0; @res->perm[i] for a changePermission
 *
 * At each memory, an operation is sent only after the one before it
 * succeeded, so they take effect there in order - the property Protected
 * Memory Paxos needs: its read at a memory comes after its permission
 * there. A memory counts for the quorum when all of its operations
 * succeeded.
 *
 * Return: 0 when a quorum of memories completed all; otherwise as
 * sacred_rmem_write() (and -EPERM when policies refused).
 */
int sacred_rmem_chain(struct sacred_rmem *rm, const struct sacred_io *ops,
		      unsigned int nops, void *const *bufs,
		      struct sacred_rmem_result *res)
{
	unsigned int k, reads = 0;

	if (!rm || !ops || !nops || nops > SACRED_RMEM_CHAIN_MAX)
		return -EINVAL;
	for (k = 0; k < nops; k++) {
		int ret = rmem_check_rw(rm, &ops[k]);

		if (ret)
			return ret;
		reads += ops[k].opcode == SACRED_IO_READ;
	}
	if (reads > 1 || (reads && !bufs))
		return -EINVAL;
	if (reads)
		for (k = 0; k < rm->nr_mems; k++)
			if (!bufs[k])
				return -EINVAL;
	return rmem_run(rm, ops, nops, bufs, false, false, RMEM_ALL, res);
}

/**
 * sacred_rmem_batch() - run a few READs and WRITEs on every memory, all
 * at once, and return at a quorum
 * @rm: the handle
 * @ops: the operations, the same for every memory (user_data is the
 *	handle's; a READ's @buf is ignored)
 * @nops: how many, 1 to SACRED_RMEM_CHAIN_MAX
 * @bufs: one buffer per memory, where the READs land one after the other
 *	(the first READ's bytes, then the second's...); NULL without a READ
 * @res: each memory's outcome (may be NULL): the status of its first
 *	failed operation, or 0
 *
 * Unlike sacred_rmem_chain(), nothing is ordered: every operation is sent
 * to every memory at once, so the call takes one round trip however many
 * there are - what reading several regions costs when the reads do not
 * depend on each other. A memory counts for the quorum when all of its
 * operations succeeded; @bufs[i] holds memory i's bytes if it did (bit i
 * of @res->ok).
 *
 * Return: 0 when a quorum of memories completed all; -EINVAL (another
 * opcode, a bad count, a missing buffer); -EMSGSIZE (an operation, or the
 * READs together, above max_io); otherwise as sacred_rmem_write().
 */
int sacred_rmem_batch(struct sacred_rmem *rm, const struct sacred_io *ops,
		      unsigned int nops, void *const *bufs,
		      struct sacred_rmem_result *res)
{
	size_t reads = 0;
	unsigned int k;

	if (!rm || !ops || !nops || nops > SACRED_RMEM_CHAIN_MAX)
		return -EINVAL;
	for (k = 0; k < nops; k++) {
		int ret;

		if (ops[k].opcode != SACRED_IO_READ &&
		    ops[k].opcode != SACRED_IO_WRITE)
			return -EINVAL;
		ret = rmem_check_rw(rm, &ops[k]);
		if (ret)
			return ret;
		if (ops[k].opcode == SACRED_IO_READ)
			reads += ops[k].len;
	}
	if (reads > rm->max_io)
		return -EMSGSIZE;
	if (reads && !bufs)
		return -EINVAL;
	for (k = 0; reads && k < rm->nr_mems; k++)
		if (!bufs[k])
			return -EINVAL;
	return rmem_run(rm, ops, nops, bufs, false, true, RMEM_ALL, res);
}

/*
 * The tag a quorum of the memories in @ok gave (@tag[i]: memory i's):
 * true and *@out set, or false if no tag is shared by a quorum.
 */
static bool rmem_quorum_tag(const struct sacred_rmem *rm, uint32_t ok,
			    const uint64_t *tag, uint64_t *out)
{
	unsigned int i, j, same;

	for (i = 0; i < rm->nr_mems; i++) {
		if (!(ok & (1U << i)))
			continue;
		same = 0;
		for (j = 0; j < rm->nr_mems; j++)
			if ((ok & (1U << j)) && tag[j] == tag[i])
				same++;
		if (same >= rm->quorum) {
			*out = tag[i];
			return true;
		}
	}
	return false;
}

/*
 * Whether a memory of @res failed in a way that may pass (not connected,
 * broken, slow, busy): one incarnation may still find its quorum.
 */
static bool rmem_may_pass(const struct sacred_rmem_result *res)
{
	unsigned int i;

	for (i = 0; i < res->nr_mems; i++)
		switch (res->status[i]) {
		case -ENOTCONN:
		case -ECONNRESET:
		case -ETIMEDOUT:
		case -EBUSY:
		case -EAGAIN:
			return true;
		}
	return false;
}

/**
 * sacred_rmem_attach() - attach a region (same id on every memory) on
 * every usable memory, blocking, one memory after the other; a memory
 * whose connection turns out to have been dropped (this process fenced by
 * a revoke) is reconnected and asked again, once
 * @rm: the handle
 * @region_id: the region
 * @res: each memory's outcome (may be NULL)
 *
 * One incarnation: a replicated region is made with one tag on every
 * memory (sacred_region_new_tagged()). The first attach that reaches a
 * quorum of memories sharing a tag learns it; a memory whose region has
 * another tag - made again since, and empty: a memory that forgot - is
 * left out (status -ESTALE, as after sacred_conn_reconnect() finds a
 * region made again), by this call and by every later one (checked before
 * each operation is sent and on each answer). So the handle never counts
 * a memory that lost what it held towards a quorum.
 *
 * Return: 0 when a quorum attached one incarnation; -EPROTO when no
 * quorum of the memories can (every memory answered, and no quorum
 * shares the tag: learned, or any one at the first attach); otherwise as
 * sacred_rmem_write() (also when no quorum shares a tag yet but memories
 * that did not answer may: every copy is left out until a later attach),
 * or -ENOMEM.
 */
int sacred_rmem_attach(struct sacred_rmem *rm, uint32_t region_id,
		       struct sacred_rmem_result *res)
{
	uint64_t tag[SACRED_RMEM_MAX], want = 0;
	struct sacred_rmem_result local;
	struct sacred_region_attr ra;
	unsigned int i, ok = 0;
	struct rmem_region *g;
	bool none = false;

	if (!rm)
		return -EINVAL;
	g = rmem_region_add(rm, region_id);
	if (!g)
		return -ENOMEM;
	res = rmem_result_start(rm, res, &local);
	for (i = 0; i < rm->nr_mems; i++) {
		if (!rmem_usable(rm, i))
			continue;
		rmem_drain(rm, i);
		res->status[i] = sacred_attach(rm->conns[i], region_id, &ra);
		/* Fenced before (a revoke for someone else): once more. */
		if (res->status[i] == -ECONNRESET &&
		    !sacred_conn_reconnect(rm->conns[i]))
			res->status[i] = sacred_attach(rm->conns[i], region_id,
						       &ra);
		res->done |= 1U << i;
		if (!res->status[i]) {
			res->ok |= 1U << i;
			tag[i] = ra.tag;
			ok++;
		}
	}
	if (ok < rm->quorum)
		return rmem_error(res);
	if (g->known)
		want = g->tag;
	else if (!rmem_quorum_tag(rm, res->ok, tag, &want))
		none = true;	/* nothing to trust: every copy is left out */
	ok = 0;
	for (i = 0; i < rm->nr_mems; i++) {
		if (!(res->ok & (1U << i)))
			continue;
		if (!none && tag[i] == want) {
			ok++;
			continue;
		}
		res->status[i] = sacred_conn_forget(rm->conns[i], region_id,
						    none ? NULL : &want);
		res->ok &= ~(1U << i);
	}
	if (ok < rm->quorum)
		return rmem_may_pass(res) ? rmem_error(res) : -EPROTO;
	g->tag = want;
	g->known = true;
	return 0;
}

/**
 * sacred_rmem_region_tag() - the tag of a region, and which memories
 * connected now hold it
 * @rm: the handle
 * @region_id: a region attached with sacred_rmem_attach()
 * @tag: gets the tag
 * @mask: gets the memories that hold it (bit i: memory i); may be NULL
 *
 * Local. Once an attach learned the region's tag (the one a quorum of
 * memories shares), that tag, and the memories whose connection has the
 * region attached with it. Before, the tags the memories connected now
 * gave when they attached the region (a broken connection's may be of a
 * region deleted since): a replicated region is made with one tag on
 * every memory (sacred_region_new_tagged()); memories that disagree hold
 * different incarnations of the region id, and nothing written to one is
 * the other's.
 *
 * Return: 0; -ENOENT if no memory connected now has the region attached
 * (with the learned tag); -EPROTO if, no tag learned, two memories gave
 * different tags (*@mask then holds those that gave the first one met).
 */
int sacred_rmem_region_tag(const struct sacred_rmem *rm, uint32_t region_id,
			   uint64_t *tag, uint32_t *mask)
{
	const struct rmem_region *g;
	struct sacred_region_attr ra;
	uint32_t seen = 0;
	unsigned int i;
	int ret = 0;

	if (!rm || !tag)
		return -EINVAL;
	g = rmem_region_find(rm, region_id);
	for (i = 0; i < rm->nr_mems; i++) {
		if (!rmem_usable(rm, i) ||
		    sacred_conn_region(rm->conns[i], region_id, &ra))
			continue;
		if (g && g->known && ra.tag != g->tag)
			continue;
		if (!seen)
			*tag = ra.tag;
		if (ra.tag == *tag)
			seen |= 1U << i;
		else
			ret = -EPROTO;
	}
	if (mask)
		*mask = seen;
	return seen ? ret : -ENOENT;
}

/* One tag for a span of regions: lib/internal.h. */
int sacred_rmem_span_tag(const struct sacred_rmem *rm, uint32_t first,
			 unsigned int count, uint64_t *tag)
{
	unsigned int r;
	uint64_t t;
	int ret;

	for (r = 0; r < count; r++) {
		ret = sacred_rmem_region_tag(rm, first + r, &t, NULL);
		if (ret)
			return ret;
		if (!r)
			*tag = t;
		else if (t != *tag)
			return -EPROTO;
	}
	return count ? 0 : -EINVAL;
}

/**
 * sacred_rmem_write() - write the same bytes to a region on every memory
 * @rm: the handle
 * @region_id: the region
 * @offset: first byte
 * @buf: the bytes (copied before the call returns)
 * @len: at most the handle's max_io
 * @res: each memory's outcome (may be NULL)
 *
 * Returns when a quorum of memories acknowledged, or a quorum can no
 * longer do so. Memories that had not answered by then still carry the
 * write out (it is not cancelled).
 *
 * Return: 0 when a quorum acknowledged; -EINVAL, -EMSGSIZE for bad
 * arguments; otherwise the quorum was missed, and the error says why, most
 * telling first: -EACCES (access refused: permission revoked), -ENOENT,
 * -ECONNRESET (connections broke: memories crashed or down, or this
 * process was fenced), -ETIMEDOUT, -ENOTCONN (too few memories
 * connected). Writes may have landed on some memories, in whole or in
 * part.
 */
int sacred_rmem_write(struct sacred_rmem *rm, uint32_t region_id,
		      uint64_t offset, const void *buf, size_t len,
		      struct sacred_rmem_result *res)
{
	struct sacred_io io = {
		.opcode = SACRED_IO_WRITE,
		.region_id = region_id,
		.offset = offset,
		.buf = (void *)buf,
		.len = len,
	};

	if (!rm || (!buf && len))
		return -EINVAL;
	if (len > rm->max_io)
		return -EMSGSIZE;
	return rmem_run(rm, &io, 1, NULL, false, false, RMEM_ALL, res);
}

/* sacred_rmem_read() of the memories in @ask only. */
static int rmem_read(struct sacred_rmem *rm, uint32_t region_id,
		     uint64_t offset, void *const *bufs, size_t len, bool all,
		     uint32_t ask, struct sacred_rmem_result *res)
{
	struct sacred_io io = {
		.opcode = SACRED_IO_READ,
		.region_id = region_id,
		.offset = offset,
		.len = len,
	};
	unsigned int i;

	if (!rm || !bufs)
		return -EINVAL;
	if (len > rm->max_io)
		return -EMSGSIZE;
	for (i = 0; i < rm->nr_mems; i++)
		if (!bufs[i] && len)
			return -EINVAL;
	return rmem_run(rm, &io, 1, bufs, all, false, ask, res);
}

/**
 * sacred_rmem_read() - read the same bytes of a region from every memory
 * @rm: the handle
 * @region_id: the region
 * @offset: first byte
 * @bufs: one buffer of @len bytes per memory; bufs[i] gets memory i's
 *	bytes if it answered in time (bit i of @res->ok)
 * @len: at most the handle's max_io
 * @all: wait for every usable memory (up to its timeout), not just a
 *	quorum
 * @res: each memory's outcome (may be NULL)
 *
 * Return: 0 when a quorum answered; otherwise as sacred_rmem_write().
 */
int sacred_rmem_read(struct sacred_rmem *rm, uint32_t region_id,
		     uint64_t offset, void *const *bufs, size_t len, bool all,
		     struct sacred_rmem_result *res)
{
	return rmem_read(rm, region_id, offset, bufs, len, all, RMEM_ALL, res);
}

/* A quorum read of the memories in @mask only: lib/internal.h. */
int sacred_rmem_read_among(struct sacred_rmem *rm, uint32_t region_id,
			   uint64_t offset, void *const *bufs, size_t len,
			   uint32_t mask, struct sacred_rmem_result *res)
{
	return rmem_read(rm, region_id, offset, bufs, len, false, mask, res);
}

/* A write that failed, maybe on a quorum all the same: lib/internal.h. */
bool sacred_rmem_maybe_on_quorum(const struct sacred_rmem *rm,
				 const struct sacred_rmem_result *res,
				 size_t cell)
{
	unsigned int i, surely_not = 0;

	if (!res->nr_mems)
		return false;	/* nothing was sent */
	for (i = 0; i < res->nr_mems; i++) {
		switch (res->status[i]) {
		case -EACCES:
			/*
			 * A key refused mid-write may leave a multi-packet
			 * cell placed in part - and valid, where the bytes
			 * missing were the zeros both writes hold. One packet
			 * (256 B: the smallest path MTU) is all or nothing.
			 */
			if (cell <= 256)
				surely_not++;
			break;
		case -ENOTCONN:
		case -EBUSY:
		case -EAGAIN:
		case -EPERM:
		case -ENOENT:
		case -ESTALE:
		case -EINVAL:
		case -ERANGE:
		case -EMSGSIZE:
			surely_not++;
			break;
		}
	}
	return res->nr_mems - surely_not >= rm->quorum;
}

/**
 * sacred_rmem_change_perm() - changePermission on every memory
 * @rm: the handle
 * @req: the request, the same for every memory
 * @res: each memory's outcome, with its answer in @res->perm[i]
 *
 * Return: 0 when a quorum accepted; -EPERM when a policy refused on
 * enough memories that no quorum can accept (see @res->perm[i].reason);
 * otherwise as sacred_rmem_write().
 */
int sacred_rmem_change_perm(struct sacred_rmem *rm,
			    const struct sacred_perm_req *req,
			    struct sacred_rmem_result *res)
{
	struct sacred_io io = {
		.opcode = SACRED_IO_PERM,
		.perm = *req,
	};

	if (!rm || !req)
		return -EINVAL;
	return rmem_run(rm, &io, 1, NULL, false, false, RMEM_ALL, res);
}
