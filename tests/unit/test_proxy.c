/* test_proxy.c — the egress proxy in-process on 127.0.0.1: HTTP CONNECT, absolute URIs, SOCKS5, refusals, asks, events. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/proxy.h"

/* An upstream server on 127.0.0.1: answers each connection with "HELLO\n" then echoes what it reads. */
struct upstream {
	int lfd;
	unsigned port;
	pthread_t thread;
};

static void *upstream_main(void *arg)
{
	struct upstream *u = arg;
	for (;;) {
		int fd = accept(u->lfd, NULL, NULL);
		if (fd < 0)
			return NULL;
		char buf[4096];
		(void)!write(fd, "HELLO\n", 6);
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0)
			(void)!write(fd, buf, (size_t)n);
		close(fd);
	}
}

static int listen_local(unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* What the hooks saw. */
struct seen {
	int events, denied, allowed, asks;
	char last_dst[300];
	char last_why[200];
	uint64_t last_up, last_down;
	enum policy_decision answer; /* what an ask is answered */
};

static int hook_ask(void *ctx, const char *host, unsigned port, int32_t rule, proxy_done_fn done,
		    void *arg)
{
	struct seen *s = ctx;
	(void)host;
	(void)port;
	(void)rule;
	s->asks++;
	done(arg, s->answer, "human");
	return 0;
}

static void hook_event(void *ctx, const struct proxy_event *ev)
{
	struct seen *s = ctx;
	s->events++;
	if (ev->decision == POLICY_DENY)
		s->denied++;
	else
		s->allowed++;
	snprintf(s->last_dst, sizeof s->last_dst, "%s", ev->destination);
	snprintf(s->last_why, sizeof s->last_why, "%s", ev->why ? ev->why : "");
	s->last_up = ev->bytes_up;
	s->last_down = ev->bytes_down;
}

struct fixture {
	struct test_policy t;
	struct upstream up;
	int http_l, socks_l;
	unsigned http_port, socks_port;
	struct proxy *p;
	struct seen seen;
	pthread_t loop;
	volatile bool stop;
};

static void *loop_main(void *arg)
{
	struct fixture *f = arg;
	while (!f->stop) {
		struct pollfd pfd = { proxy_fd(f->p), POLLIN, 0 };
		poll(&pfd, 1, 50);
		proxy_dispatch(f->p);
	}
	return NULL;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	char yaml[1024], err[256];
	signal(SIGPIPE, SIG_IGN);
	f->up.lfd = listen_local(&f->up.port);
	pthread_create(&f->up.thread, NULL, upstream_main, &f->up);
	snprintf(yaml, sizeof yaml,
		 "version: 1\n"
		 "default: {connect: deny}\n"
		 "ask:\n"
		 "  - network: {destination: \"localhost:%u\"}\n"
		 "allow:\n"
		 "  - network: {destination: \"127.0.0.1:%u\"}\n",
		 f->up.port, f->up.port);
	test_policy_build(&f->t, yaml);
	f->http_l = listen_local(&f->http_port);
	f->socks_l = listen_local(&f->socks_port);
	fcntl(f->http_l, F_SETFL, O_NONBLOCK);
	fcntl(f->socks_l, F_SETFL, O_NONBLOCK);
	struct proxy_listener l[] = {
		{ f->http_l, SOCK_STREAM, PROXY_ROLE_HTTP_PROXY, f->http_port },
		{ f->socks_l, SOCK_STREAM, PROXY_ROLE_SOCKS, f->socks_port },
	};
	struct proxy_options o = { .img = f->t.img,
				   .hooks = { .ctx = &f->seen, .ask = hook_ask, .event = hook_event } };
	f->p = proxy_new(l, 2, &o, err, sizeof err);
	assert_non_null(f->p);
	pthread_create(&f->loop, NULL, loop_main, f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	f->stop = true;
	pthread_join(f->loop, NULL);
	proxy_free(f->p);
	shutdown(f->up.lfd, SHUT_RDWR);
	close(f->up.lfd);
	pthread_join(f->up.thread, NULL);
	close(f->http_l);
	close(f->socks_l);
	test_policy_free(&f->t);
	free(f);
	return 0;
}

static int dial(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

/* Reads until want appears or the peer closes; returns what was read (static buffer). */
static const char *read_until(int fd, const char *want)
{
	static char buf[8192];
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (want && strstr(buf, want))
			break;
	}
	buf[len] = '\0';
	return buf;
}

static void wait_events(struct fixture *f, int n)
{
	for (int i = 0; i < 200 && f->seen.events < n; i++)
		usleep(10000);
	assert_int_equal(f->seen.events, n);
}

static void test_connect_allowed_relays(void **state)
{
	struct fixture *f = *state;
	char req[128];
	int fd = dial(f->http_port);
	snprintf(req, sizeof req, "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
		 f->up.port, f->up.port);
	assert_true(write(fd, req, strlen(req)) > 0);
	const char *got = read_until(fd, "HELLO\n");
	assert_non_null(strstr(got, "200 Connection established"));
	assert_non_null(strstr(got, "HELLO"));
	assert_int_equal(write(fd, "ping\n", 5), 5);
	assert_string_equal(read_until(fd, "ping\n"), "ping\n");
	close(fd);
	wait_events(f, 1);
	assert_int_equal(f->seen.allowed, 1);
	assert_int_equal(f->seen.last_up, 5);
	assert_int_equal(f->seen.last_down, 11);
}

static void test_absolute_uri_is_rewritten(void **state)
{
	struct fixture *f = *state;
	char req[160];
	int fd = dial(f->http_port);
	snprintf(req, sizeof req, "GET http://127.0.0.1:%u/x HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
		 f->up.port, f->up.port);
	assert_true(write(fd, req, strlen(req)) > 0);
	const char *got = read_until(fd, "\r\n\r\n");
	/* the echo server returns the request as forwarded: origin-form */
	assert_non_null(strstr(got, "HELLO\nGET /x HTTP/1.1\r\n"));
	close(fd);
	wait_events(f, 1);
}

static void test_denied_destination_is_403(void **state)
{
	struct fixture *f = *state;
	int fd = dial(f->http_port);
	const char req[] = "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n";
	assert_true(write(fd, req, sizeof req - 1) > 0);
	assert_non_null(strstr(read_until(fd, NULL), "403 Forbidden"));
	close(fd);
	wait_events(f, 1);
	assert_int_equal(f->seen.denied, 1);
	assert_string_equal(f->seen.last_dst, "127.0.0.1:1");
}

static void test_ip_spellings_are_one_address(void **state)
{
	struct fixture *f = *state;
	char req[160];
	int fd = dial(f->http_port);
	/* 2130706433 is 127.0.0.1: the allow rule on the dotted form applies */
	snprintf(req, sizeof req, "CONNECT 2130706433:%u HTTP/1.1\r\n\r\n", f->up.port);
	assert_true(write(fd, req, strlen(req)) > 0);
	assert_non_null(strstr(read_until(fd, "HELLO"), "HELLO"));
	close(fd);
	wait_events(f, 1);
	char want[64];
	snprintf(want, sizeof want, "127.0.0.1:%u", f->up.port);
	assert_string_equal(f->seen.last_dst, want);
}

static void test_host_mismatch_refused(void **state)
{
	struct fixture *f = *state;
	char req[200];
	int fd = dial(f->http_port);
	snprintf(req, sizeof req, "GET http://127.0.0.1:%u/ HTTP/1.1\r\nHost: evil.example\r\n\r\n",
		 f->up.port);
	assert_true(write(fd, req, strlen(req)) > 0);
	assert_non_null(strstr(read_until(fd, NULL), "403"));
	close(fd);
	wait_events(f, 1);
	assert_int_equal(f->seen.denied, 1);
	assert_non_null(strstr(f->seen.last_why, "Host"));
}

static void socks_connect(int fd, const char *domain, unsigned port)
{
	uint8_t req[300];
	size_t n = 0, len = strlen(domain);
	assert_int_equal(write(fd, "\x05\x01\x00", 3), 3);
	uint8_t sel[2];
	assert_int_equal(read(fd, sel, 2), 2);
	assert_int_equal(sel[1], 0);
	req[n++] = 5, req[n++] = 1, req[n++] = 0, req[n++] = 3, req[n++] = (uint8_t)len;
	memcpy(req + n, domain, len);
	n += len;
	req[n++] = (uint8_t)(port >> 8), req[n++] = (uint8_t)port;
	assert_int_equal(write(fd, req, n), (ssize_t)n);
}

static void test_socks_asked_and_allowed(void **state)
{
	struct fixture *f = *state;
	f->seen.answer = POLICY_ALLOW;
	int fd = dial(f->socks_port);
	socks_connect(fd, "localhost", f->up.port);
	uint8_t rep[10];
	assert_int_equal(read(fd, rep, 10), 10);
	assert_int_equal(rep[1], 0); /* succeeded */
	assert_non_null(strstr(read_until(fd, "HELLO"), "HELLO"));
	close(fd);
	wait_events(f, 1);
	assert_int_equal(f->seen.asks, 1);
	assert_int_equal(f->seen.allowed, 1);
}

static void test_socks_asked_and_denied(void **state)
{
	struct fixture *f = *state;
	f->seen.answer = POLICY_DENY;
	int fd = dial(f->socks_port);
	socks_connect(fd, "localhost", f->up.port);
	uint8_t rep[10];
	assert_int_equal(read(fd, rep, 10), 10);
	assert_int_equal(rep[1], 2); /* connection not allowed by ruleset */
	close(fd);
	wait_events(f, 1);
	assert_int_equal(f->seen.denied, 1);
}

static void test_garbage_is_refused_not_a_crash(void **state)
{
	struct fixture *f = *state;
	int fd = dial(f->http_port);
	assert_true(write(fd, "\x16\x03\x01\x00\x05hello", 10) > 0);
	read_until(fd, NULL);
	close(fd);
	fd = dial(f->socks_port);
	assert_true(write(fd, "\x04\x01\x00\x50", 4) > 0); /* SOCKS4 */
	read_until(fd, NULL);
	close(fd);
	wait_events(f, 2);
	assert_int_equal(f->seen.denied, 2);
}

/* One name per listener role (the proxy's events and netns's messages both use them). */
static void test_role_names(void **s)
{
	(void)s;
	for (int i = 0; i < PROXY_ROLE_MAX; i++) {
		assert_string_not_equal(proxy_role_name((enum proxy_role)i), "?");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(proxy_role_name((enum proxy_role)i),
						proxy_role_name((enum proxy_role)j));
	}
	assert_string_equal(proxy_role_name(PROXY_ROLE_MAX), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_role_names),
		cmocka_unit_test_setup_teardown(test_connect_allowed_relays, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absolute_uri_is_rewritten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied_destination_is_403, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ip_spellings_are_one_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_mismatch_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socks_asked_and_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socks_asked_and_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_is_refused_not_a_crash, setup, teardown),
	};
	return cmocka_run_group_tests_name("egress proxy", tests, NULL, NULL);
}
