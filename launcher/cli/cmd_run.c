/* cmd_run.c — `airlock run`: the agent under bubblewrap, seccomp and the shim, with approvals and the audit log. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/close_range.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "launcher/approvals/control.h"
#include "launcher/sandbox/env.h"
#include "launcher/approvals/hub.h"
#include "launcher/cli/launcher.h"
#include "launcher/sandbox/netns.h"
#include "launcher/sandbox/sandbox.h"
#include "launcher/sandbox/seccomp.h"
#include "launcher/log/audit.h"
#include "launcher/cli/run_log.h"
#include "launcher/approvals/approve.h"
#include "launcher/sandbox/agent_tty.h"
#include "launcher/sandbox/session.h"
#include "policy/netaddr.h"
#include "proxy/proxy.h"
#include "launcher/approvals/tui.h"

/* Exit statuses of `run` itself; otherwise the agent's (DESIGN.md step 10). */
enum {
	RUN_EXIT_TIMEOUT = 124,
	RUN_EXIT_FAILED = 125,
	RUN_EXIT_NOT_EXECUTABLE = 126,
	RUN_EXIT_NOT_FOUND = 127,
};

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
	"  -h, --help         this help\n"
	"\n"
	"Only the policy's sandbox.env_passthrough variables (HOME, USER, LOGNAME, TERM,\n"
	"LANG, LC_*, TZ, COLORTERM, PATH by default), its sandbox.env and --env reach the\n"
	"agent: API keys in your environment do not, unless you pass them with --env.\n"
	"\n"
	"Exit status: the agent's; 128+N when it died of signal N; 124 when limits\n"
	"session_timeout or exec_timeout ended it; 125 when airlock could not start it\n"
	"(a layer it needs is missing: the message says how to fix it) or when the audit\n"
	"log cannot be written (a full disk: the agent is not started, or is stopped);\n"
	"126 when PROGRAM is not executable or a deny rule names it; 127 when it is not\n"
	"found; 2 for a malformed policy or command line.\n";

struct run_opts {
	const char *policy, *workspace, *bwrap, *log;
	bool headless, default_allow, no_sandbox, trace, no_tui;
	char **env; /* owned array of borrowed strings, NULL-terminated */
	size_t nenv;
	char **cmd; /* PROGRAM ARG..., borrowed from argv */
};

/* Everything a running session holds, released by run_release(). */
struct run {
	struct run_opts o;
	struct policy_source src;
	struct session session;
	struct audit_log *log;
	struct approvals *approvals;
	char *program; /* owned */
	char *shim;    /* owned */
	char *bwrap;   /* owned */
	char **agent_env;
	char **bwrap_argv;
	int seccomp_fd;
	int sigfd;
	pid_t child;
	pid_t agent; /* the agent's pid seen from here (inside bwrap's pid namespace), 0 until known */
	pid_t init;  /* bwrap's init (the pid namespace's pid 1) seen from here, 0 until known */
	int info_fd; /* read end of bwrap --info-fd, -1 when done */
	char info[512];
	size_t info_len;
	/* network: proxy — the sandbox's own network namespace and the egress proxy */
	bool proxy_on;
	struct netns ns;
	struct proxy *proxy;
	int resolv_fd;
	/* the human side: the control socket, and the TUI with the agent's terminal */
	enum { UI_HEADLESS, UI_PROMPT, UI_TUI } ui;
	struct control *control;
	int tty_master, tty_slave; /* UI_TUI: the agent's pseudo-terminal */
	pid_t tui;
	struct termios saved_tty;
	bool tty_saved;
	struct hub hub; /* the log, the control socket and the approvals wired together */
};

enum { OPT_POLICY = 256, OPT_WORKSPACE, OPT_HEADLESS, OPT_DEFAULT_ALLOW, OPT_NO_SANDBOX,
       OPT_BWRAP, OPT_LOG, OPT_TRACE, OPT_ENV, OPT_NO_TUI };

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
	o->env = calloc((size_t)argc + 16, sizeof *o->env); /* + --trace's and the proxy's */
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

/* ---- preparing --------------------------------------------------------------------- */

/*
 * Limits this airlock cannot enforce yet (they need cgroup v2): a policy
 * that sets them is refused rather than run without them — fail closed.
 */
