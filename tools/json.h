/* SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause */
/*
 * json.h - a small streaming JSON writer for the sacred CLI.
 *
 * Output matches what iproute2 prints with -j: compact by default
 * ("key":value, no spaces), indented by four with -p. Every top-level
 * value ends with a newline. Strings are escaped as RFC 8259 requires and
 * must be UTF-8; a byte that is not part of a valid UTF-8 sequence is
 * written as U+FFFD, so the output is always valid JSON.
 *
 * Misuse (a value where a key is needed, nesting deeper than
 * JSON_MAX_DEPTH, closing what is not open) is not written and makes
 * json_failed() true.
 */
#ifndef _SACRED_JSON_H
#define _SACRED_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer;

/**
 * json_new() - create a writer
 * @out: stream to write to; not closed by json_free()
 * @pretty: indent the output
 *
 * Return: the writer, or NULL when out of memory.
 */
struct json_writer *json_new(FILE *out, bool pretty);

/** json_free() - release a writer; NULL is ok. Flushes its stream. */
void json_free(struct json_writer *jw);

/** json_failed() - true if the writer was misused (see json.h) */
bool json_failed(const struct json_writer *jw);

void json_obj_open(struct json_writer *jw);
void json_obj_close(struct json_writer *jw);
void json_arr_open(struct json_writer *jw);
void json_arr_close(struct json_writer *jw);

/** json_key() - the key of the next member of the open object */
void json_key(struct json_writer *jw, const char *key);

void json_str(struct json_writer *jw, const char *s);
void json_uint(struct json_writer *jw, uint64_t v);
void json_int(struct json_writer *jw, int64_t v);
void json_bool(struct json_writer *jw, bool v);
void json_null(struct json_writer *jw);

/* A key and its value in one call. */
void json_str_field(struct json_writer *jw, const char *key, const char *s);
void json_uint_field(struct json_writer *jw, const char *key, uint64_t v);
void json_int_field(struct json_writer *jw, const char *key, int64_t v);
void json_bool_field(struct json_writer *jw, const char *key, bool v);

/**
 * json_write_string() - write @s as a quoted, escaped JSON string
 * @out: stream
 * @s: NUL-terminated, UTF-8
 */
void json_write_string(FILE *out, const char *s);

#endif /* _SACRED_JSON_H */
