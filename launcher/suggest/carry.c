/* carry.c — `airlock suggest` carries over the deny rules of the built-in default policy and of the sessions' policies, less what the log contradicts, and what those left out still deny. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "launcher/cli/launcher.h"
#include "launcher/suggest/suggest.h"

/*
 * A rule of a loaded policy as a list item after "- " (continuation lines
 * indented 4), without its reason: the same rule when loaded again.
 */
static char *rule_item(const struct policy_rule *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	if (r->kind == POLICY_RULE_COMMAND) {
		fputs("command: ", f);
		suggest_put_yaml(f, r->command);
		if (r->args) {
			fputs("\n    args: ", f);
			suggest_put_yaml(f, r->args);
		}
	} else if (r->kind == POLICY_RULE_FILE) {
		fputs("file: { path: ", f);
		suggest_put_yaml(f, r->path);
		if (r->actions != POLICY_FILE_ALL) {
			bool one = (r->actions & (r->actions - 1)) == 0;
			const char *sep = one ? ", action: " : ", action: [";
			for (unsigned i = 0; i < POLICY_FILE_ACTIONS; i++)
				if (r->actions & (1u << i)) {
					fprintf(f, "%s%s", sep, policy_file_action_name(1u << i));
					sep = ", ";
				}
			if (!one)
				fputc(']', f);
		}
		fputs(" }", f);
	} else {
		fputs("network: { destination: ", f);
		suggest_put_yaml(f, r->destination);
		fputs(" }", f);
	}
	if (r->match != POLICY_MATCH_GLOB)
		fprintf(f, "\n    match: %s", policy_match_name(r->match));
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * True when a person (decided_by human or session) or an explicit rule of the
 * recorded policy (the event names it) allowed or asked about an event of a:
 * a yes that leaves a carried-over deny rule out.  Allowed only by the
 * recorded policy's default, or by --default-allow, it does not.
 */
static bool said_yes(const struct action *a)
{
	return a->outcome != POLICY_DENY && a->yes > 0;
}

/* Which default alone allowed (or asked about) a, not said_yes(): for messages. */
const char *suggest_which_default(const struct action *a)
{
	bool policy = a->by[BY_POLICY] > 0, dflt = a->by[BY_DEFAULT] > 0;
	unsigned long n = a->by[BY_POLICY] + a->by[BY_DEFAULT];
	return n != a->count || (policy && dflt) ? "a default"
	       : dflt                            ? "--default-allow"
						 : "its policy's default";
}

/* The first action a person or a rule allowed or asked about that rule c denies, or NULL. */
static const struct action *contradicted(const struct suggest *sg, const struct candidate *c)
{
	for (size_t i = 0; i < sg->na; i++)
		if (said_yes(&sg->a[i]) && suggest_covers(c, &sg->a[i]))
			return &sg->a[i];
	return NULL;
}

/* ---- what a left-out rule still denies: a regex less the log's actions ------------ */

/* s (n bytes) with the ERE specials quoted by '\'. */
static void put_ere_literal(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strchr(".[]()*+?{}|^$\\", s[i]))
			fputc('\\', f);
		fputc(s[i], f);
	}
}

/*
 * An ERE for every string s such that prefix + s is none of the n words w
 * (each beginning with prefix, of depth bytes), written to f; false when a
 * byte cannot stand in a bracket expression here ('[', '\').  below: s is
 * empty or begins with '/' (what is below a path).  path: the words are
 * paths, and the directories above them are left out too (the sandbox
 * would mask a directory denied, and what the log allowed in it with it).
 */
