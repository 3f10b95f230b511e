// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_lifecycle - processes that die mid-operation: a writer SIGKILLed
 * while batches of RDMA writes and changePermissions are in flight, over
 * and over, while another process keeps working; a process SIGKILLed
 * right after posting a changePermission that fences another, before its
 * reply; an instance brought down and up under that traffic; and the RDMA
 * device itself deleted (`rdma link del`) under streaming peers, then
 * added again. Pass: the survivor never sees a wrong byte or an error it
 * did not cause, the dead process's id can connect again, the instance
 * reports it disconnected, and the kernel log stays clean (the rig checks
 * it; sacred_module checks for leaks at unload).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define TEST_CM_PORT	7571
#define VICTIM		901
#define SURVIVOR	902
#define REGION_SIZE	(1 << 20)
#define ROUNDS		6
#define ASK_ROUNDS	12
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

FIXTURE(life) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem;
	struct sacred_region_info shared, excl;
};

FIXTURE_SETUP(life)
{
	struct sacred_acl_entry acl[2] = {
		{ .process_id = VICTIM, .access = RW },
		{ .process_id = SURVIVOR, .access = RW },
	};
	struct sacred_mem_params p = {
		.id = SACRED_MEM_ID_ANY,
		.cm_port = TEST_CM_PORT,
	};

	if (!st_open(_metadata, &self->ctrl, 1, 0))
		return;
	st_mem_new(_metadata, self->ctrl, 0, &p, &self->mem);
	st_region_new(_metadata, self->ctrl, self->mem.id, REGION_SIZE,
		      SACRED_POLICY_STATIC, acl, 2, &self->shared);
	st_region_new(_metadata, self->ctrl, self->mem.id, 65536,
		      SACRED_POLICY_EXCLUSIVE_WRITER, acl, 2, &self->excl);
}

FIXTURE_TEARDOWN(life)
{
	if (self->ctrl)
		sacred_mem_del(self->ctrl, self->mem.id);
	sacred_ctrl_close(self->ctrl);
}

static int connect_as(struct sacred_mem_info *mem, uint32_t pid,
		      struct sacred_conn **c)
{
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&mem->addr,
		.process_id = pid,
		.timeout_ms = 3000,
		.bounce_size = 256 * 1024,
	};

	return sacred_conn_create(&attr, c);
}

/*
 * The victim: batches of 4 KiB writes to the shared region (its half)
 * and changePermissions on the exclusive-writer region, forever. It runs
 * in a process of its own, exec'd fresh (SACRED_LIFE_VICTIM="addr port
 * shared excl"): a child merely forked from a process that has RDMA
 * resources must not use verbs.
 */
static void victim_main(const char *spec)
{
	static uint8_t buf[4096];
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&sin,
		.process_id = VICTIM,
		.timeout_ms = 3000,
		.bounce_size = 256 * 1024,
	};
	struct sacred_io io[16];
	struct sacred_io_result res[16];
	unsigned int port, shared, excl, i;
	struct sacred_conn *c;
	char addr[64];

	if (sscanf(spec, "%63s %u %u %u", addr, &port, &shared, &excl) != 4 ||
	    inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		_exit(2);
	sin.sin_port = htons(port);
	for (i = 0; i < 100 && sacred_conn_create(&attr, &c); i++)
		usleep(20000);	/* the last victim's id is let go lazily */
	if (i == 100 || sacred_attach(c, shared, NULL))
		_exit(1);
	memset(buf, 0x77, sizeof(buf));
	for (;;) {
		for (i = 0; i < 15; i++)
			io[i] = (struct sacred_io){
				.opcode = SACRED_IO_WRITE,
				.region_id = shared,
				.offset = REGION_SIZE / 2 + i * sizeof(buf),
				.buf = buf,
				.len = sizeof(buf),
			};
		io[15] = (struct sacred_io){
			.opcode = SACRED_IO_PERM,
			.perm = { .region_id = excl, .access = RW },
		};
		if (sacred_io_post(c, io, 16) < 0)
			sacred_conn_reconnect(c);
		while (sacred_io_pending(c)) {
			sacred_io_wait(&c, 1, 100);
			sacred_io_poll(c, res, 16);
		}
	}
}

