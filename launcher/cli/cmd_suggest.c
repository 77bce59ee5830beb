/* cmd_suggest.c — `airlock suggest`: turns an audit log into a policy that decides its events as they were decided. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "launcher/cli/launcher.h"
#include "launcher/log/audit.h"
#include "launcher/log/logread.h"

#define SUGGEST_SYNOPSIS \
	"usage: airlock suggest LOG [--session ID] [--workspace DIR] [-o|--output FILE]\n"

const char cmd_suggest_usage[] =
	SUGGEST_SYNOPSIS
	"\n"
	"Reads an audit log and prints a policy (YAML, commented) that allows what\n"
	"was allowed or approved, denies what was denied (by the policy, a human,\n"
	"session memory, --headless or a timeout) and asks about what is still\n"
	"logged as ask.  Fed back to `airlock check`, it decides every event of the\n"
	"log as the log recorded it.\n"
	"\n"
	"The learning run: run the agent once with a policy whose default is allow\n"
	"(`default: allow`) and with --trace, so that allowed file reads and writes\n"
	"are logged too, for example\n"
	"    airlock run --trace --policy learn.yaml --log learn.jsonl -- AGENT\n"
	"    airlock suggest learn.jsonl --output .airlock/policy.yaml\n"
	"(`airlock run --headless --default-allow` also allows what its policy asks\n"
	"about).  Then read the policy: it allows what that run did, nothing more\n"
	"than the generalisations below, less what the carried-over deny rules\n"
	"below deny (reading .env stays denied even when that run read it).\n"
	"\n"
	"Generalising, an allow rule is widened only as long as it covers nothing\n"
	"the log denied or asked about (it falls back to a narrower pattern, down\n"
	"to the exact path, arguments or destination), and a deny rule only as long\n"
	"as it covers nothing the log allowed:\n"
	"  - a program's arguments to the prefix all its allowed runs share\n"
	"    (`git commit` and `git status`: any git; with a denied `git push`:\n"
	"    one prefix rule per subcommand), by program name (its full path when\n"
	"    only that tells allowed and denied runs apart);\n"
	"  - paths in the workspace to ./** (then ./DIR/**), paths in the home\n"
	"    directory to ~/DIR/**, paths in /tmp to /tmp/**; other paths, and the\n"
	"    paths of deny and ask rules, stay exact;\n"
	"  - a host's ports to the host (any port); otherwise one rule per port.\n"
	"Allowed reads need no rule: the suggested default allows reads, and asks\n"
	"about any other program, write or connection the log never saw.\n"
	"Each rule's comment says how many events it covers and who decided them.\n"
	"\n"
	"The deny rules of the built-in default policy (secrets such as .env and\n"
	"~/.ssh, private keys, destructive commands, metadata services), and those\n"
	"of the policy each recorded session ran under when its file still loads,\n"
	"are carried over in blocks of their own, with their reasons: a permissive\n"
	"learning run does not lose them.  A carried-over rule that would deny\n"
	"something a person approved (decided_by human or session) or an explicit\n"
	"rule of the recorded policy allowed or asked about (the event names the\n"
	"rule) is left out, said in a comment and on stderr: they decided otherwise.\n"
	"What only a default allowed -- the recorded policy's (no rule, as in the\n"
	"learning run) or --default-allow's (decided_by default) -- leaves no rule\n"
	"out: the rule is kept, denies that action (a comment at it and a line on\n"
	"stderr say so), and the self-check lists the action as \"kept denied\".\n"
	"A person's or a rule's yes is to those actions alone: their allow (or ask) rules stay exact,\n"
	"no other allow or ask rule covers what the left-out rule denied (tried on\n"
	"its patterns made concrete: `rm -rf /`, `~/.ssh/probe`), and what else it\n"
	"denied stays denied where the policy language can say so: a file rule's\n"
	"other actions; for one program with literal arguments then `*` (or any),\n"
	"and for one path and what is below it, a regex for all but the log's.\n"
	"\n"
	"A path whose name held bytes that are not UTF-8 is logged with U+FFFD in\n"
	"their place; a deny or ask rule for it is a glob with `*` for each run of\n"
	"U+FFFD (wider, never narrower), and no allow rule names it (left to the\n"
	"default, said in a comment).\n"
	"\n"
	"  LOG               the audit log (JSON Lines), or - for standard input\n"
	"  --session ID      only the events of session ID (or of sessions it begins);\n"
	"                    default: every session in the log\n"
	"  --workspace DIR   what ./ stands for; default: the workspace the sessions'\n"
	"                    start events name, else the directory the allowed writes\n"
	"                    share\n"
	"  -o, --output FILE write the policy to FILE (replaced) instead of stdout\n"
	"\n"
	"The kernel layer is never widened: no sandbox.write (or sandbox.read) entry\n"
	"is suggested.  The shim may allow a write outside the workspace that the\n"
	"kernel layer refuses (not in sandbox.write), and the log records it as\n"
	"allowed all the same; its allow rule stays, and a comment lists the\n"
	"directories such writes would need in sandbox.write: adding them is your\n"
	"call, by hand.\n"
	"\n"
	"A line that is not an event is reported on stderr as LOG:LINE: what is wrong,\n"
	"and skipped.  An event decided both ways is denied, with a warning.\n"
	"\n"
	"Last, the policy is checked against the log: each action decided by it as\n"
	"`airlock check` would.  Any action it decides otherwise than the log (two\n"
	"runs args matching cannot tell apart, such as `sh -c 'echo hi'` and\n"
	"`sh '-c echo' hi`; a widened U+FFFD glob) is listed on stderr; the actions\n"
	"kept denied are listed apart and are not counted.\n"
	"\n"
	"Exit status: 0 success: the policy decides every event as the log did\n"
	"(but those kept denied);\n"
	"1 the policy was written but decides some event otherwise (listed on\n"
	"stderr), or the log cannot be read, or FILE cannot be written; 2 usage\n"
	"error, or a log with no usable events.\n";

/* ---- the events ------------------------------------------------------------------- */

enum kind { K_EXEC = 0, K_FILE, K_NET, K_MAX };

/* Who decided, as the log's decided_by names it. */
enum by { BY_POLICY = 0, BY_HUMAN, BY_SESSION, BY_DEFAULT, BY_TIMEOUT, BY_OTHER, BY_MAX };

static const char *const by_names[BY_MAX] = { "policy", "human", "session", "default", "timeout",
					      NULL };
