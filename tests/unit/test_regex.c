/* test_regex.c — unit tests for policy/regex.c, checked row by row against glibc regexec: the table, long texts, invalid patterns, limits (the compiled programs in test_regex_program.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "regex_cases.h"

static void test_table(void **state)
{
	(void)state;
	static uint8_t prog[REGEX_MAX_PROGRAM], odd[REGEX_MAX_PROGRAM + 1];
	size_t compared = 0, differs = 0;
	for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
		const struct row *r = &rows[k];
		size_t len = compile_ok(r->pattern, prog);
		bool got = regex_match(prog, len, r->text, r->textlen);
		if (got != r->expect)
			fail_msg("row %zu: /%s/ on \"%.*s\": got %d, want %d", k, r->pattern,
				 (int)r->textlen, r->text, got, r->expect);
		memcpy(odd + 1, prog, len);
		assert_int_equal(regex_match(odd + 1, len, r->text, r->textlen), got);
		int g = glibc_match(r->pattern, r->text, r->textlen);
		if (g < 0)
			continue;
		compared++;
		bool want_glibc = (r->flags & GLIBC_DIFFERS) ? !r->expect : r->expect;
		if ((g == 1) != want_glibc)
			fail_msg("row %zu: /%s/ on \"%.*s\": glibc says %d, regex_match %d", k,
				 r->pattern, (int)r->textlen, r->text, g, got);
		if (r->flags & GLIBC_DIFFERS)
			differs++;
	}
	print_message("regex table: %zu rows, %zu checked against glibc (%zu known differences)\n",
		      sizeof rows / sizeof rows[0], compared, differs);
	assert_true(sizeof rows / sizeof rows[0] >= 150);
	assert_true(compared == sizeof rows / sizeof rows[0]);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct long_case {
	const char *pattern;
	const char *fill;
	size_t repeat;
	const char *tail;
	bool expect;
	bool with_glibc;
};

static void test_long_texts(void **state)
{
	(void)state;
	static const struct long_case cases[] = {
		{ "(a*)*b", "a", 10000, "", false, true },
		{ "(a*)*b", "a", 10000, "b", true, true },
		{ "(a|aa)*", "a", 10000, "", true, true },
		{ "(a|aa)*c", "a", 10000, "", false, true },
		{ "(x+x+)+y", "x", 10000, "", false, true },
		{ "(a?){30}a{30}", "a", 30, "", true, true },
		{ "(a?){30}a{30}", "a", 29, "", false, true },
		{ "a{255}", "a", 255, "", true, true },
		{ "a{255}", "a", 254, "", false, true },
		{ "a{255}", "a", 256, "", false, true },
		{ "(ab|a)*b*", "ab", 5000, "bbb", true, true },
		{ ".*x.*y.*z", "abc", 40000, "xyz", true, true },
		{ ".*x.*y.*z", "abc", 40000, "xzy", false, true },
		{ "(a|b)*a(a|b){20}", "ab", 5000, "", false, false },
		{ "(a|b)*a(a|b){20}", "ba", 5000, "aaaaaaaaaaaaaaaaaaaa", true, false },
		{ "([^/]*/)*[^/]*\\.c", "dir/", 3000, "main.c", true, true },
		{ "[[:print:]]*", " ~", 50000, "", true, true },
		{ "[[:print:]]*", " ~", 50000, "\n", false, true },
	};
	static uint8_t prog[REGEX_MAX_PROGRAM];
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const struct long_case *lc = &cases[k];
		size_t fl = strlen(lc->fill), tl = strlen(lc->tail), n = fl * lc->repeat + tl;
		char *text = malloc(n + 1);
		assert_non_null(text);
		for (size_t j = 0; j < lc->repeat; j++)
			memcpy(text + j * fl, lc->fill, fl);
		memcpy(text + fl * lc->repeat, lc->tail, tl + 1);
		size_t len = compile_ok(lc->pattern, prog);
		double t0 = now();
		bool got = regex_match(prog, len, text, n);
		double dt = now() - t0;
		if (got != lc->expect)
			fail_msg("/%s/ on %zu bytes: got %d", lc->pattern, n, got);
		if (dt > 2.0)
			fail_msg("/%s/ on %zu bytes took %.2f s", lc->pattern, n, dt);
		if (lc->with_glibc)
			assert_int_equal(glibc_match(lc->pattern, text, n), lc->expect);
		free(text);
	}
}