/*
 * The asker: connects as VICTIM and, over and over, posts a
 * changePermission for write on the exclusive-writer region, writes 'a'
 * to its pipe once it is posted, takes the reply and writes 'd'
 * (SACRED_LIFE_ASKER="addr port excl fd"). Killed, never exits by itself.
 */
static void asker_main(const char *spec)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&sin,
		.process_id = VICTIM,
		.timeout_ms = 3000,
	};
	struct sacred_io_result res;
	struct sacred_io io = { .opcode = SACRED_IO_PERM };
	unsigned int port, excl, i;
	struct sacred_conn *c;
	char addr[64];
	int fd;

	if (sscanf(spec, "%63s %u %u %d", addr, &port, &excl, &fd) != 4 ||
	    inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		_exit(2);
	sin.sin_port = htons(port);
	for (i = 0; i < 100 && sacred_conn_create(&attr, &c); i++)
		usleep(20000);	/* the last victim's id is let go lazily */
	if (i == 100 || sacred_attach(c, excl, NULL))
		_exit(1);
	io.perm = (struct sacred_perm_req){ .region_id = excl, .access = RW };
	for (;;) {
		if (sacred_conn_broken(c) && sacred_conn_reconnect(c)) {
			usleep(1000);
			continue;
		}
		if (sacred_io_post(c, &io, 1) != 1) {
			usleep(1000);
			continue;
		}
		if (write(fd, "a", 1) != 1)
			_exit(3);
		while (sacred_io_pending(c)) {
			sacred_io_wait(&c, 1, 100);
			sacred_io_poll(c, &res, 1);
		}
		if (write(fd, "d", 1) != 1)
			_exit(3);
	}
}

static void __attribute__((constructor)) victim_check(void)
{
	const char *spec = getenv("SACRED_LIFE_VICTIM");

	if (spec)
		victim_main(spec);
	spec = getenv("SACRED_LIFE_ASKER");
	if (spec)
		asker_main(spec);
}

/* Start a victim process; it is killed, never exits by itself. */
static pid_t victim(FIXTURE_DATA(life) *self)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&self->mem.addr;
	char spec[128], addr[64];
	pid_t pid;

	inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
	snprintf(spec, sizeof(spec), "%s %u %u %u", addr,
		 ntohs(sin->sin_port), self->shared.id, self->excl.id);
	pid = fork();
	if (pid)
		return pid;
	setenv("SACRED_LIFE_VICTIM", spec, 1);
	execl("/proc/self/exe", "sacred_lifecycle", (char *)NULL);
	_exit(127);
}

/* Start an asker writing its marks to @fd; it is killed, never exits. */
static pid_t asker(FIXTURE_DATA(life) *self, int fd)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&self->mem.addr;
	char spec[128], addr[64];
	pid_t pid;

	inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
	snprintf(spec, sizeof(spec), "%s %u %u %d", addr,
		 ntohs(sin->sin_port), self->excl.id, fd);
	pid = fork();
	if (pid)
		return pid;
	setenv("SACRED_LIFE_ASKER", spec, 1);
	execl("/proc/self/exe", "sacred_lifecycle", (char *)NULL);
	_exit(127);
}

static int find_victim(const struct sacred_peer_info *info, void *arg)
{
	if (info->process_id == VICTIM)
		*(struct sacred_peer_info *)arg = *info;
	return 0;
}

/* The victim as the instance sees it. */
static struct sacred_peer_info victim_info(FIXTURE_DATA(life) *self)
{
	struct sacred_peer_info info = { 0 };

	sacred_peer_list(self->ctrl, self->mem.id, find_victim, &info);
	return info;
}

