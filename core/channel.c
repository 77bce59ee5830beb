/* channel.c — the shim <-> launcher channel: canonical encode/decode of datagrams and the socket helpers of both ends. */
#include "core/channel.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/*
 * Everything here runs in the shim, possibly in a vfork child: no malloc, no
 * stdio, no locks, no static mutable state.  Only syscalls and mem*().
 */

/* ---- Names ------------------------------------------------------------------ */

const char *channel_type_name(enum channel_type t)
{
	static const char *const names[CHANNEL_TYPE_MAX] = { "?", "event", "ask", "answer", "hello" };
	return (unsigned)t < CHANNEL_TYPE_MAX ? names[t] : "?";
}

const char *channel_source_name(enum channel_source s)
{
	static const char *const names[CHANNEL_SOURCE_MAX] = { "none", "exec", "open", "connect" };
	return (unsigned)s < CHANNEL_SOURCE_MAX ? names[s] : "?";
}

const char *channel_action_name(unsigned action)
{
	switch (action) {
	case 0: return "none";
	case CHANNEL_ACTION_EXEC: return "exec";
	case CHANNEL_ACTION_CONNECT: return "connect";
	default: return policy_file_action_name(action); /* "read", "write", "exec" or "?" */
	}
}

/* ---- Little-endian fields ------------------------------------------------ */

static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- Field checks shared by both directions ----------------------------- */

/* The action a source allows; why a bad one is bad.  NULL when fine. */
static const char *check_action(enum channel_source s, unsigned action)
{
	switch (s) {
	case CHANNEL_SOURCE_NONE:
		return action == 0 ? NULL : "action on a message without a source";
	case CHANNEL_SOURCE_EXEC:
		return action == CHANNEL_ACTION_EXEC ? NULL : "exec message without the exec action";
	case CHANNEL_SOURCE_OPEN:
		return action == POLICY_FILE_READ || action == POLICY_FILE_WRITE ||
				       action == POLICY_FILE_EXEC
			       ? NULL
			       : "file message without exactly one file action";
	case CHANNEL_SOURCE_CONNECT:
		return action == CHANNEL_ACTION_CONNECT ? NULL
							: "connect message without the connect action";
	default:
		return "unknown source";
	}
}

/* Which sources a type may carry: requests and reports need one, the rest none. */
static const char *check_type_source(enum channel_type t, enum channel_source s)
{
	switch (t) {
	case CHANNEL_EVENT:
	case CHANNEL_ASK:
		return s != CHANNEL_SOURCE_NONE ? NULL : "request without a source";
	case CHANNEL_ANSWER:
	case CHANNEL_HELLO:
		return s == CHANNEL_SOURCE_NONE ? NULL : "answer or hello with a source";
	default:
		return "unknown message type";
	}
}

/* Every fixed-header field of m; NULL when all are in range. */
static const char *check_fields(const struct channel_msg *m)
{
	const char *why = check_type_source(m->type, m->source);
	if (!why)
		why = check_action(m->source, m->action);
	if (why)
		return why;
	if (m->flags & ~CHANNEL_F_ALL)
		return "unknown flag bits";
	if ((m->flags & CHANNEL_F_TRUNCATED) && m->source != CHANNEL_SOURCE_EXEC)
		return "truncated flag on a message without arguments";
	if ((m->flags & CHANNEL_F_COPY) && m->source != CHANNEL_SOURCE_EXEC)
		return "copy flag on a message that is no exec";
	if ((m->flags & CHANNEL_F_PID) && m->type != CHANNEL_EVENT && m->type != CHANNEL_ASK)
		return "pid flag on a message that is neither an event nor an ask";
	if ((unsigned)m->decision >= POLICY_DECISION_MAX)
		return "decision out of range";
	if (m->type == CHANNEL_ANSWER && m->decision == POLICY_ASK)
		return "answer that is neither allow nor deny";
	if ((unsigned)m->decided_by >= CHANNEL_DECIDED_BY_MAX)
		return "decided_by out of range";
	if (m->rule < -1)
		return "rule index below -1";
	return NULL;
}

