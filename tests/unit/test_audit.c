/* test_audit.c — the audit log: every field and its order (a session's start and end, a connection's traffic), ids, timestamps, escaping, UTF-8, paths and modes, failed writes, concurrent appends. */
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
#include <regex.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "launcher/log/audit.h"

#define SESSION "3f2a9c1b4d5e6f70"

/* The lines of a log, parsed. */
struct lines {
	json_object *obj[4096 + 16];
	char *raw[4096 + 16]; /* owned; without the '\n' */
	size_t n;
};

static char tmpdir[1024]; /* short: paths built from it fit PATH_MAX */
static char logpath[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/airlock-audit.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(logpath, sizeof logpath, "%s/log.jsonl", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Parses a line as RFC 8259 JSON (strict, UTF-8 checked); fails unless it is one object. */
static json_object *parse_strict(const char *line)
{
	json_tokener *tok = json_tokener_new();
	assert_non_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	size_t len = strlen(line);
	json_object *o = json_tokener_parse_ex(tok, line, (int)len);
	if (!o)
		fail_msg("not JSON (%s): %s", json_tokener_error_desc(json_tokener_get_error(tok)), line);
	assert_int_equal(json_tokener_get_parse_end(tok), len);
	assert_true(json_object_is_type(o, json_type_object));
	json_tokener_free(tok);
	return o;
}

/* Reads path whole and parses each line; the file must end with '\n'. */
static void read_lines(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	assert_non_null(f);
	l->n = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		assert_true(l->n < sizeof l->obj / sizeof l->obj[0]);
		assert_int_equal(line[n - 1], '\n');
		line[n - 1] = '\0';
		assert_null(memchr(line, '\n', (size_t)n - 1));
		l->raw[l->n] = strdup(line);
		l->obj[l->n] = parse_strict(line);
		l->n++;
	}
	free(line);
	fclose(f);
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		json_object_put(l->obj[i]);
		free(l->raw[i]);
	}
	l->n = 0;
}

/* Writes the events to a fresh log at logpath and reads them back. */
static void write_and_read(const struct audit_event *evs, size_t n, struct lines *l)
{
	char err[256];
	unlink(logpath);
	struct audit_log *log = audit_open(logpath, SESSION, err, sizeof err);
	if (!log)
		fail_msg("audit_open: %s", err);
	assert_string_equal(audit_path(log), logpath);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(audit_write(log, &evs[i]), 0);
	audit_close(log);
	read_lines(logpath, l);
	assert_int_equal(l->n, n);
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no \"%s\"", key);
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static int64_t get_int(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no \"%s\"", key);
	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_int64(v);
}

/* o's keys are exactly keys (NULL-terminated), in that order. */
static void assert_keys(json_object *o, const char *const *keys)
{
	size_t i = 0;
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (!keys[i])
			fail_msg("unexpected key \"%s\"", key);
		assert_string_equal(key, keys[i]);
		i++;
	}
	if (keys[i])
		fail_msg("missing key \"%s\"", keys[i]);
}

/* ---- fields and their order -------------------------------------------- */

static const char *const exec_args[] = { "-rf", "/home/u/my dir", "" };

/* The groups of fields of a session's start and end, and of a connection. */
static const char *const groups[] = { "ptrace", "mount", "process_spawn", NULL };
static const struct audit_session_start start_sandboxed = {
	.program = "/usr/bin/python3", .policy = "/w; policy x/.airlock/policy.yaml",
	.workspace = "/w; policy x", .sandbox = "bubblewrap", .network = "proxy", .masked = 7,
	.sockets_masked = 2, .masks_capped = true, .sockets_capped = true, .seccomp = groups
};
static const struct audit_session_start start_bare = {
	.program = "/bin/sh", .policy = "<default>", .workspace = "/w", .sandbox = "none"
};
static const struct audit_session_end end_counts = { .exit_status = 3, .allowed = 10, .denied = 2,
						     .asked = 1, .connections = 4, .refused = 1 };
static const struct audit_traffic end_traffic = { .bytes_up = 5000000000ull, .bytes_down = 0,
						  .duration_ms = -1 };
