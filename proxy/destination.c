/* destination.c — the egress proxy learns where each connection goes (first bytes, SNI, Host) and decides it by the policy. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/addr.h"
#include "proxy/conn.h"
#include "proxy/dns.h"

/* ---- deciding ----------------------------------------------------------------------------- */

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
	if (c->port != 443 || c->role == PROXY_ROLE_TRANSPARENT || c->replied || c->prefix_len > 0)
		return false;
	bool ok = c->role == PROXY_ROLE_HTTP_PROXY
			  ? conn_send_all(c->cfd, established, sizeof established - 1)
			  : conn_send_all(c->cfd, reply, sniff_socks_reply(reply, SNIFF_SOCKS_SUCCEEDED));
	c->replied = true;
	if (!ok) {
		conn_refuse(c, "the client went away");
		return true;
	}
	c->tls_start = c->forward_from;
	c->st = CS_TLS_PEEK;
	conn_watch(c->p, c->cfd, LOOP_READ, &c->ctag);
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
		conn_refuse(c, "the TLS server name does not match the destination");
		return;
	}
	if (r != SNIFF_OK && r != SNIFF_NONE) {
		conn_refuse(c, "not a TLS ClientHello on port 443");
		return;
	}
	c->st = CS_SNIFF; /* until connected: no more reading (conn_connect moves on at once) */
	conn_watch(c->p, c->cfd, conn_relay_interest(c->p), &c->ctag);
	conn_connect(c);
}

static void go(struct conn *c)
{
	if (c->p->limited && c->p->budget == 0) {
		c->v.rule = -1; /* the budget refuses it, not the rule that allowed it */
		conn_refuse(c, "the session's egress budget (limits.max_egress_bytes) is spent");
		return;
	}
	if (tls_gate(c))
		return;
	/*
	 * Watched as a relay from now on: with edges, what the client sends
	 * while its destination is resolved and connected raises no event over
	 * and over; start_relay() moves it.
	 */
	conn_watch(c->p, c->cfd, conn_relay_interest(c->p), &c->ctag);
	conn_connect(c);
}

static void answered(void *arg, enum policy_decision d, const char *by)
{
	struct conn *c = arg;
	c->by = by;
	if (d == POLICY_ALLOW)
		go(c);
	else
		conn_refuse(c, NULL);
}

/* An address literal in any spelling becomes its canonical text, a fake one its name.  False: refused. */
static bool canonical_host(struct conn *c)
{
	c->is_addr = addr_parse(c->host, strlen(c->host), &c->addr) == 0;
	if (c->is_addr && c->addr.family == 4) {
		uint32_t v4;
		memcpy(&v4, c->addr.bytes, 4);
		const char *name = dns_table_name_of(c->p->dns, ntohl(v4));
		if (name) {
			snprintf(c->host, sizeof c->host, "%s", name);
			c->is_addr = false;
		} else if (dns_is_fake(ntohl(v4))) {
			conn_refuse(c, "an address the sandbox's DNS never gave out");
			return false;
		}
	}
	if (c->is_addr)
		addr_format(&c->addr, c->host, sizeof c->host);
	return true;
}

/*
 * A transparent connection whose TLS server name or Host header (c->expect)
 * is not the destination as canonical_host() left it.  To a real address
 * with a name: the name decides (c->host), pinned to the address
 * (upstream.c connects only when the proxy's own resolution of the name
 * gives it).  A name against a fake address is someone else's name; an
 * address literal in SNI/Host must be the same address.  False: refused.
 */
static bool expected_name(struct conn *c)
{
	struct netaddr named;
	bool literal = addr_parse(c->expect, strlen(c->expect), &named) == 0;
	if (literal && c->is_addr && named.family == c->addr.family &&
	    memcmp(named.bytes, c->addr.bytes, named.family == 4 ? 4 : 16) == 0)
		return true;
	if (literal || !c->is_addr || c->role != PROXY_ROLE_TRANSPARENT) {
		conn_refuse(c, "the TLS server name or Host header does not match the destination");
		return false;
	}
	snprintf(c->host, sizeof c->host, "%s", c->expect);
	c->is_addr = false;
	c->pinned = true;
	return true;
}

