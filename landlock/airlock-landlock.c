/*
 * airlock-landlock.c — the Landlock layer: a small static program bubblewrap
 * runs inside the sandbox just before the agent,
 *
 *     airlock-landlock [--abi N] [--notify FD] [-r DIR]... [-w DIR]... -- PROGRAM [ARG...]
 *
 * It restricts itself with a Landlock ruleset (read and execute beneath each
 * -r DIR, read, execute and write beneath each -w DIR, nothing else), then
 * execve(2)s PROGRAM, which inherits the ruleset with every process it starts.
 * The launcher passes "-r /" and, as -w, the destinations of the sandbox's
 * read-write mounts (sandbox.c derives them from the same setup operations
 * that mount them), so the ruleset allows what the mounts allow and catches
 * what a mount mistake would let through.  It must run after bubblewrap
 * has built the mounts: a Landlock domain forbids changing them.
 *
 * Static and free of libc's Landlock wrappers (glibc has none): the
 * syscalls are made with syscall(2), the constants are the kernel's uapi
 * (Documentation/userspace-api/landlock.rst, include/uapi/linux/landlock.h);
 * those newer than this machine's <linux/landlock.h> are defined below.
 *
 * --abi N: apply exactly ABI N's rights (what the launcher recorded in the
 * audit log); the kernel must have N or more.  Without it: the kernel's ABI.
 * --abi 0: no Landlock ruleset (the kernel has none); only --notify's part.
 *
 * --notify FD: first, the checkpoint's seccomp filter (checkpoint_filter.h):
 * installed with SECCOMP_FILTER_FLAG_NEW_LISTENER, its listener descriptor
 * sent over the unix socket FD (SCM_RIGHTS, unix(7)) to the launcher's
 * checkpoint worker, FD closed.  Every call of the agent's that can destroy
 * a workspace file then waits for the worker, which saves the file first
 * (launcher/checkpoint/supervise.h).
 *
 * Exit status: PROGRAM's (execve); 125 when the ruleset cannot be applied
 * (no Landlock, a DIR that cannot be opened, a refused syscall): fail
 * closed, PROGRAM is never run unrestricted; 126 / 127 when PROGRAM cannot
 * be executed / is not found; 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/fdpass.h"
#include "launcher/checkpoint/filter.h" /* the checkpoint's seccomp filter, shared with tests */
#include "launcher/sandbox/landlock.h"   /* LANDLOCK_ABI_KNOWN, shared with the launcher */

/* The uapi's constants after ABI 2 (Linux 6.1's header stops there). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1) /* ABI 7 */
#endif

#define EXIT_FAILED 125

/*
 * struct landlock_ruleset_attr as of ABI 6: handled_access_fs (ABI 1),
 * handled_access_net (ABI 4), scoped (ABI 6).  The size passed to the
 * kernel is the one the applied ABI knows (attr_size()).
 */
struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define READ_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
		     LANDLOCK_ACCESS_FS_READ_DIR)
#define WRITE_RIGHTS (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | \
		      LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | \
		      LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
		      LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | \
		      LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM | \
		      LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE | \
		      LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* The rights that apply to a file, not a directory (a rule on a file may hold only these). */
#define FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
		     LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
		     LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* What an ABI handles: its rights, scopes and landlock_restrict_self(2) flags. */
struct abi_set {
	uint64_t fs;
	uint64_t scoped;
	uint32_t restrict_flags;
	size_t attr_size;
};

