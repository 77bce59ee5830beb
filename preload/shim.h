/* shim.h — internals shared by the shim's hook files: real functions, the guard, decisions and events. */
#ifndef AIRLOCK_SHIM_H
#define AIRLOCK_SHIM_H

#include <dirent.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "policy/policy.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

/* glibc's _FORTIFY_SOURCE open entry points (declared by its headers only under fortify). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* real_NAME: the next definition of each hooked function (dlsym(RTLD_NEXT)). */
#define HOOK(ret, name, params) typedef ret(*name##_fn) params; extern name##_fn real_##name;
#include "preload/hooks.def"
#undef HOOK

/*
 * Each wrapper, declared from the list and exported: a prototype in the list
 * that disagrees with libc's header or with the wrapper's definition does not
 * compile.  (tests/shim/run.sh checks the other half: that the list, the
 * wrappers defined and the shim's exported symbols are the same names.)
 */
#define HOOK(ret, name, params) SHIM_EXPORT ret name params;
#include "preload/hooks.def"
#undef HOOK

/* What an intercepted call is about. */
enum shim_source {
	SHIM_EXEC = 0,
	SHIM_OPEN = 1,
	SHIM_CONNECT = 2,
};

/* One intercepted action, as the shim reports it. */
struct shim_action {
	enum shim_source source;
	unsigned action;             /* SHIM_OPEN: one POLICY_FILE_* bit */
	const char *path;            /* SHIM_EXEC: program; SHIM_OPEN: canonical path */
	const char *const *argv;     /* SHIM_EXEC */
	const char *host;            /* SHIM_CONNECT: IP literal or name */
	unsigned port;               /* SHIM_CONNECT */
	const char *copy_of;         /* SHIM_EXEC: the ruled program path is a copy of, or NULL */
	struct policy_verdict v;     /* the policy's verdict */
};

/*
 * Reads the environment and resolves the exec family's real_* pointers once
 * (idempotent, thread-safe).  Called by the constructor and by any hook that
 * runs first.  Other real_* pointers are resolved on first use: dlsym(3) of
 * all ~50 hooks would triple the cost of starting every process.
 */
void shim_init(void);

/*
 * dlsym(RTLD_NEXT, name), refusing our own wrapper `self` (which would loop
 * forever).  NULL when no further definition exists.
 */
void *shim_dlnext(const char *name, void *self);

/*
 * SHIM_MISSING(name): true when real_name cannot be found (the hook then
 * fails with ENOSYS); resolves it on first use.  Concurrent first uses store
 * the same pointer.
 */
