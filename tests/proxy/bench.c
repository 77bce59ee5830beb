/* bench.c — the proxy benchmark's server and client (tests/bench/proxy_bench.sh).
 *
 * Server, run in the lab's internet namespace:
 *   bench serve PORT
 *     PORT     one byte command per connection: 'D' + 8-byte big-endian N: sends N bytes and
 *              closes; 'U': reads until end-of-file, answers the 8-byte count; 'P': echoes
 *              every byte (ping-pong) until end-of-file
 *     PORT+1   accept, send one byte, close (new-connection rate); served by 4 threads
 *
 * Client, run in OUTER (direct) or inside `airlock run` (through the proxy); built static, so the
 * shim does not add its own cost to the proxy's:
 *   bench down ADDR PORT BYTES          prints "seconds S" for receiving BYTES
 *   bench up ADDR PORT BYTES            prints "seconds S" for sending BYTES (server's count checked)
 *   bench connrate ADDR PORT SECONDS C  C threads connect / read one byte / close for SECONDS;
 *                                       prints "cps N" and "errors E"
 *   bench pingpong ADDR PORT N          N one-byte round trips on one connection; prints
 *                                       "median_us X" and "p99_us Y"
 *   bench firstreq ADDR PORT N          N times: connect, one round trip, close; prints
 *                                       "median_us X" (a new connection's first request)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF (1 << 20)

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int full_write(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= w;
	}
	return 0;
}

static int full_read(int fd, void *p, size_t n)
{
	char *c = p;
	while (n) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= r;
	}
	return 0;
}

static void nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ---- server ---- */

static void *serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static char zeros[BUF];
	char cmd;
	nodelay(fd);
	if (full_read(fd, &cmd, 1) < 0)
		goto out;
	if (cmd == 'D') {
		uint64_t n = 0;
		unsigned char b[8];
		if (full_read(fd, b, 8) < 0)
			goto out;
		for (int i = 0; i < 8; i++)
			n = n << 8 | b[i];
		while (n) {
			size_t k = n < BUF ? n : BUF;
			if (full_write(fd, zeros, k) < 0)
				goto out;
			n -= k;
		}
	} else if (cmd == 'U') {
		char *buf = malloc(BUF);
		uint64_t n = 0;
		ssize_t r;
		while ((r = read(fd, buf, BUF)) > 0)
			n += r;
		free(buf);
		unsigned char b[8];
		for (int i = 7; i >= 0; i--, n >>= 8)
			b[i] = n & 0xff;
		full_write(fd, b, 8);
	} else if (cmd == 'P') {
		char c;
		while (full_read(fd, &c, 1) == 0)
			if (full_write(fd, &c, 1) < 0)
				break;
	}
out:
	close(fd);
	return NULL;
}

static int listen_on(int port)
{
	int fd = socket(AF_INET6, SOCK_STREAM, 0), one = 1, zero = 0;
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	if (bind(fd, (void *)&a, sizeof a) < 0 || listen(fd, 4096) < 0)
		die("bind/listen");
	return fd;
}

static void *serve_rate(void *arg)
{
	int l = (int)(intptr_t)arg;
	for (;;) {
		int fd = accept(l, NULL, NULL);
		if (fd < 0)
			continue;
		(void)!write(fd, "x", 1);
		close(fd);
	}
	return NULL;
}

static __attribute__((noreturn)) void serve(int port)
{
	int l = listen_on(port), r = listen_on(port + 1);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 << 10);
	for (int i = 0; i < 4; i++)
		pthread_create(&t, &at, serve_rate, (void *)(intptr_t)r);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int fd = accept(l, NULL, NULL);
		if (fd < 0)
			continue;
		if (pthread_create(&t, &at, serve_conn, (void *)(intptr_t)fd))
			close(fd);
	}
}

/* ---- client ---- */

static struct sockaddr_storage dst;
static socklen_t dstlen;

static void target(const char *addr, int port)
{
	struct sockaddr_in *in = (void *)&dst;
	struct sockaddr_in6 *in6 = (void *)&dst;
	memset(&dst, 0, sizeof dst);
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		dstlen = sizeof *in;
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		dstlen = sizeof *in6;
	} else {
		fprintf(stderr, "bench: bad address %s\n", addr);
		exit(1);
	}
}

static int dial(void)
{
	int fd = socket(dst.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (void *)&dst, dstlen) < 0) {
		close(fd);
		return -1;
	}
	nodelay(fd);
	return fd;
}

