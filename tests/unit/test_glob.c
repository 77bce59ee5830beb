/* test_glob.c — table-driven unit tests for policy/glob.c (glob_check, glob_match, literal helpers), cross-checked with fnmatch(3). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"

/* ---- glob_match ------------------------------------------------------------- */

struct match_row {
	const char *pattern;
	const char *text;
	enum glob_flavour f;
	bool expect;
	bool fn; /* fnmatch(3) must agree */
	int line;
};

#define T(p, s, e) { p, s, GLOB_TEXT, e, true, __LINE__ }
#define TX(p, s, e) { p, s, GLOB_TEXT, e, false, __LINE__ }
#define P(p, s, e) { p, s, GLOB_PATH, e, true, __LINE__ }
#define PX(p, s, e) { p, s, GLOB_PATH, e, false, __LINE__ }

static const struct match_row match_rows[] = {
	/* Text flavour: literals. */
	T("abc", "abc", true),
	T("abc", "abd", false),
	T("abc", "ab", false),
	T("abc", "abcd", false),
	T("", "", true),
	T("", "a", false),
	T(".env", ".env", true),
	/* '*' */
	T("*", "", true),
	T("*", "anything at/all", true),
	T("a*", "a", true),
	T("a*c", "abc", true),
	T("a*c", "a/b c", true),
	T("a*c", "ab", false),
	T("*c", "c", true),
	T("-rf *", "-rf /", true),
	T("-rf *", "-rf /home/me", true),
	T("-rf *", "-rf", false),
	T("-rf /*", "-rf /bin /boot /etc", true),
	T("*--no-preserve-root*", "-rf --no-preserve-root /", true),
	T("a/*", "a/b/c", true),
	T("*/*", "a/b", true),
	T("*.env", ".env", true),
	T("*.example.com", "a.b.example.com", true),
	T("*.example.com", "example.com", false),
	T("*a*b*c*", "xaybzc", true),
	T("*a*b*c*", "xaybz", false),
	T("a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
	T("**", "x/y z", true),
	T("a**b", "a/x/b", true),
	/* '?' */
	T("?", "a", true),
	T("?", "", false),
	T("?", "ab", false),
	T("?", "/", true),
	T("a?c", "a c", true),
	T("a?c", "ac", false),
	T("api-?.example.org", "api-1.example.org", true),
	T("api-?.example.org", "api-12.example.org", false),
	/* Brackets. */
	T("[abc]", "b", true),
	T("[abc]", "d", false),
	T("[a-z]", "m", true),
	T("[a-z]", "M", false),
	T("[!a]", "b", true),
	T("[!a]", "a", false),
	T("[^a]", "a", false),
	T("[^a]", "z", true),
	T("[!a-c]", "d", true),
	T("[!a-c]", "b", false),
	T("[[:digit:]]", "7", true),
	T("[[:digit:]]", "x", false),
	T("[[:alpha:][:digit:]]", "q", true),
	T("[[:alpha:][:digit:]]", "-", false),
	T("[[:upper:]]", "a", false),
	T("[[:lower:]]", "a", true),
	T("[[:space:]]", " ", true),
	T("[[:xdigit:]]", "F", true),
	T("[[:xdigit:]]", "g", false),
	T("[[:punct:]]", "!", true),
	T("[[:alnum:]_]", "_", true),
	T("[]]", "]", true),
	T("[]a]", "a", true),
	T("[!]]", "]", false),
	T("[!]]", "x", true),
	T("[a-]", "-", true),
	T("[a-c]x[!0-9]", "bxz", true),
	T("[a-c]x[!0-9]", "bx5", false),
	T("n[[:digit:]]", "n5", true),
	T("[[:digit:]]*", "", false),
	T("[/]", "/", true),
	/* Backslash. */
	T("\\*", "*", true),
	T("\\*", "a", false),
	T("a\\?c", "a?c", true),
	T("a\\?c", "abc", false),
	T("\\[x]", "[x]", true),
	T("a\\*b", "a*b", true),
	T("a\\*b", "aXb", false),
	T("\\a", "a", true),
	T("[\\]]", "]", true),

	/* Path flavour, fnmatch(FNM_PATHNAME | FNM_LEADING_DIR) for patterns without "**". */
	P("/a/b", "/a/b", true),
	P("/a/b", "/a/b/c", true),
	P("/a/b", "/a/bc", false),
	P("/a/b", "/a", false),
	P("/a/*", "/a/x", true),
	P("/a/*", "/a/x/y", true),
	P("/a/*", "/a", false),
	P("/a/*.c", "/a/m.c", true),
	P("/a/*.c", "/a/b/c.c", false),
	P("/a/*.c", "/a/.c", true),
	P("/a/?", "/a/b", true),
	P("/a?b", "/a/b", false),
	P("/a[!x]b", "/a/b", false),
	P("/a[!x]b", "/ayb", true),
	P("/v/*.log", "/v/x.log", true),
	P("/v/*.log", "/v/n/x.log", false),
	P("/e/passw?", "/e/passwd", true),
	P("/e/passw?", "/e/passw", false),
	P("/e/passw?", "/e/passwdx", false),
	P("/*", "/anything", true),
	P("/*", "/a/b", true),
	P("/x/[0-9]*", "/x/5abc", true),
	P("/x/[0-9]*", "/x/abc", false),
	P("/x/*/z", "/x/y/z", true),
	P("/x/*/z", "/x/y/w/z", false),
	P("/x/*y", "/x/a/y", false),
	P("/tmp/a", "/tmp/a/b", true),
	P("/tmp/a", "/tmp/ab", false),
	P("/d/f[0-9].txt", "/d/f1.txt", true),
	P("/d/f[0-9].txt", "/d/f12.txt", false),
	P("/s/\\*", "/s/*", true),
	P("/s/\\*", "/s/x", false),
	/* "**" components. */
	PX("/a/**/b", "/a/b", true),
	PX("/a/**/b", "/a/x/b", true),
	PX("/a/**/b", "/a/x/y/b", true),
	PX("/a/**/b", "/a/x/y/b/c", true),
	PX("/a/**/b", "/a/xb", false),
	PX("/a/**/b", "/a/x/bc", false),
	PX("/a/**/b", "/ab", false),
	PX("/a/**", "/a/x", true),
	PX("/a/**", "/a/x/y/z", true),
	PX("/a/**", "/a", false),
	PX("/a/**", "/ab/c", false),
	PX("/**", "/x", true),
	PX("/**", "/x/y", true),
	PX("/**/x", "/x", true),
	PX("/**/x", "/a/b/x", true),
	PX("/**/x", "/a/b/xy", false),
	PX("/**/x", "/a/x/q", true),
	PX("/a/**/*.c", "/a/m.c", true),
	PX("/a/**/*.c", "/a/p/q/m.c", true),
	PX("/a/**/*.c", "/a/p/q/m.h", false),
	PX("/a/**/b/**/c", "/a/1/b/2/3/c", true),
	PX("/a/**/b/**/c", "/a/b/c", true),
	PX("/a/**/b/**/c", "/a/1/b", false),
	PX("/a/**/b/**", "/a/b", false),
	PX("/a/**/b/**", "/a/x/b/y", true),
	PX("/w/**/cache/*.tmp", "/w/cache/a.tmp", true),
	PX("/w/**/cache/*.tmp", "/w/x/y/cache/a.tmp", true),
	PX("/w/**/cache/*.tmp", "/w/x/cache/sub/a.tmp", false),
	PX("/a/**/**/b", "/a/b", true),
	PX("/a/**/**/b", "/a/x/y/b", true),
};

static void test_match_table(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof match_rows / sizeof match_rows[0]; i++) {
		const struct match_row *r = &match_rows[i];
		char msg[256];
		if (glob_check(r->pattern, r->f, msg, sizeof msg) != 0) {
			print_error("line %d: glob_check(\"%s\") rejected a valid pattern: %s\n", r->line,
				    r->pattern, msg);
			bad++;
			continue;
		}
		bool got = glob_match(r->pattern, r->text, strlen(r->text), r->f);
		if (got != r->expect) {
			print_error("line %d: glob_match(\"%s\", \"%s\", %s) = %d, expected %d\n", r->line,
				    r->pattern, r->text, r->f == GLOB_PATH ? "path" : "text", got,
				    r->expect);
			bad++;
		}
		if (r->fn) {
			int flags = r->f == GLOB_PATH ? FNM_PATHNAME | FNM_LEADING_DIR : 0;
			bool fn = fnmatch(r->pattern, r->text, flags) == 0;
			if (fn != r->expect) {
				print_error("line %d: fnmatch(\"%s\", \"%s\") = %d disagrees with the row\n",
					    r->line, r->pattern, r->text, fn);
				bad++;
			}
		}
	}
	assert_int_equal(bad, 0);
}