/* ---- Arguments cursor ------------------------------------------------------ */

void channel_args_begin(const struct channel_msg *m, struct channel_args *it)
{
	it->argv = m->argv;
	it->p = m->argv ? NULL : m->args_wire;
	it->left = (m->argv || m->args_wire) ? m->argc : 0;
}

const char *channel_args_next(struct channel_args *it, size_t *len)
{
	const char *s;
	size_t n;
	if (it->left == 0)
		return NULL;
	it->left--;
	if (it->argv) {
		s = *it->argv++;
		if (!s)
			s = "";
		n = strlen(s);
	} else {
		/* Already validated by channel_decode(): u32 n, n bytes, NUL. */
		n = get_u32(it->p);
		s = (const char *)it->p + 4;
		it->p += 4 + n + 1;
	}
	if (len)
		*len = n;
	return s;
}

/* ---- Encode -------------------------------------------------------------------- */

/* An output cursor: bytes written so far and the room there is. */
struct writer {
	uint8_t *buf;
	size_t len;
	size_t cap;
};

static size_t room(const struct writer *w)
{
	return w->cap - w->len;
}

/* Appends string s (n bytes, no NUL inside) in wire form; -EMSGSIZE when it does not fit. */
static int put_str(struct writer *w, const char *s, size_t n)
{
	if (room(w) < 5 || n > room(w) - 5)
		return -EMSGSIZE;
	put_u32(w->buf + w->len, (uint32_t)n);
	memcpy(w->buf + w->len + 4, s, n);
	w->buf[w->len + 4 + n] = 0;
	w->len += 4 + n + 1;
	return 0;
}

static int put_cstr(struct writer *w, const char *s)
{
	if (!s)
		s = "";
	return put_str(w, s, strnlen(s, CHANNEL_MAX_MSG));
}

/*
 * EXEC body.  Arguments go in while they fit; the first that does not is cut
 * to the room left (when at least one byte of it fits), the rest dropped, and
 * the truncated flag set in the already written header byte.
 */
static int put_exec(struct writer *w, const struct channel_msg *m)
{
	struct channel_args it;
	const char *s;
	size_t n, count_at;
	uint32_t count = 0;
	uint32_t total = m->argc_total > m->argc ? m->argc_total : m->argc;
	int r = put_cstr(w, m->program);
	if (r < 0)
		return r;
	if (m->flags & CHANNEL_F_COPY) {
		if (!m->copy_of || m->copy_of[0] != '/')
			return -EINVAL;
		if ((r = put_cstr(w, m->copy_of)) < 0)
			return r;
	}
	if (room(w) < 8)
		return -EMSGSIZE;
	put_u32(w->buf + w->len, total);
	count_at = w->len + 4;
	w->len += 8;
	channel_args_begin(m, &it);
	while ((s = channel_args_next(&it, &n)) != NULL) {
		if (put_str(w, s, n) == 0) {
			count++;
			continue;
		}
		if (room(w) > 5) {
			put_str(w, s, room(w) - 5);
			count++;
		}
		w->buf[3] |= CHANNEL_F_TRUNCATED;
		break;
	}
	if (count < total)
		w->buf[3] |= CHANNEL_F_TRUNCATED;
	put_u32(w->buf + count_at, count);
	return 0;
}

static void put_header(struct writer *w, const struct channel_msg *m)
{
	uint8_t *p = w->buf;
	put_u16(p, CHANNEL_MAGIC_VERSION);
	p[2] = (uint8_t)m->type;
	p[3] = (uint8_t)m->flags;
	put_u32(p + 4, 0); /* length, filled in when the body is done */
	put_u32(p + 8, m->id);
	p[12] = (uint8_t)m->source;
	p[13] = (uint8_t)m->action;
	p[14] = (uint8_t)m->decision;
	p[15] = (uint8_t)m->decided_by;
	put_u32(p + 16, (uint32_t)m->rule);
	put_u32(p + 20, (uint32_t)m->result);
	w->len = CHANNEL_HEADER_SIZE;
}

