/* test_netns.c — the sandbox's network namespace for real, as root and as nobody: connects to any address reach the passed listeners, other ports refuse, DNS sees its destination, bwrap inside works. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/sandbox/netns.h"

/*
 * No packet may leave the machine.  The parent (this process, in the host's
 * namespace) only accepts and reads on the listeners netns_start() hands
 * it; it never connects anywhere.  Every connect and send happens in the
 * helper — this binary re-executed by the namespace's child with
 * HELPER_FLAG — and the helper first checks that it runs in a namespace
 * other than ours with only lo and no route through any other interface,
 * and refuses (exit HELPER_REFUSED, nothing sent) otherwise.  The
 * destinations are documentation and benchmark addresses (RFC 5737,
 * RFC 2544, RFC 3849, RFC 1918): inside, the local routes make them ours.
 */
#define HELPER_FLAG "--netns-helper"
#define HELPER_REFUSED 3
#define HELPER_FAILED 4
#define NOBODY 65534
#define EXIT_SKIP 77
#define IO_TIMEOUT_MS 5000

static char self_exe[PATH_MAX];
static char bwrap_path[PATH_MAX];
static char msg[1024]; /* the failure (or "skipped: ...") a scenario returns */

/* ---- helpers shared by both sides ---- */

/* "ADDR PORT" for an AF_INET / AF_INET6 sockaddr. */
static void sockaddr_text(const struct sockaddr_storage *ss, char *buf, size_t cap)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &s->sin_addr, a, sizeof a);
		port = ntohs(s->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof a);
		port = ntohs(s->sin6_port);
	}
	snprintf(buf, cap, "%s %u", a, port);
}

/* Fills ss from a numeric address; returns its length, or 0 when it is not one. */
static socklen_t sockaddr_make(const char *addr, unsigned port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		return sizeof *s4;
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return sizeof *s6;
	}
	return 0;
}

static bool is_v6(const char *addr)
{
	return strchr(addr, ':') != NULL;
}

/* ---- the helper, inside the namespace ---- */

static void helper_refuse(const char *fmt, const char *arg)
{
	fprintf(stderr, "netns helper: refusing to send anything: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	_exit(HELPER_REFUSED);
}

/* Every route in a /proc/net route table names lo (column col, 0-based). */
static void helper_check_routes(const char *path, int col, bool header)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return; /* no IPv6: no IPv6 routes */
	char line[512];
	if (header && !fgets(line, sizeof line, f))
		line[0] = '\0';
	while (fgets(line, sizeof line, f)) {
		char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
		for (int i = 0; tok && i < col; i++)
			tok = strtok_r(NULL, " \t\n", &save);
		if (!tok || strcmp(tok, "lo") != 0)
			helper_refuse("a route in %s goes through another interface than lo", path);
	}
	fclose(f);
}

/* Another namespace than the test's, only lo (and up), every route on lo. */
static void helper_check_isolated(const char *parent_netns)
{
	struct stat st;
	char ino[32];
	if (stat("/proc/self/ns/net", &st) != 0)
		helper_refuse("cannot stat /proc/self/ns/net%s", "");
	snprintf(ino, sizeof ino, "%lu", (unsigned long)st.st_ino);
	if (strcmp(ino, parent_netns) == 0)
		helper_refuse("still in the test's own network namespace (%s)", ino);
	struct if_nameindex *ifs = if_nameindex();
	if (!ifs)
		helper_refuse("if_nameindex failed%s", "");
	for (struct if_nameindex *i = ifs; i->if_name; i++)
		if (strcmp(i->if_name, "lo") != 0)
			helper_refuse("interface %s exists besides lo", i->if_name);
	if_freenameindex(ifs);
	struct ifreq ifr = { 0 };
	strcpy(ifr.ifr_name, "lo");
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0 || !(ifr.ifr_flags & IFF_UP))
		helper_refuse("lo is not up%s", "");
	close(fd);
	helper_check_routes("/proc/net/route", 0, true);
	helper_check_routes("/proc/net/ipv6_route", 9, false);
}

static int helper_socket(int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	struct timeval tv = { IO_TIMEOUT_MS / 1000, 0 };
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	return fd;
}