static bool put_ere_not(FILE *f, const char *const *w, size_t n, size_t depth, bool below,
			bool path)
{
	char kids[256];
	size_t nk = 0;
	bool end = false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)w[i][depth];
		if (!ch) {
			end = true;
			continue;
		}
		if (ch == '[' || ch == '\\')
			return false;
		if (!memchr(kids, ch, nk))
			kids[nk++] = (char)ch;
	}
	if (path && memchr(kids, '/', nk))
		end = true; /* a directory above a word */
	if (nk == 0) { /* only a word ends here: anything longer */
		fputs(below ? "/.+" : ".+", f);
		return true;
	}
	const char *sep = "|";
	if (below) {
		fputs("(", f);
		sep = "";
	} else {
		fputs("([^", f); /* ']' first, '-' last: literal */
		if (memchr(kids, ']', nk))
			fputc(']', f);
		for (size_t k = 0; k < nk; k++)
			if (kids[k] != ']' && kids[k] != '-')
				fputc(kids[k], f);
		if (memchr(kids, '-', nk))
			fputc('-', f);
		fputs("].*", f);
	}
	for (size_t k = 0; k < nk; k++) {
		if (below && kids[k] != '/')
			return false;
		const char **sub = calloc(n, sizeof *sub);
		size_t ns = 0;
		if (!sub)
			return false;
		for (size_t i = 0; i < n; i++)
			if (w[i][depth] == kids[k])
				sub[ns++] = w[i];
		fputs(sep, f);
		sep = "|";
		put_ere_literal(f, &kids[k], 1);
		bool ok = put_ere_not(f, sub, ns, depth + 1, false, path);
		free(sub);
		if (!ok)
			return false;
	}
	fprintf(f, ")%s", end ? "" : "?");
	return true;
}

/*
 * A regex deny rule item for what left-out rule r still denies less the
 * log's actions it would deny (the n words: each recorded run's arguments
 * joined, or each recorded path): lit (ERE-quoted) + anything not a word
 * (w NULL: lit alone).  head and tail wrap the pattern; NULL when it cannot
 * be written.
 */
static char *residual_item(const char *head, const char *lit, const char *const *w, size_t n,
			   bool below, const char *tail)
{
	char *re = NULL, *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&re, &len);
	if (!f)
		return NULL;
	put_ere_literal(f, lit, strlen(lit));
	bool ok = !w || put_ere_not(f, w, n, strlen(lit), below, below);
	if (fclose(f) != 0 || !ok) {
		free(re);
		return NULL;
	}
	char *q = suggest_yaml_quoted(re);
	buf = q ? suggest_format("%s%s%s", head, q, tail) : NULL;
	free(q);
	free(re);
	return buf;
}

/* ---- carrying over ------------------------------------------------------------------ */

/* Carries over item (taken) after left-out rule at when it compiles and denies nothing the log allowed. */
static void carry_rest(struct suggest *sg, char *item, size_t at)
{
	struct candidate c = { .yaml = item };
	bool seen = !item;
	for (size_t k = 0; k < sg->nc && !seen; k++)
		seen = strcmp(sg->c[k].yaml, item) == 0;
	struct carried *k = NULL;
	if (!seen && suggest_candidate_compile(sg, &c) && !contradicted(sg, &c) &&
	    (k = grow_array(sg->c, &sg->ccap, sg->nc + 1, sizeof *k, 64))) {
		sg->c = k;
		const struct carried *o = &sg->c[at];
		sg->c[sg->nc] = (struct carried){ .yaml = item, .from = o->from,
						  .reason = suggest_strdup(o->reason, &sg->oom),
						  .where = suggest_strdup(o->where, &sg->oom),
						  .blob = c.blob, .img = c.img };
		sg->nc++;
		sg->c[at].part = true;
		c.yaml = NULL;
		c.blob = NULL;
	}
	suggest_candidate_free(&c);
}

/* True when glob g names one string: none of * ? [ \ in it. */
static bool literal(const char *g)
{
	return !strpbrk(g, "*?[\\");
}

/* A glob command rule on one program whose args are none, or a literal then '*'. */
static bool one_program(const struct policy_rule *r)
{
	size_t n = r->args ? strlen(r->args) : 0;
	return r->kind == POLICY_RULE_COMMAND && r->match == POLICY_MATCH_GLOB && literal(r->command) &&
	       (!r->args || (n > 0 && r->args[n - 1] == '*' && strcspn(r->args, "*?[\\") == n - 1));
}

/* A glob file rule on one path (and what is below it): absolute, ~/ or ./. */
static bool one_path(const struct policy_rule *r)
{
	return r->kind == POLICY_RULE_FILE && r->match == POLICY_MATCH_GLOB && literal(r->path) &&
	       (strncmp(r->path, "~/", 2) == 0 || r->path[0] == '/' || strncmp(r->path, "./", 2) == 0);
}

