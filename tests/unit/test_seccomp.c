/* test_seccomp.c — the seccomp filter's group table invariants, then each refused syscall probed for real in a filtered child. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

/* The table is static: the test includes the file to check it. */
#include "launcher/sandbox/seccomp.c"

extern char **environ;

/* A bit the kernel ignores in an int argument: the upper half of the register. */
#define HIGH32 (1L << 32)

/* A descriptor no test process has open: a call that reaches the kernel fails with EBADF. */
#define BAD_FD 987654

/* Result of one probe: 0 success, an errno, or KILLED_BY(sig). */
#define KILLED_BY(sig) (-(sig))

/* ---- the table ---------------------------------------------------------------- */

static void test_groups_have_name_help_syscalls(void **state)
{
	(void)state;
	for (size_t i = 0; i < NGROUPS; i++) {
		const struct seccomp_group *g = &groups[i];
		assert_non_null(g->name);
		assert_true(g->name[0] != '\0');
		for (const char *c = g->name; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || *c == '_'))
				fail_msg("group name %s: only a-z and _ (it goes into the log)", g->name);
		assert_non_null(g->help);
		assert_true(strlen(g->help) > 10);
		assert_non_null(g->syscalls[0].name);
	}
}

/* Every name is known to libseccomp, and every group refuses at least one real syscall here. */
static void test_syscalls_resolve(void **state)
{
	(void)state;
	for (size_t i = 0; i < NGROUPS; i++) {
		int real = 0;
		for (const struct seccomp_syscall *s = groups[i].syscalls; s->name; s++) {
			int nr = resolve(s->name);
			if (nr == __NR_SCMP_ERROR)
				fail_msg("group %s: libseccomp does not know %s", groups[i].name, s->name);
			real += nr >= 0;
#if defined(__x86_64__)
			/* x86_64 has all of them but umount (umount2 only). */
			if (nr < 0 && strcmp(s->name, "umount") != 0)
				fail_msg("group %s: %s is not an x86_64 syscall", groups[i].name, s->name);
#endif
		}
		if (real == 0)
			fail_msg("group %s refuses nothing on this architecture", groups[i].name);
	}
}

/* Group names are unique; an unconditional refusal appears once in the whole table. */
static void test_no_duplicates(void **state)
{
	(void)state;
	for (size_t i = 0; i < NGROUPS; i++) {
		for (size_t j = i + 1; j < NGROUPS; j++)
			if (strcmp(groups[i].name, groups[j].name) == 0)
				fail_msg("group %s twice", groups[i].name);
		for (const struct seccomp_syscall *s = groups[i].syscalls; s->name; s++)
			for (size_t j = 0; j < NGROUPS; j++)
				for (const struct seccomp_syscall *t = groups[j].syscalls; t->name; t++) {
					if (s == t || strcmp(s->name, t->name) != 0)
						continue;
					/* clone is argument-checked in two groups: namespace flags, no CLONE_THREAD. */
					if (i == j || !s->rule || !t->rule)
						fail_msg("%s in groups %s and %s", s->name, groups[i].name,
							 groups[j].name);
				}
	}
}

static void test_group_names(void **state)
{
	(void)state;
	const char *const *names = seccomp_group_names();
	size_t n = 0;
	for (; names[n]; n++)
		assert_string_not_equal(names[n], "process_spawn");
	size_t always = 0;
	for (size_t i = 0; i < NGROUPS; i++) {
		if (groups[i].spawn_only)
			continue;
		assert_true(always < n);
		assert_string_equal(names[always], groups[i].name);
		always++;
	}
	assert_int_equal(n, always);
	assert_ptr_equal(seccomp_group_names(), names);
}

/* ---- the exported filter ---------------------------------------------------- */

struct bpf {
	struct sock_filter *insns;
	unsigned short len;
};

