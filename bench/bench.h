/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every benchmark program measures with: the clock, the summary of
 * a sample series (min, median, p99, count) and its row as the reports
 * print it, the command line (bench_args(): a table of options, the
 * usage line made from it), the rig (SACRED_RXE_DEVS, SACRED_BENCH_DEV)
 * and the memory instances on it, region sizes as the -s options spell
 * them, the tag of the replicated regions, and the state cycle of an
 * rdma_cm connection's QP (userswitch's QP cycle, permswitch's reference
 * server after a fence).
 *
 * Each program is one translation unit: the program's name and start
 * time (bench_args()) are this header's own statics.
 */
#ifndef SACRED_BENCH_H
#define SACRED_BENCH_H

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

static const char *bench_prog = "bench";	/* for messages */
static double bench_t0;				/* when main() began */

/* A sample series, summarized: microseconds, and how many samples. */
struct stats {
	double min, med, p99;
	int n;
};

/*
 * The tag a benchmark makes replicated region @id with on every memory:
 * one incarnation (sacred_rmem_attach() leaves out memories that
 * disagree), another per run.
 */
#define BENCH_TAG(id) (0xbe0c000000000000ULL | \
		       ((unsigned long long)getpid() << 16) | (id))

/* CLOCK_MONOTONIC in microseconds. */
static inline double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sort @v (@n samples) and summarize it: the median is the upper one of
 * an even count, p99 the sample at index floor(0.99 n). All zero when
 * @n is 0.
 */
static inline struct stats summarize(double *v, int n)
{
	struct stats s = { .n = n };
	int i99 = (int)(n * 0.99);

	if (n <= 0)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	s.min = v[0];
	s.med = v[n / 2];
	s.p99 = v[i99 < n ? i99 : n - 1];
	return s;
}

/* A Markdown row: | what | min | median | p99 | n | */
static inline void stats_row(const char *what, struct stats s)
{
	printf("| %s | %.1f | %.1f | %.1f | %d |\n", what, s.min, s.med,
	       s.p99, s.n);
}

/* A row with a second column, @col: | what | col | min | median | p99 | n | */
static inline void stats_row2(const char *what, const char *col,
			      struct stats s)
{
	printf("| %s | %s | %.1f | %.1f | %.1f | %d |\n", what, col, s.min,
	       s.med, s.p99, s.n);
}

/* The head of a table of stats_row()s. */
static inline void stats_head(void)
{
	printf("| what | min | median | p99 | n |\n|---|---|---|---|---|\n");
}

/*
 * The last line of a report, "Run: S s<where>.", where scripts/bench-report
 * stops copying: @where is "" or, e.g., " in the guest".
 */
static inline void bench_footer(const char *where)
{
	printf("\nRun: %.0f s%s.\n", (now_us() - bench_t0) / 1e6, where);
}

/* "PROG: " and the message on stderr; exit with @status. */
static inline void __attribute__((format(printf, 2, 3), noreturn))
bench_exit(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bench_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* "PROG: WHAT: error" on stderr, exit 1: @ret is a negative errno. */
static inline void __attribute__((noreturn)) die(const char *what, int ret)
{
	bench_exit(1, "%s: %s", what, strerror(-ret));
}

/*
 * One option of a program (bench_args()): its letter and where its
 * value goes - an integer (@val, atoi), a string (@str) or, for a flag,
 * @flag set to @set. @usage is its part of the usage line, "[-n SAMPLES]";
 * NULL leaves it out (an option another one's @usage already names).
 */
struct bench_opt {
	char name;
	const char *usage;
	int *val;
	const char **str;
	bool *flag;
	bool set;
};

#define BENCH_INT(c, u, p)	{ .name = (c), .usage = (u), .val = (p) }
#define BENCH_STR(c, u, p)	{ .name = (c), .usage = (u), .str = (p) }
#define BENCH_FLAG(c, u, p, v)	{ .name = (c), .usage = (u), \
				  .flag = (p), .set = (v) }

/*
 * Parse @argv by the @nr options of @opts for program @prog. -h prints
 * the usage line ("usage: PROG [-n SAMPLES] ...", from @opts) and exits
 * 0; an unknown option prints it and exits 2. Range checks are the
 * caller's (bench_exit(2, ...)). Also starts the clock of bench_footer().
 */
static inline void bench_args(const char *prog, int argc, char **argv,
			      const struct bench_opt *opts, int nr)
{
	char spec[64] = "", *p = spec;
	const struct bench_opt *o;
	int opt, i;

	bench_prog = prog;
	bench_t0 = now_us();
	for (i = 0; i < nr && p < spec + sizeof(spec) - 4; i++) {
		*p++ = opts[i].name;
		if (opts[i].val || opts[i].str)
			*p++ = ':';
	}
	strcpy(p, "h");
	while ((opt = getopt(argc, argv, spec)) != -1) {
		for (o = opts; o < opts + nr && o->name != opt; o++)
			;
		if (opt == 'h' || opt == '?' || o == opts + nr) {
			fprintf(stderr, "usage: %s", prog);
			for (i = 0; i < nr; i++)
				if (opts[i].usage)
					fprintf(stderr, " %s", opts[i].usage);
			fputc('\n', stderr);
			exit(opt == 'h' ? 0 : 2);
		}
		if (o->val)
			*o->val = atoi(optarg);
		else if (o->str)
			*o->str = optarg;
		else
			*o->flag = o->set;
	}
}