static const char *const by_text[BY_MAX] = { "by the policy", "by a human", "by session memory",
					     "by --headless", "by a timeout", "by another" };

/* One distinct action of the log (identical events merged) and its recorded outcome. */
struct action {
	enum kind kind;
	char *key;            /* owned; what makes two events the same action */
	char *program, *base; /* K_EXEC: owned; base points into program */
	char **args;          /* K_EXEC: owned */
	size_t nargs;
	bool truncated;       /* K_EXEC: the log holds only the first arguments */
	char *path;           /* K_FILE: owned */
	unsigned faction;     /* K_FILE: one POLICY_FILE_* bit */
	char *host;           /* K_NET: owned */
	unsigned port;
	enum policy_decision outcome;
	unsigned long count;  /* events */
	unsigned long by[BY_MAX];
	unsigned long conflicts; /* events of this action decided otherwise */
	unsigned long line;   /* of its first event */
	char *reason;         /* owned; the first event's reason, or NULL */
	long rule;            /* the suggested rule covering it, -1 none yet */
	bool unnamed;         /* an allowed path with U+FFFD no rule could name: left to the default */
	bool opened;          /* a carried-over deny rule that would deny it is left out: its rule stays exact */
	unsigned long yes;    /* events allowed (or asked) by a person or by an explicit rule of the recorded
				 policy: only they leave a carried-over deny rule out */
	bool kept;            /* allowed (or asked) only by a default, and a carried-over deny rule denies it:
				 kept denied, no rule of its own */
};

/* A session, as its launcher events describe it. */
struct session {
	char *id, *agent, *workspace, *policy, *first_ts, *last_ts, *exit; /* owned; NULL: not recorded */
};

/* One suggested rule. */
struct rule {
	enum policy_list list;
	enum kind kind;
	unsigned faction;
	char *yaml;          /* owned; the list item after "- " */
	char *reason;        /* borrowed from an action; deny and ask rules */
	unsigned long events, actions;
	unsigned long by[BY_MAX];
	const struct action *example;
};

/* A deny rule carried over from another policy. */
struct carried {
	char *yaml;    /* owned; the list item after "- ", without its reason */
	char *reason;  /* owned, or NULL */
	char *where;   /* owned; "FILE:LINE" of the rule in its policy */
	size_t from;   /* its policy: index into suggest.from */
	const struct action *contra; /* what a person or a rule allowed or asked about that it denies: left out */
	const struct action *kept;   /* the first action allowed only by a default that it denies: kept */
	unsigned long nkept;         /* how many such actions */
	bool part;     /* left out, and a rule for the actions the log did not allow follows it */
	void *blob;    /* owned; the rule compiled alone (an allow list over all-deny) */
	const struct policy_image *img;
	struct action *probe; /* owned; left out: actions it denies, its patterns made concrete */
	size_t nprobe;
};

struct suggest {
	const char *log_name;
	struct action *a;
	size_t na, cap;
	struct session *s;
	size_t ns, scap;
	unsigned long skipped; /* events read but not usable (reported) */
	unsigned long events;
	struct rule *r;
	size_t nr, rcap;
	char *home;      /* owned; no trailing '/' */
	char *workspace; /* owned; NULL: no ./ patterns */
	struct carried *c; /* deny rules carried over, in their policies' order */
	size_t nc, ccap;
	char **from;       /* owned; what each carried-over block is from, for its heading */
	size_t nfrom, fcap;
	bool oom;
};

static void *xrealloc_array(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 64;
	void *q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

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

static char *dup_or_null(const char *s, bool *oom)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		*oom = true;
	return c;
}

static void action_free(struct action *a)
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
	for (int i = 0; i < BY_OTHER; i++)
		if (s && strcmp(s, by_names[i]) == 0)
			return (enum by)i;
	return s ? BY_OTHER : BY_POLICY;
}

/* The session's entry, added when new. */
static struct session *session_of(struct suggest *sg, const char *id)
{
	for (size_t i = sg->ns; i-- > 0;)
		if (strcmp(sg->s[i].id, id) == 0)
			return &sg->s[i];
	struct session *p = xrealloc_array(sg->s, &sg->scap, sg->ns, sizeof *p);
	if (!p)
		return NULL;
	sg->s = p;
	p = &sg->s[sg->ns];
	*p = (struct session){ .id = strdup(id) };
	if (!p->id)
		return NULL;
	sg->ns++;
	return p;
}

/* Replaces *slot with a copy of ev's string field key when it has one (an absolute path, when absolute). */
static void take_field(struct suggest *sg, char **slot, json_object *ev, const char *key,
		       bool absolute)
{
	const char *v = logread_str(ev, key);
	if (!v || (absolute && v[0] != '/'))
		return;
	free(*slot);
	*slot = dup_or_null(v, &sg->oom);
}

