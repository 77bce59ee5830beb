/* load_rules.c — the policy loader's rules: the deny:, ask: and allow: lists, one parser per kind of rule. */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "policy/load_internal.h"
#include "policy/pattern.h"

/* ---- Rules ---------------------------------------------------------------------- */

/* The words of each choice are the vocabulary's own tables (policy/names.c). */
static const struct choice match_choice = {"match mode", policy_match_words,
					   COUNT(policy_match_words)};
static const struct choice action_choice = {"file action", policy_file_action_words,
					    COUNT(policy_file_action_words)};

enum rule_key { RULE_COMMAND, RULE_FILE, RULE_NETWORK, RULE_ARGS, RULE_REASON, RULE_MATCH, RULE_N };
static const char *const rule_keys[RULE_N] = {"command", "file",   "network",
					      "args",    "reason", "match"};

enum file_key { FILE_PATH, FILE_ACTION, FILE_REASON, FILE_MATCH, FILE_N };
static const char *const file_keys[FILE_N] = {"path", "action", "reason", "match"};

enum net_key { NET_DESTINATION, NET_REASON, NET_MATCH, NET_N };
static const char *const net_keys[NET_N] = {"destination", "reason", "match"};

static bool before(struct policy_pos a, struct policy_pos b)
{
	return a.line < b.line || (a.line == b.line && a.column < b.column);
}

/* The rule's one kind key: command, file or network. */
static int rule_kind(struct loader *ld, const struct node *rule, const struct field *f,
		     enum policy_rule_kind *kind)
{
	const struct field *first = NULL, *second = NULL;

	for (int k = RULE_COMMAND; k <= RULE_NETWORK; k++) {
		const struct field *cur = &f[k];
		if (!cur->key)
			continue;
		if (!first || before(cur->key->pos, first->key->pos)) {
			second = first;
			first = cur;
		} else if (!second || before(cur->key->pos, second->key->pos)) {
			second = cur;
		}
	}
	if (!first)
		return pl_fail(ld, rule->pos, "a rule needs one of 'command', 'file' or 'network'");
	if (second)
		return pl_fail(ld, second->key->pos,
			       "a rule must have exactly one of 'command', 'file' or 'network', "
			       "but this one also has '%s' after '%s'",
			       second->key->text, first->key->text);
	*kind = (enum policy_rule_kind)(first - f);
	return 0;
}

/* reason:/match: may sit in the rule or inside file:/network:, not both. */
static int merge_field(struct loader *ld, const struct field *outer, const struct field *inner,
		       const char *inner_name, const struct field **out)
{
	if (outer->key && inner->key) {
		const struct field *later = before(outer->key->pos, inner->key->pos) ? inner : outer;
		return pl_fail(ld, later->key->pos,
			       "'%s' is given both in the rule and inside '%s': give it once",
			       later->key->text, inner_name);
	}
	*out = outer->key ? outer : inner;
	return 0;
}

static int load_actions(struct loader *ld, const struct node *n, unsigned *mask)
{
	int bit;

	if (n->kind != NODE_SEQ) {
		if (pl_get_choice(ld, "'action'", n, &action_choice, &bit))
			return -1;
		*mask = (unsigned)bit;
		return 0;
	}
	if (n->nkids == 0)
		return pl_fail(ld, n->pos, "'action' must name at least one of read, write or exec");
	*mask = 0;
	for (size_t i = 0; i < n->nkids; i++) {
		if (pl_get_choice(ld, "an 'action' item", &n->kids[i], &action_choice, &bit))
			return -1;
		*mask |= (unsigned)bit;
	}
	return 0;
}

static int non_empty(struct loader *ld, const char *label, const struct node *n, char **out)
{
	if (pl_dup_string(ld, label, n, out))
		return -1;
	if (!**out)
		return pl_fail(ld, n->pos, "%s must not be empty", label);
	return 0;
}

static int load_command(struct loader *ld, struct policy_rule *r, const struct field *f)
{
	r->pattern_pos = f[RULE_COMMAND].val->pos;
	if (non_empty(ld, "'command'", f[RULE_COMMAND].val, &r->command))
		return -1;
	if (!f[RULE_ARGS].val)
		return 0;
	r->args_pos = f[RULE_ARGS].val->pos;
	return pl_dup_string(ld, "'args'", f[RULE_ARGS].val, &r->args);
}

/* Loads file: or network: and returns its reason/match fields through inner. */
static int load_file(struct loader *ld, struct policy_rule *r, const struct node *n,
		     struct field inner[2])
{
	struct field f[FILE_N];

	if (n->kind != NODE_MAP)
		return pl_fail(ld, n->pos, "'file' must be a mapping with 'path' and 'action', got %s",
			       pl_describe(n).s);
	if (pl_collect(ld, n, file_keys, FILE_N, f, "'file'"))
		return -1;
	if (!f[FILE_PATH].val)
		return pl_fail(ld, n->pos, "'file' needs a 'path'");
	r->pattern_pos = f[FILE_PATH].val->pos;
	if (non_empty(ld, "'path'", f[FILE_PATH].val, &r->path))
		return -1;
	r->actions = POLICY_FILE_ALL;
	if (f[FILE_ACTION].val && load_actions(ld, f[FILE_ACTION].val, &r->actions))
		return -1;
	inner[0] = f[FILE_REASON];
	inner[1] = f[FILE_MATCH];
	return 0;
}