/* Builds the filter for process_spawn and reads its BPF back from the memfd. */
static void bpf_get(bool process_spawn, struct bpf *b)
{
	struct seccomp_options opt = { .process_spawn = process_spawn };
	char err[256] = "";
	int fd = seccomp_filter_fd(&opt, err, sizeof err);
	if (fd < 0)
		fail_msg("seccomp_filter_fd: %s", err);
	int flags = fcntl(fd, F_GETFD);
	assert_true(flags >= 0);
	assert_false(flags & FD_CLOEXEC);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	off_t size = lseek(fd, 0, SEEK_END);
	assert_true(size > 0);
	assert_int_equal(size % (off_t)sizeof(struct sock_filter), 0);
	assert_true(size / (off_t)sizeof(struct sock_filter) <= BPF_MAXINSNS);
	b->insns = malloc((size_t)size);
	assert_non_null(b->insns);
	assert_int_equal(pread(fd, b->insns, (size_t)size, 0), size);
	b->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	/* Sealed: nothing may change the program before bwrap reads it. */
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(errno, EPERM);
	close(fd);
}

/* What bwrap --seccomp does with the program: no_new_privs, then install it (seccomp(2)). */
static int bpf_load(const struct bpf *b)
{
	struct sock_fprog prog = { .len = b->len, .filter = b->insns };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static void test_filter_fd(void **state)
{
	(void)state;
	struct bpf a, b;
	bpf_get(true, &a);
	bpf_get(false, &b);
	assert_true(b.len > a.len); /* process_spawn: false adds rules */
	free(a.insns);
	free(b.insns);
}

/* ---- probes: each runs in a forked child, with or without the filter ---------- */

/* Waits for a child a probe made (fork, vfork, clone, posix_spawn); 0 when it exited 0. */
static long reap(long pid)
{
	int st;
	if (waitpid((pid_t)pid, &st, __WALL) < 0)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		errno = ECHILD;
		return -1;
	}
	return 0;
}

static long p_getpid(long arg)
{
	(void)arg;
	return getpid() > 0 ? 0 : -1;
}

static long p_ptrace_traceme(long arg)
{
	(void)arg;
	return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
}

static long p_process_vm(long nr)
{
	return syscall(nr, getpid(), NULL, 0UL, NULL, 0UL, 0UL);
}

static long p_mount(long arg)
{
	(void)arg;
	return mount(NULL, NULL, NULL, 0, NULL);
}

/* Every argument a bad fd or NULL: EBADF / EFAULT / EINVAL when the call reaches the kernel. */
static long p_badargs(long nr)
{
	return syscall(nr, BAD_FD, NULL, BAD_FD, NULL, 0);
}

static long p_null_args(long nr)
{
	return syscall(nr, NULL, NULL, NULL, NULL, NULL);
}

static long p_unshare(long flags)
{
	return unshare((int)flags);
}

/* Raw clone(2) as fork: no CLONE_VM, so the child runs on a copy of this stack, then leaves. */
static long p_clone(long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, 0L, NULL, NULL, 0L);
	if (pid == 0)
		_exit(0);
	return pid < 0 ? -1 : reap(pid);
}

static long p_clone3(long arg)
{
	(void)arg;
	return syscall(SYS_clone3, NULL, 0UL);
}

