/* test_pathsearch.c — core/pathsearch.c against execvp(3) itself, and the launcher's canon_program() against both. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/canon.h"
#include "core/pathsearch.h"
#include "launcher/cli/launcher.h"

/*
 * The scratch tree, below a fresh directory T:
 *   a/prog   a directory                 b/prog   a regular file, not executable
 *   c/prog   an executable script        d/prog   another executable script
 *   e/link   a symlink to c/prog         f/prog   a symlink to the directory a
 *   LONG/prog, LONG a name long enough that "T/LONG/prog" does not fit SMALL bytes
 * Each script prints its directory's name, so execvp(3) says which one it ran.
 */
static char root[64];
static char long_dir[128];

#define SMALL 150 /* out buffer for the "does not fit" case */

static void make_file(const char *rel, const char *text, mode_t mode)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static void make_dir(const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void make_link(const char *target, const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/airlock-pathsearch.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	memset(long_dir, 'L', 120);
	long_dir[120] = '\0';
	static const char *const dirs[] = { "a", "a/prog", "b", "c", "d", "e", "f" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		make_dir(dirs[i]);
	make_dir(long_dir);
	make_file("b/prog", "#!/bin/sh\necho b\n", 0644);
	make_file("c/prog", "#!/bin/sh\necho c\n", 0755);
	make_file("d/prog", "#!/bin/sh\necho d\n", 0755);
	char rel[PATH_MAX];
	snprintf(rel, sizeof rel, "%s/prog", long_dir);
	make_file(rel, "#!/bin/sh\necho long\n", 0755);
	make_link("../c/prog", "e/link");
	make_link("../a", "f/prog");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* "T/x:T/y" from "x:y" (entries left empty stay empty). */
static void expand(const char *spec, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	for (const char *p = spec;; p++) {
		size_t len = strcspn(p, ":");
		if (len)
			n += (size_t)snprintf(out + n, cap - n, "%s/%.*s", root, (int)len, p);
		p += len;
		if (!*p)
			break;
		n += (size_t)snprintf(out + n, cap - n, ":");
	}
}

/* What execvp(3) runs for file with PATH (NULL: unset) from directory cwd: the script's output. */
static void execvp_runs(const char *path, const char *file, const char *cwd, char *out, size_t cap)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		if (chdir(cwd) != 0)
			_exit(126);
		if (path)
			setenv("PATH", path, 1);
		else
			unsetenv("PATH");
		char *argv[] = { (char *)file, NULL };
		execvp(file, argv);
		_exit(127);
	}
	close(fd[1]);
	ssize_t n = read(fd[0], out, cap - 1);
	out[n > 0 ? n : 0] = '\0';
	if (n > 0 && out[n - 1] == '\n')
		out[n - 1] = '\0';
	close(fd[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

struct search_case {
	const char *path; /* entries relative to T, ':'-separated; "" is PATH="" */
	const char *cwd;  /* relative to T */
	const char *file;
	const char *want; /* relative to T, "./..." as written, or NULL: not found */
	const char *runs; /* what execvp(3) prints (the directory it ran from) */
};

static const struct search_case cases[] = {
	/* a directory and a non-executable file are skipped, as execvp(3) skips them */
	{ "a:b:c:d", ".", "prog", "c/prog", "c" },
	{ "b:d:c", ".", "prog", "d/prog", "d" },
	/* a symlink counts as what it points at: to a directory skipped, to a program taken */
	{ "f:d", ".", "prog", "d/prog", "d" },
	{ "e", ".", "link", "e/link", "c" },
	{ "missing:d", ".", "prog", "d/prog", "d" },
	/* an empty entry is the current directory: leading, trailing, doubled, or the whole PATH */
	{ ":d", "c", "prog", "./prog", "c" },
	{ "a::d", "c", "prog", "./prog", "c" },
	{ "a:b:", "d", "prog", "./prog", "d" },
	{ "", "d", "prog", "./prog", "d" },
	{ "a:b", ".", "prog", NULL, "" },
};

/* Each case: path_search() finds what execvp(3) runs; canon_program() gives the same program. */
static void test_agrees_with_execvp_and_the_launcher(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct search_case *c = &cases[i];
		char path[4 * PATH_MAX], cwd[PATH_MAX], out[PATH_MAX], want[PATH_MAX], ran[64];
		expand(c->path, path, sizeof path);
		snprintf(cwd, sizeof cwd, "%s/%s", root, c->cwd);
		assert_int_equal(chdir(cwd), 0);
		int r = path_search(c->file, path, out, sizeof out);
		if (!c->want) {
			assert_int_equal(r, -ENOENT);
		} else {
			if (c->want[0] == '.')
				snprintf(want, sizeof want, "%s", c->want);
			else
				snprintf(want, sizeof want, "%s/%s", root, c->want);
			if (r < 0 || strcmp(out, want) != 0)
				fail_msg("case %zu: PATH=%s: found %s, expected %s", i, c->path,
					 r < 0 ? "nothing" : out, want);
			assert_int_equal(r, (int)strlen(out));
		}
		execvp_runs(path, c->file, cwd, ran, sizeof ran);
		if (strcmp(ran, c->runs) != 0)
			fail_msg("case %zu: execvp ran '%s', expected '%s'", i, ran, c->runs);

		/* the launcher's resolution: the same program, absolute */
		assert_int_equal(setenv("PATH", path, 1), 0);
		char *prog = canon_program(c->file);
		assert_non_null(prog);
		char abs[PATH_MAX];
		if (c->want)
			assert_true(canon_lexical(cwd, want, abs, sizeof abs) >= 0);
		else
			snprintf(abs, sizeof abs, "%s", c->file);
		assert_string_equal(prog, abs);
		free(prog);
	}
	assert_int_equal(chdir("/"), 0);
}

/* PATH unset: the default is confstr(3) _CS_PATH, which is what execvp(3) searches too. */
static void test_default_path(void **state)
{
	char def[256], out[PATH_MAX], want[PATH_MAX] = "", ran[64];
	(void)state;
	size_t n = confstr(_CS_PATH, def, sizeof def);
	assert_true(n > 0 && n <= sizeof def);
	/* the first default directory with an executable "sh" */
	for (char *save = NULL, *d = strtok_r(def, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(want, sizeof want, "%s/sh", d);
		if (access(want, X_OK) == 0)
			break;
		want[0] = '\0';
	}
	if (!want[0])
		skip(); /* no sh in the default path on this system */
	assert_int_equal(path_search("sh", NULL, out, sizeof out), (int)strlen(want));
	assert_string_equal(out, want);
	/* and it is the default execvp(3) uses: a script named like no system program is not found */
	execvp_runs(NULL, "airlock-no-such-program", "/", ran, sizeof ran);
	assert_string_equal(ran, "");
	assert_int_equal(path_search("airlock-no-such-program", NULL, out, sizeof out), -ENOENT);
	assert_int_equal(unsetenv("PATH"), 0);
	char *prog = canon_program("sh");
	assert_non_null(prog);
	assert_string_equal(prog, want);
	free(prog);
}

/* A candidate that does not fit the buffer is passed over; bad names are refused. */
static void test_limits(void **state)
{
	char path[2 * PATH_MAX], out[SMALL];
	(void)state;
	snprintf(path, sizeof path, "%s/%s:%s/d", root, long_dir, root);
	assert_true(strlen(root) + 1 + strlen(long_dir) + sizeof "/prog" > SMALL);
	assert_true(path_search("prog", path, out, sizeof out) > 0);
	char want[PATH_MAX];
	snprintf(want, sizeof want, "%s/d/prog", root);
	assert_string_equal(out, want);
	/* with room enough the long directory, first in PATH, is the one */
	char big[PATH_MAX];
	assert_true(path_search("prog", path, big, sizeof big) > 0);
	assert_non_null(strstr(big, long_dir));
	assert_int_equal(path_search("d/prog", path, big, sizeof big), -EINVAL);
	assert_int_equal(path_search("", path, big, sizeof big), -EINVAL);
	assert_int_equal(path_search(NULL, path, big, sizeof big), -EINVAL);
	assert_int_equal(path_search("prog", path, big, 1), -ENOENT);
}

/* path_program(): a name with '/' made absolute and normalised, not searched; a bare name found or kept. */
static void test_program(void **state)
{
	char path[PATH_MAX], out[PATH_MAX], want[PATH_MAX + 16], cwd[PATH_MAX], real[PATH_MAX];
	(void)state;
	snprintf(path, sizeof path, "%s/d", root);
	snprintf(cwd, sizeof cwd, "%s/c", root);
	assert_int_equal(chdir(cwd), 0);
	assert_non_null(realpath(root, real)); /* what getcwd(2) says of it */
	snprintf(want, sizeof want, "%s/d/prog", root);
	assert_int_equal(path_program("prog", path, out, sizeof out), (int)strlen(want));
	assert_string_equal(out, want);
	snprintf(want, sizeof want, "%s/d/prog", real);
	assert_int_equal(path_program("../d/./prog", path, out, sizeof out), (int)strlen(want));
	assert_string_equal(out, want);
	assert_int_equal(path_program("/usr//bin/../bin/x", path, out, sizeof out), 10);
	assert_string_equal(out, "/usr/bin/x");
	assert_int_equal(path_program("airlock-no-such-program", path, out, sizeof out), 23);
	assert_string_equal(out, "airlock-no-such-program");
	/* an empty PATH entry finds ./prog: named absolute, from the current directory */
	snprintf(want, sizeof want, "%s/c/prog", real);
	assert_true(path_program("prog", ":", out, sizeof out) > 0);
	assert_string_equal(out, want);
	assert_int_equal(path_program("prog", path, out, 8), -ENAMETOOLONG);
	assert_int_equal(path_program("airlock-no-such-program", path, out, 8), -ENAMETOOLONG);
	assert_int_equal(chdir("/"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agrees_with_execvp_and_the_launcher),
		cmocka_unit_test(test_default_path),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_program),
	};
	return cmocka_run_group_tests_name("PATH search", tests, setup, teardown);
}
