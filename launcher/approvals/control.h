/*
 * control.h — a session's control socket: the live activity stream and the
 * approval queue, for `airlock attach`, `airlock ps` and the run TUI.
 *
 * Transport: a SOCK_STREAM Unix socket.  A headless session listens on
 * <base>/<session id>.control — beside the session directory, not in it: the
 * session directory is bound into the sandbox, and a socket on a read-only
 * bind mount can still be connected to (connect(2) checks write permission
 * on the socket inode, and a read-only mount refuses only writes to regular
 * files, directories and symlinks; see path_resolution(7), unix(7)).  The
 * socket is 0600 in a 0700 directory, and a peer is served only when
 * SO_PEERCRED (unix(7)) says it runs as the launcher's user (or root) and
 * /proc/PID/ns/mnt says it shares the launcher's mount namespace — never the
 * sandbox's — and not a process of the launcher's own tree, which holds
 * every process of the agent (the case that matters with --no-sandbox; a
 * process started through another service, e.g. systemd-run, is not
 * caught: --no-sandbox promises no isolation).  The
 * run TUI gets one end of a socketpair instead.
 *
 * Protocol (version 1): JSON Lines both ways, one object per line, UTF-8,
 * each line at most CONTROL_MAX_LINE bytes; every object has a "type".
 *
 * The launcher sends:
 *   {"type":"hello","version":1,"session":ID,"pid":LAUNCHER_PID,
 *    "agent":"COMMAND LINE","log":"AUDIT LOG PATH","ask_timeout":SECONDS,
 *    "headless":BOOL,"started":"RFC 3339 UTC"}
 *       first, at once, to every client (`airlock ps` reads only this);
 *   {"type":"event","event":{...}}
 *       an audit event as written to the log (see launcher/log/audit.h's fields); one
 *       longer than CONTROL_EVENT_MAX bytes has its strings cut to
 *       CONTROL_FIELD_MAX bytes ("..." added) and its args to the first
 *       CONTROL_EVENT_ARGS, and "cut":true (the log keeps it whole); an
 *       attaching client first gets up to CONTROL_BACKLOG recent ones;
 *   {"type":"skipped","events":N}
 *       N events were not sent to this client: it fell more than a megabyte
 *       behind (they are in the log); asks, answers and status never wait
 *       behind events, and are never skipped;
 *   {"type":"ask","id":N,"pid":PID,"who":"COMMAND LINE","what":"SUBJECT",
 *    "rule":"FILE:LINE"|null,"reason":TEXT|null,"timeout_ms":MS}
 *       a request waiting for a human (SUBJECT: "exec git push",
 *       "write /w/.env", "connect example.com:443"); timeout_ms: how long it
 *       may still wait; ids are unique within the session; who and what are
 *       cut to CONTROL_ASK_TEXT_MAX bytes of JSON text once escaped ("..."
 *       added, and "cut":true); text from the sandbox that is not UTF-8 has
 *       each invalid sequence replaced by U+FFFD, as in the audit log;
 *   {"type":"answered","id":N,"decision":"allow"|"deny",
 *    "decided_by":"human"|"session"|"default"|"timeout"}
 *       an ask is no longer waiting (answered here, elsewhere, by session
 *       memory, by the headless rule or by the timeout);
 *   {"type":"status","allow":N,"deny":N,"asked":N,"pending":N,
 *    "egress_up":BYTES,"egress_down":BYTES,"attached":N}
 *       counts so far; after hello and whenever they change;
 *   {"type":"end","status":EXIT_STATUS}
 *       the agent ended; the launcher closes the socket after it.
 *
 * A client sends:
 *   {"type":"attach"}
 *       it will answer asks: while at least one client is attached, asks
 *       wait for an answer (up to ask_timeout) instead of taking the
 *       headless rule; when the last one leaves, waiting asks take it;
 *   {"type":"answer","id":N,"answer":"allow"|"deny"|"allow-session"|"deny-session"}
 *       the *-session forms are remembered for the rest of the session (the
 *       TUI's A and B keys); an unknown or already answered id is ignored;
 *   {"type":"quit"}
 *       ends the agent (SIGTERM to its process group, SIGKILL 2 s later).
 * A malformed line is logged (a launcher audit event) and dropped; a line
 * over the bound closes that client.
 */
#ifndef AIRLOCK_CONTROL_H
#define AIRLOCK_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTROL_VERSION 1
#define CONTROL_MAX_LINE 65536 /* bytes, newline included */
#define CONTROL_BACKLOG 500    /* recent events replayed to an attaching client (2 MiB at most) */
#define CONTROL_EVENT_MAX 16384   /* bytes of an event line sent whole; longer ones are cut */
#define CONTROL_FIELD_MAX 1024    /* bytes of a string of a cut event (an argument: a quarter) */
#define CONTROL_EVENT_ARGS 64     /* arguments of a cut event */
#define CONTROL_ASK_TEXT_MAX 4096 /* bytes of an ask's who and what, escaped */

/* Client side helpers, shared by `attach`, `ps` and the TUI (control_client.c). */

/*
 * The directory sessions live in (see session_create()): /run/airlock for
 * root, else $XDG_RUNTIME_DIR/airlock, else /tmp/airlock-UID.  Writes it to
 * out (cap bytes).  With create, makes it (0700) when missing.  0 or -errno.
 */
