/*
 * tui_draw.c — the approval TUI's screen, drawn whole from its model at each
 * change: the header, the activity stream or the agent's output, the
 * approval panel, the status line.  Text from the session comes escaped
 * (tui_model.c, core/termtext.h: controls, bidi and invisible characters as
 * \xNN or \uXXXX, as `airlock log` shows them); it is decoded per the locale
 * and drawn with what control characters remain (the agent's output) as '?';
 * an escape is one unit, never cut or wrapped in two, and a field cut to fit
 * says so (cut_mark).
 */
#include <inttypes.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "core/termtext.h"
#include "launcher/approvals/tui_state.h"
#include "launcher/approvals/vterm.h"

/* ---- drawing text --------------------------------------------------------------------- */

/* What marks a field cut short: "…" in a UTF-8 locale, else "..." (set by tui_draw_init()). */
static const char *cut_mark = "...";

/* The character put_wc() and put_str() show for wc; *w: its columns (0: combining, not shown). */
static wchar_t shown_wc(wchar_t wc, int *w)
{
	if (wc < 0x20 || (wc >= 0x7f && wc < 0xa0))
		wc = L'?';
	*w = wcwidth(wc);
	if (*w < 0) {
		wc = L'?';
		*w = 1;
	}
	return wc;
}

/*
 * Decodes the next unit of s (n bytes left) as it is shown: an escape (termtext_escape_len():
 * "\u202e", ASCII, drawn as it is, *wc its '\\'), else a character, undecodable bytes and
 * control characters as '?'.  Returns the bytes it takes (0 at the end); *wc and *w get it.
 */
static size_t next_char(const char *s, size_t n, mbstate_t *st, wchar_t *wc, int *w)
{
	if (n == 0 || !*s)
		return 0;
	size_t r = termtext_escape_len(s, n);
	if (r > 0) {
		*wc = L'\\';
		*w = (int)r;
		return r;
	}
	r = mbrtowc(wc, s, n, st);
	if (r == (size_t)-1 || r == (size_t)-2) {
		memset(st, 0, sizeof *st);
		*wc = L'?';
		r = 1;
	} else if (r == 0) {
		return 0;
	}
	*wc = shown_wc(*wc, w);
	return r;
}

/* Draws one character if it fits in the columns left; returns the columns it took, -1 if not. */
static int put_wc(int y, int x, int maxw, wchar_t wc)
{
	int w;
	wc = shown_wc(wc, &w);
	if (w == 0 || w > maxw)
		return w == 0 ? 0 : -1;
	mvaddnwstr(y, x, &wc, 1);
	return w;
}

/* The bytes of the longest start of s (n bytes) that fits in maxw columns; *cols its width. */
static size_t fit(const char *s, size_t n, int maxw, int *cols)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t off = 0;
	int used = 0;
	for (;;) {
		wchar_t wc;
		int w;
		size_t r = next_char(s + off, n - off, &st, &wc, &w);
		if (r == 0 || used + w > maxw)
			break;
		used += w;
		off += r;
	}
	*cols = used;
	return off;
}

/* Draws the first n bytes of s at y, x (they fit: see fit()). */
static void put_bytes(int y, int x, const char *s, size_t n)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	wchar_t wc;
	int w;
	for (size_t r; (r = next_char(s, n, &st, &wc, &w)) > 0; s += r, n -= r)
		if (r > 1 && *s == '\\') { /* an escape: ASCII */
			mvaddnstr(y, x, s, (int)r);
			x += w;
		} else if (w > 0) {
			mvaddnwstr(y, x, &wc, 1);
			x += w;
		}
}

/* The columns s takes, as put_str would draw it; counting stops once past limit. */
static int str_width(const char *s, int limit)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t n = s ? strlen(s) : 0;
	int used = 0;
	wchar_t wc;
	int w;
	for (size_t r; used <= limit && (r = next_char(s, n, &st, &wc, &w)) > 0; s += r, n -= r)
		used += w;
	return used;
}

/*
 * Draws s (bytes in the locale's encoding) at y, x in at most maxw columns; undecodable bytes
 * and control characters show as '?'; when s does not fit, its start is shown followed by
 * cut_mark.  Returns the columns used.
 */
