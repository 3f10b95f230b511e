/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the sacred kselftests: running a shell command,
 * reading the rig's environment, dropping privileges, a memory that
 * never answers.
 *
 * The tests run as root inside the SoftRoCE VM (scripts/vm-run), which
 * exports SACRED_RXE_DEVS ("rxe0 rxe1 rxe2"), SACRED_RXE_ADDRS and
 * SACRED_KO (the module under test).
 */
#ifndef _SACRED_TEST_H
#define _SACRED_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <rdma/rdma_cma.h>

/*
 * Every test case gets 120 s instead of the harness's 30: the same
 * programs run again under valgrind in the TCG guest (selftests/run.sh),
 * where a busy host makes a case ten times slower. Include this header
 * after kselftest_harness.h.
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 120
#endif

/*
 * Evaluate @expr (0 or a negative errno) up to @tries times, reconnecting
 * the replicated memory @rm's memories before each: a memory that was
 * down, or a connection the kernel fenced, is found broken only in use.
 * Stops at the first result other than -ECONNRESET and -ENOTCONN, and
 * evaluates to the last result.
 */
#define after_revive(rm, tries, expr) ({				\
	int __ret = -ENOTCONN;						\
									\
	for (int __t = 0; __t < (tries); __t++) {			\
		sacred_rmem_revive(rm);					\
		__ret = (expr);						\
		if (__ret != -ECONNRESET && __ret != -ENOTCONN)		\
			break;						\
	}								\
	__ret;								\
})

/*
 * @expr, a blocking call on a connection of a replicated memory, made
 * again while it fails with -EBUSY - stragglers of the handle's last
 * quorum call still in flight there - for up to two seconds.
 */
#define once_settled(expr) ({						\
	int __ret;							\
									\
	for (int __t = 0; (__ret = (expr)) == -EBUSY && __t < 200; __t++) \
		usleep(10000);						\
	__ret;								\
})

/* Run a shell command quietly; returns its exit status or -1. */
static inline int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * Write @val to the file at @path (a sysfs, debugfs or tracefs knob), in
 * one write; 0 or -errno.
 */
static inline int write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		n = -errno;
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : n < 0 ? n : -EIO;
}

/* The @i-th word of environment variable @var, or NULL. */
static inline const char *env_word(const char *var, int i, char *buf,
				   size_t len)
{
	const char *s = getenv(var);
	int n = 0;

	if (!s)
		return NULL;
	while (*s) {
		size_t w;

		s += strspn(s, " ");
		w = strcspn(s, " ");
		if (!w)
			break;
		if (n++ == i) {
			snprintf(buf, len, "%.*s", (int)w, s);
			return buf;
		}
		s += w;
	}
	return NULL;
}

/*
 * How many times slower than usual this run is: SACRED_TEST_SLOW, 1 to
 * 100 (default 1). selftests/run.sh sets it for the valgrind pass. A test
 * whose scenario is timed against a protocol's clock (a follower that
 * must time out before the leader shows up) stretches both by it; a
 * scenario that can be sequenced by events instead should be.
 */
static inline unsigned int test_slow(void)
{
	const char *s = getenv("SACRED_TEST_SLOW");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v < 1 ? 1 : v > 100 ? 100 : (unsigned int)v;
}

/* Seconds on the monotonic clock. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#ifdef _SACRED_H
/*
 * Region @id of @size bytes with @policy on each of the @nr_mems
 * instances @mem, its ACL processes @pid0 .. @pid0 + @nr_procs - 1:
 * process index @writer read-write and the others read, or all read-write
 * when @writer is negative, made with @tag everywhere (one incarnation:
 * sacred_rmem_attach() counts only memories of the tag a quorum shares).
 * Returns
 * 0 or a negative errno. (For tests that include sacred.h first.)
 */
