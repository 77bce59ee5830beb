/* test_sandbox.c — unit tests for launcher/sandbox/sandbox.c (bwrap argv, masks, protections), launcher/sandbox/masks.c (the mask walk) and launcher/sandbox/env.c, plus real bwrap runs as root and as nobody, and the bubblewrap backend (bwrap.c) as `airlock run` uses it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/sandbox/backend.h"
#include "launcher/sandbox/env.h"
#include "launcher/sandbox/masks.h"
#include "launcher/sandbox/sandbox.h"
#include "policy/policy.h"

#define NOBODY 65534

/* The policy most tests use: deny-read rules by name, a home dir rule, no network. */
static const char mask_policy[] = "version: 1\n"
				  "deny:\n"
				  "  - file: { path: .env, action: read }\n"
				  "  - file: { path: \".env.*\", action: read }\n"
				  "  - file: { path: \"*.secret\", action: read }\n"
				  "  - file: { path: \"*.key\", action: read }\n"
				  "  - file: { path: ~/.ssh }\n"
				  "sandbox:\n"
				  "  network: none\n"
				  "  env_passthrough: [HOME, PATH]\n";

/* ---- a temporary tree: R/home, R/ws, R/session, R/outside ------------------------------ */

struct tree {
	char root[PATH_MAX]; /* canonical */
	char home[PATH_MAX];
	char ws[PATH_MAX];
	char session[PATH_MAX];
	char policy_file[PATH_MAX];
};

static void tree_path(const struct tree *t, char *out, const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", t->root, rel);
	assert_true(n > 0 && n < PATH_MAX);
}