static const struct audit_traffic proxy_traffic = { .bytes_up = 116, .bytes_down = 206,
						    .duration_ms = 2, .via = "http-proxy" };

/* One event of each kind, with every field it can carry, and the keys its line must hold. */
static const struct {
	struct audit_event ev;
	const char *keys[20];
} kinds[] = {
	{ { .source = "shim", .pid = 4242, .command = "/usr/bin/rm", .args = exec_args, .nargs = 3,
	    .decision = "deny", .decided_by = "policy", .rule = ".airlock/policy.yaml:12",
	    .reason = "never delete outside the workspace", .response_time_ms = -1,
	    .message = "reported by the shim", .truncated = true },
	  { "id", "timestamp", "session_id", "source", "pid", "command", "args", "decision",
	    "decided_by", "rule", "reason", "message", "truncated", NULL } },
	{ { .source = "shim", .pid = 17, .file = "/home/u/.ssh/id_rsa", .action = "read",
	    .decision = "ask", .decided_by = "human", .rule = "policy.yaml:3", .reason = "secrets",
	    .response_time_ms = 2300 },
	  { "id", "timestamp", "session_id", "source", "pid", "file", "action", "decision",
	    "decided_by", "rule", "reason", "response_time_ms", NULL } },
	{ { .source = "proxy", .network_dst = "[2001:db8::1]:443", .decision = "allow",
	    .decided_by = "session", .rule = "policy.yaml:40", .response_time_ms = 0 },
	  { "id", "timestamp", "session_id", "source", "network_dst", "decision", "decided_by", "rule",
	    "response_time_ms", NULL } },
	{ { .source = "launcher", .pid = 1, .message = "--no-sandbox: shim and log only",
	    .response_time_ms = -1 },
	  { "id", "timestamp", "session_id", "source", "pid", "message", NULL } },
	{ { .source = "shim", .pid = 5, .command = "true", .decision = "allow", .decided_by = "default",
	    .response_time_ms = -1 },
	  { "id", "timestamp", "session_id", "source", "pid", "command", "args", "decision",
	    "decided_by", NULL } },
	{ { .source = "launcher", .pid = 2, .event = AUDIT_SESSION_START, .start = &start_sandboxed,
	    .response_time_ms = -1, .message = "session started: /usr/bin/python3" },
	  { "id", "timestamp", "session_id", "source", "pid", "event", "program", "policy", "workspace",
	    "sandbox", "network", "masked", "sockets_masked", "masks_capped", "sockets_capped", "seccomp",
	    "message",
	    NULL } },
	{ { .source = "launcher", .pid = 2, .event = AUDIT_SESSION_START, .start = &start_bare,
	    .response_time_ms = -1 },
	  { "id", "timestamp", "session_id", "source", "pid", "event", "program", "policy", "workspace",
	    "sandbox", "masked", "sockets_masked", NULL } },
	{ { .source = "launcher", .pid = 2, .event = AUDIT_SESSION_END, .end = &end_counts,
	    .traffic = &end_traffic, .response_time_ms = -1, .message = "session ended: exit status 3" },
	  { "id", "timestamp", "session_id", "source", "pid", "event", "exit_status", "allowed",
	    "denied", "asked", "connections", "refused", "bytes_up", "bytes_down", "message", NULL } },
	{ { .source = "proxy", .network_dst = "pypi.org:443", .decision = "deny",
	    .decided_by = "policy", .response_time_ms = -1, .traffic = &proxy_traffic,
	    .message = "SNI does not match" },
	  { "id", "timestamp", "session_id", "source", "network_dst", "decision", "decided_by",
	    "bytes_up", "bytes_down", "duration_ms", "via", "message", NULL } },
	{ { .source = "proxy", .network_dst = "pypi.org:443", .network_addr = "203.0.113.7",
	    .decision = "deny", .decided_by = "policy", .response_time_ms = -1,
	    .traffic = &proxy_traffic, .message = "pypi.org does not resolve to 203.0.113.7" },
	  { "id", "timestamp", "session_id", "source", "network_dst", "network_addr", "decision",
	    "decided_by", "bytes_up", "bytes_down", "duration_ms", "via", "message", NULL } },
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Every string field of ev equals its value in o. */
static void assert_strings(json_object *o, const struct audit_event *ev)
{
	static const struct {
		const char *key;
		size_t off;
	} f[] = {
		{ "source", offsetof(struct audit_event, source) },
		{ "command", offsetof(struct audit_event, command) },
		{ "file", offsetof(struct audit_event, file) },
		{ "action", offsetof(struct audit_event, action) },
		{ "network_dst", offsetof(struct audit_event, network_dst) },
		{ "network_addr", offsetof(struct audit_event, network_addr) },
		{ "decision", offsetof(struct audit_event, decision) },
		{ "decided_by", offsetof(struct audit_event, decided_by) },
		{ "rule", offsetof(struct audit_event, rule) },
		{ "reason", offsetof(struct audit_event, reason) },
		{ "message", offsetof(struct audit_event, message) },
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		const char *want = *(const char *const *)(const void *)((const char *)ev + f[i].off);
		if (want)
			assert_string_equal(get_str(o, f[i].key), want);
	}
}

static void test_every_kind(void **state)
{
	struct audit_event evs[NKINDS];
	struct lines *l = calloc(1, sizeof *l);
	(void)state;
	for (size_t i = 0; i < NKINDS; i++)
		evs[i] = kinds[i].ev;
	write_and_read(evs, NKINDS, l);
	for (size_t i = 0; i < NKINDS; i++) {
		json_object *o = l->obj[i], *v;
		const struct audit_event *ev = &kinds[i].ev;
		assert_keys(o, kinds[i].keys);
		assert_string_equal(get_str(o, "session_id"), SESSION);
		assert_strings(o, ev);
		if (ev->pid)
			assert_int_equal(get_int(o, "pid"), ev->pid);
		if (ev->response_time_ms >= 0)
			assert_int_equal(get_int(o, "response_time_ms"), ev->response_time_ms);
		if (ev->truncated) {
			assert_true(json_object_object_get_ex(o, "truncated", &v));
			assert_true(json_object_is_type(v, json_type_boolean));
			assert_true(json_object_get_boolean(v));
		}
		if (ev->command) {
			assert_true(json_object_object_get_ex(o, "args", &v));
			assert_true(json_object_is_type(v, json_type_array));
			assert_int_equal(json_object_array_length(v), ev->nargs);
			for (size_t a = 0; a < ev->nargs; a++)
				assert_string_equal(json_object_get_string(json_object_array_get_idx(v, a)),
						    ev->args[a]);
		}
	}
	/* readable paths: json-c's default would write "\/usr\/bin\/rm" */
	assert_non_null(strstr(l->raw[0], "\"command\":\"/usr/bin/rm\""));
	free_lines(l);
	free(l);
}

/* The session's and the connection's facts come back as typed fields, not text. */
static void test_session_fields(void **state)
{
	struct audit_event evs[] = {
		{ .source = "launcher", .event = AUDIT_SESSION_START, .start = &start_sandboxed,
		  .response_time_ms = -1 },
		{ .source = "launcher", .event = AUDIT_SESSION_END, .end = &end_counts,
		  .traffic = &end_traffic, .response_time_ms = -1 },
		{ .source = "proxy", .network_dst = "a:1", .traffic = &proxy_traffic,
		  .response_time_ms = -1 },
	};
	struct lines l;
	json_object *v;
	(void)state;
	write_and_read(evs, 3, &l);
	assert_string_equal(get_str(l.obj[0], "event"), "session_start");
	assert_string_equal(get_str(l.obj[0], "workspace"), "/w; policy x");
	assert_string_equal(get_str(l.obj[0], "policy"), "/w; policy x/.airlock/policy.yaml");
	assert_string_equal(get_str(l.obj[0], "network"), "proxy");
	assert_int_equal(get_int(l.obj[0], "masked"), 7);
	assert_true(json_object_object_get_ex(l.obj[0], "masks_capped", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(l.obj[0], "seccomp", &v));
	assert_int_equal(json_object_array_length(v), 3);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 2)), "process_spawn");
	assert_string_equal(get_str(l.obj[1], "event"), "session_end");
	assert_int_equal(get_int(l.obj[1], "exit_status"), 3);
	assert_int_equal(get_int(l.obj[1], "allowed"), 10);
	assert_int_equal(get_int(l.obj[1], "denied"), 2);
	assert_int_equal(get_int(l.obj[1], "asked"), 1);
	assert_int_equal(get_int(l.obj[1], "connections"), 4);
	assert_int_equal(get_int(l.obj[1], "refused"), 1);
	assert_int_equal(get_int(l.obj[1], "bytes_up"), 5000000000ll); /* past 32 bits */
	assert_int_equal(get_int(l.obj[1], "bytes_down"), 0);
	assert_int_equal(get_int(l.obj[2], "bytes_up"), 116);
	assert_int_equal(get_int(l.obj[2], "bytes_down"), 206);
	assert_int_equal(get_int(l.obj[2], "duration_ms"), 2);
	assert_string_equal(get_str(l.obj[2], "via"), "http-proxy");
	free_lines(&l);
}

