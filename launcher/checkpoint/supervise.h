/*
 * supervise.h — the checkpoint of a session's workspace, taken as the
 * sandbox goes (store.h has the store's form, filter.h the calls that wait).
 *
 * Nothing is copied when the session starts: the cost does not grow with
 * the workspace.  The Landlock helper installs filter.h's seccomp filter
 * with a listener (seccomp_unotify(2)) and hands the listener to this
 * worker ("airlock-undo", a process of the launcher's).  Each call that can
 * destroy a workspace file waits while the worker resolves its path as the
 * caller sees it (/proc/PID/root, openat2(2) RESOLVE_IN_ROOT), finds the
 * file on the host, and saves it if it has not changed since the
 * checkpoint's time (ctime; store.h): a hard link into the store for a name
 * about to go (unlink, the two ends of a rename), a copy for content about
 * to be overwritten (an open for writing or truncating, truncate(2)); then
 * the call goes on (SECCOMP_USER_NOTIF_FLAG_CONTINUE).  What the call
 * creates is journalled.  A save that fails refuses the call with its errno
 * (fail closed) and tells the launcher.  Holds for every process of the
 * sandbox, dynamic, static or raw syscalls: the filter is the kernel's.
 *
 * Known limits, said in the README: the path is resolved by the worker
 * while the caller waits, and a second thread of the caller could swap a
 * directory in between (seccomp_unotify(2) warns of this; a deliberate race,
 * not an accident, could then destroy a file unsaved); a file the user
 * changed from outside during the session before the sandbox destroyed it is
 * not saved (its ctime is newer than the checkpoint's); metadata changes
 * alone (chmod, utimes) are not saved; two hard links to one inode are saved
 * under the first name destroyed.
 */
#ifndef AIRLOCK_CHECKPOINT_SUPERVISE_H
#define AIRLOCK_CHECKPOINT_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct checkpoint;

struct checkpoint_config {
	const char *workspace;  /* absolute, canonical */
	const char *home;       /* for the store's place (store_root()) */
	const char *session_id; /* the session's id (16 hex digits) */
	const char *command;    /* the agent's argv as shell words, for `undo --list` */
	bool ignored;           /* cover git-ignored paths too (policy checkpoint.ignored) */
};

/* What the worker did; counted in the worker, read at the end (checkpoint_end()). */
struct checkpoint_stats {
	unsigned long calls;   /* calls that waited */
	unsigned long linked;  /* files saved by a hard link */
	unsigned long copied;  /* files saved by a copy */
	unsigned long created; /* paths the sandbox created */
	unsigned long refused; /* calls refused because a save failed */
};

/*
 * Told of each call refused because its save failed: the caller's pid (as
 * this process sees it), the workspace-relative path, the errno given.
 */
typedef void (*checkpoint_refused_fn)(void *ctx, pid_t pid, const char *path, int err);

/*
 * Can this machine take checkpoints?  0, or -errno with why: a kernel
 * without seccomp user notification (Linux 5.0; SECCOMP_GET_NOTIF_SIZES),
 * or without SECCOMP_USER_NOTIF_FLAG_CONTINUE (5.5) or openat2 (5.6).
 */
int checkpoint_probe(char *why, size_t whylen);

/*
 * Makes the session's store (store.h; its meta, the git-ignored list, the
 * references) and the socket the helper hands its listener over.  The
 * checkpoint's time is taken here.  NULL with the reason in err: the store
 * cannot be made, or it would be inside the workspace.
 */
struct checkpoint *checkpoint_new(const struct checkpoint_config *cfg, checkpoint_refused_fn refused,
				  void *ctx, char *err, size_t errlen);

/* The store's directory (owned by c), for the log and the sandbox's masks. */
const char *checkpoint_store(const struct checkpoint *c);

/* The store's kind: "link" (same file system as the workspace) or "copy". */
const char *checkpoint_mode(const struct checkpoint *c);

/*
 * The socket's end the sandbox inherits (not close-on-exec; pass its number
 * to the helper's --notify).  Close it in the launcher with
 * checkpoint_spawned() once bwrap has been started.
 */
int checkpoint_sandbox_fd(const struct checkpoint *c);

/*
 * Starts the worker (forked; it dies with the caller), which waits for the
 * listener, then answers the sandbox's calls.  Call before the sandbox is
 * spawned, while the caller has no other thread.  0 or -errno.
 */
int checkpoint_start(struct checkpoint *c);

/* Closes the launcher's copy of the sandbox's end (after bwrap was forked). */
void checkpoint_spawned(struct checkpoint *c);

/* A descriptor readable (poll(2)) while the worker has news for checkpoint_serve(), or -1. */
int checkpoint_fd(const struct checkpoint *c);

/*
 * Takes the worker's news without blocking: refused(ctx, ...) per refused
 * call.  0, or -errno when the worker failed (-ECHILD: it is gone; the
 * sandbox's waiting calls then fail with ENOSYS): the caller should end the
 * session, as nothing is being saved.
 */
int checkpoint_serve(struct checkpoint *c);

/*
 * Once the sandbox ended: the worker writes the "end" records (what the
 * sandbox left at each path it touched) and exits; meta gets ended= and
 * exit=status.  Fills *st when st is not NULL.  0 or -errno.
 */
int checkpoint_end(struct checkpoint *c, int status, struct checkpoint_stats *st);

/* Stops a worker still running and frees c.  Accepts NULL. */
void checkpoint_free(struct checkpoint *c);

#endif