static void mk_dir(const struct tree *t, const char *rel)
{
	char p[PATH_MAX];
	tree_path(t, p, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void mk_file(const struct tree *t, const char *rel, const char *text)
{
	char p[PATH_MAX];
	tree_path(t, p, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void mk_link(const struct tree *t, const char *target, const char *rel)
{
	char p[PATH_MAX];
	tree_path(t, p, rel);
	assert_int_equal(symlink(target, p), 0);
}

/* The layout every tree-based test uses; see mask_policy for what is denied. */
static void tree_fill(struct tree *t)
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
static struct tree *tree_new(const char *base)
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

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void tree_free(struct tree *t)
{
	if (!t)
		return;
	nftw(t->root, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
	free(t);
}

static int tree_setup(void **state)
{
	struct tree *t = tree_new("/var/tmp");
	tree_fill(t);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
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

static void compile(struct compiled *c, const char *yaml, const char *home, const char *ws)
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

static void compiled_free(struct compiled *c)
{
	free(c->blob);
	policy_free(c->p);
}

static char *const default_env[] = { "PATH=/usr/bin:/bin", "HOME=/h", NULL };
static char *const sh_argv[] = { "sh", "-c", "true", NULL };

static void config_init(struct sandbox_config *cfg, const struct tree *t, const struct compiled *c)
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
	cfg->env = default_env;
	cfg->program = "/bin/sh";
	cfg->argv = sh_argv;
}

/* ---- argv helpers ---------------------------------------------------------------------------- */

/* Index of the first place where the NULL-terminated words appear in a row in argv, or -1. */
static int find_seq(char **argv, ...)
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

static int count_word(char **argv, const char *w)
{
	int n = 0;
	for (int i = 0; argv[i]; i++)
		n += strcmp(argv[i], w) == 0;
	return n;
}

static void dump_argv(char **argv)
{
	for (int i = 0; argv[i]; i++)
		print_message("%s%s", i ? " " : "", argv[i]);
	print_message("\n");
}

/* Builds with cfg; fails the test on error. */
static char **build_ok(const struct sandbox_config *cfg, struct sandbox_report *rep)
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
static char *pathf(const char *a, const char *b)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *p = buf[k++ % 4];
	int n = snprintf(p, PATH_MAX, "%s/%s", a, b);
	assert_true(n > 0 && n < PATH_MAX);
	return p;
}

/* ---- argv rendering ---------------------------------------------------------------------------- */

static void test_argv_root_layout(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	struct sandbox_report rep;
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, &rep);
	assert_string_equal(argv[0], "/usr/bin/bwrap");
	assert_int_equal(find_seq(argv, "--die-with-parent", "--new-session", "--unshare-pid",
				  "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop",
				  "ALL", "--unshare-net", NULL),
			 1);
	assert_int_equal(count_word(argv, "--unshare-user"), 0);
	int root = find_seq(argv, "--ro-bind", "/", "/", NULL);
	int ws = find_seq(argv, "--bind", t->ws, t->ws, NULL);
	int dev = find_seq(argv, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs",
			   "/run", "--ro-bind", t->session, "/run/airlock", NULL);
	int hooks = find_seq(argv, "--ro-bind", pathf(t->ws, ".git/hooks"),
			     pathf(t->ws, ".git/hooks"), NULL);
	int env = find_seq(argv, "--ro-bind", "/dev/null", pathf(t->ws, ".env"), NULL);
	int clear = find_seq(argv, "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv",
			     "HOME", "/h", "--chdir", t->ws, "--", "/bin/sh", "-c", "true", NULL);
	assert_true(root > 0 && ws > root && dev > ws && hooks > dev && env > hooks && clear > env);
	assert_null(argv[clear + 13]); /* nothing after the program's arguments */
	assert_int_equal(count_word(argv, "--seccomp"), 0);
	assert_int_equal(count_word(argv, "/run/airlock/airlock-preload.so"), 0);
	assert_false(rep.network_rules_ignored);
	sandbox_argv_free(argv);
	/* the shim, when given, is bound over its mount point in the session directory */
	cfg.shim_path = "/usr/lib/airlock/airlock-preload.so";
	argv = build_ok(&cfg, NULL);
	int shim = find_seq(argv, "--ro-bind", "/usr/lib/airlock/airlock-preload.so",
			    "/run/airlock/airlock-preload.so", NULL);
	assert_true(shim > find_seq(argv, "--ro-bind", t->session, "/run/airlock", NULL));
	sandbox_argv_free(argv);
	compiled_free(&c);
}

static void test_argv_unprivileged(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	cfg.unprivileged = true;
	char **argv = build_ok(&cfg, NULL);
	int user = find_seq(argv, "--unshare-user", "--cap-drop", "ALL", NULL);
	assert_true(user > 0 && user < find_seq(argv, "--ro-bind", "/", "/", NULL));
	sandbox_argv_free(argv);
	/* on the TUI's pseudo-terminal the agent keeps its terminal: no --new-session */
	cfg.own_tty = true;
	argv = build_ok(&cfg, NULL);
	assert_int_equal(count_word(argv, "--new-session"), 0);
	assert_int_equal(find_seq(argv, "--die-with-parent", "--unshare-pid", NULL), 1);
	sandbox_argv_free(argv);
	compiled_free(&c);
}

/* network: none, and proxy without cfg.netns (the proxy's namespace), get --unshare-net; host stays. */
static void test_argv_network_modes(void **state)
{
	static const struct {
		const char *mode;
		bool rules;
		bool unshared;
		bool ignored;
	} rows[] = {
		{ "none", false, true, false },	 { "none", true, true, true },
		{ "proxy", true, true, true },	 { "proxy", false, true, false },
		{ "host", true, false, false },	 { "host", false, false, false },
	};
	struct tree *t = *state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char yaml[512];
		struct compiled c;
		struct sandbox_config cfg;
		struct sandbox_report rep;
		snprintf(yaml, sizeof yaml, "version: 1\n%ssandbox:\n  network: %s\n",
			 rows[i].rules ? "allow:\n  - network: { destination: \"example.com:443\" }\n" : "",
			 rows[i].mode);
		compile(&c, yaml, t->home, t->ws);
		config_init(&cfg, t, &c);
		char **argv = build_ok(&cfg, &rep);
		assert_int_equal(count_word(argv, "--unshare-net"), rows[i].unshared);
		assert_int_equal(rep.network_rules_ignored, rows[i].ignored);
		sandbox_argv_free(argv);
		compiled_free(&c);
	}
}

/* sandbox.read: existing paths only, ~/ and ./ expanded, symlinked /lib64 recreated, no "/". */
static void test_argv_read_list(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	struct sandbox_report rep;
	compile(&c,
		"version: 1\nsandbox:\n  read: [/usr, /etc, ./, \"~/.aws\", /nonexistent-airlock, "
		"/lib64]\n",
		t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, &rep);
	assert_int_equal(find_seq(argv, "--ro-bind", "/", "/", NULL), -1);
	assert_true(find_seq(argv, "--ro-bind", "/usr", "/usr", NULL) > 0);
	assert_true(find_seq(argv, "--ro-bind", "/etc", "/etc", NULL) > 0);
	int ro_ws = find_seq(argv, "--ro-bind", t->ws, t->ws, NULL);
	assert_true(ro_ws > 0 && find_seq(argv, "--bind", t->ws, t->ws, NULL) > ro_ws);
	assert_int_equal(count_word(argv, "/nonexistent-airlock"), 0);
	char text[PATH_MAX];
	ssize_t n = readlink("/lib64", text, sizeof text - 1);
	if (n > 0) {
		text[n] = '\0';
		assert_int_equal(find_seq(argv, "--symlink", text, "/lib64", NULL) > 0, 1);
		assert_int_equal(count_word(argv, "/lib64"), 1); /* once, not again as a merged-usr link */
	}
	n = readlink("/bin", text, sizeof text - 1);
	if (n > 0) {
		text[n] = '\0';
		assert_true(find_seq(argv, "--symlink", text, "/bin", NULL) > 0);
	}
	/* home is not readable here except ~/.aws: ~/.ssh needs no mask; ~/.aws (mandatory) does */
	assert_int_equal(count_word(argv, pathf(t->home, ".ssh")), 0);
	assert_true(find_seq(argv, "--tmpfs", pathf(t->home, ".aws"), "--remount-ro",
			     pathf(t->home, ".aws"), NULL) > 0);
	sandbox_argv_free(argv);
	compiled_free(&c);
}

/* sandbox.write: existing paths bound read-write; /tmp stays private; rc files protected once home is writable. */
static void test_argv_write_list(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	compile(&c, "version: 1\nsandbox:\n  write: [\"~/\", /nonexistent-airlock, /tmp, ./]\n",
		t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, NULL);
	int home = find_seq(argv, "--bind", t->home, t->home, NULL);
	assert_true(home > 0);
	/* /tmp stays the private tmpfs; ./ is the workspace, bound once */
	assert_int_equal(find_seq(argv, "--bind", "/tmp", "/tmp", NULL), -1);
	assert_int_equal(count_word(argv, t->ws), 3); /* --bind WS WS, --chdir WS */
	assert_int_equal(count_word(argv, "/nonexistent-airlock"), 0);
	int rc = find_seq(argv, "--ro-bind", pathf(t->home, ".bashrc"), pathf(t->home, ".bashrc"),
			  NULL);
	assert_true(rc > home);
	assert_int_equal(count_word(argv, pathf(t->home, ".profile")), 0); /* absent: no mount */
	sandbox_argv_free(argv);
	compiled_free(&c);
}

/* A workspace inside /tmp is bound after the private /tmp, so it shows. */
static void test_argv_workspace_in_tmp(void **state)
{
	(void)state;
	struct tree *t = tree_new("/tmp");
	tree_fill(t);
	struct compiled c;
	struct sandbox_config cfg;
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, NULL);
	int tmpfs = find_seq(argv, "--tmpfs", "/tmp", NULL);
	int ws = find_seq(argv, "--bind", t->ws, t->ws, NULL);
	assert_true(tmpfs > 0 && ws > tmpfs);
	/* the workspace shows, so its .env is masked; home (under the private /tmp) does not */
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->ws, ".env"), NULL) > ws);
	assert_int_equal(count_word(argv, pathf(t->home, ".ssh")), 0);
	sandbox_argv_free(argv);
	compiled_free(&c);
	tree_free(t);
}

