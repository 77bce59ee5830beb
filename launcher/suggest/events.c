/* events.c — `airlock suggest` reads the log: each event an action with its outcome, sessions from their launcher events, identical actions merged, the workspace. */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "launcher/cli/launcher.h"
#include "launcher/log/logread.h"
#include "launcher/suggest/suggest.h"

/* "LOG:LINE: message, skipped" on stderr. */
static void bad_line(struct suggest *sg, unsigned long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bad_line(struct suggest *sg, unsigned long line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "airlock: suggest: %s:%lu: ", sg->log_name, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(", skipped\n", stderr);
	sg->skipped++;
}

char *suggest_strdup(const char *s, bool *oom)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		*oom = true;
	return c;
}

void suggest_action_free(struct action *a)
{
	free(a->key);
	free(a->program);
	for (size_t i = 0; i < a->nargs; i++)
		free(a->args[i]);
	free(a->args);
	free(a->path);
	free(a->host);
	free(a->reason);
}

static enum by by_of(const char *s)
{
	int by = channel_decided_by_parse(s);
	return by >= 0 ? (enum by)by : s ? BY_OTHER : BY_POLICY;
}

/* The session's entry, added when new. */
static struct log_session *session_of(struct suggest *sg, const char *id)
{
	for (size_t i = sg->ns; i-- > 0;)
		if (strcmp(sg->s[i].id, id) == 0)
			return &sg->s[i];
	struct log_session *p = grow_array(sg->s, &sg->scap, sg->ns + 1, sizeof *p, 64);
	if (!p)
		return NULL;
	sg->s = p;
	p = &sg->s[sg->ns];
	*p = (struct log_session){ .id = strdup(id) };
	if (!p->id)
		return NULL;
	sg->ns++;
	return p;
}

/* Splits "host:port", "[v6]:port" into a; -1 when it is neither. */
static int parse_destination(const char *s, struct action *a, bool *oom)
{
	const char *host = s, *end, *colon;
	if (s[0] == '[') {
		host = s + 1;
		end = strchr(host, ']');
		if (!end || end[1] != ':')
			return -1;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -1;
		end = colon;
	}
	char *stop;
	unsigned long port = strtoul(colon + 1, &stop, 10);
	if (end == host || !colon[1] || *stop || port < 1 || port > 65535 ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return -1;
	a->host = strndup(host, (size_t)(end - host));
	if (!a->host)
		*oom = true;
	a->port = (unsigned)port;
	return 0;
}

/* The action of an exec event; -1 (reported) when its fields are wrong. */
static int exec_action(struct suggest *sg, json_object *ev, const char *cmd, unsigned long line,
		       struct action *a)
{
	json_object *args, *t;
	if (!*cmd)
		return bad_line(sg, line, "empty command"), -1;
	if (!json_object_object_get_ex(ev, "args", &args))
		args = NULL;
	else if (!json_object_is_type(args, json_type_array))
		return bad_line(sg, line, "'args' is not a list"), -1;
	a->kind = K_EXEC;
	a->program = strdup(cmd);
	a->nargs = args ? json_object_array_length(args) : 0;
	a->args = calloc(a->nargs + 1, sizeof *a->args);
	if (!a->program || !a->args)
		return sg->oom = true, -1;
	for (size_t i = 0; i < a->nargs; i++) {
		json_object *v = json_object_array_get_idx(args, i);
		if (!json_object_is_type(v, json_type_string))
			return bad_line(sg, line, "argument %zu is not a string", i + 1), -1;
		if (!(a->args[i] = strdup(json_object_get_string(v))))
			return sg->oom = true, -1;
	}
	const char *slash = strrchr(a->program, '/');
	a->base = slash && slash[1] ? (char *)slash + 1 : a->program;
	a->truncated = json_object_object_get_ex(ev, "truncated", &t) && json_object_get_boolean(t);
	return 0;
}

/* The key two events share when they are the same action; malloc'ed. */
static char *action_key(const struct action *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "%d", a->kind);
	if (a->kind == K_EXEC) {
		fprintf(f, "%c%s%c%d", 0, a->program, 0, a->truncated);
		for (size_t i = 0; i < a->nargs; i++)
			fprintf(f, "%c%s", 0, a->args[i]);
	} else if (a->kind == K_FILE)
		fprintf(f, "%c%u%c%s", 0, a->faction, 0, a->path);
	else
		fprintf(f, "%c%u%c%s", 0, a->port, 0, a->host);
	fputc(1, f); /* the key ends here; the bytes are compared with memcmp up to here */
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	/* NULs inside: keep the length in front as text is not enough; store length-prefixed */
	char *k = malloc(len + sizeof(size_t));
	if (k) {
		memcpy(k, &len, sizeof len);
		memcpy(k + sizeof len, buf, len);
	}
	free(buf);
	return k;
}

