// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_bpf - regions whose acceptChange is an eBPF program (policy
 * "bpf"), end to end: the example programs of examples/policies/ (ballot,
 * lease, allow-list edited through its map while it runs), programs that
 * refuse everything or return nonsense, a program replaced under a stream
 * of requests, every way to hand the module a wrong program, and the
 * revoke guarantee under a program's verdict.
 *
 * The example programs are the object files make builds next to their
 * sources; the small test programs are a few instructions loaded here.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <linux/sacred.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define R	SACRED_ACCESS_READ
#define RW	(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define NPROC	ST_NPROC
#define RSIZE	65536
#define EXAMPLES "../examples/policies/"

FIXTURE(bpf) {
	struct st_procs s;
	struct bpf_object *obj;
};

FIXTURE_SETUP(bpf)
{
	if (!st_procs_open(_metadata, &self->s))
		return;
	self->s.region = SACRED_REGION_ID_ANY;
}

FIXTURE_TEARDOWN(bpf)
{
	st_procs_close(&self->s);
	if (self->obj)
		bpf_object__close(self->obj);
}

/* The program of examples/policies/@name.bpf.o, loaded as a socket filter. */
static int example_prog(struct __test_metadata *_metadata,
			FIXTURE_DATA(bpf) *self, const char *name)
{
	char path[256];
	struct bpf_program *prog;

	snprintf(path, sizeof(path), EXAMPLES "%s.bpf.o", name);
	self->obj = bpf_object__open_file(path, NULL);
	ASSERT_NE(NULL, self->obj) TH_LOG("%s: %s", path, strerror(errno));
	prog = bpf_object__next_program(self->obj, NULL);
	ASSERT_NE(NULL, prog);
	bpf_program__set_type(prog, BPF_PROG_TYPE_SOCKET_FILTER);
	ASSERT_EQ(0, bpf_object__load(self->obj));
	return bpf_program__fd(prog);
}

/* A program of two instructions: return @verdict. */
static int const_prog(enum bpf_prog_type type, uint32_t verdict)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = (int32_t)verdict },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(type, "sacred_const", "GPL", insns, 2, NULL);
}

/* A bpf region of @prog_fd, ACL 1:rw, 2:rw, 3:r; everyone connected. */
static void region_with(struct __test_metadata *_metadata,
			FIXTURE_DATA(bpf) *self, int prog_fd)
{
	struct sacred_acl_entry acl[NPROC] = {
		{ .process_id = 1, .access = RW },
		{ .process_id = 2, .access = RW },
		{ .process_id = 3, .access = R },
	};
	struct sacred_region_info ri;
	struct sacred_region_attr ra;
	int i;

	ASSERT_LE(0, prog_fd);
	ASSERT_EQ(0, sacred_region_new_prog(self->s.ctrl, self->s.mem.id,
					    SACRED_REGION_ID_ANY, RSIZE,
					    prog_fd, NULL, &ri));
	EXPECT_EQ(SACRED_POLICY_BPF, ri.policy);
	self->s.region = ri.id;
	ASSERT_EQ(0, sacred_region_set_acl(self->s.ctrl, self->s.mem.id, ri.id,
					   acl, NPROC));
	for (i = 1; i <= NPROC; i++) {
		ASSERT_EQ(0, st_procs_connect(&self->s, i, &ra));
		/* Members start with read, as under exclusive-writer. */
		EXPECT_EQ(R, ra.access);
	}
}