TEST_F(life, writer_killed_mid_batch_over_and_over)
{
	struct sacred_conn *s, *again;
	uint8_t pattern[4096], back[4096];
	unsigned int round, i;
	uint64_t requests = 0;

	ASSERT_EQ(0, connect_as(&self->mem, SURVIVOR, &s));
	ASSERT_EQ(0, sacred_attach(s, self->shared.id, NULL));
	for (round = 0; round < ROUNDS; round++) {
		pid_t pid = victim(self);
		int status;

		ASSERT_LT(0, pid);
		/* Let it connect and get going. */
		for (i = 0; i < 300; i++) {
			struct sacred_peer_info vi = victim_info(self);

			if (vi.connected && vi.requests > requests + 2)
				break;
			usleep(10000);
		}
		/* The survivor works on its half while the victim dies. */
		for (i = 0; i < 20; i++) {
			memset(pattern, round * 20 + i, sizeof(pattern));
			ASSERT_EQ(0, sacred_write(s, self->shared.id,
						  i * sizeof(pattern),
						  pattern, sizeof(pattern)));
			ASSERT_EQ(0, sacred_read(s, self->shared.id,
						 i * sizeof(pattern), back,
						 sizeof(back)));
			ASSERT_EQ(0, memcmp(pattern, back, sizeof(back)));
			if (i == 10) {
				struct sacred_peer_info vi = victim_info(self);

				/* Connected, asking: killed mid-batch. */
				EXPECT_EQ(1, vi.connected);
				EXPECT_LT(requests, vi.requests);
				requests = vi.requests;
				kill(pid, SIGKILL);
			}
			usleep(5000);
		}
		waitpid(pid, &status, 0);
		EXPECT_TRUE(WIFSIGNALED(status));
	}
	/* The dead process's id comes back, once the instance let go. */
	for (i = 0; i < 100; i++) {
		if (!connect_as(&self->mem, VICTIM, &again))
			break;
		usleep(20000);
	}
	ASSERT_GT(100, i);
	EXPECT_EQ(0, sacred_attach(again, self->shared.id, NULL));
	sacred_conn_destroy(again);
	sacred_conn_destroy(s);
}

/* The instance goes down and up while the victim hammers it. */
TEST_F(life, instance_down_and_up_under_traffic)
{
	struct sacred_conn *s;
	uint64_t v = 5, w = 0;
	pid_t pid = victim(self);
	int status;

	ASSERT_LT(0, pid);
	usleep(600000);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem.id,
				    SACRED_MEM_DOWN, 0, NULL));
	usleep(200000);
	ASSERT_EQ(0, sacred_mem_set(self->ctrl, self->mem.id, SACRED_MEM_UP,
				    0, NULL));
	usleep(300000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ASSERT_EQ(0, connect_as(&self->mem, SURVIVOR, &s));
	ASSERT_EQ(0, sacred_attach(s, self->shared.id, NULL));
	ASSERT_EQ(0, sacred_write(s, self->shared.id, 0, &v, sizeof(v)));
	ASSERT_EQ(0, sacred_read(s, self->shared.id, 0, &w, sizeof(w)));
	EXPECT_EQ(5, w);
	sacred_conn_destroy(s);
}

static int take_write(struct sacred_conn *c, uint32_t region)
{
	struct sacred_perm_req req = { .region_id = region, .access = RW };
	struct sacred_perm_result res;

	if (sacred_conn_broken(c) && sacred_conn_reconnect(c))
		return -ECONNRESET;
	return sacred_change_perm(c, &req, &res);
}

/*
 * A process dies with its changePermission in flight. The survivor holds
 * write on the exclusive-writer region; the asker posts a request for
 * write (which must fence the survivor first) and is SIGKILLed as soon as
 * it reports the request posted. The memory finishes the switch for a
 * process that is gone (or drops it with the connection); either way the
 * survivor takes write back and what it writes reads back. A round where
 * the survivor finds itself fenced although the asker never took the
 * reply is one where the request was in the kernel when the asker died;
 * at least one round must be one, or the test proved nothing.
 */
