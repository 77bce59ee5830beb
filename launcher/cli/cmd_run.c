/* cmd_run.c — `airlock run`: the agent under the kernel sandbox, seccomp and the shim, with approvals and the audit log; its phases in order (run.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "launcher/approvals/approve.h"
#include "launcher/approvals/control.h"
#include "launcher/checkpoint/supervise.h"
#include "launcher/cli/run.h"
#include "launcher/cli/run_log.h"
#include "launcher/log/audit.h"
#include "launcher/sandbox/agent_tty.h"
#include "launcher/sandbox/copies.h"
#include "launcher/sandbox/env.h"
#include "proxy/proxy.h"

#define RUN_SYNOPSIS "usage: airlock run [OPTIONS] [--] PROGRAM [ARG...]\n"

const char cmd_run_usage[] =
	RUN_SYNOPSIS
	"\n"
	"Runs PROGRAM (an agent) inside the kernel sandbox (bubblewrap: mount, pid, ipc,\n"
	"uts and, unprivileged, user namespaces; the network only through airlock's egress\n"
	"proxy, which decides each connection by the policy's network rules; a seccomp filter) with the\n"
	"airlock shim deciding each program it starts, file it opens and connection it\n"
	"makes against the policy.  On a terminal, airlock shows a TUI: the activity\n"
	"stream, and each ask waiting for your answer (Y allow, N deny, A allow for the\n"
	"session, B deny for the session; Tab: the agent's own terminal; Q: end it).\n"
	"Every decision is written to the audit log.  `airlock attach` answers a\n"
	"--headless session's asks from another terminal; `airlock ps` lists sessions.\n"
	"\n"
	"Options:\n"
	"  --policy FILE      the policy (default: ./.airlock/policy.yaml, then\n"
	"                     $XDG_CONFIG_HOME/airlock/policy.yaml, then the built-in one)\n"
	"  --workspace DIR    the directory the agent may write (default: the current one)\n"
	"  --headless         the agent keeps the terminal; asks are denied at once,\n"
	"                     or wait for `airlock attach` while one is attached\n"
	"  --no-tui           ask on the terminal with a one-line prompt instead of the TUI\n"
	"  --default-allow    with --headless: asks are allowed instead\n"
	"  --env NAME=VALUE   set a variable for the agent (repeatable)\n"
	"  --env NAME         pass the caller's NAME through (repeatable)\n"
	"  --log FILE         append the audit log to FILE (default:\n"
	"                     $XDG_STATE_HOME/airlock/logs/YYYY-MM-DD.jsonl)\n"
	"  --trace            also log allowed file reads and writes\n"
	"  --bwrap PATH       the bubblewrap binary (default: bwrap on PATH)\n"
	"  --no-sandbox       no kernel sandbox: the shim and the log only (says so in the log)\n"
	"  --profile NAME     the agent profile: claude, codex, gemini, aider, none, or auto\n"
	"                     (default: the policy's profile: key, else detected from PROGRAM)\n"
	"  --require-undo     refuse to run when the workspace's checkpoint cannot be taken\n"
	"                     (`airlock undo` would have nothing to put back)\n"
	"  --no-checkpoint    take no checkpoint of the workspace (no `airlock undo`)\n"
	"  -h, --help         this help\n"
	"\n"
	"Only the policy's sandbox.env_passthrough variables (HOME, USER, LOGNAME, TERM,\n"
	"LANG, LC_*, TZ, COLORTERM, PATH by default), its sandbox.env and --env reach the\n"
	"agent: API keys in your environment do not, unless you pass them with --env.\n"
	"A known agent (Claude Code, Codex CLI, Gemini CLI, aider) gets its profile: its\n"
	"state directory writable (created when absent), the files there that run code\n"
	"later kept from the host, its model API host allowed, and its own API key\n"
	"variables passed to it but scrubbed from the programs it runs.\n"
	"\n"
	"Exit status: the agent's; 128+N when it died of signal N; 124 when limits\n"
	"session_timeout or exec_timeout ended it; 125 when airlock could not start it\n"
	"(a layer it needs is missing: the message says how to fix it) or when the audit\n"
	"log cannot be written (a full disk: the agent is not started, or is stopped);\n"
	"126 when PROGRAM is not executable or a deny rule names it; 127 when it is not\n"
	"found; 2 for a malformed policy or command line.\n";

enum { OPT_POLICY = 256, OPT_WORKSPACE, OPT_HEADLESS, OPT_DEFAULT_ALLOW, OPT_NO_SANDBOX,
       OPT_BWRAP, OPT_LOG, OPT_TRACE, OPT_ENV, OPT_NO_TUI, OPT_PROFILE,
       OPT_REQUIRE_UNDO, OPT_NO_CHECKPOINT };

static const struct option long_opts[] = {
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "workspace", required_argument, NULL, OPT_WORKSPACE },
	{ "headless", no_argument, NULL, OPT_HEADLESS },
	{ "default-allow", no_argument, NULL, OPT_DEFAULT_ALLOW },
	{ "no-sandbox", no_argument, NULL, OPT_NO_SANDBOX },
	{ "bwrap", required_argument, NULL, OPT_BWRAP },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "trace", no_argument, NULL, OPT_TRACE },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "no-tui", no_argument, NULL, OPT_NO_TUI },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "require-undo", no_argument, NULL, OPT_REQUIRE_UNDO },
	{ "no-checkpoint", no_argument, NULL, OPT_NO_CHECKPOINT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "airlock: run: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n" RUN_SYNOPSIS "See 'airlock run --help'.\n");
	return AIRLOCK_EXIT_USAGE;
}

/* Returns -1 when parsing succeeded, else the exit status. */
static int parse(int argc, char **argv, struct run_opts *o)
{
	int c;
	/* + --trace's, the proxy's and the profile's */
	o->env = calloc((size_t)argc + 16, sizeof *o->env);
	if (!o->env)
		return RUN_EXIT_FAILED;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY: o->policy = optarg; break;
		case OPT_WORKSPACE: o->workspace = optarg; break;
		case OPT_HEADLESS: o->headless = true; break;
		case OPT_DEFAULT_ALLOW: o->default_allow = true; break;
		case OPT_NO_SANDBOX: o->no_sandbox = true; break;
		case OPT_BWRAP: o->bwrap = optarg; break;
		case OPT_LOG: o->log = optarg; break;
		case OPT_TRACE: o->trace = true; break;
		case OPT_ENV: o->env[o->nenv++] = optarg; break;
		case OPT_NO_TUI: o->no_tui = true; break;
		case OPT_REQUIRE_UNDO: o->require_undo = true; break;
		case OPT_NO_CHECKPOINT: o->no_checkpoint = true; break;
		case OPT_PROFILE: o->profile = optarg; break;
		case 'h':
			fputs(cmd_run_usage, stdout);
			return AIRLOCK_EXIT_OK;
		default:
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "no program to run");
	if (o->default_allow && !o->headless)
		return usage_error("%s", "--default-allow applies to --headless only");
	o->cmd = argv + optind;
	return -1;
}