/* One action: 0, or the errno that made it fail (ECONNREFUSED expected for "refused"). */
static int helper_action(const char *kind, const char *addr, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_make(addr, port, &ss);
	bool udp = strcmp(kind, "udp") == 0;
	int fd = len ? helper_socket(ss.ss_family, udp ? SOCK_DGRAM : SOCK_STREAM) : -1;
	if (fd < 0)
		return EINVAL;
	char line[128], reply[128] = "", want[128];
	snprintf(line, sizeof line, "%s %s %u\n", udp ? "dns?" : "hello", addr, port);
	snprintf(want, sizeof want, "answer %s %u\n", addr, port);
	int e = connect(fd, (struct sockaddr *)&ss, len) == 0 ? 0 : errno;
	if (e == 0 && strcmp(kind, "refused") == 0)
		e = EISCONN; /* it should not have been accepted */
	else if (e == ECONNREFUSED && strcmp(kind, "refused") == 0)
		e = 0;
	else if (e == 0 && write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		e = errno ? errno : EIO;
	else if (e == 0 && udp && (read(fd, reply, sizeof reply - 1) < 0 || strcmp(reply, want) != 0))
		e = errno ? errno : EBADMSG;
	close(fd);
	return e;
}

/* The program must not inherit a listener or the socketpair: they are close-on-exec. */
static void helper_check_no_sockets(void)
{
	for (int fd = 3; fd < 1024; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "netns helper: socket fd %d was inherited across exec\n", fd);
			_exit(HELPER_FAILED);
		}
	}
}

/* argv: self HELPER_FLAG PARENT_NETNS_INODE [KIND ADDR PORT]...; KIND: tcp, refused, udp. */
static int helper_main(int argc, char **argv)
{
	helper_check_isolated(argc > 2 ? argv[2] : "");
	helper_check_no_sockets();
	for (int i = 3; i + 2 < argc; i += 3) {
		int e = helper_action(argv[i], argv[i + 1], (unsigned)atoi(argv[i + 2]));
		if (e) {
			fprintf(stderr, "netns helper: %s %s %s: %s\n", argv[i], argv[i + 1], argv[i + 2],
				strerror(e));
			_exit(HELPER_FAILED);
		}
	}
	_exit(0); /* no leak check: nothing of the test's runs here */
}

/* ---- the parent side of a scenario: returns NULL, a failure, or "skipped: why" ---- */

#define CHECK(cond, ...)                                      \
	do {                                                  \
		if (!(cond)) {                                \
			snprintf(msg, sizeof msg, __VA_ARGS__); \
			return msg;                           \
		}                                             \
	} while (0)

struct action {
	const char *kind, *addr;
	unsigned port;
};

/* The helper's argv for these actions (IPv6 ones only with IPv6), wrapped in bwrap when asked. */
static char **helper_argv(const struct action *acts, size_t n, bool ipv6, bool bwrap)
{
	static char ino[32], ports[32][8];
	static char *argv[128];
	struct stat st;
	size_t k = 0;
	stat("/proc/self/ns/net", &st);
	snprintf(ino, sizeof ino, "%lu", (unsigned long)st.st_ino);
	if (bwrap) {
		static char *const wrap[] = { NULL, "--die-with-parent", "--new-session", "--unshare-pid",
					      "--unshare-ipc", "--unshare-uts", "--ro-bind", "/", "/",
					      "--dev", "/dev", "--proc", "/proc" };
		for (size_t i = 0; i < sizeof wrap / sizeof wrap[0]; i++)
			argv[k++] = i ? wrap[i] : bwrap_path;
		if (geteuid() != 0)
			argv[k++] = "--unshare-user"; /* unprivileged bwrap: its own nested user namespace */
		argv[k++] = "--";
	}
	argv[k++] = self_exe;
	argv[k++] = HELPER_FLAG;
	argv[k++] = ino;
	for (size_t i = 0; i < n && i < 32; i++) {
		if (is_v6(acts[i].addr) && !ipv6)
			continue;
		snprintf(ports[i], sizeof ports[i], "%u", acts[i].port);
		argv[k++] = (char *)acts[i].kind;
		argv[k++] = (char *)acts[i].addr;
		argv[k++] = ports[i];
	}
	argv[k] = NULL;
	return argv;
}