TEST_F(life, killed_with_a_change_permission_outstanding)
{
	unsigned int round, outstanding = 0, i;
	struct sacred_conn *s, *again;
	uint64_t mark, back;

	ASSERT_EQ(0, connect_as(&self->mem, SURVIVOR, &s));
	ASSERT_EQ(0, sacred_attach(s, self->excl.id, NULL));
	for (round = 0; round < ASK_ROUNDS; round++) {
		/*
		 * The first request of a fresh asker: a later one may be
		 * posted on a queue pair the survivor's last take-back
		 * fenced, and never reach the memory.
		 */
		unsigned int target = 1, na = 0;
		struct pollfd pfd;
		int fds[2], status, ok = 0;
		char b, last = 0;
		pid_t pid;

		ASSERT_EQ(0, take_write(s, self->excl.id));
		ASSERT_EQ(0, pipe(fds));
		pid = asker(self, fds[1]);
		ASSERT_LT(0, pid);
		close(fds[1]);
		pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
		while (poll(&pfd, 1, 30000) == 1 && read(fds[0], &b, 1) == 1) {
			last = b;
			if (b == 'a' && ++na == target) {
				kill(pid, SIGKILL);
				break;
			}
			/* Answered: take write back for the next one. */
			for (i = 0; b == 'd' && i < 50 &&
			     take_write(s, self->excl.id); i++)
				usleep(10000);
		}
		EXPECT_EQ('a', last)
			TH_LOG("round %u: no request posted", round);
		if (last != 'a')
			kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
		while (read(fds[0], &b, 1) == 1)
			last = b;
		close(fds[0]);

		/* Fenced by the dead asker's request? */
		mark = (uint64_t)round << 32 | 0xabcd;
		if (sacred_write(s, self->excl.id, 0, &mark, sizeof(mark)) &&
		    last == 'a')
			outstanding++;
		/* The survivor takes write back; its bytes stay. */
		for (i = 0; i < 100 && !ok; i++) {
			ok = !take_write(s, self->excl.id) &&
			     !sacred_write(s, self->excl.id, 0, &mark,
					   sizeof(mark)) &&
			     !sacred_read(s, self->excl.id, 0, &back,
					  sizeof(back)) &&
			     back == mark;
			if (!ok)
				usleep(50000);
		}
		ASSERT_TRUE(ok) TH_LOG("round %u: write not taken back", round);
	}
	TH_LOG("%u of %u kills landed with the request in the kernel and its reply not taken",
	       outstanding, ASK_ROUNDS);
	EXPECT_LT(0, outstanding);

	/* The instance lets the dead process go; its id connects again. */
	for (i = 0; i < 500 && victim_info(self).connected; i++)
		usleep(20000);
	EXPECT_EQ(0, victim_info(self).connected);
	for (i = 0; i < 100; i++) {
		if (!connect_as(&self->mem, VICTIM, &again))
			break;
		usleep(20000);
	}
	ASSERT_GT(100, i);
	EXPECT_EQ(0, sacred_attach(again, self->excl.id, NULL));
	sacred_conn_destroy(again);
	sacred_conn_destroy(s);
}

/*
 * `rdma link del` under traffic. A device of its own (LD_RXE on a dummy
 * netdev) carries an instance that LD_PEERS processes stream to; the
 * survivor streams to the fixture's instance on the rig's first device.
 * Deleting the device runs the module's ib_client remove, which destroys
 * the instance and drops its connections: the streamers see their
 * operations fail (never hang) and exit, which lets `rdma link del`
 * finish (rxe cannot take a user context away from a process, so it
 * waits for them). The instance and the device are then gone from the
 * module's view, the survivor never saw an error, and the device added
 * again takes a new instance at the same address that works.
 */
#define LD_NETDEV	"saclc0"
#define LD_RXE		"rxelc0"
#define LD_ADDR		"192.0.2.210"
#define LD_PEERS	3
#define LD_PID0		921
#define LD_BATCH	9

struct ld_stat {
	atomic_long ok;
	atomic_long failed;
};

struct ld_traffic {
	atomic_int stop;
	struct ld_stat st[LD_PEERS + 1];	/* the survivor last */
};

/*
 * A streaming process, forked before its parent touched verbs: batches of
 * 4 KiB and 16 KiB writes and reads at @base in @shared and one
 * changePermission for @access on @excl. With @leave, the first failure
 * ends it (exit 0); otherwise it counts the failure and reconnects. Exit 3:
 * a batch's results took more than 30 s (a hang).
 */