static inline int region_on_all_tagged(struct sacred_ctrl *ctrl,
				       const struct sacred_mem_info *mem,
				       unsigned int nr_mems, uint32_t id,
				       uint64_t size, uint8_t policy,
				       uint32_t pid0, unsigned int nr_procs,
				       int writer, uint64_t tag)
{
	struct sacred_acl_entry acl[64];
	unsigned int i;
	int ret;

	if (nr_procs > 64)
		return -EINVAL;
	for (i = 0; i < nr_procs; i++)
		acl[i] = (struct sacred_acl_entry){
			.process_id = pid0 + i,
			.access = writer < 0 || (int)i == writer ?
				  SACRED_ACCESS_READ | SACRED_ACCESS_WRITE :
				  SACRED_ACCESS_READ,
		};
	for (i = 0; i < nr_mems; i++) {
		ret = sacred_region_new_tagged(ctrl, mem[i].id, id, size,
					       policy, tag, NULL);
		if (!ret)
			ret = sacred_region_set_acl(ctrl, mem[i].id, id, acl,
						    nr_procs);
		if (ret)
			return ret;
	}
	return 0;
}

/* region_on_all_tagged() with one tag per test process: this pid's. */
static inline int region_on_all(struct sacred_ctrl *ctrl,
				const struct sacred_mem_info *mem,
				unsigned int nr_mems, uint32_t id, uint64_t size,
				uint8_t policy, uint32_t pid0,
				unsigned int nr_procs, int writer)
{
	return region_on_all_tagged(ctrl, mem, nr_mems, id, size, policy,
				    pid0, nr_procs, writer,
				    0x5ac7ed0000000000ULL | getpid());
}

/*
 * One memory instance on each of the first @nr rxe devices, listening on
 * @port: @mem[i] its info, @have[i] set once made (teardown deletes
 * those), @m[i] (unless @m is NULL) a replicated-memory member for it
 * whose timeout is SACRED_CONN_TIMEOUT_MS (default 1000). Returns 0;
 * -ENODEV, before making anything, when the rig has fewer than @nr
 * devices (skip); the error of sacred_mem_new().
 */
static inline int mems_new(struct sacred_ctrl *ctrl, unsigned int nr,
			   uint16_t port, struct sacred_mem_info *mem,
			   bool *have, struct sacred_rmem_member *m)
{
	const char *t = getenv("SACRED_CONN_TIMEOUT_MS");
	char dev[64];
	unsigned int i;
	int ret;

	if (!nr || !env_word("SACRED_RXE_DEVS", nr - 1, dev, sizeof(dev)))
		return -ENODEV;
	for (i = 0; i < nr; i++) {
		struct sacred_mem_params p = {
			.id = SACRED_MEM_ID_ANY,
			.cm_port = port,
			.dev_name = dev,
		};

		env_word("SACRED_RXE_DEVS", i, dev, sizeof(dev));
		ret = sacred_mem_new(ctrl, &p, &mem[i]);
		if (ret)
			return ret;
		have[i] = true;
		if (!m)
			continue;
		m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&mem[i].addr,
			.timeout_ms = t ? atoi(t) : 1000,
		};
	}
	return 0;
}

/*
 * Teardown of mems_new(): delete the instances of @mem made (@have), of
 * @nr, and close @ctrl.
 */
static inline void mems_del(struct sacred_ctrl *ctrl,
			    const struct sacred_mem_info *mem,
			    const bool *have, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (have[i])
			sacred_mem_del(ctrl, mem[i].id);
	sacred_ctrl_close(ctrl);
}

/*
 * Replace *@rm with a new handle of process @pid on the @nr memories
 * @mem (max_io 4096, timeouts as mems_new()'s): a handle lives with one
 * incarnation of each region it attached, so a test that makes its
 * regions again everywhere opens them through new handles. Returns 0 or
 * the error of sacred_rmem_create() (*@rm NULL then).
 */
static inline int rmem_anew(struct sacred_rmem **rm,
			    const struct sacred_mem_info *mem, unsigned int nr,
			    uint32_t pid)
{
	const char *t = getenv("SACRED_CONN_TIMEOUT_MS");
	struct sacred_rmem_member m[SACRED_RMEM_MAX];
	struct sacred_rmem_attr ra = {
		.process_id = pid,
		.nr_mems = nr,
		.mems = m,
		.max_io = 4096,
	};
	unsigned int i;

	sacred_rmem_destroy(*rm);
	*rm = NULL;
	if (nr > SACRED_RMEM_MAX)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&mem[i].addr,
			.timeout_ms = t ? atoi(t) : 1000,
		};
	return sacred_rmem_create(&ra, rm);
}
#endif

