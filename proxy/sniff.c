/* sniff.c — bounded, allocation-free parsers of HTTP request heads, SOCKS5 negotiation and TLS ClientHello SNI for the egress proxy. */
#include "proxy/sniff.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

const char *sniff_result_name(enum sniff_result r)
{
	static const char *const names[SNIFF_RESULT_MAX] = {
		[SNIFF_NEED_MORE] = "need-more", [SNIFF_OK] = "ok",
		[SNIFF_NONE] = "none",           [SNIFF_BAD] = "bad",
		[SNIFF_TOO_LARGE] = "too-large",
	};
	return (unsigned)r < SNIFF_RESULT_MAX ? names[r] : "?";
}

/* ---- names shared by the three parsers ------------------------------------------- */

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.';
}

/*
 * Copies a host name (letters, digits, '-', '_', '.'; labels of 1..63, at
 * most 253 characters once one trailing '.' is dropped) lower-cased into
 * out.  Numeric spellings of addresses ("0x7f.1") pass: addr_parse() sorts
 * them out.  Returns NULL or why the name is bad.
 */
static const char *copy_name(const char *s, size_t n, char out[SNIFF_HOST_MAX])
{
	if (n > 1 && s[n - 1] == '.')
		n--;
	if (n == 0)
		return "empty host name";
	if (n > 253)
		return "host name longer than 253 characters";
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		if (!name_char(s[i]))
			return "bad character in host name";
		if (s[i] != '.') {
			if (++label > 63)
				return "host name label longer than 63 characters";
		} else if (label == 0) {
			return "empty label in host name";
		} else {
			label = 0;
		}
		out[i] = lower(s[i]);
	}
	if (label == 0)
		return "empty label in host name";
	out[n] = '\0';
	return NULL;
}

/* Copies the inside of "[...]": an IPv6 literal (no zone id), lower-cased. */
static const char *copy_v6(const char *s, size_t n, char out[SNIFF_HOST_MAX])
{
	struct netaddr a;
	if (n == 0 || n >= SNIFF_HOST_MAX || !memchr(s, ':', n))
		return "bad IPv6 literal in '[...]'";
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
		      c == ':' || c == '.'))
			return "bad IPv6 literal in '[...]'";
		out[i] = lower(c);
	}
	out[n] = '\0';
	if (netaddr_parse(out, n, &a) != 0)
		return "bad IPv6 literal in '[...]'";
	return NULL;
}

/* ---- HTTP ------------------------------------------------------------------------ */

/* A host and port named by a request target or a Host field. */
struct dest {
	char host[SNIFF_HOST_MAX];
	uint16_t port;
	bool port_explicit;
};

static enum sniff_result http_bad(struct sniff_http *out, const char *why)
{
	out->reason = why;
	return SNIFF_BAD;
}

/* RFC 9110 §5.6.2 tchar. */
static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool ieq(const char *s, size_t n, const char *lit)
{
	if (strlen(lit) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(s[i]) != lit[i])
			return false;
	return true;
}

static const char *parse_port(const char *s, size_t n, uint16_t *port)
{
	unsigned v = 0;
	if (n == 0)
		return "empty port";
	if (n > 5)
		return "bad port";
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return "bad port";
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return "port out of range 1-65535";
	*port = (uint16_t)v;
	return NULL;
}

/* host[:port] or [v6][:port] (RFC 3986 §3.2.2, without userinfo or zone ids).  dflt 0: port required. */
static const char *parse_authority(const char *s, size_t n, uint16_t dflt, struct dest *d)
{
	const char *colon, *why;
	memset(d, 0, sizeof *d);
	if (n && s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (!close)
			return "unterminated '[' in authority";
		if ((why = copy_v6(s + 1, (size_t)(close - s - 1), d->host)))
			return why;
		colon = close + 1;
		if (colon == s + n)
			colon = NULL;
		else if (*colon != ':')
			return "text after ']' in authority";
	} else {
		colon = memchr(s, ':', n);
		if ((why = copy_name(s, colon ? (size_t)(colon - s) : n, d->host)))
			return why;
	}
	if (!colon) {
		d->port = dflt;
		return dflt ? NULL : "CONNECT target without a port";
	}
	d->port_explicit = true;
	return parse_port(colon + 1, (size_t)(s + n - colon - 1), &d->port);
}

