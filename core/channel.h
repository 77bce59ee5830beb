/* channel.h — the shim <-> launcher channel: wire format, encode/decode, and the socket helpers of both ends. */
#ifndef AIRLOCK_CHANNEL_H
#define AIRLOCK_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/policy.h"

/*
 * One message is one SOCK_SEQPACKET datagram on an AF_UNIX socket (the
 * session's `channel`, DESIGN.md steps 2, 7-9).  All integers are little
 * endian, whatever the host.  Layout:
 *
 *   off size field
 *     0   2  magic_version  (CHANNEL_MAGIC << 8) | CHANNEL_VERSION
 *     2   1  type           enum channel_type
 *     3   1  flags          CHANNEL_F_* bits
 *     4   4  length         whole datagram, header included; must equal it
 *     8   4  id             request id; an ANSWER carries its ASK's id
 *    12   1  source         enum channel_source (NONE for ANSWER, HELLO)
 *    13   1  action         see "Actions" below (0 for ANSWER, HELLO)
 *    14   1  decision       enum policy_decision
 *    15   1  decided_by     enum channel_decided_by
 *    16   4  rule           int32; policy rule index, -1 = the default
 *    20   4  result         int32; errno-ish outcome of the call (0 = none)
 *    24      body           by source; empty for ANSWER and HELLO
 *
 *   a string is: u32 n, n bytes without NUL, one NUL byte
 *   EXEC body:    string program, [string copy_of when CHANNEL_F_COPY],
 *                 u32 argc_total, u32 argc, argc strings
 *   OPEN body:    string path (canonical)
 *   CONNECT body: string host, u16 port
 *   then, with CHANNEL_F_PID (EVENT and ASK only): u32 self_pid, > 0
 *
 * Every length is checked against the datagram; trailing bytes, unknown bits,
 * out-of-range enums, strings without their NUL or with an embedded NUL are
 * all refused.  The encoding is canonical: decoding then re-encoding gives the
 * same bytes (the fuzz target checks it).
 *
 * The sender's pid and uid are never in a message: the kernel attaches them
 * to every datagram (SCM_CREDENTIALS, read by channel_recv_from()), and
 * channel_peer() (SO_PEERCRED) gives the process that connected, for a
 * datagram that carries none.
 */

#define CHANNEL_MAGIC 0xA1u
#define CHANNEL_VERSION 1u
#define CHANNEL_MAGIC_VERSION ((CHANNEL_MAGIC << 8) | CHANNEL_VERSION)

/* Largest datagram either side sends or accepts, header included. */
#define CHANNEL_MAX_MSG 65536u
#define CHANNEL_HEADER_SIZE 24u

enum channel_type {
	CHANNEL_EVENT = 1,  /* shim -> launcher: a decision already taken; no reply */
	CHANNEL_ASK = 2,    /* shim -> launcher: a request; the shim blocks for the ANSWER */
	CHANNEL_ANSWER = 3, /* launcher -> shim: allow or deny for the ASK with the same id */
	CHANNEL_HELLO = 4,  /* either way, optional: header only, says "this version" */
	CHANNEL_TYPE_MAX
};

/* What kind of call the message is about. */
enum channel_source {
	CHANNEL_SOURCE_NONE = 0, /* ANSWER and HELLO */
	CHANNEL_SOURCE_EXEC = 1,
	CHANNEL_SOURCE_OPEN = 2, /* any file call: open, unlink, rename, mkdir, ... */
	CHANNEL_SOURCE_CONNECT = 3,
	CHANNEL_SOURCE_MAX
};

/*
 * Actions: an OPEN carries exactly one POLICY_FILE_* bit (policy.h); an EXEC
 * carries CHANNEL_ACTION_EXEC and a CONNECT CHANNEL_ACTION_CONNECT, values
 * that cannot be mistaken for file bits.
 */
#define CHANNEL_ACTION_EXEC 0x40u
#define CHANNEL_ACTION_CONNECT 0x80u

/* Who took the decision (the audit log's `decided_by`, plus timeout). */
enum channel_decided_by {
	CHANNEL_BY_POLICY = 0,
	CHANNEL_BY_HUMAN = 1,
	CHANNEL_BY_SESSION = 2, /* an earlier "for the rest of the session" answer */
	CHANNEL_BY_DEFAULT = 3, /* headless mode's default answer */
	CHANNEL_BY_TIMEOUT = 4, /* nobody answered within ask_timeout */
	CHANNEL_DECIDED_BY_MAX
};

/* EXEC: argv did not fit; args were dropped or the last one cut short. */
#define CHANNEL_F_TRUNCATED 0x01u
/*
 * EXEC: the program is a copy of another (the same GNU build-id,
 * core/buildid.h), copy_of, and was decided as that one too; copy_of is a
 * non-empty absolute path.  The shim's word: it may explain a stricter
 * decision, never make one looser.
 */
