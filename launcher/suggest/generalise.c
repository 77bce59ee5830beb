/* generalise.c — `airlock suggest` chooses a rule for each action: candidates from the most general to the exact, the first that covers nothing decided otherwise. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "launcher/cli/launcher.h"
#include "launcher/suggest/suggest.h"

/*
 * U+FFFD in UTF-8: what the audit log writes for each run of bytes of a name
 * that are not UTF-8 (JSON and YAML cannot carry them).  A pattern holding
 * it never matches the real name.
 */
#define LOST "\xEF\xBF\xBD"

static bool has_lost(const char *s, size_t n)
{
	return memmem(s, n, LOST, 3) != NULL;
}

/* s with the glob specials ('*', '?', '[', '\') quoted by '\'. */
static void put_glob_literal(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (strchr("*?[\\", *s))
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* A path's bytes as a path glob: specials quoted by '\', each run of U+FFFD '*' (not crossing '/'). */
static void put_path_glob(FILE *f, const char *s)
{
	while (*s) {
		if (strncmp(s, LOST, 3) == 0) {
			fputc('*', f);
			while (strncmp(s, LOST, 3) == 0)
				s += 3;
			continue;
		}
		if (strchr("*?[\\", *s))
			fputc('\\', f);
		fputc(*s++, f);
	}
}

/* ---- candidate rules -------------------------------------------------------------- */

void suggest_candidate_free(struct candidate *c)
{
	free(c->yaml);
	free(c->blob);
	*c = (struct candidate){ 0 };
}

/* Compiles c->yaml; false when the policy language cannot hold it (then it is not offered). */
bool suggest_candidate_compile(const struct suggest *sg, struct candidate *c)
{
	char *text = NULL;
	size_t len = 0;
	struct policy_error err;
	size_t size;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return false;
	fprintf(f, "version: 1\ndefault: {exec: deny, read: deny, write: deny, connect: deny}\n"
		   "allow:\n  - %s\n", c->yaml);
	if (fclose(f) != 0) {
		free(text);
		return false;
	}
	struct policy *p = policy_load_buffer("<candidate>", text, len, &err);
	free(text);
	if (!p)
		return false;
	struct policy_context ctx = { .home = sg->home, .workspace = sg->workspace ? sg->workspace : "/" };
	int r = policy_compile(p, &ctx, &c->blob, &size, &err);
	policy_free(p);
	if (r != 0 || policy_image_open(c->blob, size, &c->img, NULL, 0) != 0) {
		free(c->blob);
		c->blob = NULL;
		return false;
	}
	return true;
}

/* The verdict img gives action a. */
struct policy_verdict suggest_decide(const struct policy_image *img, const struct action *a)
{
	if (a->kind == K_EXEC) {
		const char **argv = calloc(a->nargs + 2, sizeof *argv);
		if (!argv)
			return (struct policy_verdict){ POLICY_DENY, -1 };
		argv[0] = a->program;
		for (size_t i = 0; i < a->nargs; i++)
			argv[i + 1] = a->args[i];
		struct policy_verdict v = policy_decide_exec(img, a->program, argv);
		free(argv);
		return v;
	}
	if (a->kind == K_FILE)
		return policy_decide_open(img, a->path, a->faction);
	return policy_decide_connect(img, a->host, a->port);
}

bool suggest_covers(const struct candidate *c, const struct action *a)
{
	return suggest_decide(c->img, a).rule == 0;
}

/* The candidates, most general first, are collected in a growing list of YAML items. */
struct list {
	char **item;
	size_t n, cap;
	size_t exact; /* the items from here on name the action exactly (SIZE_MAX: none) */
	bool oom;
};

/* Takes s (malloc'ed) into l unless it is NULL or the same as the last one. */
static void list_take(struct list *l, char *s)
{
	if (!s) {
		l->oom = true;
		return;
	}
	if (l->n && strcmp(l->item[l->n - 1], s) == 0) {
		if (l->exact == l->n) /* the last one is exact too */
			l->exact--;
		free(s);
		return;
	}
	char **p = grow_array(l->item, &l->cap, l->n + 1, sizeof *p, 64);
	if (!p) {
		free(s);
		l->oom = true;
		return;
	}
	l->item = p;
	l->item[l->n++] = s;
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->item[i]);
	free(l->item);
}

/*
 * A command rule item, as block mapping lines (the list item's indentation
 * is 4): command (glob-quoted unless match is given), the first nargs
 * arguments of a when a is not NULL, match.
 */
