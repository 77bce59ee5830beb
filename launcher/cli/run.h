/*
 * run.h — `airlock run` as its files share it: one session's state and its
 * phases, in the order cmd_run() (cmd_run.c) runs them:
 *
 *   prepare   run_prepare.c   the policy, the program, the session directory,
 *                             the audit log, the agent's environment, the
 *                             kernel layer built by the sandbox backend
 *   human     run_human.c     the control socket, the TUI or the one-line
 *                             prompt's terminal
 *   spawn     run_spawn.c     signals blocked, the sandbox started (through
 *                             the egress proxy's network namespace or a fork)
 *   serve     run_serve.c     the loop: approvals, control clients, the proxy,
 *                             limits and signals, until the agent ends
 *   end       cmd_run.c       the last asks, the clients told, the log's end
 *
 * Internal to launcher/cli.  Phases that can fail return -1 to go on, or the
 * exit status `run` ends with (the message said on stderr already).
 */
#ifndef AIRLOCK_CLI_RUN_H
#define AIRLOCK_CLI_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <termios.h>

#include "launcher/approvals/hub.h"
#include "launcher/cli/launcher.h"
#include "launcher/profiles/profile.h"
#include "launcher/sandbox/backend.h"
#include "launcher/sandbox/netns.h"
#include "launcher/sandbox/open_gate.h"
#include "launcher/sandbox/session.h"

/* Exit statuses of `run` itself; otherwise the agent's (DESIGN.md step 10). */
enum {
	RUN_EXIT_TIMEOUT = 124,
	RUN_EXIT_FAILED = 125,
	RUN_EXIT_NOT_EXECUTABLE = 126,
	RUN_EXIT_NOT_FOUND = 127,
};

/* The command line.  Strings borrowed from argv. */
struct run_opts {
	const char *policy, *workspace, *bwrap, *log;
	const char *profile; /* --profile NAME|none|auto, or NULL */
	bool headless, default_allow, no_sandbox, trace, no_tui;
	bool require_undo, no_checkpoint; /* --require-undo, --no-checkpoint */
	char **env; /* owned array of borrowed strings, NULL-terminated */
	size_t nenv;
	char **cmd; /* PROGRAM ARG..., borrowed from argv; NULL for `airlock serve` */
	/* `airlock serve` (cmd_serve.c): no program and no sandbox; the session ends on a signal */
	bool serve;
	const char *dir; /* serve --dir DIR: the fixed path (a symlink) to the session, or NULL */
};

/* Who answers asks: nobody (--headless, no terminal), the one-line prompt, or the TUI. */
enum run_ui { UI_HEADLESS, UI_PROMPT, UI_TUI };

/* Everything a running session holds, released by run_release() (cmd_run.c). */
struct run {
	struct run_opts o;
	struct policy_source src;
	struct session_dir session;
	struct audit_log *log;
	struct approvals *approvals;
	char *program; /* owned */
	struct profile_choice profile; /* the agent profile in effect (launcher/profiles) */
	char *scrub_keys, *scrub_exes; /* owned: the shim's AIRLOCK_AGENT_KEYS / _EXE, or NULL */
	char *shim;    /* owned */
	/* the Landlock ruleset (launcher/sandbox/landlock.h): its helper (owned, NULL: none) and
	   the ABI it applies, or 0 and why there is none (for the log's session_start) */
	char *landlock;
	int landlock_abi;
	char landlock_why[256];
	char **agent_env;
	/* the kernel layer: NULL sandbox with --no-sandbox */
	const struct sandbox_backend *backend;
	struct sandbox *sandbox;
	struct copies *copies; /* the session copies of runs-later paths (copies.h); NULL with
				  --no-sandbox */
	int seccomp_fd;
	int sigfd;
	pid_t child; /* what was forked: bwrap (or the agent itself with --no-sandbox) */
	/* network: proxy — the sandbox's own network namespace and the egress proxy */
	bool proxy_on;
	struct netns ns;
	struct proxy *proxy;
	int resolv_fd;
	int hosts_fd; /* the sandbox's own /etc/hosts (network: proxy and none), or -1 */
	/* deny-read rules for files that appear during the session (open_gate.h); NULL: off */
	struct open_gate *gate;
	char gate_off[192]; /* why it is off, for the log: "off: ..." */
	/* the workspace's checkpoint (launcher/checkpoint/supervise.h); NULL: none */
	struct checkpoint *checkpoint;
	bool checkpoint_failed; /* its worker failed mid-session: the agent was ended */
	char *checkpoint_message; /* owned: what the user hears of it at the end, or NULL */
	char checkpoint_off[480]; /* why there is none, for the log: "off: ..." */
	/* the human side: the control socket, and the TUI with the agent's terminal */
	enum run_ui ui;
	struct control *control;
	int tty_master, tty_slave; /* UI_TUI, UI_PROMPT: the agent's pseudo-terminal */
	pid_t tui;
	struct termios saved_tty;
	bool tty_saved;
	struct hub hub; /* the log, the control socket and the approvals wired together */
};