#define CHANNEL_F_COPY 0x02u
/*
 * EVENT, ASK: a u32 after the body, self_pid: the sender's pid as it sees
 * itself (getpid(2) in its own pid namespace).  The shim's word, for the
 * log only: who sent a message is the kernel's SCM_CREDENTIALS pid, in the
 * receiver's namespace; the two differ for a process in a container's pid
 * namespace (pid_namespaces(7)), and the log then gives both.
 */
#define CHANNEL_F_PID 0x04u
#define CHANNEL_F_ALL (CHANNEL_F_TRUNCATED | CHANNEL_F_COPY | CHANNEL_F_PID)

/*
 * A message in memory.  Strings are borrowed: on encode from the caller, on
 * decode they point into the caller's buffer, which must outlive the struct.
 * Fields a type or source does not use must be zero / NULL.
 */
struct channel_msg {
	enum channel_type type;
	unsigned flags; /* CHANNEL_F_* */
	uint32_t id;
	enum channel_source source;
	unsigned action; /* see "Actions" */
	enum policy_decision decision;
	enum channel_decided_by decided_by;
	int32_t rule;   /* >= -1 */
	int32_t result; /* errno-ish; 0 when the call was not made or succeeded */

	/* EXEC */
	const char *program;     /* path being executed; NULL encodes as "" */
	const char *const *argv; /* encode: argc strings (NULL-terminated or not); decode: NULL */
	uint32_t argc;           /* strings in argv (encode) or on the wire (decode) */
	uint32_t argc_total;     /* argc before truncation; on encode 0 means argc */
	const char *copy_of;     /* with CHANNEL_F_COPY: the program this one is a copy of */
	const uint8_t *args_wire; /* decode: the encoded strings (read them with channel_args_*) */
	size_t args_wire_len;

	const char *path; /* OPEN: canonical path; NULL encodes as "" */
	const char *host; /* CONNECT: name or IP literal; NULL encodes as "" */
	uint16_t port;    /* CONNECT */
	int32_t self_pid; /* with CHANNEL_F_PID: the sender's own getpid(2), > 0; else 0 */

	const char *why; /* set by a failed decode: what was wrong (static storage) */
};

/* A cursor over an EXEC message's arguments, decoded or not. */
struct channel_args {
	const char *const *argv; /* when reading an encode-side message */
	const uint8_t *p;        /* when reading a decoded one */
	uint32_t left;
};

/* Starts a cursor over m's arguments (argv if set, else args_wire). */
void channel_args_begin(const struct channel_msg *m, struct channel_args *it);

/*
 * The next argument, NUL-terminated, its length in *len (len may be NULL), or
 * NULL after the last.  Only valid on a message that encoded or decoded.
 */
const char *channel_args_next(struct channel_args *it, size_t *len);

/* Names for logs: "event", "exec", "read", "human", ... ("?" out of range). */
const char *channel_type_name(enum channel_type t);
const char *channel_source_name(enum channel_source s);
const char *channel_action_name(unsigned action);

/*
 * "policy", "human", "session", "default", "timeout" ("?" out of range):
 * the audit log's `decided_by`.  Static storage.  This table and the parse
 * below are inline here, not in channel.c: the TUI, which links no part of
 * the core (tests/tui builds it alone), reads these words in its events.
 */
static inline const char *channel_decided_by_name(enum channel_decided_by d)
{
	static const char *const names[CHANNEL_DECIDED_BY_MAX] = {
		[CHANNEL_BY_POLICY] = "policy",	  [CHANNEL_BY_HUMAN] = "human",
		[CHANNEL_BY_SESSION] = "session", [CHANNEL_BY_DEFAULT] = "default",
		[CHANNEL_BY_TIMEOUT] = "timeout",
	};
	return (unsigned)d < CHANNEL_DECIDED_BY_MAX ? names[d] : "?";
}

/*
 * The enum channel_decided_by named s ("policy", "human", "session",
 * "default", "timeout": the audit log's `decided_by`), or -1 (s NULL too).
 */
static inline int channel_decided_by_parse(const char *s)
{
	for (int i = 0; s && i < CHANNEL_DECIDED_BY_MAX; i++)
		if (strcmp(channel_decided_by_name((enum channel_decided_by)i), s) == 0)
			return i;
	return -1;
}

/* ---- Encode / decode: no allocation, no locks, async-signal-safe ---------- */

/*
 * Encodes m into buf (cap bytes; more than CHANNEL_MAX_MSG is never used).
 * Returns the datagram's length, or -EINVAL when a field is out of range (the
 * same checks decode applies), or -EMSGSIZE when the fixed part and the
 * program, path or host do not fit.  Arguments that do not fit are dropped,
 * the first of them cut to the room left, and CHANNEL_F_TRUNCATED is set:
 * truncation is never silent.
 */
int channel_encode(uint8_t *buf, size_t cap, const struct channel_msg *m);

/* An ANSWER for request id: decision POLICY_ALLOW or POLICY_DENY. */
int channel_encode_answer(uint8_t *buf, size_t cap, uint32_t id, enum policy_decision decision,
			  enum channel_decided_by by, int32_t rule);

