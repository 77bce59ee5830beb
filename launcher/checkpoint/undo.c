/* undo.c — `airlock undo`'s work (undo.h): check the objects, remove what the sandbox made, restore what it destroyed, keep the user's versions aside. */
#include "launcher/checkpoint/undo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/termtext.h"
#include "launcher/checkpoint/store.h"

bool ckpt_path_chosen(const char *rel, const char *const *paths, size_t npaths)
{
	if (npaths == 0)
		return true;
	for (size_t i = 0; i < npaths; i++) {
		size_t l = strlen(paths[i]);
		if (l == 0 || (strncmp(rel, paths[i], l) == 0 && (rel[l] == '\0' || rel[l] == '/')))
			return true;
	}
	return false;
}

static bool save_is_symlink(const struct ckpt_save *sv)
{
	return (sv->mode & S_IFMT) == S_IFLNK;
}

const char *ckpt_object_check(int storefd, const struct ckpt_save *sv, struct stat *st, char *buf,
			      size_t cap)
{
	char name[64];
	snprintf(name, sizeof name, "objects/%lu", sv->obj);
	if (fstatat(storefd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(buf, cap, "%s", errno == ENOENT ? "missing" : strerror(errno));
		return buf;
	}
	if (save_is_symlink(sv) ? !S_ISLNK(st->st_mode) : !S_ISREG(st->st_mode))
		return save_is_symlink(sv) ? "not a symlink" : "not a regular file";
	if ((long long)st->st_size != sv->size) {
		snprintf(buf, cap, "size %lld, the record says %lld", (long long)st->st_size, sv->size);
		return buf;
	}
	if (sv->link && !save_is_symlink(sv) && ckpt_mtime_ns(st) != sv->mtime_ns)
		return "modified since it was saved (its mtime is not the record's)";
	return NULL;
}

/* ---- the run's state ----------------------------------------------------------- */

struct devino {
	dev_t dev;
	ino_t ino;
	long long size, mtime_ns; /* as the link record says */
};

struct undo {
	struct ckpt_store *s;
	const struct ckpt_undo_options *o;
	struct ckpt_undo_result *res;
	int wsfd;
	unsigned char *bad;     /* per entry: its object failed the check */
	unsigned char *removed; /* per entry: removed (or would be, dry run) */
	struct devino *links;   /* the link objects' inodes, sorted */
	size_t nlinks;
	char tag[9];            /* the first 8 hex digits of the session id */
};

static int devino_cmp(const void *x, const void *y)
{
	const struct devino *a = x, *b = y;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (a->ino > b->ino) - (a->ino < b->ino);
}

static bool is_link_inode(const struct undo *u, const struct stat *st)
{
	struct devino k = { st->st_dev, st->st_ino, 0, 0 };
	return u->nlinks && bsearch(&k, u->links, u->nlinks, sizeof k, devino_cmp);
}

/* One of the link objects' inodes, unchanged since its name was saved (size and mtime)? */
static bool is_unchanged_link_inode(const struct undo *u, const struct stat *st)
{
	struct devino k = { st->st_dev, st->st_ino, 0, 0 };
	const struct devino *f = u->nlinks ? bsearch(&k, u->links, u->nlinks, sizeof k, devino_cmp) : NULL;
	return f && f->size == (long long)st->st_size && f->mtime_ns == ckpt_mtime_ns(st);
}

/* Does st match e's end record?  Directories: type and inode (their size and mtime move as their
   contents are put back). */
static bool matches_end(const struct ckpt_entry *e, const struct stat *st)
{
	if (!e->ended || e->end.type != ckpt_type_of(st) || e->end.ino != (unsigned long long)st->st_ino)
		return false;
	if (S_ISDIR(st->st_mode))
		return true;
	return e->end.size == (long long)st->st_size && e->end.mtime_ns == ckpt_mtime_ns(st);
}

/* Is what is at e's path now the sandbox's doing (so undo may replace it)? */
static bool sandbox_made(const struct undo *u, const struct ckpt_entry *e, const struct stat *st)
{
	if (!u->s->j.any_end)
		return false; /* the launcher was killed: nothing says what the sandbox left, so what
				 is there now is kept (aside), never overwritten or removed; said once */
	/*
	 * The sandbox only took the name away (a "link" save, no "create" after
	 * it: the writer journals every name the sandbox makes, a rename's
	 * destination included): what is there now was put there from outside,
	 * unless it is one of the checkpoint's own files moved there.
	 */
	if (e->saved && e->save.link && !e->created && !S_ISDIR(st->st_mode))
		return is_link_inode(u, st);
	return matches_end(e, st) || (!S_ISDIR(st->st_mode) && is_link_inode(u, st));
}

static void line(struct undo *u, const char *verb, const char *path, const char *suffix)
{
	fputs(verb, u->o->out);
	fputc(' ', u->o->out);
	termtext_put_text(u->o->out, path);
	if (suffix)
		termtext_put_text(u->o->out, suffix);
	fputc('\n', u->o->out);
}

static void cannot(struct undo *u, const char *path, const char *why)
{
	fputs("cannot restore ", u->o->out);
	termtext_put_text(u->o->out, path);
	fputs(": ", u->o->out);
	termtext_put_text(u->o->out, why);
	fputc('\n', u->o->out);
	u->res->not_restored++;
}

static unsigned dir_mode_of(void *arg, const char *dir)
{
	const struct undo *u = arg;
	const struct ckpt_entry *e = ckpt_journal_find(&u->s->j, dir);
	return e && e->dir ? (e->dir_mode & 07777) | 0700 : 0;
}

/* ---- keeping the user's version aside ------------------------------------------ */

/* Finds a free "NAME.airlock-kept-TAG[.N]" in dirfd into out; false when none. */
static bool kept_name(struct undo *u, int dirfd, const char *name, char *out, size_t cap)
{
	for (int i = 0; i < 100; i++) {
		int n = i ? snprintf(out, cap, "%s.airlock-kept-%s.%d", name, u->tag, i)
			  : snprintf(out, cap, "%s.airlock-kept-%s", name, u->tag);
		if (n < 0 || (size_t)n >= cap || n > NAME_MAX)
			return false;
		struct stat st;
		if (fstatat(dirfd, out, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			return true;
	}
	return false;
}

/* Renames rel (name in dirfd) aside and says so; false (said) when it cannot. */
static bool keep_aside(struct undo *u, int dirfd, const char *rel, const char *name, const char *why)
{
	char kept[NAME_MAX + 1];
	if (!kept_name(u, dirfd, name, kept, sizeof kept)) {
		cannot(u, rel, "no free name to keep the version there aside");
		return false;
	}
	if (!u->o->dry_run && renameat2(dirfd, name, dirfd, kept, RENAME_NOREPLACE) < 0) {
		char msg[256];
		snprintf(msg, sizeof msg, "cannot move the version there aside: %s", strerror(errno));
		cannot(u, rel, msg);
		return false;
	}
	char suffix[NAME_MAX + 64];
	const char *slash = strrchr(rel, '/');
	snprintf(suffix, sizeof suffix, " (%s) as %.*s%s", why,
		 slash ? (int)(slash - rel + 1) : 0, rel, kept);
	line(u, "keep", rel, suffix);
	u->res->kept++;
	return true;
}

/* ---- removing what the sandbox made ------------------------------------------- */

/* Would dirfd/name be empty once the entries marked removed are gone? */
/* The directory dirfd/name opened for reading, not through a symlink; NULL when it cannot be. */
static DIR *dir_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		close(fd);
	return d;
}

static bool empty_after(struct undo *u, int dirfd, const char *name, const char *rel)
{
	DIR *d = dir_at(dirfd, name);
	if (!d)
		return false;
	bool empty = true;
	struct dirent *de;
	char child[PATH_MAX];
	while (empty && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(child, sizeof child, "%s/%s", rel, de->d_name);
		const struct ckpt_entry *c = ckpt_journal_find(&u->s->j, child);
		empty = c && u->removed[c - u->s->j.e];
	}
	closedir(d);
	return empty;
}

/*
 * What a directory the sandbox moved there (a rename's destination) still
 * holds of the checkpoint's own: files and symlinks whose inode the store
 * kept by a link (they were moved along, their old names are restored from
 * the store) and not changed since (size and mtime as the link record says:
 * the user's later edit in place is kept), and directories holding nothing
 * else.  Removes them (unless a
 * dry run); true when nothing else is left in parent/name, which may then go.
 * A path the journal names is left to its own entry.
 */
static bool clear_moved(struct undo *u, int parent, const char *name, const char *rel, int depth)
{
	DIR *d = depth > 256 ? NULL : dir_at(parent, name);
	if (!d)
		return false;
	int fd = dirfd(d);
	bool empty = true;
	struct dirent *de;
	char child[PATH_MAX];
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(child, sizeof child, "%s/%s", rel, de->d_name) >= (int)sizeof child) {
			empty = false;
			continue;
		}
		const struct ckpt_entry *c = ckpt_journal_find(&u->s->j, child);
		struct stat st;
		bool only_end = c && c->ended && !c->saved && !c->created && !c->dir;
		if (c && !only_end) {
			empty = empty && u->removed[c - u->s->j.e];
			continue;
		}
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			empty = false;
			continue;
		}
		if (only_end) {
			/* a moved file the sandbox wrote (its old name's copy is in the store): as it left it? */
			if (!S_ISDIR(st.st_mode) && is_link_inode(u, &st) && matches_end(c, &st) &&
			    (u->o->dry_run || unlinkat(fd, de->d_name, 0) == 0))
				continue;
			empty = false;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (clear_moved(u, fd, de->d_name, child, depth + 1) &&
			    (u->o->dry_run || unlinkat(fd, de->d_name, AT_REMOVEDIR) == 0))
				continue;
		} else if (is_unchanged_link_inode(u, &st) &&
			   (u->o->dry_run || unlinkat(fd, de->d_name, 0) == 0)) {
			continue;
		}
		empty = false;
	}
	closedir(d);
	return empty;
}

