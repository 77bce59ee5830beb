/*
 * redecide.h — what the policy says of the action a shim's event reports,
 * decided again by the launcher from its own image.  A shim's report is the
 * agent's own process speaking (anything inside the sandbox can send one),
 * so approve.c logs it as this decides, never more permissive.  Internal to
 * launcher/approvals.
 */
#ifndef AIRLOCK_APPROVALS_REDECIDE_H
#define AIRLOCK_APPROVALS_REDECIDE_H

#include "core/channel.h"
#include "policy/policy.h"

/*
 * The verdict img gives the action m (a decoded EXEC, OPEN or CONNECT)
 * reports.  An exec is decided on the program as reported, as resolved on
 * the host (realpath(3)) and lexically (canon_lexical()), the strictest of
 * the three, and on the program the dynamic loader runs when the program is
 * the loader (core/loader.h); an open on the path as reported.  A report no
 * shim sends — a relative program, a path that is not canonical (core/canon.h's
 * form: absolute, no "." / ".." / "//", no trailing "/", not through
 * /proc/PID/root or /proc/PID/cwd; /proc/self/fd/N of a pipe excepted) — is
 * denied with rule -1, and *why says what was wrong (static text); else
 * *why is NULL.  Out of memory is such a deny too.
 */
struct policy_verdict redecide_report(const struct policy_image *img, const struct channel_msg *m,
				      const char **why);

#endif
