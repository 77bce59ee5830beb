/* relay.c — the proxy's byte mover: splice(2) through a pipe per direction, end-of-file passed on, bytes counted. */
#include "proxy/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/loop.h"

/*
 * What a direction reads ahead: the pipe is grown to this (F_SETPIPE_SZ,
 * pipe(7); 1 MiB is the default /proc/sys/fs/pipe-max-size).  Where growing
 * fails the pipe keeps 64 KiB and a splice into it just moves less.
 */
#define PIPE_ROOM (1u << 20)
/* Rounds of pumping per call: a fast pair must not starve the event loop's other work. */
#define ROUNDS 8

static int src_of(const struct relay *r, enum relay_dir d)
{
	return d == RELAY_UP ? r->client : r->upstream;
}

static int dst_of(const struct relay *r, enum relay_dir d)
{
	return d == RELAY_UP ? r->upstream : r->client;
}

/* A pipe from the pool, or a new one grown to PIPE_ROOM.  0 or -errno. */
static int pipe_get(struct relay_pool *pool, int fds[2])
{
	if (pool && pool->n) {
		pool->n--;
		fds[0] = pool->pipes[pool->n][0];
		fds[1] = pool->pipes[pool->n][1];
		return 0;
	}
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0)
		return -errno;
	/* a bigger pipe moves more per splice: fewer wake-ups on bulk transfers */
	(void)fcntl(fds[1], F_SETPIPE_SZ, (int)PIPE_ROOM);
	return 0;
}

int relay_init(struct relay *r, int client, int upstream, uint64_t *budget,
	       struct relay_pool *pool)
{
	*r = (struct relay){ .pool = pool, .client = client, .upstream = upstream, .budget = budget };
	for (int d = 0; d < 2; d++) {
		r->side[d].pipe[0] = r->side[d].pipe[1] = -1;
		int e = pipe_get(pool, r->side[d].pipe);
		if (e < 0) {
			relay_free(r);
			return e;
		}
	}
	return 0;
}