/*
 * Finds the first CRLF (*eol: index of its CR) and the end of the head
 * (*head: index after CRLF CRLF) in buf[0 .. n).  Every LF must follow a CR
 * and every CR precede an LF (RFC 9112 §2.2: bare CR is refused; a bare LF
 * is refused too, so that we and the origin server split lines alike).
 */
static const char *scan_head(const char *buf, size_t n, size_t *eol, size_t *head)
{
	*eol = SIZE_MAX;
	*head = 0;
	for (size_t i = 0; i < n; i++) {
		char c = buf[i];
		if (c == '\0')
			return "NUL byte in request head";
		if (c == '\n') {
			if (i == 0 || buf[i - 1] != '\r')
				return "line not ended by CRLF";
			if (*eol == SIZE_MAX)
				*eol = i - 1;
			if (i >= 3 && buf[i - 2] == '\n') {
				*head = i + 1;
				return NULL;
			}
		} else if (i > 0 && buf[i - 1] == '\r') {
			return "bare CR in request head";
		}
	}
	return NULL;
}

/* The method's bytes seen so far must be tchars: TLS or SOCKS sent to an HTTP port fails at once. */
static const char *check_method(const char *buf, size_t n)
{
	if (n > 0 && buf[0] == ' ')
		return "empty method";
	for (size_t i = 0; i < n && buf[i] != ' '; i++)
		if (!is_tchar((unsigned char)buf[i]))
			return "method is not a token";
	return NULL;
}

static const char *parse_absolute(const char *buf, struct sniff_http *out, struct dest *d)
{
	const char *tg = buf + out->target_off;
	size_t tn = out->target_len, i = 0;
	while (i < tn && tg[i] != ':')
		i++;
	if (i == tn || tn - i < 3 || tg[i + 1] != '/' || tg[i + 2] != '/')
		return "request target is neither origin-form nor an absolute http:// URI";
	if (ieq(tg, i, "https"))
		return "https:// URI sent to the proxy (the proxy does not speak TLS: use CONNECT)";
	if (!ieq(tg, i, "http"))
		return "unsupported URI scheme (only http:// and CONNECT)";
	size_t a = i + 3, e = a;
	while (e < tn && tg[e] != '/' && tg[e] != '?')
		e++;
	if (memchr(tg + a, '@', e - a))
		return "userinfo in URI";
	out->kind = SNIFF_HTTP_ABSOLUTE;
	out->authority_off = out->target_off + a;
	out->authority_len = e - a;
	out->path_off = out->target_off + e;
	out->path_len = tn - e;
	return parse_authority(tg + a, e - a, 80, d);
}

/* Sorts the request target into the three forms a proxy takes (RFC 9112 §3.2). */
static const char *classify_target(const char *buf, struct sniff_http *out, struct dest *d)
{
	const char *tg = buf + out->target_off;
	size_t tn = out->target_len;
	if (memchr(tg, '#', tn))
		return "fragment in request target";
	if (out->method_len == 7 && memcmp(buf, "CONNECT", 7) == 0) {
		out->kind = SNIFF_HTTP_CONNECT;
		out->authority_off = out->target_off;
		out->authority_len = tn;
		return parse_authority(tg, tn, 0, d);
	}
	out->kind = SNIFF_HTTP_ORIGIN;
	if (tg[0] == '/')
		return NULL;
	if (tn == 1 && tg[0] == '*')
		return out->method_len == 7 && memcmp(buf, "OPTIONS", 7) == 0 ?
			       NULL :
			       "'*' request target outside OPTIONS";
	return parse_absolute(buf, out, d);
}