static void remove_created(struct undo *u, size_t i)
{
	const struct ckpt_entry *e = &u->s->j.e[i];
	const char *name;
	int dfd = ckpt_ws_parent(u->wsfd, e->path, &name, NULL, NULL);
	if (dfd < 0)
		return; /* its parent is gone or not a directory: nothing of it is there */
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		close(dfd);
		return;
	}
	if (!sandbox_made(u, e, &st)) {
		line(u, "keep", e->path,
		     S_ISDIR(st.st_mode) ? "/ (changed outside the sandbox)"
					 : " (changed outside the sandbox after it was created)");
		u->res->kept++;
	} else if (S_ISDIR(st.st_mode)) {
		/* a directory moved there: what it brought along of the checkpoint's goes with it */
		bool moved = e->create_kind == 'r' && u->nlinks;
		bool ok = u->o->dry_run ? (moved ? clear_moved(u, dfd, name, e->path, 0)
						  : empty_after(u, dfd, name, e->path))
					: ((!moved || clear_moved(u, dfd, name, e->path, 0)) &&
					   unlinkat(dfd, name, AT_REMOVEDIR) == 0);
		if (ok) {
			line(u, "remove", e->path, "/");
			u->removed[i] = 1;
			u->res->removed++;
		} else {
			line(u, "keep", e->path, "/ (holds files made outside the sandbox)");
			u->res->kept++;
		}
	} else if (u->o->dry_run || unlinkat(dfd, name, 0) == 0) {
		line(u, "remove", e->path, NULL);
		u->removed[i] = 1;
		u->res->removed++;
	} else {
		char msg[256];
		snprintf(msg, sizeof msg, "cannot remove it: %s", strerror(errno));
		cannot(u, e->path, msg);
	}
	close(dfd);
}

