/* netaddr.h — IP literals and network destinations (host:port patterns) for policy rules. */
#ifndef AIRLOCK_POLICY_NETADDR_H
#define AIRLOCK_POLICY_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* An IP address.  IPv4 is kept in bytes[0..3]; IPv4-mapped IPv6 is stored as IPv4. */
struct netaddr {
	uint8_t family; /* 4 or 6 */
	uint8_t bytes[16];
};

/*
 * Parses len bytes at s as an IP literal: IPv4 in every form inet_aton(3)
 * accepts (dotted quad, "127.1", "0x7f.1", "2130706433", octal parts) or
 * IPv6 as inet_pton(3) accepts it, optionally inside '[' ']'.  IPv4-mapped
 * IPv6 (::ffff:a.b.c.d) becomes IPv4.  Returns 0, or -EINVAL when s is not an
 * IP literal.  No allocation.
 */
int netaddr_parse(const char *s, size_t len, struct netaddr *out);

/*
 * The one place where an IPv4-mapped address (::ffff:a.b.c.d, RFC 4291
 * §2.5.5.2) becomes IPv4: stores the 16 bytes of an IPv6 address (network
 * order) into out, as the IPv4 address it maps or as IPv6.  A rule on
 * 10.0.0.1 then holds however a program spells it.  No allocation.
 */
void netaddr_from_ipv6(const uint8_t bytes[16], struct netaddr *out);

struct sockaddr;

/*
 * Converts an AF_INET or AF_INET6 sockaddr (a connect(2) destination,
 * getsockname(2) of a transparent connection, getifaddrs(3)) to a netaddr,
 * IPv4-mapped IPv6 as IPv4.  Returns 0 or -EAFNOSUPPORT.  No allocation;
 * errno untouched (the shim calls it inside its hooks).
 */
int netaddr_from_sockaddr(const struct sockaddr *sa, struct netaddr *out);

/* True when a lies in the network net/prefix (prefix in bits, 0..32 or 0..128, same family). */
bool netaddr_in(const struct netaddr *a, const struct netaddr *net, unsigned prefix);

/* How a destination pattern names its host. */
enum netdest_host {
	NETDEST_ANY = 0,    /* "*" */
	NETDEST_NAME = 1,   /* a DNS name, compared case-insensitively */
	NETDEST_SUFFIX = 2, /* "*.example.com": any name below example.com */
	NETDEST_GLOB = 3,   /* another glob over the lower-cased name */
	NETDEST_ADDR = 4,   /* an IP literal or CIDR range */
	NETDEST_HOST_MAX
};

/* A parsed `destination:` pattern. */
struct netdest {
	enum netdest_host kind;
	char host[256];     /* NAME: the lower-cased name; SUFFIX: the domain; GLOB: the glob */
	struct netaddr net; /* ADDR */
	unsigned prefix;    /* ADDR: prefix length in bits */
	unsigned port;      /* 1..65535, or 0 = any port */
};

/*
 * Parses a destination pattern: "host:port", "host" (any port), "*:443",
 * "*.example.com:443", "10.0.0.0/8", "[2001:db8::1]:443", "2001:db8::/32"
 * (an unbracketed IPv6 literal takes no port).  port is 1..65535 or "*".
 * Names are lower-cased and lose one trailing '.'.  Under POLICY_MATCH_EXACT
 * the host is a literal name or address (no wildcards); prefix and regex are
 * not supported for destinations.  Returns 0, or -EINVAL with a message in
 * msg (msglen bytes).
 */
int netdest_parse(const char *text, enum policy_match m, struct netdest *out, char *msg,
		  size_t msglen);

/*
 * Normalises a host for matching: strips '[' ']' around an IPv6 literal and
 * one trailing '.', lower-cases ASCII, into out (cap bytes, NUL-terminated).
 * Returns the length, or -ENAMETOOLONG when it does not fit.
 */
int netaddr_host_normalise(const char *host, char *out, size_t cap);

#endif
