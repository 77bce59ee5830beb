/* test_load.c — unit tests for the YAML policy loader (policy/load.c): errors, fields, files, scale. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"

#define V "version: 1\n"

/* ---- Malformed policies ------------------------------------------------------- */

struct bad_case {
	const char *name;
	const char *yaml;
	size_t len;
	unsigned line;
	unsigned column;
	const char *message; /* a substring of the error message */
};

#define BAD(name, yaml, line, column, message) {name, yaml, sizeof(yaml) - 1, line, column, message}
#define B10 "[[[[[[[[[["

static const struct bad_case bad_cases[] = {
	/* Documents and the top level. */
	BAD("empty_file", "", 1, 1, "the policy is empty"),
	BAD("comments_only", "# nothing here\n\n", 1, 1, "the policy is empty"),
	BAD("empty_document", "---\n", 2, 1, "the policy is empty"),
	BAD("null_document", "~\n", 1, 1, "the policy is empty"),
	BAD("top_level_list", "- version: 1\n", 1, 1, "a policy must be a mapping"),
	BAD("top_level_scalar", "version 1\n", 1, 1, "got 'version 1'"),
	BAD("two_documents", "version: 1\n---\nversion: 1\n", 2, 1,
	    "a policy must be a single YAML document"),
	BAD("missing_version", "deny: []\n", 1, 1, "missing 'version'"),
	BAD("version_2", "version: 2\n", 1, 10,
	    "unsupported policy version 2 (only version 1 is supported)"),
	BAD("version_0", "deny: []\nversion: 0\n", 2, 10, "unsupported policy version 0"),
	BAD("version_quoted", "version: \"1\"\n", 1, 10,
	    "'version' must be an integer, got the quoted string \"1\""),
	BAD("version_float", "version: 1.0\n", 1, 10, "'version' must be a positive integer, got '1.0'"),
	BAD("version_list", "version: [1]\n", 1, 10, "'version' must be a positive integer, got a list"),
	BAD("unknown_top_key", V "denny: []\n", 2, 1,
	    "unknown key 'denny' in the policy (allowed: version, default, ask_timeout, deny, ask, "
	    "allow, sandbox, limits)"),

	/* Keys. */
	BAD("duplicate_top_key", V "deny: []\nask: []\ndeny: []\n", 4, 1,
	    "duplicate key 'deny' (first at line 2)"),
	BAD("duplicate_version", "version: 1\nversion: 1\n", 2, 1,
	    "duplicate key 'version' (first at line 1)"),
	BAD("duplicate_quoted_and_plain", V "\"deny\": []\ndeny: []\n", 3, 1, "duplicate key 'deny'"),
	BAD("duplicate_rule_key", V "deny:\n  - command: a\n    command: b\n", 4, 5,
	    "duplicate key 'command' (first at line 3)"),
	BAD("duplicate_env_name", V "sandbox:\n  env:\n    A: x\n    B: y\n    A: z\n", 6, 5,
	    "duplicate key 'A' (first at line 4)"),
	BAD("non_scalar_key_list", V "? [a, b]\n: c\n", 2, 3, "mapping keys must be strings, not lists"),
	BAD("non_scalar_key_map", V "? {a: b}\n: c\n", 2, 3, "mapping keys must be strings, not mappings"),

	/* YAML features a policy may not use. */
	BAD("anchor_on_list", V "deny: &rules []\n", 2, 7, "YAML anchors and aliases are not allowed"),
	BAD("anchor_on_scalar", V "ask_timeout: &t 5\n", 2, 14, "YAML anchors and aliases are not allowed"),
	BAD("alias", V "deny: *rules\n", 2, 7, "YAML anchors and aliases are not allowed"),
	BAD("tag_on_list", V "deny: !!seq []\n", 2, 7, "explicit YAML tags are not allowed"),
	BAD("tag_on_scalar", V "ask_timeout: !!int 5\n", 2, 14, "explicit YAML tags are not allowed"),
	BAD("local_tag", V "deny: !rules []\n", 2, 7, "explicit YAML tags are not allowed (found !rules)"),
	BAD("nesting_too_deep", V "x: " B10 B10 B10 B10 B10 B10 B10 "\n", 2, 67,
	    "YAML nesting is deeper than 64 levels"),

	/* Bytes and syntax. */
	BAD("syntax_unclosed_flow", V "deny: [a, b\n", 3, 1,
	    "YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence at "
	    "line 2)"),
	BAD("syntax_bad_indent", V "deny: a\n b: c\n", 3, 3,
	    "YAML syntax error: mapping values are not allowed in this context"),
	BAD("syntax_tab", V "deny:\n\t- command: rm\n", 3, 1, "YAML syntax error: found character"),
	BAD("invalid_utf8", V "deny: []\nask: \xff\n", 3, 6, "invalid YAML input: invalid leading UTF-8 octet"),
	BAD("nul_byte", V "deny: [a\0]\n", 2, 9, "the policy contains a NUL byte"),
	BAD("nul_escape_in_string", V "deny:\n  - command: \"r\\0m\"\n", 3, 14,
	    "'command' must not contain a NUL character"),

	/* Strings: YAML 1.1 booleans and nulls, wrong node types. */
	BAD("args_boolean_no", V "deny:\n  - command: git\n    args: no\n", 4, 11,
	    "'args' must be a string, but no is a YAML 1.1 boolean here: quote it (\"no\")"),
	BAD("args_boolean_OFF", V "deny:\n  - command: git\n    args: OFF\n", 4, 11,
	    "but OFF is a YAML 1.1 boolean here: quote it (\"OFF\")"),
	BAD("command_boolean_yes", V "allow:\n  - command: yes\n", 3, 14,
	    "'command' must be a string, but yes is a YAML 1.1 boolean here"),
	BAD("command_boolean_Y", V "allow:\n  - command: Y\n", 3, 14, "Y is a YAML 1.1 boolean"),
	BAD("path_boolean_on", V "deny:\n  - file:\n      path: on\n", 4, 13,
	    "'path' must be a string, but on is a YAML 1.1 boolean here"),
	BAD("reason_boolean_True", V "deny:\n  - command: rm\n    reason: True\n", 4, 13,
	    "'reason' must be a string, but True is a YAML 1.1 boolean here"),
	BAD("reason_null_tilde", V "deny:\n  - command: rm\n    reason: ~\n", 4, 13,
	    "'reason' must be a string, but ~ is a YAML 1.1 null here: quote it (\"~\")"),
	BAD("destination_null_NULL", V "allow:\n  - network:\n      destination: NULL\n", 4, 20,
	    "NULL is a YAML 1.1 null here"),
	BAD("command_empty_null", V "deny:\n  - command:\n", 3, 13,
	    "'command' must be a string, but an empty value is a YAML 1.1 null here"),
	BAD("command_empty_string", V "deny:\n  - command: \"\"\n", 3, 14, "'command' must not be empty"),
	BAD("path_empty_string", V "deny:\n  - file: {path: ''}\n", 3, 18, "'path' must not be empty"),
	BAD("command_list", V "deny:\n  - command: [rm]\n", 3, 14, "'command' must be a string, got a list"),
	BAD("reason_mapping", V "deny:\n  - command: rm\n    reason: {a: b}\n", 4, 13,
	    "'reason' must be a string, got a mapping"),

	/* Enumerations. */
	BAD("action_unknown", V "deny:\n  - file:\n      path: x\n      action: delete\n", 5, 15,
	    "unknown file action 'delete' for 'action' (expected read, write or exec)"),
	BAD("action_list_unknown", V "deny:\n  - file:\n      path: x\n      action: [read, delete]\n", 5,
	    22, "unknown file action 'delete'"),
	BAD("action_list_empty", V "deny:\n  - file:\n      path: x\n      action: []\n", 5, 15,
	    "'action' must name at least one of read, write or exec"),
	BAD("action_mapping", V "deny:\n  - file:\n      path: x\n      action: {read: 1}\n", 5, 15,
	    "'action' must be one of read, write or exec, got a mapping"),
	BAD("match_unknown", V "deny:\n  - command: rm\n    match: fuzzy\n", 4, 12,
	    "unknown match mode 'fuzzy' for 'match' (expected glob, exact, prefix or regex)"),
	BAD("decision_unknown", V "default: maybe\n", 2, 10,
	    "unknown decision 'maybe' for 'default' (expected allow, ask or deny)"),
	BAD("decision_unknown_in_map", V "default:\n  exec: sometimes\n", 3, 9,
	    "unknown decision 'sometimes' for 'default.exec'"),
	BAD("decision_boolean", V "default: no\n", 2, 10, "unknown decision 'no'"),
	BAD("default_unknown_key", V "default: {exe: ask}\n", 2, 11,
	    "unknown key 'exe' in 'default' (allowed: exec, read, write, connect)"),
	BAD("default_list", V "default: [ask]\n", 2, 10,
	    "'default' must be allow, ask or deny, or a mapping"),
	BAD("default_null", V "default:\n", 2, 9, "got null"),
	BAD("network_mode_unknown", V "sandbox:\n  network: bridge\n", 3, 12,
	    "unknown network mode 'bridge' for 'sandbox.network' (expected proxy, none or host)"),

	/* Rule shapes. */
	BAD("rule_without_kind", V "deny:\n  - reason: x\n", 3, 5,
	    "a rule needs one of 'command', 'file' or 'network'"),
	BAD("rule_two_kinds", V "deny:\n  - command: rm\n    file:\n      path: x\n", 4, 5,
	    "also has 'file' after 'command'"),
	BAD("rule_two_kinds_reversed", V "allow:\n  - network: {destination: x}\n    command: rm\n", 4, 5,
	    "also has 'command' after 'network'"),
	BAD("args_on_file_rule", V "deny:\n  - file:\n      path: x\n    args: y\n", 5, 5,
	    "'args' is only allowed in command rules, not in a file rule"),
	BAD("args_on_network_rule", V "allow:\n  - args: y\n    network: {destination: x}\n", 3, 5,
	    "'args' is only allowed in command rules, not in a network rule"),
	BAD("reason_twice", V "deny:\n  - file:\n      path: x\n      reason: a\n    reason: b\n", 6, 5,
	    "'reason' is given both in the rule and inside 'file'"),
	BAD("match_twice", V "allow:\n  - match: exact\n    network:\n      destination: x\n      match: glob\n",
	    6, 7, "'match' is given both in the rule and inside 'network'"),
	BAD("file_without_path", V "deny:\n  - file:\n      action: read\n", 4, 7, "'file' needs a 'path'"),
	BAD("network_without_destination", V "allow:\n  - network: {}\n", 3, 14,
	    "'network' needs a 'destination'"),
	BAD("file_as_string", V "deny:\n  - file: \"*.env\"\n", 3, 11, "'file' must be a mapping"),
	BAD("network_null", V "allow:\n  - network:\n", 3, 13, "'network' must be a mapping"),
	BAD("rule_unknown_key", V "deny:\n  - cmd: rm\n", 3, 5,
	    "unknown key 'cmd' in a rule (allowed: command, file, network, args, reason, match)"),
	BAD("file_unknown_key", V "deny:\n  - file: {path: x, mode: r}\n", 3, 21,
	    "unknown key 'mode' in 'file' (allowed: path, action, reason, match)"),
	BAD("network_unknown_key", V "allow:\n  - network: {destination: x, port: 1}\n", 3, 31,
	    "unknown key 'port' in 'network' (allowed: destination, reason, match)"),
	BAD("deny_mapping", V "deny:\n  command: rm\n", 3, 3, "'deny' must be a list of rules, got a mapping"),
	BAD("allow_scalar", V "allow: ls\n", 2, 8, "'allow' must be a list of rules, got 'ls'"),
	BAD("ask_quoted_null", V "ask: \"~\"\n", 2, 6, "'ask' must be a list of rules, got '~'"),
	BAD("rule_scalar", V "ask:\n  - rm\n", 3, 5,
	    "a rule must be a mapping with 'command', 'file' or 'network', got 'rm'"),
	BAD("rule_list", V "ask:\n  - [rm]\n", 3, 5, "a rule must be a mapping"),

	/* Integers and numbers. */
	BAD("ask_timeout_zero", V "ask_timeout: 0\n", 2, 14, "'ask_timeout' must be a positive integer, got 0"),
	BAD("ask_timeout_too_big", V "ask_timeout: 86401\n", 2, 14,
	    "'ask_timeout' must be at most 86400, got 86401"),
	BAD("ask_timeout_quoted", V "ask_timeout: \"30\"\n", 2, 14,
	    "'ask_timeout' must be an integer, got the quoted string \"30\""),
	BAD("ask_timeout_negative", V "ask_timeout: -5\n", 2, 14,
	    "'ask_timeout' must be a positive integer, got '-5'"),
	BAD("ask_timeout_octal", V "ask_timeout: 010\n", 2, 14, "without leading zeros"),
	BAD("ask_timeout_null", V "ask_timeout:\n", 2, 13, "'ask_timeout' must be a positive integer, got null"),
	BAD("ask_timeout_underscore", V "ask_timeout: 1_0\n", 2, 14, "got '1_0'"),
	BAD("cpu_cores_zero", V "limits:\n  cpu_cores: 0\n", 3, 14, "'limits.cpu_cores' must be greater than 0"),
	BAD("cpu_cores_zero_float", V "limits:\n  cpu_cores: 0.0\n", 3, 14, "must be greater than 0"),
	BAD("cpu_cores_negative", V "limits:\n  cpu_cores: -1\n", 3, 14,
	    "'limits.cpu_cores' must be a positive number, got '-1'"),
	BAD("cpu_cores_quoted", V "limits:\n  cpu_cores: \"2\"\n", 3, 14, "must be a positive number"),
	BAD("cpu_cores_word", V "limits:\n  cpu_cores: two\n", 3, 14, "must be a positive number, got 'two'"),
	BAD("cpu_cores_two_dots", V "limits:\n  cpu_cores: 1.2.3\n", 3, 14, "must be a positive number"),
	BAD("memory_zero", V "limits:\n  memory_mb: 0\n", 3, 14,
	    "'limits.memory_mb' must be a positive integer, got 0"),
	BAD("egress_overflow", V "limits:\n  max_egress_bytes: 18446744073709551616\n", 3, 21,
	    "'limits.max_egress_bytes' is too large"),
	BAD("disk_float", V "limits:\n  disk_mb: 1.5\n", 3, 12,
	    "'limits.disk_mb' must be a positive integer, got '1.5'"),
	BAD("max_processes_quoted", V "limits:\n  max_processes: \"10\"\n", 3, 18, "quoted string"),
	BAD("exec_timeout_list", V "limits:\n  exec_timeout: [1]\n", 3, 17, "got a list"),
	BAD("session_timeout_bool", V "limits:\n  session_timeout: yes\n", 3, 20,
	    "'limits.session_timeout' must be a positive integer, got 'yes'"),
	BAD("limits_unknown_key", V "limits:\n  cpu: 1\n", 3, 3, "unknown key 'cpu' in 'limits'"),
	BAD("limits_list", V "limits: [1]\n", 2, 9, "'limits' must be a mapping, got a list"),

	/* Sandbox. */
	BAD("sandbox_list", V "sandbox: [a]\n", 2, 10, "'sandbox' must be a mapping, got a list"),
	BAD("sandbox_unknown_key", V "sandbox:\n  mounts: []\n", 3, 3,
	    "unknown key 'mounts' in 'sandbox' (allowed: read, write, network, process_spawn, env, "
	    "env_passthrough)"),
	BAD("process_spawn_maybe", V "sandbox:\n  process_spawn: maybe\n", 3, 18,
	    "'sandbox.process_spawn' must be true or false, got 'maybe'"),
	BAD("process_spawn_quoted", V "sandbox:\n  process_spawn: \"true\"\n", 3, 18,
	    "got the quoted string \"true\""),
	BAD("env_name_digit", V "sandbox:\n  env:\n    1FOO: x\n", 4, 5,
	    "invalid environment variable name '1FOO' in 'sandbox.env'"),
	BAD("env_name_dash", V "sandbox:\n  env:\n    A-B: x\n", 4, 5, "invalid environment variable name 'A-B'"),
	BAD("env_value_null", V "sandbox:\n  env:\n    FOO:\n", 4, 9,
	    "'sandbox.env.FOO' must be a string, but an empty value is a YAML 1.1 null here"),
	BAD("env_value_boolean", V "sandbox:\n  env:\n    FOO: yes\n", 4, 10,
	    "'sandbox.env.FOO' must be a string, but yes is a YAML 1.1 boolean here"),
	BAD("env_list", V "sandbox:\n  env: [A]\n", 3, 8, "'sandbox.env' must be a mapping"),
	BAD("passthrough_double_star", V "sandbox:\n  env_passthrough: [LC_**]\n", 3, 21,
	    "invalid name 'LC_**' in 'sandbox.env_passthrough'"),
	BAD("passthrough_star_only", V "sandbox:\n  env_passthrough: [\"*\"]\n", 3, 21, "invalid name '*'"),
	BAD("passthrough_inner_star", V "sandbox:\n  env_passthrough: [A*B]\n", 3, 21, "invalid name 'A*B'"),
	BAD("passthrough_boolean", V "sandbox:\n  env_passthrough: [HOME, y]\n", 3, 27,
	    "an item of 'sandbox.env_passthrough' must be a string, but y is a YAML 1.1 boolean"),
	BAD("read_scalar", V "sandbox:\n  read: /tmp\n", 3, 9,
	    "'sandbox.read' must be a list of strings, got '/tmp'"),
	BAD("write_item_null", V "sandbox:\n  write:\n    - ~\n", 4, 7,
	    "an item of 'sandbox.write' must be a string, but ~ is a YAML 1.1 null"),
	BAD("read_item_empty", V "sandbox:\n  read: [\"\"]\n", 3, 10,
	    "'sandbox.read' must not contain empty paths"),

	/* Patterns rejected by policy/pattern.c. */
	BAD("bad_command_pattern", V "deny:\n  - command: \"BADGLOB[\"\n", 3, 14,
	    "unterminated '['"),
	BAD("bad_args_pattern", V "deny:\n  - command: git\n    args: BADGLOB[\n", 4, 11,
	    "unterminated '['"),
	BAD("bad_path_pattern", V "deny:\n  - file:\n      path: BADGLOB[\n", 4, 13,
	    "unterminated '['"),
	BAD("bad_destination_pattern", V "allow:\n  - network:\n      destination: BADGLOB[\n", 4, 20,
	    "unterminated '['"),
};

