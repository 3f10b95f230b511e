// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * sacred-kv - a small linearizable key-value service on the replicated
 * log (lib/log.c): replicas, and a client with put, get and cas.
 *
 *   sacred-kv replica -i INDEX -n NPROCS -m ADDR:PORT[,ADDR:PORT...] ...
 *   sacred-kv [-d DIR] put KEY VALUE | get KEY | cas KEY EXPECT VALUE
 *
 * Every request - reads too - is an entry of the log: the leader appends
 * it (one quorum write), every replica applies the entries in log order
 * to its map, and the leader answers once the entry is decided. So every
 * answer reflects a prefix of one total order: linearizable. A client
 * that gets no answer retries the same request (same client id and
 * request number) at another replica; replicas apply each (client,
 * request) once and answer a retry from their table.
 *
 * The log keeps a window of -c entries: every -c / 2 appends the leader
 * writes a snapshot of the map and the duplicate table (kv_snapshot()),
 * and a replica that needs entries overwritten since - one started
 * again, or left behind - installs the newest snapshot (kv_restore()).
 *
 * Replicas and clients meet in a directory (-d, default /tmp/sacred-kv):
 * replica i listens on DIR/kv-i.sock. A replica that does not lead
 * answers "not leader" with the leader it believes in.
 *
 * This file owns the replica's state machine (map and duplicate table),
 * its request loop, and the client.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "sacred.h"
#include "kv.h"
#include "kv_client.h"

#define KV_DIR_DEFAULT		"/tmp/sacred-kv"
#define KV_MAP_MAX		1024
#define KV_CLIENTS_MAX		256
#define KV_CONNS_MAX		64
#define KV_PID_BASE		1000
#define KV_LOG_REGION		1
#define KV_HB_REGION		2
#define KV_CAPACITY		1024
/*
 * A snapshot (kv_snapshot()): a header (magic, items, clients, the next
 * client slot), then per item klen, vlen, key, val, and per client in
 * use its slot, id, request and answer (status, leader, vlen, index,
 * val). All little-endian.
 */
#define KV_SNAP_MAGIC		0x31534b53	/* "SKS1" */
#define KV_SNAP_HDR		16
#define KV_SNAP_ITEM		(2 + KV_KEY_MAX + KV_VAL_MAX)
#define KV_SNAP_REPLY		(4 + 4 + 4 + 8 + KV_VAL_MAX)
#define KV_SNAP_CLIENT		(4 + 8 + 8 + KV_SNAP_REPLY)
#define KV_SNAP_MAX		(KV_SNAP_HDR + KV_MAP_MAX * KV_SNAP_ITEM + \
				 KV_CLIENTS_MAX * KV_SNAP_CLIENT)

static volatile sig_atomic_t kv_stop;

/*
 * A whole decimal number in [@min, @max] into *@v, or false: "abc", "",
 * "12x" and out-of-range values are refused, never read as 0.
 */
static bool kv_number(const char *s, long min, long max, long *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < min || n > max)
		return false;
	*v = n;
	return true;
}

/* The same for an option: complains about -@opt itself. */
static bool kv_opt_number(int opt, const char *s, long min, long max,
			  long *v)
{
	if (kv_number(s, min, max, v))
		return true;
	fprintf(stderr, "sacred-kv: invalid -%c \"%s\" (%ld-%ld)\n", opt, s,
		min, max);
	return false;
}

/*
 * The process key of this replica (SACRED_MAC_LEN raw bytes, as
 * sacred_process_key() derives it from a memory's master key) from
 * @path into @key; 0 or -1 with a message.
 */
static int kv_read_key(const char *path, uint8_t *key)
{
	FILE *f = fopen(path, "rb");
	uint8_t extra;
	size_t n;

	if (!f) {
		fprintf(stderr, "sacred-kv: cannot read key file \"%s\": %s\n",
			path, strerror(errno));
		return -1;
	}
	n = fread(key, 1, SACRED_MAC_LEN, f);
	if (n == SACRED_MAC_LEN && fread(&extra, 1, 1, f))
		n++;
	fclose(f);
	if (n != SACRED_MAC_LEN) {
		fprintf(stderr, "sacred-kv: key file \"%s\" must hold %d bytes\n",
			path, SACRED_MAC_LEN);
		return -1;
	}
	return 0;
}

