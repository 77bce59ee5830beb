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
	int err;            /* an error read behind data still in the pipe: reported next */
	bool dry;           /* the last fill found the source empty (or at its end) */
	uint64_t bytes;     /* delivered to the destination */
};

/*
 * Empty pipes kept for the next relay: making one costs pipe2(2), growing it
 * fcntl(2) and dropping it two close(2)s — per direction, per connection.  A
 * pipe goes back only when the relay knows it empty (every byte spliced in
 * was spliced out), so no connection ever sees another's bytes.  Used by one
 * thread, like the relays that share it.
 */
#define RELAY_POOL_MAX 64
struct relay_pool {
	int pipes[RELAY_POOL_MAX][2];
	size_t n;
};

struct relay {
	struct relay_pool *pool; /* borrowed; NULL: pipes are made and closed each time */
	int client;   /* borrowed */
	int upstream; /* borrowed */
	struct relay_side side[2];
	uint64_t *budget; /* borrowed: bytes still allowed up, shared by a session; NULL: none */
	bool over_budget;
	int error;    /* first errno that ended the relay, 0 when none */
	bool again;   /* relay_pump() stopped with bytes still moving: pump again without waiting for an event */
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
 * closed by the relay).  budget may be NULL; pool may be NULL.  Returns 0
 * or -errno (pipe2).
 */
int relay_init(struct relay *r, int client, int upstream, uint64_t *budget,
	       struct relay_pool *pool);

/*
 * Moves what can move now without blocking, in both directions: each source
 * is read until it has nothing more (or the pipe is full), so an owner may
 * wait for edge-triggered events — except when r->again says the pump
 * stopped for fairness with bytes still moving: then call it again soon.
 */
enum relay_state relay_pump(struct relay *r);

/*
 * What to wait for on fd (the client or the upstream socket) where the
 * event loop is level-triggered (proxy/loop.h): LOOP_READ when the
 * direction it feeds has room, LOOP_WRITE when data or an end-of-file
 * waits for it; 0 when neither.
 */
unsigned relay_want(const struct relay *r, int fd);

/* Gives the pipes back to the pool when empty, else closes them.  The sockets stay the owner's. */
void relay_free(struct relay *r);

/* Closes every pipe the pool keeps.  Accepts NULL. */
void relay_pool_clear(struct relay_pool *pool);

#endif
