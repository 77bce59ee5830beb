/* netns.h — the sandbox's network namespace: every address local, listeners made inside and handed to the launcher. */
#ifndef AIRLOCK_NETNS_H
#define AIRLOCK_NETNS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proxy/proxy.h"

/*
 * DESIGN.md step 3.  netns_start() forks a child that enters a new network
 * namespace (network_namespaces(7)) — inside a new user namespace first when
 * the caller is not root (user_namespaces(7)) — and sets it up with
 * rtnetlink (rtnetlink(7), through libnl-route-3):
 *
 *   ip link set lo up
 *   ip route add local 0.0.0.0/0 dev lo table local
 *   ip -6 route add local ::/0 dev lo table local
 *
 * A route of type "local" in the local table tells the kernel that every
 * destination it covers is an address of this host (the AnyIP rule the
 * kernel applies to 127.0.0.0/8 by default, widened to everything).  So a
 * connect() to ANY address is delivered over lo to a socket listening on
 * the wildcard address of that port, and getsockname() on the accepted
 * socket returns the destination the client asked for (for UDP, the
 * IP_PKTINFO / IPV6_PKTINFO ancillary data of recvmsg() does).  There is no
 * other interface and no other route: nothing can leave the namespace
 * except through the launcher, which holds the listening sockets.
 * A port nobody listens on answers with RST (ECONNREFUSED): fail closed.
 * (The client's own address, getpeername(), says nothing: the kernel picks
 * the destination itself for IPv4 and ::1 for IPv6.)
 *
 * The listeners (TCP backlog NETNS_BACKLOG, every fd close-on-exec and
 * non-blocking, ready for the proxy's event loop):
 *
 *   role          proto  address                  port
 *   transparent   tcp    0.0.0.0 and [::]         80, 443, every opt->ports
 *   http-proxy    tcp    127.0.0.1                NETNS_HTTP_PROXY_PORT (3128)
 *   socks         tcp    127.0.0.1                NETNS_SOCKS_PORT (1080)
 *   dns           udp    0.0.0.0 and [::]         53
 *   dns           tcp    0.0.0.0 and [::]         53
 *
 * Port 53 in opt->ports is DNS's (TCP 53 to any address reaches the
 * resolver); duplicates and 80 / 443 in opt->ports are folded.
 * IPv4 and IPv6 get a socket each ([::] with IPV6_V6ONLY): getsockname()
 * then gives a plain sockaddr_in for IPv4 clients, never a v4-mapped
 * address, and each fd says which family it serves.  Without IPv6 in the
 * kernel (ipv6.disable=1) the [::] sockets and the ::/0 route are left out
 * and netns.ipv6 is false; nothing reaches IPv6 then, which still fails
 * closed.  The proxy ports listen on 127.0.0.1 only (HTTP_PROXY points
 * there): a connect to another address on 3128 or 1080 is refused, so a
 * policy port equal to one of them is an error (-EADDRINUSE).  A connect to
 * 127.0.0.1 on a transparent port reaches the transparent listener like any
 * other address: deciding whether loopback is allowed is the proxy's job.
 *
 * The UDP sockets have IP_PKTINFO (v4) and IPV6_RECVPKTINFO (v6) enabled
 * (ip(7), ipv6(7)): recvmsg() reports the destination the query was sent
 * to; the answer must be sent with sendmsg() and the same address as the
 * source (ipi_spec_dst / ipi6_addr).  The local route makes that legal for
 * IPv4; IPv6 checks that some interface carries the source address, so the
 * [::]:53 UDP socket also has IPV6_FREEBIND (ipv6(7), Linux 4.15).
 *
 * The child sends each listening fd to the launcher over a SOCK_SEQPACKET
 * socketpair with SCM_RIGHTS (unix(7)), one message per fd with a header
 * naming its role, protocol, family and port, then a final "ready" message;
 * it closes its own copies and waits.  netns_go() sends it one byte; it
 * then execs opt->exec_path — bubblewrap, WITHOUT --unshare-net, so the
 * agent lives in this namespace.  With a user namespace, bwrap (not setuid)
 * runs there as the caller's own uid without capabilities and makes its own
 * nested user namespace with --unshare-user (bwrap's unprivileged mode).
 *
 * Fork discipline: the child allocates (libnl), so netns_start() must be
 * called while the caller has a single thread.  Descriptors the program
 * should inherit (bwrap's --args, --info-fd, --seccomp) must be open without
 * FD_CLOEXEC at the call; everything netns makes is close-on-exec.
 */