static void test_argv_seccomp_and_env(void **state)
{
	static char *const env[] = { "A=1", "B=x=y", "EMPTY=", NULL };
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	cfg.seccomp_fd = 7;
	cfg.env = env;
	char **argv = build_ok(&cfg, NULL);
	int sc = find_seq(argv, "--seccomp", "7", "--clearenv", "--setenv", "A", "1", "--setenv",
			  "B", "x=y", "--setenv", "EMPTY", "", "--chdir", NULL);
	assert_true(sc > 0);
	sandbox_argv_free(argv);
	compiled_free(&c);
}

static void test_argv_errors(void **state)
{
	static char *const bad_env[] = { "NOEQUALS", NULL };
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	char **argv = (char **)1;
	char err[256];
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	cfg.env = bad_env;
	assert_int_equal(sandbox_build(&cfg, "bwrap", &argv, NULL, err, sizeof err), -EINVAL);
	assert_null(argv);
	assert_non_null(strstr(err, "NOEQUALS"));
	config_init(&cfg, t, &c);
	cfg.cwd = "relative";
	assert_int_equal(sandbox_build(&cfg, "bwrap", &argv, NULL, err, sizeof err), -EINVAL);
	config_init(&cfg, t, &c);
	cfg.workspace = "/nonexistent-airlock-ws";
	assert_int_equal(sandbox_build(&cfg, "bwrap", &argv, NULL, err, sizeof err), -ENOENT);
	compiled_free(&c);
	compile(&c, "version: 1\nsandbox:\n  read: [\"~other/x\"]\n", t->home, t->ws);
	config_init(&cfg, t, &c);
	assert_int_equal(sandbox_build(&cfg, "bwrap", &argv, NULL, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "~other/x"));
	compiled_free(&c);
	sandbox_argv_free(NULL);
}

/* ---- masks and protections ----------------------------------------------------------------------- */

static void test_masks_found(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	struct sandbox_report rep;
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, &rep);
	char ssh[PATH_MAX], aws[PATH_MAX];
	snprintf(ssh, sizeof ssh, "%s", pathf(t->home, ".ssh"));
	snprintf(aws, sizeof aws, "%s", pathf(t->home, ".aws"));
	assert_true(find_seq(argv, "--tmpfs", ssh, "--remount-ro", ssh, NULL) > 0);
	assert_true(find_seq(argv, "--tmpfs", aws, "--remount-ro", aws, NULL) > 0);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->ws, ".env"), NULL) > 0);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->ws, "src/deep/config.secret"),
			     NULL) > 0);
	/* symlinks: the canonical target is masked, never the link */
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->root, "outside/api.key"),
			     NULL) > 0);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->ws, "config/plain.txt"),
			     NULL) > 0);
	assert_int_equal(count_word(argv, pathf(t->ws, "link-to-key")), 0);
	assert_int_equal(count_word(argv, pathf(t->ws, ".env.local")), 0);
	assert_int_equal(count_word(argv, pathf(t->ws, "dangling.key")), 0);
	/* git's object store is not descended; nothing inside ~/.ssh is masked twice */
	assert_int_equal(count_word(argv, pathf(t->ws, ".git/objects/ab/x.secret")), 0);
	assert_int_equal(count_word(argv, pathf(t->home, ".ssh/id_rsa")), 0);
	assert_int_equal(count_word(argv, ssh), 2);
	assert_int_equal(rep.masks, 6);
	assert_false(rep.masks_capped);
	assert_true(rep.walked > 15 && rep.walked < 40);
	sandbox_argv_free(argv);
	compiled_free(&c);
}

