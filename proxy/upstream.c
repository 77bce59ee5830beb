/* upstream.c — the egress proxy's way out: resolve on a thread, refuse restricted addresses, connect, then relay. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/addr.h"
#include "proxy/conn.h"

/* A name resolution on its own thread: the connection may be gone when it ends. */
struct job {
	uint64_t conn_id;
	char host[SNIFF_HOST_MAX];
	char port[8];
	struct addrinfo *res;
	int rc;
	int wfd;
};

/* ---- which addresses ------------------------------------------------------------------------ */

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
	if (netaddr_from_sockaddr(sa, &a) != 0)
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

/* ---- connecting ------------------------------------------------------------------------- */

static void connect_next(struct conn *c)
{
	struct proxy *p = c->p;
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
			/* LOOP_WRITE: connected; with edges, watched as the relay will be */
			c->utag.interest = p->edge ? conn_relay_interest(p) : LOOP_WRITE;
			(void)loop_add(p->loop, c->ufd, c->utag.interest, &c->utag);
			return;
		}
		close(c->ufd);
		c->ufd = -1;
	}
	if (c->why) /* address_allowed() refused every address: the policy's refusal */
		conn_refuse(c, c->why);
	else
		conn_fail(c, "cannot connect to the destination");
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
		conn_refuse(c, "out of memory");
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
		conn_fail(c, "cannot resolve the name now");
		return;
	}
	c->st = CS_RESOLVING;
}

static void connect_literal(struct conn *c);

/* True when the address a is among res's. */
static bool among(const struct netaddr *a, const struct addrinfo *res)
{
	for (; res; res = res->ai_next) {
		struct netaddr b;
		if (netaddr_from_sockaddr(res->ai_addr, &b) == 0 && b.family == a->family &&
		    memcmp(a->bytes, b.bytes, a->family == 4 ? 4 : 16) == 0)
			return true;
	}
	return false;
}

/*
 * A pinned connection (conn.h): the name decided it, the proxy's own
 * resolution of the name (rc, res: getaddrinfo's) must give the address the
 * agent connected to, and only that address is connected.  Otherwise the
 * agent's claim is refused, saying so: a name that does not resolve here,
 * or resolves elsewhere, cannot vouch for the address.
 */
static void connect_pinned(struct conn *c, int rc, const struct addrinfo *res)
{
	char addr[ADDR_TEXT_MAX], got[3 * (ADDR_TEXT_MAX + 2) + 8];
	size_t n = 0;
	addr_format(&c->addr, addr, sizeof addr);
	if (rc == 0 && among(&c->addr, res)) {
		connect_literal(c);
		return;
	}
	/* the first three addresses the name does resolve to, for the log */
	got[0] = '\0';
	for (const struct addrinfo *ai = rc == 0 ? res : NULL; ai; ai = ai->ai_next) {
		struct netaddr b;
		char t[ADDR_TEXT_MAX];
		if (netaddr_from_sockaddr(ai->ai_addr, &b) != 0 || addr_format(&b, t, sizeof t) < 0 ||
		    strstr(got, t))
			continue;
		size_t used = strlen(got);
		snprintf(got + used, sizeof got - used, "%s%s", used ? ", " : "", n < 3 ? t : "...");
		if (++n > 3)
			break;
	}
	if (rc != 0)
		snprintf(c->why_buf, sizeof c->why_buf,
			 "%s (the TLS server name or Host header) does not resolve for the proxy, "
			 "so it cannot vouch for %s, where the connection went",
			 c->host, addr);
	else
		snprintf(c->why_buf, sizeof c->why_buf,
			 "%s (the TLS server name or Host header) does not resolve to %s, where the "
			 "connection went (the proxy's resolution: %s)",
			 c->host, addr, got);
	conn_refuse(c, c->why_buf);
}

void conn_resolved(struct proxy *p)
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
		if (c->pinned)
			connect_pinned(c, rc, c->res);
		else if (rc != 0)
			conn_fail(c, "the name does not resolve");
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
		conn_refuse(c, "out of memory");
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

