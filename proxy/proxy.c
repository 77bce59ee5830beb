/* proxy.c — the egress proxy's event loop: learn each connection's destination, decide it, resolve, connect, relay. */
#include "proxy/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "policy/netaddr.h"
#include "proxy/accept.h"
#include "proxy/addr.h"
#include "proxy/dns.h"
#include "proxy/relay.h"
#include "proxy/sniff.h"

#define SNIFF_TIMEOUT_MS 10000 /* a client that never says where it goes is dropped */
#define CONNECT_TIMEOUT_MS 15000

enum tag_kind { TAG_LISTENER, TAG_CLIENT, TAG_UPSTREAM, TAG_RESOLVER };

/* What an epoll event is about. */
struct tag {
	enum tag_kind kind;
	void *ptr;
	uint32_t events; /* what epoll watches for now: re-registering the same is skipped */
};

enum conn_state {
	CS_SNIFF,      /* reading until the destination is known */
	CS_TLS_PEEK,   /* told a proxy client "go ahead"; reading its ClientHello for the SNI */
	CS_ASKING,     /* a human is deciding */
	CS_RESOLVING,  /* getaddrinfo(3) on a thread */
	CS_CONNECTING, /* a non-blocking connect upstream */
	CS_RELAY,      /* bytes both ways */
};

struct conn {
	struct proxy *p;
	struct conn *next;
	uint64_t id;
	enum proxy_role role;
	enum conn_state st;
	int cfd, ufd;
	struct tag ctag, utag;
	long long start_ms, last_ms;
	/* what the client sent before the relay started */
	uint8_t buf[SNIFF_TLS_BUF_MAX];
	size_t len;
	size_t forward_from; /* buf[forward_from .. len) goes upstream once connected */
	char prefix[SNIFF_HTTP_HEAD_MAX]; /* absolute-URI: the rewritten request line */
	int prefix_len;
	struct sniff_socks socks;
	/* the destination */
	char host[SNIFF_HOST_MAX];
	unsigned port;
	bool is_addr;
	struct netaddr addr;
	char expect[SNIFF_HOST_MAX]; /* transparent: the name the fake address stands for */
	/* the decision */
	struct policy_verdict v;
	const char *by;
	const char *why;
	struct addrinfo *res, *next_ai;
	struct relay relay;
	bool relaying;
	bool replied;     /* the proxy protocol's success reply was sent before connecting */
	size_t tls_start; /* CS_TLS_PEEK: where the TLS bytes begin in buf */
};

/* A name resolution on its own thread: the connection may be gone when it ends. */
struct job {
	uint64_t conn_id;
	char host[SNIFF_HOST_MAX];
	char port[8];
	struct addrinfo *res;
	int rc;
	int wfd;
};

struct lsn {
	struct proxy_listener l;
	struct tag tag;
};