static long p_socket(long domain)
{
	long fd = syscall(SYS_socket, domain, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		close((int)fd);
	return fd < 0 ? -1 : 0;
}

static long p_socket_stream(long domain)
{
	int fd = socket((int)domain, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

static long p_netlink(long protocol)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, (int)protocol);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

/* Raw socket(2) with garbage in the upper halves of the domain and protocol registers. */
static long p_netlink_high(long protocol)
{
	long fd = syscall(SYS_socket, AF_NETLINK | HIGH32, SOCK_RAW | SOCK_CLOEXEC, protocol | HIGH32);
	if (fd >= 0)
		close((int)fd);
	return fd < 0 ? -1 : 0;
}

/* ioctl on a bad fd: EBADF when the request passes the filter (never types into a terminal). */
static long p_ioctl(long request)
{
	char c = 'x';
	return syscall(SYS_ioctl, BAD_FD, (unsigned long)request, &c);
}

static long p_fork(long arg)
{
	(void)arg;
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	return pid < 0 ? -1 : reap(pid);
}

static long p_fork_syscall(long arg)
{
	(void)arg;
#ifdef SYS_fork
	long pid = syscall(SYS_fork);
	if (pid == 0)
		_exit(0);
	return pid < 0 ? -1 : reap(pid);
#else
	return p_fork(0);
#endif
}

static long p_vfork(long arg)
{
	(void)arg;
	pid_t pid = vfork();
	if (pid == 0)
		_exit(0);
	return pid < 0 ? -1 : reap(pid);
}

static long p_posix_spawn(long arg)
{
	(void)arg;
	char *argv[] = { "true", NULL };
	pid_t pid;
	int r = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
	if (r != 0) {
		errno = r;
		return -1;
	}
	return reap(pid);
}

static void *thread_main(void *arg)
{
	return arg;
}

static long p_thread(long arg)
{
	(void)arg;
	pthread_t t;
	int r = pthread_create(&t, NULL, thread_main, NULL);
	if (r != 0) {
		errno = r;
		return -1;
	}
	return pthread_join(t, NULL) == 0 ? 0 : -1;
}

#if defined(__x86_64__)
/* getpid through the i386 entry (int $0x80, eax = 20): a foreign architecture to the filter. */
static long p_i386(long arg)
{
	(void)arg;
	long ret = 20;
	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	return ret < 0 ? (errno = (int)-ret, -1) : 0;
}

/* getpid with the x32 bit (__X32_SYSCALL_BIT): another ABI, not native x86_64. */
static long p_x32(long arg)
{
	(void)arg;
	return syscall(0x40000000L | SYS_getpid) < 0 ? -1 : 0;
}
#endif

struct probe {
	const char *what;
	long (*fn)(long arg);
	long arg;
	int expect;  /* 0, an errno, or KILLED_BY(sig) */
	int also;    /* another acceptable result (0 = none besides expect) */
	bool distinct; /* without the filter the result is never `expect`, whoever runs the test */
	int line;
};

#define PROBE(w, f, a, e, al, d) { w, f, a, e, al, d, __LINE__ }

/* The filter of any policy (process_spawn: true). */
static const struct probe probes[] = {
	PROBE("getpid", p_getpid, 0, 0, 0, false),
	PROBE("ptrace(PTRACE_TRACEME)", p_ptrace_traceme, 0, EPERM, 0, false),
	PROBE("process_vm_readv", p_process_vm, SYS_process_vm_readv, EPERM, 0, true),
	PROBE("process_vm_writev", p_process_vm, SYS_process_vm_writev, EPERM, 0, true),
	PROBE("mount", p_mount, 0, EPERM, 0, true),
	PROBE("umount2", p_null_args, SYS_umount2, EPERM, 0, false),
	PROBE("pivot_root", p_null_args, SYS_pivot_root, EPERM, 0, false),
	PROBE("move_mount", p_badargs, SYS_move_mount, EPERM, 0, false),
	PROBE("open_tree", p_badargs, SYS_open_tree, EPERM, 0, false),
	PROBE("fsopen", p_null_args, SYS_fsopen, EPERM, 0, false),
	PROBE("fsmount", p_badargs, SYS_fsmount, EPERM, 0, false),
	PROBE("fsconfig", p_badargs, SYS_fsconfig, EPERM, 0, false),
	PROBE("fspick", p_badargs, SYS_fspick, EPERM, 0, false),
	PROBE("mount_setattr", p_badargs, SYS_mount_setattr, EPERM, 0, false),
	PROBE("bpf", p_null_args, SYS_bpf, EPERM, 0, false),
	PROBE("perf_event_open", p_null_args, SYS_perf_event_open, EPERM, 0, false),
	PROBE("kexec_load", p_null_args, SYS_kexec_load, EPERM, 0, false),
	PROBE("kexec_file_load", p_badargs, SYS_kexec_file_load, EPERM, 0, false),
	PROBE("init_module", p_null_args, SYS_init_module, EPERM, 0, false),
	PROBE("finit_module", p_badargs, SYS_finit_module, EPERM, 0, false),
	PROBE("delete_module", p_null_args, SYS_delete_module, EPERM, 0, false),
	PROBE("keyctl", p_badargs, SYS_keyctl, EPERM, 0, true),
	PROBE("add_key", p_null_args, SYS_add_key, EPERM, 0, true),
	PROBE("request_key", p_null_args, SYS_request_key, EPERM, 0, true),
	PROBE("userfaultfd", p_badargs, SYS_userfaultfd, EPERM, 0, false),
	PROBE("io_uring_setup", p_null_args, SYS_io_uring_setup, EPERM, 0, false),
	PROBE("io_uring_enter", p_badargs, SYS_io_uring_enter, EPERM, 0, false),
	PROBE("io_uring_register", p_badargs, SYS_io_uring_register, EPERM, 0, false),
	PROBE("unshare(CLONE_NEWUSER)", p_unshare, CLONE_NEWUSER, EPERM, 0, false),
	PROBE("unshare(CLONE_NEWNS)", p_unshare, CLONE_NEWNS, EPERM, 0, false),
	PROBE("unshare(0)", p_unshare, 0, EPERM, 0, false),
	PROBE("setns(badfd)", p_badargs, SYS_setns, EPERM, 0, true),
	PROBE("clone(CLONE_NEWUSER)", p_clone, CLONE_NEWUSER, EPERM, 0, false),
	PROBE("clone(CLONE_NEWNS)", p_clone, CLONE_NEWNS, EPERM, 0, false),
	PROBE("clone(CLONE_NEWPID)", p_clone, CLONE_NEWPID, EPERM, 0, false),
	PROBE("clone(CLONE_NEWNET)", p_clone, CLONE_NEWNET, EPERM, 0, false),
	PROBE("clone(CLONE_NEWUTS)", p_clone, CLONE_NEWUTS, EPERM, 0, false),
	PROBE("clone(CLONE_NEWIPC)", p_clone, CLONE_NEWIPC, EPERM, 0, false),
	PROBE("clone(CLONE_NEWCGROUP)", p_clone, CLONE_NEWCGROUP, EPERM, 0, false),
	PROBE("clone(CLONE_NEWUSER|high bits)", p_clone, CLONE_NEWUSER | HIGH32, EPERM, 0, false),
	PROBE("clone(plain, as fork)", p_clone, 0, 0, 0, false),
	PROBE("clone3", p_clone3, 0, ENOSYS, 0, true),
	PROBE("fork", p_fork, 0, 0, 0, false),
	PROBE("syscall(SYS_fork)", p_fork_syscall, 0, 0, 0, false),
	PROBE("vfork", p_vfork, 0, 0, 0, false),
	PROBE("posix_spawn", p_posix_spawn, 0, 0, 0, false),
	PROBE("pthread_create", p_thread, 0, 0, 0, false),
	PROBE("socket(AF_UNIX)", p_socket, AF_UNIX, 0, 0, false),
	PROBE("socket(AF_INET)", p_socket_stream, AF_INET, 0, 0, false),
	PROBE("socket(AF_INET6)", p_socket_stream, AF_INET6, 0, EAFNOSUPPORT, false),
	PROBE("socket(AF_NETLINK, NETLINK_ROUTE)", p_netlink, NETLINK_ROUTE, 0, 0, false),
	PROBE("socket(AF_NETLINK, NETLINK_AUDIT)", p_netlink, NETLINK_AUDIT, EPERM, 0, true),
	PROBE("socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)", p_netlink, NETLINK_KOBJECT_UEVENT, EPERM, 0,
	      false),
	PROBE("socket(AF_NETLINK, NETLINK_ROUTE|high bits)", p_netlink, NETLINK_ROUTE | HIGH32, 0, 0,
	      false),
	PROBE("socket(AF_NETLINK|high, NETLINK_ROUTE|high)", p_netlink_high, NETLINK_ROUTE, 0, 0, false),
	PROBE("socket(AF_NETLINK|high, NETLINK_AUDIT|high)", p_netlink_high, NETLINK_AUDIT, EPERM, 0,
	      false),
	PROBE("socket(AF_NETLINK, protocol 32)", p_netlink, 32, EPERM, 0, false),
	PROBE("socket(AF_INET|high bits)", p_socket, AF_INET | HIGH32, 0, 0, false),
	PROBE("socket(AF_INET6|high bits)", p_socket, AF_INET6 | HIGH32, 0, EAFNOSUPPORT, false),
	PROBE("socket(AF_UNSPEC)", p_socket, AF_UNSPEC, EPERM, 0, false),
	PROBE("socket(AF_AX25)", p_socket, AF_AX25, EPERM, 0, false),
	PROBE("socket(AF_PACKET)", p_socket, AF_PACKET, EPERM, 0, false),
	PROBE("socket(AF_BLUETOOTH)", p_socket, AF_BLUETOOTH, EPERM, 0, false),
	PROBE("socket(AF_ALG)", p_socket, AF_ALG, EPERM, 0, false),
	PROBE("socket(AF_VSOCK)", p_socket, AF_VSOCK, EPERM, 0, false),
	PROBE("socket(AF_MCTP)", p_socket, 45, EPERM, 0, false),
	PROBE("socket(AF_MAX)", p_socket, AF_MAX, EPERM, 0, true),
	PROBE("socket(64)", p_socket, 64, EPERM, 0, false),
	PROBE("socket(1000)", p_socket, 1000, EPERM, 0, true),
	PROBE("socket(-1)", p_socket, -1, EPERM, 0, true),
	PROBE("socket(AF_PACKET|high bits)", p_socket, AF_PACKET | HIGH32, EPERM, 0, false),
	PROBE("socket(AF_UNIX|high bits)", p_socket, AF_UNIX | HIGH32, 0, 0, false),
	PROBE("ioctl(badfd, TIOCSTI)", p_ioctl, TIOCSTI, EPERM, 0, true),
	PROBE("ioctl(badfd, TIOCSTI|high bits)", p_ioctl, TIOCSTI | HIGH32, EPERM, 0, true),
	PROBE("ioctl(badfd, TIOCSTI|all high bits)", p_ioctl, (long)(TIOCSTI | 0xffffffff00000000UL),
	      EPERM, 0, true),
	PROBE("ioctl(badfd, TIOCLINUX)", p_ioctl, TIOCLINUX, EPERM, 0, true),
	PROBE("ioctl(badfd, TIOCLINUX|high bits)", p_ioctl, TIOCLINUX | HIGH32, EPERM, 0, true),
	PROBE("ioctl(badfd, FIONREAD)", p_ioctl, FIONREAD, EBADF, 0, false),
	PROBE("ioctl(badfd, TCGETS)", p_ioctl, TCGETS, EBADF, 0, false),
	PROBE("ioctl(badfd, TIOCSTI|0x80000000)", p_ioctl, TIOCSTI | 0x80000000L, EBADF, 0, false),
#if defined(__x86_64__)
	PROBE("x32 getpid", p_x32, 0, KILLED_BY(SIGSYS), 0, false),
#endif
};

/* What process_spawn: false changes, plus what it must leave alone. */
static const struct probe spawn_probes[] = {
	PROBE("fork", p_fork, 0, EPERM, 0, false),
	PROBE("syscall(SYS_fork)", p_fork_syscall, 0, EPERM, 0, false),
	PROBE("vfork", p_vfork, 0, EPERM, 0, false),
	PROBE("posix_spawn", p_posix_spawn, 0, EPERM, 0, false),
	PROBE("clone(plain, as fork)", p_clone, 0, EPERM, 0, false),
	PROBE("clone(CLONE_NEWUSER)", p_clone, CLONE_NEWUSER, EPERM, 0, false),
	PROBE("clone3", p_clone3, 0, ENOSYS, 0, true),
	PROBE("pthread_create", p_thread, 0, 0, 0, false),
	PROBE("getpid", p_getpid, 0, 0, 0, false),
	PROBE("ptrace(PTRACE_TRACEME)", p_ptrace_traceme, 0, EPERM, 0, false),
	PROBE("socket(AF_INET)", p_socket_stream, AF_INET, 0, 0, false),
};

/* Runs p in a child, under b when b is not NULL.  Returns 0, the errno, or KILLED_BY(signal). */
static int run_probe(const struct probe *p, const struct bpf *b)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* cmocka's handler would report a crash here as the child's own test run */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		if (b && bpf_load(b) < 0)
			_exit(250);
		errno = 0;
		long r = p->fn(p->arg);
		_exit(r < 0 ? (errno > 0 && errno < 250 ? errno : 251) : 0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		return KILLED_BY(WTERMSIG(st));
	assert_int_not_equal(WEXITSTATUS(st), 250); /* the filter did not load */
	return WEXITSTATUS(st);
}

static const char *result_text(int r, char *buf, size_t len)
{
	if (r < 0)
		snprintf(buf, len, "killed by %s", strsignal(-r));
	else
		snprintf(buf, len, "%s", r ? strerror(r) : "success");
	return buf;
}

static void run_table(const struct probe *t, size_t n, bool process_spawn)
{
	struct bpf b;
	bpf_get(process_spawn, &b);
	int failures = 0;
	for (size_t i = 0; i < n; i++) {
		int r = run_probe(&t[i], &b);
		if (r == t[i].expect || (t[i].also && r == t[i].also))
			continue;
		char got[128], want[128];
		print_error("line %d: %s: %s, expected %s\n", t[i].line, t[i].what,
			    result_text(r, got, sizeof got), result_text(t[i].expect, want, sizeof want));
		failures++;
	}
	free(b.insns);
	if (failures)
		fail_msg("%d probe(s) gave the wrong result", failures);
}

static void test_probes(void **state)
{
	(void)state;
	run_table(probes, N_ELEMS(probes), true);
}

static void test_probes_no_spawn(void **state)
{
	(void)state;
	run_table(spawn_probes, N_ELEMS(spawn_probes), false);
}

/* The probes marked distinct prove something only if, unfiltered, they give another result. */
static void test_probes_unfiltered(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMS(probes); i++) {
		if (!probes[i].distinct)
			continue;
		int r = run_probe(&probes[i], NULL);
		if (r == probes[i].expect)
			fail_msg("line %d: %s gives %d without the filter too: the probe proves nothing",
				 probes[i].line, probes[i].what, r);
	}
}

/* A syscall through the i386 entry on x86_64 is a foreign architecture: the process is killed. */
static void test_foreign_arch_killed(void **state)
{
	(void)state;
#if defined(__x86_64__)
	static const struct probe i386 = PROBE("int $0x80 getpid", p_i386, 0, 0, 0, false);
	int r = run_probe(&i386, NULL);
	if (r != 0) {
		print_message("i386 syscalls unavailable without the filter (%d): skipped\n", r);
		skip();
	}
	struct bpf b;
	bpf_get(true, &b);
	r = run_probe(&i386, &b);
	free(b.insns);
	assert_int_equal(r, KILLED_BY(SIGSYS));
#else
	print_message("no second syscall ABI to probe on this architecture: skipped\n");
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups_have_name_help_syscalls),
		cmocka_unit_test(test_syscalls_resolve),
		cmocka_unit_test(test_no_duplicates),
		cmocka_unit_test(test_group_names),
		cmocka_unit_test(test_filter_fd),
		cmocka_unit_test(test_probes),
		cmocka_unit_test(test_probes_no_spawn),
		cmocka_unit_test(test_probes_unfiltered),
		cmocka_unit_test(test_foreign_arch_killed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
