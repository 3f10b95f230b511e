// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_module - load and unload sacred.ko with devices and instances
 * present.
 *
 * Unloading must tear everything down (memory instances and their
 * listeners, the netlink family) without help, and loading again must
 * find every RDMA device that is already there. The rig checks the
 * kernel log for warnings and leak reports after the run.
 *
 * Also under load: several peer processes stream RDMA writes, reads and
 * changePermissions while the module is unloaded; their operations in
 * flight must fail (not hang), the exit path must find no live object,
 * and the same processes must work again once the module is back.
 *
 * Uses the module file named by SACRED_KO; runs last, and leaves the
 * module loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/bpf.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

static int count_dev(const struct sacred_dev_info *info, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

FIXTURE(module) {
	const char *ko;
	int ndev;
};

FIXTURE_SETUP(module)
{
	struct sacred_ctrl *ctrl;

	self->ko = getenv("SACRED_KO");
	if (!self->ko)
		SKIP(return, "SACRED_KO does not name the module file");
	if (sacred_ctrl_open(&ctrl))
		SKIP(return, "sacred.ko is not loaded");
	ASSERT_EQ(0, sacred_dev_list(ctrl, count_dev, &self->ndev));
	sacred_ctrl_close(ctrl);
}

FIXTURE_TEARDOWN(module)
{
	struct sacred_ctrl *ctrl;

	/* Leave the module loaded for whatever runs next. */
	if (self->ko && sacred_ctrl_open(&ctrl) == -ENOENT)
		module_load(self->ko);
	else if (self->ko)
		sacred_ctrl_close(ctrl);
}

TEST_F(module, unload_with_instances_then_reload_finds_devices)
{
	struct sacred_mem_params p = { .id = SACRED_MEM_ID_ANY };
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info m;
	char dev[64];
	int i, n = 0;

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	p.dev_name = dev;
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, sacred_mem_new(ctrl, &p, &m));
	sacred_ctrl_close(ctrl);

	ASSERT_EQ(0, module_unload());
	EXPECT_EQ(-ENOENT, sacred_ctrl_open(&ctrl));

	ASSERT_EQ(0, module_load(self->ko));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	ASSERT_EQ(0, sacred_dev_list(ctrl, count_dev, &n));
	EXPECT_EQ(self->ndev, n);
	EXPECT_EQ(-ENOENT, sacred_mem_get(ctrl, m.id, &m));
	sacred_ctrl_close(ctrl);
}

/* A socket filter returning @verdict, by the bpf() system call itself. */
static int const_prog(uint32_t verdict)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = (int32_t)verdict },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr = {
		.prog_type = BPF_PROG_TYPE_SOCKET_FILTER,
		.insns = (uintptr_t)insns,
		.insn_cnt = 2,
		.license = (uintptr_t)"GPL",
	};

	return syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

static int prog_fd_by_id(uint32_t id)
{
	union bpf_attr attr = { .prog_id = id };

	return syscall(SYS_bpf, BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr));
}

/*
 * Unload with bpf regions: the module held the only reference to each
 * region's program, and the programs go with it.
 */
TEST_F(module, unload_with_bpf_regions_releases_their_programs)
{
	struct sacred_mem_params p = { .id = SACRED_MEM_ID_ANY };
	struct sacred_region_info ri;
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info m;
	uint32_t ids[4];
	char dev[64];
	int i, fd, gone = 0, tries;

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	p.dev_name = dev;
	ASSERT_EQ(0, sacred_mem_new(ctrl, &p, &m));
	for (i = 0; i < 4; i++) {
		fd = const_prog(SACRED_VERDICT_GRANT);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, sacred_region_new_prog(ctrl, m.id,
						    SACRED_REGION_ID_ANY, 4096,
						    fd, NULL, &ri));
		close(fd);
		ASSERT_EQ(0, sacred_region_prog_id(ctrl, m.id, ri.id,
						   &ids[i]));
		/* Alive on the module's reference alone. */
		fd = prog_fd_by_id(ids[i]);
		ASSERT_LE(0, fd);
		close(fd);
	}
	sacred_ctrl_close(ctrl);

	ASSERT_EQ(0, module_unload());
	/* A program is freed after an RCU grace period and a work item. */
	for (tries = 0; tries < 100 && gone < 4; tries++) {
		usleep(20000);
		for (gone = 0, i = 0; i < 4; i++) {
			fd = prog_fd_by_id(ids[i]);
			if (fd < 0 && errno == ENOENT)
				gone++;
			else if (fd >= 0)
				close(fd);
		}
	}
	EXPECT_EQ(4, gone);
	ASSERT_EQ(0, module_load(self->ko));
}