/* ---- the session's start and end ----------------------------------------------------- */

void run_init(struct run *r)
{
	memset(r, 0, sizeof *r);
	r->seccomp_fd = r->sigfd = r->resolv_fd = r->hosts_fd = r->tty_master = r->tty_slave = -1;
	r->ns.sock = -1;
	r->session.channel_fd = -1;
	r->backend = &sandbox_bubblewrap;
	/*
	 * Nothing the caller left open crosses into the sandbox: an inherited
	 * descriptor of a host directory would reach past every mount.
	 */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
		for (int fd = 3; fd < 1024; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN); /* a peer that went away is an EPIPE to handle, not a death */
}

/*
 * The approvals, the signals, the human's side, then the agent: the session
 * runs from here.  0, or -1 (said, and the control clients told).
 */
static int start_session(struct run *r, sigset_t *old)
{
	char err[512];
	struct approve_options ao = { .mode = r->ui == UI_PROMPT ? APPROVE_PROMPT : APPROVE_HEADLESS,
				      .default_allow = r->o.default_allow,
				      .ask_timeout = r->src.policy->ask_timeout,
				      .img = r->src.img,
				      .log = r->log,
				      .control = r->control,
				      .pty = r->ui == UI_PROMPT ? r->tty_master : -1 };
	r->approvals = approve_new(r->session.channel_fd, &ao, err, sizeof err);
	r->hub.approvals = r->approvals;
	if (!r->approvals || run_block_signals(r, old) < 0 ||
	    (r->ui == UI_TUI && run_start_tui(r, old) < 0) ||
	    (r->ui == UI_PROMPT && run_raw_terminal(r) < 0) || (!r->o.serve && run_spawn(r, old) < 0)) {
		airlock_err("run: cannot start the session: %s", r->approvals ? strerror(errno) : err);
		run_end_control(r, RUN_EXIT_FAILED);
		return -1;
	}
	if (r->tty_slave >= 0) {
		close(r->tty_slave); /* the agent has it */
		r->tty_slave = -1;
	}
	control_set_agent(r->control, getpid());
	if (r->o.serve)
		return 0; /* no agent: the processes that join are not ours to reap */
	/*
	 * What the agent's processes leave behind becomes ours, not init's: with
	 * --no-sandbox a double fork must not take a process out of the agent's
	 * tree, which the control socket refuses (prctl(2) PR_SET_CHILD_SUBREAPER).
	 */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (r->seccomp_fd >= 0) {
		close(r->seccomp_fd); /* bwrap has its copy */
		r->seccomp_fd = -1;
	}
	return 0;
}

