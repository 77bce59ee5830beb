/* test_relay.c — the proxy's relay over real TCP connections on 127.0.0.1: data, end-of-file, budget, errors. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/loop.h"
#include "proxy/relay.h"

/* Two connected TCP pairs on 127.0.0.1: the "sandbox" client pair and the "upstream" pair. */
struct rig {
	int agent;    /* what the sandboxed program holds */
	int client;   /* the proxy's end of it */
	int upstream; /* the proxy's connection to the server */
	int server;   /* the server's end */
};

static void tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof sa;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
	*a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(*a, (struct sockaddr *)&sa, sizeof sa), 0);
	*b = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	assert_true(*b >= 0);
	close(l);
}

static void rig_up(struct rig *g)
{
	tcp_pair(&g->agent, &g->client);
	tcp_pair(&g->upstream, &g->server);
	fcntl(g->client, F_SETFL, O_NONBLOCK);
	fcntl(g->upstream, F_SETFL, O_NONBLOCK);
	fcntl(g->agent, F_SETFL, O_NONBLOCK);
	fcntl(g->server, F_SETFL, O_NONBLOCK);
}

static void rig_down(struct rig *g)
{
	int fds[] = { g->agent, g->client, g->upstream, g->server };
	for (size_t i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* The endpoints: each sends its pattern (total bytes) and reads what the other sent. */
struct end {
	int fd;
	size_t to_send, sent, got;
	unsigned char seed_out, seed_in;
	bool bad, eof, shut;
};

static void end_io(struct end *e)
{
	unsigned char buf[8192];
	while (e->sent < e->to_send) {
		size_t n = e->to_send - e->sent < sizeof buf ? e->to_send - e->sent : sizeof buf;
		for (size_t i = 0; i < n; i++)
			buf[i] = (unsigned char)(e->seed_out + e->sent + i);
		ssize_t w = write(e->fd, buf, n);
		if (w <= 0)
			break;
		e->sent += (size_t)w;
	}
	if (e->sent == e->to_send && !e->shut) {
		shutdown(e->fd, SHUT_WR);
		e->shut = true;
	}
	for (;;) {
		ssize_t r = read(e->fd, buf, sizeof buf);
		if (r == 0)
			e->eof = true;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != (unsigned char)(e->seed_in + e->got + (size_t)i))
				e->bad = true;
		e->got += (size_t)r;
	}
}

/* relay_want() as poll(2) events. */
static short want(const struct relay *r, int fd)
{
	unsigned w = relay_want(r, fd);
	return (short)(((w & LOOP_READ) ? POLLIN : 0) | ((w & LOOP_WRITE) ? POLLOUT : 0));
}

/* Runs the relay and both ends until the relay stops or 10 s pass. */
static enum relay_state run(struct relay *r, struct end *a, struct end *s, struct rig *g)
{
	enum relay_state st = RELAY_RUNNING;
	for (int i = 0; i < 100000 && st == RELAY_RUNNING; i++) {
		struct pollfd p[4] = { { g->client, want(r, g->client), 0 },
				       { g->upstream, want(r, g->upstream), 0 },
				       { g->agent, POLLIN | POLLOUT, 0 },
				       { g->server, POLLIN | POLLOUT, 0 } };
		poll(p, 4, 100);
		end_io(a);
		end_io(s);
		st = relay_pump(r);
	}
	end_io(a);
	end_io(s);
	return st;
}

/*
 * As the proxy drives it, through the event loop it links (proxy/loop.h):
 * with edges, both relay sockets registered once for everything; without,
 * told relay_want() after every pump.  A pump only on an event or when the
 * relay says "again": a lost edge or a wrong interest stalls the transfer
 * and fails the test.
 */
static enum relay_state run_loop(struct relay *r, struct end *a, struct end *s, struct rig *g)
{
	enum relay_state st = RELAY_RUNNING;
	struct loop *l = loop_new();
	assert_non_null(l);
	bool edge = loop_has_edge(l);
	int fds[2] = { g->client, g->upstream };
	for (int i = 0; i < 2; i++) {
		unsigned in = edge ? LOOP_READ | LOOP_WRITE | LOOP_EDGE : relay_want(r, fds[i]);
		assert_int_equal(loop_add(l, fds[i], in, NULL), 0);
	}
	for (int i = 0; i < 100000 && st == RELAY_RUNNING; i++) {
		struct loop_event evs[2];
		int n = loop_wait(l, evs, 2, r->again ? 0 : 1);
		end_io(a);
		end_io(s);
		if (n > 0 || r->again)
			st = relay_pump(r);
		for (int k = 0; k < 2 && !edge && st == RELAY_RUNNING; k++)
			assert_int_equal(loop_mod(l, fds[k], relay_want(r, fds[k]), NULL), 0);
	}
	end_io(a);
	end_io(s);
	loop_free(l);
	return st;
}

/* up bytes from the agent, down bytes from the server, both ends closing: all of it arrives, then the end. */
static void both_ways(bool looped, size_t up, size_t down)
{
	struct rig g;
	struct relay r;
	rig_up(&g);
	assert_int_equal(relay_init(&r, g.client, g.upstream, NULL, NULL), 0);
	struct end a = { .fd = g.agent, .to_send = up, .seed_out = 1, .seed_in = 7 };
	struct end s = { .fd = g.server, .to_send = down, .seed_out = 7, .seed_in = 1 };
	assert_int_equal(looped ? run_loop(&r, &a, &s, &g) : run(&r, &a, &s, &g), RELAY_DONE);
	assert_false(a.bad);
	assert_false(s.bad);
	assert_int_equal(s.got, up);
	assert_int_equal(a.got, down);
	assert_true(a.eof && s.eof);
	assert_int_equal(r.side[RELAY_UP].bytes, up);
	assert_int_equal(r.side[RELAY_DOWN].bytes, down);
	relay_free(&r);
	rig_down(&g);
}

static void test_both_ways_with_eof(void **state)
{
	(void)state;
	both_ways(false, 3u << 20, 5u << 20);
}

/* Through the linked event loop: edge-triggered (epoll) or told relay_want() (poll). */
static void test_event_loop_both_ways(void **state)
{
	(void)state;
	both_ways(true, 9u << 20, 6u << 20);
}

static void test_half_close_keeps_the_other_way(void **state)
{
	(void)state;
	struct rig g;
	struct relay r;
	rig_up(&g);
	assert_int_equal(relay_init(&r, g.client, g.upstream, NULL, NULL), 0);
	/* the agent sends nothing and closes its side first; the server still answers */
	struct end a = { .fd = g.agent, .to_send = 0, .seed_in = 3 };
	struct end s = { .fd = g.server, .to_send = 100000, .seed_out = 3 };
	assert_int_equal(run(&r, &a, &s, &g), RELAY_DONE);
	assert_int_equal(a.got, 100000);
	assert_false(a.bad);
	relay_free(&r);
	rig_down(&g);
}

static void test_budget_stops_egress(void **state)
{
	(void)state;
	struct rig g;
	struct relay r;
	uint64_t budget = 10000;
	rig_up(&g);
	assert_int_equal(relay_init(&r, g.client, g.upstream, &budget, NULL), 0);
	struct end a = { .fd = g.agent, .to_send = 1u << 20, .seed_out = 9 };
	struct end s = { .fd = g.server, .to_send = 0, .seed_in = 9 };
	assert_int_equal(run(&r, &a, &s, &g), RELAY_OVER_BUDGET);
	assert_int_equal(budget, 0);
	assert_true(s.got <= 10000);
	assert_int_equal(r.side[RELAY_UP].bytes + r.side[RELAY_UP].in_pipe, 10000);
	assert_false(s.bad);
	relay_free(&r);
	rig_down(&g);
}

static void test_reset_is_an_error_or_end(void **state)
{
	(void)state;
	struct rig g;
	struct relay r;
	rig_up(&g);
	assert_int_equal(relay_init(&r, g.client, g.upstream, NULL, NULL), 0);
	struct linger lg = { 1, 0 };
	setsockopt(g.server, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	close(g.server); /* RST */
	g.server = -1;
	unsigned char x[4096] = { 0 };
	for (int i = 0; i < 64; i++)
		(void)write(g.agent, x, sizeof x);
	enum relay_state st = RELAY_RUNNING;
	for (int i = 0; i < 1000 && st == RELAY_RUNNING; i++) {
		struct pollfd p[2] = { { g.client, want(&r, g.client), 0 },
				       { g.upstream, want(&r, g.upstream), 0 } };
		poll(p, 2, 10);
		st = relay_pump(&r);
	}
	assert_true(st == RELAY_FAILED || st == RELAY_DONE);
	if (st == RELAY_FAILED)
		assert_true(r.error == ECONNRESET || r.error == EPIPE);
	relay_free(&r);
	rig_down(&g);
}

/* Empty pipes go back to the pool and serve the next relay; the bytes of one never reach another. */
static void test_pool_reuses_only_empty_pipes(void **state)
{
	(void)state;
	struct relay_pool pool = { .n = 0 };
	for (int round = 0; round < 3; round++) {
		struct rig g;
		struct relay r;
		rig_up(&g);
		assert_int_equal(relay_init(&r, g.client, g.upstream, NULL, &pool), 0);
		assert_int_equal(pool.n, 0); /* from the second round on, both came from the pool */
		struct end a = { .fd = g.agent, .to_send = 200000u + (size_t)round, .seed_out = 5,
				 .seed_in = 11 };
		struct end s = { .fd = g.server, .to_send = 300000u + (size_t)round, .seed_out = 11,
				 .seed_in = 5 };
		assert_int_equal(run(&r, &a, &s, &g), RELAY_DONE);
		assert_false(a.bad);
		assert_false(s.bad);
		assert_int_equal(s.got, 200000u + (size_t)round);
		assert_int_equal(a.got, 300000u + (size_t)round);
		relay_free(&r);
		assert_int_equal(pool.n, 2);
		rig_down(&g);
	}
	/* a pipe still holding bytes is closed, never pooled */
	struct rig g;
	struct relay r;
	rig_up(&g);
	assert_int_equal(relay_init(&r, g.client, g.upstream, NULL, &pool), 0);
	assert_int_equal(write(r.side[RELAY_UP].pipe[1], "left", 4), 4);
	r.side[RELAY_UP].in_pipe = 4;
	relay_free(&r);
	assert_int_equal(pool.n, 1);
	int kept = pool.pipes[0][0];
	relay_pool_clear(&pool);
	assert_int_equal(pool.n, 0);
	assert_int_equal(fcntl(kept, F_GETFD), -1); /* closed */
	rig_down(&g);
}

/* Data and the end-of-file behind it arrive together: the reader sees both. */
static void test_eof_follows_data(void **state)
{
	(void)state;
	struct rig g;
	struct relay r;
	rig_up(&g);
	assert_int_equal(relay_init(&r, g.client, g.upstream, NULL, NULL), 0);
	assert_int_equal(write(g.server, "x", 1), 1);
	shutdown(g.server, SHUT_WR);
	struct pollfd p = { g.upstream, POLLIN | POLLRDHUP, 0 };
	for (int i = 0; i < 100; i++) { /* both the byte and the FIN have reached the proxy's socket */
		poll(&p, 1, 100);
		if (p.revents & POLLRDHUP)
			break;
	}
	enum relay_state st = relay_pump(&r);
	assert_int_equal(st, RELAY_RUNNING); /* the agent has not closed its side */
	assert_true(r.side[RELAY_DOWN].eof && r.side[RELAY_DOWN].shut);
	assert_false(r.again);
	char buf[4];
	struct pollfd q = { g.agent, POLLIN, 0 };
	poll(&q, 1, 1000);
	assert_int_equal(read(g.agent, buf, sizeof buf), 1);
	assert_int_equal(read(g.agent, buf, sizeof buf), 0);
	relay_free(&r);
	rig_down(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_ways_with_eof),
		cmocka_unit_test(test_event_loop_both_ways),
		cmocka_unit_test(test_half_close_keeps_the_other_way),
		cmocka_unit_test(test_budget_stops_egress),
		cmocka_unit_test(test_reset_is_an_error_or_end),
		cmocka_unit_test(test_pool_reuses_only_empty_pipes),
		cmocka_unit_test(test_eof_follows_data),
	};
	return cmocka_run_group_tests_name("proxy relay", tests, NULL, NULL);
}
