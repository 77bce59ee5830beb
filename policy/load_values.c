/* load_values.c — the policy loader's typed values: strings, choices, booleans and numbers read strictly from YAML nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/load_internal.h"

/* ---- Words ----------------------------------------------------------------------- */

/* YAML 1.1's booleans (yaml.org/type/bool.html): a plain scalar spelled so is never a string. */
static const struct policy_word bool_words[] = {
	{"y", 1},     {"Y", 1},     {"yes", 1},  {"Yes", 1},  {"YES", 1},   {"true", 1},
	{"True", 1},  {"TRUE", 1},  {"on", 1},   {"On", 1},   {"ON", 1},    {"n", 0},
	{"N", 0},     {"no", 0},    {"No", 0},   {"NO", 0},   {"false", 0}, {"False", 0},
	{"FALSE", 0}, {"off", 0},   {"Off", 0},  {"OFF", 0},
};

static const struct policy_word *find_word(const struct node *n, const struct policy_word *words,
					  size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (pl_node_is(n, words[i].name))
			return &words[i];
	return NULL;
}

static const struct policy_word *bool_word(const struct node *n)
{
	return find_word(n, bool_words, COUNT(bool_words));
}

/* ---- Typed values ----------------------------------------------------------- */

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
int pl_collect(struct loader *ld, const struct node *map, const char *const *names, size_t n,
		   struct field *out, const char *where)
{
	memset(out, 0, n * sizeof(*out));
	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct node *key = &map->kids[i];
		size_t j = 0;
		while (j < n && !pl_node_is(key, names[j]))
			j++;
		if (j == n) {
			char allowed[256];
			join_names(allowed, sizeof(allowed), names, n, ", ");
			return pl_fail(ld, key->pos, "unknown key '%s' in %s (allowed: %s)",
				       pl_node_text(key).s, where, allowed);
		}
		out[j].key = key;
		out[j].val = &map->kids[i + 1];
	}
	return 0;
}

const struct node *pl_map_get(const struct node *map, const char *name)
{
	for (size_t i = 0; i + 1 < map->nkids; i += 2)
		if (pl_node_is(&map->kids[i], name))
			return &map->kids[i + 1];
	return NULL;
}

static int get_string(struct loader *ld, const char *label, const struct node *n, const char **out)
{
	if (n->kind != NODE_SCALAR)
		return pl_fail(ld, n->pos, "%s must be a string, got %s", label, pl_describe(n).s);
	if (n->plain && n->len == 0)
		return pl_fail(ld, n->pos,
			       "%s must be a string, but an empty value is a YAML 1.1 null here: "
			       "quote it (\"\")",
			       label);
	if (pl_is_null(n))
		return pl_fail(ld, n->pos,
			       "%s must be a string, but %s is a YAML 1.1 null here: quote it (\"%s\")",
			       label, n->text, n->text);
	if (n->plain && bool_word(n))
		return pl_fail(ld, n->pos,
			       "%s must be a string, but %s is a YAML 1.1 boolean here: quote it (\"%s\")",
			       label, n->text, n->text);
	if (memchr(n->text, '\0', n->len))
		return pl_fail(ld, n->pos, "%s must not contain a NUL character", label);
	*out = n->text;
	return 0;
}

int pl_dup_string(struct loader *ld, const char *label, const struct node *n, char **out)
{
	const char *s = NULL;

	if (get_string(ld, label, n, &s))
		return -1;
	if (!(*out = strdup(s)))
		return pl_nomem(ld);
	return 0;
}

int pl_get_choice(struct loader *ld, const char *label, const struct node *n,
		      const struct choice *c, int *out)
{
	char expected[128];
	const struct policy_word *w;

	join_words(expected, sizeof(expected), c->words, c->n);
	if (n->kind != NODE_SCALAR || pl_is_null(n))
		return pl_fail(ld, n->pos, "%s must be one of %s, got %s", label, expected,
			       pl_describe(n).s);
	if (!(w = find_word(n, c->words, c->n)))
		return pl_fail(ld, n->pos, "unknown %s '%s' for %s (expected %s)", c->what,
			       pl_node_text(n).s, label, expected);
	*out = w->value;
	return 0;
}

int pl_get_bool(struct loader *ld, const char *label, const struct node *n, bool *out)
{
	const struct policy_word *w = n->kind == NODE_SCALAR ? bool_word(n) : NULL;

	if (w && !n->plain)
		return pl_fail(ld, n->pos,
			       "%s must be true or false, got the quoted string \"%s\": remove the quotes",
			       label, pl_node_text(n).s);
	if (!w)
		return pl_fail(ld, n->pos, "%s must be true or false, got %s", label, pl_describe(n).s);
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
int pl_get_uint(struct loader *ld, const char *label, const struct node *n, uint64_t *out)
{
	uint64_t v = 0;

	if (n->kind == NODE_SCALAR && !n->plain)
		return pl_fail(ld, n->pos,
			       "%s must be an integer, got the quoted string \"%s\": remove the quotes",
			       label, pl_node_text(n).s);
	if (n->kind != NODE_SCALAR || !all_digits(n->text, n->len))
		return pl_fail(ld, n->pos, "%s must be a positive integer, got %s", label,
			       pl_describe(n).s);
	if (n->len > 1 && n->text[0] == '0')
		return pl_fail(ld, n->pos,
			       "%s must be a decimal integer without leading zeros, got %s "
			       "(YAML 1.1 reads it as octal)",
			       label, pl_node_text(n).s);
	for (size_t i = 0; i < n->len; i++) {
		unsigned d = (unsigned)(n->text[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return pl_fail(ld, n->pos, "%s is too large (at most %llu)", label,
				       (unsigned long long)UINT64_MAX);
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int pl_get_positive(struct loader *ld, const char *label, const struct node *n, uint64_t max,
			uint64_t *out)
{
	if (pl_get_uint(ld, label, n, out))
		return -1;
	if (*out == 0)
		return pl_fail(ld, n->pos, "%s must be a positive integer, got 0", label);
	if (*out > max)
		return pl_fail(ld, n->pos, "%s must be at most %llu, got %llu", label,
			       (unsigned long long)max, (unsigned long long)*out);
	return 0;
}

/* A plain decimal number > 0: digits with an optional fraction, e.g. 2, 0.5, .5, 1.5. */
int pl_get_positive_number(struct loader *ld, const char *label, const struct node *n,
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
				return pl_fail(ld, n->pos, "%s has too many digits", label);
			mantissa = mantissa * 10 + (unsigned)(c - '0');
			fraction += dot;
		} else {
			ok = false;
		}
	}
	ok = ok && !pl_node_is(n, ".");
	if (!ok)
		return pl_fail(ld, n->pos, "%s must be a positive number, got %s", label,
			       pl_describe(n).s);
	for (scale = 1; fraction; fraction--)
		scale *= 10;
	*out = (double)mantissa / scale;
	if (*out <= 0)
		return pl_fail(ld, n->pos, "%s must be greater than 0, got %s", label,
			       pl_node_text(n).s);
	return 0;
}

