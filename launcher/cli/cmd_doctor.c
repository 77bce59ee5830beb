/* cmd_doctor.c — `airlock doctor`: which sandbox layers this machine gives, and what `airlock run` will therefore enforce. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/cli/launcher.h"
#include "launcher/checkpoint/store.h"
#include "launcher/checkpoint/supervise.h"
#include "launcher/sandbox/open_gate.h"
#include "launcher/sandbox/backend.h"
#include "launcher/sandbox/landlock.h"
#include "launcher/sandbox/seccomp.h"
#include "launcher/sandbox/session.h"

extern char **environ;

const char cmd_doctor_usage[] =
	"usage: airlock doctor [--bwrap PATH]\n"
	"\n"
	"Reports which sandbox layers this machine gives airlock run: bubblewrap\n"
	"(found on PATH, or PATH given with --bwrap) and its version, whether it can\n"
	"create a sandbox here, unprivileged user namespaces, seccomp, the Landlock\n"
	"ABI, cgroup v2 and the preload shim; then what airlock run will enforce,\n"
	"and for each missing piece how to get it.  It starts /bin/true in a test\n"
	"sandbox and probes the kernel in short-lived child processes.\n"
	"\n"
	"  --bwrap PATH   check this bubblewrap binary instead of the one on PATH\n"
	"\n"
	"Exit status: 0 airlock run works here; 1 it would refuse to start (no usable\n"
	"bubblewrap, or no shim) unless given --no-sandbox; 2 usage error.\n";

/* How long any child (bwrap, a probe) may take: doctor must stay quick. */
#define CHILD_TIMEOUT_MS 2000
/* The unprivileged user a root doctor tries user namespaces as. */
#define NOBODY_ID 65534

enum check_status { CHECK_OK, CHECK_WARN, CHECK_MISSING, CHECK_STATUS_MAX };

static const char *const status_words[CHECK_STATUS_MAX] = { "ok", "warn", "MISSING" };

/* One line of the report, and the fix for it when it is not ok. */
struct check {
	const char *what;
	enum check_status status;
	char detail[512];
	char fix[512];
};

/* Everything doctor found, for the summary. */
struct findings {
	char *bwrap;            /* owned; absolute path, or NULL when there is none */
	bool sandbox_ok;        /* bwrap created a sandbox */
	bool sandbox_seccomp;   /* ... with airlock's seccomp filter */
	bool seccomp_ok;        /* the filter builds and loads */
	bool shim_ok;
	int landlock_abi;       /* 0: none (or only ABI 1) */
	bool landlock_helper;   /* airlock-landlock found */
	bool cgroup2;
	bool open_gate;         /* fanotify permission events (open_gate.h) */
	bool checkpoint;        /* seccomp user notification + openat2 (launcher/checkpoint/supervise.h) */
};

static void set_detail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_detail(struct check *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof c->detail, fmt, ap);
	va_end(ap);
}

static void set_fix(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_fix(struct check *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->fix, sizeof c->fix, fmt, ap);
	va_end(ap);
}

/* ---- running a child with a deadline ---------------------------------------- */

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Reads from fd into out (NUL-terminated, truncated) until EOF or the deadline. */
static void read_until(int fd, char *out, size_t outlen, long deadline)
{
	size_t used = 0;
	out[0] = '\0';
	for (;;) {
		long left = deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return;
		char buf[512];
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		size_t take = (size_t)n < outlen - 1 - used ? (size_t)n : outlen - 1 - used;
		memcpy(out + used, buf, take);
		used += take;
		out[used] = '\0';
	}
}

