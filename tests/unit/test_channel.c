/* test_channel.c — the shim <-> launcher channel's messages: round trips, encode refusals, malformed input (over sockets and end to end in test_channel_sock.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/channel.h"

/* Scratch buffers of one message each. */
static uint8_t buf[CHANNEL_MAX_MSG];
static uint8_t buf2[CHANNEL_MAX_MSG];

/* ---- Round trips --------------------------------------------------------------- */

/* One round-trip case: a message plus how to generate its argv. */
struct rt_case {
	const char *name;
	struct channel_msg m;
	uint32_t nargs;    /* generated arguments (EXEC) */
	size_t arg_len;    /* 0: "argN"; else that many bytes each */
	int expect_trunc;
};

static char long_path[4096];
static char long_host[254];

static const struct rt_case rt_cases[] = {
	{ "exec, empty argv", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .program = "/bin/true", .rule = -1 }, 0, 0, 0 },
	{ "exec of a copy, 2 args", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .decision = POLICY_DENY, .program = "/w/g",
		.flags = CHANNEL_F_COPY, .copy_of = "/usr/bin/git", .rule = 0 }, 2, 0, 0 },
	{ "exec of a copy, args over the max", { .type = CHANNEL_ASK, .id = 12,
		.source = CHANNEL_SOURCE_EXEC, .action = CHANNEL_ACTION_EXEC, .decision = POLICY_ASK,
		.program = "/w/g", .flags = CHANNEL_F_COPY, .copy_of = "/usr/bin/git", .rule = 1 },
		20000, 10, 1 },
	{ "exec, NULL program", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .rule = -1 }, 1, 0, 0 },
	{ "exec ask, 3 args", { .type = CHANNEL_ASK, .id = 42, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .decision = POLICY_ASK, .program = "/usr/bin/git",
		.rule = 5 }, 3, 0, 0 },
	{ "exec, 1000 args", { .type = CHANNEL_EVENT, .id = 0xffffffffu,
		.source = CHANNEL_SOURCE_EXEC, .action = CHANNEL_ACTION_EXEC, .decision = POLICY_DENY,
		.program = "/bin/echo", .rule = 0, .result = EACCES }, 1000, 0, 0 },
	{ "exec, args over the max", { .type = CHANNEL_ASK, .id = 7, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .decision = POLICY_ASK, .program = "/bin/echo",
		.rule = -1 }, 20000, 10, 1 },
	{ "exec, one arg over the max", { .type = CHANNEL_ASK, .id = 8,
		.source = CHANNEL_SOURCE_EXEC, .action = CHANNEL_ACTION_EXEC, .decision = POLICY_ASK,
		.program = "/usr/bin/python3", .rule = -1 }, 2, 100000, 1 },
	{ "exec, arg exactly filling", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .program = "p", .rule = -1 },
		1, CHANNEL_MAX_MSG - CHANNEL_HEADER_SIZE - 6 - 8 - 5, 0 },
	{ "open read, long path", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_OPEN,
		.action = POLICY_FILE_READ, .path = long_path, .rule = -1 }, 0, 0, 0 },
	{ "open write, odd bytes", { .type = CHANNEL_ASK, .id = 9, .source = CHANNEL_SOURCE_OPEN,
		.action = POLICY_FILE_WRITE, .decision = POLICY_ASK,
		.path = "/w/\"q\"\\\n\x01\xff\xc3\xa9", .rule = 2 }, 0, 0, 0 },
	{ "open exec, empty path", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_OPEN,
		.action = POLICY_FILE_EXEC, .decision = POLICY_DENY, .path = "", .rule = 1,
		.result = EACCES, .decided_by = CHANNEL_BY_POLICY }, 0, 0, 0 },
	{ "connect IPv4", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_CONNECT,
		.action = CHANNEL_ACTION_CONNECT, .host = "10.0.0.1", .port = 443, .rule = -1 },
		0, 0, 0 },
	{ "connect IPv6 bracketed", { .type = CHANNEL_ASK, .id = 10,
		.source = CHANNEL_SOURCE_CONNECT, .action = CHANNEL_ACTION_CONNECT,
		.decision = POLICY_ASK, .host = "[2001:db8::1]", .port = 65535, .rule = -1 }, 0, 0, 0 },
	{ "connect IPv4-mapped IPv6", { .type = CHANNEL_ASK, .id = 11,
		.source = CHANNEL_SOURCE_CONNECT, .action = CHANNEL_ACTION_CONNECT,
		.decision = POLICY_ASK, .host = "::ffff:192.0.2.1", .port = 1, .rule = -1 }, 0, 0, 0 },
	{ "connect long name", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_CONNECT,
		.action = CHANNEL_ACTION_CONNECT, .decision = POLICY_DENY, .host = long_host,
		.port = 0, .rule = 3, .result = ECONNREFUSED }, 0, 0, 0 },
	{ "answer allow by human", { .type = CHANNEL_ANSWER, .id = 42, .decision = POLICY_ALLOW,
		.decided_by = CHANNEL_BY_HUMAN, .rule = -1 }, 0, 0, 0 },
	{ "answer deny by timeout", { .type = CHANNEL_ANSWER, .id = 1, .decision = POLICY_DENY,
		.decided_by = CHANNEL_BY_TIMEOUT, .rule = 12 }, 0, 0, 0 },
	{ "answer allow for the session", { .type = CHANNEL_ANSWER, .id = 2,
		.decision = POLICY_ALLOW, .decided_by = CHANNEL_BY_SESSION, .rule = -1 }, 0, 0, 0 },
	{ "hello", { .type = CHANNEL_HELLO, .rule = -1 }, 0, 0, 0 },
	{ "open event with the sender's own pid", { .type = CHANNEL_EVENT,
		.flags = CHANNEL_F_PID, .self_pid = 7, .source = CHANNEL_SOURCE_OPEN,
		.action = POLICY_FILE_READ, .decision = POLICY_DENY, .path = "/w/.env", .rule = 0 },
		0, 0, 0 },
	{ "exec ask with its own pid, args cut to leave it room", { .type = CHANNEL_ASK, .id = 3,
		.flags = CHANNEL_F_PID, .self_pid = 2147483647, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .decision = POLICY_ASK, .program = "p", .rule = -1 },
		1, CHANNEL_MAX_MSG - CHANNEL_HEADER_SIZE - 6 - 8 - 5, 1 },
};

