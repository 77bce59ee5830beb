/*
 * journal.h — the reader's view of a checkpoint store (store.h): its
 * journal folded into one entry per path, its meta, its ignored list, and
 * the safe walk `airlock diff` and `airlock undo` take into the workspace.
 */
#ifndef AIRLOCK_CHECKPOINT_JOURNAL_H
#define AIRLOCK_CHECKPOINT_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A "save" record: where PATH's content at the checkpoint is. */
struct ckpt_save {
	unsigned long obj;  /* objects/OBJ */
	bool link;          /* HOW "link" (the same inode) rather than "copy" */
	unsigned mode;      /* MODE as written: permission bits, perhaps with S_IFMT bits */
	long long size;     /* SIZE, bytes */
	long long mtime_ns; /* MTIME_NS, ns since the epoch */
};

/* An "end" record: what the sandbox left at PATH when the session ended. */
struct ckpt_end {
	char type; /* 'f', 'd', 'l', 'o', or '-' (absent) */
	unsigned long long ino;
	long long size, mtime_ns;
};

/* Everything the journal says of one path (relative to the workspace). */
struct ckpt_entry {
	char *path;            /* owned; unescaped, relative, no "." / ".." / empty parts */
	bool saved;            /* a "save" record: the last one is in save */
	struct ckpt_save save;
	bool dir;              /* a "dir" record: a directory at the start, mode dir_mode */
	unsigned dir_mode;
	bool created;          /* a "create" record: kind create_kind (first letter of KIND) */
	char create_kind;      /* 'f' file, 'd' dir, 's' symlink, 'l' link, 'n' node, 'r' rename */
	bool ended;            /* an "end" record: the last one is in end */
	struct ckpt_end end;
};

/* Every "save ... link" record (superseded ones too): inodes that were the workspace's. */
struct ckpt_link {
	unsigned long obj;
	const char *path; /* borrowed from the entry of that path */
	long long size, mtime_ns;
};

/* A parsed journal. */
struct ckpt_journal {
	struct ckpt_entry *e; /* owned; sorted by path (strcmp), one per path */
	size_t n;
	struct ckpt_link *links; /* owned; in journal order */
	size_t nlinks;
	bool any_end;        /* at least one "end" record (else the launcher was killed) */
	size_t bad_lines;    /* lines that did not parse, or named an unsafe path: left out */
	size_t first_bad;    /* the first one's line number (1-based), 0 when none */
	bool cut;            /* the last line had no '\n' (a killed writer): left out */
	size_t saves, creates; /* "save" and "create" records counted (paths, not records) */
};

/*
 * Parses a journal held in buf (len bytes, not NUL-terminated) into *j
 * (zeroed first).  Lines are store.h's records; an unknown record kind, a
 * wrong field count, a number that does not parse, a field that does not
 * unescape, a line longer than STORE_LINE_MAX or a path that is absolute,
 * empty, or has an empty, "." or ".." part counts in bad_lines and is left
 * out.  Returns 0, or -ENOMEM (*j is then empty).  Free with
 * ckpt_journal_free().
 */
int ckpt_journal_parse(const char *buf, size_t len, struct ckpt_journal *j);

/* Reads and parses the file "journal" in the store dirfd; absent is empty.  0 or -errno. */
int ckpt_journal_load(int dirfd, struct ckpt_journal *j);

/* Frees what j owns and empties it. */
void ckpt_journal_free(struct ckpt_journal *j);

/* The entry of path, or NULL (binary search). */
struct ckpt_entry *ckpt_journal_find(const struct ckpt_journal *j, const char *path);

/* ---- a store, opened --------------------------------------------------------- */

#define CKPT_ID_LEN 16

/* A session's store, opened for reading (and for undo). */
struct ckpt_store {
	int dirfd;                 /* the store directory, O_PATH-free: readable */
	char *dir;                 /* owned; its path */
	char id[CKPT_ID_LEN + 1];  /* the directory's name */
	char *workspace;           /* owned; meta workspace= (absolute) */
	char *command;             /* owned; meta command=, or "" */
	long long started, ended;  /* ns since the epoch; ended 0: no ended= line */
	long long undone;          /* the last undone=, or 0 */
	bool git;                  /* meta git=1 */
	bool ignored_covered;      /* meta ignored=1 */
	char **ignored;            /* owned; the "ignored" file's paths ('/'-ended for dirs) */
	size_t nignored;
	bool running;              /* another process holds the lock file's lock */
	int lockfd;                /* the lock file, holding our lock; -1 when none taken */
	struct ckpt_journal j;
};

/*
 * Opens root/ID and reads its meta, ignored list and journal.  lock: 0 read
 * only (running is probed: flock(LOCK_SH|LOCK_NB) on "lock", released at
 * once); LOCK_SH or LOCK_EX: that lock is taken without blocking and kept
 * in lockfd until ckpt_store_close() (running is true when it cannot be
 * taken: flock(2)'s EWOULDBLOCK).  A missing "lock" file counts as not
 * running.  Returns 0, or -errno with err (cap bytes) saying what is wrong:
 * -ENOENT no such store, -EINVAL a damaged meta (no session=, workspace= or
 * started=, or a version other than 1).
 */
int ckpt_store_open(const char *root, const char *id, int lock, struct ckpt_store *s, char *err,
		    size_t cap);

/*
 * The counts `airlock log --summary` prints for session id: paths saved and
 * created by its store under root.  Returns 0, or -errno (-ENOENT: no store,
 * -EINVAL: id is not 16 hex digits or the store is damaged).
 */
int ckpt_counts(const char *root, const char *id, size_t *saved, size_t *created);

/* Releases the lock and frees what s owns. */
void ckpt_store_close(struct ckpt_store *s);

/* True when rel (relative to the workspace) is at or beneath one of s's ignored paths. */
bool ckpt_store_ignored(const struct ckpt_store *s, const char *rel);

/*
 * lstat(2) of rel beneath the directory wsfd without following a symlink
 * in any component (each one opened with O_NOFOLLOW|O_DIRECTORY): a
 * symlink the sandbox planted cannot lead out of the workspace.  Returns 0,
 * -ENOENT (absent), -ENOTDIR / -ELOOP (a parent is not a directory), or
 * another -errno.
 */
int ckpt_ws_lstat(int wsfd, const char *rel, struct stat *st);

/*
 * Opens rel's parent beneath wsfd as ckpt_ws_lstat() walks, and points
 * *name at rel's last part.  When mkdir_mode is not NULL, missing parents
 * are created: each with mkdir_mode(arg, its relative path), 0755 when that
 * returns 0.  Returns the directory fd (O_CLOEXEC), or -errno.
 */
int ckpt_ws_parent(int wsfd, const char *rel, const char **name,
		   unsigned (*mkdir_mode)(void *arg, const char *dir), void *arg);

/* st's type as an "end" record writes it: 'f', 'd', 'l' or 'o'. */
char ckpt_type_of(const struct stat *st);

/* st's mtime in ns since the epoch. */
long long ckpt_mtime_ns(const struct stat *st);

#endif
