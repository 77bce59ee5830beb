/*
 * fdpass.h — one descriptor handed over a unix socket with its message
 * (SCM_RIGHTS, unix(7), cmsg(3)).  Header-only: the static Landlock helper
 * (landlock/airlock-landlock.c) uses it as well as the launcher.
 */
#ifndef AIRLOCK_CORE_FDPASS_H
#define AIRLOCK_CORE_FDPASS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/*
 * Sends len bytes of data (at least 1) with the descriptor fd over sock, in
 * one sendmsg(2) (MSG_NOSIGNAL: a peer gone is EPIPE, not a signal),
 * retried on EINTR.  The caller keeps fd (close it once sent).  0, or
 * -errno (-EIO for a short send).
 */
static inline int fdpass_send(int sock, const void *data, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct iovec iov = { (void *)data, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	ssize_t w;
	while ((w = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return w == (ssize_t)len ? 0 : w < 0 ? -errno : -EIO;
}

/*
 * Receives one message of at most len bytes into data, and the descriptor
 * that came with it into *fd (close-on-exec; -1 when none came, or it was
 * cut short: MSG_CTRUNC, out of descriptors).  Retried on EINTR.  Returns
 * the bytes received (0: the peer closed), or -errno.
 */
static inline ssize_t fdpass_recv(int sock, void *data, size_t len, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { data, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	ssize_t n;
	*fd = -1;
	while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)) && !(mh.msg_flags & MSG_CTRUNC))
		memcpy(fd, CMSG_DATA(c), sizeof *fd);
	return n;
}

#endif
