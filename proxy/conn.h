/* conn.h — inside the egress proxy: a connection's state and the steps that move it, shared by proxy.c, destination.c and upstream.c. */
#ifndef AIRLOCK_PROXY_CONN_H
#define AIRLOCK_PROXY_CONN_H

#include <netdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/netaddr.h"
#include "proxy/loop.h"
#include "proxy/proxy.h"
#include "proxy/relay.h"
#include "proxy/sniff.h"

/*
 * A connection's life: proxy.c accepts it and routes its events;
 * destination.c learns where it goes (sniffing its first bytes) and
 * decides; upstream.c resolves, connects and relays; proxy.c ends it
 * (conn_finish, conn_refuse: one event, then freed).  Every step may end
 * the connection: after a call that can, the caller touches c no more.
 */

#define SNIFF_TIMEOUT_MS 10000 /* a client that never says where it goes is dropped */
#define CONNECT_TIMEOUT_MS 15000

enum tag_kind { TAG_LISTENER, TAG_CLIENT, TAG_UPSTREAM, TAG_RESOLVER };

/* What a loop event is about (the ptr given to loop_add()). */
struct tag {
	enum tag_kind kind;
	void *ptr;
	unsigned interest; /* what the loop watches for now: setting the same again is skipped */
};

enum conn_state {
	CS_SNIFF,      /* reading until the destination is known */
	CS_TLS_PEEK,   /* told a proxy client "go ahead"; reading its ClientHello for the SNI */
	CS_ASKING,     /* a human is deciding */
	CS_RESOLVING,  /* getaddrinfo(3) on a thread */
	CS_CONNECTING, /* a non-blocking connect upstream */
	CS_RELAY,      /* bytes both ways */
};

struct conn {
	struct proxy *p;
	struct conn *next;
	uint64_t id;
	enum proxy_role role;
	enum conn_state st;
	int cfd, ufd;
	struct tag ctag, utag;
	long long start_ms, last_ms;
	/* what the client sent before the relay started */
	uint8_t buf[SNIFF_TLS_BUF_MAX];
	size_t len;
	size_t forward_from; /* buf[forward_from .. len) goes upstream once connected */
	char prefix[SNIFF_HTTP_HEAD_MAX]; /* absolute-URI: the rewritten request line */
	int prefix_len;
	struct sniff_socks socks;
	/* the destination */
	char host[SNIFF_HOST_MAX];
	unsigned port;
	bool is_addr;
	struct netaddr addr;
	char expect[SNIFF_HOST_MAX]; /* transparent: the name the TLS SNI or Host header gave */
	/*
	 * Transparent to a real address (c->addr) whose SNI or Host named a
	 * host (now c->host): decided by the name, and connected only when the
	 * proxy's own resolution of the name gives that address.
	 */
	bool pinned;
	char why_buf[2 * SNIFF_HOST_MAX + 128]; /* a c->why made of this connection's words */
	/* the decision */
	struct policy_verdict v;
	const char *by;
	const char *why;
	struct addrinfo *res, *next_ai; /* owned: res */
	struct relay relay;
	bool relaying;
	bool replied;     /* the proxy protocol's success reply was sent before connecting */
	size_t tls_start; /* CS_TLS_PEEK: where the TLS bytes begin in buf */
};

struct lsn {
	struct proxy_listener l;
	struct tag tag;
};

struct proxy {
	struct proxy_options opt;
	struct loop *loop; /* owned */
	bool edge;         /* loop_has_edge(loop) */
	struct lsn *lsn;   /* owned; nlsn */
	size_t nlsn;
	struct conn *conns;
	uint64_t next_id;
	int resolver[2]; /* threads write finished jobs' pointers here */
	struct tag rtag;
	struct dns_table *dns;
	uint64_t budget;
	bool limited;
	bool again; /* some relay stopped with bytes still moving: pump it without waiting */
	struct relay_pool pool;
	struct netaddr *host_addrs;
	size_t nhost_addrs;
	struct proxy_stats stats;
};

/* CLOCK_MONOTONIC in milliseconds. */
long long conn_now_ms(void);

/* ---- proxy.c: watching and ending ---- */

/* Sets what fd is watched for, tagged t; the same interest again costs nothing. */
void conn_watch(struct proxy *p, int fd, unsigned interest, struct tag *t);

/*
 * What a socket that will relay is watched for until the relay says more:
 * with edges, everything at once (relay_pump() reads each source until it
 * is empty, so nothing changes as directions fill, drain and end); without,
 * nothing until conn_pump() states what the relay waits for.
 */
unsigned conn_relay_interest(const struct proxy *p);

/* The connection ran (or was allowed and failed): one event, then freed. */
void conn_finish(struct conn *c);

/* Refuses c in its protocol's words (why: besides the policy's, or NULL), logs it, frees it. */
void conn_refuse(struct conn *c, const char *why);

/*
 * c was allowed but the outside failed it (the name does not resolve, the destination
 * refuses): the client is told so in its protocol's words (502, SOCKS "host unreachable", a
 * reset), the event is logged as allowed with why, not counted as refused; c is freed.  (A
 * refusal would read as the policy's deny: `airlock suggest` would turn it into a deny rule.)
 */
void conn_fail(struct conn *c, const char *why);

/* Ends c with a denied event and nothing said to the client (it went away first). */
void conn_drop(struct conn *c);

/* Frees c without an event (its sockets closed, out of the loop). */
void conn_free(struct conn *c);

/* ---- destination.c: learning where a connection goes, deciding ---- */

/* The client's socket is readable while the destination is not known yet: read and sniff. */
void conn_readable(struct conn *c);

/*
 * The destination is known (c->host, c->port): canonicalise an address in
 * any spelling, map a fake address back to its name, decide, and go on.
 */
void conn_decide(struct conn *c);

/* ---- upstream.c: resolving, connecting, relaying ---- */

/* Allowed: connect to the address literal, or resolve the name on a thread first. */
void conn_connect(struct conn *c);

/* Takes the resolver threads' finished jobs and connects their connections. */
void conn_resolved(struct proxy *p);

/* A loop event on the upstream socket while connecting: connected, or try the next address. */
void conn_upstream_ready(struct conn *c, unsigned events);

/* Moves the relay's bytes; ends the connection when the relay ends. */
void conn_pump(struct conn *c);

/* Sends all of buf on a non-blocking socket, waiting up to 1 s at a time for room. */
bool conn_send_all(int fd, const void *buf, size_t len);

#endif