/*
 * Unload while a process is connected, holds write and keeps writing:
 * its connection is fenced and torn down, its MRs freed, and its next
 * operation fails cleanly.
 */
TEST_F(module, unload_with_connected_writer)
{
	struct sacred_acl_entry acl = { .process_id = 1,
					.access = SACRED_ACCESS_READ |
						  SACRED_ACCESS_WRITE };
	struct sacred_mem_params p = { .id = SACRED_MEM_ID_ANY };
	struct sacred_conn_attr attr = { .process_id = 1 };
	struct sacred_region_attr ra;
	struct sacred_region_info ri;
	struct sacred_mem_info m;
	struct sacred_ctrl *ctrl;
	struct sacred_conn *c;
	uint64_t v = 1;
	char dev[64];
	int i, ret = 0;

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	p.dev_name = dev;
	ASSERT_EQ(0, sacred_mem_new(ctrl, &p, &m));
	ASSERT_EQ(0, sacred_region_new(ctrl, m.id, SACRED_REGION_ID_ANY, 1 << 20,
				       SACRED_POLICY_STATIC, &ri));
	ASSERT_EQ(0, sacred_region_set_acl(ctrl, m.id, ri.id, &acl, 1));
	sacred_ctrl_close(ctrl);

	attr.addr = (struct sockaddr *)&m.addr;
	ASSERT_EQ(0, sacred_conn_create(&attr, &c));
	ASSERT_EQ(0, sacred_attach(c, ri.id, &ra));
	ASSERT_EQ(0, sacred_write(c, ri.id, 0, &v, sizeof(v)));

	ASSERT_EQ(0, module_unload());
	for (i = 0; i < 100 && !ret; i++)
		ret = sacred_write(c, ri.id, 0, &v, sizeof(v));
	EXPECT_NE(0, ret);
	sacred_conn_destroy(c);
	ASSERT_EQ(0, module_load(self->ko));
}

/*
 * Under load. NR_PEERS processes (ids PEER0..) each stream batches of 4
 * KiB and 16 KiB writes (one and several MTUs) and reads on their own
 * part of a static region plus a changePermission on an exclusive-writer
 * region (peer 0 asks for write, the others for read, so that no peer
 * fences another and the stream is steady), reconnecting whenever their
 * connection breaks. What each one saw is counted in shared memory.
 */
#define NR_PEERS	4
#define PEER0		31
#define PEER_SLICE	(256 * 1024)
#define BATCH		14
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

struct peer_stat {
	atomic_long ok;		/* operations that completed */
	atomic_long failed;	/* posted operations that failed */
	atomic_long cut;	/* ... of those posted before the unload */
	atomic_long refused;	/* connects, attaches, posts that failed */
	atomic_long connects;
	atomic_long beat;	/* loop iterations: the peer is not stuck */
};

struct traffic {
	atomic_int stop;
	atomic_int unloading;	/* set just before the unload starts */
	struct peer_stat p[NR_PEERS];
};

/* One peer's batch: 6 writes, 6 reads, a changePermission, a read. */
static unsigned int peer_batch(struct sacred_io *io, unsigned int i,
			       uint32_t shared, uint32_t excl, uint8_t *wbuf,
			       uint8_t (*rbuf)[16384])
{
	unsigned int k, n = 0;

	for (k = 0; k < 6; k++)
		io[n++] = (struct sacred_io){
			.opcode = SACRED_IO_WRITE,
			.region_id = shared,
			.offset = i * PEER_SLICE + k * 16384,
			.buf = wbuf,
			.len = k & 1 ? 16384 : 4096,
		};
	for (k = 0; k < 6; k++)
		io[n++] = (struct sacred_io){
			.opcode = SACRED_IO_READ,
			.region_id = shared,
			.offset = i * PEER_SLICE + k * 16384,
			.buf = rbuf[k],
			.len = k & 1 ? 16384 : 4096,
		};
	io[n++] = (struct sacred_io){
		.opcode = SACRED_IO_PERM,
		.perm = { .region_id = excl,
			  .access = i ? SACRED_ACCESS_READ : RW },
	};
	io[n++] = (struct sacred_io){
		.opcode = SACRED_IO_READ,
		.region_id = shared,
		.offset = i * PEER_SLICE,
		.buf = rbuf[6],
		.len = 4096,
	};
	return n;
}

