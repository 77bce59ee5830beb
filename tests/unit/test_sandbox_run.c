/* test_sandbox_run.c — real bwrap runs of what launcher/sandbox/sandbox.c builds, as root and as nobody, and the bubblewrap backend (bwrap.c) as `airlock run` uses it. */
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
#include "launcher/sandbox/sandbox.h"
#include "policy/policy.h"

#include "sandbox_fixture.h"

#define NOBODY 65534

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
		cmocka_unit_test_setup_teardown(test_run_as_root, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_run_unprivileged, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_backend_bubblewrap, tree_setup, tree_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
