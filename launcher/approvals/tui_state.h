/*
 * tui_state.h — the approval TUI's state, and what its files call in one
 * another (not an interface for the rest of airlock: that is tui.h).
 *
 * The TUI's files: tui.c (setup, the loop, teardown), tui_model.c (the
 * session as the control protocol tells it: activity, asks, answers),
 * tui_draw.c (the screen drawn from the model), tui_keys.c (the user's keys,
 * and the agent's terminal), vterm.c (the agent's output as lines); text
 * from the session is escaped by core/termtext.c, as `airlock log` does.  One
 * thread; every function takes the one struct tui, which tui_run() owns.
 */
#ifndef AIRLOCK_TUI_STATE_H
#define AIRLOCK_TUI_STATE_H

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "launcher/approvals/control.h"
#include "launcher/approvals/tui.h"

#define ACT_MAX 10000      /* activity rows kept (a ring) */
#define OUT_MAX_LINES 5000 /* the agent's output: scrollback lines (a ring) */
#define ASK_MAX 4096       /* asks queued; the launcher bounds its own queue far below */
#define TEXT_MAX 2048      /* bytes of one shown field (an exec's command line...) */
#define FILTER_MAX 200
#define OUTQ_MAX (1 << 20) /* bytes queued towards the launcher */
#define GUARD_MS 750       /* an ask newly shown takes no answer for this long */
#define NOTE_MS 2000       /* how long a refused key's note shows */

/* colour pairs (init_pair) */
#define PAIR_ALLOW 1
#define PAIR_DENY 2
#define PAIR_ASK 3

struct vterm;

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
	char *who, *what, *rule, *reason; /* owned */
	int64_t deadline; /* monotonic ms; 0: no timeout known */
	const char *sent; /* the answer sent, NULL when none yet */
	uint64_t seq;     /* this version of the ask (a resent ask gets a new one) */
};

enum focus { FOCUS_ACTIVITY, FOCUS_OUTPUT };
enum mode { MODE_NORMAL, MODE_FILTER, MODE_CONFIRM_QUIT };

struct tui {
	const struct tui_options *o;
	SCREEN *scr;
	FILE *fin, *fout;
	bool color;

	/* the session, as hello and status say */
	char session[TUI_SESSION_ID_MAX];
	char *agent; /* owned */
	bool headless;
	int64_t allow, deny, asked, pending, up, down, attached;
	bool have_status;
	int64_t bad_lines;
	bool ended;
	bool gone; /* the control socket closed (or broke) without an "end" */
	int64_t end_status;
	bool quitting; /* quit sent */

	/* the activity ring */
	struct act_row *rows; /* owned: ACT_MAX of them */
	size_t nrows, first;
	long scroll; /* matching rows hidden below the view; 0: following the tail */
	char filter[FILTER_MAX + 1];
	char fedit[FILTER_MAX + 1];

	/* the approval queue, oldest first */
	struct ask *asks; /* owned: ASK_MAX of them */
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
	struct vterm *out; /* owned */
	bool pty_open;

	/* the control stream */
	char *in; /* owned: CONTROL_MAX_LINE bytes */
	size_t inlen;
	char *outq; /* owned: OUTQ_MAX bytes, made on the first send */
	size_t outlen;

	enum focus focus;
	enum mode mode;
	bool dirty;
	bool done;
	int rc;
};

/* Whether the keys go to the agent's terminal (its output is shown, and it is open) rather than answer asks. */
static inline bool tui_keys_to_agent(const struct tui *t)
{
	return t->focus == FOCUS_OUTPUT && t->o->pty_master >= 0 && t->pty_open;
}

/* ---- tui_model.c: the session, the control protocol ---------------------------------- */

/* CLOCK_MONOTONIC in milliseconds. */
int64_t tui_now_ms(void);

/* Allocates the model's rings and buffers in t (zeroed); -ENOMEM, and tui_model_free() frees what was made. */
int tui_model_init(struct tui *t);

/* Frees what the model holds: the activity, the asks, the agent's name, the stream buffers. */
void tui_model_free(struct tui *t);

/* Sends what is queued towards the launcher, as far as the socket takes it now; a broken socket ends the TUI (t->gone). */
void tui_flush_out(struct tui *t);

/* Queues and sends {"type": type}. */
void tui_send_type(struct tui *t, const char *type);

/*
 * Reads what the control socket has and applies each whole line; false at its end, after an
 * "end", or when it broke the protocol (a line over CONTROL_MAX_LINE bytes: t->rc = 2).
 */
bool tui_read_control(struct tui *t);

/* Row i of the activity, 0 the oldest kept (i < t->nrows). */
struct act_row *tui_act_at(struct tui *t, size_t i);

/* Whether row r matches the filter (case-insensitive substring of any column; all when none). */
bool tui_act_matches(const struct tui *t, const struct act_row *r);

/* The ask the panel shows: the oldest one not answered yet, else the oldest; NULL when none. */
struct ask *tui_current_ask(const struct tui *t);

/* Y/N/A/B: answers (CONTROL_ALLOW, _DENY, _ALLOW_SESSION, _DENY_SESSION) the ask t->shown names, if it may. */
void tui_answer(struct tui *t, enum control_answer ans);

/* ---- tui_draw.c: the screen ------------------------------------------------------------ */

/* After newterm(): colours (unless NO_COLOR or the terminal has none) and the cut mark for the locale. */
void tui_draw_init(struct tui *t);

/* Draws the whole screen from t and notes what the approval panel shows (t->shown). */
void tui_render(struct tui *t);

/* The rows of the activity stream (or the output panel) as the screen is laid out now. */
int tui_main_rows(const struct tui *t);

/* ---- tui_keys.c: keys, the agent's terminal ------------------------------------------- */

/* Takes every key the terminal has now. */
void tui_read_keys(struct tui *t);

/* The terminal's size changed (or may have): curses, the agent's terminal and the screen follow. */
void tui_on_resize(struct tui *t);

/* Reads what the agent wrote to its terminal into t->out; marks the terminal closed at its end. */
void tui_read_pty(struct tui *t);

#endif