/* method SP request-target SP HTTP/1.x, the line being buf[0 .. eol) (RFC 9112 §3). */
static const char *parse_request_line(const char *buf, size_t eol, struct sniff_http *out,
				      struct dest *d)
{
	size_t i = 0;
	while (i < eol && buf[i] != ' ')
		i++;
	if (i == 0)
		return "empty method";
	if (i == eol)
		return "request line without target";
	out->method_len = i;
	size_t t = ++i;
	for (; i < eol && buf[i] != ' '; i++)
		if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f)
			return "bad byte in request target";
	if (i == t)
		return "empty request target";
	if (i == eol)
		return "request line without HTTP version";
	out->target_off = t;
	out->target_len = i - t;
	const char *v = buf + i + 1;
	if (eol - i - 1 != 8 || memcmp(v, "HTTP/1.", 7) != 0 || v[7] < '0' || v[7] > '9')
		return "not an HTTP/1.x request line";
	out->version_minor = (unsigned)(v[7] - '0');
	out->line_len = eol + 2;
	return classify_target(buf, out, d);
}

/* What the header fields said, beyond *out. */
struct fields {
	struct dest host;
	bool has_cl, has_te;
};

static const char *field_content_length(const char *v, size_t n, struct sniff_http *out,
					struct fields *f)
{
	uint64_t x = 0;
	if (f->has_cl)
		return "duplicate Content-Length";
	if (n == 0 || n > 18)
		return "bad Content-Length";
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return "bad Content-Length";
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	f->has_cl = true;
	out->content_length = x;
	return NULL;
}

static const char *field_transfer_encoding(const char *v, size_t n, struct sniff_http *out,
					   struct fields *f)
{
	if (f->has_te)
		return "duplicate Transfer-Encoding";
	if (out->version_minor == 0)
		return "Transfer-Encoding in an HTTP/1.0 request"; /* RFC 9112 §6.1 */
	if (!ieq(v, n, "chunked"))
		return "unsupported Transfer-Encoding (only chunked)";
	f->has_te = true;
	return NULL;
}

static const char *field_host(const char *v, size_t n, struct sniff_http *out, struct fields *f)
{
	if (out->has_host)
		return "duplicate Host header"; /* RFC 9112 §3.2 */
	out->has_host = true;
	uint16_t dflt = out->kind == SNIFF_HTTP_CONNECT ? 1 : 80; /* CONNECT: port not compared */
	if (parse_authority(v, n, dflt, &f->host) != NULL)
		return "bad Host header";
	return NULL;
}

/* name ":" OWS value OWS (RFC 9112 §5, RFC 9110 §5.5), the line being line[0 .. n). */
static const char *parse_field(const char *line, size_t n, struct sniff_http *out,
			       struct fields *f)
{
	if (line[0] == ' ' || line[0] == '\t')
		return "obs-fold (line folding) in header"; /* RFC 9112 §5.2 */
	size_t i = 0;
	while (i < n && is_tchar((unsigned char)line[i]))
		i++;
	if (i == n || line[i] != ':')
		return (i < n && (line[i] == ' ' || line[i] == '\t')) ?
			       "whitespace before ':' in header" : /* RFC 9112 §5.1 */
			       "malformed header field";
	if (i == 0)
		return "empty header field name";
	size_t v = i + 1, e = n;
	for (size_t k = v; k < n; k++)
		if (((unsigned char)line[k] < 0x20 && line[k] != '\t') || line[k] == 0x7f)
			return "control byte in header value";
	while (v < e && (line[v] == ' ' || line[v] == '\t'))
		v++;
	while (e > v && (line[e - 1] == ' ' || line[e - 1] == '\t'))
		e--;
	if (ieq(line, i, "host"))
		return field_host(line + v, e - v, out, f);
	if (ieq(line, i, "content-length"))
		return field_content_length(line + v, e - v, out, f);
	if (ieq(line, i, "transfer-encoding"))
		return field_transfer_encoding(line + v, e - v, out, f);
	return NULL;
}

static const char *parse_fields(const char *buf, size_t head, struct sniff_http *out,
				struct fields *f)
{
	size_t p = out->line_len, end = head - 2;
	while (p < end) {
		size_t e = p;
		while (buf[e] != '\r')
			e++;
		const char *why = parse_field(buf + p, e - p, out, f);
		if (why)
			return why;
		p = e + 2;
	}
	if (f->has_cl && f->has_te)
		return "both Content-Length and Transfer-Encoding"; /* RFC 9112 §6.1 */
	out->body = f->has_te ? SNIFF_BODY_CHUNKED : f->has_cl ? SNIFF_BODY_LENGTH : SNIFF_BODY_NONE;
	return NULL;
}