#define SHIM_MISSING(name)                                                                  \
	(shim_init(), __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE) == NULL &&           \
			      (__atomic_store_n(&real_##name,                              \
						(name##_fn)shim_dlnext(#name, (void *)&name), \
						__ATOMIC_RELEASE),                         \
			       real_##name == NULL))

/*
 * Joins the NUL-terminated strings of the NULL-terminated list into out (cap
 * bytes).  False when they do not fit.  No stdio: the constructor runs in
 * every process, and snprintf's first call costs more than all the rest.
 */
bool shim_join(char *out, size_t cap, ...) __attribute__((sentinel));

/*
 * Opens the event socket (the tripwire mode: the log) now if it is not
 * open (before a fork: children inherit it).
 */
void shim_report_warm(void);

/* Nanoseconds the constructor's shim_init() took in this process (exported for `make bench`). */
SHIM_EXPORT uint64_t airlock_shim_init_ns(void);
/* Nanoseconds mapping and validating the image took (maps it first if needed). */
SHIM_EXPORT uint64_t airlock_shim_image_ns(void);

/* Reads AIRLOCK_TRACE and the channel's path under dir ($AIRLOCK_DIR); part of shim_init(). */
void shim_report_init(const char *dir);

/*
 * The validated image, mapped on first use, or NULL when none could be mapped
 * (then every decision is deny).
 */
const struct policy_image *shim_image(void);

/*
 * The session's table of ruled programs' build-ids ($AIRLOCK_DIR/programs,
 * core/buildid.h), mapped read-only on first use (or before a fork): its
 * text in *text and length in *len (either may be NULL).  False, *text
 * NULL, when the session has none, it is empty (no ruled program has a
 * build-id) or larger than BUILDID_TABLE_MAX: exec decisions then go by
 * names alone.
 */
bool shim_programs(const char **text, size_t *len);

/*
 * Enters the shim: false when this thread is already inside it (a hook called
 * from the shim's own work), in which case the hook must call the real
 * function straight away.  shim_leave() must follow every true return,
 * before the real function is called (so a vfork child that execs leaves
 * the parent's guard clear).
 */
bool shim_enter(void);
void shim_leave(void);

/*
 * Turns a verdict into the final decision: ask goes to the launcher over the
 * channel as an ASK and blocks for the answer (no channel or no answer:
 * deny; the launcher logs the ask and its answer); deny and allowed exec /
 * connect are reported as EVENTs, allowed file accesses only when
 * AIRLOCK_TRACE=1.  Returns POLICY_ALLOW or POLICY_DENY.
 * No heap allocation; safe in a vfork child.
 */
enum policy_decision shim_resolve(struct shim_action *a);

/*
 * Decides and resolves one file access: canonicalises (dirfd, path) with
 * canon_flags (CANON_*), decides each POLICY_FILE_* bit of actions and
 * resolves the most severe verdict with shim_resolve().
 */
enum policy_decision shim_file(int dirfd, const char *path, unsigned actions, unsigned canon_flags);

/*
 * Decides renaming (olddirfd, oldpath) to (newdirfd, newpath) for the read
 * rule the content carries (a write on both names is decided apart): when
 * the source's read verdict (canonical, the last component not followed;
 * an agent-only file counts as denied) is deny or ask and the destination's
 * is less strict, that verdict is resolved with shim_resolve() on the
 * source (deny: refused and logged with the rule; ask: asked).  For a
 * directory, the same for each entry below it, named under the destination
 * as it would be after the move: walked with getdents64(2), at most
 * MOVE_WALK_ENTRIES (65536) entries and MOVE_WALK_DEPTH (32) levels, not
 * following symlinks; an entry it cannot list, or a tree past a bound, is a
 * deny by no rule (rule -1) on the source.  So `mv .env x` and
 * `mv secrets public` are refused, `mv .env .env.old` is not when both names
 * are denied.  Cost for an ordinary file: a cached canonicalisation, a
 * cached decision and one failed openat(2).  Returns POLICY_ALLOW or
 * POLICY_DENY.  No heap allocation.
 */
enum policy_decision shim_file_move(int olddirfd, const char *oldpath, int newdirfd,
				    const char *newpath);

/* The POLICY_FILE_* actions open(2) flags amount to (O_PATH: none). */
unsigned shim_open_action(int flags);

/* CANON_NOFOLLOW when open(2) flags do not follow a final symlink (O_NOFOLLOW, O_CREAT|O_EXCL). */
unsigned shim_open_canon_flags(int flags);

/*
 * The directory a posix_spawn file-actions object makes the child chdir to
 * (addchdir_np / addfchdir_np), canonical, into out (cap bytes); false when
 * it has none.  Relative paths in later actions and the program resolve there.
 */
bool shim_spawn_dir(const posix_spawn_file_actions_t *fa, char *out, size_t cap);

/*
 * True when the session's egress goes through the launcher's proxy (the
 * session dir holds a "proxy" file): connections to the proxy's own ports
 * on loopback are then the proxy's to decide and log, not the shim's.
 */
bool shim_behind_proxy(void);

/* Called after every successful call that changed the file namespace. */
void shim_namespace_changed(void);

/*
 * Entries shim_fix_env() may add to an environment, its NULL included: room
 * a caller adds to the count of envp's entries.
 */
#define SHIM_ENV_EXTRA 5

/*
 * envp with LD_PRELOAD (holding the shim) and the session's variables put
 * back when missing or changed — AIRLOCK_DIR under a launcher; AIRLOCK_IMAGE,
 * AIRLOCK_LOG and AIRLOCK_SESSION in the tripwire mode, where AIRLOCK_DIR
 * is left out — and with drop_keys the agent profile's key variables
 * ($AIRLOCK_AGENT_KEYS) left out, written into out (cap pointers) using buf
 * (bufsize bytes) for a rewritten LD_PRELOAD.  Returns out, or envp itself
 * when nothing changes, or NULL when out/buf are too small.  No allocation:
 * safe in a vfork child.
 */
char *const *shim_fix_env(char *const envp[], char **out, size_t cap, char *buf, size_t bufsize,
			  bool drop_keys);

/*
 * True when the NAME=value entry is one shim_fix_env() puts back (LD_PRELOAD
 * or a session variable): what system(3) and popen(3) must see in environ.
 */
bool shim_env_kept(const char *entry);

/* ---- the tripwire mode (tripwire.c): no launcher ------------------------------------ */

/*
 * The tripwire mode: no $AIRLOCK_DIR, and $AIRLOCK_IMAGE or $AIRLOCK_LOG
 * set.  Decisions come from the image at $AIRLOCK_IMAGE (airlock compile),
 * an ask gets the headless answer (deny, logged decided_by "default"), and
 * what the launcher would log is appended to $AIRLOCK_LOG instead.  A
 * tripwire and a recorder inside processes that can remove it, not a
 * boundary.  Set by shim_init().
 */
bool shim_tripwire(void);

/*
 * Reads the tripwire mode's log path (log: $AIRLOCK_LOG, must be absolute)
 * and session id (session: $AIRLOCK_SESSION, cut to 128 bytes; NULL or
 * empty: 16 hex digits derived from image, the pid and the time, which
 * children then inherit through shim_fix_env()).  Part of shim_init().
 */
void shim_tripwire_init(const char *log, const char *session, const char *image);

/* The session id the tripwire mode logs (static storage; "" outside it). */
const char *shim_tripwire_session(void);

/* Opens the log now if it is not open (before a fork: children inherit it). */
void shim_tripwire_warm(void);

/*
 * shim_resolve() in the tripwire mode: the verdict becomes the decision
 * (ask: deny, by "default"), and what the launcher would log (denies, asks,
 * execs, connects; allowed file calls when trace) is appended to the log as
 * one JSON line in the audit log's format (launcher/log/audit.h: id,
 * timestamp, session_id, source "shim", pid, command / args, file / action,
 * or network_dst, decision, decided_by, rule, reason, response_time_ms),
 * at most PIPE_BUF bytes (strings cut to fit, and "truncated": true), with
 * one write(2) on an O_APPEND fd: lines of concurrent processes never mix
 * (POSIX write(2) on O_APPEND; Linux holds the inode lock for a regular
 * file's write).  When the line cannot be written whole the action is
 * refused and stderr says so, once per process.  Returns POLICY_ALLOW or
 * POLICY_DENY; errno is kept.  No heap allocation; safe in a vfork child.
 */
enum policy_decision shim_tripwire_resolve(struct shim_action *a, bool trace);

/*
 * True in the agent's own process holding one of its profile's keys (decided
 * by the constructor, before main): its exec hooks then pass the keys only
 * to programs that are the agent's own (shim_agent_target).
 */
bool shim_holds_keys(void);

/*
 * True when starting the program path (as invoked, absolute) resolved to
 * canon with argv starts the agent again: either is one of
 * $AIRLOCK_AGENT_EXE, or canon is an interpreter (node, bun, deno,
 * python3.N, the shells) and argv[1] one of them, or canon is env(1) with
 * argv[1] an interpreter and argv[2] one of them.  String compares only:
 * safe in a vfork child.
 */
bool shim_agent_target(const char *path, const char *canon, char *const argv[]);

#endif
