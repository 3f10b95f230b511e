// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_nlfuzz - a fuzzer for the generic netlink family "sacred".
 *
 * sacred_netlink checks one hand-picked malformed message at a time; this
 * program sends a great many, built from VALID messages of every command
 * (a MEM_NEW on an rxe device with its real address, a REGION_SET with a
 * real ACL on a region that exists, ...) so that a mutation reaches past
 * the policy checks into the handlers, then mutated:
 *
 *   attributes: dropped, duplicated, repeated up to 1500 times, retyped,
 *	swapped, resized (0, short, long, huge), given edge values, nested
 *	where a flat one is wanted and flattened where a nest is, nested
 *	30 deep, NLA_F_NESTED/NLA_F_NET_BYTEORDER flipped, unknown ids added;
 *   bytes: bits flipped, bytes overwritten, the message truncated or
 *	extended, nla_len fields lying;
 *   headers: unknown commands, a foreign genl version, a dirty reserved
 *	field, NLM_F_DUMP on doit-only commands, stray flags, a truncated
 *	nlmsghdr, nlmsg_len lying, no NLM_F_ACK, two messages in one
 *	datagram.
 *
 * Every message must be answered, within SACRED_FUZZ_TIMEOUT_MS (1 s), by
 * an ACK or a clean error: a negative errno a caller can act on. Headers
 * the kernel drops on purpose (nlmsg_len lying, fewer than 16 bytes) get
 * no answer; those are followed by a probe whose answer must come, and
 * whatever came before it must be clean. The other tests interrupt dumps
 * midway (socket closed; objects changed, then the dump continued), race
 * creation and deletion from several threads, and finally unload the
 * module so that its live-object counters are checked (a WARNING at
 * unload, which this test and the VM rig both catch).
 *
 * Environment: SACRED_FUZZ_SEED (replay a run: the seed is printed),
 * SACRED_FUZZ_COUNT (messages in all, default 100000; 1000000 is the soak
 * run), SACRED_FUZZ_TIMEOUT_MS (default 1000). Needs the rig's
 * SACRED_RXE_DEVS/SACRED_RXE_ADDRS, and SACRED_KO for the unload test.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/syscall.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "nlraw.h"
#include "sacred.h"		/* libsacred: processes that connect */
#include "sacred_test.h"

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define FZ_COUNT_DEFAULT	100000L
/*
 * The policies a well-formed REGION_NEW of the fuzzer names: the built-in
 * ones, 0 .. SACRED_POLICY_BPF - 1. Policy bpf needs a program's file
 * descriptor, which the fuzzer has none of (selftests/sacred_bpf covers
 * it); a mutated policy byte still reaches every value.
 */
#define FZ_POLICIES		SACRED_POLICY_BPF
#define FZ_TIMEOUT_MS_DEFAULT	1000
/* sendto() runs the handler: this long inside it means the kernel hangs. */
#define FZ_HANG_MS		20000
/* Harness limit for the long tests: a soak run of 10^6 must fit. */
#define FZ_TEST_TIMEOUT		7200

#define FZ_MAX_ATTRS	128
#define FZ_LEAF_MAX	72	/* payload bytes a leaf holds literally */
#define FZ_WIRE_MAX	(72 * 1024)
#define FZ_RBUF		(192 * 1024)
#define FZ_MAX_OFFS	256
#define FZ_MAX_DEVS	3
#define FZ_LIST_MAX	2048
#define FZ_MAX_FAIL	10
#define FZ_THREADS	5	/* concurrent test: 4 writers and a dumper */
#define FZ_PEERS	2	/* processes connected to base instance 0 */
#define FZ_SLOTS	(FZ_THREADS + 1)

/* The base objects the mutated messages aim at. */
#define FZ_NREG		5	/* regions per base instance; id == policy */
#define FZ_BASE_CAP	(4ULL << 20)
#define FZ_REG_SIZE(id)	(4096ULL * ((id) + 1))
/* A device index no device has: the probe's DEV_GET must be -ENODEV. */
#define FZ_PROBE_INDEX	0xfffffff0u
/* Ids the concurrent test's threads fight over. */
#define FZ_CONC_MEM0	0x1000u
#define FZ_CONC_NMEM	8
#define FZ_CONC_NREG	8

#define FZ_UNKNOWN_CMD	(SACRED_CMD_MAX + 1)	/* stats bucket */

/* ------------------------------------------------------------ utilities */

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* splitmix64: small, fast, and every thread has its own. */
struct fz_rng {
	uint64_t s;
};

static uint64_t rnd64(struct fz_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd(struct fz_rng *r, uint32_t n)
{
	return n ? rnd64(r) % n : 0;
}

static bool chance(struct fz_rng *r, unsigned int pct)
{
	return rnd(r, 100) < pct;
}

static void rnd_bytes(struct fz_rng *r, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len--)
		*p++ = rnd64(r);
}

static const char *const fz_cmd_name[] = {
	[SACRED_CMD_UNSPEC]	= "UNSPEC",
	[SACRED_CMD_DEV_GET]	= "DEV_GET",
	[SACRED_CMD_MEM_NEW]	= "MEM_NEW",
	[SACRED_CMD_MEM_DEL]	= "MEM_DEL",
	[SACRED_CMD_MEM_GET]	= "MEM_GET",
	[SACRED_CMD_REGION_NEW]	= "REGION_NEW",
	[SACRED_CMD_REGION_DEL]	= "REGION_DEL",
	[SACRED_CMD_REGION_GET]	= "REGION_GET",
	[SACRED_CMD_REGION_SET]	= "REGION_SET",
	[SACRED_CMD_PEER_GET]	= "PEER_GET",
	[SACRED_CMD_PERM_SET]	= "PERM_SET",
	[SACRED_CMD_MEM_SET]	= "MEM_SET",
	[FZ_UNKNOWN_CMD]	= "unknown",
};

static int fz_cmd_bucket(unsigned int cmd)
{
	return cmd && cmd <= SACRED_CMD_MAX ? (int)cmd : FZ_UNKNOWN_CMD;
}

/* Commands with a dumpit and no doit, and the reverse. */
static bool fz_cmd_dumps(unsigned int cmd)
{
	return cmd == SACRED_CMD_DEV_GET || cmd == SACRED_CMD_MEM_GET ||
	       cmd == SACRED_CMD_REGION_GET || cmd == SACRED_CMD_PEER_GET;
}

static bool fz_cmd_doit(unsigned int cmd)
{
	return cmd && cmd <= SACRED_CMD_MAX && cmd != SACRED_CMD_PEER_GET;
}

/* Commands whose success changes the objects the fuzzer keeps. */
static bool fz_cmd_changes(unsigned int cmd)
{
	return cmd == SACRED_CMD_MEM_NEW || cmd == SACRED_CMD_MEM_DEL ||
	       cmd == SACRED_CMD_MEM_SET || cmd == SACRED_CMD_REGION_NEW ||
	       cmd == SACRED_CMD_REGION_DEL;
}

/*
 * The errnos a caller may get for a bad or impossible request. Anything
 * else (EFAULT, ENOMEM for a 4 KiB request, a kernel-internal errno
 * above 511, a positive value) is a bug in the module.
 */
static bool fz_errno_clean(int e)
{
	switch (e) {
	case EINVAL:
	case ERANGE:
	case ENOENT:
	case EEXIST:
	case EOPNOTSUPP:
	case EMSGSIZE:
	case ENOSPC:
	case EPERM:
	case EBUSY:
	case ENODEV:
	case EAFNOSUPPORT:
	case EADDRNOTAVAIL:
	case EADDRINUSE:
	case E2BIG:
		return true;
	}
	return false;
}

/* ------------------------------------------------------ message model */

/*
 * A message is kept as a tree of attributes, not as bytes, so that
 * mutations can act on structure (drop, duplicate, nest, flatten) and the
 * result still serialises with consistent lengths; byte-level mutations
 * then break what is left to break.
 */
struct fz_attr {
	uint16_t type;		/* nla_type, flags included */
	int16_t parent;		/* enclosing nest, -1 at the top level */
	uint16_t len;		/* leaf: payload bytes */
	uint16_t rep;		/* serialised this many times (0: once) */
	uint8_t nest:1;		/* holds attributes, not bytes */
	uint8_t dead:1;		/* dropped */
	uint8_t inc:1;		/* u32 leaf: + index of the repetition */
	uint8_t nul:1;		/* leaf: last payload byte is 0 */
	uint8_t fill;		/* payload bytes past FZ_LEAF_MAX */
	uint8_t data[FZ_LEAF_MAX];
};

struct fz_msg {
	uint16_t type;		/* nlmsg_type */
	uint16_t flags;
	uint8_t cmd;
	uint8_t version;
	uint16_t reserved;
	int n;
	struct fz_attr a[FZ_MAX_ATTRS];
};

/* A serialised message, with where its attribute headers are. */
struct fz_wire {
	size_t len;
	int noffs;
	uint32_t offs[FZ_MAX_OFFS];
	uint8_t buf[FZ_WIRE_MAX] __attribute__((aligned(NLMSG_ALIGNTO)));
};

static void fz_init(struct fz_msg *m, uint16_t family, uint8_t cmd,
		    uint16_t flags)
{
	m->type = family;
	m->flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->cmd = cmd;
	m->version = SACRED_GENL_VERSION;
	m->reserved = 0;
	m->n = 0;
}

static int fz_add(struct fz_msg *m, int parent, uint16_t type,
		  const void *data, size_t len)
{
	struct fz_attr *a;

	if (m->n >= FZ_MAX_ATTRS)
		return -1;
	a = &m->a[m->n];
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->parent = parent;
	a->len = len;
	if (data)
		memcpy(a->data, data, len < FZ_LEAF_MAX ? len : FZ_LEAF_MAX);
	return m->n++;
}

static int fz_nest(struct fz_msg *m, int parent, uint16_t type)
{
	int i = fz_add(m, parent, type | NLA_F_NESTED, NULL, 0);

	if (i >= 0)
		m->a[i].nest = 1;
	return i;
}

static void fz_u8(struct fz_msg *m, int p, uint16_t type, uint8_t v)
{
	fz_add(m, p, type, &v, sizeof(v));
}

static void fz_u16(struct fz_msg *m, int p, uint16_t type, uint16_t v)
{
	fz_add(m, p, type, &v, sizeof(v));
}

static void fz_u32(struct fz_msg *m, int p, uint16_t type, uint32_t v)
{
	fz_add(m, p, type, &v, sizeof(v));
}

static void fz_u64(struct fz_msg *m, int p, uint16_t type, uint64_t v)
{
	fz_add(m, p, type, &v, sizeof(v));
}

static void fz_str(struct fz_msg *m, int p, uint16_t type, const char *s)
{
	fz_add(m, p, type, s, strlen(s) + 1);
}

static size_t fz_put(const struct fz_msg *m, int parent, struct fz_wire *w,
		     size_t off, uint32_t rep_idx)
{
	int i;

	for (i = 0; i < m->n; i++) {
		const struct fz_attr *a = &m->a[i];
		unsigned int r, reps = a->rep ? a->rep : 1;

		if (a->parent != parent || a->dead)
			continue;
		for (r = 0; r < reps; r++) {
			uint32_t idx = reps > 1 ? r : rep_idx;
			struct nlattr *nla;
			size_t start = off, plen;

			if (off + NLA_HDRLEN > FZ_WIRE_MAX)
				return off;
			nla = (void *)(w->buf + off);
			if (w->noffs < FZ_MAX_OFFS)
				w->offs[w->noffs++] = off;
			off += NLA_HDRLEN;
			if (a->nest) {
				off = fz_put(m, i, w, off, idx);
			} else {
				plen = a->len;
				if (plen > FZ_WIRE_MAX - off)
					plen = FZ_WIRE_MAX - off;
				memcpy(w->buf + off, a->data,
				       plen < FZ_LEAF_MAX ? plen : FZ_LEAF_MAX);
				if (plen > FZ_LEAF_MAX)
					memset(w->buf + off + FZ_LEAF_MAX,
					       a->fill, plen - FZ_LEAF_MAX);
				if (a->nul && plen)
					w->buf[off + plen - 1] = 0;
				if (a->inc && plen == 4) {
					uint32_t v;

					memcpy(&v, w->buf + off, 4);
					v += idx;
					memcpy(w->buf + off, &v, 4);
				}
				off += plen;
			}
			nla->nla_type = a->type;
			/* Past 64 KiB the length cannot be told: it lies. */
			nla->nla_len = off - start > 0xffff ? 0xffff :
							      off - start;
			while ((off & (NLA_ALIGNTO - 1)) && off < FZ_WIRE_MAX)
				w->buf[off++] = 0;
		}
	}
	return off;
}

static void fz_serialize(const struct fz_msg *m, struct fz_wire *w,
			 uint32_t seq)
{
	struct nlmsghdr *nlh = (void *)w->buf;
	struct genlmsghdr *g = NLMSG_DATA(nlh);

	w->noffs = 0;
	nlh->nlmsg_type = m->type;
	nlh->nlmsg_flags = m->flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = 0;
	g->cmd = m->cmd;
	g->version = m->version;
	g->reserved = m->reserved;
	w->len = fz_put(m, -1, w, NLMSG_LENGTH(GENL_HDRLEN), 0);
	nlh->nlmsg_len = w->len;
}

/* ------------------------------------------------------------- sockets */

struct fz_ans {
	int err;		/* errno of NLMSG_ERROR / NLMSG_DONE, <= 0 */
	int nmsg;		/* family messages before it */
	bool intr;		/* NLM_F_DUMP_INTR seen */
	bool extack;		/* the error came with a message */
	int64_t us;		/* from send to the final answer */
	char errmsg[256];	/* extack message */
	char why[200];		/* set when the answer was not clean */
};

struct fz_stats {
	long sent, loose, resyncs;
	long cmd_sent[FZ_UNKNOWN_CMD + 1];
	long cmd_ok[FZ_UNKNOWN_CMD + 1];
	long err[160];		/* by errno, 0 = ACK */
	long noext[160];	/* errors without an extack message */
	int64_t max_us;
	int max_cmd;
};

