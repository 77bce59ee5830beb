/* load.c — reads a YAML policy into a validated struct policy with libyaml's event parser. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "policy/pattern.h"
#include "policy/policy.h"

/* ---- Errors and text ----------------------------------------------------- */

struct loader {
	const char *buf;
	size_t len;
	struct policy_error *err;
	struct policy *p;
	size_t rules_cap;
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct policy_pos no_pos = {0, 0};

__attribute__((format(printf, 3, 4))) static int fail_at(struct loader *ld, struct policy_pos pos,
							 const char *fmt, ...)
{
	va_list ap;

	ld->err->line = pos.line;
	ld->err->column = pos.column;
	va_start(ap, fmt);
	vsnprintf(ld->err->message, sizeof(ld->err->message), fmt, ap);
	va_end(ap);
	return -1;
}

static int fail_nomem(struct loader *ld)
{
	return fail_at(ld, no_pos, "out of memory");
}

/* User text shortened and made printable for a one-line message. */
struct shown {
	char s[80];
};

#define SHOWN_MAX 60

static struct shown show(const char *text, size_t len)
{
	struct shown out;
	size_t n = len < SHOWN_MAX ? len : SHOWN_MAX, o = 0;

	while (n < len && n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
		n--;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		out.s[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (n < len) {
		memcpy(out.s + o, "...", 3);
		o += 3;
	}
	out.s[o] = '\0';
	return out;
}

/* Position of byte offset off in the buffer, counted as libyaml does (characters). */
static struct policy_pos offset_pos(const struct loader *ld, size_t off)
{
	struct policy_pos pos = {1, 1};

	for (size_t i = 0; i < off && i < ld->len; i++) {
		unsigned char c = (unsigned char)ld->buf[i];
		if (c == '\n') {
			pos.line++;
			pos.column = 1;
		} else if ((c & 0xC0) != 0x80) {
			pos.column++;
		}
	}
	return pos;
}

static struct policy_pos mark_pos(yaml_mark_t m)
{
	struct policy_pos pos = {(unsigned)m.line + 1, (unsigned)m.column + 1};
	return pos;
}

/* ---- The document tree ---------------------------------------------------- */

enum node_kind { NODE_SCALAR, NODE_SEQ, NODE_MAP };

struct node {
	enum node_kind kind;
	bool plain;
	struct policy_pos pos;
	char *text; /* SCALAR: NUL-terminated copy of len bytes */
	size_t len;
	struct node *kids; /* SEQ: items; MAP: key, value, key, value, ... */
	size_t nkids;
	size_t cap;
};

static void node_free(struct node *n)
{
	free(n->text);
	for (size_t i = 0; i < n->nkids; i++)
		node_free(&n->kids[i]);
	free(n->kids);
}

static int node_append(struct node *parent, const struct node *child)
{
	if (parent->nkids == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 4;
		struct node *kids = realloc(parent->kids, cap * sizeof(*kids));
		if (!kids)
			return -1;
		parent->kids = kids;
		parent->cap = cap;
	}
	parent->kids[parent->nkids++] = *child;
	return 0;
}

static bool node_is(const struct node *n, const char *word)
{
	size_t len = strlen(word);
	return n->kind == NODE_SCALAR && n->len == len && memcmp(n->text, word, len) == 0;
}

static struct shown node_text(const struct node *n)
{
	return show(n->text, n->len);
}

static const char *const null_words[] = {"", "~", "null", "Null", "NULL"};

static bool is_null(const struct node *n)
{
	if (n->kind != NODE_SCALAR || !n->plain)
		return false;
	for (size_t i = 0; i < COUNT(null_words); i++)
		if (node_is(n, null_words[i]))
			return true;
	return false;
}

/* YAML 1.1's booleans (yaml.org/type/bool.html): a plain scalar spelled so is never a string. */
static const struct policy_word bool_words[] = {
	{"y", 1},     {"Y", 1},     {"yes", 1},  {"Yes", 1},  {"YES", 1},   {"true", 1},
	{"True", 1},  {"TRUE", 1},  {"on", 1},   {"On", 1},   {"ON", 1},    {"n", 0},
	{"N", 0},     {"no", 0},    {"No", 0},   {"NO", 0},   {"false", 0}, {"False", 0},
	{"FALSE", 0}, {"off", 0},   {"Off", 0},  {"OFF", 0},
};

static const struct policy_word *find_word(const struct node *n, const struct policy_word *words, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (node_is(n, words[i].name))
			return &words[i];
	return NULL;
}

static const struct policy_word *bool_word(const struct node *n)
{
	return find_word(n, bool_words, COUNT(bool_words));
}

/* "a mapping", "a list", "null" or the scalar quoted, for "got ..." messages. */
static struct shown describe(const struct node *n)
{
	struct shown out;
	const char *fixed = n->kind == NODE_MAP ? "a mapping" : n->kind == NODE_SEQ ? "a list" : "null";

	if (n->kind == NODE_SCALAR && !is_null(n)) {
		struct shown t = node_text(n);
		size_t len = strlen(t.s);
		out.s[0] = '\'';
		memcpy(out.s + 1, t.s, len);
		memcpy(out.s + 1 + len, "'", 2);
	} else {
		memcpy(out.s, fixed, strlen(fixed) + 1);
	}
	return out;
}

/* ---- Building the tree from libyaml events --------------------------------- */

struct builder {
	struct loader *ld;
	struct node stack[POLICY_MAX_DEPTH];
	size_t depth;
	struct node root;
	bool have_root;
	unsigned ndocs;
};

static int key_order(const void *a, const void *b)
{
	const struct node *x = *(const struct node *const *)a;
	const struct node *y = *(const struct node *const *)b;
	int c = memcmp(x->text, y->text, x->len < y->len ? x->len : y->len);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (x > y) - (x < y);
}

static bool same_key(const struct node *x, const struct node *y)
{
	return x->len == y->len && memcmp(x->text, y->text, x->len) == 0;
}

/* Reports the earliest repeated key of a finished mapping. */
static int check_duplicates(struct loader *ld, const struct node *map)
{
	const struct node *local[16], **keys = local, *dup = NULL, *first = NULL;
	size_t n = map->nkids / 2;

	if (n < 2)
		return 0;
	if (n > COUNT(local) && !(keys = malloc(n * sizeof(*keys))))
		return fail_nomem(ld);
	for (size_t i = 0; i < n; i++)
		keys[i] = &map->kids[2 * i];
	qsort(keys, n, sizeof(*keys), key_order);
	for (size_t i = 1; i < n; i++) {
		if (same_key(keys[i - 1], keys[i]) && (i < 2 || !same_key(keys[i - 2], keys[i])) &&
		    (!dup || keys[i] < dup)) {
			dup = keys[i];
			first = keys[i - 1];
		}
	}
	if (keys != local)
		free(keys);
	if (!dup)
		return 0;
	return fail_at(ld, dup->pos, "duplicate key '%s' (first at line %u)", node_text(dup).s,
		       first->pos.line);
}

static int check_properties(struct loader *ld, struct policy_pos pos, const yaml_char_t *anchor,
			    const yaml_char_t *tag)
{
	if (anchor)
		return fail_at(ld, pos, "YAML anchors and aliases are not allowed");
	if (tag)
		return fail_at(ld, pos, "explicit YAML tags are not allowed (found %s)",
			       show((const char *)tag, strlen((const char *)tag)).s);
	return 0;
}

static int add_node(struct builder *b, struct node *n)
{
	if (b->depth == 0) {
		b->root = *n;
		b->have_root = true;
		return 0;
	}
	if (node_append(&b->stack[b->depth - 1], n)) {
		node_free(n);
		return fail_nomem(b->ld);
	}
	return 0;
}

static int add_scalar(struct builder *b, struct policy_pos pos, const yaml_event_t *ev)
{
	struct node n = {.kind = NODE_SCALAR, .pos = pos, .len = ev->data.scalar.length};

	n.plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n.text = malloc(n.len + 1);
	if (!n.text)
		return fail_nomem(b->ld);
	memcpy(n.text, ev->data.scalar.value, n.len);
	n.text[n.len] = '\0';
	return add_node(b, &n);
}

static int push_collection(struct builder *b, enum node_kind kind, struct policy_pos pos)
{
	const struct node *parent = b->depth ? &b->stack[b->depth - 1] : NULL;

	if (parent && parent->kind == NODE_MAP && parent->nkids % 2 == 0)
		return fail_at(b->ld, pos, "mapping keys must be strings, not %s",
			       kind == NODE_MAP ? "mappings" : "lists");
	if (b->depth == POLICY_MAX_DEPTH)
		return fail_at(b->ld, pos, "YAML nesting is deeper than %u levels", POLICY_MAX_DEPTH);
	memset(&b->stack[b->depth], 0, sizeof(b->stack[0]));
	b->stack[b->depth].kind = kind;
	b->stack[b->depth].pos = pos;
	b->depth++;
	return 0;
}

static int pop_collection(struct builder *b)
{
	struct node n = b->stack[--b->depth];

	if (n.kind == NODE_MAP && check_duplicates(b->ld, &n)) {
		node_free(&n);
		return -1;
	}
	return add_node(b, &n);
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
	struct policy_pos pos = mark_pos(ev->start_mark);

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->ndocs++)
			return fail_at(b->ld, pos, "a policy must be a single YAML document");
		return 0;
	case YAML_ALIAS_EVENT:
		return fail_at(b->ld, pos, "YAML anchors and aliases are not allowed");
	case YAML_SCALAR_EVENT:
		if (check_properties(b->ld, pos, ev->data.scalar.anchor, ev->data.scalar.tag))
			return -1;
		return add_scalar(b, pos, ev);
	case YAML_SEQUENCE_START_EVENT:
		if (check_properties(b->ld, pos, ev->data.sequence_start.anchor,
				     ev->data.sequence_start.tag))
			return -1;
		return push_collection(b, NODE_SEQ, pos);
	case YAML_MAPPING_START_EVENT:
		if (check_properties(b->ld, pos, ev->data.mapping_start.anchor,
				     ev->data.mapping_start.tag))
			return -1;
		return push_collection(b, NODE_MAP, pos);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return pop_collection(b);
	default:
		return 0;
	}
}

static int yaml_fail(struct loader *ld, const yaml_parser_t *ps)
{
	const char *problem = ps->problem ? ps->problem : "unknown error";

	if (ps->error == YAML_MEMORY_ERROR)
		return fail_nomem(ld);
	if (ps->error == YAML_READER_ERROR)
		return fail_at(ld, offset_pos(ld, ps->problem_offset), "invalid YAML input: %s",
			       problem);
	if (ps->context)
		return fail_at(ld, mark_pos(ps->problem_mark), "YAML syntax error: %s (%s at line %u)",
			       problem, ps->context, (unsigned)ps->context_mark.line + 1);
	return fail_at(ld, mark_pos(ps->problem_mark), "YAML syntax error: %s", problem);
}

/* Parses the whole buffer into *root; *have_root is false for a stream without a document. */
static int build_tree(struct loader *ld, struct node *root, bool *have_root)
{
	struct builder *b = calloc(1, sizeof(*b));
	yaml_parser_t parser;
	bool done = false;
	int rc = 0;

	if (!b)
		return fail_nomem(ld);
	b->ld = ld;
	if (!yaml_parser_initialize(&parser)) {
		free(b);
		return fail_nomem(ld);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)ld->buf, ld->len);
	while (!done && rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = yaml_fail(ld, &parser);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	while (b->depth)
		node_free(&b->stack[--b->depth]);
	if (rc && b->have_root)
		node_free(&b->root);
	*root = b->root;
	*have_root = rc == 0 && b->have_root;
	free(b);
	return rc;
}

/* ---- Typed values ----------------------------------------------------------- */

struct field {
	const struct node *key;
	const struct node *val;
};

static void join_names(char *out, size_t size, const char *const *names, size_t n, const char *last)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && o < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? last : ", ";
		int w = snprintf(out + o, size - o, "%s%s", sep, names[i]);
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

static void join_words(char *out, size_t size, const struct policy_word *words, size_t n)
{
	const char *names[8];

	for (size_t i = 0; i < n && i < 8; i++)
		names[i] = words[i].name;
	join_names(out, size, names, n < 8 ? n : 8, " or ");
}

/* Fills out[i] with the key and value named names[i]; any other key is an error. */
static int collect(struct loader *ld, const struct node *map, const char *const *names, size_t n,
		   struct field *out, const char *where)
{
	memset(out, 0, n * sizeof(*out));
	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct node *key = &map->kids[i];
		size_t j = 0;
		while (j < n && !node_is(key, names[j]))
			j++;
		if (j == n) {
			char allowed[256];
			join_names(allowed, sizeof(allowed), names, n, ", ");
			return fail_at(ld, key->pos, "unknown key '%s' in %s (allowed: %s)",
				       node_text(key).s, where, allowed);
		}
		out[j].key = key;
		out[j].val = &map->kids[i + 1];
	}
	return 0;
}