static uint64_t kv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* The state machine: the map and the duplicate table.                 */

struct kv_item {
	uint8_t klen;
	uint8_t vlen;
	char key[KV_KEY_MAX];
	char val[KV_VAL_MAX];
};

/* A duplicate-table entry: a client's last request and its answer. */
struct kv_dup {
	uint64_t client;
	uint64_t req;
	struct kv_reply rep;
};

struct kv_state {
	struct kv_item items[KV_MAP_MAX];
	unsigned int nr_items;
	struct kv_dup clients[KV_CLIENTS_MAX];
	unsigned int next_client;	/* replaced in insertion order */
	uint64_t applied;
	/* The answer to the entry applied last, and its index. */
	struct kv_reply last;
	uint64_t last_index;
};

static struct kv_item *kv_find(struct kv_state *st, const struct kv_cmd *c)
{
	unsigned int i;

	for (i = 0; i < st->nr_items; i++)
		if (st->items[i].klen == c->klen &&
		    !memcmp(st->items[i].key, c->key, c->klen))
			return &st->items[i];
	return NULL;
}

static void kv_exec(struct kv_state *st, const struct kv_cmd *c,
		    struct kv_reply *rep)
{
	struct kv_item *it = kv_find(st, c);

	memset(rep, 0, sizeof(*rep));
	rep->leader = -1;
	switch (c->op) {
	case KV_GET:
		if (!it) {
			rep->status = KV_NOT_FOUND;
			return;
		}
		rep->vlen = it->vlen;
		memcpy(rep->val, it->val, it->vlen);
		return;
	case KV_CAS:
		if (it ? it->vlen != c->elen ||
			 memcmp(it->val, c->expect, c->elen) : c->elen) {
			rep->status = KV_CAS_FAILED;
			if (it) {
				rep->vlen = it->vlen;
				memcpy(rep->val, it->val, it->vlen);
			}
			return;
		}
		/* fall through */
	case KV_PUT:
		if (!it) {
			if (st->nr_items == KV_MAP_MAX) {
				rep->status = KV_BAD_REQUEST;
				return;
			}
			it = &st->items[st->nr_items++];
			it->klen = c->klen;
			memcpy(it->key, c->key, c->klen);
		}
		it->vlen = c->vlen;
		memcpy(it->val, c->val, c->vlen);
		return;
	default:
		rep->status = KV_BAD_REQUEST;
	}
}

static bool kv_cmd_valid(const struct kv_cmd *c)
{
	return c->op >= KV_PUT && c->op <= KV_CAS && c->klen &&
	       c->klen <= KV_KEY_MAX && c->vlen <= KV_VAL_MAX &&
	       c->elen <= KV_VAL_MAX;
}

/* The commit callback: apply entry @index, exactly once per request. */
static void kv_apply(void *arg, uint64_t index, const void *data, size_t len)
{
	struct kv_state *st = arg;
	struct kv_dup *cl = NULL;
	struct kv_cmd c;
	unsigned int i;

	st->applied = index + 1;
	st->last_index = index;
	memset(&st->last, 0, sizeof(st->last));
	st->last.leader = -1;
	st->last.index = index;
	if (len != sizeof(c)) {
		st->last.status = KV_BAD_REQUEST;
		return;
	}
	memcpy(&c, data, sizeof(c));
	c.client = le64toh(c.client);
	c.req = le64toh(c.req);
	if (!kv_cmd_valid(&c)) {
		st->last.status = KV_BAD_REQUEST;
		return;
	}
	for (i = 0; i < KV_CLIENTS_MAX; i++)
		if (st->clients[i].client == c.client) {
			cl = &st->clients[i];
			break;
		}
	if (cl && c.req <= cl->req) {
		/* A retry decided twice: answer as the first time. */
		st->last = cl->rep;
		st->last.index = index;
		return;
	}
	kv_exec(st, &c, &st->last);
	st->last.index = index;
	if (!cl) {
		cl = &st->clients[st->next_client];
		st->next_client = (st->next_client + 1) % KV_CLIENTS_MAX;
	}
	cl->client = c.client;
	cl->req = c.req;
	cl->rep = st->last;
}

