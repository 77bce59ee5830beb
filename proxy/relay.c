/* relay.c — the proxy's byte mover: splice(2) through a pipe per direction, end-of-file passed on, bytes counted. */
#include "proxy/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

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

int relay_init(struct relay *r, int client, int upstream, uint64_t *budget)
{
	*r = (struct relay){ .client = client, .upstream = upstream, .budget = budget };
	for (int d = 0; d < 2; d++) {
		r->side[d].pipe[0] = r->side[d].pipe[1] = -1;
		if (pipe2(r->side[d].pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
			int e = -errno;
			relay_free(r);
			return e;
		}
		/* a bigger pipe moves more per splice: fewer wake-ups on bulk transfers */
		(void)fcntl(r->side[d].pipe[1], F_SETPIPE_SZ, (int)PIPE_ROOM);
	}
	return 0;
}

/* Pipe -> destination.  0 when drained or the destination is full, -errno on error. */
static int drain(struct relay *r, enum relay_dir d)
{
	struct relay_side *s = &r->side[d];
	while (s->in_pipe) {
		ssize_t n = splice(s->pipe[0], NULL, dst_of(r, d), NULL, s->in_pipe,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
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
	ssize_t n;
	do
		n = splice(src_of(r, d), NULL, s->pipe[1], NULL, room, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n == 0) {
		s->eof = true;
		return 0;
	}
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	s->in_pipe += (size_t)n;
	if (d == RELAY_UP && r->budget)
		*r->budget -= (uint64_t)n;
	return n;
}

static bool finished(const struct relay *r)
{
	return r->side[0].shut && r->side[1].shut && !r->side[0].in_pipe && !r->side[1].in_pipe;
}

enum relay_state relay_pump(struct relay *r)
{
	for (int round = 0; round < ROUNDS; round++) {
		bool moved = false;
		for (int d = 0; d < 2; d++) {
			size_t before = r->side[d].in_pipe;
			int e = drain(r, (enum relay_dir)d);
			ssize_t n = e < 0 ? e : fill(r, (enum relay_dir)d);
			if (n < 0) {
				r->error = (int)-n;
				return RELAY_FAILED;
			}
			moved |= n > 0 || r->side[d].in_pipe != before;
			if (n > 0 && drain(r, (enum relay_dir)d) < 0) {
				r->error = errno;
				return RELAY_FAILED;
			}
		}
		if (r->over_budget)
			return RELAY_OVER_BUDGET;
		if (finished(r))
			return RELAY_DONE;
		if (!moved)
			break;
	}
	return RELAY_RUNNING;
}

short relay_want(const struct relay *r, int fd)
{
	short ev = 0;
	for (int d = 0; d < 2; d++) {
		const struct relay_side *s = &r->side[d];
		if (fd == src_of(r, (enum relay_dir)d) && !s->eof && s->in_pipe < PIPE_ROOM &&
		    !(d == RELAY_UP && r->over_budget))
			ev |= POLLIN;
		if (fd == dst_of(r, (enum relay_dir)d) && (s->in_pipe || (s->eof && !s->shut)))
			ev |= POLLOUT;
	}
	return ev;
}

void relay_free(struct relay *r)
{
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < 2; k++)
			if (r->side[d].pipe[k] >= 0) {
				close(r->side[d].pipe[k]);
				r->side[d].pipe[k] = -1;
			}
}
