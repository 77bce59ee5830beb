/* session.h — the session directory the sandbox sees at RUN_SANDBOX_DIR: the policy image, the channel, the shim. */
#ifndef AIRLOCK_SANDBOX_SESSION_H
#define AIRLOCK_SANDBOX_SESSION_H

#include <stddef.h>

/* Where the session directory appears inside the sandbox (AIRLOCK_DIR there). */
#define RUN_SANDBOX_DIR "/run/airlock"
/* The shim's file name in the session directory. */
#define RUN_SHIM_NAME "airlock-preload.so"
/* `airlock serve`'s mark in its session directory: the variables that join it (cmd_serve.c). */
#define SERVE_MARK_NAME "serve"
/* The Landlock helper's file name there (landlock/airlock-landlock.c), bound over a placeholder too. */
#define RUN_LANDLOCK_NAME "airlock-landlock"

/*
 * A running session's directory, as its launcher makes it: its id and the
 * private directory the sandbox sees read-only at RUN_SANDBOX_DIR.  (A session
 * as the audit log tells it is struct log_session, logread.h; one as its
 * control socket's hello says, struct control_session, control.h.)
 */
struct session_dir {
	char id[17];      /* 16 lowercase hex digits, random */
	char *dir;        /* owned; host path, mode 0700 */
	char *image_path; /* owned; dir/policy.img, 0444 */
	char *shim_mount; /* owned; dir/airlock-preload.so: an empty file the real shim is bound over */
	char *landlock_mount; /* owned; dir/airlock-landlock: the same for the Landlock helper */
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
int session_create(struct session_dir *s, const void *image, size_t size, char *err, size_t errlen);

struct policy_image;

/*
 * Writes the session's table of ruled programs' build-ids (core/buildid.h,
 * buildid_table_build(): each program img's command rules name, and each
 * CLI policy/cli.c knows, as path_env — the caller's PATH, NULL: the
 * default — resolves it) as BUILDID_TABLE_NAME (0444) in s's directory,
 * which the shim reads to know a copy of a ruled program by its build-id.
 * Returns 0, or -errno with a message in err.
 */
int session_write_programs(const struct session_dir *s, const struct policy_image *img,
			   const char *path_env, char *err, size_t errlen);

/* Removes the directory and everything in it, closes the channel.  Accepts an empty session. */
void session_destroy(struct session_dir *s);

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

/*
 * The Landlock helper bwrap runs before the agent: $AIRLOCK_LANDLOCK, else
 * airlock-landlock next to the running airlock binary.  Returns a malloc'ed
 * absolute path, or NULL with a message in err when it is not executable.
 */
char *session_find_landlock(char *err, size_t errlen);

#endif
