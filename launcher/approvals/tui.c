/*
 * tui.c — the approval TUI (ncursesw): a client of a session's control
 * protocol (control.h) on the user's terminal.  This file: setup, the loop
 * and teardown; the parts are named in tui_state.h.
 *
 * Screen, top to bottom:
 *   a header (airlock, the agent's command line, the session; [filter] and
 *   [scrolled] markers), the activity stream (one row per audit event: time,
 *   source, what, decision, rule) or, after Tab, the agent's output panel,
 *   the approval panel while asks wait (the current one in full, the others
 *   listed), and the status line (counts, egress, attached, key help).
 *
 * Keys (either case):
 *   Y allow, N deny, A allow for the session, B deny for the session — they
 *     answer the ask the panel showed when the key came (the oldest not
 *     answered yet), never one that took its place since; after the ask
 *     shown changes (a new one at the head, the panel appearing, or keys
 *     coming back from the agent's terminal) they are ignored for GUARD_MS
 *     (the keys' row says "wait"), so a key meant for one request, or a
 *     second Y, cannot answer the next; Y and A are refused while the
 *     request's who and what cannot all be shown (they wrap over as many
 *     rows as they need; else "terminal too small").  An answer stays on
 *     screen ("sent") until the launcher says "answered";
 *   Up/Down/PgUp/PgDn/Home/End scroll the activity (End follows the tail);
 *   / filter (Enter applies a case-insensitive substring; Esc or an empty
 *     filter clears it);
 *   Tab or Ctrl-] toggles the agent's output panel.  While it is shown and
 *     the agent has a terminal here, every other key goes to the agent
 *     (arrows translated back to escape sequences), except PgUp/PgDn, which
 *     scroll the panel's scrollback;
 *   Q or Ctrl-C asks "End the agent? y/n" and, on y, sends "quit" and waits
 *     for the end; D detaches (attach only); Ctrl-L redraws.
 *
 * The agent's output is kept as text lines (vterm.h: escape sequences
 * interpreted or dropped, lines wrapped at the panel's width as a terminal
 * would), at most OUT_MAX_LINES of them.
 * Everything shown that came from the session or the agent is decoded per
 * the locale and stripped of control characters, so neither can drive the
 * user's terminal.  A field cut to fit says so: "…" ("..." outside UTF-8)
 * after what is kept of its start, or before what is kept of its end (the
 * rule column).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "launcher/approvals/control.h"
#include "launcher/approvals/tui_state.h"
#include "launcher/approvals/vterm.h"

/* ---- signals: a self-pipe ------------------------------------------------------------- */

static int sig_pipe[2] = { -1, -1 };
static const int caught_signals[] = { SIGWINCH, SIGTERM, SIGHUP, SIGINT };
#define NSIGNALS (sizeof caught_signals / sizeof caught_signals[0])

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	if (sig_pipe[1] >= 0)
		(void)!write(sig_pipe[1], &b, 1);
	errno = saved;
}


/* What tui_run() changes in the process, to be put back: signal dispositions, the mask, the locale. */
struct saved {
	struct sigaction old[NSIGNALS], old_tstp;
	sigset_t old_mask;
	char *locale; /* owned: LC_CTYPE as it was */
};