/* SACRED_RXE_DEVS, the rig's devices (bench/run-all); exit 1 outside it. */
static inline const char *bench_rig_devs(void)
{
	const char *devs = getenv("SACRED_RXE_DEVS");

	if (!devs)
		bench_exit(1, "run in the VM rig (make bench)");
	return devs;
}

/* The device of a one-instance benchmark: SACRED_BENCH_DEV, else rxe0. */
static inline const char *bench_dev(void)
{
	return getenv("SACRED_BENCH_DEV") ?: "rxe0";
}

/* A region size as -s spells it: 4k, 64k, 1m, 1g or bytes. */
static inline uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': return v << 10;
	case 'm': case 'M': return v << 20;
	case 'g': case 'G': return v << 30;
	default: return v;
	}
}

/* A region size as the reports name it: "4 KiB", "256 MiB". */
static inline void format_size(uint64_t s, char *buf, size_t len)
{
	if (s >= 1 << 20)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(s >> 20));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)(s >> 10));
}

/* The @i-th space-separated word of @s into @buf; false if none. */
static inline bool word(const char *s, int i, char *buf, size_t len)
{
	size_t w;

	for (;;) {
		s += strspn(s, " ");
		w = strcspn(s, " ");
		if (!w)
			return false;
		if (!i--)
			break;
		s += w;
	}
	snprintf(buf, len, "%.*s", (int)w, s);
	return true;
}

/*
 * What rdma_cm moved a connection's QP through (cache_attrs(), once it
 * is connected); replayed for a state cycle (qp_cycle()).
 */
struct qp_attrs {
	struct ibv_qp_attr init, rtr, rts;
	int init_mask, rtr_mask, rts_mask;
};

static inline int cache_attrs(struct rdma_cm_id *id, struct qp_attrs *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->init.qp_state = IBV_QPS_INIT;
	qa->rtr.qp_state = IBV_QPS_RTR;
	qa->rts.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(id, &qa->init, &qa->init_mask) ||
	    rdma_init_qp_attr(id, &qa->rtr, &qa->rtr_mask) ||
	    rdma_init_qp_attr(id, &qa->rts, &qa->rts_mask))
		return -errno;
	return 0;
}

/*
 * RESET->INIT->RTR->RTS with the attributes the connection was set up
 * with. They are cached, not asked of rdma_cm again, so that only the
 * verbs are timed. Reusing the initial packet sequence numbers is fine
 * here because nothing is in flight; a real protocol would pick new ones
 * and tell the peer, which costs a message more.
 */
static inline int qp_cycle(struct ibv_qp *qp, const struct qp_attrs *qa,
			   int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (!ret) {
		a = qa->init;
		a.qp_access_flags = access;
		ret = ibv_modify_qp(qp, &a, qa->init_mask | IBV_QP_ACCESS_FLAGS);
	}
	if (!ret) {
		a = qa->rtr;
		ret = ibv_modify_qp(qp, &a, qa->rtr_mask);
	}
	if (!ret) {
		a = qa->rts;
		ret = ibv_modify_qp(qp, &a, qa->rts_mask);
	}
	return -ret;
}

#ifdef _SACRED_H
/* The control handle; exits on failure. */
static inline struct sacred_ctrl *bench_ctrl(void)
{
	struct sacred_ctrl *ctrl;
	int ret = sacred_ctrl_open(&ctrl);

	if (ret)
		die("sacred_ctrl_open", ret);
	return ctrl;
}

/*
 * One memory instance on bench_dev(), rdma_cm port @port, at most @cap
 * bytes of regions (0: the default) into @m; exits on failure.
 */
static inline void bench_mem(struct sacred_ctrl *ctrl, uint16_t port,
			     uint64_t cap, struct sacred_mem_info *m)
{
	struct sacred_mem_params mp = {
		.id = SACRED_MEM_ID_ANY,
		.cm_port = port,
		.dev_name = bench_dev(),
		.mem_cap = cap,
	};
	int ret = sacred_mem_new(ctrl, &mp, m);

	if (ret)
		die("memory add", ret);
}

/*
 * @nr memory instances, one on each of the first @nr devices of
 * SACRED_RXE_DEVS, rdma_cm port @port, @cap as bench_mem()'s, into
 * @mem[]; exits on failure.
 */