static int check_limits(const struct run *r)
{
	static const struct {
		unsigned bit;
		const char *name;
	} unenforced[] = {
		{ POLICY_LIMIT_CPU_CORES, "cpu_cores" },
		{ POLICY_LIMIT_MEMORY_MB, "memory_mb" },
		{ POLICY_LIMIT_DISK_MB, "disk_mb" },
		{ POLICY_LIMIT_MAX_PROCESSES, "max_processes" },
	};
	for (size_t i = 0; i < sizeof unenforced / sizeof unenforced[0]; i++)
		if (r->src.policy->limits.set & unenforced[i].bit) {
			airlock_err("run: %s sets limits.%s, which this airlock cannot enforce yet; "
				    "remove it from the policy to run without that limit",
				    r->src.name, unenforced[i].name);
			return RUN_EXIT_FAILED;
		}
	return -1;
}

/* The first exec is the user's own command: only a deny rule refuses it. */
static int check_program(struct run *r)
{
	struct stat st;
	if (!strchr(r->program, '/')) {
		airlock_err("run: %s: command not found", r->o.cmd[0]);
		return RUN_EXIT_NOT_FOUND;
	}
	if (stat(r->program, &st) != 0) {
		airlock_err("run: %s: %s", r->program, strerror(errno));
		return errno == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_NOT_EXECUTABLE;
	}
	if (!S_ISREG(st.st_mode) || access(r->program, X_OK) != 0) {
		airlock_err("run: %s: not an executable file", r->program);
		return RUN_EXIT_NOT_EXECUTABLE;
	}
	struct policy_verdict v =
		policy_decide_exec(r->src.img, r->program, (const char *const *)r->o.cmd);
	struct policy_rule_info info;
	if (v.decision == POLICY_DENY && policy_rule_describe(r->src.img, v.rule, &info) == 0) {
		airlock_err("run: %s is denied by %s:%u%s%s", r->program, info.file, info.line,
			    info.reason ? ": " : "", info.reason ? info.reason : "");
		return RUN_EXIT_NOT_EXECUTABLE;
	}
	return -1;
}

static int find_bwrap(struct run *r)
{
	r->bwrap = r->o.bwrap ? strdup(r->o.bwrap) : canon_program("bwrap");
	if (!r->bwrap || !strchr(r->bwrap, '/') || access(r->bwrap, X_OK) != 0) {
		airlock_err("run: bubblewrap (bwrap) not found%s%s: install it (apt-get install "
			    "bubblewrap), name it with --bwrap PATH, or run with --no-sandbox to "
			    "give up the kernel sandbox",
			    r->o.bwrap ? " at " : "", r->o.bwrap ? r->o.bwrap : "");
		return RUN_EXIT_FAILED;
	}
	return -1;
}

/* The agent's environment; with --trace the shim reports allowed file events too. */
static int build_env(struct run *r)
{
	char err[512];
	if (r->o.trace)
		r->o.env[r->o.nenv++] = "AIRLOCK_TRACE=1";
	if (r->proxy_on) {
		/* for programs that honour them; the others go through the transparent ports */
		static char *const proxy_env[] = {
			"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
			"ALL_PROXY=socks5h://127.0.0.1:1080", "NO_PROXY=localhost,127.0.0.1,::1",
			"http_proxy=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
			"all_proxy=socks5h://127.0.0.1:1080", "no_proxy=localhost,127.0.0.1,::1",
		};
		/* ahead of the user's --env, which may override them */
		memmove(r->o.env + 8, r->o.env, r->o.nenv * sizeof *r->o.env);
		for (size_t i = 0; i < 8; i++)
			r->o.env[i] = proxy_env[i];
		r->o.nenv += 8;
	}
	extern char **environ;
	r->agent_env = env_build(r->src.policy, environ, r->o.env, r->session.id, err, sizeof err);
	if (!r->agent_env) {
		airlock_err("run: %s", err);
		return AIRLOCK_EXIT_USAGE;
	}
	if (!r->o.no_sandbox)
		return -1;
	/* no sandbox: the shim and the session are where the host has them */
	for (char **e = r->agent_env; *e; e++) {
		char *repl = NULL;
		if (strncmp(*e, "LD_PRELOAD=", 11) == 0 && asprintf(&repl, "LD_PRELOAD=%s", r->shim) < 0)
			repl = NULL;
		else if (strncmp(*e, "AIRLOCK_DIR=", 12) == 0 &&
			 asprintf(&repl, "AIRLOCK_DIR=%s", r->session.dir) < 0)
			repl = NULL;
		if (repl) {
			free(*e);
			*e = repl;
		}
	}
	return -1;
}

