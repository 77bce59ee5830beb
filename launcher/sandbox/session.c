/* session.c — a session's private directory: the policy image, the shim's mount point and the approval socket. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/approvals/control.h"
#include "launcher/cli/launcher.h"
#include "launcher/sandbox/session.h"
#include "core/buildid.h"
#include "core/channel.h"

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return r;
}

static char *join(const char *dir, const char *name)
{
	char *p = NULL;
	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static int write_file(const char *path, const void *data, size_t size, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	const char *p = data;
	while (size) {
		ssize_t n = write(fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		p += n;
		size -= (size_t)n;
	}
	return close(fd) == 0 ? 0 : -errno;
}

/* The files a session directory holds, besides the channel socket. */
static const char *const session_files[] = { "policy.img", RUN_SHIM_NAME, RUN_LANDLOCK_NAME,
					      "channel", "launcher.pid", "proxy", "agent", "kernel",
					      BUILDID_TABLE_NAME, SERVE_MARK_NAME };

/* 0, or -1 with errno set by rmdir(2) (ENOTEMPTY: a file not in session_files). */
static int remove_session_dir(const char *dir)
{
	char path[PATH_MAX];
	for (size_t i = 0; i < sizeof session_files / sizeof session_files[0]; i++)
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, session_files[i]) < sizeof path)
			unlink(path);
	return rmdir(dir);
}

void session_sweep_stale(const char *base, const char *cmd)
{
	DIR *d = opendir(base);
	struct dirent *de;
	char path[PATH_MAX], buf[32];
	while (d && (de = readdir(d))) {
		if (strspn(de->d_name, "0123456789abcdef") != 16)
			continue;
		if (strcmp(de->d_name + 16, ".control") == 0) {
			/* a control socket whose session directory is gone (removed by hand) */
			struct stat st;
			if ((size_t)snprintf(path, sizeof path, "%s/%.16s", base, de->d_name) <
				    sizeof path &&
			    stat(path, &st) != 0 && errno == ENOENT &&
			    (size_t)snprintf(path, sizeof path, "%s/%s", base, de->d_name) < sizeof path &&
			    unlink(path) == 0 && cmd)
				airlock_err("%s: removed the control socket of session %.16s (its session "
					    "directory is gone)",
					    cmd, de->d_name);
			continue;
		}
		if (de->d_name[16] != '\0')
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s/launcher.pid", base, de->d_name) >=
		    sizeof path)
			continue;
		FILE *f = fopen(path, "re");
		long pid = f && fgets(buf, sizeof buf, f) ? strtol(buf, NULL, 10) : 0;
		if (f)
			fclose(f);
		if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH &&
		    (size_t)snprintf(path, sizeof path, "%s/%s", base, de->d_name) < sizeof path) {
			int e = remove_session_dir(path) == 0 ? 0 : errno;
			if (cmd && e)
				airlock_err("%s: cannot remove %s, the leftovers of session %s (its "
					    "launcher, pid %ld, is gone): %s",
					    cmd, path, de->d_name, pid, strerror(e));
			else if (cmd)
				airlock_err("%s: removed the leftovers of session %s (its launcher, pid "
					    "%ld, is gone)",
					    cmd, de->d_name, pid);
			if ((size_t)snprintf(path, sizeof path, "%s/%s.control", base, de->d_name) <
			    sizeof path)
				unlink(path);
		}
	}
	if (d)
		closedir(d);
}

