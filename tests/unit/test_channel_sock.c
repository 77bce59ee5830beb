/* test_channel_sock.c — the shim <-> launcher channel on sockets: ask/answer over a socketpair, the listening socket, the test server end to end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/channel.h"

extern char **environ;

/* A scratch buffer of one message. */
static uint8_t buf[CHANNEL_MAX_MSG];

/* ---- Ask / answer over a socketpair -------------------------------------------------- */

struct peer {
	int fd;
	pthread_t asker;
	int mode; /* 0: noise then the answer; 1: close; 2: signal the asker, then answer */
};

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	uint8_t b[CHANNEL_MAX_MSG];
	struct channel_msg req, ev = { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_OPEN,
				       .action = POLICY_FILE_READ, .path = "/x", .rule = -1 };
	int r = channel_recv(p->fd, b, sizeof b, &req);
	if (r < 0 || req.type != CHANNEL_ASK)
		return (void *)1;
	if (p->mode == 1) {
		close(p->fd);
		return NULL;
	}
	if (p->mode == 2) {
		struct timespec ts = { 0, 100 * 1000000 };
		nanosleep(&ts, NULL);
		pthread_kill(p->asker, SIGUSR1);
		nanosleep(&ts, NULL);
	} else {
		/* Noise the asker must skip: an event, another id, garbage. */
		uint8_t junk[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
		channel_send(p->fd, &ev, b, sizeof b);
		r = channel_encode_answer(b, sizeof b, req.id + 1, POLICY_DENY, CHANNEL_BY_HUMAN, -1);
		channel_send_buf(p->fd, b, (size_t)r);
		channel_send_buf(p->fd, junk, sizeof junk);
	}
	r = channel_encode_answer(b, sizeof b, req.id, POLICY_ALLOW, CHANNEL_BY_HUMAN, 3);
	channel_send_buf(p->fd, b, (size_t)r);
	return NULL;
}

static int ask_via_peer(int mode, struct channel_msg *answer)
{
	int sv[2];
	pthread_t t;
	struct peer p;
	uint8_t scratch[CHANNEL_MAX_MSG];
	struct channel_msg req = { .type = CHANNEL_ASK, .id = 77, .source = CHANNEL_SOURCE_CONNECT,
				   .action = CHANNEL_ACTION_CONNECT, .decision = POLICY_ASK,
				   .host = "example.com", .port = 443, .rule = -1 };
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	p = (struct peer){ sv[1], pthread_self(), mode };
	assert_int_equal(pthread_create(&t, NULL, peer_main, &p), 0);
	int r = channel_ask(sv[0], &req, answer, scratch, sizeof scratch);
	pthread_join(t, NULL);
	close(sv[0]);
	if (mode != 1)
		close(sv[1]);
	return r;
}

static void test_ask_skips_noise(void **state)
{
	struct channel_msg a;
	(void)state;
	assert_int_equal(ask_via_peer(0, &a), POLICY_ALLOW);
	assert_int_equal(a.type, CHANNEL_ANSWER);
	assert_int_equal(a.id, 77);
	assert_int_equal(a.decided_by, CHANNEL_BY_HUMAN);
	assert_int_equal(a.rule, 3);
}

static void test_ask_peer_closed(void **state)
{
	struct channel_msg a;
	(void)state;
	assert_int_equal(ask_via_peer(1, &a), -ECONNRESET);
}

static volatile sig_atomic_t usr1_hits;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_hits++;
}

/* A handler without SA_RESTART interrupts the blocking recv; the ask carries on. */
static void test_ask_eintr(void **state)
{
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	struct channel_msg a;
	(void)state;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	usr1_hits = 0;
	assert_int_equal(ask_via_peer(2, &a), POLICY_ALLOW);
	assert_int_equal(usr1_hits, 1);
	assert_int_equal(a.id, 77);
	sigaction(SIGUSR1, &old, NULL);
}

static void test_ask_wrong_type(void **state)
{
	struct channel_msg req = { .type = CHANNEL_EVENT }, a;
	uint8_t scratch[64];
	(void)state;
	assert_int_equal(channel_ask(-1, &req, &a, scratch, sizeof scratch), -EINVAL);
}

/* A datagram over the receive buffer is reported, discarded, and the next one is fine. */
static void test_recv_oversize(void **state)
{
	static uint8_t big[CHANNEL_MAX_MSG + 100];
	struct channel_msg m;
	int sv[2], n, sz = 4 * CHANNEL_MAX_MSG;
	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	memset(big, 0x41, sizeof big);
	assert_int_equal(channel_send_buf(sv[1], big, sizeof big), 0);
	n = channel_encode_answer(big, sizeof big, 9, POLICY_DENY, CHANNEL_BY_POLICY, -1);
	assert_int_equal(channel_send_buf(sv[1], big, (size_t)n), 0);
	assert_int_equal(channel_recv(sv[0], buf, sizeof buf, &m), -EMSGSIZE);
	assert_int_equal(channel_recv(sv[0], buf, sizeof buf, &m), n);
	assert_int_equal(m.id, 9);
	close(sv[1]);
	assert_int_equal(channel_recv(sv[0], buf, sizeof buf, &m), -ECONNRESET);
	close(sv[0]);
}

