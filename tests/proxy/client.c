/* client.c — the proxy tests' static client: a program the shim cannot see (built with gcc -static),
 * so only the kernel layer and the proxy stand between it and the lab's internet.
 *
 *   client tcp  ADDR PORT        connect to an IP literal, send a line, print what comes back
 *   client http ADDR PORT HOST   connect to an IP literal, GET / with Host: HOST, print the answer
 *   client gai  NAME PORT        getaddrinfo(3) (static glibc's own resolver), then as http
 *   client raw  NAME PORT        a DNS A query sent by hand to the resolv.conf nameserver, then as http
 *   client hosts NAME            reads /etc/hosts itself (no libc resolver): prints each entry as
 *                                "entry: ADDR NAME...", then "listed: ADDR" or "listed: none"
 *
 * Prints one line per step ("connect: ok", "resolved: 198.18.0.1", "reply: ...") and
 * "elapsed_ms: N" last.  Exit: 0 an answer came back; 2 connect failed; 3 end-of-file or reset
 * before any answer; 4 resolution failed (hosts: NAME not listed, or no /etc/hosts); 1 usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct timespec t0;

static int done(int rc)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("elapsed_ms: %ld\n",
	       (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	return rc;
}

static int connect_to(const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *in = (void *)&ss;
	struct sockaddr_in6 *in6 = (void *)&ss;
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		len = sizeof *in;
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		len = sizeof *in6;
	} else {
		printf("connect: bad address %s\n", addr);
		return -1;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (void *)&ss, len) < 0) {
		printf("connect: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	printf("connect: ok\n");
	return fd;
}

/* Sends msg, half-closes, prints everything read within 10 s.  0 when something came back. */
static int exchange(int fd, const char *msg)
{
	if (write(fd, msg, strlen(msg)) < 0) {
		printf("write: %s\n", strerror(errno));
		close(fd);
		return 3;
	}
	shutdown(fd, SHUT_WR);
	char buf[4096];
	size_t got = 0;
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int r = poll(&p, 1, 10000);
		if (r == 0) {
			printf("read: timeout\n");
			break;
		}
		ssize_t n = read(fd, buf, sizeof buf - 1);
		if (n < 0) {
			printf("read: %s\n", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		buf[n] = 0;
		if (got == 0)
			printf("reply: ");
		fputs(buf, stdout);
		got += n;
	}
	if (got == 0)
		printf("reply: none (end-of-file)\n");
	else if (buf[0] && got && buf[strlen(buf) - 1] != '\n')
		putchar('\n');
	close(fd);
	return got ? 0 : 3;
}

static int http(const char *addr, int port, const char *host)
{
	int fd = connect_to(addr, port);
	if (fd < 0)
		return 2;
	char req[512];
	snprintf(req, sizeof req, "GET /static HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n", host);
	return exchange(fd, req);
}

/* The first nameserver line of /etc/resolv.conf (IPv4), or 127.0.0.1. */
static void nameserver(char *out, size_t cap)
{
	snprintf(out, cap, "127.0.0.1");
	FILE *f = fopen("/etc/resolv.conf", "r");
	if (!f)
		return;
	char line[256], ns[64];
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, " nameserver %63s", ns) == 1) {
			struct in_addr a;
			if (inet_pton(AF_INET, ns, &a) == 1) {
				snprintf(out, cap, "%s", ns);
				break;
			}
		}
	}
	fclose(f);
}