/* Fills a session's description from a launcher event: its start's program, workspace, policy, its end's exit status. */
static void note_launcher(struct suggest *sg, struct session *x, json_object *ev)
{
	char buf[32];
	long long status = logread_num(ev, "exit_status");
	if (logread_is_event(ev, AUDIT_SESSION_START)) {
		take_field(sg, &x->agent, ev, "program", false);
		take_field(sg, &x->workspace, ev, "workspace", true);
		take_field(sg, &x->policy, ev, "policy", false);
	} else if (logread_is_event(ev, AUDIT_SESSION_END) && status >= 0) {
		snprintf(buf, sizeof buf, "%lld", status);
		free(x->exit);
		x->exit = dup_or_null(buf, &sg->oom);
	}
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

/* One event of the log (a logread_event_fn). */
static void add_event(void *ctx, json_object *ev, const char *line, size_t len,
		      unsigned long lineno)
{
	struct suggest *sg = ctx;
	const char *sid = logread_str(ev, "session_id"), *ts = logread_str(ev, "timestamp");
	const char *cmd = logread_str(ev, "command"), *file = logread_str(ev, "file");
	const char *dst = logread_str(ev, "network_dst");
	const char *decision = logread_str(ev, "decision"), *by = logread_str(ev, "decided_by");
	const char *rule = logread_str(ev, "rule");
	struct action a = { .rule = -1, .line = lineno };
	(void)line, (void)len;
	struct session *x = session_of(sg, sid ? sid : "");
	if (!x) {
		sg->oom = true;
		return;
	}
	if (ts && (!x->first_ts || strcmp(ts, x->first_ts) < 0)) {
		free(x->first_ts);
		x->first_ts = dup_or_null(ts, &sg->oom);
	}
	if (ts && (!x->last_ts || strcmp(ts, x->last_ts) > 0)) {
		free(x->last_ts);
		x->last_ts = dup_or_null(ts, &sg->oom);
	}
	if (!cmd && !file && !dst) {
		if (logread_str(ev, "source") && strcmp(logread_str(ev, "source"), "launcher") == 0)
			note_launcher(sg, x, ev);
		return; /* a launcher event: no action to decide */
	}
	if (!decision || (strcmp(decision, "allow") != 0 && strcmp(decision, "deny") != 0 &&
			  strcmp(decision, "ask") != 0)) {
		bad_line(sg, lineno, "the decision is %s%s%s, not allow, deny or ask",
			 decision ? "'" : "", decision ? decision : "missing", decision ? "'" : "");
		return;
	}
	a.outcome = strcmp(decision, "allow") == 0 ? POLICY_ALLOW
		    : strcmp(decision, "ask") == 0 ? POLICY_ASK
						   : POLICY_DENY;
	if (cmd) {
		if (exec_action(sg, ev, cmd, lineno, &a) < 0)
			goto drop;
	} else if (file) {
		const char *act = logread_str(ev, "action");
		a.kind = K_FILE;
		a.faction = !act ? 0
			    : strcmp(act, "read") == 0  ? POLICY_FILE_READ
			    : strcmp(act, "write") == 0 ? POLICY_FILE_WRITE
			    : strcmp(act, "exec") == 0  ? POLICY_FILE_EXEC
							: 0;
		if (!a.faction) {
			bad_line(sg, lineno, "the file action is %s%s%s, not read, write or exec",
				 act ? "'" : "", act ? act : "missing", act ? "'" : "");
			goto drop;
		}
		if (file[0] != '/') {
			bad_line(sg, lineno, "the path '%s' is not absolute", file);
			goto drop;
		}
		if (!(a.path = strdup(file)))
			goto oom;
	} else {
		a.kind = K_NET;
		if (parse_destination(dst, &a, &sg->oom) < 0) {
			/* the proxy logs "?:PORT" for a client that never said where to: nothing to decide */
			if (strncmp(dst, "?:", 2) != 0)
				bad_line(sg, lineno, "the destination '%s' is not HOST:PORT", dst);
			goto drop;
		}
	}
	if (!(a.key = action_key(&a)))
		goto oom;
	a.count = 1;
	a.by[by_of(by)] = 1;
	/* a yes that outweighs a carried-over deny: a person's, or an explicit rule's (the event names it);
	   not the recorded policy's default (no rule), nor --default-allow's (decided_by default) */
	a.yes = a.outcome != POLICY_DENY &&
		(by_of(by) == BY_HUMAN || by_of(by) == BY_SESSION || (by_of(by) == BY_POLICY && rule && *rule));
	a.reason = dup_or_null(logread_str(ev, "reason"), &sg->oom);
	struct action *p = xrealloc_array(sg->a, &sg->cap, sg->na, sizeof *p);
	if (!p || sg->oom)
		goto oom;
	sg->a = p;
	sg->a[sg->na++] = a;
	sg->events++;
	return;
oom:
	sg->oom = true;
drop:
	action_free(&a);
}

static int by_key(const void *x, const void *y)
{
	const struct action *a = x, *b = y;
	int c = key_cmp(a->key, b->key);
	return c ? c : a->line < b->line ? -1 : a->line > b->line;
}

/* Merges identical events into one action each; one decided two ways is denied (said on stderr). */
static void merge(struct suggest *sg)
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
				action_free(b);
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
		action_free(b);
	}
	sg->na = o;
}

/* ---- the context: home and workspace ---------------------------------------------- */

/* True when path is dir or below it. */
static bool under(const char *path, const char *dir)
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
static char *find_workspace(const struct suggest *sg)
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
		while (common[0] && !under(a->path, common))
			*strrchr(common, '/') = '\0';
	}
	int depth = 0;
	for (const char *p = common; *p; p++)
		depth += *p == '/';
	if (!any || depth < 2 || strcmp(common, sg->home) == 0 || under(common, "/tmp") ||
	    under(common, "/dev") || under(common, "/proc"))
		return NULL;
	return strdup(common);
}

/* ---- YAML and glob text ----------------------------------------------------------- */

/* s as a YAML double-quoted scalar. */
static void put_yaml_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* s as a malloc'ed YAML double-quoted scalar, or NULL. */
static char *yaml_quoted(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	put_yaml_string(f, s);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
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

/* The first n arguments of a joined by single spaces, written to f. */
static void put_args(FILE *f, const struct action *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(' ', f);
		fputs(a->args[i], f);
	}
}

/* ---- candidate rules -------------------------------------------------------------- */

/*
 * A candidate rule: the YAML list item, compiled alone into an allow list
 * over an all-deny default, so that an action it covers gets rule 0.
 */
struct candidate {
	char *yaml;  /* owned */
	void *blob;  /* owned; the image */
	const struct policy_image *img;
};

static void candidate_free(struct candidate *c)
{
	free(c->yaml);
	free(c->blob);
	*c = (struct candidate){ 0 };
}

/* Compiles c->yaml; false when the policy language cannot hold it (then it is not offered). */
static bool candidate_compile(const struct suggest *sg, struct candidate *c)
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
static struct policy_verdict decide(const struct policy_image *img, const struct action *a)
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

static bool covers(const struct candidate *c, const struct action *a)
{
	return decide(c->img, a).rule == 0;
}