static int build_sandbox(struct run *r, struct sandbox_report *rep)
{
	char err[512], cwd[PATH_MAX];
	struct seccomp_options so = { .process_spawn = r->src.policy->sandbox.process_spawn };
	memset(rep, 0, sizeof *rep);
	if (r->o.no_sandbox)
		return -1;
	r->seccomp_fd = seccomp_filter_fd(&so, err, sizeof err);
	if (r->seccomp_fd < 0) {
		airlock_err("run: cannot build the seccomp filter: %s (see airlock doctor; "
			    "--no-sandbox runs without it)", err);
		return RUN_EXIT_FAILED;
	}
	char resolv_path[PATH_MAX] = "/etc/resolv.conf";
	if (r->proxy_on) {
		/* the shims' sign that the proxy, not they, decides connections to its ports */
		char *mark = NULL;
		int mfd = asprintf(&mark, "%s/proxy", r->session.dir) < 0
				  ? -1
				  : open(mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
		free(mark);
		if (mfd < 0) {
			airlock_err("run: cannot mark the session for the proxy: %s", strerror(errno));
			return RUN_EXIT_FAILED;
		}
		close(mfd);
		/* the sandbox's resolver is ours: any address's port 53 reaches it */
		static const char text[] = "# airlock: names are answered by the sandbox's own resolver\n"
					   "nameserver 127.0.0.1\noptions edns0\n";
		r->resolv_fd = memfd_create("airlock-resolv.conf", 0);
		if (r->resolv_fd < 0 || write(r->resolv_fd, text, sizeof text - 1) != sizeof text - 1 ||
		    lseek(r->resolv_fd, 0, SEEK_SET) != 0) {
			airlock_err("run: cannot prepare the sandbox's resolv.conf: %s", strerror(errno));
			return RUN_EXIT_FAILED;
		}
		if (!realpath("/etc/resolv.conf", resolv_path))
			snprintf(resolv_path, sizeof resolv_path, "/etc/resolv.conf");
	}
	char *policy_file = strcmp(r->src.name, "<default>") ? realpath(r->src.name, NULL) : NULL;
	if (strcmp(r->src.name, "<default>") && !policy_file) {
		airlock_err("run: %s: %s", r->src.name, strerror(errno));
		return RUN_EXIT_FAILED;
	}
	char *log_file = realpath(audit_path(r->log), NULL);
	if (!getcwd(cwd, sizeof cwd)) {
		free(policy_file);
		free(log_file);
		airlock_err("run: cannot read the current directory: %s", strerror(errno));
		return RUN_EXIT_FAILED;
	}
	struct sandbox_config cfg = {
		.policy = r->src.policy,
		.img = r->src.img,
		.home = r->src.home,
		.workspace = r->src.workspace,
		.cwd = cwd,
		.session_dir = r->session.dir,
		.shim_path = r->shim,
		.policy_file = policy_file,
		.log_file = log_file,
		.unprivileged = geteuid() != 0,
		.own_tty = r->ui != UI_HEADLESS,
		.seccomp_fd = r->seccomp_fd,
		.netns = r->proxy_on,
		.resolv_fd = r->resolv_fd,
		.resolv_path = resolv_path,
		.env = r->agent_env,
		.program = r->program,
		.argv = r->o.cmd,
	};
	int built = sandbox_build(&cfg, r->bwrap, &r->bwrap_argv, rep, err, sizeof err);
	free(policy_file);
	free(log_file);
	if (built < 0) {
		airlock_err("run: cannot set up the sandbox: %s", err);
		return RUN_EXIT_FAILED;
	}
	if (rep->masks_capped)
		airlock_err("run: warning: stopped looking for secrets to mask after %u entries; "
			    "deny rules still apply through the shim",
			    rep->walked);
	if (rep->network_rules_ignored)
		airlock_err("run: warning: the policy's network rules do not apply under network: none: "
			    "the sandbox has no network at all");
	return -1;
}

/* ---- the human side: the control socket and the TUI ---------------------------------- */

/* The counts attached clients show, when they changed. */
static void push_status(struct run *r)
{
	struct approve_counts c;
	struct proxy_stats ps = { 0 };
	approve_counts(r->approvals, &c);
	if (r->proxy)
		proxy_stats(r->proxy, &ps);
	struct control_status st = { .allow = c.allow, .deny = c.deny, .asked = c.asked,
				     .pending = c.pending, .egress_up = ps.bytes_up,
				     .egress_down = ps.bytes_down };
	control_status(r->control, &st);
}

/*
 * The control socket (every session: `airlock attach` and `airlock ps`
 * find it) and, on a terminal, the agent's pseudo-terminal.
 */
static int start_control(struct run *r)
{
	char err[512], *agent = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&agent, &len);
	for (char **a = r->o.cmd; f && *a; a++)
		fprintf(f, "%s%s", a == r->o.cmd ? "" : " ", *a);
	if (f)
		fclose(f);
	struct control_info info = { .session = r->session.id, .agent = agent,
				     .log = audit_path(r->log),
				     .ask_timeout = r->src.policy->ask_timeout,
				     .headless = r->ui != UI_TUI };
	if (hub_init(&r->hub, r->log) < 0) {
		free(agent);
		airlock_err("run: out of memory");
		return RUN_EXIT_FAILED;
	}
	r->control = control_new(r->session.control, &info, &hub_control_ops, &r->hub, err,
				 sizeof err);
	free(agent);
	if (!r->control) {
		airlock_err("run: %s", err);
		return RUN_EXIT_FAILED;
	}
	hub_set_control(&r->hub, r->control);
	if (r->ui != UI_HEADLESS && agent_tty_open(&r->tty_master, &r->tty_slave, STDIN_FILENO) < 0) {
		airlock_err("run: cannot make a terminal for the agent: %s", strerror(errno));
		return RUN_EXIT_FAILED;
	}
	return -1;
}

