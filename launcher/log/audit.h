/* audit.h — the audit log (DESIGN.md step 9): one JSON object per event, appended line by line. */
#ifndef AIRLOCK_LOG_AUDIT_H
#define AIRLOCK_LOG_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct audit_log;

/* One audit event.  NULL / -1 fields are left out of the line. */
struct audit_event {
	const char *source;        /* "shim", "proxy", "launcher" */
	pid_t pid;                 /* 0: none */
	const char *command;       /* exec: the program */
	const char *const *args;   /* exec: argv[1..] */
	size_t nargs;
	const char *file;          /* open: canonical path */
	const char *action;        /* open: read / write / exec */
	const char *network_dst;   /* connect: host:port */
	const char *decision;      /* allow / deny / ask */
	const char *decided_by;    /* policy / human / session / default / timeout */
	const char *rule;          /* "file:line", NULL for the default */
	const char *reason;
	long response_time_ms;     /* asks: how long the answer took; -1: none */
	const char *message;       /* launcher events: what happened */
	bool truncated;            /* exec: argv was cut to fit the channel */
};

/*
 * Opens (appends to) the log at path, or at the default
 * $XDG_STATE_HOME/airlock/logs/YYYY-MM-DD.jsonl when path is NULL (parent
 * directories created 0700).  session_id goes into every line.  Returns NULL
 * with a message in err.
 */
struct audit_log *audit_open(const char *path, const char *session_id, char *err, size_t errlen);

/*
 * Appends one event as one JSON object line (id, timestamp RFC 3339 UTC with
 * ms, session_id, then the event's fields) and flushes it.  0 or -errno.
 * A failure is sticky (audit_error()): the part of the line written is taken
 * back when no other session appended since, and no later event is written
 * (each returns the first error), so the log ends with its last whole line.
 */
int audit_write(struct audit_log *log, const struct audit_event *ev);

/*
 * 0 while every event was written whole, else the first failure (-errno:
 * -ENOSPC for a full disk, -EFBIG, -EIO, -ENOMEM...).  The session must
 * then stop acting: nothing more it does would be recorded.
 */
int audit_error(const struct audit_log *log);

/* Told each line audit_write() wrote: line (len bytes, no newline; not NUL-terminated), valid during the call. */
typedef void (*audit_tap_fn)(void *arg, const char *line, size_t len);

/*
 * Calls fn(arg, ...) after every line written (also when the write failed:
 * the live view still sees it), for the control socket's activity stream.
 * fn NULL: none.
 */
void audit_set_tap(struct audit_log *log, audit_tap_fn fn, void *arg);

/* The log's path.  Static for the log's lifetime. */
const char *audit_path(const struct audit_log *log);

/* Closes the log.  Accepts NULL. */
void audit_close(struct audit_log *log);

/*
 * The default log path for the local day of `when`:
 * $XDG_STATE_HOME/airlock/logs/YYYY-MM-DD.jsonl (~/.local/state when
 * XDG_STATE_HOME is unset or relative).  0 or -errno (-ENOENT: no home).
 */
int audit_default_path(char *buf, size_t cap, time_t when);

#endif
