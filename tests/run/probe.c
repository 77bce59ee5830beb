/* probe.c — one small program for airlock run's integration tests: each subcommand tries one
 * thing and prints what happened ("read OK n=5 data=...", "connect ERR ECONNREFUSED").
 *
 * Built twice by tests/run/run.sh: dynamically (the shim sees it) and with `gcc -static` (the
 * shim cannot: only the kernel layer stands between it and the machine).
 *
 *   probe read PATH            open + read, prints the first bytes read
 *   probe rawread PATH         the same through syscall(SYS_openat) and syscall(SYS_read): no
 *                              libc wrapper a shim could hook (as Bun and Go do their I/O)
 *   probe write PATH           open O_WRONLY|O_CREAT|O_APPEND and write "x"
 *   probe rawwrite PATH        the same through raw syscall(SYS_openat) and syscall(SYS_write)
 *   probe kill PID             raw kill(PID, 0): may this process signal PID?
 *   probe abstract NAME        connect to the abstract unix socket @NAME (SOCK_STREAM)
 *   probe unix PATH            connect to the unix socket file PATH (SOCK_STREAM)
 *   probe rawunix PATH         the same through raw syscall(SYS_socket) and syscall(SYS_connect)
 *   probe connect IP PORT      TCP connect to IP:PORT
 *   probe tiocsti PATH         ioctl(open(PATH), TIOCSTI, "x"); PATH "-": fd 0 (all ioctls)
 *   probe tiocsti-hi PATH      the same with bit 32 set in the request (the kernel ignores it)
 *   probe tioclinux PATH       ioctl(open(PATH), TIOCLINUX, ...)
 *   probe tcgets PATH          ioctl(open(PATH), TCGETS, ...): a control, never refused
 *   probe fork | vfork | clone3 | thread
 *   probe seccomp              one line per syscall group the filter refuses and per socket
 *                              family it keeps: "NAME OK" / "NAME ERR ENAME"
 *   probe int80                getpid through the i386 entry (int $0x80): "int80 OK" when it returns
 *   probe setid DIR            in DIR: each way to give a file S_ISUID or S_ISGID (chmod,
 *                              fchmod, raw fchmodat and fchmodat2, open/openat O_CREAT, O_TMPFILE,
 *                              creat, mknod; mkdir: the kernel drops them), then the harmless controls (chmod 0755, open
 *                              O_CREAT 0644, open without O_CREAT with setid bits in the ignored
 *                              mode); one "NAME OK" / "NAME ERR ENAME" line each; openat2 last
 *
 * The destroyers of the undo cases (tests/run/undo.sh) go on past what they cannot destroy (as
 * rm -rf does: a mount point is EBUSY) and print "NAME OK n=COUNT" (how many names or files they
 * destroyed), or "NAME ERR ENAME n=COUNT" with the first error; exit 0 either way.
 *   probe rmtree DIR...        removes each DIR's content and DIR itself, depth first, with
 *                              opendir/readdir/unlinkat (libc, as rm -r does); "." empties the
 *                              working directory (it cannot remove itself: EINVAL, not counted)
 *   probe rawrmtree DIR...     the same through syscall(SYS_openat), syscall(SYS_getdents64) and
 *                              syscall(SYS_unlinkat) only
 *   probe trunc FILE...        open O_WRONLY|O_TRUNC and write "garbage\n" (libc)
 *   probe rawtrunc FILE...     the same through syscall(SYS_openat) and syscall(SYS_write)
 *   probe clobber FILE...      chmod u+w, then overwrite the first bytes in place (O_WRONLY, no
 *                              O_TRUNC: the size stays) with "CLOBBERED" (libc), as a tool
 *                              "repairing" a read-only .git/objects file would
 *   probe rawclobber FILE...   the same through syscall(SYS_fchmodat), syscall(SYS_openat),
 *                              syscall(SYS_pwrite64)
 *   probe rename FROM TO       rename(3) over an existing TO (libc)
 *   probe rawrename FROM TO    syscall(SYS_renameat2, ..., 0)
 *   probe exec PROG ARG...     syscall(SYS_execve, PROG, {PROG, ARG...}, environ): runs PROG with
 *                              no libc exec wrapper a shim could hook in the caller; prints
 *                              "exec ERR ENAME" only when the exec fails
 * Always exits 0 when the subcommand ran, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <stddef.h>
#include <termios.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

static int result(const char *what, long r, int e)
{
	if (r < 0)
		printf("%s ERR %s\n", what, ename(e));
	else
		printf("%s OK\n", what);
	return 0;
}

static int do_read(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return result("read", -1, errno);
	char buf[256];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n < 0)
		return result("read", -1, errno);
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\n' || buf[i] < 32)
			buf[i] = '.';
	printf("read OK n=%zd data=%s\n", n, buf);
	return 0;
}

static int do_rawread(const char *path)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return result("rawread", -1, errno);
	char buf[256];
	long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	if (n < 0)
		return result("rawread", -1, errno);
	buf[n] = '\0';
	for (long i = 0; i < n; i++)
		if (buf[i] == '\n' || buf[i] < 32)
			buf[i] = '.';
	printf("rawread OK n=%ld data=%s\n", n, buf);
	return 0;
}

static int do_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return result("write", -1, errno);
	ssize_t n = write(fd, "x", 1);
	return result("write", n < 0 ? -1 : 0, errno);
}

static int do_rawwrite(const char *path)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return result("rawwrite", -1, errno);
	long n = syscall(SYS_write, fd, "x", 1);
	return result("rawwrite", n < 0 ? -1 : 0, errno);
}

static int do_abstract(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	if (len + 1 > sizeof sa.sun_path)
		return 2;
	memcpy(sa.sun_path + 1, name, len); /* sun_path[0] == '\0': the abstract namespace */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0)
		return result("abstract", -1, errno);
	int r = connect(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len));
	return result("abstract", r, errno);
}