static char *const helper_env[] = { "PATH=/usr/bin:/bin", NULL };

/*
 * Starts a namespace running the helper (or `program` when not NULL).
 * Needs IPv6 to be known before the argv is built: the first start says;
 * a second start with the right argv follows when IPv6 is missing.
 */
static const char *start(struct netns *ns, const uint16_t *ports, size_t nports,
			 const struct action *acts, size_t nacts, bool bwrap)
{
	char err[512];
	for (int ipv6 = 1; ipv6 >= 0; ipv6--) {
		struct netns_options opt = { ports, nports, bwrap ? bwrap_path : self_exe,
					     helper_argv(acts, nacts, ipv6, bwrap), helper_env, NULL, NULL };
		int e = netns_start(&opt, ns, err, sizeof err);
		if (e < 0 && strstr(err, "unshare(")) {
			snprintf(msg, sizeof msg, "skipped: namespaces unavailable here: %s", err);
			return msg;
		}
		CHECK(e == 0, "netns_start: %s (%d)", err, e);
		CHECK(ns->pid > 0 && ns->sock >= 0 && ns->nlisteners > 0, "netns_start: empty result");
		if (ns->ipv6 || !ipv6)
			return NULL;
		netns_close(ns);
	}
	return NULL;
}

/* Waits up to timeout_ms for pid; its exit status, or -1 (then it is killed). */
static int wait_exit(pid_t pid, int timeout_ms)
{
	int st = 0;
	for (int t = 0; t <= timeout_ms; t += 10) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	return poll(&p, 1, timeout_ms) == 1;
}

/* Accepts one connection on the listener for (role, family, port); checks destination and line. */
static const char *expect_tcp(const struct netns *ns, enum proxy_role role, const char *addr,
			      unsigned port)
{
	int family = is_v6(addr) ? AF_INET6 : AF_INET;
	const struct netns_listener *l = netns_find(ns, role, IPPROTO_TCP, family, (uint16_t)port);
	CHECK(l, "no %s listener for %s port %u", proxy_role_name(role), addr, port);
	CHECK(readable(l->fd, IO_TIMEOUT_MS), "nothing connected to %s %u", addr, port);
	int c = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	CHECK(c >= 0, "accept on %s %u: %s", addr, port, strerror(errno));
	struct sockaddr_storage ss, want;
	socklen_t len = sizeof ss;
	char got[128], exp[128], line[128] = "", wline[128];
	getsockname(c, (struct sockaddr *)&ss, &len);
	sockaddr_make(addr, port, &want);
	sockaddr_text(&ss, got, sizeof got);
	sockaddr_text(&want, exp, sizeof exp);
	snprintf(wline, sizeof wline, "hello %s %u\n", addr, port);
	size_t have = 0;
	while (have < strlen(wline) && readable(c, IO_TIMEOUT_MS)) {
		ssize_t n = read(c, line + have, sizeof line - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(c);
	CHECK(strcmp(got, exp) == 0, "getsockname: %s, the client connected to %s", got, exp);
	CHECK(strcmp(line, wline) == 0, "read \"%s\" from %s %u", line, addr, port);
	return NULL;
}

/* The original destination of a datagram, from IP_PKTINFO / IPV6_PKTINFO. */
static bool pktinfo_dst(struct msghdr *mh, int family, char *buf, size_t cap)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (family == AF_INET && c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof pi);
			return inet_ntop(AF_INET, &pi.ipi_addr, buf, (socklen_t)cap) != NULL;
		}
		if (family == AF_INET6 && c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof pi);
			return inet_ntop(AF_INET6, &pi.ipi6_addr, buf, (socklen_t)cap) != NULL;
		}
	}
	return false;
}

/* Answers from the original destination: the source address goes in the same pktinfo. */
static ssize_t reply_from(int fd, struct msghdr *in, const char *text)
{
	struct iovec iov = { (void *)text, strlen(text) };
	struct msghdr out = { .msg_name = in->msg_name, .msg_namelen = in->msg_namelen,
			      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = in->msg_control,
			      .msg_controllen = in->msg_controllen };
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&out); c; c = CMSG_NXTHDR(&out, c))
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof pi);
			pi.ipi_spec_dst = pi.ipi_addr; /* reply from the address asked */
			pi.ipi_ifindex = 0;
			memcpy(CMSG_DATA(c), &pi, sizeof pi);
		}
	return sendmsg(fd, &out, 0);
}