/*
 * Decodes the datagram at buf (len bytes) into *out; strings point into buf.
 * Returns 0, -EPROTO (not this magic or version) or -EBADMSG (anything else
 * malformed); on error out->why says what, and nothing else in *out is
 * meaningful.  Reads no byte outside buf[0..len).
 */
int channel_decode(const uint8_t *buf, size_t len, struct channel_msg *out);

/* ---- Client side (the shim) ------------------------------------------------ */

/*
 * These helpers return -errno and leave errno changed: the shim saves and
 * restores errno around them.  EVENTs need no reply, and one datagram send is
 * atomic, so the shim (preload/report.c) sends them all on one connection
 * without a lock: opened on first use or before a fork, shared by every
 * thread and inherited by fork and vfork children, never reconnected because
 * the pid changed (the launcher names each event's sender from its
 * SCM_CREDENTIALS, see channel_recv_from()), only when the program closed or
 * reused its fd.  ASKs use channel_ask_path(): a connection of their own.
 */

/*
 * Connects to the channel socket at path: socket(AF_UNIX, SOCK_SEQPACKET |
 * SOCK_CLOEXEC), SO_PASSCRED (so every datagram carries its sender's
 * credentials) and connect(2), retried on EINTR.  Returns the fd or -errno
 * (-ENAMETOOLONG when path does not fit sun_path).
 */
int channel_connect(const char *path);

/* Sends len bytes as one datagram: MSG_NOSIGNAL, retried on EINTR.  0 or -errno. */
int channel_send_buf(int fd, const uint8_t *buf, size_t len);

/* Encodes m in scratch (cap bytes) and sends it.  0 or -errno (encode errors too). */
int channel_send(int fd, const struct channel_msg *m, uint8_t *scratch, size_t cap);

/*
 * Receives one datagram into buf (cap bytes) and decodes it into *out.
 * Retried on EINTR.  Returns its length, or -ECONNRESET when the peer has
 * closed, -EMSGSIZE when it was larger than cap (the rest is discarded),
 * -EAGAIN on a non-blocking fd with nothing queued, a decode error, or -errno.
 */
int channel_recv(int fd, uint8_t *buf, size_t cap, struct channel_msg *out);

/*
 * As channel_recv(), and stores in *sender the credentials the kernel
 * attached to this datagram (SCM_CREDENTIALS, unix(7): channel_connect()
 * sets SO_PASSCRED, so every message carries its sender's pid, uid and gid,
 * checked by the kernel).  *sender is zero when the datagram carried none.
 * This, not SO_PEERCRED, names the sender of an event: the shim shares one
 * event socket between a process and the children it forks.
 */
int channel_recv_from(int fd, uint8_t *buf, size_t cap, struct channel_msg *out,
		      struct ucred *sender);

/*
 * Sends req (an ASK) on fd and waits for the ANSWER with req->id, skipping
 * anything else that arrives (other ids, EVENTs, malformed datagrams).  Every
 * syscall is retried on EINTR, so a signal handler running meanwhile (with or
 * without SA_RESTART) does not abort the ask.  scratch (cap bytes, at least
 * CHANNEL_HEADER_SIZE) holds both datagrams; req's strings must not point
 * into it.  cap bounds the ASK: with a small stack buffer a long argv is
 * truncated (and flagged) rather than refused.  Returns answer->decision (POLICY_ALLOW or POLICY_DENY), or -errno:
 * -ECONNRESET when the launcher went away — the shim then denies.
 *
 * Concurrency: fd must have no other reader while the ask runs.  The shim
 * does not share one fd between concurrent asks: it uses channel_ask_path(),
 * a fresh connection per ask, which needs no lock (so it is also what a vfork
 * child uses) and makes SO_PEERCRED name the process that really asked.
 */
int channel_ask(int fd, const struct channel_msg *req, struct channel_msg *answer,
		uint8_t *scratch, size_t cap);

/*
 * channel_connect(path), channel_ask(), close: one ask on its own connection.
 * Safe from any thread, in a forked child and in a vfork child: it touches no
 * shared state, takes no lock and allocates nothing (only socket, connect,
 * sendmsg, recvmsg and close, all async-signal-safe).
 */
int channel_ask_path(const char *path, const struct channel_msg *req, struct channel_msg *answer,
		     uint8_t *scratch, size_t cap);

/* ---- Server side (the launcher) -------------------------------------------- */

/*
 * Creates the listening socket at path: AF_UNIX, SOCK_SEQPACKET, close-on-exec,
 * non-blocking (it is meant for the launcher's event loop), mode 0600 (set on the socket before bind(2), so there is no window with
 * looser permissions on Linux, and again on the path after it), backlog
 * SOMAXCONN.  path must not exist (-EADDRINUSE).  Returns the fd or -errno.
 */
int channel_listen(const char *path);

/*
 * accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK, retried on EINTR.  Returns the
 * client's fd, or -EAGAIN when none is waiting, or -errno.
 */
int channel_accept(int lfd);

/* The peer's pid, uid and gid as the kernel saw them at connect(2) (SO_PEERCRED).  0 or -errno. */
int channel_peer(int fd, struct ucred *out);

#endif