static inline void bench_mems(struct sacred_ctrl *ctrl, int nr, uint16_t port,
			      uint64_t cap, struct sacred_mem_info *mem)
{
	const char *devs = bench_rig_devs();
	char dev[64], what[64];
	int i, ret;

	for (i = 0; i < nr; i++) {
		struct sacred_mem_params p = {
			.id = SACRED_MEM_ID_ANY,
			.cm_port = port,
			.dev_name = dev,
			.mem_cap = cap,
		};

		if (!word(devs, i, dev, sizeof(dev))) {
			snprintf(what, sizeof(what),
				 "SACRED_RXE_DEVS names fewer than %d devices",
				 nr);
			die(what, -EINVAL);
		}
		ret = sacred_mem_new(ctrl, &p, &mem[i]);
		if (ret)
			die("sacred_mem_new", ret);
	}
}

/*
 * Region @id of @size bytes under @policy on each of the @nr_mems
 * memories @mem, with one tag on all (one incarnation: BENCH_TAG()),
 * read-write for the @nr_procs processes @pid0, @pid0 + 1, ...; exits on
 * failure.
 */
static inline void bench_region_everywhere(struct sacred_ctrl *ctrl,
					   const struct sacred_mem_info *mem,
					   int nr_mems, uint32_t id,
					   uint64_t size, uint8_t policy,
					   uint32_t pid0, int nr_procs)
{
	struct sacred_acl_entry acl[16];
	int i, ret;

	for (i = 0; i < nr_procs && i < 16; i++)
		acl[i] = (struct sacred_acl_entry){
			.process_id = pid0 + i,
			.access = SACRED_ACCESS_READ | SACRED_ACCESS_WRITE,
		};
	for (i = 0; i < nr_mems; i++) {
		ret = sacred_region_new_tagged(ctrl, mem[i].id, id, size,
					       policy, BENCH_TAG(id), NULL);
		if (!ret)
			ret = sacred_region_set_acl(ctrl, mem[i].id, id, acl,
						    nr_procs);
		if (ret)
			die("creating regions", ret);
	}
}

/*
 * The fields of a struct sacred_log_attr every benchmark log sets: its
 * regions (@log, heartbeats at @hb), @procs processes, a window of @cap
 * entries of up to @entry bytes, suspicion after @suspect ms.
 */
#define BENCH_LOG_ATTR(log, hb, procs, cap, entry, suspect)		\
	.log_region = (log), .hb_region = (hb), .nr_procs = (procs),	\
	.capacity = (cap), .entry_max = (entry), .suspect_ms = (suspect)

/*
 * A single-shot decision instance at @region, by algorithm @alg (PMP or
 * Disk Paxos), for process 0 of @nr_procs, values of up to 32 bytes;
 * @timeout_ms 0 for the library's. Exits on failure.
 */
static inline struct sacred_pmp *bench_pmp_open(struct sacred_rmem *rm,
						int alg, uint32_t region,
						unsigned int nr_procs,
						int timeout_ms)
{
	struct sacred_pmp_attr a = {
		.rm = rm,
		.region_id = region,
		.alg = alg,
		.nr_procs = nr_procs,
		.me = 0,
		.value_max = 32,
		.timeout_ms = timeout_ms,
	};
	struct sacred_pmp *p;
	int ret = sacred_pmp_open(&a, &p);

	if (ret)
		die("sacred_pmp_open", ret);
	return p;
}

/*
 * The single-shot decision of the benchmarks: "value" proposed on the
 * open instance @p, timed, then @p closed. Microseconds; *@fast false if
 * the decision left the fast path or decided another value.
 */
static inline double bench_propose(struct sacred_pmp *p, bool *fast)
{
	struct sacred_pmp_stats st;
	char out[32];
	size_t len;
	double t0, t;
	int ret;

	t0 = now_us();
	ret = sacred_pmp_propose(p, "value", 6, out, sizeof(out), &len);
	t = now_us() - t0;
	if (ret)
		die("sacred_pmp_propose", ret);
	sacred_pmp_stats(p, &st);
	*fast = st.fast && len == 6 && !memcmp(out, "value", 6);
	sacred_pmp_close(p);
	return t;
}

/*
 * Process @pid connected to the instance at @addr (10 s to connect) and
 * attached to @region: the client of the switch benchmarks. For programs
 * that include sacred.h first.
 */
static inline int bench_conn_open(const struct sockaddr_storage *addr,
				  uint32_t pid, uint32_t region,
				  struct sacred_conn **c)
{
	struct sacred_conn_attr attr = {
		.addr = (const struct sockaddr *)addr,
		.process_id = pid,
		.timeout_ms = 10000,
	};
	struct sacred_region_attr ra;
	int ret;

	ret = sacred_conn_create(&attr, c);
	if (!ret)
		ret = sacred_attach(*c, region, &ra);
	return ret;
}
#endif

#endif /* SACRED_BENCH_H */