/*
 * Peer @i, a child forked before its parent touched verbs. Exits 0 when
 * told to stop, 3 if a batch's results took longer than 30 s (a hang).
 */
static void peer_main(struct traffic *tr, unsigned int i,
		      const struct sockaddr_storage *addr, uint32_t shared,
		      uint32_t excl)
{
	static uint8_t wbuf[16384], rbuf[7][16384];
	struct sacred_conn_attr attr = {
		.addr = (const struct sockaddr *)addr,
		.process_id = PEER0 + i,
		.timeout_ms = 2000,
		.bounce_size = 16 * 32768,
	};
	struct peer_stat *st = &tr->p[i];
	struct sacred_io_result res[BATCH];
	struct sacred_io io[BATCH];
	struct sacred_conn *c = NULL;
	int ret, k;

	memset(wbuf, 0x40 + i, sizeof(wbuf));
	while (!atomic_load(&tr->stop)) {
		double deadline;
		unsigned int n;
		int before;

		atomic_fetch_add(&st->beat, 1);
		if (c && sacred_conn_broken(c)) {
			sacred_conn_destroy(c);
			c = NULL;
		}
		if (!c) {
			if (sacred_conn_create(&attr, &c)) {
				c = NULL;
			} else if (sacred_attach(c, shared, NULL) ||
				   sacred_attach(c, excl, NULL)) {
				sacred_conn_destroy(c);
				c = NULL;
			}
			if (!c) {
				atomic_fetch_add(&st->refused, 1);
				usleep(20000);
				continue;
			}
			atomic_fetch_add(&st->connects, 1);
		}
		n = peer_batch(io, i, shared, excl, wbuf, rbuf);
		before = !atomic_load(&tr->unloading);
		ret = sacred_io_post(c, io, n);
		if (ret < 0) {
			atomic_fetch_add(&st->refused, 1);
			usleep(1000);
			continue;
		}
		deadline = now_s() + 30;
		while (sacred_io_pending(c)) {
			if (now_s() > deadline)
				_exit(3);
			sacred_io_wait(&c, 1, 100);
			ret = sacred_io_poll(c, res, BATCH);
			for (k = 0; k < ret; k++) {
				atomic_fetch_add(res[k].status ? &st->failed :
						 &st->ok, 1);
				/* Posted before, failed: cut by the unload. */
				if (res[k].status && before)
					atomic_fetch_add(&st->cut, 1);
			}
		}
	}
	sacred_conn_destroy(c);
	_exit(0);
}

/* Kernel log lines since @kmsg was opened that mean trouble; logged. */
static int kernel_trouble(int kmsg, struct __test_metadata *_metadata)
{
	static const char *const bad[] = {
		"leaked objects", "WARNING", "BUG", "Oops", "refcount_t",
		"general protection", "list_add corruption",
		"list_del corruption", "hung_task", "blocked for more than",
	};
	char rec[1024];
	unsigned int k;
	int n, found = 0;

	while ((n = read(kmsg, rec, sizeof(rec) - 1)) > 0 ||
	       (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = 0;
		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
			if (strstr(rec, bad[k])) {
				TH_LOG("kernel: %s", strchr(rec, ';') ?
				       strchr(rec, ';') + 1 : rec);
				found++;
				break;
			}
	}
	return found;
}

/* Every peer's counter @field above @base[i] by at least @by, within @s. */
#define ALL_PEERS_GROW(tr, field, base, by, s) ({			\
	double __end = now_s() + (s);					\
	unsigned int __i;						\
	bool __all;							\
	do {								\
		__all = true;						\
		for (__i = 0; __i < NR_PEERS; __i++)			\
			if (atomic_load(&(tr)->p[__i].field) <		\
			    (base)[__i] + (by))				\
				__all = false;				\
		if (!__all)						\
			usleep(20000);					\
	} while (!__all && now_s() < __end);				\
	__all; })

