/* env.c — the agent's environment: only what the policy and the user name, then airlock's own variables. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "launcher/sandbox/env.h"
#include "launcher/sandbox/session.h"

/* The environment being built: "NAME=VALUE" strings, each owned. */
struct env_builder {
	char **v; /* owned; NULL-terminated once done */
	size_t n, cap;
	char *err;
	size_t errlen;
};

/* airlock's own variables, set last.  Their values are fixed but the session's. */
static const char *const reserved_names[] = { "LD_PRELOAD", "AIRLOCK_DIR", "AIRLOCK_SESSION" };

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int env_fail(struct env_builder *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Stores a message and returns -code. */
static int env_fail(struct env_builder *e, int code, const char *fmt, ...)
{
	va_list ap;
	if (e->err && e->errlen) {
		va_start(ap, fmt);
		vsnprintf(e->err, e->errlen, fmt, ap);
		va_end(ap);
	}
	return -code;
}

bool env_name_valid(const char *name, size_t len)
{
	if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

bool env_name_reserved(const char *name, size_t len)
{
	for (size_t i = 0; i < NELEM(reserved_names); i++)
		if (strlen(reserved_names[i]) == len && memcmp(reserved_names[i], name, len) == 0)
			return true;
	return false;
}

/* Length of the name part of "NAME=VALUE" (the whole string when there is no '='). */
static size_t name_len(const char *entry)
{
	return strcspn(entry, "=");
}

/* Index of name in the environment being built, or -1. */
static long env_find(const struct env_builder *e, const char *name, size_t len)
{
	for (size_t i = 0; i < e->n; i++)
		if (name_len(e->v[i]) == len && memcmp(e->v[i], name, len) == 0)
			return (long)i;
	return -1;
}

/* Sets name (len bytes) to value: replaces the value in place, else appends. */
static int env_set(struct env_builder *e, const char *name, size_t len, const char *value)
{
	char *s = NULL;
	if (asprintf(&s, "%.*s=%s", (int)len, name, value) < 0)
		return env_fail(e, ENOMEM, "environment: out of memory");
	long at = env_find(e, name, len);
	if (at >= 0) {
		free(e->v[at]);
		e->v[at] = s;
		return 0;
	}
	if (e->n + 2 > e->cap) { /* the new one and the NULL after it */
		char **nv = grow_array(e->v, &e->cap, e->n + 2, sizeof *nv, 32);
		if (!nv) {
			free(s);
			return env_fail(e, ENOMEM, "environment: out of memory");
		}
		e->v = nv;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
	return 0;
}

/* The caller's value for name (its first occurrence, as getenv(3)), or NULL. */
static const char *caller_get(char *const *caller_env, const char *name, size_t len)
{
	for (char *const *c = caller_env; c && *c; c++)
		if (name_len(*c) == len && (*c)[len] == '=' && memcmp(*c, name, len) == 0)
			return *c + len + 1;
	return NULL;
}

/* A passthrough pattern: a name, or a name prefix ending in '*'. */
static int pattern_check(struct env_builder *e, const char *pat)
{
	size_t len = strlen(pat);
	bool prefix = len > 0 && pat[len - 1] == '*';
	if (prefix && len == 1)
		return env_fail(e, EINVAL,
				"sandbox.env_passthrough: '*' would pass every variable (API keys "
				"included); name them, or prefixes such as LC_*");
	if (!env_name_valid(pat, prefix ? len - 1 : len))
		return env_fail(e, EINVAL,
				"sandbox.env_passthrough: '%s' is not a variable name (letters, digits "
				"and '_', not starting with a digit), nor one followed by '*'",
				pat);
	return 0;
}

static bool pattern_matches(const char *pat, const char *name, size_t len)
{
	size_t plen = strlen(pat);
	if (plen > 0 && pat[plen - 1] == '*')
		return len >= plen - 1 && memcmp(pat, name, plen - 1) == 0;
	return plen == len && memcmp(pat, name, len) == 0;
}

static bool passthrough_matches(const struct policy_sandbox *sb, const char *name, size_t len)
{
	for (size_t i = 0; i < sb->nenv_passthrough; i++)
		if (pattern_matches(sb->env_passthrough[i], name, len))
			return true;
	return false;
}

/* Layer 1: the caller's variables the policy names; airlock's own are never taken from there. */
static int layer_passthrough(struct env_builder *e, const struct policy_sandbox *sb,
			     char *const *caller_env)
{
	int r = 0;
	for (size_t i = 0; i < sb->nenv_passthrough && !r; i++)
		r = pattern_check(e, sb->env_passthrough[i]);
	for (char *const *c = caller_env; c && *c && !r; c++) {
		size_t len = name_len(*c);
		if ((*c)[len] != '=' || !env_name_valid(*c, len) || env_name_reserved(*c, len) ||
		    !passthrough_matches(sb, *c, len) || env_find(e, *c, len) >= 0)
			continue;
		r = env_set(e, *c, len, *c + len + 1);
	}
	return r;
}

/* A name the policy or the user sets: valid, and not one of airlock's own. */
static int name_check(struct env_builder *e, const char *where, const char *name, size_t len)
{
	if (!env_name_valid(name, len))
		return env_fail(e, EINVAL,
				"%s: '%.*s' is not a variable name (letters, digits and '_', not "
				"starting with a digit)",
				where, (int)len, name);
	if (env_name_reserved(name, len))
		return env_fail(e, EINVAL,
				"%s: %.*s is set by airlock itself (the shim and its session "
				"directory); remove it",
				where, (int)len, name);
	return 0;
}

/* Layer 2: the policy's env: values. */
static int layer_policy(struct env_builder *e, const struct policy_sandbox *sb)
{
	int r = 0;
	for (size_t i = 0; i < sb->nenv && !r; i++) {
		const struct policy_env_var *v = &sb->env[i];
		size_t len = strlen(v->name);
		r = name_check(e, "sandbox.env", v->name, len);
		if (!r)
			r = env_set(e, v->name, len, v->value ? v->value : "");
	}
	return r;
}

/* Layer 3: --env NAME=VALUE sets, --env NAME passes the caller's value through. */
static int layer_user(struct env_builder *e, char *const *user_env, char *const *caller_env)
{
	int r = 0;
	for (char *const *u = user_env; u && *u && !r; u++) {
		size_t len = name_len(*u);
		r = name_check(e, "--env", *u, len);
		if (r)
			break;
		const char *value = (*u)[len] == '=' ? *u + len + 1 : caller_get(caller_env, *u, len);
		if (value)
			r = env_set(e, *u, len, value);
	}
	return r;
}

/* Layer 4: the shim, where it finds the session, and which session. */
static int layer_airlock(struct env_builder *e, const char *session_id)
{
	static const char shim[] = RUN_SANDBOX_DIR "/" RUN_SHIM_NAME;
	int r = env_set(e, "LD_PRELOAD", strlen("LD_PRELOAD"), shim);
	if (!r)
		r = env_set(e, "AIRLOCK_DIR", strlen("AIRLOCK_DIR"), RUN_SANDBOX_DIR);
	if (!r)
		r = env_set(e, "AIRLOCK_SESSION", strlen("AIRLOCK_SESSION"), session_id);
	return r;
}

char **env_build(const struct policy *p, char *const *caller_env, char *const *user_env,
		 const char *session_id, char *err, size_t errlen)
{
	struct env_builder e = { .err = err, .errlen = errlen };
	int r = 0;
	if (!p || !session_id || !session_id[0])
		r = env_fail(&e, EINVAL, "environment: no policy or session id given");
	if (!r)
		r = layer_passthrough(&e, &p->sandbox, caller_env);
	if (!r)
		r = layer_policy(&e, &p->sandbox);
	if (!r)
		r = layer_user(&e, user_env, caller_env);
	if (!r)
		r = layer_airlock(&e, session_id);
	if (r) {
		env_free(e.v);
		errno = -r;
		return NULL;
	}
	return e.v;
}

int env_append(char ***env, const char *entry)
{
	size_t n = 0;
	while (*env && (*env)[n])
		n++;
	char *s = strdup(entry);
	char **nv = s ? realloc(*env, (n + 2) * sizeof *nv) : NULL;
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[n] = s;
	nv[n + 1] = NULL;
	*env = nv;
	return 0;
}

void env_free(char **env)
{
	if (!env)
		return;
	for (char **v = env; *v; v++)
		free(*v);
	free(env);
}