static char *command_item(const char *command, const struct action *a, size_t nargs,
			  const char *match)
{
	char *buf = NULL, *lit = NULL;
	size_t len = 0, llen = 0;
	FILE *f = open_memstream(&buf, &len), *g = NULL;
	bool ok = f != NULL;
	if (!f)
		return NULL;
	fputs("command: ", f);
	if (match) {
		suggest_put_yaml(f, command);
	} else if ((g = open_memstream(&lit, &llen)) && (put_glob_literal(g, command), 1) &&
		   fclose(g) == 0) {
		suggest_put_yaml(f, lit);
	} else
		ok = false;
	free(lit);
	if (a) {
		char *args = NULL;
		size_t alen = 0;
		if ((g = open_memstream(&args, &alen)) && (suggest_put_args(g, a, nargs), 1) &&
		    fclose(g) == 0) {
			fputs("\n    args: ", f);
			suggest_put_yaml(f, args);
		} else
			ok = false;
		free(args);
	}
	if (match)
		fprintf(f, "\n    match: %s", match);
	if (fclose(f) != 0 || !ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* How many leading arguments x and y share. */
static size_t shared_args(const struct action *x, const struct action *y)
{
	size_t k = 0;
	while (k < x->nargs && k < y->nargs && strcmp(x->args[k], y->args[k]) == 0)
		k++;
	return k;
}

/* True when word looks like a subcommand (`test`, `ls-files`), not an option, a file or a path. */
static bool subcommand(const char *word)
{
	if (!((*word >= 'a' && *word <= 'z') || (*word >= 'A' && *word <= 'Z')))
		return false;
	for (; *word; word++)
		if (!((*word >= 'a' && *word <= 'z') || (*word >= 'A' && *word <= 'Z') ||
		      (*word >= '0' && *word <= '9') || *word == '-' || *word == '_'))
			return false;
	return true;
}

/*
 * An exec action's candidates.  For k = 0, 1, ... its first k arguments
 * pick the runs of the same program, with the same outcome, that begin
 * like it; the arguments all of them share (their stable prefix) make the
 * rule's args prefix, none meaning any arguments.  An allowed run with no
 * other like it says nothing about which of its arguments are stable: it
 * gives its first k arguments, for k = 0 its first one when that looks like
 * a subcommand (`make test`, not `ls -la` or `cat notes.txt`).  Then its exact arguments by
 * program name, then by full path.
 */
static void exec_candidates(const struct suggest *sg, const struct action *a, struct list *l)
{
	for (size_t k = 0; k <= a->nargs; k++) {
		size_t stable = SIZE_MAX, others = 0;
		for (size_t i = 0; i < sg->na; i++) {
			const struct action *b = &sg->a[i];
			if (b->kind != K_EXEC || b->outcome != a->outcome || strcmp(b->base, a->base) != 0)
				continue;
			size_t s = shared_args(a, b);
			if (s < k)
				continue;
			others += b != a;
			if (s < stable)
				stable = s;
		}
		if (others == 0 && a->outcome == POLICY_ALLOW)
			stable = k > 0 ? k : a->nargs > 0 && subcommand(a->args[0]) ? 1 : 0;
		if (stable == 0)
			list_take(l, command_item(a->base, NULL, 0, NULL));
		else
			list_take(l, command_item(a->base, a, stable, "prefix"));
	}
	l->exact = l->n;
	if (!a->truncated) {
		list_take(l, command_item(a->base, a, a->nargs, "exact"));
		list_take(l, command_item(a->program, a, a->nargs, "exact"));
	} else {
		list_take(l, command_item(a->program, a, a->nargs, "prefix"));
	}
}

/* A file rule item for pattern (already a glob) and action, with match when not NULL. */
static char *file_item(const char *pattern, unsigned faction, const char *match)
{
	char *q = suggest_yaml_quoted(pattern);
	char *item = q ? suggest_format("file: { path: %s, action: %s%s%s }", q,
				policy_file_action_name(faction),
				match ? ", match: " : "", match ? match : "")
		       : NULL;
	free(q);
	return item;
}

/* ANCHOR + the path below root up to (not including) byte end as a glob (put_path_glob()), + tail. */
static char *path_pattern(const char *anchor, const char *path, size_t root, size_t end,
			  const char *tail)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputs(anchor, f);
	char *part = strndup(path + root, end - root);
	if (part)
		put_path_glob(f, part);
	free(part);
	fputs(tail, f);
	if (fclose(f) != 0 || !part) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Takes file_item(pattern, ...) into l; frees pattern (NULL: out of memory). */
static void take_file(struct list *l, char *pattern, unsigned faction, const char *match)
{
	list_take(l, pattern ? file_item(pattern, faction, match) : NULL);
	free(pattern);
}

/*
 * A file action's candidates.  Allow rules widen inside an anchor, to
 * everything below it, then below each directory on the way down: the
 * workspace (./), the home directory (~/, from its first level: never all
 * of it), /tmp.  Then the path itself as a
 * glob (which also covers what is below it, when it is a directory), and
 * last the absolute path with match: exact.  A path with U+FFFD (bytes the
 * log could not record) cannot be named exactly: allow rules are offered
 * only up to the directory above its first U+FFFD; a deny or ask rule is
 * the path as a glob, each run of U+FFFD a '*' (wider, never narrower).
 */
static void file_candidates(const struct suggest *sg, const struct action *a, struct list *l)
{
	const char *p = a->path, *anchor = NULL;
	size_t root = 0, len = strlen(p);
	bool whole = true; /* the anchor's own "**" may be offered */
	bool lost = has_lost(p, len), named = !lost || a->outcome != POLICY_ALLOW;
	if (sg->workspace && strcmp(sg->workspace, "/") != 0 && suggest_under(p, sg->workspace)) {
		anchor = "./";
		root = strlen(sg->workspace) + 1;
	} else if (strcmp(sg->home, "/") != 0 && suggest_under(p, sg->home)) {
		anchor = "~/";
		root = strlen(sg->home) + 1;
		whole = false;
	} else if (suggest_under(p, "/tmp")) {
		anchor = "/tmp/";
		root = 5;
	}
	if (anchor && root <= len) {
		if (a->outcome == POLICY_ALLOW) {
			if (whole)
				take_file(l, suggest_format("%s**", anchor), a->faction, NULL);
			for (const char *s = strchr(p + root, '/'); s && !has_lost(p, (size_t)(s - p));
			     s = strchr(s + 1, '/'))
				take_file(l, path_pattern(anchor, p, root, (size_t)(s - p), "/**"),
					  a->faction, NULL);
		}
		if (named)
			take_file(l, path_pattern(anchor, p, root, len, ""), a->faction, NULL);
	} else if (named) {
		take_file(l, path_pattern("", p, 0, len, ""), a->faction, NULL);
	}
	l->exact = l->n;
	if (!lost)
		take_file(l, strdup(p), a->faction, "exact");
}

/* A network rule item for destination. */
static char *network_item(const char *destination)
{
	char *q = suggest_yaml_quoted(destination);
	char *item = q ? suggest_format("network: { destination: %s }", q) : NULL;
	free(q);
	return item;
}

/* A destination's candidates: the host (any port), then host:port. */
static void network_candidates(const struct action *a, struct list *l)
{
	bool v6 = strchr(a->host, ':') != NULL;
	char *d = suggest_format("%s", a->host);
	list_take(l, d ? network_item(d) : NULL);
	free(d);
	l->exact = l->n;
	d = suggest_format(v6 ? "[%s]:%u" : "%s:%u", a->host, a->port);
	list_take(l, d ? network_item(d) : NULL);
	free(d);
}

/* ---- choosing the rules ----------------------------------------------------------- */

/* True when a needs a rule of its own: everything but an allowed read (the default allows reads). */
static bool needs_rule(const struct action *a)
{
	return !(a->kind == K_FILE && a->faction == POLICY_FILE_READ && a->outcome == POLICY_ALLOW);
}

/* Adds a rule for candidate c, covering every action of outcome d it covers. */
static void add_rule(struct suggest *sg, struct candidate *c, const struct action *a)
{
	struct rule *r = grow_array(sg->r, &sg->rcap, sg->nr + 1, sizeof *r, 64);
	if (!r) {
		sg->oom = true;
		return;
	}
	sg->r = r;
	r = &sg->r[sg->nr];
	*r = (struct rule){ .list = a->outcome == POLICY_DENY  ? POLICY_LIST_DENY
				    : a->outcome == POLICY_ASK ? POLICY_LIST_ASK
							       : POLICY_LIST_ALLOW,
			    .kind = a->kind, .faction = a->faction, .yaml = c->yaml, .example = a };
	c->yaml = NULL;
	for (size_t i = 0; i < sg->na; i++) {
		struct action *b = &sg->a[i];
		if (b->kind != a->kind || b->outcome != a->outcome || b->rule >= 0 || !suggest_covers(c, b))
			continue;
		b->rule = (long)sg->nr;
		r->events += b->count;
		r->actions++;
		for (int k = 0; k < BY_MAX; k++)
			r->by[k] += b->by[k];
		if (!r->reason && b->reason)
			r->reason = b->reason;
	}
	sg->nr++;
}

/*
 * True when candidate c covers something a left-out carried-over deny rule
 * denies: an action of the log it would have denied (those get exact rules
 * of their own), or one of its patterns made concrete (its probes).
 */
static bool opens(const struct suggest *sg, const struct candidate *c)
{
	for (size_t i = 0; i < sg->na; i++)
		if (sg->a[i].opened && suggest_covers(c, &sg->a[i]))
			return true;
	for (size_t k = 0; k < sg->nc; k++)
		for (size_t j = 0; j < sg->c[k].nprobe; j++)
			if (suggest_covers(c, &sg->c[k].probe[j]))
				return true;
	return false;
}

/*
 * The first of a's candidates that covers a and no action the log decided
 * otherwise becomes a rule.  An allow or ask rule that is not exact must not
 * cover what a left-out carried-over deny rule denies (opens()): a human's
 * yes to one action is a yes to that action, not to the rule's whole reach.  Returns false when none does.  A denied or
 * asked path with U+FFFD has only its glob: it becomes the rule even when it
 * covers more (a deny is better wider than never matching); suggest_verify() then
 * names what it decides otherwise.
 */
static bool choose(struct suggest *sg, const struct action *a)
{
	struct list l = { .exact = SIZE_MAX };
	bool done = false;
	bool guard = a->outcome != POLICY_DENY; /* an allow or ask rule must not open a left-out rule */
	bool widen = a->kind == K_FILE && a->outcome != POLICY_ALLOW && has_lost(a->path, strlen(a->path));
	if (a->kind == K_EXEC)
		exec_candidates(sg, a, &l);
	else if (a->kind == K_FILE)
		file_candidates(sg, a, &l);
	else
		network_candidates(a, &l);
	if (l.oom)
		sg->oom = true;
	for (size_t i = 0; i < l.n && !done; i++) {
		struct candidate c = { .yaml = l.item[i] };
		l.item[i] = NULL;
		if (suggest_candidate_compile(sg, &c) && suggest_covers(&c, a) &&
		    !(guard && i < l.exact && opens(sg, &c))) {
			bool pure = true;
			for (size_t j = 0; j < sg->na && pure; j++) {
				const struct action *b = &sg->a[j];
				pure = b->kind != a->kind || b->outcome == a->outcome || !suggest_covers(&c, b);
			}
			if (!pure && widen)
				airlock_err("suggest: %s:%lu: the path's name holds bytes the log could "
					    "not record (U+FFFD); its glob %s also covers what the log "
					    "decided otherwise",
					    sg->log_name, a->line, c.yaml);
			if (pure || widen) {
				add_rule(sg, &c, a);
				done = true;
			}
		}
		suggest_candidate_free(&c);
	}
	list_free(&l);
	return done;
}

void suggest_choose_all(struct suggest *sg)
{
	static const enum policy_decision order[] = { POLICY_DENY, POLICY_ASK, POLICY_ALLOW };
	for (size_t o = 0; o < 3; o++)
		for (size_t i = 0; i < sg->na && !sg->oom; i++) {
			struct action *a = &sg->a[i];
			if (a->outcome != order[o] || a->rule >= 0 || !needs_rule(a) || a->kept)
				continue; /* kept: a carried-over rule denies it */
			if (choose(sg, a))
				continue;
			if (a->kind == K_FILE && has_lost(a->path, strlen(a->path))) {
				a->unnamed = true;
				airlock_err("suggest: %s:%lu: the path's name holds bytes the log could "
					    "not record (U+FFFD): no allow rule can name it exactly; left "
					    "to the default",
					    sg->log_name, a->line);
			} else
				airlock_err("suggest: %s:%lu: no rule can tell this %s from what was "
					    "decided otherwise; left to the default",
					    sg->log_name, a->line,
					    a->kind == K_EXEC ? "command" : a->kind == K_FILE ? "file" : "destination");
		}
}
