/* test_sniff.c — table-driven unit tests for proxy/sniff*.c: HTTP request heads and SOCKS5 negotiation, whole and byte by byte (TLS ClientHello SNI in test_sniff_tls.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/sniff.h"

#include "testutil.h"

/* ---- HTTP ------------------------------------------------------------------------ */

struct http_row {
	const char *req;
	size_t len;
	enum sniff_result r;
	enum sniff_http_kind kind;
	const char *host;  /* OK: expected host; BAD: a substring of the reason */
	unsigned port;
	bool match;
	int line;
};

#define S(s) s, sizeof(s) - 1
#define OK(s, k, h, p, m) { S(s), SNIFF_OK, SNIFF_HTTP_##k, h, p, m, __LINE__ }
#define BAD(s, why) { S(s), SNIFF_BAD, 0, why, 0, false, __LINE__ }

static const struct http_row http_rows[] = {
	/* CONNECT: authority-form. */
	OK("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", CONNECT,
	   "example.com", 443, true),
	OK("CONNECT example.com:443 HTTP/1.1\r\n\r\n", CONNECT, "example.com", 443, true),
	OK("CONNECT example.com:443 HTTP/1.0\r\nUser-Agent: curl\r\n\r\n", CONNECT, "example.com",
	   443, true),
	OK("CONNECT Example.COM.:443 HTTP/1.1\r\nHost: example.com\r\n\r\n", CONNECT, "example.com",
	   443, true),
	OK("CONNECT a.example:443 HTTP/1.1\r\nHost: A.EXAMPLE.:443\r\n\r\n", CONNECT, "a.example",
	   443, true),
	OK("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\nHost: [2001:DB8::1]:8443\r\n\r\n", CONNECT,
	   "2001:db8::1", 8443, true),
	OK("CONNECT [::ffff:127.0.0.1]:22 HTTP/1.1\r\n\r\n", CONNECT, "::ffff:127.0.0.1", 22, true),
	OK("CONNECT 127.0.0.1:22 HTTP/1.0\r\n\r\n", CONNECT, "127.0.0.1", 22, true),
	OK("CONNECT 2130706433:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", CONNECT, "2130706433", 22,
	   true),
	OK("CONNECT 0x7f.1:22 HTTP/1.1\r\nHost: [::ffff:127.0.0.1]:22\r\n\r\n", CONNECT, "0x7f.1", 22,
	   true),
	OK("CONNECT a.example:443 HTTP/1.1\r\nHost: b.example:443\r\n\r\n", CONNECT, "a.example", 443,
	   false),
	OK("CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:80\r\n\r\n", CONNECT, "a.example", 443,
	   false),
	OK("CONNECT a.example:443 HTTP/1.1\r\nHost: a.example.evil:443\r\n\r\n", CONNECT,
	   "a.example", 443, false),
	OK("CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.2:443\r\n\r\n", CONNECT, "10.0.0.1", 443,
	   false),
	OK("CONNECT x:1 HTTP/1.1\r\n\r\n", CONNECT, "x", 1, true),
	OK("CONNECT x:65535 HTTP/1.1\r\n\r\n", CONNECT, "x", 65535, true),
	OK("CONNECT x:00443 HTTP/1.1\r\n\r\n", CONNECT, "x", 443, true),
	OK("CONNECT under_score.example:443 HTTP/1.1\r\n\r\n", CONNECT, "under_score.example", 443,
	   true),
	/* Absolute-form: plain HTTP proxying. */
	OK("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", ABSOLUTE, "example.com",
	   80, true),
	OK("GET http://example.com:8080/a?b=c HTTP/1.1\r\nHost: example.com:8080\r\n\r\n", ABSOLUTE,
	   "example.com", 8080, true),
	OK("GET http://example.com:8080/ HTTP/1.1\r\nHost: example.com\r\n\r\n", ABSOLUTE,
	   "example.com", 8080, false),
	OK("GET http://example.com/ HTTP/1.1\r\nHost: example.com:80\r\n\r\n", ABSOLUTE,
	   "example.com", 80, true),
	OK("GET http://example.com/ HTTP/1.1\r\nHost: example.com:81\r\n\r\n", ABSOLUTE,
	   "example.com", 80, false),
	OK("GET HTTP://EXAMPLE.com HTTP/1.1\r\n\r\n", ABSOLUTE, "example.com", 80, true),
	OK("GET Http://example.com?q=1 HTTP/1.0\r\n\r\n", ABSOLUTE, "example.com", 80, true),
	OK("POST http://evil.example/x HTTP/1.1\r\nHost: good.example\r\n\r\n", ABSOLUTE,
	   "evil.example", 80, false),
	OK("GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", ABSOLUTE, "::1", 8080, true),
	OK("GET http://127.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", ABSOLUTE, "127.1", 80, true),
	OK("GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n", ABSOLUTE, "127.0.0.1", 80,
	   false),
	OK("DELETE http://a.example/x/y HTTP/1.1\r\nhOsT:a.example\r\n\r\n", ABSOLUTE, "a.example",
	   80, true),
	/* Origin-form: transparent connections, destination from Host. */
	OK("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", ORIGIN, "example.com", 80, true),
	OK("GET /x HTTP/1.1\r\nUser-Agent: t\r\nhost:   Example.com:8080  \r\nAccept: */*\r\n\r\n",
	   ORIGIN, "example.com", 8080, true),
	OK("GET /x HTTP/1.1\r\nHost:\texample.com\t\r\n\r\n", ORIGIN, "example.com", 80, true),
	OK("OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n", ORIGIN, "example.com", 80, true),
	OK("M-SEARCH / HTTP/1.1\r\nHost: x\r\n\r\n", ORIGIN, "x", 80, true),
	OK("GET /?a=b&c=%20 HTTP/1.0\r\nHost: [2001:db8::5]\r\n\r\n", ORIGIN, "2001:db8::5", 80, true),
	OK("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", ORIGIN, "a", 80, true),
	OK("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", ORIGIN, "a",
	   80, true),
	OK("GET / HTTP/1.1\r\nHost: a\r\nX-Obs-Text: caf\xc3\xa9\r\nEmpty:\r\n\r\n", ORIGIN, "a", 80,
	   true),
	OK("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: b\r\n\r\n", ORIGIN, "a", 80,
	   true),
	/* Request line. */
	BAD(" GET / HTTP/1.1\r\nHost: a\r\n\r\n", "empty method"),
	BAD("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", "not a token"),
	BAD("GET\x7f / HTTP/1.1\r\nHost: a\r\n\r\n", "not a token"),
	BAD("\x16\x03\x01\x02\x10\x01\x01\x01\xfc\x03\x03", "not a token"),
	BAD("\x05\x01\x02", "not a token"),
	BAD("\r\n\r\n", "method"),
	BAD("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "method"),
	BAD("GET\r\n\r\n", "without target"),
	BAD("GET /\r\n\r\n", "without HTTP version"),
	BAD("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "empty request target"),
	BAD("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", "HTTP/1.x"),
	BAD("GET / HTTP/2.0\r\nHost: a\r\n\r\n", "HTTP/1.x"),
	BAD("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/1.x"),
	BAD("GET / http/1.1\r\nHost: a\r\n\r\n", "HTTP/1.x"),
	BAD("GET / HTTP/1.10\r\nHost: a\r\n\r\n", "HTTP/1.x"),
	BAD("GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", "bad byte in request target"),
	BAD("GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", "bad byte in request target"),
	BAD("GET /\ta HTTP/1.1\r\nHost: a\r\n\r\n", "bad byte in request target"),
	BAD("GET /#frag HTTP/1.1\r\nHost: a\r\n\r\n", "fragment"),
	BAD("GET * HTTP/1.1\r\nHost: a\r\n\r\n", "outside OPTIONS"),
	BAD("GET example.com HTTP/1.1\r\nHost: a\r\n\r\n", "neither origin-form"),
	BAD("GET http:/example.com/ HTTP/1.1\r\n\r\n", "neither origin-form"),
	BAD("GET https://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "use CONNECT"),
	BAD("GET ftp://example.com/ HTTP/1.1\r\n\r\n", "unsupported URI scheme"),
	BAD("GET ws://example.com/ HTTP/1.1\r\n\r\n", "unsupported URI scheme"),
	BAD("GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n", "userinfo"),
	BAD("GET http://good.example@evil.example/ HTTP/1.1\r\n\r\n", "userinfo"),
	BAD("GET http:///x HTTP/1.1\r\n\r\n", "empty host"),
	BAD("GET http://a..b/ HTTP/1.1\r\n\r\n", "empty label"),
	BAD("GET http://.a/ HTTP/1.1\r\n\r\n", "empty label"),
	BAD("GET http://a%2eb/ HTTP/1.1\r\n\r\n", "bad character"),
	BAD("GET http://a.example:80:80/ HTTP/1.1\r\n\r\n", "bad port"),
	BAD("GET http://a.example:/ HTTP/1.1\r\n\r\n", "empty port"),
	BAD("GET http://[::1/ HTTP/1.1\r\n\r\n", "unterminated"),
	/* CONNECT targets. */
	BAD("CONNECT example.com HTTP/1.1\r\n\r\n", "without a port"),
	BAD("CONNECT example.com: HTTP/1.1\r\n\r\n", "empty port"),
	BAD("CONNECT example.com:0 HTTP/1.1\r\n\r\n", "out of range"),
	BAD("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", "out of range"),
	BAD("CONNECT example.com:123456 HTTP/1.1\r\n\r\n", "bad port"),
	BAD("CONNECT example.com:44x3 HTTP/1.1\r\n\r\n", "bad port"),
	BAD("CONNECT example.com:+443 HTTP/1.1\r\n\r\n", "bad port"),
	BAD("CONNECT example.com:-1 HTTP/1.1\r\n\r\n", "bad port"),
	BAD("CONNECT [::1 HTTP/1.1\r\n\r\n", "unterminated"),
	BAD("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", "after ']'"),
	BAD("CONNECT [::1] HTTP/1.1\r\n\r\n", "without a port"),
	BAD("CONNECT []:443 HTTP/1.1\r\n\r\n", "IPv6"),
	BAD("CONNECT [127.0.0.1]:443 HTTP/1.1\r\n\r\n", "IPv6"),
	BAD("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n", "IPv6"),
	BAD("CONNECT [1:2:3:4:5:6:7:8:9]:443 HTTP/1.1\r\n\r\n", "IPv6"),
	BAD("CONNECT ::1:443 HTTP/1.1\r\n\r\n", "empty host"),
	BAD("CONNECT :443 HTTP/1.1\r\n\r\n", "empty host"),
	BAD("CONNECT exa mple.com:443 HTTP/1.1\r\n\r\n", "HTTP/1.x"),
	BAD("CONNECT a.example:443 HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", "duplicate Host"),
	BAD("CONNECT a.example:443 HTTP/1.1\r\nHost: a b\r\n\r\n", "bad Host"),
	/* Header fields. */
	BAD("GET / HTTP/1.1\r\n\r\n", "without Host"),
	BAD("GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n", "without Host"),
	BAD("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "duplicate Host"),
	BAD("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", "duplicate Host"),
	BAD("GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n z\r\n\r\n", "obs-fold"),
	BAD("GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n\tz\r\n\r\n", "obs-fold"),
	BAD("GET / HTTP/1.1\r\n Host: a\r\n\r\n", "obs-fold"),
	BAD("GET / HTTP/1.1\r\nHost : a\r\n\r\n", "whitespace before ':'"),
	BAD("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", "whitespace before ':'"),
	BAD("GET / HTTP/1.1\r\nHost a\r\n\r\n", "whitespace before ':'"),
	BAD("GET / HTTP/1.1\r\nHost\r\n\r\n", "malformed header"),
	BAD("GET / HTTP/1.1\r\nHo(st: a\r\n\r\n", "malformed header"),
	BAD("GET / HTTP/1.1\r\n: a\r\n\r\n", "empty header field name"),
	BAD("GET / HTTP/1.1\r\nHost: a\r\nX: a\x01z\r\n\r\n", "control byte"),
	BAD("GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fz\r\n\r\n", "control byte"),
	BAD("GET / HTTP/1.1\r\nHost: a\0\r\n\r\n", "NUL"),
	BAD("GET\0 / HTTP/1.1\r\n", "NUL"),
	BAD("GET / HTTP/1.1\r\nHost: \r\n\r\n", "bad Host"),
	BAD("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", "bad Host"),
	BAD("GET / HTTP/1.1\r\nHost: a:0\r\n\r\n", "bad Host"),
	BAD("GET / HTTP/1.1\r\nHost: a:b\r\n\r\n", "bad Host"),
	BAD("GET / HTTP/1.1\r\nHost: a, b\r\n\r\n", "bad Host"),
	BAD("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", "bad Host"),
	BAD("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", "bad Host"),
	/* Line endings. */
	BAD("GET / HTTP/1.1\nHost: a\n\n", "CRLF"),
	BAD("GET / HTTP/1.1\r\nHost: a\n\r\n", "CRLF"),
	BAD("GET / HTTP/1.1\r\nHost: a\r\n\n", "CRLF"),
	BAD("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", "bare CR"),
	BAD("GET / HTTP/1.1\r\r\n", "bare CR"),
	/* Body framing (RFC 9112 §6). */
	BAD("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
	    "both Content-Length and Transfer-Encoding"),
	BAD("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
	    "duplicate Content-Length"),
	BAD("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", "bad Content-Length"),
	BAD("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
	BAD("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", "bad Content-Length"),
	BAD("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1234567890123456789\r\n\r\n",
	    "bad Content-Length"),
	BAD("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	    "unsupported Transfer-Encoding"),
	BAD("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n",
	    "duplicate Transfer-Encoding"),
	BAD("POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0"),
	/* Names. */
	BAD("GET http://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example/ "
	    "HTTP/1.1\r\n\r\n",
	    "label longer than 63"),
};

static void check_http_row(const struct http_row *row, const char *buf, size_t len)
{
	struct sniff_http h;
	enum sniff_result r = sniff_http(buf, len, &h);
	if (r != row->r)
		fail_msg("line %d: result %s, expected %s (%s)", row->line, sniff_result_name(r),
			 sniff_result_name(row->r), h.reason ? h.reason : "");
	if (r == SNIFF_BAD) {
		assert_non_null(h.reason);
		if (!strstr(h.reason, row->host))
			fail_msg("line %d: reason '%s' lacks '%s'", row->line, h.reason, row->host);
		return;
	}
	if (h.kind != row->kind || strcmp(h.host, row->host) != 0 || h.port != row->port ||
	    h.host_match != row->match)
		fail_msg("line %d: kind %d host '%s' port %u match %d", row->line, h.kind, h.host,
			 h.port, h.host_match);
	const char *end = memmem(buf, len, "\r\n\r\n", 4);
	assert_non_null(end);
	assert_int_equal(h.head_len, (size_t)(end + 4 - buf));
	assert_true(h.line_len <= h.head_len);
	assert_memory_equal(buf + h.line_len - 2, "\r\n", 2);
}

static void test_http_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof http_rows / sizeof http_rows[0]; i++) {
		char *b = exact_copy(http_rows[i].req, http_rows[i].len);
		check_http_row(&http_rows[i], b, http_rows[i].len);
		free(b);
	}
}

/* Every prefix of a request gives NEED_MORE, or the final BAD early; the whole gives the row's result. */
static void test_http_bytewise(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof http_rows / sizeof http_rows[0]; i++) {
		const struct http_row *row = &http_rows[i];
		const char *end = memmem(row->req, row->len, "\r\n\r\n", 4);
		size_t head = row->r == SNIFF_OK ? (size_t)(end + 4 - row->req) : row->len;
		bool seen_bad = false;
		for (size_t k = 0; k < row->len; k++) {
			struct sniff_http h;
			char *b = exact_copy(row->req, k);
			enum sniff_result r = sniff_http(b, k, &h);
			free(b);
			if (r == SNIFF_NEED_MORE && !seen_bad && k < head)
				continue;
			if (r == SNIFF_OK && row->r == SNIFF_OK && k >= head)
				continue;
			if (r != SNIFF_BAD || row->r != SNIFF_BAD)
				fail_msg("line %d: prefix %zu gives %s", row->line, k,
					 sniff_result_name(r));
			seen_bad = true;
		}
		char *b = exact_copy(row->req, row->len);
		check_http_row(row, b, row->len);
		free(b);
	}
}

/* A head of n bytes: "GET / HTTP/1.1\r\nHost: a\r\nX: xxx...\r\n\r\n". */
static char *padded_head(size_t n, bool terminated)
{
	static const char start[] = "GET / HTTP/1.1\r\nHost: a\r\nX: ";
	char *b = malloc(n);
	assert_non_null(b);
	memset(b, 'x', n);
	memcpy(b, start, sizeof start - 1);
	if (terminated)
		memcpy(b + n - 4, "\r\n\r\n", 4);
	return b;
}

static void test_http_bounds(void **state)
{
	(void)state;
	struct sniff_http h;
	char *b = padded_head(SNIFF_HTTP_HEAD_MAX, true);
	assert_int_equal(sniff_http(b, SNIFF_HTTP_HEAD_MAX, &h), SNIFF_OK);
	assert_int_equal(h.head_len, SNIFF_HTTP_HEAD_MAX);
	free(b);
	b = padded_head(SNIFF_HTTP_HEAD_MAX + 1, true);
	assert_int_equal(sniff_http(b, SNIFF_HTTP_HEAD_MAX, &h), SNIFF_TOO_LARGE);
	assert_int_equal(sniff_http(b, SNIFF_HTTP_HEAD_MAX + 1, &h), SNIFF_TOO_LARGE);
	assert_int_equal(sniff_http(b, SNIFF_HTTP_HEAD_MAX - 1, &h), SNIFF_NEED_MORE);
	free(b);
	b = padded_head(4 * SNIFF_HTTP_HEAD_MAX, false);
	for (size_t k = 1; k < 4 * SNIFF_HTTP_HEAD_MAX; k += 997)
		assert_int_equal(sniff_http(b, k, &h),
				 k < SNIFF_HTTP_HEAD_MAX ? SNIFF_NEED_MORE : SNIFF_TOO_LARGE);
	free(b);
	/* A request line alone over the bound. */
	b = malloc(SNIFF_HTTP_HEAD_MAX + 10);
	assert_non_null(b);
	memset(b, 'a', SNIFF_HTTP_HEAD_MAX + 10);
	memcpy(b, "GET /", 5);
	assert_int_equal(sniff_http(b, SNIFF_HTTP_HEAD_MAX + 10, &h), SNIFF_TOO_LARGE);
	assert_int_equal(sniff_http(b, 0, &h), SNIFF_NEED_MORE);
	free(b);
}

static void test_http_details(void **state)
{
	(void)state;
	struct sniff_http h;
	static const char post[] = "POST http://a.example:81/p HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
	assert_int_equal(sniff_http(post, sizeof post - 1, &h), SNIFF_OK);
	assert_int_equal(h.body, SNIFF_BODY_LENGTH);
	assert_int_equal(h.content_length, 5);
	assert_int_equal(h.method_len, 4);
	assert_true(h.port_explicit);
	assert_false(h.has_host);
	assert_int_equal(h.version_minor, 1);
	assert_memory_equal(post + h.target_off, "http://a.example:81/p", h.target_len);
	assert_memory_equal(post + h.authority_off, "a.example:81", h.authority_len);
	assert_memory_equal(post + h.path_off, "/p", h.path_len);
	static const char chunked[] = "PUT / HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\n";
	assert_int_equal(sniff_http(chunked, sizeof chunked - 1, &h), SNIFF_OK);
	assert_int_equal(h.body, SNIFF_BODY_CHUNKED);
	assert_false(h.port_explicit);
	assert_true(h.has_host);
	static const char get[] = "GET / HTTP/1.0\r\nHost: b:80\r\n\r\n";
	assert_int_equal(sniff_http(get, sizeof get - 1, &h), SNIFF_OK);
	assert_int_equal(h.body, SNIFF_BODY_NONE);
	assert_true(h.port_explicit);
	assert_int_equal(h.version_minor, 0);
	/* The longest name passes; one more character does not. */
	char name[300], req[400];
	memset(name, 'a', sizeof name);
	for (size_t i = 63; i < sizeof name; i += 64)
		name[i] = '.';
	for (int extra = 0; extra <= 1; extra++) {
		int n = snprintf(req, sizeof req, "CONNECT %.*s:443 HTTP/1.1\r\n\r\n", 253 + extra,
				 name);
		assert_int_equal(sniff_http(req, (size_t)n, &h), extra ? SNIFF_BAD : SNIFF_OK);
	}
	assert_string_equal(sniff_result_name(SNIFF_TOO_LARGE), "too-large");
	assert_string_equal(sniff_result_name(SNIFF_RESULT_MAX), "?");
}

struct rewrite_row {
	const char *req;
	const char *want; /* NULL: -EINVAL */
	int line;
};

static const struct rewrite_row rewrite_rows[] = {
	{ "GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\n\r\n", "GET /a?b HTTP/1.1\r\n",
	  __LINE__ },
	{ "GET http://example.com HTTP/1.0\r\n\r\n", "GET / HTTP/1.0\r\nHost: example.com\r\n",
	  __LINE__ },
	{ "GET http://Example.com:8080?x HTTP/1.1\r\n\r\n",
	  "GET /?x HTTP/1.1\r\nHost: Example.com:8080\r\n", __LINE__ },
	{ "POST http://[::1]:81/up HTTP/1.1\r\nHost: [::1]:81\r\nContent-Length: 0\r\n\r\n",
	  "POST /up HTTP/1.1\r\n", __LINE__ },
	{ "GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n", "GET / HTTP/1.1\r\n", __LINE__ },
	{ "CONNECT a:443 HTTP/1.1\r\n\r\n", NULL, __LINE__ },
	{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", NULL, __LINE__ },
};

static void test_http_rewrite(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rewrite_rows / sizeof rewrite_rows[0]; i++) {
		const struct rewrite_row *row = &rewrite_rows[i];
		struct sniff_http h;
		char out[256];
		if (sniff_http(row->req, strlen(row->req), &h) != SNIFF_OK)
			fail_msg("line %d: %s", row->line, h.reason);
		int n = sniff_http_rewrite(row->req, &h, out, sizeof out);
		if (!row->want) {
			assert_int_equal(n, -EINVAL);
			continue;
		}
		if (n != (int)strlen(row->want) || memcmp(out, row->want, (size_t)n) != 0)
			fail_msg("line %d: rewrote '%.*s'", row->line, n < 0 ? 0 : n, out);
		/* The rewritten head parses as origin-form naming the same destination. */
		char again[512];
		size_t rest = strlen(row->req) - h.line_len;
		memcpy(again, out, (size_t)n);
		memcpy(again + n, row->req + h.line_len, rest);
		struct sniff_http o;
		assert_int_equal(sniff_http(again, (size_t)n + rest, &o), SNIFF_OK);
		assert_int_equal(o.kind, SNIFF_HTTP_ORIGIN);
		for (size_t cap = 0; cap < (size_t)n; cap++)
			assert_int_equal(sniff_http_rewrite(row->req, &h, out, cap), -ENOSPC);
	}
}

/* ---- SOCKS5 ---------------------------------------------------------------------- */

struct socks_row {
	const uint8_t *in;
	size_t len;
	enum sniff_result r;
	const uint8_t *reply; /* everything sent to the client, concatenated */
	size_t reply_len;
	const char *host;     /* OK: destination; BAD: substring of the reason */
	unsigned port;
	uint8_t atyp;
	size_t consumed;      /* OK */
	int line;
};

#define BYTES(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })
#define GREET 5, 1, 0
#define SEL 5, 0
#define REFUSE(rep) 5, rep, 0, 1, 0, 0, 0, 0, 0, 0
#define SOK(in, reply, host, port, atyp, used) { in, SNIFF_OK, reply, host, port, atyp, used, __LINE__ }
#define SNEED(in, reply) { in, SNIFF_NEED_MORE, reply, "", 0, 0, 0, __LINE__ }
#define SBAD(in, reply, why) { in, SNIFF_BAD, reply, why, 0, 0, 0, __LINE__ }
#define NOREPLY NULL, 0

static const struct socks_row socks_rows[] = {
	SOK(BYTES(GREET, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80), BYTES(SEL), "127.0.0.1", 80, 1, 13),
	SOK(BYTES(5, 2, 2, 0, 5, 1, 0, 1, 10, 0, 0, 1, 1, 187), BYTES(SEL), "10.0.0.1", 443, 1, 14),
	SOK(BYTES(5, 3, 0, 1, 2, 5, 1, 0, 1, 203, 0, 113, 9, 0xff, 0xff), BYTES(SEL), "203.0.113.9",
	    65535, 1, 15),
	SOK(BYTES(GREET, 5, 1, 0, 3, 11, 'E', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'C', 'O', 'M', 1,
		  187),
	    BYTES(SEL), "example.com", 443, 3, 21),
	SOK(BYTES(GREET, 5, 1, 0, 3, 2, 'a', '.', 0, 22), BYTES(SEL), "a", 22, 3, 12),
	SOK(BYTES(GREET, 5, 1, 0, 3, 9, '1', '2', '7', '.', '0', '.', '0', '.', '1', 0, 80),
	    BYTES(SEL), "127.0.0.1", 80, 3, 19),
	SOK(BYTES(GREET, 5, 1, 0, 3, 10, '2', '1', '3', '0', '7', '0', '6', '4', '3', '3', 0, 80),
	    BYTES(SEL), "2130706433", 80, 3, 20),
	SOK(BYTES(GREET, 5, 1, 0, 4, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 187),
	    BYTES(SEL), "2001:db8::1", 443, 4, 25),
	SOK(BYTES(GREET, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 22),
	    BYTES(SEL), "::1", 22, 4, 25),
	SOK(BYTES(GREET, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1, 0, 22),
	    BYTES(SEL), "10.0.0.1", 22, 4, 25),
	/* Early data after the request stays for the relay. */
	SOK(BYTES(GREET, 5, 1, 0, 1, 1, 2, 3, 4, 0, 80, 'G', 'E', 'T'), BYTES(SEL), "1.2.3.4", 80, 1,
	    13),
	/* Incomplete. */
	SNEED(BYTES(5), NOREPLY),
	SNEED(BYTES(5, 2, 0), NOREPLY),
	SNEED(BYTES(GREET), BYTES(SEL)),
	SNEED(BYTES(GREET, 5, 1, 0, 3), BYTES(SEL)),
	SNEED(BYTES(GREET, 5, 1, 0, 3, 4, 'a', 'b', 'c', 'd', 0), BYTES(SEL)),
	SNEED(BYTES(GREET, 5, 1, 0, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0),
	      BYTES(SEL)),
	/* Greeting failures. */
	SBAD(BYTES(4, 1, 0, 80, 127, 0, 0, 1, 0), NOREPLY, "SOCKS4"),
	SBAD(BYTES(6, 1, 0), NOREPLY, "not SOCKS version 5"),
	SBAD(BYTES(0x16, 3, 1), NOREPLY, "not SOCKS version 5"),
	SBAD(BYTES('G', 'E', 'T'), NOREPLY, "not SOCKS version 5"),
	SBAD(BYTES(5, 0), BYTES(5, 0xff), "no method"),
	SBAD(BYTES(5, 1, 2), BYTES(5, 0xff), "requires authentication"),
	SBAD(BYTES(5, 2, 1, 2), BYTES(5, 0xff), "requires authentication"),
	SBAD(BYTES(5, 3, 1, 2, 0x80), BYTES(5, 0xff), "requires authentication"),
	/* Request failures. */
	SBAD(BYTES(GREET, 4, 1, 0, 1, 1, 2, 3, 4, 0, 80), BYTES(SEL, REFUSE(1)), "version 5"),
	SBAD(BYTES(GREET, 5, 2, 0, 1, 1, 2, 3, 4, 0, 80), BYTES(SEL, REFUSE(7)), "BIND"),
	SBAD(BYTES(GREET, 5, 3, 0, 1, 1, 2, 3, 4, 0, 80), BYTES(SEL, REFUSE(7)), "UDP ASSOCIATE"),
	SBAD(BYTES(GREET, 5, 9, 0, 1, 1, 2, 3, 4, 0, 80), BYTES(SEL, REFUSE(7)), "unknown SOCKS5 command"),
	SBAD(BYTES(GREET, 5, 0, 0, 1, 1, 2, 3, 4, 0, 80), BYTES(SEL, REFUSE(7)), "unknown SOCKS5 command"),
	SBAD(BYTES(GREET, 5, 1, 1, 1, 1, 2, 3, 4, 0, 80), BYTES(SEL, REFUSE(1)), "reserved"),
	SBAD(BYTES(GREET, 5, 1, 0, 2, 1, 2, 3, 4, 0, 80), BYTES(SEL, REFUSE(8)), "address type"),
	SBAD(BYTES(GREET, 5, 1, 0, 0), BYTES(SEL, REFUSE(8)), "address type"),
	SBAD(BYTES(GREET, 5, 1, 0, 5), BYTES(SEL, REFUSE(8)), "address type"),
	SBAD(BYTES(GREET, 5, 1, 0, 3, 0, 0, 80), BYTES(SEL, REFUSE(1)), "empty domain"),
	SBAD(BYTES(GREET, 5, 1, 0, 3, 3, 'a', ' ', 'b', 0, 80), BYTES(SEL, REFUSE(1)), "bad character"),
	SBAD(BYTES(GREET, 5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80), BYTES(SEL, REFUSE(1)), "bad character"),
	SBAD(BYTES(GREET, 5, 1, 0, 3, 3, ':', ':', '1', 0, 80), BYTES(SEL, REFUSE(1)), "bad character"),
	SBAD(BYTES(GREET, 5, 1, 0, 3, 4, 'a', '.', '.', 'b', 0, 80), BYTES(SEL, REFUSE(1)), "empty label"),
	SBAD(BYTES(GREET, 5, 1, 0, 3, 1, '.', 0, 80), BYTES(SEL, REFUSE(1)), "empty label"),
	SBAD(BYTES(GREET, 5, 1, 0, 3, 1, 'a', 0, 0), BYTES(SEL, REFUSE(1)), "port 0"),
	SBAD(BYTES(GREET, 5, 1, 0, 1, 1, 2, 3, 4, 0, 0), BYTES(SEL, REFUSE(1)), "port 0"),
};

static void check_socks(const struct socks_row *row, enum sniff_result r,
			const struct sniff_socks *s, const uint8_t *sent, size_t sent_len)
{
	if (r != row->r)
		fail_msg("line %d: result %s, expected %s (%s)", row->line, sniff_result_name(r),
			 sniff_result_name(row->r), s->reason ? s->reason : "");
	if (sent_len != row->reply_len || (sent_len && memcmp(sent, row->reply, sent_len) != 0))
		fail_msg("line %d: sent %zu bytes, expected %zu", row->line, sent_len,
			 row->reply_len);
	if (r == SNIFF_BAD) {
		if (!strstr(s->reason, row->host))
			fail_msg("line %d: reason '%s' lacks '%s'", row->line, s->reason, row->host);
		assert_int_equal(s->state, SNIFF_SOCKS_DONE);
	}
	if (r != SNIFF_OK)
		return;
	if (strcmp(s->host, row->host) != 0 || s->port != row->port || s->atyp != row->atyp ||
	    s->consumed != row->consumed)
		fail_msg("line %d: host '%s' port %u atyp %u consumed %zu", row->line, s->host,
			 s->port, s->atyp, s->consumed);
	if (s->atyp != SNIFF_SOCKS_ATYP_DOMAIN) {
		struct netaddr a;
		assert_int_equal(netaddr_parse(s->host, strlen(s->host), &a), 0);
		assert_memory_equal(&a, &s->addr, sizeof a);
	}
}

/* Feeds row in chunks of `step` bytes (0: whole), collecting every reply. */
static void run_socks(const struct socks_row *row, size_t step)
{
	struct sniff_socks s;
	uint8_t sent[64];
	size_t sent_len = 0, k = 0;
	enum sniff_result r = SNIFF_NEED_MORE, first = SNIFF_NEED_MORE;
	sniff_socks_init(&s);
	do {
		k = step == 0 || k + step > row->len ? row->len : k + step;
		uint8_t *b = exact_copy(row->in, k);
		r = sniff_socks(&s, b, k);
		free(b);
		assert_true(sent_len + s.reply_len <= sizeof sent);
		memcpy(sent + sent_len, s.reply, s.reply_len);
		sent_len += s.reply_len;
		if (first == SNIFF_NEED_MORE)
			first = r;
		else if (r != first)
			fail_msg("line %d: result changed from %s to %s", row->line,
				 sniff_result_name(first), sniff_result_name(r));
	} while (k < row->len);
	check_socks(row, r, &s, sent, sent_len);
}

static void test_socks_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof socks_rows / sizeof socks_rows[0]; i++)
		for (size_t step = 0; step <= 3; step++)
			run_socks(&socks_rows[i], step);
}

static void test_socks_domain_length(void **state)
{
	(void)state;
	uint8_t in[3 + 5 + 255 + 2] = { 5, 1, 0, 5, 1, 0, 3 };
	for (size_t n = 250; n <= 255; n++) {
		struct sniff_socks s;
		in[7] = (uint8_t)n;
		memset(in + 8, 'a', n);
		for (size_t i = 63; i < n; i += 64)
			in[8 + i] = '.';
		in[8 + n] = 1;
		in[9 + n] = 187;
		sniff_socks_init(&s);
		enum sniff_result r = sniff_socks(&s, in, 10 + n);
		assert_int_equal(r, n <= 253 ? SNIFF_OK : SNIFF_BAD);
		if (r == SNIFF_OK)
			assert_int_equal(strlen(s.host), n);
		else
			assert_non_null(strstr(s.reason, "longer than 253"));
	}
	/* 254 with a trailing dot is 253 without. */
	in[7] = 254;
	in[8 + 253] = '.';
	in[8 + 254] = 1;
	in[9 + 254] = 187;
	struct sniff_socks s;
	sniff_socks_init(&s);
	assert_int_equal(sniff_socks(&s, in, 10 + 254), SNIFF_OK);
	assert_int_equal(strlen(s.host), 253);
}

static void test_socks_reply(void **state)
{
	(void)state;
	for (unsigned rep = 0; rep < SNIFF_SOCKS_REP_MAX; rep++) {
		uint8_t out[SNIFF_SOCKS_REPLY_LEN];
		const uint8_t want[] = { 5, (uint8_t)rep, 0, 1, 0, 0, 0, 0, 0, 0 };
		memset(out, 0xaa, sizeof out);
		assert_int_equal(sniff_socks_reply(out, rep), SNIFF_SOCKS_REPLY_LEN);
		assert_memory_equal(out, want, sizeof want);
	}
	/* After a verdict, later calls repeat it and send nothing. */
	struct sniff_socks s;
	static const uint8_t in[] = { 5, 1, 0, 5, 2, 0, 1, 1, 2, 3, 4, 0, 80 };
	sniff_socks_init(&s);
	assert_int_equal(sniff_socks(&s, in, sizeof in), SNIFF_BAD);
	assert_int_equal(s.reply_len, 12);
	assert_int_equal(sniff_socks(&s, in, sizeof in), SNIFF_BAD);
	assert_int_equal(s.reply_len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_table),
		cmocka_unit_test(test_http_bytewise),
		cmocka_unit_test(test_http_bounds),
		cmocka_unit_test(test_http_details),
		cmocka_unit_test(test_http_rewrite),
		cmocka_unit_test(test_socks_table),
		cmocka_unit_test(test_socks_domain_length),
		cmocka_unit_test(test_socks_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