/*
 * The arguments, joined, of each run the log said yes to (said_yes()) that
 * img denies, into w and joined (malloc'ed, the same string in both); how
 * many.  *ok turns false when a run's arguments were cut (its others are
 * unknown) or out of memory: then no regex can leave the runs out.
 */
static size_t yes_args(const struct suggest *sg, const struct policy_image *img, const char **w,
		       char **joined, bool *ok)
{
	size_t n = 0;
	for (size_t i = 0; i < sg->na && *ok; i++) {
		const struct action *a = &sg->a[i];
		if (a->kind != K_EXEC || !said_yes(a) || suggest_decide(img, a).rule != 0)
			continue;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (!f) {
			*ok = false;
			break;
		}
		suggest_put_args(f, a, a->nargs);
		*ok = fclose(f) == 0 && !a->truncated; /* a truncated run: its other arguments unknown */
		if (!*ok) {
			free(buf);
			break;
		}
		w[n] = joined[n] = buf;
		n++;
	}
	return n;
}

/* one_program() rule r (at at): a regex rule for its program with any arguments but the log's yes. */
static void command_remains(struct suggest *sg, const struct policy_rule *r, size_t at,
			    const char **w)
{
	char **joined = calloc(sg->na + 1, sizeof *joined);
	bool ok = joined != NULL;
	size_t n = ok ? yes_args(sg, sg->c[at].img, w, joined, &ok) : 0;
	char *lit = r->args ? strndup(r->args, strlen(r->args) - 1) : strdup("");
	/* "command: \"ERE\"\n    args: " */
	char *head = lit ? residual_item("command: ", r->command, NULL, 0, false, "\n    args: ") : NULL;
	if (ok && n && head)
		carry_rest(sg, residual_item(head, lit, w, n, false, "\n    match: regex"), at);
	free(head);
	free(lit);
	for (size_t i = 0; joined && i < n; i++)
		free(joined[i]);
	free(joined);
}

/* one_path() rule r (at at): per action the log said yes to, a regex rule for any other path below it. */
static void file_remains(struct suggest *sg, const struct policy_rule *r, size_t at, const char **w)
{
	const struct policy_image *img = sg->c[at].img;
	const char *ws = sg->workspace ? sg->workspace : "/";
	size_t pl = strlen(r->path);
	while (pl > 1 && r->path[pl - 1] == '/')
		pl--;
	char *rel = strndup(r->path, pl);
	char *abs = !rel ? NULL
		    : rel[0] == '/' ? strdup(rel)
		    : suggest_join(rel[0] == '~' ? sg->home : ws, rel + 2);
	for (unsigned b = 0; b < POLICY_FILE_ACTIONS && abs; b++) {
		unsigned bit = 1u << b;
		size_t n = 0;
		for (size_t i = 0; i < sg->na; i++) {
			const struct action *a = &sg->a[i];
			if (a->kind == K_FILE && a->faction == bit && said_yes(a) &&
			    (r->actions & bit) && suggest_decide(img, a).rule == 0)
				w[n++] = a->path;
		}
		if (!n)
			continue;
		/* the path itself or below it: lit + ( "" | "/" ... ), less the words */
		char *tail = suggest_format(", action: %s, match: regex }",
					    policy_file_action_name(bit));
		char *item = tail ? residual_item("file: { path: ", abs, w, n, true, tail) : NULL;
		free(tail);
		if (item)
			carry_rest(sg, item, at);
	}
	free(rel);
	free(abs);
}

/*
 * What left-out rule r (at at) still denies less the log's actions it
 * would deny, carried over after it: a command rule on one program whose
 * args are a literal then '*' (or none): a regex for any other arguments; a
 * file rule on one path (and what is below it): a regex for any other path,
 * per action the log allowed.  (A file rule's other actions: carry_rule().)
 */
static void carry_remains(struct suggest *sg, const struct policy_rule *r, size_t at)
{
	const char **w = calloc(sg->na + 1, sizeof *w);
	if (!w) {
		sg->oom = true;
		return;
	}
	if (one_program(r))
		command_remains(sg, r, at, w);
	else if (one_path(r))
		file_remains(sg, r, at, w);
	free(w);
}