/* Receives the helper's datagram to addr:53 on the DNS socket, checks its destination, answers. */
static const char *expect_udp(const struct netns *ns, const char *addr)
{
	int family = is_v6(addr) ? AF_INET6 : AF_INET;
	const struct netns_listener *l = netns_find(ns, PROXY_ROLE_DNS, IPPROTO_UDP, family, 53);
	CHECK(l, "no UDP DNS listener for %s", addr);
	CHECK(readable(l->fd, IO_TIMEOUT_MS), "no datagram to %s 53", addr);
	char data[128] = "", ctl[256], dst[INET6_ADDRSTRLEN] = "", want[128], canon[128];
	struct sockaddr_storage from, d;
	struct iovec iov = { data, sizeof data - 1 };
	struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov,
			     .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl };
	CHECK(recvmsg(l->fd, &mh, 0) > 0, "recvmsg on DNS: %s", strerror(errno));
	CHECK(pktinfo_dst(&mh, family, dst, sizeof dst), "no pktinfo on the DNS datagram");
	sockaddr_make(addr, 53, &d);
	sockaddr_text(&d, canon, sizeof canon);
	snprintf(want, sizeof want, "%s 53", dst);
	CHECK(strcmp(want, canon) == 0, "pktinfo destination %s, the helper sent to %s", dst, addr);
	snprintf(want, sizeof want, "dns? %s 53\n", addr);
	CHECK(strcmp(data, want) == 0, "datagram \"%s\"", data);
	snprintf(want, sizeof want, "answer %s 53\n", addr);
	CHECK(reply_from(l->fd, &mh, want) == (ssize_t)strlen(want), "reply from %s: %s", addr,
	      strerror(errno));
	return NULL;
}

static const char *expect_helper_exit(struct netns *ns, int want)
{
	int st = wait_exit(ns->pid, 2 * IO_TIMEOUT_MS);
	ns->pid = 0;
	CHECK(st != HELPER_REFUSED, "the helper refused: the namespace is not isolated (see stderr)");
	CHECK(st == want, "the program in the namespace exited %d, expected %d (see stderr)", st, want);
	return NULL;
}

/* The connects the transparent scenarios make, in the helper's order. */
static const struct action transparent_acts[] = {
	{ "tcp", "203.0.113.5", 443 },
	{ "tcp", "198.18.0.7", 80 },
	{ "tcp", "2001:db8::1", 443 },
	{ "tcp", "10.1.2.3", 8080 },
	{ "tcp", "127.0.0.1", 3128 },
	{ "tcp", "127.0.0.1", 1080 },
	{ "tcp", "203.0.113.9", 53 },
	{ "refused", "203.0.113.5", 9999 },
	{ "refused", "2001:db8::1", 9999 },
	{ "refused", "203.0.113.5", 3128 },
	{ "refused", "198.18.0.7", 1080 },
	{ "udp", "203.0.113.53", 53 },
	{ "udp", "2001:db8::53", 53 },
};
#define NTRANSPARENT (sizeof transparent_acts / sizeof transparent_acts[0])

static enum proxy_role role_of(const struct action *a)
{
	return a->port == 3128 ? PROXY_ROLE_HTTP_PROXY : a->port == 1080 ? PROXY_ROLE_SOCKS
		: a->port == 53 ? PROXY_ROLE_DNS : PROXY_ROLE_TRANSPARENT;
}

static const char *transparent_run(bool bwrap)
{
	static const uint16_t ports[] = { 8080 };
	struct netns ns;
	char err[512];
	const char *r = start(&ns, ports, 1, transparent_acts, NTRANSPARENT, bwrap);
	if (r)
		return r;
	if (netns_go(&ns, err, sizeof err) != 0) {
		netns_close(&ns);
		CHECK(false, "netns_go: %s", err);
	}
	for (size_t i = 0; !r && i < NTRANSPARENT; i++) {
		const struct action *a = &transparent_acts[i];
		if (is_v6(a->addr) && !ns.ipv6)
			continue;
		if (strcmp(a->kind, "tcp") == 0)
			r = expect_tcp(&ns, role_of(a), a->addr, a->port);
		else if (strcmp(a->kind, "udp") == 0)
			r = expect_udp(&ns, a->addr);
	}
	if (!r && !ns.ipv6)
		fprintf(stderr, "note: no IPv6 in this kernel: IPv6 cases left out\n");
	if (!r)
		r = expect_helper_exit(&ns, 0);
	if (ns.pid > 0)
		wait_exit(ns.pid, 0);
	netns_close(&ns);
	return r;
}

