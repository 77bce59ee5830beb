/* cmd_attach.c — `airlock attach` and `airlock ps`: a running session's TUI from another terminal, and the list of sessions. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/termtext.h"
#include "launcher/approvals/control.h"
#include "launcher/cli/launcher.h"
#include "launcher/sandbox/agent_tty.h"
#include "launcher/sandbox/session.h"
#include "launcher/approvals/tui.h"

#define HELLO_WAIT_MS 1000

const char cmd_attach_usage[] =
	"usage: airlock attach [SESSION]\n"
	"\n"
	"Opens the approval TUI on a running session: its live activity, and its asks\n"
	"for you to answer (Y allow, N deny, A allow for the session, B deny for the\n"
	"session).  While someone is attached, a --headless session's asks wait for an\n"
	"answer (up to the policy's ask_timeout) instead of being denied at once.\n"
	"D detaches (the session goes on, headless again); Q ends the agent.\n"
	"\n"
	"SESSION is a session id, or the start of one, or the path of a control socket;\n"
	"without it, the most recently started session.  `airlock ps` lists them.\n";

const char cmd_ps_usage[] =
	"usage: airlock ps [-q] [--all]\n"
	"\n"
	"Lists your running airlock sessions: id, launcher pid, start time (UTC), mode\n"
	"(tui or headless) and the agent's command.  -q prints the ids only.  --all\n"
	"also lists the checkpoints, running and ended, as `airlock undo --list` does.\n";

/* The control socket SESSION names, or the newest session's; NULL with a message printed. */
static char *find_session(const char *want)
{
	struct control_session *all = NULL;
	size_t n = 0, hit = 0, hits = 0;
	int r = control_list(&all, &n, HELLO_WAIT_MS);
	if (r < 0) {
		airlock_err("attach: cannot list the sessions: %s", strerror(-r));
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!want || strncmp(all[i].id, want, strlen(want)) == 0) {
			hit = i;
			hits++;
		}
	char *path = NULL;
	if (hits == 0)
		airlock_err("attach: %s%s (airlock ps lists the running sessions)",
			    want ? "no running session " : "no running session", want ? want : "");
	else if (want && hits > 1)
		airlock_err("attach: %s names %zu sessions: give more of the id", want, hits);
	else
		path = strdup(all[hit].path); /* ordered oldest first: the last hit is the newest */
	free(all);
	return path;
}

int cmd_attach(int argc, char **argv)
{
	const char *want = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(cmd_attach_usage, stdout);
			return AIRLOCK_EXIT_OK;
		}
		if (argv[i][0] == '-' || want) {
			airlock_err("attach: unexpected argument '%s'", argv[i]);
			fputs(cmd_attach_usage, stderr);
			return AIRLOCK_EXIT_USAGE;
		}
		want = argv[i];
	}
	if (!isatty(STDIN_FILENO) || !agent_tty_tui_usable(STDOUT_FILENO)) {
		airlock_err("attach: needs a terminal that can show the TUI (stdin and stdout a "
			    "terminal, TERM set to a known type)");
		return 1;
	}
	char *path = want && strchr(want, '/') ? strdup(want) : find_session(want);
	if (!path)
		return 1;
	int fd = control_connect(path);
	if (fd < 0) {
		airlock_err("attach: cannot connect to %s: %s", path, strerror(-fd));
		free(path);
		return 1;
	}
	/* the id for the last word, until the hello says it: the socket's name, less .control */
	char id[TUI_SESSION_ID_MAX];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);
	if (n > 8 && !strcmp(base + n - 8, ".control"))
		n -= 8;
	snprintf(id, sizeof id, "%.*s", (int)n, base);
	free(path);
	int end = TUI_END_LEFT;
	struct tui_options to = { .control_fd = fd, .pty_master = -1, .tty_in = STDIN_FILENO,
				  .tty_out = STDOUT_FILENO, .attach = true, .end_status = &end,
				  .session_id = id };
	int st = tui_run(&to);
	close(fd);
	if (st == 0) { /* else tui_run() said what went wrong */
		if (end >= 0)
			airlock_err("attach: session %s ended (exit status %d)", id, end);
		else if (end == TUI_END_GONE)
			airlock_err("attach: the session went away");
		else
			airlock_err("attach: detached from session %s (it goes on)", id);
	}
	return st;
}

int cmd_ps(int argc, char **argv)
{
	bool quiet = false, all = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--all") == 0) {
			all = true;
			continue;
		}
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(cmd_ps_usage, stdout);
			return AIRLOCK_EXIT_OK;
		}
		if (strcmp(argv[i], "-q") != 0) {
			airlock_err("ps: unexpected argument '%s'", argv[i]);
			fputs(cmd_ps_usage, stderr);
			return AIRLOCK_EXIT_USAGE;
		}
		quiet = true;
	}
	/*
	 * What dead launchers left (their directory and control socket, which
	 * nothing answers) is removed now, as the next `airlock run` would, and
	 * said: else ps would quietly list nothing of it.
	 */
	char base[PATH_MAX];
	if (control_base(base, sizeof base, false) == 0)
		session_sweep_stale(base, "ps");
	struct control_session *v = NULL;
	size_t n = 0;
	int r = control_list(&v, &n, HELLO_WAIT_MS);
	if (r < 0) {
		airlock_err("ps: cannot list the sessions: %s", strerror(-r));
		return 1;
	}
	if (!quiet)
		printf("%-16s  %7s  %-19s  %-8s  %s\n", "SESSION", "PID", "STARTED", "MODE", "AGENT");
	for (size_t i = 0; i < n; i++) {
		if (quiet) {
			printf("%s\n", v[i].id);
			continue;
		}
		char started[20];
		snprintf(started, sizeof started, "%.19s", v[i].started);
		char *t = strchr(started, 'T');
		if (t)
			*t = ' ';
		/* the id and time come from hellos any of your sessions wrote: printable only */
		printf("%-16.16s  %7d  %-19s  %-8s  ", v[i].id, (int)v[i].pid, started,
		       v[i].headless ? "headless" : "tui");
		termtext_put_text(stdout, v[i].agent); /* the agent's words: escaped */
		putchar('\n');
	}
	free(v);
	if (all && !quiet) {
		putchar('\n');
		fflush(stdout);
		r = cmd_undo_list_checkpoints(stdout);
		if (r < 0) {
			airlock_err("ps: cannot list the checkpoints: %s", strerror(-r));
			return 1;
		}
	}
	return AIRLOCK_EXIT_OK;
}