/* Generated argv for a case: owned strings and array. */
struct gen_argv {
	char **argv;
	char *pool;
};

static void gen_argv(struct gen_argv *g, uint32_t n, size_t arg_len)
{
	size_t each = arg_len ? arg_len + 1 : 16;
	g->argv = calloc(n + 1, sizeof *g->argv);
	g->pool = malloc(n * each + 1);
	assert_non_null(g->argv);
	assert_non_null(g->pool);
	for (uint32_t i = 0; i < n; i++) {
		char *s = g->pool + i * each;
		if (arg_len) {
			memset(s, 'a' + (int)(i % 26), arg_len);
			s[arg_len] = '\0';
		} else {
			snprintf(s, each, "arg%u", i);
		}
		g->argv[i] = s;
	}
}

static void free_argv(struct gen_argv *g)
{
	free(g->argv);
	free(g->pool);
}

static void assert_str_or_empty(const char *want, const char *got)
{
	assert_non_null(got);
	assert_string_equal(want ? want : "", got);
}

/* The decoded arguments are the sent ones, the last possibly cut short. */
static void check_args(const struct rt_case *c, char **sent, const struct channel_msg *d)
{
	struct channel_args it;
	const char *s;
	size_t n;
	uint32_t i = 0;
	assert_int_equal(d->argc_total, c->nargs);
	channel_args_begin(d, &it);
	while ((s = channel_args_next(&it, &n)) != NULL) {
		assert_int_equal(strlen(s), n);
		if (i + 1 == d->argc && (d->flags & CHANNEL_F_TRUNCATED))
			assert_memory_equal(s, sent[i], n);
		else
			assert_string_equal(s, sent[i]);
		i++;
	}
	assert_int_equal(i, d->argc);
	if (c->expect_trunc)
		assert_true(d->argc < c->nargs || strlen(sent[d->argc - 1]) > n);
	else
		assert_int_equal(d->argc, c->nargs);
}

