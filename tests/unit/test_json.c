// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * test_json - host-side unit tests of the CLI's JSON writer (tools/json.c).
 *
 * Prints TAP version 13; exits 1 if any case fails.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Run @fn on a writer over a memory stream; return what it wrote. */
static char *capture(void (*fn)(struct json_writer *jw), bool pretty,
		     bool *failed)
{
	struct json_writer *jw;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	out = open_memstream(&buf, &len);
	if (!out)
		return NULL;
	jw = json_new(out, pretty);
	if (!jw) {
		fclose(out);
		free(buf);
		return NULL;
	}
	fn(jw);
	if (failed)
		*failed = json_failed(jw);
	json_free(jw);
	fclose(out);
	return buf;
}

static char *escape(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	out = open_memstream(&buf, &len);
	if (!out)
		return NULL;
	json_write_string(out, s);
	fclose(out);
	return buf;
}

static bool expect(const char *got, const char *want)
{
	bool ok = got && !strcmp(got, want);

	if (!ok) {
		printf("# want: %s\n", want);
		printf("# got:  %s\n", got ? got : "(null)");
	}
	return ok;
}

static bool expect_escape(const char *in, const char *want)
{
	char *got = escape(in);
	bool ok = expect(got, want);

	free(got);
	return ok;
}

