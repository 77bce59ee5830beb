/* agent_tty.c — the pseudo-terminal the agent runs on under the TUI. */
#include <errno.h>
#include <fcntl.h>
#include <curses.h>
#include <pty.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "launcher/sandbox/agent_tty.h"

int agent_tty_open(int *master, int *slave, int like_fd)
{
	struct termios t;
	struct winsize ws;
	bool have_t = tcgetattr(like_fd, &t) == 0, have_ws = ioctl(like_fd, TIOCGWINSZ, &ws) == 0;
	if (openpty(master, slave, NULL, have_t ? &t : NULL, have_ws ? &ws : NULL) != 0)
		return -errno;
	fcntl(*master, F_SETFD, FD_CLOEXEC);
	fcntl(*slave, F_SETFD, FD_CLOEXEC);
	return 0;
}

int agent_tty_take(int slave)
{
	if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) != 0)
		return -errno;
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return -errno;
	if (slave > 2)
		close(slave);
	return 0;
}

bool agent_tty_tui_usable(int fd)
{
	int err = 0;
	const char *term = getenv("TERM");
	if (!isatty(fd) || !term || !term[0] || strcmp(term, "dumb") == 0)
		return false;
	if (setupterm(NULL, fd, &err) != OK)
		return false;
	bool ok = tigetstr("cup") != NULL && tigetstr("cup") != (char *)-1;
	del_curterm(cur_term);
	cur_term = NULL;
	return ok;
}
