/* cmd_serve.c — `airlock serve` (one session without a sandbox that unrelated process trees join through the shim) and `airlock env` (the variables that join one). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/approvals/control.h"
#include "launcher/cli/run.h"
#include "launcher/log/audit.h"
#include "launcher/sandbox/agent_tty.h"
#include "launcher/sandbox/session.h"

#define SERVE_SYNOPSIS "usage: airlock serve [--policy FILE] [--log FILE] [--dir DIR] [--headless]\n"
#define ENV_SYNOPSIS "usage: airlock env [--serve DIR|SESSION] [--format sh|dockerfile]\n"

const char cmd_serve_usage[] =
	SERVE_SYNOPSIS
	"\n"
	"Holds one session without a sandbox and without a program of its own: the\n"
	"policy compiled, the audit log open, the approval socket listening.  Any\n"
	"process tree started with the variables `airlock env` prints (LD_PRELOAD,\n"
	"AIRLOCK_DIR) joins it: the shim in each process decides what it starts,\n"
	"opens and connects to against the policy, reports it to this session, which\n"
	"logs it, and asks it about the policy's asks.  On a terminal the TUI shows the\n"
	"activity and the asks; else (or with --headless) asks get the headless answer\n"
	"(deny, or wait while `airlock attach` is attached).  SIGINT or SIGTERM (or Q\n"
	"in the TUI) ends the session, with session_end in the log; processes that\n"
	"joined it are denied everything from then on (fail closed).\n"
	"\n"
	"This is a tripwire and a recorder, not a boundary: there is no kernel sandbox,\n"
	"and a process can drop LD_PRELOAD, make raw system calls, or be a static binary.\n"
	"\n"
	"Options:\n"
	"  --policy FILE      the policy (default: ./.airlock/policy.yaml, then\n"
	"                     $XDG_CONFIG_HOME/airlock/policy.yaml, then the built-in one)\n"
	"  --workspace DIR    what ./ in the policy stands for (default: the current directory)\n"
	"  --log FILE         append the audit log to FILE (default:\n"
	"                     $XDG_STATE_HOME/airlock/logs/YYYY-MM-DD.jsonl)\n"
	"  --dir DIR          also reach the session at DIR (a symlink made now, removed at\n"
	"                     the end): AIRLOCK_DIR=DIR, and a container joins with\n"
	"                     -v DIR:DIR plus the shim at the same path in its image\n"
	"  --headless         no TUI: asks are denied at once, or wait for `airlock attach`\n"
	"  --default-allow    with --headless: asks are allowed instead\n"
	"  -h, --help         this help\n"
	"\n"
	"Exit status: 0 when a signal or a quit ended the session; 124 when limits\n"
	"session_timeout ended it; 125 when it could not start or the audit log could\n"
	"not be written; 2 for a malformed policy or command line.\n";

const char cmd_env_usage[] =
	ENV_SYNOPSIS
	"\n"
	"Prints the variables that join a process tree to a running `airlock serve`\n"
	"session: for a shell, `export LD_PRELOAD=...` and `export AIRLOCK_DIR=...`\n"
	"lines (eval \"$(airlock env)\"); with --format dockerfile, an ENV line.\n"
	"The shell that evals them has no shim (it started before): the programs it\n"
	"starts are not decided at their exec.  `exec bash` afterwards starts one that has.\n"
	"\n"
	"  --serve DIR        the session reached at DIR (serve --dir DIR, or its directory)\n"
	"  --serve SESSION    the session with that id, or the start of one (airlock ps)\n"
	"Without --serve: the one serve session running (an error when there are several).\n";

enum { OPT_POLICY = 256, OPT_WORKSPACE, OPT_LOG, OPT_DIR, OPT_HEADLESS, OPT_DEFAULT_ALLOW };

static const struct option serve_opts[] = {
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "workspace", required_argument, NULL, OPT_WORKSPACE },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "headless", no_argument, NULL, OPT_HEADLESS },
	{ "default-allow", no_argument, NULL, OPT_DEFAULT_ALLOW },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int serve_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "airlock: serve: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n" SERVE_SYNOPSIS "See 'airlock serve --help'.\n");
	return AIRLOCK_EXIT_USAGE;
}

/* path made absolute (not resolved: a symlink at DIR is the point), malloc'ed; NULL: errno. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out = NULL;
	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof cwd))
		return NULL;
	return asprintf(&out, "%s/%s", cwd, path) < 0 ? NULL : out;
}

/* -1 when parsing succeeded, else the exit status.  o->dir is malloc'ed (freed by cmd_serve). */
static int serve_parse(int argc, char **argv, struct run_opts *o)
{
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", serve_opts, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY: o->policy = optarg; break;
		case OPT_WORKSPACE: o->workspace = optarg; break;
		case OPT_LOG: o->log = optarg; break;
		case OPT_HEADLESS: o->headless = true; break;
		case OPT_DEFAULT_ALLOW: o->default_allow = true; break;
		case OPT_DIR:
			if (!optarg[0])
				return serve_usage_error("%s", "--dir needs a path");
			free((char *)o->dir);
			if (!(o->dir = absolute(optarg))) {
				airlock_err("serve: --dir %s: %s", optarg, strerror(errno));
				return RUN_EXIT_FAILED;
			}
			break;
		case 'h':
			fputs(cmd_serve_usage, stdout);
			return AIRLOCK_EXIT_OK;
		default:
			return serve_usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return serve_usage_error("unexpected argument '%s' (serve runs no program: process "
					 "trees join it, see airlock env)", argv[optind]);
	if (o->default_allow && !o->headless)
		return serve_usage_error("%s", "--default-allow applies to --headless only");
	return -1;
}