static void check_fields_equal(const struct channel_msg *a, const struct channel_msg *d)
{
	assert_int_equal(a->type, d->type);
	assert_int_equal(a->id, d->id);
	assert_int_equal(a->source, d->source);
	assert_int_equal(a->action, d->action);
	assert_int_equal(a->decision, d->decision);
	assert_int_equal(a->decided_by, d->decided_by);
	assert_int_equal(a->rule, d->rule);
	assert_int_equal(a->result, d->result);
	assert_int_equal(a->port, d->port);
	assert_int_equal(a->flags & CHANNEL_F_PID, d->flags & CHANNEL_F_PID);
	assert_int_equal(a->self_pid, d->self_pid);
	if (a->source == CHANNEL_SOURCE_EXEC)
		assert_str_or_empty(a->program, d->program);
	assert_int_equal(a->flags & CHANNEL_F_COPY, d->flags & CHANNEL_F_COPY);
	if (a->flags & CHANNEL_F_COPY)
		assert_string_equal(a->copy_of, d->copy_of);
	else
		assert_null(d->copy_of);
	if (a->source == CHANNEL_SOURCE_OPEN)
		assert_str_or_empty(a->path, d->path);
	if (a->source == CHANNEL_SOURCE_CONNECT)
		assert_str_or_empty(a->host, d->host);
}

static void run_rt_case(const struct rt_case *c)
{
	struct gen_argv g = { 0 };
	struct channel_msg m = c->m, d;
	int len, len2;
	if (c->m.source == CHANNEL_SOURCE_EXEC) {
		gen_argv(&g, c->nargs, c->arg_len);
		m.argv = (const char *const *)g.argv;
		m.argc = c->nargs;
	}
	len = channel_encode(buf, sizeof buf, &m);
	assert_true(len >= (int)CHANNEL_HEADER_SIZE);
	assert_true(len <= (int)CHANNEL_MAX_MSG);
	assert_int_equal(channel_decode(buf, (size_t)len, &d), 0);
	check_fields_equal(&m, &d);
	assert_int_equal(!!(d.flags & CHANNEL_F_TRUNCATED), c->expect_trunc);
	if (c->m.source == CHANNEL_SOURCE_EXEC)
		check_args(c, g.argv, &d);
	/* Canonical: the decoded form encodes to the same bytes. */
	len2 = channel_encode(buf2, sizeof buf2, &d);
	assert_int_equal(len2, len);
	assert_memory_equal(buf, buf2, (size_t)len);
	free_argv(&g);
}

static void test_round_trips(void **state)
{
	(void)state;
	memset(long_path, 'p', sizeof long_path - 1);
	long_path[0] = '/';
	memset(long_host, 'h', sizeof long_host - 1);
	for (size_t i = 0; i < sizeof rt_cases / sizeof rt_cases[0]; i++) {
		print_message("round trip: %s\n", rt_cases[i].name);
		run_rt_case(&rt_cases[i]);
	}
}

/* channel_encode_answer() builds a valid ANSWER and refuses "ask" as an answer. */
static void test_encode_answer_helper(void **state)
{
	struct channel_msg d;
	int len;
	(void)state;
	len = channel_encode_answer(buf, sizeof buf, 99, POLICY_DENY, CHANNEL_BY_DEFAULT, -1);
	assert_int_equal(len, CHANNEL_HEADER_SIZE);
	assert_int_equal(channel_decode(buf, (size_t)len, &d), 0);
	assert_int_equal(d.type, CHANNEL_ANSWER);
	assert_int_equal(d.id, 99);
	assert_int_equal(d.decision, POLICY_DENY);
	assert_int_equal(d.decided_by, CHANNEL_BY_DEFAULT);
	assert_int_equal(channel_encode_answer(buf, sizeof buf, 1, POLICY_ASK, 0, -1), -EINVAL);
}

