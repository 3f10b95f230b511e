// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_perm - changePermission and the acceptChange policies, end to end:
 * real processes (connections) on SoftRoCE, real RDMA, the in-kernel
 * switch.
 *
 * For every policy: what a process holds after attaching, which requests
 * are accepted and refused (and why), that a refused request changes
 * nothing, that a revoked writer's next write fails with the data
 * untouched, that it can reconnect and re-attach, and the epoch. Also:
 * key rotation past the 8-bit key space, which changes are answered in
 * their receive completion, PERM_SET over netlink, the peer list,
 * regions or instances deleted under connected processes, and the
 * module's tracepoints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "sacred.h"
#include "sacred_test.h"

#define R	SACRED_ACCESS_READ
#define RW	(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define RWA	SACRED_ACCESS_ALL
#define NPROC	ST_NPROC
#define RSIZE	65536

FIXTURE(perm) {
	struct st_procs s;
};

FIXTURE_VARIANT(perm) {
	uint8_t policy;
};

FIXTURE_VARIANT_ADD(perm, static_) { .policy = SACRED_POLICY_STATIC };
FIXTURE_VARIANT_ADD(perm, exclusive) {
	.policy = SACRED_POLICY_EXCLUSIVE_WRITER
};
FIXTURE_VARIANT_ADD(perm, swmr) { .policy = SACRED_POLICY_SWMR };
FIXTURE_VARIANT_ADD(perm, revoke_only) {
	.policy = SACRED_POLICY_REVOKE_ONLY
};
FIXTURE_VARIANT_ADD(perm, fenced) { .policy = SACRED_POLICY_FENCED };

static int set_acl(struct sacred_ctrl *ctrl, uint32_t mem, uint32_t region,
		   uint32_t a1, uint32_t a2, uint32_t a3)
{
	struct sacred_acl_entry acl[NPROC] = {
		{ .process_id = 1, .access = a1 },
		{ .process_id = 2, .access = a2 },
		{ .process_id = 3, .access = a3 },
	};

	return sacred_region_set_acl(ctrl, mem, region, acl, NPROC);
}

/*
 * A memory instance with one region under @policy, the ACL below, and the
 * three processes connected and attached. Shared by the fixtures: perm
 * runs a test under every policy, perm_ew and perm_acl only under the
 * policies their tests are about (no test skips because a policy does not
 * apply).
 */
static void perm_open(struct __test_metadata *_metadata, struct st_procs *s,
		      uint8_t policy)
{
	struct sacred_region_info ri;
	uint32_t a2 = policy == SACRED_POLICY_SWMR ||
		      policy == SACRED_POLICY_REVOKE_ONLY ? R : RW;
	struct sacred_region_attr ra;
	int i;

	if (!st_procs_open(_metadata, s))
		return;
	st_region_new(_metadata, s->ctrl, s->mem.id, RSIZE, policy, NULL, 0,
		      &ri);
	s->region = ri.id;
	/* 1 may write, 2 may write unless the policy wants one writer, 3 reads. */
	ASSERT_EQ(0, set_acl(s->ctrl, s->mem.id, s->region, RW, a2, R));
	for (i = 1; i <= NPROC; i++)
		ASSERT_EQ(0, st_procs_connect(s, i, &ra));
}

FIXTURE_SETUP(perm)
{
	perm_open(_metadata, &self->s, variant->policy);
}

FIXTURE_TEARDOWN(perm)
{
	st_procs_close(&self->s);
}

/* Exclusive-writer only: a process may change its own access at will. */
FIXTURE(perm_ew) {
	struct st_procs f;
};

FIXTURE_SETUP(perm_ew)
{
	perm_open(_metadata, &self->f, SACRED_POLICY_EXCLUSIVE_WRITER);
}

FIXTURE_TEARDOWN(perm_ew)
{
	st_procs_close(&self->f);
}

/* The policies under which nothing changes access at runtime. */
FIXTURE(perm_acl) {
	struct st_procs f;
};

FIXTURE_VARIANT(perm_acl) {
	uint8_t policy;
};

FIXTURE_VARIANT_ADD(perm_acl, static_) { .policy = SACRED_POLICY_STATIC };
FIXTURE_VARIANT_ADD(perm_acl, swmr) { .policy = SACRED_POLICY_SWMR };

