/*
 * catalog.h — the checkpoints a user has (store.h's STATE/checkpoints/):
 * listing them, finding one by id, prefix or workspace, removing them, and
 * the retention rule the launcher applies at each session start.
 */
#ifndef AIRLOCK_CHECKPOINT_CATALOG_H
#define AIRLOCK_CHECKPOINT_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "launcher/checkpoint/journal.h"

/* One store, as --list shows it. */
struct ckpt_info {
	char id[CKPT_ID_LEN + 1];
	char *workspace;          /* owned; "" when the meta is damaged */
	char *command;            /* owned; "" when none */
	long long started, ended; /* ns since the epoch; ended 0: none written */
	long long undone;         /* ns, 0: never undone */
	bool running;             /* its lock is held (store.h: the worker holds LOCK_EX) */
	bool damaged;             /* its meta could not be read (ckpt_store_open() failed) */
	size_t saved, created;    /* paths the journal saves / says were created */
	unsigned long long bytes; /* the store's size on disk (st_blocks * 512, summed) */
};

/* True when s is a store directory's name: exactly CKPT_ID_LEN lowercase hex digits. */
bool ckpt_is_id(const char *s);

/*
 * Lists the stores under root into *out (malloc'd, *n entries), newest
 * `started` first; a damaged store is listed with damaged set (and
 * started 0, so last).  An absent root is an empty list.  Returns 0 or
 * -errno (opendir(3), -ENOMEM).  Free with ckpt_list_free().
 */
int ckpt_list(const char *root, struct ckpt_info **out, size_t *n);

void ckpt_list_free(struct ckpt_info *v, size_t n);

/*
 * Prints the list as `airlock undo --list` shows it: one line per store
 * (id, start in local time ISO 8601, "running", "ended" or "killed" (no
 * ended=, not running) with ",undone" once undone, saved and
 * created counts, size, workspace, command; text escaped with termtext),
 * under a header; "no checkpoints" when n is 0.
 */
void ckpt_list_print(FILE *f, const struct ckpt_info *v, size_t n);

/*
 * Finds the store id or prefix names (4..16 hex digits) under root and
 * writes its full id to out (CKPT_ID_LEN + 1 bytes).  Returns 0, -ENOENT
 * none, -EEXIST more than one (*hits says how many), -EINVAL not an id
 * prefix.
 */
int ckpt_resolve(const char *root, const char *prefix, char *out, size_t *hits);

/*
 * The newest store (by `started`) whose workspace is dir or one of its
 * ancestors (dir absolute, without symlinks).  Returns 0 with the id in out,
 * or -ENOENT.
 */
int ckpt_for_dir(const char *root, const char *dir, char *out);

/*
 * Removes the store root/id and everything in it.  Refused with -EBUSY
 * while its session runs (the lock held); an unlocked store is locked
 * LOCK_EX for the removal.  Returns 0 or -errno.
 */
int ckpt_forget(const char *root, const char *id);

/*
 * The retention rule, applied at each session start: removes every store
 * that is not running (its lock free) and either is beyond the newest
 * `keep` (counted by `started`, running ones included in the count) or
 * started more than keep_days days ago.  keep 0 or keep_days 0 turns that
 * bound off (both 0: nothing is removed).  A store without ended= (its
 * launcher was killed) is removed by the same rule only once it started
 * more than a minute ago (a session starting now may not hold its lock
 * yet).  Damaged stores (no readable meta) are left alone.  Returns the
 * number removed, or -errno with err (cap bytes) saying what failed first
 * (the others are still tried).
 */
int checkpoint_prune(const char *root, unsigned keep, unsigned keep_days, char *err, size_t cap);

#endif
