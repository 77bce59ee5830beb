/* journal.c — a checkpoint store read back (journal.h): the journal folded per path, meta, the ignored list, the lock, and a walk into the workspace that follows no symlink. */
#include "launcher/checkpoint/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "launcher/checkpoint/store.h"

/* One parsed record, before folding. */
struct rec {
	char *path; /* owned until moved into an entry */
	size_t seq;
	char kind; /* 's' save, 'd' dir, 'c' create, 'e' end */
	struct ckpt_save save;
	unsigned dir_mode;
	char create_kind;
	struct ckpt_end end;
};

static bool parse_ll(const char *s, int base, long long *out)
{
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end || v > LLONG_MAX)
		return false;
	*out = (long long)v;
	return true;
}

static bool parse_ull(const char *s, unsigned long long *out)
{
	if (!*s || *s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end;
}

/* A path a journal may name: relative, no empty, "." or ".." part. */
static bool safe_path(const char *p)
{
	if (!*p || *p == '/')
		return false;
	for (const char *s = p;;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		if (!e)
			return true;
		s = e + 1;
	}
}

static char create_kind(const char *k)
{
	static const struct {
		const char *name;
		char c;
	} kinds[] = { { "file", 'f' }, { "dir", 'd' },	 { "symlink", 's' },
		      { "link", 'l' }, { "node", 'n' }, { "rename", 'r' } };
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(k, kinds[i].name) == 0)
			return kinds[i].c;
	return 0;
}

/* Parses one line (NUL-terminated, modified) into r; false when it is damaged. */
static bool parse_line(char *line, struct rec *r)
{
	char *f[8];
	int n = store_split(line, f, 8);
	if (n < 2)
		return false;
	long long a, b, c;
	const char *path = f[n - 1];
	if (strcmp(f[0], "save") == 0 && n == 7) {
		unsigned long long obj;
		if (!parse_ull(f[1], &obj) || obj > ULONG_MAX ||
		    (strcmp(f[2], "link") != 0 && strcmp(f[2], "copy") != 0) ||
		    !parse_ll(f[3], 8, &a) || a > 0177777 || !parse_ll(f[4], 10, &b) ||
		    !parse_ll(f[5], 10, &c))
			return false;
		r->kind = 's';
		r->save = (struct ckpt_save){ .obj = (unsigned long)obj, .link = f[2][0] == 'l',
					      .mode = (unsigned)a, .size = b, .mtime_ns = c };
	} else if (strcmp(f[0], "dir") == 0 && n == 3) {
		if (!parse_ll(f[1], 8, &a) || a > 0177777)
			return false;
		r->kind = 'd';
		r->dir_mode = (unsigned)a;
	} else if (strcmp(f[0], "create") == 0 && n == 3) {
		r->kind = 'c';
		if (!(r->create_kind = create_kind(f[1])))
			return false;
	} else if (strcmp(f[0], "refused") == 0 && n == 3) {
		r->kind = 0; /* the path is unchanged: nothing to do with it */
	} else if (strcmp(f[0], "end") == 0 && n == 6) {
		unsigned long long ino;
		if (strlen(f[1]) != 1 || !strchr("fdlo-", f[1][0]) || !parse_ull(f[2], &ino) ||
		    !parse_ll(f[3], 10, &b) || !parse_ll(f[4], 10, &c))
			return false;
		r->kind = 'e';
		r->end = (struct ckpt_end){ .type = f[1][0], .ino = ino, .size = b, .mtime_ns = c };
	} else {
		return false;
	}
	if (!safe_path(path))
		return false;
	if (r->kind && !(r->path = strdup(path)))
		return false;
	return true;
}