/* Every name table covers its enum, and out-of-range values read "?". */
static void test_names(void **state)
{
	static const unsigned actions[] = { 0, POLICY_FILE_READ, POLICY_FILE_WRITE, POLICY_FILE_EXEC,
					    CHANNEL_ACTION_EXEC, CHANNEL_ACTION_CONNECT };
	(void)state;
	for (int t = CHANNEL_EVENT; t < CHANNEL_TYPE_MAX; t++)
		assert_string_not_equal(channel_type_name(t), "?");
	for (int v = 0; v < CHANNEL_SOURCE_MAX; v++)
		assert_string_not_equal(channel_source_name(v), "?");
	for (int v = 0; v < CHANNEL_DECIDED_BY_MAX; v++)
		assert_string_not_equal(channel_decided_by_name(v), "?");
	for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
		assert_string_not_equal(channel_action_name(actions[i]), "?");
	assert_string_equal(channel_type_name(0), "?");
	assert_string_equal(channel_type_name(CHANNEL_TYPE_MAX), "?");
	assert_string_equal(channel_source_name(CHANNEL_SOURCE_MAX), "?");
	assert_string_equal(channel_decided_by_name(CHANNEL_DECIDED_BY_MAX), "?");
	assert_string_equal(channel_action_name(3), "?");
	assert_string_equal(channel_decided_by_name(CHANNEL_BY_TIMEOUT), "timeout");
}

/* ---- Encode refusals ------------------------------------------------------------ */

struct enc_err_case {
	const char *name;
	struct channel_msg m;
	size_t cap;
	int want;
};

static char huge[CHANNEL_MAX_MSG + 10];

static const struct enc_err_case enc_err_cases[] = {
	{ "type 0", { .type = 0, .rule = -1 }, sizeof buf, -EINVAL },
	{ "type past the max", { .type = CHANNEL_TYPE_MAX, .rule = -1 }, sizeof buf, -EINVAL },
	{ "event without a source", { .type = CHANNEL_EVENT, .rule = -1 }, sizeof buf, -EINVAL },
	{ "answer with a source", { .type = CHANNEL_ANSWER, .source = CHANNEL_SOURCE_OPEN,
		.action = POLICY_FILE_READ, .rule = -1 }, sizeof buf, -EINVAL },
	{ "answer with an action", { .type = CHANNEL_ANSWER, .action = 1, .rule = -1 },
		sizeof buf, -EINVAL },
	{ "open with two actions", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_OPEN,
		.action = POLICY_FILE_READ | POLICY_FILE_WRITE, .rule = -1 }, sizeof buf, -EINVAL },
	{ "exec with a file action", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = POLICY_FILE_EXEC, .rule = -1 }, sizeof buf, -EINVAL },
	{ "connect with exec action", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_CONNECT,
		.action = CHANNEL_ACTION_EXEC, .rule = -1 }, sizeof buf, -EINVAL },
	{ "source past the max", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_MAX,
		.rule = -1 }, sizeof buf, -EINVAL },
	{ "decision past the max", { .type = CHANNEL_HELLO, .decision = POLICY_DECISION_MAX,
		.rule = -1 }, sizeof buf, -EINVAL },
	{ "answer ask", { .type = CHANNEL_ANSWER, .decision = POLICY_ASK, .rule = -1 },
		sizeof buf, -EINVAL },
	{ "decided_by past the max", { .type = CHANNEL_HELLO,
		.decided_by = CHANNEL_DECIDED_BY_MAX, .rule = -1 }, sizeof buf, -EINVAL },
	{ "rule -2", { .type = CHANNEL_HELLO, .rule = -2 }, sizeof buf, -EINVAL },
	{ "unknown flag", { .type = CHANNEL_HELLO, .flags = 0x80, .rule = -1 }, sizeof buf,
		-EINVAL },
	{ "truncated flag on open", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_OPEN,
		.action = POLICY_FILE_READ, .flags = CHANNEL_F_TRUNCATED, .rule = -1 }, sizeof buf,
		-EINVAL },
	{ "cap below the header", { .type = CHANNEL_HELLO, .rule = -1 }, CHANNEL_HEADER_SIZE - 1,
		-EMSGSIZE },
	{ "path over the max", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_OPEN,
		.action = POLICY_FILE_READ, .path = huge, .rule = -1 }, sizeof buf, -EMSGSIZE },
	{ "program over the max", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .program = huge, .rule = -1 }, sizeof buf, -EMSGSIZE },
	{ "host over the max", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_CONNECT,
		.action = CHANNEL_ACTION_CONNECT, .host = huge, .rule = -1 }, sizeof buf, -EMSGSIZE },
	{ "no room for the port", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_CONNECT,
		.action = CHANNEL_ACTION_CONNECT, .host = "ab", .rule = -1 },
		CHANNEL_HEADER_SIZE + 7 + 1, -EMSGSIZE },
	{ "copy flag without copy_of", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .program = "/w/g", .flags = CHANNEL_F_COPY, .rule = 0 },
		sizeof buf, -EINVAL },
	{ "copy_of relative", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .program = "/w/g", .flags = CHANNEL_F_COPY,
		.copy_of = "git", .rule = 0 }, sizeof buf, -EINVAL },
	{ "copy flag on connect", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_CONNECT,
		.action = CHANNEL_ACTION_CONNECT, .host = "h", .flags = CHANNEL_F_COPY,
		.copy_of = "/usr/bin/git", .rule = -1 }, sizeof buf, -EINVAL },
	{ "no room for the arg counts", { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_EXEC,
		.action = CHANNEL_ACTION_EXEC, .program = "ab", .rule = -1 },
		CHANNEL_HEADER_SIZE + 7 + 7, -EMSGSIZE },
};

