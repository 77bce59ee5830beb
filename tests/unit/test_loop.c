/* test_loop.c — the proxy's event loop (proxy/loop.h): the same scenarios against each backend, built once per backend. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/loop.h"

/* A loop and socket pairs: the loop watches a[i], the test acts on b[i]. */
#define PAIRS 200
struct rig {
	struct loop *l;
	int a[PAIRS], b[PAIRS];
	int tag[PAIRS]; /* &tag[i] is a[i]'s ptr */
};

static int setup(void **state)
{
	struct rig *g = calloc(1, sizeof *g);
	g->l = loop_new();
	assert_non_null(g->l);
	for (int i = 0; i < PAIRS; i++) {
		int sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
		g->a[i] = sv[0];
		g->b[i] = sv[1];
		g->tag[i] = i;
	}
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct rig *g = *state;
	loop_free(g->l);
	for (int i = 0; i < PAIRS; i++) {
		close(g->a[i]);
		if (g->b[i] >= 0)
			close(g->b[i]);
	}
	free(g);
	return 0;
}

/* loop_wait() with no wait: exactly n events, the first of them (i >= 0) for pair i with these bits. */
static void expect(struct rig *g, int n, int i, unsigned bits)
{
	struct loop_event ev[8];
	int got = loop_wait(g->l, ev, 8, 0);
	assert_int_equal(got, n);
	if (n && i >= 0) {
		assert_ptr_equal(ev[0].ptr, &g->tag[i]);
		assert_int_equal(ev[0].events & bits, bits);
	}
}

static void test_idle_then_readable(void **state)
{
	struct rig *g = *state;
	assert_int_equal(loop_add(g->l, g->a[0], LOOP_READ, &g->tag[0]), 0);
	expect(g, 0, 0, 0);
	assert_int_equal(write(g->b[0], "x", 1), 1);
	expect(g, 1, 0, LOOP_READ);
}

static void test_writable(void **state)
{
	struct rig *g = *state;
	assert_int_equal(loop_add(g->l, g->a[0], LOOP_WRITE, &g->tag[0]), 0);
	expect(g, 1, 0, LOOP_WRITE);
}

/* Unread bytes: a level-triggered loop says so every time; an edge-triggered one once. */
static void test_level_or_edge(void **state)
{
	struct rig *g = *state;
	assert_int_equal(loop_add(g->l, g->a[0], LOOP_READ, &g->tag[0]), 0);
	assert_int_equal(loop_add(g->l, g->a[1], LOOP_READ | LOOP_EDGE, &g->tag[1]), 0);
	assert_int_equal(write(g->b[1], "x", 1), 1);
	expect(g, 1, 1, LOOP_READ);
	expect(g, loop_has_edge(g->l) ? 0 : 1, 1, LOOP_READ);
	/* a new byte is a new edge */
	assert_int_equal(write(g->b[1], "y", 1), 1);
	expect(g, 1, 1, LOOP_READ);
	assert_int_equal(write(g->b[0], "x", 1), 1);
	expect(g, loop_has_edge(g->l) ? 1 : 2, -1, 0);
}

/* Interest 0 silences even a hang-up; an interest again reports it. */
static void test_no_interest_no_events(void **state)
{
	struct rig *g = *state;
	assert_int_equal(loop_add(g->l, g->a[0], 0, &g->tag[0]), 0);
	close(g->b[0]);
	g->b[0] = -1;
	expect(g, 0, 0, 0);
	assert_int_equal(loop_add(g->l, g->a[1], LOOP_READ, &g->tag[1]), 0);
	assert_int_equal(loop_mod(g->l, g->a[1], 0, &g->tag[1]), 0);
	assert_int_equal(write(g->b[1], "x", 1), 1);
	expect(g, 0, 0, 0);
	assert_int_equal(loop_mod(g->l, g->a[0], LOOP_READ, &g->tag[0]), 0);
	expect(g, 1, 0, LOOP_READ | LOOP_ERROR); /* end of file, and nobody left to write to */
}

/* loop_mod() changes the interest and the pointer. */
static void test_mod_moves_interest_and_ptr(void **state)
{
	struct rig *g = *state;
	assert_int_equal(loop_add(g->l, g->a[0], LOOP_READ, &g->tag[0]), 0);
	expect(g, 0, 0, 0);
	assert_int_equal(loop_mod(g->l, g->a[0], LOOP_WRITE, &g->tag[5]), 0);
	expect(g, 1, 5, LOOP_WRITE);
}

/* A deleted fd says nothing more; the others keep their places. */
static void test_del(void **state)
{
	struct rig *g = *state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(loop_add(g->l, g->a[i], LOOP_READ, &g->tag[i]), 0);
	assert_int_equal(loop_del(g->l, g->a[0]), 0);
	assert_int_equal(write(g->b[0], "x", 1), 1);
	expect(g, 0, 0, 0);
	assert_int_equal(write(g->b[2], "x", 1), 1);
	expect(g, 1, 2, LOOP_READ);
	assert_int_equal(loop_del(g->l, g->a[2]), 0);
	assert_int_equal(write(g->b[1], "x", 1), 1);
	expect(g, 1, 1, LOOP_READ);
	/* added again after a delete: watched again */
	assert_int_equal(loop_add(g->l, g->a[0], LOOP_READ, &g->tag[0]), 0);
	struct loop_event ev[4];
	assert_int_equal(loop_wait(g->l, ev, 4, 0), 2);
}