/* Text need not be NUL-terminated: only len bytes count. */
static void test_match_length(void **state)
{
	static const char buf[] = "abcdef";

	(void)state;
	assert_true(glob_match("abc", buf, 3, GLOB_TEXT));
	assert_false(glob_match("abcd", buf, 3, GLOB_TEXT));
	assert_true(glob_match("a*", buf, 1, GLOB_TEXT));
	assert_true(glob_match("*", buf, 0, GLOB_TEXT));
	assert_false(glob_match("?", buf, 0, GLOB_TEXT));
	assert_true(glob_match("/a/b", "/a/b/c", 4, GLOB_PATH));
	assert_true(glob_match("/a/b", "/a/bc", 4, GLOB_PATH));
	assert_false(glob_match("/a/bc", "/a/bc", 4, GLOB_PATH));
	assert_true(glob_match("/a/*", "/a/xyz", 6, GLOB_PATH));
	assert_true(glob_match("/a/**", "/a/x/y", 4, GLOB_PATH));
	assert_false(glob_match("/a/**", "/a/x/y", 2, GLOB_PATH));
}

/* Many stars over a long text finish quickly (no exponential backtracking). */
static void test_match_pathological(void **state)
{
	char text[4096];
	char pat[200] = "";

	(void)state;
	memset(text, 'a', sizeof text - 1);
	text[sizeof text - 1] = '\0';
	for (int i = 0; i < 40; i++)
		strcat(pat, "*a");
	strcat(pat, "b");
	assert_int_equal(glob_check(pat, GLOB_TEXT, NULL, 0), 0);
	assert_false(glob_match(pat, text, strlen(text), GLOB_TEXT));
	text[sizeof text - 2] = 'b';
	assert_true(glob_match(pat, text, strlen(text), GLOB_TEXT));

	char path[4096];
	size_t n = 0;
	while (n + 3 < 512) {
		path[n++] = '/';
		path[n++] = 'a';
	}
	path[n] = '\0';
	assert_int_equal(glob_check("/**/a/**/a/**/a/**/b", GLOB_PATH, NULL, 0), 0);
	assert_false(glob_match("/**/a/**/a/**/a/**/b", path, n, GLOB_PATH));
	assert_true(glob_match("/**/a/**/a/**/a", path, n, GLOB_PATH));
}