/* ---- scenarios ---- */

static const char *scenario_transparent(void)
{
	return transparent_run(false);
}

static const char *scenario_bwrap(void)
{
	if (!bwrap_path[0])
		return "skipped: bubblewrap (bwrap) is not installed";
	return transparent_run(true);
}

static int get_int(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof v;
	return getsockopt(fd, level, name, &v, &len) == 0 ? v : -1;
}

/* One listener: bound where the table says, the right type, listening, its options and flags. */
static const char *check_listener(const struct netns_listener *l)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof ss;
	char got[128], exp[128];
	bool tcp = l->proto == IPPROTO_TCP, v6 = l->family == AF_INET6;
	bool proxy = l->role == PROXY_ROLE_HTTP_PROXY || l->role == PROXY_ROLE_SOCKS;
	getsockname(l->fd, (struct sockaddr *)&ss, &len);
	sockaddr_text(&ss, got, sizeof got);
	snprintf(exp, sizeof exp, "%s %u", proxy ? "127.0.0.1" : v6 ? "::" : "0.0.0.0", l->port);
	CHECK(strcmp(got, exp) == 0 && ss.ss_family == l->family, "%s listener bound to %s, expected %s",
	      proxy_role_name(l->role), got, exp);
	CHECK(get_int(l->fd, SOL_SOCKET, SO_TYPE) == (tcp ? SOCK_STREAM : SOCK_DGRAM), "%s: type", got);
	CHECK(get_int(l->fd, SOL_SOCKET, SO_ACCEPTCONN) == tcp, "%s: listening is %d", got, !tcp);
	CHECK(!v6 || get_int(l->fd, IPPROTO_IPV6, IPV6_V6ONLY) == 1, "%s: no IPV6_V6ONLY", got);
	CHECK(tcp || get_int(l->fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_RECVPKTINFO : IP_PKTINFO) == 1,
	      "%s: no pktinfo", got);
	CHECK((fcntl(l->fd, F_GETFD) & FD_CLOEXEC) && (fcntl(l->fd, F_GETFL) & O_NONBLOCK),
	      "%s: not close-on-exec and non-blocking", got);
	return NULL;
}

/* The listener table: roles, addresses, families, flags, folded duplicates. */
static const char *table_check(const struct netns *ns)
{
	size_t per_family = ns->ipv6 ? 2 : 1;
	/* transparent 80 443 8080 22, dns udp + tcp; http-proxy and socks on IPv4 only */
	size_t want = 4 * per_family + 2 * per_family + 2;
	CHECK(ns->nlisteners == want, "%zu listeners, expected %zu", ns->nlisteners, want);
	for (size_t i = 0; i < ns->nlisteners; i++) {
		const struct netns_listener *l = &ns->listeners[i];
		const char *r = check_listener(l);
		if (r)
			return r;
		for (size_t j = 0; j < i; j++)
			CHECK(ns->listeners[j].proto != l->proto || ns->listeners[j].family != l->family ||
			      ns->listeners[j].port != l->port, "port %u listed twice", l->port);
	}
	CHECK(netns_find(ns, PROXY_ROLE_TRANSPARENT, IPPROTO_TCP, AF_INET, 22) &&
	      netns_find(ns, PROXY_ROLE_HTTP_PROXY, IPPROTO_TCP, AF_INET, 3128) &&
	      netns_find(ns, PROXY_ROLE_SOCKS, IPPROTO_TCP, AF_INET, 1080) &&
	      netns_find(ns, PROXY_ROLE_DNS, IPPROTO_TCP, AF_INET, 53) &&
	      netns_find(ns, PROXY_ROLE_DNS, IPPROTO_UDP, AF_INET, 53),
	      "netns_find: a role is missing");
	CHECK(!netns_find(ns, PROXY_ROLE_TRANSPARENT, IPPROTO_TCP, AF_INET, 53),
	      "port 53 got a transparent listener besides DNS's");
	return NULL;
}

