/* test_logread.c — reading the audit log: lines cut anywhere, malformed lines skipped and said, filters, times, the session's fields as text. */
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
#include <unistd.h>

#include <json-c/json.h>

#include "launcher/log/logread.h"
#include "said.h"

/* ---- reading lines ---------------------------------------------------------------- */

/* What the callback was told: each event's id and line number. */
struct seen {
	char id[64][32];
	unsigned long lineno[64];
	size_t n;
};

static void collect(void *ctx, json_object *ev, const char *line, size_t len, unsigned long lineno)
{
	struct seen *s = ctx;
	const char *id = logread_str(ev, "id");
	assert_true(s->n < 64);
	assert_non_null(memchr(line, '{', len)); /* the line as it is in the log */
	assert_null(memchr(line, '\n', len));
	snprintf(s->id[s->n], sizeof s->id[s->n], "%s", id ? id : "-");
	s->lineno[s->n++] = lineno;
}

#define EV(id) "{\"id\":\"" id "\",\"timestamp\":\"2026-11-30T01:02:03.456Z\",\"session_id\":\"s1\"," \
	       "\"source\":\"shim\",\"decision\":\"allow\",\"decided_by\":\"policy\"}"

/* Reads text from a pipe through logread_*(), written in pieces of at most chunk bytes, each read at once. */
static unsigned long read_text(const char *text, size_t chunk, const struct logread_filter *filter,
			       struct seen *s)
{
	struct logread r;
	int p[2];
	size_t len = strlen(text);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(fcntl(p[1], F_SETFL, O_NONBLOCK), 0); /* a full pipe: read, then write on */
	assert_int_equal(logread_init(&r, p[0], "t.jsonl", "log", filter, collect, s), 0);
	for (size_t off = 0; off < len;) {
		size_t n = len - off < chunk ? len - off : chunk;
		ssize_t w = write(p[1], text + off, n);
		assert_true(w > 0 || (w < 0 && errno == EAGAIN));
		off += w > 0 ? (size_t)w : 0;
		assert_int_equal(logread_available(&r), 0); /* EAGAIN: what is there is read */
	}
	close(p[1]);
	assert_int_equal(logread_available(&r), 0);
	logread_finish(&r);
	unsigned long malformed = r.malformed;
	logread_free(&r);
	return malformed;
}

static const char sample[] =
	EV("a") "\n"
	"\n"                                      /* blank: skipped, silently */
	"{\"id\": \"broken\", \"timestamp\":\n"   /* not JSON */
	"[1, 2, 3]\n"                             /* JSON, no object */
	"{\"id\":\"t\",\"session_id\":\"s1\"}\n" /* no timestamp */
	"{\"id\":\"u\",\"timestamp\":\"yesterday\",\"session_id\":\"s1\"}\n"
	"{\"id\":\"v\",\"timestamp\":\"2026-11-30T01:02:03.456Z\",\"session_id\":7}\n"
	"{\"id\":\"w\",\"reason\":\"\xff\"}\n"    /* not UTF-8 */
	EV("b") " \t\r\n"                         /* trailing white space is fine */
	EV("c") "{}\n"                            /* two values on one line */
	EV("d");                                  /* no '\n' at the end: still a line */

static void check_sample(const struct seen *s, unsigned long malformed)
{
	assert_int_equal(malformed, 7);
	assert_int_equal(s->n, 3);
	assert_string_equal(s->id[0], "a");
	assert_int_equal(s->lineno[0], 1);
	assert_string_equal(s->id[1], "b");
	assert_int_equal(s->lineno[1], 9);
	assert_string_equal(s->id[2], "d");
	assert_int_equal(s->lineno[2], 11);
	assert_non_null(strstr(said, "log: t.jsonl:3: not a JSON object, skipped\n"));
	assert_non_null(strstr(said, "log: t.jsonl:4: not a JSON object, skipped\n"));
	assert_non_null(strstr(said, "log: t.jsonl:5: no 'timestamp', skipped\n"));
	assert_non_null(strstr(said, "log: t.jsonl:6: 'timestamp' is not an RFC 3339 time, skipped\n"));
	assert_non_null(strstr(said, "log: t.jsonl:7: 'session_id' is not a string, skipped\n"));
	assert_non_null(strstr(said, "log: t.jsonl:8: not a JSON object, skipped\n"));
	assert_non_null(strstr(said, "log: t.jsonl:10: not a JSON object, skipped\n"));
	assert_null(strstr(said, ":2:")); /* the blank line */
}

/* Whole, and cut into pieces of every size from 1 byte: the same events, the same complaints. */
static void test_lines_cut_anywhere(void **state)
{
	static const size_t chunks[] = { sizeof sample, 1, 2, 3, 7, 64 };
	(void)state;
	for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
		struct seen s = { .n = 0 };
		said[0] = '\0';
		check_sample(&s, read_text(sample, chunks[i], NULL, &s));
	}
}