static int key_cmp(const char *x, const char *y)
{
	size_t lx, ly;
	memcpy(&lx, x, sizeof lx);
	memcpy(&ly, y, sizeof ly);
	int c = memcmp(x + sizeof lx, y + sizeof ly, lx < ly ? lx : ly);
	return c ? c : lx < ly ? -1 : lx > ly;
}

/* The outcome of decision into *d; -1 (reported) when it is none of allow, deny, ask. */
static int outcome(struct suggest *sg, const char *decision, unsigned long line,
		   enum policy_decision *d)
{
	int v = policy_decision_parse(decision);
	if (v < 0) {
		bad_line(sg, line, "the decision is %s%s%s, not allow, deny or ask",
			 decision ? "'" : "", decision ? decision : "missing", decision ? "'" : "");
		return -1;
	}
	*d = (enum policy_decision)v;
	return 0;
}

/* The action of a file event; -1 when its fields are wrong (reported) or out of memory. */
static int file_action(struct suggest *sg, json_object *ev, const char *file, unsigned long line,
		       struct action *a)
{
	const char *act = logread_str(ev, "action");
	a->kind = K_FILE;
	a->faction = policy_file_action_parse(act);
	if (!a->faction)
		return bad_line(sg, line, "the file action is %s%s%s, not read, write or exec",
				act ? "'" : "", act ? act : "missing", act ? "'" : ""), -1;
	if (file[0] != '/')
		return bad_line(sg, line, "the path '%s' is not absolute", file), -1;
	if (!(a->path = strdup(file)))
		return sg->oom = true, -1;
	return 0;
}

/* The action of a network event; -1 when it names no HOST:PORT (reported but "?:PORT"). */
static int net_action(struct suggest *sg, const char *dst, unsigned long line, struct action *a)
{
	a->kind = K_NET;
	if (parse_destination(dst, a, &sg->oom) == 0)
		return 0;
	/* the proxy logs "?:PORT" for a client that never said where to: nothing to decide */
	if (strncmp(dst, "?:", 2) != 0)
		bad_line(sg, line, "the destination '%s' is not HOST:PORT", dst);
	return -1;
}

/* Adds action a (taken) of an event decided by `by` under rule; frees it when out of memory. */
static void keep(struct suggest *sg, struct action *a, json_object *ev, const char *by,
		 const char *rule)
{
	if (!(a->key = action_key(a))) {
		sg->oom = true;
		suggest_action_free(a);
		return;
	}
	a->count = 1;
	a->by[by_of(by)] = 1;
	/* a yes that outweighs a carried-over deny: a person's, or an explicit rule's (the event names it);
	   not the recorded policy's default (no rule), nor --default-allow's (decided_by default) */
	a->yes = a->outcome != POLICY_DENY &&
		 (by_of(by) == BY_HUMAN || by_of(by) == BY_SESSION ||
		  (by_of(by) == BY_POLICY && rule && *rule));
	/* the event's reason, but not the one saying that no rule decided (events_default_reason()) */
	const char *why = logread_str(ev, "reason");
	if (why && (!rule || !*rule) && strncmp(why, "no rule matches:", 16) == 0)
		why = NULL;
	a->reason = suggest_strdup(why, &sg->oom);
	struct action *p = grow_array(sg->a, &sg->cap, sg->na + 1, sizeof *p, 64);
	if (!p || sg->oom) {
		sg->oom = true;
		suggest_action_free(a);
		return;
	}
	sg->a = p;
	sg->a[sg->na++] = *a;
	sg->events++;
}

void suggest_add_event(void *ctx, json_object *ev, const char *line, size_t len,
		       unsigned long lineno)
{
	struct suggest *sg = ctx;
	const char *sid = logread_str(ev, "session_id");
	const char *cmd = logread_str(ev, "command"), *file = logread_str(ev, "file");
	const char *dst = logread_str(ev, "network_dst");
	struct action a = { .rule = -1, .line = lineno };
	(void)line, (void)len;
	struct log_session *x = session_of(sg, sid ? sid : "");
	if (!x) {
		sg->oom = true;
		return;
	}
	if (!log_session_note(x, ev))
		sg->oom = true;
	/* a launcher event (a kept_aside or copy_applied one names a file): no action to decide */
	if ((!cmd && !file && !dst) || logread_str(ev, "event"))
		return;
	if (outcome(sg, logread_str(ev, "decision"), lineno, &a.outcome) < 0)
		return;
	int r = cmd ? exec_action(sg, ev, cmd, lineno, &a)
		: file ? file_action(sg, ev, file, lineno, &a)
		       : net_action(sg, dst, lineno, &a);
	if (r < 0)
		suggest_action_free(&a);
	else
		keep(sg, &a, ev, logread_str(ev, "decided_by"), logread_str(ev, "rule"));
}

