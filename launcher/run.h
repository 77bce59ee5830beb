/* run.h — the parts of `airlock run`: sandbox setup, seccomp filter, audit log, approvals, session. */
#ifndef AIRLOCK_RUN_H
#define AIRLOCK_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "policy/policy.h"

/* Where the session directory appears inside the sandbox (AIRLOCK_DIR there). */
#define RUN_SANDBOX_DIR "/run/airlock"
/* The shim's file name in the session directory. */
#define RUN_SHIM_NAME "airlock-preload.so"

/* ---- sandbox.c: the bubblewrap command line, built as typed setup operations ---- */

/* What the sandbox is built from.  Strings are borrowed. */
struct sandbox_config {
	const struct policy *policy;    /* sandbox.read / write / network, deny-read rules */
	const struct policy_image *img; /* decides which existing paths deny-read rules mask */
	const char *home;               /* absolute */
	const char *workspace;          /* absolute, canonical: bound read-write */
	const char *cwd;                /* absolute: the agent starts here (inside the workspace or not) */
	const char *session_dir;        /* host path, bound read-only at RUN_SANDBOX_DIR */
	const char *shim_path;          /* host path of the shim, bound read-only over
					   RUN_SANDBOX_DIR/RUN_SHIM_NAME (the session dir may be noexec) */
	const char *policy_file;        /* host path of the policy file, or NULL (built-in) */
	const char *log_file;           /* absolute host path of the audit log (bound read-only
					   over itself when it is writable inside), or NULL */
	bool unprivileged;              /* not root: --unshare-user */
	bool own_tty;                   /* the agent runs on a pseudo-terminal airlock owns (the
					   TUI's): no --new-session, it keeps it as its terminal */
	int seccomp_fd;                 /* fd for --seccomp (inherited by bwrap), or -1 */
	bool netns;                     /* bwrap starts inside the sandbox's own network namespace
					   (network: proxy): no --unshare-net */
	int resolv_fd;                  /* with netns: the resolv.conf text for --ro-bind-data, or -1 */
	const char *resolv_path;        /* where /etc/resolv.conf really is (it may be a symlink) */
	char *const *env;               /* NAME=VALUE, NULL-terminated: the agent's whole environment */
	const char *program;            /* absolute path of the agent's program */
	char *const *argv;              /* the agent's argv, NULL-terminated (argv[0] as given) */
};

/* What sandbox_build() found worth telling the user. */
struct sandbox_report {
	unsigned masks;        /* paths masked because a deny-read rule or the mandatory list names them */
	bool masks_capped;     /* the bounded walk stopped early: more may exist */
	unsigned walked;       /* directory entries examined */
	bool network_rules_ignored; /* network: none (or proxy, until the proxy lands) with network rules */
};

/*
 * Builds the argv for bwrap_path (NULL-terminated, malloc'ed; free with
 * sandbox_argv_free()).  Returns 0, or -errno with a message in err.
 */
int sandbox_build(const struct sandbox_config *cfg, const char *bwrap_path, char ***argv_out,
		  struct sandbox_report *rep, char *err, size_t errlen);

/* Frees an argv from sandbox_build().  Accepts NULL. */
void sandbox_argv_free(char **argv);

/* ---- seccomp.c: the seccomp filter, as named syscall groups ---- */

struct seccomp_options {
	bool process_spawn; /* false: fork, vfork, non-thread clone fail with EPERM, clone3 with ENOSYS */
};

/*
 * Builds the filter with libseccomp and returns a file descriptor holding
 * its BPF program (for bwrap --seccomp FD; not close-on-exec, offset 0), or
 * -errno with a message in err.
 */
int seccomp_filter_fd(const struct seccomp_options *opt, char *err, size_t errlen);

/* The names of the groups the filter refuses, e.g. "ptrace", "mount", NULL-terminated. */
const char *const *seccomp_group_names(void);

/* ---- audit.c: the audit log (DESIGN.md step 9), JSON Lines ---- */

struct audit_log;

/* One audit event.  NULL / -1 fields are left out of the line. */
struct audit_event {
	const char *source;        /* "shim", "proxy", "launcher" */
	pid_t pid;                 /* 0: none */
	const char *command;       /* exec: the program */
	const char *const *args;   /* exec: argv[1..] */
	size_t nargs;
	const char *file;          /* open: canonical path */
	const char *action;        /* open: read / write / exec */
	const char *network_dst;   /* connect: host:port */
	const char *decision;      /* allow / deny / ask */
	const char *decided_by;    /* policy / human / session / default / timeout */
	const char *rule;          /* "file:line", NULL for the default */
	const char *reason;
	long response_time_ms;     /* asks: how long the answer took; -1: none */
	const char *message;       /* launcher events: what happened */
	bool truncated;            /* exec: argv was cut to fit the channel */
};