/*
 * Snapshots: the log overwrites entries a snapshot covers, and a replica
 * that needs them - restarted, or left behind - installs the newest
 * snapshot instead (lib/log.c).
 */
static uint8_t *kv_put(uint8_t *p, uint64_t v, unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint64_t kv_get(const uint8_t **p, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		v |= (uint64_t)*(*p)++ << (8 * i);
	return v;
}

static ssize_t kv_snapshot(void *arg, uint64_t applied, void *buf,
			   size_t max)
{
	struct kv_state *st = arg;
	uint8_t *p = buf, *nr_clients;
	unsigned int i, n = 0;

	if (applied != st->applied || max < KV_SNAP_MAX)
		return -ENOSPC;
	p = kv_put(p, KV_SNAP_MAGIC, 4);
	p = kv_put(p, st->nr_items, 4);
	nr_clients = p;
	p = kv_put(p, 0, 4);
	p = kv_put(p, st->next_client, 4);
	for (i = 0; i < st->nr_items; i++) {
		const struct kv_item *it = &st->items[i];

		*p++ = it->klen;
		*p++ = it->vlen;
		memcpy(p, it->key, it->klen);
		p += it->klen;
		memcpy(p, it->val, it->vlen);
		p += it->vlen;
	}
	for (i = 0; i < KV_CLIENTS_MAX; i++) {
		const struct kv_dup *cl = &st->clients[i];

		if (!cl->client && !cl->req)
			continue;
		n++;
		p = kv_put(p, i, 4);
		p = kv_put(p, cl->client, 8);
		p = kv_put(p, cl->req, 8);
		p = kv_put(p, (uint32_t)cl->rep.status, 4);
		p = kv_put(p, (uint32_t)cl->rep.leader, 4);
		p = kv_put(p, cl->rep.vlen, 4);
		p = kv_put(p, cl->rep.index, 8);
		memcpy(p, cl->rep.val, cl->rep.vlen);
		p += cl->rep.vlen;
	}
	kv_put(nr_clients, n, 4);
	return p - (uint8_t *)buf;
}

/* Whether @n more bytes are left between *@p and @end. */
static bool kv_left(const uint8_t *p, const uint8_t *end, size_t n)
{
	return (size_t)(end - p) >= n;
}

/* Parse a snapshot into @to (zeroed); false if it is malformed. */
static bool kv_parse(struct kv_state *to, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	unsigned int i, n;

	if (!kv_left(p, end, KV_SNAP_HDR) || kv_get(&p, 4) != KV_SNAP_MAGIC)
		return false;
	to->nr_items = kv_get(&p, 4);
	n = kv_get(&p, 4);
	to->next_client = kv_get(&p, 4);
	if (to->nr_items > KV_MAP_MAX || n > KV_CLIENTS_MAX ||
	    to->next_client >= KV_CLIENTS_MAX)
		return false;
	for (i = 0; i < to->nr_items; i++) {
		struct kv_item *it = &to->items[i];

		if (!kv_left(p, end, 2))
			return false;
		it->klen = *p++;
		it->vlen = *p++;
		if (!it->klen || it->klen > KV_KEY_MAX ||
		    it->vlen > KV_VAL_MAX ||
		    !kv_left(p, end, it->klen + it->vlen))
			return false;
		memcpy(it->key, p, it->klen);
		p += it->klen;
		memcpy(it->val, p, it->vlen);
		p += it->vlen;
	}
	for (i = 0; i < n; i++) {
		struct kv_dup *cl;
		uint32_t slot;

		if (!kv_left(p, end, KV_SNAP_CLIENT - KV_VAL_MAX))
			return false;
		slot = kv_get(&p, 4);
		if (slot >= KV_CLIENTS_MAX)
			return false;
		cl = &to->clients[slot];
		cl->client = kv_get(&p, 8);
		cl->req = kv_get(&p, 8);
		cl->rep.status = (int32_t)kv_get(&p, 4);
		cl->rep.leader = (int32_t)kv_get(&p, 4);
		cl->rep.vlen = kv_get(&p, 4);
		cl->rep.index = kv_get(&p, 8);
		if (cl->rep.vlen > KV_VAL_MAX ||
		    !kv_left(p, end, cl->rep.vlen))
			return false;
		memcpy(cl->rep.val, p, cl->rep.vlen);
		p += cl->rep.vlen;
	}
	return p == end;
}

static int kv_restore(void *arg, uint64_t applied, const void *buf,
		      size_t len)
{
	struct kv_state *st = arg, *to = calloc(1, sizeof(*to));

	if (!to)
		return -ENOMEM;
	if (!kv_parse(to, buf, len)) {
		free(to);
		return -EBADMSG;
	}
	to->applied = applied;
	to->last_index = UINT64_MAX;
	to->last.leader = -1;
	*st = *to;
	free(to);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The replica.                                                        */

static void kv_on_signal(int sig)
{
	(void)sig;
	kv_stop = 1;
}

static int kv_parse_mems(char *list, struct sockaddr_in *addrs,
			 unsigned int *n)
{
	char *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':');
		long port;

		if (*n == SACRED_RMEM_MAX || !colon)
			return -EINVAL;
		*colon = '\0';
		port = strtol(colon + 1, NULL, 10);
		if (port <= 0 || port > 65535)
			return -EINVAL;
		memset(&addrs[*n], 0, sizeof(addrs[*n]));
		addrs[*n].sin_family = AF_INET;
		addrs[*n].sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, tok, &addrs[*n].sin_addr) != 1)
			return -EINVAL;
		(*n)++;
	}
	return *n ? 0 : -EINVAL;
}