/* ---- glob_check ------------------------------------------------------------- */

struct check_row {
	const char *pattern;
	enum glob_flavour f;
	const char *message; /* NULL: valid; else a substring of the error */
	int line;
};

#define OK(p, f) { p, f, NULL, __LINE__ }
#define BAD(p, f, m) { p, f, m, __LINE__ }

static const struct check_row check_rows[] = {
	OK("abc", GLOB_TEXT),
	OK("abc", GLOB_PATH),
	OK("", GLOB_TEXT),
	OK("*", GLOB_TEXT),
	OK("*", GLOB_PATH),
	OK("[a-z]", GLOB_TEXT),
	OK("[[:alnum:]]", GLOB_TEXT),
	OK("[!]]", GLOB_TEXT),
	OK("[]]", GLOB_PATH),
	OK("\\*", GLOB_TEXT),
	OK("\\\\", GLOB_TEXT),
	OK("/a/**/b", GLOB_PATH),
	OK("/a/**", GLOB_PATH),
	OK("**", GLOB_PATH),
	OK("**/x", GLOB_PATH),
	OK("a**b", GLOB_TEXT),
	OK("***", GLOB_TEXT),
	OK("/a/\\*\\*b", GLOB_PATH),
	OK("[a-]", GLOB_TEXT),
	BAD("[abc", GLOB_TEXT, "unterminated '['"),
	BAD("/a/[bc", GLOB_PATH, "unterminated '['"),
	BAD("[", GLOB_TEXT, "unterminated '['"),
	BAD("[!", GLOB_TEXT, "unterminated '['"),
	BAD("[]", GLOB_TEXT, "unterminated '['"),
	BAD("[z-a]", GLOB_TEXT, "reversed range"),
	BAD("/x/[9-0]", GLOB_PATH, "reversed range"),
	BAD("[[:foo:]]", GLOB_TEXT, "unknown character class"),
	BAD("[[:DIGIT:]]", GLOB_TEXT, "unknown character class"),
	BAD("[[:digit:", GLOB_TEXT, "unterminated '[:'"),
	BAD("[[.a.]]", GLOB_TEXT, "not supported"),
	BAD("[[=a=]]", GLOB_TEXT, "not supported"),
	BAD("abc\\", GLOB_TEXT, "trailing '\\'"),
	BAD("/a/b\\", GLOB_PATH, "trailing '\\'"),
	BAD("[a\\", GLOB_TEXT, "'"),
	BAD("/a/b**", GLOB_PATH, "whole path component"),
	BAD("/a/**b", GLOB_PATH, "whole path component"),
	BAD("/a**/b", GLOB_PATH, "whole path component"),
	BAD("x**", GLOB_PATH, "whole path component"),
	BAD("/a/***", GLOB_PATH, "'***'"),
	BAD("/a/***/b", GLOB_PATH, "'***'"),
};

