/* hook_file.c — the shim's file hooks: open and its variants, fopen, and every call that changes the namespace. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/canon.h"
#include "preload/shim.h"

#define READ POLICY_FILE_READ
#define WRITE POLICY_FILE_WRITE

/* O_TMPFILE holds the O_DIRECTORY bit: only all of its bits mean O_TMPFILE (open(2)). */
static bool is_tmpfile(int flags)
{
	return (flags & __O_TMPFILE) == __O_TMPFILE;
}

unsigned shim_open_action(int flags)
{
	if (flags & O_PATH)
		return 0;
	int acc = flags & O_ACCMODE;
	unsigned a = acc == O_RDONLY ? READ : acc == O_WRONLY ? WRITE : READ | WRITE;
	if ((flags & (O_CREAT | O_TRUNC | O_APPEND)) || is_tmpfile(flags))
		a |= WRITE;
	return a;
}

unsigned shim_open_canon_flags(int flags)
{
	bool nofollow = (flags & O_NOFOLLOW) || (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	return nofollow ? CANON_NOFOLLOW : 0;
}

/*
 * Decides (dirfd, path) for the actions; true when the call must not happen
 * (errno then EACCES).  errno is otherwise left as the caller had it.
 */
static bool denied(int dirfd, const char *path, unsigned actions, unsigned canon_flags)
{
	if (!actions || !shim_enter())
		return false;
	int saved = errno;
	enum policy_decision d = shim_file(dirfd, path, actions, canon_flags);
	shim_leave();
	errno = d == POLICY_ALLOW ? saved : EACCES;
	return d != POLICY_ALLOW;
}

static bool open_denied(int dirfd, const char *path, int flags)
{
	return denied(dirfd, path, shim_open_action(flags), shim_open_canon_flags(flags));
}

/*
 * Answers as the kernel would give them.  A rule's refusal is for a change
 * the rule forbids; a call that cannot change anything gets the kernel's own
 * answer, with no decision (no ask, no deny in the log): mkdir of a name
 * that exists is EEXIST (Node's mkdir({recursive: true}) walks up to the
 * workspace and relies on it), unlink of a name that does not is ENOENT,
 * chmod to the mode a file has already changes nothing.  The answer is given
 * here, without calling the kernel, so a name that appears or goes between
 * the look and the call cannot turn it into a change nobody decided.  The
 * last component is not followed, as mkdir(2), unlink(2), rmdir(2) and
 * link(2) do not.
 */
static bool name_exists(int dirfd, const char *path)
{
	struct stat st;
	int saved = errno;
	bool yes = path && fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
	errno = saved;
	return yes;
}

/* The name exists: the call making it fails with EEXIST (true), as mkdir(2) and link(2) say. */
static bool exists_already(int dirfd, const char *path)
{
	if (!name_exists(dirfd, path))
		return false;
	errno = EEXIST;
	return true;
}

/* The name does not exist: the call removing it fails with ENOENT (true), as unlink(2) says. */
static bool missing_already(int dirfd, const char *path)
{
	struct stat st;
	int saved = errno;
	if (!path || fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
		errno = saved;
		return false;
	}
	return true; /* errno ENOENT */
}

/* The file has the mode already (its permission bits, set-id and sticky bits): nothing to change. */
static bool mode_already(int dirfd, const char *path, mode_t mode, int flags)
{
	struct stat st;
	int saved = errno;
	bool yes = path && fstatat(dirfd, path, &st, flags & AT_SYMLINK_NOFOLLOW) == 0 &&
		   (st.st_mode & 07777) == (mode & 07777);
	errno = saved;
	return yes;
}

/*
 * open(2) with O_CREAT of a file that exists creates nothing: read-only
 * (no O_TRUNC, no O_APPEND), it is a read, decided as one, and opened
 * without O_CREAT so that it cannot create the file after all if the file
 * went meanwhile; with O_EXCL it fails with EEXIST.  *flags may lose O_CREAT;
 * true when the call must not happen (errno set).
 */
static bool create_denied(int dirfd, const char *path, int *flags)
{
	int f = *flags;
	if ((f & O_CREAT) && (f & O_ACCMODE) == O_RDONLY && !(f & (O_TRUNC | O_APPEND)) &&
	    name_exists(dirfd, path)) {
		if (f & O_EXCL) {
			errno = EEXIST;
			return true;
		}
		*flags = f & ~O_CREAT;
	}
	return open_denied(dirfd, path, *flags);
}

/* A changed namespace invalidates cached path resolutions; errno kept. */
static int changed(int r)
{
	if (r == 0) {
		int saved = errno;
		shim_namespace_changed();
		errno = saved;
	}
	return r;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return ((flags & O_CREAT) || is_tmpfile(flags)) ? va_arg(ap, mode_t) : 0;
}

#define MISSING(name) SHIM_MISSING(name)
#define NOSYS(ret)            \
	do {                  \
		errno = ENOSYS; \
		return ret;   \
	} while (0)

SHIM_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	if (MISSING(open))
		NOSYS(-1);
	if (create_denied(AT_FDCWD, path, &flags))
		return -1;
	return real_open(path, flags, mode);
}

