/* proxy.c — the egress proxy's loop: accept each connection, route its events, answer DNS over UDP, end connections. */
#include "proxy/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/channel.h"
#include "proxy/accept.h"
#include "proxy/addr.h"
#include "proxy/conn.h"
#include "proxy/dns.h"

/* Ready fds taken per proxy_dispatch(); the rest wait for the next call. */
#define BATCH 64

long long conn_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *proxy_role_name(enum proxy_role role)
{
	static const char *const names[PROXY_ROLE_MAX] = {
		[PROXY_ROLE_TRANSPARENT] = "transparent",
		[PROXY_ROLE_HTTP_PROXY] = "http-proxy",
		[PROXY_ROLE_SOCKS] = "socks",
		[PROXY_ROLE_DNS] = "dns",
	};
	return (unsigned)role < PROXY_ROLE_MAX ? names[role] : "?";
}

/* ---- watching --------------------------------------------------------------------------- */

/*
 * The relay asks after every pump on a level-triggered loop: an unchanged
 * interest costs no system call.
 */
void conn_watch(struct proxy *p, int fd, unsigned interest, struct tag *t)
{
	if (t->interest == interest)
		return;
	(void)loop_mod(p->loop, fd, interest, t);
	t->interest = interest;
}

/* Starts watching a new fd. */
static void watch_new(struct proxy *p, int fd, unsigned interest, struct tag *t)
{
	(void)loop_add(p->loop, fd, interest, t);
	t->interest = interest;
}

unsigned conn_relay_interest(const struct proxy *p)
{
	return p->edge ? LOOP_READ | LOOP_WRITE | LOOP_EDGE : 0;
}

/* ---- ending a connection ---------------------------------------------------------------- */

static void report(struct conn *c, enum policy_decision d)
{
	char dst[SNIFF_HOST_MAX + 16], addr[ADDR_TEXT_MAX];
	struct proxy *p = c->p;
	if (c->pinned)
		addr_format(&c->addr, addr, sizeof addr);
	snprintf(dst, sizeof dst, strchr(c->host, ':') ? "[%s]:%u" : "%s:%u",
		 c->host[0] ? c->host : "?", c->port);
	struct proxy_event ev = {
		.destination = dst,
		.address = c->pinned ? addr : NULL,
		.via = proxy_role_name(c->role),
		.decision = d,
		.decided_by = c->by ? c->by : channel_decided_by_name(CHANNEL_BY_POLICY),
		.rule = c->v.rule,
		.why = c->why,
		.bytes_up = c->relaying ? c->relay.side[RELAY_UP].bytes : 0,
		.bytes_down = c->relaying ? c->relay.side[RELAY_DOWN].bytes : 0,
		.duration_ms = conn_now_ms() - c->start_ms,
	};
	p->stats.bytes_up += ev.bytes_up;
	p->stats.bytes_down += ev.bytes_down;
	if (p->opt.hooks.event)
		p->opt.hooks.event(p->opt.hooks.ctx, &ev);
}

void conn_free(struct conn *c)
{
	struct proxy *p = c->p;
	for (struct conn **pp = &p->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->relaying)
		relay_free(&c->relay);
	if (c->cfd >= 0) {
		loop_del(p->loop, c->cfd);
		close(c->cfd);
	}
	if (c->ufd >= 0) {
		loop_del(p->loop, c->ufd);
		close(c->ufd);
	}
	if (c->res)
		freeaddrinfo(c->res);
	free(c);
}

void conn_finish(struct conn *c)
{
	report(c, POLICY_ALLOW);
	conn_free(c);
}

void conn_drop(struct conn *c)
{
	report(c, POLICY_DENY);
	conn_free(c);
}

/*
 * Ends c without a relay, telling the client in its protocol's words: a refusal (403, SOCKS
 * "not allowed") or, refused false, a failure outside (502, SOCKS "host unreachable"); a
 * reset where no words fit.  Logs one event: deny for a refusal, allow for a failure (the
 * policy allowed it; why says what failed), then frees c.
 */