/* An event with every field "none": only id, timestamp and session_id are written. */
static void test_omitted(void **state)
{
	static const char *const keys[] = { "id", "timestamp", "session_id", NULL };
	struct audit_event ev = { .response_time_ms = -1 };
	struct lines l;
	(void)state;
	write_and_read(&ev, 1, &l);
	assert_keys(l.obj[0], keys);
	free_lines(&l);
}

/* ---- ids and timestamps -------------------------------------------------- */

static void test_timestamp(void **state)
{
	struct audit_event ev = { .source = "launcher", .message = "m", .response_time_ms = -1 };
	struct lines l;
	regex_t re;
	struct tm tm = { 0 };
	(void)state;
	static const char rfc3339_ms[] =
		"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$";
	assert_int_equal(regcomp(&re, rfc3339_ms, REG_EXTENDED | REG_NOSUB), 0);
	/* the log's clock, not time(2)'s coarse one, which can lag it across a second's edge */
	struct timespec t0, t1;
	clock_gettime(CLOCK_REALTIME, &t0);
	write_and_read(&ev, 1, &l);
	clock_gettime(CLOCK_REALTIME, &t1);
	time_t before = t0.tv_sec, after = t1.tv_sec;
	const char *ts = get_str(l.obj[0], "timestamp");
	if (regexec(&re, ts, 0, NULL, 0) != 0)
		fail_msg("timestamp \"%s\" is not RFC 3339 UTC with ms", ts);
	/* and it is UTC now, not local time */
	assert_non_null(strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm));
	time_t t = timegm(&tm);
	assert_true(t >= before && t <= after);
	regfree(&re);
	free_lines(&l);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Ids are unique within a log, across sessions too, even two opened with the same session id. */