int cmd_serve(int argc, char **argv)
{
	struct run r;
	run_init(&r);
	r.o.serve = r.o.no_sandbox = true;
	int st = serve_parse(argc, argv, &r.o);
	char *dir = (char *)r.o.dir;
	bool on_tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (st >= 0) {
		free(dir);
		return st;
	}
	if (!r.o.headless && on_tty && !agent_tty_tui_usable(STDOUT_FILENO)) {
		airlock_err("serve: warning: this terminal cannot show the TUI (TERM): running "
			    "headless; `airlock attach` answers asks from another terminal");
		r.o.headless = true;
	}
	r.ui = r.o.headless || !on_tty ? UI_HEADLESS : UI_TUI;
	st = run_session(&r, on_tty);
	free(dir);
	return st;
}

/* ---- the session's files: the serve mark and the --dir symlink ---------------------------- */

/* True when target is a session directory of control_base(): BASE/<16 hex digits>. */
static bool session_target(const char *target)
{
	char base[PATH_MAX];
	size_t n;
	if (control_base(base, sizeof base, false) < 0)
		return false;
	n = strlen(base);
	return strncmp(target, base, n) == 0 && target[n] == '/' &&
	       strspn(target + n + 1, "0123456789abcdef") == 16 && target[n + 17] == '\0';
}

/* The --dir symlink: made, or an old one to a session that is gone replaced.  -1, or the exit status. */
static int make_dir_link(struct run *r)
{
	const char *dir = r->o.dir;
	char target[PATH_MAX];
	struct stat st;
	if (lstat(dir, &st) == 0) {
		ssize_t n = S_ISLNK(st.st_mode) ? readlink(dir, target, sizeof target - 1) : -1;
		if (n > 0)
			target[n] = '\0';
		if (n <= 0 || !session_target(target)) {
			airlock_err("serve: --dir %s exists and is not a link serve made: remove it or "
				    "choose another path", dir);
			return RUN_EXIT_FAILED;
		}
		if (stat(dir, &st) == 0) { /* the session it names still stands */
			airlock_err("serve: --dir %s is the path of a running session (%s): end it "
				    "first, or choose another path", dir, target);
			return RUN_EXIT_FAILED;
		}
		if (unlink(dir) != 0 && errno != ENOENT) {
			airlock_err("serve: cannot replace --dir %s: %s", dir, strerror(errno));
			return RUN_EXIT_FAILED;
		}
	}
	if (symlink(r->session.dir, dir) != 0) {
		airlock_err("serve: cannot make --dir %s: %s", dir, strerror(errno));
		return RUN_EXIT_FAILED;
	}
	return -1;
}