/*
 * Carries over deny rule r of the policy source into block unless it is
 * carried already.  One the log contradicts is left out, kept compiled with
 * its probes; a file rule's actions the log did not allow are carried over
 * as a narrower rule of their own (`~/.ssh` with a read allowed: its write
 * and exec).
 */
static void carry_rule(struct suggest *sg, const struct policy_rule *r, size_t block,
		       const char *source)
{
	struct candidate c = { 0 };
	bool seen = false;
	if (!(c.yaml = rule_item(r))) {
		sg->oom = true;
		return;
	}
	for (size_t k = 0; k < sg->nc && !seen; k++)
		seen = strcmp(sg->c[k].yaml, c.yaml) == 0;
	if (!seen && !suggest_candidate_compile(sg, &c)) {
		airlock_err("suggest: %s:%u: this deny rule does not compile here; not carried over",
			    source, r->pos.line);
		seen = true;
	}
	struct carried *k = seen ? NULL : grow_array(sg->c, &sg->ccap, sg->nc + 1, sizeof *k, 64);
	if (!seen && !k)
		sg->oom = true;
	if (seen || !k) {
		suggest_candidate_free(&c);
		return;
	}
	sg->c = k;
	size_t at = sg->nc++;
	k = &sg->c[at];
	*k = (struct carried){ .yaml = c.yaml, .from = block, .contra = contradicted(sg, &c),
			       .reason = suggest_strdup(r->reason, &sg->oom),
			       .where = suggest_format("%s:%u", source, r->pos.line) };
	c.yaml = NULL;
	sg->oom |= !k->where;
	k->blob = c.blob; /* kept compiled: what it denies of the log is said */
	k->img = c.img;
	c.blob = NULL;
	suggest_candidate_free(&c);
	if (!k->contra)
		return;
	suggest_make_probes(sg, k, r);
	if (r->kind == POLICY_RULE_FILE) { /* the actions the log did not allow */
		unsigned allowed = 0;
		for (size_t i = 0; i < sg->na; i++)
			if (sg->a[i].kind == K_FILE && said_yes(&sg->a[i]) &&
			    suggest_decide(k->img, &sg->a[i]).rule == 0)
				allowed |= sg->a[i].faction;
		struct policy_rule rest = *r;
		rest.actions = r->actions & ~allowed;
		if (rest.actions && !sg->oom)
			carry_rest(sg, rule_item(&rest), at);
	}
	if (!sg->oom)
		carry_remains(sg, r, at);
}

/* Carries over p's deny rules not carried already; label heads their block. */
static void carry_policy(struct suggest *sg, const struct policy *p, const char *label)
{
	char **from = grow_array(sg->from, &sg->fcap, sg->nfrom + 1, sizeof *from, 64);
	if (!from || !(from[sg->nfrom] = strdup(label))) {
		sg->oom = true;
		sg->from = from ? from : sg->from;
		return;
	}
	sg->from = from;
	size_t block = sg->nfrom++;
	for (size_t i = 0; i < p->nrules && !sg->oom; i++)
		if (p->rules[i].list == POLICY_LIST_DENY)
			carry_rule(sg, &p->rules[i], block, p->source);
}

/*
 * The policy file session x ran under (a relative name is its workspace's),
 * real path when it exists, malloc'ed; NULL for the built-in one, one the log
 * does not tell (said on stderr), or out of memory.
 */
static char *session_policy(const struct log_session *x)
{
	if (!x->policy || strcmp(x->policy, "<default>") == 0)
		return NULL;
	char *path = NULL, *real;
	if (x->policy[0] == '/')
		path = strdup(x->policy);
	else if (x->workspace)
		path = suggest_format("%s/%s", x->workspace, x->policy);
	if (path && (real = realpath(path, NULL))) {
		free(path);
		path = real;
	}
	if (path || x->policy[0] == '/' || x->workspace)
		return path;
	airlock_err("suggest: session %s ran under the policy %s, relative to a workspace the log "
		    "does not name: its deny rules are not carried over",
		    x->id, x->policy);
	return NULL;
}