static void test_check_table(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof check_rows / sizeof check_rows[0]; i++) {
		const struct check_row *r = &check_rows[i];
		char msg[256] = "";
		int rc = glob_check(r->pattern, r->f, msg, sizeof msg);
		if (!r->message && rc != 0) {
			print_error("line %d: glob_check(\"%s\") = %d (%s), expected 0\n", r->line,
				    r->pattern, rc, msg);
			bad++;
		} else if (r->message && (rc != -EINVAL || !strstr(msg, r->message))) {
			print_error("line %d: glob_check(\"%s\") = %d \"%s\", expected -EINVAL \"%s\"\n",
				    r->line, r->pattern, rc, msg, r->message);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void test_check_star_limit(void **state)
{
	char pat[2 * (GLOB_MAX_STARS + 1) + 1];
	char msg[128] = "";

	(void)state;
	for (int i = 0; i < GLOB_MAX_STARS; i++)
		memcpy(pat + 2 * i, "a*", 2);
	pat[2 * GLOB_MAX_STARS] = '\0';
	assert_int_equal(glob_check(pat, GLOB_TEXT, msg, sizeof msg), 0);
	assert_int_equal(glob_check(pat, GLOB_PATH, msg, sizeof msg), 0);
	memcpy(pat + 2 * GLOB_MAX_STARS, "a*", 3);
	assert_int_equal(glob_check(pat, GLOB_TEXT, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "too many '*'"));
	assert_int_equal(glob_check(pat, GLOB_PATH, NULL, 0), -EINVAL);
}

/* msg may be NULL with msglen 0; a short buffer is truncated, still terminated. */
static void test_check_message_buffer(void **state)
{
	char small[8];

	(void)state;
	assert_int_equal(glob_check("[", GLOB_TEXT, NULL, 0), -EINVAL);
	memset(small, 'X', sizeof small);
	assert_int_equal(glob_check("[", GLOB_TEXT, small, sizeof small), -EINVAL);
	assert_int_equal(strlen(small), sizeof small - 1);
}

/* ---- Literal helpers -------------------------------------------------------- */

static void test_literal(void **state)
{
	(void)state;
	assert_int_equal(glob_literal_prefix("abc*d"), 3);
	assert_int_equal(glob_literal_prefix("abc"), 3);
	assert_int_equal(glob_literal_prefix(""), 0);
	assert_int_equal(glob_literal_prefix("*"), 0);
	assert_int_equal(glob_literal_prefix("a\\b"), 1);
	assert_int_equal(glob_literal_prefix("ab?c"), 2);
	assert_int_equal(glob_literal_prefix("/usr/[a-z]"), 5);
	assert_true(glob_is_literal("abc"));
	assert_true(glob_is_literal("/a/b.c"));
	assert_true(glob_is_literal(""));
	assert_true(glob_is_literal("-rf /"));
	assert_false(glob_is_literal("a*"));
	assert_false(glob_is_literal("a\\*"));
	assert_false(glob_is_literal("x?"));
	assert_false(glob_is_literal("[x]"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_table),
		cmocka_unit_test(test_match_length),
		cmocka_unit_test(test_match_pathological),
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_check_star_limit),
		cmocka_unit_test(test_check_message_buffer),
		cmocka_unit_test(test_literal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