static int put_str(int y, int x, int maxw, const char *s)
{
	if (!s || maxw <= 0 || y < 0 || y >= LINES || x >= COLS)
		return 0;
	if (x + maxw > COLS)
		maxw = COLS - x;
	size_t n = strlen(s);
	int cols, mw;
	size_t k = fit(s, n, maxw, &cols);
	if (k < n) { /* cut short: as much as fits before the mark */
		size_t mk = fit(cut_mark, strlen(cut_mark), maxw, &mw);
		k = fit(s, n, maxw - mw, &cols);
		put_bytes(y, x, s, k);
		put_bytes(y, x + cols, cut_mark, mk);
		return cols + mw;
	}
	put_bytes(y, x, s, k);
	return cols;
}

/* Draws s right-aligned in the maxw columns from x; when it does not fit, cut_mark and its tail. */
static void put_tail(int y, int x, int maxw, const char *s)
{
	if (!s || maxw <= 0)
		return;
	int w = str_width(s, maxw);
	if (w <= maxw) {
		put_str(y, x + maxw - w, maxw, s);
		return;
	}
	int mw = str_width(cut_mark, maxw), room = maxw - mw;
	const char *p = s;
	size_t n = strlen(s);
	mbstate_t st;
	memset(&st, 0, sizeof st);
	wchar_t wc;
	while ((w = str_width(p, room)) > room) { /* drop characters from the start */
		size_t r = next_char(p, n, &st, &wc, &w);
		if (r == 0)
			break;
		p += r;
		n -= r;
	}
	put_str(y, x, mw, cut_mark);
	put_str(y, x + maxw - w, w, p);
}

/*
 * s wrapped at width columns from row y, x: returns the rows it takes (at least 1) and, with
 * draw, draws the first maxrows of them.
 */
static int put_wrapped(int y, int x, int width, const char *s, int maxrows, bool draw)
{
	size_t n = s ? strlen(s) : 0;
	int rows = 0;
	do {
		int cols;
		size_t k = fit(s, n, width, &cols);
		if (k == 0 && n > 0 && width > 0 && termtext_escape_len(s, n) > 0) {
			/* an escape wider than the width: cut, never hidden */
			k = (size_t)width;
			if (draw && rows < maxrows)
				mvaddnstr(y + rows, x, s, width);
		} else if (k == 0 && n > 0) { /* a character wider than the width: shown as nothing */
			mbstate_t st;
			memset(&st, 0, sizeof st);
			wchar_t wc;
			k = next_char(s, n, &st, &wc, &cols);
			if (k == 0)
				break;
		} else if (draw && rows < maxrows) {
			put_bytes(y + rows, x, s, k);
		}
		rows++;
		s += k;
		n -= k;
	} while (n > 0);
	return rows;
}

static void fill_row(int y, attr_t a)
{
	if (y < 0 || y >= LINES)
		return;
	attrset(a);
	mvhline(y, 0, ' ', COLS);
}

/* ---- small helpers -------------------------------------------------------------------- */

static void human_bytes(char *out, size_t cap, int64_t v)
{
	static const char unit[] = "BKMGTP";
	double d = (double)(v < 0 ? 0 : v);
	size_t u = 0;
	while (d >= 1024 && u + 1 < sizeof unit - 1) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, cap, "%" PRId64 "B", v < 0 ? 0 : v);
	else
		snprintf(out, cap, d < 10 ? "%.1f%c" : "%.0f%c", d, unit[u]);
}

/* ---- layout --------------------------------------------------------------------------- */

struct layout {
	int header;        /* the header's row, -1: none */
	int main_y, main_h; /* the activity stream or the output panel */
	int panel_y, panel_h;
	int status;        /* the status line's row, -1: none */
};

/* The approval panel's label column, and the width of its text. */
static int panel_lw(void)
{
	return COLS >= 40 ? 9 : 0;
}

static void who_text(const struct ask *a, char *buf, size_t cap)
{
	snprintf(buf, cap, "pid %" PRId64 ": %s", a->pid, a->who ? a->who : "?");
}

/* The rows the request (who, then what) takes in the panel, wrapped. */
static int request_rows(const struct ask *a)
{
	char who[TEXT_MAX + 32];
	int w = COLS - panel_lw();
	who_text(a, who, sizeof who);
	return put_wrapped(0, 0, w, who, 0, false) +
	       put_wrapped(0, 0, w, a->what ? a->what : "?", 0, false);
}

static int panel_want(const struct tui *t)
{
	if (!t->nasks)
		return 0;
	int n = 3 + request_rows(tui_current_ask(t)); /* title, who, what, rule, keys */
	size_t others = t->nasks - 1;
	n += others > 5 ? 6 : (int)others; /* the list, or 5 and "..." */
	return n;
}