static bool hosts_equal(const char *a, const char *b)
{
	struct netaddr x, y;
	if (strcmp(a, b) == 0)
		return true;
	return netaddr_parse(a, strlen(a), &x) == 0 && netaddr_parse(b, strlen(b), &y) == 0 &&
	       x.family == y.family && memcmp(x.bytes, y.bytes, sizeof x.bytes) == 0;
}

static void set_dest(struct sniff_http *out, const struct dest *d)
{
	memcpy(out->host, d->host, sizeof out->host);
	out->port = d->port;
	out->port_explicit = d->port_explicit;
}

/* Where the destination comes from and whether Host agrees with it. */
static const char *finish(struct sniff_http *out, const struct dest *target, const struct fields *f)
{
	if (out->kind == SNIFF_HTTP_ORIGIN) {
		if (!out->has_host)
			return "origin-form request without Host header";
		set_dest(out, &f->host);
		out->host_match = true;
		return NULL;
	}
	set_dest(out, target);
	out->host_match = true;
	if (out->has_host) {
		bool port_ok = f->host.port == target->port ||
			       (out->kind == SNIFF_HTTP_CONNECT && !f->host.port_explicit);
		out->host_match = port_ok && hosts_equal(f->host.host, target->host);
	}
	return NULL;
}

enum sniff_result sniff_http(const char *buf, size_t len, struct sniff_http *out)
{
	struct dest target;
	struct fields f;
	size_t n = len < SNIFF_HTTP_HEAD_MAX ? len : SNIFF_HTTP_HEAD_MAX, eol, head;
	memset(out, 0, sizeof *out);
	memset(&target, 0, sizeof target);
	memset(&f, 0, sizeof f);
	const char *why = scan_head(buf, n, &eol, &head);
	if (!why)
		why = check_method(buf, eol == SIZE_MAX ? n : eol);
	if (!why && eol != SIZE_MAX)
		why = parse_request_line(buf, eol, out, &target);
	if (why)
		return http_bad(out, why);
	if (head == 0) {
		if (len < SNIFF_HTTP_HEAD_MAX)
			return SNIFF_NEED_MORE;
		out->reason = "request head larger than 16 KiB";
		return SNIFF_TOO_LARGE;
	}
	out->head_len = head;
	if ((why = parse_fields(buf, head, out, &f)) || (why = finish(out, &target, &f)))
		return http_bad(out, why);
	return SNIFF_OK;
}

static size_t put(char *out, size_t at, const char *s, size_t n)
{
	memcpy(out + at, s, n);
	return at + n;
}

int sniff_http_rewrite(const char *buf, const struct sniff_http *h, char *out, size_t cap)
{
	static const char host_field[] = "Host: ";
	if (h->kind != SNIFF_HTTP_ABSOLUTE)
		return -EINVAL;
	const char *path = buf + h->path_off;
	bool slash = h->path_len == 0 || path[0] != '/';
	size_t need = h->method_len + 1 + slash + h->path_len + 1 + 8 + 2;
	if (!h->has_host)
		need += sizeof host_field - 1 + h->authority_len + 2;
	if (need > cap || need > INT32_MAX)
		return -ENOSPC;
	size_t at = put(out, 0, buf, h->method_len);
	at = put(out, at, " /", 1 + slash);
	at = put(out, at, path, h->path_len);
	at = put(out, at, " HTTP/1.", 8);
	out[at++] = (char)('0' + h->version_minor);
	at = put(out, at, "\r\n", 2);
	if (!h->has_host) {
		at = put(out, at, host_field, sizeof host_field - 1);
		at = put(out, at, buf + h->authority_off, h->authority_len);
		at = put(out, at, "\r\n", 2);
	}
	return (int)at;
}

/* ---- SOCKS5 ---------------------------------------------------------------------- */

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
		const char *why = copy_name((const char *)p + 5, p[4], s->host);
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