static int kv_listen(const char *dir, unsigned int me)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	mkdir(dir, 0755);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/kv-%u.sock", dir,
		 me);
	unlink(sun.sun_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    listen(fd, 16)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Answer one request. */
static void kv_serve(struct sacred_log *log, struct kv_state *st, int fd,
		     bool verbose, unsigned int me)
{
	struct kv_reply rep = { .leader = -1 };
	struct kv_cmd c;
	uint64_t index;
	ssize_t n;
	int ret;

	n = recv(fd, &c, sizeof(c), 0);
	if (n != (ssize_t)sizeof(c)) {
		rep.status = KV_BAD_REQUEST;
	} else if (!kv_cmd_valid(&c)) {
		rep.status = KV_BAD_REQUEST;
	} else if (!sacred_log_is_leader(log)) {
		rep.status = KV_NOT_LEADER;
		rep.leader = sacred_log_leader(log);
	} else {
		ret = sacred_log_propose(log, &c, sizeof(c), &index);
		if (!ret && st->last_index == index) {
			rep = st->last;
		} else {
			rep.status = ret == -EREMOTE ? KV_NOT_LEADER :
						       KV_UNAVAILABLE;
			rep.leader = sacred_log_leader(log);
			if (verbose)
				fprintf(stderr,
					"sacred-kv %u: append failed: %s\n",
					me, strerror(-ret));
		}
	}
	send(fd, &rep, sizeof(rep), MSG_NOSIGNAL);
}

static void kv_replica_usage(FILE *f)
{
	fprintf(f,
		"Usage: sacred-kv replica -i INDEX -n NPROCS -m ADDR:PORT[,ADDR:PORT...]\n"
		"                         [-d DIR] [-P PIDBASE] [-L REGION] [-H REGION]\n"
		"                         [-c CAPACITY] [-s SUSPECT_MS] [-C CALM]\n"
		"                         [-k KEYFILE] [-v]\n"
		"  -i  this replica's index, 0 .. NPROCS-1 (process id PIDBASE + INDEX)\n"
		"  -n  number of replicas\n"
		"  -m  the memory instances (rdma_cm address and port of each)\n"
		"  -d  directory of the client sockets (default %s)\n"
		"  -P  process id of replica 0 (default %d)\n"
		"  -L  log region id (default %d): exclusive-writer, every replica rw\n"
		"  -H  heartbeat region id (default %d): static, every replica rw\n"
		"  -c  log window in entries (default %d): older ones are replaced by\n"
		"      snapshots of the map\n"
		"  -s  failure detector timeout in ms (default 200); doubled for a\n"
		"      replica found alive after it was suspected (up to 16 x)\n"
		"  -C  a raised timeout halves once its replica ran CALM of it with\n"
		"      its heartbeat never still for half of it (default 8)\n"
		"  -k  this replica's process key (%d raw bytes, from `sacred memory key`)\n"
		"      for memory instances that have a master key; the same for all\n"
		"  -v  report leadership changes and failures on stderr\n",
		KV_DIR_DEFAULT, KV_PID_BASE, KV_LOG_REGION, KV_HB_REGION,
		KV_CAPACITY, SACRED_MAC_LEN);
}

/* A replica: its configuration, then what it runs with. */
struct kv_replica {
	struct sacred_log_attr la;
	struct sacred_rmem_attr ra;
	struct sockaddr_in addrs[SACRED_RMEM_MAX];
	struct sacred_rmem_member mems[SACRED_RMEM_MAX];
	uint8_t key[SACRED_MAC_LEN];
	const char *dir;
	char *keyfile;
	unsigned int nr_mems, pid_base;
	bool verbose;
	struct sacred_rmem *rm;
	struct sacred_log *log;
	struct kv_state *st;
	struct sacred_log_stats ls;	/* as of the last poll */
	uint64_t restores, t0;
	bool leading;
	struct pollfd pfd[KV_CONNS_MAX + 1];	/* [0]: the listener */
	unsigned int nfds;
	int lfd;
};

/*
 * The command line into @r. Return: -1 to go on, else the exit status
 * (0 for -h).
 */
static int kv_replica_args(int argc, char **argv, struct kv_replica *r)
{
	static const struct option long_options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sacred_log_attr *la = &r->la;
	char *memlist = NULL;
	bool have_me = false;
	int opt;
	long v;

	while ((opt = getopt_long(argc, argv, "i:n:m:d:P:L:H:c:s:C:k:vh",
				  long_options, NULL)) != -1) {
		switch (opt) {
		case 'm': memlist = optarg; continue;
		case 'd': r->dir = optarg; continue;
		case 'k': r->keyfile = optarg; continue;
		case 'v': r->verbose = true; continue;
		case 'h': kv_replica_usage(stdout); return 0;
		case 'i': case 'n': case 'P': case 'L': case 'H': case 'c':
		case 's': case 'C':
			break;
		default: kv_replica_usage(stderr); return 2;
		}
		if (!kv_opt_number(opt, optarg, 0,
				   opt == 's' || opt == 'C' ? INT32_MAX :
				   UINT32_MAX, &v))
			return 2;
		switch (opt) {
		case 'i': la->me = v; have_me = true; break;
		case 'n': la->nr_procs = v; break;
		case 'P': r->pid_base = v; break;
		case 'L': la->log_region = v; break;
		case 'H': la->hb_region = v; break;
		case 'c': la->capacity = v; break;
		case 's': la->suspect_ms = v; break;
		case 'C': la->calm_timeouts = v; break;
		}
	}
	if (optind < argc || !have_me || !la->nr_procs || !memlist ||
	    la->me >= la->nr_procs ||
	    kv_parse_mems(memlist, r->addrs, &r->nr_mems)) {
		kv_replica_usage(stderr);
		return 2;
	}
	if (r->keyfile && kv_read_key(r->keyfile, r->key))
		return 2;
	return -1;
}

/* Connected to the memories, the log opened: 0, or 1 (said why). */
static int kv_replica_open(struct kv_replica *r)
{
	struct sacred_log_attr *la = &r->la;
	unsigned int i;
	int ret;

	for (i = 0; i < r->nr_mems; i++)
		r->mems[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&r->addrs[i],
			.key = r->keyfile ? r->key : NULL,
		};
	r->ra.process_id = r->pid_base + la->me;
	r->ra.nr_mems = r->nr_mems;
	r->ra.mems = r->mems;
	ret = sacred_rmem_create(&r->ra, &r->rm);
	if (ret) {
		fprintf(stderr, "sacred-kv %u: connecting to the memories: %s\n",
			la->me, strerror(-ret));
		return 1;
	}
	la->rm = r->rm;
	la->commit = kv_apply;
	la->arg = r->st;
	ret = sacred_log_open(la, &r->log);
	if (ret == -ENOSPC)
		fprintf(stderr,
			"sacred-kv %u: log region %u is too small: it needs %llu bytes for %u replicas and -c %u\n",
			la->me, la->log_region,
			(unsigned long long)sacred_log_region_size(la),
			la->nr_procs, la->capacity);
	else if (ret == -EPROTO)
		fprintf(stderr,
			"sacred-kv %u: opening the log: %s: no quorum of the memories holds one incarnation of regions %u and %u (make each with one tag on every memory: sacred region add ... tag TAG), or a memory speaks another wire version\n",
			la->me, strerror(EPROTO), la->log_region,
			la->hb_region);
	else if (ret)
		fprintf(stderr, "sacred-kv %u: opening the log: %s\n", la->me,
			strerror(-ret));
	return ret ? 1 : 0;
}

/* With -v: a snapshot restored, leadership won or lost since last time. */
static void kv_replica_report(struct kv_replica *r)
{
	unsigned int me = r->la.me;

	sacred_log_stats(r->log, &r->ls);
	if (r->ls.restores != r->restores) {
		r->restores = r->ls.restores;
		if (r->verbose)
			fprintf(stderr,
				"sacred-kv %u: restored a snapshot of %llu entries (the log's older ones are overwritten)\n",
				me, (unsigned long long)r->st->applied);
	}
	if (sacred_log_is_leader(r->log) != r->leading) {
		r->leading = !r->leading;
		if (r->verbose)
			fprintf(stderr,
				"sacred-kv %u: %s at %llu ms (log at %llu)\n",
				me, r->leading ? "leading" : "following",
				(unsigned long long)(kv_now_ms() - r->t0),
				(unsigned long long)r->st->applied);
	}
}

/* Up to 1 ms for the clients: answer requests, drop and take connections. */
static void kv_replica_clients(struct kv_replica *r)
{
	struct pollfd *pfd = r->pfd;
	unsigned int i;

	if (poll(pfd, r->nfds, 1) <= 0)
		return;
	for (i = 1; i < r->nfds; i++) {
		if (!pfd[i].revents)
			continue;
		if (pfd[i].revents & (POLLHUP | POLLERR)) {
			close(pfd[i].fd);
			pfd[i--] = pfd[--r->nfds];
			continue;
		}
		kv_serve(r->log, r->st, pfd[i].fd, r->verbose, r->la.me);
	}
	if (pfd[0].revents & POLLIN) {
		int cfd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);

		if (cfd >= 0 && r->nfds <= KV_CONNS_MAX) {
			pfd[r->nfds].fd = cfd;
			pfd[r->nfds++].events = POLLIN;
		} else if (cfd >= 0) {
			close(cfd);
		}
	}
}