/* The session copies about to change a host path: the checkpoint saves it first. */
static void checkpoint_host(void *ctx, const char *host_path)
{
	struct run *r = ctx;
	int e = checkpoint_host_change(r->checkpoint, host_path);
	if (e < 0) {
		char msg[PATH_MAX + 160];
		snprintf(msg, sizeof msg, "checkpoint: could not save %s before applying the session's "
			 "copy of it: %s; `airlock undo` cannot put it back", host_path, strerror(-e));
		(void)audit_launcher_note(r->log, getpid(), NULL, msg);
	}
}

/*
 * The checkpoint's end, before the session copies are applied: its worker
 * writes what the sandbox left; what the copies then change on the host is
 * saved by the launcher (checkpoint_host()).  0, or -errno from the worker.
 */
static int end_checkpoint(struct run *r, int st)
{
	if (!r->checkpoint)
		return 0;
	int e = checkpoint_end(r->checkpoint, st, NULL);
	copies_set_host_hook(r->copies, checkpoint_host, r);
	return e;
}

/* After the copies: their paths' end records; the log and the user hear what `airlock diff` / `undo` have. */
static void said_checkpoint(struct run *r, int e)
{
	char msg[512];
	if (!r->checkpoint)
		return;
	checkpoint_host_done(r->checkpoint);
	struct checkpoint_stats cs = checkpoint_stats(r->checkpoint);
	const char *id = r->session.id;
	if (e < 0)
		snprintf(msg, sizeof msg, "checkpoint %s: its end could not be written (%s): `airlock "
			 "undo` will treat the workspace as the sandbox left it", id, strerror(-e));
	else
		snprintf(msg, sizeof msg, "checkpoint %s: %lu file(s) saved before a change, %lu "
			 "path(s) created%s; `airlock diff %s` shows the session's changes, `airlock "
			 "undo %s` puts the workspace back", id, cs.linked + cs.copied, cs.created,
			 cs.refused ? ", some changes refused (a save failed)" : "", id, id);
	(void)audit_launcher_note(r->log, getpid(), NULL, msg);
	/* on the terminal only when something was overwritten, deleted or refused (the log has it all) */
	if (e < 0 || cs.linked + cs.copied + cs.refused > 0)
		r->checkpoint_message = strdup(msg);
}

/* The agent ended with st: the last asks answered, the clients told, the session's end logged.  Returns the exit status. */
static int end_session(struct run *r, int st)
{
	/* the sandbox is gone: the gate's last news, then its thread ends (copies fork git below) */
	if (r->gate) {
		(void)open_gate_serve(r->gate);
		open_gate_stop(r->gate);
	}
	approve_drain_agent(r->approvals);
	approve_end(r->approvals); /* logged before the session's end, not after */
	hub_flush(&r->hub);
	/* the sandbox is gone: the checkpoint's end, then the session copies are applied or kept
	   aside (what they change on the host saved first), logged before the end */
	int ce = end_checkpoint(r, st);
	copies_finish(r->copies, r->log, NULL);
	said_checkpoint(r, ce);
	int lost = audit_error(r->log);
	if (lost < 0)
		st = RUN_EXIT_FAILED; /* whatever the agent's status: its record is not whole */
	run_end_control(r, st);
	fputs(copies_message(r->copies), stderr); /* on the user's own terminal again */
	if (r->checkpoint_message)
		airlock_err("%s", r->checkpoint_message);
	if (lost < 0) /* once, and after run_end_control(): on the user's own terminal again */
		airlock_err("run: cannot write the audit log %s: %s: the agent was stopped (nothing "
			    "it does may go unrecorded); free space or choose another --log",
			    audit_path(r->log), strerror(-lost));
	/* tried still; fails silently when the log did */
	run_log_end(r->log, st, r->approvals, r->proxy, r->ui != UI_HEADLESS);
	if (lost == 0 && (lost = audit_error(r->log)) < 0) {
		st = RUN_EXIT_FAILED;
		airlock_err("run: cannot write the audit log %s: %s: the session's end is not in "
			    "it; free space or choose another --log", audit_path(r->log),
			    strerror(-lost));
	}
	return st;
}