static const struct node *map_get(const struct node *map, const char *name)
{
	for (size_t i = 0; i + 1 < map->nkids; i += 2)
		if (node_is(&map->kids[i], name))
			return &map->kids[i + 1];
	return NULL;
}

static int get_string(struct loader *ld, const char *label, const struct node *n, const char **out)
{
	if (n->kind != NODE_SCALAR)
		return fail_at(ld, n->pos, "%s must be a string, got %s", label, describe(n).s);
	if (n->plain && n->len == 0)
		return fail_at(ld, n->pos,
			       "%s must be a string, but an empty value is a YAML 1.1 null here: "
			       "quote it (\"\")",
			       label);
	if (is_null(n))
		return fail_at(ld, n->pos,
			       "%s must be a string, but %s is a YAML 1.1 null here: quote it (\"%s\")",
			       label, n->text, n->text);
	if (n->plain && bool_word(n))
		return fail_at(ld, n->pos,
			       "%s must be a string, but %s is a YAML 1.1 boolean here: quote it (\"%s\")",
			       label, n->text, n->text);
	if (memchr(n->text, '\0', n->len))
		return fail_at(ld, n->pos, "%s must not contain a NUL character", label);
	*out = n->text;
	return 0;
}

static int dup_string(struct loader *ld, const char *label, const struct node *n, char **out)
{
	const char *s = NULL;

	if (get_string(ld, label, n, &s))
		return -1;
	if (!(*out = strdup(s)))
		return fail_nomem(ld);
	return 0;
}

