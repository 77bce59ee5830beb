/* test_load_fields.c — unit tests for the YAML policy loader (policy/load.c): what a well-formed policy loads to, field by field, AgentGuard's example among them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define V "version: 1\n"

/* ---- Well-formed policies ------------------------------------------------------ */

static struct policy *load_ok(const char *yaml)
{
	struct policy_error err;
	struct policy *p = policy_load_buffer("test.yaml", yaml, strlen(yaml), &err);
	char rendered[2048];

	if (!p) {
		policy_error_format(&err, rendered, sizeof(rendered));
		print_error("unexpected error: %s\n", rendered);
		fail();
	}
	return p;
}

static void assert_pos(struct policy_pos pos, unsigned line, unsigned column)
{
	assert_int_equal(pos.line, line);
	assert_int_equal(pos.column, column);
}

static void test_minimal_defaults(void **state)
{
	static const char *const passthrough[] = {"HOME", "USER", "LOGNAME",   "TERM", "LANG",
						  "LC_*", "TZ",   "COLORTERM", "PATH"};
	struct policy *p = load_ok("version: 1\n");

	(void)state;
	assert_string_equal(p->source, "test.yaml");
	assert_int_equal(p->version, 1);
	assert_int_equal(p->defaults[POLICY_ACTION_EXEC], POLICY_ASK);
	assert_int_equal(p->defaults[POLICY_ACTION_READ], POLICY_ALLOW);
	assert_int_equal(p->defaults[POLICY_ACTION_WRITE], POLICY_ASK);
	assert_int_equal(p->defaults[POLICY_ACTION_CONNECT], POLICY_ASK);
	assert_int_equal(p->ask_timeout, 60);
	assert_int_equal(p->nrules, 0);
	assert_int_equal(p->sandbox.nread, 0);
	assert_int_equal(p->sandbox.nwrite, 0);
	assert_int_equal(p->sandbox.nenv, 0);
	assert_int_equal(p->sandbox.network, POLICY_NETWORK_PROXY);
	assert_true(p->sandbox.process_spawn);
	assert_int_equal(p->sandbox.nenv_passthrough, 9);
	for (size_t i = 0; i < 9; i++)
		assert_string_equal(p->sandbox.env_passthrough[i], passthrough[i]);
	assert_int_equal(p->limits.set, 0);
	policy_free(p);
}

static void test_default_scalar(void **state)
{
	struct policy *p = load_ok(V "default: deny\n");

	(void)state;
	assert_int_equal(p->defaults[POLICY_ACTION_EXEC], POLICY_DENY);
	assert_int_equal(p->defaults[POLICY_ACTION_READ], POLICY_ALLOW);
	assert_int_equal(p->defaults[POLICY_ACTION_WRITE], POLICY_DENY);
	assert_int_equal(p->defaults[POLICY_ACTION_CONNECT], POLICY_DENY);
	policy_free(p);

	p = load_ok(V "default: \"allow\"\n");
	assert_int_equal(p->defaults[POLICY_ACTION_EXEC], POLICY_ALLOW);
	assert_int_equal(p->defaults[POLICY_ACTION_WRITE], POLICY_ALLOW);
	policy_free(p);
}

static void test_default_map(void **state)
{
	struct policy *p = load_ok(V "default:\n  read: deny\n  connect: allow\n");

	(void)state;
	assert_int_equal(p->defaults[POLICY_ACTION_EXEC], POLICY_ASK);
	assert_int_equal(p->defaults[POLICY_ACTION_READ], POLICY_DENY);
	assert_int_equal(p->defaults[POLICY_ACTION_WRITE], POLICY_ASK);
	assert_int_equal(p->defaults[POLICY_ACTION_CONNECT], POLICY_ALLOW);
	policy_free(p);

	p = load_ok(V "default: {exec: deny, read: ask, write: allow, connect: deny}\n");
	assert_int_equal(p->defaults[POLICY_ACTION_EXEC], POLICY_DENY);
	assert_int_equal(p->defaults[POLICY_ACTION_READ], POLICY_ASK);
	assert_int_equal(p->defaults[POLICY_ACTION_WRITE], POLICY_ALLOW);
	assert_int_equal(p->defaults[POLICY_ACTION_CONNECT], POLICY_DENY);
	policy_free(p);
}