static void test_bad_policy(void **state)
{
	const struct bad_case *c = *state;
	struct policy_error err;
	struct policy *p = policy_load_buffer("bad.yaml", c->yaml, c->len, &err);
	char rendered[2048];

	policy_error_format(&err, rendered, sizeof(rendered));
	if (p || err.line != c->line || err.column != c->column || !strstr(err.message, c->message)) {
		print_error("%s: expected %u:%u \"%s\", got %s%s\n", c->name, c->line, c->column,
			    c->message, p ? "a policy; " : "", rendered);
		policy_free(p);
		fail();
	}
	assert_string_equal(err.file, "bad.yaml");
	assert_null(strchr(err.message, '\n'));
}

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
	const struct policy_rule *r = p->rules;

	(void)state;
	assert_int_equal(p->nrules, 6);

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
	const char *unit = strstr(self, "unit/test_load.c");
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

static void test_agentguard_file(void **state)
{
	static const struct expected_rule want[] = {
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
	size_t n = sizeof(want) / sizeof(want[0]);
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

/* ---- Files and buffers ----------------------------------------------------------- */

/* Writes size bytes (header, then '#' comment padding) to a new temp file. */
static void make_file(char *path, size_t pathlen, const char *header, size_t size)
{
	size_t hlen = strlen(header);
	char *buf = malloc(size);
	int fd;

	snprintf(path, pathlen, "/tmp/test_load_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_non_null(buf);
	assert_true(size >= hlen + 2);
	memcpy(buf, header, hlen);
	buf[hlen] = '#';
	memset(buf + hlen + 1, 'x', size - hlen - 2);
	buf[size - 1] = '\n';
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
}

static void test_load_file_missing(void **state)
{
	struct policy_error err;

	(void)state;
	assert_null(policy_load_file("/nonexistent/airlock/policy.yaml", &err));
	assert_string_equal(err.file, "/nonexistent/airlock/policy.yaml");
	assert_int_equal(err.line, 0);
	assert_int_equal(err.column, 0);
	assert_non_null(strstr(err.message, "cannot open the policy"));
	assert_non_null(strstr(err.message, strerror(ENOENT)));
}

static void test_load_file_directory(void **state)
{
	struct policy_error err;

	(void)state;
	assert_null(policy_load_file("/tmp", &err));
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.message, "not a regular file (a directory)"));
}

static void test_load_file_valid(void **state)
{
	struct policy_error err;
	char path[64];
	struct policy *p;

	(void)state;
	make_file(path, sizeof(path), V "deny:\n  - command: rm\n", 64);
	p = policy_load_file(path, &err);
	assert_non_null(p);
	assert_string_equal(p->source, path);
	assert_int_equal(p->nrules, 1);
	policy_free(p);
	unlink(path);
}

static void test_load_file_errors_name_the_file(void **state)
{
	struct policy_error err;
	char path[64], rendered[2048], expect[256];

	(void)state;
	make_file(path, sizeof(path), V "bogus: 1\n", 32);
	assert_null(policy_load_file(path, &err));
	policy_error_format(&err, rendered, sizeof(rendered));
	snprintf(expect, sizeof(expect), "%s:2:1: unknown key 'bogus'", path);
	assert_memory_equal(rendered, expect, strlen(expect));
	unlink(path);
}

static void test_load_file_limit(void **state)
{
	struct policy_error err;
	char path[64];
	struct policy *p;

	(void)state;
	make_file(path, sizeof(path), V, POLICY_MAX_FILE_SIZE);
	p = policy_load_file(path, &err);
	assert_non_null(p);
	policy_free(p);
	unlink(path);

	make_file(path, sizeof(path), V, POLICY_MAX_FILE_SIZE + 1);
	assert_null(policy_load_file(path, &err));
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.message, "larger than 1048576 bytes"));
	unlink(path);
}

