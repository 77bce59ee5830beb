/* test_canon.c — unit tests for core/canon.c on a real tree in a mkdtemp directory, cross-checked with realpath(3) and open(2). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/canon.h"

/* The test tree's canonical absolute path (realpath of the mkdtemp result). */
static char root[PATH_MAX];
static char parent_of_root[PATH_MAX];

/* ---- the tree ---------------------------------------------------------------- */

static void make_file(const char *rel)
{
	int fd = open(rel, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
}

static void make_link(const char *target, const char *rel)
{
	assert_int_equal(symlink(target, rel), 0);
}

/* A chain l0 -> l1 -> ... -> l<n-1> -> .env of n links, names "<prefix><i>". */
static void make_chain(const char *prefix, int n)
{
	char name[64], target[64];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s%d", prefix, i);
		if (i + 1 < n)
			snprintf(target, sizeof target, "%s%d", prefix, i + 1);
		else
			snprintf(target, sizeof target, ".env");
		make_link(target, name);
	}
}

static int tree_setup(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/test_canon.XXXXXX";
	if (!mkdtemp(tmpl) || !realpath(tmpl, root) || chdir(root) != 0)
		return -1;
	snprintf(parent_of_root, sizeof parent_of_root, "%s", root);
	*strrchr(parent_of_root, '/') = '\0';
	if (!parent_of_root[0])
		strcpy(parent_of_root, "/");
	canon_invalidate(); /* the cwd changed */
	mkdir("a", 0700);
	mkdir("a/b", 0700);
	mkdir("x", 0700);
	mkdir("inv", 0700);
	mkdir("inv/d", 0700);
	mkdir("inv/other", 0700);
	make_file(".env");
	make_file("a/b/f");
	make_file("x/.env");
	make_file("inv/d/f");
	make_link(".env", "lf");
	char abs[PATH_MAX + 8];
	snprintf(abs, sizeof abs, "%s/.env", root);
	make_link(abs, "labs");
	make_link("a/b", "ld");
	make_link("../x", "a/lup");
	make_link(".", "self");
	make_link("chain2", "chain1");
	make_link("chain3", "chain2");
	make_link(".env", "chain3");
	make_link("loop2", "loop1");
	make_link("loop1", "loop2");
	make_link("newfile", "dangling");
	make_link("/", "lroot");
	make_link("lroot/../..", "lup2"); /* ".." above "/" stays at "/" */
	make_chain("c40_", 40);
	make_chain("c41_", 41);
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

static int tree_teardown(void **state)
{
	(void)state;
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* Replaces the first "%T" with root and a leading "%P" with root's parent. */
static void expand(const char *in, char *out, size_t n)
{
	const char *t = strstr(in, "%T");
	if (t)
		snprintf(out, n, "%.*s%s%s", (int)(t - in), in, root, t + 2);
	else if (strncmp(in, "%P", 2) == 0)
		snprintf(out, n, "%s%s", parent_of_root, in + 2);
	else
		snprintf(out, n, "%s", in);
}

/* ---- the table --------------------------------------------------------------- */

struct row {
	const char *path;   /* input, "%T" = root; resolved relative to the cwd (root) */
	unsigned flags;
	const char *expect; /* canonical result, "%T" = root; NULL when an error is expected */
	int err;            /* expected negative errno when expect is NULL */
	int line;
};

#define OK(p, f, e) { p, f, e, 0, __LINE__ }
#define ERR(p, f, e) { p, f, NULL, e, __LINE__ }
#define NF CANON_NOFOLLOW

static const struct row rows[] = {
	/* the spellings of the issue */
	OK(".env", 0, "%T/.env"),
	OK("./a/../.env", 0, "%T/.env"),
	OK("//%T/x/.env", 0, "%T/x/.env"),
	OK("%T//x//.env", 0, "%T/x/.env"),
	OK("a/./b/../../.env", 0, "%T/.env"),
	OK("%T/.env", 0, "%T/.env"),
	/* ".", "..", "/" */
	OK(".", 0, "%T"),
	OK("./", 0, "%T"),
	OK("..", 0, "%P"),
	OK("a/..", 0, "%T"),
	OK("/", 0, "/"),
	OK("///", 0, "/"),
	OK("/..", 0, "/"),
	OK("/../../", 0, "/"),
	OK("/./.././", 0, "/"),
	/* trailing slashes */
	OK("a/b/", 0, "%T/a/b"),
	OK("a/b//", NF, "%T/a/b"),
	OK("ld/", NF, "%T/a/b"), /* a trailing slash follows even with NOFOLLOW */
	OK("ld", NF, "%T/ld"),
	/* symlinks */
	OK("lf", 0, "%T/.env"),
	OK("lf", NF, "%T/lf"),
	OK("labs", 0, "%T/.env"),
	OK("ld/f", 0, "%T/a/b/f"),
	OK("ld/f", NF, "%T/a/b/f"),
	OK("ld/..", 0, "%T/a"),           /* the target's parent, not root */
	OK("ld/../../.env", 0, "%T/.env"),
	OK("a/lup/.env", 0, "%T/x/.env"), /* relative target: from the link's directory */
	OK("self/self/self/.env", 0, "%T/.env"),
	OK("chain1", 0, "%T/.env"),
	OK("chain1", NF, "%T/chain1"),
	OK("lroot", 0, "/"),
	OK("lup2", 0, "/"),
	OK("c40_0", 0, "%T/.env"),
	ERR("c41_0", 0, -ELOOP),
	OK("c41_0", NF, "%T/c41_0"),
	ERR("loop1", 0, -ELOOP),
	OK("loop1", NF, "%T/loop1"),
	ERR("loop1/x", NF, -ELOOP),
	OK("dangling", 0, "%T/newfile"), /* O_CREAT creates the target */
	OK("dangling", NF, "%T/dangling"),
	/* /proc and /dev/fd spellings that need no fd */
	OK("/proc/self/root%T/lf", 0, "%T/.env"),
	OK("/proc/self/root/proc/self/root%T/ld/..", 0, "%T/a"),
	OK("/proc/self/cwd/lf", 0, "%T/.env"),
	OK("/proc/self/cwd/./a/../.env", 0, "%T/.env"),
	OK("/proc/thread-self/cwd/x/.env", 0, "%T/x/.env"),
	/* names that do not exist (yet) */
	OK("new", 0, "%T/new"),
	OK("./.newenv", NF, "%T/.newenv"),
	OK("nonexist/sub/file", 0, "%T/nonexist/sub/file"),
	OK("nonexist/../.env", 0, "%T/.env"),
	OK("nonexist/./x/../y/", 0, "%T/nonexist/y"),
	OK("ld/new", 0, "%T/a/b/new"),
	OK("a/b/f/x", 0, "%T/a/b/f/x"), /* through a regular file: the kernel says ENOTDIR */
	/* empty path */
	ERR("", 0, -ENOENT),
	OK("", CANON_EMPTY_PATH, "%T"),
};

static void check_row(const struct row *r, unsigned extra)
{
	char in[PATH_MAX + 16], want[PATH_MAX + 16], got[PATH_MAX];
	expand(r->path, in, sizeof in);
	errno = 4242;
	int n = canon_path(AT_FDCWD, in, r->flags | extra, got, sizeof got);
	if (errno != 4242)
		fail_msg("line %d: errno changed to %d", r->line, errno);
	if (!r->expect) {
		if (n != r->err)
			fail_msg("line %d: %s: got %d (%s), want %d", r->line, in, n, n >= 0 ? got : "", r->err);
		return;
	}
	expand(r->expect, want, sizeof want);
	if (n < 0)
		fail_msg("line %d: %s: error %d, want %s", r->line, in, n, want);
	if (strcmp(got, want) != 0 || (size_t)n != strlen(want))
		fail_msg("line %d: %s: got %s (%d), want %s", r->line, in, got, n, want);
}

/* Every row uncached, then cached twice (fill, hit). */
static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		check_row(&rows[i], CANON_NOCACHE);
		check_row(&rows[i], 0);
		check_row(&rows[i], 0);
	}
}

