/* run_serve.c — `airlock run`'s loop (run.h): approvals, control clients, the egress proxy and the sandbox's news, limits and signals, until the agent ends. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/approvals/approve.h"
#include "launcher/approvals/control.h"
#include "launcher/checkpoint/supervise.h"
#include "launcher/cli/run.h"
#include "launcher/cli/run_log.h"
#include "launcher/log/audit.h"
#include "proxy/proxy.h"

/* The loop's own state. */
struct loop {
	long long limit;  /* ms the session may run (limits), or -1 */
	long long start;  /* when it started, mono_ms() */
	long long kill_at; /* when the agent told to end gets SIGKILL, or -1 */
	bool timed_out;   /* the time limit ended it */
	bool unrecorded;  /* the audit log failed: the agent was stopped */
	int status;       /* the agent's exit status once it ended, else -1 */
};

/* The agent as this process sees it, to forward signals to; 0 until known. */
static pid_t agent_pid(struct run *r)
{
	return r->o.no_sandbox ? r->child : r->backend->agent(r->sandbox);
}

/* SIGINT / SIGTERM / SIGHUP / SIGQUIT go to the agent's process group, as a shell's would. */
static void forward(struct run *r, int sig)
{
	pid_t agent = agent_pid(r);
	if (agent > 0) {
		kill(-agent, sig);
		kill(agent, sig);
	} else if (r->child > 0) {
		kill(r->child, sig);
	}
}

/*
 * The audit log failed (audit_error()): nothing the agent does from now on
 * would be recorded, so it may do nothing more.  The sandbox is killed at
 * once (bwrap's death takes it all; --no-sandbox: the agent's process
 * group), every waiting ask is denied, and the proxy stops relaying: freed
 * after the asks it waits on are answered (proxy_free() wants that), its
 * open connections closed.  r->proxy is NULL from then on.
 */
static void stop_unrecorded(struct run *r)
{
	forward(r, SIGKILL);
	if (r->child > 0)
		kill(r->child, SIGKILL);
	approve_end(r->approvals);
	proxy_free(r->proxy);
	r->proxy = NULL;
}

static int status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return RUN_EXIT_FAILED;
}

/* The session's time limit in milliseconds from now-at-start, or -1 (limits: session_timeout, exec_timeout). */
static long long time_limit_ms(const struct policy *p)
{
	long long best = -1;
	if (p->limits.set & POLICY_LIMIT_SESSION_TIMEOUT)
		best = (long long)p->limits.session_timeout * 1000;
	if ((p->limits.set & POLICY_LIMIT_EXEC_TIMEOUT) &&
	    (best < 0 || (long long)p->limits.exec_timeout * 1000 < best))
		best = (long long)p->limits.exec_timeout * 1000;
	return best;
}

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* t, or left ms if that is sooner (0 when past); t < 0: no timeout yet. */
static int sooner(int t, long long left)
{
	return left <= 0 ? 0 : (t < 0 || left < t) ? (int)left : t;
}

/* How long poll(2) may wait: the oldest ask, the proxy's timers, the time limit or the kill, the first. */
static int next_timeout(struct run *r, const struct loop *l)
{
	int t = approve_timeout_ms(r->approvals);
	int pt = r->proxy ? proxy_timeout_ms(r->proxy) : -1;
	if (pt >= 0 && (t < 0 || pt < t))
		t = pt;
	long long now = mono_ms();
	if (l->limit >= 0 && !l->timed_out)
		t = sooner(t, l->start + l->limit - now);
	if (l->kill_at >= 0)
		t = sooner(t, l->kill_at - now);
	return t;
}

/*
 * Opens waiting at the open gate, answered.  A gate that fails (its group
 * unreadable or unanswerable) would leave opens hanging or unchecked: the
 * sandbox is ended, the log says why.
 */
static void gate_serve(struct run *r)
{
	char msg[160];
	int e = open_gate_serve(r->gate);
	if (e == 0)
		return;
	snprintf(msg, sizeof msg, "the open gate (fanotify) failed: %s: ending the agent",
		 e == -ECHILD ? "its worker process ended" : strerror(-e));
	(void)audit_launcher_note(r->log, getpid(), policy_decision_name(POLICY_DENY), msg);
	airlock_err("run: %s", msg);
	open_gate_free(r->gate);
	r->gate = NULL;
	forward(r, SIGKILL);
	if (r->child > 0)
		kill(r->child, SIGKILL);
}

/*
 * The checkpoint worker's news: calls refused because a save failed (logged
 * by the callback).  A worker that died leaves the sandbox's destroying
 * calls failing (ENOSYS) and nothing saved: the sandbox is ended, the log
 * says why.
 */
static void checkpoint_news(struct run *r)
{
	char msg[200];
	int e = checkpoint_serve(r->checkpoint);
	if (e == 0)
		return;
	snprintf(msg, sizeof msg, "the checkpoint's worker failed: %s: ending the agent",
		 e == -ECHILD ? "its process ended" : strerror(-e));
	(void)audit_launcher_note(r->log, getpid(), policy_decision_name(POLICY_DENY), msg);
	airlock_err("run: %s", msg);
	forward(r, SIGKILL);
	if (r->child > 0)
		kill(r->child, SIGKILL);
	r->checkpoint_failed = true;
}

