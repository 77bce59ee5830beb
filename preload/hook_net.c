/* hook_net.c — the shim's network hooks: connect(2), and sendto(2) / sendmsg(2) with a destination. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/netaddr.h"
#include "preload/shim.h"

/* Port 3128 is the sandbox's HTTP proxy, 1080 its SOCKS5 proxy (launcher/sandbox/netns.h). */
#define PROXY_HTTP_PORT 3128
#define PROXY_SOCKS_PORT 1080

/* 198.18.0.0/15 (also IPv4-mapped): the fake addresses the sandbox's DNS hands out (proxy/dns.h). */
static bool fake_address(const struct sockaddr *sa)
{
	struct netaddr a;
	uint32_t v4;
	if (netaddr_from_sockaddr(sa, &a) != 0 || a.family != 4)
		return false;
	memcpy(&v4, a.bytes, 4);
	return (ntohl(v4) >> 17) == (0xc6120000u >> 17);
}

/*
 * True for loopback port 53 — the sandbox's own resolver, which answers fake
 * addresses and never forwards — and, behind the proxy, for the proxy's own
 * ports and the fake addresses: the proxy decides and logs the destination
 * (the name behind a fake address, the one a client names to a proxy port).
 */
static bool local_service(const struct sockaddr *sa)
{
	unsigned port;
	bool loopback;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		port = ntohs(in->sin_port);
		loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		port = ntohs(in6->sin6_port);
		loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	if (fake_address(sa))
		return shim_behind_proxy(); /* the proxy maps it back to its name and decides that */
	if (!loopback)
		return false;
	return port == 53 ||
	       ((port == PROXY_HTTP_PORT || port == PROXY_SOCKS_PORT) && shim_behind_proxy());
}

/*
 * Decides a connection to addr; true when it must not happen (errno then
 * ECONNREFUSED, as connect(2) reports a refused destination).  Only IP
 * destinations are network rules' business: AF_UNIX and the rest pass.
 */
static bool net_denied(const struct sockaddr *addr, socklen_t len)
{
	char host[INET6_ADDRSTRLEN];
	unsigned port;
	if (!addr || len < sizeof(sa_family_t))
		return false;
	if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)addr;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		port = ntohs(in->sin_port);
	} else if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)addr;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		port = ntohs(in6->sin6_port);
	} else {
		return false;
	}
	if (port == 0 || local_service(addr) || !shim_enter())
		return false;
	int saved = errno;
	const struct policy_image *img = shim_image();
	struct shim_action a = { .source = SHIM_CONNECT, .host = host, .port = port };
	a.v = img ? policy_decide_connect(img, host, port) : (struct policy_verdict){ POLICY_DENY, -1 };
	enum policy_decision d = shim_resolve(&a);
	shim_leave();
	errno = d == POLICY_ALLOW ? saved : ECONNREFUSED;
	return d != POLICY_ALLOW;
}

#define MISSING(name) SHIM_MISSING(name)

SHIM_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (MISSING(connect)) {
		errno = ENOSYS;
		return -1;
	}
	return net_denied(addr, len) ? -1 : real_connect(fd, addr, len);
}

SHIM_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			   const struct sockaddr *addr, socklen_t len)
{
	if (MISSING(sendto)) {
		errno = ENOSYS;
		return -1;
	}
	return net_denied(addr, len) ? -1 : real_sendto(fd, buf, n, flags, addr, len);
}

SHIM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (MISSING(sendmsg)) {
		errno = ENOSYS;
		return -1;
	}
	if (msg && net_denied(msg->msg_name, msg->msg_namelen))
		return -1;
	return real_sendmsg(fd, msg, flags);
}