static int rec_cmp(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	int c = strcmp(a->path, b->path);
	return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static int entry_cmp(const void *key, const void *x)
{
	return strcmp(key, ((const struct ckpt_entry *)x)->path);
}

struct ckpt_entry *ckpt_journal_find(const struct ckpt_journal *j, const char *path)
{
	if (!j->n)
		return NULL;
	return bsearch(path, j->e, j->n, sizeof *j->e, entry_cmp);
}

void ckpt_journal_free(struct ckpt_journal *j)
{
	for (size_t i = 0; i < j->n; i++)
		free(j->e[i].path);
	free(j->e);
	free(j->links);
	memset(j, 0, sizeof *j);
}

static void bad(struct ckpt_journal *j, size_t lineno)
{
	if (!j->bad_lines++)
		j->first_bad = lineno;
}

/* Folds the sorted records into entries (moving their paths) and lists the link saves. */
static int fold(struct ckpt_journal *j, struct rec *r, size_t nr)
{
	size_t nl = 0;
	for (size_t i = 0; i < nr; i++)
		nl += r[i].kind == 's' && r[i].save.link;
	j->e = calloc(nr ? nr : 1, sizeof *j->e);
	j->links = calloc(nl ? nl : 1, sizeof *j->links);
	if (!j->e || !j->links)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct ckpt_entry *e = j->n ? &j->e[j->n - 1] : NULL;
		if (!e || strcmp(e->path, r[i].path) != 0) {
			e = &j->e[j->n++];
			e->path = r[i].path;
		} else {
			free(r[i].path);
		}
		r[i].path = NULL;
		switch (r[i].kind) {
		case 's':
			if (r[i].save.link)
				j->links[j->nlinks++] = (struct ckpt_link){
					.obj = r[i].save.obj, .path = e->path, .size = r[i].save.size,
					.mtime_ns = r[i].save.mtime_ns };
			if (!e->saved)
				j->saves++;
			e->saved = true;
			e->save = r[i].save; /* the last one wins */
			break;
		case 'd':
			e->dir = true;
			e->dir_mode = r[i].dir_mode;
			break;
		case 'c':
			if (!e->created) {
				j->creates++;
				e->create_kind = r[i].create_kind;
			}
			e->created = true;
			break;
		case 'e':
			e->ended = true;
			e->end = r[i].end;
			j->any_end = true;
			break;
		}
	}
	return 0;
}

int ckpt_journal_parse(const char *buf, size_t len, struct ckpt_journal *j)
{
	memset(j, 0, sizeof *j);
	struct rec *r = NULL;
	size_t nr = 0, cap = 0, lineno = 0;
	char *line = malloc(STORE_LINE_MAX + 1);
	if (!line)
		return -ENOMEM;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(buf + off, '\n', len - off);
		lineno++;
		if (!nl) {
			j->cut = true;
			break;
		}
		size_t n = (size_t)(nl - (buf + off));
		const char *start = buf + off;
		off += n + 1;
		if (n == 0)
			continue;
		if (n > STORE_LINE_MAX || memchr(start, '\0', n)) {
			bad(j, lineno);
			continue;
		}
		memcpy(line, start, n);
		line[n] = '\0';
		if (nr == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct rec *g = realloc(r, ncap * sizeof *r);
			if (!g)
				goto oom;
			r = g;
			cap = ncap;
		}
		struct rec x = { .seq = nr };
		if (!parse_line(line, &x)) {
			bad(j, lineno);
			continue;
		}
		if (!x.kind)
			continue;
		r[nr++] = x;
	}
	free(line);
	line = NULL;
	qsort(r, nr, sizeof *r, rec_cmp);
	if (fold(j, r, nr) < 0)
		goto oom;
	free(r);
	return 0;
oom:
	free(line);
	for (size_t i = 0; i < nr; i++)
		free(r[i].path);
	free(r);
	ckpt_journal_free(j);
	return -ENOMEM;
}

