/*
 * test_control.c — the control socket wired as `airlock run` wires it (hub.h): a real audit
 * log whose tap broadcasts to the clients, the approval queue behind the answers, bad lines
 * logged through the flood bound.  Clients that leave mid-callback, floods of bad lines, a
 * client that stops reading while the agent floods events, huge events and asks, and a
 * launcher out of file descriptors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "hub_fixture.h"
#include "launcher/approvals/control.h"
#include "launcher/approvals/control_lines.h"
#include "launcher/approvals/flood.h"
#include "launcher/approvals/hub.h"
#include "launcher/log/audit.h"
#include "launcher/approvals/approve.h"
#include "core/channel.h"

struct fixture {
	struct hub_fixture h;
	/* the proxy-style asks' answers */
	int done_calls;
	enum policy_decision done_decision;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	hub_fixture_open(&f->h, "control", "agent --flag");
	hub_fixture_start(&f->h, (struct approve_options){ .mode = APPROVE_HEADLESS,
							   .ask_timeout = 60, .pty = -1 });
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	hub_fixture_close(&f->h);
	free(f);
	return 0;
}

static void round_(struct fixture *f)
{
	hub_fixture_round(&f->h);
}

static void rounds(struct fixture *f, int n)
{
	hub_fixture_rounds(&f->h, n);
}

static int client(struct fixture *f)
{
	int fd = control_connect(f->h.sock_path);
	assert_true(fd >= 0);
	rounds(f, 3); /* accepted, hello sent */
	return fd;
}