struct proxy {
	struct proxy_options opt;
	int ep;
	struct lsn *lsn;
	size_t nlsn;
	struct conn *conns;
	uint64_t next_id;
	int resolver[2]; /* threads write finished jobs' pointers here */
	struct tag rtag;
	struct dns_table *dns;
	uint64_t budget;
	bool limited;
	bool again; /* some relay stopped with bytes still moving: pump it without waiting */
	struct relay_pool pool;
	struct netaddr *host_addrs;
	size_t nhost_addrs;
	struct proxy_stats stats;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *const via_names[PROXY_ROLE_MAX] = { "transparent", "http-proxy", "socks", "dns" };

/* ---- epoll ------------------------------------------------------------------------- */

/*
 * Registers fd for events.  The relay asks after every pump: an unchanged
 * set costs no epoll_ctl(2), which on a busy connection was two syscalls a pump.
 */
static void watch(struct proxy *p, int fd, uint32_t events, struct tag *t, bool add)
{
	struct epoll_event ev = { .events = events, .data.ptr = t };
	if (!add && t->events == events)
		return;
	if (epoll_ctl(p->ep, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev) != 0 && add)
		epoll_ctl(p->ep, EPOLL_CTL_MOD, fd, &ev);
	t->events = events;
}

/*
 * A relaying socket is watched for everything, edge-triggered, from the
 * start: relay_pump() reads each source until it is empty, so no
 * epoll_ctl(2) is needed as directions fill, drain and end.
 */
#define RELAY_EVENTS (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)

/* ---- ending a connection ---------------------------------------------------------------- */

static void report(struct conn *c, enum policy_decision d)
{
	char dst[SNIFF_HOST_MAX + 16];
	struct proxy *p = c->p;
	snprintf(dst, sizeof dst, strchr(c->host, ':') ? "[%s]:%u" : "%s:%u",
		 c->host[0] ? c->host : "?", c->port);
	struct proxy_event ev = {
		.destination = dst,
		.via = via_names[c->role],
		.decision = d,
		.decided_by = c->by ? c->by : "policy",
		.rule = c->v.rule,
		.why = c->why,
		.bytes_up = c->relaying ? c->relay.side[RELAY_UP].bytes : 0,
		.bytes_down = c->relaying ? c->relay.side[RELAY_DOWN].bytes : 0,
		.duration_ms = now_ms() - c->start_ms,
	};
	p->stats.bytes_up += ev.bytes_up;
	p->stats.bytes_down += ev.bytes_down;
	if (p->opt.hooks.event)
		p->opt.hooks.event(p->opt.hooks.ctx, &ev);
}

static void conn_free(struct conn *c)
{
	struct proxy *p = c->p;
	for (struct conn **pp = &p->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->relaying)
		relay_free(&c->relay);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	if (c->res)
		freeaddrinfo(c->res);
	free(c);
}

/* The connection ran (or was allowed and failed): one event, then gone. */
static void finish(struct conn *c)
{
	report(c, POLICY_ALLOW);
	conn_free(c);
}

/* Refuses the connection in the client's protocol's words, logs it, frees it. */
static void refuse(struct conn *c, const char *why)
{
	static const char forbidden[] = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
					"Connection: close\r\nContent-Length: 38\r\n\r\n"
					"airlock: this destination is refused\r\n";
	uint8_t reply[SNIFF_SOCKS_REPLY_LEN];
	if (why && !c->why)
		c->why = why;
	if (c->replied) {
		struct linger lg = { 1, 0 }; /* the tunnel was promised: a reset ends it */
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	} else if (c->role == PROXY_HTTP) {
		(void)send(c->cfd, forbidden, sizeof forbidden - 1, MSG_NOSIGNAL);
	} else if (c->role == PROXY_SOCKS && c->socks.result == SNIFF_OK) {
		size_t n = sniff_socks_reply(reply, SNIFF_SOCKS_NOT_ALLOWED);
		(void)send(c->cfd, reply, n, MSG_NOSIGNAL);
	} else {
		struct linger lg = { 1, 0 }; /* a reset: the client fails at once */
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	}
	c->p->stats.refused++;
	report(c, POLICY_DENY);
	conn_free(c);
}

/* ---- connecting ------------------------------------------------------------------------- */

static void start_relay(struct conn *c);
static bool send_all(int fd, const void *buf, size_t len);
static void pump(struct conn *c);

/* True when rule is a network rule whose destination is an address or address range. */
static bool rule_names_address(const struct policy_image *img, int32_t rule)
{
	struct policy_rule_info info;
	struct netdest d;
	char why[128];
	return rule >= 0 && policy_rule_describe(img, rule, &info) == 0 &&
	       info.kind == POLICY_RULE_NETWORK &&
	       netdest_parse(info.pattern, info.match, &d, why, sizeof why) == 0 &&
	       d.kind == NETDEST_ADDR;
}

/*
 * Loopback, private and special-purpose addresses, the metadata address and
 * this host's own addresses are refused unless an allow rule names the
 * address or its range ("*" does not): a name that resolves to one of them
 * would otherwise reach services on this host or its networks.
 */
static bool address_allowed(struct conn *c, const struct sockaddr *sa)
{
	struct netaddr a;
	char text[ADDR_TEXT_MAX];
	if (addr_from_sockaddr(sa, &a) != 0)
		return false;
	enum addr_class k = addr_restricted(&a, c->p->host_addrs, c->p->nhost_addrs);
	if (k == ADDR_PUBLIC)
		return true;
	addr_format(&a, text, sizeof text);
	struct policy_verdict v = policy_decide_connect(c->p->opt.img, text, c->port);
	if (v.decision == POLICY_ALLOW && rule_names_address(c->p->opt.img, v.rule))
		return true;
	c->why = k == ADDR_HOST ? "an address of this host"
	       : k == ADDR_METADATA ? "the cloud metadata address"
				    : "a loopback, private or special-purpose address";
	return false;
}

static void connect_next(struct conn *c)
{
	while (c->next_ai) {
		struct addrinfo *ai = c->next_ai;
		c->next_ai = ai->ai_next;
		if (!address_allowed(c, ai->ai_addr))
			continue;
		c->ufd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->ufd < 0)
			continue;
		if (connect(c->ufd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
			c->st = CS_CONNECTING;
			c->utag.events = 0;
			watch(c->p, c->ufd, RELAY_EVENTS, &c->utag, true); /* EPOLLOUT: connected */
			return;
		}
		close(c->ufd);
		c->ufd = -1;
	}
	refuse(c, c->why ? c->why : "cannot connect to the destination");
}

static void *resolve_main(void *arg)
{
	struct job *j = arg;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	j->rc = getaddrinfo(j->host, j->port, &hints, &j->res);
	if (write(j->wfd, &j, sizeof j) != (ssize_t)sizeof j) {
		if (j->res)
			freeaddrinfo(j->res);
		free(j);
	}
	return NULL;
}

static void resolve(struct conn *c)
{
	struct job *j = calloc(1, sizeof *j);
	pthread_t t;
	pthread_attr_t at;
	if (!j) {
		refuse(c, "out of memory");
		return;
	}
	j->conn_id = c->id;
	j->wfd = c->p->resolver[1];
	snprintf(j->host, sizeof j->host, "%s", c->host);
	snprintf(j->port, sizeof j->port, "%u", c->port);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int r = pthread_create(&t, &at, resolve_main, j);
	pthread_attr_destroy(&at);
	if (r != 0) {
		free(j);
		refuse(c, "cannot resolve the name now");
		return;
	}
	c->st = CS_RESOLVING;
}

static void resolved(struct proxy *p)
{
	struct job *j;
	while (read(p->resolver[0], &j, sizeof j) == (ssize_t)sizeof j) {
		struct conn *c = p->conns;
		while (c && c->id != j->conn_id)
			c = c->next;
		if (!c || c->st != CS_RESOLVING) {
			if (j->res)
				freeaddrinfo(j->res);
			free(j);
			continue;
		}
		c->res = c->next_ai = j->res;
		int rc = j->rc;
		free(j);
		if (rc != 0)
			refuse(c, "the name does not resolve");
		else
			connect_next(c);
	}
}

/* Connects to an address literal without resolving anything. */
static void connect_literal(struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof ss);
	if (c->addr.family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)c->port);
		memcpy(&in->sin_addr, c->addr.bytes, 4);
		len = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)c->port);
		memcpy(&in6->sin6_addr, c->addr.bytes, 16);
		len = sizeof *in6;
	}
	struct addrinfo *ai = calloc(1, sizeof *ai + sizeof ss);
	if (!ai) {
		refuse(c, "out of memory");
		return;
	}
	ai->ai_family = ss.ss_family;
	ai->ai_addr = (struct sockaddr *)(ai + 1);
	memcpy(ai->ai_addr, &ss, len);
	ai->ai_addrlen = len;
	c->next_ai = ai;
	connect_next(c);
	free(ai);
	c->next_ai = NULL;
}

