/* seccomp.c — the sandbox's seccomp filter: a table of named syscall groups compiled with libseccomp into BPF for bwrap --seccomp. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/sandbox/seccomp.h"

/*
 * Policy: everything is allowed (SCMP_ACT_ALLOW) but what a group below
 * names; a refused call fails with EPERM, as if a capability were missing,
 * so programs take their usual "not permitted" path instead of crashing.
 * Calls from a foreign architecture (i386 `int $0x80` on x86_64, x32) are
 * not filtered by the native rules, so they kill the process.
 * Refusals are not reported one by one: SECCOMP_RET_USER_NOTIF would hand
 * its listener fd to whoever installs the filter, and that is bwrap, not the
 * launcher; the launcher logs the refused groups' names at session start.
 * Sources: seccomp(2), seccomp_rule_add(3), seccomp_export_bpf(3).
 */

/* Where clone(2) takes its flags: the first argument, except on s390 (CLONE_BACKWARDS2). */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

/* The namespace flags of clone(2): each would give the agent a namespace of its own. */
static const uint64_t namespace_flags[] = {
	CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
	CLONE_NEWUTS, CLONE_NEWIPC,  CLONE_NEWCGROUP,
};

/* Socket domains the agent may open; every other domain is refused. */
static const uint32_t allowed_domains[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define REFUSE SCMP_ACT_ERRNO(EPERM)

/* One argument comparison, all fields set (libseccomp's SCMP_A* macros leave datum_b out). */
static struct scmp_arg_cmp arg_cmp(unsigned arg, enum scmp_compare op, scmp_datum_t a,
				   scmp_datum_t b)
{
	return (struct scmp_arg_cmp){ .arg = arg, .op = op, .datum_a = a, .datum_b = b };
}

/*
 * A rule function adds the rules that refuse (some calls of) syscall nr.
 * Returns 0 or libseccomp's -errno.  seccomp_rule_add_exact(3): the rule is
 * the one written here or an error, never one libseccomp rewrote.
 */
typedef int (*rule_fn)(scmp_filter_ctx ctx, int nr);

/* Every call fails with EPERM. */
static int refuse_always(scmp_filter_ctx ctx, int nr)
{
	return seccomp_rule_add_exact(ctx, REFUSE, nr, 0);
}

/*
 * clone3(2) takes its flags in a struct in memory, which a seccomp filter
 * cannot read (seccomp(2): BPF sees only the argument registers), so its
 * namespace flags cannot be checked.  ENOSYS makes glibc (>= 2.34) and other
 * runtimes fall back to clone(2), whose flags are a register we can check;
 * EPERM would be reported as a failure instead.  Flatpak and Docker's
 * default profile do the same.
 */
static int clone3_enosys(scmp_filter_ctx ctx, int nr)
{
	return seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
}

/* clone(2) with any namespace flag set: one masked test per flag (a rule ANDs its conditions). */
static int refuse_namespace_clone(scmp_filter_ctx ctx, int nr)
{
	for (size_t i = 0; i < N_ELEMS(namespace_flags); i++) {
		uint64_t f = namespace_flags[i];
		int r = seccomp_rule_add_exact(ctx, REFUSE, nr, 1,
					       arg_cmp(CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, f, f));
		if (r < 0)
			return r;
	}
	return 0;
}

/* clone(2) without CLONE_THREAD makes a process (fork, vfork, posix_spawn); threads are fine. */
static int refuse_process_clone(scmp_filter_ctx ctx, int nr)
{
	return seccomp_rule_add_exact(ctx, REFUSE, nr, 1,
				      arg_cmp(CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
}

/*
 * ioctl(2) TIOCSTI pushes input into a terminal (the shell outside runs it
 * once the agent exits) and TIOCLINUX can do the same on a virtual console
 * (ioctl_tty(2); bubblewrap refuses both).  The kernel reads the request as
 * an unsigned int, so the comparison masks the low 32 bits: a request with
 * high bits set must not slip past an exact 64-bit compare.
 */
static int refuse_tty_inject(scmp_filter_ctx ctx, int nr)
{
	static const unsigned long requests[] = { TIOCSTI, TIOCLINUX };
	for (size_t i = 0; i < N_ELEMS(requests); i++) {
		int r = seccomp_rule_add_exact(ctx, REFUSE, nr, 1,
					       arg_cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, requests[i]));
		if (r < 0)
			return r;
	}
	return 0;
}

/* True when v is one of the n values of set. */
static bool in_set(uint32_t v, const uint32_t *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == v)
			return true;
	return false;
}

/* Adds one refusal: cmp, and also (when not NULL) another condition on another argument. */
static int refuse_if(scmp_filter_ctx ctx, int nr, struct scmp_arg_cmp cmp,
		     const struct scmp_arg_cmp *also)
{
	struct scmp_arg_cmp conds[2] = { cmp, also ? *also : cmp };
	return seccomp_rule_add_exact_array(ctx, REFUSE, nr, also ? 2 : 1, conds);
}

/*
 * Refuses the call unless its int argument `arg` is one of allowed[] (and,
 * with also, only when that condition holds too).  The kernel reads an int
 * argument as the register's low 32 bits, and the upper half is garbage the
 * caller may leave there (the x86_64 ABI leaves it undefined; glibc's
 * assembly stubs such as socket pass it through), so every comparison is
 * masked to the low 32 bits: a 64-bit compare would refuse honest calls at
 * random and let AF_PACKET | 1 << 32 through an equality test.  BPF has no
 * "not in set" and libseccomp no masked >=, so the complement is written as
 * masked equalities: each value below 2^K that is not allowed (2^K the first
 * power of two above the largest allowed value), then one rule per bit from
 * K to 31 (any such bit set means a value >= 2^K, e.g. every new family).
 */
static int refuse_int_outside(scmp_filter_ctx ctx, int nr, unsigned arg, const uint32_t *allowed,
			      size_t n, const struct scmp_arg_cmp *also)
{
	uint32_t max = 0;
	for (size_t i = 0; i < n; i++)
		max = allowed[i] > max ? allowed[i] : max;
	unsigned k = 0;
	while (k < 32 && (max >> k) != 0)
		k++;
	int r = 0;
	for (uint32_t v = 0; v < (1u << k) && r == 0; v++)
		if (!in_set(v, allowed, n))
			r = refuse_if(ctx, nr, arg_cmp(arg, SCMP_CMP_MASKED_EQ, 0xffffffffu, v), also);
	for (unsigned b = k; b < 32 && r == 0; b++)
		r = refuse_if(ctx, nr, arg_cmp(arg, SCMP_CMP_MASKED_EQ, 1u << b, 1u << b), also);
	return r;
}

/*
 * socket(2) in any domain but allowed_domains, and AF_NETLINK with any
 * protocol but NETLINK_ROUTE (what getaddrinfo and `ip` need; NETLINK_AUDIT,
 * uevents, netfilter and the rest reach kernel subsystems the agent has no
 * business with).  An allow-list written as refusals, so a family a newer
 * kernel adds is refused too.
 */
static int refuse_socket_domains(scmp_filter_ctx ctx, int nr)
{
	static const uint32_t route[] = { NETLINK_ROUTE };
	int r = refuse_int_outside(ctx, nr, 0, allowed_domains, N_ELEMS(allowed_domains), NULL);
	if (r < 0)
		return r;
	struct scmp_arg_cmp netlink = arg_cmp(0, SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_NETLINK);
	return refuse_int_outside(ctx, nr, 2, route, N_ELEMS(route), &netlink);
}

/*
 * setid_modes: a file with S_ISUID or S_ISGID made inside the sandbox
 * outlives the session on the host (a setuid-root shell in the workspace).
 * Each call that takes a mode is refused when the mode has either bit: one
 * masked test per bit (a single masked compare cannot say "either").  The
 * kernel reads the mode as a umode_t, so the masks touch its low bits only.
 * mkdir and mkdirat are not refused: the kernel drops S_ISUID and S_ISGID
 * from their mode (mkdir(2): mode & ~umask & 01777).  What no mode argument
 * carries is not covered either: the kernel itself gives a directory made in
 * a setgid directory S_ISGID (inode_init_owner), and the workspace holds no
 * setgid directory unless the user made one.
 */
static int refuse_setid_bits(scmp_filter_ctx ctx, int nr, unsigned mode_arg,
			     const struct scmp_arg_cmp *also)
{
	static const uint64_t bits[] = { S_ISUID, S_ISGID };
	int r = 0;
	for (size_t i = 0; i < N_ELEMS(bits) && r == 0; i++)
		r = refuse_if(ctx, nr, arg_cmp(mode_arg, SCMP_CMP_MASKED_EQ, bits[i], bits[i]), also);
	return r;
}

/* chmod, fchmod, creat, mknod: the mode is the second argument. */
static int refuse_setid_arg1(scmp_filter_ctx ctx, int nr)
{
	return refuse_setid_bits(ctx, nr, 1, NULL);
}

/* fchmodat, fchmodat2, mknodat: the mode is the third argument. */
static int refuse_setid_arg2(scmp_filter_ctx ctx, int nr)
{
	return refuse_setid_bits(ctx, nr, 2, NULL);
}

/*
 * open and openat use their mode only with O_CREAT or O_TMPFILE in flags
 * (open(2); anything else in the mode register is ignored, so it must not
 * be refused): one rule per flag and bit, each ANDing a masked test on the
 * flags with one on the mode.  __O_TMPFILE is O_TMPFILE without the
 * O_DIRECTORY it includes.
 */
static int refuse_setid_open_at(scmp_filter_ctx ctx, int nr, unsigned flags_arg)
{
	static const uint64_t creating[] = { O_CREAT, O_TMPFILE & ~(uint64_t)O_DIRECTORY };
	int r = 0;
	for (size_t i = 0; i < N_ELEMS(creating) && r == 0; i++) {
		struct scmp_arg_cmp f = arg_cmp(flags_arg, SCMP_CMP_MASKED_EQ, creating[i], creating[i]);
		r = refuse_setid_bits(ctx, nr, flags_arg + 1, &f);
	}
	return r;
}

static int refuse_setid_open(scmp_filter_ctx ctx, int nr)
{
	return refuse_setid_open_at(ctx, nr, 1);
}

static int refuse_setid_openat(scmp_filter_ctx ctx, int nr)
{
	return refuse_setid_open_at(ctx, nr, 2);
}

/*
 * openat2(2) takes flags and mode in a struct open_how in memory, which the
 * filter cannot read, so it fails with ENOSYS, as on kernels before 5.6:
 * callers that use it (systemd, libpathrs, Rust's rustix) fall back to
 * openat on ENOSYS, which is checked.  glibc 2.36 has no openat2 wrapper and
 * none of its functions call it; CPython's os.open calls openat.
 */
static int openat2_enosys(scmp_filter_ctx ctx, int nr)
{
	return seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
}

/* One syscall of a group and how it is refused. */
struct seccomp_syscall {
	const char *name; /* as seccomp_syscall_resolve_name(3) knows it */
	rule_fn rule;     /* NULL: refuse_always */
};

/* A named group of refused syscalls, the unit the log and `doctor` name. */
struct seccomp_group {
	const char *name;
	const char *help; /* why it is refused, one line */
	bool spawn_only;  /* applied only with process_spawn: false */
	const struct seccomp_syscall *syscalls; /* terminated by a NULL name */
};

#define SYSCALLS(...) ((const struct seccomp_syscall[]){ __VA_ARGS__, { NULL, NULL } })

static const struct seccomp_group groups[] = {
	{ "ptrace", "trace another process: read its memory, change its registers", false,
	  SYSCALLS({ "ptrace", NULL }) },
	{ "process_vm", "read or write another process's memory directly", false,
	  SYSCALLS({ "process_vm_readv", NULL }, { "process_vm_writev", NULL }) },
	{ "mount", "change the mount table: undo the sandbox's read-only binds and masks", false,
	  SYSCALLS({ "mount", NULL }, { "umount", NULL }, { "umount2", NULL }, { "pivot_root", NULL },
		   { "move_mount", NULL }, { "open_tree", NULL }, { "fsopen", NULL }, { "fsmount", NULL },
		   { "fsconfig", NULL }, { "fspick", NULL }, { "mount_setattr", NULL }) },
	{ "bpf", "load eBPF programs: kernel attack surface, tracing of other processes", false,
	  SYSCALLS({ "bpf", NULL }) },
	{ "perf", "performance counters: side channels and a history of kernel bugs", false,
	  SYSCALLS({ "perf_event_open", NULL }) },
	{ "kexec", "load and boot another kernel", false,
	  SYSCALLS({ "kexec_load", NULL }, { "kexec_file_load", NULL }) },
	{ "module", "load or unload kernel modules", false,
	  SYSCALLS({ "init_module", NULL }, { "finit_module", NULL }, { "delete_module", NULL }) },
	{ "keyring", "kernel keyrings are not namespaced: the user's keys outside the sandbox", false,
	  SYSCALLS({ "keyctl", NULL }, { "add_key", NULL }, { "request_key", NULL }) },
	{ "userfaultfd", "handle page faults in user space: widens kernel race windows for exploits",
	  false, SYSCALLS({ "userfaultfd", NULL }) },
	{ "io_uring", "io_uring: its operations bypass this filter, and a history of kernel bugs", false,
	  SYSCALLS({ "io_uring_setup", NULL }, { "io_uring_enter", NULL },
		   { "io_uring_register", NULL }) },
	{ "namespace", "new or other namespaces: unshare, setns, clone with namespace flags, clone3",
	  false,
	  SYSCALLS({ "unshare", NULL }, { "setns", NULL }, { "clone", refuse_namespace_clone },
		   { "clone3", clone3_enosys }) },
	{ "tty_inject", "ioctl TIOCSTI / TIOCLINUX: type commands into the terminal outside", false,
	  SYSCALLS({ "ioctl", refuse_tty_inject }) },
	{ "socket_family", "sockets other than AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK/NETLINK_ROUTE",
	  false, SYSCALLS({ "socket", refuse_socket_domains }) },
	{ "setid_modes", "setuid / setgid modes in chmod, open O_CREAT, creat, mknod: they outlive the session",
	  false,
	  SYSCALLS({ "chmod", refuse_setid_arg1 }, { "fchmod", refuse_setid_arg1 },
		   { "fchmodat", refuse_setid_arg2 }, { "fchmodat2", refuse_setid_arg2 },
		   { "creat", refuse_setid_arg1 }, { "open", refuse_setid_open },
		   { "openat", refuse_setid_openat }, { "openat2", openat2_enosys },
		   { "mknod", refuse_setid_arg1 }, { "mknodat", refuse_setid_arg2 }) },
	{ "process_spawn", "policy process_spawn: false: fork, vfork and non-thread clone", true,
	  SYSCALLS({ "fork", NULL }, { "vfork", NULL }, { "clone", refuse_process_clone }) },
};

#define NGROUPS N_ELEMS(groups)

/*
 * Resolves name for the native architecture.  Returns its number, or a
 * negative libseccomp pseudo-number when this architecture has no such
 * syscall (umount on x86_64, fork on aarch64: nothing to refuse), or
 * __NR_SCMP_ERROR when libseccomp does not know the name at all.
 */
static int resolve(const char *name)
{
	return seccomp_syscall_resolve_name(name);
}

/* Adds one group's rules.  A rule that cannot be added is an error, never a weaker filter. */
static int add_group(scmp_filter_ctx ctx, const struct seccomp_group *g, char *err, size_t errlen)
{
	for (const struct seccomp_syscall *s = g->syscalls; s->name; s++) {
		int nr = resolve(s->name);
		/* fchmodat2 (Linux 6.6) is missing from older libseccomp tables: then the
		 * filter cannot name it, and it stays allowed (chmod and fchmodat are refused). */
		if (nr == __NR_SCMP_ERROR && strcmp(s->name, "fchmodat2") == 0)
			continue;
		if (nr == __NR_SCMP_ERROR) {
			snprintf(err, errlen, "seccomp group %s: libseccomp does not know syscall %s",
				 g->name, s->name);
			return -EINVAL;
		}
		if (nr < 0)
			continue;
		int r = (s->rule ? s->rule : refuse_always)(ctx, nr);
		if (r < 0) {
			snprintf(err, errlen, "seccomp group %s: cannot add the rule for %s: %s", g->name,
				 s->name, strerror(-r));
			return r;
		}
	}
	return 0;
}

/*
 * Filter attributes.  A foreign architecture's syscall numbers mean other
 * calls, so they kill (seccomp(2): "always check the arch"); seccomp_init
 * adds only the native architecture, and on x86_64 libseccomp's generated
 * code also sends x32 numbers (__X32_SYSCALL_BIT) to the bad-arch action.
 */
static int set_attributes(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0) {
		snprintf(err, errlen, "seccomp: cannot make foreign architectures kill: %s", strerror(-r));
		return r;
	}
	/* A binary tree of syscall numbers instead of a linear scan: speed only, so failure is fine. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	return 0;
}

/* Builds the filter context for opt.  Returns it, or NULL with *rc and a message in err. */
static scmp_filter_ctx build_filter(const struct seccomp_options *opt, int *rc, char *err,
				    size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(err, errlen, "seccomp: cannot create a filter (out of memory?)");
		*rc = -ENOMEM;
		return NULL;
	}
	*rc = set_attributes(ctx, err, errlen);
	for (size_t i = 0; i < NGROUPS && *rc == 0; i++)
		if (!groups[i].spawn_only || !opt->process_spawn)
			*rc = add_group(ctx, &groups[i], err, errlen);
	if (*rc < 0) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * Writes the BPF to a memfd that bwrap inherits (so not close-on-exec) and
 * reads from offset 0.  Sealed against writes, so nothing in the launcher can
 * change the program between here and bwrap.
 */
static int export_memfd(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	int fd = memfd_create("airlock-seccomp", MFD_ALLOW_SEALING);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "seccomp: memfd_create: %s", strerror(e));
		return -e;
	}
	int r = seccomp_export_bpf(ctx, fd);
	if (r < 0) {
		snprintf(err, errlen, "seccomp: cannot export the filter: %s", strerror(-r));
	} else if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
		   lseek(fd, 0, SEEK_SET) != 0) {
		r = -errno;
		snprintf(err, errlen, "seccomp: cannot seal the filter's memfd: %s", strerror(errno));
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int seccomp_filter_fd(const struct seccomp_options *opt, char *err, size_t errlen)
{
	int rc;
	scmp_filter_ctx ctx = build_filter(opt, &rc, err, errlen);
	if (!ctx)
		return rc;
	int fd = export_memfd(ctx, err, errlen);
	seccomp_release(ctx);
	return fd;
}

/*
 * The groups refused whatever the policy says.  "process_spawn" is not among
 * them: it is refused only when the policy's process_spawn is false, and the
 * launcher names it itself then.
 */
static const char *group_names[NGROUPS + 1];
static pthread_once_t group_names_once = PTHREAD_ONCE_INIT;

static void fill_group_names(void)
{
	size_t n = 0;
	for (size_t i = 0; i < NGROUPS; i++)
		if (!groups[i].spawn_only)
			group_names[n++] = groups[i].name;
	group_names[n] = NULL;
}

const char *const *seccomp_group_names(void)
{
	pthread_once(&group_names_once, fill_group_names);
	return group_names;
}