/*
 * The deny rules of each recorded session's policy file (a relative name is
 * the session's workspace's; each file once, by its real path) when it
 * still loads; said on stderr when it does not.
 */
static void carry_sessions(struct suggest *sg)
{
	struct policy_error err;
	for (size_t i = 0; i < sg->ns; i++) { /* each policy file by its real path */
		char *path = session_policy(&sg->s[i]);
		free(sg->s[i].policy);
		sg->s[i].policy = path;
	}
	for (size_t i = 0; i < sg->ns && !sg->oom; i++) {
		const struct log_session *x = &sg->s[i];
		struct policy *p;
		char *label, msg[1600];
		bool done = !x->policy;
		for (size_t k = 0; k < i && !done; k++)
			done = sg->s[k].policy && strcmp(sg->s[k].policy, x->policy) == 0;
		if (done)
			continue;
		if (!(p = policy_load_file(x->policy, &err))) {
			policy_error_format(&err, msg, sizeof msg);
			airlock_err("suggest: session %s ran under the policy %s, which does not load now "
				    "(%s): its deny rules are not carried over",
				    x->id, x->policy, msg);
		} else if (!(label = suggest_format("the policy session %s ran under, %s", x->id,
						    x->policy))) {
			sg->oom = true;
		} else {
			carry_policy(sg, p, label);
			free(label);
		}
		policy_free(p);
	}
}

/*
 * What a left-out rule would deny keeps an exact rule (opened); what only a
 * default allowed (or asked about) and a carried-over rule denies stays
 * denied (kept).
 */
static void mark_actions(struct suggest *sg)
{
	for (size_t k = 0; k < sg->nc; k++)
		for (size_t i = 0; i < sg->na && sg->c[k].img && sg->c[k].contra; i++)
			if (sg->a[i].outcome != POLICY_DENY &&
			    suggest_decide(sg->c[k].img, &sg->a[i]).rule == 0)
				sg->a[i].opened = true;
	for (size_t k = 0; k < sg->nc; k++) {
		struct carried *c = &sg->c[k];
		for (size_t i = 0; i < sg->na && c->img && !c->contra; i++) {
			struct action *a = &sg->a[i];
			if (a->outcome == POLICY_DENY || said_yes(a) || suggest_decide(c->img, a).rule != 0)
				continue;
			a->kept = true;
			if (!c->nkept++)
				c->kept = a;
		}
	}
}

/* Says on stderr which carried-over rules are kept against the log, and which are left out. */
static void say_carried(const struct suggest *sg)
{
	for (size_t k = 0; k < sg->nc; k++) {
		const struct carried *c = &sg->c[k];
		char *what = c->kept ? suggest_example_text(c->kept) : NULL;
		if (c->kept)
			airlock_err("suggest: %s: this deny rule is kept: it denies %s, which the log "
				    "recorded as %s only by %s (%s:%lu%s), not by a person or a rule",
				    c->where, what ? what : "an action",
				    c->kept->outcome == POLICY_ALLOW ? "allowed" : "asked about",
				    suggest_which_default(c->kept), sg->log_name, c->kept->line,
				    c->nkept > 1 ? ", and more" : "");
		free(what);
		what = c->contra ? suggest_example_text(c->contra) : NULL;
		if (c->contra)
			airlock_err("suggest: %s: this deny rule is not carried over: it would deny %s, "
				    "which the log recorded as %s (%s:%lu)%s",
				    c->where, what ? what : "an action",
				    c->contra->outcome == POLICY_ALLOW ? "allowed" : "asked about",
				    sg->log_name, c->contra->line,
				    c->part ? "; narrower rules deny the rest of what it denied" : "");
		free(what);
	}
}

void suggest_carry_over(struct suggest *sg)
{
	struct policy_error err;
	size_t len;
	const char *text = policy_default_text(&len);
	struct policy *p = policy_load_buffer("<default>", text, len, &err);
	if (!p) {
		airlock_err("suggest: the built-in default policy does not load (a bug)");
		sg->oom = true;
		return;
	}
	carry_policy(sg, p, "the built-in default policy (what `airlock init` writes)");
	policy_free(p);
	carry_sessions(sg);
	mark_actions(sg);
	say_carried(sg);
}
