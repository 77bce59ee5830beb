/* hook_dir.c — the shim's listing hooks: the session's empty placeholders left out of readdir(3) and scandir(3) of the workspace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/shim.h"

/*
 * A path missing at launch among the session copies' (.claude, .vscode,
 * .mcp.json...) gets an empty placeholder in the workspace as the mount
 * point of its copy (launcher/sandbox/copies.h).  A bare run has no such
 * entry, so `ls -la`, `find .`, os.listdir() and `git status --ignored`
 * would list names that are not there.  The launcher names them in
 * AIRLOCK_PLACEHOLDERS ("NAME:NAME...:/WORKSPACE"); an entry of the
 * workspace's own directory with one of these names is skipped while it is
 * empty (a directory without entries, a regular file of size 0).  Once
 * written to, it shows as usual.
 *
 * Cost: an entry's name is compared only when its first byte is the first
 * byte of a placeholder's name; only then is the directory's identity
 * (st_dev, st_ino of the DIR's fd) compared with the workspace's (taken
 * once), and only then is the entry looked at.  Raw syscalls throughout:
 * the shim's own open hooks are not entered.
 *
 * Covered: readdir, readdir64, readdir_r, readdir64_r, scandir, scandir64
 * called from a dynamically linked program.  Not covered: glibc's own
 * internal readdir calls (nftw, ftw, glob, fts from glibc, scandirat), the
 * getdents64 syscall (static programs, Go, Bun's own listing), programs
 * run with the variable removed.  They see the empty placeholders.
 */

#define MAX_NAMES 64 /* the launcher sends at most this many (copies.c PH_ENV_MAX_NAMES) */

static pthread_once_t ph_once = PTHREAD_ONCE_INIT;
static char ph_buf[4096];      /* a copy of the variable's value, names NUL-separated */
static const char *ph_names[MAX_NAMES];
static size_t ph_count;
static unsigned char ph_first[256]; /* ph_first[c]: some name starts with byte c */
static bool ph_have_root;           /* the workspace was found: ph_dev, ph_ino valid */
static dev_t ph_dev;
static ino_t ph_ino;