/* A policy with no rules still gets the mandatory list. */
static void test_masks_mandatory_only(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	struct sandbox_report rep;
	compile(&c, "version: 1\n", t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, &rep);
	assert_int_equal(rep.masks, 2);
	assert_true(find_seq(argv, "--tmpfs", pathf(t->home, ".ssh"), NULL) > 0);
	assert_true(find_seq(argv, "--tmpfs", pathf(t->home, ".aws"), NULL) > 0);
	assert_int_equal(count_word(argv, pathf(t->ws, ".env")), 0);
	sandbox_argv_free(argv);
	compiled_free(&c);
}

/* Protections: only existing paths, only where writable; the policy file inside .airlock needs none. */
static void test_protections(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, NULL);
	static const char *const present[] = { ".git/hooks", ".git/config", ".airlock" };
	for (size_t i = 0; i < 3; i++) {
		const char *p = pathf(t->ws, present[i]);
		assert_true(find_seq(argv, "--ro-bind", p, p, NULL) > 0);
	}
	assert_int_equal(count_word(argv, pathf(t->ws, ".vscode")), 0);
	assert_int_equal(count_word(argv, pathf(t->ws, ".claude")), 0);
	assert_int_equal(count_word(argv, t->policy_file), 0);
	assert_int_equal(count_word(argv, pathf(t->home, ".bashrc")), 0); /* home read-only */
	sandbox_argv_free(argv);
	/* a policy file elsewhere in the workspace gets its own mount */
	mk_file(t, "ws/policy.yaml", mask_policy);
	cfg.policy_file = pathf(t->ws, "policy.yaml");
	argv = build_ok(&cfg, NULL);
	assert_true(find_seq(argv, "--ro-bind", cfg.policy_file, cfg.policy_file, NULL) > 0);
	sandbox_argv_free(argv);
	compiled_free(&c);
}

/* The walk stops at MASKS_WALK_MAX_DEPTH levels and at 20000 entries, and says so. */
static void test_walk_caps(void **state)
{
	(void)state;
	struct tree *t = tree_new("/var/tmp");
	struct compiled c;
	struct sandbox_config cfg;
	struct sandbox_report rep;
	char rel[PATH_MAX] = "ws";
	mk_dir(t, "home");
	mk_dir(t, "ws");
	mk_dir(t, "session");
	for (int i = 0; i < 14; i++) {
		strcat(rel, "/d");
		mk_dir(t, rel);
	}
	strcat(rel, "/deep.secret");
	mk_file(t, rel, "x");
	mk_file(t, "ws/shallow.secret", "x");
	mk_dir(t, "home/.config");
	mk_file(t, "home/.config/after-depth-cap.key", "x"); /* walked after the workspace's depth cap */
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, &rep);
	assert_true(rep.masks_capped);
	assert_int_equal(rep.masks, 2);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->ws, "shallow.secret"), NULL) > 0);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null",
			     pathf(t->home, ".config/after-depth-cap.key"), NULL) > 0);
	sandbox_argv_free(argv);
	/* the entry cap: a directory of 20100 files */
	mk_dir(t, "ws/many");
	for (int i = 0; i < 20100; i++) {
		char p[PATH_MAX];
		int n = snprintf(p, sizeof p, "%s/many/f%05d", t->ws, i);
		assert_true(n > 0 && n < PATH_MAX);
		int fd = open(p, O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	argv = build_ok(&cfg, &rep);
	assert_true(rep.masks_capped);
	assert_int_equal(rep.walked, 20000);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->ws, "shallow.secret"), NULL) > 0);
	sandbox_argv_free(argv);
	compiled_free(&c);
	tree_free(t);
}

/* ---- the mask walk on its own (masks.h), against a recording target --------------------------------- */

/* A target where everything shows but what was hidden; mask() fails once fail_at calls were made. */
struct recorder {
	char hidden[16][PATH_MAX];
	bool dir[16];
	int n;
	int fail_at; /* -1: never */
};

static bool rec_visible(void *ctx, const char *canon)
{
	struct recorder *r = ctx;
	for (int i = 0; i < r->n; i++) {
		size_t k = strlen(r->hidden[i]);
		if (strncmp(canon, r->hidden[i], k) == 0 && (canon[k] == '/' || canon[k] == '\0'))
			return false;
	}
	return true;
}