FIXTURE_SETUP(perm_acl)
{
	perm_open(_metadata, &self->f, variant->policy);
}

FIXTURE_TEARDOWN(perm_acl)
{
	st_procs_close(&self->f);
}

static uint32_t held(struct st_procs *s, int pid)
{
	struct sacred_region_attr ra;

	if (sacred_conn_region(s->p[pid], s->region, &ra))
		return 0xdead;
	return ra.access;
}

TEST_F(perm, initial_access_follows_the_policy)
{
	switch (variant->policy) {
	case SACRED_POLICY_STATIC:
	case SACRED_POLICY_SWMR:
	case SACRED_POLICY_REVOKE_ONLY:
		EXPECT_EQ(RW, held(&self->s, 1));
		break;
	default:
		EXPECT_EQ(R, held(&self->s, 1));
	}
	EXPECT_EQ(R, held(&self->s, 3));
}

TEST_F(perm, reader_write_fails_and_leaves_data_untouched)
{
	uint64_t v = 0x1111;

	if (held(&self->s, 1) & SACRED_ACCESS_WRITE)
		ASSERT_EQ(0, sacred_write(self->s.p[1], self->s.region, 0, &v,
					  sizeof(v)));
	EXPECT_EQ(-EACCES, st_try_write(&self->s, 3, 0, 0xbad));
	EXPECT_EQ(held(&self->s, 1) & SACRED_ACCESS_WRITE ? 0x1111 : 0,
		  st_peek(_metadata, &self->s, 0));
	/* After the refused write, the reader reconnected and reads again. */
	EXPECT_EQ(R, held(&self->s, 3));
}