/* ---- deciding ----------------------------------------------------------------------------- */

static void go(struct conn *c);

/*
 * Port 443 through a proxy protocol: the client sends its ClientHello only
 * after "go ahead", so say it now and check the SNI against the decided
 * name before anything is connected (transparent connections were checked
 * before deciding).
 */
static bool tls_gate(struct conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint8_t reply[SNIFF_SOCKS_REPLY_LEN];
	if (c->port != 443 || c->role == PROXY_TRANSPARENT || c->replied || c->prefix_len > 0)
		return false;
	bool ok = c->role == PROXY_HTTP
			  ? send_all(c->cfd, established, sizeof established - 1)
			  : send_all(c->cfd, reply, sniff_socks_reply(reply, SNIFF_SOCKS_SUCCEEDED));
	c->replied = true;
	if (!ok) {
		refuse(c, "the client went away");
		return true;
	}
	c->tls_start = c->forward_from;
	c->st = CS_TLS_PEEK;
	watch(c->p, c->cfd, EPOLLIN, &c->ctag, false);
	return true;
}

/* The ClientHello behind a proxy protocol: its SNI must name the destination. */
static void peek_tls(struct conn *c)
{
	struct sniff_tls t;
	enum sniff_result r = sniff_tls(c->buf + c->tls_start, c->len - c->tls_start, &t);
	if (r == SNIFF_NEED_MORE)
		return;
	if (r == SNIFF_OK && strcmp(t.host, c->host) != 0) {
		refuse(c, "the TLS server name does not match the destination");
		return;
	}
	if (r != SNIFF_OK && r != SNIFF_NONE) {
		refuse(c, "not a TLS ClientHello on port 443");
		return;
	}
	c->st = CS_SNIFF; /* until connected: no more reading (resolve or connect_literal moves on at once) */
	watch(c->p, c->cfd, RELAY_EVENTS, &c->ctag, false);
	if (c->is_addr)
		connect_literal(c);
	else
		resolve(c);
}