/* connect(2) to the socket file path, through libc or (raw) straight through syscall(2). */
static int do_unix(const char *what, const char *path, bool raw)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	if (len + 1 > sizeof sa.sun_path)
		return 2;
	memcpy(sa.sun_path, path, len + 1);
	long s = raw ? syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0) : socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0)
		return result(what, -1, errno);
	long r = raw ? syscall(SYS_connect, s, &sa, sizeof sa)
		     : connect((int)s, (struct sockaddr *)&sa, sizeof sa);
	return result(what, r, errno);
}

static int do_connect(const char *ip, const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		return 2;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return result("socket", -1, errno);
	int r = connect(s, (struct sockaddr *)&sa, sizeof sa);
	int e = errno;
	if (r == 0)
		(void)!write(s, "probe\n", 6);
	return result("connect", r, e);
}

static int do_ioctl(const char *what, const char *path, unsigned long req, void *arg)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_NOCTTY);
	if (fd < 0)
		return result("open", -1, errno);
	long r = syscall(SYS_ioctl, fd, req, arg);
	return result(what, r, errno);
}

/* Each try returns the syscall's result; errno is kept for the report. */
static void try(const char *name, long r)
{
	int e = errno;
	if (r < 0)
		printf("%s ERR %s\n", name, ename(e));
	else
		printf("%s OK\n", name);
	errno = 0;
}

static long try_socket(int family, int type, int proto)
{
	int s = socket(family, type, proto);
	int e = errno;
	if (s >= 0)
		close(s);
	errno = e;
	return s;
}

/*
 * Every try is harmless where it is NOT refused (the probe also runs outside the sandbox):
 * mount targets a directory that does not exist (the kernel says ENOENT, the filter EPERM),
 * keyctl only looks a keyring up, unshare affects this process alone.
 */
