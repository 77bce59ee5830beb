/* bwrap.c — the bubblewrap backend (backend.h): finds bwrap, hands it sandbox.c's options through --args, and learns from --info-fd that the sandbox stands and who the agent is. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/pathsearch.h"
#include "launcher/sandbox/backend.h"

struct sandbox {
	char *bwrap;      /* owned: bwrap's absolute path */
	char **argv;      /* owned: sandbox_build()'s, bwrap's whole command line */
	char **exec_argv; /* owned array, borrowed strings: bwrap --args FD -- PROGRAM ARGS */
	char args_num[16];
	int args_fd;      /* the memfd --args reads, until spawned() */
	int info_wr;      /* the write end of --info-fd, kept open in bwrap, until spawned() */
	int info_fd;      /* the read end, -1 once bwrap closed it */
	char info[512];   /* what bwrap wrote on it: JSON with "child-pid" */
	size_t info_len;
	pid_t init;       /* bwrap's init (the pid namespace's pid 1) seen from here, 0 until known */
	pid_t agent;      /* the agent seen from here, 0 until known */
	bool hold;        /* --block-fd: held before the agent until release() */
	int block_rd;     /* --block-fd's read end, kept open in bwrap, until spawned() */
	int block_wr;     /* its write end: one byte lets the sandbox go; -1 once released */
	int block_num;    /* the read end's number, in bwrap as here */
};

static char *const empty_env[] = { NULL }; /* bwrap's own: the agent's is set with --setenv */

static void bwrap_free(struct sandbox *sb);

static struct sandbox *bwrap_probe(const char *given, char *err, size_t errlen)
{
	char found[PATH_MAX];
	struct sandbox *sb = calloc(1, sizeof *sb);
	if (!sb) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sb->args_fd = sb->info_wr = sb->info_fd = sb->block_rd = sb->block_wr = -1;
	/* not found along $PATH, it stays "bwrap", bare, and is refused below */
	sb->bwrap = given ? strdup(given)
		    : path_program("bwrap", getenv("PATH"), found, sizeof found) >= 0 ? strdup(found)
											: NULL;
	if (!sb->bwrap || !strchr(sb->bwrap, '/') || access(sb->bwrap, X_OK) != 0) {
		snprintf(err, errlen,
			 "bubblewrap (bwrap) not found%s%s: install it (apt-get install bubblewrap), "
			 "name it with --bwrap PATH, or run with --no-sandbox to give up the kernel "
			 "sandbox",
			 given ? " at " : "", given ? given : "");
		bwrap_free(sb);
		return NULL;
	}
	return sb;
}

static const char *bwrap_program(const struct sandbox *sb)
{
	return sb->bwrap;
}

static int bwrap_build(struct sandbox *sb, const struct sandbox_config *cfg,
		       struct sandbox_report *rep, char *err, size_t errlen)
{
	sb->hold = cfg->hold;
	return sandbox_build(cfg, sb->bwrap, &sb->argv, rep, err, errlen);
}

/*
 * bwrap's options go through `--args FD` (NUL-separated, from a memfd): its
 * command line, which every user can read in /proc, then shows no --setenv
 * value (an API key passed with --env).  The agent's own command follows
 * "--" on the real command line, as bwrap requires.  *rest receives the
 * index of "--" in argv.
 */
