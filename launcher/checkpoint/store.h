/*
 * store.h — the on-disk form of a checkpoint: what a session's workspace was
 * before the sandbox changed it, kept where nothing in the sandbox can reach.
 *
 * How a checkpoint is taken (supervise.h): nothing is copied when the
 * session starts.  A seccomp filter in every process of the sandbox sends
 * each call that can destroy a file's content or name (an open for writing,
 * creating or truncating; truncate, unlink, rmdir, rename, mkdir, symlink,
 * link, mknod) to the launcher's checkpoint worker first.  Before letting
 * the call go on, the worker saves the file it would destroy, once per file,
 * and only a file that has not changed since the checkpoint's time (its
 * inode's ctime is at or before `started`; ctime cannot be set from user
 * space, see inode(7)): a name about to go away is kept by a hard link (no
 * data copied), content about to be overwritten is copied first.  What the
 * sandbox creates is written down, so `airlock undo` can remove it.
 *
 * The store, STATE/checkpoints/SESSION/ (STATE: $XDG_STATE_HOME/airlock,
 * else ~/.local/state/airlock; 0700; hidden from the sandbox):
 *
 *   meta       "key=value" lines: version=1, session=ID, workspace=/abs,
 *              started=NS (the checkpoint's time, ns since the epoch,
 *              CLOCK_REALTIME_COARSE, as inode times are), mode=link|copy
 *              (how names are kept: link when the store is on the
 *              workspace's file system), ignored=0|1 (whether git-ignored
 *              paths are covered), git=0|1, command=the agent's argv as
 *              shell words; at the end: ended=NS, exit=STATUS.
 *   ignored    paths relative to the workspace that git ignores at the
 *              start, NUL-terminated each; a directory ends with '/'.
 *              Nothing at or beneath them is saved, created or undone.
 *              Absent when ignored=1 or the workspace is not a git work tree.
 *   refs       the repository's references at the start, one per line:
 *              "SHA REFNAME" (git for-each-ref), "HEAD SHA" or
 *              "HEAD ref: REFNAME", "stash@{N} SHA" per stash entry.
 *   journal    one record per line, fields separated by a tab, paths
 *              relative to the workspace and escaped (store_escape()):
 *                save OBJ HOW MODE SIZE MTIME_NS PATH
 *                    PATH's content before the sandbox changed it is in
 *                    objects/OBJ; HOW is "link" (the same inode: the name
 *                    was going away) or "copy" (its bytes, taken before an
 *                    overwrite); MODE octal, SIZE bytes, MTIME_NS as
 *                    they were.  A later "save" of the same PATH
 *                    supersedes an earlier "link" one (the linked inode
 *                    was about to be written).
 *                dir MODE PATH
 *                    a directory that existed at the start, about to be
 *                    removed or renamed.
 *                create KIND PATH
 *                    the sandbox made PATH, which did not exist: KIND is
 *                    file, dir, symlink, link, node or rename (a rename's
 *                    destination).
 *                refused ERRNO PATH
 *                    a save failed, so the call was refused with ERRNO
 *                    (fail closed); PATH is unchanged.
 *                end TYPE INO SIZE MTIME_NS PATH
 *                    at the session's end, what the sandbox left at each
 *                    PATH the journal names: TYPE f, d, l, o (other) or -
 *                    (absent).  A path whose state differs from its "end"
 *                    record later was changed outside the sandbox.
 *   objects/   the saved files, named by decimal OBJ.
 *   lock       empty; while the session runs, the launcher's checkpoint
 *              worker holds flock(LOCK_EX) on it.  A reader takes
 *              flock(LOCK_SH|LOCK_NB) (undo and --forget: LOCK_EX|LOCK_NB):
 *              EWOULDBLOCK means the session is still running, so `airlock
 *              undo` says "session ID is still running" and exits 1, and
 *              `airlock diff` goes on with a note.  The lock goes with the
 *              process (flock(2)): a killed launcher leaves it free.
 *
 * Lines are written whole with one write(2) each (O_APPEND), so a killed
 * launcher leaves a journal whose last line may be cut, never interleaved:
 * a reader skips a last line without its '\n'.
 */
#ifndef AIRLOCK_CHECKPOINT_STORE_H
#define AIRLOCK_CHECKPOINT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STORE_VERSION 1
/* Bounds a reader holds a store to (a damaged one is refused, not trusted). */
#define STORE_LINE_MAX 16384 /* one journal line, escaped */
#define STORE_META_MAX 65536 /* the whole meta file */

/*
 * Escapes PATH for a journal field: '%', TAB, CR, LF, every byte below 0x20
 * and 0x7f become "%XX" (two uppercase hex digits); every other byte is
 * kept.  Writes at most cap bytes with a terminating NUL into out.
 * Returns the length written, or -1 when cap is too small (out is then
 * unspecified).
 */
ssize_t store_escape(const char *path, char *out, size_t cap);

/*
 * Undoes store_escape() in place.  Returns false when s holds a '%' not
 * followed by two hex digits, or an escape that decodes to NUL (s is then
 * unspecified).
 */
bool store_unescape(char *s);

/*
 * Splits one journal line (without its '\n', modified in place) at its
 * tabs into at most max fields, each unescaped.  Returns the number of
 * fields, or -1 when the line has more than max fields or a field does not
 * unescape.
 */
int store_split(char *line, char **fields, int max);

/*
 * The checkpoints directory: STATE/checkpoints, STATE as above (home is the
 * caller's home directory, used when XDG_STATE_HOME is unset or relative).
 * Returns a malloc'd path the caller frees, or NULL when out of memory.
 */
char *store_root(const char *home);

/*
 * Reads meta's value for key into out (cap bytes, NUL-terminated).  dirfd
 * is the session's store directory.  Returns 0, -ENOENT when the key or the
 * file is absent, -E2BIG when the value does not fit, -EIO when the file is
 * larger than STORE_META_MAX, or another -errno from reading it.
 */
int store_meta_get(int dirfd, const char *key, char *out, size_t cap);

/*
 * Appends "key=value\n" to meta (created 0600 if absent) with one write.
 * value must not hold a newline.  Returns 0 or -errno.
 */
int store_meta_put(int dirfd, const char *key, const char *value);

#endif
