// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_kv - the replicated key-value service (tools/kv/sacred-kv) end
 * to end: three replica processes on three memory instances, clients
 * doing put, get and compare-and-swap on shared keys from several threads,
 * the leading replica killed with SIGKILL in the middle and started
 * again, or a memory instance brought down and up. Every operation's
 * invocation, response and result are recorded, and the history is
 * checked for linearizability per key (selftests/sacred_lincheck.h): an
 * operation whose answer never came may have taken effect or not, one
 * that was answered took effect exactly once between its invocation and
 * its response.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_lincheck.h"
#include "sacred_test.h"
#include "kv/kv_client.h"

#define TEST_CM_PORT	7541
#define NR_MEMS		3
#define NR_REPLICAS	3
#define PID_BASE	1100
#define LOG_REGION	1
#define HB_REGION	2
#define CAPACITY	16	/* entries: 72 requests wrap the window */
#define NR_CLIENTS	3
#define OPS_PER_CLIENT	24
#define NR_KEYS		2
#define MAX_OPS		(NR_CLIENTS * OPS_PER_CLIENT)
#define OP_TIMEOUT_MS	8000
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define LC_STEPS	10000000	/* the checker's bound: undecided fails */

/* One recorded operation. */
struct hop {
	int key;
	uint8_t op;		/* KV_PUT, KV_GET, KV_CAS */
	int arg;		/* PUT, CAS: value id written */
	int expect;		/* CAS: value id expected (0: absent) */
	int ret;		/* GET: value id read; CAS: 1 swapped, 0 not */
	bool known;		/* an answer came */
	uint64_t call, done;	/* ns; done is UINT64_MAX when unknown */
};

struct history {
	pthread_mutex_t lock;
	struct hop ops[MAX_OPS + 2 * NR_KEYS + 2];
	unsigned int n;
	char values[MAX_OPS + 2][16];	/* value id -> string; 0: absent */
	unsigned int nr_values;
	atomic_uint completed;
};

FIXTURE(kv) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem[NR_MEMS];
	bool have[NR_MEMS];
	pid_t replica[NR_REPLICAS];
	char dir[64];
	char mems[256];
	struct history h;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int region_everywhere(struct sacred_ctrl *ctrl,
			     struct sacred_mem_info *mem, uint32_t id,
			     uint64_t size, uint8_t policy)
{
	return region_on_all(ctrl, mem, NR_MEMS, id, size, policy, PID_BASE,
			     NR_REPLICAS, -1);
}

/* @rel (from the tree's top) of the tree this test program was built in. */
static const char *tree_binary(char *path, size_t size, const char *rel)
{
	char *slash;
	ssize_t n = readlink("/proc/self/exe", path, size - 64);

	if (n <= 0)
		return rel;	/* from selftests/, where the rig runs us */
	path[n] = '\0';
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path, 64, "%s", rel);
	return path;
}

static const char *kv_binary(void)
{
	static char path[4096];

	return tree_binary(path, sizeof(path), "../tools/kv/sacred-kv");
}

/*
 * Replica @i, with the process key in @keyfile if not NULL, its standard
 * error to @errfile if not NULL.
 */
static pid_t start_replica_err(FIXTURE_DATA(kv) *self, unsigned int i,
			       const char *keyfile, const char *errfile)
{
	char idx[8], n[8], pid_base[16], cap[16];
	const char *bin = kv_binary();
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	if (errfile) {
		fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0600);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
	}
	snprintf(idx, sizeof(idx), "%u", i);
	snprintf(n, sizeof(n), "%u", NR_REPLICAS);
	snprintf(pid_base, sizeof(pid_base), "%u", PID_BASE);
	snprintf(cap, sizeof(cap), "%u", CAPACITY);
	execl(bin, "sacred-kv", "replica", "-i", idx,
	      "-n", n, "-m", self->mems, "-d", self->dir, "-P", pid_base,
	      "-c", cap, "-L", "1", "-H", "2", "-s", "300", "-v",
	      keyfile ? "-k" : (char *)NULL, keyfile, (char *)NULL);
	_exit(127);
}

