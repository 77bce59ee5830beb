/* names.c — names of the policy vocabulary and error rendering. */
#include <stdio.h>

#include "policy/policy.h"

const char *policy_decision_name(enum policy_decision d)
{
	static const char *const names[POLICY_DECISION_MAX] = { "allow", "ask", "deny" };
	return (unsigned)d < POLICY_DECISION_MAX ? names[d] : "?";
}

const char *policy_list_name(enum policy_list l)
{
	static const char *const names[POLICY_LIST_MAX] = { "deny", "ask", "allow" };
	return (unsigned)l < POLICY_LIST_MAX ? names[l] : "?";
}

const char *policy_rule_kind_name(enum policy_rule_kind k)
{
	static const char *const names[POLICY_RULE_KIND_MAX] = { "command", "file", "network" };
	return (unsigned)k < POLICY_RULE_KIND_MAX ? names[k] : "?";
}

const char *policy_match_name(enum policy_match m)
{
	static const char *const names[POLICY_MATCH_MAX] = { "glob", "exact", "prefix", "regex" };
	return (unsigned)m < POLICY_MATCH_MAX ? names[m] : "?";
}

int policy_error_format(const struct policy_error *err, char *buf, size_t size)
{
	if (err->line)
		return snprintf(buf, size, "%s:%u:%u: %s", err->file, err->line, err->column,
				err->message);
	return snprintf(buf, size, "%s: %s", err->file, err->message);
}
