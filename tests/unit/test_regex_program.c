/* test_regex_program.c — unit tests for policy/regex.c's compiled programs: truncated, hand-made and mutated programs against regex_validate, and random patterns against glibc regexec. */
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

#include "regex_cases.h"

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

/* Valid programs: a loop that never matches, a split to itself, one byte; then the byte's header corrupted. */
static void handmade_valid(void)
{
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
}

/* Invalid instructions: falling off the end, unknown opcodes, a short set, jumps out of bounds. */
static void handmade_invalid(void)
{
	uint8_t buf[128];
	size_t len;

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
}

/* REGEX_MAX_INSNS instructions validate, one more does not. */
static void handmade_size_limit(void)
{
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

static void test_validate_handmade(void **state)
{
	(void)state;
	uint8_t buf[128];
	size_t len;

	handmade_valid();
	handmade_invalid();

	static const uint8_t anchors[] = { T_BOL, T_ANY, T_EOL, T_MATCH };
	len = handmade(buf, anchors, sizeof anchors, 4);
	assert_int_equal(regex_validate(buf, len), 0);
	assert_true(regex_match(buf, len, "\0", 1));
	assert_false(regex_match(buf, len, "ab", 2));

	len = handmade(buf, NULL, 0, 0);
	assert_int_equal(regex_validate(buf, len), -EINVAL);
	assert_int_equal(regex_validate(buf, 3), -EINVAL);

	handmade_size_limit();
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

/*
 * Matches 24 random texts with pat compiled (prog, len) and with glibc, and fails on any
 * difference; counts the texts, and the newline-anchor differences glibc has with itself.
 */
static void agree_on_texts(const char *pat, const uint8_t *prog, size_t len, size_t *texts,
			   size_t *anchor_quirks)
{
	/* '~' is matched by exactly the tokens that match a newline; only glibc's anchors differ. */
	static const char alphabet[] = "abc-.\n";
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
			fail_msg("/%s/ on \"%.*s\": glibc %d, regex_match %d", pat, (int)n, text, g,
				 got);
		if (glibc_match(pat, text, n) != g) {
			if (!strpbrk(pat, "^$"))
				fail_msg("/%s/: glibc treats newline unlike '~'", pat);
			(*anchor_quirks)++;
		}
		(*texts)++;
	}
}

static void test_random_differential(void **state)
{
	(void)state;
	static const char *const tokens[] = {
		"a", "b", "c", ".", "|", "(", ")", "*", "+", "?", "{2}", "{0,1}", "{1,}", "{,2}",
		"[ab]", "[^a]", "[a-c]", "[]a]", "[-b]", "^", "$", "()", "\\.", "-", "[[:alpha:]]",
		"(a|)", "a*", "(b",
	};
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
		agree_on_texts(pat, prog, len, &texts, &anchor_quirks);
	}
	print_message("regex random differential: %zu patterns (%zu texts) agree with glibc, "
		      "%zu rejected only here, %zu only by glibc, %zu newline-anchor differences\n",
		      both, texts, glibc_only, ours_only, anchor_quirks);
	assert_true(both > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_truncations),
		cmocka_unit_test(test_validate_handmade),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_random_differential),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