static void ph_once_fn(void)
{
	int saved = errno;
	const char *v = getenv("AIRLOCK_PLACEHOLDERS");
	size_t len = v ? strlen(v) : 0;
	if (!v || len >= sizeof ph_buf)
		goto out;
	memcpy(ph_buf, v, len + 1);
	char *p = ph_buf;
	while (*p && *p != '/' && ph_count < MAX_NAMES) {
		char *colon = strchr(p, ':');
		if (!colon)
			goto out;
		*colon = '\0';
		if (*p) {
			ph_names[ph_count++] = p;
			ph_first[(unsigned char)*p] = 1;
		}
		p = colon + 1;
	}
	struct stat st;
	if (*p == '/' && syscall(SYS_newfstatat, AT_FDCWD, p, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
		ph_dev = st.st_dev;
		ph_ino = st.st_ino;
		ph_have_root = true;
	}
out:
	if (!ph_have_root)
		memset(ph_first, 0, sizeof ph_first);
	errno = saved;
}

/* True when name is one of the placeholders' names (cheap: most names fail at the first byte). */
static bool ph_named(const char *name)
{
	if (!ph_first[(unsigned char)name[0]])
		return false;
	for (size_t i = 0; i < ph_count; i++)
		if (strcmp(name, ph_names[i]) == 0)
			return true;
	return false;
}

/* True when dirfd is the workspace's own directory. */
static bool ph_root(int dirfd)
{
	struct stat st;
	return dirfd >= 0 && syscall(SYS_fstat, dirfd, &st) == 0 && st.st_dev == ph_dev &&
	       st.st_ino == ph_ino;
}

/* True when name in dirfd is an empty directory or an empty regular file. */
static bool ph_empty(int dirfd, const char *name)
{
	struct stat st;
	if (syscall(SYS_newfstatat, dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return false;
	if (S_ISREG(st.st_mode))
		return st.st_size == 0;
	if (!S_ISDIR(st.st_mode))
		return false;
	int fd = (int)syscall(SYS_openat, dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	char buf[1024] __attribute__((aligned(8)));
	bool empty = true;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
		if (n <= 0) {
			empty = empty && n == 0;
			break;
		}
		for (long off = 0; off < n && empty;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			empty = strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0;
			off += d->d_reclen;
		}
		if (!empty)
			break;
	}
	syscall(SYS_close, fd);
	return empty;
}

/* True when the entry name of the directory dirfd is an empty placeholder of this session: left out. */
static bool ph_hidden(int dirfd, const char *name)
{
	pthread_once(&ph_once, ph_once_fn);
	if (!ph_named(name))
		return false;
	int saved = errno;
	bool hide = ph_root(dirfd) && ph_empty(dirfd, name);
	errno = saved;
	return hide;
}

SHIM_EXPORT struct dirent *readdir(DIR *dirp)
{
	if (SHIM_MISSING(readdir)) {
		errno = ENOSYS;
		return NULL;
	}
	struct dirent *e;
	while ((e = real_readdir(dirp)) && ph_hidden(dirfd(dirp), e->d_name))
		;
	return e;
}

SHIM_EXPORT struct dirent64 *readdir64(DIR *dirp)
{
	if (SHIM_MISSING(readdir64)) {
		errno = ENOSYS;
		return NULL;
	}
	struct dirent64 *e;
	while ((e = real_readdir64(dirp)) && ph_hidden(dirfd(dirp), e->d_name))
		;
	return e;
}

/* glibc marks the _r forms deprecated; programs still call them, and SHIM_MISSING names them */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

SHIM_EXPORT int readdir_r(DIR *dirp, struct dirent *entry, struct dirent **result)
{
	if (SHIM_MISSING(readdir_r))
		return ENOSYS;
	int r;
	while ((r = real_readdir_r(dirp, entry, result)) == 0 && *result &&
	       ph_hidden(dirfd(dirp), (*result)->d_name))
		;
	return r;
}

SHIM_EXPORT int readdir64_r(DIR *dirp, struct dirent64 *entry, struct dirent64 **result)
{
	if (SHIM_MISSING(readdir64_r))
		return ENOSYS;
	int r;
	while ((r = real_readdir64_r(dirp, entry, result)) == 0 && *result &&
	       ph_hidden(dirfd(dirp), (*result)->d_name))
		;
	return r;
}

#pragma GCC diagnostic pop

/*
 * scandir(3): glibc reads the directory with its internal readdir, which no
 * hook sees; the caller's filter is called for each entry, so the shim
 * passes its own filter, which leaves the placeholders out and then asks
 * the caller's.  The directory is opened (raw) only when it is the
 * workspace's; the filter's state is the thread's (scandir calls it
 * synchronously).
 */
static __thread int scan_fd = -1;
static __thread int (*scan_filter)(const struct dirent *);
static __thread int (*scan_filter64)(const struct dirent64 *);

static int scan_select(const struct dirent *d)
{
	if (ph_hidden(scan_fd, d->d_name))
		return 0;
	return scan_filter ? scan_filter(d) : 1;
}

static int scan_select64(const struct dirent64 *d)
{
	if (ph_hidden(scan_fd, d->d_name))
		return 0;
	return scan_filter64 ? scan_filter64(d) : 1;
}

/* The workspace's fd when path is the workspace and no scandir of this thread is under way, else -1. */
static int scan_open(const char *path)
{
	pthread_once(&ph_once, ph_once_fn);
	if (!ph_have_root || scan_fd >= 0 || !path)
		return -1;
	int saved = errno;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && !ph_root(fd)) {
		syscall(SYS_close, fd);
		fd = -1;
	}
	errno = saved;
	return fd;
}

static void scan_close(int fd)
{
	int saved = errno;
	syscall(SYS_close, fd);
	scan_fd = -1;
	errno = saved;
}

SHIM_EXPORT int scandir(const char *dir, struct dirent ***namelist,
			int (*filter)(const struct dirent *),
			int (*compar)(const struct dirent **, const struct dirent **))
{
	if (SHIM_MISSING(scandir)) {
		errno = ENOSYS;
		return -1;
	}
	int fd = scan_open(dir);
	if (fd < 0)
		return real_scandir(dir, namelist, filter, compar);
	scan_fd = fd;
	scan_filter = filter;
	int r = real_scandir(dir, namelist, scan_select, compar);
	scan_close(fd);
	return r;
}

SHIM_EXPORT int scandir64(const char *dir, struct dirent64 ***namelist,
			  int (*filter)(const struct dirent64 *),
			  int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
	if (SHIM_MISSING(scandir64)) {
		errno = ENOSYS;
		return -1;
	}
	int fd = scan_open(dir);
	if (fd < 0)
		return real_scandir64(dir, namelist, filter, compar);
	scan_fd = fd;
	scan_filter64 = filter;
	int r = real_scandir64(dir, namelist, scan_select64, compar);
	scan_close(fd);
	return r;
}