/* Pipe -> destination.  0 when drained or the destination is full, -errno on error. */
static int drain(struct relay *r, enum relay_dir d)
{
	struct relay_side *s = &r->side[d];
	/*
	 * With the end-of-file already read, the FIN follows these bytes: "more
	 * to come" holds the last partial segment back until shutdown(2) below
	 * sends it with the FIN — one segment, and the peer sees the data and
	 * the end together.
	 */
	unsigned more = s->eof ? SPLICE_F_MORE : 0;
	while (s->in_pipe) {
		ssize_t n = splice(s->pipe[0], NULL, dst_of(r, d), NULL, s->in_pipe,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK | more);
		if (n > 0) {
			s->in_pipe -= (size_t)n;
			s->bytes += (uint64_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else {
			return n < 0 && errno == EAGAIN ? 0 : -(n < 0 ? errno : EPIPE);
		}
	}
	if (s->eof && !s->shut) {
		shutdown(dst_of(r, d), SHUT_WR); /* the end-of-file, passed on */
		s->shut = true;
	}
	return 0;
}

/* Source -> pipe, within the room and (up) the budget.  >0 bytes, 0 nothing now, -errno. */
static ssize_t fill(struct relay *r, enum relay_dir d)
{
	struct relay_side *s = &r->side[d];
	size_t room = PIPE_ROOM - s->in_pipe;
	s->dry = s->eof;
	if (s->err)
		return -s->err;
	if (s->eof || room == 0)
		return 0;
	if (d == RELAY_UP && r->budget) {
		if (*r->budget == 0) {
			r->over_budget = true;
			return 0;
		}
		if (room > *r->budget)
			room = (size_t)*r->budget;
	}
	ssize_t n, total = 0;
	/*
	 * Until the source is empty, not just once: an end-of-file queued behind
	 * the data is then seen before the data goes out, and the FIN follows it
	 * at once.  Otherwise a peer that reads the data and closes at once
	 * closes first — and its end, the sandbox's, keeps the port in TIME-WAIT.
	 */
	for (;;) {
		n = splice(src_of(r, d), NULL, s->pipe[1], NULL, room,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			s->eof = s->dry = true;
			return total;
		}
		if (n < 0 && errno == EAGAIN) {
			/*
			 * The source is empty — or the pipe is full, its slots taken by
			 * small pieces.  A pipe has two slots at least and a byte takes
			 * one at most: with under two bytes in it, it was the source.
			 */
			s->dry = s->in_pipe < 2;
			return total;
		}
		if (n < 0) {
			if (!total)
				return -errno;
			s->err = errno; /* the bytes before it go out first */
			return total;
		}
		s->in_pipe += (size_t)n;
		total += n;
		room -= (size_t)n;
		if (d == RELAY_UP && r->budget)
			*r->budget -= (uint64_t)n;
		if (room == 0) /* the pipe is full, or (up) the budget spent */
			return total;
	}
}

static bool finished(const struct relay *r)
{
	return r->side[0].shut && r->side[1].shut && !r->side[0].in_pipe && !r->side[1].in_pipe;
}

enum relay_state relay_pump(struct relay *r)
{
	r->again = false;
	for (int round = 0; round < ROUNDS; round++) {
		bool moved = false;
		for (int d = 0; d < 2; d++) {
			struct relay_side *s = &r->side[d];
			size_t before = s->in_pipe;
			bool was_eof = s->eof, was_shut = s->shut;
			int e = drain(r, (enum relay_dir)d);
			ssize_t n = e < 0 ? e : fill(r, (enum relay_dir)d);
			/* new bytes, or an end-of-file just read: out now (no event will come again for them) */
			if (n >= 0 && (n > 0 || s->eof != was_eof))
				n = (e = drain(r, (enum relay_dir)d)) < 0 ? e : n;
			if (n < 0) {
				r->error = (int)-n;
				return RELAY_FAILED;
			}
			moved |= n > 0 || s->in_pipe != before || s->eof != was_eof || s->shut != was_shut;
		}
		if (r->over_budget)
			return RELAY_OVER_BUDGET;
		if (finished(r))
			return RELAY_DONE;
		/* another round only while a source may still hold bytes: edges for them are spent */
		if (!moved || (r->side[0].dry && r->side[1].dry))
			return RELAY_RUNNING;
	}
	r->again = true; /* still moving: the sources may hold more, and no new event will say so */
	return RELAY_RUNNING;
}

unsigned relay_want(const struct relay *r, int fd)
{
	unsigned ev = 0;
	for (int d = 0; d < 2; d++) {
		const struct relay_side *s = &r->side[d];
		if (fd == src_of(r, (enum relay_dir)d) && !s->eof && s->in_pipe < PIPE_ROOM &&
		    !(d == RELAY_UP && r->over_budget))
			ev |= LOOP_READ;
		if (fd == dst_of(r, (enum relay_dir)d) && (s->in_pipe || (s->eof && !s->shut)))
			ev |= LOOP_WRITE;
	}
	return ev;
}

void relay_free(struct relay *r)
{
	for (int d = 0; d < 2; d++) {
		struct relay_side *s = &r->side[d];
		if (s->pipe[0] < 0)
			continue;
		/* empty: every byte spliced in was spliced out (in_pipe counts exactly what splice(2) said) */
		if (r->pool && s->in_pipe == 0 && r->pool->n < RELAY_POOL_MAX) {
			r->pool->pipes[r->pool->n][0] = s->pipe[0];
			r->pool->pipes[r->pool->n][1] = s->pipe[1];
			r->pool->n++;
		} else {
			close(s->pipe[0]);
			close(s->pipe[1]);
		}
		s->pipe[0] = s->pipe[1] = -1;
	}
}

void relay_pool_clear(struct relay_pool *pool)
{
	if (!pool)
		return;
	while (pool->n) {
		pool->n--;
		close(pool->pipes[pool->n][0]);
		close(pool->pipes[pool->n][1]);
	}
}
