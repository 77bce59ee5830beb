/* audit.h — the audit log (DESIGN.md step 9): one JSON object per event, appended line by line. */
#ifndef AIRLOCK_LOG_AUDIT_H
#define AIRLOCK_LOG_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct audit_log;

/* Who wrote an event (its "source" field): the shim, the egress proxy, the launcher itself. */
#define AUDIT_SOURCE_SHIM "shim"
#define AUDIT_SOURCE_PROXY "proxy"
#define AUDIT_SOURCE_LAUNCHER "launcher"

/* A session_start's "sandbox" under --no-sandbox; else the sandbox backend's name (backend.h). */
#define AUDIT_SANDBOX_NONE "none"

/* What a launcher event says happened (its "event" field); decisions have none. */
#define AUDIT_SESSION_START "session_start"
#define AUDIT_SESSION_END "session_end"
/* A session copy's change reached the host (copies.h): file names it. */
#define AUDIT_COPY_APPLIED "copy_applied"
/* A session copy's change did not: file names the host path, kept where it was kept (copies.h). */
#define AUDIT_KEPT_ASIDE "kept_aside"

/* A session's start (event session_start): what runs, under which policy, in what sandbox.  Strings borrowed. */
struct audit_session_start {
	const char *program;   /* "program": the agent's program, an absolute path */
	const char *profile;   /* "profile": the agent profile in effect (launcher/profiles), or "none" */
	const char *policy;    /* "policy": the policy file loaded, or "<default>" for the built-in one */
	const char *workspace; /* "workspace": what ./ stands for, absolute and canonical */
	const char *sandbox;   /* "sandbox": the kernel layer, "bubblewrap", or AUDIT_SANDBOX_NONE (--no-sandbox) */
	/* the sandbox's parts: NULL (left out), 0 and false when there is none */
	const char *network;   /* "network": the policy's sandbox.network: "proxy", "none", "host" */
	unsigned long masked;  /* "masked": paths masked (a deny-read rule or the mandatory list names them,
				  or a unix socket of the host the policy does not name) */
	unsigned long sockets_masked; /* "sockets_masked": of those, unix sockets (masks.h) */
	bool masks_capped;     /* "masks_capped": the walk for what deny-read rules name stopped early, more
				  may exist; left out when false */
	bool sockets_capped;   /* "sockets_capped": the socket walk stopped at a bound (depth or entries),
				  more sockets may exist; left out when false */
	const char *const *seccomp; /* "seccomp": the syscall groups the seccomp filter refuses, NULL-terminated */
	/* "landlock": the Landlock ABI whose ruleset the agent runs under (a JSON number, > 0),
	   else landlock_unavailable as a string ("unavailable: WHY"); left out when neither */
	int landlock;
	const char *landlock_unavailable;
	const char *open_gate; /* "open_gate": "fanotify" when deny-read rules hold at the kernel layer for
				  files that appear during the session (open_gate.h), else "off: why" */
	const char *checkpoint; /* "checkpoint": the workspace's undo store, "link STORE" or "copy STORE"
				   (launcher/checkpoint/supervise.h), else "off: why" */
};

/* A session's end (event session_end): how it ended and what it did, in counts. */
struct audit_session_end {
	int exit_status;       /* "exit_status": airlock's exit status (DESIGN.md step 10) */
	unsigned long allowed; /* "allowed", "denied": decisions logged in the session */
	unsigned long denied;
	unsigned long asked;   /* "asked": of those, the ones a human, session memory, --headless or a timeout answered */
	unsigned long connections; /* "connections": connections the egress proxy took (0 without it) */
	unsigned long refused;     /* "refused": of those, the ones it refused */
};

/*
 * Bytes the egress proxy relayed: one connection's (a proxy event) or the
 * session's in all (session_end).
 */
struct audit_traffic {
	uint64_t bytes_up;   /* "bytes_up": from the agent to the destination */
	uint64_t bytes_down; /* "bytes_down": from the destination to the agent */
	long duration_ms;    /* "duration_ms": from accept to close; -1: left out (session_end) */
	const char *via;     /* "via": how the agent came, "transparent", "http-proxy", "socks"; NULL: left out */
};

/*
 * One audit event.  NULL / -1 fields are left out of the line; so are the
 * fields of a group (start, end, traffic) whose pointer is NULL.  The JSON
 * name of each field is the member's name, but for the groups' members
 * (named at each).
 */
struct audit_event {
	const char *source;        /* AUDIT_SOURCE_SHIM, _PROXY, _LAUNCHER */
	pid_t pid;                 /* 0: none */
	pid_t ns_pid;              /* "ns_pid": the pid the process reports in its own pid namespace
				      (a container's) when it is not pid; 0: left out */
	const char *event;         /* launcher: AUDIT_SESSION_START, AUDIT_SESSION_END, AUDIT_COPY_APPLIED,
				      AUDIT_KEPT_ASIDE; NULL otherwise */
	const struct audit_session_start *start; /* event session_start: its fields; else NULL */
	const char *command;       /* exec: the program */
	const char *const *args;   /* exec: argv[1..] */
	size_t nargs;
	const char *file;          /* open: canonical path; copy_applied, kept_aside: the host path */
	const char *kept;          /* kept_aside: where the session's version was kept, or NULL */
	const char *action;        /* open: read / write / exec */
	const char *network_dst;   /* connect: host:port */
	const char *network_addr;  /* proxy, transparent: the address the agent connected to when
				      network_dst names the host its TLS server name or Host header
				      gave (decided by that name, checked against the proxy's own
				      resolution of it); NULL otherwise */
	const char *decision;      /* allow / deny / ask */
	const char *decided_by;    /* policy / human / session / default / timeout */
	const char *rule;          /* "file:line", NULL for the default */
	const char *reason;
	const char *layer;         /* a refusal below the shim: the kernel layer that made it
				      ("fanotify": the open gate); NULL otherwise */
	long response_time_ms;     /* asks: how long the answer took; -1: none */
	const struct audit_session_end *end; /* event session_end: its fields; else NULL */
	const struct audit_traffic *traffic; /* proxy: the connection's bytes; session_end: the session's */
	const char *message;       /* for people: what a launcher event says; why the proxy refused */
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
 * Appends a note of the launcher's (source AUDIT_SOURCE_LAUNCHER, no "event"):
 * pid (0: none), decision (NULL: none; "deny" for what it refused) and
 * message, as audit_write().  A NULL log writes nothing and returns 0.
 */
int audit_launcher_note(struct audit_log *log, pid_t pid, const char *decision, const char *message);

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
