/* supervise.c — the checkpoint worker (supervise.h): saves each workspace file before the sandbox destroys it. */
#include "launcher/checkpoint/supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fdpass.h"
#include "launcher/checkpoint/filter.h" /* SYS_fchmodat2 where the headers lack it */
#include "launcher/checkpoint/store.h"
#include "launcher/profiles/profile.h" /* profile_mkdirs() */

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS /* Linux 6.6 */
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* What the worker tells the launcher, on the news pipe: a record, then len bytes of path. */
struct news {
	int kind; /* NEWS_REFUSED or NEWS_STATS */
	int err;
	pid_t pid;
	size_t len;
	struct checkpoint_stats st;
};
enum { NEWS_REFUSED = 1, NEWS_STATS };

/* A set of (dev, ino) with a state: how the inode is saved. */
enum saved { SAVED_LINK = 1, SAVED_COPY };
struct ino_slot {
	dev_t dev;
	ino_t ino;
	int state; /* 0: empty */
	mode_t mode; /* as first saved: a later copy of a linked inode records these, not a chmod's */
	struct timespec mtime;
	const char *path; /* the path it was first saved under (a path_slot's string), or NULL */
};

/* A set of workspace-relative paths the journal names, with flags. */
enum { PATH_CREATED = 1, PATH_NAMED = 2, PATH_SAVED = 4 };
struct path_slot {
	char *path; /* NULL: empty */
	int flags;
};

struct checkpoint {
	char *ws;      /* the workspace, canonical */
	size_t wslen;
	dev_t wsdev;
	char *dir;     /* the store */
	const char *mode;
	bool git, cover_ignored;
	struct timespec t; /* the checkpoint's time */
	int dirfd, objfd, journal, lockfd;
	int sock[2];   /* [0] the worker's, [1] the sandbox's */
	int news[2], stop[2];
	pid_t worker;
	checkpoint_refused_fn refused;
	void *ctx;
	struct checkpoint_stats st;
	/* the worker's own */
	unsigned long next_obj;
	struct ino_slot *inos;
	size_t ninos, cap_inos;
	struct path_slot *paths;
	size_t npaths, cap_paths;
	char **ignored; /* sorted prefixes ("dir/" or "file") into ignored_buf */
	size_t nignored;
	char *ignored_buf;
	bool git_done;     /* git_prepare() ran */
	bool host_loaded;  /* the launcher's side: host_load() ran */
	struct target *targets; /* two, for answer() */
	int root_fd;       /* /proc/root_pid/root, or -1 (root_of()) */
	pid_t root_pid;
};

/* ---- small sets --------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct ino_slot *ino_find(struct checkpoint *c, dev_t dev, ino_t ino, bool add)
{
	if (add && (c->ninos + 1) * 2 > c->cap_inos) {
		size_t cap = c->cap_inos ? c->cap_inos * 2 : 1024;
		struct ino_slot *n = calloc(cap, sizeof *n);
		if (!n)
			return NULL;
		for (size_t i = 0; i < c->cap_inos; i++) {
			if (!c->inos[i].state)
				continue;
			size_t j = mix((uint64_t)c->inos[i].ino ^ ((uint64_t)c->inos[i].dev << 40)) & (cap - 1);
			while (n[j].state)
				j = (j + 1) & (cap - 1);
			n[j] = c->inos[i];
		}
		free(c->inos);
		c->inos = n;
		c->cap_inos = cap;
	}
	if (!c->cap_inos)
		return NULL;
	size_t j = mix((uint64_t)ino ^ ((uint64_t)dev << 40)) & (c->cap_inos - 1);
	while (c->inos[j].state) {
		if (c->inos[j].dev == dev && c->inos[j].ino == ino)
			return &c->inos[j];
		j = (j + 1) & (c->cap_inos - 1);
	}
	if (!add)
		return NULL;
	c->inos[j] = (struct ino_slot){ .dev = dev, .ino = ino };
	c->ninos++;
	return &c->inos[j];
}

/* The most paths the worker keeps in memory; past it, later ones get no "end" record. */
#define CHECKPOINT_MAX_PATHS (1u << 21)

static struct path_slot *path_find(struct checkpoint *c, const char *p, bool add)
{
	if (add && c->npaths >= CHECKPOINT_MAX_PATHS)
		add = false; /* bounded memory: undo treats such a path as the sandbox left it */
	if (add && (c->npaths + 1) * 2 > c->cap_paths) {
		size_t cap = c->cap_paths ? c->cap_paths * 2 : 1024;
		struct path_slot *n = calloc(cap, sizeof *n);
		if (!n)
			return NULL;
		for (size_t i = 0; i < c->cap_paths; i++) {
			if (!c->paths[i].path)
				continue;
			size_t j = str_hash(c->paths[i].path) & (cap - 1);
			while (n[j].path)
				j = (j + 1) & (cap - 1);
			n[j] = c->paths[i];
		}
		free(c->paths);
		c->paths = n;
		c->cap_paths = cap;
	}
	if (!c->cap_paths)
		return NULL;
	size_t j = str_hash(p) & (c->cap_paths - 1);
	while (c->paths[j].path) {
		if (strcmp(c->paths[j].path, p) == 0)
			return &c->paths[j];
		j = (j + 1) & (c->cap_paths - 1);
	}
	if (!add)
		return NULL;
	if (!(c->paths[j].path = strdup(p)))
		return NULL;
	c->paths[j].flags = 0;
	c->npaths++;
	return &c->paths[j];
}

/* ---- the journal ---------------------------------------------------------------------------- */

/* Appends one record: fields joined by tabs, the last one (a path) escaped.  0 or -errno. */
static int journal_put(struct checkpoint *c, const char *head, const char *path)
{
	char line[STORE_LINE_MAX];
	size_t h = strlen(head);
	if (h + 2 >= sizeof line)
		return -ENAMETOOLONG;
	memcpy(line, head, h);
	line[h++] = '\t';
	ssize_t e = store_escape(path, line + h, sizeof line - h - 1);
	if (e < 0)
		return -ENAMETOOLONG;
	size_t n = h + (size_t)e;
	line[n++] = '\n';
	ssize_t w = write(c->journal, line, n);
	if (w != (ssize_t)n)
		return w < 0 ? -errno : -EIO;
	struct path_slot *s = path_find(c, path, true);
	if (s)
		s->flags |= PATH_NAMED;
	return 0;
}

/* ---- time and the ignored list ------------------------------------------------------------ */

static bool ts_le(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

static long long ts_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/*
 * The checkpoint's time: the coarse clock inode times are stamped from
 * (current_time(), fs/inode.c), then wait until it has moved on, so that
 * every change from here on has a later ctime than the checkpoint's.  At
 * most a tick (1-10 ms), overlapped with the sandbox's start.
 */
static void checkpoint_time(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME_COARSE, t);
}

static void time_moved_on(const struct timespec *t)
{
	struct timespec now;
	for (int i = 0; i < 200; i++) {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (!ts_le(&now, t))
			return;
		usleep(500);
	}
}

