/* sniff_http.c — the egress proxy reads an HTTP/1.x request head (RFC 9112, RFC 9110): destination, Host check, body framing, the origin-form rewrite. */
#include "proxy/sniff.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "proxy/sniff_name.h"

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
		out[i] = sniff_lower(c);
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
		if (sniff_lower(s[i]) != lit[i])
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
		if ((why = sniff_copy_name(s, colon ? (size_t)(colon - s) : n, d->host)))
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
