/* run_prepare.c — `airlock run`'s first phase (run.h): the policy, the program, the session, the audit log, the agent's environment and the kernel layer. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "launcher/checkpoint/store.h"
#include "launcher/checkpoint/supervise.h"
#include "core/termtext.h"
#include "launcher/cli/run.h"
#include "launcher/cli/run_log.h"
#include "launcher/log/audit.h"
#include "launcher/sandbox/env.h"
#include "launcher/sandbox/landlock.h"
#include "launcher/sandbox/masks.h"
#include "launcher/sandbox/seccomp.h"

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
	/* the agent profile's key variables: the shim scrubs them from all but the agent */
	if (profile_scrub_env(&r->profile, &r->scrub_keys, &r->scrub_exes) < 0) {
		airlock_err("run: out of memory");
		return RUN_EXIT_FAILED;
	}
	if (r->scrub_keys) {
		r->o.env[r->o.nenv++] = r->scrub_keys;
		r->o.env[r->o.nenv++] = r->scrub_exes;
	}
	/* the shim's mark, which a variable the agent's children can drop would not be */
	char *mark = NULL;
	int mr = asprintf(&mark, "%s/agent", r->session.dir) < 0
			 ? -ENOMEM
			 : profile_write_mark(&r->profile, r->src.home, mark);
	free(mark);
	if (mr < 0) {
		airlock_err("run: cannot mark the session for the agent profile: %s", strerror(-mr));
		return RUN_EXIT_FAILED;
	}
	/* the kernel layer's mark: with it, the shim leaves a rename of a tree too large to walk to
	   the masks (preload/shim.c, shim_file_move), instead of refusing it */
	if (!r->o.no_sandbox) {
		int kfd = -1;
		char *kpath = NULL;
		if (asprintf(&kpath, "%s/kernel", r->session.dir) >= 0)
			kfd = open(kpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
		free(kpath);
		if (kfd < 0) {
			airlock_err("run: cannot mark the session's kernel layer: %s", strerror(errno));
			return RUN_EXIT_FAILED;
		}
		close(kfd);
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

/*
 * network: proxy: the session's mark that the proxy, not the shims, decides
 * connections to its ports; the sandbox's resolv.conf in a memfd, and where
 * /etc/resolv.conf really is (resolv_path, cap bytes: it may be a symlink).
 */
static int proxy_files(struct run *r, char *resolv_path, size_t cap)
{
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
		snprintf(resolv_path, cap, "/etc/resolv.conf");
	return -1;
}

/*
 * network: proxy and none: the sandbox's own /etc/hosts, loopback names only
 * (sandbox_hosts_text()), in a memfd, and where /etc/hosts really is
 * (hosts_path, cap bytes: it may be a symlink).  The host's own names would
 * resolve inside to their real addresses, which the proxy can only decide as
 * addresses; under none they lead nowhere and only tell what the host's
 * network holds.  network: host keeps the host's file.
 */
static int hosts_file(struct run *r, char *hosts_path, size_t cap)
{
	char text[1024];
	struct utsname u;
	/* bwrap --unshare-uts keeps the host's name: the sandbox's hostname resolves, to loopback */
	int n = sandbox_hosts_text(uname(&u) == 0 ? u.nodename : NULL, text, sizeof text);
	r->hosts_fd = n < 0 ? -1 : memfd_create("airlock-hosts", 0);
	if (r->hosts_fd < 0 || write(r->hosts_fd, text, (size_t)n) != n ||
	    lseek(r->hosts_fd, 0, SEEK_SET) != 0) {
		airlock_err("run: cannot prepare the sandbox's /etc/hosts: %s",
			    n < 0 ? strerror(-n) : strerror(errno));
		return RUN_EXIT_FAILED;
	}
	if (!realpath("/etc/hosts", hosts_path))
		snprintf(hosts_path, cap, "/etc/hosts");
	return -1;
}

/* Host paths the sandbox protects or starts in: the policy file, the audit log, the current directory. */
struct host_paths {
	char *policy_file; /* owned: realpath(3), NULL for the built-in policy */
	char *log_file;    /* owned: realpath(3), or NULL */
	char cwd[PATH_MAX];
	char resolv[PATH_MAX]; /* where /etc/resolv.conf really is */
	char hosts[PATH_MAX];  /* where /etc/hosts really is */
};

static int host_paths(struct run *r, struct host_paths *h)
{
	bool builtin = strcmp(r->src.name, "<default>") == 0;
	h->policy_file = builtin ? NULL : realpath(r->src.name, NULL);
	if (!builtin && !h->policy_file) {
		airlock_err("run: %s: %s", r->src.name, strerror(errno));
		return RUN_EXIT_FAILED;
	}
	h->log_file = realpath(audit_path(r->log), NULL);
	if (!getcwd(h->cwd, sizeof h->cwd)) {
		airlock_err("run: cannot read the current directory: %s", strerror(errno));
		return RUN_EXIT_FAILED;
	}
	return -1;
}

/* What the backend builds the sandbox from.  Borrows from r and h. */
static void sandbox_config_of(const struct run *r, const struct host_paths *h,
			      struct sandbox_config *cfg)
{
	*cfg = (struct sandbox_config){
		.policy = r->src.policy,
		.img = r->src.img,
		.home = r->src.home,
		.workspace = r->src.workspace,
		.cwd = h->cwd,
		.session_dir = r->session.dir,
		.shim_path = r->shim,
		.policy_file = h->policy_file,
		.log_file = h->log_file,
		.unprivileged = geteuid() != 0,
		.own_tty = r->ui != UI_HEADLESS,
		.seccomp_fd = r->seccomp_fd,
		.netns = r->proxy_on,
		.resolv_fd = r->resolv_fd,
		.resolv_path = h->resolv,
		.hosts_fd = r->hosts_fd,
		.hosts_path = h->hosts,
		.env = r->agent_env,
		.extra_copies = r->profile.profile ? r->profile.profile->copies : NULL,
		.nextra_copies = r->profile.profile ? r->profile.profile->ncopies : 0,
		.landlock_path = r->landlock,
		.landlock_abi = r->landlock_abi,
		.checkpoint_fd = -1,
		.program = r->program,
		.argv = r->o.cmd,
	};
}

/*
 * The session copies of runs-later paths (copies.h): made now, bound over
 * the real paths by the sandbox, applied or kept aside by end_session().
 */
static int prepare_copies(struct run *r, struct sandbox_config *cfg)
{
	char err[512];
	struct copies_config cc = { .workspace = cfg->workspace, .home = cfg->home,
				    .session_id = r->session.id, .extra = cfg->extra_copies,
				    .nextra = cfg->nextra_copies };
	if (copies_prepare(&cc, &r->copies, err, sizeof err) < 0) {
		airlock_err("run: cannot make the session copies: %s", err);
		return RUN_EXIT_FAILED;
	}
	cfg->copy_binds = copies_binds(r->copies, &cfg->ncopy_binds);
	cfg->copy_hidden = copies_hidden(r->copies);
	/* the shim leaves the empty placeholders out of listings */
	const char *ph = copies_placeholder_env(r->copies);
	if (ph && env_append(&r->agent_env, ph) < 0) {
		airlock_err("run: out of memory");
		return RUN_EXIT_FAILED;
	}
	cfg->env = r->agent_env;
	return -1;
}

/* What the user should know of what the backend built. */
static void sandbox_warnings(const struct sandbox_report *rep)
{
	if (rep->masks_capped)
		airlock_err("run: warning: stopped looking for secrets to mask after %u entries; "
			    "deny rules still apply through the shim",
			    rep->walked);
	/* the depth bound alone is the common case on a real host (deep project trees): the log says it */
	if (rep->sockets_capped && rep->sockets_walked >= MASKS_SOCKETS_MAX_ENTRIES)
		airlock_err("run: warning: stopped looking for unix sockets of the host to mask after "
			    "%u entries: a socket further down the visible trees stays reachable",
			    rep->sockets_walked);
	if (rep->network_rules_ignored)
		airlock_err("run: warning: the policy's network rules do not apply under network: none: "
			    "the sandbox has no network at all");
}

static void gate_refused(void *ctx, pid_t pid, const char *path, int32_t rule)
{
	struct run *r = ctx;
	run_log_gate_refused(r->log, r->src.img, pid, path, rule);
}

/*
 * The open gate (open_gate.h), where this machine gives it: root, and a
 * kernel with fanotify permission events.  Elsewhere the session runs
 * without it and its start event says why (a further layer, as Landlock:
 * the masks and the shim still hold what existed at launch).
 * AIRLOCK_OPEN_GATE=off in the launcher's environment turns it off, for
 * measuring what it costs (make bench); the log says so too.
 */
static int prepare_gate(struct run *r)
{
	char why[160], err[256];
	const char *knob = getenv("AIRLOCK_OPEN_GATE");
	if (knob && strcmp(knob, "off") == 0) {
		snprintf(r->gate_off, sizeof r->gate_off, "off: AIRLOCK_OPEN_GATE=off");
		return -1;
	}
	if (open_gate_probe(why, sizeof why) < 0) {
		snprintf(r->gate_off, sizeof r->gate_off, "off: %s", why);
		return -1;
	}
	r->gate = open_gate_new(r->src.img, r->src.home, gate_refused, r, err, sizeof err);
	if (!r->gate) {
		airlock_err("run: cannot make the open gate (fanotify): %s", err);
		return RUN_EXIT_FAILED;
	}
	return -1;
}

static void checkpoint_refused(void *ctx, pid_t pid, const char *path, int err)
{
	struct run *r = ctx;
	char abs[PATH_MAX + 8];
	snprintf(abs, sizeof abs, "%s/%s", r->src.workspace, path);
	run_log_checkpoint_refused(r->log, pid, abs, err);
}

/* The agent's argv as shell words on one line (for `airlock undo --list`), malloc'd, or NULL. */
static char *command_words(char *const *argv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; argv && argv[i]; i++) {
		if (i)
			fputc(' ', f);
		termtext_put_word(f, argv[i]);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	for (char *p = buf; p && *p; p++)
		if (*p == '\n')
			*p = ' ';
	return buf;
}

/*
 * The workspace's checkpoint (launcher/checkpoint/supervise.h), unless the
 * policy (checkpoint.enabled: false), --no-checkpoint or
 * AIRLOCK_CHECKPOINT=off says no.  A machine that cannot take one runs the
 * session without, said on stderr and in the log, or refuses it when the
 * policy or --require-undo requires one (exit 125).
 */
static int prepare_checkpoint(struct run *r)
{
	char why[360], err[320];
	const char *knob = getenv("AIRLOCK_CHECKPOINT");
	bool required = r->o.require_undo || r->src.policy->checkpoint.require;
	const char *off = NULL;
	if (r->o.no_checkpoint)
		off = "--no-checkpoint";
	else if (!r->src.policy->checkpoint.enabled)
		off = "the policy's checkpoint.enabled is false";
	else if (knob && strcmp(knob, "off") == 0)
		off = "AIRLOCK_CHECKPOINT=off";
	if (off) {
		snprintf(r->checkpoint_off, sizeof r->checkpoint_off, "off: %s", off);
		if (required) {
			airlock_err("run: a checkpoint is required (--require-undo or checkpoint.require) "
				    "but %s turns it off", off);
			return RUN_EXIT_FAILED;
		}
		return -1;
	}
	int st = checkpoint_probe(why, sizeof why);
	if (st == 0 && !r->landlock) {
		snprintf(why, sizeof why, "the helper airlock-landlock, which installs its seccomp "
			 "filter, is missing (build it: make)");
		st = -ENOENT;
	}
	char *cmd = NULL;
	if (st == 0) {
		cmd = command_words(r->o.cmd);
		struct checkpoint_config cc = { .workspace = r->src.workspace, .home = r->src.home,
						.session_id = r->session.id, .command = cmd,
						.ignored = r->src.policy->checkpoint.ignored };
		r->checkpoint = checkpoint_new(&cc, checkpoint_refused, r, err, sizeof err);
		free(cmd);
		if (!r->checkpoint)
			snprintf(why, sizeof why, "%s", err);
	}
	if (r->checkpoint)
		return -1;
	snprintf(r->checkpoint_off, sizeof r->checkpoint_off, "off: %s", why);
	if (required) {
		airlock_err("run: cannot take the workspace's checkpoint, which is required "
			    "(--require-undo or checkpoint.require): %s", why);
		return RUN_EXIT_FAILED;
	}
	airlock_err("run: warning: no checkpoint of the workspace (airlock undo will have nothing "
		    "to put back): %s", why);
	return -1;
}

/* The kernel layer: the seccomp filter and the proxy's files, then the backend builds the sandbox. */
static int build_sandbox(struct run *r, struct sandbox_report *rep)
{
	char err[512];
	struct seccomp_options so = { .process_spawn = r->src.policy->sandbox.process_spawn };
	struct host_paths h = { .resolv = "/etc/resolv.conf", .hosts = "/etc/hosts" };
	memset(rep, 0, sizeof *rep);
	if (r->o.no_sandbox)
		return -1;
	r->seccomp_fd = seccomp_filter_fd(&so, err, sizeof err);
	if (r->seccomp_fd < 0) {
		airlock_err("run: cannot build the seccomp filter: %s (see airlock doctor; "
			    "--no-sandbox runs without it)", err);
		return RUN_EXIT_FAILED;
	}
	int st = r->proxy_on ? proxy_files(r, h.resolv, sizeof h.resolv) : -1;
	if (st < 0 && r->src.policy->sandbox.network != POLICY_NETWORK_HOST)
		st = hosts_file(r, h.hosts, sizeof h.hosts);
	if (st < 0)
		st = host_paths(r, &h);
	if (st < 0)
		st = prepare_gate(r);
	if (st < 0)
		st = prepare_checkpoint(r);
	char *croot = NULL;
	if (st < 0) {
		struct sandbox_config cfg;
		sandbox_config_of(r, &h, &cfg);
		cfg.hold = r->gate != NULL;
		cfg.checkpoint_fd = checkpoint_sandbox_fd(r->checkpoint);
		cfg.checkpoint_root = croot = store_root(r->src.home);
		if (cfg.landlock_abi < 1 && cfg.checkpoint_fd < 0)
			cfg.landlock_path = NULL; /* the helper has nothing to do */
		if ((st = prepare_copies(r, &cfg)) >= 0)
			;
		else if (r->backend->build(r->sandbox, &cfg, rep, err, sizeof err) < 0) {
			airlock_err("run: cannot set up the sandbox: %s", err);
			st = RUN_EXIT_FAILED;
		}
	}
	free(h.policy_file);
	free(h.log_file);
	free(croot);
	rep->open_gate = r->gate ? "fanotify" : r->gate_off;
	if (r->checkpoint)
		snprintf(r->checkpoint_off, sizeof r->checkpoint_off, "%s %s",
			 checkpoint_mode(r->checkpoint), checkpoint_store(r->checkpoint));
	rep->checkpoint = r->checkpoint_off;
	if (st < 0)
		sandbox_warnings(rep);
	return st;
}

/*
 * Between loading the policy and compiling it: the agent profile chosen
 * (--profile, the policy's profile: key, or detected from the program) and
 * merged in (launcher/profiles/profile.h).
 */
static int amend_policy(struct policy *p, void *arg, struct policy_error *err)
{
	struct run *r = arg;
	if (profile_choose(r->o.profile, p, r->program, r->o.cmd, &r->profile, err) < 0)
		return -1;
	if (profile_apply(&r->profile, p, err) < 0)
		return -1;
	/* no sandbox, no session copies: the shim refuses writes to runs-later paths (copies.h) */
	const struct profile *pr = r->profile.profile;
	if (r->o.no_sandbox &&
	    copies_no_sandbox_rules(p, pr ? pr->copies : NULL, pr ? pr->ncopies : 0) < 0) {
		snprintf(err->message, sizeof err->message, "out of memory");
		return -1;
	}
	return 0;
}

/* True when path is dir or below it. */
static bool path_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/*
 * Each sandbox.write path (the policy's and the profile's) exists before
 * the sandbox is built, or the session does not start: a missing one is
 * created (mkdir -p, 0700) under the home directory or the workspace, and
 * refused elsewhere, never left out silently.  Forms the sandbox does not
 * understand are left for it to report.
 */
static int make_write_paths(const struct run *r)
{
	const struct policy_sandbox *sb = &r->src.policy->sandbox;
	for (size_t i = 0; i < sb->nwrite; i++) {
		const char *raw = sb->write[i], *base = "", *rest = raw;
		char path[PATH_MAX], failed[PATH_MAX];
		struct stat st;
		if (raw[0] == '~' && raw[1] != '\0' && raw[1] != '/')
			continue;
		if (raw[0] == '~') {
			base = r->src.home;
			rest = raw + 1;
		} else if (raw[0] != '/') {
			base = r->src.workspace;
			rest = raw[0] == '.' && (raw[1] == '/' || raw[1] == '\0') ? raw + 1 : raw;
		}
		int n = snprintf(path, sizeof path, "%s%s%s", base, rest[0] && rest[0] != '/' ? "/" : "",
				 rest);
		if (n < 0 || (size_t)n >= sizeof path || stat(path, &st) == 0)
			continue;
		const char *why = NULL;
		int e = errno;
		if (e == ENOENT && lstat(path, &st) == 0)
			why = "a symbolic link to nothing";
		else if (e != ENOENT)
			why = strerror(e);
		else if (!path_below(path, r->src.home) && !path_below(path, r->src.workspace))
			why = "missing, and airlock creates only those under your home directory or "
			      "the workspace";
		else if ((e = profile_mkdirs(path, failed, sizeof failed)) < 0) {
			airlock_err("run: sandbox.write: '%s' does not exist and cannot be created "
				    "(%s: %s); create it, or remove it from the policy",
				    raw, failed, strerror(-e));
			return RUN_EXIT_FAILED;
		}
		if (why) {
			airlock_err("run: sandbox.write: '%s' (%s) is %s; create it, or remove it "
				    "from the policy", raw, path, why);
			return RUN_EXIT_FAILED;
		}
	}
	return -1;
}

/*
 * The Landlock layer: a further kernel layer, so a kernel without it runs
 * the session without it, said on stderr and in the log's session_start;
 * one with it gets the ruleset or no session (no helper: exit 125).
 */
static int find_landlock(struct run *r)
{
	char err[512];
	r->landlock_abi = landlock_abi(r->landlock_why, sizeof r->landlock_why);
	if (!r->landlock_abi) {
		airlock_err("run: warning: no Landlock ruleset: %s; the other layers hold",
			    r->landlock_why);
		/* the helper still installs the checkpoint's filter (airlock-landlock --abi 0) */
		r->landlock = session_find_landlock(err, sizeof err);
		return -1;
	}
	if (!(r->landlock = session_find_landlock(err, sizeof err))) {
		airlock_err("run: %s; this kernel has Landlock (ABI %d) and airlock applies it: "
			    "build it (make)", err, r->landlock_abi);
		r->landlock_abi = 0;
		return RUN_EXIT_FAILED;
	}
	return -1;
}

int run_prepare(struct run *r, struct sandbox_report *rep)
{
	struct policy_error perr;
	struct policy_source_options so = { r->o.policy, r->o.workspace, amend_policy, r };
	char err[1024];
	int st;
	/* serve: no program, no agent, so no agent profile (its keys and files are an agent's) */
	if (r->o.serve)
		r->o.profile = "none";
	/* before the policy: the profile is detected from it */
	else if (!(r->program = canon_program(r->o.cmd[0]))) {
		airlock_err("run: %s: %s", r->o.cmd[0], strerror(errno));
		return RUN_EXIT_FAILED;
	}
	enum policy_source_status ps = policy_source_open(&so, &r->src, &perr);
	if (ps != POLICY_SOURCE_OK)
		return policy_source_report(ps, &perr);
	r->proxy_on = !r->o.no_sandbox && r->src.policy->sandbox.network == POLICY_NETWORK_PROXY;
	if ((st = check_limits(r)) >= 0)
		return st;
	if (!r->o.serve && (st = check_program(r)) >= 0)
		return st;
	if (!r->o.no_sandbox && (st = make_write_paths(r)) >= 0)
		return st;
	if (!r->o.no_sandbox && !(r->sandbox = r->backend->probe(r->o.bwrap, err, sizeof err))) {
		airlock_err("run: %s", err);
		return RUN_EXIT_FAILED;
	}
	if (!(r->shim = session_find_shim(err, sizeof err))) {
		airlock_err("run: %s", err);
		return RUN_EXIT_FAILED;
	}
	if (!r->o.no_sandbox && (st = find_landlock(r)) >= 0)
		return st;
	if (session_create(&r->session, r->src.image, r->src.image_size, err, sizeof err) < 0 ||
	    session_write_programs(&r->session, r->src.img, getenv("PATH"), err, sizeof err) < 0) {
		airlock_err("run: %s", err);
		return RUN_EXIT_FAILED;
	}
	if (!(r->log = audit_open(r->o.log, r->session.id, err, sizeof err))) {
		airlock_err("run: cannot open the audit log: %s", err);
		return RUN_EXIT_FAILED;
	}
	if (r->o.serve) { /* no agent to build an environment or a sandbox for */
		memset(rep, 0, sizeof *rep);
		return serve_prepare(r);
	}
	if ((st = build_env(r)) >= 0 || (st = build_sandbox(r, rep)) >= 0)
		return st;
	return -1;
}
