// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * test_strs - host-side unit tests of libsacred's names (lib/strs.c):
 * access sets and refusal reasons, both ways, and of the CLI's ACL list
 * parser (tools/utils.c) with the library's access parser, as
 * `sacred region set ... acl` runs them.
 *
 * Unit tests link tools/utils.o and tools/json.o only; lib/strs.c needs
 * nothing but libc, so it is compiled into this program (found through
 * -Ilib).
 *
 * Prints TAP version 13; exits 1 if any case fails.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strs.c"
#include "utils.h"
#include "tap.h"

static bool check(bool cond, const char *what)
{
	if (!cond)
		printf("# failed: %s\n", what);
	return cond;
}

#define CHECK(cond) check((cond), #cond)

#define RW	(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

static bool access_names_round_trip(void)
{
	static const uint32_t sets[] = {
		0, SACRED_ACCESS_READ, RW, SACRED_ACCESS_ALL,
	};
	uint32_t access;
	bool ok = true;
	size_t i;

	ok &= CHECK(!strcmp(sacred_access_str(0), "none"));
	ok &= CHECK(!strcmp(sacred_access_str(SACRED_ACCESS_READ), "r"));
	ok &= CHECK(!strcmp(sacred_access_str(RW), "rw"));
	ok &= CHECK(!strcmp(sacred_access_str(SACRED_ACCESS_ALL), "rwa"));
	for (i = 0; i < ARRAY_SIZE(sets); i++) {
		access = 0xdead;
		ok &= CHECK(!sacred_access_parse(sacred_access_str(sets[i]),
						 &access));
		ok &= CHECK(access == sets[i]);
	}
	return ok;
}

static bool access_str_names_other_sets_unknown(void)
{
	bool ok = true;

	/* Not one of the four sets an ACL entry may hold. */
	ok &= CHECK(!strcmp(sacred_access_str(SACRED_ACCESS_WRITE),
			    "unknown"));
	ok &= CHECK(!strcmp(sacred_access_str(SACRED_ACCESS_ATOMIC),
			    "unknown"));
	ok &= CHECK(!strcmp(sacred_access_str(SACRED_ACCESS_READ |
					      SACRED_ACCESS_ATOMIC),
			    "unknown"));
	ok &= CHECK(!strcmp(sacred_access_str(8), "unknown"));
	ok &= CHECK(!strcmp(sacred_access_str(UINT32_MAX), "unknown"));
	return ok;
}

static bool access_parse_takes_exact_names_only(void)
{
	static const char *const bad[] = {
		"", "R", "RW", "w", "wr", "rwx", "ra", "rw ", " r", "n",
		"no", "None", "unknown", "read", "0", "1",
	};
	uint32_t access = 0xdead;
	bool ok = true;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (sacred_access_parse(bad[i], &access) != -EINVAL) {
			printf("# accepted \"%s\"\n", bad[i]);
			ok = false;
		}
	}
	ok &= CHECK(access == 0xdead);	/* untouched on failure */
	ok &= CHECK(sacred_access_parse(NULL, &access) == -EINVAL);
	ok &= CHECK(sacred_access_parse("r", NULL) == -EINVAL);
	return ok;
}

static bool refuse_str_names_every_reason(void)
{
	bool ok = true;

	ok &= CHECK(!strcmp(sacred_refuse_str(SACRED_REFUSE_NONE), "none"));
	ok &= CHECK(!strcmp(sacred_refuse_str(SACRED_REFUSE_STATIC),
			    "static"));
	ok &= CHECK(!strcmp(sacred_refuse_str(SACRED_REFUSE_NOT_MEMBER),
			    "not-member"));
	ok &= CHECK(!strcmp(sacred_refuse_str(SACRED_REFUSE_SWMR), "swmr"));
	ok &= CHECK(!strcmp(sacred_refuse_str(SACRED_REFUSE_NO_GRANT),
			    "no-grant"));
	ok &= CHECK(!strcmp(sacred_refuse_str(SACRED_REFUSE_STALE_BALLOT),
			    "stale-ballot"));
	ok &= CHECK(!strcmp(sacred_refuse_str(SACRED_REFUSE_STALE_BALLOT + 1),
			    "unknown"));
	ok &= CHECK(!strcmp(sacred_refuse_str(UINT32_MAX), "unknown"));
	return ok;
}

/* parse_acl() of @s into @acl/@n, as region set calls it. */
static int acl(const char *s, struct sacred_acl_entry **e, unsigned int *n,
	       const char **bad)
{
	*e = (void *)0x1;
	*n = 12345;
	*bad = NULL;
	return parse_acl(s, sacred_access_parse, e, n, bad);
}

