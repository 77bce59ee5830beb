/* netns.c — the sandbox's network namespace: a child makes it (libnl: lo up, every address local), opens the listeners, hands them over with SCM_RIGHTS, then execs bwrap. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>

#include "core/grow.h"
#include "core/fdpass.h"
#include "launcher/sandbox/netns.h"
#include "launcher/sandbox/agent_tty.h"

/* How long the child may take to make the namespace and its listeners. */
#define START_TIMEOUT_MS 10000

/*
 * One message on the socketpair (SOCK_SEQPACKET: one send, one receive).
 * The child sends WIRE_LISTENER (with one fd as SCM_RIGHTS) per listener it
 * opened, naming its index in the plan both sides share by forking, then
 * WIRE_READY; or WIRE_ERROR at any point, and after a failed exec.
 */
enum wire_kind { WIRE_LISTENER = 1, WIRE_READY, WIRE_ERROR };

struct wire {
	uint32_t kind;
	uint32_t index;   /* WIRE_LISTENER: plan index */
	int32_t error;    /* WIRE_ERROR: positive errno */
	uint32_t ipv6;    /* WIRE_READY: the IPv6 listeners exist */
	char text[240];   /* WIRE_ERROR: the message, NUL-terminated */
};

static int fail(char *err, size_t errlen, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -e;
}

/* ---- the plan: which listeners, in which order (built before the fork, so both sides have it) ---- */

struct plan {
	struct netns_listener *v; /* fd -1 until received */
	size_t n, cap;
};

static int plan_add(struct plan *p, enum proxy_role role, int proto, int family, uint16_t port)
{
	if (p->n == p->cap) {
		struct netns_listener *v = grow_array(p->v, &p->cap, p->n + 1, sizeof *v, 16);
		if (!v)
			return -ENOMEM;
		p->v = v;
	}
	p->v[p->n++] = (struct netns_listener){ -1, proto, family, port, role };
	return 0;
}

static bool plan_has_port(const struct plan *p, uint16_t port)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].role == PROXY_ROLE_TRANSPARENT && p->v[i].port == port)
			return true;
	return false;
}

/* Both families of one transparent port, unless it is there already or is DNS's. */
static int plan_transparent(struct plan *p, uint16_t port)
{
	if (port == NETNS_DNS_PORT || plan_has_port(p, port))
		return 0;
	int e = plan_add(p, PROXY_ROLE_TRANSPARENT, IPPROTO_TCP, AF_INET, port);
	return e ? e : plan_add(p, PROXY_ROLE_TRANSPARENT, IPPROTO_TCP, AF_INET6, port);
}

static int plan_check_port(uint16_t port, char *err, size_t errlen)
{
	if (port == 0)
		return fail(err, errlen, EINVAL, "netns: port 0 cannot be listened on");
	if (port == NETNS_HTTP_PROXY_PORT || port == NETNS_SOCKS_PORT)
		return fail(err, errlen, EADDRINUSE,
			    "netns: port %u is the sandbox's own %s port on 127.0.0.1, so "
			    "connections to it on other addresses cannot be followed: "
			    "use another port in the policy's network rules",
			    port, port == NETNS_SOCKS_PORT ? "SOCKS5" : "HTTP proxy");
	return 0;
}

