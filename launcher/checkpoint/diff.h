/*
 * diff.h — `airlock diff`: what a session changed in its workspace, read
 * from its checkpoint store (store.h) and the workspace as it is now.
 *
 * Files (only the paths the journal names: the sandbox touched nothing
 * else; nothing at or beneath an "ignored" path):
 *   A  created: a "create" record, no "save", and something there now
 *   M  modified: a "save" whose object's bytes or mode differ from the path's now
 *   D  deleted: a "save" (or "dir") whose path is absent now
 *   R  renamed: a created path whose inode is a "save ... link" object's
 *      (the same file, moved): "R OLD -> NEW"; OLD is then not listed as D
 * Text (no NUL in the first 8000 bytes of either side, git's rule) is shown
 * as diff(1) -u shows it, with a/PATH and b/PATH labels; binary as sizes and
 * SHA-256 digests (OpenSSL's EVP).
 *
 * Git (meta git=1 and a "refs" file): references moved, created, deleted,
 * HEAD changed, stash entries dropped and added (from `git for-each-ref`,
 * `git symbolic-ref HEAD` / `git rev-parse HEAD` and `git log -g
 * refs/stash` now), and the commits made: `git rev-list --oneline` of the
 * new tips, not the old ones that still exist.  A repository that is gone
 * is said, and all its references listed as deleted.
 */
#ifndef AIRLOCK_CHECKPOINT_DIFF_H
#define AIRLOCK_CHECKPOINT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "launcher/checkpoint/journal.h"

struct ckpt_diff_options {
	const char *const *paths; /* as ckpt_undo_options: npaths 0 is everything */
	size_t npaths;
	bool stat;  /* one "X PATH" line per path instead of the diffs */
	FILE *out;  /* the report; diff(1)'s output goes to its file descriptor (flushed first) */
	FILE *err;  /* notes: damaged journal lines, uncovered ignored paths */
};

/*
 * Prints what the session of s changed.  Returns 0, 1 when the store is
 * damaged (journal lines, objects: said in the report), or -errno when the
 * workspace cannot be opened.
 */
int ckpt_diff(struct ckpt_store *s, const struct ckpt_diff_options *o);

/*
 * The SHA-256 (FIPS 180-4, by OpenSSL's EVP) of fd's bytes from offset 0 to
 * its end, as 64 lowercase hex digits and a NUL in hex (65 bytes).  Returns
 * 0 or -errno (-ENOMEM: libcrypto failed).
 */
int ckpt_sha256_fd(int fd, char hex[65]);

/* True when the first 8000 bytes of fd hold a NUL (git's binary rule, buffer_is_binary()). */
bool ckpt_fd_binary(int fd);

#endif
