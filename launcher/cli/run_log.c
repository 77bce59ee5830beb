/* run_log.c — the audit events `airlock run` writes itself: the session's start and end, its notes, the proxy's connections. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "launcher/approvals/events.h"
#include "launcher/cli/run_log.h"
#include "launcher/sandbox/open_gate.h"
#include "launcher/sandbox/seccomp.h"

/* The seccomp filter's groups, + "process_spawn" when the policy forbids it; malloc'ed, NULL-terminated. */
static const char **refused_groups(const struct policy *p)
{
	const char *const *g = seccomp_group_names();
	size_t n = 0;
	while (g[n])
		n++;
	const char **out = calloc(n + 2, sizeof *out);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++)
		out[i] = g[i];
	if (!p->sandbox.process_spawn)
		out[n] = "process_spawn";
	return out;
}

int run_log_start(struct audit_log *log, const char *program, const char *profile,
		  const struct policy_source *src, const struct sandbox_report *rep,
		  const char *sandbox, int landlock, const char *landlock_why)
{
	struct audit_session_start start = { .program = program, .profile = profile,
					     .policy = src->name,
					     .workspace = src->workspace, .sandbox = AUDIT_SANDBOX_NONE };
	char message[PATH_MAX + 128], unavailable[300];
	if (landlock > 0) {
		start.landlock = landlock;
	} else {
		snprintf(unavailable, sizeof unavailable, "unavailable: %s",
			 !sandbox ? (program ? "no kernel sandbox (--no-sandbox)" : "no kernel sandbox (serve)")
			 : landlock_why && landlock_why[0] ? landlock_why : "unknown");
		start.landlock_unavailable = unavailable;
	}
	const char **groups = NULL;
	if (sandbox) {
		if (!(groups = refused_groups(src->policy)))
			return -ENOMEM;
		start.sandbox = sandbox;
		start.network = policy_network_mode_name(src->policy->sandbox.network);
		start.masked = (unsigned long)rep->masks + rep->sockets;
		start.sockets_masked = rep->sockets;
		start.masks_capped = rep->masks_capped;
		start.sockets_capped = rep->sockets_capped;
		start.seccomp = groups;
		start.open_gate = rep->open_gate;
		start.checkpoint = rep->checkpoint;
	}
	if (!program) /* airlock serve: no agent of its own */
		snprintf(message, sizeof message, "session started: airlock serve: no program; process "
			 "trees join it through the shim (airlock env); NO kernel sandbox: the shim "
			 "and this log only");
	else
		snprintf(message, sizeof message, "session started: %s%s", program,
			 !sandbox ? "; NO kernel sandbox (--no-sandbox): the shim and this log only"
				  : "");
	/* the session's start is no decision */
	struct audit_event ev = { .source = AUDIT_SOURCE_LAUNCHER, .pid = getpid(), .event = AUDIT_SESSION_START,
				  .start = &start, .response_time_ms = -1, .message = message };
	(void)audit_write(log, &ev);
	free(groups);
	return audit_error(log);
}

void run_log_end(struct audit_log *log, int status, const struct approvals *approvals,
		 const struct proxy *proxy, bool say)
{
	struct approve_counts c;
	struct proxy_stats ps = { 0 };
	char message[64];
	approve_counts(approvals, &c);
	if (proxy)
		proxy_stats(proxy, &ps);
	struct audit_session_end end = { .exit_status = status, .allowed = c.allow, .denied = c.deny,
					 .asked = c.asked, .connections = ps.connections,
					 .refused = ps.refused };
	struct audit_traffic total = { .bytes_up = ps.bytes_up, .bytes_down = ps.bytes_down,
				       .duration_ms = -1 };
	snprintf(message, sizeof message, "session ended: exit status %d", status);
	struct audit_event ev = { .source = AUDIT_SOURCE_LAUNCHER, .pid = getpid(), .event = AUDIT_SESSION_END,
				  .response_time_ms = -1, .end = &end, .traffic = &total,
				  .message = message };
	if (log)
		(void)audit_write(log, &ev);
	if (say) /* on a terminal: what happened, in one line */
		airlock_err("%s; %lu allowed, %lu denied, %lu asked; %lu connection(s), %lu refused, "
			    "%" PRIu64 " bytes out, %" PRIu64 " in; the log: %s",
			    message, c.allow, c.deny, c.asked, ps.connections, ps.refused, ps.bytes_up,
			    ps.bytes_down, log ? audit_path(log) : "-");
}