/* ---- TLS ClientHello ------------------------------------------------------------- */

/* A bounded forward reader over bytes known to be present. */
struct rd {
	const uint8_t *p;
	size_t n;
};

static bool rd_take(struct rd *r, size_t k, struct rd *sub)
{
	if (r->n < k)
		return false;
	sub->p = r->p;
	sub->n = k;
	r->p += k;
	r->n -= k;
	return true;
}

static bool rd_u8(struct rd *r, unsigned *v)
{
	struct rd b;
	if (!rd_take(r, 1, &b))
		return false;
	*v = b.p[0];
	return true;
}

static bool rd_u16(struct rd *r, unsigned *v)
{
	struct rd b;
	if (!rd_take(r, 2, &b))
		return false;
	*v = (unsigned)b.p[0] << 8 | b.p[1];
	return true;
}

/* A vector with a 1- or 2-byte length prefix (RFC 8446 §3.4). */
static bool rd_vec(struct rd *r, unsigned width, struct rd *sub)
{
	unsigned n;
	if (!(width == 1 ? rd_u8(r, &n) : rd_u16(r, &n)))
		return false;
	return rd_take(r, n, sub);
}

static enum sniff_result tls_bad(struct sniff_tls *out, const char *why)
{
	out->reason = why;
	return SNIFF_BAD;
}

/* ServerNameList holding exactly one host_name (RFC 6066 §3; OpenSSL requires one entry). */
static enum sniff_result parse_sni(struct rd ext, struct sniff_tls *out)
{
	struct rd list, name;
	unsigned type;
	if (!rd_vec(&ext, 2, &list) || ext.n != 0)
		return tls_bad(out, "server_name list length does not match its extension");
	if (!rd_u8(&list, &type) || !rd_vec(&list, 2, &name))
		return tls_bad(out, "truncated server_name entry");
	if (type != 0)
		return tls_bad(out, "server_name type other than host_name");
	if (list.n != 0)
		return tls_bad(out, "more than one server_name entry");
	const char *why = copy_name((const char *)name.p, name.n, out->host);
	return why ? tls_bad(out, why) : SNIFF_OK;
}

/* Extensions: unique server_name parsed; encrypted_client_hello noted (RFC 8446 §4.2). */
static enum sniff_result parse_extensions(struct rd exts, struct sniff_tls *out)
{
	enum sniff_result r = SNIFF_NONE;
	while (exts.n > 0) {
		unsigned type;
		struct rd data;
		if (!rd_u16(&exts, &type) || !rd_vec(&exts, 2, &data))
			return tls_bad(out, "extension overruns the extensions block");
		if (type == 0xfe0d)
			out->ech = true;
		if (type != 0)
			continue;
		if (r == SNIFF_OK)
			return tls_bad(out, "duplicate server_name extension");
		if ((r = parse_sni(data, out)) != SNIFF_OK)
			return r;
	}
	return r;
}

/* The ClientHello body (RFC 8446 §4.1.2; TLS 1.0-1.2 bodies share the layout, extensions optional). */
static enum sniff_result parse_hello(struct rd r, struct sniff_tls *out)
{
	struct rd skip, exts;
	unsigned v;
	if (!rd_u16(&r, &v) || !rd_take(&r, 32, &skip))
		return tls_bad(out, "truncated ClientHello");
	out->legacy_version = (uint16_t)v;
	if (v >> 8 != 3)
		return tls_bad(out, "ClientHello version is not 3.x");
	if (!rd_vec(&r, 1, &skip) || skip.n > 32)
		return tls_bad(out, "bad legacy_session_id");
	if (!rd_vec(&r, 2, &skip) || skip.n < 2 || skip.n % 2)
		return tls_bad(out, "bad cipher_suites");
	if (!rd_vec(&r, 1, &skip) || skip.n < 1)
		return tls_bad(out, "bad legacy_compression_methods");
	if (r.n == 0)
		return SNIFF_NONE; /* no extensions at all (TLS 1.2 and older) */
	if (!rd_vec(&r, 2, &exts) || r.n != 0)
		return tls_bad(out, "extensions length does not match the ClientHello");
	return parse_extensions(exts, out);
}

