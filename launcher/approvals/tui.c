/*
 * tui.c — the approval TUI (ncursesw): a client of a session's control
 * protocol (control.h) on the user's terminal.
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
 * The agent's output is kept as text lines (CSI, OSC and other escape
 * sequences dropped; CR, BS, TAB and "erase in line" interpreted; lines wrap
 * at the panel's width as a terminal would), at most OUT_MAX_LINES of them.
 * Everything shown that came from the session or the agent is decoded per
 * the locale and stripped of control characters, so neither can drive the
 * user's terminal.  A field cut to fit says so: "…" ("..." outside UTF-8)
 * after what is kept of its start, or before what is kept of its end (the
 * rule column).
 */
#define NCURSES_WIDECHAR 1

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <json-c/json.h>
#include "launcher/approvals/control.h"
#include "launcher/approvals/tui.h"

#define ACT_MAX 10000      /* activity rows kept (a ring) */
#define OUT_MAX_LINES 5000 /* the agent's output: scrollback lines (a ring) */
#define OUT_LINE_MAX 1024  /* cells in one output line before it wraps regardless */
#define ASK_MAX 4096       /* asks queued; the launcher bounds its own queue far below */
#define TEXT_MAX 2048      /* bytes of one shown field (an exec's command line...) */
#define FILTER_MAX 200
#define OUTQ_MAX (1 << 20) /* bytes queued towards the launcher */
#define GUARD_MS 750       /* an ask newly shown takes no answer for this long */
#define NOTE_MS 2000       /* how long a refused key's note shows */

#define PAIR_ALLOW 1
#define PAIR_DENY 2
#define PAIR_ASK 3

struct act_row {
	char time[9];
	char source[9];
	char decision[6]; /* "allow", "deny", "ask" or "" */
	char *what;       /* malloc'ed: what, NUL, rule column, NUL */
	const char *rule; /* inside what's allocation */
};

struct ask {
	int64_t id;
	int64_t pid;
	char *who, *what, *rule, *reason;
	int64_t deadline; /* monotonic ms; 0: no timeout known */
	const char *sent; /* the answer sent, NULL when none yet */
	uint64_t seq;     /* this version of the ask (a resent ask gets a new one) */
};

struct out_line {
	wchar_t *c; /* cells; L'\0' is the right half of a wide character */
	int len, cap;
};

enum esc_state { ESC_NONE, ESC_ESC, ESC_CSI, ESC_OSC, ESC_STR, ESC_STR_ESC, ESC_ONE };
enum focus { FOCUS_ACTIVITY, FOCUS_OUTPUT };
enum mode { MODE_NORMAL, MODE_FILTER, MODE_CONFIRM_QUIT };

struct tui {
	const struct tui_options *o;
	SCREEN *scr;
	FILE *fin, *fout;
	bool color;

	/* the session, as hello and status say */
	char session[TUI_SESSION_ID_MAX];
	char *agent;
	bool headless;
	int64_t allow, deny, asked, pending, up, down, attached;
	bool have_status;
	int64_t bad_lines;
	bool ended;
	bool gone; /* the control socket closed (or broke) without an "end" */
	int64_t end_status;
	bool quitting; /* quit sent */

	/* the activity ring */
	struct act_row *rows;
	size_t nrows, first;
	long scroll; /* matching rows hidden below the view; 0: following the tail */
	char filter[FILTER_MAX + 1];
	char fedit[FILTER_MAX + 1];

	/* the approval queue, oldest first */
	struct ask *asks;
	size_t nasks;
	uint64_t ask_seq; /* the last ask's seq */
	/* what the panel showed at the last render: the keys answer that, and only that */
	struct {
		uint64_t seq;  /* the ask, 0: none answerable (no panel, or keys go to the agent) */
		bool whole;    /* all of its who and what were on screen */
		int64_t since; /* monotonic ms it has been shown so */
	} shown;
	char note[96];     /* why a key was not taken, shown in the keys' row ... */
	int64_t note_until; /* ... until then (monotonic ms) */

	/* the agent's output */
	struct out_line *lines;
	size_t nlines, lfirst;
	int cx;
	long out_scroll;
	bool pty_open;
	enum esc_state esc;
	char csi[32];
	size_t csilen;
	mbstate_t mb;
	bool app_cursor; /* DECCKM: arrows as ESC O x */
	int pty_rows, pty_cols;

	/* the control stream */
	char *in;
	size_t inlen;
	char *outq;
	size_t outlen;

	enum focus focus;
	enum mode mode;
	bool dirty;
	bool done;
	int rc;
};

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

/* ---- small helpers -------------------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *xstrndup(const char *s, size_t max)
{
	if (!s)
		return NULL;
	size_t n = strnlen(s, max);
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* A growing string, cut at TEXT_MAX bytes. */
struct sbuf {
	char b[TEXT_MAX + 1];
	size_t n;
};

