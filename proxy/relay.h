/* relay.h — moves bytes both ways between a sandboxed client and its upstream, with splice(2), counting them. */
#ifndef AIRLOCK_PROXY_RELAY_H
#define AIRLOCK_PROXY_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A relay joins two connected, non-blocking stream sockets: what the client
 * (inside the sandbox) sends goes upstream ("up"), what upstream sends comes
 * back ("down").  Bytes move with splice(2) through one pipe per direction,
 * so they are never copied through user space (splice(2), pipe(7)).  The
 * owner's event loop calls relay_pump() whenever either socket
 * is readable or writable; relay_want() says which events to wait for.
 *
 * An end-of-file from one side is passed on as shutdown(SHUT_WR) to the
 * other once its pipe has drained; the relay is done when both directions
 * are, or on any error.  A budget caps the bytes that may go up (the
 * session's egress allowance): past it the relay stops and says so.
 */

enum relay_dir { RELAY_UP = 0, RELAY_DOWN = 1 };

struct relay_side {
	int pipe[2];        /* [0] read end, [1] write end; -1 when not made yet */
	size_t in_pipe;     /* bytes spliced in and not yet out */
	bool eof;           /* the source said end-of-file */
	bool shut;          /* the end-of-file was passed on */
	uint64_t bytes;     /* delivered to the destination */
};

struct relay {
	int client;   /* borrowed */
	int upstream; /* borrowed */
	struct relay_side side[2];
	uint64_t *budget; /* borrowed: bytes still allowed up, shared by a session; NULL: none */
	bool over_budget;
	int error;    /* first errno that ended the relay, 0 when none */
};

/* What relay_pump() reports. */
enum relay_state {
	RELAY_RUNNING = 0,
	RELAY_DONE = 1,        /* both directions ended cleanly */
	RELAY_FAILED = 2,      /* an error: relay.error says which */
	RELAY_OVER_BUDGET = 3, /* the egress budget is spent */
};

/*
 * Sets up r for client and upstream (both non-blocking; borrowed, never
 * closed by the relay).  budget may be NULL.  Returns 0 or -errno (pipe2).
 */
int relay_init(struct relay *r, int client, int upstream, uint64_t *budget);

/* Moves what can move now without blocking, in both directions. */
enum relay_state relay_pump(struct relay *r);

/*
 * The poll(2) events to wait for on fd (the client or the upstream socket):
 * POLLIN when its source direction has room, POLLOUT when data waits for it.
 */
short relay_want(const struct relay *r, int fd);

/* Closes the pipes.  The sockets stay the owner's. */
void relay_free(struct relay *r);

#endif