static int put_body(struct writer *w, const struct channel_msg *m)
{
	int r;
	switch (m->source) {
	case CHANNEL_SOURCE_EXEC:
		return put_exec(w, m);
	case CHANNEL_SOURCE_OPEN:
		return put_cstr(w, m->path);
	case CHANNEL_SOURCE_CONNECT:
		r = put_cstr(w, m->host);
		if (r < 0)
			return r;
		if (room(w) < 2)
			return -EMSGSIZE;
		put_u16(w->buf + w->len, m->port);
		w->len += 2;
		return 0;
	default:
		return 0;
	}
}

int channel_encode(uint8_t *buf, size_t cap, const struct channel_msg *m)
{
	struct writer w = { buf, 0, cap < CHANNEL_MAX_MSG ? cap : CHANNEL_MAX_MSG };
	int r;
	if (check_fields(m))
		return -EINVAL;
	if (w.cap < CHANNEL_HEADER_SIZE)
		return -EMSGSIZE;
	put_header(&w, m);
	/* the sender's own pid follows the body: its room kept from the arguments */
	int pid = (m->flags & CHANNEL_F_PID) != 0;
	if (pid && m->self_pid <= 0)
		return -EINVAL;
	if (pid && w.cap < CHANNEL_HEADER_SIZE + 4)
		return -EMSGSIZE;
	w.cap -= pid ? 4 : 0;
	r = put_body(&w, m);
	if (r < 0)
		return r;
	if (pid) {
		put_u32(buf + w.len, (uint32_t)m->self_pid);
		w.len += 4;
	}
	put_u32(buf + 4, (uint32_t)w.len);
	return (int)w.len;
}

int channel_encode_answer(uint8_t *buf, size_t cap, uint32_t id, enum policy_decision decision,
			  enum channel_decided_by by, int32_t rule)
{
	struct channel_msg m = { .type = CHANNEL_ANSWER, .id = id, .decision = decision,
				 .decided_by = by, .rule = rule };
	return channel_encode(buf, cap, &m);
}

/* ---- Decode --------------------------------------------------------------------- */

/* An input cursor over the datagram's body; why is set on the first error. */
struct reader {
	const uint8_t *p;
	const uint8_t *end;
	const char *why;
};

static size_t left(const struct reader *r)
{
	return (size_t)(r->end - r->p);
}

/* Reads a wire string; NULL (and r->why) when a length, NUL or byte is wrong. */
static const char *get_str(struct reader *r, size_t *len)
{
	const char *s;
	uint32_t n;
	if (left(r) < 5) {
		r->why = "string header past the end";
		return NULL;
	}
	n = get_u32(r->p);
	if (n > left(r) - 5) {
		r->why = "string length past the end";
		return NULL;
	}
	s = (const char *)r->p + 4;
	if (s[n] != '\0') {
		r->why = "string without its NUL";
		return NULL;
	}
	if (memchr(s, 0, n)) {
		r->why = "string with an embedded NUL";
		return NULL;
	}
	r->p += 4 + (size_t)n + 1;
	if (len)
		*len = n;
	return s;
}

static int get_exec(struct reader *r, struct channel_msg *m)
{
	m->program = get_str(r, NULL);
	if (!m->program)
		return -EBADMSG;
	if (m->flags & CHANNEL_F_COPY) {
		m->copy_of = get_str(r, NULL);
		if (!m->copy_of)
			return -EBADMSG;
		if (m->copy_of[0] != '/') {
			r->why = "copy_of that is no absolute path";
			return -EBADMSG;
		}
	}
	if (left(r) < 8) {
		r->why = "argument counts past the end";
		return -EBADMSG;
	}
	m->argc_total = get_u32(r->p);
	m->argc = get_u32(r->p + 4);
	r->p += 8;
	if (m->argc > m->argc_total) {
		r->why = "more arguments than argc_total";
		return -EBADMSG;
	}
	if (m->argc < m->argc_total && !(m->flags & CHANNEL_F_TRUNCATED)) {
		r->why = "arguments missing without the truncated flag";
		return -EBADMSG;
	}
	/* Each string takes at least 5 bytes: a cheap bound before walking them. */
	if (m->argc > left(r) / 5) {
		r->why = "argument count past the end";
		return -EBADMSG;
	}
	m->args_wire = r->p;
	for (uint32_t i = 0; i < m->argc; i++)
		if (!get_str(r, NULL))
			return -EBADMSG;
	m->args_wire_len = (size_t)(r->p - m->args_wire);
	return 0;
}

