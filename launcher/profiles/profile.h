/* profile.h — built-in agent profiles: what a known agent CLI needs from the sandbox, and what of it must stay the agent's own. */
#ifndef AIRLOCK_PROFILES_PROFILE_H
#define AIRLOCK_PROFILES_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "launcher/sandbox/copies.h"
#include "policy/policy.h"

/*
 * A profile is data (one table, profile.c): how an agent is recognised, the
 * state it keeps under the home directory (writable in the sandbox, created
 * when absent), the files there that run code later (session copies:
 * copies.h), the model API hosts it talks to, the variables holding its key
 * (passed to the agent's own processes and scrubbed from every other one by
 * the shim) and other variables it reads (passed through).  `airlock run`
 * and `airlock check` pick one by --profile NAME|none, else the policy's
 * `profile:` key, else by the program (auto).
 *
 * The rules a profile adds are ordinary allow rules appended to the policy
 * before it is compiled, so the policy's deny and ask rules still win
 * (precedence deny > ask > allow).  They carry no position (line 0) and a
 * reason starting "profile NAME: ", which `airlock check` and the audit log
 * show.
 */
struct profile {
	const char *name;             /* "claude": what --profile and `profile:` say */
	const char *title;            /* "Claude Code", for messages */
	const char *const *programs;  /* basenames that name the agent (as invoked or resolved) */
	const char *const *path_marks; /* substrings of the resolved path that name it
					  ("/@openai/codex/"), NULL-terminated */
	const char *const *state;     /* "~/.claude": directories made writable, created (0700)
					  when absent */
	const struct copy_spec *copies; /* runs-later files inside them; ncopies entries */
	size_t ncopies;
	const char *const *hosts;     /* "api.anthropic.com:443": allowed connections */
	const char *const *keys;      /* its API key variables: the agent's processes only */
	const char *const *passthrough; /* other variables it reads (base URLs): passed through */
	const char *const *agent_only; /* "~/.claude/.credentials.json": files only the agent's
					  own processes read (its sign-in tokens); NULL: none */
	/* the agent's helper executables (Codex's native binary, which its Node launcher
	   execs), found from the resolved program: allowed to run, and the agent's own */
	int (*helpers)(const char *resolved, char **out, size_t cap);
};

/* Every built-in profile, NULL-terminated.  Static storage. */
extern const struct profile *const profile_table[];

/* The profile named name, or NULL (none, auto and unknown names alike). */
const struct profile *profile_find(const char *name);

/*
 * The profile whose agent the command is: argv0 as the user typed it,
 * program its absolute path (as run resolves it), resolved its realpath(3)
 * (or NULL).  A program that is an interpreter (node, bun, deno, python*)
 * is recognised by its first argument that is not an option instead
 * (`node .../codex.js`).  NULL when none matches.
 */
const struct profile *profile_detect(const char *argv0, const char *program,
				     const char *resolved, char *const *argv);

/* How a profile was chosen, for messages: "--profile", the policy, or "detected". */
enum profile_origin { PROFILE_NONE, PROFILE_OPTION, PROFILE_POLICY, PROFILE_DETECTED };

/* The profile chosen for a session, and what it added. */
struct profile_choice {
	const struct profile *profile; /* NULL: none */
	enum profile_origin origin;
	char **agent_exes;  /* owned, NULL-terminated: the agent's executables (as run, resolved,
			       helpers), the processes that keep its key */
	size_t nagent_exes;
	size_t first_helper; /* agent_exes[first_helper..] are the profile's helpers */
};

/*
 * Chooses the profile: option (--profile NAME|none|auto, or NULL), else
 * p->profile, else auto-detection from argv (argv[0] resolved to program;
 * NULL argv: nothing to detect).  An unknown name is an error: in *err
 * as p's file:line:column for the policy's key, or without position for
 * the option.  Returns 0 (c filled; c->profile may be NULL) or -1.
 */
int profile_choose(const char *option, const struct policy *p, const char *program,
		   char *const *argv, struct profile_choice *c, struct policy_error *err);

/*
 * Merges c->profile into p before it is compiled: allow rules (write of
 * each state path, connect to each host, exec of each helper), sandbox.write
 * entries for the state paths, env_passthrough names for the keys and the
 * other variables.  Entries p has already are not added twice.  Returns 0,
 * or -ENOMEM with *err filled.
 */
int profile_apply(const struct profile_choice *c, struct policy *p, struct policy_error *err);

/*
 * The variables that tell the shim what to scrub (preload/shim.c):
 * "AIRLOCK_AGENT_KEYS=NAME:NAME..." and "AIRLOCK_AGENT_EXE=PATH:PATH...",
 * malloc'ed into keys and exes; both NULL when the profile names no key.
 * Paths holding ':' are left out (the agent then loses its key: fail
 * safe).  Returns 0 or -ENOMEM.
 */
int profile_scrub_env(const struct profile_choice *c, char **keys, char **exes);

/*
 * The session's agent mark for the shim (preload/shim.c), written to path
 * (created 0444, must not exist): every profile's agent-only files (the
 * session's agent's and the other known agents') with "~/" made home, one a
 * line, and each one's realpath(3) too when it differs.
 * Its presence makes the shim refuse other processes' /proc/PID/environ
 * and mem, and these files, to every process but the agent's own.  Nothing
 * is written without a profile.  Returns 0 or -errno.
 */
int profile_write_mark(const struct profile_choice *c, const char *home, const char *path);

/* A one-line description: "claude (Claude Code, detected from the program)" into buf. */
void profile_describe(const struct profile_choice *c, char *buf, size_t cap);

/* Frees what c owns; c is empty after.  Accepts an empty c. */
void profile_choice_release(struct profile_choice *c);

/*
 * Creates each missing directory of path (absolute) with mode 0700, as
 * mkdir -p.  Returns 0, or -errno (in *failed, cap bytes: the directory
 * that could not be made).
 */
int profile_mkdirs(const char *path, char *failed, size_t cap);

#endif
