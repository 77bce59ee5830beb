/* test_regex.c — unit tests for policy/regex.c, checked row by row against glibc regexec. */
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

#include "policy/regex.h"

/*
 * Known, intended differences from glibc: '.' matches NUL here (glibc sets
 * RE_DOT_NOT_NULL), and '^' '$' inside a pattern never match next to a newline
 * (glibc lets them, although REG_NEWLINE is not set).
 */
#define GLIBC_DIFFERS 1

struct row {
	const char *pattern;
	const char *text;
	size_t textlen;
	bool expect;
	int flags;
};

#define M(p, t) { p, t, sizeof(t) - 1, true, 0 }
#define N(p, t) { p, t, sizeof(t) - 1, false, 0 }
#define MX(p, t) { p, t, sizeof(t) - 1, true, GLIBC_DIFFERS }
#define NX(p, t) { p, t, sizeof(t) - 1, false, GLIBC_DIFFERS }

static const struct row rows[] = {
	/* literals */
	M("abc", "abc"),
	N("abc", "ab"),
	N("abc", "abcd"),
	N("abc", "xabc"),
	N("abc", "ABC"),
	M("", ""),
	N("", "a"),
	M("a", "a"),
	N("a", ""),
	M("\t", "\t"),
	M("a b", "a b"),
	M("\xe2\x82\xac", "\xe2\x82\xac"),
	M("]", "]"),
	M("}", "}"),
	M("a}", "a}"),
	M("-", "-"),
	M(",", ","),
	/* dot */
	M(".", "a"),
	N(".", ""),
	M(".", "\n"),
	M(".", "\xff"),
	M("..", "ab"),
	N(".", "ab"),
	M("a.c", "a\nc"),
	M(".*", ""),
	M(".*", "anything at all"),
	N(".", "\xe2\x82\xac"),
	M("...", "\xe2\x82\xac"),
	MX(".", "\0"),
	MX("a.b", "a\0b"),
	MX(".*", "a\0b"),
	/* star, plus, question */
	M("a*", ""),
	M("a*", "aaa"),
	N("a*", "aab"),
	N("a+", ""),
	M("a+", "aaaa"),
	M("a?", ""),
	M("a?", "a"),
	N("a?", "aa"),
	M("ab*c", "ac"),
	M("ab*c", "abbbc"),
	N("ab+c", "ac"),
	M("ab+c", "abc"),
	N("ab?c", "abbc"),
	M("a**", "aaa"),
	M("a*+", "aa"),
	M("a+?", ""),
	M("a+?", "aaa"),
	M("a?*", "aaa"),
	M("(ab)*", "ababab"),
	N("(ab)*", "aba"),
	N("(ab)+", ""),
	M("(ab)+", "ab"),
	M("(ab)?c", "c"),
	/* alternation */
	M("a|b", "a"),
	M("a|b", "b"),
	N("a|b", "ab"),
	M("abc|def", "def"),
	N("abc|def", "abcdef"),
	N("abc|def", "abdef"),
	M("a|b|c|d", "c"),
	N("a|b|c|d", "e"),
	M("a|", ""),
	M("a|", "a"),
	M("|a", ""),
	M("|a", "a"),
	M("a||b", ""),
	M("a||b", "b"),
	M("|", ""),
	N("|", "a"),
	M("(a|)b", "b"),
	M("(|a)b", "ab"),
	M("(a|ab)(c|bcd)(d*)", "abcd"),
	M("(a|ab)c", "abc"),
	M("x(a|b)*y", "xababbay"),
	N("x(a|b)*y", "xabcy"),
	M("ab|cd|ef", "ef"),
	M("a(b|c|d)e", "ade"),
	/* groups */
	M("()", ""),
	N("()", "a"),
	M("a()b", "ab"),
	M("((a))", "a"),
	M("((a)|b)+", "abba"),
	M("(a(b(c)))", "abc"),
	M("((a|b)(c|d))*", "acbdad"),
	N("((a|b)(c|d))*", "acb"),
	M("(((((((((((a)))))))))))", "a"),
	M("(a|b(c|d(e|f)))", "bdf"),
	N("(a|b(c|d(e|f)))", "bdc"),
	/* bounds */
	M("a{3}", "aaa"),
	N("a{3}", "aa"),
	N("a{3}", "aaaa"),
	N("a{2,}", "a"),
	M("a{2,}", "aaaaaa"),
	M("a{2,4}", "aaaa"),
	N("a{2,4}", "aaaaa"),
	N("a{2,4}", "a"),
	M("a{0}", ""),
	N("a{0}", "a"),
	M("a{0,0}", ""),
	M("a{0,1}", "a"),
	M("a{,2}", "aa"),
	N("a{,2}", "aaa"),
	M("a{,}", "aaaa"),
	M("a{01}", "a"),
	M("(ab){2}", "abab"),
	N("(ab){2}", "ab"),
	M("(ab){1,2}c", "ababc"),
	M("a{1}{2}", "aa"),
	M("a{2}{3}", "aaaaaa"),
	N("a{2}{3}", "aaaaa"),
	M("(a|b){3}", "aba"),
	M("x{0,3}y", "xxxy"),
	N("x{0,3}y", "xxxxy"),
	M("[ab]{2,3}", "aba"),
	M("(a*){2,3}", "aaaa"),
	M("(a*){2,3}", ""),
	M("a{1,}b", "aaab"),
	M("(a{2}){2}", "aaaa"),
	M("(a{2}){2,}", "aaaaaa"),
	N("(a{2}){2,}", "aaaaa"),
	M("()*{3}", ""),
	M("(a|){2}", "a"),
	M("a{0,2}{2}", "aaa"),
	/* bracket expressions */
	M("[abc]", "b"),
	N("[abc]", "d"),
	M("[a-z]", "m"),
	N("[a-z]", "M"),
	M("[^a-z]", "M"),
	N("[^a-z]", "m"),
	M("[]a]", "]"),
	M("[]a]", "a"),
	N("[^]a]", "]"),
	M("[^]a]", "b"),
	M("[]]", "]"),
	M("[^]]", "a"),
	M("[a-]", "-"),
	M("[-a]", "-"),
	N("[a-]", "b"),
	M("[^-]", "a"),
	N("[^-]", "-"),
	M("[!--]", ","),
	M("[--/]", "."),
	M("[%--]", "+"),
	M("[]-a]", "^"),
	M("[a\\]", "\\"),
	M("[\\n]", "n"),
	N("[\\n]", "\n"),
	M("[\\]]", "\\]"),
	N("[.]", "a"),
	M("[.]", "."),
	M("[*+?]", "+"),
	M("[$]", "$"),
	N("[^^]", "^"),
	M("[a^]", "^"),
	M("[[]", "["),
	M("[a[]", "["),
	M("[[-a]", "_"),
	M("[|]", "|"),
	M("[(]", "("),
	M("[a-a]", "a"),
	M("[a-cx-z]", "y"),
	N("[a-cx-z]", "d"),
	M("[\x80-\xff]", "\xc3"),
	N("[\x80-\xff]", "\x7f"),
	M("[^a]", "\n"),
	M("[^a]", "\0"),
	M("[^\x01-\xff]", "\0"),
	M("a[^x]b", "a\0b"),
	M("[^b]*", "a\0a"),
	M("[[:alpha:]]", "Q"),
	N("[[:alpha:]]", "1"),
	M("[[:digit:]]+", "0123456789"),
	M("[[:alnum:]_]+", "foo_Bar9"),
	N("[[:alnum:]]", "_"),
	M("[[:space:]]", "\v"),
	M("[[:space:]]", "\f"),
	M("[[:space:]]", "\r"),
	N("[[:blank:]]", "\n"),
	M("[[:blank:]]", "\t"),
	N("[[:upper:]]", "a"),
	M("[[:upper:]]", "Z"),
	M("[[:lower:]]", "a"),
	M("[[:xdigit:]]+", "deadBEEF09"),
	N("[[:xdigit:]]", "g"),
	M("[[:punct:]]", "!"),
	M("[[:punct:]]", "~"),
	N("[[:punct:]]", "a"),
	N("[[:punct:]]", " "),
	M("[[:cntrl:]]", "\x7f"),
	M("[[:cntrl:]]", "\x1f"),
	M("[[:cntrl:]]", "\0"),
	M("[[:print:]]", " "),
	N("[[:graph:]]", " "),
	M("[[:graph:]]", "~"),
	N("[[:print:]]", "\x80"),
	N("[[:alpha:]]", "\xe9"),
	M("[^[:alpha:]]", "5"),
	M("[[:alpha:][:digit:]]", "5"),
	M("[[:alpha:]-]", "-"),
	M("[^[:space:]]+", "no-spaces"),
	N("[^[:space:]]+", "one space"),
	/* escapes */
	M("a\\.b", "a.b"),
	N("a\\.b", "axb"),
	M("\\*", "*"),
	M("\\+\\?", "+?"),
	M("\\(\\)", "()"),
	M("\\[a]", "[a]"),
	M("\\{", "{"),
	M("\\}", "}"),
	M("\\|", "|"),
	M("\\^", "^"),
	M("\\$", "$"),
	M("\\\\", "\\"),
	M("\\-", "-"),
	M("\\/", "/"),
	M("a\\{2\\}", "a{2}"),
	M("\\.*", "..."),
	/* anchors */
	M("^abc$", "abc"),
	M("^abc", "abc"),
	M("abc$", "abc"),
	N("a^b", "a^b"),
	N("a^b", "ab"),
	N("a$b", "ab"),
	N("a$b", "a$b"),
	M("^", ""),
	M("$", ""),
	M("^$", ""),
	N("^$", "a"),
	M("^^a$$", "a"),
	M("(^a)", "a"),
	M("(a$)", "a"),
	M("(^a|b)", "b"),
	M("x|^y", "y"),
	M("a|b$", "b"),
	M("(^)*a", "a"),
	M("(a|^)b", "b"),
	M("(a|^)b", "ab"),
	M("($)", ""),
	M("a($|b)", "a"),
	M("a($|b)", "ab"),
	M("(^|x)+", "xx"),
	N("a(^b)?", "ab"),
	M("a(^b)?", "a"),
	M("(a$)*", ""),
	NX("a$\nb", "a\nb"),
	NX("a\n^b", "a\nb"),
	NX(".^", "\n"),
	NX(".+^", "\n"),
	NX("a$.", "a\n"),
	N("a^.", "a\n"),
	N("^a$", "a\n"),
	N("a\n$", "a"),
	/* NUL bytes and control characters in the text */
	N("a*", "a\0a"),
	N("abc", "ab\0c"),
	M("(a|\n)*", "a\na"),
	M("[^\n]*\n", "line\n"),
	/* empty loops */
	M("(a*)*", ""),
	M("(a*)*", "aaa"),
	M("(a*)*b", "aab"),
	N("(a*)*b", "aaa"),
	M("(a*)+", ""),
	M("(a*|b)*", "abab"),
	M("()*", ""),
	M("()+", ""),
	N("()+", "a"),
	M("(()|a)*", "aa"),
	M("(a?)*", "aaa"),
	M("(a*)*(b*)*c", "aabbc"),
	M("((a*)*)*", "a"),
	M("(^)*", ""),
	M("($)*", ""),
	M("(a|b*)*c", "ababbbc"),
	M("(|a)+", "aa"),
	M("(a*)*{3}", "aa"),
	/* pathological, short enough for any matcher */
	N("(a+)+b", "aaaaaaaaaaaaaaaaaaaaaaaaaa"),
	M("(a|aa)+", "aaaaaaaaaa"),
	N("(x+x+)+y", "xxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
	M("(a|a)*", "aaaaaaaaaaaaaaaa"),
	/* policy-like rules */
	M("git (status|diff|log)( .*)?", "git status"),
	M("git (status|diff|log)( .*)?", "git log --oneline"),
	N("git (status|diff|log)( .*)?", "git push"),
	N("git (status|diff|log)( .*)?", "git statusx"),
	M("npm (run|test)( [a-z:-]+)*", "npm run build:prod"),
	M("/tmp/[^/]+\\.txt", "/tmp/a.txt"),
	N("/tmp/[^/]+\\.txt", "/tmp/a/b.txt"),
	M("[0-9]{1,3}(\\.[0-9]{1,3}){3}", "192.168.1.1"),
	N("[0-9]{1,3}(\\.[0-9]{1,3}){3}", "1.2.3"),
	N("[0-9]{1,3}(\\.[0-9]{1,3}){3}", "1234.1.1.1"),
	M("(rm|mv) -[rf]+ .*", "rm -rf /"),
	M("curl( -[a-zA-Z]+)* https://[a-z.]+/.*", "curl -sS https://example.com/x"),
	N("curl( -[a-zA-Z]+)* https://[a-z.]+/.*", "curl http://example.com/x"),
	M("python3? -m (pytest|pip install -r requirements\\.txt)", "python -m pytest"),
	M("[[:alpha:]_][[:alnum:]_]*=.*", "PATH=/usr/bin"),
};

static int glibc_match(const char *pattern, const char *text, size_t textlen)
{
	size_t plen = strlen(pattern);
	char *wrapped = malloc(plen + 5);
	assert_non_null(wrapped);
	snprintf(wrapped, plen + 5, "^(%s)$", pattern);
	regex_t re;
	int rc = regcomp(&re, wrapped, REG_EXTENDED | REG_NOSUB);
	free(wrapped);
	if (rc)
		return -1;
	/* NUL-terminated too: ASan's regexec interceptor reads the text with strlen(). */
	char *copy = malloc(textlen + 1);
	assert_non_null(copy);
	if (textlen)
		memcpy(copy, text, textlen);
	copy[textlen] = '\0';
	regmatch_t m[1] = { { 0, (regoff_t)textlen } };
	rc = regexec(&re, copy, 1, m, REG_STARTEND);
	regfree(&re);
	free(copy);
	return rc == 0;
}

static size_t compile_ok(const char *pattern, uint8_t *prog)
{
	char msg[160] = "";
	size_t len = 0;
	int rc = regex_compile(pattern, prog, REGEX_MAX_PROGRAM, &len, msg, sizeof msg);
	if (rc)
		fail_msg("regex_compile(\"%s\") = %d: %s", pattern, rc, msg);
	if (regex_validate(prog, len) != 0)
		fail_msg("regex_validate rejects the program for \"%s\"", pattern);
	return len;
}

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

static void test_invalid(void **state)
{
	(void)state;
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

static const char *const sample_patterns[] = {
	"",
	"a",
	"abc|def|",
	"(a*)*b",
	"[^]a-z[:digit:]]+x?",
	"^(ab|cd){2,4}$",
	"x{0,3}(y|z)+.",
	"((a|b)(c|)){3,}",
	"git (status|diff)( .*)?",
	"[[:alpha:]_][[:alnum:]_]*=.*",
	"a^b$c",
	"()*|(|a)+",
};

static void test_validate_truncations(void **state)
{
	(void)state;
	static uint8_t prog[REGEX_MAX_PROGRAM + 1];
	size_t checked = 0;
	for (size_t k = 0; k < sizeof rows / sizeof rows[0] + sizeof sample_patterns / sizeof(char *);
	     k++) {
		const char *p = k < sizeof rows / sizeof rows[0] ?
					rows[k].pattern :
					sample_patterns[k - sizeof rows / sizeof rows[0]];
		size_t len = compile_ok(p, prog);
		for (size_t cut = 0; cut < len; cut++) {
			if (regex_validate(prog, cut) != -EINVAL)
				fail_msg("/%s/ truncated to %zu of %zu bytes validates", p, cut, len);
			checked++;
		}
		prog[len] = 0;
		assert_int_equal(regex_validate(prog, len + 1), -EINVAL);
		prog[len] = 1;
		assert_int_equal(regex_validate(prog, len + 1), -EINVAL);
	}
	print_message("regex truncations: %zu rejected\n", checked);
}

/* White-box: the encoding documented at the top of policy/regex.c. */
enum { T_MATCH = 1, T_BYTE, T_ANY, T_SET, T_JMP, T_SPLIT, T_BOL, T_EOL };

static size_t handmade(uint8_t *buf, const uint8_t *code, size_t n, unsigned ninsns)
{
	buf[0] = 'R';
	buf[1] = 'X';
	buf[2] = 1;
	buf[3] = 0;
	buf[4] = (uint8_t)(8 + n);
	buf[5] = (uint8_t)((8 + n) >> 8);
	buf[6] = (uint8_t)ninsns;
	buf[7] = (uint8_t)(ninsns >> 8);
	if (n)
		memcpy(buf + 8, code, n);
	return 8 + n;
}

static void test_validate_handmade(void **state)
{
	(void)state;
	uint8_t buf[128];
	size_t len;

	static const uint8_t ok_loop[] = { T_JMP, 0, 0 };
	len = handmade(buf, ok_loop, sizeof ok_loop, 1);
	assert_int_equal(regex_validate(buf, len), 0);
	assert_false(regex_match(buf, len, "", 0));
	assert_false(regex_match(buf, len, "abc", 3));

	static const uint8_t ok_split_self[] = { T_SPLIT, 0, 0, 5, 0, T_MATCH };
	len = handmade(buf, ok_split_self, sizeof ok_split_self, 2);
	assert_int_equal(regex_validate(buf, len), 0);
	assert_true(regex_match(buf, len, "", 0));
	assert_false(regex_match(buf, len, "a", 1));

	static const uint8_t ok_byte[] = { T_BYTE, 'a', T_MATCH };
	len = handmade(buf, ok_byte, sizeof ok_byte, 2);
	assert_int_equal(regex_validate(buf, len), 0);
	assert_true(regex_match(buf, len, "a", 1));
	len = handmade(buf, ok_byte, sizeof ok_byte, 3);
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	len = handmade(buf, ok_byte, sizeof ok_byte, 2);
	buf[0] = 'r';
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	len = handmade(buf, ok_byte, sizeof ok_byte, 2);
	buf[2] = 2;
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	len = handmade(buf, ok_byte, sizeof ok_byte, 2);
	buf[3] = 1;
	assert_int_equal(regex_validate(buf, len), -EINVAL);

	static const uint8_t falls_off[] = { T_MATCH, T_BYTE, 'a' };
	len = handmade(buf, falls_off, sizeof falls_off, 2);
	assert_int_equal(regex_validate(buf, len), -EINVAL);

	static const uint8_t bad_op[] = { 0x09, T_MATCH };
	len = handmade(buf, bad_op, sizeof bad_op, 2);
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	static const uint8_t zero_op[] = { 0x00, T_MATCH };
	len = handmade(buf, zero_op, sizeof zero_op, 2);
	assert_int_equal(regex_validate(buf, len), -EINVAL);

	static const uint8_t short_set[] = { T_SET, 0xff, 0xff, T_MATCH };
	len = handmade(buf, short_set, sizeof short_set, 2);
	assert_int_equal(regex_validate(buf, len), -EINVAL);

	static const uint8_t jmp_mid[] = { T_JMP, 4, 0, T_BYTE, 'a', T_MATCH };
	len = handmade(buf, jmp_mid, sizeof jmp_mid, 3);
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	static const uint8_t jmp_end[] = { T_JMP, 3, 0 };
	len = handmade(buf, jmp_end, sizeof jmp_end, 1);
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	static const uint8_t jmp_hdr[] = { T_JMP, 0xfe, 0xff };
	len = handmade(buf, jmp_hdr, sizeof jmp_hdr, 1);
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	static const uint8_t jmp_far[] = { T_JMP, 0x00, 0x80 };
	len = handmade(buf, jmp_far, sizeof jmp_far, 1);
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	static const uint8_t split_bad2[] = { T_SPLIT, 5, 0, 2, 0, T_MATCH };
	len = handmade(buf, split_bad2, sizeof split_bad2, 2);
	assert_int_equal(regex_validate(buf, len), -EINVAL);

	static const uint8_t anchors[] = { T_BOL, T_ANY, T_EOL, T_MATCH };
	len = handmade(buf, anchors, sizeof anchors, 4);
	assert_int_equal(regex_validate(buf, len), 0);
	assert_true(regex_match(buf, len, "\0", 1));
	assert_false(regex_match(buf, len, "ab", 2));

	len = handmade(buf, NULL, 0, 0);
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	assert_int_equal(regex_validate(buf, 3), -EINVAL);

	static uint8_t big[REGEX_MAX_PROGRAM + 8];
	memset(big, T_ANY, sizeof big);
	big[0] = 'R';
	big[1] = 'X';
	big[2] = 1;
	big[3] = 0;
	size_t n = 8 + REGEX_MAX_INSNS + 1;
	big[4] = (uint8_t)n;
	big[5] = (uint8_t)(n >> 8);
	big[6] = (uint8_t)(REGEX_MAX_INSNS + 1);
	big[7] = (uint8_t)((REGEX_MAX_INSNS + 1) >> 8);
	big[n - 1] = T_MATCH;
	assert_int_equal(regex_validate(big, n), -EINVAL);
	n--;
	big[4] = (uint8_t)n;
	big[6] = (uint8_t)REGEX_MAX_INSNS;
	big[7] = (uint8_t)(REGEX_MAX_INSNS >> 8);
	big[n - 1] = T_MATCH;
	assert_int_equal(regex_validate(big, n), 0);
	assert_false(regex_match(big, n, "x", 1));
	assert_int_equal(regex_validate(big, REGEX_MAX_PROGRAM + 8), -EINVAL);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)((rng_state >> 11) % n);
}

static void test_mutations(void **state)
{
	(void)state;
	static uint8_t progs[sizeof sample_patterns / sizeof(char *)][REGEX_MAX_PROGRAM];
	size_t lens[sizeof sample_patterns / sizeof(char *)];
	size_t np = sizeof sample_patterns / sizeof(char *);
	static uint8_t buf[REGEX_MAX_PROGRAM];
	static const char *const texts[] = { "", "a", "ab", "abcabc", "git status", "xyzzy\n" };
	size_t valid = 0, total = 6000;
	for (size_t k = 0; k < np; k++)
		lens[k] = compile_ok(sample_patterns[k], progs[k]);
	for (size_t it = 0; it < total; it++) {
		size_t k = rnd((uint32_t)np), len = lens[k];
		memcpy(buf, progs[k], len);
		unsigned nmut = 1 + rnd(4);
		for (unsigned m = 0; m < nmut; m++) {
			size_t pos = 8 + rnd((uint32_t)(len - 8));
			switch (rnd(4)) {
			case 0:
				buf[pos] = (uint8_t)rnd(256);
				break;
			case 1:
				buf[pos] = (uint8_t)(1 + rnd(9));
				break;
			case 2:
				buf[pos] ^= (uint8_t)(1u << rnd(8));
				break;
			default:
				if (pos + 2 <= len) {
					buf[pos] = (uint8_t)rnd((uint32_t)len);
					buf[pos + 1] = rnd(3) ? 0 : 0xff;
				}
				break;
			}
		}
		if (rnd(8) == 0)
			buf[rnd((uint32_t)len)] = (uint8_t)rnd(256);
		if (regex_validate(buf, len) != 0)
			continue;
		valid++;
		for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
			(void)regex_match(buf, len, texts[t], strlen(texts[t]));
	}
	for (size_t it = 0; it < 2000; it++) {
		uint8_t code[64];
		size_t n = 1 + rnd(sizeof code);
		for (size_t j = 0; j < n; j++)
			code[j] = rnd(3) ? (uint8_t)(1 + rnd(8)) : (uint8_t)rnd(256);
		size_t len = handmade(buf, code, n, rnd(2) ? (unsigned)rnd(40) : (unsigned)n);
		if (regex_validate(buf, len) != 0)
			continue;
		valid++;
		for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
			(void)regex_match(buf, len, texts[t], strlen(texts[t]));
	}
	print_message("regex mutations: %zu programs, %zu still valid and run\n", total + 2000, valid);
}

static void test_random_differential(void **state)
{
	(void)state;
	static const char *const tokens[] = {
		"a", "b", "c", ".", "|", "(", ")", "*", "+", "?", "{2}", "{0,1}", "{1,}", "{,2}",
		"[ab]", "[^a]", "[a-c]", "[]a]", "[-b]", "^", "$", "()", "\\.", "-", "[[:alpha:]]",
		"(a|)", "a*", "(b",
	};
	/* '~' is matched by exactly the tokens that match a newline; only glibc's anchors differ. */
	static const char alphabet[] = "abc-.\n";
	static uint8_t prog[REGEX_MAX_PROGRAM];
	size_t both = 0, ours_only = 0, glibc_only = 0, texts = 0, anchor_quirks = 0;
	for (int it = 0; it < 4000; it++) {
		char pat[128] = "";
		unsigned ntok = 1 + rnd(8);
		for (unsigned t = 0; t < ntok; t++)
			strcat(pat, tokens[rnd(sizeof tokens / sizeof tokens[0])]);
		char msg[160] = "";
		size_t len;
		int rc = regex_compile(pat, prog, sizeof prog, &len, msg, sizeof msg);
		int g0 = glibc_match(pat, "", 0);
		if (rc != 0) {
			if (g0 >= 0) {
				glibc_only++;
				if (!strstr(msg, "unmatched ')'"))
					fail_msg("glibc accepts /%s/, regex_compile: %s", pat, msg);
			}
			continue;
		}
		assert_int_equal(regex_validate(prog, len), 0);
		if (g0 < 0) {
			ours_only++;
			fail_msg("regex_compile accepts /%s/, glibc does not", pat);
		}
		both++;
		for (int t = 0; t < 24; t++) {
			char text[12];
			size_t n = rnd(t < 8 ? 4 : sizeof text);
			for (size_t j = 0; j < n; j++)
				text[j] = alphabet[rnd(sizeof alphabet - 1)];
			bool got = regex_match(prog, len, text, n);
			char plain[sizeof text];
			for (size_t j = 0; j < n; j++)
				plain[j] = text[j] == '\n' ? '~' : text[j];
			int g = glibc_match(pat, plain, n);
			if (g != got)
				fail_msg("/%s/ on \"%.*s\": glibc %d, regex_match %d", pat, (int)n, text,
					 g, got);
			if (glibc_match(pat, text, n) != g) {
				if (!strpbrk(pat, "^$"))
					fail_msg("/%s/: glibc treats newline unlike '~'", pat);
				anchor_quirks++;
			}
			texts++;
		}
	}
	print_message("regex random differential: %zu patterns (%zu texts) agree with glibc, "
		      "%zu rejected only here, %zu only by glibc, %zu newline-anchor differences\n",
		      both, texts, glibc_only, ours_only, anchor_quirks);
	assert_true(both > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_long_texts),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_validate_truncations),
		cmocka_unit_test(test_validate_handmade),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_random_differential),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
