/*
 * tui_keys.c — the approval TUI's input: the user's keys (answers, scrolling,
 * the filter, quitting) and the agent's terminal (keys typed into it, what it
 * writes read into the vterm, its size kept to the output panel's).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>
#include "launcher/approvals/tui_state.h"
#include "launcher/approvals/vterm.h"

/* ---- the agent's terminal: its output, and keys to it --------------------------------- */

void tui_read_pty(struct tui *t)
{
	unsigned char buf[16384];
	for (int rounds = 0; rounds < 8; rounds++) {
		struct pollfd p = { .fd = t->o->pty_master, .events = POLLIN };
		if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR)))
			return;
		ssize_t r = read(t->o->pty_master, buf, sizeof buf);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			return;
		if (r <= 0) { /* EIO: every slave side closed; the agent is gone */
			t->pty_open = false;
			t->dirty = true;
			return;
		}
		vterm_feed(t->out, buf, (size_t)r);
		t->dirty = true;
	}
}

static void to_pty(struct tui *t, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(t->o->pty_master, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		s += w;
		n -= (size_t)w;
	}
	vterm_set_scroll(t->out, 0);
	t->dirty = true;
}

/* Function keys as xterm sends them (its "ctlseqs"); the cursor keys are in cursor_keys. */
static const struct {
	int key;
	const char *seq;
} function_keys[] = {
	{ KEY_BACKSPACE, "\177" },
	{ KEY_DC, "\033[3~" },
	{ KEY_IC, "\033[2~" },
	{ KEY_ENTER, "\r" },
	{ KEY_BTAB, "\033[Z" },
	{ KEY_F(1), "\033OP" },
	{ KEY_F(2), "\033OQ" },
	{ KEY_F(3), "\033OR" },
	{ KEY_F(4), "\033OS" },
	{ KEY_F(5), "\033[15~" },
	{ KEY_F(6), "\033[17~" },
	{ KEY_F(7), "\033[18~" },
	{ KEY_F(8), "\033[19~" },
	{ KEY_F(9), "\033[20~" },
	{ KEY_F(10), "\033[21~" },
	{ KEY_F(11), "\033[23~" },
	{ KEY_F(12), "\033[24~" },
};

/* The cursor keys: ESC [ x, or ESC O x once the agent asked for application cursor keys (DECCKM). */
static const struct {
	int key;
	char x;
} cursor_keys[] = {
	{ KEY_UP, 'A' }, { KEY_DOWN, 'B' }, { KEY_RIGHT, 'C' },
	{ KEY_LEFT, 'D' }, { KEY_HOME, 'H' }, { KEY_END, 'F' },
};

/* A function key to the agent, as a terminal would send it; keys it has no sequence for are dropped. */
static void key_to_pty(struct tui *t, int key)
{
	for (size_t i = 0; i < sizeof cursor_keys / sizeof cursor_keys[0]; i++)
		if (cursor_keys[i].key == key) {
			char seq[3] = { 0x1b, vterm_app_cursor(t->out) ? 'O' : '[', cursor_keys[i].x };
			to_pty(t, seq, sizeof seq);
			return;
		}
	for (size_t i = 0; i < sizeof function_keys / sizeof function_keys[0]; i++)
		if (function_keys[i].key == key) {
			to_pty(t, function_keys[i].seq, strlen(function_keys[i].seq));
			return;
		}
}

/* ---- keys ----------------------------------------------------------------------------- */

/* The pty's size: the output panel's text rows with no approval panel, the full width. */
static void pty_resize(struct tui *t)
{
	if (t->o->pty_master < 0)
		return;
	int h = LINES, rows = h - (h >= 4 ? 1 : 0) - 1 - 1;
	struct winsize ws = { .ws_row = (unsigned short)(rows > 0 ? rows : 1),
			      .ws_col = (unsigned short)(COLS > 0 ? COLS : 1) };
	vterm_resize(t->out, ws.ws_col);
	(void)ioctl(t->o->pty_master, TIOCSWINSZ, &ws);
}