/* "A higher ballot takes the region": the fenced policy, as a program. */
TEST_F(bpf, ballot_policy_a_higher_ballot_takes_the_region)
{
	struct st_procs *f = &self->s;
	struct sacred_perm_result res;
	uint32_t id = 0;

	region_with(_metadata, self, example_prog(_metadata, self, "ballot"));
	ASSERT_EQ(0, sacred_region_prog_id(f->ctrl, f->mem.id,
					   f->region, &id));
	EXPECT_NE(0, id);

	ASSERT_EQ(0, st_ask(f, 1, RW, 5, 0, &res));
	EXPECT_EQ(RW, res.region.access);
	EXPECT_EQ(0, st_try_write(f, 1, 0, 1));
	EXPECT_EQ(-EPERM, st_ask(f, 2, RW, 5, 0, &res));
	EXPECT_EQ(SACRED_REFUSE_PROGRAM_BASE + SACRED_REFUSE_STALE_BALLOT,
		  res.reason);
	EXPECT_EQ(0, st_try_write(f, 1, 0, 11));
	ASSERT_EQ(0, st_ask(f, 2, RW, 6, 0, &res));
	/* 1 was demoted and fenced before 2 heard yes: its write fails. */
	EXPECT_NE(0, st_try_write(f, 1, 0, 0xbad));
	EXPECT_EQ(11, st_peek(_metadata, f, 0));
	EXPECT_EQ(0, st_try_write(f, 2, 0, 22));
	EXPECT_EQ(22, st_peek(_metadata, f, 0));
	EXPECT_EQ(-EPERM, st_ask(f, 1, RW, 6, 0, &res));
	EXPECT_EQ(SACRED_REFUSE_PROGRAM_BASE + SACRED_REFUSE_STALE_BALLOT,
		  res.reason);
	/* Read needs no ballot. */
	EXPECT_EQ(0, st_ask(f, 1, R, 0, 0, &res));
	/* The ACL still bounds every grant: 3 may only read. */
	EXPECT_EQ(-EPERM, st_ask(f, 3, RW, 100, 0, &res));
	EXPECT_EQ(SACRED_REFUSE_NOT_MEMBER, res.reason);
}

TEST_F(bpf, lease_policy_expires_unless_renewed)
{
	struct st_procs *f = &self->s;
	struct sacred_perm_result res;
	uint64_t lease_ns = 300 * 1000000ULL;
	struct bpf_map *cfg;
	uint32_t zero = 0;

	region_with(_metadata, self, example_prog(_metadata, self, "lease"));
	cfg = bpf_object__find_map_by_name(self->obj, "lease_cfg");
	ASSERT_NE(NULL, cfg);
	ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(cfg), &zero, &lease_ns,
					 BPF_ANY));

	ASSERT_EQ(0, st_ask(f, 1, RW, 0, 0, &res));
	EXPECT_EQ(0, st_try_write(f, 1, 0, 1));
	EXPECT_EQ(-EPERM, st_ask(f, 2, RW, 0, 0, &res));
	EXPECT_EQ(SACRED_REFUSE_PROGRAM_BASE + 1, res.reason);
	/* Renewed twice across more than a lease: still 1's. */
	usleep(200000);
	ASSERT_EQ(0, st_ask(f, 1, RW, 0, 0, &res));
	usleep(200000);
	ASSERT_EQ(0, st_ask(f, 1, RW, 0, 0, &res));
	EXPECT_EQ(-EPERM, st_ask(f, 2, RW, 0, 0, &res));
	EXPECT_EQ(0, st_try_write(f, 1, 0, 2));
	/* Not renewed: the next asker takes it, and 1 is fenced. */
	usleep(400000);
	ASSERT_EQ(0, st_ask(f, 2, RW, 0, 0, &res));
	EXPECT_NE(0, st_try_write(f, 1, 0, 0xbad));
	EXPECT_EQ(2, st_peek(_metadata, f, 0));
}