static int do_seccomp(void)
{
	char buf[8] = { 0 };
	struct iovec local = { buf, sizeof buf }, remote = { buf, sizeof buf };
	uint32_t uring_params[30] = { 0 }; /* struct io_uring_params, 120 bytes */
	uint32_t perf_attr[32] = { 0 };    /* struct perf_event_attr */
	perf_attr[1] = 128;                /* size */
	/* refused groups: each must be EPERM inside */
	try("ptrace", ptrace(PTRACE_PEEKDATA, getppid(), NULL, NULL) == -1 && errno ? -1 : 0);
	try("process_vm_readv", process_vm_readv(getppid(), &local, 1, &remote, 1, 0));
	try("mount", mount("none", "/nonexistent/airlock-probe", "tmpfs", MS_RDONLY, NULL));
	try("unshare", unshare(CLONE_NEWUSER));
	try("bpf", syscall(SYS_bpf, 0, NULL, 0));
	try("perf_event_open", syscall(SYS_perf_event_open, perf_attr, 0, -1, -1, 0));
	try("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0 /* don't create */));
	try("userfaultfd", syscall(SYS_userfaultfd, 0));
	try("io_uring_setup", syscall(SYS_io_uring_setup, 1, uring_params));
	try("socket_af_alg", try_socket(38 /* AF_ALG */, SOCK_SEQPACKET, 0));
	try("socket_af_packet", try_socket(17 /* AF_PACKET */, SOCK_DGRAM, 0));
	try("socket_netlink_uevent", try_socket(AF_NETLINK, SOCK_RAW, 15 /* KOBJECT_UEVENT */));
	/* kept: each must work inside */
	try("socket_unix", try_socket(AF_UNIX, SOCK_STREAM, 0));
	try("socket_inet", try_socket(AF_INET, SOCK_STREAM, 0));
	try("socket_inet6", try_socket(AF_INET6, SOCK_DGRAM, 0));
	try("socket_netlink_route", try_socket(AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */));
	try("mmap", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED ? -1 : 0);
	return 0;
}

static int do_int80(void)
{
#if defined(__x86_64__)
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) /* i386 getpid */ : "memory");
	return result("int80", r < 0 ? -1 : 0, (int)-r);
#else
	printf("int80 ERR ENOSYS\n");
	return 0;
#endif
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* A regular file DIR/NAME, 0644, made without setid bits; prints nothing. */
static const char *plain(const char *dir, const char *name)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	return path;
}

static int do_setid(const char *dir)
{
	char p[4096];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return result("open-dir", -1, errno);
	try("chmod_4755", chmod(plain(dir, "chmod"), 04755));
	try("chmod_2755", chmod(plain(dir, "chmod-g"), 02755));
	int fd = open(plain(dir, "fchmod"), O_RDONLY);
	try("fchmod_4755", fchmod(fd, 04755));
	close(fd);
	plain(dir, "fchmodat");
	try("fchmodat_4755", syscall(SYS_fchmodat, dfd, "fchmodat", 04755));
	plain(dir, "fchmodat2");
	try("fchmodat2_6755", syscall(SYS_fchmodat2, dfd, "fchmodat2", 06755, 0));
	snprintf(p, sizeof p, "%s/open", dir);
	try("open_creat_4755", syscall(SYS_open, p, O_WRONLY | O_CREAT, 04755));
	try("openat_creat_2755", syscall(SYS_openat, dfd, "openat", O_WRONLY | O_CREAT | O_EXCL, 02755));
	try("openat_tmpfile_4755", syscall(SYS_openat, dfd, ".", O_TMPFILE | O_WRONLY, 04755));
	snprintf(p, sizeof p, "%s/creat", dir);
	try("creat_4755", syscall(SYS_creat, p, 04755));
	snprintf(p, sizeof p, "%s/mkdir", dir);
	try("mkdir_2755", syscall(SYS_mkdir, p, 02755));
	try("mkdirat_4755", syscall(SYS_mkdirat, dfd, "mkdirat", 04755));
	try("mknodat_4755", syscall(SYS_mknodat, dfd, "mknodat", S_IFREG | 04755, 0));
	/* controls: each must work */
	try("chmod_0755", chmod(plain(dir, "plain"), 0755));
	snprintf(p, sizeof p, "%s/plain-new", dir);
	try("open_creat_0644", open(p, O_WRONLY | O_CREAT, 0644));
	try("open_nocreat_junkmode", syscall(SYS_open, p, O_RDONLY, 04755));
	snprintf(p, sizeof p, "%s/plain-dir", dir);
	try("mkdir_0755", mkdir(p, 0755));
	uint64_t how[3] = { O_WRONLY | O_CREAT, 04755, 0 }; /* struct open_how */
	try("openat2_4755", syscall(SYS_openat2, dfd, "openat2", how, sizeof how));
	return 0;
}

/* ---- the destroyers (undo) ---------------------------------------------------------------- */