/* Waits for pid until the deadline, then kills it.  Returns its wait status, or -1 when killed. */
static int wait_until(pid_t pid, long deadline)
{
	int st;
	while (now_ms() < deadline) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/*
 * Runs argv (argv[0] an absolute path) with stdin /dev/null and stdout and
 * stderr into out (truncated).  Returns its exit status, 128+N for a signal,
 * or -1 when it cannot start or outlives CHILD_TIMEOUT_MS (out says which).
 */
static int run_capture(char *const argv[], char *out, size_t outlen)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		snprintf(out, outlen, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	pid_t pid;
	int r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (r != 0) {
		close(pipefd[0]);
		snprintf(out, outlen, "cannot run %s: %s", argv[0], strerror(r));
		return -1;
	}
	long deadline = now_ms() + CHILD_TIMEOUT_MS;
	read_until(pipefd[0], out, outlen, deadline);
	close(pipefd[0]);
	int st = wait_until(pid, deadline);
	if (st < 0) {
		snprintf(out, outlen, "%s did not finish within %d ms", argv[0], CHILD_TIMEOUT_MS);
		return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs fn in a forked child; returns what it returned (0..255), or -1 (died, timed out). */
static int in_child(int (*fn)(const void *), const void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg) & 0xff);
	int st = wait_until(pid, now_ms() + CHILD_TIMEOUT_MS);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The first line of text, trailing newline and "bwrap: " prefix dropped, in place. */
static char *first_line(char *text)
{
	text[strcspn(text, "\n")] = '\0';
	return strncmp(text, "bwrap: ", 7) == 0 ? text + 7 : text;
}

/* ---- bubblewrap ------------------------------------------------------------- */

/*
 * --bwrap PATH, else bwrap on PATH, as `airlock run` finds it (the backend's
 * probe).  Returns a malloc'ed path of an executable, or NULL.
 */
static char *find_bwrap(const char *given)
{
	char err[512];
	struct sandbox *sb = sandbox_bubblewrap.probe(given, err, sizeof err);
	char *path = sb ? strdup(sandbox_bubblewrap.program(sb)) : NULL;
	sandbox_bubblewrap.free(sb);
	return path;
}

static void check_bwrap(struct check *c, const char *given, struct findings *f)
{
	c->what = "bubblewrap";
	f->bwrap = find_bwrap(given);
	if (!f->bwrap) {
		c->status = CHECK_MISSING;
		set_detail(c, given ? "%s is not an executable file" : "bwrap is not on PATH", given);
		set_fix(c, "install bubblewrap: apt-get install bubblewrap (dnf, pacman, apk: "
			   "bubblewrap), or pass --bwrap PATH");
		return;
	}
	char out[256];
	char *argv[] = { f->bwrap, "--version", NULL };
	int r = run_capture(argv, out, sizeof out);
	struct stat st;
	bool setuid = stat(f->bwrap, &st) == 0 && (st.st_mode & S_ISUID);
	c->status = r == 0 ? CHECK_OK : CHECK_WARN;
	set_detail(c, "%s, %s%s", f->bwrap, r == 0 ? first_line(out) : "version unknown",
		   setuid ? " (setuid root)" : "");
	if (r != 0)
		set_fix(c, "%s --version failed: %s", f->bwrap, first_line(out));
}

/* The path of true(1), which the test sandbox runs. */
static char *true_program(void)
{
	char *p = canon_program("true");
	if (p && strchr(p, '/'))
		return p;
	free(p);
	return strdup("/bin/true");
}

/*
 * The namespaces and mounts `airlock run` asks bubblewrap for, around
 * /bin/true.  seccomp_fd < 0: without the filter.  Returns bwrap's status.
 */
static int try_sandbox(const char *bwrap, int seccomp_fd, char *out, size_t outlen)
{
	char fdbuf[16];
	char *prog = true_program();
	const char *argv[32];
	size_t n = 0;
	argv[n++] = bwrap;
	const char *fixed[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
				"--tmpfs", "/tmp", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
				"--unshare-net", "--unshare-cgroup-try", "--die-with-parent",
				"--new-session", "--cap-drop", "ALL" };
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		argv[n++] = fixed[i];
	if (geteuid() != 0)
		argv[n++] = "--unshare-user";
	if (seccomp_fd >= 0) {
		snprintf(fdbuf, sizeof fdbuf, "%d", seccomp_fd);
		argv[n++] = "--seccomp";
		argv[n++] = fdbuf;
	}
	argv[n++] = "--";
	argv[n++] = prog ? prog : "/bin/true";
	argv[n] = NULL;
	int r = run_capture((char *const *)argv, out, outlen);
	free(prog);
	return r;
}

/* A fix for what bwrap said, from the messages bubblewrap prints when namespaces are refused. */
static void sandbox_fix(struct check *c, const char *msg)
{
	if (strstr(msg, "uid map") || strstr(msg, "new namespace") || strstr(msg, "No permissions"))
		set_fix(c, "unprivileged user namespaces are refused: see 'user namespaces' "
			   "(Ubuntu >= 23.10: sysctl kernel.apparmor_restrict_unprivileged_userns=0, or "
			   "an AppArmor profile for bwrap)");
	else if (strstr(msg, "proc"))
		set_fix(c, "mounting /proc in a new pid namespace is refused, as inside a container "
			   "with a masked /proc: run the container with --security-opt "
			   "systempaths=unconfined, or airlock run --no-sandbox");
	else
		set_fix(c, "bwrap's own error above; to retry by hand: bwrap --ro-bind / / "
			   "--unshare-pid%s -- true",
			   geteuid() ? " --unshare-user" : "");
}

static void check_sandbox(struct check *c, struct findings *f)
{
	c->what = "sandbox";
	if (!f->bwrap) {
		c->status = CHECK_MISSING;
		set_detail(c, "not tried: no bubblewrap");
		return;
	}
	char out[512], err[256];
	struct seccomp_options opt = { .process_spawn = true };
	int fd = seccomp_filter_fd(&opt, err, sizeof err);
	int r = fd >= 0 ? try_sandbox(f->bwrap, fd, out, sizeof out) : -1;
	if (fd >= 0)
		close(fd);
	f->sandbox_seccomp = r == 0;
	if (r != 0)
		r = try_sandbox(f->bwrap, -1, out, sizeof out);
	f->sandbox_ok = r == 0;
	if (!f->sandbox_ok) {
		c->status = CHECK_MISSING;
		const char *msg = first_line(out);
		if (msg[0])
			set_detail(c, "bwrap cannot create a sandbox here: %s", msg);
		else
			set_detail(c, "bwrap cannot create a sandbox here: exit status %d, no message", r);
		sandbox_fix(c, out);
		return;
	}
	c->status = f->sandbox_seccomp ? CHECK_OK : CHECK_WARN;
	set_detail(c, "bwrap ran true in new %spid, ipc, uts, net and mount namespaces%s",
		   geteuid() ? "user, " : "",
		   f->sandbox_seccomp ? ", with airlock's seccomp filter" : "");
	if (!f->sandbox_seccomp)
		set_fix(c, "bwrap refused airlock's seccomp filter: see 'seccomp' below");
}

/* ---- user namespaces ---------------------------------------------------------- */

/* Reads a small integer from a /proc/sys file; -1 when it does not exist or is not a number. */
static long read_sysctl(const char *path)
{
	FILE *fp = fopen(path, "re");
	long v = -1;
	if (fp) {
		if (fscanf(fp, "%ld", &v) != 1)
			v = -1;
		fclose(fp);
	}
	return v;
}

/* In a child: become nobody if asked (root asks for ordinary users), then unshare a user ns. */
static int child_unshare_user(const void *arg)
{
	bool as_nobody = *(const bool *)arg;
	if (as_nobody && (setgroups(0, NULL) < 0 || setgid(NOBODY_ID) < 0 || setuid(NOBODY_ID) < 0))
		return 254;
	return unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff);
}

/* Whether a user namespace can be made (as nobody when as_nobody).  Returns 0 or an errno. */
static int try_userns(bool as_nobody)
{
	return in_child(child_unshare_user, &as_nobody);
}

static void userns_fix(struct check *c, long clone_knob, long max_ns, long apparmor)
{
	if (clone_knob == 0)
		set_fix(c, "sysctl kernel.unprivileged_userns_clone=1 (and in /etc/sysctl.d/ to keep it)");
	else if (max_ns == 0)
		set_fix(c, "sysctl user.max_user_namespaces=15000 (and in /etc/sysctl.d/ to keep it)");
	else if (apparmor == 1)
		set_fix(c, "sysctl kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor "
			   "profile allowing userns for bwrap");
	else
		set_fix(c, "user namespaces are refused (a container's seccomp profile, or a kernel "
			   "without CONFIG_USER_NS); as root, airlock run does not need them");
}

static void check_userns(struct check *c)
{
	c->what = "user namespaces";
	long knob = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
	long max_ns = read_sysctl("/proc/sys/user/max_user_namespaces");
	long apparmor = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	bool root = geteuid() == 0;
	int r = try_userns(root);
	char knobs[160];
	snprintf(knobs, sizeof knobs, "user.max_user_namespaces=%ld%s%s", max_ns,
		 knob >= 0 ? (knob ? ", kernel.unprivileged_userns_clone=1" :
				     ", kernel.unprivileged_userns_clone=0") : "",
		 apparmor == 1 ? ", kernel.apparmor_restrict_unprivileged_userns=1" : "");
	const char *result = r == 0 ? "yes" : r > 0 && r < 254 ? strerror(r) : "cannot tell";
	if (root) {
		/* Root runs bwrap without a user namespace: ordinary users are what this tells. */
		c->status = r == 0 ? CHECK_OK : CHECK_WARN;
		set_detail(c, "running as root: not needed; for other users: %s (%s)", result, knobs);
	} else {
		c->status = r == 0 ? CHECK_OK : CHECK_MISSING;
		set_detail(c, "unshare(CLONE_NEWUSER): %s (%s)", result, knobs);
	}
	if (r != 0)
		userns_fix(c, knob, max_ns, apparmor);
}

/* ---- seccomp ------------------------------------------------------------------ */

/* In a child: load the program as bwrap does; ptrace must be refused and getpid allowed. */
static int child_seccomp(const void *arg)
{
	const struct sock_fprog *prog = arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
		return 1;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0 || errno != EPERM)
		return 2;
	return getpid() > 0 ? 0 : 3;
}

