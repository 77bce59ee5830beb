/* emit.c — `airlock suggest` writes the policy: a commented header, the rules by list, the carried-over deny rules, the kernel layer; then checks it against the log. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/launcher.h"
#include "launcher/suggest/suggest.h"

static const char *const by_text[BY_MAX] = { "by the policy", "by a human", "by session memory",
					     "by --headless", "by a timeout", "by another" };

/* A comment's text: one line, control characters as \xNN, at most max bytes (then "..."). */
static void put_comment_text(FILE *f, const char *s, size_t max)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++, n++) {
		if (n >= max) {
			fputs("...", f);
			return;
		}
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

/* suggest_example_text(a) in a comment: one line, at most 100 bytes. */
static void put_example(FILE *f, const struct action *a)
{
	char *buf = suggest_example_text(a);
	if (buf)
		put_comment_text(f, buf, 100);
	free(buf);
}

/* ---- the policy text -------------------------------------------------------------- */

static void put_rule(FILE *f, const struct rule *r)
{
	static const char *const verbs[POLICY_LIST_MAX] = { "denied", "asked", "allowed" };
	fprintf(f, "  # %lu event%s", r->events, r->events == 1 ? "" : "s");
	if (r->actions > 1)
		fprintf(f, " (%lu distinct)", r->actions);
	fprintf(f, " %s", verbs[r->list]);
	const char *sep = " ";
	for (int k = 0; k < BY_MAX; k++)
		if (r->by[k]) {
			fprintf(f, "%s%s", sep, by_text[k]);
			if (r->by[k] != r->events)
				fprintf(f, " (%lu)", r->by[k]);
			sep = ", ";
		}
	fputs(r->actions > 1 ? ", e.g. " : ": ", f);
	put_example(f, r->example);
	fprintf(f, "\n  - %s", r->yaml);
	if (r->list != POLICY_LIST_ALLOW) {
		fputs("\n    reason: ", f);
		suggest_put_yaml(f, r->reason ? r->reason : r->list == POLICY_LIST_DENY
								? "denied in the recorded session"
								: "asked about in the recorded session");
	}
	fputc('\n', f);
}

static int by_list_kind_count(const void *x, const void *y)
{
	const struct rule *a = x, *b = y;
	if (a->list != b->list)
		return a->list < b->list ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->events != b->events)
		return a->events > b->events ? -1 : 1;
	return strcmp(a->yaml, b->yaml);
}

/*
 * The directories the allowed writes outside the workspace, /tmp, /dev and
 * /proc would need in sandbox.write, each once, into dirs (malloc'ed) with
 * an action that needs it in ex.  How many.
 */
static size_t outside_dirs(const struct suggest *sg, char **dirs, const struct action **ex)
{
	size_t n = 0;
	for (size_t i = 0; i < sg->na; i++) {
		const struct action *a = &sg->a[i];
		if (a->kind != K_FILE || a->faction != POLICY_FILE_WRITE || a->outcome != POLICY_ALLOW ||
		    a->kept || (sg->workspace && suggest_under(a->path, sg->workspace)) ||
		    suggest_under(a->path, "/tmp") || suggest_under(a->path, "/dev") ||
		    suggest_under(a->path, "/proc"))
			continue;
		const char *slash = strrchr(a->path, '/');
		size_t len = slash == a->path ? 1 : (size_t)(slash - a->path);
		char *d = strndup(a->path, len);
		bool seen = !d;
		for (size_t k = 0; k < n && !seen; k++)
			seen = strcmp(dirs[k], d) == 0;
		if (seen)
			free(d);
		else {
			ex[n] = a;
			dirs[n++] = d;
		}
	}
	return n;
}

