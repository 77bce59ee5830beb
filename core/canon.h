/* canon.h — resolves the path an intercepted call passes to the canonical absolute path the kernel will act on. */
#ifndef AIRLOCK_CANON_H
#define AIRLOCK_CANON_H

#include <stddef.h>

/*
 * Flags for canon_path().
 *
 * CANON_NOFOLLOW: do not follow a symlink in the final component, as the
 *   kernel does for O_NOFOLLOW, AT_SYMLINK_NOFOLLOW, O_CREAT|O_EXCL, lstat,
 *   unlink, rmdir, rename (both names), link's oldpath without
 *   AT_SYMLINK_FOLLOW, and symlink's linkpath.  A trailing '/' still forces
 *   the final component to be followed (path_resolution(7), "Trailing
 *   slashes"), so "link/" names the link's target even with this flag.
 * CANON_EMPTY_PATH: AT_EMPTY_PATH: the path "" names dirfd itself (openat(2),
 *   execveat(2), linkat(2)).  Without it "" fails with -ENOENT, as the
 *   kernel's lookup does.
 * CANON_NOCACHE: neither read nor fill the resolution cache (tests, benches,
 *   and any caller that knows the cwd or namespace changed behind its back).
 */
enum {
	CANON_NOFOLLOW = 1u << 0,
	CANON_EMPTY_PATH = 1u << 1,
	CANON_NOCACHE = 1u << 2,
};

/* Symlinks followed in one resolution before -ELOOP: MAXSYMLINKS, path_resolution(7). */
#define CANON_MAX_LINKS 40

/*
 * Writes to out (outlen bytes, NUL-terminated) the canonical absolute path
 * that the kernel reaches when a call resolves `path` relative to `dirfd`:
 * no ".", "..", "//" or trailing '/', every symlink followed (the final one
 * only without CANON_NOFOLLOW), exactly as path_resolution(7) walks it —
 * component by component, left to right, so "link/.." is the parent of the
 * link's *target*, ".." at "/" stays at "/", a relative symlink target is
 * taken relative to the link's directory and an absolute one restarts at
 * "/" (symlink(7)).
 *
 * dirfd: AT_FDCWD (relative paths resolve against the current working
 *   directory) or an open directory fd (openat(2)); ignored when path is
 *   absolute.  Its name is read from /proc/self/fd/N (proc(5)).
 * path: NUL-terminated, at most PATH_MAX - 1 bytes; not modified.
 * flags: CANON_* above.
 *
 * /proc magic links are followed to what they point at (proc(5)): so
 * /proc/self/root/..., /proc/self/cwd/..., /proc/self/fd/N[/...],
 * /proc/<own pid>/..., /proc/thread-self/... and /dev/fd/N (a symlink to
 * /proc/self/fd) name the file they reach.  Names under /proc are never
 * cached (they depend on the pid, the thread and the fd table).
 *
 * Names that do not exist: a component the kernel cannot look up (ENOENT,
 * ENOTDIR, EACCES) ends the filesystem walk; the rest of the path is
 * appended lexically (".", ".." and "//" normalised).  So a file about to be
 * created (open O_CREAT "./.env") canonicalises to where it would be
 * created, and a dangling final symlink is followed to the name O_CREAT
 * would create, unless CANON_NOFOLLOW.  When an intermediate component is
 * missing the real call fails anyway; the lexical answer is then only the
 * name the caller spelled.
 *
 * Returns the length of the string written to out (excluding the NUL), or
 * a negative errno, with out then unspecified:
 *   -EFAULT        path or out is NULL.
 *   -ENOENT        path is "" without CANON_EMPTY_PATH; or the cwd was
 *                  removed (getcwd(2) fails).
 *   -EBADF         dirfd is not an open fd (and path is relative or "").
 *   -ENAMETOOLONG  path is PATH_MAX bytes or more, a component exceeds
 *                  NAME_MAX, the result (or a prefix on the way to it, before
 *                  a ".." shortens it) does not fit outlen, or the rest of
 *                  the walk with symlink targets spliced in exceeds PATH_MAX.
 *   -ELOOP         more than CANON_MAX_LINKS symlinks were followed.
 *   -ENXIO         a /proc magic link (an fd, the cwd or dirfd) refers to
 *                  something that is not a path: a pipe, socket,
 *                  "anon_inode:" or namespace, or a cwd/root outside this
 *                  process's root ("(unreachable)").  The caller decides on
 *                  the literal path.
 *   -ESTALE        a /proc magic link refers to a deleted file or directory
 *                  (its name ends in " (deleted)" and no longer names it).
 *   other          an unexpected error from readlinkat(2) or statx(2).
 *
 * Cache: results are cached per thread (96 slots of 256 bytes, 24 KiB of
 * initial-exec TLS per thread), keyed by the path as spelled plus whether
 * it is absolute or cwd-relative and whether CANON_NOFOLLOW was given;
 * a second table holds directory parts, so a new name in a known directory
 * costs one readlinkat(2).  A hit is a hash, a memcmp and a memcpy (about
 * 50 ns).  Not cached: dirfd-relative paths (the fd's name is read each
 * time), anything that went through /proc (it depends on the pid, the thread
 * and the fd table, and a forked child shares the cache), key + result over
 * 222 bytes, and the whole cache inside a signal handler that interrupted a
 * canon_path() on the same thread.  An entry is used only while (a)
 * canon_invalidate() has not been called since it was filled, in any
 * thread, and (b) it is younger than CANON_CACHE_TTL_NS, measured on
 * CLOCK_MONOTONIC_COARSE (so up to TTL + one tick, 1–4 ms by CONFIG_HZ).
 * Residual risk: a namespace change the calling process cannot see —
 * another process's rename/symlink/unlink, unless canon_share_generation()
 * links the processes, or a raw syscall — is noticed only when the entry
 * expires; the kernel layer (mounts, seccomp, Landlock) covers that window,
 * as it covers the check-then-use race every shim has without a cache.
 * A siglongjmp() out of a handler that interrupted canon_path() leaves the
 * thread's cache disabled (slow, never wrong).
 *
 * Async-signal-safe, safe in a vfork child, thread-safe, allocates nothing
 * (stack use under 2 × PATH_MAX), errno preserved.  Syscalls are made with
 * syscall(2) so hooks on readlinkat/getcwd/statx are never re-entered.
 */
