/* netaddr.c — IP literal parsing, CIDR tests and destination pattern parsing for network rules. */
#include "policy/netaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"

void netaddr_from_ipv6(const uint8_t bytes[16], struct netaddr *out)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	memset(out, 0, sizeof *out);
	if (memcmp(bytes, v4mapped, sizeof v4mapped) == 0) {
		out->family = 4;
		memcpy(out->bytes, bytes + 12, 4);
	} else {
		out->family = 6;
		memcpy(out->bytes, bytes, 16);
	}
}

int netaddr_from_sockaddr(const struct sockaddr *sa, struct netaddr *out)
{
	if (sa->sa_family == AF_INET6) {
		netaddr_from_ipv6(((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr, out);
		return 0;
	}
	memset(out, 0, sizeof *out);
	if (sa->sa_family != AF_INET)
		return -EAFNOSUPPORT;
	out->family = 4;
	memcpy(out->bytes, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	return 0;
}

int netaddr_parse(const char *s, size_t len, struct netaddr *out)
{
	char buf[64];
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof buf)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\0' || s[i] == '\r' ||
		    s[i] == '\v' || s[i] == '\f')
			return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(out, 0, sizeof *out);
	if (memchr(buf, ':', len)) {
		uint8_t a6[16];
		if (inet_pton(AF_INET6, buf, a6) != 1)
			return -EINVAL;
		netaddr_from_ipv6(a6, out);
		return 0;
	}
	struct in_addr a4;
	if (inet_aton(buf, &a4) == 0)
		return -EINVAL;
	out->family = 4;
	memcpy(out->bytes, &a4.s_addr, 4);
	return 0;
}

bool netaddr_in(const struct netaddr *a, const struct netaddr *net, unsigned prefix)
{
	if (a->family != net->family)
		return false;
	unsigned full = prefix / 8, rest = prefix % 8;
	if (memcmp(a->bytes, net->bytes, full) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff00u >> rest);
	return (a->bytes[full] & mask) == (net->bytes[full] & mask);
}

int netaddr_host_normalise(const char *host, char *out, size_t cap)
{
	size_t len = strlen(host);
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len > 1 && host[len - 1] == '.')
		len--;
	if (len >= cap)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < len; i++) {
		char c = host[i];
		out[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
	}
	out[len] = '\0';
	return (int)len;
}

static int fail(char *msg, size_t msglen, const char *fmt, const char *arg)
{
	if (msglen)
		snprintf(msg, msglen, fmt, arg);
	return -EINVAL;
}

static int parse_port(const char *s, unsigned *port, char *msg, size_t msglen)
{
	if (strcmp(s, "*") == 0) {
		*port = 0;
		return 0;
	}
	unsigned long v = 0;
	if (*s == '\0' || strlen(s) > 5)
		return fail(msg, msglen, "bad port '%s' (expected 1-65535 or '*')", s);
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return fail(msg, msglen, "bad port '%s' (expected 1-65535 or '*')", s);
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > 65535)
		return fail(msg, msglen, "bad port '%s' (expected 1-65535 or '*')", s);
	*port = (unsigned)v;
	return 0;
}

static int parse_addr(const char *host, struct netdest *out, char *msg, size_t msglen)
{
	const char *slash = strchr(host, '/');
	size_t alen = slash ? (size_t)(slash - host) : strlen(host);
	if (netaddr_parse(host, alen, &out->net) < 0)
		return fail(msg, msglen, "bad IP address in destination '%s'", host);
	bool mapped = out->net.family == 4 && memchr(host, ':', alen) != NULL;
	unsigned max = out->net.family == 4 && !mapped ? 32 : 128;
	out->prefix = max;
	if (slash) {
		char *end;
		const char *digits = slash + 1;
		unsigned long v = strtoul(digits, &end, 10);
		if (*digits < '0' || *digits > '9' || *end || v > max)
			return fail(msg, msglen, "bad CIDR prefix length in '%s'", host);
		out->prefix = (unsigned)v;
		/* an IPv4-mapped IPv6 network keeps its meaning as IPv4 */
		if (mapped) {
			if (v < 96)
				return fail(msg, msglen, "bad CIDR prefix length in '%s'", host);
			out->prefix = (unsigned)v - 96;
		}
	}
	out->kind = NETDEST_ADDR;
	return 0;
}