static void test_ask_timeout(void **state)
{
	struct policy *p = load_ok(V "ask_timeout: 86400\n");

	(void)state;
	assert_int_equal(p->ask_timeout, 86400);
	policy_free(p);
	p = load_ok(V "ask_timeout: 1\n");
	assert_int_equal(p->ask_timeout, 1);
	policy_free(p);
}

static void test_sandbox_all_keys(void **state)
{
	struct policy *p = load_ok(V "sandbox:\n"
				     "  read: [/usr, \"~/.config/git\", ./src]\n"
				     "  write:\n"
				     "    - ./\n"
				     "    - /tmp\n"
				     "  network: none\n"
				     "  process_spawn: false\n"
				     "  env:\n"
				     "    EDITOR: vi\n"
				     "    PORT: 8080\n"
				     "    _FLAG: \"yes\"\n"
				     "    EMPTY: ''\n"
				     "  env_passthrough: [SSH_AUTH_SOCK, LC_*, Xyz_1]\n");
	struct policy_sandbox *sb = &p->sandbox;

	(void)state;
	assert_int_equal(sb->nread, 3);
	assert_string_equal(sb->read[0], "/usr");
	assert_string_equal(sb->read[1], "~/.config/git");
	assert_string_equal(sb->read[2], "./src");
	assert_int_equal(sb->nwrite, 2);
	assert_string_equal(sb->write[0], "./");
	assert_string_equal(sb->write[1], "/tmp");
	assert_int_equal(sb->network, POLICY_NETWORK_NONE);
	assert_false(sb->process_spawn);
	assert_int_equal(sb->nenv, 4);
	assert_string_equal(sb->env[0].name, "EDITOR");
	assert_string_equal(sb->env[0].value, "vi");
	assert_string_equal(sb->env[1].name, "PORT");
	assert_string_equal(sb->env[1].value, "8080");
	assert_string_equal(sb->env[2].name, "_FLAG");
	assert_string_equal(sb->env[2].value, "yes");
	assert_string_equal(sb->env[3].name, "EMPTY");
	assert_string_equal(sb->env[3].value, "");
	assert_int_equal(sb->nenv_passthrough, 3);
	assert_string_equal(sb->env_passthrough[0], "SSH_AUTH_SOCK");
	assert_string_equal(sb->env_passthrough[1], "LC_*");
	assert_string_equal(sb->env_passthrough[2], "Xyz_1");
	policy_free(p);

	p = load_ok(V "sandbox:\n  network: host\n");
	assert_int_equal(p->sandbox.network, POLICY_NETWORK_HOST);
	assert_int_equal(p->sandbox.nenv_passthrough, 9);
	policy_free(p);
}

