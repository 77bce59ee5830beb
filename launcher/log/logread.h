/* logread.h — reading the audit log (JSON Lines) for `airlock log` and `airlock suggest`: lines, filters, safe text. */
#ifndef AIRLOCK_LOGREAD_H
#define AIRLOCK_LOGREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

/* Which events to keep; a NULL field keeps every event. */
struct logread_filter {
	const char *session;  /* a session id or a prefix of one */
	const char *decision; /* allow / deny; ask: the asked ones (decided_by not "policy") */
	const char *source;   /* shim / proxy / launcher */
};

/* True when ev passes every filter f names. */
bool logread_matches(json_object *ev, const struct logread_filter *f);

/*
 * Told each event that passes the filter: ev (borrowed, valid during the
 * call), its line as it is in the log (len bytes, no newline, not
 * NUL-terminated) and its 1-based line number.
 */
typedef void (*logread_event_fn)(void *ctx, json_object *ev, const char *line, size_t len,
				 unsigned long lineno);

/* The log being read: a byte stream cut into lines, the last one possibly partial. */
struct logread {
	int fd;                  /* borrowed; logread_free() closes it unless it is stdin */
	const char *name;        /* for messages */
	const char *cmd;         /* the subcommand, for messages: "log", "suggest" */
	char *buf;               /* owned; bytes read, not yet a whole line */
	size_t len, cap;
	unsigned long lineno;    /* lines handed out so far */
	unsigned long malformed; /* lines reported and skipped */
	bool skipping;           /* inside a line longer than the longest accepted */
	json_tokener *tok;       /* owned */
	const struct logread_filter *filter; /* borrowed; NULL: every event */
	logread_event_fn fn;
	void *ctx;
};

/*
 * Opens the log: file, "-" for standard input, or NULL for today's default
 * log ($XDG_STATE_HOME/airlock/logs/YYYY-MM-DD.jsonl).  Writes the name used
 * in messages into path (cap bytes).  Only a regular file or a pipe (a FIFO:
 * read to its writer's end) is a log; a directory or a device is refused.
 * Returns the fd, or -1 with the error reported as "airlock: CMD: ...".
 */
int logread_open(const char *file, const char *cmd, char *path, size_t cap);

/*
 * Prepares r to read fd: events passing filter (NULL: all) go to fn(ctx, ...).
 * A line that is not one JSON object (RFC 8259, valid UTF-8) is reported on
 * stderr as "airlock: CMD: NAME:LINE: not a JSON object, skipped", and so is
 * an object whose timestamp (RFC 3339) or session_id is missing or not a
 * string ("NAME:LINE: 'timestamp' is not a string, skipped"); blank lines
 * are skipped silently.  Returns 0, or -ENOMEM (r is then safe to free).
 */
int logread_init(struct logread *r, int fd, const char *name, const char *cmd,
		 const struct logread_filter *filter, logread_event_fn fn, void *ctx);

/* Reads what is there now, up to end of file, handing out whole lines.  0, or -errno. */
int logread_available(struct logread *r);

/* At the end of the log: a last line without '\n' is still a line; hands it out. */
void logread_finish(struct logread *r);

/* When the file shrank under the reader (truncated by hand), starts again from its start. */
void logread_check_truncated(struct logread *r);

/* Frees what r owns and closes its fd unless it is standard input. */
void logread_free(struct logread *r);

/* Opens file (as logread_open()), reads it whole with logread_*(), closes it.  0, 1 or -1 (reported). */
int logread_file(const char *file, const char *cmd, const struct logread_filter *filter,
		 logread_event_fn fn, void *ctx, char *path, size_t cap);

/* ---- fields ---------------------------------------------------------------------- */

/* The string member key of o, or NULL when absent or not a string. */
const char *logread_str(json_object *o, const char *key);

/* The integer member key of o, or -1 when absent or not an integer. */
long long logread_num(json_object *o, const char *key);

