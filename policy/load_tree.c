/* load_tree.c — the policy loader's YAML walker: libyaml's events -> a tree of nodes, with positions for errors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/grow.h"
#include "policy/load_internal.h"

/* ---- Errors and text ----------------------------------------------------- */

int pl_fail(struct loader *ld, struct policy_pos pos, const char *fmt, ...)
{
	va_list ap;

	ld->err->line = pos.line;
	ld->err->column = pos.column;
	va_start(ap, fmt);
	vsnprintf(ld->err->message, sizeof(ld->err->message), fmt, ap);
	va_end(ap);
	return -1;
}

int pl_nomem(struct loader *ld)
{
	return pl_fail(ld, no_pos, "out of memory");
}

struct shown pl_show(const char *text, size_t len)
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
struct policy_pos pl_offset_pos(const struct loader *ld, size_t off)
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

void pl_node_free(struct node *n)
{
	free(n->text);
	for (size_t i = 0; i < n->nkids; i++)
		pl_node_free(&n->kids[i]);
	free(n->kids);
}

static int node_append(struct node *parent, const struct node *child)
{
	if (parent->nkids == parent->cap) {
		struct node *kids =
			grow_array(parent->kids, &parent->cap, parent->nkids + 1, sizeof(*kids), 4);
		if (!kids)
			return -1;
		parent->kids = kids;
	}
	parent->kids[parent->nkids++] = *child;
	return 0;
}

bool pl_node_is(const struct node *n, const char *word)
{
	size_t len = strlen(word);
	return n->kind == NODE_SCALAR && n->len == len && memcmp(n->text, word, len) == 0;
}

struct shown pl_node_text(const struct node *n)
{
	return pl_show(n->text, n->len);
}

static const char *const null_words[] = {"", "~", "null", "Null", "NULL"};

bool pl_is_null(const struct node *n)
{
	if (n->kind != NODE_SCALAR || !n->plain)
		return false;
	for (size_t i = 0; i < COUNT(null_words); i++)
		if (pl_node_is(n, null_words[i]))
			return true;
	return false;
}

/* "a mapping", "a list", "null" or the scalar quoted, for "got ..." messages. */
struct shown pl_describe(const struct node *n)
{
	struct shown out;
	const char *fixed = n->kind == NODE_MAP ? "a mapping" : n->kind == NODE_SEQ ? "a list" : "null";

	if (n->kind == NODE_SCALAR && !pl_is_null(n)) {
		struct shown t = pl_node_text(n);
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
		return pl_nomem(ld);
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
	return pl_fail(ld, dup->pos, "duplicate key '%s' (first at line %u)", pl_node_text(dup).s,
		       first->pos.line);
}

static int check_properties(struct loader *ld, struct policy_pos pos, const yaml_char_t *anchor,
			    const yaml_char_t *tag)
{
	if (anchor)
		return pl_fail(ld, pos, "YAML anchors and aliases are not allowed");
	if (tag)
		return pl_fail(ld, pos, "explicit YAML tags are not allowed (found %s)",
			       pl_show((const char *)tag, strlen((const char *)tag)).s);
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
		pl_node_free(n);
		return pl_nomem(b->ld);
	}
	return 0;
}

static int add_scalar(struct builder *b, struct policy_pos pos, const yaml_event_t *ev)
{
	struct node n = {.kind = NODE_SCALAR, .pos = pos, .len = ev->data.scalar.length};

	n.plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n.text = malloc(n.len + 1);
	if (!n.text)
		return pl_nomem(b->ld);
	memcpy(n.text, ev->data.scalar.value, n.len);
	n.text[n.len] = '\0';
	return add_node(b, &n);
}

static int push_collection(struct builder *b, enum node_kind kind, struct policy_pos pos)
{
	const struct node *parent = b->depth ? &b->stack[b->depth - 1] : NULL;

	if (parent && parent->kind == NODE_MAP && parent->nkids % 2 == 0)
		return pl_fail(b->ld, pos, "mapping keys must be strings, not %s",
			       kind == NODE_MAP ? "mappings" : "lists");
	if (b->depth == POLICY_MAX_DEPTH)
		return pl_fail(b->ld, pos, "YAML nesting is deeper than %u levels", POLICY_MAX_DEPTH);
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
		pl_node_free(&n);
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
			return pl_fail(b->ld, pos, "a policy must be a single YAML document");
		return 0;
	case YAML_ALIAS_EVENT:
		return pl_fail(b->ld, pos, "YAML anchors and aliases are not allowed");
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
		return pl_nomem(ld);
	if (ps->error == YAML_READER_ERROR)
		return pl_fail(ld, pl_offset_pos(ld, ps->problem_offset), "invalid YAML input: %s",
			       problem);
	if (ps->context)
		return pl_fail(ld, mark_pos(ps->problem_mark), "YAML syntax error: %s (%s at line %u)",
			       problem, ps->context, (unsigned)ps->context_mark.line + 1);
	return pl_fail(ld, mark_pos(ps->problem_mark), "YAML syntax error: %s", problem);
}

/* Parses the whole buffer into *root; *have_root is false for a stream without a document. */
int pl_build_tree(struct loader *ld, struct node *root, bool *have_root)
{
	struct builder *b = calloc(1, sizeof(*b));
	yaml_parser_t parser;
	bool done = false;
	int rc = 0;

	if (!b)
		return pl_nomem(ld);
	b->ld = ld;
	if (!yaml_parser_initialize(&parser)) {
		free(b);
		return pl_nomem(ld);
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
		pl_node_free(&b->stack[--b->depth]);
	if (rc && b->have_root)
		pl_node_free(&b->root);
	*root = b->root;
	*have_root = rc == 0 && b->have_root;
	free(b);
	return rc;
}

