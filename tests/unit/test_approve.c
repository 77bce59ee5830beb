/*
 * test_approve.c — the channel server (launcher/approvals/approve.c) on a real SEQPACKET
 * channel, wired as `airlock run` wires it (hub.h): a real audit log, a control socket
 * whose clients answer asks.  Events re-decided from the launcher's own image and logged;
 * asks answered headless (deny, --default-allow), by a human, by session memory, by the
 * recent-answer rule and by the timeout; the bounds on waiting asks; an asker that goes
 * away; malformed datagrams logged FLOOD_BURST a second.
 */
#include "testutil.h"
#include "hub_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/channel.h"
#include "launcher/approvals/approve.h"
#include "launcher/approvals/control.h"
#include "launcher/approvals/flood.h"
#include "launcher/approvals/hub.h"
#include "launcher/log/audit.h"

static const char policy_text[] = "version: 1\n"
				  "default: {exec: ask, read: allow, write: ask, connect: ask}\n"
				  "deny:\n"
				  "  - file: {path: .env, action: read}\n"
				  "    reason: Environment files hold secrets\n"
				  "ask:\n"
				  "  - command: git\n"
				  "    args: push\n"
				  "    match: prefix\n"
				  "allow:\n"
				  "  - command: ls\n";

struct fixture {
	struct hub_fixture h;
	struct test_policy pol;
	int human; /* a control client that attached, or -1 */
	char *seen; /* what the human's client got so far (malloc'ed) */
	size_t nseen;
	/* approve_ask_connect()'s answers */
	int done_calls;
	enum policy_decision done_decision;
	char done_by[16];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	test_policy_build(&f->pol, policy_text);
	hub_fixture_open(&f->h, "approve", "agent");
	f->human = -1;
	*state = f;
	return 0;
}

/* The channel server as `airlock run --headless [--default-allow]` makes it. */
static void start(struct fixture *f, bool default_allow, unsigned ask_timeout)
{
	hub_fixture_start(&f->h, (struct approve_options){ .mode = APPROVE_HEADLESS,
							   .default_allow = default_allow,
							   .ask_timeout = ask_timeout,
							   .img = f->pol.img, .pty = -1 });
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	if (f->human >= 0)
		close(f->human);
	hub_fixture_close(&f->h);
	test_policy_free(&f->pol);
	free(f->seen);
	free(f);
	return 0;
}

/* ---- the launcher's loop and its peers -------------------------------------------------- */

static void round_(struct fixture *f)
{
	hub_fixture_round(&f->h);
}

static void rounds(struct fixture *f, int n)
{
	hub_fixture_rounds(&f->h, n);
}

/* A shim's connection, non-blocking so a test can see that no answer came. */
static int shim(struct fixture *f)
{
	int fd = channel_connect(f->h.chan_path);
	assert_true(fd >= 0);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	rounds(f, 2);
	return fd;
}

/* A human on the control socket: asks wait for it while it is attached. */
static void attach_human(struct fixture *f)
{
	f->human = control_connect(f->h.sock_path);
	assert_true(f->human >= 0);
	rounds(f, 2);
	const char *line = "{\"type\":\"attach\"}\n";
	assert_int_equal(write(f->human, line, strlen(line)), (ssize_t)strlen(line));
	rounds(f, 3);
	assert_int_equal(control_attached(f->h.control), 1);
}