static void ld_stream(struct ld_traffic *tr, struct ld_stat *st,
		      const struct sockaddr_storage *addr, uint32_t pid,
		      uint32_t shared, uint64_t base, uint32_t excl,
		      uint32_t access, bool leave)
{
	static uint8_t wbuf[16384], rbuf[4][16384];
	struct sacred_conn_attr attr = {
		.addr = (const struct sockaddr *)addr,
		.process_id = pid,
		.timeout_ms = 3000,
		.bounce_size = 16 * 32768,
	};
	struct sacred_io_result res[LD_BATCH];
	struct sacred_io io[LD_BATCH];
	struct sacred_conn *c = NULL;
	int k, n, bad;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(wbuf, pid, sizeof(wbuf));
	while (!atomic_load(&tr->stop)) {
		double deadline = now_s() + 30;

		if (!c && (sacred_conn_create(&attr, &c) ||
			   sacred_attach(c, shared, NULL) ||
			   sacred_attach(c, excl, NULL)))
			goto failed;
		for (k = 0; k < 4; k++) {
			io[k] = (struct sacred_io){
				.opcode = SACRED_IO_WRITE, .region_id = shared,
				.offset = base + k * 16384, .buf = wbuf,
				.len = k & 1 ? 16384 : 4096,
			};
			io[4 + k] = io[k];
			io[4 + k].opcode = SACRED_IO_READ;
			io[4 + k].buf = rbuf[k];
		}
		io[8] = (struct sacred_io){
			.opcode = SACRED_IO_PERM,
			.perm = { .region_id = excl, .access = access },
		};
		if (sacred_io_post(c, io, LD_BATCH) < 0)
			goto failed;
		bad = 0;
		while (sacred_io_pending(c)) {
			if (now_s() > deadline)
				_exit(3);
			sacred_io_wait(&c, 1, 100);
			n = sacred_io_poll(c, res, LD_BATCH);
			for (k = 0; k < n; k++) {
				atomic_fetch_add(res[k].status ? &st->failed :
						 &st->ok, 1);
				bad |= res[k].status;
			}
		}
		if (!bad)
			continue;
failed:
		atomic_fetch_add(&st->failed, 1);
		sacred_conn_destroy(c);
		c = NULL;
		if (leave)
			_exit(0);
		usleep(20000);
	}
	sacred_conn_destroy(c);
	_exit(0);
}

/* @st's ok count above @base by @by within @s seconds. */
static bool ld_grows(struct ld_stat *st, long base, long by, double s)
{
	double end = now_s() + s;

	while (atomic_load(&st->ok) < base + by && now_s() < end)
		usleep(20000);
	return atomic_load(&st->ok) >= base + by;
}

/* An instance on LD_RXE at @m's address (or the device's), its regions. */
static int ld_instance(struct sacred_ctrl *ctrl, struct sacred_mem_info *m,
		       bool again)
{
	struct sacred_mem_params p = {
		.id = SACRED_MEM_ID_ANY,
		.dev_name = LD_RXE,
		.cm_port = TEST_CM_PORT + 1,
	};
	int ret;

	if (again)
		p.addr = m->addr;
	ret = sacred_mem_new(ctrl, &p, m);
	if (!ret)
		ret = region_on_all(ctrl, m, 1, 1, 1 << 20,
				    SACRED_POLICY_STATIC, LD_PID0, LD_PEERS,
				    -1);
	if (!ret)
		ret = region_on_all(ctrl, m, 1, 2, 65536,
				    SACRED_POLICY_EXCLUSIVE_WRITER, LD_PID0,
				    LD_PEERS, -1);
	return ret;
}

static pid_t ld_fork(struct ld_traffic *tr, unsigned int i,
		     const struct sockaddr_storage *addr)
{
	pid_t pid = fork();

	if (!pid)
		ld_stream(tr, &tr->st[i], addr, LD_PID0 + i, 1, i * 65536, 2,
			  i ? SACRED_ACCESS_READ : RW, true);
	return pid;
}

