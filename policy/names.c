/* names.c — the names of the policy vocabulary (one table each) and error rendering. */
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const struct policy_word policy_decision_words[POLICY_DECISION_MAX] = {
	{ "allow", POLICY_ALLOW },
	{ "ask", POLICY_ASK },
	{ "deny", POLICY_DENY },
};

const struct policy_word policy_list_words[POLICY_LIST_MAX] = {
	{ "deny", POLICY_LIST_DENY },
	{ "ask", POLICY_LIST_ASK },
	{ "allow", POLICY_LIST_ALLOW },
};

const struct policy_word policy_rule_kind_words[POLICY_RULE_KIND_MAX] = {
	{ "command", POLICY_RULE_COMMAND },
	{ "file", POLICY_RULE_FILE },
	{ "network", POLICY_RULE_NETWORK },
};

const struct policy_word policy_match_words[POLICY_MATCH_MAX] = {
	{ "glob", POLICY_MATCH_GLOB },
	{ "exact", POLICY_MATCH_EXACT },
	{ "prefix", POLICY_MATCH_PREFIX },
	{ "regex", POLICY_MATCH_REGEX },
};

const struct policy_word policy_action_words[POLICY_ACTION_MAX] = {
	{ "exec", POLICY_ACTION_EXEC },
	{ "read", POLICY_ACTION_READ },
	{ "write", POLICY_ACTION_WRITE },
	{ "connect", POLICY_ACTION_CONNECT },
};

const struct policy_word policy_file_action_words[POLICY_FILE_ACTIONS] = {
	{ "read", POLICY_FILE_READ },
	{ "write", POLICY_FILE_WRITE },
	{ "exec", POLICY_FILE_EXEC },
};

const struct policy_word policy_network_mode_words[POLICY_NETWORK_MODE_MAX] = {
	{ "proxy", POLICY_NETWORK_PROXY },
	{ "none", POLICY_NETWORK_NONE },
	{ "host", POLICY_NETWORK_HOST },
};

/* Row v of a table in value order, or "?". */
static const char *name_at(const struct policy_word *words, size_t n, unsigned v)
{
	return v < n ? words[v].name : "?";
}

const char *policy_decision_name(enum policy_decision d)
{
	return name_at(policy_decision_words, COUNT(policy_decision_words), (unsigned)d);
}

const char *policy_list_name(enum policy_list l)
{
	return name_at(policy_list_words, COUNT(policy_list_words), (unsigned)l);
}

const char *policy_rule_kind_name(enum policy_rule_kind k)
{
	return name_at(policy_rule_kind_words, COUNT(policy_rule_kind_words), (unsigned)k);
}

const char *policy_match_name(enum policy_match m)
{
	return name_at(policy_match_words, COUNT(policy_match_words), (unsigned)m);
}

const char *policy_action_name(enum policy_action a)
{
	return name_at(policy_action_words, COUNT(policy_action_words), (unsigned)a);
}

const char *policy_network_mode_name(enum policy_network_mode m)
{
	return name_at(policy_network_mode_words, COUNT(policy_network_mode_words), (unsigned)m);
}

const char *policy_file_action_name(unsigned action)
{
	for (size_t i = 0; i < COUNT(policy_file_action_words); i++)
		if ((unsigned)policy_file_action_words[i].value == action)
			return policy_file_action_words[i].name;
	return "?";
}

int policy_word_parse(const struct policy_word *words, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(words[i].name, s) == 0)
			return words[i].value;
	return -1;
}

int policy_decision_parse(const char *s)
{
	return policy_word_parse(policy_decision_words, COUNT(policy_decision_words), s);
}

unsigned policy_file_action_parse(const char *s)
{
	int v = policy_word_parse(policy_file_action_words, COUNT(policy_file_action_words), s);
	return v < 0 ? 0 : (unsigned)v;
}

int policy_network_mode_parse(const char *s)
{
	return policy_word_parse(policy_network_mode_words, COUNT(policy_network_mode_words), s);
}

int policy_error_format(const struct policy_error *err, char *buf, size_t size)
{
	if (err->line)
		return snprintf(buf, size, "%s:%u:%u: %s", err->file, err->line, err->column,
				err->message);
	return snprintf(buf, size, "%s: %s", err->file, err->message);
}
