// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_lifecycle - processes that die mid-operation: a writer SIGKILLed
 * while batches of RDMA writes and changePermissions are in flight, over
 * and over, while another process keeps working; and an instance brought
 * down and up under that traffic. Pass: the survivor never sees a wrong
 * byte or an error it did not cause, the dead process's id can connect
 * again, the instance reports it disconnected, and the kernel log stays
 * clean (the rig checks it; sacred_module checks for leaks at unload).
 */
#include <errno.h>
#include <signal.h>
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
	char dev[64];
	int ret = sacred_ctrl_open(&self->ctrl);

	if (ret == -ENOENT)
		SKIP(return, "sacred.ko is not loaded");
	ASSERT_EQ(0, ret);
	if (!env_word("SACRED_RXE_DEVS", 0, dev, sizeof(dev)))
		SKIP(return, "needs the VM rig's SACRED_RXE_DEVS");
	p.dev_name = dev;
	ASSERT_EQ(0, sacred_mem_new(self->ctrl, &p, &self->mem));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, REGION_SIZE,
				       SACRED_POLICY_STATIC, &self->shared));
	ASSERT_EQ(0, sacred_region_set_acl(self->ctrl, self->mem.id,
					   self->shared.id, acl, 2));
	ASSERT_EQ(0, sacred_region_new(self->ctrl, self->mem.id,
				       SACRED_REGION_ID_ANY, 65536,
				       SACRED_POLICY_EXCLUSIVE_WRITER,
				       &self->excl));
	ASSERT_EQ(0, sacred_region_set_acl(self->ctrl, self->mem.id,
					   self->excl.id, acl, 2));
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

static void __attribute__((constructor)) victim_check(void)
{
	const char *spec = getenv("SACRED_LIFE_VICTIM");

	if (spec)
		victim_main(spec);
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

TEST_HARNESS_MAIN
