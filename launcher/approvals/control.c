/* control.c — the server side of a session's control socket (see control.h): the live activity stream and the approval queue for attached clients; the client side is control_client.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/grow.h"
#include "launcher/approvals/control.h"
#include "launcher/approvals/control_lines.h"
#include "proxy/accept.h"

/*
 * Bytes queued for a client.  Past CLIENT_SOFT_PENDING the activity stream
 * skips it (the events are in the log; it is told how many it missed when it
 * catches up): what the agent does, however much, never crowds out the asks
 * and answers the human is there for.  Past CLIENT_MAX_PENDING — which asks
 * and answers alone reach only when the client reads nothing at all — it is
 * dropped.
 */
#define CLIENT_SOFT_PENDING (1u << 20)
#define CLIENT_MAX_PENDING (8u << 20)
/* Bytes of recent events kept for attaching clients, besides CONTROL_BACKLOG lines. */
#define BACKLOG_MAX_BYTES (2u << 20)
#define MAX_CLIENTS 256

/* ---- the server ----------------------------------------------------------------- */

struct client {
	int fd;
	pid_t pid;
	bool attached;
	/*
	 * Dropped: its fd is closed and nothing more is sent or read, but the
	 * struct lives on until reap() at the end of control_dispatch(), so a
	 * caller up the stack (serve() inside a callback that logged, which
	 * broadcast, which found this client gone) never touches freed memory.
	 */
	bool dead;
	/*
	 * A send found the peer gone (EPIPE): nothing more is sent, but what it
	 * sent before it closed is still read and handled — a script that
	 * answers an ask and closes at once must have its answer taken — and
	 * it is dropped at its end of file.
	 */
	bool hung_up;
	unsigned long skipped; /* events not queued since it fell behind (CLIENT_SOFT_PENDING) */
	char *in; /* CONTROL_MAX_LINE bytes */
	size_t in_len;
	char *out; /* queued output */
	size_t out_len, out_cap, out_off;
};

struct ask_line {
	uint64_t id;
	char *line; /* owned, with its newline */
	size_t len;
};

struct control {
	int listen_fd;
	char *path;
	int ep;
	struct control_ops ops;
	void *ctx;
	char *hello; /* owned line */
	size_t hello_len;
	struct client *clients[MAX_CLIENTS];
	size_t nclients;
	unsigned attached;
	/* recent events, a ring of lines */
	char *backlog[CONTROL_BACKLOG];
	size_t backlog_len[CONTROL_BACKLOG];
	size_t backlog_next, backlog_count;
	struct ask_line *asks;
	size_t nasks, asks_cap;
	size_t backlog_bytes;
	struct control_status status;
	bool status_sent;
	pid_t agent; /* the agent's process (or bwrap): it and its descendants are refused */
	int wake;            /* an eventfd in ep: readable while dropped clients wait for reap() */
	unsigned depth;      /* control_dispatch() calls under way: reap() waits for the outermost */
	bool attach_changed; /* the attached count changed: ops.attached is told in reap() */
};

static int watch(struct control *c, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };
	if (epoll_ctl(c->ep, EPOLL_CTL_MOD, fd, &ev) == 0)
		return 0;
	return epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void send_status(struct control *c);
static void catch_up(struct control *c, struct client *cl);

/*
 * Drops cl: closes it and marks it dead.  Its memory and the attached
 * callback wait for reap(), which only the outermost control_dispatch()
 * runs: drop() is reached from inside callbacks (a malformed line is logged,
 * the log line is broadcast, the send finds the peer gone), and whoever
 * called them may still hold cl.
 */
static void drop(struct control *c, struct client *cl)
{
	if (cl->dead)
		return;
	cl->dead = true;
	epoll_ctl(c->ep, EPOLL_CTL_DEL, cl->fd, NULL);
	close(cl->fd);
	cl->fd = -1;
	cl->out_len = cl->out_off = 0;
	if (cl->attached) {
		cl->attached = false;
		c->attached--;
		c->attach_changed = true;
	}
	uint64_t one = 1;
	(void)!write(c->wake, &one, sizeof one); /* the loop calls control_dispatch() soon */
}