static bool is_ignored(const struct checkpoint *c, const char *rel)
{
	if (!c->nignored)
		return false;
	/* rel itself, then each ancestor directory "a/", "a/b/" */
	char buf[PATH_MAX];
	size_t n = strlen(rel);
	if (n + 2 > sizeof buf)
		return false;
	memcpy(buf, rel, n + 1);
	for (size_t i = 0; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char saved = buf[i + (buf[i] == '/')];
		size_t len = i + (buf[i] == '/');
		if (buf[i] == '\0') { /* the path itself, and as a directory */
			buf[n] = '/';
			buf[n + 1] = '\0';
			for (int k = 0; k < 2; k++) {
				const char *key = buf;
				if (k == 1)
					buf[n] = '\0';
				size_t lo = 0, hi = c->nignored;
				while (lo < hi) {
					size_t mid = (lo + hi) / 2;
					int r = strcmp(c->ignored[mid], key);
					if (!r)
						return true;
					if (r < 0)
						lo = mid + 1;
					else
						hi = mid;
				}
			}
			return false;
		}
		buf[len] = '\0';
		size_t lo = 0, hi = c->nignored;
		bool hit = false;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			int r = strcmp(c->ignored[mid], buf);
			if (!r) {
				hit = true;
				break;
			}
			if (r < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		buf[len] = saved;
		if (hit)
			return true;
	}
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Runs git with argv in the workspace, its standard output into out_fd.
 * The user's repository, read as the user would (no hooks run: these are
 * read-only commands; fsmonitor off, so no configured program starts).
 * Returns its exit status, or -errno.
 */
static int git_run(const struct checkpoint *c, const char *const *args, int out_fd)
{
	const char *argv[24] = { "git", "-C", c->ws, "-c", "core.fsmonitor=false", NULL };
	size_t n = 5;
	for (size_t i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Reads a whole file of the store into a malloc'd NUL-terminated buffer (*len bytes). */
static char *slurp(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

/* Appends the file at ws/.git/NAME to fd after prefix, or "-\n" when absent. */
static void copy_git_file(const struct checkpoint *c, const char *name, int fd)
{
	char path[PATH_MAX], buf[4096];
	snprintf(path, sizeof path, "%s/.git/%s", c->ws, name);
	int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = in >= 0 ? read(in, buf, sizeof buf) : -1;
	if (in >= 0)
		close(in);
	if (n <= 0 || memchr(buf, '\0', (size_t)n))
		(void)!write(fd, "-\n", 2);
	else
		(void)!write(fd, buf, (size_t)n);
}

/*
 * The references at the start (store.h's "refs"), in the worker before it
 * answers a call (so before the sandbox changed any): git for-each-ref, then
 * HEAD and the stash's reflog as the files say (no further process).
 */
static void git_refs(struct checkpoint *c)
{
	int fd = openat(c->dirfd, "refs", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	const char *refs[] = { "for-each-ref", "--format=%(objectname) %(refname)", NULL };
	(void)git_run(c, refs, fd);
	(void)!write(fd, "HEAD ", 5);
	copy_git_file(c, "HEAD", fd);
	/* logs/refs/stash: "OLD NEW NAME <EMAIL> TIME TZ\tMESSAGE" per entry, oldest first */
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/.git/logs/refs/stash", c->ws);
	FILE *f = fopen(path, "re");
	char *line = NULL, **shas = NULL;
	size_t cap = 0, n = 0;
	while (f && getline(&line, &cap, f) > 0) {
		char *sp = strchr(line, ' ');
		char **ns = sp ? realloc(shas, (n + 1) * sizeof *ns) : NULL;
		if (!ns)
			break;
		shas = ns;
		shas[n] = strndup(sp + 1, 40);
		n += shas[n] != NULL;
	}
	for (size_t i = n; i-- > 0;) { /* stash@{0} is the newest */
		dprintf(fd, "stash@{%zu} %s\n", n - 1 - i, shas[i]);
		free(shas[i]);
	}
	free(shas);
	free(line);
	if (f)
		fclose(f);
	close(fd);
}

/*
 * The git-ignored paths (store.h's "ignored"), not covered unless the
 * policy says so: git ls-files (it walks the untracked tree; a failed git
 * leaves no list, and everything is covered).
 */
static void git_ignored(struct checkpoint *c)
{
	if (c->cover_ignored)
		return;
	int fd = openat(c->dirfd, "ignored.part", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	const char *a[] = { "ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory", NULL };
	int st = git_run(c, a, fd);
	close(fd);
	size_t len = 0;
	char *buf = st == 0 ? slurp(c->dirfd, "ignored.part", &len) : NULL;
	size_t count = 0;
	for (size_t i = 0; buf && i < len; i++)
		count += buf[i] == '\0';
	if (buf && count && (c->ignored = calloc(count + 1, sizeof *c->ignored))) {
		for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
			if (buf[i])
				c->ignored[c->nignored++] = buf + i;
		qsort(c->ignored, c->nignored, sizeof *c->ignored, cmp_str);
		c->ignored_buf = buf;
		buf = NULL;
	}
	free(buf);
	if (st == 0)
		renameat(c->dirfd, "ignored.part", c->dirfd, "ignored");
	else
		unlinkat(c->dirfd, "ignored.part", 0);
}

/* The git side, once, before the first change in the workspace is let go. */
static void git_prepare(struct checkpoint *c)
{
	c->git_done = true;
	if (!c->git)
		return;
	git_refs(c);
	git_ignored(c);
}

/* ---- resolving a caller's path ---------------------------------------------------------- */

/* Reads a NUL-terminated string from the caller's memory.  0 or -errno. */
static int read_string(pid_t pid, uint64_t addr, char *out, size_t cap)
{
	size_t got = 0;
	long page = sysconf(_SC_PAGESIZE);
	while (got < cap) {
		uint64_t at = addr + got;
		size_t chunk = (size_t)page - (size_t)(at % (uint64_t)page);
		if (chunk > cap - got)
			chunk = cap - got;
		struct iovec local = { out + got, chunk }, remote = { (void *)(uintptr_t)at, chunk };
		ssize_t r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (r <= 0)
			return r < 0 ? -errno : -EFAULT;
		char *nul = memchr(out + got, '\0', (size_t)r);
		if (nul)
			return 0;
		got += (size_t)r;
	}
	return -ENAMETOOLONG;
}

/* Where a path the caller named is, as this process can reach it. */
struct target {
	bool exists;       /* the object is there */
	bool in_ws;        /* ... or (when not) its directory is in the workspace */
	struct stat st;    /* the object's, with exists */
	struct timespec born; /* its birth time (statx(2) STATX_BTIME), else its ctime */
	char rel[PATH_MAX]; /* its workspace-relative path (in_ws) */
	char host[PATH_MAX]; /* its host path (in_ws) */
	const char *kind;  /* a creation journalled once the call went on (handle()), or NULL */
};

/*
 * stat(2) of name in dirfd ("" : dirfd itself), not following a last
 * symlink, with when the inode was made: its birth time (statx(2)
 * STATX_BTIME: ext4, XFS, btrfs, tmpfs), else its ctime, which every change
 * moves on (then a file the sandbox chmods before writing counts as made
 * since the checkpoint: said in the README).  0 or -errno.
 */
static int stat_of(int dirfd, const char *name, struct stat *st, struct timespec *born)
{
	struct statx sx;
	int flags = AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH);
	if (statx(dirfd, name, flags, STATX_BASIC_STATS | STATX_BTIME, &sx) != 0)
		return -errno;
	memset(st, 0, sizeof *st);
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_mode = sx.stx_mode;
	st->st_nlink = sx.stx_nlink;
	st->st_uid = sx.stx_uid;
	st->st_gid = sx.stx_gid;
	st->st_size = (off_t)sx.stx_size;
	st->st_mtim = (struct timespec){ sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec };
	st->st_ctim = (struct timespec){ sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec };
	*born = (sx.stx_mask & STATX_BTIME) ? (struct timespec){ sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec }
					    : st->st_ctim;
	return 0;
}

/*
 * A relative path the caller may use (the kernel walks it from its cwd or
 * dirfd) that is too long to name from the root (PATH_MAX): the worker
 * cannot find the file, so the call is refused (ENAMETOOLONG), never let go
 * unsaved.
 */
#define TOO_DEEP 100000

/* The caller's view of a path: absolute, from its cwd or dirfd.  0, -TOO_DEEP or -errno. */
static int caller_abs(pid_t pid, int dirfd, const char *path, char *out, size_t cap)
{
	if (path[0] == '/') {
		if (strlen(path) >= cap)
			return -ENAMETOOLONG;
		strcpy(out, path);
		return 0;
	}
	char link[64], base[PATH_MAX];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof link, "/proc/%d/cwd", pid);
	else
		snprintf(link, sizeof link, "/proc/%d/fd/%d", pid, dirfd);
	ssize_t n = readlink(link, base, sizeof base - 1);
	if (n < 0 && errno == ENAMETOOLONG)
		return -TOO_DEEP;
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	if ((size_t)n >= sizeof base - 1)
		return -TOO_DEEP; /* readlink(2) cuts what does not fit */
	base[n] = '\0';
	if (base[0] != '/')
		return -ENOTDIR; /* a pipe, a socket, an anonymous inode */
	if (n > 10 && strcmp(base + n - 10, " (deleted)") == 0)
		return -ENOENT;
	int w = snprintf(out, cap, "%s/%s", strcmp(base, "/") == 0 ? "" : base, path);
	return w < 0 || (size_t)w >= cap ? -TOO_DEEP : 0;
}

/*
 * The workspace-relative name of the object fd (O_PATH) stands for, when it
 * is one of the workspace's on the host: its path as the kernel gives it
 * (the sandbox binds the workspace at the same path), in the workspace, and
 * the host's object at that path is the same inode.
 */
static bool host_name(struct checkpoint *c, int fd, const struct stat *st, struct target *t)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, t->host, sizeof t->host - 1);
	if (n <= 0)
		return false;
	t->host[n] = '\0';
	if (strncmp(t->host, c->ws, c->wslen) != 0 ||
	    (t->host[c->wslen] != '/' && t->host[c->wslen] != '\0'))
		return false;
	struct stat hs;
	if (lstat(t->host, &hs) != 0 || hs.st_dev != st->st_dev || hs.st_ino != st->st_ino)
		return false;
	const char *rel = t->host + c->wslen + (t->host[c->wslen] == '/');
	if (strlen(rel) >= sizeof t->rel)
		return false;
	strcpy(t->rel, *rel ? rel : ".");
	return true;
}

/* /dev/std*, /dev/fd/N, /proc/self/..., /proc/thread-self/...: the caller's own, through the host's /proc. */
static bool self_path(pid_t pid, const char *abs, char *out, size_t cap)
{
	static const struct {
		const char *from, *to;
	} map[] = { { "/dev/stdin", "fd/0" },  { "/dev/stdout", "fd/1" },
		    { "/dev/stderr", "fd/2" }, { "/dev/fd/", "fd/" },
		    { "/proc/self/", "" },     { "/proc/thread-self/", "" } };
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		size_t k = strlen(map[i].from);
		if (strncmp(abs, map[i].from, k) != 0)
			continue;
		if (map[i].from[k - 1] != '/' && abs[k] != '\0' && abs[k] != '/')
			continue;
		int w = snprintf(out, cap, "/proc/%d/%s%s", pid, map[i].to, abs + k);
		return w > 0 && (size_t)w < cap;
	}
	return false;
}

/*
 * A name whose directory does not exist yet, as its words say (".", ".."
 * and repeated slashes folded; symlinks cannot be followed through what is
 * not there).  Another thread's mkdir(2) of that directory may have been let
 * go and not run yet, so the call may still make the name: a creation is
 * journalled (a record for a name never made costs undo nothing).
 */
static void lexical_name(struct checkpoint *c, const char *abs, struct target *t)
{
	char out[PATH_MAX];
	size_t n = 0;
	for (const char *p = abs; *p;) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t k = (size_t)(e - p);
		if (k == 0 || (k == 1 && p[0] == '.')) {
		} else if (k == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
		} else {
			if (n + 1 + k >= sizeof out)
				return;
			out[n++] = '/';
			memcpy(out + n, p, k);
			n += k;
		}
		p = e;
	}
	out[n] = '\0';
	if (strncmp(out, c->ws, c->wslen) != 0 || out[c->wslen] != '/' ||
	    strlen(out) >= sizeof t->host)
		return;
	struct stat st;
	if (lstat(out, &st) == 0)
		return; /* something is there after all (a dangling symlink followed): not a name made */
	strcpy(t->host, out);
	snprintf(t->rel, sizeof t->rel, "%s", out + c->wslen + 1);
	t->in_ws = true;
}