#if defined(_SACRED_H) && defined(__KSELFTEST_HARNESS_H)
/*
 * The opening of a fixture on the VM rig: the control connection into
 * *@ctrl, and a skip unless sacred.ko is loaded, SACRED_RXE_DEVS names
 * @nr_devs rxe devices and SACRED_RXE_ADDRS @nr_addrs addresses. Returns
 * true to go on; false once the test is skipped (the setup returns).
 */
static inline bool st_open(struct __test_metadata *_metadata,
			   struct sacred_ctrl **ctrl, unsigned int nr_devs,
			   unsigned int nr_addrs)
{
	char w[64];
	int ret;

	ret = sacred_ctrl_open(ctrl);
	if (ret == -ENOENT)
		SKIP(return false, "sacred.ko is not loaded");
	ASSERT_EQ(0, ret);
	if ((nr_devs && !env_word("SACRED_RXE_DEVS", nr_devs - 1, w,
				  sizeof(w))) ||
	    (nr_addrs && !env_word("SACRED_RXE_ADDRS", nr_addrs - 1, w,
				   sizeof(w))))
		SKIP(return false,
		     "needs the VM rig's SACRED_RXE_DEVS/ADDRS (%u/%u)",
		     nr_devs, nr_addrs);
	return true;
}

/*
 * A memory instance on the @i-th rxe device of the rig with the
 * parameters @p (their dev_name is that device's), its info into *@mem;
 * the test fails unless it is made.
 */
static inline void st_mem_new(struct __test_metadata *_metadata,
			      struct sacred_ctrl *ctrl, unsigned int i,
			      const struct sacred_mem_params *p,
			      struct sacred_mem_info *mem)
{
	struct sacred_mem_params mp = *p;
	char dev[64];

	ASSERT_NE(NULL, env_word("SACRED_RXE_DEVS", i, dev, sizeof(dev)));
	mp.dev_name = dev;
	ASSERT_EQ(0, sacred_mem_new(ctrl, &mp, mem));
}

/*
 * A region of @size bytes under @policy on memory @mem_id, any id, its
 * info into *@ri, with the @nr entries of @acl as its ACL (none when
 * @nr is 0); the test fails unless both are done.
 */
static inline void st_region_new(struct __test_metadata *_metadata,
				 struct sacred_ctrl *ctrl, uint32_t mem_id,
				 uint64_t size, uint8_t policy,
				 const struct sacred_acl_entry *acl,
				 unsigned int nr,
				 struct sacred_region_info *ri)
{
	ASSERT_EQ(0, sacred_region_new(ctrl, mem_id, SACRED_REGION_ID_ANY,
				       size, policy, ri));
	if (nr)
		ASSERT_EQ(0, sacred_region_set_acl(ctrl, mem_id, ri->id, acl,
						   nr));
}

/*
 * A directory /tmp/sacred-@suite-<pid> into @dir (@len bytes) with the
 * Byzantine signing keys of processes 0 to @nr_procs - 1
 * (sacred_bz_keygen()); the teardown removes it (sh("rm -rf")).
 */
static inline void st_keys_dir(struct __test_metadata *_metadata, char *dir,
			       size_t len, const char *suite,
			       unsigned int nr_procs)
{
	unsigned int i;

	snprintf(dir, len, "/tmp/sacred-%s-%d", suite, getpid());
	ASSERT_EQ(0, mkdir(dir, 0700));
	for (i = 0; i < nr_procs; i++)
		ASSERT_EQ(0, sacred_bz_keygen(dir, i));
}

/*
 * Processes 0 to @nr_procs - 1 (ids @pid0 + i) of a Byzantine protocol:
 * the keys of each from @dir (st_keys_dir()) into @keys[i], and its
 * handle on the @nr_mems memories @mem (rmem_anew()) into @rm[i].
 */
static inline void st_bz_procs_open(struct __test_metadata *_metadata,
				    const char *dir, unsigned int nr_procs,
				    uint32_t pid0,
				    const struct sacred_mem_info *mem,
				    unsigned int nr_mems,
				    struct sacred_bz_keys **keys,
				    struct sacred_rmem **rm)
{
	unsigned int i;

	for (i = 0; i < nr_procs; i++) {
		ASSERT_EQ(0, sacred_bz_keys_load(dir, nr_procs, i, &keys[i]));
		ASSERT_EQ(0, rmem_anew(&rm[i], mem, nr_mems, pid0 + i));
	}
}

