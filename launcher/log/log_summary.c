/* log_summary.c — `airlock log --summary`: per session, what the agent ran, wrote, reached, and what was denied or asked. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/termtext.h"
#include "launcher/checkpoint/journal.h"
#include "launcher/checkpoint/store.h"
#include "launcher/log/audit.h"
#include "launcher/log/logread.h"
#include "policy/policy.h"

/* Rows a group prints before "… N more". */
#define SUMMARY_ROWS 20

/* One row of a group: up to three key parts and its counts. */
struct row {
	char *key;      /* owned; the parts joined by '\x1f', for lookup */
	const char *part[3]; /* point into key (split in place at the separators) */
	unsigned long allow, deny, n;
	unsigned long long up, down; /* bytes, network rows */
};

/* Rows keyed by their parts: an array plus an open-addressing index. */
struct group {
	struct row *rows;
	size_t n, cap;
	size_t *index; /* slots hold row + 1; 0 is empty */
	size_t nindex;
};

enum group_id {
	G_COMMANDS = 0, /* program: allow, deny */
	G_WRITES,       /* path: allow, deny */
	G_READS_DENIED, /* path: n */
	G_NETWORK,      /* destination: allow, deny, bytes */
	G_DENIES,       /* what, rule: n */
	G_ASKS,         /* what, who, answer: n */
	G_MAX
};

/* One session's block: what the log says of it, and its counts. */
struct session_summary {
	struct log_session about;
	unsigned long allow, deny, asked;
	struct group g[G_MAX];
};

struct log_summary {
	struct session_summary *s;
	size_t n, cap;
	bool oom; /* something could not be counted: said once at the end */
};

/* ---- groups ---------------------------------------------------------------------- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static int reindex(struct group *g, size_t nindex)
{
	size_t *ix = calloc(nindex, sizeof *ix);
	if (!ix)
		return -1;
	for (size_t i = 0; i < g->n; i++) {
		size_t j = hash(g->rows[i].key) & (nindex - 1);
		while (ix[j])
			j = (j + 1) & (nindex - 1);
		ix[j] = i + 1;
	}
	free(g->index);
	g->index = ix;
	g->nindex = nindex;
	return 0;
}

/* The row for parts a, b, c (b and c may be NULL), added when new; NULL when out of memory. */
static struct row *group_row(struct group *g, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0, lc = c ? strlen(c) : 0;
	char *key = malloc(la + lb + lc + 3);
	if (!key)
		return NULL;
	snprintf(key, la + lb + lc + 3, "%s\x1f%s\x1f%s", a, b ? b : "", c ? c : "");
	if ((g->n + 1) * 2 > g->nindex && reindex(g, g->nindex ? g->nindex * 2 : 64) < 0) {
		free(key);
		return NULL;
	}
	size_t j = hash(key) & (g->nindex - 1);
	for (; g->index[j]; j = (j + 1) & (g->nindex - 1))
		if (strcmp(g->rows[g->index[j] - 1].key, key) == 0) {
			free(key);
			return &g->rows[g->index[j] - 1];
		}
	struct row *rows = grow_array(g->rows, &g->cap, g->n + 1, sizeof *rows, 16);
	if (!rows) {
		free(key);
		return NULL;
	}
	g->rows = rows;
	struct row *r = &g->rows[g->n];
	*r = (struct row){ .key = key };
	g->index[j] = ++g->n;
	return r;
}

static void group_free(struct group *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->rows[i].key);
	free(g->rows);
	free(g->index);
}

/* ---- adding events --------------------------------------------------------------- */

struct log_summary *log_summary_new(void)
{
	return calloc(1, sizeof(struct log_summary));
}

static struct session_summary *find_session(struct log_summary *s, const char *id)
{
	for (size_t i = s->n; i-- > 0;) /* the last one is the likeliest */
		if (strcmp(s->s[i].about.id, id) == 0)
			return &s->s[i];
	struct session_summary *p = grow_array(s->s, &s->cap, s->n + 1, sizeof *p, 8);
	if (!p)
		return NULL;
	s->s = p;
	struct session_summary *x = &s->s[s->n];
	*x = (struct session_summary){ .about.id = strdup(id) };
	if (!x->about.id)
		return NULL;
	s->n++;
	return x;
}

