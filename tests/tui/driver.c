/*
 * driver.c — runs the approval TUI (launcher/approvals/tui.c) on a control socket, for tests/tui/run.sh.
 *
 *   tui-driver [--attach] SOCKET [-- COMMAND ARG...]
 *
 * Connects to the Unix stream socket SOCKET (a fake session, or a real session's control
 * socket) and calls tui_run() on it with stdin / stdout as the terminal.  With a COMMAND, the
 * command runs on a new pseudo-terminal whose master side is the TUI's pty_master (as
 * `airlock run` does with the agent); else pty_master is -1 (as `airlock attach`).  After
 * tui_run() returns, prints "tui-end=S session=ID" (its end_status and session_id outputs) and
 * "tui-exit=N", and exits with N.
 *
 * Built by run.sh: cc -I. tests/tui/driver.c BUILD/launcher/approvals/{tui,tui_model,tui_draw,tui_keys,vterm}.o
 *   BUILD/core/termtext.o
 *   -ljson-c -lncursesw -ltinfo -lutil
 */
#include <errno.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "launcher/approvals/tui.h"

int main(int argc, char **argv)
{
	struct tui_options o = { .control_fd = -1, .pty_master = -1, .tty_in = 0, .tty_out = 1 };
	int i = 1;
	if (i < argc && !strcmp(argv[i], "--attach")) {
		o.attach = true;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [--attach] SOCKET [-- COMMAND ARG...]\n", argv[0]);
		return 2;
	}
	const char *path = argv[i++];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sun.sun_path) {
		fprintf(stderr, "tui-driver: %s: path too long\n", path);
		return 2;
	}
	strcpy(sun.sun_path, path);
	o.control_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (o.control_fd < 0 || connect(o.control_fd, (struct sockaddr *)&sun, sizeof sun) < 0) {
		fprintf(stderr, "tui-driver: %s: %s\n", path, strerror(errno));
		return 2;
	}
	pid_t child = -1;
	if (i < argc && !strcmp(argv[i], "--") && i + 1 < argc) {
		int master;
		child = forkpty(&master, NULL, NULL, NULL);
		if (child < 0) {
			fprintf(stderr, "tui-driver: forkpty: %s\n", strerror(errno));
			return 2;
		}
		if (child == 0) {
			execvp(argv[i + 1], argv + i + 1);
			fprintf(stderr, "tui-driver: %s: %s\n", argv[i + 1], strerror(errno));
			_exit(127);
		}
		o.pty_master = master;
	}
	int end = 12345;
	char session[TUI_SESSION_ID_MAX] = "(none)";
	o.end_status = &end;
	o.session_id = session;
	int rc = tui_run(&o);
	if (child > 0) {
		kill(child, SIGHUP);
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	printf("tui-end=%d session=%s\n", end, session);
	printf("tui-exit=%d\n", rc);
	fflush(stdout);
	return rc;
}