static pid_t start_replica_key(FIXTURE_DATA(kv) *self, unsigned int i,
			       const char *keyfile)
{
	return start_replica_err(self, i, keyfile, NULL);
}

static pid_t start_replica(FIXTURE_DATA(kv) *self, unsigned int i)
{
	return start_replica_err(self, i, NULL, NULL);
}

/*
 * Whether replica @i listens (it has opened the log) within @ms. A test
 * that kills replicas right after it started them waits for this first:
 * under valgrind, a SIGTERM that reaches a child between fork() and
 * exec() is queued by valgrind and lost with the exec, and the replica
 * then runs for ever (seen as a teardown hanging in waitpid()).
 */
static bool listening(FIXTURE_DATA(kv) *self, unsigned int i, int ms)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/kv-%u.sock", self->dir, i);
	for (; ms > 0; ms -= 20) {
		if (!access(path, F_OK))
			return true;
		usleep(20000);
	}
	return false;
}

FIXTURE_SETUP(kv)
{
	char addr[64];
	unsigned int i;

	if (!st_open(_metadata, &self->ctrl, NR_MEMS, 0))
		return;
	if (access(kv_binary(), X_OK))
		SKIP(return, "tools/kv/sacred-kv is not built");
	pthread_mutex_init(&self->h.lock, NULL);
	snprintf(self->dir, sizeof(self->dir), "/tmp/sacred-kv-test-%d",
		 getpid());
	ASSERT_EQ(0, mems_new(self->ctrl, NR_MEMS, TEST_CM_PORT, self->mem,
			      self->have, NULL));
	for (i = 0; i < NR_MEMS; i++) {
		struct sockaddr_in *sin;

		sin = (struct sockaddr_in *)&self->mem[i].addr;
		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
		snprintf(self->mems + strlen(self->mems),
			 sizeof(self->mems) - strlen(self->mems), "%s%s:%u",
			 i ? "," : "", addr, ntohs(sin->sin_port));
	}
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, LOG_REGION,
				       2 << 20,
				       SACRED_POLICY_EXCLUSIVE_WRITER));
	ASSERT_EQ(0, region_everywhere(self->ctrl, self->mem, HB_REGION,
				       4096, SACRED_POLICY_STATIC));
	for (i = 0; i < NR_REPLICAS; i++) {
		self->replica[i] = start_replica(self, i);
		ASSERT_LT(0, self->replica[i]);
	}
	for (i = 0; i < NR_REPLICAS; i++)
		ASSERT_TRUE(listening(self, i, 60000));
}

FIXTURE_TEARDOWN(kv)
{
	unsigned int i;

	for (i = 0; i < NR_REPLICAS; i++) {
		if (self->replica[i] <= 0)
			continue;
		if (waitpid(self->replica[i], NULL, WNOHANG) == self->replica[i])
			continue;
		listening(self, i, 10000);	/* exec'd: see listening() */
		kill(self->replica[i], SIGTERM);
		waitpid(self->replica[i], NULL, 0);
	}
	mems_del(self->ctrl, self->mem, self->have, NR_MEMS);
	sh("rm -rf %s", self->dir);
}

/* ------------------------------------------------------------------ */
/* A client: tools/kv/kv_client.c, OP_TIMEOUT_MS a request, 2 s an answer. */

struct client {
	FIXTURE_DATA(kv) *self;
	unsigned int id;
	struct kv_client kc;
};

static struct kv_client kv_client_of(FIXTURE_DATA(kv) *self, uint64_t id)
{
	return (struct kv_client){
		.dir = self->dir,
		.nr = NR_REPLICAS,
		.timeout_ms = OP_TIMEOUT_MS,
		.wait_ms = 2000,
		.id = id,
	};
}

static int value_id(struct history *h, const char *v, size_t len)
{
	unsigned int i;

	if (!len)
		return 0;
	for (i = 1; i <= h->nr_values; i++)
		if (strlen(h->values[i]) == len && !memcmp(h->values[i], v, len))
			return i;
	return -1;	/* never written: invalid */
}

