/* sniff.h — the egress proxy's parsers for a connection's first bytes: HTTP request heads, SOCKS5 negotiation, the TLS ClientHello's SNI. */
#ifndef AIRLOCK_PROXY_SNIFF_H
#define AIRLOCK_PROXY_SNIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/netaddr.h"

/*
 * Every parser here is pure: no I/O, no allocation, bounded work.  They are
 * fed the bytes received so far on a connection, from its first byte, and
 * are called again, with the same buffer grown, when more bytes arrive.
 */
enum sniff_result {
	SNIFF_NEED_MORE = 0, /* no verdict yet: read more bytes and call again */
	SNIFF_OK = 1,        /* complete and well formed; the output is filled in */
	SNIFF_NONE = 2,      /* sniff_tls only: a well-formed ClientHello without server_name */
	SNIFF_BAD = 3,       /* malformed; reason says why.  Refuse the connection. */
	SNIFF_TOO_LARGE = 4, /* over the parser's bound before it was complete */
	SNIFF_RESULT_MAX
};

/* "need-more", "ok", "none", "bad", "too-large"; "?" out of range. */
const char *sniff_result_name(enum sniff_result r);

/* Room for a host name: 253 characters (RFC 1035 §2.3.4) or an IPv6 literal, plus NUL. */
#define SNIFF_HOST_MAX 256

/* ---- HTTP/1.x request heads (RFC 9112, RFC 9110) --------------------------------- */

/* Request head bound: a longer head (request line + header fields + blank line) is TOO_LARGE. */
#define SNIFF_HTTP_HEAD_MAX 16384

enum sniff_http_kind {
	SNIFF_HTTP_CONNECT = 0,  /* "CONNECT host:port HTTP/1.x": authority-form (RFC 9112 §3.2.3) */
	SNIFF_HTTP_ABSOLUTE = 1, /* "GET http://host[:port]/path HTTP/1.x": absolute-form (§3.2.2) */
	SNIFF_HTTP_ORIGIN = 2,   /* "GET /path HTTP/1.x" + Host: a transparent connection (§3.2.1) */
	SNIFF_HTTP_KIND_MAX
};

/* How the request's body is framed (RFC 9112 §6.3), so a relay can find the next request head. */
enum sniff_http_body {
	SNIFF_BODY_NONE = 0,    /* no body (no Content-Length, no Transfer-Encoding; or CONNECT) */
	SNIFF_BODY_LENGTH = 1,  /* content_length bytes follow the head */
	SNIFF_BODY_CHUNKED = 2, /* Transfer-Encoding: chunked */
	SNIFF_BODY_MAX
};

struct sniff_http {
	enum sniff_http_kind kind;
	/*
	 * The destination: lower-cased, one trailing '.' removed, an IPv6 literal
	 * without its brackets.  CONNECT and ABSOLUTE: from the request target;
	 * ORIGIN: from the Host header.  Not canonicalised: see addr_parse().
	 */
	char host[SNIFF_HOST_MAX];
	uint16_t port;      /* 1..65535; the scheme's default (80) when not written */
	bool port_explicit; /* the port was written (ORIGIN: in Host; else in the target) */
	unsigned version_minor; /* HTTP/1.x */
	size_t head_len;    /* request line + fields + CRLF CRLF: where the body starts */
	size_t line_len;    /* the request line with its CRLF */
	size_t method_len;  /* the method is buf[0 .. method_len) */
	size_t target_off, target_len; /* the request target, as sent */
	size_t authority_off, authority_len; /* CONNECT, ABSOLUTE: host[:port] as sent */
	size_t path_off, path_len; /* ABSOLUTE: path and query ("" means "/") */
	bool has_host;      /* a Host header field was present */
	/*
	 * CONNECT, ABSOLUTE: the Host header (if any) names the same host as the
	 * target, case-insensitively, IP literals compared as addresses, and the
	 * same port (a Host without port means the default port; under CONNECT
	 * the port is then not compared).  ORIGIN: always true.
	 */
	bool host_match;
	enum sniff_http_body body;
	uint64_t content_length; /* SNIFF_BODY_LENGTH */
	const char *reason;      /* BAD: a static string saying why */
};

