// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * json.c - a small streaming JSON writer for the sacred CLI.
 *
 * The writer keeps a stack of the open containers: for each, whether it is
 * an object or an array and whether it has a member yet (for the comma).
 * After json_key() exactly one value must follow.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "json.h"

/**
 * struct json_writer - state of one JSON document stream
 * @out: where the text goes
 * @pretty: indent by four, one member per line
 * @failed: the writer was misused; see json.h
 * @want_value: json_key() was called; a value is due
 * @depth: number of open containers
 * @kind: '{' or '[' for each open container, from 1 to @depth
 * @empty: whether that container has no member yet
 */
struct json_writer {
	FILE *out;
	bool pretty;
	bool failed;
	bool want_value;
	unsigned int depth;
	char kind[JSON_MAX_DEPTH + 1];
	bool empty[JSON_MAX_DEPTH + 1];
};

struct json_writer *json_new(FILE *out, bool pretty)
{
	struct json_writer *jw;

	jw = calloc(1, sizeof(*jw));
	if (!jw)
		return NULL;
	jw->out = out;
	jw->pretty = pretty;
	return jw;
}

void json_free(struct json_writer *jw)
{
	if (!jw)
		return;
	fflush(jw->out);
	free(jw);
}

bool json_failed(const struct json_writer *jw)
{
	return jw->failed || jw->depth || jw->want_value;
}

/*
 * Length of the well-formed UTF-8 sequence at @p (RFC 3629, table 3-7 of
 * Unicode: no overlong forms, no surrogates, nothing above U+10FFFF), or 0.
 */
static int utf8_seq_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int len, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}

	/* The first continuation byte has the narrowed range. */
	if (p[1] < lo || p[1] > hi)
		return 0;
	/* A NUL is no continuation byte, so this never reads past it. */
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

void json_write_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int len;

	putc('"', out);
	while (*p) {
		if (*p >= 0x80) {
			len = utf8_seq_len(p);
			if (len) {
				fwrite(p, 1, len, out);
				p += len;
			} else {
				fputs("\\ufffd", out);
				p++;
			}
			continue;
		}

		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\u%04x", *p);
			else
				putc(*p, out);
		}
		p++;
	}
	putc('"', out);
}

static void json_indent(struct json_writer *jw, unsigned int depth)
{
	unsigned int i;

	putc('\n', jw->out);
	for (i = 0; i < depth; i++)
		fputs("    ", jw->out);
}

/* Comma and indentation before a member of the innermost container. */
static void json_member(struct json_writer *jw)
{
	if (!jw->empty[jw->depth])
		putc(',', jw->out);
	jw->empty[jw->depth] = false;
	if (jw->pretty)
		json_indent(jw, jw->depth);
}

/* May a value be written here? Writes what goes before it. */
static bool json_value_begin(struct json_writer *jw)
{
	if (jw->failed)
		return false;
	if (jw->want_value) {
		jw->want_value = false;
		return true;
	}
	if (!jw->depth)
		return true;
	if (jw->kind[jw->depth] != '[') {
		jw->failed = true;	/* a value in an object needs a key */
		return false;
	}
	json_member(jw);
	return true;
}

static void json_value_end(struct json_writer *jw)
{
	if (!jw->depth)
		putc('\n', jw->out);
}

void json_key(struct json_writer *jw, const char *key)
{
	if (jw->failed)
		return;
	if (!jw->depth || jw->kind[jw->depth] != '{' || jw->want_value) {
		jw->failed = true;
		return;
	}
	json_member(jw);
	json_write_string(jw->out, key);
	putc(':', jw->out);
	if (jw->pretty)
		putc(' ', jw->out);
	jw->want_value = true;
}

static void json_open(struct json_writer *jw, char kind)
{
	if (!json_value_begin(jw))
		return;
	if (jw->depth == JSON_MAX_DEPTH) {
		jw->failed = true;
		return;
	}
	putc(kind, jw->out);
	jw->depth++;
	jw->kind[jw->depth] = kind;
	jw->empty[jw->depth] = true;
}

static void json_close(struct json_writer *jw, char kind)
{
	if (jw->failed)
		return;
	if (!jw->depth || jw->kind[jw->depth] != kind || jw->want_value) {
		jw->failed = true;
		return;
	}
	if (jw->pretty && !jw->empty[jw->depth])
		json_indent(jw, jw->depth - 1);
	putc(kind == '{' ? '}' : ']', jw->out);
	jw->depth--;
	json_value_end(jw);
}

void json_obj_open(struct json_writer *jw)
{
	json_open(jw, '{');
}

void json_obj_close(struct json_writer *jw)
{
	json_close(jw, '{');
}

void json_arr_open(struct json_writer *jw)
{
	json_open(jw, '[');
}

void json_arr_close(struct json_writer *jw)
{
	json_close(jw, '[');
}

void json_str(struct json_writer *jw, const char *s)
{
	if (!s) {
		json_null(jw);
		return;
	}
	if (!json_value_begin(jw))
		return;
	json_write_string(jw->out, s);
	json_value_end(jw);
}

void json_uint(struct json_writer *jw, uint64_t v)
{
	if (!json_value_begin(jw))
		return;
	fprintf(jw->out, "%" PRIu64, v);
	json_value_end(jw);
}

void json_int(struct json_writer *jw, int64_t v)
{
	if (!json_value_begin(jw))
		return;
	fprintf(jw->out, "%" PRId64, v);
	json_value_end(jw);
}

void json_bool(struct json_writer *jw, bool v)
{
	if (!json_value_begin(jw))
		return;
	fputs(v ? "true" : "false", jw->out);
	json_value_end(jw);
}

void json_null(struct json_writer *jw)
{
	if (!json_value_begin(jw))
		return;
	fputs("null", jw->out);
	json_value_end(jw);
}

void json_str_field(struct json_writer *jw, const char *key, const char *s)
{
	json_key(jw, key);
	json_str(jw, s);
}

void json_uint_field(struct json_writer *jw, const char *key, uint64_t v)
{
	json_key(jw, key);
	json_uint(jw, v);
}

void json_int_field(struct json_writer *jw, const char *key, int64_t v)
{
	json_key(jw, key);
	json_int(jw, v);
}

void json_bool_field(struct json_writer *jw, const char *key, bool v)
{
	json_key(jw, key);
	json_bool(jw, v);
}