/* The text logread_put_what() prints for ev, malloc'ed, or NULL. */
static char *what_text(json_object *ev)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	logread_put_what(f, ev);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Counts one action (exec, file or connect) of session x; false when out of memory. */
static bool note_action(struct session_summary *x, json_object *ev, bool allow, bool deny)
{
	const char *cmd = logread_str(ev, "command"), *file = logread_str(ev, "file");
	const char *dst = logread_str(ev, "network_dst"), *action = logread_str(ev, "action");
	const char *source = logread_str(ev, "source");
	unsigned faction = policy_file_action_parse(action);
	struct row *r = NULL;
	if (cmd) {
		const char *base = strrchr(cmd, '/');
		r = group_row(&x->g[G_COMMANDS], base && base[1] ? base + 1 : cmd, NULL, NULL);
	} else if (file && action && faction != POLICY_FILE_READ) {
		if (faction == POLICY_FILE_WRITE)
			r = group_row(&x->g[G_WRITES], file, NULL, NULL);
		else
			return true;
	} else if (file) {
		if (!deny)
			return true;
		if (!(r = group_row(&x->g[G_READS_DENIED], file, NULL, NULL)))
			return false;
		r->n++;
		return true;
	} else if (dst) {
		long long up, down;
		if (!(r = group_row(&x->g[G_NETWORK], dst, NULL, NULL)))
			return false;
		if (source && strcmp(source, AUDIT_SOURCE_PROXY) == 0 &&
		    (up = logread_num(ev, "bytes_up")) >= 0 && (down = logread_num(ev, "bytes_down")) >= 0) {
			r->up += (unsigned long long)up;
			r->down += (unsigned long long)down;
		}
	} else
		return true;
	if (!r)
		return false;
	r->allow += allow;
	r->deny += deny;
	r->n++;
	return true;
}

void log_summary_add(void *ctx, json_object *ev, const char *line, size_t len,
		     unsigned long lineno)
{
	struct log_summary *s = ctx;
	const char *sid = logread_str(ev, "session_id");
	const char *decision = logread_str(ev, "decision"), *by = logread_str(ev, "decided_by");
	(void)line, (void)len, (void)lineno;
	struct session_summary *x = find_session(s, sid ? sid : "-");
	bool ok = x && log_session_note(&x->about, ev);
	bool action = logread_str(ev, "command") || logread_str(ev, "file") ||
		      logread_str(ev, "network_dst");
	int d = policy_decision_parse(decision);
	bool allow = d == POLICY_ALLOW, deny = d == POLICY_DENY, asked = logread_asked(ev);
	if (ok && action) {
		x->allow += allow;
		x->deny += deny;
		x->asked += asked;
		ok = note_action(x, ev, allow, deny);
	}
	if (ok && (deny || asked)) {
		char *what = what_text(ev);
		const char *rule = logread_str(ev, "rule");
		struct row *r = NULL;
		if (what && deny)
			r = group_row(&x->g[G_DENIES], what, rule ? rule : "", NULL); /* "": the default */
		if (r)
			r->n++;
		if (what && asked && (r = group_row(&x->g[G_ASKS], what, by, decision ? decision : "-")))
			r->n++;
		ok = what && r;
		free(what);
	}
	if (!ok)
		s->oom = true;
}

void log_summary_free(struct log_summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct session_summary *x = &s->s[i];
		log_session_free(&x->about);
		for (int g = 0; g < G_MAX; g++)
			group_free(&x->g[g]);
	}
	free(s->s);
	free(s);
}

/* ---- printing -------------------------------------------------------------------- */

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Splits each row's key into its parts, then sorts: count descending, then name. */
static void prepare(struct group *g)
{
	for (size_t i = 0; i < g->n; i++) {
		struct row *r = &g->rows[i];
		char *p = r->key;
		for (int k = 0; k < 3; k++) {
			r->part[k] = p;
			p += strcspn(p, "\x1f");
			if (*p)
				*p++ = '\0';
		}
	}
	if (g->n > 1)
		qsort(g->rows, g->n, sizeof *g->rows, by_count);
}

/* A group's title and column heads, or "none". */
static bool heading(FILE *f, const char *title, const struct group *g, const char *columns)
{
	fprintf(f, "  %s", title);
	if (g->n == 0) {
		fputs(": none\n", f);
		return false;
	}
	fprintf(f, " (%zu)\n      %s\n", g->n, columns);
	return true;
}

static void more(FILE *f, const struct group *g)
{
	if (g->n > SUMMARY_ROWS)
		fprintf(f, "      \u2026 %zu more\n", g->n - SUMMARY_ROWS);
}

