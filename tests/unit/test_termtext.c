/*
 * test_termtext.c — core/termtext.h, the escaping `airlock log`, the approval TUI and the
 * prompt share: each kind of text that can disguise a request (bidi controls, zero-width and
 * other default-ignorable code points, tag characters, variation selectors, C0 and C1
 * controls, bytes that are not UTF-8) is escaped visibly, letters of any script stay as
 * they are, escapes are found whole again, and bash reads each quoted word back to the same
 * bytes.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/termtext.h"

/* What fn writes for s, into out. */
static void written(void (*fn)(FILE *, const char *), const char *s, char *out, size_t cap)
{
	out[0] = '\0'; /* glibc's fmemopen() leaves it when nothing is written */
	FILE *f = fmemopen(out, cap, "w");
	assert_non_null(f);
	fn(f, s);
	fclose(f);
}

/* One of each kind, as free text. */
static const struct {
	const char *in, *want;
} text_cases[] = {
	/* bidi controls (UAX #9): RLO, the isolates, the marks, the embeddings, ALM */
	{ "rm -rf \xe2\x80\xae/ fdp.txt", "rm -rf \\u202e/ fdp.txt" },
	{ "\xe2\x81\xa6" "a\xe2\x81\xa7" "b\xe2\x81\xa8" "c\xe2\x81\xa9", "\\u2066a\\u2067b\\u2068c\\u2069" },
	{ "\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xd8\x9c",
	  "\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u061c" },
	/* zero-width and other default-ignorable code points */
	{ "a\xe2\x80\x8b" "b\xe2\x80\x8c" "c\xe2\x80\x8d" "d\xe2\x81\xa0" "e\xef\xbb\xbf",
	  "a\\u200bb\\u200cc\\u200dd\\u2060e\\ufeff" },
	{ "pass\xc2\xadwd", "pass\\u00adwd" },                               /* soft hyphen */
	{ "x\xcd\x8fy", "x\\u034fy" },                                       /* CGJ */
	{ "\xe1\x85\x9f\xe1\x85\xa0\xe3\x85\xa4\xef\xbe\xa0", "\\u115f\\u1160\\u3164\\uffa0" }, /* fillers */
	{ "a\xe1\xa0\x8e" "b", "a\\u180eb" },                                /* Mongolian vowel separator */
	{ "l1\xe2\x80\xa8l2\xe2\x80\xa9", "l1\\u2028l2\\u2029" },            /* line, paragraph separators */
	{ "\xe2\x81\xa4\xe2\x81\xaf", "\\u2064\\u206f" },                    /* invisible plus, deprecated */
	/* tag characters, variation selectors (both planes) */
	{ "git\xf3\xa0\x80\x81\xf3\xa0\x81\x81\xf3\xa0\x81\xbf", "git\\U000e0001\\U000e0041\\U000e007f" },
	{ "x\xef\xb8\x80y\xef\xb8\x8fz\xf3\xa0\x84\x80", "x\\ufe00y\\ufe0fz\\U000e0100" },
	/* C0 controls, DEL, an ESC sequence */
	{ "a\nb\tc\rd", "a\\nb\\tc\\rd" },
	{ "\x1b[2J\x1b]2;title\x07\x7f\x01", "\\x1b[2J\\x1b]2;title\\x07\\x7f\\x01" },
	/* C1 controls, as UTF-8: each byte */
	{ "a\xc2\x85" "b\xc2\x9b" "2J\xc2\x80\xc2\x9f", "a\\xc2\\x85b\\xc2\\x9b2J\\xc2\\x80\\xc2\\x9f" },
	/* bytes that are not UTF-8: raw C1 bytes, stray and truncated, overlong, surrogate, > U+10FFFF */
	{ "a\x9b" "2J\x85\xff", "a\\x9b2J\\x85\\xff" },
	{ "\xe2\x80", "\\xe2\\x80" },
	{ "\xe2\x80z", "\\xe2\\x80z" },
	{ "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80", "\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80" },
	/* readable: letters of any script, symbols, U+FFFD, emoji, NBSP, a backslash */
	{ "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xc3\xb1 \xe2\x82\xac \xef\xbf\xbd \xf0\x9f\x98\x80 \xc2\xa0",
	  "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xc3\xb1 \xe2\x82\xac \xef\xbf\xbd \xf0\x9f\x98\x80 \xc2\xa0" },
	{ "a\\u202e b", "a\\u202e b" },
	{ "", "" },
};