/* The sandbox's own proxy ports, on 127.0.0.1 inside the namespace. */
#define NETNS_HTTP_PROXY_PORT 3128
#define NETNS_SOCKS_PORT 1080
/* DNS, UDP and TCP, on every address (resolv.conf names any of them). */
#define NETNS_DNS_PORT 53
/* Ports that always have a transparent listener. */
#define NETNS_HTTP_PORT 80
#define NETNS_HTTPS_PORT 443
/* listen(2) backlog of every TCP listener. */
#define NETNS_BACKLOG 256
/*
 * Most ports opt->ports may name.  Each gives two listeners, all held open
 * by the launcher: 256 ports stay within the usual RLIMIT_NOFILE of 1024.
 */
#define NETNS_MAX_PORTS 256

/* One listening socket, owned by the struct netns that holds it. */
struct netns_listener {
	int fd;               /* listening (TCP) or bound (UDP) socket; close-on-exec */
	int proto;            /* IPPROTO_TCP or IPPROTO_UDP */
	int family;           /* AF_INET or AF_INET6 */
	uint16_t port;        /* host byte order */
	enum proxy_role role; /* what the launcher's proxy serves on it */
};

/* What netns_start() needs.  Everything is borrowed; the child copies it by forking. */
struct netns_options {
	const uint16_t *ports;       /* transparent ports besides 80 and 443 (the policy's); duplicates
					and 53 are folded; 0, 3128 and 1080 are refused */
	size_t nports;               /* at most NETNS_MAX_PORTS */
	const char *exec_path;       /* what the child execs after netns_go(): bwrap, absolute */
	char *const *exec_argv;      /* NULL-terminated */
	char *const *exec_envp;      /* NULL-terminated */
	const sigset_t *exec_sigmask; /* the child's signal mask before exec; NULL: inherited */
	const int *exec_tty;         /* the program's terminal (agent_tty_take() before exec), or
					NULL: stdin/stdout/stderr inherited */
};

/* A started namespace. */
struct netns {
	pid_t pid;                        /* the child (after netns_go(): the program), or 0 */
	bool userns;                      /* the child made a user namespace (caller not root) */
	bool ipv6;                        /* IPv6 route and listeners exist */
	bool started;                     /* netns_go() was called */
	int sock;                         /* our end of the socketpair, or -1 */
	struct netns_listener *listeners; /* owned; nlisteners entries */
	size_t nlisteners;
};

/*
 * Starts the child and receives its listeners into *out (zeroed first).
 * The child then waits for netns_go().  Returns 0, or -errno with a message
 * in err: the child's own failure ("netns: bring lo up: Operation not
 * permitted ..."; unshare(CLONE_NEWUSER) failing names the sysctls to
 * check), -EINVAL / -EADDRINUSE for bad ports, -ECHILD when the child died
 * without a word, -ETIMEDOUT when it took over 10 s, -EMFILE when we ran
 * out of descriptors receiving, -EPROTO when the child broke the protocol.
 * On failure nothing is left: the child is killed and reaped, every fd
 * closed.  The child dies with us (PR_SET_PDEATHSIG) until bwrap's own
 * --die-with-parent takes over.
 */
int netns_start(const struct netns_options *opt, struct netns *out, char *err, size_t errlen);

/*
 * Lets the waiting child exec its program, and waits until it did: the
 * socketpair's close-on-exec end closing is the signal.  Returns 0, or
 * -errno with a message in err when the exec failed (the child has exited
 * 127 for ENOENT, 126 otherwise; the caller still reaps ns->pid).
 */
int netns_go(struct netns *ns, char *err, size_t errlen);

/*
 * The first listener with this role, protocol, family and port (port 0:
 * any), or NULL.  Borrowed from ns.
 */
const struct netns_listener *netns_find(const struct netns *ns, enum proxy_role role, int proto,
					int family, uint16_t port);

/*
 * Closes every listener and the socketpair.  A child still waiting for
 * netns_go() is killed and reaped; after netns_go() the child is the
 * caller's program, which the caller waits for (ns->pid stays set).
 * Accepts a zeroed struct and NULL.
 */
void netns_close(struct netns *ns);

#endif