/* The self-pipe, the handlers, an unblocked mask, the user's LC_CTYPE.  0, or 1 (a message said why). */
static int setup_process(struct saved *sv)
{
	/* signals first: ncurses installs its own SIGWINCH / SIGINT / SIGTERM / SIGTSTP
	 * handlers only where none is set */
	if (pipe2(sig_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		fprintf(stderr, "airlock: the TUI: pipe: %s\n", strerror(errno));
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaction(caught_signals[i], &sa, &sv->old[i]);
	sigaction(SIGTSTP, NULL, &sv->old_tstp);
	sigset_t ours;
	sigemptyset(&ours);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaddset(&ours, caught_signals[i]);
	sigprocmask(SIG_UNBLOCK, &ours, &sv->old_mask); /* a caller's mask must not hide a resize */

	const char *locale = setlocale(LC_CTYPE, NULL);
	sv->locale = locale ? strndup(locale, 256) : NULL;
	setlocale(LC_CTYPE, "");
	return 0;
}

static void restore_process(struct saved *sv)
{
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaction(caught_signals[i], &sv->old[i], NULL);
	sigaction(SIGTSTP, &sv->old_tstp, NULL);
	sigprocmask(SIG_SETMASK, &sv->old_mask, NULL);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
	if (sv->locale) {
		setlocale(LC_CTYPE, sv->locale);
		free(sv->locale);
	}
}

/* ---- the screen ----------------------------------------------------------------------- */

/* Curses on the user's terminal, the first screen drawn, "attach" sent.  0, or 1 (a message said why). */
static int setup_screen(struct tui *t)
{
	const struct tui_options *o = t->o;
	int in_fd = dup(o->tty_in), out_fd = dup(o->tty_out);
	t->fin = in_fd >= 0 ? fdopen(in_fd, "r") : NULL;
	t->fout = out_fd >= 0 ? fdopen(out_fd, "w") : NULL;
	if (!t->fin && in_fd >= 0)
		close(in_fd);
	if (!t->fout && out_fd >= 0)
		close(out_fd);
	if (t->fin && t->fout)
		t->scr = newterm(NULL, t->fout, t->fin);
	if (!t->scr) {
		const char *term = getenv("TERM");
		if (t->fin)
			fclose(t->fin);
		if (t->fout)
			fclose(t->fout);
		fprintf(stderr, "airlock: cannot use the terminal (TERM=%s): the TUI needs one curses knows\n",
			term ? term : "(unset)");
		return 1;
	}
	set_term(t->scr);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(50);
	intrflush(stdscr, FALSE);
	leaveok(stdscr, TRUE);
	tui_draw_init(t);
	curs_set(0);
	tui_on_resize(t);
	tui_send_type(t, "attach");
	tui_render(t);
	return 0;
}

/*
 * After the screen is gone: the last rows of the agent's own output, on the
 * terminal's main screen, so what the agent said last is not lost with the
 * TUI (cells are printable already: escapes were interpreted on the way in).
 */
static void print_output_tail(const struct tui *t, int fd, size_t max)
{
	size_t end = vterm_lines(t->out), first;
	int len;
	while (end > 0 && (vterm_line(t->out, end - 1, &len), len == 0))
		end--;
	first = end > max ? end - max : 0;
	if (end == first)
		return;
	dprintf(fd, "--- the agent's last output ---\n");
	for (size_t i = first; i < end; i++) {
		char buf[4 * 512 + MB_LEN_MAX + 2];
		size_t k = vterm_line_text(t->out, i, buf, sizeof buf - 1);
		buf[k++] = '\n';
		(void)!write(fd, buf, k);
	}
}

/* Curses off the terminal; then why the TUI ended, or the agent's last output. */
static void end_screen(struct tui *t)
{
	endwin();
	delscreen(t->scr);
	fclose(t->fin);
	fclose(t->fout);
	if (t->rc == 1)
		fprintf(stderr, "airlock: the TUI lost its terminal\n");
	else if (t->o->pty_master >= 0)
		print_output_tail(t, t->o->tty_out, 20);
}

/* ---- the loop ------------------------------------------------------------------------- */

/* How long the loop may sleep: the seconds left tick while asks wait; the guard time's and a
 * note's ends change the panel. */
static int poll_timeout(const struct tui *t)
{
	if (!t->nasks)
		return -1;
	int64_t now = tui_now_ms(), wake = now + 500;
	if (t->shown.seq && t->shown.since + GUARD_MS > now && t->shown.since + GUARD_MS < wake)
		wake = t->shown.since + GUARD_MS;
	if (t->note_until > now && t->note_until < wake)
		wake = t->note_until;
	return (int)(wake - now) + 1;
}

/* The signals the self-pipe holds: a resize is followed; SIGTERM, SIGHUP, SIGINT end the loop. */
static void take_signals(struct tui *t)
{
	unsigned char sigs[64];
	ssize_t r = read(sig_pipe[0], sigs, sizeof sigs);
	for (ssize_t i = 0; i < r; i++) {
		if (sigs[i] == SIGWINCH)
			tui_on_resize(t);
		else
			t->done = true; /* SIGTERM, SIGHUP, SIGINT: restore and return */
	}
}

/* The control stream ended (an "end", EOF, an error, or a line over the bound): the last of it shown. */
static void control_ended(struct tui *t)
{
	t->gone = !t->ended;
	if (t->pty_open)
		tui_read_pty(t);
	tui_render(t);
	if (t->rc == 2) {
		endwin();
		fprintf(stderr, "airlock: the session sent a control line over %d bytes\n",
			CONTROL_MAX_LINE);
	}
	t->done = true;
}

/* Until the session ends, the user leaves, a signal, or the terminal goes: one poll a round. */
static void loop(struct tui *t)
{
	const struct tui_options *o = t->o;
	while (!t->done) {
		struct pollfd p[4] = {
			{ .fd = sig_pipe[0], .events = POLLIN },
			{ .fd = o->control_fd, .events = (short)(POLLIN | (t->outlen ? POLLOUT : 0)) },
			{ .fd = o->tty_in, .events = POLLIN },
			{ .fd = t->pty_open ? o->pty_master : -1, .events = POLLIN },
		};
		int n = poll(p, 4, poll_timeout(t));
		if (n < 0 && errno != EINTR) {
			t->rc = 1;
			break;
		}
		if (n > 0 && (p[0].revents & POLLIN)) {
			take_signals(t);
			if (t->done)
				break;
		}
		if (n > 0 && (p[3].revents & (POLLIN | POLLHUP | POLLERR)))
			tui_read_pty(t);
		if (n > 0 && (p[1].revents & POLLOUT))
			tui_flush_out(t);
		if (n > 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && !tui_read_control(t)) {
			control_ended(t);
			break;
		}
		if (n > 0 && (p[2].revents & (POLLHUP | POLLERR | POLLNVAL))) {
			t->rc = 1; /* the terminal went away */
			break;
		}
		if (n > 0 && (p[2].revents & POLLIN))
			tui_read_keys(t);
		if (t->dirty || t->nasks)
			tui_render(t);
	}
}

/* ---- tui_run -------------------------------------------------------------------------- */

static void tui_free(struct tui *t)
{
	tui_model_free(t);
	vterm_free(t->out);
}

int tui_run(const struct tui_options *o)
{
	struct tui t;
	memset(&t, 0, sizeof t);
	t.o = o;
	t.rc = 0;
	t.pty_open = o->pty_master >= 0;
	if (o->end_status)
		*o->end_status = TUI_END_LEFT;

	if (!isatty(o->tty_in) || !isatty(o->tty_out)) {
		fprintf(stderr, "airlock: the TUI needs a terminal (its input or output is not one)\n");
		return 1;
	}
	t.out = vterm_new(OUT_MAX_LINES);
	if (tui_model_init(&t) < 0 || !t.out) {
		fprintf(stderr, "airlock: the TUI: out of memory\n");
		tui_free(&t);
		return 1;
	}
	struct saved sv;
	memset(&sv, 0, sizeof sv);
	if (setup_process(&sv) != 0) {
		tui_free(&t);
		return 1;
	}
	t.rc = setup_screen(&t);
	if (t.rc == 0) {
		loop(&t);
		end_screen(&t);
	}
	restore_process(&sv);
	if (o->end_status)
		*o->end_status = t.ended ? (int)(t.end_status < 0 ? 0 : t.end_status > INT_MAX ? INT_MAX :
						 t.end_status) :
				 t.gone ? TUI_END_GONE : TUI_END_LEFT;
	if (o->session_id && t.session[0])
		snprintf(o->session_id, TUI_SESSION_ID_MAX, "%s", t.session);
	tui_free(&t);
	return t.rc;
}