int control_base(char *out, size_t cap, bool create);

/* One running session, as its hello says. */
struct control_session {
	char id[17];
	pid_t pid;        /* the launcher */
	char agent[512];  /* the agent's command line, cut to fit */
	char started[40]; /* RFC 3339 */
	bool headless;
	char path[4096];  /* the control socket */
};

/*
 * Lists the running sessions of this user: connects to each
 * <base>/<id>.control and reads its hello (waiting at most timeout_ms for
 * each).  *out is malloc'ed (free it), ordered oldest first; *n its length.
 * Sockets nobody answers on are skipped.  0 or -errno.
 */
int control_list(struct control_session **out, size_t *n, int timeout_ms);

/*
 * Connects to the control socket at path.  Returns a blocking, close-on-exec
 * stream socket, or -errno.
 */
int control_connect(const char *path);

/* ---- the launcher's side (control.c) ------------------------------------------ */

struct control;

/* What every hello says about the session.  Strings are copied. */
struct control_info {
	const char *session; /* id */
	const char *agent;   /* the agent's command line */
	const char *log;     /* the audit log's path */
	unsigned ask_timeout; /* seconds */
	bool headless;
};

/* An answer a client gave (control.h's "answer" values). */
enum control_answer {
	CONTROL_ALLOW,
	CONTROL_DENY,
	CONTROL_ALLOW_SESSION,
	CONTROL_DENY_SESSION,
	CONTROL_ANSWER_MAX
};

/*
 * The answer's name on the wire: "allow", "deny", "allow-session",
 * "deny-session" (or "?").  Static storage.  Here and not in a .c file: the
 * TUI, which links no part of the launcher, says its answers with it.
 */
static inline const char *control_answer_name(enum control_answer a)
{
	static const char *const names[CONTROL_ANSWER_MAX] = {
		[CONTROL_ALLOW] = "allow",
		[CONTROL_DENY] = "deny",
		[CONTROL_ALLOW_SESSION] = "allow-session",
		[CONTROL_DENY_SESSION] = "deny-session",
	};
	return (unsigned)a < CONTROL_ANSWER_MAX ? names[a] : "?";
}

/* True for the answers that allow (CONTROL_ALLOW, CONTROL_ALLOW_SESSION). */
static inline bool control_answer_allows(enum control_answer a)
{
	return a == CONTROL_ALLOW || a == CONTROL_ALLOW_SESSION;
}

/* What the launcher is told.  Any may be NULL. */
struct control_ops {
	void (*answer)(void *ctx, uint64_t id, enum control_answer answer);
	void (*attached)(void *ctx, unsigned attached); /* the number of attached clients changed */
	void (*quit)(void *ctx);                        /* a client asked to end the agent */
	void (*malformed)(void *ctx, pid_t peer, const char *why); /* a bad line, dropped */
};

/*
 * Starts serving: listens on path (a Unix stream socket made 0600; an old
 * file there is replaced), or on nothing when path is NULL (clients come
 * only through control_adopt()).  ops and ctx are kept.  Returns NULL with a
 * message in err.
 */
struct control *control_new(const char *path, const struct control_info *info,
			    const struct control_ops *ops, void *ctx, char *err, size_t errlen);

/*
 * Serves fd (a connected stream socket, taken over: closed by the control)
 * as a trusted client — the run TUI's end of a socketpair; with attached,
 * as if it had sent {"type":"attach"} already.  0 or -errno.
 */
int control_adopt(struct control *c, int fd, bool attached);

/*
 * Connections from agent or its descendants are refused from now on.  The
 * launcher passes itself, being the agent's child subreaper (prctl(2)
 * PR_SET_CHILD_SUBREAPER): every process the agent starts stays in its tree
 * even when its parent dies; the TUI, adopted through a socketpair, is not
 * checked.
 */
void control_set_agent(struct control *c, pid_t agent);

/* An fd that is readable when control_dispatch() has work (for poll(2)). */
int control_fd(const struct control *c);

/* Does the pending work without blocking: new clients, their lines, writes that wait. */
void control_dispatch(struct control *c);

/* Attached clients now. */
unsigned control_attached(const struct control *c);

/* An audit event line (JSON text, len bytes, no newline) for the activity stream. */
void control_event(struct control *c, const char *line, size_t len);

/* An ask that waits for a human; strings may be NULL.  timeout_ms: how long it may still wait. */
void control_ask(struct control *c, uint64_t id, pid_t pid, const char *who, const char *what,
		 const char *rule, const char *reason, long timeout_ms);

/* An ask published with control_ask() is no longer waiting. */
void control_answered(struct control *c, uint64_t id, const char *decision, const char *decided_by);

/* Counts so far (control.h's "status"); sent only when they changed. */
struct control_status {
	unsigned long allow, deny, asked, pending;
	uint64_t egress_up, egress_down; /* bytes */
};
void control_status(struct control *c, const struct control_status *st);

/*
 * Sends "end" with the agent's exit status to every client, waits up to
 * timeout_ms for their output to drain, and closes them.
 */
void control_end(struct control *c, int status, int timeout_ms);

/* Closes everything and removes the socket file.  Accepts NULL. */
void control_free(struct control *c);

#endif