void tui_on_resize(struct tui *t)
{
	struct winsize ws;
	if (ioctl(t->o->tty_out, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
	    (ws.ws_row != LINES || ws.ws_col != COLS))
		resizeterm(ws.ws_row, ws.ws_col);
	pty_resize(t);
	clearok(curscr, TRUE);
	t->dirty = true;
}

static void toggle_focus(struct tui *t)
{
	t->focus = t->focus == FOCUS_ACTIVITY ? FOCUS_OUTPUT : FOCUS_ACTIVITY;
	t->dirty = true;
}

static int page(const struct tui *t)
{
	int h = tui_main_rows(t);
	return h > 2 ? h - 1 : 1;
}

static void key_filter(struct tui *t, bool fkey, wint_t k)
{
	size_t n = strlen(t->fedit);
	if (!fkey && (k == 0x1b)) {
		t->filter[0] = t->fedit[0] = '\0';
		t->mode = MODE_NORMAL;
		t->scroll = 0;
	} else if ((!fkey && (k == '\r' || k == '\n')) || (fkey && k == KEY_ENTER)) {
		snprintf(t->filter, sizeof t->filter, "%s", t->fedit);
		t->mode = MODE_NORMAL;
		t->scroll = 0;
	} else if ((fkey && k == KEY_BACKSPACE) || (!fkey && (k == 0x7f || k == '\b'))) {
		if (n > 0) { /* drop the last character, whole */
			size_t i = n - 1;
			while (i > 0 && ((unsigned char)t->fedit[i] & 0xc0) == 0x80)
				i--;
			t->fedit[i] = '\0';
		}
	} else if (!fkey && k == 0x15) { /* Ctrl-U */
		t->fedit[0] = '\0';
	} else if (!fkey && k >= 0x20 && k != 0x7f) {
		char mb[MB_LEN_MAX];
		mbstate_t st;
		memset(&st, 0, sizeof st);
		size_t m = wcrtomb(mb, (wchar_t)k, &st);
		if (m != (size_t)-1 && n + m <= FILTER_MAX) {
			memcpy(t->fedit + n, mb, m);
			t->fedit[n + m] = '\0';
		}
	}
	t->dirty = true;
}

/* The scroll of the view in focus (the activity, or the agent's output). */
static long focus_scroll(const struct tui *t)
{
	return t->focus == FOCUS_OUTPUT ? vterm_scroll(t->out) : t->scroll;
}

/* Sets the scroll of the view in focus; below 0 is 0, past the top is clamped when drawn. */
static void set_focus_scroll(struct tui *t, long v)
{
	if (t->focus == FOCUS_OUTPUT)
		vterm_set_scroll(t->out, v);
	else
		t->scroll = v > 0 ? v : 0;
}

/* A function key outside the filter and not for the agent: scrolling, Shift-Tab. */
static void key_function(struct tui *t, wint_t k)
{
	switch (k) {
	case KEY_UP: t->scroll++; break;
	case KEY_DOWN: t->scroll--; break;
	case KEY_PPAGE: set_focus_scroll(t, focus_scroll(t) + page(t)); break;
	case KEY_NPAGE: set_focus_scroll(t, focus_scroll(t) - page(t)); break;
	case KEY_HOME: set_focus_scroll(t, t->focus == FOCUS_OUTPUT ? OUT_MAX_LINES : ACT_MAX); break;
	case KEY_END: set_focus_scroll(t, 0); break;
	case KEY_BTAB: toggle_focus(t); break;
	default: break;
	}
	if (t->scroll < 0)
		t->scroll = 0;
	t->dirty = true;
}

/* A character key outside the filter and not for the agent: an answer or a command. */
static void key_command(struct tui *t, wint_t k)
{
	switch (k) {
	case 'y': case 'Y': tui_answer(t, CONTROL_ALLOW); break;
	case 'n': case 'N': tui_answer(t, CONTROL_DENY); break;
	case 'a': case 'A': tui_answer(t, CONTROL_ALLOW_SESSION); break;
	case 'b': case 'B': tui_answer(t, CONTROL_DENY_SESSION); break;
	case '\t': case 0x1d: toggle_focus(t); break;
	case '/':
		t->mode = MODE_FILTER;
		snprintf(t->fedit, sizeof t->fedit, "%s", t->filter);
		break;
	case 'q': case 'Q': case 0x03:
		if (!t->quitting)
			t->mode = MODE_CONFIRM_QUIT;
		break;
	case 'd': case 'D':
		if (t->o->attach)
			t->done = true;
		break;
	case 0x0c: clearok(curscr, TRUE); break;
	case 0x1b:
		t->filter[0] = '\0'; /* Esc clears a filter */
		break;
	default: break;
	}
	t->dirty = true;
}

/* A key while the agent's terminal has them: Tab and Ctrl-] come back, PgUp/PgDn scroll, the rest go to the agent. */
static void key_agent(struct tui *t, bool fkey, wint_t k)
{
	if (!fkey && (k == '\t' || k == 0x1d)) {
		toggle_focus(t);
	} else if (fkey && (k == KEY_PPAGE || k == KEY_NPAGE)) {
		key_function(t, k);
	} else if (fkey) {
		key_to_pty(t, (int)k);
	} else {
		char mb[MB_LEN_MAX];
		mbstate_t st;
		memset(&st, 0, sizeof st);
		size_t m = k < 0x80 ? 1 : wcrtomb(mb, (wchar_t)k, &st);
		if (k < 0x80)
			mb[0] = (char)k;
		if (m != (size_t)-1)
			to_pty(t, mb, m);
	}
}

/* One key (get_wch()'s result kr and k), by the mode and the focus it comes in. */
static void on_key(struct tui *t, int kr, wint_t k)
{
	bool fkey = kr == KEY_CODE_YES;
	if (fkey && k == KEY_RESIZE) {
		tui_on_resize(t);
	} else if (t->mode == MODE_FILTER) {
		key_filter(t, fkey, k);
	} else if (t->mode == MODE_CONFIRM_QUIT) {
		if (!fkey && (k == 'y' || k == 'Y')) {
			tui_send_type(t, "quit");
			t->quitting = true;
		}
		t->mode = MODE_NORMAL;
		t->dirty = true;
	} else if (tui_keys_to_agent(t)) {
		key_agent(t, fkey, k);
	} else if (fkey) {
		key_function(t, k);
	} else {
		key_command(t, k);
	}
}

void tui_read_keys(struct tui *t)
{
	for (int i = 0; i < 4096 && !t->done; i++) {
		wint_t k;
		int r = get_wch(&k);
		if (r == ERR)
			return;
		on_key(t, r, k);
	}
}