struct bad {
	const char *pattern;
	int err;
	const char *msg;
};

/* Patterns regex_compile refuses: the error and a part of the message that says where. */
static const struct bad bads[] = {
	{ "(", -EINVAL, "unmatched '(' at offset 0" },
	{ "a(b", -EINVAL, "unmatched '(' at offset 1" },
	{ "ab(()", -EINVAL, "unmatched '(' at offset 2" },
	{ ")", -EINVAL, "unmatched ')' at offset 0" },
	{ "a)", -EINVAL, "unmatched ')' at offset 1" },
	{ "a|b)", -EINVAL, "unmatched ')' at offset 3" },
	{ "(a))", -EINVAL, "unmatched ')' at offset 3" },
	{ "[", -EINVAL, "unmatched '[' at offset 0" },
	{ "x[a", -EINVAL, "unmatched '[' at offset 1" },
	{ "[]", -EINVAL, "unmatched '['" },
	{ "[^]", -EINVAL, "unmatched '['" },
	{ "[a-", -EINVAL, "unmatched '['" },
	{ "[]a", -EINVAL, "unmatched '[' at offset 0" },
	{ "[[:alpha:]", -EINVAL, "unmatched '['" },
	{ "[[:alpha]", -EINVAL, "unterminated character class '[:' at offset 1" },
	{ "[[:]", -EINVAL, "unterminated character class" },
	{ "*a", -EINVAL, "'*' at offset 0 has nothing to repeat" },
	{ "+", -EINVAL, "'+' at offset 0 has nothing to repeat" },
	{ "?", -EINVAL, "'?' at offset 0 has nothing to repeat" },
	{ "{1}", -EINVAL, "'{' at offset 0 has nothing to repeat" },
	{ "a|*b", -EINVAL, "'*' at offset 2 has nothing to repeat" },
	{ "(*a)", -EINVAL, "'*' at offset 1 has nothing to repeat" },
	{ "^*", -EINVAL, "'*' at offset 1 has nothing to repeat" },
	{ "a$+", -EINVAL, "'+' at offset 2 has nothing to repeat" },
	{ "^{2}", -EINVAL, "nothing to repeat" },
	{ "\\1", -EINVAL, "back references are not supported" },
	{ "(a)\\1", -EINVAL, "back references are not supported ('\\1' at offset 3)" },
	{ "[[.a.]]", -EINVAL, "collating elements" },
	{ "[[=a=]]", -EINVAL, "equivalence classes" },
	{ "[a-[.z.]]", -EINVAL, "collating elements" },
	{ "[[:foo:]]", -EINVAL, "invalid character class 'foo' at offset 1" },
	{ "[[:ALPHA:]]", -EINVAL, "invalid character class 'ALPHA'" },
	{ "[z-a]", -EINVAL, "invalid range 'z-a' at offset 1" },
	{ "abcd[z-a]", -EINVAL, "invalid range 'z-a' at offset 5" },
	{ "[a--]", -EINVAL, "invalid range 'a--'" },
	{ "[a-c-e]", -EINVAL, "invalid range at offset 4" },
	{ "[[:alpha:]-z]", -EINVAL, "invalid range at offset 1" },
	{ "[a-[:alpha:]]", -EINVAL, "invalid range at offset 1" },
	{ "a{", -EINVAL, "unmatched '{' at offset 1" },
	{ "a{1", -EINVAL, "unmatched '{'" },
	{ "a{1,", -EINVAL, "unmatched '{'" },
	{ "a{x}", -EINVAL, "invalid bound at offset 1" },
	{ "a{}", -EINVAL, "invalid bound" },
	{ "a{1 ,2}", -EINVAL, "invalid bound" },
	{ "a{-1}", -EINVAL, "invalid bound" },
	{ "a{2,1}", -EINVAL, "invalid bound {2,1} at offset 1" },
	{ "a{256}", -EINVAL, "exceeds 255" },
	{ "a{1,256}", -EINVAL, "exceeds 255" },
	{ "a{99999999999999999999}", -EINVAL, "exceeds 255" },
	{ "\\", -EINVAL, "trailing backslash at offset 0" },
	{ "a\\", -EINVAL, "trailing backslash at offset 1" },
	{ "\\d", -EINVAL, "unsupported escape '\\d' at offset 0" },
	{ "a\\n", -EINVAL, "unsupported escape '\\n' at offset 1" },
	{ "\\w", -EINVAL, "unsupported escape" },
	{ "\\B", -EINVAL, "unsupported escape" },
	{ "\\0", -EINVAL, "unsupported escape" },
	{ "\\<a", -EINVAL, "unsupported escape '\\<'" },
	{ "a\\>", -EINVAL, "unsupported escape" },
	{ "\\'", -EINVAL, "unsupported escape" },
	{ "\\`", -EINVAL, "unsupported escape" },
	{ "a{255}{255}", -E2BIG, "too large" },
	{ "(abcdefgh){255}", -E2BIG, "too large" },
	{ "([ab][cd]){255}", -E2BIG, "too large" },
	{ "((((a{9}){9}){9}){9})", -E2BIG, "too large" },
};

