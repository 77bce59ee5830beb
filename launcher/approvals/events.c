/* events.c — what the shims send, as audit events: described, decided again, logged (see events.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/termtext.h"
#include "launcher/approvals/events.h"
#include "launcher/approvals/redecide.h"
#include "launcher/log/audit.h"

char *events_subject_as(const struct channel_msg *m, const char *program)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	if (!f)
		return NULL;
	switch (m->source) {
	case CHANNEL_SOURCE_EXEC: {
		struct channel_args it;
		const char *arg;
		fputs("exec ", f);
		termtext_put_word(f, program ? program : m->program);
		channel_args_begin(m, &it);
		channel_args_next(&it, NULL); /* argv[0]: the program says it better */
		while ((arg = channel_args_next(&it, NULL))) {
			fputc(' ', f);
			termtext_put_word(f, arg);
		}
		if (m->flags & CHANNEL_F_COPY) {
			fputs(" (a copy of ", f);
			termtext_put_word(f, m->copy_of);
			fputc(')', f);
		}
		break;
	}
	case CHANNEL_SOURCE_OPEN:
		fprintf(f, "%s ", channel_action_name(m->action));
		termtext_put_word(f, m->path);
		break;
	default:
		fputs("connect ", f);
		termtext_put_text(f, m->host);
		fprintf(f, ":%u", m->port);
	}
	if (fclose(f) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

char *events_subject(const struct channel_msg *m)
{
	return events_subject_as(m, NULL);
}

const char *events_default_reason(enum policy_action kind)
{
	static const char *const why[POLICY_ACTION_MAX] = {
		[POLICY_ACTION_EXEC] = "no rule matches: the policy's default for exec decided",
		[POLICY_ACTION_READ] = "no rule matches: the policy's default for read decided",
		[POLICY_ACTION_WRITE] = "no rule matches: the policy's default for write decided",
		[POLICY_ACTION_CONNECT] = "no rule matches: the policy's default for connect decided",
	};
	return (unsigned)kind < POLICY_ACTION_MAX ? why[kind] : NULL;
}

/* The kind of action m asks about, for the default that decides it. */
static enum policy_action msg_kind(const struct channel_msg *m)
{
	switch (m->source) {
	case CHANNEL_SOURCE_EXEC:
		return POLICY_ACTION_EXEC;
	case CHANNEL_SOURCE_OPEN:
		return policy_file_action_kind(m->action);
	case CHANNEL_SOURCE_CONNECT:
		return POLICY_ACTION_CONNECT;
	default:
		return POLICY_ACTION_MAX;
	}
}

void events_rule(const struct policy_image *img, const struct channel_msg *m, char *out,
		 size_t cap, const char **reason)
{
	struct policy_rule_info info;
	*reason = NULL;
	if (policy_rule_describe(img, m->rule, &info) != 0) {
		out[0] = '\0';
		if (m->rule < 0)
			*reason = events_default_reason(msg_kind(m));
		return;
	}
	snprintf(out, cap, "%s:%u", info.file, info.line);
	*reason = info.reason;
}

/*
 * The reason of an exec decided as the program it is a copy of: "as: git push
 * (a copy of /usr/bin/git, same build-id)", then the rule's own reason after
 * "; ".  Cut to fit cap.
 */
static const char *copy_reason(const struct channel_msg *m, const char *rule_reason, char *out,
			       size_t cap)
{
	struct channel_args it;
	const char *arg, *base = strrchr(m->copy_of, '/');
	size_t n = (size_t)snprintf(out, cap, "as: %s", base ? base + 1 : m->copy_of);
	channel_args_begin(m, &it);
	channel_args_next(&it, NULL);
	while (n < cap && (arg = channel_args_next(&it, NULL)))
		n += (size_t)snprintf(out + n, cap - n, " %s", arg);
	if (n < cap)
		n += (size_t)snprintf(out + n, cap - n, " (a copy of %s, same build-id)", m->copy_of);
	if (n < cap && rule_reason)
		snprintf(out + n, cap - n, "; %s", rule_reason);
	return out;
}

void events_log(struct audit_log *log, const struct policy_image *img, const struct channel_msg *m,
		pid_t pid, enum policy_decision d, enum channel_decided_by by, long response_ms,
		const char *message)
{
	struct audit_event ev = { .source = AUDIT_SOURCE_SHIM, .pid = pid, .response_time_ms = response_ms,
				  .message = message };
	char rule[1100], dst[300], why[2048];
	const char *args[256];
	size_t nargs = 0;
	events_rule(img, m, rule, sizeof rule, &ev.reason);
	if (m->source == CHANNEL_SOURCE_EXEC && (m->flags & CHANNEL_F_COPY) && m->copy_of)
		ev.reason = copy_reason(m, ev.reason, why, sizeof why);
	ev.rule = rule[0] ? rule : NULL;
	ev.decision = policy_decision_name(d);
	ev.decided_by = channel_decided_by_name(by);
	ev.truncated = m->flags & CHANNEL_F_TRUNCATED;
	/* a process in another pid namespace (a container): its own word for its pid, beside ours */
	if ((m->flags & CHANNEL_F_PID) && m->self_pid != pid)
		ev.ns_pid = m->self_pid;
	switch (m->source) {
	case CHANNEL_SOURCE_EXEC: {
		struct channel_args it;
		const char *arg;
		channel_args_begin(m, &it);
		channel_args_next(&it, NULL);
		while ((arg = channel_args_next(&it, NULL)) && nargs < sizeof args / sizeof args[0])
			args[nargs++] = arg;
		ev.truncated |= arg != NULL;
		ev.command = m->program;
		ev.args = args;
		ev.nargs = nargs;
		break;
	}
	case CHANNEL_SOURCE_OPEN:
		ev.file = m->path;
		ev.action = channel_action_name(m->action);
		break;
	default:
		snprintf(dst, sizeof dst, strchr(m->host, ':') ? "[%s]:%u" : "%s:%u", m->host, m->port);
		ev.network_dst = dst;
	}
	/* a failure is sticky: the launcher checks audit_error() once per loop and says it once */
	(void)audit_write(log, &ev);
}

enum policy_decision events_report(struct audit_log *log, const struct policy_image *img,
				   const struct channel_msg *m, pid_t pid)
{
	if (!img) {
		events_log(log, img, m, pid, m->decision, CHANNEL_BY_POLICY, -1, NULL);
		return m->decision;
	}
	const char *why;
	char msg[256];
	struct policy_verdict v = redecide_report(img, m, &why);
	bool cut = m->source == CHANNEL_SOURCE_EXEC &&
		   ((m->flags & CHANNEL_F_TRUNCATED) || m->argc_total > m->argc);
	if (v.decision <= m->decision) {
		/* as reported, or the report is stricter than the policy (a symlinked program
		   resolved inside the sandbox can be): the stricter one stands */
		if (cut && m->decision == POLICY_ALLOW)
			snprintf(msg, sizeof msg, "arguments cut to fit the channel: decided again on "
				 "the first %u of %u", m->argc, m->argc_total);
		events_log(log, img, m, pid, m->decision, CHANNEL_BY_POLICY, -1,
			   cut && m->decision == POLICY_ALLOW ? msg : NULL);
		return m->decision;
	}
	struct channel_msg fixed = *m;
	snprintf(msg, sizeof msg, "the shim reported %s, %s%s%s: a forged report from inside the "
		 "sandbox, or a bypassed shim", policy_decision_name(m->decision),
		 why ? why : "the policy says ", why ? "" : policy_decision_name(v.decision),
		 why ? ", deny" : "");
	fixed.decision = v.decision;
	fixed.rule = v.rule;
	fixed.flags &= ~CHANNEL_F_COPY; /* the launcher's rule decided, not the copy's */
	events_log(log, img, &fixed, pid, v.decision, CHANNEL_BY_POLICY, -1, msg);
	return v.decision;
}