static const char *scenario_table(void)
{
	static const uint16_t ports[] = { 8080, 80, 53, 8080, 22 };
	struct netns ns;
	const char *r = start(&ns, ports, 5, NULL, 0, false);
	if (r)
		return r;
	r = table_check(&ns);
	netns_close(&ns);
	return r;
}

/* Nothing runs before netns_go(); the program runs, in the namespace, after it. */
static const char *scenario_go_gates_exec(void)
{
	static const uint16_t ports[] = { 8080 };
	static const struct action acts[] = { { "tcp", "10.1.2.3", 8080 } };
	struct netns ns;
	char err[512];
	const char *r = start(&ns, ports, 1, acts, 1, false);
	if (r)
		return r;
	const struct netns_listener *l = netns_find(&ns, PROXY_ROLE_TRANSPARENT, IPPROTO_TCP, AF_INET, 8080);
	bool early = l && readable(l->fd, 300);
	bool alive = waitpid(ns.pid, NULL, WNOHANG) == 0;
	int e = netns_go(&ns, err, sizeof err);
	if (e == 0 && !early && alive)
		r = expect_tcp(&ns, PROXY_ROLE_TRANSPARENT, "10.1.2.3", 8080);
	if (!r && e == 0 && !early && alive)
		r = expect_helper_exit(&ns, 0);
	if (ns.pid > 0)
		wait_exit(ns.pid, IO_TIMEOUT_MS);
	netns_close(&ns);
	CHECK(e == 0, "netns_go: %s", err);
	CHECK(!early, "the program ran before netns_go()");
	CHECK(alive, "the child did not wait for netns_go()");
	return r;
}

/* An exec that fails is reported by netns_go() with the path. */
static const char *scenario_bad_exec(void)
{
	static const char path[] = "/nonexistent/airlock-netns-test";
	char *const argv[] = { (char *)path, NULL };
	struct netns_options opt = { NULL, 0, path, argv, helper_env, NULL, NULL };
	struct netns ns;
	char err[512] = "";
	int e = netns_start(&opt, &ns, err, sizeof err);
	if (e < 0 && strstr(err, "unshare(")) {
		snprintf(msg, sizeof msg, "skipped: namespaces unavailable here: %s", err);
		return msg;
	}
	CHECK(e == 0, "netns_start: %s", err);
	e = netns_go(&ns, err, sizeof err);
	int st = wait_exit(ns.pid, IO_TIMEOUT_MS);
	ns.pid = 0;
	netns_close(&ns);
	CHECK(e == -ENOENT, "netns_go returned %d (%s), expected -ENOENT", e, err);
	CHECK(strstr(err, path) != NULL, "the message does not name the program: %s", err);
	CHECK(st == 127, "the child exited %d, expected 127", st);
	return NULL;
}

/* netns_close() before netns_go() kills and reaps the waiting child. */
static const char *scenario_close_before_go(void)
{
	struct netns ns;
	const char *r = start(&ns, NULL, 0, NULL, 0, false);
	if (r)
		return r;
	pid_t pid = ns.pid;
	netns_close(&ns);
	CHECK(ns.pid == 0 && ns.sock == -1 && ns.listeners == NULL, "netns_close left state");
	CHECK(waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD, "the child was not reaped");
	return NULL;
}

/* ---- running a scenario as root, and as nobody ---- */

typedef const char *(*scenario_fn)(void);

static void report(const char *r)
{
	if (r && strncmp(r, "skipped:", 8) == 0) {
		printf("%s\n", r);
		fflush(stdout);
		skip();
	}
	if (r)
		fail_msg("%s", r);
}