struct fz_worker {
	struct nlraw *nl;	/* socket, family id, sequence, extack */
	char *rbuf;
	int slot;		/* in fz_watch[] */
	int timeout_ms;
	struct fz_rng rng;
	struct fz_ans ans;
	struct fz_msg m;
	struct fz_wire w;
	struct fz_wire probe;
	struct fz_stats st;
	long failures;
	/*
	 * The valid message may be refused -EINVAL for what the fuzzer does
	 * not track: an odd address (rdma_cm), a ballot or target on a
	 * region whose policy takes none.
	 */
	bool odd;
	char first_fail[2048];
};

/*
 * The watchdog: sendto() on a netlink socket runs the handler, so a
 * handler that never returns leaves the sender stuck where no poll()
 * timeout can help. A thread notices, prints the message and aborts.
 */
struct fz_watch {
	_Atomic int64_t since;	/* us when the send began, 0 when not in one */
	const void *buf;
	size_t len;
};

static struct fz_watch fz_watch[FZ_SLOTS];
static atomic_bool fz_watch_stop;
static pthread_t fz_watch_thread;
static bool fz_watch_running;
static uint64_t fz_seed_used;

static void fz_hexdump(const char *what, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i, max = len < 1024 ? len : 1024;
	char line[16 * 3 + 1];

	fprintf(stderr, "#   %s: %zu bytes%s\n", what, len,
		len > max ? " (first 1024)" : "");
	for (i = 0; i < max; i += 16) {
		size_t j, o = 0;

		for (j = i; j < max && j < i + 16; j++)
			o += snprintf(line + o, sizeof(line) - o, " %02x",
				      p[j]);
		fprintf(stderr, "#   %04zx:%s\n", i, line);
	}
}

static void *fz_watchdog(void *arg)
{
	while (!atomic_load(&fz_watch_stop)) {
		int i;

		usleep(200 * 1000);
		for (i = 0; i < FZ_SLOTS; i++) {
			int64_t t = atomic_load(&fz_watch[i].since);

			if (!t || now_us() - t < FZ_HANG_MS * 1000LL)
				continue;
			fprintf(stderr,
				"# slot %d: sendto() has not returned for %d s: the kernel hangs in this message\n",
				i, FZ_HANG_MS / 1000);
			fprintf(stderr, "# seed %#" PRIx64 "\n", fz_seed_used);
			fz_hexdump("message", fz_watch[i].buf,
				   fz_watch[i].len);
			fflush(stderr);
			abort();
		}
	}
	return NULL;
}

static void fz_watch_start(void)
{
	atomic_store(&fz_watch_stop, false);
	fz_watch_running = !pthread_create(&fz_watch_thread, NULL,
					   fz_watchdog, NULL);
}

static void fz_watch_end(void)
{
	if (!fz_watch_running)
		return;
	atomic_store(&fz_watch_stop, true);
	pthread_join(fz_watch_thread, NULL);
	fz_watch_running = false;
}

static int fz_send(struct fz_worker *k, const void *buf, size_t len)
{
	struct fz_watch *wd = &fz_watch[k->slot];
	int ret;

	wd->buf = buf;
	wd->len = len;
	atomic_store(&wd->since, now_us());
	ret = nlraw_send_raw(k->nl->fd, buf, len);
	atomic_store(&wd->since, 0);
	return ret;
}

/*
 * Open a socket. With @family 0 the id is resolved (nlraw_open(): not
 * thread-safe, it shares a buffer: open before starting threads). With a
 * known @family the socket is fresh: it has never read into a big buffer,
 * so the kernel builds its dump parts no larger than NLMSG_GOODSIZE, then
 * the size of the reads (4 KiB in the dump tests): several parts.
 */
static int fz_open(struct fz_worker *k, int slot, int timeout_ms,
		   uint16_t family)
{
	int one = 1, ret;

	memset(k, 0, offsetof(struct fz_worker, m));
	k->slot = slot;
	k->timeout_ms = timeout_ms;
	k->nl = calloc(1, sizeof(*k->nl));
	k->rbuf = malloc(FZ_RBUF);
	if (!k->nl || !k->rbuf) {
		ret = -ENOMEM;
		goto err;
	}
	if (family) {
		k->nl->family = family;
		k->nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
				   NETLINK_GENERIC);
		ret = k->nl->fd < 0 ? -errno : 0;
		setsockopt(k->nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one,
			   sizeof(one));
	} else {
		ret = nlraw_open(k->nl, SACRED_GENL_NAME);
	}
	if (ret)
		goto err;
	/* Errors need not echo a 64 KiB request back. */
	setsockopt(k->nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
err:
	free(k->nl);
	free(k->rbuf);
	k->nl = NULL;
	k->rbuf = NULL;
	return ret;
}

static void fz_close(struct fz_worker *k)
{
	if (k->nl) {
		nlraw_close(k->nl);
		free(k->nl);
	}
	free(k->rbuf);
	k->nl = NULL;
	k->rbuf = NULL;
}

static int fz_bad(struct fz_ans *ans, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ans->why, sizeof(ans->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* The final message of an answer: NLMSG_ERROR or NLMSG_DONE. */
static int fz_final(struct fz_worker *k, struct nlmsghdr *h, int64_t t0)
{
	struct fz_ans *ans = &k->ans;
	int err;

	if (h->nlmsg_type == NLMSG_ERROR) {
		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
			return fz_bad(ans, "NLMSG_ERROR of %u bytes",
				      h->nlmsg_len);
		k->nl->errmsg[0] = 0;
		err = nlraw_parse_err(k->nl, h);
		ans->extack = k->nl->errmsg[0];
		snprintf(ans->errmsg, sizeof(ans->errmsg), "%s",
			 k->nl->errmsg);
	} else {
		err = 0;
		if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
			memcpy(&err, NLMSG_DATA(h), sizeof(err));
		if (h->nlmsg_flags & NLM_F_DUMP_INTR)
			ans->intr = true;
	}
	ans->err = err;
	ans->us = now_us() - t0;
	if (err > 0)
		return fz_bad(ans, "positive error %d", err);
	if (err && !fz_errno_clean(-err))
		return fz_bad(ans, "not a clean errno: %d (%s)", err,
			      strerror(-err));
	if (ans->us > k->timeout_ms * 1000LL)
		return fz_bad(ans, "answered after %" PRId64 " ms",
			      ans->us / 1000);
	return 0;
}

/*
 * What the kernel builds must parse: attributes tile the message exactly,
 * and nests (NLA_F_NESTED, which nla_nest_start() sets) tile theirs.
 */
static bool fz_attrs_ok(const char *p, const char *end, int depth)
{
	while (p < end) {
		const struct nlattr *a = (const void *)p;

		if (end - p < NLA_HDRLEN || a->nla_len < NLA_HDRLEN ||
		    a->nla_len > end - p)
			return false;
		if ((a->nla_type & NLA_F_NESTED) &&
		    (depth > 8 || !fz_attrs_ok(p + NLA_HDRLEN, p + a->nla_len,
					       depth + 1)))
			return false;
		p += NLA_ALIGN(a->nla_len);
	}
	return p == end;
}

static bool fz_msg_ok(const struct nlmsghdr *h)
{
	return h->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN) &&
	       fz_attrs_ok((const char *)NLMSG_DATA(h) + GENL_HDRLEN,
			   (const char *)h + h->nlmsg_len, 0);
}

typedef void (*fz_each_fn)(const struct nlmsghdr *nlh, void *arg);

/*
 * Send k->w, whose nlmsghdr is intact, and read its answer: family
 * messages (each passed to @each), then an NLMSG_ERROR or NLMSG_DONE,
 * all with its sequence number, the last within timeout_ms of the send.
 * Returns 0 if so and the errno is clean (in k->ans.err), else -1 with
 * k->ans.why set.
 */
static int fz_xfer(struct fz_worker *k, fz_each_fn each, void *arg)
{
	const struct nlmsghdr *req = (void *)k->w.buf;
	struct fz_ans *ans = &k->ans;
	uint32_t seq = req->nlmsg_seq;
	int64_t t0 = now_us();
	int ret;

	memset(ans, 0, sizeof(*ans));
	ret = fz_send(k, k->w.buf, k->w.len);
	if (ret)
		return fz_bad(ans, "send: %s", strerror(-ret));
	for (;;) {
		int64_t left = t0 + k->timeout_ms * 1000LL - now_us();
		struct nlmsghdr *h;
		ssize_t n;

		n = nlraw_recv_timeout(k->nl->fd, k->rbuf, FZ_RBUF,
				       left > 0 ? left / 1000 : 0);
		if (n == -ETIMEDOUT)
			return fz_bad(ans, "no answer within %d ms",
				      k->timeout_ms);
		if (n < 0)
			return fz_bad(ans, "recv: %s", strerror(-n));
		for (h = (void *)k->rbuf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				return fz_bad(ans,
					      "message of type %u with sequence %u, expected %u",
					      h->nlmsg_type, h->nlmsg_seq, seq);
			if (h->nlmsg_type == NLMSG_ERROR ||
			    h->nlmsg_type == NLMSG_DONE)
				return fz_final(k, h, t0);
			if (h->nlmsg_type != k->nl->family)
				return fz_bad(ans, "answer of type %u",
					      h->nlmsg_type);
			if (!fz_msg_ok(h)) {
				fz_hexdump("malformed reply", h,
					   h->nlmsg_len);
				return fz_bad(ans, "malformed reply");
			}
			ans->nmsg++;
			if (h->nlmsg_flags & NLM_F_DUMP_INTR)
				ans->intr = true;
			if (each)
				each(h, arg);
		}
		if (n > 0)
			return fz_bad(ans, "%zd stray bytes after the messages",
				      n);
	}
}

/* Serialise k->m with a new sequence number and transfer it. */
#define FZ_BROKEN	INT_MIN

static int fz_do(struct fz_worker *k, fz_each_fn each, void *arg)
{
	fz_serialize(&k->m, &k->w, ++k->nl->seq);
	if (fz_xfer(k, each, arg))
		return FZ_BROKEN;
	return k->ans.err;
}

/*
 * A message the kernel may not answer (bad nlmsghdr, no NLM_F_ACK, a
 * second message in the datagram, a foreign sequence number) is followed
 * by a probe that must be answered -ENODEV; everything that comes before
 * the probe's answer, and the rest of any dump it started, must be clean.
 */
static int fz_xfer_loose(struct fz_worker *k)
{
	struct fz_ans *ans = &k->ans;
	uint32_t open_seq[8], probe_seq;
	int nopen = 0, ret;
	bool probe_seen = false;
	int64_t t0;

	memset(ans, 0, sizeof(*ans));
	fz_init(&k->m, k->nl->family, SACRED_CMD_DEV_GET, 0);
	fz_u32(&k->m, -1, SACRED_ATTR_DEV_INDEX, FZ_PROBE_INDEX);
	probe_seq = ++k->nl->seq;
	fz_serialize(&k->m, &k->probe, probe_seq);

	t0 = now_us();
	ret = fz_send(k, k->w.buf, k->w.len);
	if (ret && !fz_errno_clean(-ret))
		return fz_bad(ans, "send: %s", strerror(-ret));
	ret = fz_send(k, k->probe.buf, k->probe.len);
	if (ret)
		return fz_bad(ans, "send of the probe: %s", strerror(-ret));

	while (!probe_seen || nopen) {
		struct nlmsghdr *h;
		ssize_t n;

		/* Each part of a dump has its own second. */
		n = nlraw_recv_timeout(k->nl->fd, k->rbuf, FZ_RBUF,
				       k->timeout_ms);
		if (n == -ETIMEDOUT)
			return fz_bad(ans, probe_seen ?
				      "a dump stopped without NLMSG_DONE" :
				      "no answer to the probe within %d ms",
				      k->timeout_ms);
		if (n < 0)
			return fz_bad(ans, "recv: %s", strerror(-n));
		for (h = (void *)k->rbuf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			int i;

			/* Each recv has its own deadline: no lateness here. */
			if (h->nlmsg_type == NLMSG_ERROR) {
				if (fz_final(k, h, now_us()))
					return -1;
				if (h->nlmsg_seq != probe_seq)
					continue;
				probe_seen = true;
				if (ans->err != -ENODEV)
					return fz_bad(ans,
						      "the probe was answered %d",
						      ans->err);
			} else if (h->nlmsg_type == NLMSG_DONE) {
				if (fz_final(k, h, now_us()))
					return -1;
				for (i = 0; i < nopen; i++)
					if (open_seq[i] == h->nlmsg_seq)
						open_seq[i] = open_seq[--nopen];
			} else if (h->nlmsg_type == k->nl->family ||
				   h->nlmsg_type == GENL_ID_CTRL) {
				if (!(h->nlmsg_flags & NLM_F_MULTI))
					continue;
				for (i = 0; i < nopen; i++)
					if (open_seq[i] == h->nlmsg_seq)
						break;
				if (i == nopen && nopen < 8)
					open_seq[nopen++] = h->nlmsg_seq;
			} else {
				return fz_bad(ans, "answer of type %u",
					      h->nlmsg_type);
			}
		}
		if (n > 0)
			return fz_bad(ans, "%zd stray bytes after the messages",
				      n);
	}
	ans->us = now_us() - t0;
	return 0;
}

/* ----------------------------------------------------- attribute access */

static bool fz_get(const struct nlmsghdr *h, uint16_t type, void *v,
		   size_t len)
{
	struct nlattr *a = nlraw_msg_attr(h, type);

	if (!a || a->nla_len < NLA_HDRLEN + len)
		return false;
	memcpy(v, (char *)a + NLA_HDRLEN, len);
	return true;
}

struct fz_rec {
	uint32_t mem, id;	/* id: region id, or the instance's again */
	uint64_t val;		/* cap, or region size */
	uint16_t port;
	uint8_t state, keyed, policy;
	uint16_t flags;		/* nlmsg_flags of the message */
};

struct fz_list {
	int n;
	bool overflow;
	struct fz_rec r[FZ_LIST_MAX];
};

static void fz_collect(const struct nlmsghdr *h, void *arg)
{
	struct fz_list *l = arg;
	struct fz_rec *r;

	if (l->n >= FZ_LIST_MAX) {
		l->overflow = true;
		return;
	}
	r = &l->r[l->n++];
	memset(r, 0, sizeof(*r));
	r->flags = h->nlmsg_flags;
	fz_get(h, SACRED_ATTR_MEM_ID, &r->mem, 4);
	r->id = r->mem;
	if (fz_get(h, SACRED_ATTR_REGION_ID, &r->id, 4)) {
		fz_get(h, SACRED_ATTR_REGION_SIZE, &r->val, 8);
		fz_get(h, SACRED_ATTR_REGION_POLICY, &r->policy, 1);
	} else {
		fz_get(h, SACRED_ATTR_MEM_MEM_CAP, &r->val, 8);
	}
	fz_get(h, SACRED_ATTR_MEM_PORT, &r->port, 2);
	fz_get(h, SACRED_ATTR_MEM_STATE, &r->state, 1);
	fz_get(h, SACRED_ATTR_MEM_KEYED, &r->keyed, 1);
}

static void fz_dev_index(const struct nlmsghdr *h, void *arg)
{
	fz_get(h, SACRED_ATTR_DEV_INDEX, arg, 4);
}

/*
 * A listener on the "events" group: with one, the family builds an event
 * for every change (sacred_nl_notify_*()), ACLs included; each must be a
 * well-formed message of a command that announces something.
 */
struct fz_events {
	struct nlraw *nl;
	char *buf;
	long n, overruns;
};

static void fz_events_close(struct fz_events *e)
{
	if (!e)
		return;
	if (e->nl) {
		nlraw_close(e->nl);
		free(e->nl);
	}
	free(e->buf);
	free(e);
}

static struct fz_events *fz_events_open(void)
{
	struct fz_events *e = calloc(1, sizeof(*e));
	int big = 16 << 20;

	if (!e)
		return NULL;
	e->nl = calloc(1, sizeof(*e->nl));
	e->buf = malloc(FZ_RBUF);
	if (!e->nl || !e->buf || nlraw_open(e->nl, SACRED_GENL_NAME) ||
	    nlraw_join_group(e->nl, SACRED_GENL_NAME,
			     SACRED_GENL_MCGRP_EVENTS)) {
		fz_events_close(e);
		return NULL;
	}
	/* Best effort all the same: an overrun is counted, not failed. */
	if (setsockopt(e->nl->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big,
		       sizeof(big)))
		setsockopt(e->nl->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	return e;
}

/* Read every queued event; 0, or -1 (with why) for a bad one. */
static int fz_events_drain(struct fz_events *e, uint16_t family,
			   char *why, size_t len)
{
	for (;;) {
		struct nlmsghdr *h;
		ssize_t n;

		n = nlraw_recv_timeout(e->nl->fd, e->buf, FZ_RBUF, 0);
		if (n == -ETIMEDOUT)
			return 0;
		if (n == -ENOBUFS) {
			e->overruns++;
			continue;
		}
		if (n < 0) {
			snprintf(why, len, "events: %s", strerror(-n));
			return -1;
		}
		for (h = (void *)e->buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			const struct genlmsghdr *g = NLMSG_DATA(h);
			uint32_t id;

			e->n++;
			if (h->nlmsg_type != family || !fz_msg_ok(h) ||
			    !fz_get(h, SACRED_ATTR_MEM_ID, &id, 4)) {
				snprintf(why, len, "malformed event");
				fz_hexdump("event", h, h->nlmsg_len);
				return -1;
			}
			switch (g->cmd) {
			case SACRED_CMD_MEM_NEW:
			case SACRED_CMD_MEM_DEL:
			case SACRED_CMD_MEM_SET:
				break;
			case SACRED_CMD_REGION_NEW:
			case SACRED_CMD_REGION_DEL:
			case SACRED_CMD_REGION_SET:
			case SACRED_CMD_PERM_SET:
				if (!fz_get(h, SACRED_ATTR_REGION_ID, &id, 4))
					g = NULL;
				break;
			default:
				g = NULL;
			}
			if (!g) {
				snprintf(why, len, "event without a region id, or of an unknown command");
				fz_hexdump("event", h, h->nlmsg_len);
				return -1;
			}
		}
	}
}

/* ------------------------------------------------------------- context */

struct fz_dev {
	char name[64];
	char addr_str[64];
	struct in_addr addr;
	uint32_t index;
};

struct fz_base {
	uint32_t id;
	int dev;
	uint16_t port;
};

struct fz_ctx {
	struct fz_worker main;
	uint64_t seed;
	long count;
	int timeout_ms;
	int ndev;
	struct fz_dev dev[FZ_MAX_DEVS];
	int nbase;
	struct fz_base base[FZ_MAX_DEVS];
	int npre;
	uint32_t pre[FZ_LIST_MAX];
	struct fz_list list;	/* scratch for dumps */
	bool ready;		/* setup completed (a SKIP still runs tests) */
	struct fz_events *ev;	/* listener on the events group, or NULL */
	struct sacred_conn *peer[FZ_PEERS];
	long peer_connects, peer_fails;
};

static bool fz_is_pre(const struct fz_ctx *c, uint32_t id)
{
	int i;

	for (i = 0; i < c->npre; i++)
		if (c->pre[i] == id)
			return true;
	return false;
}

static int fz_base_idx(const struct fz_ctx *c, uint32_t id)
{
	int i;

	for (i = 0; i < c->nbase; i++)
		if (c->base[i].id == id)
			return i;
	return -1;
}

static void fz_log_fail(struct fz_worker *k, const char *what)
{
	fprintf(stderr, "# FAIL %s (seed %#" PRIx64 "): %s\n", what,
		fz_seed_used, k->ans.why);
	if (k->ans.errmsg[0])
		fprintf(stderr, "#   extack: %s\n", k->ans.errmsg);
	fz_hexdump("message", k->w.buf, k->w.len);
}

/* A well-formed request the fuzzer needs to succeed (setup, cleanup). */
static int fz_must(struct fz_worker *k, const char *what, fz_each_fn each,
		   void *arg)
{
	int ret = fz_do(k, each, arg);

	if (ret == FZ_BROKEN)
		fz_log_fail(k, what);
	return ret;
}

static int fz_dump(struct fz_worker *k, uint8_t cmd, uint32_t mem_id,
		   struct fz_list *l)
{
	l->n = 0;
	l->overflow = false;
	fz_init(&k->m, k->nl->family, cmd, NLM_F_DUMP);
	if (mem_id != UINT32_MAX)
		fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem_id);
	return fz_must(k, "dump", fz_collect, l);
}

static void fz_mem_new_msg(struct fz_worker *k, const struct fz_ctx *c,
			   uint32_t id, int dev, uint64_t cap)
{
	fz_init(&k->m, k->nl->family, SACRED_CMD_MEM_NEW, 0);
	fz_str(&k->m, -1, SACRED_ATTR_DEV_NAME, c->dev[dev].name);
	fz_u16(&k->m, -1, SACRED_ATTR_MEM_PORT, 0);
	fz_add(&k->m, -1, SACRED_ATTR_MEM_ADDR, &c->dev[dev].addr, 4);
	if (id != UINT32_MAX)
		fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, id);
	fz_u64(&k->m, -1, SACRED_ATTR_MEM_MEM_CAP, cap);
}

