/* pathsearch.c — the PATH search of execvp(3), allocation-free: what the shim decides and the launcher decides again. */
#include "core/pathsearch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/canon.h"

/* Raw syscalls, so the shim's own hooks are never re-entered. */
static bool executable_file(const char *path)
{
	struct statx st;
	return syscall(SYS_faccessat, AT_FDCWD, path, X_OK, 0) == 0 &&
	       syscall(SYS_statx, AT_FDCWD, path, 0, STATX_TYPE, &st) == 0 && S_ISREG(st.stx_mode);
}

/* Writes "dir/file" (dir n bytes; "." when empty) into out; false when it does not fit. */
static bool candidate(const char *dir, size_t n, const char *file, size_t flen, char *out,
		      size_t outlen)
{
	if (n == 0) {
		dir = ".";
		n = 1;
	}
	if (n + 1 + flen + 1 > outlen)
		return false;
	memcpy(out, dir, n);
	out[n] = '/';
	memcpy(out + n + 1, file, flen + 1);
	return true;
}

int path_search(const char *file, const char *path, char *out, size_t outlen)
{
	char def[256];
	if (!file || !file[0] || strchr(file, '/'))
		return -EINVAL;
	if (!path) {
		size_t n = confstr(_CS_PATH, def, sizeof def);
		path = n > 0 && n <= sizeof def ? def : "/bin:/usr/bin";
	}
	size_t flen = strlen(file);
	for (const char *p = path;; p++) {
		size_t n = strcspn(p, ":");
		if (candidate(p, n, file, flen, out, outlen) && executable_file(out))
			return (int)strlen(out);
		p += n;
		if (*p == '\0')
			return -ENOENT;
	}
}

int path_program(const char *cmd, const char *path, char *out, size_t outlen)
{
	char found[PATH_MAX], cwd[PATH_MAX];
	if (!strchr(cmd, '/')) {
		if (path_search(cmd, path, found, sizeof found) < 0) {
			size_t n = strlen(cmd); /* not found: the name as it is */
			if (n + 1 > outlen)
				return -ENAMETOOLONG;
			memcpy(out, cmd, n + 1);
			return (int)n;
		}
		cmd = found;
	}
	if (cmd[0] != '/' && syscall(SYS_getcwd, cwd, sizeof cwd) < 0)
		return -errno;
	return canon_lexical(cmd[0] == '/' ? NULL : cwd, cmd, out, outlen);
}