static void test_invalid(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof bads / sizeof bads[0]; k++) {
		const struct bad *b = &bads[k];
		uint8_t prog[64];
		char msg[160] = "";
		size_t len = 12345;
		int rc = regex_compile(b->pattern, prog, sizeof prog, &len, msg, sizeof msg);
		if (rc != b->err || !strstr(msg, b->msg))
			fail_msg("/%s/: got %d \"%s\", want %d \"%s\"", b->pattern, rc, msg, b->err,
				 b->msg);
		rc = regex_compile(b->pattern, NULL, 0, &len, NULL, 0);
		assert_int_equal(rc, b->err);
	}
	print_message("regex invalid patterns: %zu rows\n", sizeof bads / sizeof bads[0]);
}

static void test_limits(void **state)
{
	(void)state;
	static uint8_t prog[REGEX_MAX_PROGRAM];
	char msg[160] = "";
	size_t len = 0, need = 0;

	assert_int_equal(regex_compile("(a|b)c{2,5}", NULL, 0, &need, msg, sizeof msg), 0);
	assert_true(need > 0);
	assert_int_equal(regex_compile("(a|b)c{2,5}", prog, need - 1, &len, msg, sizeof msg),
			 -E2BIG);
	assert_int_equal(regex_compile("(a|b)c{2,5}", prog, need, &len, msg, sizeof msg), 0);
	assert_int_equal(len, need);
	assert_true(regex_match(prog, len, "bccc", 4));

	assert_int_equal(regex_compile("[ab]{255}", prog, sizeof prog, &len, msg, sizeof msg), 0);
	assert_int_equal(regex_validate(prog, len), 0);
	assert_true(len <= REGEX_MAX_PROGRAM);

	char deep[700];
	memset(deep, '(', 300);
	deep[300] = 'a';
	memset(deep + 301, ')', 300);
	deep[601] = '\0';
	assert_int_equal(regex_compile(deep, prog, sizeof prog, &len, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "nested"));
	memset(deep, '(', 200);
	deep[200] = 'a';
	memset(deep + 201, ')', 200);
	deep[401] = '\0';
	assert_int_equal(regex_compile(deep, prog, sizeof prog, &len, msg, sizeof msg), 0);
	assert_true(regex_match(prog, len, "a", 1));

	assert_int_equal(regex_compile(NULL, prog, sizeof prog, &len, msg, sizeof msg), -EINVAL);
	assert_int_equal(regex_compile("a", prog, sizeof prog, NULL, msg, sizeof msg), -EINVAL);
	assert_int_equal(regex_compile("a", NULL, 10, &len, msg, sizeof msg), -EINVAL);

	assert_int_equal(regex_compile("", prog, sizeof prog, &len, msg, sizeof msg), 0);
	assert_true(regex_match(prog, len, NULL, 0));
	assert_true(regex_match(prog, len, "", 0));
	assert_false(regex_match(prog, len, "", 1));
	assert_false(regex_match(NULL, len, "", 0));
	assert_int_equal(regex_validate(NULL, 10), -EINVAL);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_long_texts),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
