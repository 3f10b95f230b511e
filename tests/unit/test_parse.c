// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * test_parse - host-side unit tests of the CLI's argument helpers
 * (tools/utils.c): abbreviations, numbers with range checks, id pairs,
 * sizes with units, addresses, formatting.
 *
 * Prints TAP version 13; exits 1 if any case fails.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "utils.h"
#include "tap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static bool check(bool cond, const char *what)
{
	if (!cond)
		printf("# failed: %s\n", what);
	return cond;
}

#define CHECK(cond) check((cond), #cond)

/* ------------------------------------------------------ lookups */

static int f_add(struct cli *cli, int argc, char **argv)
{
	(void)cli, (void)argc, (void)argv;
	return 1;
}

static int f_del(struct cli *cli, int argc, char **argv)
{
	(void)cli, (void)argc, (void)argv;
	return 2;
}

static int f_show(struct cli *cli, int argc, char **argv)
{
	(void)cli, (void)argc, (void)argv;
	return 3;
}

static int f_dev(struct cli *cli, int argc, char **argv)
{
	(void)cli, (void)argc, (void)argv;
	return 4;
}

static const struct cli_cmd cmds[] = {
	{ "add", f_add },   { "del", f_del },	{ "delete", f_del },
	{ "dev", f_dev },   { "show", f_show }, { "list", f_show },
	{ NULL, NULL },
};

static const char *lookup(const char *arg, int *err)
{
	const struct cli_cmd *c;

	*err = 0;
	c = cmd_lookup(cmds, arg, err);
	return c ? c->name : NULL;
}

static bool prefix_needs_a_nonempty_prefix(void)
{
	bool ok = true;

	ok &= CHECK(is_prefix("d", "dev"));
	ok &= CHECK(is_prefix("dev", "dev"));
	ok &= CHECK(!is_prefix("", "dev"));
	ok &= CHECK(!is_prefix("devx", "dev"));
	ok &= CHECK(!is_prefix("ev", "dev"));
	ok &= CHECK(!is_prefix("Dev", "dev"));
	return ok;
}

static bool cmd_lookup_takes_exact_names_and_abbreviations(void)
{
	const char *name;
	bool ok = true;
	int err;

	name = lookup("show", &err);
	ok &= CHECK(name && !strcmp(name, "show"));
	name = lookup("sh", &err);
	ok &= CHECK(name && !strcmp(name, "show"));
	name = lookup("l", &err);
	ok &= CHECK(name && !strcmp(name, "list"));
	name = lookup("a", &err);
	ok &= CHECK(name && !strcmp(name, "add"));
	/* "del" is exact, although it is a prefix of "delete" too */
	name = lookup("del", &err);
	ok &= CHECK(name && !strcmp(name, "del"));
	name = lookup("delete", &err);
	ok &= CHECK(name && !strcmp(name, "delete"));
	return ok;
}

static bool cmd_lookup_abbreviation_of_aliases_is_not_ambiguous(void)
{
	static const struct cli_cmd mem[] = {
		{ "add", f_add },
		{ "del", f_del },
		{ "delete", f_del },
		{ "show", f_show },
		{ NULL, NULL },
	};
	const struct cli_cmd *c;
	bool ok = true;
	int err = 0;

	/* "d" and "de" name both "del" and "delete": one command */
	c = cmd_lookup(mem, "d", &err);
	ok &= CHECK(c && c->func == f_del && !strcmp(c->name, "del"));
	c = cmd_lookup(mem, "de", &err);
	ok &= CHECK(c && c->func == f_del);
	c = cmd_lookup(mem, "dele", &err);
	ok &= CHECK(c && !strcmp(c->name, "delete"));
	return ok;
}

static bool cmd_lookup_reports_ambiguous_and_unknown(void)
{
	const char *name;
	bool ok = true;
	int err;

	/* "d" and "de": del, delete and dev are not all one command */
	name = lookup("d", &err);
	ok &= CHECK(!name && err == WORD_AMBIGUOUS);
	name = lookup("de", &err);
	ok &= CHECK(!name && err == WORD_AMBIGUOUS);
	name = lookup("x", &err);
	ok &= CHECK(!name && err == WORD_UNKNOWN);
	name = lookup("", &err);
	ok &= CHECK(!name && err == WORD_UNKNOWN);
	name = lookup("shows", &err);
	ok &= CHECK(!name && err == WORD_UNKNOWN);
	return ok;
}