/* Reads the file name in dirfd into a malloc'd buffer (NUL-terminated too); 0 or -errno. */
static int read_all(int dirfd, const char *name, char **out, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			close(fd);
			return -ENOMEM;
		}
		if (n + 1 >= cap) {
			char *g = realloc(buf, cap *= 2);
			if (!g)
				free(buf);
			buf = g;
			continue;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int ckpt_journal_load(int dirfd, struct ckpt_journal *j)
{
	char *buf;
	size_t len;
	int r = read_all(dirfd, "journal", &buf, &len);
	if (r == -ENOENT)
		return ckpt_journal_parse("", 0, j);
	if (r < 0) {
		memset(j, 0, sizeof *j);
		return r;
	}
	r = ckpt_journal_parse(buf, len, j);
	free(buf);
	return r;
}

static long long meta_ll(int dirfd, const char *key)
{
	char v[32];
	long long x;
	if (store_meta_get(dirfd, key, v, sizeof v) < 0 || !parse_ll(v, 10, &x))
		return 0;
	return x;
}

static bool meta_flag(int dirfd, const char *key)
{
	char v[8];
	return store_meta_get(dirfd, key, v, sizeof v) == 0 && strcmp(v, "1") == 0;
}

static int load_ignored(struct ckpt_store *s)
{
	char *buf;
	size_t len;
	int r = read_all(s->dirfd, "ignored", &buf, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\0';
	s->ignored = calloc(n + 1, sizeof *s->ignored);
	if (!s->ignored) {
		free(buf);
		return -ENOMEM;
	}
	for (size_t off = 0; off < len;) {
		const char *p = buf + off;
		size_t l = strnlen(p, len - off);
		if (off + l == len)
			break; /* not NUL-terminated: cut, left out */
		off += l + 1;
		if (l && !(s->ignored[s->nignored++] = strdup(p))) {
			free(buf);
			return -ENOMEM;
		}
	}
	free(buf);
	return 0;
}

bool ckpt_store_ignored(const struct ckpt_store *s, const char *rel)
{
	for (size_t i = 0; i < s->nignored; i++) {
		const char *ig = s->ignored[i];
		size_t l = strlen(ig);
		if (ig[l - 1] == '/') {
			if (strncmp(rel, ig, l - 1) == 0 && (rel[l - 1] == '\0' || rel[l - 1] == '/'))
				return true;
		} else if (strcmp(rel, ig) == 0 ||
			   (strncmp(rel, ig, l) == 0 && rel[l] == '/')) {
			return true;
		}
	}
	return false;
}

void ckpt_store_close(struct ckpt_store *s)
{
	if (s->lockfd >= 0)
		close(s->lockfd); /* releases the flock */
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	free(s->workspace);
	free(s->command);
	for (size_t i = 0; i < s->nignored; i++)
		free(s->ignored[i]);
	free(s->ignored);
	ckpt_journal_free(&s->j);
	memset(s, 0, sizeof *s);
	s->dirfd = s->lockfd = -1;
}

int ckpt_store_open(const char *root, const char *id, int lock, struct ckpt_store *s, char *err,
		    size_t cap)
{
	memset(s, 0, sizeof *s);
	s->dirfd = s->lockfd = -1;
	snprintf(s->id, sizeof s->id, "%s", id);
	int r = 0;
	if (asprintf(&s->dir, "%s/%s", root, id) < 0) {
		s->dir = NULL;
		r = -ENOMEM;
		snprintf(err, cap, "out of memory");
		goto fail;
	}
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (s->dirfd < 0) {
		r = -errno;
		snprintf(err, cap, "cannot open the checkpoint %s: %s", s->dir, strerror(-r));
		goto fail;
	}
	char v[PATH_MAX + 1];
	r = store_meta_get(s->dirfd, "version", v, sizeof v);
	if (r == 0 && strcmp(v, "1") != 0) {
		snprintf(err, cap, "checkpoint %s: version %s is not one this airlock reads (1)", id,
			 v);
		r = -EINVAL;
		goto fail;
	}
	if (store_meta_get(s->dirfd, "workspace", v, sizeof v) != 0 || v[0] != '/') {
		snprintf(err, cap, "checkpoint %s: its meta is damaged (no absolute workspace=)", id);
		r = -EINVAL;
		goto fail;
	}
	s->workspace = strdup(v);
	s->started = meta_ll(s->dirfd, "started");
	s->ended = meta_ll(s->dirfd, "ended");
	s->undone = meta_ll(s->dirfd, "undone");
	s->git = meta_flag(s->dirfd, "git");
	s->ignored_covered = meta_flag(s->dirfd, "ignored");
	s->command = malloc(STORE_META_MAX);
	if (s->command && store_meta_get(s->dirfd, "command", s->command, STORE_META_MAX) != 0)
		s->command[0] = '\0';
	if (!s->workspace || !s->command) {
		r = -ENOMEM;
		snprintf(err, cap, "out of memory");
		goto fail;
	}
	if (!s->started) {
		snprintf(err, cap, "checkpoint %s: its meta is damaged (no started=)", id);
		r = -EINVAL;
		goto fail;
	}
	int lfd = openat(s->dirfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (lfd >= 0) {
		if (flock(lfd, (lock ? lock : LOCK_SH) | LOCK_NB) < 0) {
			if (errno == EWOULDBLOCK)
				s->running = true;
			close(lfd);
		} else if (lock) {
			s->lockfd = lfd;
		} else {
			close(lfd);
		}
	}
	if ((r = load_ignored(s)) < 0 || (r = ckpt_journal_load(s->dirfd, &s->j)) < 0) {
		snprintf(err, cap, "checkpoint %s: cannot read it: %s", id, strerror(-r));
		goto fail;
	}
	return 0;
fail:
	ckpt_store_close(s);
	return r;
}

int ckpt_counts(const char *root, const char *id, size_t *saved, size_t *created)
{
	if (strlen(id) != CKPT_ID_LEN || strspn(id, "0123456789abcdef") != CKPT_ID_LEN)
		return -EINVAL;
	struct ckpt_store s;
	char err[256];
	int r = ckpt_store_open(root, id, 0, &s, err, sizeof err);
	if (r < 0)
		return r;
	*saved = s.j.saves;
	*created = s.j.creates;
	ckpt_store_close(&s);
	return 0;
}

/* ---- the workspace, walked without following symlinks ------------------------- */

char ckpt_type_of(const struct stat *st)
{
	return S_ISREG(st->st_mode) ? 'f' : S_ISDIR(st->st_mode) ? 'd' : S_ISLNK(st->st_mode) ? 'l' : 'o';
}

long long ckpt_mtime_ns(const struct stat *st)
{
	return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

int ckpt_ws_parent(int wsfd, const char *rel, const char **name,
		   unsigned (*mkdir_mode)(void *arg, const char *dir), void *arg)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf)
		return -ENAMETOOLONG;
	int fd = fcntl(wsfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	char *s = buf;
	for (char *slash; (slash = strchr(s, '/')) != NULL; s = slash + 1) {
		*slash = '\0';
		int nfd = openat(fd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && mkdir_mode) {
			unsigned m = mkdir_mode(arg, buf);
			if (mkdirat(fd, s, m ? m & 07777 : 0755) < 0 && errno != EEXIST) {
				int e = errno;
				close(fd);
				return -e;
			}
			if (m) /* the umask narrowed it: the recorded mode, exactly */
				(void)fchmodat(fd, s, m & 07777, 0);
			nfd = openat(fd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		int e = errno;
		close(fd);
		if (nfd < 0)
			return -(e == ELOOP ? ENOTDIR : e);
		fd = nfd;
		*slash = '/';
	}
	*name = rel + (s - buf);
	return fd;
}

int ckpt_ws_lstat(int wsfd, const char *rel, struct stat *st)
{
	const char *name;
	int fd = ckpt_ws_parent(wsfd, rel, &name, NULL, NULL);
	if (fd < 0)
		return fd == -ENOTDIR ? -ENOENT : fd;
	int r = fstatat(fd, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(fd);
	return r;
}
