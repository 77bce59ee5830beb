/*
 * undo.h — `airlock undo`: puts a workspace back as a checkpoint store
 * (store.h) says it was when the session started.
 *
 * The rules, in the order they are applied:
 *  1. Every object a chosen path needs is checked before anything changes:
 *     it exists, is a regular file (a symlink when the record's MODE says
 *     S_IFLNK), its size is the record's SIZE, and for a "link" object its
 *     mtime is MTIME_NS too (the inode is the workspace's original: a later
 *     write to it would show).  A path whose object fails is reported
 *     ("cannot restore PATH: checkpoint object OBJ is damaged/missing (...)")
 *     and left as it is: never part of a file.
 *  2. What the sandbox created ("create" records, no "save" of that path) is
 *     removed, deepest first: a non-directory only when it still matches its
 *     "end" record (type, inode, size, mtime) or its inode is a saved link
 *     object's (an original the sandbox moved there); a directory only when
 *     it matches and is empty by then.  Anything else there was changed
 *     outside the sandbox and is kept, and said.
 *  3. Each saved path and each recorded directory is restored, parents
 *     first: the object's bytes to a temporary file in the same directory,
 *     MODE and MTIME_NS set, renamed over the path (the object is never
 *     linked back: the store stays whole, and undo can run again).  Missing
 *     parents are made with their "dir" record's mode, else 0755.  A path
 *     already holding the checkpoint's bytes and mode is left alone.
 *  4. A path whose state differs from its "end" record (the user changed it
 *     after the sandbox did, or the sandbox never touched it last) is never
 *     overwritten: it is renamed to PATH.airlock-kept-XXXXXXXX (the first 8
 *     hex digits of the session id; ".N" appended when taken), then the
 *     checkpoint's version is restored.  Without any "end" record (the
 *     launcher was killed) the workspace's state is taken as the sandbox's,
 *     and that is said once.
 * The workspace is walked without following symlinks (journal.h's
 * ckpt_ws_parent()): a symlink the sandbox left cannot lead a restore out.
 */
#ifndef AIRLOCK_CHECKPOINT_UNDO_H
#define AIRLOCK_CHECKPOINT_UNDO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "launcher/checkpoint/journal.h"

struct ckpt_undo_options {
	/* workspace-relative paths: only entries at or beneath one of them are undone;
	   npaths 0 (or a "" path): everything */
	const char *const *paths;
	size_t npaths;
	bool dry_run; /* print the actions, change nothing (not even meta) */
	FILE *out;    /* one line per action: "restore P", "remove P", "keep P (...)", "cannot restore P: ..." */
	FILE *err;    /* notes (no end records, a damaged journal) */
};

struct ckpt_undo_result {
	size_t restored, removed, kept, unchanged;
	size_t not_restored; /* paths left as they are because of a damaged object or an error */
};

/*
 * Undoes the session of s (opened with ckpt_store_open(), LOCK_EX taken:
 * the caller checks s->running first).  Appends undone=NS to meta after a
 * real run.  Returns 0 when everything chosen is as at the checkpoint (or
 * kept aside), 1 when some path was not restored or the journal has
 * damaged lines, -errno when the workspace cannot be opened.  *res counts
 * the actions.
 */
int ckpt_undo(struct ckpt_store *s, const struct ckpt_undo_options *o, struct ckpt_undo_result *res);

/* True when rel is at or beneath one of paths (npaths 0, or a "" entry: always). */
bool ckpt_path_chosen(const char *rel, const char *const *paths, size_t npaths);

/*
 * Checks objects/OBJ against sv as rule 1 says; fills *st with the
 * object's lstat.  Returns NULL when it holds, else the reason ("missing",
 * "not a regular file", "size 12, the record says 40", "modified since it
 * was saved"...), a static string or one in buf (cap bytes).
 */
const char *ckpt_object_check(int storefd, const struct ckpt_save *sv, struct stat *st, char *buf,
			      size_t cap);

#endif