static void test_ids_unique(void **state)
{
	enum { PER = 1000 };
	struct audit_event ev = { .source = "shim", .pid = 1, .file = "/x", .action = "read",
				  .decision = "allow", .response_time_ms = -1 };
	struct lines *l = calloc(1, sizeof *l);
	const char *ids[2 * PER];
	char err[256];
	(void)state;
	unlink(logpath);
	for (int s = 0; s < 2; s++) {
		struct audit_log *log = audit_open(logpath, SESSION, err, sizeof err);
		assert_non_null(log);
		for (int i = 0; i < PER; i++)
			assert_int_equal(audit_write(log, &ev), 0);
		audit_close(log);
	}
	read_lines(logpath, l);
	assert_int_equal(l->n, 2 * PER);
	for (size_t i = 0; i < l->n; i++) {
		ids[i] = get_str(l->obj[i], "id");
		assert_int_equal(strlen(ids[i]), 16);
		assert_int_equal(strspn(ids[i], "0123456789abcdef"), 16);
	}
	qsort(ids, l->n, sizeof ids[0], cmp_str);
	for (size_t i = 1; i < l->n; i++)
		if (strcmp(ids[i - 1], ids[i]) == 0)
			fail_msg("id %s twice", ids[i]);
	free_lines(l);
	free(l);
}

/* ---- strings ------------------------------------------------------------- */