static int plan_build(const struct netns_options *opt, struct plan *p, char *err, size_t errlen)
{
	if (opt->nports > NETNS_MAX_PORTS)
		return fail(err, errlen, EINVAL, "netns: %zu ports, at most %d", opt->nports,
			    NETNS_MAX_PORTS);
	if (opt->nports && !opt->ports)
		return fail(err, errlen, EINVAL, "netns: %zu ports but no port array", opt->nports);
	int e = plan_transparent(p, NETNS_HTTP_PORT);
	e = e ? e : plan_transparent(p, NETNS_HTTPS_PORT);
	for (size_t i = 0; !e && i < opt->nports; i++) {
		if ((e = plan_check_port(opt->ports[i], err, errlen)) != 0)
			return e;
		e = plan_transparent(p, opt->ports[i]);
	}
	e = e ? e : plan_add(p, PROXY_ROLE_HTTP_PROXY, IPPROTO_TCP, AF_INET, NETNS_HTTP_PROXY_PORT);
	e = e ? e : plan_add(p, PROXY_ROLE_SOCKS, IPPROTO_TCP, AF_INET, NETNS_SOCKS_PORT);
	e = e ? e : plan_add(p, PROXY_ROLE_DNS, IPPROTO_UDP, AF_INET, NETNS_DNS_PORT);
	e = e ? e : plan_add(p, PROXY_ROLE_DNS, IPPROTO_UDP, AF_INET6, NETNS_DNS_PORT);
	e = e ? e : plan_add(p, PROXY_ROLE_DNS, IPPROTO_TCP, AF_INET, NETNS_DNS_PORT);
	e = e ? e : plan_add(p, PROXY_ROLE_DNS, IPPROTO_TCP, AF_INET6, NETNS_DNS_PORT);
	return e ? fail(err, errlen, -e, "netns: out of memory") : 0;
}

static void plan_close_fds(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0) {
			close(p->v[i].fd);
			p->v[i].fd = -1;
		}
}

/* ---- the child: everything below runs in the forked process and ends in exec or _exit ---- */

/* Reports a failure to the parent and exits.  Never returns. */
static void child_die(int sock, int e, const char *fmt, ...) __attribute__((noreturn, format(printf, 3, 4)));
static void child_die(int sock, int e, const char *fmt, ...)
{
	struct wire w = { .kind = WIRE_ERROR, .error = e ? e : EIO };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w.text, sizeof w.text, fmt, ap);
	va_end(ap);
	(void)!send(sock, &w, sizeof w, MSG_NOSIGNAL);
	_exit(e == ENOENT ? 127 : 126);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	int e = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	close(fd);
	return e;
}

/*
 * A user namespace in which we keep our own uid and gid (user_namespaces(7)):
 * setgroups must be denied before an unprivileged process may write
 * gid_map.  We hold every capability in it until we exec.
 */
static void child_userns(int sock)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	if (unshare(CLONE_NEWUSER) != 0)
		child_die(sock, errno, "netns: unshare(CLONE_NEWUSER): %s: user namespaces are "
			  "unavailable (sysctl kernel.unprivileged_userns_clone, "
			  "user.max_user_namespaces, AppArmor), or run as root", strerror(errno));
	int e = write_file("/proc/self/setgroups", "deny");
	if (e)
		child_die(sock, -e, "netns: /proc/self/setgroups: %s", strerror(-e));
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if ((e = write_file("/proc/self/uid_map", map)) != 0)
		child_die(sock, -e, "netns: /proc/self/uid_map: %s", strerror(-e));
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if ((e = write_file("/proc/self/gid_map", map)) != 0)
		child_die(sock, -e, "netns: /proc/self/gid_map: %s", strerror(-e));
}

/* libnl's error codes, as errno values for -errno returns. */
static int nl_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case NLE_PERM: case NLE_NOACCESS: return EPERM;
	case NLE_EXIST: return EEXIST;
	case NLE_NOMEM: return ENOMEM;
	case NLE_INVAL: case NLE_RANGE: return EINVAL;
	case NLE_OPNOTSUPP: return EOPNOTSUPP;
	case NLE_AF_NOSUPPORT: return EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND: case NLE_NODEV: return ENODEV;
	case NLE_BUSY: return EBUSY;
	default: return EIO;
	}
}

/* ip link set lo up.  Returns lo's ifindex, or a libnl error. */
static int lo_up(struct nl_sock *sk)
{
	struct rtnl_link *lo = NULL;
	int e = rtnl_link_get_kernel(sk, 0, "lo", &lo);
	if (e < 0)
		return e;
	int ifindex = rtnl_link_get_ifindex(lo);
	struct rtnl_link *change = rtnl_link_alloc();
	if (!change)
		e = -NLE_NOMEM;
	else {
		rtnl_link_set_flags(change, IFF_UP);
		e = rtnl_link_change(sk, lo, change, 0);
		rtnl_link_put(change);
	}
	rtnl_link_put(lo);
	return e < 0 ? e : ifindex;
}