/* Waits for work, then does it: control clients, shims, the proxy, the sandbox's news.  false: poll failed. */
static bool dispatch(struct run *r, const struct loop *l)
{
	int ready = r->sandbox ? r->backend->ready_fd(r->sandbox) : -1;
	struct pollfd fds[7] = { { approve_fd(r->approvals), POLLIN, 0 },
				 { r->sigfd, POLLIN, 0 },
				 { r->proxy ? proxy_fd(r->proxy) : -1, POLLIN, 0 },
				 { control_fd(r->control), POLLIN, 0 },
				 { ready, POLLIN, 0 },
				 { open_gate_fd(r->gate), POLLIN, 0 },
				 { r->checkpoint_failed ? -1 : checkpoint_fd(r->checkpoint), POLLIN, 0 } };
	if (poll(fds, 7, next_timeout(r, l)) < 0 && errno != EINTR)
		return false;
	if (fds[6].fd >= 0 && (fds[6].revents & (POLLIN | POLLHUP | POLLERR)))
		checkpoint_news(r);
	/* first: every open in the sandbox waits on it */
	if (r->gate && (fds[5].revents & (POLLIN | POLLHUP | POLLERR)))
		gate_serve(r);
	control_dispatch(r->control);
	approve_dispatch(r->approvals);
	if (r->proxy)
		proxy_dispatch(r->proxy);
	if (ready >= 0 && (fds[4].revents & (POLLIN | POLLHUP)))
		(void)r->backend->ready(r->sandbox);
	hub_tick(&r->hub);
	return true;
}

/* What ends the agent: the audit log failing, a control client's quit, the time limit, the kill 2 s after. */
static void enforce(struct run *r, struct loop *l)
{
	if (!l->unrecorded && audit_error(r->log) < 0) {
		l->unrecorded = true; /* said once, by cmd_run(), after the terminal is back */
		stop_unrecorded(r);
	}
	if (l->unrecorded)
		approve_end(r->approvals); /* asks that came since: denied at once */
	if (r->o.serve) { /* no agent to end: what would end it ends the session */
		if (r->hub.quit_requested) {
			(void)audit_launcher_note(r->log, getpid(), NULL, "ending the session: asked on "
								  "the control socket (TUI or airlock attach)");
			l->status = 0;
		}
		if (l->limit >= 0 && !l->timed_out && mono_ms() >= l->start + l->limit) {
			l->timed_out = true;
			(void)audit_launcher_note(r->log, getpid(), policy_decision_name(POLICY_DENY),
						  "time limit reached (limits session_timeout / "
						  "exec_timeout): ending the session");
			l->status = RUN_EXIT_TIMEOUT;
		}
		if (l->unrecorded)
			l->status = RUN_EXIT_FAILED;
		return;
	}
	if (r->hub.quit_requested && l->kill_at < 0) {
		r->hub.quit_requested = false;
		(void)audit_launcher_note(r->log, getpid(), NULL, "ending the agent: asked on the "
							  "control socket (TUI or airlock attach)");
		forward(r, SIGTERM);
		l->kill_at = mono_ms() + 2000;
	}
	if (l->limit >= 0 && !l->timed_out && mono_ms() >= l->start + l->limit) {
		l->timed_out = true;
		(void)audit_launcher_note(r->log, getpid(), policy_decision_name(POLICY_DENY),
					  "time limit reached (limits session_timeout / exec_timeout): "
					  "ending the agent");
		airlock_err("run: time limit reached: ending the agent");
		forward(r, SIGTERM);
		l->kill_at = mono_ms() + 2000;
	}
	if (l->kill_at >= 0 && mono_ms() >= l->kill_at && r->child > 0) {
		kill(r->child, SIGKILL); /* bwrap's death takes the whole sandbox with it */
		l->kill_at = -1;
	}
}

/* The signals the loop reads: forwarded, the terminal's size passed on, children reaped. */
static void signals(struct run *r, struct loop *l)
{
	struct signalfd_siginfo si;
	while (read(r->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo == SIGWINCH) {
			run_resize_agent(r);
			continue;
		}
		if (si.ssi_signo != SIGCHLD && r->o.serve) {
			/* serve's end: the session's last events and end written as run's are */
			char msg[96];
			snprintf(msg, sizeof msg, "ending the session: signal %d (%s)",
				 (int)si.ssi_signo, strsignal((int)si.ssi_signo));
			(void)audit_launcher_note(r->log, getpid(), NULL, msg);
			l->status = 0;
			continue;
		}
		if (si.ssi_signo != SIGCHLD) {
			forward(r, (int)si.ssi_signo);
			continue;
		}
		/* ours, the TUI, or an orphan of the agent's we adopted (subreaper) */
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p == r->child)
				l->status = status_of(st);
			else if (p == r->tui)
				r->tui = 0;
		}
	}
}

int run_serve(struct run *r)
{
	struct loop l = { .limit = time_limit_ms(r->src.policy), .start = mono_ms(), .kill_at = -1,
			  .status = -1 };
	while (l.status < 0) {
		run_push_status(r);
		if (!dispatch(r, &l))
			break;
		enforce(r, &l);
		signals(r, &l);
	}
	/* the last events the agent sent: new connections first, then what they carry */
	for (int i = 0; i < 100 && approve_dispatch(r->approvals) > 0; i++)
		;
	bool stood = r->o.no_sandbox || r->backend->ready(r->sandbox);
	if (!stood && !l.timed_out && !l.unrecorded) {
		char msg[128];
		/* the backend says when the sandbox stands (bwrap: --info-fd): it never did */
		airlock_err("run: %s could not set up the sandbox (its message is above); "
			    "`airlock doctor` says what this machine lacks, --no-sandbox runs without "
			    "the kernel layer", r->backend->name);
		snprintf(msg, sizeof msg, "%s could not set up the sandbox", r->backend->name);
		(void)audit_launcher_note(r->log, getpid(), policy_decision_name(POLICY_DENY), msg);
		return RUN_EXIT_FAILED;
	}
	return l.timed_out ? RUN_EXIT_TIMEOUT : l.status < 0 ? RUN_EXIT_FAILED : l.status;
}