/*
 * Opens (appends to) the log at path, or at the default
 * $XDG_STATE_HOME/airlock/logs/YYYY-MM-DD.jsonl when path is NULL (parent
 * directories created 0700).  session_id goes into every line.  Returns NULL
 * with a message in err.
 */
struct audit_log *audit_open(const char *path, const char *session_id, char *err, size_t errlen);

/*
 * Appends one event as one JSON object line (id, timestamp RFC 3339 UTC with
 * ms, session_id, then the event's fields) and flushes it.  0 or -errno.
 * A failure is sticky (audit_error()): the part of the line written is taken
 * back when no other session appended since, and no later event is written
 * (each returns the first error), so the log ends with its last whole line.
 */
int audit_write(struct audit_log *log, const struct audit_event *ev);

/*
 * 0 while every event was written whole, else the first failure (-errno:
 * -ENOSPC for a full disk, -EFBIG, -EIO, -ENOMEM...).  The session must
 * then stop acting: nothing more it does would be recorded.
 */
int audit_error(const struct audit_log *log);

/* Told each line audit_write() wrote: line (len bytes, no newline; not NUL-terminated), valid during the call. */
typedef void (*audit_tap_fn)(void *arg, const char *line, size_t len);

/*
 * Calls fn(arg, ...) after every line written (also when the write failed:
 * the live view still sees it), for the control socket's activity stream.
 * fn NULL: none.
 */
void audit_set_tap(struct audit_log *log, audit_tap_fn fn, void *arg);

/* The log's path.  Static for the log's lifetime. */
const char *audit_path(const struct audit_log *log);

/* Closes the log.  Accepts NULL. */
void audit_close(struct audit_log *log);

/*
 * The default log path for the local day of `when`:
 * $XDG_STATE_HOME/airlock/logs/YYYY-MM-DD.jsonl (~/.local/state when
 * XDG_STATE_HOME is unset or relative).  0 or -errno (-ENOENT: no home).
 */
int audit_default_path(char *buf, size_t cap, time_t when);

/* ---- approve.c: the channel server, the ask queue and the human's answers ---- */

enum approve_mode {
	APPROVE_HEADLESS = 0, /* asks answered at once: deny, or allow with default_allow */
	APPROVE_PROMPT = 1,   /* asks shown on /dev/tty, answered y / n / a / b */
};

struct control;

/*
 * Bounds on what the agent can make the launcher hold.  An ask past one is
 * refused at once (deny, decided_by default, logged with why); a connection
 * past APPROVE_MAX_CLIENTS is closed at once, which the shim takes as a
 * refusal.  A real agent waits on one ask per thread; these are far above it.
 */
#define APPROVE_MAX_CLIENTS 1024          /* shim connections at once */
#define APPROVE_MAX_ASKS 256              /* asks waiting at once, in the session */
#define APPROVE_MAX_ASKS_PER_PROCESS 16   /* asks waiting at once, from one process */
#define APPROVE_MAX_ASK_BYTES (4u << 20)  /* bytes of the waiting asks' messages */

struct approve_options {
	enum approve_mode mode;
	bool default_allow;             /* headless: allow asks instead of denying them */
	unsigned ask_timeout;           /* seconds an ask may wait before it is denied */
	const struct policy_image *img; /* describes rules for the log and the prompt */
	struct audit_log *log;          /* borrowed */
	struct control *control;        /* borrowed, or NULL: asks are shown to its attached
					   clients, and wait for them while one is attached */
	int pty;                        /* APPROVE_PROMPT: the master side of the agent's terminal
					   (borrowed), relayed to and from /dev/tty around the
					   prompts; -1: the agent shares the terminal */
};

struct approvals;

/*
 * Serves the channel listening on listen_fd (borrowed): accepts shims,
 * logs their events, queues their asks and answers them per opt.
 * Returns NULL with a message in err.
 */
struct approvals *approve_new(int listen_fd, const struct approve_options *opt, char *err,
			      size_t errlen);

/* An fd that is readable when approve_dispatch() has work (for poll(2)). */
int approve_fd(const struct approvals *a);

/* Milliseconds until the oldest ask times out, or -1 when none waits. */
int approve_timeout_ms(const struct approvals *a);

/*
 * Does the work pending now without blocking: new shims, messages, answers,
 * timeouts.  Returns how many sources had work (0: nothing was pending).
 */
int approve_dispatch(struct approvals *a);

/* Told the answer to an ask made with approve_ask_connect(): allow or deny, and who decided. */
typedef void (*approve_done_fn)(void *arg, enum policy_decision d, const char *decided_by);