static int rec_mask(void *ctx, const char *canon, bool is_dir)
{
	struct recorder *r = ctx;
	if (r->n == r->fail_at || r->n == 16)
		return -ENOSPC;
	snprintf(r->hidden[r->n], PATH_MAX, "%s", canon);
	r->dir[r->n++] = is_dir;
	return 0;
}

static int rec_find(const struct recorder *r, const char *path)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->hidden[i], path) == 0)
			return i;
	return -1;
}

/* The mandatory list first, then the walk, breadth first; targets of links at their canonical place. */
static void test_masks_apply_order(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct recorder r = { .fail_at = -1 };
	struct masks_target target = { rec_visible, rec_mask, &r };
	struct masks_report rep;
	char failing[PATH_MAX] = "";
	compile(&c, mask_policy, t->home, t->ws);
	assert_int_equal(masks_apply(c.img, t->ws, t->home, &target, &rep, failing, NULL), MASKS_OK);
	assert_int_equal(rep.masks, 6);
	assert_int_equal(r.n, 6);
	assert_false(rep.capped);
	/* the mandatory list, in its order, before anything the walk finds */
	assert_int_equal(rec_find(&r, pathf(t->home, ".ssh")), 0);
	assert_int_equal(rec_find(&r, pathf(t->home, ".aws")), 1);
	assert_true(r.dir[0] && r.dir[1]);
	/* breadth first: ws/.env (depth 1) before ws/src/deep/config.secret (depth 3) */
	int env = rec_find(&r, pathf(t->ws, ".env")), deep = rec_find(&r, pathf(t->ws, "src/deep/config.secret"));
	assert_true(env >= 2 && deep > env);
	assert_false(r.dir[env]);
	assert_true(rec_find(&r, pathf(t->root, "outside/api.key")) >= 2);
	assert_true(rec_find(&r, pathf(t->ws, "config/plain.txt")) >= 2);
	compiled_free(&c);
}

/* A mask the target cannot add stops the walk: the result, the path and the target's errno. */
static void test_masks_apply_fails_with_path(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct recorder r = { .fail_at = 2 };
	struct masks_target target = { rec_visible, rec_mask, &r };
	struct masks_report rep;
	char failing[PATH_MAX] = "";
	int err = 0;
	compile(&c, mask_policy, t->home, t->ws);
	assert_int_equal(masks_apply(c.img, t->ws, t->home, &target, &rep, failing, &err),
			 MASKS_MASK_FAILED);
	assert_int_equal(err, -ENOSPC);
	assert_int_equal(rep.masks, 2);
	assert_string_equal(failing, pathf(t->ws, ".env"));
	assert_string_equal(masks_result_text(MASKS_MASK_FAILED), "cannot add the mask");
	/* no home: the walk covers the workspace only */
	r = (struct recorder){ .fail_at = -1 };
	assert_int_equal(masks_apply(c.img, t->ws, "/nonexistent/home", &target, &rep, NULL, NULL),
			 MASKS_OK);
	assert_int_equal(rec_find(&r, pathf(t->home, ".ssh")), -1);
	assert_true(rec_find(&r, pathf(t->ws, ".env")) >= 0);
	compiled_free(&c);
}

/* ---- env_build ------------------------------------------------------------------------------------- */

/* A hand-made policy holding only what env_build reads. */
static struct policy env_policy(char **pass, size_t npass, struct policy_env_var *env, size_t nenv)
{
	struct policy p;
	memset(&p, 0, sizeof p);
	p.sandbox.env_passthrough = pass;
	p.sandbox.nenv_passthrough = npass;
	p.sandbox.env = env;
	p.sandbox.nenv = nenv;
	return p;
}

/* Asserts env equals the NULL-terminated list want, in order. */
static void env_expect(char **env, const char *const *want)
{
	size_t i = 0;
	assert_non_null(env);
	for (; want[i]; i++) {
		if (!env[i])
			fail_msg("missing %s", want[i]);
		assert_string_equal(env[i], want[i]);
	}
	if (env[i])
		fail_msg("unexpected %s", env[i]);
}

static void test_env_passthrough(void **state)
{
	(void)state;
	char *pass[] = { "HOME", "LC_*", "LD_*", "AIRLOCK_*" };
	char *caller[] = { "HOME=/h",	   "LC_ALL=C",	      "LANG=en",       "SECRET_API_KEY=sk",
			   "LC_CTYPE=x",   "HOME=/second",    "LD_PRELOAD=/evil.so", "AIRLOCK_DIR=/x",
			   "LD_LIBRARY_PATH=/l", "NOEQUALS", "bad-name=1", NULL };
	struct policy p = env_policy(pass, 4, NULL, 0);
	char err[256];
	char **env = env_build(&p, caller, NULL, "abc123", err, sizeof err);
	static const char *const want[] = { "HOME=/h",
					    "LC_ALL=C",
					    "LC_CTYPE=x",
					    "LD_LIBRARY_PATH=/l",
					    "LD_PRELOAD=/run/airlock/airlock-preload.so",
					    "AIRLOCK_DIR=/run/airlock",
					    "AIRLOCK_SESSION=abc123",
					    NULL };
	env_expect(env, want);
	env_free(env);
	env_free(NULL);
}

