/* addr.c — IP literal canonicalisation, special-purpose address classification and this host's own addresses for the egress proxy. */
#include "proxy/addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int addr_parse(const char *host, size_t len, struct netaddr *out)
{
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	const char *pct = memchr(host, '%', len);
	if (pct) { /* a zone id (RFC 4007 §11; "%25" inside a URI, RFC 6874) */
		size_t at = (size_t)(pct - host);
		if (at + 1 == len || !memchr(host, ':', at))
			return -EINVAL;
		len = at;
	}
	if (netaddr_parse(host, len, out) == 0)
		return 0;
	if (!pct && len > 1 && host[len - 1] == '.' && !memchr(host, ':', len) &&
	    netaddr_parse(host, len - 1, out) == 0)
		return 0;
	return -EINVAL;
}

int addr_format(const struct netaddr *a, char *out, size_t cap)
{
	char text[ADDR_TEXT_MAX];
	if (a->family != 4 && a->family != 6)
		return -EAFNOSUPPORT;
	if (!inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->bytes, text, sizeof text))
		return -errno;
	size_t n = strlen(text);
	if (n >= cap)
		return -ENOSPC;
	memcpy(out, text, n + 1);
	return (int)n;
}

/* ---- classification -------------------------------------------------------------- */

const char *addr_class_name(enum addr_class c)
{
	static const char *const names[ADDR_CLASS_MAX] = {
		[ADDR_PUBLIC] = "public",
		[ADDR_UNSPECIFIED] = "unspecified",
		[ADDR_THIS_NETWORK] = "this-network",
		[ADDR_LOOPBACK] = "loopback",
		[ADDR_PRIVATE] = "private",
		[ADDR_SHARED] = "shared-cgnat",
		[ADDR_LINK_LOCAL] = "link-local",
		[ADDR_METADATA] = "metadata",
		[ADDR_PROTOCOL] = "ietf-protocol",
		[ADDR_FAKE_DNS] = "fake-dns",
		[ADDR_MULTICAST] = "multicast",
		[ADDR_BROADCAST] = "broadcast",
		[ADDR_RESERVED] = "reserved",
		[ADDR_UNIQUE_LOCAL] = "unique-local",
		[ADDR_SITE_LOCAL] = "site-local",
		[ADDR_DISCARD] = "discard-only",
		[ADDR_NAT64_LOCAL] = "nat64-local",
		[ADDR_HOST] = "host",
	};
	return (unsigned)c < ADDR_CLASS_MAX ? names[c] : "?";
}

/*
 * IANA IPv4 / IPv6 Special-Purpose Address Registries (RFC 6890 §2.2.2,
 * §2.2.3, as updated by RFC 8190), the ranges not "globally reachable",
 * plus the well-known cloud metadata addresses.  Not here, on purpose: the
 * documentation ranges (RFC 5737, RFC 3849, RFC 9637: tests play the
 * internet there), and NAT64 64:ff9b::/96 and 6to4 2002::/16, which are
 * globally reachable: their embedded IPv4 address is classified instead.
 * 2001::/23 is restricted whole, Teredo's 2001::/32 included.
 */
static const struct addr_range ranges[] = {
	{ "0.0.0.0/8", ADDR_THIS_NETWORK, "RFC 791 §3.2" },
	{ "0.0.0.0/32", ADDR_UNSPECIFIED, "RFC 1122 §3.2.1.3" },
	{ "10.0.0.0/8", ADDR_PRIVATE, "RFC 1918" },
	{ "100.64.0.0/10", ADDR_SHARED, "RFC 6598" },
	{ "100.100.100.200/32", ADDR_METADATA, "Alibaba Cloud instance metadata" },
	{ "127.0.0.0/8", ADDR_LOOPBACK, "RFC 1122 §3.2.1.3" },
	{ "169.254.0.0/16", ADDR_LINK_LOCAL, "RFC 3927" },
	{ "169.254.169.254/32", ADDR_METADATA, "AWS, GCP, Azure, OpenStack instance metadata" },
	{ "172.16.0.0/12", ADDR_PRIVATE, "RFC 1918" },
	{ "192.0.0.0/24", ADDR_PROTOCOL, "RFC 6890 §2.2.2" },
	{ "192.168.0.0/16", ADDR_PRIVATE, "RFC 1918" },
	{ "198.18.0.0/15", ADDR_FAKE_DNS, "RFC 2544" },
	{ "224.0.0.0/4", ADDR_MULTICAST, "RFC 5771" },
	{ "240.0.0.0/4", ADDR_RESERVED, "RFC 1112 §4" },
	{ "255.255.255.255/32", ADDR_BROADCAST, "RFC 919 §7, RFC 8190" },
	{ "::/128", ADDR_UNSPECIFIED, "RFC 4291 §2.5.2" },
	{ "::1/128", ADDR_LOOPBACK, "RFC 4291 §2.5.3" },
	{ "64:ff9b:1::/48", ADDR_NAT64_LOCAL, "RFC 8215" },
	{ "100::/64", ADDR_DISCARD, "RFC 6666" },
	{ "2001::/23", ADDR_PROTOCOL, "RFC 2928" },
	{ "fc00::/7", ADDR_UNIQUE_LOCAL, "RFC 4193" },
	{ "fd00:ec2::254/128", ADDR_METADATA, "AWS instance metadata over IPv6" },
	{ "fe80::/10", ADDR_LINK_LOCAL, "RFC 4291 §2.5.6" },
	{ "fec0::/10", ADDR_SITE_LOCAL, "RFC 3879" },
	{ "ff00::/8", ADDR_MULTICAST, "RFC 4291 §2.7" },
};