/* Round trips: what goes in comes out, in one line of valid JSON. */
static void test_strings_round_trip(void **state)
{
	char controls[40];
	static const char *const plain[] = {
		"\"quoted\" and 'single'",
		"back\\slash \\\\ \\u0041 \\n",
		"line\nbreak\r\ttab\b\f",
		"/slashes/ and </script>",
		"del \x7f",
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe2\x80\xa8 \xe2\x80\xae",
		"",
	};
	struct audit_event evs[sizeof plain / sizeof plain[0] + 1];
	struct lines l;
	size_t n = 0;
	(void)state;
	for (int c = 1; c < 0x20; c++)
		controls[c - 1] = (char)c;
	controls[0x1f] = '\0';
	for (; n < sizeof plain / sizeof plain[0]; n++)
		evs[n] = (struct audit_event){ .source = "shim", .file = plain[n], .action = "read",
					       .reason = plain[n], .response_time_ms = -1 };
	evs[n++] = (struct audit_event){ .source = "launcher", .message = controls,
					 .response_time_ms = -1 };
	write_and_read(evs, n, &l);
	for (size_t i = 0; i + 1 < n; i++) {
		assert_string_equal(get_str(l.obj[i], "file"), plain[i]);
		assert_string_equal(get_str(l.obj[i], "reason"), plain[i]);
	}
	assert_string_equal(get_str(l.obj[n - 1], "message"), controls);
	/* no raw control byte in a line: each is escaped */
	for (size_t i = 0; i < n; i++)
		for (const char *p = l.raw[i]; *p; p++)
			assert_true((unsigned char)*p >= 0x20);
	free_lines(&l);
}

/* Invalid UTF-8 in: valid JSON out, each maximal invalid subpart one U+FFFD. */
static void test_invalid_utf8(void **state)
{
#define R "\xef\xbf\xbd"
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "\xff", R },
		{ "a\xc3(b", "a" R "(b" },            /* lead byte, then no continuation */
		{ "\xc0\xaf", R R },                  /* overlong '/' */
		{ "\xe0\x80\xaf", R R R },            /* overlong, 3 bytes */
		{ "\xed\xa0\x80", R R R },            /* UTF-16 surrogate */
		{ "\xf4\x90\x80\x80", R R R R },      /* above U+10FFFF */
		{ "x\xe2\x82", "x" R },               /* cut short at the end: one subpart */
		{ "\xe2\x82(", R "(" },               /* cut short in the middle */
		{ "\xf0\x9f\x98", R },                /* 3 of 4 */
		{ "\x80\xbf", R R },                  /* lone continuations */
		{ "ok \xe2\x82\xac \xfe end", "ok \xe2\x82\xac " R " end" },
	};
#undef R
	enum { N = sizeof cases / sizeof cases[0] };
	struct audit_event evs[N];
	const char *args[N];
	struct lines l;
	(void)state;
	for (size_t i = 0; i < N; i++) {
		args[i] = cases[i].in;
		evs[i] = (struct audit_event){ .source = "shim", .file = cases[i].in, .action = "write",
					       .response_time_ms = -1 };
	}
	evs[0].command = "/bin/\xff";
	evs[0].args = args;
	evs[0].nargs = N;
	write_and_read(evs, N, &l); /* read_lines() parses with UTF-8 validation */
	for (size_t i = 0; i < N; i++)
		assert_string_equal(get_str(l.obj[i], "file"), cases[i].out);
	json_object *a;
	assert_true(json_object_object_get_ex(l.obj[0], "args", &a));
	for (size_t i = 0; i < N; i++)
		assert_string_equal(json_object_get_string(json_object_array_get_idx(a, i)), cases[i].out);
	assert_string_equal(get_str(l.obj[0], "command"), "/bin/\xef\xbf\xbd");
	free_lines(&l);
}

/* ---- paths and modes ------------------------------------------------------ */

static void assert_mode(const char *path, mode_t type, mode_t perm)
{
	struct stat st;
	if (stat(path, &st) != 0)
		fail_msg("stat %s: %s", path, strerror(errno));
	assert_int_equal(st.st_mode & S_IFMT, type);
	if ((st.st_mode & 07777) != perm)
		fail_msg("%s: mode %04o, not %04o", path, (unsigned)(st.st_mode & 07777), (unsigned)perm);
}