static void run_release(struct run *r)
{
	if (r->o.serve)
		serve_release(r); /* first: nobody joins through --dir once the session goes */
	approve_free(r->approvals); /* first: it answers the proxy's waiting asks */
	hub_release(&r->hub);
	control_free(r->control);
	if (r->tty_master >= 0)
		close(r->tty_master);
	if (r->tty_slave >= 0)
		close(r->tty_slave);
	proxy_free(r->proxy);
	netns_close(&r->ns);
	open_gate_free(r->gate); /* after the sandbox ended: nothing waits on it */
	checkpoint_free(r->checkpoint);
	free(r->checkpoint_message);
	if (r->resolv_fd >= 0)
		close(r->resolv_fd);
	if (r->hosts_fd >= 0)
		close(r->hosts_fd);
	audit_close(r->log);
	session_destroy(&r->session);
	policy_source_release(&r->src);
	r->backend->free(r->sandbox);
	copies_free(r->copies); /* after the sandbox: the working copies and placeholders go */
	env_free(r->agent_env);
	if (r->seccomp_fd >= 0)
		close(r->seccomp_fd);
	if (r->sigfd >= 0)
		close(r->sigfd);
	free(r->program);
	profile_choice_release(&r->profile);
	free(r->scrub_keys);
	free(r->scrub_exes);
	free(r->shim);
	free(r->landlock);
	free(r->o.env);
}

int run_session(struct run *r, bool on_tty)
{
	struct sandbox_report rep;
	sigset_t old;
	const char *cmd = r->o.serve ? "serve" : "run";
	int st = run_prepare(r, &rep);
	if (st < 0)
		st = run_start_control(r);
	if (st >= 0) {
		run_release(r);
		return st;
	}
	if (r->o.no_sandbox && !r->o.serve)
		airlock_err("run: warning: --no-sandbox: no kernel sandbox, only the shim and the "
			    "audit log (which says so)");
	if ((st = run_log_start(r->log, r->program,
				r->profile.profile ? r->profile.profile->name : "none", &r->src, &rep,
				r->o.no_sandbox ? NULL : r->backend->name, r->landlock_abi,
				r->landlock_why)) < 0) {
		/* the log is the one record: no session runs without its first line */
		run_end_control(r, RUN_EXIT_FAILED);
		airlock_err("%s: cannot write the audit log %s: %s: the %s was not started; free "
			    "space or choose another --log", cmd, audit_path(r->log), strerror(-st),
			    r->o.serve ? "session" : "agent");
		run_release(r);
		return RUN_EXIT_FAILED;
	}
	if (!r->o.headless && !on_tty)
		airlock_err("%s: warning: no terminal to ask on: asks are denied, as with --headless "
			    "(or answered by `airlock attach`)", cmd);
	if (r->o.serve) /* before the TUI takes the terminal */
		serve_started(r);
	if (start_session(r, &old) < 0) {
		run_release(r);
		return RUN_EXIT_FAILED;
	}
	st = end_session(r, run_serve(r));
	run_release(r);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return st;
}

int cmd_run(int argc, char **argv)
{
	struct run r;
	run_init(&r);
	int st = parse(argc, argv, &r.o);
	bool on_tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	r.ui = r.o.headless || !on_tty			     ? UI_HEADLESS
	       : !r.o.no_tui && agent_tty_tui_usable(STDOUT_FILENO) ? UI_TUI
								     : UI_PROMPT;
	if (st >= 0) {
		free(r.o.env);
		return st;
	}
	return run_session(&r, on_tty);
}