void conn_decide(struct conn *c)
{
	struct proxy *p = c->p;
	if (!canonical_host(c))
		return;
	if (c->expect[0] && strcmp(c->expect, c->host) != 0 && !expected_name(c))
		return;
	if (c->port == 0 || c->port > 65535) {
		conn_refuse(c, "bad port");
		return;
	}
	c->v = policy_decide_connect(p->opt.img, c->host, c->port);
	switch (c->v.decision) {
	case POLICY_ALLOW:
		go(c);
		return;
	case POLICY_ASK:
		c->st = CS_ASKING;
		conn_watch(p, c->cfd, 0, &c->ctag);
		if (!p->opt.hooks.ask || p->opt.hooks.ask(p->opt.hooks.ctx, c->host, c->port, c->v.rule,
							 answered, c) != 0)
			conn_refuse(c, "nobody to ask");
		return;
	default:
		conn_refuse(c, NULL);
	}
}

/* ---- learning the destination ----------------------------------------------------------------- */

/*
 * A transparent connection: where the client connected, mapped back to a
 * name, checked against SNI/Host; a real address with a name in SNI/Host is
 * decided by that name (expected_name()).
 */
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
			conn_refuse(c, "not a TLS ClientHello on port 443");
			return;
		}
	} else if (c->port == 80) {
		struct sniff_http h;
		enum sniff_result r = sniff_http((const char *)c->buf, c->len, &h);
		if (r == SNIFF_NEED_MORE)
			return;
		if (r != SNIFF_OK || h.kind != SNIFF_HTTP_ORIGIN) {
			conn_refuse(c, "not an HTTP request on port 80");
			return;
		}
		snprintf(c->expect, sizeof c->expect, "%s", h.host);
	}
	c->forward_from = 0;
	conn_decide(c);
}

static void sniff_http_proxy(struct conn *c)
{
	struct sniff_http h;
	enum sniff_result r = sniff_http((const char *)c->buf, c->len, &h);
	if (r == SNIFF_NEED_MORE)
		return;
	if (r != SNIFF_OK || h.kind == SNIFF_HTTP_ORIGIN) {
		conn_refuse(c, r == SNIFF_OK ? "not a proxy request" : "malformed HTTP request");
		return;
	}
	if (!h.host_match) {
		conn_refuse(c, "the Host header does not match the request target");
		return;
	}
	snprintf(c->host, sizeof c->host, "%s", h.host);
	c->port = h.port;
	if (h.kind == SNIFF_HTTP_CONNECT) {
		c->forward_from = h.head_len;
	} else {
		c->prefix_len = sniff_http_rewrite((const char *)c->buf, &h, c->prefix, sizeof c->prefix);
		if (c->prefix_len < 0) {
			conn_refuse(c, "cannot rewrite the request");
			return;
		}
		c->forward_from = h.line_len;
	}
	conn_decide(c);
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
		conn_refuse(c, "malformed SOCKS5 request");
		return;
	}
	snprintf(c->host, sizeof c->host, "%s", c->socks.host);
	c->port = c->socks.port;
	c->forward_from = c->socks.consumed;
	conn_decide(c);
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
		if (n > 0 && !conn_send_all(c->cfd, out, (size_t)n)) {
			conn_free(c);
			return;
		}
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
}

void conn_readable(struct conn *c)
{
	if (c->len == sizeof c->buf) {
		conn_refuse(c, "request too large");
		return;
	}
	ssize_t n = recv(c->cfd, c->buf + c->len, sizeof c->buf - c->len, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		if (c->role != PROXY_ROLE_DNS) {
			c->why = "the client went away before saying where to";
			conn_drop(c);
		} else {
			conn_free(c);
		}
		return;
	}
	if (n < 0)
		return;
	c->len += (size_t)n;
	c->last_ms = conn_now_ms();
	if (c->st == CS_TLS_PEEK) {
		peek_tls(c);
		return;
	}
	switch (c->role) {
	case PROXY_ROLE_DNS:
		dns_tcp(c);
		break;
	case PROXY_ROLE_HTTP_PROXY:
		sniff_http_proxy(c);
		break;
	case PROXY_ROLE_SOCKS:
		sniff_socks_proxy(c);
		break;
	default:
		sniff_transparent(c);
	}
}
