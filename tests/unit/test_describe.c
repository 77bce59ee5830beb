/* test_describe.c — what a compiled image says of its rules (policy_rule_describe), its defaults and ask_timeout, on the policies test_decide.c decides on. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "testutil.h"
#include "decide_policies.h"

/* ---- Describe, defaults, timeout ------------------------------------------------- */

static void test_describe(void **state)
{
	const struct policy_image *img = image(DESC);
	struct policy_rule_info info;

	(void)state;
	assert_int_equal(policy_image_rule_count(img), 5);

	assert_int_equal(policy_rule_describe(img, 0, &info), 0);
	assert_string_equal(info.file, "test.yaml");
	assert_int_equal(info.line, 3);
	assert_int_equal(info.column, 5);
	assert_int_equal(info.list, POLICY_LIST_DENY);
	assert_int_equal(info.kind, POLICY_RULE_COMMAND);
	assert_int_equal(info.match, POLICY_MATCH_PREFIX);
	assert_string_equal(info.pattern, "npm");
	assert_string_equal(info.args, "run");
	assert_string_equal(info.reason, "no scripts");

	assert_int_equal(policy_rule_describe(img, 1, &info), 0);
	assert_int_equal(info.line, 8);
	assert_int_equal(info.column, 5);
	assert_int_equal(info.list, POLICY_LIST_ASK);
	assert_int_equal(info.kind, POLICY_RULE_FILE);
	assert_int_equal(info.match, POLICY_MATCH_GLOB);
	assert_string_equal(info.pattern, "~/.aws/**");
	assert_null(info.args);
	assert_int_equal(info.actions, POLICY_FILE_READ | POLICY_FILE_WRITE);
	assert_string_equal(info.reason, "cloud creds");

	assert_int_equal(policy_rule_describe(img, 2, &info), 0);
	assert_int_equal(info.line, 13);
	assert_int_equal(info.list, POLICY_LIST_ALLOW);
	assert_int_equal(info.kind, POLICY_RULE_NETWORK);
	assert_int_equal(info.match, POLICY_MATCH_EXACT);
	assert_string_equal(info.pattern, "[::1]:8080");
	assert_null(info.args);
	assert_null(info.reason);

	assert_int_equal(policy_rule_describe(img, 3, &info), 0);
	assert_int_equal(info.line, 14);
	assert_int_equal(info.kind, POLICY_RULE_FILE);
	assert_int_equal(info.match, POLICY_MATCH_REGEX);
	assert_string_equal(info.pattern, "/x/[a-z]+");
	assert_int_equal(info.actions, POLICY_FILE_EXEC);

	assert_int_equal(policy_rule_describe(img, 4, &info), 0);
	assert_int_equal(info.line, 15);
	assert_int_equal(info.kind, POLICY_RULE_COMMAND);
	assert_int_equal(info.match, POLICY_MATCH_GLOB);
	assert_string_equal(info.pattern, "/usr/bin/env");
	assert_null(info.args);
	assert_null(info.reason);

	assert_int_equal(policy_rule_describe(img, -1, &info), -ERANGE);
	assert_int_equal(policy_rule_describe(img, 5, &info), -ERANGE);
	assert_int_equal(policy_rule_describe(img, INT32_MAX, &info), -ERANGE);
	assert_int_equal(policy_rule_describe(img, INT32_MIN, &info), -ERANGE);
}