static bool cmd_lookup_alias_prefix_resolves(void)
{
	static const struct cli_cmd objs[] = {
		{ "dev", f_dev },
		{ "memory", f_show },
		{ "help", f_add },
		{ NULL, NULL },
	};
	const struct cli_cmd *c;
	bool ok = true;
	int err = 0;

	c = cmd_lookup(objs, "mem", &err);
	ok &= CHECK(c && c->func == f_show);
	c = cmd_lookup(objs, "d", &err);
	ok &= CHECK(c && c->func == f_dev);
	c = cmd_lookup(objs, "h", &err);
	ok &= CHECK(c && c->func == f_add);
	return ok;
}

enum { W_DEV, W_IBPORT, W_ADDR, W_PORT, W_ID };

static const struct cli_word words[] = {
	{ "dev", W_DEV },   { "ibport", W_IBPORT }, { "addr", W_ADDR },
	{ "port", W_PORT }, { "cmport", W_PORT },   { "id", W_ID },
	{ NULL, 0 },
};

static bool word_lookup_handles_aliases_and_ambiguity(void)
{
	bool ok = true;

	ok &= CHECK(word_lookup(words, "port") == W_PORT);
	ok &= CHECK(word_lookup(words, "p") == W_PORT);
	ok &= CHECK(word_lookup(words, "cm") == W_PORT);
	ok &= CHECK(word_lookup(words, "cmport") == W_PORT);
	ok &= CHECK(word_lookup(words, "ib") == W_IBPORT);
	ok &= CHECK(word_lookup(words, "id") == W_ID);
	ok &= CHECK(word_lookup(words, "i") == WORD_AMBIGUOUS);
	ok &= CHECK(word_lookup(words, "a") == W_ADDR);
	ok &= CHECK(word_lookup(words, "d") == W_DEV);
	ok &= CHECK(word_lookup(words, "x") == WORD_UNKNOWN);
	ok &= CHECK(word_lookup(words, "") == WORD_UNKNOWN);
	ok &= CHECK(word_lookup(words, "ports") == WORD_UNKNOWN);
	return ok;
}

/* ------------------------------------------------------ numbers */

static bool u32_ok(const char *s, uint32_t min, uint32_t max, uint32_t want)
{
	uint32_t v = 0xdeadbeef;
	int ret = parse_u32(s, min, max, &v);

	if (ret || v != want) {
		printf("# parse_u32(\"%s\", %u, %u): ret %d value %u, want %u\n",
		       s, min, max, ret, v, want);
		return false;
	}
	return true;
}

static bool u32_err(const char *s, uint32_t min, uint32_t max, int want)
{
	uint32_t v = 0xdeadbeef;
	int ret = parse_u32(s, min, max, &v);

	if (ret != want || v != 0xdeadbeef) {
		printf("# parse_u32(\"%s\", %u, %u): ret %d value %#x, want %d and no change\n",
		       s ? s : "(null)", min, max, ret, v, want);
		return false;
	}
	return true;
}

static bool parse_u32_accepts_decimal_and_hex(void)
{
	bool ok = true;

	ok &= u32_ok("0", 0, UINT32_MAX, 0);
	ok &= u32_ok("42", 0, UINT32_MAX, 42);
	ok &= u32_ok("007", 0, UINT32_MAX, 7);	/* decimal, not octal */
	ok &= u32_ok("4294967295", 0, UINT32_MAX, UINT32_MAX);
	ok &= u32_ok("0x10", 0, UINT32_MAX, 16);
	ok &= u32_ok("0X1f", 0, UINT32_MAX, 31);
	ok &= u32_ok("0xffffffff", 0, UINT32_MAX, UINT32_MAX);
	ok &= u32_ok("7471", 0, 65535, 7471);
	return ok;
}

