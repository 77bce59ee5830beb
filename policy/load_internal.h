/*
 * load_internal.h — what the policy loader's files share (private to policy/load*.c):
 * the document tree libyaml's events are built into, errors with positions,
 * and the typed readers of its values.  Symbols carry the prefix pl_.
 *
 *   load_tree.c    YAML text -> a tree of nodes (libyaml's event parser),
 *                  errors and positions
 *   load_values.c  a node -> a typed value (string, choice, bool, integer,
 *                  number), the keys of a mapping
 *   load_rules.c   the deny:, ask: and allow: lists -> struct policy_rule
 *   load.c         the other sections, the entry points, policy_free()
 */
#ifndef AIRLOCK_POLICY_LOAD_INTERNAL_H
#define AIRLOCK_POLICY_LOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* One load in progress: the text, where errors go, the policy being filled. */
struct loader {
	const char *buf;
	size_t len;
	struct policy_error *err;
	struct policy *p;
	size_t rules_cap; /* p->rules has room for this many */
};

/* An error without a position (out of memory, an unreadable file). */
static const struct policy_pos no_pos = {0, 0};

/* User text shortened and made printable for a one-line message. */
struct shown {
	char s[80];
};

/* Bytes of user text a message shows before "...". */
#define SHOWN_MAX 60

/* ---- load_tree.c --------------------------------------------------------------- */

enum node_kind { NODE_SCALAR, NODE_SEQ, NODE_MAP };

/* A node of the YAML document, as parsed: no anchors, aliases or tags (refused). */
struct node {
	enum node_kind kind;
	bool plain; /* SCALAR: unquoted, so YAML 1.1's nulls and booleans apply */
	struct policy_pos pos;
	char *text; /* owned; SCALAR: NUL-terminated copy of len bytes */
	size_t len;
	struct node *kids; /* owned; SEQ: items; MAP: key, value, key, value, ... */
	size_t nkids;
	size_t cap;
};

/*
 * Fills ld->err with pos and the printf-style message; returns -1, so
 * `return pl_fail(...)` reports and fails in one step.
 */
__attribute__((format(printf, 3, 4))) int pl_fail(struct loader *ld, struct policy_pos pos,
						  const char *fmt, ...);

/* pl_fail() with no position and "out of memory". */
int pl_nomem(struct loader *ld);

/* len bytes of text, control characters as '?', cut at SHOWN_MAX bytes (on a UTF-8 boundary) + "...". */
struct shown pl_show(const char *text, size_t len);

/* The line and column of byte offset off in ld->buf, counted in characters as libyaml counts. */
struct policy_pos pl_offset_pos(const struct loader *ld, size_t off);

/*
 * Parses ld->buf into *root (owned by the caller: pl_node_free()); *have_root
 * is false for a stream without a document.  Refuses more than one document,
 * anchors, aliases, explicit tags, non-scalar keys, duplicate keys and
 * nesting deeper than POLICY_MAX_DEPTH.  Returns 0 or -1 with ld->err filled.
 */
int pl_build_tree(struct loader *ld, struct node *root, bool *have_root);

/* Frees what n owns (not n itself). */
void pl_node_free(struct node *n);

/* True when n is the scalar word, byte for byte. */
bool pl_node_is(const struct node *n, const char *word);

/* n's text, shown (pl_show()). */
struct shown pl_node_text(const struct node *n);

/* True when n is a plain scalar YAML 1.1 reads as null: "", "~", "null", "Null", "NULL". */
bool pl_is_null(const struct node *n);

/* "a mapping", "a list", "null" or the scalar quoted, for "got ..." messages. */
struct shown pl_describe(const struct node *n);

/* ---- load_values.c --------------------------------------------------------------- */

/* A mapping's key and value, as pl_collect() finds them; both NULL when the key is absent. */
struct field {
	const struct node *key;
	const struct node *val;
};

/* A closed set of words a value must be one of, and what the set is called in messages. */
struct choice {
	const char *what; /* "decision", "match mode", ... */
	const struct policy_word *words;
	size_t n;
};

/*
 * Fills out[i] with the key and value named names[i] in the mapping map (n
 * names); any other key is an error naming `where` and the allowed keys.
 */
int pl_collect(struct loader *ld, const struct node *map, const char *const *names, size_t n,
	       struct field *out, const char *where);

/* The value of key name in the mapping map, or NULL. */
const struct node *pl_map_get(const struct node *map, const char *name);

/*
 * The readers of typed values: label names the value in messages ("'path'").
 * Each returns 0, or -1 with ld->err filled: the value's position and what
 * was wrong with it (the wrong type, a YAML 1.1 null or boolean where a
 * string belongs, a quoted number, ...).
 */

/* A string, copied (*out owned by the caller). */
int pl_dup_string(struct loader *ld, const char *label, const struct node *n, char **out);

/* One of c's words; *out receives its value. */
int pl_get_choice(struct loader *ld, const char *label, const struct node *n,
		  const struct choice *c, int *out);

/* An unquoted YAML 1.1 boolean. */
int pl_get_bool(struct loader *ld, const char *label, const struct node *n, bool *out);

/* A plain decimal integer >= 0, without leading zeros (YAML 1.1 would read octal). */
int pl_get_uint(struct loader *ld, const char *label, const struct node *n, uint64_t *out);

/* As pl_get_uint(), and 1 <= *out <= max. */
int pl_get_positive(struct loader *ld, const char *label, const struct node *n, uint64_t max,
		    uint64_t *out);

/* A plain decimal number > 0: digits with an optional fraction (2, 0.5, .5). */
int pl_get_positive_number(struct loader *ld, const char *label, const struct node *n,
			   double *out);

/* ---- load_rules.c ------------------------------------------------------------------ */

/*
 * Appends the rules of the root mapping's deny:, ask: and allow: lists to
 * ld->p->rules, in file order, each validated (one kind key, its fields,
 * its patterns: policy/pattern.h).  Returns 0 or -1 with ld->err filled.
 */
int pl_load_rules(struct loader *ld, const struct node *root);

#endif
