/* sniff_socks.c — the egress proxy speaks SOCKS5 (RFC 1928), "no authentication" and CONNECT only: the destination, the replies. */
#include "proxy/sniff.h"

#include <arpa/inet.h>
#include <string.h>

#include "proxy/sniff_name.h"

void sniff_socks_init(struct sniff_socks *s)
{
	memset(s, 0, sizeof *s);
	s->state = SNIFF_SOCKS_GREETING;
}

size_t sniff_socks_reply(uint8_t out[SNIFF_SOCKS_REPLY_LEN], enum sniff_socks_rep rep)
{
	memset(out, 0, SNIFF_SOCKS_REPLY_LEN);
	out[0] = 5;
	out[1] = (uint8_t)rep;
	out[3] = SNIFF_SOCKS_ATYP_IPV4;
	return SNIFF_SOCKS_REPLY_LEN;
}

static void socks_say(struct sniff_socks *s, const uint8_t *bytes, size_t n)
{
	memcpy(s->reply + s->reply_len, bytes, n);
	s->reply_len += n;
}

static enum sniff_result socks_end(struct sniff_socks *s, enum sniff_result r, const char *why)
{
	s->state = SNIFF_SOCKS_DONE;
	s->result = r;
	s->reason = why;
	return r;
}

/* Refuses a request with reply code rep (RFC 1928 §6). */
static enum sniff_result socks_refuse(struct sniff_socks *s, enum sniff_socks_rep rep,
				      const char *why)
{
	uint8_t r[SNIFF_SOCKS_REPLY_LEN];
	socks_say(s, r, sniff_socks_reply(r, rep));
	return socks_end(s, SNIFF_BAD, why);
}

/* VER NMETHODS METHODS (RFC 1928 §3). */
static enum sniff_result socks_greeting(struct sniff_socks *s, const uint8_t *buf, size_t len)
{
	static const uint8_t none[2] = { 5, 0x00 }, refused[2] = { 5, 0xff };
	if (len < 1)
		return SNIFF_NEED_MORE;
	if (buf[0] != 5)
		return socks_end(s, SNIFF_BAD,
				 buf[0] == 4 ? "SOCKS4 is not supported (use SOCKS5)" :
					       "not SOCKS version 5");
	if (len < 2)
		return SNIFF_NEED_MORE;
	size_t n = buf[1];
	if (n == 0) {
		socks_say(s, refused, 2);
		return socks_end(s, SNIFF_BAD, "SOCKS5 greeting offers no method");
	}
	if (len < 2 + n)
		return SNIFF_NEED_MORE;
	if (!memchr(buf + 2, 0x00, n)) {
		socks_say(s, refused, 2);
		return socks_end(s, SNIFF_BAD,
				 "SOCKS5 client requires authentication (only 'no authentication' "
				 "is supported)");
	}
	socks_say(s, none, 2);
	s->consumed = 2 + n;
	s->state = SNIFF_SOCKS_REQUEST;
	return SNIFF_NEED_MORE;
}

/* DST.ADDR of an IPv4 or IPv6 request, as a netaddr and in text. */
static void socks_addr(struct sniff_socks *s, const uint8_t *a)
{
	if (s->atyp == SNIFF_SOCKS_ATYP_IPV6) {
		netaddr_from_ipv6(a, &s->addr);
	} else {
		memset(&s->addr, 0, sizeof s->addr);
		s->addr.family = 4;
		memcpy(s->addr.bytes, a, 4);
	}
	inet_ntop(s->addr.family == 4 ? AF_INET : AF_INET6, s->addr.bytes, s->host, sizeof s->host);
}

/* VER CMD RSV ATYP DST.ADDR DST.PORT (RFC 1928 §4, §5). */
static enum sniff_result socks_request(struct sniff_socks *s, const uint8_t *p, size_t n)
{
	if (n < 1)
		return SNIFF_NEED_MORE;
	if (p[0] != 5)
		return socks_refuse(s, SNIFF_SOCKS_GENERAL_FAILURE, "request is not SOCKS version 5");
	if (n < 2)
		return SNIFF_NEED_MORE;
	if (p[1] != 1)
		return socks_refuse(s, SNIFF_SOCKS_CMD_UNSUPPORTED,
				    p[1] == 2 ? "SOCKS5 BIND is not supported" :
				    p[1] == 3 ? "SOCKS5 UDP ASSOCIATE is not supported" :
						"unknown SOCKS5 command");
	if (n < 3)
		return SNIFF_NEED_MORE;
	if (p[2] != 0)
		return socks_refuse(s, SNIFF_SOCKS_GENERAL_FAILURE, "nonzero reserved byte");
	if (n < 4)
		return SNIFF_NEED_MORE;
	s->atyp = p[3];
	size_t alen;
	if (s->atyp == SNIFF_SOCKS_ATYP_IPV4)
		alen = 4;
	else if (s->atyp == SNIFF_SOCKS_ATYP_IPV6)
		alen = 16;
	else if (s->atyp != SNIFF_SOCKS_ATYP_DOMAIN)
		return socks_refuse(s, SNIFF_SOCKS_ATYP_UNSUPPORTED, "unknown SOCKS5 address type");
	else if (n < 5)
		return SNIFF_NEED_MORE;
	else if (p[4] == 0)
		return socks_refuse(s, SNIFF_SOCKS_GENERAL_FAILURE, "empty domain name");
	else
		alen = 1 + (size_t)p[4];
	size_t total = 4 + alen + 2;
	if (n < total)
		return SNIFF_NEED_MORE;
	s->port = (uint16_t)(p[total - 2] << 8 | p[total - 1]);
	if (s->port == 0)
		return socks_refuse(s, SNIFF_SOCKS_GENERAL_FAILURE, "destination port 0");
	if (s->atyp == SNIFF_SOCKS_ATYP_DOMAIN) {
		const char *why = sniff_copy_name((const char *)p + 5, p[4], s->host);
		if (why)
			return socks_refuse(s, SNIFF_SOCKS_GENERAL_FAILURE, why);
	} else {
		socks_addr(s, p + 4);
	}
	s->consumed += total;
	return socks_end(s, SNIFF_OK, NULL);
}

enum sniff_result sniff_socks(struct sniff_socks *s, const uint8_t *buf, size_t len)
{
	enum sniff_result r = SNIFF_NEED_MORE;
	s->reply_len = 0;
	if (s->state == SNIFF_SOCKS_DONE)
		return s->result;
	if (s->state == SNIFF_SOCKS_GREETING)
		r = socks_greeting(s, buf, len);
	if (s->state == SNIFF_SOCKS_REQUEST && len >= s->consumed)
		r = socks_request(s, buf + s->consumed, len - s->consumed);
	return r;
}