static bool valid_name(const char *h)
{
	size_t len = strlen(h), label = 0;
	if (len == 0 || len > 253)
		return false;
	for (const char *p = h; *p; p++) {
		char c = *p;
		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0;
}

static int parse_host(const char *host, enum policy_match m, struct netdest *out, char *msg,
		      size_t msglen)
{
	bool wild = strpbrk(host, "*?[\\") != NULL;
	if (m == POLICY_MATCH_EXACT && wild)
		return fail(msg, msglen, "wildcard in destination '%s' under match: exact", host);
	if (strcmp(host, "*") == 0) {
		out->kind = NETDEST_ANY;
		return 0;
	}
	struct netaddr probe;
	if (!wild && (strchr(host, ':') || strchr(host, '/') ||
		      netaddr_parse(host, strlen(host), &probe) == 0))
		return parse_addr(host, out, msg, msglen);
	if (netaddr_host_normalise(host, out->host, sizeof out->host) < 0)
		return fail(msg, msglen, "host name too long in destination '%s'", host);
	if (strncmp(out->host, "*.", 2) == 0 && !strpbrk(out->host + 2, "*?[\\")) {
		memmove(out->host, out->host + 2, strlen(out->host + 2) + 1);
		if (!valid_name(out->host))
			return fail(msg, msglen, "bad domain in destination '%s'", host);
		out->kind = NETDEST_SUFFIX;
		return 0;
	}
	if (wild) {
		char why[128];
		if (glob_check(out->host, GLOB_TEXT, why, sizeof why) < 0)
			return fail(msg, msglen, "%s", why);
		out->kind = NETDEST_GLOB;
		return 0;
	}
	if (!valid_name(out->host))
		return fail(msg, msglen, "bad host name in destination '%s'", host);
	out->kind = NETDEST_NAME;
	return 0;
}

int netdest_parse(const char *text, enum policy_match m, struct netdest *out, char *msg,
		  size_t msglen)
{
	char host[300];
	const char *port = NULL;
	memset(out, 0, sizeof *out);
	if (m == POLICY_MATCH_PREFIX || m == POLICY_MATCH_REGEX)
		return fail(msg, msglen, "match: %s is not supported for network destinations",
			    policy_match_name(m));
	size_t len = strlen(text);
	if (len == 0)
		return fail(msg, msglen, "%sempty destination", "");
	if (len >= sizeof host)
		return fail(msg, msglen, "%sdestination too long", "");
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close)
			return fail(msg, msglen, "unterminated '[' in destination '%s'", text);
		size_t hlen = (size_t)(close - text - 1);
		memcpy(host, text + 1, hlen);
		const char *after = close + 1;
		if (*after == '/') { /* "[2001:db8::]/32" */
			size_t plen = 1 + strspn(after + 1, "0123456789");
			memcpy(host + hlen, after, plen);
			hlen += plen;
			after += plen;
		}
		host[hlen] = '\0';
		if (*after == ':')
			port = after + 1;
		else if (*after != '\0')
			return fail(msg, msglen, "unexpected text after ']' in destination '%s'", text);
		if (!strchr(host, ':'))
			return fail(msg, msglen, "'[...]' must hold an IPv6 address in '%s'", text);
	} else {
		const char *colon = strchr(text, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL; /* a bare IPv6 literal or network: no port */
		size_t hlen = colon ? (size_t)(colon - text) : len;
		memcpy(host, text, hlen);
		host[hlen] = '\0';
		if (colon)
			port = colon + 1;
	}
	if (host[0] == '\0')
		return fail(msg, msglen, "empty host in destination '%s'", text);
	if (port && parse_port(port, &out->port, msg, msglen) < 0)
		return -EINVAL;
	return parse_host(host, m, out, msg, msglen);
}
