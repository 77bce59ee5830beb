/* diff.c — `airlock diff` (diff.h): the files a session changed, as diff(1) or digests, and what it did to the git repository. */
#include "launcher/checkpoint/diff.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/termtext.h"
#include "launcher/checkpoint/undo.h"

int ckpt_sha256_fd(int fd, char hex[65])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return -ENOMEM;
	}
	char buf[65536];
	off_t off = 0;
	int r = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof buf, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
			r = -ENOMEM;
			break;
		}
		off += n;
	}
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	if (!r && EVP_DigestFinal_ex(ctx, md, &len) != 1)
		r = -ENOMEM;
	EVP_MD_CTX_free(ctx);
	if (r)
		return r;
	for (unsigned i = 0; i < len && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = '\0';
	return 0;
}

bool ckpt_fd_binary(int fd)
{
	char buf[8000];
	ssize_t n = pread(fd, buf, sizeof buf, 0);
	return n > 0 && memchr(buf, '\0', (size_t)n) != NULL;
}

/* ---- running programs ----------------------------------------------------------- */

/*
 * Runs argv (no shell) with in (inlen bytes) on its stdin and stdout
 * captured into *out (malloc'd, NUL-terminated; NULL: to our stdout), stderr
 * discarded.  The fds keep[0..nkeep) stay open across the exec.  Returns the
 * exit status, or -1 when it could not run or was killed.
 */