/* ---- Listening socket ---------------------------------------------------------------------- */

static char tmpdir[256];

static int make_tmpdir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_channel.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
	char cmd[300];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_listen_peer(void **state)
{
	char path[300], toolong[200];
	struct stat st;
	struct ucred cr;
	int lfd, cfd, sfd, type;
	socklen_t tl = sizeof type;
	(void)state;
	snprintf(path, sizeof path, "%s/channel", tmpdir);
	lfd = channel_listen(path);
	assert_true(lfd >= 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(getsockopt(lfd, SOL_SOCKET, SO_TYPE, &type, &tl), 0);
	assert_int_equal(type, SOCK_SEQPACKET);
	assert_int_equal(channel_listen(path), -EADDRINUSE);
	cfd = channel_connect(path);
	assert_true(cfd >= 0);
	sfd = channel_accept(lfd);
	assert_true(sfd >= 0);
	assert_int_equal(channel_peer(sfd, &cr), 0);
	assert_int_equal(cr.pid, getpid());
	assert_int_equal(cr.uid, getuid());
	assert_int_equal(channel_accept(lfd), -EAGAIN);
	close(sfd);
	close(cfd);
	close(lfd);
	unlink(path);
	memset(toolong, 'a', sizeof toolong - 1);
	toolong[0] = '/';
	toolong[sizeof toolong - 1] = '\0';
	assert_int_equal(channel_connect(toolong), -ENAMETOOLONG);
	assert_int_equal(channel_listen(toolong), -ENAMETOOLONG);
	assert_int_equal(channel_connect(path), -ENOENT);
}

/* ---- End to end against tests/support/channel_server ---------------------------------------- */

#define E2E_PROCS 20
#define E2E_ASKS 20

/* $CHANNEL_SERVER, else the channel_server next to this test binary (so an ASan
 * build finds the ASan server), else build/tests/channel_server. */
static const char *server_path(void)
{
	static char sibling[4096];
	const char *p = getenv("CHANNEL_SERVER");
	ssize_t n;
	char *slash;
	if (p && *p)
		return p;
	n = readlink("/proc/self/exe", sibling, sizeof sibling - 32);
	if (n > 0) {
		sibling[n] = '\0';
		slash = strrchr(sibling, '/');
		if (slash) {
			strcpy(slash + 1, "channel_server");
			if (access(sibling, X_OK) == 0)
				return sibling;
		}
	}
	return "build/tests/channel_server";
}

static pid_t spawn_server(const char *sock, const char *log, const char *rules)
{
	const char *bin = server_path();
	char *argv[] = { (char *)bin, (char *)sock, (char *)log, "--answer", "allow",
			 "--delay-ms", "20", "--rules", (char *)rules, NULL };
	pid_t pid;
	assert_int_equal(posix_spawn(&pid, bin, NULL, NULL, argv, environ), 0);
	return pid;
}

static void wait_for_socket(const char *sock)
{
	for (int i = 0; i < 500; i++) {
		int fd = channel_connect(sock);
		if (fd >= 0) {
			close(fd);
			return;
		}
		usleep(10000);
	}
	fail_msg("channel_server never listened on %s", sock);
}

struct e2e_ask {
	const char *sock;
	uint32_t id;
	int failed;
	pthread_barrier_t *start;
};

/* Ids are unique per run: process index << 8 | thread index; odd threads ask for a denied path. */
static void *e2e_thread(void *arg)
{
	struct e2e_ask *a = arg;
	char path[64];
	uint8_t scratch[512];
	struct channel_msg ans;
	int deny = a->id & 1;
	snprintf(path, sizeof path, "/x/%s/%u", deny ? "deny" : "allow", a->id);
	struct channel_msg req = { .type = CHANNEL_ASK, .id = a->id, .source = CHANNEL_SOURCE_OPEN,
				   .action = POLICY_FILE_WRITE, .decision = POLICY_ASK,
				   .path = path, .rule = -1 };
	pthread_barrier_wait(a->start);
	int r = channel_ask_path(a->sock, &req, &ans, scratch, sizeof scratch);
	a->failed = r != (deny ? POLICY_DENY : POLICY_ALLOW) || ans.id != a->id ||
		    ans.decided_by != (deny ? CHANNEL_BY_POLICY : CHANNEL_BY_DEFAULT);
	return NULL;
}

/* One child process: E2E_ASKS threads ask at once; exit status = failures. */
static void e2e_child(const char *sock, unsigned proc)
{
	pthread_t t[E2E_ASKS];
	struct e2e_ask a[E2E_ASKS];
	pthread_barrier_t start;
	int failed = 0;
	pthread_barrier_init(&start, NULL, E2E_ASKS);
	for (unsigned i = 0; i < E2E_ASKS; i++) {
		a[i] = (struct e2e_ask){ sock, proc << 8 | i, 0, &start };
		if (pthread_create(&t[i], NULL, e2e_thread, &a[i]) != 0)
			_exit(100);
	}
	for (unsigned i = 0; i < E2E_ASKS; i++) {
		pthread_join(t[i], NULL);
		failed += a[i].failed;
	}
	_exit(failed);
}

static void send_garbage(const char *sock)
{
	static const uint8_t junk[] = { 0x01, 0xA1, 9, 0, 24, 0, 0, 0 };
	int fd = channel_connect(sock);
	assert_true(fd >= 0);
	assert_int_equal(channel_send_buf(fd, junk, sizeof junk), 0);
	close(fd);
}

/* Counts log lines of one type for (pid, id) pairs; each must appear exactly once. */
static void check_log(const char *log, pid_t *pids, const char *odd_line)
{
	static int seen[E2E_PROCS][E2E_ASKS];
	char line[8192];
	int asks = 0, answers = 0, malformed = 0, odd = 0;
	FILE *f = fopen(log, "r");
	assert_non_null(f);
	memset(seen, 0, sizeof seen);
	while (fgets(line, sizeof line, f)) {
		const char *p = strstr(line, "\"pid\":"), *i = strstr(line, "\"id\":");
		assert_non_null(p);
		if (strstr(line, odd_line))
			odd++;
		if (strncmp(line, "{\"type\":\"malformed\"", 19) == 0) {
			malformed++;
			continue;
		}
		if (strncmp(line, "{\"type\":\"answer_sent\"", 21) == 0) {
			answers++;
			continue;
		}
		assert_true(strncmp(line, "{\"type\":\"ask\"", 13) == 0);
		asks++;
		assert_non_null(i);
		int pid = atoi(p + 6);
		unsigned id = (unsigned)strtoul(i + 5, NULL, 10);
		for (unsigned k = 0; k < E2E_PROCS; k++)
			if (pids[k] == pid && (id >> 8) == k && (id & 0xff) < E2E_ASKS)
				seen[k][id & 0xff]++;
	}
	fclose(f);
	for (unsigned k = 0; k < E2E_PROCS; k++)
		for (unsigned j = 0; j < E2E_ASKS; j++)
			if (seen[k][j] != 1)
				fail_msg("process %u ask %u logged %d times", k, j, seen[k][j]);
	assert_int_equal(asks, E2E_PROCS * E2E_ASKS + 1);
	assert_int_equal(answers, asks);
	assert_int_equal(malformed, 1);
	assert_int_equal(odd, 1);
}

/* The JSON escaping of the server, on a path with every awkward kind of byte. */
static void ask_odd_path(const char *sock)
{
	uint8_t scratch[512];
	struct channel_msg ans, req = { .type = CHANNEL_ASK, .id = 0xfffff, .source = CHANNEL_SOURCE_OPEN,
					.action = POLICY_FILE_READ, .decision = POLICY_ASK,
					.path = "/x/\"q\"\\\n\x01\x7f\xff\xc3\xa9\xed\xa0\x80", .rule = -1 };
	assert_int_equal(channel_ask_path(sock, &req, &ans, scratch, sizeof scratch), POLICY_ALLOW);
}

static void test_end_to_end(void **state)
{
	char sock[300], log[300], rules[300];
	pid_t server, pids[E2E_PROCS];
	int status;
	FILE *f;
	(void)state;
	if (access(server_path(), X_OK) != 0) {
		print_message("skipped: %s not built (set CHANNEL_SERVER)\n", server_path());
		skip();
	}
	snprintf(sock, sizeof sock, "%s/e2e.sock", tmpdir);
	snprintf(log, sizeof log, "%s/e2e.jsonl", tmpdir);
	snprintf(rules, sizeof rules, "%s/rules", tmpdir);
	f = fopen(rules, "w");
	assert_non_null(f);
	fputs("# odd ids ask for /x/deny/...\ndeny /x/deny/*\n", f);
	fclose(f);
	server = spawn_server(sock, log, rules);
	wait_for_socket(sock);
	send_garbage(sock);
	for (unsigned k = 0; k < E2E_PROCS; k++) {
		pids[k] = fork();
		assert_true(pids[k] >= 0);
		if (pids[k] == 0)
			e2e_child(sock, k);
	}
	for (unsigned k = 0; k < E2E_PROCS; k++) {
		assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("child %u: status %#x", k, status);
	}
	ask_odd_path(sock);
	assert_int_equal(kill(server, SIGTERM), 0);
	assert_int_equal(waitpid(server, &status, 0), server);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(access(sock, F_OK), -1);
	check_log(log, pids,
		  "\"path\":\"/x/\\\"q\\\"\\\\\\n\\u0001\\u007f\\u00ff\xc3\xa9\\u00ed\\u00a0\\u0080\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ask_skips_noise),
		cmocka_unit_test(test_ask_peer_closed),
		cmocka_unit_test(test_ask_eintr),
		cmocka_unit_test(test_ask_wrong_type),
		cmocka_unit_test(test_recv_oversize),
		cmocka_unit_test(test_listen_peer),
		cmocka_unit_test(test_end_to_end),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
