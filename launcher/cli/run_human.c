/* run_human.c — `airlock run`'s human side (run.h): the control socket every session has, the TUI or the one-line prompt's terminal, and giving the terminal back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "launcher/approvals/approve.h"
#include "launcher/approvals/control.h"
#include "launcher/approvals/tui.h"
#include "launcher/cli/run.h"
#include "launcher/log/audit.h"
#include "launcher/sandbox/agent_tty.h"
#include "proxy/proxy.h"

/* The counts attached clients show, when they changed. */
void run_push_status(struct run *r)
{
	struct approve_counts c;
	struct proxy_stats ps = { 0 };
	approve_counts(r->approvals, &c);
	if (r->proxy)
		proxy_stats(r->proxy, &ps);
	struct control_status st = { .allow = c.allow, .deny = c.deny, .asked = c.asked,
				     .pending = c.pending, .egress_up = ps.bytes_up,
				     .egress_down = ps.bytes_down };
	control_status(r->control, &st);
}

/*
 * The control socket (every session: `airlock attach` and `airlock ps`
 * find it) and, on a terminal, the agent's pseudo-terminal.
 */
int run_start_control(struct run *r)
{
	char err[512], *agent = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&agent, &len);
	/* serve: no agent; `airlock ps` shows what the session is, and where it is joined */
	if (f && r->o.serve)
		fprintf(f, "(airlock serve%s%s)", r->o.dir ? " --dir " : "", r->o.dir ? r->o.dir : "");
	for (char **a = r->o.cmd; f && a && *a; a++)
		fprintf(f, "%s%s", a == r->o.cmd ? "" : " ", *a);
	if (f)
		fclose(f);
	struct control_info info = { .session = r->session.id, .agent = agent,
				     .log = audit_path(r->log),
				     .ask_timeout = r->src.policy->ask_timeout,
				     .headless = r->ui != UI_TUI };
	if (hub_init(&r->hub, r->log) < 0) {
		free(agent);
		airlock_err("run: out of memory");
		return RUN_EXIT_FAILED;
	}
	r->control = control_new(r->session.control, &info, &hub_control_ops, &r->hub, err,
				 sizeof err);
	free(agent);
	if (!r->control) {
		airlock_err("run: %s", err);
		return RUN_EXIT_FAILED;
	}
	hub_set_control(&r->hub, r->control);
	if (r->ui != UI_HEADLESS && !r->o.serve && agent_tty_open(&r->tty_master, &r->tty_slave, STDIN_FILENO) < 0) {
		airlock_err("run: cannot make a terminal for the agent: %s", strerror(errno));
		return RUN_EXIT_FAILED;
	}
	return -1;
}

/* Forks the TUI on the user's terminal, attached from the start through a socketpair. */
int run_start_tui(struct run *r, const sigset_t *old)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	r->tty_saved = tcgetattr(STDIN_FILENO, &r->saved_tty) == 0;
	r->tui = fork();
	if (r->tui < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (r->tui == 0) {
		sigprocmask(SIG_SETMASK, old, NULL);
		close(sv[0]);
		close(r->tty_slave); /* the agent's exit must reach the master as a hang-up */
		struct tui_options to = { .control_fd = sv[1], .pty_master = r->tty_master,
					  .tty_in = STDIN_FILENO, .tty_out = STDOUT_FILENO };
		_exit(tui_run(&to));
	}
	close(sv[1]);
	return control_adopt(r->control, sv[0], true);
}

/*
 * The one-line prompt relays the agent's terminal: the user's is put in raw
 * mode (keys, Ctrl-C included, go to the agent's own line discipline),
 * restored by run_end_control().
 */
int run_raw_terminal(struct run *r)
{
	struct termios t;
	if (tcgetattr(STDIN_FILENO, &r->saved_tty) != 0)
		return -errno;
	r->tty_saved = true;
	t = r->saved_tty;
	cfmakeraw(&t);
	return tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0 ? 0 : -errno;
}

/* The user's terminal changed size: so does the agent's (it gets SIGWINCH from its own). */
void run_resize_agent(const struct run *r)
{
	struct winsize ws;
	if (r->ui == UI_PROMPT && r->tty_master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(r->tty_master, TIOCSWINSZ, &ws);
}

/* The session is over: the clients hear it, the TUI gives the terminal back. */
void run_end_control(struct run *r, int status)
{
	if (!r->control)
		return;
	control_end(r->control, status, 1000);
	if (r->tui > 0) {
		int st;
		for (int i = 0; i < 300 && waitpid(r->tui, &st, WNOHANG) == 0; i++)
			usleep(10000);
		if (waitpid(r->tui, &st, WNOHANG) == 0) {
			kill(r->tui, SIGKILL);
			waitpid(r->tui, &st, 0);
		}
		r->tui = 0;
	}
	if (r->tty_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &r->saved_tty);
}