/* The n directories (freed) in a comment, ~/ for the home directory's, each with its example. */
static void put_outside(FILE *f, const struct suggest *sg, char **dirs, const struct action **ex,
			size_t n)
{
	fputs("  # Not widened: the allowed writes outside the workspace would need these\n"
	      "  # directories in sandbox.write.  Until they are there, the kernel layer\n"
	      "  # refuses those writes whatever the allow rules say (it may have refused\n"
	      "  # them in the recorded run too: the log cannot tell).  Widening the kernel\n"
	      "  # layer is your call (it opens every file in them to the agent's writes):\n"
	      "  # add them by hand, as `write: [DIR, ...]` here, if you mean to.\n",
	      f);
	for (size_t k = 0; k < n; k++) {
		fputs("  #   ", f);
		if (strcmp(sg->home, "/") != 0 && suggest_under(dirs[k], sg->home) &&
		    strlen(dirs[k]) > strlen(sg->home)) {
			char *rel = suggest_format("~/%s", dirs[k] + strlen(sg->home) + 1);
			put_comment_text(f, rel ? rel : dirs[k], 300);
			free(rel);
		} else
			put_comment_text(f, dirs[k], 300);
		fputs("   (", f);
		put_example(f, ex[k]);
		fprintf(f, ", line %lu)\n", ex[k]->line);
		free(dirs[k]);
	}
}

/*
 * The kernel layer: the directories the allowed writes outside the
 * workspace would need in sandbox.write, as a comment and on stderr: never
 * written as sandbox.write entries.  The shim allowed those writes, but the
 * kernel layer (read-only outside sandbox.write) may have refused them, and
 * the log cannot tell; widening the kernel layer is the user's call.  Their
 * allow rules stay: the kernel layer still refuses the writes until the
 * user adds the directory.
 */
static void put_sandbox(FILE *f, const struct suggest *sg)
{
	char **dirs = calloc(sg->na + 1, sizeof *dirs);
	const struct action **ex = calloc(sg->na + 1, sizeof *ex);
	size_t n = dirs && ex ? outside_dirs(sg, dirs, ex) : 0;
	if (dirs && ex) {
		fputs("\n# The kernel layer: the workspace is writable, /tmp is the sandbox's own.\n"
		      "sandbox:\n  network: proxy\n",
		      f);
		if (n) {
			put_outside(f, sg, dirs, ex, n);
			airlock_err("suggest: the allowed writes outside the workspace would need %zu "
				    "director%s in sandbox.write; not added (listed in a comment): "
				    "widening the kernel layer is your call",
				    n, n == 1 ? "y" : "ies");
		}
	}
	free(dirs);
	free(ex);
}

static void put_header(FILE *f, const struct suggest *sg, const char *filter)
{
	unsigned long allow = 0, deny = 0, ask = 0, asked = 0;
	for (size_t i = 0; i < sg->na; i++) {
		const struct action *a = &sg->a[i];
		unsigned long *n = a->outcome == POLICY_ALLOW ? &allow : a->outcome == POLICY_ASK ? &ask : &deny;
		*n += a->count + a->conflicts;
		asked += a->count - a->by[BY_POLICY];
	}
	fputs("# airlock policy suggested by `airlock suggest` from the audit log\n#   ", f);
	put_comment_text(f, sg->log_name, 200);
	if (filter) {
		fputs(", session ", f);
		put_comment_text(f, filter, 100);
	}
	fputs("\n#\n", f);
	for (size_t i = 0; i < sg->ns; i++) {
		const struct log_session *x = &sg->s[i];
		fputs("# session ", f);
		put_comment_text(f, x->id[0] ? x->id : "(none)", 64);
		fputs(": ", f);
		put_comment_text(f, x->agent ? x->agent : "agent not recorded", 200);
		fputs("\n#   from ", f);
		put_comment_text(f, x->first_ts ? x->first_ts : "?", 64);
		fputs(" to ", f);
		put_comment_text(f, x->last_ts ? x->last_ts : "?", 64);
		fputs(", exit status ", f);
		put_comment_text(f, x->exit ? x->exit : "not recorded", 64);
		fputs("\n", f);
	}
	fprintf(f, "# %lu events, %zu distinct actions: %lu allowed, %lu denied", sg->events, sg->na,
		allow, deny);
	if (ask)
		fprintf(f, ", %lu asked and not answered", ask);
	fprintf(f, "; %lu of them answered, not decided by the policy.\n", asked);
	fputs("# ./ is the workspace ", f);
	put_comment_text(f, sg->workspace ? sg->workspace : "(none known: paths stay absolute)", 200);
	fputs(", ~/ the home directory ", f);
	put_comment_text(f, sg->home, 200);
	fputs(".\n#\n"
	      "# Each rule covers what its comment says and nothing the log decided otherwise:\n"
	      "# allow rules widen (to an argument prefix, ./**, a directory, a host) only while\n"
	      "# they cover nothing that was denied.  The deny rules of the built-in default\n"
	      "# policy, and of the policy the session ran under, are carried over after the\n"
	      "# log's own, less any that would deny what a person or a rule of the recorded\n"
	      "# policy allowed (not just its default).  Read it before\n"
	      "# you use it:\n"
	      "#   airlock check --policy FILE           # valid?\n"
	      "#   airlock run --policy FILE -- AGENT    # what the log never saw asks\n"
	      "version: 1\n\n"
	      "# What the log never saw: reads are allowed, everything else waits for a human.\n"
	      "default:\n  exec: ask\n  read: allow\n  write: ask\n  connect: ask\n",
	      f);
}