const struct addr_range *addr_ranges(size_t *n)
{
	*n = sizeof ranges / sizeof ranges[0];
	return ranges;
}

/* "net/prefix" from the table; the table is constant and tested, so a bad row is never matched. */
static bool range_parse(const char *cidr, struct netaddr *net, unsigned *prefix)
{
	const char *slash = strchr(cidr, '/');
	if (!slash || netaddr_parse(cidr, (size_t)(slash - cidr), net) != 0)
		return false;
	*prefix = (unsigned)strtoul(slash + 1, NULL, 10);
	return *prefix <= (net->family == 4 ? 32u : 128u);
}

/* The longest-prefix row holding a, or ADDR_PUBLIC. */
static enum addr_class table_class(const struct netaddr *a)
{
	enum addr_class best = ADDR_PUBLIC;
	unsigned best_prefix = 0;
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		struct netaddr net;
		unsigned prefix;
		if (!range_parse(ranges[i].cidr, &net, &prefix) || !netaddr_in(a, &net, prefix))
			continue;
		if (best == ADDR_PUBLIC || prefix > best_prefix) {
			best = ranges[i].class;
			best_prefix = prefix;
		}
	}
	return best;
}

/* IPv6 prefixes that carry an IPv4 address, and where. */
static const struct {
	uint8_t prefix[12];
	unsigned len;    /* bytes of prefix to compare */
	unsigned offset; /* where the IPv4 address sits */
} embeds[] = {
	{ { 0 }, 12, 12 },                                      /* ::/96 IPv4-compatible, RFC 4291 §2.5.5.1 */
	{ { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 }, 12, 12 }, /* ::ffff:0:0/96 SIIT, RFC 2765 */
	{ { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 }, 12, 12 }, /* 64:ff9b::/96 NAT64, RFC 6052 */
	{ { 0x20, 0x02 }, 2, 2 },                               /* 2002::/16 6to4, RFC 3056 */
};

static bool embedded_v4(const struct netaddr *a, struct netaddr *v4)
{
	if (a->family != 6)
		return false;
	for (size_t i = 0; i < sizeof embeds / sizeof embeds[0]; i++) {
		if (memcmp(a->bytes, embeds[i].prefix, embeds[i].len) != 0)
			continue;
		memset(v4, 0, sizeof *v4);
		v4->family = 4;
		memcpy(v4->bytes, a->bytes + embeds[i].offset, 4);
		return true;
	}
	return false;
}

static bool is_host(const struct netaddr *a, const struct netaddr *host_addrs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct netaddr *h = &host_addrs[i];
		if (h->family == a->family &&
		    memcmp(h->bytes, a->bytes, a->family == 4 ? 4 : 16) == 0)
			return true;
	}
	return false;
}

static enum addr_class classify(const struct netaddr *a, const struct netaddr *host_addrs, size_t n)
{
	enum addr_class c = table_class(a);
	if (c != ADDR_PUBLIC)
		return c;
	return is_host(a, host_addrs, n) ? ADDR_HOST : ADDR_PUBLIC;
}

enum addr_class addr_restricted(const struct netaddr *a, const struct netaddr *host_addrs,
				size_t n)
{
	struct netaddr v4;
	enum addr_class c = classify(a, host_addrs, n);
	if (c == ADDR_PUBLIC && embedded_v4(a, &v4))
		c = classify(&v4, host_addrs, n);
	return c;
}

/* ---- this host's addresses ------------------------------------------------------- */

static void add_unique(struct netaddr *list, size_t *n, const struct netaddr *a)
{
	if (!is_host(a, list, *n))
		list[(*n)++] = *a;
}

int addr_host_addresses(struct netaddr **out, size_t *n)
{
	struct ifaddrs *ifs, *i;
	size_t count = 0;
	*out = NULL;
	*n = 0;
	if (getifaddrs(&ifs) != 0)
		return -errno;
	for (i = ifs; i; i = i->ifa_next)
		count += i->ifa_addr != NULL;
	struct netaddr *list = count ? calloc(count, sizeof *list) : NULL;
	if (count && !list) {
		freeifaddrs(ifs);
		return -ENOMEM;
	}
	for (i = ifs; i; i = i->ifa_next) {
		struct netaddr a;
		if (i->ifa_addr && netaddr_from_sockaddr(i->ifa_addr, &a) == 0)
			add_unique(list, n, &a);
	}
	freeifaddrs(ifs);
	if (*n == 0) {
		free(list);
		list = NULL;
	}
	*out = list;
	return 0;
}