/* ---- cmd_run.c ------------------------------------------------------------------------- */

/*
 * Nothing held yet (every descriptor -1), no descriptor the caller left open
 * kept across exec, SIGPIPE ignored.
 */
void run_init(struct run *r);

/*
 * The session from r->o (parsed) and r->ui (chosen) on: prepare, the human
 * side, the log's start, the approvals, the agent (none with r->o.serve),
 * the loop, the end; everything released.  on_tty: stdin and stdout are a
 * terminal.  Returns the exit status (run.h's RUN_EXIT_*, or the agent's;
 * serve: 0 when a signal or a control client's quit ended it).
 */
int run_session(struct run *r, bool on_tty);

/* ---- cmd_serve.c ----------------------------------------------------------------------- */

/*
 * serve: the session directory's `serve` file (SERVE_MARK_NAME: the lines
 * "LD_PRELOAD=SHIM" and "AIRLOCK_DIR=DIR", what `airlock env` prints), and
 * with --dir the symlink r->o.dir to the session directory (an old one of a
 * session that is gone replaced; anything else there refused).  Called by
 * run_prepare() once the session directory exists.  -1 to go on, or the
 * exit status (said on stderr).
 */
int serve_prepare(struct run *r);

/* serve: the session is up: its id, directory and the variables that join it, on stderr. */
void serve_started(const struct run *r);

/* serve: the --dir symlink removed when it still points at this session.  Accepts none made. */
void serve_release(struct run *r);

/* ---- run_prepare.c --------------------------------------------------------------------- */

/*
 * Loads the policy, checks the limits and the program, finds the sandbox
 * backend's program (r->backend, set by the caller), makes the session
 * directory and opens the audit log, builds the agent's environment and the
 * kernel layer; *rep says what the sandbox masked.
 */
int run_prepare(struct run *r, struct sandbox_report *rep);

/* ---- run_human.c ----------------------------------------------------------------------- */

/* The control socket (every session), and on a terminal the agent's pseudo-terminal. */
int run_start_control(struct run *r);

/* Forks the TUI (UI_TUI) on the user's terminal, attached through a socketpair.  0 or -errno. */
int run_start_tui(struct run *r, const sigset_t *old);

/* UI_PROMPT: the user's terminal in raw mode (run_end_control() restores it).  0 or -errno. */
int run_raw_terminal(struct run *r);

/* The user's terminal changed size: so does the agent's (UI_PROMPT). */
void run_resize_agent(const struct run *r);

/* The counts attached clients show, sent when they changed. */
void run_push_status(struct run *r);

/* The session is over (status): the clients hear it, the TUI gives the terminal back. */
void run_end_control(struct run *r, int status);

/* ---- run_spawn.c ----------------------------------------------------------------------- */

/* Blocks the signals the loop reads from r->sigfd; *old: the mask before.  0 or -errno. */
int run_block_signals(struct run *r, sigset_t *old);

/*
 * Starts the agent: in the sandbox through the network namespace and the
 * egress proxy (network: proxy), in it through a fork, or alone with
 * --no-sandbox.  old: the signal mask the child gets back.  0 or -errno.
 */
int run_spawn(struct run *r, const sigset_t *old);

/* ---- run_serve.c ----------------------------------------------------------------------- */

/*
 * Serves the session until the agent ends: returns its exit status, or
 * RUN_EXIT_TIMEOUT (a time limit ended it) or RUN_EXIT_FAILED (the sandbox
 * never stood, or its status is unknown).
 */
int run_serve(struct run *r);

#endif