/* Teardown of st_bz_procs_open() and st_keys_dir(). */
static inline void st_bz_procs_close(const char *dir, unsigned int nr_procs,
				     struct sacred_bz_keys **keys,
				     struct sacred_rmem **rm)
{
	unsigned int i;

	for (i = 0; i < nr_procs; i++) {
		sacred_rmem_destroy(rm[i]);
		sacred_bz_keys_free(keys[i]);
	}
	if (dir[0])
		sh("rm -rf %s", dir);
}

#define ST_NPROC	3

/*
 * One memory instance and processes 1 to ST_NPROC connected to it, each
 * on one region of it: the fixtures of sacred_perm and sacred_bpf.
 */
struct st_procs {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem;
	struct sockaddr_in addr;
	struct sacred_conn *p[ST_NPROC + 1];	/* process i is p[i] */
	uint32_t region;
};

/*
 * st_open() for a rig with an address, and the instance on its first
 * rxe device; true to go on, false once skipped.
 */
static inline bool st_procs_open(struct __test_metadata *_metadata,
				 struct st_procs *s)
{
	struct sacred_mem_params mp = { .id = SACRED_MEM_ID_ANY };

	if (!st_open(_metadata, &s->ctrl, 1, 1))
		return false;
	st_mem_new(_metadata, s->ctrl, 0, &mp, &s->mem);
	memcpy(&s->addr, &s->mem.addr, sizeof(s->addr));
	return true;
}

/* Process @pid connected to the instance, attached to the region. */
static inline int st_procs_connect(struct st_procs *s, uint32_t pid,
				   struct sacred_region_attr *ra)
{
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&s->addr,
		.process_id = pid,
	};
	int ret;

	ret = sacred_conn_create(&attr, &s->p[pid]);
	if (ret)
		return ret;
	return sacred_attach(s->p[pid], s->region, ra);
}

static inline void st_procs_close(struct st_procs *s)
{
	int i;

	for (i = 1; i <= ST_NPROC; i++)
		sacred_conn_destroy(s->p[i]);
	if (s->ctrl && s->mem.state)
		sacred_mem_del(s->ctrl, s->mem.id);
	sacred_ctrl_close(s->ctrl);
}

/* A process to look up among an instance's peers, and where to put it. */
struct st_peer_query {
	uint32_t pid;
	struct sacred_peer_info *p;
};

/* sacred_peer_list() callback: the entry of the process @arg names. */
static inline int st_peer_match(const struct sacred_peer_info *info,
				void *arg)
{
	struct st_peer_query *q = arg;

	if (info->process_id == q->pid)
		*q->p = *info;
	return 0;
}

/*
 * What instance @mem_id says of process @pid, into @p - left untouched
 * (its process_id 0, say) if the instance has no such peer. 0 or -errno.
 */
static inline int st_peer_of(struct sacred_ctrl *ctrl, uint32_t mem_id,
			     uint32_t pid, struct sacred_peer_info *p)
{
	struct st_peer_query q = { .pid = pid, .p = p };

	return sacred_peer_list(ctrl, mem_id, st_peer_match, &q);
}

/*
 * PEER_CQ_CHANGES of process @pid: its changes the instance answered in
 * their receive completion; UINT64_MAX if it is unknown. Also a barrier:
 * the dump takes the instance's mutex, so every request answered under it
 * before (whose reply may have come before the mutex was dropped) is
 * finished, and the next change finds the mutex free unless something
 * else takes it.
 */
static inline uint64_t st_cq_changes(struct st_procs *s, uint32_t pid)
{
	struct sacred_peer_info p = {};

	if (st_peer_of(s->ctrl, s->mem.id, pid, &p) || p.process_id != pid)
		return UINT64_MAX;
	return p.cq_changes;
}

/*
 * The next PERM event about region @mem_id/@region_id from process @pid,
 * within 10 s each: 0, or the error of sacred_monitor_next().
 */
static inline int st_next_perm_event(struct sacred_monitor *mon,
				     uint32_t mem_id, uint32_t region_id,
				     uint32_t pid, struct sacred_event *ev)
{
	int ret;

	do {
		ret = sacred_monitor_next(mon, ev, 10000);
	} while ((!ret || ret == -ENOBUFS) &&
		 (ev->type != SACRED_EVENT_PERM ||
		  ev->perm.mem_id != mem_id ||
		  ev->perm.region_id != region_id ||
		  ev->perm.process_id != pid));
	return ret;
}

