/* glob.c — glob(7) and gitignore-style path matching, allocation-free, for the policy image. */
#include "policy/glob.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { NOMATCH = 0, MATCH = 1, ABORT_ALL = 2, ABORT_TO_STARSTAR = 3 };

struct cclass {
	const char *name;
	size_t len;
	bool (*test)(unsigned char c);
};

static bool is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(unsigned char c) { return is_upper(c) || is_lower(c); }
static bool is_alnum(unsigned char c) { return is_alpha(c) || is_digit(c); }
static bool is_blank(unsigned char c) { return c == ' ' || c == '\t'; }
static bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static bool is_cntrl(unsigned char c) { return c < 0x20 || c == 0x7f; }
static bool is_graph(unsigned char c) { return c > 0x20 && c < 0x7f; }
static bool is_print(unsigned char c) { return c >= 0x20 && c < 0x7f; }
static bool is_punct(unsigned char c) { return is_graph(c) && !is_alnum(c); }
static bool is_xdigit(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* POSIX character classes, C locale (glob(7), regex(7)). */
static const struct cclass classes[] = {
	{ "alnum", 5, is_alnum }, { "alpha", 5, is_alpha }, { "blank", 5, is_blank },
	{ "cntrl", 5, is_cntrl }, { "digit", 5, is_digit }, { "graph", 5, is_graph },
	{ "lower", 5, is_lower }, { "print", 5, is_print }, { "punct", 5, is_punct },
	{ "space", 5, is_space }, { "upper", 5, is_upper }, { "xdigit", 6, is_xdigit },
};

static const struct cclass *find_class(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
		if (classes[i].len == len && memcmp(classes[i].name, name, len) == 0)
			return &classes[i];
	return NULL;
}

/*
 * Parses the bracket expression starting at p (just after '[') and tests c
 * against it.  Returns 1 match, 0 no match, -1 malformed (*why set);
 * *end receives the position after the closing ']'.
 */
static int bracket(const char *p, unsigned char c, const char **end, const char **why)
{
	bool negate = false, hit = false;
	if (*p == '!' || *p == '^') {
		negate = true;
		p++;
	}
	for (bool first = true;; first = false) {
		unsigned char lo = (unsigned char)*p;
		if (lo == '\0') {
			*why = "unterminated '[' in glob";
			return -1;
		}
		if (lo == ']' && !first)
			break;
		if (lo == '[' && p[1] == ':') {
			const char *close = strstr(p + 2, ":]");
			const struct cclass *cc = close ? find_class(p + 2, (size_t)(close - p - 2)) : NULL;
			if (!cc) {
				*why = close ? "unknown character class in glob" : "unterminated '[:' in glob";
				return -1;
			}
			hit |= cc->test(c);
			p = close + 2;
			continue;
		}
		if (lo == '[' && (p[1] == '.' || p[1] == '=')) {
			*why = "collating elements and equivalence classes are not supported in globs";
			return -1;
		}
		if (lo == '\\') {
			if (p[1] == '\0') {
				*why = "trailing '\\' in glob";
				return -1;
			}
			lo = (unsigned char)*++p;
		}
		p++;
		unsigned char hi = lo;
		if (*p == '-' && p[1] != ']' && p[1] != '\0') {
			p++;
			if (*p == '\\') {
				if (p[1] == '\0') {
					*why = "trailing '\\' in glob";
					return -1;
				}
				p++;
			}
			hi = (unsigned char)*p++;
			if (hi < lo) {
				*why = "reversed range in glob bracket expression";
				return -1;
			}
		}
		hit |= c >= lo && c <= hi;
	}
	*end = p + 1;
	return hit != negate;
}

static bool is_special(char c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

size_t glob_literal_prefix(const char *pattern)
{
	size_t n = 0;
	while (pattern[n] && !is_special(pattern[n]))
		n++;
	return n;
}

bool glob_is_literal(const char *pattern)
{
	return pattern[glob_literal_prefix(pattern)] == '\0';
}

static int fail(char *msg, size_t msglen, const char *why)
{
	if (msglen)
		snprintf(msg, msglen, "%s", why);
	return -EINVAL;
}

int glob_check(const char *pattern, enum glob_flavour f, char *msg, size_t msglen)
{
	unsigned stars = 0;
	for (const char *p = pattern; *p; p++) {
		if (*p == '*' && p[1] != '*' && ++stars > GLOB_MAX_STARS)
			return fail(msg, msglen, "too many '*' in glob (at most 64)");
		const char *why = NULL, *end;
		switch (*p) {
		case '\\':
			if (p[1] == '\0')
				return fail(msg, msglen, "trailing '\\' in glob");
			p++;
			break;
		case '[':
			if (bracket(p + 1, 'a', &end, &why) < 0)
				return fail(msg, msglen, why);
			p = end - 1;
			break;
		case '*':
			if (f != GLOB_PATH || p[1] != '*')
				break;
			if (p[2] == '*')
				return fail(msg, msglen, "'***' in path glob: use '**' for any depth");
			if ((p != pattern && p[-1] != '/') || (p[2] != '\0' && p[2] != '/'))
				return fail(msg, msglen,
					    "'**' must be a whole path component, as in 'a/**/b' "
					    "(use '*' within a name)");
			p++;
			break;
		default:
			break;
		}
	}
	return 0;
}

struct text {
	const char *end;
	enum glob_flavour f;
};

static int match_from(const char *p, const char *t, const struct text *x);

/* p points at "**" followed by '/' or NUL, at the start of a component; so does t. */
static int match_starstar(const char *p, const char *t, const struct text *x)
{
	if (p[2] == '\0')
		return MATCH; /* a last "**" component: everything below */
	for (const char *u = t;;) {
		int r = match_from(p + 3, u, x);
		if (r == MATCH || r == ABORT_ALL)
			return r;
		while (u < x->end && *u != '/')
			u++;
		if (u == x->end)
			return ABORT_ALL;
		u++;
	}
}

/* p points at a single '*'. */
static int match_star(const char *p, const char *t, const struct text *x)
{
	bool path = x->f == GLOB_PATH;
	while (*p == '*')
		p++;
	if (*p == '\0' && !path)
		return MATCH;
	for (;; t++) {
		int r = match_from(p, t, x);
		if (r != NOMATCH)
			return r;
		if (t == x->end)
			return ABORT_ALL;
		if (path && *t == '/')
			return ABORT_TO_STARSTAR;
	}
}

static int match_from(const char *p, const char *t, const struct text *x)
{
	bool path = x->f == GLOB_PATH;
	for (; *p; p++, t++) {
		if (*p == '*') {
			if (path && p[1] == '*')
				return match_starstar(p, t, x);
			return match_star(p, t, x);
		}
		if (t == x->end)
			return ABORT_ALL;
		unsigned char c = (unsigned char)*t;
		const char *end, *why;
		switch (*p) {
		case '?':
			if (path && c == '/')
				return NOMATCH;
			break;
		case '[':
			if (path && c == '/')
				return NOMATCH;
			if (bracket(p + 1, c, &end, &why) != 1)
				return NOMATCH;
			p = end - 1;
			break;
		case '\\':
			if (p[1] != '\0') /* a malformed trailing '\\' is itself */
				p++;
			/* fall through */
		default:
			if ((unsigned char)*p != c)
				return NOMATCH;
			break;
		}
	}
	if (t == x->end)
		return MATCH;
	return path && *t == '/' ? MATCH : NOMATCH;
}

bool glob_match(const char *pattern, const char *text, size_t len, enum glob_flavour f)
{
	struct text x = { text + len, f };
	return match_from(pattern, text, &x) == MATCH;
}