static bool parse_acl_takes_lists(void)
{
	struct sacred_acl_entry *e;
	const char *bad;
	unsigned int n;
	bool ok = true;

	ok &= CHECK(!acl("1:rw", &e, &n, &bad));
	ok &= CHECK(n == 1 && e[0].process_id == 1 && e[0].access == RW &&
		    e[0].access_cur == 0);
	free(e);

	ok &= CHECK(!acl("1:rw,2:r,3:none,0x10:rwa,4294967295:r", &e, &n,
			 &bad));
	ok &= CHECK(n == 5);
	if (n == 5) {
		ok &= CHECK(e[0].process_id == 1 && e[0].access == RW);
		ok &= CHECK(e[1].process_id == 2 &&
			    e[1].access == SACRED_ACCESS_READ);
		ok &= CHECK(e[2].process_id == 3 && e[2].access == 0);
		ok &= CHECK(e[3].process_id == 16 &&
			    e[3].access == SACRED_ACCESS_ALL);
		ok &= CHECK(e[4].process_id == UINT32_MAX &&
			    e[4].access == SACRED_ACCESS_READ);
	}
	free(e);

	/* Duplicates are the kernel's to refuse. */
	ok &= CHECK(!acl("1:r,1:rw", &e, &n, &bad));
	ok &= CHECK(n == 2);
	free(e);
	return ok;
}

static bool parse_acl_empty_list_is_none_or_nothing(void)
{
	struct sacred_acl_entry *e;
	const char *bad;
	unsigned int n;
	bool ok = true;

	ok &= CHECK(!acl("none", &e, &n, &bad));
	ok &= CHECK(!e && n == 0);
	ok &= CHECK(!acl("", &e, &n, &bad));
	ok &= CHECK(!e && n == 0);
	return ok;
}

static bool parse_acl_points_at_the_bad_item(void)
{
	static const struct {
		const char *s;
		size_t bad_at;
	} cases[] = {
		{ "1", 0 },		/* no access */
		{ "1:", 0 },
		{ ":rw", 0 },		/* no pid */
		{ "1:rw,", 5 },		/* empty item at the end */
		{ ",1:rw", 0 },
		{ "1:rw,,2:r", 5 },
		{ "1:rw,2:x", 5 },
		{ "1:rw,2:rwaa", 5 },
		{ "1:rw,2:rwarwarwa", 5 },	/* longer than any name */
		{ "1:rw,-2:r", 5 },
		{ "1:rw,4294967296:r", 5 },	/* pid above 32 bits */
		{ "1:rw,2:r:r", 5 },
		{ "1:rw 2:r", 0 },
		{ "x:rw", 0 },
		{ "none,1:r", 0 },
		{ "NONE", 0 },
	};
	struct sacred_acl_entry *e;
	const char *bad;
	unsigned int n;
	bool ok = true;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (acl(cases[i].s, &e, &n, &bad) != -EINVAL) {
			printf("# accepted \"%s\"\n", cases[i].s);
			ok = false;
			continue;
		}
		if (bad != cases[i].s + cases[i].bad_at) {
			printf("# \"%s\": bad item at %td, not %zu\n",
			       cases[i].s, bad ? bad - cases[i].s : -1,
			       cases[i].bad_at);
			ok = false;
		}
		/* Nothing returned, nothing to free. */
		ok &= CHECK(e == (void *)0x1 && n == 12345);
	}
	ok &= CHECK(parse_acl(NULL, sacred_access_parse, &e, &n, &bad) ==
		    -EINVAL);
	ok &= CHECK(parse_acl("1:r", NULL, &e, &n, &bad) == -EINVAL);
	return ok;
}

static const struct tap_test tests[] = {
	{ "access_names_round_trip", access_names_round_trip },
	{ "access_str_names_other_sets_unknown",
	  access_str_names_other_sets_unknown },
	{ "access_parse_takes_exact_names_only",
	  access_parse_takes_exact_names_only },
	{ "refuse_str_names_every_reason", refuse_str_names_every_reason },
	{ "parse_acl_takes_lists", parse_acl_takes_lists },
	{ "parse_acl_empty_list_is_none_or_nothing",
	  parse_acl_empty_list_is_none_or_nothing },
	{ "parse_acl_points_at_the_bad_item",
	  parse_acl_points_at_the_bad_item },
};

int main(void)
{
	return tap_run(tests, ARRAY_SIZE(tests));
}