/* Reads the BPF program from fd and loads it in a child.  Returns 0, or a reason in err. */
static int try_filter(int fd, char *err, size_t errlen)
{
	struct sock_filter insns[BPF_MAXINSNS];
	ssize_t n = pread(fd, insns, sizeof insns, 0);
	if (n <= 0 || n % (ssize_t)sizeof insns[0] != 0) {
		snprintf(err, errlen, "the exported filter is unreadable");
		return -1;
	}
	struct sock_fprog prog = { .len = (unsigned short)(n / (ssize_t)sizeof insns[0]),
				   .filter = insns };
	static const char *const why[] = { "", "the kernel refused to load it",
					   "it loaded but did not refuse ptrace",
					   "it loaded but refused getpid" };
	int r = in_child(child_seccomp, &prog);
	if (r != 0)
		snprintf(err, errlen, "%s", r > 0 && r < 4 ? why[r] : "the probe process died");
	return r == 0 ? 0 : -1;
}

/* The group names, comma-separated, into buf. */
static void join_groups(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const char *const *g = seccomp_group_names(); *g && used < len; g++) {
		int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", *g);
		used += w > 0 ? (size_t)w : 0;
	}
}

static void check_seccomp(struct check *c, struct findings *f)
{
	c->what = "seccomp";
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	if (mode < 0 && errno == EINVAL) {
		c->status = CHECK_MISSING;
		set_detail(c, "the kernel has no seccomp (PR_GET_SECCOMP: EINVAL)");
		set_fix(c, "a kernel built with CONFIG_SECCOMP_FILTER=y");
		return;
	}
	char err[256], groups[512];
	struct seccomp_options opt = { .process_spawn = true };
	int fd = seccomp_filter_fd(&opt, err, sizeof err);
	if (fd >= 0) {
		int r = try_filter(fd, err, sizeof err);
		close(fd);
		fd = r == 0 ? 0 : -1;
	}
	f->seccomp_ok = fd == 0;
	if (!f->seccomp_ok) {
		c->status = CHECK_MISSING;
		set_detail(c, "airlock's filter does not work here: %s", err);
		set_fix(c, "a kernel with CONFIG_SECCOMP_FILTER=y; inside a container, a runtime that "
			   "allows nested seccomp filters");
		return;
	}
	join_groups(groups, sizeof groups);
	c->status = CHECK_OK;
	set_detail(c, "filter loads%s; refuses %s", mode == 2 ? " (under this process's own filter)" : "",
		   groups);
}

