/* suggest.h — `airlock suggest`'s parts: the log's actions, the rules generalised from them, the deny rules carried over, the policy text. */
#ifndef AIRLOCK_SUGGEST_SUGGEST_H
#define AIRLOCK_SUGGEST_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

#include "core/channel.h"
#include "launcher/log/logread.h"
#include "policy/policy.h"

/*
 * The steps, in the order launcher/cli/cmd_suggest.c takes them:
 *   events.c      the log's events read into actions (suggest_add_event()), identical ones
 *                 merged, the workspace found;
 *   carry.c       the deny rules of the built-in default policy and of the sessions' policies
 *                 carried over, less those the log contradicts (probes.c makes what those deny
 *                 concrete);
 *   generalise.c  a rule for each action, as wide as covers nothing decided otherwise;
 *   emit.c        the policy text, and the check of it against the log.
 * text.c holds the YAML and descriptions they share.
 */

enum kind { K_EXEC = 0, K_FILE, K_NET, K_MAX };

/* Who decided, as the log's decided_by names it (core/channel.h's names), or another word. */
enum by {
	BY_POLICY = CHANNEL_BY_POLICY,
	BY_HUMAN = CHANNEL_BY_HUMAN,
	BY_SESSION = CHANNEL_BY_SESSION,
	BY_DEFAULT = CHANNEL_BY_DEFAULT,
	BY_TIMEOUT = CHANNEL_BY_TIMEOUT,
	BY_OTHER = CHANNEL_DECIDED_BY_MAX,
	BY_MAX
};

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
	size_t nprobe, probe_cap;
};

/* Everything one `airlock suggest` holds; zero it to start, suggest_free() at the end. */
struct suggest {
	const char *log_name;
	struct action *a;
	size_t na, cap;
	struct log_session *s; /* the sessions, as the log describes them */
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

/* ---- the steps ------------------------------------------------------------------- */

/*
 * One event of the log (a logread_event_fn; ctx is the struct suggest): an
 * exec, file or network event becomes an action, a launcher event fills
 * its session; an event that is no action it can decide is said on stderr
 * ("LOG:LINE: what, skipped") and counted in skipped.  Out of memory sets oom.
 */
void suggest_add_event(void *ctx, json_object *ev, const char *line, size_t len,
		       unsigned long lineno);

/* Merges identical actions into one each; one decided two ways is denied (said on stderr). */
void suggest_merge(struct suggest *sg);

/*
 * The workspace ./ stands for, malloc'ed: the one every session's start
 * event names; else the deepest directory every allowed write lies in, when
 * that is at least two levels deep and neither the home directory nor /tmp.
 * NULL: none (or out of memory).
 */
char *suggest_find_workspace(const struct suggest *sg);

/*
 * Carries over the deny rules of the built-in default policy, then those of
 * each recorded session's policy file when it still loads, less those the
 * log contradicts (said on stderr).  Before suggest_choose_all(): the rules
 * it leaves out keep the allow rules exact.
 */
void suggest_carry_over(struct suggest *sg);

/* A rule for every action that needs one (said on stderr when none can tell it apart). */
void suggest_choose_all(struct suggest *sg);

/* Writes the whole policy to f; filter is the --session asked for (NULL: all), for its header. */
void suggest_put_policy(FILE *f, struct suggest *sg, const char *filter);

/*
 * Decides every action with the policy text (len bytes) as `airlock check`
 * would, and says on stderr which ones it decides otherwise than the log.
 * Returns how many.
 */
unsigned long suggest_verify(const struct suggest *sg, const char *text, size_t len);

/* Frees everything sg owns. */
void suggest_free(struct suggest *sg);

/* ---- shared by the parts ----------------------------------------------------------- */

/* events.c: frees what action a owns. */
void suggest_action_free(struct action *a);

/* events.c: a copy of s (NULL for NULL); sets *oom when the copy fails. */
char *suggest_strdup(const char *s, bool *oom);

/* events.c: true when path is dir or below it (dir "" or "/": any absolute path). */
bool suggest_under(const char *path, const char *dir);

/* text.c: a malloc'ed formatted string, or NULL. */
char *suggest_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* text.c: s as a YAML double-quoted scalar. */
void suggest_put_yaml(FILE *f, const char *s);

/* text.c: s as a malloc'ed YAML double-quoted scalar, or NULL. */
char *suggest_yaml_quoted(const char *s);

/* text.c: the first n arguments of a joined by single spaces. */
void suggest_put_args(FILE *f, const struct action *a, size_t n);

/* text.c: what an action did: "exec PROGRAM ARGS", "write PATH", "connect HOST:PORT"; malloc'ed, or NULL. */
char *suggest_example_text(const struct action *a);

/* text.c: dir + "/" + rest, malloc'ed (dir "/" gives "/rest"). */
char *suggest_join(const char *dir, const char *rest);

/*
 * generalise.c: a candidate rule: the YAML list item, compiled alone into an
 * allow list over an all-deny default, so that an action it covers gets rule 0.
 */
struct candidate {
	char *yaml;  /* owned */
	void *blob;  /* owned; the image */
	const struct policy_image *img;
};

/* Compiles c->yaml against sg's home and workspace; false when the policy language cannot hold it. */
bool suggest_candidate_compile(const struct suggest *sg, struct candidate *c);

/* Frees what c owns and empties it. */
void suggest_candidate_free(struct candidate *c);

/* The verdict img gives action a (exec, open or connect, as the shim or the proxy asks). */
struct policy_verdict suggest_decide(const struct policy_image *img, const struct action *a);

/* True when candidate c covers action a. */
bool suggest_covers(const struct candidate *c, const struct action *a);

/* carry.c: which default alone allowed (or asked about) a, for messages: "its policy's default"... */
const char *suggest_which_default(const struct action *a);

/*
 * probes.c: the actions left-out rule r (carried as c) denies, its patterns
 * made concrete (args `-rf /` + `*`: rm -rf /, rm -rf /etc; `~/.ssh`:
 * ~/.ssh, ~/.ssh/probe), into c->probe.  A regex names none.
 */
void suggest_make_probes(struct suggest *sg, struct carried *c, const struct policy_rule *r);

#endif