static int run(char *const argv[], const char *in, size_t inlen, char **out, const int *keep,
	       int nkeep, int outfd)
{
	int infd = -1, p[2] = { -1, -1 };
	if (in) {
		infd = memfd_create("airlock-stdin", MFD_CLOEXEC);
		if (infd < 0 || write(infd, in, inlen) != (ssize_t)inlen || lseek(infd, 0, SEEK_SET) < 0) {
			if (infd >= 0)
				close(infd);
			return -1;
		}
	}
	if (out && pipe2(p, O_CLOEXEC) < 0) {
		if (infd >= 0)
			close(infd);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		dup2(infd >= 0 ? infd : devnull, 0);
		if (out)
			dup2(p[1], 1);
		else if (outfd != 1)
			dup2(outfd, 1);
		dup2(devnull, 2);
		for (int i = 0; i < nkeep; i++)
			fcntl(keep[i], F_SETFD, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (infd >= 0)
		close(infd);
	if (out)
		close(p[1]);
	if (pid < 0) {
		if (out)
			close(p[0]);
		return -1;
	}
	if (out) {
		size_t n = 0, cap = 4096;
		char *buf = malloc(cap);
		for (;;) {
			if (buf && n + 1 >= cap) {
				char *g = realloc(buf, cap *= 2);
				if (!g) {
					free(buf);
					buf = NULL;
				}
				buf = g;
			}
			char sink[4096];
			ssize_t r = buf ? read(p[0], buf + n, cap - 1 - n) : read(p[0], sink, sizeof sink);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (buf)
				n += (size_t)r;
		}
		close(p[0]);
		if (buf)
			buf[n] = '\0';
		*out = buf;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- files ------------------------------------------------------------------------ */

struct devpath {
	dev_t dev;
	ino_t ino;
	const char *path;
};

static int devpath_cmp(const void *x, const void *y)
{
	const struct devpath *a = x, *b = y;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (a->ino > b->ino) - (a->ino < b->ino);
}

struct dif {
	struct ckpt_store *s;
	const struct ckpt_diff_options *o;
	int wsfd;
	int status;
	struct devpath *links; /* link objects' inodes and the paths they were */
	size_t nlinks;
	const char **renamed_to; /* per entry: the path its original went to, or NULL */
};

static void put(struct dif *d, const char *text)
{
	termtext_put_text(d->o->out, text);
}

static const char *type_name(mode_t m)
{
	return S_ISREG(m) ? "a regular file" : S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symlink"
										      : "a special file";
}

/* One side of a change: an fd on its bytes (-1: none) and its stat. */
struct side {
	int fd;
	struct stat st;
	bool there;
};

static void digest_line(struct dif *d, const char *label, const struct side *x)
{
	char hex[65];
	if (!x->there) {
		fprintf(d->o->out, "%s: none", label);
		return;
	}
	if (ckpt_sha256_fd(x->fd, hex) < 0)
		snprintf(hex, sizeof hex, "(unreadable)");
	fprintf(d->o->out, "%s: %lld bytes, sha256 %s", label, (long long)x->st.st_size, hex);
}

/* The content change between a and b for the path labels la, lb. */
static void show_change(struct dif *d, const char *la, const char *lb, const struct side *a,
			const struct side *b)
{
	if (a->there && b->there && (a->st.st_mode & S_IFMT) != (b->st.st_mode & S_IFMT)) {
		put(d, lb);
		fprintf(d->o->out, ": was %s, now %s\n", type_name(a->st.st_mode), type_name(b->st.st_mode));
		return;
	}
	if ((a->there && !S_ISREG(a->st.st_mode)) || (b->there && !S_ISREG(b->st.st_mode))) {
		put(d, lb);
		fprintf(d->o->out, ": %s %s\n", type_name((a->there ? a : b)->st.st_mode),
			!a->there ? "created" : !b->there ? "deleted" : "changed");
		return;
	}
	if (a->there && b->there && (a->st.st_mode & 07777) != (b->st.st_mode & 07777)) {
		fputs("mode ", d->o->out);
		put(d, lb);
		fprintf(d->o->out, ": %04o -> %04o\n", (unsigned)(a->st.st_mode & 07777),
			(unsigned)(b->st.st_mode & 07777));
	}
	if ((a->there && ckpt_fd_binary(a->fd)) || (b->there && ckpt_fd_binary(b->fd))) {
		fputs("binary ", d->o->out);
		put(d, lb);
		fputs(": ", d->o->out);
		digest_line(d, "before", a);
		fputs("; ", d->o->out);
		digest_line(d, "after", b);
		fputc('\n', d->o->out);
		return;
	}
	char fa[32] = "/dev/null", fb[32] = "/dev/null", lab_a[PATH_MAX + 3], lab_b[PATH_MAX + 3];
	int keep[2], nk = 0;
	if (a->there) {
		snprintf(fa, sizeof fa, "/dev/fd/%d", a->fd);
		keep[nk++] = a->fd;
	}
	if (b->there) {
		snprintf(fb, sizeof fb, "/dev/fd/%d", b->fd);
		keep[nk++] = b->fd;
	}
	snprintf(lab_a, sizeof lab_a, "a/%s", la);
	snprintf(lab_b, sizeof lab_b, "b/%s", lb);
	char *argv[] = { "diff", "-u", "--label", lab_a, "--label", lab_b, fa, fb, NULL };
	if (a->there)
		lseek(a->fd, 0, SEEK_SET);
	if (b->there)
		lseek(b->fd, 0, SEEK_SET);
	int outfd = fileno(d->o->out);
	int st = run(argv, NULL, 0, NULL, keep, nk, outfd >= 0 ? outfd : 1);
	if (st < 0 || st > 1) {
		fputs("airlock: diff: diff(1) failed on ", d->o->err);
		termtext_put_text(d->o->err, lb);
		fputc('\n', d->o->err);
	}
}

/* Opens the object of e as side a; false (said, status 1) when it is damaged. */
static bool object_side(struct dif *d, const struct ckpt_entry *e, struct side *a)
{
	char buf[128], name[64];
	const char *why = ckpt_object_check(d->s->dirfd, &e->save, &a->st, buf, sizeof buf);
	if (why) {
		fputs("damaged ", d->o->out);
		put(d, e->path);
		fprintf(d->o->out, ": checkpoint object %lu is damaged/missing (%s)\n", e->save.obj, why);
		d->status = 1;
		return false;
	}
	snprintf(name, sizeof name, "objects/%lu", e->save.obj);
	a->fd = S_ISREG(a->st.st_mode) ? openat(d->s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	a->there = true;
	return true;
}

/* Opens what is at rel now as side b. */
static void now_side(struct dif *d, const char *rel, struct side *b)
{
	const char *name;
	b->fd = -1;
	b->there = false;
	int dfd = ckpt_ws_parent(d->wsfd, rel, &name, NULL, NULL);
	if (dfd < 0)
		return;
	if (fstatat(dfd, name, &b->st, AT_SYMLINK_NOFOLLOW) == 0) {
		b->there = true;
		if (S_ISREG(b->st.st_mode))
			b->fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	close(dfd);
}

static void side_close(struct side *x)
{
	if (x->there && x->fd >= 0)
		close(x->fd);
	x->fd = -1;
}

/* Same bytes (and mode) on both sides? */
static bool same(const struct side *a, const struct side *b)
{
	if (!a->there || !b->there)
		return a->there == b->there;
	if (a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino)
		return true;
	if ((a->st.st_mode & 07777) != (b->st.st_mode & 07777) ||
	    (a->st.st_mode & S_IFMT) != (b->st.st_mode & S_IFMT) || a->st.st_size != b->st.st_size)
		return false;
	if (!S_ISREG(a->st.st_mode) || a->fd < 0 || b->fd < 0)
		return false;
	char x[65536], y[65536];
	for (off_t off = 0; off < a->st.st_size;) {
		ssize_t n = pread(a->fd, x, sizeof x, off), m = pread(b->fd, y, sizeof y, off);
		if (n <= 0 || n != m || memcmp(x, y, (size_t)n) != 0)
			return false;
		off += n;
	}
	return true;
}

static void stat_line(struct dif *d, char c, const char *path, const char *to)
{
	fprintf(d->o->out, "%c ", c);
	put(d, path);
	if (to) {
		fputs(" -> ", d->o->out);
		put(d, to);
	}
	fputc('\n', d->o->out);
}

static bool chosen(const struct dif *d, const char *path)
{
	return !ckpt_store_ignored(d->s, path) && ckpt_path_chosen(path, d->o->paths, d->o->npaths);
}

/* The rename's source, for a created entry that is a saved one moved. */
static const char *rename_source(const struct dif *d, const char *path)
{
	for (size_t i = 0; i < d->s->j.n; i++)
		if (d->renamed_to[i] && strcmp(d->renamed_to[i], path) == 0)
			return d->s->j.e[i].path;
	return NULL;
}

/* The same bytes on both sides (regular files, whatever their modes)? */
static bool same_content(const struct side *a, const struct side *b)
{
	if (a->st.st_size != b->st.st_size)
		return false;
	char x[65536], y[65536];
	for (off_t off = 0; off < a->st.st_size;) {
		ssize_t n = pread(a->fd, x, sizeof x, off), m = pread(b->fd, y, sizeof y, off);
		if (n <= 0 || n != m || memcmp(x, y, (size_t)n) != 0)
			return false;
		off += n;
	}
	return true;
}

static void find_renames(struct dif *d)
{
	const struct ckpt_journal *j = &d->s->j;
	for (size_t i = 0; i < j->nlinks; i++) {
		char name[64];
		struct stat st;
		snprintf(name, sizeof name, "objects/%lu", j->links[i].obj);
		if (fstatat(d->s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			d->links[d->nlinks++] = (struct devpath){ st.st_dev, st.st_ino, j->links[i].path };
	}
	qsort(d->links, d->nlinks, sizeof *d->links, devpath_cmp);
	for (size_t i = 0; i < j->n; i++) {
		const struct ckpt_entry *e = &j->e[i];
		struct stat st;
		if (!e->created || e->saved || ckpt_ws_lstat(d->wsfd, e->path, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		struct devpath k = { st.st_dev, st.st_ino, NULL };
		const struct devpath *hit = d->nlinks ? bsearch(&k, d->links, d->nlinks, sizeof k, devpath_cmp) : NULL;
		if (!hit)
			continue;
		const struct ckpt_entry *old = ckpt_journal_find(j, hit->path);
		struct stat ost;
		if (old && ckpt_ws_lstat(d->wsfd, old->path, &ost) == -ENOENT)
			d->renamed_to[old - j->e] = e->path;
	}
	/* then exact renames by content (git's 100% similarity): a deleted file's bytes at a created
	   path, when no inode said it (a program that copied, or rewrote the file before moving it) */
	for (size_t i = 0; i < j->n; i++) {
		const struct ckpt_entry *e = &j->e[i];
		struct side b = { .fd = -1 };
		if (!e->created || e->saved || rename_source(d, e->path))
			continue;
		now_side(d, e->path, &b);
		if (!b.there || b.fd < 0) {
			side_close(&b);
			continue;
		}
		for (size_t k = 0; k < j->n; k++) {
			const struct ckpt_entry *o = &j->e[k];
			struct stat st, ost;
			char buf[64];
			if (!o->saved || d->renamed_to[k] || o->save.size != (long long)b.st.st_size ||
			    ckpt_ws_lstat(d->wsfd, o->path, &st) != -ENOENT ||
			    ckpt_object_check(d->s->dirfd, &o->save, &ost, buf, sizeof buf) ||
			    !S_ISREG(ost.st_mode))
				continue;
			struct side a = { .st = ost, .there = true };
			snprintf(buf, sizeof buf, "objects/%lu", o->save.obj);
			a.fd = openat(d->s->dirfd, buf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			bool hit = a.fd >= 0 && same_content(&a, &b);
			side_close(&a);
			if (hit) {
				d->renamed_to[k] = e->path;
				break;
			}
		}
		side_close(&b);
	}
}


static void file_entry(struct dif *d, size_t i)
{
	const struct ckpt_entry *e = &d->s->j.e[i];
	struct side a = { .fd = -1 }, b = { .fd = -1 };
	if (e->saved) {
		if (d->renamed_to[i])
			return; /* listed at its new path */
		if (!object_side(d, e, &a))
			return;
		now_side(d, e->path, &b);
		if (!same(&a, &b)) {
			char c = b.there ? 'M' : 'D';
			if (d->o->stat)
				stat_line(d, c, e->path, NULL);
			else
				show_change(d, e->path, e->path, &a, &b);
		}
	} else if (e->created && !e->dir) {
		now_side(d, e->path, &b);
		if (!b.there || (S_ISDIR(b.st.st_mode) && e->create_kind == 'd'))
			goto out;
		const char *src = rename_source(d, e->path);
		if (src) {
			const struct ckpt_entry *old = ckpt_journal_find(&d->s->j, src);
			if (d->o->stat)
				stat_line(d, 'R', src, e->path);
			else {
				fputs("renamed ", d->o->out);
				put(d, src);
				fputs(" -> ", d->o->out);
				put(d, e->path);
				fputc('\n', d->o->out);
				if (old && object_side(d, old, &a) && !same(&a, &b))
					show_change(d, src, e->path, &a, &b);
			}
		} else if (d->o->stat) {
			stat_line(d, 'A', e->path, NULL);
		} else {
			show_change(d, e->path, e->path, &a, &b);
		}
	} else if (e->dir && !e->saved) {
		struct stat st;
		if (ckpt_ws_lstat(d->wsfd, e->path, &st) == 0)
			goto out;
		/* only the topmost directory that went */
		const char *slash = strrchr(e->path, '/');
		if (slash) {
			char parent[PATH_MAX];
			snprintf(parent, sizeof parent, "%.*s", (int)(slash - e->path), e->path);
			const struct ckpt_entry *p = ckpt_journal_find(&d->s->j, parent);
			if (p && p->dir && ckpt_ws_lstat(d->wsfd, parent, &st) == -ENOENT)
				goto out;
		}
		if (d->o->stat)
			stat_line(d, 'D', e->path, NULL);
		else {
			fputs("deleted directory ", d->o->out);
			put(d, e->path);
			fputs("/\n", d->o->out);
		}
	}
out:
	side_close(&a);
	side_close(&b);
}

/* ---- git ---------------------------------------------------------------------------- */

struct ref {
	char *name; /* owned */
	char sha[72];
};

struct refs {
	struct ref *v;
	size_t n, cap;
};

static void refs_add(struct refs *r, const char *name, size_t nlen, const char *sha, size_t slen)
{
	if (r->n == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 32;
		struct ref *g = realloc(r->v, ncap * sizeof *g);
		if (!g)
			return;
		r->v = g;
		r->cap = ncap;
	}
	struct ref *x = &r->v[r->n];
	if (!(x->name = strndup(name, nlen)))
		return;
	snprintf(x->sha, sizeof x->sha, "%.*s", (int)(slen < 71 ? slen : 71), sha);
	r->n++;
}

static void refs_free(struct refs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	memset(r, 0, sizeof *r);
}

static int ref_cmp(const void *x, const void *y)
{
	return strcmp(((const struct ref *)x)->name, ((const struct ref *)y)->name);
}

static const struct ref *refs_find(const struct refs *r, const char *name)
{
	struct ref k = { .name = (char *)name };
	return r->n ? bsearch(&k, r->v, r->n, sizeof k, ref_cmp) : NULL;
}

static bool is_sha(const char *s, size_t n)
{
	return (n == 40 || n == 64) && strspn(s, "0123456789abcdef") >= n;
}

/* The refs file: refs (without refs/stash), HEAD's value, the stash entries in order. */
static void read_old(struct dif *d, struct refs *refs, char *head, size_t hcap, struct refs *stash)
{
	int fd = openat(d->s->dirfd, "refs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] != '\n')
			break;
		line[--n] = '\0';
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		size_t a = (size_t)(sp - line);
		const char *rest = sp + 1;
		if (a == 4 && strncmp(line, "HEAD", 4) == 0)
			snprintf(head, hcap, "%s", rest);
		else if (strncmp(line, "stash@{", 7) == 0 && is_sha(rest, strlen(rest)))
			refs_add(stash, line, a, rest, strlen(rest));
		else if (is_sha(line, a) && strcmp(rest, "refs/stash") != 0)
			refs_add(refs, rest, strlen(rest), line, a);
	}
	free(line);
	fclose(f);
}

static int git(struct dif *d, const char *in, char **out, const char *a1, const char *a2,
	       const char *a3, const char *a4)
{
	char *argv[] = { "git", "--no-pager", "-C", d->s->workspace, (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL };
	return run(argv, in, in ? strlen(in) : 0, out, NULL, 0, 1);
}

static void put_sha(struct dif *d, const char *sha)
{
	fprintf(d->o->out, "%.12s", sha);
}

static void git_part(struct dif *d)
{
	struct refs old = { 0 }, now = { 0 }, ostash = { 0 };
	char ohead[PATH_MAX] = "", nhead[PATH_MAX] = "";
	read_old(d, &old, ohead, sizeof ohead, &ostash);
	if (old.n)
		qsort(old.v, old.n, sizeof *old.v, ref_cmp);
	FILE *o = d->o->out;
	char *out = NULL;
	if (git(d, NULL, &out, "rev-parse", "--git-dir", NULL, NULL) != 0) {
		free(out);
		fputs("git: the repository is gone (git rev-parse fails in the workspace): its references were:\n", o);
		for (size_t i = 0; i < old.n; i++) {
			fputs("  deleted ", o);
			put(d, old.v[i].name);
			fprintf(o, " (was %s)\n", old.v[i].sha);
		}
		for (size_t i = 0; i < ostash.n; i++)
			fprintf(o, "  stash dropped: %s (%s)\n", ostash.v[i].sha, ostash.v[i].name);
		goto done;
	}
	free(out);
	out = NULL;
	if (git(d, NULL, &out, "for-each-ref", "--format=%(objectname) %(refname)", NULL, NULL) == 0 && out) {
		for (char *l = out, *nl; (nl = strchr(l, '\n')) != NULL; l = nl + 1) {
			*nl = '\0';
			char *sp = strchr(l, ' ');
			if (sp && is_sha(l, (size_t)(sp - l)) && strcmp(sp + 1, "refs/stash") != 0)
				refs_add(&now, sp + 1, strlen(sp + 1), l, (size_t)(sp - l));
		}
	}
	free(out);
	out = NULL;
	if (now.n)
		qsort(now.v, now.n, sizeof *now.v, ref_cmp);
	if (git(d, NULL, &out, "symbolic-ref", "-q", "HEAD", NULL) == 0 && out && *out) {
		out[strcspn(out, "\n")] = '\0';
		snprintf(nhead, sizeof nhead, "ref: %s", out);
	} else {
		free(out);
		out = NULL;
		if (git(d, NULL, &out, "rev-parse", "-q", "--verify", "HEAD") == 0 && out)
			snprintf(nhead, sizeof nhead, "%.*s", (int)strcspn(out, "\n"), out);
	}
	free(out);
	out = NULL;
	if (ohead[0] && strcmp(ohead, nhead) != 0) {
		fputs("git: HEAD ", o);
		put(d, ohead);
		fputs(" -> ", o);
		put(d, nhead[0] ? nhead : "(none)");
		fputc('\n', o);
	}
	/* references still there whose commit is gone (the objects deleted under them) */
	char *shas = NULL;
	size_t slen = 0;
	FILE *sf = now.n ? open_memstream(&shas, &slen) : NULL;
	for (size_t i = 0; sf && i < now.n; i++)
		fprintf(sf, "%s\n", now.v[i].sha);
	if (sf && fclose(sf) == 0 && shas &&
	    git(d, shas, &out, "cat-file", "--batch-check=%(objectname)", NULL, NULL) == 0 && out) {
		for (size_t i = 0; i < now.n; i++) {
			char miss[160];
			snprintf(miss, sizeof miss, "%s missing\n", now.v[i].sha);
			if (!strstr(out, miss))
				continue;
			fputs("git: broken ", o);
			put(d, now.v[i].name);
			fprintf(o, ": its commit %s is gone (deleted in the session)\n", now.v[i].sha);
		}
	}
	free(shas);
	free(out);
	out = NULL;
	char *tips = NULL;
	size_t tlen = 0;
	FILE *t = open_memstream(&tips, &tlen);
	for (size_t i = 0; i < old.n; i++) {
		const struct ref *x = refs_find(&now, old.v[i].name);
		if (!x) {
			fputs("git: deleted ", o);
			put(d, old.v[i].name);
			fprintf(o, " (was %s)\n", old.v[i].sha);
		} else if (strcmp(x->sha, old.v[i].sha) != 0) {
			fputs("git: moved ", o);
			put(d, old.v[i].name);
			fputc(' ', o);
			put_sha(d, old.v[i].sha);
			fputs(" -> ", o);
			put_sha(d, x->sha);
			fputc('\n', o);
			if (t)
				fprintf(t, "%s\n", x->sha);
		}
	}
	for (size_t i = 0; i < now.n; i++)
		if (!refs_find(&old, now.v[i].name)) {
			fputs("git: created ", o);
			put(d, now.v[i].name);
			fputs(" at ", o);
			put_sha(d, now.v[i].sha);
			fputc('\n', o);
			if (t)
				fprintf(t, "%s\n", now.v[i].sha);
		}
	if (is_sha(nhead, strlen(nhead)) && t)
		fprintf(t, "%s\n", nhead);
	/* stashes */
	struct refs nstash = { 0 };
	if (git(d, NULL, &out, "log", "-g", "--format=%H", "refs/stash") == 0 && out)
		for (char *l = out, *nl; (nl = strchr(l, '\n')) != NULL; l = nl + 1)
			if (is_sha(l, (size_t)(nl - l)))
				refs_add(&nstash, "stash", 5, l, (size_t)(nl - l));
	free(out);
	out = NULL;
	for (size_t i = 0; i < ostash.n; i++) {
		bool kept = false;
		for (size_t k = 0; k < nstash.n && !kept; k++)
			kept = strcmp(nstash.v[k].sha, ostash.v[i].sha) == 0;
		if (!kept)
			fprintf(o, "git: stash dropped: %s (%s at the checkpoint)\n", ostash.v[i].sha,
				ostash.v[i].name);
	}
	for (size_t k = 0; k < nstash.n; k++) {
		bool had = false;
		for (size_t i = 0; i < ostash.n && !had; i++)
			had = strcmp(nstash.v[k].sha, ostash.v[i].sha) == 0;
		if (!had)
			fprintf(o, "git: stash added: %s\n", nstash.v[k].sha);
	}
	refs_free(&nstash);
	/* commits made: the new tips, not the old ones that still exist */
	if (t) {
		fclose(t);
		t = NULL;
	}
	if (tips && tlen) {
		char *olds = NULL, *exist = NULL;
		size_t olen = 0;
		FILE *m = open_memstream(&olds, &olen);
		for (size_t i = 0; m && i < old.n; i++)
			fprintf(m, "%s\n", old.v[i].sha);
		if (m && is_sha(ohead, strlen(ohead)))
			fprintf(m, "%s\n", ohead);
		if (m)
			fclose(m);
		git(d, olds ? olds : "", &exist, "cat-file", "--batch-check=%(objectname)", NULL, NULL);
		char *in = NULL;
		size_t ilen = 0;
		m = open_memstream(&in, &ilen);
		if (m) {
			fputs(tips, m);
			for (char *l = exist, *nl; l && (nl = strchr(l, '\n')) != NULL; l = nl + 1)
				if (is_sha(l, (size_t)(nl - l)))
					fprintf(m, "^%.*s\n", (int)(nl - l), l);
			fclose(m);
		}
		char *commits = NULL;
		if (in && git(d, in, &commits, "rev-list", "--oneline", "--stdin", NULL) == 0 && commits && *commits) {
			fputs("git: commits made:\n", o);
			for (char *l = commits, *nl; (nl = strchr(l, '\n')) != NULL; l = nl + 1) {
				*nl = '\0';
				fputs("  ", o);
				put(d, l);
				fputc('\n', o);
			}
		}
		free(commits);
		free(in);
		free(exist);
		free(olds);
	}
	free(tips);
	refs_free(&now);
done:
	refs_free(&old);
	refs_free(&ostash);
}

int ckpt_diff(struct ckpt_store *s, const struct ckpt_diff_options *o)
{
	struct dif d = { .s = s, .o = o };
	d.wsfd = open(s->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.wsfd < 0)
		return -errno;
	d.links = calloc(s->j.nlinks + 1, sizeof *d.links);
	d.renamed_to = calloc(s->j.n + 1, sizeof *d.renamed_to);
	if (!d.links || !d.renamed_to) {
		free(d.links);
		free(d.renamed_to);
		close(d.wsfd);
		return -ENOMEM;
	}
	if (s->j.bad_lines) {
		fprintf(o->err, "airlock: diff: the journal of %s has %zu damaged line%s (the first: line %zu), left out\n",
			s->id, s->j.bad_lines, s->j.bad_lines == 1 ? "" : "s", s->j.first_bad);
		d.status = 1;
	}
	find_renames(&d);
	/* the repository's own files: the git lines say what changed there, unless asked for */
	bool gitfiles = !s->git || o->npaths;
	size_t ngit = 0;
	for (size_t i = 0; i < s->j.n; i++) {
		const char *p = s->j.e[i].path;
		if (!chosen(&d, p))
			continue;
		const struct ckpt_entry *e = &s->j.e[i];
		/* git never rewrites an object file in place: one saved by a copy was tampered with */
		bool tampered = strncmp(p, ".git/objects/", 13) == 0 && e->saved && !e->save.link;
		if (!gitfiles && !tampered && (strcmp(p, ".git") == 0 || strncmp(p, ".git/", 5) == 0))
			ngit++;
		else
			file_entry(&d, i);
	}
	if (ngit)
		fprintf(o->out, "git: %zu path%s under .git touched (`airlock diff .git` lists them)\n", ngit,
			ngit == 1 ? "" : "s");
	if (s->git && o->npaths == 0) {
		struct stat st;
		if (fstatat(s->dirfd, "refs", &st, 0) == 0)
			git_part(&d);
	}
	if (!s->ignored_covered && s->nignored)
		fprintf(o->err, "airlock: diff: %zu git-ignored path%s %s not covered by this checkpoint (nothing at or beneath them is shown or undone)\n",
			s->nignored, s->nignored == 1 ? "" : "s", s->nignored == 1 ? "was" : "were");
	fflush(o->out);
	free(d.links);
	free(d.renamed_to);
	close(d.wsfd);
	return d.status;
}
