/*
 * regex_cases.h — the table of patterns, texts and verdicts test_regex.c checks policy/regex.c
 * against (and glibc regexec with it), which test_regex_program.c also compiles and truncates;
 * glibc_match() and compile_ok() run one pattern each way.
 */
#ifndef AIRLOCK_TEST_REGEX_CASES_H
#define AIRLOCK_TEST_REGEX_CASES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Whether glibc's regexec (REG_EXTENDED) matches all of text[0..textlen) with pattern, as
 * ^(pattern)$: 1 or 0, or -1 when glibc refuses the pattern.
 */
static inline int glibc_match(const char *pattern, const char *text, size_t textlen)
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

/* Compiles pattern into prog (REGEX_MAX_PROGRAM bytes) and validates it; fails the test otherwise.  Returns its length. */
static inline size_t compile_ok(const char *pattern, uint8_t *prog)
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

#endif