static void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int status, const char *fmt, ...)
{
	va_list ap;
	fputs("airlock-landlock: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/*
 * Everything this program asks of Landlock, less what ABI abi (1 or more)
 * lacks, one ABI per case, falling through to the older ones.
 */
static struct abi_set abi_set(int abi)
{
	struct abi_set s = {
		.fs = READ_RIGHTS | WRITE_RIGHTS,
		/*
		 * The agent may not signal a process outside its domain (bwrap's
		 * init, the launcher when they share a pid namespace) nor connect
		 * to an abstract unix socket made outside it (with network: host
		 * the host's, e.g. @/tmp/.X11-unix).  Signals into the domain
		 * (the launcher's, init's) and pathname sockets (the shim's
		 * channel at /run/airlock/channel) are not scoped.
		 */
		.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET,
		/*
		 * Denials after the execve below go to the kernel's audit log
		 * too: they are rare (the mounts refuse first, EROFS) and
		 * exactly the ones worth seeing — a mount mistake caught.
		 */
		.restrict_flags = LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON,
		.attr_size = sizeof(struct ruleset_attr),
	};
	switch (abi) {
	case 1:
		/* No REFER: every rename or link across directories fails with
		   EXDEV, whatever the rules (the launcher does not use ABI 1). */
		s.fs &= ~LANDLOCK_ACCESS_FS_REFER;
		/* fall through */
	case 2:
		/* No TRUNCATE: truncate(2) and O_TRUNC are not checked. */
		s.fs &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
		/* fall through */
	case 3:
		/* ABI 4 adds TCP bind and connect rights.  Not used at any ABI:
		   the sandbox's own network namespace sends every connection to
		   the egress proxy, which decides it by the policy's network
		   rules; a port list here would only duplicate it (and network:
		   host is the user's choice to have the host's network). */
		s.attr_size = sizeof(uint64_t);
		/* fall through */
	case 4:
		/* No IOCTL_DEV: ioctl(2) on devices is not checked. */
		s.fs &= ~LANDLOCK_ACCESS_FS_IOCTL_DEV;
		/* fall through */
	case 5:
		/* No scopes: signals and abstract unix sockets leave the domain. */
		s.scoped = 0;
		if (s.attr_size > 2 * sizeof(uint64_t))
			s.attr_size = 2 * sizeof(uint64_t);
		/* fall through */
	case 6:
		/* No audit logging flags (landlock_restrict_self(2) takes 0). */
		s.restrict_flags = 0;
		break;
	default:
		break; /* LANDLOCK_ABI_KNOWN: everything above */
	}
	return s;
}

/* Adds a path-beneath rule: rights beneath path (a directory), or its file rights on a file. */
static void add_path(int ruleset, const char *path, uint64_t rights, uint64_t handled)
{
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		die(EXIT_FAILED, "cannot open %s for the Landlock ruleset: %s; not running the agent",
		    path, strerror(errno));
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		rights &= FILE_RIGHTS;
	struct landlock_path_beneath_attr pb = { .allowed_access = rights & handled, .parent_fd = fd };
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
		die(EXIT_FAILED, "landlock_add_rule(%s): %s; not running the agent", path,
		    strerror(errno));
	close(fd);
}

/*
 * The agent's standard streams when they are files or terminals (pipes and
 * sockets are not checked by Landlock): reading and writing them stays
 * allowed when reopened by name (/dev/stderr, /proc/self/fd/2), as the
 * mounts allow, wherever they are on the host.
 */
static void add_stdio(int ruleset, uint64_t handled)
{
	char path[32];
	struct stat st;
	for (int fd = 0; fd <= 2; fd++) {
		if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		int pfd = open(path, O_PATH | O_CLOEXEC);
		if (pfd < 0)
			continue; /* no /proc: it cannot be reopened by name either */
		struct landlock_path_beneath_attr pb = {
			.allowed_access = (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
					   LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV) &
					  handled,
			.parent_fd = pfd,
		};
		if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
			die(EXIT_FAILED, "landlock_add_rule(fd %d): %s; not running the agent", fd,
			    strerror(errno));
		close(pfd);
	}
}

static void usage(void)
{
	fputs("usage: airlock-landlock [--abi N] [--notify FD] [-r DIR]... [-w DIR]... -- PROGRAM "
	      "[ARG...]\n",
	      stderr);
	exit(2);
}

/*
 * The checkpoint's filter on this process and all it starts, its listener
 * sent over sock and closed here (only the worker holds it: should the
 * worker die, the calls it would answer fail with ENOSYS, seccomp_unotify(2)).
 */
static void notify_install(int sock)
{
	struct sock_filter code[CHECKPOINT_FILTER_MAX];
	struct sock_fprog prog = { .len = (unsigned short)checkpoint_filter(code), .filter = code };
	int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0)
		die(EXIT_FAILED, "cannot install the checkpoint's seccomp filter: %s; not running the agent",
		    strerror(errno));
	int e = fdpass_send(sock, "L", 1, listener);
	if (e < 0)
		die(EXIT_FAILED, "cannot hand the checkpoint's listener to the launcher: %s; not running "
		    "the agent", strerror(-e));
	close(listener);
	close(sock);
}

int main(int argc, char **argv)
{
	int i = 1, want = -1, notify = -1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--abi") == 0 || strcmp(argv[i], "--notify") == 0) {
			char *end;
			long n = strtol(argv[i + 1], &end, 10);
			if (*end || n < 0 || n > 1000)
				die(2, "%s: '%s' is not a number", argv[i], argv[i + 1]);
			if (argv[i][2] == 'a')
				want = (int)n;
			else
				notify = (int)n;
		} else if (strcmp(argv[i], "-r") != 0 && strcmp(argv[i], "-w") != 0) {
			usage();
		}
	}
	if (i >= argc - 1)
		usage();
	char **prog = argv + i + 1;
	if (notify >= 0) {
		/* the filter needs no_new_privs (bwrap sets it already) */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			die(EXIT_FAILED, "prctl(PR_SET_NO_NEW_PRIVS): %s; not running the agent",
			    strerror(errno));
		notify_install(notify);
	}
	if (want == 0) {
		execvp(prog[0], prog);
		die(errno == ENOENT ? 127 : 126, "%s: %s", prog[0], strerror(errno));
	}
	if (want < 0)
		want = 0;

	long kernel = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (kernel < 1)
		die(EXIT_FAILED, "this kernel has no Landlock (%s); not running the agent",
		    errno == EOPNOTSUPP ? "built in but not enabled: lsm= boot parameter"
					: strerror(errno));
	if (want > kernel)
		die(EXIT_FAILED, "Landlock ABI %d was asked for, the kernel has %ld; not running the agent",
		    want, kernel);
	int abi = want ? want : (int)kernel;
	struct abi_set s = abi_set(abi > LANDLOCK_ABI_KNOWN ? LANDLOCK_ABI_KNOWN : abi);

	struct ruleset_attr attr = { .handled_access_fs = s.fs, .scoped = s.scoped };
	int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, s.attr_size, 0);
	if (ruleset < 0)
		die(EXIT_FAILED, "landlock_create_ruleset: %s; not running the agent", strerror(errno));
	for (int k = 1; k < i; k += 2)
		if (argv[k][0] == '-' && argv[k][1] != '-')
			add_path(ruleset, argv[k + 1],
				 argv[k][1] == 'w' ? READ_RIGHTS | WRITE_RIGHTS : READ_RIGHTS, s.fs);
	add_stdio(ruleset, s.fs);
	/* landlock_restrict_self(2) needs it (bwrap sets it already) */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die(EXIT_FAILED, "prctl(PR_SET_NO_NEW_PRIVS): %s; not running the agent", strerror(errno));
	if (syscall(SYS_landlock_restrict_self, ruleset, s.restrict_flags) != 0)
		die(EXIT_FAILED, "landlock_restrict_self: %s; not running the agent", strerror(errno));
	close(ruleset);
	execvp(prog[0], prog);
	die(errno == ENOENT ? 127 : 126, "%s: %s", prog[0], strerror(errno));
}