static void snap(struct traffic *tr, long *ok, long *failed, long *beat)
{
	unsigned int i;

	for (i = 0; i < NR_PEERS; i++) {
		ok[i] = atomic_load(&tr->p[i].ok);
		failed[i] = atomic_load(&tr->p[i].failed) +
			    atomic_load(&tr->p[i].refused);
		beat[i] = atomic_load(&tr->p[i].beat);
	}
}

/* The instance, its regions and ACLs; again with the same ids on reload. */
static int make_instance(struct sacred_ctrl *ctrl, const char *dev,
			 struct sacred_mem_info *m, uint32_t *shared,
			 uint32_t *excl)
{
	struct sacred_mem_params p = { .id = m->id, .dev_name = dev };
	struct sacred_acl_entry acl[NR_PEERS];
	struct sacred_region_info ri;
	unsigned int i;
	int ret;

	/* Again: the same address and rdma_cm port. */
	if (m->id != SACRED_MEM_ID_ANY)
		p.addr = m->addr;
	for (i = 0; i < NR_PEERS; i++)
		acl[i] = (struct sacred_acl_entry){
			.process_id = PEER0 + i,
			.access = SACRED_ACCESS_READ | SACRED_ACCESS_WRITE,
		};
	ret = sacred_mem_new(ctrl, &p, m);
	if (!ret)
		ret = sacred_region_new(ctrl, m->id, *shared,
					NR_PEERS * PEER_SLICE,
					SACRED_POLICY_STATIC, &ri);
	if (!ret) {
		*shared = ri.id;
		ret = sacred_region_set_acl(ctrl, m->id, ri.id, acl,
					    NR_PEERS);
	}
	if (!ret)
		ret = sacred_region_new(ctrl, m->id, *excl, 65536,
					SACRED_POLICY_EXCLUSIVE_WRITER, &ri);
	if (!ret) {
		*excl = ri.id;
		ret = sacred_region_set_acl(ctrl, m->id, ri.id, acl,
					    NR_PEERS);
	}
	return ret;
}

/*
 * rmmod while NR_PEERS processes stream writes, reads and
 * changePermissions. Unloading takes no reference from peers (their
 * queue pairs, user contexts and rdma_cm ids live in rxe and ib_core, not
 * in this module), so it must succeed at once: the ib_client's remove
 * destroys every instance, fencing and draining each connection, and the
 * exit path checks the live-object counters (a "leaked objects" WARNING
 * otherwise). Should it ever fail, it must fail with a clean errno and
 * succeed once the traffic stops. The peers' operations in flight fail,
 * they keep trying (no hang), and once the module and the instance are
 * back (same id, port and regions) the same processes work again. A
 * second unload after they are gone finds no live object either.
 */