static struct layout layout_of(const struct tui *t)
{
	struct layout l;
	int h = LINES;
	l.status = h >= 1 ? h - 1 : -1;
	l.header = h >= 4 ? 0 : -1;
	int top = l.header >= 0 ? 1 : 0;
	int avail = h - top - (l.status >= 0 ? 1 : 0);
	if (avail < 0)
		avail = 0;
	int want = panel_want(t);
	int ph = want;
	int cap = avail > 2 ? avail - 1 : avail; /* asks win over activity, but leave a row */
	if (ph > cap)
		ph = cap;
	l.main_y = top;
	l.main_h = avail - ph;
	l.panel_y = top + l.main_h;
	l.panel_h = ph;
	return l;
}

/* ---- rendering ------------------------------------------------------------------------ */

static attr_t decision_attr(const struct tui *t, const char *d)
{
	if (!t->color)
		return !strcmp(d, "deny") || !strcmp(d, "ask") ? A_BOLD : A_NORMAL;
	if (!strcmp(d, "allow"))
		return COLOR_PAIR(PAIR_ALLOW);
	if (!strcmp(d, "deny"))
		return COLOR_PAIR(PAIR_DENY) | A_BOLD;
	if (!strcmp(d, "ask"))
		return COLOR_PAIR(PAIR_ASK) | A_BOLD;
	return A_NORMAL;
}

static void decision_text(const struct tui *t, const char *d, char out[6])
{
	snprintf(out, 6, "%s", d);
	if (!t->color)
		for (char *p = out; *p; p++)
			if (*p >= 'a' && *p <= 'z')
				*p = (char)(*p - 'a' + 'A');
}

static attr_t bar_attr(const struct tui *t)
{
	(void)t;
	return A_REVERSE;
}

/* The key help for the header: long, short, or nothing. */
static const char *key_help(const struct tui *t, int variant)
{
	if (t->mode == MODE_FILTER)
		return variant == 0 ? " Enter apply  Esc clear " : "";
	if (tui_keys_to_agent(t))
		return variant == 0 ? " keys go to the agent | Tab back  PgUp/PgDn scroll " :
		       variant == 1 ? " Tab back " : "";
	if (t->o->attach)
		return variant == 0 ? " Y/N/A/B answer  Tab output  / filter  Q quit  D detach " :
		       variant == 1 ? " Y/N/A/B Tab / Q D:detach " : "";
	return variant == 0 ? " Y/N/A/B answer  Tab output  / filter  Q quit " :
	       variant == 1 ? " Y/N/A/B Tab / Q " : "";
}

static void draw_header(struct tui *t, int y)
{
	attr_t a = bar_attr(t);
	fill_row(y, a);
	char marks[FILTER_MAX + 96];
	marks[0] = '\0';
	if (t->filter[0])
		snprintf(marks, sizeof marks, " [filter: %s]", t->filter);
	if (t->scroll > 0 && t->focus == FOCUS_ACTIVITY)
		snprintf(marks + strlen(marks), sizeof marks - strlen(marks), " [scrolled: End follows]");
	if (t->bad_lines)
		snprintf(marks + strlen(marks), sizeof marks - strlen(marks), " [%" PRId64 " bad lines]",
			 t->bad_lines);
	char left[TEXT_MAX + 64];
	snprintf(left, sizeof left, " airlock  %s%s", t->agent ? t->agent : "(connecting)",
		 t->headless ? "  (headless)" : "");
	int mw = str_width(marks, COLS), lmin = str_width(left, 30);
	const char *help = "";
	for (int i = 0; i < 3; i++) {
		help = key_help(t, i);
		if (lmin + mw + str_width(help, COLS) <= COLS)
			break;
	}
	int hw = str_width(help, COLS);
	int x = put_str(y, 0, COLS - mw - hw - 1, left);
	attrset(a | A_BOLD);
	if (mw && mw <= COLS - x)
		x += put_str(y, COLS - hw - mw > x ? COLS - hw - mw : x, mw, marks);
	attrset(a);
	if (hw && hw <= COLS - x)
		put_str(y, COLS - hw, hw, help);
	attrset(A_NORMAL);
}