static int args_fd(char **argv, int info_fd, int block_fd, size_t *rest)
{
	int fd = memfd_create("airlock-bwrap-args", 0);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(dup(fd), "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	fprintf(f, "--info-fd%c%d%c", 0, info_fd, 0);
	/* bwrap reads one byte from it after its mounts stand, before the seccomp filter and the agent */
	if (block_fd >= 0)
		fprintf(f, "--block-fd%c%d%c", 0, block_fd, 0);
	size_t i = 1;
	for (; argv[i] && strcmp(argv[i], "--") != 0; i++)
		fprintf(f, "%s%c", argv[i], 0);
	*rest = i;
	if (fclose(f) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* bwrap --args FD -- PROGRAM ARGS: the argv to exec; NULL when out of memory. */
static char **exec_argv_of(struct sandbox *sb, size_t rest)
{
	size_t n = 0;
	while (sb->argv[n])
		n++;
	char **argv = calloc(n - rest + 4, sizeof *argv);
	if (!argv)
		return NULL;
	snprintf(sb->args_num, sizeof sb->args_num, "%d", sb->args_fd);
	argv[0] = sb->argv[0];
	argv[1] = "--args";
	argv[2] = sb->args_num;
	memcpy(argv + 3, sb->argv + rest, (n - rest) * sizeof *argv);
	return argv;
}

static int bwrap_command(struct sandbox *sb, struct sandbox_exec *ex)
{
	int info[2];
	size_t rest = 0;
	/* the write end stays open in bwrap (no close-on-exec) for its --info-fd */
	if (!sb->argv || pipe2(info, 0) != 0)
		return sb->argv ? -errno : -EINVAL;
	fcntl(info[0], F_SETFD, FD_CLOEXEC);
	sb->info_fd = info[0];
	sb->info_wr = info[1];
	if (sb->hold) {
		int block[2];
		if (pipe2(block, 0) != 0)
			return -errno;
		fcntl(block[1], F_SETFD, FD_CLOEXEC);
		sb->block_rd = sb->block_num = block[0];
		sb->block_wr = block[1];
	}
	sb->args_fd = args_fd(sb->argv, sb->info_wr, sb->block_rd, &rest);
	if (sb->args_fd < 0)
		return sb->args_fd;
	if (!(sb->exec_argv = exec_argv_of(sb, rest)))
		return -ENOMEM;
	*ex = (struct sandbox_exec){ .path = sb->bwrap, .argv = sb->exec_argv, .envp = empty_env };
	return 0;
}

static void bwrap_spawned(struct sandbox *sb)
{
	free(sb->exec_argv);
	sb->exec_argv = NULL;
	if (sb->info_wr >= 0)
		close(sb->info_wr);
	if (sb->args_fd >= 0)
		close(sb->args_fd);
	if (sb->block_rd >= 0)
		close(sb->block_rd);
	sb->info_wr = sb->args_fd = sb->block_rd = -1;
	if (sb->info_fd >= 0)
		fcntl(sb->info_fd, F_SETFL, O_NONBLOCK);
}

static int bwrap_ready_fd(const struct sandbox *sb)
{
	return sb->info_fd;
}

/*
 * The agent: the only child of the sandbox's init (bwrap's pid 1, which
 * ignores what it does not handle).  The info can come before init has
 * forked it: then, until it shows, init itself.
 */
static void find_agent(struct sandbox *sb)
{
	char path[64], buf[64];
	if (sb->init <= 0 || (sb->agent > 0 && sb->agent != sb->init))
		return;
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)sb->init, (int)sb->init);
	FILE *f = fopen(path, "re");
	long child = f && fgets(buf, sizeof buf, f) ? strtol(buf, NULL, 10) : 0;
	if (f)
		fclose(f);
	sb->agent = child > 0 ? (pid_t)child : sb->init;
}

/* Reads bwrap's info JSON, which it writes once the sandbox stands; once complete, finds the agent. */
static bool bwrap_ready(struct sandbox *sb)
{
	if (sb->info_fd < 0)
		return sb->info_len > 0;
	ssize_t n = read(sb->info_fd, sb->info + sb->info_len, sizeof sb->info - 1 - sb->info_len);
	if (n > 0) {
		sb->info_len += (size_t)n;
		return true;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return sb->info_len > 0;
	close(sb->info_fd);
	sb->info_fd = -1;
	sb->info[sb->info_len] = '\0';
	const char *p = strstr(sb->info, "\"child-pid\"");
	sb->init = p ? (pid_t)strtol(p + strcspn(p, "0123456789"), NULL, 10) : 0;
	find_agent(sb);
	return sb->info_len > 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * True when init sits in bwrap's read of one byte from the block fd (the
 * syscall number and first arguments in /proc/PID/syscall, proc(5)): its
 * mounts then stand, and nothing of the agent's has run.
 */
static bool init_blocked(const struct sandbox *sb)
{
	char path[64], line[256], want[64];
	snprintf(path, sizeof path, "/proc/%d/syscall", (int)sb->init);
	FILE *f = fopen(path, "re");
	bool got = f && fgets(line, sizeof line, f);
	if (f)
		fclose(f);
	if (!got)
		return false;
	int n = snprintf(want, sizeof want, "%ld 0x%x ", (long)SYS_read, (unsigned)sb->block_num);
	char *count = strchr(line + n, ' ');
	return strncmp(line, want, (size_t)n) == 0 && count && strncmp(count, " 0x1 ", 5) == 0;
}

static pid_t bwrap_held(struct sandbox *sb, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	if (!sb->hold || sb->block_wr < 0)
		return -EINVAL;
	while (sb->info_fd >= 0) { /* the info, whole: its "child-pid" is init */
		struct pollfd p = { .fd = sb->info_fd, .events = POLLIN };
		long long left = end - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		bwrap_ready(sb);
	}
	if (sb->init <= 0)
		return -ECHILD;
	while (!init_blocked(sb)) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d", (int)sb->init);
		if (access(path, F_OK) != 0)
			return -ECHILD;
		if (now_ms() >= end)
			return -ETIMEDOUT;
		usleep(500);
	}
	return sb->init;
}

static int bwrap_release(struct sandbox *sb)
{
	if (sb->block_wr < 0)
		return -EINVAL;
	ssize_t n = write(sb->block_wr, "g", 1);
	int e = errno;
	close(sb->block_wr);
	sb->block_wr = -1;
	return n == 1 ? 0 : -e;
}

static pid_t bwrap_agent(struct sandbox *sb)
{
	find_agent(sb);
	return sb->agent;
}

static void bwrap_free(struct sandbox *sb)
{
	if (!sb)
		return;
	bwrap_spawned(sb);
	if (sb->info_fd >= 0)
		close(sb->info_fd);
	if (sb->block_wr >= 0)
		close(sb->block_wr);
	sandbox_argv_free(sb->argv);
	free(sb->bwrap);
	free(sb);
}

const struct sandbox_backend sandbox_bubblewrap = {
	.name = "bubblewrap",
	.probe = bwrap_probe,
	.program = bwrap_program,
	.build = bwrap_build,
	.command = bwrap_command,
	.spawned = bwrap_spawned,
	.held = bwrap_held,
	.release = bwrap_release,
	.ready_fd = bwrap_ready_fd,
	.ready = bwrap_ready,
	.agent = bwrap_agent,
	.free = bwrap_free,
};