static void go(struct conn *c)
{
	if (c->p->limited && c->p->budget == 0) {
		c->v.rule = -1; /* the budget refuses it, not the rule that allowed it */
		refuse(c, "the session's egress budget (limits.max_egress_bytes) is spent");
		return;
	}
	if (tls_gate(c))
		return;
	/*
	 * Watched as a relay from now on: edge-triggered, what the client sends
	 * while its destination is resolved and connected raises no event over
	 * and over; start_relay() moves it.
	 */
	watch(c->p, c->cfd, RELAY_EVENTS, &c->ctag, false);
	if (c->is_addr)
		connect_literal(c);
	else
		resolve(c);
}

static void answered(void *arg, enum policy_decision d, const char *by)
{
	struct conn *c = arg;
	c->by = by;
	if (d == POLICY_ALLOW)
		go(c);
	else
		refuse(c, NULL);
}

/*
 * The destination is known (c->host, c->port): canonicalise an address in
 * any spelling, map a fake address back to its name, decide, and go on.
 */
static void decide(struct conn *c)
{
	struct proxy *p = c->p;
	c->is_addr = addr_parse(c->host, strlen(c->host), &c->addr) == 0;
	if (c->is_addr && c->addr.family == 4) {
		uint32_t v4;
		memcpy(&v4, c->addr.bytes, 4);
		const char *name = dns_table_name_of(p->dns, ntohl(v4));
		if (name) {
			snprintf(c->host, sizeof c->host, "%s", name);
			c->is_addr = false;
		} else if (dns_is_fake(ntohl(v4))) {
			refuse(c, "an address the sandbox's DNS never gave out");
			return;
		}
	}
	if (c->is_addr)
		addr_format(&c->addr, c->host, sizeof c->host);
	if (c->expect[0] && strcmp(c->expect, c->host) != 0) {
		refuse(c, "the TLS server name or Host header does not match the destination");
		return;
	}
	if (c->port == 0 || c->port > 65535) {
		refuse(c, "bad port");
		return;
	}
	c->v = policy_decide_connect(p->opt.img, c->host, c->port);
	switch (c->v.decision) {
	case POLICY_ALLOW:
		go(c);
		return;
	case POLICY_ASK:
		c->st = CS_ASKING;
		watch(p, c->cfd, 0, &c->ctag, false);
		if (!p->opt.hooks.ask || p->opt.hooks.ask(p->opt.hooks.ctx, c->host, c->port, c->v.rule,
							 answered, c) != 0)
			refuse(c, "nobody to ask");
		return;
	default:
		refuse(c, NULL);
	}
}

/* ---- learning the destination ----------------------------------------------------------------- */