static int down(uint64_t n)
{
	int fd = dial();
	if (fd < 0)
		die("connect");
	unsigned char cmd[9] = { 'D' };
	for (int i = 8; i >= 1; i--)
		cmd[i] = (n >> (8 * (8 - i))) & 0xff;
	char *buf = malloc(BUF);
	double t0 = now();
	if (full_write(fd, cmd, 9) < 0)
		die("write");
	uint64_t got = 0;
	ssize_t r;
	while ((r = read(fd, buf, BUF)) > 0)
		got += r;
	double t = now() - t0;
	if (got != n) {
		fprintf(stderr, "bench: received %llu of %llu bytes\n", (unsigned long long)got,
			(unsigned long long)n);
		return 1;
	}
	printf("seconds %.6f\n", t);
	return 0;
}

static int up(uint64_t n)
{
	int fd = dial();
	if (fd < 0)
		die("connect");
	static char zeros[BUF];
	double t0 = now();
	if (full_write(fd, "U", 1) < 0)
		die("write");
	uint64_t left = n;
	while (left) {
		size_t k = left < BUF ? left : BUF;
		if (full_write(fd, zeros, k) < 0)
			die("write");
		left -= k;
	}
	shutdown(fd, SHUT_WR);
	unsigned char b[8];
	if (full_read(fd, b, 8) < 0)
		die("read count");
	double t = now() - t0;
	uint64_t got = 0;
	for (int i = 0; i < 8; i++)
		got = got << 8 | b[i];
	if (got != n) {
		fprintf(stderr, "bench: server counted %llu of %llu bytes\n", (unsigned long long)got,
			(unsigned long long)n);
		return 1;
	}
	printf("seconds %.6f\n", t);
	return 0;
}

static atomic_ulong conns, errs;
static double deadline;

static void *rate_worker(void *arg)
{
	(void)arg;
	char c;
	while (now() < deadline) {
		int fd = dial();
		if (fd < 0) {
			errs++;
			continue;
		}
		if (read(fd, &c, 1) == 1)
			conns++;
		else
			errs++;
		close(fd);
	}
	return NULL;
}

static int connrate(double secs, int c)
{
	pthread_t t[256];
	if (c > 256)
		c = 256;
	double t0 = now();
	deadline = t0 + secs;
	for (int i = 0; i < c; i++)
		pthread_create(&t[i], NULL, rate_worker, NULL);
	for (int i = 0; i < c; i++)
		pthread_join(t[i], NULL);
	double el = now() - t0;
	printf("cps %.0f\nerrors %lu\n", conns / el, (unsigned long)errs);
	return conns ? 0 : 1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int pingpong(int n)
{
	int fd = dial();
	if (fd < 0)
		die("connect");
	if (full_write(fd, "P", 1) < 0)
		die("write");
	double *s = malloc(n * sizeof *s);
	char c = 'p';
	for (int i = 0; i < n; i++) {
		double t0 = now();
		if (full_write(fd, &c, 1) < 0 || full_read(fd, &c, 1) < 0)
			die("ping");
		s[i] = (now() - t0) * 1e6;
	}
	qsort(s, n, sizeof *s, cmp);
	printf("median_us %.1f\np99_us %.1f\n", s[n / 2], s[(int)(n * 0.99)]);
	return 0;
}

static int firstreq(int n)
{
	double *s = malloc(n * sizeof *s);
	char c = 'p';
	for (int i = 0; i < n; i++) {
		double t0 = now();
		int fd = dial();
		if (fd < 0)
			die("connect");
		if (full_write(fd, "Pp", 2) < 0 || full_read(fd, &c, 1) < 0)
			die("request");
		s[i] = (now() - t0) * 1e6;
		close(fd);
	}
	qsort(s, n, sizeof *s, cmp);
	printf("median_us %.1f\n", s[n / 2]);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "serve"))
		serve(atoi(argv[2]));
	if (argc >= 5) {
		target(argv[2], atoi(argv[3]));
		if (!strcmp(argv[1], "down"))
			return down(strtoull(argv[4], NULL, 10));
		if (!strcmp(argv[1], "up"))
			return up(strtoull(argv[4], NULL, 10));
		if (!strcmp(argv[1], "pingpong"))
			return pingpong(atoi(argv[4]));
		if (!strcmp(argv[1], "firstreq"))
			return firstreq(atoi(argv[4]));
		if (argc >= 6 && !strcmp(argv[1], "connrate"))
			return connrate(atof(argv[4]), atoi(argv[5]));
	}
	fprintf(stderr, "usage: bench serve PORT | down|up ADDR PORT BYTES | connrate ADDR PORT SECS C |"
			" pingpong|firstreq ADDR PORT N\n");
	return 1;
}
