/* test_sandbox.c — unit tests for launcher/sandbox/sandbox.c (bwrap argv, masks, protections), launcher/sandbox/masks.c (the mask walk) and launcher/sandbox/env.c; real bwrap runs and the backend are in test_sandbox_run.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "launcher/sandbox/env.h"
#include "launcher/sandbox/masks.h"
#include "launcher/sandbox/sandbox.h"
#include "policy/policy.h"

#include "sandbox_fixture.h"

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

/*
 * The sandbox's own /etc/hosts: --ro-bind-data FD PATH (after the trees, so it lies over the
 * host's file) under network: proxy (in the launcher's namespace or not) and none; never under
 * host.  No fd: the host's file shows.
 */
static void test_argv_hosts_file(void **state)
{
	static const struct {
		const char *mode;
		bool netns;
		bool bound;
	} rows[] = {
		{ "proxy", true, true }, { "proxy", false, true }, { "none", false, true },
		{ "host", false, false },
	};
	struct tree *t = *state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char yaml[256];
		struct compiled c;
		struct sandbox_config cfg;
		snprintf(yaml, sizeof yaml, "version: 1\nsandbox:\n  network: %s\n", rows[i].mode);
		compile(&c, yaml, t->home, t->ws);
		config_init(&cfg, t, &c);
		cfg.netns = rows[i].netns;
		cfg.hosts_fd = 7;
		cfg.hosts_path = "/etc/real-hosts";
		char **argv = build_ok(&cfg, NULL);
		int at = find_seq(argv, "--ro-bind-data", "7", "/etc/real-hosts", NULL);
		if (rows[i].bound)
			assert_true(at > find_seq(argv, "--ro-bind", "/", "/", NULL));
		else
			assert_int_equal(at, -1);
		sandbox_argv_free(argv);
		cfg.hosts_fd = -1;
		argv = build_ok(&cfg, NULL);
		assert_int_equal(count_word(argv, "/etc/real-hosts"), 0);
		sandbox_argv_free(argv);
		compiled_free(&c);
	}
}

/* Its text: loopback names only, the hostname when it is a plain host name, nothing else. */
static void test_hosts_text(void **state)
{
	(void)state;
	char buf[512];
	assert_true(sandbox_hosts_text("box-1.example", buf, sizeof buf) > 0);
	assert_non_null(strstr(buf, "127.0.0.1\tlocalhost box-1.example\n"));
	assert_non_null(strstr(buf, "::1\tlocalhost ip6-localhost ip6-loopback box-1.example\n"));
	/* every line that is not a comment names a loopback address */
	char copy[512];
	snprintf(copy, sizeof copy, "%s", buf);
	int entries = 0;
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] == '#')
			continue;
		assert_true(strncmp(l, "127.0.0.1\t", 10) == 0 || strncmp(l, "::1\t", 4) == 0);
		entries++;
	}
	assert_int_equal(entries, 2);
	/* no name, or one hosts(5) cannot carry as it is: left out, never written */
	static const char *const bad[] = { NULL, "", "(none)", "localhost", "LocalHost", "-x",
					   "a b", "x\n203.0.113.1 evil", "x#y", "x\ty" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_true(sandbox_hosts_text(bad[i], buf, sizeof buf) > 0);
		assert_non_null(strstr(buf, "127.0.0.1\tlocalhost\n"));
		assert_non_null(strstr(buf, "::1\tlocalhost ip6-localhost ip6-loopback\n"));
		assert_null(strstr(buf, "evil"));
	}
	char longname[300];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_true(sandbox_hosts_text(longname, buf, sizeof buf) > 0);
	assert_null(strstr(buf, "aaaa"));
	assert_int_equal(sandbox_hosts_text("box", buf, 16), -ENOSPC);
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

/* The words after bwrap's first "--" up to the helper's own "--": the Landlock helper's part. */
static int landlock_part(char **argv, int *end)
{
	int dd = find_seq(argv, "--", "/run/airlock/airlock-landlock", NULL);
	assert_true(dd > 0);
	for (*end = dd + 2; argv[*end] && strcmp(argv[*end], "--") != 0; (*end)++)
		;
	assert_non_null(argv[*end]);
	return dd + 2;
}