int serve_prepare(struct run *r)
{
	char *path = NULL, *text = NULL;
	const char *join_dir = r->o.dir ? r->o.dir : r->session.dir;
	int n = asprintf(&text, "LD_PRELOAD=%s\nAIRLOCK_DIR=%s\n", r->shim, join_dir);
	int fd = n < 0 || asprintf(&path, "%s/%s", r->session.dir, SERVE_MARK_NAME) < 0
			 ? -1
			 : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	bool ok = fd >= 0 && write(fd, text, (size_t)n) == n;
	int e = errno;
	if (fd >= 0 && close(fd) != 0)
		ok = false;
	free(path);
	free(text);
	if (!ok) {
		airlock_err("serve: cannot write the session's %s file: %s", SERVE_MARK_NAME,
			    strerror(e));
		return RUN_EXIT_FAILED;
	}
	return r->o.dir ? make_dir_link(r) : -1;
}

void serve_started(const struct run *r)
{
	const char *join_dir = r->o.dir ? r->o.dir : r->session.dir;
	airlock_err("serve: session %s: no sandbox, the shim and the audit log only; the log: %s",
		    r->session.id, audit_path(r->log));
	airlock_err("serve: its directory: %s%s%s", r->session.dir, r->o.dir ? ", reached at " : "",
		    r->o.dir ? r->o.dir : "");
	airlock_err("serve: a process tree joins it with these (eval \"$(airlock env)\" sets them; "
		    "then exec bash, so that the shell's own execs are decided too):");
	fprintf(stderr, "  export LD_PRELOAD=%s\n  export AIRLOCK_DIR=%s\n", r->shim, join_dir);
	airlock_err("serve: SIGINT or SIGTERM ends it");
}

void serve_release(struct run *r)
{
	char target[PATH_MAX];
	if (!r->o.dir || !r->session.dir)
		return;
	ssize_t n = readlink(r->o.dir, target, sizeof target - 1);
	if (n > 0) {
		target[n] = '\0';
		if (strcmp(target, r->session.dir) == 0)
			unlink(r->o.dir);
	}
}

/* ---- airlock env ------------------------------------------------------------------------ */

/* What a serve session's mark says: the two values, absolute paths. */
struct serve_vars {
	char preload[PATH_MAX + 32];
	char dir[PATH_MAX + 32];
};

/* A value a shell or a Dockerfile may carry whole: absolute, printable, one line. */
static bool plain_path(const char *s)
{
	if (s[0] != '/')
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/*
 * Reads DIR/serve into *v and checks the launcher named by DIR/launcher.pid
 * runs.  0, or -1 with the reason said (what names the session: who).
 */
static int read_serve(const char *dir, const char *who, struct serve_vars *v)
{
	char path[PATH_MAX], line[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/launcher.pid", dir);
	FILE *f = fopen(path, "re");
	long pid = f && fgets(line, sizeof line, f) ? strtol(line, NULL, 10) : 0;
	if (f)
		fclose(f);
	if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) {
		airlock_err("env: no running session at %s (%s)", who,
			    pid <= 0 ? "no launcher.pid there" : "its launcher is gone");
		return -1;
	}
	snprintf(path, sizeof path, "%s/%s", dir, SERVE_MARK_NAME);
	if (!(f = fopen(path, "re"))) {
		if (errno == ENOENT)
			airlock_err("env: session %s is not an `airlock serve` session (an `airlock "
				    "run` session's agent is started by run itself)", who);
		else
			airlock_err("env: cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	v->preload[0] = v->dir[0] = '\0';
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "LD_PRELOAD=", 11) == 0)
			snprintf(v->preload, sizeof v->preload, "%s", line + 11);
		else if (strncmp(line, "AIRLOCK_DIR=", 12) == 0)
			snprintf(v->dir, sizeof v->dir, "%s", line + 12);
	}
	fclose(f);
	if (!plain_path(v->preload) || !plain_path(v->dir)) {
		airlock_err("env: %s is malformed (LD_PRELOAD and AIRLOCK_DIR lines, absolute paths)",
			    path);
		return -1;
	}
	return 0;
}