/* AgentGuard's deny rules (0 to 4): commands with args, then files. */
static void describe_ag_deny(const struct policy_image *img)
{
	struct policy_rule_info info;

	assert_int_equal(policy_rule_describe(img, 0, &info), 0);
	assert_string_equal(info.file, ag_source);
	assert_int_equal(info.line, 5);
	assert_int_equal(info.column, 5);
	assert_int_equal(info.list, POLICY_LIST_DENY);
	assert_int_equal(info.kind, POLICY_RULE_COMMAND);
	assert_int_equal(info.match, POLICY_MATCH_GLOB);
	assert_string_equal(info.pattern, "rm");
	assert_string_equal(info.args, "-rf *");
	assert_string_equal(info.reason, "Recursive forced deletion is too dangerous");

	assert_int_equal(policy_rule_describe(img, 1, &info), 0);
	assert_int_equal(info.line, 8);
	assert_string_equal(info.pattern, "sudo");
	assert_string_equal(info.args, "*");
	assert_string_equal(info.reason, "No privilege escalation");

	assert_int_equal(policy_rule_describe(img, 2, &info), 0);
	assert_string_equal(info.pattern, "chmod");
	assert_string_equal(info.args, "777 *");

	assert_int_equal(policy_rule_describe(img, 3, &info), 0);
	assert_int_equal(info.line, 14);
	assert_int_equal(info.kind, POLICY_RULE_FILE);
	assert_string_equal(info.pattern, "*.env");
	assert_null(info.args);
	assert_int_equal(info.actions, POLICY_FILE_READ);
	assert_string_equal(info.reason, "Don't let agent read .env files");

	assert_int_equal(policy_rule_describe(img, 4, &info), 0);
	assert_int_equal(info.line, 18);
	assert_string_equal(info.pattern, "*.pem");
	assert_string_equal(info.reason, "Don't let agent read private keys");
}

/* AgentGuard's allow rules (5 to 18): commands, a file, destinations. */
static void describe_ag_allow(const struct policy_image *img)
{
	struct policy_rule_info info;
	static const char *const commands[] = { "ls", "cat", "pwd", "echo", "grep", "head", "tail", "wc" };

	for (int i = 0; i < 8; i++) {
		assert_int_equal(policy_rule_describe(img, 5 + i, &info), 0);
		assert_int_equal(info.line, 24 + (unsigned)i);
		assert_int_equal(info.list, POLICY_LIST_ALLOW);
		assert_int_equal(info.kind, POLICY_RULE_COMMAND);
		assert_string_equal(info.pattern, commands[i]);
		assert_null(info.args);
		assert_null(info.reason);
	}
	assert_int_equal(policy_rule_describe(img, 14, &info), 0);
	assert_int_equal(info.line, 34);
	assert_string_equal(info.pattern, "git");
	assert_string_equal(info.args, "log *");

	assert_int_equal(policy_rule_describe(img, 16, &info), 0);
	assert_int_equal(info.line, 38);
	assert_int_equal(info.list, POLICY_LIST_ALLOW);
	assert_int_equal(info.kind, POLICY_RULE_FILE);
	assert_string_equal(info.pattern, "/tmp/workspace/**");
	assert_int_equal(info.actions, POLICY_FILE_WRITE);
	assert_null(info.reason);

	assert_int_equal(policy_rule_describe(img, 18, &info), 0);
	assert_int_equal(info.line, 43);
	assert_int_equal(info.kind, POLICY_RULE_NETWORK);
	assert_string_equal(info.pattern, "api.github.com:443");
	assert_null(info.args);
}

static void test_describe_agentguard(void **state)
{
	const struct policy_image *img = image(AG);
	struct policy_rule_info info;

	(void)state;
	assert_int_equal(policy_image_rule_count(img), 19);
	describe_ag_deny(img);
	describe_ag_allow(img);
	assert_int_equal(policy_rule_describe(img, -1, &info), -ERANGE);
	assert_int_equal(policy_rule_describe(img, 19, &info), -ERANGE);
}

static void test_describe_generated(void **state)
{
	const struct policy_image *img = image(GEN);
	struct policy_rule_info info;

	(void)state;
	assert_int_equal(policy_image_rule_count(img), GEN_RULES);
	assert_int_equal(policy_rule_describe(img, 1510, &info), 0);
	assert_int_equal(info.list, POLICY_LIST_DENY);
	assert_string_equal(info.pattern, "tool10");
	assert_string_equal(info.args, "--rm*");
	assert_int_equal(policy_rule_describe(img, 1042, &info), 0);
	assert_int_equal(info.list, POLICY_LIST_ASK);
	assert_string_equal(info.pattern, "h42.example.net:443");
	assert_int_equal(policy_rule_describe(img, 1999, &info), 0);
	assert_string_equal(info.pattern, "/gen/d249/secret/**");
	assert_int_equal(policy_rule_describe(img, GEN_RULES, &info), -ERANGE);
}