static int fz_mem_del(struct fz_worker *k, uint32_t id)
{
	fz_init(&k->m, k->nl->family, SACRED_CMD_MEM_DEL, 0);
	fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, id);
	return fz_must(k, "MEM_DEL", NULL, NULL);
}

static void fz_region_new_msg(struct fz_worker *k, uint32_t mem,
			      uint32_t id, uint64_t size, uint8_t policy)
{
	fz_init(&k->m, k->nl->family, SACRED_CMD_REGION_NEW, 0);
	fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem);
	if (id != UINT32_MAX)
		fz_u32(&k->m, -1, SACRED_ATTR_REGION_ID, id);
	fz_u64(&k->m, -1, SACRED_ATTR_REGION_SIZE, size);
	fz_u8(&k->m, -1, SACRED_ATTR_REGION_POLICY, policy);
}

static int fz_region_del(struct fz_worker *k, uint32_t mem, uint32_t id)
{
	fz_init(&k->m, k->nl->family, SACRED_CMD_REGION_DEL, 0);
	fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem);
	fz_u32(&k->m, -1, SACRED_ATTR_REGION_ID, id);
	return fz_must(k, "REGION_DEL", NULL, NULL);
}

/* 1: read/write, 2 and 3: read, 4: nothing (one writer: swmr allows it). */
static void fz_base_acl(struct fz_msg *m)
{
	static const uint32_t acc[] = {
		SACRED_ACCESS_READ | SACRED_ACCESS_WRITE, SACRED_ACCESS_READ,
		SACRED_ACCESS_READ, 0,
	};
	int acl = fz_nest(m, -1, SACRED_ATTR_REGION_ACL), i;

	for (i = 0; i < 4; i++) {
		int e = fz_nest(m, acl, SACRED_ATTR_ACL_ENTRY);

		fz_u32(m, e, SACRED_ATTR_PROCESS_ID, i + 1);
		fz_u32(m, e, SACRED_ATTR_ACCESS, acc[i]);
	}
}

/*
 * Bring the objects back to the base set: one instance per device with
 * FZ_NREG regions (id == policy), up, unkeyed, with the base cap; nothing
 * else but what was there before the test. Run after anything that may
 * have changed them, and now and then to check that nothing drifted.
 */
static int fz_resync(struct fz_ctx *c)
{
	struct fz_worker *k = &c->main;
	struct fz_list *l = &c->list;
	bool present[FZ_MAX_DEVS] = {};
	int i, b, ret;

	k->st.resyncs++;
	if (fz_dump(k, SACRED_CMD_MEM_GET, UINT32_MAX, l))
		return -1;
	for (i = 0; i < l->n; i++) {
		struct fz_rec *r = &l->r[i];

		if (fz_is_pre(c, r->mem))
			continue;
		b = fz_base_idx(c, r->mem);
		if (b < 0) {
			ret = fz_mem_del(k, r->mem);
			if (ret && ret != -ENOENT)
				return -1;
			continue;
		}
		present[b] = true;
		c->base[b].port = r->port;
		if (r->state == SACRED_MEM_UP && r->val == FZ_BASE_CAP &&
		    !r->keyed)
			continue;
		fz_init(&k->m, k->nl->family, SACRED_CMD_MEM_SET, 0);
		fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, r->mem);
		fz_u8(&k->m, -1, SACRED_ATTR_MEM_STATE, SACRED_MEM_UP);
		fz_u64(&k->m, -1, SACRED_ATTR_MEM_MEM_CAP, FZ_BASE_CAP);
		fz_add(&k->m, -1, SACRED_ATTR_MEM_KEY, NULL, 0);
		ret = fz_must(k, "MEM_SET (restore)", NULL, NULL);
		if (ret == FZ_BROKEN)
			return -1;
		/* Its port may have been taken while it was down. */
		if (ret) {
			if (fz_mem_del(k, r->mem))
				return -1;
			present[b] = false;
		}
	}
	for (b = 0; b < c->nbase; b++) {
		struct fz_list one;

		if (present[b])
			continue;
		fz_mem_new_msg(k, c, c->base[b].id, c->base[b].dev,
			       FZ_BASE_CAP);
		one.n = 0;
		ret = fz_must(k, "MEM_NEW (base)", fz_collect, &one);
		if (ret) {
			if (ret != FZ_BROKEN)
				fprintf(stderr,
					"# base instance %u on %s: %d (%s)\n",
					c->base[b].id,
					c->dev[c->base[b].dev].name, ret,
					k->ans.errmsg);
			return -1;
		}
		if (one.n)
			c->base[b].port = one.r[0].port;
	}

	if (fz_dump(k, SACRED_CMD_REGION_GET, UINT32_MAX, l))
		return -1;
	for (b = 0; b < c->nbase; b++) {
		bool have[FZ_NREG] = {};
		uint32_t id;

		for (i = 0; i < l->n; i++) {
			struct fz_rec *r = &l->r[i];

			if (r->mem != c->base[b].id)
				continue;
			if (r->id < FZ_NREG && r->policy == r->id &&
			    r->val == FZ_REG_SIZE(r->id)) {
				have[r->id] = true;
				continue;
			}
			ret = fz_region_del(k, r->mem, r->id);
			if (ret && ret != -ENOENT)
				return -1;
		}
		for (id = 0; id < FZ_NREG; id++) {
			if (have[id])
				continue;
			fz_region_new_msg(k, c->base[b].id, id,
					  FZ_REG_SIZE(id), id);
			if (fz_must(k, "REGION_NEW (base)", NULL, NULL))
				return -1;
			/* Members, so that PERM_SET gets past "not one". */
			fz_init(&k->m, k->nl->family, SACRED_CMD_REGION_SET, 0);
			fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, c->base[b].id);
			fz_u32(&k->m, -1, SACRED_ATTR_REGION_ID, id);
			fz_base_acl(&k->m);
			if (fz_must(k, "REGION_SET (base)", NULL, NULL))
				return -1;
		}
	}
	return 0;
}

/*
 * Processes 1 and 2 connected to base instance 0 (rxe0 reaches itself),
 * attached to its regions: so that fuzzed REGION_SET, PERM_SET, MEM_SET
 * and MEM_DEL meet live grants, MRs and connections to fence, and
 * PEER_GET has peers to dump. Broken connections (fenced, instance gone)
 * are made again; a failure to connect is counted, not failed: a fuzzed
 * MEM_SET may have just keyed the instance.
 */
