/* agent_tty.h — the pseudo-terminal the agent runs on under the TUI and the one-line prompt. */
#ifndef AIRLOCK_SANDBOX_AGENT_TTY_H
#define AIRLOCK_SANDBOX_AGENT_TTY_H

#include <stdbool.h>

/*
 * Opens a pseudo-terminal pair (openpty(3)) with like_fd's terminal modes
 * and window size when like_fd is a terminal; both ends close-on-exec.
 * 0 or -errno.
 */
int agent_tty_open(int *master, int *slave, int like_fd);

/*
 * In a child about to exec: a new session whose controlling terminal is
 * slave (setsid(2), TIOCSCTTY in ioctl_tty(2)), on stdin, stdout and stderr
 * (dup2 clears close-on-exec).  0 or -errno.
 */
int agent_tty_take(int slave);

/*
 * Whether the TUI can run on fd: it is a terminal and $TERM names a
 * terminfo entry that can address the cursor (setupterm(3X)).
 */
bool agent_tty_tui_usable(int fd);

#endif