static int get_body(struct reader *r, struct channel_msg *m)
{
	switch (m->source) {
	case CHANNEL_SOURCE_EXEC:
		return get_exec(r, m);
	case CHANNEL_SOURCE_OPEN:
		m->path = get_str(r, NULL);
		return m->path ? 0 : -EBADMSG;
	case CHANNEL_SOURCE_CONNECT:
		m->host = get_str(r, NULL);
		if (!m->host)
			return -EBADMSG;
		if (left(r) < 2) {
			r->why = "port past the end";
			return -EBADMSG;
		}
		m->port = get_u16(r->p);
		r->p += 2;
		return 0;
	default:
		return 0;
	}
}

/* Magic, version and sizes: everything needed before trusting the header. */
static int check_frame(const uint8_t *buf, size_t len, const char **why)
{
	if (len < 2) {
		*why = "shorter than the version field";
		return -EBADMSG;
	}
	if (buf[0] != CHANNEL_VERSION || buf[1] != CHANNEL_MAGIC) {
		*why = buf[1] == CHANNEL_MAGIC ? "unsupported protocol version"
					       : "not an airlock channel message (bad magic)";
		return -EPROTO;
	}
	if (len < CHANNEL_HEADER_SIZE) {
		*why = "shorter than the header";
		return -EBADMSG;
	}
	if (len > CHANNEL_MAX_MSG) {
		*why = "longer than CHANNEL_MAX_MSG";
		return -EBADMSG;
	}
	if (get_u32(buf + 4) != len) {
		*why = "length field does not match the datagram";
		return -EBADMSG;
	}
	return 0;
}

static void get_header(const uint8_t *p, struct channel_msg *m)
{
	m->type = (enum channel_type)p[2];
	m->flags = p[3];
	m->id = get_u32(p + 8);
	m->source = (enum channel_source)p[12];
	m->action = p[13];
	m->decision = (enum policy_decision)p[14];
	m->decided_by = (enum channel_decided_by)p[15];
	m->rule = (int32_t)get_u32(p + 16);
	m->result = (int32_t)get_u32(p + 20);
}

int channel_decode(const uint8_t *buf, size_t len, struct channel_msg *out)
{
	struct reader r;
	int rc;
	memset(out, 0, sizeof *out);
	rc = check_frame(buf, len, &out->why);
	if (rc < 0)
		return rc;
	r = (struct reader){ buf + CHANNEL_HEADER_SIZE, buf + len, NULL };
	get_header(buf, out);
	out->why = check_fields(out);
	if (out->why)
		return -EBADMSG;
	rc = get_body(&r, out);
	if (rc == 0 && (out->flags & CHANNEL_F_PID)) {
		if (r.end - r.p < 4) {
			r.why = "the sender's pid past the end";
			rc = -EBADMSG;
		} else if ((int32_t)get_u32(r.p) <= 0) {
			r.why = "a sender's own pid that is not positive";
			rc = -EBADMSG;
		} else {
			out->self_pid = (int32_t)get_u32(r.p);
			r.p += 4;
		}
	}
	if (rc == 0 && r.p != r.end) {
		r.why = "trailing bytes after the body";
		rc = -EBADMSG;
	}
	if (rc < 0)
		out->why = r.why;
	return rc;
}

/* ---- Sockets ---------------------------------------------------------------------- */

/* Fills a sockaddr_un for path; -ENAMETOOLONG when it does not fit. */
static int make_addr(const char *path, struct sockaddr_un *sa, socklen_t *salen)
{
	size_t n = strlen(path);
	if (n == 0)
		return -EINVAL;
	if (n >= sizeof sa->sun_path)
		return -ENAMETOOLONG;
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n + 1);
	*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

