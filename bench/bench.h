/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every benchmark program measures with: the clock, the summary of
 * a sample series (min, median, p99, count) and its row as the reports
 * print it, the word splitter for SACRED_RXE_DEVS, and the tag of the
 * replicated regions.
 */
#ifndef SACRED_BENCH_H
#define SACRED_BENCH_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

#endif /* SACRED_BENCH_H */
