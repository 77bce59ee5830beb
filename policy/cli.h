/*
 * cli.h — the command-line tools command rules know: their global options
 * (those that may come before the subcommand) and module runners
 * (`python3 -m pip`), so that `git -c k=v -C dir commit` meets the rules
 * written for `git commit` and `python3 -m pip install x` those for
 * `pip install x`.  One table, as data (policy/cli.c); the image half of
 * the policy engine: allocation-free, async-signal-safe, usable in a
 * vfork(2) child (the shim runs it).
 */
#ifndef AIRLOCK_CLI_H
#define AIRLOCK_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* How an option takes its value: cli_option.how, a mask. */
#define CLI_BARE 0x01u   /* valid without a value ("--no-pager", "-q") */
#define CLI_SEP 0x02u    /* the value is the next word ("-C dir", "--git-dir dir") */
#define CLI_EQ 0x04u     /* the value follows '=' in the same word ("--git-dir=dir", pflag's "-n=ns") */
#define CLI_ATT 0x08u    /* one-letter option, the value attached ("-mpip", "-nkube-system") */
#define CLI_MODULE 0x10u /* the value names the program that runs the rest: python's -m */
#define CLI_ENDS 0x20u   /* ends the options; the kept arguments start at it: python's -c */

/* One option: its name as typed, dashes included ("-C", "--git-dir"). */
struct cli_option {
	const char *name;
	unsigned char how; /* CLI_* bits */
};

/* Properties of a program's parser: cli_program.flags, a mask. */
#define CLI_P_VERSIONED 0x01u /* the name may carry a version: python3, python3.11, pip3 */
#define CLI_P_PLUS 0x02u      /* a first argument "+NAME" picks a toolchain (rustup's cargo +nightly) */
#define CLI_P_CLUSTER 0x04u   /* one-letter options combine: "-vq", "-um pip" (getopt, optparse, pflag, clap) */
#define CLI_P_NOPT 0x08u      /* npm's parser (nopt): "--no-FLAG" negates a flag; a flag followed by
			       * "true" or "false" takes it as its value, so that is not normalized */

#define CLI_MAX_NAMES 3

/*
 * One program: the basenames it answers to, its options sorted by strcmp(3)
 * on their names, each name once, and where the list comes from.
 */
struct cli_program {
	const char *names[CLI_MAX_NAMES]; /* [0] the name; then aliases; unused slots NULL */
	unsigned flags;                   /* CLI_P_* */
	const struct cli_option *options;
	size_t noptions;
	const char *source; /* the documentation the options were taken from */
};

/* The table: every program, names distinct across it.  Static storage. */
extern const struct cli_program cli_programs[];
extern const size_t cli_nprograms;

/* Words before the subcommand looked at, at most: more and nothing is normalized. */
#define CLI_MAX_WORDS 64

/* Module runners followed, at most (`python -m pip` is one). */
#define CLI_MAX_STEPS 3

/*
 * The normal form of a command: the program that runs (the basename given,
 * or the module `-m` names) and the arguments kept (those from the
 * subcommand on, the global options before it removed).
 */
struct cli_norm {
	const char *program; /* program_len bytes, not NUL-terminated; points into base or the arguments */
	size_t program_len;
	bool module;  /* program is a module `-m` named, not the program invoked */
	size_t start; /* argv index of the first argument kept (argv[0] is the program); may be argc */
	size_t offset; /* byte offset of that argument in argv[1..] joined by single spaces; the
			* joined length + 1 when no argument is kept */
};

/*
 * The table's row for basename base (base_len bytes), or NULL.  A
 * CLI_P_VERSIONED row also answers to its names followed by a version
 * made of digits and dots that starts with a digit ("python3.11").
 */
const struct cli_program *cli_find(const char *base, size_t base_len);

/*
 * Normalizes the command base (a basename, base_len bytes) argv
 * (NULL-terminated, argv[0] ignored; NULL = no arguments) into *out.
 * Returns true when a normal form exists that differs from the command as
 * given: the program is in the table and its global options (and, for a
 * module runner, the module that runs) were removed up to a subcommand.
 * Returns false, *out untouched, for a program not in the table, and
 * whenever the options cannot be read for sure: an option the table does
 * not list, a value-taking option missing its value, "--", no subcommand,
 * more than CLI_MAX_WORDS words before it, a module name that is not
 * dotted ASCII identifiers.  Never guesses.  Allocates
 * nothing; async-signal-safe.
 */
bool cli_normalize(const char *base, size_t base_len, const char *const *argv,
		   struct cli_norm *out);

/*
 * As cli_normalize() on arguments already joined by single spaces (args_len
 * bytes at args, "" for none), split back at every space: an argument that
 * contains a space is read as two.  Callers that hold the real argv must use
 * cli_normalize(); this one serves policy_decide_exec_joined().
 */
bool cli_normalize_joined(const char *base, size_t base_len, const char *args, size_t args_len,
			  struct cli_norm *out);

#endif