/* struct linux_dirent64, as getdents64(2) fills it */
struct dirent64_raw {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static long destroyed;
static int first_err; /* the first errno a destroyer met (it goes on, as rm -rf does) */

static void note_err(void)
{
	if (!first_err)
		first_err = errno;
}

/* Empties the directory open at dfd (closed here), depth first, going on past what it cannot
 * remove (a mount point: EBUSY); libc or raw syscalls. */
static void empty_dir(int dfd, bool raw)
{
	if (!raw) {
		DIR *d = fdopendir(dfd);
		if (!d) {
			note_err();
			close(dfd);
			return;
		}
		/* passes until one removes nothing: readdir may skip entries while the directory
		 * changes under it */
		for (long before = -1; before != destroyed;) {
			before = destroyed;
			rewinddir(d);
			struct dirent *e;
			while ((e = readdir(d)) != NULL) {
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
					continue;
				if (e->d_type == DT_DIR) {
					int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
					if (sub < 0) {
						note_err();
						continue;
					}
					empty_dir(sub, false);
					if (unlinkat(dfd, e->d_name, AT_REMOVEDIR) < 0) {
						note_err();
						continue;
					}
				} else if (unlinkat(dfd, e->d_name, 0) < 0) {
					note_err();
					continue;
				}
				destroyed++;
			}
		}
		closedir(d);
		return;
	}
	/* raw: after a listing that removed something, list again from the start (the offsets
	 * changed under it), until one removes nothing */
	char buf[32768];
	bool any = true;
	while (any) {
		any = false;
		syscall(SYS_lseek, dfd, 0, SEEK_SET);
		long n;
		while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64_raw *e = (struct dirent64_raw *)(buf + off);
				off += e->d_reclen;
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
					continue;
				long r;
				if (e->d_type == DT_DIR) {
					long sub = syscall(SYS_openat, dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
					if (sub >= 0)
						empty_dir((int)sub, true);
					r = sub < 0 ? -1 : syscall(SYS_unlinkat, dfd, e->d_name, AT_REMOVEDIR);
				} else {
					r = syscall(SYS_unlinkat, dfd, e->d_name, 0);
				}
				if (r < 0) {
					note_err();
					continue;
				}
				destroyed++;
				any = true;
			}
		}
		if (n < 0) {
			note_err();
			break;
		}
	}
	syscall(SYS_close, dfd);
}

/* The destroyers' report: "NAME OK n=COUNT", or "NAME ERR ENAME n=COUNT" when something could
 * not be destroyed (the rest was). */
static int report(const char *what, long n)
{
	if (first_err)
		printf("%s ERR %s n=%ld\n", what, ename(first_err), n);
	else
		printf("%s OK n=%ld\n", what, n);
	return 0;
}