static void *client_thread(void *arg)
{
	struct client *c = arg;
	struct history *h = &c->self->h;
	unsigned int k;

	for (k = 0; k < OPS_PER_CLIENT; k++) {
		struct kv_cmd cmd = { 0 };
		struct kv_reply rep;
		struct hop op = { .key = (c->id + k) % NR_KEYS };
		int ret, choice = (c->id * 7 + k * 3) % 3;
		char v[16];

		cmd.klen = snprintf(cmd.key, sizeof(cmd.key), "key%d", op.key);
		pthread_mutex_lock(&h->lock);
		snprintf(v, sizeof(v), "c%u-%u", c->id, k);
		if (choice != 1) {
			op.arg = ++h->nr_values;
			memcpy(h->values[op.arg], v, sizeof(v));
		}
		pthread_mutex_unlock(&h->lock);
		if (choice == 0) {
			op.op = KV_PUT;
		} else if (choice == 1) {
			op.op = KV_GET;
		} else {
			op.op = KV_CAS;
			/* Expect what a get last saw, or absent. */
			op.expect = 0;
			pthread_mutex_lock(&h->lock);
			for (ret = h->n - 1; ret >= 0; ret--) {
				struct hop *o = &h->ops[ret];

				if (o->key == op.key && o->known &&
				    o->op == KV_GET) {
					op.expect = o->ret > 0 ? o->ret : 0;
					break;
				}
			}
			pthread_mutex_unlock(&h->lock);
			if (op.expect > 0) {
				cmd.elen = strlen(h->values[op.expect]);
				memcpy(cmd.expect, h->values[op.expect],
				       cmd.elen);
			}
		}
		cmd.op = op.op;
		if (op.op != KV_GET) {
			cmd.vlen = strlen(v);
			memcpy(cmd.val, v, cmd.vlen);
		}
		/*
		 * Each operation starts at another replica, as from a client
		 * that does not know the leader: followers are asked too, and
		 * must send it on, never answer from their own state.
		 */
		c->kc.hint = (c->id + k) % NR_REPLICAS;
		op.call = now_ns();
		ret = kv_client_call(&c->kc, &cmd, &rep);
		op.done = now_ns();
		if (ret) {
			op.known = false;
			op.done = UINT64_MAX;
		} else {
			op.known = true;
			if (op.op == KV_GET)
				op.ret = rep.status == KV_NOT_FOUND ? 0 :
					 value_id(h, rep.val, rep.vlen);
			else if (op.op == KV_CAS)
				op.ret = rep.status == KV_OK;
		}
		pthread_mutex_lock(&h->lock);
		h->ops[h->n++] = op;
		pthread_mutex_unlock(&h->lock);
		atomic_fetch_add(&h->completed, 1);
	}
	return NULL;
}

/*
 * A GET of key@key at replica @r only, recorded: asked again while @r
 * does not lead (a GET changes nothing, so the interval runs from the
 * first ask). False if @r did not answer within @ms.
 */
static bool get_at(FIXTURE_DATA(kv) *self, int r, int key, int ms)
{
	struct history *h = &self->h;
	struct hop op = { .key = key, .op = KV_GET, .call = now_ns() };
	uint64_t end = op.call + ms * 1000000ULL;
	struct kv_cmd cmd = { .op = KV_GET };
	struct kv_reply rep;
	int ret;

	cmd.klen = snprintf(cmd.key, sizeof(cmd.key), "key%d", key);
	cmd.client = htole64(4343);
	while (now_ns() < end) {
		/* New each time: a replica answers a repeat from its table. */
		cmd.req = htole64(now_ns());
		ret = kv_client_exchange(self->dir, r, 2000, &cmd, &rep);
		if (ret && ret != -ENOTCONN)
			return false;
		if (ret || (rep.status != KV_OK && rep.status != KV_NOT_FOUND)) {
			usleep(20000);
			continue;
		}
		op.done = now_ns();
		op.known = true;
		op.ret = rep.status == KV_NOT_FOUND ? 0 :
			 value_id(h, rep.val, rep.vlen);
		pthread_mutex_lock(&h->lock);
		h->ops[h->n++] = op;
		pthread_mutex_unlock(&h->lock);
		return true;
	}
	return false;
}