/*
 * ip route add local 0.0.0.0/0 (::/0) dev lo table local: type local,
 * scope host, like the kernel's own 127.0.0.0/8 route.  rtnl_route_add()
 * waits for the kernel's acknowledgement, so a refusal is seen here.
 */
static int local_route(struct nl_sock *sk, int family, int ifindex)
{
	static const unsigned char any[16];
	struct nl_addr *dst = nl_addr_build(family, any, family == AF_INET ? 4 : 16);
	struct rtnl_route *r = rtnl_route_alloc();
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	int e = -NLE_NOMEM;
	if (dst && r && nh) {
		nl_addr_set_prefixlen(dst, 0);
		rtnl_route_set_family(r, (uint8_t)family);
		rtnl_route_set_table(r, RT_TABLE_LOCAL);
		rtnl_route_set_type(r, RTN_LOCAL);
		rtnl_route_set_scope(r, RT_SCOPE_HOST);
		rtnl_route_set_protocol(r, RTPROT_BOOT);
		e = rtnl_route_set_dst(r, dst);
		rtnl_route_nh_set_ifindex(nh, ifindex);
		rtnl_route_add_nexthop(r, nh); /* the route owns it now */
		nh = NULL;
		e = e < 0 ? e : rtnl_route_add(sk, r, NLM_F_EXCL);
	}
	if (nh)
		rtnl_route_nh_free(nh);
	if (r)
		rtnl_route_put(r);
	if (dst)
		nl_addr_put(dst);
	return e;
}

/* Whether this kernel has IPv6 (it may be booted with ipv6.disable=1). */
static bool have_ipv6(void)
{
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno != EAFNOSUPPORT;
	close(fd);
	return true;
}

/* The namespace's only configuration: lo up, every address local on it. */
/*
 * Every connection the agent makes lands on a local listener, so each one
 * leaves a client port in TIME-WAIT inside the namespace; the kernel reuses
 * those for new connections only towards loopback addresses by default
 * (net.ipv4.tcp_tw_reuse = 2), and 198.18.0.0/15 or 203.0.113.7 are not.
 * An agent opening many short connections would then search ever longer
 * for a free port, then run out.  Both settings are per network namespace
 * (ip-sysctl.rst); best effort: a kernel that refuses keeps its defaults.
 */
static void child_sysctls(void)
{
	static const struct {
		const char *path, *value;
	} set[] = {
		{ "/proc/sys/net/ipv4/tcp_tw_reuse", "1" },
		{ "/proc/sys/net/ipv4/ip_local_port_range", "1024 65535" },
	};
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
		int fd = open(set[i].path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!write(fd, set[i].value, strlen(set[i].value));
			close(fd);
		}
	}
}

static void child_routes(int sock, bool ipv6)
{
	struct nl_sock *sk = nl_socket_alloc();
	if (!sk)
		child_die(sock, ENOMEM, "netns: nl_socket_alloc: out of memory");
	int e = nl_connect(sk, NETLINK_ROUTE);
	if (e < 0)
		child_die(sock, nl_errno(e), "netns: rtnetlink socket: %s", nl_geterror(e));
	int lo = lo_up(sk);
	if (lo < 0)
		child_die(sock, nl_errno(lo), "netns: bring lo up: %s", nl_geterror(lo));
	if ((e = local_route(sk, AF_INET, lo)) < 0)
		child_die(sock, nl_errno(e), "netns: local route 0.0.0.0/0 on lo: %s", nl_geterror(e));
	if (ipv6 && (e = local_route(sk, AF_INET6, lo)) < 0)
		child_die(sock, nl_errno(e), "netns: local route ::/0 on lo: %s", nl_geterror(e));
	nl_socket_free(sk);
}

static int set_int(int fd, int level, int name, int value)
{
	return setsockopt(fd, level, name, &value, sizeof value);
}