/*
 * Frees the dead clients and tells ops.attached of a changed count: only
 * from the outermost control_dispatch(), where no caller holds a client.
 * What the callback does may drop more; they wait for the next round.
 */
static void reap(struct control *c)
{
	uint64_t n;
	(void)!read(c->wake, &n, sizeof n);
	for (size_t i = 0; i < c->nclients;) {
		struct client *cl = c->clients[i];
		if (!cl->dead) {
			i++;
			continue;
		}
		c->clients[i] = c->clients[--c->nclients];
		free(cl->in);
		free(cl->out);
		free(cl);
	}
	if (c->attach_changed) {
		c->attach_changed = false;
		if (c->ops.attached)
			c->ops.attached(c->ctx, c->attached);
		send_status(c);
	}
}

/* Writes what is queued for cl; false when cl was dropped or hung up. */
static bool flush(struct control *c, struct client *cl)
{
	if (cl->dead || cl->hung_up)
		return false;
	while (cl->out_off < cl->out_len) {
		ssize_t n = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			cl->hung_up = true; /* serve() reads the rest, and drops it at its end */
			cl->out_off = cl->out_len = 0;
			watch(c, cl->fd, EPOLLIN, cl);
			return false;
		}
		cl->out_off += (size_t)n;
	}
	if (cl->out_off == cl->out_len) {
		cl->out_off = cl->out_len = 0;
		if (cl->skipped) /* caught up: it hears what it missed now, not at the next event */
			catch_up(c, cl);
	}
	watch(c, cl->fd, EPOLLIN | (cl->out_len ? EPOLLOUT : 0), cl);
	return true;
}

/* Queues len bytes for cl; a client that stopped reading long ago is dropped. */
static bool put(struct control *c, struct client *cl, const char *data, size_t len)
{
	if (cl->dead || cl->hung_up)
		return false;
	if (cl->out_len - cl->out_off + len > CLIENT_MAX_PENDING) {
		drop(c, cl);
		return false;
	}
	if (cl->out_off && cl->out_len + len > cl->out_cap) {
		memmove(cl->out, cl->out + cl->out_off, cl->out_len - cl->out_off);
		cl->out_len -= cl->out_off;
		cl->out_off = 0;
	}
	if (cl->out_len + len > cl->out_cap) {
		char *p = grow_array(cl->out, &cl->out_cap, cl->out_len + len, 1, 16384);
		if (!p) {
			drop(c, cl);
			return false;
		}
		cl->out = p;
	}
	memcpy(cl->out + cl->out_len, data, len);
	cl->out_len += len;
	return true;
}

static void broadcast(struct control *c, const char *data, size_t len)
{
	for (size_t i = c->nclients; i-- > 0;) {
		struct client *cl = c->clients[i];
		if (put(c, cl, data, len))
			flush(c, cl);
	}
}

static void send_status(struct control *c)
{
	size_t len;
	char *line = control_line_status(&c->status, c->attached, &len);
	if (line)
		broadcast(c, line, len);
	free(line);
}

/* cl will answer asks; ops.attached is told in reap(), as for a drop. */
static void set_attached(struct control *c, struct client *cl)
{
	if (cl->attached || cl->dead)
		return;
	cl->attached = true;
	c->attached++;
	c->attach_changed = true;
	uint64_t one = 1;
	(void)!write(c->wake, &one, sizeof one);
}