void run_log_proxy(struct audit_log *log, const struct policy_image *img,
		   const struct proxy_event *ev)
{
	struct policy_rule_info info;
	char rule[1100];
	bool described = policy_rule_describe(img, ev->rule, &info) == 0;
	if (described)
		snprintf(rule, sizeof rule, "%s:%u", info.file, info.line);
	struct audit_traffic traffic = { .bytes_up = ev->bytes_up, .bytes_down = ev->bytes_down,
					 .duration_ms = (long)ev->duration_ms, .via = ev->via };
	struct audit_event ae = { .source = AUDIT_SOURCE_PROXY, .network_dst = ev->destination,
				  .network_addr = ev->address,
				  .decision = policy_decision_name(ev->decision),
				  .decided_by = ev->decided_by, .rule = described ? rule : NULL,
				  .reason = described	   ? info.reason
						   : ev->rule < 0 ? events_default_reason(POLICY_ACTION_CONNECT)
								  : NULL,
				  .response_time_ms = -1,
				  .traffic = &traffic, .message = ev->why };
	if (log)
		(void)audit_write(log, &ae);
}

void run_log_gate_refused(struct audit_log *log, const struct policy_image *img, pid_t pid,
			  const char *path, int32_t rule)
{
	struct policy_rule_info info;
	char where[1100];
	if (rule == OPEN_GATE_RULE_NO_FDS) {
		(void)audit_launcher_note(log, getpid(), policy_decision_name(POLICY_DENY),
					  "the open gate (fanotify) is out of file descriptors: the kernel "
					  "refuses the sandbox's opens until the launcher has some again");
		return;
	}
	bool described = rule >= 0 && policy_rule_describe(img, rule, &info) == 0;
	if (described)
		snprintf(where, sizeof where, "%s:%u", info.file, info.line);
	struct audit_event ae = {
		.source = AUDIT_SOURCE_LAUNCHER, .pid = pid, .file = path,
		.action = policy_action_name(POLICY_ACTION_READ),
		.decision = policy_decision_name(POLICY_DENY), .decided_by = "policy",
		.rule = described ? where : NULL,
		.reason = described ? info.reason
			  : rule == OPEN_GATE_RULE_NO_PATH
				  ? "the open gate could not read the file's path, so no rule can be checked: "
				    "refused (fail closed)"
				  : "a credential store airlock always hides (its mandatory list)",
		.layer = "fanotify", .response_time_ms = -1,
		.message = "refused at the kernel layer (fanotify): no mask hides this file (it "
			   "appeared after the sandbox was built, or the mask walk skipped it) and its "
			   "opener is not in the shim's reach (a static binary, a raw syscall)",
	};
	if (log)
		(void)audit_write(log, &ae);
}

void run_log_checkpoint_refused(struct audit_log *log, pid_t pid, const char *path, int err)
{
	char reason[256];
	snprintf(reason, sizeof reason,
		 "the checkpoint could not save this file before the change (%s), so the change was "
		 "refused: `airlock undo` could not have put it back (fail closed)",
		 strerror(err));
	struct audit_event ae = {
		.source = AUDIT_SOURCE_LAUNCHER, .pid = pid, .file = path,
		.action = policy_action_name(POLICY_ACTION_WRITE),
		.decision = policy_decision_name(POLICY_DENY), .decided_by = "policy",
		.reason = reason, .layer = "seccomp", .response_time_ms = -1,
		.message = "refused at the kernel layer (seccomp user notification): checkpoint failed",
	};
	if (log)
		(void)audit_write(log, &ae);
}