static bool is_proxy(const struct netns_listener *l)
{
	return l->role == PROXY_ROLE_HTTP_PROXY || l->role == PROXY_ROLE_SOCKS;
}

/* The address a listener binds, for messages. */
static const char *listener_where(const struct netns_listener *l)
{
	return l->family == AF_INET6 ? "[::]" : is_proxy(l) ? "127.0.0.1" : "0.0.0.0";
}

/* The address a listener binds: the wildcard of its family, loopback for the proxies. */
static socklen_t listener_addr(const struct netns_listener *l, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (l->family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_any;
		a->sin6_port = htons(l->port);
		return sizeof *a;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(is_proxy(l) ? INADDR_LOOPBACK : INADDR_ANY); /* HTTP_PROXY names 127.0.0.1 */
	a->sin_port = htons(l->port);
	return sizeof *a;
}

/* Socket options before bind; 0, or -1 with *what naming the option. */
static int listener_options(int fd, const struct netns_listener *l, const char **what)
{
	bool v6 = l->family == AF_INET6;
	if (v6 && set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1) != 0)
		return *what = "IPV6_V6ONLY", -1;
	if (l->proto != IPPROTO_UDP)
		return 0;
	if (!v6 && set_int(fd, IPPROTO_IP, IP_PKTINFO, 1) != 0)
		return *what = "IP_PKTINFO", -1;
	if (v6 && set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1) != 0)
		return *what = "IPV6_RECVPKTINFO", -1;
	/* IPv6 lets sendmsg() take an IPV6_PKTINFO source only if an interface has that
	   address (the local route does not count) or the socket may bind any address */
	if (v6 && set_int(fd, IPPROTO_IPV6, IPV6_FREEBIND, 1) != 0)
		return *what = "IPV6_FREEBIND", -1;
	return 0;
}

/* Opens one listener of the plan (non-blocking, close-on-exec); -errno with *what naming the failing call. */
static int open_listener(const struct netns_listener *l, const char **what)
{
	bool tcp = l->proto == IPPROTO_TCP;
	struct sockaddr_storage ss;
	socklen_t len = listener_addr(l, &ss);
	*what = "socket";
	int fd = socket(l->family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC | SOCK_NONBLOCK,
			l->proto);
	if (fd < 0)
		return -errno;
	int ok = listener_options(fd, l, what);
	if (ok == 0 && (ok = bind(fd, (struct sockaddr *)&ss, len)) != 0)
		*what = "bind";
	if (ok == 0 && tcp && (ok = listen(fd, NETNS_BACKLOG)) != 0)
		*what = "listen";
	if (ok != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static int send_fd(int sock, const struct wire *w, int fd)
{
	return fdpass_send(sock, w, sizeof *w, fd);
}

/* Opens and sends every listener, then "ready"; our copies are closed after sending. */
static void child_listeners(int sock, struct plan *p, bool ipv6)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct netns_listener *l = &p->v[i];
		if (l->family == AF_INET6 && !ipv6)
			continue;
		const char *what = "";
		int fd = open_listener(l, &what);
		if (fd < 0)
			child_die(sock, -fd, "netns: %s listener %s %s port %u: %s: %s",
				  proxy_role_name(l->role), l->proto == IPPROTO_TCP ? "tcp" : "udp",
				  listener_where(l), l->port, what, strerror(-fd));
		struct wire w = { .kind = WIRE_LISTENER, .index = (uint32_t)i };
		int e = send_fd(sock, &w, fd);
		close(fd);
		if (e)
			_exit(126); /* the parent is gone or broken: nobody to tell */
	}
	struct wire ready = { .kind = WIRE_READY, .ipv6 = ipv6 };
	if (send(sock, &ready, sizeof ready, MSG_NOSIGNAL) != (ssize_t)sizeof ready)
		_exit(126);
}

/* The child's whole life: namespace, routes, listeners, then the program.  Never returns. */
static void child_main(const struct netns_options *opt, struct plan *p, int sock, pid_t parent)
	__attribute__((noreturn));