/* A malloc'ed formatted string, or NULL. */
static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *format(const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
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
	char **p = xrealloc_array(l->item, &l->cap, l->n, sizeof *p);
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
		put_yaml_string(f, command);
	} else if ((g = open_memstream(&lit, &llen)) && (put_glob_literal(g, command), 1) &&
		   fclose(g) == 0) {
		put_yaml_string(f, lit);
	} else
		ok = false;
	free(lit);
	if (a) {
		char *args = NULL;
		size_t alen = 0;
		if ((g = open_memstream(&args, &alen)) && (put_args(g, a, nargs), 1) &&
		    fclose(g) == 0) {
			fputs("\n    args: ", f);
			put_yaml_string(f, args);
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
	char *q = yaml_quoted(pattern);
	char *item = q ? format("file: { path: %s, action: %s%s%s }", q,
				faction == POLICY_FILE_READ    ? "read"
				: faction == POLICY_FILE_WRITE ? "write"
							       : "exec",
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
	if (sg->workspace && strcmp(sg->workspace, "/") != 0 && under(p, sg->workspace)) {
		anchor = "./";
		root = strlen(sg->workspace) + 1;
	} else if (strcmp(sg->home, "/") != 0 && under(p, sg->home)) {
		anchor = "~/";
		root = strlen(sg->home) + 1;
		whole = false;
	} else if (under(p, "/tmp")) {
		anchor = "/tmp/";
		root = 5;
	}
	if (anchor && root <= len) {
		if (a->outcome == POLICY_ALLOW) {
			if (whole)
				take_file(l, format("%s**", anchor), a->faction, NULL);
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
	char *q = yaml_quoted(destination);
	char *item = q ? format("network: { destination: %s }", q) : NULL;
	free(q);
	return item;
}

/* A destination's candidates: the host (any port), then host:port. */
static void network_candidates(const struct action *a, struct list *l)
{
	bool v6 = strchr(a->host, ':') != NULL;
	char *d = format("%s", a->host);
	list_take(l, d ? network_item(d) : NULL);
	free(d);
	l->exact = l->n;
	d = format(v6 ? "[%s]:%u" : "%s:%u", a->host, a->port);
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
	struct rule *r = xrealloc_array(sg->r, &sg->rcap, sg->nr, sizeof *r);
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
		if (b->kind != a->kind || b->outcome != a->outcome || b->rule >= 0 || !covers(c, b))
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
		if (sg->a[i].opened && covers(c, &sg->a[i]))
			return true;
	for (size_t k = 0; k < sg->nc; k++)
		for (size_t j = 0; j < sg->c[k].nprobe; j++)
			if (covers(c, &sg->c[k].probe[j]))
				return true;
	return false;
}

/*
 * The first of a's candidates that covers a and no action the log decided
 * otherwise becomes a rule.  An allow or ask rule that is not exact must not
 * cover what a left-out carried-over deny rule denies (opens()): a human's
 * yes to one action is a yes to that action, not to the rule's whole reach.  Returns false when none does.  A denied or
 * asked path with U+FFFD has only its glob: it becomes the rule even when it
 * covers more (a deny is better wider than never matching); verify() then
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
		if (candidate_compile(sg, &c) && covers(&c, a) &&
		    !(guard && i < l.exact && opens(sg, &c))) {
			bool pure = true;
			for (size_t j = 0; j < sg->na && pure; j++) {
				const struct action *b = &sg->a[j];
				pure = b->kind != a->kind || b->outcome == a->outcome || !covers(&c, b);
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
		candidate_free(&c);
	}
	list_free(&l);
	return done;
}

static void choose_all(struct suggest *sg)
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

/* ---- describing actions --------------------------------------------------------- */

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

/* What an action did: "exec PROGRAM ARGS", "write PATH", "connect HOST:PORT"; malloc'ed, or NULL. */
static char *example_text(const struct action *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *g = open_memstream(&buf, &len);
	if (!g)
		return NULL;
	if (a->kind == K_EXEC) {
		fputs("exec ", g);
		logread_put_word(g, a->program);
		for (size_t i = 0; i < a->nargs; i++) {
			fputc(' ', g);
			logread_put_word(g, a->args[i]);
		}
	} else if (a->kind == K_FILE) {
		fprintf(g, "%s ", a->faction == POLICY_FILE_READ    ? "read"
				  : a->faction == POLICY_FILE_WRITE ? "write"
								    : "exec");
		logread_put_word(g, a->path);
	} else {
		fprintf(g, strchr(a->host, ':') ? "connect [%s]:%u" : "connect %s:%u", a->host, a->port);
	}
	if (fclose(g) == 0)
		return buf;
	free(buf);
	return NULL;
}

/* example_text(a) in a comment: one line, at most 100 bytes. */
static void put_example(FILE *f, const struct action *a)
{
	char *buf = example_text(a);
	if (buf)
		put_comment_text(f, buf, 100);
	free(buf);
}

/* ---- deny rules carried over ----------------------------------------------------- */

/*
 * A rule of a loaded policy as a list item after "- " (continuation lines
 * indented 4), without its reason: the same rule when loaded again.
 */
static char *rule_item(const struct policy_rule *r)
{
	static const char *const actions[] = { "read", "write", "exec" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	if (r->kind == POLICY_RULE_COMMAND) {
		fputs("command: ", f);
		put_yaml_string(f, r->command);
		if (r->args) {
			fputs("\n    args: ", f);
			put_yaml_string(f, r->args);
		}
	} else if (r->kind == POLICY_RULE_FILE) {
		fputs("file: { path: ", f);
		put_yaml_string(f, r->path);
		if (r->actions != POLICY_FILE_ALL) {
			bool one = (r->actions & (r->actions - 1)) == 0;
			const char *sep = one ? ", action: " : ", action: [";
			for (unsigned i = 0; i < 3; i++)
				if (r->actions & (1u << i)) {
					fprintf(f, "%s%s", sep, actions[i]);
					sep = ", ";
				}
			if (!one)
				fputc(']', f);
		}
		fputs(" }", f);
	} else {
		fputs("network: { destination: ", f);
		put_yaml_string(f, r->destination);
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
static const char *which_default(const struct action *a)
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
		if (said_yes(&sg->a[i]) && covers(c, &sg->a[i]))
			return &sg->a[i];
	return NULL;
}

/* ---- probes: what a left-out rule denies, made concrete ---------------------------- */

/*
 * Glob g made concrete, malloc'ed: each "**" + "/" as dir, each other run of
 * '*' as fill, '?' as 'x', "\c" as c; NULL when it holds a bracket
 * expression (or out of memory).
 */
static char *concrete(const char *g, const char *fill, const char *dir)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool ok = f != NULL;
	if (!f)
		return NULL;
	for (const char *p = g; *p && ok; p++) {
		if (p[0] == '*' && p[1] == '*' && p[2] == '/') {
			fputs(dir, f);
			p += 2;
		} else if (*p == '*') {
			while (p[1] == '*')
				p++;
			fputs(fill, f);
		} else if (*p == '?')
			fputc('x', f);
		else if (*p == '[')
			ok = false;
		else if (*p == '\\' && p[1])
			fputc(*++p, f);
		else
			fputc(*p, f);
	}
	if (fclose(f) != 0 || !ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Takes probe a (its fields owned) into c when c's rule denies it; frees it otherwise. */
static void add_probe(struct suggest *sg, struct carried *c, struct action *a)
{
	if (!sg->oom && decide(c->img, a).rule == 0) {
		struct action *p = realloc(c->probe, (c->nprobe + 1) * sizeof *p);
		if (p) {
			c->probe = p;
			c->probe[c->nprobe++] = *a;
			return;
		}
		sg->oom = true;
	}
	action_free(a);
}

/* A probe running program name (a name without '/' is in /usr/bin) with args split at each space. */
static void exec_probe(struct suggest *sg, struct carried *c, const char *name, const char *args)
{
	struct action a = { .kind = K_EXEC, .rule = -1 };
	a.program = strchr(name, '/') ? strdup(name) : format("/usr/bin/%s", name);
	a.args = calloc(strlen(args) + 2, sizeof *a.args);
	if (!a.program || !a.args) {
		sg->oom = true;
		action_free(&a);
		return;
	}
	for (const char *w = args; *args;) { /* no arguments when args is empty */
		size_t n = strcspn(w, " ");
		if (!(a.args[a.nargs++] = strndup(w, n))) {
			sg->oom = true;
			action_free(&a);
			return;
		}
		if (!w[n])
			break;
		w += n + 1;
	}
	const char *slash = strrchr(a.program, '/');
	a.base = slash && slash[1] ? (char *)slash + 1 : a.program;
	add_probe(sg, c, &a);
}

/* Probes opening path (malloc'ed, taken; NULL: out of memory) and a name below it, for each action. */
static void file_probe(struct suggest *sg, struct carried *c, char *path, unsigned actions)
{
	for (int below = 0; below < 2 && path; below++)
		for (unsigned bit = POLICY_FILE_READ; bit <= POLICY_FILE_EXEC; bit <<= 1) {
			if (!(actions & bit))
				continue;
			struct action a = { .kind = K_FILE, .rule = -1, .faction = bit };
			a.path = below ? format("%s%sprobe", path, strcmp(path, "/") ? "/" : "")
				       : strdup(path);
			if (!a.path) {
				sg->oom = true;
				break;
			}
			add_probe(sg, c, &a);
		}
	sg->oom |= !path;
	free(path);
}

/* dir + "/" + rest, malloc'ed (dir "/" gives "/rest"). */
static char *join(const char *dir, const char *rest)
{
	return format("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, rest);
}

/* A connection probe to host (its "/bits" dropped) on port (none, "*": 443 and 1). */
static void net_probe(struct suggest *sg, struct carried *c, const char *host, size_t hlen,
		      const char *port)
{
	unsigned ports[2] = { 443, 1 };
	size_t np = 2;
	if (port && *port && strcmp(port, "*") != 0) {
		ports[0] = (unsigned)strtoul(port, NULL, 10);
		np = ports[0] >= 1 && ports[0] <= 65535;
	}
	const char *cut = memchr(host, '/', hlen);
	if (cut)
		hlen = (size_t)(cut - host);
	for (size_t i = 0; i < np && hlen; i++) {
		struct action a = { .kind = K_NET, .rule = -1, .port = ports[i] };
		if (!(a.host = strndup(host, hlen))) {
			sg->oom = true;
			return;
		}
		add_probe(sg, c, &a);
	}
}

/*
 * Probes for left-out rule r: the actions its patterns name, made concrete
 * (args `-rf /` + `*`: rm -rf /, rm -rf /etc; `~/.ssh`: ~/.ssh, ~/.ssh/probe),
 * those it denies.  A regex names none: the log's actions it denies guard it.
 */
static void make_probes(struct suggest *sg, struct carried *c, const struct policy_rule *r)
{
	static const char *const fill[3] = { "", "etc", "x /" }, *const dir[3] = { "", "x/", "x/y/" };
	const char *ws = sg->workspace ? sg->workspace : "/";
	bool glob = r->match == POLICY_MATCH_GLOB;
	if (r->match == POLICY_MATCH_REGEX)
		return;
	if (r->kind == POLICY_RULE_COMMAND) {
		for (int i = 0; i < 2 && !sg->oom; i++) {
			char *name = glob ? concrete(r->command, i ? "x" : "", "") : strdup(r->command);
			for (int j = 0; j < 3 && name && !sg->oom; j++) {
				char *args = !r->args ? strdup(j == 0 ? "" : j == 1 ? "-rf /" : "x")
					     : glob ? concrete(r->args, fill[j], fill[j])
					     : r->match == POLICY_MATCH_PREFIX && j == 1
						     ? format("%s x", r->args)
						     : strdup(r->args);
				if (args)
					exec_probe(sg, c, name, args);
				free(args);
			}
			free(name);
		}
		return;
	}
	if (r->kind == POLICY_RULE_FILE) {
		for (int i = 0; i < 3 && !sg->oom; i++) {
			char *s = glob ? concrete(r->path, i ? fill[i] : "x", dir[i]) : strdup(r->path);
			size_t n = s ? strlen(s) : 0;
			while (n > 1 && s[n - 1] == '/')
				s[--n] = '\0';
			if (!s)
				continue;
			if (strcmp(s, "~") == 0 || strncmp(s, "~/", 2) == 0)
				file_probe(sg, c, s[1] ? join(sg->home, s + 2) : strdup(sg->home), r->actions);
			else if (strcmp(s, ".") == 0 || strncmp(s, "./", 2) == 0)
				file_probe(sg, c, s[1] ? join(ws, s + 2) : strdup(ws), r->actions);
			else if (s[0] == '/')
				file_probe(sg, c, strdup(s), r->actions);
			else if (strchr(s, '/'))
				file_probe(sg, c, join(ws, s), r->actions);
			else if (s[0]) { /* a name in any directory */
				file_probe(sg, c, join(ws, s), r->actions);
				file_probe(sg, c, join(sg->home, s), r->actions);
				file_probe(sg, c, join("/tmp", s), r->actions);
			}
			free(s);
		}
		return;
	}
	char *s = glob ? concrete(r->destination, "probe", "") : strdup(r->destination);
	if (!s) {
		sg->oom |= !glob;
		return;
	}
	const char *close = s[0] == '[' ? strchr(s, ']') : NULL, *colon = strchr(s, ':');
	if (close)
		net_probe(sg, c, s + 1, (size_t)(close - s - 1), close[1] == ':' ? close + 2 : NULL);
	else if (colon && strchr(colon + 1, ':')) /* a bare IPv6 address or range */
		net_probe(sg, c, s, strlen(s), NULL);
	else
		net_probe(sg, c, s, colon ? (size_t)(colon - s) : strlen(s), colon ? colon + 1 : NULL);
	free(s);
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
 * joined, or each recorded path): lit (ERE-quoted) + anything not a word.
 * head and tail wrap the pattern; NULL when it cannot be written.
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
	bool ok = put_ere_not(f, w, n, strlen(lit), below, below);
	if (fclose(f) != 0 || !ok) {
		free(re);
		return NULL;
	}
	char *q = yaml_quoted(re);
	buf = q ? format("%s%s%s", head, q, tail) : NULL;
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
	if (!seen && candidate_compile(sg, &c) && !contradicted(sg, &c) &&
	    (k = xrealloc_array(sg->c, &sg->ccap, sg->nc, sizeof *k))) {
		sg->c = k;
		const struct carried *o = &sg->c[at];
		sg->c[sg->nc] = (struct carried){ .yaml = item, .from = o->from,
						  .reason = dup_or_null(o->reason, &sg->oom),
						  .where = dup_or_null(o->where, &sg->oom),
						  .blob = c.blob, .img = c.img };
		sg->nc++;
		sg->c[at].part = true;
		c.yaml = NULL;
		c.blob = NULL;
	}
	candidate_free(&c);
}

/* True when glob g names one string: none of * ? [ \ in it. */
static bool literal(const char *g)
{
	return !strpbrk(g, "*?[\\");
}

/*
 * What left-out rule r (at at) still denies less the log's actions it
 * would deny, carried over after it: a file rule's other actions; a
 * command rule on one program whose args are a literal then '*' (or none):
 * a regex for any other arguments; a file rule on one path (and what is
 * below it): a regex for any other path, per action the log allowed.
 */
static void carry_remains(struct suggest *sg, const struct policy_rule *r, size_t at)
{
	const char **w = calloc(sg->na + 1, sizeof *w);
	size_t n = 0;
	if (!w) {
		sg->oom = true;
		return;
	}
	const struct policy_image *img = sg->c[at].img;
	if (r->kind == POLICY_RULE_COMMAND && r->match == POLICY_MATCH_GLOB && literal(r->command) &&
	    (!r->args || (strlen(r->args) > 0 && r->args[strlen(r->args) - 1] == '*' &&
			  strcspn(r->args, "*?[\\") == strlen(r->args) - 1))) {
		char **joined = calloc(sg->na + 1, sizeof *joined);
		bool ok = joined != NULL;
		for (size_t i = 0; i < sg->na && ok; i++) {
			const struct action *a = &sg->a[i];
			if (a->kind != K_EXEC || !said_yes(a) || decide(img, a).rule != 0)
				continue;
			char *buf = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&buf, &len);
			if (!f) {
				ok = false;
				break;
			}
			put_args(f, a, a->nargs);
			ok = fclose(f) == 0 && !a->truncated; /* a truncated run: its other arguments unknown */
			if (!ok) {
				free(buf);
				break;
			}
			w[n] = joined[n] = buf;
			n++;
		}
		char *lit = r->args ? strndup(r->args, strlen(r->args) - 1) : strdup("");
		char *cmd = NULL, *head = NULL;
		size_t clen = 0;
		FILE *f = lit ? open_memstream(&cmd, &clen) : NULL;
		if (f) {
			put_ere_literal(f, r->command, strlen(r->command));
			if (fclose(f) == 0) {
				char *q = yaml_quoted(cmd);
				head = q ? format("command: %s\n    args: ", q) : NULL;
				free(q);
			}
			free(cmd);
		}
		if (ok && n && head)
			carry_rest(sg, residual_item(head, lit, w, n, false, "\n    match: regex"), at);
		free(head);
		free(lit);
		for (size_t i = 0; joined && i < n; i++)
			free(joined[i]);
		free(joined);
	} else if (r->kind == POLICY_RULE_FILE && r->match == POLICY_MATCH_GLOB && literal(r->path) &&
		   (strncmp(r->path, "~/", 2) == 0 || r->path[0] == '/' || strncmp(r->path, "./", 2) == 0)) {
		const char *ws = sg->workspace ? sg->workspace : "/";
		size_t pl = strlen(r->path);
		while (pl > 1 && r->path[pl - 1] == '/')
			pl--;
		char *rel = strndup(r->path, pl);
		char *abs = !rel ? NULL
			    : rel[0] == '/' ? strdup(rel)
			    : join(rel[0] == '~' ? sg->home : ws, rel + 2);
		static const char *const names[] = { "read", "write", "exec" };
		for (unsigned b = 0; b < 3 && abs; b++) {
			unsigned bit = 1u << b;
			n = 0;
			for (size_t i = 0; i < sg->na; i++) {
				const struct action *a = &sg->a[i];
				if (a->kind == K_FILE && a->faction == bit && said_yes(a) &&
				    (r->actions & bit) && decide(img, a).rule == 0)
					w[n++] = a->path;
			}
			if (!n)
				continue;
			/* the path itself or below it: lit + ( "" | "/" ... ), less the words */
			char *tail = format(", action: %s, match: regex }", names[b]);
			char *item = tail ? residual_item("file: { path: ", abs, w, n, true, tail) : NULL;
			free(tail);
			if (item)
				carry_rest(sg, item, at);
		}
		free(rel);
		free(abs);
	}
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
	if (!seen && !candidate_compile(sg, &c)) {
		airlock_err("suggest: %s:%u: this deny rule does not compile here; not carried over",
			    source, r->pos.line);
		seen = true;
	}
	struct carried *k = seen ? NULL : xrealloc_array(sg->c, &sg->ccap, sg->nc, sizeof *k);
	if (!seen && !k)
		sg->oom = true;
	if (seen || !k) {
		candidate_free(&c);
		return;
	}
	sg->c = k;
	size_t at = sg->nc++;
	k = &sg->c[at];
	*k = (struct carried){ .yaml = c.yaml, .from = block, .contra = contradicted(sg, &c),
			       .reason = dup_or_null(r->reason, &sg->oom),
			       .where = format("%s:%u", source, r->pos.line) };
	c.yaml = NULL;
	sg->oom |= !k->where;
	k->blob = c.blob; /* kept compiled: what it denies of the log is said */
	k->img = c.img;
	c.blob = NULL;
	candidate_free(&c);
	if (!k->contra)
		return;
	make_probes(sg, k, r);
	if (r->kind == POLICY_RULE_FILE) { /* the actions the log did not allow */
		unsigned allowed = 0;
		for (size_t i = 0; i < sg->na; i++)
			if (sg->a[i].kind == K_FILE && said_yes(&sg->a[i]) &&
			    decide(k->img, &sg->a[i]).rule == 0)
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
	char **from = xrealloc_array(sg->from, &sg->fcap, sg->nfrom, sizeof *from);
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
static char *session_policy(const struct session *x)
{
	if (!x->policy || strcmp(x->policy, "<default>") == 0)
		return NULL;
	char *path = NULL, *real;
	if (x->policy[0] == '/')
		path = strdup(x->policy);
	else if (x->workspace)
		path = format("%s/%s", x->workspace, x->policy);
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
 * Carries over the deny rules of the built-in default policy, then those of
 * each recorded session's policy file (a relative name is the session's
 * workspace's) when it still loads.
 */
static void carry_over(struct suggest *sg)
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
	for (size_t i = 0; i < sg->ns; i++) { /* each policy file by its real path */
		char *path = session_policy(&sg->s[i]);
		free(sg->s[i].policy);
		sg->s[i].policy = path;
	}
	for (size_t i = 0; i < sg->ns && !sg->oom; i++) {
		const struct session *x = &sg->s[i];
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
		} else if (!(label = format("the policy session %s ran under, %s", x->id, x->policy))) {
			sg->oom = true;
		} else {
			carry_policy(sg, p, label);
			free(label);
		}
		policy_free(p);
	}
	for (size_t k = 0; k < sg->nc; k++) /* what the left-out rules would deny keeps exact rules */
		for (size_t i = 0; i < sg->na && sg->c[k].img && sg->c[k].contra; i++)
			if (sg->a[i].outcome != POLICY_DENY && decide(sg->c[k].img, &sg->a[i]).rule == 0)
				sg->a[i].opened = true;
	/* what only a default allowed (or asked about) and a carried-over rule denies stays denied */
	for (size_t k = 0; k < sg->nc; k++) {
		struct carried *c = &sg->c[k];
		for (size_t i = 0; i < sg->na && c->img && !c->contra; i++) {
			struct action *a = &sg->a[i];
			if (a->outcome == POLICY_DENY || said_yes(a) || decide(c->img, a).rule != 0)
				continue;
			a->kept = true;
			if (!c->nkept++)
				c->kept = a;
		}
	}
	for (size_t k = 0; k < sg->nc; k++) {
		const struct carried *c = &sg->c[k];
		char *what = c->kept ? example_text(c->kept) : NULL;
		if (c->kept)
			airlock_err("suggest: %s: this deny rule is kept: it denies %s, which the log "
				    "recorded as %s only by %s (%s:%lu%s), not by a person or a rule",
				    c->where, what ? what : "an action",
				    c->kept->outcome == POLICY_ALLOW ? "allowed" : "asked about",
				    which_default(c->kept), sg->log_name, c->kept->line, c->nkept > 1 ? ", and more" : "");
		free(what);
		what = c->contra ? example_text(c->contra) : NULL;
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
		put_yaml_string(f, r->reason ? r->reason : r->list == POLICY_LIST_DENY
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
 * The directories the allowed writes outside the workspace, /tmp and /dev
 * would need in sandbox.write, as a comment and on stderr: never written as
 * sandbox.write entries.  The shim allowed those writes, but the kernel layer
 * (read-only outside sandbox.write) may have refused them, and the log cannot
 * tell; widening the kernel layer is the user's call.  Their allow rules stay:
 * the kernel layer still refuses the writes until the user adds the directory.
 */
static void put_sandbox(FILE *f, const struct suggest *sg)
{
	char **dirs = calloc(sg->na + 1, sizeof *dirs);
	const struct action **ex = calloc(sg->na + 1, sizeof *ex);
	size_t n = 0;
	if (!dirs || !ex) {
		free(dirs);
		free(ex);
		return;
	}
	for (size_t i = 0; i < sg->na; i++) {
		const struct action *a = &sg->a[i];
		if (a->kind != K_FILE || a->faction != POLICY_FILE_WRITE || a->outcome != POLICY_ALLOW ||
		    a->kept || (sg->workspace && under(a->path, sg->workspace)) || under(a->path, "/tmp") ||
		    under(a->path, "/dev") || under(a->path, "/proc"))
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
	fputs("\n# The kernel layer: the workspace is writable, /tmp is the sandbox's own.\nsandbox:\n"
	      "  network: proxy\n",
	      f);
	if (n) {
		fputs("  # Not widened: the allowed writes outside the workspace would need these\n"
		      "  # directories in sandbox.write.  Until they are there, the kernel layer\n"
		      "  # refuses those writes whatever the allow rules say (it may have refused\n"
		      "  # them in the recorded run too: the log cannot tell).  Widening the kernel\n"
		      "  # layer is your call (it opens every file in them to the agent's writes):\n"
		      "  # add them by hand, as `write: [DIR, ...]` here, if you mean to.\n",
		      f);
		for (size_t k = 0; k < n; k++) {
			fputs("  #   ", f);
			if (strcmp(sg->home, "/") != 0 && under(dirs[k], sg->home) &&
			    strlen(dirs[k]) > strlen(sg->home)) {
				char *rel = format("~/%s", dirs[k] + strlen(sg->home) + 1);
				put_comment_text(f, rel ? rel : dirs[k], 300);
				free(rel);
			} else
				put_comment_text(f, dirs[k], 300);
			fputs("   (", f);
			put_example(f, ex[k]);
			fprintf(f, ", line %lu)\n", ex[k]->line);
			free(dirs[k]);
		}
		airlock_err("suggest: the allowed writes outside the workspace would need %zu "
			    "director%s in sandbox.write; not added (listed in a comment): widening the "
			    "kernel layer is your call",
			    n, n == 1 ? "y" : "ies");
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
		const struct session *x = &sg->s[i];
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
			put_yaml_string(f, c->reason ? c->reason : "denied by the policy it comes from");
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
static void put_policy(FILE *f, struct suggest *sg, const char *filter)
{
	static const char *const lists[POLICY_LIST_MAX] = { "deny", "ask", "allow" };
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
				fprintf(f, "\n%s:\n", lists[l]);
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

/*
 * Decides every action with the policy text as `airlock check` would, and
 * says on stderr which ones it decides otherwise than the log.  The count.
 */
static unsigned long verify(const struct suggest *sg, const char *text, size_t len)
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
		enum policy_decision d = decide(img, a).decision;
		if (d == a->outcome)
			continue;
		if (a->kept && d == POLICY_DENY) { /* expected: a carried-over deny rule was kept for it */
			char *what = example_text(a);
			kept++;
			airlock_err("suggest: %s:%lu: kept denied: %s, which the log recorded as %s only by "
				    "%s; a carried-over deny rule denies it",
				    sg->log_name, a->line, what ? what : "this action",
				    a->outcome == POLICY_ALLOW ? "allowed" : "asked about", which_default(a));
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

/* ---- the command line ------------------------------------------------------------- */

struct suggest_args {
	const char *log;
	const char *session;
	const char *workspace;
	const char *output;
};

static int usage_error(const char *fmt, const char *arg)
{
	fputs("airlock: suggest: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n" SUGGEST_SYNOPSIS "See 'airlock suggest --help'.\n", stderr);
	return -1;
}

/* Fills a.  0, 1 when help was printed, -1 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct suggest_args *a)
{
	bool options = true;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		int r = 0;
		if (options && strcmp(arg, "--") == 0) {
			options = false;
			continue;
		}
		if (options && airlock_is_help(arg)) {
			fputs(cmd_suggest_usage, stdout);
			return 1;
		}
		if (options && strcmp(arg, "-o") == 0) { /* -o FILE: --output FILE */
			if (i + 1 >= argc)
				return usage_error("%s needs a value", arg);
			a->output = argv[++i];
			continue;
		}
		if (options && arg[0] == '-' && arg[1] != '\0') {
			if ((r = airlock_option_value(argc, argv, &i, "--session", &a->session)) == 0 &&
			    (r = airlock_option_value(argc, argv, &i, "--workspace", &a->workspace)) == 0)
				r = airlock_option_value(argc, argv, &i, "--output", &a->output);
			if (r < 0)
				return usage_error("%s needs a value", arg);
			if (r == 0)
				return usage_error("unknown option: %s", arg);
			continue;
		}
		if (a->log)
			return usage_error("more than one LOG: %s", arg);
		a->log = arg;
	}
	if (!a->log)
		return usage_error("%s", "no LOG to read");
	if (a->session && !a->session[0])
		return usage_error("%s", "--session needs a non-empty ID");
	if (a->output && !a->output[0])
		return usage_error("%s", "--output needs a FILE");
	return 0;
}

static void suggest_free(struct suggest *sg)
{
	for (size_t i = 0; i < sg->na; i++)
		action_free(&sg->a[i]);
	free(sg->a);
	for (size_t i = 0; i < sg->ns; i++) {
		struct session *x = &sg->s[i];
		free(x->id);
		free(x->agent);
		free(x->workspace);
		free(x->policy);
		free(x->first_ts);
		free(x->last_ts);
		free(x->exit);
	}
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
			action_free(&sg->c[k].probe[j]);
		free(sg->c[k].probe);
	}
	free(sg->c);
	for (size_t b = 0; b < sg->nfrom; b++)
		free(sg->from[b]);
	free(sg->from);
}

/* Writes len bytes of text to path (replaced) or stdout.  Exit status. */
static int write_out(const char *path, const char *text, size_t len)
{
	if (!path) {
		fwrite(text, 1, len, stdout);
		return AIRLOCK_EXIT_OK;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		airlock_err("suggest: cannot write %s: %m", path);
		return AIRLOCK_EXIT_FAILURE;
	}
	fwrite(text, 1, len, f);
	if (ferror(f) | (fclose(f) != 0)) {
		airlock_err("suggest: cannot write %s: %m", path);
		return AIRLOCK_EXIT_FAILURE;
	}
	return AIRLOCK_EXIT_OK;
}

int cmd_suggest(int argc, char **argv)
{
	struct suggest_args args = { 0 };
	struct suggest sg = { 0 };
	struct logread_filter filter = { 0 };
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	int r = parse_args(argc, argv, &args), status = AIRLOCK_EXIT_OK;
	if (r != 0)
		return r > 0 ? AIRLOCK_EXIT_OK : AIRLOCK_EXIT_USAGE;
	filter.session = args.session;
	sg.log_name = path;
	if (logread_file(args.log, "suggest", &filter, add_event, &sg, path, sizeof path) < 0) {
		suggest_free(&sg);
		return AIRLOCK_EXIT_FAILURE;
	}
	if (sg.oom) {
		airlock_err("suggest: out of memory");
		suggest_free(&sg);
		return AIRLOCK_EXIT_FAILURE;
	}
	if (sg.na == 0) {
		airlock_err("suggest: %s: no %sevents to learn from (exec, file or network events)%s",
			    path, args.session ? "matching " : "",
			    args.session ? "; check --session" : "");
		suggest_free(&sg);
		return AIRLOCK_EXIT_USAGE;
	}
	merge(&sg);
	sg.home = policy_source_home();
	if (!sg.home && errno == ENOENT)
		sg.home = strdup("/"); /* no home: no ~/ patterns */
	if (args.workspace && !(sg.workspace = realpath(args.workspace, NULL))) {
		airlock_err("suggest: --workspace %s: %m", args.workspace);
		suggest_free(&sg);
		return AIRLOCK_EXIT_USAGE;
	}
	if (!args.workspace)
		sg.workspace = find_workspace(&sg);
	if (!sg.home) {
		airlock_err("suggest: out of memory");
		suggest_free(&sg);
		return AIRLOCK_EXIT_FAILURE;
	}
	carry_over(&sg); /* first: the rules it leaves out keep the allow rules exact */
	choose_all(&sg);
	FILE *f = open_memstream(&text, &len);
	if (f && !sg.oom)
		put_policy(f, &sg, args.session);
	if (!f || fclose(f) != 0 || sg.oom) {
		airlock_err("suggest: out of memory");
		free(text);
		suggest_free(&sg);
		return AIRLOCK_EXIT_FAILURE;
	}
	unsigned long bad = verify(&sg, text, len);
	status = write_out(args.output, text, len);
	if (bad && status == AIRLOCK_EXIT_OK) {
		airlock_err("suggest: the suggested policy decides %lu action%s otherwise than the log "
			    "(above)%s; exit status 1",
			    bad, bad == 1 ? "" : "s", args.output ? ", written all the same" : "");
		status = AIRLOCK_EXIT_FAILURE;
	}
	free(text);
	suggest_free(&sg);
	return status;
}
