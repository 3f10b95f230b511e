/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the sacred kselftests: running a shell command,
 * reading the rig's environment, dropping privileges.
 *
 * The tests run as root inside the SoftRoCE VM (scripts/vm-run), which
 * exports SACRED_RXE_DEVS ("rxe0 rxe1 rxe2"), SACRED_RXE_ADDRS and
 * SACRED_KO (the module under test).
 */
#ifndef _SACRED_TEST_H
#define _SACRED_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <grp.h>
#include <sys/wait.h>

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

/* Become nobody without capabilities; returns 0 or -1. */
static inline int drop_privileges(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

#endif /* _SACRED_TEST_H */
