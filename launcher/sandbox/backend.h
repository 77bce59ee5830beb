/*
 * backend.h — the kernel layer's builder behind one small interface, so that
 * another platform's sandbox (macOS sandbox-exec with a Seatbelt profile,
 * DESIGN.md) is a second implementation of it and not a fork of `airlock run`.
 * bubblewrap (bwrap.c) is the first.
 *
 * `airlock run` uses a backend in this order:
 *
 *   probe     once, while preparing: does this machine give the sandbox?
 *   build     the sandbox_config (sandbox.h) -> the command that starts the
 *             agent inside it, and a report of what was masked
 *   command   just before the fork: what to execve(2)
 *   spawned   in the launcher, after the fork
 *   held, release
 *             with cfg->hold: the sandbox built and waiting before its agent
 *             (the launcher marks its mounts, open_gate.h), then let go
 *   ready_fd, ready
 *             in the loop: the sandbox saying it stands (and who its agent is)
 *   agent     whenever a signal is forwarded
 *   free      at the end
 *
 * It holds only what `run` needs.  The seccomp filter, the network namespace
 * and the agent's environment are made by `run` and handed over in the
 * config; a backend that cannot apply one of them fails build() with a
 * message, never silently (fail closed).
 */
#ifndef AIRLOCK_SANDBOX_BACKEND_H
#define AIRLOCK_SANDBOX_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "launcher/sandbox/sandbox.h"

/* One session's sandbox: the backend's own state, from probe() to free(). */
struct sandbox;

/*
 * What starts the sandbox: execve(path, argv, envp), in a child that keeps
 * the descriptors the backend left inheritable (and the config's).  Borrowed
 * from the sandbox: valid until spawned() or free().
 */
struct sandbox_exec {
	const char *path;
	char *const *argv;
	char *const *envp;
};

struct sandbox_backend {
	const char *name; /* for messages and the log: "bubblewrap" */

	/*
	 * What this machine gives: finds the backend's program (given: the
	 * one the user named, e.g. `--bwrap PATH`, or NULL to search for it).
	 * Returns a new sandbox, or NULL with a message in err naming the fix.
	 */
	struct sandbox *(*probe)(const char *given, char *err, size_t errlen);

	/*
	 * The program probe() found and starts sandboxes with (bwrap's absolute
	 * path), for `airlock doctor` to report and try.  Valid until free().
	 */
	const char *(*program)(const struct sandbox *sb);

	/*
	 * Builds the command that runs cfg->program inside a sandbox as cfg
	 * says (cfg and what it points to may go after this returns); *rep
	 * says what was masked.  0, or -errno with a message in err.
	 */
	int (*build)(struct sandbox *sb, const struct sandbox_config *cfg,
		     struct sandbox_report *rep, char *err, size_t errlen);

	/* After build(), just before the fork: *ex filled.  0 or -errno. */
	int (*command)(struct sandbox *sb, struct sandbox_exec *ex);

	/* In the launcher, once the child is forked (or failed to be): drops what only it needed. */
	void (*spawned)(struct sandbox *sb);

	/*
	 * With cfg->hold (build()): waits, up to timeout_ms, until the sandbox
	 * stands with its mounts made and its agent not started yet; returns
	 * the pid of a process in it (its init, as this process sees it: its
	 * mount namespace is the sandbox's), or -errno: -ETIMEDOUT, -ECHILD (it
	 * ended first), -EINVAL (not built to hold).  Before ready(): it reads
	 * what ready() would.
	 */
	pid_t (*held)(struct sandbox *sb, int timeout_ms);

	/* Lets a held sandbox start its agent.  0 or -errno. */
	int (*release)(struct sandbox *sb);

	/* An fd readable while ready() has something to read (for poll(2)), or -1: nothing (more). */
	int (*ready_fd)(const struct sandbox *sb);

	/*
	 * Reads what the sandbox said so far, without blocking.  True once it
	 * said that it stands (the agent was started inside); false while it
	 * has not, and for good when it could not be set up.
	 */
	bool (*ready)(struct sandbox *sb);

	/*
	 * The agent's process as this process sees it, to forward signals to
	 * (its process group too); 0 until known (the caller then signals the
	 * child it forked).
	 */
	pid_t (*agent)(struct sandbox *sb);

	/* Frees sb and closes what it holds.  Accepts NULL. */
	void (*free)(struct sandbox *sb);
};

/* Linux: bubblewrap (bwrap.c), with sandbox.c's command line. */
extern const struct sandbox_backend sandbox_bubblewrap;

#endif