/* Listening in r->dir, serving until SIGTERM or SIGINT: 0, or 1. */
static int kv_replica_serve(struct kv_replica *r)
{
	unsigned int i;

	r->lfd = kv_listen(r->dir, r->la.me);
	if (r->lfd < 0) {
		fprintf(stderr, "sacred-kv %u: listening in %s: %s\n",
			r->la.me, r->dir, strerror(-r->lfd));
		return 1;
	}
	signal(SIGTERM, kv_on_signal);
	signal(SIGINT, kv_on_signal);
	signal(SIGPIPE, SIG_IGN);
	r->pfd[0].fd = r->lfd;
	r->pfd[0].events = POLLIN;
	r->nfds = 1;
	if (r->verbose)
		fprintf(stderr, "sacred-kv %u: up (process %u, %u memories)\n",
			r->la.me, r->ra.process_id, r->nr_mems);
	while (!kv_stop) {
		sacred_log_poll(r->log);
		kv_replica_report(r);
		kv_replica_clients(r);
	}
	for (i = 1; i < r->nfds; i++)
		close(r->pfd[i].fd);
	if (r->verbose)
		fprintf(stderr,
			"sacred-kv %u: stopped: log at %llu, %llu snapshots written, %llu restored\n",
			r->la.me, (unsigned long long)r->st->applied,
			(unsigned long long)r->ls.snapshots,
			(unsigned long long)r->ls.restores);
	return 0;
}