static void test_text(void **state)
{
	char out[512];
	(void)state;
	for (size_t i = 0; i < sizeof text_cases / sizeof text_cases[0]; i++) {
		written(termtext_put_text, text_cases[i].in, out, sizeof out);
		assert_string_equal(out, text_cases[i].want);
		char *m = termtext_text(text_cases[i].in);
		assert_non_null(m);
		assert_string_equal(m, text_cases[i].want);
		free(m);
	}
	assert_null(termtext_text(NULL));
	written(termtext_put_text, NULL, out, sizeof out);
	assert_string_equal(out, "");
}

/* Units: their length in bytes, and whether they are escaped. */
static void test_units(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *esc;
	} cases[] = {
		{ "a", 1, "" },
		{ "\xc3\xa9", 2, "" },
		{ "\xe6\x97\xa5", 3, "" },
		{ "\xf0\x9f\x98\x80", 4, "" },
		{ "\xe2\x80\xae", 3, "\\u202e" },
		{ "\xf3\xa0\x81\x81", 4, "\\U000e0041" },
		{ "\xc2\x85", 2, "\\xc2\\x85" },
		{ "\x9b", 1, "\\x9b" },
		{ "\xe2\x80", 1, "\\xe2" }, /* a truncated sequence: a byte at a time */
		{ "\x1b", 1, "\\x1b" },
		{ "\n", 1, "\\n" },
	};
	char esc[TERMTEXT_ESC_MAX];
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(termtext_unit(cases[i].in, strlen(cases[i].in), esc), cases[i].len);
		assert_string_equal(esc, cases[i].esc);
	}
	/* the longest escape fits its bound */
	assert_int_equal(termtext_unit("\xf3\xa0\x87\xaf", 4, esc), 4);
	assert_string_equal(esc, "\\U000e01ef");
	assert_true(strlen(esc) < TERMTEXT_ESC_MAX);
}

