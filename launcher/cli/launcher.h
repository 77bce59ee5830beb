/* launcher.h — declarations shared by the files of the `airlock` command. */
#ifndef AIRLOCK_LAUNCHER_H
#define AIRLOCK_LAUNCHER_H

#include <stddef.h>
#include <stdio.h>

#include "policy/policy.h"

#define AIRLOCK_VERSION "0.1.0"

/* Exit statuses of airlock's own subcommands (`run` passes the agent's through). */
enum airlock_exit {
	AIRLOCK_EXIT_OK = 0,      /* success; `check`: allow */
	AIRLOCK_EXIT_FAILURE = 1, /* any other failure (I/O, memory, refusing to overwrite) */
	AIRLOCK_EXIT_USAGE = 2,   /* bad command line, or a policy that does not load */
	AIRLOCK_EXIT_ASK = 3,     /* `check`: ask */
	AIRLOCK_EXIT_DENY = 4,    /* `check`: deny */
	AIRLOCK_EXIT_MAX
};

/* One subcommand: the table in main.c holds them all. */
struct airlock_command {
	const char *name;
	/* argv[0] is the subcommand's name; returns an enum airlock_exit value. */
	int (*run)(int argc, char **argv);
	const char *summary; /* one line for `airlock --help` */
	const char *usage;   /* the full text of `airlock NAME --help` */
};

/* The subcommands: each takes its own argv (argv[0] its name) and returns the exit status. */
int cmd_run(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_suggest(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_undo(int argc, char **argv);
extern const char cmd_run_usage[];
extern const char cmd_init_usage[];
extern const char cmd_check_usage[];
extern const char cmd_compile_usage[];
extern const char cmd_doctor_usage[];
extern const char cmd_log_usage[];
extern const char cmd_suggest_usage[];
extern const char cmd_attach_usage[];
extern const char cmd_ps_usage[];
extern const char cmd_serve_usage[];
extern const char cmd_env_usage[];
extern const char cmd_diff_usage[];
extern const char cmd_undo_usage[];

/*
 * cmd_undo.c: prints the checkpoints as `airlock undo --list` does (catalog.h's
 * ckpt_list_print()) to f; for `airlock ps --all`.  Returns 0 or -errno.
 */
int cmd_undo_list_checkpoints(FILE *f);

/* Prints "airlock: " + the formatted message + a newline to stderr. */
void airlock_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True when arg is "-h" or "--help". */
int airlock_is_help(const char *arg);

/*
 * Matches "--NAME VALUE" or "--NAME=VALUE" (name includes the dashes) at
 * argv[*i]: on a match stores VALUE (borrowed from argv), advances *i past a
 * separate VALUE and returns 1; returns 0 when argv[*i] is another word, -1
 * when the option is last with no value.
 */
int airlock_option_value(int argc, char **argv, int *i, const char *name, const char **value);

/* ---- policy_source.c: find, load and compile the policy ------------------- */

/* What to load, and what patterns are relative to. */
struct policy_source_options {
	const char *policy_path; /* --policy FILE, or NULL to search */
	const char *workspace;   /* --workspace DIR, or NULL for the current directory */
	/* called once the policy is loaded, before it is compiled (an agent profile's
	   rules merged in), or NULL; returns 0, or -1 with *err filled (a bad policy) */
	int (*amend)(struct policy *p, void *arg, struct policy_error *err);
	void *amend_arg;
};

/* A loaded, compiled policy and the context it was compiled against. */
struct policy_source {
	char *name;              /* owned; the file loaded, or "<default>" for the built-in */
	char *home;              /* owned; absolute home directory */
	char *workspace;         /* owned; realpath(3) of the workspace */
	struct policy *policy;   /* owned; as loaded */
	void *image;             /* owned; policy_compile() output */
	size_t image_size;
	const struct policy_image *img; /* points into image */
};

/* Why policy_source_open() failed; selects the exit status and the message form. */
enum policy_source_status {
	POLICY_SOURCE_OK = 0,
	POLICY_SOURCE_BAD_POLICY = 1, /* unreadable or invalid policy: err holds file:line:column */
	POLICY_SOURCE_BAD_CONTEXT = 2, /* workspace or home unusable: err.message says why */
	POLICY_SOURCE_NO_MEMORY = 3,
	POLICY_SOURCE_STATUS_MAX
};

/*
 * Finds the policy (opt->policy_path; else WORKSPACE/.airlock/policy.yaml;
 * else $XDG_CONFIG_HOME/airlock/policy.yaml, XDG_CONFIG_HOME defaulting to
 * ~/.config; else the built-in default, named "<default>"), loads it and
 * compiles it with home = $HOME (or the passwd entry) and workspace =
 * realpath(opt->workspace or "."), both without a trailing '/'.
 * A candidate file that exists but cannot be read is an error, not skipped.
 * On POLICY_SOURCE_OK *src is filled and owns everything (release it with
 * policy_source_release()); otherwise *src is empty and *err says what went
 * wrong (render it with policy_error_format()).
 */
enum policy_source_status policy_source_open(const struct policy_source_options *opt,
					     struct policy_source *src, struct policy_error *err);

/*
 * The home directory "~/" stands for, as policy_source_open() finds it:
 * $HOME when absolute, else the passwd entry's; without a trailing '/'.
 * malloc'ed; NULL with errno ENOENT (no home) or ENOMEM.
 */
char *policy_source_home(void);

/* Frees everything src owns and empties it.  Accepts an empty source. */
void policy_source_release(struct policy_source *src);

/*
 * Prints err to stderr as "file:line:column: message" (the form compilers
 * use, so editors can jump to it) and returns the exit status for status.
 */
int policy_source_report(enum policy_source_status status, const struct policy_error *err);

/* ---- program.c: the program a command name runs ---------------------------- */

/*
 * Returns the program execve(2) would run for cmd, as the shim sees it:
 * path_program() (core/pathsearch.h) along $PATH — cmd made absolute and
 * lexically normalised, searched with the shim's own search when it holds
 * no '/', and cmd itself when that finds nothing.  Returns a malloc'ed
 * string, or NULL with errno ENOMEM, ENAMETOOLONG or getcwd(2)'s errors.
 */
char *canon_program(const char *cmd);

#endif