/* A rule's item on one line, for a comment: its lines joined by ", ". */
static void put_item_comment(FILE *f, const char *yaml)
{
	for (const char *p = yaml; *p;) {
		size_t n = strcspn(p, "\n");
		char *line = strndup(p, n);
		if (line)
			put_comment_text(f, line, 200);
		free(line);
		p += n;
		if (*p) {
			fputs(", ", f);
			p += strspn(p, "\n ");
		}
	}
}

/* The carried-over deny rules, a block per policy they come from (in the deny list). */
static void put_carried(FILE *f, const struct suggest *sg)
{
	for (size_t b = 0; b < sg->nfrom; b++) {
		bool any = false;
		for (size_t k = 0; k < sg->nc && !any; k++)
			any = sg->c[k].from == b;
		if (!any)
			continue;
		fputs("\n  # ---- carried over from ", f);
		put_comment_text(f, sg->from[b], 300);
		fputs("\n  # Its deny rules, kept whatever the log saw: the paths they name stay\n"
		      "  # masked in the sandbox too.  One that would deny what the log recorded\n"
		      "  # as allowed or asked about is left out, as said here.\n",
		      f);
		for (size_t k = 0; k < sg->nc; k++) {
			const struct carried *c = &sg->c[k];
			if (c->from != b)
				continue;
			if (c->contra) {
				fputs("  # left out (", f);
				put_comment_text(f, c->where, 200);
				fputs("): ", f);
				put_item_comment(f, c->yaml);
				fputs("\n  #   it would deny ", f);
				put_example(f, c->contra);
				fprintf(f, ", which the log recorded as %s (line %lu): decided otherwise\n",
					c->contra->outcome == POLICY_ALLOW ? "allowed" : "asked about",
					c->contra->line);
				if (c->part)
					fputs("  #   kept, less what the log allowed:\n", f);
				continue;
			}
			if (c->kept) {
				fprintf(f, "  # the learning run did this (%s only by its default); the %s "
					   "deny is kept:\n  #   ",
					c->kept->outcome == POLICY_ALLOW ? "allowed" : "asked about",
					b == 0 ? "built-in" : "carried-over");
				put_example(f, c->kept);
				fprintf(f, " (line %lu)", c->kept->line);
				if (c->nkept > 1)
					fprintf(f, " and %lu more", c->nkept - 1);
				fputc('\n', f);
			}
			fprintf(f, "  - %s\n    reason: ", c->yaml);
			suggest_put_yaml(f, c->reason ? c->reason : "denied by the policy it comes from");
			fputc('\n', f);
		}
	}
}