static void sb_add(struct sbuf *s, const char *t)
{
	if (!t)
		return;
	size_t k = strnlen(t, TEXT_MAX);
	if (k > TEXT_MAX - s->n)
		k = TEXT_MAX - s->n;
	memcpy(s->b + s->n, t, k);
	s->n += k;
	s->b[s->n] = '\0';
}

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

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool jint(json_object *o, const char *key, int64_t *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

/* ---- drawing text --------------------------------------------------------------------- */

/* What marks a field cut short: "…" in a UTF-8 locale, else "..." (set by tui_run()). */
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
 * Decodes the next character of s (n bytes left) as it is shown: undecodable bytes and
 * control characters as '?'.  Returns the bytes it takes (0 at the end); *wc and *w get it.
 */
static size_t next_char(const char *s, size_t n, mbstate_t *st, wchar_t *wc, int *w)
{
	if (n == 0)
		return 0;
	size_t r = mbrtowc(wc, s, n, st);
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
		if (w > 0) {
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
		if (k == 0 && n > 0) { /* a character wider than the width: shown as nothing */
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

/* ---- the control stream: sending ------------------------------------------------------ */

static void flush_out(struct tui *t)
{
	while (t->outlen > 0) {
		ssize_t w = send(t->o->control_fd, t->outq, t->outlen, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno == ENOTSOCK)
			w = write(t->o->control_fd, t->outq, t->outlen);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* the launcher is gone: the session is over */
			t->outlen = 0;
			t->gone = true;
			t->done = true;
			return;
		}
		memmove(t->outq, t->outq + w, t->outlen - (size_t)w);
		t->outlen -= (size_t)w;
	}
}

static void send_obj(struct tui *t, json_object *o)
{
	if (!o)
		return;
	size_t n;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
	if (s && t->outlen + n + 1 <= OUTQ_MAX) {
		if (!t->outq)
			t->outq = malloc(OUTQ_MAX);
		if (t->outq) {
			memcpy(t->outq + t->outlen, s, n);
			t->outq[t->outlen + n] = '\n';
			t->outlen += n + 1;
		}
	}
	json_object_put(o);
	flush_out(t);
}

static void send_type(struct tui *t, const char *type)
{
	json_object *o = json_object_new_object();
	if (o)
		json_object_object_add(o, "type", json_object_new_string(type));
	send_obj(t, o);
}

/* ---- the activity ring ---------------------------------------------------------------- */

static struct act_row *act_at(struct tui *t, size_t i)
{
	return &t->rows[(t->first + i) % ACT_MAX];
}

static bool act_matches(const struct tui *t, const struct act_row *r)
{
	if (!t->filter[0])
		return true;
	return strcasestr(r->what, t->filter) || strcasestr(r->rule, t->filter) ||
	       strcasestr(r->source, t->filter) || strcasestr(r->decision, t->filter) ||
	       strstr(r->time, t->filter);
}

static void act_push(struct tui *t, const char *time_s, const char *source, const char *decision,
		     const char *what, const char *rule)
{
	size_t wn = strnlen(what ? what : "", TEXT_MAX), rn = strnlen(rule ? rule : "", 256);
	char *buf = malloc(wn + rn + 2);
	if (!buf)
		return;
	memcpy(buf, what ? what : "", wn);
	buf[wn] = '\0';
	memcpy(buf + wn + 1, rule ? rule : "", rn);
	buf[wn + 1 + rn] = '\0';
	struct act_row *r;
	if (t->nrows < ACT_MAX) {
		r = act_at(t, t->nrows);
		t->nrows++;
	} else {
		r = act_at(t, 0);
		free(r->what);
		t->first = (t->first + 1) % ACT_MAX;
	}
	memset(r, 0, sizeof *r);
	snprintf(r->time, sizeof r->time, "%s", time_s);
	snprintf(r->source, sizeof r->source, "%s", source ? source : "");
	snprintf(r->decision, sizeof r->decision, "%s", decision ? decision : "");
	r->what = buf;
	r->rule = buf + wn + 1;
	if (t->scroll > 0 && act_matches(t, r))
		t->scroll++; /* the view stays where the user scrolled to */
	t->dirty = true;
}

static void local_time(char out[9], const char *rfc3339)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	time_t when = time(NULL);
	if (rfc3339 && sscanf(rfc3339, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon,
			      &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) == 6) {
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		time_t t = timegm(&tm);
		if (t != (time_t)-1)
			when = t;
	}
	struct tm lt;
	if (!localtime_r(&when, &lt) || strftime(out, 9, "%H:%M:%S", &lt) == 0)
		snprintf(out, 9, "--:--:--");
}

static void add_event(struct tui *t, json_object *ev)
{
	struct sbuf what = { .n = 0 }, rule = { .n = 0 };
	const char *command = jstr(ev, "command"), *file = jstr(ev, "file"),
		   *dst = jstr(ev, "network_dst"), *message = jstr(ev, "message"),
		   *decision = jstr(ev, "decision"), *decided_by = jstr(ev, "decided_by"),
		   *rl = jstr(ev, "rule"), *source = jstr(ev, "source");
	json_object *args;
	bool has_what = true;
	what.b[0] = rule.b[0] = '\0';
	if (command) {
		sb_add(&what, "exec ");
		sb_add(&what, command);
		if (json_object_object_get_ex(ev, "args", &args) &&
		    json_object_is_type(args, json_type_array)) {
			size_t n = json_object_array_length(args);
			for (size_t i = 0; i < n && what.n < TEXT_MAX; i++) {
				json_object *a = json_object_array_get_idx(args, i);
				sb_add(&what, " ");
				sb_add(&what, json_object_is_type(a, json_type_string) ?
						      json_object_get_string(a) : "?");
			}
		}
		json_object *tr;
		if (json_object_object_get_ex(ev, "truncated", &tr) && json_object_get_boolean(tr))
			sb_add(&what, " ...");
	} else if (file) {
		const char *action = jstr(ev, "action");
		sb_add(&what, action ? action : "open");
		sb_add(&what, " ");
		sb_add(&what, file);
	} else if (dst) {
		sb_add(&what, "connect ");
		sb_add(&what, dst);
	} else {
		has_what = false;
	}
	if (message) {
		if (has_what)
			sb_add(&what, "  - ");
		sb_add(&what, message);
	} else if (!has_what) {
		sb_add(&what, "(event)");
	}
	if (decided_by && (!strcmp(decided_by, "human") || !strcmp(decided_by, "session") ||
			   !strcmp(decided_by, "timeout") || (!strcmp(decided_by, "default") && !rl))) {
		sb_add(&rule, decided_by);
		if (rl)
			sb_add(&rule, " ");
	}
	sb_add(&rule, rl);
	char tm[9];
	local_time(tm, jstr(ev, "timestamp"));
	act_push(t, tm, source ? source : "?", decision, what.b, rule.b);
}

static void add_local(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_local(struct tui *t, const char *fmt, ...)
{
	char msg[512], tm[9];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	local_time(tm, NULL);
	act_push(t, tm, "tui", NULL, msg, NULL);
}

/* ---- the approval queue --------------------------------------------------------------- */

static void ask_free(struct ask *a)
{
	free(a->who);
	free(a->what);
	free(a->rule);
	free(a->reason);
}

static struct ask *ask_find(struct tui *t, int64_t id, size_t *idx)
{
	for (size_t i = 0; i < t->nasks; i++)
		if (t->asks[i].id == id) {
			if (idx)
				*idx = i;
			return &t->asks[i];
		}
	return NULL;
}

static void add_ask(struct tui *t, json_object *o)
{
	int64_t id, pid = 0, timeout = -1;
	if (!jint(o, "id", &id)) {
		t->bad_lines++;
		return;
	}
	(void)jint(o, "pid", &pid);
	(void)jint(o, "timeout_ms", &timeout);
	struct ask *a = ask_find(t, id, NULL);
	if (a) {
		ask_free(a); /* sent again: the newer wins */
	} else {
		if (t->nasks >= ASK_MAX) {
			t->bad_lines++;
			return;
		}
		a = &t->asks[t->nasks++];
		a->sent = NULL;
	}
	a->id = id;
	a->pid = pid;
	a->who = xstrndup(jstr(o, "who"), TEXT_MAX);
	a->what = xstrndup(jstr(o, "what"), TEXT_MAX);
	a->rule = xstrndup(jstr(o, "rule"), 512);
	a->reason = xstrndup(jstr(o, "reason"), TEXT_MAX);
	a->deadline = timeout >= 0 ? now_ms() + timeout : 0;
	a->seq = ++t->ask_seq;
	t->dirty = true;
}

static void drop_ask(struct tui *t, int64_t id)
{
	size_t i;
	struct ask *a = ask_find(t, id, &i);
	if (!a)
		return;
	ask_free(a);
	memmove(&t->asks[i], &t->asks[i + 1], (t->nasks - i - 1) * sizeof *a);
	t->nasks--;
	t->dirty = true;
}

/* The ask the panel shows: the oldest one not answered yet, else the oldest. */
static struct ask *current_ask(const struct tui *t)
{
	for (size_t i = 0; i < t->nasks; i++)
		if (!t->asks[i].sent)
			return &t->asks[i];
	return t->nasks ? &t->asks[0] : NULL;
}

static void set_note(struct tui *t, const char *msg)
{
	snprintf(t->note, sizeof t->note, "%s", msg);
	t->note_until = now_ms() + NOTE_MS;
	t->dirty = true;
}

/*
 * Y/N/A/B: answers the ask the panel showed when the key came — never one that took its
 * place since (it went, was answered, or was sent again), nor one shown for less than
 * GUARD_MS, nor, with an allow, one whose who and what were not all on screen.
 */
static void answer(struct tui *t, const char *ans)
{
	struct ask *a = NULL;
	for (size_t i = 0; t->shown.seq && i < t->nasks && !a; i++)
		if (t->asks[i].seq == t->shown.seq)
			a = &t->asks[i];
	if (!a) {
		if (t->shown.seq) /* it went (or was sent again) since the screen showed it */
			set_note(t, "key ignored: the request changed; read the one now shown");
		return;
	}
	if (a->sent)
		return;
	if (now_ms() - t->shown.since < GUARD_MS) {
		set_note(t, "key ignored: the request just changed; read it first");
		return;
	}
	if (!t->shown.whole && !strncmp(ans, "allow", 5)) {
		set_note(t, "Y/A refused: the request is not all on screen");
		return;
	}
	json_object *o = json_object_new_object();
	if (!o)
		return;
	json_object_object_add(o, "type", json_object_new_string("answer"));
	json_object_object_add(o, "id", json_object_new_int64(a->id));
	json_object_object_add(o, "answer", json_object_new_string(ans));
	a->sent = ans;
	t->note_until = 0;
	send_obj(t, o);
	t->dirty = true;
}

/* ---- the agent's output --------------------------------------------------------------- */

static struct out_line *out_cur(struct tui *t)
{
	return t->nlines ? &t->lines[(t->lfirst + t->nlines - 1) % OUT_MAX_LINES] : NULL;
}

static void out_newline(struct tui *t)
{
	struct out_line *l;
	if (t->nlines < OUT_MAX_LINES) {
		l = &t->lines[(t->lfirst + t->nlines) % OUT_MAX_LINES];
		t->nlines++;
		if (t->out_scroll > 0)
			t->out_scroll++;
	} else {
		l = &t->lines[t->lfirst];
		t->lfirst = (t->lfirst + 1) % OUT_MAX_LINES;
		if (t->out_scroll > 0 && t->out_scroll < OUT_MAX_LINES - 1)
			t->out_scroll++;
	}
	l->len = 0;
	t->cx = 0;
}

static int out_wrap(const struct tui *t)
{
	int w = t->pty_cols > 0 ? t->pty_cols : 80;
	return w > OUT_LINE_MAX ? OUT_LINE_MAX : w;
}

/* Puts wc at the cursor, padding with spaces; wide characters take two cells. */
static void out_put(struct tui *t, wchar_t wc)
{
	int w = wcwidth(wc);
	if (w <= 0) /* combining marks and unprintables: dropped */
		return;
	if (t->cx + w > out_wrap(t))
		out_newline(t);
	struct out_line *l = out_cur(t);
	if (!l) {
		out_newline(t);
		l = out_cur(t);
	}
	int need = t->cx + w;
	if (need > l->cap) {
		int cap = l->cap ? l->cap * 2 : 128;
		while (cap < need)
			cap *= 2;
		wchar_t *c = realloc(l->c, (size_t)cap * sizeof *c);
		if (!c)
			return;
		l->c = c;
		l->cap = cap;
	}
	while (l->len < t->cx)
		l->c[l->len++] = L' ';
	l->c[t->cx] = wc;
	if (w == 2)
		l->c[t->cx + 1] = L'\0';
	t->cx += w;
	if (t->cx > l->len)
		l->len = t->cx;
}

static void out_control(struct tui *t, unsigned char c)
{
	switch (c) {
	case '\n':
	case '\v':
	case '\f':
		out_newline(t);
		break;
	case '\r':
		t->cx = 0;
		break;
	case '\b':
		if (t->cx > 0)
			t->cx--;
		break;
	case '\t': {
		int to = (t->cx / 8 + 1) * 8;
		if (to >= out_wrap(t))
			to = out_wrap(t) - 1;
		while (t->cx < to)
			out_put(t, L' ');
		break;
	}
	default: /* BEL and the rest: nothing to show */
		break;
	}
}

static void out_csi(struct tui *t, unsigned char final)
{
	struct out_line *l = out_cur(t);
	bool priv = t->csilen > 0 && t->csi[0] == '?';
	int n = atoi(t->csi + (priv ? 1 : 0));
	switch (final) {
	case 'K': /* erase in line */
		if (!l)
			break;
		if (n == 0 && l->len > t->cx)
			l->len = t->cx;
		else if (n == 1)
			for (int i = 0; i < t->cx && i < l->len; i++)
				l->c[i] = L' ';
		else if (n == 2)
			l->len = 0;
		break;
	case 'G': /* cursor horizontal absolute */
		t->cx = n > 1 ? n - 1 : 0;
		if (t->cx >= out_wrap(t))
			t->cx = out_wrap(t) - 1;
		break;
	case 'C': /* forward */
		t->cx += n > 0 ? n : 1;
		if (t->cx >= out_wrap(t))
			t->cx = out_wrap(t) - 1;
		break;
	case 'D': /* back */
		t->cx -= n > 0 ? n : 1;
		if (t->cx < 0)
			t->cx = 0;
		break;
	case 'h':
	case 'l':
		if (priv && n == 1)
			t->app_cursor = final == 'h';
		break;
	default:
		break;
	}
}

static void out_feed(struct tui *t, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = b[i];
		switch (t->esc) {
		case ESC_NONE:
			if (c == 0x1b) {
				t->esc = ESC_ESC;
			} else if (c < 0x20 || c == 0x7f) {
				memset(&t->mb, 0, sizeof t->mb);
				out_control(t, c);
			} else {
				wchar_t wc;
				size_t r = mbrtowc(&wc, (const char *)&c, 1, &t->mb);
				if (r == (size_t)-2)
					break;
				if (r == (size_t)-1) {
					memset(&t->mb, 0, sizeof t->mb);
					wc = L'?';
				}
				if (wc >= 0x80 && wc < 0xa0)
					break; /* C1 controls */
				out_put(t, wc);
			}
			break;
		case ESC_ESC:
			if (c == '[') {
				t->esc = ESC_CSI;
				t->csilen = 0;
				t->csi[0] = '\0';
			} else if (c == ']') {
				t->esc = ESC_OSC;
			} else if (c == 'P' || c == 'X' || c == '^' || c == '_') {
				t->esc = ESC_STR;
			} else if (c >= 0x20 && c <= 0x2f) {
				t->esc = ESC_ONE; /* charset designations and the like: one more byte */
			} else {
				t->esc = ESC_NONE; /* a two-byte sequence: dropped */
			}
			break;
		case ESC_CSI:
			if (c >= 0x40 && c <= 0x7e) {
				out_csi(t, c);
				t->esc = ESC_NONE;
			} else if (c >= 0x20 && c <= 0x3f) {
				if (t->csilen + 1 < sizeof t->csi) {
					t->csi[t->csilen++] = (char)c;
					t->csi[t->csilen] = '\0';
				}
			} else if (c == 0x1b) {
				t->esc = ESC_ESC;
			} else if (c < 0x20) {
				out_control(t, c);
			} else {
				t->esc = ESC_NONE;
			}
			break;
		case ESC_OSC:
		case ESC_STR:
			if (c == 0x07 && t->esc == ESC_OSC)
				t->esc = ESC_NONE;
			else if (c == 0x1b)
				t->esc = ESC_STR_ESC;
			else if (c == 0x18 || c == 0x1a)
				t->esc = ESC_NONE; /* CAN, SUB */
			break;
		case ESC_STR_ESC:
			t->esc = c == '\\' ? ESC_NONE : ESC_STR;
			break;
		case ESC_ONE:
			t->esc = ESC_NONE;
			break;
		}
	}
	t->dirty = true;
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
	int n = 3 + request_rows(current_ask(t)); /* title, who, what, rule, keys */
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

/* The pty's size: the output panel's text rows with no approval panel, the full width. */
static void pty_resize(struct tui *t)
{
	if (t->o->pty_master < 0)
		return;
	int h = LINES, rows = h - (h >= 4 ? 1 : 0) - 1 - 1;
	struct winsize ws = { .ws_row = (unsigned short)(rows > 0 ? rows : 1),
			      .ws_col = (unsigned short)(COLS > 0 ? COLS : 1) };
	t->pty_rows = ws.ws_row;
	t->pty_cols = ws.ws_col;
	(void)ioctl(t->o->pty_master, TIOCSWINSZ, &ws);
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
	if (t->focus == FOCUS_OUTPUT && t->o->pty_master >= 0 && t->pty_open)
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
		if (act_matches(t, act_at(t, i)))
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
		struct act_row *r = act_at(t, i);
		if (!act_matches(t, r))
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
	long maxs = (long)t->nlines - h;
	if (t->out_scroll > maxs)
		t->out_scroll = maxs > 0 ? maxs : 0;
	if (t->out_scroll < 0)
		t->out_scroll = 0;
	long end = (long)t->nlines - t->out_scroll; /* one past the last line shown */
	long start = end - h;
	if (start < 0)
		start = 0;
	for (long i = start; i < end; i++) {
		struct out_line *l = &t->lines[(t->lfirst + (size_t)i) % OUT_MAX_LINES];
		int y = y0 + (int)(i - start), x = 0;
		for (int k = 0; k < l->len && x < COLS; k++) {
			if (l->c[k] == L'\0')
				continue;
			int w = put_wc(y, x, COLS - x, l->c[k]);
			if (w < 0)
				break;
			x += w;
		}
	}
	if (t->out_scroll > 0) {
		char m[64];
		snprintf(m, sizeof m, " [%ld lines below] ", t->out_scroll);
		attrset(A_REVERSE);
		put_str(y0 + h - 1, COLS - str_width(m, COLS), COLS, m);
		attrset(A_NORMAL);
	}
}

/* Whether the keys here answer asks (else they go to the agent's terminal). */
static bool keys_answer(const struct tui *t)
{
	return !(t->focus == FOCUS_OUTPUT && t->o->pty_master >= 0 && t->pty_open);
}

/*
 * What a panel of h rows shows of the current ask (t->shown): which ask the keys would
 * answer, whether its who and what are whole, and since when it has been shown so.
 */
static void update_shown(struct tui *t, int h)
{
	struct ask *a = h > 0 ? current_ask(t) : NULL;
	uint64_t seq = a && keys_answer(t) ? a->seq : 0;
	bool whole = a && h >= 2 + request_rows(a); /* title, who, what, keys */
	if (seq != t->shown.seq || whole != t->shown.whole) {
		t->shown.seq = seq;
		t->shown.whole = whole;
		t->shown.since = now_ms();
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
	} else if (!keys_answer(t)) {
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

static void draw_panel(struct tui *t, int y0, int h)
{
	if (h <= 0 || !t->nasks)
		return;
	struct ask *a = current_ask(t);
	int64_t now = now_ms();
	char buf[TEXT_MAX + 128];
	int y = y0, end = y0 + h, lw = panel_lw();
	attr_t hl = t->color ? (COLOR_PAIR(PAIR_ASK) | A_BOLD) : A_BOLD;

	/* title */
	attrset(hl);
	if (h > 1 || t->shown.whole) {
		mvhline(y, 0, ACS_HLINE, COLS);
		int n = snprintf(buf, sizeof buf, " APPROVAL NEEDED #%" PRId64, a->id);
		if (a->deadline) {
			int64_t left = a->deadline - now;
			n += snprintf(buf + n, sizeof buf - (size_t)n, ", %" PRId64 "s left",
				      left > 0 ? (left + 999) / 1000 : 0);
		}
		if (t->nasks > 1)
			n += snprintf(buf + n, sizeof buf - (size_t)n, ", %zu more waiting",
				      t->nasks - 1);
		snprintf(buf + n, sizeof buf - (size_t)n, " ");
		put_str(y++, 1, COLS - 1, buf);
	}
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

	/* the others waiting */
	size_t shown = 0;
	for (size_t i = 0; i < t->nasks && y < end; i++) {
		struct ask *o = &t->asks[i];
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
		else if (o->deadline) {
			int64_t left = o->deadline - now;
			snprintf(buf + m, sizeof buf - (size_t)m, "  %" PRId64 "s",
				 left > 0 ? (left + 999) / 1000 : 0);
		}
		put_str(y, 0, COLS, buf);
		y++;
		shown++;
	}
}

static void render(struct tui *t)
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

/* ---- the control stream: receiving ---------------------------------------------------- */

static void handle_line(struct tui *t, const char *line, size_t len)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return;
	struct json_tokener *tok = json_tokener_new();
	if (!tok)
		return;
	json_object *o = json_tokener_parse_ex(tok, line, (int)len);
	bool whole = o && json_tokener_get_error(tok) == json_tokener_success &&
		     json_tokener_get_parse_end(tok) == len;
	json_tokener_free(tok);
	const char *type = whole && json_object_is_type(o, json_type_object) ? jstr(o, "type") : NULL;
	if (!type) {
		t->bad_lines++;
	} else if (!strcmp(type, "event")) {
		json_object *ev;
		if (json_object_object_get_ex(o, "event", &ev) &&
		    json_object_is_type(ev, json_type_object))
			add_event(t, ev);
		else
			t->bad_lines++;
	} else if (!strcmp(type, "ask")) {
		add_ask(t, o);
	} else if (!strcmp(type, "answered")) {
		int64_t id;
		if (jint(o, "id", &id))
			drop_ask(t, id);
		else
			t->bad_lines++;
	} else if (!strcmp(type, "status")) {
		(void)jint(o, "allow", &t->allow);
		(void)jint(o, "deny", &t->deny);
		(void)jint(o, "asked", &t->asked);
		(void)jint(o, "pending", &t->pending);
		(void)jint(o, "egress_up", &t->up);
		(void)jint(o, "egress_down", &t->down);
		(void)jint(o, "attached", &t->attached);
		t->have_status = true;
	} else if (!strcmp(type, "hello")) {
		const char *s = jstr(o, "session"), *agent = jstr(o, "agent");
		int64_t v = CONTROL_VERSION;
		json_object *hl;
		snprintf(t->session, sizeof t->session, "%s", s ? s : "");
		free(t->agent);
		t->agent = xstrndup(agent, TEXT_MAX);
		t->headless = json_object_object_get_ex(o, "headless", &hl) && json_object_get_boolean(hl);
		if (jint(o, "version", &v) && v != CONTROL_VERSION)
			add_local(t, "the session speaks control protocol version %" PRId64
				     "; this airlock speaks %d", v, CONTROL_VERSION);
	} else if (!strcmp(type, "skipped")) {
		int64_t n = 0;
		(void)jint(o, "events", &n);
		add_local(t, "%" PRId64 " event(s) not shown: this view fell behind (the log has them)", n);
	} else if (!strcmp(type, "end")) {
		int64_t st = 0;
		(void)jint(o, "status", &st);
		t->ended = true;
		t->end_status = st;
	} else {
		t->bad_lines++;
	}
	json_object_put(o);
	t->dirty = true;
}

/* Reads what the control socket has; returns false at its end (or when it broke the protocol). */
static bool read_control(struct tui *t)
{
	for (;;) {
		size_t room = CONTROL_MAX_LINE - t->inlen;
		ssize_t r = recv(t->o->control_fd, t->in + t->inlen, room, MSG_DONTWAIT);
		if (r < 0 && errno == ENOTSOCK)
			r = read(t->o->control_fd, t->in + t->inlen, room);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return true;
			return false; /* ECONNRESET and the like: the session is gone */
		}
		if (r == 0)
			return false;
		size_t scan = t->inlen, start = 0;
		t->inlen += (size_t)r;
		for (size_t i = scan; i < t->inlen; i++) {
			if (t->in[i] != '\n')
				continue;
			handle_line(t, t->in + start, i - start);
			start = i + 1;
			if (t->ended)
				break; /* the launcher closes after "end" */
		}
		memmove(t->in, t->in + start, t->inlen - start);
		t->inlen -= start;
		if (t->ended)
			return false;
		if (t->inlen >= CONTROL_MAX_LINE) {
			t->rc = 2;
			return false;
		}
		if ((size_t)r < room)
			return true;
	}
}

/* ---- the agent's terminal ------------------------------------------------------------- */

static void read_pty(struct tui *t)
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
		out_feed(t, buf, (size_t)r);
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
	t->out_scroll = 0;
	t->dirty = true;
}

/* A function key to the agent, as a terminal would send it. */
static void key_to_pty(struct tui *t, int key)
{
	const char *s = NULL;
	char arrow[4] = { 0x1b, t->app_cursor ? 'O' : '[', 0, 0 };
	switch (key) {
	case KEY_UP: arrow[2] = 'A'; s = arrow; break;
	case KEY_DOWN: arrow[2] = 'B'; s = arrow; break;
	case KEY_RIGHT: arrow[2] = 'C'; s = arrow; break;
	case KEY_LEFT: arrow[2] = 'D'; s = arrow; break;
	case KEY_HOME: arrow[2] = 'H'; s = arrow; break;
	case KEY_END: arrow[2] = 'F'; s = arrow; break;
	case KEY_BACKSPACE: s = "\177"; break;
	case KEY_DC: s = "\033[3~"; break;
	case KEY_IC: s = "\033[2~"; break;
	case KEY_ENTER: s = "\r"; break;
	case KEY_BTAB: s = "\033[Z"; break;
	case KEY_F(1): s = "\033OP"; break;
	case KEY_F(2): s = "\033OQ"; break;
	case KEY_F(3): s = "\033OR"; break;
	case KEY_F(4): s = "\033OS"; break;
	case KEY_F(5): s = "\033[15~"; break;
	case KEY_F(6): s = "\033[17~"; break;
	case KEY_F(7): s = "\033[18~"; break;
	case KEY_F(8): s = "\033[19~"; break;
	case KEY_F(9): s = "\033[20~"; break;
	case KEY_F(10): s = "\033[21~"; break;
	case KEY_F(11): s = "\033[23~"; break;
	case KEY_F(12): s = "\033[24~"; break;
	default: break;
	}
	if (s)
		to_pty(t, s, strlen(s));
}

/* ---- keys ----------------------------------------------------------------------------- */

static void on_resize(struct tui *t)
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
	struct layout l = layout_of(t);
	return l.main_h > 2 ? l.main_h - 1 : 1;
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

static void key_command(struct tui *t, bool fkey, wint_t k)
{
	if (fkey) {
		switch (k) {
		case KEY_UP: t->scroll++; break;
		case KEY_DOWN: t->scroll--; break;
		case KEY_PPAGE:
			if (t->focus == FOCUS_OUTPUT)
				t->out_scroll += page(t);
			else
				t->scroll += page(t);
			break;
		case KEY_NPAGE:
			if (t->focus == FOCUS_OUTPUT)
				t->out_scroll -= page(t);
			else
				t->scroll -= page(t);
			break;
		case KEY_HOME:
			if (t->focus == FOCUS_OUTPUT)
				t->out_scroll = OUT_MAX_LINES;
			else
				t->scroll = ACT_MAX;
			break;
		case KEY_END:
			if (t->focus == FOCUS_OUTPUT)
				t->out_scroll = 0;
			else
				t->scroll = 0;
			break;
		case KEY_BTAB: toggle_focus(t); break;
		default: break;
		}
		if (t->scroll < 0)
			t->scroll = 0;
		if (t->out_scroll < 0)
			t->out_scroll = 0;
		t->dirty = true;
		return;
	}
	switch (k) {
	case 'y': case 'Y': answer(t, "allow"); break;
	case 'n': case 'N': answer(t, "deny"); break;
	case 'a': case 'A': answer(t, "allow-session"); break;
	case 'b': case 'B': answer(t, "deny-session"); break;
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

static void on_key(struct tui *t, int kr, wint_t k)
{
	bool fkey = kr == KEY_CODE_YES;
	if (fkey && k == KEY_RESIZE) {
		on_resize(t);
		return;
	}
	if (t->mode == MODE_FILTER) {
		key_filter(t, fkey, k);
		return;
	}
	if (t->mode == MODE_CONFIRM_QUIT) {
		if (!fkey && (k == 'y' || k == 'Y')) {
			send_type(t, "quit");
			t->quitting = true;
		}
		t->mode = MODE_NORMAL;
		t->dirty = true;
		return;
	}
	if (t->focus == FOCUS_OUTPUT && t->o->pty_master >= 0 && t->pty_open) {
		/* the agent's terminal has the keys, but for Tab, Ctrl-] and scrolling */
		if (!fkey && (k == '\t' || k == 0x1d)) {
			toggle_focus(t);
		} else if (fkey && (k == KEY_PPAGE || k == KEY_NPAGE)) {
			key_command(t, fkey, k);
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
		return;
	}
	key_command(t, fkey, k);
}

static bool read_keys(struct tui *t)
{
	for (int i = 0; i < 4096 && !t->done; i++) {
		wint_t k;
		int r = get_wch(&k);
		if (r == ERR)
			return true;
		on_key(t, r, k);
	}
	return true;
}

/* ---- setup and the loop --------------------------------------------------------------- */

/*
 * After the screen is gone: the last rows of the agent's own output, on the
 * terminal's main screen, so what the agent said last is not lost with the
 * TUI (cells are printable already: escapes were interpreted on the way in).
 */
static void print_output_tail(const struct tui *t, int fd, size_t max)
{
	size_t end = t->nlines, first;
	while (end > 0 && t->lines[(t->lfirst + end - 1) % OUT_MAX_LINES].len == 0)
		end--;
	first = end > max ? end - max : 0;
	if (end == first)
		return;
	dprintf(fd, "--- the agent's last output ---\n");
	for (size_t i = first; i < end; i++) {
		const struct out_line *l = &t->lines[(t->lfirst + i) % OUT_MAX_LINES];
		char buf[4 * 512 + MB_LEN_MAX + 2];
		size_t k = 0;
		mbstate_t st;
		memset(&st, 0, sizeof st);
		for (int c = 0; c < l->len && k + MB_LEN_MAX + 2 < sizeof buf; c++) {
			if (l->c[c] == L'\0')
				continue; /* the right half of a wide character */
			size_t n = wcrtomb(buf + k, l->c[c], &st);
			if (n == (size_t)-1) {
				buf[k++] = '?';
				memset(&st, 0, sizeof st);
			} else {
				k += n;
			}
		}
		while (k > 0 && buf[k - 1] == ' ')
			k--;
		buf[k++] = '\n';
		(void)!write(fd, buf, k);
	}
}

static void tui_free(struct tui *t)
{
	if (t->rows) {
		for (size_t i = 0; i < t->nrows; i++)
			free(act_at(t, i)->what);
		free(t->rows);
	}
	for (size_t i = 0; i < t->nasks; i++)
		ask_free(&t->asks[i]);
	free(t->asks);
	if (t->lines) {
		for (size_t i = 0; i < OUT_MAX_LINES; i++)
			free(t->lines[i].c);
		free(t->lines);
	}
	free(t->agent);
	free(t->in);
	free(t->outq);
}

/* How long the loop may sleep: the seconds left tick while asks wait; the guard time's and a
 * note's ends change the panel. */
static int poll_timeout(const struct tui *t)
{
	if (!t->nasks)
		return -1;
	int64_t now = now_ms(), wake = now + 500;
	if (t->shown.seq && t->shown.since + GUARD_MS > now && t->shown.since + GUARD_MS < wake)
		wake = t->shown.since + GUARD_MS;
	if (t->note_until > now && t->note_until < wake)
		wake = t->note_until;
	return (int)(wake - now) + 1;
}

static void setup_colors(struct tui *t)
{
	const char *nc = getenv("NO_COLOR");
	t->color = !(nc && nc[0]) && has_colors() && start_color() == OK && COLORS >= 8;
	if (!t->color)
		return;
	int bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
	init_pair(PAIR_ALLOW, COLOR_GREEN, (short)bg);
	init_pair(PAIR_DENY, COLOR_RED, (short)bg);
	init_pair(PAIR_ASK, COLOR_YELLOW, (short)bg);
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
	t.rows = calloc(ACT_MAX, sizeof *t.rows);
	t.asks = calloc(ASK_MAX, sizeof *t.asks);
	t.lines = calloc(OUT_MAX_LINES, sizeof *t.lines);
	t.in = malloc(CONTROL_MAX_LINE);
	if (!t.rows || !t.asks || !t.lines || !t.in) {
		fprintf(stderr, "airlock: the TUI: out of memory\n");
		tui_free(&t);
		return 1;
	}

	/* signals first: ncurses installs its own SIGWINCH / SIGINT / SIGTERM / SIGTSTP
	 * handlers only where none is set */
	struct sigaction old[NSIGNALS], old_tstp;
	if (pipe2(sig_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		fprintf(stderr, "airlock: the TUI: pipe: %s\n", strerror(errno));
		tui_free(&t);
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaction(caught_signals[i], &sa, &old[i]);
	sigaction(SIGTSTP, NULL, &old_tstp);
	sigset_t ours, old_mask;
	sigemptyset(&ours);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaddset(&ours, caught_signals[i]);
	sigprocmask(SIG_UNBLOCK, &ours, &old_mask); /* a caller's mask must not hide a resize */

	char *old_locale = xstrndup(setlocale(LC_CTYPE, NULL), 256);
	setlocale(LC_CTYPE, "");
	cut_mark = !strcmp(nl_langinfo(CODESET), "UTF-8") ? "\xe2\x80\xa6" : "...";

	int in_fd = dup(o->tty_in), out_fd = dup(o->tty_out);
	t.fin = in_fd >= 0 ? fdopen(in_fd, "r") : NULL;
	t.fout = out_fd >= 0 ? fdopen(out_fd, "w") : NULL;
	if (!t.fin && in_fd >= 0)
		close(in_fd);
	if (!t.fout && out_fd >= 0)
		close(out_fd);
	if (t.fin && t.fout)
		t.scr = newterm(NULL, t.fout, t.fin);
	if (!t.scr) {
		const char *term = getenv("TERM");
		if (t.fin)
			fclose(t.fin);
		if (t.fout)
			fclose(t.fout);
		fprintf(stderr, "airlock: cannot use the terminal (TERM=%s): the TUI needs one curses knows\n",
			term ? term : "(unset)");
		t.rc = 1;
		goto restore;
	}
	set_term(t.scr);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(50);
	intrflush(stdscr, FALSE);
	leaveok(stdscr, TRUE);
	setup_colors(&t);
	curs_set(0);
	on_resize(&t);
	send_type(&t, "attach");
	render(&t);

	while (!t.done) {
		struct pollfd p[4] = {
			{ .fd = sig_pipe[0], .events = POLLIN },
			{ .fd = o->control_fd, .events = (short)(POLLIN | (t.outlen ? POLLOUT : 0)) },
			{ .fd = o->tty_in, .events = POLLIN },
			{ .fd = t.pty_open ? o->pty_master : -1, .events = POLLIN },
		};
		int timeout = poll_timeout(&t);
		int n = poll(p, 4, timeout);
		if (n < 0 && errno != EINTR) {
			t.rc = 1;
			break;
		}
		if (n > 0 && (p[0].revents & POLLIN)) {
			unsigned char sigs[64];
			ssize_t r = read(sig_pipe[0], sigs, sizeof sigs);
			for (ssize_t i = 0; i < r; i++) {
				if (sigs[i] == SIGWINCH)
					on_resize(&t);
				else
					t.done = true; /* SIGTERM, SIGHUP, SIGINT: restore and return */
			}
			if (t.done)
				break;
		}
		if (n > 0 && (p[3].revents & (POLLIN | POLLHUP | POLLERR)))
			read_pty(&t);
		if (n > 0 && (p[1].revents & POLLOUT))
			flush_out(&t);
		if (n > 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (!read_control(&t)) {
				t.gone = !t.ended;
				/* the end (or EOF): show the last of it, then return */
				if (t.pty_open)
					read_pty(&t);
				render(&t);
				if (t.rc == 2) {
					endwin();
					fprintf(stderr, "airlock: the session sent a control line over %d bytes\n",
						CONTROL_MAX_LINE);
				}
				t.done = true;
				break;
			}
		}
		if (n > 0 && (p[2].revents & (POLLHUP | POLLERR | POLLNVAL))) {
			t.rc = 1; /* the terminal went away */
			break;
		}
		if (n > 0 && (p[2].revents & POLLIN))
			read_keys(&t);
		if (t.dirty || t.nasks)
			render(&t);
	}

	endwin();
	delscreen(t.scr);
	fclose(t.fin);
	fclose(t.fout);
	if (t.rc == 1)
		fprintf(stderr, "airlock: the TUI lost its terminal\n");
	else if (o->pty_master >= 0)
		print_output_tail(&t, o->tty_out, 20);

restore:
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaction(caught_signals[i], &old[i], NULL);
	sigaction(SIGTSTP, &old_tstp, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
	if (old_locale) {
		setlocale(LC_CTYPE, old_locale);
		free(old_locale);
	}
	if (o->end_status)
		*o->end_status = t.ended ? (int)(t.end_status < 0 ? 0 : t.end_status > INT_MAX ? INT_MAX :
						 t.end_status) :
				 t.gone ? TUI_END_GONE : TUI_END_LEFT;
	if (o->session_id && t.session[0])
		snprintf(o->session_id, TUI_SESSION_ID_MAX, "%s", t.session);
	tui_free(&t);
	return t.rc;
}