/*
 * Parses the request head at buf (len bytes received so far).
 *   NEED_MORE  the head is not complete yet (nothing wrong seen so far)
 *   OK         *out is filled in; buf[out->head_len ..] is body or the next request
 *   BAD        malformed: non-token method, a target that is not a valid
 *              authority / origin-form / http absolute URI (https:// and
 *              userinfo refused), a version other than HTTP/1.x, a bad or
 *              missing port, lines not ended by CRLF, a NUL or other control
 *              byte, obs-fold, whitespace before ':', a duplicate or bad
 *              Host, no Host for origin-form, conflicting body framing
 *   TOO_LARGE  no end of head within SNIFF_HTTP_HEAD_MAX bytes
 * A request line found bad is reported as soon as it is complete; a method
 * with a non-token byte as soon as that byte arrives (TLS on port 80, say).
 * Stateless: cost O(min(len, SNIFF_HTTP_HEAD_MAX)) per call.
 */
enum sniff_result sniff_http(const char *buf, size_t len, struct sniff_http *out);

/*
 * Plain-HTTP proxying forwards the head rewritten: for a SNIFF_HTTP_ABSOLUTE
 * request h parsed from buf, writes the origin-form request line
 * "METHOD /path HTTP/1.x\r\n" and, when the request had no Host header,
 * "Host: authority\r\n" into out (cap bytes; not NUL-terminated).  Send that,
 * then buf[h->line_len ..] unchanged.  ORIGIN heads are forwarded as they
 * are; CONNECT heads are not forwarded.  Returns the length written,
 * -EINVAL for another kind, -ENOSPC when cap is too small.
 */
int sniff_http_rewrite(const char *buf, const struct sniff_http *h, char *out, size_t cap);

/* ---- SOCKS5 (RFC 1928), "no authentication required" only ----------------------- */

enum sniff_socks_state {
	SNIFF_SOCKS_GREETING = 0, /* waiting for VER NMETHODS METHODS */
	SNIFF_SOCKS_REQUEST = 1,  /* method chosen; waiting for VER CMD RSV ATYP DST.ADDR DST.PORT */
	SNIFF_SOCKS_DONE = 2,     /* request parsed, or refused */
	SNIFF_SOCKS_STATE_MAX
};

/* RFC 1928 §6 reply codes. */
enum sniff_socks_rep {
	SNIFF_SOCKS_SUCCEEDED = 0x00,
	SNIFF_SOCKS_GENERAL_FAILURE = 0x01,
	SNIFF_SOCKS_NOT_ALLOWED = 0x02, /* connection not allowed by ruleset */
	SNIFF_SOCKS_NET_UNREACHABLE = 0x03,
	SNIFF_SOCKS_HOST_UNREACHABLE = 0x04,
	SNIFF_SOCKS_CONN_REFUSED = 0x05,
	SNIFF_SOCKS_TTL_EXPIRED = 0x06,
	SNIFF_SOCKS_CMD_UNSUPPORTED = 0x07,
	SNIFF_SOCKS_ATYP_UNSUPPORTED = 0x08,
	SNIFF_SOCKS_REP_MAX
};

/* RFC 1928 §5 address types. */
enum sniff_socks_atyp {
	SNIFF_SOCKS_ATYP_IPV4 = 1,
	SNIFF_SOCKS_ATYP_DOMAIN = 3,
	SNIFF_SOCKS_ATYP_IPV6 = 4,
};

/* Length of every reply sniff_socks_reply() writes. */
#define SNIFF_SOCKS_REPLY_LEN 10

struct sniff_socks {
	enum sniff_socks_state state;
	size_t consumed; /* bytes of the stream parsed: greeting, then greeting + request */
	/*
	 * Bytes to send to the client now, whatever the result: the method
	 * selection (05 00, or 05 FF when "no authentication" was not offered),
	 * and/or a failure reply to a bad request (both when a greeting and a
	 * bad request arrive together).  Set by each call; 0 = nothing.
	 */
	uint8_t reply[2 + SNIFF_SOCKS_REPLY_LEN];
	size_t reply_len;
	enum sniff_result result; /* DONE: the result given, repeated by later calls */
	/* OK: the destination.  DOMAIN: the name as given, lower-cased, one
	 * trailing '.' removed; IPV4/IPV6: the address in text (inet_ntop(3)). */
	uint8_t atyp;
	char host[SNIFF_HOST_MAX];
	struct netaddr addr; /* IPV4, IPV6 (an IPv4-mapped address becomes IPv4) */
	uint16_t port;       /* 1..65535 */
	const char *reason;  /* BAD: a static string */
};