/* The allow-list, edited in the map of the program the region runs. */
TEST_F(bpf, allowlist_map_edited_while_the_program_runs)
{
	struct st_procs *f = &self->s;
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info), map_id = 0, prog_id = 0;
	struct sacred_perm_result res;
	uint32_t pid, access;
	int prog_fd, map_fd;

	region_with(_metadata, self,
		    example_prog(_metadata, self, "allowlist"));
	/* As a control process would: from the region to its map. */
	ASSERT_EQ(0, sacred_region_prog_id(f->ctrl, f->mem.id,
					   f->region, &prog_id));
	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	ASSERT_LE(0, prog_fd);
	info.nr_map_ids = 1;
	info.map_ids = (uintptr_t)&map_id;
	ASSERT_EQ(0, bpf_obj_get_info_by_fd(prog_fd, &info, &len));
	ASSERT_EQ(1, info.nr_map_ids);
	map_fd = bpf_map_get_fd_by_id(map_id);
	ASSERT_LE(0, map_fd);

	EXPECT_EQ(-EPERM, st_ask(f, 1, RW, 0, 0, &res));
	EXPECT_EQ(SACRED_REFUSE_PROGRAM_BASE + 1, res.reason);
	pid = 1;
	access = RW;
	ASSERT_EQ(0, bpf_map_update_elem(map_fd, &pid, &access, BPF_ANY));
	ASSERT_EQ(0, st_ask(f, 1, RW, 0, 0, &res));
	EXPECT_EQ(0, st_try_write(f, 1, 8, 5));
	pid = 2;
	access = R;
	ASSERT_EQ(0, bpf_map_update_elem(map_fd, &pid, &access, BPF_ANY));
	EXPECT_EQ(-EPERM, st_ask(f, 2, RW, 0, 0, &res));
	EXPECT_EQ(0, st_ask(f, 2, R, 0, 0, &res));
	pid = 1;
	ASSERT_EQ(0, bpf_map_delete_elem(map_fd, &pid));
	EXPECT_EQ(-EPERM, st_ask(f, 1, RW, 0, 0, &res));
	EXPECT_EQ(5, st_peek(_metadata, f, 8));
	close(map_fd);
	close(prog_fd);
}

/* A program that refuses everything: its code reaches process and monitor. */
TEST_F(bpf, program_refusing_everything_is_heard_with_its_code)
{
	struct st_procs *f = &self->s;
	struct sacred_perm_req req = { .access = RW, .ballot = 0 };
	struct sacred_perm_result res;
	struct sacred_monitor *mon;
	struct sacred_event ev;
	int ret;

	region_with(_metadata, self,
		    const_prog(BPF_PROG_TYPE_SOCKET_FILTER,
			       SACRED_VERDICT_REFUSE | SACRED_VERDICT_CODE(7)));
	ASSERT_EQ(0, sacred_monitor_open(&mon));
	EXPECT_EQ(-EPERM, st_ask(f, 1, RW, 0, 0, &res));
	EXPECT_EQ(SACRED_REFUSE_PROGRAM_BASE + 7, res.reason);
	EXPECT_EQ(R, res.region.access);
	ret = st_next_perm_event(mon, f->mem.id, f->region, 1, &ev);
	sacred_monitor_close(mon);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(SACRED_REFUSE_PROGRAM_BASE + 7, ev.perm.reason);

	/* An admin's PERM_SET meets the same program. */
	req.region_id = f->region;
	EXPECT_EQ(-EPERM, sacred_perm_set(f->ctrl, f->mem.id, 1, &req));
	EXPECT_NE(NULL, sacred_ctrl_errmsg(f->ctrl));
}

TEST_F(bpf, unknown_verdict_is_a_refusal)
{
	struct st_procs *f = &self->s;
	struct sacred_perm_result res;

	region_with(_metadata, self,
		    const_prog(BPF_PROG_TYPE_SOCKET_FILTER, 0x99));
	EXPECT_EQ(-EPERM, st_ask(f, 1, RW, 0, 0, &res));
	EXPECT_EQ(SACRED_REFUSE_PROGRAM_VERDICT, res.reason);
	EXPECT_EQ(R, res.region.access);
}

/*
 * Under a program too, a change that fences nobody is decided in the CQ
 * handler of its receive - the program runs there - and one that revokes
 * a connected writer under the mutex, where the program runs once: for a
 * bpf region that is checked before the program runs.
 */
