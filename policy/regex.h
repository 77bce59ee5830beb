/* regex.h — POSIX extended regular expressions compiled to a pointer-free program run by a Pike VM. */
#ifndef AIRLOCK_POLICY_REGEX_H
#define AIRLOCK_POLICY_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Policy rules with `match: regex` are POSIX extended regular expressions
 * (regex(7), "ERE"), anchored at both ends, matched byte-wise in the C locale.
 * They are compiled once, by the launcher, into a small position-independent
 * program stored in the policy image; the shim runs it in place with a Pike VM
 * (linear in the text, no backtracking, no allocation, bounded stack).
 *
 * Supported: literals, '.', bracket expressions with ranges, negation and the
 * classes [:alnum:] [:alpha:] [:blank:] [:cntrl:] [:digit:] [:graph:]
 * [:lower:] [:print:] [:punct:] [:space:] [:upper:] [:xdigit:], '*' '+' '?',
 * bounds {m} {m,} {m,n} (n <= 255), alternation '|', groups '( )', the
 * anchors '^' '$' (redundant: matching is anchored anyway) and '\' escapes of
 * special characters.  Not supported (rejected with a message): back
 * references, collating elements [. .] and equivalence classes [= =].
 */

/* Largest compiled program, bytes, and most instructions in one program. */
#define REGEX_MAX_PROGRAM 16384u
#define REGEX_MAX_INSNS 1024u

/*
 * Compiles the NUL-terminated ERE `pattern` into out (cap bytes).
 * Returns 0 and stores the program length in *len, or
 *   -EINVAL: syntax error; msg (msglen bytes) says what and at which byte offset,
 *   -E2BIG:  the program would exceed cap, REGEX_MAX_PROGRAM or REGEX_MAX_INSNS.
 * out may be NULL when cap is 0 (validation only: *len still receives the size).
 */
int regex_compile(const char *pattern, uint8_t *out, size_t cap, size_t *len, char *msg,
		  size_t msglen);

/*
 * Checks that len bytes at prog are a well-formed program as regex_compile()
 * makes them: every opcode known, every operand and jump target inside the
 * program, instruction count within REGEX_MAX_INSNS.  Returns 0 or -EINVAL.
 * A program that passes can be run by regex_match() without reading outside
 * prog.  prog need not be aligned.
 */
int regex_validate(const uint8_t *prog, size_t len);

/*
 * True when the whole of text (textlen bytes, may contain NUL) matches the
 * program.  prog must have passed regex_validate().  No allocation; stack use
 * is bounded (a few KiB); safe in a vfork(2) child and in signal handlers.
 */
bool regex_match(const uint8_t *prog, size_t len, const char *text, size_t textlen);

#endif