static void send_text(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* Everything the client got so far (non-blocking), NUL-terminated, malloc'ed. */
static char *drain(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
		ssize_t r = recv(fd, buf + n, cap - n, MSG_DONTWAIT);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* How many lines of the audit log hold needle. */
static int log_count(const struct fixture *f, const char *needle)
{
	FILE *fp = fopen(f->h.log_path, "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;
	assert_non_null(fp);
	while (getline(&line, &cap, fp) > 0) {
		json_object *o = json_tokener_parse(line);
		assert_non_null(o); /* every line whole JSON */
		json_object_put(o);
		n += strstr(line, needle) != NULL;
	}
	free(line);
	fclose(fp);
	return n;
}

/* The pid field of every line holding needle is this process's. */
static void log_pids_are_mine(const struct fixture *f, const char *needle)
{
	FILE *fp = fopen(f->h.log_path, "r");
	char *line = NULL, want[32];
	size_t cap = 0;
	snprintf(want, sizeof want, "\"pid\":%d,", (int)getpid());
	while (getline(&line, &cap, fp) > 0)
		if (strstr(line, needle) && !strstr(line, want))
			fail_msg("a line with a pid not ours: %s", line);
	free(line);
	fclose(fp);
}

/* n allowed exec events, each with one argument of size bytes of ch, through the real log (and its tap). */
static void log_big_events(struct fixture *f, int n, size_t size, char ch)
{
	char *big = malloc(size + 1);
	memset(big, ch, size);
	big[size] = '\0';
	const char *args[] = { big };
	for (int i = 0; i < n; i++) {
		struct audit_event ev = { .source = "shim", .pid = 7, .command = "/bin/echo",
					  .args = args, .nargs = 1, .decision = "allow",
					  .decided_by = "policy", .response_time_ms = -1 };
		assert_int_equal(audit_write(f->h.log, &ev), 0);
	}
	free(big);
}

/* All the client reads over n rounds of the launcher's loop, NUL-terminated, malloc'ed. */
static char *read_rounds(struct fixture *f, int fd, int n)
{
	char *all = calloc(1, 1);
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		size_t len;
		char *got = drain(fd, &len);
		all = realloc(all, total + len + 1);
		memcpy(all + total, got, len + 1);
		total += len;
		free(got);
		round_(f);
	}
	return all;
}

/*
 * The crash found from outside: two malformed lines, then the client closes.
 * Logging the first broadcasts to the client, the send fails (EPIPE), the
 * client is dropped from inside serve(), which read on from freed memory.
 */
static void test_two_bad_lines_then_close(void **state)
{
	struct fixture *f = *state;
	for (int k = 0; k < 20; k++) {
		int fd = client(f);
		send_text(fd, "garbage one\ngarbage two\n");
		close(fd);
		rounds(f, 2);
	}
	/* a client still attached afterwards is served normally */
	int fd = client(f);
	send_text(fd, "{\"type\":\"attach\"}\n");
	rounds(f, 3);
	assert_int_equal(control_attached(f->h.control), 1);
	close(fd);
	rounds(f, 3);
	assert_int_equal(control_attached(f->h.control), 0);
	/* one pid sent them all: FLOOD_BURST logged, the rest summarised */
	assert_true(log_count(f, "not a JSON object") >= FLOOD_BURST);
	log_pids_are_mine(f, "not a JSON object");
}

static void done(void *arg, enum policy_decision d, const char *by)
{
	struct fixture *f = arg;
	(void)by;
	f->done_calls++;
	f->done_decision = d;
}

/* A script answers an ask and closes at once: the answer's broadcast finds it gone. */
static void test_answer_then_close(void **state)
{
	struct fixture *f = *state;
	for (int k = 0; k < 10; k++) {
		int fd = client(f);
		send_text(fd, "{\"type\":\"attach\"}\n");
		rounds(f, 2);
		assert_int_equal(control_attached(f->h.control), 1);
		f->done_calls = 0;
		char host[32];
		snprintf(host, sizeof host, "h%d.example.com", k); /* not the last answer's again */
		assert_int_equal(approve_ask_connect(f->h.approvals, host, 443, -1, done, f), 0);
		assert_int_equal(f->done_calls, 0); /* waits: a client is attached */
		char *got = drain(fd, NULL);
		const char *id = strstr(got, "\"type\":\"ask\",\"id\":");
		assert_non_null(id);
		char line[128];
		snprintf(line, sizeof line, "{\"type\":\"answer\",\"id\":%ld,\"answer\":\"allow\"}\n"
			 "garbage after the answer\n", strtol(id + 18, NULL, 10));
		free(got);
		send_text(fd, line);
		close(fd);
		if (k & 1) {
			/* the launcher sends before it reads: the send finds the client gone */
			struct audit_event ev = { .source = "launcher", .message = "x",
						  .response_time_ms = -1 };
			assert_int_equal(audit_write(f->h.log, &ev), 0);
		}
		rounds(f, 3);
		assert_int_equal(f->done_calls, 1);
		assert_int_equal(f->done_decision, POLICY_ALLOW);
		assert_int_equal(control_attached(f->h.control), 0);
	}
}

/* Many clients that each send a bad line and leave in the same round. */
static void test_many_leave_in_one_round(void **state)
{
	struct fixture *f = *state;
	int fds[40];
	for (int i = 0; i < 40; i++) {
		fds[i] = control_connect(f->h.sock_path);
		assert_true(fds[i] >= 0);
		round_(f); /* the listen backlog is short */
	}
	rounds(f, 2);
	for (int i = 0; i < 40; i++) {
		send_text(fds[i], i % 2 ? "{\"type\":\"attach\"}\n{\"type\":\"nope\"}\n" : "x\n");
		close(fds[i]);
	}
	rounds(f, 4);
	assert_int_equal(control_attached(f->h.control), 0);
}

/* A flood of bad lines is logged FLOOD_BURST times, then summarised with the count. */
static void test_flood_summarised(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	for (int i = 0; i < 500; i++) {
		send_text(fd, "{\"type\":\"nonsense\"}\n");
		if (i % 50 == 49) {
			round_(f); /* the launcher reads as it comes */
			free(drain(fd, NULL));
		}
	}
	rounds(f, 5);
	assert_int_equal(log_count(f, "unknown type was dropped"), FLOOD_BURST);
	usleep((FLOOD_WINDOW_MS + 50) * 1000);
	rounds(f, 2);
	assert_int_equal(log_count(f, "490 more bad line(s) on the control socket"), 1);
	close(fd);
	rounds(f, 2);
}

/*
 * A client that reads nothing while the agent makes a thousand events of
 * 10 KiB: it is not dropped, the asks still reach it, and once it reads it
 * hears how many events it missed.
 */
static void test_slow_client_kept(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	send_text(fd, "{\"type\":\"attach\"}\n");
	rounds(f, 2);
	int sz = 1 << 16;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	log_big_events(f, 1000, 10000, 'a');
	assert_int_equal(approve_ask_connect(f->h.approvals, "slow.example", 443, -1, done, f), 0);
	rounds(f, 2);
	assert_int_equal(control_attached(f->h.control), 1); /* not dropped */
	/* read everything now: the ask is there, and a "skipped" line with the count */
	char *all = read_rounds(f, fd, 200);
	assert_non_null(strstr(all, "slow.example"));
	const char *sk = strstr(all, "{\"type\":\"skipped\",\"events\":");
	assert_non_null(sk);
	assert_true(strtol(sk + 27, NULL, 10) > 0);
	free(all);
	close(fd);
	rounds(f, 3);
}

/* An event with a 60 KiB argument reaches the stream cut, and says so; the log keeps it whole. */
static void test_huge_event_cut(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	free(drain(fd, NULL));
	char *big = malloc(60001);
	memset(big, 'b', 60000);
	big[60000] = '\0';
	const char *args[] = { "-c", big };
	struct audit_event ev = { .source = "shim", .pid = 7, .command = "/bin/sh", .args = args,
				  .nargs = 2, .decision = "deny", .decided_by = "policy",
				  .response_time_ms = -1 };
	assert_int_equal(audit_write(f->h.log, &ev), 0);
	rounds(f, 2);
	size_t n;
	char *got = drain(fd, &n);
	assert_true(n > 0 && n < CONTROL_EVENT_MAX);
	assert_non_null(strstr(got, "\"cut\":true"));
	assert_non_null(strstr(got, "\"command\":\"/bin/sh\""));
	free(got);
	assert_int_equal(log_count(f, big), 1);
	free(big);
	close(fd);
	rounds(f, 2);
}

/* An ask's who and what are cut for the client, and say so. */
static void test_huge_ask_cut(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	free(drain(fd, NULL));
	char *big = malloc(70001);
	memset(big, 'w', 70000);
	big[70000] = '\0';
	control_ask(f->h.control, 99, 1, big, big, NULL, NULL, 1000);
	rounds(f, 2);
	size_t n;
	char *got = drain(fd, &n);
	assert_true(n > CONTROL_ASK_TEXT_MAX && n < 3 * CONTROL_ASK_TEXT_MAX);
	assert_non_null(strstr(got, "\"cut\":true"));
	free(got);
	free(big);
	control_answered(f->h.control, 99, "deny", "default");
	close(fd);
	rounds(f, 2);
}

/*
 * Out of file descriptors: a connection is refused at once and said, the
 * listener does not stay readable (the loop would spin), and once fds are
 * free again clients are served.
 */
static void test_out_of_fds(void **state)
{
	struct fixture *f = *state;
	struct rlimit old, low;
	getrlimit(RLIMIT_NOFILE, &old);
	int fill[4096], nfill = 0;
	int first = dup(0);
	close(first);
	low.rlim_cur = (rlim_t)first + 64;
	low.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int cfd[4];
	for (int i = 0; i < 4; i++) {
		cfd[i] = control_connect(f->h.sock_path);
		assert_true(cfd[i] >= 0);
	}
	int fd;
	while (nfill < 4096 && (fd = dup(0)) >= 0)
		fill[nfill++] = fd;
	assert_int_equal(errno, EMFILE);
	rounds(f, 2);
	struct pollfd p = { control_fd(f->h.control), POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 0), 0); /* nothing left to spin on */
	for (int i = 0; i < 4; i++) {
		char c;
		/* the refused client sees its connection end */
		assert_int_equal(recv(cfd[i], &c, 1, 0), 0);
		close(cfd[i]);
	}
	for (int i = 0; i < nfill; i++)
		close(fill[i]);
	setrlimit(RLIMIT_NOFILE, &old);
	rounds(f, 2);
	assert_true(log_count(f, "out of file descriptors") >= 1);
	fd = client(f);
	char *got = drain(fd, NULL);
	assert_non_null(strstr(got, "\"type\":\"hello\""));
	free(got);
	close(fd);
	rounds(f, 2);
}

/* What the sandbox sends, any bytes: an ask's line is still JSON (invalid UTF-8 made U+FFFD), and bounded once escaped. */
static void test_ask_text_any_bytes(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	free(drain(fd, NULL));
	char text[4100];
	memset(text, '\x01', 4000); /* 6 bytes each once escaped */
	memcpy(text + 4000, "\xff\xfe-1", 5);
	text[4005] = '\0';
	control_ask(f->h.control, 77, 1, text, text, NULL, NULL, 1000);
	rounds(f, 2);
	size_t n;
	char *got = drain(fd, &n);
	const char *ask = strstr(got, "{\"type\":\"ask\"");
	assert_non_null(ask);
	size_t alen = strcspn(ask, "\n");
	assert_true(alen < 2 * CONTROL_ASK_TEXT_MAX + 512);
	for (size_t i = 0; i < alen; i++)
		assert_true((unsigned char)ask[i] != 0xff && (unsigned char)ask[i] != 0xfe);
	char *line = strndup(ask, alen);
	json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	json_object_put(o);
	free(line);
	assert_non_null(strstr(got, "\"cut\":true"));
	free(got);
	control_answered(f->h.control, 77, "deny", "default");
	close(fd);
	rounds(f, 2);
}

/*
 * A human attaching while the agent keeps the most asks waiting, each as
 * long as it may be, and the backlog full: the new client gets everything
 * (hello, the recent events, every ask) and is not dropped.
 */
static void test_attach_to_a_full_session(void **state)
{
	struct fixture *f = *state;
	char text[4100];
	log_big_events(f, 600, 10000, 'e');
	memset(text, '\x02', 4000);
	text[4000] = '\0';
	for (int i = 0; i < APPROVE_MAX_ASKS; i++)
		control_ask(f->h.control, 1000 + (uint64_t)i, 9, text, text, "p.yaml:1", "why", 60000);
	int fd = control_connect(f->h.sock_path);
	assert_true(fd >= 0);
	int asks = 0;
	char *all = read_rounds(f, fd, 400);
	for (const char *p = all; (p = strstr(p, "{\"type\":\"ask\"")); p++)
		asks++;
	assert_non_null(strstr(all, "{\"type\":\"hello\""));
	assert_int_equal(asks, APPROVE_MAX_ASKS);
	free(all);
	for (int i = 0; i < APPROVE_MAX_ASKS; i++)
		control_answered(f->h.control, 1000 + (uint64_t)i, "deny", "default");
	close(fd);
	rounds(f, 2);
}

/* control_end and control_free close clients the launcher never heard leave. */
static void test_end_with_clients(void **state)
{
	struct fixture *f = *state;
	int a = client(f), b = client(f);
	send_text(a, "{\"type\":\"attach\"}\n");
	rounds(f, 2);
	close(b);
	control_end(f->h.control, 3, 200);
	char *got = drain(a, NULL);
	assert_non_null(strstr(got, "{\"type\":\"end\",\"status\":3}"));
	free(got);
	close(a);
}

/* The answers' names: each one parses back to its answer; only the allowing ones allow. */
static void test_answer_names(void **state)
{
	static const char *const want[CONTROL_ANSWER_MAX] = { "allow", "deny", "allow-session",
							      "deny-session" };
	(void)state;
	for (int a = 0; a < CONTROL_ANSWER_MAX; a++) {
		char line[128];
		struct control_request rq;
		assert_string_equal(control_answer_name((enum control_answer)a), want[a]);
		int n = snprintf(line, sizeof line, "{\"type\":\"answer\",\"id\":7,\"answer\":\"%s\"}",
				 control_answer_name((enum control_answer)a));
		assert_int_equal(control_line_parse(line, (size_t)n, &rq), 0);
		assert_int_equal(rq.type, CONTROL_REQUEST_ANSWER);
		assert_int_equal(rq.answer, a);
		assert_int_equal(control_answer_allows((enum control_answer)a),
				 a == CONTROL_ALLOW || a == CONTROL_ALLOW_SESSION);
	}
	assert_string_equal(control_answer_name(CONTROL_ANSWER_MAX), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_bad_lines_then_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer_then_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_leave_in_one_round, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_summarised, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_client_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_event_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_ask_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_fds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ask_text_any_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_to_a_full_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_with_clients, setup, teardown),
		cmocka_unit_test(test_answer_names),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