/*
 * The history, checked for linearizability per key
 * (selftests/sacred_lincheck.h); what was checked goes to the log.
 */
static bool linearizable(struct __test_metadata *_metadata,
			 struct history *h)
{
	static struct lc_op ops[MAX_OPS + 2 * NR_KEYS + 2];
	struct lc_result r;
	unsigned int i;

	for (i = 0; i < h->n; i++) {
		const struct hop *o = &h->ops[i];

		ops[i] = (struct lc_op){
			.call = o->call,
			.done = o->done,
			.key = o->key,
			.kind = o->op == KV_PUT ? LC_PUT :
				o->op == KV_GET ? LC_GET : LC_CAS,
			.outcome = o->known ? LC_OK : LC_UNKNOWN,
			.val = o->arg,
			.expect = o->expect,
			.out = o->ret,	/* -1, never written: no put has it */
		};
		if (o->known && o->op == KV_GET && o->ret < 0)
			TH_LOG("key%d: a get returned a value nobody wrote",
			       o->key);
	}
	lc_check(ops, h->n, false, LC_STEPS, &r);
	TH_LOG("history checked: %zu operations (%zu unanswered) on %zu keys, %llu search steps: %s",
	       r.ops, r.unknown, r.keys, (unsigned long long)r.steps,
	       lc_verdict_name(r.verdict));
	if (r.verdict != LC_LINEARIZABLE)
		TH_LOG("key%llu: %zu operations, at most %zu of them in one order",
		       (unsigned long long)r.bad_key, r.bad_ops, r.bad_depth);
	return r.verdict == LC_LINEARIZABLE;
}

/* A put of key@key, recorded: true if it was answered. */
static bool put_once(FIXTURE_DATA(kv) *self, int key)
{
	struct kv_client kc = kv_client_of(self,
					   ((uint64_t)getpid() << 16) + 99);
	struct history *h = &self->h;
	struct hop op = { .key = key, .op = KV_PUT };
	struct kv_cmd cmd = { .op = KV_PUT };
	struct kv_reply rep;

	cmd.klen = snprintf(cmd.key, sizeof(cmd.key), "key%d", key);
	pthread_mutex_lock(&h->lock);
	op.arg = ++h->nr_values;
	snprintf(h->values[op.arg], sizeof(h->values[op.arg]), "once%d", key);
	cmd.vlen = strlen(h->values[op.arg]);
	memcpy(cmd.val, h->values[op.arg], cmd.vlen);
	pthread_mutex_unlock(&h->lock);
	op.call = now_ns();
	op.known = !kv_client_call(&kc, &cmd, &rep) && rep.status == KV_OK;
	op.done = op.known ? now_ns() : UINT64_MAX;
	pthread_mutex_lock(&h->lock);
	h->ops[h->n++] = op;
	pthread_mutex_unlock(&h->lock);
	return op.known;
}

static void run_clients(FIXTURE_DATA(kv) *self, pthread_t *th,
			struct client *c)
{
	unsigned int i;

	for (i = 0; i < NR_CLIENTS; i++) {
		c[i] = (struct client){
			.self = self,
			.id = i,
			.kc = kv_client_of(self,
					   ((uint64_t)getpid() << 16) + i),
		};
		pthread_create(&th[i], NULL, client_thread, &c[i]);
	}
}

static void wait_completed(struct history *h, unsigned int n)
{
	while (atomic_load(&h->completed) < n)
		usleep(2000);
}