static void draw_status(struct tui *t, int y)
{
	attr_t a = bar_attr(t);
	fill_row(y, a);
	char buf[FILTER_MAX + 512];
	if (t->mode == MODE_FILTER) {
		snprintf(buf, sizeof buf, "/%s", t->fedit);
		int x = put_str(y, 0, COLS, buf);
		put_str(y, x, COLS - x, "_   (Enter: apply, Esc: clear)");
		attrset(A_NORMAL);
		return;
	}
	if (t->mode == MODE_CONFIRM_QUIT) {
		attrset(a | A_BOLD);
		put_str(y, 0, COLS, " End the agent? y/n ");
		attrset(A_NORMAL);
		return;
	}
	char up[32], down[32];
	human_bytes(up, sizeof up, t->up);
	human_bytes(down, sizeof down, t->down);
	snprintf(buf, sizeof buf,
		 " %s | allow %" PRId64 " deny %" PRId64 " ask %" PRId64 " | pending %" PRId64
		 " | up %s down %s | attached %" PRId64 " ",
		 t->session[0] ? t->session : "-", t->allow, t->deny, t->asked,
		 t->have_status ? t->pending : (int64_t)t->nasks, up, down, t->attached);
	if (t->ended)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "| ended: %" PRId64 " ",
			 t->end_status);
	else if (t->quitting)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "| ending the agent... ");
	put_str(y, 0, COLS, buf);
	attrset(A_NORMAL);
}

/* Keeps the activity's scroll within the rows that match; returns how many do. */
static size_t clamp_scroll(struct tui *t, int h)
{
	size_t total = 0;
	for (size_t i = 0; i < t->nrows; i++)
		if (tui_act_matches(t, tui_act_at(t, i)))
			total++;
	if (h < 1)
		h = 1;
	if (t->scroll > (long)total - h)
		t->scroll = (long)total > h ? (long)total - h : 0;
	if (t->scroll < 0)
		t->scroll = 0;
	return total;
}

static void draw_activity(struct tui *t, int y0, int h)
{
	if (h <= 0)
		return;
	size_t total = clamp_scroll(t, h);
	if (total == 0) {
		attrset(A_DIM);
		put_str(y0, 1, COLS - 1,
			t->filter[0] ? "(no activity matches the filter)" : "(no activity yet)");
		attrset(A_NORMAL);
		return;
	}
	int W = COLS;
	bool show_time = W >= 40, show_source = W >= 60, show_rule = W >= 80;
	int rule_w = show_rule ? (W >= 120 ? 30 : 22) : 0;
	int xs = show_time ? 9 : 0;
	int xw = xs + (show_source ? 9 : 0);
	int what_w = W - xw - 6 - (show_rule ? rule_w + 1 : 0);
	if (what_w < 1)
		what_w = 1;
	int xd = xw + what_w + 1;
	/* bottom up: skip `scroll` matching rows, then draw */
	long skip = t->scroll;
	int row = y0 + h - 1;
	for (size_t i = t->nrows; i-- > 0 && row >= y0;) {
		struct act_row *r = tui_act_at(t, i);
		if (!tui_act_matches(t, r))
			continue;
		if (skip > 0) {
			skip--;
			continue;
		}
		if (show_time) {
			attrset(A_DIM);
			put_str(row, 0, 8, r->time);
		}
		if (show_source) {
			attrset(A_NORMAL);
			put_str(row, xs, 8, r->source);
		}
		attrset(A_NORMAL);
		put_str(row, xw, what_w, r->what);
		if (r->decision[0]) {
			char d[6];
			decision_text(t, r->decision, d);
			attrset(decision_attr(t, r->decision));
			put_str(row, xd, 5, d);
		}
		if (show_rule && r->rule[0]) {
			attrset(A_DIM);
			if (str_width(r->rule, rule_w + 1) > rule_w)
				put_tail(row, W - rule_w, rule_w, r->rule);
			else
				put_str(row, W - rule_w, rule_w, r->rule);
		}
		attrset(A_NORMAL);
		row--;
	}
}