static void child_main(const struct netns_options *opt, struct plan *p, int sock, pid_t parent)
{
	/* until bwrap's own --die-with-parent: a launcher that dies takes us with it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(126);
	if (geteuid() != 0)
		child_userns(sock);
	if (unshare(CLONE_NEWNET) != 0)
		child_die(sock, errno, "netns: unshare(CLONE_NEWNET): %s", strerror(errno));
	bool ipv6 = have_ipv6();
	child_routes(sock, ipv6);
	child_sysctls();
	child_listeners(sock, p, ipv6);
	char go;
	ssize_t n;
	while ((n = recv(sock, &go, 1, 0)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(0); /* netns_close() before netns_go(): nothing to run */
	if (opt->exec_sigmask)
		sigprocmask(SIG_SETMASK, opt->exec_sigmask, NULL);
	if (opt->exec_tty && agent_tty_take(*opt->exec_tty) < 0)
		child_die(sock, errno, "netns: cannot give the agent its terminal: %s", strerror(errno));
	execve(opt->exec_path, opt->exec_argv, opt->exec_envp);
	child_die(sock, errno, "netns: cannot start %s: %s", opt->exec_path, strerror(errno));
}

/* ---- the parent ---- */

/* Receives one message and at most one fd (close-on-exec).  0 at end of file, 1, or -errno. */
static int recv_wire(int sock, struct wire *w, int *fd, int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct pollfd pfd = { sock, POLLIN, 0 };
	int r;
	while ((r = poll(&pfd, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (r <= 0)
		return r == 0 ? -ETIMEDOUT : -errno;
	struct iovec iov = { w, sizeof *w };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	ssize_t n;
	*fd = -1;
	while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof *fd);
	if (n == 0)
		return 0;
	/* SCM_RIGHTS is cut short when we are out of descriptors (RLIMIT_NOFILE) */
	if (mh.msg_flags & MSG_CTRUNC)
		return -EMFILE;
	if (n != (ssize_t)sizeof *w || (mh.msg_flags & MSG_TRUNC))
		return -EPROTO;
	w->text[sizeof w->text - 1] = '\0';
	return 1;
}

/* The child ended without a word: how. */
static int child_gone(struct netns *ns, char *err, size_t errlen)
{
	int st = 0;
	while (waitpid(ns->pid, &st, 0) < 0 && errno == EINTR)
		;
	ns->pid = 0; /* reaped: netns_close() must not signal a pid that may be reused */
	if (WIFSIGNALED(st))
		return fail(err, errlen, ECHILD, "netns: the namespace's child was killed by signal %d",
			    WTERMSIG(st));
	return fail(err, errlen, ECHILD, "netns: the namespace's child exited with status %d",
		    WEXITSTATUS(st));
}

/* Files one received listener under its plan index. */
static int take_listener(struct plan *p, const struct wire *w, int fd)
{
	if (fd < 0 || w->index >= p->n || p->v[w->index].fd >= 0)
		return -EPROTO;
	p->v[w->index].fd = fd;
	return 0;
}

/* Every planned listener arrived (IPv6 ones only with IPv6); moves them, compacted, into ns. */
static int take_plan(struct plan *p, bool ipv6, struct netns *ns)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++) {
		bool want = ipv6 || p->v[i].family != AF_INET6;
		if (want != (p->v[i].fd >= 0))
			return -EPROTO;
		if (want)
			p->v[k++] = p->v[i];
	}
	ns->listeners = p->v;
	ns->nlisteners = k;
	ns->ipv6 = ipv6;
	p->v = NULL;
	p->n = p->cap = 0;
	return 0;
}

