/* control_client.c — the client side of a session's control socket (see control.h): where sessions live, listing them by their hello, connecting; used by `airlock attach`, `airlock ps` and the TUI. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/grow.h"
#include "launcher/approvals/control.h"

/* path is a directory of ours that nobody else may enter (made 0700 with create). 0 or -errno. */
static int private_dir(const char *path, bool create)
{
	struct stat st;
	if (create && mkdir(path, 0700) == 0)
		return 0;
	if (create && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

int control_base(char *out, size_t cap, bool create)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (geteuid() == 0 && (size_t)snprintf(out, cap, "/run/airlock") < cap &&
	    private_dir(out, create) == 0)
		return 0;
	if (xdg && xdg[0] == '/' && (size_t)snprintf(out, cap, "%s/airlock", xdg) < cap &&
	    private_dir(out, create) == 0)
		return 0;
	/* no runtime dir: a private one in /tmp, refused if someone else made it first */
	if ((size_t)snprintf(out, cap, "/tmp/airlock-%u", (unsigned)geteuid()) >= cap)
		return -ENAMETOOLONG;
	return private_dir(out, create);
}

int control_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static void copy_str(char *dst, size_t cap, json_object *o, const char *key)
{
	json_object *v;
	const char *s = json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
	snprintf(dst, cap, "%s", s ? s : "");
}

/* Reads the hello line from fd, waiting at most timeout_ms in all. */
static int read_hello(int fd, struct control_session *s, int timeout_ms)
{
	static char buf[CONTROL_MAX_LINE + 1];
	size_t len = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char *nl = memchr(buf, '\n', len);
		if (nl) {
			*nl = '\0';
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long spent = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		struct pollfd p = { fd, POLLIN, 0 };
		if (len == sizeof buf - 1 || spent >= timeout_ms ||
		    poll(&p, 1, (int)(timeout_ms - spent)) <= 0)
			return -ETIMEDOUT;
		ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			return -EPROTO;
		len += (size_t)n;
	}
	json_object *o = json_tokener_parse(buf), *v;
	int r = -EPROTO;
	if (o && json_object_object_get_ex(o, "type", &v) &&
	    strcmp(json_object_get_string(v), "hello") == 0) {
		copy_str(s->id, sizeof s->id, o, "session");
		copy_str(s->agent, sizeof s->agent, o, "agent");
		copy_str(s->started, sizeof s->started, o, "started");
		s->pid = json_object_object_get_ex(o, "pid", &v) ? (pid_t)json_object_get_int(v) : 0;
		s->headless = json_object_object_get_ex(o, "headless", &v) && json_object_get_boolean(v);
		r = 0;
	}
	json_object_put(o);
	return r;
}

static int by_started(const void *a, const void *b)
{
	const struct control_session *x = a, *y = b;
	int c = strcmp(x->started, y->started);
	return c ? c : strcmp(x->id, y->id);
}

int control_list(struct control_session **out, size_t *n, int timeout_ms)
{
	char base[PATH_MAX];
	size_t cap = 0;
	int r = control_base(base, sizeof base, false);
	*out = NULL;
	*n = 0;
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	DIR *d = opendir(base);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *dot = strchr(de->d_name, '.');
		if (!dot || dot - de->d_name != 16 || strcmp(dot, ".control") != 0 ||
		    strspn(de->d_name, "0123456789abcdef") != 16)
			continue;
		struct control_session s = { 0 };
		if ((size_t)snprintf(s.path, sizeof s.path, "%s/%s", base, de->d_name) >= sizeof s.path)
			continue;
		int fd = control_connect(s.path);
		if (fd < 0)
			continue;
		r = read_hello(fd, &s, timeout_ms);
		close(fd);
		if (r < 0)
			continue;
		struct control_session *grown = grow_array(*out, &cap, *n + 1, sizeof **out, 8);
		if (!grown) {
			closedir(d);
			return -ENOMEM;
		}
		*out = grown;
		(*out)[(*n)++] = s;
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof **out, by_started);
	return 0;
}