/*
 * A line longer than the longest accepted (16 MiB), well past it before its
 * end is read, is said once and skipped, and reading goes on.
 */
static void test_long_line(void **state)
{
	size_t n = (16u << 20) + (256u << 10);
	char *text = malloc(n + sizeof EV("z") + 4);
	struct seen s = { .n = 0 };
	(void)state;
	assert_non_null(text);
	memset(text, 'x', n);
	strcpy(text + n, "\n" EV("z") "\n");
	said[0] = '\0';
	assert_int_equal(read_text(text, 1u << 20, NULL, &s), 1);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.id[0], "z");
	assert_int_equal(s.lineno[0], 2);
	assert_non_null(strstr(said, "t.jsonl:1: line longer than 16777216 bytes, skipped"));
	assert_null(strstr(said, "not a JSON object"));
	free(text);
}

/* logread_file(): a file by name; a missing one is said and is -1. */
static void test_file(void **state)
{
	char dir[] = "/tmp/airlock-logread.XXXXXX", path[PATH_MAX], name[PATH_MAX];
	struct seen s = { .n = 0 };
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/log.jsonl", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(sample, f);
	fclose(f);
	said[0] = '\0';
	assert_int_equal(logread_file(path, "log", NULL, collect, &s, name, sizeof name), 0);
	assert_string_equal(name, path);
	assert_int_equal(s.n, 3);
	said[0] = '\0';
	unlink(path);
	assert_int_equal(logread_file(path, "suggest", NULL, collect, &s, name, sizeof name), -1);
	assert_non_null(strstr(said, "suggest: cannot open"));
	assert_int_equal(logread_file(dir, "log", NULL, collect, &s, name, sizeof name), -1);
	assert_non_null(strstr(said, "not a regular file (a directory)"));
	rmdir(dir);
}

/* ---- filters ---------------------------------------------------------------------- */

static void test_filters(void **state)
{
	static const struct {
		struct logread_filter f;
		const char *want; /* the ids kept */
	} cases[] = {
		{ { NULL, NULL, NULL }, "1234" },
		{ { "aaaa", NULL, NULL }, "12" },     /* a prefix of the session id */
		{ { "aaaa0000", NULL, NULL }, "1" },  /* the whole id */
		{ { NULL, "deny", NULL }, "23" },
		{ { NULL, "allow", NULL }, "1" },
		{ { NULL, "ask", NULL }, "3" },       /* decided_by not policy */
		{ { NULL, NULL, "launcher" }, "4" },
		{ { "aaaa", "deny", "shim" }, "2" },
		{ { "b", "allow", NULL }, "" },
	};
	static const char *const evs[] = {
		"{\"id\":\"1\",\"session_id\":\"aaaa0000\",\"source\":\"shim\",\"decision\":\"allow\",\"decided_by\":\"policy\"}",
		"{\"id\":\"2\",\"session_id\":\"aaaa1111\",\"source\":\"shim\",\"decision\":\"deny\",\"decided_by\":\"policy\"}",
		"{\"id\":\"3\",\"session_id\":\"bbbb0000\",\"source\":\"proxy\",\"decision\":\"deny\",\"decided_by\":\"human\"}",
		"{\"id\":\"4\",\"session_id\":\"bbbb0000\",\"source\":\"launcher\",\"event\":\"session_end\"}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char got[8] = "";
		for (size_t e = 0; e < 4; e++) {
			json_object *o = json_tokener_parse(evs[e]);
			assert_non_null(o);
			if (logread_matches(o, &cases[i].f))
				strcat(got, logread_str(o, "id"));
			json_object_put(o);
		}
		assert_string_equal(got, cases[i].want);
	}
}

/* ---- fields and times ----------------------------------------------------------------- */