/* True when "-w path" is in argv[from..to). */
static bool has_w(char **argv, int from, int to, const char *path)
{
	for (int i = from; i + 1 < to; i++)
		if (strcmp(argv[i], "-w") == 0 && strcmp(argv[i + 1], path) == 0)
			return true;
	return false;
}

/*
 * The Landlock helper runs before the program, bound from the host into the
 * session mount; its writable places are the read-write mounts' destinations
 * that no later mount covers (the workspace, sandbox.write, /dev, /proc, /tmp,
 * /run), none read-only (/, the session) and none inside another one listed.
 */
static void test_argv_landlock(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	char outside[PATH_MAX];
	tree_path(t, outside, "outside");
	mk_dir(t, "home/state");
	compile(&c, "version: 1\nsandbox:\n  write: [\"~/state\", \"~/.aws\", ./src, /tmp]\n",
		t->home, t->ws);
	config_init(&cfg, t, &c);
	/* without the helper: the program follows bwrap's "--" directly */
	char **argv = build_ok(&cfg, NULL);
	assert_true(find_seq(argv, "--", "/bin/sh", "-c", "true", NULL) > 0);
	assert_int_equal(count_word(argv, "/run/airlock/airlock-landlock"), 0);
	sandbox_argv_free(argv);

	cfg.landlock_path = "/usr/lib/airlock/airlock-landlock";
	cfg.landlock_abi = 6;
	argv = build_ok(&cfg, NULL);
	assert_true(find_seq(argv, "--ro-bind", "/usr/lib/airlock/airlock-landlock",
			     "/run/airlock/airlock-landlock", NULL) > 0);
	int end, from = landlock_part(argv, &end);
	assert_true(find_seq(argv, "--abi", "6", "-r", "/", NULL) == from);
	assert_true(find_seq(argv, "--", "/bin/sh", "-c", "true", NULL) == end);
	assert_null(argv[end + 4]);
	/* home's allowlist tmpfs is read-only: not listed */
	const char *want[] = { t->ws, pathf(t->home, "state"), "/dev", "/proc", "/tmp", "/run" };
	int nw = 0;
	for (int i = from; i < end; i++)
		nw += strcmp(argv[i], "-w") == 0;
	assert_int_equal(nw, (int)(sizeof want / sizeof want[0]));
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!has_w(argv, from, end, want[i]))
			fail_msg("no -w %s", want[i]);
	/* ./src is inside the workspace; ~/.aws is bound read-write, then masked (mandatory) */
	assert_false(has_w(argv, from, end, pathf(t->ws, "src")));
	assert_false(has_w(argv, from, end, pathf(t->home, ".aws")));
	assert_false(has_w(argv, from, end, "/"));
	assert_false(has_w(argv, from, end, t->home));
	assert_false(has_w(argv, from, end, outside));
	sandbox_argv_free(argv);
	compiled_free(&c);
}

/* A workspace inside /tmp is inside a writable place already: no second -w. */
static void test_argv_landlock_nested(void **state)
{
	(void)state;
	struct tree *t = tree_new("/tmp");
	tree_fill(t);
	struct compiled c;
	struct sandbox_config cfg;
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	cfg.landlock_path = "/x/airlock-landlock";
	cfg.landlock_abi = 7;
	char **argv = build_ok(&cfg, NULL);
	int end, from = landlock_part(argv, &end);
	assert_true(has_w(argv, from, end, "/tmp"));
	assert_false(has_w(argv, from, end, t->ws));
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
	compile(&c, "version: 1\nsandbox: {read: [\"~\"]}\n", t->home, t->ws);
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
	struct masks_target target = { .visible = rec_visible, .mask = rec_mask, .ctx = &r };
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
	struct masks_target target = { .visible = rec_visible, .mask = rec_mask, .ctx = &r };
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

/* ---- unix sockets of the host -------------------------------------------------------------------- */

/* A unix socket file at t/rel, as a service leaves it (bound, listening, its process gone). */
static void mk_sock(const struct tree *t, const char *rel)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char p[PATH_MAX];
	tree_path(t, p, rel);
	assert_true(strlen(p) < sizeof sa.sun_path);
	memcpy(sa.sun_path, p, strlen(p) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(fd, 1), 0);
	close(fd);
}

