/* addr.h — the egress proxy's view of IP destinations: every spelling of an IP literal canonicalised, special-purpose and host-own addresses classified. */
#ifndef AIRLOCK_PROXY_ADDR_H
#define AIRLOCK_PROXY_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "policy/netaddr.h"

/*
 * Parses a destination host as an IP literal in any spelling a resolver or
 * libc would accept, so a rule on 127.0.0.1 cannot be dodged by writing it
 * differently: everything netaddr_parse() takes (inet_aton(3) forms
 * "2130706433", "0177.0.0.1", "0x7f.1", "127.1"; IPv6, bracketed or not;
 * IPv4-mapped "::ffff:127.0.0.1" becomes IPv4), plus one trailing '.' on an
 * IPv4 spelling ("127.0.0.1." — WHATWG URL and some resolvers take it as the
 * address) and an IPv6 zone id ("fe80::1%eth0", "[fe80::1%25eth0]"), which
 * is dropped.  host is len bytes, not NUL-terminated.
 * Returns 0, or -EINVAL when host is not an IP literal (then it is a name).
 */
int addr_parse(const char *host, size_t len, struct netaddr *out);

/* Room for any addr_format() text with its NUL (INET6_ADDRSTRLEN). */
#define ADDR_TEXT_MAX 46

/*
 * Writes the canonical text of a: dotted quad, or RFC 5952 IPv6 (what
 * inet_ntop(3) gives), without brackets, into out (cap bytes, NUL-terminated).
 * This is the text to hand to policy_decide_connect().  Returns its length,
 * -EAFNOSUPPORT for a family other than 4 or 6, -ENOSPC when cap is too small.
 */
int addr_format(const struct netaddr *a, char *out, size_t cap);

/*
 * Why a destination address is not the public internet.  ADDR_PUBLIC (0)
 * means none of the ranges below holds it.  Ranges are from the IANA IPv4
 * and IPv6 Special-Purpose Address Registries (RFC 6890 and its updates
 * RFC 8190), with the RFC that made each one cited in addr.c's table.
 */
enum addr_class {
	ADDR_PUBLIC = 0,
	ADDR_UNSPECIFIED,    /* 0.0.0.0, :: (a connect() to it reaches this host) */
	ADDR_THIS_NETWORK,   /* 0.0.0.0/8 */
	ADDR_LOOPBACK,       /* 127.0.0.0/8, ::1 */
	ADDR_PRIVATE,        /* 10/8, 172.16/12, 192.168/16 (RFC 1918) */
	ADDR_SHARED,         /* 100.64.0.0/10, carrier-grade NAT (RFC 6598) */
	ADDR_LINK_LOCAL,     /* 169.254.0.0/16, fe80::/10 */
	ADDR_METADATA,       /* cloud instance metadata: 169.254.169.254, fd00:ec2::254, 100.100.100.200 */
	ADDR_PROTOCOL,       /* 192.0.0.0/24, 2001::/23: IETF protocol assignments */
	ADDR_FAKE_DNS,       /* 198.18.0.0/15: benchmarking (RFC 2544), airlock's fake DNS answers */
	ADDR_MULTICAST,      /* 224.0.0.0/4, ff00::/8 */
	ADDR_BROADCAST,      /* 255.255.255.255 */
	ADDR_RESERVED,       /* 240.0.0.0/4 */
	ADDR_UNIQUE_LOCAL,   /* fc00::/7 (RFC 4193) */
	ADDR_SITE_LOCAL,     /* fec0::/10, deprecated (RFC 3879) */
	ADDR_DISCARD,        /* 100::/64 discard-only (RFC 6666) */
	ADDR_NAT64_LOCAL,    /* 64:ff9b:1::/48 local-use IPv4/IPv6 translation (RFC 8215) */
	ADDR_HOST,           /* an address of one of this host's interfaces */
	ADDR_CLASS_MAX
};

/* "public", "unspecified", "loopback", "metadata", "host", ...; "?" out of range. */
const char *addr_class_name(enum addr_class c);

/*
 * Classifies a destination address.  The most specific (longest-prefix)
 * special-purpose range wins, so 169.254.169.254 is ADDR_METADATA rather
 * than ADDR_LINK_LOCAL.  An IPv6 address embedding an IPv4 one
 * (IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96,
 * 6to4 2002::/16) is classified by its IPv4 address when that is not public.
 * Then a is compared with host_addrs[0 .. n) (addr_host_addresses()): a
 * match is ADDR_HOST.  Documentation ranges (192.0.2.0/24, 198.51.100.0/24,
 * 203.0.113.0/24, 2001:db8::/32, 3fff::/20) are deliberately ADDR_PUBLIC:
 * they never route on the internet, and tests play the internet there.
 * Returns ADDR_PUBLIC when the proxy may treat a as the internet.
 */
enum addr_class addr_restricted(const struct netaddr *a, const struct netaddr *host_addrs,
				size_t n);

/* One row of the special-purpose range table. */
struct addr_range {
	const char *cidr;       /* "169.254.0.0/16" */
	enum addr_class class;
	const char *rfc;        /* where it is defined: "RFC 3927" */
};

/* The table addr_restricted() uses, for tests and `airlock doctor`: *n rows. */
const struct addr_range *addr_ranges(size_t *n);

/*
 * Lists the addresses of this host's interfaces (getifaddrs(3)): IPv4 and
 * IPv6, IPv4-mapped ones as IPv4, without duplicates.  A name that resolves
 * to one of them would reach the host's own services.  *out is a
 * malloc(3)ed array of *n entries for the caller to free(3) (NULL when *n is
 * 0).  Returns 0 or -errno (from getifaddrs, or -ENOMEM).
 */
int addr_host_addresses(struct netaddr **out, size_t *n);

#endif