static void fz_peers_tend(struct fz_ctx *c)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int p;

	sin.sin_addr = c->dev[c->base[0].dev].addr;
	sin.sin_port = htons(c->base[0].port);
	for (p = 0; p < FZ_PEERS; p++) {
		struct sacred_conn_attr attr = {
			.addr = (struct sockaddr *)&sin,
			.process_id = p + 1,
			.timeout_ms = 1000,
			.bounce_size = 64 << 10,
		};
		struct sacred_region_attr ra;
		uint64_t v = p;
		uint32_t r;

		if (c->peer[p] && (sacred_conn_broken(c->peer[p]) ||
				   sacred_conn_mem_id(c->peer[p]) !=
				   c->base[0].id)) {
			sacred_conn_destroy(c->peer[p]);
			c->peer[p] = NULL;
		}
		if (!c->peer[p]) {
			if (sacred_conn_create(&attr, &c->peer[p])) {
				c->peer[p] = NULL;
				c->peer_fails++;
				continue;
			}
			c->peer_connects++;
		}
		for (r = 0; r < FZ_NREG; r++)
			if (!sacred_attach(c->peer[p], r, &ra) &&
			    (ra.access & SACRED_ACCESS_WRITE))
				sacred_write(c->peer[p], r, 0, &v, sizeof(v));
	}
}

static void fz_peers_close(struct fz_ctx *c)
{
	int p;

	for (p = 0; p < FZ_PEERS; p++) {
		sacred_conn_destroy(c->peer[p]);
		c->peer[p] = NULL;
	}
}

/* Delete every instance the tests made; 0 if none is left. */
static int fz_cleanup(struct fz_ctx *c)
{
	struct fz_worker *k = &c->main;
	struct fz_list *l = &c->list;
	int i, left = 0;

	if (fz_dump(k, SACRED_CMD_MEM_GET, UINT32_MAX, l))
		return -1;
	for (i = 0; i < l->n; i++) {
		if (fz_is_pre(c, l->r[i].mem))
			continue;
		if (fz_mem_del(k, l->r[i].mem) == FZ_BROKEN)
			return -1;
	}
	if (fz_dump(k, SACRED_CMD_MEM_GET, UINT32_MAX, l))
		return -1;
	for (i = 0; i < l->n; i++) {
		if (fz_is_pre(c, l->r[i].mem))
			continue;
		fprintf(stderr, "# instance %u is still there\n",
			l->r[i].mem);
		left++;
	}
	return left ? -1 : 0;
}

/* ---------------------------------------------------- valid messages */

static uint32_t fz_any_mem(struct fz_worker *k, const struct fz_ctx *c)
{
	uint32_t r = rnd(&k->rng, 100);

	if (r < 85)
		return c->base[rnd(&k->rng, c->nbase)].id;
	if (r < 93)
		return rnd(&k->rng, 8);
	return (uint32_t)rnd64(&k->rng);
}

static uint32_t fz_any_region(struct fz_worker *k)
{
	uint32_t r = rnd(&k->rng, 100);

	if (r < 85)
		return rnd(&k->rng, FZ_NREG);
	if (r < 93)
		return FZ_NREG + rnd(&k->rng, 4);
	return (uint32_t)rnd64(&k->rng);
}

static uint32_t fz_any_access(struct fz_worker *k)
{
	static const uint32_t acc[] = {
		0, SACRED_ACCESS_READ, SACRED_ACCESS_READ | SACRED_ACCESS_WRITE,
		SACRED_ACCESS_ALL,
	};

	return acc[rnd(&k->rng, 4)];
}

/* An ACL of @n entries, distinct processes, at most one writer. */
static void fz_acl(struct fz_worker *k, int parent, int n)
{
	uint32_t pid = 1 + rnd(&k->rng, 4);
	bool writer = false;
	int acl, i;

	acl = fz_nest(&k->m, parent, SACRED_ATTR_REGION_ACL);
	for (i = 0; i < n; i++) {
		uint32_t access = fz_any_access(k);
		int e;

		if (access & SACRED_ACCESS_WRITE) {
			if (writer)
				access = SACRED_ACCESS_READ;
			writer = true;
		}
		e = fz_nest(&k->m, acl, SACRED_ATTR_ACL_ENTRY);
		fz_u32(&k->m, e, SACRED_ATTR_PROCESS_ID, pid);
		fz_u32(&k->m, e, SACRED_ATTR_ACCESS, access);
		pid += 1 + rnd(&k->rng, 3);
	}
}

static void fz_key(struct fz_worker *k, int len)
{
	uint8_t key[SACRED_KEY_MAX];

	rnd_bytes(&k->rng, key, len);
	fz_add(&k->m, -1, SACRED_ATTR_MEM_KEY, key, len);
}

/*
 * A well-formed address that is no device's, or not plainly one: any,
 * loopback, broadcast, multicast, IPv4-mapped IPv6, ::, ::1, link-local
 * without a scope. rdma_cm decides; the answer must be clean.
 */
static void fz_odd_addr(struct fz_worker *k, const struct in_addr *dev)
{
	static const char *const v4[] = {
		"0.0.0.0", "127.0.0.1", "255.255.255.255", "224.0.0.1",
		"192.0.2.255", "192.0.2.200",
	};
	static const char *const v6[] = {
		"::", "::1", "fe80::1", "ff02::1", "2001:db8::1",
	};
	struct in6_addr a6;
	struct in_addr a4;

	k->odd = true;
	switch (rnd(&k->rng, 3)) {
	case 0:
		inet_pton(AF_INET, v4[rnd(&k->rng, ARRAY_SIZE(v4))], &a4);
		fz_add(&k->m, -1, SACRED_ATTR_MEM_ADDR, &a4, 4);
		break;
	case 1:
		inet_pton(AF_INET6, v6[rnd(&k->rng, ARRAY_SIZE(v6))], &a6);
		fz_add(&k->m, -1, SACRED_ATTR_MEM_ADDR, &a6, 16);
		break;
	default:	/* ::ffff:192.0.2.x, the device's own */
		memset(&a6, 0, sizeof(a6));
		a6.s6_addr[10] = 0xff;
		a6.s6_addr[11] = 0xff;
		memcpy(&a6.s6_addr[12], dev, 4);
		fz_add(&k->m, -1, SACRED_ATTR_MEM_ADDR, &a6, 16);
	}
}

/* Build a valid message (for the objects as they should be) into k->m. */
static void fz_valid(struct fz_worker *k, const struct fz_ctx *c)
{
	static const struct {
		uint8_t cmd, weight;
	} w[] = {
		{ SACRED_CMD_DEV_GET, 7 },	{ SACRED_CMD_MEM_NEW, 9 },
		{ SACRED_CMD_MEM_DEL, 5 },	{ SACRED_CMD_MEM_GET, 7 },
		{ SACRED_CMD_MEM_SET, 8 },	{ SACRED_CMD_REGION_NEW, 10 },
		{ SACRED_CMD_REGION_DEL, 6 },	{ SACRED_CMD_REGION_GET, 8 },
		{ SACRED_CMD_REGION_SET, 12 },	{ SACRED_CMD_PEER_GET, 5 },
		{ SACRED_CMD_PERM_SET, 12 },	{ FZ_UNKNOWN_CMD, 4 },
	};
	struct fz_rng *r = &k->rng;
	struct fz_msg *m = &k->m;
	uint32_t pick, total = 0, i;
	int dev = rnd(r, c->ndev);
	uint8_t cmd = 0;

	k->odd = false;
	for (i = 0; i < ARRAY_SIZE(w); i++)
		total += w[i].weight;
	pick = rnd(r, total);
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		if (pick < w[i].weight) {
			cmd = w[i].cmd;
			break;
		}
		pick -= w[i].weight;
	}

	switch (cmd) {
	case SACRED_CMD_DEV_GET:
		if (chance(r, 40)) {
			fz_init(m, k->nl->family, cmd, NLM_F_DUMP);
			break;
		}
		fz_init(m, k->nl->family, cmd, 0);
		pick = rnd(r, 3);	/* name, index or both */
		if (pick != 1)
			fz_str(m, -1, SACRED_ATTR_DEV_NAME,
			       chance(r, 90) ? c->dev[dev].name : "nosuchdev0");
		if (pick)
			fz_u32(m, -1, SACRED_ATTR_DEV_INDEX,
			       chance(r, 90) ? c->dev[dev].index :
					       (uint32_t)rnd64(r));
		break;
	case SACRED_CMD_MEM_NEW: {
		uint32_t a = rnd(r, 100);

		fz_init(m, k->nl->family, cmd, 0);
		fz_str(m, -1, SACRED_ATTR_DEV_NAME, c->dev[dev].name);
		if (a < 70)
			fz_u16(m, -1, SACRED_ATTR_MEM_PORT, 0);
		else if (a < 85)
			fz_u16(m, -1, SACRED_ATTR_MEM_PORT,
			       c->base[rnd(r, c->nbase)].port);
		else
			fz_u16(m, -1, SACRED_ATTR_MEM_PORT,
			       7000 + rnd(r, 1000));
		if (chance(r, 50))
			fz_u32(m, -1, SACRED_ATTR_PORT_INDEX, 1);
		a = rnd(r, 100);
		if (a < 70)
			fz_add(m, -1, SACRED_ATTR_MEM_ADDR, &c->dev[dev].addr,
			       4);
		else if (a < 80)
			fz_add(m, -1, SACRED_ATTR_MEM_ADDR,
			       &c->dev[rnd(r, c->ndev)].addr, 4);
		else if (a < 90)
			fz_odd_addr(k, &c->dev[dev].addr);
		if (chance(r, 50))
			fz_u32(m, -1, SACRED_ATTR_MEM_ID, chance(r, 50) ?
			       fz_any_mem(k, c) : 100 + rnd(r, 100));
		if (chance(r, 60))
			fz_u64(m, -1, SACRED_ATTR_MEM_MEM_CAP, 1 << 20);
		if (chance(r, 30))
			fz_key(k, SACRED_KEY_MIN +
				  rnd(r, SACRED_KEY_MAX - SACRED_KEY_MIN + 1));
		break;
	}
	case SACRED_CMD_MEM_DEL:
		fz_init(m, k->nl->family, cmd, 0);
		fz_u32(m, -1, SACRED_ATTR_MEM_ID, chance(r, 30) ?
		       fz_any_mem(k, c) : 0x7fff0000 + rnd(r, 0x10000));
		break;
	case SACRED_CMD_MEM_GET:
		if (chance(r, 40)) {
			fz_init(m, k->nl->family, cmd, NLM_F_DUMP);
			break;
		}
		fz_init(m, k->nl->family, cmd, 0);
		fz_u32(m, -1, SACRED_ATTR_MEM_ID, fz_any_mem(k, c));
		break;
	case SACRED_CMD_MEM_SET: {
		uint32_t what = 1 + rnd(r, 7);

		fz_init(m, k->nl->family, cmd, 0);
		fz_u32(m, -1, SACRED_ATTR_MEM_ID, fz_any_mem(k, c));
		if (what & 1)
			fz_u8(m, -1, SACRED_ATTR_MEM_STATE, chance(r, 50) ?
			      SACRED_MEM_UP : SACRED_MEM_DOWN);
		if (what & 2)
			fz_u64(m, -1, SACRED_ATTR_MEM_MEM_CAP, chance(r, 70) ?
			       FZ_BASE_CAP : 4096);
		if (what & 4) {
			if (chance(r, 30))
				fz_add(m, -1, SACRED_ATTR_MEM_KEY, NULL, 0);
			else
				fz_key(k, SACRED_KEY_MIN);
		}
		break;
	}
	case SACRED_CMD_REGION_NEW:
		fz_init(m, k->nl->family, cmd, 0);
		fz_u32(m, -1, SACRED_ATTR_MEM_ID, fz_any_mem(k, c));
		if (chance(r, 30))
			fz_u32(m, -1, SACRED_ATTR_REGION_ID, fz_any_region(k));
		fz_u64(m, -1, SACRED_ATTR_REGION_SIZE,
		       4096ULL * (1 + rnd(r, 8)));
		if (chance(r, 70))
			fz_u8(m, -1, SACRED_ATTR_REGION_POLICY,
			      rnd(r, FZ_POLICIES));
		break;
	case SACRED_CMD_REGION_DEL:
		fz_init(m, k->nl->family, cmd, 0);
		fz_u32(m, -1, SACRED_ATTR_MEM_ID, fz_any_mem(k, c));
		fz_u32(m, -1, SACRED_ATTR_REGION_ID, chance(r, 30) ?
		       fz_any_region(k) : 100 + rnd(r, 100));
		break;
	case SACRED_CMD_REGION_GET:
		if (chance(r, 40)) {
			fz_init(m, k->nl->family, cmd, NLM_F_DUMP);
			if (chance(r, 50))
				fz_u32(m, -1, SACRED_ATTR_MEM_ID,
				       fz_any_mem(k, c));
			break;
		}
		fz_init(m, k->nl->family, cmd, 0);
		fz_u32(m, -1, SACRED_ATTR_MEM_ID, fz_any_mem(k, c));
		fz_u32(m, -1, SACRED_ATTR_REGION_ID, fz_any_region(k));
		break;
	case SACRED_CMD_REGION_SET:
		fz_init(m, k->nl->family, cmd, 0);
		fz_u32(m, -1, SACRED_ATTR_MEM_ID, fz_any_mem(k, c));
		fz_u32(m, -1, SACRED_ATTR_REGION_ID, fz_any_region(k));
		fz_acl(k, -1, rnd(r, 5));
		break;
	case SACRED_CMD_PEER_GET:
		fz_init(m, k->nl->family, cmd, chance(r, 90) ? NLM_F_DUMP : 0);
		if (chance(r, 50))
			fz_u32(m, -1, SACRED_ATTR_MEM_ID, fz_any_mem(k, c));
		break;
	case SACRED_CMD_PERM_SET:
		fz_init(m, k->nl->family, cmd, 0);
		fz_u32(m, -1, SACRED_ATTR_MEM_ID, fz_any_mem(k, c));
		fz_u32(m, -1, SACRED_ATTR_REGION_ID, fz_any_region(k));
		fz_u32(m, -1, SACRED_ATTR_PROCESS_ID, 1 + rnd(r, 8));
		fz_u32(m, -1, SACRED_ATTR_ACCESS, fz_any_access(k));
		if (chance(r, 50)) {
			uint64_t b = rnd(r, 1000);

			fz_u64(m, -1, SACRED_ATTR_BALLOT, b);
			k->odd |= b != 0;	/* fenced regions only */
		}
		if (chance(r, 30)) {
			fz_u32(m, -1, SACRED_ATTR_TARGET, 1 + rnd(r, 8));
			k->odd = true;		/* revoke-only regions only */
		}
		break;
	default: {
		int n = rnd(r, 4);

		/* 0 and every number past the last command. */
		cmd = chance(r, 20) ? 0 : SACRED_CMD_MAX + 1 +
					  rnd(r, 255 - SACRED_CMD_MAX);
		fz_init(m, k->nl->family, cmd, chance(r, 30) ? NLM_F_DUMP : 0);
		while (n--)
			fz_u32(m, -1, 1 + rnd(r, SACRED_ATTR_MAX),
			       (uint32_t)rnd64(r));
		break;
	}
	}
}