struct default_case {
	const char *yaml;
	enum policy_decision d[POLICY_ACTION_MAX]; /* exec, read, write, connect */
	unsigned timeout;
};

static void test_defaults(void **state)
{
	static const struct default_case cases[] = {
		{ "version: 1\n", { POLICY_ASK, POLICY_ALLOW, POLICY_ASK, POLICY_ASK }, 60 },
		{ "version: 1\ndefault: deny\nask_timeout: 15\n",
		  { POLICY_DENY, POLICY_ALLOW, POLICY_DENY, POLICY_DENY }, 15 },
		{ "version: 1\ndefault: allow\n",
		  { POLICY_ALLOW, POLICY_ALLOW, POLICY_ALLOW, POLICY_ALLOW }, 60 },
		{ "version: 1\ndefault: ask\nask_timeout: 300\n",
		  { POLICY_ASK, POLICY_ALLOW, POLICY_ASK, POLICY_ASK }, 300 },
		{ "version: 1\ndefault: {read: deny, connect: allow}\n",
		  { POLICY_ASK, POLICY_DENY, POLICY_ASK, POLICY_ALLOW }, 60 },
		{ "version: 1\ndefault: {read: ask}\n",
		  { POLICY_ASK, POLICY_ASK, POLICY_ASK, POLICY_ASK }, 60 },
		{ "version: 1\ndefault: {exec: allow, write: deny}\nask_timeout: 1\n",
		  { POLICY_ALLOW, POLICY_ALLOW, POLICY_DENY, POLICY_ASK }, 1 },
		{ "version: 1\ndefault: {exec: deny, read: ask, write: allow, connect: deny}\n",
		  { POLICY_DENY, POLICY_ASK, POLICY_ALLOW, POLICY_DENY }, 60 },
		{ "version: 1\nask_timeout: 86400\n",
		  { POLICY_ASK, POLICY_ALLOW, POLICY_ASK, POLICY_ASK }, 86400 },
	};
	static const unsigned file_bit[POLICY_ACTION_MAX] = { POLICY_FILE_EXEC, POLICY_FILE_READ,
							      POLICY_FILE_WRITE, 0 };

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct default_case *c = &cases[i];
		struct test_policy t;
		test_policy_build(&t, c->yaml);
		for (int a = 0; a < POLICY_ACTION_MAX; a++)
			assert_int_equal(policy_image_default(t.img, (enum policy_action)a), c->d[a]);
		assert_int_equal(policy_image_ask_timeout(t.img), c->timeout);
		assert_int_equal(policy_image_rule_count(t.img), 0);
		struct policy_verdict v = policy_decide_exec(t.img, "/bin/true", NULL);
		assert_int_equal(v.decision, c->d[POLICY_ACTION_EXEC]);
		assert_int_equal(v.rule, -1);
		for (int a = 0; a < 3; a++) {
			v = policy_decide_open(t.img, "/some/file", file_bit[a]);
			assert_int_equal(v.decision, c->d[a]);
			assert_int_equal(v.rule, -1);
		}
		v = policy_decide_connect(t.img, "example.com", 443);
		assert_int_equal(v.decision, c->d[POLICY_ACTION_CONNECT]);
		assert_int_equal(v.rule, -1);
		assert_verdict(policy_decide_connect(t.img, "example.com", 0), DENY, -1);
		test_policy_free(&t);
	}
	assert_int_equal(policy_image_ask_timeout(image(AG)), 60);
	assert_int_equal(policy_image_ask_timeout(image(EXECF)), 300);
	assert_int_equal(policy_image_default(image(DMAP), POLICY_ACTION_READ), POLICY_DENY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_describe_agentguard),
		cmocka_unit_test(test_describe_generated),
		cmocka_unit_test(test_defaults),
	};
	return cmocka_run_group_tests_name("policy rules described", tests, NULL, teardown);
}