TEST_F(perm, requests_are_decided_by_the_policy)
{
	struct sacred_perm_result res;

	switch (variant->policy) {
	case SACRED_POLICY_STATIC:
		EXPECT_EQ(-EPERM, st_ask(&self->s, 2, RW, 0, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_STATIC, res.reason);
		break;
	case SACRED_POLICY_SWMR:
		EXPECT_EQ(-EPERM, st_ask(&self->s, 2, RW, 0, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_SWMR, res.reason);
		EXPECT_EQ(RW, held(&self->s, 1));
		break;
	case SACRED_POLICY_EXCLUSIVE_WRITER:
		EXPECT_EQ(-EPERM, st_ask(&self->s, 3, RW, 0, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_NOT_MEMBER, res.reason);
		ASSERT_EQ(0, st_ask(&self->s, 1, RW, 0, 0, &res));
		EXPECT_EQ(RW, res.region.access);
		EXPECT_NE(0, res.region.rkey);
		EXPECT_EQ(0, st_try_write(&self->s, 1, 0, 1));
		ASSERT_EQ(0, st_ask(&self->s, 2, RW, 0, 0, &res));
		EXPECT_EQ(0, st_try_write(&self->s, 2, 0, 2));
		/* 1 was demoted, and fenced: its write fails, data stays. */
		EXPECT_NE(0, st_try_write(&self->s, 1, 0, 0xbad));
		EXPECT_EQ(2, st_peek(_metadata, &self->s, 0));
		EXPECT_EQ(R, held(&self->s, 1));
		break;
	case SACRED_POLICY_REVOKE_ONLY:
		EXPECT_EQ(0, st_try_write(&self->s, 1, 0, 1));
		EXPECT_EQ(-EPERM, st_ask(&self->s, 2, RW, 0, 1, &res));
		EXPECT_EQ(SACRED_REFUSE_NO_GRANT, res.reason);
		ASSERT_EQ(0, st_ask(&self->s, 3, 0, 0, 1, &res));
		EXPECT_NE(0, st_try_write(&self->s, 1, 0, 0xbad));
		EXPECT_EQ(1, st_peek(_metadata, &self->s, 0));
		EXPECT_EQ(R, held(&self->s, 1));
		/* Never granted back, not even to itself. */
		EXPECT_EQ(-EPERM, st_ask(&self->s, 1, RW, 0, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_NO_GRANT, res.reason);
		break;
	case SACRED_POLICY_FENCED:
		ASSERT_EQ(0, st_ask(&self->s, 1, RW, 5, 0, &res));
		EXPECT_EQ(0, st_try_write(&self->s, 1, 0, 1));
		EXPECT_EQ(-EPERM, st_ask(&self->s, 2, RW, 5, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_STALE_BALLOT, res.reason);
		EXPECT_EQ(0, st_try_write(&self->s, 1, 0, 11));
		ASSERT_EQ(0, st_ask(&self->s, 2, RW, 6, 0, &res));
		EXPECT_NE(0, st_try_write(&self->s, 1, 0, 0xbad));
		EXPECT_EQ(11, st_peek(_metadata, &self->s, 0));
		EXPECT_EQ(-EPERM, st_ask(&self->s, 1, RW, 6, 0, &res));
		EXPECT_EQ(SACRED_REFUSE_STALE_BALLOT, res.reason);
		break;
	}
}

TEST_F(perm, refused_request_changes_nothing)
{
	uint64_t ballot = variant->policy == SACRED_POLICY_FENCED ? 100 : 0;
	struct st_procs *f = &self->s;
	struct sacred_perm_result res;
	struct sacred_region_info before, after;

	ASSERT_EQ(0, sacred_region_get(f->ctrl, f->mem.id, f->region,
				       &before));
	/* Process 3 may never write: refused under every policy. */
	EXPECT_EQ(-EPERM, st_ask(f, 3, RW, ballot, 0, &res));
	ASSERT_EQ(0, sacred_region_get(f->ctrl, f->mem.id, f->region,
				       &after));
	EXPECT_EQ(before.epoch, after.epoch);
	EXPECT_EQ(R, held(f, 3));
}

/*
 * More registrations than the 8-bit key space holds: every grant gets a
 * key the process did not hold in its last 255 grants, and the process
 * keeps a single MR.
 */
TEST_F(perm_ew, keys_never_repeat_across_the_8_bit_wrap)
{
	static uint32_t keys[600];
	struct sacred_perm_result res;
	int i, j, bad = 0;

	for (i = 0; i < 600; i++) {
		ASSERT_EQ(0, st_ask(&self->f, 1, i % 2 ? R : RW, 0, 0, &res));
		keys[i] = res.region.rkey;
	}
	for (i = 0; i < 600; i++)
		for (j = i + 1; j < 600 && j < i + 255; j++)
			bad += keys[i] == keys[j];
	EXPECT_EQ(0, bad);
}

/*
 * Where nothing changes access at runtime (static, swmr), the ACL is the
 * access: a new ACL that makes 2 the writer instead of 1 leaves 2 able to
 * write and 1 not - not the old access cut down to the new maximum.
 */
TEST_F(perm_acl, acl_handing_write_over_moves_it_where_the_acl_is_the_access)
{
	struct st_procs *f = &self->f;
	struct sacred_region_attr ra;
	uint64_t v = 42;

	ASSERT_EQ(0, set_acl(f->ctrl, f->mem.id, f->region, R, RW, R));
	ASSERT_EQ(0, sacred_conn_reconnect(f->p[2]));
	ASSERT_EQ(0, sacred_attach(f->p[2], f->region, &ra));
	EXPECT_EQ(RW, ra.access);
	EXPECT_EQ(0, sacred_write(f->p[2], f->region, 16, &v, sizeof(v)));
	EXPECT_EQ(42, st_peek(_metadata, f, 16));
	EXPECT_NE(0, st_try_write(f, 1, 16, 0xbad));
	EXPECT_EQ(42, st_peek(_metadata, f, 16));
	ASSERT_EQ(0, sacred_attach(f->p[1], f->region, &ra));
	EXPECT_EQ(R, ra.access);
}

TEST_F(perm_ew, epoch_counts_accepted_changes)
{
	struct st_procs *f = &self->f;
	struct sacred_perm_result res;
	uint32_t e0;

	ASSERT_EQ(0, st_ask(f, 1, RW, 0, 0, &res));
	e0 = res.region.epoch;
	ASSERT_EQ(0, st_ask(f, 2, RW, 0, 0, &res));
	EXPECT_EQ(e0 + 1, res.region.epoch);
	EXPECT_EQ(-EPERM, st_ask(f, 3, RW, 0, 0, &res));
	ASSERT_EQ(0, st_ask(f, 2, R, 0, 0, &res));
	EXPECT_EQ(e0 + 2, res.region.epoch);
}

/*
 * A change that fences nobody is decided and applied in the CQ handler
 * of its receive (PEER_CQ_CHANGES counts it), with the reply, key, epoch
 * and event of the work path: an own grant or loss, a refusal. One that
 * must revoke a connected writer never is (st_ask_in_cq(): the count
 * read right before and after each request, a dump, which is a barrier).
 */
TEST_F(perm_ew, own_change_is_answered_in_the_receive_completion)
{
	struct st_procs *f = &self->f;
	struct sacred_perm_result res;
	struct sacred_monitor *mon;
	struct sacred_event ev;
	uint64_t n;

	ASSERT_EQ(0, sacred_monitor_open(&mon));
	ASSERT_EQ(0, st_ask_in_cq(f, 1, RW, &res, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(RW, res.region.access);
	EXPECT_NE(0, res.region.rkey);
	/* Raised when the registration completed: this change, no error. */
	ASSERT_EQ(0, st_next_perm_event(mon, f->mem.id, f->region, 1, &ev));
	EXPECT_EQ(RW, ev.perm.access);
	EXPECT_EQ(res.region.epoch, ev.perm.epoch);
	EXPECT_EQ(0, ev.perm.reason);
	EXPECT_EQ(0, ev.perm.error);
	EXPECT_EQ(0, st_try_write(f, 1, 0, 1));

	/* 1 gives its write up: a loss of its own only. */
	ASSERT_EQ(0, st_ask_in_cq(f, 1, R, &res, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(R, res.region.access);

	/* Nobody writes now: 3's refusal is decided there too. */
	EXPECT_EQ(-EPERM, st_ask_in_cq(f, 3, RW, &res, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(SACRED_REFUSE_NOT_MEMBER, res.reason);
	EXPECT_EQ(R, res.region.access);
	ASSERT_EQ(0, st_next_perm_event(mon, f->mem.id, f->region, 3, &ev));
	EXPECT_EQ(SACRED_REFUSE_NOT_MEMBER, ev.perm.reason);
	EXPECT_EQ(res.region.epoch, ev.perm.epoch);
	sacred_monitor_close(mon);

	ASSERT_EQ(0, st_ask_in_cq(f, 2, RW, &res, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, st_try_write(f, 2, 0, 2));

	/* A refusal fences nobody, whoever writes: there too. */
	EXPECT_EQ(-EPERM, st_ask_in_cq(f, 3, RW, &res, &n));
	EXPECT_EQ(1, n);

	/* 2 gives everything up: its key is invalidated there. */
	ASSERT_EQ(0, st_ask_in_cq(f, 2, 0, &res, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, res.region.access);
	EXPECT_EQ(0, res.region.rkey);
	ASSERT_EQ(0, st_ask_in_cq(f, 2, RW, &res, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, st_try_write(f, 2, 0, 2));

	/*
	 * 1 takes write from 2, which is connected: that needs a fence,
	 * so the change is decided under the mutex (told before deciding:
	 * perm.write_from_a_connected_writer_is_decided_on_the_work_path).
	 */
	ASSERT_EQ(0, st_ask_in_cq(f, 1, RW, &res, &n));
	EXPECT_EQ(0, n);
	EXPECT_NE(0, st_try_write(f, 2, 0, 0xbad));
	EXPECT_EQ(2, st_peek(_metadata, f, 0));
	EXPECT_EQ(0, st_try_write(f, 1, 0, 3));
	EXPECT_EQ(3, st_peek(_metadata, f, 0));
}

/* tracefs, where the guest mounts it (mounted here if it is not). */
#define TR "/sys/kernel/tracing/"

static int tr_write(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), TR "%s", file);
	return write_file(path, val);
}

/* The trace buffer's text, split into lines; NULL if it cannot be read. */
static char *tr_read(char ***lines, int *nr)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), *p, *save;
	ssize_t n;
	int fd, i = 0;

	fd = open(TR "trace", O_RDONLY);
	if (fd < 0 || !buf)
		goto err;
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 4096) {
			p = realloc(buf, cap * 2);
			if (!p)
				goto err;
			buf = p;
			cap *= 2;
		}
	}
	close(fd);
	fd = -1;
	buf[len] = '\0';
	/* A line kept is at least one byte and its newline. */
	*lines = calloc(len / 2 + 1, sizeof(char *));
	if (!*lines)
		goto err;
	for (p = strtok_r(buf, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
		if (p[0] != '#')
			(*lines)[i++] = p;
	*nr = i;
	return buf;
err:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/*
 * The first line from @from on of event @ev (": ev: ") holding every one
 * of the NULL-terminated strings that follow; -1 if none.
 */
static int tr_find(char **lines, int nr, int from, const char *ev, ...)
{
	char name[64];
	const char *s;
	va_list ap;
	int i;

	snprintf(name, sizeof(name), ": %s: ", ev);
	for (i = from < 0 ? 0 : from; i < nr; i++) {
		if (!strstr(lines[i], name))
			continue;
		va_start(ap, ev);
		while ((s = va_arg(ap, const char *)) && strstr(lines[i], s))
			;
		va_end(ap);
		if (!s)
			return i;
	}
	return -1;
}

/*
 * The tracepoints (kmod/trace.h; scripts/switch-steps reads them) name
 * the steps of a request on each path, in the order they happen: an own
 * grant answered in its receive completion, then the revoke of a
 * connected writer on the work path - decided, the writer's LOCAL_INV,
 * its fence, the requester's REG_MR, the reply, the change's end.
 */
TEST_F(perm_ew, tracepoints_name_the_steps_of_each_path)
{
	struct st_procs *f = &self->f;
	struct sacred_perm_result res;
	const char *p1 = "process=1 ", *p2 = "process=2 ";
	const char *req2 = "requester=2 ";
	int nr = 0, recv, at, fence, reply;
	char m[32];
	char **ln = NULL, *buf;
	uint64_t n;

	if (access(TR "trace", F_OK))
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	ASSERT_EQ(0, access(TR "events/sacred/enable", W_OK));
	ASSERT_EQ(0, tr_write("tracing_on", "0"));
	ASSERT_EQ(0, tr_write("trace_clock", "mono"));
	ASSERT_EQ(0, tr_write("trace", ""));
	/*
	 * Without recording task names: the first event enabled would
	 * hook sched_wakeup and sched_switch for them, patching a static
	 * branch the scheduler runs all the time - under TCG a CPU in
	 * ttwu_do_activate() once hit that patch's int3 and the guest
	 * panicked (Documentation/testing.rst). The trace is read by
	 * event and field, never by task name.
	 */
	ASSERT_EQ(0, tr_write("options/record-cmd", "0"));
	ASSERT_EQ(0, tr_write("events/sacred/enable", "1"));
	ASSERT_EQ(0, tr_write("tracing_on", "1"));
	EXPECT_EQ(0, st_ask_in_cq(f, 1, RW, &res, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, st_ask_in_cq(f, 2, RW, &res, &n));
	EXPECT_EQ(0, n);
	tr_write("tracing_on", "0");
	tr_write("events/sacred/enable", "0");
	tr_write("options/record-cmd", "1");
	buf = tr_read(&ln, &nr);
	tr_write("trace_clock", "local");	/* which empties the buffer */
	ASSERT_NE(NULL, buf);

	snprintf(m, sizeof(m), "mem=%u ", f->mem.id);

	/* 1's own grant: decided, registered and answered in the CQ. */
	recv = tr_find(ln, nr, 0, "sacred_request_recv", m, p1, NULL);
	EXPECT_LE(0, recv);
	EXPECT_LT(recv, tr_find(ln, nr, recv, "sacred_change_decide", m,
				"requester=1 ", "reason=0 ", "path=cq", NULL));
	EXPECT_LT(recv, tr_find(ln, nr, recv, "sacred_grant_register", m,
				p1, "access=0x3 ", "err=0", NULL));
	reply = tr_find(ln, nr, recv, "sacred_request_reply", m, p1,
			"status=0 ", "path=cq", NULL);
	EXPECT_LT(recv, reply);
	EXPECT_EQ(-1, tr_find(ln, nr, recv, "sacred_request_queue", m, p1,
			      NULL));

	/* 2 takes write from 1: the work path, in this order. */
	recv = tr_find(ln, nr, reply, "sacred_request_recv", m, p2, NULL);
	EXPECT_LT(reply, recv);
	EXPECT_LT(recv, tr_find(ln, nr, recv, "sacred_request_queue", m, p2,
				NULL));
	at = tr_find(ln, nr, recv, "sacred_request_work", m, p2, NULL);
	EXPECT_LT(recv, at);
	EXPECT_EQ(-1, tr_find(ln, nr, recv, "sacred_change_decide", m, req2,
			      "path=cq", NULL));
	at = tr_find(ln, nr, at, "sacred_change_decide", m, req2,
		     "reason=0 ", "path=work", NULL);
	EXPECT_LE(0, at);
	at = tr_find(ln, nr, at, "sacred_change_invalidate", m,
		     "losers=1 ", "invalidated=1", NULL);
	EXPECT_LE(0, at);
	fence = tr_find(ln, nr, at, "sacred_fence_start", m, p1, NULL);
	EXPECT_LE(0, fence);
	reply = tr_find(ln, nr, fence, "sacred_request_reply", m, p2,
			"status=0 ", "path=work", NULL);
	EXPECT_LT(fence, reply);
	/* The drain's completion and the REG_MR: both before the reply. */
	at = tr_find(ln, nr, fence, "sacred_fence_end", m, p1, NULL);
	EXPECT_LE(0, at);
	EXPECT_LT(at, reply);
	at = tr_find(ln, nr, fence, "sacred_grant_register", m, p2,
		     "access=0x3 ", "err=0", NULL);
	EXPECT_LE(0, at);
	EXPECT_LT(at, reply);
	at = tr_find(ln, nr, reply, "sacred_change_end", m, req2,
		     "reason=0 ", "err=0", NULL);
	EXPECT_LT(reply, at);
	EXPECT_LT(at, tr_find(ln, nr, at, "sacred_request_done", m, p2,
			      NULL));
	free(ln);
	free(buf);
}

/*
 * Taking write from a connected writer needs a fence: the CQ handler
 * leaves it to the work path (PEER_CQ_CHANGES does not move), whether it
 * knows that before deciding (exclusive-writer, fenced: a request for
 * write takes it from everyone) or only once it decided, and takes the
 * decision back (revoke-only). A refusal fences nobody and is answered
 * there, whoever writes: a stale ballot, a policy that changes nothing.
 */
TEST_F(perm, write_from_a_connected_writer_is_decided_on_the_work_path)
{
	struct st_procs *f = &self->s;
	uint8_t pol = variant->policy;
	struct sacred_perm_result res;
	uint64_t n;

	/* 1 holds write: its own grant, or what its ACL entry gives. */
	if (pol == SACRED_POLICY_EXCLUSIVE_WRITER)
		ASSERT_EQ(0, st_ask_in_cq(f, 1, RW, &res, &n));
	if (pol == SACRED_POLICY_FENCED)
		ASSERT_EQ(0, st_ask_counted(f, 1, RW, 5, 0, &res, &n));
	ASSERT_EQ(0, st_try_write(f, 1, 0, 1));

	switch (pol) {
	case SACRED_POLICY_FENCED:
		/* A ballot not above 5 is refused, fencing nobody. */
		EXPECT_EQ(-EPERM, st_ask_counted(f, 2, RW, 5, 0, &res, &n));
		EXPECT_EQ(SACRED_REFUSE_STALE_BALLOT, res.reason);
		EXPECT_EQ(1, n);
		EXPECT_EQ(0, st_try_write(f, 1, 0, 2));
		ASSERT_EQ(0, st_ask_counted(f, 2, RW, 6, 0, &res, &n));
		break;
	case SACRED_POLICY_EXCLUSIVE_WRITER:
		ASSERT_EQ(0, st_ask_counted(f, 2, RW, 0, 0, &res, &n));
		break;
	case SACRED_POLICY_REVOKE_ONLY:
		ASSERT_EQ(0, st_ask_counted(f, 2, 0, 0, 1, &res, &n));
		break;
	default:
		EXPECT_EQ(-EPERM, st_ask_counted(f, 2, RW, 0, 0, &res, &n));
		EXPECT_EQ(1, n);
		EXPECT_EQ(0, st_try_write(f, 1, 0, 2));
		return;
	}
	EXPECT_EQ(0, n);
	EXPECT_NE(0, st_try_write(f, 1, 0, 0xbad));
	EXPECT_NE(0xbad, st_peek(_metadata, f, 0));
}

TEST_F(perm, admin_perm_set_runs_the_policy)
{
	struct st_procs *f = &self->s;
	struct sacred_perm_req req = {
		.region_id = f->region,
		.access = RW,
		.ballot = 9,
		.target = 1,
	};
	uint64_t v = 7;

	/* A ballot only on a fenced region, a target on a revoke-only one. */
	EXPECT_EQ(-EINVAL, sacred_perm_set(f->ctrl, f->mem.id, 2, &req));
	EXPECT_NE(NULL, sacred_ctrl_errmsg(f->ctrl));
	if (variant->policy != SACRED_POLICY_FENCED)
		req.ballot = 0;
	req.target = 0;
	if (variant->policy == SACRED_POLICY_STATIC ||
	    variant->policy == SACRED_POLICY_SWMR) {
		EXPECT_EQ(-EPERM, sacred_perm_set(f->ctrl, f->mem.id, 2,
						  &req));
		EXPECT_NE(NULL, sacred_ctrl_errmsg(f->ctrl));
		return;
	}
	if (variant->policy == SACRED_POLICY_REVOKE_ONLY) {
		req.access = 0;
		req.target = 1;
	}
	ASSERT_EQ(0, sacred_perm_set(f->ctrl, f->mem.id, 2, &req));
	if (variant->policy == SACRED_POLICY_REVOKE_ONLY) {
		EXPECT_NE(0, st_try_write(f, 1, 0, 0xbad));
		return;
	}
	/* Process 2 learns its new access when it attaches again. */
	ASSERT_EQ(0, sacred_conn_reconnect(f->p[2]));
	EXPECT_EQ(RW, held(f, 2));
	EXPECT_EQ(0, sacred_write(f->p[2], f->region, 8, &v, sizeof(v)));
	EXPECT_EQ(7, st_peek(_metadata, f, 8));
}

struct peer_seen {
	int connected;
	uint64_t fences;
	uint32_t mrs;
};

static int peer_cb(const struct sacred_peer_info *info, void *arg)
{
	struct peer_seen *s = arg;

	s->connected += info->connected;
	s->fences += info->fences;
	s->mrs += info->mrs;
	return 0;
}

TEST_F(perm, peer_list_counts_connections_and_mrs)
{
	struct st_procs *f = &self->s;
	struct peer_seen s = {};

	ASSERT_EQ(0, sacred_peer_list(f->ctrl, f->mem.id, peer_cb, &s));
	EXPECT_EQ(NPROC, s.connected);
	/* One MR per process holding access on the one region. */
	EXPECT_EQ(NPROC, s.mrs);
}

TEST_F(perm, region_deleted_under_a_writer)
{
	struct st_procs *f = &self->s;
	uint64_t ballot = variant->policy == SACRED_POLICY_FENCED ? 1 : 0;
	struct sacred_perm_result res;
	uint64_t v = 1;

	/* Where write is asked for, not held from the attach, ask. */
	if (!(held(f, 1) & SACRED_ACCESS_WRITE))
		ASSERT_EQ(0, st_ask(f, 1, RW, ballot, 0, &res));
	ASSERT_EQ(RW, held(f, 1));
	ASSERT_EQ(0, sacred_write(f->p[1], f->region, 0, &v, sizeof(v)));
	ASSERT_EQ(0, sacred_region_del(f->ctrl, f->mem.id, f->region));
	EXPECT_NE(0, sacred_write(f->p[1], f->region, 0, &v, sizeof(v)));
}

TEST_F(perm, instance_deleted_under_connected_processes)
{
	struct st_procs *f = &self->s;
	uint64_t v = 1;

	ASSERT_EQ(0, sacred_mem_del(f->ctrl, f->mem.id));
	f->mem.state = 0;
	EXPECT_NE(0, sacred_read(f->p[3], f->region, 0, &v, sizeof(v)));
}

TEST_HARNESS_MAIN