/* Every escape written is found again whole, and nothing else is taken for one. */
static void test_escape_len(void **state)
{
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
		{ "\\u202e/ fdp", 6 }, { "\\U000e0041x", 10 }, { "\\x1b[2J", 4 }, { "\\n", 2 },
		{ "\\t", 2 },	       { "\\r", 2 },	       { "\\\\", 2 },	  { "\\'", 2 },
		{ "\\u20", 0 },	       { "\\u20g2", 0 },       { "\\x1", 0 },	  { "\\q", 0 },
		{ "\\", 0 },	       { "x\\n", 0 },	       { "", 0 },	  { "\\U000e00", 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(termtext_escape_len(cases[i].s, strlen(cases[i].s)), cases[i].len);
	/* a bound that ends inside an escape: not one */
	assert_int_equal(termtext_escape_len("\\u202e", 5), 0);
	/* every escape a unit of the cases is written as splits into whole escapes */
	for (size_t i = 0; i < sizeof text_cases / sizeof text_cases[0]; i++) {
		const char *in = text_cases[i].in;
		char esc[TERMTEXT_ESC_MAX];
		for (size_t n = strlen(in), k; n > 0; in += k, n -= k) {
			k = termtext_unit(in, n, esc);
			for (size_t j = 0, e, len = strlen(esc); j < len; j += e) {
				e = termtext_escape_len(esc + j, len - j);
				assert_true(e >= 2);
			}
		}
	}
}

static const struct {
	const char *in, *want;
} word_cases[] = {
	{ "git", "git" },
	{ "--force", "--force" },
	{ "/usr/bin/x_y@%+=:,.", "/usr/bin/x_y@%+=:,." },
	{ "", "''" },
	{ "my dir", "'my dir'" },
	{ "it's", "'it'\\''s'" },
	{ "a\\b", "'a\\b'" },
	{ "caf\xc3\xa9", "'caf\xc3\xa9'" },
	{ "\xe6\x97\xa5\xe6\x9c\xac", "'\xe6\x97\xa5\xe6\x9c\xac'" },
	{ "\xe2\x80\xae/ fdp.txt", "$'\\u202e/ fdp.txt'" },
	{ "it's\n", "$'it\\'s\\n'" },
	{ "a\\b\xe2\x80\x8b", "$'a\\\\b\\u200b'" },
	{ "push\xf3\xa0\x80\x81", "$'push\\U000e0001'" },
	{ "x\xc2\x9b" "2J", "$'x\\xc2\\x9b2J'" },
	{ "x\x9b" "2J\xff", "$'x\\x9b2J\\xff'" },
	{ "\x1b[31mred", "$'\\x1b[31mred'" },
	{ "caf\xc3\xa9\xe2\x81\xa6", "$'caf\xc3\xa9\\u2066'" },
};

static void test_word(void **state)
{
	char out[512];
	(void)state;
	for (size_t i = 0; i < sizeof word_cases / sizeof word_cases[0]; i++) {
		written(termtext_put_word, word_cases[i].in, out, sizeof out);
		assert_string_equal(out, word_cases[i].want);
	}
	written(termtext_put_word, NULL, out, sizeof out);
	assert_string_equal(out, "''");
}

/* An argv as the log, the TUI and the prompt show it: the words, one space between them. */
static void test_argv(void **state)
{
	static const char *const argv[] = { "rm", "-rf", "\xe2\x80\xae/ fdp.txt", "a b" };
	char *s = NULL;
	size_t len = 0;
	(void)state;
	FILE *f = open_memstream(&s, &len);
	assert_non_null(f);
	for (size_t i = 0; i < sizeof argv / sizeof argv[0]; i++) {
		if (i)
			fputc(' ', f);
		termtext_put_word(f, argv[i]);
	}
	fclose(f);
	assert_string_equal(s, "rm -rf $'\\u202e/ fdp.txt' 'a b'");
	free(s);
}

/* Runs bash -c script in a UTF-8 locale; what it printed goes to out (NUL-terminated). */
static void bash_prints(const char *script, char *out, size_t cap)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *const argv[] = { "bash", "-c", (char *)script, NULL };
		char *const envp[] = { "LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin", NULL };
		dup2(fd[1], 1);
		execve("/bin/bash", argv, envp);
		_exit(127);
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t r;
	while (n < cap - 1 && (r = read(fd[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(fd[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* bash reads each word back to the bytes it was made from (a UTF-8 locale for \u and \U). */
static void test_bash_reads_back(void **state)
{
	char out[512], script[600], got[512];
	(void)state;
	locale_t utf8 = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
	if (access("/bin/bash", X_OK) != 0 || !utf8) {
		print_message("SKIP bash round trip: %s\n",
			      utf8 ? "/bin/bash is missing" : "no C.UTF-8 locale");
		if (utf8)
			freelocale(utf8);
		skip();
	}
	freelocale(utf8);
	for (size_t i = 0; i < sizeof word_cases / sizeof word_cases[0]; i++) {
		written(termtext_put_word, word_cases[i].in, out, sizeof out);
		snprintf(script, sizeof script, "printf %%s %s", out);
		bash_prints(script, got, sizeof got);
		if (strcmp(got, word_cases[i].in) != 0)
			fail_msg("case %zu: bash read %s back as another string", i, out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_escape_len),
		cmocka_unit_test(test_word),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_bash_reads_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