TEST_F(bpf, own_grant_is_decided_in_the_receive_completion)
{
	struct st_procs *f = &self->s;
	struct sacred_perm_result res;
	uint64_t n;

	region_with(_metadata, self,
		    const_prog(BPF_PROG_TYPE_SOCKET_FILTER,
			       SACRED_VERDICT_GRANT_EXCLUSIVE));
	ASSERT_EQ(0, st_ask_in_cq(f, 1, RW, &res, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(RW, res.region.access);
	EXPECT_EQ(0, st_try_write(f, 1, 0, 1));

	ASSERT_EQ(0, st_ask_in_cq(f, 2, RW, &res, &n));
	EXPECT_EQ(0, n);
	EXPECT_NE(0, st_try_write(f, 1, 0, 0xbad));
	EXPECT_EQ(0, st_try_write(f, 2, 0, 2));
	EXPECT_EQ(2, st_peek(_metadata, f, 0));
}

struct asker {
	FIXTURE_DATA(bpf) *self;
	atomic_int stop;
	atomic_int answered;	/* requests answered so far */
	int accepted, refused, other;
};

static void *ask_loop(void *arg)
{
	struct asker *a = arg;
	struct sacred_perm_result res;
	int i, ret;

	for (i = 0; !atomic_load(&a->stop); i++) {
		ret = st_ask(&a->self->s, 1, i % 2 ? R : RW, 0, 0, &res);
		if (!ret)
			a->accepted++;
		else if (ret == -EPERM &&
			 res.reason == SACRED_REFUSE_PROGRAM_BASE + 9)
			a->refused++;
		else
			a->other++;
		atomic_fetch_add(&a->answered, 1);
	}
	return NULL;
}

/*
 * A region's program replaced, again and again, while a process keeps
 * asking: every request is decided by one program or the other, whole.
 * At least 200 replacements, and on until the process had 20 requests
 * answered among them (at most 60 s): each replacement holds mem->lock,
 * and the asking thread, started last, may otherwise get its first
 * request in only after the loop is over (a CI run saw 0 answered).
 */
TEST_F_TIMEOUT(bpf, program_replaced_under_a_stream_of_requests, 120)
{
	struct st_procs *f = &self->s;
	struct asker a = { .self = self };
	double deadline;
	int yes, no, i;
	pthread_t t;

	yes = const_prog(BPF_PROG_TYPE_SOCKET_FILTER,
			 SACRED_VERDICT_GRANT_EXCLUSIVE);
	no = const_prog(BPF_PROG_TYPE_SOCKET_FILTER,
			SACRED_VERDICT_REFUSE | SACRED_VERDICT_CODE(9));
	ASSERT_LE(0, yes);
	ASSERT_LE(0, no);
	region_with(_metadata, self, yes);
	ASSERT_EQ(0, pthread_create(&t, NULL, ask_loop, &a));
	deadline = now_s() + 60;
	for (i = 0; i < 200 || (atomic_load(&a.answered) < 20 &&
				now_s() < deadline); i++)
		ASSERT_EQ(0, sacred_region_set_policy(f->ctrl, f->mem.id,
						      f->region,
						      SACRED_POLICY_BPF,
						      i % 2 ? yes : no));
	atomic_store(&a.stop, 1);
	pthread_join(t, NULL);
	TH_LOG("%d replacements; %d accepted, %d refused by the program, %d other",
	       i, a.accepted, a.refused, a.other);
	EXPECT_EQ(0, a.other);
	EXPECT_LE(20, a.accepted + a.refused);
	close(yes);
	close(no);
}

/* Every wrong program, and the policies around it, with its message. */
TEST_F(bpf, wrong_programs_are_refused_with_a_message)
{
	struct st_procs *f = &self->s;
	struct sacred_region_info ri;
	int devnull, cls, yes;

	yes = const_prog(BPF_PROG_TYPE_SOCKET_FILTER, SACRED_VERDICT_GRANT);
	cls = const_prog(BPF_PROG_TYPE_SCHED_CLS, 0);
	devnull = open("/dev/null", O_RDONLY);
	ASSERT_LE(0, yes);
	ASSERT_LE(0, cls);
	ASSERT_LE(0, devnull);

	EXPECT_EQ(-EINVAL, sacred_region_new_prog(f->ctrl, f->mem.id,
						  SACRED_REGION_ID_ANY, RSIZE,
						  cls, NULL, &ri));
	EXPECT_NE(NULL, sacred_ctrl_errmsg(f->ctrl));
	EXPECT_EQ(-EINVAL, sacred_region_new_prog(f->ctrl, f->mem.id,
						  SACRED_REGION_ID_ANY, RSIZE,
						  devnull, NULL, &ri));
	EXPECT_EQ(-EBADF, sacred_region_new_prog(f->ctrl, f->mem.id,
						 SACRED_REGION_ID_ANY, RSIZE,
						 1000, NULL, &ri));
	/* Policy bpf without a program, a program without policy bpf. */
	EXPECT_EQ(-EINVAL, sacred_region_new(f->ctrl, f->mem.id,
					     SACRED_REGION_ID_ANY, RSIZE,
					     SACRED_POLICY_BPF, &ri));
	EXPECT_NE(NULL, sacred_ctrl_errmsg(f->ctrl));
	ASSERT_EQ(0, sacred_region_new(f->ctrl, f->mem.id,
				       SACRED_REGION_ID_ANY, RSIZE,
				       SACRED_POLICY_EXCLUSIVE_WRITER, &ri));
	EXPECT_EQ(-EINVAL, sacred_region_set_policy(f->ctrl, f->mem.id,
						    ri.id,
						    SACRED_POLICY_EXCLUSIVE_WRITER,
						    yes));
	EXPECT_EQ(-EINVAL, sacred_region_set_policy(f->ctrl, f->mem.id,
						    ri.id, SACRED_POLICY_BPF,
						    -1));
	/* Into and out of bpf: yes; into static, where the ACL is access: no. */
	EXPECT_EQ(0, sacred_region_set_policy(f->ctrl, f->mem.id, ri.id,
					      SACRED_POLICY_BPF, yes));
	EXPECT_EQ(-EINVAL, sacred_region_set_policy(f->ctrl, f->mem.id,
						    ri.id, SACRED_POLICY_STATIC,
						    -1));
	EXPECT_EQ(0, sacred_region_set_policy(f->ctrl, f->mem.id, ri.id,
					      SACRED_POLICY_FENCED, -1));
	ASSERT_EQ(0, sacred_region_get(f->ctrl, f->mem.id, ri.id, &ri));
	EXPECT_EQ(SACRED_POLICY_FENCED, ri.policy);
	close(devnull);
	close(cls);
	close(yes);
}

/* Giving a region a program is an admin's act: CAP_NET_ADMIN. */
TEST_F(bpf, program_from_a_user_without_cap_net_admin_is_refused)
{
	struct st_procs *f = &self->s;
	struct sacred_region_info ri;
	int yes, status;
	pid_t child;

	yes = const_prog(BPF_PROG_TYPE_SOCKET_FILTER, SACRED_VERDICT_GRANT);
	ASSERT_LE(0, yes);
	ASSERT_EQ(0, sacred_region_new(f->ctrl, f->mem.id,
				       SACRED_REGION_ID_ANY, RSIZE,
				       SACRED_POLICY_EXCLUSIVE_WRITER, &ri));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct sacred_ctrl *c;

		if (drop_privileges() || sacred_ctrl_open(&c))
			_exit(2);
		_exit(sacred_region_set_policy(c, f->mem.id, ri.id,
					       SACRED_POLICY_BPF, yes) ==
		      -EPERM ? 0 : 1);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, sacred_region_get(f->ctrl, f->mem.id, ri.id, &ri));
	EXPECT_EQ(SACRED_POLICY_EXCLUSIVE_WRITER, ri.policy);
	close(yes);
}

TEST_HARNESS_MAIN
