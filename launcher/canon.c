/* canon.c — canonical paths and program lookup, so `airlock check` decides what the shim would. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/launcher.h"

/* Linux's MAXSYMLINKS: path_resolution(7). */
#define CANON_MAX_SYMLINKS 40

/* A growable string. */
struct buf {
	char *s; /* owned */
	size_t len;
	size_t cap;
};

static int buf_reserve(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s)
		return -ENOMEM;
	b->s = s;
	b->cap = cap;
	return 0;
}

static int buf_append(struct buf *b, const char *s, size_t n)
{
	if (buf_reserve(b, n) < 0)
		return -ENOMEM;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

/* Drops the last component of the absolute path in b ("/a/b" -> "/a", "/a" -> ""). */
static void buf_pop_component(struct buf *b)
{
	while (b->len > 0 && b->s[b->len - 1] != '/')
		b->len--;
	if (b->len > 0)
		b->len--;
	b->s[b->len] = '\0';
}

void canon_normalise(char *path)
{
	if (path[0] != '/')
		return;
	/* Writing never overtakes reading: each component written was preceded by a '/' read. */
	size_t out = 0;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		const char *c = p;
		while (*p && *p != '/')
			p++;
		size_t n = (size_t)(p - c);
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (out > 0 && path[out - 1] != '/')
				out--;
			if (out > 0)
				out--;
			continue;
		}
		path[out++] = '/';
		memmove(path + out, c, n);
		out += n;
	}
	if (out == 0)
		path[out++] = '/';
	path[out] = '\0';
}

/* Returns a malloc'ed absolute path: path itself, or cwd (or getcwd(3)) + "/" + path. */
static char *absolute(const char *path, const char *cwd)
{
	if (path[0] == '/')
		return strdup(path);
	char *here = NULL;
	if (!cwd) {
		here = getcwd(NULL, 0);
		if (!here)
			return NULL;
		cwd = here;
	}
	size_t n = strlen(cwd) + 1 + strlen(path) + 1;
	char *abs = malloc(n);
	if (abs) {
		strcpy(abs, cwd);
		strcat(abs, "/");
		strcat(abs, path);
	}
	free(here);
	return abs;
}

/* Reads the target of the symlink at path into a malloc'ed string, or NULL. */
static char *read_link(const char *path, size_t size_hint)
{
	size_t cap = size_hint ? size_hint + 1 : PATH_MAX;
	for (;;) {
		char *t = malloc(cap);
		if (!t)
			return NULL;
		ssize_t n = readlink(path, t, cap);
		if (n < 0) {
			free(t);
			return NULL;
		}
		if ((size_t)n < cap) {
			t[n] = '\0';
			return t;
		}
		free(t);
		cap *= 2;
	}
}

/*
 * Replaces rest with target + "/" + what is left of rest after pos: the
 * symlink's components are walked before what followed it.  Returns 0 or
 * -ENOMEM.
 */
static int splice_link(struct buf *rest, size_t pos, const char *target)
{
	struct buf nb = { 0 };
	if (buf_append(&nb, target, strlen(target)) < 0 || buf_append(&nb, "/", 1) < 0 ||
	    buf_append(&nb, rest->s + pos, rest->len - pos) < 0) {
		free(nb.s);
		return -ENOMEM;
	}
	free(rest->s);
	*rest = nb;
	return 0;
}

/* The walk of canon_path(): the resolved prefix, what is left, and the state. */
struct walk {
	struct buf out;  /* resolved so far, absolute, no trailing '/' ("" = root) */
	struct buf rest; /* components still to walk */
	size_t pos;      /* read position in rest */
	unsigned links;  /* symlinks followed */
	bool missing;    /* a component did not exist: the rest is lexical */
};

/*
 * Examines out + "/" + component: follows it if it is a symlink, else
 * appends it.  Returns 0, -ELOOP or -ENOMEM.
 */
static int walk_component(struct walk *w, const char *c, size_t n)
{
	size_t old = w->out.len;
	if (buf_append(&w->out, "/", 1) < 0 || buf_append(&w->out, c, n) < 0)
		return -ENOMEM;
	if (w->missing)
		return 0;
	struct stat st;
	if (lstat(w->out.s, &st) < 0) {
		w->missing = true;
		return 0;
	}
	if (!S_ISLNK(st.st_mode))
		return 0;
	if (++w->links > CANON_MAX_SYMLINKS)
		return -ELOOP;
	char *target = read_link(w->out.s, (size_t)st.st_size);
	if (!target) {
		w->missing = true;
		return 0;
	}
	w->out.len = target[0] == '/' ? 0 : old;
	w->out.s[w->out.len] = '\0';
	int r = splice_link(&w->rest, w->pos, target);
	w->pos = 0;
	free(target);
	return r;
}

static int walk_run(struct walk *w)
{
	while (w->pos < w->rest.len) {
		const char *c = w->rest.s + w->pos;
		size_t n = strcspn(c, "/");
		w->pos += n;
		while (w->pos < w->rest.len && w->rest.s[w->pos] == '/')
			w->pos++;
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			buf_pop_component(&w->out);
			continue;
		}
		/* c stays valid until walk_component() has copied it: only then may rest be replaced. */
		int r = walk_component(w, c, n);
		if (r < 0)
			return r;
	}
	return 0;
}

char *canon_path(const char *path, const char *cwd)
{
	char *abs = absolute(path, cwd);
	if (!abs)
		return NULL;
	struct walk w = { .rest = { .s = abs, .len = strlen(abs), .cap = strlen(abs) + 1 } };
	if (buf_reserve(&w.out, 0) < 0) {
		free(abs);
		errno = ENOMEM;
		return NULL;
	}
	w.out.s[0] = '\0';
	int r = walk_run(&w);
	free(w.rest.s);
	if (r < 0) {
		free(w.out.s);
		errno = -r;
		return NULL;
	}
	if (w.out.len == 0 && buf_append(&w.out, "/", 1) < 0) {
		free(w.out.s);
		errno = ENOMEM;
		return NULL;
	}
	return w.out.s;
}

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The directories execvp(3) searches: $PATH, or the system default when unset. */
static char *search_path(void)
{
	const char *env = getenv("PATH");
	if (env)
		return strdup(env);
	size_t n = confstr(_CS_PATH, NULL, 0);
	char *def = n ? malloc(n) : strdup("/usr/bin:/bin");
	if (def && n)
		confstr(_CS_PATH, def, n);
	return def;
}

/* Returns the first dir/cmd in the colon-separated list dirs that is executable, or NULL. */
static char *find_in_path(const char *cmd, const char *dirs)
{
	const char *d = dirs;
	for (;;) {
		size_t n = strcspn(d, ":");
		/* An empty entry means the current directory, as in execvp(3). */
		char *dir = n ? strndup(d, n) : strdup(".");
		char *cand = NULL;
		if (dir) {
			size_t len = strlen(dir) + 1 + strlen(cmd) + 1;
			cand = malloc(len);
			if (cand)
				snprintf(cand, len, "%s/%s", dir, cmd);
			free(dir);
		}
		if (cand && is_executable_file(cand))
			return cand;
		free(cand);
		if (!d[n])
			return NULL;
		d += n + 1;
	}
}

char *canon_program(const char *cmd)
{
	char *found = NULL;
	if (!strchr(cmd, '/')) {
		char *dirs = search_path();
		if (!dirs)
			return NULL;
		found = find_in_path(cmd, dirs);
		free(dirs);
		if (!found)
			return strdup(cmd);
		cmd = found;
	}
	char *abs = absolute(cmd, NULL);
	free(found);
	if (abs)
		canon_normalise(abs);
	return abs;
}