/* today's file name, local time */
static void today(char *out, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(out, cap, "%Y-%m-%d.jsonl", &tm);
}

/* Opens the default log with the environment as set; checks the path and every mode. */
static void check_default(const char *state_dir)
{
	char err[256], want[PATH_MAX + 64], day[32], dir[PATH_MAX + 32];
	struct audit_event ev = { .source = "launcher", .message = "m", .response_time_ms = -1 };
	mode_t old = umask(0); /* the modes must not depend on a careful umask */
	struct audit_log *log = audit_open(NULL, SESSION, err, sizeof err);
	umask(old);
	if (!log)
		fail_msg("audit_open(NULL): %s", err);
	today(day, sizeof day);
	snprintf(want, sizeof want, "%s/airlock/logs/%s", state_dir, day);
	assert_string_equal(audit_path(log), want);
	assert_int_equal(audit_write(log, &ev), 0);
	audit_close(log);
	assert_mode(state_dir, S_IFDIR, 0700);
	snprintf(dir, sizeof dir, "%s/airlock", state_dir);
	assert_mode(dir, S_IFDIR, 0700);
	snprintf(dir, sizeof dir, "%s/airlock/logs", state_dir);
	assert_mode(dir, S_IFDIR, 0700);
	assert_mode(want, S_IFREG, 0600);
}

static void test_default_path(void **state)
{
	char st[PATH_MAX], home[PATH_MAX], local[PATH_MAX + 16];
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	(void)state;
	snprintf(st, sizeof st, "%s/state", tmpdir);
	setenv("XDG_STATE_HOME", st, 1);
	check_default(st);

	/* relative XDG_STATE_HOME: ignored (XDG Base Directory spec), HOME/.local/state instead */
	snprintf(home, sizeof home, "%s/home", tmpdir);
	assert_int_equal(mkdir(home, 0755), 0);
	setenv("HOME", home, 1);
	setenv("XDG_STATE_HOME", "relative/state", 1);
	snprintf(local, sizeof local, "%s/.local/state", home);
	check_default(local);
	unsetenv("XDG_STATE_HOME");
	check_default(local);

	if (old_home)
		setenv("HOME", old_home, 1);
	free(old_home);
}

/* The fd is O_APPEND (sessions share the file) and close-on-exec (the agent never gets it). */
static void test_fd_flags(void **state)
{
	char err[256], link[64], target[PATH_MAX];
	int found = 0;
	(void)state;
	struct audit_log *log = audit_open(logpath, SESSION, err, sizeof err);
	assert_non_null(log);
	for (int fd = 3; fd < 1024; fd++) {
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, logpath) != 0)
			continue;
		found = 1;
		assert_true(fcntl(fd, F_GETFL) & O_APPEND);
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	}
	audit_close(log);
	if (!found)
		skip(); /* no /proc */
	assert_mode(logpath, S_IFREG, 0600);
}

static void test_errors(void **state)
{
	char err[256] = "", path[PATH_MAX + 32];
	struct audit_event ev = { .source = "launcher", .message = "m", .response_time_ms = -1 };
	(void)state;
	snprintf(path, sizeof path, "%s/no/such/dir/log.jsonl", tmpdir);
	assert_null(audit_open(path, SESSION, err, sizeof err));
	assert_non_null(strstr(err, path)); /* the message names the file */
	audit_close(NULL);

	/* a full disk: the error comes back, not lost, and stays (audit_error()) */
	struct audit_log *log = audit_open("/dev/full", SESSION, err, sizeof err);
	if (!log)
		skip();
	assert_int_equal(audit_error(log), 0);
	assert_int_equal(audit_write(log, &ev), -ENOSPC);
	assert_int_equal(audit_error(log), -ENOSPC);
	assert_int_equal(audit_write(log, &ev), -ENOSPC);
	assert_int_equal(audit_error(log), -ENOSPC);
	audit_close(log);
}

static void count_tap(void *arg, const char *line, size_t len)
{
	(void)line;
	(void)len;
	(*(int *)arg)++;
}

