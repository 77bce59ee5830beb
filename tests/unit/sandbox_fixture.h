/*
 * sandbox_fixture.h — what test_sandbox.c and test_sandbox_run.c build sandboxes from: a
 * temporary tree (R/home, R/ws, R/session, R/outside) made and removed around each test, the
 * policy most tests compile, a sandbox_config over both, and helpers to search a bwrap argv.
 */
#ifndef AIRLOCK_TEST_SANDBOX_FIXTURE_H
#define AIRLOCK_TEST_SANDBOX_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/sandbox/sandbox.h"
#include "policy/policy.h"

/* The policy most tests use: deny-read rules by name, a home dir rule, no network. */
/* The mask walk's rules, home shown as the allowlist shows it (MASK_RULES alone) or whole (mask_policy). */
#define MASK_RULES                                                                                \
	"version: 1\n"                                                                             \
	"deny:\n"                                                                                  \
	"  - file: { path: .env, action: read }\n"                                                 \
	"  - file: { path: \".env.*\", action: read }\n"                                           \
	"  - file: { path: \"*.secret\", action: read }\n"                                         \
	"  - file: { path: \"*.key\", action: read }\n"                                            \
	"  - file: { path: ~/.ssh }\n"                                                             \
	"sandbox:\n"                                                                               \
	"  network: none\n"                                                                        \
	"  env_passthrough: [HOME, PATH]\n"
/* home shown whole: the walk's cases are in it */
static const char mask_policy[] = MASK_RULES "  read: [\"~\"]\n";

/* ---- a temporary tree: R/home, R/ws, R/session, R/outside ------------------------------ */

struct tree {
	char root[PATH_MAX]; /* canonical */
	char home[PATH_MAX];
	char ws[PATH_MAX];
	char session[PATH_MAX];
	char policy_file[PATH_MAX];
};

static inline void tree_path(const struct tree *t, char *out, const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", t->root, rel);
	assert_true(n > 0 && n < PATH_MAX);
}