static void test_sandbox_booleans(void **state)
{
	static const char *const yes[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
	static const char *const no[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
	char yaml[128];

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		struct policy *p;
		snprintf(yaml, sizeof(yaml), V "sandbox: {process_spawn: %s}\n", no[i]);
		p = load_ok(yaml);
		assert_false(p->sandbox.process_spawn);
		policy_free(p);
		snprintf(yaml, sizeof(yaml), V "sandbox: {process_spawn: %s}\n", yes[i]);
		p = load_ok(yaml);
		assert_true(p->sandbox.process_spawn);
		policy_free(p);
	}
}

static void test_sandbox_empty_values(void **state)
{
	struct policy *p = load_ok(V "sandbox:\n  read:\n  write: []\n  env:\n  env_passthrough: []\n");

	(void)state;
	assert_int_equal(p->sandbox.nread, 0);
	assert_int_equal(p->sandbox.nwrite, 0);
	assert_int_equal(p->sandbox.nenv, 0);
	assert_int_equal(p->sandbox.nenv_passthrough, 0);
	policy_free(p);

	p = load_ok(V "sandbox:\n  env_passthrough: ~\nlimits:\n");
	assert_int_equal(p->sandbox.nenv_passthrough, 0);
	assert_int_equal(p->limits.set, 0);
	policy_free(p);

	p = load_ok(V "sandbox:\n");
	assert_int_equal(p->sandbox.nenv_passthrough, 9);
	policy_free(p);
}

static void test_limits_all_keys(void **state)
{
	struct policy *p = load_ok(V "limits:\n"
				     "  cpu_cores: 1.5\n"
				     "  memory_mb: 2048\n"
				     "  disk_mb: 10240\n"
				     "  max_processes: 256\n"
				     "  exec_timeout: 30\n"
				     "  session_timeout: 3600\n"
				     "  max_egress_bytes: 18446744073709551615\n");
	const struct policy_limits *l = &p->limits;

	(void)state;
	assert_int_equal(l->set, POLICY_LIMIT_CPU_CORES | POLICY_LIMIT_MEMORY_MB | POLICY_LIMIT_DISK_MB |
					 POLICY_LIMIT_MAX_PROCESSES | POLICY_LIMIT_EXEC_TIMEOUT |
					 POLICY_LIMIT_SESSION_TIMEOUT | POLICY_LIMIT_MAX_EGRESS_BYTES);
	assert_true(l->cpu_cores == 1.5);
	assert_int_equal(l->memory_mb, 2048);
	assert_int_equal(l->disk_mb, 10240);
	assert_int_equal(l->max_processes, 256);
	assert_int_equal(l->exec_timeout, 30);
	assert_int_equal(l->session_timeout, 3600);
	assert_true(l->max_egress_bytes == UINT64_MAX);
	policy_free(p);
}

static void test_limits_some_keys(void **state)
{
	struct policy *p = load_ok(V "limits: {cpu_cores: 2, memory_mb: 512}\n");

	(void)state;
	assert_int_equal(p->limits.set, POLICY_LIMIT_CPU_CORES | POLICY_LIMIT_MEMORY_MB);
	assert_true(p->limits.cpu_cores == 2.0);
	assert_int_equal(p->limits.memory_mb, 512);
	policy_free(p);

	p = load_ok(V "limits: {cpu_cores: 0.25}\n");
	assert_true(p->limits.cpu_cores == 0.25);
	policy_free(p);
	p = load_ok(V "limits: {cpu_cores: .5}\n");
	assert_true(p->limits.cpu_cores == 0.5);
	policy_free(p);
}

/* test_rule_forms' rule 0: a deny command with args, a glob and a reason. */
static void rule_forms_deny(const struct policy_rule *r)
{
	assert_int_equal(r[0].kind, POLICY_RULE_COMMAND);
	assert_int_equal(r[0].list, POLICY_LIST_DENY);
	assert_int_equal(r[0].match, POLICY_MATCH_GLOB);
	assert_string_equal(r[0].command, "git");
	assert_string_equal(r[0].args, "push --force *");
	assert_string_equal(r[0].reason, "no force pushes");
	assert_null(r[0].path);
	assert_null(r[0].destination);
	assert_pos(r[0].pos, 3, 5);
	assert_pos(r[0].pattern_pos, 3, 14);
	assert_pos(r[0].args_pos, 4, 11);
}

/* Rules 1 to 3: ask files in block, flow and nested flow style, with two actions, none and exec. */
static void rule_forms_ask(const struct policy_rule *r)
{
	assert_int_equal(r[1].kind, POLICY_RULE_FILE);
	assert_int_equal(r[1].list, POLICY_LIST_ASK);
	assert_string_equal(r[1].path, "~/.ssh/**");
	assert_int_equal(r[1].actions, POLICY_FILE_READ | POLICY_FILE_WRITE);
	assert_string_equal(r[1].reason, "keys");
	assert_null(r[1].command);
	assert_null(r[1].args);
	assert_pos(r[1].pos, 8, 5);
	assert_pos(r[1].pattern_pos, 9, 13);
	assert_pos(r[1].args_pos, 0, 0);

	assert_int_equal(r[2].kind, POLICY_RULE_FILE);
	assert_string_equal(r[2].path, "/etc/passwd");
	assert_int_equal(r[2].actions, POLICY_FILE_ALL);
	assert_int_equal(r[2].match, POLICY_MATCH_EXACT);
	assert_null(r[2].reason);
	assert_pos(r[2].pos, 12, 5);
	assert_pos(r[2].pattern_pos, 12, 18);

	assert_int_equal(r[3].kind, POLICY_RULE_FILE);
	assert_string_equal(r[3].path, "*.sh");
	assert_int_equal(r[3].actions, POLICY_FILE_EXEC);
	assert_pos(r[3].pos, 14, 5);
}

/* Rules 4 and 5: an allowed network destination, a command as a regex. */
static void rule_forms_allow(const struct policy_rule *r)
{
	assert_int_equal(r[4].kind, POLICY_RULE_NETWORK);
	assert_int_equal(r[4].list, POLICY_LIST_ALLOW);
	assert_string_equal(r[4].destination, "*.example.com:443");
	assert_string_equal(r[4].reason, "docs");
	assert_int_equal(r[4].match, POLICY_MATCH_GLOB);
	assert_pos(r[4].pattern_pos, 17, 20);

	assert_int_equal(r[5].kind, POLICY_RULE_COMMAND);
	assert_string_equal(r[5].command, "^(ls|cat)$");
	assert_null(r[5].args);
	assert_int_equal(r[5].match, POLICY_MATCH_REGEX);
}

static void test_rule_forms(void **state)
{
	struct policy *p = load_ok(V "deny:\n"                               /* 2 */
				     "  - command: git\n"                    /* 3 */
				     "    args: push --force *\n"            /* 4 */
				     "    match: glob\n"                     /* 5 */
				     "    reason: \"no force pushes\"\n"     /* 6 */
				     "ask:\n"                                /* 7 */
				     "  - file:\n"                           /* 8 */
				     "      path: ~/.ssh/**\n"               /* 9 */
				     "      action: [read, write]\n"         /* 10 */
				     "      reason: keys\n"                  /* 11 */
				     "  - file: {path: /etc/passwd}\n"       /* 12 */
				     "    match: exact\n"                    /* 13 */
				     "  - {file: {path: \"*.sh\", action: exec}}\n" /* 14 */
				     "allow:\n"                              /* 15 */
				     "  - network:\n"                        /* 16 */
				     "      destination: \"*.example.com:443\"\n" /* 17 */
				     "      match: glob\n"                   /* 18 */
				     "    reason: docs\n"                    /* 19 */
				     "  - command: '^(ls|cat)$'\n"           /* 20 */
				     "    match: regex\n");                  /* 21 */

	(void)state;
	assert_int_equal(p->nrules, 6);
	rule_forms_deny(p->rules);
	rule_forms_ask(p->rules);
	rule_forms_allow(p->rules);
	policy_free(p);
}

static void test_match_modes_and_actions(void **state)
{
	struct policy *p = load_ok(V "deny:\n"
				     "  - {command: npm, args: run, match: prefix}\n"
				     "  - {command: ls, match: exact}\n"
				     "  - {file: {path: /x, action: read, match: prefix}}\n"
				     "  - {file: {path: /y, action: [exec, read, exec]}}\n"
				     "  - {file: {path: /z, action: [write]}}\n");

	(void)state;
	assert_int_equal(p->nrules, 5);
	assert_int_equal(p->rules[0].match, POLICY_MATCH_PREFIX);
	assert_int_equal(p->rules[1].match, POLICY_MATCH_EXACT);
	assert_int_equal(p->rules[2].match, POLICY_MATCH_PREFIX);
	assert_int_equal(p->rules[2].actions, POLICY_FILE_READ);
	assert_int_equal(p->rules[3].actions, POLICY_FILE_EXEC | POLICY_FILE_READ);
	assert_int_equal(p->rules[4].actions, POLICY_FILE_WRITE);
	policy_free(p);
}

static void test_plain_numbers_are_strings(void **state)
{
	struct policy *p = load_ok(V "allow:\n  - command: 7z\n    args: 123\n    reason: 1.5\n");

	(void)state;
	assert_string_equal(p->rules[0].command, "7z");
	assert_string_equal(p->rules[0].args, "123");
	assert_string_equal(p->rules[0].reason, "1.5");
	policy_free(p);
}

static void test_quoted_booleans_are_strings(void **state)
{
	struct policy *p = load_ok(V "deny:\n  - command: \"yes\"\n    args: 'no'\n    reason: \"~\"\n");

	(void)state;
	assert_string_equal(p->rules[0].command, "yes");
	assert_string_equal(p->rules[0].args, "no");
	assert_string_equal(p->rules[0].reason, "~");
	policy_free(p);
}

static void test_null_lists_and_comments(void **state)
{
	struct policy *p = load_ok("# policy header\n"
				   "version: 1   # the format\n"
				   "deny:\n"
				   "ask: ~\n"
				   "allow: null   # nothing yet\n"
				   "# trailing comment\n");

	(void)state;
	assert_int_equal(p->nrules, 0);
	policy_free(p);

	p = load_ok("version: 1\ndeny: []\nask: Null\nallow: NULL\n");
	assert_int_equal(p->nrules, 0);
	policy_free(p);

	p = load_ok("---\n# a document marker and a comment\nversion: 1\n...\n");
	assert_int_equal(p->version, 1);
	policy_free(p);
}

static void test_file_order_across_lists(void **state)
{
	struct policy *p = load_ok(V "allow:\n  - command: ls\n"
				     "deny:\n  - command: rm\n  - command: dd\n"
				     "ask:\n  - command: curl\n");

	(void)state;
	assert_int_equal(p->nrules, 4);
	assert_int_equal(p->rules[0].list, POLICY_LIST_ALLOW);
	assert_string_equal(p->rules[0].command, "ls");
	assert_int_equal(p->rules[1].list, POLICY_LIST_DENY);
	assert_string_equal(p->rules[1].command, "rm");
	assert_int_equal(p->rules[2].list, POLICY_LIST_DENY);
	assert_string_equal(p->rules[2].command, "dd");
	assert_int_equal(p->rules[3].list, POLICY_LIST_ASK);
	assert_string_equal(p->rules[3].command, "curl");
	policy_free(p);
}

static void test_flow_style_and_version_anywhere(void **state)
{
	struct policy *p = load_ok("{deny: [{command: rm}], version: 1, default: ask}\n");

	(void)state;
	assert_int_equal(p->nrules, 1);
	assert_string_equal(p->rules[0].command, "rm");
	assert_pos(p->rules[0].pos, 1, 9);
	policy_free(p);
}

static void test_unicode_columns(void **state)
{
	struct policy *p = load_ok(V "deny:\n  - {command: \"é\", args: x}\n");
	struct policy_error err;

	(void)state;
	assert_pos(p->rules[0].args_pos, 3, 26);
	policy_free(p);

	assert_null(policy_load_buffer("u.yaml", V "deny:\n  - {command: \"é\", args: no}\n",
				       strlen(V "deny:\n  - {command: \"é\", args: no}\n"), &err));
	assert_int_equal(err.line, 3);
	assert_int_equal(err.column, 26);
}

static const char agentguard_example[] = "version: 1\n"
					 "deny:\n"
					 "  - command: \"rm\"\n"
					 "    args: \"-rf *\"\n"
					 "    reason: \"Recursive forced deletion is too dangerous\"\n"
					 "  - file:\n"
					 "      path: \"*.env\"\n"
					 "      action: \"read\"\n"
					 "    reason: \"Don't let agent read .env files\"\n"
					 "allow:\n"
					 "  - network:\n"
					 "      destination: \"api.anthropic.com:443\"\n";

static void test_agentguard_snippet(void **state)
{
	struct policy *p = load_ok(agentguard_example);
	const struct policy_rule *r = p->rules;

	(void)state;
	assert_int_equal(p->nrules, 3);
	assert_int_equal(r[0].kind, POLICY_RULE_COMMAND);
	assert_int_equal(r[0].list, POLICY_LIST_DENY);
	assert_string_equal(r[0].command, "rm");
	assert_string_equal(r[0].args, "-rf *");
	assert_string_equal(r[0].reason, "Recursive forced deletion is too dangerous");
	assert_pos(r[0].pos, 3, 5);
	assert_int_equal(r[1].kind, POLICY_RULE_FILE);
	assert_string_equal(r[1].path, "*.env");
	assert_int_equal(r[1].actions, POLICY_FILE_READ);
	assert_string_equal(r[1].reason, "Don't let agent read .env files");
	assert_int_equal(r[2].kind, POLICY_RULE_NETWORK);
	assert_int_equal(r[2].list, POLICY_LIST_ALLOW);
	assert_string_equal(r[2].destination, "api.anthropic.com:443");
	assert_null(r[2].reason);
	policy_free(p);
}

/* tests/data/policies/NAME, found from this file's own path. */
static void data_path(char *out, size_t size, const char *name)
{
	const char *self = __FILE__;
	const char *unit = strstr(self, "unit/test_load_fields.c");
	int prefix = unit ? (int)(unit - self) : 0;

	snprintf(out, size, "%.*s%sdata/policies/%s", prefix, self, unit ? "" : "tests/", name);
}

struct expected_rule {
	enum policy_list list;
	enum policy_rule_kind kind;
	const char *pattern;
	const char *args;
	unsigned actions;
	const char *reason;
};

/* The rules of tests/data/policies/agentguard.yaml, in file order. */
static const struct expected_rule agentguard_rules[] = {
	{POLICY_LIST_DENY, POLICY_RULE_COMMAND, "rm", "-rf *", 0,
	 "Recursive forced deletion is too dangerous"},
	{POLICY_LIST_DENY, POLICY_RULE_COMMAND, "sudo", "*", 0, "No privilege escalation"},
	{POLICY_LIST_DENY, POLICY_RULE_COMMAND, "chmod", "777 *", 0,
	 "World-writable permissions are a security risk"},
	{POLICY_LIST_DENY, POLICY_RULE_FILE, "*.env", NULL, POLICY_FILE_READ,
	 "Don't let agent read .env files"},
	{POLICY_LIST_DENY, POLICY_RULE_FILE, "*.pem", NULL, POLICY_FILE_READ,
	 "Don't let agent read private keys"},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "ls", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "cat", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "pwd", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "echo", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "grep", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "head", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "tail", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "wc", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "git", "status", 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "git", "log *", 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_COMMAND, "git", "diff *", 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_FILE, "/tmp/workspace/**", NULL, POLICY_FILE_WRITE, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_NETWORK, "api.anthropic.com:443", NULL, 0, NULL},
	{POLICY_LIST_ALLOW, POLICY_RULE_NETWORK, "api.github.com:443", NULL, 0, NULL},
};