/* Reads what the human's client was sent into f->seen. */
static void human_reads(struct fixture *f)
{
	char buf[65536];
	ssize_t n;
	while (f->human >= 0 && (n = recv(f->human, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
		f->seen = realloc(f->seen, f->nseen + (size_t)n + 1);
		memcpy(f->seen + f->nseen, buf, (size_t)n);
		f->nseen += (size_t)n;
		f->seen[f->nseen] = '\0';
	}
}

/* The id of the last ask the human was shown. */
static long last_ask_id(struct fixture *f)
{
	human_reads(f);
	const char *p = NULL, *q = f->seen;
	while (q && (q = strstr(q, "{\"type\":\"ask\",\"id\":")))
		p = q++;
	assert_non_null(p);
	return strtol(p + strlen("{\"type\":\"ask\",\"id\":"), NULL, 10);
}

static void human_answers(struct fixture *f, long id, const char *answer)
{
	char line[128];
	int n = snprintf(line, sizeof line, "{\"type\":\"answer\",\"id\":%ld,\"answer\":\"%s\"}\n", id,
			 answer);
	assert_int_equal(write(f->human, line, (size_t)n), n);
	rounds(f, 3);
}

/* A session a human is attached to (asks wait for it): a shim's connection to it. */
static int with_human(struct fixture *f, unsigned ask_timeout)
{
	start(f, false, ask_timeout);
	attach_human(f);
	return shim(f);
}

/* ---- messages a shim sends ----------------------------------------------------------------- */

static void send_msg(int fd, const struct channel_msg *m)
{
	uint8_t buf[CHANNEL_MAX_MSG];
	assert_int_equal(channel_send(fd, m, buf, sizeof buf), 0);
}

static void send_open(int fd, enum channel_type type, uint32_t id, const char *path,
		      enum policy_decision d, int32_t rule)
{
	struct channel_msg m = { .type = type, .id = id, .source = CHANNEL_SOURCE_OPEN,
				 .action = POLICY_FILE_READ, .decision = d, .rule = rule, .path = path };
	send_msg(fd, &m);
}

/* An exec of program argv (NULL-terminated), as the shim reports it. */
static void send_exec(int fd, enum channel_type type, uint32_t id, const char *program,
		      const char *const *argv, enum policy_decision d, int32_t rule)
{
	uint32_t argc = 0;
	while (argv[argc])
		argc++;
	struct channel_msg m = { .type = type, .id = id, .source = CHANNEL_SOURCE_EXEC,
				 .action = CHANNEL_ACTION_EXEC, .decision = d, .rule = rule,
				 .program = program, .argv = argv, .argc = argc };
	send_msg(fd, &m);
}

static const char *const git_push[] = { "git", "push", "origin", NULL };
static const char *const git_push_tags[] = { "git", "push", "--tags", NULL };

/* git push ARG as an ask, under the rule the policy gives it. */
static void ask_push(struct fixture *f, int fd, uint32_t id, const char *const *argv)
{
	struct policy_verdict v = policy_decide_exec(f->pol.img, "/usr/bin/git", argv);
	assert_int_equal(v.decision, POLICY_ASK);
	send_exec(fd, CHANNEL_ASK, id, "/usr/bin/git", argv, POLICY_ASK, v.rule);
}

/* The answer to ask id on fd, after a few rounds; false when none came. */
static bool answer_of(struct fixture *f, int fd, uint32_t id, struct channel_msg *ans)
{
	static uint8_t buf[CHANNEL_MAX_MSG];
	for (int i = 0; i < 10; i++) {
		rounds(f, 1);
		int r = channel_recv(fd, buf, sizeof buf, ans);
		if (r >= 0 && ans->type == CHANNEL_ANSWER && ans->id == id)
			return true;
		if (r < 0 && r != -EAGAIN)
			fail_msg("channel_recv: %s", strerror(-r));
	}
	return false;
}

static void assert_answer(struct fixture *f, int fd, uint32_t id, enum policy_decision d,
			  enum channel_decided_by by)
{
	struct channel_msg ans;
	assert_true(answer_of(f, fd, id, &ans));
	assert_int_equal(ans.decision, d);
	assert_int_equal(ans.decided_by, by);
}

static void assert_no_answer(struct fixture *f, int fd)
{
	struct channel_msg ans;
	assert_false(answer_of(f, fd, 0xffffffffu, &ans));
}

/* The shim asks (id, argv); it waits until the human answers; the shim gets d, decided by human. */
static void human_decides(struct fixture *f, int fd, uint32_t id, const char *const *argv,
			  const char *answer, enum policy_decision d)
{
	ask_push(f, fd, id, argv);
	assert_no_answer(f, fd);
	human_answers(f, last_ask_id(f), answer);
	assert_answer(f, fd, id, d, CHANNEL_BY_HUMAN);
}

/*
 * Another process (a child) asks git push ARG and waits for the answer.
 * Returns its pid; child_answer() reads what it got.
 */
static pid_t other_process_asks(struct fixture *f, const char *const *argv)
{
	struct policy_verdict v = policy_decide_exec(f->pol.img, "/usr/bin/git", argv);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint32_t argc = 0;
		while (argv[argc])
			argc++;
		struct channel_msg m = { .type = CHANNEL_ASK, .id = 7, .source = CHANNEL_SOURCE_EXEC,
					 .action = CHANNEL_ACTION_EXEC, .decision = POLICY_ASK,
					 .rule = v.rule, .program = "/usr/bin/git", .argv = argv,
					 .argc = argc },
				   ans;
		static uint8_t buf[CHANNEL_MAX_MSG];
		int r = channel_ask_path(f->h.chan_path, &m, &ans, buf, sizeof buf);
		_exit(r < 0 ? 99 : (int)ans.decision * 10 + (int)ans.decided_by);
	}
	return pid;
}

/* Serves until the child is answered: decision * 10 + decided_by; -1 when it still waits. */
static int child_answer(struct fixture *f, pid_t pid, int max_rounds)
{
	int st;
	for (int i = 0; i < max_rounds; i++) {
		rounds(f, 1);
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 98;
	}
	return -1;
}

/* ---- the audit log ------------------------------------------------------------------------------ */

/* Lines of the log whose field key has value (NULL: any), and holding needle (NULL: any). */
static int log_count(const struct fixture *f, const char *key, const char *value, const char *needle)
{
	FILE *fp = fopen(f->h.log_path, "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;
	assert_non_null(fp);
	while (getline(&line, &cap, fp) > 0) {
		json_object *o = json_tokener_parse(line), *v;
		assert_non_null(o); /* every line whole JSON */
		bool match = !key || (json_object_object_get_ex(o, key, &v) &&
				      (!value || strcmp(json_object_get_string(v), value) == 0));
		n += match && (!needle || strstr(line, needle));
		json_object_put(o);
	}
	free(line);
	fclose(fp);
	return n;
}

/* The last line of the log, parsed (json_object_put it). */
static json_object *last_event(const struct fixture *f)
{
	FILE *fp = fopen(f->h.log_path, "r");
	char *line = NULL, *last = NULL;
	size_t cap = 0;
	assert_non_null(fp);
	while (getline(&line, &cap, fp) > 0) {
		free(last);
		last = strdup(line);
	}
	free(line);
	fclose(fp);
	assert_non_null(last);
	json_object *o = json_tokener_parse(last);
	free(last);
	assert_non_null(o);
	return o;
}

static const char *field(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static void assert_field(json_object *o, const char *key, const char *want)
{
	const char *got = field(o, key);
	if (!want) {
		if (got)
			fail_msg("%s: %s, none expected", key, got);
		return;
	}
	if (!got || strcmp(got, want) != 0)
		fail_msg("%s: %s, %s expected", key, got ? got : "(none)", want);
}

static void assert_field_has(json_object *o, const char *key, const char *part)
{
	const char *got = field(o, key);
	if (!got || !strstr(got, part))
		fail_msg("%s: %s, expected to hold \"%s\"", key, got ? got : "(none)", part);
}

/* ---- events --------------------------------------------------------------------------------------- */

/* An event as a shim reports it, and what the log must say of it. */
static const struct event_case {
	const char *path;              /* an OPEN event: reading this path */
	enum policy_decision reported; /* what the shim says it decided */
	const char *decision;          /* what the log says */
	const char *message;           /* part of the logged message; NULL: none */
} event_cases[] = {
	/* as the policy decides: logged as reported */
	{ "/work/ws/readme", POLICY_ALLOW, "allow", NULL },
	{ "/proc/self/fd/3", POLICY_ALLOW, "allow", NULL }, /* an fd that is no file */
	{ "/proc/1/status", POLICY_ALLOW, "allow", NULL },
	/* stricter than the policy: the stricter one stands, without a word */
	{ "/work/ws/readme", POLICY_DENY, "deny", NULL },
	/* an allow the policy would not give: the policy's deny, and why */
	{ "/work/ws/.env", POLICY_ALLOW, "deny",
	  "the shim reported allow, the policy says deny: a forged report from inside the sandbox" },
	/* paths no shim reports: not canonical */
	{ "/work/ws/../ws/.env", POLICY_ALLOW, "deny", "a path no shim reports (not canonical)" },
	{ "/work/ws//readme", POLICY_ALLOW, "deny", "a path no shim reports (not canonical)" },
	{ "/work/ws/readme/", POLICY_ALLOW, "deny", "a path no shim reports (not canonical)" },
	{ "/proc/1/root/etc/shadow", POLICY_ALLOW, "deny", "a path no shim reports (not canonical)" },
};

/* Each event is decided again from the launcher's image and logged so, with its pid and counts. */
static void test_events_redecided(void **state)
{
	struct fixture *f = *state;
	char pid[16];
	unsigned long allow = 0, deny = 0;
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	start(f, false, 60);
	int fd = shim(f);
	for (size_t i = 0; i < sizeof event_cases / sizeof event_cases[0]; i++) {
		const struct event_case *e = &event_cases[i];
		send_open(fd, CHANNEL_EVENT, (uint32_t)i, e->path, e->reported, -1);
		rounds(f, 2);
		json_object *o = last_event(f);
		assert_field(o, "source", "shim");
		assert_field(o, "pid", pid);
		assert_field(o, "file", e->path);
		assert_field(o, "action", "read");
		assert_field(o, "decision", e->decision);
		assert_field(o, "decided_by", "policy");
		if (e->message)
			assert_field_has(o, "message", e->message);
		else
			assert_field(o, "message", NULL);
		json_object_put(o);
		*(strcmp(e->decision, "allow") == 0 ? &allow : &deny) += 1;
	}
	struct approve_counts c;
	approve_counts(f->h.approvals, &c);
	assert_int_equal(c.allow, allow);
	assert_int_equal(c.deny, deny);
	close(fd);
}

/* The policy's deny names its rule and reason; a relative program is no shim's report. */
static void test_event_rule_and_program(void **state)
{
	struct fixture *f = *state;
	static const char *const ls[] = { "ls", NULL };
	start(f, false, 60);
	int fd = shim(f);
	send_open(fd, CHANNEL_EVENT, 1, "/work/ws/.env", POLICY_ALLOW, -1);
	rounds(f, 2);
	json_object *o = last_event(f);
	assert_field(o, "reason", "Environment files hold secrets");
	assert_field_has(o, "rule", "test.yaml:");
	json_object_put(o);
	send_exec(fd, CHANNEL_EVENT, 2, "ls", ls, POLICY_ALLOW, -1);
	rounds(f, 2);
	o = last_event(f);
	assert_field(o, "decision", "deny");
	assert_field_has(o, "message", "a program path no shim reports (relative)");
	json_object_put(o);
	close(fd);
}

/* An exec whose arguments were cut to fit the channel is decided on what came, and says so. */
static void test_event_args_cut(void **state)
{
	struct fixture *f = *state;
	static const char *const argv[] = { "ls", "-l", NULL };
	start(f, false, 60);
	int fd = shim(f);
	struct channel_msg m = { .type = CHANNEL_EVENT, .id = 1, .flags = CHANNEL_F_TRUNCATED,
				 .source = CHANNEL_SOURCE_EXEC, .action = CHANNEL_ACTION_EXEC,
				 .decision = POLICY_ALLOW, .rule = -1, .program = "/bin/ls",
				 .argv = argv, .argc = 2, .argc_total = 5 };
	struct policy_verdict v = policy_decide_exec(f->pol.img, "/bin/ls", argv);
	assert_int_equal(v.decision, POLICY_ALLOW);
	m.rule = v.rule;
	send_msg(fd, &m);
	rounds(f, 2);
	json_object *o = last_event(f);
	assert_field(o, "command", "/bin/ls");
	assert_field(o, "decision", "allow");
	assert_field(o, "truncated", "true");
	assert_field_has(o, "message", "arguments cut to fit the channel: decided again on the first 2 of 5");
	json_object_put(o);
	close(fd);
}

/* ---- asks ---------------------------------------------------------------------------------------- */

/* Nobody to answer: an ask is denied at once, decided by default, and logged so. */
static void test_ask_headless_deny(void **state)
{
	struct fixture *f = *state;
	start(f, false, 60);
	int fd = shim(f);
	ask_push(f, fd, 5, git_push);
	assert_answer(f, fd, 5, POLICY_DENY, CHANNEL_BY_DEFAULT);
	json_object *o = last_event(f);
	assert_field(o, "command", "/usr/bin/git");
	assert_field(o, "decision", "deny");
	assert_field(o, "decided_by", "default");
	json_object_put(o);
	struct approve_counts c;
	approve_counts(f->h.approvals, &c);
	assert_int_equal(c.asked, 1);
	assert_int_equal(c.deny, 1);
	assert_int_equal(c.pending, 0);
	close(fd);
}

/* --default-allow: the same ask is allowed at once. */
static void test_ask_headless_default_allow(void **state)
{
	struct fixture *f = *state;
	start(f, true, 60);
	int fd = shim(f);
	ask_push(f, fd, 5, git_push);
	assert_answer(f, fd, 5, POLICY_ALLOW, CHANNEL_BY_DEFAULT);
	assert_int_equal(log_count(f, "decided_by", "default", "\"decision\":\"allow\""), 1);
	close(fd);
}

static void done(void *arg, enum policy_decision d, const char *by)
{
	struct fixture *f = arg;
	f->done_calls++;
	f->done_decision = d;
	snprintf(f->done_by, sizeof f->done_by, "%s", by);
}

/* The proxy's asks take the same rules: headless, done() is told at once. */
static void test_ask_connect_headless(void **state)
{
	struct fixture *f = *state;
	start(f, true, 60);
	assert_int_equal(approve_ask_connect(f->h.approvals, "example.com", 443, -1, done, f), 0);
	assert_int_equal(f->done_calls, 1);
	assert_int_equal(f->done_decision, POLICY_ALLOW);
	assert_string_equal(f->done_by, "default");
}

/* A human answers on the control socket; the answer is logged with how long it took. */
static void test_ask_human(void **state)
{
	struct fixture *f = *state;
	int fd = with_human(f, 60);
	ask_push(f, fd, 5, git_push);
	assert_no_answer(f, fd);
	struct approve_counts c;
	approve_counts(f->h.approvals, &c);
	assert_int_equal(c.pending, 1);
	human_reads(f);
	assert_non_null(strstr(f->seen, "\"what\":\"exec /usr/bin/git push origin\""));
	human_answers(f, last_ask_id(f), "allow");
	assert_answer(f, fd, 5, POLICY_ALLOW, CHANNEL_BY_HUMAN);
	json_object *o = last_event(f);
	assert_field(o, "decision", "allow");
	assert_field(o, "decided_by", "human");
	assert_non_null(field(o, "response_time_ms"));
	json_object_put(o);
	human_reads(f);
	assert_non_null(strstr(f->seen, "\"decision\":\"allow\",\"decided_by\":\"human\""));
	close(fd);
}

/* allow-session: the same request is allowed for the rest of the session, whoever asks. */
static void test_session_memory(void **state)
{
	struct fixture *f = *state;
	int fd = with_human(f, 60);
	human_decides(f, fd, 5, git_push, "allow-session", POLICY_ALLOW);
	/* another process, the same request: answered from memory, no human */
	pid_t child = other_process_asks(f, git_push);
	assert_int_equal(child_answer(f, child, 200), POLICY_ALLOW * 10 + CHANNEL_BY_SESSION);
	assert_int_equal(log_count(f, "decided_by", "session", NULL), 1);
	/* another request still waits for the human */
	human_decides(f, fd, 6, git_push_tags, "deny-session", POLICY_DENY);
	child = other_process_asks(f, git_push_tags);
	assert_int_equal(child_answer(f, child, 200), POLICY_DENY * 10 + CHANNEL_BY_SESSION);
	close(fd);
}

/*
 * Session memory keys an exec by its argv, not by its words joined with spaces:
 * allow-session for git push 'origin main' (one argument) does not allow git push origin
 * main (two), which the human never saw; the ask shows each argument as a shell word.
 */
static void test_session_memory_argv(void **state)
{
	static const char *const one[] = { "git", "push", "origin main", NULL };
	static const char *const two[] = { "git", "push", "origin", "main", NULL };
	struct fixture *f = *state;
	int fd = with_human(f, 60);
	ask_push(f, fd, 5, one);
	assert_no_answer(f, fd);
	human_reads(f);
	assert_non_null(strstr(f->seen, "\"what\":\"exec /usr/bin/git push 'origin main'\""));
	human_answers(f, last_ask_id(f), "allow-session");
	assert_answer(f, fd, 5, POLICY_ALLOW, CHANNEL_BY_HUMAN);
	pid_t child = other_process_asks(f, two);
	assert_int_equal(child_answer(f, child, 20), -1); /* waits for the human */
	approve_end(f->h.approvals);
	assert_int_equal(child_answer(f, child, 200), POLICY_DENY * 10 + CHANNEL_BY_DEFAULT);
	child = other_process_asks(f, one); /* the same argv: from memory */
	assert_int_equal(child_answer(f, child, 200), POLICY_ALLOW * 10 + CHANNEL_BY_SESSION);
	close(fd);
}

/*
 * An answer just given: the same process asking the same again at once gets
 * it again (execvp(3) retrying each PATH directory); another process, or
 * another request, waits.
 */
static void test_recent_answer(void **state)
{
	struct fixture *f = *state;
	int fd = with_human(f, 60);
	human_decides(f, fd, 5, git_push, "allow", POLICY_ALLOW);
	ask_push(f, fd, 6, git_push);
	assert_answer(f, fd, 6, POLICY_ALLOW, CHANNEL_BY_SESSION);
	ask_push(f, fd, 7, git_push_tags);
	assert_no_answer(f, fd);
	pid_t child = other_process_asks(f, git_push);
	assert_int_equal(child_answer(f, child, 20), -1); /* waits */
	struct approve_counts c;
	approve_counts(f->h.approvals, &c);
	assert_int_equal(c.pending, 2);
	approve_end(f->h.approvals); /* the session ends: both denied by default */
	assert_int_equal(child_answer(f, child, 200), POLICY_DENY * 10 + CHANNEL_BY_DEFAULT);
	assert_answer(f, fd, 7, POLICY_DENY, CHANNEL_BY_DEFAULT);
	close(fd);
}

/* No answer within ask_timeout: denied, decided by timeout. */
static void test_ask_timeout(void **state)
{
	struct fixture *f = *state;
	int fd = with_human(f, 1);
	ask_push(f, fd, 5, git_push);
	assert_no_answer(f, fd);
	int left = approve_timeout_ms(f->h.approvals);
	assert_true(left > 0 && left <= 1000);
	usleep(1100 * 1000);
	assert_answer(f, fd, 5, POLICY_DENY, CHANNEL_BY_TIMEOUT);
	assert_int_equal(log_count(f, "decided_by", "timeout", NULL), 1);
	assert_int_equal(approve_timeout_ms(f->h.approvals), -1);
	close(fd);
}

/* The last human leaves: what waits takes the headless rule at once. */
static void test_last_human_leaves(void **state)
{
	struct fixture *f = *state;
	start(f, true, 60);
	attach_human(f);
	int fd = shim(f);
	ask_push(f, fd, 5, git_push);
	assert_no_answer(f, fd);
	close(f->human);
	f->human = -1;
	assert_answer(f, fd, 5, POLICY_ALLOW, CHANNEL_BY_DEFAULT);
	close(fd);
}

/* ---- bounds and departures ------------------------------------------------------------------- */

/* The 17th waiting ask of one process is refused at once and logged with why; others still wait. */
static void test_bound_per_process(void **state)
{
	struct fixture *f = *state;
	int fd = with_human(f, 60);
	for (uint32_t i = 1; i <= APPROVE_MAX_ASKS_PER_PROCESS; i++) {
		char arg[16];
		snprintf(arg, sizeof arg, "r%u", i);
		const char *const argv[] = { "git", "push", arg, NULL };
		ask_push(f, fd, i, argv);
	}
	assert_no_answer(f, fd);
	struct approve_counts c;
	approve_counts(f->h.approvals, &c);
	assert_int_equal(c.pending, APPROVE_MAX_ASKS_PER_PROCESS);
	ask_push(f, fd, 100, git_push);
	assert_answer(f, fd, 100, POLICY_DENY, CHANNEL_BY_DEFAULT);
	json_object *o = last_event(f);
	assert_field(o, "decision", "deny");
	assert_field(o, "decided_by", "default");
	assert_field_has(o, "message", "refused at once: this process already has 16 asks waiting "
				       "(the bound per process)");
	json_object_put(o);
	approve_counts(f->h.approvals, &c);
	assert_int_equal(c.pending, APPROVE_MAX_ASKS_PER_PROCESS);
	assert_int_equal(c.asked, APPROVE_MAX_ASKS_PER_PROCESS + 1);
	/* another process is not crowded out */
	pid_t child = other_process_asks(f, git_push_tags);
	assert_int_equal(child_answer(f, child, 20), -1);
	human_answers(f, last_ask_id(f), "allow");
	assert_int_equal(child_answer(f, child, 200), POLICY_ALLOW * 10 + CHANNEL_BY_HUMAN);
	close(fd);
}

/* The asker goes away with asks waiting: each is logged as denied, and the human told. */
static void test_asker_goes_away(void **state)
{
	struct fixture *f = *state;
	int fd = with_human(f, 60);
	ask_push(f, fd, 1, git_push);
	ask_push(f, fd, 2, git_push_tags);
	assert_no_answer(f, fd);
	close(fd);
	rounds(f, 3);
	struct approve_counts c;
	approve_counts(f->h.approvals, &c);
	assert_int_equal(c.pending, 0);
	assert_int_equal(log_count(f, "decided_by", "default",
				   "the asking process went away before an answer"), 2);
	human_reads(f);
	int answered = 0;
	for (const char *p = f->seen; (p = strstr(p, "\"type\":\"answered\"")); p++)
		answered++;
	assert_int_equal(answered, 2);
	assert_non_null(strstr(f->seen, "\"decision\":\"deny\",\"decided_by\":\"default\""));
}

/* Garbage on the channel: FLOOD_BURST lines a second per process, then one summary with the count. */
static void test_malformed_flood(void **state)
{
	struct fixture *f = *state;
	start(f, false, 60);
	int fd = shim(f);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(send(fd, "garbage!", 8, MSG_NOSIGNAL), 8);
		if (i % 20 == 19)
			round_(f); /* the launcher reads as it comes */
	}
	rounds(f, 3);
	assert_int_equal(log_count(f, "source", "launcher",
				   "malformed message on the approval socket dropped"), FLOOD_BURST);
	usleep((FLOOD_WINDOW_MS + 50) * 1000);
	rounds(f, 2);
	assert_int_equal(log_count(f, "source", "launcher",
				   "90 more malformed message(s) or refused connection(s)"), 1);
	/* an answer is not a shim's to send */
	usleep((FLOOD_WINDOW_MS + 50) * 1000);
	struct channel_msg m = { .type = CHANNEL_ANSWER, .id = 1, .decision = POLICY_ALLOW, .rule = -1 };
	send_msg(fd, &m);
	rounds(f, 2);
	assert_int_equal(log_count(f, "source", "launcher",
				   "a shim may send only events, asks and hellos"), 1);
	/* the connection still works */
	send_open(fd, CHANNEL_EVENT, 1, "/work/ws/readme", POLICY_ALLOW, -1);
	rounds(f, 2);
	assert_int_equal(log_count(f, "file", "/work/ws/readme", NULL), 1);
	close(fd);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_events_redecided),
		T(test_event_rule_and_program),
		T(test_event_args_cut),
		T(test_ask_headless_deny),
		T(test_ask_headless_default_allow),
		T(test_ask_connect_headless),
		T(test_ask_human),
		T(test_session_memory),
		T(test_session_memory_argv),
		T(test_recent_answer),
		T(test_ask_timeout),
		T(test_last_human_leaves),
		T(test_bound_per_process),
		T(test_asker_goes_away),
		T(test_malformed_flood),
	};
#undef T
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
