/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every benchmark program measures with: the clock, the summary of
 * a sample series (min, median, p99, count) and its row as the reports
 * print it, the word splitter for SACRED_RXE_DEVS, the tag of the
 * replicated regions, and the state cycle of an rdma_cm connection's QP
 * (userswitch's QP cycle, permswitch's reference server after a fence).
 */
#ifndef SACRED_BENCH_H
#define SACRED_BENCH_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

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