/* Forks the TUI on the user's terminal, attached from the start through a socketpair. */
static int start_tui(struct run *r, const sigset_t *old)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	r->tty_saved = tcgetattr(STDIN_FILENO, &r->saved_tty) == 0;
	r->tui = fork();
	if (r->tui < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (r->tui == 0) {
		sigprocmask(SIG_SETMASK, old, NULL);
		close(sv[0]);
		close(r->tty_slave); /* the agent's exit must reach the master as a hang-up */
		struct tui_options to = { .control_fd = sv[1], .pty_master = r->tty_master,
					  .tty_in = STDIN_FILENO, .tty_out = STDOUT_FILENO };
		_exit(tui_run(&to));
	}
	close(sv[1]);
	return control_adopt(r->control, sv[0], true);
}

/*
 * The one-line prompt relays the agent's terminal: the user's is put in raw
 * mode (keys, Ctrl-C included, go to the agent's own line discipline),
 * restored by end_control().
 */
static int raw_terminal(struct run *r)
{
	struct termios t;
	if (tcgetattr(STDIN_FILENO, &r->saved_tty) != 0)
		return -errno;
	r->tty_saved = true;
	t = r->saved_tty;
	cfmakeraw(&t);
	return tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0 ? 0 : -errno;
}

/* The user's terminal changed size: so does the agent's (it gets SIGWINCH from its own). */
static void resize_agent(const struct run *r)
{
	struct winsize ws;
	if (r->ui == UI_PROMPT && r->tty_master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(r->tty_master, TIOCSWINSZ, &ws);
}

/* The session is over: the clients hear it, the TUI gives the terminal back. */
static void end_control(struct run *r, int status)
{
	if (!r->control)
		return;
	control_end(r->control, status, 1000);
	if (r->tui > 0) {
		int st;
		for (int i = 0; i < 300 && waitpid(r->tui, &st, WNOHANG) == 0; i++)
			usleep(10000);
		if (waitpid(r->tui, &st, WNOHANG) == 0) {
			kill(r->tui, SIGKILL);
			waitpid(r->tui, &st, 0);
		}
		r->tui = 0;
	}
	if (r->tty_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &r->saved_tty);
}

/* ---- running ------------------------------------------------------------------------ */

static int block_signals(struct run *r, sigset_t *old)
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

static int start_proxy(struct run *r, char **argv, const sigset_t *old)
{
	static char *empty_env[] = { NULL };
	uint16_t ports[NETNS_MAX_PORTS];
	char err[512];
	struct netns_options no = { .ports = ports,
				    .nports = rule_ports(r->src.policy, ports, NETNS_MAX_PORTS),
				    .exec_path = r->bwrap, .exec_argv = argv, .exec_envp = empty_env,
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

/*
 * bwrap's options go through `--args FD` (NUL-separated, from a memfd): its
 * command line, which every user can read in /proc, then shows no --setenv
 * value (an API key passed with --env).  The agent's own command follows
 * "--" on the real command line, as bwrap requires.  *rest receives the
 * index of "--" in argv.
 */
static int args_fd(char **argv, int info_fd, size_t *rest)
{
	int fd = memfd_create("airlock-bwrap-args", 0);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(dup(fd), "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	fprintf(f, "--info-fd%c%d%c", 0, info_fd, 0);
	size_t i = 1;
	for (; argv[i] && strcmp(argv[i], "--") != 0; i++)
		fprintf(f, "%s%c", argv[i], 0);
	*rest = i;
	if (fclose(f) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* bwrap --args FD -- PROGRAM ARGS: the argv to exec, malloc'ed; NULL on failure. */
static char **bwrap_command(struct run *r, int afd, size_t rest, char *fdnum, size_t fdcap)
{
	size_t n = 0;
	while (r->bwrap_argv[n])
		n++;
	char **argv = calloc(n - rest + 4, sizeof *argv);
	if (!argv)
		return NULL;
	snprintf(fdnum, fdcap, "%d", afd);
	argv[0] = r->bwrap_argv[0];
	argv[1] = "--args";
	argv[2] = fdnum;
	memcpy(argv + 3, r->bwrap_argv + rest, (n - rest) * sizeof *argv);
	return argv;
}

static int spawn(struct run *r, const sigset_t *old)
{
	int info[2] = { -1, -1 }, afd = -1, ret = 0;
	size_t rest = 0;
	char fdnum[16], **argv = NULL;
	static char *empty_env[] = { NULL };
	if (!r->o.no_sandbox) {
		/* the write end stays open in bwrap (no close-on-exec) for its --info-fd */
		if (pipe2(info, 0) != 0)
			return -errno;
		fcntl(info[0], F_SETFD, FD_CLOEXEC);
		afd = args_fd(r->bwrap_argv, info[1], &rest);
		if (afd < 0 || !(argv = bwrap_command(r, afd, rest, fdnum, sizeof fdnum)))
			return afd < 0 ? afd : -ENOMEM;
	}
	if (r->proxy_on) {
		ret = start_proxy(r, argv, old);
	} else {
		r->child = fork();
		if (r->child < 0)
			ret = -errno;
		if (r->child == 0) {
			sigprocmask(SIG_SETMASK, old, NULL);
			if (r->tty_slave >= 0 && agent_tty_take(r->tty_slave) < 0) {
				fprintf(stderr, "airlock: run: cannot give the agent its terminal: %s\n",
					strerror(errno));
				_exit(RUN_EXIT_FAILED);
			}
			if (r->o.no_sandbox) {
				execve(r->program, r->o.cmd, r->agent_env);
				_exit(errno == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_NOT_EXECUTABLE);
			}
			execve(r->bwrap, argv, empty_env);
			fprintf(stderr, "airlock: run: cannot start %s: %s\n", r->bwrap, strerror(errno));
			_exit(RUN_EXIT_FAILED);
		}
	}
	free(argv);
	if (!r->o.no_sandbox) {
		close(info[1]);
		close(afd);
		r->info_fd = info[0];
		fcntl(r->info_fd, F_SETFL, O_NONBLOCK);
	} else {
		r->agent = r->child;
	}
	return ret;
}

/*
 * The agent: the only child of the sandbox's init (bwrap's pid 1, which
 * ignores what it does not handle).  The info can come before init has
 * forked it: then, until it shows, init itself.
 */
static void find_agent(struct run *r)
{
	char path[64], buf[64];
	if (r->init <= 0 || (r->agent > 0 && r->agent != r->init))
		return;
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)r->init, (int)r->init);
	FILE *f = fopen(path, "re");
	long child = f && fgets(buf, sizeof buf, f) ? strtol(buf, NULL, 10) : 0;
	if (f)
		fclose(f);
	r->agent = child > 0 ? (pid_t)child : r->init;
}

/* Reads bwrap's info JSON; once complete, finds the agent. */
static void read_info(struct run *r)
{
	ssize_t n = read(r->info_fd, r->info + r->info_len, sizeof r->info - 1 - r->info_len);
	if (n > 0) {
		r->info_len += (size_t)n;
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	close(r->info_fd);
	r->info_fd = -1;
	r->info[r->info_len] = '\0';
	const char *p = strstr(r->info, "\"child-pid\"");
	r->init = p ? (pid_t)strtol(p + strcspn(p, "0123456789"), NULL, 10) : 0;
	find_agent(r);
}

/* SIGINT / SIGTERM / SIGHUP / SIGQUIT go to the agent's process group, as a shell's would. */
static void forward(struct run *r, int sig)
{
	find_agent(r);
	if (r->agent > 0) {
		kill(-r->agent, sig);
		kill(r->agent, sig);
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

static int serve(struct run *r)
{
	long long limit = time_limit_ms(r->src.policy), start = mono_ms(), kill_at = -1;
	bool timed_out = false, unrecorded = false;
	int status = -1;
	while (status < 0) {
		push_status(r);
		struct pollfd fds[5] = { { approve_fd(r->approvals), POLLIN, 0 },
					 { r->sigfd, POLLIN, 0 },
					 { r->proxy ? proxy_fd(r->proxy) : -1, POLLIN, 0 },
					 { control_fd(r->control), POLLIN, 0 },
					 { r->info_fd, POLLIN, 0 } };
		int t = approve_timeout_ms(r->approvals);
		int pt = r->proxy ? proxy_timeout_ms(r->proxy) : -1;
		if (pt >= 0 && (t < 0 || pt < t))
			t = pt;
		long long now = mono_ms();
		if (limit >= 0 && !timed_out) {
			long long left = start + limit - now;
			t = left <= 0 ? 0 : (t < 0 || left < t) ? (int)left : t;
		}
		if (kill_at >= 0) {
			long long left = kill_at - now;
			t = left <= 0 ? 0 : (t < 0 || left < t) ? (int)left : t;
		}
		if (poll(fds, r->info_fd >= 0 ? 5 : 4, t) < 0 && errno != EINTR)
			break;
		control_dispatch(r->control);
		approve_dispatch(r->approvals);
		if (r->proxy)
			proxy_dispatch(r->proxy);
		if (r->info_fd >= 0 && (fds[4].revents & (POLLIN | POLLHUP)))
			read_info(r);
		hub_tick(&r->hub);
		if (!unrecorded && audit_error(r->log) < 0) {
			unrecorded = true; /* said once, by cmd_run(), after the terminal is back */
			stop_unrecorded(r);
		}
		if (unrecorded)
			approve_end(r->approvals); /* asks that came since: denied at once */
		if (r->hub.quit_requested && kill_at < 0) {
			r->hub.quit_requested = false;
			run_log_event(r->log, NULL, "ending the agent: asked on the control socket "
						   "(TUI or airlock attach)");
			forward(r, SIGTERM);
			kill_at = mono_ms() + 2000;
		}
		if (limit >= 0 && !timed_out && mono_ms() >= start + limit) {
			timed_out = true;
			run_log_event(r->log, "deny", "time limit reached (limits session_timeout "
						     "/ exec_timeout): ending the agent");
			airlock_err("run: time limit reached: ending the agent");
			forward(r, SIGTERM);
			kill_at = mono_ms() + 2000;
		}
		if (kill_at >= 0 && mono_ms() >= kill_at) {
			kill(r->child, SIGKILL); /* bwrap's death takes the whole sandbox with it */
			kill_at = -1;
		}
		struct signalfd_siginfo si;
		while (read(r->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
			if (si.ssi_signo == SIGWINCH) {
				resize_agent(r);
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
					status = status_of(st);
				else if (p == r->tui)
					r->tui = 0;
			}
		}
	}
	/* the last events the agent sent: new connections first, then what they carry */
	for (int i = 0; i < 100 && approve_dispatch(r->approvals) > 0; i++)
		;
	if (!r->o.no_sandbox && r->info_len == 0 && r->info_fd >= 0)
		read_info(r);
	if (!r->o.no_sandbox && r->info_len == 0 && !timed_out && !unrecorded) {
		/* bwrap reports on --info-fd once the sandbox stands: it never did */
		airlock_err("run: bubblewrap could not set up the sandbox (its message is above); "
			    "`airlock doctor` says what this machine lacks, --no-sandbox runs without "
			    "the kernel layer");
		run_log_event(r->log, "deny", "bubblewrap could not set up the sandbox");
		return RUN_EXIT_FAILED;
	}
	return timed_out ? RUN_EXIT_TIMEOUT : status < 0 ? RUN_EXIT_FAILED : status;
}

static void run_release(struct run *r)
{
	approve_free(r->approvals); /* first: it answers the proxy's waiting asks */
	hub_release(&r->hub);
	control_free(r->control);
	if (r->tty_master >= 0)
		close(r->tty_master);
	if (r->tty_slave >= 0)
		close(r->tty_slave);
	proxy_free(r->proxy);
	netns_close(&r->ns);
	if (r->resolv_fd >= 0)
		close(r->resolv_fd);
	audit_close(r->log);
	session_destroy(&r->session);
	policy_source_release(&r->src);
	sandbox_argv_free(r->bwrap_argv);
	env_free(r->agent_env);
	if (r->seccomp_fd >= 0)
		close(r->seccomp_fd);
	if (r->sigfd >= 0)
		close(r->sigfd);
	if (r->info_fd >= 0)
		close(r->info_fd);
	free(r->program);
	free(r->shim);
	free(r->bwrap);
	free(r->o.env);
}

static int prepare(struct run *r, struct sandbox_report *rep)
{
	struct policy_error perr;
	struct policy_source_options so = { r->o.policy, r->o.workspace };
	char err[1024];
	int st;
	enum policy_source_status ps = policy_source_open(&so, &r->src, &perr);
	if (ps != POLICY_SOURCE_OK)
		return policy_source_report(ps, &perr);
	r->proxy_on = !r->o.no_sandbox && r->src.policy->sandbox.network == POLICY_NETWORK_PROXY;
	if ((st = check_limits(r)) >= 0)
		return st;
	r->program = canon_program(r->o.cmd[0]);
	if (!r->program) {
		airlock_err("run: %s: %s", r->o.cmd[0], strerror(errno));
		return RUN_EXIT_FAILED;
	}
	if ((st = check_program(r)) >= 0)
		return st;
	if (!r->o.no_sandbox && (st = find_bwrap(r)) >= 0)
		return st;
	if (!(r->shim = session_find_shim(err, sizeof err))) {
		airlock_err("run: %s", err);
		return RUN_EXIT_FAILED;
	}
	if (session_create(&r->session, r->src.image, r->src.image_size, err, sizeof err) < 0) {
		airlock_err("run: %s", err);
		return RUN_EXIT_FAILED;
	}
	if (!(r->log = audit_open(r->o.log, r->session.id, err, sizeof err))) {
		airlock_err("run: cannot open the audit log: %s", err);
		return RUN_EXIT_FAILED;
	}
	if ((st = build_env(r)) >= 0 || (st = build_sandbox(r, rep)) >= 0)
		return st;
	return -1;
}

int cmd_run(int argc, char **argv)
{
	struct run r;
	struct sandbox_report rep;
	sigset_t old;
	char err[512];
	memset(&r, 0, sizeof r);
	r.seccomp_fd = r.sigfd = r.info_fd = r.resolv_fd = r.tty_master = r.tty_slave = -1;
	r.ns.sock = -1;
	r.session.channel_fd = -1;
	/*
	 * Nothing the caller left open crosses into the sandbox: an inherited
	 * descriptor of a host directory would reach past every mount.
	 */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
		for (int fd = 3; fd < 1024; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN); /* a peer that went away is an EPIPE to handle, not a death */
	int st = parse(argc, argv, &r.o);
	bool on_tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	r.ui = r.o.headless || !on_tty			     ? UI_HEADLESS
	       : !r.o.no_tui && agent_tty_tui_usable(STDOUT_FILENO) ? UI_TUI
								     : UI_PROMPT;
	if (st < 0)
		st = prepare(&r, &rep);
	if (st < 0)
		st = start_control(&r);
	if (st >= 0) {
		run_release(&r);
		return st;
	}
	if (r.o.no_sandbox)
		airlock_err("run: warning: --no-sandbox: no kernel sandbox, only the shim and the "
			    "audit log (which says so)");
	if ((st = run_log_start(r.log, r.program, &r.src, &rep, r.o.no_sandbox)) < 0) {
		/* the log is the one record: no session runs without its first line */
		end_control(&r, RUN_EXIT_FAILED);
		airlock_err("run: cannot write the audit log %s: %s: the agent was not started; free "
			    "space or choose another --log", audit_path(r.log), strerror(-st));
		run_release(&r);
		return RUN_EXIT_FAILED;
	}
	if (!r.o.headless && !on_tty)
		airlock_err("run: warning: no terminal to ask on: asks are denied, as with --headless "
			    "(or answered by `airlock attach`)");
	struct approve_options ao = { .mode = r.ui == UI_PROMPT ? APPROVE_PROMPT : APPROVE_HEADLESS,
				      .default_allow = r.o.default_allow,
				      .ask_timeout = r.src.policy->ask_timeout,
				      .img = r.src.img,
				      .log = r.log,
				      .control = r.control,
				      .pty = r.ui == UI_PROMPT ? r.tty_master : -1 };
	r.approvals = approve_new(r.session.channel_fd, &ao, err, sizeof err);
	r.hub.approvals = r.approvals;
	if (!r.approvals || block_signals(&r, &old) < 0 ||
	    (r.ui == UI_TUI && start_tui(&r, &old) < 0) ||
	    (r.ui == UI_PROMPT && raw_terminal(&r) < 0) || spawn(&r, &old) < 0) {
		airlock_err("run: cannot start the session: %s", r.approvals ? strerror(errno) : err);
		end_control(&r, RUN_EXIT_FAILED);
		run_release(&r);
		return RUN_EXIT_FAILED;
	}
	if (r.tty_slave >= 0) {
		close(r.tty_slave); /* the agent has it */
		r.tty_slave = -1;
	}
	control_set_agent(r.control, getpid());
	/*
	 * What the agent's processes leave behind becomes ours, not init's: with
	 * --no-sandbox a double fork must not take a process out of the agent's
	 * tree, which the control socket refuses (prctl(2) PR_SET_CHILD_SUBREAPER).
	 */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (r.seccomp_fd >= 0) {
		close(r.seccomp_fd); /* bwrap has its copy */
		r.seccomp_fd = -1;
	}
	st = serve(&r);
	approve_drain_agent(r.approvals);
	approve_end(r.approvals); /* logged before the session's end, not after */
	int lost = audit_error(r.log);
	if (lost < 0)
		st = RUN_EXIT_FAILED; /* whatever the agent's status: its record is not whole */
	end_control(&r, st);
	if (lost < 0) /* once, and after end_control(): on the user's own terminal again */
		airlock_err("run: cannot write the audit log %s: %s: the agent was stopped (nothing "
			    "it does may go unrecorded); free space or choose another --log",
			    audit_path(r.log), strerror(-lost));
	/* tried still; fails silently when the log did */
	run_log_end(r.log, st, r.approvals, r.proxy, r.ui != UI_HEADLESS);
	if (lost == 0 && (lost = audit_error(r.log)) < 0) {
		st = RUN_EXIT_FAILED;
		airlock_err("run: cannot write the audit log %s: %s: the session's end is not in "
			    "it; free space or choose another --log", audit_path(r.log),
			    strerror(-lost));
	}
	run_release(&r);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return st;
}