/* The allowed paths no rule could name (U+FFFD), as a comment; nothing when there are none. */
static void put_unnamed(FILE *f, const struct suggest *sg)
{
	bool first = true;
	for (size_t i = 0; i < sg->na; i++) {
		if (!sg->a[i].unnamed)
			continue;
		if (first)
			fputs("\n# Not named: these paths' names held bytes that are not UTF-8, which the\n"
			      "# log recorded as U+FFFD, so no allow rule can name them exactly; left to\n"
			      "# the default.\n",
			      f);
		first = false;
		fputs("#   ", f);
		put_example(f, &sg->a[i]);
		fprintf(f, " (line %lu)\n", sg->a[i].line);
	}
}

/* Writes the whole policy to f. */
void suggest_put_policy(FILE *f, struct suggest *sg, const char *filter)
{
	bool carried = false;
	for (size_t k = 0; k < sg->nc && !carried; k++)
		carried = !sg->c[k].contra;
	put_header(f, sg, filter);
	if (sg->nr > 1)
		qsort(sg->r, sg->nr, sizeof *sg->r, by_list_kind_count);
	for (int l = 0; l < POLICY_LIST_MAX; l++) {
		bool first = true;
		for (size_t i = 0; i < sg->nr; i++) {
			if ((int)sg->r[i].list != l)
				continue;
			if (first)
				fprintf(f, "\n%s:\n", policy_list_name((enum policy_list)l));
			first = false;
			put_rule(f, &sg->r[i]);
		}
		if (l == POLICY_LIST_DENY && (carried || sg->nc)) {
			if (first && carried)
				fputs("\ndeny:\n", f);
			else if (first)
				fputs("\n# deny: (no rule: the carried-over ones all left out)\n", f);
			put_carried(f, sg);
		}
	}
	put_unnamed(f, sg);
	put_sandbox(f, sg);
}

/* ---- the check --------------------------------------------------------------------- */

/*
 * Decides every action with the policy text as `airlock check` would, and
 * says on stderr which ones it decides otherwise than the log.  The count.
 */
unsigned long suggest_verify(const struct suggest *sg, const char *text, size_t len)
{
	struct policy_error err;
	void *blob = NULL;
	size_t size;
	const struct policy_image *img;
	unsigned long bad = 0, kept = 0;
	struct policy *p = policy_load_buffer("<suggested>", text, len, &err);
	struct policy_context ctx = { .home = sg->home, .workspace = sg->workspace ? sg->workspace : "/" };
	if (!p || policy_compile(p, &ctx, &blob, &size, &err) != 0 ||
	    policy_image_open(blob, size, &img, NULL, 0) != 0) {
		char msg[1600];
		policy_error_format(&err, msg, sizeof msg);
		airlock_err("suggest: the suggested policy does not load (a bug): %s", msg);
		policy_free(p);
		free(blob);
		return 1;
	}
	for (size_t i = 0; i < sg->na; i++) {
		const struct action *a = &sg->a[i];
		enum policy_decision d = suggest_decide(img, a).decision;
		if (d == a->outcome)
			continue;
		if (a->kept && d == POLICY_DENY) { /* expected: a carried-over deny rule was kept for it */
			char *what = suggest_example_text(a);
			kept++;
			airlock_err("suggest: %s:%lu: kept denied: %s, which the log recorded as %s only by "
				    "%s; a carried-over deny rule denies it",
				    sg->log_name, a->line, what ? what : "this action",
				    a->outcome == POLICY_ALLOW ? "allowed" : "asked about", suggest_which_default(a));
			free(what);
			continue;
		}
		bad++;
		airlock_err("suggest: %s:%lu: the suggested policy decides %s, the log %s",
			    sg->log_name, a->line, policy_decision_name(d),
			    policy_decision_name(a->outcome));
	}
	if (kept)
		airlock_err("suggest: %lu action%s kept denied (above): allowed or asked about only by a "
			    "default, not by a person or a rule, so the carried-over deny rules stay; "
			    "not counted as decided otherwise",
			    kept, kept == 1 ? "" : "s");
	policy_free(p);
	free(blob);
	return bad;
}