/* ---- Landlock, cgroup v2, shim ------------------------------------------------ */

static void check_landlock(struct check *c, struct findings *f)
{
	char why[256], err[512];
	c->what = "Landlock";
	f->landlock_abi = landlock_abi(why, sizeof why);
	char *helper = f->landlock_abi ? session_find_landlock(err, sizeof err) : NULL;
	f->landlock_helper = helper != NULL;
	free(helper);
	if (f->landlock_abi && f->landlock_helper) {
		c->status = CHECK_OK;
		set_detail(c, "ABI %d: applied (read everywhere visible, write under the writable "
			      "binds)", f->landlock_abi);
		return;
	}
	if (f->landlock_abi) {
		c->status = CHECK_MISSING;
		set_detail(c, "ABI %d, but %s", f->landlock_abi, err);
		set_fix(c, "build it (make) or set AIRLOCK_LANDLOCK to the path of %s",
			RUN_LANDLOCK_NAME);
		return;
	}
	c->status = CHECK_WARN;
	set_detail(c, "%s", why);
	set_fix(c, "%s", errno == EOPNOTSUPP ? "add landlock to the lsm= kernel boot parameter"
					      : "Linux >= 5.19 with CONFIG_SECURITY_LANDLOCK=y "
						"(airlock run works without it, and logs that)");
}