TEST_F_TIMEOUT(life, link_del_under_traffic, 300)
{
	struct sacred_mem_info m, mi;
	struct sacred_dev_info di;
	pid_t pids[LD_PEERS], surv, pid;
	struct ld_traffic *tr;
	struct ld_stat *ss;
	long ok, okd;
	unsigned int i;
	double t0, t1;
	int st;

	tr = mmap(NULL, sizeof(*tr), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, tr);
	memset(tr, 0, sizeof(*tr));
	ss = &tr->st[LD_PEERS];
	/* The survivor first: its librdmacm never sees the new device. */
	surv = fork();
	ASSERT_LE(0, surv);
	if (!surv)
		ld_stream(tr, ss, &self->mem.addr, SURVIVOR, self->shared.id,
			  0, self->excl.id, RW, false);
	ASSERT_TRUE(ld_grows(ss, 0, 2 * LD_BATCH, 60));

	sh("rdma link del " LD_RXE " 2>/dev/null; ip link del " LD_NETDEV
	   " 2>/dev/null");
	ASSERT_EQ(0, sh("ip link add " LD_NETDEV " type dummy && "
			"ip link set " LD_NETDEV " up && "
			"ip addr add " LD_ADDR "/32 dev " LD_NETDEV " && "
			"rdma link add " LD_RXE " type rxe netdev "
			LD_NETDEV));
	ASSERT_EQ(0, ld_instance(self->ctrl, &m, false));
	for (i = 0; i < LD_PEERS; i++) {
		pids[i] = ld_fork(tr, i, &m.addr);
		ASSERT_LE(0, pids[i]);
	}
	for (i = 0; i < LD_PEERS; i++)
		ASSERT_TRUE(ld_grows(&tr->st[i], 0, 3 * LD_BATCH, 60));

	/* Delete the device while all of them stream. */
	okd = atomic_load(&ss->ok);
	t0 = now_s();
	st = sh("timeout 120 rdma link del " LD_RXE);
	t1 = now_s();
	ASSERT_EQ(0, st) TH_LOG("rdma link del: %s",
				st == 124 ? "hung for 120 s" : "failed");
	for (i = 0; i < LD_PEERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("streamer %u: status %#x (3: hung)", i, st);
		EXPECT_LT(0, atomic_load(&tr->st[i].failed));
		TH_LOG("streamer %u: %ld ok, %ld failed", LD_PID0 + i,
		       atomic_load(&tr->st[i].ok),
		       atomic_load(&tr->st[i].failed));
	}
	TH_LOG("rdma link del under traffic: %.2f s; survivor %ld ok during it",
	       t1 - t0, atomic_load(&ss->ok) - okd);
	/* Gone from the module's view; the survivor goes on, error-free. */
	EXPECT_EQ(-ENOENT, sacred_mem_get(self->ctrl, m.id, &mi));
	EXPECT_EQ(-ENODEV, sacred_dev_get(self->ctrl, LD_RXE, 0, &di));
	EXPECT_TRUE(ld_grows(ss, atomic_load(&ss->ok), 2 * LD_BATCH, 30));

	/* Added again: a new instance at the same address works. */
	ASSERT_EQ(0, sh("rdma link add " LD_RXE " type rxe netdev "
			LD_NETDEV));
	ASSERT_EQ(0, sacred_dev_get(self->ctrl, LD_RXE, 0, &di));
	ASSERT_EQ(0, ld_instance(self->ctrl, &m, true));
	memset(&tr->st[0], 0, sizeof(tr->st[0]));
	pid = ld_fork(tr, 0, &m.addr);
	ASSERT_LE(0, pid);
	EXPECT_TRUE(ld_grows(&tr->st[0], 0, 3 * LD_BATCH, 60));
	EXPECT_EQ(0, atomic_load(&tr->st[0].failed));

	atomic_store(&tr->stop, 1);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ASSERT_EQ(surv, waitpid(surv, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ok = atomic_load(&ss->ok);
	TH_LOG("survivor: %ld ok, %ld failed", ok, atomic_load(&ss->failed));
	EXPECT_EQ(0, atomic_load(&ss->failed));
	EXPECT_EQ(0, sh("rdma link del " LD_RXE " && ip link del "
			LD_NETDEV));
	munmap(tr, sizeof(*tr));
}

TEST_HARNESS_MAIN