/* The recorder's target, naming one path (a socket the policy lists). */
static const char *named_path;
static bool rec_named(void *ctx, const char *canon)
{
	(void)ctx;
	return named_path && strcmp(canon, named_path) == 0;
}

/*
 * The mask walk hides the sockets it meets in the workspace and home, and a socket a symlink
 * there leads to, at its canonical place; not one the target names; counted apart.
 */
static void test_masks_apply_sockets(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct recorder r = { .fail_at = -1 };
	struct masks_target target = { .visible = rec_visible, .mask = rec_mask, .ctx = &r,
				       .named = rec_named };
	struct masks_report rep;
	mk_dir(t, "home/.docker");
	mk_dir(t, "home/.docker/desktop");
	mk_sock(t, "home/.docker/desktop/docker.sock");
	mk_sock(t, "ws/agent.sock");
	mk_sock(t, "ws/src/kept.sock");
	mk_sock(t, "outside/linked.sock");
	mk_link(t, "../outside/linked.sock", "ws/link.sock");
	char kept[PATH_MAX];
	snprintf(kept, sizeof kept, "%s", pathf(t->ws, "src/kept.sock"));
	named_path = kept;
	compile(&c, mask_policy, t->home, t->ws);
	assert_int_equal(masks_apply(c.img, t->ws, t->home, &target, &rep, NULL, NULL), MASKS_OK);
	named_path = NULL;
	assert_int_equal(rep.masks, 6 + 3);
	assert_int_equal(rep.sockets, 3);
	int d = rec_find(&r, pathf(t->home, ".docker/desktop/docker.sock"));
	assert_true(d >= 0);
	assert_false(r.dir[d]);
	assert_true(rec_find(&r, pathf(t->ws, "agent.sock")) >= 0);
	assert_true(rec_find(&r, pathf(t->root, "outside/linked.sock")) >= 0);
	assert_int_equal(rec_find(&r, pathf(t->ws, "link.sock")), -1);
	assert_int_equal(rec_find(&r, kept), -1);
	compiled_free(&c);
}

/*
 * The socket walk over the other host trees: breadth first across its roots, not into the
 * trees done (walked already), the system trees it skips, tool caches, or past the depth bound.
 */