/* Reads the first line of a small file into buf; false when it cannot. */
static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");
	bool ok = fp && fgets(buf, (int)len, fp);
	if (fp)
		fclose(fp);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static void check_cgroup(struct check *c, struct findings *f)
{
	c->what = "cgroup v2";
	char controllers[256];
	f->cgroup2 = read_line("/sys/fs/cgroup/cgroup.controllers", controllers, sizeof controllers);
	if (f->cgroup2) {
		c->status = CHECK_OK;
		set_detail(c, "unified hierarchy at /sys/fs/cgroup; controllers: %s",
			   controllers[0] ? controllers : "none delegated");
		return;
	}
	c->status = CHECK_WARN;
	bool hybrid = access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0;
	set_detail(c, "/sys/fs/cgroup is cgroup v1%s",
		   hybrid ? " (hybrid: v2 at /sys/fs/cgroup/unified, no controllers)" : "");
	set_fix(c, "boot with systemd.unified_cgroup_hierarchy=1 (for limits:, which airlock does not "
		   "apply yet)");
}

/* The open gate (open_gate.h): deny-read rules for files that appear during the session. */
static void check_open_gate(struct check *c, struct findings *f)
{
	char why[160];
	c->what = "fanotify";
	f->open_gate = open_gate_probe(why, sizeof why) == 0;
	if (f->open_gate) {
		c->status = CHECK_OK;
		set_detail(c, "permission events (FAN_OPEN_PERM): the open gate is on");
		return;
	}
	c->status = CHECK_WARN;
	set_detail(c, "%s", why);
	set_fix(c, "run airlock as root for the open gate: without it a file a deny-read rule names "
		   "that appears during the session is readable to static binaries and raw syscalls "
		   "(the shim still refuses it to the programs it is in)");
}