/* ----------------------------------------------------------- mutations */

enum {
	FZ_M_DROP, FZ_M_DUP, FZ_M_MANY, FZ_M_RETYPE, FZ_M_SWAP, FZ_M_RESIZE,
	FZ_M_VALUE, FZ_M_WRAP, FZ_M_FLATTEN, FZ_M_NESTIFY, FZ_M_DEEP,
	FZ_M_NLAFLAG, FZ_M_UNKNOWN, FZ_M_RANDOM, FZ_M_FLAGS, FZ_M_GENL,
	FZ_M_NR,
	/* on the bytes */
	FZ_B_FLIP = FZ_M_NR, FZ_B_SET, FZ_B_TRUNC, FZ_B_EXTEND, FZ_B_NLALEN,
	FZ_B_END,
	/* on the nlmsghdr: the answer may not come */
	FZ_L_SHORT = FZ_B_END, FZ_L_LEN, FZ_L_SPLIT, FZ_L_FLAGS, FZ_L_TYPE,
	FZ_L_SEQ, FZ_L_END,
};

static const char *const fz_mut_name[] = {
	"drop", "dup", "many", "retype", "swap", "resize", "value", "wrap",
	"flatten", "nestify", "deep", "nlaflag", "unknown", "random",
	"flags", "genlhdr",
	"flip", "set", "trunc", "extend", "nlalen",
	"short-hdr", "len-lie", "split", "hdr-flags", "type", "seq",
};

static bool fz_alive(const struct fz_msg *m, int i)
{
	for (; i >= 0; i = m->a[i].parent)
		if (m->a[i].dead)
			return false;
	return true;
}

/* A random live attribute: any (0), leaves (1) or nests (2); or -1. */
static int fz_pick(struct fz_msg *m, struct fz_rng *r, int kind)
{
	int idx[FZ_MAX_ATTRS], n = 0, i;

	for (i = 0; i < m->n; i++) {
		if (!fz_alive(m, i))
			continue;
		if ((kind == 1 && m->a[i].nest) || (kind == 2 && !m->a[i].nest))
			continue;
		idx[n++] = i;
	}
	return n ? idx[rnd(r, n)] : -1;
}

static int fz_copy(struct fz_msg *m, int src, int parent)
{
	int n0 = m->n, i, dst;

	if (m->n >= FZ_MAX_ATTRS)
		return -1;
	dst = m->n++;
	m->a[dst] = m->a[src];
	m->a[dst].parent = parent;
	for (i = 0; i < n0; i++)
		if (m->a[i].parent == src && !m->a[i].dead &&
		    fz_copy(m, i, dst) < 0)
			break;
	return dst;
}

static uint16_t fz_any_type(struct fz_rng *r)
{
	uint32_t p = rnd(r, 100);

	if (p < 55)
		return 1 + rnd(r, SACRED_ATTR_MAX);
	if (p < 70)
		return SACRED_ATTR_UNSPEC;
	if (p < 85)
		return SACRED_ATTR_MAX + 1 + rnd(r, 8);
	return rnd(r, 0x10000);
}

static void fz_set_value(struct fz_rng *r, struct fz_attr *a)
{
	static const uint64_t v8[] = {
		0, 1, 4095, 4096, 4097, ~0ULL, ~0ULL - 1, 1ULL << 63,
		SACRED_REGION_SIZE_MAX, SACRED_REGION_SIZE_MAX + 4096,
		FZ_BASE_CAP, FZ_BASE_CAP + 4096, 1ULL << 32,
	};
	static const uint32_t v4[] = {
		0, 1, 2, 3, 4, 5, 7, 8, 0xff, 0x100, 1023, 1024, 1025, 65535,
		0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
	};
	static const uint16_t v2[] = { 0, 1, 0xff, 0x100, 0x7fff, 0x8000, 0xffff };
	static const uint8_t v1[] = { 0, 1, 2, 3, 4, 5, 6, 0x7f, 0x80, 0xff };
	uint64_t v = rnd64(r);

	a->nest = 0;
	switch (a->len) {
	case 1:
		if (chance(r, 80))
			v = v1[rnd(r, ARRAY_SIZE(v1))];
		break;
	case 2:
		if (chance(r, 80))
			v = v2[rnd(r, ARRAY_SIZE(v2))];
		break;
	case 4:
		if (chance(r, 80))
			v = v4[rnd(r, ARRAY_SIZE(v4))];
		break;
	case 8:
		if (chance(r, 80))
			v = v8[rnd(r, ARRAY_SIZE(v8))];
		break;
	default: {
		size_t n = a->len < FZ_LEAF_MAX ? a->len : FZ_LEAF_MAX;

		switch (rnd(r, 4)) {
		case 0:
			memset(a->data, 0, n);
			break;
		case 1:
			memset(a->data, 0xff, n);
			break;
		case 2:		/* printable, no NUL */
			memset(a->data, 'a' + rnd(r, 26), n);
			break;
		default:
			rnd_bytes(r, a->data, n);
		}
		a->fill = a->data[0];
		a->nul = chance(r, 30);
		return;
	}
	}
	memcpy(a->data, &v, a->len);
}

/* One structural mutation of m; returns its id (for the log) or -1. */
static int fz_mutate(struct fz_msg *m, struct fz_rng *r)
{
	int op = rnd(r, FZ_M_NR), i, j, d;
	struct fz_attr *a;

	switch (op) {
	case FZ_M_DROP:
		i = fz_pick(m, r, 0);
		if (i < 0)
			return -1;
		m->a[i].dead = 1;
		break;
	case FZ_M_DUP:
		i = fz_pick(m, r, 0);
		if (i < 0 || fz_copy(m, i, m->a[i].parent) < 0)
			return -1;
		break;
	case FZ_M_MANY: {
		static const uint16_t reps[] = {
			2, 3, 17, 255, 1023, 1024, 1025, 1500,
		};

		i = fz_pick(m, r, 0);
		if (i < 0)
			return -1;
		m->a[i].rep = reps[rnd(r, ARRAY_SIZE(reps))];
		/* Distinct process ids: a long ACL that is valid. */
		for (j = 0; j < m->n; j++)
			if ((m->a[j].type & NLA_TYPE_MASK) ==
			    SACRED_ATTR_PROCESS_ID && !m->a[j].nest &&
			    m->a[j].len == 4 && chance(r, 70))
				m->a[j].inc = 1;
		break;
	}
	case FZ_M_RETYPE:
		i = fz_pick(m, r, 0);
		if (i < 0)
			return -1;
		a = &m->a[i];
		if (chance(r, 70))
			a->type = (a->type & ~NLA_TYPE_MASK) |
				  (fz_any_type(r) & NLA_TYPE_MASK);
		else
			a->type = fz_any_type(r);
		break;
	case FZ_M_SWAP: {
		uint16_t t;

		i = fz_pick(m, r, 0);
		j = fz_pick(m, r, 0);
		if (i < 0 || i == j)
			return -1;
		t = m->a[i].type;
		m->a[i].type = m->a[j].type;
		m->a[j].type = t;
		break;
	}
	case FZ_M_RESIZE: {
		size_t len, old, have, want;

		i = fz_pick(m, r, 1);
		if (i < 0)
			return -1;
		a = &m->a[i];
		old = a->len;
		switch (rnd(r, 8)) {
		case 0:
			len = 0;
			break;
		case 1:
			len = old ? old - 1 : 1;
			break;
		case 2:
			len = old / 2;
			break;
		case 3:
			len = old + 1;
			break;
		case 4:
			len = old + 1 + rnd(r, 16);
			break;
		case 5:
			len = rnd(r, FZ_LEAF_MAX);
			break;
		case 6:
			len = 256 + rnd(r, 4096);
			break;
		default:	/* huge: up to what nla_len can say */
			len = chance(r, 50) ? 0xffff - NLA_HDRLEN :
					      8192 + rnd(r, 56000);
		}
		have = old < FZ_LEAF_MAX ? old : FZ_LEAF_MAX;
		want = len < FZ_LEAF_MAX ? len : FZ_LEAF_MAX;
		if (want > have)
			rnd_bytes(r, a->data + have, want - have);
		a->len = len;
		a->fill = rnd64(r);
		break;
	}
	case FZ_M_VALUE:
		i = fz_pick(m, r, 1);
		if (i < 0)
			return -1;
		fz_set_value(r, &m->a[i]);
		break;
	case FZ_M_WRAP:		/* flat where a nest... is now a nest */
		i = fz_pick(m, r, 0);
		if (i < 0 || m->n >= FZ_MAX_ATTRS)
			return -1;
		j = fz_nest(m, m->a[i].parent,
			    chance(r, 50) ? m->a[i].type & NLA_TYPE_MASK :
					    fz_any_type(r) & NLA_TYPE_MASK);
		if (chance(r, 20))
			m->a[j].type &= ~NLA_F_NESTED;
		m->a[i].parent = j;
		break;
	case FZ_M_FLATTEN:	/* a nest turned into bytes */
		i = fz_pick(m, r, 2);
		if (i < 0)
			return -1;
		a = &m->a[i];
		for (j = 0; j < m->n; j++)
			if (m->a[j].parent == i)
				m->a[j].dead = 1;
		a->nest = 0;
		a->len = rnd(r, 3) * 4 + rnd(r, 2) * rnd(r, 9);
		rnd_bytes(r, a->data, a->len);
		if (chance(r, 50))
			a->type &= ~NLA_F_NESTED;
		break;
	case FZ_M_NESTIFY:	/* a flat attribute holding attributes */
		i = fz_pick(m, r, 1);
		if (i < 0 || m->n + 2 > FZ_MAX_ATTRS)
			return -1;
		j = fz_copy(m, i, i);
		m->a[j].type = chance(r, 50) ? m->a[i].type : fz_any_type(r);
		if (chance(r, 50))
			fz_u32(m, i, fz_any_type(r), rnd64(r));
		m->a[i].nest = 1;
		if (chance(r, 70))
			m->a[i].type |= NLA_F_NESTED;
		break;
	case FZ_M_DEEP: {
		static const uint16_t nests[] = {
			SACRED_ATTR_REGION_ACL, SACRED_ATTR_ACL_ENTRY,
			SACRED_ATTR_DEV_PORTS, SACRED_ATTR_PORT,
		};
		int p = chance(r, 50) ? -1 : fz_pick(m, r, 2);

		d = 2 + rnd(r, 40);
		if (d > FZ_MAX_ATTRS - m->n - 1)
			d = FZ_MAX_ATTRS - m->n - 1;
		if (d < 1)
			return -1;
		while (d--) {
			uint16_t t = chance(r, 70) ?
				nests[rnd(r, ARRAY_SIZE(nests))] :
				fz_any_type(r) & NLA_TYPE_MASK;

			p = fz_nest(m, p, t);
			if (chance(r, 5))
				m->a[p].type &= ~NLA_F_NESTED;
		}
		fz_u32(m, p, chance(r, 50) ? SACRED_ATTR_PROCESS_ID :
		       SACRED_ATTR_ACCESS, rnd(r, 8));
		break;
	}
	case FZ_M_NLAFLAG:
		i = fz_pick(m, r, 0);
		if (i < 0)
			return -1;
		m->a[i].type ^= chance(r, 60) ? NLA_F_NESTED :
						NLA_F_NET_BYTEORDER;
		break;
	case FZ_M_UNKNOWN: {
		uint8_t data[16];
		uint16_t t;
		int p = chance(r, 70) ? -1 : fz_pick(m, r, 2);

		switch (rnd(r, 4)) {
		case 0:
			t = SACRED_ATTR_UNSPEC;
			break;
		case 1:
			t = SACRED_ATTR_PAD;
			break;
		case 2:
			t = rnd(r, NLA_TYPE_MASK + 1);
			break;
		default:
			t = SACRED_ATTR_MAX + 1 + rnd(r, 16);
		}
		rnd_bytes(r, data, sizeof(data));
		if (fz_add(m, p, t, data, rnd(r, 13)) < 0)
			return -1;
		break;
	}
	case FZ_M_RANDOM: {
		static const uint8_t lens[] = { 0, 1, 2, 4, 8, 16, 3, 5 };
		uint8_t data[16];
		int p = chance(r, 80) ? -1 : fz_pick(m, r, 2);

		rnd_bytes(r, data, sizeof(data));
		i = fz_add(m, p, 1 + rnd(r, SACRED_ATTR_MAX), data,
			   lens[rnd(r, ARRAY_SIZE(lens))]);
		if (i < 0)
			return -1;
		break;
	}
	case FZ_M_FLAGS:	/* NLM_F_REQUEST and NLM_F_ACK stay */
		switch (rnd(r, 4)) {
		case 0:
			m->flags ^= NLM_F_DUMP;
			break;
		case 1:
			m->flags ^= NLM_F_ECHO;
			break;
		case 2:
			m->flags ^= chance(r, 50) ? NLM_F_ROOT : NLM_F_MATCH;
			break;
		default:
			m->flags |= rnd(r, 0x10000);
		}
		break;
	case FZ_M_GENL:
		switch (rnd(r, 3)) {
		case 0:
			m->cmd = chance(r, 60) ? 1 + rnd(r, SACRED_CMD_MAX) :
						 rnd(r, 256);
			break;
		case 1:
			m->version = rnd(r, 256);
			break;
		default:
			m->reserved = 1 + rnd(r, 0xffff);
		}
		break;
	}
	return op;
}

