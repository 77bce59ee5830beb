/*
 * events.h — what the shims send, as the audit log and the human see it: a
 * message's subject in one line, its rule as FILE:LINE, and its audit event;
 * a shim's report of a decision it took, decided again (redecide.h) and
 * logged never more permissive than the policy.  Internal to
 * launcher/approvals: approve.c counts what these log.
 */
#ifndef AIRLOCK_APPROVALS_EVENTS_H
#define AIRLOCK_APPROVALS_EVENTS_H

#include <stddef.h>
#include <sys/types.h>

#include "core/channel.h"
#include "policy/policy.h"

struct audit_log;

/*
 * What m is about, in one line: "exec /usr/bin/git push", "read /x/.env",
 * "connect h:443".  The program, each argument and the path are shell words
 * (termtext_put_word(): 'my dir', $'\u202e'), the host free text
 * (termtext_put_text()), as `airlock log` shows them: this is the text the
 * prompt and the TUI show for an ask.  malloc'ed; NULL when out of memory.
 */
char *events_subject(const struct channel_msg *m);

/* events_subject() with an exec's program shown as program (NULL: m's own). */
char *events_subject_as(const struct channel_msg *m, const char *program);

/*
 * The rule of img that decided m (m->rule) as "FILE:LINE" in out (cap
 * bytes), its reason in *reason (borrowed from img, or NULL when the rule
 * has none); out is "" for the policy's default (rule -1: *reason then says
 * which default decided, events_default_reason()) or a rule img does not
 * describe.
 */
void events_rule(const struct policy_image *img, const struct channel_msg *m, char *out,
		 size_t cap, const char **reason);

/*
 * The reason logged for a decision no rule made: "no rule matches: the
 * policy's default for KIND decided" (static), or NULL for a kind out of
 * range.  The decision itself is the event's own field.
 */
const char *events_default_reason(enum policy_action kind);

/*
 * Writes m (sent by pid) to log as decided d by `by`, with how long the
 * answer took (response_ms, -1: not an ask) and a message for people (or
 * NULL).  An exec the shim decided as a copy of another program
 * (CHANNEL_F_COPY) has the reason "as: git push (a copy of /usr/bin/git,
 * same build-id)", then "; " and the rule's reason.  A write that fails is
 * left to audit_error() (sticky).
 */
void events_log(struct audit_log *log, const struct policy_image *img, const struct channel_msg *m,
		pid_t pid, enum policy_decision d, enum channel_decided_by by, long response_ms,
		const char *message);

/*
 * A shim's event m (a decision it took, sent by pid): anything inside the
 * sandbox can send one.  It is logged as img decides the action it reports,
 * never more permissive than that: a report of an allow the policy would
 * not give is logged as the policy's decision, and says so (a forged
 * report, or a bypassed shim); a report whose arguments were cut to fit the
 * channel is decided on what arrived, and says so.  img NULL: logged as
 * reported.  Returns the decision logged.
 */
enum policy_decision events_report(struct audit_log *log, const struct policy_image *img,
				   const struct channel_msg *m, pid_t pid);

#endif
