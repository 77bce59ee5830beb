/* test_channel.c — the shim <-> launcher channel: round trips, malformed input, ask/answer over sockets, the test server end to end. */
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
	if (a->source == CHANNEL_SOURCE_EXEC)
		assert_str_or_empty(a->program, d->program);
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
	{ "unknown flag", sample_exec, 3, 0x02, -EBADMSG },
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
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_encode_answer_helper),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_encode_refusals),
		cmocka_unit_test(test_decode_short),
		cmocka_unit_test(test_decode_lengths_corrupted),
		cmocka_unit_test(test_decode_mutations),
		cmocka_unit_test(test_decode_oversize),
		cmocka_unit_test(test_decode_every_byte),
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