static void test_load_file_huge_sparse(void **state)
{
	struct policy_error err;
	char path[] = "/tmp/test_load_XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)8 << 30), 0);
	close(fd);
	assert_null(policy_load_file(path, &err));
	assert_non_null(strstr(err.message, "larger than 1048576 bytes"));
	unlink(path);
}

static void test_load_file_device(void **state)
{
	struct policy_error err;
	struct policy *p;

	(void)state;
	/* a device is refused unread: /dev/zero would never end, /dev/tty would wait */
	p = policy_load_file("/dev/null", &err);
	assert_null(p);
	assert_non_null(strstr(err.message, "not a regular file (a character device)"));
}

static void test_buffer_too_large(void **state)
{
	size_t len = POLICY_MAX_FILE_SIZE + 1;
	char *buf = malloc(len);
	struct policy_error err;

	(void)state;
	assert_non_null(buf);
	memset(buf, '#', len);
	memcpy(buf, V, strlen(V));
	assert_null(policy_load_buffer("big.yaml", buf, len, &err));
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.message, "larger than 1048576 bytes"));
	free(buf);
}

static void test_buffer_not_nul_terminated(void **state)
{
	static const char text[] = "version: 1\ndeny: [{command: rm}]\nthis is not YAML: [";
	struct policy_error err;
	struct policy *p;

	(void)state;
	p = policy_load_buffer("slice.yaml", text, strlen("version: 1\ndeny: [{command: rm}]\n"), &err);
	assert_non_null(p);
	assert_int_equal(p->nrules, 1);
	assert_string_equal(p->source, "slice.yaml");
	policy_free(p);
}

