/*
 * test_checkpoint_filter.c — the checkpoint's seccomp filter (launcher/checkpoint/filter.h)
 * on this kernel: a child installs it with a listener and makes calls; the test, as the
 * worker would, sees which ones wait (seccomp_unotify(2)) and lets each go on.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/fdpass.h"
#include "launcher/checkpoint/filter.h"

static char dir[] = "/tmp/airlock-cpfilter-XXXXXX";

/* What the child does, one call per step; the parent learns which ones wait. */
static void child_calls(void)
{
	char p[256];
	snprintf(p, sizeof p, "%s/f", dir);
	int fd = open(p, O_RDONLY); /* existing, read-only: never waits */
	close(fd);
	fd = open(p, O_WRONLY); /* writes: waits */
	close(fd);
	fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_TRUNC); /* truncates: waits */
	close(fd);
	snprintf(p, sizeof p, "%s/g", dir);
	fd = open(p, O_RDONLY | O_CREAT, 0600); /* creates: waits */
	close(fd);
	(void)syscall(SYS_unlinkat, AT_FDCWD, p, 0);          /* waits */
	(void)syscall(SYS_mkdirat, AT_FDCWD, p, 0700);        /* waits */
	(void)syscall(SYS_renameat2, AT_FDCWD, p, AT_FDCWD, p, 0); /* waits */
	(void)syscall(SYS_getpid);                            /* never */
}

static void test_which_calls_wait(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	char p[256];
	snprintf(p, sizeof p, "%s/f", dir);
	int fd = open(p, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_filter code[CHECKPOINT_FILTER_MAX];
		struct sock_fprog prog = { .len = (unsigned short)checkpoint_filter(code), .filter = code };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			_exit(2);
		int l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		if (l < 0)
			_exit(2);
		if (fdpass_send(sv[1], "L", 1, l) < 0)
			_exit(3);
		close(l);
		child_calls();
		_exit(0);
	}
	close(sv[1]);
	char one;
	int listener = -1;
	assert_int_equal(fdpass_recv(sv[0], &one, 1, &listener), 1);
	assert_true(listener >= 0);
	int seen[8], n = 0;
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	for (;;) {
		struct pollfd pf = { listener, POLLIN, 0 };
		int k = poll(&pf, 1, 5000);
		assert_true(k > 0);
		if (!(pf.revents & POLLIN))
			break; /* POLLHUP: the child is gone */
		memset(&req, 0, sizeof req);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
			continue;
		if (n < 8)
			seen[n] = req.data.nr;
		n++;
		memset(&resp, 0, sizeof resp);
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* open for writing, openat with O_TRUNC, open with O_CREAT, unlinkat, mkdirat, renameat2 */
	assert_int_equal(n, 6);
	int want[6] = { SYS_open, SYS_openat, SYS_open, SYS_unlinkat, SYS_mkdirat, SYS_renameat2 };
	/* glibc may turn open(2) into openat(2): either counts as the open */
	for (int i = 0; i < 6; i++) {
		if (want[i] == SYS_open)
			assert_true(seen[i] == SYS_open || seen[i] == SYS_openat);
		else
			assert_int_equal(seen[i], want[i]);
	}
	close(listener);
	close(sv[0]);
	unlink(p);
	snprintf(p, sizeof p, "%s/g", dir);
	rmdir(p);
	unlink(p);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_which_calls_wait) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