/*
 * Queues an ask made in the launcher itself — the proxy's, for a connection
 * to host:port it holds while waiting — under the same prompt, session
 * memory, headless rule and ask_timeout as a shim's.  done(arg, ...) is
 * called exactly once (by approve_dispatch(), or with deny by
 * approve_free()); possibly before this returns, when memory or the headless
 * rule answers at once.  The caller logs the outcome.  0 or -errno.
 */
int approve_ask_connect(struct approvals *a, const char *host, unsigned port, int32_t rule,
			approve_done_fn done, void *arg);

/*
 * Answers the waiting ask id (control.h's ids) with d, decided by a human;
 * remember_it: the same request gets d for the rest of the session (the
 * TUI's A and B).  0, or -ENOENT when no ask id waits (already answered).
 */
int approve_answer(struct approvals *a, uint64_t id, enum policy_decision d, bool remember_it);

/*
 * The number of clients attached to the control socket changed: when
 * nobody is left to answer (no client, no prompt), every waiting ask takes
 * the headless rule at once.
 */
void approve_attached(struct approvals *a);

/*
 * APPROVE_PROMPT with a pty: copies what the agent wrote and the relay has
 * not shown yet to the terminal (the agent ended).  No-op otherwise.
 */
void approve_drain_agent(struct approvals *a);

/* Answers every waiting ask with deny, decided by default (the session is ending), and logs them.  Accepts NULL. */
void approve_end(struct approvals *a);

/* approve_end(), then frees everything.  Accepts NULL. */
void approve_free(struct approvals *a);

/* Counts of decisions logged so far, for the end-of-session summary. */
struct approve_counts {
	unsigned long allow, deny, asked;
	unsigned long pending; /* asks waiting now */
};
void approve_counts(const struct approvals *a, struct approve_counts *out);

/* ---- agent_tty.c: the pseudo-terminal the agent runs on under the TUI ---- */

/*
 * Opens a pseudo-terminal pair (openpty(3)) with like_fd's terminal modes
 * and window size when like_fd is a terminal; both ends close-on-exec.
 * 0 or -errno.
 */
int agent_tty_open(int *master, int *slave, int like_fd);

/*
 * In a child about to exec: a new session whose controlling terminal is
 * slave (setsid(2), TIOCSCTTY in ioctl_tty(2)), on stdin, stdout and stderr
 * (dup2 clears close-on-exec).  0 or -errno.
 */
int agent_tty_take(int slave);

/*
 * Whether the TUI can run on fd: it is a terminal and $TERM names a
 * terminfo entry that can address the cursor (setupterm(3X)).
 */
bool agent_tty_tui_usable(int fd);

/* ---- session.c: the session directory ---- */

/* A session: its id and private directory, which the sandbox sees read-only at RUN_SANDBOX_DIR. */
struct session {
	char id[17];      /* 16 lowercase hex digits, random */
	char *dir;        /* owned; host path, mode 0700 */
	char *image_path; /* owned; dir/policy.img, 0444 */
	char *shim_mount; /* owned; dir/airlock-preload.so: an empty file the real shim is bound over */
	char *channel;    /* owned; dir/channel, the approval socket */
	char *control;    /* owned; dir + ".control": the control socket's path, beside the
			     directory so the sandbox cannot see it (control.h); made by control_new() */
	int channel_fd;   /* listening socket (non-blocking, close-on-exec), or -1 */
};

/*
 * Creates the session directory under control_base() — $XDG_RUNTIME_DIR/airlock/
 * (root: /run/airlock/; neither usable: /tmp/airlock-UID/, which must be
 * ours and 0700) — writes the image (size bytes) as policy.img, makes the shim's mount
 * point and listens on the channel.  Returns 0, or -errno with a message in
 * err (everything made so far removed).
 */
int session_create(struct session *s, const void *image, size_t size, char *err, size_t errlen);

/* Removes the directory and everything in it, closes the channel.  Accepts an empty session. */
void session_destroy(struct session *s);

/*
 * Removes what sessions whose launcher died without cleaning up (kill -9)
 * left in base (control_base()): each session directory whose launcher.pid
 * names a process that no longer exists (kill(2) with signal 0 fails with
 * ESRCH), with its control socket, and each control socket whose session
 * directory is gone.  A directory without a readable launcher.pid (one being
 * made) or whose launcher runs, even as another user (EPERM), stays.
 * session_create() calls it; with cmd (`airlock ps`), what is removed is
 * also said on stderr ("airlock: CMD: removed the leftovers of session ...").
 */
void session_sweep_stale(const char *base, const char *cmd);

/*
 * The shim to preload: $AIRLOCK_SHIM, else airlock-preload.so next to the
 * running airlock binary.  Returns a malloc'ed absolute path, or NULL with a
 * message in err when it does not exist.
 */
char *session_find_shim(char *err, size_t errlen);

#endif