TEST_F(kv, linearizable_across_a_leader_kill_and_restart)
{
	struct client c[NR_CLIENTS];
	pthread_t th[NR_CLIENTS];
	uint64_t worst = 0;
	unsigned int i;

	if (!self->replica[NR_REPLICAS - 1])
		return;	/* setup skipped */

	/* A key written once, before everything: only a snapshot keeps it. */
	ASSERT_TRUE(put_once(self, NR_KEYS));
	run_clients(self, th, c);
	wait_completed(&self->h, MAX_OPS / 3);
	/* Replica 0 leads (the lowest alive): kill it, no goodbye. */
	ASSERT_EQ(0, kill(self->replica[0], SIGKILL));
	waitpid(self->replica[0], NULL, 0);
	self->replica[0] = 0;
	/*
	 * It comes back under load: the start of the log is overwritten by
	 * then (a window of CAPACITY entries), so it installs the newest
	 * snapshot, follows and, the lowest id alive, takes the lead back -
	 * a second fail-over the clients ride through. Once they are done,
	 * it answers a read of every key from its restored map - also of the
	 * key written once before the clients started, which only the
	 * snapshot carries - and those reads join the history the checker
	 * judges.
	 */
	wait_completed(&self->h, MAX_OPS / 2);
	self->replica[0] = start_replica(self, 0);
	ASSERT_LT(0, self->replica[0]);
	for (i = 0; i < NR_CLIENTS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i <= NR_KEYS; i++)
		EXPECT_TRUE(get_at(self, 0, i, 30000))
			TH_LOG("replica 0 did not lead again");
	EXPECT_EQ(0, waitpid(self->replica[0], NULL, WNOHANG))
		TH_LOG("the restarted replica exited");
	for (i = 0; i < self->h.n; i++)
		if (self->h.ops[i].known &&
		    self->h.ops[i].done - self->h.ops[i].call > worst)
			worst = self->h.ops[i].done - self->h.ops[i].call;
	TH_LOG("slowest answered operation (spans the fail-over): %llu ms",
	       (unsigned long long)(worst / 1000000));
	EXPECT_TRUE(linearizable(_metadata, &self->h));
	for (i = 0; i < self->h.n; i++)
		if (!self->h.ops[i].known)
			TH_LOG("unanswered: op %d on key%d", self->h.ops[i].op,
			       self->h.ops[i].key);
}

TEST_F(kv, linearizable_with_a_memory_down_and_back)
{
	struct client c[NR_CLIENTS];
	pthread_t th[NR_CLIENTS];
	unsigned int i;

	if (!self->replica[NR_REPLICAS - 1])
		return;	/* setup skipped */

	run_clients(self, th, c);
	wait_completed(&self->h, MAX_OPS / 4);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id,
				    SACRED_MEM_DOWN, 0, NULL));
	wait_completed(&self->h, MAX_OPS / 2);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem[1].id,
				    SACRED_MEM_UP, 0, NULL));
	for (i = 0; i < NR_CLIENTS; i++)
		pthread_join(th[i], NULL);
	EXPECT_TRUE(linearizable(_metadata, &self->h));
	for (i = 0; i < self->h.n; i++)
		EXPECT_TRUE(self->h.ops[i].known);
}

/* One put or get through the replicas; the reply's status, or -1. */
static int kv_do(FIXTURE_DATA(kv) *self, uint8_t op, const char *key,
		 const char *val, struct kv_reply *rep)
{
	struct kv_client kc = kv_client_of(self, 4242);
	struct kv_cmd cmd = { .op = op };

	cmd.klen = strlen(key);
	memcpy(cmd.key, key, cmd.klen);
	if (val) {
		cmd.vlen = strlen(val);
		memcpy(cmd.val, val, cmd.vlen);
	}
	kc.req = now_ns();	/* a new request number on every call */
	return kv_client_call(&kc, &cmd, rep) ? -1 : rep->status;
}

/* Whether @pid exits within @ms; its exit status into *@status. */
static bool exits_within(pid_t pid, int ms, int *status)
{
	for (; ms > 0; ms -= 50) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return true;
		usleep(50000);
	}
	return false;
}