/*
 * The caller's root directory (/proc/PID/root), kept open for the next call
 * of the same thread (a tar, a git checkout make thousands in a row).  Every
 * process of the sandbox has the same root (chroot(2) needs a capability
 * none has), so a thread id reused later still names the right one.  A
 * descriptor or -errno.
 */
static int root_of(struct checkpoint *c, pid_t pid)
{
	if (c->root_fd >= 0 && c->root_pid == pid)
		return c->root_fd;
	if (c->root_fd >= 0)
		close(c->root_fd);
	char root[64];
	snprintf(root, sizeof root, "/proc/%d/root", pid);
	c->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	c->root_pid = pid;
	return c->root_fd >= 0 ? c->root_fd : -errno;
}

/*
 * Finds the object the caller's (dirfd, path) names, following a last
 * symlink when follow: in the caller's root (/proc/PID/root) with
 * openat2(2) RESOLVE_IN_ROOT, so its absolute symlinks resolve as they do
 * for it.  Fills t.  0 (t->in_ws tells whether it concerns the workspace),
 * or -errno when the path could not be read or resolved.
 */
static int resolve(struct checkpoint *c, pid_t pid, int dirfd, uint64_t path_addr, bool follow,
		   struct target *t)
{
	char path[PATH_MAX], abs[PATH_MAX], alt[PATH_MAX];
	t->exists = t->in_ws = false;
	t->kind = NULL;
	int r = read_string(pid, path_addr, path, sizeof path);
	if (r < 0)
		return r;
	if (!path[0])
		return -ENOENT;
	if ((r = caller_abs(pid, dirfd, path, abs, sizeof abs)) < 0)
		return r;
	/* "/proc//self/", "/proc/./self/": the same as "/proc/self/" (a kernel walk folds them) */
	char folded[PATH_MAX];
	size_t k = 0;
	for (const char *q = abs; *q && k + 1 < sizeof folded; q++) {
		if (*q == '/' && k > 0 && folded[k - 1] == '/')
			continue;
		if (*q == '.' && k > 0 && folded[k - 1] == '/' && (q[1] == '/' || q[1] == '\0')) {
			if (q[1] == '/')
				q++;
			continue;
		}
		folded[k++] = *q;
	}
	folded[k] = '\0';
	if (self_path(pid, folded, alt, sizeof alt)) {
		/* the caller's own descriptors and /proc: the host's /proc reaches the same objects */
		int fd = open(alt, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
		if (fd < 0)
			return errno == ENOENT ? 0 : -errno;
		if (stat_of(fd, "", &t->st, &t->born) == 0 && t->st.st_dev == c->wsdev)
			t->exists = t->in_ws = host_name(c, fd, &t->st, t);
		close(fd);
		return 0;
	}
	int rootfd = root_of(c, pid);
	if (rootfd < 0)
		return rootfd;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
				.resolve = RESOLVE_IN_ROOT };
	int fd = (int)syscall(SYS_openat2, rootfd, abs, &how, sizeof how);
	if (fd >= 0) {
		if (stat_of(fd, "", &t->st, &t->born) == 0 && t->st.st_dev == c->wsdev)
			t->exists = t->in_ws = host_name(c, fd, &t->st, t);
		close(fd);
		return 0;
	}
	int e = errno;
	if (e == EXDEV && snprintf(alt, sizeof alt, "/proc/%d/root%s", pid, abs) < (int)sizeof alt) {
		/*
		 * A magic link on the way (/proc/N/fd/M, /proc/N/cwd, /proc//self/...),
		 * which RESOLVE_IN_ROOT refuses: followed as the kernel follows it for
		 * the caller, from its root.
		 */
		fd = open(alt, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
		if (fd >= 0) {
			if (stat_of(fd, "", &t->st, &t->born) == 0 && t->st.st_dev == c->wsdev)
				t->exists = t->in_ws = host_name(c, fd, &t->st, t);
			close(fd);
		}
		return 0;
	}
	if (e == ENOENT) {
		/* absent: named by its words (a creation needs no more: it destroys nothing) */
		lexical_name(c, abs, t);
		return 0;
	}
	/* a name under a file, a magic link elsewhere (/proc/N/...): not a workspace file */
	return e == ENOTDIR || e == ELOOP || e == EXDEV ? 0 : -e;
}


/* ---- saving ------------------------------------------------------------------------------- */

static void git_prepare(struct checkpoint *c);

/*
 * Whether t is one of the checkpoint's paths: in the workspace, not its
 * root, not git-ignored.  The first time a call concerns the workspace, the
 * git side is taken first (git_prepare()): the references and the ignored
 * list as they are before any change, and at no cost to sessions that
 * change nothing.
 */
static bool covered(struct checkpoint *c, const struct target *t)
{
	if (!t->in_ws || strcmp(t->rel, ".") == 0)
		return false;
	if (!c->git_done)
		git_prepare(c);
	return !is_ignored(c, t->rel);
}

/* Copies the host file (the same inode as t->st) into objects/N.  0 or -errno. */
static int copy_into(struct checkpoint *c, const struct target *t, const char *name)
{
	int src = open(t->host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (src < 0)
		return -errno;
	struct stat st;
	if (fstat(src, &st) != 0 || st.st_ino != t->st.st_ino || st.st_dev != t->st.st_dev) {
		close(src);
		return -ESTALE;
	}
	int dst = openat(c->objfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (dst < 0) {
		int e = errno;
		close(src);
		return -e;
	}
	int r = 0;
	off_t left = st.st_size;
	while (left > 0) {
		ssize_t n = copy_file_range(src, NULL, dst, NULL, (size_t)left, 0);
		if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
			char buf[65536];
			n = read(src, buf, sizeof buf);
			if (n > 0 && write(dst, buf, (size_t)n) != n)
				n = -1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break; /* shorter than it said: what there is */
		left -= n;
	}
	close(src);
	if (!r && fchmod(dst, st.st_mode & 07777) != 0)
		r = -errno; /* the object as the file was: its mode too */
	if (close(dst) != 0 && !r)
		r = -errno;
	if (r)
		unlinkat(c->objfd, name, 0);
	return r;
}

/* Whether rel or one of its directories is a name the sandbox made (a rename's destination too). */
static bool made_here(struct checkpoint *c, const char *rel)
{
	char buf[PATH_MAX];
	size_t n = strlen(rel);
	if (n >= sizeof buf)
		return false;
	memcpy(buf, rel, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char was = buf[i];
		buf[i] = '\0';
		struct path_slot *ps = path_find(c, buf, false);
		buf[i] = was;
		if (ps && (ps->flags & PATH_CREATED))
			return true;
	}
	return false;
}

/*
 * Saves t's object if it needs it: how is SAVED_LINK (its name is going) or
 * SAVED_COPY (its content is about to change).  0 or -errno (refuse the call).
 */
static int save(struct checkpoint *c, const struct target *t, int how)
{
	if (!t->exists)
		return 0;
	bool reg = S_ISREG(t->st.st_mode), lnk = S_ISLNK(t->st.st_mode);
	if (!reg && !lnk)
		return 0;
	struct ino_slot *s = ino_find(c, t->st.st_dev, t->st.st_ino, false);
	if (s && (s->state == SAVED_COPY || how == SAVED_LINK))
		return 0; /* its content, as it was, is in the store */
	/*
	 * A linked inode about to be written is copied wherever its name is now
	 * (moved under a git-ignored directory too): the link in the store is
	 * that same inode, and would change with it.
	 */
	if (!s && !covered(c, t))
		return 0;
	if (s && !t->in_ws)
		return 0;
	if (!s && !ts_le(&t->born, &c->t))
		return 0; /* made since the checkpoint: not the checkpoint's */
	if (lnk && how == SAVED_COPY)
		return 0; /* a symlink's target is never written through its name */
	char name[32], head[128];
	snprintf(name, sizeof name, "%lu", c->next_obj);
	int r = -EXDEV;
	if (how == SAVED_LINK && strcmp(c->mode, "link") == 0) {
		r = linkat(AT_FDCWD, t->host, c->objfd, name, 0) == 0 ? 0 : -errno;
		struct stat os;
		if (!r && (fstatat(c->objfd, name, &os, AT_SYMLINK_NOFOLLOW) != 0 ||
			   os.st_ino != t->st.st_ino || os.st_dev != t->st.st_dev)) {
			unlinkat(c->objfd, name, 0);
			r = -ESTALE;
		}
	}
	if (r == -EXDEV || r == -EPERM || r == -EMLINK) {
		how = SAVED_COPY;
		if (lnk) {
			char target[PATH_MAX];
			ssize_t n = readlink(t->host, target, sizeof target - 1);
			if (n < 0)
				return -errno;
			target[n] = '\0';
			r = symlinkat(target, c->objfd, name) == 0 ? 0 : -errno;
		} else {
			r = copy_into(c, t, name);
		}
	} else if (how == SAVED_COPY) {
		r = copy_into(c, t, name);
	}
	if (r < 0)
		return r;
	c->next_obj++;
	/* a linked inode copied now: its mode and mtime as they were when its name was saved */
	mode_t mode = s ? s->mode : t->st.st_mode;
	struct timespec mt = s ? s->mtime : t->st.st_mtim;
	snprintf(head, sizeof head, "save\t%s\t%s\t%o\t%lld\t%lld", name,
		 how == SAVED_LINK ? "link" : "copy", (unsigned)mode, (long long)t->st.st_size,
		 ts_ns(&mt));
	/*
	 * The copy of a linked inode supersedes the link under the path the link
	 * was saved for (store.h: a later "save" of the same PATH), wherever the
	 * inode is written now (`mv a b; echo x >b`, `ln a b; echo x >b`); and
	 * under the name it is written through as well, when that name is not
	 * one the sandbox made (a second name the inode had at the start).
	 */
	const char *first = s && s->path ? s->path : NULL;
	if (first && (r = journal_put(c, head, first)) < 0)
		return r;
	if (!first || strcmp(first, t->rel) != 0) {
		bool made = first && made_here(c, t->rel);
		if (!made && (!first || covered(c, t)) && (r = journal_put(c, head, t->rel)) < 0)
			return r;
		struct path_slot *ps = made ? path_find(c, t->rel, true) : NULL;
		if (ps)
			ps->flags |= PATH_NAMED; /* an "end" record: undo knows the sandbox left it so */
	}
	if (!s && !(s = ino_find(c, t->st.st_dev, t->st.st_ino, true)))
		return -ENOMEM;
	if (!s->state) {
		s->mode = t->st.st_mode;
		s->mtime = t->st.st_mtim;
		struct path_slot *ps = path_find(c, t->rel, false);
		s->path = ps ? ps->path : NULL;
	}
	s->state = how;
	if (how == SAVED_LINK)
		c->st.linked++;
	else
		c->st.copied++;
	return 0;
}

/* Journals a name the sandbox makes where there was none. */
static int created(struct checkpoint *c, struct target *t, const char *kind)
{
	/* a rename's destination is a name the sandbox makes even where one was (saved first) */
	if ((t->exists && strcmp(kind, "rename") != 0) || !covered(c, t))
		return 0;
	struct path_slot *s = path_find(c, t->rel, false);
	if (s && (s->flags & PATH_CREATED))
		return 0;
	char head[32];
	snprintf(head, sizeof head, "create\t%s", kind);
	int r = journal_put(c, head, t->rel);
	if (!r && (s = path_find(c, t->rel, true)))
		s->flags |= PATH_CREATED;
	c->st.created += !r;
	return r;
}

/* A directory of the checkpoint's about to go or move: its mode, and every file beneath saved by a link. */
static int save_tree(struct checkpoint *c, const struct target *t, int depth)
{
	if (!t->exists || !S_ISDIR(t->st.st_mode) || !covered(c, t))
		return 0;
	struct path_slot *s = path_find(c, t->rel, false);
	if (s && (s->flags & PATH_CREATED))
		return 0; /* the sandbox's own */
	if (!s || !(s->flags & PATH_NAMED)) {
		char head[32];
		snprintf(head, sizeof head, "dir\t%o", (unsigned)(t->st.st_mode & 07777));
		int r = journal_put(c, head, t->rel);
		if (r < 0)
			return r;
	}
	if (depth > 64)
		return 0;
	int dfd = open(t->host, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	int r = 0;
	struct dirent *e;
	struct target *sub = malloc(sizeof *sub);
	while (!r && sub && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(sub->host, sizeof sub->host, "%s/%s", t->host, e->d_name) >=
			    (int)sizeof sub->host ||
		    snprintf(sub->rel, sizeof sub->rel, "%s/%s", t->rel, e->d_name) >=
			    (int)sizeof sub->rel)
			continue;
		if (stat_of(dfd, e->d_name, &sub->st, &sub->born) != 0)
			continue;
		sub->exists = sub->in_ws = true;
		r = S_ISDIR(sub->st.st_mode) ? save_tree(c, sub, depth + 1) : save(c, sub, SAVED_LINK);
	}
	free(sub);
	closedir(d);
	return r;
}

/* ---- answering ------------------------------------------------------------------------------ */

static void tell(struct checkpoint *c, int kind, int err, pid_t pid, const char *path)
{
	struct news n = { .kind = kind, .err = err, .pid = pid, .len = path ? strlen(path) : 0,
			  .st = c->st };
	char buf[sizeof n + PATH_MAX];
	memcpy(buf, &n, sizeof n);
	if (n.len)
		memcpy(buf + sizeof n, path, n.len);
	(void)!write(c->news[1], buf, sizeof n + n.len);
}

/*
 * Decides one call into t and u (its one or two paths): saves what it would
 * destroy, returns 0 (let it go on) or -errno (refuse it).  What it creates
 * is left in t->kind / u->kind, journalled once the call went on (answer()):
 * a creation destroys nothing, so the caller need not wait for the journal.
 */
static int handle(struct checkpoint *c, const struct seccomp_notif *req, struct target *t,
		  struct target *u, char *refused_path)
{
	const __u64 *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	int r = 0, nr = req->data.nr;
	t->kind = u->kind = NULL;
	t->in_ws = u->in_ws = t->exists = u->exists = false;
	int flags = 0, dirfd = AT_FDCWD;
	uint64_t p = 0;
	switch (nr) {
#ifdef SYS_open
	case SYS_open:
		p = a[0], flags = (int)a[1];
		goto open_call;
#endif
#ifdef SYS_creat
	case SYS_creat:
		p = a[0], flags = O_CREAT | O_WRONLY | O_TRUNC;
		goto open_call;
#endif
	case SYS_openat2: {
		struct open_how how = { 0 };
		struct iovec l = { &how, sizeof how.flags }, rm = { (void *)(uintptr_t)a[2], sizeof how.flags };
		if (process_vm_readv(pid, &l, 1, &rm, 1, 0) != (ssize_t)sizeof how.flags)
			how.flags = O_RDWR | O_CREAT; /* unreadable: assume the worst */
		dirfd = (int)a[0], p = a[1], flags = (int)how.flags;
		goto open_call;
	}
	case SYS_openat:
		dirfd = (int)a[0], p = a[1], flags = (int)a[2];
	open_call:
		if (!(flags & (O_WRONLY | O_RDWR | O_TRUNC | O_CREAT)))
			break;
		bool excl = (flags & O_CREAT) && (flags & O_EXCL);
		if (excl)
			flags |= O_NOFOLLOW; /* O_EXCL never follows a last symlink */
		if ((r = resolve(c, pid, dirfd, p, !(flags & O_NOFOLLOW), t)) < 0)
			break;
		/* O_EXCL on what exists fails (EEXIST): nothing is changed */
		if (t->exists && !excl && (flags & (O_WRONLY | O_RDWR | O_TRUNC)))
			r = save(c, t, SAVED_COPY);
		else if (!t->exists && (flags & O_CREAT))
			t->kind = "file";
		break;
	case SYS_truncate:
		if ((r = resolve(c, pid, AT_FDCWD, a[0], true, t)) == 0)
			r = save(c, t, SAVED_COPY);
		break;
	/* a mode change: the file's name kept (a link) while it still has its mode */
#ifdef SYS_chmod
	case SYS_chmod:
		if ((r = resolve(c, pid, AT_FDCWD, a[0], true, t)) == 0)
			r = save(c, t, SAVED_LINK);
		break;
#endif
	case SYS_fchmodat:
	case SYS_fchmodat2:
		flags = nr == SYS_fchmodat2 ? (int)a[3] : 0;
		if ((r = resolve(c, pid, (int)a[0], a[1], !(flags & AT_SYMLINK_NOFOLLOW), t)) == 0)
			r = save(c, t, SAVED_LINK);
		break;
#ifdef SYS_unlink
	case SYS_unlink:
		if ((r = resolve(c, pid, AT_FDCWD, a[0], false, t)) == 0)
			r = save(c, t, SAVED_LINK);
		break;
#endif
#ifdef SYS_rmdir
	case SYS_rmdir:
		if ((r = resolve(c, pid, AT_FDCWD, a[0], false, t)) == 0)
			r = save_tree(c, t, 0);
		break;
#endif
	case SYS_unlinkat:
		if ((r = resolve(c, pid, (int)a[0], a[1], false, t)) == 0)
			r = S_ISDIR(t->st.st_mode) && t->exists ? save_tree(c, t, 0) : save(c, t, SAVED_LINK);
		break;
#ifdef SYS_rename
	case SYS_rename:
		flags = 0, dirfd = AT_FDCWD;
		r = resolve(c, pid, AT_FDCWD, a[0], false, t);
		if (!r)
			r = resolve(c, pid, AT_FDCWD, a[1], false, u);
		goto rename_call;
#endif
	case SYS_renameat:
	case SYS_renameat2:
		flags = nr == SYS_renameat2 ? (int)a[4] : 0;
		r = resolve(c, pid, (int)a[0], a[1], false, t);
		if (!r)
			r = resolve(c, pid, (int)a[2], a[3], false, u);
#ifdef SYS_rename
	rename_call:
#endif
		if (r)
			break;
		/* the source moves (saved where it was), the destination goes (or is swapped) */
		r = S_ISDIR(t->st.st_mode) && t->exists ? save_tree(c, t, 0) : save(c, t, SAVED_LINK);
		if (!r && u->exists)
			r = S_ISDIR(u->st.st_mode) ? save_tree(c, u, 0) : save(c, u, SAVED_LINK);
		if (!r && t->exists)
			u->kind = "rename"; /* over a name that was there too: saved above */
		if (!r && (flags & RENAME_EXCHANGE) && u->exists)
			t->kind = "rename"; /* swapped: each name now holds the other's */
		break;
#ifdef SYS_mkdir
	case SYS_mkdir:
		if ((r = resolve(c, pid, AT_FDCWD, a[0], false, t)) == 0)
			t->kind = "dir";
		break;
#endif
	case SYS_mkdirat:
		if ((r = resolve(c, pid, (int)a[0], a[1], false, t)) == 0)
			t->kind = "dir";
		break;
#ifdef SYS_symlink
	case SYS_symlink:
		if ((r = resolve(c, pid, AT_FDCWD, a[1], false, t)) == 0)
			t->kind = "symlink";
		break;
#endif
	case SYS_symlinkat:
		if ((r = resolve(c, pid, (int)a[1], a[2], false, t)) == 0)
			t->kind = "symlink";
		break;
#ifdef SYS_link
	case SYS_link:
		if ((r = resolve(c, pid, AT_FDCWD, a[1], false, t)) == 0)
			t->kind = "link";
		if (!r && (r = resolve(c, pid, AT_FDCWD, a[0], false, u)) == 0)
			r = save(c, u, SAVED_LINK);
		break;
#endif
	case SYS_linkat:
		if ((r = resolve(c, pid, (int)a[2], a[3], false, t)) == 0)
			t->kind = "link";
		/* the inode gets a second name: its first one kept first (a write through the new one is copied under it) */
		if (!r && (r = resolve(c, pid, (int)a[0], a[1], ((int)a[4] & AT_SYMLINK_FOLLOW) != 0, u)) == 0)
			r = save(c, u, SAVED_LINK);
		break;
#ifdef SYS_mknod
	case SYS_mknod:
		if ((r = resolve(c, pid, AT_FDCWD, a[0], false, t)) == 0)
			t->kind = "node";
		break;
#endif
	case SYS_mknodat:
		if ((r = resolve(c, pid, (int)a[0], a[1], false, t)) == 0)
			t->kind = "node";
		break;
	default:
		break;
	}
	/*
	 * A path that cannot be read or resolved (a bad pointer, a name too
	 * long, a vanished cwd) is the call's own error to make: it goes on and
	 * fails as it would.  Only a failed save refuses.
	 */
	if (r == -EFAULT || r == -ENAMETOOLONG || r == -ENOENT || r == -ENOTDIR || r == -ESRCH ||
	    r == -EACCES || r == -ELOOP)
		r = 0;
	if (r == -TOO_DEEP) {
		/* a name only made destroys nothing (left unjournalled); else it could be a file of the checkpoint's: refused, not let go unsaved */
		bool makes = nr == SYS_mkdirat || nr == SYS_symlinkat || nr == SYS_mknodat;
#ifdef SYS_mkdir
		makes = makes || nr == SYS_mkdir || nr == SYS_symlink || nr == SYS_mknod;
#endif
		r = makes ? 0 : -ENAMETOOLONG;
	}
	if (r < 0)
		snprintf(refused_path, PATH_MAX, "%s", t->in_ws ? t->rel : "?");
	return r;
}

static void answer(struct checkpoint *c, int listener, struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp, size_t resp_size)
{
	char refused_path[PATH_MAX];
	struct target *t = c->targets, *u = c->targets + 1;
	int r = handle(c, req, t, u, refused_path);
	c->st.calls++;
	/* the first call in the workspace takes the git side before anything changes */
	for (int i = 0; i < 2 && !c->git_done && r == 0; i++) {
		struct target *x = i ? u : t;
		if (x->kind)
			(void)covered(c, x);
	}
	memset(resp, 0, resp_size);
	resp->id = req->id;
	if (r < 0) {
		char head[32];
		snprintf(head, sizeof head, "refused\t%d", -r);
		(void)journal_put(c, head, refused_path);
		c->st.refused++;
		resp->error = r;
		tell(c, NEWS_REFUSED, -r, (pid_t)req->pid, refused_path);
	} else {
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	}
	/* ENOENT: the caller died (or was interrupted) meanwhile */
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	for (int i = 0; i < 2; i++) {
		struct target *x = i ? u : t;
		if (r == 0 && x->kind && created(c, x, x->kind) < 0)
			tell(c, NEWS_REFUSED, EIO, (pid_t)req->pid, x->rel); /* unjournalled: said */
	}
}

/* The "end" records: what the sandbox left at each path the journal names. */
static void end_records(struct checkpoint *c)
{
	for (size_t i = 0; i < c->cap_paths; i++) {
		if (!c->paths[i].path || !(c->paths[i].flags & PATH_NAMED))
			continue;
		char host[PATH_MAX], head[160];
		struct stat st;
		snprintf(host, sizeof host, "%s/%s", c->ws, c->paths[i].path);
		if (lstat(host, &st) != 0)
			snprintf(head, sizeof head, "end\t-\t0\t0\t0");
		else
			snprintf(head, sizeof head, "end\t%c\t%llu\t%lld\t%lld",
				 S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'o',
				 (unsigned long long)st.st_ino, (long long)st.st_size, ts_ns(&st.st_mtim));
		char line[STORE_LINE_MAX];
		size_t h = strlen(head);
		memcpy(line, head, h);
		line[h++] = '\t';
		ssize_t e = store_escape(c->paths[i].path, line + h, sizeof line - h - 1);
		if (e < 0)
			continue;
		h += (size_t)e;
		line[h++] = '\n';
		(void)!write(c->journal, line, h);
	}
	if (c->npaths)
		fsync(c->journal); /* what undo needs survives a crash of the machine too */
}

/* Receives the listener from the helper: -1 when the sandbox ended first (or sent none). */
static int listener_recv(struct checkpoint *c)
{
	for (;;) {
		struct pollfd p[2] = { { c->sock[0], POLLIN, 0 }, { c->stop[0], POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents)
			return -1;
		char one;
		int fd;
		return fdpass_recv(c->sock[0], &one, 1, &fd) > 0 ? fd : -1;
	}
}

static void worker(struct checkpoint *c)
{
	int listener = listener_recv(c);
	/*
	 * Each call waits for this worker and back: switch to it on the caller's
	 * CPU rather than wake it on another (seccomp_unotify(2), Linux 6.6;
	 * older kernels refuse it and wake as before).
	 */
	if (listener >= 0)
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	time_moved_on(&c->t);
	struct seccomp_notif_sizes sz = { 0 };
	if (listener >= 0 && syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) != 0)
		sz = (struct seccomp_notif_sizes){ sizeof(struct seccomp_notif),
						   sizeof(struct seccomp_notif_resp), 0 };
	size_t rq = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif
								      : sizeof(struct seccomp_notif);
	size_t rs = sz.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
			    ? sz.seccomp_notif_resp
			    : sizeof(struct seccomp_notif_resp);
	struct seccomp_notif *req = calloc(1, rq);
	struct seccomp_notif_resp *resp = calloc(1, rs);
	c->targets = calloc(2, sizeof *c->targets);
	while (listener >= 0 && req && resp && c->targets) {
		struct pollfd p[2] = { { listener, POLLIN, 0 }, { c->stop[0], POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents & POLLIN) {
			memset(req, 0, rq);
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0)
				answer(c, listener, req, resp, rs);
			else if (errno != EINTR && errno != ENOENT)
				break;
			continue;
		}
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break; /* every process of the sandbox is gone */
		if (p[1].revents)
			break;
	}
	/* the launcher says stop once the sandbox ended; wait for it so no later call is missed */
	char b;
	while (read(c->stop[0], &b, 1) < 0 && errno == EINTR)
		;
	end_records(c);
	tell(c, NEWS_STATS, 0, 0, NULL);
}

/* ---- the launcher's side ------------------------------------------------------------------ */

int checkpoint_probe(char *why, size_t whylen)
{
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) != 0) {
		int e = errno;
		snprintf(why, whylen, "this kernel has no seccomp user notification (Linux 5.0): %s",
			 strerror(e));
		return -e;
	}
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
	if (fd < 0) {
		int e = errno;
		snprintf(why, whylen, "this kernel has no openat2 (Linux 5.6): %s", strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}


static bool within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
}

struct checkpoint *checkpoint_new(const struct checkpoint_config *cfg, checkpoint_refused_fn refused,
				  void *ctx, char *err, size_t errlen)
{
	struct checkpoint *c = calloc(1, sizeof *c);
	char *root = NULL, *canon = NULL;
	struct stat ws, rs;
	if (!c || !(c->ws = strdup(cfg->workspace)) || !(root = store_root(cfg->home))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	c->dirfd = c->objfd = c->journal = c->lockfd = c->root_fd = -1;
	c->sock[0] = c->sock[1] = c->news[0] = c->news[1] = c->stop[0] = c->stop[1] = -1;
	c->wslen = strlen(c->ws);
	c->refused = refused;
	c->ctx = ctx;
	c->cover_ignored = cfg->ignored;
	char failed[PATH_MAX];
	int r = profile_mkdirs(root, failed, sizeof failed);
	if (r < 0 || !(canon = realpath(root, NULL))) {
		snprintf(err, errlen, "cannot make the checkpoint store %s: %s (set XDG_STATE_HOME)", root,
			 strerror(r < 0 ? -r : errno));
		goto fail;
	}
	if (within(canon, c->ws)) {
		snprintf(err, errlen,
			 "the checkpoint store %s is inside the workspace, where the sandbox could change "
			 "it (set XDG_STATE_HOME to a directory outside %s)",
			 canon, c->ws);
		goto fail;
	}
	if (stat(c->ws, &ws) != 0 || stat(canon, &rs) != 0) {
		snprintf(err, errlen, "cannot stat the workspace or the store: %s", strerror(errno));
		goto fail;
	}
	c->wsdev = ws.st_dev;
	c->mode = ws.st_dev == rs.st_dev ? "link" : "copy";
	if (asprintf(&c->dir, "%s/%s", canon, cfg->session_id) < 0) {
		c->dir = NULL;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (mkdir(c->dir, 0700) != 0 || (c->dirfd = open(c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(c->dirfd, "objects", 0700) != 0 ||
	    (c->objfd = openat(c->dirfd, "objects", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (c->journal = openat(c->dirfd, "journal", O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
				 0600)) < 0 ||
	    (c->lockfd = openat(c->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    flock(c->lockfd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, errlen, "cannot make the checkpoint store %s: %s", c->dir, strerror(errno));
		goto fail;
	}
	struct stat gs;
	char gitp[PATH_MAX];
	snprintf(gitp, sizeof gitp, "%s/.git", c->ws);
	c->git = lstat(gitp, &gs) == 0;
	checkpoint_time(&c->t);
	char num[32];
	snprintf(num, sizeof num, "%lld", ts_ns(&c->t));
	if ((r = store_meta_put(c->dirfd, "version", "1")) < 0 ||
	    (r = store_meta_put(c->dirfd, "session", cfg->session_id)) < 0 ||
	    (r = store_meta_put(c->dirfd, "workspace", c->ws)) < 0 ||
	    (r = store_meta_put(c->dirfd, "started", num)) < 0 ||
	    (r = store_meta_put(c->dirfd, "mode", c->mode)) < 0 ||
	    (r = store_meta_put(c->dirfd, "ignored", c->cover_ignored ? "1" : "0")) < 0 ||
	    (r = store_meta_put(c->dirfd, "git", c->git ? "1" : "0")) < 0 ||
	    (r = store_meta_put(c->dirfd, "command", cfg->command && !strchr(cfg->command, '\n')
								 ? cfg->command
								 : "?")) < 0) {
		snprintf(err, errlen, "cannot write the checkpoint's meta: %s", strerror(-r));
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, c->sock) != 0 || pipe2(c->news, O_CLOEXEC) != 0 ||
	    pipe2(c->stop, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "cannot make the checkpoint's sockets: %s", strerror(errno));
		goto fail;
	}
	fcntl(c->sock[0], F_SETFD, FD_CLOEXEC); /* the sandbox's end, sock[1], is inherited */
	fcntl(c->news[0], F_SETFL, O_NONBLOCK);
	free(root);
	free(canon);
	return c;
fail:
	free(root);
	free(canon);
	/* an unfinished store is left for `undo --forget`: its journal names nothing */
	checkpoint_free(c);
	return NULL;
}

const char *checkpoint_store(const struct checkpoint *c)
{
	return c ? c->dir : NULL;
}

const char *checkpoint_mode(const struct checkpoint *c)
{
	return c ? c->mode : NULL;
}

int checkpoint_sandbox_fd(const struct checkpoint *c)
{
	return c ? c->sock[1] : -1;
}

int checkpoint_start(struct checkpoint *c)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(1);
		prctl(PR_SET_NAME, "airlock-undo");
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		close(c->sock[1]);
		close(c->news[0]);
		close(c->stop[1]);
		c->sock[1] = c->news[0] = c->stop[1] = -1;
		/* every descriptor but its own: the launcher's channel, sockets, log */
		int keep[] = { c->dirfd, c->objfd, c->journal, c->lockfd, c->sock[0], c->news[1], c->stop[0] };
		int top = 0;
		for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
			top = keep[i] > top ? keep[i] : top;
		for (int fd = 3; fd <= top; fd++) {
			bool mine = false;
			for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
				mine |= keep[i] == fd;
			if (!mine)
				close(fd);
		}
		close_range((unsigned)top + 1, ~0U, 0);
		worker(c);
		_exit(0);
	}
	c->worker = pid;
	close(c->news[1]);
	close(c->stop[0]);
	close(c->sock[0]);
	c->news[1] = c->stop[0] = c->sock[0] = -1;
	return 0;
}

void checkpoint_spawned(struct checkpoint *c)
{
	if (c && c->sock[1] >= 0) {
		close(c->sock[1]);
		c->sock[1] = -1;
	}
}

int checkpoint_fd(const struct checkpoint *c)
{
	return c ? c->news[0] : -1;
}

/* Reads one news record (and its path) that the worker wrote whole.  1, 0 (none now), or -errno. */
static int news_read(struct checkpoint *c, struct news *n, char *path)
{
	char buf[sizeof *n + PATH_MAX];
	ssize_t k = read(c->news[0], buf, sizeof *n);
	if (k < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (k == 0)
		return -ECHILD;
	if (k != (ssize_t)sizeof *n)
		return -EIO;
	memcpy(n, buf, sizeof *n);
	if (n->len >= PATH_MAX)
		return -EPROTO;
	size_t got = 0;
	while (got < n->len) {
		struct pollfd p = { c->news[0], POLLIN, 0 };
		ssize_t m = read(c->news[0], path + got, n->len - got);
		if (m > 0)
			got += (size_t)m;
		else if (m == 0)
			return -EIO;
		else if (errno != EAGAIN && errno != EINTR)
			return -errno;
		else
			(void)poll(&p, 1, 100);
	}
	path[n->len] = '\0';
	c->st = n->st;
	return 1;
}

int checkpoint_serve(struct checkpoint *c)
{
	struct news n;
	char path[PATH_MAX];
	for (;;) {
		int r = news_read(c, &n, path);
		if (r <= 0)
			return r;
		if (n.kind == NEWS_REFUSED && c->refused)
			c->refused(c->ctx, n.pid, path, n.err);
	}
}

struct checkpoint_stats checkpoint_stats(const struct checkpoint *c)
{
	return c ? c->st : (struct checkpoint_stats){ 0 };
}

int checkpoint_end(struct checkpoint *c, int status, struct checkpoint_stats *st)
{
	if (!c)
		return -EINVAL;
	int r = 0;
	if (c->worker > 0) {
		(void)!write(c->stop[1], "s", 1);
		fcntl(c->news[0], F_SETFL, 0);
		struct news n;
		char path[PATH_MAX];
		int k;
		while ((k = news_read(c, &n, path)) > 0) {
			if (n.kind == NEWS_REFUSED && c->refused)
				c->refused(c->ctx, n.pid, path, n.err);
			if (n.kind == NEWS_STATS)
				break;
		}
		if (k < 0)
			r = k;
		while (waitpid(c->worker, NULL, 0) < 0 && errno == EINTR)
			;
		c->worker = 0;
	}
	struct timespec now;
	char num[32];
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(num, sizeof num, "%lld", ts_ns(&now));
	int m = store_meta_put(c->dirfd, "ended", num);
	snprintf(num, sizeof num, "%d", status);
	if (!m)
		m = store_meta_put(c->dirfd, "exit", num);
	if (st)
		*st = c->st;
	return r ? r : m;
}

/* ---- changes the launcher itself makes (the session copies applied) -------------------- */

/* The journal's saved and created paths, and the next object's number, read once after the worker ended. */
static void host_load(struct checkpoint *c)
{
	if (c->host_loaded)
		return;
	c->host_loaded = true;
	size_t len = 0;
	char *buf = slurp(c->dirfd, "journal", &len);
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		char *f[8];
		int n = store_split(line, f, 8);
		struct path_slot *sl;
		if (n == 7 && strcmp(f[0], "save") == 0 && (sl = path_find(c, f[6], true)))
			sl->flags |= PATH_SAVED;
		if (n == 3 && strcmp(f[0], "create") == 0 && (sl = path_find(c, f[2], true)))
			sl->flags |= PATH_CREATED;
		line = nl + 1;
	}
	free(buf);
	/* every path named so far already has its end record: only the launcher's get new ones */
	for (size_t i = 0; i < c->cap_paths; i++)
		if (c->paths[i].path)
			c->paths[i].flags &= ~PATH_NAMED;
	DIR *d = fdopendir(openat(c->dirfd, "objects", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *end;
		unsigned long k = strtoul(e->d_name, &end, 10);
		if (!*end && e->d_name[0] != '.' && k >= c->next_obj)
			c->next_obj = k + 1;
	}
	if (d)
		closedir(d);
	char probe[8];
	if (c->git && store_meta_get(c->dirfd, "version", probe, sizeof probe) == 0 &&
	    faccessat(c->dirfd, "refs", F_OK, 0) != 0)
		git_refs(c); /* the sandbox changed no file of the workspace itself: the refs are as at start */
	c->git_done = true; /* the ignored list, if any, is the worker's: everything else is covered */
}

int checkpoint_host_change(struct checkpoint *c, const char *host_path)
{
	if (!c || c->worker > 0 || !host_path)
		return c && c->worker > 0 ? -EBUSY : 0;
	host_load(c);
	struct target *t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	int r = 0;
	size_t n = strlen(host_path);
	if (n >= sizeof t->host || strncmp(host_path, c->ws, c->wslen) != 0 || host_path[c->wslen] != '/')
		goto out; /* not the workspace's (home's agent state): not the checkpoint's */
	memcpy(t->host, host_path, n + 1);
	snprintf(t->rel, sizeof t->rel, "%s", host_path + c->wslen + 1);
	t->in_ws = true;
	struct path_slot *sl = path_find(c, t->rel, false);
	if (sl && (sl->flags & (PATH_SAVED | PATH_CREATED)))
		goto out;
	t->exists = stat_of(AT_FDCWD, t->host, &t->st, &t->born) == 0;
	if (!t->exists) {
		r = created(c, t, "file");
	} else if (S_ISDIR(t->st.st_mode)) {
		r = save_tree(c, t, 0);
	} else {
		/* born after the checkpoint: made in the session by this same route; else its bytes */
		bool ours = !ts_le(&t->born, &c->t);
		r = ours ? 0 : save(c, t, SAVED_COPY);
		if (!r && !ours && (sl = path_find(c, t->rel, true)))
			sl->flags |= PATH_SAVED;
	}
out:
	free(t);
	return r;
}

void checkpoint_host_done(struct checkpoint *c)
{
	if (!c || c->worker > 0 || !c->host_loaded)
		return;
	end_records(c); /* of the paths named since host_load(): the launcher's */
}

void checkpoint_free(struct checkpoint *c)
{
	if (!c)
		return;
	if (c->worker > 0) {
		kill(c->worker, SIGKILL);
		while (waitpid(c->worker, NULL, 0) < 0 && errno == EINTR)
			;
	}
	int *fds[] = { &c->dirfd, &c->objfd, &c->journal, &c->lockfd, &c->root_fd, &c->sock[0], &c->sock[1],
		       &c->news[0], &c->news[1], &c->stop[0], &c->stop[1] };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	for (size_t i = 0; i < c->cap_paths; i++)
		free(c->paths[i].path);
	free(c->paths);
	free(c->inos);
	free(c->ignored_buf);
	free(c->ignored);
	free(c->ws);
	free(c->dir);
	free(c);
}
