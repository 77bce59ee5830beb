/* pathsearch.h — the program execvp(3) runs for a name without '/': one PATH search, for the shim and the launcher. */
#ifndef AIRLOCK_PATHSEARCH_H
#define AIRLOCK_PATHSEARCH_H

#include <stddef.h>

/*
 * Searches `path` for `file` as execvp(3), execvpe(3) and posix_spawnp(3)
 * do (POSIX, exec: "the path prefix for this file is obtained by a search of
 * the directories passed as the environment variable PATH"; glibc's
 * posix/execvpe.c), and writes to out (outlen bytes, NUL-terminated) the
 * first candidate "DIR/file" that is an executable regular file:
 *
 *   - path is a colon-separated list of directories, the caller's $PATH
 *     (execvpe(3) too searches the caller's PATH, not envp's).  NULL (PATH
 *     unset) means the system default, confstr(3) _CS_PATH — glibc's
 *     execvp(3) uses that same string ("/bin:/usr/bin").
 *   - an empty entry (a leading or trailing ':', or "::", or path "")
 *     means the current directory, as execvp(3) says; the candidate is
 *     written "./file".
 *   - a candidate is taken when access(2) X_OK allows it (as the real uid:
 *     for root any x bit will do) and it is a regular file after symlinks:
 *     a directory or a non-executable file of that name is skipped, as
 *     execve(2) would fail on it (EACCES) and execvp(3) go on to the next
 *     entry.  A candidate that does not fit outlen is skipped.
 *   - file must be a non-empty name without '/': a name with one is not
 *     searched at all (the caller runs it as it is).
 *
 * What execvp(3) may still do otherwise: go on past a candidate whose exec
 * itself fails (ENOENT for a missing script interpreter, for instance).
 * The search is the same; only that exec-time fallback is not modelled.
 *
 * Allocates nothing, takes no lock, calls only raw syscalls (faccessat(2),
 * statx(2)) and confstr(3): safe in the shim's hooks and in a vfork child.
 * Returns the length written to out, or -ENOENT when no entry holds such a
 * file, or -EINVAL when file is NULL, empty or holds a '/'.
 */
int path_search(const char *file, const char *path, char *out, size_t outlen);

/*
 * The program execve(2) would run for cmd, as the launcher names it (`airlock
 * run`'s agent, `airlock check exec`, the sandbox backend's own program):
 * when cmd holds a '/', cmd made absolute against the current directory and
 * lexically normalised (canon_lexical(), core/canon.h: symlinks are not
 * resolved, so `python3` does not become `python3.11`); otherwise what
 * path_search() finds for it along path (NULL: the default), made absolute
 * the same way — and cmd itself, still bare, when the search finds nothing.
 * Writes it to out (outlen bytes, NUL-terminated).
 *
 * Allocates nothing (stack use 2 x PATH_MAX).  Returns the length written,
 * or -ENAMETOOLONG (it does not fit outlen) or getcwd(2)'s -errno.
 */
int path_program(const char *cmd, const char *path, char *out, size_t outlen);

#endif