/* A new client gets the hello, the recent events, the status and the waiting asks. */
static int add_client(struct control *c, int fd, pid_t pid, bool attached)
{
	struct client *cl = calloc(1, sizeof *cl);
	if (!cl || !(cl->in = malloc(CONTROL_MAX_LINE)) || c->nclients == MAX_CLIENTS) {
		if (cl)
			free(cl->in);
		free(cl);
		close(fd);
		return -ENOMEM;
	}
	cl->fd = fd;
	cl->pid = pid;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	c->clients[c->nclients++] = cl;
	if (!put(c, cl, c->hello, c->hello_len))
		return -ENOMEM;
	size_t first = (c->backlog_next + CONTROL_BACKLOG - c->backlog_count) % CONTROL_BACKLOG;
	for (size_t k = 0; k < c->backlog_count; k++) {
		size_t i = (first + k) % CONTROL_BACKLOG;
		if (!put(c, cl, c->backlog[i], c->backlog_len[i]))
			return -ENOMEM;
	}
	size_t len;
	char *st = control_line_status(&c->status, c->attached, &len);
	bool ok = st && put(c, cl, st, len);
	free(st);
	for (size_t i = 0; ok && i < c->nasks; i++)
		ok = put(c, cl, c->asks[i].line, c->asks[i].len);
	if (!ok || !flush(c, cl))
		return -ENOMEM;
	if (attached)
		set_attached(c, cl);
	return 0;
}

int control_adopt(struct control *c, int fd, bool attached)
{
	return add_client(c, fd, 0, attached);
}

/* The parent of pid (proc(5): /proc/PID/stat, field 4), or 0. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the command name may hold anything */
	int ppid = 0;
	return p && sscanf(p, ") %*c %d", &ppid) == 1 ? (pid_t)ppid : 0;
}

/* Whether pid is ancestor or one of its descendants (bounded walk up the parents). */
static bool descends_from(pid_t pid, pid_t ancestor)
{
	for (int i = 0; i < 4096 && pid > 1; i++, pid = parent_of(pid))
		if (pid == ancestor)
			return true;
	return false;
}

/*
 * Only this user (or root), from the launcher's own mount namespace —
 * never the sandbox's — and not the agent or one of its descendants (with
 * --no-sandbox they share everything else).
 */
static bool trusted_peer(const struct control *c, int fd, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	struct stat mine, theirs;
	char path[64];
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.pid <= 0)
		return false;
	*pid = cr.pid;
	if (cr.uid != geteuid() && cr.uid != 0)
		return false;
	if (c->agent > 0 && descends_from(cr.pid, c->agent))
		return false;
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)cr.pid);
	if (stat("/proc/self/ns/mnt", &mine) != 0)
		return false;
	if (stat(path, &theirs) != 0)
		/* root's namespaces are closed to us; root may do anything to us anyway */
		return errno == EACCES && cr.uid == 0 && geteuid() != 0;
	return mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev;
}

void control_set_agent(struct control *c, pid_t agent)
{
	c->agent = agent;
}

static void accept_all(struct control *c)
{
	for (;;) {
		int fd = accept_shed(c->listen_fd, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && errno == ECONNABORTED && c->ops.malformed) {
			c->ops.malformed(c->ctx, 0, "a connection to the control socket was refused: the "
					 "launcher is out of file descriptors");
			continue;
		}
		if (fd < 0)
			return;
		pid_t pid = 0;
		if (!trusted_peer(c, fd, &pid)) {
			if (c->ops.malformed)
				c->ops.malformed(c->ctx, pid,
						 "a connection to the control socket from another user, "
						 "another mount namespace or the agent itself was refused");
			close(fd);
			continue;
		}
		add_client(c, fd, pid, false);
	}
}

static void bad_line(struct control *c, const struct client *cl, const char *why)
{
	if (c->ops.malformed)
		c->ops.malformed(c->ctx, cl->pid, why);
}

/* One line from cl; false when cl was dropped. */
static bool handle_line(struct control *c, struct client *cl, const char *line, size_t len)
{
	struct control_request req;
	if (control_line_parse(line, len, &req) < 0)
		bad_line(c, cl, req.why);
	else if (req.type == CONTROL_REQUEST_ATTACH)
		set_attached(c, cl);
	else if (req.type == CONTROL_REQUEST_ANSWER && c->ops.answer)
		c->ops.answer(c->ctx, req.id, req.answer);
	else if (req.type == CONTROL_REQUEST_QUIT && c->ops.quit)
		c->ops.quit(c->ctx);
	return !cl->dead; /* what the callbacks logged was broadcast: cl may be gone */
}