SHIM_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	if (MISSING(open64))
		NOSYS(-1);
	if (create_denied(AT_FDCWD, path, &flags))
		return -1;
	return real_open64(path, flags, mode);
}

SHIM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	if (MISSING(openat))
		NOSYS(-1);
	if (create_denied(dirfd, path, &flags))
		return -1;
	return real_openat(dirfd, path, flags, mode);
}

SHIM_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	if (MISSING(openat64))
		NOSYS(-1);
	if (create_denied(dirfd, path, &flags))
		return -1;
	return real_openat64(dirfd, path, flags, mode);
}

/* The _FORTIFY_SOURCE entry points: open without a mode (glibc checks O_CREAT has one). */

SHIM_EXPORT int __open_2(const char *path, int flags)
{
	if (MISSING(__open_2))
		NOSYS(-1);
	return open_denied(AT_FDCWD, path, flags) ? -1 : real___open_2(path, flags);
}

SHIM_EXPORT int __open64_2(const char *path, int flags)
{
	if (MISSING(__open64_2))
		NOSYS(-1);
	return open_denied(AT_FDCWD, path, flags) ? -1 : real___open64_2(path, flags);
}

SHIM_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	if (MISSING(__openat_2))
		NOSYS(-1);
	return open_denied(dirfd, path, flags) ? -1 : real___openat_2(dirfd, path, flags);
}

SHIM_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	if (MISSING(__openat64_2))
		NOSYS(-1);
	return open_denied(dirfd, path, flags) ? -1 : real___openat64_2(dirfd, path, flags);
}

SHIM_EXPORT int creat(const char *path, mode_t mode)
{
	if (MISSING(creat))
		NOSYS(-1);
	return open_denied(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC) ? -1 : real_creat(path, mode);
}

SHIM_EXPORT int creat64(const char *path, mode_t mode)
{
	if (MISSING(creat64))
		NOSYS(-1);
	return open_denied(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC) ? -1
									 : real_creat64(path, mode);
}

/* fopen(3) modes: r, r+, w, w+, a, a+, with b, e, m, x (O_EXCL) and c anywhere after the first. */
static int fopen_flags(const char *mode)
{
	if (!mode)
		return O_RDONLY;
	int flags = mode[0] == 'r' ? O_RDONLY : mode[0] == 'w' ? O_WRONLY | O_CREAT | O_TRUNC
				 : mode[0] == 'a' ? O_WRONLY | O_CREAT | O_APPEND
						  : O_RDONLY;
	for (const char *m = mode + 1; *m && *m != ','; m++) {
		if (*m == '+')
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		else if (*m == 'x')
			flags |= O_EXCL;
	}
	return flags;
}

SHIM_EXPORT FILE *fopen(const char *path, const char *mode)
{
	if (MISSING(fopen))
		NOSYS(NULL);
	return open_denied(AT_FDCWD, path, fopen_flags(mode)) ? NULL : real_fopen(path, mode);
}

SHIM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	if (MISSING(fopen64))
		NOSYS(NULL);
	return open_denied(AT_FDCWD, path, fopen_flags(mode)) ? NULL : real_fopen64(path, mode);
}

/* freopen(NULL, mode, f) reopens f's own file: decide on the file behind its descriptor. */
static bool freopen_denied(const char *path, const char *mode, FILE *stream)
{
	char self[64];
	if (!path && stream) {
		snprintf(self, sizeof self, "/proc/self/fd/%d", fileno(stream));
		path = self;
	}
	return open_denied(AT_FDCWD, path, fopen_flags(mode));
}

