/* hub.c — one session's parts wired together, as `airlock run` and its tests use them (see hub.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launcher/approvals/flood.h"
#include "launcher/approvals/hub.h"
#include "launcher/log/audit.h"
#include "launcher/approvals/approve.h"

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void answer(void *ctx, uint64_t id, enum control_answer a)
{
	struct hub *h = ctx;
	enum policy_decision d = control_answer_allows(a) ? POLICY_ALLOW
										    : POLICY_DENY;
	if (h->approvals)
		(void)approve_answer(h->approvals, id, d,
				     a == CONTROL_ALLOW_SESSION || a == CONTROL_DENY_SESSION);
}

static void attached(void *ctx, unsigned n)
{
	struct hub *h = ctx;
	(void)n;
	if (h->approvals)
		approve_attached(h->approvals);
}

static void quit(void *ctx)
{
	((struct hub *)ctx)->quit_requested = true;
}

static void log_refusal(struct hub *h, pid_t peer, const char *why)
{
	(void)audit_launcher_note(h->log, peer, policy_decision_name(POLICY_DENY), why);
}

static void malformed(void *ctx, pid_t peer, const char *why)
{
	struct hub *h = ctx;
	if (!h->flood || flood_admit(h->flood, peer, mono_ms()))
		log_refusal(h, peer, why);
}

static void summary(void *arg, pid_t peer, unsigned long n)
{
	char msg[200];
	snprintf(msg, sizeof msg, "%lu more bad line(s) on the control socket%s dropped unlogged",
		 n, peer ? "" : " from clients no longer tracked");
	log_refusal(arg, peer, msg);
}

const struct control_ops hub_control_ops = {
	.answer = answer,
	.attached = attached,
	.quit = quit,
	.malformed = malformed,
};

/* Every line the audit log gets goes to the control socket's clients too. */
static void tap(void *arg, const char *line, size_t len)
{
	control_event(arg, line, len);
}

int hub_init(struct hub *h, struct audit_log *log)
{
	memset(h, 0, sizeof *h);
	h->log = log;
	h->flood = flood_new(summary, h);
	return h->flood ? 0 : -ENOMEM;
}

void hub_set_control(struct hub *h, struct control *control)
{
	h->control = control;
	if (h->log)
		audit_set_tap(h->log, control ? tap : NULL, control);
}

void hub_tick(struct hub *h)
{
	flood_tick(h->flood, mono_ms());
}

void hub_flush(struct hub *h)
{
	flood_flush(h->flood);
}

void hub_release(struct hub *h)
{
	flood_free(h->flood); /* its last summaries still reach the clients */
	h->flood = NULL;
	hub_set_control(h, NULL);
}