static inline void mk_dir(const struct tree *t, const char *rel)
{
	char p[PATH_MAX];
	tree_path(t, p, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static inline void mk_file(const struct tree *t, const char *rel, const char *text)
{
	char p[PATH_MAX];
	tree_path(t, p, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static inline void mk_link(const struct tree *t, const char *target, const char *rel)
{
	char p[PATH_MAX];
	tree_path(t, p, rel);
	assert_int_equal(symlink(target, p), 0);
}

/* The layout every tree-based test uses; see mask_policy for what is denied. */
static inline void tree_fill(struct tree *t)
{
	static const char *const dirs[] = {
		"home", "home/.ssh", "home/.aws", "ws", "ws/src", "ws/src/deep", "ws/config",
		"ws/.git", "ws/.git/hooks", "ws/.git/objects", "ws/.git/objects/ab", "ws/.airlock",
		"session", "outside",
	};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		mk_dir(t, dirs[i]);
	mk_file(t, "home/.ssh/id_rsa", "PRIVATE KEY");
	mk_file(t, "home/.aws/credentials", "aws");
	mk_file(t, "home/.bashrc", "# rc");
	mk_file(t, "ws/.env", "SECRET=1");
	mk_file(t, "ws/readme", "hello");
	mk_file(t, "ws/src/deep/config.secret", "deep");
	mk_file(t, "ws/config/plain.txt", "plain but reachable as .env.local");
	mk_file(t, "ws/.git/config", "[core]");
	mk_file(t, "ws/.git/objects/ab/x.secret", "never walked");
	mk_file(t, "ws/.airlock/policy.yaml", mask_policy);
	mk_file(t, "outside/api.key", "KEY");
	mk_file(t, "session/marker", "session-ok");
	mk_link(t, "../outside/api.key", "ws/link-to-key");
	mk_link(t, "config/plain.txt", "ws/.env.local");
	mk_link(t, "/nonexistent/dangling.key", "ws/dangling.key");
}

/* Creates an empty tree under base ("/var/tmp": visible through --ro-bind / /, unlike /tmp). */
static inline struct tree *tree_new(const char *base)
{
	struct tree *t = calloc(1, sizeof *t);
	char tmpl[PATH_MAX];
	assert_non_null(t);
	snprintf(tmpl, sizeof tmpl, "%s/airlock-sbx-XXXXXX", base);
	assert_non_null(mkdtemp(tmpl));
	assert_int_equal(chmod(tmpl, 0755), 0);
	assert_non_null(realpath(tmpl, t->root));
	tree_path(t, t->home, "home");
	tree_path(t, t->ws, "ws");
	tree_path(t, t->session, "session");
	tree_path(t, t->policy_file, "ws/.airlock/policy.yaml");
	return t;
}

static inline int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static inline void tree_free(struct tree *t)
{
	if (!t)
		return;
	nftw(t->root, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
	free(t);
}

static inline int tree_setup(void **state)
{
	struct tree *t = tree_new("/var/tmp");
	tree_fill(t);
	*state = t;
	return 0;
}

static inline int tree_teardown(void **state)
{
	tree_free(*state);
	return 0;
}

/* ---- policies and configurations --------------------------------------------------------- */

struct compiled {
	struct policy *p;
	void *blob;
	const struct policy_image *img;
};

static inline void compile(struct compiled *c, const char *yaml, const char *home, const char *ws)
{
	struct policy_error err;
	char msg[2048];
	struct policy_context ctx = { home, ws };
	size_t size;
	c->p = policy_load_buffer("test.yaml", yaml, strlen(yaml), &err);
	if (!c->p) {
		policy_error_format(&err, msg, sizeof msg);
		fail_msg("load: %s", msg);
	}
	if (policy_compile(c->p, &ctx, &c->blob, &size, &err) != 0) {
		policy_error_format(&err, msg, sizeof msg);
		fail_msg("compile: %s", msg);
	}
	assert_int_equal(policy_image_open(c->blob, size, &c->img, msg, sizeof msg), 0);
}

static inline void compiled_free(struct compiled *c)
{
	free(c->blob);
	policy_free(c->p);
}

static char *const default_env[] = { "PATH=/usr/bin:/bin", "HOME=/h", NULL };
static char *const sh_argv[] = { "sh", "-c", "true", NULL };

static inline void config_init(struct sandbox_config *cfg, const struct tree *t, const struct compiled *c)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->policy = c->p;
	cfg->img = c->img;
	cfg->home = t->home;
	cfg->workspace = t->ws;
	cfg->cwd = t->ws;
	cfg->session_dir = t->session;
	cfg->policy_file = t->policy_file;
	cfg->seccomp_fd = -1;
	cfg->checkpoint_fd = -1;
	cfg->resolv_fd = cfg->hosts_fd = -1;
	cfg->env = default_env;
	cfg->program = "/bin/sh";
	cfg->argv = sh_argv;
}

/* ---- argv helpers ---------------------------------------------------------------------------- */

/* Index of the first place where the NULL-terminated words appear in a row in argv, or -1. */
static inline int find_seq(char **argv, ...)
{
	const char *words[8];
	size_t n = 0;
	va_list ap;
	va_start(ap, argv);
	for (const char *w; (w = va_arg(ap, const char *)) && n < 8;)
		words[n++] = w;
	va_end(ap);
	for (int i = 0; argv[i]; i++) {
		size_t k = 0;
		while (k < n && argv[i + k] && strcmp(argv[i + k], words[k]) == 0)
			k++;
		if (k == n)
			return i;
	}
	return -1;
}

static inline int count_word(char **argv, const char *w)
{
	int n = 0;
	for (int i = 0; argv[i]; i++)
		n += strcmp(argv[i], w) == 0;
	return n;
}

static inline void dump_argv(char **argv)
{
	for (int i = 0; argv[i]; i++)
		print_message("%s%s", i ? " " : "", argv[i]);
	print_message("\n");
}

/* Builds with cfg; fails the test on error. */
static inline char **build_ok(const struct sandbox_config *cfg, struct sandbox_report *rep)
{
	char **argv = NULL;
	char err[512] = "";
	int r = sandbox_build(cfg, "/usr/bin/bwrap", &argv, rep, err, sizeof err);
	if (r != 0)
		fail_msg("sandbox_build: %d %s", r, err);
	assert_non_null(argv);
	return argv;
}

/* a/b in one of four rotating static buffers: valid until the fourth call after. */
static inline char *pathf(const char *a, const char *b)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *p = buf[k++ % 4];
	int n = snprintf(p, PATH_MAX, "%s/%s", a, b);
	assert_true(n > 0 && n < PATH_MAX);
	return p;
}

#endif