static void conn_end(struct conn *c, const char *why, bool refused)
{
	static const char forbidden[] = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
					"Connection: close\r\nContent-Length: 38\r\n\r\n"
					"airlock: this destination is refused\r\n";
	static const char bad_gateway[] = "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
					  "Connection: close\r\nContent-Length: 41\r\n\r\n"
					  "airlock: the destination cannot be reached\r\n";
	uint8_t reply[SNIFF_SOCKS_REPLY_LEN];
	if (why && !c->why)
		c->why = why;
	if (c->replied) {
		struct linger lg = { 1, 0 }; /* the tunnel was promised: a reset ends it */
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	} else if (c->role == PROXY_ROLE_HTTP_PROXY) {
		if (refused)
			(void)send(c->cfd, forbidden, sizeof forbidden - 1, MSG_NOSIGNAL);
		else
			(void)send(c->cfd, bad_gateway, sizeof bad_gateway - 1, MSG_NOSIGNAL);
	} else if (c->role == PROXY_ROLE_SOCKS && c->socks.result == SNIFF_OK) {
		size_t n = sniff_socks_reply(reply, refused ? SNIFF_SOCKS_NOT_ALLOWED
							    : SNIFF_SOCKS_HOST_UNREACHABLE);
		(void)send(c->cfd, reply, n, MSG_NOSIGNAL);
	} else {
		struct linger lg = { 1, 0 }; /* a reset: the client fails at once */
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	}
	if (refused)
		c->p->stats.refused++;
	report(c, refused ? POLICY_DENY : POLICY_ALLOW);
	conn_free(c);
}

void conn_refuse(struct conn *c, const char *why)
{
	conn_end(c, why, true);
}

void conn_fail(struct conn *c, const char *why)
{
	conn_end(c, why, false);
}

/* ---- accepting and DNS -------------------------------------------------------------------- */

/* A transparent connection: where it connected is where it goes (every address is local in the sandbox). */
static void accept_transparent(struct proxy *p, struct conn *c)
{
	struct sockaddr_storage dst;
	socklen_t dlen = sizeof dst;
	struct netaddr a;
	if (getsockname(c->cfd, (struct sockaddr *)&dst, &dlen) != 0 ||
	    netaddr_from_sockaddr((struct sockaddr *)&dst, &a) != 0) {
		conn_refuse(c, "no original destination");
		return;
	}
	c->port = dst.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&dst)->sin_port)
					   : ntohs(((struct sockaddr_in6 *)&dst)->sin6_port);
	addr_format(&a, c->host, sizeof c->host);
	if (c->port == 80 || c->port == 443) {
		watch_new(p, c->cfd, LOOP_READ, &c->ctag);
	} else {
		/* nothing to peek at: decide on the address now, and watch as a relay will */
		watch_new(p, c->cfd, conn_relay_interest(p), &c->ctag);
		conn_decide(c);
	}
}

static void accept_conn(struct proxy *p, struct lsn *ls)
{
	for (;;) {
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
				    .ufd = -1, .start_ms = conn_now_ms() };
		c->last_ms = c->start_ms;
		c->ctag = (struct tag){ .kind = TAG_CLIENT, .ptr = c };
		c->utag = (struct tag){ .kind = TAG_UPSTREAM, .ptr = c };
		c->v.rule = -1;
		sniff_socks_init(&c->socks);
		c->next = p->conns;
		p->conns = c;
		p->stats.connections++;
		if (c->role != PROXY_ROLE_TRANSPARENT)
			watch_new(p, fd, LOOP_READ, &c->ctag);
		else
			accept_transparent(p, c);
	}
}

/* Tells the DNS hook about an answer with an address. */
static void dns_told(struct proxy *p, const struct dns_query_info *info)
{
	char a[INET_ADDRSTRLEN];
	uint32_t be = htonl(info->ipv4);
	if (!p->opt.hooks.dns || !info->qname[0] || !info->has_addr)
		return;
	inet_ntop(AF_INET, &be, a, sizeof a);
	p->opt.hooks.dns(p->opt.hooks.ctx, info->qname, a);
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
		dns_told(p, &info);
		/* reply from the address the query went to: the control data carries it back */
		struct iovec oiov = { out, (size_t)len };
		struct msghdr om = { .msg_name = &from, .msg_namelen = mh.msg_namelen, .msg_iov = &oiov,
				     .msg_iovlen = 1, .msg_control = mh.msg_controllen ? ctl.space : NULL,
				     .msg_controllen = mh.msg_controllen };
		(void)sendmsg(fd, &om, MSG_NOSIGNAL);
	}
}

/* ---- the loop ------------------------------------------------------------------------------------ */

