/* test_load.c — unit tests for the YAML policy loader (policy/load.c): malformed policies and their errors; fields in test_load_fields.c, files and scale in test_load_files.c. */
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
	    "allow, sandbox, limits, profile, checkpoint)"),
	BAD("checkpoint_not_map", V "checkpoint: yes\n", 2, 13, "'checkpoint' must be a mapping"),
	BAD("checkpoint_unknown", V "checkpoint:\n  keep_dayz: 3\n", 3, 3,
	    "unknown key 'keep_dayz' in 'checkpoint'"),
	BAD("checkpoint_bool", V "checkpoint:\n  ignored: maybe\n", 3, 12, "'checkpoint.ignored'"),
	BAD("checkpoint_require_off", V "checkpoint:\n  enabled: false\n  require: true\n", 4, 12,
	    "'checkpoint.require' is true but 'checkpoint.enabled' is false"),
	BAD("profile_upper", V "profile: Claude\n", 2, 10,
	    "'profile' must be an agent profile's name (claude, codex, ...), none or auto, got "
	    "'Claude'"),
	BAD("profile_list", V "profile: [claude]\n", 2, 10,
	    "'profile' must be a string, got a list"),

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

int main(void)
{
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
	free(bad);
	return failed ? 1 : 0;
}