static int do_rmtree(const char *what, char **dirs, int n, bool raw)
{
	destroyed = 0;
	for (int i = 0; i < n; i++) {
		long fd = raw ? syscall(SYS_openat, AT_FDCWD, dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			      : open(dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			note_err();
			continue;
		}
		empty_dir((int)fd, raw);
		if (!strcmp(dirs[i], "."))
			continue;
		long r = raw ? syscall(SYS_unlinkat, AT_FDCWD, dirs[i], AT_REMOVEDIR) : rmdir(dirs[i]);
		if (r < 0)
			note_err();
		else
			destroyed++;
	}
	return report(what, destroyed);
}

static int do_trunc(const char *what, char **files, int n, bool raw)
{
	static const char junk[] = "garbage\n";
	long done = 0;
	for (int i = 0; i < n; i++) {
		long fd = raw ? syscall(SYS_openat, AT_FDCWD, files[i], O_WRONLY | O_TRUNC | O_CLOEXEC)
			      : open(files[i], O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd < 0) {
			note_err();
			continue;
		}
		long w = raw ? syscall(SYS_write, fd, junk, sizeof junk - 1) : write((int)fd, junk, sizeof junk - 1);
		if (w < 0)
			note_err();
		else
			done++;
		raw ? syscall(SYS_close, fd) : close((int)fd);
	}
	return report(what, done);
}

/*
 * [raw]procfd FILE...: each file opened read-only, then opened again for writing through
 * /proc/PID/fd/N (PID: its own, as its pid namespace numbers it; a magic link) with O_TRUNC,
 * and overwritten with garbage.
 */
static int do_procfd(const char *what, char **files, int n, bool raw)
{
	static const char junk[] = "garbage\n";
	long done = 0;
	for (int i = 0; i < n; i++) {
		long ro = raw ? syscall(SYS_openat, AT_FDCWD, files[i], O_RDONLY | O_CLOEXEC)
			      : open(files[i], O_RDONLY | O_CLOEXEC);
		if (ro < 0) {
			note_err();
			continue;
		}
		char via[64];
		snprintf(via, sizeof via, "/proc/%ld/fd/%ld", raw ? syscall(SYS_getpid) : (long)getpid(), ro);
		long fd = raw ? syscall(SYS_openat, AT_FDCWD, via, O_WRONLY | O_TRUNC | O_CLOEXEC)
			      : open(via, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd >= 0 && (raw ? syscall(SYS_write, fd, junk, sizeof junk - 1)
				    : write((int)fd, junk, sizeof junk - 1)) == (long)sizeof junk - 1)
			done++;
		else
			note_err();
		if (fd >= 0)
			close((int)fd);
		close((int)ro);
	}
	return report(what, done);
}

/*
 * deeptrunc FILE: FILE moved into a new directory so deep that its path no longer fits
 * PATH_MAX from the root, truncated there through its short relative name, and moved back.
 */
static int do_deeptrunc(const char *file)
{
	static const char junk[] = "garbage\n";
	char name[201];
	memset(name, 'd', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	int top = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (top < 0 || (mkdir("deep", 0755) < 0 && errno != EEXIST) || chdir("deep") < 0)
		return result("deeptrunc", -1, errno);
	for (int i = 0; i < 24; i++)
		if ((mkdir(name, 0755) < 0 && errno != EEXIST) || chdir(name) < 0)
			return result("deeptrunc", -1, errno);
	if (renameat(top, file, AT_FDCWD, "victim") < 0)
		return result("deeptrunc", -1, errno);
	int fd = open("victim", O_WRONLY | O_TRUNC | O_CLOEXEC);
	int e = errno;
	if (fd >= 0) {
		if (write(fd, junk, sizeof junk - 1) < 0)
			e = errno;
		close(fd);
	}
	if (renameat(AT_FDCWD, "victim", top, file) < 0)
		return result("deeptrunc", -1, errno);
	return result("deeptrunc", fd, e);
}

static int do_clobber(const char *what, char **files, int n, bool raw)
{
	static const char junk[] = "CLOBBERED";
	long done = 0;
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(files[i], &st) < 0) {
			note_err();
			continue;
		}
		mode_t m = (st.st_mode & 07777) | S_IWUSR;
		long r = raw ? syscall(SYS_fchmodat, AT_FDCWD, files[i], m) : chmod(files[i], m);
		long fd = r < 0 ? -1
				: raw ? syscall(SYS_openat, AT_FDCWD, files[i], O_WRONLY | O_CLOEXEC)
				      : open(files[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			note_err();
			continue;
		}
		size_t len = (size_t)st.st_size < sizeof junk - 1 ? (size_t)st.st_size : sizeof junk - 1;
		long w = raw ? syscall(SYS_pwrite64, fd, junk, len, 0) : pwrite((int)fd, junk, len, 0);
		if (w < 0)
			note_err();
		else
			done++;
		raw ? syscall(SYS_close, fd) : close((int)fd);
	}
	return report(what, done);
}

static void *thread_main(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "read") && argc == 3)
		return do_read(argv[2]);
	if (!strcmp(cmd, "getenv") && argc == 3) {
		const char *v = getenv(argv[2]);
		printf("getenv %s=%s\n", argv[2], v ? v : "");
		return 0;
	}
	if (!strcmp(cmd, "rawread") && argc == 3)
		return do_rawread(argv[2]);
	if (!strcmp(cmd, "write") && argc == 3)
		return do_write(argv[2]);
	if (!strcmp(cmd, "rawwrite") && argc == 3)
		return do_rawwrite(argv[2]);
	if (!strcmp(cmd, "kill") && argc == 3) {
		long r = syscall(SYS_kill, atoi(argv[2]), 0);
		return result("kill", r, errno);
	}
	if (!strcmp(cmd, "abstract") && argc == 3)
		return do_abstract(argv[2]);
	if (!strcmp(cmd, "unix") && argc == 3)
		return do_unix("unix", argv[2], false);
	if (!strcmp(cmd, "rawunix") && argc == 3)
		return do_unix("rawunix", argv[2], true);
	if (!strcmp(cmd, "connect") && argc == 4)
		return do_connect(argv[2], argv[3]);
	if (!strcmp(cmd, "tiocsti") && argc == 3)
		return do_ioctl("ioctl", argv[2], TIOCSTI, "x");
	if (!strcmp(cmd, "tiocsti-hi") && argc == 3)
		return do_ioctl("ioctl", argv[2], (unsigned long)TIOCSTI | (1UL << 32), "x");
	if (!strcmp(cmd, "tioclinux") && argc == 3) {
		char sub = 6; /* TIOCL_GETSHIFTSTATE: harmless */
		return do_ioctl("ioctl", argv[2], TIOCLINUX, &sub);
	}
	if (!strcmp(cmd, "tcgets") && argc == 3) {
		struct termios t;
		return do_ioctl("ioctl", argv[2], TCGETS, &t);
	}
	if (!strcmp(cmd, "fork") || !strcmp(cmd, "vfork")) {
		pid_t p = !strcmp(cmd, "fork") ? fork() : vfork();
		if (p == 0)
			_exit(0);
		int e = errno;
		if (p > 0)
			waitpid(p, NULL, 0);
		return result(cmd, p, e);
	}
	if (!strcmp(cmd, "clone3")) {
		uint64_t args[11] = { 0 };
		args[4] = SIGCHLD; /* exit_signal */
		long p = syscall(SYS_clone3, args, 88);
		if (p == 0)
			_exit(0);
		int e = errno;
		if (p > 0)
			waitpid((pid_t)p, NULL, 0);
		return result("clone3", p, e);
	}
	if (!strcmp(cmd, "thread")) {
		pthread_t t;
		int e = pthread_create(&t, NULL, thread_main, NULL);
		if (e == 0)
			pthread_join(t, NULL);
		return result("thread", e ? -1 : 0, e);
	}
	if (!strcmp(cmd, "seccomp"))
		return do_seccomp();
	if (!strcmp(cmd, "setid") && argc == 3)
		return do_setid(argv[2]);
	if (!strcmp(cmd, "int80"))
		return do_int80();
	if ((!strcmp(cmd, "rmtree") || !strcmp(cmd, "rawrmtree")) && argc >= 3)
		return do_rmtree(cmd, argv + 2, argc - 2, !strncmp(cmd, "raw", 3));
	if ((!strcmp(cmd, "trunc") || !strcmp(cmd, "rawtrunc")) && argc >= 3)
		return do_trunc(cmd, argv + 2, argc - 2, !strncmp(cmd, "raw", 3));
	if ((!strcmp(cmd, "clobber") || !strcmp(cmd, "rawclobber")) && argc >= 3)
		return do_clobber(cmd, argv + 2, argc - 2, !strncmp(cmd, "raw", 3));
	if ((!strcmp(cmd, "procfd") || !strcmp(cmd, "rawprocfd")) && argc >= 3)
		return do_procfd(cmd, argv + 2, argc - 2, !strncmp(cmd, "raw", 3));
	if (!strcmp(cmd, "deeptrunc") && argc == 3)
		return do_deeptrunc(argv[2]);
	if (!strcmp(cmd, "rename") && argc == 4)
		return result("rename", rename(argv[2], argv[3]), errno);
	if (!strcmp(cmd, "rawrename") && argc == 4)
		return result("rawrename", syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3], 0), errno);
	if (!strcmp(cmd, "exec") && argc >= 3) {
		extern char **environ;
		syscall(SYS_execve, argv[2], argv + 2, environ);
		return result("exec", -1, errno);
	}
	fprintf(stderr, "usage: probe read|write PATH | unix|rawunix PATH | connect IP PORT | tiocsti|tiocsti-hi|tioclinux|tcgets PATH | fork|vfork|clone3|thread | seccomp | int80 | setid DIR | [raw]rmtree DIR... | [raw]trunc|[raw]clobber|[raw]procfd FILE... | deeptrunc FILE | [raw]rename FROM TO | exec PROG ARG...\n");
	return 2;
}