/* Order: passthrough < policy env: < --env; airlock's variables last. */
static void test_env_override_order(void **state)
{
	(void)state;
	char *pass[] = { "LANG", "PATH", "TOKEN" };
	struct policy_env_var pe[] = { { "LANG", "C.UTF-8" }, { "EDITOR", "vi" }, { "PATH", "/usr/bin" } };
	char *caller[] = { "LANG=en_US", "PATH=/home/u/bin:/usr/bin", "TOKEN=t0", "FROMUSER=f", NULL };
	char *user[] = { "EDITOR=nano", "FROMUSER", "MISSING", "EMPTY=", "X=1", "X=2", "TOKEN", NULL };
	struct policy p = env_policy(pass, 3, pe, 3);
	char err[256];
	char **env = env_build(&p, caller, user, "s1", err, sizeof err);
	static const char *const want[] = { "LANG=C.UTF-8",
					    "PATH=/usr/bin",
					    "TOKEN=t0",
					    "EDITOR=nano",
					    "FROMUSER=f",
					    "EMPTY=",
					    "X=2",
					    "LD_PRELOAD=/run/airlock/airlock-preload.so",
					    "AIRLOCK_DIR=/run/airlock",
					    "AIRLOCK_SESSION=s1",
					    NULL };
	env_expect(env, want);
	env_free(env);
}

/* Bad names and airlock's own names are refused, with the source named. */
static void test_env_errors(void **state)
{
	(void)state;
	static const struct {
		const char *user;
		const char *msg;
	} rows[] = {
		{ "LD_PRELOAD=/x.so", "--env: LD_PRELOAD" }, { "AIRLOCK_SESSION", "AIRLOCK_SESSION" },
		{ "1BAD=x", "'1BAD'" },			     { "BAD-NAME=x", "'BAD-NAME'" },
		{ "=x", "--env" },			     { "", "--env" },
	};
	char *pass[] = { "HOME" };
	char err[256];
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *user[] = { (char *)rows[i].user, NULL };
		struct policy p = env_policy(pass, 1, NULL, 0);
		errno = 0;
		assert_null(env_build(&p, NULL, user, "s", err, sizeof err));
		assert_int_equal(errno, EINVAL);
		if (!strstr(err, rows[i].msg))
			fail_msg("row %zu: '%s' lacks '%s'", i, err, rows[i].msg);
	}
	char *star[] = { "*" }, *badpat[] = { "A*B" };
	struct policy_env_var pe[] = { { "LD_PRELOAD", "/x.so" } };
	struct policy p = env_policy(star, 1, NULL, 0);
	assert_null(env_build(&p, NULL, NULL, "s", err, sizeof err));
	assert_non_null(strstr(err, "every variable"));
	p = env_policy(badpat, 1, NULL, 0);
	assert_null(env_build(&p, NULL, NULL, "s", err, sizeof err));
	p = env_policy(NULL, 0, pe, 1);
	assert_null(env_build(&p, NULL, NULL, "s", err, sizeof err));
	assert_non_null(strstr(err, "sandbox.env: LD_PRELOAD"));
	p = env_policy(NULL, 0, NULL, 0);
	assert_null(env_build(&p, NULL, NULL, "", err, sizeof err));
	assert_true(env_name_valid("_a1", 3) && !env_name_valid("a.b", 3));
}

/* Without env_passthrough the loader's built-in list applies: HOME and LC_* cross, keys do not. */
static void test_env_default_policy_list(void **state)
{
	(void)state;
	struct policy_error perr;
	static const char yaml[] = "version: 1\n";
	struct policy *p = policy_load_buffer("t.yaml", yaml, strlen(yaml), &perr);
	char *caller[] = { "HOME=/h", "ANTHROPIC_API_KEY=sk", "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=x",
			   NULL };
	char err[256];
	assert_non_null(p);
	char **env = env_build(p, caller, NULL, "s", err, sizeof err);
	assert_non_null(env);
	bool home = false, lc = false;
	for (char **e = env; *e; e++) {
		assert_null(strstr(*e, "KEY"));
		home |= strcmp(*e, "HOME=/h") == 0;
		lc |= strcmp(*e, "LC_ALL=C") == 0;
	}
	assert_true(home && lc);
	env_free(env);
	policy_free(p);
}

/* ---- real runs under bwrap --------------------------------------------------------------------------- */

static const char *bwrap_path(void)
{
	static const char *const cands[] = { "/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap" };
	for (size_t i = 0; i < 3; i++)
		if (access(cands[i], X_OK) == 0)
			return cands[i];
	return NULL;
}

/* In a fork child: become nobody.  Only async-signal-safe calls. */
static void become_nobody(void)
{
	if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) != 0)
		_exit(126);
}

/*
 * Runs argv (bwrap's) with stdout/stderr to files, as nobody when as_nobody
 * and we are root; returns the exit status, or -1.
 */