void conn_connect(struct conn *c)
{
	if (c->is_addr)
		connect_literal(c);
	else
		resolve(c);
}

/* ---- relaying ------------------------------------------------------------------------------- */

bool conn_send_all(int fd, const void *buf, size_t len)
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

/* What the client sent before the relay (and the proxy protocol's reply to it): sent now.  False: failed. */
static bool send_early(struct conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint8_t reply[SNIFF_SOCKS_REPLY_LEN];
	bool ok = true;
	if (c->replied)
		;
	else if (c->role == PROXY_ROLE_HTTP_PROXY && c->prefix_len == 0)
		ok = conn_send_all(c->cfd, established, sizeof established - 1);
	else if (c->role == PROXY_ROLE_SOCKS)
		ok = conn_send_all(c->cfd, reply, sniff_socks_reply(reply, SNIFF_SOCKS_SUCCEEDED));
	if (ok && c->prefix_len > 0)
		ok = conn_send_all(c->ufd, c->prefix, (size_t)c->prefix_len);
	if (ok && c->len > c->forward_from)
		ok = conn_send_all(c->ufd, c->buf + c->forward_from, c->len - c->forward_from);
	return ok;
}

/* Connected: tell the client, send what it already sent, then relay. */
static void start_relay(struct conn *c)
{
	struct proxy *p = c->p;
	uint64_t early = (uint64_t)(c->prefix_len > 0 ? c->prefix_len : 0) + (c->len - c->forward_from);
	if (p->limited && early > p->budget) {
		/* not even what it already sent fits in what is left */
		p->budget = 0;
		conn_refuse(c, "the session's egress budget (limits.max_egress_bytes) is spent");
		return;
	}
	if (p->limited)
		p->budget -= early;
	if (!send_early(c) ||
	    relay_init(&c->relay, c->cfd, c->ufd, p->limited ? &p->budget : NULL, &p->pool) != 0) {
		c->why = "the connection failed while starting";
		conn_finish(c);
		return;
	}
	c->relaying = true;
	c->relay.side[RELAY_UP].bytes += early; /* what went up before the relay counts too */
	c->st = CS_RELAY;
	conn_watch(p, c->cfd, conn_relay_interest(p), &c->ctag);
	/* what arrived while connecting raised edges nobody took: move it now */
	conn_pump(c);
}

/*
 * The connect ended.  A pending socket error always shows as LOOP_ERROR, so
 * without it the connect succeeded and getsockopt(SO_ERROR) would say 0:
 * only the other case asks.
 */
void conn_upstream_ready(struct conn *c, unsigned ev)
{
	int e = 0;
	socklen_t el = sizeof e;
	if (!(ev & (LOOP_WRITE | LOOP_ERROR)))
		return; /* still connecting */
	if ((ev & LOOP_ERROR) &&
	    (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e != 0 || !(ev & LOOP_WRITE))) {
		loop_del(c->p->loop, c->ufd);
		close(c->ufd);
		c->ufd = -1;
		if (c->next_ai) {
			connect_next(c);
			return;
		}
		conn_fail(c, "the destination refused the connection");
		return;
	}
	start_relay(c);
}

void conn_pump(struct conn *c)
{
	enum relay_state s = relay_pump(&c->relay);
	c->last_ms = conn_now_ms();
	if (s == RELAY_RUNNING) {
		c->p->again |= c->relay.again;
		if (!c->p->edge) {
			/* level-triggered: watch for exactly what the relay waits for, or be told again */
			conn_watch(c->p, c->cfd, relay_want(&c->relay, c->cfd), &c->ctag);
			conn_watch(c->p, c->ufd, relay_want(&c->relay, c->ufd), &c->utag);
		}
		return;
	}
	if (s == RELAY_OVER_BUDGET)
		c->why = "the session's egress budget (limits.max_egress_bytes) is spent";
	else if (s == RELAY_FAILED)
		c->why = strerror(c->relay.error);
	conn_finish(c);
}
