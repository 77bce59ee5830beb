/* hook_spawn.c — posix_spawn file actions: the opens and chdirs libc performs in the child, decided when they are added. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>

#include "core/canon.h"
#include "preload/shim.h"

/*
 * posix_spawn(3) runs its file actions in a child libc creates itself, past
 * every hook, and the actions object is opaque.  So each open is decided when
 * it is added (EACCES refuses it there), and each chdir is remembered here so
 * that later relative paths — and the program itself — resolve where the
 * child will be.  A fixed table: objects past it just keep the caller's cwd
 * as their base, and their opens are still decided.
 */
#define NOTES 16

struct note {
	const posix_spawn_file_actions_t *fa; /* NULL: free */
	char dir[4096];
};

static struct note notes[NOTES];
static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;

static struct note *find(const posix_spawn_file_actions_t *fa)
{
	for (size_t i = 0; i < NOTES; i++)
		if (notes[i].fa == fa)
			return &notes[i];
	return NULL;
}

bool shim_spawn_dir(const posix_spawn_file_actions_t *fa, char *out, size_t cap)
{
	bool found = false;
	if (!fa)
		return false;
	pthread_mutex_lock(&notes_lock);
	struct note *n = find(fa);
	if (n)
		found = shim_join(out, cap, n->dir, (char *)NULL);
	pthread_mutex_unlock(&notes_lock);
	return found;
}

/* Records fa's new working directory (canonical, or relative to its previous one). */
static void remember_dir(const posix_spawn_file_actions_t *fa, int dirfd, const char *path,
			 unsigned flags)
{
	char base[4096], joined[8192], dir[4096];
	const char *p = path;
	if (path && path[0] != '/' && shim_spawn_dir(fa, base, sizeof base)) {
		if (!shim_join(joined, sizeof joined, base, "/", path, (char *)NULL))
			return;
		p = joined;
	}
	if (canon_path(dirfd, p, flags, dir, sizeof dir) < 0)
		return;
	pthread_mutex_lock(&notes_lock);
	struct note *n = find(fa);
	if (!n)
		n = find(NULL);
	if (n) {
		n->fa = fa;
		shim_join(n->dir, sizeof n->dir, dir, (char *)NULL);
	}
	pthread_mutex_unlock(&notes_lock);
}

#define MISSING(name) SHIM_MISSING(name)

SHIM_EXPORT int posix_spawn_file_actions_addopen(posix_spawn_file_actions_t *fa, int fd,
						 const char *path, int oflag, mode_t mode)
{
	char base[4096], joined[8192];
	if (MISSING(posix_spawn_file_actions_addopen))
		return ENOSYS;
	const char *p = path;
	if (path[0] != '/' && shim_spawn_dir(fa, base, sizeof base) &&
	    shim_join(joined, sizeof joined, base, "/", path, (char *)NULL))
		p = joined;
	unsigned actions = shim_open_action(oflag);
	if (actions && shim_enter()) {
		int saved = errno;
		enum policy_decision d = shim_file(AT_FDCWD, p, actions, shim_open_canon_flags(oflag));
		shim_leave();
		errno = saved;
		if (d != POLICY_ALLOW)
			return EACCES;
	}
	return real_posix_spawn_file_actions_addopen(fa, fd, path, oflag, mode);
}

SHIM_EXPORT int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *fa,
						     const char *path)
{
	if (MISSING(posix_spawn_file_actions_addchdir_np))
		return ENOSYS;
	int r = real_posix_spawn_file_actions_addchdir_np(fa, path);
	if (r == 0 && shim_enter()) {
		int saved = errno;
		remember_dir(fa, AT_FDCWD, path, 0);
		shim_leave();
		errno = saved;
	}
	return r;
}

SHIM_EXPORT int posix_spawn_file_actions_addfchdir_np(posix_spawn_file_actions_t *fa, int fd)
{
	if (MISSING(posix_spawn_file_actions_addfchdir_np))
		return ENOSYS;
	int r = real_posix_spawn_file_actions_addfchdir_np(fa, fd);
	if (r == 0 && shim_enter()) {
		int saved = errno;
		remember_dir(fa, fd, "", CANON_EMPTY_PATH);
		shim_leave();
		errno = saved;
	}
	return r;
}

/* A new or destroyed object forgets any note its address had (a leaked object's memory is reused). */
static void forget(const posix_spawn_file_actions_t *fa)
{
	pthread_mutex_lock(&notes_lock);
	struct note *n = fa ? find(fa) : NULL;
	if (n)
		n->fa = NULL;
	pthread_mutex_unlock(&notes_lock);
}

SHIM_EXPORT int posix_spawn_file_actions_init(posix_spawn_file_actions_t *fa)
{
	if (MISSING(posix_spawn_file_actions_init))
		return ENOSYS;
	forget(fa);
	return real_posix_spawn_file_actions_init(fa);
}

SHIM_EXPORT int posix_spawn_file_actions_destroy(posix_spawn_file_actions_t *fa)
{
	if (MISSING(posix_spawn_file_actions_destroy))
		return ENOSYS;
	forget(fa);
	return real_posix_spawn_file_actions_destroy(fa);
}
