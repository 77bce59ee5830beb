/*
 * tui.h — the approval TUI (ncurses): the activity stream, the status line,
 * the approval panel, and the agent's own terminal.
 *
 * The TUI is a client of a session's control protocol (control.h): it
 * renders what the launcher sends and sends answers back.  `airlock run` on
 * a terminal forks it with one end of a socketpair and the master side of
 * the pseudo-terminal the agent runs on; `airlock attach` runs it on a
 * session's control socket, without the agent's terminal (a headless agent
 * kept its own).
 */
#ifndef AIRLOCK_TUI_H
#define AIRLOCK_TUI_H

#include <stdbool.h>

struct tui_options {
	int control_fd; /* connected stream socket speaking control.h's protocol; borrowed */
	int pty_master; /* the agent's pseudo-terminal (master side), or -1 when attached */
	int tty_in;     /* the user's terminal: keys (usually 0) */
	int tty_out;    /* the user's terminal: the screen (usually 1) */
	bool attach;    /* airlock attach: D detaches; Q ends the agent after confirmation */
	/*
	 * Out, each optional (NULL: not wanted).  end_status: how the session went, set when
	 * tui_run() returns: the "end" message's exit status (>= 0), TUI_END_GONE when the
	 * control socket closed (or broke) without one, TUI_END_LEFT when the TUI left first
	 * (D, a signal, the terminal lost: the session goes on).  session_id (TUI_SESSION_ID_MAX
	 * bytes): the session's id as its hello said; left as it was when no hello came.
	 */
	int *end_status;
	char *session_id;
};

#define TUI_END_GONE (-1)
#define TUI_END_LEFT (-2)
#define TUI_SESSION_ID_MAX 40

/*
 * Runs the TUI until the session ends (an "end" message, or the control
 * socket closes), the user quits (Q, confirmed: sends "quit" and waits for
 * the end) or, when attached, detaches (D).  Sends {"type":"attach"} first.
 * Restores the terminal before returning, also on SIGTERM/SIGHUP/SIGINT.
 * Honours NO_COLOR (https://no-color.org) and terminals without colour.
 * Y/N/A/B answer only the ask on screen, once it has been there a moment;
 * Y/A only when all of it can be read (see tui.c).
 * Returns 0 when the session ended or the user detached, 1 when the
 * terminal cannot be used (a message on stderr), 2 when the control stream
 * broke the protocol.
 */
int tui_run(const struct tui_options *o);

#endif