int session_create(struct session_dir *s, const void *image, size_t size, char *err, size_t errlen)
{
	char base[PATH_MAX];
	uint8_t rnd[8];
	int r;
	memset(s, 0, sizeof *s);
	s->channel_fd = -1;
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return fail(err, errlen, -errno, "cannot make a session id: %s", strerror(errno));
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
	if ((r = control_base(base, sizeof base, true)) < 0)
		return fail(err, errlen, r,
			    "cannot use %s for the session directory: %s (it must be a directory "
			    "owned by you with mode 0700)",
			    base, strerror(-r));
	session_sweep_stale(base, NULL);
	if (asprintf(&s->dir, "%s/%s", base, s->id) < 0) {
		s->dir = NULL;
		return fail(err, errlen, -ENOMEM, "out of memory");
	}
	if (mkdir(s->dir, 0700) != 0) {
		r = -errno;
		free(s->dir);
		s->dir = NULL;
		return fail(err, errlen, r, "cannot create %s/%s: %s", base, s->id, strerror(-r));
	}
	s->image_path = join(s->dir, "policy.img");
	s->shim_mount = join(s->dir, RUN_SHIM_NAME);
	s->landlock_mount = join(s->dir, RUN_LANDLOCK_NAME);
	s->channel = join(s->dir, "channel");
	if (asprintf(&s->control, "%s.control", s->dir) < 0)
		s->control = NULL;
	if (!s->image_path || !s->shim_mount || !s->landlock_mount || !s->channel || !s->control) {
		session_destroy(s);
		return fail(err, errlen, -ENOMEM, "out of memory");
	}
	char pid[32], *pid_path = join(s->dir, "launcher.pid");
	int plen = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	r = pid_path ? write_file(pid_path, pid, (size_t)plen, 0444) : -ENOMEM;
	free(pid_path);
	if (r < 0 || (r = write_file(s->image_path, image, size, 0444)) < 0 ||
	    (r = write_file(s->shim_mount, "", 0, 0444)) < 0 ||
	    (r = write_file(s->landlock_mount, "", 0, 0444)) < 0) {
		session_destroy(s);
		return fail(err, errlen, r, "cannot write the session directory: %s", strerror(-r));
	}
	s->channel_fd = channel_listen(s->channel);
	if (s->channel_fd < 0) {
		r = s->channel_fd;
		session_destroy(s);
		return fail(err, errlen, r, "cannot listen on the approval socket: %s", strerror(-r));
	}
	return 0;
}

int session_write_programs(const struct session_dir *s, const struct policy_image *img,
			   const char *path_env, char *err, size_t errlen)
{
	char *text = NULL, *path = join(s->dir, BUILDID_TABLE_NAME);
	size_t len = 0;
	int r = path ? buildid_table_build(img, path_env, &text, &len) : -ENOMEM;
	if (r == 0)
		r = write_file(path, text, len, 0444);
	free(text);
	free(path);
	if (r < 0)
		return fail(err, errlen, r, "cannot write the ruled programs' build-ids to the session "
			    "directory: %s", strerror(-r));
	return 0;
}

void session_destroy(struct session_dir *s)
{
	if (s->channel_fd >= 0)
		close(s->channel_fd);
	if (s->dir)
		remove_session_dir(s->dir);
	free(s->channel);
	free(s->control);
	free(s->image_path);
	free(s->shim_mount);
	free(s->landlock_mount);
	free(s->dir);
	memset(s, 0, sizeof *s);
	s->channel_fd = -1;
}

/* $env, else name next to the running airlock binary: malloc'ed, canonical; NULL when not there. */
static char *find_beside(const char *env_name, const char *name)
{
	const char *env = getenv(env_name);
	char exe[PATH_MAX], *path = NULL;
	if (env && env[0])
		return realpath(env, NULL);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	char *cand = join(exe, name);
	path = cand ? realpath(cand, NULL) : NULL;
	free(cand);
	return path;
}

char *session_find_shim(char *err, size_t errlen)
{
	errno = 0;
	char *path = find_beside("AIRLOCK_SHIM", RUN_SHIM_NAME);
	if (!path || access(path, R_OK) != 0) {
		snprintf(err, errlen,
			 "cannot find the shim %s (next to the airlock binary, or set AIRLOCK_SHIM): %s",
			 RUN_SHIM_NAME, strerror(errno ? errno : ENOENT));
		free(path);
		return NULL;
	}
	return path;
}

char *session_find_landlock(char *err, size_t errlen)
{
	errno = 0;
	char *path = find_beside("AIRLOCK_LANDLOCK", RUN_LANDLOCK_NAME);
	if (!path || access(path, X_OK) != 0) {
		snprintf(err, errlen,
			 "cannot find the Landlock helper %s (next to the airlock binary, or set "
			 "AIRLOCK_LANDLOCK): %s",
			 RUN_LANDLOCK_NAME, strerror(errno ? errno : ENOENT));
		free(path);
		return NULL;
	}
	return path;
}