/* A transparent connection: where the client connected, mapped back to a name, checked against SNI/Host. */
static void sniff_transparent(struct conn *c)
{
	if (c->port == 443) {
		struct sniff_tls t;
		enum sniff_result r = sniff_tls(c->buf, c->len, &t);
		if (r == SNIFF_NEED_MORE)
			return;
		if (r == SNIFF_OK) {
			snprintf(c->expect, sizeof c->expect, "%s", t.host); /* must be the decided name */
		} else if (r != SNIFF_NONE) {
			refuse(c, "not a TLS ClientHello on port 443");
			return;
		}
	} else if (c->port == 80) {
		struct sniff_http h;
		enum sniff_result r = sniff_http((const char *)c->buf, c->len, &h);
		if (r == SNIFF_NEED_MORE)
			return;
		if (r != SNIFF_OK || h.kind != SNIFF_HTTP_ORIGIN) {
			refuse(c, "not an HTTP request on port 80");
			return;
		}
		snprintf(c->expect, sizeof c->expect, "%s", h.host);
	}
	c->forward_from = 0;
	decide(c);
}

static void sniff_http_proxy(struct conn *c)
{
	struct sniff_http h;
	enum sniff_result r = sniff_http((const char *)c->buf, c->len, &h);
	if (r == SNIFF_NEED_MORE)
		return;
	if (r != SNIFF_OK || h.kind == SNIFF_HTTP_ORIGIN) {
		refuse(c, r == SNIFF_OK ? "not a proxy request" : "malformed HTTP request");
		return;
	}
	if (!h.host_match) {
		refuse(c, "the Host header does not match the request target");
		return;
	}
	snprintf(c->host, sizeof c->host, "%s", h.host);
	c->port = h.port;
	if (h.kind == SNIFF_HTTP_CONNECT) {
		c->forward_from = h.head_len;
	} else {
		c->prefix_len = sniff_http_rewrite((const char *)c->buf, &h, c->prefix, sizeof c->prefix);
		if (c->prefix_len < 0) {
			refuse(c, "cannot rewrite the request");
			return;
		}
		c->forward_from = h.line_len;
	}
	decide(c);
}

static void sniff_socks_proxy(struct conn *c)
{
	enum sniff_result r = sniff_socks(&c->socks, c->buf, c->len);
	if (c->socks.reply_len)
		(void)send(c->cfd, c->socks.reply, c->socks.reply_len, MSG_NOSIGNAL);
	if (r == SNIFF_NEED_MORE)
		return;
	if (r != SNIFF_OK) {
		c->why = c->socks.reason; /* sniff_socks() queued the failure reply, sent above */
		refuse(c, "malformed SOCKS5 request");
		return;
	}
	snprintf(c->host, sizeof c->host, "%s", c->socks.host);
	c->port = c->socks.port;
	c->forward_from = c->socks.consumed;
	decide(c);
}