static bool parse_u32_rejects_non_numbers(void)
{
	bool ok = true;

	ok &= u32_err("", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err(NULL, 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("-1", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("+1", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err(" 1", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("1 ", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("1a", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("0x", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("0x0x1", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("0xg", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("1e3", 0, UINT32_MAX, -EINVAL);
	ok &= u32_err("99999999999999999999x", 0, UINT32_MAX, -EINVAL);
	return ok;
}

static bool parse_u32_checks_the_range(void)
{
	bool ok = true;

	ok &= u32_err("4294967296", 0, UINT32_MAX, -ERANGE);
	ok &= u32_err("0x100000000", 0, UINT32_MAX, -ERANGE);
	ok &= u32_err("99999999999999999999999", 0, UINT32_MAX, -ERANGE);
	ok &= u32_err("65536", 0, 65535, -ERANGE);
	ok &= u32_err("0", 1, 255, -ERANGE);
	ok &= u32_err("256", 1, 255, -ERANGE);
	ok &= u32_ok("1", 1, 255, 1);
	ok &= u32_ok("255", 1, 255, 255);
	ok &= u32_err("4294967295", 0, UINT32_MAX - 1, -ERANGE);
	return ok;
}

/* -------------------------------------------------------- pairs */

static bool pair_is(const char *s, int want, uint32_t a, uint32_t b)
{
	uint32_t x = 0xdeadbeef, y = 0xdeadbeef;
	int ret = parse_u32_pair(s, UINT32_MAX - 1, &x, &y);

	if (ret != want || (want > 0 && x != a) ||
	    (want == 2 && y != b) || (want == 1 && y != 0xdeadbeef) ||
	    (want < 0 && (x != 0xdeadbeef || y != 0xdeadbeef))) {
		printf("# parse_u32_pair(\"%s\"): ret %d %#x/%#x, want %d %#x/%#x\n",
		       s ? s : "(null)", ret, x, y, want, a, b);
		return false;
	}
	return true;
}

static bool parse_u32_pair_takes_one_or_two_numbers(void)
{
	bool ok = true;

	ok &= pair_is("0/3", 2, 0, 3);
	ok &= pair_is("12/0x10", 2, 12, 16);
	ok &= pair_is("4294967294/4294967294", 2, UINT32_MAX - 1,
		      UINT32_MAX - 1);
	ok &= pair_is("7", 1, 7, 0);
	ok &= pair_is("0x7", 1, 7, 0);
	return ok;
}

static bool parse_u32_pair_rejects_the_rest(void)
{
	static const char *const bad[] = {
		"", "/", "1/", "/1", "1//2", "1/2/3", "a/1", "1/b", " 1/2",
		"1/2 ", "-1/2", "1:2", "1 /2",
	};
	bool ok = true;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ok &= pair_is(bad[i], -EINVAL, 0, 0);
	ok &= pair_is(NULL, -EINVAL, 0, 0);
	ok &= pair_is("4294967295/1", -ERANGE, 0, 0);
	ok &= pair_is("1/4294967295", -ERANGE, 0, 0);
	ok &= pair_is("4294967295", -ERANGE, 0, 0);
	ok &= pair_is("1/99999999999999999999999", -ERANGE, 0, 0);
	return ok;
}

/* -------------------------------------------------------- sizes */

static bool size_is(const char *s, int want, uint64_t size)
{
	uint64_t v = 0xdeadbeef;
	int ret = parse_size(s, &v);

	if (ret != want || (!want && v != size) ||
	    (want && v != 0xdeadbeef)) {
		printf("# parse_size(\"%s\"): ret %d value %llu, want %d %llu\n",
		       s ? s : "(null)", ret, (unsigned long long)v, want,
		       (unsigned long long)size);
		return false;
	}
	return true;
}

static bool parse_size_takes_bytes_and_binary_units(void)
{
	bool ok = true;

	ok &= size_is("0", 0, 0);
	ok &= size_is("4096", 0, 4096);
	ok &= size_is("5000", 0, 5000);
	ok &= size_is("0x1000", 0, 4096);
	ok &= size_is("64k", 0, 64 << 10);
	ok &= size_is("64K", 0, 64 << 10);
	ok &= size_is("64KiB", 0, 64 << 10);
	ok &= size_is("2m", 0, 2 << 20);
	ok &= size_is("2M", 0, 2 << 20);
	ok &= size_is("2MiB", 0, 2 << 20);
	ok &= size_is("1g", 0, 1ULL << 30);
	ok &= size_is("1G", 0, 1ULL << 30);
	ok &= size_is("16GiB", 0, 16ULL << 30);
	ok &= size_is("0x10k", 0, 16 << 10);
	ok &= size_is("007k", 0, 7 << 10);
	ok &= size_is("18446744073709551615", 0, UINT64_MAX);
	ok &= size_is("17179869183g", 0, 17179869183ULL << 30);
	return ok;
}

static bool parse_size_rejects_the_rest(void)
{
	static const char *const bad[] = {
		"", "k", "K", "KiB", "0x", "0xk", "-1", "+1", " 1", "1 ",
		"1 k", "1.5g", "1kb", "1KB", "1kib", "1Ki", "1b", "1B",
		"1t", "1T", "1kk", "1e3", "64k ", "0x0x1",
		"99999999999999999999999x",
	};
	bool ok = true;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ok &= size_is(bad[i], -EINVAL, 0);
	ok &= size_is(NULL, -EINVAL, 0);
	return ok;
}

static bool parse_size_checks_overflow(void)
{
	bool ok = true;

	ok &= size_is("18446744073709551616", -ERANGE, 0);
	ok &= size_is("0x10000000000000000", -ERANGE, 0);
	ok &= size_is("18014398509481984k", -ERANGE, 0);	/* 2^54 KiB */
	ok &= size_is("17179869184g", -ERANGE, 0);		/* 2^34 GiB */
	ok &= size_is("18014398509481983k", 0, 18014398509481983ULL << 10);
	return ok;
}

static bool format_size_round_trips(void)
{
	static const struct {
		uint64_t size;
		const char *text;
	} cases[] = {
		{ 0, "0" },
		{ 1, "1" },
		{ 1000, "1000" },
		{ 1024, "1KiB" },
		{ 4096, "4KiB" },
		{ 65536, "64KiB" },
		{ 5000 << 10, "5000KiB" },
		{ 1 << 20, "1MiB" },
		{ 1536ULL << 20, "1536MiB" },
		{ 1ULL << 30, "1GiB" },
		{ 16ULL << 30, "16GiB" },
		{ (1ULL << 30) + 4096, "1048580KiB" },
		{ UINT64_MAX, "18446744073709551615" },
	};
	char buf[SIZE_STR_LEN];
	bool ok = true;
	uint64_t back;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ok &= CHECK(format_size(cases[i].size, buf, sizeof(buf)) ==
			    buf);
		if (strcmp(buf, cases[i].text)) {
			printf("# format_size(%llu): \"%s\", want \"%s\"\n",
			       (unsigned long long)cases[i].size, buf,
			       cases[i].text);
			ok = false;
		}
		ok &= CHECK(parse_size(buf, &back) == 0);
		ok &= CHECK(back == cases[i].size);
	}
	return ok;
}

/* ---------------------------------------------------- addresses */

static bool parse_addr_takes_ipv4(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in sin;
	bool ok = true;

	memset(&ss, 0xa5, sizeof(ss));
	ok &= CHECK(parse_addr("192.168.1.2", &ss) == 0);
	memcpy(&sin, &ss, sizeof(sin));
	ok &= CHECK(sin.sin_family == AF_INET);
	ok &= CHECK(sin.sin_port == 0);
	ok &= CHECK(sin.sin_addr.s_addr == htonl(0xc0a80102));
	ok &= CHECK(parse_addr("0.0.0.0", &ss) == 0);
	return ok;
}

static bool parse_addr_takes_ipv6_with_or_without_brackets(void)
{
	static const uint8_t ll[16] = { 0xfe, 0x80, [15] = 1 };
	struct sockaddr_storage ss;
	struct sockaddr_in6 sin6;
	bool ok = true;

	ok &= CHECK(parse_addr("fe80::1", &ss) == 0);
	memcpy(&sin6, &ss, sizeof(sin6));
	ok &= CHECK(sin6.sin6_family == AF_INET6);
	ok &= CHECK(sin6.sin6_port == 0);
	ok &= CHECK(!memcmp(&sin6.sin6_addr, ll, sizeof(ll)));

	memset(&ss, 0, sizeof(ss));
	ok &= CHECK(parse_addr("[fe80::1]", &ss) == 0);
	memcpy(&sin6, &ss, sizeof(sin6));
	ok &= CHECK(sin6.sin6_family == AF_INET6);
	ok &= CHECK(!memcmp(&sin6.sin6_addr, ll, sizeof(ll)));

	ok &= CHECK(parse_addr("::ffff:10.0.0.1", &ss) == 0);
	ok &= CHECK(ss.ss_family == AF_INET6);
	return ok;
}

static bool parse_addr_rejects_the_rest(void)
{
	static const char *const bad[] = {
		"",	     "1.2.3",	  "1.2.3.4.5", "256.1.1.1",
		"1.2.3.4 ",  "host",	  "[::1",      "::1]",
		"[]",	     "fe80::1%eth0", "1.2.3.4:7471", "::g",
		"[[::1]]",
	};
	struct sockaddr_storage ss;
	bool ok = true;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ss.ss_family = AF_UNIX;
		if (parse_addr(bad[i], &ss) != -EINVAL ||
		    ss.ss_family != AF_UNIX) {
			printf("# parse_addr(\"%s\") accepted or changed *ss\n",
			       bad[i]);
			ok = false;
		}
	}
	ok &= CHECK(parse_addr(NULL, &ss) == -EINVAL);
	return ok;
}

static bool format_addr_round_trips(void)
{
	static const char *const addrs[] = { "10.0.0.1", "fe80::1", "::" };
	char buf[INET6_ADDRSTRLEN];
	struct sockaddr_storage ss;
	struct sockaddr_in sin;
	bool ok = true;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		ok &= CHECK(parse_addr(addrs[i], &ss) == 0);
		ok &= CHECK(format_addr(&ss, buf, sizeof(buf)) == buf);
		if (strcmp(buf, addrs[i])) {
			printf("# format_addr: \"%s\", want \"%s\"\n", buf,
			       addrs[i]);
			ok = false;
		}
	}

	parse_addr("10.0.0.1", &ss);
	memcpy(&sin, &ss, sizeof(sin));
	sin.sin_port = htons(7471);
	memcpy(&ss, &sin, sizeof(sin));
	ok &= CHECK(sockaddr_port(&ss) == 7471);

	memset(&ss, 0, sizeof(ss));
	ok &= CHECK(!format_addr(&ss, buf, sizeof(buf)));
	ok &= CHECK(sockaddr_port(&ss) == -1);
	return ok;
}

static bool parse_u64_takes_the_whole_range(void)
{
	uint64_t v;
	bool ok = true;

	ok &= CHECK(!parse_u64("0", &v) && v == 0);
	ok &= CHECK(!parse_u64("42", &v) && v == 42);
	ok &= CHECK(!parse_u64("0x10", &v) && v == 16);
	ok &= CHECK(!parse_u64("18446744073709551615", &v) &&
		    v == UINT64_MAX);
	ok &= CHECK(!parse_u64("0xffffffffffffffff", &v) && v == UINT64_MAX);

	v = 7;
	ok &= CHECK(parse_u64("18446744073709551616", &v) == -ERANGE);
	ok &= CHECK(parse_u64("0x10000000000000000", &v) == -ERANGE);
	ok &= CHECK(parse_u64("", &v) == -EINVAL);
	ok &= CHECK(parse_u64("-1", &v) == -EINVAL);
	ok &= CHECK(parse_u64("+1", &v) == -EINVAL);
	ok &= CHECK(parse_u64(" 1", &v) == -EINVAL);
	ok &= CHECK(parse_u64("1k", &v) == -EINVAL);
	ok &= CHECK(parse_u64("0x", &v) == -EINVAL);
	ok &= CHECK(parse_u64(NULL, &v) == -EINVAL);
	ok &= CHECK(v == 7);	/* untouched on failure */
	return ok;
}

static bool format_guid_matches_rdma_dev(void)
{
	char buf[GUID_STR_LEN];
	bool ok = true;

	format_guid(0x505400fffe123456ULL, buf, sizeof(buf));
	ok &= CHECK(!strcmp(buf, "5054:00ff:fe12:3456"));
	format_guid(0, buf, sizeof(buf));
	ok &= CHECK(!strcmp(buf, "0000:0000:0000:0000"));
	format_guid(UINT64_MAX, buf, sizeof(buf));
	ok &= CHECK(!strcmp(buf, "ffff:ffff:ffff:ffff"));
	return ok;
}

/* ------------------------------------------------------ -batch lines */

/* Split @in; true if the words are exactly @want (NULL-terminated). */
static bool split_is(const char *in, const char *const *want)
{
	char line[256], *argv[8];
	int argc, i;

	snprintf(line, sizeof(line), "%s", in);
	argc = split_line(line, argv, 8);
	for (i = 0; want[i]; i++)
		if (i >= argc || strcmp(argv[i], want[i])) {
			printf("# split_line(\"%s\"): word %d is \"%s\", want \"%s\"\n",
			       in, i, i < argc ? argv[i] : "(none)", want[i]);
			return false;
		}
	if (argc != i)
		printf("# split_line(\"%s\"): %d words, want %d\n", in, argc,
		       i);
	return argc == i;
}

static bool split_line_splits_as_a_shell(void)
{
	bool ok = true;

	ok &= split_is("region add mem 1", (const char *const[]){
		"region", "add", "mem", "1", NULL });
	ok &= split_is("  \tmemory\t show \r\n", (const char *const[]){
		"memory", "show", NULL });
	ok &= split_is("a \"b c\" 'd \"e' f", (const char *const[]){
		"a", "b c", "d \"e", "f", NULL });
	ok &= split_is("x\"y z\"w", (const char *const[]){ "xy zw", NULL });
	ok &= split_is("a \"\" b", (const char *const[]){ "a", "", "b", NULL });
	ok &= split_is("acl 1:rw,2:r # the readers", (const char *const[]){
		"acl", "1:rw,2:r", NULL });
	ok &= split_is("id a#b", (const char *const[]){ "id", "a#b", NULL });
	ok &= split_is("'#' x", (const char *const[]){ "#", "x", NULL });
	ok &= split_is("", (const char *const[]){ NULL });
	ok &= split_is("   # only a comment", (const char *const[]){ NULL });
	return ok;
}

static bool split_line_rejects_the_rest(void)
{
	char line[64], *argv[3];
	bool ok = true;

	strcpy(line, "a \"b c");
	ok &= CHECK(split_line(line, argv, 3) == -EINVAL);
	strcpy(line, "a 'b");
	ok &= CHECK(split_line(line, argv, 3) == -EINVAL);
	strcpy(line, "a b c d");
	ok &= CHECK(split_line(line, argv, 3) == -E2BIG);
	strcpy(line, "a b c # d");
	ok &= CHECK(split_line(line, argv, 3) == 3);
	return ok;
}

static bool line_continues_outside_comments(void)
{
	bool ok = true;

	ok &= CHECK(line_continues("region add mem 1 \\"));
	ok &= CHECK(line_continues("\\"));
	ok &= CHECK(line_continues("acl 'a b' \\"));
	ok &= CHECK(line_continues("id a#b \\"));
	ok &= CHECK(line_continues("'#' \\"));
	ok &= CHECK(!line_continues("region show"));
	ok &= CHECK(!line_continues(""));
	ok &= CHECK(!line_continues("region show \\ x"));
	ok &= CHECK(!line_continues("# region add mem 1 \\"));
	ok &= CHECK(!line_continues("region show 1/1 # then \\"));
	return ok;
}

static const struct tap_test tests[] = {
	{ "prefix_needs_a_nonempty_prefix", prefix_needs_a_nonempty_prefix },
	{ "cmd_lookup_takes_exact_names_and_abbreviations",
	  cmd_lookup_takes_exact_names_and_abbreviations },
	{ "cmd_lookup_abbreviation_of_aliases_is_not_ambiguous",
	  cmd_lookup_abbreviation_of_aliases_is_not_ambiguous },
	{ "cmd_lookup_reports_ambiguous_and_unknown",
	  cmd_lookup_reports_ambiguous_and_unknown },
	{ "cmd_lookup_alias_prefix_resolves",
	  cmd_lookup_alias_prefix_resolves },
	{ "word_lookup_handles_aliases_and_ambiguity",
	  word_lookup_handles_aliases_and_ambiguity },
	{ "parse_u32_accepts_decimal_and_hex",
	  parse_u32_accepts_decimal_and_hex },
	{ "parse_u32_rejects_non_numbers", parse_u32_rejects_non_numbers },
	{ "parse_u32_checks_the_range", parse_u32_checks_the_range },
	{ "parse_u32_pair_takes_one_or_two_numbers",
	  parse_u32_pair_takes_one_or_two_numbers },
	{ "parse_u32_pair_rejects_the_rest", parse_u32_pair_rejects_the_rest },
	{ "parse_size_takes_bytes_and_binary_units",
	  parse_size_takes_bytes_and_binary_units },
	{ "parse_size_rejects_the_rest", parse_size_rejects_the_rest },
	{ "parse_size_checks_overflow", parse_size_checks_overflow },
	{ "format_size_round_trips", format_size_round_trips },
	{ "parse_addr_takes_ipv4", parse_addr_takes_ipv4 },
	{ "parse_addr_takes_ipv6_with_or_without_brackets",
	  parse_addr_takes_ipv6_with_or_without_brackets },
	{ "parse_addr_rejects_the_rest", parse_addr_rejects_the_rest },
	{ "format_addr_round_trips", format_addr_round_trips },
	{ "parse_u64_takes_the_whole_range", parse_u64_takes_the_whole_range },
	{ "format_guid_matches_rdma_dev", format_guid_matches_rdma_dev },
	{ "split_line_splits_as_a_shell", split_line_splits_as_a_shell },
	{ "split_line_rejects_the_rest", split_line_rejects_the_rest },
	{ "line_continues_outside_comments", line_continues_outside_comments },
};

int main(void)
{
	return tap_run(tests, ARRAY_SIZE(tests));
}