/*
 * Parses an RFC 3339 UTC timestamp with milliseconds ("2026-11-30T01:02:03.456Z")
 * into *t and *ms.  Returns 0, or -1 when ts is NULL or unreadable.
 */
int logread_time(const char *ts, long long *t, unsigned *ms);

/*
 * True when ev was asked about: its decided_by names another than the policy
 * (human, session, default, timeout: core/channel.h's names, or a word this
 * version does not know).  An ask is logged with its outcome, so this is how
 * the log tells one.
 */
bool logread_asked(json_object *ev);

/* True when ev is a launcher event of kind (its "event" field: AUDIT_SESSION_START, AUDIT_SESSION_END). */
bool logread_is_event(json_object *ev, const char *kind);

/* ---- sessions: as their events describe them ------------------------------------ */

/*
 * A session as the log describes it (for `airlock log --summary` and
 * `airlock suggest`): the span of its events and what its launcher events
 * (session_start, session_end) say.  Zero it, set id, then
 * log_session_note() each of its events; log_session_free() at the end.
 */
struct log_session {
	char *id;        /* owned; its session_id */
	char *first_ts;  /* owned; the earliest timestamp of its events, or NULL */
	char *last_ts;   /* owned; the latest, or NULL */
	char *end_ts;    /* owned; the timestamp of its session_end event; NULL: none seen */
	char *agent;     /* owned; the program its session_start event names, or NULL */
	char *workspace; /* owned; the workspace it names (absolute, as the launcher writes it;
			    another is not taken), or NULL */
	char *policy;    /* owned; the policy file it names, as written ("<default>": the built-in one), or NULL */
	char *exit;      /* owned; the exit status its session_end event names, in decimal, or NULL */
};

/*
 * Takes what ev, one of x's events, tells about x: its timestamp widens
 * first_ts..last_ts (RFC 3339 UTC times compare as strings); a launcher
 * event (source "launcher", no command, file or network_dst) of kind
 * session_start sets agent, workspace and policy, of kind session_end
 * end_ts and exit (a later one of a kind replaces an earlier one's).
 * Returns false when out of memory: x is then still valid, and still to free.
 */
bool log_session_note(struct log_session *x, json_object *ev);

/* Frees what x owns (not x). */
void log_session_free(struct log_session *x);

/* ---- text for a terminal --------------------------------------------------------- */

/*
 * Free text and words (programs, arguments, paths) are written with
 * termtext_put_text() and termtext_put_word() (core/termtext.h): the same
 * escapes as the approval TUI and the prompt.
 */

/*
 * What an event did: "exec CMD ARG... (each a termtext_put_word())", "ACTION PATH", "connect DST"; a
 * session's start or end from its fields ("session started: PROGRAM; policy
 * P; workspace W; SANDBOX", "session ended: exit status N; COUNTS"); else its
 * message.
 */
void logread_put_what(FILE *f, json_object *ev);

/* A proxy event's traffic fields: "N bytes up, M down, T ms, via V"; nothing when it has none. */
void logread_put_traffic(FILE *f, json_object *ev);

/* The timestamp ts as local HH:MM:SS.mmm (with the date when with_date); "??..." when unreadable. */
void logread_put_time(FILE *f, const char *ts, bool with_date);

/* ---- log_summary.c: `airlock log --summary` ------------------------------------- */

struct log_summary;

/* A new, empty summary, or NULL when out of memory. */
struct log_summary *log_summary_new(void);

/* Adds one event (a logread_event_fn: ctx is the summary). */
void log_summary_add(void *ctx, json_object *ev, const char *line, size_t len,
		     unsigned long lineno);

/* Prints the summary, one block per session in order of first appearance; color: ANSI colours. */
void log_summary_print(FILE *f, const struct log_summary *s, bool color);

/* Frees s.  Accepts NULL. */
void log_summary_free(struct log_summary *s);

#endif