static void print_group(FILE *f, const char *title, struct group *g, enum group_id id)
{
	static const char *const columns[G_MAX] = {
		[G_COMMANDS] = "allow   deny  program",
		[G_WRITES] = "allow   deny  path",
		[G_READS_DENIED] = "count  path",
		[G_NETWORK] = "allow   deny    bytes up  bytes down  destination",
		[G_DENIES] = "count  what  [rule]",
		[G_ASKS] = "count  answer  by        what",
	};
	prepare(g);
	if (!heading(f, title, g, columns[id]))
		return;
	for (size_t i = 0; i < g->n && i < SUMMARY_ROWS; i++) {
		const struct row *r = &g->rows[i];
		switch (id) {
		case G_COMMANDS:
		case G_WRITES:
			fprintf(f, "      %5lu  %5lu  ", r->allow, r->deny);
			break;
		case G_NETWORK:
			fprintf(f, "      %5lu  %5lu  %10llu  %10llu  ", r->allow, r->deny, r->up,
				r->down);
			break;
		case G_ASKS:
			fprintf(f, "      %5lu  ", r->n);
			termtext_put_text(f, r->part[2]);
			fprintf(f, "%*s", (int)(strlen(r->part[2]) < 6 ? 6 - strlen(r->part[2]) : 0), "");
			fputs("  ", f);
			termtext_put_text(f, r->part[1]);
			fprintf(f, "%*s", (int)(strlen(r->part[1]) < 8 ? 8 - strlen(r->part[1]) : 0), "");
			fputs("  ", f);
			break;
		default:
			fprintf(f, "      %5lu  ", r->n);
		}
		/*
		 * Names (programs, paths, destinations, rules' files) are quoted as
		 * everywhere in `airlock log`; the what of denies and asks is
		 * already quoted that way by logread_put_what().
		 */
		if (id == G_DENIES || id == G_ASKS)
			fputs(r->part[0], f);
		else
			termtext_put_word(f, r->part[0]);
		if (id == G_DENIES) {
			fputs("  [", f);
			if (r->part[1][0])
				termtext_put_word(f, r->part[1]);
			else
				fputs("the default", f);
			fputc(']', f);
		}
		fputc('\n', f);
	}
	more(f, g);
}

/* "  LABEL      VALUE" with the value made safe, or "not recorded". */
static void field(FILE *f, const char *label, const char *value)
{
	fprintf(f, "  %-10s ", label);
	termtext_put_text(f, value ? value : "not recorded");
	fputc('\n', f);
}

static void print_session(FILE *f, struct session_summary *x, bool color)
{
	const struct log_session *a = &x->about;
	long long t0, t1;
	unsigned ms0, ms1;
	fputs(color ? "\033[1msession " : "session ", f);
	termtext_put_text(f, a->id);
	fputs(color ? "\033[0m\n" : "\n", f);
	fprintf(f, "  %-10s ", "start");
	logread_put_time(f, a->first_ts, true);
	fprintf(f, "\n  %-10s ", "end");
	if (!a->end_ts) /* the last event is not the end: the session may still be running */
		fputs("(no end event: running, or the launcher was killed)", f);
	else {
		logread_put_time(f, a->end_ts, true);
		if (logread_time(a->first_ts, &t0, &ms0) == 0 &&
		    logread_time(a->end_ts, &t1, &ms1) == 0)
			fprintf(f, "  (%.3f s)",
				(double)(t1 - t0) + ((double)ms1 - (double)ms0) / 1000.0);
	}
	fputc('\n', f);
	field(f, "agent", a->agent);
	field(f, "workspace", a->workspace);
	field(f, "policy", a->policy);
	field(f, "exit", a->exit);
	fprintf(f, "  %-10s %lu: %lu allowed, %lu denied, %lu asked\n", "events",
		x->allow + x->deny, x->allow, x->deny, x->asked);
	char *root = store_root(getenv("HOME"));
	size_t saved, created;
	if (root && ckpt_counts(root, a->id, &saved, &created) == 0)
		fprintf(f, "  %-10s %zu saved, %zu created, `airlock diff %s`\n", "checkpoint", saved,
			created, a->id);
	free(root);
	print_group(f, "commands run", &x->g[G_COMMANDS], G_COMMANDS);
	print_group(f, "files written", &x->g[G_WRITES], G_WRITES);
	print_group(f, "files read, denied", &x->g[G_READS_DENIED], G_READS_DENIED);
	print_group(f, "network destinations", &x->g[G_NETWORK], G_NETWORK);
	print_group(f, "denies", &x->g[G_DENIES], G_DENIES);
	print_group(f, "asks", &x->g[G_ASKS], G_ASKS);
}

void log_summary_print(FILE *f, const struct log_summary *s, bool color)
{
	if (s->n == 0)
		fputs("no events\n", f);
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			fputc('\n', f);
		print_session(f, &s->s[i], color);
	}
	if (s->oom)
		fputs("airlock: log: out of memory: the counts above are incomplete\n", stderr);
}