static void test_fields(void **state)
{
	json_object *o = json_tokener_parse(
		"{\"event\":\"session_end\",\"exit_status\":0,\"s\":\"x\",\"n\":\"5\",\"f\":1.5}");
	long long t;
	unsigned ms;
	(void)state;
	assert_non_null(o);
	assert_true(logread_is_event(o, "session_end"));
	assert_false(logread_is_event(o, "session_start"));
	assert_int_equal(logread_num(o, "exit_status"), 0);
	assert_int_equal(logread_num(o, "n"), -1); /* a string is no number */
	assert_int_equal(logread_num(o, "f"), -1);
	assert_int_equal(logread_num(o, "none"), -1);
	assert_null(logread_str(o, "exit_status"));
	assert_string_equal(logread_str(o, "s"), "x");
	json_object_put(o);
	assert_int_equal(logread_time("2026-11-30T01:02:03.456Z", &t, &ms), 0);
	assert_int_equal(t, 1796000523);
	assert_int_equal(ms, 456);
	assert_int_equal(logread_time("1970-01-01T00:00:00Z", &t, &ms), 0);
	assert_int_equal(t, 0);
	assert_int_equal(ms, 0);
	assert_int_equal(logread_time("yesterday", &t, &ms), -1);
	assert_int_equal(logread_time(NULL, &t, &ms), -1);

	/* asked: decided by another than the policy, a word this version does not know too */
	static const struct {
		const char *json;
		bool asked;
	} asks[] = {
		{ "{\"decided_by\":\"policy\"}", false }, { "{}", false },
		{ "{\"decided_by\":3}", false },	      { "{\"decided_by\":\"human\"}", true },
		{ "{\"decided_by\":\"default\"}", true }, { "{\"decided_by\":\"oracle\"}", true },
	};
	for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
		o = json_tokener_parse(asks[i].json);
		assert_non_null(o);
		assert_int_equal(logread_asked(o), asks[i].asked);
		json_object_put(o);
	}
}

/* ---- sessions ------------------------------------------------------------------------- */

/* A session's events, out of order, and what log_session_note() makes of them. */
static void test_session_note(void **state)
{
	static const char *const events[] = {
		"{\"timestamp\":\"2026-01-01T10:00:05.000Z\",\"source\":\"shim\",\"command\":\"/bin/ls\"}",
		"{\"timestamp\":\"2026-01-01T10:00:01.000Z\",\"source\":\"launcher\","
		"\"event\":\"session_start\",\"program\":\"/bin/sh\",\"workspace\":\"/w; x\","
		"\"policy\":\"<default>\"}",
		/* not the launcher's, or an action: says nothing of the session */
		"{\"timestamp\":\"2026-01-01T10:00:02.000Z\",\"source\":\"shim\",\"event\":\"session_start\","
		"\"program\":\"/bin/forged\"}",
		"{\"timestamp\":\"2026-01-01T10:00:03.000Z\",\"source\":\"launcher\",\"event\":\"session_end\","
		"\"file\":\"/x\",\"exit_status\":9}",
		/* a workspace that is not absolute is no workspace */
		"{\"timestamp\":\"2026-01-01T10:00:04.000Z\",\"source\":\"launcher\",\"event\":\"session_start\","
		"\"workspace\":\"w\"}",
		"{\"timestamp\":\"2026-01-01T10:00:09.000Z\",\"source\":\"launcher\",\"event\":\"session_end\","
		"\"exit_status\":3}",
		"{\"timestamp\":\"2026-01-01T10:00:07.000Z\",\"source\":\"proxy\",\"network_dst\":\"a:1\"}",
	};
	struct log_session x = { 0 };
	(void)state;
	for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
		json_object *o = json_tokener_parse(events[i]);
		assert_non_null(o);
		assert_true(log_session_note(&x, o));
		json_object_put(o);
	}
	assert_string_equal(x.first_ts, "2026-01-01T10:00:01.000Z");
	assert_string_equal(x.last_ts, "2026-01-01T10:00:09.000Z");
	assert_string_equal(x.end_ts, "2026-01-01T10:00:09.000Z");
	assert_string_equal(x.agent, "/bin/sh");
	assert_string_equal(x.workspace, "/w; x");
	assert_string_equal(x.policy, "<default>");
	assert_string_equal(x.exit, "3");
	log_session_free(&x);

	/* an end without an exit status: its time, no exit */
	json_object *o = json_tokener_parse("{\"timestamp\":\"2026-01-01T10:00:00.000Z\","
					    "\"source\":\"launcher\",\"event\":\"session_end\"}");
	struct log_session y = { 0 };
	assert_true(log_session_note(&y, o));
	json_object_put(o);
	assert_string_equal(y.end_ts, "2026-01-01T10:00:00.000Z");
	assert_null(y.exit);
	assert_null(y.agent);
	log_session_free(&y);
}

/* ---- text for a terminal ----------------------------------------------------------- */

/* What fn prints for the event in json, NUL-terminated, into out. */
static void printed(void (*fn)(FILE *, json_object *), const char *json, char *out, size_t cap)
{
	json_object *o = json_tokener_parse(json);
	assert_non_null(o);
	out[0] = '\0'; /* glibc's fmemopen() leaves it when nothing is written */
	FILE *f = fmemopen(out, cap, "w");
	assert_non_null(f);
	fn(f, o);
	fclose(f);
	json_object_put(o);
}