/* Reads what cl sent; false when cl was dropped. */
static bool serve(struct control *c, struct client *cl)
{
	for (;;) {
		ssize_t n = recv(cl->fd, cl->in + cl->in_len, CONTROL_MAX_LINE - cl->in_len,
				 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n <= 0) {
			drop(c, cl);
			return false;
		}
		cl->in_len += (size_t)n;
		char *start = cl->in, *nl;
		while ((nl = memchr(start, '\n', cl->in_len - (size_t)(start - cl->in)))) {
			if (!handle_line(c, cl, start, (size_t)(nl - start)))
				return false;
			start = nl + 1;
		}
		cl->in_len -= (size_t)(start - cl->in);
		memmove(cl->in, start, cl->in_len);
		if (cl->in_len == CONTROL_MAX_LINE) {
			drop(c, cl);
			bad_line(c, cl, "a control line over the bound: the client was dropped");
			return false;
		}
	}
}

void control_dispatch(struct control *c)
{
	struct epoll_event evs[32];
	c->depth++;
	int n = epoll_wait(c->ep, evs, 32, 0);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == NULL) {
			accept_all(c);
			continue;
		}
		if (evs[i].data.ptr == &c->wake)
			continue; /* reap() below reads it */
		/* a client dropped by an earlier event of this round is dead, not freed */
		struct client *cl = evs[i].data.ptr;
		if (cl->dead)
			continue;
		if (evs[i].events & EPOLLOUT)
			flush(c, cl);
		if (!cl->dead && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			serve(c, cl); /* a client that hung up is read to its end */
	}
	if (--c->depth == 0)
		reap(c);
}

int control_fd(const struct control *c)
{
	return c->ep;
}

unsigned control_attached(const struct control *c)
{
	return c->attached;
}

/* The "skipped" line a client that fell behind gets once it catches up. */
static void catch_up(struct control *c, struct client *cl)
{
	char line[96];
	int n = snprintf(line, sizeof line, "{\"type\":\"skipped\",\"events\":%lu}\n", cl->skipped);
	if (put(c, cl, line, (size_t)n))
		cl->skipped = 0;
}

void control_event(struct control *c, const char *line, size_t len)
{
	size_t mlen = 0;
	char *msg = control_line_event(line, len, &mlen);
	if (!msg)
		return;
	for (size_t k = c->nclients; k-- > 0;) {
		struct client *cl = c->clients[k];
		if (cl->dead)
			continue;
		if (cl->out_len - cl->out_off + mlen > CLIENT_SOFT_PENDING) {
			cl->skipped++; /* behind: the stream waits, asks and answers do not */
			continue;
		}
		if (cl->skipped)
			catch_up(c, cl);
		if (put(c, cl, msg, mlen))
			flush(c, cl);
	}
	/* the ring keeps CONTROL_BACKLOG lines and at most BACKLOG_MAX_BYTES */
	size_t i = c->backlog_next;
	c->backlog_bytes -= c->backlog_len[i];
	free(c->backlog[i]);
	c->backlog[i] = msg;
	c->backlog_len[i] = mlen;
	c->backlog_bytes += mlen;
	c->backlog_next = (i + 1) % CONTROL_BACKLOG;
	if (c->backlog_count < CONTROL_BACKLOG)
		c->backlog_count++;
	while (c->backlog_bytes > BACKLOG_MAX_BYTES && c->backlog_count > 1) {
		size_t old = (c->backlog_next + CONTROL_BACKLOG - c->backlog_count) % CONTROL_BACKLOG;
		c->backlog_bytes -= c->backlog_len[old];
		free(c->backlog[old]);
		c->backlog[old] = NULL;
		c->backlog_len[old] = 0;
		c->backlog_count--;
	}
}

