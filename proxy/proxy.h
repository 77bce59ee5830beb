/* proxy.h — the egress proxy: the sandbox's only way out, deciding each connection by destination host:port. */
#ifndef AIRLOCK_PROXY_PROXY_H
#define AIRLOCK_PROXY_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/*
 * The proxy serves listening sockets that live in the sandbox's network
 * namespace (launcher/sandbox/netns.c makes them: every address there is local, so a
 * connect to any address lands on one of them) from the launcher, which
 * stays in the host's namespace and is the only thing that can reach out.
 * For each connection it learns the destination before anything is resolved
 * for real — from an HTTP CONNECT or absolute-URI request, a SOCKS5 request,
 * or, for a transparent connection, the original destination address mapped
 * back to its name through the fake DNS table, checked against the TLS SNI
 * (port 443) or the Host header (port 80); to a real address, the name the
 * SNI or Host gives, connected only when the proxy's own resolution of that
 * name includes the address (else refused, saying so) — decides it by the policy's
 * network rules (asking a human when they say ask), resolves and connects,
 * then relays both ways with splice(2).  It answers the sandbox's DNS itself
 * with fake addresses (proxy/dns.h): no query ever leaves the machine.
 */

/*
 * What a listener is for.  The same roles name the listeners that
 * launcher/sandbox/netns.c makes in the sandbox's namespace.
 */
enum proxy_role {
	PROXY_ROLE_TRANSPARENT = 0, /* any address, a TCP port: the destination is where the client
				       connected (getsockname()) */
	PROXY_ROLE_HTTP_PROXY = 1,  /* an HTTP proxy (CONNECT, absolute-URI requests) */
	PROXY_ROLE_SOCKS = 2,       /* a SOCKS5 proxy */
	PROXY_ROLE_DNS = 3,         /* DNS, UDP or TCP */
	PROXY_ROLE_MAX
};

/* "transparent", "http-proxy", "socks", "dns" (logs, proxy_event.via); "?" out of range. */
const char *proxy_role_name(enum proxy_role role);

/* A listening socket (non-blocking; owned by the caller, not closed by the proxy). */
struct proxy_listener {
	int fd;
	int type; /* SOCK_STREAM or SOCK_DGRAM */
	enum proxy_role role;
	unsigned port;
};

/* One connection's outcome, reported when it ends (or is refused). */
struct proxy_event {
	const char *destination; /* "host:port" as decided: a name, or an address */
	const char *address;     /* a transparent connection to a real address decided by the name
				    its TLS server name or Host header gave: that address (text);
				    else NULL */
	const char *via;         /* proxy_role_name(): "transparent", "http-proxy", "socks" */
	enum policy_decision decision;
	const char *decided_by;  /* "policy", or an ask's: "human", "session", "default", "timeout" */
	int32_t rule;            /* the deciding rule, -1 for the policy's default or a refusal of ours */
	const char *why;         /* what refused it besides the policy ("SNI does not match"), or NULL */
	uint64_t bytes_up, bytes_down;
	long long duration_ms;
};

/* Told the answer to an ask: allow or deny, and who decided. */
typedef void (*proxy_done_fn)(void *arg, enum policy_decision d, const char *decided_by);

/* What the proxy needs from the launcher. */
struct proxy_hooks {
	void *ctx;
	/*
	 * Asks about host:port (rule: the ask rule); done(arg, ...) must be
	 * called exactly once, possibly before ask returns.  0 or -errno (then
	 * the connection is refused).
	 */
	int (*ask)(void *ctx, const char *host, unsigned port, int32_t rule, proxy_done_fn done,
		   void *arg);
	/* Logs a connection's outcome. */
	void (*event)(void *ctx, const struct proxy_event *ev);
	/* Logs a DNS answer (name, the fake address as text).  May be NULL. */
	void (*dns)(void *ctx, const char *name, const char *address);
};

struct proxy_options {
	const struct policy_image *img; /* decides destinations */
	struct proxy_hooks hooks;
	uint64_t max_egress_bytes;      /* the session's egress allowance, bytes; 0: none */
	unsigned idle_timeout_s;        /* a connection idle this long is closed; 0: 300 */
};

struct proxy;

/*
 * Starts serving the n listeners l (copied; the fds stay the caller's).
 * The caller ignores SIGPIPE: splice(2) into a socket the peer closed raises
 * it, and the proxy deals with the EPIPE itself.  Returns NULL with a
 * message in err.
 */
struct proxy *proxy_new(const struct proxy_listener *l, size_t n, const struct proxy_options *opt,
			char *err, size_t errlen);

/*
 * An fd readable when proxy_dispatch() has work, for the caller's poll(2):
 * the event loop's loop_fd() (proxy/loop.h), which proxy_dispatch() re-arms
 * before it returns.
 */
int proxy_fd(const struct proxy *p);

/* Milliseconds until the next timeout check, or -1. */
int proxy_timeout_ms(const struct proxy *p);

/* Does all work pending now without blocking.  Returns how many events it handled. */
int proxy_dispatch(struct proxy *p);

/* Bytes sent up and down so far in the session, and connections seen. */
struct proxy_stats {
	uint64_t bytes_up, bytes_down;
	unsigned long connections, refused, dns_queries;
};
void proxy_stats(const struct proxy *p, struct proxy_stats *out);

/*
 * Closes every connection (logging each) and frees everything.  Every ask
 * must have been answered first (the launcher frees its approvals, which
 * answers them, before the proxy).  Accepts NULL.
 */
void proxy_free(struct proxy *p);

#endif