static int run_argv(char **argv, bool as_nobody, const char *out, const char *errf)
{
	/* bwrap's own environment holds a secret: only --clearenv keeps it from the agent */
	static char *const bwrap_env[] = { "SECRET_API_KEY=leaked", "PATH=/usr/bin:/bin", NULL };
	pid_t pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		if (as_nobody && geteuid() == 0)
			become_nobody();
		execve(argv[0], argv, bwrap_env);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Reads up to cap-1 bytes of path into buf, NUL-terminated ("" when unreadable). */
static char *slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* NULL when bwrap can build a basic sandbox as this user, else why not. */
static const char *bwrap_unusable(const char *bwrap, bool as_nobody, const struct tree *t)
{
	char *argv[] = { (char *)bwrap, "--unshare-user", "--unshare-net", "--ro-bind", "/", "/",
			 "--", "/bin/true", NULL };
	char out[PATH_MAX], errf[PATH_MAX];
	if (!bwrap)
		return "bwrap not installed";
	if (!as_nobody)
		memmove(&argv[1], &argv[2], 7 * sizeof *argv);
	tree_path(t, out, "probe.out");
	tree_path(t, errf, "probe.err");
	if (run_argv(argv, as_nobody, out, errf) != 0)
		return as_nobody ? "bwrap fails without privileges (user namespaces disabled?)"
				 : "bwrap fails as root (no mount namespaces here?)";
	return NULL;
}

/* Each line: what the script checks = what it found. */
static const char run_script[] =
	"r() { printf '%s=%s\\n' \"$1\" \"$2\"; }\n"
	"r ssh \"$(cat \"$HOME/.ssh/id_rsa\" 2>/dev/null)\"\n"
	"r aws \"$(ls -A \"$HOME/.aws\" 2>/dev/null)\"\n"
	"r dotenv \"$(cat .env 2>/dev/null)\"\n"
	"r link \"$(cat link-to-key 2>/dev/null)\"\n"
	"r readme \"$(cat readme)\"\n"
	"if echo x 2>/dev/null > written; then r ws_write ok; else r ws_write refused; fi\n"
	"if touch /airlock-probe 2>/dev/null; then r root_write ok; else r root_write refused; fi\n"
	"if [ -e \"$1\" ]; then r tmp host; else r tmp private; fi\n"
	"if echo x 2>/dev/null > /tmp/t; then r tmp_write ok; else r tmp_write refused; fi\n"
	"if touch .git/hooks/pre-commit 2>/dev/null; then r hooks ok; else r hooks refused; fi\n"
	"if echo x 2>/dev/null >> .git/config; then r gitconfig ok; else r gitconfig refused; fi\n"
	"if echo x 2>/dev/null >> .env; then r mask_write ok; else r mask_write refused; fi\n"
	"r run \"$(cat /run/airlock/marker)\"\n"
	"r env \"$(env | cut -d= -f1 | grep -v '^PWD$' | sort | tr '\\n' ' ')\"\n"
	"r uid \"$(id -u)\"\n";

static void real_run(struct tree *t, bool as_nobody)
{
	const char *bwrap = bwrap_path();
	const char *why = bwrap_unusable(bwrap, as_nobody, t);
	if (why) {
		print_message("skipped: %s\n", why);
		skip();
	}
	char marker[PATH_MAX], out[PATH_MAX], errf[PATH_MAX], home_env[PATH_MAX + 8];
	snprintf(marker, sizeof marker, "/tmp/airlock-sbx-marker-%d", (int)getpid());
	close(open(marker, O_CREAT | O_WRONLY, 0644));
	snprintf(home_env, sizeof home_env, "HOME=%s", t->home);
	char *caller[] = { home_env, "PATH=/usr/bin:/bin", "SECRET_API_KEY=sk-live", "LC_ALL=C", NULL };
	char err[256];
	struct compiled c;
	compile(&c, mask_policy, t->home, t->ws);
	char **env = env_build(c.p, caller, NULL, "0123456789abcdef", err, sizeof err);
	assert_non_null(env);
	char *argv[] = { "sh", "-c", (char *)run_script, "sh", marker, NULL };
	struct sandbox_config cfg;
	config_init(&cfg, t, &c);
	cfg.env = env;
	cfg.argv = argv;
	cfg.unprivileged = as_nobody;
	char **bw = build_ok(&cfg, NULL);
	tree_path(t, out, "run.out");
	tree_path(t, errf, "run.err");
	int status = run_argv(bw, as_nobody, out, errf);
	unlink(marker);
	char want[1024];
	snprintf(want, sizeof want,
		 "ssh=\naws=\ndotenv=\nlink=\nreadme=hello\nws_write=ok\nroot_write=refused\n"
		 "tmp=private\ntmp_write=ok\nhooks=refused\ngitconfig=refused\nmask_write=refused\n"
		 "run=session-ok\nenv=AIRLOCK_DIR AIRLOCK_SESSION HOME LD_PRELOAD PATH \nuid=%d\n",
		 !as_nobody ? 0 : geteuid() == 0 ? NOBODY : (int)geteuid());
	char got[8192], errtext[8192];
	slurp(out, got, sizeof got);
	if (status != 0 || strcmp(got, want) != 0) {
		dump_argv(bw);
		print_message("status %d\n--- got\n%s--- want\n%s--- stderr\n%s", status, got, want,
			      slurp(errf, errtext, sizeof errtext));
		fail();
	}
	sandbox_argv_free(bw);
	env_free(env);
	compiled_free(&c);
}

static int chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return lchown(path, NOBODY, NOBODY);
}