/* ---- restoring ------------------------------------------------------------------ */

/* True when the file fd and the object ofd hold the same bytes (both size bytes long). */
static bool same_bytes(int fd, int ofd, long long size)
{
	char a[65536], b[65536];
	for (long long off = 0; off < size;) {
		size_t want = size - off < (long long)sizeof a ? (size_t)(size - off) : sizeof a;
		ssize_t x = pread(fd, a, want, off), y = pread(ofd, b, want, off);
		if (x <= 0 || x != y || memcmp(a, b, (size_t)x) != 0)
			return false;
		off += x;
	}
	return true;
}

/* Does what is at dfd/name (st) already hold the checkpoint's version of e? */
static bool already(struct undo *u, const struct ckpt_entry *e, int dfd, const char *name,
		    const struct stat *st)
{
	const struct ckpt_save *sv = &e->save;
	char obj[64];
	snprintf(obj, sizeof obj, "objects/%lu", sv->obj);
	if (save_is_symlink(sv)) {
		char a[PATH_MAX], b[PATH_MAX];
		ssize_t x = readlinkat(dfd, name, a, sizeof a), y = readlinkat(u->s->dirfd, obj, b, sizeof b);
		return S_ISLNK(st->st_mode) && x >= 0 && x == y && memcmp(a, b, (size_t)x) == 0;
	}
	if (!S_ISREG(st->st_mode) || (long long)st->st_size != sv->size ||
	    (st->st_mode & 07777) != (sv->mode & 07777))
		return false;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int ofd = openat(u->s->dirfd, obj, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool same = fd >= 0 && ofd >= 0 && same_bytes(fd, ofd, sv->size);
	if (fd >= 0)
		close(fd);
	if (ofd >= 0)
		close(ofd);
	return same;
}

/* Copies size bytes of ofd to fd; 0 or -errno (-EIO when the object is shorter). */
static int copy_bytes(int ofd, int fd, long long size)
{
	long long done = 0;
	while (done < size) {
		ssize_t r = copy_file_range(ofd, NULL, fd, NULL, (size_t)(size - done), 0);
		if (r < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		done += r;
	}
	char buf[65536];
	while (done < size) {
		ssize_t r = pread(ofd, buf, sizeof buf, done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		for (ssize_t w = 0; w < r;) {
			ssize_t x = pwrite(fd, buf + w, (size_t)(r - w), done + w);
			if (x < 0 && errno == EINTR)
				continue;
			if (x < 0)
				return -errno;
			w += x;
		}
		done += r;
	}
	return 0;
}

/* Writes the object of sv to a temporary name in dfd and renames it over name; 0 or -errno. */
static int put_back(struct undo *u, const struct ckpt_save *sv, const struct stat *ost, int dfd,
		    const char *name)
{
	char tmp[NAME_MAX + 1], obj[64];
	unsigned rnd = 0;
	snprintf(obj, sizeof obj, "objects/%lu", sv->obj);
	int r = 0;
	for (int tries = 0;; tries++) {
		if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
			rnd = (unsigned)time(NULL) ^ (unsigned)getpid() ^ (unsigned)tries;
		snprintf(tmp, sizeof tmp, ".airlock-undo-%08x", rnd);
		if (save_is_symlink(sv)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(u->s->dirfd, obj, target, sizeof target - 1);
			if (n < 0 || n != sv->size)
				return n < 0 ? -errno : -EIO;
			target[n] = '\0';
			if (symlinkat(target, dfd, tmp) == 0)
				break;
		} else {
			int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					0600);
			if (fd >= 0) {
				int ofd = openat(u->s->dirfd, obj, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
				r = ofd < 0 ? -errno : copy_bytes(ofd, fd, sv->size);
				if (ofd >= 0)
					close(ofd);
				struct timespec ts[2] = {
					{ .tv_nsec = UTIME_OMIT },
					{ .tv_sec = sv->mtime_ns / 1000000000LL,
					  .tv_nsec = sv->mtime_ns % 1000000000LL },
				};
				if (!r && geteuid() == 0 && fchown(fd, ost->st_uid, ost->st_gid) < 0)
					r = -errno;
				if (!r && fchmod(fd, sv->mode & 07777) < 0)
					r = -errno;
				if (!r && futimens(fd, ts) < 0)
					r = -errno;
				if (close(fd) < 0 && !r)
					r = -errno;
				if (r) {
					unlinkat(dfd, tmp, 0);
					return r;
				}
				break;
			}
		}
		if (errno != EEXIST || tries > 16)
			return -errno;
	}
	if (save_is_symlink(sv) && geteuid() == 0)
		(void)fchownat(dfd, tmp, ost->st_uid, ost->st_gid, AT_SYMLINK_NOFOLLOW);
	if (renameat(dfd, tmp, dfd, name) < 0) {
		r = -errno;
		unlinkat(dfd, tmp, 0);
		return r;
	}
	return 0;
}

/* Clears what is at dfd/name (st) out of the way of e's restore; false when it stays (said). */
static bool clear_way(struct undo *u, const struct ckpt_entry *e, int dfd, const char *name,
		      const struct stat *st, bool want_dir)
{
	if (!sandbox_made(u, e, st))
		return keep_aside(u, dfd, e->path, name, "changed outside the sandbox");
	if (S_ISDIR(st->st_mode)) {
		if (want_dir)
			return true;
		const char *rel = e->path;
		if (u->o->dry_run ? empty_after(u, dfd, name, rel) : unlinkat(dfd, name, AT_REMOVEDIR) == 0)
			return true;
		return keep_aside(u, dfd, rel, name, "a directory holding files made outside the sandbox");
	}
	if (want_dir && !u->o->dry_run && unlinkat(dfd, name, 0) < 0) {
		char msg[256];
		snprintf(msg, sizeof msg, "cannot remove what is there: %s", strerror(errno));
		cannot(u, e->path, msg);
		return false;
	}
	return true; /* a file the rename replaces */
}

static void restore_entry(struct undo *u, size_t i)
{
	const struct ckpt_entry *e = &u->s->j.e[i];
	bool want_dir = !e->saved;
	const char *name;
	int dfd = u->o->dry_run ? ckpt_ws_parent(u->wsfd, e->path, &name, NULL, NULL)
				: ckpt_ws_parent(u->wsfd, e->path, &name, dir_mode_of, u);
	if (dfd == -ENOENT && u->o->dry_run) {
		/* its parents are made on the way: nothing is there */
		line(u, "restore", e->path, want_dir ? "/" : NULL);
		u->res->restored++;
		return;
	}
	if (dfd < 0) {
		char msg[256];
		snprintf(msg, sizeof msg, "%s", dfd == -ENOTDIR ? "a parent directory is not a directory (left so outside the sandbox)"
								: strerror(-dfd));
		cannot(u, e->path, msg);
		return;
	}
	struct stat st, ost;
	bool there = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (want_dir && there && S_ISDIR(st.st_mode)) {
		close(dfd);
		return;
	}
	if (!want_dir && there && already(u, e, dfd, name, &st)) {
		u->res->unchanged++;
		close(dfd);
		return;
	}
	if (there && !clear_way(u, e, dfd, name, &st, want_dir)) {
		close(dfd);
		return;
	}
	int r = 0;
	char why[256];
	if (!u->o->dry_run) {
		if (want_dir) {
			unsigned m = (e->dir_mode & 07777) | 0700;
			if (mkdirat(dfd, name, m) < 0 && errno != EEXIST)
				r = -errno; /* its exact mode is set by dir_modes() once it is filled */
		} else if (ckpt_object_check(u->s->dirfd, &e->save, &ost, why, sizeof why)) {
			r = -ESTALE; /* changed since the check */
		} else {
			r = put_back(u, &e->save, &ost, dfd, name);
		}
	}
	if (r < 0) {
		char msg[256];
		snprintf(msg, sizeof msg, "%s", r == -ESTALE ? "its checkpoint object changed during the undo" : strerror(-r));
		cannot(u, e->path, msg);
	} else {
		line(u, "restore", e->path, want_dir ? "/" : NULL);
		u->res->restored++;
	}
	close(dfd);
}

/* Sets a directory's recorded mode back once its contents are in (a 0555 dir was made 0755 to fill it). */
static void dir_modes(struct undo *u)
{
	for (size_t i = u->s->j.n; i-- > 0;) {
		const struct ckpt_entry *e = &u->s->j.e[i];
		if (!e->dir || ckpt_store_ignored(u->s, e->path) ||
		    !ckpt_path_chosen(e->path, u->o->paths, u->o->npaths))
			continue;
		const char *name;
		int dfd = ckpt_ws_parent(u->wsfd, e->path, &name, NULL, NULL);
		if (dfd < 0)
			continue;
		struct stat st;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		    (st.st_mode & 07777) != (e->dir_mode & 07777))
			(void)fchmodat(dfd, name, e->dir_mode & 07777, 0);
		close(dfd);
	}
}

int ckpt_undo(struct ckpt_store *s, const struct ckpt_undo_options *o, struct ckpt_undo_result *res)
{
	memset(res, 0, sizeof *res);
	struct undo u = { .s = s, .o = o, .res = res };
	snprintf(u.tag, sizeof u.tag, "%.8s", s->id);
	u.wsfd = open(s->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (u.wsfd < 0)
		return -errno;
	const struct ckpt_journal *j = &s->j;
	u.bad = calloc(j->n + 1, 1);
	u.removed = calloc(j->n + 1, 1);
	u.links = calloc(j->nlinks + 1, sizeof *u.links);
	if (!u.bad || !u.removed || !u.links) {
		free(u.bad);
		free(u.removed);
		free(u.links);
		close(u.wsfd);
		return -ENOMEM;
	}
	int status = 0;
	if (j->bad_lines) {
		fprintf(o->err, "airlock: undo: the journal of %s has %zu damaged line%s (the first: line %zu), left out: what they recorded is not undone\n",
			s->id, j->bad_lines, j->bad_lines == 1 ? "" : "s", j->first_bad);
		status = 1;
	}
	if (!j->any_end && j->n)
		fprintf(o->err, "airlock: undo: %s has no end records (its launcher was killed): what is at a changed path now is kept aside or left, never overwritten or removed\n",
			s->id);
	for (size_t i = 0; i < j->nlinks; i++) {
		char name[64];
		struct stat st;
		snprintf(name, sizeof name, "objects/%lu", j->links[i].obj);
		if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			u.links[u.nlinks++] = (struct devino){ st.st_dev, st.st_ino, j->links[i].size,
							       j->links[i].mtime_ns };
	}
	qsort(u.links, u.nlinks, sizeof *u.links, devino_cmp);

	/* 1: the objects, before anything changes */
	for (size_t i = 0; i < j->n; i++) {
		const struct ckpt_entry *e = &j->e[i];
		if (!e->saved || ckpt_store_ignored(s, e->path) ||
		    !ckpt_path_chosen(e->path, o->paths, o->npaths))
			continue;
		char buf[128], msg[256];
		struct stat st;
		const char *why = ckpt_object_check(s->dirfd, &e->save, &st, buf, sizeof buf);
		if (why) {
			u.bad[i] = 1;
			snprintf(msg, sizeof msg, "checkpoint object %lu is damaged/missing (%s)", e->save.obj, why);
			cannot(&u, e->path, msg);
		}
	}
	/* 2: what the sandbox made, deepest first */
	for (size_t i = j->n; i-- > 0;) {
		const struct ckpt_entry *e = &j->e[i];
		if (e->created && !e->saved && !e->dir && !ckpt_store_ignored(s, e->path) &&
		    ckpt_path_chosen(e->path, o->paths, o->npaths))
			remove_created(&u, i);
	}
	/* 3, 4: what it destroyed, parents first */
	for (size_t i = 0; i < j->n; i++) {
		const struct ckpt_entry *e = &j->e[i];
		if ((e->saved || e->dir) && !u.bad[i] && !ckpt_store_ignored(s, e->path) &&
		    ckpt_path_chosen(e->path, o->paths, o->npaths))
			restore_entry(&u, i);
	}
	if (!o->dry_run) {
		dir_modes(&u);
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		char v[32];
		snprintf(v, sizeof v, "%lld", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
		if (store_meta_put(s->dirfd, "undone", v) < 0)
			fprintf(o->err, "airlock: undo: cannot note the undo in %s/meta: %m\n", s->dir);
	}
	if (res->not_restored)
		status = 1;
	free(u.bad);
	free(u.removed);
	free(u.links);
	close(u.wsfd);
	return status;
}