static void client_event(struct conn *c, unsigned ev)
{
	if ((c->st == CS_SNIFF || c->st == CS_TLS_PEEK) && (ev & (LOOP_READ | LOOP_ERROR)))
		conn_readable(c);
	else if (c->st == CS_RELAY)
		conn_pump(c);
}

static void upstream_event(struct conn *c, unsigned ev)
{
	if (c->st == CS_CONNECTING)
		conn_upstream_ready(c, ev);
	else if (c->st == CS_RELAY)
		conn_pump(c);
}

static void expire(struct proxy *p)
{
	long long now = conn_now_ms(), idle = (long long)p->opt.idle_timeout_s * 1000;
	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if (c->st == CS_SNIFF && c->role == PROXY_ROLE_DNS &&
		    now - c->last_ms > SNIFF_TIMEOUT_MS)
			conn_free(c);
		else if ((c->st == CS_SNIFF || c->st == CS_TLS_PEEK) &&
			 now - c->start_ms > SNIFF_TIMEOUT_MS)
			conn_refuse(c, "the client never said where to");
		else if (c->st == CS_CONNECTING && now - c->last_ms > CONNECT_TIMEOUT_MS)
			conn_refuse(c, "the destination did not answer");
		else if (c->st == CS_RELAY && now - c->last_ms > idle) {
			c->why = "idle";
			conn_finish(c);
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

static void handle(struct proxy *p, struct tag *t, unsigned ev)
{
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
		client_event(t->ptr, ev);
		break;
	case TAG_UPSTREAM:
		upstream_event(t->ptr, ev);
		break;
	case TAG_RESOLVER:
		conn_resolved(p);
		break;
	}
}

int proxy_dispatch(struct proxy *p)
{
	struct loop_event evs[BATCH];
	int n = loop_wait(p->loop, evs, BATCH, 0);
	for (int i = 0; i < n; i++)
		if (tag_alive(p, evs[i].ptr))
			handle(p, evs[i].ptr, evs[i].events);
	if (p->again) {
		/* relays that stopped for fairness with bytes still moving: no edge will come for those */
		p->again = false;
		for (struct conn *c = p->conns, *next; c; c = next) {
			next = c->next; /* conn_pump() frees at most c itself */
			if (c->st == CS_RELAY && c->relay.again)
				conn_pump(c);
		}
	}
	expire(p);
	loop_idle(p->loop);
	return n > 0 ? n : 0;
}

int proxy_fd(const struct proxy *p)
{
	return loop_fd(p->loop);
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

/* ---- starting and stopping ------------------------------------------------------------------------ */

/* The loop, the DNS table, the resolver's pipe, this host's addresses.  0 or -errno. */
static int proxy_start(struct proxy *p, size_t n)
{
	p->resolver[0] = p->resolver[1] = -1;
	p->loop = loop_new();
	p->dns = dns_table_new(0);
	p->lsn = calloc(n ? n : 1, sizeof *p->lsn);
	if (!p->loop || !p->dns || !p->lsn || pipe2(p->resolver, O_CLOEXEC | O_NONBLOCK) != 0)
		return -(errno ? errno : ENOMEM);
	int fd = loop_fd(p->loop); /* a backend that needs a helper for it starts it now, or fails */
	if (fd < 0)
		return fd;
	p->edge = loop_has_edge(p->loop);
	if (addr_host_addresses(&p->host_addrs, &p->nhost_addrs) != 0) {
		p->host_addrs = NULL;
		p->nhost_addrs = 0;
	}
	return 0;
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
	int e = proxy_start(p, n);
	if (e < 0) {
		snprintf(err, errlen, "cannot start the proxy: %s", strerror(-e));
		proxy_free(p);
		return NULL;
	}
	p->rtag = (struct tag){ .kind = TAG_RESOLVER, .ptr = p };
	watch_new(p, p->resolver[0], LOOP_READ, &p->rtag);
	for (size_t i = 0; i < n; i++) {
		p->lsn[i].l = l[i];
		p->lsn[i].tag = (struct tag){ .kind = TAG_LISTENER, .ptr = &p->lsn[i] };
		watch_new(p, l[i].fd, LOOP_READ, &p->lsn[i].tag);
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
			conn_finish(c);
		else
			conn_refuse(c, "the session ended");
	}
	relay_pool_clear(&p->pool);
	loop_free(p->loop); /* the listeners stay the caller's, open */
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
