/* SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause */
/*
 * tap.h - the runner every host unit test shares: a table of named
 * boolean tests, run in order, reported as TAP.
 */
#ifndef _SACRED_TAP_H
#define _SACRED_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct tap_test {
	const char *name;
	bool (*fn)(void);
};

/* Run @n tests, print TAP; returns the exit status: 0 if all passed. */
static inline int tap_run(const struct tap_test *tests, size_t n)
{
	unsigned int failed = 0;
	size_t i;

	printf("TAP version 13\n1..%zu\n", n);
	for (i = 0; i < n; i++) {
		bool ok = tests[i].fn();

		printf("%sok %zu - %s\n", ok ? "" : "not ", i + 1,
		       tests[i].name);
		failed += !ok;
	}
	return failed ? 1 : 0;
}

#endif /* _SACRED_TAP_H */