static void test_free_null(void **state)
{
	(void)state;
	policy_free(NULL);
}

/* ---- Scale ------------------------------------------------------------------------ */

static void test_ten_thousand_rules(void **state)
{
	static const char *const list_keys[] = {"deny", "ask", "allow"};
	const size_t nrules = 10000, cap = 900 * 1024;
	char *buf = malloc(cap);
	struct policy_error err;
	size_t len = 0;
	struct policy *p;

	(void)state;
	assert_non_null(buf);
	len += (size_t)snprintf(buf + len, cap - len, "version: 1\n");
	for (size_t i = 0; i < nrules; i++) {
		if (i % 4000 == 0)
			len += (size_t)snprintf(buf + len, cap - len, "%s:\n", list_keys[i / 4000]);
		switch (i % 3) {
		case 0:
			len += (size_t)snprintf(buf + len, cap - len,
						"  - command: tool%zu\n    args: \"--x %zu *\"\n", i, i);
			break;
		case 1:
			len += (size_t)snprintf(buf + len, cap - len,
						"  - file: {path: /data/%zu/**, action: [read, write]}\n", i);
			break;
		default:
			len += (size_t)snprintf(buf + len, cap - len,
						"  - network: {destination: \"h%zu.example.com:443\"}\n", i);
		}
		assert_true(len < cap);
	}
	p = policy_load_buffer("big.yaml", buf, len, &err);
	if (!p)
		print_error("%s:%u:%u: %s\n", err.file, err.line, err.column, err.message);
	assert_non_null(p);
	assert_int_equal(p->nrules, nrules);
	for (size_t i = 0; i < nrules; i++) {
		assert_int_equal(p->rules[i].kind, (enum policy_rule_kind)(i % 3));
		assert_int_equal(p->rules[i].list, (enum policy_list)(i / 4000));
	}
	assert_string_equal(p->rules[9999].command, "tool9999");
	assert_string_equal(p->rules[9999].args, "--x 9999 *");
	assert_string_equal(p->rules[9998].destination, "h9998.example.com:443");
	assert_int_equal(p->rules[9997].actions, POLICY_FILE_READ | POLICY_FILE_WRITE);
	policy_free(p);
	free(buf);
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
		cmocka_unit_test(test_load_file_missing),
		cmocka_unit_test(test_load_file_directory),
		cmocka_unit_test(test_load_file_valid),
		cmocka_unit_test(test_load_file_errors_name_the_file),
		cmocka_unit_test(test_load_file_limit),
		cmocka_unit_test(test_load_file_huge_sparse),
		cmocka_unit_test(test_load_file_device),
		cmocka_unit_test(test_buffer_too_large),
		cmocka_unit_test(test_buffer_not_nul_terminated),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_ten_thousand_rules),
	};
	size_t nbad = sizeof(bad_cases) / sizeof(bad_cases[0]);
	struct CMUnitTest *bad = calloc(nbad, sizeof(*bad));
	int failed;

	if (!bad)
		return 1;
	for (size_t i = 0; i < nbad; i++) {
		bad[i].name = bad_cases[i].name;
		bad[i].test_func = test_bad_policy;
		bad[i].initial_state = (void *)&bad_cases[i];
	}
	failed = _cmocka_run_group_tests("malformed policies", bad, nbad, NULL, NULL);
	failed += cmocka_run_group_tests_name("well-formed policies and files", tests, NULL, NULL);
	free(bad);
	return failed ? 1 : 0;
}