/* Where the handshake message's bytes lie in buf. */
struct frags {
	size_t off[SNIFF_TLS_RECORDS_MAX], n[SNIFF_TLS_RECORDS_MAX];
	unsigned count;
	size_t have; /* handshake bytes present */
	size_t want; /* 4 + ClientHello length, once known */
	uint8_t hdr[4];
};

/* Checks the record header at p (n bytes present, maybe fewer than 5) (RFC 8446 §5.1). */
static const char *record_header(const uint8_t *p, size_t n, bool first, size_t *rlen)
{
	if (p[0] != 22)
		return !first ? "record of another type inside the ClientHello" :
		       (p[0] & 0x80) ? "SSLv2 ClientHello is not supported" :
				       "not a TLS handshake";
	if (n >= 2 && p[1] != 3)
		return "bad TLS record version";
	if (n < 5)
		return NULL;
	*rlen = (size_t)p[3] << 8 | p[4];
	if (*rlen == 0)
		return "empty handshake record";
	if (*rlen > 16384)
		return "record longer than 2^14 bytes";
	return NULL;
}

/* Notes a record's payload (avail of its bytes present); reads the handshake header from it. */
static enum sniff_result add_fragment(struct frags *f, const uint8_t *buf, size_t off,
				      size_t avail, struct sniff_tls *out)
{
	if (f->count == SNIFF_TLS_RECORDS_MAX)
		return tls_bad(out, "ClientHello fragmented over too many records");
	f->off[f->count] = off;
	f->n[f->count++] = avail;
	for (size_t k = 0; f->have + k < 4 && k < avail; k++)
		f->hdr[f->have + k] = buf[off + k];
	f->have += avail;
	if (f->have >= 1 && f->hdr[0] != 1)
		return tls_bad(out, "first handshake message is not a ClientHello");
	if (f->want == 0 && f->have >= 4) {
		size_t len = (size_t)f->hdr[1] << 16 | (size_t)f->hdr[2] << 8 | f->hdr[3];
		if (len > SNIFF_TLS_HELLO_MAX) {
			out->reason = "ClientHello larger than 16 KiB";
			return SNIFF_TOO_LARGE;
		}
		f->want = 4 + len;
	}
	return SNIFF_OK;
}

/* Walks the records until the ClientHello is complete: OK, NEED_MORE, BAD, TOO_LARGE. */
static enum sniff_result gather(const uint8_t *buf, size_t len, struct frags *f,
				struct sniff_tls *out)
{
	size_t pos = 0, rlen = 0;
	for (;;) {
		if (pos >= len)
			return SNIFF_NEED_MORE;
		const char *why = record_header(buf + pos, len - pos, pos == 0, &rlen);
		if (why)
			return tls_bad(out, why);
		if (len - pos < 5)
			return SNIFF_NEED_MORE;
		size_t off = pos + 5, avail = len - off < rlen ? len - off : rlen;
		enum sniff_result r = add_fragment(f, buf, off, avail, out);
		if (r != SNIFF_OK)
			return r;
		if (f->want && f->have >= f->want) {
			f->n[f->count - 1] -= f->have - f->want;
			out->hello_end = off + f->n[f->count - 1];
			return SNIFF_OK;
		}
		if (avail < rlen)
			return SNIFF_NEED_MORE;
		pos = off + rlen;
	}
}

enum sniff_result sniff_tls(const uint8_t *buf, size_t len, struct sniff_tls *out)
{
	struct frags f;
	memset(out, 0, sizeof *out);
	memset(&f, 0, sizeof f);
	enum sniff_result r = gather(buf, len, &f, out);
	if (r != SNIFF_OK)
		return r;
	if (f.count == 1)
		return parse_hello((struct rd){ buf + f.off[0] + 4, f.want - 4 }, out);
	uint8_t msg[4 + SNIFF_TLS_HELLO_MAX];
	size_t at = 0;
	for (unsigned i = 0; i < f.count; i++) {
		memcpy(msg + at, buf + f.off[i], f.n[i]);
		at += f.n[i];
	}
	return parse_hello((struct rd){ msg + 4, f.want - 4 }, out);
}