/* Process @pid asks for @access on the region: sacred_change_perm(). */
static inline int st_ask(struct st_procs *s, int pid, uint32_t access,
			 uint64_t ballot, uint32_t target,
			 struct sacred_perm_result *res)
{
	struct sacred_perm_req req = {
		.region_id = s->region,
		.access = access,
		.ballot = ballot,
		.target = target,
	};

	return sacred_change_perm(s->p[pid], &req, res);
}

/*
 * st_ask(), and how many of @pid's changes the instance answered in their
 * receive completion meanwhile (*@in_cq: 1 if this one was, 0 if not;
 * counts read with st_cq_changes() right before and after, UINT64_MAX if
 * either is unknown).
 */
static inline int st_ask_counted(struct st_procs *s, int pid, uint32_t access,
				 uint64_t ballot, uint32_t target,
				 struct sacred_perm_result *res,
				 uint64_t *in_cq)
{
	uint64_t before = st_cq_changes(s, pid), after;
	int ret = st_ask(s, pid, access, ballot, target, res);

	after = st_cq_changes(s, pid);
	*in_cq = before == UINT64_MAX || after == UINT64_MAX ?
		 UINT64_MAX : after - before;
	return ret;
}

/* st_ask_counted() with no ballot or target. */
static inline int st_ask_in_cq(struct st_procs *s, int pid, uint32_t access,
			       struct sacred_perm_result *res,
			       uint64_t *in_cq)
{
	return st_ask_counted(s, pid, access, 0, 0, res, in_cq);
}

/* Write a word as @pid; on a broken connection, reconnect. */
static inline int st_try_write(struct st_procs *s, int pid, uint64_t off,
			       uint64_t v)
{
	int ret = sacred_write(s->p[pid], s->region, off, &v, sizeof(v));

	if (ret == -EACCES || ret == -ECONNRESET)
		sacred_conn_reconnect(s->p[pid]);
	return ret;
}

/* The word at @off as process 3, the reader, reads it. */
static inline uint64_t st_peek(struct __test_metadata *_metadata,
			       struct st_procs *s, uint64_t off)
{
	uint64_t v = 0;

	EXPECT_EQ(0, sacred_read(s->p[3], s->region, off, &v, sizeof(v)));
	return v;
}
#endif

/* Load the module file @path (finit_module); 0 or -errno. */
static inline int module_load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* Unload sacred.ko; 0 or -errno (-EWOULDBLOCK while it is in use). */
static inline int module_unload(void)
{
	return syscall(SYS_delete_module, "sacred", O_NONBLOCK) ? -errno : 0;
}

/* Become nobody without capabilities; returns 0 or -1. */
static inline int drop_privileges(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

/*
 * A listener that takes connect requests and never answers them: a
 * memory whose host is there but does not answer, as far as a process's
 * connect can tell. close_silent() turns the requests it got away.
 */
struct silent {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

static inline int listen_silent(struct silent *sl, const struct sockaddr_storage *a)
{
	sl->ch = rdma_create_event_channel();
	if (!sl->ch)
		return -errno;
	if (fcntl(sl->ch->fd, F_SETFL, O_NONBLOCK) ||
	    rdma_create_id(sl->ch, &sl->id, NULL, RDMA_PS_TCP))
		return -errno;
	if (rdma_bind_addr(sl->id, (struct sockaddr *)a) ||
	    rdma_listen(sl->id, 4))
		return -errno;
	return 0;
}

static inline unsigned int close_silent(struct silent *sl)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *req;
	unsigned int n = 0;

	while (sl->ch && !rdma_get_cm_event(sl->ch, &ev)) {
		req = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ? ev->id : NULL;
		rdma_ack_cm_event(ev);
		if (req) {
			rdma_reject(req, NULL, 0);
			rdma_destroy_id(req);
			n++;
		}
	}
	if (sl->id)
		rdma_destroy_id(sl->id);
	if (sl->ch)
		rdma_destroy_event_channel(sl->ch);
	return n;
}

#endif /* _SACRED_TEST_H */