int channel_connect(const char *path)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, r = make_addr(path, &sa, &salen);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/*
	 * SO_PASSCRED on the sending side makes the kernel attach the sender's
	 * credentials to every datagram (unix(7), SCM_CREDENTIALS), even one
	 * sent before the launcher accepted: a socket shared by a process and
	 * its children still names, per message, the process that sent it.
	 */
	int on = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
	/* An AF_UNIX connect interrupted while the backlog is full may be retried as is. */
	while ((r = connect(fd, (struct sockaddr *)&sa, salen)) < 0 && errno == EINTR)
		;
	if (r < 0 && errno != EISCONN) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int channel_send_buf(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;
	while ((n = send(fd, buf, len, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	/* SEQPACKET sends are atomic; a short count would mean a broken socket type. */
	return (size_t)n == len ? 0 : -EIO;
}

int channel_send(int fd, const struct channel_msg *m, uint8_t *scratch, size_t cap)
{
	int len = channel_encode(scratch, cap, m);
	if (len < 0)
		return len;
	return channel_send_buf(fd, scratch, (size_t)len);
}

int channel_recv_from(int fd, uint8_t *buf, size_t cap, struct channel_msg *out,
		      struct ucred *sender)
{
	struct iovec iov = { buf, cap };
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;
	int r;
	memset(out, 0, sizeof *out);
	if (sender) {
		memset(sender, 0, sizeof *sender);
		mh.msg_control = ctl.space;
		mh.msg_controllen = sizeof ctl.space;
	}
	while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	if (n == 0) /* end of stream (a zero-length datagram is not a message either) */
		return -ECONNRESET;
	for (struct cmsghdr *c = sender ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof *sender))
			memcpy(sender, CMSG_DATA(c), sizeof *sender);
	if (mh.msg_flags & MSG_TRUNC) {
		out->why = "datagram larger than the receive buffer";
		return -EMSGSIZE;
	}
	r = channel_decode(buf, (size_t)n, out);
	return r < 0 ? r : (int)n;
}

int channel_recv(int fd, uint8_t *buf, size_t cap, struct channel_msg *out)
{
	return channel_recv_from(fd, buf, cap, out, NULL);
}

int channel_ask(int fd, const struct channel_msg *req, struct channel_msg *answer,
		uint8_t *scratch, size_t cap)
{
	int r;
	if (req->type != CHANNEL_ASK)
		return -EINVAL;
	r = channel_send(fd, req, scratch, cap);
	if (r < 0)
		return r;
	for (;;) {
		r = channel_recv(fd, scratch, cap, answer);
		/* A bad datagram is dropped, as the launcher drops ours: keep waiting. */
		if (r == -EBADMSG || r == -EPROTO || r == -EMSGSIZE)
			continue;
		if (r < 0)
			return r;
		if (answer->type == CHANNEL_ANSWER && answer->id == req->id)
			return (int)answer->decision;
	}
}

int channel_ask_path(const char *path, const struct channel_msg *req, struct channel_msg *answer,
		     uint8_t *scratch, size_t cap)
{
	int r, fd = channel_connect(path);
	if (fd < 0)
		return fd;
	r = channel_ask(fd, req, answer, scratch, cap);
	close(fd);
	return r;
}

int channel_listen(const char *path)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, r = make_addr(path, &sa, &salen);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Linux creates the socket file with the socket inode's mode (minus umask): set it first. */
	if (fchmod(fd, 0600) < 0 || bind(fd, (struct sockaddr *)&sa, salen) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (chmod(path, 0600) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		unlink(path);
		close(fd);
		return r;
	}
	return fd;
}

int channel_accept(int lfd)
{
	int fd;
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) < 0 && errno == EINTR)
		;
	return fd < 0 ? -errno : fd;
}

int channel_peer(int fd, struct ucred *out)
{
	socklen_t len = sizeof *out;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, out, &len) < 0)
		return -errno;
	return len == sizeof *out ? 0 : -EPROTO;
}