static void test_run_as_root(void **state)
{
	if (geteuid() != 0) {
		print_message("skipped: not root\n");
		skip();
	}
	real_run(*state, false);
}

/* As root: the tree is handed to nobody and bwrap runs as nobody; otherwise as ourselves. */
static void test_run_unprivileged(void **state)
{
	struct tree *t = *state;
	if (geteuid() == 0)
		assert_int_equal(nftw(t->root, chown_entry, 32, FTW_PHYS), 0);
	real_run(t, true);
}

/* ---- the bubblewrap backend (backend.h), used as `airlock run` uses it -------------------------- */

/*
 * Starts the sandbox's command as `run` does (fork, execve, spawned), waits
 * for what ready() says, and returns the child's exit status; *stood: what
 * ready() said last, *agent: agent() once it stood.
 */
static int backend_start(const struct sandbox_backend *be, struct sandbox *sb, const char *errf,
			 bool *stood, pid_t *agent)
{
	struct sandbox_exec ex;
	assert_int_equal(be->command(sb, &ex), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (e < 0 || dup2(e, 2) < 0)
			_exit(126);
		execve(ex.path, ex.argv, ex.envp);
		_exit(127);
	}
	be->spawned(sb);
	*stood = false;
	*agent = 0;
	for (int i = 0; i < 500 && be->ready_fd(sb) >= 0; i++) {
		struct pollfd p = { be->ready_fd(sb), POLLIN, 0 };
		if (poll(&p, 1, 20) > 0 && (*stood = be->ready(sb)) && !*agent)
			*agent = be->agent(sb);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*stood = be->ready(sb);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* probe, build, command, spawned, ready, agent, free: the agent runs in the sandbox, and says so. */
static void test_backend_bubblewrap(void **state)
{
	struct tree *t = *state;
	const struct sandbox_backend *be = &sandbox_bubblewrap;
	char err[512], errf[PATH_MAX], ran[64];
	const char *why = bwrap_unusable(bwrap_path(), false, t);
	if (geteuid() != 0 || why) {
		print_message("skipped: %s\n", why ? why : "not root");
		skip();
	}
	assert_null(be->probe("/nonexistent/bwrap", err, sizeof err));
	assert_non_null(strstr(err, "bubblewrap (bwrap) not found at /nonexistent/bwrap: install it"));
	struct sandbox *sb = be->probe(bwrap_path(), err, sizeof err);
	assert_non_null(sb);
	struct compiled c;
	struct sandbox_config cfg;
	struct sandbox_report rep;
	char *argv[] = { "sh", "-c", "cat .env > ran 2>/dev/null || echo masked > ran", NULL };
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	cfg.argv = argv;
	assert_int_equal(be->build(sb, &cfg, &rep, err, sizeof err), 0);
	assert_int_equal(rep.masks, 6);
	bool stood;
	pid_t agent;
	tree_path(t, errf, "backend.err");
	assert_int_equal(backend_start(be, sb, errf, &stood, &agent), 0);
	assert_true(stood);
	assert_true(agent > 0);
	assert_int_equal(be->ready_fd(sb), -1);
	assert_string_equal(slurp(pathf(t->ws, "ran"), ran, sizeof ran), "masked\n");
	be->free(sb);
	/* a "bwrap" that never sets the sandbox up: it never stands */
	sb = be->probe("/bin/false", err, sizeof err);
	assert_non_null(sb);
	assert_int_equal(be->build(sb, &cfg, &rep, err, sizeof err), 0);
	assert_int_equal(backend_start(be, sb, errf, &stood, &agent), 1);
	assert_false(stood);
	assert_int_equal(be->agent(sb), 0);
	be->free(sb);
	be->free(NULL);
	compiled_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_argv_root_layout, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_unprivileged, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_network_modes, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_read_list, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_write_list, tree_setup, tree_teardown),
		cmocka_unit_test(test_argv_workspace_in_tmp),
		cmocka_unit_test_setup_teardown(test_argv_seccomp_and_env, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_errors, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_masks_found, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_masks_mandatory_only, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_protections, tree_setup, tree_teardown),
		cmocka_unit_test(test_walk_caps),
		cmocka_unit_test_setup_teardown(test_masks_apply_order, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_masks_apply_fails_with_path, tree_setup, tree_teardown),
		cmocka_unit_test(test_env_passthrough),
		cmocka_unit_test(test_env_override_order),
		cmocka_unit_test(test_env_errors),
		cmocka_unit_test(test_env_default_policy_list),
		cmocka_unit_test_setup_teardown(test_run_as_root, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_run_unprivileged, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_backend_bubblewrap, tree_setup, tree_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