static int by_key(const void *x, const void *y)
{
	const struct action *a = x, *b = y;
	int c = key_cmp(a->key, b->key);
	return c ? c : a->line < b->line ? -1 : a->line > b->line;
}

/* Merges identical events into one action each; one decided two ways is denied (said on stderr). */
void suggest_merge(struct suggest *sg)
{
	size_t o = 0;
	qsort(sg->a, sg->na, sizeof *sg->a, by_key);
	for (size_t i = 0; i < sg->na; i++) {
		struct action *b = &sg->a[i];
		struct action *a = o ? &sg->a[o - 1] : NULL;
		if (!a || key_cmp(a->key, b->key) != 0) {
			sg->a[o++] = *b;
			continue;
		}
		if (a->outcome != b->outcome) {
			airlock_err("suggest: %s:%lu: decided %s here, %s at line %lu; the stricter, %s, "
				    "is suggested",
				    sg->log_name, b->line, policy_decision_name(b->outcome),
				    policy_decision_name(a->outcome), a->line,
				    policy_decision_name(b->outcome > a->outcome ? b->outcome : a->outcome));
			/* the stricter outcome wins: deny, then ask, then allow */
			if (b->outcome > a->outcome) {
				a->conflicts += a->count;
				a->outcome = b->outcome;
				memset(a->by, 0, sizeof a->by);
				a->count = 0;
				a->yes = 0;
			} else {
				a->conflicts += b->count;
				suggest_action_free(b);
				continue;
			}
		}
		a->count += b->count;
		a->yes += b->yes;
		for (int k = 0; k < BY_MAX; k++)
			a->by[k] += b->by[k];
		if (!a->reason) {
			a->reason = b->reason;
			b->reason = NULL;
		}
		suggest_action_free(b);
	}
	sg->na = o;
}

/* True when path is dir or below it. */
bool suggest_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (!dir[0] || strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * The workspace ./ stands for: the one every session's start event names;
 * else the deepest directory every allowed write lies in, when that is at
 * least two levels deep and neither the home directory nor /tmp.
 */
char *suggest_find_workspace(const struct suggest *sg)
{
	const char *w = NULL;
	bool differ = false;
	for (size_t i = 0; i < sg->ns; i++) {
		if (!sg->s[i].workspace)
			continue;
		if (w && strcmp(w, sg->s[i].workspace) != 0)
			differ = true;
		w = sg->s[i].workspace;
	}
	if (w && !differ)
		return strdup(w);
	if (differ)
		return NULL;
	char common[PATH_MAX] = "";
	bool any = false;
	for (size_t i = 0; i < sg->na; i++) {
		const struct action *a = &sg->a[i];
		if (a->kind != K_FILE || a->faction != POLICY_FILE_WRITE || a->outcome != POLICY_ALLOW)
			continue;
		if (!any) {
			snprintf(common, sizeof common, "%s", a->path);
			char *slash = strrchr(common, '/');
			if (slash)
				*slash = '\0';
			any = true;
		}
		while (common[0] && !suggest_under(a->path, common))
			*strrchr(common, '/') = '\0';
	}
	int depth = 0;
	for (const char *p = common; *p; p++)
		depth += *p == '/';
	if (!any || depth < 2 || strcmp(common, sg->home) == 0 || suggest_under(common, "/tmp") ||
	    suggest_under(common, "/dev") || suggest_under(common, "/proc"))
		return NULL;
	return strdup(common);
}

void suggest_free(struct suggest *sg)
{
	for (size_t i = 0; i < sg->na; i++)
		suggest_action_free(&sg->a[i]);
	free(sg->a);
	for (size_t i = 0; i < sg->ns; i++)
		log_session_free(&sg->s[i]);
	free(sg->s);
	for (size_t i = 0; i < sg->nr; i++)
		free(sg->r[i].yaml);
	free(sg->r);
	free(sg->home);
	free(sg->workspace);
	for (size_t k = 0; k < sg->nc; k++) {
		free(sg->c[k].yaml);
		free(sg->c[k].reason);
		free(sg->c[k].where);
		free(sg->c[k].blob);
		for (size_t j = 0; j < sg->c[k].nprobe; j++)
			suggest_action_free(&sg->c[k].probe[j]);
		free(sg->c[k].probe);
	}
	free(sg->c);
	for (size_t b = 0; b < sg->nfrom; b++)
		free(sg->from[b]);
	free(sg->from);
}