/* Receives listeners until "ready" or an error. */
static int parent_receive(struct netns *ns, struct plan *p, char *err, size_t errlen)
{
	for (;;) {
		struct wire w;
		int fd = -1;
		int r = recv_wire(ns->sock, &w, &fd, START_TIMEOUT_MS);
		if (r == 0)
			return child_gone(ns, err, errlen);
		if (r < 0 && fd >= 0)
			close(fd);
		if (r < 0)
			return fail(err, errlen, -r, "netns: waiting for the namespace's listeners: %s%s",
				    strerror(-r), r == -EMFILE ? " (raise the open file limit, "
				    "ulimit -n, or name fewer ports)" : "");
		if (w.kind == WIRE_ERROR) {
			if (fd >= 0)
				close(fd);
			return fail(err, errlen, w.error > 0 ? w.error : EIO, "%s", w.text);
		}
		if (w.kind == WIRE_READY && fd < 0 && take_plan(p, w.ipv6 != 0, ns) == 0)
			return 0;
		if (w.kind != WIRE_LISTENER || take_listener(p, &w, fd) != 0) {
			if (fd >= 0)
				close(fd);
			return fail(err, errlen, EPROTO, "netns: the namespace's child sent a bad message");
		}
	}
}

/* Forks the child; in the parent, receives its listeners into out. */
static int spawn(const struct netns_options *opt, struct plan *p, struct netns *out, char *err,
		 size_t errlen)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return fail(err, errlen, errno, "netns: socketpair: %s", strerror(errno));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return fail(err, errlen, e, "netns: fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(sv[0]);
		child_main(opt, p, sv[1], parent);
	}
	close(sv[1]);
	out->pid = pid;
	out->sock = sv[0];
	out->userns = geteuid() != 0;
	return parent_receive(out, p, err, errlen);
}

int netns_start(const struct netns_options *opt, struct netns *out, char *err, size_t errlen)
{
	*out = (struct netns){ .sock = -1 };
	if (!opt->exec_path || !opt->exec_argv || !opt->exec_envp)
		return fail(err, errlen, EINVAL, "netns: no program to run in the namespace");
	struct plan p = { 0 };
	int e = plan_build(opt, &p, err, errlen);
	if (e == 0)
		e = spawn(opt, &p, out, err, errlen);
	plan_close_fds(&p); /* what arrived before a failure */
	free(p.v);
	if (e != 0)
		netns_close(out);
	return e;
}

int netns_go(struct netns *ns, char *err, size_t errlen)
{
	if (ns->started || ns->sock < 0 || ns->pid <= 0)
		return fail(err, errlen, EINVAL, "netns: no namespace child waiting to start");
	ns->started = true;
	char go = 1;
	if (send(ns->sock, &go, 1, MSG_NOSIGNAL) != 1)
		return fail(err, errlen, errno, "netns: starting the namespace's child: %s",
			    strerror(errno));
	/* the child's end is close-on-exec: end of file means the exec happened */
	struct wire w;
	int fd = -1;
	int r = recv_wire(ns->sock, &w, &fd, -1);
	if (fd >= 0)
		close(fd);
	close(ns->sock);
	ns->sock = -1;
	if (r == 0)
		return 0;
	if (r == 1 && w.kind == WIRE_ERROR)
		return fail(err, errlen, w.error > 0 ? w.error : EIO, "%s", w.text);
	return fail(err, errlen, r < 0 ? -r : EPROTO, "netns: starting the namespace's child: %s",
		    strerror(r < 0 ? -r : EPROTO));
}

const struct netns_listener *netns_find(const struct netns *ns, enum proxy_role role, int proto,
					int family, uint16_t port)
{
	for (size_t i = 0; i < ns->nlisteners; i++) {
		const struct netns_listener *l = &ns->listeners[i];
		if (l->role == role && l->proto == proto && l->family == family &&
		    (port == 0 || l->port == port))
			return l;
	}
	return NULL;
}

void netns_close(struct netns *ns)
{
	if (!ns)
		return;
	for (size_t i = 0; i < ns->nlisteners; i++)
		if (ns->listeners[i].fd >= 0)
			close(ns->listeners[i].fd);
	free(ns->listeners);
	ns->listeners = NULL;
	ns->nlisteners = 0;
	if (ns->sock >= 0)
		close(ns->sock);
	ns->sock = -1;
	if (ns->pid > 0 && !ns->started) {
		kill(ns->pid, SIGKILL);
		while (waitpid(ns->pid, NULL, 0) < 0 && errno == EINTR)
			;
		ns->pid = 0;
	}
}