/* A mutation of the serialised bytes; nlmsg_len follows the new length. */
static int fz_mutate_bytes(struct fz_wire *w, struct fz_rng *r)
{
	int op = FZ_B_FLIP + rnd(r, FZ_B_END - FZ_B_FLIP), i;
	size_t lo = NLMSG_LENGTH(GENL_HDRLEN), n;

	if (w->len <= lo && (op == FZ_B_FLIP || op == FZ_B_SET))
		lo = NLMSG_HDRLEN;
	switch (op) {
	case FZ_B_FLIP:
		n = 1 + rnd(r, 8);
		while (n--) {
			size_t o = lo + rnd(r, w->len - lo);

			w->buf[o] ^= 1 << rnd(r, 8);
		}
		break;
	case FZ_B_SET:
		n = 1 + rnd(r, 4);
		while (n--) {
			size_t o = lo + rnd(r, w->len - lo);

			w->buf[o] = chance(r, 30) ? 0 : chance(r, 30) ? 0xff :
								rnd64(r);
		}
		break;
	case FZ_B_TRUNC:	/* may cut into the genetlink header */
		w->len = NLMSG_HDRLEN + rnd(r, w->len - NLMSG_HDRLEN);
		break;
	case FZ_B_EXTEND:
		n = 1 + rnd(r, 64);
		if (w->len + n > FZ_WIRE_MAX)
			return -1;
		rnd_bytes(r, w->buf + w->len, n);
		w->len += n;
		break;
	case FZ_B_NLALEN: {
		static const uint16_t lies[] = { 0, 1, 2, 3, 4, 0xffff };
		struct nlattr *nla;
		uint16_t len;

		if (!w->noffs)
			return -1;
		i = rnd(r, w->noffs);
		if (w->offs[i] + NLA_HDRLEN > w->len)
			return -1;
		nla = (void *)(w->buf + w->offs[i]);
		len = nla->nla_len;
		switch (rnd(r, 4)) {
		case 0:
			nla->nla_len = lies[rnd(r, ARRAY_SIZE(lies))];
			break;
		case 1:
			nla->nla_len = len - 1 - rnd(r, 4);
			break;
		case 2:
			nla->nla_len = len + 1 + rnd(r, 8);
			break;
		default:
			nla->nla_len = rnd(r, 0x10000);
		}
		break;
	}
	}
	((struct nlmsghdr *)w->buf)->nlmsg_len = w->len;
	return op;
}

/* A mutation of the nlmsghdr after which the answer may not come. */
static int fz_mutate_hdr(struct fz_worker *k, struct fz_rng *r)
{
	int op = FZ_L_SHORT + rnd(r, FZ_L_END - FZ_L_SHORT);
	struct fz_wire *w = &k->w;
	struct nlmsghdr *nlh = (void *)w->buf;

	switch (op) {
	case FZ_L_SHORT:	/* not even a header */
		w->len = 1 + rnd(r, NLMSG_HDRLEN - 1);
		break;
	case FZ_L_LEN:
		nlh->nlmsg_len = chance(r, 50) ? rnd(r, NLMSG_HDRLEN) :
				 w->len + 1 + rnd(r, 256);
		break;
	case FZ_L_SPLIT: {
		/*
		 * The first message ends early; at the next aligned offset
		 * a second, well-formed one starts (a MEM_GET dump): both
		 * are answered.
		 */
		struct nlmsghdr *two;
		size_t cut = NLMSG_HDRLEN + rnd(r, w->len - NLMSG_HDRLEN + 1);
		size_t off = NLMSG_ALIGN(cut);
		struct genlmsghdr *g;

		if (off + NLMSG_LENGTH(GENL_HDRLEN) > FZ_WIRE_MAX)
			return -1;
		nlh->nlmsg_len = cut;
		two = (void *)(w->buf + off);
		two->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
		two->nlmsg_type = k->nl->family;
		two->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP;
		two->nlmsg_seq = nlh->nlmsg_seq;
		two->nlmsg_pid = 0;
		g = NLMSG_DATA(two);
		memset(g, 0, GENL_HDRLEN);
		g->cmd = SACRED_CMD_MEM_GET;
		g->version = SACRED_GENL_VERSION;
		w->len = off + two->nlmsg_len;
		break;
	}
	case FZ_L_FLAGS:
		switch (rnd(r, 3)) {
		case 0:
			nlh->nlmsg_flags &= ~NLM_F_ACK;
			break;
		case 1:
			nlh->nlmsg_flags &= ~NLM_F_REQUEST;
			break;
		default:
			nlh->nlmsg_flags = rnd(r, 0x10000);
		}
		break;
	case FZ_L_TYPE:
		/*
		 * Control messages and nlctrl only: a random family id could
		 * reach another family (ethtool, devlink) as root.
		 */
		nlh->nlmsg_type = chance(r, 70) ? rnd(r, NLMSG_MIN_TYPE) :
						  GENL_ID_CTRL;
		break;
	case FZ_L_SEQ:
		nlh->nlmsg_seq = rnd64(r);
		nlh->nlmsg_pid = chance(r, 50) ? (uint32_t)rnd64(r) : 0;
		break;
	}
	return op;
}

/*
 * What genetlink itself must answer, whatever the family does: checks
 * that the fuzzer knows what it sends (and that the family is registered
 * as documented: strict header checks, doit/dumpit as listed).
 */
static int fz_expected(const struct fz_wire *w, uint16_t family)
{
	const struct nlmsghdr *nlh = (const void *)w->buf;
	const struct genlmsghdr *g = NLMSG_DATA(nlh);
	uint16_t flags = nlh->nlmsg_flags;
	bool dump = (flags & NLM_F_DUMP) == NLM_F_DUMP;

	if (nlh->nlmsg_type != family)
		return 1;
	if (w->len < NLMSG_LENGTH(GENL_HDRLEN))
		return -EINVAL;
	if (dump)
		flags &= ~NLM_F_DUMP;
	if (g->reserved || (flags & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO)))
		return -EINVAL;
	if (!g->cmd || g->cmd > SACRED_CMD_MAX)
		return -EOPNOTSUPP;
	if (dump ? !fz_cmd_dumps(g->cmd) : !fz_cmd_doit(g->cmd))
		return -EOPNOTSUPP;
	return 1;	/* up to the family */
}

static void fz_count(struct fz_worker *k, unsigned int cmd, bool loose)
{
	struct fz_stats *st = &k->st;
	int e = -k->ans.err, b = fz_cmd_bucket(cmd);

	st->sent++;
	st->cmd_sent[b]++;
	/* A probed message's answers are not counted: the probe's would be. */
	if (loose)
		return;
	if (!e)
		st->cmd_ok[b]++;
	if (e >= 0 && e < (int)ARRAY_SIZE(st->err)) {
		st->err[e]++;
		if (e && !k->ans.extack)
			st->noext[e]++;
	}
	if (k->ans.us > st->max_us) {
		st->max_us = k->ans.us;
		st->max_cmd = b;
	}
}

static void fz_print_stats(const struct fz_stats *st, double secs)
{
	char line[512];
	size_t o = 0;
	int i;

	fprintf(stderr,
		"# %ld messages in %.1f s: %.0f/s; %ld without a sure answer (probed); %ld resyncs; slowest answer %.1f ms (%s)\n",
		st->sent, secs, secs > 0 ? st->sent / secs : 0.0, st->loose,
		st->resyncs, st->max_us / 1000.0, fz_cmd_name[st->max_cmd]);
	for (i = 1; i <= FZ_UNKNOWN_CMD; i++)
		o += snprintf(line + o, sizeof(line) - o, " %s %ld/%ld",
			      fz_cmd_name[i], st->cmd_ok[i], st->cmd_sent[i]);
	fprintf(stderr, "# accepted/sent:%s\n", line);
	o = 0;
	for (i = 0; i < (int)ARRAY_SIZE(st->err); i++) {
		if (!st->err[i])
			continue;
		o += snprintf(line + o, sizeof(line) - o, " %s %ld",
			      i ? strerrorname_np(i) : "ACK", st->err[i]);
		if (st->noext[i])
			o += snprintf(line + o, sizeof(line) - o,
				      " (%ld without extack)", st->noext[i]);
	}
	fprintf(stderr, "# answers:%s\n", line);
}

/* ------------------------------------------------------------- fixture */

static uint64_t fz_env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	char *end;
	uint64_t v;

	if (!s || !*s)
		return def;
	v = strtoull(s, &end, 0);
	return *end ? def : v;
}

/*
 * One seed for the run, chosen before the harness forks a process per
 * test: every test prints the same one.
 */