static void test_put_what(void **state)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
		{ "{\"command\":\"/bin/rm\",\"args\":[\"-rf\",\"my dir\",\"it's\"],\"truncated\":true}",
		  "exec /bin/rm -rf 'my dir' 'it'\\''s' ...(truncated)" },
		{ "{\"command\":\"printf\",\"args\":[\"\\u001b[2J\",\"a\\nb\"]}", "exec printf $'\\x1b[2J' $'a\\nb'" },
		{ "{\"file\":\"/w/x\",\"action\":\"write\"}", "write /w/x" },
		{ "{\"file\":\"/w/x\"}", "open /w/x" },
		{ "{\"network_dst\":\"example.com:443\"}", "connect example.com:443" },
		/* a transparent connection decided by its SNI's name: the address it went to too */
		{ "{\"network_dst\":\"example.com:443\",\"network_addr\":\"203.0.113.7\"}",
		  "connect example.com:443 at 203.0.113.7" },
		{ "{\"message\":\"tab\\there \\u202e\"}", "tab\\there \\u202e" },
		{ "{}", "-" },
		/* the session's fields, whole whatever they hold; not the message */
		{ "{\"event\":\"session_start\",\"program\":\"/usr/bin/a; b\",\"policy\":\"/p; workspace /x\","
		  "\"workspace\":\"/w; policy /y\",\"sandbox\":\"bubblewrap\",\"network\":\"none\","
		  "\"masked\":3,\"masks_capped\":true,\"seccomp\":[\"ptrace\",\"mount\"],\"message\":\"m\"}",
		  "session started: /usr/bin/a; b; policy /p; workspace /x; workspace /w; policy /y; "
		  "bubblewrap sandbox, no network, 3 path(s) masked (walk capped); seccomp refuses ptrace mount" },
		{ "{\"event\":\"session_start\",\"program\":\"/bin/sh\",\"policy\":\"<default>\","
		  "\"workspace\":\"/w\",\"sandbox\":\"bubblewrap\",\"network\":\"proxy\","
		  "\"masked\":5,\"sockets_masked\":2,\"sockets_capped\":true,\"seccomp\":[],\"message\":\"m\"}",
		  "session started: /bin/sh; policy <default>; workspace /w; bubblewrap sandbox, network through the egress proxy, "
		  "5 path(s) masked (2 unix socket(s)) (socket walk capped); seccomp refuses" },
		{ "{\"event\":\"session_start\",\"program\":\"/bin/sh\",\"policy\":\"<default>\","
		  "\"workspace\":\"/w\",\"sandbox\":\"none\",\"masked\":0}",
		  "session started: /bin/sh; policy <default>; workspace /w; NO kernel sandbox "
		  "(--no-sandbox): the shim and this log only" },
		/* airlock serve: no program of its own */
		{ "{\"event\":\"session_start\",\"policy\":\"<default>\","
		  "\"workspace\":\"/w\",\"sandbox\":\"none\",\"masked\":0}",
		  "session started: airlock serve (no program of its own: process trees join it); "
		  "policy <default>; workspace /w; NO kernel sandbox: the shim and this log only" },
		{ "{\"event\":\"session_end\",\"exit_status\":3,\"allowed\":7,\"denied\":3,\"asked\":2,"
		  "\"connections\":4,\"refused\":1,\"bytes_up\":2000,\"bytes_down\":35000,\"message\":\"m\"}",
		  "session ended: exit status 3; 7 allowed, 3 denied, 2 asked; 4 connection(s), 1 refused, "
		  "2000 bytes out, 35000 in" },
		{ "{\"event\":\"session_end\",\"exit_status\":\"3\"}", /* wrong or missing: said as ? */
		  "session ended: exit status ?; ? allowed, ? denied, ? asked; ? connection(s), ? refused, "
		  "? bytes out, ? in" },
	};
	char out[1024];
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		printed(logread_put_what, cases[i].json, out, sizeof out);
		assert_string_equal(out, cases[i].want);
	}
}

static void test_put_traffic(void **state)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
		{ "{\"bytes_up\":116,\"bytes_down\":206,\"duration_ms\":2,\"via\":\"http-proxy\"}",
		  "116 bytes up, 206 down, 2 ms, via http-proxy" },
		{ "{\"bytes_up\":5000000000,\"bytes_down\":0}", "5000000000 bytes up, 0 down" },
		{ "{\"message\":\"1200 bytes up, 34000 down, 80 ms, via socks\"}", "" }, /* prose: not read */
		{ "{}", "" },
	};
	char out[256];
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		printed(logread_put_traffic, cases[i].json, out, sizeof out);
		assert_string_equal(out, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_cut_anywhere),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_session_note),
		cmocka_unit_test(test_put_what),
		cmocka_unit_test(test_put_traffic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