/* Where realpath(3) resolves a followed row, it must agree with the table. */
static void test_table_vs_realpath(void **state)
{
	(void)state;
	int compared = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		char in[PATH_MAX + 16], rp[PATH_MAX], got[PATH_MAX];
		if (r->flags & NF || !r->path[0])
			continue;
		expand(r->path, in, sizeof in);
		if (!realpath(in, rp))
			continue;
		int n = canon_path(AT_FDCWD, in, r->flags, got, sizeof got);
		if (n < 0 || strcmp(got, rp) != 0)
			fail_msg("line %d: %s: canon %s (%d), realpath %s", r->line, in, got, n, rp);
		compared++;
	}
	assert_true(compared >= 30);
}

/* The kernel's own verdict on the 40-link limit: open(2) agrees with canon_path. */
static void test_eloop_matches_kernel(void **state)
{
	(void)state;
	char got[PATH_MAX];
	int fd = open("c40_0", O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	assert_true(canon_path(AT_FDCWD, "c40_0", 0, got, sizeof got) > 0);
	errno = 0;
	assert_int_equal(open("c41_0", O_RDONLY), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(canon_path(AT_FDCWD, "c41_0", 0, got, sizeof got), -ELOOP);
	/* 39 links through the directory part, then 2 more in the final: still counted together */
	assert_int_equal(canon_path(AT_FDCWD, "c40_1", 0, got, sizeof got) > 0, 1);
}

/* ---- fds ---------------------------------------------------------------------- */

static void expect_path(int dirfd, const char *path_t, unsigned flags, const char *want_t)
{
	char want[PATH_MAX + 16], got[PATH_MAX], path[PATH_MAX + 16];
	expand(want_t, want, sizeof want);
	expand(path_t, path, sizeof path);
	for (int pass = 0; pass < 3; pass++) {
		int n = canon_path(dirfd, path, flags | (pass == 0 ? CANON_NOCACHE : 0), got, sizeof got);
		if (n < 0 || strcmp(got, want) != 0)
			fail_msg("(%d, %s, %#x): got %s (%d), want %s", dirfd, path, flags, n < 0 ? "" : got, n, want);
	}
}

static void expect_err(int dirfd, const char *path, unsigned flags, int err)
{
	char got[PATH_MAX];
	for (int pass = 0; pass < 3; pass++) {
		int n = canon_path(dirfd, path, flags | (pass == 0 ? CANON_NOCACHE : 0), got, sizeof got);
		if (n != err)
			fail_msg("(%d, %s, %#x): got %d (%s), want %d", dirfd, path, flags, n, n >= 0 ? got : "", err);
	}
}

static void test_dirfd(void **state)
{
	(void)state;
	int dfd = open("a", O_RDONLY | O_DIRECTORY);
	int ffd = open(".env", O_RDONLY);
	assert_true(dfd >= 0 && ffd >= 0);
	expect_path(dfd, "b/f", 0, "%T/a/b/f");
	expect_path(dfd, "../.env", 0, "%T/.env");
	expect_path(dfd, "../lf", 0, "%T/.env");
	expect_path(dfd, "../lf", NF, "%T/lf");
	expect_path(dfd, "lup/.env", 0, "%T/x/.env");
	expect_path(dfd, "", CANON_EMPTY_PATH, "%T/a");
	expect_path(dfd, ".", 0, "%T/a");
	expect_path(dfd, "new", 0, "%T/a/new");
	expect_path(dfd, "%T/x/.env", 0, "%T/x/.env"); /* absolute: dirfd ignored */
	expect_path(ffd, "", CANON_EMPTY_PATH, "%T/.env");
	expect_path(ffd, "x", 0, "%T/.env/x"); /* the kernel says ENOTDIR */
	expect_path(AT_FDCWD, "", CANON_EMPTY_PATH, "%T");
	expect_err(dfd, "", 0, -ENOENT);
	expect_err(9999, "x", 0, -EBADF);
	expect_err(-5, "x", 0, -EBADF);
	expect_path(9999, "/abs", 0, "/abs"); /* absolute: dirfd not even looked at */
	close(dfd);
	close(ffd);
}

static void test_proc_fd(void **state)
{
	(void)state;
	char in[128], pidpath[128];
	int dfd = open("a", O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	snprintf(in, sizeof in, "/proc/self/fd/%d/b/f", dfd);
	expect_path(AT_FDCWD, in, 0, "%T/a/b/f");
	snprintf(in, sizeof in, "/proc/self/fd/%d/../lf", dfd);
	expect_path(AT_FDCWD, in, 0, "%T/.env");
	snprintf(in, sizeof in, "/dev/fd/%d", dfd);
	expect_path(AT_FDCWD, in, 0, "%T/a");
	snprintf(in, sizeof in, "/proc/%d/fd/%d/b", (int)getpid(), dfd);
	expect_path(AT_FDCWD, in, 0, "%T/a/b");
	snprintf(pidpath, sizeof pidpath, "/proc/%d/cwd/.env", (int)getpid());
	expect_path(AT_FDCWD, pidpath, 0, "%T/.env");
	snprintf(in, sizeof in, "/proc/thread-self/fd/%d", dfd);
	expect_path(AT_FDCWD, in, 0, "%T/a");
	close(dfd);
}

/* The /dev/fd/N spelling with NOFOLLOW names the magic link itself: /proc/<pid>/fd/N. */
static void test_proc_fd_nofollow(void **state)
{
	(void)state;
	char in[64], want[64];
	int dfd = open("a", O_RDONLY | O_DIRECTORY);
	snprintf(in, sizeof in, "/dev/fd/%d", dfd);
	snprintf(want, sizeof want, "/proc/%d/fd/%d", (int)getpid(), dfd);
	expect_path(AT_FDCWD, in, NF, want);
	close(dfd);
}

static void test_proc_not_a_path(void **state)
{
	(void)state;
	char in[64];
	int p[2];
	assert_int_equal(pipe(p), 0);
	snprintf(in, sizeof in, "/proc/self/fd/%d", p[0]);
	expect_err(AT_FDCWD, in, 0, -ENXIO);
	snprintf(in, sizeof in, "/dev/fd/%d", p[1]);
	expect_err(AT_FDCWD, in, 0, -ENXIO);
	expect_err(p[0], "x", 0, -ENXIO); /* a pipe as dirfd */
	expect_err(AT_FDCWD, "/proc/self/ns/net", 0, -ENXIO);
	close(p[0]);
	close(p[1]);

	/* a deleted file: its fd link reads "/path (deleted)" */
	int fd = open("doomed", O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(unlink("doomed"), 0);
	snprintf(in, sizeof in, "/proc/self/fd/%d", fd);
	expect_err(AT_FDCWD, in, 0, -ESTALE);
	expect_err(fd, "", CANON_EMPTY_PATH, -ESTALE);
	close(fd);

	/* ...but a live file really named "... (deleted)" is a path */
	fd = open("x (deleted)", O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	snprintf(in, sizeof in, "/proc/self/fd/%d", fd);
	expect_path(AT_FDCWD, in, 0, "%T/x (deleted)");
	close(fd);
	unlink("x (deleted)");
}

/* /proc/self is never cached: a forked child must see its own pid. */
static void test_fork_proc_self(void **state)
{
	(void)state;
	char got[PATH_MAX], want[64];
	snprintf(want, sizeof want, "/proc/%d", (int)getpid());
	assert_int_equal(canon_path(AT_FDCWD, "/proc/self", 0, got, sizeof got), (int)strlen(want));
	assert_string_equal(got, want);
	assert_true(canon_path(AT_FDCWD, "/proc/self/cwd/lf", 0, got, sizeof got) > 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		snprintf(want, sizeof want, "/proc/%d", (int)getpid());
		int n = canon_path(AT_FDCWD, "/proc/self", 0, got, sizeof got);
		_exit(n == (int)strlen(want) && strcmp(got, want) == 0 ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- limits ------------------------------------------------------------------- */

static void test_nametoolong(void **state)
{
	(void)state;
	static char big[PATH_MAX + 2];
	char got[PATH_MAX], small[8];
	memset(big, 'a', PATH_MAX);
	big[PATH_MAX] = '\0';
	expect_err(AT_FDCWD, big, 0, -ENAMETOOLONG);
	big[PATH_MAX - 1] = '\0'; /* 4095 bytes: a single component over NAME_MAX */
	expect_err(AT_FDCWD, big, 0, -ENAMETOOLONG);
	memset(big, 'b', NAME_MAX + 1);
	big[NAME_MAX + 1] = '\0';
	expect_err(AT_FDCWD, big, 0, -ENAMETOOLONG);
	/* the result does not fit out */
	assert_int_equal(canon_path(AT_FDCWD, "lf", 0, small, sizeof small), -ENAMETOOLONG);
	assert_int_equal(canon_path(AT_FDCWD, "lf", CANON_NOCACHE, small, sizeof small), -ENAMETOOLONG);
	assert_int_equal(canon_path(AT_FDCWD, "/", 0, small, 1), -ENAMETOOLONG);
	assert_int_equal(canon_path(AT_FDCWD, "/", 0, small, 2), 1);
	/* a long lexical path still resolves when it fits */
	size_t n = 0;
	while (n + 3 < PATH_MAX - 64) {
		memcpy(big + n, "a/..", 4);
		big[n + 4] = '/';
		n += 5;
	}
	strcpy(big + n, ".env");
	expect_path(AT_FDCWD, big, 0, "%T/.env");
	assert_int_equal(canon_path(AT_FDCWD, NULL, 0, got, sizeof got), -EFAULT);
	assert_int_equal(canon_path(AT_FDCWD, "x", 0, NULL, 10), -EFAULT);
}

/* ---- the cache ---------------------------------------------------------------- */

static void resolve(const char *path, char *out)
{
	assert_true(canon_path(AT_FDCWD, path, 0, out, PATH_MAX) > 0);
}

static void test_invalidation(void **state)
{
	(void)state;
	char got[PATH_MAX], want_old[PATH_MAX + 16], want_new[PATH_MAX + 16];
	expand("%T/inv/d/f", want_old, sizeof want_old);
	expand("%T/inv/other/f", want_new, sizeof want_new);
	resolve("inv/d/f", got);
	assert_string_equal(got, want_old);
	resolve("inv/d/g", got); /* the directory "inv/d" is cached too */

	/* replace the directory with a symlink behind the cache's back */
	assert_int_equal(rename("inv/d", "inv/gone"), 0);
	assert_int_equal(symlink("other", "inv/d"), 0);

	/* without canon_invalidate() (another process did it): the stale answer, until the TTL */
	resolve("inv/d/f", got);
	if (strcmp(got, want_old) != 0) {
		/* the coarse clock ticked between the two calls: the entry expired */
		assert_string_equal(got, want_new);
	}
	canon_invalidate();
	resolve("inv/d/f", got);
	assert_string_equal(got, want_new);
	resolve("inv/d/g", got);
	expand("%T/inv/other/g", want_old, sizeof want_old);
	assert_string_equal(got, want_old);

	/* back, then wait out the TTL with no invalidation */
	assert_int_equal(unlink("inv/d"), 0);
	assert_int_equal(rename("inv/gone", "inv/d"), 0);
	struct timespec ts = { 0, 3 * CANON_CACHE_TTL_NS + 12000000L };
	nanosleep(&ts, NULL);
	resolve("inv/d/f", got);
	expand("%T/inv/d/f", want_old, sizeof want_old);
	assert_string_equal(got, want_old);
}

static void test_cwd_cache(void **state)
{
	(void)state;
	char got[PATH_MAX];
	resolve("b/f", got); /* cached relative to root */
	assert_int_equal(chdir("a"), 0);
	canon_invalidate(); /* what the shim's chdir hook does */
	resolve("b/f", got);
	char want[PATH_MAX + 16];
	expand("%T/a/b/f", want, sizeof want);
	assert_string_equal(got, want);
	resolve("..", got);
	assert_string_equal(got, root);
	assert_int_equal(chdir(root), 0);
	canon_invalidate();
	resolve(".", got);
	assert_string_equal(got, root);
}

/* A shared generation counter: a bump through the pointer invalidates this process. */
static void test_shared_generation(void **state)
{
	(void)state;
	static unsigned long counter;
	char got[PATH_MAX];
	canon_share_generation(&counter);
	resolve("inv/d/f", got);
	assert_int_equal(rename("inv/d", "inv/gone"), 0);
	assert_int_equal(symlink("other", "inv/d"), 0);
	__atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST); /* "another process" */
	resolve("inv/d/f", got);
	char want[PATH_MAX + 16];
	expand("%T/inv/other/f", want, sizeof want);
	assert_string_equal(got, want);
	canon_invalidate();
	assert_int_equal(counter, 2);
	canon_share_generation(NULL);
	assert_int_equal(unlink("inv/d"), 0);
	assert_int_equal(rename("inv/gone", "inv/d"), 0);
	canon_invalidate();
}

/* ---- threads and signals ------------------------------------------------------ */

#define THREADS 8
#define PER_THREAD 10000

struct thread_arg {
	int id;
	int bad;
	int first_line;          /* table line of the first mismatch */
	char first_got[PATH_MAX + 16];
};

static void thread_mismatch(struct thread_arg *a, const struct row *r, int n, const char *got)
{
	if (!a->bad++) {
		a->first_line = r->line;
		snprintf(a->first_got, sizeof a->first_got, "%d %s", n, n >= 0 ? got : "");
	}
}

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	size_t nrows = sizeof rows / sizeof rows[0];
	char in[PATH_MAX + 16], want[PATH_MAX + 16], got[PATH_MAX];
	for (int i = 0; i < PER_THREAD; i++) {
		const struct row *r = &rows[(size_t)(i * 7 + a->id * 13) % nrows];
		expand(r->path, in, sizeof in);
		int n = canon_path(AT_FDCWD, in, r->flags, got, sizeof got);
		if (!r->expect) {
			if (n != r->err)
				thread_mismatch(a, r, n, got);
			continue;
		}
		expand(r->expect, want, sizeof want);
		if (n < 0 || strcmp(got, want) != 0)
			thread_mismatch(a, r, n, got);
		if (a->id == 0 && i % 500 == 0)
			canon_invalidate();
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	pthread_t t[THREADS];
	static struct thread_arg a[THREADS];
	for (int i = 0; i < THREADS; i++) {
		a[i] = (struct thread_arg){ .id = i };
		assert_int_equal(pthread_create(&t[i], NULL, thread_main, &a[i]), 0);
	}
	int bad = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		if (a[i].bad)
			print_error("thread %d: %d wrong, first: line %d got %s\n", i, a[i].bad,
				    a[i].first_line, a[i].first_got);
		bad += a[i].bad;
	}
	assert_int_equal(bad, 0);
}

static volatile sig_atomic_t handler_bad, handler_runs;

static void on_alarm(int sig)
{
	(void)sig;
	char got[PATH_MAX], want[PATH_MAX + 16];
	int saved = errno;
	expand("%T/a/b/f", want, sizeof want);
	int n = canon_path(AT_FDCWD, "ld/f", 0, got, sizeof got);
	handler_bad += n < 0 || strcmp(got, want) != 0;
	handler_runs++;
	errno = saved;
}

/* A signal handler resolving while the interrupted code is inside the cache. */
static void test_signal_reentry(void **state)
{
	(void)state;
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	setitimer(ITIMER_REAL, &it, NULL);
	char got[PATH_MAX], want[PATH_MAX + 16];
	expand("%T/x/.env", want, sizeof want);
	int bad = 0;
	for (int i = 0; i < 200000 && handler_runs < 200; i++) {
		int n = canon_path(AT_FDCWD, i % 2 ? "a/lup/.env" : "x/.env", 0, got, sizeof got);
		bad += n < 0 || strcmp(got, want) != 0;
		if (i % 1000 == 0)
			canon_invalidate();
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	assert_int_equal(bad, 0);
	assert_int_equal(handler_bad, 0);
	assert_true(handler_runs > 0);
}

static void test_errno_preserved(void **state)
{
	(void)state;
	char got[PATH_MAX];
	const char *paths[] = { ".env", "loop1", "nonexist/x", "", "/proc/self/fd/9999", "lf" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		for (unsigned f = 0; f < 8; f++) {
			errno = EDOM;
			canon_path(AT_FDCWD, paths[i], f, got, sizeof got);
			assert_int_equal(errno, EDOM);
		}
	}
	errno = EDOM;
	canon_path(12345, "x", 0, got, sizeof got);
	assert_int_equal(errno, EDOM);
}

/* ---- canon_lexical ------------------------------------------------------------ */

struct lex_row {
	const char *base, *path, *expect;
	int err;
};

static void test_lexical(void **state)
{
	(void)state;
	static const struct lex_row lrows[] = {
		{ "/a/b", "../c", "/a/c", 0 },
		{ "/a/b", "./c/./d/", "/a/b/c/d", 0 },
		{ "/", "..", "/", 0 },
		{ "/a", "../../..", "/", 0 },
		{ "//a//b/", "c", "/a/b/c", 0 },
		{ "/x", "/abs//y/./", "/abs/y", 0 },
		{ NULL, "/abs/../z", "/z", 0 },
		{ "/a/b", "", "/a/b", 0 },
		{ "/a/b", ".", "/a/b", 0 },
		{ "/", "", "/", 0 },
		{ "/a/b/c", "../../..", "/", 0 },
		{ "/a", "..b/c..", "/a/..b/c..", 0 },
		{ NULL, "rel", NULL, -EINVAL },
		{ "rel", "x", NULL, -EINVAL },
	};
	char out[64];
	for (size_t i = 0; i < sizeof lrows / sizeof lrows[0]; i++) {
		int n = canon_lexical(lrows[i].base, lrows[i].path, out, sizeof out);
		if (lrows[i].expect) {
			if (n != (int)strlen(lrows[i].expect) || strcmp(out, lrows[i].expect) != 0)
				fail_msg("row %zu: got %s (%d), want %s", i, n >= 0 ? out : "", n, lrows[i].expect);
		} else {
			assert_int_equal(n, lrows[i].err);
		}
	}
	assert_int_equal(canon_lexical("/abcdef", "ghij", out, 8), -ENAMETOOLONG);
	/* out holds the joined path before ".." applies */
	assert_int_equal(canon_lexical("/abcdef", "..", out, 2), -ENAMETOOLONG);
	assert_int_equal(canon_lexical("/abcdef", "..", out, 8), 1);
	assert_int_equal(canon_lexical("/", NULL, out, 8), -EFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_vs_realpath),
		cmocka_unit_test(test_eloop_matches_kernel),
		cmocka_unit_test(test_dirfd),
		cmocka_unit_test(test_proc_fd),
		cmocka_unit_test(test_proc_fd_nofollow),
		cmocka_unit_test(test_proc_not_a_path),
		cmocka_unit_test(test_fork_proc_self),
		cmocka_unit_test(test_nametoolong),
		cmocka_unit_test(test_invalidation),
		cmocka_unit_test(test_cwd_cache),
		cmocka_unit_test(test_shared_generation),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_signal_reentry),
		cmocka_unit_test(test_errno_preserved),
		cmocka_unit_test(test_lexical),
	};
	return cmocka_run_group_tests(tests, tree_setup, tree_teardown);
}