/* The workspace's checkpoint (airlock diff / undo): the kernel's side, and where the store is. */
static void check_checkpoint(struct check *c, struct findings *f)
{
	char why[256];
	c->what = "checkpoint";
	f->checkpoint = checkpoint_probe(why, sizeof why) == 0;
	if (!f->checkpoint) {
		c->status = CHECK_WARN;
		set_detail(c, "%s", why);
		set_fix(c, "a newer kernel (5.6 or later): without it `airlock undo` has nothing to put "
			   "back (run --require-undo refuses to start)");
		return;
	}
	char *root = store_root(getenv("HOME"));
	char cwd[PATH_MAX];
	struct stat a, b;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", root ? root : "");
	/* the store's nearest existing ancestor: its file system */
	while (dir[0] && stat(dir, &b) != 0) {
		char *sl = strrchr(dir, '/');
		if (!sl || sl == dir)
			break;
		*sl = '\0';
	}
	bool same = getcwd(cwd, sizeof cwd) && stat(cwd, &a) == 0 && stat(dir[0] ? dir : "/", &b) == 0 &&
		    a.st_dev == b.st_dev;
	c->status = CHECK_OK;
	set_detail(c, "seccomp user notification: files saved before the sandbox changes them, in %s "
		   "(%s)", root ? root : "?",
		   same ? "the current directory's file system: a name that goes is kept by a hard link"
			: "another file system than the current directory's: files are copied");
	free(root);
}

static void check_shim(struct check *c, struct findings *f)
{
	c->what = "shim";
	char err[512];
	char *path = session_find_shim(err, sizeof err);
	f->shim_ok = path != NULL;
	if (path) {
		c->status = CHECK_OK;
		set_detail(c, "%s", path);
		free(path);
		return;
	}
	c->status = CHECK_MISSING;
	set_detail(c, "%s", err);
	set_fix(c, "build it (make) or set AIRLOCK_SHIM to the path of %s", RUN_SHIM_NAME);
}

/* ---- the report ------------------------------------------------------------- */

static void print_checks(const struct check *checks, size_t n)
{
	printf("What this machine gives airlock run:\n\n");
	for (size_t i = 0; i < n; i++)
		printf("  %-16s %-8s %s\n", checks[i].what, status_words[checks[i].status],
		       checks[i].detail);
}

static void print_enforcement(const struct findings *f)
{
	bool kernel = f->sandbox_ok;
	printf("\nWhat airlock run will enforce here:\n\n");
	printf("  %-30s %-8s %s\n", "kernel sandbox (bubblewrap)", kernel ? "yes" : "no",
	       kernel ? "namespaces, read-only binds, masks, no network but the proxy"
		      : "run refuses to start (exit 125) unless --no-sandbox");
	printf("  %-30s %-8s %s\n", "seccomp filter", kernel && f->sandbox_seccomp ? "yes" : "no",
	       kernel && f->sandbox_seccomp ? "the groups listed under seccomp fail with EPERM"
					    : "it is applied through bubblewrap");
	printf("  %-30s %-8s %s\n", "open gate (fanotify)", kernel && f->open_gate ? "yes" : "no",
	       kernel && f->open_gate
		       ? "deny-read rules hold for files that appear during the session, every process"
		       : "files a deny-read rule names that appear during the session: shim only");
	printf("  %-30s %-8s %s\n", "shim (LD_PRELOAD)", f->shim_ok ? "yes" : "no",
	       "exec, open and connect rules in dynamically linked programs; asks; audit log");
	printf("  %-30s %-8s %s\n", "egress proxy", kernel ? "yes" : "no",
	       kernel ? "network: proxy: each connection decided by the network rules, fake DNS"
		      : "it needs the kernel sandbox's network namespace");
	bool landlock = kernel && f->landlock_abi && f->landlock_helper;
	printf("  %-30s %-8s %s\n", "Landlock ruleset", landlock ? "yes" : "no",
	       landlock	? "writes only under the writable binds, no signals or abstract sockets out"
	       : !kernel	? "it is applied inside the kernel sandbox (none with --no-sandbox)"
	       : f->landlock_abi ? "the helper is missing: run refuses to start (exit 125)"
				 : "the kernel lacks it: run starts without it and logs that");
	printf("  %-30s %-8s %s\n", "checkpoint (airlock undo)", kernel && f->checkpoint ? "yes" : "no",
	       kernel && f->checkpoint
		       ? "every process's changes to the workspace can be undone (airlock diff, undo)"
		       : "nothing saved: airlock undo has nothing to put back");
	printf("  %-30s %-8s %s\n", "limits (cgroup v2)", "not yet",
	       f->cgroup2 ? "the kernel has it" : "cgroup v1 here");
}