static void test_masks_sockets_walk(void **state)
{
	struct tree *t = *state;
	struct recorder r = { .fail_at = -1 };
	struct masks_target target = { .visible = rec_visible, .mask = rec_mask, .ctx = &r,
				       .named = rec_named };
	struct masks_report rep;
	char failing[PATH_MAX] = "";
	static const char *const dirs[] = { "outside/srv", "outside/srv/app", "outside/node_modules",
					    "outside/deep" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		mk_dir(t, dirs[i]);
	mk_sock(t, "outside/srv/app/api.sock");
	mk_sock(t, "outside/srv/kept.sock");
	mk_sock(t, "outside/node_modules/skipped.sock");
	mk_sock(t, "ws/in-workspace.sock");
	mk_sock(t, "session/channel.sock");
	char rel[PATH_MAX] = "outside/deep";
	for (unsigned i = 0; i < MASKS_WALK_MAX_DEPTH; i++) {
		strcat(rel, "/d");
		mk_dir(t, rel);
	}
	strcat(rel, "/too-deep.sock");
	mk_sock(t, rel);
	char kept[PATH_MAX];
	snprintf(kept, sizeof kept, "%s", pathf(t->root, "outside/srv/kept.sock"));
	named_path = kept;
	/* the tree's root and, inside it, outside/ again: walked once */
	const char *roots[] = { t->root, pathf(t->root, "outside"), "relative/ignored" };
	const char *done[] = { t->ws, t->home, t->session, NULL };
	assert_int_equal(masks_sockets(roots, 3, done, &target, &rep, failing, NULL), MASKS_OK);
	named_path = NULL;
	assert_int_equal(r.n, 1);
	assert_int_equal(rep.sockets, 1);
	assert_int_equal(rep.masks, 1);
	assert_string_equal(r.hidden[0], pathf(t->root, "outside/srv/app/api.sock"));
	assert_true(rep.capped); /* the depth bound */
	/* a failing target: the result and the path */
	r = (struct recorder){ .fail_at = 0 };
	assert_int_equal(masks_sockets(roots, 1, done, &target, &rep, failing, NULL),
			 MASKS_MASK_FAILED);
	assert_string_equal(failing, pathf(t->root, "outside/srv/kept.sock"));
	/* nothing done: the workspace's and the session's sockets too */
	r = (struct recorder){ .fail_at = -1 };
	assert_int_equal(masks_sockets(roots, 1, NULL, &target, &rep, NULL, NULL), MASKS_OK);
	assert_int_equal(rep.sockets, 4);
	assert_true(rec_find(&r, pathf(t->ws, "in-workspace.sock")) >= 0);
}

/*
 * In the bwrap argv: /dev/null over each socket that shows (workspace, home, other host
 * trees), after the binds; a socket sandbox.write names is bound read-write and not masked;
 * the count apart from the deny-read masks.
 */
/* Home as an allowlist (MASK_RULES: no sandbox.read): an empty tmpfs, the tools' trees bound on it, read-only at the end. */
static void test_home_allowlist(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	struct sandbox_report rep;
	mk_dir(t, "home/.cache");
	mk_dir(t, "home/.local");
	mk_dir(t, "home/.local/bin");
	mk_file(t, "home/.gitconfig", "[user]\n\tname = x\n");
	mk_file(t, "home/.local/bin/deploy.key", "k\n");
	mk_file(t, "home/.vault-token", "t\n");
	compile(&c, MASK_RULES, t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, &rep);
	assert_true(rep.home_shown);
	int tmpfs = find_seq(argv, "--tmpfs", t->home, NULL);
	int git = find_seq(argv, "--ro-bind", pathf(t->home, ".gitconfig"), pathf(t->home, ".gitconfig"),
			   NULL);
	int cache = find_seq(argv, "--ro-bind", pathf(t->home, ".cache"), pathf(t->home, ".cache"), NULL);
	int seal = find_seq(argv, "--remount-ro", t->home, NULL);
	int bin = find_seq(argv, "--ro-bind", pathf(t->home, ".local/bin"), pathf(t->home, ".local/bin"),
			   NULL);
	int key = find_seq(argv, "--ro-bind", "/dev/null", pathf(t->home, ".local/bin/deploy.key"), NULL);
	int ws = find_seq(argv, "--bind", t->ws, t->ws, NULL);
	assert_true(tmpfs > 0 && git > tmpfs && cache > tmpfs && ws > tmpfs);
	/* the walk goes down the trees shown: the key in ~/.local/bin is masked; sealed after every mount */
	assert_true(bin > tmpfs && key > bin && seal > key && seal > ws);
	/* what is not listed is not there: nothing of it bound; a credential store directly in
	   home gets an empty mask all the same, so an attempt on it meets its rule and is logged */
	assert_int_equal(count_word(argv, pathf(t->home, ".vault-token")), 0);
	int ssh = find_seq(argv, "--tmpfs", pathf(t->home, ".ssh"), "--remount-ro", pathf(t->home, ".ssh"),
			   NULL);
	assert_true(ssh > tmpfs && seal > ssh);
	sandbox_argv_free(argv);
	compiled_free(&c);

	/* read: ["~"] shows home whole, as before */
	compile(&c, mask_policy, t->home, t->ws);
	config_init(&cfg, t, &c);
	argv = build_ok(&cfg, &rep);
	assert_false(rep.home_shown);
	assert_int_equal(find_seq(argv, "--tmpfs", t->home, NULL), -1);
	sandbox_argv_free(argv);
	compiled_free(&c);
}

static void test_argv_sockets(void **state)
{
	struct tree *t = *state;
	struct compiled c;
	struct sandbox_config cfg;
	struct sandbox_report rep;
	char yaml[2048];
	mk_dir(t, "home/.docker");
	mk_sock(t, "home/.docker/api.sock");
	mk_sock(t, "ws/ws.sock");
	mk_sock(t, "outside/host.sock");
	mk_sock(t, "outside/listed.sock");
	mk_sock(t, "session/channel");
	snprintf(yaml, sizeof yaml, "%s  write: [\"%s\"]\n", mask_policy,
		 pathf(t->root, "outside/listed.sock"));
	compile(&c, yaml, t->home, t->ws);
	config_init(&cfg, t, &c);
	char **argv = build_ok(&cfg, &rep);
	int root = find_seq(argv, "--ro-bind", "/", "/", NULL);
	int listed = find_seq(argv, "--bind", pathf(t->root, "outside/listed.sock"),
			      pathf(t->root, "outside/listed.sock"), NULL);
	assert_true(root > 0 && listed > root);
	assert_int_equal(count_word(argv, pathf(t->root, "outside/listed.sock")), 2);
	static const char *const masked[] = { "home/.docker/api.sock", "ws/ws.sock",
					      "outside/host.sock" };
	for (size_t i = 0; i < sizeof masked / sizeof masked[0]; i++) {
		const char *p = pathf(t->root, masked[i]);
		int at = find_seq(argv, "--ro-bind", "/dev/null", p, NULL);
		assert_true(at > listed);
		assert_int_equal(count_word(argv, p), 1);
	}
	/* the session directory is the sandbox's own: not walked */
	assert_int_equal(count_word(argv, pathf(t->session, "channel")), 0);
	assert_int_equal(rep.masks, 6);
	assert_true(rep.sockets >= 3); /* the host's own sockets under / may add to it */
	sandbox_argv_free(argv);
	compiled_free(&c);
	/* with a read list, only the trees it names are walked */
	snprintf(yaml, sizeof yaml, "%s  read: [\"/usr\", \"%s\"]\n", MASK_RULES,
		 pathf(t->root, "outside"));
	compile(&c, yaml, t->home, t->ws);
	config_init(&cfg, t, &c);
	argv = build_ok(&cfg, &rep);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->root, "outside/host.sock"),
			     NULL) > 0);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->root, "outside/listed.sock"),
			     NULL) > 0);
	assert_true(find_seq(argv, "--ro-bind", "/dev/null", pathf(t->ws, "ws.sock"), NULL) > 0);
	sandbox_argv_free(argv);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_argv_root_layout, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_unprivileged, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_network_modes, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_hosts_file, tree_setup, tree_teardown),
		cmocka_unit_test(test_hosts_text),
		cmocka_unit_test_setup_teardown(test_argv_read_list, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_write_list, tree_setup, tree_teardown),
		cmocka_unit_test(test_argv_workspace_in_tmp),
		cmocka_unit_test_setup_teardown(test_argv_landlock, tree_setup, tree_teardown),
		cmocka_unit_test(test_argv_landlock_nested),
		cmocka_unit_test_setup_teardown(test_argv_seccomp_and_env, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_errors, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_masks_found, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_masks_mandatory_only, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_protections, tree_setup, tree_teardown),
		cmocka_unit_test(test_walk_caps),
		cmocka_unit_test_setup_teardown(test_masks_apply_order, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_masks_apply_fails_with_path, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_masks_apply_sockets, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_masks_sockets_walk, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_argv_sockets, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_home_allowlist, tree_setup, tree_teardown),
		cmocka_unit_test(test_env_passthrough),
		cmocka_unit_test(test_env_override_order),
		cmocka_unit_test(test_env_errors),
		cmocka_unit_test(test_env_default_policy_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
