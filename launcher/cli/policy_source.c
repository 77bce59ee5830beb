/* policy_source.c — finds the policy a command should use, loads it and compiles it to an image. */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/cli/launcher.h"

#define DEFAULT_SOURCE_NAME "<default>"

static void set_error(struct policy_error *err, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_error(struct policy_error *err, const char *file, const char *fmt, ...)
{
	va_list ap;
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

/* Returns a malloc'ed copy of dir without trailing '/' (but "/" stays "/"). */
static char *strip_slashes(const char *dir)
{
	char *s = strdup(dir);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

/* $HOME when it is an absolute path, else the passwd entry's home; malloc'ed, or NULL. */
static char *home_dir(void)
{
	const char *h = getenv("HOME");
	if (!h || h[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		h = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
	}
	if (!h) {
		errno = ENOENT;
		return NULL;
	}
	return strip_slashes(h);
}

/* Returns a malloc'ed "a" + "b" + "c". */
static char *concat3(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s%s", a, b, c);
	return s;
}

/* $XDG_CONFIG_HOME/airlock/policy.yaml; a relative XDG_CONFIG_HOME is ignored, as the XDG spec says. */
static char *xdg_policy_path(const char *home)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	if (xdg && xdg[0] == '/')
		return concat3(xdg, "/", "airlock/policy.yaml");
	return concat3(home, "/", ".config/airlock/policy.yaml");
}

/*
 * Decides which file to load: the explicit one, else the first candidate that
 * exists.  Stores a malloc'ed path in *path, or NULL for the built-in default.
 * Returns 0 or -ENOMEM.
 */
static int choose_file(const struct policy_source_options *opt, const struct policy_source *src,
		       char **path)
{
	*path = NULL;
	if (opt->policy_path) {
		*path = strdup(opt->policy_path);
		return *path ? 0 : -ENOMEM;
	}
	char *cands[2] = {
		opt->workspace ? concat3(src->workspace, "/", ".airlock/policy.yaml")
			       : strdup(".airlock/policy.yaml"),
		xdg_policy_path(src->home),
	};
	int r = cands[0] && cands[1] ? 0 : -ENOMEM;
	for (size_t i = 0; i < 2 && r == 0 && !*path; i++) {
		struct stat st;
		/* Anything there but unreadable is reported by the loader: fail closed. */
		if (lstat(cands[i], &st) == 0 || (errno != ENOENT && errno != ENOTDIR)) {
			*path = cands[i];
			cands[i] = NULL;
		}
	}
	free(cands[0]);
	free(cands[1]);
	return r;
}

static enum policy_source_status load(struct policy_source *src, const char *path,
				      struct policy_error *err)
{
	if (path) {
		src->policy = policy_load_file(path, err);
	} else {
		size_t len;
		const char *text = policy_default_text(&len);
		src->policy = policy_load_buffer(DEFAULT_SOURCE_NAME, text, len, err);
	}
	if (!src->policy)
		return POLICY_SOURCE_BAD_POLICY;
	src->name = strdup(path ? path : DEFAULT_SOURCE_NAME);
	return src->name ? POLICY_SOURCE_OK : POLICY_SOURCE_NO_MEMORY;
}

static enum policy_source_status compile(struct policy_source *src, struct policy_error *err)
{
	struct policy_context ctx = { .home = src->home, .workspace = src->workspace };
	int r = policy_compile(src->policy, &ctx, &src->image, &src->image_size, err);
	if (r == -ENOMEM)
		return POLICY_SOURCE_NO_MEMORY;
	if (r < 0) {
		if (r != -EINVAL)
			set_error(err, src->name, "cannot compile the policy: %s", strerror(-r));
		return POLICY_SOURCE_BAD_POLICY;
	}
	char msg[256];
	if (policy_image_open(src->image, src->image_size, &src->img, msg, sizeof(msg)) < 0) {
		set_error(err, src->name, "the compiled policy image is invalid: %s", msg);
		return POLICY_SOURCE_BAD_POLICY;
	}
	return POLICY_SOURCE_OK;
}

/* Fills src->home and src->workspace. */
static enum policy_source_status resolve_context(const struct policy_source_options *opt,
						 struct policy_source *src,
						 struct policy_error *err)
{
	const char *ws = opt->workspace ? opt->workspace : ".";
	src->home = home_dir();
	if (!src->home) {
		int e = errno;
		set_error(err, "", "cannot find the home directory: set HOME to an absolute path");
		return e == ENOMEM ? POLICY_SOURCE_NO_MEMORY : POLICY_SOURCE_BAD_CONTEXT;
	}
	struct stat st;
	src->workspace = realpath(ws, NULL);
	if (src->workspace && (stat(src->workspace, &st) < 0 || !S_ISDIR(st.st_mode))) {
		free(src->workspace);
		src->workspace = NULL;
		errno = ENOTDIR;
	}
	if (!src->workspace) {
		int e = errno;
		set_error(err, ws, "cannot use as the workspace: %s", strerror(e));
		return e == ENOMEM ? POLICY_SOURCE_NO_MEMORY : POLICY_SOURCE_BAD_CONTEXT;
	}
	return POLICY_SOURCE_OK;
}

enum policy_source_status policy_source_open(const struct policy_source_options *opt,
					     struct policy_source *src, struct policy_error *err)
{
	memset(src, 0, sizeof(*src));
	memset(err, 0, sizeof(*err));
	enum policy_source_status st = resolve_context(opt, src, err);
	char *path = NULL;
	if (st == POLICY_SOURCE_OK && choose_file(opt, src, &path) < 0)
		st = POLICY_SOURCE_NO_MEMORY;
	if (st == POLICY_SOURCE_OK)
		st = load(src, path, err);
	if (st == POLICY_SOURCE_OK && opt->amend && opt->amend(src->policy, opt->amend_arg, err) < 0)
		st = POLICY_SOURCE_BAD_POLICY;
	if (st == POLICY_SOURCE_OK)
		st = compile(src, err);
	free(path);
	if (st != POLICY_SOURCE_OK)
		policy_source_release(src);
	return st;
}

void policy_source_release(struct policy_source *src)
{
	free(src->name);
	free(src->home);
	free(src->workspace);
	policy_free(src->policy);
	free(src->image);
	memset(src, 0, sizeof(*src));
}

int policy_source_report(enum policy_source_status status, const struct policy_error *err)
{
	char buf[sizeof(err->file) + sizeof(err->message) + 32];
	switch (status) {
	case POLICY_SOURCE_OK:
		return AIRLOCK_EXIT_OK;
	case POLICY_SOURCE_BAD_POLICY:
		policy_error_format(err, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
		return AIRLOCK_EXIT_USAGE;
	case POLICY_SOURCE_BAD_CONTEXT:
		airlock_err("%s%s%s", err->file, err->file[0] ? ": " : "", err->message);
		return AIRLOCK_EXIT_USAGE;
	case POLICY_SOURCE_NO_MEMORY:
	default:
		airlock_err("out of memory");
		return AIRLOCK_EXIT_FAILURE;
	}
}

char *policy_source_home(void)
{
	return home_dir();
}