static int load_network(struct loader *ld, struct policy_rule *r, const struct node *n,
			struct field inner[2])
{
	struct field f[NET_N];

	if (n->kind != NODE_MAP)
		return pl_fail(ld, n->pos, "'network' must be a mapping with 'destination', got %s",
			       pl_describe(n).s);
	if (pl_collect(ld, n, net_keys, NET_N, f, "'network'"))
		return -1;
	if (!f[NET_DESTINATION].val)
		return pl_fail(ld, n->pos, "'network' needs a 'destination'");
	r->pattern_pos = f[NET_DESTINATION].val->pos;
	if (non_empty(ld, "'destination'", f[NET_DESTINATION].val, &r->destination))
		return -1;
	inner[0] = f[NET_REASON];
	inner[1] = f[NET_MATCH];
	return 0;
}

typedef int (*pattern_checker)(const char *, enum policy_match, char *, size_t);

static int check_one(struct loader *ld, pattern_checker check, const char *what, const char *text,
		     enum policy_match m, struct policy_pos pos)
{
	char msg[256] = "";

	if (!text || check(text, m, msg, sizeof(msg)) == 0)
		return 0;
	if (!msg[0])
		return pl_fail(ld, pos, "invalid '%s' pattern", what);
	return pl_fail(ld, pos, "%s", msg);
}

static int check_patterns(struct loader *ld, const struct policy_rule *r)
{
	switch (r->kind) {
	case POLICY_RULE_COMMAND:
		return check_one(ld, pattern_check_command, "command", r->command, r->match,
				 r->pattern_pos) ||
		       check_one(ld, pattern_check_args, "args", r->args, r->match, r->args_pos);
	case POLICY_RULE_FILE:
		return check_one(ld, pattern_check_path, "path", r->path, r->match, r->pattern_pos);
	default:
		return check_one(ld, pattern_check_destination, "destination", r->destination,
				 r->match, r->pattern_pos);
	}
}

static int load_rule_body(struct loader *ld, struct policy_rule *r, const struct node *n)
{
	struct field f[RULE_N], inner[2] = {{NULL, NULL}, {NULL, NULL}};
	const struct field *reason = NULL, *match = NULL;
	int m;

	if (n->kind != NODE_MAP)
		return pl_fail(ld, n->pos,
			       "a rule must be a mapping with 'command', 'file' or 'network', got %s",
			       pl_describe(n).s);
	if (pl_collect(ld, n, rule_keys, RULE_N, f, "a rule") || rule_kind(ld, n, f, &r->kind))
		return -1;
	if (f[RULE_ARGS].key && r->kind != POLICY_RULE_COMMAND)
		return pl_fail(ld, f[RULE_ARGS].key->pos,
			       "'args' is only allowed in command rules, not in a %s rule",
			       r->kind == POLICY_RULE_FILE ? "file" : "network");
	if (r->kind == POLICY_RULE_COMMAND ? load_command(ld, r, f)
	    : r->kind == POLICY_RULE_FILE  ? load_file(ld, r, f[RULE_FILE].val, inner)
					   : load_network(ld, r, f[RULE_NETWORK].val, inner))
		return -1;
	if (merge_field(ld, &f[RULE_REASON], &inner[0], rule_keys[r->kind], &reason) ||
	    merge_field(ld, &f[RULE_MATCH], &inner[1], rule_keys[r->kind], &match))
		return -1;
	if (reason->val && pl_dup_string(ld, "'reason'", reason->val, &r->reason))
		return -1;
	if (match->val && pl_get_choice(ld, "'match'", match->val, &match_choice, &m))
		return -1;
	r->match = match->val ? (enum policy_match)m : POLICY_MATCH_GLOB;
	return check_patterns(ld, r);
}

static int load_rule_list(struct loader *ld, enum policy_list list, const struct field *f)
{
	struct policy *p = ld->p;
	const struct node *n = f->val;

	if (pl_is_null(n))
		return 0;
	if (n->kind != NODE_SEQ)
		return pl_fail(ld, n->pos, "'%s' must be a list of rules, got %s", f->key->text,
			       pl_describe(n).s);
	if (p->nrules + n->nkids > ld->rules_cap) {
		size_t need = p->nrules + n->nkids;
		struct policy_rule *rules =
			grow_array(p->rules, &ld->rules_cap, need, sizeof(*rules), need);
		if (!rules)
			return pl_nomem(ld);
		p->rules = rules;
	}
	for (size_t i = 0; i < n->nkids; i++) {
		struct policy_rule *r = &p->rules[p->nrules++];
		memset(r, 0, sizeof(*r));
		r->list = list;
		r->pos = n->kids[i].pos;
		if (load_rule_body(ld, r, &n->kids[i]))
			return -1;
	}
	return 0;
}

/* The deny:, ask: and allow: lists, in file order. */
int pl_load_rules(struct loader *ld, const struct node *root)
{
	for (size_t i = 0; i + 1 < root->nkids; i += 2) {
		const struct field f = {&root->kids[i], &root->kids[i + 1]};
		for (int l = 0; l < POLICY_LIST_MAX; l++)
			if (pl_node_is(f.key, policy_list_name((enum policy_list)l)) &&
			    load_rule_list(ld, (enum policy_list)l, &f))
				return -1;
	}
	return 0;
}