/* The modes that put the shim into process trees `airlock run` did not start (cmd_serve.c). */
static void print_injection(const struct findings *f)
{
	printf("\nInjection into other process trees (LD_PRELOAD; a tripwire and a recorder, "
	       "not a boundary):\n\n");
	printf("  %-30s %-8s %s\n", "airlock serve + airlock env", f->shim_ok ? "yes" : "no",
	       f->shim_ok ? "eval \"$(airlock env)\" joins a shell to a running serve session"
			  : "no shim to preload");
}

static void print_fixes(const struct check *checks, size_t n)
{
	bool header = false;
	for (size_t i = 0; i < n; i++) {
		if (checks[i].status == CHECK_OK || !checks[i].fix[0])
			continue;
		if (!header)
			printf("\nTo fix:\n\n");
		header = true;
		printf("  %s: %s\n", checks[i].what, checks[i].fix);
	}
}

static int parse_args(int argc, char **argv, const char **bwrap)
{
	*bwrap = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--bwrap") == 0 && i + 1 < argc) {
			*bwrap = argv[++i];
		} else if (strncmp(argv[i], "--bwrap=", 8) == 0) {
			*bwrap = argv[i] + 8;
		} else {
			airlock_err("doctor: %s: %s", strcmp(argv[i], "--bwrap") == 0 ?
				    "--bwrap needs a PATH" : "unexpected argument", argv[i]);
			fputs(cmd_doctor_usage, stderr);
			return -1;
		}
	}
	return 0;
}

int cmd_doctor(int argc, char **argv)
{
	const char *given;
	if (parse_args(argc, argv, &given) < 0)
		return AIRLOCK_EXIT_USAGE;
	struct findings f = { 0 };
	struct check checks[9];
	memset(checks, 0, sizeof checks);
	check_bwrap(&checks[0], given, &f);
	check_sandbox(&checks[1], &f);
	check_userns(&checks[2]);
	check_seccomp(&checks[3], &f);
	check_landlock(&checks[4], &f);
	check_cgroup(&checks[5], &f);
	check_shim(&checks[6], &f);
	check_open_gate(&checks[7], &f);
	check_checkpoint(&checks[8], &f);
	size_t n = sizeof checks / sizeof checks[0];
	print_checks(checks, n);
	print_enforcement(&f);
	print_injection(&f);
	print_fixes(checks, n);
	bool works = f.sandbox_ok && f.shim_ok && (!f.landlock_abi || f.landlock_helper);
	if (works)
		printf("\nairlock run works here.\n");
	else
		printf("\nairlock run would refuse to start here (exit 125): %s%s%s%s.\n",
		       f.sandbox_ok ? "" : "bubblewrap missing or unable to create a sandbox",
		       !f.sandbox_ok && !f.shim_ok ? " and " : "", f.shim_ok ? "" : "no shim to preload",
		       f.sandbox_ok && f.shim_ok ? "no Landlock helper to apply the kernel's Landlock"
						 : "");
	if (!f.sandbox_ok && f.shim_ok)
		printf("airlock run --no-sandbox would start, with only the shim and the log.\n");
	free(f.bwrap);
	return works ? AIRLOCK_EXIT_OK : AIRLOCK_EXIT_FAILURE;
}
