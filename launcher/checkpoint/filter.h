/*
 * filter.h — the checkpoint's seccomp filter (classic BPF, seccomp(2),
 * Documentation/userspace-api/seccomp_filter.rst): which of the agent's
 * calls wait for the launcher's checkpoint worker (SECCOMP_RET_USER_NOTIF,
 * seccomp_unotify(2)) before they run.
 *
 * Those that can destroy a file's content or name, or make a new name:
 * open, openat, creat, openat2 (open and openat only when their flags hold
 * O_WRONLY, O_RDWR, O_TRUNC or O_CREAT: a read-only open never waits),
 * truncate, unlink, unlinkat, rmdir, rename, renameat, renameat2, mkdir,
 * mkdirat, symlink, symlinkat, link, linkat, mknod, mknodat; and chmod,
 * fchmodat, fchmodat2, whose change of the inode would otherwise reach the
 * saved file's mode (`chmod u+w` before an overwrite of a read-only file).
 * Not fchmod(2): it is how tar and cp set the mode of each file they have
 * just made, one more wait per file, for a mode a program rarely changes on
 * a file it did not make (the content is saved all the same).  Calls on a
 * descriptor (ftruncate, write, fallocate) need one of those opens first.
 * Everything else, and every call from a foreign architecture or the x32
 * ABI, is allowed here: the sandbox's own filter (launcher/sandbox/seccomp.h)
 * refuses those, and stacked filters take the strictest answer.
 *
 * Header-only: the static Landlock helper (landlock/airlock-landlock.c)
 * installs it, the unit tests run it.
 */
#ifndef AIRLOCK_CHECKPOINT_FILTER_H
#define AIRLOCK_CHECKPOINT_FILTER_H

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define CHECKPOINT_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CHECKPOINT_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the checkpoint filter knows x86_64 and aarch64"
#endif

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6, the same number on x86_64 and aarch64 */
#endif

#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif

/* Room for the longest program checkpoint_filter() writes. */
#define CHECKPOINT_FILTER_MAX 64

/* The open flags that make an open wait: writing, truncating or creating. */
#define CHECKPOINT_OPEN_FLAGS (O_WRONLY | O_RDWR | O_TRUNC | O_CREAT)

/*
 * Writes the filter into code (CHECKPOINT_FILTER_MAX entries) and returns
 * its length.
 */
static inline size_t checkpoint_filter(struct sock_filter *code)
{
	/* every call that waits regardless of its arguments */
	static const int always[] = {
#ifdef SYS_creat
		SYS_creat,
#endif
#ifdef SYS_unlink
		SYS_unlink,
#endif
#ifdef SYS_rmdir
		SYS_rmdir,
#endif
#ifdef SYS_rename
		SYS_rename,
#endif
#ifdef SYS_renameat
		SYS_renameat,
#endif
#ifdef SYS_mkdir
		SYS_mkdir,
#endif
#ifdef SYS_symlink
		SYS_symlink,
#endif
#ifdef SYS_link
		SYS_link,
#endif
#ifdef SYS_mknod
		SYS_mknod,
#endif
#ifdef SYS_chmod
		SYS_chmod,
#endif
		SYS_fchmodat, SYS_fchmodat2,
		SYS_openat2, SYS_truncate, SYS_unlinkat, SYS_renameat2, SYS_mkdirat,
		SYS_symlinkat, SYS_linkat, SYS_mknodat,
	};
	size_t na = sizeof always / sizeof always[0];
	/*
	 * Layout: [0] load arch, [1] native? skip : [2] allow, [3] load nr,
	 * one "jeq" per call that always waits, then openat's and open's, then
	 * ALLOW, NOTIFY, and per flag-checked call: load its flags, jset, notify,
	 * allow.  Jumps are forward offsets from the next instruction.
	 */
	size_t first = 4, nopen = 1;
#ifdef SYS_open
	nopen = 2;
#endif
	size_t allow = first + na + nopen, notify = allow + 1, at_openat = notify + 1,
	       at_open = at_openat + 4, n = 0;
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i)) /* little-endian low word */
#define JUMP_TO(to) ((unsigned char)((to) - n - 1))
	code[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	n++;
	code[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CHECKPOINT_AUDIT_ARCH, 1, 0);
	n++;
	code[n] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	n++;
	code[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	n++;
	for (size_t k = 0; k < na; k++, n++)
		code[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)always[k],
						       JUMP_TO(notify), 0);
	code[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, JUMP_TO(at_openat), 0);
	n++;
#ifdef SYS_open
	code[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, JUMP_TO(at_open), 0);
	n++;
#endif
	code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);       /* allow */
	code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF); /* notify */
	for (int argi = 2; argi >= 1; argi--) { /* openat: flags in arg 2; open: in arg 1 */
		if (argi == 1 && nopen < 2)
			break;
		code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(argi));
		code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CHECKPOINT_OPEN_FLAGS, 0, 1);
		code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
		code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	(void)at_open;
#undef JUMP_TO
#undef ARG_LO
	return n;
}

#endif