static void __attribute__((constructor)) fz_seed_init(void)
{
	struct timespec ts;

	if (getenv("SACRED_FUZZ_SEED")) {
		fz_seed_used = fz_env_u64("SACRED_FUZZ_SEED", 0);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	fz_seed_used = (uint64_t)ts.tv_sec * 1000000007ULL ^ ts.tv_nsec ^
		       ((uint64_t)getpid() << 32);
}

/* Every test has its own stream, so that one can be replayed alone. */
static void fz_seed(struct fz_worker *k, uint64_t seed, const char *test)
{
	uint64_t h = 1469598103934665603ULL;

	while (*test)
		h = (h ^ (uint8_t)*test++) * 1099511628211ULL;
	k->rng.s = seed ^ h;
}

FIXTURE(fz) {
	struct fz_ctx *c;
};

FIXTURE_SETUP(fz)
{
	struct fz_ctx *c;
	struct fz_list *l;
	int i, ret;

	c = calloc(1, sizeof(*c));
	ASSERT_NE(NULL, c);
	self->c = c;
	c->timeout_ms = fz_env_u64("SACRED_FUZZ_TIMEOUT_MS",
				   FZ_TIMEOUT_MS_DEFAULT);
	c->count = fz_env_u64("SACRED_FUZZ_COUNT", FZ_COUNT_DEFAULT);
	c->seed = fz_seed_used;

	ret = fz_open(&c->main, 0, c->timeout_ms, 0);
	if (ret == -ENOENT)
		SKIP(return, "sacred.ko is not loaded");
	ASSERT_EQ(0, ret);

	for (i = 0; i < FZ_MAX_DEVS; i++) {
		struct fz_dev *d = &c->dev[c->ndev];

		if (!env_word("SACRED_RXE_DEVS", i, d->name, sizeof(d->name)) ||
		    !env_word("SACRED_RXE_ADDRS", i, d->addr_str,
			      sizeof(d->addr_str)))
			break;
		ASSERT_EQ(1, inet_pton(AF_INET, d->addr_str, &d->addr));
		c->ndev++;
	}
	if (!c->ndev)
		SKIP(return, "needs the VM rig's SACRED_RXE_DEVS/ADDRS");

	for (i = 0; i < c->ndev; i++) {
		struct fz_worker *k = &c->main;

		c->dev[i].index = UINT32_MAX;
		fz_init(&k->m, k->nl->family, SACRED_CMD_DEV_GET, 0);
		fz_str(&k->m, -1, SACRED_ATTR_DEV_NAME, c->dev[i].name);
		ASSERT_EQ(0, fz_must(k, "DEV_GET", fz_dev_index,
				     &c->dev[i].index));
		ASSERT_NE(UINT32_MAX, c->dev[i].index);
	}

	/* Instances someone else made are left alone. */
	l = &c->list;
	ASSERT_EQ(0, fz_dump(&c->main, SACRED_CMD_MEM_GET, UINT32_MAX, l));
	ASSERT_FALSE(l->overflow);
	for (i = 0; i < l->n; i++)
		c->pre[c->npre++] = l->r[i].mem;
	if (c->npre)
		TH_LOG("%d instances were there before; they are left alone",
		       c->npre);

	fz_watch_start();
	c->ready = true;
}

FIXTURE_TEARDOWN(fz)
{
	struct fz_ctx *c = self->c;

	fz_watch_end();
	if (!c)
		return;
	fz_peers_close(c);
	if (c->ready && c->main.nl)
		EXPECT_EQ(0, fz_cleanup(c));
	fz_events_close(c->ev);
	fz_close(&c->main);
	free(c);
}

/* After a SKIP in the setup the harness still runs the test. */
static bool fz_ready(const struct fz_ctx *c)
{
	return c && c->ready;
}

static void fz_seed_log(struct __test_metadata *_metadata,
			const struct fz_ctx *c)
{
	TH_LOG("seed %#" PRIx64 " (replay: SACRED_FUZZ_SEED=%#" PRIx64
	       "), %ld messages in all (SACRED_FUZZ_COUNT)", c->seed,
	       c->seed, c->count);
}

/* --------------------------------------------------------------- tests */

/*
 * The mutation loop: 90% of SACRED_FUZZ_COUNT. Base instances (one per
 * device, small cap) and their regions are what valid messages name;
 * after a message that may have changed them, they are restored.
 */
TEST_F_TIMEOUT(fz, mutated_messages, FZ_TEST_TIMEOUT)
{
	struct fz_ctx *c = self->c;
	struct fz_worker *k = &c->main;
	long n = c->count - c->count / 10, i;
	int b, noext_shown = 0;
	char why[256];
	int64_t t0;

	if (!fz_ready(self->c))
		return;
	fz_seed_log(_metadata, c);
	fz_seed(k, c->seed, "mutated_messages");
	for (b = 0; b < c->ndev; b++) {
		c->base[b].id = 0x100 + b;
		c->base[b].dev = b;
	}
	c->nbase = c->ndev;
	c->ev = fz_events_open();
	ASSERT_NE(NULL, c->ev);
	ASSERT_EQ(0, fz_resync(c));
	fz_peers_tend(c);

	t0 = now_us();
	for (i = 0; i < n && k->failures < FZ_MAX_FAIL; i++) {
		char desc[256] = "";
		size_t o = 0;
		int nmut = 0, op, expect, ret;
		bool loose = false, resync = false;
		unsigned int cmd;

		fz_valid(k, c);
		/* 4% stay valid, to keep the objects changing. */
		if (chance(&k->rng, 96))
			nmut = 1 + (chance(&k->rng, 50) ? 0 :
				    rnd(&k->rng, 4));
		while (nmut--) {
			op = fz_mutate(&k->m, &k->rng);
			if (op >= 0)
				o += snprintf(desc + o, sizeof(desc) - o,
					      " %s", fz_mut_name[op]);
		}
		fz_serialize(&k->m, &k->w, ++k->nl->seq);
		if (chance(&k->rng, 20)) {
			op = fz_mutate_bytes(&k->w, &k->rng);
			if (op >= 0)
				o += snprintf(desc + o, sizeof(desc) - o,
					      " %s", fz_mut_name[op]);
		}
		if (chance(&k->rng, 4)) {
			op = fz_mutate_hdr(k, &k->rng);
			if (op >= 0) {
				o += snprintf(desc + o, sizeof(desc) - o,
					      " %s", fz_mut_name[op]);
				loose = true;
			}
		}
		cmd = k->w.len >= NLMSG_LENGTH(GENL_HDRLEN) ?
			((struct genlmsghdr *)NLMSG_DATA(k->w.buf))->cmd : 0;

		if (loose) {
			k->st.loose++;
			ret = fz_xfer_loose(k);
			resync = fz_cmd_changes(cmd);
		} else {
			ret = fz_xfer(k, NULL, NULL);
			expect = fz_expected(&k->w, k->nl->family);
			if (!ret && expect <= 0 && k->ans.err != expect)
				ret = fz_bad(&k->ans,
					     "answered %d, genetlink answers %d",
					     k->ans.err, expect);
			/*
			 * A message left as built is valid: the family may
			 * refuse what it asks, never its form. (rdma_cm
			 * refuses some odd addresses -EINVAL: passed on; a
			 * ballot or target is -EINVAL on a region whose
			 * policy takes none.)
			 */
			if (!ret && !desc[0] && expect > 0 && !k->odd &&
			    (k->ans.err == -EINVAL || k->ans.err == -ERANGE ||
			     k->ans.err == -EOPNOTSUPP))
				ret = fz_bad(&k->ans,
					     "a valid message was refused %d",
					     k->ans.err);
			/*
			 * Not a failure, but netlink.rst promises a message
			 * with every error the family gives: show a few.
			 */
			if (!ret && expect > 0 && k->ans.err &&
			    !k->ans.extack && noext_shown++ < 3) {
				fprintf(stderr,
					"# note: %s answered %d without an extack message (message #%ld,%s)\n",
					fz_cmd_name[fz_cmd_bucket(cmd)],
					k->ans.err, i, desc);
				fz_hexdump("message", k->w.buf, k->w.len);
			}
			resync = !ret && !k->ans.err && fz_cmd_changes(cmd);
		}
		fz_count(k, cmd, loose);
		if (ret) {
			char what[64];

			snprintf(what, sizeof(what), "message #%ld", i);
			fz_log_fail(k, what);
			fprintf(stderr, "#   %s, mutations:%s\n",
				fz_cmd_name[fz_cmd_bucket(cmd)], desc);
			k->failures++;
			resync = true;
		}
		if (resync || i % 1000 == 999) {
			ASSERT_EQ(0, fz_resync(c));
			ASSERT_EQ(0, fz_events_drain(c->ev, k->nl->family, why,
						     sizeof(why)))
				TH_LOG("message #%ld: %s", i, why);
		}
		if (i % 1000 == 999)
			fz_peers_tend(c);
	}
	fz_print_stats(&k->st, (now_us() - t0) / 1e6);
	TH_LOG("%ld events checked (%ld overruns); processes connected %ld times, %ld failed",
	       c->ev->n, c->ev->overruns, c->peer_connects, c->peer_fails);
	EXPECT_EQ(0, k->failures);
}

/*
 * Dumps abandoned midway: the socket closed before the first part was
 * read, after it, and with a second dump refused (-EBUSY) and a doit
 * answered while the first is still running. The module must neither
 * leak nor trip over the callback state left behind; full dumps
 * afterwards are complete.
 */

#define FZ_DUMP_MEMS	120
#define FZ_DUMP_REGIONS	200

/* Read one datagram of a dump into @l (4 KiB: one part at a time). */
static int fz_dump_part(struct fz_worker *k, uint32_t seq, struct fz_list *l,
			bool *done, bool *intr)
{
	struct nlmsghdr *h;
	ssize_t n;

	n = nlraw_recv_timeout(k->nl->fd, k->rbuf, 4096, k->timeout_ms);
	if (n < 0)
		return fz_bad(&k->ans, "dump part: %s", strerror(-n));
	for (h = (void *)k->rbuf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_seq != seq)
			return fz_bad(&k->ans, "dump part with sequence %u",
				      h->nlmsg_seq);
		if (h->nlmsg_flags & NLM_F_DUMP_INTR)
			*intr = true;
		if (h->nlmsg_type == NLMSG_DONE) {
			*done = true;
			return fz_final(k, h, now_us());
		}
		if (h->nlmsg_type == NLMSG_ERROR)
			return fz_bad(&k->ans, "dump answered an error");
		fz_collect(h, l);
	}
	return 0;
}

/*
 * With dump @seq1 running on @d: a second dump request must be refused
 * -EBUSY (or run in full, if the first one ended meanwhile) and a doit
 * answered (the probe: -ENODEV), between parts of the first. Returns 0
 * when both came and everything was clean; the first dump is left
 * running unless it ended (*done).
 */
static int fz_dump_busy(struct fz_worker *d, uint32_t seq1, bool *done)
{
	bool got2 = false, got3 = false;
	uint32_t seq2, seq3;
	int ret;

	fz_init(&d->m, d->nl->family, SACRED_CMD_MEM_GET, NLM_F_DUMP);
	seq2 = ++d->nl->seq;
	fz_serialize(&d->m, &d->w, seq2);
	ret = fz_send(d, d->w.buf, d->w.len);
	if (ret)
		return fz_bad(&d->ans, "send: %s", strerror(-ret));
	fz_init(&d->m, d->nl->family, SACRED_CMD_DEV_GET, 0);
	fz_u32(&d->m, -1, SACRED_ATTR_DEV_INDEX, FZ_PROBE_INDEX);
	seq3 = ++d->nl->seq;
	fz_serialize(&d->m, &d->probe, seq3);
	ret = fz_send(d, d->probe.buf, d->probe.len);
	if (ret)
		return fz_bad(&d->ans, "send: %s", strerror(-ret));

	while (!got2 || !got3) {
		struct nlmsghdr *h;
		ssize_t n;

		n = nlraw_recv_timeout(d->nl->fd, d->rbuf, 4096,
				       d->timeout_ms);
		if (n < 0)
			return fz_bad(&d->ans, "mid-dump read: %s",
				      strerror(-n));
		for (h = (void *)d->rbuf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			bool fin = h->nlmsg_type == NLMSG_ERROR ||
				   h->nlmsg_type == NLMSG_DONE;

			if (fin && fz_final(d, h, now_us()))
				return -1;
			if (h->nlmsg_seq == seq1) {
				if (h->nlmsg_type == NLMSG_ERROR)
					return fz_bad(&d->ans,
						      "a running dump answered %d",
						      d->ans.err);
				if (h->nlmsg_type == NLMSG_DONE)
					*done = true;
			} else if (h->nlmsg_seq == seq2) {
				if (h->nlmsg_type == NLMSG_ERROR &&
				    d->ans.err != -EBUSY)
					return fz_bad(&d->ans,
						      "a second dump was answered %d, not -EBUSY",
						      d->ans.err);
				got2 |= fin;
			} else if (h->nlmsg_seq == seq3) {
				if (!fin)
					continue;
				if (d->ans.err != -ENODEV)
					return fz_bad(&d->ans,
						      "a doit during a dump was answered %d",
						      d->ans.err);
				got3 = true;
			} else {
				return fz_bad(&d->ans, "sequence %u",
					      h->nlmsg_seq);
			}
		}
	}
	return 0;
}

static int fz_dump_start(struct fz_worker *k, uint8_t cmd)
{
	fz_init(&k->m, k->nl->family, cmd, NLM_F_DUMP);
	fz_serialize(&k->m, &k->w, ++k->nl->seq);
	return fz_send(k, k->w.buf, k->w.len);
}

/* Many instances and regions, so that dumps take several parts. */
static void fz_populate(struct __test_metadata *_metadata, struct fz_ctx *c)
{
	struct fz_worker *k = &c->main;
	struct fz_list one;
	uint32_t mem0 = UINT32_MAX;
	int i;

	for (i = 0; i < FZ_DUMP_MEMS; i++) {
		one.n = 0;
		fz_mem_new_msg(k, c, UINT32_MAX, i % c->ndev, 1 << 20);
		ASSERT_EQ(0, fz_must(k, "MEM_NEW", fz_collect, &one));
		ASSERT_EQ(1, one.n);
		if (!i)
			mem0 = one.r[0].mem;
	}
	for (i = 0; i < FZ_DUMP_REGIONS; i++) {
		fz_region_new_msg(k, mem0, UINT32_MAX, 4096,
				  i % FZ_POLICIES);
		ASSERT_EQ(0, fz_must(k, "REGION_NEW", NULL, NULL));
	}
}

TEST_F(fz, dumps_closed_midway)
{
	static const uint8_t cmds[] = {
		SACRED_CMD_DEV_GET, SACRED_CMD_MEM_GET, SACRED_CMD_REGION_GET,
		SACRED_CMD_PEER_GET,
	};
	struct fz_worker *d = calloc(1, sizeof(*d));
	struct fz_ctx *c = self->c;
	struct fz_list *l = &c->list;
	int round, i;

	ASSERT_NE(NULL, d);
	if (!fz_ready(self->c))
		return;
	fz_seed_log(_metadata, c);
	fz_populate(_metadata, c);

	for (round = 0; round < 30; round++) {
		uint8_t cmd = cmds[round % ARRAY_SIZE(cmds)];
		int how = round / ARRAY_SIZE(cmds) % 3;
		bool done = false, intr = false;
		struct fz_list part;
		uint32_t seq;

		ASSERT_EQ(0, fz_open(d, 1, c->timeout_ms, c->main.nl->family));
		ASSERT_EQ(0, fz_dump_start(d, cmd));
		seq = d->nl->seq;
		if (how >= 1) {
			part.n = 0;
			ASSERT_EQ(0, fz_dump_part(d, seq, &part, &done, &intr))
				TH_LOG("%s", d->ans.why);
		}
		if (how == 2 && !done)
			ASSERT_EQ(0, fz_dump_busy(d, seq, &done))
				TH_LOG("%s", d->ans.why);
		fz_close(d);
		(void)intr;
	}

	/* ... and after all that, complete dumps are complete. */
	ASSERT_EQ(0, fz_dump(&c->main, SACRED_CMD_MEM_GET, UINT32_MAX, l));
	EXPECT_EQ(FZ_DUMP_MEMS + c->npre, l->n);
	for (i = 1; i < l->n; i++)
		EXPECT_LT(l->r[i - 1].mem, l->r[i].mem);
	ASSERT_EQ(0, fz_dump(&c->main, SACRED_CMD_REGION_GET, UINT32_MAX, l));
	EXPECT_LE(FZ_DUMP_REGIONS, l->n);
	ASSERT_EQ(0, fz_dump(&c->main, SACRED_CMD_DEV_GET, UINT32_MAX, l));
	EXPECT_LE(c->ndev, l->n);
	free(d);
}

/*
 * A dump that has read one part, then an instance (or a region) ahead of
 * its cursor is deleted and another created on a second socket, then it
 * goes on: it must end, stay ordered without repeating anything, leave
 * out what was deleted, and say NLM_F_DUMP_INTR on what it built after
 * the change.
 *
 * Reading part N makes the kernel build part N+1 right away (in
 * netlink_recvmsg()), so part 2 exists before the change: only parts 3
 * and later are built after it. The victim is the last object, which the
 * population (FZ_DUMP_MEMS, FZ_DUMP_REGIONS in 4 KiB parts) puts there.
 */