SHIM_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	if (MISSING(freopen))
		NOSYS(NULL);
	return freopen_denied(path, mode, stream) ? NULL : real_freopen(path, mode, stream);
}

SHIM_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	if (MISSING(freopen64))
		NOSYS(NULL);
	return freopen_denied(path, mode, stream) ? NULL : real_freopen64(path, mode, stream);
}

SHIM_EXPORT int truncate(const char *path, off_t length)
{
	if (MISSING(truncate))
		NOSYS(-1);
	return denied(AT_FDCWD, path, WRITE, 0) ? -1 : real_truncate(path, length);
}

SHIM_EXPORT int truncate64(const char *path, off64_t length)
{
	if (MISSING(truncate64))
		NOSYS(-1);
	return denied(AT_FDCWD, path, WRITE, 0) ? -1 : real_truncate64(path, length);
}

/* Listing a directory reads it: glibc's opendir(3) opens it past our open hooks. */
SHIM_EXPORT DIR *opendir(const char *path)
{
	if (MISSING(opendir))
		NOSYS(NULL);
	return denied(AT_FDCWD, path, READ, 0) ? NULL : real_opendir(path);
}

SHIM_EXPORT int unlink(const char *path)
{
	if (MISSING(unlink))
		NOSYS(-1);
	if (missing_already(AT_FDCWD, path))
		return -1;
	return denied(AT_FDCWD, path, WRITE, CANON_NOFOLLOW) ? -1 : changed(real_unlink(path));
}

SHIM_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	if (MISSING(unlinkat))
		NOSYS(-1);
	if (missing_already(dirfd, path))
		return -1;
	return denied(dirfd, path, WRITE, CANON_NOFOLLOW) ? -1
							  : changed(real_unlinkat(dirfd, path, flags));
}

SHIM_EXPORT int rmdir(const char *path)
{
	if (MISSING(rmdir))
		NOSYS(-1);
	if (missing_already(AT_FDCWD, path))
		return -1;
	return denied(AT_FDCWD, path, WRITE, CANON_NOFOLLOW) ? -1 : changed(real_rmdir(path));
}

static bool two_denied(int olddirfd, const char *oldpath, unsigned oldflags, int newdirfd,
		       const char *newpath)
{
	return denied(olddirfd, oldpath, WRITE, oldflags) ||
	       denied(newdirfd, newpath, WRITE, CANON_NOFOLLOW);
}

/*
 * A rename takes the content, and the read rule it was under, to the new
 * name: `mv .env x; cat x` must not read what `cat .env` may not.  So it
 * needs a write on both names and, when the source is kept from reads (deny
 * or ask, on its own name or, for a directory, on any entry below it), the
 * same keeping at the new name (`.env` -> `.env.bak`, both denied, is
 * fine); otherwise the source's verdict decides (shim_file_move: the
 * directory walk is bounded at 65536 entries and 32 levels, past which the
 * move is refused).  RENAME_EXCHANGE moves both contents: both ways.
 */
static bool move_denied(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
			unsigned int flags)
{
	if (two_denied(olddirfd, oldpath, CANON_NOFOLLOW, newdirfd, newpath))
		return true;
	if (!shim_enter())
		return false;
	int saved = errno;
	enum policy_decision d = shim_file_move(olddirfd, oldpath, newdirfd, newpath);
	if (d == POLICY_ALLOW && (flags & RENAME_EXCHANGE))
		d = shim_file_move(newdirfd, newpath, olddirfd, oldpath);
	shim_leave();
	errno = d == POLICY_ALLOW ? saved : EACCES;
	return d != POLICY_ALLOW;
}

SHIM_EXPORT int rename(const char *oldpath, const char *newpath)
{
	if (MISSING(rename))
		NOSYS(-1);
	return move_denied(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0)
		       ? -1
		       : changed(real_rename(oldpath, newpath));
}

SHIM_EXPORT int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	if (MISSING(renameat))
		NOSYS(-1);
	return move_denied(olddirfd, oldpath, newdirfd, newpath, 0)
		       ? -1
		       : changed(real_renameat(olddirfd, oldpath, newdirfd, newpath));
}