/* DNS over TCP (RFC 7766): answer each length-prefixed query in the stream; the client closes. */
static void dns_tcp(struct conn *c)
{
	const uint8_t *msg;
	size_t msglen, used;
	while ((used = dns_tcp_next(c->buf, c->len, &msg, &msglen)) > 0) {
		uint8_t out[DNS_UDP_MAX + 2];
		struct dns_query_info info;
		int n = dns_answer(c->p->dns, msg, msglen, true, out, sizeof out, &info);
		c->p->stats.dns_queries++;
		if (n > 0 && !send_all(c->cfd, out, (size_t)n)) {
			conn_free(c);
			return;
		}
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
}

static void client_readable(struct conn *c)
{
	if (c->len == sizeof c->buf) {
		refuse(c, "request too large");
		return;
	}
	ssize_t n = recv(c->cfd, c->buf + c->len, sizeof c->buf - c->len, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		if (c->role != PROXY_DNS) {
			c->why = "the client went away before saying where to";
			report(c, POLICY_DENY);
		}
		conn_free(c);
		return;
	}
	if (n < 0)
		return;
	c->len += (size_t)n;
	c->last_ms = now_ms();
	if (c->st == CS_TLS_PEEK) {
		peek_tls(c);
		return;
	}
	switch (c->role) {
	case PROXY_DNS:
		dns_tcp(c);
		break;
	case PROXY_HTTP:
		sniff_http_proxy(c);
		break;
	case PROXY_SOCKS:
		sniff_socks_proxy(c);
		break;
	default:
		sniff_transparent(c);
	}
}

/* ---- relaying ------------------------------------------------------------------------------- */

static bool send_all(int fd, const void *buf, size_t len)
{
	const char *b = buf;
	while (len) {
		ssize_t n = send(fd, b, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd pfd = { fd, POLLOUT, 0 };
			if (poll(&pfd, 1, 1000) <= 0)
				return false;
			continue;
		}
		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

/* Connected: tell the client, send what it already sent, then relay. */
static void start_relay(struct conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint8_t reply[SNIFF_SOCKS_REPLY_LEN];
	bool ok = true;
	uint64_t early = (uint64_t)(c->prefix_len > 0 ? c->prefix_len : 0) + (c->len - c->forward_from);
	if (c->p->limited && early > c->p->budget) {
		/* not even what it already sent fits in what is left */
		c->p->budget = 0;
		refuse(c, "the session's egress budget (limits.max_egress_bytes) is spent");
		return;
	}
	if (c->p->limited)
		c->p->budget -= early;
	if (c->replied)
		;
	else if (c->role == PROXY_HTTP && c->prefix_len == 0)
		ok = send_all(c->cfd, established, sizeof established - 1);
	else if (c->role == PROXY_SOCKS)
		ok = send_all(c->cfd, reply, sniff_socks_reply(reply, SNIFF_SOCKS_SUCCEEDED));
	if (ok && c->prefix_len > 0)
		ok = send_all(c->ufd, c->prefix, (size_t)c->prefix_len);
	if (ok && c->len > c->forward_from)
		ok = send_all(c->ufd, c->buf + c->forward_from, c->len - c->forward_from);
	if (!ok || relay_init(&c->relay, c->cfd, c->ufd, c->p->limited ? &c->p->budget : NULL,
			      &c->p->pool) != 0) {
		c->why = "the connection failed while starting";
		finish(c);
		return;
	}
	c->relaying = true;
	c->relay.side[RELAY_UP].bytes += early; /* what went up before the relay counts too */
	c->st = CS_RELAY;
	watch(c->p, c->cfd, RELAY_EVENTS, &c->ctag, false);
	/* what arrived while connecting raised edges nobody took: move it now */
	pump(c);
}

/*
 * The connect ended.  A pending socket error always shows as EPOLLERR, so
 * without EPOLLERR or EPOLLHUP it succeeded and getsockopt(SO_ERROR) would
 * say 0: only the other case asks.
 */
static void upstream_ready(struct conn *c, uint32_t ev)
{
	int e = 0;
	socklen_t el = sizeof e;
	if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
		return; /* still connecting */
	if ((ev & (EPOLLERR | EPOLLHUP)) &&
	    (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e != 0 || !(ev & EPOLLOUT))) {
		epoll_ctl(c->p->ep, EPOLL_CTL_DEL, c->ufd, NULL);
		close(c->ufd);
		c->ufd = -1;
		if (c->next_ai) {
			connect_next(c);
			return;
		}
		refuse(c, "the destination refused the connection");
		return;
	}
	start_relay(c);
}

static void pump(struct conn *c)
{
	enum relay_state s = relay_pump(&c->relay);
	c->last_ms = now_ms();
	if (s == RELAY_RUNNING) {
		c->p->again |= c->relay.again;
		return;
	}
	if (s == RELAY_OVER_BUDGET)
		c->why = "the session's egress budget (limits.max_egress_bytes) is spent";
	else if (s == RELAY_FAILED)
		c->why = strerror(c->relay.error);
	finish(c);
}

/* ---- accepting and DNS -------------------------------------------------------------------- */

static void accept_conn(struct proxy *p, struct lsn *ls)
{
	for (;;) {
		struct sockaddr_storage dst;
		socklen_t dlen = sizeof dst;
		int fd = accept_shed(ls->l.fd, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && errno == ECONNABORTED) {
			/* out of descriptors: the connection was refused, not left queued to spin on */
			p->stats.connections++;
			p->stats.refused++;
			continue;
		}
		if (fd < 0)
			return;
		struct conn *c = calloc(1, sizeof *c);
		if (!c) {
			close(fd);
			continue;
		}
		*c = (struct conn){ .p = p, .id = ++p->next_id, .role = ls->l.role, .cfd = fd,
				    .ufd = -1, .start_ms = now_ms() };
		c->last_ms = c->start_ms;
		c->ctag = (struct tag){ .kind = TAG_CLIENT, .ptr = c };
		c->utag = (struct tag){ .kind = TAG_UPSTREAM, .ptr = c };
		c->v.rule = -1;
		sniff_socks_init(&c->socks);
		c->next = p->conns;
		p->conns = c;
		p->stats.connections++;
		if (c->role != PROXY_TRANSPARENT)
			watch(p, fd, EPOLLIN, &c->ctag, true);
		else {
			/* every address is local in the sandbox: where it connected is where it goes */
			struct netaddr a;
			if (getsockname(fd, (struct sockaddr *)&dst, &dlen) != 0 ||
			    addr_from_sockaddr((struct sockaddr *)&dst, &a) != 0) {
				refuse(c, "no original destination");
				continue;
			}
			c->port = dst.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&dst)->sin_port)
							   : ntohs(((struct sockaddr_in6 *)&dst)->sin6_port);
			addr_format(&a, c->host, sizeof c->host);
			if (c->port == 80 || c->port == 443) {
				watch(p, fd, EPOLLIN, &c->ctag, true);
			} else {
				/* nothing to peek at: decide on the address now, and watch as a relay will */
				watch(p, fd, RELAY_EVENTS, &c->ctag, true);
				decide(c);
			}
		}
	}
}

/* One DNS query over UDP: answered from the fake table, from the address it was sent to. */
static void dns_udp(struct proxy *p, int fd)
{
	for (;;) {
		uint8_t q[1500], out[1500];
		struct sockaddr_storage from;
		union {
			struct cmsghdr h;
			char space[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		} ctl;
		struct iovec iov = { q, sizeof q };
		struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov,
				     .msg_iovlen = 1, .msg_control = ctl.space,
				     .msg_controllen = sizeof ctl.space };
		ssize_t n = recvmsg(fd, &mh, 0);
		if (n < 0)
			return;
		struct dns_query_info info;
		int len = dns_answer(p->dns, q, (size_t)n, false, out, sizeof out, &info);
		p->stats.dns_queries++;
		if (len <= 0)
			continue;
		if (p->opt.hooks.dns && info.qname[0] && info.has_addr) {
			char a[INET_ADDRSTRLEN];
			uint32_t be = htonl(info.ipv4);
			inet_ntop(AF_INET, &be, a, sizeof a);
			p->opt.hooks.dns(p->opt.hooks.ctx, info.qname, a);
		}
		/* reply from the address the query went to: the control data carries it back */
		struct iovec oiov = { out, (size_t)len };
		struct msghdr om = { .msg_name = &from, .msg_namelen = mh.msg_namelen, .msg_iov = &oiov,
				     .msg_iovlen = 1, .msg_control = mh.msg_controllen ? ctl.space : NULL,
				     .msg_controllen = mh.msg_controllen };
		(void)sendmsg(fd, &om, MSG_NOSIGNAL);
	}
}

/* ---- the loop ------------------------------------------------------------------------------------ */

static void client_event(struct conn *c, uint32_t ev)
{
	if ((c->st == CS_SNIFF || c->st == CS_TLS_PEEK) && (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		client_readable(c);
	else if (c->st == CS_RELAY)
		pump(c);
}

static void upstream_event(struct conn *c, uint32_t ev)
{
	if (c->st == CS_CONNECTING)
		upstream_ready(c, ev);
	else if (c->st == CS_RELAY)
		pump(c);
}

static void expire(struct proxy *p)
{
	long long now = now_ms(), idle = (long long)p->opt.idle_timeout_s * 1000;
	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if (c->st == CS_SNIFF && c->role == PROXY_DNS && now - c->last_ms > SNIFF_TIMEOUT_MS)
			conn_free(c);
		else if ((c->st == CS_SNIFF || c->st == CS_TLS_PEEK) &&
			 now - c->start_ms > SNIFF_TIMEOUT_MS)
			refuse(c, "the client never said where to");
		else if (c->st == CS_CONNECTING && now - c->last_ms > CONNECT_TIMEOUT_MS)
			refuse(c, "the destination did not answer");
		else if (c->st == CS_RELAY && now - c->last_ms > idle) {
			c->why = "idle";
			finish(c);
		}
	}
}

/*
 * True when t still belongs to something alive: handling one event can free
 * a connection whose other socket has an event later in the same batch.
 * Checked by address only — a freed connection's tag must not be read.
 */
static bool tag_alive(const struct proxy *p, const struct tag *t)
{
	if (t == &p->rtag)
		return true;
	for (size_t i = 0; i < p->nlsn; i++)
		if (t == &p->lsn[i].tag)
			return true;
	for (const struct conn *c = p->conns; c; c = c->next)
		if (t == &c->ctag || t == &c->utag)
			return true;
	return false;
}

int proxy_dispatch(struct proxy *p)
{
	struct epoll_event evs[64];
	int n = epoll_wait(p->ep, evs, 64, 0);
	for (int i = 0; i < n; i++) {
		struct tag *t = evs[i].data.ptr;
		if (!tag_alive(p, t))
			continue;
		switch (t->kind) {
		case TAG_LISTENER: {
			struct lsn *ls = t->ptr;
			if (ls->l.type == SOCK_DGRAM)
				dns_udp(p, ls->l.fd);
			else
				accept_conn(p, ls);
			break;
		}
		case TAG_CLIENT:
			client_event(t->ptr, evs[i].events);
			break;
		case TAG_UPSTREAM:
			upstream_event(t->ptr, evs[i].events);
			break;
		case TAG_RESOLVER:
			resolved(p);
			break;
		}
	}
	if (p->again) {
		/* relays that stopped for fairness with bytes still moving: no edge will come for those */
		p->again = false;
		for (struct conn *c = p->conns, *next; c; c = next) {
			next = c->next; /* pump() frees at most c itself */
			if (c->st == CS_RELAY && c->relay.again)
				pump(c);
		}
	}
	expire(p);
	return n > 0 ? n : 0;
}

int proxy_fd(const struct proxy *p)
{
	return p->ep;
}

int proxy_timeout_ms(const struct proxy *p)
{
	if (p->again)
		return 0;
	return p->conns ? 1000 : -1;
}

void proxy_stats(const struct proxy *p, struct proxy_stats *out)
{
	*out = p->stats;
}

struct proxy *proxy_new(const struct proxy_listener *l, size_t n, const struct proxy_options *opt,
			char *err, size_t errlen)
{
	struct proxy *p = calloc(1, sizeof *p);
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->opt = *opt;
	(void)accept_reserve(); /* past the fd limit a connection is refused, not left queued */
	if (!p->opt.idle_timeout_s)
		p->opt.idle_timeout_s = 300;
	p->budget = opt->max_egress_bytes;
	p->limited = opt->max_egress_bytes != 0;
	p->resolver[0] = p->resolver[1] = -1;
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	p->dns = dns_table_new(0);
	p->lsn = calloc(n ? n : 1, sizeof *p->lsn);
	if (p->ep < 0 || !p->dns || !p->lsn || pipe2(p->resolver, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(err, errlen, "cannot start the proxy: %s", strerror(errno));
		proxy_free(p);
		return NULL;
	}
	if (addr_host_addresses(&p->host_addrs, &p->nhost_addrs) != 0) {
		p->host_addrs = NULL;
		p->nhost_addrs = 0;
	}
	p->rtag = (struct tag){ .kind = TAG_RESOLVER, .ptr = p };
	watch(p, p->resolver[0], EPOLLIN, &p->rtag, true);
	for (size_t i = 0; i < n; i++) {
		p->lsn[i].l = l[i];
		p->lsn[i].tag = (struct tag){ .kind = TAG_LISTENER, .ptr = &p->lsn[i] };
		watch(p, l[i].fd, EPOLLIN, &p->lsn[i].tag, true);
	}
	p->nlsn = n;
	return p;
}

void proxy_free(struct proxy *p)
{
	if (!p)
		return;
	while (p->conns) {
		struct conn *c = p->conns;
		if (c->st == CS_RELAY)
			finish(c);
		else
			refuse(c, "the session ended");
	}
	relay_pool_clear(&p->pool);
	if (p->ep >= 0)
		close(p->ep);
	/*
	 * The write end stays open: a resolver thread still running writes its
	 * job into the pipe and the job is never read — a leak of one pipe per
	 * session, instead of a thread writing into an fd number reused since.
	 */
	if (p->resolver[0] >= 0)
		close(p->resolver[0]);
	dns_table_free(p->dns);
	free(p->host_addrs);
	free(p->lsn);
	free(p);
}