static void test_encode_refusals(void **state)
{
	(void)state;
	memset(huge, 'x', sizeof huge - 1);
	for (size_t i = 0; i < sizeof enc_err_cases / sizeof enc_err_cases[0]; i++) {
		const struct enc_err_case *c = &enc_err_cases[i];
		print_message("encode refusal: %s\n", c->name);
		assert_int_equal(channel_encode(buf, c->cap, &c->m), c->want);
	}
}

/* ---- Decode refusals ---------------------------------------------------------------- */

/* A fixed EXEC ask: program "/bin/sh", args "sh" "-c" "x"; offsets of every length field. */
static int sample_exec(uint8_t *out)
{
	static const char *const argv[] = { "sh", "-c", "x" };
	struct channel_msg m = { .type = CHANNEL_ASK, .id = 3, .source = CHANNEL_SOURCE_EXEC,
				 .action = CHANNEL_ACTION_EXEC, .decision = POLICY_ASK,
				 .program = "/bin/sh", .argv = argv, .argc = 3, .rule = -1 };
	return channel_encode(out, CHANNEL_MAX_MSG, &m);
}

static int sample_connect(uint8_t *out)
{
	struct channel_msg m = { .type = CHANNEL_EVENT, .source = CHANNEL_SOURCE_CONNECT,
				 .action = CHANNEL_ACTION_CONNECT, .host = "[::1]", .port = 80,
				 .rule = -1 };
	return channel_encode(out, CHANNEL_MAX_MSG, &m);
}

static int sample_open(uint8_t *out)
{
	struct channel_msg m = { .type = CHANNEL_ASK, .source = CHANNEL_SOURCE_OPEN,
				 .action = POLICY_FILE_WRITE, .path = "/etc/passwd", .rule = 4 };
	return channel_encode(out, CHANNEL_MAX_MSG, &m);
}

static int sample_answer(uint8_t *out)
{
	return channel_encode_answer(out, CHANNEL_MAX_MSG, 5, POLICY_ALLOW, CHANNEL_BY_HUMAN, -1);
}

