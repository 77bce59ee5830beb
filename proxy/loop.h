/* loop.h — the egress proxy's event loop: which of its sockets are ready, one interface, a backend per platform. */
#ifndef AIRLOCK_PROXY_LOOP_H
#define AIRLOCK_PROXY_LOOP_H

#include <stdbool.h>

/*
 * One interface, one backend linked in, picked by the Makefile the way
 * redis's ae.c picks ae_epoll.c or ae_kqueue.c:
 *
 *   loop_epoll.c  epoll(7), Linux: the default there.  Edge-triggered on
 *                 request (LOOP_EDGE); loop_fd() is the epoll fd itself.
 *   loop_poll.c   poll(2), any POSIX system (`make PROXY_LOOP=poll`; tested
 *                 on Linux too).  Level-triggered only: LOOP_EDGE is
 *                 ignored and loop_has_edge() says so.  loop_fd() is a pipe
 *                 that a helper thread makes readable (see loop_poll.c).
 *
 * A caller that asks for LOOP_EDGE must still be correct where
 * loop_has_edge() is false: it then states, after handling each event,
 * exactly what it waits for next (the proxy's relay does it with
 * relay_want()), or a level-triggered backend reports the same readiness
 * over and over.
 *
 * Used by one thread; an fd is watched by at most one loop.
 */

/* Interest (what to watch an fd for) and events (what happened), as bits. */
enum {
	LOOP_READ = 1u << 0,  /* readable, or at end of file (a peer's FIN) */
	LOOP_WRITE = 1u << 1, /* writable; for a non-blocking connect(2): it ended */
	LOOP_ERROR = 1u << 2, /* events only: an error or hang-up (EPOLLERR / EPOLLHUP, POLLERR /
				 POLLHUP / POLLNVAL), reported whatever the interest but 0 */
	LOOP_EDGE = 1u << 3,  /* interest only: report changes, not states, where loop_has_edge() */
};

/* One ready fd: what it was watched with (ptr) and its LOOP_READ / LOOP_WRITE / LOOP_ERROR bits. */
struct loop_event {
	void *ptr;
	unsigned events;
};

struct loop;

/* A new loop watching nothing.  NULL with errno set (ENOMEM, EMFILE) on failure. */
struct loop *loop_new(void);

/*
 * Starts watching fd for interest (LOOP_READ | LOOP_WRITE | LOOP_EDGE, or
 * 0: registered but watched for nothing, not even errors) and tags its
 * events with ptr (borrowed).  fd must not be watched by l yet.  Returns 0
 * or -errno (ENOMEM, EBADF, EPERM for a file epoll cannot watch).
 */
int loop_add(struct loop *l, int fd, unsigned interest, void *ptr);

/*
 * Changes what fd (added before) is watched for, and its ptr.  Interest 0
 * stops every event for fd until a later loop_mod().  Returns 0 or -errno
 * (ENOENT: not added, where the backend can tell).
 */
int loop_mod(struct loop *l, int fd, unsigned interest, void *ptr);

/*
 * Stops watching fd.  Call it before closing fd: a backend that keeps a
 * list of fds (poll) would otherwise watch whatever reuses the number.
 * Events for fd already returned by loop_wait() stay valid to read, but
 * their ptr may point to something freed: the caller checks.  Returns 0 or
 * -errno (ENOENT: not added, where the backend can tell).
 */
int loop_del(struct loop *l, int fd);

/*
 * Waits up to timeout_ms (0: not at all; -1: forever) until a watched fd
 * is ready, and writes up to max ready fds into ev.  Returns how many (0
 * on timeout), or -errno (EINTR when a signal came).  Fds left out by max
 * are reported by the next call.
 */
int loop_wait(struct loop *l, struct loop_event *ev, int max, int timeout_ms);

/*
 * An fd that poll(2) sees readable (POLLIN) when loop_wait() has events,
 * for an owner that waits in its own poll(2) (the launcher), or -errno.
 * After handling what loop_wait() returned, the owner calls loop_idle()
 * before waiting on it again.  Owned by l.
 */
int loop_fd(struct loop *l);

/*
 * The owner has handled loop_wait()'s events and waits on loop_fd(): watch
 * again.  A no-op for backends whose loop_fd() is the kernel's own (epoll).
 */
void loop_idle(struct loop *l);

/* True when LOOP_EDGE is honoured; false when every interest is level-triggered. */
bool loop_has_edge(const struct loop *l);

/* "epoll", "poll": the backend linked in. */
const char *loop_backend(void);

/* Stops watching everything and frees l (the fds stay the caller's).  Accepts NULL. */
void loop_free(struct loop *l);

#endif