TEST_F(fz, dumps_changed_midway)
{
	struct fz_worker *d = calloc(1, sizeof(*d));
	struct fz_list *before = malloc(sizeof(*before));
	struct fz_ctx *c = self->c;
	struct fz_worker *k = &c->main;
	int round;

	ASSERT_NE(NULL, d);
	ASSERT_NE(NULL, before);
	if (!fz_ready(self->c))
		return;
	fz_seed_log(_metadata, c);
	fz_seed(k, c->seed, "dumps_changed_midway");
	fz_populate(_metadata, c);

	for (round = 0; round < 8; round++) {
		bool regions = round & 1, done = false, intr = false;
		bool late_intr = false;
		uint8_t cmd = regions ? SACRED_CMD_REGION_GET :
					SACRED_CMD_MEM_GET;
		struct fz_list *l = &c->list;
		uint32_t seq, gone_mem, gone_id;
		int i, n2 = 0, part, ret;

		ASSERT_EQ(0, fz_dump(k, cmd, UINT32_MAX, before));
		ASSERT_LT(0, before->n);
		gone_mem = before->r[before->n - 1].mem;
		gone_id = before->r[before->n - 1].id;

		ASSERT_EQ(0, fz_open(d, 1, c->timeout_ms, c->main.nl->family));
		l->n = 0;
		ASSERT_EQ(0, fz_dump_start(d, cmd));
		seq = d->nl->seq;
		ASSERT_EQ(0, fz_dump_part(d, seq, l, &done, &intr))
			TH_LOG("%s", d->ans.why);
		ASSERT_FALSE(done);

		/* New ids: the lowest free one may be the one just gone. */
		if (regions) {
			ASSERT_EQ(0, fz_region_del(k, gone_mem, gone_id));
			fz_region_new_msg(k, gone_mem, 0x2000 + round, 4096, 0);
		} else {
			ASSERT_EQ(0, fz_mem_del(k, gone_mem));
			fz_mem_new_msg(k, c, 0x2000 + round,
				       rnd(&k->rng, c->ndev), 1 << 20);
		}
		ASSERT_EQ(0, fz_must(k, "create midway", NULL, NULL));

		for (part = 2; !done; part++) {
			bool *flag = part >= 3 ? &late_intr : &intr;

			ret = fz_dump_part(d, seq, l, &done, flag);
			ASSERT_EQ(0, ret)
				TH_LOG("%s", d->ans.why);
			if (part == 2)
				n2 = l->n;
		}
		fz_close(d);

		ASSERT_LT(n2, l->n)
			TH_LOG("round %d: the dump fit in two parts: nothing to test",
			       round);
		EXPECT_TRUE(late_intr)
			TH_LOG("round %d: parts built after a change lack NLM_F_DUMP_INTR",
			       round);
		for (i = 1; i < l->n; i++) {
			uint64_t a = (uint64_t)l->r[i - 1].mem << 32 |
				     l->r[i - 1].id;
			uint64_t b = (uint64_t)l->r[i].mem << 32 | l->r[i].id;

			EXPECT_LT(a, b)
				TH_LOG("round %d: entry %d (%u/%u) after %u/%u",
				       round, i, l->r[i].mem, l->r[i].id,
				       l->r[i - 1].mem, l->r[i - 1].id);
			if (i < n2)
				continue;
			EXPECT_FALSE(l->r[i].mem == gone_mem &&
				     l->r[i].id == gone_id)
				TH_LOG("round %d: %u/%u was deleted ahead of the cursor, and dumped",
				       round, gone_mem, gone_id);
		}
	}
	free(before);
	free(d);
}

/*
 * Several threads, each with its own socket, create and delete instances
 * and regions with the same few ids, change ACLs and permissions, and
 * dump, all at once. Every answer must be in time and one of those that
 * operation can give. 10% of SACRED_FUZZ_COUNT.
 */
struct fz_thread {
	struct fz_worker k;
	const struct fz_ctx *c;
	pthread_t tid;
	long count;
	bool dumper;
};

static void fz_thread_fail(struct fz_worker *k, const char *op)
{
	size_t o, i;

	if (k->failures++)
		return;
	o = snprintf(k->first_fail, sizeof(k->first_fail), "%s: %s%s%s", op,
		     k->ans.why[0] ? k->ans.why : "unexpected errno",
		     k->ans.errmsg[0] ? "; extack: " : "", k->ans.errmsg);
	o += snprintf(k->first_fail + o, sizeof(k->first_fail) - o,
		      " (answer %d); message:", k->ans.err);
	for (i = 0; i < k->w.len && i < 256 &&
		    o < sizeof(k->first_fail) - 4; i++)
		o += snprintf(k->first_fail + o, sizeof(k->first_fail) - o,
			      " %02x", k->w.buf[i]);
}

/* Run k->m; the answer must be 0 or one of the errnos in @ok. */
static void fz_conc_op(struct fz_worker *k, const char *op, const int *ok,
		       fz_each_fn each, void *arg)
{
	int ret = fz_do(k, each, arg), i;

	fz_count(k, k->m.cmd, false);
	if (ret == FZ_BROKEN) {
		fz_thread_fail(k, op);
		return;
	}
	if (!ret)
		return;
	for (i = 0; ok[i]; i++)
		if (ret == -ok[i])
			return;
	fz_thread_fail(k, op);
}

static void fz_conc_check_order(struct fz_worker *k, struct fz_list *l,
				const char *op)
{
	int i;

	for (i = 1; i < l->n; i++) {
		uint64_t a = (uint64_t)l->r[i - 1].mem << 32 | l->r[i - 1].id;
		uint64_t b = (uint64_t)l->r[i].mem << 32 | l->r[i].id;

		if (a >= b) {
			fz_bad(&k->ans, "%s: entry %u/%u after %u/%u", op,
			       l->r[i].mem, l->r[i].id, l->r[i - 1].mem,
			       l->r[i - 1].id);
			fz_thread_fail(k, op);
			return;
		}
	}
}

static void *fz_conc_thread(void *arg)
{
	static const int ok_new[] = { EEXIST, 0 };
	static const int ok_gone[] = { ENOENT, 0 };
	static const int ok_rnew[] = { EEXIST, ENOENT, 0 };
	static const int ok_set[] = { ENOENT, EADDRINUSE, 0 };
	static const int ok_perm[] = { ENOENT, EPERM, 0 };
	struct fz_thread *t = arg;
	struct fz_worker *k = &t->k;
	const struct fz_ctx *c = t->c;
	struct fz_list *l = malloc(sizeof(*l));
	long i;

	if (!l) {
		fz_bad(&k->ans, "out of memory");
		fz_thread_fail(k, "setup");
		return NULL;
	}
	for (i = 0; i < t->count && k->failures < FZ_MAX_FAIL; i++) {
		uint32_t mem = FZ_CONC_MEM0 + rnd(&k->rng, FZ_CONC_NMEM);
		uint32_t reg = rnd(&k->rng, FZ_CONC_NREG);
		int op = t->dumper ? 10 + rnd(&k->rng, 4) : rnd(&k->rng, 10);
		int dev = rnd(&k->rng, c->ndev);

		switch (op) {
		case 0:
		case 1:
			fz_mem_new_msg(k, c, mem, dev, 1 << 20);
			fz_conc_op(k, "MEM_NEW", ok_new, NULL, NULL);
			break;
		case 2:
			fz_init(&k->m, k->nl->family, SACRED_CMD_MEM_DEL, 0);
			fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem);
			fz_conc_op(k, "MEM_DEL", ok_gone, NULL, NULL);
			break;
		case 3:
		case 4:
			fz_region_new_msg(k, mem, reg,
					  4096 * (1 + rnd(&k->rng, 4)),
					  rnd(&k->rng, FZ_POLICIES));
			fz_conc_op(k, "REGION_NEW", ok_rnew, NULL, NULL);
			break;
		case 5:
			fz_init(&k->m, k->nl->family, SACRED_CMD_REGION_DEL, 0);
			fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem);
			fz_u32(&k->m, -1, SACRED_ATTR_REGION_ID, reg);
			fz_conc_op(k, "REGION_DEL", ok_gone, NULL, NULL);
			break;
		case 6:
			/* One writer at most: valid on every policy. */
			fz_init(&k->m, k->nl->family, SACRED_CMD_REGION_SET, 0);
			fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem);
			fz_u32(&k->m, -1, SACRED_ATTR_REGION_ID, reg);
			fz_acl(k, -1, rnd(&k->rng, 4));
			fz_conc_op(k, "REGION_SET", ok_gone, NULL, NULL);
			break;
		case 7:
			fz_init(&k->m, k->nl->family, SACRED_CMD_PERM_SET, 0);
			fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem);
			fz_u32(&k->m, -1, SACRED_ATTR_REGION_ID, reg);
			fz_u32(&k->m, -1, SACRED_ATTR_PROCESS_ID,
			       1 + rnd(&k->rng, 4));
			fz_u32(&k->m, -1, SACRED_ATTR_ACCESS, fz_any_access(k));
			/* No ballot: valid on every policy (fenced refuses). */
			fz_conc_op(k, "PERM_SET", ok_perm, NULL, NULL);
			break;
		case 8:
			fz_init(&k->m, k->nl->family, SACRED_CMD_MEM_SET, 0);
			fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem);
			fz_u8(&k->m, -1, SACRED_ATTR_MEM_STATE,
			      chance(&k->rng, 50) ? SACRED_MEM_UP :
						    SACRED_MEM_DOWN);
			fz_conc_op(k, "MEM_SET", ok_set, NULL, NULL);
			break;
		case 9:
			fz_init(&k->m, k->nl->family, SACRED_CMD_REGION_GET, 0);
			fz_u32(&k->m, -1, SACRED_ATTR_MEM_ID, mem);
			fz_u32(&k->m, -1, SACRED_ATTR_REGION_ID, reg);
			fz_conc_op(k, "REGION_GET", ok_gone, NULL, NULL);
			break;
		default: {
			static const uint8_t cmds[] = {
				SACRED_CMD_MEM_GET, SACRED_CMD_REGION_GET,
				SACRED_CMD_PEER_GET, SACRED_CMD_DEV_GET,
			};
			static const char *const names[] = {
				"MEM_GET dump", "REGION_GET dump",
				"PEER_GET dump", "DEV_GET dump",
			};
			static const int ok_none[] = { 0 };

			l->n = 0;
			l->overflow = false;
			fz_init(&k->m, k->nl->family, cmds[op - 10],
				NLM_F_DUMP);
			fz_conc_op(k, names[op - 10], ok_none, fz_collect, l);
			if (op - 10 < 2)
				fz_conc_check_order(k, l, names[op - 10]);
		}
		}
	}
	free(l);
	return NULL;
}

TEST_F_TIMEOUT(fz, concurrent_create_delete, FZ_TEST_TIMEOUT)
{
	struct fz_ctx *c = self->c;
	struct fz_thread *t = calloc(FZ_THREADS, sizeof(*t));
	struct fz_stats all = { 0 };
	long n = c->count / 10, failures = 0;
	char why[256];
	int64_t t0;
	uint32_t id;
	int i, j, ret;

	ASSERT_NE(NULL, t);
	if (!fz_ready(self->c))
		return;
	fz_seed_log(_metadata, c);
	for (i = 0; i < FZ_THREADS; i++) {
		char name[32];

		ASSERT_EQ(0, fz_open(&t[i].k, 1 + i, c->timeout_ms, 0));
		snprintf(name, sizeof(name), "concurrent-%d", i);
		fz_seed(&t[i].k, c->seed, name);
		t[i].c = c;
		t[i].count = n / FZ_THREADS;
		t[i].dumper = i == FZ_THREADS - 1;
	}
	c->ev = fz_events_open();
	ASSERT_NE(NULL, c->ev);
	t0 = now_us();
	for (i = 0; i < FZ_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&t[i].tid, NULL, fz_conc_thread,
					    &t[i]));
	for (i = 0; i < FZ_THREADS; i++)
		pthread_join(t[i].tid, NULL);
	EXPECT_EQ(0, fz_events_drain(c->ev, c->main.nl->family, why,
				     sizeof(why)))
		TH_LOG("%s", why);
	TH_LOG("%ld events checked (%ld overruns)", c->ev->n,
	       c->ev->overruns);

	for (i = 0; i < FZ_THREADS; i++) {
		struct fz_stats *st = &t[i].k.st;

		if (t[i].k.failures)
			TH_LOG("thread %d: %ld failures; first: %s (seed %#" PRIx64 ")",
			       i, t[i].k.failures, t[i].k.first_fail, c->seed);
		failures += t[i].k.failures;
		all.sent += st->sent;
		for (j = 0; j <= FZ_UNKNOWN_CMD; j++) {
			all.cmd_sent[j] += st->cmd_sent[j];
			all.cmd_ok[j] += st->cmd_ok[j];
		}
		for (j = 0; j < (int)ARRAY_SIZE(all.err); j++) {
			all.err[j] += st->err[j];
			all.noext[j] += st->noext[j];
		}
		if (st->max_us > all.max_us) {
			all.max_us = st->max_us;
			all.max_cmd = st->max_cmd;
		}
		fz_close(&t[i].k);
	}
	fz_print_stats(&all, (now_us() - t0) / 1e6);
	free(t);
	EXPECT_EQ(0, failures);

	for (id = FZ_CONC_MEM0; id < FZ_CONC_MEM0 + FZ_CONC_NMEM; id++) {
		ret = fz_mem_del(&c->main, id);
		EXPECT_TRUE(ret == 0 || ret == -ENOENT);
	}
}

/*
 * Last: unload the module, as selftests/sacred_module does, and read the
 * kernel log it wrote: any object the fuzzing left behind makes the exit
 * path warn "leaked objects". Then load it again for the tests after.
 */
TEST_F(fz, nothing_leaks_at_unload)
{
	struct fz_ctx *c = self->c;
	const char *ko = getenv("SACRED_KO");
	char rec[1024];
	bool leak = false;
	ssize_t n;
	int kmsg, ret;

	if (!fz_ready(self->c))
		return;
	if (!ko)
		SKIP(return, "SACRED_KO does not name the module file");
	ASSERT_EQ(0, fz_cleanup(c));

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, kmsg);
	lseek(kmsg, 0, SEEK_END);

	fz_close(&c->main);
	ret = module_unload();
	if (!ret)
		ret = module_load(ko);
	EXPECT_EQ(0, ret);

	while ((n = read(kmsg, rec, sizeof(rec) - 1)) > 0 ||
	       (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = 0;
		if (strstr(rec, "leaked objects") || strstr(rec, "WARNING")) {
			TH_LOG("kernel: %s", strchr(rec, ';') ?
			       strchr(rec, ';') + 1 : rec);
			leak = true;
		}
	}
	close(kmsg);
	EXPECT_FALSE(leak);

	/* The teardown deletes with this socket: the family id is new. */
	ASSERT_EQ(0, fz_open(&c->main, 0, c->timeout_ms, 0));
	ASSERT_EQ(0, fz_dump(&c->main, SACRED_CMD_DEV_GET, UINT32_MAX,
			     &c->list));
	EXPECT_EQ(c->ndev, c->list.n);
}

TEST_HARNESS_MAIN