/* The session directory of a control socket's path (less ".control"); false if it is not one. */
static bool dir_of_control(const char *control, char *out, size_t cap)
{
	size_t n = strlen(control);
	if (n < 9 || strcmp(control + n - 8, ".control") != 0 || n - 8 >= cap)
		return false;
	memcpy(out, control, n - 8);
	out[n - 8] = '\0';
	return true;
}

/* The running serve session want names (an id's start; NULL: the only one) into *v.  0 or -1 (said). */
static int find_serve(const char *want, struct serve_vars *v)
{
	struct control_session *all = NULL;
	size_t n = 0, hits = 0, hit = 0;
	char dir[PATH_MAX], mark[PATH_MAX + 16];
	int r = control_list(&all, &n, 1000);
	if (r < 0) {
		airlock_err("env: cannot list the sessions: %s", strerror(-r));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (want && strncmp(all[i].id, want, strlen(want)) != 0)
			continue;
		if (!dir_of_control(all[i].path, dir, sizeof dir))
			continue;
		snprintf(mark, sizeof mark, "%s/%s", dir, SERVE_MARK_NAME);
		if (!want && access(mark, F_OK) != 0)
			continue; /* an `airlock run` session */
		hit = i;
		hits++;
	}
	r = -1;
	if (hits == 0)
		airlock_err("env: no running `airlock serve` session%s%s (airlock ps lists them)",
			    want ? " " : "", want ? want : "");
	else if (hits > 1)
		airlock_err("env: %zu serve sessions run%s: name one with --serve SESSION (airlock ps)",
			    hits, want ? " with that start" : "");
	else if (dir_of_control(all[hit].path, dir, sizeof dir))
		r = read_serve(dir, all[hit].id, v);
	free(all);
	return r;
}

/* s between single quotes for a POSIX shell ('\'' for each quote). */
static void put_sh(const char *s)
{
	putchar('\'');
	for (; *s; s++)
		fputs(*s == '\'' ? "'\\''" : (char[]){ *s, '\0' }, stdout);
	putchar('\'');
}

/* s between double quotes for a Dockerfile ENV (backslash before " and \). */
static void put_docker(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\' || *s == '$')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

int cmd_env(int argc, char **argv)
{
	const char *want = NULL, *format = "sh";
	struct serve_vars v;
	for (int i = 1; i < argc; i++) {
		int r;
		if (airlock_is_help(argv[i])) {
			fputs(cmd_env_usage, stdout);
			return AIRLOCK_EXIT_OK;
		}
		if ((r = airlock_option_value(argc, argv, &i, "--serve", &want)) == 0)
			r = airlock_option_value(argc, argv, &i, "--format", &format);
		if (r <= 0) {
			airlock_err(r < 0 ? "env: %s needs a value" : "env: unexpected argument '%s'",
				    argv[i]);
			fputs(ENV_SYNOPSIS, stderr);
			return AIRLOCK_EXIT_USAGE;
		}
	}
	if (strcmp(format, "sh") != 0 && strcmp(format, "dockerfile") != 0) {
		airlock_err("env: unknown --format '%s' (sh or dockerfile)", format);
		return AIRLOCK_EXIT_USAGE;
	}
	if (want && !want[0]) {
		airlock_err("env: --serve needs a directory or a session id");
		return AIRLOCK_EXIT_USAGE;
	}
	int r = want && strchr(want, '/') ? read_serve(want, want, &v) : find_serve(want, &v);
	if (r < 0)
		return 1;
	if (strcmp(format, "dockerfile") == 0) {
		fputs("ENV LD_PRELOAD=", stdout);
		put_docker(v.preload);
		fputs(" AIRLOCK_DIR=", stdout);
		put_docker(v.dir);
		putchar('\n');
		return AIRLOCK_EXIT_OK;
	}
	fputs("export LD_PRELOAD=", stdout);
	put_sh(v.preload);
	fputs("; export AIRLOCK_DIR=", stdout);
	put_sh(v.dir);
	putchar('\n');
	return AIRLOCK_EXIT_OK;
}