struct choice {
	const char *what; /* "decision", "match mode", ... */
	const struct policy_word *words;
	size_t n;
};

static int get_choice(struct loader *ld, const char *label, const struct node *n,
		      const struct choice *c, int *out)
{
	char expected[128];
	const struct policy_word *w;

	join_words(expected, sizeof(expected), c->words, c->n);
	if (n->kind != NODE_SCALAR || is_null(n))
		return fail_at(ld, n->pos, "%s must be one of %s, got %s", label, expected,
			       describe(n).s);
	if (!(w = find_word(n, c->words, c->n)))
		return fail_at(ld, n->pos, "unknown %s '%s' for %s (expected %s)", c->what,
			       node_text(n).s, label, expected);
	*out = w->value;
	return 0;
}

static int get_bool(struct loader *ld, const char *label, const struct node *n, bool *out)
{
	const struct policy_word *w = n->kind == NODE_SCALAR ? bool_word(n) : NULL;

	if (w && !n->plain)
		return fail_at(ld, n->pos,
			       "%s must be true or false, got the quoted string \"%s\": remove the quotes",
			       label, node_text(n).s);
	if (!w)
		return fail_at(ld, n->pos, "%s must be true or false, got %s", label, describe(n).s);
	*out = w->value != 0;
	return 0;
}