TEST_F(kv, replicas_prove_their_keys_to_keyed_memories)
{
	uint8_t master[32], key[SACRED_MAC_LEN], got[SACRED_MAC_LEN];
	char path[NR_REPLICAS][128], mpath[128];
	static char cli[4096];
	struct kv_reply rep;
	unsigned int i;
	int status;
	pid_t pid;
	FILE *f;

	if (!self->replica[NR_REPLICAS - 1])
		return;	/* setup skipped */

	for (i = 0; i < NR_REPLICAS; i++) {
		kill(self->replica[i], SIGTERM);
		waitpid(self->replica[i], NULL, 0);
		self->replica[i] = 0;
	}
	for (i = 0; i < sizeof(master); i++)
		master[i] = i * 37 + 11;
	for (i = 0; i < NR_MEMS; i++)
		ASSERT_EQ(0, sacred_mem_set_key(self->ctrl, self->mem[i].id,
						master, sizeof(master)));
	ASSERT_EQ(0, sh("mkdir -p %s", self->dir));
	snprintf(mpath, sizeof(mpath), "%s/master", self->dir);
	f = fopen(mpath, "wb");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fwrite(master, sizeof(master), 1, f));
	ASSERT_EQ(0, fclose(f));
	/* The admin's way: sacred memory key; the library's must agree. */
	for (i = 0; i < NR_REPLICAS; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/key-%u", self->dir, i);
		ASSERT_EQ(0, sh("%s memory key %s pid %u > %s",
				tree_binary(cli, sizeof(cli), "../tools/sacred"),
				mpath, PID_BASE + i, path[i]));
		ASSERT_EQ(0, sacred_process_key(master, sizeof(master),
						PID_BASE + i, key));
		f = fopen(path[i], "rb");
		ASSERT_NE(NULL, f);
		ASSERT_EQ(1, fread(got, sizeof(got), 1, f));
		fclose(f);
		EXPECT_EQ(0, memcmp(key, got, sizeof(key)));
	}

	/* Without its key a replica cannot connect: it says so and exits. */
	pid = start_replica(self, 0);
	ASSERT_LT(0, pid);
	ASSERT_TRUE(exits_within(pid, 30000, &status));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	/* Replica 2's key is not replica 0's. */
	pid = start_replica_key(self, 0, path[2]);
	ASSERT_LT(0, pid);
	ASSERT_TRUE(exits_within(pid, 30000, &status));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);

	for (i = 0; i < NR_REPLICAS; i++) {
		self->replica[i] = start_replica_key(self, i, path[i]);
		ASSERT_LT(0, self->replica[i]);
	}
	ASSERT_EQ(KV_OK, kv_do(self, KV_PUT, "keyed", "yes", &rep));
	ASSERT_EQ(KV_OK, kv_do(self, KV_GET, "keyed", NULL, &rep));
	EXPECT_EQ(3, rep.vlen);
	EXPECT_EQ(0, memcmp(rep.val, "yes", 3));
}

/*
 * A replica whose memories hold no quorum of one incarnation of the
 * heartbeat region - memories 1 and 2 made it again, each with a tag of
 * its own - does not start: it says why and exits 1.
 */
TEST_F(kv, replica_refuses_regions_of_no_one_incarnation)
{
	char err[96], msg[1024];
	unsigned int i;
	FILE *f;
	int st;

	ASSERT_TRUE(listening(self, 2, 10000));
	kill(self->replica[2], SIGTERM);
	waitpid(self->replica[2], NULL, 0);
	self->replica[2] = 0;
	for (i = 1; i < NR_MEMS; i++) {
		ASSERT_EQ(0, sacred_region_del(self->ctrl, self->mem[i].id,
					       HB_REGION));
		ASSERT_EQ(0, region_on_all_tagged(self->ctrl, self->mem + i, 1,
						  HB_REGION, 4096,
						  SACRED_POLICY_STATIC,
						  PID_BASE, NR_REPLICAS, -1,
						  0x4b560000 + i));
	}
	snprintf(err, sizeof(err), "%s.err", self->dir);
	self->replica[2] = start_replica_err(self, 2, NULL, err);
	ASSERT_LT(0, self->replica[2]);
	ASSERT_EQ(self->replica[2], waitpid(self->replica[2], &st, 0));
	self->replica[2] = 0;
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(1, WEXITSTATUS(st));
	f = fopen(err, "r");
	ASSERT_NE(NULL, f);
	msg[fread(msg, 1, sizeof(msg) - 1, f)] = '\0';
	fclose(f);
	unlink(err);
	TH_LOG("%s", msg);
	EXPECT_NE(NULL, strstr(msg, "one incarnation of regions 1 and 2"));
}

TEST_HARNESS_MAIN