/* Drops to nobody in a forked child; its scenario's message comes back over a pipe. */
static const char *as_nobody(scenario_fn fn)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return "pipe failed";
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		const char *r = NULL;
		if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) != 0)
			r = "skipped: cannot become nobody";
		/* setresuid made us non-dumpable: /proc/self/uid_map would be root's */
		else if (prctl(PR_SET_DUMPABLE, 1) != 0)
			r = "prctl(PR_SET_DUMPABLE) failed";
		else if (access(self_exe, X_OK) != 0)
			r = "skipped: nobody cannot execute the test binary (its directory is not world-searchable)";
		else
			r = fn();
		if (r)
			(void)!write(p[1], r, strlen(r));
		_exit(r ? 1 : 0);
	}
	close(p[1]);
	ssize_t n = pid > 0 ? read(p[0], msg, sizeof msg - 1) : -1;
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	int st = pid > 0 ? wait_exit(pid, 6 * IO_TIMEOUT_MS) : -1;
	if (st != 0 && msg[0] == '\0')
		snprintf(msg, sizeof msg, "the nobody child exited %d", st);
	return msg[0] ? msg : NULL;
}

static void run_root(scenario_fn fn)
{
	if (geteuid() != 0)
		report("skipped: not root");
	report(fn());
}

/* As nobody when we are root; as ourselves when we already are unprivileged. */
static void run_nobody(scenario_fn fn)
{
	report(geteuid() == 0 ? as_nobody(fn) : fn());
}

#define BOTH(name)                                                        \
	static void test_##name##_root(void **s)                          \
	{                                                                 \
		(void)s;                                                  \
		run_root(scenario_##name);                                \
	}                                                                 \
	static void test_##name##_nobody(void **s)                        \
	{                                                                 \
		(void)s;                                                  \
		run_nobody(scenario_##name);                              \
	}

BOTH(transparent)
BOTH(bwrap)
BOTH(table)
BOTH(go_gates_exec)
BOTH(bad_exec)
BOTH(close_before_go)

/* Bad options are refused before anything is forked. */
static void test_bad_options(void **s)
{
	(void)s;
	static const uint16_t p0[] = { 0 }, p3128[] = { 8080, 3128 }, p1080[] = { 1080 };
	char *const argv[] = { "x", NULL };
	static const struct {
		const uint16_t *ports;
		size_t n;
		bool program;
		int want;
		const char *says;
	} cases[] = {
		{ p0, 1, true, -EINVAL, "port 0" },
		{ p3128, 2, true, -EADDRINUSE, "3128" },
		{ p1080, 1, true, -EADDRINUSE, "SOCKS5" },
		{ p0, NETNS_MAX_PORTS + 1, true, -EINVAL, "at most" },
		{ NULL, 0, false, -EINVAL, "no program" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct netns_options opt = { cases[i].ports, cases[i].n, cases[i].program ? "/bin/true" : NULL,
					     argv, helper_env, NULL, NULL };
		struct netns ns;
		char err[512] = "";
		assert_int_equal(netns_start(&opt, &ns, err, sizeof err), cases[i].want);
		if (!strstr(err, cases[i].says))
			fail_msg("case %zu: \"%s\" does not say %s", i, err, cases[i].says);
		assert_int_equal(ns.pid, 0);
		assert_int_equal(ns.sock, -1);
		netns_close(&ns);
	}
}

static void find_bwrap(void)
{
	const char *path = getenv("PATH");
	char dirs[4096];
	snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
	char *save = NULL;
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(bwrap_path, sizeof bwrap_path, "%s/bwrap", d);
		if (d[0] == '/' && access(bwrap_path, X_OK) == 0)
			return;
	}
	bwrap_path[0] = '\0';
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], HELPER_FLAG) == 0)
		return helper_main(argc, argv);
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	if (n <= 0) {
		fprintf(stderr, "test_netns: cannot find its own binary\n");
		return 1;
	}
	self_exe[n] = '\0';
	find_bwrap();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_table_root),
		cmocka_unit_test(test_table_nobody),
		cmocka_unit_test(test_transparent_root),
		cmocka_unit_test(test_transparent_nobody),
		cmocka_unit_test(test_go_gates_exec_root),
		cmocka_unit_test(test_go_gates_exec_nobody),
		cmocka_unit_test(test_bad_exec_root),
		cmocka_unit_test(test_bad_exec_nobody),
		cmocka_unit_test(test_close_before_go_root),
		cmocka_unit_test(test_close_before_go_nobody),
		cmocka_unit_test(test_bwrap_root),
		cmocka_unit_test(test_bwrap_nobody),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