void control_ask(struct control *c, uint64_t id, pid_t pid, const char *who, const char *what,
		 const char *rule, const char *reason, long timeout_ms)
{
	size_t len = 0;
	char *line = control_line_ask(id, pid, who, what, rule, reason, timeout_ms, &len);
	struct ask_line *grown = line ? grow_array(c->asks, &c->asks_cap, c->nasks + 1, sizeof *c->asks, 8)
				      : NULL;
	if (!grown) {
		free(line);
		return;
	}
	c->asks = grown;
	c->asks[c->nasks++] = (struct ask_line){ id, line, len };
	broadcast(c, line, len);
}

void control_answered(struct control *c, uint64_t id, const char *decision, const char *decided_by)
{
	size_t i = 0;
	while (i < c->nasks && c->asks[i].id != id)
		i++;
	if (i == c->nasks)
		return; /* never published: answered before anyone saw it */
	free(c->asks[i].line);
	memmove(&c->asks[i], &c->asks[i + 1], (c->nasks - i - 1) * sizeof *c->asks);
	c->nasks--;
	size_t len = 0;
	char *line = control_line_answered(id, decision, decided_by, &len);
	if (line)
		broadcast(c, line, len);
	free(line);
}

void control_status(struct control *c, const struct control_status *st)
{
	if (c->status_sent && memcmp(st, &c->status, sizeof *st) == 0)
		return;
	c->status = *st;
	c->status_sent = true;
	send_status(c);
}

/* The session is over: every client is closed and freed; nobody answers any more. */
static void close_all(struct control *c)
{
	for (size_t i = 0; i < c->nclients; i++) {
		c->clients[i]->attached = false;
		drop(c, c->clients[i]);
	}
	c->attached = 0;
	c->attach_changed = false;
	reap(c);
}

void control_end(struct control *c, int status, int timeout_ms)
{
	char line[64];
	int n = snprintf(line, sizeof line, "{\"type\":\"end\",\"status\":%d}\n", status);
	broadcast(c, line, (size_t)n);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool waiting = false;
		for (size_t i = 0; i < c->nclients; i++)
			waiting |= c->clients[i]->out_len > c->clients[i]->out_off;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long spent = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (!waiting || spent >= timeout_ms)
			break;
		struct epoll_event ev;
		if (epoll_wait(c->ep, &ev, 1, (int)(timeout_ms - spent)) > 0)
			control_dispatch(c);
	}
	close_all(c);
}

void control_free(struct control *c)
{
	if (!c)
		return;
	close_all(c);
	if (c->wake >= 0)
		close(c->wake);
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	if (c->path)
		unlink(c->path);
	if (c->ep >= 0)
		close(c->ep);
	for (size_t i = 0; i < CONTROL_BACKLOG; i++)
		free(c->backlog[i]);
	for (size_t i = 0; i < c->nasks; i++)
		free(c->asks[i].line);
	free(c->asks);
	free(c->hello);
	free(c->path);
	free(c);
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	mode_t old = umask(0177); /* the socket is born 0600 */
	int r = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (r != 0 || listen(fd, 16) != 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

struct control *control_new(const char *path, const struct control_info *info,
			    const struct control_ops *ops, void *ctx, char *err, size_t errlen)
{
	struct control *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->listen_fd = c->ep = c->wake = -1;
	if (ops)
		c->ops = *ops;
	c->ctx = ctx;
	if (!(c->hello = control_line_hello(info, &c->hello_len))) {
		snprintf(err, errlen, "out of memory");
		control_free(c);
		return NULL;
	}
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	c->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->ep < 0 || c->wake < 0 || watch(c, c->wake, EPOLLIN, &c->wake) != 0) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		control_free(c);
		return NULL;
	}
	if (path) {
		int fd = listen_on(path);
		if (fd < 0) {
			snprintf(err, errlen, "cannot listen on the control socket %s: %s", path,
				 strerror(-fd));
			control_free(c);
			return NULL;
		}
		c->listen_fd = fd;
		(void)accept_reserve();
		c->path = strdup(path);
		if (!c->path || watch(c, fd, EPOLLIN, NULL) != 0) {
			snprintf(err, errlen, "cannot watch the control socket: %s", strerror(errno));
			control_free(c);
			return NULL;
		}
	}
	return c;
}