static int kv_replica(int argc, char **argv)
{
	static struct kv_replica r = {
		.la = {
			.log_region = KV_LOG_REGION,
			.hb_region = KV_HB_REGION,
			.capacity = KV_CAPACITY,
			.entry_max = sizeof(struct kv_cmd),
			.snapshot_max = KV_SNAP_MAX,
			.snapshot = kv_snapshot,
			.restore = kv_restore,
		},
		.ra = { .max_io = 65536 },
		.dir = KV_DIR_DEFAULT,
		.pid_base = KV_PID_BASE,
		.lfd = -1,
	};
	int ret;

	r.t0 = kv_now_ms();
	ret = kv_replica_args(argc, argv, &r);
	if (ret >= 0)
		return ret;
	r.st = calloc(1, sizeof(*r.st));
	if (!r.st)
		return 1;
	ret = kv_replica_open(&r);
	if (!ret)
		ret = kv_replica_serve(&r);
	if (r.lfd >= 0) {
		char path[sizeof(((struct sockaddr_un *)0)->sun_path)];

		snprintf(path, sizeof(path), "%s/kv-%u.sock", r.dir, r.la.me);
		unlink(path);
		close(r.lfd);
	}
	sacred_log_close(r.log);
	sacred_rmem_destroy(r.rm);
	free(r.st);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The client.                                                         */

/*
 * A new client's id, from the kernel's random source: two clients that
 * shared one would share a duplicate-table entry, and a request of one
 * could be answered with the other's reply. Never 0 (an empty entry).
 */
static uint64_t kv_client_id(void)
{
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^
		     (uint64_t)clock();
	return id ?: 1;
}

/* A client of the @nr replicas in @dir, asking each for up to 2 s. */
static void kv_client_init(struct kv_client *kc, const char *dir, int nr,
			   int timeout)
{
	*kc = (struct kv_client){
		.dir = dir,
		.nr = nr,
		.timeout_ms = timeout,
		.wait_ms = 2000,
		.id = kv_client_id(),
	};
}

static int kv_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * bench COUNT [PREFIX]: COUNT puts in a row from one process, each timed;
 * prints min, median, p99, max and where the slowest one was - a leader
 * killed meanwhile shows up there as the fail-over. Progress goes to
 * stderr every 100 puts (the demo kills the leader on it).
 */
static int kv_bench(const char *dir, int nr, int timeout, int count,
		    const char *prefix)
{
	struct kv_cmd c = { .op = KV_PUT };
	uint64_t *lat, t0, worst_at = 0;
	struct kv_client kc;
	struct kv_reply rep;
	int i, failed = 0;

	if (count <= 0 || count > 1000000)
		return 2;
	lat = calloc(count, sizeof(*lat));
	if (!lat)
		return 1;
	kv_client_init(&kc, dir, nr, timeout);
	for (i = 0; i < count; i++) {
		struct timespec ts;

		c.klen = snprintf(c.key, sizeof(c.key), "%.20s%d", prefix, i);
		c.vlen = snprintf(c.val, sizeof(c.val), "value %d", i);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		if (kv_client_call(&kc, &c, &rep) || rep.status != KV_OK)
			failed++;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		lat[i] = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec - t0;
		if (lat[i] > lat[worst_at])
			worst_at = i;
		if ((i + 1) % 100 == 0)
			fprintf(stderr, "bench: %d of %d puts\n", i + 1, count);
	}
	printf("bench: %d puts, %d failed; the slowest was put %llu: %.1f ms\n",
	       count, failed, (unsigned long long)worst_at,
	       lat[worst_at] / 1e6);
	qsort(lat, count, sizeof(*lat), kv_cmp_u64);
	printf("bench: latency min %.3f ms, median %.3f ms, p99 %.3f ms, max %.1f ms\n",
	       lat[0] / 1e6, lat[count / 2] / 1e6,
	       lat[(count * 99) / 100 < count ? (count * 99) / 100 :
						count - 1] / 1e6,
	       lat[count - 1] / 1e6);
	free(lat);
	return failed ? 3 : 0;
}

static void kv_client_usage(FILE *f)
{
	fprintf(f,
		"Usage: sacred-kv [-d DIR] [-n REPLICAS] [-t MS] put KEY VALUE\n"
		"       sacred-kv [-d DIR] [-n REPLICAS] [-t MS] get KEY\n"
		"       sacred-kv [-d DIR] [-n REPLICAS] [-t MS] cas KEY EXPECT VALUE\n"
		"       sacred-kv [-d DIR] [-n REPLICAS] [-t MS] bench COUNT [PREFIX]\n"
		"       sacred-kv replica ...   (sacred-kv replica -h)\n"
		"  -d  the replicas' directory (default %s)\n"
		"  -n  number of replicas to try (default 3)\n"
		"  -t  give up after MS milliseconds (default 10000)\n"
		"cas sets KEY to VALUE if it holds EXPECT (\"\" = absent).\n"
		"Exit status: 0 done; 1 not found / cas failed; 2 usage; 3 no answer.\n",
		KV_DIR_DEFAULT);
}

static int kv_client(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = KV_DIR_DEFAULT;
	int opt, nr = 3, timeout = 10000;
	struct kv_cmd c = { 0 };
	struct kv_client kc;
	struct kv_reply rep;
	const char *op;
	long v;

	while ((opt = getopt_long(argc, argv, "+d:n:t:h", long_options,
				  NULL)) != -1) {
		switch (opt) {
		case 'd': dir = optarg; break;
		case 'n':
			if (!kv_opt_number(opt, optarg, 1,
					   SACRED_LOG_MAX_PROCS, &v))
				return 2;
			nr = v;
			break;
		case 't':
			if (!kv_opt_number(opt, optarg, 1, INT32_MAX, &v))
				return 2;
			timeout = v;
			break;
		case 'h': kv_client_usage(stdout); return 0;
		default: kv_client_usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		kv_client_usage(stderr);
		return 2;
	}
	op = argv[optind++];
	if (!strcmp(op, "bench") && (argc - optind == 1 || argc - optind == 2)) {
		if (!kv_number(argv[optind], 1, INT32_MAX, &v)) {
			fprintf(stderr, "sacred-kv: invalid COUNT \"%s\"\n",
				argv[optind]);
			return 2;
		}
		return kv_bench(dir, nr, timeout, v,
				argc - optind == 2 ? argv[optind + 1] : "b");
	}
	if (!strcmp(op, "put") && argc - optind == 2)
		c.op = KV_PUT;
	else if (!strcmp(op, "get") && argc - optind == 1)
		c.op = KV_GET;
	else if (!strcmp(op, "cas") && argc - optind == 3)
		c.op = KV_CAS;
	else {
		kv_client_usage(stderr);
		return 2;
	}
	if (!argv[optind][0] || strlen(argv[optind]) > KV_KEY_MAX) {
		fprintf(stderr, "sacred-kv: a key is 1 to %d bytes\n",
			KV_KEY_MAX);
		return 2;
	}
	c.klen = strlen(argv[optind]);
	memcpy(c.key, argv[optind], c.klen);
	if (c.op == KV_CAS) {
		if (strlen(argv[optind + 1]) > KV_VAL_MAX)
			goto too_long;
		c.elen = strlen(argv[optind + 1]);
		memcpy(c.expect, argv[optind + 1], c.elen);
	}
	if (c.op != KV_GET) {
		const char *v = argv[argc - 1];

		if (strlen(v) > KV_VAL_MAX)
			goto too_long;
		c.vlen = strlen(v);
		memcpy(c.val, v, c.vlen);
	}
	kv_client_init(&kc, dir, nr, timeout);
	if (kv_client_call(&kc, &c, &rep)) {
		fprintf(stderr, "sacred-kv: no replica answered within %d ms\n",
			timeout);
		return 3;
	}
	switch (rep.status) {
	case KV_OK:
		if (c.op == KV_GET)
			printf("%.*s\n", (int)rep.vlen, rep.val);
		else
			printf("OK (log index %llu)\n",
			       (unsigned long long)rep.index);
		return 0;
	case KV_NOT_FOUND:
		printf("(not found)\n");
		return 1;
	case KV_CAS_FAILED:
		printf("FAILED: holds \"%.*s\"\n", (int)rep.vlen, rep.val);
		return 1;
	default:
		fprintf(stderr, "sacred-kv: the replica refused the request\n");
		return 2;
	}

too_long:
	fprintf(stderr, "sacred-kv: a value is at most %d bytes\n",
		KV_VAL_MAX);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "replica"))
		return kv_replica(argc - 1, argv + 1);
	return kv_client(argc, argv);
}
