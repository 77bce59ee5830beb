/* run_spawn.c — `airlock run` starts the agent (run.h): signals blocked, then the sandbox's command run through the egress proxy's network namespace or a fork. */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launcher/approvals/approve.h"
#include "launcher/checkpoint/supervise.h"
#include "launcher/cli/run.h"
#include "launcher/cli/run_log.h"
#include "launcher/sandbox/agent_tty.h"
#include "policy/netaddr.h"
#include "proxy/proxy.h"

int run_block_signals(struct run *r, sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	int sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, old) != 0)
		return -errno;
	r->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return r->sigfd < 0 ? -errno : 0;
}

/* ---- the egress proxy (network: proxy) ------------------------------------------------- */

static int proxy_ask(void *ctx, const char *host, unsigned port, int32_t rule, proxy_done_fn done,
		     void *arg)
{
	struct run *r = ctx;
	return approve_ask_connect(r->approvals, host, port, rule, done, arg);
}

static void proxy_event(void *ctx, const struct proxy_event *ev)
{
	struct run *r = ctx;
	run_log_proxy(r->log, r->src.img, ev);
}

/* The ports the policy's network rules name, for transparent listeners besides 80 and 443. */
static size_t rule_ports(const struct policy *p, uint16_t *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nrules && n < cap; i++) {
		struct netdest d;
		char why[128];
		const struct policy_rule *pr = &p->rules[i];
		if (pr->kind != POLICY_RULE_NETWORK ||
		    netdest_parse(pr->destination, pr->match, &d, why, sizeof why) != 0 || !d.port ||
		    d.port == NETNS_HTTP_PROXY_PORT || d.port == NETNS_SOCKS_PORT)
			continue;
		out[n++] = (uint16_t)d.port;
	}
	return n;
}

/*
 * network: proxy: the sandbox's own network namespace, whose child execs
 * ex; the egress proxy on the listeners it made; then the sandbox starts.
 */
static int start_proxy(struct run *r, const struct sandbox_exec *ex, const sigset_t *old)
{
	uint16_t ports[NETNS_MAX_PORTS];
	char err[512];
	struct netns_options no = { .ports = ports,
				    .nports = rule_ports(r->src.policy, ports, NETNS_MAX_PORTS),
				    .exec_path = ex->path, .exec_argv = ex->argv, .exec_envp = ex->envp,
				    .exec_sigmask = old,
				    .exec_tty = r->tty_slave >= 0 ? &r->tty_slave : NULL };
	if (netns_start(&no, &r->ns, err, sizeof err) < 0) {
		airlock_err("run: cannot make the sandbox's network namespace: %s", err);
		return -EIO;
	}
	struct proxy_listener *l = calloc(r->ns.nlisteners ? r->ns.nlisteners : 1, sizeof *l);
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < r->ns.nlisteners; i++) {
		const struct netns_listener *nl = &r->ns.listeners[i];
		l[i] = (struct proxy_listener){ .fd = nl->fd,
						.type = nl->proto == IPPROTO_UDP ? SOCK_DGRAM : SOCK_STREAM,
						.role = nl->role, .port = nl->port };
	}
	const struct policy_limits *lim = &r->src.policy->limits;
	struct proxy_options po = {
		.img = r->src.img,
		/* no DNS hook: a name alone is no decision, the connection that follows is logged */
		.hooks = { .ctx = r, .ask = proxy_ask, .event = proxy_event },
		.max_egress_bytes = (lim->set & POLICY_LIMIT_MAX_EGRESS_BYTES) ? lim->max_egress_bytes : 0,
	};
	r->proxy = proxy_new(l, r->ns.nlisteners, &po, err, sizeof err);
	free(l);
	if (!r->proxy) {
		airlock_err("run: %s", err);
		return -EIO;
	}
	if (netns_go(&r->ns, err, sizeof err) < 0) {
		airlock_err("run: cannot start the sandbox: %s", err);
		return -EIO;
	}
	r->child = r->ns.pid;
	return 0;
}

/* The child forked to run the sandbox's command ex (NULL: the agent alone, --no-sandbox). */
static int fork_agent(struct run *r, const struct sandbox_exec *ex, const sigset_t *old)
{
	pid_t launcher = getpid();
	r->child = fork();
	if (r->child < 0)
		return -errno;
	if (r->child > 0)
		return 0;
	/*
	 * The launcher's death (even SIGKILL) ends the agent, as bwrap's
	 * --die-with-parent does for a sandbox: without a sandbox, the agent
	 * itself (prctl(2) PR_SET_PDEATHSIG; the launcher may already be gone).
	 */
	if (!ex && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != launcher))
		_exit(RUN_EXIT_FAILED);
	sigprocmask(SIG_SETMASK, old, NULL);
	if (r->tty_slave >= 0 && agent_tty_take(r->tty_slave) < 0) {
		fprintf(stderr, "airlock: run: cannot give the agent its terminal: %s\n",
			strerror(errno));
		_exit(RUN_EXIT_FAILED);
	}
	if (!ex) {
		execve(r->program, r->o.cmd, r->agent_env);
		_exit(errno == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_NOT_EXECUTABLE);
	}
	execve(ex->path, ex->argv, ex->envp);
	fprintf(stderr, "airlock: run: cannot start %s: %s\n", ex->path, strerror(errno));
	_exit(RUN_EXIT_FAILED);
}

/*
 * The open gate's marks on the sandbox's mounts, placed while bwrap holds
 * it before the agent (its mounts stand, nothing of the agent's has run);
 * then it goes.  Any failure ends the sandbox unstarted (fail closed).
 */
static int gate_sandbox(struct run *r)
{
	char err[512];
	pid_t held = r->backend->held(r->sandbox, 10000);
	int n = held < 0 ? (int)held : open_gate_mark(r->gate, held, err, sizeof err);
	if (held < 0)
		snprintf(err, sizeof err, "the sandbox did not stand: %s", strerror((int)-held));
	if (n >= 0 && (n = open_gate_start(r->gate)) < 0)
		snprintf(err, sizeof err, "cannot start its thread: %s", strerror(-n));
	if (n >= 0 && r->backend->release(r->sandbox) == 0)
		return 0;
	airlock_err("run: cannot set up the open gate (fanotify): %s", err);
	/* the held init first: once bwrap's block fd closes, it would start the agent */
	if (held > 0)
		kill(held, SIGKILL);
	if (r->child > 0)
		kill(r->child, SIGKILL);
	return n < 0 ? n : -EIO;
}

int run_spawn(struct run *r, const sigset_t *old)
{
	struct sandbox_exec ex;
	int ret;
	if (r->o.no_sandbox)
		return fork_agent(r, NULL, old);
	if ((ret = r->backend->command(r->sandbox, &ex)) < 0)
		return ret;
	/* the checkpoint's worker first: the helper hands it the listener as the agent starts */
	if (r->checkpoint && (ret = checkpoint_start(r->checkpoint)) < 0) {
		airlock_err("run: cannot start the checkpoint's worker: %s", strerror(-ret));
		return ret;
	}
	ret = r->proxy_on ? start_proxy(r, &ex, old) : fork_agent(r, &ex, old);
	r->backend->spawned(r->sandbox);
	checkpoint_spawned(r->checkpoint);
	if (ret == 0 && r->gate)
		ret = gate_sandbox(r);
	return ret;
}