/* Writes a DNS query for NAME's A record (RFC 1035 §4.1) into q; its length, or 0 when NAME does not fit. */
static size_t dns_query(const char *name, unsigned char *q, size_t cap)
{
	size_t n = 0;
	unsigned short id = (unsigned short)getpid();
	q[n++] = id >> 8;
	q[n++] = id & 0xff;
	q[n++] = 0x01; /* RD */
	q[n++] = 0;
	q[n++] = 0, q[n++] = 1; /* QDCOUNT */
	memset(q + n, 0, 6);
	n += 6;
	const char *p = name;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		if (l == 0 || l > 63 || n + l + 6 > cap)
			return 0;
		q[n++] = l;
		memcpy(q + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = 0, q[n++] = 1; /* A */
	q[n++] = 0, q[n++] = 1; /* IN */
	return n;
}

/* The first A record of answer r (m bytes) to query q (n bytes), as text in out.  0, or -1. */
static int dns_first_a(const unsigned char *q, size_t n, const unsigned char *r, size_t m, char *out,
		       size_t cap)
{
	if (m < 12 || r[0] != q[0] || r[1] != q[1]) {
		printf("dns: bad answer\n");
		return -1;
	}
	int rcode = r[3] & 0x0f, an = r[6] << 8 | r[7];
	if (rcode != 0 || an == 0) {
		printf("dns: rcode %d, %d answers\n", rcode, an);
		return -1;
	}
	size_t i = n; /* the question is echoed: answers follow it */
	for (int k = 0; k < an && i + 12 <= m; k++) {
		if ((r[i] & 0xc0) == 0xc0)
			i += 2;
		else {
			while (i < m && r[i])
				i += r[i] + 1;
			i++;
		}
		if (i + 10 > m)
			break;
		int type = r[i] << 8 | r[i + 1], rdlen = r[i + 8] << 8 | r[i + 9];
		i += 10;
		if (type == 1 && rdlen == 4 && i + 4 <= m) {
			inet_ntop(AF_INET, r + i, out, cap);
			return 0;
		}
		i += rdlen;
	}
	printf("dns: no A record\n");
	return -1;
}

/* A hand-made DNS query for NAME's A record to resolv.conf's server.  0 and the address in out, or -1. */
static int raw_resolve(const char *name, char *out, size_t cap)
{
	unsigned char q[512], r[512];
	size_t n = dns_query(name, q, sizeof q);
	if (n == 0)
		return -1;
	char ns[64];
	nameserver(ns, sizeof ns);
	printf("nameserver: %s\n", ns);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	inet_pton(AF_INET, ns, &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, q, n, 0, (void *)&sa, sizeof sa) < 0) {
		printf("dns: send: %s\n", strerror(errno));
		return -1;
	}
	struct pollfd pf = { fd, POLLIN, 0 };
	if (poll(&pf, 1, 3000) != 1) {
		printf("dns: no answer\n");
		close(fd);
		return -1;
	}
	ssize_t m = recv(fd, r, sizeof r, 0);
	close(fd);
	return dns_first_a(q, n, r, m > 0 ? (size_t)m : 0, out, cap);
}

/* /etc/hosts read by hand (hosts(5): ADDR NAME [ALIAS...], '#' comments).  0 when name is listed. */
static int hosts_lookup(const char *name)
{
	FILE *f = fopen("/etc/hosts", "r");
	char line[1024], found[64] = "";
	if (!f) {
		printf("hosts: %s\n", strerror(errno));
		return 4;
	}
	while (fgets(line, sizeof line, f)) {
		char *hash = strchr(line, '#'), *save = NULL;
		if (hash)
			*hash = '\0';
		char *addr = strtok_r(line, " \t\r\n", &save);
		if (!addr)
			continue;
		printf("entry: %s", addr);
		for (char *n; (n = strtok_r(NULL, " \t\r\n", &save));) {
			printf(" %s", n);
			if (!found[0] && strcasecmp(n, name) == 0)
				snprintf(found, sizeof found, "%s", addr);
		}
		putchar('\n');
	}
	fclose(f);
	printf("listed: %s\n", found[0] ? found : "none");
	return found[0] ? 0 : 4;
}

int main(int argc, char **argv)
{
	clock_gettime(CLOCK_MONOTONIC, &t0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[1], "tcp")) {
		int fd = connect_to(argv[2], atoi(argv[3]));
		if (fd < 0)
			return done(2);
		return done(exchange(fd, "ping from the static client\n"));
	}
	if (argc >= 5 && !strcmp(argv[1], "http"))
		return done(http(argv[2], atoi(argv[3]), argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "gai")) {
		struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
		int e = getaddrinfo(argv[2], NULL, &hints, &res);
		if (e) {
			printf("resolve: %s\n", gai_strerror(e));
			return done(4);
		}
		char a[64];
		inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, a, sizeof a);
		freeaddrinfo(res);
		printf("resolved: %s\n", a);
		return done(http(a, atoi(argv[3]), argv[2]));
	}
	if (argc >= 4 && !strcmp(argv[1], "raw")) {
		char a[64];
		if (raw_resolve(argv[2], a, sizeof a) < 0)
			return done(4);
		printf("resolved: %s\n", a);
		return done(http(a, atoi(argv[3]), argv[2]));
	}
	if (argc >= 3 && !strcmp(argv[1], "hosts"))
		return done(hosts_lookup(argv[2]));
	fprintf(stderr, "usage: client tcp ADDR PORT | http ADDR PORT HOST | gai NAME PORT | raw NAME PORT | "
			"hosts NAME\n");
	return 1;
}
