/*
 * utf8.c: which byte strings are UTF-8 (Unicode 15, table 3-7, the
 * well-formed sequences) and how the others are escaped for the JSON and
 * YAML writers: every byte outside a valid sequence as \xHH.
 */
#include <stdlib.h>
#include <string.h>

#include "io/utf8.h"
#include "testutil.h"

START_TEST(test_valid)
{
	ck_assert(utf8_valid(""));
	ck_assert(utf8_valid("runs.csv"));
	ck_assert(utf8_valid("\xC3\xA9t\xC3\xA9.yaml"));           /* "été": U+00E9 is C3 A9 */
	ck_assert(utf8_valid("\xE2\x82\xAC"));                     /* U+20AC, the euro sign */
	ck_assert(utf8_valid("\xF0\x9F\x98\x80"));                 /* U+1F600 */
	ck_assert(utf8_valid("\xF4\x8F\xBF\xBF"));                 /* U+10FFFF, the last code point */
	ck_assert(!utf8_valid("a\xFF.log"));                       /* FF never occurs in UTF-8 */
	ck_assert(!utf8_valid("\xC0\xAF"));                        /* overlong '/' */
	ck_assert(!utf8_valid("\xE0\x80\xAF"));                    /* overlong '/' in three bytes */
	ck_assert(!utf8_valid("\xED\xA0\x80"));                    /* U+D800, a surrogate */
	ck_assert(!utf8_valid("\xF4\x90\x80\x80"));                /* U+110000, past the last */
	ck_assert(!utf8_valid("\xC3"));                            /* cut short by the NUL */
	ck_assert(!utf8_valid("\xE2\x82"));
	ck_assert(!utf8_valid("\x80"));                            /* a lone continuation byte */
}
END_TEST

START_TEST(test_escape)
{
	char buf[64];

	/* Valid text is copied; its length is returned. */
	ck_assert_uint_eq(utf8_escape(buf, sizeof(buf), "\xC3\xA9t\xC3\xA9", false), 5);
	ck_assert_str_eq(buf, "\xC3\xA9t\xC3\xA9");
	/* "a", FF, ".log": 1 + 4 + 4 bytes. */
	ck_assert_uint_eq(utf8_escape(buf, sizeof(buf), "a\xFF.log", false), 9);
	ck_assert_str_eq(buf, "a\\xFF.log");
	/* A cut sequence: each of its bytes escaped, the next character kept. */
	utf8_escape(buf, sizeof(buf), "\xE2\x82x", false);
	ck_assert_str_eq(buf, "\\xE2\\x82x");
	/* Controls only when asked (YAML comments, where a newline ends one). */
	utf8_escape(buf, sizeof(buf), "a\nb\x7F", false);
	ck_assert_str_eq(buf, "a\nb\x7F");
	utf8_escape(buf, sizeof(buf), "a\nb\x7F", true);
	ck_assert_str_eq(buf, "a\\x0Ab\\x7F");
	/* Truncation at a whole escape: 6 bytes hold "a" and one escape,
	 * not half of the second; the length needed is still counted. */
	ck_assert_uint_eq(utf8_escape(buf, 7, "a\xFF\xFE", false), 9);
	ck_assert_str_eq(buf, "a\\xFF");
	ck_assert_uint_eq(utf8_escape(buf, 3, "\xC3\xA9\xC3\xA9", false), 4);
	ck_assert_str_eq(buf, "\xC3\xA9");
	ck_assert_uint_eq(utf8_escape(NULL, 0, "a\xFF", false), 5);
}
END_TEST

/* The first character only: a whole valid sequence, else one byte
 * escaped (a lone lead byte 0xC3 before 'a' is not a character). */
START_TEST(test_escape_first)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "\xC3\xA9+", "\xC3\xA9" },		/* e-acute, 2 bytes */
		{ "\xE2\x82\xAC--", "\xE2\x82\xAC" },	/* euro sign, 3 bytes */
		{ "\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80" }, /* U+1F600, 4 bytes */
		{ "\x01M", "\\x01" },			/* control */
		{ "\x7F", "\\x7F" },			/* DEL */
		{ "\xC3" "a", "\\xC3" },		/* lead byte without its continuation */
		{ "\xFF", "\\xFF" },			/* never valid */
		{ "Q*", "Q" },
	};
	char buf[24];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_str_eq(utf8_escape_first(buf, sizeof(buf), cases[i].in), cases[i].want);
}
END_TEST

START_TEST(test_json)
{
	json_t *j = utf8_json_string("a\xFF.log");
	char *text;

	/* jansson refuses the raw bytes (json_string gives NULL): the
	 * escaped name goes in, and its backslash is escaped in the dump. */
	ck_assert_ptr_null(json_string("a\xFF.log"));
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(j), "a\\xFF.log");
	text = json_dumps(j, JSON_ENCODE_ANY);
	ck_assert_str_eq(text, "\"a\\\\xFF.log\"");
	free(text);
	json_decref(j);
	j = utf8_json_string("\xC3\xA9t\xC3\xA9");
	ck_assert_str_eq(json_string_value(j), "\xC3\xA9t\xC3\xA9");
	json_decref(j);
}
END_TEST

static Suite *
utf8_suite(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_escape_first);
	tcase_add_test(tc, test_json);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(utf8_suite)
