/* test_names.c — the vocabulary's name tables (policy/names.c, core/channel.c): order, distinct names, name and parse agree. */
#include "testutil.h"

#include "core/channel.h"

struct table {
	const char *what;
	const struct policy_word *words;
	size_t n;
	bool bits; /* rows are bits in order (1, 2, 4, ...), not 0, 1, 2, ... */
};

#define TABLE(w, bits) { #w, w, sizeof(w) / sizeof((w)[0]), bits }

static const struct table tables[] = {
	TABLE(policy_decision_words, false),	  TABLE(policy_list_words, false),
	TABLE(policy_rule_kind_words, false),	  TABLE(policy_match_words, false),
	TABLE(policy_action_words, false),	  TABLE(policy_file_action_words, true),
	TABLE(policy_network_mode_words, false),
};

/* Every table: rows in value order, names non-empty, lower case and distinct, parse finds each. */
static void test_tables_invariants(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		const struct table *tb = &tables[t];
		for (size_t i = 0; i < tb->n; i++) {
			const char *name = tb->words[i].name;
			int want = tb->bits ? 1 << i : (int)i;
			if (tb->words[i].value != want)
				fail_msg("%s[%zu] has value %d, not %d", tb->what, i, tb->words[i].value,
					 want);
			assert_non_null(name);
			assert_true(name[0] != '\0');
			for (const char *c = name; *c; c++)
				if (*c < 'a' || *c > 'z')
					fail_msg("%s: name '%s' is not lower case letters", tb->what, name);
			for (size_t j = 0; j < i; j++)
				if (strcmp(tb->words[j].name, name) == 0)
					fail_msg("%s: '%s' twice", tb->what, name);
			assert_int_equal(policy_word_parse(tb->words, tb->n, name), want);
		}
		assert_int_equal(policy_word_parse(tb->words, tb->n, "nonsense"), -1);
		assert_int_equal(policy_word_parse(tb->words, tb->n, ""), -1);
		assert_int_equal(policy_word_parse(tb->words, tb->n, NULL), -1);
	}
	assert_int_equal(POLICY_FILE_ALL, (1u << POLICY_FILE_ACTIONS) - 1);
}

/* The *_name() functions read the tables, and say "?" out of range. */
static void test_names_and_parse_agree(void **state)
{
	(void)state;
	for (int d = 0; d < POLICY_DECISION_MAX; d++) {
		assert_string_equal(policy_decision_name((enum policy_decision)d),
				    policy_decision_words[d].name);
		assert_int_equal(policy_decision_parse(policy_decision_name((enum policy_decision)d)),
				 d);
	}
	assert_string_equal(policy_decision_name(POLICY_DECISION_MAX), "?");
	assert_int_equal(policy_decision_parse("Allow"), -1);
	for (int a = 0; a < POLICY_ACTION_MAX; a++)
		assert_string_equal(policy_action_name((enum policy_action)a),
				    policy_action_words[a].name);
	assert_string_equal(policy_action_name(POLICY_ACTION_MAX), "?");
	assert_string_equal(policy_list_name(POLICY_LIST_MAX), "?");
	assert_string_equal(policy_rule_kind_name(POLICY_RULE_KIND_MAX), "?");
	assert_string_equal(policy_match_name(POLICY_MATCH_MAX), "?");
	assert_string_equal(policy_network_mode_name(POLICY_NETWORK_MODE_MAX), "?");
	assert_string_equal(policy_network_mode_name(POLICY_NETWORK_HOST), "host");
	for (int m = 0; m < POLICY_NETWORK_MODE_MAX; m++)
		assert_int_equal(policy_network_mode_parse(
					 policy_network_mode_name((enum policy_network_mode)m)),
				 m);
	assert_int_equal(policy_network_mode_parse("Proxy"), -1);
	assert_int_equal(policy_network_mode_parse(NULL), -1);

	for (unsigned b = 0; b < POLICY_FILE_ACTIONS; b++) {
		unsigned bit = 1u << b;
		const char *name = policy_file_action_name(bit);
		assert_int_equal(policy_file_action_parse(name), bit);
		/* the `default:` key of a file action has the action's name */
		assert_string_equal(policy_action_name(policy_file_action_kind(bit)), name);
	}
	assert_string_equal(policy_file_action_name(0), "?");
	assert_string_equal(policy_file_action_name(POLICY_FILE_READ | POLICY_FILE_WRITE), "?");
	assert_int_equal(policy_file_action_parse("connect"), 0);
	assert_int_equal(policy_file_action_kind(POLICY_FILE_ALL), POLICY_ACTION_MAX);
}

/* decided_by: the audit log's words, in enum order, and parse inverts name. */
static void test_decided_by(void **state)
{
	static const char *const want[CHANNEL_DECIDED_BY_MAX] = { "policy", "human", "session",
								  "default", "timeout" };
	(void)state;
	for (int i = 0; i < CHANNEL_DECIDED_BY_MAX; i++) {
		const char *name = channel_decided_by_name((enum channel_decided_by)i);
		assert_string_equal(name, want[i]);
		assert_int_equal(channel_decided_by_parse(name), i);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(channel_decided_by_name((enum channel_decided_by)j),
						name);
	}
	assert_string_equal(channel_decided_by_name(CHANNEL_DECIDED_BY_MAX), "?");
	assert_int_equal(channel_decided_by_parse("nobody"), -1);
	assert_int_equal(channel_decided_by_parse(NULL), -1);
}

/* A channel action is a file bit (named as the policy names it), exec or connect. */
static void test_channel_actions(void **state)
{
	(void)state;
	for (unsigned b = 0; b < POLICY_FILE_ACTIONS; b++)
		assert_string_equal(channel_action_name(1u << b), policy_file_action_name(1u << b));
	assert_string_equal(channel_action_name(CHANNEL_ACTION_EXEC), "exec");
	assert_string_equal(channel_action_name(CHANNEL_ACTION_CONNECT), "connect");
	assert_string_equal(channel_action_name(0), "none");
	assert_string_equal(channel_action_name(POLICY_FILE_ALL), "?");
	/* the channel's own actions can never be mistaken for file bits */
	assert_int_equal(CHANNEL_ACTION_EXEC & POLICY_FILE_ALL, 0);
	assert_int_equal(CHANNEL_ACTION_CONNECT & POLICY_FILE_ALL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_invariants),
		cmocka_unit_test(test_names_and_parse_agree),
		cmocka_unit_test(test_decided_by),
		cmocka_unit_test(test_channel_actions),
	};
	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