static void test_agentguard_file(void **state)
{
	const struct expected_rule *want = agentguard_rules;
	size_t n = sizeof(agentguard_rules) / sizeof(agentguard_rules[0]);
	struct policy_error err;
	char path[1024];
	struct policy *p;

	(void)state;
	data_path(path, sizeof(path), "agentguard.yaml");
	p = policy_load_file(path, &err);
	if (!p)
		print_error("%s:%u:%u: %s\n", err.file, err.line, err.column, err.message);
	assert_non_null(p);
	assert_string_equal(p->source, path);
	assert_int_equal(p->nrules, n);
	for (size_t i = 0; i < n; i++) {
		const struct policy_rule *r = &p->rules[i];
		const char *pattern = r->kind == POLICY_RULE_COMMAND ? r->command
				      : r->kind == POLICY_RULE_FILE  ? r->path
								     : r->destination;
		assert_int_equal(r->list, want[i].list);
		assert_int_equal(r->kind, want[i].kind);
		assert_int_equal(r->match, POLICY_MATCH_GLOB);
		assert_string_equal(pattern, want[i].pattern);
		if (want[i].args)
			assert_string_equal(r->args, want[i].args);
		else
			assert_null(r->args);
		if (r->kind == POLICY_RULE_FILE)
			assert_int_equal(r->actions, want[i].actions);
		if (want[i].reason)
			assert_string_equal(r->reason, want[i].reason);
		else
			assert_null(r->reason);
	}
	assert_pos(p->rules[0].pos, 5, 5);
	assert_pos(p->rules[0].pattern_pos, 5, 14);
	assert_pos(p->rules[0].args_pos, 6, 11);
	assert_pos(p->rules[3].pos, 14, 5);
	assert_pos(p->rules[3].pattern_pos, 15, 13);
	policy_free(p);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_defaults),
		cmocka_unit_test(test_default_scalar),
		cmocka_unit_test(test_default_map),
		cmocka_unit_test(test_ask_timeout),
		cmocka_unit_test(test_sandbox_all_keys),
		cmocka_unit_test(test_sandbox_booleans),
		cmocka_unit_test(test_sandbox_empty_values),
		cmocka_unit_test(test_limits_all_keys),
		cmocka_unit_test(test_limits_some_keys),
		cmocka_unit_test(test_rule_forms),
		cmocka_unit_test(test_match_modes_and_actions),
		cmocka_unit_test(test_plain_numbers_are_strings),
		cmocka_unit_test(test_quoted_booleans_are_strings),
		cmocka_unit_test(test_null_lists_and_comments),
		cmocka_unit_test(test_file_order_across_lists),
		cmocka_unit_test(test_flow_style_and_version_anywhere),
		cmocka_unit_test(test_unicode_columns),
		cmocka_unit_test(test_agentguard_snippet),
		cmocka_unit_test(test_agentguard_file),
	};
	return cmocka_run_group_tests_name("well-formed policies", tests, NULL, NULL);
}
