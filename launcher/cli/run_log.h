/* run_log.h — the audit events `airlock run` writes itself: the session's start and end, its notes, the egress proxy's connections. */
#ifndef AIRLOCK_CLI_RUN_LOG_H
#define AIRLOCK_CLI_RUN_LOG_H

#include <stdbool.h>

#include "launcher/approvals/approve.h"
#include "launcher/cli/launcher.h"
#include "launcher/log/audit.h"
#include "launcher/sandbox/sandbox.h"
#include "proxy/proxy.h"

/*
 * The session's first event (event session_start, before the agent starts):
 * program (absolute; NULL for `airlock serve`, which has none: the field is
 * left out and the message says "airlock serve"), the agent profile in effect (its name, or "none"),
 * the policy src names and its workspace, and the
 * sandbox: AUDIT_SANDBOX_NONE when sandbox is NULL (--no-sandbox), else
 * sandbox (the backend's name) with src's sandbox.network, rep's masks and
 * the seccomp filter's groups (process_spawn too when the policy forbids it);
 * landlock: the Landlock ABI the agent's ruleset applies, or 0 and
 * landlock_why saying why there is none (written "unavailable: WHY").
 * Returns 0, or audit_error()'s -errno when the event is not in the log
 * (-ENOMEM when it could not be built).
 */
int run_log_start(struct audit_log *log, const char *program, const char *profile,
		  const struct policy_source *src, const struct sandbox_report *rep,
		  const char *sandbox, int landlock, const char *landlock_why);

/*
 * The session's last event (event session_end): exit status, the
 * approvals' counts and the proxy's totals (proxy NULL: no egress proxy,
 * zeros).  When say, also one line on stderr for the person at the
 * terminal: "airlock: session ended: exit status N; ...; the log: PATH".
 */
void run_log_end(struct audit_log *log, int status, const struct approvals *approvals,
		 const struct proxy *proxy, bool say);

/*
 * One connection the egress proxy decided (a proxy event): destination,
 * decision, the deciding rule of img with its reason, bytes, duration, how
 * it came, and why it was refused besides the policy as the message.
 */
void run_log_proxy(struct audit_log *log, const struct policy_image *img,
		   const struct proxy_event *ev);

/*
 * An open the open gate refused (open_gate.h): by pid (as the launcher sees
 * it), of path, by img's rule (-1: the mandatory list of credential stores),
 * at the kernel layer ("layer": "fanotify").
 */
void run_log_gate_refused(struct audit_log *log, const struct policy_image *img, pid_t pid,
			  const char *path, int32_t rule);

/*
 * A call of the sandbox's refused because the checkpoint could not save the
 * file it would change first (launcher/checkpoint/supervise.h): pid as the
 * launcher sees it, path absolute, err the errno the call got.
 */
void run_log_checkpoint_refused(struct audit_log *log, pid_t pid, const char *path, int err);

#endif
