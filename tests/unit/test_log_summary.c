/* test_log_summary.c — `airlock log --summary`: a session's facts from its fields, the counts and bytes, the groups, malformed lines left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <limits.h>
#include <unistd.h>

#include <json-c/json.h>

#include "launcher/log/logread.h"
#include "said.h"

/* The summary of the log text (read as `airlock log` reads a file), printed; malloc'ed. */
static char *summary_of(const char *text, const struct logread_filter *filter)
{
	char dir[] = "/tmp/airlock-summary.XXXXXX", path[PATH_MAX], name[PATH_MAX];
	char *out = NULL;
	size_t len = 0;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/log.jsonl", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct log_summary *s = log_summary_new();
	assert_non_null(s);
	said[0] = '\0';
	assert_int_equal(logread_file(path, "log", filter, log_summary_add, s, name, sizeof name), 0);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	log_summary_print(f, s, false);
	fclose(f);
	log_summary_free(s);
	unlink(path);
	rmdir(dir);
	return out;
}

/* Fails unless out holds want as a whole line. */
static void has_line(const char *out, const char *want)
{
	size_t n = strlen(want);
	for (const char *p = out; (p = strstr(p, want)) != NULL; p++)
		if ((p == out || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return;
	fail_msg("no line \"%s\" in:\n%s", want, out);
}

#define HEAD(id, ts, sid) "{\"id\":\"" id "\",\"timestamp\":\"2026-11-30T01:00:" ts "Z\",\"session_id\":\"" sid "\","

static const char session_log[] =
	HEAD("1", "00.000", "cccccccc33333333")
	"\"source\":\"launcher\",\"pid\":9,\"event\":\"session_start\",\"program\":\"/usr/bin/a; policy b\","
	"\"policy\":\"/p; workspace /x.yaml\",\"workspace\":\"/w; policy /etc/evil.yaml; workspace /\","
	"\"sandbox\":\"bubblewrap\",\"network\":\"proxy\",\"masked\":2,\"seccomp\":[\"ptrace\"],"
	"\"message\":\"session started: whatever; workspace /not/this\"}\n"
	HEAD("g1", "01.000", "cccccccc33333333")
	"\"source\":\"shim\",\"pid\":10,\"command\":\"/usr/bin/git\",\"args\":[\"status\"],\"decision\":\"allow\",\"decided_by\":\"policy\",\"rule\":\"p:1\"}\n"
	HEAD("g2", "02.000", "cccccccc33333333")
	"\"source\":\"shim\",\"pid\":10,\"command\":\"/usr/bin/git\",\"args\":[\"status\"],\"decision\":\"allow\",\"decided_by\":\"policy\",\"rule\":\"p:1\"}\n"
	"{\"id\": \"broken\", \"timestamp\":\n" /* malformed: said and left out */
	HEAD("g3", "02.500", "cccccccc33333333")
	"\"source\":\"shim\",\"pid\":10,\"command\":\"/bin/git\",\"args\":[\"push\"],\"decision\":\"deny\",\"decided_by\":\"human\",\"rule\":\"p:7\",\"response_time_ms\":1200}\n"
	"{\"id\":\"x\",\"session_id\":\"cccccccc33333333\",\"source\":\"shim\",\"command\":\"/bin/rm\",\"decision\":\"deny\"}\n"
	HEAD("w1", "03.000", "cccccccc33333333")
	"\"source\":\"shim\",\"pid\":10,\"file\":\"/w; policy /etc/evil.yaml; workspace //out\",\"action\":\"write\",\"decision\":\"allow\",\"decided_by\":\"policy\"}\n"
	HEAD("r1", "04.000", "cccccccc33333333")
	"\"source\":\"shim\",\"pid\":10,\"file\":\"/w/.env\",\"action\":\"read\",\"decision\":\"deny\",\"decided_by\":\"policy\",\"rule\":\"p:9\"}\n"
	HEAD("r2", "04.500", "cccccccc33333333")
	"\"source\":\"shim\",\"pid\":10,\"file\":\"/w/notes\",\"action\":\"read\",\"decision\":\"allow\",\"decided_by\":\"policy\"}\n"
	HEAD("n1", "05.000", "cccccccc33333333")
	"\"source\":\"proxy\",\"network_dst\":\"pypi.org:443\",\"decision\":\"allow\",\"decided_by\":\"policy\",\"rule\":\"p:20\","
	"\"bytes_up\":1200,\"bytes_down\":34000,\"duration_ms\":80,\"via\":\"transparent\"}\n"
	HEAD("n2", "06.000", "cccccccc33333333")
	"\"source\":\"proxy\",\"network_dst\":\"pypi.org:443\",\"decision\":\"allow\",\"decided_by\":\"policy\",\"rule\":\"p:20\","
	"\"bytes_up\":5000000000,\"bytes_down\":1000,\"duration_ms\":10,\"via\":\"http-proxy\"}\n"
	HEAD("n3", "07.000", "cccccccc33333333") /* old prose: no bytes read from it */
	"\"source\":\"proxy\",\"network_dst\":\"evil.example:443\",\"decision\":\"deny\",\"decided_by\":\"default\","
	"\"message\":\"99 bytes up, 99 down, 0 ms, via socks\"}\n"
	HEAD("e", "12.250", "cccccccc33333333")
	"\"source\":\"launcher\",\"pid\":9,\"event\":\"session_end\",\"exit_status\":3,\"allowed\":5,\"denied\":3,"
	"\"asked\":2,\"connections\":3,\"refused\":1,\"bytes_up\":5000001200,\"bytes_down\":35000,"
	"\"message\":\"session ended: exit status 99\"}\n";

/* The session's facts come from its fields, whole, whatever they hold; not from the message. */
static void test_session_facts(void **state)
{
	char *out = summary_of(session_log, NULL);
	(void)state;
	has_line(out, "session cccccccc33333333");
	has_line(out, "  start      2026-11-30 01:00:00.000");
	has_line(out, "  end        2026-11-30 01:00:12.250  (12.250 s)");
	has_line(out, "  agent      /usr/bin/a; policy b");
	has_line(out, "  workspace  /w; policy /etc/evil.yaml; workspace /");
	has_line(out, "  policy     /p; workspace /x.yaml");
	has_line(out, "  exit       3");
	free(out);
	/* the malformed lines were said, and left out of every count */
	assert_non_null(strstr(said, ":4: not a JSON object, skipped"));
	assert_non_null(strstr(said, ":6: no 'timestamp', skipped"));
}

/* The counts, the groups and the proxy's bytes from its fields. */
static void test_figures(void **state)
{
	char *out = summary_of(session_log, NULL);
	(void)state;
	has_line(out, "  events     9: 6 allowed, 3 denied, 2 asked");
	has_line(out, "  commands run (1)");
	has_line(out, "          2      1  git");
	has_line(out, "          1      0  '/w; policy /etc/evil.yaml; workspace //out'");
	has_line(out, "          1  /w/.env");
	assert_null(strstr(out, "/w/notes")); /* an allowed read is no row */
	has_line(out, "          2      0  5000001200       35000  pypi.org:443");
	has_line(out, "          0      1           0           0  evil.example:443");
	has_line(out, "          1  exec /bin/git push  [p:7]");
	has_line(out, "          1  connect evil.example:443  [the default]");
	has_line(out, "          1  deny    human     exec /bin/git push");
	has_line(out, "          1  deny    default   connect evil.example:443");
	free(out);
}

/* Without its end event a session says it may still run; an old log's prose is not parsed. */
static void test_no_end_old_prose(void **state)
{
	static const char text[] =
		HEAD("1", "00.000", "aaaaaaaa11111111")
		"\"source\":\"launcher\",\"pid\":9,\"message\":\"session started: /usr/bin/x; policy p; workspace /w\"}\n"
		HEAD("2", "01.000", "aaaaaaaa11111111")
		"\"source\":\"launcher\",\"pid\":9,\"message\":\"session ended: exit status 3; 1 allowed\"}\n";
	char *out = summary_of(text, NULL);
	(void)state;
	has_line(out, "  end        (no end event: running, or the launcher was killed)");
	has_line(out, "  agent      not recorded");
	has_line(out, "  workspace  not recorded");
	has_line(out, "  policy     not recorded");
	has_line(out, "  exit       not recorded");
	has_line(out, "  events     0: 0 allowed, 0 denied, 0 asked");
	has_line(out, "  commands run: none");
	free(out);
}

/* Sessions in order of first appearance; a group shows 20 rows and says how many more; filters apply. */
static void test_sessions_and_caps(void **state)
{
	char *text = NULL, *out;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct logread_filter deny = { .decision = "deny" }, one = { .session = "dddd" };
	(void)state;
	assert_non_null(f);
	fputs(session_log, f);
	for (int i = 0; i < 25; i++)
		fprintf(f, HEAD("m", "11.000", "dddddddd44444444")
			"\"source\":\"shim\",\"pid\":11,\"command\":\"/usr/bin/tool%02d\",\"args\":[],"
			"\"decision\":\"allow\",\"decided_by\":\"policy\"}\n", i);
	fclose(f);
	out = summary_of(text, NULL);
	char *c = strstr(out, "session cccccccc33333333"), *d = strstr(out, "session dddddddd44444444");
	assert_true(c && d && c < d);
	has_line(out, "      \u2026 5 more");
	size_t rows = 0;
	for (char *p = d; (p = strstr(p, "  tool")) != NULL; p++)
		rows++;
	assert_int_equal(rows, 20);
	free(out);
	out = summary_of(text, &one);
	assert_null(strstr(out, "cccccccc"));
	has_line(out, "  events     25: 25 allowed, 0 denied, 0 asked");
	free(out);
	out = summary_of(text, &deny);
	has_line(out, "  events     3: 0 allowed, 3 denied, 2 asked");
	free(out);
	out = summary_of("", NULL);
	assert_string_equal(out, "no events\n");
	free(out);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_facts),
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_no_end_old_prose),
		cmocka_unit_test(test_sessions_and_caps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
