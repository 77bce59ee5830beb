/*
 * open_gate.h — deny-read rules at the kernel layer for files that appear
 * during the session.  The masks (masks.h) hide what exists at launch; a
 * secret written later (a `.env` made by the user's editor, a token a host
 * tool drops in HOME) would be readable to every process the shim is not
 * in: a static binary (Codex, Go tools), raw syscalls (Claude Code's Bun).
 *
 * The gate is a fanotify(7) group of the launcher's with FAN_OPEN_PERM
 * marks on the sandbox's own mounts of host file systems (FAN_MARK_MOUNT,
 * reached through /proc/PID/root while the sandbox is held before its
 * agent starts, so they are the sandbox's mount objects, not the host's):
 * every open(2) of a file there, by any process in the sandbox, waits for
 * the launcher's answer.  The launcher reads the file's path from the event's
 * descriptor, decides it as the mask walk would (masks_refuses(): a
 * deny-read rule, or the mandatory list of credential stores) and answers
 * allow or deny (the opener gets EPERM, where the shim says EACCES).  An
 * allowed file gets an ignore mark on its inode, so only its first open
 * costs a round trip (the decision is by name, which a write does not
 * change: the mark survives writes).  No check-then-use window: the open
 * itself waits.
 *
 * Not covered: directories (listing shows names, not content), reads of a
 * file opened before its name became a secret's, a late secret hard-linked
 * or renamed to another name by a program the shim is not in (link(2) and
 * rename(2) are not gated; the gate decides by the name opened), and asks (a read the
 * policy asks about is the shim's to ask; the gate refuses only what a
 * rule denies).  Needs CAP_SYS_ADMIN (fanotify_init(2) with a permission
 * class): `airlock run` as root.
 */
#ifndef AIRLOCK_SANDBOX_OPEN_GATE_H
#define AIRLOCK_SANDBOX_OPEN_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"

struct open_gate;

/* The rule a refusal names when the file's path could not be read whole (a rule cannot be checked). */
#define OPEN_GATE_RULE_NO_PATH (-2)
/*
 * Not one open: the launcher ran out of file descriptors (fanotify needs one
 * per event), so the kernel refuses the sandbox's opens meanwhile (fail
 * closed); told once an episode, with pid 0 and an empty path.
 */
#define OPEN_GATE_RULE_NO_FDS (-3)

/*
 * Told each refused open: pid as this process sees it, the canonical path
 * (or what stood for it), the deciding rule (-1: the mandatory list;
 * OPEN_GATE_RULE_NO_PATH: the path could not be read, refused to fail closed).
 */
typedef void (*open_gate_refused_fn)(void *ctx, pid_t pid, const char *path, int32_t rule);

/* What the gate did so far. */
struct open_gate_stats {
	unsigned long mounts;  /* mounts marked */
	unsigned long events;  /* opens decided */
	unsigned long refused; /* of those, refused */
	unsigned long ignored; /* inodes given an ignore mark (their later opens cost nothing) */
};

/* Descriptors the gate holds in reserve for events when the launcher runs out (an agent holding connections). */
#define OPEN_GATE_SPARE_FDS 8

/* The most ignore marks one gate places; past it every open of a new inode round-trips. */
#define OPEN_GATE_MAX_IGNORES 262144ul

/*
 * Can this process make a gate?  0, or -errno with why (for `doctor` and the
 * session's start event): -EPERM without CAP_SYS_ADMIN, -ENOSYS / -EINVAL on
 * a kernel without fanotify permission events.
 */
int open_gate_probe(char *why, size_t whylen);

/*
 * A new gate deciding by img (borrowed: it must outlive the gate) and home
 * (copied; NULL: no mandatory list), telling refused(ctx, ...) of each
 * refusal (NULL: nobody).  NULL with a message in err.
 */
struct open_gate *open_gate_new(const struct policy_image *img, const char *home,
				open_gate_refused_fn refused, void *ctx, char *err, size_t errlen);

/*
 * Marks every mount in pid's mount namespace that shows a host file system
 * (its device is one of this process's mounts, and it is not a pseudo file
 * system: proc, sysfs, devtmpfs, devpts, ...; the sandbox's own tmpfs
 * mounts have devices of their own and are left out).  pid is the sandbox's
 * init, held with its mounts standing (backend.h held()).  Returns the
 * number of mounts marked, or -errno with a message in err: a mount that
 * cannot be marked fails it all (fail closed).
 */
int open_gate_mark(struct open_gate *g, pid_t pid, char *err, size_t errlen);

/*
 * Starts answering: a process of the gate's own ("airlock-gate", forked;
 * it dies with the caller) answers each open as it comes, so an open waits
 * for its own decision only, never for the caller's loop, and the worker's
 * descriptors (one per event) never run short because the caller's did.
 * After open_gate_mark(), before the sandbox's agent starts, while the
 * caller has no other thread.  0 or -errno (fork(2)).
 */
int open_gate_start(struct open_gate *g);

/*
 * Stops the worker and reaps it (once the sandbox ended: opens still
 * waiting would be allowed by the kernel when the group closes).  Accepts
 * NULL and a gate not started.
 */
void open_gate_stop(struct open_gate *g);

/* A descriptor readable (poll(2)) while the gate has news for open_gate_serve(), or -1 for NULL. */
int open_gate_fd(const struct open_gate *g);

/*
 * Takes the gate's news, in the caller's thread, without blocking: tells
 * refused(ctx, ...) of each open it refused.  0, or -errno when the gate
 * failed (its group unreadable or unanswerable; -ECHILD: its worker process
 * is gone): the caller must stop the
 * sandbox (its opens would hang, or go unchecked once the group closes).
 */
int open_gate_serve(struct open_gate *g);

/* Counts so far. */
struct open_gate_stats open_gate_stats(const struct open_gate *g);

/* Stops the worker, closes the group (opens still waiting are allowed by the kernel: stop the sandbox first) and frees g.  Accepts NULL. */
void open_gate_free(struct open_gate *g);

#endif