static void draw_output(struct tui *t, int y0, int h)
{
	if (h <= 0)
		return;
	attrset(A_BOLD);
	const char *title = t->o->pty_master < 0 ?
				    " agent output  (Tab: back to the activity)" :
			    t->pty_open ? " agent output  (keys go to the agent; Tab or Ctrl-]: back; PgUp/PgDn: scroll)" :
					  " agent output  (the agent's terminal closed; Tab: back)";
	mvhline(y0, 0, ACS_HLINE, COLS);
	put_str(y0, 1, COLS - 2, title);
	attrset(A_NORMAL);
	y0++;
	h--;
	if (h <= 0)
		return;
	if (t->o->pty_master < 0) {
		put_str(y0, 1, COLS - 1, "The agent's output is on its own terminal:");
		if (h > 1)
			put_str(y0 + 1, 1, COLS - 1,
				"this session runs headless and airlock attach shows only its activity and approvals.");
		return;
	}
	long n = (long)vterm_lines(t->out), maxs = n - h, scroll = vterm_scroll(t->out);
	if (scroll > maxs)
		scroll = maxs > 0 ? maxs : 0;
	vterm_set_scroll(t->out, scroll);
	long end = n - scroll; /* one past the last line shown */
	long start = end - h;
	if (start < 0)
		start = 0;
	for (long i = start; i < end; i++) {
		int len, y = y0 + (int)(i - start), x = 0;
		const wchar_t *c = vterm_line(t->out, (size_t)i, &len);
		for (int k = 0; k < len && x < COLS; k++) {
			if (c[k] == L'\0')
				continue;
			int w = put_wc(y, x, COLS - x, c[k]);
			if (w < 0)
				break;
			x += w;
		}
	}
	if (scroll > 0) {
		char m[64];
		snprintf(m, sizeof m, " [%ld lines below] ", scroll);
		attrset(A_REVERSE);
		put_str(y0 + h - 1, COLS - str_width(m, COLS), COLS, m);
		attrset(A_NORMAL);
	}
}

/*
 * What a panel of h rows shows of the current ask (t->shown): which ask the keys would
 * answer, whether its who and what are whole, and since when it has been shown so.
 */
static void update_shown(struct tui *t, int h)
{
	struct ask *a = h > 0 ? tui_current_ask(t) : NULL;
	uint64_t seq = a && !tui_keys_to_agent(t) ? a->seq : 0;
	bool whole = a && h >= 2 + request_rows(a); /* title, who, what, keys */
	if (seq != t->shown.seq || whole != t->shown.whole) {
		t->shown.seq = seq;
		t->shown.whole = whole;
		t->shown.since = tui_now_ms();
		t->note_until = 0;
	}
}

/* A label in the panel's label column (none when narrow). */
static void panel_label(int y, const char *label)
{
	if (!panel_lw())
		return;
	attrset(A_DIM);
	put_str(y, 1, 7, label);
	attrset(A_NORMAL);
}

/* The row under the request: the keys (dimmed in the guard time), a note, or the answer sent. */
static void draw_keys(struct tui *t, const struct ask *a, int y, int64_t now)
{
	int lw = panel_lw();
	char buf[128];
	bool guard = now - t->shown.since < GUARD_MS;
	attr_t hl = t->color ? (COLOR_PAIR(PAIR_ASK) | A_BOLD) : A_BOLD;
	panel_label(y, a->sent ? "sent" : guard ? "wait" : "keys");
	if (a->sent) {
		snprintf(buf, sizeof buf, "%s (waiting for the launcher)", a->sent);
		attrset(A_BOLD);
		put_str(y, lw, COLS - lw, buf);
	} else if (tui_keys_to_agent(t)) {
		put_str(y, lw, COLS - lw, "Tab back to answer (keys go to the agent here)");
	} else if (now < t->note_until) {
		attrset(A_BOLD);
		put_str(y, lw, COLS - lw, t->note);
	} else {
		static const char *const keys[] = {
			"Y allow  N deny  A allow for the session  B deny for the session",
			"Y allow  N deny  A allow-session  B deny-session",
			"Y/N/A/B",
		};
		size_t k = 0;
		while (k + 1 < sizeof keys / sizeof keys[0] && str_width(keys[k], COLS) > COLS - lw)
			k++;
		attrset(guard ? A_DIM : hl);
		put_str(y, lw, COLS - lw, keys[k]);
	}
	attrset(A_NORMAL);
}

/* The seconds left before an ask times out, rounded up; 0 once past. */
static int64_t secs_left(const struct ask *a, int64_t now)
{
	int64_t left = a->deadline - now;
	return left > 0 ? (left + 999) / 1000 : 0;
}

/* The panel's title row: the ask's number, its time left, how many more wait. */
static void draw_panel_title(const struct tui *t, const struct ask *a, int y, int64_t now)
{
	char buf[128];
	mvhline(y, 0, ACS_HLINE, COLS);
	int n = snprintf(buf, sizeof buf, " APPROVAL NEEDED #%" PRId64, a->id);
	if (a->deadline)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ", %" PRId64 "s left", secs_left(a, now));
	if (t->nasks > 1)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ", %zu more waiting", t->nasks - 1);
	snprintf(buf + n, sizeof buf - (size_t)n, " ");
	put_str(y, 1, COLS - 1, buf);
}