/* More ready fds than room: every one is reported within a few calls, none starved. */
static void test_batches_cover_everyone(void **state)
{
	struct rig *g = *state;
	bool seen[PAIRS] = { false };
	int distinct = 0;
	for (int i = 0; i < PAIRS; i++) {
		assert_int_equal(loop_add(g->l, g->a[i], LOOP_READ, &g->tag[i]), 0);
		assert_int_equal(write(g->b[i], "x", 1), 1);
	}
	for (int round = 0; round < (PAIRS + 63) / 64; round++) {
		struct loop_event ev[64];
		int n = loop_wait(g->l, ev, 64, 0);
		assert_int_equal(n, 64);
		for (int k = 0; k < n; k++) {
			int i = *(int *)ev[k].ptr;
			distinct += !seen[i];
			seen[i] = true;
		}
	}
	assert_int_equal(distinct, PAIRS);
}

/* A timeout waits; an fd made ready by another party ends the wait. */
static void test_timeout(void **state)
{
	struct rig *g = *state;
	struct loop_event ev[2];
	assert_int_equal(loop_add(g->l, g->a[0], LOOP_READ, &g->tag[0]), 0);
	assert_int_equal(loop_wait(g->l, ev, 2, 30), 0);
	assert_int_equal(write(g->b[0], "x", 1), 1);
	assert_int_equal(loop_wait(g->l, ev, 2, 5000), 1);
}

static bool fd_readable(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* loop_fd() in an owner's poll(2): readable when there is work, quiet once it is handled. */
static void test_loop_fd_wakes_the_owner(void **state)
{
	struct rig *g = *state;
	struct loop_event ev[4];
	int fd = loop_fd(g->l);
	assert_true(fd >= 0);
	assert_int_equal(loop_add(g->l, g->a[0], LOOP_READ, &g->tag[0]), 0);
	assert_false(fd_readable(fd, 50));
	assert_int_equal(write(g->b[0], "x", 1), 1);
	assert_true(fd_readable(fd, 5000));
	assert_int_equal(loop_wait(g->l, ev, 4, 0), 1);
	char c;
	assert_int_equal(read(g->a[0], &c, 1), 1);
	loop_idle(g->l);
	assert_false(fd_readable(fd, 50));
	/* a change while the owner sleeps: an fd added already readable wakes it */
	assert_int_equal(write(g->b[1], "x", 1), 1);
	assert_int_equal(loop_add(g->l, g->a[1], LOOP_READ, &g->tag[1]), 0);
	assert_true(fd_readable(fd, 5000));
	assert_int_equal(loop_wait(g->l, ev, 4, 0), 1);
	assert_ptr_equal(ev[0].ptr, &g->tag[1]);
	/* and an interest turned on for unread bytes */
	assert_int_equal(loop_mod(g->l, g->a[1], 0, &g->tag[1]), 0);
	loop_idle(g->l);
	assert_false(fd_readable(fd, 50));
	assert_int_equal(loop_mod(g->l, g->a[1], LOOP_READ, &g->tag[1]), 0);
	assert_true(fd_readable(fd, 5000));
}

/* A bound, not listening, TCP socket on 127.0.0.1: its port refuses connections.  Address into *sa. */
static int port_on(struct sockaddr_in *sa, bool listening)
{
	socklen_t len = sizeof *sa;
	*sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)sa, sizeof *sa), 0);
	if (listening)
		assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)sa, &len), 0);
	return fd;
}

static int dial(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int r = connect(fd, (const struct sockaddr *)sa, sizeof *sa);
	assert_true(r == 0 || errno == EINPROGRESS || errno == ECONNREFUSED);
	return fd;
}

/* A non-blocking connect(2): LOOP_WRITE when it is made, LOOP_ERROR when it is refused. */
static void test_connect_outcomes(void **state)
{
	struct rig *g = *state;
	struct sockaddr_in open_sa, shut_sa;
	int lfd = port_on(&open_sa, true), cfd = port_on(&shut_sa, false);
	int fds[2] = { dial(&open_sa), dial(&shut_sa) };
	unsigned got[2] = { 0, 0 };
	for (int i = 0; i < 2; i++)
		assert_int_equal(loop_add(g->l, fds[i], LOOP_WRITE | LOOP_EDGE, &g->tag[i]), 0);
	for (int i = 0; i < 100 && (!got[0] || !got[1]); i++) {
		struct loop_event ev[4];
		int n = loop_wait(g->l, ev, 4, 50);
		for (int k = 0; k < n; k++)
			got[*(int *)ev[k].ptr] |= ev[k].events;
	}
	assert_true(got[0] & LOOP_WRITE);
	assert_false(got[0] & LOOP_ERROR);
	assert_true(got[1] & LOOP_ERROR);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(loop_del(g->l, fds[i]), 0);
		close(fds[i]);
	}
	close(lfd);
	close(cfd);
}

int main(void)
{
	char name[64];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_idle_then_readable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_or_edge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_interest_no_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mod_moves_interest_and_ptr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_del, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batches_cover_everyone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_fd_wakes_the_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_outcomes, setup, teardown),
	};
	snprintf(name, sizeof name, "loop_%s", loop_backend());
	return cmocka_run_group_tests_name(name, tests, NULL, NULL);
}
