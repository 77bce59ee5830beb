/* accept.c — accept(2) that sheds a connection when the process is out of descriptors (see accept.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/accept.h"

static int reserve = -1;

int accept_reserve(void)
{
	if (reserve < 0)
		reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return reserve < 0 ? -errno : 0;
}

int accept_shed(int lfd, int flags)
{
	int fd;
	while ((fd = accept4(lfd, NULL, NULL, flags)) < 0 && errno == EINTR)
		;
	if (fd >= 0 || (errno != EMFILE && errno != ENFILE))
		return fd;
	int why = errno;
	if (reserve >= 0) {
		close(reserve);
		reserve = -1;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		int e = errno;
		if (fd >= 0)
			close(fd);
		(void)accept_reserve();
		errno = fd >= 0 ? ECONNABORTED : e;
		return -1;
	}
	/*
	 * Without a reserve (it could not be opened again) the connection
	 * stays queued: the caller must stop polling the listener for a while.
	 */
	errno = why;
	return -1;
}