/* The asks waiting behind the current one a, one a row from y, until end; "... and N more" when they do not fit. */
static void draw_others(const struct tui *t, const struct ask *a, int y, int end, int64_t now)
{
	char buf[TEXT_MAX + 128];
	size_t shown = 0;
	for (size_t i = 0; i < t->nasks && y < end; i++) {
		const struct ask *o = &t->asks[i];
		if (o == a)
			continue;
		if (y == end - 1 && shown + 2 < t->nasks) {
			snprintf(buf, sizeof buf, "   ... and %zu more", t->nasks - 1 - shown);
			put_str(y, 0, COLS, buf);
			break;
		}
		int m = snprintf(buf, sizeof buf, "   #%" PRId64 " %s  (pid %" PRId64 ")", o->id,
				 o->what ? o->what : "?", o->pid);
		if (o->sent)
			snprintf(buf + m, sizeof buf - (size_t)m, "  [sent: %s]", o->sent);
		else if (o->deadline)
			snprintf(buf + m, sizeof buf - (size_t)m, "  %" PRId64 "s", secs_left(o, now));
		put_str(y, 0, COLS, buf);
		y++;
		shown++;
	}
}

/* The approval panel in h rows from y0: the current ask in full (or why it cannot be), the others listed. */
static void draw_panel(struct tui *t, int y0, int h)
{
	if (h <= 0 || !t->nasks)
		return;
	struct ask *a = tui_current_ask(t);
	int64_t now = tui_now_ms();
	char buf[TEXT_MAX + 128];
	int y = y0, end = y0 + h, lw = panel_lw();

	attrset(t->color ? (COLOR_PAIR(PAIR_ASK) | A_BOLD) : A_BOLD);
	if (h > 1 || t->shown.whole)
		draw_panel_title(t, a, y++, now);
	if (!t->shown.whole) { /* too small for the request: no allowing what cannot be read */
		put_wrapped(y, 0, COLS, "terminal too small to show the request: enlarge it "
			    "(Y/A refused; N/B deny)", end - y, true);
		attrset(A_NORMAL);
		return;
	}
	attrset(A_NORMAL);

	/* who, then what, wrapped */
	who_text(a, buf, sizeof buf);
	panel_label(y, "who");
	y += put_wrapped(y, lw, COLS - lw, buf, end - y, true);
	panel_label(y, "what");
	attrset(A_BOLD);
	y += put_wrapped(y, lw, COLS - lw, a->what ? a->what : "?", end - y, true);
	attrset(A_NORMAL);

	/* rule, when there is a row for it besides the keys */
	if (y + 1 < end) {
		panel_label(y, "rule");
		snprintf(buf, sizeof buf, "%s%s%s", a->rule ? a->rule : "(the policy's default)",
			 a->reason ? ": " : "", a->reason ? a->reason : "");
		put_str(y++, lw, COLS - lw, buf);
	}
	draw_keys(t, a, y++, now);
	draw_others(t, a, y, end, now);
}

void tui_render(struct tui *t)
{
	erase();
	if (LINES < 1 || COLS < 1) {
		update_shown(t, 0);
		refresh();
		return;
	}
	struct layout l = layout_of(t);
	if (t->focus == FOCUS_ACTIVITY)
		(void)clamp_scroll(t, l.main_h);
	if (l.header >= 0)
		draw_header(t, l.header);
	if (t->focus == FOCUS_OUTPUT)
		draw_output(t, l.main_y, l.main_h);
	else
		draw_activity(t, l.main_y, l.main_h);
	update_shown(t, l.panel_h);
	draw_panel(t, l.panel_y, l.panel_h);
	if (l.status >= 0)
		draw_status(t, l.status);
	attrset(A_NORMAL);
	refresh();
	t->dirty = false;
}

int tui_main_rows(const struct tui *t)
{
	return layout_of(t).main_h;
}

void tui_draw_init(struct tui *t)
{
	cut_mark = !strcmp(nl_langinfo(CODESET), "UTF-8") ? "\xe2\x80\xa6" : "...";
	const char *nc = getenv("NO_COLOR");
	t->color = !(nc && nc[0]) && has_colors() && start_color() == OK && COLORS >= 8;
	if (!t->color)
		return;
	int bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
	init_pair(PAIR_ALLOW, COLOR_GREEN, (short)bg);
	init_pair(PAIR_DENY, COLOR_RED, (short)bg);
	init_pair(PAIR_ASK, COLOR_YELLOW, (short)bg);
}
