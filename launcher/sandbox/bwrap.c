/* bwrap.c — the bubblewrap backend (backend.h): finds bwrap, hands it sandbox.c's options through --args, and learns from --info-fd that the sandbox stands and who the agent is. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
	sb->args_fd = sb->info_wr = sb->info_fd = -1;
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
	return sandbox_build(cfg, sb->bwrap, &sb->argv, rep, err, errlen);
}

/*
 * bwrap's options go through `--args FD` (NUL-separated, from a memfd): its
 * command line, which every user can read in /proc, then shows no --setenv
 * value (an API key passed with --env).  The agent's own command follows
 * "--" on the real command line, as bwrap requires.  *rest receives the
 * index of "--" in argv.
 */
static int args_fd(char **argv, int info_fd, size_t *rest)
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
	sb->args_fd = args_fd(sb->argv, sb->info_wr, &rest);
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
	sb->info_wr = sb->args_fd = -1;
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
	.ready_fd = bwrap_ready_fd,
	.ready = bwrap_ready,
	.agent = bwrap_agent,
	.free = bwrap_free,
};
