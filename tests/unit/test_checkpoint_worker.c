/*
 * test_checkpoint_worker.c — the checkpoint worker (launcher/checkpoint/supervise.h) and
 * `airlock undo` (undo.h) end to end, without a sandbox: a child installs the checkpoint's
 * filter (filter.h) as the Landlock helper does and hands its listener to the worker, then
 * destroys files of the workspace in ways a plain unlink or truncate test does not cover; after
 * the worker's end records, ckpt_undo() must put every byte back and remove what the child made.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/fdpass.h"
#include "launcher/checkpoint/filter.h"
#include "launcher/checkpoint/journal.h"
#include "launcher/checkpoint/store.h"
#include "launcher/checkpoint/supervise.h"
#include "launcher/checkpoint/undo.h"

#define ID "0123456789abcdef"

static char top[] = "/tmp/airlock-cpworker-XXXXXX";
static char ws[PATH_MAX - 64];

static void put(const char *rel, const char *text)
{
	char p[2 * PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", ws, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The file's bytes, or "(absent)". */
static const char *get(const char *rel)
{
	static char buf[256];
	char p[2 * PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", ws, rel);
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return "(absent)";
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void garbage(int fd)
{
	if (fd < 0 || write(fd, "garbage\n", 8) != 8)
		_exit(10);
	close(fd);
}

/* What the sandbox does, under the filter, its cwd the workspace. */
static void child_destroys(void)
{
	/* mv a b; echo garbage >b */
	if (rename("a", "b") != 0)
		_exit(11);
	garbage(open("b", O_WRONLY | O_TRUNC));
	/* mv d e; echo garbage >e/f */
	if (rename("d", "e") != 0)
		_exit(12);
	garbage(open("e/f", O_WRONLY | O_TRUNC));
	/* ln g h; echo garbage >h; rm h */
	if (link("g", "h") != 0)
		_exit(13);
	garbage(open("h", O_WRONLY | O_TRUNC));
	if (unlink("h") != 0)
		_exit(14);
	/* p opened read-only, then again for writing through the magic link /proc/PID/fd/N */
	int ro = open("p", O_RDONLY);
	char via[64];
	snprintf(via, sizeof via, "/proc/%d/fd/%d", getpid(), ro);
	garbage(open(via, O_WRONLY | O_TRUNC));
	close(ro);
	/* and /proc//self/fd/N, which is not spelt /proc/self/ */
	ro = open("q", O_RDONLY);
	snprintf(via, sizeof via, "/proc//self/fd/%d", ro);
	garbage(open(via, O_WRONLY | O_TRUNC));
	close(ro);
}

static void test_undo_after_tricky_destruction(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(top));
	char p[PATH_MAX + 64], state_dir[PATH_MAX];
	snprintf(p, sizeof p, "%s/ws", top);
	assert_int_equal(mkdir(p, 0755), 0);
	char canon[PATH_MAX];
	assert_non_null(realpath(p, canon));
	assert_true(strlen(canon) < sizeof ws);
	strcpy(ws, canon);
	snprintf(state_dir, sizeof state_dir, "%s/state", top);
	assert_int_equal(setenv("XDG_STATE_HOME", state_dir, 1), 0);
	snprintf(p, sizeof p, "%s/d", ws);
	assert_int_equal(mkdir(p, 0755), 0);
	put("a", "original a\n");
	put("d/f", "original f\n");
	put("g", "original g\n");
	put("p", "original p\n");
	put("q", "original q\n");
	usleep(20000); /* older than the checkpoint by more than a tick of the coarse clock */

	char err[512];
	struct checkpoint_config cfg = { .workspace = ws, .home = top, .session_id = ID, .command = "test" };
	struct checkpoint *c = checkpoint_new(&cfg, NULL, NULL, err, sizeof err);
	if (!c)
		fail_msg("checkpoint_new: %s", err);
	assert_int_equal(checkpoint_start(c), 0);
	int sock = checkpoint_sandbox_fd(c);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_filter code[CHECKPOINT_FILTER_MAX];
		struct sock_fprog prog = { .len = (unsigned short)checkpoint_filter(code), .filter = code };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || chdir(ws) != 0)
			_exit(2);
		int l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
				     &prog);
		if (l < 0 || fdpass_send(sock, "L", 1, l) < 0)
			_exit(3);
		close(l);
		close(sock);
		child_destroys();
		_exit(0);
	}
	checkpoint_spawned(c);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(checkpoint_end(c, 0, NULL), 0);
	checkpoint_free(c);
	/* the child did destroy */
	assert_string_equal(get("a"), "(absent)");
	assert_string_equal(get("g"), "garbage\n");
	assert_string_equal(get("p"), "garbage\n");
	assert_string_equal(get("q"), "garbage\n");

	char *root = store_root(top);
	assert_non_null(root);
	struct ckpt_store s;
	assert_int_equal(ckpt_store_open(root, ID, LOCK_EX, &s, err, sizeof err), 0);
	char *out = NULL, *notes = NULL;
	size_t outlen = 0, noteslen = 0;
	FILE *o = open_memstream(&out, &outlen), *e = open_memstream(&notes, &noteslen);
	struct ckpt_undo_options opt = { .out = o, .err = e };
	struct ckpt_undo_result res;
	int r = ckpt_undo(&s, &opt, &res);
	fclose(o);
	fclose(e);
	ckpt_store_close(&s);
	free(root);
	print_message("# undo said:\n%s%s", out, notes);
	assert_int_equal(r, 0);
	assert_int_equal(res.not_restored, 0);
	assert_string_equal(get("a"), "original a\n");
	assert_string_equal(get("b"), "(absent)");
	assert_string_equal(get("d/f"), "original f\n");
	assert_string_equal(get("e/f"), "(absent)");
	assert_string_equal(get("g"), "original g\n");
	assert_string_equal(get("h"), "(absent)");
	assert_string_equal(get("p"), "original p\n");
	assert_string_equal(get("q"), "original q\n");
	free(out);
	free(notes);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	char why[256];
	if (checkpoint_probe(why, sizeof why) < 0) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_undo_after_tricky_destruction) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