TEST_F_TIMEOUT(module, unload_under_traffic_from_several_peers, 300)
{
	long ok[NR_PEERS], failed[NR_PEERS], beat[NR_PEERS], sum = 0, cut = 0;
	struct sacred_mem_info m = { .id = SACRED_MEM_ID_ANY };
	uint32_t shared = SACRED_REGION_ID_ANY, excl = SACRED_REGION_ID_ANY;
	pid_t pids[NR_PEERS];
	struct sacred_ctrl *ctrl;
	struct traffic *tr;
	unsigned int i;
	int ret, kmsg, st;
	double t0, t1;
	char dev[64];

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	ASSERT_EQ(0, make_instance(ctrl, dev, &m, &shared, &excl));
	sacred_ctrl_close(ctrl);

	tr = mmap(NULL, sizeof(*tr), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, tr);
	memset(tr, 0, sizeof(*tr));
	for (i = 0; i < NR_PEERS; i++) {
		pid_t parent = getpid();

		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			/* A failed assertion ends the test: the peers too. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) ||
			    getppid() != parent)
				_exit(1);
			peer_main(tr, i, &m.addr, shared, excl);
		}
	}

	/*
	 * Everyone streams: operations complete after these 200 ms (within
	 * 2 s: a kernel with KASAN and lockdep under TCG is that slow).
	 */
	memset(ok, 0, sizeof(ok));
	ASSERT_TRUE(ALL_PEERS_GROW(tr, ok, ok, 3 * BATCH, 60));
	snap(tr, ok, failed, beat);
	usleep(200000);
	ASSERT_TRUE(ALL_PEERS_GROW(tr, ok, ok, 1, 2));
	snap(tr, ok, failed, beat);
	for (i = 0; i < NR_PEERS; i++)
		sum += ok[i];

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, kmsg);
	lseek(kmsg, 0, SEEK_END);
	atomic_store(&tr->unloading, 1);
	t0 = now_s();
	ret = module_unload();
	t1 = now_s();
	if (ret) {
		TH_LOG("rmmod under traffic: %s; stopping the traffic",
		       strerror(-ret));
		EXPECT_TRUE(ret == -EAGAIN || ret == -EBUSY);
		atomic_store(&tr->stop, 1);
		for (i = 0; i < NR_PEERS; i++)
			waitpid(pids[i], NULL, 0);
		ASSERT_EQ(0, module_unload());
		EXPECT_EQ(0, kernel_trouble(kmsg, _metadata));
		close(kmsg);
		munmap(tr, sizeof(*tr));
		ASSERT_EQ(0, module_load(self->ko));
		return;
	} else {
		TH_LOG("rmmod under traffic: done in %.3f s; %ld operations completed before it",
		       t1 - t0, sum);
	}
	EXPECT_EQ(0, kernel_trouble(kmsg, _metadata));

	/* Every peer sees failures and goes on trying: errors, no hang. */
	EXPECT_TRUE(ALL_PEERS_GROW(tr, failed, failed, 1, 30));
	snap(tr, ok, failed, beat);
	EXPECT_TRUE(ALL_PEERS_GROW(tr, beat, beat, 5, 10));
	for (i = 0; i < NR_PEERS; i++) {
		cut += atomic_load(&tr->p[i].cut);
		TH_LOG("peer %u: %ld ok, %ld failed (%ld posted before the unload), %ld refused, %ld connects",
		       PEER0 + i, atomic_load(&tr->p[i].ok),
		       atomic_load(&tr->p[i].failed),
		       atomic_load(&tr->p[i].cut),
		       atomic_load(&tr->p[i].refused),
		       atomic_load(&tr->p[i].connects));
	}
	/* Operations were in flight: posted before, failed by, the unload. */
	EXPECT_LT(0, cut);

	/* Back: the same processes reconnect and work. */
	ASSERT_EQ(0, module_load(self->ko));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	EXPECT_EQ(-ENOENT, sacred_mem_get(ctrl, m.id, &m));
	EXPECT_EQ(0, make_instance(ctrl, dev, &m, &shared, &excl));
	snap(tr, ok, failed, beat);
	EXPECT_TRUE(ALL_PEERS_GROW(tr, ok, ok, 3 * BATCH, 60));

	atomic_store(&tr->stop, 1);
	for (i = 0; i < NR_PEERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("peer %u: status %#x (3: a batch hung)",
			       PEER0 + i, st);
	}
	sacred_ctrl_close(ctrl);

	/* The reloaded module's objects are all accounted for, too. */
	lseek(kmsg, 0, SEEK_END);
	ASSERT_EQ(0, module_unload());
	EXPECT_EQ(0, kernel_trouble(kmsg, _metadata));
	close(kmsg);
	munmap(tr, sizeof(*tr));
	ASSERT_EQ(0, module_load(self->ko));
}

TEST_F(module, repeated_load_unload_is_clean)
{
	struct sacred_ctrl *ctrl;
	int i;

	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, module_unload());
		ASSERT_EQ(0, module_load(self->ko));
		ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
		sacred_ctrl_close(ctrl);
	}
}

/*
 * Unload does not wait for netlink users: genl_unregister_family() drains
 * running ops. A handle that resolved the family before the unload gets a
 * clean error for the stale family id, never a crash or a hang.
 */
TEST_F(module, stale_handle_after_unload_fails_cleanly)
{
	struct sacred_ctrl *ctrl;
	struct sacred_dev_info info;
	char dev[64];
	int ret;

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)));
	ASSERT_EQ(0, sacred_ctrl_open(&ctrl));
	ASSERT_EQ(0, module_unload());
	ret = sacred_dev_get(ctrl, dev, 0, &info);
	EXPECT_NE(0, ret);
	ASSERT_EQ(0, module_load(self->ko));
	sacred_ctrl_close(ctrl);
}

TEST_HARNESS_MAIN