static off_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/*
 * A line that does not fit is taken back, and the log writes nothing after
 * it: a file size limit (setrlimit(2) RLIMIT_FSIZE) inside the line makes
 * write(2) short, then EFBIG (SIGXFSZ ignored), as a disk filling up does.
 */
static void test_short_write_taken_back(void **state)
{
	char err[256], msg[2048];
	struct rlimit old, lim;
	struct lines l;
	int taps = 0;
	(void)state;
	memset(msg, 'm', sizeof msg - 1);
	msg[sizeof msg - 1] = '\0';
	struct audit_event ev = { .source = "launcher", .message = msg, .response_time_ms = -1 };
	unlink(logpath);
	struct audit_log *log = audit_open(logpath, SESSION, err, sizeof err);
	if (!log)
		fail_msg("audit_open: %s", err);
	audit_set_tap(log, count_tap, &taps);
	for (int i = 0; i < 3; i++)
		assert_int_equal(audit_write(log, &ev), 0);
	off_t whole = file_size(logpath);

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max < (rlim_t)whole + 100)
		skip();
	lim = old;
	lim.rlim_cur = (rlim_t)whole + 100; /* the next line is 2 KiB: it straddles the limit */
	void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	int r = audit_write(log, &ev);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, oldsig);
	assert_int_equal(r, -EFBIG);
	assert_int_equal(audit_error(log), -EFBIG);
	assert_int_equal(file_size(logpath), whole); /* the 100 bytes that fitted are gone */

	/* room again: still nothing is written, the first error stays; the live view still sees it */
	assert_int_equal(audit_write(log, &ev), -EFBIG);
	assert_int_equal(file_size(logpath), whole);
	assert_int_equal(taps, 5);
	audit_close(log);
	read_lines(logpath, &l); /* whole lines only, or this fails */
	assert_int_equal(l.n, 3);
	free_lines(&l);
}

/* ---- concurrency ------------------------------------------------------------ */

enum { WRITERS = 8, EVENTS = 500 };

/* One writer: its own session, EVENTS events, each carrying its number and 1 KiB of padding. */
static void writer(int w)
{
	char session[32], seq[16], pad[1025], err[256];
	const char *args[3] = { session, seq, pad };
	snprintf(session, sizeof session, "writer-%d", w);
	memset(pad, 'a' + w, sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	struct audit_log *log = audit_open(logpath, session, err, sizeof err);
	if (!log)
		_exit(1);
	for (int i = 0; i < EVENTS; i++) {
		snprintf(seq, sizeof seq, "%d", i);
		struct audit_event ev = { .source = "shim", .pid = getpid(), .command = "/bin/echo",
					  .args = args, .nargs = 3, .decision = "allow",
					  .response_time_ms = -1 };
		if (audit_write(log, &ev) != 0)
			_exit(1);
	}
	audit_close(log);
	_exit(0);
}

static void test_concurrent_appends(void **state)
{
	pid_t pids[WRITERS];
	int next[WRITERS] = { 0 };
	struct lines *l = calloc(1, sizeof *l);
	(void)state;
	unlink(logpath);
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0)
			writer(w);
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;
		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	read_lines(logpath, l); /* every line whole JSON, or the test fails here */
	assert_int_equal(l->n, WRITERS * EVENTS);
	for (size_t i = 0; i < l->n; i++) {
		int w = -1;
		json_object *args;
		sscanf(get_str(l->obj[i], "session_id"), "writer-%d", &w);
		assert_true(w >= 0 && w < WRITERS);
		assert_true(json_object_object_get_ex(l->obj[i], "args", &args));
		/* each writer's events in its own order, none lost, none doubled */
		assert_int_equal(atoi(json_object_get_string(json_object_array_get_idx(args, 1))), next[w]);
		assert_int_equal(json_object_get_string_len(json_object_array_get_idx(args, 2)), 1024);
		next[w]++;
	}
	for (int w = 0; w < WRITERS; w++)
		assert_int_equal(next[w], EVENTS);
	free_lines(l);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_omitted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timestamp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ids_unique, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strings_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_write_taken_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_appends, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