/* Starts a connection's negotiation. */
void sniff_socks_init(struct sniff_socks *s);

/*
 * Advances the negotiation over buf (len bytes received so far from the
 * connection's first byte; len never shrinks between calls).  After every
 * call send s->reply[0 .. s->reply_len) first.
 *   NEED_MORE  incomplete greeting or request
 *   OK         a CONNECT request: atyp, host, addr, port; buf[s->consumed ..]
 *              is data the client sent early.  Decide, then send
 *              sniff_socks_reply() with SUCCEEDED or a failure code.
 *   BAD        version not 5; no "no authentication" method (reply 05 FF:
 *              username/password, RFC 1929, is not supported); a command
 *              other than CONNECT (reply 07); an unknown address type (08);
 *              a nonzero reserved byte, an empty, too long or malformed
 *              domain, port 0 (01).  Close after sending the reply.
 * Calling again after OK or BAD returns the same result and no reply.
 */
enum sniff_result sniff_socks(struct sniff_socks *s, const uint8_t *buf, size_t len);

/*
 * Writes the 10-byte reply "05 rep 00 01 0.0.0.0 0" (RFC 1928 §6: BND.ADDR
 * and BND.PORT zero; clients connect through us, the bound address tells
 * them nothing) into out.  Returns SNIFF_SOCKS_REPLY_LEN.
 */
size_t sniff_socks_reply(uint8_t out[SNIFF_SOCKS_REPLY_LEN], enum sniff_socks_rep rep);

/* ---- TLS ClientHello server_name (RFC 8446 §4.1.2, §5.1; RFC 6066 §3) ----------- */

/* ClientHello bound (handshake body bytes): a larger one is TOO_LARGE. */
#define SNIFF_TLS_HELLO_MAX 16384
/* A ClientHello fragmented over more handshake records than this is BAD. */
#define SNIFF_TLS_RECORDS_MAX 64
/* The most bytes sniff_tls() can need buffered before it decides. */
#define SNIFF_TLS_BUF_MAX (SNIFF_TLS_HELLO_MAX + 4 + 5 * SNIFF_TLS_RECORDS_MAX)

struct sniff_tls {
	char host[SNIFF_HOST_MAX]; /* OK: the host_name, lower-cased, one trailing '.' removed */
	uint16_t legacy_version;   /* ClientHello.legacy_version (0x0303 for TLS 1.2 and 1.3) */
	bool ech;                  /* an encrypted_client_hello extension (the SNI is the outer name) */
	size_t hello_end;          /* bytes of buf up to the end of the ClientHello */
	const char *reason;        /* BAD, TOO_LARGE: a static string */
};

/*
 * Peeks at the first bytes of a TLS connection (buf, len bytes so far)
 * without consuming them.  The ClientHello may be fragmented over up to
 * SNIFF_TLS_RECORDS_MAX handshake records (RFC 8446 §5.1); it is reassembled
 * on the stack.
 *   NEED_MORE  the ClientHello is not complete
 *   OK         it carries a server_name with one host_name: out->host
 *   NONE       it is well formed and has no server_name extension
 *   BAD        not a TLS handshake record (or SSLv2), a first message that is
 *              not a ClientHello, a length that does not fit its container,
 *              a zero-length or oversized record, too many fragments, a
 *              duplicate server_name, a ServerNameList that is not exactly
 *              one host_name (as OpenSSL requires), a bad host name
 *   TOO_LARGE  the ClientHello is longer than SNIFF_TLS_HELLO_MAX
 * Reads nothing outside buf[0 .. len).  Cost O(len) per call; the body is
 * parsed only once it is complete.
 */
enum sniff_result sniff_tls(const uint8_t *buf, size_t len, struct sniff_tls *out);

#endif
