/* fortify.c — shim test program built with -D_FORTIFY_SOURCE=2 -O2: open (via __open_2), fopen64, execveat, fexecve, errno. */
/*
 * Usage (one operation per run; prints one line, exit 0 unless the usage is wrong):
 *   fortify open PATH FLAGS        FLAGS: r (O_RDONLY), w (O_WRONLY|O_TRUNC), rw (O_RDWR)
 *                                  -> "ok <first line>" | "ok" | "err ENAME"
 *   fortify fopen64 PATH MODE      -> "ok <first line>" | "ok" | "err ENAME"
 *   fortify execveat PATH ARG...   -> runs PATH (execveat(AT_FDCWD, PATH, ...)) | "err ENAME"
 *   fortify execveat-dirfd DIR NAME ARG...  execveat(open(DIR), NAME, ...) | "err ENAME"
 *   fortify fexecve PATH ARG...    -> fexecve(open(PATH, O_RDONLY), ...) | "err ENAME"
 *   fortify errno PATH             -> "errno kept" | "errno changed to N" | "err ENAME"
 *                                  (errno = 1234 before an open of PATH that succeeds)
 *   fortify errno-fopen PATH       the same around fopen64
 *   fortify spawn-chdir DIR PROG ARG...  posix_spawn of PROG (relative) with a
 *                                  posix_spawn_file_actions_addchdir_np(DIR) action,
 *                                  waits -> "exit N" | "err ENAME"
 *
 * The open flags come from argv so the compiler cannot prove them constant:
 * with _FORTIFY_SOURCE, open(path, flags) with non-constant flags and no mode
 * is compiled as a call to __open_2 (glibc's <bits/fcntl2.h>).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *ename(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case ENOEXEC: return "ENOEXEC";
	case EBADF: return "EBADF";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	default: {
		static char buf[32];
		snprintf(buf, sizeof buf, "E#%d", e);
		return buf;
	}
	}
}

static int fail(int e)
{
	printf("err %s\n", ename(e));
	return 0;
}

static int parse_flags(const char *s)
{
	if (strcmp(s, "w") == 0)
		return O_WRONLY | O_TRUNC;
	if (strcmp(s, "rw") == 0)
		return O_RDWR;
	return O_RDONLY;
}

static void print_first_line(int fd)
{
	char buf[256];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	printf(n > 0 ? "ok %s\n" : "ok\n", buf);
}

static int do_open(const char *path, const char *flags)
{
	int fd = open(path, parse_flags(flags)); /* __open_2 under fortify */
	if (fd < 0)
		return fail(errno);
	if ((parse_flags(flags) & O_ACCMODE) != O_WRONLY)
		print_first_line(fd);
	else
		printf("ok\n");
	close(fd);
	return 0;
}

static int do_fopen64(const char *path, const char *mode)
{
	FILE *f = fopen64(path, mode);
	char line[256];
	if (!f)
		return fail(errno);
	if (mode[0] == 'r' && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		printf("ok %s\n", line);
	} else {
		printf("ok\n");
	}
	fclose(f);
	return 0;
}

static int do_execveat(int dirfd, const char *path, char **argv)
{
	execveat(dirfd, path, argv, environ, 0);
	return fail(errno);
}

static int do_fexecve(const char *path, char **argv)
{
	int fd = open(path, O_RDONLY); /* no O_CLOEXEC: a script needs /dev/fd/N to stay open */
	if (fd < 0)
		return fail(errno);
	fexecve(fd, argv, environ);
	return fail(errno);
}

static int do_errno(const char *path, int use_fopen)
{
	int fd = -1;
	FILE *f = NULL;
	errno = 1234;
	if (use_fopen)
		f = fopen64(path, "r");
	else
		fd = open(path, parse_flags("r"));
	int e = errno;
	if (use_fopen ? f == NULL : fd < 0)
		return fail(e);
	if (e == 1234)
		printf("errno kept\n");
	else
		printf("errno changed to %d\n", e);
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int do_spawn_chdir(const char *dir, char **argv)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, dir);
	int r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		return fail(r);
	if (waitpid(pid, &st, 0) < 0)
		return fail(errno);
	printf("exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc >= 4 && strcmp(argv[1], "open") == 0)
		return do_open(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "fopen64") == 0)
		return do_fopen64(argv[2], argv[3]);
	if (argc >= 3 && strcmp(argv[1], "execveat") == 0)
		return do_execveat(AT_FDCWD, argv[2], argv + 2);
	if (argc >= 4 && strcmp(argv[1], "execveat-dirfd") == 0) {
		int dfd = open(argv[2], O_RDONLY | O_DIRECTORY);
		if (dfd < 0)
			return fail(errno);
		return do_execveat(dfd, argv[3], argv + 3);
	}
	if (argc >= 3 && strcmp(argv[1], "fexecve") == 0)
		return do_fexecve(argv[2], argv + 2);
	if (argc >= 3 && strcmp(argv[1], "errno") == 0)
		return do_errno(argv[2], 0);
	if (argc >= 3 && strcmp(argv[1], "errno-fopen") == 0)
		return do_errno(argv[2], 1);
	if (argc >= 4 && strcmp(argv[1], "spawn-chdir") == 0)
		return do_spawn_chdir(argv[2], argv + 3);
	fprintf(stderr, "usage: fortify open|fopen64|execveat|execveat-dirfd|fexecve|errno|errno-fopen|spawn-chdir ...\n");
	return 2;
}
