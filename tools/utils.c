// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * utils.c - pure helpers of the sacred CLI: name lookup with abbreviations,
 * number and address parsing, formatting. Nothing here talks to the kernel
 * or to libsacred; tests/unit/ links this file alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "sacred.h"	/* struct sacred_acl_entry only: no library call */
#include "utils.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

bool is_prefix(const char *arg, const char *name)
{
	size_t len = strlen(arg);

	return len && len <= strlen(name) && !strncmp(arg, name, len);
}

const struct cli_cmd *cmd_lookup(const struct cli_cmd *cmds, const char *arg,
				 int *err)
{
	const struct cli_cmd *c, *found = NULL;

	for (c = cmds; c->name; c++)
		if (!strcmp(c->name, arg))
			return c;

	for (c = cmds; c->name; c++) {
		if (!is_prefix(arg, c->name))
			continue;
		if (!found) {
			found = c;
		} else if (found->func != c->func) {
			*err = WORD_AMBIGUOUS;
			return NULL;
		}
	}
	if (!found)
		*err = WORD_UNKNOWN;
	return found;
}

int word_lookup(const struct cli_word *words, const char *arg)
{
	const struct cli_word *w, *found = NULL;

	for (w = words; w->name; w++)
		if (!strcmp(w->name, arg))
			return w->id;

	for (w = words; w->name; w++) {
		if (!is_prefix(arg, w->name))
			continue;
		if (!found)
			found = w;
		else if (found->id != w->id)
			return WORD_AMBIGUOUS;
	}
	return found ? found->id : WORD_UNKNOWN;
}

static int digit_value(char c, unsigned int base)
{
	int d;

	if (c >= '0' && c <= '9')
		d = c - '0';
	else if (c >= 'a' && c <= 'f')
		d = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		d = c - 'A' + 10;
	else
		return -1;
	return (unsigned int)d < base ? d : -1;
}

/*
 * Parse the @len characters at @s as one number no larger than @max:
 * decimal, or hexadecimal with a 0x prefix. Not strtoul(): it takes signs,
 * blanks and "0x0x1". A character that is not a digit wins over an
 * overflow: "99999999999999999999x" is not a number rather than too big.
 */
static int parse_num(const char *s, size_t len, uint64_t max, uint64_t *val)
{
	unsigned int base = 10;
	bool overflow = false;
	uint64_t v = 0;
	size_t i;
	int d;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		len -= 2;
	}
	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		d = digit_value(s[i], base);
		if (d < 0)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			overflow = true;
		else
			v = v * base + d;
	}
	if (overflow || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *val)
{
	uint64_t v;
	int ret;

	if (!s)
		return -EINVAL;
	ret = parse_num(s, strlen(s), max, &v);
	if (ret)
		return ret;
	if (v < min)
		return -ERANGE;
	*val = v;
	return 0;
}

int parse_u64(const char *s, uint64_t *val)
{
	if (!s)
		return -EINVAL;
	return parse_num(s, strlen(s), UINT64_MAX, val);
}

int parse_u32_pair(const char *s, uint32_t max, uint32_t *first,
		   uint32_t *second)
{
	const char *slash;
	uint64_t a, b;
	int ret;

	if (!s)
		return -EINVAL;
	slash = strchr(s, '/');
	if (!slash) {
		ret = parse_num(s, strlen(s), max, &a);
		if (ret)
			return ret;
		*first = a;
		return 1;
	}
	ret = parse_num(s, slash - s, max, &a);
	if (!ret)
		ret = parse_num(slash + 1, strlen(slash + 1), max, &b);
	if (ret)
		return ret;
	*first = a;
	*second = b;
	return 2;
}

static const struct {
	const char *name;
	unsigned int shift;
} size_units[] = {
	{ "", 0 },
	{ "k", 10 }, { "K", 10 }, { "KiB", 10 },
	{ "m", 20 }, { "M", 20 }, { "MiB", 20 },
	{ "g", 30 }, { "G", 30 }, { "GiB", 30 },
};

int parse_size(const char *s, uint64_t *val)
{
	const char *unit;
	unsigned int i;
	uint64_t v;
	int ret;

	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		unit = s + 2 + strspn(s + 2, "0123456789abcdefABCDEF");
	else
		unit = s + strspn(s, "0123456789");

	for (i = 0; i < ARRAY_SIZE(size_units); i++)
		if (!strcmp(unit, size_units[i].name))
			break;
	if (i == ARRAY_SIZE(size_units))
		return -EINVAL;

	ret = parse_num(s, unit - s, UINT64_MAX, &v);
	if (ret)
		return ret;
	if (v > UINT64_MAX >> size_units[i].shift)
		return -ERANGE;
	*val = v << size_units[i].shift;
	return 0;
}

const char *format_size(uint64_t size, char *buf, size_t len)
{
	static const struct {
		const char *name;
		unsigned int shift;
	} units[] = { { "GiB", 30 }, { "MiB", 20 }, { "KiB", 10 } };
	unsigned int i;

	for (i = 0; size && i < ARRAY_SIZE(units); i++) {
		if (!(size & ((1ULL << units[i].shift) - 1))) {
			snprintf(buf, len, "%llu%s",
				 (unsigned long long)(size >> units[i].shift),
				 units[i].name);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)size);
	return buf;
}