int canon_path(int dirfd, const char *path, unsigned flags, char *out, size_t outlen);

/*
 * Pure lexical normalisation (no syscalls, no symlinks): joins `path` to
 * `base` when path is relative, then removes ".", "//" and trailing '/', and
 * lets ".." drop the previous component (at "/" it stays at "/").  Correct
 * for the kernel only when no component is a symlink — e.g. base is a
 * canonical directory and path holds no symlinks.
 *
 * base: absolute path, NUL-terminated; may be NULL when path is absolute.
 * Returns the length written to out (NUL-terminated), or -EFAULT (path or
 * out NULL), -EINVAL (relative path with a NULL or relative base),
 * -ENAMETOOLONG (result does not fit outlen).
 */
int canon_lexical(const char *base, const char *path, char *out, size_t outlen);

/*
 * Invalidates every cached resolution in every thread (and the cached cwd):
 * one atomic increment of the generation counter.  The shim calls it after
 * every successful call that can change what a name resolves to: symlink,
 * link, rename, unlink, rmdir, mkdir, chdir, fchdir, chroot (and their *at
 * forms).  Async-signal-safe.
 */
void canon_invalidate(void);

/*
 * Makes the cache generation a counter shared with other processes (e.g. a
 * word in a MAP_SHARED page every shim of the session maps), so a namespace
 * change in one process invalidates the caches of all.  counter must stay
 * mapped for the life of the process and be 8-byte aligned; NULL goes back
 * to the process-local counter.  Call before threads start.
 */
void canon_share_generation(unsigned long *counter);

/*
 * Cache lifetime: an entry older than this is re-resolved, which bounds how
 * long a change by another process goes unseen: a script's `rm x; ln -s
 * secret x` runs two programs (milliseconds each), so the shell's next open
 * of x normally resolves afresh.  A mitigation, not a guarantee.
 */
#define CANON_CACHE_TTL_NS 2000000L

#endif
