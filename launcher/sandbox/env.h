/* env.h — the agent's environment, rebuilt from nothing: passthrough names, the policy's env:, --env items, airlock's own variables. */
#ifndef AIRLOCK_ENV_H
#define AIRLOCK_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/*
 * Builds the agent's whole environment, in four layers, a later one
 * replacing an earlier one's value for the same name (the entry keeps its
 * first position):
 *   1. from caller_env ("NAME=VALUE", NULL-terminated; may be NULL), only the
 *      names p->sandbox.env_passthrough lists; an entry ending in '*' is a
 *      prefix (LC_*).  The first occurrence of a name counts, as getenv(3).
 *   2. p->sandbox.env, in file order: the policy's values.
 *   3. user_env (the run's --env items, NULL-terminated; may be NULL):
 *      "NAME=VALUE" sets NAME; "NAME" passes NAME through from caller_env
 *      (nothing when the caller has none).
 *   4. LD_PRELOAD=/run/airlock/airlock-preload.so, AIRLOCK_DIR=/run/airlock,
 *      AIRLOCK_SESSION=session_id.  These always win: a passthrough pattern
 *      cannot carry the caller's, and the policy's env: or an --env item
 *      naming one is an error, so the shim cannot be switched off from the
 *      command line or the policy.
 * Nothing else crosses (API keys stay out unless named).
 * Names must be [A-Za-z_][A-Za-z0-9_]*; a passthrough pattern may end in '*'
 * but may not be "*" alone (that would pass every variable).
 * Returns a malloc'ed NULL-terminated array of malloc'ed "NAME=VALUE"
 * strings (free with env_free()), or NULL with a message in err (errno
 * EINVAL for bad names, ENOMEM).
 */
char **env_build(const struct policy *p, char *const *caller_env, char *const *user_env,
		 const char *session_id, char *err, size_t errlen);

/*
 * Appends a copy of entry ("NAME=VALUE", a name not yet in it: one of
 * airlock's own, known only after env_build(), such as the session copies'
 * AIRLOCK_PLACEHOLDERS) to *env, an array from env_build() (realloc'ed).
 * 0 or -ENOMEM (*env unchanged).
 */
int env_append(char ***env, const char *entry);

/* Frees an array from env_build().  Accepts NULL. */
void env_free(char **env);

/* True when the len bytes at name form a portable variable name: [A-Za-z_][A-Za-z0-9_]*. */
bool env_name_valid(const char *name, size_t len);

/* True for the names airlock sets itself (LD_PRELOAD, AIRLOCK_DIR, AIRLOCK_SESSION). */
bool env_name_reserved(const char *name, size_t len);

#endif