SHIM_EXPORT int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
			  unsigned int flags)
{
	if (MISSING(renameat2))
		NOSYS(-1);
	return move_denied(olddirfd, oldpath, newdirfd, newpath, flags)
		       ? -1
		       : changed(real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags));
}

/*
 * A hard link is a second name for the file, decided later under that name:
 * so making one needs a write on both names and a read of the original
 * (`ln .env x; cat x` must not read what `cat .env` may not).
 */
static bool link_denied(int olddirfd, const char *oldpath, unsigned oldflags, int newdirfd,
			const char *newpath)
{
	return two_denied(olddirfd, oldpath, oldflags, newdirfd, newpath) ||
	       denied(olddirfd, oldpath, READ, oldflags);
}

SHIM_EXPORT int link(const char *oldpath, const char *newpath)
{
	if (MISSING(link))
		NOSYS(-1);
	if (exists_already(AT_FDCWD, newpath))
		return -1;
	return link_denied(AT_FDCWD, oldpath, CANON_NOFOLLOW, AT_FDCWD, newpath)
		       ? -1
		       : changed(real_link(oldpath, newpath));
}

SHIM_EXPORT int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		       int flags)
{
	if (MISSING(linkat))
		NOSYS(-1);
	if (exists_already(newdirfd, newpath))
		return -1;
	unsigned of = (flags & AT_SYMLINK_FOLLOW) ? 0 : CANON_NOFOLLOW;
	if (flags & AT_EMPTY_PATH)
		of |= CANON_EMPTY_PATH;
	return link_denied(olddirfd, oldpath, of, newdirfd, newpath)
		       ? -1
		       : changed(real_linkat(olddirfd, oldpath, newdirfd, newpath, flags));
}

SHIM_EXPORT int symlink(const char *target, const char *linkpath)
{
	if (MISSING(symlink))
		NOSYS(-1);
	if (exists_already(AT_FDCWD, linkpath))
		return -1;
	return denied(AT_FDCWD, linkpath, WRITE, CANON_NOFOLLOW) ? -1
								 : changed(real_symlink(target, linkpath));
}

SHIM_EXPORT int symlinkat(const char *target, int newdirfd, const char *linkpath)
{
	if (MISSING(symlinkat))
		NOSYS(-1);
	if (exists_already(newdirfd, linkpath))
		return -1;
	return denied(newdirfd, linkpath, WRITE, CANON_NOFOLLOW)
		       ? -1
		       : changed(real_symlinkat(target, newdirfd, linkpath));
}

SHIM_EXPORT int mkdir(const char *path, mode_t mode)
{
	if (MISSING(mkdir))
		NOSYS(-1);
	if (exists_already(AT_FDCWD, path))
		return -1;
	return denied(AT_FDCWD, path, WRITE, CANON_NOFOLLOW) ? -1 : changed(real_mkdir(path, mode));
}

SHIM_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	if (MISSING(mkdirat))
		NOSYS(-1);
	if (exists_already(dirfd, path))
		return -1;
	return denied(dirfd, path, WRITE, CANON_NOFOLLOW) ? -1
							  : changed(real_mkdirat(dirfd, path, mode));
}

SHIM_EXPORT int chmod(const char *path, mode_t mode)
{
	if (MISSING(chmod))
		NOSYS(-1);
	if (mode_already(AT_FDCWD, path, mode, 0))
		return 0;
	return denied(AT_FDCWD, path, WRITE, 0) ? -1 : real_chmod(path, mode);
}

SHIM_EXPORT int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	if (MISSING(fchmodat))
		NOSYS(-1);
	if (mode_already(dirfd, path, mode, flags))
		return 0;
	unsigned cf = (flags & AT_SYMLINK_NOFOLLOW) ? CANON_NOFOLLOW : 0;
	return denied(dirfd, path, WRITE, cf) ? -1 : real_fchmodat(dirfd, path, mode, flags);
}

/* The cwd is part of every relative path's resolution. */
SHIM_EXPORT int chdir(const char *path)
{
	if (MISSING(chdir))
		NOSYS(-1);
	return changed(real_chdir(path));
}

SHIM_EXPORT int fchdir(int fd)
{
	if (MISSING(fchdir))
		NOSYS(-1);
	return changed(real_fchdir(fd));
}