int parse_addr(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char buf[INET6_ADDRSTRLEN];
	size_t len;

	if (!s)
		return -EINVAL;
	if (inet_pton(AF_INET, s, &sin.sin_addr) == 1) {
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, &sin, sizeof(sin));
		return 0;
	}

	len = strlen(s);
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		if (len - 2 >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s + 1, len - 2);
		buf[len - 2] = '\0';
		s = buf;
	}
	if (inet_pton(AF_INET6, s, &sin6.sin6_addr) == 1) {
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, &sin6, sizeof(sin6));
		return 0;
	}
	return -EINVAL;
}

const char *format_addr(const struct sockaddr_storage *ss, char *buf,
			size_t len)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;

	switch (ss->ss_family) {
	case AF_INET:
		memcpy(&sin, ss, sizeof(sin));
		return inet_ntop(AF_INET, &sin.sin_addr, buf, len);
	case AF_INET6:
		memcpy(&sin6, ss, sizeof(sin6));
		return inet_ntop(AF_INET6, &sin6.sin6_addr, buf, len);
	default:
		return NULL;
	}
}

int sockaddr_port(const struct sockaddr_storage *ss)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;

	switch (ss->ss_family) {
	case AF_INET:
		memcpy(&sin, ss, sizeof(sin));
		return ntohs(sin.sin_port);
	case AF_INET6:
		memcpy(&sin6, ss, sizeof(sin6));
		return ntohs(sin6.sin6_port);
	default:
		return -1;
	}
}

void format_guid(uint64_t guid, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x",
		 (unsigned int)(guid >> 48) & 0xffff,
		 (unsigned int)(guid >> 32) & 0xffff,
		 (unsigned int)(guid >> 16) & 0xffff,
		 (unsigned int)guid & 0xffff);
}

/* Longest ACCESS word parse_acl() hands to its parser, with the NUL. */
#define ACCESS_WORD_MAX 8

/* One "PID:ACCESS" of @len characters at @s into @e. */
static int parse_acl_item(const char *s, size_t len,
			  int (*access_parse)(const char *, uint32_t *),
			  struct sacred_acl_entry *e)
{
	const char *colon = memchr(s, ':', len);
	char word[ACCESS_WORD_MAX];
	size_t wlen;
	uint64_t pid;

	if (!colon)
		return -EINVAL;
	if (parse_num(s, colon - s, UINT32_MAX, &pid))
		return -EINVAL;
	wlen = len - (colon + 1 - s);
	if (!wlen || wlen >= sizeof(word))
		return -EINVAL;
	memcpy(word, colon + 1, wlen);
	word[wlen] = '\0';

	memset(e, 0, sizeof(*e));
	e->process_id = pid;
	return access_parse(word, &e->access) ? -EINVAL : 0;
}

int parse_acl(const char *s, int (*access_parse)(const char *, uint32_t *),
	      struct sacred_acl_entry **aclp, unsigned int *np,
	      const char **bad)
{
	struct sacred_acl_entry *acl;
	unsigned int n = 1, i;
	const char *p, *end;
	size_t len;

	if (!s || !access_parse || !aclp || !np)
		return -EINVAL;
	if (!*s || !strcmp(s, "none")) {
		*aclp = NULL;
		*np = 0;
		return 0;
	}

	/* One argument is at most 128 KiB (MAX_ARG_STRLEN): n cannot wrap. */
	for (p = s; *p; p++)
		n += *p == ',';
	acl = calloc(n, sizeof(*acl));
	if (!acl)
		return -ENOMEM;

	for (i = 0, p = s; i < n; i++, p = end + 1) {
		end = p + strcspn(p, ",");
		len = end - p;
		if (parse_acl_item(p, len, access_parse, &acl[i])) {
			if (bad)
				*bad = p;
			free(acl);
			return -EINVAL;
		}
	}
	*aclp = acl;
	*np = n;
	return 0;
}

int split_line(char *line, char **argv, int max)
{
	char *in = line, *out = line, quote;
	int argc = 0;

	for (;;) {
		while (*in == ' ' || *in == '\t' || *in == '\n' || *in == '\r')
			in++;
		if (!*in || *in == '#')
			return argc;
		if (argc == max)
			return -E2BIG;
		argv[argc++] = out;
		while (*in && !strchr(" \t\n\r", *in)) {
			if (*in != '\'' && *in != '"') {
				*out++ = *in++;
				continue;
			}
			quote = *in++;
			while (*in && *in != quote)
				*out++ = *in++;
			if (!*in)
				return -EINVAL;
			in++;
		}
		/*
		 * The word is never longer than what it was read from, so
		 * the NUL lands at or before the blank that ended it.
		 */
		if (*in)
			in++;
		*out++ = '\0';
	}
}

bool line_continues(const char *line)
{
	bool word = false;
	char quote = 0;
	size_t len = strlen(line);
	const char *p;

	if (!len || line[len - 1] != '\\')
		return false;
	for (p = line; *p; p++) {
		if (quote) {
			if (*p == quote)
				quote = 0;
		} else if (strchr(" \t\n\r", *p)) {
			word = false;
		} else if (*p == '#' && !word) {
			return false;	/* the backslash is in a comment */
		} else {
			if (*p == '\'' || *p == '"')
				quote = *p;
			word = true;
		}
	}
	return true;
}