typedef int (*sample_fn)(uint8_t *out);
static const sample_fn samples[] = { sample_exec, sample_connect, sample_open, sample_answer };

/* Decode must fail; if it did not, say which mutation got through. */
static void expect_refused(const uint8_t *b, size_t len, const char *what, size_t at)
{
	struct channel_msg d;
	int r = channel_decode(b, len, &d);
	if (r == 0)
		fail_msg("decode accepted %s (offset/len %zu)", what, at);
	assert_true(r == -EBADMSG || r == -EPROTO);
	assert_non_null(d.why);
}

static void patch_len(uint8_t *b, size_t len)
{
	b[4] = (uint8_t)len;
	b[5] = (uint8_t)(len >> 8);
	b[6] = (uint8_t)(len >> 16);
	b[7] = (uint8_t)(len >> 24);
}

/* Every strict prefix, raw and with the length field patched to match. */
static void test_decode_short(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof samples / sizeof samples[0]; s++) {
		int len = samples[s](buf);
		assert_true(len > 0);
		for (size_t n = 0; n < (size_t)len; n++) {
			memcpy(buf2, buf, (size_t)len);
			expect_refused(buf2, n, "a prefix", n);
			if (n >= 8) {
				patch_len(buf2, n);
				expect_refused(buf2, n, "a prefix with its length patched", n);
			}
		}
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Each u32 length or count of the exec sample set to values other than its own. */
static void test_decode_lengths_corrupted(void **state)
{
	/* header 24; program "/bin/sh": 24 len; 36 argc_total; 40 argc; args at 44, 51, 58 */
	static const size_t fields[] = { 4, 24, 36, 40, 44, 51, 58 };
	static const uint32_t values[] = { 0, 1, 2, 3, 4, 6, 7, 8, 64, 65, 0x7fffffff, 0xffffffff,
					   CHANNEL_MAX_MSG, 0x00010000, 0x01000000 };
	int len = sample_exec(buf);
	(void)state;
	assert_int_equal(len, 64);
	for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
		uint32_t orig = (uint32_t)buf[fields[f]] | (uint32_t)buf[fields[f] + 1] << 8;
		for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
			if (values[v] == orig)
				continue;
			memcpy(buf2, buf, (size_t)len);
			put32(buf2 + fields[f], values[v]);
			expect_refused(buf2, (size_t)len, "a corrupted length", fields[f]);
		}
	}
}

/* A named single-byte change to a valid sample, and the error it must give. */
struct mut_case {
	const char *name;
	sample_fn sample;
	size_t off;  /* byte to change; SIZE_MAX: append a byte (length patched) */
	uint8_t val;
	int want;
};