static bool all_digits(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* A plain, unquoted decimal integer >= 0. */
static int get_uint(struct loader *ld, const char *label, const struct node *n, uint64_t *out)
{
	uint64_t v = 0;

	if (n->kind == NODE_SCALAR && !n->plain)
		return fail_at(ld, n->pos,
			       "%s must be an integer, got the quoted string \"%s\": remove the quotes",
			       label, node_text(n).s);
	if (n->kind != NODE_SCALAR || !all_digits(n->text, n->len))
		return fail_at(ld, n->pos, "%s must be a positive integer, got %s", label,
			       describe(n).s);
	if (n->len > 1 && n->text[0] == '0')
		return fail_at(ld, n->pos,
			       "%s must be a decimal integer without leading zeros, got %s "
			       "(YAML 1.1 reads it as octal)",
			       label, node_text(n).s);
	for (size_t i = 0; i < n->len; i++) {
		unsigned d = (unsigned)(n->text[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return fail_at(ld, n->pos, "%s is too large (at most %llu)", label,
				       (unsigned long long)UINT64_MAX);
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int get_positive(struct loader *ld, const char *label, const struct node *n, uint64_t max,
			uint64_t *out)
{
	if (get_uint(ld, label, n, out))
		return -1;
	if (*out == 0)
		return fail_at(ld, n->pos, "%s must be a positive integer, got 0", label);
	if (*out > max)
		return fail_at(ld, n->pos, "%s must be at most %llu, got %llu", label,
			       (unsigned long long)max, (unsigned long long)*out);
	return 0;
}

/* A plain decimal number > 0: digits with an optional fraction, e.g. 2, 0.5, .5, 1.5. */
static int get_positive_number(struct loader *ld, const char *label, const struct node *n,
			       double *out)
{
	uint64_t mantissa = 0;
	unsigned digits = 0, fraction = 0;
	double scale;
	bool dot = false, ok = n->kind == NODE_SCALAR && n->plain && n->len > 0;

	for (size_t i = 0; ok && i < n->len; i++) {
		char c = n->text[i];
		if (c == '.' && !dot) {
			dot = true;
		} else if (c >= '0' && c <= '9') {
			if (mantissa == 0 && c == '0' && !dot)
				continue;
			if (++digits > 18)
				return fail_at(ld, n->pos, "%s has too many digits", label);
			mantissa = mantissa * 10 + (unsigned)(c - '0');
			fraction += dot;
		} else {
			ok = false;
		}
	}
	ok = ok && !node_is(n, ".");
	if (!ok)
		return fail_at(ld, n->pos, "%s must be a positive number, got %s", label,
			       describe(n).s);
	for (scale = 1; fraction; fraction--)
		scale *= 10;
	*out = (double)mantissa / scale;
	if (*out <= 0)
		return fail_at(ld, n->pos, "%s must be greater than 0, got %s", label,
			       node_text(n).s);
	return 0;
}

/* ---- Rules ---------------------------------------------------------------------- */

/* The words of each choice are the vocabulary's own tables (policy/names.c). */
static const struct choice decision_choice = {"decision", policy_decision_words,
					      COUNT(policy_decision_words)};
static const struct choice match_choice = {"match mode", policy_match_words,
					   COUNT(policy_match_words)};
static const struct choice action_choice = {"file action", policy_file_action_words,
					    COUNT(policy_file_action_words)};
static const struct choice network_choice = {"network mode", policy_network_mode_words,
					     COUNT(policy_network_mode_words)};

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
		return fail_at(ld, rule->pos, "a rule needs one of 'command', 'file' or 'network'");
	if (second)
		return fail_at(ld, second->key->pos,
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
		return fail_at(ld, later->key->pos,
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
		if (get_choice(ld, "'action'", n, &action_choice, &bit))
			return -1;
		*mask = (unsigned)bit;
		return 0;
	}
	if (n->nkids == 0)
		return fail_at(ld, n->pos, "'action' must name at least one of read, write or exec");
	*mask = 0;
	for (size_t i = 0; i < n->nkids; i++) {
		if (get_choice(ld, "an 'action' item", &n->kids[i], &action_choice, &bit))
			return -1;
		*mask |= (unsigned)bit;
	}
	return 0;
}

static int non_empty(struct loader *ld, const char *label, const struct node *n, char **out)
{
	if (dup_string(ld, label, n, out))
		return -1;
	if (!**out)
		return fail_at(ld, n->pos, "%s must not be empty", label);
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
	return dup_string(ld, "'args'", f[RULE_ARGS].val, &r->args);
}

/* Loads file: or network: and returns its reason/match fields through inner. */
static int load_file(struct loader *ld, struct policy_rule *r, const struct node *n,
		     struct field inner[2])
{
	struct field f[FILE_N];

	if (n->kind != NODE_MAP)
		return fail_at(ld, n->pos, "'file' must be a mapping with 'path' and 'action', got %s",
			       describe(n).s);
	if (collect(ld, n, file_keys, FILE_N, f, "'file'"))
		return -1;
	if (!f[FILE_PATH].val)
		return fail_at(ld, n->pos, "'file' needs a 'path'");
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
		return fail_at(ld, n->pos, "'network' must be a mapping with 'destination', got %s",
			       describe(n).s);
	if (collect(ld, n, net_keys, NET_N, f, "'network'"))
		return -1;
	if (!f[NET_DESTINATION].val)
		return fail_at(ld, n->pos, "'network' needs a 'destination'");
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
		return fail_at(ld, pos, "invalid '%s' pattern", what);
	return fail_at(ld, pos, "%s", msg);
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
		return fail_at(ld, n->pos,
			       "a rule must be a mapping with 'command', 'file' or 'network', got %s",
			       describe(n).s);
	if (collect(ld, n, rule_keys, RULE_N, f, "a rule") || rule_kind(ld, n, f, &r->kind))
		return -1;
	if (f[RULE_ARGS].key && r->kind != POLICY_RULE_COMMAND)
		return fail_at(ld, f[RULE_ARGS].key->pos,
			       "'args' is only allowed in command rules, not in a %s rule",
			       r->kind == POLICY_RULE_FILE ? "file" : "network");
	if (r->kind == POLICY_RULE_COMMAND ? load_command(ld, r, f)
	    : r->kind == POLICY_RULE_FILE  ? load_file(ld, r, f[RULE_FILE].val, inner)
					   : load_network(ld, r, f[RULE_NETWORK].val, inner))
		return -1;
	if (merge_field(ld, &f[RULE_REASON], &inner[0], rule_keys[r->kind], &reason) ||
	    merge_field(ld, &f[RULE_MATCH], &inner[1], rule_keys[r->kind], &match))
		return -1;
	if (reason->val && dup_string(ld, "'reason'", reason->val, &r->reason))
		return -1;
	if (match->val && get_choice(ld, "'match'", match->val, &match_choice, &m))
		return -1;
	r->match = match->val ? (enum policy_match)m : POLICY_MATCH_GLOB;
	return check_patterns(ld, r);
}

static int load_rule_list(struct loader *ld, enum policy_list list, const struct field *f)
{
	struct policy *p = ld->p;
	const struct node *n = f->val;

	if (is_null(n))
		return 0;
	if (n->kind != NODE_SEQ)
		return fail_at(ld, n->pos, "'%s' must be a list of rules, got %s", f->key->text,
			       describe(n).s);
	if (p->nrules + n->nkids > ld->rules_cap) {
		size_t cap = ld->rules_cap * 2 > p->nrules + n->nkids ? ld->rules_cap * 2
								      : p->nrules + n->nkids;
		struct policy_rule *rules = realloc(p->rules, cap * sizeof(*rules));
		if (!rules)
			return fail_nomem(ld);
		p->rules = rules;
		ld->rules_cap = cap;
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

/* ---- Sections --------------------------------------------------------------------- */

enum top_key {
	TOP_VERSION,
	TOP_DEFAULT,
	TOP_ASK_TIMEOUT,
	TOP_DENY,
	TOP_ASK,
	TOP_ALLOW,
	TOP_SANDBOX,
	TOP_LIMITS,
	TOP_N
};
static const char *const top_keys[TOP_N] = {"version", "default", "ask_timeout", "deny",
					    "ask",     "allow",   "sandbox",     "limits"};


static int load_default(struct loader *ld, const struct node *n)
{
	const char *keys[POLICY_ACTION_MAX];
	struct field f[POLICY_ACTION_MAX];
	int d;

	for (int a = 0; a < POLICY_ACTION_MAX; a++)
		keys[a] = policy_action_name((enum policy_action)a);

	if (n->kind == NODE_SCALAR && !is_null(n)) {
		if (get_choice(ld, "'default'", n, &decision_choice, &d))
			return -1;
		ld->p->defaults[POLICY_ACTION_EXEC] = (enum policy_decision)d;
		ld->p->defaults[POLICY_ACTION_WRITE] = (enum policy_decision)d;
		ld->p->defaults[POLICY_ACTION_CONNECT] = (enum policy_decision)d;
		return 0;
	}
	if (n->kind != NODE_MAP)
		return fail_at(ld, n->pos,
			       "'default' must be allow, ask or deny, or a mapping of exec, read, "
			       "write and connect to decisions, got %s",
			       describe(n).s);
	if (collect(ld, n, keys, POLICY_ACTION_MAX, f, "'default'"))
		return -1;
	for (int a = 0; a < POLICY_ACTION_MAX; a++) {
		char label[32];
		if (!f[a].val)
			continue;
		snprintf(label, sizeof(label), "'default.%s'", keys[a]);
		if (get_choice(ld, label, f[a].val, &decision_choice, &d))
			return -1;
		ld->p->defaults[a] = (enum policy_decision)d;
	}
	return 0;
}

static bool valid_env_name(const char *s, bool allow_star)
{
	size_t i = 0;

	if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (i = 1; s[i]; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			break;
	}
	return s[i] == '\0' || (allow_star && s[i] == '*' && s[i + 1] == '\0');
}

enum list_item { ITEM_PATH, ITEM_ENV_PATTERN };

static int check_item(struct loader *ld, const char *label, const struct node *n, const char *s,
		      enum list_item what)
{
	if (what == ITEM_PATH && !*s)
		return fail_at(ld, n->pos, "%s must not contain empty paths", label);
	if (what == ITEM_ENV_PATTERN && !valid_env_name(s, true))
		return fail_at(ld, n->pos,
			       "invalid name '%s' in %s: a variable name ([A-Za-z_][A-Za-z0-9_]*), "
			       "optionally ending in '*'",
			       node_text(n).s, label);
	return 0;
}

static int load_string_list(struct loader *ld, const char *label, const struct node *n,
			    enum list_item what, char ***out, size_t *count)
{
	char item_label[64];

	if (is_null(n))
		return 0;
	if (n->kind != NODE_SEQ)
		return fail_at(ld, n->pos, "%s must be a list of strings, got %s", label,
			       describe(n).s);
	if (n->nkids && !(*out = calloc(n->nkids, sizeof(**out))))
		return fail_nomem(ld);
	*count = n->nkids;
	snprintf(item_label, sizeof(item_label), "an item of %s", label);
	for (size_t i = 0; i < n->nkids; i++) {
		if (dup_string(ld, item_label, &n->kids[i], &(*out)[i]) ||
		    check_item(ld, label, &n->kids[i], (*out)[i], what))
			return -1;
	}
	return 0;
}

static const char *const builtin_passthrough[] = {"HOME", "USER", "LOGNAME",   "TERM", "LANG",
						  "LC_*", "TZ",   "COLORTERM", "PATH"};

static int default_passthrough(struct loader *ld)
{
	struct policy_sandbox *sb = &ld->p->sandbox;
	size_t n = COUNT(builtin_passthrough);

	if (!(sb->env_passthrough = calloc(n, sizeof(char *))))
		return fail_nomem(ld);
	sb->nenv_passthrough = n;
	for (size_t i = 0; i < n; i++)
		if (!(sb->env_passthrough[i] = strdup(builtin_passthrough[i])))
			return fail_nomem(ld);
	return 0;
}

static int load_env(struct loader *ld, const struct node *n)
{
	struct policy_sandbox *sb = &ld->p->sandbox;
	size_t count;

	if (is_null(n))
		return 0;
	if (n->kind != NODE_MAP)
		return fail_at(ld, n->pos,
			       "'sandbox.env' must be a mapping of variable names to values, got %s",
			       describe(n).s);
	count = n->nkids / 2;
	if (count && !(sb->env = calloc(count, sizeof(*sb->env))))
		return fail_nomem(ld);
	sb->nenv = count;
	for (size_t i = 0; i < count; i++) {
		const struct node *key = &n->kids[2 * i];
		char label[128];
		if (dup_string(ld, "a 'sandbox.env' name", key, &sb->env[i].name))
			return -1;
		if (!valid_env_name(sb->env[i].name, false))
			return fail_at(ld, key->pos,
				       "invalid environment variable name '%s' in 'sandbox.env' "
				       "(expected [A-Za-z_][A-Za-z0-9_]*)",
				       node_text(key).s);
		snprintf(label, sizeof(label), "'sandbox.env.%s'", node_text(key).s);
		if (dup_string(ld, label, &n->kids[2 * i + 1], &sb->env[i].value))
			return -1;
	}
	return 0;
}

enum sandbox_key { SB_READ, SB_WRITE, SB_NETWORK, SB_PROCESS_SPAWN, SB_ENV, SB_PASSTHROUGH, SB_N };
static const char *const sandbox_keys[SB_N] = {"read", "write", "network", "process_spawn",
					       "env",  "env_passthrough"};

/* n is NULL when the policy has no sandbox: section. */
static int load_sandbox(struct loader *ld, const struct node *n)
{
	struct policy_sandbox *sb = &ld->p->sandbox;
	struct field f[SB_N];
	int mode;

	if (!n || is_null(n))
		return default_passthrough(ld);
	if (n->kind != NODE_MAP)
		return fail_at(ld, n->pos, "'sandbox' must be a mapping, got %s", describe(n).s);
	if (collect(ld, n, sandbox_keys, SB_N, f, "'sandbox'"))
		return -1;
	if (f[SB_READ].val && load_string_list(ld, "'sandbox.read'", f[SB_READ].val, ITEM_PATH,
					       &sb->read, &sb->nread))
		return -1;
	if (f[SB_WRITE].val && load_string_list(ld, "'sandbox.write'", f[SB_WRITE].val, ITEM_PATH,
						&sb->write, &sb->nwrite))
		return -1;
	if (f[SB_NETWORK].val) {
		if (get_choice(ld, "'sandbox.network'", f[SB_NETWORK].val, &network_choice, &mode))
			return -1;
		sb->network = (enum policy_network_mode)mode;
	}
	if (f[SB_PROCESS_SPAWN].val &&
	    get_bool(ld, "'sandbox.process_spawn'", f[SB_PROCESS_SPAWN].val, &sb->process_spawn))
		return -1;
	if (f[SB_ENV].val && load_env(ld, f[SB_ENV].val))
		return -1;
	if (f[SB_PASSTHROUGH].val)
		return load_string_list(ld, "'sandbox.env_passthrough'", f[SB_PASSTHROUGH].val,
					ITEM_ENV_PATTERN, &sb->env_passthrough,
					&sb->nenv_passthrough);
	return default_passthrough(ld);
}

enum limit_key {
	LIM_CPU_CORES,
	LIM_MEMORY_MB,
	LIM_DISK_MB,
	LIM_MAX_PROCESSES,
	LIM_EXEC_TIMEOUT,
	LIM_SESSION_TIMEOUT,
	LIM_MAX_EGRESS_BYTES,
	LIM_N
};
static const char *const limit_keys[LIM_N] = {"cpu_cores",       "memory_mb",       "disk_mb",
					      "max_processes",   "exec_timeout",    "session_timeout",
					      "max_egress_bytes"};
static const char *const limit_labels[LIM_N] = {
	"'limits.cpu_cores'",     "'limits.memory_mb'",       "'limits.disk_mb'",
	"'limits.max_processes'", "'limits.exec_timeout'",    "'limits.session_timeout'",
	"'limits.max_egress_bytes'"};
static int load_limits(struct loader *ld, const struct node *n)
{
	struct policy_limits *lim = &ld->p->limits;
	uint64_t *const slots[LIM_N] = {
		NULL,			&lim->memory_mb,       &lim->disk_mb,
		&lim->max_processes,	&lim->exec_timeout,    &lim->session_timeout,
		&lim->max_egress_bytes,
	};
	static const unsigned bits[LIM_N] = {
		POLICY_LIMIT_CPU_CORES,	   POLICY_LIMIT_MEMORY_MB,	 POLICY_LIMIT_DISK_MB,
		POLICY_LIMIT_MAX_PROCESSES,   POLICY_LIMIT_EXEC_TIMEOUT,
		POLICY_LIMIT_SESSION_TIMEOUT, POLICY_LIMIT_MAX_EGRESS_BYTES,
	};
	struct field f[LIM_N];

	if (is_null(n))
		return 0;
	if (n->kind != NODE_MAP)
		return fail_at(ld, n->pos, "'limits' must be a mapping, got %s", describe(n).s);
	if (collect(ld, n, limit_keys, LIM_N, f, "'limits'"))
		return -1;
	for (int k = 0; k < LIM_N; k++) {
		if (!f[k].val)
			continue;
		if (k == LIM_CPU_CORES ? get_positive_number(ld, limit_labels[k], f[k].val,
							     &lim->cpu_cores)
				       : get_positive(ld, limit_labels[k], f[k].val, UINT64_MAX,
						      slots[k]))
			return -1;
		lim->set |= bits[k];
	}
	return 0;
}

static int load_version(struct loader *ld, const struct node *root)
{
	const struct node *n = map_get(root, "version");
	uint64_t v;

	if (!n)
		return fail_at(ld, root->pos, "missing 'version': a policy starts with 'version: 1'");
	if (get_uint(ld, "'version'", n, &v))
		return -1;
	if (v != 1)
		return fail_at(ld, n->pos, "unsupported policy version %s (only version 1 is supported)",
			       node_text(n).s);
	ld->p->version = 1;
	return 0;
}

/* The deny:, ask: and allow: lists, in file order. */
static int load_rules(struct loader *ld, const struct node *root)
{
	for (size_t i = 0; i + 1 < root->nkids; i += 2) {
		const struct field f = {&root->kids[i], &root->kids[i + 1]};
		for (int l = 0; l < POLICY_LIST_MAX; l++)
			if (node_is(f.key, policy_list_name((enum policy_list)l)) &&
			    load_rule_list(ld, (enum policy_list)l, &f))
				return -1;
	}
	return 0;
}

static int load_root(struct loader *ld, const struct node *root)
{
	struct field f[TOP_N];
	uint64_t timeout;

	if (!root || is_null(root))
		return fail_at(ld, root ? root->pos : (struct policy_pos){1, 1},
			       "the policy is empty: it needs at least 'version: 1'");
	if (root->kind != NODE_MAP)
		return fail_at(ld, root->pos,
			       "a policy must be a mapping (version:, deny:, allow:, ...), got %s",
			       describe(root).s);
	if (load_version(ld, root) || collect(ld, root, top_keys, TOP_N, f, "the policy"))
		return -1;
	if (f[TOP_DEFAULT].val && load_default(ld, f[TOP_DEFAULT].val))
		return -1;
	if (f[TOP_ASK_TIMEOUT].val) {
		if (get_positive(ld, "'ask_timeout'", f[TOP_ASK_TIMEOUT].val, 86400, &timeout))
			return -1;
		ld->p->ask_timeout = (unsigned)timeout;
	}
	if (load_rules(ld, root) || load_sandbox(ld, f[TOP_SANDBOX].val))
		return -1;
	return f[TOP_LIMITS].val ? load_limits(ld, f[TOP_LIMITS].val) : 0;
}

/* ---- Public entry points ------------------------------------------------------------- */

static struct policy *policy_new(struct loader *ld, const char *name)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (!p || !(p->source = strdup(name))) {
		free(p);
		fail_nomem(ld);
		return NULL;
	}
	p->defaults[POLICY_ACTION_EXEC] = POLICY_ASK;
	p->defaults[POLICY_ACTION_READ] = POLICY_ALLOW;
	p->defaults[POLICY_ACTION_WRITE] = POLICY_ASK;
	p->defaults[POLICY_ACTION_CONNECT] = POLICY_ASK;
	p->ask_timeout = 60;
	p->sandbox.network = POLICY_NETWORK_PROXY;
	p->sandbox.process_spawn = true;
	return p;
}

static void error_init(struct policy_error *err, const char *name)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", name);
}

struct policy *policy_load_buffer(const char *name, const char *buf, size_t len,
				  struct policy_error *err)
{
	struct loader ld = {.buf = buf ? buf : "", .len = buf ? len : 0, .err = err};
	const char *nul;
	struct node root;
	bool have_root = false;
	int rc;

	if (!name)
		name = "<policy>";
	error_init(err, name);
	if (len > POLICY_MAX_FILE_SIZE) {
		fail_at(&ld, no_pos, "the policy is larger than %u bytes (1 MiB)", POLICY_MAX_FILE_SIZE);
		return NULL;
	}
	if ((nul = memchr(ld.buf, '\0', ld.len))) {
		fail_at(&ld, offset_pos(&ld, (size_t)(nul - ld.buf)),
			"the policy contains a NUL byte; it must be UTF-8 text");
		return NULL;
	}
	if (!(ld.p = policy_new(&ld, name)))
		return NULL;
	if (build_tree(&ld, &root, &have_root)) {
		policy_free(ld.p);
		return NULL;
	}
	rc = load_root(&ld, have_root ? &root : NULL);
	if (have_root)
		node_free(&root);
	if (rc) {
		policy_free(ld.p);
		return NULL;
	}
	return ld.p;
}

/* Reads at most POLICY_MAX_FILE_SIZE + 1 bytes of fd, so an oversized file is seen, not read. */
static int read_bounded(struct loader *ld, int fd, size_t hint, char **out, size_t *len)
{
	size_t limit = (size_t)POLICY_MAX_FILE_SIZE + 1, cap = hint < limit ? hint : limit;
	char *buf = malloc(cap);

	if (!buf)
		return fail_nomem(ld);
	*len = 0;
	for (;;) {
		if (*len == cap) {
			char *grown;
			if (cap == limit)
				break;
			cap = cap * 2 > limit ? limit : cap * 2;
			if (!(grown = realloc(buf, cap))) {
				free(buf);
				return fail_nomem(ld);
			}
			buf = grown;
		}
		ssize_t got = read(fd, buf + *len, cap - *len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;
			free(buf);
			return fail_at(ld, no_pos, "cannot read the policy: %s", strerror(e));
		}
		if (got == 0)
			break;
		*len += (size_t)got;
	}
	if (*len > POLICY_MAX_FILE_SIZE) {
		free(buf);
		return fail_at(ld, no_pos, "the policy file is larger than %u bytes (1 MiB)",
			       POLICY_MAX_FILE_SIZE);
	}
	*out = buf;
	return 0;
}

/* What a file that is not a regular one is, for an error message (inode(7)'s S_IFMT types). */
static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "an unknown kind of file";
	}
}

struct policy *policy_load_file(const char *path, struct policy_error *err)
{
	struct loader ld = {.err = err};
	struct policy *p = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, fl;

	error_init(err, path);
	/*
	 * Only a regular file is a policy.  A FIFO would block open(2) until a
	 * writer comes (fifo(7)), and a device may never end (/dev/zero) or wait
	 * for input (/dev/tty): so the open does not block (O_NONBLOCK), and the
	 * opened file, not the name, is checked (fstat(2): no race with a rename).
	 * O_NONBLOCK is cleared before reading; it means nothing for a regular file.
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		fail_at(&ld, no_pos, "cannot open the policy: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		fail_at(&ld, no_pos, "cannot read the policy: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		fail_at(&ld, no_pos, "not a regular file (%s): a policy must be a regular file",
			file_kind(st.st_mode));
		return NULL;
	}
	if ((uint64_t)st.st_size > POLICY_MAX_FILE_SIZE) {
		close(fd);
		fail_at(&ld, no_pos, "the policy file is larger than %u bytes (1 MiB)",
			POLICY_MAX_FILE_SIZE);
		return NULL;
	}
	if (read_bounded(&ld, fd, (size_t)st.st_size + 1, &buf, &len) == 0)
		p = policy_load_buffer(path, buf, len, err);
	close(fd);
	free(buf);
	return p;
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		struct policy_rule *r = &p->rules[i];
		free(r->command);
		free(r->args);
		free(r->path);
		free(r->destination);
		free(r->reason);
	}
	free(p->rules);
	free_strings(p->sandbox.read, p->sandbox.nread);
	free_strings(p->sandbox.write, p->sandbox.nwrite);
	for (size_t i = 0; p->sandbox.env && i < p->sandbox.nenv; i++) {
		free(p->sandbox.env[i].name);
		free(p->sandbox.env[i].value);
	}
	free(p->sandbox.env);
	free_strings(p->sandbox.env_passthrough, p->sandbox.nenv_passthrough);
	free(p->source);
	free(p);
}