static bool escapes_quote_and_backslash(void)
{
	return expect_escape("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
}

static bool escapes_control_characters(void)
{
	return expect_escape("\n\t\r\b\f\x01\x1f\x7f",
			     "\"\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\"");
}

static bool empty_string_is_two_quotes(void)
{
	return expect_escape("", "\"\"");
}

static bool passes_valid_utf8_through(void)
{
	/* é (2 bytes), € (3), U+10FFFF (4), U+1D11E (4) */
	return expect_escape("h\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9d\x84\x9e",
			     "\"h\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9d\x84\x9e\"");
}

static bool replaces_invalid_utf8(void)
{
	bool ok = true;

	/* a stray continuation byte and a byte never valid */
	ok &= expect_escape("a\x80z\xff", "\"a\\ufffdz\\ufffd\"");
	/* overlong "/" */
	ok &= expect_escape("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	/* overlong 3-byte form of U+007F */
	ok &= expect_escape("\xe0\x81\xbf", "\"\\ufffd\\ufffd\\ufffd\"");
	/* UTF-16 surrogate U+D800 */
	ok &= expect_escape("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	/* above U+10FFFF */
	ok &= expect_escape("\xf4\x90\x80\x80",
			    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* a sequence cut short by the end of the string */
	ok &= expect_escape("x\xe2\x82", "\"x\\ufffd\\ufffd\"");
	return ok;
}

static void write_dev(struct json_writer *jw)
{
	json_arr_open(jw);
	json_obj_open(jw);
	json_uint_field(jw, "ifindex", 0);
	json_str_field(jw, "ifname", "rxe0");
	json_key(jw, "ports");
	json_arr_open(jw);
	json_obj_open(jw);
	json_uint_field(jw, "port", 1);
	json_str_field(jw, "state", "ACTIVE");
	json_obj_close(jw);
	json_arr_close(jw);
	json_obj_close(jw);
	json_arr_close(jw);
}

static bool compact_output_has_no_blanks(void)
{
	bool failed = true;
	char *got = capture(write_dev, false, &failed);
	bool ok = expect(got,
			 "[{\"ifindex\":0,\"ifname\":\"rxe0\",\"ports\":[{\"port\":1,\"state\":\"ACTIVE\"}]}]\n");

	free(got);
	return ok && !failed;
}

static bool pretty_output_indents_by_four(void)
{
	bool failed = true;
	char *got = capture(write_dev, true, &failed);
	bool ok = expect(got,
			 "[\n"
			 "    {\n"
			 "        \"ifindex\": 0,\n"
			 "        \"ifname\": \"rxe0\",\n"
			 "        \"ports\": [\n"
			 "            {\n"
			 "                \"port\": 1,\n"
			 "                \"state\": \"ACTIVE\"\n"
			 "            }\n"
			 "        ]\n"
			 "    }\n"
			 "]\n");

	free(got);
	return ok && !failed;
}

static void write_empty(struct json_writer *jw)
{
	json_arr_open(jw);
	json_arr_close(jw);
	json_obj_open(jw);
	json_key(jw, "a");
	json_arr_open(jw);
	json_arr_close(jw);
	json_obj_close(jw);
}

static bool empty_containers(void)
{
	char *compact = capture(write_empty, false, NULL);
	char *pretty = capture(write_empty, true, NULL);
	bool ok = expect(compact, "[]\n{\"a\":[]}\n") &&
		  expect(pretty, "[]\n{\n    \"a\": []\n}\n");

	free(compact);
	free(pretty);
	return ok;
}

static void write_scalars(struct json_writer *jw)
{
	json_obj_open(jw);
	json_uint_field(jw, "u", UINT64_MAX);
	json_int_field(jw, "i", INT64_MIN);
	json_bool_field(jw, "t", true);
	json_bool_field(jw, "f", false);
	json_key(jw, "n");
	json_null(jw);
	json_str_field(jw, "s", NULL);
	json_str_field(jw, "k\"ey", "v");
	json_obj_close(jw);
}

static bool scalars_and_escaped_keys(void)
{
	bool failed = true;
	char *got = capture(write_scalars, false, &failed);
	bool ok = expect(got,
			 "{\"u\":18446744073709551615,\"i\":-9223372036854775808,\"t\":true,\"f\":false,\"n\":null,\"s\":null,\"k\\\"ey\":\"v\"}\n");

	free(got);
	return ok && !failed;
}

static void write_value_without_key(struct json_writer *jw)
{
	json_obj_open(jw);
	json_uint(jw, 1);
	json_obj_close(jw);
}

static void write_key_in_array(struct json_writer *jw)
{
	json_arr_open(jw);
	json_key(jw, "a");
	json_arr_close(jw);
}

static void write_mismatched_close(struct json_writer *jw)
{
	json_arr_open(jw);
	json_obj_close(jw);
}

static void write_unclosed(struct json_writer *jw)
{
	json_obj_open(jw);
}

static void write_dangling_key(struct json_writer *jw)
{
	json_obj_open(jw);
	json_key(jw, "a");
	json_obj_close(jw);
}

static void write_too_deep(struct json_writer *jw)
{
	int i;

	for (i = 0; i <= JSON_MAX_DEPTH; i++)
		json_arr_open(jw);
	for (i = 0; i <= JSON_MAX_DEPTH; i++)
		json_arr_close(jw);
}

static void write_max_depth(struct json_writer *jw)
{
	int i;

	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_arr_open(jw);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_arr_close(jw);
}

static bool misuse_is_reported(void)
{
	void (*const bad[])(struct json_writer *jw) = {
		write_value_without_key, write_key_in_array,
		write_mismatched_close,	 write_unclosed,
		write_dangling_key,	 write_too_deep,
	};
	bool ok = true;
	bool failed;
	size_t i;
	char *got;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		failed = false;
		got = capture(bad[i], false, &failed);
		if (!failed) {
			printf("# misuse %zu not reported\n", i);
			ok = false;
		}
		free(got);
	}

	failed = true;
	got = capture(write_max_depth, false, &failed);
	if (failed) {
		printf("# %d levels should be allowed\n", JSON_MAX_DEPTH);
		ok = false;
	}
	free(got);
	return ok;
}

static void write_top_level_values(struct json_writer *jw)
{
	json_str(jw, "a");
	json_uint(jw, 2);
	json_arr_open(jw);
	json_arr_close(jw);
}

static bool top_level_values_end_with_newline(void)
{
	char *got = capture(write_top_level_values, false, NULL);
	bool ok = expect(got, "\"a\"\n2\n[]\n");

	free(got);
	return ok;
}

static const struct tap_test tests[] = {
	{ "escapes_quote_and_backslash", escapes_quote_and_backslash },
	{ "escapes_control_characters", escapes_control_characters },
	{ "empty_string_is_two_quotes", empty_string_is_two_quotes },
	{ "passes_valid_utf8_through", passes_valid_utf8_through },
	{ "replaces_invalid_utf8", replaces_invalid_utf8 },
	{ "compact_output_has_no_blanks", compact_output_has_no_blanks },
	{ "pretty_output_indents_by_four", pretty_output_indents_by_four },
	{ "empty_containers", empty_containers },
	{ "scalars_and_escaped_keys", scalars_and_escaped_keys },
	{ "misuse_is_reported", misuse_is_reported },
	{ "top_level_values_end_with_newline",
	  top_level_values_end_with_newline },
};

int main(void)
{
	return tap_run(tests, ARRAY_SIZE(tests));
}