static const struct mut_case mut_cases[] = {
	{ "wrong version", sample_answer, 0, 2, -EPROTO },
	{ "version 0", sample_answer, 0, 0, -EPROTO },
	{ "bad magic", sample_answer, 1, 0xA2, -EPROTO },
	{ "type 0", sample_answer, 2, 0, -EBADMSG },
	{ "type 5", sample_answer, 2, 5, -EBADMSG },
	{ "type 255", sample_answer, 2, 255, -EBADMSG },
	{ "unknown flag", sample_exec, 3, 0x08, -EBADMSG },
	{ "pid flag without the pid", sample_exec, 3, CHANNEL_F_PID, -EBADMSG },
	{ "pid flag on answer", sample_answer, 3, CHANNEL_F_PID, -EBADMSG },
	{ "copy flag on open", sample_open, 3, CHANNEL_F_COPY, -EBADMSG },
	{ "copy flag on answer", sample_answer, 3, CHANNEL_F_COPY, -EBADMSG },
	{ "truncated flag on answer", sample_answer, 3, CHANNEL_F_TRUNCATED, -EBADMSG },
	{ "truncated flag on open", sample_open, 3, CHANNEL_F_TRUNCATED, -EBADMSG },
	{ "source on answer", sample_answer, 12, CHANNEL_SOURCE_OPEN, -EBADMSG },
	{ "source 4", sample_exec, 12, 4, -EBADMSG },
	{ "exec source, open body", sample_open, 12, CHANNEL_SOURCE_EXEC, -EBADMSG },
	{ "action mismatch", sample_exec, 13, POLICY_FILE_READ, -EBADMSG },
	{ "two file actions", sample_open, 13, 3, -EBADMSG },
	{ "decision 3", sample_exec, 14, 3, -EBADMSG },
	{ "answer ask", sample_answer, 14, POLICY_ASK, -EBADMSG },
	{ "decided_by 5", sample_exec, 15, 5, -EBADMSG },
	{ "rule -2", sample_exec, 16, 0xfe, -EBADMSG },
	{ "rule -16777217", sample_exec, 18, 0xfe, -EBADMSG },
	{ "program without NUL", sample_exec, 24 + 4 + 7, 'x', -EBADMSG },
	{ "program with a NUL", sample_exec, 24 + 4 + 2, 0, -EBADMSG },
	{ "arg with a NUL", sample_exec, 48, 0, -EBADMSG },
	{ "last arg without NUL", sample_exec, 63, 'y', -EBADMSG },
	{ "host with a NUL", sample_connect, 29, 0, -EBADMSG },
	{ "trailing byte on exec", sample_exec, SIZE_MAX, 0, -EBADMSG },
	{ "trailing byte on answer", sample_answer, SIZE_MAX, 0, -EBADMSG },
	{ "trailing byte on connect", sample_connect, SIZE_MAX, 0, -EBADMSG },
};

static void test_decode_mutations(void **state)
{
	struct channel_msg d;
	(void)state;
	for (size_t i = 0; i < sizeof mut_cases / sizeof mut_cases[0]; i++) {
		const struct mut_case *c = &mut_cases[i];
		size_t len = (size_t)c->sample(buf);
		print_message("decode mutation: %s\n", c->name);
		if (c->off == SIZE_MAX) {
			buf[len++] = c->val;
			patch_len(buf, len);
		} else {
			buf[c->off] = c->val;
		}
		assert_int_equal(channel_decode(buf, len, &d), c->want);
		if (c->want)
			assert_non_null(d.why);
	}
}

/* Over CHANNEL_MAX_MSG is refused even when everything else is consistent. */
static void test_decode_oversize(void **state)
{
	static uint8_t big[CHANNEL_MAX_MSG + 8];
	struct channel_msg d;
	size_t len = CHANNEL_MAX_MSG + 1;
	(void)state;
	sample_answer(big);
	patch_len(big, len);
	assert_int_equal(channel_decode(big, len, &d), -EBADMSG);
}

/* Every byte of each sample set to a few values: error or a canonical message, never a crash. */
static void test_decode_every_byte(void **state)
{
	struct channel_msg d;
	(void)state;
	for (size_t s = 0; s < sizeof samples / sizeof samples[0]; s++) {
		int len = samples[s](buf);
		for (int off = 0; off < len; off++) {
			const uint8_t vals[] = { 0, 0xff, (uint8_t)(buf[off] ^ 1), (uint8_t)(buf[off] + 1),
						 0x80 };
			for (size_t v = 0; v < sizeof vals; v++) {
				memcpy(buf2, buf, (size_t)len);
				buf2[off] = vals[v];
				if (channel_decode(buf2, (size_t)len, &d) != 0)
					continue;
				uint8_t again[CHANNEL_MAX_MSG];
				assert_int_equal(channel_encode(again, sizeof again, &d), len);
				assert_memory_equal(again, buf2, (size_t)len);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_encode_answer_helper),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_encode_refusals),
		cmocka_unit_test(test_decode_short),
		cmocka_unit_test(test_decode_lengths_corrupted),
		cmocka_unit_test(test_decode_mutations),
		cmocka_unit_test(test_decode_oversize),
		cmocka_unit_test(test_decode_every_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
